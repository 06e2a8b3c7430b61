#include "command/cursor_manager.h"

#include "common/clock.h"

namespace rockdoc::internal {

namespace {

Status NotFound(int64_t id) {
  return Status(ErrorCode::kCursorNotFound, "cursor id " + std::to_string(id) + " not found");
}

}  // namespace

StatusOr<bool> CommandCursor::Advance() {
  if (stream) {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> event, stream->TryNext());
    if (!event) return false;
    pending = std::move(*event);
    return true;
  }
  if (!cursor) {
    if (next_doc == docs.size()) return false;
    pending = std::move(docs[next_doc++]);
    return true;
  }
  if (!cursor->Next()) {
    ROCKDOC_RETURN_IF_ERROR(cursor->status());
    return false;
  }
  pending = Document::AdoptValidated(std::string(cursor->document().bytes()));
  return true;
}

StatusOr<bool> FillBatch(CommandCursor* c, int64_t batch_size, BsonBuilder* batch,
                         int64_t* appended) {
  size_t bytes = 0;
  int64_t n = 0;
  struct Count {  // *appended, however FillBatch returns
    int64_t* out;
    const int64_t& n;
    ~Count() {
      if (out != nullptr) *out = n;
    }
  } count{appended, n};
  // Appends `doc` if it fits; otherwise keeps a copy for the next batch.
  auto add = [&](DocumentView doc) {
    if (n > 0 && bytes + doc.size() > kMaxBatchBytes) return false;
    batch->AppendDocument("", doc);
    bytes += doc.size();
    ++n;
    if (c->remaining > 0) --c->remaining;
    return true;
  };
  while (batch_size < 0 || n < batch_size) {
    if (c->remaining == 0) return true;
    if (c->pending) {
      if (!add(*c->pending)) return false;
      c->pending.reset();
      continue;
    }
    if (c->stream) {
      ROCKDOC_ASSIGN_OR_RETURN(bool more, c->Advance());
      if (!more) return true;
      continue;  // the event is pending: added above
    }
    if (!c->cursor) {
      if (c->next_doc == c->docs.size()) return true;
      if (!add(c->docs[c->next_doc])) return false;
      ++c->next_doc;
      continue;
    }
    if (!c->cursor->Next()) {
      ROCKDOC_RETURN_IF_ERROR(c->cursor->status());
      return true;
    }
    DocumentView doc = c->cursor->document();
    if (!add(doc)) {
      c->pending = Document::AdoptValidated(std::string(doc.bytes()));
      return false;
    }
  }
  // The count is reached: exhausted only if nothing is left to read.
  if (c->remaining == 0) return true;
  if (c->pending) return false;
  ROCKDOC_ASSIGN_OR_RETURN(bool more, c->Advance());
  return !more;
}

int64_t CursorManager::Register(std::unique_ptr<CommandCursor> c) {
  MutexLock g(&mu_);
  c->last_used_ms = SteadyMillis();
  int64_t id = 0;
  do {
    // Positive and never 0, as MongoDB's ids read in every driver.
    id = static_cast<int64_t>(ids_() >> 1);
  } while (id == 0 || cursors_.count(id) != 0);
  std::shared_ptr<AwaitStop> stop = c->await_stop;
  if (stop != nullptr && stopping()) stop->stopped.store(true, std::memory_order_release);
  cursors_.emplace(id, Slot{std::move(c), std::move(stop)});
  return id;
}

StatusOr<std::unique_ptr<CommandCursor>> CursorManager::CheckOut(int64_t id, std::string_view ns) {
  std::unique_ptr<CommandCursor> expired;  // destroyed outside the lock
  MutexLock g(&mu_);
  auto it = cursors_.find(id);
  if (it == cursors_.end()) return NotFound(id);
  if (Expired(it->second.cursor.get(), SteadyMillis())) {  // the reaper has not come by yet
    expired = std::move(it->second.cursor);
    cursors_.erase(it);
    return NotFound(id);
  }
  if (it->second.cursor == nullptr) {
    return Status(ErrorCode::kOperationFailed,
                  "cursor id " + std::to_string(id) + " is already in use");
  }
  if (it->second.cursor->ns() != ns) {
    return Status(ErrorCode::kUnauthorized, "Requested getMore on namespace '" + std::string(ns) +
                                                "', but cursor belongs to a different namespace " +
                                                it->second.cursor->ns());
  }
  return std::move(it->second.cursor);
}

void CursorManager::CheckIn(int64_t id, std::unique_ptr<CommandCursor> c) {
  MutexLock g(&mu_);
  auto it = cursors_.find(id);
  if (it == cursors_.end()) return;  // killed while in use: it ends here
  c->last_used_ms = SteadyMillis();
  it->second.cursor = std::move(c);
}

bool CursorManager::Kill(int64_t id, std::string_view ns) {
  std::unique_ptr<CommandCursor> closing;  // destroyed outside the lock
  MutexLock g(&mu_);
  auto it = cursors_.find(id);
  if (it == cursors_.end()) return false;
  if (it->second.cursor != nullptr && it->second.cursor->ns() != ns) return false;
  // A getMore waiting on it (checked out) returns now; the cursor ends at
  // its CheckIn, which finds no slot.
  if (it->second.await_stop != nullptr) it->second.await_stop->Stop();
  closing = std::move(it->second.cursor);
  cursors_.erase(it);
  return true;
}

void CursorManager::StopWaits() {
  stopping_.store(true, std::memory_order_release);
  MutexLock g(&mu_);
  for (auto& [id, slot] : cursors_) {
    if (slot.await_stop != nullptr) slot.await_stop->Stop();
  }
}

int CursorManager::ReapIdle() {
  MutexLock g(&mu_);
  return ReapIdleLocked(SteadyMillis());
}

bool CursorManager::Expired(const CommandCursor* c, int64_t now_ms) const {
  // Null: checked out, in use.
  return c != nullptr && !c->no_timeout && now_ms - c->last_used_ms > idle_timeout_ms();
}

int CursorManager::ReapIdleLocked(int64_t now_ms) {
  int reaped = 0;
  for (auto it = cursors_.begin(); it != cursors_.end();) {
    if (Expired(it->second.cursor.get(), now_ms)) {
      it = cursors_.erase(it);
      ++reaped;
    } else {
      ++it;
    }
  }
  return reaped;
}

size_t CursorManager::open_cursors() const {
  MutexLock g(&mu_);
  return cursors_.size();
}

}  // namespace rockdoc::internal

// api/live_query.cc: live queries (Collection::Observe), kept up to date
// from the collection's change stream.
//
// The query holds an ordered set of the matching documents (each with its
// sort key, the query's sort with _id appended as the tie-break, and its
// projection), all of them, or for a query with a limit the first
// skip + 2 * limit (the limit again as a buffer, as Meteor's oplog driver
// keeps one). A batch of change events is applied to the set document by
// document: an insert's or replace's fullDocument is matched as it comes,
// an update's document is read by _id (one $in find per batch), a delete
// leaves. The result (positions skip .. skip + limit of the set) is then
// compared with what was last reported, and the differences become the
// callbacks: removed first, then added and moved from the end of the new
// list backwards (each before the document after it, which is by then in
// place), keeping the longest run of documents already in order, then
// changed.
//
// Reading the current document for an update, rather than the state at the
// event, is safe: a newer state has its own event, later in the log, so
// once the query has read the log to its end each document is as it is
// now. The initial result is read after the stream opens, for the same
// reason: a change committed between the two is applied again, to the same
// effect.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "api/client_internal.h"
#include "api/session_internal.h"
#include "common/mutex.h"
#include "query/match_expression.h"
#include "query/projection.h"
#include "query/sort_pattern.h"
#include "rockdoc/client.h"

namespace rockdoc {

namespace internal {

namespace {

// Events read in one batch before the result is compared and reported.
constexpr int kMaxBatchEvents = 1024;
// _ids per $in find of updated documents.
constexpr size_t kFetchChunk = 512;
// How long the query's own thread waits before it looks again (Stop and the
// client's close wake it sooner).
constexpr int64_t kThreadWaitMs = 1000;

struct IdLess {
  bool operator()(const Value& a, const Value& b) const {
    return CompareValues(a.element(), b.element()) < 0;
  }
};

Value Copy(const Value& v) { return Value::FromElement(v.element()); }

// The top-level fields of `now` that `before` lacks or holds with other
// bytes, and the names of those `before` has and `now` lacks.
void DiffFields(DocumentView before, DocumentView now, Document* fields,
                std::vector<std::string>* removed) {
  BsonBuilder b;
  for (const Element& e : now) {
    Element old = before.Get(e.key());
    if (!old.ok() || old.type() != e.type() || old.value_size() != e.value_size() ||
        std::memcmp(old.value_data(), e.value_data(), e.value_size()) != 0) {
      b.AppendElement(e);
    }
  }
  *fields = std::move(b).Build();
  for (const Element& e : before) {
    if (!now.Get(e.key()).ok()) removed->emplace_back(e.key());
  }
}

// The subscription-style thread marker: callbacks ask "from a callback?".
thread_local const LiveQueryImpl* t_reporting = nullptr;

}  // namespace

class LiveQueryImpl {
 public:
  static StatusOr<std::shared_ptr<LiveQueryImpl>> Open(Collection coll, Database database,
                                                       DocumentView filter,
                                                       const ObserveOptions& options,
                                                       ObserveCallbacks callbacks);
  // Starts the query's own thread, which holds `self` until it ends.
  static void StartThread(const std::shared_ptr<LiveQueryImpl>& self) {
    self->thread_ = std::thread([self] { self->RunThread(); });
  }

  Status Poll(int64_t wait_ms);
  void Stop();
  // The handle went: stopped, and from its own thread left to end alone.
  void Release();
  bool running() const { return running_.load(std::memory_order_acquire); }
  std::vector<Document> result() const {
    MutexLock g(&result_mu_);
    std::vector<Document> out;
    out.reserve(published_.size());
    for (const auto& [id, doc] : published_) out.push_back(doc);
    return out;
  }
  int64_t requeries() const { return requeries_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    Value id;
    std::vector<Value> key;  // the sort key, _id last
    Document projected;
  };
  struct KeyLess {
    const SortPattern* pattern;
    bool operator()(const Entry* a, const Entry* b) const {
      return pattern->CompareKeys(a->key, b->key) < 0;
    }
  };
  // What a batch of events leaves of a document: its new state (nullopt:
  // gone), or "read it by _id".
  struct Pending {
    bool fetch = false;
    std::optional<Document> doc;
  };

  LiveQueryImpl(Collection coll, Database database, ObserveCallbacks callbacks)
      : coll_(std::move(coll)), database_(std::move(database)), callbacks_(std::move(callbacks)) {}

  Status OpenStream(std::optional<Document> start_after);
  // Re-reads the first cap_ matching documents into the set.
  Status Requery();
  // Reads what the log holds past the query's position and reports the
  // differences. *read: whether any event was read.
  Status Step(bool* read);
  // The document whose _id is `id` is now `doc` (nullopt: gone).
  Status Apply(const Value& id, const std::optional<Document>& doc);
  Status Insert(DocumentView doc);
  void Erase(const Value& id);
  void Clear() {
    ordered_.clear();
    by_id_.clear();
    maybe_more_ = false;
  }
  // Compares the result with what was reported and reports the differences.
  void Report();
  void RunThread();
  // Runs `ended` once.
  void Finish(const Status& status);
  bool stopping() const { return stop_.load(std::memory_order_acquire); }

  Collection coll_;
  Database database_;
  Document filter_;
  Document sort_spec_;  // the query's sort, _id appended
  SortPattern sort_;
  std::unique_ptr<MatchExpression> matcher_;
  std::optional<Projection> projection_;
  int64_t skip_ = 0;
  int64_t limit_ = 0;  // 0: none
  int64_t cap_ = 0;    // documents the set keeps; 0: all
  bool own_thread_ = true;
  ObserveCallbacks callbacks_;

  std::optional<ChangeStream> stream_;
  std::map<Value, Entry, IdLess> by_id_;
  std::set<const Entry*, KeyLess> ordered_{KeyLess{&sort_}};
  // The set was cut at cap_: matching documents past its last may exist.
  bool maybe_more_ = false;

  mutable Mutex result_mu_;
  std::vector<std::pair<Value, Document>> published_ ABSL_GUARDED_BY(result_mu_);

  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{true};
  std::atomic<bool> ended_{false};
  std::atomic<int64_t> requeries_{0};
  Mutex poll_mu_;  // one Poll (or Stop waiting for it) at a time
  Mutex join_mu_;  // one joiner at a time
  std::thread thread_;
};

StatusOr<std::shared_ptr<LiveQueryImpl>> LiveQueryImpl::Open(Collection coll, Database database,
                                                             DocumentView filter,
                                                             const ObserveOptions& options,
                                                             ObserveCallbacks callbacks) {
  if (options.skip < 0) return BadValue("skip must be >= 0, not " + std::to_string(options.skip));
  if (options.limit < 0) {
    return BadValue("limit must be >= 0, not " + std::to_string(options.limit));
  }
  for (const Element& part : options.sort.view()) {
    if (part.key() == "$natural" || part.IsDocument()) {
      return BadValue("a live query's sort takes fields with 1 or -1, not " +
                      std::string(part.key()) + " ($natural and $meta are not supported)");
    }
  }
  auto impl = std::shared_ptr<LiveQueryImpl>(new LiveQueryImpl(std::move(coll), std::move(database), std::move(callbacks)));
  impl->filter_ = Document::AdoptValidated(std::string(filter.bytes()));
  BsonBuilder sort;
  bool has_id = false;
  for (const Element& part : options.sort.view()) {
    sort.AppendElement(part);
    has_id = has_id || part.key() == "_id";
  }
  if (!has_id) sort.AppendInt32("_id", 1);
  impl->sort_spec_ = std::move(sort).Build();
  ROCKDOC_ASSIGN_OR_RETURN(impl->sort_, SortPattern::Parse(impl->sort_spec_));
  ROCKDOC_ASSIGN_OR_RETURN(impl->matcher_, ParseMatchExpression(impl->filter_));
  if (!options.projection.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(Projection p,
                             Projection::Parse(options.projection, impl->matcher_.get()));
    impl->projection_ = std::move(p);
  }
  impl->skip_ = options.skip;
  impl->limit_ = options.limit;
  impl->cap_ = options.limit == 0 ? 0 : options.skip + 2 * options.limit;
  impl->own_thread_ = options.own_thread;
  // The stream first: a change committed while the initial result is read
  // is then applied again, never missed.
  ROCKDOC_RETURN_IF_ERROR(impl->OpenStream(std::nullopt));
  ROCKDOC_RETURN_IF_ERROR(impl->Requery());
  impl->requeries_.store(0, std::memory_order_relaxed);
  t_reporting = impl.get();
  impl->Report();
  t_reporting = nullptr;
  return impl;
}

Status LiveQueryImpl::OpenStream(std::optional<Document> start_after) {
  ChangeStreamOptions options;
  options.max_await_time_ms = 0;
  options.start_after = std::move(start_after);
  // The database's stream, for the renames that bring documents here (a
  // collection's own stream does not see them).
  BsonBuilder match;
  {
    BsonBuilder from, to, either;
    from.AppendString("ns.coll", coll_.name());
    to.AppendString("to.coll", coll_.name());
    either.AppendDocument("0", std::move(from).Build());
    either.AppendDocument("1", std::move(to).Build());
    BsonBuilder cond;
    cond.AppendArray("$or", std::move(either).Build());
    BsonBuilder stage;
    stage.AppendDocument("$match", std::move(cond).Build());
    match.AppendDocument("0", std::move(stage).Build());
  }
  ROCKDOC_ASSIGN_OR_RETURN(ChangeStream stream,
                           database_.Watch(std::move(match).Build(), options));
  stream_.emplace(std::move(stream));
  return Status::OK();
}

Status LiveQueryImpl::Requery() {
  FindOptions find;
  find.sort = sort_spec_;
  find.limit = cap_;
  ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, coll_.Find(filter_, find));
  Clear();
  int64_t n = 0;
  while (cursor.Next()) {
    ROCKDOC_RETURN_IF_ERROR(Insert(cursor.document()));
    ++n;
  }
  ROCKDOC_RETURN_IF_ERROR(cursor.status());
  maybe_more_ = cap_ != 0 && n == cap_;
  requeries_.fetch_add(1, std::memory_order_relaxed);
  return Status::OK();
}

Status LiveQueryImpl::Insert(DocumentView doc) {
  MatchDetails details;
  if (projection_ && projection_->requires_match_details()) details.RequestElemMatchKey();
  // Documents that no longer match are not inserted; the finds' documents
  // match (this also computes the positional projection's details).
  if (!matcher_->Matches(doc, &details)) return Status::OK();
  std::vector<Element> key_elements;
  ROCKDOC_RETURN_IF_ERROR(sort_.ExtractKey(doc, &key_elements));
  Entry entry;
  entry.id = Value::FromElement(doc.Get("_id"));
  entry.key.reserve(key_elements.size());
  for (const Element& e : key_elements) entry.key.push_back(Value::FromElement(e));
  // The set is the first documents of the result in its order; when it was
  // cut, every document not in it sorts after its last. A document goes in
  // when it sorts before that last, or when the set is whole and has room.
  if (cap_ != 0) {
    const bool before_last =
        !ordered_.empty() && sort_.CompareKeys(entry.key, (*ordered_.rbegin())->key) < 0;
    const bool room = static_cast<int64_t>(ordered_.size()) < cap_ && !maybe_more_;
    if (!before_last && !room) {
      maybe_more_ = true;  // somewhere past the set
      return Status::OK();
    }
  }
  if (projection_) {
    ROCKDOC_ASSIGN_OR_RETURN(entry.projected, projection_->Apply(doc, &details));
  } else {
    entry.projected = Document::AdoptValidated(std::string(doc.bytes()));
  }
  Value id = Copy(entry.id);
  auto [it, inserted] = by_id_.emplace(std::move(id), std::move(entry));
  if (!inserted) return Status::OK();  // Apply erased it first
  ordered_.insert(&it->second);
  while (cap_ != 0 && static_cast<int64_t>(ordered_.size()) > cap_) {
    const Entry* last = *ordered_.rbegin();
    ordered_.erase(std::prev(ordered_.end()));
    by_id_.erase(last->id);
    maybe_more_ = true;
  }
  return Status::OK();
}

void LiveQueryImpl::Erase(const Value& id) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  ordered_.erase(&it->second);
  by_id_.erase(it);
}

Status LiveQueryImpl::Apply(const Value& id, const std::optional<Document>& doc) {
  Erase(id);
  if (doc) ROCKDOC_RETURN_IF_ERROR(Insert(*doc));
  return Status::OK();
}

Status LiveQueryImpl::Step(bool* read) {
  *read = false;
  std::map<Value, Pending, IdLess> pending;
  bool history_lost = false;
  bool requery = false;  // a rename brought documents: read the set again
  for (int n = 0; n < kMaxBatchEvents; ++n) {
    StatusOr<std::optional<Document>> event = stream_->TryNext();
    if (!event.ok()) {
      if (event.status().code() != ErrorCode::kChangeStreamHistoryLost) return event.status();
      // The log was trimmed past the query: start again from now.
      ROCKDOC_RETURN_IF_ERROR(OpenStream(std::nullopt));
      history_lost = true;
      pending.clear();
      continue;
    }
    if (!event->has_value()) break;
    *read = true;
    const Document& e = **event;
    const std::string_view op = e.Get("operationType").String();
    if (op == "invalidate") {
      // The database was dropped (its collection's drop came first): the
      // query goes on after the invalidate.
      ROCKDOC_RETURN_IF_ERROR(
          OpenStream(Document::AdoptValidated(std::string(e.Get("_id").Document().bytes()))));
      continue;
    }
    if (op == "drop" || op == "rename") {
      // Documents renamed here are read again; the collection's own drop or
      // rename away leaves nothing.
      pending.clear();
      if (e.Get("ns").Document().Get("coll").String() == coll_.name()) {
        Clear();
        requery = false;
      } else {
        requery = true;
      }
      continue;
    }
    if (op != "insert" && op != "update" && op != "replace" && op != "delete") continue;
    if (e.Get("ns").Document().Get("coll").String() != coll_.name()) continue;
    Pending& p = pending[Value::FromElement(e.Get("documentKey").Document().Get("_id"))];
    p.fetch = op == "update";
    if (op == "insert" || op == "replace") {
      p.doc = Document::AdoptValidated(std::string(e.Get("fullDocument").Document().bytes()));
    } else {
      p.doc.reset();
    }
  }
  if (history_lost || requery) {
    ROCKDOC_RETURN_IF_ERROR(Requery());
    *read = true;
  } else {
    // Updated documents, read as they are now.
    std::vector<const Value*> fetch;
    for (auto& [id, p] : pending) {
      if (p.fetch) fetch.push_back(&id);
    }
    if (fetch.size() == 1) {  // the common case: a point read, no planning
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, coll_.FindById(fetch[0]->element()));
      pending.find(*fetch[0])->second.doc = std::move(doc);
      fetch.clear();
    }
    for (size_t at = 0; at < fetch.size(); at += kFetchChunk) {
      BsonBuilder in;
      {
        BsonBuilder ids;
        const size_t end = std::min(fetch.size(), at + kFetchChunk);
        for (size_t i = at; i < end; ++i) ids.AppendElementAs(std::to_string(i - at), fetch[i]->element());
        BsonBuilder op;
        op.AppendArray("$in", std::move(ids).Build());
        in.AppendDocument("_id", std::move(op).Build());
      }
      ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, coll_.Find(std::move(in).Build()));
      while (cursor.Next()) {
        auto it = pending.find(Value::FromElement(cursor.document().Get("_id")));
        if (it == pending.end()) continue;
        it->second.doc = Document::AdoptValidated(std::string(cursor.document().bytes()));
      }
      ROCKDOC_RETURN_IF_ERROR(cursor.status());
    }
    for (const auto& [id, p] : pending) ROCKDOC_RETURN_IF_ERROR(Apply(id, p.doc));
    // Documents left a result whose buffer ran out: read the set again.
    if (maybe_more_ && static_cast<int64_t>(ordered_.size()) < skip_ + limit_) {
      ROCKDOC_RETURN_IF_ERROR(Requery());
    }
  }
  if (*read) Report();
  return Status::OK();
}

void LiveQueryImpl::Report() {
  // The new result.
  std::vector<const Entry*> now;
  {
    auto it = ordered_.begin();
    for (int64_t i = 0; i < skip_ && it != ordered_.end(); ++i) ++it;
    for (; it != ordered_.end() && (limit_ == 0 || static_cast<int64_t>(now.size()) < limit_);
         ++it) {
      now.push_back(*it);
    }
  }
  std::vector<std::pair<Value, Document>> before;
  {
    MutexLock g(&result_mu_);
    before.swap(published_);
  }
  std::map<Value, size_t, IdLess> now_at, before_at;
  for (size_t i = 0; i < now.size(); ++i) now_at.emplace(Copy(now[i]->id), i);
  for (size_t i = 0; i < before.size(); ++i) before_at.emplace(Copy(before[i].first), i);

  auto emit = [&](const auto& fn, const auto&... args) {
    if (fn && !stopping()) fn(args...);
  };
  // Removed, in the old order.
  std::vector<size_t> common;  // new positions of the documents kept, in old order
  for (const auto& [id, doc] : before) {
    auto it = now_at.find(id);
    if (it == now_at.end()) {
      emit(callbacks_.removed, id);
    } else {
      common.push_back(it->second);
    }
  }
  // The longest increasing run of `common` stays where it is.
  std::vector<bool> stays(now.size(), false);
  {
    std::vector<size_t> tails, parent(common.size(), SIZE_MAX);
    for (size_t i = 0; i < common.size(); ++i) {
      auto pos = std::lower_bound(tails.begin(), tails.end(), common[i],
                                  [&](size_t t, size_t v) { return common[t] < v; }) -
                 tails.begin();
      if (pos > 0) parent[i] = tails[pos - 1];
      if (static_cast<size_t>(pos) == tails.size()) {
        tails.push_back(i);
      } else {
        tails[pos] = i;
      }
    }
    for (size_t i = tails.empty() ? SIZE_MAX : tails.back(); i != SIZE_MAX; i = parent[i]) {
      stays[common[i]] = true;
    }
  }
  // Added and moved, from the end backwards: each goes before the one after
  // it, which is in place by then.
  std::optional<Value> next;
  for (size_t i = now.size(); i-- > 0;) {
    const Entry& e = *now[i];
    if (before_at.find(e.id) == before_at.end()) {
      emit(callbacks_.added, e.id, e.projected, next);
    } else if (!stays[i]) {
      emit(callbacks_.moved, e.id, next);
    }
    next = Copy(e.id);
  }
  // Changed.
  if (callbacks_.changed) {
    for (const Entry* e : now) {
      auto it = before_at.find(e->id);
      if (it == before_at.end()) continue;
      const Document& old = before[it->second].second;
      if (old == e->projected) continue;
      Document fields;
      std::vector<std::string> removed;
      DiffFields(old, e->projected, &fields, &removed);
      if (!fields.empty() || !removed.empty()) emit(callbacks_.changed, e->id, fields, removed);
    }
  }
  std::vector<std::pair<Value, Document>> published;
  published.reserve(now.size());
  for (const Entry* e : now) published.emplace_back(Copy(e->id), e->projected);
  MutexLock g(&result_mu_);
  published_ = std::move(published);
}

void LiveQueryImpl::Finish(const Status& status) {
  if (ended_.exchange(true)) return;
  running_.store(false, std::memory_order_release);
  if (callbacks_.ended) callbacks_.ended(status);
}

void LiveQueryImpl::RunThread() {
  t_reporting = this;
  Status end;
  while (!stopping()) {
    bool read = false;
    end = Step(&read);
    if (!end.ok()) break;
    if (!read) WaitForChange(stream_->impl_.get(), kThreadWaitMs, &stop_);
  }
  Finish(end);
}

Status LiveQueryImpl::Poll(int64_t wait_ms) {
  if (own_thread_) {
    return Status(ErrorCode::kIllegalOperation,
                  "LiveQuery::Poll: this live query reports on its own thread");
  }
  MutexLock g(&poll_mu_);
  if (!running()) return Status(ErrorCode::kIllegalOperation, "the live query is stopped");
  const LiveQueryImpl* outer = t_reporting;
  t_reporting = this;
  bool read = false;
  Status s = stopping() ? Status::OK() : Step(&read);
  if (s.ok() && !read && wait_ms > 0 && !stopping()) {
    WaitForChange(stream_->impl_.get(), wait_ms, &stop_);
    if (!stopping()) s = Step(&read);
  }
  t_reporting = outer;
  if (!s.ok() || stopping()) Finish(s);
  return s;
}

void LiveQueryImpl::Stop() {
  stop_.store(true, std::memory_order_release);
  if (stream_) WakeChangeStream(stream_->impl_.get());
  if (t_reporting == this) return;  // from a callback: ends after it
  if (own_thread_) {
    MutexLock g(&join_mu_);
    if (thread_.joinable()) thread_.join();
    return;
  }
  MutexLock g(&poll_mu_);  // a Poll on another thread finishes first
  Finish(Status::OK());
}

void LiveQueryImpl::Release() {
  if (t_reporting == this && own_thread_) {
    stop_.store(true, std::memory_order_release);
    thread_.detach();
    return;
  }
  Stop();
}

}  // namespace internal

StatusOr<LiveQuery> Collection::Observe(DocumentView filter, const ObserveOptions& options,
                                        ObserveCallbacks callbacks) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "aggregate"));
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<ViewRead> view, ResolveView());
  if (view) {
    return Status(ErrorCode::kCommandNotSupportedOnView,
                  "Namespace " + full_name() + " is a view, not a collection");
  }
  // The stream's and the finds' handle: without a session, so that its
  // reads are not operations of the caller's.
  ROCKDOC_ASSIGN_OR_RETURN(auto impl,
                           internal::LiveQueryImpl::Open(
                               Collection(engine_, db_name_, name_),
                               internal::ClientAccess::DatabaseOf(engine_, db_name_), filter,
                               options, std::move(callbacks)));
  if (options.own_thread) internal::LiveQueryImpl::StartThread(impl);
  return LiveQuery(std::move(impl));
}

LiveQuery::LiveQuery(std::shared_ptr<internal::LiveQueryImpl> impl) : impl_(std::move(impl)) {}
LiveQuery::LiveQuery(LiveQuery&&) noexcept = default;
LiveQuery& LiveQuery::operator=(LiveQuery&& other) noexcept {
  if (this != &other) {
    if (impl_ != nullptr) impl_->Release();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
LiveQuery::~LiveQuery() {
  if (impl_ != nullptr) impl_->Release();
}
Status LiveQuery::Poll(int64_t wait_ms) { return impl_->Poll(wait_ms); }
void LiveQuery::Stop() { impl_->Stop(); }
bool LiveQuery::running() const { return impl_->running(); }
std::vector<Document> LiveQuery::result() const { return impl_->result(); }
int64_t LiveQuery::requeries() const { return impl_->requeries(); }

}  // namespace rockdoc

// api/change_stream.cc: change streams (Collection::Watch, Database::Watch,
// Client::Watch) over the change log (storage/change_log.h), whose events
// the store writes (store/change_set.h).
//
// A stream keeps its position in the log (the last event it read, whether
// or not its pipeline kept it) and reads on from there in batches; each
// event of its namespace becomes MongoDB's change event (the stored event
// with its resume token and clusterTime, and for "updateLookup" the
// document as it is now), then passes through the stream's stages, one
// event at a time.
//
// A resume token's _data is the upper-case hex (as MongoDB's) of: 0x82 (as
// MongoDB's tokens begin, the type of a Timestamp in its key encoding), the
// cluster time (BE64), the op index (BE32) and whether it is an
// invalidate's (one byte). Drivers treat it as opaque.
#include <algorithm>
#include <deque>
#include <limits>
#include <thread>

#include "api/client_internal.h"
#include "api/session_internal.h"
#include "catalog/catalog.h"
#include "common/endian.h"
#include "common/mutex.h"
#include "json/json_internal.h"
#include "pipeline/planning.h"
#include "pipeline/stage.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/change_log.h"

namespace rockdoc {

namespace internal {

namespace {

constexpr uint8_t kTokenMarker = 0x82;
// Events read from the log at once (one batch's reading).
constexpr int kReadBatch = 128;
// A token's bytes: the marker, the position (8 + 4), the invalidate flag.
constexpr size_t kTokenBytes = 14;

Document TokenOf(const ChangePosition& p, bool from_invalidate = false) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string bytes;
  bytes.push_back(static_cast<char>(kTokenMarker));
  AppendBE64(&bytes, p.cluster_time);
  AppendBE32(&bytes, p.op_index);
  bytes.push_back(from_invalidate ? 1 : 0);
  std::string hex;
  for (unsigned char c : bytes) {
    hex.push_back(kHex[c >> 4]);
    hex.push_back(kHex[c & 15]);
  }
  BsonBuilder b;
  b.AppendString("_data", hex);
  return std::move(b).Build();
}

struct Token {
  ChangePosition position;
  bool from_invalidate = false;
};

Status BadToken() {
  return BadValue("invalid resume token: not one this rockdoc made ({_data: <hex string>})");
}

StatusOr<Token> ParseToken(DocumentView token) {
  Element data = token.Get("_data");
  if (!data.IsString() || token.CountFields() != 1) return BadToken();
  std::string_view hex = data.String();
  if (hex.size() != 2 * kTokenBytes) return BadToken();
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = json_internal::HexValue(hex[i]), lo = json_internal::HexValue(hex[i + 1]);
    if (hi < 0 || lo < 0) return BadToken();
    bytes.push_back(static_cast<char>(hi * 16 + lo));
  }
  if (static_cast<uint8_t>(bytes[0]) != kTokenMarker || static_cast<uint8_t>(bytes[13]) > 1) {
    return BadToken();
  }
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + 1;
  return Token{{LoadBE64(p), LoadBE32(p + 8)}, bytes[13] == 1};
}

// The one-document source the stream's stages pull from: an event put in,
// then taken out by the first stage.
class EventSlot : public DocumentSource {
 public:
  void Put(Document doc) { doc_ = std::move(doc); }
  StatusOr<std::optional<Document>> Next() override {
    std::optional<Document> out = std::move(doc_);
    doc_.reset();
    return out;
  }

 private:
  std::optional<Document> doc_;
};

}  // namespace

class ChangeStreamImpl {
 public:
  // `db` empty: every database; `coll` empty: every collection of `db`.
  static StatusOr<std::unique_ptr<ChangeStreamImpl>> Open(std::shared_ptr<Engine> engine,
                                                          std::string db, std::string coll,
                                                          DocumentView pipeline,
                                                          const ChangeStreamOptions& options);

  StatusOr<std::optional<Document>> Next(int64_t wait_ms);
  Document resume_token() const { return last_token_ ? *last_token_ : TokenOf(position_); }
  void Close() {
    closed_ = true;
    ready_.clear();
  }
  bool closed() const { return closed_; }
  int64_t max_await_time_ms() const { return options_.max_await_time_ms; }
  // Wakes every waiter on the log (one whose stop flag was set returns).
  void Wake() const { engine_->change_log()->WakeAll(); }
  // Waits up to `ms` for a commit past the stream's position (or *stop),
  // unless it has events ready or has ended.
  void Wait(int64_t ms, const std::atomic<bool>* stop) const {
    if (!ready_.empty() || closed_ || invalidated_) return;
    engine_->change_log()->WaitForNewer(position_.cluster_time, ms, stop);
  }

 private:
  ChangeStreamImpl() = default;
  // Reads the next batch of the log into ready_; returns whether it read to
  // the log's end.
  StatusOr<bool> ReadBatch();
  // The change event of a stored one (`token`: its _id), or nullopt when it
  // is not of this stream's namespace. *invalidates: the event ends the
  // stream (its collection dropped or renamed, its database dropped).
  StatusOr<std::optional<Document>> MakeEvent(const ChangePosition& p, const Document& token,
                                              DocumentView stored, bool* invalidates);
  // The stored event's image `field` ("preImage", "postImage"), nullopt
  // when it has none; with `mode` "required", none is NoMatchingDocument
  // (47), which ends the stream.
  StatusOr<std::optional<Document>> Image(DocumentView stored, std::string_view field,
                                          std::string_view mode) const;
  // An update event's updateDescription as the stream shows it
  // (disambiguatedPaths under showExpandedEvents only).
  void AppendUpdateDescription(DocumentView stored, BsonBuilder* b) const;

  std::shared_ptr<Engine> engine_;
  std::string db_, coll_;
  ChangeStreamOptions options_;
  ChangePosition position_;
  std::optional<Document> last_token_;  // of the last event returned
  std::deque<std::pair<ChangePosition, Document>> ready_;
  EventSlot* slot_ = nullptr;
  std::unique_ptr<DocumentSource> stages_;  // null: none
  bool closed_ = false;
  bool invalidated_ = false;  // the invalidate event is the last
};

StatusOr<std::unique_ptr<ChangeStreamImpl>> ChangeStreamImpl::Open(
    std::shared_ptr<Engine> engine, std::string db, std::string coll, DocumentView pipeline,
    const ChangeStreamOptions& options) {
  auto use = engine->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  if (!db.empty()) ROCKDOC_RETURN_IF_ERROR(ValidateDatabaseName(db));
  if (!coll.empty()) ROCKDOC_RETURN_IF_ERROR(ValidateCollectionName(db, coll));
  ChangeLog* log = engine->change_log();
  if (log == nullptr) {
    return Status(static_cast<ErrorCode>(40573),
                  engine->read_only()
                      ? "The $changeStream stage is only supported on replica sets (rockdoc: "
                        "not on a read-only client, ClientOptions::read_only; watch through the "
                        "directory's owner)"
                      : "The $changeStream stage is only supported on replica sets (rockdoc: "
                        "ClientOptions::change_log is off)");
  }
  if (options.max_await_time_ms < 0) {
    return BadValue("maxAwaitTimeMS must be >= 0, not " +
                    std::to_string(options.max_await_time_ms));
  }
  if (options.full_document != "default" && options.full_document != "updateLookup" &&
      options.full_document != "whenAvailable" && options.full_document != "required") {
    return BadValue("Enumeration value '" + options.full_document +
                    "' for field 'fullDocument' is not a valid value.");
  }
  if (options.full_document_before_change != "off" &&
      options.full_document_before_change != "whenAvailable" &&
      options.full_document_before_change != "required") {
    return BadValue("Enumeration value '" + options.full_document_before_change +
                    "' for field 'fullDocumentBeforeChange' is not a valid value.");
  }
  const int starts = (options.resume_after ? 1 : 0) + (options.start_after ? 1 : 0) +
                     (options.start_at_operation_time ? 1 : 0);
  if (starts > 1) {
    return Status(static_cast<ErrorCode>(40674),
                  "Only one type of resume option is allowed, but multiple were found.");
  }
  auto impl = std::unique_ptr<ChangeStreamImpl>(new ChangeStreamImpl());
  impl->engine_ = std::move(engine);
  impl->db_ = std::move(db);
  impl->coll_ = std::move(coll);
  impl->options_ = options;
  if (options.resume_after || options.start_after) {
    ROCKDOC_ASSIGN_OR_RETURN(Token token,
                             ParseToken(options.resume_after ? options.resume_after->view()
                                                             : options.start_after->view()));
    if (token.from_invalidate && options.resume_after) {
      return Status(ErrorCode::kInvalidResumeToken,
                    "Attempting to resume a change stream using 'resumeAfter' is not allowed "
                    "from an invalidate notification.");
    }
    impl->position_ = token.position;
    ROCKDOC_RETURN_IF_ERROR(log->CheckRetained(impl->position_));
  } else if (options.start_at_operation_time) {
    const uint64_t t = options.start_at_operation_time->AsUint64();
    // Every event at or after t: after the last position before it.
    impl->position_ =
        t == 0 ? ChangePosition{} : ChangePosition{t - 1, std::numeric_limits<uint32_t>::max()};
    ROCKDOC_RETURN_IF_ERROR(log->CheckRetained(impl->position_));
  } else {
    impl->position_ = {log->last_cluster_time(), std::numeric_limits<uint32_t>::max()};
  }

  // The stages after $changeStream.
  if (!pipeline.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, StageElements(pipeline));
    static constexpr std::string_view kAllowed[] = {"$match",       "$project", "$addFields",
                                                    "$set",         "$unset",   "$replaceRoot",
                                                    "$replaceWith", "$redact"};
    for (const Element& stage : stages) {
      // A name no pipeline knows is MongoDB's parse error, before the
      // change stream's own rule.
      if (FindStage(stage.key()) == nullptr) {
        return Status(static_cast<ErrorCode>(40324),
                      "Unrecognized pipeline stage name: '" + std::string(stage.key()) + "'");
      }
      if (std::find(std::begin(kAllowed), std::end(kAllowed), stage.key()) == std::end(kAllowed)) {
        return Status(ErrorCode::kIllegalOperation,
                      std::string(stage.key()) + " is not permitted in a $changeStream pipeline");
      }
    }
    PipelineOptions popts;
    ROCKDOC_ASSIGN_OR_RETURN(auto chain, ParseStages(stages, 0, popts, FindFn(), false));
    auto slot = std::make_unique<EventSlot>();
    impl->slot_ = slot.get();
    impl->stages_ = Connect(std::move(slot), std::move(chain));
  }
  return impl;
}

StatusOr<std::optional<Document>> ChangeStreamImpl::MakeEvent(const ChangePosition& p,
                                                              const Document& token,
                                                              DocumentView stored,
                                                              bool* invalidates) {
  const DocumentView ns = stored.Get("ns").Document();
  const std::string_view db = ns.Get("db").String();
  const std::string_view coll = ns.Get("coll").String();
  if (db_.empty()) {
    if (IsInternalDatabaseName(db)) return std::optional<Document>();
  } else if (db != db_) {
    return std::optional<Document>();
  }
  if (coll_.empty()) {
    if (coll.substr(0, 7) == "system.") return std::optional<Document>();
  } else if (coll != coll_) {
    return std::optional<Document>();
  }
  const std::string_view op = stored.Get("operationType").String();
  // The DDL events of showExpandedEvents (MongoDB 6.0's), hidden without it.
  if (!options_.show_expanded_events &&
      (op == "create" || op == "createIndexes" || op == "dropIndexes" || op == "modify")) {
    return std::optional<Document>();
  }
  *invalidates =
      coll_.empty() ? !db_.empty() && op == "dropDatabase" : op == "drop" || op == "rename";
  const bool lookup = options_.full_document == "updateLookup" && op == "update";
  // fullDocument "whenAvailable"/"required": an update's post-image.
  const bool post_image = op == "update" && (options_.full_document == "whenAvailable" ||
                                             options_.full_document == "required");
  const bool pre_image = options_.full_document_before_change != "off" &&
                         (op == "update" || op == "replace" || op == "delete");
  std::optional<Document> current;
  if (lookup) {
    BsonBuilder filter;
    filter.AppendElement(*stored.Get("documentKey").Document().begin());
    Collection c = ClientAccess::DatabaseOf(engine_, std::string(db)).GetCollection(coll);
    ROCKDOC_ASSIGN_OR_RETURN(current, c.FindOne(std::move(filter).Build()));
  } else if (post_image) {
    ROCKDOC_ASSIGN_OR_RETURN(current, Image(stored, "postImage", options_.full_document));
  }
  std::optional<Document> before;
  if (pre_image) {
    ROCKDOC_ASSIGN_OR_RETURN(before,
                             Image(stored, "preImage", options_.full_document_before_change));
  }
  BsonBuilder b;
  b.AppendDocument("_id", token);
  for (const Element& e : stored) {
    const std::string_view key = e.key();
    if (key == "preImage" || key == "postImage") continue;  // as asked, below
    if (!options_.show_expanded_events &&
        (key == "collectionUUID" || key == "operationDescription" || key == "stateBeforeChange")) {
      continue;
    }
    if (key == "ns" && (lookup || post_image)) {
      // fullDocument goes where an insert's is: before ns.
      if (current) {
        b.AppendDocument("fullDocument", *current);
      } else {
        b.AppendNull("fullDocument");
      }
    }
    if (key == "updateDescription" && e.IsDocument()) {
      AppendUpdateDescription(e.Document(), &b);
      continue;
    }
    b.AppendElement(e);
    if (key == "operationType") {
      b.AppendTimestamp("clusterTime", BsonTimestamp::FromUint64(p.cluster_time));
    }
  }
  if (pre_image) {
    if (before) {
      b.AppendDocument("fullDocumentBeforeChange", *before);
    } else {
      b.AppendNull("fullDocumentBeforeChange");
    }
  }
  return std::optional<Document>(std::move(b).Build());
}

StatusOr<std::optional<Document>> ChangeStreamImpl::Image(DocumentView stored,
                                                          std::string_view field,
                                                          std::string_view mode) const {
  Element image = stored.Get(field);
  if (image.IsDocument()) {
    return std::optional<Document>(Document::AdoptValidated(std::string(image.Document().bytes())));
  }
  if (mode != "required") return std::optional<Document>();
  // MongoDB's words (its event as it stands, without the images).
  const bool pre = field == "preImage";
  BsonBuilder shown;
  for (const Element& e : stored) {
    if (e.key() != "preImage" && e.key() != "postImage") shown.AppendElement(e);
  }
  return Status(ErrorCode::kNoMatchingDocument,
                std::string("Change stream was configured to require a ") +
                    (pre ? "pre-image" : "post-image") +
                    " for all update, delete and replace events, but the " +
                    (pre ? "pre-image" : "post-image") + " was not found for event: " +
                    ToJson(std::move(shown).Build(), JsonFormat::kShell));
}

void ChangeStreamImpl::AppendUpdateDescription(DocumentView stored, BsonBuilder* b) const {
  // disambiguatedPaths is an expanded field: {} when no path was ambiguous.
  b->OpenDocument("updateDescription");
  bool disambiguated = false;
  for (const Element& e : stored) {
    if (e.key() == "disambiguatedPaths") {
      if (!options_.show_expanded_events) continue;
      disambiguated = true;
    }
    b->AppendElement(e);
  }
  if (options_.show_expanded_events && !disambiguated) {
    b->OpenDocument("disambiguatedPaths").Close();
  }
  b->Close();
}

StatusOr<bool> ChangeStreamImpl::ReadBatch() {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ChangeLog* log = engine_->change_log();
  const uint64_t published = log->last_cluster_time();
  ChangePosition last = position_;
  std::vector<std::pair<ChangePosition, Document>> batch;
  // Read whole first: a gap Read finds (a trim past the stream, 286) fails
  // the batch before any of it is handed out.
  ROCKDOC_RETURN_IF_ERROR(
      log->Read(position_, [&](const ChangePosition& p, std::string_view value) -> StatusOr<bool> {
        ROCKDOC_ASSIGN_OR_RETURN(Document stored, Document::FromBytes(value));
        batch.emplace_back(p, std::move(stored));
        last = p;
        return batch.size() < kReadBatch;
      }));
  for (const auto& [p, stored] : batch) {
    const Document token = TokenOf(p);
    bool invalidates = false;
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> event,
                             MakeEvent(p, token, stored, &invalidates));
    if (event && stages_ != nullptr) {
      slot_->Put(std::move(*event));
      ROCKDOC_ASSIGN_OR_RETURN(event, stages_->Next());
      // MongoDB refuses a stage that changes the resume token.
      Element id = event ? event->Get("_id") : Element();
      if (event && (!id.IsDocument() || id.Document().bytes() != token.bytes())) {
        return Status(ErrorCode::kChangeStreamFatalError,
                      "Encountered an event whose _id field, which contains the resume token, "
                      "was modified by the pipeline. Modifying the _id field of an event makes "
                      "it impossible to resume the stream from that point. Only transformations "
                      "that retain the unmodified _id field are allowed.");
      }
    }
    if (event) ready_.emplace_back(p, std::move(*event));
    if (invalidates) {
      // The stream's last event; startAfter its token starts a new stream
      // after the change that ended this one.
      BsonBuilder b;
      b.AppendDocument("_id", TokenOf(p, /*from_invalidate=*/true));
      b.AppendString("operationType", "invalidate");
      b.AppendTimestamp("clusterTime", BsonTimestamp::FromUint64(p.cluster_time));
      b.AppendElement(stored.Get("wallTime"));
      ready_.emplace_back(p, std::move(b).Build());
      invalidated_ = true;
      position_ = p;
      return true;
    }
  }
  const bool to_end = batch.size() < kReadBatch;
  if (to_end) {
    ChangePosition end{published, std::numeric_limits<uint32_t>::max()};
    position_ = last < end ? end : last;
  } else {
    position_ = last;
  }
  return to_end;
}

StatusOr<std::optional<Document>> ChangeStreamImpl::Next(int64_t wait_ms) {
  for (bool waited = false; !closed_;) {
    if (!ready_.empty()) {
      Document event = std::move(ready_.front().second);
      ready_.pop_front();
      // While events wait, the token is this one's; past the last, the
      // stream's position says more, unless the stream ends here.
      if (!ready_.empty() || invalidated_) {
        last_token_ = Document::AdoptValidated(std::string(event.Get("_id").Document().bytes()));
      } else {
        last_token_.reset();
      }
      return std::optional<Document>(std::move(event));
    }
    if (invalidated_) {  // its invalidate was the last event
      closed_ = true;
      break;
    }
    StatusOr<bool> read = ReadBatch();
    if (!read.ok()) {
      // An event the stream cannot give (a required image missing, 47; a
      // stage that changed its _id, 280) ends it, as MongoDB kills its
      // cursor: the events read with it go too.
      if (read.status().code() == ErrorCode::kNoMatchingDocument ||
          read.status().code() == ErrorCode::kChangeStreamFatalError) {
        Close();
      }
      return read.status();
    }
    const bool to_end = *read;
    if (!ready_.empty() || !to_end) continue;
    if (waited || wait_ms <= 0) break;
    Wait(wait_ms, nullptr);
    waited = true;
  }
  return std::optional<Document>();
}

void WaitForChange(ChangeStreamImpl* stream, int64_t ms, const std::atomic<bool>* stop) {
  stream->Wait(ms, stop);
}
void WakeChangeStream(ChangeStreamImpl* stream) { stream->Wake(); }

class ChangeSubscriptionImpl;
namespace {
// The subscription whose thread this is (its callbacks ask "from a
// callback?" without reading the std::thread being assigned).
thread_local const ChangeSubscriptionImpl* t_running_subscription = nullptr;
}  // namespace

// A ChangeSubscription's state, shared by the handle and its thread (so
// that a handle destroyed from its own callback leaves the thread what it
// reads).
class ChangeSubscriptionImpl {
 public:
  ChangeSubscriptionImpl(ChangeStream stream, ChangeSubscription::EventCallback on_event,
                         ChangeSubscription::EndCallback on_end)
      : stream_(std::move(stream)),
        on_event_(std::move(on_event)),
        on_end_(std::move(on_end)),
        token_(stream_.resume_token()) {}

  // The thread, holding `self` until it ends.
  static void Start(const std::shared_ptr<ChangeSubscriptionImpl>& self) {
    self->thread_ = std::thread([self] { self->Run(); });
  }

  void Cancel() {
    stop_.store(true, std::memory_order_release);
    stream_.impl_->Wake();
    if (t_running_subscription == this) return;  // from a callback
    MutexLock g(&join_mu_);
    if (thread_.joinable()) thread_.join();
  }
  // The handle went: cancelled, and from its own thread left to end alone.
  void Release() {
    if (t_running_subscription == this) {
      stop_.store(true, std::memory_order_release);
      thread_.detach();
      return;
    }
    Cancel();
  }
  bool running() const { return running_.load(std::memory_order_acquire); }
  Document resume_token() const {
    MutexLock g(&token_mu_);
    return token_;
  }

 private:
  // How long one wait lasts before the thread looks again (Cancel and the
  // client's close wake it sooner).
  static constexpr int64_t kWaitMs = 1000;

  void Run() {
    t_running_subscription = this;
    ChangeStreamImpl* stream = stream_.impl_.get();
    Status end;
    while (!stop_.load(std::memory_order_acquire)) {
      StatusOr<std::optional<Document>> event = stream->Next(0);
      if (!event.ok()) {
        end = event.status();
        break;
      }
      {
        MutexLock g(&token_mu_);
        token_ = stream->resume_token();
      }
      if (event->has_value()) {
        on_event_(**event);
        continue;
      }
      if (stream->closed()) break;  // invalidated: its event was the last
      stream->Wait(kWaitMs, &stop_);
    }
    running_.store(false, std::memory_order_release);
    if (on_end_) on_end_(end);
  }

  ChangeStream stream_;
  const ChangeSubscription::EventCallback on_event_;
  const ChangeSubscription::EndCallback on_end_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{true};
  mutable Mutex token_mu_;
  Document token_ ABSL_GUARDED_BY(token_mu_);
  Mutex join_mu_;  // one joiner at a time
  std::thread thread_;
};

}  // namespace internal

StatusOr<ChangeSubscription> ChangeSubscription::Start(ChangeStream stream, EventCallback on_event,
                                                       EndCallback on_end) {
  if (!on_event) return BadValue("ChangeSubscription::Start needs an event callback");
  if (stream.closed()) return BadValue("ChangeSubscription::Start: the stream is closed");
  auto impl = std::make_shared<internal::ChangeSubscriptionImpl>(
      std::move(stream), std::move(on_event), std::move(on_end));
  internal::ChangeSubscriptionImpl::Start(impl);
  return ChangeSubscription(std::move(impl));
}

ChangeSubscription::ChangeSubscription(std::shared_ptr<internal::ChangeSubscriptionImpl> impl)
    : impl_(std::move(impl)) {}
ChangeSubscription::ChangeSubscription(ChangeSubscription&&) noexcept = default;
ChangeSubscription& ChangeSubscription::operator=(ChangeSubscription&& other) noexcept {
  if (this != &other) {
    if (impl_ != nullptr) impl_->Release();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
ChangeSubscription::~ChangeSubscription() {
  if (impl_ != nullptr) impl_->Release();
}
void ChangeSubscription::Cancel() { impl_->Cancel(); }
bool ChangeSubscription::running() const { return impl_->running(); }
Document ChangeSubscription::resume_token() const { return impl_->resume_token(); }

ChangeStream::ChangeStream(std::unique_ptr<internal::ChangeStreamImpl> impl)
    : impl_(std::move(impl)) {}
ChangeStream::ChangeStream(ChangeStream&&) noexcept = default;
ChangeStream& ChangeStream::operator=(ChangeStream&&) noexcept = default;
ChangeStream::~ChangeStream() = default;

StatusOr<std::optional<Document>> ChangeStream::Next() {
  return impl_->Next(impl_->max_await_time_ms());
}
StatusOr<std::optional<Document>> ChangeStream::TryNext() { return impl_->Next(0); }
Document ChangeStream::resume_token() const { return impl_->resume_token(); }
void ChangeStream::Close() { impl_->Close(); }
bool ChangeStream::closed() const { return impl_->closed(); }

StatusOr<ChangeStream> Collection::Watch(DocumentView pipeline,
                                         const ChangeStreamOptions& options) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "aggregate"));
  ROCKDOC_ASSIGN_OR_RETURN(
      auto impl, internal::ChangeStreamImpl::Open(engine_, db_name_, name_, pipeline, options));
  return ChangeStream(std::move(impl));
}

StatusOr<ChangeStream> Database::Watch(DocumentView pipeline,
                                       const ChangeStreamOptions& options) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "aggregate"));
  ROCKDOC_ASSIGN_OR_RETURN(auto impl,
                           internal::ChangeStreamImpl::Open(engine_, name_, "", pipeline, options));
  return ChangeStream(std::move(impl));
}

StatusOr<ChangeStream> Client::Watch(DocumentView pipeline,
                                     const ChangeStreamOptions& options) const {
  ROCKDOC_ASSIGN_OR_RETURN(auto impl,
                           internal::ChangeStreamImpl::Open(engine_, "", "", pipeline, options));
  return ChangeStream(std::move(impl));
}

}  // namespace rockdoc

#include "api/query_recorder.h"

#include <array>
#include <atomic>

#include "api/client_internal.h"
#include "common/clock.h"
#include "common/deadline.h"
#include "query/query_shape.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

thread_local int NestedReads::depth_ = 0;
thread_local std::shared_ptr<NestedFigures> NestedReads::into_;

namespace {

constexpr char kProfileCollection[] = "system.profile";

// The engine's own bookkeeping, not the application's queries: the profile
// (read by whoever looks at it) and rockdoc-serve's users.
bool NotRecorded(const std::string& db, const std::string& coll) {
  return coll == kProfileCollection || (db == kUsersDatabase && coll == kUsersCollection);
}
// MongoDB's default system.profile: capped at 1 MiB.
constexpr int64_t kProfileBytes = int64_t{1} << 20;

// A profile entry's command; over 50 KB, MongoDB's {$truncated: text}
// (its beginning as JSON), so that no entry outgrows system.profile.
void AppendProfiledCommand(DocumentView command, BsonBuilder* b) {
  constexpr size_t kMaxCommandBytes = 50 * 1024;
  if (command.size() <= kMaxCommandBytes) {
    b->AppendDocument("command", command);
    return;
  }
  std::string text = ToJson(command);
  if (text.size() > kMaxCommandBytes) text.resize(kMaxCommandBytes);
  while (!text.empty() && (static_cast<uint8_t>(text.back()) & 0xC0) == 0x80) text.pop_back();
  if (!text.empty() && static_cast<uint8_t>(text.back()) >= 0xC0) text.pop_back();
  b->OpenDocument("command").AppendString("$truncated", text).Close();
}

// A system.profile document's first fields (op, ns, command and what was
// examined) and last ones (time, plan, when, who), one shape for reads and
// writes; what the operation did goes between.
void AppendProfileHead(std::string_view op, const std::string& db, const std::string& coll,
                       DocumentView command, int64_t keys, int64_t docs, BsonBuilder* b) {
  b->AppendString("op", op);
  b->AppendString("ns", db + "." + coll);
  AppendProfiledCommand(command, b);
  b->AppendInt64("keysExamined", keys);
  b->AppendInt64("docsExamined", docs);
}

// The command's comment in its profile entry, as MongoDB's keeps it.
void AppendComment(const std::optional<Value>& comment, BsonBuilder* b) {
  if (comment && comment->ok()) b->AppendElementAs("comment", comment->element());
}

void AppendProfileTail(int64_t micros, const std::string& plan, BsonBuilder* b) {
  b->AppendInt64("millis", micros / 1000);
  b->AppendInt64("durationMicros", micros);
  if (!plan.empty()) b->AppendString("planSummary", plan);
  b->AppendDateTime("ts", WallMillis());
  b->AppendString("client", "embedded");
}

}  // namespace

QueryRecorder::QueryRecorder(const Engine& engine, std::string db, std::string coll,
                             std::string command)
    : telemetry_(&StatsOf(engine)), engine_(&engine) {
  id_.db = std::move(db);
  id_.coll = std::move(coll);
  id_.command = std::move(command);
}

QueryRecorder::QueryRecorder(std::shared_ptr<NestedFigures> parent)
    : telemetry_(nullptr), engine_(nullptr), nested_(nullptr), parent_(std::move(parent)) {
  first_read_ = !parent_->first_read_made;
  parent_->first_read_made = true;
}

std::unique_ptr<QueryRecorder> QueryRecorder::Begin(const Engine& engine, const std::string& db,
                                                    const std::string& coll, std::string command,
                                                    bool* top) {
  *top = false;
  // Reading the profile is not a query of the application's.
  if (!engine.options().collect_statistics || NotRecorded(db, coll)) return nullptr;
  if (NestedReads::active()) {
    if (NestedReads::into() == nullptr) return nullptr;
    return std::unique_ptr<QueryRecorder>(new QueryRecorder(NestedReads::into()));
  }
  *top = true;
  return std::unique_ptr<QueryRecorder>(new QueryRecorder(engine, db, coll, std::move(command)));
}

template <typename ShapeFn>
void QueryRecorder::Prepare(const ShapeFn& shape, bool build_now) {
  id_.hash = shape(nullptr, &traits_);
  telemetry_->query_stats().NoteStart(id_, traits_);
  if (build_now && !telemetry_->query_stats().Has(id_)) {
    BsonBuilder b;
    ShapeTraits again;
    shape(&b, &again);
    shape_ = std::move(b).Build();
  }
}

namespace {

// A distinct's key is part of its shape.
uint64_t WithDistinctKey(uint64_t h, std::string_view key, BsonBuilder* out) {
  if (key.empty()) return h;
  for (char c : key) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  if (out != nullptr) out->AppendString("key", key);
  return h;
}

uint64_t ShapeOfQuery(const CanonicalQuery& cq, std::string_view distinct_key, BsonBuilder* out,
                      ShapeTraits* traits) {
  if (out == nullptr) {  // the hash alone: the query's own, which the planner shares
    *traits = cq.find_shape().traits;
    return WithDistinctKey(cq.find_shape().hash, distinct_key, nullptr);
  }
  const DocumentView projection =
      cq.projection.has_value() ? cq.projection->spec.view() : DocumentView();
  return WithDistinctKey(
      ShapeFind(cq.filter, cq.sort_spec, projection, cq.skip != 0, cq.limit != 0, out, traits),
      distinct_key, out);
}

Document IdFilter(const Element& id) {
  BsonBuilder filter;
  filter.AppendElementAs("_id", id);
  return std::move(filter).Build();
}

uint64_t ShapeOfIdRead(const Element& id, BsonBuilder* out, ShapeTraits* traits) {
  return ShapeFind(IdFilter(id), DocumentView(), DocumentView(), false, /*has_limit=*/true, out,
                   traits);
}

}  // namespace

std::optional<Document> QueryRecorder::BuildShape() const {
  if (shape_) return shape_;
  BsonBuilder b;
  ShapeTraits traits;
  if (cq_ != nullptr) {
    ShapeOfQuery(*cq_, distinct_key_, &b, &traits);
  } else if (id_value_.ok()) {
    ShapeOfIdRead(id_value_, &b, &traits);
  } else {
    return std::nullopt;
  }
  return std::move(b).Build();
}

std::unique_ptr<QueryRecorder> QueryRecorder::ForFind(const Engine& engine, const std::string& db,
                                                      const std::string& coll,
                                                      std::string_view command,
                                                      const CanonicalQuery& cq,
                                                      std::string_view distinct_key) {
  bool top = false;
  std::unique_ptr<QueryRecorder> r = Begin(engine, db, coll, std::string(command), &top);
  if (!top) return r;
  const DocumentView projection =
      cq.projection.has_value() ? cq.projection->spec.view() : DocumentView();
  r->cq_ = &cq;
  r->distinct_key_ = std::string(distinct_key);
  r->Prepare([&](BsonBuilder* out, ShapeTraits* traits) {
    return ShapeOfQuery(cq, distinct_key, out, traits);
  }, /*build_now=*/false);
  if (r->telemetry_->profiler().Active(db)) {
    BsonBuilder b;
    if (command == "find") {
      b.AppendString("find", coll).AppendDocument("filter", cq.filter);
      if (!cq.sort_spec.empty()) b.AppendDocument("sort", cq.sort_spec);
      if (!projection.empty()) b.AppendDocument("projection", projection);
      if (cq.skip != 0) b.AppendInt64("skip", cq.skip);
      if (cq.limit != 0) b.AppendInt64("limit", cq.limit);
    } else if (command == "count") {
      b.AppendString("count", coll).AppendDocument("query", cq.filter);
      if (cq.skip != 0) b.AppendInt64("skip", cq.skip);
      if (cq.limit != 0) b.AppendInt64("limit", cq.limit);
    } else {
      b.AppendString("distinct", coll).AppendString("key", distinct_key);
      b.AppendDocument("query", cq.filter);
    }
    AppendComment(cq.comment, &b);
    b.AppendString("$db", db);
    r->command_ = std::move(b).Build();
  }
  return r;
}

bool QueryRecorder::Records(const Engine& engine) { return engine.options().collect_statistics; }

void QueryRecorder::RecordIdRead(const Engine& engine, const std::string& db,
                                 const std::string& coll, const Element& id, int64_t nanos,
                                 bool found) {
  if (!engine.options().collect_statistics || NotRecorded(db, coll)) return;
  if (NestedReads::active()) {
    // A read of a recorded operation ($lookup's by _id): its figures.
    const std::shared_ptr<NestedFigures>& parent = NestedReads::into();
    if (parent == nullptr) return;
    QueryRecorder child(parent);
    child.Finish(nanos, 1, found ? 1 : 0, found ? 1 : 0, nullptr, "IDHACK");
    return;
  }
  QueryRecorder r(engine, db, coll, "find");
  r.caller_holds_use_ = true;
  r.id_value_ = id;
  // The shape of {_id: v} depends on v's type alone (a document's on its
  // keys too): its hash is computed once per type, not per read.
  static std::array<std::atomic<uint64_t>, 256> hash_of_type{};
  std::atomic<uint64_t>& cached = hash_of_type[static_cast<uint8_t>(id.type())];
  r.Prepare([&](BsonBuilder* out, ShapeTraits* traits) {
    // Arrays, regexes and documents shape by their contents too: not cached.
    const bool cacheable = id.type() != BsonType::kDocument && id.type() != BsonType::kArray &&
                           id.type() != BsonType::kRegex;
    uint64_t h = cacheable ? cached.load(std::memory_order_relaxed) : 0;
    if (h != 0 && out == nullptr) {
      traits->id_lookup = id.type() != BsonType::kRegex;
      return h;
    }
    h = ShapeOfIdRead(id, out, traits);
    if (cacheable) cached.store(h, std::memory_order_relaxed);
    return h;
  }, /*build_now=*/false);
  if (r.telemetry_->profiler().Active(db)) {
    BsonBuilder b;
    b.AppendString("find", coll).AppendDocument("filter", IdFilter(id)).AppendInt64("limit", 1);
    b.AppendString("$db", db);
    r.command_ = std::move(b).Build();
  }
  // As MongoDB's IDHACK: one key, and the document when there is one.
  r.Finish(nanos, 1, found ? 1 : 0, found ? 1 : 0, nullptr, "IDHACK");
}

std::unique_ptr<QueryRecorder> QueryRecorder::ForPipeline(const Engine& engine,
                                                          const std::string& db,
                                                          const std::string& coll,
                                                          DocumentView pipeline,
                                                          const std::optional<Value>& comment) {
  // $queryStats, $indexStats and $collStats read what the engine keeps
  // about itself, not documents: not queries of the application's (as
  // MongoDB leaves them out of its query statistics).
  auto first = pipeline.begin();
  if (first != pipeline.end() && (*first).IsDocument() && !(*first).Document().empty()) {
    const std::string_view stage = (*(*first).Document().begin()).key();
    if (stage == "$queryStats" || stage == "$indexStats" || stage == "$collStats") return nullptr;
  }
  bool top = false;
  std::unique_ptr<QueryRecorder> r = Begin(engine, db, coll, "aggregate", &top);
  if (!top) return r;
  r->Prepare([&](BsonBuilder* out, ShapeTraits* traits) {
    return ShapePipeline(pipeline, out, traits);
  }, /*build_now=*/true);
  // The collections its $lookup and $graphLookup stages join.
  for (Element stage : pipeline) {
    if (!stage.IsDocument() || stage.Document().empty()) continue;
    const Element spec = *stage.Document().begin();
    if ((spec.key() == "$lookup" || spec.key() == "$graphLookup") && spec.IsDocument()) {
      const Element from = spec.Document().Get("from");
      // A name no collection can have (a NUL byte...) is the pipeline's
      // error, not a partner: it must never become a key of the entry.
      if (from.type() == BsonType::kString && ValidateCollectionName(db, from.String()).ok()) {
        r->lookups_.emplace_back(from.String());
      }
    }
  }
  if (r->telemetry_->profiler().Active(db)) {
    BsonBuilder b;
    b.AppendString("aggregate", coll).AppendArray("pipeline", pipeline);
    AppendComment(comment, &b);
    b.AppendString("$db", db);
    r->command_ = std::move(b).Build();
  }
  return r;
}

void QueryRecorder::Finish(int64_t nanos, int64_t keys_examined, int64_t docs_examined,
                           int64_t returned, const PlanStage* root, std::string plan_summary) {
  QueryRun run;
  run.micros = nanos / 1000;
  run.keys_examined = keys_examined;
  run.docs_examined = docs_examined;
  run.returned = returned_override_.value_or(returned);
  // The plan's summary text only when something reads it (see Record).
  auto summarize = [&]() -> std::string {
    if (root != nullptr) {
      bool collscan = false;
      return PlanSummary(*root, &collscan);
    }
    if (!plan_summary.empty()) return plan_summary;
    return nested_ != nullptr ? nested_->plan_summary : std::string();
  };
  if (root != nullptr) run.collscan = PlanScansCollection(*root);
  if (parent_ != nullptr) {
    // A read of a recorded operation: its figures are the operation's.
    parent_->keys_examined += run.keys_examined;
    parent_->docs_examined += run.docs_examined;
    parent_->collscan = parent_->collscan || run.collscan;
    if (first_read_ || parent_->plan_summary.empty()) parent_->plan_summary = summarize();
    return;
  }
  if (nested_ != nullptr) {
    run.keys_examined += nested_->keys_examined;
    run.docs_examined += nested_->docs_examined;
    run.collscan = run.collscan || nested_->collscan;
  }
  if (root == nullptr) run.plan_summary = summarize();  // given, or the nested reads'
  telemetry_->query_stats().Record(
      id_, traits_, [this] { return BuildShape(); }, run, summarize, lookups_);

  Profiler& profiler = telemetry_->profiler();
  const int64_t slow_micros = profiler.slowms() * 1000;
  const bool slow = run.micros >= slow_micros;
  if ((slow || command_) && run.plan_summary.empty()) run.plan_summary = summarize();
  // A cursor may end after its client closed: no log to write to then.
  // (findById records under its own use of the engine: no second one.)
  auto use = slow && !caller_holds_use_ ? std::optional<Engine::Use>(engine_->Enter()) : std::nullopt;
  if (slow && (caller_holds_use_ || (use && use->status().ok()))) {
    // As MongoDB logs slow operations at every level: here without the
    // values (the shape's hash names the query; $queryStats shows it).
    engine_->LogWarning("Slow query: " + id_.db + "." + id_.coll + " " + id_.command +
                        " planSummary: " + run.plan_summary +
                        " keysExamined: " + std::to_string(run.keys_examined) +
                        " docsExamined: " + std::to_string(run.docs_examined) +
                        " nreturned: " + std::to_string(run.returned) +
                        " durationMillis: " + std::to_string(run.micros / 1000) +
                        " queryShapeHash: " + QueryShapeHashText(id_.hash));
  }
  if (command_ && profiler.Profiles(id_.db, run.micros)) {
    BsonBuilder b;
    AppendProfileHead(id_.command == "find" ? "query" : "command", id_.db, id_.coll, *command_,
                      run.keys_examined, run.docs_examined, &b);
    if (id_.command != "count") b.AppendInt64("nreturned", run.returned);
    AppendProfileTail(run.micros, run.plan_summary, &b);
    profiler.Add(id_.db, std::move(b).Build());
  }
}

QueryRecorder* QueryRecorder::Attach(std::unique_ptr<QueryRecorder> recorder,
                                     PlanExecutor* exec, int64_t used_nanos) {
  if (recorder == nullptr) return nullptr;
  std::shared_ptr<QueryRecorder> r(std::move(recorder));
  exec->OnDone(
      [r](const PlanExecutor& e, int64_t nanos) {
        const PlanStage* root = e.root();
        if (root == nullptr) return;
        r->Finish(nanos, TotalKeysExamined(*root), TotalDocsExamined(*root), e.n_returned(), root);
      },
      used_nanos);
  return r.get();
}

void RecordWrite(const Engine& engine, const std::string& db, const std::string& coll,
                 std::string_view kind, const CanonicalQuery& cq, const PlanStage& root,
                 int64_t matched, int64_t written, int64_t nanos) {
  Profiler& profiler = StatsOf(engine).profiler();
  const int64_t micros = nanos / 1000;
  const bool slow = micros >= profiler.slowms() * 1000;
  const bool profiled = profiler.Profiles(db, micros);
  if (!slow && !profiled) return;
  bool collscan = false;
  const std::string plan = PlanSummary(root, &collscan);
  const int64_t keys = TotalKeysExamined(root), docs = TotalDocsExamined(root);
  if (slow) {
    engine.LogWarning("Slow query: " + db + "." + coll + " " + std::string(kind) +
                      " planSummary: " + plan + " keysExamined: " + std::to_string(keys) +
                      " docsExamined: " + std::to_string(docs) +
                      " nMatched: " + std::to_string(matched) +
                      " durationMillis: " + std::to_string(micros / 1000));
  }
  if (!profiled) return;
  BsonBuilder command;
  command.AppendDocument("q", cq.filter);
  if (kind == "update") {
    command.AppendBool("multi", cq.limit != 1);
  } else {
    command.AppendInt32("limit", cq.limit == 1 ? 1 : 0);  // as the delete command's
  }
  BsonBuilder b;
  AppendProfileHead(kind, db, coll, std::move(command).Build(), keys, docs, &b);
  if (kind == "update") {
    b.AppendInt64("nMatched", matched).AppendInt64("nModified", written);
  } else {
    b.AppendInt64("ndeleted", written);
  }
  AppendProfileTail(micros, plan, &b);
  profiler.Add(db, std::move(b).Build());
}

namespace {

class RecordedCursorImpl : public CursorImpl {
 public:
  RecordedCursorImpl(std::shared_ptr<const Engine> engine, std::unique_ptr<CursorImpl> inner,
                     std::unique_ptr<QueryRecorder> recorder, int64_t used_nanos)
      : engine_(std::move(engine)),
        inner_(std::move(inner)),
        recorder_(std::move(recorder)),
        nanos_(used_nanos) {}
  ~RecordedCursorImpl() override {
    // The pipeline's finds end first: their figures are its own.
    if (recorder_ == nullptr) return;  // UnrecordedCursor's
    const int64_t start = MonotonicNanos();
    inner_.reset();
    recorder_->Finish(nanos_ + MonotonicNanos() - start, 0, 0, returned_, nullptr);
  }
  bool Next() override {
    NestedReads nested(recorder_ != nullptr ? recorder_->nested() : nullptr);
    const int64_t start = MonotonicNanos();
    const bool advanced = inner_->Next();
    nanos_ += MonotonicNanos() - start;
    if (advanced) ++returned_;
    return advanced;
  }
  DocumentView document() const override { return inner_->document(); }
  Status status() const override { return inner_->status(); }
  Examined examined() const override { return inner_->examined(); }

 private:
  // Declared first, destroyed last: the cursor may outlive its client,
  // and the pipeline may hold the engine's last other reference, while
  // Finish still records into the engine's catalog.
  std::shared_ptr<const Engine> engine_;
  std::unique_ptr<CursorImpl> inner_;  // null only while being destroyed
  std::unique_ptr<QueryRecorder> recorder_;  // null: reads not recorded at all
  int64_t nanos_;
  int64_t returned_ = 0;
};

}  // namespace

std::unique_ptr<CursorImpl> RecordedCursor(std::shared_ptr<const Engine> engine,
                                           std::unique_ptr<CursorImpl> cursor,
                                           std::unique_ptr<QueryRecorder> recorder,
                                           int64_t used_nanos) {
  if (recorder == nullptr) return cursor;
  return std::make_unique<RecordedCursorImpl>(std::move(engine), std::move(cursor),
                                              std::move(recorder), used_nanos);
}

std::unique_ptr<CursorImpl> UnrecordedCursor(std::unique_ptr<CursorImpl> cursor) {
  return std::make_unique<RecordedCursorImpl>(nullptr, std::move(cursor), nullptr, 0);
}

Status FlushProfile(const std::shared_ptr<Engine>& engine, const std::string& db) {
  std::vector<Document> entries = StatsOf(*engine).profiler().Take(db);
  if (entries.empty()) return Status::OK();
  // The profile is written outside any transaction the thread's operation
  // runs in: system.profile is never a transaction's creation.
  CatalogTransactionScope outside(nullptr);
  Database database = ClientAccess::DatabaseOf(engine, db);
  Collection profile = database.GetCollection(kProfileCollection);
  if (CatalogOf(*engine).Find(db, kProfileCollection) == nullptr) {
    CreateCollectionOptions options;
    options.capped = true;
    options.size = kProfileBytes;
    Status created = database.CreateCollection(kProfileCollection, options);
    if (!created.ok() && created.code() != ErrorCode::kNamespaceExists) return created;
  }
  return profile.InsertMany(entries).status();
}

Status FlushAllProfiles(const std::shared_ptr<Engine>& engine) {
  for (const std::string& db : StatsOf(*engine).profiler().PendingDatabases()) {
    ROCKDOC_RETURN_IF_ERROR(FlushProfile(engine, db));
  }
  return Status::OK();
}

}  // namespace rockdoc::internal

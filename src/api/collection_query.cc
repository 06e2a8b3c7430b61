// Collection reads: find, findOne, countDocuments, distinct and explain,
// all planned by planner/query_planner.h.
#include <chrono>
#include <set>

#include "api/client_internal.h"
#include "api/collection_internal.h"
#include "api/query_recorder.h"
#include "pipeline/pipeline.h"
#include "query/field_path.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "stats/telemetry.h"
#include "storage/spill.h"
#include "store/write_ops.h"

namespace rockdoc {

namespace internal {

StatusOr<std::shared_ptr<CollectionMeta>> LookupForRead(const Engine& engine, const std::string& db,
                                                        const std::string& name) {
  ROCKDOC_RETURN_IF_ERROR(ValidateDatabaseName(db));
  ROCKDOC_RETURN_IF_ERROR(ValidateCollectionName(db, name));
  return CatalogOf(engine).Find(db, name);
}

Status CheckUpdateResultSize(const Document& doc, const std::vector<std::string>* changed_paths) {
  if (doc.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
    return Status(
        ErrorCode::kUpdateResultTooLarge,
        "Resulting document after update is larger than " + std::to_string(kMaxBsonObjectSize));
  }
  return changed_paths != nullptr ? CheckStorageDepthOfPaths(doc, *changed_paths)
                                  : CheckStorageDepth(doc);
}

namespace {
// What a top stage sees of a missing collection (which plans to EOF).
const CollectionMeta& NoCollection() {
  static const CollectionMeta kNoCollection;
  return kNoCollection;
}
}  // namespace

StatusOr<std::unique_ptr<PlanExecutor>> OpenQuery(const std::shared_ptr<const Engine>& engine,
                                                  const CollectionMeta* meta,
                                                  std::shared_ptr<const CanonicalQuery> cq,
                                                  int64_t max_time_ms, const OpContext& op,
                                                  const TopStage& top) {
  ROCKDOC_RETURN_IF_ERROR(CheckMaxTimeMS(max_time_ms));
  const int64_t start = max_time_ms > 0 ? MonotonicNanos() : 0;
  // The cursor's own snapshot, unless it reads a transaction's or a
  // snapshot session's (which outlive it, or invalidate it).
  std::unique_ptr<SnapshotHolder> snapshot;
  if (!op.in_transaction() && op.snapshot == nullptr) {
    snapshot = std::make_unique<SnapshotHolder>(engine);
  }
  const ReadView view = op.View(engine.get(), snapshot.get());
  ROCKDOC_ASSIGN_OR_RETURN(PreparedPlan plan, PlanQuery(*cq, meta, view));
  if (top) plan.root = top(std::move(plan.root), meta != nullptr ? *meta : NoCollection(), view);
  auto exec = std::make_unique<PlanExecutor>(engine, std::move(snapshot), std::move(plan.root));
  if (op.session != nullptr && (op.in_transaction() || op.snapshot != nullptr)) {
    op.session->AddExecutor(exec.get());
    exec->SetRegistry(op.session->shared_from_this());
  }
  // Planning (the trial race) counts towards the limit.
  if (max_time_ms > 0) exec->SetTimeLimit(max_time_ms, MonotonicNanos() - start);
  exec->KeepAlive(std::move(cq));
  return exec;
}

StatusOr<Document> ExplainQuery(const std::shared_ptr<const Engine>& engine,
                                const CollectionMeta* meta, const std::string& ns,
                                const CanonicalQuery& cq, ExplainVerbosity verbosity,
                                const TopStage& top) {
  SnapshotHolder snapshot(engine);
  auto start = std::chrono::steady_clock::now();
  ROCKDOC_ASSIGN_OR_RETURN(PreparedPlan plan,
                           PlanQuery(cq, meta, snapshot.context(), PlanCacheUse::kBypass));
  if (top) {
    plan.root =
        top(std::move(plan.root), meta != nullptr ? *meta : NoCollection(), snapshot.context());
  }
  plan.root->EnableTiming();
  int64_t n = 0;
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    while (true) {
      WorkingMember* out = nullptr;
      StageState st = plan.root->Work(&out);
      if (st == StageState::kAdvanced) ++n;
      if (st == StageState::kEof) break;
      if (st == StageState::kFailure) return plan.root->status();
    }
  }
  int64_t millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  return BuildExplain(ns, cq, plan, verbosity, n, millis);
}

StatusOr<WriteCounts> RunWritePlan(const std::shared_ptr<const Engine>& engine,
                                   const CollectionMeta& meta, const CanonicalQuery& cq,
                                   const Deadline& deadline, const OpContext& op,
                                   WriteStage::Kind kind, const TargetWriter& write) {
  std::optional<SnapshotHolder> snapshot;
  if (!op.in_transaction()) snapshot.emplace(engine);
  // The targets' cached versions serve the plan; what it reads from RocksDB
  // is not installed, as the write replaces it.
  const ReadView view =
      op.in_transaction() ? ReadView(op.txn) : snapshot->context().WithoutCacheFill();
  ROCKDOC_ASSIGN_OR_RETURN(PreparedPlan plan, PlanQuery(cq, &meta, view));
  WriteStage stage(kind, std::move(plan.root), *engine, meta, deadline, view, write,
                   /*dry_run=*/false, op.txn);
  // The slow query log and the profiler: two clock reads per statement.
  const bool watched = engine->options().collect_statistics;
  const int64_t start = watched ? MonotonicNanos() : 0;
  DeadlineChecker checker(&deadline);
  while (true) {
    ROCKDOC_RETURN_IF_ERROR(checker.Tick());
    WorkingMember* out = nullptr;
    StageState st = stage.Work(&out);
    if (st == StageState::kEof) break;
    if (st == StageState::kFailure) return stage.status();
  }
  if (watched) {
    RecordWrite(*engine, meta.db, meta.name, kind == WriteStage::Kind::kUpdate ? "update" : "remove",
                cq, stage, stage.counts().matched, stage.counts().written,
                MonotonicNanos() - start);
  }
  return stage.counts();
}

StatusOr<Document> ExplainWritePlan(const std::shared_ptr<const Engine>& engine,
                                    const CollectionMeta* meta, const std::string& ns,
                                    const CanonicalQuery& cq, ExplainVerbosity verbosity,
                                    WriteStage::Kind kind, const TargetWriter& write) {
  static const Deadline kNoDeadline;
  return ExplainQuery(engine, meta, ns, cq, verbosity,
                      [&](std::unique_ptr<PlanStage> plan, const CollectionMeta& m,
                          const ReadView& view) -> std::unique_ptr<PlanStage> {
                        return std::make_unique<WriteStage>(kind, std::move(plan), *engine, m,
                                                            kNoDeadline, view, write,
                                                            /*dry_run=*/true, nullptr);
                      });
}

namespace {

// A tailable cursor (FindOptions::tailable) over a capped collection: one
// plan executor per scan. When a scan ends, the next Next() opens another at
// a new snapshot, from the order entry after the last one the previous scan
// examined (CanonicalQuery::resume_after_seq), which fails with
// CappedPositionLost when the roll-over has removed that entry.
class TailableCursorImpl : public CursorImpl {
 public:
  TailableCursorImpl(std::shared_ptr<const Engine> engine, std::shared_ptr<CollectionMeta> meta,
                     std::shared_ptr<CanonicalQuery> cq, std::unique_ptr<PlanExecutor> first,
                     uint64_t writes_seen)
      : engine_(std::move(engine)),
        meta_(std::move(meta)),
        cq_(std::move(cq)),
        limit_(cq_->limit),
        exec_(std::move(first)),
        writes_seen_(writes_seen) {}

  bool Next() override {
    if (!status_.ok()) return false;
    if (exec_ == nullptr) {
      if (limit_ > 0 && returned_ >= limit_) return false;
      status_ = Reopen();
      if (!status_.ok()) return false;
    }
    if (exec_->Next()) {
      ++returned_;
      return true;
    }
    status_ = exec_->status();
    if (status_.ok()) {
      last_seq_ = ScanOf(*exec_->root()).last_seq();
      exec_.reset();  // its snapshot goes; the next scan reads a new one
    }
    return false;
  }
  DocumentView document() const override {
    return exec_ != nullptr ? exec_->document() : DocumentView();
  }
  Status status() const override { return status_; }
  Examined examined() const override { return exec_ != nullptr ? exec_->examined() : Examined{}; }
  std::shared_ptr<CappedState> tailed() const override { return meta_->capped; }
  uint64_t writes_seen() const override { return writes_seen_; }

 private:
  // The COLLSCAN at the bottom of a tailable plan (PlanQuery makes one).
  static const CollectionScanStage& ScanOf(const PlanStage& root) {
    const PlanStage* s = &root;
    while (!s->children().empty()) s = s->children()[0].get();
    return static_cast<const CollectionScanStage&>(*s);
  }

  Status Reopen() {
    auto use = engine_->Enter();
    ROCKDOC_RETURN_IF_ERROR(use.status());
    if (meta_->dropped.load()) {
      return Status(ErrorCode::kQueryPlanKilled, "collection dropped: " + meta_->full_name());
    }
    // Taken before the snapshot: a write the scan misses changes it.
    writes_seen_ = meta_->capped->writes();
    cq_->skip = 0;  // skipped by the first scan
    cq_->limit = limit_ > 0 ? limit_ - returned_ : 0;
    cq_->resume_after_seq = last_seq_;
    ROCKDOC_ASSIGN_OR_RETURN(exec_, OpenQuery(engine_, meta_.get(), cq_, 0, OpContext{}));
    return Status::OK();
  }

  std::shared_ptr<const Engine> engine_;
  std::shared_ptr<CollectionMeta> meta_;
  std::shared_ptr<CanonicalQuery> cq_;  // re-planned per scan; the trees point into it
  const int64_t limit_;
  std::unique_ptr<PlanExecutor> exec_;  // null between scans
  uint64_t writes_seen_;
  uint64_t last_seq_ = 0;
  int64_t returned_ = 0;
  Status status_;
};

// MongoDB's refusal of a tailable find on a collection that is not capped.
Status NotCappedError(const std::string& ns, DocumentView filter) {
  return BadValue("error processing query: ns=" + ns + " filter=" +
                  ToJson(filter, JsonFormat::kShell) +
                  " tailable cursor requested on non capped collection");
}

}  // namespace

}  // namespace internal

using internal::CollectionMeta;
using internal::OpContext;
using internal::OpKind;

// Each read first asks whether it reads a view (free when there is none);
// a view's read is an aggregate of the collection under it (api/views.cc).
StatusOr<Cursor> Collection::Find(DocumentView filter, const FindOptions& options) const {
  ROCKDOC_RETURN_IF_ERROR(internal::FlushProfileBeforeRead(engine_, db_name_, name_));
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<ViewRead> view, ResolveView());
  if (view) return FindOnView(*view, filter, options);
  return internal::RunOperation<StatusOr<Cursor>>(
      session_, OpKind::kRead, "find", [&](const OpContext& op) -> StatusOr<Cursor> {
        auto use = engine_->Enter();
        ROCKDOC_RETURN_IF_ERROR(use.status());
        ROCKDOC_ASSIGN_OR_RETURN(auto cq, internal::MakeCanonicalQuery(filter, options));
        ROCKDOC_ASSIGN_OR_RETURN(auto meta, internal::LookupForRead(*engine_, db_name_, name_));
        internal::ApplyDefaultCollation(cq.get(), meta.get());
        if (options.tailable && meta != nullptr) {
          if (!meta->is_capped()) return internal::NotCappedError(full_name(), filter);
          if (op.in_transaction() || op.snapshot != nullptr) {
            // Each of its scans reads a new snapshot.
            return Status(ErrorCode::kInvalidOptions,
                          "a tailable cursor cannot read a transaction's or a snapshot "
                          "session's snapshot");
          }
          const uint64_t writes = meta->capped->writes();  // before the snapshot
          auto shared = std::shared_ptr<internal::CanonicalQuery>(std::move(cq));
          ROCKDOC_ASSIGN_OR_RETURN(auto exec, internal::OpenQuery(engine_, meta.get(), shared,
                                                                  options.max_time_ms, op));
          return Cursor(std::make_unique<internal::TailableCursorImpl>(
              engine_, meta, std::move(shared), std::move(exec), writes));
        }
        auto recorder = internal::QueryRecorder::ForFind(*engine_, db_name_, name_, "find", *cq);
        const int64_t start = recorder != nullptr ? internal::MonotonicNanos() : 0;
        ROCKDOC_ASSIGN_OR_RETURN(auto exec, internal::OpenQuery(engine_, meta.get(), std::move(cq),
                                                                options.max_time_ms, op));
        if (recorder != nullptr) {
          internal::QueryRecorder::Attach(std::move(recorder), exec.get(),
                                          internal::MonotonicNanos() - start);
        }
        return Cursor(std::move(exec));
      });
}

namespace {

// findOne({_id: v}) with no option that needs a plan: a point read, as
// MongoDB's IDHACK, without parsing a query, planning or opening a cursor
// (the planner's IDHACK plan gives the same document; this skips the work
// around it). v is a value the planner also reads by its key: not an
// operator object, array, regex, null, undefined, MinKey or MaxKey.
bool IsIdLookup(DocumentView filter, const FindOptions& options, Element* id) {
  if (!options.sort.empty() || !options.projection.empty() || options.skip != 0 ||
      !options.hint.empty() || !options.hint_name.empty() || options.max_time_ms != 0 ||
      !options.min.empty() || !options.max.empty() || options.return_key ||
      options.show_record_id || options.tailable) {
    return false;
  }
  auto it = filter.begin();
  if (it == filter.end()) return false;
  *id = *it;
  if (id->key() != "_id" || ++it != filter.end()) return false;
  switch (id->type()) {
    case BsonType::kArray:
    case BsonType::kRegex:
    case BsonType::kNull:
    case BsonType::kUndefined:
    case BsonType::kMinKey:
    case BsonType::kMaxKey:
      return false;
    case BsonType::kDocument:
      for (const Element& e : id->Document()) {
        if (!e.key().empty() && e.key()[0] == '$') return false;
      }
      return true;
    default:
      return true;
  }
}

}  // namespace

StatusOr<std::optional<Document>> Collection::FindOne(DocumentView filter,
                                                      const FindOptions& options) const {
  Element id;
  if (IsIdLookup(filter, options, &id)) return FindById(id);
  FindOptions one = options;
  one.limit = 1;
  ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, Find(filter, one));
  if (cursor.Next()) {
    return std::optional<Document>(
        Document::AdoptValidated(std::string(cursor.document().bytes())));
  }
  ROCKDOC_RETURN_IF_ERROR(cursor.status());
  return std::optional<Document>();
}

namespace {

// countDocuments as a find whose results are counted, never read: the
// planner may answer it from index keys alone (no FETCH), and with
// COUNT_SCAN when the index bounds are exactly the filter.
StatusOr<std::unique_ptr<internal::CanonicalQuery>> CountQuery(DocumentView filter,
                                                               const CountOptions& options) {
  FindOptions fo;
  fo.skip = options.skip;
  fo.limit = options.limit;
  fo.hint = options.hint;
  fo.hint_name = options.hint_name;
  fo.comment = options.comment;
  fo.collation = options.collation;
  ROCKDOC_ASSIGN_OR_RETURN(auto cq, internal::MakeCanonicalQuery(filter, fo));
  cq->count_only = true;
  return cq;
}

}  // namespace

StatusOr<int64_t> Collection::CountDocuments(DocumentView filter,
                                             const CountOptions& options) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckMaxTimeMS(options.max_time_ms));
  ROCKDOC_RETURN_IF_ERROR(internal::FlushProfileBeforeRead(engine_, db_name_, name_));
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<ViewRead> view, ResolveView());
  if (view) return CountOnView(*view, filter, options);
  // countDocuments is an aggregation in MongoDB, allowed in a transaction.
  return internal::RunOperation<StatusOr<int64_t>>(
      session_, OpKind::kRead, "aggregate", [&](const OpContext& op) -> StatusOr<int64_t> {
        if (filter.empty() && options.skip == 0 && options.limit == 0 && options.hint.empty() &&
            options.hint_name.empty() && !op.in_transaction() && op.snapshot == nullptr) {
          // Every document: the collection's count is exact (kept in each
          // write's transaction), no scan needed. (A transaction or a
          // snapshot session counts what its snapshot holds, below.)
          return EstimatedDocumentCount();
        }
        std::unique_ptr<internal::PlanExecutor> exec;
        internal::QueryRecorder* recorder = nullptr;
        const internal::CountStage* count = nullptr;
        // The same tree explain shows: COUNT over the plan.
        auto top = [&count](std::unique_ptr<internal::PlanStage> plan, const CollectionMeta&,
                            const internal::ReadView&) -> std::unique_ptr<internal::PlanStage> {
          auto stage = std::make_unique<internal::CountStage>(std::move(plan));
          count = stage.get();
          return stage;
        };
        {
          // As Find: planning under the engine's use, the cursor then on its own.
          auto use = engine_->Enter();
          ROCKDOC_RETURN_IF_ERROR(use.status());
          ROCKDOC_ASSIGN_OR_RETURN(auto cq, CountQuery(filter, options));
          ROCKDOC_ASSIGN_OR_RETURN(auto meta, internal::LookupForRead(*engine_, db_name_, name_));
          internal::ApplyDefaultCollation(cq.get(), meta.get());
          auto record = internal::QueryRecorder::ForFind(*engine_, db_name_, name_, "count", *cq);
          const int64_t start = record != nullptr ? internal::MonotonicNanos() : 0;
          ROCKDOC_ASSIGN_OR_RETURN(exec, internal::OpenQuery(engine_, meta.get(), std::move(cq),
                                                             options.max_time_ms, op, top));
          if (record != nullptr) {
            recorder = internal::QueryRecorder::Attach(std::move(record), exec.get(),
                                                       internal::MonotonicNanos() - start);
          }
        }
        // COUNT passes nothing up: it counts what its child produces.
        ROCKDOC_ASSIGN_OR_RETURN(int64_t passed, exec->CountRemaining());
        if (recorder != nullptr) recorder->set_returned(passed + count->counted());
        return passed + count->counted();
      });
}

StatusOr<Document> Collection::ExplainCount(DocumentView filter, const CountOptions& options,
                                            ExplainVerbosity verbosity) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "explain"));
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<ViewRead> view, ResolveView());
  if (view) return ExplainCountOnView(*view, filter, options, verbosity);
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_ASSIGN_OR_RETURN(auto cq, CountQuery(filter, options));
  ROCKDOC_ASSIGN_OR_RETURN(auto meta, internal::LookupForRead(*engine_, db_name_, name_));
  internal::ApplyDefaultCollation(cq.get(), meta.get());
  return internal::ExplainQuery(
      engine_, meta.get(), full_name(), *cq, verbosity,
      [](std::unique_ptr<internal::PlanStage> plan, const CollectionMeta&,
         const internal::ReadView&) -> std::unique_ptr<internal::PlanStage> {
        return std::make_unique<internal::CountStage>(std::move(plan));
      });
}

namespace {

// The values distinct lists for `path` in `doc`, from component `part`, as
// MongoDB's extractAllElementsAlongPath gives them: an array at the end of
// the path contributes its elements (an element that is itself an array
// counts whole: {a: [1, [1]]} gives 1 and [1]); an array in the middle is
// entered at a position when the next component is numeric, and otherwise
// through each of its documents and arrays; a missing field gives nothing.
template <typename Fn>
void DistinctValuesAlongPath(DocumentView doc, const FieldPath& path, size_t part, const Fn& fn) {
  Element e = doc.Get(path.part(part));
  if (!e.ok()) return;
  if (part + 1 == path.size()) {
    if (e.type() != BsonType::kArray) {
      fn(e);
      return;
    }
    for (Element element : e.Array()) fn(element);
    return;
  }
  if (e.type() == BsonType::kDocument) {
    DistinctValuesAlongPath(e.Document(), path, part + 1, fn);
  } else if (e.type() == BsonType::kArray) {
    if (path.part_is_index(part + 1)) {
      DistinctValuesAlongPath(e.Array(), path, part + 1, fn);
      return;
    }
    for (Element element : e.Array()) {
      if (element.type() == BsonType::kDocument) {
        DistinctValuesAlongPath(element.Document(), path, part + 1, fn);
      } else if (element.type() == BsonType::kArray) {
        DistinctValuesAlongPath(element.Array(), path, part + 1, fn);
      }
    }
  }
}

}  // namespace

StatusOr<std::vector<Value>> Collection::Distinct(std::string_view field,
                                                  DocumentView filter) const {
  return Distinct(field, filter, DistinctOptions());
}

namespace {

// The find a distinct runs: its key checked, its options as a find's.
StatusOr<FindOptions> DistinctFind(std::string_view field, const DistinctOptions& options) {
  if (field.empty()) return BadValue("distinct: the key must not be empty");
  if (field[0] == '$') return BadValue("distinct: the key must not start with '$'");
  FindOptions fo;
  fo.max_time_ms = options.max_time_ms;
  fo.comment = options.comment;
  fo.collation = options.collation;
  return fo;
}

}  // namespace

StatusOr<std::vector<Value>> Collection::Distinct(std::string_view field, DocumentView filter,
                                                  const DistinctOptions& options) const {
  ROCKDOC_ASSIGN_OR_RETURN(FindOptions fo, DistinctFind(field, options));
  // Recorded as a distinct, its find as part of it.
  std::unique_ptr<internal::QueryRecorder> recorder;
  if (engine_->options().collect_statistics) {
    StatusOr<std::unique_ptr<internal::CanonicalQuery>> cq = internal::MakeCanonicalQuery(filter, fo);
    if (cq.ok()) {
      recorder = internal::QueryRecorder::ForFind(*engine_, db_name_, name_, "distinct", **cq, field);
      if (recorder != nullptr) recorder->Own(std::move(*cq));  // its shape is built at the end
    }
  }
  const int64_t start = recorder != nullptr ? internal::MonotonicNanos() : 0;
  // Ordered by MongoDB's value comparison under the collation; equal
  // values (1 and 1.0; "a" and "A" at strength 2) once, the first met.
  ROCKDOC_ASSIGN_OR_RETURN(auto meta, internal::LookupForRead(*engine_, db_name_, name_));
  ROCKDOC_ASSIGN_OR_RETURN(CollatorPtr collator,
                           internal::OperationCollator(options.collation, meta.get()));
  auto less = [c = collator.get()](const Value& a, const Value& b) {
    return CompareValuesWith(a.element(), b.element(), c) < 0;
  };
  std::set<Value, decltype(less)> values(less);
  {
    // Its find is part of it: the cursor ends (adding what it examined)
    // before the distinct is recorded.
    internal::NestedReads nested(recorder != nullptr ? recorder->nested() : nullptr);
    ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, Find(filter, fo));
    FieldPath path{std::string(field)};
    while (cursor.Next()) {
      DistinctValuesAlongPath(cursor.document(), path, 0,
                              [&](const Element& v) { values.insert(Value::FromElement(v)); });
    }
    ROCKDOC_RETURN_IF_ERROR(cursor.status());
  }
  if (recorder != nullptr) {
    recorder->Finish(internal::MonotonicNanos() - start, 0, 0, static_cast<int64_t>(values.size()),
                     nullptr);
  }
  return std::vector<Value>(values.begin(), values.end());
}

namespace {

// `writes`: $out and $merge may write (not in explain, which runs none).
StatusOr<internal::PipelineOptions> ToPipelineOptions(
    const AggregateOptions& options, const std::string& db,
    const std::shared_ptr<internal::Engine>& engine,
    const std::shared_ptr<internal::SessionState>& session, bool writes) {
  internal::PipelineOptions po;
  po.database = db;
  {
    if (writes) po.open_target = internal::MakeOpenTarget(engine, session);
    Database database = internal::ClientAccess::DatabaseOf(engine, db, session);
    po.collection_stats = [database](std::string_view coll) { return database.GetCollection(coll).Stats(); };
    po.index_stats = [database](std::string_view coll) { return database.GetCollection(coll).IndexStats(); };
    po.query_stats = [engine, db](std::string_view coll) -> StatusOr<std::vector<Document>> {
      // Collectionless (in admin): every database's.
      if (coll.empty()) return StatsOf(*engine).query_stats().Entries("", "");
      return StatsOf(*engine).query_stats().Entries(db, coll);
    };
    po.current_op = [engine](const internal::CurrentOpOptions& o) {
      return StatsOf(*engine).activity().CurrentOps(o);
    };
    // The handle of the last collection read, kept: a $lookup reads one.
    po.find_by_id = [database, last = std::make_shared<std::optional<Collection>>()](
                        std::string_view coll, const Element& id) {
      if (!*last || (*last)->name() != coll) *last = database.GetCollection(coll);
      return (*last)->FindById(id);
    };
    po.vector_search = [engine, session, db](std::string_view coll,
                                             const internal::VectorSearchRequest& request) {
      return internal::RunVectorSearch(engine, session, db, std::string(coll), request);
    };
    po.list_search_indexes = [database](std::string_view coll,
                                        const std::optional<std::string>& name) {
      return database.GetCollection(coll).ListSearchIndexes(name);
    };
    po.has_index_on = [database](std::string_view coll, std::string_view field) {
      if (field == "_id") return true;
      StatusOr<std::vector<Document>> indexes = database.GetCollection(coll).ListIndexes();
      if (!indexes.ok()) return false;
      for (const Document& spec : *indexes) {
        const Element key = spec.Get("key");
        if (key.type() == BsonType::kDocument && !key.Document().empty() &&
            (*key.Document().begin()).key() == field && !spec.Get("partialFilterExpression").ok()) {
          return true;
        }
      }
      return false;
    };
  }
  po.max_time_ms = options.max_time_ms;
  if (options.max_blocking_stage_bytes < 1) {
    return Status(ErrorCode::kBadValue, "max_blocking_stage_bytes must be at least 1");
  }
  po.memory_limit = options.max_blocking_stage_bytes;
  po.allow_disk_use = options.allow_disk_use;
  po.new_spill_run = [engine] { return internal::NewSpillRun(*engine); };
  if (!options.hint.empty()) po.hint = options.hint;
  if (!options.hint_name.empty()) po.hint_name = options.hint_name;
  if (!options.let.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(po.variables, BindLetVariables(options.let.view()));
  }
  return po;
}

}  // namespace

namespace {

// Whether a pipeline compares strings only in its leading $match and $sort
// (the pipeline's find, which takes the collation): AggregateOptions says
// which stages may follow. NotImplemented names the first stage that may
// compare strings.
Status CheckCollatedPipeline(DocumentView pipeline) {
  bool leading = true;
  for (Element stage : pipeline) {
    if (stage.type() != BsonType::kDocument || stage.Document().CountFields() != 1) {
      return Status::OK();  // the pipeline's parser reports it
    }
    const Element spec = *stage.Document().begin();
    const std::string_view name = spec.key();
    if ((name == "$match" || name == "$sort") && leading) continue;
    leading = false;
    bool safe = name == "$skip" || name == "$limit" || name == "$count";
    if ((name == "$project" || name == "$unset") && spec.type() != BsonType::kDocument) {
      safe = name == "$unset";
    } else if (name == "$project") {
      safe = true;
      for (Element f : spec.Document()) safe = safe && (f.IsNumber() || f.type() == BsonType::kBool);
    } else if (name == "$group" && spec.type() == BsonType::kDocument) {
      // countDocuments' {_id: <constant>, n: {$sum: <number>}}.
      safe = true;
      for (Element f : spec.Document()) {
        if (f.key() == "_id") {
          safe = safe && !IsCollatable(f) && f.type() != BsonType::kDocument;
        } else {
          safe = safe && f.type() == BsonType::kDocument && f.Document().CountFields() == 1 &&
                 (*f.Document().begin()).key() == "$sum" && (*f.Document().begin()).IsNumber();
        }
      }
    }
    if (!safe) {
      return Status(ErrorCode::kNotImplemented,
                    "an aggregate with a collation is supported by rockdoc only when its string "
                    "comparisons are in its leading $match and $sort; stage " +
                        std::string(name) + " is not supported under a collation");
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<internal::FindFn> Collection::CollatedPipelineFind(
    DocumentView pipeline, const AggregateOptions& options) const {
  ROCKDOC_ASSIGN_OR_RETURN(auto meta, internal::LookupForRead(*engine_, db_name_, name_));
  ROCKDOC_ASSIGN_OR_RETURN(CollatorPtr collator,
                           internal::OperationCollator(options.collation, meta.get()));
  if (collator == nullptr) return PipelineFind();
  ROCKDOC_RETURN_IF_ERROR(CheckCollatedPipeline(pipeline));
  return internal::FindFn([inner = PipelineFind(), spec = collator->spec()](
                              std::string_view collection, DocumentView filter,
                              const FindOptions& fo) {
    FindOptions collated = fo;
    collated.collation = spec;
    return inner(collection, filter, collated);
  });
}

internal::FindFn Collection::PipelineFind() const {
  // The pipeline's finds: this collection's, and $lookup's and
  // $unionWith's of its siblings, through the same session.
  return [self = *this](std::string_view collection, DocumentView filter, const FindOptions& fo)
             -> StatusOr<std::unique_ptr<internal::CursorImpl>> {
    Collection c(self.engine_, self.db_name_, std::string(collection), self.session_);
    ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, c.Find(filter, fo));
    return std::move(cursor.impl_);
  };
}

StatusOr<Cursor> Collection::Aggregate(DocumentView pipeline,
                                       const AggregateOptions& options) const {
  ROCKDOC_RETURN_IF_ERROR(internal::FlushProfileBeforeRead(engine_, db_name_, name_));
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<ViewRead> view, ResolveView());
  if (view) {
    return view->first.Aggregate(
        internal::ConcatPipelines(view->second.view(), pipeline).view(), options);
  }
  ROCKDOC_ASSIGN_OR_RETURN(internal::PipelineOptions po,
                           ToPipelineOptions(options, db_name_, engine_, session_, true));
  auto recorder =
      internal::QueryRecorder::ForPipeline(*engine_, db_name_, name_, pipeline, options.comment);
  const int64_t start = recorder != nullptr ? internal::MonotonicNanos() : 0;
  std::unique_ptr<internal::DocumentSource> source;
  {
    // Its finds are its own.
    internal::NestedReads nested(recorder != nullptr ? recorder->nested() : nullptr);
    ROCKDOC_ASSIGN_OR_RETURN(internal::FindFn find, CollatedPipelineFind(pipeline, options));
    ROCKDOC_ASSIGN_OR_RETURN(source, internal::OpenPipeline(name_, pipeline, po, std::move(find)));
  }
  const int64_t used = recorder != nullptr ? internal::MonotonicNanos() - start : 0;
  return Cursor(internal::RecordedCursor(engine_, internal::PipelineCursor(std::move(source)),
                                         std::move(recorder), used));
}

StatusOr<Cursor> Database::Aggregate(DocumentView pipeline) const {
  return Aggregate(pipeline, AggregateOptions{});
}

StatusOr<Cursor> Database::Aggregate(DocumentView pipeline, const AggregateOptions& options) const {
  if (options.collation) {
    return Status(ErrorCode::kNotImplemented,
                  "a collation on an aggregate without a collection is not supported by rockdoc");
  }
  ROCKDOC_ASSIGN_OR_RETURN(internal::PipelineOptions po,
                           ToPipelineOptions(options, name_, engine_, session_, true));
  // The finds of its $lookup and $unionWith stages: this database's.
  const Collection any = GetCollection("$cmd.aggregate");
  std::unique_ptr<internal::DocumentSource> source;
  {
    // Not recorded, and its reads are its own: not recorded either.
    internal::NestedReads nested;
    ROCKDOC_ASSIGN_OR_RETURN(source,
                             internal::OpenCollectionlessPipeline(pipeline, po, any.PipelineFind()));
  }
  return Cursor(internal::UnrecordedCursor(internal::PipelineCursor(std::move(source))));
}

StatusOr<Document> Collection::ExplainAggregate(DocumentView pipeline,
                                                const AggregateOptions& options,
                                                ExplainVerbosity verbosity) const {
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<ViewRead> view, ResolveView());
  if (view) {
    return view->first.ExplainAggregate(
        internal::ConcatPipelines(view->second.view(), pipeline).view(), options, verbosity);
  }
  ROCKDOC_ASSIGN_OR_RETURN(internal::FindFn find, CollatedPipelineFind(pipeline, options));
  ROCKDOC_ASSIGN_OR_RETURN(auto meta, internal::LookupForRead(*engine_, db_name_, name_));
  ROCKDOC_ASSIGN_OR_RETURN(CollatorPtr collator,
                           internal::OperationCollator(options.collation, meta.get()));
  internal::ExplainFindFn explain_find = [&](DocumentView filter, const FindOptions& fo) {
    if (collator == nullptr) return ExplainFind(filter, fo, verbosity);
    FindOptions collated = fo;
    collated.collation = collator->spec();
    return ExplainFind(filter, collated, verbosity);
  };
  ROCKDOC_ASSIGN_OR_RETURN(internal::PipelineOptions po,
                           ToPipelineOptions(options, db_name_, engine_, session_, false));
  // Explaining runs the pipeline but is no run of it: its reads are not
  // recorded ($queryStats, the profiler).
  internal::NestedReads nested;
  return internal::ExplainPipeline(name_, pipeline, po, std::move(find), explain_find,
                                   verbosity != ExplainVerbosity::kQueryPlanner);
}

StatusOr<Document> Collection::ExplainDistinct(std::string_view field, DocumentView filter,
                                               const DistinctOptions& options,
                                               ExplainVerbosity verbosity) const {
  ROCKDOC_ASSIGN_OR_RETURN(FindOptions fo, DistinctFind(field, options));
  return ExplainFind(filter, fo, verbosity);
}

StatusOr<Document> Collection::ExplainFind(DocumentView filter, const FindOptions& options,
                                           ExplainVerbosity verbosity) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "explain"));
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<ViewRead> view, ResolveView());
  if (view) return ExplainFindOnView(*view, filter, options, verbosity);
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_ASSIGN_OR_RETURN(auto cq, internal::MakeCanonicalQuery(filter, options));
  ROCKDOC_ASSIGN_OR_RETURN(auto meta, internal::LookupForRead(*engine_, db_name_, name_));
  internal::ApplyDefaultCollation(cq.get(), meta.get());
  return internal::ExplainQuery(engine_, meta.get(), full_name(), *cq, verbosity);
}

}  // namespace rockdoc

namespace rockdoc::internal {

StatusOr<CollatorPtr> OperationCollator(const std::optional<Document>& given,
                                        const CollectionMeta* meta) {
  if (given) return Collator::Make(*given);
  if (meta != nullptr) return meta->options()->collator;
  return CollatorPtr();
}

}  // namespace rockdoc::internal

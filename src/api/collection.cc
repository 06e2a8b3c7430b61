// Collection: the document operations. Reads plan and run a stage tree over
// a snapshot; writes find their targets that way, then lock, re-read and
// change each document in a RocksDB transaction (store/write_ops.h).

#include <algorithm>
#include <chrono>
#include <thread>

#include "api/collection_internal.h"
#include "api/query_recorder.h"
#include "catalog/catalog.h"
#include "exec/plan_executor.h"
#include "exec/scan_stages.h"
#include "keystring/keystring.h"
#include "rockdoc/client.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "store/write_ops.h"

namespace rockdoc {

using internal::CollectionMeta;
using internal::Engine;
using internal::PlanExecutor;
using internal::CollectionLock;
using internal::OpContext;
using internal::OpKind;

}  // namespace rockdoc

namespace rockdoc::internal {

}  // namespace rockdoc::internal

namespace rockdoc {

StatusOr<InsertOneResult> Collection::InsertOne(DocumentView doc) const {
  return InsertOne(doc, InsertOneOptions());
}

StatusOr<InsertOneResult> Collection::InsertOne(DocumentView doc,
                                                const InsertOneOptions& options) const {
  return internal::RunOperation<StatusOr<InsertOneResult>>(
      session_, OpKind::kWrite, "insert", [&](const OpContext& op) -> StatusOr<InsertOneResult> {
        auto use = engine_->Enter();
        ROCKDOC_RETURN_IF_ERROR(use.status());
        ROCKDOC_ASSIGN_OR_RETURN(Document prepared, internal::PrepareInsert(doc));
        ROCKDOC_ASSIGN_OR_RETURN(auto guard,
                                 CollectionLock::Acquire(*engine_, db_name_, name_, CollectionLock::Mode::kShared, true));
        InsertOneResult result{Value::FromElement(*prepared.begin()), {}};
        ROCKDOC_RETURN_IF_ERROR(internal::InsertOneDocument(
            *engine_, *guard.meta(), prepared, internal::Deadline(), op.txn,
            options.bypass_document_validation, &result.warnings));
        return result;
      });
}

StatusOr<InsertManyResult> Collection::InsertMany(const std::vector<Document>& docs,
                                                  const InsertManyOptions& options) const {
  return internal::RunOperation<StatusOr<InsertManyResult>>(
      session_, OpKind::kWrite, "insert",
      [&](const OpContext& op) { return InsertManyImpl(docs, options, op); });
}

StatusOr<InsertManyResult> Collection::InsertManyImpl(const std::vector<Document>& docs,
                                                      const InsertManyOptions& options,
                                                      const internal::OpContext& op) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckMaxTimeMS(options.max_time_ms));
  const internal::Deadline deadline = internal::Deadline::AfterMillis(options.max_time_ms);
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  InsertManyResult result;
  if (docs.empty()) return result;
  ROCKDOC_ASSIGN_OR_RETURN(auto guard,
                           CollectionLock::Acquire(*engine_, db_name_, name_, CollectionLock::Mode::kShared, true));
  const CollectionMeta& meta = *guard.meta();

  std::vector<Value> pending_ids;  // inserted in the open transaction
  internal::WriteBatcher batch(
      *engine_, meta, deadline,
      [&] {
        for (Value& v : pending_ids) result.inserted_ids.push_back(std::move(v));
        pending_ids.clear();
      },
      op.txn);
  for (size_t i = 0; i < docs.size(); ++i) {
    StatusOr<Document> prepared = internal::PrepareInsert(docs[i]);
    Status s = prepared.status();
    if (s.ok()) {
      s = batch.Apply([&](internal::KvTransaction* txn, internal::WriteDelta* delta) -> StatusOr<size_t> {
        ROCKDOC_RETURN_IF_ERROR(internal::InsertDocument(*engine_, txn, meta, *prepared, delta,
                                                         options.bypass_document_validation));
        // Pending from here: Apply may commit before it returns.
        pending_ids.push_back(Value::FromElement(*prepared->begin()));
        return prepared->size();
      });
    }
    if (!s.ok()) {
      // A failed commit ends the batch: the whole call fails.
      ROCKDOC_RETURN_IF_ERROR(batch.failure());
      // Inside a transaction a failed insert fails the statement (and the
      // transaction with it), as in MongoDB.
      if (op.in_transaction()) return s;
      result.write_errors.push_back(WriteError{i, s});
      if (options.ordered) break;
    }
  }
  ROCKDOC_RETURN_IF_ERROR(batch.Commit());
  result.warnings = batch.TakeWarnings();
  return result;
}

StatusOr<std::optional<Document>> Collection::FindById(const Element& id) const {
  using Result = StatusOr<std::optional<Document>>;
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<ViewRead> view, ResolveView());
  if (view) {
    BsonBuilder b;
    b.AppendElementAs("_id", id);
    const Document filter = std::move(b).Build();
    FindOptions one;
    one.limit = 1;
    ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, FindOnView(*view, filter, one));
    if (cursor.Next()) {
      return std::optional<Document>(
          Document::AdoptValidated(std::string(cursor.document().bytes())));
    }
    ROCKDOC_RETURN_IF_ERROR(cursor.status());
    return std::optional<Document>();
  }
  ROCKDOC_RETURN_IF_ERROR(internal::FlushProfileBeforeRead(engine_, db_name_, name_));
  return internal::RunOperation<Result>(
      session_, OpKind::kRead, "find", [&](const OpContext& op) -> Result {
        auto use = engine_->Enter();
        ROCKDOC_RETURN_IF_ERROR(use.status());
        ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<CollectionMeta> meta,
                                 internal::LookupForRead(*engine_, db_name_, name_));
        if (meta == nullptr) return std::optional<Document>();
        const bool recorded = internal::QueryRecorder::Records(*engine_);
        const int64_t start = recorded ? internal::MonotonicNanos() : 0;
        meta->id_index_accesses.fetch_add(1, std::memory_order_relaxed);  // $indexStats
        internal::PinnedValue value;
        bool found = false;
        ROCKDOC_RETURN_IF_ERROR(op.View(engine_.get(), nullptr)
                                    .GetRecord(internal::DocumentKey(*meta, id), &value, &found)
                                    .WithContext("find by _id"));
        if (recorded) {
          internal::QueryRecorder::RecordIdRead(*engine_, db_name_, name_, id,
                                                internal::MonotonicNanos() - start, found);
        }
        if (!found) return std::optional<Document>();
        return std::optional<Document>(Document::AdoptValidated(std::string(value.view())));
      });
}


namespace {

StatusOr<DeleteResult> DeleteImpl(const std::shared_ptr<Engine>& engine, const std::string& db,
                                  const std::string& name, DocumentView filter, bool multi,
                                  const DeleteOptions& options, const OpContext& op,
                                  std::optional<Document>* deleted = nullptr,
                                  const FindOneAndModifyOptions* fam = nullptr) {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckMaxTimeMS(options.max_time_ms));
  const internal::Deadline deadline = internal::Deadline::AfterMillis(options.max_time_ms);
  auto use = engine->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  FindOptions fo;
  if (fam != nullptr) fo.sort = fam->sort;
  fo.hint = options.hint;
  fo.hint_name = options.hint_name;
  fo.let = options.let;
  fo.collation = fam != nullptr && fam->collation ? fam->collation : options.collation;
  if (!multi) fo.limit = 1;
  ROCKDOC_ASSIGN_OR_RETURN(auto cq, internal::MakeCanonicalQuery(filter, fo));
  ROCKDOC_ASSIGN_OR_RETURN(auto guard, CollectionLock::Acquire(*engine, db, name, CollectionLock::Mode::kShared, false));
  DeleteResult result;
  if (guard.meta() == nullptr) return result;
  internal::ApplyDefaultCollation(cq.get(), guard.meta());
  const CollectionMeta& meta = *guard.meta();
  auto write = [&](internal::KvTransaction* txn, std::string_view key, const Document& current,
                   internal::WriteDelta* delta, size_t* bytes) -> StatusOr<internal::TargetOutcome> {
    ROCKDOC_ASSIGN_OR_RETURN(bool matched, MatchesOrError(*cq->root, current));
    if (!matched) return internal::TargetOutcome::kNoMatch;  // changed since the plan found it
    ROCKDOC_RETURN_IF_ERROR(internal::DeleteDocument(*engine, txn, meta, key, current, delta));
    *bytes = current.size();
    if (deleted != nullptr) *deleted = current;
    return internal::TargetOutcome::kWritten;
  };
  // With one target, a concurrent change may make it stop matching: look
  // again (bounded) rather than report a spurious miss.
  for (int attempt = 0; attempt < (multi ? 1 : 8); ++attempt) {
    ROCKDOC_ASSIGN_OR_RETURN(
        internal::WriteCounts counts,
        internal::RunWritePlan(engine, meta, *cq, deadline, op, internal::WriteStage::Kind::kDelete,
                               write));
    result.deleted_count += counts.written;
    if (counts.targets == 0 || multi || result.deleted_count > 0) break;
  }
  return result;
}

}  // namespace

StatusOr<DeleteResult> Collection::DeleteOne(DocumentView filter,
                                             const DeleteOptions& options) const {
  return internal::RunOperation<StatusOr<DeleteResult>>(
      session_, OpKind::kWrite, "delete", [&](const OpContext& op) {
        return DeleteImpl(engine_, db_name_, name_, filter, false, options, op);
      });
}

StatusOr<std::optional<Document>> Collection::FindOneAndDelete(
    DocumentView filter, const FindOneAndModifyOptions& options) const {
  std::optional<Document> deleted;
  ROCKDOC_ASSIGN_OR_RETURN(
      DeleteResult r,
      internal::RunOperation<StatusOr<DeleteResult>>(
          session_, OpKind::kWrite, "findAndModify", [&](const OpContext& op) {
            DeleteOptions del;
            del.max_time_ms = options.max_time_ms;
            del.hint = options.hint;
            del.hint_name = options.hint_name;
            del.let = options.let;
            return DeleteImpl(engine_, db_name_, name_, filter, false, del, op, &deleted,
                              &options);
          }));
  if (r.deleted_count == 0 || !deleted) return std::optional<Document>();
  if (options.projection.empty()) return deleted;
  ROCKDOC_ASSIGN_OR_RETURN(auto p, internal::MakeProjectionInfo(options.projection, nullptr));
  ROCKDOC_ASSIGN_OR_RETURN(Document projected, p.apply(*deleted, std::nullopt));
  return std::optional<Document>(std::move(projected));
}

StatusOr<DeleteResult> Collection::DeleteMany(DocumentView filter,
                                              const DeleteOptions& options) const {
  return internal::RunOperation<StatusOr<DeleteResult>>(
      session_, OpKind::kWrite, "delete", [&](const OpContext& op) {
        return DeleteImpl(engine_, db_name_, name_, filter, true, options, op);
      });
}

StatusOr<UpdateResult> Collection::ReplaceOne(DocumentView filter, DocumentView replacement,
                                              bool upsert) const {
  UpdateOptions options;
  options.upsert = upsert;
  return ReplaceOne(filter, replacement, options);
}

StatusOr<UpdateResult> Collection::ReplaceOne(DocumentView filter, DocumentView replacement,
                                              const UpdateOptions& options) const {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(replacement.bytes()));
  for (Element e : replacement) {
    if (!e.key().empty() && e.key()[0] == '$') {
      return BadValue("replacement document must not contain update operators: " +
                      std::string(e.key()));
    }
  }
  return UpdateOne(filter, replacement, options);
}

namespace {

// The collection of a Stats or GrowthStats call. NamespaceNotFound when
// there is none (CommandNotSupportedOnView for a view).
StatusOr<std::shared_ptr<CollectionMeta>> StatsTarget(const Engine& engine, const std::string& db,
                                                      const std::string& name) {
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateCollectionName(db, name));
  std::shared_ptr<CollectionMeta> meta = CatalogOf(engine).Find(db, name);
  if (meta != nullptr) return meta;
  if (CatalogOf(engine).FindView(db, name) != nullptr) return internal::ViewNotCollection(db, name);
  return Status(ErrorCode::kNamespaceNotFound, "Collection [" + db + "." + name + "] not found.");
}

// Reads every record of `meta` at a snapshot taken while no writer is
// between its commit and the application of its statistics (the commit
// lock, exclusive), and makes the document sizes known from it
// (CollectionStatistics::BeginRebuild). Also gives the count and size.
// False in *rebuilt when there is nothing to rebuild (or another call is
// at it).
Status RebuildDocumentSizes(const std::shared_ptr<Engine>& engine, const CollectionMeta& meta,
                            CollectionStats* stats, bool* rebuilt) {
  internal::CollectionStatistics& statistics = *meta.statistics;
  *rebuilt = false;
  uint64_t token = 0;
  std::unique_ptr<internal::KvSnapshot> snapshot;
  {
    internal::WriterMutexLock pause(&statistics.commit_mu);
    token = statistics.BeginRebuild();
    if (token == 0) return Status::OK();
    snapshot = std::make_unique<internal::KvSnapshot>(engine);
  }
  internal::Log2Counts sizes{};
  int64_t count = 0, bytes = 0;
  std::unique_ptr<internal::KvIterator> it =
      internal::ReadView(engine.get(), snapshot.get())
          .NewIterator(internal::PrefixKey(meta.id), internal::PrefixKey(meta.id + 1),
                       /*sequential=*/true, /*fill_cache=*/false);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const int64_t size = static_cast<int64_t>(it->value().size());
    ++count;
    bytes += size;
    ++sizes[internal::Log2Bucket(size)];
  }
  if (!it->status().ok()) {
    statistics.AbandonRebuild(token);
    return it->status().WithContext("collStats of " + meta.full_name());
  }
  statistics.FinishRebuild(token, sizes);
  stats->count = count;
  stats->size = bytes;
  *rebuilt = true;
  return Status::OK();
}

}  // namespace

StatusOr<CollectionStats> Collection::Stats() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "collStats"));
  CollectionStats stats;
  std::shared_ptr<CollectionMeta> meta;
  bool counted = false;
  {
    auto use = engine_->Enter();
    ROCKDOC_RETURN_IF_ERROR(use.status());
    ROCKDOC_ASSIGN_OR_RETURN(meta, StatsTarget(*engine_, db_name_, name_));
    ROCKDOC_ASSIGN_OR_RETURN(uint64_t records,
                             engine_->ApproximateSize(internal::PrefixKey(meta->id),
                                                      internal::PrefixKey(meta->id + 1)));
    stats.storage_size = static_cast<int64_t>(records);
    std::shared_ptr<const internal::CollectionOptions> options = meta->options();
    stats.capped = options->capped;
    stats.max_size = options->capped_size;
    stats.max = options->capped_max;
    stats.index_sizes.emplace_back("_id_", 0);
    for (const auto& index : *meta->indexes()) {
      ROCKDOC_ASSIGN_OR_RETURN(uint64_t bytes,
                               engine_->ApproximateSize(internal::IndexPrefix(*index),
                                                        internal::PrefixKey(index->id() + 1)));
      stats.index_sizes.emplace_back(index->name(), static_cast<int64_t>(bytes));
      stats.total_index_size += static_cast<int64_t>(bytes);
    }
    // Unknown document sizes are rebuilt by the scan below, made at a
    // snapshot of its own (outside a session, whose reads have theirs).
    if (engine_->options().collect_statistics && session_ == nullptr &&
        !meta->statistics->sizes_known()) {
      ROCKDOC_RETURN_IF_ERROR(RebuildDocumentSizes(engine_, *meta, &stats, &counted));
    }
    // As kept (with statistics off: what clients with them on recorded).
    stats.growth = meta->statistics->Snapshot();
  }
  if (counted) return stats;
  // MongoDB keeps the data size with the count; rockdoc sums it (a scan of
  // the command's own, not a query of the application's: not recorded).
  internal::NestedReads unrecorded;
  ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, Find(Document()));
  while (cursor.Next()) {
    ++stats.count;
    stats.size += static_cast<int64_t>(cursor.document().size());
  }
  ROCKDOC_RETURN_IF_ERROR(cursor.status());
  return stats;
}

StatusOr<GrowthStatistics> Collection::GrowthStats() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "collStats"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<CollectionMeta> meta,
                           StatsTarget(*engine_, db_name_, name_));
  // With statistics off, what the clients with them on recorded (the
  // advisor reads them so: rockdoc-advise keeps none of its own).
  return meta->statistics->Snapshot();
}

StatusOr<int64_t> Collection::EstimatedDocumentCount() const {
  // A view's count is its pipeline's.
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<ViewRead> view, ResolveView());
  if (view) return CountOnView(*view, DocumentView(), CountOptions());
  // The count command, which MongoDB does not run in a transaction.
  return internal::RunOperation<StatusOr<int64_t>>(
      session_, OpKind::kCommand, "count", [&](const OpContext& op) -> StatusOr<int64_t> {
        auto use = engine_->Enter();
        ROCKDOC_RETURN_IF_ERROR(use.status());
        ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
        std::shared_ptr<CollectionMeta> meta = CatalogOf(*engine_).Find(db_name_, name_);
        if (meta == nullptr) return int64_t{0};
        if (op.snapshot == nullptr) return CatalogOf(*engine_).ReadCount(meta->id);
        // A snapshot session: the count as of its snapshot.
        std::string value;
        bool found = false;
        ROCKDOC_RETURN_IF_ERROR(op.View(engine_.get(), nullptr)
                                    .GetCatalog(internal::CountKey(meta->id), &value,
                                                &found));
        int64_t n = 0;
        if (found && value.size() == sizeof(n)) std::memcpy(&n, value.data(), sizeof(n));
        return n;
      });
}

Status Collection::Drop() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "drop"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  return CatalogOf(*engine_).Drop(db_name_, name_, nullptr);
}

StatusOr<ValidateResult> Collection::Validate() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "validate"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  std::shared_ptr<CollectionMeta> meta = CatalogOf(*engine_).Find(db_name_, name_);
  if (meta == nullptr) {
    if (CatalogOf(*engine_).FindView(db_name_, name_) != nullptr) {
      return internal::ViewNotCollection(db_name_, name_);
    }
    return Status(ErrorCode::kNamespaceNotFound,
                  "Collection '" + full_name() + "' does not exist to validate.");
  }
  // Shared: writers go on, but no index build or drop can change the index
  // set while the snapshot below is compared with it.
  CollectionLock no_index_ddl(meta, CollectionLock::Mode::kShared);
  ValidateResult result;
  internal::SnapshotHolder snapshot(engine_);
  const internal::ReadView view = snapshot.context();
  std::string lower = internal::PrefixKey(meta->id), upper = internal::PrefixKey(meta->id + 1);
  std::unique_ptr<internal::KvIterator> it = view.NewIterator(lower, upper, /*sequential=*/true);
  auto error = [&](std::string msg) {
    result.valid = false;
    if (result.errors.size() < 100) result.errors.push_back(std::move(msg));
  };
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++result.records;
    std::string_view value = it->value();
    Status s = ValidateBson(value);
    if (!s.ok()) {
      error("record " + std::to_string(result.records) + " is not valid BSON: " + s.ToString());
      continue;
    }
    DocumentView doc(reinterpret_cast<const uint8_t*>(value.data()));
    Element id = doc.empty() ? Element() : *doc.begin();
    if (id.key() != "_id") {
      error("record " + std::to_string(result.records) + " does not begin with _id");
      continue;
    }
    if (internal::DocumentKey(*meta, id) != it->key()) {
      error("record key does not match the document's _id " + std::string(id.key()));
    }
  }
  ROCKDOC_RETURN_IF_ERROR(it->status().WithContext("validate"));
  std::string count_value;
  bool count_found = false;
  Status cs = view.GetCatalog(internal::CountKey(meta->id), &count_value, &count_found);
  int64_t stored = 0;
  if (cs.ok() && count_found && count_value.size() == 8) {
    std::memcpy(&stored, count_value.data(), 8);
  } else if (!cs.ok() || count_found) {
    error("the stored document count is unreadable");
  }
  if (stored != result.records) {
    error("stored count " + std::to_string(stored) + " does not match the " +
          std::to_string(result.records) + " documents found");
  }
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateIndexes(*meta, view, &result));
  return result;
}

}  // namespace rockdoc

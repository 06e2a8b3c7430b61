// Collection: the document operations. Reads plan and run a stage tree over
// a snapshot; writes find their targets that way, then lock, re-read and
// change each document in a RocksDB transaction (storage/write_ops.h).

#include <algorithm>
#include <chrono>
#include <shared_mutex>
#include <thread>

#include "api/collection_internal.h"
#include "catalog/catalog.h"
#include "exec/plan_executor.h"
#include "exec/scan_stages.h"
#include "keystring/keystring.h"
#include "rockdoc/client.h"
#include "storage/engine.h"
#include "storage/write_ops.h"

namespace rockdoc {

using internal::CollectionMeta;
using internal::Engine;
using internal::PlanExecutor;
using internal::CollectionWriteGuard;
using internal::OpContext;
using internal::OpKind;

}  // namespace rockdoc

namespace rockdoc::internal {

namespace {

// A write conflict is retried; past this many attempts at one document
// (which takes a livelock, not contention) it is returned.
constexpr int kMaxConflictAttempts = 10000;

// Between attempts at one document: at once at first, then yielding, then
// sleeping a millisecond, as MongoDB backs off after write conflicts.
void BackOff(int attempt) {
  if (attempt < 4) return;
  if (attempt < 16) {
    std::this_thread::yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

WriteBatcher::WriteBatcher(const Engine& engine, const CollectionMeta& meta,
                           const Deadline& deadline, std::function<void()> on_commit,
                           KvTransaction* outer)
    : engine_(engine),
      meta_(meta),
      deadline_(deadline),
      on_commit_(std::move(on_commit)),
      outer_(outer) {}

Status WriteBatcher::Apply(const Change& change) {
  ROCKDOC_RETURN_IF_ERROR(failure_);
  if (outer_ != nullptr) {
    // Inside a multi-document transaction: no batches, no retries.
    ROCKDOC_RETURN_IF_ERROR(deadline_.Check());
    outer_->SetSavePoint();
    int64_t count_delta = 0;
    StatusOr<size_t> written = change(outer_, &count_delta);
    if (written.ok() && *written > 0) {
      pending_count_ += count_delta;
      ++pending_documents_;
      return outer_->PopSavePoint();
    }
    Status rolled_back = outer_->RollbackToSavePoint();
    if (!rolled_back.ok()) {
      failure_ = rolled_back.WithContext("roll back one document's change");
      return failure_;
    }
    return written.status();
  }
  for (int attempt = 1;; ++attempt) {
    if (!txn_open_) {
      txn_ = engine_.Begin({}, std::move(txn_));  // recycles the last one
      txn_open_ = true;
    }
    if (deadline_.is_set()) {
      ROCKDOC_RETURN_IF_ERROR(deadline_.Check());
      txn_->SetLockTimeout(
          std::min(engine_.options().lock_timeout_ms, deadline_.RemainingMillis()));
    }
    txn_->SetSavePoint();
    int64_t count_delta = 0;
    StatusOr<size_t> written = change(txn_.get(), &count_delta);
    if (written.ok() && *written > 0) {
      ROCKDOC_RETURN_IF_ERROR(txn_->PopSavePoint());
      pending_count_ += count_delta;
      pending_bytes_ += *written;
      if (++pending_documents_ >= kWriteBatchDocuments || pending_bytes_ >= kWriteBatchBytes) {
        return Commit();
      }
      return Status::OK();
    }
    // Nothing written, or a failure: undo this document's part (and let go
    // of its locks). A transaction that cannot roll back cannot be
    // committed either: drop it all.
    Status rolled_back = txn_->RollbackToSavePoint();
    if (!rolled_back.ok()) {
      failure_ = rolled_back.WithContext("roll back one document's change");
      // Already failing with failure_; destroying the transaction releases
      // its locks whatever this rollback says.
      txn_->Rollback().IgnoreError();
      txn_.reset();
      txn_open_ = false;
      pending_documents_ = pending_bytes_ = 0;
      pending_count_ = 0;
      return failure_;
    }
    if (written.ok()) return Status::OK();
    Status s = written.status();
    if (s.code() == ErrorCode::kLockTimeout && deadline_.is_set() && !deadline_.Check().ok()) {
      return MaxTimeExpiredError();
    }
    if (s.code() != ErrorCode::kWriteConflict || attempt == kMaxConflictAttempts) return s;
    // Let the writer we conflict with go on, then try this document again.
    ROCKDOC_RETURN_IF_ERROR(Commit());
    BackOff(attempt);
  }
}

Status WriteBatcher::Commit() {
  ROCKDOC_RETURN_IF_ERROR(failure_);
  if (outer_ != nullptr) {
    // The transaction's owner commits; the counts go in with it.
    ROCKDOC_RETURN_IF_ERROR(AddToCount(outer_, meta_, &pending_count_));
    pending_documents_ = 0;
    if (on_commit_) on_commit_();
    return Status::OK();
  }
  if (!txn_open_) return Status::OK();
  txn_open_ = false;
  if (pending_documents_ == 0) {
    // Nothing written (every change was rolled back): just let go.
    return txn_->Rollback().WithContext("end of a write");
  }
  Status s = CommitWithCount(txn_.get(), meta_, &pending_count_);
  pending_documents_ = pending_bytes_ = 0;
  pending_count_ = 0;
  if (!s.ok()) {
    txn_.reset();
    failure_ = s;
    return s;
  }
  if (on_commit_) on_commit_();
  return Status::OK();
}

Status InsertOneDocument(const Engine& engine, const CollectionMeta& meta, const Document& doc,
                         const Deadline& deadline, const OpContext& op) {
  WriteBatcher batch(engine, meta, deadline, {}, op.txn);
  ROCKDOC_RETURN_IF_ERROR(
      batch.Apply([&](KvTransaction* txn, int64_t* count_delta) -> StatusOr<size_t> {
        ROCKDOC_RETURN_IF_ERROR(InsertDocument(engine, txn, meta, doc, count_delta));
        return doc.size();
      }));
  return batch.Commit();
}

Status WriteEachTarget(const Engine& engine, const CollectionMeta& meta,
                       std::vector<WriteTarget> targets, const Deadline& deadline,
                       const TargetWriter& write, WriteCounts* counts, const OpContext& op) {
  // One lock order for every writer: record-key order (most plans already
  // produce it; an index scan's order is another).
  auto by_key = [](const WriteTarget& a, const WriteTarget& b) {
    return a.record_key < b.record_key;
  };
  if (!std::is_sorted(targets.begin(), targets.end(), by_key)) {
    std::sort(targets.begin(), targets.end(), by_key);
  }
  WriteBatcher batch(engine, meta, deadline, {}, op.txn);
  for (const WriteTarget& target : targets) {
    TargetOutcome outcome = TargetOutcome::kNoMatch;
    Status s =
        batch.Apply([&](KvTransaction* txn, int64_t* count_delta) -> StatusOr<size_t> {
          outcome = TargetOutcome::kNoMatch;
          ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> current,
                                   LockAndRead(txn, target.record_key));
          if (!current) return size_t{0};  // deleted since we looked
          size_t bytes = 0;
          ROCKDOC_ASSIGN_OR_RETURN(outcome,
                                   write(txn, target.record_key, *current, count_delta, &bytes));
          return outcome == TargetOutcome::kWritten ? std::max<size_t>(bytes, 1) : size_t{0};
        });
    if (!s.ok()) {
      // The documents changed so far stay changed, as in MongoDB.
      Status c = batch.Commit();
      return c.ok() ? s : c;
    }
    if (outcome != TargetOutcome::kNoMatch) ++counts->matched;
    if (outcome == TargetOutcome::kWritten) ++counts->written;
  }
  return batch.Commit();
}

StatusOr<CollectionWriteGuard> CollectionWriteGuard::Acquire(const Engine& engine,
                                                             const std::string& db,
                                                             const std::string& name,
                                                             bool create) {
  while (true) {
    std::shared_ptr<CollectionMeta> meta;
    if (create) {
      ROCKDOC_ASSIGN_OR_RETURN(meta, engine.catalog().GetOrCreate(db, name));
    } else {
      ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db));
      meta = engine.catalog().Find(db, name);
      if (meta == nullptr) return CollectionWriteGuard(nullptr);
    }
    CollectionWriteGuard guard(std::move(meta));
    if (!guard.dropped()) return guard;
  }
}

CollectionWriteGuard::CollectionWriteGuard(std::shared_ptr<CollectionMeta> meta)
    : meta_(std::move(meta)) {
  if (meta_) lock_ = std::shared_lock<std::shared_mutex>(meta_->mu);
}

}  // namespace rockdoc::internal

namespace rockdoc {

StatusOr<InsertOneResult> Collection::InsertOne(DocumentView doc) const {
  return internal::RunOperation<StatusOr<InsertOneResult>>(
      session_, OpKind::kWrite, "insert", [&](const OpContext& op) -> StatusOr<InsertOneResult> {
        auto use = engine_->Enter();
        ROCKDOC_RETURN_IF_ERROR(use.status());
        ROCKDOC_ASSIGN_OR_RETURN(Document prepared, internal::PrepareInsert(doc));
        ROCKDOC_ASSIGN_OR_RETURN(auto guard,
                                 CollectionWriteGuard::Acquire(*engine_, db_name_, name_, true));
        ROCKDOC_RETURN_IF_ERROR(internal::InsertOneDocument(*engine_, *guard.meta(), prepared,
                                                            internal::Deadline(), op));
        return InsertOneResult{Value::FromElement(*prepared.begin())};
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
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  InsertManyResult result;
  if (docs.empty()) return result;
  ROCKDOC_ASSIGN_OR_RETURN(auto guard,
                           CollectionWriteGuard::Acquire(*engine_, db_name_, name_, true));
  const CollectionMeta& meta = *guard.meta();

  std::vector<Value> pending_ids;  // inserted in the open transaction
  const internal::Deadline no_deadline;
  internal::WriteBatcher batch(
      *engine_, meta, no_deadline,
      [&] {
        for (Value& v : pending_ids) result.inserted_ids.push_back(std::move(v));
        pending_ids.clear();
      },
      op.txn);
  for (size_t i = 0; i < docs.size(); ++i) {
    StatusOr<Document> prepared = internal::PrepareInsert(docs[i]);
    Status s = prepared.status();
    if (s.ok()) {
      s = batch.Apply([&](internal::KvTransaction* txn, int64_t* count_delta) -> StatusOr<size_t> {
        ROCKDOC_RETURN_IF_ERROR(
            internal::InsertDocument(*engine_, txn, meta, *prepared, count_delta));
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
  return result;
}

StatusOr<std::optional<Document>> Collection::FindById(const Element& id) const {
  using Result = StatusOr<std::optional<Document>>;
  return internal::RunOperation<Result>(
      session_, OpKind::kRead, "find", [&](const OpContext& op) -> Result {
        auto use = engine_->Enter();
        ROCKDOC_RETURN_IF_ERROR(use.status());
        ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
        std::shared_ptr<CollectionMeta> meta = engine_->catalog().Find(db_name_, name_);
        if (meta == nullptr) return std::optional<Document>();
        internal::PinnedValue value;
        bool found = false;
        ROCKDOC_RETURN_IF_ERROR(op.View(engine_.get(), nullptr)
                                    .Get(internal::DocumentKey(*meta, id), &value, &found)
                                    .WithContext("find by _id"));
        if (!found) return std::optional<Document>();
        return std::optional<Document>(Document::AdoptValidated(std::string(value.view())));
      });
}


namespace {

StatusOr<DeleteResult> DeleteImpl(const std::shared_ptr<Engine>& engine, const std::string& db,
                                  const std::string& name, DocumentView filter, bool multi,
                                  int64_t max_time_ms, const OpContext& op,
                                  std::optional<Document>* deleted = nullptr,
                                  const FindOneAndModifyOptions* fam = nullptr) {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckMaxTimeMS(max_time_ms));
  const internal::Deadline deadline = internal::Deadline::AfterMillis(max_time_ms);
  auto use = engine->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  FindOptions fo;
  if (fam != nullptr) fo.sort = fam->sort;
  if (!multi) fo.limit = 1;
  ROCKDOC_ASSIGN_OR_RETURN(auto cq, internal::MakeCanonicalQuery(filter, fo));
  ROCKDOC_ASSIGN_OR_RETURN(auto guard, CollectionWriteGuard::Acquire(*engine, db, name, false));
  DeleteResult result;
  if (guard.meta() == nullptr) return result;
  const CollectionMeta& meta = *guard.meta();
  auto write = [&](internal::KvTransaction* txn, std::string_view key, const Document& current,
                   int64_t* count_delta, size_t* bytes) -> StatusOr<internal::TargetOutcome> {
    if (!cq->root->Matches(current)) return internal::TargetOutcome::kNoMatch;  // changed
    ROCKDOC_RETURN_IF_ERROR(
        internal::DeleteDocument(*engine, txn, meta, key, current, count_delta));
    *bytes = current.size();
    if (deleted != nullptr) *deleted = current;
    return internal::TargetOutcome::kWritten;
  };
  // With one target, a concurrent change may make it stop matching: look
  // again (bounded) rather than report a spurious miss.
  for (int attempt = 0; attempt < (multi ? 1 : 8); ++attempt) {
    ROCKDOC_ASSIGN_OR_RETURN(auto targets,
                             internal::FindWriteTargets(engine, &meta, *cq, deadline, op));
    if (targets.empty()) return result;
    internal::WriteCounts counts;
    Status s = internal::WriteEachTarget(*engine, meta, std::move(targets), deadline, write,
                                         &counts, op);
    result.deleted_count += counts.written;
    ROCKDOC_RETURN_IF_ERROR(s);
    if (multi || result.deleted_count > 0) break;
  }
  return result;
}

}  // namespace

StatusOr<DeleteResult> Collection::DeleteOne(DocumentView filter,
                                             const DeleteOptions& options) const {
  return internal::RunOperation<StatusOr<DeleteResult>>(
      session_, OpKind::kWrite, "delete", [&](const OpContext& op) {
        return DeleteImpl(engine_, db_name_, name_, filter, false, options.max_time_ms, op);
      });
}

StatusOr<std::optional<Document>> Collection::FindOneAndDelete(
    DocumentView filter, const FindOneAndModifyOptions& options) const {
  std::optional<Document> deleted;
  ROCKDOC_ASSIGN_OR_RETURN(
      DeleteResult r,
      internal::RunOperation<StatusOr<DeleteResult>>(
          session_, OpKind::kWrite, "findAndModify", [&](const OpContext& op) {
            return DeleteImpl(engine_, db_name_, name_, filter, false, options.max_time_ms, op,
                              &deleted, &options);
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
        return DeleteImpl(engine_, db_name_, name_, filter, true, options.max_time_ms, op);
      });
}

StatusOr<UpdateResult> Collection::ReplaceOne(DocumentView filter, DocumentView replacement,
                                              bool upsert) const {
  UpdateOptions options;
  options.upsert = upsert;
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(replacement.bytes()));
  for (Element e : replacement) {
    if (!e.key().empty() && e.key()[0] == '$') {
      return BadValue("replacement document must not contain update operators: " +
                      std::string(e.key()));
    }
  }
  return UpdateOne(filter, replacement, options);
}

StatusOr<int64_t> Collection::EstimatedDocumentCount() const {
  // The count command, which MongoDB does not run in a transaction.
  return internal::RunOperation<StatusOr<int64_t>>(
      session_, OpKind::kCommand, "count", [&](const OpContext& op) -> StatusOr<int64_t> {
        auto use = engine_->Enter();
        ROCKDOC_RETURN_IF_ERROR(use.status());
        ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
        std::shared_ptr<CollectionMeta> meta = engine_->catalog().Find(db_name_, name_);
        if (meta == nullptr) return int64_t{0};
        if (op.snapshot == nullptr) return engine_->catalog().ReadCount(meta->id);
        // A snapshot session: the count as of its snapshot.
        std::string value;
        bool found = false;
        ROCKDOC_RETURN_IF_ERROR(op.View(engine_.get(), nullptr)
                                    .GetCatalog(internal::Catalog::CountKey(meta->id), &value,
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
  return engine_->catalog().Drop(db_name_, name_, nullptr);
}

StatusOr<ValidateResult> Collection::Validate() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "validate"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  std::shared_ptr<CollectionMeta> meta = engine_->catalog().Find(db_name_, name_);
  if (meta == nullptr) {
    return Status(ErrorCode::kNamespaceNotFound,
                  "Collection '" + full_name() + "' does not exist to validate.");
  }
  // Shared: writers go on, but no index build or drop can change the index
  // set while the snapshot below is compared with it.
  std::shared_lock<std::shared_mutex> no_index_ddl(meta->mu);
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
  Status cs = view.GetCatalog(internal::Catalog::CountKey(meta->id), &count_value, &count_found);
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

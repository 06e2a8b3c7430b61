// Collection: the document operations. Reads plan and run a stage tree over
// a snapshot; writes find their targets that way, then lock, re-read and
// change each document in a RocksDB transaction (storage/write_ops.h).
#include <rocksdb/utilities/transaction.h>

#include <shared_mutex>

#include "catalog/catalog.h"
#include "exec/plan_executor.h"
#include "exec/scan_stages.h"
#include "keystring/keystring.h"
#include "rockdoc/client.h"
#include "storage/engine.h"
#include "storage/write_ops.h"
#include "api/collection_internal.h"

namespace rockdoc {

using internal::CollectionMeta;
using internal::Engine;
using internal::PlanExecutor;
using internal::CollectionWriteGuard;

namespace {

// Documents written per transaction by multi-document writes: enough to
// amortise the commit, small enough to bound the locks held.
constexpr size_t kWriteBatchDocuments = 1000;
constexpr size_t kWriteBatchBytes = size_t{16} << 20;

}  // namespace

}  // namespace rockdoc

namespace rockdoc::internal {

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
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_ASSIGN_OR_RETURN(Document prepared, internal::PrepareInsert(doc));
  ROCKDOC_ASSIGN_OR_RETURN(auto guard,
                           CollectionWriteGuard::Acquire(*engine_, db_name_, name_, true));
  auto txn = engine_->BeginTransaction();
  ROCKDOC_RETURN_IF_ERROR(internal::InsertDocument(*engine_, txn.get(), *guard.meta(), prepared));
  ROCKDOC_RETURN_IF_ERROR(internal::Commit(txn.get()));
  return InsertOneResult{Value::FromElement(*prepared.begin())};
}

StatusOr<InsertManyResult> Collection::InsertMany(const std::vector<Document>& docs,
                                                  const InsertManyOptions& options) const {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  InsertManyResult result;
  if (docs.empty()) return result;
  ROCKDOC_ASSIGN_OR_RETURN(auto guard,
                           CollectionWriteGuard::Acquire(*engine_, db_name_, name_, true));
  const CollectionMeta& meta = *guard.meta();

  std::unique_ptr<rocksdb::Transaction> txn;
  std::vector<Value> pending_ids;  // inserted in the open transaction
  size_t pending_bytes = 0;
  int64_t pending_count = 0;       // merged into the count once per commit
  auto commit = [&]() -> Status {
    if (!txn) return Status::OK();
    Status s = internal::CommitWithCount(*engine_, txn.get(), meta, &pending_count);
    if (!s.ok()) return s;
    for (Value& v : pending_ids) result.inserted_ids.push_back(std::move(v));
    pending_ids.clear();
    pending_bytes = 0;
    return Status::OK();
  };

  for (size_t i = 0; i < docs.size(); ++i) {
    StatusOr<Document> prepared = internal::PrepareInsert(docs[i]);
    Status s = prepared.status();
    if (s.ok()) {
      if (!txn) txn = engine_->BeginTransaction(std::move(txn));
      txn->SetSavePoint();
      s = internal::InsertDocument(*engine_, txn.get(), meta, *prepared, &pending_count);
      if (s.ok()) {
        txn->PopSavePoint().PermitUncheckedError();
        pending_ids.push_back(Value::FromElement(*prepared->begin()));
        pending_bytes += prepared->size();
      } else {
        txn->RollbackToSavePoint().PermitUncheckedError();
      }
    }
    if (!s.ok()) {
      result.write_errors.push_back(WriteError{i, s});
      if (options.ordered) break;
    }
    if (pending_ids.size() >= kWriteBatchDocuments || pending_bytes >= kWriteBatchBytes) {
      Status c = commit();
      if (!c.ok()) return c;
      txn = engine_->BeginTransaction(std::move(txn));
    }
  }
  Status c = commit();
  if (!c.ok()) return c;
  return result;
}

StatusOr<std::optional<Document>> Collection::FindById(const Element& id) const {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  std::shared_ptr<CollectionMeta> meta = engine_->catalog().Find(db_name_, name_);
  if (meta == nullptr) return std::optional<Document>();
  std::string value;
  rocksdb::Status s = engine_->db()->Get(rocksdb::ReadOptions(), engine_->data_cf(),
                                         internal::DocumentKey(*meta, id), &value);
  if (s.IsNotFound()) return std::optional<Document>();
  ROCKDOC_RETURN_IF_ERROR(internal::FromRocks(s, "find by _id"));
  return std::optional<Document>(Document::AdoptValidated(std::move(value)));
}


namespace {

StatusOr<DeleteResult> DeleteImpl(const std::shared_ptr<Engine>& engine, const std::string& db,
                                  const std::string& name, DocumentView filter, bool multi,
                                  std::optional<Document>* deleted = nullptr,
                                  const FindOneAndModifyOptions* fam = nullptr) {
  auto use = engine->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  FindOptions fo;
  if (fam != nullptr) fo.sort = fam->sort;
  if (!multi) fo.limit = 1;
  ROCKDOC_ASSIGN_OR_RETURN(auto cq, internal::MakeCanonicalQuery(filter, fo));
  ROCKDOC_ASSIGN_OR_RETURN(auto guard, CollectionWriteGuard::Acquire(*engine, db, name, false));
  DeleteResult result;
  if (guard.meta() == nullptr) return result;
  // With one target, a concurrent change may make it stop matching: look
  // again (bounded) rather than report a spurious miss.
  for (int attempt = 0; attempt < (multi ? 1 : 8); ++attempt) {
    ROCKDOC_ASSIGN_OR_RETURN(auto targets, internal::FindWriteTargets(engine, guard.meta(), *cq));
    if (targets.empty()) return result;
    std::unique_ptr<rocksdb::Transaction> txn;
    size_t in_txn = 0;
    int64_t pending_count = 0;  // merged into the count once per commit
    for (const auto& target : targets) {
      if (!txn) txn = engine->BeginTransaction(std::move(txn));
      ROCKDOC_ASSIGN_OR_RETURN(auto current,
                               internal::LockAndRead(*engine, txn.get(), target.record_key));
      if (!current || !cq->root->Matches(*current)) continue;  // changed since we looked
      ROCKDOC_RETURN_IF_ERROR(internal::DeleteDocument(*engine, txn.get(), *guard.meta(),
                                                       target.record_key, *current,
                                                       &pending_count));
      ++result.deleted_count;
      if (deleted != nullptr) *deleted = std::move(current);
      if (++in_txn >= kWriteBatchDocuments) {
        ROCKDOC_RETURN_IF_ERROR(
            internal::CommitWithCount(*engine, txn.get(), *guard.meta(), &pending_count));
        txn = engine->BeginTransaction(std::move(txn));
        in_txn = 0;
      }
    }
    if (txn) {
      ROCKDOC_RETURN_IF_ERROR(
          internal::CommitWithCount(*engine, txn.get(), *guard.meta(), &pending_count));
    }
    if (multi || result.deleted_count > 0) break;
  }
  return result;
}

}  // namespace

StatusOr<DeleteResult> Collection::DeleteOne(DocumentView filter) const {
  return DeleteImpl(engine_, db_name_, name_, filter, false);
}

StatusOr<std::optional<Document>> Collection::FindOneAndDelete(
    DocumentView filter, const FindOneAndModifyOptions& options) const {
  std::optional<Document> deleted;
  ROCKDOC_ASSIGN_OR_RETURN(DeleteResult r,
                           DeleteImpl(engine_, db_name_, name_, filter, false, &deleted, &options));
  if (r.deleted_count == 0 || !deleted) return std::optional<Document>();
  if (options.projection.empty()) return deleted;
  ROCKDOC_ASSIGN_OR_RETURN(auto p, internal::MakeProjectionInfo(options.projection, nullptr));
  ROCKDOC_ASSIGN_OR_RETURN(Document projected, p.apply(*deleted, std::nullopt));
  return std::optional<Document>(std::move(projected));
}

StatusOr<DeleteResult> Collection::DeleteMany(DocumentView filter) const {
  return DeleteImpl(engine_, db_name_, name_, filter, true);
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
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  std::shared_ptr<CollectionMeta> meta = engine_->catalog().Find(db_name_, name_);
  if (meta == nullptr) return int64_t{0};
  return engine_->catalog().ReadCount(meta->id);
}

Status Collection::Drop() const {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  return engine_->catalog().Drop(db_name_, name_, nullptr);
}

StatusOr<ValidateResult> Collection::Validate() const {
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
  rocksdb::ReadOptions ro = snapshot.context().read_options();
  std::string lower = internal::PrefixKey(meta->id), upper = internal::PrefixKey(meta->id + 1);
  rocksdb::Slice upper_slice(upper);
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(engine_->db()->NewIterator(ro, engine_->data_cf()));
  auto error = [&](std::string msg) {
    result.valid = false;
    if (result.errors.size() < 100) result.errors.push_back(std::move(msg));
  };
  for (it->Seek(lower); it->Valid(); it->Next()) {
    ++result.records;
    std::string_view value(it->value().data(), it->value().size());
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
    if (internal::DocumentKey(*meta, id) != it->key().ToString()) {
      error("record key does not match the document's _id " + std::string(id.key()));
    }
  }
  ROCKDOC_RETURN_IF_ERROR(internal::FromRocks(it->status(), "validate"));
  std::string count_value;
  rocksdb::Status cs = engine_->db()->Get(snapshot.context().read_options(),
                                          engine_->catalog_cf(),
                                          internal::Catalog::CountKey(meta->id), &count_value);
  int64_t stored = 0;
  if (cs.ok() && count_value.size() == 8) {
    std::memcpy(&stored, count_value.data(), 8);
  } else if (!cs.IsNotFound()) {
    error("the stored document count is unreadable");
  }
  if (stored != result.records) {
    error("stored count " + std::to_string(stored) + " does not match the " +
          std::to_string(result.records) + " documents found");
  }
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateIndexes(*engine_, *meta,
                                                    snapshot.context().read_options(), &result));
  return result;
}

}  // namespace rockdoc

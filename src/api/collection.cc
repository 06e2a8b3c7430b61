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

namespace rockdoc {

using internal::CollectionMeta;
using internal::Engine;
using internal::PlanExecutor;

namespace {

// Documents written per transaction by multi-document writes: enough to
// amortise the commit, small enough to bound the locks held.
constexpr size_t kWriteBatchDocuments = 1000;
constexpr size_t kWriteBatchBytes = size_t{16} << 20;

// Is the filter {_id: <literal>}?
bool IsIdEquality(DocumentView filter, Element* id) {
  auto it = filter.begin();
  if (it == filter.end()) return false;
  Element e = *it;
  if (e.key() != "_id" || ++it != filter.end()) return false;
  if (e.type() == BsonType::kDocument) {
    DocumentView d = e.Document();
    if (!d.empty() && !(*d.begin()).key().empty() && (*d.begin()).key()[0] == '$') return false;
  }
  if (e.type() == BsonType::kRegex || e.type() == BsonType::kArray) return false;
  *id = e;
  return true;
}

// The stage tree answering `filter` (in _id order).
StatusOr<std::unique_ptr<internal::PlanStage>> PlanFilter(const internal::ReadContext& ctx,
                                                          const CollectionMeta* meta,
                                                          DocumentView filter) {
  if (meta == nullptr) return std::unique_ptr<internal::PlanStage>(new internal::EofStage());
  Element id;
  if (IsIdEquality(filter, &id)) {
    return std::unique_ptr<internal::PlanStage>(
        new internal::IdHackStage(ctx, internal::DocumentKey(*meta, id), {}));
  }
  if (filter.empty()) {
    return std::unique_ptr<internal::PlanStage>(
        new internal::CollectionScanStage(ctx, meta->id, true, {}));
  }
  return Status(ErrorCode::kNotImplemented,
                "only {} and {_id: value} filters are supported by this build");
}

}  // namespace

// Holds the collection's metadata shared-locked for one write, looking it up
// again if a concurrent drop or rename got there first.
class CollectionWriteGuard {
 public:
  static StatusOr<CollectionWriteGuard> Acquire(const Engine& engine, const std::string& db,
                                                const std::string& name, bool create) {
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
  const CollectionMeta* meta() const { return meta_.get(); }
  bool dropped() const {
    return meta_ != nullptr && meta_->dropped.load(std::memory_order_acquire);
  }

 private:
  explicit CollectionWriteGuard(std::shared_ptr<CollectionMeta> meta) : meta_(std::move(meta)) {
    if (meta_) lock_ = std::shared_lock<std::shared_mutex>(meta_->mu);
  }
  std::shared_ptr<CollectionMeta> meta_;
  std::shared_lock<std::shared_mutex> lock_;
};

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
  auto commit = [&]() -> Status {
    if (!txn) return Status::OK();
    Status s = internal::Commit(txn.get());
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
      s = internal::InsertDocument(*engine_, txn.get(), meta, *prepared);
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

StatusOr<Cursor> Collection::Find(DocumentView filter, const FindOptions& /*options*/) const {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(filter.bytes()));
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  std::shared_ptr<CollectionMeta> meta = engine_->catalog().Find(db_name_, name_);
  auto snapshot = std::make_unique<internal::SnapshotHolder>(engine_);
  ROCKDOC_ASSIGN_OR_RETURN(auto root, PlanFilter(snapshot->context(), meta.get(), filter));
  auto exec = std::make_unique<PlanExecutor>(engine_, std::move(snapshot), std::move(root));
  return Cursor(std::move(exec));
}

namespace {

// Record keys of the documents matching `filter` now (at most `limit`; 0 =
// all), read from a snapshot. Writers then lock and re-read each one.
StatusOr<std::vector<std::string>> FindTargets(const std::shared_ptr<const Engine>& engine,
                                               const CollectionMeta* meta, DocumentView filter,
                                               size_t limit) {
  internal::SnapshotHolder snapshot(engine);
  ROCKDOC_ASSIGN_OR_RETURN(auto root, PlanFilter(snapshot.context(), meta, filter));
  std::vector<std::string> keys;
  while (limit == 0 || keys.size() < limit) {
    internal::WorkingMember* out = nullptr;
    internal::StageState st = root->Work(&out);
    if (st == internal::StageState::kAdvanced) {
      keys.emplace_back(out->record_key);
    } else if (st == internal::StageState::kEof) {
      break;
    } else if (st == internal::StageState::kFailure) {
      return root->status();
    }
  }
  return keys;
}

}  // namespace

namespace {

StatusOr<DeleteResult> DeleteImpl(const std::shared_ptr<Engine>& engine, const std::string& db,
                                  const std::string& name, DocumentView filter, bool multi) {
  auto use = engine->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(filter.bytes()));
  ROCKDOC_ASSIGN_OR_RETURN(auto guard, CollectionWriteGuard::Acquire(*engine, db, name, false));
  DeleteResult result;
  if (guard.meta() == nullptr) return result;
  ROCKDOC_ASSIGN_OR_RETURN(auto keys, FindTargets(engine, guard.meta(), filter, multi ? 0 : 1));
  std::unique_ptr<rocksdb::Transaction> txn;
  size_t in_txn = 0;
  for (const std::string& key : keys) {
    if (!txn) txn = engine->BeginTransaction(std::move(txn));
    ROCKDOC_ASSIGN_OR_RETURN(auto current, internal::LockAndRead(*engine, txn.get(), key));
    if (!current) continue;  // deleted since we looked
    ROCKDOC_RETURN_IF_ERROR(
        internal::DeleteDocument(*engine, txn.get(), *guard.meta(), key, *current));
    ++result.deleted_count;
    if (++in_txn >= kWriteBatchDocuments) {
      ROCKDOC_RETURN_IF_ERROR(internal::Commit(txn.get()));
      txn = engine->BeginTransaction(std::move(txn));
      in_txn = 0;
    }
  }
  if (txn) ROCKDOC_RETURN_IF_ERROR(internal::Commit(txn.get()));
  return result;
}

}  // namespace

StatusOr<DeleteResult> Collection::DeleteOne(DocumentView filter) const {
  return DeleteImpl(engine_, db_name_, name_, filter, false);
}

StatusOr<DeleteResult> Collection::DeleteMany(DocumentView filter) const {
  return DeleteImpl(engine_, db_name_, name_, filter, true);
}

namespace {

// The stored form of `replacement` for a document whose _id is `id`.
StatusOr<Document> MakeReplacement(DocumentView replacement, const Element& id) {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(replacement.bytes()));
  BsonBuilder b;
  b.AppendElement(id);
  for (Element e : replacement) {
    std::string_view key = e.key();
    if (!key.empty() && key[0] == '$') {
      return BadValue("replacement document must not contain update operators: " +
                      std::string(key));
    }
    if (key == "_id") {
      if (CompareValues(e, id) != 0 || e.type() != id.type()) {
        return Status(ErrorCode::kImmutableField,
                      "After applying the update, the (immutable) field '_id' was found to have "
                      "been altered");
      }
      continue;
    }
    b.AppendElement(e);
  }
  Document out = std::move(b).Build();
  if (out.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
    return Status(ErrorCode::kUpdateResultTooLarge,
                  "Resulting document after update is larger than " +
                      std::to_string(kMaxBsonObjectSize));
  }
  return out;
}

}  // namespace

StatusOr<UpdateResult> Collection::ReplaceOne(DocumentView filter, DocumentView replacement,
                                              bool upsert) const {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(filter.bytes()));
  ROCKDOC_ASSIGN_OR_RETURN(auto guard,
                           CollectionWriteGuard::Acquire(*engine_, db_name_, name_, upsert));
  UpdateResult result;
  if (guard.meta() == nullptr) return result;
  const CollectionMeta& meta = *guard.meta();
  ROCKDOC_ASSIGN_OR_RETURN(auto keys, FindTargets(engine_, &meta, filter, 1));
  auto txn = engine_->BeginTransaction();
  if (!keys.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(auto current, internal::LockAndRead(*engine_, txn.get(), keys[0]));
    if (current) {
      result.matched_count = 1;
      ROCKDOC_ASSIGN_OR_RETURN(Document next, MakeReplacement(replacement, *current->begin()));
      if (next == *current) return result;  // nothing changes, nothing written
      ROCKDOC_RETURN_IF_ERROR(
          internal::ReplaceDocument(*engine_, txn.get(), meta, keys[0], *current, next));
      ROCKDOC_RETURN_IF_ERROR(internal::Commit(txn.get()));
      result.modified_count = 1;
      return result;
    }
  }
  if (!upsert) return result;
  // Upsert: the replacement, with the filter's _id when it names one.
  BsonBuilder seed;
  Element filter_id;
  if (IsIdEquality(filter, &filter_id)) seed.AppendElement(filter_id);
  for (Element e : replacement) {
    if (e.key() != "_id" || !filter_id.ok()) seed.AppendElement(e);
  }
  ROCKDOC_ASSIGN_OR_RETURN(Document doc, internal::PrepareInsert(std::move(seed).Build()));
  ROCKDOC_RETURN_IF_ERROR(internal::InsertDocument(*engine_, txn.get(), meta, doc));
  ROCKDOC_RETURN_IF_ERROR(internal::Commit(txn.get()));
  result.upserted_id = Value::FromElement(*doc.begin());
  return result;
}

StatusOr<int64_t> Collection::CountDocuments(DocumentView filter, const CountOptions& /*options*/) const {
  ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, Find(filter));
  int64_t n = 0;
  while (cursor.Next()) ++n;
  ROCKDOC_RETURN_IF_ERROR(cursor.status());
  return n;
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
  return result;
}

}  // namespace rockdoc

#include "storage/write_ops.h"

#include "common/endian.h"
#include "keystring/keystring.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

rocksdb::Slice AsSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

std::string CountDelta(int64_t delta) {
  std::string v;
  AppendLE<int64_t>(&v, delta);
  return v;
}

}  // namespace

Status CheckIdValue(const Element& id) {
  switch (id.type()) {
    case BsonType::kArray:
      return BadValue("can't use an array for _id");
    case BsonType::kRegex:
      return BadValue("can't use a regex for _id");
    case BsonType::kUndefined:
      return BadValue("can't use a undefined for _id");
    default:
      return Status::OK();
  }
}

StatusOr<Document> PrepareInsert(DocumentView doc) {
  // The size check comes first so that the message names the user's size.
  if (doc.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
    return BadValue("object to insert too large. size in bytes: " + std::to_string(doc.size()) +
                    ", max size: " + std::to_string(kMaxBsonObjectSize));
  }
  Status valid = ValidateBson(doc.bytes());
  if (!valid.ok()) return valid;

  Element id;
  bool id_first = false;
  bool first = true;
  for (Element e : doc) {
    std::string_view key = e.key();
    if (!key.empty() && key[0] == '$') {
      return BadValue("Document can't have $ prefixed field names: " + std::string(key));
    }
    if (key == "_id" && !id.ok()) {
      id = e;
      id_first = first;
    }
    first = false;
  }
  if (id.ok()) {
    ROCKDOC_RETURN_IF_ERROR(CheckIdValue(id));
    if (id_first) return Document::AdoptValidated(std::string(doc.bytes()));
  }
  // Put _id first (generating one if absent), as MongoDB stores it.
  BsonBuilder b;
  if (id.ok()) {
    b.AppendElement(id);
  } else {
    b.AppendObjectId("_id", ObjectId::Generate());
  }
  for (Element e : doc) {
    if (e.raw() != id.raw()) b.AppendElement(e);
  }
  Document out = std::move(b).Build();
  if (out.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
    return BadValue("object to insert too large. size in bytes: " + std::to_string(out.size()) +
                    ", max size: " + std::to_string(kMaxBsonObjectSize));
  }
  return out;
}

Status DuplicateKeyError(const CollectionMeta& meta, std::string_view index_name,
                         DocumentView key_values) {
  std::string msg = "E11000 duplicate key error collection: " + meta.full_name() +
                    " index: " + std::string(index_name) + " dup key: " +
                    ToJson(key_values, JsonFormat::kShell);
  return Status(ErrorCode::kDuplicateKey, std::move(msg));
}

std::string DocumentKey(const CollectionMeta& meta, const Element& id) {
  return RecordKey(meta.id, keystring::EncodeValue(id));
}

Status InsertDocument(const Engine& engine, rocksdb::Transaction* txn, const CollectionMeta& meta,
                      DocumentView doc) {
  Element id = *doc.begin();
  std::string key = DocumentKey(meta, id);
  std::string existing;
  rocksdb::Status s =
      txn->GetForUpdate(rocksdb::ReadOptions(), engine.data_cf(), key, &existing);
  if (s.ok()) {
    BsonBuilder dup;
    dup.AppendElement(id);
    return DuplicateKeyError(meta, "_id_", std::move(dup).Build());
  }
  if (!s.IsNotFound()) return FromRocks(s, "insert into " + meta.full_name());
  s = txn->Put(engine.data_cf(), key, AsSlice(doc.bytes()));
  if (!s.ok()) return FromRocks(s, "insert into " + meta.full_name());
  s = txn->MergeUntracked(engine.catalog_cf(), Catalog::CountKey(meta.id), CountDelta(1));
  return FromRocks(s, "count update");
}

Status ReplaceDocument(const Engine& engine, rocksdb::Transaction* txn,
                       const CollectionMeta& meta, std::string_view key, DocumentView /*old_doc*/,
                       DocumentView new_doc) {
  rocksdb::Status s = txn->Put(engine.data_cf(), AsSlice(key), AsSlice(new_doc.bytes()));
  return FromRocks(s, "update in " + meta.full_name());
}

Status DeleteDocument(const Engine& engine, rocksdb::Transaction* txn, const CollectionMeta& meta,
                      std::string_view key, DocumentView /*old_doc*/) {
  rocksdb::Status s = txn->Delete(engine.data_cf(), AsSlice(key));
  if (!s.ok()) return FromRocks(s, "delete from " + meta.full_name());
  s = txn->MergeUntracked(engine.catalog_cf(), Catalog::CountKey(meta.id), CountDelta(-1));
  return FromRocks(s, "count update");
}

StatusOr<std::optional<Document>> LockAndRead(const Engine& engine, rocksdb::Transaction* txn,
                                              std::string_view key) {
  std::string value;
  rocksdb::Status s = txn->GetForUpdate(rocksdb::ReadOptions(), engine.data_cf(), AsSlice(key),
                                        &value);
  if (s.IsNotFound()) return std::optional<Document>();
  if (!s.ok()) return FromRocks(s, "read for update");
  return std::optional<Document>(Document::AdoptValidated(std::move(value)));
}

Status Commit(rocksdb::Transaction* txn) { return FromRocks(txn->Commit(), "commit"); }

}  // namespace rockdoc::internal

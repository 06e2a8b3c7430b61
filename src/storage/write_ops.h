// storage/write_ops.h: the one place where documents are written, so that
// every insert, replace and delete also keeps the collection's count (and,
// with indexes, every index entry) in the same RocksDB transaction.
//
// Thread safety: functions are thread-safe; a transaction is used by one
// thread at a time.
#ifndef ROCKDOC_STORAGE_WRITE_OPS_H_
#define ROCKDOC_STORAGE_WRITE_OPS_H_

#include <rocksdb/utilities/transaction.h>

#include <optional>
#include <string>

#include "catalog/catalog.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"
#include "storage/engine.h"

namespace rockdoc::internal {

// Checks a document for insertion and returns it ready to store: `_id` first
// (an ObjectId generated when absent), within 16 MiB and 100 levels.
StatusOr<Document> PrepareInsert(DocumentView doc);
// BadValue for `_id` values MongoDB refuses (array, regex, undefined).
Status CheckIdValue(const Element& id);
// E11000 message for a duplicate in `index_name` of `meta`'s collection.
Status DuplicateKeyError(const CollectionMeta& meta, std::string_view index_name,
                         DocumentView key_pattern_values);

// The RocksDB key of the document whose _id is `id`.
std::string DocumentKey(const CollectionMeta& meta, const Element& id);

// Within `txn`: inserts `doc` (prepared) unless its _id exists (DuplicateKey).
Status InsertDocument(const Engine& engine, rocksdb::Transaction* txn, const CollectionMeta& meta,
                      DocumentView doc);
// Within `txn`: replaces the stored `old_doc` at `key` by `new_doc` (same _id).
Status ReplaceDocument(const Engine& engine, rocksdb::Transaction* txn,
                       const CollectionMeta& meta, std::string_view key, DocumentView old_doc,
                       DocumentView new_doc);
// Within `txn`: deletes the stored `old_doc` at `key`.
Status DeleteDocument(const Engine& engine, rocksdb::Transaction* txn, const CollectionMeta& meta,
                      std::string_view key, DocumentView old_doc);

// Reads the current version of the document at `key` and locks it for the
// rest of `txn`. nullopt when it no longer exists.
StatusOr<std::optional<Document>> LockAndRead(const Engine& engine, rocksdb::Transaction* txn,
                                              std::string_view key);

// Commits, converting RocksDB's status.
Status Commit(rocksdb::Transaction* txn);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_WRITE_OPS_H_

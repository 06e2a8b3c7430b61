// store/write_ops.h: the one place where documents are written, so that
// every insert, replace and delete also keeps the collection's count (and,
// with indexes, every index entry) in the same RocksDB transaction.
//
// Thread safety: functions are thread-safe; a transaction is used by one
// thread at a time.
#ifndef ROCKDOC_STORE_WRITE_OPS_H_
#define ROCKDOC_STORE_WRITE_OPS_H_

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "index/key_generator.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "store/change_set.h"

namespace rockdoc::internal {

// Checks a document for insertion and returns it ready to store: `_id` first
// (an ObjectId generated when absent), within 16 MiB and 100 levels.
StatusOr<Document> PrepareInsert(DocumentView doc);
// MongoDB's nesting rule for stored documents: at most kMaxNestingDepth
// levels, the top-level document being level 1; empty embedded documents and
// arrays do not count. Overflow (15) otherwise. `doc` must be valid BSON.
Status CheckStorageDepth(DocumentView doc);
// The same limit, checked only for the values at `paths` (the paths an
// update changed: the rest of the document was within the limit before).
Status CheckStorageDepthOfPaths(DocumentView doc, const std::vector<std::string>& paths);
// BadValue for `_id` values MongoDB refuses (array, regex, undefined).
Status CheckIdValue(const Element& id);
// DuplicateKey (11000) for a duplicate in the index `index_name` (key
// pattern `key_pattern`) of `meta`'s collection, as MongoDB's: the message
// "E11000 duplicate key error collection: db.c index: a_1 dup key: { a: 1 }"
// and the extra fields {keyPattern, keyValue} (`key_values`: the key's
// values under the pattern's field names).
// For an index with a collation (`collation`, its spec, not empty), the
// message names it ("index: a_1 collation: { locale: ... } dup key: ...")
// and shows each string of the key, a sort key, as "0x" and its bytes in
// hex, as MongoDB does; keyValue holds the sort keys.
Status DuplicateKeyError(const CollectionMeta& meta, std::string_view index_name,
                         DocumentView key_pattern, DocumentView key_values,
                         DocumentView collation = DocumentView());

// The elements of `array` (or of a document: its fields), counted by
// skipping each in place; `array` must be valid BSON (a stored document's).
// -1 on a type byte no valid BSON has.
int64_t CountStoredElements(DocumentView array);

// The RocksDB key of the document whose _id is `id`.
std::string DocumentKey(const CollectionMeta& meta, const Element& id);

// What writing documents changes besides their keys, gathered per document
// and per batch by the writer (store/write_batcher.h) and written or applied
// when the transaction commits:
//  - `count`: the collection's document count, merged once per batch
//    (AddToCount). One merge per document would not do: every Merge of the
//    same key in a transaction's indexed batch walks all the earlier ones,
//    so a batch of n documents would cost O(n^2) (it was 70% of the time of
//    an InsertMany of 1,000 small documents).
//  - `stats`: the collection's statistics (growth warnings, document sizes,
//    array lengths: stats/collection_statistics.h), applied once the
//    transaction has committed (store/write_batcher.h), when
//    ClientOptions::collect_statistics is on.
struct WriteDelta {
  int64_t count = 0;
  StatisticsDelta stats;
};

// Within `txn`: inserts `doc` (prepared) unless its _id exists (DuplicateKey);
// the count and statistics changes go to *delta. Each of InsertDocument,
// ReplaceDocument and DeleteDocument records its change in the
// transaction's change set (store/change_set.h) for the change log.
//
// The collection's validator is applied (see CheckValidator) unless
// `bypass_validation` (bypassDocumentValidation).
Status InsertDocument(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                      DocumentView doc, WriteDelta* delta, bool bypass_validation = false);
// Within `txn`: replaces the stored `old_doc` at `key` by `new_doc` (same
// _id), after the validator's check as for InsertDocument. `kind` says
// which event the change log records (an update's description, or the
// replacement).
Status ReplaceDocument(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                       std::string_view key, DocumentView old_doc, DocumentView new_doc,
                       WriteDelta* delta, bool bypass_validation = false,
                       ReplaceKind kind = ReplaceKind::kUpdate);

// The collection validator's verdict on `doc`, about to be stored, with
// MongoDB's rules: nothing to check without a validator or with
// validationLevel "off"; under "moderate", an update (`old_doc` given) of a
// document that already failed the validator is not checked. A failing
// document is DocumentValidationFailure (121) "Document failed validation"
// with errInfo {failingDocumentId, details} (query/json_schema.h), or, with
// validationAction "warn", a line in the database's log and OK.
Status CheckValidator(const Engine& engine, const CollectionMeta& meta, DocumentView doc,
                      const DocumentView* old_doc);
// Within `txn`: deletes the stored `old_doc` at `key`. `delta` as for
// InsertDocument.
Status DeleteDocument(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                      std::string_view key, DocumentView old_doc, WriteDelta* delta);

// Whether the index keeps one entry per key value (its entry key holds no
// record id): a second document with the value is a DuplicateKey.
bool OneEntryPerValue(const IndexDescriptor& index);

// Reads the current version of the document at `key` and locks it for the
// rest of `txn`. nullopt when it no longer exists.
StatusOr<std::optional<Document>> LockAndRead(KvTransaction* txn, std::string_view key);

// Checks every secondary index of `meta` against the documents, both ways,
// as of the snapshot in `read_options`: each document's keys have entries
// (with the right _id and type bits), each entry belongs to an existing
// document whose keys include it, and every multikey path met is recorded.
// Problems go to result->errors (valid = false); result->index_entries
// counts the entries seen. The returned Status reports only read failures.
// The caller holds meta.mu (shared) so that the index set matches the
// snapshot. Defined in store/index_validate.cc.
Status ValidateIndexes(const CollectionMeta& meta, const ReadView& view, ValidateResult* result);

// Merges *count_delta (the count changes gathered by InsertDocument and
// DeleteDocument: WriteDelta::count) into `meta`'s count inside `txn`, and
// zeroes it.
Status AddToCount(KvTransaction* txn, const CollectionMeta& meta, int64_t* count_delta);
// AddToCount, then commits.
Status CommitWithCount(KvTransaction* txn, const CollectionMeta& meta, int64_t* count_delta);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORE_WRITE_OPS_H_

// storage/format.h: every key layout of a rockdoc database, in one place
// (as LevelDB's dbformat.h). An on-disk format: storage/README.md explains
// it in prose; change nothing here without a format version bump
// (engine.cc's kFormatVersion).
//
// Column family "default" (data), keys under a 4-byte big-endian prefix id
// owned by one collection or one index (ids are never reused):
//   record        id(BE32) keystring(_id)                 -> BSON document
//   index entry, IndexEntryFormat::kStandard (non-unique btree):
//                 id(BE32) keystring(values) keystring(_id)
//                   -> varint32 len(keystring(_id)), type bits of the values
//   index entry, IndexEntryFormat::kUnique (unique btree):
//                 id(BE32) keystring(values)
//                   -> varint32 len(keystring(_id)), keystring(_id), type bits
//   index entry of a vectorSearch index: kStandard, whose values are one
//   document (the filter fields) and whose "type bits" are the vector's
//   float32 values (little-endian) then that document's type bits
//   (index/vector_search.h)
//   capped order entry (a capped collection's insertion order, under a
//   prefix id of its own, the catalog entry's cappedOrderId):
//                 id(BE32) 0x01 seq(BE64)  -> size(LE64) record key
//   capped sequence (the same document's seq, found from its _id):
//                 id(BE32) 0x02 keystring(_id) -> seq(BE64)
// The index's access method (index/access_method.h) chooses the format.
// keystring(values) uses the index's directions; keystring(_id) is always
// ascending, so an entry's document is RecordKey(collection, id_key). A
// unique index keeps one entry per key value, so uniqueness is a locked
// point read of that key. Dropping a collection or an index is a range
// delete of [PrefixKey(id), PrefixKey(id + 1)).
//
// Column family "catalog":
//   'c' db \0 name   -> the collection's metadata (BSON: id, db, name,
//                       cappedOrderId, options,
//                       indexes with their multikey paths)
//   'v' db \0 name   -> a view's definition (BSON: db, name, viewOn,
//                       pipeline, dependsOn); format 3
//   'n' id(BE32)     -> the collection's document count (int64 LE, kept by
//                       merges written in the documents' own transactions)
//   'q' db           -> the database's query statistics, as persisted at
//                       close (BSON: {entries: [$queryStats documents]})
//   "next_id"        -> the id allocator (uint32 LE)
//   "history_start"  -> the change log's history start (a change log key)
//   "history_off"    -> while the log is off: its last cluster time (BE64)
//
// Column family "changes" (format 4): the change log (storage/change_log.h),
//   cluster time(BE64) op index(BE32) -> an event (BSON, store/change_set.h)
//
// Thread safety: pure functions.
#ifndef ROCKDOC_STORAGE_FORMAT_H_
#define ROCKDOC_STORAGE_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "index/index_descriptor.h"
#include "index/index_entry.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// ---- Data column family ----

// The 4-byte big-endian prefix of everything owned by id `id`.
std::string PrefixKey(uint32_t id);
// The key of the document whose `_id` has keystring `id_key`.
std::string RecordKey(uint32_t collection_id, std::string_view id_key);

// The 4-byte big-endian prefix shared by every entry of the index; the
// index's entries are exactly the keys in [IndexPrefix(i), IndexPrefix(id+1)).
std::string IndexPrefix(const IndexDescriptor& index);

// The RocksDB key / value of the entry of `key` for the document whose
// _id has keystring `id_key`.
std::string IndexEntryKey(const IndexDescriptor& index, std::string_view values_key,
                          std::string_view id_key);
std::string IndexEntryValue(const IndexDescriptor& index, std::string_view id_key,
                            std::string_view type_bits);
// The same, appended to *out (a build's sort writes entries into one buffer).
void AppendIndexEntryKey(const IndexDescriptor& index, std::string_view values_key,
                         std::string_view id_key, std::string* out);
void AppendIndexEntryValue(const IndexDescriptor& index, std::string_view id_key,
                           std::string_view type_bits, std::string* out);

// Splits a stored entry of `index` into its parts. DataCorruptionDetected
// (296) when the key does not carry the index's prefix or the value is
// malformed. O(1): no decoding.
Status ParseIndexEntry(const IndexDescriptor& index, std::string_view key, std::string_view value,
                       IndexEntryView* out);

// A capped collection's order entries: the key of sequence number `seq`,
// the end of the entries, and the value (the document's BSON size and its
// record key); the key of a document's sequence number by its _id.
std::string CappedOrderKey(uint32_t order_id, uint64_t seq);
std::string CappedOrderEnd(uint32_t order_id);
std::string CappedOrderValue(int64_t size, std::string_view record_key);
std::string CappedSeqKey(uint32_t order_id, std::string_view id_key);
// Splits an order entry. DataCorruptionDetected when malformed.
Status ParseCappedOrderEntry(std::string_view key, std::string_view value, uint64_t* seq,
                             int64_t* size, std::string_view* record_key);
StatusOr<uint64_t> ParseCappedSeq(std::string_view value);

// ---- Catalog column family ----

inline constexpr char kCatalogMetaPrefix = 'c';
inline constexpr char kCatalogCountPrefix = 'n';
inline constexpr char kCatalogViewPrefix = 'v';
inline constexpr char kQueryStatsPrefix = 'q';
inline constexpr char kCatalogNextIdKey[] = "next_id";
// Written by a clean close, after the collections' entries got all their
// write statistics: the sequence number of that write (storage/README.md).
inline constexpr char kCatalogStatisticsCleanKey[] = "statistics_clean";
// The change log's history start (storage/change_log.h): the position after
// which it holds every event; absent while the log is off.
inline constexpr char kCatalogChangesStartKey[] = "history_start";
// While the log is off: the last cluster time it gave (BE64), which the
// next history starts after.
inline constexpr char kCatalogChangesOffKey[] = "history_off";

// The key of a collection's metadata entry.
std::string CatalogMetaKey(std::string_view db, std::string_view name);
// The key of a view's definition.
std::string CatalogViewKey(std::string_view db, std::string_view name);
// The key of a collection's document count.
std::string CountKey(uint32_t collection_id);
// The key of a database's query statistics (stats/query_stats.h).
std::string QueryStatsKey(std::string_view db);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_FORMAT_H_

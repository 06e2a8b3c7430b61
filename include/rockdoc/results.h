// rockdoc/results.h: what the client's operations return (InsertOneResult,
// UpdateResult, CollectionStats, GrowthStatistics, ValidateResult, ...) and
// the storage figures and salvage report of a client: plain structs of
// standard types and rockdoc values.
//
// Apart from rockdoc/client.h for the reason rockdoc/options.h is: the
// layers below the API (src/README.md) fill these results and may include
// this header, never rockdoc/client.h. Users include rockdoc/client.h, which
// includes this header.
//
// Thread safety: plain values.
#ifndef ROCKDOC_RESULTS_H_
#define ROCKDOC_RESULTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/export.h"
#include "rockdoc/status.h"

namespace rockdoc {

// Storage figures, from RocksDB's statistics.
struct StorageStats {
  uint64_t bytes_written = 0;       // logical bytes written by writes (keys + values)
  uint64_t bytes_read = 0;          // logical bytes returned by (multi-)gets and iterators
  uint64_t wal_bytes = 0;           // bytes appended to the write-ahead log
  uint64_t flush_bytes = 0;         // bytes written by memtable flushes
  uint64_t compaction_bytes_written = 0;
  uint64_t live_sst_bytes = 0;  // size of the live data files (documents, indexes, catalog)
  // The change log (ClientOptions::change_log): its live data files, and
  // its approximate bytes in all (files and memory), which retention
  // bounds by change_log_max_bytes.
  uint64_t change_log_sst_bytes = 0;
  uint64_t change_log_bytes = 0;
  // The change log's memtables (what it holds in memory until a flush).
  uint64_t change_log_memtable_bytes = 0;
};

// What Client::Salvage found and did.
struct SalvageReport {
  // One line per problem: the file, what was wrong, how many bytes were
  // dropped ("000004.log: dropping 14704 bytes; Corruption: checksum
  // mismatch"). Empty when nothing was wrong.
  std::vector<std::string> findings;
  // Intact log records written after the damage and discarded with it, so
  // that the database is a state it really was in. A record holds one
  // transaction, or several committed together by concurrent writers.
  int64_t discarded_log_records = 0;
  // Copies of the damaged logs, kept in the directory ("000004.log.damaged").
  std::vector<std::string> saved_files;
};

// Every write's result carries the growth warnings it raised (see
// GrowthStatistics; none with collect_statistics off), one line each as
// the database's log has them, e.g. "document growth in shop.orders: the
// document {_id: 7} has an array 'items' of 250 elements (250 or more)...":
// at most kMaxWriteWarnings, then one line saying how many more there were.
inline constexpr size_t kMaxWriteWarnings = 10;

struct InsertOneResult {
  Value inserted_id;
  std::vector<std::string> warnings;
};

// One failed document of a multi-document write.
struct WriteError {
  size_t index = 0;  // position in the input
  Status status;
};

struct InsertManyResult {
  // The _id of every document inserted, in input order.
  std::vector<Value> inserted_ids;
  // Documents that were not inserted, with why. An ordered insert stops at
  // the first one; an unordered insert goes on and reports all.
  std::vector<WriteError> write_errors;
  // Growth warnings (see InsertOneResult).
  std::vector<std::string> warnings;
  size_t inserted_count() const { return inserted_ids.size(); }
  bool ok() const { return write_errors.empty(); }
};

// What Database::CollMod changed that its reply reports: a TTL index's
// expiry before (unset when it was not a TTL index) and after.
struct CollModResult {
  std::optional<int64_t> expire_after_seconds_old;
  std::optional<int64_t> expire_after_seconds_new;
  // Set when index.hidden changed the index (hiding a hidden index, or
  // showing a visible one, changes nothing and sets neither), as MongoDB's
  // hidden_old / hidden_new.
  std::optional<bool> hidden_old;
  std::optional<bool> hidden_new;
};

struct DeleteResult {
  int64_t deleted_count = 0;
};

struct UpdateResult {
  int64_t matched_count = 0;
  int64_t modified_count = 0;
  // Set when an upsert inserted a document.
  std::optional<Value> upserted_id;
  // Growth warnings (see InsertOneResult).
  std::vector<std::string> warnings;
};

// A distribution in power-of-two buckets, as the store keeps them on write:
// counts[i] is how many values lie in [2^i, 2^(i+1)) (counts[0] holds 0 and
// 1; the last bucket everything from 2^24 = 16 MiB up). Percentiles are
// known to the bucket: PercentileBound gives the largest value of the
// bucket that holds it, 2^(i+1) - 1, so the true value is at most that and
// more than half of it.
struct ROCKDOC_EXPORT Log2Histogram {
  std::vector<int64_t> counts;
  int64_t total() const;
  // The bound of the p-th percentile (nearest rank, p in (0, 100]); 0 when
  // the histogram is empty.
  int64_t PercentileBound(double p) const;
  // The bound of the largest value (PercentileBound(100)).
  int64_t MaxBound() const { return PercentileBound(100); }
};

// The lengths of the arrays at one path (see GrowthStatistics::array_lengths).
struct ArrayLengths {
  std::string path;        // "comments", "thread.replies"
  Log2Histogram lengths;   // one value per write that was looked at
  int64_t max = 0;         // the longest length seen, exact
};

// What the store records of a collection's writes when
// ClientOptions::collect_statistics is on, for the schema advisor; kept in
// memory, cheaply, and written into the collection's catalog entry when the
// client closes, so that they survive restarts (and renames; a drop removes
// them). Only committed writes count: a write rolled back or aborted with its
// transaction does not.
struct GrowthStatistics {
  // Growth warnings: writes that made a document reach 50% or 90% of the
  // 16 MiB limit, or one of its arrays 250, 1,000 or 10,000 elements (each
  // also a line in the database's log, and in the write's result:
  // InsertOneResult::warnings, ...). collStats shows them as
  // growthWarnings.
  int64_t size_50_percent_warnings = 0;
  int64_t size_90_percent_warnings = 0;
  int64_t array_250_warnings = 0;
  int64_t array_1000_warnings = 0;
  int64_t array_10000_warnings = 0;
  // Every document's size (BSON bytes), exact under inserts, updates,
  // replacements and deletes. Unknown (false, the counts empty) when not
  // every write since they were last exact is in them: the database was
  // created before rockdoc kept them, was not closed cleanly (Client::Close
  // or the destructor), or was written with collect_statistics off.
  // Collection::Stats, which reads every document anyway, makes them known
  // again (exactly, while writers go on).
  bool document_sizes_known = false;
  Log2Histogram document_sizes;
  // Array lengths by path ("a.b": the arrays of the document and of its
  // embedded documents; arrays inside array elements are not looked at),
  // as seen by the writes that grow a document of 750 bytes or more (the
  // only ones that can make an array reach 250 elements): one value per
  // array of 16 elements or more in the written document. Observations,
  // not the current state: deleting a document takes nothing away. At most
  // 64 paths per collection, the first met; sorted by path.
  std::vector<ArrayLengths> array_lengths;
};

// A collection's sizes, as collStats reports them (bytes).
struct CollectionStats {
  int64_t count = 0;
  // The documents' BSON bytes (MongoDB's `size`), summed by a scan.
  int64_t size = 0;
  // What the documents take in RocksDB (compressed table files and
  // memtables): an estimate, as RocksDB gives it.
  int64_t storage_size = 0;
  // Per index, in listIndexes order, the estimated bytes of its entries.
  // The records are clustered by _id, so `_id_` has no storage of its own: 0.
  std::vector<std::pair<std::string, int64_t>> index_sizes;
  int64_t total_index_size = 0;
  // A capped collection's limits: bytes of documents, and documents (0: none).
  bool capped = false;
  int64_t max_size = 0;
  int64_t max = 0;
  // What the store records of the collection's writes (see
  // GrowthStatistics); the document sizes rebuilt by this call's scan when
  // they were unknown (and statistics are on).
  GrowthStatistics growth;
};

struct ValidateResult {
  bool valid = true;
  int64_t records = 0;       // documents seen
  int64_t index_entries = 0; // secondary index entries seen
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

}  // namespace rockdoc

#endif  // ROCKDOC_RESULTS_H_

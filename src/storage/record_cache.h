// storage/record_cache.h: the coherent in-process cache of records (a
// document's BSON under its record key, storage/format.h) and of unique
// index entries (an equality's key to its record's _id) above RocksDB, so
// that a point read of a hot document is a hash probe instead of a RocksDB
// Get (issue 36; the commit path's design: store/README.md, point 3).
//
// rockdoc is the only writer of its directory, so every commit can keep the
// cache coherent. The protocol, for a record key k:
//  - a commit that changes k marks it *in flux* before RocksDB's commit
//    (MarkInFlux, from the store's ChangeSet::BeforeCommit) and, after it,
//    drops the cached version and raises its shard's *floor* to the
//    commit's stamp (EndInFlux; the stamp is the engine's latest sequence
//    number read after the commit returned: an upper bound of the commit's
//    own, so it can only make the cache more conservative). A failed commit
//    only clears the mark. A reader that finds k in flux reads RocksDB.
//  - A reader at snapshot S (a RocksDB sequence number; kLatest for a read
//    of whatever is latest) uses a cached version only when it is not in
//    flux and its stamp is at or before S: the version was committed at or
//    before S, and any later commit at or before S would have marked k
//    before it committed (so before S was taken) and dropped the version.
//  - A reader that missed and read RocksDB offers what it read (Offer): it
//    is installed only when nothing can have replaced it since, that is
//    when k is not in flux, no DDL is in progress, and the shard's floor
//    (the stamps of every commit that changed a key of the shard, and the
//    sequence at open) is at or before the sequence the read began at. Its
//    stamp is the sequence the read ended at (at or after the version's
//    commit). Inserts need no mark: a key that did not exist has no cached
//    version, and the version a reader later offers is stamped after it.
//  - DDL that removes or bulk-loads data keys outside transactions (drops,
//    index builds: Engine::DeleteRange, BulkLoad) brackets its write with BeginInvalidateAll/EndInvalidateAll: no hit
//    and no install between them, and every cached version dropped at the
//    end.
// Readers inside a transaction never use the cache (they must see their own
// writes): ReadView::GetRecord goes to RocksDB for them.
//
// Memory: ClientOptions::record_cache_bytes, split over kShards shards, each
// an LRU list; an entry is charged its key, its value and kEntryOverhead. An
// entry in flux is never evicted. The cache starts empty at every open, so a
// crash leaves nothing stale behind.
//
// Thread safety: all members are thread-safe (one mutex per shard).
#ifndef ROCKDOC_STORAGE_RECORD_CACHE_H_
#define ROCKDOC_STORAGE_RECORD_CACHE_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace rockdoc::internal {

// Benchmarks' A/B switch (bench/compare_bench.cc --ab record_cache): false
// makes every read skip the cache (no lookup, no install) while commits
// keep it coherent as ever, so turning it back on serves nothing stale.
void SetRecordCacheReadsEnabled(bool enabled);
bool RecordCacheReadsEnabled();

class RecordCache {
 public:
  // A reader with no snapshot: every committed version not in flux is
  // visible to it.
  static constexpr uint64_t kLatest = UINT64_MAX;
  static constexpr size_t kShards = 32;
  // What an entry costs besides its key and value (list node, hash node,
  // the shared string's control block), charged against the budget.
  static constexpr size_t kEntryOverhead = 160;

  // `budget_bytes` > 0; `open_sequence`: the engine's sequence at open (every
  // commit before the cache existed is at or before it).
  RecordCache(size_t budget_bytes, uint64_t open_sequence);
  RecordCache(const RecordCache&) = delete;
  RecordCache& operator=(const RecordCache&) = delete;

  // The version of `key` a reader at `snapshot` may use, or null (a miss).
  std::shared_ptr<const std::string> Lookup(std::string_view key, uint64_t snapshot);
  // Installs `value` of `key`, read from RocksDB by a read that began at
  // sequence `read_from` (its snapshot, or the latest sequence before a read
  // without one) and ended at `stamp` (the same for a snapshot read), when
  // nothing can have replaced it since; otherwise does nothing.
  void Offer(std::string_view key, std::string_view value, uint64_t read_from, uint64_t stamp);

  // A commit that changes `key` is about to happen.
  void MarkInFlux(std::string_view key);
  // That commit ended (`committed`: it succeeded; `stamp`: the latest
  // sequence after it, only when committed).
  void EndInFlux(std::string_view key, bool committed, uint64_t stamp);

  // Brackets a write of data keys outside transactions (DDL).
  void BeginInvalidateAll();
  // `stamp`: the latest sequence after that write.
  void EndInvalidateAll(uint64_t stamp);

  struct Counters {
    int64_t hits = 0;
    int64_t misses = 0;
    int64_t installs = 0;
    int64_t evictions = 0;
    int64_t entries = 0;
    int64_t bytes = 0;
  };
  Counters counters() const;
  size_t budget_bytes() const { return budget_bytes_; }
  // Evicts every version not in flux (tests: a forced eviction).
  void EvictAll();

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const std::string> value;  // null: none (a mark alone)
    uint64_t stamp = 0;                        // of `value`
    uint32_t in_flux = 0;                      // commits in progress
    size_t charge = 0;
  };
  struct Shard {
    mutable Mutex mu;
    // Most recently used first. The map's keys view the entries' keys.
    std::list<Entry> lru ABSL_GUARDED_BY(mu);
    std::unordered_map<std::string_view, std::list<Entry>::iterator> map ABSL_GUARDED_BY(mu);
    uint64_t floor ABSL_GUARDED_BY(mu) = 0;
    size_t bytes ABSL_GUARDED_BY(mu) = 0;
    int64_t hits ABSL_GUARDED_BY(mu) = 0;
    int64_t misses ABSL_GUARDED_BY(mu) = 0;
    int64_t installs ABSL_GUARDED_BY(mu) = 0;
    int64_t evictions ABSL_GUARDED_BY(mu) = 0;
  };

  Shard& ShardOf(std::string_view key) {
    return shards_[std::hash<std::string_view>()(key) % kShards];
  }
  static void Charge(Shard& s, Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  static void Erase(Shard& s, std::list<Entry>::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  // Drops every version; marks stay (without their versions).
  static void DropVersions(Shard& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  // Evicts from the cold end until the shard fits its budget.
  void EvictToFit(Shard& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  const size_t budget_bytes_;
  const size_t shard_budget_;
  std::atomic<int> invalidating_{0};  // DDL writes in progress
  std::array<Shard, kShards> shards_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_RECORD_CACHE_H_

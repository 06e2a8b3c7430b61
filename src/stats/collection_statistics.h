// stats/collection_statistics.h: what the store records of a collection's
// writes (ClientOptions::collect_statistics), for the schema advisor:
//   - growth warnings: writes that made a document reach 50% / 90% of the
//     16 MiB limit, or one of its arrays 250 / 1,000 / 10,000 elements;
//   - document sizes: every stored document's size, as a count per
//     power-of-two bucket, exact under inserts, replacements and deletes;
//   - array lengths: per path (at most kMaxArrayPaths), the lengths of the
//     arrays of 16 elements or more seen by writes that grow a document of
//     750 bytes or more, per power-of-two bucket, and the longest.
// The store builds a StatisticsDelta per document it writes
// (store/write_ops.h) and applies the deltas of a transaction once it has
// committed, so a write rolled back, retried after a conflict or aborted
// with its multi-document transaction counts nothing. The catalog persists
// them in the collection's entry when the client closes (Catalog::
// PersistUsage, storage/README.md), so they survive restarts and renames;
// a drop removes them with the entry.
//
// The document sizes are "unknown" when the writes since they were last
// exact are not all in them: the database predates them, was not closed
// cleanly (writes after the last persisted entry were lost with the
// process), or was written with collect_statistics off. Collection::Stats
// rebuilds unknown sizes from the scan it makes anyway, exactly, while
// writers go on (BeginRebuild).
//
// Thread safety: all members are thread-safe. Lock order: commit_mu, then
// the leaf mu_ (store/collection_lock.h places commit_mu after the
// collection lock).
#ifndef ROCKDOC_STATS_COLLECTION_STATISTICS_H_
#define ROCKDOC_STATS_COLLECTION_STATISTICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "rockdoc/document.h"
#include "rockdoc/options.h"
#include "rockdoc/results.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// Power-of-two buckets: bucket i holds [2^i, 2^(i+1)); bucket 0 also 0, the
// last everything from 2^24 (16 MiB, the largest document) up.
inline constexpr size_t kLog2Buckets = 25;
size_t Log2Bucket(int64_t value);
using Log2Counts = std::array<int64_t, kLog2Buckets>;

// Growth warnings, in this order (the thresholds are store/write_ops.cc's).
inline constexpr size_t kGrowthThresholds = 5;
// Array paths recorded per collection: the first ones met.
inline constexpr size_t kMaxArrayPaths = 64;

// One growth warning a write raised: its kind (0..kGrowthThresholds-1) and
// its message ("document growth in db.c: the document {_id: 1} ...").
struct GrowthWarning {
  size_t kind = 0;
  std::string message;
};

// What writes change in a collection's statistics, applied once committed.
struct StatisticsDelta {
  // Documents per size bucket: +1 in the new size's bucket, -1 in the old.
  Log2Counts sizes{};
  bool sizes_changed = false;
  std::vector<GrowthWarning> warnings;
  struct ArrayLength {
    std::string path;
    int64_t length = 0;
  };
  std::vector<ArrayLength> arrays;

  void AddSize(int64_t bytes, int64_t n) {
    sizes[Log2Bucket(bytes)] += n;
    sizes_changed = true;
  }
  bool empty() const { return !sizes_changed && warnings.empty() && arrays.empty(); }
  // Moves `other`'s changes into this one (a document's into its batch's).
  void Merge(StatisticsDelta&& other);
  void Clear();
};

class CollectionStatistics {
 public:
  // ---- Writers (store/) ----

  // Held shared by a writer around its commit and the Apply that follows,
  // while the document sizes are unknown; exclusive while a rebuild takes
  // its snapshot. A writer that finds the sizes known needs no lock: they
  // become unknown again only in a client with statistics off, which
  // never rebuilds.
  mutable SharedMutex commit_mu;
  bool sizes_known() const { return sizes_known_.load(std::memory_order_acquire); }

  // Applies a committed delta. *counts (when not null) receives, for each
  // of delta.warnings in order, how many warnings of its kind there have
  // been, this one included (the log's "first ten, then powers of two").
  void Apply(const StatisticsDelta& delta, std::vector<int64_t>* counts = nullptr);
  // Writes were made without statistics: the sizes are unknown from here.
  void MarkSizesUnknown();

  // ---- Rebuilding unknown sizes (Collection::Stats) ----

  // Starts a rebuild when the sizes are unknown and none runs: returns its
  // token (0: nothing to do). The caller holds commit_mu exclusively while
  // it calls this and takes the snapshot it then scans, so every writer's
  // commit is either in that snapshot and applied before, or after it and
  // counted since.
  uint64_t BeginRebuild() ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu);
  // The sizes of the snapshot's documents, scanned: they plus what writers
  // committed since are the sizes now, known.
  void FinishRebuild(uint64_t token, const Log2Counts& at_snapshot);
  void AbandonRebuild(uint64_t token);

  // ---- Persistence (the catalog entry's "statistics") ----

  // True when something changed since the entry was last written.
  bool ChangedSincePersisted() const;
  // Appends the statistics as the document `key`; returns the version
  // written, for MarkPersisted once the entry is.
  uint64_t AppendTo(BsonBuilder* b, std::string_view key) const;
  void MarkPersisted(uint64_t version);
  // Reads what AppendTo wrote. DataCorruptionDetected when malformed.
  Status Load(const Element& e);
  // At load: the sizes are not known to be exact (see the header comment),
  // or (count == 0) known to be none. Either way the entry is rewritten.
  void SetLoadedSizes(bool known_empty);

  // ---- Readers ----

  // A copy of the figures, as the public API shows them.
  GrowthStatistics Snapshot() const;
  // The growth warning counts alone.
  std::array<int64_t, kGrowthThresholds> warning_counts() const;

 private:
  struct ArrayEntry {
    Log2Counts lengths{};
    int64_t max = 0;
  };
  void Changed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    version_.fetch_add(1, std::memory_order_relaxed);
  }

  std::atomic<bool> sizes_known_{true};  // written under mu_
  std::atomic<uint64_t> version_{0};     // bumped under mu_ by every change
  std::atomic<uint64_t> persisted_version_{0};
  mutable Mutex mu_;
  Log2Counts sizes_ ABSL_GUARDED_BY(mu_){};
  // While a rebuild runs: its token, and the sizes committed since its
  // snapshot.
  uint64_t rebuild_token_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_token_ ABSL_GUARDED_BY(mu_) = 1;
  Log2Counts since_snapshot_ ABSL_GUARDED_BY(mu_){};
  std::array<int64_t, kGrowthThresholds> warnings_ ABSL_GUARDED_BY(mu_){};
  std::map<std::string, ArrayEntry, std::less<>> arrays_ ABSL_GUARDED_BY(mu_);
};

// The public figures of a histogram (rockdoc/results.h's Log2Histogram).
Log2Histogram ToHistogram(const Log2Counts& counts);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STATS_COLLECTION_STATISTICS_H_

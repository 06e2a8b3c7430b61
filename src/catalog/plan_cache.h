// catalog/plan_cache.h: a collection's plan cache, MongoDB's PlanCache: for
// a query shape (the filter with its literals replaced by their types, the
// sort, the projection and the flags that change a plan), which access path
// the planner chose last time, so that the next query of that shape builds
// that plan alone: no enumeration of the other candidates and no trial race.
//
// The cache holds a choice, never bounds nor stages: the planner rebuilds
// the chosen path from the new query's own values and checks again that
// the index may answer it (not hidden, still there), so a cached choice can
// make a plan slower than the race would have, never wrong. The planner
// decides what it caches (planner/query_planner.cc: not a hinted, min/max,
// $natural or tailable query, nor a shape whose answer depends on values,
// as one over a partial or sparse index).
//
// Invalidation: `Clear` on every change of the collection's indexes
// (`CollectionMeta::set_indexes`: create, drop; collMod's hide, unhide and
// TTL change call it too); a dropped or renamed collection's metadata goes
// with its cache. An insertion made by a planner that took its index set
// before a `Clear` is dropped (`epoch`), so a stale choice never outlives
// the change.
//
// Thread safety: all members are thread-safe.
#ifndef ROCKDOC_CATALOG_PLAN_CACHE_H_
#define ROCKDOC_CATALOG_PLAN_CACHE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace rockdoc::internal {

// The access path a plan of one shape took.
struct CachedPlanChoice {
  enum class Kind : uint8_t { kCollScan, kClustered, kIndex };
  Kind kind = Kind::kCollScan;
  std::string index_name;  // kIndex
  // How many candidates the race had when the choice was made ($planCacheStats-like figure).
  int64_t candidates = 1;
};

class PlanCache {
 public:
  // MongoDB's internalQueryCacheMaxEntriesPerCollection. Past it, the whole
  // cache is dropped (a simpler rule than MongoDB's LRU; shapes that repeat
  // come back at once).
  static constexpr size_t kMaxEntries = 5000;

  // The choice cached for `shape`, if any.
  std::optional<CachedPlanChoice> Lookup(uint64_t shape) const {
    MutexLock g(&mu_);
    auto it = entries_.find(shape);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }

  // The epoch to pass to `Insert`: read it before taking the index set that
  // the choice is made over.
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  // Caches `choice` for `shape`, unless the cache was cleared since `epoch`.
  void Insert(uint64_t shape, CachedPlanChoice choice, uint64_t epoch) {
    MutexLock g(&mu_);
    if (epoch != epoch_.load(std::memory_order_relaxed)) return;
    if (entries_.size() >= kMaxEntries && entries_.count(shape) == 0) entries_.clear();
    entries_[shape] = std::move(choice);
  }

  void Clear() {
    MutexLock g(&mu_);
    entries_.clear();
    epoch_.fetch_add(1, std::memory_order_acq_rel);
  }

  // Every entry, in no particular order (tests; $planCacheStats-like views).
  std::vector<std::pair<uint64_t, CachedPlanChoice>> Entries() const {
    MutexLock g(&mu_);
    return {entries_.begin(), entries_.end()};
  }

  size_t size() const {
    MutexLock g(&mu_);
    return entries_.size();
  }

 private:
  mutable Mutex mu_;
  std::unordered_map<uint64_t, CachedPlanChoice> entries_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> epoch_{0};
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_CATALOG_PLAN_CACHE_H_

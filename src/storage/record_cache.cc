#include "storage/record_cache.h"

#include <algorithm>

namespace rockdoc::internal {

namespace {
std::atomic<bool> g_reads_enabled{true};
}  // namespace

void SetRecordCacheReadsEnabled(bool enabled) {
  g_reads_enabled.store(enabled, std::memory_order_relaxed);
}
bool RecordCacheReadsEnabled() { return g_reads_enabled.load(std::memory_order_relaxed); }

RecordCache::RecordCache(size_t budget_bytes, uint64_t open_sequence)
    : budget_bytes_(budget_bytes), shard_budget_(std::max<size_t>(1, budget_bytes / kShards)) {
  for (Shard& s : shards_) {
    MutexLock lock(&s.mu);
    s.floor = open_sequence;
  }
}

void RecordCache::Charge(Shard& s, Entry& e) {
  s.bytes -= e.charge;
  e.charge = e.key.size() + (e.value ? e.value->size() : 0) + kEntryOverhead;
  s.bytes += e.charge;
}

void RecordCache::Erase(Shard& s, std::list<Entry>::iterator it) {
  s.bytes -= it->charge;
  s.map.erase(std::string_view(it->key));
  s.lru.erase(it);
}

void RecordCache::EvictToFit(Shard& s) {
  // Entries in flux are skipped (moved to the front): at most one pass.
  size_t skipped = 0;
  while (s.bytes > shard_budget_ && !s.lru.empty() && skipped < s.lru.size()) {
    auto last = std::prev(s.lru.end());
    if (last->in_flux != 0) {
      s.lru.splice(s.lru.begin(), s.lru, last);
      ++skipped;
      continue;
    }
    Erase(s, last);
    ++s.evictions;
  }
}

std::shared_ptr<const std::string> RecordCache::Lookup(std::string_view key, uint64_t snapshot) {
  Shard& s = ShardOf(key);
  MutexLock lock(&s.mu);
  auto found = s.map.find(key);
  if (found == s.map.end()) {
    ++s.misses;
    return nullptr;
  }
  Entry& e = *found->second;
  if (e.in_flux != 0 || e.value == nullptr || e.stamp > snapshot || invalidating_.load() != 0) {
    ++s.misses;
    return nullptr;
  }
  s.lru.splice(s.lru.begin(), s.lru, found->second);
  ++s.hits;
  return e.value;
}

void RecordCache::Offer(std::string_view key, std::string_view value, uint64_t read_from,
                        uint64_t stamp) {
  // A value that would take a large part of its shard is not worth it.
  if (key.size() + value.size() + kEntryOverhead > shard_budget_ / 4) return;
  // The copy is made outside the lock.
  auto copy = std::make_shared<const std::string>(value);
  Shard& s = ShardOf(key);
  MutexLock lock(&s.mu);
  if (invalidating_.load() != 0 || s.floor > read_from) return;
  // An entry is a cached version (nothing to add) or a mark (in flux).
  if (s.map.contains(key)) return;
  s.lru.push_front(Entry{std::string(key), std::move(copy), stamp, 0, 0});
  s.map.emplace(std::string_view(s.lru.front().key), s.lru.begin());
  Charge(s, s.lru.front());
  ++s.installs;
  EvictToFit(s);
}

void RecordCache::MarkInFlux(std::string_view key) {
  Shard& s = ShardOf(key);
  MutexLock lock(&s.mu);
  auto found = s.map.find(key);
  if (found == s.map.end()) {
    s.lru.push_front(Entry{std::string(key), nullptr, 0, 1, 0});
    s.map.emplace(std::string_view(s.lru.front().key), s.lru.begin());
    Charge(s, s.lru.front());
    // Marks are never evicted; versions may make room for them.
    EvictToFit(s);
    return;
  }
  ++found->second->in_flux;
}

void RecordCache::EndInFlux(std::string_view key, bool committed, uint64_t stamp) {
  Shard& s = ShardOf(key);
  MutexLock lock(&s.mu);
  if (committed) s.floor = std::max(s.floor, stamp);
  auto found = s.map.find(key);
  if (found == s.map.end()) return;  // no mark (never: marks are not evicted)
  Entry& e = *found->second;
  if (e.in_flux > 0) --e.in_flux;
  if (committed) e.value = nullptr;
  if (e.value == nullptr && e.in_flux == 0) {
    Erase(s, found->second);
  } else {
    Charge(s, e);
  }
}

void RecordCache::BeginInvalidateAll() { invalidating_.fetch_add(1); }

void RecordCache::DropVersions(Shard& s) {
  for (auto it = s.lru.begin(); it != s.lru.end();) {
    auto next = std::next(it);
    if (it->in_flux == 0) {
      Erase(s, it);
    } else {
      it->value = nullptr;  // a mark stays until its commit ends
      Charge(s, *it);
    }
    it = next;
  }
}

void RecordCache::EndInvalidateAll(uint64_t stamp) {
  for (Shard& s : shards_) {
    MutexLock lock(&s.mu);
    s.floor = std::max(s.floor, stamp);
    DropVersions(s);
  }
  invalidating_.fetch_sub(1);
}

void RecordCache::EvictAll() {
  for (Shard& s : shards_) {
    MutexLock lock(&s.mu);
    const size_t before = s.lru.size();
    DropVersions(s);
    s.evictions += static_cast<int64_t>(before - s.lru.size());
  }
}

RecordCache::Counters RecordCache::counters() const {
  Counters c;
  for (const Shard& s : shards_) {
    MutexLock lock(&s.mu);
    c.hits += s.hits;
    c.misses += s.misses;
    c.installs += s.installs;
    c.evictions += s.evictions;
    c.entries += static_cast<int64_t>(s.lru.size());
    c.bytes += static_cast<int64_t>(s.bytes);
  }
  return c;
}

}  // namespace rockdoc::internal

#include "stats/collection_statistics.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace rockdoc::internal {

size_t Log2Bucket(int64_t value) {
  if (value <= 1) return 0;
  const size_t b = static_cast<size_t>(std::bit_width(static_cast<uint64_t>(value))) - 1;
  return std::min(b, kLog2Buckets - 1);
}

void StatisticsDelta::Merge(StatisticsDelta&& other) {
  if (other.sizes_changed) {
    for (size_t i = 0; i < kLog2Buckets; ++i) sizes[i] += other.sizes[i];
    sizes_changed = true;
  }
  for (GrowthWarning& w : other.warnings) warnings.push_back(std::move(w));
  for (ArrayLength& a : other.arrays) arrays.push_back(std::move(a));
}

void StatisticsDelta::Clear() {
  if (sizes_changed) sizes.fill(0);
  sizes_changed = false;
  warnings.clear();
  arrays.clear();
}

void CollectionStatistics::Apply(const StatisticsDelta& delta, std::vector<int64_t>* counts) {
  if (delta.empty()) return;
  MutexLock g(&mu_);
  if (delta.sizes_changed) {
    for (size_t i = 0; i < kLog2Buckets; ++i) sizes_[i] += delta.sizes[i];
    if (rebuild_token_ != 0) {
      for (size_t i = 0; i < kLog2Buckets; ++i) since_snapshot_[i] += delta.sizes[i];
    }
  }
  for (const GrowthWarning& w : delta.warnings) {
    const int64_t n = ++warnings_[w.kind];
    if (counts != nullptr) counts->push_back(n);
  }
  for (const StatisticsDelta::ArrayLength& a : delta.arrays) {
    auto it = arrays_.find(a.path);
    if (it == arrays_.end()) {
      if (arrays_.size() >= kMaxArrayPaths) continue;
      it = arrays_.emplace(a.path, ArrayEntry()).first;
    }
    ++it->second.lengths[Log2Bucket(a.length)];
    it->second.max = std::max(it->second.max, a.length);
  }
  Changed();
}

void CollectionStatistics::MarkSizesUnknown() {
  if (!sizes_known_.load(std::memory_order_relaxed)) return;
  MutexLock g(&mu_);
  sizes_known_.store(false, std::memory_order_release);
  sizes_.fill(0);
  Changed();
}

uint64_t CollectionStatistics::BeginRebuild() {
  MutexLock g(&mu_);
  if (sizes_known_.load(std::memory_order_relaxed) || rebuild_token_ != 0) return 0;
  rebuild_token_ = next_token_++;
  since_snapshot_.fill(0);
  return rebuild_token_;
}

void CollectionStatistics::FinishRebuild(uint64_t token, const Log2Counts& at_snapshot) {
  MutexLock g(&mu_);
  if (token == 0 || token != rebuild_token_) return;
  for (size_t i = 0; i < kLog2Buckets; ++i) sizes_[i] = at_snapshot[i] + since_snapshot_[i];
  rebuild_token_ = 0;
  sizes_known_.store(true, std::memory_order_release);
  Changed();
}

void CollectionStatistics::AbandonRebuild(uint64_t token) {
  MutexLock g(&mu_);
  if (token != 0 && token == rebuild_token_) rebuild_token_ = 0;
}

bool CollectionStatistics::ChangedSincePersisted() const {
  return version_.load(std::memory_order_relaxed) !=
         persisted_version_.load(std::memory_order_relaxed);
}

namespace {

void AppendCounts(BsonBuilder* b, std::string_view key, const Log2Counts& counts) {
  b->OpenArray(key);
  for (int64_t n : counts) b->AppendInt64("", n);
  b->Close();
}

Status Damaged(std::string_view what) {
  return Status(ErrorCode::kDataCorruptionDetected,
                "catalog entry has bad statistics: " + std::string(what));
}

Status LoadCounts(const Element& e, Log2Counts* out) {
  if (!e.IsArray()) return Damaged("a histogram is not an array");
  size_t i = 0;
  for (Element n : e.Array()) {
    if (i >= kLog2Buckets || n.type() != BsonType::kInt64 || n.Int64() < 0) {
      return Damaged("a histogram's bucket");
    }
    (*out)[i++] = n.Int64();
  }
  if (i != kLog2Buckets) return Damaged("a histogram's length");
  return Status::OK();
}

}  // namespace

// {sizesKnown: bool, sizes: [25 x int64] (when known), growthWarnings:
//  [5 x int64], arrays: [{path, lengths: [25 x int64], max}]}
uint64_t CollectionStatistics::AppendTo(BsonBuilder* b, std::string_view key) const {
  MutexLock g(&mu_);
  const bool known = sizes_known_.load(std::memory_order_relaxed);
  b->OpenDocument(key);
  b->AppendBool("sizesKnown", known);
  if (known) AppendCounts(b, "sizes", sizes_);
  b->OpenArray("growthWarnings");
  for (int64_t n : warnings_) b->AppendInt64("", n);
  b->Close();
  b->OpenArray("arrays");
  for (const auto& [path, entry] : arrays_) {
    b->OpenDocument("");
    b->AppendString("path", path);
    AppendCounts(b, "lengths", entry.lengths);
    b->AppendInt64("max", entry.max);
    b->Close();
  }
  b->Close();
  b->Close();
  return version_.load(std::memory_order_relaxed);
}

void CollectionStatistics::MarkPersisted(uint64_t version) {
  persisted_version_.store(version, std::memory_order_relaxed);
}

Status CollectionStatistics::Load(const Element& e) {
  if (!e.IsDocument()) return Damaged("not a document");
  DocumentView d = e.Document();
  Element known = d.Get("sizesKnown"), warnings = d.Get("growthWarnings"),
          arrays = d.Get("arrays");
  if (!known.IsBool() || !warnings.IsArray() || !arrays.IsArray()) {
    return Damaged("sizesKnown, growthWarnings or arrays");
  }
  MutexLock g(&mu_);
  sizes_.fill(0);
  if (known.Bool()) ROCKDOC_RETURN_IF_ERROR(LoadCounts(d.Get("sizes"), &sizes_));
  sizes_known_.store(known.Bool(), std::memory_order_release);
  size_t i = 0;
  for (Element n : warnings.Array()) {
    if (i >= kGrowthThresholds || n.type() != BsonType::kInt64) return Damaged("growthWarnings");
    warnings_[i++] = n.Int64();
  }
  arrays_.clear();
  for (Element a : arrays.Array()) {
    if (!a.IsDocument()) return Damaged("an array entry");
    Element path = a.Document().Get("path"), max = a.Document().Get("max");
    if (!path.IsString() || max.type() != BsonType::kInt64) return Damaged("an array entry");
    ArrayEntry entry;
    ROCKDOC_RETURN_IF_ERROR(LoadCounts(a.Document().Get("lengths"), &entry.lengths));
    entry.max = max.Int64();
    arrays_[std::string(path.String())] = entry;
  }
  return Status::OK();
}

void CollectionStatistics::SetLoadedSizes(bool known_empty) {
  MutexLock g(&mu_);
  sizes_.fill(0);
  sizes_known_.store(known_empty, std::memory_order_release);
  Changed();
}

Log2Histogram ToHistogram(const Log2Counts& counts) {
  Log2Histogram h;
  h.counts.assign(counts.begin(), counts.end());
  return h;
}

GrowthStatistics CollectionStatistics::Snapshot() const {
  GrowthStatistics out;
  MutexLock g(&mu_);
  int64_t* w[] = {&out.size_50_percent_warnings, &out.size_90_percent_warnings,
                  &out.array_250_warnings, &out.array_1000_warnings, &out.array_10000_warnings};
  for (size_t i = 0; i < kGrowthThresholds; ++i) *w[i] = warnings_[i];
  out.document_sizes_known = sizes_known_.load(std::memory_order_relaxed);
  if (out.document_sizes_known) out.document_sizes = ToHistogram(sizes_);
  for (const auto& [path, entry] : arrays_) {
    out.array_lengths.push_back(ArrayLengths{path, ToHistogram(entry.lengths), entry.max});
  }
  return out;
}

std::array<int64_t, kGrowthThresholds> CollectionStatistics::warning_counts() const {
  MutexLock g(&mu_);
  return warnings_;
}

}  // namespace rockdoc::internal

namespace rockdoc {

int64_t Log2Histogram::total() const {
  int64_t n = 0;
  for (int64_t c : counts) n += c;
  return n;
}

int64_t Log2Histogram::PercentileBound(double p) const {
  const int64_t n = total();
  if (n <= 0) return 0;
  // Nearest rank: the smallest value with at least ceil(p% of n) at or below it.
  const int64_t rank =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(p / 100.0 * static_cast<double>(n))), 1, n);
  int64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) return (int64_t{2} << i) - 1;
  }
  return (int64_t{2} << (counts.size() - 1)) - 1;
}

}  // namespace rockdoc

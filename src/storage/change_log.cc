#include "storage/change_log.h"

#include <rocksdb/utilities/transaction_db.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>

#include "common/clock.h"
#include "common/endian.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/kv.h"
#include "storage/rocks.h"

namespace rockdoc::internal {

namespace {

rocksdb::Slice AsSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

// The cluster time of the wall clock now: its second, increment 0.
uint64_t WallClusterTime() {
  return static_cast<uint64_t>(std::max<int64_t>(WallMillis() / 1000, 0)) << 32;
}

// The cluster time of the log's last event; 0 when it has none.
StatusOr<uint64_t> LastEventTime(const EngineRocks& rocks) {
  std::unique_ptr<rocksdb::Iterator> it(
      rocks.base->NewIterator(rocksdb::ReadOptions(), rocks.changes_cf));
  it->SeekToLast();
  if (it->Valid()) {
    ROCKDOC_ASSIGN_OR_RETURN(ChangePosition p, ParseChangeLogKey(it->key().ToStringView()));
    return p.cluster_time;
  }
  ROCKDOC_RETURN_IF_ERROR(FromRocks(it->status(), "reading the change log"));
  return uint64_t{0};
}

// The whole key space of the log.
const ChangePosition kFirstPosition{};
const ChangePosition kLastPosition{std::numeric_limits<uint64_t>::max(),
                                   std::numeric_limits<uint32_t>::max()};

// Writes `batch` (the log's and the catalog's keys, which no transaction
// locks) outside the transactions' concurrency control.
Status WriteDirect(const EngineRocks& rocks, rocksdb::WriteBatch* batch, bool sync,
                   const char* context) {
  rocksdb::WriteOptions wo = rocks.write_options;
  wo.sync = sync;
  rocksdb::TransactionDBWriteOptimizations opt;
  opt.skip_concurrency_control = true;
  return FromRocks(rocks.db->Write(wo, opt, batch), context);
}

// Adds the deletion of every event to `batch`.
Status ClearEvents(const EngineRocks& rocks, rocksdb::WriteBatch* batch, const char* context) {
  return FromRocks(batch->DeleteRange(rocks.changes_cf, ChangeLogKey(kFirstPosition),
                                      ChangeLogKey(kLastPosition)),
                   context);
}

}  // namespace

std::string ChangeLogKey(const ChangePosition& p) {
  std::string key;
  AppendBE64(&key, p.cluster_time);
  AppendBE32(&key, p.op_index);
  return key;
}

StatusOr<ChangePosition> ParseChangeLogKey(std::string_view key) {
  if (key.size() != 12) {
    return Status(ErrorCode::kDataCorruptionDetected,
                  "a change log key of " + std::to_string(key.size()) + " bytes (12 expected)");
  }
  const auto* p = reinterpret_cast<const uint8_t*>(key.data());
  return ChangePosition{LoadBE64(p), LoadBE32(p + 8)};
}

ChangeLog::ChangeLog(const Engine* engine)
    : engine_(engine),
      max_bytes_(engine->options().change_log_max_bytes),
      min_retention_hours_(engine->options().change_log_min_retention_hours) {}

void ChangeLog::SetRetention(int64_t max_bytes, double min_retention_hours) {
  max_bytes_.store(max_bytes, std::memory_order_relaxed);
  min_retention_hours_.store(min_retention_hours, std::memory_order_relaxed);
  MaybeTrim();
}

void ChangeLog::MaybeTrim() {
  const uint64_t max_bytes = static_cast<uint64_t>(this->max_bytes());
  if (bytes_.load(std::memory_order_relaxed) > max_bytes && trim_mu_.TryLock()) {
    Status s = TrimLocked();
    trim_mu_.Unlock();
    if (!s.ok()) engine_->LogWarning("trimming the change log: " + s.ToString());
  }
}

StatusOr<std::unique_ptr<ChangeLog>> ChangeLog::Open(const Engine* engine) {
  const EngineRocks& rocks = engine->rocks();
  std::unique_ptr<ChangeLog> log(new ChangeLog(engine));
  std::string marker;
  bool found = false;
  ROCKDOC_RETURN_IF_ERROR(engine->ReadMetadata(kCatalogChangesStartKey, &marker, &found));
  ROCKDOC_ASSIGN_OR_RETURN(uint64_t last, LastEventTime(rocks));
  ChangePosition start;
  if (found) {
    ROCKDOC_ASSIGN_OR_RETURN(start, ParseChangeLogKey(marker));
    last = std::max(last, start.cluster_time);
  } else {
    // A new log, or one that was off: whatever events are left are from
    // before a gap, and the history starts now, after every cluster time
    // the log ever gave (so that no old token resumes across the gap).
    std::string off;
    bool was_off = false;
    ROCKDOC_RETURN_IF_ERROR(engine->ReadMetadata(kCatalogChangesOffKey, &off, &was_off));
    if (was_off && off.size() == 8) {
      last = std::max(last, LoadBE64(reinterpret_cast<const uint8_t*>(off.data())) + 1);
    }
    last = std::max(last, WallClusterTime());
    start = ChangePosition{last, std::numeric_limits<uint32_t>::max()};
    constexpr char kContext[] = "starting the change log";
    rocksdb::WriteBatch batch;
    ROCKDOC_RETURN_IF_ERROR(
        FromRocks(batch.Delete(rocks.catalog_cf, kCatalogChangesOffKey), kContext));
    ROCKDOC_RETURN_IF_ERROR(ClearEvents(rocks, &batch, kContext));
    ROCKDOC_RETURN_IF_ERROR(FromRocks(
        batch.Put(rocks.catalog_cf, kCatalogChangesStartKey, ChangeLogKey(start)), kContext));
    ROCKDOC_RETURN_IF_ERROR(WriteDirect(rocks, &batch, !engine->options().in_memory, kContext));
  }
  {
    MutexLock g(&log->seq_mu_);
    log->last_ = last;
  }
  {
    MutexLock g(&log->trim_mu_);
    log->start_ = start;
  }
  log->published_.store(last, std::memory_order_release);
  uint64_t size = 0;
  rocksdb::Range everything(
      rocksdb::Slice(), rocksdb::Slice("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 13));
  rocksdb::SizeApproximationOptions so;
  so.include_memtables = true;
  so.include_files = true;
  if (rocks.base->GetApproximateSizes(so, rocks.changes_cf, &everything, 1, &size).ok()) {
    log->bytes_.store(size, std::memory_order_relaxed);
  }
  return log;
}

StatusOr<bool> ChangeLog::WasOn(const Engine* engine) {
  std::string marker;
  bool found = false;
  ROCKDOC_RETURN_IF_ERROR(engine->ReadMetadata(kCatalogChangesStartKey, &marker, &found));
  return found;
}

Status ChangeLog::Forget(const Engine* engine) {
  const EngineRocks& rocks = engine->rocks();
  std::string marker;
  bool found = false;
  ROCKDOC_RETURN_IF_ERROR(engine->ReadMetadata(kCatalogChangesStartKey, &marker, &found));
  if (!found) return Status::OK();
  ROCKDOC_ASSIGN_OR_RETURN(ChangePosition start, ParseChangeLogKey(marker));
  ROCKDOC_ASSIGN_OR_RETURN(uint64_t last, LastEventTime(rocks));
  std::string off;
  AppendBE64(&off, std::max(last, start.cluster_time));
  constexpr char kContext[] = "turning the change log off";
  rocksdb::WriteBatch batch;
  ROCKDOC_RETURN_IF_ERROR(
      FromRocks(batch.Delete(rocks.catalog_cf, kCatalogChangesStartKey), kContext));
  ROCKDOC_RETURN_IF_ERROR(
      FromRocks(batch.Put(rocks.catalog_cf, kCatalogChangesOffKey, off), kContext));
  ROCKDOC_RETURN_IF_ERROR(ClearEvents(rocks, &batch, kContext));
  return WriteDirect(rocks, &batch, !engine->options().in_memory, kContext);
}

uint64_t ChangeLog::BeginCommit() {
  seq_mu_.Lock();
  last_ = std::max(last_ + 1, WallClusterTime() | 1);
  return last_;
}

Status ChangeLog::Write(KvTransaction* txn, const ChangePosition& p, std::string_view value) {
  return txn->PutUntracked(KeySpace::kChanges, ChangeLogKey(p), value);
}

void ChangeLog::EndCommit(uint64_t cluster_time, bool committed, uint64_t bytes) {
  if (committed) {
    published_.store(cluster_time, std::memory_order_release);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
  // A failed commit's cluster time is simply never used: the next one is
  // greater, and positions need not be dense.
  seq_mu_.Unlock();
  if (!committed) return;
  {
    // Under the waiters' mutex, so that none checks and then sleeps
    // between the store above and this notify.
    MutexLock g(&wait_mu_);
  }
  wake_.notify_all();
  MaybeTrim();
}

Status ChangeLog::CheckRetained(const ChangePosition& p) const {
  {
    MutexLock g(&trim_mu_);
    if (!(p < start_)) return Status::OK();
  }
  return Status(ErrorCode::kChangeStreamHistoryLost,
                "Resume of change stream was not possible, as the resume point may no longer "
                "be in the oplog.");
}

Status ChangeLog::Read(
    const ChangePosition& after,
    const std::function<StatusOr<bool>(const ChangePosition&, std::string_view)>& fn) const {
  const EngineRocks& rocks = engine_->rocks();
  const uint64_t published = last_cluster_time();
  if (published < after.cluster_time) return Status::OK();
  // Up to the last published commit: a later one may still be committing.
  const std::string upper = ChangeLogKey({published + 1, 0});
  rocksdb::Slice upper_slice = AsSlice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(rocks.base->NewIterator(ro, rocks.changes_cf));
  const std::string from = ChangeLogKey(after);
  it->Seek(AsSlice(from));
  if (it->Valid() && it->key().ToStringView() == from) it->Next();
  for (; it->Valid(); it->Next()) {
    ROCKDOC_ASSIGN_OR_RETURN(ChangePosition p, ParseChangeLogKey(it->key().ToStringView()));
    ROCKDOC_ASSIGN_OR_RETURN(bool more, fn(p, it->value().ToStringView()));
    if (!more) break;
  }
  ROCKDOC_RETURN_IF_ERROR(FromRocks(it->status(), "reading the change log"));
  // After reading: a trim publishes its new start before it deletes, so an
  // iterator that could have missed trimmed events is caught here.
  return CheckRetained(after);
}

bool ChangeLog::WaitForNewer(uint64_t cluster_time, int64_t timeout_ms,
                             const std::atomic<bool>* stop) const {
  std::unique_lock<std::mutex> lock(wait_mu_.native());
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  wake_.wait_until(lock, until, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return interrupted_ || last_cluster_time() > cluster_time ||
           (stop != nullptr && stop->load(std::memory_order_acquire));
  });
  return last_cluster_time() > cluster_time;
}

void ChangeLog::WakeAll() const {
  { MutexLock g(&wait_mu_); }
  wake_.notify_all();
}

void ChangeLog::Interrupt() {
  {
    MutexLock g(&wait_mu_);
    interrupted_ = true;
  }
  wake_.notify_all();
}

Status ChangeLog::TrimLocked() {
  const EngineRocks& rocks = engine_->rocks();
  const uint64_t max_bytes = static_cast<uint64_t>(this->max_bytes());
  const uint64_t bytes = bytes_.load(std::memory_order_relaxed);
  if (bytes <= max_bytes) return Status::OK();
  // Down to 90% of the bound, so that trims are not one per commit.
  const uint64_t target = bytes - max_bytes + max_bytes / 10;
  // Commits younger than the minimum retention stay, whatever the size.
  const double hours = min_retention_hours();
  const uint64_t young = hours > 0 ? WallClusterTime() - (static_cast<uint64_t>(hours * 3600) << 32)
                                   : std::numeric_limits<uint64_t>::max();
  const uint64_t newest = last_cluster_time();
  const std::string upper = ChangeLogKey({newest, 0});  // the newest commit stays
  rocksdb::Slice upper_slice = AsSlice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(rocks.base->NewIterator(ro, rocks.changes_cf));
  uint64_t removed = 0;
  std::optional<ChangePosition> first, last_removed;
  std::optional<ChangePosition> cut;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ROCKDOC_ASSIGN_OR_RETURN(ChangePosition p, ParseChangeLogKey(it->key().ToStringView()));
    // Stop at a commit boundary: a commit's events go together.
    if ((removed >= target || p.cluster_time >= young) &&
        (!last_removed || p.cluster_time != last_removed->cluster_time)) {
      cut = p;
      break;
    }
    if (!first) first = p;
    last_removed = p;
    removed += it->key().size() + it->value().size();
  }
  ROCKDOC_RETURN_IF_ERROR(FromRocks(it->status(), "trimming the change log"));
  if (!last_removed) return Status::OK();
  constexpr char kContext[] = "trimming the change log";
  rocksdb::WriteBatch batch;
  ROCKDOC_RETURN_IF_ERROR(FromRocks(
      batch.Put(rocks.catalog_cf, kCatalogChangesStartKey, ChangeLogKey(*last_removed)), kContext));
  ROCKDOC_RETURN_IF_ERROR(FromRocks(
      batch.DeleteRange(rocks.changes_cf, ChangeLogKey(*first), cut ? ChangeLogKey(*cut) : upper),
      kContext));
  // Published first (see Read); a failed write puts it back.
  const ChangePosition old_start = start_;
  start_ = *last_removed;
  Status written = WriteDirect(rocks, &batch, rocks.write_options.sync, kContext);
  if (!written.ok()) {
    start_ = old_start;
    return written;
  }
  bytes_.fetch_sub(std::min(removed, bytes_.load(std::memory_order_relaxed)),
                   std::memory_order_relaxed);
  return Status::OK();
}

}  // namespace rockdoc::internal

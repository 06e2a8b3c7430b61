// store/write_batcher.cc: the write loop (store/write_batcher.h).
#include "store/write_batcher.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "store/change_set.h"
#include "store/write_ops.h"

namespace rockdoc::internal {

namespace {

// A write conflict is retried; past this many attempts at one document
// (which takes a livelock, not contention) it is returned.
constexpr int kMaxConflictAttempts = 10000;

// Between attempts at one document: at once at first, then yielding, then
// sleeping a millisecond, as MongoDB backs off after write conflicts.
void BackOff(int attempt) {
  if (attempt < 4) return;
  if (attempt < 16) {
    std::this_thread::yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

WriteBatcher::WriteBatcher(const Engine& engine, const CollectionMeta& meta,
                           const Deadline& deadline, std::function<void()> on_commit,
                           KvTransaction* outer)
    : engine_(engine),
      meta_(meta),
      deadline_(deadline),
      on_commit_(std::move(on_commit)),
      outer_(outer) {
  if (meta_.is_capped()) LockCapped();
}

WriteBatcher::~WriteBatcher() {
  if (!meta_.is_capped()) return;
  // Uncommitted work is discarded with the transaction: the totals in
  // memory may count it.
  if (txn_open_) meta_.capped->loaded = false;
  UnlockCapped();
  // After the batch's commit: tailable awaitData cursors look again.
  meta_.capped->NotifyWrite();
}

void WriteBatcher::LockCapped() ABSL_NO_THREAD_SAFETY_ANALYSIS { meta_.capped->mu.Lock(); }
void WriteBatcher::UnlockCapped() ABSL_NO_THREAD_SAFETY_ANALYSIS { meta_.capped->mu.Unlock(); }

Status WriteBatcher::Apply(const Change& change) {
  ROCKDOC_RETURN_IF_ERROR(failure_);
  Status s = ApplyOnce(change);
  // A change rolled back (or a batch lost) leaves the capped totals in
  // memory ahead of the data: read them again at the next write.
  if (!s.ok() && meta_.is_capped()) meta_.capped->loaded = false;
  return s;
}

Status WriteBatcher::ApplyOnce(const Change& change) {
  if (outer_ != nullptr) {
    if (meta_.is_capped()) {
      return Status(ErrorCode::kOperationNotSupportedInTransaction,
                    "Collection '" + meta_.full_name() +
                        "' is a capped collection. Writes in transactions are not allowed on "
                        "capped collections.");
    }
    // Inside a multi-document transaction: no batches, no retries.
    ROCKDOC_RETURN_IF_ERROR(deadline_.Check());
    outer_->SetSavePoint();
    WriteDelta delta;
    StatusOr<size_t> written = change(outer_, &delta);
    if (written.ok() && *written > 0) {
      Keep(std::move(delta));
      ++pending_documents_;
      return outer_->PopSavePoint();
    }
    Status rolled_back = outer_->RollbackToSavePoint();
    if (!rolled_back.ok()) {
      failure_ = rolled_back.WithContext("roll back one document's change");
      return failure_;
    }
    return written.status();
  }
  for (int attempt = 1;; ++attempt) {
    if (!txn_open_) {
      ROCKDOC_RETURN_IF_ERROR(engine_.CheckWritable("writing a document"));
      // The batch's own transaction reads back little of what it wrote
      // (an insert's duplicate check, a document changed twice): its
      // writes skip the write batch's index until such a read.
      KvTransaction::Options options;
      options.unindexed_writes = true;
      txn_ = engine_.Begin(options, std::move(txn_));  // recycles the last one
      txn_open_ = true;
    }
    // maxTimeMS, and killOp through the thread's interrupt flag.
    if (deadline_.checked()) ROCKDOC_RETURN_IF_ERROR(deadline_.Check());
    if (deadline_.is_set()) {
      txn_->SetLockTimeout(
          std::min(engine_.options().lock_timeout_ms, deadline_.RemainingMillis()));
    }
    txn_->SetSavePoint();
    WriteDelta delta;
    StatusOr<size_t> written = change(txn_.get(), &delta);
    if (written.ok() && *written > 0) {
      ROCKDOC_RETURN_IF_ERROR(txn_->PopSavePoint());
      Keep(std::move(delta));
      pending_bytes_ += *written;
      if (++pending_documents_ >= kWriteBatchDocuments || pending_bytes_ >= kWriteBatchBytes) {
        return Commit();
      }
      return Status::OK();
    }
    // Nothing written, or a failure: undo this document's part (and let go
    // of its locks). A transaction that cannot roll back cannot be
    // committed either: drop it all.
    Status rolled_back = txn_->RollbackToSavePoint();
    if (meta_.is_capped()) meta_.capped->loaded = false;
    if (!rolled_back.ok()) {
      failure_ = rolled_back.WithContext("roll back one document's change");
      // Already failing with failure_; destroying the transaction releases
      // its locks whatever this rollback says.
      txn_->Rollback().IgnoreError();
      txn_.reset();
      txn_open_ = false;
      pending_documents_ = pending_bytes_ = 0;
      pending_.count = 0;
      pending_.stats.Clear();
      return failure_;
    }
    if (written.ok()) return Status::OK();
    Status s = written.status();
    if (s.code() == ErrorCode::kLockTimeout && deadline_.is_set() && !deadline_.Check().ok()) {
      return MaxTimeExpiredError();
    }
    if (s.code() != ErrorCode::kWriteConflict || attempt == kMaxConflictAttempts) return s;
    // Let the writer we conflict with go on, then try this document again.
    ROCKDOC_RETURN_IF_ERROR(Commit());
    BackOff(attempt);
  }
}

Status WriteBatcher::Commit() {
  ROCKDOC_RETURN_IF_ERROR(failure_);
  if (pending_documents_ > 0 && !engine_.options().collect_statistics) {
    // Written without statistics: the document sizes no longer hold.
    meta_.statistics->MarkSizesUnknown();
  }
  if (outer_ != nullptr) {
    // The transaction's owner commits; the counts go in with it, the
    // statistics once it has.
    ROCKDOC_RETURN_IF_ERROR(AddToCount(outer_, meta_, &pending_.count));
    if (!pending_.stats.empty()) ApplyAtCommit(engine_, outer_, meta_, std::move(pending_.stats));
    pending_.stats.Clear();
    pending_documents_ = 0;
    if (on_commit_) on_commit_();
    return Status::OK();
  }
  if (!txn_open_) return Status::OK();
  txn_open_ = false;
  if (pending_documents_ == 0) {
    // Nothing written (every change was rolled back): just let go.
    return txn_->Rollback().WithContext("end of a write");
  }
  Status s;
  {
    StatisticsCommit statistics(engine_, meta_, pending_.stats);
    s = CommitWithCount(txn_.get(), meta_, &pending_.count);
    if (s.ok()) statistics.Apply();
  }
  pending_documents_ = pending_bytes_ = 0;
  pending_.count = 0;
  pending_.stats.Clear();
  if (!s.ok()) {
    if (meta_.is_capped()) meta_.capped->loaded = false;
    txn_.reset();
    failure_ = s;
    return s;
  }
  if (on_commit_) on_commit_();
  return Status::OK();
}

void WriteBatcher::Keep(WriteDelta&& delta) {
  pending_.count += delta.count;
  for (const GrowthWarning& w : delta.stats.warnings) {
    if (warnings_.size() < kMaxWriteWarnings) {
      warnings_.push_back(w.message);
    } else {
      ++more_warnings_;
    }
  }
  pending_.stats.Merge(std::move(delta.stats));
}

std::vector<std::string> WriteBatcher::TakeWarnings() {
  std::vector<std::string> out = std::move(warnings_);
  warnings_.clear();
  if (more_warnings_ > 0) {
    out.push_back("and " + std::to_string(more_warnings_) + " more growth warning(s) in " +
                  meta_.full_name() + " (see the database's log)");
  }
  more_warnings_ = 0;
  return out;
}

// Applies a committed delta to `stats` and logs its warnings.
void ApplyCommittedStatistics(const Engine& engine, CollectionStatistics& stats,
                              const StatisticsDelta& delta) {
  std::vector<int64_t> counts;
  stats.Apply(delta, &counts);
  for (size_t i = 0; i < delta.warnings.size() && i < counts.size(); ++i) {
    const int64_t n = counts[i];
    if (n > 10 && (n & (n - 1)) != 0) continue;
    engine.LogWarning(delta.warnings[i].message + " (warning " + std::to_string(n) +
                      " of this kind in this collection)");
  }
}

StatisticsCommit::StatisticsCommit(const Engine& engine, const CollectionMeta& meta,
                                   const StatisticsDelta& delta)
    ABSL_NO_THREAD_SAFETY_ANALYSIS : engine_(engine), meta_(meta), delta_(delta) {
  // Only a size change can race a rebuild of the sizes, which only
  // unknown sizes have.
  if (delta_.sizes_changed && !meta_.statistics->sizes_known()) {
    meta_.statistics->commit_mu.ReaderLock();
    locked_ = true;
  }
}

StatisticsCommit::~StatisticsCommit() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (locked_) meta_.statistics->commit_mu.ReaderUnlock();
}

void StatisticsCommit::Apply() {
  if (!delta_.empty()) ApplyCommittedStatistics(engine_, *meta_.statistics, delta_);
}

void ApplyAtCommit(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                   StatisticsDelta delta) {
  ChangeSet::Of(engine, txn)->AddStatistics(meta, std::move(delta));
}

Status InsertOneDocument(const Engine& engine, const CollectionMeta& meta, const Document& doc,
                         const Deadline& deadline, KvTransaction* outer, bool bypass_validation,
                         std::vector<std::string>* warnings) {
  WriteBatcher batch(engine, meta, deadline, {}, outer);
  ROCKDOC_RETURN_IF_ERROR(batch.Apply([&](KvTransaction* txn, WriteDelta* delta) -> StatusOr<size_t> {
    ROCKDOC_RETURN_IF_ERROR(InsertDocument(engine, txn, meta, doc, delta, bypass_validation));
    return doc.size();
  }));
  ROCKDOC_RETURN_IF_ERROR(batch.Commit());
  if (warnings != nullptr) {
    for (std::string& w : batch.TakeWarnings()) warnings->push_back(std::move(w));
  }
  return Status::OK();
}

TargetWriteLoop::TargetWriteLoop(const Engine& engine, const CollectionMeta& meta,
                                 const Deadline& deadline, TargetWriter write,
                                 KvTransaction* outer)
    : write_(std::move(write)), batch_(engine, meta, deadline, {}, outer) {}

void TargetWriteLoop::SetTargets(std::vector<WriteTarget> targets) {
  // One lock order for every writer: record-key order (most plans already
  // produce it; an index scan's order is another).
  auto by_key = [](const WriteTarget& a, const WriteTarget& b) {
    return a.record_key < b.record_key;
  };
  if (!std::is_sorted(targets.begin(), targets.end(), by_key)) {
    std::sort(targets.begin(), targets.end(), by_key);
  }
  targets_ = std::move(targets);
  next_ = 0;
}

Status TargetWriteLoop::Step(TargetOutcome* outcome) {
  const WriteTarget& target = targets_[next_++];
  *outcome = TargetOutcome::kNoMatch;
  Status s = batch_.Apply([&](KvTransaction* txn, WriteDelta* delta) -> StatusOr<size_t> {
    *outcome = TargetOutcome::kNoMatch;
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> current,
                             LockAndRead(txn, target.record_key));
    if (!current) return size_t{0};  // deleted since we looked
    size_t bytes = 0;
    ROCKDOC_ASSIGN_OR_RETURN(*outcome, write_(txn, target.record_key, *current, delta, &bytes));
    return *outcome == TargetOutcome::kWritten ? std::max<size_t>(bytes, 1) : size_t{0};
  });
  if (!s.ok()) {
    // The documents changed so far stay changed, as in MongoDB.
    next_ = targets_.size();
    Status c = batch_.Commit();
    return c.ok() ? s : c;
  }
  if (*outcome != TargetOutcome::kNoMatch) ++counts_.matched;
  if (*outcome == TargetOutcome::kWritten) ++counts_.written;
  return Status::OK();
}

}  // namespace rockdoc::internal

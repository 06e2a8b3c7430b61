// store/write_batcher.h: the write loop of the collection store. Every
// multi-document write (insertMany, updateMany, deleteMany, and the
// single-document writes through the same path) runs its documents through a
// WriteBatcher: one savepoint per document, a commit every so many
// documents, write conflicts retried one document at a time; updates and
// deletes lock their targets in one global order (record keys).
//
// Thread safety: a WriteBatcher is used by one thread.
#ifndef ROCKDOC_STORE_WRITE_BATCHER_H_
#define ROCKDOC_STORE_WRITE_BATCHER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "common/deadline.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"
#include "storage/engine.h"
#include "storage/kv.h"
#include "store/write_ops.h"

namespace rockdoc::internal {

// A target of a write: the record key of a matching document, read from a
// snapshot (the writer then locks and re-reads it).
struct WriteTarget {
  std::string record_key;
};

// The transaction of a multi-document write (insertMany, updateMany,
// deleteMany, and the single-document writes through the same path),
// committed every kWriteBatchDocuments documents or kWriteBatchBytes:
// enough to amortise the commit, small enough to bound the locks held.
//
// Each document's change runs under a savepoint, so it happens entirely or
// not at all. A write conflict (RocksDB found that waiting for a lock held
// by another writer would deadlock: WriteConflict) is never returned, as
// MongoDB never surfaces one from a write outside a transaction: the
// document's change is rolled back, the batch so far committed (which
// releases our locks, so the other writer goes on) and the change made
// again in a new transaction, where it re-reads what it depends on. Only
// that document is retried, never the whole operation.
//
// The deadline (maxTimeMS) also bounds every lock wait.
//
// Inside a multi-document transaction (`outer` not null) the batcher writes
// into that transaction and never commits: each document's change still
// runs under a savepoint, but a conflict is returned (the transaction is
// then aborted, as MongoDB does), and Commit() only adds the count changes.
class WriteBatcher {
 public:
  static constexpr size_t kWriteBatchDocuments = 1000;
  static constexpr size_t kWriteBatchBytes = size_t{16} << 20;

  // One document's change inside `txn`: returns the bytes it wrote (0: it
  // wrote nothing, and its locks are let go at once). Count and statistics
  // changes go to *delta (see WriteDelta). Runs again after a write
  // conflict.
  using Change = std::function<StatusOr<size_t>(KvTransaction* txn, WriteDelta* delta)>;

  // `on_commit` runs after each successful commit: the changes made so far
  // (including one whose Apply has not returned yet) are now durable.
  //
  // On a capped collection the batcher holds the collection's capped mutex
  // for its whole life (writes to a capped collection are serialized, as in
  // MongoDB), and refuses to write inside a multi-document transaction
  // (OperationNotSupportedInTransaction, 263, as MongoDB).
  WriteBatcher(const Engine& engine, const CollectionMeta& meta, const Deadline& deadline,
               std::function<void()> on_commit = {}, KvTransaction* outer = nullptr);
  ~WriteBatcher();
  WriteBatcher(const WriteBatcher&) = delete;
  WriteBatcher& operator=(const WriteBatcher&) = delete;

  // Makes one document's change. On error the change is rolled back and
  // the batch stays open (the caller decides whether to Commit the rest).
  Status Apply(const Change& change);
  // Commits what is pending.
  Status Commit();
  // The error that ended the batch (a failed commit or rollback: its
  // pending documents are lost and nothing more can be written), or OK.
  const Status& failure() const { return failure_; }
  // The growth warnings of the changes made so far (each change's as it
  // is made; counted and logged only once committed): at most
  // kMaxWriteWarnings, then a line saying how many more. Taken: the next
  // call returns the ones raised since.
  std::vector<std::string> TakeWarnings();

 private:
  Status ApplyOnce(const Change& change);
  // Adds a document's changes, whose savepoint was released, to the batch.
  void Keep(WriteDelta&& delta);
  void LockCapped();
  void UnlockCapped();

  const Engine& engine_;
  const CollectionMeta& meta_;
  const Deadline& deadline_;
  std::function<void()> on_commit_;
  KvTransaction* const outer_;
  std::unique_ptr<KvTransaction> txn_;
  bool txn_open_ = false;
  size_t pending_documents_ = 0;
  size_t pending_bytes_ = 0;
  WriteDelta pending_;  // the count merged at commit, the statistics applied after
  Status failure_;
  std::vector<std::string> warnings_;
  size_t more_warnings_ = 0;  // past kMaxWriteWarnings
};

// Applies the statistics a transaction's writes gathered (WriteDelta::stats)
// once it has committed, and logs their growth warnings (the first ten of
// each kind, then every power of two: a bulk load of large documents does
// not flood the log). For a commit of its own, the writer holds a
// StatisticsCommit around it: it takes the statistics' commit lock when
// they need it (CollectionStatistics::commit_mu), and Apply applies them
// (unless the commit failed). Inside a multi-document transaction,
// ApplyAtCommit hands them to the transaction's commit hook.
class StatisticsCommit {
 public:
  StatisticsCommit(const Engine& engine, const CollectionMeta& meta, const StatisticsDelta& delta);
  ~StatisticsCommit();
  StatisticsCommit(const StatisticsCommit&) = delete;
  StatisticsCommit& operator=(const StatisticsCommit&) = delete;
  // The commit succeeded.
  void Apply();

 private:
  const Engine& engine_;
  const CollectionMeta& meta_;
  const StatisticsDelta& delta_;
  bool locked_ = false;
};
void ApplyAtCommit(const Engine& engine, KvTransaction* txn, const CollectionMeta& meta,
                   StatisticsDelta delta);

// Inserts one prepared document (PrepareInsert) in its own transaction,
// retried through write conflicts as WriteBatcher does.
// Inside `outer` when not null (a multi-document transaction). Its growth
// warnings are appended to *warnings when not null.
Status InsertOneDocument(const Engine& engine, const CollectionMeta& meta, const Document& doc,
                         const Deadline& deadline, KvTransaction* outer = nullptr,
                         bool bypass_validation = false,
                         std::vector<std::string>* warnings = nullptr);

enum class TargetOutcome { kNoMatch, kMatched, kWritten };

// What a write did to one target (a TargetWriter's answer), and the
// figures of a loop.
struct WriteCounts {
  int64_t targets = 0;  // what the plan found (before re-reading each)
  int64_t matched = 0;
  int64_t written = 0;
  // The growth warnings of the writes (WriteBatcher::TakeWarnings); filled
  // in by TargetWriteLoop::Finish.
  std::vector<std::string> warnings;
};

// Changes one target: given the current version of the document at
// `record_key` (locked inside `txn`), re-matches it and changes it inside
// `txn`, adding count and statistics changes to *delta and the bytes
// written to *bytes_written. With `txn` null it only says what it would do
// (explain). It may be called again for the same target after a write
// conflict, so it must not keep anything from an earlier call.
using TargetWriter = std::function<StatusOr<TargetOutcome>(
    KvTransaction* txn, std::string_view record_key, const Document& current, WriteDelta* delta,
    size_t* bytes_written)>;

// The one write loop of updates and deletes (the UPDATE and DELETE stages
// drive it): locks and re-reads each target (skipping one that is gone),
// and calls the writer with the current version.
//
// Targets are locked in record-key order, one global order for every
// multi-document writer, so that two of them never wait for each other in a
// cycle. On an error (the deadline included) the documents already changed
// are committed (each document is all-or-nothing) and the error returned.
class TargetWriteLoop {
 public:
  TargetWriteLoop(const Engine& engine, const CollectionMeta& meta, const Deadline& deadline,
                  TargetWriter write, KvTransaction* outer = nullptr);
  // The targets, in any order (sorted here).
  void SetTargets(std::vector<WriteTarget> targets);
  bool done() const { return next_ >= targets_.size(); }
  // Writes the next target; *outcome says what happened to it.
  Status Step(TargetOutcome* outcome);
  // Commits what is pending (after the last Step, or to stop early), and
  // hands over the writes' growth warnings (counts().warnings).
  Status Finish() {
    Status s = batch_.Commit();
    for (std::string& w : batch_.TakeWarnings()) counts_.warnings.push_back(std::move(w));
    return s;
  }
  const WriteCounts& counts() const { return counts_; }

 private:
  TargetWriter write_;
  WriteBatcher batch_;
  std::vector<WriteTarget> targets_;
  size_t next_ = 0;
  WriteCounts counts_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORE_WRITE_BATCHER_H_

// api/collection_internal.h: pieces shared by the Collection operations
// (collection.cc: inserts, deletes, replace, validate; collection_query.cc:
// find, count, distinct, explain; collection_update.cc: updates).
#ifndef ROCKDOC_API_COLLECTION_INTERNAL_H_
#define ROCKDOC_API_COLLECTION_INTERNAL_H_

#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "api/session_internal.h"
#include "catalog/catalog.h"
#include "common/deadline.h"
#include "exec/plan_executor.h"
#include "planner/canonical_query.h"
#include "planner/query_planner.h"
#include "rockdoc/client.h"
#include "storage/engine.h"

namespace rockdoc::internal {

// Holds a collection's metadata shared-locked for one write, looking it up
// again when a concurrent drop or rename got there first. meta() is null
// when the collection does not exist and `create` was false.
class CollectionWriteGuard {
 public:
  static StatusOr<CollectionWriteGuard> Acquire(const Engine& engine, const std::string& db,
                                                const std::string& name, bool create);
  const CollectionMeta* meta() const { return meta_.get(); }
  bool dropped() const {
    return meta_ != nullptr && meta_->dropped.load(std::memory_order_acquire);
  }

 private:
  explicit CollectionWriteGuard(std::shared_ptr<CollectionMeta> meta);
  std::shared_ptr<CollectionMeta> meta_;
  std::shared_lock<std::shared_mutex> lock_;
};

// A target of a write: the record key of a matching document, read from a
// snapshot (the writer then locks and re-reads it).
struct WriteTarget {
  std::string record_key;
};

// The record keys of documents matching the query (in its sort order; at
// most `limit`, 0 = all), at a fresh snapshot. MaxTimeMSExpired past
// `deadline`.
// Inside a transaction (`op`), at the transaction's snapshot with its own
// writes.
StatusOr<std::vector<WriteTarget>> FindWriteTargets(const std::shared_ptr<const Engine>& engine,
                                                    const CollectionMeta* meta,
                                                    const CanonicalQuery& cq,
                                                    const Deadline& deadline,
                                                    const OpContext& op);

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
  // wrote nothing, and its locks are let go at once). Count changes go to
  // *count_delta (see InsertDocument). Runs again after a write conflict.
  using Change = std::function<StatusOr<size_t>(KvTransaction* txn, int64_t* count_delta)>;

  // `on_commit` runs after each successful commit: the changes made so far
  // (including one whose Apply has not returned yet) are now durable.
  WriteBatcher(const Engine& engine, const CollectionMeta& meta, const Deadline& deadline,
               std::function<void()> on_commit = {}, KvTransaction* outer = nullptr);

  // Makes one document's change. On error the change is rolled back and
  // the batch stays open (the caller decides whether to Commit the rest).
  Status Apply(const Change& change);
  // Commits what is pending.
  Status Commit();
  // The error that ended the batch (a failed commit or rollback: its
  // pending documents are lost and nothing more can be written), or OK.
  const Status& failure() const { return failure_; }

 private:
  const Engine& engine_;
  const CollectionMeta& meta_;
  const Deadline& deadline_;
  std::function<void()> on_commit_;
  KvTransaction* const outer_;
  std::unique_ptr<KvTransaction> txn_;
  bool txn_open_ = false;
  size_t pending_documents_ = 0;
  size_t pending_bytes_ = 0;
  int64_t pending_count_ = 0;  // merged into the collection's count at commit
  Status failure_;
};

// Inserts one prepared document (PrepareInsert) in its own transaction,
// retried through write conflicts as WriteBatcher does.
Status InsertOneDocument(const Engine& engine, const CollectionMeta& meta, const Document& doc,
                         const Deadline& deadline, const OpContext& op);

// What a write did to one target (WriteEachTarget's callback).
enum class TargetOutcome { kNoMatch, kMatched, kWritten };

// The shared loop of updates and deletes: locks and re-reads each target
// (skipping one that is gone), and calls `write` with the current version,
// which re-matches it and changes it inside `txn`. `write` may be called
// again for the same target after a write conflict, so it must not keep
// anything from an earlier call.
//
// Targets are locked in record-key order, one global order for every
// multi-document writer, so that two of them never wait for each other in a
// cycle. On an error (the deadline included) the documents already changed
// are committed (each document is all-or-nothing) and the error returned.
// `counts` gets the targets matched and written.
struct WriteCounts {
  int64_t matched = 0;
  int64_t written = 0;
};
using TargetWriter = std::function<StatusOr<TargetOutcome>(
    KvTransaction* txn, std::string_view record_key, const Document& current,
    int64_t* count_delta, size_t* bytes_written)>;
Status WriteEachTarget(const Engine& engine, const CollectionMeta& meta,
                       std::vector<WriteTarget> targets, const Deadline& deadline,
                       const TargetWriter& write, WriteCounts* counts, const OpContext& op);

// Plans and opens a cursor over `cq` (which the cursor then owns), limited to
// `max_time_ms` of processing (0 = none; out of range: BadValue).
// Inside a transaction the cursor reads through it and is invalidated when
// it ends; in a snapshot session it reads the session's snapshot.
StatusOr<std::unique_ptr<PlanExecutor>> OpenQuery(const std::shared_ptr<const Engine>& engine,
                                                  const CollectionMeta* meta,
                                                  std::unique_ptr<CanonicalQuery> cq,
                                                  int64_t max_time_ms, const OpContext& op);

// Runs `cq` at the requested verbosity and returns MongoDB's explain.
StatusOr<Document> ExplainQuery(const std::shared_ptr<const Engine>& engine,
                                const CollectionMeta* meta, const std::string& ns,
                                const CanonicalQuery& cq, ExplainVerbosity verbosity);

// Wraps the plan of an explain in an outer stage (UPDATE, DELETE, COUNT), as
// MongoDB's explain of those commands shows it.
Document WrapExplain(const Document& explain, std::string_view stage);

// The collection's metadata for a read (null when it does not exist).
StatusOr<std::shared_ptr<CollectionMeta>> LookupForRead(const Engine& engine, const std::string& db,
                                                        const std::string& name);

// Checks that an update's result stays within 16 MiB (code 17419) and 100
// levels of nesting (only below `changed_paths` when given: the rest of the
// document was already within the limit).
Status CheckUpdateResultSize(const Document& doc,
                             const std::vector<std::string>* changed_paths = nullptr);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_API_COLLECTION_INTERNAL_H_

// api/session_internal.h: the state behind a public Session, and the context
// every collection operation runs in (OpContext).
//
// A transaction follows the drivers' state machine (the transactions spec):
//   kNone -> StartTransaction -> kStarting -> first operation -> kInProgress
//   kStarting / kInProgress -> CommitTransaction -> kCommitted
//   kStarting / kInProgress -> AbortTransaction  -> kAborted
//   kCommitted / kAborted -> next operation (outside a transaction) -> kNone
// The storage transaction (a snapshot transaction: reads at one snapshot,
// writes validated against it) begins at the first operation, as MongoDB
// takes a transaction's snapshot at its first operation. A failed operation
// or an expired lifetime aborts the storage transaction at once (releasing
// its locks) while the session stays kInProgress, as the server aborts and
// the driver does not know yet: later operations and the commit then fail
// with NoSuchTransaction.
//
// Thread safety: a session is used by one thread at a time (as a driver's
// ClientSession), except that the engine may call ReleaseEngineResources
// from Close() and a cursor may be destroyed on another thread: those take
// mu_.
#ifndef ROCKDOC_API_SESSION_INTERNAL_H_
#define ROCKDOC_API_SESSION_INTERNAL_H_

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "catalog/catalog.h"
#include "common/mutex.h"
#include "exec/plan_executor.h"
#include "rockdoc/client.h"
#include "storage/engine.h"
#include "storage/kv.h"

namespace rockdoc::internal {

class SessionState;

// What an operation is, for the checks a session makes before it runs.
enum class OpKind {
  kRead,     // find, count, distinct
  kWrite,    // insert, update, delete, findAndModify
  kCommand,  // DDL, explain, estimatedDocumentCount, validate: never in a transaction
};

// The context of one collection operation.
struct OpContext {
  SessionState* session = nullptr;       // null: no session
  KvTransaction* txn = nullptr;          // the session's transaction, or null
  const KvSnapshot* snapshot = nullptr;  // a snapshot session's snapshot, or null
  bool in_transaction() const { return txn != nullptr; }
  // Where plans read: the transaction, the session's snapshot, or (null
  // `fresh`) a snapshot the caller takes for this operation.
  ReadView View(const Engine* engine, const KvSnapshot* fresh) const {
    if (txn != nullptr) return ReadView(txn);
    return ReadView(engine, snapshot != nullptr ? snapshot : fresh);
  }
};

class SessionState : public EngineResource,
                     public ExecutorRegistry,
                     public std::enable_shared_from_this<SessionState> {
 public:
  SessionState(std::shared_ptr<Engine> engine, const SessionOptions& options);
  ~SessionState() override;

  const std::shared_ptr<Engine>& engine() const { return engine_; }

  // Before an operation named `command` ("insert", "createIndexes", ...):
  // fills *op, or fails (an ended session, an operation not allowed in a
  // transaction: OperationNotSupportedInTransaction 263, a transaction
  // already aborted: NoSuchTransaction 251, a write in a snapshot session).
  Status BeginOperation(OpKind kind, std::string_view command, OpContext* op);
  // After it: an error inside a transaction aborts the transaction and is
  // returned with its labels (WriteConflict: TransientTransactionError).
  Status EndOperation(const OpContext& op, Status result);

  Status StartTransaction();
  Status CommitTransaction();
  Status AbortTransaction();
  bool InTransaction() const;
  Status EndSession();

  // Cursors that read through the transaction: invalidated when it ends.
  void AddExecutor(PlanExecutor* exec);
  void RemoveExecutor(PlanExecutor* exec) override;

  // The engine is closing: drop the transaction and the snapshot.
  void ReleaseEngineResources() override;

 private:
  enum class TxnState { kNone, kStarting, kInProgress, kCommitted, kAborted };

  // Ends the storage transaction (rolling it back) and invalidates its
  // cursors with `why`. Caller holds mu_.
  void DropTransactionLocked(const Status& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status NoSuchTransaction() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ExpiredLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<Engine> engine_;
  const SessionOptions options_;
  // {id: UUID}: the session's lsid, which its transactions' change events
  // carry.
  const Document lsid_;

  mutable Mutex mu_;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // the engine let go of us
  TxnState state_ ABSL_GUARDED_BY(mu_) = TxnState::kNone;
  int64_t txn_number_ ABSL_GUARDED_BY(mu_) = 0;
  // The storage transaction, from the first operation of a transaction
  // until commit or abort (or the server-side abort of a failed one).
  std::unique_ptr<KvTransaction> txn_ ABSL_GUARDED_BY(mu_);
  int64_t txn_start_nanos_ ABSL_GUARDED_BY(mu_) = 0;
  // True when the storage transaction was aborted under a transaction the
  // driver still thinks is in progress (a failed operation, the lifetime).
  bool server_aborted_ ABSL_GUARDED_BY(mu_) = false;
  // Of the last commit, returned again on a retry.
  Status commit_result_ ABSL_GUARDED_BY(mu_);
  std::set<PlanExecutor*> executors_ ABSL_GUARDED_BY(mu_);
  // A snapshot session's snapshot, taken at its first read.
  std::unique_ptr<KvSnapshot> snapshot_ ABSL_GUARDED_BY(mu_);
};

inline Status StatusOf(const Status& s) { return s; }
template <typename T>
Status StatusOf(const StatusOr<T>& s) {
  return s.status();
}

// For a command that never runs in a transaction (DDL, explain, ...):
// OperationNotSupportedInTransaction inside one, and the session's other
// checks. OK without a session.
inline Status CheckCommand(const std::shared_ptr<SessionState>& session,
                           std::string_view command) {
  if (session == nullptr) return Status::OK();
  OpContext op;
  return session->BeginOperation(OpKind::kCommand, command, &op);
}

// Runs `fn` as one operation of `session` (which may be null).
template <typename Result, typename Fn>
Result RunOperation(const std::shared_ptr<SessionState>& session, OpKind kind,
                    std::string_view command, const Fn& fn) {
  OpContext op;
  if (session == nullptr) return fn(op);
  Status begun = session->BeginOperation(kind, command, &op);
  if (!begun.ok()) return begun;
  // A collection the operation creates is its transaction's until commit.
  std::optional<Result> r;
  {
    CatalogTransactionScope creations(op.txn);
    r.emplace(fn(op));
  }
  Status ended = session->EndOperation(op, StatusOf(*r));
  if (!ended.ok()) return ended;
  return std::move(*r);
}


}  // namespace rockdoc::internal

#endif  // ROCKDOC_API_SESSION_INTERNAL_H_

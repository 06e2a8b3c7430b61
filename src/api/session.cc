// Sessions and multi-document transactions (include/rockdoc/client.h,
// api/session_internal.h).
#include <chrono>
#include <thread>

#include "api/session_internal.h"
#include "catalog/catalog.h"
#include "common/deadline.h"
#include "rockdoc/client.h"
#include "store/change_set.h"

namespace rockdoc {
namespace internal {

namespace {

constexpr const char* kTransientLabel = "TransientTransactionError";

Status DriverError(std::string message) {
  return Status(ErrorCode::kIllegalOperation, std::move(message));
}

// MongoDB's message for a write conflict inside a transaction.
Status TransactionWriteConflict() {
  return Status(ErrorCode::kWriteConflict,
                "WriteConflict error: this operation conflicted with another operation. "
                "Please retry your operation or multi-document transaction.")
      .WithErrorLabel(kTransientLabel);
}

}  // namespace

namespace {

Document NewLsid() {
  BsonBuilder b;
  b.AppendBinary("id", BinarySubtype::kUuid, RandomUuid());
  return std::move(b).Build();
}

}  // namespace

SessionState::SessionState(std::shared_ptr<Engine> engine, const SessionOptions& options)
    : engine_(std::move(engine)), options_(options), lsid_(NewLsid()) {
  engine_->Register(this);
}

SessionState::~SessionState() {
  {
    MutexLock g(&mu_);
    if (!closed_) DropTransactionLocked(Status(ErrorCode::kIllegalOperation, "session ended"));
    if (snapshot_ != nullptr && !closed_) snapshot_.reset();
  }
  engine_->Unregister(this);
}

void SessionState::ReleaseEngineResources() {
  // Engine::Close, with its lock held: no operation is running.
  MutexLock g(&mu_);
  DropTransactionLocked(
      Status(ErrorCode::kIllegalOperation, "the database was closed under this transaction"));
  if (snapshot_ != nullptr) snapshot_->Release();
  if (state_ == TxnState::kInProgress) server_aborted_ = true;
  closed_ = true;
}

void SessionState::DropTransactionLocked(const Status& why) {
  for (PlanExecutor* exec : executors_) exec->Invalidate(why);
  executors_.clear();
  if (txn_ != nullptr) {
    // A rollback that fails leaves nothing behind either: the transaction's
    // writes were never committed, and destroying it releases its locks.
    txn_->Rollback().IgnoreError();
    // Nor do the collections it created.
    if (engine_->attachment(AttachmentSlot::kCatalog) != nullptr)
      CatalogOf(*engine_).AbortCreations(txn_.get());
    txn_.reset();
  }
}

Status SessionState::NoSuchTransaction() const {
  return Status(ErrorCode::kNoSuchTransaction,
                "Transaction with { txnNumber: " + std::to_string(txn_number_) +
                    " } has been aborted.")
      .WithErrorLabel(kTransientLabel);
}

bool SessionState::ExpiredLocked() const {
  if (txn_ == nullptr) return false;
  const int64_t limit_ms = engine_->options().transaction_lifetime_limit_ms;
  return limit_ms > 0 && MonotonicNanos() - txn_start_nanos_ > limit_ms * 1000000;
}

Status SessionState::BeginOperation(OpKind kind, std::string_view command, OpContext* op) {
  MutexLock g(&mu_);
  if (ended_) return DriverError("Cannot use a session that has ended");
  if (closed_) return Status(ErrorCode::kIllegalOperation, "the database is closed");
  op->session = this;
  if (state_ == TxnState::kCommitted || state_ == TxnState::kAborted) state_ = TxnState::kNone;
  if (state_ == TxnState::kNone) {
    if (options_.snapshot) {
      if (kind == OpKind::kWrite) {
        return Status(ErrorCode::kInvalidOptions,
                      "Cannot run '" + std::string(command) + "' in a snapshot session: "
                      "snapshot sessions are for reads");
      }
      if (snapshot_ == nullptr) snapshot_ = std::make_unique<KvSnapshot>(engine_);
      op->snapshot = snapshot_.get();
    }
    return Status::OK();
  }
  // In a transaction.
  if (kind == OpKind::kCommand) {
    return Status(ErrorCode::kOperationNotSupportedInTransaction,
                  "Cannot run '" + std::string(command) + "' in a multi-document transaction.");
  }
  if (server_aborted_) return NoSuchTransaction();
  if (ExpiredLocked()) {
    DropTransactionLocked(NoSuchTransaction());
    server_aborted_ = true;
    return NoSuchTransaction();
  }
  if (txn_ == nullptr) {
    ROCKDOC_RETURN_IF_ERROR(engine_->CheckWritable("a multi-document transaction"));
    KvTransaction::Options to;
    to.snapshot = true;
    to.lock_timeout_ms = 0;  // a conflict is reported at once, never waited out
    to.expiration_ms = engine_->options().transaction_lifetime_limit_ms > 0
                           ? engine_->options().transaction_lifetime_limit_ms
                           : -1;
    txn_ = engine_->Begin(to);
    // Its change events carry the session and the transaction's number.
    if (engine_->change_log() != nullptr) {
      ChangeSet::Of(*engine_, txn_.get())->Tag(lsid_, txn_number_);
    }
    txn_start_nanos_ = MonotonicNanos();
    state_ = TxnState::kInProgress;
  }
  op->txn = txn_.get();
  return Status::OK();
}

Status SessionState::EndOperation(const OpContext& op, Status result) {
  if (result.ok() || !op.in_transaction()) return result;
  MutexLock g(&mu_);
  // The server aborts a transaction whose operation failed.
  if (result.code() == ErrorCode::kWriteConflict || result.code() == ErrorCode::kLockTimeout) {
    result = TransactionWriteConflict();
  }
  if (!server_aborted_) {
    DropTransactionLocked(NoSuchTransaction());
    server_aborted_ = true;
  }
  return result;
}

Status SessionState::StartTransaction() {
  MutexLock g(&mu_);
  if (ended_) return DriverError("Cannot use a session that has ended");
  if (closed_) return Status(ErrorCode::kIllegalOperation, "the database is closed");
  if (options_.snapshot) {
    return DriverError("Transactions are not supported in snapshot sessions");
  }
  if (state_ == TxnState::kStarting || state_ == TxnState::kInProgress) {
    return DriverError("Transaction already in progress on this session.");
  }
  state_ = TxnState::kStarting;
  ++txn_number_;
  server_aborted_ = false;
  commit_result_ = Status::OK();
  return Status::OK();
}

Status SessionState::CommitTransaction() {
  MutexLock g(&mu_);
  if (ended_) return DriverError("Cannot use a session that has ended");
  switch (state_) {
    case TxnState::kNone:
      return DriverError("No transaction started");
    case TxnState::kAborted:
      return DriverError("Cannot call commitTransaction after calling abortTransaction");
    case TxnState::kCommitted:
      return commit_result_;  // a retry of the commit that happened
    case TxnState::kStarting:
      state_ = TxnState::kCommitted;  // nothing was done: nothing to commit
      commit_result_ = Status::OK();
      return Status::OK();
    case TxnState::kInProgress:
      break;
  }
  state_ = TxnState::kCommitted;
  if (closed_) {
    commit_result_ = Status(ErrorCode::kIllegalOperation,
                            "the database was closed under this transaction");
    return commit_result_;
  }
  if (server_aborted_ || txn_ == nullptr || ExpiredLocked()) {
    DropTransactionLocked(NoSuchTransaction());
    commit_result_ = NoSuchTransaction();
    return commit_result_;
  }
  for (PlanExecutor* exec : executors_) {
    exec->Invalidate(Status(ErrorCode::kCursorNotFound,
                            "the transaction this cursor read in was committed"));
  }
  executors_.clear();
  Status s = txn_->Commit();
  if (!s.ok()) {
    if (s.code() == ErrorCode::kWriteConflict || s.code() == ErrorCode::kLockTimeout) {
      s = TransactionWriteConflict();
    } else if (s.message().find("Expired") != std::string_view::npos) {
      // Another writer took the locks of this expired transaction.
      s = NoSuchTransaction();
    }
    // Otherwise the commit failed for good (an embedded commit is never
    // in doubt, so no UnknownTransactionCommitResult): nothing was written.
    DropTransactionLocked(s);
  } else {
    // The collections it created are everyone's now.
    CatalogOf(*engine_).CommitCreations(txn_.get());
  }
  txn_.reset();
  commit_result_ = s;
  return s;
}

Status SessionState::AbortTransaction() {
  MutexLock g(&mu_);
  if (ended_) return DriverError("Cannot use a session that has ended");
  switch (state_) {
    case TxnState::kNone:
      return DriverError("No transaction started");
    case TxnState::kCommitted:
      return DriverError("Cannot call abortTransaction after calling commitTransaction");
    case TxnState::kAborted:
      return DriverError("Cannot call abortTransaction twice");
    case TxnState::kStarting:
    case TxnState::kInProgress:
      break;
  }
  state_ = TxnState::kAborted;
  // The drivers ignore the server's answer to abortTransaction.
  DropTransactionLocked(
      Status(ErrorCode::kCursorNotFound, "the transaction this cursor read in was aborted"));
  return Status::OK();
}

bool SessionState::InTransaction() const {
  MutexLock g(&mu_);
  return state_ == TxnState::kStarting || state_ == TxnState::kInProgress;
}

Status SessionState::EndSession() {
  MutexLock g(&mu_);
  if (ended_) return Status::OK();
  if (!closed_) {
    DropTransactionLocked(Status(ErrorCode::kCursorNotFound, "the session ended"));
    snapshot_.reset();
  }
  if (state_ == TxnState::kStarting || state_ == TxnState::kInProgress) {
    state_ = TxnState::kAborted;
  }
  ended_ = true;
  return Status::OK();
}

void SessionState::AddExecutor(PlanExecutor* exec) {
  MutexLock g(&mu_);
  executors_.insert(exec);
}

void SessionState::RemoveExecutor(PlanExecutor* exec) {
  MutexLock g(&mu_);
  executors_.erase(exec);
}

}  // namespace internal

StatusOr<Session> Client::StartSession(const SessionOptions& options) const {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  return Session(std::make_shared<internal::SessionState>(engine_, options));
}

Session::Session(std::shared_ptr<internal::SessionState> state) : state_(std::move(state)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() {
  if (state_ != nullptr) state_->EndSession().IgnoreError();
}

Database Session::GetDatabase(std::string_view name) const {
  return Database(state_->engine(), std::string(name), state_);
}

Status Session::StartTransaction(const TransactionOptions&) {
  return state_->StartTransaction();
}
Status Session::CommitTransaction() { return state_->CommitTransaction(); }
Status Session::AbortTransaction() { return state_->AbortTransaction(); }
bool Session::InTransaction() const { return state_->InTransaction(); }
Status Session::EndSession() { return state_->EndSession(); }

Status Session::WithTransaction(const std::function<Status(Session&)>& fn,
                                const TransactionOptions& options) {
  // The drivers' convenient API: retry the whole transaction on a transient
  // error, the commit on an unknown commit result, for up to 120 s.
  constexpr int64_t kRetryLimitNanos = int64_t{120} * 1000000000;
  const int64_t start = internal::MonotonicNanos();
  auto timed_out = [&] { return internal::MonotonicNanos() - start >= kRetryLimitNanos; };
  for (int attempt = 1;; ++attempt) {
    ROCKDOC_RETURN_IF_ERROR(StartTransaction(options));
    Status s = fn(*this);
    if (!s.ok()) {
      if (InTransaction()) AbortTransaction().IgnoreError();
      if (s.HasErrorLabel("TransientTransactionError") && !timed_out()) {
        if (attempt > 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      return s;
    }
    if (!InTransaction()) return Status::OK();  // fn committed or aborted itself
    while (true) {
      Status c = CommitTransaction();
      if (c.ok()) return c;
      if (c.HasErrorLabel("UnknownTransactionCommitResult") && !timed_out()) continue;
      if (c.HasErrorLabel("TransientTransactionError") && !timed_out()) break;  // run fn again
      return c;
    }
    if (attempt > 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace rockdoc

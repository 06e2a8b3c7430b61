#include "command/server_sessions.h"

#include <vector>

#include "command/command.h"
#include "command/cursor_manager.h"
#include "common/clock.h"

namespace rockdoc::internal {

Status SessionKey(const Element& lsid, std::string* key) {
  if (!lsid.IsDocument()) {
    return Status(ErrorCode::kTypeMismatch, "BSON field 'lsid' is the wrong type '" +
                                                std::string(BsonTypeAlias(lsid.type())) +
                                                "', expected type 'object'");
  }
  bool has_id = false;
  for (Element f : lsid.Document()) {
    if (f.key() == "id") {
      std::optional<BinaryView> bytes = f.AsBinary();
      if (!bytes || bytes->subtype != BinarySubtype::kUuid || bytes->data.size() != 16) {
        return Status(ErrorCode::kBadValue, "lsid.id must be a UUID (BinData subtype 4)");
      }
      *key = std::string(bytes->data);
      has_id = true;
    } else if (f.key() == "uid") {
      // The user of an authenticated session: rockdoc has no users.
      return Status(ErrorCode::kNotImplemented, "lsid.uid is not supported by rockdoc");
    } else {
      return Status(ErrorCode::kUnknownBsonField,
                    "BSON field 'lsid." + std::string(f.key()) + "' is an unknown field.");
    }
  }
  if (!has_id) {
    return MissingField("lsid.id");
  }
  return Status::OK();
}

StatusOr<std::shared_ptr<ServerSession>> ServerSessions::Get(const Client& client,
                                                             const std::string& key) {
  MutexLock g(&mu_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) {
    if (sessions_.size() >= max_sessions_) {
      return Status(ErrorCode::kTooManyLogicalSessions,
                    "Unable to add session into the cache because the number of active "
                    "sessions is too high (" +
                        std::to_string(max_sessions_) + ")");
    }
    ROCKDOC_ASSIGN_OR_RETURN(Session session, client.StartSession());
    auto made = std::make_shared<ServerSession>();
    made->session.emplace(std::move(session));
    it = sessions_.emplace(key, std::move(made)).first;
  }
  it->second->last_used_ms = SteadyMillis();
  return it->second;
}

void ServerSessions::ReapOn(BackgroundRunner* runner) {
  runner->Add("sessions", ReapPeriodMs(idle_timeout_ms_), [this] { ReapExpired(); });
}

size_t ServerSessions::ReapExpired() {
  std::vector<std::shared_ptr<ServerSession>> expired;  // ended outside the lock
  {
    MutexLock g(&mu_);
    const int64_t now = SteadyMillis();
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (now - it->second->last_used_ms > idle_timeout_ms_) {
        expired.push_back(std::move(it->second));
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const std::shared_ptr<ServerSession>& s : expired) {
    // A command of the session may still hold it (it took the pointer
    // just before it expired): it finishes first.
    std::lock_guard<std::mutex> running(s->running);
    s->session.reset();
    s->snapshot.reset();
  }
  return expired.size();
}

bool ServerSessions::End(const std::string& key) {
  std::shared_ptr<ServerSession> ending;
  {
    MutexLock g(&mu_);
    auto it = sessions_.find(key);
    if (it == sessions_.end()) return false;
    ending = std::move(it->second);
    sessions_.erase(it);
  }
  // Waits for a command of the session still running, then ends it.
  std::lock_guard<std::mutex> running(ending->running);
  ending->session.reset();
  ending->snapshot.reset();
  return true;
}

size_t ServerSessions::size() const {
  MutexLock g(&mu_);
  return sessions_.size();
}

Status EnterTransaction(ServerSession* s, std::string_view command, const TransactionFields& t) {
  const bool ends = command == "commitTransaction" || command == "abortTransaction";
  if (!t.txn_number) {
    if (t.autocommit || t.start_transaction || ends) {
      return Status(ErrorCode::kInvalidOptions,
                    "txnNumber is required for transactions (autocommit, startTransaction, " +
                        std::string(command) + ")");
    }
    return Status::OK();
  }
  if (!t.autocommit) {
    if (command != "insert" && command != "update" && command != "delete" &&
        command != "findAndModify" && command != "findandmodify") {
      return Status(static_cast<ErrorCode>(50768),
                    "txnNumber may only be provided for multi-document transactions and "
                    "retryable write commands. autocommit:false was not provided, and " +
                        std::string(command) + " is not a retryable write command.");
    }
    const int64_t n = *t.txn_number;
    if (n < s->txn_number) {
      return Status(static_cast<ErrorCode>(225),  // TransactionTooOld
                    "txnNumber " + std::to_string(n) + " is less than last txnNumber " +
                        std::to_string(s->txn_number) + " seen in session");
    }
    if (n == s->txn_number) {
      if (!s->retryable) {
        return Status(ErrorCode::kIllegalOperation,
                      "txnNumber " + std::to_string(n) +
                          " belongs to a transaction of this session, not a retryable write");
      }
      return Status::OK();  // a retry
    }
    if (s->session->InTransaction()) s->session->AbortTransaction().IgnoreError();  // superseded
    s->txn_number = n;
    s->committed = false;
    s->retryable = true;
    s->executed.clear();
    s->find_and_modify_reply.reset();
    return Status::OK();
  }
  if (*t.autocommit) {
    return Status(ErrorCode::kInvalidOptions, "Specifying autocommit=true is not allowed.");
  }
  const int64_t n = *t.txn_number;
  if (n < s->txn_number) {
    return Status(static_cast<ErrorCode>(225),  // TransactionTooOld
                  "txnNumber " + std::to_string(n) + " is less than last txnNumber " +
                      std::to_string(s->txn_number) + " seen in session");
  }
  if (t.start_transaction) {
    if (n == s->txn_number) {
      return Status(static_cast<ErrorCode>(256),  // TransactionCommitted / ConflictingOperation
                    "Transaction with txnNumber " + std::to_string(n) + " has already started");
    }
    if (s->session->InTransaction()) s->session->AbortTransaction().IgnoreError();  // superseded
    s->txn_number = n;
    s->committed = false;
    s->retryable = false;
    s->executed.clear();
    s->find_and_modify_reply.reset();
    return s->session->StartTransaction();
  }
  if (n != s->txn_number || s->retryable) {
    return Status(ErrorCode::kNoSuchTransaction,
                  "Given transaction number " + std::to_string(n) +
                      " does not match any in-progress transactions. The active transaction "
                      "number is " +
                      std::to_string(s->txn_number))
        .WithErrorLabel("TransientTransactionError");
  }
  return Status::OK();
}

}  // namespace rockdoc::internal

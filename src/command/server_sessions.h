// command/server_sessions.h: logical sessions as commands carry them
// (`lsid`, `txnNumber`, `autocommit`, `startTransaction`), over the
// library's Session: what a driver's session becomes when it reaches the
// command layer, in process or over the wire.
//
// A session is made on the first command that names its lsid ({id: UUID})
// and ends with endSessions or after MongoDB's logicalSessionTimeoutMinutes
// (30) without use: a background task (ReapOn) reaps the idle ones, so that
// a command finds its session by id without looking at the others. At most
// `max_sessions` (MongoDB's maxSessions, 1,000,000) live at once: the next
// one is TooManyLogicalSessions (261) until one ends or expires.
//
// A transaction is numbered by the driver: the command
// with `startTransaction: true` and a txnNumber greater than any the
// session saw starts it; commands with the same txnNumber and
// `autocommit: false` run in it; commitTransaction / abortTransaction end
// it. As MongoDB:
//   - a txnNumber lower than the session's is TransactionTooOld (225);
//   - autocommit: false with a txnNumber that is not the active
//     transaction's is NoSuchTransaction (251);
//   - autocommit: true is InvalidOptions (72); startTransaction without
//     autocommit: false is InvalidOptions too;
//   - a txnNumber without autocommit is a retryable write (insert, update,
//     delete, findAndModify; another command is Location50768): a greater
//     number starts one, the same number is its retry, and each statement
//     (stmtId: its index in the command) is applied once: a retry reports
//     what the first attempt did (`retriedStmtIds`) and runs only the
//     statements it did not (command/retryable_writes.cc). The record is in
//     memory, for the session's life, as MongoDB keeps it for its
//     transaction table's; a number a transaction used is refused for a
//     retryable write and the reverse.
//
// Thread safety: the table is thread-safe; a session runs one command at
// a time (a second command of the same session waits for the first).
#ifndef ROCKDOC_COMMAND_SERVER_SESSIONS_H_
#define ROCKDOC_COMMAND_SERVER_SESSIONS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "common/background_runner.h"
#include "common/mutex.h"
#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// MongoDB's logicalSessionTimeoutMinutes.
inline constexpr int64_t kSessionIdleTimeoutMs = 30 * 60 * 1000;
// MongoDB's maxSessions server parameter.
inline constexpr size_t kMaxSessions = 1000000;

// What one statement of a retryable write did (update and delete: its n,
// nModified and upserted _id; insert: n = 1).
struct StatementOutcome {
  int64_t n = 0;
  int64_t modified = 0;
  std::optional<Value> upserted_id;
};

struct ServerSession {
  std::mutex running;  // held while one of its commands runs
  std::optional<Session> session;
  int64_t txn_number = -1;  // the highest txnNumber seen
  // Whether transaction txn_number committed: its commit may be sent again
  // (a driver retries a commit whose outcome it did not learn).
  bool committed = false;
  // The session's snapshot reads (readConcern {level: "snapshot"} outside a
  // transaction): one point in time, taken at the first such read.
  std::optional<Session> snapshot;
  int64_t last_used_ms = 0;
  // Whether txn_number is a retryable write's (not a transaction's), and
  // what its statements did, by stmtId; a findAndModify's whole reply.
  bool retryable = false;
  std::map<int32_t, StatementOutcome> executed;
  std::optional<Document> find_and_modify_reply;
};

// The transaction fields of a command.
struct TransactionFields {
  std::optional<int64_t> txn_number;
  std::optional<bool> autocommit;
  bool start_transaction = false;
};

// Reads lsid's id (a UUID) into *key. InvalidUUID-like BadValue otherwise.
Status SessionKey(const Element& lsid, std::string* key);

class ServerSessions {
 public:
  explicit ServerSessions(int64_t idle_timeout_ms = kSessionIdleTimeoutMs,
                          size_t max_sessions = kMaxSessions)
      : idle_timeout_ms_(idle_timeout_ms), max_sessions_(max_sessions) {}
  ServerSessions(const ServerSessions&) = delete;
  ServerSessions& operator=(const ServerSessions&) = delete;

  // The session of `key`, made with client.StartSession() on first use
  // (TooManyLogicalSessions when max_sessions live already).
  StatusOr<std::shared_ptr<ServerSession>> Get(const Client& client, const std::string& key)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the session of `key` (aborting its transaction). False when none.
  bool End(const std::string& key) ABSL_LOCKS_EXCLUDED(mu_);
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the sessions idle longer than the timeout; how many.
  size_t ReapExpired() ABSL_LOCKS_EXCLUDED(mu_);
  // Runs ReapExpired every ReapPeriodMs (command/cursor_manager.h) on
  // `runner` (the engine's, which is stopped before the client closes and
  // the table goes). Once.
  void ReapOn(BackgroundRunner* runner);

 private:
  const int64_t idle_timeout_ms_;
  const size_t max_sessions_;
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<ServerSession>> sessions_ ABSL_GUARDED_BY(mu_);
};

// Applies a command's transaction fields to its session before it runs:
// starts a transaction, or checks that the command belongs to the active
// one. `command` is the command's name.
Status EnterTransaction(ServerSession* s, std::string_view command, const TransactionFields& t);

struct CommandDefinition;
struct CommandContext;
// Runs a retryable write (a command with a txnNumber and no autocommit,
// after EnterTransaction accepted it) so that each of its statements is
// applied once however often it is retried.
Status RunRetryableWrite(CommandContext& ctx, const CommandDefinition& command, DocumentView cmd,
                         ServerSession* s, BsonBuilder* reply);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMAND_SERVER_SESSIONS_H_

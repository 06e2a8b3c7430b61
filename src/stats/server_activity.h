// stats/server_activity.h: what the server is doing and has done, as the
// admin commands show it: the operations in flight (currentOp, $currentOp,
// killOp), the operation counters (serverStatus' opcounters), the time and
// count per namespace (top), the connections and network figures a server
// above the engine feeds (serverStatus' connections and network), and the
// recent log lines (getLog). Part of the engine's Telemetry (telemetry.h),
// so the command layer, which records the commands, and api/, which answers
// $currentOp through the pipeline, reach the same one.
//
// Killing an operation sets its interrupt flag, which the operation's
// thread reads through common/deadline.h (InterruptScope) at every
// interrupt point maxTimeMS uses: the operation fails with Interrupted
// (11601), as MongoDB's killOp makes it. An operation that waits (an
// awaitData getMore) also gives a waker, which killOp calls.
//
// Thread safety: every member is thread-safe.
#ifndef ROCKDOC_STATS_SERVER_ACTIVITY_H_
#define ROCKDOC_STATS_SERVER_ACTIVITY_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "rockdoc/document.h"

namespace rockdoc::internal {

// What an operation is: a command the command layer runs.
struct OperationInfo {
  int32_t connection_id = 0;  // 0: in process (Client::RunCommand)
  std::string client;         // the peer's "host:port" ("" in process)
  std::string app_name;       // the driver's appName, if it gave one
  std::string user;           // "<db>.<user>" authenticated on its connection, or ""
  std::string op;             // MongoDB's: command, query, getmore, insert, update, remove
  std::string ns;             // "<db>.<collection>", or "<db>.$cmd"
  bool write = false;         // a writer (globalLock.activeClients.writers)
  Document command;           // the command as it came (KeptCommand)
};

// One operation in flight.
struct Operation {
  explicit Operation(OperationInfo i) : info(std::move(i)) {}
  const OperationInfo info;
  int32_t opid = 0;
  int64_t start_nanos = 0;    // MonotonicNanos() at its start
  int64_t start_wall_ms = 0;  // the wall clock at its start
  std::atomic<bool> killed{false};

  // While the operation waits for something (an awaitData getMore): what
  // ends the wait early. killOp calls it after setting `killed`.
  void SetWaker(std::function<void()> wake) ABSL_LOCKS_EXCLUDED(mu_);
  void Kill() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Mutex mu_;
  std::function<void()> waker_ ABSL_GUARDED_BY(mu_);
};

// $currentOp's options (pipeline/source_stages.cc decodes them).
struct CurrentOpOptions {
  bool all_users = false;
  bool idle_connections = false;
  bool idle_cursors = false;
  bool idle_sessions = true;
  bool local_ops = false;
  bool truncate_ops = false;
};

// serverStatus' opcounters, counted as MongoDB counts them: insert per
// document of an insert command, update and delete per statement, query per
// find, getmore per getMore, command for every other command.
struct OpCounters {
  std::atomic<int64_t> insert{0}, query{0}, update{0}, remove{0}, getmore{0}, command{0};
};

// What a server above the engine (rockdoc-serve) counts of its
// connections and bytes: serverStatus' connections and network sections.
struct NetworkCounters {
  std::atomic<int64_t> current{0}, total_created{0}, active{0};
  std::atomic<int64_t> bytes_in{0}, bytes_out{0}, num_requests{0};
  std::atomic<int64_t> max{0};  // the connections the server accepts (--maxConns)
};

// top's columns, in MongoDB's order of its reply.
enum class TopColumn { kQueries, kGetMore, kInsert, kUpdate, kRemove, kCommands };

// What an operation keeps of its command: a copy, or for a command over
// 16 KB, MongoDB's truncated form ({$truncated, comment}).
Document KeptCommand(DocumentView command);

// The operation this thread runs (null: none), for the activity's answers
// that depend on who asks.
const Operation* CurrentOperation();
class OperationScope {
 public:
  explicit OperationScope(const Operation* op);
  ~OperationScope();
  OperationScope(const OperationScope&) = delete;
  OperationScope& operator=(const OperationScope&) = delete;

 private:
  const Operation* previous_;
};

class ServerActivity {
 public:
  ServerActivity();

  // Registers an operation (its opid is assigned here) until the returned
  // handle is released (EndOperation). The thread that runs it names it
  // with an OperationScope, so that what it asks of the activity (its own
  // user's operations: allUsers false) knows who asks.
  std::shared_ptr<Operation> BeginOperation(OperationInfo info);
  void EndOperation(const std::shared_ptr<Operation>& op);

  // With options.all_users false and an authenticated user running the
  // asking operation (OperationScope), only that user's operations, as
  // mongod's; without one (no access control, in process), every one.
  // The currentOp documents of the operations in flight, in MongoDB's
  // shape ({type: "op", host, desc, connectionId, client, appName, active,
  // currentOpTime, opid, secs_running, microsecs_running, op, ns, command,
  // ...}), oldest first.
  std::vector<Document> CurrentOps(const CurrentOpOptions& options) const;

  // Kills operation `opid`: false when no such operation is in flight.
  bool Kill(int64_t opid);

  // top: the time (microseconds) and count of one operation on `ns`.
  void RecordTop(std::string_view ns, TopColumn column, bool write, int64_t micros);
  // Appends top's `totals` document: {note, <ns>: {total, readLock,
  // writeLock, queries, getmore, insert, update, remove, commands}}.
  void AppendTop(BsonBuilder* out) const;

  // getLog: a line written (in MongoDB's JSON log format); the last 1024
  // are kept, as mongod's ramlog.
  void Log(std::string line);
  // Logs one event as mongod's structured log writes it:
  // {"t":{"$date":...},"s":"I","c":<component>,"id":<id>,"ctx":<context>,
  //  "msg":<msg>,"attr":<attr>}.
  void LogEvent(std::string_view component, int id, std::string_view context, std::string_view msg,
                DocumentView attr);
  std::vector<std::string> RecentLog(int64_t* total_written) const;
  // Startup warnings (getLog: "startupWarnings"): none so far.

  OpCounters& opcounters() { return opcounters_; }
  const OpCounters& opcounters() const { return opcounters_; }
  NetworkCounters& network() { return network_; }
  const NetworkCounters& network() const { return network_; }

  // Operations in flight now, the readers and the writers (serverStatus'
  // globalLock.activeClients).
  void CountInFlight(int64_t* readers, int64_t* writers) const;

 private:
  struct TopCell {
    int64_t time = 0, count = 0;
  };
  struct TopEntry {
    TopCell total, read_lock, write_lock;
    TopCell columns[6];
  };

  std::atomic<int32_t> next_opid_{1};
  mutable Mutex mu_;
  std::map<int32_t, std::shared_ptr<Operation>> operations_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, TopEntry, std::less<>> top_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> log_ ABSL_GUARDED_BY(mu_);
  int64_t log_written_ ABSL_GUARDED_BY(mu_) = 0;
  OpCounters opcounters_;
  NetworkCounters network_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STATS_SERVER_ACTIVITY_H_

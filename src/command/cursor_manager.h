// command/cursor_manager.h: the server-side cursors of the command layer
// (find, listCollections, listIndexes ... leave one open when their first
// batch does not hold every result; getMore continues it, killCursors ends
// it), as MongoDB's CursorManager: ids, batches under the 16 MiB reply
// rule, and an idle timeout (MongoDB's cursorTimeoutMillis, 10 minutes)
// after which a cursor is closed and getMore fails with CursorNotFound (43).
//
// A cursor in use by one getMore is checked out: a second getMore of the
// same id meanwhile fails with OperationFailed (96) "cursor id <id> is
// already in use".
//
// Tailable cursors (find's tailable, on a capped collection) stay open at
// their end; an awaitData one's getMore waits for writes to the collection
// (CappedState::WaitForWrite) while checked out. killCursors of such a
// cursor, and StopWaits (the server's shutdown), end that wait through the
// cursor's AwaitStop, which the manager keeps beside it.
//
// Thread safety: every method is thread-safe.
#ifndef ROCKDOC_COMMAND_CURSOR_MANAGER_H_
#define ROCKDOC_COMMAND_CURSOR_MANAGER_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "api/client_internal.h"
#include "catalog/catalog.h"
#include "common/background_runner.h"
#include "common/mutex.h"
#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"
#include "storage/change_log.h"

namespace rockdoc::internal {

// MongoDB's largest reply batch: a batch stops before the document that
// would take it over 16 MiB (a first document always goes in).
inline constexpr size_t kMaxBatchBytes = 16 * 1024 * 1024;
// find's first batch when no batchSize is given.
inline constexpr int64_t kDefaultFirstBatch = 101;
// MongoDB's cursorTimeoutMillis.
inline constexpr int64_t kDefaultCursorTimeoutMs = 10 * 60 * 1000;

// What ends an awaitData getMore's wait early: killCursors of its cursor,
// or the server's shutdown (CursorManager::StopWaits).
struct AwaitStop {
  std::atomic<bool> stopped{false};
  std::shared_ptr<CappedState> capped;  // whose waiters Stop() wakes
  const ChangeLog* log = nullptr;       // or a change stream's
  void Stop() {
    stopped.store(true, std::memory_order_release);
    if (capped != nullptr) capped->Wake();
    if (log != nullptr) log->WakeAll();
  }
};

// One open cursor: a query's library cursor, a change stream (an aggregate
// with $changeStream: awaitData, open until it is invalidated; each reply
// carries its postBatchResumeToken), or documents already in memory
// (listCollections, listIndexes), and what getMore needs of it.
struct CommandCursor {
  // The namespace replies name: "<db>.<collection>" (a getMore must name
  // the same). Kept as its parts: the common case never joins them.
  std::string db;
  std::string collection;
  std::optional<Cursor> cursor;
  std::vector<Document> docs;  // when there is no `cursor`
  size_t next_doc = 0;
  // A document read from `cursor` that did not fit the last batch.
  std::optional<Document> pending;
  bool no_timeout = false;
  // How many documents remain to return (a find's limit), or -1: no limit.
  int64_t remaining = -1;
  int64_t last_used_ms = 0;
  // A tailable find's (over a capped collection that exists): its end is
  // not final, the cursor stays open (until its limit is reached). With
  // `await_stop`, an awaitData cursor: getMore waits for writes.
  bool tailable = false;
  std::shared_ptr<AwaitStop> await_stop;

  CommandCursor(std::string d, std::string c, Cursor cur)
      : db(std::move(d)), collection(std::move(c)), cursor(std::move(cur)) {}
  CommandCursor(std::string d, std::string c, std::vector<Document> all)
      : db(std::move(d)), collection(std::move(c)), docs(std::move(all)) {}
  CommandCursor(std::string d, std::string c, ChangeStream s)
      : db(std::move(d)), collection(std::move(c)), stream(std::move(s)) {}
  std::optional<ChangeStream> stream;
  std::string ns() const { return db + "." + collection; }

  // Reads the next document into `pending`; false at the end.
  StatusOr<bool> Advance();
};

// Appends up to `batch_size` documents (negative: no count limit; 0: none,
// an empty first batch) of `c` to the
// open array `batch`, under kMaxBatchBytes, counting them in *appended if
// given. Returns true when `c` is exhausted (for a tailable cursor: has
// nothing more yet) (its status, if an error, is returned instead).
StatusOr<bool> FillBatch(CommandCursor* c, int64_t batch_size, BsonBuilder* batch,
                         int64_t* appended = nullptr);

// Whether a cursor stays open although FillBatch found it exhausted: a
// tailable one whose limit is not reached.
inline bool StaysOpen(const CommandCursor& c) {
  return (c.tailable && c.remaining != 0) || (c.stream && !c.stream->closed());
}

// How often a reaper looks for what has been idle past `idle_timeout_ms`
// (cursors, server sessions): the timeout itself, at least 1 ms and at
// most a minute.
inline int64_t ReapPeriodMs(int64_t idle_timeout_ms) {
  return std::clamp<int64_t>(idle_timeout_ms, 1, 60 * 1000);
}

class CursorManager {
 public:
  explicit CursorManager(int64_t idle_timeout_ms = kDefaultCursorTimeoutMs)
      : idle_timeout_ms_(idle_timeout_ms) {}

  // Keeps `c` open and returns its id (never 0).
  int64_t Register(std::unique_ptr<CommandCursor> c) ABSL_LOCKS_EXCLUDED(mu_);
  // Takes cursor `id` of namespace `ns` out for a getMore. CursorNotFound
  // (43) "cursor id <id> not found" when there is none (never opened,
  // exhausted, killed or timed out); Unauthorized (13) when it belongs to
  // another namespace; OperationFailed (96) when it is in use.
  StatusOr<std::unique_ptr<CommandCursor>> CheckOut(int64_t id, std::string_view ns)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Puts a checked-out cursor back (its idle time starts again).
  void CheckIn(int64_t id, std::unique_ptr<CommandCursor> c) ABSL_LOCKS_EXCLUDED(mu_);
  // Closes cursor `id` of `ns`; false when there is none.
  bool Kill(int64_t id, std::string_view ns) ABSL_LOCKS_EXCLUDED(mu_);
  // Closes the cursors idle for longer than the timeout; returns how many.
  // CheckOut looks at its own cursor's idle time only, so that no command
  // scans the others under the lock; the rest is ReapOn's.
  int ReapIdle() ABSL_LOCKS_EXCLUDED(mu_);
  // Runs ReapIdle every ReapPeriodMs on `runner` (the engine's, which is
  // stopped before the client closes and the manager goes). Once.
  void ReapOn(BackgroundRunner* runner) {
    runner->Add("cursors", ReapPeriodMs(idle_timeout_ms()), [this] { ReapIdle(); });
  }
  size_t open_cursors() const ABSL_LOCKS_EXCLUDED(mu_);
  // cursorTimeoutMillis, which setParameter changes at runtime (a cursor
  // past a new, shorter timeout is closed at its next getMore, and by the
  // reaper at its period, which stays as ReapOn set it).
  int64_t idle_timeout_ms() const { return idle_timeout_ms_.load(std::memory_order_relaxed); }
  void set_idle_timeout_ms(int64_t ms) { idle_timeout_ms_.store(ms, std::memory_order_relaxed); }
  // Ends every awaitData wait, now and from now on (the server is shutting
  // down: its connections finish the request they run).
  void StopWaits() ABSL_LOCKS_EXCLUDED(mu_);
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }

 private:
  struct Slot {
    std::unique_ptr<CommandCursor> cursor;  // null while checked out
    std::shared_ptr<AwaitStop> await_stop;  // awaitData cursors'
  };
  int ReapIdleLocked(int64_t now_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Expired(const CommandCursor* c, int64_t now_ms) const;

  std::atomic<int64_t> idle_timeout_ms_;
  mutable Mutex mu_;
  std::map<int64_t, Slot> cursors_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> stopping_{false};
  std::mt19937_64 ids_ ABSL_GUARDED_BY(mu_){std::random_device{}()};
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMAND_CURSOR_MANAGER_H_

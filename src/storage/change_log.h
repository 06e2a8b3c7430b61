// storage/change_log.h: the change log's storage side: its key space (the
// "changes" column family), the commit sequencer that numbers events in
// commit order, the notifier readers wait on, reading, and retention.
//
// What an event holds is the store's business (store/change_set.h writes
// them, api/ reads them): here an event is a value under a position.
//
// A position is MongoDB's cluster time of the commit (a BSON Timestamp:
// seconds since the epoch << 32 | an increment within the second) and the
// event's index within its commit (txnOpIndex: a multi-document
// transaction's statements share one cluster time). Positions only grow, in
// commit order: a commit with events takes the sequencer (BeginCommit),
// writes its events into its own write batch under the next cluster time,
// commits, and releases it (EndCommit), so an event exists exactly when its
// change is committed, crash or not, and events are read in commit order.
//
// Retention, as MongoDB's oplog: the log is trimmed from its oldest commit
// once it holds more than ClientOptions::change_log_max_bytes, except the
// commits younger than change_log_min_retention_hours, and never its newest
// commit. The history start (persisted in the catalog key space) is the
// position from which the log is complete: a reader asking for older events
// gets ChangeStreamHistoryLost (286), never a silent gap. A database opened
// with the log off forgets its events; opened with it on again, its history
// starts anew.
//
// Thread safety: all members are thread-safe.
#ifndef ROCKDOC_STORAGE_CHANGE_LOG_H_
#define ROCKDOC_STORAGE_CHANGE_LOG_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

class Engine;
class KvTransaction;

struct ChangePosition {
  uint64_t cluster_time = 0;  // seconds << 32 | increment
  uint32_t op_index = 0;
  friend bool operator==(const ChangePosition& a, const ChangePosition& b) {
    return a.cluster_time == b.cluster_time && a.op_index == b.op_index;
  }
  friend bool operator<(const ChangePosition& a, const ChangePosition& b) {
    return a.cluster_time != b.cluster_time ? a.cluster_time < b.cluster_time
                                            : a.op_index < b.op_index;
  }
};

// The key of the event at `p` (cluster time BE64, op index BE32).
std::string ChangeLogKey(const ChangePosition& p);
// The position of a key; DataCorruptionDetected when it is not one.
StatusOr<ChangePosition> ParseChangeLogKey(std::string_view key);

class ChangeLog {
 public:
  // Opens the log of `engine` (whose "changes" column family is open):
  // finds the last position and the size, and starts the history anew when
  // the log was off (or is new). Engine::Open calls it.
  static StatusOr<std::unique_ptr<ChangeLog>> Open(const Engine* engine);
  // The log of a database opened with it off: its events and history start
  // go (the next open with it on starts a new history).
  static Status Forget(const Engine* engine);
  // Whether the database had the log on when it was last open (its history
  // start is kept exactly then): ClientOptions::change_log unset keeps that.
  static StatusOr<bool> WasOn(const Engine* engine);

  // Takes the sequencer and returns the commit's cluster time (greater than
  // every earlier one, and from the wall clock when that is later).
  uint64_t BeginCommit() ABSL_EXCLUSIVE_LOCK_FUNCTION(seq_mu_);
  // Writes the event `value` at `p` into `txn` (between BeginCommit and the
  // commit).
  Status Write(KvTransaction* txn, const ChangePosition& p, std::string_view value);
  // After the commit (`committed`: whether it succeeded): publishes its
  // events (`bytes` of them), releases the sequencer, wakes the readers,
  // and trims the log when it grew past its bound.
  void EndCommit(uint64_t cluster_time, bool committed, uint64_t bytes)
      ABSL_UNLOCK_FUNCTION(seq_mu_);

  // The cluster time of the last commit with events (0: none yet).
  uint64_t last_cluster_time() const { return published_.load(std::memory_order_acquire); }
  // OK when the events after `p` are all still in the log (p at or after
  // the history start); ChangeStreamHistoryLost (286) otherwise.
  Status CheckRetained(const ChangePosition& p) const ABSL_LOCKS_EXCLUDED(trim_mu_);

  // Calls `fn` with each committed event after `after` (exclusive), in
  // order, until it returns false (or an error, returned). Reads the latest
  // committed state: never an event of a commit still in flight. When a
  // trim took events after `after` (before or while it read), it fails
  // with ChangeStreamHistoryLost (286) once `fn` has seen what was left:
  // the caller drops that and never passes the gap on.
  Status Read(
      const ChangePosition& after,
      const std::function<StatusOr<bool>(const ChangePosition&, std::string_view)>& fn) const;

  // Waits until a commit later than `cluster_time` is published, at most
  // `timeout_ms`, until Interrupt, or until *stop (when given) is set and
  // WakeAll called. Returns whether one was.
  bool WaitForNewer(uint64_t cluster_time, int64_t timeout_ms,
                    const std::atomic<bool>* stop = nullptr) const;
  // Wakes every waiter to look at its stop flag (killCursors of an awaiting
  // change stream).
  void WakeAll() const;
  // Wakes every waiter for good (the engine is closing).
  void Interrupt();

  // The bytes the log holds (approximately: what was written since open,
  // less what was trimmed, plus RocksDB's estimate at open).
  uint64_t approximate_bytes() const { return bytes_.load(std::memory_order_relaxed); }

  // The retention (ClientOptions::change_log_max_bytes and
  // change_log_min_retention_hours at open; replSetResizeOplog changes it
  // while the database is open): trims at once to a smaller bound. The
  // caller has checked the values (max_bytes > 0, hours >= 0).
  void SetRetention(int64_t max_bytes, double min_retention_hours);
  int64_t max_bytes() const { return max_bytes_.load(std::memory_order_relaxed); }
  double min_retention_hours() const { return min_retention_hours_.load(std::memory_order_relaxed); }

 private:
  explicit ChangeLog(const Engine* engine);
  // Trims when the log holds more than its bound (and the trim is free).
  void MaybeTrim();
  // Trims to the retention bound: whole commits from the oldest. The new
  // history start is published before the events go, so that a reader
  // that could miss them sees it (Read).
  Status TrimLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(trim_mu_);

  const Engine* engine_;
  Mutex seq_mu_;                                // the sequencer
  uint64_t last_ ABSL_GUARDED_BY(seq_mu_) = 0;  // the last cluster time issued
  std::atomic<uint64_t> published_{0};
  std::atomic<uint64_t> bytes_{0};
  std::atomic<int64_t> max_bytes_;
  std::atomic<double> min_retention_hours_;
  mutable Mutex trim_mu_;
  ChangePosition start_ ABSL_GUARDED_BY(trim_mu_);
  mutable Mutex wait_mu_;
  mutable std::condition_variable wake_;
  bool interrupted_ ABSL_GUARDED_BY(wait_mu_) = false;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_CHANGE_LOG_H_

// common/deadline.h: maxTimeMS, the time limit of one operation.
//
// MongoDB stops an operation that runs past its maxTimeMS at the next
// interrupt point with MaxTimeMSExpired (50) "operation exceeded time
// limit". rockdoc's interrupt points are the plan executor's work loop
// (every scan, sort input and count runs there), each document of a
// multi-document write, and the long loops of update operators ($addToSet
// with $each, $push with $sort, $pull). Reading the clock costs a tenth of a
// fast scan's step, so loops check it every kCheckInterval steps
// (DeadlineChecker). Work that has no loop of ours to check in (one regex
// match, inside PCRE2) reads the deadline of the operation its thread runs,
// CurrentDeadline(), which the plan executor's work loop and the pipeline's
// deadline checks set for the work they drive (DeadlineScope).
//
// killOp stops an operation through the same checks: the thread running a
// command has its operation's interrupt flag (InterruptScope), and every
// Check() of a deadline on that thread reads it first, so that a killed
// operation fails at its next interrupt point with Interrupted (11601)
// "operation was interrupted", as MongoDB's. The loops check a deadline
// that has no time limit too while an interrupt flag is in scope
// (Deadline::checked()).
//
// The clock is monotonic (steady_clock); tests may replace it
// (SetClockForTesting) so that expiry does not depend on the machine's speed.
//
// Thread safety: a Deadline is an immutable value; a DeadlineChecker belongs
// to one thread. SetClockForTesting may be called at any time.
#ifndef ROCKDOC_COMMON_DEADLINE_H_
#define ROCKDOC_COMMON_DEADLINE_H_

#include <atomic>
#include <cstdint>

#include "rockdoc/status.h"

namespace rockdoc::internal {

// Nanoseconds on the monotonic clock (or the test clock).
int64_t MonotonicNanos();

// Test hook: `clock` replaces the monotonic clock (nullptr restores it). It
// may be called from many threads at once.
void SetClockForTesting(int64_t (*clock)());

// MaxTimeMSExpired (50) "operation exceeded time limit", MongoDB's error.
Status MaxTimeExpiredError();

// BadValue (2) unless 0 <= max_time_ms <= 2^31 - 1, MongoDB's range.
Status CheckMaxTimeMS(int64_t max_time_ms);

// Interrupted (11601) "operation was interrupted", MongoDB's error for a
// killed operation.
Status InterruptedError();

// The interrupt flag of the operation this thread runs (null: none).
const std::atomic<bool>* CurrentInterrupt();

// Makes `flag` (which must outlive the scope) CurrentInterrupt() for its
// lifetime, then restores the previous one.
class InterruptScope {
 public:
  explicit InterruptScope(const std::atomic<bool>* flag);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

class Deadline {
 public:
  // No limit.
  Deadline() = default;
  // `max_time_ms` from now; 0 = no limit.
  static Deadline AfterMillis(int64_t max_time_ms);
  // At `at_nanos` on MonotonicNanos()'s clock.
  static Deadline At(int64_t at_nanos) {
    Deadline d;
    d.at_nanos_ = at_nanos == 0 ? 1 : at_nanos;
    return d;
  }

  bool is_set() const { return at_nanos_ != 0; }
  // Whether Check() can fail: a time limit, or an interrupt flag in scope.
  bool checked() const { return is_set() || CurrentInterrupt() != nullptr; }
  // OK; Interrupted once the thread's operation is killed; MaxTimeMSExpired
  // once the deadline has passed. Reads the clock (only when a deadline is
  // set).
  Status Check() const;
  // Milliseconds left (at least 1 while not expired); INT64_MAX when unset.
  int64_t RemainingMillis() const;

 private:
  int64_t at_nanos_ = 0;  // 0: none
};

// Checks a deadline every kCheckInterval calls of Tick(), so that a tight
// loop reads the clock rarely.
//
// Example:
//   DeadlineChecker checker(deadline);
//   for (...) { ROCKDOC_RETURN_IF_ERROR(checker.Tick()); ... }
class DeadlineChecker {
 public:
  static constexpr uint32_t kCheckInterval = 128;

  explicit DeadlineChecker(const Deadline* deadline) : deadline_(deadline) {}
  Status Tick() {
    if (deadline_ == nullptr || !deadline_->checked() || ++ticks_ % kCheckInterval != 0) {
      return Status::OK();
    }
    return deadline_->Check();
  }

 private:
  const Deadline* deadline_;
  uint32_t ticks_ = 0;
};

// The deadline of the operation this thread is running, for long work with
// no interrupt point of its own to be handed one: query/regex.cc checks it
// from PCRE2's callouts during a match. Null when none is set.
const Deadline* CurrentDeadline();

// Makes `deadline` (null: none) CurrentDeadline() for its lifetime, then
// restores the previous one.
//
// Example:
//   DeadlineScope scope(&deadline_);
//   state = root_->Work(&out);  // a regex inside stops at the deadline
class DeadlineScope {
 public:
  explicit DeadlineScope(const Deadline* deadline);
  ~DeadlineScope();
  DeadlineScope(const DeadlineScope&) = delete;
  DeadlineScope& operator=(const DeadlineScope&) = delete;

 private:
  const Deadline* previous_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMON_DEADLINE_H_

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
// The clock is monotonic (steady_clock); tests may replace it
// (SetClockForTesting) so that expiry does not depend on the machine's speed.
//
// Thread safety: a Deadline is an immutable value; a DeadlineChecker belongs
// to one thread. SetClockForTesting may be called at any time.
#ifndef ROCKDOC_COMMON_DEADLINE_H_
#define ROCKDOC_COMMON_DEADLINE_H_

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
  // OK, or MaxTimeMSExpired once the deadline has passed. Reads the clock
  // (only when a deadline is set).
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
    if (deadline_ == nullptr || !deadline_->is_set() || ++ticks_ % kCheckInterval != 0) {
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

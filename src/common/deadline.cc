#include "common/deadline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <string>

namespace rockdoc::internal {

namespace {
std::atomic<int64_t (*)()> test_clock{nullptr};
thread_local const Deadline* current_deadline = nullptr;
thread_local const std::atomic<bool>* current_interrupt = nullptr;
}  // namespace

Status InterruptedError() {
  return Status(ErrorCode::kInterrupted, "operation was interrupted");
}

const std::atomic<bool>* CurrentInterrupt() { return current_interrupt; }

InterruptScope::InterruptScope(const std::atomic<bool>* flag) : previous_(current_interrupt) {
  current_interrupt = flag;
}

InterruptScope::~InterruptScope() { current_interrupt = previous_; }

const Deadline* CurrentDeadline() { return current_deadline; }

DeadlineScope::DeadlineScope(const Deadline* deadline) : previous_(current_deadline) {
  current_deadline = deadline != nullptr && deadline->checked() ? deadline : nullptr;
}

DeadlineScope::~DeadlineScope() { current_deadline = previous_; }

int64_t MonotonicNanos() {
  if (auto* clock = test_clock.load(std::memory_order_acquire)) return clock();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SetClockForTesting(int64_t (*clock)()) { test_clock.store(clock, std::memory_order_release); }

Status MaxTimeExpiredError() {
  return Status(ErrorCode::kMaxTimeMSExpired, "operation exceeded time limit");
}

Status CheckMaxTimeMS(int64_t max_time_ms) {
  if (max_time_ms < 0 || max_time_ms > std::numeric_limits<int32_t>::max()) {
    return BadValue(std::to_string(max_time_ms) +
                    " value for maxTimeMS is out of range [0, 2147483647]");
  }
  return Status::OK();
}

Deadline Deadline::AfterMillis(int64_t max_time_ms) {
  Deadline d;
  if (max_time_ms > 0) d.at_nanos_ = MonotonicNanos() + max_time_ms * 1000000;
  return d;
}

Status Deadline::Check() const {
  if (current_interrupt != nullptr && current_interrupt->load(std::memory_order_relaxed)) {
    return InterruptedError();
  }
  if (at_nanos_ == 0 || MonotonicNanos() < at_nanos_) return Status::OK();
  return MaxTimeExpiredError();
}

int64_t Deadline::RemainingMillis() const {
  if (at_nanos_ == 0) return std::numeric_limits<int64_t>::max();
  int64_t left = at_nanos_ - MonotonicNanos();
  return left <= 0 ? 0 : std::max<int64_t>(1, left / 1000000);
}

}  // namespace rockdoc::internal

// common/clock.h: the two clocks the library reads, in milliseconds.
//
// Thread safety: pure functions.
#ifndef ROCKDOC_COMMON_CLOCK_H_
#define ROCKDOC_COMMON_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace rockdoc::internal {

// Milliseconds since the Unix epoch (dates: $currentDate, hello's
// localTime, $indexStats' since, TTL expiry).
inline int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Milliseconds on the monotonic clock (periods and idle times).
inline int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMON_CLOCK_H_

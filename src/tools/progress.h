// tools/progress.h: progress of a long run (documents and bytes done, rate,
// ETA), as mongo-tools show it on a terminal: one line per interval on the
// log stream while a collection is being processed. The programs turn it on
// only when stderr is a terminal (and not --quiet), as mongo-tools stay
// quiet when their output is not one; library callers choose.
//
// Thread safety: one thread per Progress.
#ifndef ROCKDOC_TOOLS_PROGRESS_H_
#define ROCKDOC_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "rockdoc/tools.h"  // ProgressOptions

namespace rockdoc::tools {

class Progress {
 public:
  // `what` names the work ("test.foo"); `total_bytes`, when known (> 0),
  // gives the bar, the percentage and the ETA.
  Progress(const ProgressOptions& options, std::string what, int64_t total_bytes);
  // Counts documents and bytes done; prints a line when the interval has
  // passed since the last one.
  void Add(int64_t docs, int64_t bytes);
  int64_t docs() const { return docs_; }
  int64_t bytes() const { return bytes_; }
  // The line Add prints, for the current counts ("[####....]  test.foo
  // 1.2MB/4.5MB (26.7%)  1200 docs  1.1MB/s  ETA 3s").
  std::string Line() const;

 private:
  using Clock = std::chrono::steady_clock;
  ProgressOptions options_;
  std::string what_;
  int64_t total_bytes_;
  int64_t docs_ = 0;
  int64_t bytes_ = 0;
  Clock::time_point start_;
  Clock::time_point last_;
};

}  // namespace rockdoc::tools

#endif  // ROCKDOC_TOOLS_PROGRESS_H_

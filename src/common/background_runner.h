// common/background_runner.h: periodic background tasks on one thread (the
// TTL monitor, ...), owned by a client and stopped by its Close().
//
// Stop() wakes the thread at once (a task between runs never makes Close
// wait out its period) and joins it; a task already running finishes its
// run first. Tasks must be quick to stop: long loops should check
// stopping().
//
// Thread safety: all members are thread-safe.
#ifndef ROCKDOC_COMMON_BACKGROUND_RUNNER_H_
#define ROCKDOC_COMMON_BACKGROUND_RUNNER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"

namespace rockdoc::internal {

class BackgroundRunner {
 public:
  BackgroundRunner() = default;
  ~BackgroundRunner() { Stop(); }
  BackgroundRunner(const BackgroundRunner&) = delete;
  BackgroundRunner& operator=(const BackgroundRunner&) = delete;

  // Runs `task` every `period_ms` (> 0), the first time one period from
  // now. Starts the thread on the first call. Ignored once stopped.
  void Add(std::string name, int64_t period_ms, std::function<void()> task)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Wakes and joins the thread. Idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);
  bool stopping() const ABSL_LOCKS_EXCLUDED(mu_);
  // How many times the task `name` has run (tests wait on it).
  int64_t runs(const std::string& name) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Task {
    std::string name;
    int64_t period_ms;
    std::function<void()> fn;
    int64_t next_run_ms;  // on the steady clock
    int64_t runs = 0;
  };
  void Loop();

  mutable Mutex mu_;
  std::vector<Task> tasks_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::condition_variable wake_;  // Stop wakes the thread
  std::thread thread_;  // joined by Stop
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMON_BACKGROUND_RUNNER_H_

#include "common/background_runner.h"

#include "common/clock.h"

namespace rockdoc::internal {

void BackgroundRunner::Add(std::string name, int64_t period_ms, std::function<void()> task) {
  MutexLock g(&mu_);
  if (stop_ || period_ms <= 0) return;
  tasks_.push_back(Task{std::move(name), period_ms, std::move(task), SteadyMillis() + period_ms});
  if (!started_) {
    started_ = true;
    thread_ = std::thread([this] { Loop(); });
  }
}

void BackgroundRunner::Stop() {
  {
    MutexLock g(&mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool BackgroundRunner::stopping() const {
  MutexLock g(&mu_);
  return stop_;
}

int64_t BackgroundRunner::runs(const std::string& name) const {
  MutexLock g(&mu_);
  for (const Task& t : tasks_) {
    if (t.name == name) return t.runs;
  }
  return 0;
}

void BackgroundRunner::Loop() {
  mu_.Lock();
  while (!stop_) {
    // The next task due; wait for it (or for Stop).
    size_t next = 0;
    for (size_t i = 1; i < tasks_.size(); ++i) {
      if (tasks_[i].next_run_ms < tasks_[next].next_run_ms) next = i;
    }
    const int64_t wait_ms = tasks_[next].next_run_ms - SteadyMillis();
    if (wait_ms > 0) {
      // Waits on the held lock (adopted, then handed back): Stop notifies.
      std::unique_lock<std::mutex> held(mu_.native(), std::adopt_lock);
      wake_.wait_for(held, std::chrono::milliseconds(wait_ms));
      held.release();
      continue;
    }
    std::function<void()> fn = tasks_[next].fn;
    tasks_[next].next_run_ms = SteadyMillis() + tasks_[next].period_ms;
    mu_.Unlock();
    fn();  // without the lock: Stop may be called meanwhile
    mu_.Lock();
    ++tasks_[next].runs;
  }
  mu_.Unlock();
}

}  // namespace rockdoc::internal

// bench/bench_util.h: what every rockdoc benchmark shares: a console reporter
// that remembers each run's rate so that the program can print, at the end,
// the ratios measured in the same run (rockdoc against its reference).
#ifndef ROCKDOC_BENCH_BENCH_UTIL_H_
#define ROCKDOC_BENCH_BENCH_UTIL_H_

#include <benchmark/benchmark.h>

#include <errno.h>  // program_invocation_short_name

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "rockdoc/json.h"

namespace rockdoc::bench {

// A benchmark's setup failed: "<program>: <what>" on stderr, exit 1 (a
// measurement of a broken run is no measurement).
[[noreturn]] inline void Die(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what.c_str());
  std::exit(1);
}
// A document from a JSON literal, or Die.
inline Document JsonOrDie(const char* text) {
  auto d = FromJson(text);
  if (!d.ok()) Die(d.status().ToString());
  return std::move(d).value();
}
// The integer in the environment variable `name`, or `fallback` when unset.
inline int64_t EnvInt64(const char* name, int64_t fallback) {
  const char* env = std::getenv(name);
  return env != nullptr ? std::atoll(env) : fallback;
}
// The value of `v`, or Die with `what` and its error.
template <typename T, template <typename> class StatusOrT>
T Check(StatusOrT<T> v, const char* what) {
  if (!v.ok()) Die(std::string(what) + ": " + v.status().ToString());
  return std::move(v).value();
}
// Die unless `s` (a rockdoc::Status or a rocksdb::Status) is OK.
template <typename S>
void Check(const S& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

// A field of /proc/self/status in kB (VmRSS, VmHWM); -1 when missing.
inline int64_t StatusKb(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}
// The process's resident memory now, in MiB.
inline double ResidentMiB() { return static_cast<double>(StatusKb("VmRSS")) / 1024; }

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // `extra_counters`: user counters (besides items_per_second) to keep and
  // list with PrintExtras().
  explicit RatioReporter(std::vector<std::string> extra_counters = {})
      : extra_counters_(std::move(extra_counters)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
      auto it = run.counters.find("items_per_second");
      if (it != run.counters.end()) rates_[run.benchmark_name()] = it->second;
      for (const std::string& c : extra_counters_) {
        auto w = run.counters.find(c);
        if (w != run.counters.end()) extras_[run.benchmark_name() + " " + c] = w->second;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // Items per second of the run `name`; names may carry suffixes such as
  // "/iterations:1000/real_time". 0 when there was no such run.
  double Rate(const std::string& name) const {
    for (const auto& [k, v] : rates_) {
      if (k == name || k.rfind(name + "/", 0) == 0) return v;
    }
    return 0;
  }

  // Prints "what  a / b = ratio", and whether `goal` (if > 0) is met.
  void Ratio(const std::string& what, const std::string& a, const std::string& b,
             double goal = 0) const {
    double x = Rate(a), y = Rate(b);
    if (x == 0 || y == 0) return;
    std::printf("  %-46s %11.0f / %11.0f /s = %6.3f", what.c_str(), x, y, x / y);
    if (goal > 0) std::printf("  (goal >= %g: %s)", goal, x / y >= goal ? "met" : "MISSED");
    std::printf("\n");
  }

  void PrintExtras() const {
    for (const auto& [name, v] : extras_) std::printf("  %-46s %14.0f\n", name.c_str(), v);
  }

  const std::map<std::string, double>& rates() const { return rates_; }

 private:
  std::vector<std::string> extra_counters_;
  std::map<std::string, double> rates_;
  std::map<std::string, double> extras_;
};

// The main of a benchmark that prints ratios: Google Benchmark's flags
// (an unknown one exits 1), `register_all` (its benchmarks), every run
// reported through one RatioReporter, then `report` with it. Returns main's
// status; the caller frees what its benchmarks loaded afterwards.
inline int RunRatioBenchmarks(int argc, char** argv, const std::function<void()>& register_all,
                              const std::function<void(const RatioReporter&)>& report) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  report(reporter);
  std::fflush(stdout);
  benchmark::Shutdown();
  return 0;
}

}  // namespace rockdoc::bench

#endif  // ROCKDOC_BENCH_BENCH_UTIL_H_

#include "tools/progress.h"

#include <cstdio>

#include "tools/formats.h"

namespace rockdoc::tools {
namespace {

std::string Size(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f%s" : "%.1f%s", bytes, units[u]);
  return buf;
}

}  // namespace

Progress::Progress(const ProgressOptions& options, std::string what, int64_t total_bytes)
    : options_(options), what_(std::move(what)), total_bytes_(total_bytes),
      start_(Clock::now()), last_(start_) {}

void Progress::Add(int64_t docs, int64_t bytes) {
  docs_ += docs;
  bytes_ += bytes;
  if (options_.out == nullptr) return;
  Clock::time_point now = Clock::now();
  if (now - last_ < options_.interval) return;
  last_ = now;
  *options_.out << LogTimestamp() << '\t' << Line() << '\n';
}

std::string Progress::Line() const {
  std::string line;
  double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  double rate = seconds > 0 ? bytes_ / seconds : 0;
  if (total_bytes_ > 0) {
    double fraction = std::min(1.0, static_cast<double>(bytes_) / static_cast<double>(total_bytes_));
    int filled = static_cast<int>(fraction * 24);
    line = "[" + std::string(static_cast<size_t>(filled), '#') +
           std::string(static_cast<size_t>(24 - filled), '.') + "]  " + what_ + "  " +
           Size(static_cast<double>(bytes_)) + "/" + Size(static_cast<double>(total_bytes_));
    char pct[16];
    std::snprintf(pct, sizeof(pct), " (%.1f%%)", fraction * 100);
    line += pct;
  } else {
    line = what_ + "  " + Size(static_cast<double>(bytes_));
  }
  line += "  " + std::to_string(docs_) + " docs  " + Size(rate) + "/s";
  if (total_bytes_ > 0 && rate > 0 && bytes_ < total_bytes_) {
    line += "  ETA " + std::to_string(static_cast<int64_t>((total_bytes_ - bytes_) / rate) + 1) + "s";
  }
  return line;
}

}  // namespace rockdoc::tools

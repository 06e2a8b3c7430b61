#include "storage/file_system.h"

#include "common/mutex.h"

#include <pthread.h>
#include <rocksdb/env.h>
#include <sys/time.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>
#include <string_view>

namespace rockdoc::internal {

namespace {

// True for the name of a write-ahead log file ("000012.log", with or without
// a directory in front).
bool IsWalFileName(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  constexpr std::string_view kSuffix = ".log";
  if (name.size() <= kSuffix.size() || name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  name.remove_suffix(kSuffix.size());
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The info log over one writable file, in RocksDB's line format
// ("2026/11/23-19:05:00.123456 7f12... message"). Every failure is ignored:
// a line that cannot be written is lost, and the next one is tried afresh.
// No WritableFileWriter sits in between, so nothing remembers an error.
class BestEffortLogger : public rocksdb::Logger {
 public:
  explicit BestEffortLogger(std::unique_ptr<rocksdb::FSWritableFile> file)
      : file_(std::move(file)) {}
  ~BestEffortLogger() override {
    if (!closed_) {
      closed_ = true;
      CloseImpl().PermitUncheckedError();
    }
  }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char buffer[1024];
    size_t prefix = Prefix(buffer, sizeof(buffer));
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(buffer + prefix, sizeof(buffer) - prefix, format, copy);
    va_end(copy);
    if (n < 0) return;
    std::string line;
    if (prefix + static_cast<size_t>(n) < sizeof(buffer)) {
      line.assign(buffer, prefix + n);
    } else {
      line.assign(buffer, prefix);
      line.resize(prefix + n + 1);
      vsnprintf(line.data() + prefix, n + 1, format, ap);
      line.resize(prefix + n);
    }
    if (line.empty() || line.back() != '\n') line.push_back('\n');
    MutexLock g(&mu_);
    if (file_ == nullptr) return;
    rocksdb::IOOptions io;
    if (file_->Append(line, io, nullptr).ok()) size_ += line.size();
    file_->Flush(io, nullptr).PermitUncheckedError();
  }

  size_t GetLogFileSize() const override {
    MutexLock g(&mu_);
    return size_;
  }

  void Flush() override {
    MutexLock g(&mu_);
    if (file_ != nullptr) file_->Flush(rocksdb::IOOptions(), nullptr).PermitUncheckedError();
  }

 protected:
  rocksdb::Status CloseImpl() override {
    MutexLock g(&mu_);
    if (file_ == nullptr) return rocksdb::Status::OK();
    // A log that cannot be closed cleanly loses lines, nothing else.
    file_->Close(rocksdb::IOOptions(), nullptr).PermitUncheckedError();
    file_.reset();
    return rocksdb::Status::OK();
  }

 private:
  static size_t Prefix(char* out, size_t size) {
    struct timeval now;
    gettimeofday(&now, nullptr);
    struct tm t;
    localtime_r(&now.tv_sec, &t);
    int n = snprintf(out, size, "%04d/%02d/%02d-%02d:%02d:%02d.%06ld %llx ", t.tm_year + 1900,
                     t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                     static_cast<long>(now.tv_usec),
                     static_cast<unsigned long long>(pthread_self()));
    return n < 0 ? 0 : std::min(static_cast<size_t>(n), size - 1);
  }

  mutable Mutex mu_;
  std::unique_ptr<rocksdb::FSWritableFile> file_ ABSL_GUARDED_BY(mu_);
  size_t size_ ABSL_GUARDED_BY(mu_) = 0;
};

// A write-ahead log whose preallocation step is capped.
class WalFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  using FSWritableFileOwnerWrapper::FSWritableFileOwnerWrapper;
  void SetPreallocationBlockSize(size_t size) override {
    target()->SetPreallocationBlockSize(std::min(size, kMaxWalPreallocationBytes));
  }
};

class RockdocFileSystem : public rocksdb::FileSystemWrapper {
 public:
  using FileSystemWrapper::FileSystemWrapper;
  const char* Name() const override { return "RockdocFileSystem"; }

  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    return Wrap(fname, target()->NewWritableFile(fname, options, result, dbg), result);
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& fname,
                                       const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override {
    return Wrap(fname, target()->ReopenWritableFile(fname, options, result, dbg), result);
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& fname, const std::string& old_fname,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* dbg) override {
    return Wrap(fname, target()->ReuseWritableFile(fname, old_fname, options, result, dbg),
                result);
  }

  rocksdb::IOStatus NewLogger(const std::string& fname, const rocksdb::IOOptions& io_opts,
                              std::shared_ptr<rocksdb::Logger>* result,
                              rocksdb::IODebugContext* dbg) override {
    rocksdb::FileOptions options;
    options.io_options = io_opts;
    std::unique_ptr<rocksdb::FSWritableFile> file;
    // Through this file system, so that a test's fault injection reaches the
    // log as well.
    rocksdb::IOStatus s = NewWritableFile(fname, options, &file, dbg);
    if (!s.ok()) return s;
    *result = std::make_shared<BestEffortLogger>(std::move(file));
    return rocksdb::IOStatus::OK();
  }

 private:
  static rocksdb::IOStatus Wrap(const std::string& fname, rocksdb::IOStatus s,
                                std::unique_ptr<rocksdb::FSWritableFile>* result) {
    if (s.ok() && IsWalFileName(fname)) {
      *result = std::make_unique<WalFile>(std::move(*result));
    }
    return s;
  }
};

}  // namespace

std::shared_ptr<rocksdb::FileSystem> NewRockdocFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base) {
  if (base == nullptr) base = rocksdb::FileSystem::Default();
  return std::make_shared<RockdocFileSystem>(std::move(base));
}

}  // namespace rockdoc::internal

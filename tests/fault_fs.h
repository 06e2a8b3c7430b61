// A RocksDB FileSystem for tests that fails on command and simulates a
// power loss.
//
// FaultFileSystem wraps a real FileSystem and
//  - injects errors: a FaultRule names an operation (create, append, sync,
//    close, rename), the files it applies to (a substring of the name:
//    ".log", ".sst", "MANIFEST", "CURRENT", "LOG"; "" for all), how many
//    matching operations succeed first, the error (ENOSPC as RocksDB's posix
//    layer reports it, or EIO), and whether it keeps failing ("sticky", a
//    full disk) or fails once;
//  - tracks what is durable: for every file written through it, its size
//    and its size at the last successful Sync/Fsync; for every directory,
//    the creations and renames made since its last fsync;
//  - simulates a power loss: PowerOff() makes every later write fail (the
//    machine is gone; the database can then be closed without anything
//    more reaching the disk), and RestorePower() undoes what a crash would:
//    renames and creations whose directory was never synced are rolled
//    back (a file renamed over gets its old durable contents back) and
//    every file is cut to its synced size, or, with an rng, to a random
//    point between its synced size and its full size (the OS may have
//    written back part of the unsynced tail, torn at any byte).
//
// Syncs are recorded, not performed: durability is what this file system
// says it is, and the tests do not wait for the disk.
//
// Thread safety: all members may be called from any thread (RocksDB's
// background threads write through it too).
#ifndef ROCKDOC_TESTS_FAULT_FS_H_
#define ROCKDOC_TESTS_FAULT_FS_H_

#include <rocksdb/file_system.h>
#include <rocksdb/io_status.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace rockdoc::test {

enum class FaultOp { kCreate, kAppend, kSync, kClose, kRename };
enum class FaultKind { kNoSpace, kIOError };

struct FaultRule {
  FaultOp op = FaultOp::kAppend;
  FaultKind kind = FaultKind::kNoSpace;
  // The rule applies to files whose name (for a rename: the target's name)
  // contains this; "" matches every file.
  std::string name_part;
  // Matching operations that succeed before the first failure.
  int skip = 0;
  // Keeps failing once triggered (a full disk) until ClearFaults(); else
  // fails once (a transient error).
  bool sticky = false;
};

inline const char* FaultOpName(FaultOp op) {
  switch (op) {
    case FaultOp::kCreate: return "create";
    case FaultOp::kAppend: return "append";
    case FaultOp::kSync: return "sync";
    case FaultOp::kClose: return "close";
    case FaultOp::kRename: return "rename";
  }
  return "?";
}

class FaultFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit FaultFileSystem(std::shared_ptr<rocksdb::FileSystem> base = rocksdb::FileSystem::Default())
      : FileSystemWrapper(std::move(base)), state_(std::make_shared<State>()) {}

  const char* Name() const override { return "FaultFileSystem"; }

  // ---- Faults ----
  void AddFault(const FaultRule& rule) {
    std::lock_guard<std::mutex> g(state_->mu);
    state_->rules.push_back({rule, rule.skip, false, false});
  }
  // Drops every rule: the disk has room again, the device works again.
  void ClearFaults() {
    std::lock_guard<std::mutex> g(state_->mu);
    state_->rules.clear();
  }
  // How many operations have failed by a rule so far.
  int faults_injected() const {
    std::lock_guard<std::mutex> g(state_->mu);
    return state_->injected;
  }

  // The largest preallocation step RocksDB asked for on a file whose name
  // contains `name_part` (0 if none).
  size_t preallocation_block_size(const std::string& name_part) const {
    std::lock_guard<std::mutex> g(state_->mu);
    size_t most = 0;
    for (const auto& [name, size] : state_->preallocation) {
      if (name.find(name_part) != std::string::npos) most = std::max(most, size);
    }
    return most;
  }

  // ---- Power loss ----
  void PowerOff() {
    std::lock_guard<std::mutex> g(state_->mu);
    state_->powered_off = true;
  }
  // Loses what was not durable (see the file comment) and turns the power
  // back on. Call it with the database closed. Returns false (with why in
  // *error) if the real files could not be put into the lost state.
  bool RestorePower(std::mt19937_64* rng = nullptr, std::string* error = nullptr) {
    std::lock_guard<std::mutex> g(state_->mu);
    bool ok = true;
    auto fail = [&](const std::string& what) {
      ok = false;
      if (error != nullptr) *error += what + "\n";
    };
    rocksdb::IOOptions io;
    // Namespace changes never made durable, newest first.
    for (auto& [dir, ops] : state_->pending) {
      for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
        const NameOp& op = *it;
        if (op.is_rename) {
          if (!target()->RenameFile(op.to, op.from, io, nullptr).ok()) {
            fail("cannot undo rename " + op.from + " -> " + op.to);
          }
          MoveState(op.to, op.from);
          if (op.had_previous) {
            if (!WriteWhole(op.to, op.previous_contents)) fail("cannot restore " + op.to);
            auto file = std::make_shared<FileState>();
            file->size = file->synced = op.previous_contents.size();
            state_->files[op.to] = file;
          }
        } else {
          target()->DeleteFile(op.from, io, nullptr).PermitUncheckedError();
          state_->files.erase(op.from);
        }
      }
    }
    state_->pending.clear();
    // Unsynced bytes.
    for (auto& [name, file] : state_->files) {
      uint64_t keep = file->synced;
      if (rng != nullptr && file->size > file->synced) {
        keep += std::uniform_int_distribution<uint64_t>(0, file->size - file->synced)(*rng);
      }
      if (keep < file->size) {
        // RocksDB's posix FileSystem has no Truncate(name): the system call.
        if (::truncate(name.c_str(), static_cast<off_t>(keep)) != 0) {
          fail("cannot truncate " + name + ": " + std::strerror(errno));
        }
        file->size = keep;
      }
      file->synced = file->size;
    }
    state_->powered_off = false;
    return ok;
  }

  // ---- FileSystem ----
  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override {
    return Create(fname, /*reopen=*/false,
                  [&] { return target()->NewWritableFile(fname, options, result, dbg); }, result);
  }
  rocksdb::IOStatus ReopenWritableFile(const std::string& fname,
                                       const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override {
    return Create(fname, /*reopen=*/true,
                  [&] { return target()->ReopenWritableFile(fname, options, result, dbg); },
                  result);
  }
  rocksdb::IOStatus ReuseWritableFile(const std::string& fname, const std::string& old_fname,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* dbg) override {
    // rockdoc does not recycle logs; a rename plus a fresh file models it.
    rocksdb::IOStatus s = RenameFile(old_fname, fname, options.io_options, dbg);
    if (!s.ok()) return s;
    return NewWritableFile(fname, options, result, dbg);
  }

  rocksdb::IOStatus RenameFile(const std::string& from, const std::string& to,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override {
    std::lock_guard<std::mutex> g(state_->mu);
    if (auto s = MaybeFailLocked(FaultOp::kRename, to); !s.ok()) return s;
    NameOp op;
    op.is_rename = true;
    op.from = from;
    op.to = to;
    if (auto it = state_->files.find(to); it != state_->files.end()) {
      op.had_previous = true;
      op.previous_contents = ReadWhole(to).substr(0, it->second->synced);
    } else if (target()->FileExists(to, options, dbg).ok()) {
      op.had_previous = true;
      op.previous_contents = ReadWhole(to);
    }
    rocksdb::IOStatus s = target()->RenameFile(from, to, options, dbg);
    if (!s.ok()) return s;
    MoveState(from, to);
    state_->pending[DirOf(to)].push_back(std::move(op));
    return s;
  }

  rocksdb::IOStatus DeleteFile(const std::string& fname, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override {
    std::lock_guard<std::mutex> g(state_->mu);
    if (state_->powered_off) return PowerOffError(fname);
    rocksdb::IOStatus s = target()->DeleteFile(fname, options, dbg);
    if (s.ok()) {
      state_->files.erase(fname);
      auto& ops = state_->pending[DirOf(fname)];
      ops.erase(std::remove_if(ops.begin(), ops.end(),
                               [&](const NameOp& op) { return !op.is_rename && op.from == fname; }),
                ops.end());
    }
    return s;
  }

  rocksdb::IOStatus Truncate(const std::string& fname, size_t size,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
    std::lock_guard<std::mutex> g(state_->mu);
    if (state_->powered_off) return PowerOffError(fname);
    rocksdb::IOStatus s = target()->Truncate(fname, size, options, dbg);
    if (s.ok()) {
      if (auto it = state_->files.find(fname); it != state_->files.end()) {
        it->second->size = size;
        it->second->synced = std::min<uint64_t>(it->second->synced, size);
      }
    }
    return s;
  }

  rocksdb::IOStatus NewDirectory(const std::string& name, const rocksdb::IOOptions& io_opts,
                                 std::unique_ptr<rocksdb::FSDirectory>* result,
                                 rocksdb::IODebugContext* dbg) override {
    rocksdb::IOStatus s = target()->NewDirectory(name, io_opts, result, dbg);
    if (s.ok()) *result = std::make_unique<Directory>(std::move(*result), state_, Trim(name));
    return s;
  }

  // RocksDB's own logger (EnvLogger), but over this file system's files
  // (the wrapper's default would open them on the base file system), so
  // that faults reach the info log of a database opened without rockdoc's
  // logger too.
  rocksdb::IOStatus NewLogger(const std::string& fname, const rocksdb::IOOptions& io_opts,
                              std::shared_ptr<rocksdb::Logger>* result,
                              rocksdb::IODebugContext* dbg) override {
    return rocksdb::FileSystem::NewLogger(fname, io_opts, result, dbg);
  }

  rocksdb::IOStatus GetFreeSpace(const std::string& /*path*/, const rocksdb::IOOptions& /*options*/,
                                 uint64_t* diskfree, rocksdb::IODebugContext* /*dbg*/) override {
    // RocksDB resumes after a full disk once a write buffer's worth is
    // free; the real disk under the test does not matter.
    std::lock_guard<std::mutex> g(state_->mu);
    bool full = std::any_of(state_->rules.begin(), state_->rules.end(), [](const Rule& r) {
      return r.rule.kind == FaultKind::kNoSpace && r.rule.sticky && r.triggered;
    });
    *diskfree = full ? 0 : uint64_t{1} << 30;
    return rocksdb::IOStatus::OK();
  }

 private:
  struct FileState {
    uint64_t size = 0;
    uint64_t synced = 0;
  };
  struct NameOp {
    bool is_rename = false;
    std::string from;  // the created file, or the rename's source
    std::string to;
    bool had_previous = false;
    std::string previous_contents;
  };
  struct Rule {
    FaultRule rule;
    int remaining_skips = 0;
    bool triggered = false;
    bool spent = false;
  };
  struct State {
    mutable std::mutex mu;
    std::vector<Rule> rules;
    int injected = 0;
    bool powered_off = false;
    std::map<std::string, std::shared_ptr<FileState>> files;
    std::map<std::string, std::vector<NameOp>> pending;  // by directory
    std::map<std::string, size_t> preallocation;
  };

  static std::string Trim(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
  }
  static std::string DirOf(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : Trim(path.substr(0, slash));
  }

  static rocksdb::IOStatus PowerOffError(const std::string& fname) {
    return rocksdb::IOStatus::IOError("fault injection: the power is off", fname);
  }

  // The error `op` on `fname` gets now, or OK. Holds state_->mu.
  static rocksdb::IOStatus MaybeFailLocked(State* state, FaultOp op, const std::string& fname) {
    if (state->powered_off) return PowerOffError(fname);
    for (Rule& r : state->rules) {
      if (r.spent || r.rule.op != op) continue;
      if (!r.rule.name_part.empty() && fname.find(r.rule.name_part) == std::string::npos) continue;
      if (!r.triggered && r.remaining_skips > 0) {
        --r.remaining_skips;
        continue;
      }
      r.triggered = true;
      if (!r.rule.sticky) r.spent = true;
      ++state->injected;
      std::string what = std::string("fault injection: ") + FaultOpName(op);
      if (r.rule.kind == FaultKind::kNoSpace) {
        // As RocksDB's posix layer reports ENOSPC.
        rocksdb::IOStatus s = rocksdb::IOStatus::NoSpace(what + " " + fname, "No space left on device");
        s.SetRetryable(true);
        return s;
      }
      return rocksdb::IOStatus::IOError(what + " " + fname, "Input/output error");
    }
    return rocksdb::IOStatus::OK();
  }
  rocksdb::IOStatus MaybeFailLocked(FaultOp op, const std::string& fname) {
    return MaybeFailLocked(state_.get(), op, fname);
  }

  void MoveState(const std::string& from, const std::string& to) {
    auto it = state_->files.find(from);
    if (it == state_->files.end()) {
      state_->files.erase(to);
      return;
    }
    state_->files[to] = it->second;
    state_->files.erase(it);
  }

  std::string ReadWhole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }
  bool WriteWhole(const std::string& path, const std::string& contents) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << contents;
    return static_cast<bool>(out);
  }

  class WritableFile : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    WritableFile(std::unique_ptr<rocksdb::FSWritableFile> file, std::shared_ptr<State> state,
                 std::shared_ptr<FileState> file_state, std::string name)
        : FSWritableFileOwnerWrapper(std::move(file)),
          state_(std::move(state)),
          file_(std::move(file_state)),
          name_(std::move(name)) {}

    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override {
      std::lock_guard<std::mutex> g(state_->mu);
      if (auto s = MaybeFailLocked(state_.get(), FaultOp::kAppend, name_); !s.ok()) return s;
      rocksdb::IOStatus s = target()->Append(data, options, dbg);
      if (s.ok()) file_->size += data.size();
      return s;
    }
    rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                             const rocksdb::DataVerificationInfo& /*info*/,
                             rocksdb::IODebugContext* dbg) override {
      return Append(data, options, dbg);
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                       const rocksdb::IOOptions& options,
                                       rocksdb::IODebugContext* dbg) override {
      std::lock_guard<std::mutex> g(state_->mu);
      if (auto s = MaybeFailLocked(state_.get(), FaultOp::kAppend, name_); !s.ok()) return s;
      rocksdb::IOStatus s = target()->PositionedAppend(data, offset, options, dbg);
      if (s.ok()) file_->size = std::max<uint64_t>(file_->size, offset + data.size());
      return s;
    }
    rocksdb::IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                                       const rocksdb::IOOptions& options,
                                       const rocksdb::DataVerificationInfo& /*info*/,
                                       rocksdb::IODebugContext* dbg) override {
      return PositionedAppend(data, offset, options, dbg);
    }
    rocksdb::IOStatus Truncate(uint64_t size, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override {
      std::lock_guard<std::mutex> g(state_->mu);
      if (state_->powered_off) return PowerOffError(name_);
      rocksdb::IOStatus s = target()->Truncate(size, options, dbg);
      if (s.ok()) {
        file_->size = size;
        file_->synced = std::min(file_->synced, size);
      }
      return s;
    }
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) override {
      return SyncImpl(options, dbg);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                            rocksdb::IODebugContext* dbg) override {
      return SyncImpl(options, dbg);
    }
    rocksdb::IOStatus Close(const rocksdb::IOOptions& options,
                            rocksdb::IODebugContext* dbg) override {
      {
        std::lock_guard<std::mutex> g(state_->mu);
        if (auto s = MaybeFailLocked(state_.get(), FaultOp::kClose, name_); !s.ok()) {
          target()->Close(options, dbg).PermitUncheckedError();
          return s;
        }
      }
      return target()->Close(options, dbg);
    }
    void SetPreallocationBlockSize(size_t size) override {
      {
        std::lock_guard<std::mutex> g(state_->mu);
        state_->preallocation[name_] = size;
      }
      target()->SetPreallocationBlockSize(size);
    }
    // Not durable: only Sync/Fsync make bytes survive a power loss.
    rocksdb::IOStatus RangeSync(uint64_t /*offset*/, uint64_t /*nbytes*/,
                                const rocksdb::IOOptions& /*options*/,
                                rocksdb::IODebugContext* /*dbg*/) override {
      return rocksdb::IOStatus::OK();
    }

   private:
    rocksdb::IOStatus SyncImpl(const rocksdb::IOOptions& options, rocksdb::IODebugContext* dbg) {
      std::lock_guard<std::mutex> g(state_->mu);
      if (auto s = MaybeFailLocked(state_.get(), FaultOp::kSync, name_); !s.ok()) return s;
      // Pushes buffered bytes to the real file; the fsync itself is only
      // recorded.
      rocksdb::IOStatus s = target()->Flush(options, dbg);
      if (s.ok()) file_->synced = file_->size;
      return s;
    }

    std::shared_ptr<State> state_;
    std::shared_ptr<FileState> file_;
    std::string name_;
  };

  class Directory : public rocksdb::FSDirectoryWrapper {
   public:
    Directory(std::unique_ptr<rocksdb::FSDirectory> dir, std::shared_ptr<State> state,
              std::string name)
        : FSDirectoryWrapper(std::move(dir)), state_(std::move(state)), name_(std::move(name)) {}
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& /*options*/,
                            rocksdb::IODebugContext* /*dbg*/) override {
      return SyncImpl();
    }
    rocksdb::IOStatus FsyncWithDirOptions(const rocksdb::IOOptions& /*options*/,
                                          rocksdb::IODebugContext* /*dbg*/,
                                          const rocksdb::DirFsyncOptions& /*dir_options*/) override {
      return SyncImpl();
    }

   private:
    rocksdb::IOStatus SyncImpl() {
      std::lock_guard<std::mutex> g(state_->mu);
      if (auto s = MaybeFailLocked(state_.get(), FaultOp::kSync, name_); !s.ok()) return s;
      state_->pending.erase(name_);
      return rocksdb::IOStatus::OK();
    }
    std::shared_ptr<State> state_;
    std::string name_;
  };

  template <typename OpenFn>
  rocksdb::IOStatus Create(const std::string& fname, bool reopen, OpenFn open,
                           std::unique_ptr<rocksdb::FSWritableFile>* result) {
    std::lock_guard<std::mutex> g(state_->mu);
    if (auto s = MaybeFailLocked(FaultOp::kCreate, fname); !s.ok()) return s;
    bool existed = state_->files.count(fname) > 0 ||
                   target()->FileExists(fname, rocksdb::IOOptions(), nullptr).ok();
    rocksdb::IOStatus s = open();
    if (!s.ok()) return s;
    auto& file = state_->files[fname];
    if (file == nullptr || !reopen) {
      uint64_t size = 0;
      if (reopen) target()->GetFileSize(fname, rocksdb::IOOptions(), &size, nullptr).PermitUncheckedError();
      file = std::make_shared<FileState>();
      file->size = size;
      file->synced = size;
    }
    if (!existed) {
      NameOp op;
      op.from = fname;
      state_->pending[DirOf(fname)].push_back(std::move(op));
    }
    *result = std::make_unique<WritableFile>(std::move(*result), state_, file, fname);
    return s;
  }

  std::shared_ptr<State> state_;
};

}  // namespace rockdoc::test

#endif  // ROCKDOC_TESTS_FAULT_FS_H_

#include "storage/engine.h"

#include <fcntl.h>
#include <signal.h>
#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>

#include "common/endian.h"
#include "storage/change_log.h"
#include "storage/encryption.h"
#include "storage/file_system.h"
#include "storage/record_cache.h"
#include "storage/rocks.h"
#include "storage/spill.h"
#include "storage/wal_check.h"

namespace rockdoc::internal {

namespace fs = std::filesystem;

namespace {

constexpr char kMarkerFile[] = "ROCKDOC";
constexpr char kMarkerTempFile[] = "ROCKDOC.tmp";
// 1: the first format. 2: capped collections' order entries (format.h); a
// format-1 database is marked 2 when this version opens it, so that an older
// rockdoc, which would take the order entries for garbage, refuses it.
// 3: views' entries in the catalog (format.h); an older rockdoc would not
// see them, and would let a collection take a view's name.
// 4: the change log's column family (format.h); an older rockdoc would not
// open a database with a column family it does not know of.
constexpr int kFormatVersion = 4;
constexpr char kCatalogColumnFamily[] = "catalog";
constexpr char kChangesColumnFamily[] = "changes";

// Adds signed 64-bit deltas: the per-collection document counts are kept as
// merges written in the same transaction as the documents, without a lock.
class Int64AddOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    int64_t base = 0, delta = 0;
    if (existing != nullptr && existing->size() == 8) {
      base = LoadLE<int64_t>(reinterpret_cast<const uint8_t*>(existing->data()));
    }
    if (value.size() == 8) delta = LoadLE<int64_t>(reinterpret_cast<const uint8_t*>(value.data()));
    new_value->clear();
    AppendLE<int64_t>(new_value, base + delta);
    return true;
  }
  const char* Name() const override { return "rockdoc.Int64Add"; }
};

// `base` under ClientOptions::encryption_key, when there is one
// (storage/encryption.h); the info log is then encrypted too, as every file
// RocksDB writes through it.
std::shared_ptr<rocksdb::FileSystem> WithEncryption(std::shared_ptr<rocksdb::FileSystem> base,
                                                    const ClientOptions& options) {
  if (options.encryption_key.empty()) return base;
  return NewEncryptedFileSystem(std::move(base), options.encryption_key,
                                options.previous_encryption_keys);
}

// Writes the marker so that a crash leaves no marker or a whole one (never
// an empty one, which would make the directory unopenable): a temporary
// file, synced, renamed into place, and the directory synced.
Status WriteMarker(const fs::path& dir,
                   const std::string& text = "rockdoc " + std::to_string(kFormatVersion) + "\n") {
  fs::path tmp = dir / kMarkerTempFile;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError("write", tmp.string(), errno);
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), (dir / kMarkerFile).c_str()) != 0) {
    return FileError("write", (dir / kMarkerFile).string(), errno);
  }
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return Status::OK();
}

// The owner record: which process has the directory open for writing, for
// the messages of a second open (DBPathInUse) and of a read-only client's
// refused writes. Written after RocksDB's lock is held, removed at Close; a
// crash leaves it behind, and a record whose process is gone names no one.
constexpr char kOwnerFile[] = "ROCKDOC.owner";

std::string ThisProgram() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name.empty() ? "unknown" : name;
}

void WriteOwnerRecord(const fs::path& dir) {
  // Best effort: the record only improves messages.
  std::ofstream out(dir / kOwnerFile, std::ios::trunc);
  out << ::getpid() << " " << ThisProgram() << "\n";
}

// The format version the marker names. UnsupportedFormat when it is
// damaged or newer than this rockdoc.
StatusOr<int> ReadMarker(const fs::path& dir, const std::string& path) {
  std::ifstream marker(dir / kMarkerFile);
  std::string word;
  int version = 0;
  marker >> word >> version;
  if (word != "rockdoc" || version < 1) {
    return Status(ErrorCode::kUnsupportedFormat,
                  "the " + std::string(kMarkerFile) + " marker in " + path + " is damaged");
  }
  if (version > kFormatVersion) {
    return Status(ErrorCode::kUnsupportedFormat,
                  path + " holds format " + std::to_string(version) +
                      ", newer than this rockdoc understands (" + std::to_string(kFormatVersion) +
                      ")");
  }
  return version;
}

// Empty, or holding only the temporary marker of a creation that crashed.
bool IsEmptyDirectory(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename() != kMarkerTempFile) return false;
  }
  return !ec;
}

// The refusal of a database whose write-ahead log lost records in the middle.
std::string DamageMessage(const std::string& path, const WalScan& scan) {
  std::string msg = "the write-ahead log of " + path + " is damaged: ";
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < scan.findings.size() && i < kShown; ++i) msg += scan.findings[i] + "; ";
  if (scan.findings.size() > kShown) {
    msg += "(" + std::to_string(scan.findings.size() - kShown) + " more drops); ";
  }
  std::string_view damage = scan.damage;
  while (!damage.empty() && damage.back() == '.') damage.remove_suffix(1);
  msg += damage;
  if (scan.records_after_damage > 0) {
    msg += "; " + std::to_string(scan.records_after_damage) +
           " intact log records (each one or more transactions) follow the damage";
  }
  return msg +
         ". Opening would silently drop acknowledged writes, so the directory was left untouched; "
         "Client::Salvage keeps the intact part (see the README, Durability)";
}

// Keeps a copy of each damaged log beside it (RocksDB ignores the name and
// deletes the original once the salvaged state is flushed) and reports.
Status PrepareSalvage(const fs::path& dir, const WalScan& scan, SalvageReport* report) {
  report->findings = scan.findings;
  if (!scan.damage.empty()) report->findings.push_back(scan.damage);
  report->discarded_log_records = scan.records_after_damage;
  for (const std::string& name : scan.damaged_files) {
    std::error_code ec;
    if (!fs::is_regular_file(dir / name, ec)) continue;
    fs::copy_file(dir / name, dir / (name + ".damaged"), fs::copy_options::overwrite_existing, ec);
    if (ec) return FileError("keep a copy of", (dir / name).string(), ec.value());
    report->saved_files.push_back(name + ".damaged");
  }
  return Status::OK();
}

}  // namespace

Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::OK();
  std::string msg(context);
  msg += ": ";
  msg += s.ToString();
  // Busy: RocksDB refused to wait for a lock because the wait would close a
  // cycle (deadlock): a write conflict, which the write paths retry.
  if (s.IsBusy()) return Status(ErrorCode::kWriteConflict, std::move(msg));
  if (s.IsTimedOut()) return Status(ErrorCode::kLockTimeout, std::move(msg));
  if (s.IsCorruption()) return Status(ErrorCode::kDataCorruptionDetected, std::move(msg));
  if (s.IsIOError()) {
    // Only a lock that is held means "in use": PosixEnv's messages for a
    // failed fcntl lock and for a lock this process holds. Failing to open
    // the LOCK file ("While open a file for lock: ... Permission denied") is
    // a permission problem like any other.
    std::string text = s.ToString();
    if (text.find("While lock file") != std::string::npos ||
        text.find("lock hold by current process") != std::string::npos) {
      return Status(ErrorCode::kDBPathInUse, std::move(msg));
    }
    if (text.find("Permission denied") != std::string::npos ||
        text.find("Read-only file system") != std::string::npos) {
      return Status(ErrorCode::kFileNotOpen, std::move(msg));
    }
  }
  if (s.IsNoSpace()) {
    // MongoDB's code for a write that found the disk full (its File::write
    // and spill tables use it for ENOSPC).
    msg += " (the disk is full: writes fail until space is freed, and resume by themselves "
           "once 64 MiB is free, or reopen the database; acknowledged writes are kept)";
    return Status(ErrorCode::kOutOfDiskSpace, std::move(msg));
  }
  if (s.IsIOError() && s.ToString().find("Too many open files") != std::string::npos) {
    // EMFILE/ENFILE: the process (or the system) is out of descriptors.
    // rockdoc-serve budgets them so that connections cannot take the
    // engine's (wire/server.h); a library user must leave it room.
    msg +=
        " (the process is out of file descriptors: raise the open-file limit (ulimit -n), "
        "bound ClientOptions::max_open_files or the connections; after a failed write the "
        "database accepts no more writes until it is reopened)";
    return Status(ErrorCode::kOperationFailed, std::move(msg));
  }
  if (s.IsIOError()) {
    // The operating system refused a read or write (EIO and the like): the
    // operation failed for a reason outside rockdoc, not a bug in it.
    msg += " (an I/O error from the file system; after a failed write the database accepts "
           "no more writes until it is reopened)";
    return Status(ErrorCode::kOperationFailed, std::move(msg));
  }
  return Status(ErrorCode::kInternalError, std::move(msg));
}

namespace {

// The memory this process may use: RAM, or the cgroup's limit when lower
// (cgroup v2 memory.max, or v1 memory.limit_in_bytes; "max" and absurd v1
// values mean none).
uint64_t MemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  uint64_t memory = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * page : 0;
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    uint64_t limit = 0;
    if (in >> limit && limit > 0 && (memory == 0 || limit < memory)) memory = limit;
  }
  return memory;
}

}  // namespace

size_t BlockCacheBytesForMemory(uint64_t memory_bytes) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  constexpr uint64_t kFloor = uint64_t{256} << 20;
  const uint64_t half = memory_bytes > kGiB ? (memory_bytes - kGiB) / 2 : 0;
  return static_cast<size_t>(std::max(half, kFloor));
}

// The change log's family: its memory follows its retention. RocksDB holds
// a family's writes in memtables (up to max_write_buffer_number of
// write_buffer_size) until they are flushed, trimmed events included, so
// with the data's 64 MiB buffers an 8 MiB log held 54 MiB in memory
// (bench/change_stream_bench). An eighth of change_log_max_bytes, within
// 1 MiB and the data's size, keeps its memtables under half the bound.
rocksdb::ColumnFamilyOptions MakeChangesColumnFamilyOptions(const ClientOptions& options,
                                                            const rocksdb::Options& o) {
  rocksdb::ColumnFamilyOptions c(o);
  const int64_t eighth = options.change_log_max_bytes / 8;
  c.write_buffer_size = static_cast<size_t>(
      std::clamp<int64_t>(eighth, int64_t{1} << 20, static_cast<int64_t>(o.write_buffer_size)));
  return c;
}

namespace {

// The data, the catalog (whose counts are merges) and the change log.
std::vector<rocksdb::ColumnFamilyDescriptor> EngineColumnFamilies(const ClientOptions& options,
                                                                  const rocksdb::Options& o) {
  rocksdb::ColumnFamilyOptions catalog_opts(o);
  catalog_opts.merge_operator = std::make_shared<Int64AddOperator>();
  return {{rocksdb::kDefaultColumnFamilyName, MakeDataColumnFamilyOptions(options, o)},
          {kCatalogColumnFamily, catalog_opts},
          {kChangesColumnFamily, MakeChangesColumnFamilyOptions(options, o)}};
}

}  // namespace

size_t AutoBlockCacheBytes() {
  static const size_t bytes = BlockCacheBytesForMemory(MemoryBytes());
  return bytes;
}

rocksdb::Options MakeRocksOptions(const ClientOptions& options) {
  rocksdb::Options o;
  o.create_if_missing = false;
  o.paranoid_checks = true;
  o.max_background_jobs = 2;
  o.max_open_files = options.max_open_files;
  o.bytes_per_sync = 1 << 20;
  o.write_buffer_size = 64 << 20;
  o.max_write_buffer_number = 3;
  o.target_file_size_base = 64 << 20;
  o.max_bytes_for_level_base = 256 << 20;
  o.level_compaction_dynamic_level_bytes = true;
  o.statistics = rocksdb::CreateDBStatistics();
  o.statistics->set_stats_level(rocksdb::StatsLevel::kExceptTimers);
  // Recovery stops at the first damage in the log; Engine::Open has checked
  // (storage/wal_check.h) that only a torn tail lies beyond it. The MANIFEST
  // records each closed log and its synced size, so that a missing or
  // shortened one fails the open.
  o.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  o.track_and_verify_wals_in_manifest = true;
  // Every open starts a new info log and keeps the old one as LOG.old.*;
  // RocksDB's default keeps 1000 of them, which on a small disk adds up.
  o.keep_log_file_num = 10;
  // Every insert first looks its _id up (the duplicate check) and the key
  // is almost always new: a whole-key bloom filter on the memtable answers
  // that without a skip-list search, which was a quarter of an insert's
  // time. The cost is 1/10 of the write buffer in filter bits.
  o.memtable_whole_key_filtering = true;
  o.memtable_prefix_bloom_size_ratio = 0.1;
  // Hot levels uncompressed (DESIGN.md: decompression dominates the
  // cache-miss path); the large cold bottom levels compressed.
  o.compression_per_level = {rocksdb::kNoCompression, rocksdb::kNoCompression,
                             rocksdb::kLZ4Compression, rocksdb::kLZ4Compression,
                             rocksdb::kLZ4Compression, rocksdb::kLZ4Compression,
                             rocksdb::kLZ4Compression};
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  t.cache_index_and_filter_blocks = true;
  t.pin_l0_filter_and_index_blocks_in_cache = true;
  t.metadata_cache_options.unpartitioned_pinning = rocksdb::PinningTier::kAll;
  t.format_version = 5;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  return o;
}

rocksdb::ColumnFamilyOptions MakeDataColumnFamilyOptions(const ClientOptions& /*options*/,
                                                         const rocksdb::Options& base) {
  return rocksdb::ColumnFamilyOptions(base);
}

namespace {
// The Uses this thread holds (of any engine), and whether it is catching an
// engine up (holding its follow_mu_ exclusively): the Uses the catch-up
// itself takes (the catalog's reads) neither catch up nor wait.
thread_local int uses_held = 0;
thread_local bool following = false;
}  // namespace

Engine::Use::Use(const Engine* engine) : lock_(engine->close_mu_), engine_(engine) {
  if (engine->read_only() && !following) {
    if (uses_held == 0 && !engine->closed()) engine->FollowOwner(/*wait=*/false).IgnoreError();
    follow_lock_ = std::shared_lock<std::shared_mutex>(engine->follow_mu_);
  }
  ++uses_held;
}

Engine::Use::Use(Use&& other) noexcept
    : lock_(std::move(other.lock_)),
      follow_lock_(std::move(other.follow_lock_)),
      engine_(other.engine_),
      counted_(std::exchange(other.counted_, false)) {}

Engine::Use::~Use() {
  if (counted_) --uses_held;
}

Status Engine::Use::status() const {
  if (engine_->closed()) {
    return Status(ErrorCode::kIllegalOperation,
                  "the database at " + engine_->path() + " has been closed");
  }
  return Status::OK();
}

Status OpenError(const rocksdb::Status& s, const std::string& path) {
  if (s.IsNoSpace()) {
    // FromRocks's advice is for a database in use (writes resume by
    // themselves); one that cannot open has nothing running to resume.
    return Status(ErrorCode::kOutOfDiskSpace,
                  "cannot open " + path + ": " + s.ToString() +
                      " (the disk is full: opening writes out what the write-ahead log holds, "
                      "up to about 64 MiB; free that much space on its file system and open it "
                      "again; acknowledged writes are kept)");
  }
  Status st = FromRocks(s, "cannot open " + path);
  if (st.code() == ErrorCode::kDBPathInUse) {
    std::string owner = Engine::OwnerDescription(path);
    if (owner == "no process") owner = "another process (or another open Client)";
    return Status(ErrorCode::kDBPathInUse,
                  "the database directory " + path + " is locked: " + owner +
                      " has it open for writing; a read-only open (ClientOptions::read_only, "
                      "the shell's --readonly) reads it meanwhile");
  }
  // CURRENT exists (or we would have created the database), so a file it
  // leads to that is missing is damage too.
  if (s.IsInvalidArgument() || s.IsNotFound() || s.IsPathNotFound()) {
    return Status(ErrorCode::kDataCorruptionDetected,
                  "the database in " + path + " is damaged or incomplete: " + s.ToString());
  }
  return st;
}

StatusOr<std::shared_ptr<Engine>> Engine::Open(const std::string& path,
                                               const ClientOptions& options,
                                               std::shared_ptr<rocksdb::FileSystem> file_system) {
  return OpenImpl(path, options, nullptr, std::move(file_system));
}

StatusOr<SalvageReport> Engine::Salvage(const std::string& path, const ClientOptions& options) {
  SalvageReport report;
  ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<Engine> engine,
                           OpenImpl(path, options, &report, nullptr));
  ROCKDOC_RETURN_IF_ERROR(engine->Close());
  return report;
}

StatusOr<std::shared_ptr<Engine>> Engine::OpenImpl(
    const std::string& path, const ClientOptions& options, SalvageReport* salvage,
    std::shared_ptr<rocksdb::FileSystem> file_system) {
  if (!options.encryption_key.empty() || !options.previous_encryption_keys.empty()) {
    if (options.in_memory || path == kInMemoryPath) {
      return Status(ErrorCode::kInvalidOptions,
                    "an in-memory database takes no encryption key: it writes no files");
    }
    if (options.encryption_key.empty()) {
      return Status(ErrorCode::kInvalidOptions,
                    "previous_encryption_keys are given without an encryption_key");
    }
    ROCKDOC_RETURN_IF_ERROR(CheckEncryptionKey(options.encryption_key, "encryption_key"));
    for (const std::string& k : options.previous_encryption_keys) {
      ROCKDOC_RETURN_IF_ERROR(CheckEncryptionKey(k, "each of previous_encryption_keys"));
    }
  }
  if (options.read_only) {
    if (options.in_memory || path == kInMemoryPath) {
      return Status(ErrorCode::kInvalidOptions,
                    "an in-memory database cannot be opened read-only: no other process has it");
    }
    if (salvage != nullptr) {
      return Status(ErrorCode::kIllegalOperation, "a read-only open cannot salvage a database");
    }
    return OpenReadOnly(path, options, std::move(file_system));
  }
  if (options.in_memory || path == kInMemoryPath) {
    if (salvage != nullptr) {
      return Status(ErrorCode::kIllegalOperation, "an in-memory database has nothing to salvage");
    }
    if (file_system != nullptr) {
      return Status(ErrorCode::kInvalidOptions, "an in-memory database takes no file system");
    }
    ClientOptions in_memory = options;
    in_memory.in_memory = true;
    return OpenRocks(kInMemoryPath, in_memory, nullptr, nullptr, DirectoryClaim(), true,
                     kFormatVersion);
  }
  std::error_code ec;
  bool is_new = false;
  bool create = options.create_if_missing && salvage == nullptr;
  fs::path dir(path);
  if (!fs::exists(dir, ec)) {
    if (ec) return FileError("examine", path, ec.value());
    if (!create) {
      return Status(
          ErrorCode::kNonExistentPath,
          "database directory " + path + " does not exist (and this open does not create one)");
    }
    fs::create_directories(dir, ec);
    if (ec) return FileError("create the database directory", path, ec.value());
    is_new = true;
  } else if (!fs::is_directory(dir, ec)) {
    return Status(ErrorCode::kUnsupportedFormat,
                  path + " is not a directory, so it cannot be a rockdoc database");
  }
  // Nothing in the directory is touched before this process holds it.
  ROCKDOC_ASSIGN_OR_RETURN(DirectoryClaim claim, DirectoryClaim::Acquire(path));
  ROCKDOC_RETURN_IF_ERROR(CheckDirectoryAccess(path));
  ROCKDOC_RETURN_IF_ERROR(CheckDirectoryEntries(path));
  // A missing or wrong key is refused before anything is written.
  ROCKDOC_RETURN_IF_ERROR(
      CheckDirectoryEncryption(path, options.encryption_key, options.previous_encryption_keys));
  // What a killed process spilled (aggregate's allowDiskUse) is garbage now.
  ROCKDOC_RETURN_IF_ERROR(RemoveSpillFolder(path));
  if (!is_new && !fs::exists(dir / kMarkerFile, ec)) {
    if (!IsEmptyDirectory(dir)) {
      return Status(ErrorCode::kUnsupportedFormat,
                    path + " is not a rockdoc database (it has files but no " + kMarkerFile +
                        " marker); it was left untouched");
    }
    if (!create) {
      return Status(ErrorCode::kNonExistentPath,
                    "no rockdoc database in " + path +
                        ", an empty directory (and this open does not create one)");
    }
    is_new = true;
  }

  int version = kFormatVersion;
  if (is_new) {
    ROCKDOC_RETURN_IF_ERROR(WriteMarker(dir));
  } else {
    ROCKDOC_ASSIGN_OR_RETURN(version, ReadMarker(dir, path));
  }

  return OpenRocks(path, options, salvage, std::move(file_system), std::move(claim), is_new,
                   version);
}

StatusOr<std::shared_ptr<Engine>> Engine::OpenReadOnly(
    const std::string& path, const ClientOptions& options,
    std::shared_ptr<rocksdb::FileSystem> file_system) {
  std::error_code ec;
  const fs::path dir(path);
  if (!fs::exists(dir, ec)) {
    if (ec) return FileError("examine", path, ec.value());
    return Status(ErrorCode::kNonExistentPath,
                  "database directory " + path + " does not exist (a read-only open creates nothing)");
  }
  if (!fs::is_directory(dir, ec)) {
    return Status(ErrorCode::kUnsupportedFormat,
                  path + " is not a directory, so it cannot be a rockdoc database");
  }
  ROCKDOC_RETURN_IF_ERROR(CheckDirectoryAccess(path, /*for_writing=*/false));
  ROCKDOC_RETURN_IF_ERROR(CheckDirectoryEntries(path));
  ROCKDOC_RETURN_IF_ERROR(
      CheckDirectoryEncryption(path, options.encryption_key, options.previous_encryption_keys));
  if (!fs::exists(dir / kMarkerFile, ec) || !fs::exists(dir / "CURRENT", ec)) {
    if (IsEmptyDirectory(dir)) {
      return Status(ErrorCode::kNonExistentPath,
                    "no rockdoc database in " + path +
                        ", an empty directory (and a read-only open creates nothing)");
    }
    return Status(ErrorCode::kUnsupportedFormat,
                  path + " is not a rockdoc database it can read (no " +
                      (fs::exists(dir / kMarkerFile, ec) ? std::string("CURRENT file")
                                                          : std::string(kMarkerFile) + " marker") +
                      "); it was left untouched");
  }
  ROCKDOC_ASSIGN_OR_RETURN(int version, ReadMarker(dir, path));
  if (version != kFormatVersion) {
    return Status(ErrorCode::kUnsupportedFormat,
                  path + " holds format " + std::to_string(version) +
                      ", older than this rockdoc's (" + std::to_string(kFormatVersion) +
                      "), which a read-only open cannot upgrade: open it once for writing");
  }

  auto engine = std::shared_ptr<Engine>(new Engine());
  engine->path_ = path;
  engine->options_ = options;
  engine->options_.change_log = false;
  engine->options_.record_cache_bytes = 0;
  rocksdb::Options o = MakeRocksOptions(options);
  o.max_open_files = -1;  // a secondary instance keeps every table file open
  engine->rocks_ = std::make_unique<EngineRocks>();
  engine->rocks_->env = rocksdb::NewCompositeEnv(
      NewRockdocFileSystem(WithEncryption(std::move(file_system), options)));
  o.env = engine->rocks_->env.get();
  engine->rocks_->background_errors = std::make_shared<BackgroundErrorWatch>();
  o.listeners.push_back(engine->rocks_->background_errors);
  engine->rocks_->statistics = o.statistics;
  if (const auto* table = o.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>()) {
    engine->rocks_->block_cache = table->block_cache;
  }
  // The instance's own files (its info log; spills) live outside the
  // database directory, which it never writes.
  std::string secondary = (fs::temp_directory_path(ec) / "rockdoc-readonly-XXXXXX").string();
  if (::mkdtemp(secondary.data()) == nullptr) {
    return FileError("create a directory for the read-only instance in", secondary, errno);
  }
  engine->rocks_->secondary_dir = secondary;
  std::vector<rocksdb::ColumnFamilyDescriptor> families = EngineColumnFamilies(options, o);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenAsSecondary(rocksdb::DBOptions(o), path, secondary, families,
                                                   &handles, &db);
  if (!s.ok()) {
    fs::remove_all(secondary, ec);
    return OpenError(s, path);
  }
  engine->rocks_->base = db;
  engine->rocks_->data_cf = handles[0];
  engine->rocks_->catalog_cf = handles[1];
  engine->rocks_->changes_cf = handles[2];
  return engine;
}

StatusOr<std::shared_ptr<Engine>> Engine::OpenRocks(
    const std::string& path, const ClientOptions& options, SalvageReport* salvage,
    std::shared_ptr<rocksdb::FileSystem> file_system, DirectoryClaim claim, bool is_new,
    int version) {
  std::error_code ec;
  const fs::path dir(path);
  const bool in_memory = options.in_memory;
  auto engine = std::shared_ptr<Engine>(new Engine());
  engine->path_ = path;
  engine->options_ = options;

  rocksdb::Options o = MakeRocksOptions(options);
  engine->rocks_ = std::make_unique<EngineRocks>();
  // In memory: RocksDB's in-memory Env, whose files are buffers that go
  // with it (EngineRocks keeps it until after the Env over it). The
  // database's own path inside it is absolute, as RocksDB expects one.
  std::string rocks_path = path;
  if (in_memory) {
    engine->rocks_->memory_env.reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
    file_system = engine->rocks_->memory_env->GetFileSystem();
    rocks_path = "/" + path;
  }
  engine->rocks_->env = rocksdb::NewCompositeEnv(
      NewRockdocFileSystem(WithEncryption(std::move(file_system), options)));
  o.env = engine->rocks_->env.get();
  engine->rocks_->background_errors = std::make_shared<BackgroundErrorWatch>();
  o.listeners.push_back(engine->rocks_->background_errors);
  // A marker without RocksDB files is a creation that was interrupted. But
  // with data files and no CURRENT the database is damaged: RocksDB would
  // start an empty one and delete the files it does not know.
  bool has_rocks = !in_memory && fs::exists(dir / "CURRENT", ec);
  if (!has_rocks && !is_new) {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string ext = entry.path().extension().string();
      if (ext == ".sst" || ext == ".log" || ext == ".blob") {
        return Status(ErrorCode::kDataCorruptionDetected,
                      "the database in " + path + " is damaged: its CURRENT file is missing but " +
                          entry.path().filename().string() + " holds data; it was left untouched");
      }
    }
  }
  o.create_if_missing = !has_rocks;
  o.create_missing_column_families = !has_rocks;
  bool unfinished_creation = false;
  std::vector<std::string> existing;  // the column families on disk
  if (has_rocks) {
    // RocksDB creates the database (CURRENT, a MANIFEST with the default
    // column family) before the other column families: a creation killed
    // in between leaves a database with the default family alone, in which
    // nothing can have been written yet (rockdoc writes only after the
    // open, which needs the catalog family). Finish that creation; any
    // other missing family is damage, which the open below reports.
    rocksdb::Status ls = rocksdb::DB::ListColumnFamilies(o, path, &existing);
    if (!ls.ok()) existing.clear();
    if (ls.ok() && existing.size() == 1 && existing[0] == rocksdb::kDefaultColumnFamilyName) {
      o.create_missing_column_families = true;
      unfinished_creation = true;
    }
  }
  engine->rocks_->statistics = o.statistics;
  // Reads pin blocks of this cache (a PinnableSlice in a cursor's IDHACK
  // stage, say) and release them when the cursor goes, which may be after
  // Close: the engine, which every cursor keeps alive, keeps the cache too.
  if (const auto* table = o.table_factory->GetOptions<rocksdb::BlockBasedTableOptions>()) {
    engine->rocks_->block_cache = table->block_cache;
  }

  std::vector<rocksdb::ColumnFamilyDescriptor> families = EngineColumnFamilies(options, o);
  // A database of an older format gains the change log's family.
  if (version < 4) o.create_missing_column_families = true;

  if (has_rocks && !unfinished_creation) {
    // The scan opens read-only, which cannot create a family: an older
    // format's directory is scanned without the change log's, which this
    // open then adds.
    std::vector<rocksdb::ColumnFamilyDescriptor> on_disk = families;
    if (version < 4 && !existing.empty()) {
      std::erase_if(on_disk, [&](const rocksdb::ColumnFamilyDescriptor& f) {
        return std::find(existing.begin(), existing.end(), f.name) == existing.end();
      });
    }
    ROCKDOC_ASSIGN_OR_RETURN(WalScan scan, ScanWriteAheadLogs(path, o, on_disk));
    if (salvage != nullptr) {
      ROCKDOC_RETURN_IF_ERROR(PrepareSalvage(dir, scan, salvage));
      // A closed log the MANIFEST tracks may be the missing one; RocksDB
      // then forgets the tracked logs, and the next open tracks anew.
      o.track_and_verify_wals_in_manifest = false;
    } else if (!scan.damage.empty()) {
      return Status(ErrorCode::kDataCorruptionDetected, DamageMessage(path, scan));
    }
  }

  rocksdb::TransactionDBOptions txn_opts;
  txn_opts.transaction_lock_timeout = options.lock_timeout_ms;
  txn_opts.default_lock_timeout = options.lock_timeout_ms;

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::TransactionDB* db = nullptr;
  rocksdb::Status s =
      rocksdb::TransactionDB::Open(o, txn_opts, rocks_path, families, &handles, &db);
  if (!s.ok()) return OpenError(s, path);
  engine->rocks_->db = db;
  engine->rocks_->base = db;
  if (!in_memory) {
    WriteOwnerRecord(dir);
    engine->wrote_owner_record_ = true;
  }
  engine->rocks_->data_cf = handles[0];
  engine->rocks_->catalog_cf = handles[1];
  engine->rocks_->changes_cf = handles[2];
  engine->rocks_->write_options.sync = options.sync;
  engine->claim_ = std::move(claim);
  if (!in_memory && version < kFormatVersion) ROCKDOC_RETURN_IF_ERROR(WriteMarker(dir));
  if (salvage == nullptr) {
    bool log_on = false;
    if (options.change_log.has_value()) {
      log_on = *options.change_log;
    } else {
      ROCKDOC_ASSIGN_OR_RETURN(log_on, ChangeLog::WasOn(engine.get()));
    }
    if (log_on) {
      ROCKDOC_ASSIGN_OR_RETURN(engine->change_log_, ChangeLog::Open(engine.get()));
    } else {
      ROCKDOC_RETURN_IF_ERROR(ChangeLog::Forget(engine.get()));
    }
    // Empty at every open: nothing cached survives a crash.
    if (options.record_cache_bytes > 0) {
      engine->record_cache_ = std::make_unique<RecordCache>(options.record_cache_bytes,
                                                            engine->LatestSequenceNumber());
    }
  }
  return engine;
}

Engine::~Engine() { Close().IgnoreError(); }

Status Engine::Close() {
  // Before the close lock: a task may be inside an operation, which holds
  // that lock shared until it finishes.
  runner_->Stop();
  // Change-stream readers waiting for events stop waiting.
  if (change_log_ != nullptr) change_log_->Interrupt();
  std::unique_lock<std::shared_mutex> lock(close_mu_);
  if (closed()) return Status::OK();
  {
    // Live cursors let go of their iterators and snapshots while the
    // engine still counts as open (their release paths check closed()):
    // RocksDB refuses to close with an unreleased snapshot. Holding
    // close_mu_ exclusively, no operation runs meanwhile.
    MutexLock g(&resources_mu_);
    for (EngineResource* r : resources_) r->ReleaseEngineResources();
    resources_.clear();
  }
  if (rocks_ != nullptr && rocks_->db != nullptr) {
    for (size_t slot = kAttachmentSlots; slot-- > 0;) {
      if (attachments_[slot] != nullptr) attachments_[slot]->BeforeClose();
    }
  }
  closed_.store(true, std::memory_order_release);
  if (rocks_ != nullptr && rocks_->db == nullptr && rocks_->base != nullptr) {
    // A read-only engine: nothing to flush, and nothing of it in the
    // directory; its own directory goes.
    rocks_->base->DestroyColumnFamilyHandle(rocks_->data_cf);
    rocks_->base->DestroyColumnFamilyHandle(rocks_->catalog_cf);
    rocks_->base->DestroyColumnFamilyHandle(rocks_->changes_cf);
    rocksdb::Status cs = rocks_->base->Close();
    delete rocks_->base;
    rocks_->base = nullptr;
    std::error_code ec;
    fs::remove_all(rocks_->secondary_dir, ec);
    return FromRocks(cs, "close");
  }
  if (rocks_ == nullptr || rocks_->db == nullptr) {
    claim_.Release();
    return Status::OK();
  }
  rocksdb::FlushOptions fo;
  rocksdb::Status s =
      rocks_->db->Flush(fo, {rocks_->data_cf, rocks_->catalog_cf, rocks_->changes_cf});
  rocks_->db->DestroyColumnFamilyHandle(rocks_->data_cf);
  rocks_->db->DestroyColumnFamilyHandle(rocks_->catalog_cf);
  rocks_->db->DestroyColumnFamilyHandle(rocks_->changes_cf);
  // The record goes while RocksDB's lock is still held, so that it never
  // removes the record of a next owner.
  if (wrote_owner_record_) {
    std::error_code ec;
    fs::remove(fs::path(path_) / kOwnerFile, ec);
  }
  rocksdb::Status cs = rocks_->db->Close();
  delete rocks_->db;
  rocks_->db = nullptr;
  rocks_->base = nullptr;
  claim_.Release();
  if (!s.ok()) return FromRocks(s, "flush on close");
  return FromRocks(cs, "close");
}

Status Engine::WriteMetadata(const std::vector<MetadataWrite>& writes,
                             const std::vector<std::string>& events) const {
  ROCKDOC_RETURN_IF_ERROR(CheckWritable("changing the catalog"));
  rocksdb::WriteBatch batch;
  for (const MetadataWrite& w : writes) {
    rocksdb::Status s = w.op == MetadataWrite::Op::kPut
                            ? batch.Put(rocks_->catalog_cf, w.key, w.value)
                            : batch.Delete(rocks_->catalog_cf, w.key);
    if (!s.ok()) return FromRocks(s, "writing the catalog");
  }
  rocksdb::WriteOptions wo = rocks_->write_options;
  wo.sync = true;
  if (change_log_ == nullptr || events.empty()) {
    if (writes.empty()) return Status::OK();  // events alone, and no log to take them
    return FromRocks(rocks_->db->Write(wo, &batch), "writing the catalog");
  }
  const uint64_t cluster_time = change_log_->BeginCommit();
  uint64_t bytes = 0;
  rocksdb::Status s;
  for (size_t i = 0; i < events.size() && s.ok(); ++i) {
    s = batch.Put(rocks_->changes_cf, ChangeLogKey({cluster_time, static_cast<uint32_t>(i)}),
                  events[i]);
    bytes += events[i].size();
  }
  if (s.ok()) s = rocks_->db->Write(wo, &batch);
  change_log_->EndCommit(cluster_time, s.ok(), bytes);
  return FromRocks(s, "writing the catalog");
}

Status Engine::ReadMetadata(std::string_view key, std::string* value, bool* found) const {
  rocksdb::Status s = rocks_->base->Get(rocksdb::ReadOptions(), rocks_->catalog_cf,
                               rocksdb::Slice(key.data(), key.size()), value);
  *found = s.ok();
  if (s.IsNotFound()) return Status::OK();
  return FromRocks(s, "reading the catalog");
}

Status Engine::ScanMetadata(
    std::string_view prefix,
    const std::function<Status(std::string_view key, std::string_view value)>& fn) const {
  std::unique_ptr<rocksdb::Iterator> it(rocks_->base->NewIterator(rocksdb::ReadOptions(), rocks_->catalog_cf));
  rocksdb::Slice p(prefix.data(), prefix.size());
  for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) {
    ROCKDOC_RETURN_IF_ERROR(fn(it->key().ToStringView(), it->value().ToStringView()));
  }
  return FromRocks(it->status(), "reading the catalog");
}

std::unique_ptr<KvTransaction> Engine::Begin(const KvTransaction::Options& options,
                                             std::unique_ptr<KvTransaction> reuse) const {
  rocksdb::TransactionOptions to;
  to.deadlock_detect = true;
  to.set_snapshot = options.snapshot;
  to.lock_timeout = options.lock_timeout_ms < 0 ? options_.lock_timeout_ms : options.lock_timeout_ms;
  to.expiration = options.expiration_ms;
  rocksdb::Transaction* old = nullptr;
  if (reuse != nullptr) {
    old = static_cast<rocksdb::Transaction*>(reuse->txn_);
    reuse->txn_ = nullptr;
  }
  rocksdb::Transaction* txn = rocks_->db->BeginTransaction(rocks_->write_options, to, old);
  return std::unique_ptr<KvTransaction>(new KvTransaction(this, txn, options.unindexed_writes));
}

Status Engine::DeleteRange(std::string_view begin, std::string_view end) const {
  ROCKDOC_RETURN_IF_ERROR(CheckWritable("deleting a range of keys"));
  rocksdb::WriteBatch batch;
  rocksdb::Status s = batch.DeleteRange(rocks_->data_cf, rocksdb::Slice(begin.data(), begin.size()),
                                        rocksdb::Slice(end.data(), end.size()));
  if (!s.ok()) return FromRocks(s, "delete range");
  rocksdb::TransactionDBWriteOptimizations opt;
  opt.skip_concurrency_control = true;
  {
    // Around the write only: the compaction below changes no answer.
    CacheInvalidation invalidation(*this);
    s = rocks_->db->Write(rocks_->write_options, opt, &batch);
  }
  if (!s.ok()) return FromRocks(s, "delete range");
  // Reclaim the space now rather than whenever compaction gets there.
  rocksdb::Slice b(begin.data(), begin.size()), e(end.data(), end.size());
  rocksdb::CompactRangeOptions co;
  return FromRocks(rocks_->db->CompactRange(co, rocks_->data_cf, &b, &e), "compact dropped range");
}

Status Engine::SyncWal() const {
  auto use = Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  if (rocks_->write_options.sync || read_only()) return Status::OK();
  // In memory there is nothing to make durable (RocksDB's in-memory log
  // has no SyncWAL): a journaled write is acknowledged as it is, as
  // MongoDB's in-memory engine acknowledges j: true.
  if (options_.in_memory) return Status::OK();
  // Not while a background error stands (rocks.h says why): the log cannot
  // be made durable then, and the write that failed said so already.
  rocksdb::Status standing = rocks_->background_errors->Current();
  if (!standing.ok()) return FromRocks(standing, "syncing the write-ahead log");
  return FromRocks(rocks_->db->SyncWAL(), "syncing the write-ahead log");
}

Status Engine::Compact() const {
  auto use = Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(CheckWritable("compaction"));
  rocksdb::CompactRangeOptions co;
  // Rewrite the last level too: that is where overwritten versions of a
  // document that was updated in place end up waiting.
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  for (rocksdb::ColumnFamilyHandle* cf : {rocks_->data_cf, rocks_->catalog_cf}) {
    ROCKDOC_RETURN_IF_ERROR(
        FromRocks(rocks_->db->CompactRange(co, cf, nullptr, nullptr), "compact"));
  }
  return Status::OK();
}

Status Engine::Checkpoint(const std::string& dir) const {
  if (options_.in_memory) {
    return Status(ErrorCode::kIllegalOperation, "an in-memory database has no files to checkpoint");
  }
  auto use = Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  // RocksDB checkpoints the files of a database it writes; a secondary
  // instance has none of its own.
  ROCKDOC_RETURN_IF_ERROR(CheckWritable("a checkpoint"));
  if (dir.empty()) return BadValue("checkpoint: an empty directory name");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) || std::filesystem::is_symlink(dir, ec)) {
    return Status(ErrorCode::kIllegalOperation,
                  "checkpoint: " + dir + " already exists; a checkpoint needs a new directory");
  }
  rocksdb::Checkpoint* raw = nullptr;
  rocksdb::Status s = rocksdb::Checkpoint::Create(rocks_->db, &raw);
  if (!s.ok()) return FromRocks(s, "checkpoint " + dir);
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // log_size_for_flush 0: flush the memtables first, so the copy holds every
  // acknowledged write in its table files.
  s = checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0);
  if (!s.ok()) return FromRocks(s, "checkpoint " + dir);
  // RocksDB leaves the live write-ahead log out of the copy when it is
  // empty (everything was just flushed), and when a writer rolls the log
  // while the copy is made, the copy may hold only an older log than the
  // one its MANIFEST names; but a rockdoc directory always has its live log
  // (Open refuses one without: storage/wal_check.h). An empty log under the
  // number of the source's newest one, taken after the copy, is what
  // RocksDB would have had: nothing to replay, and a number at least the
  // one the copied MANIFEST expects (log numbers only grow).
  auto newest_log = [](const fs::path& d) -> std::string {
    std::string newest;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(d, ec)) {
      std::string name = e.path().filename().string();
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".log") == 0 &&
          (newest.empty() || name.size() > newest.size() ||
           (name.size() == newest.size() && name > newest))) {
        newest = name;
      }
    }
    return newest;
  };
  const std::string copied = newest_log(dir);
  const std::string live = newest_log(path_);
  if (live.empty()) {
    return Status(ErrorCode::kInternalError, "checkpoint: no write-ahead log in " + path_);
  }
  // Names are zero-padded numbers: the longer, or the greater at one length,
  // is the newer.
  if (copied.empty() || copied.size() < live.size() ||
      (copied.size() == live.size() && copied < live)) {
    fs::path empty_log = fs::path(dir) / live;
    int fd = ::open(empty_log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return FileError("create", empty_log.string(), errno);
    bool ok = ::fsync(fd) == 0;
    ok = ::close(fd) == 0 && ok;
    if (!ok) return FileError("write", empty_log.string(), errno);
  }
  // The copy is a rockdoc directory of this one's format: its marker too.
  std::ifstream marker(fs::path(path_) / kMarkerFile, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(marker)), std::istreambuf_iterator<char>());
  if (!marker.good() && !marker.eof()) {
    return FileError("read", (fs::path(path_) / kMarkerFile).string(), errno);
  }
  return WriteMarker(dir, text);
}

StorageStats Engine::GetStorageStats() const {
  StorageStats st;
  if (rocks_ == nullptr || !rocks_->statistics) return st;
  st.bytes_written = rocks_->statistics->getTickerCount(rocksdb::BYTES_WRITTEN);
  // Point reads, batched point reads ($in on _id, FETCH batches) and
  // iterators each have their own ticker.
  st.bytes_read = rocks_->statistics->getTickerCount(rocksdb::BYTES_READ) +
                  rocks_->statistics->getTickerCount(rocksdb::NUMBER_MULTIGET_BYTES_READ) +
                  rocks_->statistics->getTickerCount(rocksdb::ITER_BYTES_READ);
  st.wal_bytes = rocks_->statistics->getTickerCount(rocksdb::WAL_FILE_BYTES);
  st.flush_bytes = rocks_->statistics->getTickerCount(rocksdb::FLUSH_WRITE_BYTES);
  st.compaction_bytes_written = rocks_->statistics->getTickerCount(rocksdb::COMPACT_WRITE_BYTES);
  auto use = Enter();
  if (use.status().ok() && rocks_->base != nullptr) {
    uint64_t live = 0;
    if (rocks_->base->GetIntProperty(rocks_->data_cf, "rocksdb.live-sst-files-size", &live)) {
      st.live_sst_bytes += live;
    }
    if (rocks_->base->GetIntProperty(rocks_->catalog_cf, "rocksdb.live-sst-files-size", &live)) {
      st.live_sst_bytes += live;
    }
    if (rocks_->base->GetIntProperty(rocks_->changes_cf, "rocksdb.live-sst-files-size", &live)) {
      st.change_log_sst_bytes = live;
    }
    if (rocks_->base->GetIntProperty(rocks_->changes_cf, "rocksdb.cur-size-all-mem-tables", &live)) {
      st.change_log_memtable_bytes = live;
    }
    if (change_log_ != nullptr) st.change_log_bytes = change_log_->approximate_bytes();
  }
  return st;
}

void Engine::LogWarning(std::string_view message) const {
  warnings_logged_.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<rocksdb::Logger> log = rocks_->base->GetDBOptions().info_log;
  if (log == nullptr) return;
  rocksdb::Log(rocksdb::InfoLogLevel::WARN_LEVEL, log, "[rockdoc] %.*s",
               static_cast<int>(message.size()), message.data());
}

uint64_t Engine::LatestSequenceNumber() const { return rocks_->base->GetLatestSequenceNumber(); }

std::string Engine::OwnerDescription(const std::string& path) {
  std::ifstream in(fs::path(path) / kOwnerFile);
  long pid = 0;
  std::string program;
  if (!(in >> pid >> program) || pid <= 0) return "no process";
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return "no process";
  if (pid == ::getpid()) return "this process (" + program + ")";
  return "process " + std::to_string(pid) + " (" + program + ")";
}

Status Engine::CheckWritable(std::string_view what) const {
  if (!read_only()) return Status::OK();
  const std::string owner = OwnerDescription(path_);
  return Status(ErrorCode::kIllegalOperation,
                std::string(what) + " is a write, and this client opened " + path_ +
                    " read-only (ClientOptions::read_only); " +
                    (owner == "no process" ? std::string("no process owns it for writing now")
                                           : owner + " owns it for writing"));
}

Status Engine::CatchUp() const {
  if (!read_only()) return Status::OK();
  std::shared_lock<std::shared_mutex> open(close_mu_);
  if (closed()) {
    return Status(ErrorCode::kIllegalOperation, "the database at " + path_ + " has been closed");
  }
  return FollowOwner(/*wait=*/true);
}

Status Engine::FollowOwner(bool wait) const {
  std::unique_lock<std::shared_mutex> exclusive(follow_mu_, std::defer_lock);
  if (wait) {
    exclusive.lock();
  } else if (!exclusive.try_lock()) {
    return Status::OK();  // operations in flight: a later one catches up
  }
  const uint64_t before = rocks_->base->GetLatestSequenceNumber();
  ROCKDOC_RETURN_IF_ERROR(FromRocks(rocks_->base->TryCatchUpWithPrimary(),
                                    "catching up with the owner's writes in " + path_));
  if (rocks_->base->GetLatestSequenceNumber() == before) return Status::OK();
  following = true;
  for (const auto& attachment : attachments_) {
    if (attachment != nullptr) attachment->OwnerAdvanced();
  }
  following = false;
  return Status::OK();
}

Engine::CacheInvalidation::CacheInvalidation(const Engine& engine) : engine_(engine) {
  if (engine_.record_cache_ != nullptr) engine_.record_cache_->BeginInvalidateAll();
}

Engine::CacheInvalidation::~CacheInvalidation() {
  if (engine_.record_cache_ != nullptr) {
    engine_.record_cache_->EndInvalidateAll(engine_.LatestSequenceNumber());
  }
}

StatusOr<uint64_t> Engine::ApproximateSize(std::string_view begin, std::string_view end) const {
  auto use = Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  rocksdb::SizeApproximationOptions options;
  options.include_memtables = true;
  options.include_files = true;
  rocksdb::Range range{rocksdb::Slice(begin.data(), begin.size()),
                       rocksdb::Slice(end.data(), end.size())};
  uint64_t size = 0;
  ROCKDOC_RETURN_IF_ERROR(FromRocks(
      rocks_->base->GetApproximateSizes(options, rocks_->data_cf, &range, 1, &size), "size"));
  return size;
}

void Engine::Register(EngineResource* r) const {
  MutexLock g(&resources_mu_);
  resources_.insert(r);
}

void Engine::Unregister(EngineResource* r) const {
  MutexLock g(&resources_mu_);
  resources_.erase(r);
}

}  // namespace rockdoc::internal

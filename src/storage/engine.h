// storage/engine.h: the one RocksDB TransactionDB behind a Client.
//
// Layout (an on-disk format; see storage/README.md):
//   column family "default" (data):  records and index entries, each under
//     a 4-byte big-endian prefix id owned by one collection or index;
//   column family "catalog": collection metadata, per-collection counts,
//     the id allocator and the format marker;
//   column family "changes": the change log (storage/change_log.h).
//
// The Engine also tracks what is in flight so that Close() never pulls
// RocksDB out from under a running operation or a live cursor.
//
// Thread safety: all members are thread-safe.
#ifndef ROCKDOC_STORAGE_ENGINE_H_
#define ROCKDOC_STORAGE_ENGINE_H_

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>

#include "absl/base/thread_annotations.h"
#include "common/background_runner.h"
#include "common/mutex.h"
#include "rockdoc/options.h"
#include "rockdoc/results.h"
#include "rockdoc/status.h"
#include "storage/kv.h"
#include "storage/open_checks.h"

namespace rocksdb {
class FileSystem;  // tests put a fault-injecting one beneath the engine
}  // namespace rocksdb

namespace rockdoc::internal {

// The RocksDB objects behind an Engine, and the conversions of RocksDB's
// statuses and options, are in storage/rocks.h: only storage/ (and white-box
// tests and the raw-RocksDB benchmark baselines) include it.
struct EngineRocks;
class ChangeLog;
class RecordCache;

// Something that holds RocksDB resources (iterators, snapshots) beyond one
// call: the engine tells it to let go before closing.
class EngineResource {
 public:
  virtual ~EngineResource() = default;
  virtual void ReleaseEngineResources() = 0;
};

// The default block cache (rockdoc::DefaultBlockCacheBytes): sized from
// memory as MongoDB sizes WiredTiger's cache, half of (memory - 1 GiB) and
// at least 256 MiB, where memory is the machine's RAM or the cgroup's limit
// when that is lower.
size_t AutoBlockCacheBytes();
// The rule alone, for `memory_bytes` of memory (tests).
size_t BlockCacheBytesForMemory(uint64_t memory_bytes);

// What a layer above storage keeps with the engine for its whole life (the
// catalog, the statistics): storage owns it without knowing what it is. One
// slot each; the slot's number is also the order of their BeforeClose calls,
// highest first, so the catalog's (whose last write marks a clean close,
// catalog/catalog.h) comes last.
enum class AttachmentSlot : size_t { kCatalog = 0, kStats = 1 };
inline constexpr size_t kAttachmentSlots = 2;

class EngineAttachment {
 public:
  virtual ~EngineAttachment() = default;
  // Close() calls it once no operation runs any more (and the sessions'
  // transactions are gone), while the database can still be written.
  virtual void BeforeClose() {}
  // A read-only engine caught up with writes of the directory's owner; no
  // operation runs meanwhile (the catalog loads the owner's collections).
  virtual void OwnerAdvanced() {}
};

class Engine {
 public:
  // `file_system` is where RocksDB's files are read and written: nullptr
  // for the real file system (the fault-injection tests pass their own).
  static StatusOr<std::shared_ptr<Engine>> Open(
      const std::string& path, const ClientOptions& options,
      std::shared_ptr<rocksdb::FileSystem> file_system = nullptr);
  // Client::Salvage: opens the database keeping the intact prefix of its
  // write-ahead log, and closes it.
  static StatusOr<SalvageReport> Salvage(const std::string& path, const ClientOptions& options);
  ~Engine();  // defined where EngineRocks is complete

  // A guard held for the duration of one operation: while any is held,
  // Close() waits. ok() is false once the engine is closed.
  // On a read-only engine the outermost Use of a thread first catches up
  // with the owner's writes (FollowOwner), and every Use holds off the next
  // catch-up until it ends, so that one operation reads one state of the
  // database (a secondary instance has no snapshots of its own).
  class Use {
   public:
    explicit Use(const Engine* engine);
    Use(Use&& other) noexcept;
    Use& operator=(Use&&) = delete;
    ~Use();
    Status status() const;

   private:
    std::shared_lock<std::shared_mutex> lock_;
    std::shared_lock<std::shared_mutex> follow_lock_;
    const Engine* engine_;
    bool counted_ = true;  // counts in this thread's Uses (not once moved from)
  };
  Use Enter() const { return Use(this); }

  // Stops the background tasks first (so none runs against a closing
  // database), then waits for the operations in flight.
  Status Close();
  // The client's background tasks (the TTL monitor, ...); Close stops them.
  BackgroundRunner& runner() const { return *runner_; }
  bool closed() const { return closed_.load(std::memory_order_acquire); }

  // The RocksDB objects (storage/rocks.h). Null once closed.
  const EngineRocks& rocks() const { return *rocks_; }
  const ClientOptions& options() const { return options_; }
  // The change log (storage/change_log.h); null when ClientOptions::
  // change_log is off.
  ChangeLog* change_log() const { return change_log_.get(); }
  // The cache of records above RocksDB (storage/record_cache.h); null when
  // ClientOptions::record_cache_bytes is 0.
  RecordCache* record_cache() const { return record_cache_.get(); }
  const std::string& path() const { return path_; }

  // ---- Read-only engines (ClientOptions::read_only) ----
  bool read_only() const { return options_.read_only; }
  // OK for a read-write engine; for a read-only one IllegalOperation (20)
  // saying that `what` is a write and naming the directory's owner
  // (OwnerDescription).
  Status CheckWritable(std::string_view what) const;
  // A read-only engine reads what the owner has written since the last
  // catch-up (RocksDB's TryCatchUpWithPrimary), waiting for the operations
  // in flight to end; when the database moved, the attachments hear of it
  // (EngineAttachment::OwnerAdvanced) before any operation reads again.
  // Client::CatchUp. Never from inside an operation (a Use). A no-op for a
  // read-write engine.
  Status CatchUp() const;
  // The process that owns `path` for writing, from the owner record a
  // read-write open leaves in the directory ("process 1234 (rockdoc-serve)"),
  // or "no process" when none holds it (no record, or its process is gone).
  static std::string OwnerDescription(const std::string& path);

  // The attachments (each set once, right after Open, before any other use).
  void Attach(AttachmentSlot slot, std::unique_ptr<EngineAttachment> attachment) {
    attachments_[static_cast<size_t>(slot)] = std::move(attachment);
  }
  EngineAttachment* attachment(AttachmentSlot slot) const {
    return attachments_[static_cast<size_t>(slot)].get();
  }

  // The catalog key space (collection metadata, counts, the id allocator):
  // writes are one atomic, synced batch (catalog changes are rare; none is
  // ever lost); reads are of the latest state.
  struct MetadataWrite {
    enum class Op { kPut, kDelete } op;
    std::string key;
    std::string value;  // kPut only
  };
  // `events`: change-log events (storage/change_log.h) of the catalog
  // change (a drop, a rename), written in the same batch under the next
  // cluster time when the change log is on.
  Status WriteMetadata(const std::vector<MetadataWrite>& writes,
                       const std::vector<std::string>& events = {}) const;
  Status ReadMetadata(std::string_view key, std::string* value, bool* found) const;
  // Calls `fn` with each key beginning with `prefix`, in key order, until it
  // returns an error (which is returned).
  Status ScanMetadata(
      std::string_view prefix,
      const std::function<Status(std::string_view key, std::string_view value)>& fn) const;

  // A new transaction (storage/kv.h). `reuse` may be a finished one to
  // recycle (saves allocations on hot write paths).
  std::unique_ptr<KvTransaction> Begin(const KvTransaction::Options& options = {},
                                       std::unique_ptr<KvTransaction> reuse = nullptr) const;

  // Range deletion outside any transaction (the caller knows no writer can
  // touch the range: it belongs to a dropped collection or index).
  Status DeleteRange(std::string_view begin, std::string_view end) const;

  StorageStats GetStorageStats() const;

  // Makes every write committed so far durable: fsyncs the write-ahead log
  // (a write concern's j: true, rockdoc-serve's journal commit interval).
  // With ClientOptions::sync each commit synced it already: nothing to do.
  Status SyncWal() const;

  // Client::Compact: a full manual compaction of the data and catalog key
  // spaces (bottommost level forced, so overwritten versions are dropped).
  Status Compact() const;

  // Client::Checkpoint: a RocksDB checkpoint of the whole database in `dir`
  // (which must not exist): table files hard-linked where the file system
  // allows, copied otherwise, after a flush so that no log is needed.
  Status Checkpoint(const std::string& dir) const;

  // The approximate bytes the data keys in [begin, end) take: in table
  // files (compressed, as on disk) and in memtables (not yet flushed).
  // RocksDB's estimate: cheap (no scan), coarse for small ranges.
  StatusOr<uint64_t> ApproximateSize(std::string_view begin, std::string_view end) const;
  // The sequence number of the last write (every write, of any column
  // family, by any version of rockdoc, takes the next one). Unchanged
  // across a close and an open when nothing was written in between.
  uint64_t LatestSequenceNumber() const;
  // Brackets a write of data keys outside any transaction (DeleteRange of a
  // dropped collection or index, a bulk load): the record cache serves
  // nothing while it runs and drops every version when it ends. (Catalog
  // writes need none: a rename keeps the collection's prefix, so its
  // records' keys and values; a drop's records go by DeleteRange.)
  class CacheInvalidation {
   public:
    explicit CacheInvalidation(const Engine& engine);
    ~CacheInvalidation();
    CacheInvalidation(const CacheInvalidation&) = delete;
    CacheInvalidation& operator=(const CacheInvalidation&) = delete;

   private:
    const Engine& engine_;
  };
  // Writes a warning line to the database's log (RocksDB's info log, the
  // LOG file in the directory), as MongoDB writes to its server log: a
  // write that a validator with validationAction "warn" let through.
  void LogWarning(std::string_view message) const;
  // How many warnings were logged since open.
  int64_t warnings_logged() const { return warnings_logged_.load(std::memory_order_relaxed); }

  void Register(EngineResource* r) const;
  void Unregister(EngineResource* r) const;

 private:
  Engine() = default;
  // Open, or with `salvage` Salvage (filling *salvage).
  static StatusOr<std::shared_ptr<Engine>> OpenImpl(
      const std::string& path, const ClientOptions& options, SalvageReport* salvage,
      std::shared_ptr<rocksdb::FileSystem> file_system);
  // OpenImpl for ClientOptions::read_only: RocksDB's secondary instance.
  static StatusOr<std::shared_ptr<Engine>> OpenReadOnly(
      const std::string& path, const ClientOptions& options,
      std::shared_ptr<rocksdb::FileSystem> file_system);
  // OpenImpl's second half, once the directory is checked and claimed (or,
  // with options.in_memory, without a directory): RocksDB's open.
  static StatusOr<std::shared_ptr<Engine>> OpenRocks(
      const std::string& path, const ClientOptions& options, SalvageReport* salvage,
      std::shared_ptr<rocksdb::FileSystem> file_system, DirectoryClaim claim, bool is_new,
      int version);

  std::string path_;
  ClientOptions options_;
  DirectoryClaim claim_;  // this process's claim on the directory, until Close
  std::unique_ptr<EngineRocks> rocks_;
  std::unique_ptr<ChangeLog> change_log_;
  std::unique_ptr<RecordCache> record_cache_;
  std::array<std::unique_ptr<EngineAttachment>, kAttachmentSlots> attachments_;
  std::unique_ptr<BackgroundRunner> runner_ = std::make_unique<BackgroundRunner>();
  // A read-write engine on disk wrote the owner record (removed at Close).
  bool wrote_owner_record_ = false;
  // A read-only engine's catch-ups hold it exclusively, its operations
  // (Use) shared: no operation reads across a catch-up.
  mutable std::shared_mutex follow_mu_;
  // Catches up when no operation is in flight (try_lock); the next Use
  // tries again otherwise. With `wait`, waits for them.
  Status FollowOwner(bool wait) const;

  // A std::shared_mutex, not an Mutex: an operation may enter while
  // its caller holds a Use (nested shared locks), which Mutex does
  // not allow once a writer (Close) waits. It guards no member (closed_ is
  // atomic): it only orders Close after the operations in flight.
  mutable std::shared_mutex close_mu_;
  mutable std::atomic<int64_t> warnings_logged_{0};
  std::atomic<bool> closed_{false};
  mutable Mutex resources_mu_;
  mutable std::set<EngineResource*> resources_ ABSL_GUARDED_BY(resources_mu_);
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_ENGINE_H_

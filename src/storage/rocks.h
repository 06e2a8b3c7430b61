// storage/rocks.h: the RocksDB side of the storage layer. Included only by
// storage/'s own sources, white-box tests, and the benchmarks' raw-RocksDB
// baselines: every layer above storage/ reads and writes through
// storage/kv.h and storage/engine.h, which name no RocksDB type.
#ifndef ROCKDOC_STORAGE_ROCKS_H_
#define ROCKDOC_STORAGE_ROCKS_H_

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <rocksdb/listener.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/utilities/transaction.h>
#include <rocksdb/utilities/transaction_db.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/mutex.h"
#include "rockdoc/options.h"
#include "rockdoc/status.h"
#include "storage/engine.h"

namespace rockdoc::internal {

// RocksDB's standing background error: set when a write, flush or
// compaction fails (a full disk, an I/O error) and cleared when its recovery
// ends well. While one stands, the write-ahead log's writer may hold a
// failed append, and syncing that writer trips an assertion in Debian's
// RocksDB (WritableFileWriter::AssertFalseAndGetStatusForPrevError:
// `sync_without_flush_called_`), which aborted rockdoc-serve's journal
// thread on a full disk: Engine::SyncWal asks this first.
class BackgroundErrorWatch : public rocksdb::EventListener {
 public:
  void OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* error) override {
    if (error == nullptr || error->ok()) return;
    MutexLock lock(&mu_);
    error_ = *error;
  }
  void OnErrorRecoveryEnd(const rocksdb::BackgroundErrorRecoveryInfo& info) override {
    MutexLock lock(&mu_);
    error_ = info.new_bg_error;
  }
  // The standing error; OK when there is none.
  rocksdb::Status Current() const {
    MutexLock lock(&mu_);
    return error_;
  }

 private:
  mutable Mutex mu_;
  rocksdb::Status error_ ABSL_GUARDED_BY(mu_);
};

// The RocksDB objects of an open Engine.
struct EngineRocks {
  // An in-memory database's Env (RocksDB's NewMemEnv), whose FileSystem
  // `env` is over; null on disk. First, to outlive `env`.
  std::unique_ptr<rocksdb::Env> memory_env;
  // The Env over our FileSystem (storage/file_system.h); declared before
  // the rest so that it outlives everything RocksDB made with it.
  std::unique_ptr<rocksdb::Env> env;
  // The writer: the TransactionDB of a read-write open; null when the
  // engine is read-only (ClientOptions::read_only), whose writes are refused
  // before they get here (Engine::CheckWritable).
  rocksdb::TransactionDB* db = nullptr;
  // What reads go through: `db` itself, or the read-only engine's secondary
  // instance (rocksdb::DB::OpenAsSecondary), caught up with the owner's
  // writes by Engine::CatchUp.
  rocksdb::DB* base = nullptr;
  // A secondary instance's own directory (its info log), outside the
  // database directory; removed at close.
  std::string secondary_dir;
  rocksdb::ColumnFamilyHandle* data_cf = nullptr;
  rocksdb::ColumnFamilyHandle* catalog_cf = nullptr;
  rocksdb::ColumnFamilyHandle* changes_cf = nullptr;
  std::shared_ptr<rocksdb::Statistics> statistics;
  std::shared_ptr<rocksdb::Cache> block_cache;
  rocksdb::WriteOptions write_options;
  std::shared_ptr<BackgroundErrorWatch> background_errors;
};

// Converts a RocksDB status into ours. `context` says what was being done.
Status FromRocks(const rocksdb::Status& s, std::string_view context);

// Converts the status of a failed RocksDB open of `path`: a held lock is
// DBPathInUse, a file CURRENT leads to that is missing or unreadable is
// DataCorruptionDetected.
Status OpenError(const rocksdb::Status& s, const std::string& path);

// The RocksDB options rockdoc uses for a directory. Benchmarks open their raw
// RocksDB baseline with the same options so that ratios measure our code.
rocksdb::Options MakeRocksOptions(const ClientOptions& options);
rocksdb::ColumnFamilyOptions MakeDataColumnFamilyOptions(const ClientOptions& options,
                                                         const rocksdb::Options& base);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_ROCKS_H_

// storage/spill.h: temporary sorted runs for blocking stages that outgrow
// their memory limit (aggregate's allowDiskUse). A run is a sequence of
// byte strings written once, in order, then read back once, in the same
// order; it lives in the database directory's _tmp/ folder as a RocksDB
// table file (SstFileWriter / SstFileReader, keyed by a sequence number),
// written through the engine's file system, so a full disk or an I/O error
// is a Status, never a crash or a wrong answer.
//
// A run's file is deleted when its reader (or an unfinished writer) is
// destroyed; whatever a killed process left in _tmp/ is removed when the
// database is next opened (Engine::Open, which holds the directory's lock).
//
// Thread safety: a SpillWriter or SpillReader is used by one thread at a
// time; runs of one engine may be written and read concurrently.
#ifndef ROCKDOC_STORAGE_SPILL_H_
#define ROCKDOC_STORAGE_SPILL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "rockdoc/status.h"

namespace rockdoc::internal {

class Engine;

// Reads a finished run back, in the order it was written.
class SpillReader {
 public:
  virtual ~SpillReader() = default;
  // The next record, or nullopt at the end. The view stays valid until the
  // next call.
  virtual StatusOr<std::optional<std::string_view>> Next() = 0;
  // The record written at `position` (0 first), or nullopt past the end:
  // random access, a seek (or a step, right after the previous position).
  // The view stays valid until the next call.
  virtual StatusOr<std::optional<std::string_view>> At(uint64_t position) = 0;
};

// Writes one run.
class SpillWriter {
 public:
  virtual ~SpillWriter() = default;
  virtual Status Add(std::string_view record) = 0;
  // The bytes added so far.
  virtual int64_t bytes() const = 0;
  // Closes the run (syncing nothing: it is temporary) and opens it for
  // reading. The writer is spent afterwards.
  virtual StatusOr<std::unique_ptr<SpillReader>> Finish() = 0;
};

// A new run in `engine`'s _tmp/ folder (created when missing).
StatusOr<std::unique_ptr<SpillWriter>> NewSpillRun(const Engine& engine);

// A sorted bulk load into the data column family: table files written in
// the _tmp/ folder with the data column family's options, then ingested in
// one step (RocksDB's IngestExternalFile: linked into the database, synced,
// recorded in the manifest; no write-ahead log, no memtable). For keys
// nobody else reads or writes while the load runs (an index build's
// unpublished prefix): the files land in the lowest level whose key range
// they do not overlap, so a built index is one sorted run.
//
// Keys must arrive in strictly ascending bytewise order (a key out of order
// is an error, never a wrong table). Nothing is visible before Finish; an
// unfinished or failed load removes its files.
class BulkLoad {
 public:
  virtual ~BulkLoad() = default;
  virtual Status Add(std::string_view key, std::string_view value) = 0;
  // Ingests every key added (none: nothing to do). The load is spent afterwards.
  virtual Status Finish() = 0;
};
StatusOr<std::unique_ptr<BulkLoad>> NewBulkLoad(const Engine& engine);

// Removes `path`/_tmp and everything in it (Engine::Open, before anything
// could spill).
Status RemoveSpillFolder(const std::string& path);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_SPILL_H_

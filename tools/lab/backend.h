// tools/lab/backend.h: the databases a variant runs on. rockdoc is measured;
// SQLite (JSON text in a table, with expression indexes: what many people
// would pick for an embedded document store) is the reference it is compared
// with in the same run.
//
// SQLite variants use one operation, "sql" (see tools/lab/README.md):
//   {"op": "sql", "sql": "SELECT doc FROM posts WHERE id = ?",
//    "params": [data], "json": ["doc"], "as": "rows"}
//   {"op": "sql", "sql": "INSERT INTO posts(doc) VALUES (?)", "params": ["$$this"],
//    "rows": {"$$generate": ...}, "rowAs": "this"}   // once per row, one transaction
//   {"op": "sql", "sql": "CREATE TABLE ...; CREATE INDEX ..."}   // no params: a script
// Parameters bind as SQL values: integers, doubles, strings, null, booleans as
// 0/1, and documents, arrays and other BSON types as relaxed Extended JSON
// text. A result is an array of rows, each a document of its columns; the
// columns named in "json" are parsed back from JSON text.
#ifndef ROCKDOC_TOOLS_LAB_BACKEND_H_
#define ROCKDOC_TOOLS_LAB_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>

#include "rockdoc/status.h"
#include "scenario.h"

namespace rockdoc::lab {

// Cumulative I/O counters; `known` is false when the engine has none.
struct IoCounters {
  bool known = false;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t wal_bytes = 0;
};

// Stored document sizes over every collection (rockdoc: BSON bytes; SQLite:
// the JSON text of every `doc` column).
struct DocSizes {
  int64_t documents = 0;
  double avg_bytes = 0;
  int64_t max_bytes = 0;
};

class Backend {
 public:
  // Opens (creating) the database of one variant in directory `dir`, with a
  // block cache (SQLite: page cache) of `cache_bytes`, or rockdoc's default
  // when 0.
  static StatusOr<std::unique_ptr<Backend>> Open(EngineKind engine, const std::string& dir,
                                                 int64_t cache_bytes = 0);
  virtual ~Backend() = default;

  virtual EngineKind engine() const = 0;
  // Valid until the next Reopen.
  virtual Executor& executor() = 0;
  // Closes (flushing everything to its files) and opens again: reads then
  // come from the files and a cold cache, as in a long-running process.
  virtual Status Reopen() = 0;
  // The lab's own reads (setup, the dumps that check the data) are not the
  // scenario's workload: rockdoc forgets the query statistics they made
  // (ForgetQueries), or reopens to read without recording any
  // (ReopenUnrecorded), so that the advisor judges the measured reads only.
  virtual Status ForgetQueries() { return Status::OK(); }
  virtual Status ReopenUnrecorded() { return Reopen(); }
  virtual Status Close() = 0;
  virtual IoCounters Io() const = 0;
  virtual StatusOr<DocSizes> Sizes() = 0;
  // The database's size on disk; call right after Reopen (or Compact).
  virtual StatusOr<uint64_t> DiskBytes() = 0;
  // Rewrites the database without overwritten or deleted versions (rockdoc:
  // Client::Compact; SQLite: VACUUM and a WAL checkpoint), so that DiskBytes
  // is what the live data costs.
  virtual Status Compact() = 0;
};

}  // namespace rockdoc::lab

#endif  // ROCKDOC_TOOLS_LAB_BACKEND_H_

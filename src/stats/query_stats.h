// stats/query_stats.h: what the engine remembers of the queries it ran,
// for $queryStats, the profiler and the schema advisor.
//
// QueryStats: one entry per query shape (query/query_shape.h) and
// namespace: how often it ran, its time, the keys and documents it
// examined, what it returned, whether it scanned the collection, whether
// it was case-insensitive, and how often it read a collection by _id just
// after a query on another collection of the database (an
// application-level join), or joined one with $lookup. At most
// kMaxShapes entries: a new shape past that evicts the least recently run.
// Persisted at close under the catalog column family's 'q' db keys
// (storage/format.h), read back at open.
//
// Profiler: MongoDB's profiling levels per database (0 off, 1 operations
// at or over slowms, 2 all; slowms is one setting for all databases, 100
// ms by default, as MongoDB's). Profiled operations wait in memory (at
// most kMaxPending, the oldest dropped) until system.profile is read or
// the client closes (api/ writes them then, into a capped collection).
//
// Thread safety: every method may be called from any thread.
#ifndef ROCKDOC_STATS_QUERY_STATS_H_
#define ROCKDOC_STATS_QUERY_STATS_H_

#include <cstdint>
#include <deque>
#include <atomic>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/functional/function_ref.h"
#include "common/mutex.h"
#include "query/query_shape.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

class Engine;

// One run of a query, as it ended.
struct QueryRun {
  int64_t micros = 0;
  int64_t keys_examined = 0;
  int64_t docs_examined = 0;
  int64_t returned = 0;
  bool collscan = false;
  std::string plan_summary;  // "IXSCAN { a: 1 }", "COLLSCAN", ...; may be empty
};

// Which shape a run had.
struct QueryShapeId {
  std::string db;
  std::string coll;
  std::string command;  // "find", "aggregate", "count", "distinct"
  uint64_t hash = 0;
  bool operator==(const QueryShapeId& o) const {
    return hash == o.hash && coll == o.coll && db == o.db && command == o.command;
  }
};

// A shape's hash as $queryStats shows it (queryShapeHash): 16 hex digits.
std::string QueryShapeHashText(uint64_t hash);

class QueryStats {
 public:
  static constexpr size_t kMaxShapes = 1000;
  // An application-level join: a read by a reference field (_id, postId:
  // ShapeTraits::id_lookup) at most this long after a query on another
  // collection of the same database, on the same thread.
  static constexpr int64_t kJoinWindowNanos = 1000 * 1000 * 1000;

  // Whether an entry for `id` exists (a run of a new shape builds its
  // shape document first).
  bool Has(const QueryShapeId& id) const;
  // A query began on this thread: an _id read of another collection of the
  // database while it runs or just after it is a join after it (the N+1
  // loop reads by _id while the query's cursor is still open, long before
  // the query ends and is recorded). An _id read itself is judged when it
  // is recorded.
  void NoteStart(const QueryShapeId& id, const ShapeTraits& traits);
  // Records a run. `shape`: the shape document ({filter, sort, ...} or
  // {pipeline}), needed when the entry is new (else the run is not
  // recorded: the shape was evicted between Has and Record). `lookups`:
  // the collections the run's $lookup stages read.
  // `make_shape` is called (under the store's lock) only when the entry is
  // new; `summarize` (the run's planSummary) only when the entry has none,
  // when the run's collscan differs from the last run's, and every 64th
  // run: building that text each time was most of a point read's cost of
  // being recorded. `run.plan_summary` is used when not empty.
  void Record(const QueryShapeId& id, const ShapeTraits& traits,
              absl::FunctionRef<std::optional<Document>()> make_shape, const QueryRun& run,
              absl::FunctionRef<std::string()> summarize, const std::vector<std::string>& lookups);

  // The entries as $queryStats documents, of `db` (empty: every database)
  // and `coll` (empty: every collection), most run first.
  std::vector<Document> Entries(std::string_view db, std::string_view coll) const;
  // Forgets every entry (and, at the next Persist, the persisted ones).
  void Clear();
  size_t size() const;
  int64_t evictions() const;

  // Writes the entries, a key per database; reads them back.
  Status Persist(const Engine& engine);
  Status Load(const Engine& engine);

 private:
  struct Metric {
    int64_t sum = 0, max = 0, min = 0;
    void Add(int64_t v, bool first);
    void Append(std::string_view key, BsonBuilder* b) const;
    static Metric Read(DocumentView d, std::string_view key);
  };
  struct Entry {
    QueryShapeId id;
    Document shape;
    ShapeTraits traits;
    int64_t exec_count = 0;
    Metric micros, keys, docs, returned;
    int64_t last_micros = 0;
    int64_t collscans = 0;
    int64_t first_seen_ms = 0, last_seen_ms = 0;
    std::string plan_summary;
    bool last_collscan = false;
    int64_t app_joins = 0;
    int64_t case_insensitive_runs = 0;  // runs with a $regex of option i
    std::map<std::string, int64_t> joined_after;  // collection -> joins
    std::map<std::string, int64_t> lookups;       // $lookup's from -> runs
    uint64_t last_use = 0;  // a tick of the store's clock: eviction order
  };
  struct IdHash {
    size_t operator()(const QueryShapeId& id) const { return static_cast<size_t>(id.hash); }
  };

  Document ToDocument(const Entry& e) const;
  static StatusOr<Entry> FromDocument(DocumentView d);
  void EvictOne() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::unordered_map<QueryShapeId, std::unique_ptr<Entry>, IdHash> entries_ ABSL_GUARDED_BY(mu_);
  uint64_t tick_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t evictions_ ABSL_GUARDED_BY(mu_) = 0;
  // Databases whose entries are on disk: a Persist after Clear deletes them.
  std::vector<std::string> persisted_dbs_ ABSL_GUARDED_BY(mu_);
};

class Profiler {
 public:
  static constexpr size_t kMaxPending = 10000;
  static constexpr size_t kMaxPendingBytes = size_t{2} << 20;
  static constexpr int64_t kDefaultSlowMs = 100;

  // The level of `db` (0 when never set).
  int Level(std::string_view db) const;
  // Sets the level (-1: leave it) and slowms (nullopt: leave it); returns
  // the previous level, and the previous slowms in `*was_slowms`.
  int Set(std::string_view db, int level, std::optional<int64_t> slowms, int64_t* was_slowms);
  int64_t slowms() const;
  // Whether an operation of `micros` on `db` is profiled.
  bool Profiles(std::string_view db, int64_t micros) const;
  // Whether anything on `db` may be: level 1 or 2 (callers copy what a
  // profile entry needs only then).
  bool Active(std::string_view db) const { return Level(db) > 0; }

  void Add(std::string db, Document entry);
  // The pending entries of `db`, oldest first, taken.
  std::vector<Document> Take(std::string_view db);
  // The databases with pending entries.
  std::vector<std::string> PendingDatabases() const;

 private:
  mutable Mutex mu_;
  std::map<std::string, int, std::less<>> levels_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> slowms_{kDefaultSlowMs};  // read by every operation: no lock
  std::deque<std::pair<std::string, Document>> pending_ ABSL_GUARDED_BY(mu_);
  size_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool> any_level_{false};
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STATS_QUERY_STATS_H_

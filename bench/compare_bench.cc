// rockdoc beside what a user would pick instead: raw RocksDB (the same
// options, rockdoc's key layout, no planner, no transactions) and SQLite
// (JSON text in a table keyed by an integer primary key, expression indexes),
// on the same generated documents, one row per workload:
//
//   find_id        findOne({_id: x})              raw Get          SELECT doc WHERE id = ?
//                  (and rockdoc's FindById, the same read without planner or cursor)
//   index_eq       find({k: v}), 1 result        new iterator, Seek, Get of the record,
//                                                Next (to the key past v)
//                                                                  ... WHERE json_extract(doc, '$.k') = ?
//   unique_eq      find({u: v}), 1 result, through the unique index {u: 1}
//                                                                  ... UNIQUE INDEX, u = ?
//   index_eq_2     find({k: v, a: {$gte: 0}}), 1 result: two indexes apply ({k: 1}, {a: 1, b: 1}),
//                  the plan is chosen (raced, or from the plan cache)
//                                                                  ... k = ? AND a >= 0
//   range_100      find({a: {$gte: x, $lt: x + 100}}): 100 documents through the index {a: 1, b: 1}
//                                                raw: the index entries, a Get each
//   covered_100    the same range, projection {_id: 0, a: 1, b: 1} (no document read)
//                                                raw: the index entries alone, each key decoded
//                                                SQLite: SELECT json_extract a, b (its expression index)
//   in_100         find({_id: {$in: [100 random _ids]}})
//                                                raw MultiGet     ... WHERE id IN (?, ... 100)
//   count_10k      countDocuments({a: {$gte: x, $lt: x + 10000}})
//                                                raw: count the index keys   SELECT COUNT(*) ...
//   scan_filter    countDocuments({status: "active", b: {$lt: 100}}) over a collection scan
//                                                raw: every value read, the two fields compared
//                                                SQLite: the same two json_extract conditions
//   update_inc     updateOne({_id: x}, {$inc: {n: 1}})
//                                                raw Get + Put    UPDATE ... json_set(doc, '$.n', n + 1)
//   push_sort      updateOne({_id: p}, {$push: {log: {$each: [e], $sort: {ts: 1}, $slice: -1000}}})
//                  on documents holding 1,000 log entries
//                                                raw Get + Put of the same size
//                                                SQLite: json_each, ORDER BY, LIMIT, json_group_array
//   insert_0       insertMany in batches of 1,000 into an empty collection without indexes
//                                                raw WriteBatch   BEGIN; 1,000 INSERTs; COMMIT
//   insert_2       the same with the two secondary indexes {k: 1} and {a: 1, b: 1}
//   index_build    createIndex({c: 1}) over the loaded documents (string values)
//                                                raw: scan the records, build the same entries,
//                                                sort, write one table file, ingest it
//                                                SQLite: CREATE INDEX ... (json_extract(doc, '$.c'))
//   json_to_bson   FromPaddedJson over every document's JSON text (MB/s), and
//                  FromJson (which copies the text to pad it)
//                                                simdjson On-Demand, every key and value walked
//
// Each row runs every engine `--reps` times, the engines interleaved and
// their order rotated from one repetition to the next, so drift on a shared
// machine hits all alike; each run does as many operations as fit in
// `--seconds` (wall time; a query's parameters come from a generator seeded
// per repetition, the same for every engine). A row prints each engine's
// median rate with its range, and the median of the per-repetition ratios
// rockdoc/raw and rockdoc/SQLite beside the goals of issue 15.
//
//   compare_bench [--docs N] [--reps R] [--seconds S] [--rows find_id,index_eq,...] [--dir D]
//                 [--cache-mib M] [--only rockdoc|raw|sqlite|FindById|simdjson] [--no-statistics]
//                 [--ab plan_cache|unique_get|record_cache] [--record-cache-mib M]
//                 [--warm-record-cache]
//
// --only runs one engine's side of each row alone and prints its rate (to
// profile it: perf record -g -p PID while it runs).
//
// N defaults to 1,000,000 (ROCKDOC_BENCH_DOCS too). The data set is loaded
// once per engine (rockdoc and raw are flushed and reopened, so reads start
// from SST files), under a temporary directory removed at exit. Durability
// is the same everywhere: a WAL, no sync per commit (rockdoc's default;
// SQLite journal_mode=WAL with synchronous=NORMAL).
#include <rocksdb/db.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/write_batch.h>
#include <simdjson.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/client_internal.h"
#include "exec/index_stages.h"
#include "keystring/keystring.h"
#include "planner/query_planner.h"
#include "bench_util.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "simdjson_walk.h"
#include "storage/format.h"
#include "storage/record_cache.h"
#include "storage/rocks.h"

namespace {

namespace fs = std::filesystem;
namespace od = simdjson::ondemand;
using rockdoc::bench::WalkObject;
using rockdoc::BsonBuilder;
using rockdoc::Document;

constexpr int kBatch = 1000;
constexpr int kLogLength = 1000;
constexpr int kPushDocs = 100;

using rockdoc::bench::Check;
using rockdoc::bench::Die;

Document Json(const std::string& text) { return Check(rockdoc::FromJson(text), "FromJson"); }

std::string BE32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
  return s;
}

// ---- the data ----

struct Options {
  int64_t docs = 1000000;
  int reps = 5;
  double seconds = 0.5;
  std::vector<std::string> rows;
  std::string dir = "/tmp";
  std::string only;  // --only ENGINE: that engine's side of each row alone
  std::string ab;    // --ab LEVER: a "before" side, rockdoc with LEVER off
  bool warm_record_cache = false;  // --warm-record-cache
};

// --ab LEVER: each row gains a side "before", rockdoc's own operation with
// one read-path lever of issue 36 turned off around it (an internal switch:
// the answers are the same either way), so that a lever is measured A/B in
// the same run, interleaved with the other engines.
std::function<void(bool)> LeverSwitch(const std::string& lever) {
  if (lever == "plan_cache") return rockdoc::internal::SetPlanCacheEnabled;
  if (lever == "unique_get") return rockdoc::internal::SetUniquePointGetEnabled;
  // The record cache's reads (storage/record_cache.h): "before" reads
  // RocksDB for every record; commits keep the cache coherent either way.
  if (lever == "record_cache") return rockdoc::internal::SetRecordCacheReadsEnabled;
  return nullptr;
}

// The options every engine opens with: rockdoc's, raw RocksDB's (the same
// RocksDB options through MakeRocksOptions) and SQLite's page cache, the
// same size as the block cache (--cache-mib; rockdoc's default otherwise,
// rockdoc::DefaultBlockCacheBytes).
rockdoc::ClientOptions g_client_options;

// Raw RocksDB's layout is rockdoc's (storage/format.h): records under the
// collection's prefix, index i's entries under its own prefix as keystring
// values + the record's id key, the value the id key's length and the type
// bits. So raw differs from rockdoc only by what rockdoc adds on top.
constexpr uint32_t kRawRecords = 1;
constexpr uint32_t kRawIndexK = 2;
constexpr uint32_t kRawIndexAB = 3;
constexpr uint32_t kRawPush = 4;
constexpr uint32_t kRawIndexC = 100;  // + the repetition: a fresh prefix per build, as rockdoc's

struct Data {
  int64_t n = 0;
  std::vector<Document> docs;  // insertion order: _ids shuffled
  std::vector<std::string> json;
  std::vector<std::string> record_keys;  // of docs[i] in the raw layout
  uint64_t json_bytes = 0;
  std::vector<Document> push_docs;  // {_id, log: [1,000 × {ts, v}]}
};

std::string RawRecordKey(uint32_t prefix, const Document& doc) {
  return rockdoc::internal::RecordKey(prefix, rockdoc::keystring::EncodeValue(doc.Get("_id")));
}

void AppendRawIndexEntries(const Document& doc, std::string_view record_key,
                           rocksdb::WriteBatch* wb) {
  std::string_view id_key = record_key.substr(4);
  rockdoc::keystring::Builder kb;
  for (uint32_t prefix : {kRawIndexK, kRawIndexAB}) {
    kb.Reset();
    if (prefix == kRawIndexK) {
      kb.Append(doc.Get("k"));
    } else {
      kb.Append(doc.Get("a"));
      kb.Append(doc.Get("b"));
    }
    std::string key = BE32(prefix);
    key += kb.bytes();
    key += id_key;
    std::string value(1, static_cast<char>(id_key.size()));  // varint32, < 128
    value += kb.type_bits();
    wb->Put(key, value);
  }
}

std::string RandomText(std::mt19937_64& rng, size_t n) {
  std::string s(n, ' ');
  for (char& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

Data MakeData(int64_t n) {
  Data d;
  d.n = n;
  std::mt19937_64 rng(42);
  std::vector<int64_t> ids(n), ks(n), as(n);
  std::iota(ids.begin(), ids.end(), 0);
  std::iota(ks.begin(), ks.end(), 0);
  std::iota(as.begin(), as.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  std::shuffle(ks.begin(), ks.end(), rng);
  std::shuffle(as.begin(), as.end(), rng);
  d.docs.reserve(n);
  d.json.reserve(n);
  for (int64_t id : ids) {
    // k, u and a: permutations of [0, n), so an equality on k finds one
    // document and a range of a of width w holds w documents, spread over
    // the records in random order.
    BsonBuilder b;
    b.AppendInt64("_id", id);
    b.AppendInt64("k", ks[id]);
    b.AppendInt64("u", n - 1 - ks[id]);  // unique too: the unique index {u: 1}
    b.AppendInt32("a", static_cast<int32_t>(as[id]));
    b.AppendInt32("b", static_cast<int32_t>(rng() % 1000));
    b.AppendInt32("n", 0);
    b.AppendString("c", "user" + std::to_string(rng() % 10000000));
    b.AppendString("status", (rng() & 1) ? "active" : "inactive");
    b.OpenArray("tags").AppendString("", "red").AppendString("", "blue").Close();
    b.AppendString("text", RandomText(rng, 170));
    d.docs.push_back(std::move(b).Build());
    d.json.push_back(rockdoc::ToJson(d.docs.back(), rockdoc::JsonFormat::kRelaxed));
    d.json_bytes += d.json.back().size();
    d.record_keys.push_back(RawRecordKey(kRawRecords, d.docs.back()));
  }
  for (int p = 0; p < kPushDocs; ++p) {
    BsonBuilder b;
    b.AppendInt64("_id", p);
    b.OpenArray("log");
    for (int i = 0; i < kLogLength; ++i) {
      b.OpenDocument("").AppendInt64("ts", i).AppendString("v", RandomText(rng, 16)).Close();
    }
    b.Close();
    d.push_docs.push_back(std::move(b).Build());
  }
  return d;
}

// ---- the three engines ----

rocksdb::DB* OpenRaw(const std::string& path) {
  rocksdb::Options o = rockdoc::internal::MakeRocksOptions(g_client_options);
  o.create_if_missing = true;
  rocksdb::DB* db = nullptr;
  Check(rocksdb::DB::Open(o, path, &db), "raw open");
  return db;
}

void Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    Die("sqlite: " + sql + ": " + (err != nullptr ? err : "?"));
  }
}

sqlite3* OpenSqlite(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) Die("sqlite open " + path);
  Exec(db, "PRAGMA journal_mode=WAL");
  Exec(db, "PRAGMA synchronous=NORMAL");
  // A negative cache_size is in KiB: the block cache's size.
  Exec(db, "PRAGMA cache_size=-" +
               std::to_string(g_client_options.block_cache_bytes >> 10));
  return db;
}

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK) {
      Die("sqlite prepare: " + sql + ": " + sqlite3_errmsg(db));
    }
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  sqlite3_stmt* get() const { return s_; }
  // Steps to the end; the rows seen, each column 0 touched.
  int64_t Drain() {
    int64_t rows = 0;
    int rc;
    while ((rc = sqlite3_step(s_)) == SQLITE_ROW) {
      ++rows;
      if (sqlite3_column_bytes(s_, 0) < 0) Die("sqlite column");
    }
    if (rc != SQLITE_DONE) Die("sqlite step");
    sqlite3_reset(s_);
    return rows;
  }

 private:
  sqlite3_stmt* s_ = nullptr;
};

const char kSqliteIndexes[] =
    "CREATE INDEX docs_k ON docs(json_extract(doc, '$.k'));"
    "CREATE INDEX docs_ab ON docs(json_extract(doc, '$.a'), json_extract(doc, '$.b'));"
    "CREATE UNIQUE INDEX docs_u ON docs(json_extract(doc, '$.u'))";

struct Engines {
  std::string root;
  std::unique_ptr<rockdoc::Client> client;
  std::unique_ptr<rockdoc::Collection> docs, pushes;
  rocksdb::DB* raw = nullptr;
  rocksdb::DB* raw_insert[2] = {nullptr, nullptr};  // the insert rows' databases
  sqlite3* sql = nullptr;

  ~Engines() {
    for (rocksdb::DB* db : raw_insert) {
      if (db != nullptr) {
        (void)db->Close();
        delete db;
      }
    }
    if (client) (void)client->Close();
    if (raw != nullptr) {
      (void)raw->Close();
      delete raw;
    }
    if (sql != nullptr) sqlite3_close(sql);
    if (!root.empty()) fs::remove_all(root);
  }
};

void InsertRockdoc(const rockdoc::Collection& c, const std::vector<Document>& docs, size_t from,
                   size_t to) {
  for (size_t i = from; i < to; i += kBatch) {
    std::vector<Document> batch(docs.begin() + i, docs.begin() + std::min(to, i + kBatch));
    auto r = Check(c.InsertMany(batch), "insertMany");
    if (!r.ok()) Die("insertMany: a write error");
  }
}

void InsertRaw(rocksdb::DB* db, const Data& d, size_t from, size_t to, bool indexes) {
  for (size_t i = from; i < to; i += kBatch) {
    rocksdb::WriteBatch wb;
    for (size_t j = i; j < std::min(to, i + kBatch); ++j) {
      wb.Put(d.record_keys[j], d.docs[j].bytes());
      if (indexes) AppendRawIndexEntries(d.docs[j], d.record_keys[j], &wb);
    }
    Check(db->Write(rocksdb::WriteOptions(), &wb), "raw write");
  }
}

void InsertSqlite(sqlite3* db, const std::string& table, const Data& d, size_t from, size_t to) {
  Stmt insert(db, "INSERT INTO " + table + " (id, doc) VALUES (?, ?)");
  for (size_t i = from; i < to; i += kBatch) {
    Exec(db, "BEGIN");
    for (size_t j = i; j < std::min(to, i + kBatch); ++j) {
      sqlite3_bind_int64(insert.get(), 1, d.docs[j].Get("_id").Int64());
      sqlite3_bind_text(insert.get(), 2, d.json[j].data(), static_cast<int>(d.json[j].size()),
                        SQLITE_STATIC);
      if (sqlite3_step(insert.get()) != SQLITE_DONE) Die("sqlite insert");
      sqlite3_reset(insert.get());
    }
    Exec(db, "COMMIT");
  }
}

// Waits until RocksDB has no flush or compaction running or pending (at most
// 10 minutes), so that no row is measured beside the load's background work,
// then prints the files per level: the sorted runs a read merges.
void Settle(const char* name, rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
  auto busy = [&] {
    uint64_t v = 0;
    for (const char* p : {"rocksdb.compaction-pending", "rocksdb.num-running-compactions",
                          "rocksdb.num-running-flushes", "rocksdb.mem-table-flush-pending"}) {
      if (db->GetIntProperty(cf, p, &v) && v != 0) return true;
    }
    return false;
  };
  auto t0 = std::chrono::steady_clock::now();
  while (busy() && std::chrono::steady_clock::now() - t0 < std::chrono::minutes(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("%s: files per level", name);
  for (int level = 0; level < 7; ++level) {
    std::string v;
    db->GetProperty(cf, "rocksdb.num-files-at-level" + std::to_string(level), &v);
    std::printf(" L%d=%s", level, v.c_str());
  }
  std::printf("\n");
}

void Load(const Data& d, Engines* e) {
  auto t0 = std::chrono::steady_clock::now();
  auto since = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // rockdoc
  {
    auto client = Check(rockdoc::Client::Open(e->root + "/rockdoc", g_client_options), "open");
    rockdoc::Collection c = client->GetDatabase("bench").GetCollection("docs");
    Check(c.CreateIndex(Json(R"({"k": 1})")), "createIndex");
    Check(c.CreateIndex(Json(R"({"a": 1, "b": 1})")), "createIndex");
    rockdoc::IndexOptions unique;
    unique.unique = true;
    Check(c.CreateIndex(Json(R"({"u": 1})"), unique), "createIndex");
    InsertRockdoc(c, d.docs, 0, d.docs.size());
    InsertRockdoc(client->GetDatabase("bench").GetCollection("pushes"), d.push_docs, 0,
                  d.push_docs.size());
    if (!client->Close().ok()) Die("close");
  }
  e->client = Check(rockdoc::Client::Open(e->root + "/rockdoc", g_client_options), "reopen");
  e->docs = std::make_unique<rockdoc::Collection>(
      e->client->GetDatabase("bench").GetCollection("docs"));
  e->pushes = std::make_unique<rockdoc::Collection>(
      e->client->GetDatabase("bench").GetCollection("pushes"));
  std::printf("loaded rockdoc: %.1f s\n", since());
  // raw
  t0 = std::chrono::steady_clock::now();
  {
    rocksdb::DB* db = OpenRaw(e->root + "/raw");
    InsertRaw(db, d, 0, d.docs.size(), true);
    rocksdb::WriteBatch wb;
    for (const Document& p : d.push_docs) wb.Put(RawRecordKey(kRawPush, p), p.bytes());
    Check(db->Write(rocksdb::WriteOptions(), &wb), "raw write");
    Check(db->Flush(rocksdb::FlushOptions()), "raw flush");
    Check(db->Close(), "raw close");
    delete db;
  }
  e->raw = OpenRaw(e->root + "/raw");
  std::printf("loaded raw RocksDB: %.1f s\n", since());
  // SQLite: the indexes first, as rockdoc's and raw's are maintained on insert.
  t0 = std::chrono::steady_clock::now();
  e->sql = OpenSqlite(e->root + "/sqlite.db");
  Exec(e->sql, "CREATE TABLE docs (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)");
  Exec(e->sql, kSqliteIndexes);
  InsertSqlite(e->sql, "docs", d, 0, d.docs.size());
  Exec(e->sql, "CREATE TABLE pushes (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)");
  {
    Stmt insert(e->sql, "INSERT INTO pushes (id, doc) VALUES (?, ?)");
    for (const Document& p : d.push_docs) {
      std::string json = rockdoc::ToJson(p, rockdoc::JsonFormat::kRelaxed);
      sqlite3_bind_int64(insert.get(), 1, p.Get("_id").Int64());
      sqlite3_bind_text(insert.get(), 2, json.data(), static_cast<int>(json.size()),
                        SQLITE_TRANSIENT);
      if (sqlite3_step(insert.get()) != SQLITE_DONE) Die("sqlite insert");
      sqlite3_reset(insert.get());
    }
  }
  Exec(e->sql, "ANALYZE");
  std::printf("loaded SQLite: %.1f s\n", since());
  const auto& rocks =
      rockdoc::internal::ClientAccess::EngineOf(e->client->GetDatabase("bench"))->rocks();
  Settle("rockdoc", rocks.db, rocks.data_cf);
  Settle("raw RocksDB", e->raw, e->raw->DefaultColumnFamily());
}

// ---- measuring ----

// One engine's side of a row: `op(rng)` does one operation and returns the
// items it counts (1 per query; documents for scans and inserts; bytes for
// JSON); `setup` runs before each timed run (untimed).
struct Side {
  Side(std::string e, std::function<int64_t(std::mt19937_64&)> o, std::function<void()> s = {})
      : engine(std::move(e)), op(std::move(o)), setup(std::move(s)) {}
  std::string engine;
  std::function<int64_t(std::mt19937_64&)> op;
  std::function<void()> setup;
};

struct Row {
  std::string name;
  std::string unit;
  std::vector<Side> sides;  // [0] is rockdoc
  double goal_raw = 0, goal_sqlite = 0;
  // A run ends after this many operations even within the time (inserts:
  // the documents a run may use).
  int64_t max_ops = INT64_MAX;
  double scale = 1;  // rates printed divided by it (bytes -> MB)
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double TimedRate(Side& side, uint64_t seed, double seconds, int64_t max_ops) {
  if (side.setup) side.setup();
  std::mt19937_64 rng(seed);
  int64_t items = 0, ops = 0;
  auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    items += side.op(rng);
    ++ops;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < seconds && ops < max_ops);
  return items / elapsed;
}

void RunRow(Row& row, const Options& o) {
  if (!o.only.empty()) {  // one engine alone, for a profiler: its rate, no ratios
    for (Side& side : row.sides) {
      if (side.engine != o.only) continue;
      std::vector<double> rates;
      for (int rep = 0; rep < o.reps; ++rep) {
        rates.push_back(TimedRate(side, 1000 + rep, o.seconds, row.max_ops) / row.scale);
      }
      std::printf("%-13s %-9s | %-8s %10.0f\n", row.name.c_str(), row.unit.c_str(),
                  side.engine.c_str(), Median(rates));
    }
    std::fflush(stdout);
    return;
  }
  const size_t engines = row.sides.size();
  // A warm-up run of each engine first (not counted; not for the insert rows,
  // whose setup empties their collection): otherwise whichever engine runs
  // first pays for filling the caches the row touches.
  // Two seconds each: a block cache fills at about 100k blocks a second.
  for (Side& side : row.sides) {
    if (!side.setup) TimedRate(side, 999, std::max(2.0, o.seconds), row.max_ops);
  }
  std::vector<std::vector<double>> rates(engines);
  for (int rep = 0; rep < o.reps; ++rep) {
    for (size_t k = 0; k < engines; ++k) {
      size_t e = (k + rep) % engines;  // rotated order
      rates[e].push_back(TimedRate(row.sides[e], 1000 + rep, o.seconds, row.max_ops) / row.scale);
    }
  }
  std::printf("%-13s %-9s", row.name.c_str(), row.unit.c_str());
  for (size_t e = 0; e < engines; ++e) {
    auto [lo, hi] = std::minmax_element(rates[e].begin(), rates[e].end());
    std::printf(" | %-8s %10.0f [%.0f-%.0f]", row.sides[e].engine.c_str(), Median(rates[e]), *lo,
                *hi);
  }
  std::printf("\n");
  // With --ab: the "before" side's own ratio to SQLite, beside rockdoc's.
  size_t before = engines, sqlite = engines;
  for (size_t e = 0; e < engines; ++e) {
    if (row.sides[e].engine == "before") before = e;
    if (row.sides[e].engine == "sqlite") sqlite = e;
  }
  if (before < engines && sqlite < engines) {
    std::vector<double> ratios;
    for (int rep = 0; rep < o.reps; ++rep)
      ratios.push_back(rates[before][rep] / rates[sqlite][rep]);
    auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
    std::printf("%-23s before/sqlite   %6.2fx [%.2f-%.2f]\n", "", Median(ratios), *lo, *hi);
  }
  for (size_t e = 1; e < engines; ++e) {
    std::vector<double> ratios;
    for (int rep = 0; rep < o.reps; ++rep) ratios.push_back(rates[0][rep] / rates[e][rep]);
    auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
    const std::string& engine = row.sides[e].engine;
    double goal = engine == "sqlite" ? row.goal_sqlite
                  : engine == "raw" || engine == "simdjson" ? row.goal_raw
                                                            : 0;
    std::printf("%-23s rockdoc/%-8s %6.2fx [%.2f-%.2f]", "", row.sides[e].engine.c_str(),
                Median(ratios), *lo, *hi);
    if (goal > 0) std::printf("  goal >= %.2f: %s", goal, Median(ratios) >= goal ? "met" : "MISSED");
    std::printf("\n");
  }
  std::fflush(stdout);
}

// ---- the rows ----

int64_t DrainCursor(rockdoc::Cursor cursor) {
  int64_t n = 0;
  while (cursor.Next()) {
    if (cursor.document().size() == 0) Die("empty document");
    ++n;
  }
  if (!cursor.status().ok()) Die("cursor: " + cursor.status().ToString());
  return n;
}

Document IntFilter(const char* field, int64_t v) {
  BsonBuilder b;
  b.AppendInt64(field, v);
  return std::move(b).Build();
}

Document RangeFilter(int64_t lo, int64_t hi) {
  BsonBuilder b;
  b.OpenDocument("a").AppendInt32("$gte", static_cast<int32_t>(lo)).AppendInt32(
      "$lt", static_cast<int32_t>(hi)).Close();
  return std::move(b).Build();
}

std::string IndexKey(uint32_t prefix, int64_t v, bool int32) {
  rockdoc::keystring::Builder kb;
  BsonBuilder b;
  if (int32) {
    b.AppendInt32("v", static_cast<int32_t>(v));
  } else {
    b.AppendInt64("v", v);
  }
  Document d = std::move(b).Build();
  kb.Append(d.Get("v"));
  return BE32(prefix) + std::string(kb.bytes());
}

// Raw: the index entries of a in [lo, hi); `fetch` Gets each record.
int64_t RawRange(rocksdb::DB* db, int64_t lo, int64_t hi, bool fetch, bool decode) {
  const std::string start = IndexKey(kRawIndexAB, lo, true);
  const std::string end = IndexKey(kRawIndexAB, hi, true);
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  int64_t n = 0;
  rocksdb::PinnableSlice value;
  std::string record;
  for (it->Seek(start); it->Valid(); it->Next()) {
    rocksdb::Slice key = it->key();
    rocksdb::Slice v = it->value();
    const size_t id_len = static_cast<unsigned char>(v[0]);
    if (fetch) {
      record = BE32(kRawRecords);
      record.append(key.data() + key.size() - id_len, id_len);
      value.Reset();
      Check(db->Get(rocksdb::ReadOptions(), db->DefaultColumnFamily(), record, &value), "get");
    } else if (decode) {
      // What a covered plan needs: the two values back from the key.
      BsonBuilder out;
      rockdoc::Status s = rockdoc::keystring::Decode(
          std::string_view(key.data() + 4, key.size() - 4 - id_len),
          std::string_view(v.data() + 1, v.size() - 1), 0, {"a", "b"}, &out);
      if (!s.ok() || std::move(out).Build().size() == 0) Die("decode");
    }
    ++n;
  }
  Check(it->status(), "iterate");
  return n;
}

std::vector<Row> MakeRows(const Data& d, Engines& e) {
  const int64_t n = d.n;
  auto uniform = [n](std::mt19937_64& rng, int64_t width = 0) {
    return static_cast<int64_t>(rng() % static_cast<uint64_t>(n - width));
  };
  std::vector<Row> rows;
  auto* sql = e.sql;
  auto* raw = e.raw;
  const rockdoc::Collection& docs = *e.docs;
  // The sides of a query with exactly one result: rockdoc's find of
  // filter(v), SQLite's statement `select` with v bound, v uniform.
  auto one_result_rockdoc = [&docs, uniform](std::string name,
                                             std::function<Document(int64_t)> filter) {
    return Side("rockdoc", [&docs, uniform, name, filter](std::mt19937_64& rng) {
      if (DrainCursor(Check(docs.Find(filter(uniform(rng))), "find")) != 1) {
        Die(name + ": not 1 result");
      }
      return int64_t{1};
    });
  };
  auto one_result_sqlite = [sql, uniform](std::string name, const char* select) {
    auto stmt = std::make_shared<Stmt>(sql, select);
    return Side("sqlite", [stmt, uniform, name](std::mt19937_64& rng) {
      sqlite3_bind_int64(stmt->get(), 1, uniform(rng));
      if (stmt->Drain() != 1) Die("sqlite " + name + ": not 1 result");
      return int64_t{1};
    });
  };

  {  // find_id
    auto stmt = std::make_shared<Stmt>(sql, "SELECT doc FROM docs WHERE id = ?");
    rows.push_back({"find_id", "queries/s",
                    {{"rockdoc",
                      [&docs, uniform](std::mt19937_64& rng) {
                        auto r = Check(docs.FindOne(IntFilter("_id", uniform(rng))), "findOne");
                        if (!r) Die("findOne: not found");
                        return int64_t{1};
                      }},
                     {"raw",
                      [raw, uniform](std::mt19937_64& rng) {
                        BsonBuilder b;
                        b.AppendInt64("", uniform(rng));
                        Document id = std::move(b).Build();
                        std::string key = rockdoc::internal::RecordKey(
                            kRawRecords, rockdoc::keystring::EncodeValue(*id.begin()));
                        rocksdb::PinnableSlice v;
                        Check(raw->Get(rocksdb::ReadOptions(), raw->DefaultColumnFamily(), key, &v),
                              "get");
                        return int64_t{1};
                      }},
                     {"sqlite",
                      [stmt, uniform](std::mt19937_64& rng) {
                        sqlite3_bind_int64(stmt->get(), 1, uniform(rng));
                        if (stmt->Drain() != 1) Die("sqlite: not found");
                        return int64_t{1};
                      }},
                     // rockdoc without the planner and the cursor: what
                     // they cost is rockdoc/FindById below 1.
                     {"FindById",
                      [&docs, uniform](std::mt19937_64& rng) {
                        Document f = IntFilter("_id", uniform(rng));
                        if (!Check(docs.FindById(f.Get("_id")), "findById")) Die("not found");
                        return int64_t{1};
                      }}},
                    0.95, 1.5});
  }
  {  // index_eq
    rows.push_back(
        {"index_eq",
         "queries/s",
         {one_result_rockdoc("index_eq", [](int64_t v) { return IntFilter("k", v); }),
          {"raw",
           [raw, uniform](std::mt19937_64& rng) {
             // Every entry of the value, as the query returns every match:
             // the scan reads on to the first key past the value.
             const std::string prefix = IndexKey(kRawIndexK, uniform(rng), false);
             std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator(rocksdb::ReadOptions()));
             int64_t n = 0;
             for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
               const size_t id_len = static_cast<unsigned char>(it->value()[0]);
               std::string record = BE32(kRawRecords);
               record.append(it->key().data() + it->key().size() - id_len, id_len);
               rocksdb::PinnableSlice v;
               Check(raw->Get(rocksdb::ReadOptions(), raw->DefaultColumnFamily(), record, &v),
                     "get");
               ++n;
             }
             if (n != 1) Die("raw index_eq: not 1 result");
             return int64_t{1};
           }},
          one_result_sqlite("index_eq", "SELECT doc FROM docs WHERE json_extract(doc, '$.k') = ?")},
         0.9,
         1.2});
  }
  // unique_eq: equality on the unique index {u: 1}
  rows.push_back(
      {"unique_eq",
       "queries/s",
       {one_result_rockdoc("unique_eq", [](int64_t v) { return IntFilter("u", v); }),
        one_result_sqlite("unique_eq", "SELECT doc FROM docs WHERE json_extract(doc, '$.u') = ?")},
       0,
       1.2});
  // index_eq_2: two indexes apply, {k: 1} and {a: 1, b: 1}; a planner picks {k: 1}
  rows.push_back({"index_eq_2",
                  "queries/s",
                  {one_result_rockdoc("index_eq_2",
                                      [](int64_t v) {
                                        BsonBuilder b;
                                        b.AppendInt64("k", v);
                                        b.OpenDocument("a").AppendInt32("$gte", 0).Close();
                                        return std::move(b).Build();
                                      }),
                   one_result_sqlite("index_eq_2",
                                     "SELECT doc FROM docs WHERE json_extract(doc, '$.k') = ? "
                                     "AND json_extract(doc, '$.a') >= 0")},
                  0,
                  1.2});
  // range_100, covered_100, count_10k: a range of a.
  auto range_row = [&](const char* name, int64_t width, int mode, double goal_raw,
                       double goal_sqlite) {
    // mode 0: documents; 1: covered; 2: count.
    std::string select = mode == 0   ? "SELECT doc"
                         : mode == 1 ? "SELECT json_extract(doc, '$.a'), json_extract(doc, '$.b')"
                                     : "SELECT COUNT(*)";
    auto stmt = std::make_shared<Stmt>(
        sql, select + " FROM docs WHERE json_extract(doc, '$.a') >= ? AND json_extract(doc, '$.a') < ?");
    auto options = std::make_shared<rockdoc::FindOptions>();
    if (mode == 1) options->projection = Json(R"({"_id": 0, "a": 1, "b": 1})");
    const int64_t expect = mode == 2 ? 1 : width;
    rows.push_back(
        {name, "queries/s",
         {{"rockdoc",
           [&docs, uniform, width, mode, options](std::mt19937_64& rng) {
             int64_t x = uniform(rng, width);
             if (mode == 2) {
               if (Check(docs.CountDocuments(RangeFilter(x, x + width)), "count") != width) {
                 Die("count: wrong");
               }
             } else if (DrainCursor(Check(docs.Find(RangeFilter(x, x + width), *options), "find")) !=
                        width) {
               Die("range: wrong count");
             }
             return int64_t{1};
           }},
          {"raw",
           [raw, uniform, width, mode](std::mt19937_64& rng) {
             int64_t x = uniform(rng, width);
             if (RawRange(raw, x, x + width, mode == 0, mode == 1) != width) Die("raw range");
             return int64_t{1};
           }},
          {"sqlite",
           [stmt, uniform, width, expect](std::mt19937_64& rng) {
             int64_t x = uniform(rng, width);
             sqlite3_bind_int64(stmt->get(), 1, x);
             sqlite3_bind_int64(stmt->get(), 2, x + width);
             if (stmt->Drain() != expect) Die("sqlite range");
             return int64_t{1};
           }}},
         goal_raw, goal_sqlite});
  };
  range_row("range_100", 100, 0, 0, 1.0);
  range_row("covered_100", 100, 1, 0.8, 1.0);
  {  // in_100
    std::string sql_text = "SELECT doc FROM docs WHERE id IN (?";
    for (int i = 1; i < 100; ++i) sql_text += ", ?";
    auto stmt = std::make_shared<Stmt>(sql, sql_text + ")");
    auto ids = [uniform](std::mt19937_64& rng) {
      std::vector<int64_t> v;
      while (v.size() < 100) {
        v.push_back(uniform(rng));
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
      }
      std::shuffle(v.begin(), v.end(), rng);
      return v;
    };
    rows.push_back(
        {"in_100", "docs/s",
         {{"rockdoc",
           [&docs, ids](std::mt19937_64& rng) {
             BsonBuilder b;
             b.OpenDocument("_id").OpenArray("$in");
             for (int64_t id : ids(rng)) b.AppendInt64("", id);
             b.Close().Close();
             if (DrainCursor(Check(docs.Find(std::move(b).Build()), "find")) != 100) Die("in_100");
             return int64_t{100};
           }},
          {"raw",
           [raw, ids](std::mt19937_64& rng) {
             std::vector<std::string> keys;
             for (int64_t id : ids(rng)) {
               BsonBuilder b;
               b.AppendInt64("", id);
               Document d = std::move(b).Build();
               keys.push_back(rockdoc::internal::RecordKey(
                   kRawRecords, rockdoc::keystring::EncodeValue(*d.begin())));
             }
             std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
             std::vector<rocksdb::PinnableSlice> values(keys.size());
             std::vector<rocksdb::Status> statuses(keys.size());
             raw->MultiGet(rocksdb::ReadOptions(), raw->DefaultColumnFamily(), slices.size(),
                           slices.data(), values.data(), statuses.data());
             for (const auto& s : statuses) Check(s, "multiget");
             return int64_t{100};
           }},
          {"sqlite",
           [stmt, ids](std::mt19937_64& rng) {
             int i = 1;
             for (int64_t id : ids(rng)) sqlite3_bind_int64(stmt->get(), i++, id);
             if (stmt->Drain() != 100) Die("sqlite in_100");
             return int64_t{100};
           }}},
         0.9, 1.0});
  }
  range_row("count_10k", 10000, 2, 0.9, 1.0);
  {  // scan_filter
    auto stmt = std::make_shared<Stmt>(
        sql, "SELECT COUNT(*) FROM docs WHERE json_extract(doc, '$.status') = 'active' AND "
             "json_extract(doc, '$.b') < 100");
    auto filter = std::make_shared<Document>(Json(R"({"status": "active", "b": {"$lt": 100}})"));
    rows.push_back(
        {"scan_filter", "docs/s",
         {{"rockdoc",
           [&docs, filter, n](std::mt19937_64&) {
             if (Check(docs.CountDocuments(*filter), "count") <= 0) Die("scan: none");
             return n;
           }},
          {"raw",
           [raw, n](std::mt19937_64&) {
             rocksdb::ReadOptions ro;
             const std::string lo = BE32(kRawRecords), hi = BE32(kRawRecords + 1);
             rocksdb::Slice upper(hi);
             ro.iterate_upper_bound = &upper;
             std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator(ro));
             int64_t matched = 0;
             for (it->Seek(lo); it->Valid(); it->Next()) {
               rockdoc::DocumentView doc(reinterpret_cast<const uint8_t*>(it->value().data()));
               rockdoc::Element status = doc.Get("status");
               rockdoc::Element b = doc.Get("b");
               if (status.ok() && status.String() == "active" && b.ok() && b.Int32() < 100) ++matched;
             }
             if (matched <= 0) Die("raw scan: none");
             return n;
           }},
          {"sqlite",
           [stmt, n](std::mt19937_64&) {
             stmt->Drain();
             return n;
           }}},
         0, 0, 2});
  }
  {  // update_inc
    auto stmt = std::make_shared<Stmt>(
        sql, "UPDATE docs SET doc = json_set(doc, '$.n', json_extract(doc, '$.n') + 1) WHERE id = ?");
    auto update = std::make_shared<Document>(Json(R"({"$inc": {"n": 1}})"));
    rows.push_back(
        {"update_inc", "updates/s",
         {{"rockdoc",
           [&docs, uniform, update](std::mt19937_64& rng) {
             auto r = Check(docs.UpdateOne(IntFilter("_id", uniform(rng)), *update), "updateOne");
             if (r.modified_count != 1) Die("updateOne: not modified");
             return int64_t{1};
           }},
          {"raw",
           [raw, uniform](std::mt19937_64& rng) {
             BsonBuilder b;
             b.AppendInt64("", uniform(rng));
             Document id = std::move(b).Build();
             std::string key = rockdoc::internal::RecordKey(
                 kRawRecords, rockdoc::keystring::EncodeValue(*id.begin()));
             std::string v;
             Check(raw->Get(rocksdb::ReadOptions(), key, &v), "get");
             Check(raw->Put(rocksdb::WriteOptions(), key, v), "put");
             return int64_t{1};
           }},
          {"sqlite",
           [stmt, uniform](std::mt19937_64& rng) {
             sqlite3_bind_int64(stmt->get(), 1, uniform(rng));
             stmt->Drain();
             return int64_t{1};
           }}},
         0, 0});
  }
  {  // push_sort
    auto stmt = std::make_shared<Stmt>(
        sql,
        "UPDATE pushes SET doc = json_set(doc, '$.log', (SELECT json_group_array(json(v)) FROM ("
        "SELECT v, ts FROM (SELECT value AS v, json_extract(value, '$.ts') AS ts "
        "FROM json_each(pushes.doc, '$.log') UNION ALL SELECT ?2, ?3) "
        "ORDER BY ts DESC LIMIT 1000) ORDER BY ts)) WHERE id = ?1");
    auto ts = std::make_shared<int64_t>(kLogLength);
    rows.push_back(
        {"push_sort", "updates/s",
         {{"rockdoc",
           [&e, ts](std::mt19937_64& rng) {
             BsonBuilder b;
             b.OpenDocument("$push").OpenDocument("log").OpenArray("$each");
             b.OpenDocument("").AppendInt64("ts", (*ts)++).AppendString("v", "0123456789abcdef").Close();
             b.Close();
             b.OpenDocument("$sort").AppendInt32("ts", 1).Close();
             b.AppendInt32("$slice", -kLogLength);
             b.Close().Close();
             auto r = Check(e.pushes->UpdateOne(IntFilter("_id", static_cast<int64_t>(rng() % kPushDocs)),
                                                std::move(b).Build()),
                            "push");
             if (r.modified_count != 1) Die("push: not modified");
             return int64_t{1};
           }},
          {"raw",
           [raw](std::mt19937_64& rng) {
             BsonBuilder b;
             b.AppendInt64("", static_cast<int64_t>(rng() % kPushDocs));
             Document id = std::move(b).Build();
             std::string key =
                 rockdoc::internal::RecordKey(kRawPush, rockdoc::keystring::EncodeValue(*id.begin()));
             std::string v;
             Check(raw->Get(rocksdb::ReadOptions(), key, &v), "get");
             Check(raw->Put(rocksdb::WriteOptions(), key, v), "put");
             return int64_t{1};
           }},
          {"sqlite",
           [stmt, ts](std::mt19937_64& rng) {
             std::string entry =
                 "{\"ts\":" + std::to_string((*ts)++) + ",\"v\":\"0123456789abcdef\"}";
             sqlite3_bind_int64(stmt->get(), 1, static_cast<int64_t>(rng() % kPushDocs));
             sqlite3_bind_text(stmt->get(), 2, entry.data(), static_cast<int>(entry.size()),
                               SQLITE_TRANSIENT);
             sqlite3_bind_int64(stmt->get(), 3, *ts - 1);
             stmt->Drain();
             return int64_t{1};
           }}},
         0.5, 0});
  }
  // insert_0, insert_2: into fresh collections/tables, recreated before
  // each run (untimed); a run inserts at most min(n, 200,000) documents.
  const int64_t insert_docs = std::min<int64_t>(n, 200000) / kBatch * kBatch;
  for (bool indexes : {false, true}) {
    auto next = std::make_shared<size_t>(0);
    auto coll = std::make_shared<std::unique_ptr<rockdoc::Collection>>();
    rocksdb::DB** rawdb = &e.raw_insert[indexes ? 1 : 0];
    const std::string tag = indexes ? "2" : "0";
    const std::string raw_path = e.root + "/raw-insert-" + tag;
    rows.push_back(
        {"insert_" + tag, "docs/s",
         {{"rockdoc",
           [&d, next, coll](std::mt19937_64&) {
             InsertRockdoc(**coll, d.docs, *next, *next + kBatch);
             *next += kBatch;
             return int64_t{kBatch};
           },
           [&e, next, coll, tag, indexes] {
             rockdoc::Database db = e.client->GetDatabase("bench");
             if (!db.DropCollection("insert_" + tag).ok()) Die("drop");
             if (!db.CreateCollection("insert_" + tag).ok()) Die("create");
             *coll = std::make_unique<rockdoc::Collection>(db.GetCollection("insert_" + tag));
             if (indexes) {
               Check((*coll)->CreateIndex(Json(R"({"k": 1})")), "createIndex");
               Check((*coll)->CreateIndex(Json(R"({"a": 1, "b": 1})")), "createIndex");
             }
             *next = 0;
           }},
          {"raw",
           [&d, next, rawdb, indexes](std::mt19937_64&) {
             InsertRaw(*rawdb, d, *next, *next + kBatch, indexes);
             *next += kBatch;
             return int64_t{kBatch};
           },
           [next, rawdb, raw_path] {
             if (*rawdb != nullptr) {
               (void)(*rawdb)->Close();
               delete *rawdb;
             }
             fs::remove_all(raw_path);
             *rawdb = OpenRaw(raw_path);
             *next = 0;
           }},
          {"sqlite",
           [&d, sql, next, tag](std::mt19937_64&) {
             InsertSqlite(sql, "insert_" + tag, d, *next, *next + kBatch);
             *next += kBatch;
             return int64_t{kBatch};
           },
           [sql, next, tag, indexes] {
             Exec(sql, "DROP TABLE IF EXISTS insert_" + tag);
             Exec(sql, "CREATE TABLE insert_" + tag + " (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)");
             if (indexes) {
               Exec(sql, "CREATE INDEX insert_2_k ON insert_2(json_extract(doc, '$.k'));"
                         "CREATE INDEX insert_2_ab ON insert_2(json_extract(doc, '$.a'), "
                         "json_extract(doc, '$.b'))");
             }
             *next = 0;
           }}},
         indexes ? 0 : 0.8, indexes ? 2.0 : 0, insert_docs / kBatch});
  }
  {  // index_build
    auto build = std::make_shared<uint32_t>(kRawIndexC);
    rows.push_back(
        {"index_build", "docs/s",
         {{"rockdoc",
           [&docs, n](std::mt19937_64&) {
             Check(docs.CreateIndex(Json(R"({"c": 1})")), "createIndex");
             return n;
           },
           [&docs] {
             rockdoc::Status s = docs.DropIndex("c_1");
             if (!s.ok() && s.code() != rockdoc::ErrorCode::kIndexNotFound) Die("dropIndex");
           }},
          {"raw",
           [raw, n, build, root = e.root](std::mt19937_64&) {
             // What a sorted bulk load of the same entries costs: every
             // record read, its entry built, the entries sorted, written to
             // one table file and ingested.
             const uint32_t prefix = (*build)++;
             std::vector<std::pair<std::string, std::string>> entries;
             entries.reserve(static_cast<size_t>(n));
             rocksdb::ReadOptions ro;
             const std::string lo = BE32(kRawRecords), hi = BE32(kRawRecords + 1);
             rocksdb::Slice upper(hi);
             ro.iterate_upper_bound = &upper;
             ro.fill_cache = false;
             ro.readahead_size = size_t{2} << 20;
             std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator(ro));
             rockdoc::keystring::Builder kb;
             for (it->Seek(lo); it->Valid(); it->Next()) {
               rockdoc::DocumentView doc(reinterpret_cast<const uint8_t*>(it->value().data()));
               std::string_view id_key(it->key().data() + 4, it->key().size() - 4);
               kb.Reset();
               kb.Append(doc.Get("c"));
               std::string key = BE32(prefix);
               key += kb.bytes();
               key += id_key;
               std::string value(1, static_cast<char>(id_key.size()));
               value += kb.type_bits();
               entries.emplace_back(std::move(key), std::move(value));
             }
             Check(it->status(), "scan");
             std::sort(entries.begin(), entries.end());
             const std::string file = root + "/raw-index-" + std::to_string(prefix) + ".sst";
             rocksdb::Options options = rockdoc::internal::MakeRocksOptions(g_client_options);
             rocksdb::SstFileWriter writer(rocksdb::EnvOptions(options), options);
             Check(writer.Open(file), "sst open");
             for (const auto& [k, v] : entries) Check(writer.Put(k, v), "sst put");
             Check(writer.Finish(), "sst finish");
             rocksdb::IngestExternalFileOptions io;
             io.move_files = true;
             Check(raw->IngestExternalFile({file}, io), "ingest");
             return static_cast<int64_t>(entries.size());
           },
           [] {}},
          {"sqlite",
           [sql, n](std::mt19937_64&) {
             Exec(sql, "CREATE INDEX docs_c ON docs(json_extract(doc, '$.c'))");
             return n;
           },
           [sql] { Exec(sql, "DROP INDEX IF EXISTS docs_c"); }}},
         0.8, 1.0, 1});
  }
  {  // json_to_bson
    auto padded = std::make_shared<std::vector<simdjson::padded_string>>();
    for (const std::string& j : d.json) padded->emplace_back(j);
    auto parser = std::make_shared<od::parser>();
    const int64_t batch = 1000;
    rows.push_back(
        {"json_to_bson", "MB/s",
         {{"rockdoc",  // FromPaddedJson over the texts simdjson reads: no copy
           [&d, padded, batch](std::mt19937_64& rng) {
             size_t from = rng() % (d.json.size() - std::min<size_t>(d.json.size() - 1, batch));
             int64_t bytes = 0;
             for (size_t i = from; i < from + batch && i < d.json.size(); ++i) {
               bytes += static_cast<int64_t>(d.json[i].size());
               const simdjson::padded_string& text = (*padded)[i];
               if (!rockdoc::FromPaddedJson(std::string_view(text.data(), text.size())).ok()) {
                 Die("FromPaddedJson");
               }
             }
             return bytes;
           }},
          {"simdjson",
           [&d, padded, parser, batch](std::mt19937_64& rng) {
             size_t from = rng() % (d.json.size() - std::min<size_t>(d.json.size() - 1, batch));
             int64_t bytes = 0;
             for (size_t i = from; i < from + batch && i < d.json.size(); ++i) {
               bytes += static_cast<int64_t>(d.json[i].size());
               od::document doc = parser->iterate((*padded)[i]).value_unsafe();
               if (WalkObject(doc.get_object().value_unsafe()) == 0) Die("walk");
             }
             return bytes;
           }},
          {"FromJson",  // rockdoc from a std::string_view alone: a padded copy first
           [&d, batch](std::mt19937_64& rng) {
             size_t from = rng() % (d.json.size() - std::min<size_t>(d.json.size() - 1, batch));
             int64_t bytes = 0;
             for (size_t i = from; i < from + batch && i < d.json.size(); ++i) {
               bytes += static_cast<int64_t>(d.json[i].size());
               if (!rockdoc::FromJson(d.json[i]).ok()) Die("FromJson");
             }
             return bytes;
           }}},
         0.5, 0, INT64_MAX, 1e6});
  }
  return rows;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= s.size()) {
    size_t comma = s.find(',', from);
    if (comma == std::string::npos) comma = s.size();
    if (comma > from) out.push_back(s.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  if (const char* env = std::getenv("ROCKDOC_BENCH_DOCS")) o.docs = std::atoll(env);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--docs") {
      o.docs = std::atoll(value().c_str());
    } else if (arg == "--reps") {
      o.reps = std::atoi(value().c_str());
    } else if (arg == "--seconds") {
      o.seconds = std::atof(value().c_str());
    } else if (arg == "--rows") {
      o.rows = Split(value());
    } else if (arg == "--dir") {
      o.dir = value();
    } else if (arg == "--only") {
      o.only = value();
    } else if (arg == "--ab") {
      o.ab = value();
      if (!LeverSwitch(o.ab)) {
        Die("--ab: unknown lever " + o.ab + " (plan_cache, unique_get, record_cache)");
      }
    } else if (arg == "--warm-record-cache") {
      // Every document read once by _id after the load, so that the rows
      // meet a warm record cache as they meet a warm block cache.
      o.warm_record_cache = true;
    } else if (arg == "--record-cache-mib") {
      // ClientOptions::record_cache_bytes (0: off).
      const long long mib = std::atoll(value().c_str());
      if (mib < 0) Die("--record-cache-mib must not be negative");
      g_client_options.record_cache_bytes = static_cast<size_t>(mib) << 20;
    } else if (arg == "--no-statistics") {
      // ClientOptions::collect_statistics off: what the query statistics
      // cost rockdoc's reads, by two runs side by side.
      g_client_options.collect_statistics = false;
    } else if (arg == "--encrypt") {
      // ClientOptions::encryption_key (a fixed key): what encryption at
      // rest costs, as rockdoc's ratios to SQLite and raw RocksDB (which
      // stay plain) in a run with it against a run without.
      g_client_options.encryption_key = std::string(32, 'k');
    } else if (arg == "--cache-mib") {
      const long long mib = std::atoll(value().c_str());
      if (mib < 1) Die("--cache-mib must be positive");
      g_client_options.block_cache_bytes = static_cast<size_t>(mib) << 20;
    } else {
      Die("unknown argument " + arg +
          " (--docs N, --reps R, --seconds S, --rows a,b,..., --dir D, --cache-mib M, --only E,"
          " --no-statistics, --ab LEVER, --record-cache-mib M, --warm-record-cache, --encrypt)");
    }
  }
  if (o.docs < 20000) Die("--docs must be at least 20,000");
  if (o.reps < 1 || o.seconds <= 0) Die("--reps and --seconds must be positive");
  o.docs = o.docs / kBatch * kBatch;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress shows as it happens, even into a file
  Options o = ParseArgs(argc, argv);
  std::printf("compare_bench: %lld documents, %d repetitions of %.2f s per engine and row, SQLite %s\n",
              static_cast<long long>(o.docs), o.reps, o.seconds, sqlite3_libversion());
  std::printf("block cache and SQLite page cache: %zu MiB each; rockdoc's record cache %zu MiB\n",
              g_client_options.block_cache_bytes >> 20,
              g_client_options.record_cache_bytes >> 20);
  Data d = MakeData(o.docs);
  std::printf("documents: %.0f B of JSON each on average\n",
              static_cast<double>(d.json_bytes) / static_cast<double>(d.n));
  Engines e;
  std::string tmpl = o.dir + "/rockdoc-compare-bench-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) Die("mkdtemp under " + o.dir);
  e.root = tmpl;
  Load(d, &e);
  if (o.warm_record_cache) {
    const auto start = std::chrono::steady_clock::now();
    for (int64_t id = 0; id < d.n; ++id) {
      const Document filter = IntFilter("_id", id);
      if (!Check(e.docs->FindById(*filter.begin()), "warm")) Die("warm: not found");
    }
    std::printf("record cache warmed: %.1f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  // Past the load only the insert rows and json_to_bson use the documents
  // themselves, the first 200,000 at most: the rest goes, so that at 10M
  // documents the page cache holds the databases, not the generator's copy.
  const size_t keep = static_cast<size_t>(std::min<int64_t>(d.n, 200000));
  d.docs.resize(keep);
  d.docs.shrink_to_fit();
  d.json.resize(keep);
  d.json.shrink_to_fit();
  d.record_keys.resize(keep);
  d.record_keys.shrink_to_fit();
  std::vector<Row> rows = MakeRows(d, e);
  if (!o.ab.empty()) {
    std::function<void(bool)> lever = LeverSwitch(o.ab);
    for (Row& row : rows) {
      auto op = row.sides[0].op;
      row.sides.emplace_back(
          "before",
          [op, lever](std::mt19937_64& rng) {
            lever(false);
            int64_t n = op(rng);
            lever(true);
            return n;
          },
          row.sides[0].setup);
    }
  }
  for (const std::string& name : o.rows) {
    if (std::none_of(rows.begin(), rows.end(), [&](const Row& r) { return r.name == name; })) {
      Die("unknown row " + name);
    }
  }
  std::printf("\n%-13s %-9s | engine: median [min-max] of the repetitions\n", "row", "unit");
  for (Row& row : rows) {
    if (!o.rows.empty() && std::find(o.rows.begin(), o.rows.end(), row.name) == o.rows.end()) {
      continue;
    }
    RunRow(row, o);
  }
  // Memory: the process's (all three engines) and the record cache's share.
  if (rockdoc::internal::RecordCache* cache =
          rockdoc::internal::ClientAccess::EngineOf(*e.client)->record_cache()) {
    const auto c = cache->counters();
    std::printf("record cache: %lld entries, %.1f MiB charged, %lld hits, %lld misses\n",
                static_cast<long long>(c.entries), static_cast<double>(c.bytes) / (1 << 20),
                static_cast<long long>(c.hits), static_cast<long long>(c.misses));
  }
  std::printf("resident memory of the process (every engine): %.0f MiB\n",
              rockdoc::bench::ResidentMiB());
  return 0;
}

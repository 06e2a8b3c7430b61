// bench/aggregate_bench.cc: the aggregation pipeline against its references,
// measured in the same run on the same data (issue 14):
//   - $group by a field (sum and count per category) over kDocs documents
//     vs SQLite's GROUP BY json_extract(...) over the same documents as JSON
//     text (goal: rockdoc at least as fast);
//   - $lookup of each order's product through the products' _id index vs
//     the same application-level join through the API (a FindOne per
//     order, and the joined document built as $lookup returns it; goal: at
//     least as fast), vs the application's reads alone, and vs SQLite's JOIN
//     on the same data.
//   - a $group that spills (allowDiskUse; a group per document over the
//     first kSpillDocs documents, each holding its padding, so the groups
//     outgrow a 16 MB limit about three times over) against the same $group
//     held in memory: its peak memory (the process's peak resident set
//     above its resident set before the run, /proc/self/status VmHWM after
//     clear_refs) must stay under 2x the limit, and its time is reported
//     against the in-memory run.
// Items are documents in (group) or orders joined (lookup), per second.
//
//   build/bench/aggregate_bench [--benchmark_repetitions=N]
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <malloc.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "bench_util.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"

namespace {

constexpr int kDocs = 1000000;   // documents grouped (the issue's 1M)
constexpr int kSpillDocs = 200000;  // the first of them, a group each, in the spill runs
constexpr int kCategories = 100;
constexpr int kOrders = 20000;   // orders joined
constexpr int kProducts = 1000;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "aggregate_bench: %s\n", what.c_str());
  std::exit(1);
}

void Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    Die("sqlite: " + std::string(err ? err : "?") + " in " + sql);
  }
}

// The same documents in rockdoc and in SQLite.
struct Env {
  std::string dir;
  std::unique_ptr<rockdoc::Client> client;
  sqlite3* sql = nullptr;

  Env() {
    char tmpl[] = "/tmp/rockdoc-aggregate-bench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) Die("mkdtemp failed");
    dir = tmpl;
    auto c = rockdoc::Client::Open(dir + "/rockdoc");
    if (!c.ok()) Die(c.status().ToString());
    client = std::move(c).value();
    if (sqlite3_open((dir + "/sqlite.db").c_str(), &sql) != SQLITE_OK) Die("sqlite open");
    Exec(sql, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
    Exec(sql, "CREATE TABLE sales (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)");
    Exec(sql, "CREATE TABLE orders (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)");
    Exec(sql, "CREATE TABLE products (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)");
    std::mt19937_64 rng(7);
    const std::string pad(120, 'x');
    Load("sales", kDocs, [&](int i) {
      return "{\"_id\": " + std::to_string(i) + ", \"cat\": " + std::to_string(rng() % kCategories) +
             ", \"amount\": " + std::to_string(rng() % 1000) + ", \"pad\": \"" + pad + "\"}";
    });
    Load("products", kProducts, [&](int i) {
      return "{\"_id\": " + std::to_string(i) + ", \"code\": " + std::to_string(i) +
             ", \"name\": \"product " + std::to_string(i) + "\", \"price\": " +
             std::to_string(1 + rng() % 100) + "}";
    });
    Load("orders", kOrders, [&](int i) {
      return "{\"_id\": " + std::to_string(i) + ", \"product\": " +
             std::to_string(rng() % kProducts) + ", \"qty\": " + std::to_string(1 + rng() % 5) +
             "}";
    });
  }
  ~Env() {
    sqlite3_close(sql);
    client.reset();
    std::filesystem::remove_all(dir);
  }

  template <typename Fn>
  void Load(const std::string& name, int n, Fn make) {
    rockdoc::Collection c = client->GetDatabase("bench").GetCollection(name);
    std::vector<rockdoc::Document> batch;
    Exec(sql, "BEGIN");
    sqlite3_stmt* insert = nullptr;
    sqlite3_prepare_v2(sql, ("INSERT INTO " + name + " (id, doc) VALUES (?, ?)").c_str(), -1,
                       &insert, nullptr);
    for (int i = 0; i < n; ++i) {
      const std::string json = make(i);
      auto doc = rockdoc::FromJson(json);
      if (!doc.ok()) Die(doc.status().ToString());
      batch.push_back(std::move(doc).value());
      sqlite3_bind_int64(insert, 1, i);
      sqlite3_bind_text(insert, 2, json.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(insert) != SQLITE_DONE) Die("sqlite insert");
      sqlite3_reset(insert);
      if (batch.size() == 1000 || i + 1 == n) {
        if (!c.InsertMany(batch).ok()) Die("insert");
        batch.clear();
      }
    }
    sqlite3_finalize(insert);
    Exec(sql, "COMMIT");
  }

  rockdoc::Collection Coll(const std::string& name) {
    return client->GetDatabase("bench").GetCollection(name);
  }
};

Env& TheEnv() {
  static Env* env = new Env();
  return *env;
}

int64_t Drain(rockdoc::StatusOr<rockdoc::Cursor> cursor, benchmark::State& state) {
  if (!cursor.ok()) {
    state.SkipWithError(cursor.status().ToString().c_str());
    return 0;
  }
  int64_t n = 0;
  while (cursor->Next()) ++n;
  if (!cursor->status().ok()) state.SkipWithError(cursor->status().ToString().c_str());
  return n;
}

void GroupRockdoc(benchmark::State& state) {
  rockdoc::Collection c = TheEnv().Coll("sales");
  auto pipeline = rockdoc::FromJson(R"({"p": [{"$group": {"_id": "$cat",
      "total": {"$sum": "$amount"}, "n": {"$sum": 1}}}]})");
  for (auto _ : state) {
    const int64_t groups = Drain(c.Aggregate(pipeline->Get("p").Array()), state);
    if (groups != kCategories) state.SkipWithError("wrong number of groups");
  }
  state.SetItemsProcessed(state.iterations() * kDocs);
}

// ---- a spilling $group: its peak memory ----

constexpr int64_t kSpillLimit = int64_t{16} << 20;

// The highest resident set the process reached while `fn` ran, above the
// resident set before it (freed heap returned first, and the peak reset).
template <typename Fn>
int64_t PeakBytesDuring(Fn fn) {
  malloc_trim(0);
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  const int64_t before = rockdoc::bench::StatusKb("VmRSS");
  fn();
  return (rockdoc::bench::StatusKb("VmHWM") - before) * 1024;
}

double g_spill_peak = 0, g_memory_peak = 0;

void GroupByDocument(benchmark::State& state, int64_t limit, double* peak) {
  rockdoc::Collection c = TheEnv().Coll("sales");
  auto pipeline = rockdoc::FromJson(R"({"p": [{"$limit": )" + std::to_string(kSpillDocs) +
                                    R"(}, {"$group": {"_id": "$_id",
      "pads": {"$push": "$pad"}, "n": {"$sum": 1}}}]})");
  rockdoc::AggregateOptions options;
  options.allow_disk_use = true;
  options.max_blocking_stage_bytes = limit;
  Drain(c.Find(rockdoc::Document()), state);  // the block cache holds the collection
  int64_t most = 0;
  for (auto _ : state) {
    const int64_t bytes = PeakBytesDuring([&] {
      const int64_t groups = Drain(c.Aggregate(pipeline->Get("p").Array(), options), state);
      if (groups != kSpillDocs) state.SkipWithError("wrong number of groups");
    });
    most = std::max(most, bytes);
  }
  state.counters["peak_MiB"] = static_cast<double>(most) / (1 << 20);
  *peak = static_cast<double>(most);
  state.SetItemsProcessed(state.iterations() * kSpillDocs);
}

void GroupSpilling(benchmark::State& state) { GroupByDocument(state, kSpillLimit, &g_spill_peak); }
void GroupInMemory(benchmark::State& state) {
  GroupByDocument(state, int64_t{1} << 30, &g_memory_peak);
}

void GroupSqlite(benchmark::State& state) {
  sqlite3* db = TheEnv().sql;
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT json_extract(doc, '$.cat'), sum(json_extract(doc, '$.amount')), "
                     "count(*) FROM sales GROUP BY json_extract(doc, '$.cat')",
                     -1, &stmt, nullptr);
  for (auto _ : state) {
    int groups = 0;
    while (sqlite3_step(stmt) == SQLITE_ROW) ++groups;
    sqlite3_reset(stmt);
    if (groups != kCategories) state.SkipWithError("wrong number of groups");
  }
  sqlite3_finalize(stmt);
  state.SetItemsProcessed(state.iterations() * kDocs);
}

// Each order's product through $lookup on `foreign_field`: "_id" (an
// indexed loop join) or "code", which has no index (a hash join).
void LookupRockdoc(benchmark::State& state, const std::string& foreign_field) {
  rockdoc::Collection c = TheEnv().Coll("orders");
  auto pipeline = rockdoc::FromJson(R"({"p": [{"$lookup": {"from": "products",
      "localField": "product", "foreignField": ")" + foreign_field + R"(", "as": "p"}}]})");
  for (auto _ : state) {
    const int64_t n = Drain(c.Aggregate(pipeline->Get("p").Array()), state);
    if (n != kOrders) state.SkipWithError("wrong number of orders");
  }
  state.SetItemsProcessed(state.iterations() * kOrders);
}
void LookupIndexed(benchmark::State& state) { LookupRockdoc(state, "_id"); }
void LookupUnindexedRockdoc(benchmark::State& state) { LookupRockdoc(state, "code"); }

// SQLite's join of each order to its product on `product_key`: the
// primary key, or an unindexed JSON field (SQLite builds an automatic
// index for it).
void LookupSqlite(benchmark::State& state, const std::string& product_key) {
  sqlite3* db = TheEnv().sql;
  sqlite3_stmt* stmt = nullptr;
  const std::string sql = "SELECT o.doc, p.doc FROM orders o LEFT JOIN products p ON " +
                          product_key + " = json_extract(o.doc, '$.product')";
  sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr);
  for (auto _ : state) {
    int n = 0;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      benchmark::DoNotOptimize(sqlite3_column_text(stmt, 1));
      ++n;
    }
    sqlite3_reset(stmt);
    if (n != kOrders) state.SkipWithError("wrong number of orders");
  }
  sqlite3_finalize(stmt);
  state.SetItemsProcessed(state.iterations() * kOrders);
}
void LookupIndexedSqlite(benchmark::State& state) { LookupSqlite(state, "p.id"); }
void LookupUnindexedSqlite(benchmark::State& state) {
  LookupSqlite(state, "json_extract(p.doc, '$.code')");
}

// The application-level join a user writes without $lookup: read the
// orders, then each order's product by _id.
// The same join in the application: a findOne per order by the products'
// _id; with `build`, each order document with its product in an array "p",
// as $lookup returns it (the equivalent join); without, the reads alone.
void LookupApplicationJoin(benchmark::State& state, bool build) {
  rockdoc::Collection orders = TheEnv().Coll("orders"), products = TheEnv().Coll("products");
  for (auto _ : state) {
    auto cursor = orders.Find(rockdoc::Document());
    if (!cursor.ok()) {
      state.SkipWithError("find");
      break;
    }
    int64_t n = 0;
    while (cursor->Next()) {
      const rockdoc::DocumentView order = cursor->document();
      rockdoc::BsonBuilder filter;
      filter.AppendElementAs("_id", order.Get("product"));
      auto product = products.FindOne(std::move(filter).Build());
      if (!product.ok() || !product->has_value()) {
        state.SkipWithError("product");
        break;
      }
      if (build) {
        rockdoc::BsonBuilder joined;
        for (const rockdoc::Element& e : order) joined.AppendElement(e);
        joined.OpenArray("p").AppendDocument("", **product).Close();
        benchmark::DoNotOptimize(std::move(joined).Build());
      } else {
        benchmark::DoNotOptimize(*product);
      }
      ++n;
    }
    if (n != kOrders) state.SkipWithError("wrong number of orders");
  }
  state.SetItemsProcessed(state.iterations() * kOrders);
}
void LookupApplication(benchmark::State& state) { LookupApplicationJoin(state, true); }
void LookupApplicationReads(benchmark::State& state) { LookupApplicationJoin(state, false); }

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  TheEnv();  // load before timing
  // Interleaved, so neither side always runs on a cooler machine.
  benchmark::RegisterBenchmark("Group/sqlite", GroupSqlite)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Group/rockdoc", GroupRockdoc)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Lookup/application", LookupApplication)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Lookup/application-reads", LookupApplicationReads)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Lookup/rockdoc", LookupIndexed)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("Lookup/sqlite", LookupIndexedSqlite)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("LookupUnindexed/rockdoc", LookupUnindexedRockdoc)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("LookupUnindexed/sqlite", LookupUnindexedSqlite)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("GroupSpill/memory", GroupInMemory)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("GroupSpill/spilling", GroupSpilling)
      ->Unit(benchmark::kMillisecond);
  rockdoc::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\naggregation, rockdoc / reference (items per second):\n");
  reporter.Ratio("$group / SQLite GROUP BY json_extract", "Group/rockdoc", "Group/sqlite", 1.0);
  reporter.Ratio("$lookup / application-level join", "Lookup/rockdoc", "Lookup/application",
                 1.0);
  reporter.Ratio("$lookup / the application's reads alone (no joined documents)",
                 "Lookup/rockdoc", "Lookup/application-reads");
  reporter.Ratio("$lookup / SQLite JOIN", "Lookup/rockdoc", "Lookup/sqlite");
  reporter.Ratio("$lookup hash join (no index) / SQLite JOIN on an unindexed field",
                 "LookupUnindexed/rockdoc", "LookupUnindexed/sqlite");
  reporter.Ratio("$group spilling (16 MB limit) / in memory", "GroupSpill/spilling",
                 "GroupSpill/memory");
  if (g_spill_peak > 0) {
    const double limit = static_cast<double>(kSpillLimit);
    std::printf("  %-46s %8.1f MiB = %5.2fx the %lld MiB limit  (goal < 2x: %s)\n",
                "peak memory of the spilling $group", g_spill_peak / (1 << 20),
                g_spill_peak / limit, static_cast<long long>(kSpillLimit >> 20),
                g_spill_peak < 2 * limit ? "met" : "MISSED");
    std::printf("  %-46s %8.1f MiB\n", "peak memory of the same $group in memory",
                g_memory_peak / (1 << 20));
  }
  benchmark::Shutdown();
  delete &TheEnv();
  return 0;
}

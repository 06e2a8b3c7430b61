// What the statistics kept on write cost (ClientOptions::collect_statistics:
// growth warnings, document sizes, array lengths; issue 18's goal: inserts
// and updates at most 5% slower with them on). Two databases, identical but
// for the switch, get the same operations in the same run, one row per
// workload:
//
//   insert_one    insertOne of ~300-byte documents (one commit each)
//   insert_many   insertMany in batches of 1,000 of the same documents
//   insert_array  insertOne of ~1.2 KB documents holding an array of 60
//                 strings (over 750 bytes: the arrays are walked and their
//                 lengths recorded)
//   update_set    updateOne({_id: x}, {$set: {s: <1 to 64 letters>}}) on the
//                 ~300-byte documents (the size changes: a bucket moves now
//                 and then)
//   update_push   updateOne({_id: p}, {$push: {log: {ts, v}}}) on documents
//                 holding a log of 200 and more entries (every push grows its
//                 document: the walk, the array's length recorded)
//
// Each repetition runs both sides on the same fixed number of operations
// (so both databases change alike), the order of the sides alternating from
// one repetition to the next; a row prints each side's median rate with its
// range and the median of the per-repetition ratios on/off (1.00: no cost;
// 0.95: 5% slower), by the wall clock and by the benchmark thread's CPU
// time (steadier on a shared machine; it leaves out RocksDB's background
// work, which the statistics do not change). No timing is asserted
// anywhere: this is a measurement.
//
//   update_inc    updateOne({_id: x}, {$inc: {n: 1}}) on the ~300-byte
//                 documents
//
// --switch change_log measures the change log instead (ClientOptions::
// change_log, issue 37's goal: inserts and $inc at least 0.9x with it on):
// the same rows, the two sides differing in that switch alone.
// --switch record_cache measures what the record cache costs writes
// (ClientOptions::record_cache_bytes at its default against 0; issue 36's
// bound: no write workload more than 10% slower with it on).
//
//   statistics_bench [--reps R] [--ops N] [--dir D] [--rows insert_one,...]
//                    [--load N] [--side on|off]
//                    [--switch statistics|change_log|record_cache]
//
// --ops scales every row's operations per run (default 1: insert_one 20,000,
// insert_many 50 batches, insert_array 10,000, update_set 20,000, update_push
// 10,000); --load sets the documents update_set works on (100,000). --side
// runs one side alone, for a profiler, e.g. instructions counted by
// callgrind, steady where time is not:
//   valgrind --tool=callgrind --toggle-collect='*RunMeasured*' \
//     statistics_bench --side on --rows update_push --load 2000 --reps 1 --ops 0.05
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "rockdoc/client.h"

namespace {

namespace fs = std::filesystem;
using rockdoc::BsonBuilder;
using rockdoc::Collection;
using rockdoc::Document;

using rockdoc::bench::Check;
using rockdoc::bench::Die;

int64_t g_loaded = 100000;            // documents of update_set (--load)
constexpr int64_t kPushDocs = 1000;   // documents of update_push
constexpr int kLogStart = 200;

std::string Text(std::mt19937_64& rng, size_t n) {
  std::string s(n, ' ');
  for (char& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

// ~300 bytes, as compare_bench's documents.
Document Small(int64_t id, std::mt19937_64& rng) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  b.AppendInt64("k", static_cast<int64_t>(rng() % 1000000));
  b.AppendInt32("n", 0);
  b.AppendString("s", Text(rng, 8));
  b.AppendString("status", (rng() & 1) ? "active" : "inactive");
  b.OpenArray("tags").AppendString("", "red").AppendString("", "blue").Close();
  b.AppendString("text", Text(rng, 200));
  return std::move(b).Build();
}

Document WithArray(int64_t id, std::mt19937_64& rng) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  b.AppendString("title", Text(rng, 40));
  b.OpenArray("items");
  for (int i = 0; i < 60; ++i) b.AppendString("", Text(rng, 12));
  b.Close();
  return std::move(b).Build();
}

Document IdFilter(int64_t id) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  return std::move(b).Build();
}

// One side: a client with statistics on or off, and its collections.
struct Side {
  std::string name;
  std::unique_ptr<rockdoc::Client> client;
  Collection coll(const std::string& c) const { return client->GetDatabase("bench").GetCollection(c); }
  int64_t next_id = 1000000000;  // fresh _ids for the insert rows
};

struct Row {
  std::string name;
  std::string unit;
  int64_t ops;  // per run
  // Runs `ops` operations of the row on `side`; `seed` makes both sides'
  // operations the same.
  std::function<void(Side&, int64_t ops, uint64_t seed)> run;
  int64_t items_per_op = 1;
};

// A row of updateOne({_id: <one of `docs`, at random>}, update(rng)) on
// collection `coll`; each update must match its document.
Row UpdateRow(std::string name, std::string coll, int64_t ops, int64_t docs,
              std::function<Document(std::mt19937_64&)> update) {
  Row row{name, "updates/s", ops, {}};
  row.run = [name, coll, docs, update](Side& side, int64_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    Collection c = side.coll(coll);
    for (int64_t i = 0; i < n; ++i) {
      Document u = update(rng);  // before the _id: the draws of the rows as they were
      auto r = Check(c.UpdateOne(IdFilter(static_cast<int64_t>(rng() % docs)), u), "updateOne");
      if (r.matched_count != 1) Die(name + ": no match");
    }
  };
  return row;
}

// The calling thread's CPU time: what the operations cost this thread,
// less sensitive than the wall clock to the other processes of a shared
// machine (RocksDB's background flushes and compactions are not in it).
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The measured runs go through here: a profiler can count what happens
// inside it alone (callgrind --toggle-collect='*RunMeasured*').
__attribute__((noinline)) void RunMeasured(const Row& row, Side& side, int64_t ops, uint64_t seed) {
  row.run(side, ops, seed);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  double scale = 1;
  std::string dir = "/tmp";
  std::vector<std::string> only;
  std::string side_only;
  std::string which = "statistics";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--reps") {
      reps = std::atoi(next().c_str());
    } else if (a == "--ops") {
      scale = std::atof(next().c_str());
    } else if (a == "--dir") {
      dir = next();
    } else if (a == "--load") {
      g_loaded = std::atoll(next().c_str());
    } else if (a == "--switch") {
      which = next();
      if (which != "statistics" && which != "change_log" && which != "record_cache") {
        Die("--switch is statistics, change_log or record_cache");
      }
    } else if (a == "--side") {
      side_only = next();
      if (side_only != "on" && side_only != "off") Die("--side is on or off");
    } else if (a == "--rows") {
      std::string list = next();
      for (size_t p = 0; p <= list.size();) {
        size_t q = list.find(',', p);
        if (q == std::string::npos) q = list.size();
        only.push_back(list.substr(p, q - p));
        p = q + 1;
      }
    } else {
      Die("unknown option " + a + " (--reps R, --ops N, --dir D, --rows a,b)");
    }
  }
  if (reps < 1 || scale <= 0 || g_loaded < 1) Die("--reps, --ops and --load must be positive");

  const std::string root = dir + "/statistics_bench." + std::to_string(::getpid());
  fs::remove_all(root);
  fs::create_directories(root);
  Side sides[2];
  for (int s = 0; s < 2; ++s) {
    if (!side_only.empty() && side_only != (s == 0 ? "on" : "off")) continue;
    rockdoc::ClientOptions o;
    if (which == "statistics") {
      o.collect_statistics = s == 0;
    } else if (which == "change_log") {
      o.change_log = s == 0;
    } else if (s == 1) {
      o.record_cache_bytes = 0;
    }
    sides[s].name = s == 0 ? "on" : "off";
    sides[s].client = Check(rockdoc::Client::Open(root + "/" + sides[s].name, o), "open");
    // The same data on both sides.
    std::mt19937_64 rng(7);
    std::vector<Document> batch;
    for (int64_t id = 0; id < g_loaded; ++id) {
      batch.push_back(Small(id, rng));
      if (batch.size() == 1000) {
        Check(sides[s].coll("docs").InsertMany(batch), "load");
        batch.clear();
      }
    }
    for (int64_t p = 0; p < kPushDocs; ++p) {
      BsonBuilder b;
      b.AppendInt64("_id", p).OpenArray("log");
      for (int i = 0; i < kLogStart; ++i) {
        b.OpenDocument("").AppendInt64("ts", i).AppendString("v", Text(rng, 16)).Close();
      }
      b.Close();
      batch.push_back(std::move(b).Build());
    }
    Check(sides[s].coll("pushes").InsertMany(batch), "load pushes");
    Check(sides[s].client->Compact(), "compact");
  }

  auto ops = [&](int64_t n) { return std::max<int64_t>(1, static_cast<int64_t>(n * scale)); };
  std::vector<Row> rows = {
      {"insert_one", "docs/s", ops(20000),
       [](Side& side, int64_t n, uint64_t seed) {
         std::mt19937_64 rng(seed);
         Collection c = side.coll("inserts");
         for (int64_t i = 0; i < n; ++i)
           Check(c.InsertOne(Small(side.next_id++, rng)), "insertOne");
       }},
      {"insert_many", "docs/s", ops(50),
       [](Side& side, int64_t n, uint64_t seed) {
         std::mt19937_64 rng(seed);
         Collection c = side.coll("inserts");
         for (int64_t i = 0; i < n; ++i) {
           std::vector<Document> batch;
           for (int j = 0; j < 1000; ++j) batch.push_back(Small(side.next_id++, rng));
           Check(c.InsertMany(batch), "insertMany");
         }
       },
       1000},
      {"insert_array", "docs/s", ops(10000),
       [](Side& side, int64_t n, uint64_t seed) {
         std::mt19937_64 rng(seed);
         Collection c = side.coll("arrays");
         for (int64_t i = 0; i < n; ++i)
           Check(c.InsertOne(WithArray(side.next_id++, rng)), "insertOne");
       }},
      UpdateRow("update_set", "docs", ops(20000), g_loaded,
                [](std::mt19937_64& rng) {
                  BsonBuilder u;
                  u.OpenDocument("$set").AppendString("s", Text(rng, 1 + rng() % 64)).Close();
                  return std::move(u).Build();
                }),
      UpdateRow("update_inc", "docs", ops(20000), g_loaded,
                [](std::mt19937_64&) {
                  BsonBuilder u;
                  u.OpenDocument("$inc").AppendInt32("n", 1).Close();
                  return std::move(u).Build();
                }),
      UpdateRow("update_push", "pushes", ops(10000), kPushDocs,
                [](std::mt19937_64& rng) {
                  BsonBuilder u;
                  u.OpenDocument("$push")
                      .OpenDocument("log")
                      .AppendInt64("ts", static_cast<int64_t>(rng()))
                      .AppendString("v", Text(rng, 16))
                      .Close()
                      .Close();
                  return std::move(u).Build();
                }),
  };

  std::printf(
      "statistics_bench (%s on against off): %d repetitions, both sides alternating; "
      "rates are medians [range]; on/off is the median of the per-repetition ratios\n",
      which.c_str(), reps);
  for (Row& row : rows) {
    if (!only.empty() && std::find(only.begin(), only.end(), row.name) == only.end()) continue;
    if (!side_only.empty()) {  // one side alone: its rate, no ratio
      Side& side = sides[side_only == "on" ? 0 : 1];
      std::vector<double> alone;
      for (int rep = 0; rep < reps; ++rep) {
        auto start = std::chrono::steady_clock::now();
        RunMeasured(row, side, row.ops, 1000 + static_cast<uint64_t>(rep));
        alone.push_back(static_cast<double>(row.ops * row.items_per_op) /
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                            .count());
      }
      std::printf("%-13s %-9s | %-3s %8.0f\n", row.name.c_str(), row.unit.c_str(),
                  side.name.c_str(), Median(alone));
      continue;
    }
    // A warm-up run of each side first, not counted.
    for (Side& side : sides) row.run(side, std::max<int64_t>(1, row.ops / 4), 1);
    std::vector<double> rates[2], cpu_rates[2];
    for (int rep = 0; rep < reps; ++rep) {
      for (int k = 0; k < 2; ++k) {
        const int s = (k + rep) % 2;  // alternating order
        auto start = std::chrono::steady_clock::now();
        const double cpu_start = ThreadCpuSeconds();
        RunMeasured(row, sides[s], row.ops, 1000 + static_cast<uint64_t>(rep));
        const double cpu = ThreadCpuSeconds() - cpu_start;
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        rates[s].push_back(static_cast<double>(row.ops * row.items_per_op) / seconds);
        cpu_rates[s].push_back(static_cast<double>(row.ops * row.items_per_op) / cpu);
      }
    }
    std::vector<double> ratios, cpu_ratios;
    for (int rep = 0; rep < reps; ++rep) {
      ratios.push_back(rates[0][rep] / rates[1][rep]);
      cpu_ratios.push_back(cpu_rates[0][rep] / cpu_rates[1][rep]);
    }
    auto [rlo, rhi] = std::minmax_element(ratios.begin(), ratios.end());
    auto [clo, chi] = std::minmax_element(cpu_ratios.begin(), cpu_ratios.end());
    std::printf("%-13s %-9s", row.name.c_str(), row.unit.c_str());
    for (int s = 0; s < 2; ++s) {
      auto [lo, hi] = std::minmax_element(rates[s].begin(), rates[s].end());
      std::printf(" | %-3s %8.0f [%.0f-%.0f]", sides[s].name.c_str(), Median(rates[s]), *lo, *hi);
    }
    std::printf(" | on/off %.3f [%.3f-%.3f] | cpu on/off %.3f [%.3f-%.3f]\n", Median(ratios),
                *rlo, *rhi, Median(cpu_ratios), *clo, *chi);
    std::fflush(stdout);
  }
  // What the side with statistics on kept (it must have kept something).
  for (const char* c : {"docs", "pushes", "arrays"}) {
    if (sides[0].client == nullptr || which != "statistics") break;
    auto g = sides[0].coll(c).GrowthStats();
    if (!g.ok()) continue;
    std::printf("kept (on) bench.%-7s documents %lld (sizes %s), array paths %zu", c,
                static_cast<long long>(g->document_sizes.total()),
                g->document_sizes_known ? "known" : "unknown", g->array_lengths.size());
    for (const rockdoc::ArrayLengths& a : g->array_lengths) {
      std::printf(", %s: %lld seen, max %lld", a.path.c_str(),
                  static_cast<long long>(a.lengths.total()), static_cast<long long>(a.max));
    }
    std::printf("\n");
  }
  for (Side& side : sides) {
    if (side.client != nullptr) Check(side.client->Close(), "close");
  }
  fs::remove_all(root);
  return 0;
}

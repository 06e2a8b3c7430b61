// The query and update language beside its physical limits, in the same run,
// with the same RocksDB options (internal::MakeRocksOptions):
//
//   Filter/matcher        ParseMatchExpression(filter)->Matches(view) over
//                         100,000 ~1 KB documents held in memory: the matcher
//                         alone.
//   Filter/rockdoc        Collection::CountDocuments(filter) over a collection
//                         scan of the same documents: the full path.
//   Filter/raw_matcher    a raw RocksDB iterator over the same values, each
//                         value handed to the same matcher: what the full path
//                         could cost with no execution machinery at all.
//   Filter/raw            a raw RocksDB iterator over the same values, reading
//                         each value's length: the physical limit of the scan.
//     The filter is {status: "A", qty: {$gt: 20}, tags: "red"} (about 7% of
//     the documents match).
//
//   Push/rockdoc          updateOne({_id: 1}, {$push: {log: {$each: [one entry],
//                         $sort: {ts: 1}, $slice: -1000}}}) on a document whose
//                         log holds 1,000 entries (a log of the latest 1,000).
//   Push/driver           UpdateDriver::Apply of the same update alone (parsed
//                         once; no storage).
//   Push/raw              raw Get + Put of a value of the same size: the
//                         physical cost of rewriting the document.
//
//   BigDoc/rockdoc        updateOne({_id: 1}, {$inc: {n: 1}}) on a 1 MB
//                         document; counters: bytes written and WAL bytes per
//                         update (Client::GetStorageStats deltas).
//   BigDoc/raw            raw Put of a 1 MB value; the same counters from the
//                         raw database's statistics.
//
// Rates: Filter/* and Push/* count the calling thread's CPU time (Google
// Benchmark's default; steadier on a shared machine), BigDoc/* wall time,
// because its flushes run on RocksDB's background threads.
//
// The raw baseline is a plain rocksdb::DB; rockdoc's is a TransactionDB, so
// the ratios include what transactions, planning and the API cost. Databases
// live under /tmp and are removed at exit. After the run, the ratios are
// printed.
#include <benchmark/benchmark.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "keystring/keystring.h"
#include "query/match_expression.h"
#include "query/update/update_driver.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/rocks.h"

namespace {

namespace fs = std::filesystem;
using rockdoc::BsonBuilder;
using rockdoc::Document;

constexpr int kFilterDocs = 100000;
constexpr int kLogEntries = 1000;
constexpr size_t kBigDocBytes = size_t{1} << 20;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "query_bench: %s\n", what.c_str());
  std::abort();
}

Document Json(const char* text) {
  auto d = rockdoc::FromJson(text);
  if (!d.ok()) Die(d.status().ToString());
  return std::move(d).value();
}

// ---- The shared directory and databases ----

struct Env {
  std::string root;
  std::unique_ptr<rockdoc::Client> client;
  rocksdb::DB* raw = nullptr;

  Env() {
    char tmpl[] = "/tmp/rockdoc-query-bench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) Die("mkdtemp failed");
    root = tmpl;
    auto c = rockdoc::Client::Open(root + "/rockdoc");
    if (!c.ok()) Die(c.status().ToString());
    client = std::move(c).value();
    rocksdb::Options o = rockdoc::internal::MakeRocksOptions(rockdoc::ClientOptions());
    o.create_if_missing = true;
    rocksdb::Status s = rocksdb::DB::Open(o, root + "/raw", &raw);
    if (!s.ok()) Die("raw open: " + s.ToString());
  }
  ~Env() {
    if (client) (void)client->Close();
    client.reset();
    if (raw != nullptr) {
      (void)raw->Close();
      delete raw;
    }
    fs::remove_all(root);
  }
  rockdoc::Collection Coll(const char* name) const {
    return client->GetDatabase("bench").GetCollection(name);
  }
  // Flushes both engines' memtables and reopens them, so that both read an
  // equally shaped LSM tree.
  void FlushAndReopen() {
    if (!client->Close().ok()) Die("close");
    client.reset();
    auto c = rockdoc::Client::Open(root + "/rockdoc");
    if (!c.ok()) Die(c.status().ToString());
    client = std::move(c).value();
    (void)raw->Flush(rocksdb::FlushOptions());
  }
};

Env& TheEnv() {
  static Env* env = new Env();  // deleted by main (so that /tmp is cleaned)
  return *env;
}

// ---- Filter evaluation ----

const char* const kColors[] = {"red", "green", "blue", "black", "white", "yellow"};
const char* const kStatus[] = {"A", "B", "C", "D"};

// A ~1 KB document in the shape of an inventory record: the three filtered
// fields sit among others (the matcher walks field by field), with a long
// description and a few nested values.
Document MakeInventoryDoc(int64_t id, std::mt19937_64& rng) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  b.OpenDocument("item")
      .AppendString("sku", "SKU-" + std::to_string(rng() % 1000000))
      .AppendString("name", "item " + std::to_string(rng() % 5000))
      .Close();
  b.AppendString("status", kStatus[rng() % 4]);
  b.OpenDocument("size")
      .AppendDouble("h", static_cast<double>(rng() % 1000) / 10)
      .AppendDouble("w", static_cast<double>(rng() % 1000) / 10)
      .AppendString("uom", "cm")
      .Close();
  b.AppendInt32("qty", static_cast<int32_t>(rng() % 100));
  b.AppendDateTime("updated", 1600000000000 + static_cast<int64_t>(rng() % 100000000000));
  std::string desc;
  for (int i = 0; i < 760; ++i) desc.push_back(static_cast<char>('a' + rng() % 26));
  b.AppendString("description", desc);
  b.OpenArray("tags");
  // 2 of 6 colours, distinct: "red" in a third of the documents.
  size_t first = rng() % 6, second = (first + 1 + rng() % 5) % 6;
  b.AppendString("", kColors[first]).AppendString("", kColors[second]).Close();
  b.OpenArray("ratings");
  for (int i = 0; i < 5; ++i) b.AppendInt32("", static_cast<int32_t>(rng() % 5 + 1));
  b.Close();
  b.AppendBool("active", (rng() & 1) != 0);
  b.AppendString("warehouse", "WH-" + std::to_string(rng() % 40));
  return std::move(b).Build();
}

struct FilterData {
  std::vector<Document> docs;
  uint64_t bytes = 0;
  int64_t expected_matches = 0;
  Document filter = Json(R"({"status": "A", "qty": {"$gt": 20}, "tags": "red"})");
  std::unique_ptr<rockdoc::MatchExpression> expr;
};

FilterData& Filter() {
  static FilterData* data = [] {
    auto* d = new FilterData();
    auto e = rockdoc::ParseMatchExpression(d->filter);
    if (!e.ok()) Die(e.status().ToString());
    d->expr = std::move(e).value();
    std::mt19937_64 rng(42);
    std::vector<int64_t> ids(kFilterDocs);
    for (int i = 0; i < kFilterDocs; ++i) ids[i] = i;
    std::shuffle(ids.begin(), ids.end(), rng);
    for (int64_t id : ids) {
      d->docs.push_back(MakeInventoryDoc(id, rng));
      d->bytes += d->docs.back().size();
      if (d->expr->Matches(d->docs.back())) ++d->expected_matches;
    }
    Env& env = TheEnv();
    // rockdoc: the first collection, so prefix 1; raw: the same keys.
    rockdoc::Collection c = env.Coll("inventory");
    for (size_t i = 0; i < d->docs.size(); i += 1000) {
      std::vector<Document> batch(d->docs.begin() + i,
                                  d->docs.begin() + std::min(d->docs.size(), i + 1000));
      auto r = c.InsertMany(batch);
      if (!r.ok() || !r->ok()) Die("insert inventory");
      rocksdb::WriteBatch wb;
      for (const Document& doc : batch) {
        wb.Put(rockdoc::internal::RecordKey(1, rockdoc::keystring::EncodeValue(*doc.begin())),
               doc.bytes());
      }
      if (!env.raw->Write(rocksdb::WriteOptions(), &wb).ok()) Die("raw write");
    }
    env.FlushAndReopen();
    return d;
  }();
  return *data;
}

void FilterMatcher(benchmark::State& state) {
  FilterData& d = Filter();
  int64_t docs = 0, matched = 0;
  for (auto _ : state) {
    for (const Document& doc : d.docs) matched += d.expr->Matches(doc.view()) ? 1 : 0;
    docs += static_cast<int64_t>(d.docs.size());
  }
  if (matched != d.expected_matches * state.iterations()) state.SkipWithError("wrong count");
  state.SetItemsProcessed(docs);
  state.SetBytesProcessed(static_cast<int64_t>(d.bytes) * state.iterations());
  state.counters["matched"] = static_cast<double>(d.expected_matches);
}

void FilterRockdoc(benchmark::State& state) {
  FilterData& d = Filter();
  rockdoc::Collection c = TheEnv().Coll("inventory");
  for (auto _ : state) {
    auto n = c.CountDocuments(d.filter);
    if (!n.ok() || *n != d.expected_matches) state.SkipWithError("wrong count");
  }
  state.SetItemsProcessed(static_cast<int64_t>(d.docs.size()) * state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(d.bytes) * state.iterations());
}

// The same range, snapshot and read options as rockdoc's collection scan.
template <typename Fn>
bool RawScan(rocksdb::DB* db, Fn&& fn) {
  std::string lower = rockdoc::internal::PrefixKey(1), upper = rockdoc::internal::PrefixKey(2);
  rocksdb::ReadOptions ro;
  rocksdb::Slice lo(lower), hi(upper);
  ro.iterate_lower_bound = &lo;
  ro.iterate_upper_bound = &hi;
  ro.adaptive_readahead = true;
  const rocksdb::Snapshot* snap = db->GetSnapshot();
  ro.snapshot = snap;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  for (it->SeekToFirst(); it->Valid(); it->Next()) fn(it->value());
  bool ok = it->status().ok();
  it.reset();
  db->ReleaseSnapshot(snap);
  return ok;
}

void FilterRawMatcher(benchmark::State& state) {
  FilterData& d = Filter();
  rocksdb::DB* db = TheEnv().raw;
  for (auto _ : state) {
    int64_t matched = 0;
    bool ok = RawScan(db, [&](const rocksdb::Slice& v) {
      matched += d.expr->Matches(rockdoc::DocumentView(reinterpret_cast<const uint8_t*>(v.data())))
                     ? 1
                     : 0;
    });
    if (!ok || matched != d.expected_matches) state.SkipWithError("wrong count");
  }
  state.SetItemsProcessed(static_cast<int64_t>(d.docs.size()) * state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(d.bytes) * state.iterations());
}

void FilterRaw(benchmark::State& state) {
  FilterData& d = Filter();
  rocksdb::DB* db = TheEnv().raw;
  for (auto _ : state) {
    int64_t n = 0, bytes = 0;
    bool ok = RawScan(db, [&](const rocksdb::Slice& v) {
      int32_t len;
      std::memcpy(&len, v.data(), 4);
      bytes += len;
      ++n;
    });
    benchmark::DoNotOptimize(bytes);
    if (!ok || n != static_cast<int64_t>(d.docs.size())) state.SkipWithError("wrong count");
  }
  state.SetItemsProcessed(static_cast<int64_t>(d.docs.size()) * state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(d.bytes) * state.iterations());
}

// ---- $push with $each / $sort / $slice ----

void AppendLogEntry(BsonBuilder* b, int64_t ts) {
  b->OpenDocument("")
      .AppendInt64("ts", ts)
      .AppendString("level", ts % 10 == 0 ? "warn" : "info")
      .AppendString("msg", "request " + std::to_string(ts * 7919 % 1000003) + " served")
      .Close();
}

Document MakeLogDoc() {
  BsonBuilder b;
  b.AppendInt32("_id", 1);
  b.AppendString("name", "sensor-1");
  b.OpenArray("log");
  for (int64_t ts = 0; ts < kLogEntries; ++ts) AppendLogEntry(&b, ts);
  b.Close();
  return std::move(b).Build();
}

Document MakePushUpdate(int64_t ts) {
  BsonBuilder b;
  b.OpenDocument("$push").OpenDocument("log").OpenArray("$each");
  AppendLogEntry(&b, ts);
  b.Close();
  b.OpenDocument("$sort").AppendInt32("ts", 1).Close();
  b.AppendInt32("$slice", -kLogEntries);
  b.Close().Close();
  return std::move(b).Build();
}

void PushRockdoc(benchmark::State& state) {
  Env& env = TheEnv();
  rockdoc::Collection c = env.Coll("log");
  (void)c.Drop();
  Document doc = MakeLogDoc();
  if (!c.InsertOne(doc).ok()) Die("insert log");
  Document filter = Json(R"({"_id": 1})");
  int64_t ts = kLogEntries;
  for (auto _ : state) {
    Document update = MakePushUpdate(ts++);
    auto r = c.UpdateOne(filter, update);
    if (!r.ok() || r->modified_count != 1) {
      state.SkipWithError(r.ok() ? "not modified" : r.status().ToString().c_str());
      break;
    }
  }
  auto after = c.FindOne(filter);
  if (!after.ok() || !after->has_value() || (*after)->GetPath("log.999.ts").Int64() != ts - 1 ||
      (*after)->Get("log").Array().CountFields() != kLogEntries) {
    state.SkipWithError("unexpected document after the updates");
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(doc.size()) * state.iterations());
  state.SetLabel("doc " + std::to_string(doc.size()) + " B");
}

void PushDriver(benchmark::State& state) {
  Document doc = MakeLogDoc();
  Document update = MakePushUpdate(kLogEntries);
  auto driver = rockdoc::UpdateDriver::Parse(update, {});
  if (!driver.ok()) Die(driver.status().ToString());
  rockdoc::UpdateContext ctx;
  for (auto _ : state) {
    auto r = driver->Apply(doc, ctx);
    if (!r.ok() || !r->modified) state.SkipWithError("apply failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(doc.size()) * state.iterations());
}

void PushRaw(benchmark::State& state) {
  rocksdb::DB* db = TheEnv().raw;
  Document doc = MakeLogDoc();
  const std::string key = "push-doc";
  if (!db->Put(rocksdb::WriteOptions(), key, doc.bytes()).ok()) Die("raw put");
  for (auto _ : state) {
    std::string value;
    if (!db->Get(rocksdb::ReadOptions(), key, &value).ok()) state.SkipWithError("get");
    value[value.size() / 2] ^= 1;  // a change, so the Put is not of identical bytes
    if (!db->Put(rocksdb::WriteOptions(), key, value).ok()) state.SkipWithError("put");
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(doc.size()) * state.iterations());
}

// ---- One field of a 1 MB document ----

Document MakeBigDoc() {
  BsonBuilder b;
  b.AppendInt32("_id", 1);
  b.AppendInt32("n", 0);
  b.OpenArray("parts");
  std::mt19937_64 rng(7);
  std::string text(1000, 'x');
  while (b.size() + 1100 < kBigDocBytes) {
    for (char& ch : text) ch = static_cast<char>('a' + rng() % 26);
    b.OpenDocument("")
        .AppendInt64("at", static_cast<int64_t>(rng() % 1000000))
        .AppendString("text", text)
        .Close();
  }
  b.Close();
  return std::move(b).Build();
}

void BigDocRockdoc(benchmark::State& state) {
  Env& env = TheEnv();
  rockdoc::Collection c = env.Coll("big");
  (void)c.Drop();
  Document doc = MakeBigDoc();
  if (!c.InsertOne(doc).ok()) Die("insert big");
  Document filter = Json(R"({"_id": 1})");
  Document update = Json(R"({"$inc": {"n": 1}})");
  rockdoc::StorageStats before = env.client->GetStorageStats();
  for (auto _ : state) {
    auto r = c.UpdateOne(filter, update);
    if (!r.ok() || r->modified_count != 1) {
      state.SkipWithError("update failed");
      break;
    }
  }
  rockdoc::StorageStats after = env.client->GetStorageStats();
  double n = static_cast<double>(state.iterations());
  state.counters["written_B_per_update"] =
      static_cast<double>(after.bytes_written - before.bytes_written) / n;
  state.counters["wal_B_per_update"] = static_cast<double>(after.wal_bytes - before.wal_bytes) / n;
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(doc.size()) * state.iterations());
  state.SetLabel("doc " + std::to_string(doc.size()) + " B");
  (void)c.Drop();
}

void BigDocRaw(benchmark::State& state) {
  rocksdb::DB* db = TheEnv().raw;
  Document doc = MakeBigDoc();
  std::string value = doc.bytes();
  const std::string key = "big-doc";
  rocksdb::Statistics* stats = db->GetOptions().statistics.get();
  uint64_t written0 = stats->getTickerCount(rocksdb::BYTES_WRITTEN);
  uint64_t wal0 = stats->getTickerCount(rocksdb::WAL_FILE_BYTES);
  int32_t n = 0;
  for (auto _ : state) {
    // The same one-field change as $inc, so each Put writes new bytes.
    ++n;
    std::memcpy(&value[4 + 1 + 4 + 4 + 1 + 2], &n, 4);  // "n" follows {_id: int32}
    if (!db->Put(rocksdb::WriteOptions(), key, value).ok()) state.SkipWithError("put");
  }
  double iters = static_cast<double>(state.iterations());
  state.counters["written_B_per_update"] =
      static_cast<double>(stats->getTickerCount(rocksdb::BYTES_WRITTEN) - written0) / iters;
  state.counters["wal_B_per_update"] =
      static_cast<double>(stats->getTickerCount(rocksdb::WAL_FILE_BYTES) - wal0) / iters;
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(value.size()) * state.iterations());
}

// ---- Reporting ----

void PrintRatios(const rockdoc::bench::RatioReporter& r) {
  std::printf("\nRatios (items per second, same run):\n");
  r.Ratio("filter: rockdoc CountDocuments / raw scan", "Filter/rockdoc", "Filter/raw");
  r.Ratio("filter: rockdoc / raw scan + matcher", "Filter/rockdoc", "Filter/raw_matcher");
  r.Ratio("filter: raw scan + matcher / raw scan", "Filter/raw_matcher", "Filter/raw");
  r.Ratio("filter: rockdoc / matcher in memory", "Filter/rockdoc", "Filter/matcher");
  r.Ratio("push: rockdoc updateOne / raw Get+Put", "Push/rockdoc", "Push/raw");
  r.Ratio("push: rockdoc updateOne / UpdateDriver::Apply", "Push/rockdoc", "Push/driver");
  r.Ratio("1 MB doc: rockdoc $inc / raw Put of 1 MB", "BigDoc/rockdoc", "BigDoc/raw");
  r.PrintExtras();
}

void Register() {
  benchmark::RegisterBenchmark("Filter/raw", FilterRaw)
      ->Unit(benchmark::kMillisecond)
      ->MinTime(2.0);
  benchmark::RegisterBenchmark("Filter/raw_matcher", FilterRawMatcher)
      ->Unit(benchmark::kMillisecond)
      ->MinTime(2.0);
  benchmark::RegisterBenchmark("Filter/rockdoc", FilterRockdoc)
      ->Unit(benchmark::kMillisecond)
      ->MinTime(2.0);
  benchmark::RegisterBenchmark("Filter/matcher", FilterMatcher)
      ->Unit(benchmark::kMillisecond)
      ->MinTime(2.0);
  benchmark::RegisterBenchmark("Push/raw", PushRaw)->Unit(benchmark::kMicrosecond)->MinTime(2.0);
  benchmark::RegisterBenchmark("Push/rockdoc", PushRockdoc)
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(2.0);
  benchmark::RegisterBenchmark("Push/driver", PushDriver)
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(2.0);
  // Fixed counts: each 1 MB write fills the 64 MB memtable in ~60 updates,
  // so flushes (and their cost) are part of both figures.
  benchmark::RegisterBenchmark("BigDoc/raw", BigDocRaw)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(300)
      ->UseRealTime();
  benchmark::RegisterBenchmark("BigDoc/rockdoc", BigDocRockdoc)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(300)
      ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Register();
  rockdoc::bench::RatioReporter reporter({"written_B_per_update", "wal_B_per_update"});
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintRatios(reporter);
  benchmark::Shutdown();
  delete &TheEnv();
  return 0;
}

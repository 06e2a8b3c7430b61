// The storage paths of rockdoc beside raw RocksDB, in the same run, with the
// same RocksDB options (internal::MakeRocksOptions), the same keys (rockdoc's
// record keys: collection prefix + keystring(_id)) and the same values (the
// documents' BSON):
//
//   InsertMany/<engine>/<size>  batches of 1,000 documents; raw: a WriteBatch
//                               of 1,000 Puts                   (goal >= 0.7)
//   FindById/<engine>/<size>    random point reads on a warm data set; raw:
//                               DB::Get                         (goal >= 0.8)
//   Scan/<engine>/<size>        full collection scan through a Cursor; raw: an
//                               iterator over the same range    (goal >= 0.7)
//
// <engine> is rockdoc or raw; <size> the document size: ~300 bytes (200,000
// documents) or ~4 KB (50,000 documents). The raw baseline is a plain
// rocksdb::DB; rockdoc's is a TransactionDB, so the ratios include what
// transactions, validation and the API cost. Databases live under /tmp and
// are removed at exit. After the run, the ratios are printed. Rates are per
// CPU second of the calling thread (Google Benchmark's default): on a shared
// machine wall time measures the neighbours; RocksDB's background flushes
// and compactions are excluded alike for both engines.
#include <benchmark/benchmark.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "keystring/keystring.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/rocks.h"

namespace {

namespace fs = std::filesystem;
using rockdoc::BsonBuilder;
using rockdoc::Document;

constexpr int kBatch = 1000;

// A document of about `size` bytes: a few typed fields and filler text.
Document MakeDoc(int64_t id, size_t size, std::mt19937_64& rng) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  b.AppendString("name", "user" + std::to_string(rng() % 100000));
  b.AppendString("email", "u" + std::to_string(id) + "@example.com");
  b.AppendInt32("age", static_cast<int32_t>(18 + rng() % 70));
  b.AppendDouble("score", static_cast<double>(rng() % 100000) / 100.0);
  b.AppendBool("active", (rng() & 1) != 0);
  b.OpenArray("tags").AppendString("", "a").AppendString("", "b").Close();
  size_t used = 4 + 13 + 20 + 30 + 11 + 16 + 9 + 25 + 1;
  std::string pad;
  for (size_t i = used; i + 12 < size; ++i) pad.push_back(static_cast<char>('a' + rng() % 26));
  b.AppendString("bio", pad);
  return std::move(b).Build();
}

// One data set per document size, in both engines.
struct DataSet {
  size_t doc_size = 0;
  int64_t count = 0;
  std::vector<Document> docs;     // in insertion order (shuffled _ids)
  std::vector<std::string> keys;  // rockdoc's record key of docs[i]
  uint64_t bytes = 0;             // total BSON bytes
  std::string root;               // /tmp/rockdoc-storage-bench-XXXXXX
  std::unique_ptr<rockdoc::Client> client;
  rocksdb::DB* raw = nullptr;
  bool rockdoc_loaded = false, raw_loaded = false;

  std::string RockdocPath() const { return root + "/rockdoc"; }
  std::string RawPath() const { return root + "/raw"; }
  rockdoc::Collection Coll() const { return client->GetDatabase("bench").GetCollection("docs"); }

  void OpenRockdoc(bool fresh) {
    if (client) (void)client->Close();
    client.reset();
    if (fresh) fs::remove_all(RockdocPath());
    auto c = rockdoc::Client::Open(RockdocPath());
    if (!c.ok()) {
      std::fprintf(stderr, "open: %s\n", c.status().ToString().c_str());
      std::abort();
    }
    client = std::move(c).value();
  }
  void OpenRaw(bool fresh) {
    if (raw != nullptr) {
      (void)raw->Close();
      delete raw;
      raw = nullptr;
    }
    if (fresh) fs::remove_all(RawPath());
    rocksdb::Options o = rockdoc::internal::MakeRocksOptions(rockdoc::ClientOptions());
    o.create_if_missing = true;
    rocksdb::Status s = rocksdb::DB::Open(o, RawPath(), &raw);
    if (!s.ok()) {
      std::fprintf(stderr, "raw open: %s\n", s.ToString().c_str());
      std::abort();
    }
  }
  // Flushes memtables (rockdoc: Close flushes; raw: the same Flush) and
  // reopens, so that both engines read an equally shaped LSM tree.
  void FlushAndReopen() {
    OpenRockdoc(false);
    (void)raw->Flush(rocksdb::FlushOptions());
    OpenRaw(false);
  }

  void LoadRockdoc() {
    for (size_t i = 0; i < docs.size(); i += kBatch) {
      std::vector<Document> batch(docs.begin() + i,
                                  docs.begin() + std::min(docs.size(), i + kBatch));
      auto r = Coll().InsertMany(batch);
      if (!r.ok() || !r->ok()) std::abort();
    }
    rockdoc_loaded = true;
  }
  void LoadRaw() {
    for (size_t i = 0; i < docs.size(); i += kBatch) {
      rocksdb::WriteBatch wb;
      for (size_t j = i; j < std::min(docs.size(), i + kBatch); ++j)
        wb.Put(keys[j], docs[j].bytes());
      if (!raw->Write(rocksdb::WriteOptions(), &wb).ok()) std::abort();
    }
    raw_loaded = true;
  }
  // Both loaded, flushed, and every block read once.
  void EnsureWarm() {
    if (!rockdoc_loaded) {
      OpenRockdoc(true);
      LoadRockdoc();
    }
    if (!raw_loaded) {
      OpenRaw(true);
      LoadRaw();
    }
    FlushAndReopen();
    auto cursor = Coll().Find(Document());
    int64_t n = 0;
    while (cursor->Next()) ++n;
    std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator(rocksdb::ReadOptions()));
    int64_t m = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++m;
    if (n != count || m != count) {
      std::fprintf(stderr, "data set has %lld / %lld documents, expected %lld\n",
                   static_cast<long long>(n), static_cast<long long>(m),
                   static_cast<long long>(count));
      std::abort();
    }
  }

  ~DataSet() {
    client.reset();
    if (raw != nullptr) {
      (void)raw->Close();
      delete raw;
    }
    if (!root.empty()) fs::remove_all(root);
  }
};

// Closed explicitly before main returns: RocksDB must not be shut down
// from static destructors, after its own statics are gone.
std::map<size_t, std::unique_ptr<DataSet>>& DataSets() {
  static auto* sets = new std::map<size_t, std::unique_ptr<DataSet>>();
  return *sets;
}

DataSet& Data(size_t doc_size) {
  auto& slot = DataSets()[doc_size];
  if (!slot) {
    slot = std::make_unique<DataSet>();
    DataSet& d = *slot;
    d.doc_size = doc_size;
    d.count = doc_size < 1000 ? 200000 : 50000;
    std::vector<int64_t> ids(d.count);
    std::iota(ids.begin(), ids.end(), 0);
    std::mt19937_64 rng(doc_size);
    std::shuffle(ids.begin(), ids.end(), rng);
    for (int64_t id : ids) {
      d.docs.push_back(MakeDoc(id, doc_size, rng));
      d.bytes += d.docs.back().size();
      // Collection ids start at 1: the only collection has prefix 1.
      d.keys.push_back(
          rockdoc::internal::RecordKey(1, rockdoc::keystring::EncodeValue(*d.docs.back().begin())));
    }
    char tmpl[] = "/tmp/rockdoc-storage-bench-XXXXXX";
    d.root = mkdtemp(tmpl);
  }
  return *slot;
}

// ---- insertMany vs WriteBatch ----

void InsertRockdoc(benchmark::State& state, size_t size) {
  DataSet& d = Data(size);
  d.OpenRockdoc(true);
  size_t next = 0;
  for (auto _ : state) {
    std::vector<Document> batch(d.docs.begin() + next, d.docs.begin() + next + kBatch);
    auto r = d.Coll().InsertMany(batch);
    if (!r.ok() || !r->ok()) state.SkipWithError("insert failed");
    next += kBatch;
  }
  d.rockdoc_loaded = next == d.docs.size();
  state.SetItemsProcessed(static_cast<int64_t>(next));
  state.SetBytesProcessed(static_cast<int64_t>(d.bytes * next / d.docs.size()));
  state.SetLabel("mean doc " + std::to_string(d.bytes / d.docs.size()) + " B");
}

void InsertRaw(benchmark::State& state, size_t size) {
  DataSet& d = Data(size);
  d.OpenRaw(true);
  size_t next = 0;
  for (auto _ : state) {
    rocksdb::WriteBatch wb;
    for (size_t j = next; j < next + kBatch; ++j) wb.Put(d.keys[j], d.docs[j].bytes());
    if (!d.raw->Write(rocksdb::WriteOptions(), &wb).ok()) state.SkipWithError("write failed");
    next += kBatch;
  }
  d.raw_loaded = next == d.docs.size();
  state.SetItemsProcessed(static_cast<int64_t>(next));
  state.SetBytesProcessed(static_cast<int64_t>(d.bytes * next / d.docs.size()));
}

// ---- find by _id vs Get ----

void FindRockdoc(benchmark::State& state, size_t size) {
  DataSet& d = Data(size);
  d.EnsureWarm();
  rockdoc::Collection c = d.Coll();
  std::mt19937_64 rng(1);
  int64_t bytes = 0;
  for (auto _ : state) {
    const Document& doc = d.docs[rng() % d.docs.size()];
    auto found = c.FindById(*doc.begin());
    if (!found.ok() || !found->has_value()) {
      state.SkipWithError("not found");
      break;
    }
    bytes += static_cast<int64_t>((*found)->size());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

void FindRaw(benchmark::State& state, size_t size) {
  DataSet& d = Data(size);
  d.EnsureWarm();
  std::mt19937_64 rng(1);
  int64_t bytes = 0;
  for (auto _ : state) {
    const std::string& key = d.keys[rng() % d.keys.size()];
    // A fresh string per read, as FindById returns an owned document.
    std::string out;
    if (!d.raw->Get(rocksdb::ReadOptions(), key, &out).ok()) state.SkipWithError("not found");
    bytes += static_cast<int64_t>(out.size());
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

// ---- find by _id: the command layer vs the library call ----

// findOne({_id}) through Collection::FindOne, and the same query as a find
// command through Client::RunCommand (decoding the command, building the
// cursor reply): the command layer's overhead.
void FindOneById(benchmark::State& state, size_t size, bool command) {
  DataSet& d = Data(size);
  d.EnsureWarm();
  rockdoc::Collection c = d.Coll();
  std::mt19937_64 rng(1);
  int64_t bytes = 0;
  for (auto _ : state) {
    const Document& doc = d.docs[rng() % d.docs.size()];
    rockdoc::BsonBuilder filter;
    filter.AppendElement(*doc.begin());
    if (command) {
      rockdoc::BsonBuilder cmd;
      cmd.AppendString("find", "docs");
      cmd.AppendDocument("filter", std::move(filter).Build());
      cmd.AppendInt32("limit", 1);
      cmd.AppendBool("singleBatch", true);
      Document reply = d.client->RunCommand("bench", std::move(cmd).Build());
      if (reply.Get("ok").NumberAsDouble() != 1) {
        state.SkipWithError("command failed");
        break;
      }
      bytes += static_cast<int64_t>(reply.size());
    } else {
      auto found = c.FindOne(std::move(filter).Build());
      if (!found.ok() || !found->has_value()) {
        state.SkipWithError("not found");
        break;
      }
      bytes += static_cast<int64_t>((*found)->size());
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

// ---- updateOne by _id vs Get + Put ----

// {$inc: {n: 1}} on a random document: rockdoc locks, re-reads, applies the
// operator, checks and rewrites it in a transaction; the raw baseline reads
// the value and writes it back (same bytes, no transaction).
void UpdateRockdoc(benchmark::State& state, size_t size) {
  DataSet& d = Data(size);
  d.EnsureWarm();
  rockdoc::Collection c = d.Coll();
  std::mt19937_64 rng(2);
  Document inc = rockdoc::FromJson(R"({"$inc": {"n": 1}})").value();
  for (auto _ : state) {
    const Document& doc = d.docs[rng() % d.docs.size()];
    rockdoc::BsonBuilder f;
    f.AppendElement(*doc.begin());
    auto r = c.UpdateOne(std::move(f).Build(), inc);
    if (!r.ok() || r->modified_count != 1) state.SkipWithError("update failed");
  }
  state.SetItemsProcessed(state.iterations());
}

void UpdateRaw(benchmark::State& state, size_t size) {
  DataSet& d = Data(size);
  d.EnsureWarm();
  std::mt19937_64 rng(2);
  for (auto _ : state) {
    const std::string& key = d.keys[rng() % d.keys.size()];
    std::string value;
    if (!d.raw->Get(rocksdb::ReadOptions(), key, &value).ok() ||
        !d.raw->Put(rocksdb::WriteOptions(), key, value).ok()) {
      state.SkipWithError("update failed");
    }
  }
  state.SetItemsProcessed(state.iterations());
}

// ---- a transaction of 10 updates vs 10 single updates (issue 12) ----

void UpdatesOf10(benchmark::State& state, size_t size, bool in_transaction) {
  DataSet& d = Data(size);
  d.EnsureWarm();
  auto session = d.client->StartSession();
  if (!session.ok()) {
    state.SkipWithError("no session");
    return;
  }
  rockdoc::Collection c =
      in_transaction ? session->GetDatabase("bench").GetCollection("docs") : d.Coll();
  std::mt19937_64 rng(3);
  Document inc = rockdoc::FromJson(R"({"$inc": {"n": 1}})").value();
  auto ten_updates = [&]() -> rockdoc::Status {
    for (int i = 0; i < 10; ++i) {
      const Document& doc = d.docs[rng() % d.docs.size()];
      rockdoc::BsonBuilder f;
      f.AppendElement(*doc.begin());
      ROCKDOC_RETURN_IF_ERROR(c.UpdateOne(std::move(f).Build(), inc).status());
    }
    return rockdoc::Status::OK();
  };
  for (auto _ : state) {
    rockdoc::Status s = in_transaction
                            ? session->WithTransaction([&](rockdoc::Session&) { return ten_updates(); })
                            : ten_updates();
    if (!s.ok()) state.SkipWithError("updates failed");
  }
  state.SetItemsProcessed(state.iterations() * 10);
}

// ---- full scan vs iterator ----

void ScanRockdoc(benchmark::State& state, size_t size) {
  DataSet& d = Data(size);
  d.EnsureWarm();
  int64_t docs = 0, bytes = 0;
  for (auto _ : state) {
    auto cursor = d.Coll().Find(Document());
    while (cursor->Next()) {
      ++docs;
      bytes += static_cast<int64_t>(cursor->document().size());
    }
    if (!cursor->status().ok()) state.SkipWithError("scan failed");
  }
  state.SetItemsProcessed(docs);
  state.SetBytesProcessed(bytes);
}

void ScanRaw(benchmark::State& state, size_t size) {
  DataSet& d = Data(size);
  d.EnsureWarm();
  // The same range and read options as rockdoc's collection scan.
  std::string lower = rockdoc::internal::PrefixKey(1), upper = rockdoc::internal::PrefixKey(2);
  int64_t docs = 0, bytes = 0;
  for (auto _ : state) {
    rocksdb::ReadOptions ro;
    rocksdb::Slice lo(lower), hi(upper);
    ro.iterate_lower_bound = &lo;
    ro.iterate_upper_bound = &hi;
    ro.adaptive_readahead = true;
    const rocksdb::Snapshot* snap = d.raw->GetSnapshot();
    ro.snapshot = snap;
    std::unique_ptr<rocksdb::Iterator> it(d.raw->NewIterator(ro));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++docs;
      // Read the BSON length, as a consumer of the document would.
      int32_t len;
      std::memcpy(&len, it->value().data(), 4);
      bytes += len;
    }
    if (!it->status().ok()) state.SkipWithError("scan failed");
    it.reset();
    d.raw->ReleaseSnapshot(snap);
  }
  state.SetItemsProcessed(docs);
  state.SetBytesProcessed(bytes);
}

// Collects items/s per benchmark name to print the ratios at the end.
// rockdoc / raw for every rockdoc benchmark that has a raw twin.
void PrintRatios(const rockdoc::bench::RatioReporter& reporter) {
  std::printf("\nrockdoc / raw RocksDB (items per second):\n");
  for (const auto& [name, rate] : reporter.rates()) {
    size_t at = name.find("/rockdoc/");
    if (at == std::string::npos) continue;
    std::string raw = name;
    raw.replace(at, 9, "/raw/");
    std::string op = name.substr(0, name.find('/'));
    reporter.Ratio(name, name, raw, op == "FindById" ? 0.8 : 0.7);
  }
  std::printf("\nfind by _id, RunCommand / Collection::FindOne (the command layer's cost):\n");
  reporter.Ratio("find command / FindOne", "FindOneById/runCommand/300", "FindOneById/findOne/300",
                 0.85);
  std::printf("\ndocuments updated per second, 10 updates in one transaction / 10 single updates:\n");
  reporter.Ratio("Updates10 transaction / single", "Updates10/transaction/300",
                 "Updates10/single/300", 0);
}

void Register() {
  for (size_t size : {size_t{300}, size_t{4096}}) {
    std::string s = std::to_string(size);
    int64_t batches = (size < 1000 ? 200000 : 50000) / kBatch;
    // Interleave engines so neither always runs on a cooler machine.
    benchmark::RegisterBenchmark(("InsertMany/raw/" + s).c_str(), InsertRaw, size)
        ->Iterations(batches)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("InsertMany/rockdoc/" + s).c_str(), InsertRockdoc, size)
        ->Iterations(batches)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("FindById/raw/" + s).c_str(), FindRaw, size)->MinTime(2.0);
    benchmark::RegisterBenchmark(("FindById/rockdoc/" + s).c_str(), FindRockdoc, size)
        ->MinTime(2.0);
    benchmark::RegisterBenchmark(("UpdateOne/raw/" + s).c_str(), UpdateRaw, size)->MinTime(2.0);
    benchmark::RegisterBenchmark(("UpdateOne/rockdoc/" + s).c_str(), UpdateRockdoc, size)
        ->MinTime(2.0);
    if (size < 1000) {
      benchmark::RegisterBenchmark("FindOneById/findOne/300", FindOneById, size, false)
          ->MinTime(2.0);
      benchmark::RegisterBenchmark("FindOneById/runCommand/300", FindOneById, size, true)
          ->MinTime(2.0);
      benchmark::RegisterBenchmark("Updates10/single/300", UpdatesOf10, size, false)->MinTime(2.0);
      benchmark::RegisterBenchmark("Updates10/transaction/300", UpdatesOf10, size, true)
          ->MinTime(2.0);
    }
    benchmark::RegisterBenchmark(("Scan/raw/" + s).c_str(), ScanRaw, size)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(2.0);
    benchmark::RegisterBenchmark(("Scan/rockdoc/" + s).c_str(), ScanRockdoc, size)
        ->Unit(benchmark::kMillisecond)
        ->MinTime(2.0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int status = rockdoc::bench::RunRatioBenchmarks(argc, argv, Register, PrintRatios);
  DataSets().clear();
  return status;
}

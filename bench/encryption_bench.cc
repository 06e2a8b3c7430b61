// What encryption at rest (ClientOptions::encryption_key) costs: the same
// workloads on two databases of the same documents, one plain and one
// encrypted, in the same run, the ratio encrypted / plain printed at the end.
//
//   InsertMany/<mode>       batches of 1,000 ~300-byte documents (the log
//                           and the flushed table files are encrypted)
//   FindByIdWarm/<mode>     random point reads, the block cache holding the
//                           data set (decrypted blocks: nothing to decrypt)
//   FindByIdCold/<mode>     the same with a 4 MiB block cache over ~60 MB of
//                           data: most reads fetch a block from the OS page
//                           cache and decrypt it
//   Scan/<mode>             a full collection scan, cold cache as above
//
// <mode> is plain or encrypted. Wall time (UseRealTime): the encryption of
// writes happens partly in RocksDB's background threads. Ratios, not
// absolute rates, are the result; run on a quiet machine.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"

namespace {

namespace fs = std::filesystem;
using rockdoc::BsonBuilder;
using rockdoc::Document;

constexpr int64_t kDocs = 200000;
constexpr int kBatch = 1000;

Document MakeDoc(int64_t id, std::mt19937_64& rng) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  b.AppendString("name", "user" + std::to_string(rng() % 100000));
  b.AppendInt32("age", static_cast<int32_t>(18 + rng() % 70));
  std::string pad;
  for (int i = 0; i < 240; ++i) pad.push_back(static_cast<char>('a' + rng() % 26));
  b.AppendString("bio", pad);
  return std::move(b).Build();
}

struct Db {
  std::string root;
  std::unique_ptr<rockdoc::Client> warm;  // a large block cache
  std::unique_ptr<rockdoc::Client> cold;  // reopened with a 4 MiB one
};

rockdoc::ClientOptions Options(bool encrypted, size_t cache_bytes) {
  rockdoc::ClientOptions o;
  if (encrypted) o.encryption_key = std::string(32, 'k');
  o.block_cache_bytes = cache_bytes;
  o.record_cache_bytes = 0;  // reads go to RocksDB, where encryption is
  return o;
}

Db g_dbs[2];

// The loaded database of each mode, made once.
Db& Loaded(bool encrypted) {
  Db& db = g_dbs[encrypted ? 1 : 0];
  if (!db.root.empty()) return db;
  std::string tmpl = (fs::temp_directory_path() / "rockdoc-encryption-bench-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) rockdoc::bench::Die("mkdtemp");
  db.root = tmpl;
  {
    auto client = rockdoc::bench::Check(
        rockdoc::Client::Open(db.root + "/db", Options(encrypted, size_t{256} << 20)), "open");
    rockdoc::Collection c = client->GetDatabase("b").GetCollection("c");
    std::mt19937_64 rng(1);
    std::vector<Document> batch;
    for (int64_t i = 0; i < kDocs; ++i) {
      batch.push_back(MakeDoc(i, rng));
      if (batch.size() == kBatch) {
        rockdoc::bench::Check(c.InsertMany(batch), "insert");
        batch.clear();
      }
    }
    rockdoc::bench::Check(client->Compact(), "compact");
  }
  db.warm = rockdoc::bench::Check(
      rockdoc::Client::Open(db.root + "/db", Options(encrypted, size_t{256} << 20)), "open warm");
  return db;
}

void InsertMany(benchmark::State& state, bool encrypted) {
  std::string tmpl = (fs::temp_directory_path() / "rockdoc-encryption-insert-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) rockdoc::bench::Die("mkdtemp");
  auto client = rockdoc::bench::Check(
      rockdoc::Client::Open(tmpl + "/db", Options(encrypted, size_t{64} << 20)), "open");
  rockdoc::Collection c = client->GetDatabase("b").GetCollection("c");
  std::mt19937_64 rng(2);
  int64_t next = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Document> batch;
    for (int i = 0; i < kBatch; ++i) batch.push_back(MakeDoc(next++, rng));
    state.ResumeTiming();
    rockdoc::bench::Check(c.InsertMany(batch), "insert");
  }
  state.SetItemsProcessed(next);
  client.reset();
  fs::remove_all(tmpl);
}

void FindById(benchmark::State& state, bool encrypted, bool cold) {
  Db& db = Loaded(encrypted);
  if (cold && db.cold == nullptr) {
    db.warm.reset();
    db.cold = rockdoc::bench::Check(
        rockdoc::Client::Open(db.root + "/db", Options(encrypted, size_t{4} << 20)), "open cold");
  }
  if (!cold && db.warm == nullptr) {
    db.cold.reset();
    db.warm = rockdoc::bench::Check(
        rockdoc::Client::Open(db.root + "/db", Options(encrypted, size_t{256} << 20)),
        "open warm");
  }
  rockdoc::Collection c = (cold ? db.cold : db.warm)->GetDatabase("b").GetCollection("c");
  std::mt19937_64 rng(3);
  int64_t n = 0;
  for (auto _ : state) {
    BsonBuilder f;
    f.AppendInt64("_id", static_cast<int64_t>(rng() % kDocs));
    Document filter = std::move(f).Build();
    auto doc = c.FindOne(filter);
    if (!doc.ok() || !doc->has_value()) rockdoc::bench::Die("not found");
    ++n;
  }
  state.SetItemsProcessed(n);
}

void Scan(benchmark::State& state, bool encrypted) {
  Db& db = Loaded(encrypted);
  if (db.cold == nullptr) {
    db.warm.reset();
    db.cold = rockdoc::bench::Check(
        rockdoc::Client::Open(db.root + "/db", Options(encrypted, size_t{4} << 20)), "open cold");
  }
  rockdoc::Collection c = db.cold->GetDatabase("b").GetCollection("c");
  int64_t n = 0;
  for (auto _ : state) {
    auto cursor = rockdoc::bench::Check(c.Find(Document()), "find");
    while (cursor.Next()) ++n;
  }
  state.SetItemsProcessed(n);
}

void Register() {
  for (bool encrypted : {false, true}) {
    const std::string mode = encrypted ? "encrypted" : "plain";
    benchmark::RegisterBenchmark(("InsertMany/" + mode).c_str(), InsertMany, encrypted)
        ->UseRealTime()
        ->Iterations(200);
  }
  for (bool encrypted : {false, true}) {
    const std::string mode = encrypted ? "encrypted" : "plain";
    benchmark::RegisterBenchmark(("FindByIdWarm/" + mode).c_str(), FindById, encrypted, false)
        ->UseRealTime()
        ->MinTime(1.0);
  }
  for (bool encrypted : {false, true}) {
    const std::string mode = encrypted ? "encrypted" : "plain";
    benchmark::RegisterBenchmark(("FindByIdCold/" + mode).c_str(), FindById, encrypted, true)
        ->UseRealTime()
        ->MinTime(1.0);
    benchmark::RegisterBenchmark(("Scan/" + mode).c_str(), Scan, encrypted)
        ->UseRealTime()
        ->Iterations(3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int status = rockdoc::bench::RunRatioBenchmarks(
      argc, argv, Register, [](const rockdoc::bench::RatioReporter& reporter) {
        std::printf("encrypted / plain:\n");
        for (const char* row : {"InsertMany", "FindByIdWarm", "FindByIdCold", "Scan"}) {
          reporter.Ratio(row, std::string(row) + "/encrypted", std::string(row) + "/plain");
        }
      });
  for (Db& db : g_dbs) {
    db.warm.reset();
    db.cold.reset();
    if (!db.root.empty()) fs::remove_all(db.root);
  }
  return status;
}

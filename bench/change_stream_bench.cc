// What issue 37 asks to measure of change streams, apart from the write
// cost (statistics_bench --switch change_log):
//
//   delivery   in process, one writer and one watcher thread: the time from
//              just before an insertOne to the watcher's Next returning its
//              event, p50 / p99 / max over --events inserts, each made once
//              the previous one was delivered (a quiet machine's latency, not
//              a throughput). Beside it, in the same run, insertOne alone
//              (log on, no watcher): what of the latency is the commit.
//   log size   --docs documents of ~300 bytes inserted with
//              change_log_max_bytes = --log-mib: the log's approximate bytes,
//              its table files after a flush (close and reopen), and the
//              documents' own table files, beside the bound; and the
//              log's memtables (its memory) after the inserts.
//   live query a live query of the 10 highest k of --docs documents (index on
//              k), on its own thread: the time from just before an update
//              that makes a document the highest to its `added` callback,
//              p50 / p99 beside the same query re-run (what an application
//              without live queries does after each change); then 20,000
//              random $inc updates, most of which leave the result as it is,
//              and how long the live query takes to have applied them all,
//              beside the writer's own time.
//
// No timing is asserted anywhere: this is a measurement.
//
//   change_stream_bench [--events N] [--docs N] [--log-mib M] [--dir D]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "bench_util.h"
#include "rockdoc/client.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using rockdoc::BsonBuilder;
using rockdoc::Document;

using rockdoc::bench::Check;
using rockdoc::bench::Die;

// ~300 bytes, as the other benchmarks' documents.
Document Doc(int64_t id, std::mt19937_64& rng) {
  std::string text(250, ' ');
  for (char& c : text) c = static_cast<char>('a' + rng() % 26);
  BsonBuilder b;
  b.AppendInt64("_id", id).AppendInt64("k", static_cast<int64_t>(rng() % 1000000));
  b.AppendString("text", text);
  return std::move(b).Build();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

void Report(const char* what, const std::vector<double>& us) {
  std::printf("%-34s p50 %8.1f us  p99 %8.1f us  max %8.1f us  (%zu)\n", what,
              Percentile(us, 0.5), Percentile(us, 0.99), Percentile(us, 1.0), us.size());
}

// `docs` documents (_id 0 ..), inserted in batches of 1,000.
void Load(const rockdoc::Collection& c, int64_t docs, std::mt19937_64& rng) {
  std::vector<Document> batch;
  for (int64_t id = 0; id < docs; ++id) {
    batch.push_back(Doc(id, rng));
    if (batch.size() == 1000 || id + 1 == docs) {
      Check(c.InsertMany(batch), "insertMany");
      batch.clear();
    }
  }
}

std::unique_ptr<rockdoc::Client> Open(const std::string& dir, int64_t log_bytes) {
  rockdoc::ClientOptions o;
  o.change_log = true;
  o.change_log_max_bytes = log_bytes;
  return Check(rockdoc::Client::Open(dir, o), "open");
}

}  // namespace

int main(int argc, char** argv) {
  int64_t events = 10000, docs = 200000, log_mib = 16;
  std::string dir = "/tmp";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--events") {
      events = std::atoll(next().c_str());
    } else if (a == "--docs") {
      docs = std::atoll(next().c_str());
    } else if (a == "--log-mib") {
      log_mib = std::atoll(next().c_str());
    } else if (a == "--dir") {
      dir = next();
    } else {
      Die("unknown option " + a + " (--events N, --docs N, --log-mib M, --dir D)");
    }
  }
  if (events < 1 || docs < 1 || log_mib < 1) Die("--events, --docs and --log-mib must be positive");
  const std::string root = dir + "/change_stream_bench." + std::to_string(::getpid());
  fs::remove_all(root);
  fs::create_directories(root);
  std::mt19937_64 rng(37);

  {  // delivery
    auto client = Open(root + "/delivery", int64_t{256} << 20);
    rockdoc::Collection c = client->GetDatabase("bench").GetCollection("c");
    std::vector<double> alone;
    for (int64_t i = 0; i < events; ++i) {
      const auto t0 = Clock::now();
      Check(c.InsertOne(Doc(i, rng)), "insertOne");
      alone.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    rockdoc::ChangeStreamOptions wait_long;
    wait_long.max_await_time_ms = 60000;
    rockdoc::ChangeStream stream = Check(c.Watch({}, wait_long), "watch");
    std::vector<Clock::time_point> sent(events), received(events);
    std::atomic<int64_t> delivered{0};
    std::thread watcher([&] {
      for (int64_t n = 0; n < events;) {
        std::optional<Document> e = Check(stream.Next(), "next");
        if (!e) continue;
        received[n++] = Clock::now();
        delivered.store(n, std::memory_order_release);
      }
    });
    std::vector<double> delivery;
    for (int64_t i = 0; i < events; ++i) {
      sent[i] = Clock::now();
      Check(c.InsertOne(Doc(events + i, rng)), "insertOne");
      // The next insert once this one is delivered: a quiet machine's case.
      while (delivered.load(std::memory_order_acquire) <= i) std::this_thread::yield();
    }
    watcher.join();
    for (int64_t i = 0; i < events; ++i) {
      delivery.push_back(std::chrono::duration<double, std::micro>(received[i] - sent[i]).count());
    }
    Report("insertOne alone (log on)", alone);
    Report("insertOne to the watcher's Next", delivery);
    Check(client->Close(), "close");
  }

  {  // live query
    auto client = Open(root + "/live", int64_t{256} << 20);
    rockdoc::Collection c = client->GetDatabase("bench").GetCollection("c");
    Load(c, docs, rng);
    BsonBuilder key;
    key.AppendInt32("k", -1);
    const Document by_k = std::move(key).Build();
    Check(c.CreateIndex(by_k), "createIndex");
    std::atomic<bool> measuring{false};
    std::atomic<int64_t> added{0};
    const int64_t rounds = std::min<int64_t>(events, 5000);
    std::vector<Clock::time_point> got(rounds + 1);
    rockdoc::ObserveOptions top;
    top.sort = by_k;
    top.limit = 10;
    rockdoc::ObserveCallbacks cb;
    cb.added = [&](const rockdoc::Value&, const Document&, const std::optional<rockdoc::Value>&) {
      if (!measuring.load(std::memory_order_acquire)) return;
      const int64_t n = added.load(std::memory_order_relaxed);
      if (n <= rounds) got[n] = Clock::now();
      added.store(n + 1, std::memory_order_release);
    };
    rockdoc::LiveQuery live = Check(c.Observe(Document(), top, cb), "observe");
    measuring.store(true, std::memory_order_release);
    auto set_k = [&](int64_t id, int64_t k) {
      BsonBuilder f, set, u;
      f.AppendInt64("_id", id);
      set.AppendInt64("k", k);
      u.AppendDocument("$set", std::move(set).Build());
      Check(c.UpdateOne(std::move(f).Build(), std::move(u).Build()), "updateOne");
    };
    std::vector<double> delivery, rerun;
    for (int64_t i = 0; i < rounds; ++i) {
      const auto t0 = Clock::now();
      set_k(static_cast<int64_t>(rng() % docs), 2000000 + i);  // the new highest
      while (added.load(std::memory_order_acquire) <= i) std::this_thread::yield();
      delivery.push_back(std::chrono::duration<double, std::micro>(got[i] - t0).count());
    }
    rockdoc::FindOptions again;
    again.sort = by_k;
    again.limit = 10;
    for (int64_t i = 0; i < rounds; ++i) {
      const auto t0 = Clock::now();
      Check(Check(c.Find(Document(), again), "find").ToVector(), "toArray");
      rerun.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    Report("update to the live query's added", delivery);
    Report("the query re-run (index on k)", rerun);
    // Throughput: random $inc updates, then one that enters the result, which
    // the query reports once it has applied every update before it.
    constexpr int kUpdates = 20000;
    const int64_t before = added.load(std::memory_order_acquire);
    const auto w0 = Clock::now();
    for (int i = 0; i < kUpdates; ++i) {
      BsonBuilder f, inc, u;
      f.AppendInt64("_id", static_cast<int64_t>(rng() % docs));
      inc.AppendInt32("k", 1);
      u.AppendDocument("$inc", std::move(inc).Build());
      Check(c.UpdateOne(std::move(f).Build(), std::move(u).Build()), "updateOne");
    }
    set_k(0, 3000000);
    const double writer_s = std::chrono::duration<double>(Clock::now() - w0).count();
    while (added.load(std::memory_order_acquire) <= before) std::this_thread::yield();
    const double applied_s = std::chrono::duration<double>(Clock::now() - w0).count();
    std::printf("live query over %lld documents: %d $inc updates written in %.2f s (%.0f/s), "
                "all applied by the live query %.2f s after the first (%.0f/s); requeries %lld\n",
                static_cast<long long>(docs), kUpdates, writer_s, kUpdates / writer_s, applied_s,
                kUpdates / applied_s, static_cast<long long>(live.requeries()));
    live.Stop();
    Check(client->Close(), "close");
  }

  {  // log size under a bound
    const int64_t bound = log_mib << 20;
    const std::string path = root + "/size";
    auto client = Open(path, bound);
    rockdoc::Collection c = client->GetDatabase("bench").GetCollection("c");
    Load(c, docs, rng);
    const rockdoc::StorageStats before = client->GetStorageStats();
    std::printf("log memory: its memtables %.1f MiB after the inserts (RocksDB's write buffer, "
                "flushed to table files when full)\n",
                static_cast<double>(before.change_log_memtable_bytes) / (1 << 20));
    Check(client->Close(), "close");
    client = Open(path, bound);  // the close flushed the memtables
    const rockdoc::StorageStats after = client->GetStorageStats();
    std::printf("log size: %lld documents, change_log_max_bytes %lld MiB: log %.1f MiB "
                "(approximate, before close), log table files %.1f MiB; documents' table "
                "files %.1f MiB\n",
                static_cast<long long>(docs), static_cast<long long>(log_mib),
                static_cast<double>(before.change_log_bytes) / (1 << 20),
                static_cast<double>(after.change_log_sst_bytes) / (1 << 20),
                static_cast<double>(after.live_sst_bytes) / (1 << 20));
    Check(client->Close(), "close");
  }
  fs::remove_all(root);
  return 0;
}

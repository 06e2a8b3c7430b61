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
//              documents' own table files, beside the bound.
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

  {  // log size under a bound
    const int64_t bound = log_mib << 20;
    const std::string path = root + "/size";
    auto client = Open(path, bound);
    rockdoc::Collection c = client->GetDatabase("bench").GetCollection("c");
    std::vector<Document> batch;
    for (int64_t id = 0; id < docs; ++id) {
      batch.push_back(Doc(id, rng));
      if (batch.size() == 1000 || id + 1 == docs) {
        Check(c.InsertMany(batch), "insertMany");
        batch.clear();
      }
    }
    const rockdoc::StorageStats before = client->GetStorageStats();
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

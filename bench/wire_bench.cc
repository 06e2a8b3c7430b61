// What rockdoc serve costs per operation: findOne by _id and insertMany of
// 1,000 documents through the embedded API, through Client::RunCommand (the
// command layer the server dispatches to), and through the wire layer over
// loopback TCP with raw OP_MSG (an in-process wire::Server, no driver), each
// with 1, 4 and 16 threads (connections). The Node.js driver's figures for
// the same work: bench/wire/node_bench.js.
//
//   build/bench/wire_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "common/endian.h"
#include "rockdoc/client.h"
#include "wire/message.h"
#include "wire/server.h"

namespace {

using rockdoc::BsonBuilder;
using rockdoc::Document;

constexpr int kDocs = 10000;

// One database with kDocs documents {_id: i, v: 100 bytes} and a server on it.
struct Fixture {
  std::string dir;
  std::unique_ptr<rockdoc::Client> client;
  std::unique_ptr<rockdoc::wire::Server> server;
  Fixture() {
    dir = (std::filesystem::temp_directory_path() / "rockdoc-wire-bench-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    client = std::move(*rockdoc::Client::Open(dir + "/db"));
    auto c = client->GetDatabase("bench").GetCollection("find");
    std::vector<Document> docs;
    for (int i = 0; i < kDocs; ++i) {
      BsonBuilder b;
      b.AppendInt32("_id", i);
      b.AppendString("v", std::string(100, 'x'));
      docs.push_back(std::move(b).Build());
    }
    if (!c.InsertMany(docs).ok()) std::abort();
    rockdoc::wire::ServerOptions options;
    options.port = 0;
    server = std::move(*rockdoc::wire::Server::Start(client.get(), options));
  }
  ~Fixture() {
    server.reset();
    client.reset();
    std::filesystem::remove_all(dir);
  }
};

Fixture& F() {
  static Fixture* f = new Fixture();  // lives for the process: threads share it
  return *f;
}

Document IdFilter(int i) {
  BsonBuilder b;
  b.AppendInt32("_id", i);
  return std::move(b).Build();
}

Document FindCommand(int i, bool with_db) {
  BsonBuilder b;
  b.AppendString("find", "find");
  b.OpenDocument("filter");
  b.AppendInt32("_id", i);
  b.Close();
  b.AppendInt32("limit", 1);
  b.AppendBool("singleBatch", true);
  if (with_db) b.AppendString("$db", "bench");
  return std::move(b).Build();
}

std::vector<Document> Batch(int base) {
  std::vector<Document> docs;
  for (int j = 0; j < 1000; ++j) {
    BsonBuilder b;
    b.AppendInt32("_id", base + j);
    b.AppendString("v", std::string(100, 'x'));
    docs.push_back(std::move(b).Build());
  }
  return docs;
}

std::atomic<int> next_base{0};

void BM_EmbeddedFindOneById(benchmark::State& state) {
  auto c = F().client->GetDatabase("bench").GetCollection("find");
  int i = static_cast<int>(state.thread_index()) * 7919;
  for (auto _ : state) {
    auto r = c.FindOne(IdFilter(i++ % kDocs));
    if (!r.ok() || !r->has_value()) state.SkipWithError("not found");
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_RunCommandFindById(benchmark::State& state) {
  int i = static_cast<int>(state.thread_index()) * 7919;
  for (auto _ : state) {
    Document r = F().client->RunCommand("bench", FindCommand(i++ % kDocs, false));
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

// A connection of the benchmark thread to the in-process server.
class Connection {
 public:
  Connection() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(F().server->port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::abort();
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Connection() { close(fd_); }
  // Sends a message and reads its reply whole.
  size_t RoundTrip(const std::string& message) {
    if (send(fd_, message.data(), message.size(), 0) != static_cast<ssize_t>(message.size())) {
      std::abort();
    }
    char header[16];
    ReadN(header, 16);
    const int32_t length = rockdoc::LoadLE<int32_t>(reinterpret_cast<uint8_t*>(header));
    buffer_.resize(length - 16);
    ReadN(buffer_.data(), buffer_.size());
    return static_cast<size_t>(length);
  }

 private:
  void ReadN(char* out, size_t n) {
    while (n > 0) {
      ssize_t got = recv(fd_, out, n, 0);
      if (got <= 0) std::abort();
      out += got;
      n -= got;
    }
  }
  int fd_;
  std::string buffer_;
};

void BM_WireFindById(benchmark::State& state) {
  Connection conn;
  int i = static_cast<int>(state.thread_index()) * 7919;
  for (auto _ : state) {
    conn.RoundTrip(rockdoc::wire::BuildOpMsg(1, 0, 0, FindCommand(i++ % kDocs, true)));
  }
  state.SetItemsProcessed(state.iterations());
}

// The same with an lsid, as every driver sends one (an implicit session
// per operation; one per thread here).
void BM_WireFindByIdWithLsid(benchmark::State& state) {
  Connection conn;
  int i = static_cast<int>(state.thread_index()) * 7919;
  const std::string uuid(16, static_cast<char>(state.thread_index() + 1));
  for (auto _ : state) {
    BsonBuilder b;
    for (rockdoc::Element e : FindCommand(i++ % kDocs, true)) b.AppendElement(e);
    b.OpenDocument("lsid");
    b.AppendBinary("id", rockdoc::BinarySubtype::kUuid, uuid);
    b.Close();
    conn.RoundTrip(rockdoc::wire::BuildOpMsg(1, 0, 0, std::move(b).Build()));
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_EmbeddedInsertMany1000(benchmark::State& state) {
  auto c = F().client->GetDatabase("bench").GetCollection("insert_embedded");
  for (auto _ : state) {
    if (!c.InsertMany(Batch(next_base.fetch_add(1000))).ok()) state.SkipWithError("insert");
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}

void BM_WireInsertMany1000(benchmark::State& state) {
  Connection conn;
  for (auto _ : state) {
    state.PauseTiming();
    // The message a driver sends: the documents as an OP_MSG document
    // sequence (built outside the timing, as the driver's work).
    std::string payload;
    rockdoc::AppendLE<uint32_t>(&payload, 0);
    payload.push_back('\0');
    BsonBuilder body;
    body.AppendString("insert", "insert_wire");
    body.AppendString("$db", "bench");
    payload += std::move(body).Build().bytes();
    std::string seq = "documents";
    seq.push_back('\0');
    for (const Document& d : Batch(next_base.fetch_add(1000))) seq += d.bytes();
    payload.push_back('\1');
    rockdoc::AppendLE<int32_t>(&payload, static_cast<int32_t>(seq.size() + 4));
    payload += seq;
    std::string message;
    rockdoc::AppendLE<int32_t>(&message, static_cast<int32_t>(16 + payload.size()));
    rockdoc::AppendLE<int32_t>(&message, 1);
    rockdoc::AppendLE<int32_t>(&message, 0);
    rockdoc::AppendLE<int32_t>(&message, 2013);
    message += payload;
    state.ResumeTiming();
    conn.RoundTrip(message);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}

BENCHMARK(BM_EmbeddedFindOneById)->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
BENCHMARK(BM_RunCommandFindById)->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
BENCHMARK(BM_WireFindById)->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
BENCHMARK(BM_WireFindByIdWithLsid)->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
BENCHMARK(BM_EmbeddedInsertMany1000)->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
BENCHMARK(BM_WireInsertMany1000)->Threads(1)->Threads(4)->Threads(16)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

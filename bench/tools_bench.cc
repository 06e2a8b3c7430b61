// The tools (src/tools/) against their physical limits, in one run:
//  - dump and restore of N documents (~300 bytes each; N = 1,000,000 by
//    default, ROCKDOC_TOOLS_BENCH_DOCS to change it; two secondary indexes,
//    which the restore rebuilds), in MB/s and docs/s,
//    beside a raw sequential read and write of the same bytes (the .bson
//    file copied with read()/write(): what any dump or restore must at
//    least do);
//  - import of the same N documents as JSON lines beside InsertMany of the
//    same documents already parsed (the cost of the parse and the tool).
// Each benchmark runs once (Iterations(1)): the work is the whole data set.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "rockdoc/tools.h"

namespace rockdoc::bench {
namespace {

namespace fs = std::filesystem;

size_t DocCount() {
  const char* env = std::getenv("ROCKDOC_TOOLS_BENCH_DOCS");
  return env != nullptr ? static_cast<size_t>(std::atoll(env)) : 1000000;
}

std::string Root() {
  static std::string root = [] {
    std::string tmpl = (fs::temp_directory_path() / "rockdoc-tools-bench-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    if (made == nullptr) std::abort();
    return std::string(made);
  }();
  return root;
}

// ~300-byte documents of mixed types.
Document MakeDoc(size_t i) {
  BsonBuilder b;
  b.AppendInt64("_id", static_cast<int64_t>(i));
  b.AppendString("name", "customer-" + std::to_string(i * 7919 % 100000));
  b.AppendInt32("age", static_cast<int32_t>(18 + i % 70));
  b.AppendDouble("balance", static_cast<double>(i % 100000) / 7.0);
  b.AppendDateTime("since", 1600000000000 + static_cast<int64_t>(i) * 1000);
  b.AppendBool("active", i % 3 != 0);
  b.OpenDocument("address");
  b.AppendString("street", std::to_string(i % 999) + " Long Street Name Avenue");
  b.AppendString("city", "City" + std::to_string(i % 500));
  b.AppendString("zip", std::to_string(10000 + i % 89999));
  b.Close();
  b.OpenArray("tags");
  for (size_t t = 0; t < 3; ++t) b.AppendString("", "tag" + std::to_string((i + t) % 40));
  b.Close();
  b.AppendString("notes", std::string(120, static_cast<char>('a' + i % 26)));
  return std::move(b).Build();
}

struct Data {
  std::vector<Document> docs;
  int64_t bytes = 0;
};

const Data& GetData() {
  static Data d = [] {
    Data d;
    for (size_t i = 0; i < DocCount(); ++i) {
      d.docs.push_back(MakeDoc(i));
      d.bytes += static_cast<int64_t>(d.docs.back().size());
    }
    return d;
  }();
  return d;
}

// The source database, filled once.
const std::string& SourceDb() {
  static std::string path = [] {
    std::string p = Root() + "/src";
    auto client = Client::Open(p);
    if (!client.ok()) std::abort();
    const Data& d = GetData();
    Collection c = (*client)->GetDatabase("bench").GetCollection("docs");
    for (size_t i = 0; i < d.docs.size(); i += 10000) {
      std::vector<Document> batch(d.docs.begin() + static_cast<long>(i),
                                  d.docs.begin() + static_cast<long>(std::min(d.docs.size(), i + 10000)));
      if (!c.InsertMany(batch).ok()) std::abort();
    }
    // Two secondary indexes, as a real collection has: a restore rebuilds them.
    auto json = [](const char* text) {
      auto d = FromJson(text);
      if (!d.ok()) std::abort();
      return *std::move(d);
    };
    if (!c.CreateIndex(json(R"({"name": 1})")).ok()) std::abort();
    if (!c.CreateIndex(json(R"({"address.city": 1, "age": 1})")).ok()) std::abort();
    return p;
  }();
  return path;
}

void Report(benchmark::State& state, int64_t bytes, size_t docs) {
  state.SetBytesProcessed(bytes);
  state.SetItemsProcessed(static_cast<int64_t>(docs));
}

void Dump(benchmark::State& state) {
  const std::string& src = SourceDb();
  auto client = Client::Open(src);
  if (!client.ok()) return state.SkipWithError("open");
  for (auto _ : state) {
    fs::remove_all(Root() + "/dump");
    tools::DumpOptions o;
    o.out = Root() + "/dump";
    auto r = tools::Dump(**client, o);
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
  }
  Report(state, GetData().bytes, GetData().docs.size());
}
BENCHMARK(Dump)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void Restore(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(Root() + "/restored");
    auto client = Client::Open(Root() + "/restored");
    if (!client.ok()) return state.SkipWithError("open");
    state.ResumeTiming();
    tools::RestoreOptions o;
    o.dir = Root() + "/dump";
    auto r = tools::Restore(**client, o);
    if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    if (!(*client)->Close().ok()) return state.SkipWithError("close");
  }
  Report(state, GetData().bytes, GetData().docs.size());
}
BENCHMARK(Restore)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same bytes read and written sequentially: the dump's .bson file
// copied with read()/write() in 1 MiB blocks, fsync included as Close does
// not, so that the page cache does not flatter it.
void RawSequentialReadWrite(benchmark::State& state) {
  const std::string in_path = Root() + "/dump/bench/docs.bson";
  const std::string out_path = Root() + "/raw-copy.bson";
  std::vector<char> buf(1 << 20);
  int64_t total = 0;
  for (auto _ : state) {
    int in = ::open(in_path.c_str(), O_RDONLY);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) return state.SkipWithError("open (run Dump first)");
    ssize_t n;
    while ((n = ::read(in, buf.data(), buf.size())) > 0) {
      if (::write(out, buf.data(), static_cast<size_t>(n)) != n) return state.SkipWithError("write");
      total += n;
    }
    ::fsync(out);
    ::close(in);
    ::close(out);
  }
  Report(state, total, GetData().docs.size());
}
BENCHMARK(RawSequentialReadWrite)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The documents as JSON lines (canonical Extended JSON: lossless), written once.
const std::string& JsonLinesFile() {
  static std::string path = [] {
    std::string p = Root() + "/docs.json";
    std::string text;
    for (const Document& d : GetData().docs) {
      text += ToJson(d, JsonFormat::kCanonical);
      text.push_back('\n');
    }
    FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size()) std::abort();
    std::fclose(f);
    return p;
  }();
  return path;
}

void Import(benchmark::State& state) {
  const std::string& file = JsonLinesFile();
  int64_t bytes = static_cast<int64_t>(fs::file_size(file));
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(Root() + "/imported");
    auto client = Client::Open(Root() + "/imported");
    if (!client.ok()) return state.SkipWithError("open");
    state.ResumeTiming();
    tools::ImportOptions o;
    o.db = "bench";
    o.collection = "docs";
    o.file = file;
    auto r = tools::Import(**client, o);
    if (!r.ok() || r->imported != static_cast<int64_t>(GetData().docs.size())) {
      return state.SkipWithError("import");
    }
    if (!(*client)->Close().ok()) return state.SkipWithError("close");
  }
  Report(state, bytes, GetData().docs.size());
}
BENCHMARK(Import)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// InsertMany of the same documents, already parsed, in the batches Import
// uses.
void InsertManyParsed(benchmark::State& state) {
  const Data& d = GetData();
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(Root() + "/inserted");
    auto client = Client::Open(Root() + "/inserted");
    if (!client.ok()) return state.SkipWithError("open");
    Collection c = (*client)->GetDatabase("bench").GetCollection("docs");
    state.ResumeTiming();
    for (size_t i = 0; i < d.docs.size(); i += 1000) {
      std::vector<Document> batch(d.docs.begin() + static_cast<long>(i),
                                  d.docs.begin() + static_cast<long>(std::min(d.docs.size(), i + 1000)));
      if (!c.InsertMany(batch).ok()) return state.SkipWithError("insert");
    }
    if (!(*client)->Close().ok()) return state.SkipWithError("close");
  }
  Report(state, GetData().bytes, d.docs.size());
}
BENCHMARK(InsertManyParsed)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace rockdoc::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  rockdoc::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nRatios (docs/s, same run, %zu documents):\n", rockdoc::bench::DocCount());
  reporter.Ratio("dump / raw sequential read+write", "Dump", "RawSequentialReadWrite");
  reporter.Ratio("restore / raw sequential read+write", "Restore", "RawSequentialReadWrite");
  reporter.Ratio("import JSON lines / InsertMany parsed", "Import", "InsertManyParsed");
  std::error_code ec;
  std::filesystem::remove_all(rockdoc::bench::Root(), ec);
  benchmark::Shutdown();
  return 0;
}

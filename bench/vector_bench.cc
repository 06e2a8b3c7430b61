// bench/vector_bench.cc: vector search (issue 40) on N random D-dimension
// vectors (default 100,000 x 384; ROCKDOC_VECTOR_BENCH_N and _DIMS change
// them), euclidean, limit 10, numCandidates 100 (10 x limit):
//   * query rate and recall@10 of $vectorSearch through rockdoc (the whole
//     aggregate: parse, graph search, every candidate re-read through the
//     snapshot), of hnswlib alone over the same vectors with the same
//     parameters (raw: its physical limit), of exact: true through rockdoc,
//     and of a brute-force scan of a flat float array (the truth);
//   * the index's build: documents inserted, createSearchIndexes (entries
//     written from a scan), the graph's build on first search, and raw
//     hnswlib's build, each as a rate, with the resident memory each added.
// Ratios at the end compare the figures of the same run.
//
// Run: build/bench/vector_bench [--benchmark_min_time=2]
#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bench_util.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"

namespace {

using rockdoc::bench::Check;
using rockdoc::bench::ResidentMiB;

constexpr int kLimit = 10;
constexpr int kCandidates = 100;
constexpr int kQueries = 200;

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoll(v) : fallback;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct World {
  int64_t n = 0;
  int dims = 0;
  std::vector<float> data;     // n x dims
  std::vector<float> queries;  // kQueries x dims
  std::vector<std::set<int>> truth;
  std::string dir;
  std::unique_ptr<rockdoc::Client> client;
  std::unique_ptr<hnswlib::L2Space> space;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> raw;
  std::vector<rockdoc::Document> pipelines, exact_pipelines;
  // Build figures (per second, and MiB of resident memory added).
  double insert_rate = 0, entries_rate = 0, graph_rate = 0, raw_rate = 0;
  double graph_mib = 0, raw_mib = 0;
};

std::vector<int> BruteTopK(const World& w, const float* q) {
  std::vector<std::pair<float, int>> d(w.n);
  for (int64_t i = 0; i < w.n; ++i) {
    const float* v = &w.data[i * w.dims];
    float s = 0;
    for (int j = 0; j < w.dims; ++j) s += (v[j] - q[j]) * (v[j] - q[j]);
    d[i] = {s, static_cast<int>(i)};
  }
  std::partial_sort(d.begin(), d.begin() + kLimit, d.end());
  std::vector<int> out;
  for (int i = 0; i < kLimit; ++i) out.push_back(d[i].second);
  return out;
}

rockdoc::Document Pipeline(const World& w, const float* q, bool exact) {
  rockdoc::BsonBuilder b;
  b.OpenArray("p").OpenDocument("").OpenDocument("$vectorSearch");
  b.AppendString("index", "vec").AppendString("path", "v");
  b.OpenArray("queryVector");
  for (int j = 0; j < w.dims; ++j) b.AppendDouble("", q[j]);
  b.Close();
  if (exact) {
    b.AppendBool("exact", true);
  } else {
    b.AppendInt32("numCandidates", kCandidates);
  }
  b.AppendInt32("limit", kLimit);
  b.Close().Close();
  b.OpenDocument("").OpenDocument("$project").AppendInt32("_id", 1).Close().Close();
  b.Close();
  return std::move(b).Build();
}

World& TheWorld() {
  static World* w = [] {
    auto* w = new World();
    w->n = EnvInt("ROCKDOC_VECTOR_BENCH_N", 100000);
    w->dims = static_cast<int>(EnvInt("ROCKDOC_VECTOR_BENCH_DIMS", 384));
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<float> u(-1, 1);
    w->data.resize(w->n * w->dims);
    for (float& x : w->data) x = u(rng);
    w->queries.resize(kQueries * w->dims);
    for (float& x : w->queries) x = u(rng);
    for (int q = 0; q < kQueries; ++q) {
      std::vector<int> top = BruteTopK(*w, &w->queries[q * w->dims]);
      w->truth.emplace_back(top.begin(), top.end());
      w->pipelines.push_back(Pipeline(*w, &w->queries[q * w->dims], false));
      w->exact_pipelines.push_back(Pipeline(*w, &w->queries[q * w->dims], true));
    }

    // rockdoc: documents, then the search index, then the graph.
    w->dir = (std::filesystem::temp_directory_path() / "rockdoc-vector-bench").string();
    std::filesystem::remove_all(w->dir);
    w->client = Check(rockdoc::Client::Open(w->dir), "open");
    rockdoc::Collection c = w->client->GetDatabase("bench").GetCollection("vectors");
    auto start = std::chrono::steady_clock::now();
    std::vector<rockdoc::Document> batch;
    for (int64_t i = 0; i < w->n; ++i) {
      rockdoc::BsonBuilder b;
      b.AppendInt32("_id", static_cast<int32_t>(i));
      b.OpenArray("v");
      for (int j = 0; j < w->dims; ++j) b.AppendDouble("", w->data[i * w->dims + j]);
      b.Close();
      batch.push_back(std::move(b).Build());
      if (batch.size() == 1000 || i + 1 == w->n) {
        Check(c.InsertMany(batch), "insert");
        batch.clear();
      }
    }
    w->insert_rate = w->n / Seconds(start);
    start = std::chrono::steady_clock::now();
    rockdoc::SearchIndexModel m;
    m.name = "vec";
    m.type = "vectorSearch";
    m.definition = Check(rockdoc::FromJson(R"({"fields": [{"type": "vector", "path": "v",
        "numDimensions": )" + std::to_string(w->dims) + R"(, "similarity": "euclidean"}]})"),
                         "definition");
    Check(c.CreateSearchIndexes({m}), "createSearchIndexes");
    w->entries_rate = w->n / Seconds(start);
    double rss = ResidentMiB();
    start = std::chrono::steady_clock::now();
    {
      auto first = Check(c.Aggregate(w->pipelines[0].Get("p").Array()), "first search");
      while (first.Next()) {
      }
      Check(first.status(), "first search");
    }
    w->graph_rate = w->n / Seconds(start);
    w->graph_mib = ResidentMiB() - rss;

    // Raw hnswlib, the same parameters as rockdoc's graph (M 16,
    // ef_construction 200), one thread as rockdoc's build.
    rss = ResidentMiB();
    start = std::chrono::steady_clock::now();
    w->space = std::make_unique<hnswlib::L2Space>(w->dims);
    w->raw = std::make_unique<hnswlib::HierarchicalNSW<float>>(w->space.get(), w->n, 16, 200);
    for (int64_t i = 0; i < w->n; ++i) w->raw->addPoint(&w->data[i * w->dims], i);
    w->raw_rate = w->n / Seconds(start);
    w->raw_mib = ResidentMiB() - rss;
    return w;
  }();
  return *w;
}

template <typename Search>
void RunQueries(benchmark::State& state, Search search) {
  World& w = TheWorld();
  int64_t hits = 0, asked = 0, q = 0;
  for (auto _ : state) {
    std::vector<int> ids = search(w, static_cast<int>(q % kQueries));
    for (int id : ids) hits += w.truth[q % kQueries].count(id);
    asked += kLimit;
    ++q;
  }
  state.SetItemsProcessed(q);
  state.counters["recall_x1000"] = asked > 0 ? 1000.0 * hits / asked : 0;
}

std::vector<int> RockdocSearch(World& w, const rockdoc::Document& pipeline) {
  rockdoc::Collection c = w.client->GetDatabase("bench").GetCollection("vectors");
  auto cursor = Check(c.Aggregate(pipeline.Get("p").Array()), "search");
  std::vector<int> ids;
  while (cursor.Next()) ids.push_back(cursor.document().Get("_id").Int32());
  Check(cursor.status(), "search");
  return ids;
}

void QueryRockdoc(benchmark::State& state) {
  RunQueries(state, [](World& w, int q) { return RockdocSearch(w, w.pipelines[q]); });
}
void QueryRockdocExact(benchmark::State& state) {
  RunQueries(state, [](World& w, int q) { return RockdocSearch(w, w.exact_pipelines[q]); });
}
void QueryRaw(benchmark::State& state) {
  TheWorld().raw->setEf(kCandidates);
  RunQueries(state, [](World& w, int q) {
    auto found = w.raw->searchKnn(&w.queries[q * w.dims], kLimit);
    std::vector<int> ids;
    while (!found.empty()) {
      ids.push_back(static_cast<int>(found.top().second));
      found.pop();
    }
    return ids;
  });
}
void QueryBrute(benchmark::State& state) {
  RunQueries(state, [](World& w, int q) { return BruteTopK(w, &w.queries[q * w.dims]); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RegisterBenchmark("Query/hnswlib_raw", QueryRaw)->MinTime(2.0);
  benchmark::RegisterBenchmark("Query/rockdoc_ann", QueryRockdoc)->MinTime(2.0);
  benchmark::RegisterBenchmark("Query/rockdoc_exact", QueryRockdocExact)->MinTime(2.0);
  benchmark::RegisterBenchmark("Query/brute_force", QueryBrute)->MinTime(2.0);
  rockdoc::bench::RatioReporter reporter({"recall_x1000"});
  TheWorld();  // built before any timing
  benchmark::RunSpecifiedBenchmarks(&reporter);
  World& w = TheWorld();
  std::printf("\n%lld vectors x %d dimensions, euclidean, limit %d, numCandidates %d:\n",
              static_cast<long long>(w.n), w.dims, kLimit, kCandidates);
  std::printf("  build: insert %.0f docs/s, createSearchIndexes %.0f entries/s,\n"
              "         graph (first search) %.0f vectors/s (+%.0f MiB), raw hnswlib %.0f "
              "vectors/s (+%.0f MiB)\n",
              w.insert_rate, w.entries_rate, w.graph_rate, w.graph_mib, w.raw_rate, w.raw_mib);
  std::printf("  graph build: rockdoc / raw hnswlib = %.3f\n", w.graph_rate / w.raw_rate);
  std::printf("Ratios (queries per second, same run):\n");
  reporter.Ratio("rockdoc ANN / raw hnswlib", "Query/rockdoc_ann", "Query/hnswlib_raw");
  reporter.Ratio("rockdoc ANN / brute force", "Query/rockdoc_ann", "Query/brute_force");
  reporter.Ratio("rockdoc exact / brute force", "Query/rockdoc_exact", "Query/brute_force");
  std::printf("Recall@10 (x1000) against the brute force:\n");
  reporter.PrintExtras();
  w.client.reset();
  std::filesystem::remove_all(w.dir);
  return 0;
}

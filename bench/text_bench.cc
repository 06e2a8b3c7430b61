// Text search ($text on a text index) beside SQLite's FTS5, in the same run,
// on the same corpus: N documents (20,000 unless ROCKDOC_BENCH_DOCS says
// otherwise) of 12 to 40 words drawn from a Zipf-like vocabulary of 5,000
// made-up words.
//
//   Text/rockdoc/<k>   find({$text: {$search: <k words>}}) with the score
//                      projected, all results read (k = 1: a rare-ish term,
//                      k = 3: three terms, OR-ed as $text does)
//   Text/fts5/<k>      SELECT rowid, bm25(t) FROM t WHERE t MATCH 'w1 OR w2 ...'
//                      (every row read): the same terms, the same matches
//   Insert/rockdoc/<i> InsertMany in batches of 500 into a collection with
//                      i = 0 or 1 text index on `body`: what a text index
//                      costs each insert (one entry per distinct term)
//   Insert/fts5        INSERT of the same rows into an FTS5 table, one
//                      transaction per 500
//
// Both engines answer the same queries over the same documents (the counts
// are checked once before timing). The ratios are printed after the run.
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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
using rockdoc::bench::Die;

constexpr size_t kBatch = 500;

Document Json(const char* text) { return rockdoc::bench::JsonOrDie(text); }

int64_t NumDocs() { return rockdoc::bench::EnvInt64("ROCKDOC_BENCH_DOCS", 20000); }

std::string Word(size_t i) {
  std::string w;
  do {
    w += static_cast<char>('a' + i % 26);
    i /= 26;
  } while (i > 0);
  return w + "x";  // no stop word, no stemming change
}

struct Corpus {
  std::vector<std::string> bodies;
  std::vector<std::vector<std::string>> queries[4];  // by term count
};

const Corpus& TheCorpus() {
  static Corpus* corpus = [] {
    auto* c = new Corpus();
    std::mt19937_64 rng(39);
    // Zipf-like: word rank r drawn with probability ~ 1/r.
    const size_t vocab = 5000;
    std::vector<double> cdf(vocab);
    double sum = 0;
    for (size_t r = 0; r < vocab; ++r) cdf[r] = (sum += 1.0 / (r + 1));
    auto draw = [&] {
      double x = std::uniform_real_distribution<double>(0, sum)(rng);
      return static_cast<size_t>(std::lower_bound(cdf.begin(), cdf.end(), x) - cdf.begin());
    };
    for (int64_t i = 0; i < NumDocs(); ++i) {
      std::string body;
      const int n = 12 + static_cast<int>(rng() % 29);
      for (int w = 0; w < n; ++w) body += (w ? " " : "") + Word(draw());
      c->bodies.push_back(std::move(body));
    }
    for (int k : {1, 3}) {
      for (int q = 0; q < 200; ++q) {
        std::vector<std::string> terms;
        for (int t = 0; t < k; ++t) terms.push_back(Word(50 + rng() % 500));
        c->queries[k].push_back(std::move(terms));
      }
    }
    return c;
  }();
  return *corpus;
}

std::string TempPath(const std::string& what) {
  return fs::temp_directory_path() / ("rockdoc-bench-text-" + what + "-" + std::to_string(getpid()));
}

Document DocOf(int64_t id, const std::string& body) {
  BsonBuilder b;
  b.AppendInt64("_id", id).AppendString("body", body);
  return std::move(b).Build();
}

// ---- Loaded data sets for the queries ----

struct Loaded {
  std::unique_ptr<rockdoc::Client> client;
  sqlite3* db = nullptr;
  std::string path, sqlite_path;
};

void LoadSqlite(sqlite3* db, const Corpus& corpus, int64_t from, int64_t to) {
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO t(rowid, body) VALUES (?, ?)", -1, &st, nullptr);
  for (int64_t i = from; i < to; ++i) {
    sqlite3_bind_int64(st, 1, i);
    sqlite3_bind_text(st, 2, corpus.bodies[i].c_str(), -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) Die("fts5 insert");
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
}

Loaded& Data() {
  static Loaded* d = [] {
    auto* d = new Loaded();
    const Corpus& corpus = TheCorpus();
    d->path = TempPath("query");
    fs::remove_all(d->path);
    auto client = rockdoc::Client::Open(d->path);
    if (!client.ok()) Die(client.status().ToString());
    d->client = std::move(client).value();
    rockdoc::Collection c = d->client->GetDatabase("bench").GetCollection("t");
    if (!c.CreateIndex(Json(R"({"body": "text"})")).ok()) Die("index");
    std::vector<Document> batch;
    for (int64_t i = 0; i < NumDocs(); ++i) {
      batch.push_back(DocOf(i, corpus.bodies[i]));
      if (batch.size() == kBatch || i + 1 == NumDocs()) {
        if (!c.InsertMany(batch).ok()) Die("insert");
        batch.clear();
      }
    }
    d->sqlite_path = TempPath("sqlite");
    fs::remove(d->sqlite_path);
    if (sqlite3_open(d->sqlite_path.c_str(), &d->db) != SQLITE_OK) Die("sqlite open");
    sqlite3_exec(d->db, "CREATE VIRTUAL TABLE t USING fts5(body)", nullptr, nullptr, nullptr);
    LoadSqlite(d->db, corpus, 0, NumDocs());
    std::atexit([] {
      fs::remove_all(Data().path);
      fs::remove(Data().sqlite_path);
    });
    return d;
  }();
  return *d;
}

int64_t RockdocQuery(const std::vector<std::string>& terms) {
  std::string search;
  for (const std::string& t : terms) search += t + " ";
  BsonBuilder f;
  f.OpenDocument("$text").AppendString("$search", search).Close();
  rockdoc::FindOptions fo;
  static const Document kScore = [] {
    BsonBuilder p;
    p.OpenDocument("score").AppendString("$meta", "textScore").Close();
    return std::move(p).Build();
  }();
  fo.projection = kScore;
  auto cursor = Data().client->GetDatabase("bench").GetCollection("t").Find(std::move(f).Build(), fo);
  if (!cursor.ok()) Die(cursor.status().ToString());
  int64_t n = 0;
  while (cursor->Next()) ++n;
  if (!cursor->status().ok()) Die(cursor->status().ToString());
  return n;
}

int64_t SqliteQuery(sqlite3_stmt* st, const std::vector<std::string>& terms) {
  std::string match;
  for (const std::string& t : terms) match += (match.empty() ? "" : " OR ") + t;
  sqlite3_bind_text(st, 1, match.c_str(), -1, SQLITE_TRANSIENT);
  int64_t n = 0;
  double sink = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    ++n;
    sink += sqlite3_column_double(st, 1);
  }
  benchmark::DoNotOptimize(sink);
  sqlite3_reset(st);
  return n;
}

sqlite3_stmt* SqliteStatement() {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(Data().db, "SELECT rowid, bm25(t) FROM t WHERE t MATCH ?", -1, &st,
                         nullptr) != SQLITE_OK) {
    Die(sqlite3_errmsg(Data().db));
  }
  return st;
}

void CheckSameAnswers() {
  sqlite3_stmt* st = SqliteStatement();
  for (int k : {1, 3}) {
    for (size_t q = 0; q < 20; ++q) {
      const auto& terms = TheCorpus().queries[k][q];
      if (RockdocQuery(terms) != SqliteQuery(st, terms)) Die("rockdoc and FTS5 disagree");
    }
  }
  sqlite3_finalize(st);
}

void TextRockdoc(benchmark::State& state) {
  const auto& queries = TheCorpus().queries[state.range(0)];
  size_t q = 0;
  int64_t results = 0;
  for (auto _ : state) results += RockdocQuery(queries[q++ % queries.size()]);
  state.SetItemsProcessed(state.iterations());
  state.counters["results/query"] = static_cast<double>(results) / state.iterations();
}

void TextFts5(benchmark::State& state) {
  const auto& queries = TheCorpus().queries[state.range(0)];
  sqlite3_stmt* st = SqliteStatement();
  size_t q = 0;
  int64_t results = 0;
  for (auto _ : state) results += SqliteQuery(st, queries[q++ % queries.size()]);
  sqlite3_finalize(st);
  state.SetItemsProcessed(state.iterations());
  state.counters["results/query"] = static_cast<double>(results) / state.iterations();
}

// ---- Inserts ----

void InsertRockdoc(benchmark::State& state) {
  const Corpus& corpus = TheCorpus();
  const std::string path = TempPath("insert-" + std::to_string(state.range(0)));
  fs::remove_all(path);
  {
    auto client = rockdoc::Client::Open(path);
    if (!client.ok()) Die(client.status().ToString());
    rockdoc::Collection c = (*client)->GetDatabase("bench").GetCollection("t");
    if (state.range(0) == 1 &&
        !c.CreateIndex(Json(R"({"body": "text"})")).ok()) {
      Die("index");
    }
    int64_t next = 0;
    for (auto _ : state) {
      std::vector<Document> batch;
      for (size_t i = 0; i < kBatch; ++i, ++next) {
        batch.push_back(DocOf(next, corpus.bodies[next % corpus.bodies.size()]));
      }
      if (!c.InsertMany(batch).ok()) Die("insert");
    }
    state.SetItemsProcessed(state.iterations() * kBatch);
  }
  fs::remove_all(path);
}

void InsertFts5(benchmark::State& state) {
  const Corpus& corpus = TheCorpus();
  const std::string path = TempPath("insert-fts5");
  fs::remove(path);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) Die("sqlite open");
  sqlite3_exec(db, "CREATE VIRTUAL TABLE t USING fts5(body)", nullptr, nullptr, nullptr);
  int64_t next = 0;
  for (auto _ : state) {
    sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "INSERT INTO t(rowid, body) VALUES (?, ?)", -1, &st, nullptr);
    for (size_t i = 0; i < kBatch; ++i, ++next) {
      sqlite3_bind_int64(st, 1, next);
      sqlite3_bind_text(st, 2, corpus.bodies[next % corpus.bodies.size()].c_str(), -1,
                        SQLITE_STATIC);
      if (sqlite3_step(st) != SQLITE_DONE) Die("fts5 insert");
      sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  sqlite3_close(db);
  fs::remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  auto register_all = [] {
    const int64_t batches = std::max<int64_t>(1, NumDocs() / static_cast<int64_t>(kBatch));
    for (int i : {0, 1}) {
      benchmark::RegisterBenchmark("Insert/rockdoc", InsertRockdoc)
          ->Arg(i)
          ->Iterations(batches)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark("Insert/fts5", InsertFts5)
        ->Iterations(batches)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    for (int k : {1, 3}) {
      benchmark::RegisterBenchmark("Text/fts5", TextFts5)->Arg(k)->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark("Text/rockdoc", TextRockdoc)
          ->Arg(k)
          ->Unit(benchmark::kMicrosecond);
    }
    Data();
    CheckSameAnswers();
  };
  return rockdoc::bench::RunRatioBenchmarks(
      argc, argv, register_all, [](const rockdoc::bench::RatioReporter& reporter) {
        std::printf("\nRatios (items per second, same run; %lld documents):\n",
                    static_cast<long long>(NumDocs()));
        for (const char* k : {"1", "3"}) {
          reporter.Ratio(std::string("$text of ") + k + " term(s): rockdoc / FTS5",
                         std::string("Text/rockdoc/") + k, std::string("Text/fts5/") + k);
        }
        reporter.Ratio("insert: 1 text index / no index", "Insert/rockdoc/1", "Insert/rockdoc/0");
        reporter.Ratio("insert with text index: rockdoc / FTS5", "Insert/rockdoc/1",
                       "Insert/fts5");
      });
}

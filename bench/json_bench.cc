// JSON in and out, beside simdjson's own On-Demand walk of the same text
// (the physical limit of any simdjson-based reader).
//
//   JsonToBson/<size>          rockdoc::FromJson over the corpus (MB/s of JSON)
//   SimdjsonWalk/<size>        simdjson On-Demand touching every key and value
//   JsonLinesToBson/<size>     the same from one JSON-lines buffer, no copy
//   FromJsonVsSimdjson/<size>  all three interleaved in one loop, with ratios
//   BsonToCanonical/<size>, BsonToRelaxed/<size>   (MB/s of BSON read)
//   ValidateBson/<size>        (GB/s of BSON)
// <size> is the mean JSON document size: 300 or 1000 bytes. The corpus is
// generated deterministically: user-like records with strings, numbers,
// nested documents, arrays, an ObjectId and a date.
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "json/json_internal.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"
#include "simdjson_walk.h"

namespace {

namespace od = simdjson::ondemand;
using rockdoc::bench::WalkObject;

constexpr size_t kCorpusBytes = 1 << 20;  // about 1 MiB of JSON per corpus

struct Corpus {
  std::vector<std::string> json;
  std::vector<simdjson::padded_string> padded;
  std::vector<rockdoc::Document> bson;
  // All documents one per line, as in a JSON-lines file read whole: each
  // line is followed by readable bytes (the next lines, then padding).
  std::string lines;
  std::vector<std::string_view> line_views;
  size_t json_bytes = 0;
  size_t bson_bytes = 0;
};

std::string Word(std::mt19937_64& rng, int min_len, int max_len) {
  static const char kLetters[] = "abcdefghijklmnopqrstuvwxyz";
  int n = std::uniform_int_distribution<int>(min_len, max_len)(rng);
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(kLetters[rng() % 26]);
  return s;
}

// One record. `extra` nested items grow it from ~300 bytes to ~1 KB.
std::string MakeDocument(std::mt19937_64& rng, int extra) {
  char oid[25];
  std::snprintf(oid, sizeof(oid), "%08x%016llx", static_cast<unsigned>(rng()),
                static_cast<unsigned long long>(rng()));
  std::string s = "{\"_id\": {\"$oid\": \"" + std::string(oid, 24) + "\"}";
  s += ", \"name\": \"" + Word(rng, 4, 10) + " " + Word(rng, 5, 12) + "\"";
  s += ", \"email\": \"" + Word(rng, 5, 10) + "@" + Word(rng, 4, 8) + ".com\"";
  s += ", \"age\": " + std::to_string(18 + rng() % 70);
  s += ", \"score\": " + std::to_string((rng() % 100000) / 100.0);
  s += ", \"active\": " + std::string(rng() & 1 ? "true" : "false");
  s += ", \"visits\": " + std::to_string(rng() % 5000000000ULL);
  s += ", \"tags\": [\"" + Word(rng, 3, 8) + "\", \"" + Word(rng, 3, 8) + "\", \"" +
       Word(rng, 3, 8) + "\"]";
  s += ", \"address\": {\"street\": \"" + std::to_string(rng() % 999) + " " + Word(rng, 5, 10) +
       " St\", \"city\": \"" + Word(rng, 5, 10) + "\", \"zip\": \"" +
       std::to_string(10000 + rng() % 89999) + "\", \"geo\": [" +
       std::to_string((rng() % 36000) / 100.0 - 180) + ", " +
       std::to_string((rng() % 18000) / 100.0 - 90) + "]}";
  s += ", \"created\": {\"$date\": \"2021-0" + std::to_string(1 + rng() % 9) + "-1" +
       std::to_string(rng() % 10) + "T12:34:56.789Z\"}";
  if (extra > 0) {
    s += ", \"orders\": [";
    for (int i = 0; i < extra; ++i) {
      if (i) s += ", ";
      s += "{\"sku\": \"" + Word(rng, 6, 6) + "-" + std::to_string(rng() % 1000) +
           "\", \"qty\": " + std::to_string(1 + rng() % 9) +
           ", \"price\": " + std::to_string((rng() % 100000) / 100.0) +
           ", \"note\": \"" + Word(rng, 10, 30) + "\", \"gift\": null}";
    }
    s += "]";
  }
  s += "}";
  return s;
}

const Corpus& GetCorpus(int size) {
  static Corpus small, large;
  Corpus& c = size <= 300 ? small : large;
  if (!c.json.empty()) return c;
  std::mt19937_64 rng(size);
  std::vector<size_t> offsets;
  while (c.json_bytes < kCorpusBytes) {
    std::string doc = MakeDocument(rng, size <= 300 ? 0 : 6);
    auto bson = rockdoc::FromJson(doc);
    if (!bson.ok()) std::abort();
    c.json_bytes += doc.size();
    c.bson_bytes += bson->size();
    c.padded.emplace_back(doc);
    c.bson.push_back(std::move(bson).value());
    offsets.push_back(c.lines.size());
    c.lines += doc;
    c.lines += '\n';
    c.json.push_back(std::move(doc));
  }
  c.lines.append(simdjson::SIMDJSON_PADDING, ' ');
  for (size_t i = 0; i < c.json.size(); ++i) {
    c.line_views.emplace_back(c.lines.data() + offsets[i], c.json[i].size());
  }
  return c;
}

size_t SimdjsonWalkAll(od::parser& parser, const Corpus& c) {
  size_t sum = 0;
  for (const auto& doc : c.padded) {
    od::document d = parser.iterate(doc).value_unsafe();
    sum += WalkObject(d.get_object().value_unsafe());
  }
  return sum;
}

size_t FromJsonAll(const Corpus& c) {
  size_t sum = 0;
  for (const auto& doc : c.json) {
    auto bson = rockdoc::FromJson(doc);
    sum += bson->size();
  }
  return sum;
}

size_t FromPaddedJsonAll(const Corpus& c) {
  size_t sum = 0;
  for (std::string_view line : c.line_views) {
    auto bson = rockdoc::FromPaddedJson(line);
    sum += bson->size();
  }
  return sum;
}

void JsonToBson(benchmark::State& state) {
  const Corpus& c = GetCorpus(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(FromJsonAll(c));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.json_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * c.json.size()));
}
BENCHMARK(JsonToBson)->Arg(300)->Arg(1000);

// The same without FromJson's padded copy of each input (the import path).
void JsonLinesToBson(benchmark::State& state) {
  const Corpus& c = GetCorpus(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(FromPaddedJsonAll(c));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.json_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * c.json.size()));
}
BENCHMARK(JsonLinesToBson)->Arg(300)->Arg(1000);

void SimdjsonWalk(benchmark::State& state) {
  const Corpus& c = GetCorpus(static_cast<int>(state.range(0)));
  od::parser parser;
  for (auto _ : state) benchmark::DoNotOptimize(SimdjsonWalkAll(parser, c));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.json_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * c.json.size()));
}
BENCHMARK(SimdjsonWalk)->Arg(300)->Arg(1000);

// Both in one loop, so that frequency changes and noise hit both alike.
void FromJsonVsSimdjson(benchmark::State& state) {
  const Corpus& c = GetCorpus(static_cast<int>(state.range(0)));
  od::parser parser;
  // Thread CPU time, so that other processes on a shared machine do not
  // land on one side of the ratio.
  auto now = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
  };
  double ours = 0, ours_padded = 0, theirs = 0;
  for (auto _ : state) {
    double t0 = now();
    benchmark::DoNotOptimize(SimdjsonWalkAll(parser, c));
    double t1 = now();
    benchmark::DoNotOptimize(FromJsonAll(c));
    double t2 = now();
    benchmark::DoNotOptimize(FromPaddedJsonAll(c));
    double t3 = now();
    theirs += t1 - t0;
    ours += t2 - t1;
    ours_padded += t3 - t2;
  }
  const double mb = static_cast<double>(state.iterations()) * c.json_bytes / 1e6;
  state.counters["simdjson_MBps"] = mb / theirs;
  state.counters["FromJson_MBps"] = mb / ours;
  state.counters["ratio"] = theirs / ours;
  state.counters["lines_MBps"] = mb / ours_padded;
  state.counters["ratio_lines"] = theirs / ours_padded;
}
BENCHMARK(FromJsonVsSimdjson)->Arg(300)->Arg(1000);

void BsonToJson(benchmark::State& state, rockdoc::JsonFormat format) {
  const Corpus& c = GetCorpus(static_cast<int>(state.range(0)));
  size_t out_bytes = 0;
  for (auto _ : state) {
    for (const auto& doc : c.bson) {
      std::string text = rockdoc::ToJson(doc, format);
      out_bytes += text.size();
      benchmark::DoNotOptimize(text.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bson_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * c.bson.size()));
  state.counters["json_out_MBps"] =
      benchmark::Counter(static_cast<double>(out_bytes) / 1e6, benchmark::Counter::kIsRate);
}
void BsonToCanonical(benchmark::State& state) { BsonToJson(state, rockdoc::JsonFormat::kCanonical); }
void BsonToRelaxed(benchmark::State& state) { BsonToJson(state, rockdoc::JsonFormat::kRelaxed); }
BENCHMARK(BsonToCanonical)->Arg(300)->Arg(1000);
BENCHMARK(BsonToRelaxed)->Arg(300)->Arg(1000);

void ValidateBson(benchmark::State& state) {
  const Corpus& c = GetCorpus(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    for (const auto& doc : c.bson) {
      rockdoc::Status s = rockdoc::ValidateBson(doc.bytes());
      if (!s.ok()) std::abort();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bson_bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * c.bson.size()));
}
BENCHMARK(ValidateBson)->Arg(300)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();

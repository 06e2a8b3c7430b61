// Secondary indexes and the planner beside raw RocksDB, in the same run, with
// the same RocksDB options (internal::MakeRocksOptions), on N documents of
// about 1 KB (N = 1,000,000 unless ROCKDOC_BENCH_DOCS says otherwise):
//
//   Insert/<engine>/<n>   InsertMany in batches of 1,000 into a collection
//                         with n = 0, 1, 2 or 5 secondary indexes (keys in
//                         random order): the cost of over-eager indexing.
//                         raw: a WriteBatch of the same 1,000 documents, plus
//                         n index entries per document in rockdoc's layout
//                         (storage/README.md), keys built with keystring.
//                         Indexes, in order: {k: 1}, {a: 1, b: 1}, {c: 1},
//                         {d: 1}, {e: 1}.
//   Lookup/<engine>       an equality lookup through the secondary index
//                         {k: 1}: find({k: v}) returning the one document;
//                         raw: a new iterator, Seek to the index prefix +
//                         keystring(v), then Get of the record. (goal >= 0.5)
//   IdIn/<form>           100 random _ids: find({_id: {$in: [...]}}) against
//                         100 findOne({_id: id}) calls (goal >= 3x); raw
//                         MultiGet and 100 raw Gets of the same keys as
//                         references.
//   Covered/<form>/<w>    find({a: {$gte: x, $lt: x + w}}) with index
//                         {a: 1, b: 1}: projection {_id: 0, a: 1, b: 1}
//                         (covered: no document read) against projection
//                         {_id: 0, a: 1, b: 1, c: 1} (c is not indexed: every
//                         match fetched). (goal >= 2x). The explain of both is
//                         checked and its totalDocsExamined printed.
//
// Rates: the reads count the calling thread's CPU time (Google Benchmark's
// default; steadier on a shared machine), the inserts wall time, because
// flushes and compactions run on RocksDB's background threads.
//
// The read benchmarks use the data set left by Insert/*/2 (loaded on demand
// when the insert benchmarks are filtered out), flushed and reopened. The raw
// baseline is a plain rocksdb::DB; rockdoc's is a TransactionDB, so the ratios
// include what transactions, planning and the API cost. Databases live under
// /tmp and are removed at exit. After the run, the ratios are printed.
#include <benchmark/benchmark.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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
constexpr int kInSize = 100;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "index_bench: %s\n", what.c_str());
  std::abort();
}

Document Json(const char* text) { return rockdoc::bench::JsonOrDie(text); }

int64_t NumDocs() {
  const int64_t n = rockdoc::bench::EnvInt64("ROCKDOC_BENCH_DOCS", 1000000);
  return std::max<int64_t>(kBatch, n / kBatch * kBatch);
}

// The secondary indexes, in the order the insert curve adds them.
const char* const kIndexSpecs[] = {R"({"k": 1})", R"({"a": 1, "b": 1})", R"({"c": 1})",
                                   R"({"d": 1})", R"({"e": 1})"};
const std::vector<std::vector<std::string>> kIndexFields = {{"k"}, {"a", "b"}, {"c"}, {"d"}, {"e"}};

// The raw database's prefixes: records under 1 (as rockdoc's first
// collection), index i under 2 + i.
constexpr uint32_t kRawCollection = 1;
std::string BE32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
  return s;
}

struct Data {
  int64_t n = 0;
  std::vector<Document> docs;     // in insertion order (shuffled _ids)
  std::vector<std::string> keys;  // the record key of docs[i]
  uint64_t bytes = 0;
  std::string root;
  // The data set the reads use: rockdoc and raw, each with indexes 0 and 1.
  std::unique_ptr<rockdoc::Client> client;
  rocksdb::DB* raw = nullptr;
  bool rockdoc_ready = false, raw_ready = false, reopened = false;

  std::string RockdocPath(int n_indexes) const {
    return root + "/rockdoc-" + std::to_string(n_indexes);
  }
  std::string RawPath(int n_indexes) const { return root + "/raw-" + std::to_string(n_indexes); }
  rockdoc::Collection Coll() const { return client->GetDatabase("bench").GetCollection("docs"); }

  ~Data() {
    if (client) (void)client->Close();
    client.reset();
    if (raw != nullptr) {
      (void)raw->Close();
      delete raw;
    }
    if (!root.empty()) fs::remove_all(root);
  }
};

Data* g_data = nullptr;

Data& TheData() {
  static Data* data = [] {
    auto* d = new Data();
    d->n = NumDocs();
    std::mt19937_64 rng(2024);
    std::vector<int64_t> ids(d->n), ks(d->n), as(d->n);
    std::iota(ids.begin(), ids.end(), 0);
    std::iota(ks.begin(), ks.end(), 0);
    std::iota(as.begin(), as.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    std::shuffle(ks.begin(), ks.end(), rng);
    std::shuffle(as.begin(), as.end(), rng);
    std::string pool(1 << 16, ' ');
    for (char& ch : pool) ch = static_cast<char>('a' + rng() % 26);
    d->docs.reserve(d->n);
    for (int64_t id : ids) {
      // k and a: permutations of [0, n) (a lookup of k finds one document; a
      // range of a of width w holds w documents), both in random order.
      BsonBuilder b;
      b.AppendInt64("_id", id);
      b.AppendInt64("k", ks[id]);
      b.AppendInt32("a", static_cast<int32_t>(as[id]));
      b.AppendInt32("b", static_cast<int32_t>(rng() % 1000));
      b.AppendString("c", "user" + std::to_string(rng() % 10000000));
      b.AppendDouble("d", static_cast<double>(rng() % 100000000) / 100.0);
      b.AppendInt64("e", static_cast<int64_t>(rng() >> 1));
      b.AppendString("status", (rng() & 1) ? "active" : "inactive");
      b.OpenArray("tags").AppendString("", "x").AppendString("", "y").Close();
      b.AppendString("bio", std::string_view(pool).substr(rng() % (pool.size() - 900), 860));
      d->docs.push_back(std::move(b).Build());
      d->bytes += d->docs.back().size();
      d->keys.push_back(rockdoc::internal::RecordKey(
          kRawCollection, rockdoc::keystring::EncodeValue(*d->docs.back().begin())));
    }
    char tmpl[] = "/tmp/rockdoc-index-bench-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) Die("mkdtemp");
    d->root = tmpl;
    g_data = d;
    return d;
  }();
  return *data;
}

// ---- Insert curve ----

std::unique_ptr<rockdoc::Client> OpenClient(const std::string& path) {
  auto c = rockdoc::Client::Open(path);
  if (!c.ok()) Die(c.status().ToString());
  return std::move(c).value();
}

rocksdb::DB* OpenRaw(const std::string& path) {
  rocksdb::Options o = rockdoc::internal::MakeRocksOptions(rockdoc::ClientOptions());
  o.create_if_missing = true;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, path, &db);
  if (!s.ok()) Die("raw open: " + s.ToString());
  return db;
}

// Inserts docs [from, from + kBatch) into a collection that has its indexes.
bool InsertBatchRockdoc(const Data& d, const rockdoc::Collection& c, size_t from) {
  std::vector<Document> batch(d.docs.begin() + from, d.docs.begin() + from + kBatch);
  auto r = c.InsertMany(batch);
  return r.ok() && r->ok();
}

// The raw equivalent: each document and its entries in the first
// `n_indexes` indexes, in rockdoc's non-unique entry layout.
bool InsertBatchRaw(const Data& d, rocksdb::DB* db, int n_indexes, size_t from) {
  rocksdb::WriteBatch wb;
  rockdoc::keystring::Builder kb;
  std::string key, value;
  for (size_t j = from; j < from + kBatch; ++j) {
    wb.Put(d.keys[j], d.docs[j].bytes());
    std::string_view id_key = std::string_view(d.keys[j]).substr(4);
    for (int i = 0; i < n_indexes; ++i) {
      kb.Reset();
      for (const std::string& f : kIndexFields[i]) kb.Append(d.docs[j].Get(f));
      key = BE32(2 + i);
      key += kb.bytes();
      key += id_key;
      value.assign(1, static_cast<char>(id_key.size()));  // varint32, < 128
      value += kb.type_bits();
      wb.Put(key, value);
    }
  }
  return db->Write(rocksdb::WriteOptions(), &wb).ok();
}

void CreateIndexes(const rockdoc::Collection& c, int n_indexes) {
  for (int i = 0; i < n_indexes; ++i) {
    auto r = c.CreateIndex(Json(kIndexSpecs[i]));
    if (!r.ok()) Die("createIndex: " + r.status().ToString());
  }
}

void InsertRockdoc(benchmark::State& state) {
  Data& d = TheData();
  int n_indexes = static_cast<int>(state.range(0));
  const bool keep = n_indexes == 2;  // the reads' data set
  if (keep) {
    if (d.client) (void)d.client->Close();
    d.client.reset();
    d.rockdoc_ready = d.reopened = false;
  }
  fs::remove_all(d.RockdocPath(n_indexes));
  auto client = OpenClient(d.RockdocPath(n_indexes));
  rockdoc::Collection c = client->GetDatabase("bench").GetCollection("docs");
  CreateIndexes(c, n_indexes);
  size_t next = 0;
  for (auto _ : state) {
    if (!InsertBatchRockdoc(d, c, next)) {
      state.SkipWithError("insert failed");
      break;
    }
    next += kBatch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(next));
  state.SetBytesProcessed(static_cast<int64_t>(d.bytes / d.docs.size() * next));
  if (keep && next == d.docs.size()) {
    d.client = std::move(client);
    d.rockdoc_ready = true;
  } else {
    (void)client->Close();
    client.reset();
    fs::remove_all(d.RockdocPath(n_indexes));
  }
}

void InsertRaw(benchmark::State& state) {
  Data& d = TheData();
  int n_indexes = static_cast<int>(state.range(0));
  const bool keep = n_indexes == 2;
  if (keep && d.raw != nullptr) {
    (void)d.raw->Close();
    delete d.raw;
    d.raw = nullptr;
    d.raw_ready = d.reopened = false;
  }
  fs::remove_all(d.RawPath(n_indexes));
  rocksdb::DB* db = OpenRaw(d.RawPath(n_indexes));
  size_t next = 0;
  for (auto _ : state) {
    if (!InsertBatchRaw(d, db, n_indexes, next)) {
      state.SkipWithError("write failed");
      break;
    }
    next += kBatch;
  }
  state.SetItemsProcessed(static_cast<int64_t>(next));
  state.SetBytesProcessed(static_cast<int64_t>(d.bytes / d.docs.size() * next));
  if (keep && next == d.docs.size()) {
    d.raw = db;
    d.raw_ready = true;
  } else {
    (void)db->Close();
    delete db;
    fs::remove_all(d.RawPath(n_indexes));
  }
}

// ---- The read data set ----

// Both engines loaded with indexes {k: 1} and {a: 1, b: 1}, flushed,
// reopened, and read once end to end (so both start from the same caches).
Data& ReadData() {
  Data& d = TheData();
  if (!d.rockdoc_ready) {
    if (d.client) (void)d.client->Close();
    fs::remove_all(d.RockdocPath(2));
    d.client = OpenClient(d.RockdocPath(2));
    CreateIndexes(d.Coll(), 2);
    for (size_t i = 0; i < d.docs.size(); i += kBatch) {
      if (!InsertBatchRockdoc(d, d.Coll(), i)) Die("load rockdoc");
    }
    d.rockdoc_ready = true;
    d.reopened = false;
  }
  if (!d.raw_ready) {
    if (d.raw != nullptr) {
      (void)d.raw->Close();
      delete d.raw;
    }
    fs::remove_all(d.RawPath(2));
    d.raw = OpenRaw(d.RawPath(2));
    for (size_t i = 0; i < d.docs.size(); i += kBatch) {
      if (!InsertBatchRaw(d, d.raw, 2, i)) Die("load raw");
    }
    d.raw_ready = true;
    d.reopened = false;
  }
  if (!d.reopened) {
    (void)d.client->Close();
    d.client = OpenClient(d.RockdocPath(2));
    (void)d.raw->Flush(rocksdb::FlushOptions());
    (void)d.raw->Close();
    delete d.raw;
    d.raw = OpenRaw(d.RawPath(2));
    // Warm: every key and value of both, once.
    {
      std::unique_ptr<rocksdb::Iterator> it(d.raw->NewIterator(rocksdb::ReadOptions()));
      int64_t n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
      if (n != d.n * 3) Die("raw data set has " + std::to_string(n) + " entries");
    }
    auto count = d.Coll().CountDocuments(Document());
    if (!count.ok() || *count != d.n) Die("rockdoc data set has the wrong count");
    // The index entries of rockdoc: one covered scan over each index.
    rockdoc::FindOptions fo;
    fo.projection = Json(R"({"_id": 0, "k": 1})");
    auto cur = d.Coll().Find(Json(R"({"k": {"$gte": 0}})"), fo);
    int64_t m = 0;
    while (cur.ok() && cur->Next()) ++m;
    fo.projection = Json(R"({"_id": 0, "a": 1, "b": 1})");
    cur = d.Coll().Find(Json(R"({"a": {"$gte": 0}})"), fo);
    while (cur.ok() && cur->Next()) ++m;
    if (m != 2 * d.n) Die("rockdoc index entries: " + std::to_string(m));
    d.reopened = true;
  }
  return d;
}

// ---- Equality lookup through {k: 1} ----

void LookupRockdoc(benchmark::State& state) {
  Data& d = ReadData();
  rockdoc::Collection c = d.Coll();
  std::mt19937_64 rng(11);
  int64_t bytes = 0;
  for (auto _ : state) {
    int64_t k = static_cast<int64_t>(rng() % d.n);
    BsonBuilder f;
    f.AppendInt64("k", k);
    Document filter = std::move(f).Build();
    auto found = c.FindOne(filter);
    if (!found.ok() || !found->has_value() || (*found)->Get("k").Int64() != k) {
      state.SkipWithError("lookup failed");
      break;
    }
    bytes += static_cast<int64_t>((*found)->size());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

void LookupRaw(benchmark::State& state) {
  Data& d = ReadData();
  std::mt19937_64 rng(11);
  const std::string prefix = BE32(2), prefix_end = BE32(3);
  int64_t bytes = 0;
  rockdoc::keystring::Builder kb;
  for (auto _ : state) {
    int64_t k = static_cast<int64_t>(rng() % d.n);
    BsonBuilder f;
    f.AppendInt64("k", k);
    Document value_doc = std::move(f).Build();
    kb.Reset();
    kb.Append(*value_doc.begin());
    std::string seek = prefix + kb.bytes();
    rocksdb::ReadOptions ro;
    rocksdb::Slice lo(prefix), hi(prefix_end);
    ro.iterate_lower_bound = &lo;
    ro.iterate_upper_bound = &hi;
    std::unique_ptr<rocksdb::Iterator> it(d.raw->NewIterator(ro));
    it->Seek(seek);
    if (!it->Valid() || !it->key().starts_with(seek)) {
      state.SkipWithError("index entry not found");
      break;
    }
    size_t id_len = static_cast<uint8_t>(it->value()[0]);
    std::string record = BE32(kRawCollection);
    record.append(it->key().data() + it->key().size() - id_len, id_len);
    std::string out;
    if (!d.raw->Get(rocksdb::ReadOptions(), record, &out).ok()) {
      state.SkipWithError("record not found");
      break;
    }
    bytes += static_cast<int64_t>(out.size());
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}

// ---- $in of 100 _ids vs 100 findOne ----

std::vector<int64_t> RandomIds(std::mt19937_64& rng, int64_t n) {
  std::vector<int64_t> ids(kInSize);
  for (int64_t& id : ids) id = static_cast<int64_t>(rng() % n);
  return ids;
}

void IdInRockdoc(benchmark::State& state) {
  Data& d = ReadData();
  rockdoc::Collection c = d.Coll();
  std::mt19937_64 rng(12);
  int64_t docs = 0, bytes = 0;
  for (auto _ : state) {
    std::vector<int64_t> ids = RandomIds(rng, d.n);
    BsonBuilder f;
    f.OpenDocument("_id").OpenArray("$in");
    for (int64_t id : ids) f.AppendInt64("", id);
    f.Close().Close();
    Document filter = std::move(f).Build();
    auto cursor = c.Find(filter);
    if (!cursor.ok()) {
      state.SkipWithError("find failed");
      break;
    }
    int64_t got = 0;
    while (cursor->Next()) {
      ++got;
      bytes += static_cast<int64_t>(cursor->document().size());
    }
    std::sort(ids.begin(), ids.end());
    int64_t distinct = std::unique(ids.begin(), ids.end()) - ids.begin();
    if (got != distinct) {
      state.SkipWithError("wrong number of documents");
      break;
    }
    docs += got;
  }
  state.SetItemsProcessed(docs);
  state.SetBytesProcessed(bytes);
}

void IdFindOneRockdoc(benchmark::State& state) {
  Data& d = ReadData();
  rockdoc::Collection c = d.Coll();
  std::mt19937_64 rng(12);
  int64_t docs = 0, bytes = 0;
  for (auto _ : state) {
    std::vector<int64_t> ids = RandomIds(rng, d.n);
    for (int64_t id : ids) {
      BsonBuilder f;
      f.AppendInt64("_id", id);
      Document filter = std::move(f).Build();
      auto found = c.FindOne(filter);
      if (!found.ok() || !found->has_value()) {
        state.SkipWithError("findOne failed");
        break;
      }
      bytes += static_cast<int64_t>((*found)->size());
      ++docs;
    }
  }
  state.SetItemsProcessed(docs);
  state.SetBytesProcessed(bytes);
}

std::vector<std::string> RecordKeys(const std::vector<int64_t>& ids) {
  std::vector<std::string> keys;
  for (int64_t id : ids) {
    BsonBuilder b;
    b.AppendInt64("_id", id);
    Document doc = std::move(b).Build();
    keys.push_back(rockdoc::internal::RecordKey(kRawCollection,
                                                rockdoc::keystring::EncodeValue(*doc.begin())));
  }
  return keys;
}

void IdMultiGetRaw(benchmark::State& state) {
  Data& d = ReadData();
  std::mt19937_64 rng(12);
  int64_t docs = 0, bytes = 0;
  for (auto _ : state) {
    std::vector<std::string> keys = RecordKeys(RandomIds(rng, d.n));
    std::vector<rocksdb::Slice> slices(keys.begin(), keys.end());
    std::vector<rocksdb::PinnableSlice> values(keys.size());
    std::vector<rocksdb::Status> statuses(keys.size());
    d.raw->MultiGet(rocksdb::ReadOptions(), d.raw->DefaultColumnFamily(), keys.size(),
                    slices.data(), values.data(), statuses.data());
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!statuses[i].ok()) state.SkipWithError("multiget");
      bytes += static_cast<int64_t>(values[i].size());
    }
    docs += static_cast<int64_t>(keys.size());
  }
  state.SetItemsProcessed(docs);
  state.SetBytesProcessed(bytes);
}

void IdGetRaw(benchmark::State& state) {
  Data& d = ReadData();
  std::mt19937_64 rng(12);
  int64_t docs = 0, bytes = 0;
  for (auto _ : state) {
    std::vector<std::string> keys = RecordKeys(RandomIds(rng, d.n));
    for (const std::string& key : keys) {
      std::string out;
      if (!d.raw->Get(rocksdb::ReadOptions(), key, &out).ok()) state.SkipWithError("get");
      bytes += static_cast<int64_t>(out.size());
    }
    docs += static_cast<int64_t>(keys.size());
  }
  state.SetItemsProcessed(docs);
  state.SetBytesProcessed(bytes);
}

// ---- Covered vs fetched range query ----

Document RangeFilter(int64_t x, int64_t w) {
  BsonBuilder b;
  b.OpenDocument("a").AppendInt32("$gte", static_cast<int32_t>(x));
  b.AppendInt32("$lt", static_cast<int32_t>(x + w)).Close();
  return std::move(b).Build();
}

const char kCoveredProjection[] = R"({"_id": 0, "a": 1, "b": 1})";
const char kFetchProjection[] = R"({"_id": 0, "a": 1, "b": 1, "c": 1})";

void RangeQuery(benchmark::State& state, const char* projection) {
  Data& d = ReadData();
  rockdoc::Collection c = d.Coll();
  int64_t w = state.range(0);
  rockdoc::FindOptions fo;
  fo.projection = Json(projection);
  std::mt19937_64 rng(13);
  int64_t docs = 0, bytes = 0;
  for (auto _ : state) {
    int64_t x = static_cast<int64_t>(rng() % (d.n - w));
    auto cursor = c.Find(RangeFilter(x, w), fo);
    if (!cursor.ok()) {
      state.SkipWithError("find failed");
      break;
    }
    int64_t got = 0;
    while (cursor->Next()) {
      ++got;
      bytes += static_cast<int64_t>(cursor->document().size());
    }
    if (got != w) {
      state.SkipWithError("wrong number of documents");
      break;
    }
    docs += got;
  }
  state.SetItemsProcessed(docs);
  state.SetBytesProcessed(bytes);
}

void CoveredRockdoc(benchmark::State& state) { RangeQuery(state, kCoveredProjection); }
void FetchRockdoc(benchmark::State& state) { RangeQuery(state, kFetchProjection); }

// totalDocsExamined and the winning plan's stages, from explain.
std::string ExplainSummary(const char* projection, int64_t w) {
  Data& d = ReadData();
  rockdoc::FindOptions fo;
  fo.projection = Json(projection);
  auto e = d.Coll().ExplainFind(RangeFilter(12345 % (d.n - w), w), fo,
                                rockdoc::ExplainVerbosity::kExecutionStats);
  if (!e.ok()) return "explain failed: " + e.status().ToString();
  rockdoc::Element docs = e->GetPath("executionStats.totalDocsExamined");
  rockdoc::Element keys = e->GetPath("executionStats.totalKeysExamined");
  std::string stages;
  rockdoc::Element stage = e->GetPath("queryPlanner.winningPlan");
  while (stage.ok() && stage.IsContainer()) {
    rockdoc::Element name = stage.Document().Get("stage");
    if (name.ok()) stages += (stages.empty() ? "" : " <- ") + std::string(name.String());
    stage = stage.Document().Get("inputStage");
  }
  return "totalDocsExamined " + rockdoc::ValueToJson(docs) + ", totalKeysExamined " +
         rockdoc::ValueToJson(keys) + ", plan " + stages;
}

// ---- Collated equality through its index ----
//
// Collation/simple and Collation/en2: findOne({name: v}) through an index on
// name, in a collection of 100,000 documents with random 12-letter mixed
// case names; the second collection's index and query have the collation
// {locale: "en", strength: 2}, whose keys are ICU sort keys (the probe's
// sort key is computed per query, and the match re-checked with the ICU
// comparison). Their ratio is what the collation costs an equality lookup.

struct CollationData {
  std::unique_ptr<rockdoc::Client> client;
  std::vector<std::string> names;
  std::string path;
};

CollationData& CollationSet() {
  static CollationData* data = [] {
    auto* d = new CollationData();
    d->path = fs::temp_directory_path() / ("rockdoc-bench-collation-" + std::to_string(getpid()));
    fs::remove_all(d->path);
    auto client = rockdoc::Client::Open(d->path);
    if (!client.ok()) Die(client.status().ToString());
    d->client = std::move(client).value();
    std::mt19937_64 rng(39);
    const int n = 100000;
    for (int i = 0; i < n; ++i) {
      std::string name;
      for (int j = 0; j < 12; ++j) {
        const char base = (rng() & 1) != 0 ? 'a' : 'A';
        name += static_cast<char>(base + rng() % 26);
      }
      d->names.push_back(std::move(name));
    }
    for (const char* coll : {"simple", "en2"}) {
      rockdoc::Collection c = d->client->GetDatabase("bench").GetCollection(coll);
      rockdoc::IndexOptions io;
      if (std::string_view(coll) == "en2") io.collation = Json(R"({"locale": "en", "strength": 2})");
      if (!c.CreateIndex(Json(R"({"name": 1})"), io).ok()) Die("collation index");
      std::vector<Document> batch;
      for (int i = 0; i < n; ++i) {
        BsonBuilder b;
        b.AppendInt32("_id", i).AppendString("name", d->names[i]);
        batch.push_back(std::move(b).Build());
        if (batch.size() == kBatch) {
          if (!c.InsertMany(batch).ok()) Die("collation insert");
          batch.clear();
        }
      }
    }
    std::atexit([] { fs::remove_all(CollationSet().path); });
    return d;
  }();
  return *data;
}

void CollatedLookup(benchmark::State& state, const char* coll, bool collated) {
  CollationData& d = CollationSet();
  rockdoc::Collection c = d.client->GetDatabase("bench").GetCollection(coll);
  rockdoc::FindOptions fo;
  if (collated) fo.collation = Json(R"({"locale": "en", "strength": 2})");
  std::mt19937_64 rng(11);
  for (auto _ : state) {
    const std::string& name = d.names[rng() % d.names.size()];
    BsonBuilder f;
    f.AppendString("name", name);
    auto cursor = c.Find(std::move(f).Build(), fo);
    if (!cursor.ok() || !cursor->Next()) {
      state.SkipWithError("collated lookup found nothing");
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
void CollationSimple(benchmark::State& state) { CollatedLookup(state, "simple", false); }
void CollationEn2(benchmark::State& state) { CollatedLookup(state, "en2", true); }

// ---- Reporting ----

void PrintRatios(const rockdoc::bench::RatioReporter& r) {
  std::printf("\nRatios (items per second, same run; %lld documents):\n",
              static_cast<long long>(NumDocs()));
  r.Ratio("lookup {k: v}: rockdoc / raw seek+get", "Lookup/rockdoc", "Lookup/raw", 0.5);
  r.Ratio("lookup {name: v}: collated (en, strength 2) / simple", "Collation/en2",
          "Collation/simple");
  r.Ratio("100 _ids: $in / 100 findOne", "IdIn/rockdoc_in", "IdIn/rockdoc_findone", 3.0);
  r.Ratio("100 _ids: $in / raw MultiGet", "IdIn/rockdoc_in", "IdIn/raw_multiget");
  r.Ratio("100 _ids: 100 findOne / 100 raw Get", "IdIn/rockdoc_findone", "IdIn/raw_get");
  r.Ratio("100 _ids: raw MultiGet / 100 raw Get", "IdIn/raw_multiget", "IdIn/raw_get");
  for (const char* w : {"100", "1000"}) {
    r.Ratio(std::string("range of ") + w + ": covered / fetched",
            std::string("Covered/rockdoc/") + w, std::string("Fetched/rockdoc/") + w, 2.0);
  }
  for (const char* n : {"0", "1", "2", "5"}) {
    r.Ratio(std::string("insert, ") + n + " indexes: rockdoc / raw same entries",
            std::string("Insert/rockdoc/") + n, std::string("Insert/raw/") + n);
  }
  for (const char* n : {"1", "2", "5"}) {
    r.Ratio(std::string("insert: rockdoc ") + n + " indexes / rockdoc 0",
            std::string("Insert/rockdoc/") + n, "Insert/rockdoc/0");
  }
  for (const char* n : {"0", "1", "2", "5"}) {
    r.Ratio(std::string("insert: rockdoc ") + n + " indexes / raw docs only",
            std::string("Insert/rockdoc/") + n, "Insert/raw/0");
  }
}

void Register() {
  int64_t batches = NumDocs() / kBatch;
  for (int n : {0, 1, 2, 5}) {
    // Raw first, then rockdoc, per index count, so neither always runs on a
    // cooler machine.
    benchmark::RegisterBenchmark("Insert/raw", InsertRaw)
        ->Arg(n)
        ->Iterations(batches)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark("Insert/rockdoc", InsertRockdoc)
        ->Arg(n)
        ->Iterations(batches)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("Collation/simple", CollationSimple)->MinTime(2.0);
  benchmark::RegisterBenchmark("Collation/en2", CollationEn2)->MinTime(2.0);
  benchmark::RegisterBenchmark("Lookup/raw", LookupRaw)->MinTime(3.0);
  benchmark::RegisterBenchmark("Lookup/rockdoc", LookupRockdoc)->MinTime(3.0);
  benchmark::RegisterBenchmark("IdIn/raw_get", IdGetRaw)
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(2.0);
  benchmark::RegisterBenchmark("IdIn/raw_multiget", IdMultiGetRaw)
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(2.0);
  benchmark::RegisterBenchmark("IdIn/rockdoc_findone", IdFindOneRockdoc)
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(2.0);
  benchmark::RegisterBenchmark("IdIn/rockdoc_in", IdInRockdoc)
      ->Unit(benchmark::kMicrosecond)
      ->MinTime(2.0);
  for (int w : {100, 1000}) {
    benchmark::RegisterBenchmark("Fetched/rockdoc", FetchRockdoc)
        ->Arg(w)
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(2.0);
    benchmark::RegisterBenchmark("Covered/rockdoc", CoveredRockdoc)
        ->Arg(w)
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(2.0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int status = rockdoc::bench::RunRatioBenchmarks(
      argc, argv, Register, [](const rockdoc::bench::RatioReporter& reporter) {
        PrintRatios(reporter);
        if (g_data == nullptr || !g_data->rockdoc_ready) return;
        std::printf("\nExplain (executionStats) of the range queries:\n");
        for (int64_t w : {100, 1000}) {
          std::printf("  covered, w=%lld: %s\n", static_cast<long long>(w),
                      ExplainSummary(kCoveredProjection, w).c_str());
          std::printf("  fetched, w=%lld: %s\n", static_cast<long long>(w),
                      ExplainSummary(kFetchProjection, w).c_str());
        }
      });
  delete g_data;
  return status;
}

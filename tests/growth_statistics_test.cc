// The statistics the store keeps on write (rockdoc/client.h GrowthStatistics,
// stats/collection_statistics.h): the document size histogram checked
// against a recount of the collection after every kind of write (the
// brute-force reference), across restarts, crashes, renames and drops; its
// rebuild under concurrent writers; the array lengths at their thresholds;
// and the switch that turns it all off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/client_internal.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/format.h"
#include "store/write_ops.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test::Json;

// The bucket of a size, computed here independently of the library:
// floor(log2(size)), 0 for 0 and 1, at most 24.
size_t Bucket(int64_t size) {
  size_t b = 0;
  while (b < 24 && (int64_t{2} << b) <= size) ++b;
  return b;
}

class GrowthStatisticsTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open(ClientOptions options = {}) {
    client_.reset();
    auto c = Client::Open(dir_.Sub("db"), options);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Collection Coll(const std::string& name = "c") {
    return client_->GetDatabase("app").GetCollection(name);
  }
  // Every document's size bucket, counted by reading the collection.
  std::vector<int64_t> Recount(const Collection& c) {
    std::vector<int64_t> counts(25, 0);
    auto cursor = c.Find(Document());
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    while (cursor->Next()) ++counts[Bucket(static_cast<int64_t>(cursor->document().size()))];
    EXPECT_TRUE(cursor->status().ok()) << cursor->status();
    return counts;
  }
  GrowthStatistics Growth(const Collection& c) {
    auto g = c.GrowthStats();
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? *std::move(g) : GrowthStatistics();
  }
  // The kept sizes equal the recount.
  void ExpectExact(const Collection& c, const std::string& when) {
    GrowthStatistics g = Growth(c);
    ASSERT_TRUE(g.document_sizes_known) << when;
    EXPECT_EQ(g.document_sizes.counts, Recount(c)) << when;
  }
  // {_id: id, pad: "x" * n}
  static Document Padded(int64_t id, size_t n) {
    BsonBuilder b;
    b.AppendInt64("_id", id).AppendString("pad", std::string(n, 'x'));
    return std::move(b).Build();
  }
  static Document IdFilter(int64_t id) {
    BsonBuilder b;
    b.AppendInt64("_id", id);
    return std::move(b).Build();
  }
  static Document SetPad(size_t n) {
    BsonBuilder b;
    b.OpenDocument("$set").AppendString("pad", std::string(n, 'y')).Close();
    return std::move(b).Build();
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

// Every kind of write, at random, with sizes spread over ten buckets: the
// histogram equals a recount after each step. Failed writes (duplicate
// _ids in an unordered insertMany, a rolled-back transaction) count
// nothing.
TEST_F(GrowthStatisticsTest, DocumentSizesEqualARecountAfterEveryKindOfWrite) {
  ASSERT_TRUE(client_->GetDatabase("app").CreateCollection("c").ok());
  Collection c = Coll();
  std::mt19937_64 rng(42);
  auto pad = [&]() -> size_t { return (size_t{1} << (rng() % 15)) + rng() % 100; };
  auto id = [&]() -> int64_t { return static_cast<int64_t>(rng() % 60); };
  for (int step = 0; step < 300; ++step) {
    const int kind = static_cast<int>(rng() % 10);
    std::string what = "step " + std::to_string(step) + " kind " + std::to_string(kind);
    switch (kind) {
      case 0:
        c.InsertOne(Padded(id(), pad())).status().IgnoreError();  // may be a duplicate
        break;
      case 1: {
        std::vector<Document> docs;
        for (int i = 0; i < 5; ++i) docs.push_back(Padded(id(), pad()));
        InsertManyOptions o;
        o.ordered = rng() % 2 == 0;
        ASSERT_TRUE(c.InsertMany(docs, o).ok()) << what;
        break;
      }
      case 2:
        ASSERT_TRUE(c.UpdateOne(IdFilter(id()), SetPad(pad())).ok()) << what;
        break;
      case 3: {
        UpdateOptions o;
        o.upsert = true;
        BsonBuilder replacement;
        replacement.AppendString("pad", std::string(pad(), 'r'));
        ASSERT_TRUE(c.ReplaceOne(IdFilter(id()), std::move(replacement).Build(), o).ok()) << what;
        break;
      }
      case 4:
        ASSERT_TRUE(c.DeleteOne(IdFilter(id())).ok()) << what;
        break;
      case 5: {
        BsonBuilder f;
        f.OpenDocument("_id").AppendInt64("$lt", id() / 4).Close();
        ASSERT_TRUE(c.DeleteMany(std::move(f).Build()).ok()) << what;
        break;
      }
      case 6: {
        BsonBuilder f;
        f.OpenDocument("_id").AppendInt64("$gte", id()).Close();
        ASSERT_TRUE(c.UpdateMany(std::move(f).Build(), SetPad(pad())).ok()) << what;
        break;
      }
      case 7: {
        FindOneAndModifyOptions o;
        o.upsert = true;
        ASSERT_TRUE(c.FindOneAndUpdate(IdFilter(id()), SetPad(pad()), o).ok()) << what;
        break;
      }
      case 8:
        ASSERT_TRUE(c.FindOneAndDelete(IdFilter(id())).ok()) << what;
        break;
      case 9: {
        // A transaction: inserts and an update, committed or aborted.
        auto session = client_->StartSession();
        ASSERT_TRUE(session.ok());
        ASSERT_TRUE(session->StartTransaction().ok());
        Collection in = session->GetDatabase("app").GetCollection("c");
        in.InsertOne(Padded(100 + id(), pad())).status().IgnoreError();
        in.UpdateOne(IdFilter(id()), SetPad(pad())).status().IgnoreError();
        if (rng() % 2 == 0) {
          session->CommitTransaction().IgnoreError();
        } else {
          ASSERT_TRUE(session->AbortTransaction().ok());
        }
        break;
      }
    }
    ExpectExact(c, what);
    if (HasFailure()) return;
  }
  EXPECT_GT(Growth(c).document_sizes.total(), 10);
}

// A capped collection's inserts delete its oldest documents: they leave
// the histogram too.
TEST_F(GrowthStatisticsTest, CappedEvictionsLeaveTheHistogram) {
  ASSERT_TRUE(
      client_->GetDatabase("app").CreateCollection("capped", test::CappedOptions(8192)).ok());
  Collection c = Coll("capped");
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(c.InsertOne(Padded(i, 100 + 37 * (i % 7))).ok());
  ExpectExact(c, "capped");
  EXPECT_LT(Growth(c).document_sizes.total(), 40);
}

// What is kept survives a clean restart, follows a rename, and goes with a
// drop; the percentiles are bucket bounds.
TEST_F(GrowthStatisticsTest, KeptAcrossRestartsAndRenamesDroppedWithTheCollection) {
  Collection c = Coll();
  std::vector<Document> docs;
  for (int i = 0; i < 100; ++i) docs.push_back(Padded(i, i < 90 ? 90 : 5000));
  ASSERT_TRUE(c.InsertMany(docs).ok());
  GrowthStatistics before = Growth(c);
  ASSERT_TRUE(before.document_sizes_known);
  EXPECT_EQ(before.document_sizes.PercentileBound(50), 127);  // 90 + 28 bytes: [64, 128)
  EXPECT_EQ(before.document_sizes.PercentileBound(90), 127);
  EXPECT_EQ(before.document_sizes.PercentileBound(91), 8191);
  EXPECT_EQ(before.document_sizes.MaxBound(), 8191);

  ASSERT_TRUE(client_->Close().ok());
  Open();
  c = Coll();
  GrowthStatistics after = Growth(c);
  ASSERT_TRUE(after.document_sizes_known);
  EXPECT_EQ(after.document_sizes.counts, before.document_sizes.counts);
  ExpectExact(c, "after a restart");

  ASSERT_TRUE(client_->GetDatabase("app").RenameCollection("c", "d").ok());
  ASSERT_TRUE(c.DeleteOne(IdFilter(1)).ok());  // the old name: nothing there now
  Collection d = Coll("d");
  ASSERT_TRUE(d.DeleteOne(IdFilter(2)).ok());
  ExpectExact(d, "after a rename");
  ASSERT_TRUE(client_->Close().ok());
  Open();
  d = Coll("d");
  ExpectExact(d, "a renamed collection after a restart");
  EXPECT_EQ(Growth(d).document_sizes.total(), 99);

  ASSERT_TRUE(d.Drop().ok());
  ASSERT_TRUE(d.InsertOne(Padded(1, 10)).ok());
  EXPECT_EQ(Growth(d).document_sizes.total(), 1);
  ASSERT_TRUE(client_->Close().ok());
  Open();
  EXPECT_EQ(Growth(Coll("d")).document_sizes.total(), 1);
}

// A copy taken while the database is open (a checkpoint: what a crash
// leaves) has no mark of a clean close: the sizes of its non-empty
// collections are unknown, until Stats() rebuilds them from its scan; an
// empty collection's are known.
TEST_F(GrowthStatisticsTest, AfterACrashSizesAreUnknownUntilStatsRebuildsThem) {
  Collection c = Coll();
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(c.InsertOne(Padded(i, 10 * i)).ok());
  ASSERT_TRUE(client_->GetDatabase("app").CreateCollection("empty").ok());
  ASSERT_TRUE(client_->Close().ok());  // a clean close: the mark is written ...
  Open();                              // ... and taken down at open
  ASSERT_TRUE(Coll().UpdateOne(IdFilter(3), SetPad(3000)).ok());  // not in any entry yet
  ASSERT_TRUE(client_->Checkpoint(dir_.Sub("copy")).ok());
  ASSERT_TRUE(client_->Close().ok());
  client_.reset();
  auto copy = Client::Open(dir_.Sub("copy"));
  ASSERT_TRUE(copy.ok()) << copy.status();
  Collection cc = (*copy)->GetDatabase("app").GetCollection("c");
  EXPECT_FALSE(Growth(cc).document_sizes_known);
  EXPECT_TRUE(Growth((*copy)->GetDatabase("app").GetCollection("empty")).document_sizes_known);
  auto stats = cc.Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(stats->growth.document_sizes_known);
  EXPECT_EQ(stats->count, 30);
  EXPECT_EQ(stats->growth.document_sizes.counts, Recount(cc));
  ExpectExact(cc, "rebuilt");
  // And known again after a clean close.
  ASSERT_TRUE((*copy)->Close().ok());
  copy = Client::Open(dir_.Sub("copy"));
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_TRUE(Growth((*copy)->GetDatabase("app").GetCollection("c")).document_sizes_known);
}

// A catalog entry written before rockdoc kept statistics (no "statistics"
// field): the sizes are unknown, and Stats() rebuilds them.
TEST_F(GrowthStatisticsTest, EntriesFromBeforeStatisticsAreRebuilt) {
  Collection c = Coll();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(c.InsertOne(Padded(i, 50 * i)).ok());
  ASSERT_TRUE(client_->Close().ok());  // the entry written with its statistics
  Open();
  // Rewrite the entry as an older rockdoc wrote it.
  std::shared_ptr<internal::Engine> engine =
      internal::ClientAccess::EngineOf(client_->GetDatabase("app"));
  const std::string key = internal::CatalogMetaKey("app", "c");
  std::string value;
  bool found = false;
  ASSERT_TRUE(engine->ReadMetadata(key, &value, &found).ok());
  ASSERT_TRUE(found);
  Document entry = Document::AdoptValidated(value);
  ASSERT_TRUE(entry.Get("statistics").ok());
  BsonBuilder old;
  for (Element e : entry) {
    if (e.key() != "statistics") old.AppendElement(e);
  }
  Document old_entry = std::move(old).Build();
  ASSERT_TRUE(engine
                  ->WriteMetadata({{internal::Engine::MetadataWrite::Op::kPut, key,
                                    std::string(old_entry.bytes())}})
                  .ok());
  engine.reset();
  ASSERT_TRUE(client_->Close().ok());  // nothing changed since: the entry stays as written
  Open();
  c = Coll();
  EXPECT_FALSE(Growth(c).document_sizes_known);
  ASSERT_TRUE(c.Stats().ok());
  ExpectExact(c, "rebuilt from an old entry");
}

// Stats() rebuilds the sizes while writers insert, update and delete, in
// and out of transactions: the result is exact, whatever the interleaving.
TEST_F(GrowthStatisticsTest, RebuildIsExactUnderConcurrentWriters) {
  Collection c = Coll();
  std::vector<Document> docs;
  for (int i = 0; i < 2000; ++i) docs.push_back(Padded(i, 20 + (i * 37) % 3000));
  ASSERT_TRUE(c.InsertMany(docs).ok());
  for (int round = 0; round < 4; ++round) {
    ASSERT_TRUE(client_->Checkpoint(dir_.Sub("copy" + std::to_string(round))).ok());
    auto copy = Client::Open(dir_.Sub("copy" + std::to_string(round)));
    ASSERT_TRUE(copy.ok()) << copy.status();
    Collection cc = (*copy)->GetDatabase("app").GetCollection("c");
    ASSERT_FALSE(Growth(cc).document_sizes_known);
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int t = 0; t < 3; ++t) {
      writers.emplace_back([&, t] {
        std::mt19937_64 rng(static_cast<uint64_t>(round * 10 + t));
        Collection w = (*copy)->GetDatabase("app").GetCollection("c");
        while (!stop.load()) {
          const int64_t id = static_cast<int64_t>(rng() % 2500);
          switch (rng() % 4) {
            case 0: w.InsertOne(Padded(id, rng() % 4000)).status().IgnoreError(); break;
            case 1: w.DeleteOne(IdFilter(id)).status().IgnoreError(); break;
            case 2: w.UpdateOne(IdFilter(id), SetPad(rng() % 4000)).status().IgnoreError(); break;
            default: {
              auto s = (*copy)->StartSession();
              if (!s.ok() || !s->StartTransaction().ok()) break;
              Collection in = s->GetDatabase("app").GetCollection("c");
              in.UpdateOne(IdFilter(id), SetPad(rng() % 4000)).status().IgnoreError();
              in.DeleteOne(IdFilter((id + 1) % 2500)).status().IgnoreError();
              s->CommitTransaction().IgnoreError();
            }
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto stats = cc.Stats();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop = true;
    for (std::thread& t : writers) t.join();
    ASSERT_TRUE(stats.ok()) << stats.status();
    ExpectExact(cc, "round " + std::to_string(round));
    ASSERT_TRUE((*copy)->Close().ok());
  }
}

// Array lengths: arrays of 16 elements or more, in writes that grow a
// document of 750 bytes or more, by path (embedded documents' arrays
// included, those inside array elements not); the longest exact.
TEST_F(GrowthStatisticsTest, ArrayLengthsAtTheirThresholds) {
  Collection c = Coll();
  auto with = [](int id, int n, int m, size_t pad) {
    BsonBuilder b;
    b.AppendInt32("_id", id).AppendString("pad", std::string(pad, 'p'));
    b.OpenArray("a");
    for (int i = 0; i < n; ++i) b.AppendInt32("", i);
    b.Close();
    b.OpenDocument("e").OpenArray("b");
    for (int i = 0; i < m; ++i) {
      b.OpenDocument("").OpenArray("inner");
      for (int j = 0; j < 20; ++j) b.AppendInt32("", j);
      b.Close().Close();
    }
    b.Close().Close();
    return std::move(b).Build();
  };
  ASSERT_TRUE(c.InsertOne(with(1, 15, 16, 800)).ok());   // a: 15, not recorded; e.b: 16
  ASSERT_TRUE(c.InsertOne(with(2, 16, 0, 800)).ok());    // a: 16
  ASSERT_TRUE(c.InsertOne(with(3, 100, 0, 10)).ok());    // 100 ints: 800 bytes and more
  ASSERT_TRUE(c.InsertOne(with(4, 40, 0, 0)).ok());      // under 750 bytes: not looked at
  GrowthStatistics g = Growth(c);
  ASSERT_EQ(g.array_lengths.size(), 2u);
  EXPECT_EQ(g.array_lengths[0].path, "a");
  EXPECT_EQ(g.array_lengths[0].lengths.total(), 2);
  EXPECT_EQ(g.array_lengths[0].max, 100);
  EXPECT_EQ(g.array_lengths[0].lengths.counts[4], 1);  // 16
  EXPECT_EQ(g.array_lengths[0].lengths.counts[6], 1);  // 100
  EXPECT_EQ(g.array_lengths[1].path, "e.b");
  EXPECT_EQ(g.array_lengths[1].max, 16);
  // A write that does not grow the document is not looked at; one that
  // does is.
  ASSERT_TRUE(c.UpdateOne(IdFilter(3), Json(R"({"$set": {"a.0": 7}})")).ok());
  EXPECT_EQ(Growth(c).array_lengths[0].lengths.total(), 2);
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 3})"), Json(R"({"$push": {"a": 1}})")).ok());
  g = Growth(c);
  EXPECT_EQ(g.array_lengths[0].lengths.total(), 3);
  EXPECT_EQ(g.array_lengths[0].max, 101);
  // Kept across a restart; shown by collStats.
  ASSERT_TRUE(client_->Close().ok());
  Open();
  EXPECT_EQ(Growth(Coll()).array_lengths[0].max, 101);
  Document reply = client_->RunCommand("app", Json(R"({"collStats": "c"})"));
  ASSERT_EQ(reply.Get("ok").NumberAsDouble(), 1) << ToJson(reply);
  EXPECT_EQ(ToJson(reply.Get("arrayLengths").Array().Get("0").Document()),
            R"({"path": "a", "count": 3, "p50": 127, "p90": 127, "max": 101, "buckets": [)"
            R"({"min": 16, "max": 31, "count": 1}, {"min": 64, "max": 127, "count": 2}]})");
  Element sizes = reply.Get("documentSizes");
  EXPECT_TRUE(sizes.Document().Get("known").Bool()) << ToJson(reply);
  EXPECT_EQ(sizes.Document().Get("count").NumberAsDouble(), 4);
}

// The store counts array elements by skipping them in place: right for
// every BSON type (arrays of random values, each length checked).
TEST_F(GrowthStatisticsTest, ArrayLengthsOfEveryBsonType) {
  Collection c = Coll();
  test::RandomDocuments random(7);
  std::mt19937_64 rng(3);
  std::map<std::string, int64_t> expected;
  for (int d = 0; d < 40; ++d) {
    const std::string field = "f" + std::to_string(100 + d);
    const int n = 16 + static_cast<int>(rng() % 300);
    BsonBuilder b;
    b.AppendInt32("_id", d).AppendString("pad", std::string(800, 'p'));
    b.OpenArray(field);
    for (int i = 0; i < n; ++i) {
      if (i % 50 == 7) {
        b.AppendCodeWithScope(std::to_string(i), "x", Json(R"({"x": 1})"));
      } else {
        random.AppendValue(&b, std::to_string(i), 1);
      }
    }
    b.Close();
    ASSERT_TRUE(c.InsertOne(std::move(b).Build()).ok());
    expected[field] = n;
  }
  std::map<std::string, int64_t> seen;
  for (const ArrayLengths& a : Growth(c).array_lengths) seen[a.path] = a.max;
  EXPECT_EQ(seen, expected);
}

// The store's in-place count of a stored array's elements (no fallback to
// the iterator here: -1 would say it met a type it does not know) equals
// the iterator's, over random documents of every BSON type.
TEST(CountStoredElementsTest, EqualsTheIteratorsCountForEveryBsonType) {
  test::RandomDocuments random(11, /*max_depth=*/3, /*max_fields=*/30);
  for (int i = 0; i < 2000; ++i) {
    BsonBuilder b;
    const int n = i % 40;
    for (int k = 0; k < n; ++k) {
      if (k % 13 == 5) {
        b.AppendCodeWithScope(std::to_string(k), "x", Json(R"({"x": 1})"));
      } else {
        random.AppendValue(&b, std::to_string(k), 0);
      }
    }
    Document doc = std::move(b).Build();
    int64_t expected = 0;
    for (auto it = doc.begin(); it != doc.end(); ++it) ++expected;
    ASSERT_EQ(internal::CountStoredElements(doc), expected) << ToJson(doc);
  }
}

// At most 64 array paths per collection: the first ones met.
TEST_F(GrowthStatisticsTest, ArrayPathsAreBounded) {
  Collection c = Coll();
  BsonBuilder b;
  b.AppendInt32("_id", 1);
  for (int f = 0; f < 70; ++f) {
    b.OpenArray("f" + std::to_string(100 + f));
    for (int i = 0; i < 16; ++i) b.AppendInt32("", i);
    b.Close();
  }
  ASSERT_TRUE(c.InsertOne(std::move(b).Build()).ok());
  GrowthStatistics g = Growth(c);
  ASSERT_EQ(g.array_lengths.size(), 64u);
  EXPECT_EQ(g.array_lengths.front().path, "f100");
  EXPECT_EQ(g.array_lengths.back().path, "f163");
}

// collect_statistics off: no growth warnings (counted, logged or in
// results), no sizes, no array lengths; the sizes written that way are
// unknown to a client with statistics on, until Stats() rebuilds them. The
// warnings and array lengths kept before stay.
TEST_F(GrowthStatisticsTest, SwitchedOffCountsNothing) {
  Collection c = Coll();
  BsonBuilder big;
  big.AppendInt32("_id", 1).OpenArray("a");
  for (int i = 0; i < 300; ++i) big.AppendInt32("", i);
  big.Close();
  Document doc = std::move(big).Build();
  ASSERT_TRUE(c.InsertOne(Padded(0, 10)).ok());
  ASSERT_TRUE(client_->Close().ok());

  ClientOptions off;
  off.collect_statistics = false;
  Open(off);
  c = Coll();
  auto r = c.InsertOne(doc);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->warnings.empty());
  auto u = c.UpdateOne(IdFilter(0), SetPad(1000));
  ASSERT_TRUE(u.ok());
  GrowthStatistics g = Growth(c);
  EXPECT_FALSE(g.document_sizes_known);
  EXPECT_TRUE(g.array_lengths.empty());
  EXPECT_EQ(g.array_250_warnings, 0);
  auto stats = c.Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_FALSE(stats->growth.document_sizes_known);  // not rebuilt either
  EXPECT_EQ(stats->count, 2);
  Document reply = client_->RunCommand("app", Json(R"({"collStats": "c"})"));
  EXPECT_EQ(ToJson(reply.Get("documentSizes").Document()), R"({"known": false})");
  EXPECT_EQ(ToJson(reply.Get("growthWarnings").Document()),
            R"({"documentSize50Percent": 0, "documentSize90Percent": 0, "array250": 0, "array1000": 0, "array10000": 0})");
  ASSERT_TRUE(client_->Close().ok());

  Open();
  c = Coll();
  EXPECT_FALSE(Growth(c).document_sizes_known);
  EXPECT_EQ(Growth(c).array_250_warnings, 0);
  ASSERT_TRUE(c.Stats().ok());
  ExpectExact(c, "rebuilt after writes without statistics");
  // On again: the warning counts.
  ASSERT_TRUE(c.UpdateOne(IdFilter(1), Json(R"({"$set": {"a": []}})")).ok());
  auto again = c.ReplaceOne(IdFilter(1), doc);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->warnings.size(), 1u);
  EXPECT_EQ(Growth(c).array_250_warnings, 1);
}

}  // namespace
}  // namespace rockdoc

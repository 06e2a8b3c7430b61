// The plan cache (catalog/plan_cache.h, planner/query_planner.cc; issue 36):
// a repeated query shape reuses the planner's choice; every index change
// (create, drop, hide, unhide, collMod) and a dropped collection clear it; a
// shape over a partial or sparse index is never cached; explain never reads
// it. The truth for answers is the same query with the cache switched off,
// and a collection scan ($natural): a cached choice may only change speed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "api/client_internal.h"
#include "catalog/catalog.h"
#include "planner/query_planner.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using internal::CachedPlanChoice;
using test::Json;

class PlanCacheTest : public test::ClientTest {
 protected:
  void SetUp() override {
    internal::SetPlanCacheEnabled(true);
    ClientTest::SetUp();
  }
  void TearDown() override { internal::SetPlanCacheEnabled(true); }

  Collection Coll() const { return client_->GetDatabase("db").GetCollection("c"); }

  std::shared_ptr<internal::CollectionMeta> Meta() const {
    auto engine = internal::ClientAccess::EngineOf(client_->GetDatabase("db"));
    return internal::CatalogOf(*engine).Find("db", "c");
  }

  // The cached choices: "a_1", "COLLSCAN" or "CLUSTERED", sorted.
  std::vector<std::string> Cached() const {
    std::vector<std::string> out;
    auto meta = Meta();
    if (meta == nullptr) return out;
    for (const auto& [shape, choice] : meta->plan_cache.Entries()) {
      switch (choice.kind) {
        case CachedPlanChoice::Kind::kIndex:
          out.push_back(choice.index_name);
          break;
        case CachedPlanChoice::Kind::kClustered:
          out.push_back("CLUSTERED");
          break;
        case CachedPlanChoice::Kind::kCollScan:
          out.push_back("COLLSCAN");
          break;
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  void CreateIndex(std::string_view keys, IndexOptions options = {}) {
    auto r = Coll().CreateIndex(Json(keys), options);
    ASSERT_TRUE(r.ok()) << r.status();
  }

  // How often plans have used the index named `name` ($indexStats).
  int64_t Uses(std::string_view name) const {
    auto stats = Coll().IndexStats();
    EXPECT_TRUE(stats.ok()) << stats.status();
    if (!stats.ok()) return -1;
    for (const Document& s : *stats) {
      if (s.Get("name").String() != name) continue;
      int64_t ops = -1;
      EXPECT_TRUE(s.GetPath("accesses.ops").ExactInt64(&ops));
      return ops;
    }
    ADD_FAILURE() << "no index " << name;
    return -1;
  }

  // The documents found, as JSON; sorted unless the options sort.
  std::vector<std::string> Found(const Document& filter, const FindOptions& options = {}) const {
    return test::FoundJson(Coll(), filter, options);
  }
  std::vector<std::string> Found(std::string_view filter) const { return Found(Json(filter)); }

  // The same query forced to a collection scan.
  std::vector<std::string> Scanned(const Document& filter, FindOptions options = {}) const {
    options.hint = Json(R"({"$natural": 1})");
    return Found(filter, options);
  }

  // 200 documents and the indexes {a: 1} and {b: 1}: for {a, b}
  // equalities, b's wins the race (a matches half the collection).
  void WithIndexesAAndB() {
    InsertRange(200);
    CreateIndex(R"({"a": 1})");
    CreateIndex(R"({"b": 1})");
  }

  void InsertRange(int n) {
    std::vector<Document> docs;
    for (int i = 0; i < n; ++i) {
      BsonBuilder b;
      b.AppendInt32("_id", i).AppendInt32("a", i % 2).AppendInt32("b", i).AppendInt32("c", i % 7);
      docs.push_back(std::move(b).Build());
    }
    ASSERT_TRUE(Coll().InsertMany(docs).ok());
  }
};

TEST_F(PlanCacheTest, RepeatedShapeReusesTheRaceWinner) {
  WithIndexesAAndB();
  // b's equality wins the race against a's (half the collection).
  EXPECT_EQ(Found(R"({"a": 1, "b": 7})").size(), 1u);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"b_1"}));
  const int64_t a_uses = Uses("a_1"), b_uses = Uses("b_1");
  // The same shape with other values: the cached choice, no race (a race
  // would count nothing for a_1 either, but here b_1 is counted once per
  // query and the cache still holds one entry).
  EXPECT_EQ(Found(R"({"a": 0, "b": 8})").size(), 1u);
  EXPECT_EQ(Found(R"({"a": 0, "b": 9})").size(), 0u);
  EXPECT_EQ(Uses("b_1"), b_uses + 2);
  EXPECT_EQ(Uses("a_1"), a_uses);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"b_1"}));
  auto entries = Meta()->plan_cache.Entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].second.candidates, 2);
  // Another shape (a string where a number was) is another entry.
  EXPECT_EQ(Found(R"({"a": 1, "b": "x"})").size(), 0u);
  EXPECT_EQ(Meta()->plan_cache.size(), 2u);
}

TEST_F(PlanCacheTest, ExplainNeitherReadsNorWritesTheCache) {
  WithIndexesAAndB();
  auto e = Coll().ExplainFind(Json(R"({"a": 1, "b": 7})"), {}, ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(Cached().empty());
  EXPECT_EQ(Found(R"({"a": 1, "b": 7})").size(), 1u);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"b_1"}));
  // With the shape cached, explain still races both and shows the loser.
  e = Coll().ExplainFind(Json(R"({"a": 1, "b": 9})"), {}, ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->GetPath("queryPlanner.winningPlan.inputStage.indexName").String(), "b_1");
  Element rejected = e->GetPath("queryPlanner.rejectedPlans");
  ASSERT_TRUE(rejected.IsArray());
  std::vector<std::string> losers;
  for (const Element& plan : rejected.Array()) {
    losers.emplace_back(plan.Document().GetPath("inputStage.indexName").String());
  }
  EXPECT_EQ(losers, (std::vector<std::string>{"a_1"}));
}

TEST_F(PlanCacheTest, NewIndexClearsTheCacheAndABetterOneIsUsed) {
  InsertRange(200);
  CreateIndex(R"({"a": 1})");
  EXPECT_EQ(Found(R"({"a": 1, "b": 7})").size(), 1u);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"a_1"}));
  CreateIndex(R"({"b": 1})");
  EXPECT_TRUE(Cached().empty());
  EXPECT_EQ(Found(R"({"a": 1, "b": 9})").size(), 1u);
  EXPECT_EQ(Uses("b_1"), 1);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"b_1"}));
}

TEST_F(PlanCacheTest, CollectionScanChoiceGivesWayToANewIndex) {
  InsertRange(100);
  EXPECT_EQ(Found(R"({"b": 7})").size(), 1u);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"COLLSCAN"}));
  CreateIndex(R"({"b": 1})");
  EXPECT_EQ(Found(R"({"b": 8})").size(), 1u);
  EXPECT_EQ(Uses("b_1"), 1);
}

TEST_F(PlanCacheTest, DroppedIndexIsNeverUsed) {
  WithIndexesAAndB();
  EXPECT_EQ(Found(R"({"a": 1, "b": 7})").size(), 1u);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"b_1"}));
  ASSERT_TRUE(Coll().DropIndex("b_1").ok());
  EXPECT_TRUE(Cached().empty());
  EXPECT_EQ(Found(R"({"a": 1, "b": 9})"),
            (std::vector<std::string>{R"({"_id": 9, "a": 1, "b": 9, "c": 2})"}));
  EXPECT_EQ(Cached(), (std::vector<std::string>{"a_1"}));
  // An index of the dropped one's name over another field: the cache was
  // cleared again, and the new b_1 is never taken for the old.
  IndexOptions named;
  named.name = "b_1";
  CreateIndex(R"({"c": 1})", named);
  EXPECT_TRUE(Cached().empty());
  EXPECT_EQ(Found(R"({"a": 1, "b": 11})").size(), 1u);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"a_1"}));
}

TEST_F(PlanCacheTest, HideAndUnhideClearTheCache) {
  InsertRange(200);
  CreateIndex(R"({"b": 1})");
  EXPECT_EQ(Found(R"({"b": 7})").size(), 1u);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"b_1"}));
  ASSERT_TRUE(
      test::CollModCommand(*client_, "db", "c", R"({"index": {"name": "b_1", "hidden": true}})")
          .ok());
  EXPECT_TRUE(Cached().empty());
  const int64_t uses = Uses("b_1");
  EXPECT_EQ(Found(R"({"b": 8})").size(), 1u);
  EXPECT_EQ(Uses("b_1"), uses) << "a hidden index is never used";
  EXPECT_EQ(Cached(), (std::vector<std::string>{"COLLSCAN"}));
  ASSERT_TRUE(
      test::CollModCommand(*client_, "db", "c", R"({"index": {"name": "b_1", "hidden": false}})")
          .ok());
  EXPECT_TRUE(Cached().empty());
  EXPECT_EQ(Found(R"({"b": 9})").size(), 1u);
  EXPECT_EQ(Uses("b_1"), uses + 1);
  // collMod's TTL change of an index clears it too.
  ASSERT_TRUE(test::CollModCommand(*client_, "db", "c",
                                   R"({"index": {"name": "b_1", "expireAfterSeconds": 100}})")
                  .ok());
  EXPECT_TRUE(Cached().empty());
}

TEST_F(PlanCacheTest, HiddenIndexCachedBeforeHidingIsNotUsed) {
  // A choice cached under an index that a stale planner could still see:
  // the cached choice is checked against the index's hidden flag itself.
  InsertRange(50);
  CreateIndex(R"({"b": 1})");
  EXPECT_EQ(Found(R"({"b": 7})").size(), 1u);
  auto meta = Meta();
  ASSERT_NE(meta, nullptr);
  auto entries = meta->plan_cache.Entries();
  ASSERT_EQ(entries.size(), 1u);
  const_cast<internal::IndexDescriptor*>(meta->indexes()->FindByName("b_1"))->set_hidden(true);
  const int64_t uses = Uses("b_1");
  EXPECT_EQ(Found(R"({"b": 8})").size(), 1u);
  EXPECT_EQ(Uses("b_1"), uses);
  const_cast<internal::IndexDescriptor*>(meta->indexes()->FindByName("b_1"))->set_hidden(false);
}

TEST_F(PlanCacheTest, PartialAndSparseIndexShapesAreNotCached) {
  InsertRange(100);
  IndexOptions partial;
  partial.partial_filter_expression = Json(R"({"b": {"$gt": 50}})");
  CreateIndex(R"({"b": 1})", partial);
  // Covered by the partial filter, then not: both answers right, nothing cached.
  EXPECT_EQ(Found(R"({"b": {"$gt": 90}})").size(), 9u);
  EXPECT_EQ(Found(R"({"b": {"$gt": 10}})").size(), 89u);
  EXPECT_EQ(Found(R"({"b": {"$gt": 95}})").size(), 4u);
  EXPECT_TRUE(Cached().empty());
  ASSERT_TRUE(Coll().DropIndex("b_1").ok());
  IndexOptions sparse;
  sparse.sparse = true;
  CreateIndex(R"({"d": 1})", sparse);
  EXPECT_EQ(Found(R"({"d": null})").size(), 100u);
  EXPECT_EQ(Found(R"({"d": 3})").size(), 0u);
  EXPECT_TRUE(Cached().empty());
}

TEST_F(PlanCacheTest, DroppedCollectionStartsEmpty) {
  InsertRange(20);
  CreateIndex(R"({"b": 1})");
  EXPECT_EQ(Found(R"({"b": 7})").size(), 1u);
  EXPECT_EQ(Cached().size(), 1u);
  ASSERT_TRUE(Coll().Drop().ok());
  InsertRange(20);
  EXPECT_TRUE(Cached().empty());
  EXPECT_EQ(Found(R"({"b": 7})").size(), 1u);
  EXPECT_EQ(Cached(), (std::vector<std::string>{"COLLSCAN"}));
}

TEST_F(PlanCacheTest, SwitchedOffCachesNothing) {
  InsertRange(20);
  CreateIndex(R"({"b": 1})");
  internal::SetPlanCacheEnabled(false);
  EXPECT_EQ(Found(R"({"b": 7})").size(), 1u);
  EXPECT_TRUE(Cached().empty());
}

// The property: random queries over random documents, with random index
// changes between them, give the same answers with the plan cache on (its
// entries made by earlier queries of the same shapes with other values)
// as with it off, and as a collection scan.
TEST_F(PlanCacheTest, RandomQueriesAnswerAsWithTheCacheOff) {
  std::mt19937 rng(36);
  std::vector<Document> docs;
  for (int i = 0; i < 400; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i);
    if (rng() % 10 != 0) b.AppendInt32("a", static_cast<int32_t>(rng() % 10));
    b.AppendInt32("b", static_cast<int32_t>(rng() % 100));
    if (rng() % 4 == 0) {
      b.AppendString("c", std::string(1, static_cast<char>('a' + rng() % 5)));
    } else {
      b.AppendInt32("c", static_cast<int32_t>(rng() % 5));
    }
    if (rng() % 3 == 0) {
      b.OpenArray("t")
          .AppendInt32("", static_cast<int32_t>(rng() % 6))
          .AppendInt32("", static_cast<int32_t>(rng() % 6))
          .Close();
    } else {
      b.AppendInt32("t", static_cast<int32_t>(rng() % 6));
    }
    docs.push_back(std::move(b).Build());
  }
  ASSERT_TRUE(Coll().InsertMany(docs).ok());
  const std::vector<std::string> index_keys = {R"({"a": 1})",          R"({"b": 1})",
                                               R"({"a": 1, "b": 1})",  R"({"c": 1})",
                                               R"({"b": -1, "c": 1})", R"({"t": 1})"};
  for (const std::string& k : index_keys) CreateIndex(k);

  auto n = [&](int mod) { return static_cast<int32_t>(rng() % mod); };
  // Shapes with fresh values each time.
  auto make_query = [&](int shape, FindOptions* options) -> Document {
    BsonBuilder b;
    switch (shape) {
      case 0:
        b.AppendInt32("a", n(10));
        break;
      case 1:
        b.AppendInt32("a", n(10)).OpenDocument("b").AppendInt32("$gte", n(100)).Close();
        break;
      case 2:
        b.OpenDocument("b").AppendInt32("$gt", n(100)).AppendInt32("$lt", n(100)).Close();
        b.AppendInt32("c", n(5));
        break;
      case 3:
        b.OpenDocument("a")
            .OpenArray("$in")
            .AppendInt32("", n(10))
            .AppendInt32("", n(10))
            .Close()
            .Close();
        b.OpenDocument("b").AppendInt32("$lte", n(100)).Close();
        break;
      case 4:
        b.AppendInt32("t", n(6));
        b.OpenDocument("a").AppendInt32("$lt", n(10)).Close();
        break;
      case 5:
        b.OpenArray("$or");
        b.OpenDocument("").AppendInt32("a", n(10)).Close();
        b.OpenDocument("").AppendInt32("b", n(100)).Close();
        b.Close();
        break;
      case 6:
        b.OpenDocument("_id").AppendInt32("$gte", n(400)).Close();
        b.AppendInt32("a", n(10));
        break;
      case 7:
        b.AppendString("c", std::string(1, static_cast<char>('a' + n(5))));
        break;
      default:
        b.OpenDocument("b").AppendInt32("$gte", n(100)).Close();
        break;
    }
    switch (rng() % 4) {
      case 1:
        options->sort = Json(R"({"b": 1, "_id": 1})");
        break;
      case 2:
        options->sort = Json(R"({"b": -1, "_id": -1})");
        options->limit = 1 + n(20);
        break;
      case 3:
        options->projection = Json(R"({"_id": 0, "a": 1, "b": 1})");
        break;
      default:
        break;
    }
    return std::move(b).Build();
  };

  const std::vector<std::string> index_names = {"a_1", "b_1", "a_1_b_1", "c_1", "b_-1_c_1", "t_1"};
  int hidden = -1;
  for (int round = 0; round < 600; ++round) {
    if (round % 40 == 39) {
      // An index change: drop and recreate one, or hide one, or show the
      // hidden one again.
      const int which = n(static_cast<int>(index_keys.size()));
      if (hidden >= 0) {
        ASSERT_TRUE(test::CollModCommand(
                        *client_, "db", "c",
                        R"({"index": {"name": ")" + index_names[hidden] + R"(", "hidden": false}})")
                        .ok());
        hidden = -1;
      } else if (rng() % 2 == 0) {
        ASSERT_TRUE(Coll().DropIndex(index_names[which]).ok());
        CreateIndex(index_keys[which]);
      } else {
        ASSERT_TRUE(test::CollModCommand(
                        *client_, "db", "c",
                        R"({"index": {"name": ")" + index_names[which] + R"(", "hidden": true}})")
                        .ok());
        hidden = which;
      }
    }
    FindOptions options;
    const int shape = n(9);
    Document filter = make_query(shape, &options);
    SCOPED_TRACE(ToJson(filter) + " sort " + ToJson(options.sort) + " projection " +
                 ToJson(options.projection) + " limit " + std::to_string(options.limit));
    std::vector<std::string> cached = Found(filter, options);
    internal::SetPlanCacheEnabled(false);
    std::vector<std::string> planned = Found(filter, options);
    auto counted_off = Coll().CountDocuments(filter);
    internal::SetPlanCacheEnabled(true);
    auto counted_on = Coll().CountDocuments(filter);
    ASSERT_EQ(cached, planned);
    ASSERT_EQ(cached, Scanned(filter, options));
    ASSERT_TRUE(counted_on.ok() && counted_off.ok());
    ASSERT_EQ(*counted_on, *counted_off);
  }
  // The shapes were cached (and reused between the index changes).
  EXPECT_GT(Meta()->plan_cache.size(), 0u);
}

}  // namespace
}  // namespace rockdoc

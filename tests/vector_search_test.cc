// Vector search (issue 40): vectorSearch indexes made by createSearchIndexes,
// kept by every write, and the $vectorSearch stage. Truths are independent
// of the index: a brute-force scan computed here (scores by Atlas's
// formulas, filters evaluated by hand), exact: true against it, and
// approximate answers' recall against exact ones.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using ::testing::HasSubstr;

// A vector of `dims` values uniform in [-1, 1].
std::vector<double> RandomVector(std::mt19937_64& rng, int dims) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(dims);
  for (double& x : v) x = static_cast<float>(u(rng));  // as the index holds them
  return v;
}

void AppendVector(BsonBuilder* b, std::string_view name, const std::vector<double>& v) {
  b->OpenArray(name);
  for (double x : v) b->AppendDouble("", x);
  b->Close();
}

double EuclideanScore(const std::vector<double>& a, const std::vector<double>& b) {
  double d2 = 0;
  for (size_t i = 0; i < a.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
  return 1 / (1 + std::sqrt(d2));
}

class VectorSearchTest : public test::ClientTest {
 protected:
  Collection coll() { return db().GetCollection("items"); }

  // Documents {_id: i, v: <vector>, genre: i % 10, year: 1990 + i % 30}.
  void InsertRandom(int n, int dims, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<Document> batch;
    for (int i = 0; i < n; ++i) {
      std::vector<double> v = RandomVector(rng, dims);
      vectors_[i] = v;
      BsonBuilder b;
      b.AppendInt32("_id", i);
      AppendVector(&b, "v", v);
      b.AppendInt32("genre", i % 10);
      b.AppendInt32("year", 1990 + i % 30);
      batch.push_back(std::move(b).Build());
      if (batch.size() == 1000 || i + 1 == n) {
        ASSERT_TRUE(coll().InsertMany(batch).ok());
        batch.clear();
      }
    }
  }

  void CreateIndex(int dims, std::string_view similarity = "euclidean") {
    SearchIndexModel m;
    m.name = "vec";
    m.type = "vectorSearch";
    m.definition = Json(R"({"fields": [{"type": "vector", "path": "v", "numDimensions": )" +
                        std::to_string(dims) + R"(, "similarity": ")" + std::string(similarity) +
                        R"("}, {"type": "filter", "path": "genre"},
                             {"type": "filter", "path": "year"}]})");
    auto made = coll().CreateSearchIndexes({m});
    ASSERT_TRUE(made.ok()) << made.status();
  }

  // The $vectorSearch stage's results: (_id, score), best first.
  StatusOr<std::vector<std::pair<int, double>>> Search(const std::vector<double>& q, int limit,
                                                       int candidates, bool exact,
                                                       std::string_view filter = "") {
    BsonBuilder b;
    b.OpenArray("p");
    b.OpenDocument("").OpenDocument("$vectorSearch");
    b.AppendString("index", "vec");
    b.AppendString("path", "v");
    AppendVector(&b, "queryVector", q);
    if (exact) {
      b.AppendBool("exact", true);
    } else {
      b.AppendInt32("numCandidates", candidates);
    }
    b.AppendInt32("limit", limit);
    if (!filter.empty()) b.AppendDocument("filter", Json(filter));
    b.Close().Close();
    b.OpenDocument("").OpenDocument("$project");
    b.AppendInt32("_id", 1);
    b.OpenDocument("score").AppendString("$meta", "vectorSearchScore").Close();
    b.Close().Close();
    b.Close();
    Document cmd = std::move(b).Build();
    auto cursor = coll().Aggregate(cmd.Get("p").Array());
    if (!cursor.ok()) return cursor.status();
    std::vector<std::pair<int, double>> out;
    while (cursor->Next()) {
      DocumentView d = cursor->document();
      out.emplace_back(d.Get("_id").Int32(), d.Get("score").Double());
    }
    if (!cursor->status().ok()) return cursor->status();
    return out;
  }

  // Brute force over what the test inserted (and still holds).
  std::vector<std::pair<int, double>> BruteForce(const std::vector<double>& q, int limit,
                                                 const std::function<bool(int)>& keep) {
    std::vector<std::pair<int, double>> all;
    for (const auto& [id, v] : vectors_) {
      if (keep(id)) all.emplace_back(id, EuclideanScore(v, q));
    }
    std::sort(all.begin(), all.end(), [](auto& a, auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (static_cast<int>(all.size()) > limit) all.resize(limit);
    return all;
  }

  static std::set<int> Ids(const std::vector<std::pair<int, double>>& r) {
    std::set<int> s;
    for (const auto& [id, score] : r) s.insert(id);
    return s;
  }

  std::map<int, std::vector<double>> vectors_;
};

TEST_F(VectorSearchTest, RecallAtTenOfApproximateAgainstExactIsAtLeast95Percent) {
  constexpr int kDims = 64, kDocs = 10000, kQueries = 40;
  InsertRandom(kDocs, kDims, 1);
  CreateIndex(kDims);
  std::mt19937_64 rng(99);
  int found = 0;
  for (int i = 0; i < kQueries; ++i) {
    std::vector<double> q = RandomVector(rng, kDims);
    // numCandidates 20 x limit, Atlas's recommendation ("at least 20 times
    // the limit"), as README's "Vector search" says.
    auto ann = Search(q, 10, 200, false);
    auto enn = Search(q, 10, 0, true);
    ASSERT_TRUE(ann.ok()) << ann.status();
    ASSERT_TRUE(enn.ok()) << enn.status();
    ASSERT_EQ(enn->size(), 10u);
    std::set<int> truth = Ids(*enn);
    for (int id : Ids(*ann)) found += truth.count(id);
    if (i < 5) {
      // exact: true is the brute force, ids and scores.
      auto brute = BruteForce(q, 10, [](int) { return true; });
      ASSERT_EQ(Ids(brute), truth);
      for (size_t k = 0; k < 10; ++k) EXPECT_NEAR((*enn)[k].second, brute[k].second, 1e-6);
    }
  }
  const double recall = static_cast<double>(found) / (kQueries * 10);
  EXPECT_GE(recall, 0.95) << "recall@10 " << recall;
}

TEST_F(VectorSearchTest, FiltersAreHonouredExactly) {
  constexpr int kDims = 8;
  InsertRandom(3000, kDims, 2);
  CreateIndex(kDims);
  struct Case {
    std::string filter;
    std::function<bool(int)> keep;  // on _id: genre i % 10, year 1990 + i % 30
  };
  const std::vector<Case> cases = {
      {R"({"genre": 3})", [](int i) { return i % 10 == 3; }},
      {R"({"genre": {"$in": [1, 7]}})", [](int i) { return i % 10 == 1 || i % 10 == 7; }},
      {R"({"year": {"$gte": 2015}})", [](int i) { return 1990 + i % 30 >= 2015; }},
      {R"({"$and": [{"genre": {"$ne": 2}}, {"year": {"$lt": 1993}}]})",
       [](int i) { return i % 10 != 2 && 1990 + i % 30 < 1993; }},
      {R"({"$or": [{"genre": 9}, {"year": 1990}]})",
       [](int i) { return i % 10 == 9 || 1990 + i % 30 == 1990; }},
      {R"({"genre": {"$nin": [0, 1, 2, 3, 4, 5, 6, 7, 8]}, "year": {"$gt": 2000}})",
       [](int i) { return i % 10 == 9 && 1990 + i % 30 > 2000; }},
  };
  std::mt19937_64 rng(5);
  for (const Case& c : cases) {
    for (int rep = 0; rep < 4; ++rep) {
      std::vector<double> q = RandomVector(rng, kDims);
      auto ann = Search(q, 10, 50, false, c.filter);
      ASSERT_TRUE(ann.ok()) << ann.status();
      EXPECT_FALSE(ann->empty()) << c.filter;
      for (const auto& [id, score] : *ann) EXPECT_TRUE(c.keep(id)) << c.filter << " gave " << id;
      auto enn = Search(q, 10, 0, true, c.filter);
      ASSERT_TRUE(enn.ok()) << enn.status();
      EXPECT_EQ(Ids(*enn), Ids(BruteForce(q, 10, c.keep))) << c.filter;
    }
  }
}

TEST_F(VectorSearchTest, WritesKeepTheIndexAndTheGraphUpToDate) {
  constexpr int kDims = 4;
  InsertRandom(200, kDims, 3);
  CreateIndex(kDims);
  const std::vector<double> q = {0.5, 0.5, 0.5, 0.5};
  ASSERT_TRUE(Search(q, 5, 50, false).ok());  // the graph is built now
  // An insert, an update that moves a vector onto the query, a delete.
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1000, "v": [0.5, 0.5, 0.5, 0.5], "genre": 1})")).ok());
  ASSERT_TRUE(coll()
                  .UpdateOne(Json(R"({"_id": 7})"), Json(R"({"$set": {"v": [0.5, 0.5, 0.5, 0.51]}})"))
                  .ok());
  auto before_delete = Search(q, 2, 50, false);
  ASSERT_TRUE(before_delete.ok());
  ASSERT_EQ(before_delete->size(), 2u);
  EXPECT_EQ((*before_delete)[0].first, 1000);
  EXPECT_DOUBLE_EQ((*before_delete)[0].second, 1.0);  // distance 0
  EXPECT_EQ((*before_delete)[1].first, 7);
  ASSERT_TRUE(coll().DeleteOne(Json(R"({"_id": 1000})")).ok());
  // A document whose vector is no longer one (wrong length) leaves the index.
  ASSERT_TRUE(coll().UpdateOne(Json(R"({"_id": 7})"), Json(R"({"$set": {"v": [1, 2]}})")).ok());
  for (bool exact : {false, true}) {
    auto r = Search(q, 3, 50, exact);
    ASSERT_TRUE(r.ok());
    for (const auto& [id, score] : *r) {
      EXPECT_NE(id, 1000);
      EXPECT_NE(id, 7);
    }
  }
  auto valid = coll().Validate();
  ASSERT_TRUE(valid.ok());
  EXPECT_TRUE(valid->valid);
}

TEST_F(VectorSearchTest, AbortedTransactionLeavesNoVectorAndReopenRebuilds) {
  constexpr int kDims = 4;
  InsertRandom(300, kDims, 4);
  CreateIndex(kDims);
  const std::vector<double> q = {0.9, -0.9, 0.9, -0.9};
  ASSERT_TRUE(Search(q, 5, 50, false).ok());
  {
    auto session = client_->StartSession();
    ASSERT_TRUE(session.ok());
    Collection in_txn = session->GetDatabase("test").GetCollection("items");
    ASSERT_TRUE(session->StartTransaction().ok());
    ASSERT_TRUE(in_txn.InsertOne(Json(R"({"_id": 5000, "v": [0.9, -0.9, 0.9, -0.9]})")).ok());
    ASSERT_TRUE(session->AbortTransaction().ok());
  }
  for (bool exact : {false, true}) {
    auto r = Search(q, 5, 50, exact);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(Ids(*r).count(5000), 0u);
  }
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 6000, "v": [0.9, -0.9, 0.9, -0.9]})")).ok());
  vectors_[6000] = {0.9, -0.9, 0.9, -0.9};
  // After a restart the graph is built again from the entries, which are
  // the documents' (the same transactions wrote both).
  Open();
  auto names = coll().ListSearchIndexes();
  ASSERT_TRUE(names.ok());
  ASSERT_EQ(names->size(), 1u);
  auto ann = Search(q, 10, 100, false);
  auto enn = Search(q, 10, 0, true);
  ASSERT_TRUE(ann.ok() && enn.ok());
  EXPECT_EQ((*ann)[0].first, 6000);
  EXPECT_EQ(Ids(*enn), Ids(BruteForce(q, 10, [](int) { return true; })));
  EXPECT_EQ(Ids(*ann), Ids(*enn));
}

TEST_F(VectorSearchTest, ScoresAreAtlasNormalizedSimilarities) {
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "v": [1, 0]})")).ok());
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 2, "v": [0, 1]})")).ok());
  const std::vector<double> q = {0.6, 0.8};
  struct Expect {
    std::string similarity;
    double score1, score2;
  };
  // euclidean 1/(1+d); cosine (1+cos)/2; dotProduct (1+dot)/2.
  const double d1 = std::sqrt(0.4 * 0.4 + 0.8 * 0.8), d2 = std::sqrt(0.6 * 0.6 + 0.2 * 0.2);
  for (const Expect& e : {Expect{"euclidean", 1 / (1 + d1), 1 / (1 + d2)},
                          Expect{"cosine", (1 + 0.6) / 2, (1 + 0.8) / 2},
                          Expect{"dotProduct", (1 + 0.6) / 2, (1 + 0.8) / 2}}) {
    CreateIndex(2, e.similarity);
    for (bool exact : {false, true}) {
      auto r = Search(q, 2, 10, exact);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->size(), 2u) << e.similarity;
      EXPECT_EQ((*r)[0].first, 2);
      EXPECT_NEAR((*r)[0].second, e.score2, 1e-6) << e.similarity;
      EXPECT_NEAR((*r)[1].second, e.score1, 1e-6) << e.similarity;
    }
    ASSERT_TRUE(coll().DropSearchIndex("vec").ok());
  }
}

TEST_F(VectorSearchTest, MisuseGetsMongoDBsErrors) {
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "v": [1, 0], "genre": 1, "other": 2})")).ok());
  CreateIndex(2);
  auto code = [&](std::string_view pipeline) {
    Document holder = Json("{\"p\": " + std::string(pipeline) + "}");
    auto c = coll().Aggregate(holder.Get("p").Array());
    if (!c.ok()) return static_cast<int>(c.status().code());
    while (c->Next()) {
    }
    return static_cast<int>(c->status().code());
  };
  const std::string head = R"({"index": "vec", "path": "v", "queryVector": [1, 0], )";
  EXPECT_EQ(code(R"([{"$vectorSearch": {"path": "v", "queryVector": [1, 0], "numCandidates": 1, "limit": 1}}])"), 40414);
  EXPECT_EQ(code("[{\"$vectorSearch\": " + head + R"("limit": 1}}])"), 40414);  // numCandidates
  EXPECT_EQ(code("[{\"$vectorSearch\": " + head + R"("numCandidates": 10001, "limit": 1}}])"), 2);
  EXPECT_EQ(code("[{\"$vectorSearch\": " + head + R"("numCandidates": 1, "limit": 2}}])"), 2);
  EXPECT_EQ(code("[{\"$vectorSearch\": " + head + R"("numCandidates": "x", "limit": 1}}])"), 14);
  EXPECT_EQ(code("[{\"$vectorSearch\": " + head + R"("numCandidates": 1, "limit": 1, "bogus": 1}}])"), 40415);
  EXPECT_EQ(code("[{\"$vectorSearch\": " + head + R"("exact": true, "numCandidates": 1, "limit": 1}}])"), 2);
  EXPECT_EQ(code("[{\"$vectorSearch\": " + head + R"("numCandidates": 1, "limit": 1, "query": "x"}}])"), 238);
  // A filter on a path the index does not declare as a filter field.
  EXPECT_EQ(code("[{\"$vectorSearch\": " + head + R"("numCandidates": 1, "limit": 1, "filter": {"other": 2}}}])"), 2);
  EXPECT_EQ(code("[{\"$vectorSearch\": " + head + R"("numCandidates": 1, "limit": 1, "filter": {"genre": {"$all": [1]}}}}])"), 2);
  // Dimensions that differ from the index's.
  EXPECT_EQ(code(R"([{"$vectorSearch": {"index": "vec", "path": "v", "queryVector": [1, 0, 0], "numCandidates": 1, "limit": 1}}])"), 2);
  // Not first.
  EXPECT_EQ(code("[{\"$match\": {}}, {\"$vectorSearch\": " + head + R"("numCandidates": 1, "limit": 1}}])"), 40602);
  // Other metadata is not kept.
  EXPECT_EQ(code(R"([{"$project": {"s": {"$meta": "textScore"}}}])"), 238);
  EXPECT_EQ(code(R"([{"$project": {"s": {"$meta": "nonsense"}}}])"), 17308);
  // An index that does not exist finds nothing, as Atlas.
  Document nope = Json(R"({"p": [{"$vectorSearch": {"index": "nope", "path": "v", "queryVector": [1, 0], "numCandidates": 1, "limit": 1}}]})");
  auto none = coll().Aggregate(nope.Get("p").Array());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->Next());

  // Definitions.
  auto create = [&](std::string_view type, std::string_view definition) {
    SearchIndexModel m;
    m.name = "x";
    m.type = std::string(type);
    m.definition = Json(definition);
    auto r = coll().CreateSearchIndexes({m});
    return r.ok() ? 0 : static_cast<int>(r.status().code());
  };
  EXPECT_EQ(create("search", R"({"mappings": {"dynamic": true}})"), 238);
  EXPECT_EQ(create("vectorSearch", R"({"fields": [{"type": "vector", "path": "w", "numDimensions": 2, "similarity": "cosine", "quantization": "scalar"}]})"), 238);
  EXPECT_EQ(create("vectorSearch", R"({"fields": [{"type": "vector", "path": "w", "numDimensions": 8193, "similarity": "cosine"}]})"), 2);
  EXPECT_EQ(create("vectorSearch", R"({"fields": [{"type": "vector", "path": "w", "numDimensions": 2, "similarity": "manhattan"}]})"), 2);
  EXPECT_EQ(create("vectorSearch", R"({"fields": [{"type": "filter", "path": "genre"}]})"), 2);
  // An ordinary createIndex cannot make one.
  auto plain = coll().CreateIndex(Json(R"({"w": "vectorSearch"})"));
  EXPECT_EQ(plain.status().code(), ErrorCode::kCannotCreateIndex);
}

// The commands' door (Client::RunCommand, as the wire server and the shell
// use it): createSearchIndexes, $listSearchIndexes, updateSearchIndex,
// dropSearchIndex, and search indexes apart from listIndexes.
TEST_F(VectorSearchTest, SearchIndexCommands) {
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "v": [1, 0, 0], "genre": 1})")).ok());
  auto created = test::RunCommandOk(*client_, "test", Json(R"({"createSearchIndexes": "items",
      "indexes": [{"name": "vec", "type": "vectorSearch", "definition": {"fields": [
        {"type": "vector", "path": "v", "numDimensions": 3, "similarity": "cosine"}]}}]})"));
  ASSERT_TRUE(created.ok()) << created.status();
  DocumentView first = (*created->Get("indexesCreated").Array().begin()).Document();
  EXPECT_EQ(first.Get("name").String(), "vec");
  const std::string id(first.Get("id").String());
  EXPECT_EQ(id.size(), 24u);

  auto listed = test::RunCommandOk(*client_, "test", Json(R"({"aggregate": "items",
      "pipeline": [{"$listSearchIndexes": {}}], "cursor": {}})"));
  ASSERT_TRUE(listed.ok()) << listed.status();
  DocumentView batch0 =
      (*listed->Get("cursor").Document().Get("firstBatch").Array().begin()).Document();
  EXPECT_EQ(batch0.Get("name").String(), "vec");
  EXPECT_EQ(batch0.Get("type").String(), "vectorSearch");
  EXPECT_EQ(batch0.Get("status").String(), "READY");
  EXPECT_THAT(ToJson(batch0.Get("latestDefinition").Document()), HasSubstr("\"cosine\""));

  auto indexes = test::RunCommandOk(*client_, "test", Json(R"({"listIndexes": "items"})"));
  ASSERT_TRUE(indexes.ok());
  int n = 0;
  for (Element e : indexes->Get("cursor").Document().Get("firstBatch").Array()) {
    (void)e;
    ++n;
  }
  EXPECT_EQ(n, 1);  // _id_ only

  auto search = test::RunCommandOk(*client_, "test", Json(R"({"aggregate": "items", "cursor": {},
      "pipeline": [{"$vectorSearch": {"index": "vec", "path": "v", "queryVector": [2, 0, 0],
                    "numCandidates": 5, "limit": 1}},
                   {"$addFields": {"score": {"$meta": "vectorSearchScore"}}}]})"));
  ASSERT_TRUE(search.ok()) << search.status();
  DocumentView hit =
      (*search->Get("cursor").Document().Get("firstBatch").Array().begin()).Document();
  EXPECT_DOUBLE_EQ(hit.Get("score").Double(), 1.0);
  EXPECT_FALSE(hit.Get("$vectorSearchScore").ok());  // metadata, not a field

  auto updated = test::RunCommandOk(*client_, "test", Json(R"({"updateSearchIndex": "items",
      "id": ")" + id + R"(", "definition": {"fields": [
        {"type": "vector", "path": "v", "numDimensions": 3, "similarity": "euclidean"},
        {"type": "filter", "path": "genre"}]}})"));
  ASSERT_TRUE(updated.ok()) << updated.status();
  auto after = coll().ListSearchIndexes("vec");
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_THAT(ToJson((*after)[0]), HasSubstr("euclidean"));

  EXPECT_TRUE(test::RunCommandOk(*client_, "test",
                                 Json(R"({"dropSearchIndex": "items", "name": "vec"})"))
                  .ok());
  auto again = test::RunCommandOk(*client_, "test",
                                  Json(R"({"dropSearchIndex": "items", "name": "vec"})"));
  EXPECT_EQ(again.status().code(), ErrorCode::kIndexNotFound);
  EXPECT_TRUE(coll().ListSearchIndexes()->empty());
}

}  // namespace
}  // namespace rockdoc

// The query planner: explain shows the chosen plan (IXSCAN for an indexed
// equality, point bounds for $in, covered queries reading no document, no
// SORT when an index gives the order), and a differential test: every plan
// the planner may choose returns exactly what a collection scan returns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

class PlannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
    coll_ = std::make_unique<Collection>(client_->GetDatabase("test").GetCollection("c"));
  }

  void Insert(std::initializer_list<const char*> docs) {
    for (const char* d : docs) ASSERT_TRUE(coll_->InsertOne(Json(d)).ok()) << d;
  }

  Document Explain(const char* filter, FindOptions options = {},
                   ExplainVerbosity v = ExplainVerbosity::kExecutionStats) {
    auto e = coll_->ExplainFind(Json(filter), options, v);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? std::move(e).value() : Document();
  }

  // The stage names of the winning plan from the root down (first input
  // stage each time).
  static std::vector<std::string> Stages(const Document& explain) {
    std::vector<std::string> out;
    Element plan = explain.GetPath("queryPlanner.winningPlan");
    while (plan.ok() && plan.type() == BsonType::kDocument) {
      out.emplace_back(plan.Document().Get("stage").String());
      Element next = plan.Document().Get("inputStage");
      if (!next.ok()) {
        Element many = plan.Document().Get("inputStages");
        if (many.ok()) next = *many.Array().begin();
      }
      plan = next;
    }
    return out;
  }

  // An explain counter, whatever its integer type.
  static int64_t Count(const Document& explain, std::string_view path) {
    int64_t v = -1;
    EXPECT_TRUE(explain.GetPath(path).ExactInt64(&v)) << path;
    return v;
  }

  static Element FindStage(const Document& explain, std::string_view root, std::string_view name) {
    Element plan = explain.GetPath(root);
    while (plan.ok() && plan.type() == BsonType::kDocument) {
      if (plan.Document().Get("stage").String() == name) return plan;
      plan = plan.Document().Get("inputStage");
    }
    return Element();
  }

  std::vector<Document> All(const char* filter, FindOptions options = {}) {
    auto cursor = coll_->Find(Json(filter), options);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    if (!cursor.ok()) return {};
    auto docs = cursor->ToVector();
    EXPECT_TRUE(docs.ok()) << docs.status();
    return docs.ok() ? std::move(docs).value() : std::vector<Document>();
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<Collection> coll_;
};

TEST_F(PlannerTest, EqualityOnIndexedFieldIsAnIxscan) {
  Insert({R"({"_id": 1, "a": 1})", R"({"_id": 2, "a": 2})", R"({"_id": 3, "a": 2})"});
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"a": 1})")).ok());
  Document e = Explain(R"({"a": 2})");
  EXPECT_THAT(Stages(e), ::testing::ElementsAre("FETCH", "IXSCAN"));
  Element ix = FindStage(e, "queryPlanner.winningPlan", "IXSCAN");
  EXPECT_EQ(ix.Document().Get("indexName").String(), "a_1");
  EXPECT_EQ(ToJson(ix.Document().Get("indexBounds").Document()), R"({"a": ["[2, 2]"]})");
  EXPECT_EQ(Count(e, "executionStats.nReturned"), 2);
  EXPECT_EQ(Count(e, "executionStats.totalKeysExamined"), 2);
  EXPECT_EQ(Count(e, "executionStats.totalDocsExamined"), 2);
}

TEST_F(PlannerTest, InOfThreeValuesHasThreePointBounds) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(coll_->InsertOne(Json(("{\"a\": " + std::to_string(i % 10) + "}").c_str())).ok());
  }
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"a": 1})")).ok());
  Document e = Explain(R"({"a": {"$in": [7, 3, 5]}})");
  Element ix = FindStage(e, "queryPlanner.winningPlan", "IXSCAN");
  ASSERT_TRUE(ix.ok());
  EXPECT_EQ(ToJson(ix.Document().Get("indexBounds").Document()),
            R"({"a": ["[3, 3]", "[5, 5]", "[7, 7]"]})");
  EXPECT_EQ(Count(e, "executionStats.nReturned"), 6);
  EXPECT_EQ(Count(e, "executionStats.totalKeysExamined"), 6);
}

TEST_F(PlannerTest, CoveredQueryReadsNoDocument) {
  Insert({R"({"_id": 1, "a": 1, "b": "x", "c": 9})", R"({"_id": 2, "a": 2, "b": "y", "c": 9})",
          R"({"_id": 3, "a": 3, "b": "z", "c": 9})"});
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"a": 1, "b": 1})")).ok());
  FindOptions o;
  o.projection = Json(R"({"_id": 0, "a": 1, "b": 1})");
  Document e = Explain(R"({"a": {"$gte": 2}})", o);
  EXPECT_THAT(Stages(e), ::testing::ElementsAre("PROJECTION_COVERED", "IXSCAN"));
  EXPECT_EQ(Count(e, "executionStats.totalDocsExamined"), 0);
  EXPECT_EQ(Count(e, "executionStats.nReturned"), 2);
  // The same answer as the fetched plan (forced by a collection scan).
  std::vector<Document> covered = All(R"({"a": {"$gte": 2}})", o);
  o.hint = Json(R"({"$natural": 1})");
  std::vector<Document> fetched = All(R"({"a": {"$gte": 2}})", o);
  ASSERT_EQ(covered.size(), 2u);
  EXPECT_EQ(covered, fetched);
}

TEST_F(PlannerTest, CoveredKeepsOriginalNumericTypes) {
  Insert({R"({"_id": 1, "a": {"$numberLong": "5"}})", R"({"_id": 2, "a": 5.0})",
          R"({"_id": 3, "a": {"$numberDecimal": "5.00"}})", R"({"_id": 4, "a": 5})"});
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"a": 1})")).ok());
  FindOptions o;
  o.projection = Json(R"({"_id": 0, "a": 1})");
  o.sort = Json(R"({"a": 1})");
  Document e = Explain(R"({"a": 5})", o);
  EXPECT_EQ(Count(e, "executionStats.totalDocsExamined"), 0);
  std::vector<Document> covered = All(R"({"a": 5})", o);
  ASSERT_EQ(covered.size(), 4u);
  std::multiset<std::string> got, want = {R"({"a": {"$numberLong": "5"}})",
                                          R"({"a": {"$numberDouble": "5.0"}})",
                                          R"({"a": {"$numberDecimal": "5.00"}})",
                                          R"({"a": {"$numberInt": "5"}})"};
  for (const Document& d : covered) got.insert(ToJson(d, JsonFormat::kCanonical));
  EXPECT_EQ(got, want);
}

TEST_F(PlannerTest, MultikeyPathIsNotCovered) {
  Insert({R"({"_id": 1, "a": [1, 2]})", R"({"_id": 2, "a": 3})"});
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"a": 1})")).ok());
  FindOptions o;
  o.projection = Json(R"({"_id": 0, "a": 1})");
  Document e = Explain(R"({"a": {"$gte": 2}})", o);
  EXPECT_THAT(Stages(e), ::testing::ElementsAre("PROJECTION_SIMPLE", "FETCH", "IXSCAN"));
  EXPECT_TRUE(FindStage(e, "queryPlanner.winningPlan", "IXSCAN").Document().Get("isMultiKey").Bool());
  EXPECT_EQ(Count(e, "executionStats.nReturned"), 2);
  EXPECT_EQ(Count(e, "executionStats.totalDocsExamined"), 2);
}

TEST_F(PlannerTest, SortOnIndexAfterEqualityPrefixNeedsNoSortStage) {
  for (int i = 0; i < 50; ++i) {
    std::string d = "{\"host\": " + std::to_string(i % 3) + ", \"time\": " + std::to_string(i) + "}";
    ASSERT_TRUE(coll_->InsertOne(Json(d.c_str())).ok());
  }
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"host": 1, "time": -1})")).ok());
  FindOptions o;
  o.sort = Json(R"({"time": -1})");
  o.limit = 5;
  Document e = Explain(R"({"host": 1})", o);
  std::vector<std::string> stages = Stages(e);
  EXPECT_THAT(stages, ::testing::Not(::testing::Contains("SORT")));
  EXPECT_THAT(stages, ::testing::ElementsAre("LIMIT", "FETCH", "IXSCAN"));
  EXPECT_EQ(Count(e, "executionStats.totalKeysExamined"), 5);
  std::vector<Document> got = All(R"({"host": 1})", o);
  ASSERT_EQ(got.size(), 5u);
  for (size_t i = 1; i < got.size(); ++i)
    EXPECT_GT(got[i - 1].Get("time").Int32(), got[i].Get("time").Int32());
  // Ascending on the same index: a backward scan, still no SORT.
  o.sort = Json(R"({"time": 1})");
  Document back = Explain(R"({"host": 1})", o);
  EXPECT_THAT(Stages(back), ::testing::Not(::testing::Contains("SORT")));
  EXPECT_EQ(FindStage(back, "queryPlanner.winningPlan", "IXSCAN").Document().Get("direction").String(),
            "backward");
}

TEST_F(PlannerTest, SortWithoutIndexIsABlockingTopKSort) {
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(coll_->InsertOne(Json(("{\"v\": " + std::to_string((i * 37) % 100) + "}").c_str())).ok());
  }
  FindOptions o;
  o.sort = Json(R"({"v": -1})");
  o.limit = 3;
  Document e = Explain("{}", o);
  Element sort = FindStage(e, "queryPlanner.winningPlan", "SORT");
  ASSERT_TRUE(sort.ok());
  EXPECT_EQ(sort.Document().Get("limitAmount").NumberAsDouble(), 3);
  std::vector<Document> got = All("{}", o);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].Get("v").Int32(), 99);
  EXPECT_EQ(got[2].Get("v").Int32(), 97);
}

TEST_F(PlannerTest, SortOverMemoryBoundFails) {
  std::string big(1000, 'x');
  for (int i = 0; i < 50; ++i) {
    BsonBuilder b;
    b.AppendInt32("i", i).AppendString("pad", big);
    ASSERT_TRUE(coll_->InsertOne(std::move(b).Build()).ok());
  }
  FindOptions o;
  o.sort = Json(R"({"i": -1})");
  o.max_blocking_sort_bytes = 10000;
  auto cursor = coll_->Find(Json("{}"), o);
  ASSERT_TRUE(cursor.ok());
  while (cursor->Next()) {
  }
  EXPECT_EQ(cursor->status().code(), ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed);
  EXPECT_THAT(std::string(cursor->status().message()), ::testing::HasSubstr("Sort exceeded memory limit"));
}

TEST_F(PlannerTest, OrOfIndexedBranchesIsAnOrOfIxscans) {
  Insert({R"({"a": 1, "b": 5})", R"({"a": 2, "b": 6})", R"({"a": 3, "b": 7})"});
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"a": 1})")).ok());
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"b": 1})")).ok());
  Document e = Explain(R"({"$or": [{"a": 1}, {"b": 7}, {"a": 1, "b": 5}]})");
  EXPECT_THAT(Stages(e), ::testing::ElementsAre("FETCH", "OR", "IXSCAN"));
  EXPECT_EQ(Count(e, "executionStats.nReturned"), 2);
}

TEST_F(PlannerTest, IdQueriesUseTheClusteredOrder) {
  Insert({R"({"_id": 1})", R"({"_id": 2})", R"({"_id": 3})", R"({"_id": 4})"});
  EXPECT_THAT(Stages(Explain(R"({"_id": 3})")), ::testing::ElementsAre("IDHACK"));
  Document in = Explain(R"({"_id": {"$in": [4, 1, 9]}})");
  EXPECT_THAT(Stages(in), ::testing::ElementsAre("CLUSTERED_IXSCAN"));
  EXPECT_EQ(Count(in, "executionStats.nReturned"), 2);
  Document range = Explain(R"({"_id": {"$gt": 2}})");
  EXPECT_EQ(Count(range, "executionStats.nReturned"), 2);
  EXPECT_EQ(Count(range, "executionStats.totalDocsExamined"), 2);
}

TEST_F(PlannerTest, HintForcesAnIndexOrACollectionScan) {
  Insert({R"({"a": 1, "b": 1})", R"({"a": 2, "b": 2})"});
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"a": 1})")).ok());
  FindOptions o;
  o.hint = Json(R"({"$natural": 1})");
  EXPECT_THAT(Stages(Explain(R"({"a": 1})", o)), ::testing::ElementsAre("COLLSCAN"));
  o.hint = Document();
  o.hint_name = "a_1";
  EXPECT_THAT(Stages(Explain(R"({"b": 2})", o)), ::testing::ElementsAre("FETCH", "IXSCAN"));
  o.hint_name = "nope_1";
  auto bad = coll_->Find(Json("{}"), o);
  EXPECT_EQ(bad.status().code(), ErrorCode::kBadValue);
}

TEST_F(PlannerTest, RacingPicksTheSelectiveIndexAndReportsRejectedPlans) {
  for (int i = 0; i < 2000; ++i) {
    std::string d = "{\"a\": " + std::to_string(i % 2) + ", \"b\": " + std::to_string(i) + "}";
    ASSERT_TRUE(coll_->InsertOne(Json(d.c_str())).ok());
  }
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"a": 1})")).ok());
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"b": 1})")).ok());
  Document e = Explain(R"({"a": 1, "b": 1001})", {}, ExplainVerbosity::kAllPlansExecution);
  EXPECT_EQ(FindStage(e, "queryPlanner.winningPlan", "IXSCAN").Document().Get("indexName").String(),
            "b_1");
  EXPECT_EQ(e.GetPath("queryPlanner.rejectedPlans").Array().CountFields(), 1u);
  EXPECT_EQ(e.GetPath("executionStats.allPlansExecution").Array().CountFields(), 2u);
  EXPECT_EQ(Count(e, "executionStats.nReturned"), 1);
}

TEST_F(PlannerTest, ExplainOfUpdateAndDeleteShowsTheTargetPlan) {
  Insert({R"({"_id": 1, "a": 1})", R"({"_id": 2, "a": 2})"});
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"a": 1})")).ok());
  auto u = coll_->ExplainUpdate(Json(R"({"a": 2})"), Json(R"({"$set": {"b": 1}})"), false, {},
                                ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->GetPath("queryPlanner.winningPlan.stage").String(), "UPDATE");
  EXPECT_TRUE(FindStage(*u, "queryPlanner.winningPlan.inputStage", "IXSCAN").ok());
  auto d = coll_->ExplainDelete(Json(R"({"a": 2})"), true, ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->GetPath("queryPlanner.winningPlan.stage").String(), "DELETE");
  // Explain never writes.
  EXPECT_EQ(coll_->CountDocuments(Json("{}")).value(), 2);
}

// ---- The differential test ----

// Random documents over a few fields with mixed types, arrays, nested
// documents and missing fields; random indexes; random filters, sorts and
// projections. Every index (by hint), the clustered order and the
// planner's own choice return exactly what a collection scan returns.
class DifferentialTest : public PlannerTest {
 protected:
  std::mt19937_64 rng_{20261121};
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::string RandomScalar() {
    switch (Uniform(0, 9)) {
      case 0: return "null";
      case 1: return "\"" + std::string(1, static_cast<char>('a' + Uniform(0, 3))) + "\"";
      case 2: return std::to_string(Uniform(0, 5)) + ".5";
      case 3: return "{\"$numberLong\": \"" + std::to_string(Uniform(0, 5)) + "\"}";
      case 4: return "true";
      default: return std::to_string(Uniform(0, 5));
    }
  }
  // Only field "a" holds arrays: a compound index over two array fields
  // would be "parallel arrays", which MongoDB (and rockdoc) refuse.
  std::string RandomValue(bool arrays) {
    int k = Uniform(0, arrays ? 10 : 8);
    if (k == 9 && !arrays) k = 10;
    if (k == 9) {
      std::string s = "[";
      int n = Uniform(0, 3);
      for (int i = 0; i < n; ++i) s += (i ? ", " : "") + RandomScalar();
      return s + "]";
    }
    if (k == 10) return "{\"x\": " + RandomScalar() + ", \"y\": " + RandomScalar() + "}";
    return RandomScalar();
  }
  std::string RandomDoc(int id) {
    std::string s = "{\"_id\": " + std::to_string(id);
    for (const char* f : {"a", "b", "c"}) {
      if (Uniform(0, 5) == 0) continue;  // missing
      s += std::string(", \"") + f + "\": " + RandomValue(f[0] == 'a');
    }
    return s + "}";
  }
  std::string RandomPredicate() {
    const char* fields[] = {"a", "b", "c", "a.x", "_id"};
    std::string f = fields[Uniform(0, 4)];
    std::string v = RandomScalar();
    switch (Uniform(0, 7)) {
      case 0: return "{\"" + f + "\": " + v + "}";
      case 1: return "{\"" + f + "\": {\"$gt\": " + v + "}}";
      case 2: return "{\"" + f + "\": {\"$lte\": " + v + "}}";
      case 3: return "{\"" + f + "\": {\"$in\": [" + v + ", " + RandomScalar() + "]}}";
      case 4: return "{\"" + f + "\": {\"$gte\": " + v + ", \"$lt\": " + RandomScalar() + "}}";
      case 5: return "{\"" + f + "\": {\"$ne\": " + v + "}}";
      case 6: return "{\"" + f + "\": {\"$exists\": " + (Uniform(0, 1) ? "true" : "false") + "}}";
      default: return "{\"$or\": [" + RandomPredicateSimple() + ", " + RandomPredicateSimple() + "]}";
    }
  }
  std::string RandomPredicateSimple() {
    const char* fields[] = {"a", "b", "c"};
    return std::string("{\"") + fields[Uniform(0, 2)] + "\": " + RandomScalar() + "}";
  }
};

TEST_F(DifferentialTest, EveryPlanReturnsWhatACollectionScanReturns) {
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(coll_->InsertOne(Json(RandomDoc(i).c_str())).ok());
  const char* index_specs[] = {R"({"a": 1})",       R"({"b": -1})",         R"({"a": 1, "b": 1})",
                               R"({"c": 1, "a": -1})", R"({"a.x": 1})",      R"({"b": 1, "c": 1, "a": 1})"};
  std::vector<std::string> names;
  for (const char* spec : index_specs) {
    auto name = coll_->CreateIndex(Json(spec));
    ASSERT_TRUE(name.ok()) << name.status();
    names.push_back(*name);
  }
  const char* sorts[] = {"", R"({"a": 1, "_id": 1})", R"({"b": -1, "_id": 1})",
                         R"({"c": 1, "a": -1, "_id": -1})"};
  const char* projections[] = {"", R"({"_id": 0, "a": 1})", R"({"b": 0})", R"({"a": 1, "b": 1})"};
  int checked = 0;
  for (int q = 0; q < 150; ++q) {
    std::string filter = Uniform(0, 3) == 0
                             ? "{\"$and\": [" + RandomPredicate() + ", " + RandomPredicate() + "]}"
                             : RandomPredicate();
    FindOptions base;
    const char* sort = sorts[Uniform(0, 3)];
    if (*sort) base.sort = Json(sort);
    const char* proj = projections[Uniform(0, 3)];
    if (*proj) base.projection = Json(proj);
    if (Uniform(0, 3) == 0) base.limit = Uniform(1, 20);
    if (Uniform(0, 5) == 0) base.skip = Uniform(1, 10);

    FindOptions scan = base;
    scan.hint = Json(R"({"$natural": 1})");
    std::vector<Document> expected = All(filter.c_str(), scan);
    auto normalise = [&](std::vector<Document> docs) {
      // Without a sort the order is the plan's own: compare as multisets.
      std::vector<std::string> out;
      for (const Document& d : docs) out.push_back(d.bytes());
      if (base.sort.empty()) std::sort(out.begin(), out.end());
      return out;
    };
    // A limit or skip without a sort may select different documents.
    bool comparable = !base.sort.empty() || (base.limit == 0 && base.skip == 0);
    if (!comparable) continue;
    auto want = normalise(expected);
    auto check = [&](FindOptions o, const std::string& what) {
      std::vector<Document> got = All(filter.c_str(), o);
      EXPECT_EQ(normalise(got), want) << "filter " << filter << " sort " << sort << " projection "
                                      << proj << " limit " << o.limit << " skip " << o.skip
                                      << " plan " << what;
      ++checked;
    };
    check(base, "planner's choice");
    for (const std::string& n : names) {
      FindOptions o = base;
      o.hint_name = n;
      check(o, "hint " + n);
    }
    FindOptions by_id = base;
    by_id.hint_name = "_id_";
    check(by_id, "hint _id_");
  }
  EXPECT_GT(checked, 400);
}

// countDocuments answers from an index alone when it can, and counts what a
// collection scan counts whatever the plan.
TEST_F(DifferentialTest, CountsAgreeWithACollectionScan) {
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(coll_->InsertOne(Json(RandomDoc(i).c_str())).ok());
  // "a" holds arrays (multikey: the plan fetches); "b" and "c" never do, so
  // their counts can run as COUNT_SCAN, where the bounds alone decide: any
  // interval that were a superset of the matches would show here.
  for (const char* spec : {R"({"a": 1})", R"({"b": 1, "c": 1})", R"({"c": 1})", R"({"a.x": 1})"}) {
    ASSERT_TRUE(coll_->CreateIndex(Json(spec)).ok()) << spec;
  }
  int indexed = 0, count_scans = 0;
  for (int q = 0; q < 200; ++q) {
    std::string filter = Uniform(0, 2) == 0
                             ? "{\"$and\": [" + RandomPredicate() + ", " + RandomPredicate() + "]}"
                             : RandomPredicate();
    CountOptions scan;
    scan.hint = Json(R"({"$natural": 1})");
    auto want = coll_->CountDocuments(Json(filter.c_str()), scan);
    auto got = coll_->CountDocuments(Json(filter.c_str()));
    ASSERT_EQ(want.ok(), got.ok()) << filter;
    if (!want.ok()) continue;
    EXPECT_EQ(*got, *want) << filter;
    auto e = coll_->ExplainCount(Json(filter.c_str()), CountOptions(),
                                 ExplainVerbosity::kExecutionStats);
    ASSERT_TRUE(e.ok()) << e.status();
    const std::vector<std::string> stages = Stages(*e);
    EXPECT_EQ(stages.front(), "COUNT") << filter;
    if (Count(*e, "executionStats.totalKeysExamined") > 0) ++indexed;
    if (stages.back() == "COUNT_SCAN") {
      ++count_scans;
      EXPECT_EQ(Count(*e, "executionStats.totalDocsExamined"), 0) << filter;
      EXPECT_EQ(Count(*e, "executionStats.totalKeysExamined"), *want) << filter;
    }
  }
  EXPECT_GT(indexed, 20);
  EXPECT_GT(count_scans, 10);
}

TEST_F(PlannerTest, CountThroughAnIndexExaminesKeysNotDocuments) {
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(coll_->InsertOne(Json(("{\"page\": " + std::to_string(i % 6) +
                                       ", \"tags\": [" + std::to_string(i % 4) + ", 9]}")
                                          .c_str()))
                    .ok());
  }
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"page": 1})")).ok());
  ASSERT_TRUE(coll_->CreateIndex(Json(R"({"tags": 1})")).ok());
  EXPECT_EQ(*coll_->CountDocuments(Json(R"({"page": 2})")), 10);
  auto e = coll_->ExplainCount(Json(R"({"page": 2})"), CountOptions(),
                               ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_THAT(Stages(*e), ::testing::ElementsAre("COUNT", "COUNT_SCAN"));
  EXPECT_EQ(Count(*e, "executionStats.totalKeysExamined"), 10);
  EXPECT_EQ(Count(*e, "executionStats.totalDocsExamined"), 0);
  // A multikey index cannot answer alone (one document has several keys):
  // the plan fetches, and the count is still per document.
  EXPECT_EQ(*coll_->CountDocuments(Json(R"({"tags": {"$gte": 0}})")), 60);
  auto m = coll_->ExplainCount(Json(R"({"tags": 9})"), CountOptions(),
                               ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(Count(*m, "executionStats.totalDocsExamined"), 60);
  // A predicate whose bounds are not exactly its matches ($ne also matches
  // documents missing the field, which the index keys as null) is checked on
  // the index keys or the documents, not counted from the bounds alone.
  auto k = coll_->ExplainCount(Json(R"({"page": {"$ne": 2}})"), CountOptions(),
                               ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_NE(Stages(*k).back(), "COUNT_SCAN");
  EXPECT_EQ(*coll_->CountDocuments(Json(R"({"page": {"$ne": 2}})")), 50);
  // Every document: the exact count from the metadata.
  EXPECT_EQ(*coll_->CountDocuments(Document()), 60);
}

}  // namespace
}  // namespace rockdoc

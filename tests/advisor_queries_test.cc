// The schema advisor's findings from the query statistics ($queryStats):
// one database per finding, made by running the queries that show the
// anti-pattern; the advisor reports exactly that finding with the numbers
// the test counted itself; the same data queried well gives nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "rockdoc/advisor.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"
#include "tools/mains.h"

namespace rockdoc::advisor {
namespace {

using ::testing::HasSubstr;
using test::Json;

class AdvisorQueriesTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  void Reopen() {
    ASSERT_TRUE(client_->Close().ok());
    client_.reset();
    Open();
  }
  Collection Coll(const std::string& name) { return client_->GetDatabase("app").GetCollection(name); }
  AdviseReport Run() {
    auto r = Advise(*client_, AdviseOptions{});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : AdviseReport();
  }
  static std::vector<std::string> Rules(const AdviseReport& r) {
    std::vector<std::string> out;
    for (const Finding& f : r.findings) out.push_back(f.rule + " " + f.ns);
    return out;
  }
  // Runs a find to its end; returns how many documents it gave.
  int64_t Drain(const std::string& coll, const std::string& filter, FindOptions options = {}) {
    auto cursor = Coll(coll).Find(Json(filter), options);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    if (!cursor.ok()) return 0;
    int64_t n = 0;
    while (cursor->Next()) ++n;
    EXPECT_TRUE(cursor->status().ok()) << cursor->status();
    return n;
  }
  // 2,000 users in 200 cities, ages 0..89.
  void FillUsers() {
    std::vector<Document> docs;
    for (int i = 0; i < 2000; ++i) {
      docs.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"name\": \"User" + std::to_string(i) +
                          "\", \"city\": \"c" + std::to_string(i % 200) + "\", \"age\": " +
                          std::to_string(i % 90) + "}"));
    }
    ASSERT_TRUE(Coll("users").InsertMany(docs).ok());
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(AdvisorQueriesTest, InefficientQueryGetsTheEsrIndex) {
  FillUsers();
  FindOptions sorted;
  sorted.sort = Json(R"({"name": 1})");
  int64_t returned = 0;
  for (int i = 0; i < 5; ++i) {
    returned += Drain("users", "{\"city\": \"c" + std::to_string(i) + "\", \"age\": {\"$gt\": 30}}", sorted);
  }
  ASSERT_GT(returned, 0);
  AdviseReport r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"inefficient-query app.users"}) << FormatText(r);
  const Finding& f = r.findings[0];
  // Every run scanned the 2,000 documents.
  EXPECT_EQ(f.evidence.Get("docsExamined").AsExactInt64(), 5 * 2000);
  EXPECT_EQ(f.evidence.Get("docsReturned").AsExactInt64(), returned);
  EXPECT_EQ(f.evidence.Get("runs").AsExactInt64(), 5);
  EXPECT_EQ(f.evidence.Get("collScans").AsExactInt64(), 5);
  EXPECT_EQ(f.evidence.Get("planSummary").String(), "COLLSCAN");
  // Equality, then sort, then range.
  EXPECT_EQ(ToJson(f.evidence.Get("suggestedIndex").Document()), R"({"city": 1, "name": 1, "age": 1})");
  EXPECT_THAT(f.remedy, HasSubstr("createIndex({\"city\": 1, \"name\": 1, \"age\": 1})"));
  EXPECT_EQ(ToJson(f.evidence.Get("shape").Document()),
            R"({"command": "find", "filter": {"city": {"$eq": "?string"}, "age": {"$gt": "?number"}}, "sort": {"name": 1}})");

  // With the index the same queries examine what they return: no finding.
  ASSERT_TRUE(Coll("users").CreateIndex(Json(R"({"city": 1, "name": 1, "age": 1})")).ok());
  ASSERT_TRUE(client_->ClearQueryStats().ok());
  for (int i = 0; i < 5; ++i) {
    Drain("users", "{\"city\": \"c" + std::to_string(i) + "\", \"age\": {\"$gt\": 30}}", sorted);
  }
  r = Run();
  EXPECT_TRUE(r.findings.empty()) << FormatText(r);
}

TEST_F(AdvisorQueriesTest, InefficientQueryThresholds) {
  FillUsers();
  // Names in an $in, no index: each run scans the 2,000 documents.
  auto names = [](int n) {
    std::string in;
    for (int i = 0; i < n; ++i) in += (i ? ", \"User" : "\"User") + std::to_string(i) + "\"";
    return "{\"name\": {\"$in\": [" + in + "]}}";
  };
  // 2,000 examined for 21 returned: 95 per returned, under the threshold.
  EXPECT_EQ(Drain("users", names(21)), 21);
  AdviseReport r = Run();
  EXPECT_TRUE(r.findings.empty()) << FormatText(r);
  // For 20: 100 per returned, at the threshold.
  ASSERT_TRUE(client_->ClearQueryStats().ok());
  EXPECT_EQ(Drain("users", names(20)), 20);
  r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"inefficient-query app.users"}) << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("examinedPerReturned").AsExactInt64(), 100);
  EXPECT_EQ(ToJson(r.findings[0].evidence.Get("suggestedIndex").Document()), R"({"name": 1})");
  // Under 1,000 examined in all is too little evidence, whatever the ratio.
  ASSERT_TRUE(client_->ClearQueryStats().ok());
  ASSERT_TRUE(Coll("few").InsertMany({Json(R"({"_id": 1, "a": 1})")}).ok());
  for (int i = 2; i <= 999; ++i) ASSERT_TRUE(Coll("few").InsertOne(Json("{\"_id\": " + std::to_string(i) + "}")).ok());
  EXPECT_EQ(Drain("few", R"({"a": 1})"), 1);
  r = Run();
  EXPECT_TRUE(r.findings.empty()) << FormatText(r);
  // An $or: no one index; the remedy says so.
  ASSERT_TRUE(client_->ClearQueryStats().ok());
  EXPECT_EQ(Drain("users", R"({"$or": [{"name": "User1"}, {"city": "zz"}]})"), 1);
  r = Run();
  ASSERT_EQ(r.findings.size(), 1u) << FormatText(r);
  EXPECT_FALSE(r.findings[0].evidence.Get("suggestedIndex").ok());
  EXPECT_THAT(r.findings[0].remedy, HasSubstr("each clause of the $or"));
}

// A pipeline that groups returns what its find examined in another form,
// and a distinct returns values: no ratio to judge.
TEST_F(AdvisorQueriesTest, GroupingPipelinesAndDistinctsAreNotJudged) {
  FillUsers();
  const Document pipeline = Json(R"({"p": [{"$match": {"age": {"$gte": 0}}}, {"$group": {"_id": null, "n": {"$sum": 1}}}]})");
  for (int i = 0; i < 3; ++i) {
    auto cursor = Coll("users").Aggregate(pipeline.Get("p").Array());
    ASSERT_TRUE(cursor.ok()) << cursor.status();
    int n = 0;
    while (cursor->Next()) ++n;
    EXPECT_EQ(n, 1);
  }
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Coll("users").Distinct("city", Json("{}")).ok());
  AdviseReport r = Run();
  EXPECT_TRUE(r.findings.empty()) << FormatText(r);
}

TEST_F(AdvisorQueriesTest, CaseInsensitiveRegex) {
  FillUsers();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Drain("users", R"({"name": {"$regex": "^user19", "$options": "i"}})"), 111);
  // A case-sensitive one is not flagged (nor inefficient: it returns enough).
  EXPECT_EQ(Drain("users", R"({"city": {"$regex": "^c1", "$options": "m"}})"), 1110);
  AdviseReport r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"case-insensitive-regex app.users"}) << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("runs").AsExactInt64(), 3);
  EXPECT_EQ(r.findings[0].evidence.Get("returned").AsExactInt64(), 333);
  EXPECT_EQ(r.findings[0].evidence.Get("examined").AsExactInt64(), 6000);
  EXPECT_EQ(ToJson(r.findings[0].evidence.GetPath("shapes.0").Document()),
            R"({"command": "find", "filter": {"name": {"$regex": "?string", "$options": "?string"}}})");
}

TEST_F(AdvisorQueriesTest, SeparatedDataFromApplicationJoinsAndLookups) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Coll("posts").InsertOne(Json("{\"_id\": " + std::to_string(i) + ", \"author\": " +
                                             std::to_string(i % 5) + "}")).ok());
  }
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Coll("authors").InsertOne(Json("{\"_id\": " + std::to_string(i) + "}")).ok());
  }
  // Nine joins: under the threshold of ten.
  auto join = [&](int i) {
    auto post = Coll("posts").FindOne(Json("{\"_id\": " + std::to_string(i) + "}"));
    ASSERT_TRUE(post.ok() && post->has_value());
    auto author = Coll("authors").FindOne(Json("{\"_id\": " + std::to_string(i % 5) + "}"));
    ASSERT_TRUE(author.ok() && author->has_value());
  };
  for (int i = 0; i < 9; ++i) join(i);
  AdviseReport r = Run();
  EXPECT_TRUE(r.findings.empty()) << FormatText(r);
  join(9);
  r = Run();
  // The parent is the side with fewer documents: 4 posts per author.
  ASSERT_EQ(Rules(r), std::vector<std::string>{"separated-data app.authors"}) << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("child").String(), "posts");
  EXPECT_EQ(r.findings[0].evidence.Get("childrenPerParent").AsExactInt64(), 4);
  EXPECT_EQ(r.findings[0].evidence.Get("applicationJoins").AsExactInt64(), 10);
  EXPECT_EQ(r.findings[0].evidence.Get("readsOfParent").AsExactInt64(), 10);
  EXPECT_EQ(r.findings[0].evidence.Get("readsOfChild").AsExactInt64(), 10);

  // $lookup: the same pair, counted per run of the pipeline.
  ASSERT_TRUE(client_->ClearQueryStats().ok());
  const Document pipeline = Json(
      R"({"p": [{"$match": {"_id": {"$lt": 3}}}, {"$lookup": {"from": "authors", "localField": "author", "foreignField": "_id", "as": "a"}}]})");
  for (int i = 0; i < 12; ++i) {
    auto cursor = Coll("posts").Aggregate(pipeline.Get("p").Array());
    ASSERT_TRUE(cursor.ok()) << cursor.status();
    int n = 0;
    while (cursor->Next()) ++n;
    EXPECT_EQ(n, 3);
  }
  r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"separated-data app.authors"}) << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("lookups").AsExactInt64(), 12);
  EXPECT_EQ(r.findings[0].evidence.Get("applicationJoins").AsExactInt64(), 0);
}

TEST_F(AdvisorQueriesTest, SeparatedDataNotForOneToSquillions) {
  // 300 comments per post, read together: referencing is right (embedded,
  // they would be a large array), so nothing is flagged.
  std::vector<Document> comments;
  for (int i = 0; i < 600; ++i) {
    comments.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"postId\": " + std::to_string(i % 2) + "}"));
  }
  ASSERT_TRUE(Coll("comments").InsertMany(comments).ok());
  ASSERT_TRUE(Coll("posts").InsertMany({Json(R"({"_id": 0})"), Json(R"({"_id": 1})")}).ok());
  ASSERT_TRUE(Coll("comments").CreateIndex(Json(R"({"postId": 1})")).ok());
  FindOptions page;
  page.limit = 10;
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Coll("posts").FindOne(Json("{\"_id\": " + std::to_string(i % 2) + "}")).ok());
    EXPECT_EQ(Drain("comments", "{\"postId\": " + std::to_string(i % 2) + "}", page), 10);
  }
  AdviseReport r = Run();
  EXPECT_TRUE(r.findings.empty()) << FormatText(r);
  // 249 per post: one-to-many, flagged.
  ASSERT_TRUE(Coll("comments").DeleteMany(Json(R"({"_id": {"$gte": 498}})")).ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Coll("posts").FindOne(Json("{\"_id\": " + std::to_string(i % 2) + "}")).ok());
    Drain("comments", "{\"postId\": " + std::to_string(i % 2) + "}", page);
  }
  r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"separated-data app.posts"}) << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("childrenPerParent").AsExactInt64(), 249);
}

TEST_F(AdvisorQueriesTest, LargeDocumentsReadNarrowly) {
  const std::string body(40000, 'x');
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(Coll("articles").InsertOne(Json("{\"_id\": " + std::to_string(i) +
                                                ", \"title\": \"t\", \"body\": \"" + body + "\"}")).ok());
  }
  FindOptions narrow;
  narrow.projection = Json(R"({"title": 1})");
  narrow.limit = 3;
  // As many wide reads as narrow ones: half, at the threshold... minus one.
  for (int i = 0; i < 4; ++i) Drain("articles", "{}", narrow);
  FindOptions wide;
  wide.limit = 3;
  for (int i = 0; i < 5; ++i) Drain("articles", "{}", wide);
  AdviseReport r = Run();
  EXPECT_TRUE(r.findings.empty()) << FormatText(r);
  Drain("articles", "{}", narrow);
  r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"large-documents-read-narrowly app.articles"}) << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("narrowRuns").AsExactInt64(), 5);
  EXPECT_EQ(r.findings[0].evidence.Get("findRuns").AsExactInt64(), 10);
  EXPECT_EQ(ToJson(r.findings[0].evidence.GetPath("narrowProjections.0").Document()), R"({"title": 1})");
}

// rockdoc-advise keeps no statistics of its own, but reads what the
// clients before it kept: the growth warnings of the writes.
TEST_F(AdvisorQueriesTest, TheProgramReadsTheGrowthStatisticsKeptBeforeIt) {
  std::string json = "{\"_id\": 1, \"a\": [";
  for (int i = 0; i < 300; ++i) json += (i ? ", \"x\"" : "\"x\"");
  ASSERT_TRUE(Coll("c").InsertOne(Json(json + "]}")).ok());
  ASSERT_TRUE(client_->Close().ok());
  client_.reset();
  const std::string db = dir_.Sub("db");
  const char* argv[] = {"rockdoc-advise", db.c_str(), "--json"};
  std::ostringstream o, e;
  EXPECT_EQ(tools::AdviseMain(3, argv, o, e), 2) << e.str();
  auto report = FromJson(o.str());
  ASSERT_TRUE(report.ok()) << o.str();
  EXPECT_EQ(report->GetPath("findings.0.rule").String(), "large-array");
  EXPECT_EQ(report->GetPath("findings.0.evidence.growthWarnings.array250").NumberAsDouble(), 1);
  Open();
}

TEST_F(AdvisorQueriesTest, StatisticsSurviveRestartsAndTheProgramLeavesThemAlone) {
  FillUsers();
  for (int i = 0; i < 3; ++i) Drain("users", "{\"age\": 1000}");
  Reopen();
  AdviseReport r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"inefficient-query app.users"}) << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("runs").AsExactInt64(), 3);
  ASSERT_TRUE(client_->Close().ok());
  client_.reset();
  // rockdoc-advise twice: its own reads are not recorded, so the second
  // run reports what the first did.
  auto run = [&](std::string* out) {
    const std::string db = dir_.Sub("db");
    const char* argv[] = {"rockdoc-advise", db.c_str(), "--json"};
    std::ostringstream o, e;
    int rc = tools::AdviseMain(3, argv, o, e);
    *out = o.str();
    return rc;
  };
  std::string first, second;
  EXPECT_EQ(run(&first), 2);
  EXPECT_EQ(run(&second), 2);
  EXPECT_EQ(first, second);
  EXPECT_THAT(first, HasSubstr("\"runs\": 3"));
  Open();
}

}  // namespace
}  // namespace rockdoc::advisor

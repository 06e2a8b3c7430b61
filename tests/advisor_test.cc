// The schema advisor (rockdoc/advisor.h, rockdoc-advise): one database per
// finding, built here, on which the advisor reports exactly that finding
// with its evidence; a clean database on which it reports nothing; each
// threshold from both sides.
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

class AdvisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Collection Coll(const std::string& name, const std::string& db = "app") {
    return client_->GetDatabase(db).GetCollection(name);
  }
  AdviseReport Run(AdviseOptions options = {}) {
    auto r = Advise(*client_, options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : AdviseReport();
  }
  // The rules of the findings, in report order.
  static std::vector<std::string> Rules(const AdviseReport& r) {
    std::vector<std::string> out;
    for (const Finding& f : r.findings) out.push_back(f.rule + " " + f.ns);
    return out;
  }
  // A document {_id, <field>: [n elements made by `element`]}.
  static Document WithArray(int id, const std::string& field, int n, const std::string& element) {
    std::string json = "{\"_id\": " + std::to_string(id) + ", \"" + field + "\": [";
    for (int i = 0; i < n; ++i) json += (i ? ", " : "") + element;
    return Json(json + "]}");
  }
  // A clean database: small documents, short arrays, distinct indexes.
  void FillClean() {
    std::vector<Document> docs;
    for (int i = 0; i < 200; ++i) docs.push_back(WithArray(i, "tags", i % 20, "\"t\""));
    ASSERT_TRUE(Coll("posts").InsertMany(docs).ok());
    ASSERT_TRUE(Coll("posts").CreateIndex(Json(R"({"author": 1, "date": -1})")).ok());
    ASSERT_TRUE(Coll("posts").CreateIndex(Json(R"({"tags": 1})")).ok());
    ASSERT_TRUE(Coll("users").InsertOne(Json(R"({"_id": "ada", "name": "Ada"})")).ok());
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(AdvisorTest, CleanDatabaseHasNoFindings) {
  FillClean();
  AdviseReport r = Run();
  EXPECT_TRUE(r.findings.empty()) << FormatText(r);
  EXPECT_EQ(r.databases, 1);
  EXPECT_EQ(r.collections, 2);
  EXPECT_EQ(r.documents_examined, 201);
  EXPECT_FALSE(r.Any(Severity::kInfo));
  EXPECT_THAT(FormatText(r), HasSubstr("No findings."));
}

TEST_F(AdvisorTest, LargeArraysAtTheThresholds) {
  FillClean();
  // 249 comments: under Compass' 250; 250 references: at it.
  ASSERT_TRUE(Coll("blog").InsertOne(WithArray(1, "comments", 249, R"({"by": "x", "text": "hi"})")).ok());
  EXPECT_TRUE(Run().findings.empty());
  ASSERT_TRUE(Coll("blog").InsertOne(WithArray(2, "likes", 250, R"({"$oid": "5f0f0f0f0f0f0f0f0f0f0f0f"})")).ok());
  // Numbers are not what the rule counts, however many.
  ASSERT_TRUE(Coll("blog").InsertOne(WithArray(3, "readings", 5000, "1.5")).ok());
  AdviseReport r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"large-array app.blog"}) << FormatText(r);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.evidence.Get("path").String(), "likes");
  EXPECT_EQ(f.evidence.Get("elements").String(), "objectId");
  EXPECT_EQ(f.evidence.Get("max").Int64(), 250);
  EXPECT_EQ(f.evidence.Get("documentsAtOrOverThreshold").Int64(), 1);
  EXPECT_EQ(f.lab_scenario, "subset-reviews");
  EXPECT_THAT(f.summary, HasSubstr("array 'likes' holds up to 250 objectIds"));
  // 10,000 nested documents' strings: critical, by their dotted path.
  ASSERT_TRUE(Coll("blog").InsertOne(Json(R"({"_id": 4, "thread": [{"replies": []}]})")).ok());
  std::string replies;
  for (int i = 0; i < 10000; ++i) replies += std::string(i ? ", " : "") + "\"r\"";
  ASSERT_TRUE(Coll("blog").InsertOne(Json("{\"_id\": 5, \"thread\": [{\"replies\": [" + replies + "]}]}")).ok());
  r = Run();
  ASSERT_EQ(r.findings.size(), 2u) << FormatText(r);
  EXPECT_EQ(r.findings[0].severity, Severity::kCritical);  // most severe first
  EXPECT_EQ(r.findings[0].evidence.Get("path").String(), "thread.replies");
  EXPECT_EQ(r.findings[0].evidence.Get("max").Int64(), 10000);
  EXPECT_EQ(r.findings[0].evidence.Get("count").Int64(), 2);  // two documents have the path
}

TEST_F(AdvisorTest, BloatedDocuments) {
  FillClean();
  const std::string mib(1 << 20, 'x');
  // Nine documents of 1 MiB among 91 small ones: the 90th percentile is small.
  std::vector<Document> big, small;
  for (int i = 0; i < 9; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i).AppendString("body", mib);
    big.push_back(std::move(b).Build());
  }
  for (int i = 100; i < 191; ++i) small.push_back(Json("{\"_id\": " + std::to_string(i) + "}"));
  ASSERT_TRUE(Coll("pages").InsertMany(big).ok());
  ASSERT_TRUE(Coll("pages").InsertMany(small).ok());
  EXPECT_TRUE(Run().findings.empty()) << FormatText(Run());
  // Two more big ones: the 90th percentile (the 92nd of 102) is 1 MiB.
  for (int i : {9, 10}) {
    BsonBuilder more;
    more.AppendInt32("_id", i).AppendString("body", mib);
    ASSERT_TRUE(Coll("pages").InsertOne(std::move(more).Build()).ok());
  }
  AdviseReport r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"bloated-documents app.pages"}) << FormatText(r);
  EXPECT_EQ(r.findings[0].severity, Severity::kWarning);
  EXPECT_GT(r.findings[0].evidence.Get("p90").Int64(), 1 << 20);
  EXPECT_EQ(r.findings[0].lab_scenario, "bloated-documents");
  // One document of half the 16 MiB limit: critical, whatever the others.
  BsonBuilder huge;
  huge.AppendInt32("_id", 100).AppendString("body", std::string(8 << 20, 'y'));
  ASSERT_TRUE(Coll("users").InsertOne(std::move(huge).Build()).ok());
  r = Run();
  ASSERT_EQ(r.findings.size(), 2u) << FormatText(r);
  EXPECT_EQ(r.findings[0].rule, "bloated-documents");
  EXPECT_EQ(r.findings[0].ns, "app.users");
  EXPECT_EQ(r.findings[0].severity, Severity::kCritical);
  EXPECT_THAT(r.findings[0].summary, HasSubstr("50% of the 16 MiB limit"));
}

TEST_F(AdvisorTest, RedundantAndTooManyIndexes) {
  FillClean();
  Collection c = Coll("orders");
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1})")).ok());
  // Not redundant: unique, opposite direction, partial; redundant: a_1.
  ASSERT_TRUE(c.CreateIndex(Json(R"({"a": 1, "b": 1})")).ok());
  ASSERT_TRUE(c.CreateIndex(Json(R"({"a": -1})")).ok());
  IndexOptions unique;
  unique.unique = true;
  ASSERT_TRUE(c.CreateIndex(Json(R"({"b": 1})"), unique).ok());
  ASSERT_TRUE(c.CreateIndex(Json(R"({"b": 1, "c": 1})")).ok());
  IndexOptions sparse;
  sparse.sparse = true;
  ASSERT_TRUE(c.CreateIndex(Json(R"({"d": 1})")).ok());
  ASSERT_TRUE(c.CreateIndex(Json(R"({"d": 1, "e": 1})"), sparse).ok());  // covers not every document
  AdviseReport r = Run();
  EXPECT_TRUE(r.findings.empty()) << FormatText(r);
  ASSERT_TRUE(c.CreateIndex(Json(R"({"a": 1})")).ok());
  r = Run();
  ASSERT_EQ(Rules(r), std::vector<std::string>{"redundant-index app.orders"}) << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("index").String(), "a_1");
  EXPECT_EQ(r.findings[0].evidence.Get("coveredBy").String(), "a_1_b_1");
  EXPECT_EQ(r.findings[0].remedy, "Drop index a_1: queries on its fields use a_1_b_1 instead.");
  // Nine secondary indexes are fine; ten are too many (the lab's 10-index
  // variant of index-count, tests/lab_advise_test.cc).
  Collection w = Coll("wide");
  for (int i = 0; i < 9; ++i) {
    ASSERT_TRUE(w.CreateIndex(Json("{\"f" + std::to_string(i) + "\": 1}")).ok());
  }
  EXPECT_EQ(Run().findings.size(), 1u);
  ASSERT_TRUE(w.CreateIndex(Json(R"({"f9": 1})")).ok());
  r = Run();
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[1].rule, "too-many-indexes");
  EXPECT_EQ(r.findings[1].evidence.Get("indexes").Int64(), 10);
}

// "Slow" in the name: the sanitizer run leaves it out (10,000 creates).
TEST_F(AdvisorTest, SlowTooManyCollections) {
  Database db = client_->GetDatabase("many");
  for (int i = 0; i < 9999; ++i) ASSERT_TRUE(db.CreateCollection("c" + std::to_string(i)).ok());
  AdviseOptions o;
  o.dbs = {"many"};
  EXPECT_TRUE(Run(o).findings.empty());
  ASSERT_TRUE(db.CreateCollection("c9999").ok());
  AdviseReport r = Run(o);
  ASSERT_EQ(Rules(r), std::vector<std::string>{"too-many-collections many"});
  EXPECT_EQ(r.findings[0].evidence.Get("collections").Int64(), 10000);
}

// An index no query used since its creation, for at least
// unused_index_days: counted across restarts ($indexStats).
TEST_F(AdvisorTest, UnusedIndexes) {
  FillClean();
  AdviseOptions now;
  now.unused_index_days = 0;
  AdviseReport r = Run(now);
  ASSERT_EQ(Rules(r), (std::vector<std::string>{"unused-index app.posts", "unused-index app.posts"}))
      << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("index").String(), "author_1_date_-1");
  // A use of one of them (a query planned on it), then a restart: only
  // the other is unused.
  ASSERT_TRUE(Coll("posts").Find(Json(R"({"tags": "t"})")).ok());
  ASSERT_TRUE(client_->Close().ok());
  client_ = std::move(Client::Open(dir_.Sub("db"))).value();
  r = Run(now);
  ASSERT_EQ(r.findings.size(), 1u) << FormatText(r);
  EXPECT_EQ(r.findings[0].evidence.Get("index").String(), "author_1_date_-1");
  // By default, a week: indexes created just now are not judged yet.
  EXPECT_TRUE(Run().findings.empty());
}

// Growth warnings: a write that makes a document reach 50% / 90% of 16 MiB
// or its longest array 250 / 1,000 / 10,000 elements counts once, at the
// crossing (the highest threshold a write crosses), in collStats'
// growthWarnings. Arrays are looked at in writes that grow the document.
TEST_F(AdvisorTest, GrowthWarningsFireAtTheThresholds) {
  Collection c = Coll("g");
  auto stats = [&]() {
    auto s = c.Stats();
    EXPECT_TRUE(s.ok()) << s.status();
    const GrowthStatistics& g = s->growth;
    return std::vector<int64_t>{g.size_50_percent_warnings, g.size_90_percent_warnings,
                                g.array_250_warnings, g.array_1000_warnings, g.array_10000_warnings};
  };
  using V = std::vector<int64_t>;
  ASSERT_TRUE(c.InsertOne(WithArray(1, "a", 249, "{\"x\": 1}")).ok());
  EXPECT_EQ(stats(), (V{0, 0, 0, 0, 0}));
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$push": {"a": {"x": 2}}})")).ok());  // 250
  EXPECT_EQ(stats(), (V{0, 0, 1, 0, 0}));
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$push": {"a": {"x": 3}}})")).ok());  // 251
  EXPECT_EQ(stats(), (V{0, 0, 1, 0, 0}));
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"a": []}})")).ok());
  BsonBuilder set;
  set.OpenDocument("$set").OpenArray("a");
  for (int i = 0; i < 250; ++i) set.AppendInt32("", i);
  set.Close().Close();
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), std::move(set).Build()).ok());
  EXPECT_EQ(stats(), (V{0, 0, 2, 0, 0}));  // below, then at it again: a second crossing
  // An insert with 1,000 strings in an embedded document's array: the
  // highest threshold only.
  BsonBuilder nested;
  nested.AppendInt32("_id", 2).OpenDocument("t").OpenArray("r");
  for (int i = 0; i < 1000; ++i) nested.AppendString("", "s");
  nested.Close().Close();
  ASSERT_TRUE(c.InsertOne(std::move(nested).Build()).ok());
  EXPECT_EQ(stats(), (V{0, 0, 2, 1, 0}));
  // Sizes: just under half of 16 MiB, then at it, then at 90%.
  const int64_t half = int64_t{8} << 20, ninety = (int64_t{16} << 20) / 10 * 9;
  auto sized = [](int id, int64_t bytes) {
    BsonBuilder b;
    b.AppendInt32("_id", id).AppendString("s", std::string(static_cast<size_t>(bytes - 22), 'x'));
    return std::move(b).Build();
  };
  Document under = sized(3, half - 1);
  ASSERT_EQ(static_cast<int64_t>(under.size()), half - 1);
  ASSERT_TRUE(c.InsertOne(under).ok());
  EXPECT_EQ(stats(), (V{0, 0, 2, 1, 0}));
  ASSERT_TRUE(c.ReplaceOne(Json(R"({"_id": 3})"), sized(3, half)).ok());
  EXPECT_EQ(stats(), (V{1, 0, 2, 1, 0}));
  ASSERT_TRUE(c.ReplaceOne(Json(R"({"_id": 3})"), sized(3, ninety)).ok());
  EXPECT_EQ(stats(), (V{1, 1, 2, 1, 0}));
  // A rename keeps them; collStats shows them.
  ASSERT_TRUE(client_->GetDatabase("app").RenameCollection("g", "h").ok());
  c = Coll("h");
  EXPECT_EQ(stats(), (V{1, 1, 2, 1, 0}));
  Document reply = client_->RunCommand("app", Json(R"({"collStats": "h"})"));
  EXPECT_EQ(ToJson(reply.Get("growthWarnings").Document()),
            R"({"documentSize50Percent": 1, "documentSize90Percent": 1, "array250": 2, "array1000": 1, "array10000": 0})");
}

// Each write's result carries the growth warnings it raised, as the log
// has them: at most 10, then a line saying how many more. Inside a
// transaction the call returns them; they count once it commits, and not
// if it aborts.
TEST_F(AdvisorTest, WriteResultsCarryTheirGrowthWarnings) {
  Collection c = Coll("w");
  const std::string kTail =
      " elements (250 or more); the schema advisor (rockdoc-advise, or db.advise() in the "
      "shell) says what to do";
  auto one = c.InsertOne(WithArray(1, "a", 250, "1"));
  ASSERT_TRUE(one.ok());
  EXPECT_THAT(one->warnings, ::testing::ElementsAre(
                                 "document growth in app.w: the document {\"_id\": 1} has an "
                                 "array 'a' of 250" + kTail));
  EXPECT_TRUE(c.InsertOne(WithArray(2, "a", 249, "1"))->warnings.empty());
  auto pushed = c.UpdateOne(Json(R"({"_id": 2})"), Json(R"({"$push": {"a": 0}})"));
  ASSERT_TRUE(pushed.ok());
  EXPECT_THAT(pushed->warnings, ::testing::ElementsAre(HasSubstr("{\"_id\": 2} has an array 'a' of 250")));
  UpdateResult fam;
  ASSERT_TRUE(c.FindOneAndUpdate(Json(R"({"_id": 2})"), Json(R"({"$set": {"b": {"c": [1]}}, "$push": {"a": {"$each": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}}})"), {}, &fam).ok());
  EXPECT_TRUE(fam.warnings.empty());  // 260: no threshold crossed
  // 12 documents, each crossing 1,000: 10 lines and one for the 2 more.
  std::vector<Document> docs;
  for (int i = 10; i < 22; ++i) docs.push_back(WithArray(i, "big", 1000, "1"));
  auto many = c.InsertMany(docs);
  ASSERT_TRUE(many.ok());
  ASSERT_EQ(many->warnings.size(), 11u);
  EXPECT_THAT(many->warnings[9], HasSubstr("{\"_id\": 19} has an array 'big' of 1000 elements (1000 or more)"));
  EXPECT_EQ(many->warnings[10], "and 2 more growth warning(s) in app.w (see the database's log)");
  auto all = c.UpdateMany(Json(R"({"_id": {"$gte": 10}})"), Json(R"({"$set": {"s": "x"}})"));
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->warnings.empty());  // arrays unchanged
  UpdateOptions upsert;
  upsert.upsert = true;
  auto up = c.ReplaceOne(Json(R"({"_id": 30})"), WithArray(30, "r", 300, "1"), upsert);
  ASSERT_TRUE(up.ok()) << up.status();
  ASSERT_TRUE(up->upserted_id.has_value());
  EXPECT_THAT(up->warnings, ::testing::ElementsAre(HasSubstr("{\"_id\": 30} has an array 'r' of 300")));
  const int64_t before = c.GrowthStats()->array_1000_warnings;
  EXPECT_EQ(before, 12);
  for (bool commit : {false, true}) {
    auto session = client_->StartSession();
    ASSERT_TRUE(session.ok());
    ASSERT_TRUE(session->StartTransaction().ok());
    auto r = session->GetDatabase("app").GetCollection("w").InsertOne(WithArray(commit ? 40 : 41, "big", 1000, "1"));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->warnings.size(), 1u);
    EXPECT_EQ(c.GrowthStats()->array_1000_warnings, before + 0);  // not before the commit
    ASSERT_TRUE(commit ? session->CommitTransaction().ok() : session->AbortTransaction().ok());
    EXPECT_EQ(c.GrowthStats()->array_1000_warnings, before + (commit ? 1 : 0));
  }
}

// The growth statistics: evidence of the large-array and bloated-documents
// findings, and an array that writes grew past 250 elements is reported
// though no document holds that many now (every document is examined
// here, so the sample cannot see it), across a restart; not one the
// sample shows to hold numbers.
TEST_F(AdvisorTest, GrowingArraysFromTheGrowthStatistics) {
  FillClean();
  Collection c = Coll("feed");
  ASSERT_TRUE(c.InsertOne(WithArray(1, "events", 300, R"({"t": 1})")).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"events": []}})")).ok());
  ASSERT_TRUE(c.InsertOne(WithArray(2, "readings", 400, "1.5")).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 2})"), Json(R"({"$set": {"readings": [1.5]}})")).ok());
  AdviseOptions full;
  full.full = true;
  AdviseReport r = Run(full);
  ASSERT_EQ(Rules(r), std::vector<std::string>{"large-array app.feed"}) << FormatText(r);
  const Finding& f = r.findings[0];
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_THAT(f.summary, HasSubstr("array 'events' has grown to 300 elements in writes (growth "
                                   "statistics: 1 writes seen), though none of the 2 documents "
                                   "examined has 250 or more"));
  EXPECT_EQ(ToJson(f.evidence),
            R"({"path": "events", "source": "growth statistics", "inWrites": {"count": 1, )"
            R"("p50AtMost": 511, "p90AtMost": 511, "max": 300}, "growthWarnings": {"array250": 2, )"
            R"("array1000": 0, "array10000": 0}, "documentsExamined": 2, "threshold": 250})");
  // Written with the catalog entry at close: the same after a restart.
  ASSERT_TRUE(client_->Close().ok());
  client_ = std::move(Client::Open(dir_.Sub("db"))).value();
  EXPECT_EQ(ToJson(Run(full).findings.at(0).evidence), ToJson(f.evidence));
  // A large array the sample sees: the statistics add their evidence.
  ASSERT_TRUE(Coll("feed").InsertOne(WithArray(3, "likes", 260, "\"u\"")).ok());
  r = Run(full);
  ASSERT_EQ(r.findings.size(), 2u) << FormatText(r);
  const Finding& likes = r.findings[0].evidence.Get("path").String() == "likes" ? r.findings[0] : r.findings[1];
  EXPECT_EQ(likes.evidence.Get("documentsAtOrOverThreshold").Int64(), 1);  // the sample's
  EXPECT_EQ(ToJson(likes.evidence.Get("inWrites").Document()),
            R"({"count": 1, "p50AtMost": 511, "p90AtMost": 511, "max": 260})");
  EXPECT_EQ(likes.evidence.GetPath("growthWarnings.array250").Int64(), 3);  // readings' too
  // Bloated documents: every document's size, and the size warnings.
  BsonBuilder huge;
  huge.AppendInt32("_id", 1).AppendString("body", std::string(8 << 20, 'y'));
  ASSERT_TRUE(Coll("users2").InsertOne(std::move(huge).Build()).ok());
  r = Run(full);
  ASSERT_EQ(r.findings[0].rule, "bloated-documents") << FormatText(r);
  EXPECT_EQ(ToJson(r.findings[0].evidence.Get("allDocuments").Document()),
            R"({"count": 1, "p50AtMost": 16777215, "p90AtMost": 16777215, "maxAtMost": 16777215})");
  EXPECT_EQ(ToJson(r.findings[0].evidence.Get("growthWarnings").Document()),
            R"({"documentSize50Percent": 1, "documentSize90Percent": 0})");
}

TEST_F(AdvisorTest, SampleOrEverything) {
  std::vector<Document> docs;
  for (int i = 0; i < 1000; ++i) docs.push_back(WithArray(i, "x", i == 500 ? 300 : 1, "\"s\""));
  ASSERT_TRUE(Coll("c").InsertMany(docs).ok());
  AdviseOptions o;
  o.sample_size = 10;
  EXPECT_EQ(Run(o).documents_examined, 10);
  o.full = true;
  AdviseReport r = Run(o);
  EXPECT_EQ(r.documents_examined, 1000);
  ASSERT_EQ(r.findings.size(), 1u);  // the one outlier, which only --full is sure to see
  o.full = false;
  o.sample_size = 0;
  EXPECT_EQ(Advise(*client_, o).status().code(), ErrorCode::kBadValue);
}

TEST_F(AdvisorTest, ProgramExitStatusTextAndJson) {
  ASSERT_TRUE(Coll("blog").InsertOne(WithArray(1, "comments", 300, R"({"t": 1})")).ok());
  ASSERT_TRUE(client_->Close().ok());
  client_.reset();
  auto run = [&](std::vector<std::string> args, std::string* out, std::string* err) {
    std::vector<const char*> argv = {"rockdoc-advise"};
    for (const std::string& a : args) argv.push_back(a.c_str());
    std::ostringstream o, e;
    int rc = tools::AdviseMain(static_cast<int>(argv.size()), argv.data(), o, e);
    *out = o.str();
    *err = e.str();
    return rc;
  };
  std::string out, err;
  EXPECT_EQ(run({dir_.Sub("db")}, &out, &err), 2) << err;
  EXPECT_THAT(out, HasSubstr("[warning] large-array in app.blog"));
  EXPECT_THAT(out, HasSubstr("measure:  rockdoc-lab --scenario subset-reviews"));
  EXPECT_EQ(run({dir_.Sub("db"), "--failOn", "critical"}, &out, &err), 0) << err;
  EXPECT_EQ(run({"--dbpath", dir_.Sub("db"), "--json"}, &out, &err), 2) << err;
  auto json = FromJson(out);
  ASSERT_TRUE(json.ok()) << json.status() << out;
  EXPECT_EQ(json->GetPath("findings.0.rule").String(), "large-array");
  EXPECT_EQ(json->GetPath("findings.0.evidence.max").NumberAsDouble(), 300);  // relaxed JSON: an int
  EXPECT_EQ(run({dir_.Sub("db"), "--failOn", "severe"}, &out, &err), 3);
  EXPECT_THAT(err, HasSubstr("severity must be info, warning or critical"));
  EXPECT_EQ(run({dir_.Sub("db"), "--sample", "x"}, &out, &err), 3);
  EXPECT_EQ(run({dir_.Sub("db"), "--unusedIndexDays", "-1"}, &out, &err), 3);
  EXPECT_EQ(run({dir_.Sub("db"), "--unusedIndexDays", "0", "--failOn", "critical"}, &out, &err), 0);
  EXPECT_EQ(run({dir_.Sub("db"), "--bogus"}, &out, &err), 3);
  EXPECT_EQ(run({dir_.Sub("missing")}, &out, &err), 1);
}

}  // namespace
}  // namespace rockdoc::advisor

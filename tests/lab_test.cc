// Tests of the schema-patterns lab (tools/lab/): every bundled scenario runs
// at its test size, and the invariants that make the comparison fair hold.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "report.h"
#include "rockdoc/json.h"
#include "runner.h"
#include "scenario.h"
#include "test_util.h"

namespace rockdoc::lab {
namespace {

using ::rockdoc::test::ScratchDir;

Scenario Load(const std::string& name) {
  const std::string dir = DefaultScenarioDir();
  EXPECT_FALSE(dir.empty());
  auto s = LoadScenarioFile(dir + "/" + name + ".json");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(s).value() : Scenario();
}

RunOptions TestOptions(const ScratchDir& dir) {
  RunOptions o;
  o.mode = Mode::kTest;
  o.work_dir = dir.path();
  return o;
}

// Runs a scenario at its test size and checks what every scenario must
// satisfy: one row per variant and size, the same answers and the same
// logical data in every variant, before and after the writes.
ScenarioResult RunAndCheck(const std::string& name) {
  ScratchDir dir;
  Scenario s = Load(name);
  auto r = RunScenario(s, TestOptions(dir));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return ScenarioResult();
  EXPECT_EQ(r->rows.size(), s.variants.size() * s.test.sizes.size());
  EXPECT_TRUE(r->consistent) << ::testing::PrintToString(r->inconsistencies);
  for (const Measurement& m : r->rows) {
    const Measurement& first = r->rows.front();
    EXPECT_FALSE(m.answers.empty()) << m.variant;
    EXPECT_FALSE(m.dump_before.empty()) << m.variant;
    EXPECT_EQ(m.answers, first.answers) << m.variant << " vs " << first.variant;
    EXPECT_EQ(m.dump_before, first.dump_before) << m.variant << " vs " << first.variant;
    EXPECT_EQ(m.dump_after, first.dump_after) << m.variant << " vs " << first.variant;
    // The writes changed the data (else the after-check proves nothing).
    EXPECT_NE(m.dump_before, m.dump_after) << m.variant;
    EXPECT_GT(m.read_ops_per_sec, 0) << m.variant;
    EXPECT_GT(m.write_ops_per_sec, 0) << m.variant;
    EXPECT_GE(m.keys_examined + m.docs_examined, 1) << m.variant;
    EXPECT_GT(m.written_bytes_per_op, 0) << m.variant;
    EXPECT_GT(m.storage_bytes, 0u) << m.variant;
    EXPECT_GT(m.documents, 0) << m.variant;
    EXPECT_GE(m.max_doc_bytes, static_cast<int64_t>(m.avg_doc_bytes)) << m.variant;
  }
  return std::move(r).value();
}

TEST(LabTemplateTest, EvaluatesPlaceholdersAndFunctions) {
  Env env;
  env.Set("n", IntValue(3));
  env.Set("post", DocumentValue(rockdoc::test::Json(R"({"_id": 7, "tags": ["a", "b"]})")));
  Document t = rockdoc::test::Json(R"({"v": {
      "id": "$$post._id", "tag": "$$post.tags.1", "literal": "$notAVar",
      "name": {"$$concat": ["p-", "$$n"]}, "sum": {"$$add": [1, "$$n", 10]},
      "range": {"$$range": "$$n"}, "sizes": {"$$size": {"$$range": [2, 5]}},
      "gen": {"$$generate": {"count": 2, "as": "k", "template": {"k": "$$k"}}},
      "flat": {"$$flatten": [[1], [2, 3]]},
      "obj": {"$$object": [[{"$$concat": ["f", "$$n"]}, 1]]},
      "kept": {"$$literal": {"$$concat": ["x"]}},
      "update": {"$push": {"c": {"$each": [1], "$slice": -5}}}}})");
  auto v = EvaluateDocument(t.Get("v"), env);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ToJson(*v),
            ToJson(rockdoc::test::Json(R"({"id": 7, "tag": "b", "literal": "$notAVar",
                "name": "p-3", "sum": 14, "range": [0, 1, 2], "sizes": 3,
                "gen": [{"k": 0}, {"k": 1}], "flat": [1, 2, 3], "obj": {"f3": 1},
                "kept": {"$$concat": ["x"]},
                "update": {"$push": {"c": {"$each": [1], "$slice": -5}}}})")));
}

TEST(LabTemplateTest, RandomValuesDependOnTheirSeedsOnly) {
  Env env;
  Document t = rockdoc::test::Json(R"({"a": {"$$text": [50, 1, 2]}, "b": {"$$text": [50, 1, 2]},
      "c": {"$$text": [50, 2, 1]}, "i": {"$$int": [0, 1000000, "x"]},
      "j": {"$$int": [0, 1000000, "x"]}})");
  auto v = EvaluateFields(t, env);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Get("a").String().size(), 50u);
  EXPECT_EQ(v->Get("a").String(), v->Get("b").String());
  EXPECT_NE(v->Get("a").String(), v->Get("c").String());
  EXPECT_EQ(v->Get("i").Int32(), v->Get("j").Int32());
}

TEST(LabTemplateTest, ReportsUnknownVariablesAndFunctions) {
  Env env;
  EXPECT_FALSE(EvaluateFields(rockdoc::test::Json(R"({"a": "$$missing"})"), env).ok());
  EXPECT_FALSE(EvaluateFields(rockdoc::test::Json(R"({"a": {"$$nope": 1}})"), env).ok());
  EXPECT_FALSE(EvaluateFields(rockdoc::test::Json(R"({"a": {"$$mod": [1, 0]}})"), env).ok());
}

TEST(LabScenarioTest, RejectsMalformedScenarios) {
  EXPECT_FALSE(ParseScenario(R"({"name": "x"})").ok());  // no profiles, no variants
  EXPECT_FALSE(ParseScenario(R"({"name": "x", "profiles": {"full": {"sizes": [1]}},
      "variants": [{"name": "a", "read": [{"op": "find"}]}]})").ok());  // no write
  EXPECT_FALSE(ParseScenario(R"({"name": "x", "profiles": {"full": {"sizes": [1]}},
      "variants": [{"name": "a", "read": [{"op": "find"}], "write": [{"noop": 1}]}]})").ok());
  auto ok = ParseScenario(R"({"name": "x", "profiles": {"full": {"sizes": [1, 2]}},
      "variants": [{"name": "a", "read": [{"op": "find", "collection": "c"}],
                    "write": [{"op": "insertOne", "collection": "c", "document": {}}]}]})");
  ASSERT_TRUE(ok.ok()) << ok.status();
  // Quick and test fall back to full.
  EXPECT_EQ(ok->test.sizes, (std::vector<int64_t>{1, 2}));
}

TEST(LabScenarioTest, BundledScenariosLoad) {
  auto all = LoadScenarioDir(DefaultScenarioDir());
  ASSERT_TRUE(all.ok()) << all.status();
  std::set<std::string> names;
  for (const Scenario& s : *all) names.insert(s.name);
  for (const char* want : {"one-to-one", "blog-comments", "pre-aggregation"}) {
    EXPECT_TRUE(names.count(want)) << want;
  }
}

TEST(LabRunTest, OneToOne) {
  ScenarioResult r = RunAndCheck("one-to-one");
  ASSERT_EQ(r.rows.size(), 2u);
  // Embedding reads one document, linking two.
  EXPECT_EQ(r.rows[0].variant, "embedded");
  EXPECT_EQ(r.rows[0].docs_examined, 1);
  EXPECT_EQ(r.rows[1].docs_examined, 2);
}

TEST(LabRunTest, PreAggregation) {
  ScenarioResult r = RunAndCheck("pre-aggregation");
  ASSERT_EQ(r.rows.size(), 2u);
  // The counter reads one document; counting examines one key per view.
  const int64_t views = r.sizes.front();
  EXPECT_EQ(r.rows[0].keys_examined, 1);
  EXPECT_GE(r.rows[1].keys_examined, views);
}

TEST(LabRunTest, BlogCommentsAndTheSixteenMebibyteLimit) {
  ScenarioResult r = RunAndCheck("blog-comments");
  ASSERT_EQ(r.rows.size(), 3u);
  // Every variant holds every comment: the dump lists them all.
  auto dump = FromJson(r.rows[0].dump_after);
  ASSERT_TRUE(dump.ok()) << dump.status();
  Scenario s = Load("blog-comments");
  const Profile& p = s.test;
  const int64_t posts = p.params.Get("posts").Int32();
  EXPECT_EQ(static_cast<int64_t>(dump->Get("comments").Array().CountFields()),
            posts * r.sizes.front() + p.repetitions * p.write_ops);

  ASSERT_EQ(r.limits.size(), 1u);
  const LimitResult& l = r.limits.front();
  EXPECT_TRUE(l.failed);
  EXPECT_EQ(l.code, 17419) << l.message;
  EXPECT_TRUE(l.unchanged_after_failure);
  EXPECT_TRUE(l.as_expected);
  // 1 MiB comments: 15 fit under 16 MiB, the 16th does not.
  EXPECT_EQ(l.steps_ok, 15);
  EXPECT_LE(l.last_doc_bytes, kMaxBsonObjectSize);
  EXPECT_GT(l.last_doc_bytes, kMaxBsonObjectSize - 2 * 1048576);
  auto measure = FromJson(l.measure);
  ASSERT_TRUE(measure.ok()) << l.measure;
  EXPECT_EQ(measure->Get("comments").Int32(), 15);
}

// The failed update itself, without the engine: the embedded post is
// byte-identical before and after the push that would pass 16 MiB.
TEST(LabRunTest, FailedPushLeavesThePostByteIdentical) {
  ScratchDir dir;
  auto client = Client::Open(dir.path());
  ASSERT_TRUE(client.ok()) << client.status();
  Executor exec(client->get(), "lab");
  Env env;
  env.Set("big", IntValue(4 << 20));
  ASSERT_TRUE(exec.RunOne(rockdoc::test::Json(
                  R"({"op": "insertOne", "collection": "posts", "document": {"_id": 1, "c": []}})"),
                  env).ok());
  Document push = rockdoc::test::Json(R"({"op": "updateOne", "collection": "posts",
      "filter": {"_id": 1}, "update": {"$push": {"c": {"$$text": ["$$big", "$$n"]}}}})");
  Collection posts = (*client)->GetDatabase("lab").GetCollection("posts");
  Status failure;
  Document before;
  for (int i = 0; i < 10 && failure.ok(); ++i) {
    before = posts.FindOne(rockdoc::test::Json(R"({"_id": 1})"))->value();
    env.Set("n", IntValue(i));
    failure = exec.RunOne(push, env);
  }
  EXPECT_EQ(failure.code_number(), 17419) << failure;
  Document after = posts.FindOne(rockdoc::test::Json(R"({"_id": 1})"))->value();
  EXPECT_EQ(before.bytes(), after.bytes());
  EXPECT_EQ(after.Get("c").Array().CountFields(), 3u);
}

TEST(LabOutputTest, ResultsJsonAndMarkdownExistAndParse) {
  ScratchDir work;
  ScratchDir out;
  auto r = RunScenario(Load("one-to-one"), TestOptions(work));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(WriteOutputs({*r}, out.path()).ok());

  std::ifstream json_in(out.Sub("results.json"));
  ASSERT_TRUE(json_in.good());
  std::stringstream json;
  json << json_in.rdbuf();
  auto doc = FromJson(json.str());
  ASSERT_TRUE(doc.ok()) << doc.status();
  Element scenarios = doc->Get("scenarios");
  ASSERT_EQ(scenarios.type(), BsonType::kArray);
  DocumentView first = scenarios.Array().Get("0").Document();
  EXPECT_EQ(first.Get("name").String(), "one-to-one");
  EXPECT_TRUE(first.Get("consistent").Bool());
  DocumentView row = first.Get("results").Array().Get("0").Document();
  for (const Figure& f : Figures()) EXPECT_TRUE(row.Has(f.key)) << f.key;

  std::ifstream md_in(out.Sub("report.md"));
  std::stringstream md;
  md << md_in.rdbuf();
  const std::string text = md.str();
  EXPECT_NE(text.find("## One-to-one"), std::string::npos);
  EXPECT_NE(text.find("| embedded | 20 |"), std::string::npos);
  // One chart per figure, each closed, each with both variants' lines.
  size_t charts = 0;
  for (size_t at = text.find("<svg"); at != std::string::npos; at = text.find("<svg", at + 1)) {
    ++charts;
  }
  EXPECT_EQ(charts, Figures().size());
  size_t closes = 0;
  for (size_t at = text.find("</svg>"); at != std::string::npos;
       at = text.find("</svg>", at + 1)) {
    ++closes;
  }
  EXPECT_EQ(closes, charts);
  size_t lines = 0;
  for (size_t at = text.find("<polyline"); at != std::string::npos;
       at = text.find("<polyline", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 2 * Figures().size());
}

TEST(LabOutputTest, TableHasOneLinePerVariantAndSize) {
  ScratchDir work;
  auto r = RunScenario(Load("pre-aggregation"), TestOptions(work));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string table = TextTable(*r);
  EXPECT_NE(table.find("counter"), std::string::npos);
  EXPECT_NE(table.find("events"), std::string::npos);
  EXPECT_NE(table.find("verdict: "), std::string::npos);
  size_t newlines = std::count(table.begin(), table.end(), '\n');
  EXPECT_EQ(newlines, 1 /*title*/ + 1 /*header*/ + r->rows.size() + r->verdict.size());
}

}  // namespace
}  // namespace rockdoc::lab

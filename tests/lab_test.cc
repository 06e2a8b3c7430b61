// Tests of the schema-patterns lab (tools/lab/): every bundled scenario runs
// at its test size, and the invariants that make the comparison fair hold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_replace.h"
#include "backend.h"
#include "query/expression/expression.h"
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

// The rows of one variant.
std::vector<const Measurement*> RowsOf(const ScenarioResult& r, const std::string& variant) {
  std::vector<const Measurement*> out;
  for (const Measurement& m : r.rows) {
    if (m.variant == variant) out.push_back(&m);
  }
  return out;
}

const Measurement& Row(const ScenarioResult& r, const std::string& variant) {
  static const Measurement kNone;
  auto rows = RowsOf(r, variant);
  EXPECT_EQ(rows.size(), 1u) << variant;
  return rows.empty() ? kNone : *rows.front();
}

// Runs a scenario at its test size and checks what every scenario must
// satisfy: one row per variant and size, the same answers and the same
// logical data in every variant (SQLite's included), before and after the
// writes, and figures that were really measured.
ScenarioResult RunAndCheck(const Scenario& s) {
  ScratchDir dir;
  auto r = RunScenario(s, TestOptions(dir));
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return ScenarioResult();
  EXPECT_EQ(r->rows.size(), s.variants.size() * s.test.sizes.size());
  EXPECT_TRUE(r->consistent) << ::testing::PrintToString(r->inconsistencies);
  const Measurement& first = r->rows.front();
  for (const Measurement& m : r->rows) {
    EXPECT_FALSE(m.failed()) << m.variant << ": " << m.error;
    EXPECT_FALSE(m.answers.empty()) << m.variant;
    EXPECT_FALSE(m.dump_before.empty()) << m.variant;
    if (m.size == first.size) {
      EXPECT_EQ(m.answers, first.answers) << m.variant << " vs " << first.variant;
      EXPECT_EQ(m.dump_before, first.dump_before) << m.variant << " vs " << first.variant;
      EXPECT_EQ(m.dump_after, first.dump_after) << m.variant << " vs " << first.variant;
    }
    // The writes changed the data (else the after-check proves nothing).
    EXPECT_NE(m.dump_before, m.dump_after) << m.variant;
    EXPECT_GT(m.read_ops_per_sec, 0) << m.variant;
    EXPECT_GT(m.write_ops_per_sec, 0) << m.variant;
    EXPECT_GT(m.storage_bytes, 0u) << m.variant;
    EXPECT_GT(m.documents, 0) << m.variant;
    EXPECT_GE(m.max_doc_bytes, static_cast<int64_t>(m.avg_doc_bytes)) << m.variant;
    EXPECT_EQ(m.mixed_ops_per_sec.size(), s.mixes.size()) << m.variant;
    if (m.engine == "sqlite") {
      // No explain or I/O counters in SQLite: unknown, not zero.
      EXPECT_TRUE(std::isnan(m.keys_examined)) << m.variant;
      EXPECT_TRUE(std::isnan(m.read_bytes_per_op)) << m.variant;
      EXPECT_GT(m.rockdoc_read_ratio, 0) << m.variant;
      EXPECT_GT(m.rockdoc_write_ratio, 0) << m.variant;
    } else {
      EXPECT_GE(m.keys_examined + m.docs_examined, 1) << m.variant;
      EXPECT_GT(m.written_bytes_per_op, 0) << m.variant;
    }
  }
  for (const LimitResult& l : r->limits) {
    EXPECT_TRUE(l.as_expected) << l.title << ": " << l.message;
  }
  // Every bundled scenario says which rule of thumb it tests, and at least
  // one claim is checked at the test size (agreeing or not: timings vary).
  EXPECT_FALSE(s.rules.empty()) << s.name;
  EXPECT_FALSE(r->rule_checks.empty()) << s.name;
  return std::move(r).value();
}

ScenarioResult RunAndCheck(const std::string& name) { return RunAndCheck(Load(name)); }

// Values are the engine's aggregation expressions with the lab's variables
// bound as $$name; the engine's own operators do the arithmetic.
TEST(LabExpressionTest, EvaluatesTheEnginesExpressionsWithTheLabsVariables) {
  Env env;
  env.Set("n", IntValue(3));
  env.Set("post", DocumentValue(rockdoc::test::Json(R"({"_id": 7, "tags": ["a", "b"]})")));
  Document t = rockdoc::test::Json(R"({"v": {
      "id": "$$post._id", "tag": {"$arrayElemAt": ["$$post.tags", 1]},
      "literal": {"$literal": "$notAVar"},
      "name": {"$concat": ["p-", {"$toString": "$$n"}]}, "sum": {"$add": [1, "$$n", 10]},
      "half": {"$toInt": {"$divide": [7, 2]}},
      "range": {"$range": [0, "$$n"]}, "sizes": {"$size": {"$range": [2, 5]}},
      "gen": {"$map": {"input": {"$range": [0, 2]}, "as": "k", "in": {"k": "$$k"}}},
      "flat": {"$reduce": {"input": [[1], [2, 3]], "initialValue": [],
                           "in": {"$concatArrays": ["$$value", "$$this"]}}},
      "obj": {"$arrayToObject": [[[{"$concat": ["f", {"$toString": "$$n"}]}, 1]]]},
      "at": {"$toDate": {"$toLong": 86400000}}}})");
  auto v = Evaluate(t.Get("v"), env);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(CanonicalJson(v->element()),
            CanonicalJson(Value(DocumentValue(rockdoc::test::Json(R"({"id": 7, "tag": "b",
                "literal": "$notAVar", "name": "p-3", "sum": 14, "half": 3, "range": [0, 1, 2],
                "sizes": 3, "gen": [{"k": 0}, {"k": 1}], "flat": [1, 2, 3], "obj": {"f3": 1},
                "at": {"$date": "1970-01-02T00:00:00Z"}})")))
                              .element()));
}

// What goes to a database is data: its operators reach the engine untouched
// (the query's $size, $in and $mod are not the expressions of those names),
// and only "$$name" and {"$$eval": e} are filled.
TEST(LabExpressionTest, FillsOnlyTheHolesOfData) {
  Env env;
  env.Set("n", IntValue(3));
  env.Set("post", DocumentValue(rockdoc::test::Json(R"({"_id": 7})")));
  Document t = rockdoc::test::Json(R"({"v": {
      "filter": {"_id": "$$post._id", "tags": {"$size": 2}, "a": {"$in": [1, "$$n"]},
                 "b": {"$mod": [4, 0]}, "c": {"$$eval": {"$add": ["$$n", 1]}}},
      "update": {"$push": {"c": {"$each": [1], "$slice": -5}}}}})");
  auto v = FillDocument(t.Get("v"), env);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ToJson(*v), ToJson(rockdoc::test::Json(R"({
      "filter": {"_id": 7, "tags": {"$size": 2}, "a": {"$in": [1, 3]}, "b": {"$mod": [4, 0]},
                 "c": 4},
      "update": {"$push": {"c": {"$each": [1], "$slice": -5}}}})")));
}

TEST(LabExpressionTest, RandomValuesDependOnTheirSeedsOnly) {
  Env env;
  env.Set("one", IntValue(1));
  Document t = rockdoc::test::Json(R"({"v": {
      "a": {"$labText": [50, 1, 2]}, "b": {"$labText": [50, "$$one", {"$add": [1, 1]}]},
      "c": {"$labText": [50, 2, 1]}, "i": {"$labInt": [0, 1000000, "x"]},
      "j": {"$labInt": [0, 1000000, "x"]},
      "l": {"$labInt": [0, 1000000, "x", {"$toLong": 1}]}, "m": {"$labInt": [0, 1000000, "x", 1]},
      "o": {"$labObjectId": ["x"]}, "p": {"$labObjectId": ["x"]}}})");
  auto v = Evaluate(t.Get("v"), env);
  ASSERT_TRUE(v.ok()) << v.status();
  DocumentView d = v->element().Document();
  EXPECT_EQ(d.Get("a").String().size(), 50u);
  EXPECT_EQ(d.Get("a").String(), d.Get("b").String());
  EXPECT_NE(d.Get("a").String(), d.Get("c").String());
  EXPECT_EQ(d.Get("i").Int32(), d.Get("j").Int32());
  // An integer seeds alike whatever its numeric type.
  EXPECT_EQ(d.Get("l").Int32(), d.Get("m").Int32());
  EXPECT_EQ(d.Get("o").Oid(), d.Get("p").Oid());
}

TEST(LabExpressionTest, ReportsUnknownVariablesOperatorsAndOldTemplates) {
  Env env;
  env.Set("d", DocumentValue(rockdoc::test::Json(R"({"a": 1})")));
  auto code = [&](const char* json) {
    return Evaluate(rockdoc::test::Json(json).Get("v"), env).status().code_number();
  };
  EXPECT_EQ(code(R"({"v": "$$missing"})"), 17276);
  EXPECT_EQ(code(R"({"v": {"$nope": 1}})"), 168);
  EXPECT_EQ(code(R"({"v": {"$mod": [1, 0]}})"), 16610);
  // A path that finds nothing is not a value.
  EXPECT_EQ(code(R"({"v": "$$d.b"})"), 2);
  // The old template language is refused in data, not sent to the engine.
  EXPECT_FALSE(
      FillDocument(rockdoc::test::Json(R"({"v": {"a": {"$$add": [1, 2]}}})").Get("v"), env).ok());
  EXPECT_FALSE(
      FillDocument(rockdoc::test::Json(R"({"v": {"a": {"$$eval": 1, "b": 2}}})").Get("v"), env)
          .ok());
}

// A scenario's lab operators are extensions the engine looks up after its
// own: MongoDB's names cannot be taken.
TEST(LabExpressionTest, ExtensionOperatorsCannotTakeMongoDBsNames) {
  auto fn = [](const std::vector<Value>&) -> StatusOr<Value> { return IntValue(1); };
  EXPECT_EQ(internal::RegisterExtensionOperator("$add", fn, 0, 1).code(), ErrorCode::kBadValue);
  EXPECT_EQ(internal::RegisterExtensionOperator("$literal", fn, 0, 1).code(), ErrorCode::kBadValue);
  EXPECT_EQ(internal::RegisterExtensionOperator("$$x", fn, 0, 1).code(), ErrorCode::kBadValue);
  ASSERT_TRUE(internal::RegisterExtensionOperator("$labTestOne", fn, 0, 1).ok());
  EXPECT_EQ(internal::RegisterExtensionOperator("$labTestOne", fn, 0, 1).code(),
            ErrorCode::kBadValue);
  Env env;
  auto v = Evaluate(rockdoc::test::Json(R"({"v": {"$labTestOne": []}})").Get("v"), env);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->element().Int32(), 1);
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
  EXPECT_GE(names.size(), 21u);
  for (const char* want : {"one-to-one", "blog-comments", "pre-aggregation", "independent-access",
                           "parent-reference-index", "unnecessary-indexes", "host-recent-messages",
                           "array-of-references", "storage-engine-advice"}) {
    EXPECT_TRUE(names.count(want)) << want;
  }
}

// The test profile's value of a scenario param.
int64_t TestParam(const std::string& scenario, const char* name) {
  Scenario s = Load(scenario);
  Env env = BaseEnv(s, Mode::kTest, s.test.sizes.front());
  const Value* v = env.Find(name);
  int64_t out = -1;
  EXPECT_TRUE(v != nullptr && v->element().ExactInt64(&out)) << scenario << " " << name;
  return out;
}

// Scenario-specific invariants, run by BundledScenarioTest after the common
// ones.
void CheckOneToOne(const ScenarioResult& r) {
  // Embedding reads one document, linking two.
  EXPECT_EQ(Row(r, "embedded").docs_examined, 1);
  EXPECT_EQ(Row(r, "linked").docs_examined, 2);
  // Source 000's link: the address names its person (user_id, indexed), so
  // a read is two queries and a move one update found by user_id.
  EXPECT_EQ(Row(r, "linked").queries_per_read, 2);
  EXPECT_EQ(Row(r, "linked").keys_examined, 2);
}

void CheckPreAggregation(const ScenarioResult& r) {
  // The counter reads one document; counting examines one index key per
  // view and, the count being answered from the index, no view document.
  const int64_t views = r.sizes.front();
  EXPECT_EQ(Row(r, "counter").keys_examined, 1);
  EXPECT_EQ(Row(r, "counter").docs_examined, 1);
  EXPECT_GE(Row(r, "events").keys_examined, views);
  EXPECT_EQ(Row(r, "events").docs_examined, 1);  // the page
  // The same count in one aggregate: the page, and through the $lookup's
  // find every view's key and (its $count reads them) document.
  EXPECT_EQ(Row(r, "computed-pipeline").keys_examined, Row(r, "events").keys_examined);
  EXPECT_EQ(Row(r, "computed-pipeline").docs_examined, views + 1);
}

void CheckBlogCommentsAndTheSixteenMebibyteLimit(const ScenarioResult& r) {
  // Every variant holds every comment: the dump lists them all.
  auto dump = FromJson(Row(r, "embedded").dump_after);
  ASSERT_TRUE(dump.ok()) << dump.status();
  Scenario s = Load("blog-comments");
  const Profile& p = s.test;
  const int64_t posts = p.params.Get("posts").Int32();
  EXPECT_EQ(static_cast<int64_t>(dump->Get("comments").Array().CountFields()),
            posts * r.sizes.front() + p.repetitions * p.write_ops);

  // The reads page through the comments (source 000's pagination): some
  // read a later page than the first, all of them pageSize comments.
  const int64_t page = TestParam("blog-comments", "pageSize");
  int64_t later = 0;
  for (const std::string& a : Row(r, "embedded").answers) {
    auto answer = FromJson(a);
    ASSERT_TRUE(answer.ok()) << a;
    EXPECT_EQ(static_cast<int64_t>(answer->Get("comments").Array().CountFields()), page) << a;
    int64_t seq = 0;
    ASSERT_TRUE(answer->Get("comments").Array().Get("0").Document().Get("seq").ExactInt64(&seq));
    if (seq >= page) ++later;
  }
  EXPECT_GT(later, 0);

  ASSERT_EQ(r.limits.size(), 1u);
  const LimitResult& l = r.limits.front();
  EXPECT_TRUE(l.failed);
  EXPECT_EQ(l.code, 17419) << l.message;
  EXPECT_TRUE(l.unchanged_after_failure);
  EXPECT_TRUE(l.as_expected);
  // Each step pushes `batch` comments of `commentBytes`: the post stops
  // within one step of 16 MiB, holding every pushed comment.
  const int64_t batch = TestParam("blog-comments", "limitBatch");
  const int64_t bytes = TestParam("blog-comments", "limitCommentBytes");
  EXPECT_GT(l.steps_ok, 1);
  EXPECT_LE(l.last_doc_bytes, kMaxBsonObjectSize);
  EXPECT_GT(l.last_doc_bytes + batch * bytes, kMaxBsonObjectSize);
  auto measure = FromJson(l.measure);
  ASSERT_TRUE(measure.ok()) << l.measure;
  EXPECT_EQ(measure->Get("comments").Int32(), l.steps_ok * batch);
}

// Every bundled scenario, including ones added later, runs at its test size
// and keeps the invariants.
class BundledScenarioTest : public ::testing::TestWithParam<std::string> {};

std::vector<std::string> BundledNames() {
  std::vector<std::string> names;
  auto all = LoadScenarioDir(DefaultScenarioDir());
  if (all.ok()) {
    for (const Scenario& s : *all) names.push_back(s.name);
  }
  return names;
}

void CheckOneToFew(const ScenarioResult& r) {
  const Measurement& emb = Row(r, "embedded");
  const Measurement& ref = Row(r, "referenced");
  EXPECT_EQ(emb.keys_examined, 1);
  EXPECT_EQ(emb.docs_examined, 1);
  EXPECT_GE(ref.docs_examined, 2);  // the person and at least one email
  EXPECT_EQ(emb.documents, r.sizes.front());
  EXPECT_GT(ref.documents, emb.documents);
}

void CheckProductParts(const ScenarioResult& r) {
  const int64_t n = r.sizes.front();
  // The join reads the product and its n parts; the other two one document.
  EXPECT_EQ(Row(r, "references").docs_examined, n + 1);
  // $lookup reads the same: the product, and its parts through _id.
  EXPECT_EQ(Row(r, "lookup").docs_examined, n + 1);
  EXPECT_EQ(Row(r, "lookup").documents, Row(r, "references").documents);
  EXPECT_EQ(Row(r, "embedded").docs_examined, 1);
  EXPECT_EQ(Row(r, "denormalized").docs_examined, 1);
  EXPECT_EQ(Row(r, "references").documents, Row(r, "denormalized").documents);
  EXPECT_LT(Row(r, "embedded").documents, Row(r, "references").documents);
  ASSERT_EQ(r.mixes.size(), 3u);
  EXPECT_EQ(r.mixes[0], std::make_pair(int64_t{1000}, int64_t{1}));
  EXPECT_TRUE(std::any_of(r.verdict.begin(), r.verdict.end(), [](const std::string& v) {
    return v.find("best at read:write 1000:1") != std::string::npos;
  }));
}

void CheckHostLogs(const ScenarioResult& r) {
  const int64_t latest = std::min(TestParam("host-logs", "latest"), r.sizes.front());
  EXPECT_EQ(Row(r, "referenced").docs_examined, latest + 1);  // + the host
  // Source 001's promise: "one query instead of two".
  EXPECT_EQ(Row(r, "referenced").queries_per_read, 2);
  EXPECT_EQ(Row(r, "denormalized").queries_per_read, 1);
  EXPECT_EQ(Row(r, "denormalized").docs_examined, latest);
  EXPECT_GT(Row(r, "denormalized").max_doc_bytes, Row(r, "referenced").max_doc_bytes);
  // The copied host costs bytes on every read of its messages.
  EXPECT_GT(Row(r, "denormalized").read_bytes_per_op, Row(r, "referenced").read_bytes_per_op);
  EXPECT_TRUE(std::any_of(r.rule_checks.begin(), r.rule_checks.end(),
                          [](const RuleCheck& c) { return c.metric == "bytes read"; }));
  // Source 001's number, not shrunk in quick mode: "the most recent 5,000".
  Scenario s = Load("host-logs");
  EXPECT_EQ(BaseEnv(s, Mode::kQuick, 10000).Find("latest")->element().Int32(), 5000);
  // Embedding the messages in the host fails at 16 MiB, leaving it intact.
  ASSERT_EQ(r.limits.size(), 1u);
  EXPECT_EQ(r.limits[0].code, 17419);
  EXPECT_TRUE(r.limits[0].unchanged_after_failure);
  const int64_t message = TestParam("host-logs", "limitMessageBytes");
  EXPECT_EQ(r.limits[0].steps_ok, kMaxBsonObjectSize / (message + 64));
}

void CheckTwoWayReferences(const ScenarioResult& r) {
  const int64_t n = r.sizes.front();
  const int64_t people = TestParam("two-way-references", "people");
  const int64_t project = TestParam("two-way-references", "projectTasks");
  // Every variant sends the same queries: a project's tasks, one owner per
  // task, the person and the person's tasks.
  for (const char* v :
       {"person-tasks", "person-tasks-indexed", "two-way", "two-way-txn", "owner-only"}) {
    EXPECT_EQ(Row(r, v).queries_per_read, project + 3) << v;
    EXPECT_EQ(Row(r, v).documents, people * (n + 1)) << v;
  }
  // With an index or task.owner, each owner is one document: the project's
  // tasks, their owners, the person and the person's n tasks.
  for (const char* v : {"person-tasks-indexed", "two-way", "owner-only"}) {
    EXPECT_EQ(Row(r, v).docs_examined, 2 * project + 1 + n) << v;
  }
  // Source 001's baseline without an index scans people for each owner.
  EXPECT_GT(Row(r, "person-tasks").docs_examined, Row(r, "two-way").docs_examined);
  EXPECT_LT(Row(r, "person-tasks").keys_examined, Row(r, "two-way").keys_examined);
  // The added task.owner is one more document per reassignment, and only
  // the owner alone reassigns with one small update.
  EXPECT_GT(Row(r, "two-way").written_bytes_per_op,
            Row(r, "person-tasks").written_bytes_per_op);
  EXPECT_LT(Row(r, "owner-only").written_bytes_per_op,
            Row(r, "person-tasks").written_bytes_per_op);
  // Atomicity measured: a reader between the operations of a reassignment
  // sees the task held by no one (or by someone who is not its owner),
  // unless the reassignment is one document's update or one transaction.
  for (const char* v : {"person-tasks", "person-tasks-indexed", "two-way"}) {
    EXPECT_EQ(Row(r, v).observed_writes, 10) << v;
    EXPECT_EQ(Row(r, v).torn_writes, 10) << v;
  }
  for (const char* v : {"two-way-txn", "owner-only"}) {
    EXPECT_EQ(Row(r, v).observed_writes, 10) << v;
    EXPECT_EQ(Row(r, v).torn_writes, 0) << v;
  }
  EXPECT_TRUE(std::any_of(r.verdict.begin(), r.verdict.end(), [](const std::string& v) {
    return v.find("saw half done: person-tasks 10 of 10") != std::string::npos;
  }));
}

// Source 001's "Show me all Tasks due tomorrow": embedded, every person with
// a task due is read whole; referenced, only the tasks due.
void CheckIndependentAccess(const ScenarioResult& r) {
  const int64_t people = TestParam("independent-access", "people");
  EXPECT_EQ(Row(r, "embedded").keys_examined, 0);  // a collection scan
  EXPECT_EQ(Row(r, "embedded").docs_examined, people);
  EXPECT_GT(Row(r, "embedded-indexed").keys_examined, 0);
  EXPECT_EQ(Row(r, "referenced").keys_examined, Row(r, "referenced").docs_examined);
  EXPECT_EQ(Row(r, "referenced").documents, people * (r.sizes.front() + 1));
  for (const char* v : {"embedded", "embedded-indexed"}) {
    EXPECT_EQ(Row(r, v).documents, people) << v;
    EXPECT_GT(Row(r, v).read_bytes_per_op, Row(r, "referenced").read_bytes_per_op) << v;
    // A reschedule rewrites the person and all their tasks.
    EXPECT_GT(Row(r, v).written_bytes_per_op, 2 * Row(r, "referenced").written_bytes_per_op)
        << v;
  }
}

// Source 002's index on the parent reference: without it every read scans
// every message; with it, the student's; with the time in it, the latest.
void CheckParentReferenceIndex(const ScenarioResult& r) {
  const int64_t n = r.sizes.front();
  const int64_t students = TestParam("parent-reference-index", "students");
  const int64_t latest = std::min(TestParam("parent-reference-index", "latest"), n);
  EXPECT_EQ(Row(r, "no-index").docs_examined, students * n + 1);  // + the student
  EXPECT_EQ(Row(r, "parent-index").docs_examined, n + 1);
  EXPECT_EQ(Row(r, "parent-time-index").docs_examined, latest + 1);
  // Each index is one more entry per message written.
  EXPECT_LT(Row(r, "no-index").written_bytes_per_op, Row(r, "parent-index").written_bytes_per_op);
  EXPECT_LT(Row(r, "no-index").storage_bytes, Row(r, "parent-index").storage_bytes);
}

// Source 004's unnecessary indexes change no read (the same plans, hinted)
// and cost every insert and the disk.
void CheckUnnecessaryIndexes(const ScenarioResult& r) {
  const Measurement& needed = Row(r, "needed");
  for (const char* v : {"plus-redundant", "plus-unused"}) {
    EXPECT_EQ(Row(r, v).keys_examined, needed.keys_examined) << v;
    EXPECT_EQ(Row(r, v).docs_examined, needed.docs_examined) << v;
    EXPECT_GT(Row(r, v).written_bytes_per_op, needed.written_bytes_per_op) << v;
    EXPECT_GT(Row(r, v).storage_bytes, needed.storage_bytes) << v;
  }
}

// Source 001's newest messages copied into the host: one document per read,
// and every write rewrites the host's array.
void CheckHostRecentMessages(const ScenarioResult& r) {
  const int64_t keep = std::min(TestParam("host-recent-messages", "keep"), r.sizes.front());
  EXPECT_EQ(Row(r, "referenced").queries_per_read, 2);
  EXPECT_EQ(Row(r, "referenced").docs_examined, keep + 1);
  EXPECT_EQ(Row(r, "host-copy").queries_per_read, 1);
  EXPECT_EQ(Row(r, "host-copy").docs_examined, 1);
  EXPECT_GT(Row(r, "host-copy").written_bytes_per_op,
            2 * Row(r, "referenced").written_bytes_per_op);
  EXPECT_EQ(r.mixes.size(), 4u);
}

void CheckManyToMany(const ScenarioResult& r) {
  const Measurement& two = Row(r, "two-way");
  for (const char* v : {"one-way", "category-array"}) {
    EXPECT_EQ(Row(r, v).docs_examined, two.docs_examined) << v;
    EXPECT_EQ(Row(r, v).documents, two.documents) << v;
  }
  // A category holding every book id grows by at least 10 bytes per book
  // (an int32 array element).
  EXPECT_GT(Row(r, "category-array").max_doc_bytes, 10 * r.sizes.front());
  // Source 000's reason for one-way embedding, measured: a broad category's
  // ObjectId references break 16 MiB, though past its example of 500,000.
  ASSERT_EQ(r.limits.size(), 1u);
  const LimitResult& l = r.limits.front();
  EXPECT_EQ(l.code, 17419) << l.message;
  EXPECT_TRUE(l.unchanged_after_failure);
  auto measure = FromJson(l.measure);
  ASSERT_TRUE(measure.ok()) << l.measure;
  EXPECT_GT(measure->Get("references").Int32(), 500000);
  // An ObjectId element with its six-digit index key is 20 bytes.
  EXPECT_GT(l.last_doc_bytes + 20 * TestParam("many-to-many", "limitBatch"), kMaxBsonObjectSize);
}

// Source 001's array of ObjectId references: every page read loads the
// whole array, every new part rewrites it; the parent reference does not.
void CheckArrayOfReferences(const ScenarioResult& r) {
  const int64_t page = std::min(TestParam("array-of-references", "pageSize"), r.sizes.front());
  for (const char* v : {"id-array", "parent-ref"}) {
    EXPECT_EQ(Row(r, v).docs_examined, page + 1) << v;
    EXPECT_EQ(Row(r, v).queries_per_read, 2) << v;
  }
  EXPECT_GT(Row(r, "id-array").read_bytes_per_op, Row(r, "parent-ref").read_bytes_per_op);
  EXPECT_GT(Row(r, "id-array").written_bytes_per_op,
            2 * Row(r, "parent-ref").written_bytes_per_op);
  EXPECT_GT(Row(r, "id-array").max_doc_bytes, 17 * r.sizes.front());  // an ObjectId each
}

void CheckSubsetReviews(const ScenarioResult& r) {
  EXPECT_EQ(Row(r, "embedded").docs_examined, 1);
  EXPECT_EQ(Row(r, "subset").docs_examined, 1);
  EXPECT_EQ(Row(r, "referenced").docs_examined, 1 + TestParam("subset-reviews", "pageSize"));
  EXPECT_EQ(Row(r, "subset").documents, Row(r, "referenced").documents);
  EXPECT_GT(Row(r, "subset").documents, Row(r, "embedded").documents);
  EXPECT_GT(Row(r, "embedded").max_doc_bytes, Row(r, "subset").max_doc_bytes);
}

void CheckCoveredIndex(const ScenarioResult& r) {
  const int64_t n = r.sizes.front();
  EXPECT_EQ(Row(r, "covered").keys_examined, n);
  EXPECT_EQ(Row(r, "covered").docs_examined, 0);
  for (const char* v : {"fetch", "category-index"}) {
    EXPECT_EQ(Row(r, v).keys_examined, n) << v;
    EXPECT_EQ(Row(r, v).docs_examined, n) << v;
  }
  EXPECT_LT(Row(r, "covered").read_bytes_per_op, Row(r, "fetch").read_bytes_per_op);
}

void CheckCustomId(const ScenarioResult& r) {
  const int64_t window = TestParam("custom-id", "windowSeconds") *
                         TestParam("custom-id", "eventsPerSecond");
  for (const char* v : {"natural-id", "objectid-index"}) {
    EXPECT_EQ(Row(r, v).docs_examined, window + 1) << v;  // the window + one point read
  }
  // No secondary index, and a smaller _id.
  EXPECT_LT(Row(r, "natural-id").storage_bytes, Row(r, "objectid-index").storage_bytes);
  EXPECT_LT(Row(r, "natural-id").max_doc_bytes, Row(r, "objectid-index").max_doc_bytes);
}

void CheckIndexCount(const ScenarioResult& r) {
  const char* order[] = {"0-indexes", "1-index", "2-indexes", "5-indexes", "10-indexes"};
  for (size_t i = 0; i < std::size(order); ++i) {
    EXPECT_EQ(Row(r, order[i]).docs_examined, 1) << order[i];
    if (i == 0) continue;
    // Every index adds bytes to every insert and to the disk.
    EXPECT_GT(Row(r, order[i]).written_bytes_per_op, Row(r, order[i - 1]).written_bytes_per_op)
        << order[i];
    EXPECT_GT(Row(r, order[i]).storage_bytes, Row(r, order[i - 1]).storage_bytes) << order[i];
  }
}

void CheckBloatedDocuments(const ScenarioResult& r) {
  const int64_t cold = r.sizes.front();
  EXPECT_GT(Row(r, "bloated").read_bytes_per_op, cold);
  EXPECT_GT(Row(r, "bloated").written_bytes_per_op, cold);
  EXPECT_LT(Row(r, "split").read_bytes_per_op, cold);
  EXPECT_LT(Row(r, "split").written_bytes_per_op, cold);
  EXPECT_EQ(Row(r, "split").documents, 2 * Row(r, "bloated").documents);
}

void CheckBucketing(const ScenarioResult& r) {
  const int64_t hours = TestParam("bucketing", "windowHours");
  EXPECT_EQ(Row(r, "per-event").docs_examined, hours * r.sizes.front());
  EXPECT_EQ(Row(r, "hourly-buckets").docs_examined, hours);
  EXPECT_LT(Row(r, "hourly-buckets").documents, Row(r, "per-event").documents);
  EXPECT_LT(Row(r, "hourly-buckets").storage_bytes, Row(r, "per-event").storage_bytes);
  EXPECT_GT(Row(r, "hourly-buckets").written_bytes_per_op,
            Row(r, "per-event").written_bytes_per_op);
  // Buckets of at most `cap` readings: a window of hours * n readings is
  // read from the pages that hold it (one more where it starts mid-page),
  // and no bucket outgrows the cap.
  const int64_t cap = TestParam("bucketing", "cap");
  ASSERT_LT(cap, r.sizes.front());
  const int64_t window = hours * r.sizes.front();
  EXPECT_GE(Row(r, "capped-buckets").docs_examined, (window + cap - 1) / cap);
  EXPECT_LE(Row(r, "capped-buckets").docs_examined, (window + cap - 1) / cap + 1);
  EXPECT_LT(Row(r, "capped-buckets").max_doc_bytes, Row(r, "hourly-buckets").max_doc_bytes);
  EXPECT_GT(Row(r, "capped-buckets").written_bytes_per_op,
            Row(r, "per-event").written_bytes_per_op);
}

// Source 004's MMAP-era advice on an LSM store: every update writes the
// whole document again, however it is expressed, so an operator update
// writes what a replacement writes, a pre-allocated document writes its
// empty slots every time, and long field names cost every read and the disk.
void CheckStorageEngineAdvice(const ScenarioResult& r) {
  const Measurement& push = Row(r, "push");
  EXPECT_EQ(Row(r, "replace-whole").written_bytes_per_op, push.written_bytes_per_op);
  EXPECT_EQ(Row(r, "replace-whole").dump_after, push.dump_after);
  EXPECT_GT(Row(r, "preallocated").written_bytes_per_op, push.written_bytes_per_op);
  EXPECT_GT(Row(r, "preallocated").read_bytes_per_op, push.read_bytes_per_op);
  EXPECT_GT(Row(r, "long-names").read_bytes_per_op, push.read_bytes_per_op);
  EXPECT_GT(Row(r, "long-names").written_bytes_per_op, push.written_bytes_per_op);
  EXPECT_GT(Row(r, "long-names").storage_bytes, push.storage_bytes);
}

using Check = void (*)(const ScenarioResult&);
const std::map<std::string, Check>& SpecificChecks() {
  static const std::map<std::string, Check> checks = {
      {"one-to-one", CheckOneToOne},
      {"pre-aggregation", CheckPreAggregation},
      {"blog-comments", CheckBlogCommentsAndTheSixteenMebibyteLimit},
      {"one-to-few", CheckOneToFew},
      {"product-parts", CheckProductParts},
      {"host-logs", CheckHostLogs},
      {"two-way-references", CheckTwoWayReferences},
      {"many-to-many", CheckManyToMany},
      {"subset-reviews", CheckSubsetReviews},
      {"covered-index", CheckCoveredIndex},
      {"custom-id", CheckCustomId},
      {"index-count", CheckIndexCount},
      {"bloated-documents", CheckBloatedDocuments},
      {"bucketing", CheckBucketing},
      {"independent-access", CheckIndependentAccess},
      {"parent-reference-index", CheckParentReferenceIndex},
      {"unnecessary-indexes", CheckUnnecessaryIndexes},
      {"host-recent-messages", CheckHostRecentMessages},
      {"array-of-references", CheckArrayOfReferences},
      {"storage-engine-advice", CheckStorageEngineAdvice},
  };
  return checks;
}

TEST_P(BundledScenarioTest, RunsAndItsVariantsAgree) {
  ScenarioResult r = RunAndCheck(GetParam());
  ASSERT_EQ(r.name, GetParam());
  auto it = SpecificChecks().find(r.name);
  if (it != SpecificChecks().end()) it->second(r);
}

// Every scenario-specific check names a bundled scenario (a renamed file
// must not silently drop its checks).
TEST(LabScenarioTest, SpecificChecksNameBundledScenarios) {
  const std::vector<std::string> names = BundledNames();
  for (const auto& [name, check] : SpecificChecks()) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Lab, BundledScenarioTest, ::testing::ValuesIn(BundledNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// The failed update itself, without the engine: the embedded post is
// byte-identical before and after the push that would pass 16 MiB.
TEST(LabRunTest, FailedPushLeavesThePostByteIdentical) {
  ScratchDir dir;
  auto client = Client::Open(dir.path());
  ASSERT_TRUE(client.ok()) << client.status();
  RockdocExecutor exec(client->get(), "lab");
  Env env;
  env.Set("big", IntValue(4 << 20));
  ASSERT_TRUE(exec.RunOne(rockdoc::test::Json(
                  R"({"op": "insertOne", "collection": "posts", "document": {"_id": 1, "c": []}})"),
                  env).ok());
  Document push = rockdoc::test::Json(R"({"op": "updateOne", "collection": "posts",
      "filter": {"_id": 1}, "update": {"$push": {"c": {"$$eval": {"$labText": ["$$big", "$$n"]}}}}})");
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

// A scenario's createIndex options go through the library's decoder: one
// rockdoc lacks fails the step instead of being dropped.
// The lab's transaction operation (issue 12): its operations commit
// together or not at all.
TEST(LabRunTest, ATransactionStepIsAllOrNothing) {
  ScratchDir dir;
  auto client = Client::Open(dir.path());
  ASSERT_TRUE(client.ok()) << client.status();
  RockdocExecutor exec(client->get(), "lab");
  Env env;
  Status failed = exec.RunOne(rockdoc::test::Json(R"({"op": "transaction", "do": [
      {"op": "insertOne", "collection": "c", "document": {"_id": 1}},
      {"op": "insertOne", "collection": "c", "document": {"_id": 1}}]})"),
                              env);
  EXPECT_EQ(failed.code(), ErrorCode::kDuplicateKey) << failed;
  Collection c = (*client)->GetDatabase("lab").GetCollection("c");
  EXPECT_EQ(c.CountDocuments(Document()).value_or(-1), 0);
  Status ok = exec.RunOne(rockdoc::test::Json(R"({"op": "transaction", "do": [
      {"op": "insertOne", "collection": "c", "document": {"_id": 1}, "as": "id"},
      {"op": "updateOne", "collection": "c", "filter": {"_id": "$$id"}, "update": {"$set": {"x": 1}}}]})"),
                          env);
  ASSERT_TRUE(ok.ok()) << ok;
  EXPECT_EQ(c.CountDocuments(rockdoc::test::Json(R"({"x": 1})")).value_or(-1), 1);
  ASSERT_NE(env.Find("id"), nullptr);  // what the body bound is kept after the commit
}

TEST(LabRunTest, CreateIndexOptionsRockdocLacksFailTheStep) {
  ScratchDir dir;
  auto client = Client::Open(dir.path());
  ASSERT_TRUE(client.ok()) << client.status();
  RockdocExecutor exec(client->get(), "lab");
  Env env;
  Status ttl = exec.RunOne(rockdoc::test::Json(R"({"op": "createIndex", "collection": "c",
      "keys": {"t": 1}, "options": {"bits": 26}})"),
                           env);
  EXPECT_EQ(ttl.code(), ErrorCode::kNotImplemented) << ttl;
  Status unknown = exec.RunOne(rockdoc::test::Json(R"({"op": "createIndex", "collection": "c",
      "keys": {"t": 1}, "options": {"uniq": true}})"),
                               env);
  EXPECT_EQ(unknown.code(), ErrorCode::kInvalidIndexSpecificationOption) << unknown;
  EXPECT_TRUE(exec.RunOne(rockdoc::test::Json(R"({"op": "createIndex", "collection": "c",
      "keys": {"t": 1}, "options": {"unique": true, "name": "by_t"}})"),
                          env)
                  .ok());
  auto indexes = (*client)->GetDatabase("lab").GetCollection("c").ListIndexes();
  ASSERT_TRUE(indexes.ok());
  ASSERT_EQ(indexes->size(), 2u);
  EXPECT_EQ((*indexes)[1].Get("name").String(), "by_t");
  EXPECT_TRUE((*indexes)[1].Get("unique").Bool());
}

// An engine operation's fields are its command's (the command layer decodes
// them): a typo is MongoDB's unknown field, an option rockdoc lacks (such as
// a $group under a collation) NotImplemented, a wrong type TypeMismatch; each fails the step
// before anything changes, instead of being dropped.
TEST(LabRunTest, OperationFieldsTheExecutorDoesNotReadFailTheStep) {
  ScratchDir dir;
  auto client = Client::Open(dir.path());
  ASSERT_TRUE(client.ok()) << client.status();
  RockdocExecutor exec(client->get(), "lab");
  Env env;
  ASSERT_TRUE(exec.RunOne(rockdoc::test::Json(
                  R"({"op": "insertOne", "collection": "c", "document": {"_id": 1, "a": 1}})"),
                  env).ok());
  Status typo = exec.RunOne(rockdoc::test::Json(R"({"op": "updateOne", "collection": "c",
      "filter": {"_id": 2}, "update": {"$set": {"a": 2}}, "upsrt": true})"),
                            env);
  EXPECT_EQ(typo.code(), ErrorCode::kUnknownBsonField) << typo;
  Status collation = exec.RunOne(rockdoc::test::Json(R"({"op": "aggregate", "collection": "c",
      "pipeline": [{"$group": {"_id": "$a"}}], "collation": {"locale": "en"}})"),
                                 env);
  EXPECT_EQ(collation.code(), ErrorCode::kNotImplemented) << collation;
  Status upsert = exec.RunOne(rockdoc::test::Json(R"({"op": "updateOne", "collection": "c",
      "filter": {"_id": 2}, "update": {"$set": {"a": 2}}, "upsert": "yes"})"),
                              env);
  EXPECT_EQ(upsert.code(), ErrorCode::kTypeMismatch) << upsert;
  EXPECT_EQ((*client)->GetDatabase("lab").GetCollection("c").EstimatedDocumentCount().value(), 1);
}

// The SQLite reference: parameters bind as SQL values, documents as JSON
// text, and the "json" columns parse back to the same documents.
TEST(LabSqliteTest, DocumentsRoundTripThroughJsonText) {
  ScratchDir dir;
  auto db = Backend::Open(EngineKind::kSqlite, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  Executor& exec = (*db)->executor();
  Env env;
  env.Set("n", IntValue(50));
  auto run = [&](const char* op) {
    Status st = exec.RunOne(rockdoc::test::Json(op), env);
    EXPECT_TRUE(st.ok()) << st << " in " << op;
  };
  run(R"j({"op": "sql", "sql": "CREATE TABLE t(id INTEGER PRIMARY KEY, doc TEXT)"})j");
  const char* doc_template = R"j({"_id": "$$i", "name": {"$labText": [12, "$$i"]},
      "price": 2.5, "big": 5000000000, "at": {"$toDate": {"$toLong": {"$multiply": ["$$i", 86400000]}}},
      "tags": ["a", {"k": "$$i"}], "nested": {"ok": true, "none": null}})j";
  run((std::string(
           R"j({"op": "sql", "sql": "INSERT INTO t(id, doc) VALUES (json_extract(?1, '$._id'), ?1)",
      "params": ["$$this"], "rows": {"$$eval": {"$map": {"input": {"$range": [0, "$$n"]}, "as": "i", "in": )j") +
       doc_template + "}}}}")
          .c_str());
  run(R"j({"op": "sql", "sql": "SELECT id, doc, json_extract(doc, '$.price') AS price FROM t ORDER BY id",
      "params": [], "json": ["doc"], "as": "rows"})j");
  const Value* rows = env.Find("rows");
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->type(), BsonType::kArray);
  int64_t i = 0;
  for (const Element& row : rows->element().Array()) {
    Env inner(&env);
    inner.Set("i", IntValue(i));
    auto want = Evaluate(
        rockdoc::test::Json((std::string("{\"v\": ") + doc_template + "}").c_str()).Get("v"),
        inner);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(CanonicalJson(row.Document().Get("doc")), CanonicalJson(want->element()));
    EXPECT_EQ(row.Document().Get("id").Int32(), i);
    EXPECT_EQ(row.Document().Get("price").Double(), 2.5);
    ++i;
  }
  EXPECT_EQ(i, 50);
  // A bad statement is an error naming SQLite, not a crash.
  Status bad = exec.RunOne(rockdoc::test::Json(R"j({"op": "sql", "sql": "SELECT nope FROM t", "as": "x"})j"), env);
  EXPECT_EQ(bad.code_number(), 2) << bad;
  EXPECT_NE(bad.ToString().find("sqlite"), std::string::npos) << bad;
  // rockdoc operations are not SQL.
  EXPECT_EQ(exec.RunOne(rockdoc::test::Json(R"j({"op": "find", "collection": "t"})j"), env)
                .code_number(),
            2);
  ASSERT_TRUE((*db)->Reopen().ok());
  auto disk = (*db)->DiskBytes();
  ASSERT_TRUE(disk.ok());
  EXPECT_GT(*disk, 0u);
  auto sizes = (*db)->Sizes();
  ASSERT_TRUE(sizes.ok()) << sizes.status();
  EXPECT_EQ(sizes->documents, 50);
}

// A scenario written for the checks below: `grow` holds one document of
// $$n KiB; `split` holds $$n documents of 1 KiB.
constexpr char kSizesScenario[] = R"({"name": "sizes", "sizeLabel": "KiB",
  "mixes": [[9, 1], [1, 1]],
  "profiles": {"full": {"sizes": [4, 20000], "repetitions": 1, "readOps": 5, "writeOps": 5}},
  "let": {"write": {"k": {"$add": [1000000, "$$op"]}}},
  "variants": [
    {"name": "split", "setup": [{"op": "insertMany", "collection": "c", "documents":
        {"$$eval": {"$map": {"input": {"$range": [0, "$$n"]}, "as": "i",
                             "in": {"_id": "$$i", "t": {"$labText": [1024, "$$i"]}}}}}}],
     "read": {"ops": [{"op": "count", "collection": "c", "filter": {}, "as": "n"}], "answer": "$$n"},
     "write": [{"op": "insertOne", "collection": "w", "document": {"_id": "$$k"}}]},
    {"name": "grow", "setupMayFail": [2, 10334],
     "setup": [{"op": "insertOne", "collection": "c", "document":
        {"_id": 0, "t": {"$$eval": {"$map": {"input": {"$range": [0, "$$n"]}, "as": "i",
                                             "in": {"$labText": [1024, "$$i"]}}}}}}],
     "read": {"ops": [{"op": "findOne", "collection": "c", "filter": {"_id": 0}, "as": "d"},
                      {"op": "let", "vars": {"n": {"$size": "$$d.t"}}}], "answer": "$$n"},
     "write": [{"op": "insertOne", "collection": "w", "document": {"_id": "$$k"}}]}]})";

TEST(LabRunTest, AVariantThatCannotHoldASizeIsAFailedRowNotAFailedRun) {
  ScratchDir work;
  auto s = ParseScenario(kSizesScenario);
  ASSERT_TRUE(s.ok()) << s.status();
  RunOptions o;
  o.mode = Mode::kFull;
  o.work_dir = work.path();
  auto r = RunScenario(*s, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->consistent) << ::testing::PrintToString(r->inconsistencies);
  ASSERT_EQ(r->rows.size(), 4u);
  // 4 KiB fits; 20,000 KiB is over 16 MiB: the insert fails (code 2, as
  // MongoDB's), the row says so and the run goes on.
  EXPECT_FALSE(r->rows[2].failed());
  EXPECT_TRUE(r->rows[3].failed());
  EXPECT_EQ(r->rows[3].error_code, 2) << r->rows[3].error;
  EXPECT_TRUE(std::isnan(r->rows[3].read_ops_per_sec));
  EXPECT_NE(TextTable(*r).find("cannot hold"), std::string::npos);
  // Without setupMayFail the same failure ends the run with the error.
  std::string strict = kSizesScenario;
  strict.replace(strict.find(R"("setupMayFail": [2, 10334],)"),
                 std::string(R"("setupMayFail": [2, 10334],)").size(), "");
  auto s2 = ParseScenario(strict);
  ASSERT_TRUE(s2.ok()) << s2.status();
  auto r2 = RunScenario(*s2, o);
  EXPECT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code_number(), 2) << r2.status();
}

TEST(LabRunTest, MixedThroughputFollowsFromTheMeasuredRates) {
  ScratchDir work;
  auto s = ParseScenario(kSizesScenario);
  ASSERT_TRUE(s.ok()) << s.status();
  s->full.sizes = {4};
  RunOptions o;
  o.mode = Mode::kFull;
  o.work_dir = work.path();
  auto r = RunScenario(*s, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->mixes.size(), 2u);
  for (const Measurement& m : r->rows) {
    ASSERT_EQ(m.mixed_ops_per_sec.size(), 2u);
    const double R = m.read_ops_per_sec, W = m.write_ops_per_sec;
    EXPECT_DOUBLE_EQ(m.mixed_ops_per_sec[0], 10 / (9 / R + 1 / W));
    EXPECT_DOUBLE_EQ(m.mixed_ops_per_sec[1], 2 / (1 / R + 1 / W));
    // A mix lies between its parts.
    EXPECT_GE(m.mixed_ops_per_sec[1], std::min(R, W));
    EXPECT_LE(m.mixed_ops_per_sec[1], std::max(R, W));
  }
  EXPECT_NE(TextTable(*r).find("ops/s 9:1"), std::string::npos);
}

// A rule of thumb's claims are checked against the measured winners: one
// that holds and one that does not (disk sizes: deterministic).
TEST(LabRunTest, RulesOfThumbAreCheckedAgainstTheWinners) {
  const std::string text = R"({"name": "rules", "sizeLabel": "docs",
    "rulesOfThumb": [{"text": "small is small", "claims": [{"source": "lab", "variant": "small", "wins": "disk"},
                                                           {"source": "lab", "variant": "twin", "wins": "disk"}]},
                     {"text": "big is small", "claims": [{"source": "lab", "variant": "big", "wins": "disk"},
                                                        {"source": "lab", "variant": "big", "wins": "disk", "from": 99}]}],
    "profiles": {"full": {"sizes": [300], "repetitions": 1, "readOps": 3, "writeOps": 3}},
    "let": {"write": {"k": {"$add": [1000000, "$$op"]}}},
    "variants": [
      {"name": "small", "setup": [{"op": "insertOne", "collection": "c", "document": {"_id": 0, "n": "$$n"}}],
       "read": {"ops": [{"op": "findOne", "collection": "c", "filter": {"_id": 0}, "as": "d"}], "answer": "$$d.n"},
       "write": [{"op": "insertOne", "collection": "w", "document": {"_id": "$$k"}}]},
      {"name": "twin", "setup": [{"op": "insertOne", "collection": "c", "document": {"_id": 0, "n": "$$n"}}],
       "read": {"ops": [{"op": "findOne", "collection": "c", "filter": {"_id": 0}, "as": "d"}], "answer": "$$d.n"},
       "write": [{"op": "insertOne", "collection": "w", "document": {"_id": "$$k"}}]},
      {"name": "big", "setup": [{"op": "insertOne", "collection": "c", "document": {"_id": 0, "n": "$$n"}},
         {"op": "insertMany", "collection": "pad", "documents": {"$$eval": {"$map": {
            "input": {"$range": [0, "$$n"]}, "as": "i",
            "in": {"_id": "$$i", "t": {"$labText": [1000, "$$i"]}}}}}}],
       "read": {"ops": [{"op": "findOne", "collection": "c", "filter": {"_id": 0}, "as": "d"}], "answer": "$$d.n"},
       "write": [{"op": "insertOne", "collection": "w", "document": {"_id": "$$k"}}]}]})";
  auto s = ParseScenario(text);
  ASSERT_TRUE(s.ok()) << s.status();
  ScratchDir work;
  RunOptions o;
  o.mode = Mode::kFull;
  o.work_dir = work.path();
  auto r = RunScenario(*s, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rule_checks.size(), 4u);  // the claim from 99 applies at 300 too
  // small and twin hold the same data: neither beats the other, both ways
  // (big loses to both, on disk after compaction: deterministic).
  const RuleCheck& small = r->rule_checks[0];
  const RuleCheck& twin = r->rule_checks[1];
  EXPECT_TRUE(small.tie) << small.evidence;
  EXPECT_TRUE(twin.tie) << twin.evidence;
  const RuleCheck& big = r->rule_checks[2];
  EXPECT_FALSE(big.agrees);
  EXPECT_FALSE(big.tie);
  EXPECT_NE(big.winner, "big");
  EXPECT_EQ(big.decided_by, "disk after compaction (bytes)");
  EXPECT_THAT(big.evidence, ::testing::HasSubstr("disk after compaction (bytes): "));
  const std::string table = TextTable(*r);
  EXPECT_NE(table.find("rule of thumb \"small is small\": "), std::string::npos) << table;
  EXPECT_NE(table.find("DISAGREES: " + big.winner + " has the least disk, not big"),
            std::string::npos)
      << table;
  // Claims name rockdoc variants and known metrics.
  std::string bad = text;
  bad.replace(bad.find(R"("wins": "disk"}]},)"), std::string(R"("wins": "disk"}]},)").size(),
              R"("wins": "speed"}]},)");
  EXPECT_EQ(ParseScenario(bad).status().code_number(), 2);
  bad = text;
  bad.replace(bad.find(R"("variant": "small", "wins")"),
              std::string(R"("variant": "small", "wins")").size(), R"("variant": "tiny", "wins")");
  EXPECT_EQ(ParseScenario(bad).status().code_number(), 2);
}

TEST(LabScenarioTest, RejectsBadEnginesMirrorsAndMixes) {
  const std::string head = R"({"name": "x", "profiles": {"full": {"sizes": [1]}}, )";
  const std::string ok_variant =
      R"({"name": "a", "read": [{"op": "find", "collection": "c"}],
          "write": [{"op": "insertOne", "collection": "c", "document": {}}]})";
  auto parse = [&](const std::string& rest) { return ParseScenario(head + rest + "}"); };
  EXPECT_TRUE(parse(R"("variants": [)" + ok_variant + "]").ok());
  EXPECT_EQ(parse(R"("mixes": [[1]], "variants": [)" + ok_variant + "]").status().code_number(), 2);
  EXPECT_EQ(parse(R"("mixes": [[0, 0]], "variants": [)" + ok_variant + "]").status().code_number(), 2);
  EXPECT_EQ(parse(R"("variants": [{"name": "q", "engine": "postgres", "read": [{"op": "sql"}],
      "write": [{"op": "sql"}]}])").status().code_number(), 2);
  // A SQLite variant mirrors an existing rockdoc variant, and is not first.
  EXPECT_EQ(parse(R"("variants": [)" + ok_variant + R"(, {"name": "q", "engine": "sqlite",
      "mirrors": "nope", "read": [{"op": "sql"}], "write": [{"op": "sql"}]}])").status().code_number(), 2);
  EXPECT_TRUE(parse(R"("variants": [)" + ok_variant + R"(, {"name": "q", "engine": "sqlite",
      "mirrors": "a", "read": [{"op": "sql"}], "write": [{"op": "sql"}]}])").ok());
  EXPECT_EQ(parse(R"("variants": [{"name": "q", "engine": "sqlite", "read": [{"op": "sql"}],
      "write": [{"op": "sql"}]}, )" + ok_variant + "]").status().code_number(), 2);
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
  // A line per variant and figure, except figures an engine cannot measure
  // (SQLite has no explain or I/O counters).
  size_t expected_lines = 0;
  for (const Figure& f : Figures()) {
    for (const std::string& v : r->variants) {
      auto rows = RowsOf(*r, v);
      expected_lines += std::any_of(rows.begin(), rows.end(), [&](const Measurement* m) {
        return !std::isnan(f.get(*m));
      });
    }
  }
  EXPECT_GE(r->variants.size(), 2u);
  EXPECT_EQ(lines, expected_lines);
  EXPECT_GT(lines, 2 * Figures().size());  // SQLite's measured figures are charted too
}

// Values over more than two decades are charted on a log scale, with a
// tick per decade; closer values keep a linear scale from 0.
TEST(LabOutputTest, ChartsSwitchToALogScaleForWideRanges) {
  ScenarioResult r;
  r.size_label = "n";
  r.variants = {"a", "b"};
  r.sizes = {10, 100};
  auto row = [](const char* v, int64_t size, double reads) {
    Measurement m;
    m.variant = v;
    m.size = size;
    m.read_ops_per_sec = reads;
    return m;
  };
  const Figure& reads = Figures().front();
  ASSERT_EQ(std::string(reads.key), "readOpsPerSec");
  r.rows = {row("a", 10, 72), row("a", 100, 70), row("b", 10, 69000), row("b", 100, 68000)};
  std::string wide = SvgChart(r, reads);
  EXPECT_NE(wide.find("reads per second (median, 95% CI) (log scale)</text>"), std::string::npos);
  EXPECT_NE(wide.find(">reads/s</text>"), std::string::npos);  // the unit on the y axis
  for (const char* tick : {">10</text>", ">100</text>", ">1000</text>", ">100k</text>"}) {
    EXPECT_NE(wide.find(tick), std::string::npos) << tick;
  }
  r.rows = {row("a", 10, 50), row("a", 100, 70), row("b", 10, 900), row("b", 100, 1000)};
  std::string narrow = SvgChart(r, reads);
  EXPECT_EQ(narrow.find("(median, 95% CI) (log scale)</text>"), std::string::npos);
  // Round linear ticks: 0, 200, 400, ... up to 1000 or more.
  for (const char* tick : {">0</text>", ">200</text>", ">400</text>", ">1000</text>"}) {
    EXPECT_NE(narrow.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(narrow.find(">250</text>"), std::string::npos);
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

// Every timed figure of a bundled scenario's quick and full runs comes from
// at least 5 repetitions: fewer give no 95% interval, so no verdict on time.
TEST(LabScenarioTest, BundledProfilesRepeatAtLeastFiveTimes) {
  auto all = LoadScenarioDir(DefaultScenarioDir());
  ASSERT_TRUE(all.ok()) << all.status();
  for (const Scenario& s : *all) {
    EXPECT_GE(s.quick.repetitions, 5) << s.name;
    EXPECT_GE(s.full.repetitions, 5) << s.name;
  }
}

// The prose a reader sees has no placeholder left: "$$name", `name` and a
// bare camelCase param name become the value with its unit.
// Where the claim is about the working set, the full profile measures data
// larger than its block cache (and the rest in it), so that the claim shows
// in time and not only in bytes; the quick and test profiles keep the
// default cache and small sizes.
TEST(LabScenarioTest, WorkingSetClaimsOutgrowTheBlockCacheInFullMode) {
  auto param = [](const Scenario& s, int64_t size, const char* name) {
    Env env = BaseEnv(s, Mode::kFull, size);
    int64_t v = 0;
    EXPECT_TRUE(env.Find(name) != nullptr && env.Find(name)->element().ExactInt64(&v)) << name;
    return v;
  };
  // The hot documents' bytes at a size: cold bytes or reviews per product.
  const std::map<std::string, std::function<int64_t(const Scenario&, int64_t)>> bytes = {
      {"bloated-documents",
       [&](const Scenario& s, int64_t n) { return param(s, n, "products") * n; }},
      {"subset-reviews",
       [&](const Scenario& s, int64_t n) {
         return param(s, n, "products") * n * param(s, n, "reviewBytes");
       }},
  };
  for (const auto& [name, data] : bytes) {
    SCOPED_TRACE(name);
    Scenario s = Load(name);
    const int64_t cache = s.full.block_cache_bytes;
    ASSERT_GT(cache, 0);
    EXPECT_GT(data(s, s.full.sizes.back()), 4 * cache);
    EXPECT_LT(data(s, s.full.sizes.front()), cache);
    EXPECT_EQ(s.quick.block_cache_bytes, 0);
    EXPECT_EQ(s.test.block_cache_bytes, 0);
  }
  // A cache that is no size is refused; one given runs.
  const std::string base = R"({"name": "c", "variants": [{"name": "a", "setup": [],
      "read": [{"op": "count", "collection": "c", "filter": {}}],
      "write": [{"op": "insertOne", "collection": "c", "document": {}}],
      "dump": {"ops": [{"op": "count", "collection": "c", "filter": {}, "as": "n"}],
               "answer": "$$n"}}],
      "rulesOfThumb": [{"text": "t", "claims": [{"variant": "a", "wins": "reads",
                                                 "source": "lab"}]}],
      "profiles": {"full": {"sizes": [1], "repetitions": 1, "readOps": 2, "writeOps": 2,
                            "blockCacheBytes": CACHE}}})";
  auto with = [&](const std::string& cache) {
    return ParseScenario(absl::StrReplaceAll(base, {{"CACHE", cache}}));
  };
  EXPECT_THAT(std::string(with("-1").status().message()),
              ::testing::HasSubstr("\"blockCacheBytes\" must not be negative"));
  auto small = with("65536");
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->test.block_cache_bytes, 65536);  // test falls back to full
  ScratchDir dir;
  auto r = RunScenario(*small, TestOptions(dir));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->consistent);
}

TEST(LabOutputTest, ProseResolvesEveryPlaceholder) {
  auto all = LoadScenarioDir(DefaultScenarioDir());
  ASSERT_TRUE(all.ok()) << all.status();
  for (const Scenario& s : *all) {
    ScenarioResult r;
    r.size_label = s.size_label;
    r.sizes = s.quick.sizes;
    r.params = ParamTexts(s, Mode::kQuick, r.sizes);
    std::string text = ResolveProse(r, s.description);
    for (const Variant& v : s.variants) text += "\n" + ResolveProse(r, v.description);
    for (const LimitStep& l : s.limits) text += "\n" + ResolveProse(r, l.title);
    EXPECT_EQ(text.find("$$"), std::string::npos) << s.name << ": " << text;
    for (const auto& [name, value] : r.params) {
      // camelCase names only ("pageSize"): a bare "n" or "B" may be a word.
      bool camel = false;
      for (size_t i = 1; i < name.size(); ++i) {
        camel = camel || (std::islower(name[i - 1]) && std::isupper(name[i]));
      }
      if (!camel) continue;
      EXPECT_EQ(text.find(name), std::string::npos) << s.name << ": " << name << " in " << text;
    }
  }
  // A worked example: units, thousands, values that change with the size.
  ScenarioResult r;
  r.size_label = "comments per post";
  r.sizes = {10, 100};
  r.sizes = {10, 1000};
  r.params = {{"pageSize", "10"}, {"limitCommentBytes", "262,144 bytes"},
              {"coldBytes", "20 / 2,000 bytes (at comments per post 10 / 1,000)"}};
  EXPECT_EQ(ResolveProse(r, "pages of pageSize, comments of limitCommentBytes bytes, `pageSize` "
                            "and $$pageSize; about coldBytes, the size $$n; {\"$$x\": 1}"),
            "pages of 10, comments of 262,144 bytes, 10 and 10; about 20 / 2,000 bytes (at "
            "comments per post 10 / 1,000), the size n (the comments per post: 10, 1,000); "
            "{\"x\": 1}");
}

// A chart whose series are all equal (keys per read = 1 everywhere) says
// nothing: it is left out of the reports.
TEST(LabOutputTest, FlatChartsAreLeftOut) {
  ScenarioResult r;
  r.name = "flat";
  r.size_label = "n";
  r.variants = {"a", "b"};
  r.sizes = {10, 100};
  auto row = [](const char* v, int64_t size, double reads) {
    Measurement m;
    m.variant = v;
    m.size = size;
    m.read_ops_per_sec = reads;
    m.read_samples = {reads, reads * 1.1, reads * 0.9, reads, reads};
    m.read_interval = MedianInterval(m.read_samples);
    m.keys_examined = 1;
    m.docs_examined = 1;
    return m;
  };
  r.rows = {row("a", 10, 72), row("a", 100, 70), row("b", 10, 690), row("b", 100, 680)};
  const auto& figures = Figures();
  auto find = [&](const char* key) {
    return *std::find_if(figures.begin(), figures.end(),
                         [&](const Figure& f) { return std::string(f.key) == key; });
  };
  EXPECT_TRUE(Informative(r, find("readOpsPerSec")));
  EXPECT_FALSE(Informative(r, find("keysExamined")));
  EXPECT_FALSE(Informative(r, find("docsExamined")));
  size_t informative = 0;
  for (const Figure& f : figures) informative += Informative(r, f);
  const std::string html = HtmlReport({r});
  size_t charts = 0;

  const std::string figure = "<svg class=\"figure\"";  // the glance charts are per size
  for (size_t at = html.find(figure); at != std::string::npos; at = html.find(figure, at + 1)) {
    ++charts;
  }
  EXPECT_EQ(charts, informative);
  // The rates' charts carry error bars (the 95% intervals).
  EXPECT_NE(html.find("class=\"errorbar\""), std::string::npos);
  EXPECT_EQ(html.find("http://") == std::string::npos ||
                html.find("http://") == html.find("http://www.w3.org/2000/svg"),
            true);
}

// A quick-like run: 5 repetitions per figure, every one kept; the A/A check
// of the first variant; disk before and after compaction; provenance.
TEST(LabRunTest, RepetitionsAreKeptAndTheNoiseFloorMeasured) {
  auto s = ParseScenario(kSizesScenario);
  ASSERT_TRUE(s.ok()) << s.status();
  s->full.sizes = {4};
  s->full.repetitions = 5;
  s->full.read_ops = 3;
  s->full.write_ops = 3;
  ScratchDir work;
  RunOptions o;
  o.mode = Mode::kFull;
  o.work_dir = work.path();
  std::vector<std::string> keys, reads;
  double last = 0;
  o.progress = [&](const std::string& key, const std::string& what, double done) {
    EXPECT_GE(done, last);  // never backwards
    EXPECT_LE(done, 1);
    last = done;
    if (keys.empty() || keys.back() != key) keys.push_back(key);
    if (what.rfind("reads ", 0) == 0) reads.push_back(what);
  };
  auto r = RunScenario(*s, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(keys, ::testing::ElementsAre("sizes, KiB 4"));
  EXPECT_EQ(last, 1);
  // Interleaved: each round runs every variant (and the A/A copy) once, in
  // an order rotated from round to round and reversed every other cycle of
  // rotations, so that no variant keeps a position (drift hits all alike).
  EXPECT_THAT(std::vector<std::string>(reads.begin(), reads.begin() + 6),
              ::testing::ElementsAre("reads 1/5: split", "reads 1/5: grow",
                                     "reads 1/5: split (A/A copy)",
                                     "reads 2/5: grow", "reads 2/5: split (A/A copy)",
                                     "reads 2/5: split"));
  ASSERT_EQ(reads.size(), 15u);
  // Over the five rounds, every one of the three runs in every position.
  for (const std::string name : {"split", "grow", "split (A/A copy)"}) {
    std::set<size_t> positions;
    for (size_t i = 0; i < reads.size(); ++i) {
      if (reads[i].substr(reads[i].find(": ") + 2) == name) positions.insert(i % 3);
    }
    EXPECT_EQ(positions.size(), 3u) << name;
  }
  for (const Measurement& m : r->rows) {
    EXPECT_EQ(m.read_samples.size(), 5u) << m.variant;
    EXPECT_EQ(m.write_samples.size(), 5u) << m.variant;
    EXPECT_EQ(m.read_interval.n, 5);
    EXPECT_LE(m.read_interval.lo, m.read_ops_per_sec);
    EXPECT_GE(m.read_interval.hi, m.read_ops_per_sec);
    EXPECT_GT(m.storage_bytes, 0u);
    EXPECT_GT(m.storage_bytes_before_compaction, 0u);
    ASSERT_EQ(m.mixed_samples.size(), 2u);
    EXPECT_EQ(m.mixed_samples[0].size(), 5u);
  }
  ASSERT_EQ(r->noise.size(), 1u);
  EXPECT_EQ(r->noise[0].variant, "split");
  EXPECT_EQ(r->noise[0].read_samples_again.size(), 5u);
  EXPECT_TRUE(std::any_of(r->verdict.begin(), r->verdict.end(), [](const std::string& v) {
    return v.find("noise floor (A/A: split run twice)") != std::string::npos;
  }));
  Provenance p;
  p.cpu_model = "test cpu";
  p.rockdoc_commit = "abc";
  const std::string json = ToJson(ResultsToBson({*r}, p));
  for (const char* field : {"\"readSamples\"", "\"writeSamples\"", "\"readInterval\"",
                            "\"noiseCheck\"", "\"storageBytesBeforeCompaction\"",
                            "\"cpuModel\": \"test cpu\"", "\"rockdocCommit\": \"abc\""}) {
    EXPECT_NE(json.find(field), std::string::npos) << field;
  }
}

// A claim's "against" narrows the comparison to the variants that change
// the side the rule is about; unknown fields of a claim or limit are errors.
// An observer must say whether the state it sees is whole, and one that is
// false before or after a write checks something else than its atomicity.
TEST(LabRunTest, AnObserverAnswersAndHoldsAroundEveryWrite) {
  const std::string base = R"({"name": "o", "profiles": {"full": {"sizes": [1],
      "repetitions": 1, "readOps": 1, "writeOps": 1}},
      "rulesOfThumb": [{"text": "t", "claims": [{"variant": "a", "wins": "atomic",
                                                 "source": "lab"}]}],
      "let": {"write": {"k": "$$op"}},
      "variants": [{"name": "a", "setup": [{"op": "insertOne", "collection": "c",
                                            "document": {"_id": 0, "x": 0, "y": 0}}],
        "read": [{"op": "count", "collection": "c", "filter": {}}],
        "write": [{"op": "updateOne", "collection": "c", "filter": {"_id": 0},
                   "update": {"$inc": {"x": 1}}},
                  {"op": "updateOne", "collection": "c", "filter": {"_id": 0},
                   "update": {"$inc": {"y": 1}}}],
        "dump": {"ops": [{"op": "findOne", "collection": "c", "filter": {}, "as": "d"}],
                 "answer": "$$d"},
        "observe": OBSERVE}]})";
  auto with = [&](const std::string& observe) {
    return ParseScenario(absl::StrReplaceAll(base, {{"OBSERVE", observe}}));
  };
  EXPECT_THAT(std::string(with(R"([{"op": "count", "collection": "c", "filter": {}}])")
                              .status()
                              .message()),
              ::testing::HasSubstr("needs an \"answer\""));
  auto run = [&](const std::string& observe) {
    auto s = with(observe);
    EXPECT_TRUE(s.ok()) << s.status();
    ScratchDir dir;
    return RunScenario(*s, TestOptions(dir));
  };
  // x and y move together: between the two updates a reader sees them apart.
  auto torn = run(R"({"ops": [{"op": "count", "collection": "c",
      "filter": {"$expr": {"$eq": ["$x", "$y"]}}, "as": "n"}],
      "answer": {"$size": [{"$range": [0, "$$n"]}]}})");
  EXPECT_FALSE(torn.ok());  // the answer is a number, not true or false
  EXPECT_THAT(std::string(torn.status().message()), ::testing::HasSubstr("true or false"));
  auto whole = run(R"({"ops": [{"op": "aggregate", "collection": "c", "pipeline": [
      {"$project": {"ok": {"$eq": ["$x", "$y"]}}}], "as": "s"}], "answer": {"$first": "$$s.ok"}})");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->rows.front().observed_writes, 10);
  EXPECT_EQ(whole->rows.front().torn_writes, 10);
  auto wrong = run(R"({"ops": [{"op": "aggregate", "collection": "c", "pipeline": [
      {"$project": {"ok": {"$eq": ["$x", -1]}}}], "as": "s"}], "answer": {"$first": "$$s.ok"}})");
  EXPECT_THAT(std::string(wrong.status().message()), ::testing::HasSubstr("is false before"));
}

TEST(LabScenarioTest, ClaimsAgainstAndUnknownFields) {
  const std::string head = R"({"name": "x", "profiles": {"full": {"sizes": [1]}}, "variants": [
      {"name": "a", "read": [{"op": "find", "collection": "c"}],
       "write": [{"op": "insertOne", "collection": "c", "document": {}}]},
      {"name": "b", "read": [{"op": "find", "collection": "c"}],
       "write": [{"op": "insertOne", "collection": "c", "document": {}}]}], )";
  auto parse = [&](const std::string& rest) { return ParseScenario(head + rest + "}"); };
  auto ok = parse(R"("rulesOfThumb": [{"text": "t", "claims": [{"source": "lab", "variant": "a", "wins": "reads",
      "against": ["b"]}]}])");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(ok->rules[0].claims[0].against, ::testing::ElementsAre("b"));
  EXPECT_EQ(parse(R"("rulesOfThumb": [{"text": "t", "claims": [{"source": "lab", "variant": "a", "wins": "reads",
      "against": ["nope"]}]}])").status().code_number(), 2);
  EXPECT_EQ(parse(R"("rulesOfThumb": [{"text": "t", "claims": [{"source": "lab", "variant": "a", "wins": "reads",
      "agianst": ["b"]}]}])").status().code_number(), 2);
  EXPECT_EQ(parse(R"("limits": [{"variant": "a", "target": {"collection": "c", "filter": {}},
      "step": [{"op": "find", "collection": "c"}], "lable": "x"}])").status().code_number(), 2);
  // Everywhere else too: the top level, a variant, a profile, a rule.
  auto bad = [](const std::string& text, const char* field) {
    auto r = ParseScenario(text);
    EXPECT_EQ(r.status().code_number(), 2) << text;
    EXPECT_THAT(std::string(r.status().message()),
                ::testing::HasSubstr("unknown field \"" + std::string(field) + "\""));
  };
  const std::string variant = R"({"name": "a", "read": [{"op": "find", "collection": "c"}],
      "write": [{"op": "insertOne", "collection": "c", "document": {}}]})";
  bad(R"({"name": "x", "sizelabel": "n", "profiles": {"full": {"sizes": [1]}}, "variants": [)" +
          variant + "]}",
      "sizelabel");
  bad(R"({"name": "x", "profiles": {"full": {"sizes": [1], "reps": 5}}, "variants": [)" +
          variant + "]}",
      "reps");
  bad(R"({"name": "x", "profiles": {"fast": {"sizes": [1]}, "full": {"sizes": [1]}},
          "variants": [)" + variant + "]}",
      "fast");
  bad(R"({"name": "x", "profiles": {"full": {"sizes": [1]}}, "variants": [{"name": "a",
          "read": [{"op": "find", "collection": "c"}], "writes": [],
          "write": [{"op": "insertOne", "collection": "c", "document": {}}]}]})",
      "writes");
  bad(head + R"("rulesOfThumb": [{"text": "t", "claim": []}]})", "claim");
}

}  // namespace
}  // namespace rockdoc::lab

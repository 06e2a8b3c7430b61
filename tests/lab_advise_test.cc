// The schema advisor over the lab's own databases (rockdoc-lab --keep
// --advise): the scenarios that measure an anti-pattern build the shape the
// advisor is for, and it flags exactly that shape, in the variant that has
// it, with the numbers the lab measured, and nothing of that rule in the
// variant that avoids it. Sizes are the test profiles' (--tiny), with
// --sizes reaching the shapes: a post of 3,000 comments, products of 1 MiB.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "report.h"
#include "rockdoc/advisor.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "runner.h"
#include "scenario.h"
#include "test_util.h"

namespace rockdoc::lab {
namespace {

using ::rockdoc::test::ScratchDir;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;

// The sizes that reach the advisor's thresholds, and a size below them in
// the same run (the same variant there must be clean: the finding follows
// the shape, not the variant's name).
constexpr int64_t kComments = 3000;          // large-array: 250 or more
constexpr int64_t kFewComments = 10;
constexpr int64_t kColdBytes = 1 << 20;      // bloated-documents: p90 of 1 MiB or more
constexpr int64_t kFewColdBytes = 512;

Scenario Load(const std::string& name) {
  auto s = LoadScenarioFile(DefaultScenarioDir() + "/" + name + ".json");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(s).value() : Scenario();
}

// One scenario run at the test profile with `sizes`, its databases kept and
// advised. Shared by the tests of a scenario (each run takes a second or
// three).
struct AdvisedRun {
  Scenario scenario;
  std::unique_ptr<ScratchDir> keep = std::make_unique<ScratchDir>();
  ScenarioResult result;
};

std::unique_ptr<AdvisedRun> RunAdvised(const std::string& name, std::vector<int64_t> sizes) {
  auto run = std::make_unique<AdvisedRun>();
  run->scenario = Load(name);
  ScratchDir work;
  RunOptions o;
  o.mode = Mode::kTest;
  o.work_dir = work.path();
  o.sizes = std::move(sizes);
  o.keep_dir = run->keep->path();
  o.advise = true;
  auto r = RunScenario(run->scenario, o);
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) {
    EXPECT_TRUE(r->consistent) << ::testing::PrintToString(r->inconsistencies);
    run->result = std::move(r).value();
  }
  return run;
}

const Measurement& Row(const ScenarioResult& r, const std::string& variant, int64_t size) {
  static const Measurement kNone;
  for (const Measurement& m : r.rows) {
    if (m.variant == variant && m.size == size) return m;
  }
  ADD_FAILURE() << "no row " << variant << " " << size;
  return kNone;
}

// "rule ns" of every finding of an advised row.
std::vector<std::string> Rules(const Measurement& m) {
  std::vector<std::string> out;
  EXPECT_TRUE(m.advice.has_value()) << m.variant << " " << m.size << " was not advised";
  if (!m.advice.has_value()) return out;
  for (const advisor::Finding& f : m.advice->findings) out.push_back(f.rule + " " + f.ns);
  return out;
}

const advisor::Finding* FindingOf(const Measurement& m, const std::string& rule) {
  if (!m.advice.has_value()) return nullptr;
  for (const advisor::Finding& f : m.advice->findings) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

// The drivers' name of an index ({"a": 1, "b": -1} is "a_1_b_-1") for each
// createIndex of a variant's setup: the indexes the variant pays for.
std::vector<std::string> CreatedIndexNames(const Scenario& s, const std::string& variant) {
  std::vector<std::string> names;
  for (const Variant& v : s.variants) {
    if (v.name != variant) continue;
    for (const Document& op : v.setup.ops) {
      if (op.Get("op").String() != "createIndex") continue;
      std::string name;
      for (Element k : op.Get("keys").Document()) {
        name += (name.empty() ? "" : "_") + std::string(k.key()) + "_" +
                std::to_string(static_cast<int64_t>(k.NumberAsDouble()));
      }
      names.push_back(name);
    }
  }
  return names;
}

// The embedded post grown to thousands of comments is the large array; its
// evidence is the longest thread the lab's dump holds after the writes.
void EmbeddedPostOfThousandsOfCommentsIsALargeArray(const AdvisedRun* run) {
  const Measurement& m = Row(run->result, "embedded", kComments);
  ASSERT_THAT(Rules(m), ElementsAre("large-array lab.posts"));
  const advisor::Finding& f = m.advice->findings.front();
  EXPECT_EQ(f.evidence.Get("path").String(), "comments");
  EXPECT_EQ(f.evidence.Get("elements").String(), "document");
  // Every post has kComments or more (the writes push a few more), so all
  // of them are over the threshold, at every percentile.
  EXPECT_GE(f.evidence.Get("p50").Int64(), kComments);
  EXPECT_GE(f.evidence.Get("p99").Int64(), kComments);
  EXPECT_EQ(f.evidence.Get("documentsAtOrOverThreshold").Int64(),
            f.evidence.Get("documentsExamined").Int64());
  // The longest array is the longest thread the lab measured: its dump
  // after the writes, comments counted per post.
  auto dump = FromJson(m.dump_after);
  ASSERT_TRUE(dump.ok()) << dump.status();
  std::map<int64_t, int64_t> per_post;
  for (Element c : dump->Get("comments").Array()) {
    ++per_post[c.Document().Get("postId").AsExactInt64().value_or(-1)];
  }
  int64_t longest = 0;
  for (const auto& [post, n] : per_post) longest = std::max(longest, n);
  EXPECT_EQ(f.evidence.Get("max").Int64(), longest);
  EXPECT_GT(longest, kComments);  // the writes pushed some
}

// The same comments referenced (one document each) or in buckets of
// bucketSize: no large array, no other finding (the {postId, seq} and
// {postId, first} indexes serve every read, so none is unused).
void ReferencedAndBucketedCommentsAreNoLargeArray(const AdvisedRun* run) {
  EXPECT_THAT(Rules(Row(run->result, "referenced", kComments)), IsEmpty());
  EXPECT_THAT(Rules(Row(run->result, "buckets", kComments)), IsEmpty());
}

// The embedded post at 10 comments: the same variant, no finding.
void EmbeddedPostOfTenCommentsIsClean(const AdvisedRun* run) {
  EXPECT_THAT(Rules(Row(run->result, "embedded", kFewComments)), IsEmpty());
}

// Only rockdoc databases are advised; SQLite's are kept all the same.
void SqliteVariantsAreKeptNotAdvised(const AdvisedRun* run) {
  const Measurement& m = Row(run->result, "sqlite-embedded", kComments);
  EXPECT_FALSE(m.advice.has_value());
  EXPECT_EQ(m.kept_dir, run->keep->Sub("blog-comments/sqlite-embedded-3000"));
  EXPECT_TRUE(std::filesystem::exists(m.kept_dir + "/lab.sqlite"));
}

// The kept directory is the database the lab measured and advised: the
// advisor run on it again (as `rockdoc-advise --unusedIndexDays 0 DIR`)
// reports the same findings.
void KeptDatabasesGiveTheSameAdviceAgain(const AdvisedRun* run) {
  for (const Measurement& m : run->result.rows) {
    if (m.engine != "rockdoc") continue;
    SCOPED_TRACE(m.variant + " " + std::to_string(m.size));
    EXPECT_EQ(m.kept_dir, run->keep->Sub("blog-comments/" + m.variant + "-" +
                                          std::to_string(m.size)));
    ClientOptions co;
    co.create_if_missing = false;
    auto client = Client::Open(m.kept_dir, co);
    ASSERT_TRUE(client.ok()) << client.status();
    auto again = advisor::Advise(**client, LabAdviseOptions());
    ASSERT_TRUE(again.ok()) << again.status();
    ASSERT_TRUE(m.advice.has_value());
    EXPECT_EQ(advisor::FormatText(*again), advisor::FormatText(*m.advice));
    ASSERT_TRUE((*client)->Close().ok());
  }
}

// The report says it, per variant.
void TheReportsCarryTheFindings(const AdvisedRun* run) {
  const std::vector<std::string> lines = AdviceLines(run->result);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines, ::testing::Contains(::testing::StartsWith(
                         "embedded 3,000: [warning] large-array in lab.posts: array 'comments' "
                         "holds up to ")));
  EXPECT_THAT(lines, ::testing::Contains("referenced 3,000: no findings (1003 documents examined)"));
  EXPECT_THAT(TextTable(run->result), ::testing::HasSubstr(kAdviceHeading));
  const Document json = ResultsToBson({run->result});
  bool advised = false;
  for (Element row : json.GetPath("scenarios.0.results").Array()) {
    const DocumentView d = row.Document();
    if (d.Get("variant").String() == "embedded" && d.Get("size").Int64() == kComments) {
      advised = true;
      EXPECT_EQ(d.GetPath("advice.findings.0.rule").String(), "large-array");
      EXPECT_EQ(d.GetPath("advice.findings.0.evidence.path").String(), "comments");
    }
  }
  EXPECT_TRUE(advised);
  EXPECT_THAT(HtmlReport({run->result}), ::testing::HasSubstr("<h3>Schema advisor</h3>"));
}

// Products carrying a MiB of rarely used fields are bloated documents, with
// the largest document the lab measured as the evidence; and the
// scenario's read, which projects the three hot fields, is a narrow read
// of them (from the query statistics of the measured reads alone).
void BloatedProductsAreBloatedDocuments(const AdvisedRun* run) {
  const Measurement& m = Row(run->result, "bloated", kColdBytes);
  ASSERT_THAT(Rules(m), ElementsAre("bloated-documents lab.products",
                                    "large-documents-read-narrowly lab.products"));
  const advisor::Finding& narrow = m.advice->findings.back();
  EXPECT_EQ(ToJson(narrow.evidence.GetPath("narrowProjections.0").Document()),
            R"({"name": 1, "price": 1, "stock": 1})");
  EXPECT_EQ(narrow.evidence.Get("share").NumberAsDouble(), 1.0);
  const advisor::Finding& f = m.advice->findings.front();
  EXPECT_GE(f.evidence.Get("p90").Int64(), kColdBytes);
  EXPECT_EQ(f.evidence.Get("max").Int64(), m.max_doc_bytes);
}

// Split, the hot products are small. The details collection holds the same
// large fields by design (read only when needed), and the advisor, which
// judges sizes and not how often a collection is read, reports it too:
// pinned here so that a change of that is seen (README.md says so).
void SplitProductsAreNotBloated(const AdvisedRun* run) {
  const Measurement& m = Row(run->result, "split", kColdBytes);
  EXPECT_THAT(Rules(m), ElementsAre("bloated-documents lab.product_details"));
  EXPECT_LT(m.advice->findings.front().evidence.Get("max").Int64(), kColdBytes + 4096);
}

// The same variants with 512 cold bytes: nothing.
void SmallProductsAreClean(const AdvisedRun* run) {
  EXPECT_THAT(Rules(Row(run->result, "bloated", kFewColdBytes)), IsEmpty());
  EXPECT_THAT(Rules(Row(run->result, "split", kFewColdBytes)), IsEmpty());
}

// The scenario measures what every secondary index costs the inserts, with
// reads by _id that none of them serves: the run is the database's whole
// workload, and each index it paid for and never used is reported unused,
// by name; the variant without secondary indexes has nothing.
void EveryIndexNoReadUsedIsUnused(const AdvisedRun* run) {
  const int64_t size = run->result.sizes.front();
  EXPECT_THAT(Rules(Row(run->result, "0-indexes", size)), IsEmpty());
  for (const char* variant : {"1-index", "2-indexes", "5-indexes", "10-indexes"}) {
    SCOPED_TRACE(variant);
    const Measurement& m = Row(run->result, variant, size);
    ASSERT_TRUE(m.advice.has_value());
    std::vector<std::string> unused;
    for (const advisor::Finding& f : m.advice->findings) {
      if (f.rule == "unused-index") unused.push_back(std::string(f.evidence.Get("index").String()));
    }
    const std::vector<std::string> created = CreatedIndexNames(run->scenario, variant);
    EXPECT_EQ(created.size(), static_cast<size_t>(std::atoi(variant)));
    EXPECT_THAT(unused, UnorderedElementsAreArray(created));
    // No index of the scenario is the prefix of another.
    EXPECT_EQ(FindingOf(m, "redundant-index"), nullptr);
  }
}

// The 10-index variant is the one with too many indexes; 5 are not.
void TenIndexesAreTooMany(const AdvisedRun* run) {
  const int64_t size = run->result.sizes.front();
  for (const char* variant : {"0-indexes", "1-index", "2-indexes", "5-indexes", "10-indexes"}) {
    SCOPED_TRACE(variant);
    const Measurement& m = Row(run->result, variant, size);
    std::vector<std::string> others;
    for (const std::string& rule : Rules(m)) {
      if (rule.rfind("unused-index ", 0) != 0) others.push_back(rule);
    }
    if (std::string(variant) != "10-indexes") {
      EXPECT_THAT(others, IsEmpty());
      continue;
    }
    ASSERT_THAT(others, ElementsAre("too-many-indexes lab.items"));
    const advisor::Finding* f = FindingOf(m, "too-many-indexes");
    EXPECT_EQ(f->evidence.Get("indexes").Int64(), 10);
    std::vector<std::string> names;
    for (Element e : f->evidence.Get("names").Array()) names.emplace_back(e.String());
    EXPECT_THAT(names, UnorderedElementsAreArray(CreatedIndexNames(run->scenario, variant)));
  }
}

// Source 004's unnecessary indexes, as the lab measures them, are what the
// advisor names: the redundant prefix (which the hinted reads never use, so
// it is unused too) and the index no query uses, each pointing back at this
// scenario; the index the reads use is neither.
void UnnecessaryIndexesAreNamed(const AdvisedRun* run) {
  const int64_t size = run->result.sizes.front();
  EXPECT_THAT(Rules(Row(run->result, "needed", size)), IsEmpty());
  const std::map<std::string, std::vector<std::string>> want = {
      {"plus-redundant", {"redundant-index customer_1", "unused-index customer_1"}},
      {"plus-unused", {"unused-index status_1_total_-1"}},
      {"plus-both",
       {"redundant-index customer_1", "unused-index customer_1", "unused-index status_1_total_-1"}},
  };
  for (const auto& [variant, findings] : want) {
    SCOPED_TRACE(variant);
    const Measurement& m = Row(run->result, variant, size);
    ASSERT_TRUE(m.advice.has_value());
    std::vector<std::string> got;
    for (const advisor::Finding& f : m.advice->findings) {
      got.push_back(f.rule + " " + std::string(f.evidence.Get("index").String()));
      EXPECT_EQ(f.lab_scenario, "unnecessary-indexes") << f.rule;
      if (f.rule == "redundant-index") {
        EXPECT_EQ(f.evidence.Get("coveredBy").String(), "customer_1_placed_on_-1");
      }
    }
    EXPECT_THAT(got, UnorderedElementsAreArray(findings));
  }
}

// One test per scenario (CTest runs each test in a process of its own, and
// the scenario's run is most of the time): the checks above in turn.
TEST(LabAdviseTest, BlogCommentsEmbeddedIsALargeArrayReferencedIsNot) {
  const std::unique_ptr<AdvisedRun> run = RunAdvised("blog-comments", {kFewComments, kComments});
  for (auto check : {EmbeddedPostOfThousandsOfCommentsIsALargeArray,
                     ReferencedAndBucketedCommentsAreNoLargeArray, EmbeddedPostOfTenCommentsIsClean,
                     SqliteVariantsAreKeptNotAdvised, KeptDatabasesGiveTheSameAdviceAgain,
                     TheReportsCarryTheFindings}) {
    check(run.get());
  }
}

TEST(LabAdviseTest, BloatedDocumentsBloatedIsFlaggedSplitIsNot) {
  const std::unique_ptr<AdvisedRun> run =
      RunAdvised("bloated-documents", {kFewColdBytes, kColdBytes});
  for (auto check : {BloatedProductsAreBloatedDocuments, SplitProductsAreNotBloated,
                     SmallProductsAreClean}) {
    check(run.get());
  }
}

TEST(LabAdviseTest, IndexCountIndexesNoReadUsesAreFlagged) {
  const std::unique_ptr<AdvisedRun> run = RunAdvised("index-count", {});
  EveryIndexNoReadUsedIsUnused(run.get());
  TenIndexesAreTooMany(run.get());
}

TEST(LabAdviseTest, UnnecessaryIndexesAreTheAdvisorsRedundantAndUnusedIndexes) {
  const std::unique_ptr<AdvisedRun> run = RunAdvised("unnecessary-indexes", {});
  UnnecessaryIndexesAreNamed(run.get());
}

}  // namespace
}  // namespace rockdoc::lab

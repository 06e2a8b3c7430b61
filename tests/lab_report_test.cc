// The lab's reports (tools/lab/report.h) and the sentences of its verdicts
// (runner.h's Summarize) over synthetic measurements: known samples, so the
// words a reader gets can be checked against the figures beside them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "report.h"
#include "runner.h"
#include "scenario.h"
#include "verdict.h"

namespace rockdoc::lab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Measurement Row(const std::string& variant, int64_t size, std::vector<double> reads,
                std::vector<double> writes) {
  Measurement m;
  m.variant = variant;
  m.size = size;
  m.read_samples = std::move(reads);
  m.write_samples = std::move(writes);
  m.read_interval = MedianInterval(m.read_samples);
  m.write_interval = MedianInterval(m.write_samples);
  m.read_ops_per_sec = m.read_interval.median;
  m.write_ops_per_sec = m.write_interval.median;
  m.queries_per_read = 1;
  m.keys_examined = 1;
  m.docs_examined = 1;
  m.read_bytes_per_op = 100;
  m.written_bytes_per_op = 100;
  m.avg_doc_bytes = 50;
  m.max_doc_bytes = 60;
  m.storage_bytes = 1000;
  m.storage_bytes_before_compaction = 1200;
  return m;
}

Claim LabClaim(const std::string& variant, const std::string& metric) {
  Claim c;
  c.variant = variant;
  c.metric = metric;
  return c;
}

ScenarioResult Twins() {
  ScenarioResult r;
  r.name = "twins";
  r.title = "Twins";
  r.size_label = "n";
  r.mode = "quick";
  r.variants = {"a", "b"};
  r.sizes = {100};
  r.mixes = {{10, 1}};
  r.rules = {{"a is faster", {LabClaim("a", "reads"), LabClaim("a", "10:1")}}};
  const std::vector<double> same = {100, 101, 102, 103, 104};
  r.rows = {Row("a", 100, same, same), Row("b", 100, same, same)};
  return r;
}

// Every sentence a reader gets: the verdict lines, the rows' verdicts, the
// rule checks' evidence and the text summary.
std::vector<std::string> Sentences(const ScenarioResult& r) {
  std::vector<std::string> out = r.verdict;
  for (const Measurement& m : r.rows) out.push_back(m.verdict);
  for (const RuleCheck& c : r.rule_checks) out.push_back(c.evidence);
  out.push_back(SummaryText({r}));
  return out;
}

// A tie is said once: the evidence carries figures, the sentence the word
// (it used to read "10:1 tie (tie (within noise): ops/s at 10:1: ...").
TEST(LabSentenceTest, ATieIsSaidOnce) {
  ScenarioResult r = Twins();
  Summarize(r);
  ASSERT_EQ(r.rule_checks.size(), 2u);
  for (const RuleCheck& c : r.rule_checks) {
    EXPECT_TRUE(c.tie) << c.evidence;
    EXPECT_THAT(c.evidence, Not(HasSubstr("tie"))) << "the evidence is figures only";
  }
  const std::string all = ::testing::PrintToString(Sentences(r));
  EXPECT_THAT(all, HasSubstr("10:1 tie within noise (ops/s at 10:1: a "));
  EXPECT_THAT(all, HasSubstr("tie (within noise) for the fastest reads: reads/s: a "));
  EXPECT_THAT(all, HasSubstr("reads: no variant significantly fastest (reads/s: a "));
  const std::regex doubled(R"(tie\W+(\(|within noise\W+)*tie)");
  for (const std::string& s : Sentences(r)) {
    EXPECT_FALSE(std::regex_search(s, doubled)) << s;
  }
  // Summarize is a function of the rows: run twice, the same sentences.
  const std::vector<std::string> once = r.verdict;
  Summarize(r);
  EXPECT_EQ(r.verdict, once);
}

// The winner of a read:write mix is the one its evidence shows ahead. The
// mix is judged on its own samples (one per round: that round's read and
// write rates combined); a's median rates make the best mix on paper (100
// ops/s at 1:1), but in 18 of its 20 rounds either its reads or its writes
// were slow, so its measured mix is 2 ops/s against b's steady 50. The
// sentence used to name a's rival as a "tie" with b's lead beside it.
TEST(LabSentenceTest, AMixNamesTheVariantItsEvidenceShowsAhead) {
  ScenarioResult r;
  r.name = "mix";
  r.size_label = "n";
  r.variants = {"a", "b"};
  r.sizes = {1};
  r.mixes = {{1, 1}};
  std::vector<double> a_reads, a_writes, steady(20, 50);
  for (int k = 0; k < 20; ++k) {
    a_reads.push_back(k <= 10 ? 100 : 1);
    a_writes.push_back(k >= 9 ? 100 : 1);
  }
  r.rows = {Row("a", 1, a_reads, a_writes), Row("b", 1, steady, steady)};
  Summarize(r);
  ASSERT_EQ(r.rows[0].mixed_ops_per_sec.size(), 1u);
  EXPECT_GT(r.rows[0].mixed_ops_per_sec[0], r.rows[1].mixed_ops_per_sec[0]);  // on paper
  std::string mix_line;
  for (const std::string& v : r.verdict) {
    if (v.find("best at read:write") != std::string::npos) mix_line = v;
  }
  EXPECT_THAT(mix_line, HasSubstr("1:1 b (ops/s at 1:1: b 50 [50, 50] vs a 2.0 [2.0, 2.0])"));
  EXPECT_THAT(mix_line, Not(HasSubstr("tie")));
}

// SQLite rows stand in the same table as rockdoc's: a rockdoc row is the
// fastest of rockdoc's variants, and its verdict says so rather than claim a
// speed the SQLite row beside it beats.
TEST(LabSentenceTest, WinnersAreRockdocsWhenSqliteStandsBeside) {
  ScenarioResult r;
  r.name = "vs";
  r.size_label = "n";
  r.variants = {"a", "b", "a-sqlite"};
  r.sizes = {10};
  const std::vector<double> slow = {100, 101, 102, 103, 104}, mid = {200, 201, 202, 203, 204},
                            fast = {900, 901, 902, 903, 904};
  Measurement q = Row("a-sqlite", 10, fast, fast);
  q.engine = "sqlite";
  q.mirrors = "a";
  r.rows = {Row("a", 10, mid, mid), Row("b", 10, slow, slow), q};
  r.rows[1].storage_bytes = 5000;
  Summarize(r);
  EXPECT_EQ(r.rows[0].verdict,
            "fastest reads among rockdoc's variants, fastest writes among rockdoc's variants, "
            "smallest on disk among rockdoc's variants");
  EXPECT_THAT(r.rows[2].verdict, HasSubstr("rockdoc a: reads 0.2x (slower)"));
  EXPECT_THAT(r.verdict[0], HasSubstr("reads fastest with a among rockdoc's variants ("));
  EXPECT_THAT(r.verdict[0], HasSubstr("least disk after compaction among rockdoc's variants: a"));
}

}  // namespace
}  // namespace rockdoc::lab

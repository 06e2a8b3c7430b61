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

// A write's own reads are part of what it costs (issue 38: "a write's
// reads count"): a linked write that looks its parent up first reads 900
// bytes before writing the same 100 as the embedded one. At tied write
// rates that decides for the embedded write; without the read bytes the
// two would tie on every cost.
TEST(LabSentenceTest, AWritesOwnReadsAreInItsCost) {
  ScenarioResult r;
  r.name = "lookup-first";
  r.size_label = "n";
  r.variants = {"embedded", "linked"};
  r.sizes = {100};
  r.rules = {{"embedded writes cost less", {LabClaim("embedded", "writes")}}};
  const std::vector<double> same = {100, 101, 102, 103, 104};
  r.rows = {Row("embedded", 100, same, same), Row("linked", 100, same, same)};
  r.rows[0].read_bytes_per_write = 0;
  r.rows[1].read_bytes_per_write = 900;
  Summarize(r);
  ASSERT_EQ(r.rule_checks.size(), 1u);
  EXPECT_TRUE(r.rule_checks[0].agrees) << r.rule_checks[0].evidence;
  EXPECT_THAT(r.rule_checks[0].evidence,
              HasSubstr("I/O bytes/write (read + written + WAL): embedded 100 vs linked 1000"));
  // The same rows without the lookup's bytes: nothing tells them apart.
  r.rows[1].read_bytes_per_write = 0;
  Summarize(r);
  EXPECT_TRUE(r.rule_checks[0].tie) << r.rule_checks[0].evidence;
}

// Two claims of one rule may name the same variant and metric, judged
// against different rivals (independent-access: "referenced wins reads"
// against every variant, and against the indexed embedding alone). Each
// summary row shows its own claim's verdict once per size: it used to show
// both claims' checks in both rows ("10: agrees, 10: agrees").
TEST(LabSentenceTest, ClaimsSharingAVariantAndMetricKeepTheirOwnVerdicts) {
  ScenarioResult r;
  r.name = "rivals";
  r.size_label = "n";
  r.variants = {"a", "b", "c"};
  r.sizes = {100};
  Claim against_b = LabClaim("a", "reads");
  against_b.against = {"b"};
  Claim against_c = LabClaim("a", "reads");
  against_c.against = {"c"};
  r.rules = {{"a reads fastest", {against_b, against_c}}};
  const std::vector<double> fast = {100, 101, 102, 103, 104};
  const std::vector<double> slow = {10, 11, 12, 13, 14};
  r.rows = {Row("a", 100, fast, fast), Row("b", 100, fast, fast), Row("c", 100, slow, slow)};
  Summarize(r);
  ASSERT_EQ(r.rule_checks.size(), 2u);
  EXPECT_TRUE(r.rule_checks[0].tie);
  EXPECT_TRUE(r.rule_checks[1].agrees);
  const std::string summary = SummaryText({r});
  EXPECT_THAT(summary, HasSubstr("100: tie"));
  EXPECT_THAT(summary, HasSubstr("100: agrees"));
  EXPECT_THAT(summary, Not(HasSubstr("100: tie, 100:")));
  EXPECT_THAT(summary, Not(HasSubstr("100: agrees, 100:")));
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

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Whether `at` lies inside a <details> element of `html` (not nested in
// anything that would confuse the count: the report's details do not nest).
bool Folded(const std::string& html, size_t at) {
  const std::string before = html.substr(0, at);
  return Count(before, "<details") > Count(before, "</details>");
}

// Two scenarios with claims at several sizes (one not checked at every
// size), sharing a name, and a variant that cannot hold a size.
std::vector<ScenarioResult> TwoScenarios() {
  ScenarioResult a = Twins();
  a.sizes = {10, 100, 1000};
  const std::vector<double> same = {100, 101, 102, 103, 104};
  a.rows.clear();
  for (int64_t size : a.sizes) {
    a.rows.push_back(Row("a", size, same, same));
    a.rows.push_back(Row("b", size, same, same));
  }
  a.rows.back().error = "cannot hold";
  a.rows.back().error_code = 2;
  a.rules[0].claims[1].from = 100;  // "a wins 10:1" from 100 on
  Claim quoted = LabClaim("b", "disk");
  quoted.source = "000_seed.txt";
  quoted.quote = "b is smaller";
  a.rules.push_back({"b is smaller", {quoted}});
  ScenarioResult b = a;
  b.title = "Twins again";
  b.sizes = {7};
  b.rows = {Row("a", 7, same, same), Row("b", 7, same, same)};
  b.rows[1].storage_bytes = 10;
  Summarize(a);
  Summarize(b);
  return {a, b};
}

// The page opens on the grid of rules against sizes: one cell per verdict,
// each linking to an anchor of the page; every scenario shows one chart per
// size, and every figure's chart is folded.
TEST(LabHtmlTest, GridFirstWithOneGlanceChartPerSize) {
  const std::vector<ScenarioResult> results = TwoScenarios();
  const std::string html = HtmlReport(results);
  const size_t grid = html.find("<table class=\"grid\">");
  ASSERT_NE(grid, std::string::npos);
  EXPECT_LT(grid, html.find("<section"));
  const std::string table = html.substr(grid, html.find("</table>", grid) - grid);
  size_t checks = 0, sizes = 0;
  for (const ScenarioResult& r : results) {
    checks += r.rule_checks.size();
    sizes += r.sizes.size();
  }
  // a: reads and disk at 10 and 100 (b cannot hold 1,000: nothing to
  // compare there), 10:1 at 100 (from 100 on); b: reads and disk at 7.
  EXPECT_EQ(checks, 7u);
  EXPECT_EQ(Count(table, "<td class=\"cell "), checks);
  EXPECT_EQ(Count(table, "<td class=\"na\""), 5u);  // the other (claim, size) pairs
  // Every link of the page (cells, claims, scenarios) has its target, once.
  const std::regex href("href=\"#([^\"]+)\"");
  size_t links = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), href); it != std::sregex_iterator();
       ++it, ++links) {
    EXPECT_EQ(Count(html, "id=\"" + (*it)[1].str() + "\""), 1u) << (*it)[1].str();
  }
  EXPECT_GE(links, checks + 2 * 3 + 2 * 2);  // cells, claims, scenarios (grid and list)
  // The two scenarios share a name, not an anchor.
  EXPECT_NE(html.find("<section id=\"s-twins\">"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"s-twins-2\">"), std::string::npos);
  // The quote a claim tests is on the page, at the claim's anchor.
  EXPECT_NE(html.find("<blockquote>b is smaller <small>(000_seed.txt)</small></blockquote>"),
            std::string::npos);
  // One glance chart per scenario and size, unfolded; every figure folded.
  EXPECT_EQ(Count(html, "<svg class=\"glance\""), sizes);
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    const std::string glance_tag = "<svg class=\"glance\"";
    const bool glance = html.compare(at, glance_tag.size(), glance_tag) == 0;
    EXPECT_EQ(Folded(html, at), !glance) << html.substr(at, 40);
  }
  EXPECT_GT(Count(html, "<svg class=\"figure\""), 0u);
  // The verdict sentences are folded too; the self-check is hidden.
  const size_t sentence = html.find("rule of thumb &quot;a is faster&quot;");
  ASSERT_NE(sentence, std::string::npos);
  EXPECT_TRUE(Folded(html, sentence));
  EXPECT_NE(html.find("<pre id=\"check\" hidden>"), std::string::npos);
}

// A row that could not be measured says why in its glance chart.
TEST(LabHtmlTest, AGlanceChartSaysWhyARowIsMissing) {
  const ScenarioResult r = TwoScenarios()[0];
  const std::string svg = GlanceChart(r, 1000);
  EXPECT_THAT(svg, HasSubstr("cannot hold this size (code 2)"));
  EXPECT_THAT(svg, HasSubstr(">n 1,000</text>"));
  EXPECT_EQ(Count(svg, "<rect x="), 2u + 2);  // a's two bars, the legend's two keys
  EXPECT_THAT(GlanceChart(r, 5), HasSubstr("nothing measured"));
}

}  // namespace
}  // namespace rockdoc::lab

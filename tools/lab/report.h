// tools/lab/report.h: the lab's outputs: results.json, report.md with an
// inline SVG chart per figure, and the terminal table.
#ifndef ROCKDOC_TOOLS_LAB_REPORT_H_
#define ROCKDOC_TOOLS_LAB_REPORT_H_

#include <string>
#include <vector>

#include "rockdoc/document.h"
#include "provenance.h"
#include "rockdoc/status.h"
#include "runner.h"

namespace rockdoc::lab {

// One figure of a Measurement, as charted and tabulated.
struct Figure {
  const char* key;    // field name in results.json
  const char* title;  // chart title
  double (*get)(const Measurement&);
  const char* unit;   // the y axis title's unit ("ops/s", "bytes")
  // The 95% confidence interval of a timed figure (error bars), or nullptr.
  const Interval* (*interval)(const Measurement&) = nullptr;
};
const std::vector<Figure>& Figures();

// results.json: {"lab": "rockdoc-lab", "provenance": {...}, "scenarios":
// [{name, ..., results: [...]}]}.
Document ResultsToBson(const std::vector<ScenarioResult>& results,
                       const Provenance& provenance = {});
// report.md: provenance, the summary of the rules of thumb, then each
// scenario with its informative charts.
std::string MarkdownReport(const std::vector<ScenarioResult>& results,
                           const Provenance& provenance = {});
// report.html: the same, self-contained (inline SVG and CSS, no network),
// grid first: a table of the rules of thumb against sizes (one coloured cell
// per verdict, linking to its evidence; each claim links to the words it
// tests), then per scenario its GlanceChart at each size, with everything
// else folded (<details>): the claims' evidence, the question, variants,
// verdicts, table and every informative figure's SvgChart. A self-check
// script writes its findings into a hidden <pre id="check">: "self-check OK"
// or "self-check FAIL" and the problems, then a JSON line of what it
// measured ({charts, visibleCharts, height, unfoldedHeight, lastLine}).
std::string HtmlReport(const std::vector<ScenarioResult>& results,
                       const Provenance& provenance = {});
// The summary: one line per claim of a rule of thumb, its scenario and its
// verdict at each size, and the evidence at the largest size checked, which
// it names ("10,000: reads/s: ..."); the A/A noise floors.
std::string SummaryText(const std::vector<ScenarioResult>& results);
std::string ProvenanceText(const Provenance& p);
// Whether a chart of `f` carries information: some value is measured and
// not every measured value is the same.
bool Informative(const ScenarioResult& r, const Figure& f);
// An SVG line chart of one figure against size: log-scale x, one polyline
// per variant with error bars where the figure has intervals, a legend,
// the unit in the y axis title.
std::string SvgChart(const ScenarioResult& r, const Figure& f);
// The chart of one size that a reader takes in at a glance: per variant
// (SQLite rows included), its reads/s and writes/s as bars scaled to the
// fastest at that size, with their intervals as whiskers and their values;
// a row that could not be measured says why. <svg class="glance" ...>.
std::string GlanceChart(const ScenarioResult& r, int64_t size);
// The terminal table of one scenario, with its verdict lines (and the
// advisor's lines, when the run advised).
std::string TextTable(const ScenarioResult& r);

// The schema advisor's findings over each advised row's database, one line
// per finding ("embedded 3,000: [warning] large-array in lab.posts: array
// 'comments' holds up to ..."), or "no findings"; the findings of one rule
// on one collection share a line ("unused-index in lab.items, 10 findings:
// sku_1, ..."). Empty when no row was advised.
std::vector<std::string> AdviceLines(const ScenarioResult& r);
// What AdviceLines' lines come from, for a heading.
extern const char kAdviceHeading[];

// Writes results.json, report.md and report.html into `dir` (created when
// missing).
Status WriteOutputs(const std::vector<ScenarioResult>& results, const std::string& dir,
                    const Provenance& provenance = {});

}  // namespace rockdoc::lab

#endif  // ROCKDOC_TOOLS_LAB_REPORT_H_

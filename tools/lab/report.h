// tools/lab/report.h: the lab's outputs: results.json, report.md with an
// inline SVG chart per figure, and the terminal table.
#ifndef ROCKDOC_TOOLS_LAB_REPORT_H_
#define ROCKDOC_TOOLS_LAB_REPORT_H_

#include <string>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"
#include "runner.h"

namespace rockdoc::lab {

// One figure of a Measurement, as charted and tabulated.
struct Figure {
  const char* key;    // field name in results.json
  const char* title;  // chart title
  double (*get)(const Measurement&);
};
const std::vector<Figure>& Figures();

// results.json: {"lab": "rockdoc-lab", "scenarios": [{name, ..., results: [...]}]}.
Document ResultsToBson(const std::vector<ScenarioResult>& results);
// report.md.
std::string MarkdownReport(const std::vector<ScenarioResult>& results);
// An SVG line chart of one figure against size: log-scale x, one polyline
// per variant, a legend.
std::string SvgChart(const ScenarioResult& r, const Figure& f);
// The terminal table of one scenario, with its verdict lines.
std::string TextTable(const ScenarioResult& r);

// Writes results.json and report.md into `dir` (created when missing).
Status WriteOutputs(const std::vector<ScenarioResult>& results, const std::string& dir);

}  // namespace rockdoc::lab

#endif  // ROCKDOC_TOOLS_LAB_REPORT_H_

#include "report.h"

#include <absl/strings/str_format.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "rockdoc/json.h"

namespace rockdoc::lab {
namespace {

std::string Human(double v) {
  if (std::isnan(v)) return "-";
  const double a = std::fabs(v);
  if (a >= 1e9) return absl::StrFormat("%.1fG", v / 1e9);
  if (a >= 1e6) return absl::StrFormat("%.1fM", v / 1e6);
  if (a >= 1e4) return absl::StrFormat("%.1fk", v / 1e3);
  if (a >= 100 || v == std::floor(v)) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.1f", v);
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The cells of one row, shared by the terminal table and report.md: name,
// size, rates, mixes, figures, verdict.
std::vector<std::string> Header(const ScenarioResult& r) {
  std::vector<std::string> h = {"variant", r.size_label, "reads/s", "writes/s"};
  for (auto [reads, writes] : r.mixes) h.push_back(absl::StrFormat("ops/s %d:%d", reads, writes));
  for (const char* c : {"keys/read", "docs/read", "B read/op", "B written/op", "avg doc",
                        "max doc", "of 16MiB", "disk", "verdict"}) {
    h.push_back(c);
  }
  return h;
}

std::vector<std::string> Cells(const Measurement& m) {
  std::vector<std::string> c = {m.engine == "sqlite" ? m.variant + " (SQLite)" : m.variant,
                                std::to_string(m.size)};
  auto add = [&](double v) { c.push_back(m.failed() ? "-" : Human(v)); };
  add(m.read_ops_per_sec);
  add(m.write_ops_per_sec);
  for (double v : m.mixed_ops_per_sec) add(v);
  add(m.keys_examined);
  add(m.docs_examined);
  add(m.read_bytes_per_op);
  add(m.written_bytes_per_op);
  add(m.avg_doc_bytes);
  add(static_cast<double>(m.max_doc_bytes));
  c.push_back(m.failed() ? "-" : absl::StrFormat("%.3f%%", 100 * m.max_doc_share));
  add(static_cast<double>(m.storage_bytes));
  c.push_back(m.verdict);
  return c;
}

void AppendNumber(BsonBuilder& b, std::string_view key, double v) {
  if (std::isnan(v)) {
    b.AppendNull(key);
  } else {
    b.AppendDouble(key, v);
  }
}

// Colour-blind-safe palette (Okabe-Ito).
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#F0E442", "#000000"};

}  // namespace

const std::vector<Figure>& Figures() {
  static const std::vector<Figure> figures = {
      {"readOpsPerSec", "reads per second (median)",
       [](const Measurement& m) { return m.read_ops_per_sec; }},
      {"writeOpsPerSec", "writes per second (median)",
       [](const Measurement& m) { return m.write_ops_per_sec; }},
      {"keysExamined", "index keys examined per read",
       [](const Measurement& m) { return m.keys_examined; }},
      {"docsExamined", "documents examined per read",
       [](const Measurement& m) { return m.docs_examined; }},
      {"readBytesPerOp", "bytes read per read", [](const Measurement& m) { return m.read_bytes_per_op; }},
      {"writtenBytesPerOp", "bytes written per write",
       [](const Measurement& m) { return m.written_bytes_per_op; }},
      {"avgDocBytes", "average document size (bytes)",
       [](const Measurement& m) { return m.avg_doc_bytes; }},
      {"maxDocBytes", "largest document (bytes)",
       [](const Measurement& m) { return static_cast<double>(m.max_doc_bytes); }},
      {"storageBytes", "size on disk (live SST bytes)",
       [](const Measurement& m) { return static_cast<double>(m.storage_bytes); }},
  };
  return figures;
}

Document ResultsToBson(const std::vector<ScenarioResult>& results) {
  BsonBuilder b;
  b.AppendString("lab", "rockdoc-lab");
  b.OpenArray("scenarios");
  for (const ScenarioResult& r : results) {
    b.OpenDocument("");
    b.AppendString("name", r.name).AppendString("title", r.title);
    b.AppendString("description", r.description).AppendString("sizeLabel", r.size_label);
    b.AppendString("mode", r.mode);
    b.OpenArray("variants");
    for (const std::string& v : r.variants) b.AppendString("", v);
    b.Close().OpenArray("sizes");
    for (int64_t s : r.sizes) b.AppendInt64("", s);
    b.Close().OpenArray("mixes");
    for (auto [reads, writes] : r.mixes) {
      b.OpenDocument("").AppendInt64("reads", reads).AppendInt64("writes", writes).Close();
    }
    b.Close().AppendBool("consistent", r.consistent).OpenArray("inconsistencies");
    for (const std::string& s : r.inconsistencies) b.AppendString("", s);
    b.Close().OpenArray("verdict");
    for (const std::string& s : r.verdict) b.AppendString("", s);
    b.Close().OpenArray("results");
    for (const Measurement& m : r.rows) {
      b.OpenDocument("");
      b.AppendString("variant", m.variant).AppendInt64("size", m.size);
      b.AppendString("engine", m.engine);
      if (!m.mirrors.empty()) {
        b.AppendString("mirrors", m.mirrors);
        AppendNumber(b, "rockdocReadRatio", m.rockdoc_read_ratio);
        AppendNumber(b, "rockdocWriteRatio", m.rockdoc_write_ratio);
      }
      if (m.failed()) b.AppendString("error", m.error).AppendInt32("errorCode", m.error_code);
      for (const Figure& f : Figures()) AppendNumber(b, f.key, m.failed() ? NAN : f.get(m));
      b.OpenArray("mixedOpsPerSec");
      for (double v : m.mixed_ops_per_sec) AppendNumber(b, "", v);
      b.Close();
      AppendNumber(b, "walBytesPerOp", m.wal_bytes_per_op);
      b.AppendInt64("documents", m.documents);
      AppendNumber(b, "maxDocShareOf16MiB", m.max_doc_share);
      b.AppendString("verdict", m.verdict);
      b.Close();
    }
    b.Close().OpenArray("rulesOfThumb");
    for (const RuleCheck& c : r.rule_checks) {
      b.OpenDocument("").AppendString("rule", c.rule).AppendString("claim", c.variant);
      b.AppendString("wins", c.metric).AppendInt64("size", c.size);
      b.AppendString("winner", c.winner).AppendBool("agrees", c.agrees);
      b.AppendBool("tie", c.tie).Close();
    }
    b.Close().OpenArray("limits");
    for (const LimitResult& l : r.limits) {
      b.OpenDocument("");
      b.AppendString("title", l.title).AppendString("variant", l.variant);
      b.AppendInt64("stepsOk", l.steps_ok).AppendBool("failed", l.failed);
      b.AppendInt32("code", l.code).AppendString("message", l.message);
      b.AppendInt64("lastDocBytes", l.last_doc_bytes);
      b.AppendDouble("lastDocShareOf16MiB",
                     static_cast<double>(l.last_doc_bytes) / kMaxBsonObjectSize);
      b.AppendBool("unchangedAfterFailure", l.unchanged_after_failure);
      b.AppendBool("asExpected", l.as_expected);
      if (!l.measure.empty()) {
        StatusOr<Document> measure = FromJson(l.measure);
        if (measure.ok()) b.AppendDocument("measure", *measure);
      }
      b.Close();
    }
    b.Close().Close();
  }
  b.Close();
  return std::move(b).Build();
}

std::string SvgChart(const ScenarioResult& r, const Figure& f) {
  constexpr double kW = 560, kH = 300, kLeft = 70, kRight = 150, kTop = 30, kBottom = 45;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  double ymax = 0, ymin_positive = 0;
  bool all_positive = true;
  auto plotted = [&](const Measurement& m) { return !m.failed() && !std::isnan(f.get(m)); };
  for (const Measurement& m : r.rows) {
    if (!plotted(m)) continue;
    const double v = f.get(m);
    ymax = std::max(ymax, v);
    if (v <= 0) all_positive = false;
    if (v > 0 && (ymin_positive == 0 || v < ymin_positive)) ymin_positive = v;
  }
  if (ymax <= 0) ymax = 1;
  // Values spanning more than two decades (72 reads/s next to 69k) go on a
  // log scale, else the small ones lie flat on the axis.
  const bool log_y = all_positive && ymin_positive > 0 && ymax / ymin_positive > 100;
  double lo = 0, hi = ymax * 1.05;
  if (log_y) {
    lo = std::floor(std::log10(ymin_positive));
    hi = std::ceil(std::log10(ymax));
    if (hi <= lo) hi = lo + 1;
  }
  // Log x over the sizes (a size of 0 sits at the left edge).
  const double xmin = std::log10(std::max<double>(1, *std::min_element(r.sizes.begin(), r.sizes.end())));
  const double xmax = std::log10(std::max<double>(1, *std::max_element(r.sizes.begin(), r.sizes.end())));
  auto px = [&](int64_t size) {
    if (xmax <= xmin) return kLeft + pw / 2;
    return kLeft + (std::log10(std::max<double>(1, size)) - xmin) / (xmax - xmin) * pw;
  };
  auto py = [&](double v) {
    const double t = log_y ? (std::log10(v) - lo) / (hi - lo) : v / hi;
    return kTop + ph - t * ph;
  };

  std::string s = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
      kW, kH, kW, kH);
  s += absl::StrFormat("<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", kW, kH);
  s += absl::StrFormat("<text x=\"%.0f\" y=\"18\" font-size=\"13\">%s%s</text>\n", kLeft,
                       XmlEscape(f.title), log_y ? " (log scale)" : "");
  // Axes.
  s += absl::StrFormat(
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", kLeft,
      kTop + ph, kLeft + pw, kTop + ph);
  s += absl::StrFormat(
      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", kLeft, kTop,
      kLeft, kTop + ph);
  for (int64_t size : r.sizes) {
    s += absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
        px(size), kTop + ph, px(size), kTop + ph + 4, px(size), kTop + ph + 16, Human(size));
  }
  s += absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s (log scale)</text>\n",
                       kLeft + pw / 2, kH - 8, XmlEscape(r.size_label));
  std::vector<double> ticks;
  if (log_y) {
    for (double e = lo; e <= hi; ++e) ticks.push_back(std::pow(10.0, e));
  } else {
    for (int i = 0; i <= 4; ++i) ticks.push_back(ymax * i / 4);
  }
  for (double v : ticks) {
    s += absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
        kLeft, py(v), kLeft + pw, py(v), kLeft - 4, py(v) + 4, Human(v));
  }
  // One polyline (with point markers) per variant, and the legend.
  for (size_t vi = 0; vi < r.variants.size(); ++vi) {
    const char* colour = kColours[vi % std::size(kColours)];
    std::vector<std::string> points;
    std::string marks;
    for (const Measurement& m : r.rows) {
      if (m.variant != r.variants[vi] || !plotted(m)) continue;
      points.push_back(absl::StrFormat("%.1f,%.1f", px(m.size), py(f.get(m))));
      marks += absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", px(m.size),
                               py(f.get(m)), colour);
    }
    if (!points.empty()) {
      s += absl::StrFormat(
          "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>%s\n",
          colour, absl::StrJoin(points, " "), marks);
    }
    const double ly = kTop + 10 + 18 * vi;
    s += absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
        "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
        kLeft + pw + 12, ly, kLeft + pw + 32, ly, colour, kLeft + pw + 36, ly + 4,
        XmlEscape(r.variants[vi]));
  }
  s += "</svg>\n";
  return s;
}

std::string TextTable(const ScenarioResult& r) {
  std::vector<std::vector<std::string>> rows = {Header(r)};
  for (const Measurement& m : r.rows) rows.push_back(Cells(m));
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out = absl::StrFormat("== %s (%s) ==\n", r.title, r.mode);
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    for (size_t i = 0; i < rows[ri].size(); ++i) {
      // Names and the verdict left-aligned, numbers right-aligned.
      const bool left = i == 0 || i + 1 == rows[ri].size();
      out += left ? absl::StrFormat("%-*s", width[i], rows[ri][i])
                  : absl::StrFormat("%*s", width[i], rows[ri][i]);
      out += i + 1 == rows[ri].size() ? "\n" : "  ";
    }
  }
  for (const LimitResult& l : r.limits) {
    out += absl::StrFormat(
        "limit (%s): %s after %d steps: %s; document %d bytes (%.1f%% of 16 MiB) %s; %s\n",
        l.variant, l.failed ? "failed with code " + std::to_string(l.code) : "did not fail",
        l.steps_ok, l.measure, l.last_doc_bytes, 100.0 * l.last_doc_bytes / kMaxBsonObjectSize,
        l.unchanged_after_failure ? "and unchanged after the failed update" : "CHANGED",
        l.as_expected ? "as expected" : "NOT AS EXPECTED");
  }
  for (const std::string& v : r.verdict) out += "verdict: " + v + "\n";
  for (const std::string& v : r.inconsistencies) out += "INCONSISTENT: " + v + "\n";
  return out;
}

std::string MarkdownReport(const std::vector<ScenarioResult>& results) {
  std::string md = "# rockdoc-lab: schema patterns measured\n\n";
  md += "Each scenario runs its variants on the same data and access pattern at several sizes. "
        "Rates are medians over repetitions; keys and documents examined come from explain "
        "(executionStats) of the read's queries; bytes come from RocksDB's statistics; disk is "
        "the live SST size after a flush.\n";
  for (const ScenarioResult& r : results) {
    md += absl::StrFormat("\n## %s\n\n%s\n\n", r.title, r.description);
    md += absl::StrFormat("Mode: %s. Variants hold the same data and answer alike: **%s**.\n\n",
                          r.mode, r.consistent ? "yes" : "NO");
    for (const std::string& v : r.inconsistencies) md += "- inconsistent: " + v + "\n";
    for (const std::string& v : r.verdict) md += "- **Verdict:** " + v + "\n";
    if (!r.rule_checks.empty()) {
      const auto agreed = std::count_if(r.rule_checks.begin(), r.rule_checks.end(),
                                         [](const RuleCheck& c) { return c.agrees; });
      const auto tied = std::count_if(r.rule_checks.begin(), r.rule_checks.end(),
                                      [](const RuleCheck& c) { return c.tie; });
      md += absl::StrFormat(
          "- **Rules of thumb:** of %d checks, %d agree with the measurements, %d are ties "
          "(within 5%%), %d disagree.\n",
          r.rule_checks.size(), agreed, tied, r.rule_checks.size() - agreed - tied);
    }
    const std::vector<std::string> header = Header(r);
    md += "\n| " + absl::StrJoin(header, " | ") + " |\n|---|";
    for (size_t i = 1; i + 1 < header.size(); ++i) md += "---:|";
    md += "---|\n";
    for (const Measurement& m : r.rows) md += "| " + absl::StrJoin(Cells(m), " | ") + " |\n";
    for (const Measurement& m : r.rows) {
      if (m.failed() && m.error_code != 0) {
        md += absl::StrFormat("\n%s at %s %d: setup failed with code %d (%s).\n", m.variant,
                              r.size_label, m.size, m.error_code, m.error);
      } else if (m.failed()) {
        md += absl::StrFormat("\n%s at %s %d: %s.\n", m.variant, r.size_label, m.size, m.error);
      }
    }
    for (const LimitResult& l : r.limits) {
      md += absl::StrFormat(
          "\n**%s** (%s): %s after %d successful steps (%s); the document was %d bytes "
          "(%.1f%% of 16 MiB) and %s after the failed update.\n",
          l.title.empty() ? "Limit" : l.title, l.variant,
          l.failed ? "failed with code " + std::to_string(l.code) + " (" + l.message + ")"
                   : "did not fail",
          l.steps_ok, l.measure, l.last_doc_bytes, 100.0 * l.last_doc_bytes / kMaxBsonObjectSize,
          l.unchanged_after_failure ? "byte-identical" : "**changed**");
    }
    md += "\n";
    for (const Figure& f : Figures()) md += SvgChart(r, f) + "\n";
  }
  return md;
}

Status WriteOutputs(const std::vector<ScenarioResult>& results, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(ErrorCode::kNonExistentPath, "cannot create " + dir + ": " + ec.message());
  auto write = [&](const std::string& name, const std::string& text) -> Status {
    std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) return Status(ErrorCode::kInternalError, "cannot write " + dir + "/" + name);
    return Status::OK();
  };
  ROCKDOC_RETURN_IF_ERROR(write("results.json", ToJson(ResultsToBson(results)) + "\n"));
  return write("report.md", MarkdownReport(results));
}

}  // namespace rockdoc::lab

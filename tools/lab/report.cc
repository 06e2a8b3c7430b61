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
  // Round values (chart ticks) without a trailing ".0": "100k", not "100.0k".
  auto scaled = [&](double unit, const char* suffix) {
    const double x = v / unit;
    return x == std::floor(x) ? absl::StrFormat("%.0f%s", x, suffix)
                              : absl::StrFormat("%.1f%s", x, suffix);
  };
  if (a >= 1e9) return scaled(1e9, "G");
  if (a >= 1e6) return scaled(1e6, "M");
  if (a >= 1e4) return scaled(1e3, "k");
  if (a >= 100 || v == std::floor(v)) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.1f", v);
}

std::string XmlEscape(std::string_view s);

void AppendInterval(BsonBuilder& b, std::string_view key, const Interval& i) {
  b.OpenDocument(key);
  for (auto [k, v] : {std::pair<const char*, double>{"median", i.median}, {"lo", i.lo},
                      {"hi", i.hi}, {"coverage", i.coverage}}) {
    if (std::isnan(v)) {
      b.AppendNull(k);
    } else {
      b.AppendDouble(k, v);
    }
  }
  b.AppendInt32("n", i.n);
  b.Close();
}

void AppendSamples(BsonBuilder& b, std::string_view key, const std::vector<double>& v) {
  b.OpenArray(key);
  for (double x : v) b.AppendDouble("", x);
  b.Close();
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
  std::vector<std::string> h = {"variant", r.size_label, "reads/s [95% CI]",
                                "writes/s [95% CI]"};
  for (auto [reads, writes] : r.mixes) h.push_back(absl::StrFormat("ops/s %d:%d", reads, writes));
  for (const char* c : {"queries/read", "keys/read", "docs/read", "B read/read", "B written/write",
                        "avg doc (B)", "max doc (B)", "of 16MiB", "disk compacted (B)",
                        "disk before compaction (B)", "verdict"}) {
    h.push_back(c);
  }
  return h;
}

std::vector<std::string> Cells(const Measurement& m) {
  std::vector<std::string> c = {m.engine == "sqlite" ? m.variant + " (SQLite)" : m.variant,
                                std::to_string(m.size)};
  auto add = [&](double v) { c.push_back(m.failed() ? "-" : Human(v)); };
  c.push_back(m.failed() ? "-" : FormatInterval(m.read_interval));
  c.push_back(m.failed() ? "-" : FormatInterval(m.write_interval));
  for (double v : m.mixed_ops_per_sec) add(v);
  add(m.queries_per_read);
  add(m.keys_examined);
  add(m.docs_examined);
  add(m.read_bytes_per_op);
  add(m.written_bytes_per_op);
  add(m.avg_doc_bytes);
  add(static_cast<double>(m.max_doc_bytes));
  c.push_back(m.failed() ? "-" : absl::StrFormat("%.3f%%", 100 * m.max_doc_share));
  add(static_cast<double>(m.storage_bytes));
  add(static_cast<double>(m.storage_bytes_before_compaction));
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
      {"readOpsPerSec", "reads per second (median, 95% CI)",
       [](const Measurement& m) { return m.read_ops_per_sec; }, "reads/s",
       [](const Measurement& m) { return &m.read_interval; }},
      {"writeOpsPerSec", "writes per second (median, 95% CI)",
       [](const Measurement& m) { return m.write_ops_per_sec; }, "writes/s",
       [](const Measurement& m) { return &m.write_interval; }},
      {"queriesPerRead", "queries per read",
       [](const Measurement& m) { return m.queries_per_read; }, "queries"},
      {"keysExamined", "index keys examined per read",
       [](const Measurement& m) { return m.keys_examined; }, "keys"},
      {"docsExamined", "documents examined per read",
       [](const Measurement& m) { return m.docs_examined; }, "documents"},
      {"readBytesPerOp", "bytes read per read",
       [](const Measurement& m) { return m.read_bytes_per_op; }, "bytes"},
      {"writtenBytesPerOp", "bytes written per write",
       [](const Measurement& m) { return m.written_bytes_per_op; }, "bytes"},
      {"avgDocBytes", "average document size",
       [](const Measurement& m) { return m.avg_doc_bytes; }, "bytes"},
      {"maxDocBytes", "largest document",
       [](const Measurement& m) { return static_cast<double>(m.max_doc_bytes); }, "bytes"},
      {"storageBytes", "disk after a full compaction (the live data)",
       [](const Measurement& m) { return static_cast<double>(m.storage_bytes); }, "bytes"},
      {"storageBytesBeforeCompaction", "disk before compaction (after a flush)",
       [](const Measurement& m) { return static_cast<double>(m.storage_bytes_before_compaction); },
       "bytes"},
  };
  return figures;
}

bool Informative(const ScenarioResult& r, const Figure& f) {
  bool any = false;
  double first = 0;
  for (const Measurement& m : r.rows) {
    if (m.failed() || std::isnan(f.get(m))) continue;
    const double v = f.get(m);
    if (!any) {
      any = true;
      first = v;
    } else if (std::fabs(v - first) > 1e-9 * std::max(std::fabs(first), 1.0)) {
      return true;
    }
  }
  return false;
}

std::string ProvenanceText(const Provenance& p) {
  return absl::StrFormat(
      "run %s on %s (%d cores, %.1f GiB); load average %.2f %.2f %.2f before, %.2f %.2f %.2f "
      "after; rockdoc %s, RocksDB %s, SQLite %s; mode %s, %s; options: %s",
      p.date, p.cpu_model, p.cores, p.memory_bytes / 1073741824.0, p.load_before[0],
      p.load_before[1], p.load_before[2], p.load_after[0], p.load_after[1], p.load_after[2],
      p.rockdoc_commit, p.rocksdb_version, p.sqlite_version, p.mode,
      p.repetitions > 0 ? std::to_string(p.repetitions) + " repetitions"
                        : std::string("the scenarios' own repetitions (5 or more)"),
      p.command_line.empty() ? "(none)" : p.command_line);
}

namespace {

struct SummaryRow {
  const ScenarioResult* r;
  std::string rule;
  std::string claim;                              // "embedded wins reads"
  std::vector<std::pair<int64_t, std::string>> at;  // size -> agrees / tie / DISAGREES
  std::string evidence;                           // at the largest size
};

std::vector<SummaryRow> SummaryRows(const std::vector<ScenarioResult>& results) {
  std::vector<SummaryRow> rows;
  for (const ScenarioResult& r : results) {
    for (const RuleOfThumb& rule : r.rules) {
      for (const Claim& c : rule.claims) {
        SummaryRow row;
        row.r = &r;
        row.rule = rule.text;
        row.claim = c.variant;
        for (const std::string& a : c.alike) row.claim += " or " + a;
        row.claim += " wins " + c.metric + " (" + SourceText(c) + ")";
        for (const RuleCheck& k : r.rule_checks) {
          if (k.rule != rule.text || k.variant != c.variant || k.metric != c.metric) continue;
          row.at.emplace_back(k.size, k.agrees      ? "agrees"
                                      : k.undecided ? "not decided"
                                      : k.tie       ? "tie"
                                                    : "DISAGREES");
          row.evidence = k.evidence + (k.caveat.empty() ? "" : "; " + k.caveat);
        }
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

}  // namespace

std::string SummaryText(const std::vector<ScenarioResult>& results) {
  std::string out = "Summary of the rules of thumb (verdict per size; evidence at the largest):\n";
  for (const SummaryRow& row : SummaryRows(results)) {
    std::vector<std::string> at;
    for (const auto& [size, v] : row.at) at.push_back(absl::StrFormat("%d: %s", size, v));
    out += absl::StrFormat("  [%s] \"%s\" (%s): %s -- %s\n", row.r->name, row.rule, row.claim,
                           at.empty() ? "not checked" : absl::StrJoin(at, ", "), row.evidence);
  }
  for (const ScenarioResult& r : results) {
    for (const NoiseCheck& n : r.noise) {
      out += absl::StrFormat("  [%s] A/A noise floor at %s %d (%s twice): reads %.1f%%%s, writes "
                             "%.1f%%%s\n",
                             r.name, r.size_label, n.size, n.variant, 100 * n.read_floor,
                             n.reads_tie ? "" : " (NOT a tie)", 100 * n.write_floor,
                             n.writes_tie ? "" : " (NOT a tie)");
    }
  }
  return out;
}

Document ResultsToBson(const std::vector<ScenarioResult>& results,
                       const Provenance& p) {
  BsonBuilder b;
  b.AppendString("lab", "rockdoc-lab");
  b.OpenDocument("provenance");
  b.AppendString("date", p.date).AppendString("cpuModel", p.cpu_model);
  b.AppendInt32("cores", p.cores).AppendInt64("memoryBytes", static_cast<int64_t>(p.memory_bytes));
  b.OpenArray("loadAverageBefore");
  for (double v : p.load_before) b.AppendDouble("", v);
  b.Close().OpenArray("loadAverageAfter");
  for (double v : p.load_after) b.AppendDouble("", v);
  b.Close();
  b.AppendString("rockdocCommit", p.rockdoc_commit);
  b.AppendString("rocksdbVersion", p.rocksdb_version);
  b.AppendString("sqliteVersion", p.sqlite_version);
  b.AppendString("mode", p.mode).AppendInt32("repetitions", p.repetitions);
  b.AppendString("options", p.command_line);
  b.AppendDouble("minEffect", kMinEffect).AppendDouble("costTolerance", kCostTolerance);
  b.AppendDouble("tiedTimeCostTolerance", kTiedTimeCostTolerance);
  b.Close();
  b.OpenArray("scenarios");
  for (const ScenarioResult& r : results) {
    b.OpenDocument("");
    b.AppendString("name", r.name).AppendString("title", r.title);
    b.AppendString("description", r.description).AppendString("sizeLabel", r.size_label);
    b.AppendString("mode", r.mode);
    b.OpenDocument("params");
    for (const auto& [name, text] : r.params) b.AppendString(name, text);
    b.Close();
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
      AppendNumber(b, "readBytesPerWrite", m.read_bytes_per_write);
      AppendSamples(b, "readSamples", m.read_samples);
      AppendSamples(b, "writeSamples", m.write_samples);
      AppendInterval(b, "readInterval", m.read_interval);
      AppendInterval(b, "writeInterval", m.write_interval);
      b.AppendInt64("documents", m.documents);
      AppendNumber(b, "maxDocShareOf16MiB", m.max_doc_share);
      b.AppendString("verdict", m.verdict);
      if (!m.kept_dir.empty()) b.AppendString("keptDir", m.kept_dir);
      // The advisor's report, as rockdoc-advise --json prints it.
      if (m.advice.has_value()) b.AppendDocument("advice", advisor::ToDocument(*m.advice));
      b.Close();
    }
    b.Close().OpenArray("rulesOfThumb");
    for (const RuleCheck& c : r.rule_checks) {
      b.OpenDocument("").AppendString("rule", c.rule).AppendString("claim", c.variant);
      b.AppendString("wins", c.metric).AppendInt64("size", c.size);
      b.AppendString("winner", c.winner).AppendBool("agrees", c.agrees);
      b.AppendBool("tie", c.tie);
      if (c.undecided) b.AppendBool("undecided", true);
      b.AppendString("verdict", c.agrees ? "agrees" : c.tie ? "tie" : "disagrees");
      b.AppendString("decidedBy", c.decided_by).AppendString("evidence", c.evidence);
      if (!c.caveat.empty()) b.AppendString("caveat", c.caveat);
      if (c.source.empty()) {
        b.AppendString("source", "lab");
      } else {
        b.OpenDocument("source").AppendString("seed", c.source).AppendString("quote", c.quote);
        b.Close();
      }
      b.Close();
    }
    b.Close().OpenArray("noiseCheck");
    for (const NoiseCheck& n : r.noise) {
      b.OpenDocument("").AppendString("variant", n.variant).AppendInt64("size", n.size);
      b.AppendDouble("readFloor", n.read_floor).AppendDouble("writeFloor", n.write_floor);
      b.AppendBool("readsTie", n.reads_tie).AppendBool("writesTie", n.writes_tie);
      AppendSamples(b, "readSamplesAgain", n.read_samples_again);
      AppendSamples(b, "writeSamplesAgain", n.write_samples_again);
      b.Close();
    }
    b.Close().OpenArray("limits");
    for (const LimitResult& l : r.limits) {
      b.OpenDocument("");
      b.AppendString("title", l.title).AppendString("variant", l.variant);
      if (!l.label.empty()) b.AppendString("label", l.label);
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
  if (r.sizes.empty()) return "";  // nothing to plot (and no x range)
  constexpr double kW = 600, kH = 320, kLeft = 78, kRight = 160, kTop = 30, kBottom = 48;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  double ymax = 0, ymin_positive = 0;
  bool all_positive = true;
  auto plotted = [&](const Measurement& m) { return !m.failed() && !std::isnan(f.get(m)); };
  // The range covers the error bars too.
  auto extent = [&](const Measurement& m, bool high) {
    const Interval* i = f.interval != nullptr ? f.interval(m) : nullptr;
    const double v = f.get(m);
    if (i == nullptr || i->n == 0 || std::isnan(i->lo)) return v;
    return high ? std::max(v, i->hi) : std::min(v, i->lo);
  };
  for (const Measurement& m : r.rows) {
    if (!plotted(m)) continue;
    const double hi = extent(m, true), lo = extent(m, false);
    ymax = std::max(ymax, hi);
    if (lo <= 0) all_positive = false;
    if (lo > 0 && (ymin_positive == 0 || lo < ymin_positive)) ymin_positive = lo;
  }
  if (ymax <= 0) ymax = 1;
  // Values spanning more than two decades (72 reads/s next to 69k) go on a
  // log scale, else the small ones lie flat on the axis.
  const bool log_y = all_positive && ymin_positive > 0 && ymax / ymin_positive > 100;
  double lo = 0, hi = ymax * 1.05;
  std::vector<double> ticks;
  if (log_y) {
    lo = std::floor(std::log10(ymin_positive));
    hi = std::ceil(std::log10(ymax));
    if (hi <= lo) hi = lo + 1;
    for (double e = lo; e <= hi; ++e) ticks.push_back(std::pow(10.0, e));
  } else {
    // Round ticks: a step of 1, 2 or 5 times a power of ten, 4 to 8 of them.
    const double raw = ymax / 5;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double k : {1.0, 2.0, 5.0, 10.0}) {
      step = k * mag;
      if (step >= raw) break;
    }
    hi = std::ceil(ymax * 1.02 / step) * step;
    for (double v = 0; v <= hi + step / 2; v += step) ticks.push_back(v);
  }
  // Log x over the sizes (a size of 0 sits at the left edge).
  const double xmin =
      std::log10(std::max<double>(1, *std::min_element(r.sizes.begin(), r.sizes.end())));
  const double xmax =
      std::log10(std::max<double>(1, *std::max_element(r.sizes.begin(), r.sizes.end())));
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
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n",
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
                       kLeft + pw / 2, kH - 10, XmlEscape(r.size_label));
  // The y axis title: the unit.
  s += absl::StrFormat(
      "<text transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
      kTop + ph / 2, XmlEscape(f.unit));
  for (double v : ticks) {
    s += absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
        kLeft, py(v), kLeft + pw, py(v), kLeft - 4, py(v) + 4, Human(v));
  }
  // One polyline (with point markers and error bars) per variant, and the
  // legend. Variants are nudged sideways a little so that bars do not hide
  // each other.
  for (size_t vi = 0; vi < r.variants.size(); ++vi) {
    const char* colour = kColours[vi % std::size(kColours)];
    const double nudge = (static_cast<double>(vi) - (r.variants.size() - 1) / 2.0) * 3;
    std::vector<std::string> points;
    std::string marks;
    for (const Measurement& m : r.rows) {
      if (m.variant != r.variants[vi] || !plotted(m)) continue;
      const double x = px(m.size) + nudge, y = py(f.get(m));
      points.push_back(absl::StrFormat("%.1f,%.1f", x, y));
      marks += absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", x, y,
                               colour);
      const Interval* i = f.interval != nullptr ? f.interval(m) : nullptr;
      if (i != nullptr && i->n > 1 && !std::isnan(i->lo) && (!log_y || i->lo > 0)) {
        marks += absl::StrFormat(
            "<path class=\"errorbar\" d=\"M%.1f %.1fV%.1fM%.1f %.1fh6M%.1f %.1fh6\" "
            "stroke=\"%s\" fill=\"none\"/>",
            x, py(i->lo), py(i->hi), x - 3, py(i->lo), x - 3, py(i->hi), colour);
      }
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
        l.label.empty() ? l.variant : l.label, l.failed ? "failed with code " + std::to_string(l.code) : "did not fail",
        l.steps_ok, l.measure, l.last_doc_bytes, 100.0 * l.last_doc_bytes / kMaxBsonObjectSize,
        l.unchanged_after_failure ? "and unchanged after the failed update" : "CHANGED",
        l.as_expected ? "as expected" : "NOT AS EXPECTED");
  }
  for (const std::string& v : r.verdict) out += "verdict: " + v + "\n";
  const std::vector<std::string> advice = AdviceLines(r);
  if (!advice.empty()) out += std::string(kAdviceHeading) + ":\n";
  for (const std::string& line : advice) out += "  " + line + "\n";
  for (const std::string& v : r.inconsistencies) out += "INCONSISTENT: " + v + "\n";
  return out;
}

const char kAdviceHeading[] =
    "schema advisor (rockdoc-advise --unusedIndexDays 0) over each rockdoc variant's database "
    "after the run";

std::vector<std::string> AdviceLines(const ScenarioResult& r) {
  std::vector<std::string> lines;
  for (const Measurement& m : r.rows) {
    if (!m.advice.has_value()) continue;
    const std::string who = absl::StrFormat("%s %s", m.variant, Thousands(m.size));
    if (m.advice->findings.empty()) {
      lines.push_back(absl::StrFormat("%s: no findings (%d documents examined)", who,
                                      m.advice->documents_examined));
      continue;
    }
    // Findings of one rule on one collection, in the advisor's order.
    std::vector<std::vector<const advisor::Finding*>> groups;
    for (const advisor::Finding& f : m.advice->findings) {
      auto same = [&](const std::vector<const advisor::Finding*>& g) {
        return g.front()->rule == f.rule && g.front()->ns == f.ns;
      };
      auto g = std::find_if(groups.begin(), groups.end(), same);
      if (g == groups.end()) {
        groups.push_back({&f});
      } else {
        g->push_back(&f);
      }
    }
    for (const auto& g : groups) {
      const advisor::Finding& f = *g.front();
      if (g.size() == 1) {
        lines.push_back(absl::StrFormat("%s: [%s] %s in %s: %s", who,
                                        advisor::SeverityName(f.severity), f.rule, f.ns,
                                        f.summary));
        continue;
      }
      // Each names its index (unused-index, redundant-index).
      std::vector<std::string> names;
      for (const advisor::Finding* x : g) {
        const Element index = x->evidence.Get("index");
        names.push_back(index.IsString() ? std::string(index.String()) : x->summary);
      }
      lines.push_back(absl::StrFormat("%s: [%s] %s in %s, %d findings: %s", who,
                                      advisor::SeverityName(f.severity), f.rule, f.ns, g.size(),
                                      absl::StrJoin(names, ", ")));
    }
  }
  return lines;
}

namespace {

constexpr char kMethod[] =
    "Each scenario runs its variants on the same data and access pattern at several sizes. "
    "Each timed figure is the median of at least 5 repetitions (the quick and full modes), "
    "the variants' repetitions interleaved (each round runs every variant once, in an order "
    "that rotates and reverses from round to round) so that drift on a shared machine hits "
    "all alike, with a 95% confidence interval of the median from order statistics "
    "(min..max at 5 repetitions: 93.75%). Two rates differ only when their intervals do not "
    "overlap and their medians differ by at least 5% or the A/A noise floor (the first "
    "variant run twice, interleaved with the others), whichever is larger; otherwise it is a "
    "tie (within noise). Rules of thumb are judged first on the measured rate (a mix on its "
    "own rate); where the rates tie, deterministic costs decide (keys and documents examined "
    "and bytes read per read; bytes read, written and logged per write; disk after a full "
    "compaction; within 10% is equal against tied rates, 2% for disk), and where a cost "
    "points the other way than the rates the verdict says so. Fewer than 5 repetitions "
    "decide nothing. Each verdict names the evidence that decided it. Keys and documents examined "
    "come from explain (executionStats), bytes from RocksDB's statistics; disk is the live "
    "SST size after a full compaction (what the data costs) and before it (what the writes' "
    "overwritten versions leave behind).";

std::string LimitLabel(const LimitResult& l) { return l.label.empty() ? l.variant : l.label; }

std::string HtmlEscape(std::string_view s) { return XmlEscape(s); }

std::string Anchor(const ScenarioResult& r) { return "s-" + r.name; }

}  // namespace

std::string MarkdownReport(const std::vector<ScenarioResult>& results, const Provenance& p) {
  std::string md = "# rockdoc-lab: schema patterns measured\n\n";
  md += std::string(kMethod) + "\n\n";
  md += "Provenance: " + ProvenanceText(p) + "\n\n## Summary: the rules of thumb\n\n";
  md += "| rule of thumb | claim | scenario | verdict per size | evidence (largest size) |\n"
        "|---|---|---|---|---|\n";
  for (const SummaryRow& row : SummaryRows(results)) {
    std::vector<std::string> at;
    for (const auto& [size, v] : row.at) at.push_back(absl::StrFormat("%d: %s", size, v));
    md += absl::StrFormat("| %s | %s | [%s](#%s) | %s | %s |\n", row.rule, row.claim,
                          row.r->name, row.r->name,
                          at.empty() ? "not checked" : absl::StrJoin(at, ", "), row.evidence);
  }
  for (const ScenarioResult& r : results) {
    md += absl::StrFormat("\n## %s\n\n%s\n\n", r.title, ResolveProse(r, r.description));
    md += absl::StrFormat("Mode: %s. Variants hold the same data and answer alike: **%s**.\n\n",
                          r.mode, r.consistent ? "yes" : "NO");
    for (size_t i = 0; i < r.variants.size(); ++i) {
      md += absl::StrFormat("- *%s*: %s\n", r.variants[i],
                            i < r.variant_descriptions.size()
                                ? ResolveProse(r, r.variant_descriptions[i])
                                : std::string());
    }
    md += "\n";
    for (const std::string& v : r.inconsistencies) md += "- inconsistent: " + v + "\n";
    for (const std::string& v : r.verdict) md += "- **Verdict:** " + v + "\n";
    if (!r.rule_checks.empty()) {
      const auto agreed = std::count_if(r.rule_checks.begin(), r.rule_checks.end(),
                                         [](const RuleCheck& c) { return c.agrees; });
      const auto tied = std::count_if(r.rule_checks.begin(), r.rule_checks.end(),
                                      [](const RuleCheck& c) { return c.tie; });
      md += absl::StrFormat(
          "- **Rules of thumb:** of %d checks, %d agree with the measurements, %d are ties "
          "(within noise), %d disagree.\n",
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
          l.title.empty() ? "Limit" : ResolveProse(r, l.title), LimitLabel(l),
          l.failed ? "failed with code " + std::to_string(l.code) + " (" + l.message + ")"
                   : "did not fail",
          l.steps_ok, l.measure, l.last_doc_bytes, 100.0 * l.last_doc_bytes / kMaxBsonObjectSize,
          l.unchanged_after_failure ? "byte-identical" : "**changed**");
    }
    const std::vector<std::string> advice = AdviceLines(r);
    if (!advice.empty()) md += "\n**" + std::string(kAdviceHeading) + ":**\n\n";
    for (const std::string& line : advice) md += "- " + line + "\n";
    md += "\n";
    for (const Figure& f : Figures()) {
      if (Informative(r, f)) md += SvgChart(r, f) + "\n";
    }
  }
  return md;
}

std::string HtmlReport(const std::vector<ScenarioResult>& results, const Provenance& p) {
  std::string h =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>rockdoc-lab: schema patterns measured</title>\n"
      // Errors from here on are collected for the self-check at the end.
      "<script>window.labErrors=[];window.addEventListener('error',function(e){"
      "window.labErrors.push(String(e.message||e.type));},true);</script>\n"
      "<style>body{font-family:sans-serif;max-width:1300px;margin:1em auto;padding:0 1em;"
      "line-height:1.4;color:#222}table{border-collapse:collapse;margin:.5em 0;font-size:13px}"
      "th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top}th{background:#f3f3f3}"
      "td.num{text-align:right;white-space:nowrap}.agrees{background:#e3f4e3}"
      ".tie{background:#f4f4f4}.disagrees{background:#f9dede}.charts{display:flex;"
      "flex-wrap:wrap;gap:8px}.prov{font-size:13px;color:#444}pre#check{font-size:11px;"
      "color:#666}section{border-top:2px solid #ddd;margin-top:2em}"
      ".wide{overflow-x:auto;max-width:100%}</style>\n"
      "</head><body>\n<h1>rockdoc-lab: schema patterns measured</h1>\n";
  h += "<p class=\"prov\">" + HtmlEscape(ProvenanceText(p)) + "</p>\n";
  h += "<h2 id=\"summary\">Summary: the rules of thumb</h2>\n<table><tr><th>rule of thumb</th>"
       "<th>claim</th><th>scenario</th><th>verdict per size</th><th>evidence (largest "
       "size)</th></tr>\n";
  for (const SummaryRow& row : SummaryRows(results)) {
    std::string cells;
    for (const auto& [size, v] : row.at) {
      const std::string cls = v == "agrees"                         ? "agrees"
                              : v == "tie" || v == "not decided" ? "tie"
                                                                 : "disagrees";
      cells += absl::StrFormat("<span class=\"%s\">%s: %s</span><br>", cls,
                               HtmlEscape(Thousands(size)), v);
    }
    if (!cells.empty()) {
      cells = "<small>" + HtmlEscape(row.r->size_label) + "</small><br>" + cells;
    }
    h += absl::StrFormat(
        "<tr><td>%s</td><td>%s</td><td><a href=\"#%s\">%s</a></td><td>%s</td><td>%s</td></tr>\n",
        HtmlEscape(row.rule), HtmlEscape(row.claim), Anchor(*row.r), HtmlEscape(row.r->name),
        cells.empty() ? "not checked" : cells, HtmlEscape(row.evidence));
  }
  h += "</table>\n<h2>Contents</h2>\n<ol>\n";
  for (const ScenarioResult& r : results) {
    h += absl::StrFormat("<li><a href=\"#%s\">%s</a> (%s)</li>\n", Anchor(r),
                         HtmlEscape(r.title.empty() ? r.name : r.title), HtmlEscape(r.name));
  }
  h += "</ol>\n<h2>Method</h2>\n<p>" + HtmlEscape(kMethod) + "</p>\n";
  for (const ScenarioResult& r : results) {
    h += absl::StrFormat("<section id=\"%s\"><h2>%s</h2>\n<p><b>Question.</b> %s</p>\n",
                         Anchor(r), HtmlEscape(r.title.empty() ? r.name : r.title),
                         HtmlEscape(ResolveProse(r, r.description)));
    h += absl::StrFormat("<p>Mode %s; sizes (%s): %s. Variants hold the same data and answer "
                         "alike: <b>%s</b>.</p>\n<h3>Variants</h3>\n<ul>\n",
                         HtmlEscape(r.mode), HtmlEscape(r.size_label),
                         HtmlEscape(absl::StrJoin(r.sizes, ", ")),
                         r.consistent ? "yes" : "NO");
    for (size_t i = 0; i < r.variants.size(); ++i) {
      h += absl::StrFormat("<li><b>%s</b>: %s</li>\n", HtmlEscape(r.variants[i]),
                           HtmlEscape(i < r.variant_descriptions.size()
                                          ? ResolveProse(r, r.variant_descriptions[i])
                                          : std::string()));
    }
    h += "</ul>\n<h3>Verdicts</h3>\n<ul>\n";
    for (const std::string& v : r.inconsistencies) h += "<li>inconsistent: " + HtmlEscape(v) + "</li>\n";
    for (const std::string& v : r.verdict) h += "<li>" + HtmlEscape(v) + "</li>\n";
    h += "</ul>\n";
    for (const LimitResult& l : r.limits) {
      h += absl::StrFormat(
          "<p><b>%s</b> (%s): %s after %d successful steps (%s); the document was %d bytes "
          "(%.1f%% of 16 MiB) and %s after the failed update.</p>\n",
          HtmlEscape(l.title.empty() ? "Limit" : ResolveProse(r, l.title)),
          HtmlEscape(LimitLabel(l)),
          HtmlEscape(l.failed ? "failed with code " + std::to_string(l.code) + " (" + l.message + ")"
                              : "did not fail"),
          l.steps_ok, HtmlEscape(l.measure), l.last_doc_bytes,
          100.0 * l.last_doc_bytes / kMaxBsonObjectSize,
          l.unchanged_after_failure ? "byte-identical" : "<b>changed</b>");
    }
    h += "<h3>Measurements</h3>\n<div class=\"wide\"><table><tr>";
    for (const std::string& c : Header(r)) h += "<th>" + HtmlEscape(c) + "</th>";
    h += "</tr>\n";
    for (const Measurement& m : r.rows) {
      h += "<tr>";
      const std::vector<std::string> cells = Cells(m);
      for (size_t i = 0; i < cells.size(); ++i) {
        const bool text = i == 0 || i + 1 == cells.size();
        h += absl::StrFormat("<td%s>%s</td>", text ? "" : " class=\"num\"", HtmlEscape(cells[i]));
      }
      h += "</tr>\n";
    }
    h += "</table></div>\n";
    const std::vector<std::string> advice = AdviceLines(r);
    if (!advice.empty()) {
      h += "<h3>Schema advisor</h3>\n<p>" + HtmlEscape(kAdviceHeading) + ":</p>\n<ul>\n";
      for (const std::string& line : advice) h += "<li>" + HtmlEscape(line) + "</li>\n";
      h += "</ul>\n";
    }
    h += "<div class=\"charts\">\n";
    for (const Figure& f : Figures()) {
      if (Informative(r, f)) h += SvgChart(r, f);
    }
    h += "</div></section>\n";
  }
  // The self-check: what a person would look for, written into the page so
  // that a headless browser's --dump-dom reports it (tests/lab_report_html_test.sh).
  h += "<pre id=\"check\">self-check did not run</pre>\n<script>\n(function(){"
       "var problems=[];var svgs=document.querySelectorAll('svg');"
       "for(var i=0;svgs.length>i;i++){var b=svgs[i].getBoundingClientRect();"
       "if(!(b.width>0&&b.height>0))problems.push('chart '+i+' has no size');}"
       "var text=document.body.innerText;var d='$'+'$';"
       "if(text.indexOf(d)>=0)problems.push('template text '+d+' in the page');"
       "if(/\\{\\{\\s*[\\w.]+\\s*\\}\\}/.test(text))"
       "problems.push('a double-brace placeholder in the page');"
       "if(performance.getEntriesByType('resource').length>0)"
       "problems.push('the page loaded other resources');"
       "if(window.labErrors.length>0)problems.push('errors: '+window.labErrors.join('; '));"
       "document.getElementById('check').textContent=problems.length?"
       "'self-check FAIL\\n'+problems.join('\\n'):'self-check OK: '+svgs.length+' charts';"
       "})();\n</script>\n</body></html>\n";
  return h;
}

Status WriteOutputs(const std::vector<ScenarioResult>& results, const std::string& dir,
                    const Provenance& provenance) {
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
  ROCKDOC_RETURN_IF_ERROR(
      write("results.json", ToJson(ResultsToBson(results, provenance)) + "\n"));
  ROCKDOC_RETURN_IF_ERROR(write("report.md", MarkdownReport(results, provenance)));
  return write("report.html", HtmlReport(results, provenance));
}

}  // namespace rockdoc::lab

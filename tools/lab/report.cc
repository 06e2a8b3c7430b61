#include "report.h"

#include <absl/strings/str_format.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

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

// One claim of a rule of thumb and its checks, for the summaries.
struct SummaryRow {
  const ScenarioResult* r;
  const RuleOfThumb* rule;
  const Claim* claim;
  size_t index;                          // of the claim among its scenario's claims
  std::string claim_text;                // "embedded or lookup wins reads"
  std::vector<const RuleCheck*> checks;  // in size order; a size it was not checked at is missing
};

std::vector<SummaryRow> SummaryRows(const ScenarioResult& r) {
  std::vector<SummaryRow> rows;
  for (const RuleOfThumb& rule : r.rules) {
    for (size_t ci = 0; ci < rule.claims.size(); ++ci) {
      const Claim& c = rule.claims[ci];
      SummaryRow row{&r, &rule, &c, rows.size(), c.variant, {}};
      for (const std::string& a : c.alike) row.claim_text += " or " + a;
      row.claim_text += " wins " + c.metric;
      for (const RuleCheck& k : r.rule_checks) {
        if (k.rule == rule.text && k.claim == ci) {
          row.checks.push_back(&k);
        }
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<SummaryRow> SummaryRows(const std::vector<ScenarioResult>& results) {
  std::vector<SummaryRow> rows;
  for (const ScenarioResult& r : results) {
    for (SummaryRow& row : SummaryRows(r)) rows.push_back(std::move(row));
  }
  return rows;
}

// The verdict of one check in one word (the summaries' cells).
std::string VerdictWord(const RuleCheck& k) {
  return k.agrees ? "agrees" : k.undecided ? "not decided" : k.tie ? "tie" : "DISAGREES";
}

std::string EvidenceOf(const RuleCheck& k) {
  return k.evidence + (k.caveat.empty() ? "" : "; " + k.caveat);
}

// "10: agrees, 100: tie", or "not checked".
std::string VerdictsPerSize(const SummaryRow& row) {
  std::vector<std::string> at;
  for (const RuleCheck* k : row.checks) {
    at.push_back(absl::StrFormat("%s: %s", Thousands(k->size), VerdictWord(*k)));
  }
  return at.empty() ? "not checked" : absl::StrJoin(at, ", ");
}

// The evidence at the largest size checked, which it names ("10,000: ...").
std::string LastEvidence(const SummaryRow& row) {
  if (row.checks.empty()) return "";
  return Thousands(row.checks.back()->size) + ": " + EvidenceOf(*row.checks.back());
}

}  // namespace

std::string SummaryText(const std::vector<ScenarioResult>& results) {
  std::string out = "Summary of the rules of thumb (verdict per size; evidence at the largest):\n";
  for (const SummaryRow& row : SummaryRows(results)) {
    out += absl::StrFormat("  [%s] \"%s\" (%s (%s)): %s -- %s\n", row.r->name, row.rule->text,
                           row.claim_text, SourceText(*row.claim), VerdictsPerSize(row),
                           LastEvidence(row));
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
      "<svg class=\"figure\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\" "
      "role=\"img\">\n",
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

}  // namespace

std::string MarkdownReport(const std::vector<ScenarioResult>& results, const Provenance& p) {
  std::string md = "# rockdoc-lab: schema patterns measured\n\n";
  md += std::string(kMethod) + "\n\n";
  md += "Provenance: " + ProvenanceText(p) + "\n\n## Summary: the rules of thumb\n\n";
  md += "| rule of thumb | claim | scenario | verdict per size | evidence (largest size) |\n"
        "|---|---|---|---|---|\n";
  for (const SummaryRow& row : SummaryRows(results)) {
    md += absl::StrFormat("| %s | %s (%s) | [%s](#%s) | %s | %s |\n", row.rule->text,
                          row.claim_text, SourceText(*row.claim), row.r->name, row.r->name,
                          VerdictsPerSize(row), LastEvidence(row));
  }
  for (const ScenarioResult& r : results) {
    // The summary's links name the scenario: an anchor of that name.
    md += absl::StrFormat("\n<a id=\"%s\"></a>\n\n## %s\n\n%s\n\n", r.name, r.title,
                          ResolveProse(r, r.description));
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

namespace {

// The page's anchors: one id per scenario ("s-blog-comments"), unique even
// when two scenarios share a name, made of characters that need no escaping.
std::vector<std::string> ScenarioIds(const std::vector<ScenarioResult>& results) {
  std::vector<std::string> ids;
  std::set<std::string> used;
  for (const ScenarioResult& r : results) {
    std::string id = "s-";
    for (char c : r.name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    const std::string base = id;
    for (int k = 2; !used.insert(id).second; ++k) id = base + "-" + std::to_string(k);
    ids.push_back(id);
  }
  return ids;
}

// Where a claim's quote and its evidence at the i-th size are, within the
// scenario whose id is `sid`.
std::string QuoteId(const std::string& sid, const SummaryRow& row) {
  return absl::StrFormat("%s-q%d", sid, row.index);
}
std::string EvidenceId(const std::string& sid, const SummaryRow& row, size_t size_index) {
  return absl::StrFormat("%s-e%d-%d", sid, row.index, size_index);
}

// The class of a verdict's cell: its colour.
std::string VerdictClass(const RuleCheck& k) {
  return k.agrees ? "agrees" : k.undecided ? "undecided" : k.tie ? "tie" : "disagrees";
}

std::string Plural(size_t n, const char* one, const char* many) {
  return absl::StrFormat("%d %s", n, n == 1 ? one : many);
}

// The grid that opens the page: a row per claim, a column per size (the
// sizes of its scenario, under the scenario's heading row), one coloured
// cell per verdict linking to its evidence; the claim links to its quote.
std::string RuleGrid(const std::vector<ScenarioResult>& results,
                     const std::vector<std::string>& ids) {
  size_t columns = 0;
  for (const ScenarioResult& r : results) {
    if (!r.rules.empty()) columns = std::max(columns, r.sizes.size());
  }
  std::string h =
      "<h2 id=\"summary\">Rules of thumb against sizes</h2>\n<p class=\"legend\">One cell per "
      "verdict, at each size the scenario measured: <span class=\"agrees\">agrees</span> "
      "<span class=\"tie\">tie</span> (within noise) <span class=\"undecided\">not decided"
      "</span> (too few repetitions) <span class=\"disagrees\">DISAGREES</span>. A cell "
      "links to its evidence, a claim to the words it tests.</p>\n";
  if (columns == 0) return h + "<p>No scenario of this run states a rule of thumb.</p>\n";
  h += "<table class=\"grid\">\n";
  for (size_t si = 0; si < results.size(); ++si) {
    const ScenarioResult& r = results[si];
    const std::vector<SummaryRow> rows = SummaryRows(r);
    if (rows.empty()) continue;
    h += absl::StrFormat(
        "<tr class=\"scenario\"><th colspan=\"2\"><a href=\"#%s\">%s</a> "
        "<small>%s</small></th>",
        ids[si], HtmlEscape(r.title.empty() ? r.name : r.title), HtmlEscape(r.size_label));
    for (size_t i = 0; i < columns; ++i) {
      h += i < r.sizes.size() ? "<th>" + HtmlEscape(Thousands(r.sizes[i])) + "</th>"
                              : std::string("<th></th>");
    }
    h += "</tr>\n";
    for (const SummaryRow& row : rows) {
      h += "<tr>";
      // The rule's text once, over its claims.
      if (&row == &rows.front() || rows[row.index - 1].rule != row.rule) {
        const auto span = std::count_if(rows.begin(), rows.end(),
                                        [&](const SummaryRow& x) { return x.rule == row.rule; });
        h += absl::StrFormat("<td rowspan=\"%d\">%s</td>", span, HtmlEscape(row.rule->text));
      }
      h += absl::StrFormat("<td><a href=\"#%s\" title=\"%s\">%s</a></td>", QuoteId(ids[si], row),
                           HtmlEscape(SourceText(*row.claim)), HtmlEscape(row.claim_text));
      for (size_t i = 0; i < columns; ++i) {
        const RuleCheck* k = nullptr;
        for (const RuleCheck* c : row.checks) {
          if (i < r.sizes.size() && c->size == r.sizes[i]) k = c;
        }
        if (k == nullptr) {
          h += i < r.sizes.size() ? "<td class=\"na\" title=\"not checked at this size\">"
                                    "&middot;</td>"
                                  : std::string("<td></td>");
          continue;
        }
        h += absl::StrFormat("<td class=\"cell %s\"><a href=\"#%s\" title=\"%s\">%s</a></td>",
                             VerdictClass(*k), EvidenceId(ids[si], row, i),
                             HtmlEscape(EvidenceOf(*k)), VerdictWord(*k));
      }
      h += "</tr>\n";
    }
  }
  return h + "</table>\n";
}

// A scenario's claims, each with the words it tests (the quote's anchor) and
// its verdict and evidence at each size (the cells' anchors).
std::string ClaimsEvidence(const ScenarioResult& r, const std::string& sid) {
  const std::vector<SummaryRow> rows = SummaryRows(r);
  size_t agreed = 0, tied = 0, undecided = 0, checks = 0;
  for (const RuleCheck& c : r.rule_checks) {
    ++checks;
    agreed += c.agrees;
    undecided += c.undecided;
    tied += c.tie && !c.undecided;
  }
  std::string h = absl::StrFormat(
      "<details><summary>Rules of thumb: %s, %d agree, %d tie, %d not decided, %d "
      "disagree</summary>\n",
      Plural(checks, "check", "checks"), agreed, tied, undecided,
      checks - agreed - tied - undecided);
  for (const SummaryRow& row : rows) {
    h += absl::StrFormat("<div class=\"claim\" id=\"%s\"><b>%s</b>: %s", QuoteId(sid, row),
                         HtmlEscape(row.rule->text), HtmlEscape(row.claim_text));
    if (row.claim->source.empty()) {
      h += " (the lab's own claim: no source makes it)";
    } else {
      h += absl::StrFormat("<blockquote>%s <small>(%s)</small></blockquote>",
                           HtmlEscape(row.claim->quote), HtmlEscape(row.claim->source));
    }
    h += "<ul>\n";
    for (size_t i = 0; i < r.sizes.size(); ++i) {
      for (const RuleCheck* k : row.checks) {
        if (k->size != r.sizes[i]) continue;
        h += absl::StrFormat("<li id=\"%s\"><span class=\"%s\">%s %s: %s</span> %s</li>\n",
                             EvidenceId(sid, row, i), VerdictClass(*k), HtmlEscape(r.size_label),
                             HtmlEscape(Thousands(k->size)), VerdictWord(*k),
                             HtmlEscape(EvidenceOf(*k)));
      }
    }
    h += "</ul></div>\n";
  }
  return h + "</details>\n";
}

}  // namespace

std::string GlanceChart(const ScenarioResult& r, int64_t size) {
  std::vector<const Measurement*> rows;
  for (const Measurement& m : r.rows) {
    if (m.size == size) rows.push_back(&m);
  }
  // Narrow enough that five sizes fit side by side in the page's 1300 px;
  // the names' column as wide as the longest name needs (11 px sans-serif).
  // A row that was not measured says why instead of its bars.
  auto why = [](const Measurement& m) { return m.verdict.empty() ? m.error : m.verdict; };
  size_t longest = 0, reason = 0;
  for (const Measurement* m : rows) {
    longest = std::max(longest, m->variant.size() + (m->engine == "sqlite" ? 9 : 0));
    if (m->failed()) reason = std::max(reason, why(*m).size());
  }
  constexpr double kBars = 100, kRow = 24, kTop = 38;
  const std::string title = r.size_label + " " + Thousands(size);
  const double kName = std::clamp(6.0 * longest + 8, 50.0, 150.0);
  const double kW =
      std::max({kName + kBars + 36, 7.0 * title.size() + 4, kName + 6.0 * reason + 4});
  const double height = kTop + kRow * std::max<size_t>(rows.size(), 1) + 6;
  // Each rate as a share of the highest at this size (its interval's top
  // included, so that the whiskers fit).
  auto top = [&](double (*get)(const Measurement&),
                 const Interval* (*interval)(const Measurement&)) {
    double t = 0;
    for (const Measurement* m : rows) {
      if (m->failed()) continue;
      const Interval* i = interval(*m);
      t = std::max({t, get(*m), i->n > 0 && !std::isnan(i->hi) ? i->hi : 0.0});
    }
    return t > 0 ? t : 1.0;
  };
  const Figure& reads = Figures()[0];   // readOpsPerSec
  const Figure& writes = Figures()[1];  // writeOpsPerSec
  const double read_top = top(reads.get, reads.interval),
               write_top = top(writes.get, writes.interval);
  std::string s = absl::StrFormat(
      "<svg class=\"glance\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\">"
      "<title>reads and writes per second of each variant at %s</title>\n"
      "<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n"
      "<text x=\"2\" y=\"14\" font-size=\"12\" font-weight=\"bold\">%s</text>\n"
      "<rect x=\"%.0f\" y=\"22\" width=\"10\" height=\"7\" fill=\"%s\"/>"
      "<text x=\"%.0f\" y=\"29\">reads/s</text>"
      "<rect x=\"%.0f\" y=\"22\" width=\"10\" height=\"7\" fill=\"%s\"/>"
      "<text x=\"%.0f\" y=\"29\">writes/s</text>\n",
      kW, height, kW, height, XmlEscape(title), kW, height, XmlEscape(title), kName, kColours[0],
      kName + 14, kName + 70, kColours[1], kName + 84);
  if (rows.empty()) {
    s += absl::StrFormat("<text x=\"2\" y=\"%.0f\">nothing measured</text>\n", kTop + 14);
  }
  for (size_t k = 0; k < rows.size(); ++k) {
    const Measurement& m = *rows[k];
    const double y = kTop + kRow * k;
    const std::string name = m.engine == "sqlite" ? m.variant + " (SQLite)" : m.variant;
    s += absl::StrFormat("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>", kName - 6,
                         y + 13, XmlEscape(name));
    if (m.failed()) {
      s += absl::StrFormat("<text x=\"%.0f\" y=\"%.0f\" fill=\"#a00\">%s</text>\n", kName, y + 13,
                           XmlEscape(why(m)));
      continue;
    }
    // Two bars, reads over writes, each with its whisker and its value.
    int bar = 0;
    for (const auto& [f, t] :
         {std::pair<const Figure*, double>{&reads, read_top}, {&writes, write_top}}) {
      const double by = y + 2 + 10 * bar, v = f->get(m);
      const double w = std::isnan(v) ? 0 : std::max(0.0, v / t * kBars);
      s += absl::StrFormat("<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"8\" fill=\"%s\"/>",
                           kName, by, w, kColours[bar]);
      const Interval* i = f->interval(m);
      if (i->n > 1 && !std::isnan(i->lo)) {
        s += absl::StrFormat(
            "<path class=\"errorbar\" d=\"M%.1f %.1fH%.1f\" stroke=\"black\" fill=\"none\"/>",
            kName + i->lo / t * kBars, by + 4, kName + i->hi / t * kBars);
      }
      s += absl::StrFormat("<text x=\"%.0f\" y=\"%.1f\" font-size=\"9\">%s</text>",
                           kName + kBars + 4, by + 8, Human(v));
      ++bar;
    }
    s += "\n";
  }
  return s + "</svg>\n";
}

std::string HtmlReport(const std::vector<ScenarioResult>& results, const Provenance& p) {
  const std::vector<std::string> ids = ScenarioIds(results);
  std::string h =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>rockdoc-lab: schema patterns measured</title>\n"
      // Errors from here on are collected for the self-check at the end.
      "<script>window.labErrors=[];window.addEventListener('error',function(e){"
      "window.labErrors.push(String(e.message||e.type));},true);</script>\n"
      "<style>body{font-family:sans-serif;max-width:1300px;margin:1em auto;padding:0 1em;"
      "line-height:1.4;color:#222}table{border-collapse:collapse;margin:.5em 0;font-size:13px}"
      "th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top}th{background:#f3f3f3}"
      "td.num{text-align:right;white-space:nowrap}.agrees{background:#cdebcd}"
      ".tie{background:#e4e4e4}.undecided{background:#f4f4f4;color:#555}"
      ".disagrees{background:#f5c6c6}table.grid td.cell{text-align:center;white-space:nowrap}"
      "table.grid td.cell a{color:inherit;text-decoration:none;display:block}"
      "table.grid td.na{text-align:center;color:#999}"
      "table.grid tr.scenario th{text-align:left;background:#fafafa}"
      "table.grid tr.scenario th+th{text-align:center}.legend span{padding:0 4px}"
      ".charts,.glance-row{display:flex;flex-wrap:wrap;gap:8px}"
      ".prov{font-size:13px;color:#444}section{border-top:2px solid #ddd;margin-top:1em}"
      "section h2{margin:.4em 0}details{margin:.3em 0}summary{cursor:pointer;color:#135}"
      "blockquote{margin:.2em 1.5em;font-style:italic}.bad{color:#a00;font-weight:bold}"
      ".wide{overflow-x:auto;max-width:100%}</style>\n"
      "</head><body>\n<h1>rockdoc-lab: schema patterns measured</h1>\n";
  h += absl::StrFormat("<p class=\"prov\">Run %s, mode %s, rockdoc %s.</p>\n",
                       HtmlEscape(p.date.empty() ? "(undated)" : p.date),
                       HtmlEscape(p.mode.empty() ? "-" : p.mode),
                       HtmlEscape(p.rockdoc_commit.empty() ? "-" : p.rockdoc_commit));
  h += RuleGrid(results, ids);
  h += "<details><summary>Method and provenance</summary>\n<p>" + HtmlEscape(kMethod) +
       "</p>\n<p class=\"prov\">" + HtmlEscape(ProvenanceText(p)) + "</p>\n</details>\n";
  h += "<p class=\"prov\">Scenarios: ";
  for (size_t si = 0; si < results.size(); ++si) {
    h += absl::StrFormat("%s<a href=\"#%s\">%s</a>", si == 0 ? "" : " &middot; ", ids[si],
                         HtmlEscape(results[si].name));
  }
  h += ". Each shows reads/s and writes/s at each size, as bars scaled to the fastest at that "
       "size (whiskers: the 95% interval); unfold it for its question, verdicts, table and "
       "every figure's chart.</p>\n";
  for (size_t si = 0; si < results.size(); ++si) {
    const ScenarioResult& r = results[si];
    h += absl::StrFormat("<section id=\"%s\"><h2>%s</h2>\n", ids[si],
                         HtmlEscape(r.title.empty() ? r.name : r.title));
    if (!r.consistent) {
      h += "<p class=\"bad\">The variants do not hold the same data or answer alike: see the "
           "details.</p>\n";
    }
    h += "<div class=\"glance-row\">\n";
    for (int64_t size : r.sizes) h += GlanceChart(r, size);
    h += "</div>\n";
    if (!r.rules.empty()) h += ClaimsEvidence(r, ids[si]);
    size_t charts = 0;
    for (const Figure& f : Figures()) charts += Informative(r, f);
    h += absl::StrFormat(
        "<details><summary>Question, variants, %s, the measurements and %s</summary>\n",
        Plural(r.verdict.size() + r.inconsistencies.size(), "verdict", "verdicts"),
        Plural(charts, "chart", "charts"));
    h +=
        absl::StrFormat("<p><b>Question.</b> %s</p>\n", HtmlEscape(ResolveProse(r, r.description)));
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
    h += "</div></details></section>\n";
  }
  // A link into a folded part opens it (browsers that do not on their own),
  // and so does a link the page is opened at.
  h += "<script>\n(function(){function openTo(id){var t=document.getElementById(id);"
       "for(var e=t;e;e=e.parentElement)if(e.tagName==='DETAILS')e.open=true;return t;}"
       "document.addEventListener('click',function(ev){var a=ev.target.closest?"
       "ev.target.closest('a[href^=\"#\"]'):null;"
       "if(a)openTo(decodeURIComponent(a.getAttribute('href').slice(1)));});"
       "if(location.hash){var t=openTo(decodeURIComponent(location.hash.slice(1)));"
       "if(t)t.scrollIntoView();}})();\n</script>\n";
  // The self-check: what a person would look for, written into a hidden
  // element so that a headless browser's --dump-dom reports it
  // (tests/lab_report_html_test.sh) and a reader never sees it. It measures
  // the page as it opens (its height, the charts visible without unfolding,
  // its last visible line), then unfolds everything to check every chart
  // has a size, every link a target and no template text shows, and folds
  // it back.
  h += "<pre id=\"check\" hidden>self-check did not run</pre>\n<script>\n(function(){"
       "var problems=[];var svgs=document.querySelectorAll('svg');var visible=0;"
       "function sized(e){var b=e.getBoundingClientRect();return b.width>0&&b.height>0;}"
       "function shown(e){return sized(e)&&!e.closest('details:not([open])');}"
       "for(var i=0;svgs.length>i;i++)if(shown(svgs[i]))visible++;"
       "var height=document.documentElement.scrollHeight;"
       "var lines=document.body.innerText.trim().split('\\n');var last=lines[lines.length-1];"
       "var folded=document.querySelectorAll('details:not([open])');"
       "for(var i=0;folded.length>i;i++)folded[i].open=true;"
       "var unfolded=document.documentElement.scrollHeight;"
       "for(var i=0;svgs.length>i;i++)if(!sized(svgs[i]))problems.push('chart '+i+' has no size');"
       "var text=document.body.innerText;var d='$'+'$';"
       "if(text.indexOf(d)>=0)problems.push('template text '+d+' in the page');"
       "if(/\\$lab[A-Z]/.test(text))problems.push('a lab expression operator in the page');"
       "if(/\\{\\{\\s*[\\w.]+\\s*\\}\\}/.test(text))"
       "problems.push('a double-brace placeholder in the page');"
       "var links=document.querySelectorAll('a[href^=\"#\"]');"
       "for(var i=0;links.length>i;i++){var id=decodeURIComponent(links[i].getAttribute('href')"
       ".slice(1));if(!document.getElementById(id))problems.push('a link to #'+id+' has no "
       "target');}"
       "for(var i=0;folded.length>i;i++)folded[i].open=false;"
       "if(sized(document.getElementById('check')))problems.push('the self-check is visible');"
       "if(performance.getEntriesByType('resource').length>0)"
       "problems.push('the page loaded other resources');"
       "if(window.labErrors.length>0)problems.push('errors: '+window.labErrors.join('; '));"
       "document.getElementById('check').textContent=(problems.length?"
       "'self-check FAIL\\n'+problems.join('\\n'):'self-check OK')+'\\n'+JSON.stringify("
       "{charts:svgs.length,visibleCharts:visible,height:height,unfoldedHeight:unfolded,"
       "lastLine:last});"
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

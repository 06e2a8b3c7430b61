#include "runner.h"

#include <absl/strings/str_format.h>
#include <absl/strings/str_join.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>

#include "rockdoc/client.h"
#include "backend.h"
#include "rockdoc/json.h"

namespace rockdoc::lab {
namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
// Writes run one operation at a time under a variant's "observe" check.
constexpr int kObservedWrites = 10;

constexpr char kDb[] = "lab";

// The per-operation variables: $$op, then the scenario's let block.
StatusOr<Env> OpEnv(const Env& base, DocumentView let, int64_t op) {
  Env env(&base);
  env.Set("op", IntValue(op));
  for (const Element& e : let) {
    ROCKDOC_ASSIGN_OR_RETURN(Value v, Evaluate(e, env));
    env.Set(std::string(e.key()), std::move(v));
  }
  return env;
}

// One timed repetition (of the reads or the writes): `count` operations,
// op numbers continuing from repetition to repetition. The let blocks are
// evaluated before the clock starts, only the operations inside it. Adds the
// I/O counters' deltas to *io; returns the rate (ops/s).
StatusOr<double> RunRepetition(Backend& backend, const Env& base, DocumentView let,
                               const std::vector<Document>& ops, int count, int repetition,
                               IoCounters* io) {
  std::vector<Env> envs;
  envs.reserve(count);
  for (int k = 0; k < count; ++k) {
    ROCKDOC_ASSIGN_OR_RETURN(Env e, OpEnv(base, let, int64_t{repetition} * count + k));
    envs.push_back(std::move(e));
  }
  const IoCounters before = backend.Io();
  const auto start = std::chrono::steady_clock::now();
  for (const Env& e : envs) {
    Env run(&e);
    ROCKDOC_RETURN_IF_ERROR(backend.executor().Run(ops, run));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const IoCounters after = backend.Io();
  io->known = io->known && after.known;
  io->bytes_read += after.bytes_read - before.bytes_read;
  io->bytes_written += after.bytes_written - before.bytes_written;
  io->wal_bytes += after.wal_bytes - before.wal_bytes;
  return count / std::max(seconds, 1e-9);
}

StatusOr<std::string> Dump(Executor& exec, const Variant& v, const Env& base) {
  if (v.dump.ops.empty() && !v.dump.has_answer()) return std::string();
  Env env(&base);
  ROCKDOC_ASSIGN_OR_RETURN(Value answer, exec.RunForAnswer(v.dump, env));
  return CanonicalJson(answer.element());
}

std::string Ratio(double a, double b) {
  if (b <= 0) return "-";
  // Small ratios keep two significant digits: "0.0x" would hide a 500x gap.
  const double x = a / b;
  return x >= 0.1 ? absl::StrFormat("%.1fx", x) : absl::StrFormat("%.2gx", x);
}

// Throughput of a read:write mix from two rates.
double MixedRate(double read_rate, double write_rate, int64_t reads, int64_t writes) {
  if (!(read_rate > 0) || !(write_rate > 0)) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(reads + writes) / (reads / read_rate + writes / write_rate);
}

std::string What(const std::string& metric) {
  if (metric == "reads") return "the fastest reads";
  if (metric == "writes") return "the fastest writes";
  if (metric == "disk") return "the least disk";
  if (metric == "queries") return "the fewest queries per read";
  if (metric == "bytes written") return "the fewest bytes written per write";
  if (metric == "bytes read") return "the fewest bytes read per read";
  if (metric == "atomic") return "the fewest writes a reader saw half done";
  return "the most ops/s at " + metric;
}

// What a write costs in bytes: what it reads (the lookups a write does
// before it changes anything: a linked write's findOne), what it writes,
// and the same bytes again in the write-ahead log (every written byte is
// written twice before any compaction: WAL, then the flush).
constexpr char kWriteCost[] = "I/O bytes/write (read + written + WAL)";
double WriteCost(const Measurement& m) {
  return m.read_bytes_per_write + m.written_bytes_per_op + m.wal_bytes_per_op;
}

// The metrics judged on one figure that is not a rate, lower is better.
struct CostMetric {
  const char* metric;
  std::string cost_name;
  double (*figure)(const Measurement&);
};
const CostMetric* CostMetricNamed(const std::string& metric) {
  static const CostMetric kMetrics[] = {
      // What a read sends, not how fast it is: "one query instead of two".
      {"queries", "queries/read", [](const Measurement& m) { return m.queries_per_read; }},
      // What a write rewrites (an embedded parent, every time).
      {"bytes written", "bytes written/write",
       [](const Measurement& m) { return m.written_bytes_per_op; }},
      // What a read moves (a parent copied into every child it returns).
      {"bytes read", "bytes read/read", [](const Measurement& m) { return m.read_bytes_per_op; }},
      // What a reader between a write's operations can see.
      {"atomic", absl::StrFormat("writes seen half done (of %d)", kObservedWrites),
       [](const Measurement& m) { return m.torn_writes; }},
      {"disk", "disk after compaction (bytes)",
       [](const Measurement& m) { return static_cast<double>(m.storage_bytes); }},
  };
  for (const CostMetric& c : kMetrics) {
    if (metric == c.metric) return &c;
  }
  return nullptr;
}

// The candidates of a metric, as the verdict module sees them: the
// deterministic costs first (lower is better), then the timed samples.
struct MetricView {
  JudgeOptions options;
  std::function<Candidate(const Measurement&)> candidate;
};

MetricView ViewOf(const ScenarioResult& r, const std::string& metric, double read_effect,
                  double write_effect) {
  MetricView view;
  if (metric == "reads") {
    view.options.cost_names = {"keys + docs examined/read", "bytes read/read"};
    view.options.time_name = "reads/s";
    view.options.min_effect = read_effect;
    view.candidate = [](const Measurement& m) {
      return Candidate{m.variant, {m.keys_examined + m.docs_examined, m.read_bytes_per_op},
                       m.read_samples};
    };
  } else if (metric == "writes") {
    view.options.cost_names = {kWriteCost};
    view.options.time_name = "writes/s";
    view.options.min_effect = write_effect;
    view.candidate = [](const Measurement& m) {
      return Candidate{m.variant, {WriteCost(m)}, m.write_samples};
    };
  } else if (const CostMetric* c = CostMetricNamed(metric); c != nullptr) {
    // A figure that does not depend on time: one cost, no rates.
    view.options.cost_names = {c->cost_name};
    view.options.time_name = "";
    view.candidate = [figure = c->figure](const Measurement& m) {
      return Candidate{m.variant, {figure(m)}, {}};
    };
  } else {
    for (size_t i = 0; i < r.mixes.size(); ++i) {
      // Not a structured binding: clang 14 (the sanitizer build) cannot
      // capture one in the lambda below.
      const auto reads = r.mixes[i].first, writes = r.mixes[i].second;
      if (metric != absl::StrFormat("%d:%d", reads, writes)) continue;
      // Judged on its measured rate; where the rates tie, on the reads'
      // keys and documents examined, then on every byte the mix moves.
      view.options.cost_names = {absl::StrFormat("keys + docs examined/op at %s", metric),
                                 absl::StrFormat("I/O bytes/op at %s", metric)};
      view.options.time_name = "ops/s at " + metric;
      view.options.min_effect = std::max(read_effect, write_effect);
      view.candidate = [i, reads, writes](const Measurement& m) {
        const double examined = reads * (m.keys_examined + m.docs_examined) / (reads + writes);
        const double bytes =
            (reads * m.read_bytes_per_op + writes * WriteCost(m)) / (reads + writes);
        return Candidate{m.variant, {examined, bytes},
                         i < m.mixed_samples.size() ? m.mixed_samples[i] : std::vector<double>()};
      };
    }
  }
  return view;
}

}  // namespace

void Summarize(ScenarioResult& r) {
  r.verdict.clear();
  r.rule_checks.clear();
  for (Measurement& m : r.rows) {
    m.mixed_ops_per_sec.clear();
    m.mixed_samples.clear();
    for (auto [reads, writes] : r.mixes) {
      m.mixed_ops_per_sec.push_back(
          m.failed() ? std::numeric_limits<double>::quiet_NaN()
                     : MixedRate(m.read_ops_per_sec, m.write_ops_per_sec, reads, writes));
      std::vector<double> samples;
      for (size_t k = 0; k < std::min(m.read_samples.size(), m.write_samples.size()); ++k) {
        samples.push_back(MixedRate(m.read_samples[k], m.write_samples[k], reads, writes));
      }
      m.mixed_samples.push_back(std::move(samples));
    }
  }
  for (int64_t size : r.sizes) {
    // The verdict ranks rockdoc's variants; SQLite rows are compared with the
    // variant they mirror.
    std::vector<Measurement*> rows, sqlite_rows, failed;
    for (Measurement& m : r.rows) {
      if (m.size != size) continue;
      if (m.failed()) {
        failed.push_back(&m);
      } else {
        (m.engine == "sqlite" ? sqlite_rows : rows).push_back(&m);
      }
    }
    for (Measurement* m : failed) {
      if (m->error_code == 0) {
        m->verdict = "not run at this size";
        r.verdict.push_back(absl::StrFormat("%s %d: %s %s", r.size_label, size, m->variant,
                                            m->error));
        continue;
      }
      m->verdict = absl::StrFormat("cannot hold this size (code %d)", m->error_code);
      r.verdict.push_back(absl::StrFormat("%s %d: %s fails (code %d: %s)", r.size_label, size,
                                          m->variant, m->error_code, m->error));
    }
    if (rows.empty()) continue;
    // The smallest difference of rates called a difference at this size:
    // kMinEffect, or more when the A/A check saw more.
    double read_effect = kMinEffect, write_effect = kMinEffect;
    for (const NoiseCheck& n : r.noise) {
      if (n.size != size) continue;
      read_effect = std::max(read_effect, n.read_floor);
      write_effect = std::max(write_effect, n.write_floor);
      r.verdict.push_back(absl::StrFormat(
          "%s %d, noise floor (A/A: %s run twice): reads differ by %.1f%% (%s), writes by %.1f%% "
          "(%s); rates closer than %.0f%% (reads) / %.0f%% (writes) are ties here",
          r.size_label, size, n.variant, 100 * n.read_floor,
          n.reads_tie ? "a tie, as it must be" : "NOT a tie: noisy run",
          100 * n.write_floor, n.writes_tie ? "a tie, as it must be" : "NOT a tie: noisy run",
          100 * read_effect, 100 * write_effect));
    }
    // Who wins a metric, with no claim: the best median, judged as a claim.
    auto judge = [&](const std::string& metric, const std::vector<std::string>& claimed,
                     const std::vector<Measurement*>& among, bool time_only) {
      MetricView view = ViewOf(r, metric, read_effect, write_effect);
      std::vector<Candidate> cands;
      for (Measurement* m : among) {
        Candidate c = view.candidate(*m);
        if (time_only) c.costs.clear();
        cands.push_back(std::move(c));
      }
      if (time_only) view.options.cost_names.clear();
      return JudgeClaim(cands, claimed, view.options);
    };
    auto best_median = [&](auto key) {
      return *std::max_element(rows.begin(), rows.end(), [&](Measurement* a, Measurement* b) {
        return key(a) != key(b) ? key(a) < key(b) : a->variant > b->variant;
      });
    };
    Measurement* br = best_median([](Measurement* m) { return m->read_ops_per_sec; });
    Measurement* bw = best_median([](Measurement* m) { return m->write_ops_per_sec; });
    Measurement* bd = best_median([](Measurement* m) { return -double(m->storage_bytes); });
    Measurement* big = best_median([](Measurement* m) { return double(m->max_doc_bytes); });
    const ClaimVerdict reads = judge("reads", {br->variant}, rows, true);
    const ClaimVerdict writes = judge("writes", {bw->variant}, rows, true);
    const ClaimVerdict disk = judge("disk", {bd->variant}, rows, false);
    // The winners are rockdoc's variants': where SQLite rows stand beside
    // them in the table (and may be faster), the words say so.
    const std::string among = sqlite_rows.empty() ? "" : " among rockdoc's variants";
    for (Measurement* m : rows) {
      std::vector<std::string> parts;
      if (m == br) {
        parts.push_back(reads.kind == VerdictKind::kAgrees ? "fastest reads" + among
                        : reads.too_few_repetitions        ? "reads: too few repetitions to decide"
                                                           : "reads: tie for fastest");
      }
      if (m == bw) {
        parts.push_back(writes.kind == VerdictKind::kAgrees ? "fastest writes" + among
                        : writes.too_few_repetitions ? "writes: too few repetitions to decide"
                                                     : "writes: tie for fastest");
      }
      if (m == bd && disk.kind == VerdictKind::kAgrees) parts.push_back("smallest on disk" + among);
      if (parts.empty()) {
        // A ratio to the best says nothing when the two tie.
        auto vs = [&](const std::vector<double>& mine, const std::vector<double>& best,
                      double effect) {
          return CompareRates(best, mine, effect) == Order::kTie ? " (tie)" : "";
        };
        parts.push_back(absl::StrFormat(
            "reads %s%s, writes %s%s of best", Ratio(m->read_ops_per_sec, br->read_ops_per_sec),
            vs(m->read_samples, br->read_samples, read_effect),
            Ratio(m->write_ops_per_sec, bw->write_ops_per_sec),
            vs(m->write_samples, bw->write_samples, write_effect)));
      }
      m->verdict = absl::StrJoin(parts, ", ");
    }
    if (rows.size() >= 2) {
      auto line = [&](const char* what, const ClaimVerdict& v) {
        if (v.kind == VerdictKind::kAgrees) {
          return absl::StrFormat("%s fastest with %s%s (%s)", what, v.winner, among, v.evidence);
        }
        return v.too_few_repetitions ? absl::StrFormat("%s: not decided (%s)", what, v.evidence)
                                     : absl::StrFormat("%s: no variant significantly fastest (%s)",
                                                       what, v.evidence);
      };
      r.verdict.push_back(absl::StrFormat(
          "%s %d: %s; %s; least disk after compaction%s: %s; largest document: %s, %d bytes "
          "(%.3f%% of 16 MiB)",
          r.size_label, size, line("reads", reads), line("writes", writes), among,
          disk.kind == VerdictKind::kAgrees ? bd->variant + " (" + disk.evidence + ")"
                                            : "tie (" + disk.evidence + ")",
          big->variant, big->max_doc_bytes, 100 * big->max_doc_share));
      std::vector<std::string> mixes;
      for (size_t i = 0; i < r.mixes.size(); ++i) {
        const std::string metric = absl::StrFormat("%d:%d", r.mixes[i].first, r.mixes[i].second);
        // The candidate is the best by the figure the verdict judges (the
        // median of the mix's own samples), so that the sentence never names
        // one variant while its evidence shows another ahead.
        Measurement* bm = best_median([i](Measurement* m) {
          return i < m->mixed_samples.size() && !m->mixed_samples[i].empty()
                     ? MedianInterval(m->mixed_samples[i]).median
                     : m->mixed_ops_per_sec[i];
        });
        const ClaimVerdict v = judge(metric, {bm->variant}, rows, true);
        mixes.push_back(absl::StrFormat("%s %s (%s)", metric,
                                        v.kind != VerdictKind::kTie ? v.winner
                                        : v.too_few_repetitions     ? std::string("not decided")
                                                                : std::string("tie within noise"),
                                        v.evidence));
      }
      if (!mixes.empty()) {
        r.verdict.push_back(absl::StrFormat("%s %d, best at read:write %s", r.size_label, size,
                                            absl::StrJoin(mixes, "; ")));
      }
      std::vector<std::string> observed;
      for (Measurement* m : rows) {
        if (m->observed_writes == 0) continue;
        observed.push_back(absl::StrFormat("%s %.0f of %d", m->variant, m->torn_writes,
                                           m->observed_writes));
      }
      if (!observed.empty()) {
        r.verdict.push_back(absl::StrFormat(
            "%s %d, writes a reader between their operations saw half done: %s", r.size_label,
            size, absl::StrJoin(observed, ", ")));
      }
      // The rules of thumb: does the claimed variant win here, first on the
      // deterministic costs, then on time?
      for (const RuleOfThumb& rule : r.rules) {
        std::vector<std::string> parts;
        for (size_t ci = 0; ci < rule.claims.size(); ++ci) {
          const Claim& c = rule.claims[ci];
          if (size < c.from || size > c.to) continue;
          if (std::none_of(rows.begin(), rows.end(),
                           [&](Measurement* m) { return m->variant == c.variant; })) {
            continue;  // e.g. it cannot hold this size
          }
          std::vector<std::string> claimed = {c.variant};
          claimed.insert(claimed.end(), c.alike.begin(), c.alike.end());
          std::vector<Measurement*> among;
          for (Measurement* m : rows) {
            const bool in = c.against.empty() ||
                            std::count(claimed.begin(), claimed.end(), m->variant) > 0 ||
                            std::count(c.against.begin(), c.against.end(), m->variant) > 0;
            if (in) among.push_back(m);
          }
          const ClaimVerdict v = judge(c.metric, claimed, among, false);
          RuleCheck check;
          check.rule = rule.text;
          check.claim = ci;
          check.variant = c.variant;
          check.metric = c.metric;
          check.size = size;
          check.winner = v.winner;
          check.agrees = v.kind == VerdictKind::kAgrees;
          check.tie = v.kind == VerdictKind::kTie;
          check.undecided = v.too_few_repetitions;
          check.decided_by = v.decided_by;
          check.evidence = v.evidence;
          check.caveat = v.caveat;
          check.source = c.source;
          check.quote = c.quote;
          const std::string caveat = v.caveat.empty() ? "" : "; " + v.caveat;
          // A winner by a cost where the rates tie is the cheaper one, not
          // the faster: the sentence says which.
          const std::string what =
              v.rates_tied ? absl::StrFormat("the lowest %s at rates that tie", v.decided_by)
                           : What(c.metric);
          if (check.agrees) {
            parts.push_back(absl::StrFormat("agrees: %s has %s (%s%s)", v.winner, what,
                                            v.evidence, caveat));
          } else if (v.too_few_repetitions) {
            parts.push_back(absl::StrFormat("not decided for %s: %s", What(c.metric),
                                            v.evidence));
          } else if (check.tie) {
            parts.push_back(absl::StrFormat("tie (within noise) for %s: %s", What(c.metric),
                                            v.evidence));
          } else {
            parts.push_back(absl::StrFormat("DISAGREES: %s has %s, not %s (%s%s)", v.winner,
                                            what, c.variant, v.evidence, caveat));
          }
          r.rule_checks.push_back(std::move(check));
        }
        if (!parts.empty()) {
          r.verdict.push_back(absl::StrFormat("%s %d, rule of thumb \"%s\": %s", r.size_label,
                                              size, rule.text, absl::StrJoin(parts, "; ")));
        }
      }
    }
    std::vector<std::string> vs;
    for (Measurement* q : sqlite_rows) {
      auto mirrored = std::find_if(rows.begin(), rows.end(),
                                   [&](Measurement* m) { return m->variant == q->mirrors; });
      if (mirrored == rows.end()) continue;
      q->rockdoc_read_ratio = (*mirrored)->read_ops_per_sec / q->read_ops_per_sec;
      q->rockdoc_write_ratio = (*mirrored)->write_ops_per_sec / q->write_ops_per_sec;
      auto order = [&](const std::vector<double>& a, const std::vector<double>& b,
                       double effect) {
        switch (CompareRates(a, b, effect)) {
          case Order::kFirst: return "faster";
          case Order::kSecond: return "slower";
          default: return "tie";
        }
      };
      const std::string reads_cmp = order((*mirrored)->read_samples, q->read_samples, read_effect);
      const std::string writes_cmp =
          order((*mirrored)->write_samples, q->write_samples, write_effect);
      q->verdict = absl::StrFormat("rockdoc %s: reads %s (%s), writes %s (%s) of SQLite",
                                   q->mirrors,
                                   Ratio((*mirrored)->read_ops_per_sec, q->read_ops_per_sec),
                                   reads_cmp,
                                   Ratio((*mirrored)->write_ops_per_sec, q->write_ops_per_sec),
                                   writes_cmp);
      vs.push_back(absl::StrFormat("%s reads %s (%s), writes %s (%s)", q->mirrors,
                                   Ratio((*mirrored)->read_ops_per_sec, q->read_ops_per_sec),
                                   reads_cmp,
                                   Ratio((*mirrored)->write_ops_per_sec, q->write_ops_per_sec),
                                   writes_cmp));
    }
    if (!vs.empty()) {
      r.verdict.push_back(absl::StrFormat("%s %d, rockdoc vs SQLite: %s", r.size_label, size,
                                          absl::StrJoin(vs, "; ")));
    }
  }
}

namespace {

// A param's unit, from its name's ending (the scenarios' convention).
std::string UnitOf(std::string_view name) {
  auto ends = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends("Bytes")) return "bytes";
  if (ends("PerSecond")) return "per second";
  if (ends("Seconds")) return "s";
  if (ends("Millis") || ends("Ms")) return "ms";
  return "";
}


std::string ValueText(const Value& v) {
  const Element e = v.element();
  int64_t i = 0;
  if (e.ExactInt64(&i)) return Thousands(i);
  if (e.type() == BsonType::kString) return std::string(e.String());
  return ValueToJson(e);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ParamTexts(const Scenario& s, Mode mode,
                                                            const std::vector<int64_t>& sizes) {
  std::vector<std::string> names;
  for (const Element& e : s.params) names.emplace_back(e.key());
  for (const Element& e : ProfileFor(s, mode).params) {
    if (!s.params.Get(e.key()).ok()) names.emplace_back(e.key());
  }
  std::vector<Env> envs;
  for (int64_t size : sizes) envs.push_back(BaseEnv(s, mode, size));
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& name : names) {
    std::vector<std::string> values;
    for (const Env& env : envs) {
      const Value* v = env.Find(name);
      values.push_back(v != nullptr ? ValueText(*v) : "?");
    }
    const bool same = std::all_of(values.begin(), values.end(),
                                  [&](const std::string& x) { return x == values.front(); });
    std::vector<std::string> size_texts;
    for (int64_t size : sizes) size_texts.push_back(Thousands(size));
    std::string text = same ? values.front() : absl::StrJoin(values, " / ");
    const std::string unit = UnitOf(name);
    if (!unit.empty()) text += " " + unit;
    // Values that follow the size: say at which sizes, unless they are the sizes.
    if (!same && values != size_texts) {
      text += absl::StrFormat(" (at %s %s)", s.size_label, absl::StrJoin(size_texts, " / "));
    }
    out.emplace_back(name, std::move(text));
  }
  return out;
}

std::string ResolveProse(const ScenarioResult& r, std::string_view text) {
  auto param = [&](std::string_view name) -> const std::string* {
    for (const auto& [n, t] : r.params) {
      if (n == name) return &t;
    }
    return nullptr;
  };
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const bool dollars = text.compare(i, 2, "$$") == 0;
    const bool tick = text[i] == '`';
    const bool bare = !dollars && !tick && ident(text[i]) && (i == 0 || !ident(text[i - 1]));
    if (!dollars && !tick && !bare) {
      out += text[i++];
      continue;
    }
    size_t start = dollars ? i + 2 : tick ? i + 1 : i;
    size_t end = start;
    while (end < text.size() && ident(text[end])) ++end;
    const std::string_view name = text.substr(start, end - start);
    const bool closed = !tick || (end < text.size() && text[end] == '`');
    const size_t after = tick ? end + 1 : end;
    const std::string* value = closed && !name.empty() ? param(name) : nullptr;
    // Only true camelCase is a param name when bare ("pageSize"; not "B").
    bool camel = false;
    for (size_t k = 1; k < name.size(); ++k) {
      camel = camel || (std::islower(static_cast<unsigned char>(name[k - 1])) &&
                        std::isupper(static_cast<unsigned char>(name[k])));
    }
    if (dollars && name == "n") {
      std::vector<std::string> sizes;
      for (int64_t size : r.sizes) sizes.push_back(Thousands(size));
      out += absl::StrFormat("n (the %s: %s)", r.size_label, absl::StrJoin(sizes, ", "));
      i = end;
    } else if (value != nullptr && (dollars || tick || camel)) {
      std::string v = *value;
      // "coldBytes bytes": the unit is in the prose already.
      const std::string unit = " " + UnitOf(name);
      if (unit.size() > 1 && text.substr(after).substr(0, unit.size()) == unit) {
        if (size_t at = v.find(unit); at != std::string::npos) v.erase(at, unit.size());
      }
      out += v;
      i = after;
    } else if (dollars) {
      i += 2;  // an unknown "$$x": "x", never template text
    } else {
      out.append(text.substr(i, std::max<size_t>(end, i + 1) - i));
      i = std::max<size_t>(end, i + 1);
    }
  }
  return out;
}

Env BaseEnv(const Scenario& s, Mode mode, int64_t size) {
  Env env;
  env.Set("n", IntValue(size));
  // Params are expressions over $$n and earlier params. A profile's value
  // takes the place of the scenario's (so params derived from it see the
  // override); params only the profile has come last.
  const Profile& p = ProfileFor(s, mode);
  auto set = [&](const Element& e) {
    StatusOr<Value> v = Evaluate(e, env);
    env.Set(std::string(e.key()), v.ok() ? std::move(v).value() : Value::FromElement(e));
  };
  for (const Element& e : s.params) {
    Element override = p.params.Get(e.key());
    set(override.ok() ? override : e);
  }
  for (const Element& e : p.params) {
    if (!s.params.Get(e.key()).ok()) set(e);
  }
  return env;
}

namespace {

// One variant at one size while it is being measured: its open database,
// between setup and the final figures.
struct LiveVariant {
  const Variant* v = nullptr;
  std::string dir;
  Env base;
  std::unique_ptr<Backend> db;
  Measurement m;
  IoCounters read_io{.known = true};
  IoCounters write_io{.known = true};
  bool aa_copy = false;  // the A/A check's second copy: neither kept nor advised
  bool done() const { return db == nullptr; }  // unmeasured (or finished)
};

void Unmeasured(Measurement& m, std::string why, int32_t code) {
  m.error = std::move(why);
  m.error_code = code;
  for (double* f : {&m.read_ops_per_sec, &m.write_ops_per_sec, &m.queries_per_read,
                    &m.keys_examined, &m.docs_examined, &m.read_bytes_per_op,
                    &m.written_bytes_per_op, &m.wal_bytes_per_op, &m.read_bytes_per_write,
                    &m.avg_doc_bytes, &m.max_doc_share}) {
    *f = kUnknown;
  }
}

// Fresh directory, setup, the dump, close and reopen, the first reads'
// answers and explain figures. A variant that cannot hold the size (or is
// not run at it) is left done() with its row saying why.
Status Prepare(const Scenario& s, const Variant& v, int64_t size, const RunOptions& options,
               const std::string& dir_suffix, LiveVariant& live) {
  const Profile& profile = ProfileFor(s, options.mode);
  live.v = &v;
  live.aa_copy = !dir_suffix.empty();
  live.dir = options.work_dir + "/" + s.name + "/" + v.name + "-" + std::to_string(size) +
             dir_suffix;
  std::error_code ec;
  std::filesystem::remove_all(live.dir, ec);
  std::filesystem::create_directories(live.dir, ec);
  Measurement& m = live.m;
  m.variant = v.name;
  m.size = size;
  m.engine = v.engine == EngineKind::kSqlite ? "sqlite" : "rockdoc";
  m.mirrors = v.mirrors;
  if (v.max_size > 0 && size > v.max_size) {
    Unmeasured(m, absl::StrFormat("not run above the variant's maxSize (%d)", v.max_size), 0);
    return Status::OK();
  }
  live.base = BaseEnv(s, options.mode, size);
  ROCKDOC_ASSIGN_OR_RETURN(live.db, Backend::Open(v.engine, live.dir,
                                                  ProfileFor(s, options.mode).block_cache_bytes));
  {
    Env env(&live.base);
    Status st = live.db->executor().Run(v.setup.ops, env);
    if (!st.ok() && std::count(v.setup_may_fail.begin(), v.setup_may_fail.end(),
                               st.code_number()) > 0) {
      // The variant cannot hold this size: a row that says so. The error
      // without the operation it came from (the whole operation).
      std::string why(st.message());
      if (size_t at = why.rfind("}: "); at != std::string::npos) why = why.substr(at + 3);
      Unmeasured(m, why, st.code_number());
      live.db->Close().IgnoreError();
      live.db.reset();
      std::filesystem::remove_all(live.dir, ec);
      return Status::OK();
    }
    ROCKDOC_RETURN_IF_ERROR(st);
    ROCKDOC_ASSIGN_OR_RETURN(m.dump_before, Dump(live.db->executor(), v, live.base));
    ROCKDOC_RETURN_IF_ERROR(live.db->ForgetQueries());  // the setup's and the dump's
  }
  ROCKDOC_RETURN_IF_ERROR(live.db->Reopen());

  // The answers of the first reads, with their explain figures (averaged
  // over the same reads; rockdoc only), untimed; this also warms the cache.
  const int answered = std::min(options.answers_compared, profile.read_ops);
  ExplainTotals totals;
  Executor& exec = live.db->executor();
  exec.set_explain(&totals);
  for (int k = 0; k < answered; ++k) {
    ROCKDOC_ASSIGN_OR_RETURN(Env e, OpEnv(live.base, s.read_let, k));
    Env run(&e);
    StatusOr<Value> answer = exec.RunForAnswer(v.read, run);
    if (!answer.ok()) {
      exec.set_explain(nullptr);
      return answer.status();
    }
    m.answers.push_back(CanonicalJson(answer->element()));
  }
  exec.set_explain(nullptr);
  const bool explained = live.db->engine() == EngineKind::kRockdoc && answered > 0;
  m.queries_per_read = explained ? static_cast<double>(totals.queries) / answered : kUnknown;
  m.keys_examined = explained ? static_cast<double>(totals.keys_examined) / answered : kUnknown;
  m.docs_examined = explained ? static_cast<double>(totals.docs_examined) / answered : kUnknown;
  return Status::OK();
}

Status Repetition(const Scenario& s, const RunOptions& options, bool reads, int repetition,
                  LiveVariant& live) {
  const Profile& profile = ProfileFor(s, options.mode);
  if (reads) {
    ROCKDOC_ASSIGN_OR_RETURN(double rate,
                             RunRepetition(*live.db, live.base, s.read_let, live.v->read.ops,
                                           profile.read_ops, repetition, &live.read_io));
    live.m.read_samples.push_back(rate);
  } else {
    ROCKDOC_ASSIGN_OR_RETURN(double rate,
                             RunRepetition(*live.db, live.base, s.write_let, live.v->write.ops,
                                           profile.write_ops, repetition, &live.write_io));
    live.m.write_samples.push_back(rate);
  }
  return Status::OK();
}

// Moves the directory `from` to `to` (replacing what is there): a rename,
// or a copy and a removal when the two are on different file systems.
Status MoveDirectory(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::remove_all(to, ec);
  std::filesystem::create_directories(std::filesystem::path(to).parent_path(), ec);
  std::filesystem::rename(from, to, ec);
  if (!ec) return Status::OK();
  ec.clear();
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive, ec);
  if (ec) {
    return Status(ErrorCode::kInternalError,
                  "cannot keep the database " + from + " in " + to + ": " + ec.message());
  }
  std::filesystem::remove_all(from, ec);
  return Status::OK();
}

// After a variant's figures, its database closed: moves it to the keep
// directory (or deletes it), and runs the advisor over it when asked.
Status KeepAndAdvise(const Scenario& s, const RunOptions& options, LiveVariant& live) {
  Measurement& m = live.m;
  std::string dir = live.dir;
  const bool keep = !options.keep_dir.empty() && !live.aa_copy;
  if (keep) {
    const std::string kept = options.keep_dir + "/" + s.name + "/" + m.variant + "-" +
                             std::to_string(m.size);
    ROCKDOC_RETURN_IF_ERROR(MoveDirectory(dir, kept));
    m.kept_dir = dir = kept;
  }
  if (options.advise && !live.aa_copy && live.v->engine == EngineKind::kRockdoc) {
    ClientOptions client_options;
    client_options.create_if_missing = false;
    client_options.ttl_monitor_period_ms = 0;  // the advisor reads what the run left
    client_options.collect_statistics = false;  // and adds no statistics of its own reads
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::Open(dir, client_options));
    StatusOr<advisor::AdviseReport> report = advisor::Advise(*client, LabAdviseOptions());
    Status closed = client->Close();
    ROCKDOC_RETURN_IF_ERROR(report.status().WithContext("the advisor"));
    ROCKDOC_RETURN_IF_ERROR(closed);
    m.advice = std::move(report).value();
  }
  if (!keep) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return Status::OK();
}

// How many writes a concurrent reader would see half done: kObservedWrites
// more writes (op numbers after the timed ones, the same in every variant),
// each run one operation at a time with the variant's "observe" check
// between them. The check must hold before and after each write (else it
// checks something else than the write's atomicity). A transaction is one
// operation: nothing is seen between its statements.

Status Observe(const Scenario& s, const Profile& profile, int repetitions, LiveVariant& live) {
  const Variant& v = *live.v;
  Executor& exec = live.db->executor();
  auto whole = [&](Env& env, const char* when) -> StatusOr<bool> {
    Env look(&env);
    ROCKDOC_ASSIGN_OR_RETURN(Value seen, exec.RunForAnswer(v.observe, look));
    if (seen.element().type() != BsonType::kBool) {
      return BadValue("\"observe\" of " + v.name + " must answer true or false");
    }
    if (when != nullptr && !seen.element().Bool()) {
      return BadValue(absl::StrCat("\"observe\" of ", v.name, " is false ", when,
                                   " a write: it does not check the write's atomicity"));
    }
    return seen.element().Bool();
  };
  int64_t torn = 0;
  for (int j = 0; j < kObservedWrites; ++j) {
    const int64_t op = int64_t{repetitions} * profile.write_ops + j;
    ROCKDOC_ASSIGN_OR_RETURN(Env e, OpEnv(live.base, s.write_let, op));
    Env run(&e);
    ROCKDOC_RETURN_IF_ERROR(whole(run, "before").status());
    bool seen_torn = false;
    for (size_t i = 0; i < v.write.ops.size(); ++i) {
      ROCKDOC_RETURN_IF_ERROR(exec.RunOne(v.write.ops[i], run));
      if (i + 1 == v.write.ops.size()) break;
      ROCKDOC_ASSIGN_OR_RETURN(bool ok, whole(run, nullptr));
      seen_torn = seen_torn || !ok;
    }
    ROCKDOC_RETURN_IF_ERROR(whole(run, "after").status());
    torn += seen_torn ? 1 : 0;
  }
  live.m.observed_writes = kObservedWrites;
  live.m.torn_writes = static_cast<double>(torn);
  return Status::OK();
}

// The figures after the timed phases: rates, bytes per operation, the dump,
// document sizes, disk before and after a full compaction. Closes the
// database, then keeps or removes its directory (KeepAndAdvise).
Status Finish(const Scenario& s, const RunOptions& options, LiveVariant& live) {
  const Profile& profile = ProfileFor(s, options.mode);
  Measurement& m = live.m;
  m.read_interval = MedianInterval(m.read_samples);
  m.write_interval = MedianInterval(m.write_samples);
  m.read_ops_per_sec = m.read_interval.median;
  m.write_ops_per_sec = m.write_interval.median;
  const double n_reads = static_cast<double>(m.read_samples.size()) * profile.read_ops;
  const double n_writes = static_cast<double>(m.write_samples.size()) * profile.write_ops;
  m.read_bytes_per_op = live.read_io.known ? live.read_io.bytes_read / n_reads : kUnknown;
  m.written_bytes_per_op =
      live.write_io.known ? live.write_io.bytes_written / n_writes : kUnknown;
  m.wal_bytes_per_op = live.write_io.known ? live.write_io.wal_bytes / n_writes : kUnknown;
  m.read_bytes_per_write = live.write_io.known ? live.write_io.bytes_read / n_writes : kUnknown;
  Backend& db = *live.db;
  ROCKDOC_RETURN_IF_ERROR(db.ReopenUnrecorded());  // the dump is not the workload
  ROCKDOC_ASSIGN_OR_RETURN(m.dump_after, Dump(db.executor(), *live.v, live.base));
  ROCKDOC_ASSIGN_OR_RETURN(DocSizes sizes, db.Sizes());
  m.documents = sizes.documents;
  m.avg_doc_bytes = sizes.avg_bytes;
  m.max_doc_bytes = sizes.max_bytes;
  m.max_doc_share = static_cast<double>(m.max_doc_bytes) / kMaxBsonObjectSize;

  ROCKDOC_RETURN_IF_ERROR(db.Reopen());
  ROCKDOC_ASSIGN_OR_RETURN(m.storage_bytes_before_compaction, db.DiskBytes());
  ROCKDOC_RETURN_IF_ERROR(db.Compact());
  ROCKDOC_ASSIGN_OR_RETURN(m.storage_bytes, db.DiskBytes());
  if (!live.v->observe.ops.empty()) {
    // After every figure: its writes are not the workload's.
    ROCKDOC_RETURN_IF_ERROR(db.ReopenUnrecorded());
    const int repetitions = options.repetitions > 0 ? options.repetitions : profile.repetitions;
    ROCKDOC_RETURN_IF_ERROR(Observe(s, profile, repetitions, live).WithContext("observe"));
  }
  ROCKDOC_RETURN_IF_ERROR(db.Close());
  live.db.reset();
  return KeepAndAdvise(s, options, live);
}

}  // namespace

StatusOr<Measurement> RunVariant(const Scenario& s, const Variant& v, int64_t size,
                                 const RunOptions& options) {
  const Profile& profile = ProfileFor(s, options.mode);
  const int repetitions = options.repetitions > 0 ? options.repetitions : profile.repetitions;
  LiveVariant live;
  ROCKDOC_RETURN_IF_ERROR(Prepare(s, v, size, options, "", live));
  if (live.done()) return std::move(live.m);
  for (bool reads : {true, false}) {
    for (int r = 0; r < repetitions; ++r) {
      ROCKDOC_RETURN_IF_ERROR(Repetition(s, options, reads, r, live));
    }
  }
  ROCKDOC_RETURN_IF_ERROR(Finish(s, options, live));
  return std::move(live.m);
}

StatusOr<LimitResult> RunLimit(const Scenario& s, const LimitStep& l, const RunOptions& options) {
  const Variant* v = nullptr;
  for (const Variant& x : s.variants) {
    if (x.name == l.variant) v = &x;
  }
  if (v == nullptr) return BadValue("no variant " + l.variant);
  if (v->engine != EngineKind::kRockdoc) return BadValue("a limit runs on a rockdoc variant");
  const std::string dir = options.work_dir + "/" + s.name + "/limit-" + l.variant;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);

  LimitResult r;
  r.title = l.title;
  r.label = l.label;
  r.variant = l.variant;
  const Env base = BaseEnv(s, options.mode, l.size);
  std::unique_ptr<Client> client;
  ROCKDOC_ASSIGN_OR_RETURN(client, Client::Open(dir));
  RockdocExecutor exec(client.get(), kDb);
  {
    Env env(&base);
    ROCKDOC_RETURN_IF_ERROR(exec.Run(v->setup.ops, env));
  }
  Collection target = client->GetDatabase(kDb).GetCollection(l.collection);
  Document last;
  for (int64_t step = 0; step < l.max_steps; ++step) {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> before, target.FindOne(l.target_filter));
    if (!before.has_value()) return BadValue("limit: the target document does not exist");
    last = std::move(*before);
    if (options.progress && step % 16 == 0) {
      // The fraction is unknown until the step fails: how full the document is.
      options.progress(s.name + ", limit", absl::StrFormat("step %d, document %d bytes", step,
                                                           last.size()),
                       std::min(1.0, static_cast<double>(last.size()) / kMaxBsonObjectSize));
    }
    Env env(&base);
    env.Set("step", IntValue(step));
    Status st = exec.Run(l.step, env);
    if (!st.ok()) {
      r.failed = true;
      r.code = st.code_number();
      // The error without the operation it came from: the context is the
      // whole step ({"$$eval": ...}), not prose for a reader.
      r.message = std::string(st.message());
      if (size_t at = r.message.rfind("}: "); at != std::string::npos) {
        r.message = r.message.substr(at + 3);
      }
      r.steps_ok = step;
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> after, target.FindOne(l.target_filter));
      r.unchanged_after_failure = after.has_value() && *after == last;
      break;
    }
    r.steps_ok = step + 1;
  }
  r.last_doc_bytes = static_cast<int64_t>(last.size());
  if (l.measure.Get("v").ok()) {
    Env env(&base);
    env.Set("doc", DocumentValue(last));
    env.Set("steps", IntValue(r.steps_ok));
    ROCKDOC_ASSIGN_OR_RETURN(Value mv, Evaluate(l.measure.Get("v"), env));
    r.measure = ToJson(mv.element().IsContainer() ? mv.element().Document() : DocumentView());
  }
  r.as_expected = r.failed && r.unchanged_after_failure &&
                  (l.expect_code == 0 || r.code == l.expect_code);
  ROCKDOC_RETURN_IF_ERROR(client->Close());
  client.reset();
  std::filesystem::remove_all(dir, ec);
  return r;
}

StatusOr<ScenarioResult> RunScenario(const Scenario& s, const RunOptions& options) {
  ScenarioResult r;
  r.name = s.name;
  r.title = s.title;
  r.description = s.description;
  r.size_label = s.size_label;
  r.mode = ModeName(options.mode);
  r.sizes = SizesFor(s, options);
  r.mixes = s.mixes;
  r.rules = s.rules;
  r.params = ParamTexts(s, options.mode, r.sizes);
  for (const Variant& v : s.variants) {
    r.variants.push_back(v.name);
    r.variant_descriptions.push_back(v.description);
  }
  const Profile& profile = ProfileFor(s, options.mode);
  const int repetitions = options.repetitions > 0 ? options.repetitions : profile.repetitions;
  const bool noise_check = options.noise_check && options.mode != Mode::kTest;
  std::vector<std::vector<Measurement>> by_variant(s.variants.size());
  for (int64_t size : r.sizes) {
    auto context = [&](const Status& st, const std::string& variant) {
      return st.WithContext(
          absl::StrFormat("scenario %s, variant %s, size %d", s.name, variant, size));
    };
    const std::string key = absl::StrFormat("%s, %s %d", s.name, s.size_label, size);
    // Every variant (and the A/A copy of the first) is set up first, then
    // their repetitions alternate: round k runs each variant once, in an
    // order that rotates and reverses from round to round, so that drift
    // (another process, a warming cache, thermal limits) hits all alike.
    std::vector<LiveVariant> live(s.variants.size() + (noise_check ? 1 : 0));
    const double units = static_cast<double>(live.size()) * (2 * repetitions + 2);
    double done = 0;
    auto say = [&](const std::string& what) {
      if (options.progress) options.progress(key, what, std::min(1.0, done / units));
    };
    for (size_t i = 0; i < live.size(); ++i) {
      const Variant& v = i < s.variants.size() ? s.variants[i] : s.variants.front();
      say("setup " + v.name);
      Status st = Prepare(s, v, size, options, i < s.variants.size() ? "" : "-again", live[i]);
      if (!st.ok()) return context(st, v.name);
      ++done;
    }
    std::vector<size_t> order;
    for (size_t i = 0; i < live.size(); ++i) {
      if (!live[i].done()) order.push_back(i);
    }
    for (bool reads : {true, false}) {
      for (int k = 0; k < repetitions; ++k) {
        std::vector<size_t> round = order;
        if (!round.empty()) {
          std::rotate(round.begin(), round.begin() + k % round.size(), round.end());
        }
        // Rotated, and reversed every other full cycle of rotations (not
        // every other round: with two variants that would undo the
        // rotation), so each variant takes every position equally often.
        if (!round.empty() && (static_cast<size_t>(k) / round.size()) % 2 == 1) {
          std::reverse(round.begin(), round.end());
        }
        for (size_t i : round) {
          say(absl::StrFormat("%s %d/%d: %s%s", reads ? "reads" : "writes", k + 1, repetitions,
                              live[i].v->name, i < s.variants.size() ? "" : " (A/A copy)"));
          Status st = Repetition(s, options, reads, k, live[i]);
          if (!st.ok()) return context(st, live[i].v->name);
          ++done;
        }
      }
    }
    for (size_t i = 0; i < live.size(); ++i) {
      if (live[i].done()) continue;
      say("disk, compaction " + live[i].v->name);
      Status st = Finish(s, options, live[i]);
      if (!st.ok()) return context(st, live[i].v->name);
      ++done;
    }
    say("done");
    for (size_t i = 0; i < s.variants.size(); ++i) by_variant[i].push_back(std::move(live[i].m));
    if (noise_check && !live.back().m.failed() && !by_variant[0].back().failed()) {
      const Measurement& a = by_variant[0].back();
      const Measurement& again = live.back().m;
      NoiseCheck n;
      n.variant = a.variant;
      n.size = size;
      n.read_samples_again = again.read_samples;
      n.write_samples_again = again.write_samples;
      n.read_floor = NoiseFloor(a.read_samples, again.read_samples);
      n.write_floor = NoiseFloor(a.write_samples, again.write_samples);
      n.reads_tie = CompareRates(a.read_samples, again.read_samples) == Order::kTie;
      n.writes_tie = CompareRates(a.write_samples, again.write_samples) == Order::kTie;
      r.noise.push_back(std::move(n));
    }
  }
  for (auto& rows : by_variant) {
    for (Measurement& m : rows) r.rows.push_back(std::move(m));
  }
  // Every variant must hold the same logical data and answer the same.
  for (const Measurement& m : r.rows) {
    const Measurement* ref = nullptr;
    for (const Measurement& x : r.rows) {
      if (x.size == m.size && x.variant == r.variants.front()) ref = &x;
    }
    if (ref == nullptr || ref == &m || ref->failed() || m.failed()) continue;
    auto differ = [&](const char* what) {
      r.consistent = false;
      r.inconsistencies.push_back(absl::StrFormat("%s differs between %s and %s at %s %d", what,
                                                  ref->variant, m.variant, s.size_label, m.size));
    };
    if (m.answers != ref->answers) differ("the answer of a read");
    if (m.dump_before != ref->dump_before) differ("the data after setup");
    if (m.dump_after != ref->dump_after) differ("the data after the writes");
  }
  // The after-writes comparison proves something only if the writes changed
  // the data.
  for (const Measurement& m : r.rows) {
    if (!m.failed() && !m.dump_before.empty() && m.dump_before == m.dump_after) {
      r.consistent = false;
      r.inconsistencies.push_back(absl::StrFormat("the writes of %s did not change its data at %s %d",
                                                  m.variant, s.size_label, m.size));
    }
  }
  for (const LimitStep& l : s.limits) {
    StatusOr<LimitResult> lr = RunLimit(s, l, options);
    if (!lr.ok()) return lr.status().WithContext("scenario " + s.name + ", limit " + l.variant);
    r.limits.push_back(std::move(lr).value());
  }
  Summarize(r);
  return r;
}

advisor::AdviseOptions LabAdviseOptions() {
  advisor::AdviseOptions o;
  o.unused_index_days = 0;
  return o;
}

const std::vector<int64_t>& SizesFor(const Scenario& s, const RunOptions& options) {
  return options.sizes.empty() ? ProfileFor(s, options.mode).sizes : options.sizes;
}

std::string Thousands(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

}  // namespace rockdoc::lab

#include "runner.h"

#include <absl/strings/str_format.h>
#include <absl/strings/str_join.h>

#include <algorithm>
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

constexpr char kDb[] = "lab";

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

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

// One timed phase (the reads or the writes): `repetitions` runs of `count`
// operations, op numbers continuing from run to run. The let blocks are
// evaluated before the clock starts, only the operations inside it.
struct Phase {
  double median_ops_per_sec = 0;
  IoCounters io;  // summed over the runs (known when the engine has counters)
};

StatusOr<Phase> RunPhase(Backend& backend, const Env& base, DocumentView let,
                         const std::vector<Document>& ops, int count, int repetitions,
                         const std::function<void(int)>& progress) {
  Phase phase;
  phase.io.known = true;
  std::vector<double> rates;
  for (int r = 0; r < repetitions; ++r) {
    progress(r);
    std::vector<Env> envs;
    envs.reserve(count);
    for (int k = 0; k < count; ++k) {
      ROCKDOC_ASSIGN_OR_RETURN(Env e, OpEnv(base, let, int64_t{r} * count + k));
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
    rates.push_back(count / std::max(seconds, 1e-9));
    phase.io.known = phase.io.known && after.known;
    phase.io.bytes_read += after.bytes_read - before.bytes_read;
    phase.io.bytes_written += after.bytes_written - before.bytes_written;
    phase.io.wal_bytes += after.wal_bytes - before.wal_bytes;
  }
  phase.median_ops_per_sec = Median(rates);
  return phase;
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

// Throughput of a read:write mix from the separately measured rates.
double MixedRate(const Measurement& m, int64_t reads, int64_t writes) {
  if (m.failed() || m.read_ops_per_sec <= 0 || m.write_ops_per_sec <= 0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return static_cast<double>(reads + writes) /
         (reads / m.read_ops_per_sec + writes / m.write_ops_per_sec);
}

void Summarize(ScenarioResult& r) {
  for (Measurement& m : r.rows) {
    m.mixed_ops_per_sec.clear();
    for (auto [reads, writes] : r.mixes) m.mixed_ops_per_sec.push_back(MixedRate(m, reads, writes));
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
    auto best = [&](auto key, bool higher) {
      return *std::max_element(rows.begin(), rows.end(), [&](Measurement* a, Measurement* b) {
        return higher ? key(a) < key(b) : key(a) > key(b);
      });
    };
    auto worst = [&](auto key, bool higher) { return best(key, !higher); };
    auto reads = [](Measurement* m) { return m->read_ops_per_sec; };
    auto writes = [](Measurement* m) { return m->write_ops_per_sec; };
    auto disk = [](Measurement* m) { return static_cast<double>(m->storage_bytes); };
    auto doc = [](Measurement* m) { return static_cast<double>(m->max_doc_bytes); };
    Measurement* br = best(reads, true);
    Measurement* bw = best(writes, true);
    Measurement* bd = best(disk, false);
    Measurement* big = best(doc, true);
    for (Measurement* m : rows) {
      std::vector<std::string> parts;
      if (m == br) parts.push_back("fastest reads");
      if (m == bw) parts.push_back("fastest writes");
      if (m == bd) parts.push_back("smallest on disk");
      if (parts.empty()) {
        parts.push_back(absl::StrFormat("reads %s, writes %s of best",
                                        Ratio(m->read_ops_per_sec, br->read_ops_per_sec),
                                        Ratio(m->write_ops_per_sec, bw->write_ops_per_sec)));
      }
      m->verdict = absl::StrJoin(parts, ", ");
    }
    if (rows.size() >= 2) {
      r.verdict.push_back(absl::StrFormat(
          "%s %d: reads fastest with %s (%s the slowest), writes fastest with %s (%s the "
          "slowest); least disk: %s; largest document: %s, %d bytes (%.3f%% of 16 MiB)",
          r.size_label, size, br->variant,
          Ratio(br->read_ops_per_sec, worst(reads, true)->read_ops_per_sec), bw->variant,
          Ratio(bw->write_ops_per_sec, worst(writes, true)->write_ops_per_sec), bd->variant,
          big->variant, big->max_doc_bytes, 100 * big->max_doc_share));
      std::vector<std::string> mixes;
      for (size_t i = 0; i < r.mixes.size(); ++i) {
        auto mixed = [i](Measurement* m) { return m->mixed_ops_per_sec[i]; };
        Measurement* bm = best(mixed, true);
        mixes.push_back(absl::StrFormat("%d:%d %s (%s the slowest)", r.mixes[i].first,
                                        r.mixes[i].second, bm->variant,
                                        Ratio(mixed(bm), worst(mixed, true)->mixed_ops_per_sec[i])));
      }
      if (!mixes.empty()) {
        r.verdict.push_back(absl::StrFormat("%s %d, best at read:write %s", r.size_label, size,
                                            absl::StrJoin(mixes, "; ")));
      }
      // The rules of thumb: does the claimed variant win here?
      // The figure a metric ranks by (higher is better but for disk).
      auto value = [&](Measurement* m, const std::string& metric) -> double {
        if (metric == "reads") return m->read_ops_per_sec;
        if (metric == "writes") return m->write_ops_per_sec;
        if (metric == "disk") return -static_cast<double>(m->storage_bytes);
        for (size_t i = 0; i < r.mixes.size(); ++i) {
          if (metric == absl::StrFormat("%d:%d", r.mixes[i].first, r.mixes[i].second)) {
            return m->mixed_ops_per_sec[i];
          }
        }
        return std::numeric_limits<double>::quiet_NaN();
      };
      auto what = [](const std::string& metric) -> std::string {
        if (metric == "reads") return "the fastest reads";
        if (metric == "writes") return "the fastest writes";
        if (metric == "disk") return "the least disk";
        return "the most ops/s at " + metric;
      };
      for (const RuleOfThumb& rule : r.rules) {
        std::vector<std::string> parts;
        for (const Claim& c : rule.claims) {
          if (size < c.from || size > c.to) continue;
          auto claimed = std::find_if(rows.begin(), rows.end(),
                                      [&](Measurement* m) { return m->variant == c.variant; });
          if (claimed == rows.end()) continue;  // e.g. it cannot hold this size
          Measurement* w = best([&](Measurement* m) { return value(m, c.metric); }, true);
          const bool alike =
              std::find(c.alike.begin(), c.alike.end(), w->variant) != c.alike.end();
          RuleCheck check{rule.text, c.variant, c.metric, size, w->variant, w == *claimed || alike};
          // Within kTie of the winner is a tie, not a loss: rates vary by a
          // few percent between runs.
          constexpr double kTie = 0.05;
          const double a = value(*claimed, c.metric), b = value(w, c.metric);
          check.tie = !check.agrees && std::fabs(a - b) <= kTie * std::fabs(b);
          if (check.agrees) {
            parts.push_back(absl::StrFormat("agrees: %s has %s", w->variant, what(c.metric)));
          } else if (check.tie) {
            parts.push_back(absl::StrFormat("ties: %s within 5%% of %s for %s", c.variant,
                                            w->variant, what(c.metric)));
          } else {
            parts.push_back(absl::StrFormat("DISAGREES: %s has %s, not %s", w->variant,
                                            what(c.metric), c.variant));
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
      q->verdict = absl::StrFormat("rockdoc %s: reads %s, writes %s of SQLite", q->mirrors,
                                   Ratio((*mirrored)->read_ops_per_sec, q->read_ops_per_sec),
                                   Ratio((*mirrored)->write_ops_per_sec, q->write_ops_per_sec));
      vs.push_back(absl::StrFormat("%s reads %s, writes %s", q->mirrors,
                                   Ratio((*mirrored)->read_ops_per_sec, q->read_ops_per_sec),
                                   Ratio((*mirrored)->write_ops_per_sec, q->write_ops_per_sec)));
    }
    if (!vs.empty()) {
      r.verdict.push_back(absl::StrFormat("%s %d, rockdoc vs SQLite: %s", r.size_label, size,
                                          absl::StrJoin(vs, "; ")));
    }
  }
}

}  // namespace

Env BaseEnv(const Scenario& s, Mode mode, int64_t size) {
  Env env;
  env.Set("n", IntValue(size));
  // Params may be templates over $$n and earlier params. A profile's value
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

StatusOr<Measurement> RunVariant(const Scenario& s, const Variant& v, int64_t size,
                                 const RunOptions& options) {
  const Profile& profile = ProfileFor(s, options.mode);
  const int repetitions = options.repetitions > 0 ? options.repetitions : profile.repetitions;
  const std::string dir = options.work_dir + "/" + s.name + "/" + v.name + "-" +
                          std::to_string(size);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  auto say = [&](const std::string& what) {
    if (options.progress) {
      options.progress(absl::StrFormat("[%s] %s %s=%d: %s", s.name, v.name, s.size_label, size,
                                       what));
    }
  };

  Measurement m;
  m.variant = v.name;
  m.size = size;
  m.engine = v.engine == EngineKind::kSqlite ? "sqlite" : "rockdoc";
  m.mirrors = v.mirrors;
  auto unmeasured = [&](std::string why, int32_t code) {
    m.error = std::move(why);
    m.error_code = code;
    for (double* f : {&m.read_ops_per_sec, &m.write_ops_per_sec, &m.keys_examined,
                      &m.docs_examined, &m.read_bytes_per_op, &m.written_bytes_per_op,
                      &m.wal_bytes_per_op, &m.avg_doc_bytes, &m.max_doc_share}) {
      *f = kUnknown;
    }
  };
  if (v.max_size > 0 && size > v.max_size) {
    say("not run: above the variant's maxSize");
    unmeasured(absl::StrFormat("not run above the variant's maxSize (%d)", v.max_size), 0);
    return m;
  }
  const Env base = BaseEnv(s, options.mode, size);
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<Backend> db, Backend::Open(v.engine, dir));

  say("setup");
  {
    Env env(&base);
    Status st = db->executor().Run(v.setup.ops, env);
    if (!st.ok() && std::count(v.setup_may_fail.begin(), v.setup_may_fail.end(),
                               st.code_number()) > 0) {
      // The variant cannot hold this size: a row that says so.
      // The error without the operation it came from (the whole template).
      std::string why(st.message());
      if (size_t at = why.rfind("}: "); at != std::string::npos) why = why.substr(at + 3);
      unmeasured(why, st.code_number());
      say("setup failed as allowed: " + st.ToString());
      db->Close().IgnoreError();
      db.reset();
      std::filesystem::remove_all(dir, ec);
      return m;
    }
    ROCKDOC_RETURN_IF_ERROR(st);
    ROCKDOC_ASSIGN_OR_RETURN(m.dump_before, Dump(db->executor(), v, base));
  }
  ROCKDOC_RETURN_IF_ERROR(db->Reopen());

  // The answers of the first reads, with their explain figures (averaged
  // over the same reads; rockdoc only), untimed; this also warms the cache.
  const int answered = std::min(options.answers_compared, profile.read_ops);
  {
    ExplainTotals totals;
    Executor& exec = db->executor();
    exec.set_explain(&totals);
    for (int k = 0; k < answered; ++k) {
      ROCKDOC_ASSIGN_OR_RETURN(Env e, OpEnv(base, s.read_let, k));
      Env run(&e);
      StatusOr<Value> answer = exec.RunForAnswer(v.read, run);
      if (!answer.ok()) {
        exec.set_explain(nullptr);
        return answer.status();
      }
      m.answers.push_back(CanonicalJson(answer->element()));
    }
    exec.set_explain(nullptr);
    const bool explained = db->engine() == EngineKind::kRockdoc && answered > 0;
    m.keys_examined = explained ? static_cast<double>(totals.keys_examined) / answered : kUnknown;
    m.docs_examined = explained ? static_cast<double>(totals.docs_examined) / answered : kUnknown;
  }

  auto progress = [&](const char* what, int reps) {
    return [&say, what, reps](int r) { say(absl::StrFormat("%s %d/%d", what, r + 1, reps)); };
  };
  ROCKDOC_ASSIGN_OR_RETURN(Phase reads, RunPhase(*db, base, s.read_let, v.read.ops,
                                                 profile.read_ops, repetitions,
                                                 progress("reads", repetitions)));
  ROCKDOC_ASSIGN_OR_RETURN(Phase writes, RunPhase(*db, base, s.write_let, v.write.ops,
                                                  profile.write_ops, repetitions,
                                                  progress("writes", repetitions)));
  const double n_reads = static_cast<double>(repetitions) * profile.read_ops;
  const double n_writes = static_cast<double>(repetitions) * profile.write_ops;
  m.read_ops_per_sec = reads.median_ops_per_sec;
  m.write_ops_per_sec = writes.median_ops_per_sec;
  m.read_bytes_per_op = reads.io.known ? reads.io.bytes_read / n_reads : kUnknown;
  m.written_bytes_per_op = writes.io.known ? writes.io.bytes_written / n_writes : kUnknown;
  m.wal_bytes_per_op = writes.io.known ? writes.io.wal_bytes / n_writes : kUnknown;
  ROCKDOC_ASSIGN_OR_RETURN(m.dump_after, Dump(db->executor(), v, base));

  ROCKDOC_ASSIGN_OR_RETURN(DocSizes sizes, db->Sizes());
  m.documents = sizes.documents;
  m.avg_doc_bytes = sizes.avg_bytes;
  m.max_doc_bytes = sizes.max_bytes;
  m.max_doc_share = static_cast<double>(m.max_doc_bytes) / kMaxBsonObjectSize;

  ROCKDOC_RETURN_IF_ERROR(db->Reopen());
  ROCKDOC_ASSIGN_OR_RETURN(m.storage_bytes, db->DiskBytes());
  ROCKDOC_RETURN_IF_ERROR(db->Close());
  db.reset();
  std::filesystem::remove_all(dir, ec);
  return m;
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
      options.progress(absl::StrFormat("[%s] limit %s: step %d, document %d bytes", s.name,
                                       l.variant, step, last.size()));
    }
    Env env(&base);
    env.Set("step", IntValue(step));
    Status st = exec.Run(l.step, env);
    if (!st.ok()) {
      r.failed = true;
      r.code = st.code_number();
      r.message = std::string(st.message());
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
  r.sizes = ProfileFor(s, options.mode).sizes;
  r.mixes = s.mixes;
  r.rules = s.rules;
  for (const Variant& v : s.variants) {
    r.variants.push_back(v.name);
    for (int64_t size : r.sizes) {
      StatusOr<Measurement> m = RunVariant(s, v, size, options);
      if (!m.ok()) {
        return m.status().WithContext(
            absl::StrFormat("scenario %s, variant %s, size %d", s.name, v.name, size));
      }
      r.rows.push_back(std::move(m).value());
    }
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

}  // namespace rockdoc::lab

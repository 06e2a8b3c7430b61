// tools/lab/runner.h: runs a scenario's variants at each size and measures
// them.
//
// Each (variant, size) gets a fresh database directory:
//   setup -> dump -> close and reopen (the data leaves the memtable, so reads
//   come from SST files as in a long-running database) -> answers and explain
//   (untimed) -> timed reads -> timed writes -> dump -> document sizes ->
//   close and reopen (flush) -> live SST bytes -> compaction -> live SST
//   bytes -> close; then, on request, the schema advisor over the database
//   (rockdoc variants) and the directory kept (RunOptions::keep_dir).
#ifndef ROCKDOC_TOOLS_LAB_RUNNER_H_
#define ROCKDOC_TOOLS_LAB_RUNNER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "rockdoc/advisor.h"
#include "rockdoc/status.h"
#include "scenario.h"
#include "verdict.h"

namespace rockdoc::lab {

// A figure an engine cannot measure (SQLite has no explain counters of
// keys/documents examined, nor I/O statistics) is NaN: "-" in the tables, null
// in results.json, left out of the charts.
struct Measurement {
  std::string variant;
  int64_t size = 0;
  std::string engine = "rockdoc";  // or "sqlite"
  std::string mirrors;             // sqlite: the rockdoc variant it is compared with
  // Set when setup failed with one of the variant's setupMayFail codes (the
  // variant cannot hold this size); nothing else is measured then.
  std::string error;
  int32_t error_code = 0;
  double read_ops_per_sec = 0;   // median over repetitions
  double write_ops_per_sec = 0;  // median over repetitions
  // Every repetition's rate (ops/s), in the order they ran, and the median's
  // confidence interval (verdict.h).
  std::vector<double> read_samples;
  std::vector<double> write_samples;
  Interval read_interval;
  Interval write_interval;
  double queries_per_read = 0;   // query commands one read sends (rockdoc: explained)
  double keys_examined = 0;      // per read, from explain (all queries of one read)
  double docs_examined = 0;
  double read_bytes_per_op = 0;     // StorageStats.bytes_read delta per read
  double written_bytes_per_op = 0;  // StorageStats.bytes_written delta per write
  double wal_bytes_per_op = 0;      // StorageStats.wal_bytes delta per write
  double read_bytes_per_write = 0;  // StorageStats.bytes_read delta per write: its lookups
  int64_t documents = 0;            // in every collection, after the writes
  double avg_doc_bytes = 0;
  int64_t max_doc_bytes = 0;
  double max_doc_share = 0;  // of 16 MiB
  // Disk: live SST bytes (SQLite: the database file) after a full
  // compaction (VACUUM), i.e. what the schema's data costs; and before it,
  // right after a flush: what the writes' overwritten versions leave behind.
  uint64_t storage_bytes = 0;
  uint64_t storage_bytes_before_compaction = 0;
  // With the variant's "observe": of `observed_writes` writes run one
  // operation at a time, how many a reader checking between the operations
  // saw half done (NaN without "observe").
  int64_t observed_writes = 0;
  double torn_writes = std::numeric_limits<double>::quiet_NaN();
  // Canonical Extended JSON of the answers of the first reads (same op
  // numbers in every variant), and of the dumps before and after the writes.
  std::vector<std::string> answers;
  std::string dump_before;
  std::string dump_after;
  std::vector<double> mixed_ops_per_sec;  // one per scenario mix
  // Per mix, one rate per repetition (the i-th read and write repetitions
  // combined), for the verdicts.
  std::vector<std::vector<double>> mixed_samples;
  // sqlite rows: the mirrored rockdoc variant's rates over this row's.
  double rockdoc_read_ratio = 0;
  double rockdoc_write_ratio = 0;
  std::string verdict;  // filled in by Summarize
  // Where the database was left (RunOptions::keep_dir), or "".
  std::string kept_dir;
  // The schema advisor's findings over the database as measured (after the
  // writes and the compaction), when RunOptions::advise and the variant
  // runs on rockdoc (the advisor reads rockdoc databases only).
  std::optional<advisor::AdviseReport> advice;
  bool failed() const { return !error.empty(); }
};

struct LimitResult {
  std::string title;
  std::string variant;
  std::string label;  // what the step builds (LimitStep::label), or ""
  int64_t steps_ok = 0;          // successful steps before the failure
  bool failed = false;           // a step failed before max_steps
  int32_t code = 0;              // its error code
  std::string message;
  int64_t last_doc_bytes = 0;    // the watched document before the failing step
  bool unchanged_after_failure = false;  // byte-identical after the failure
  std::string measure;           // canonical JSON of the "measure" expression
  bool as_expected = false;      // failed with expect_code and left the document unchanged
};

// One claim of a rule of thumb checked at one size.
struct RuleCheck {
  std::string rule;     // its text
  size_t claim = 0;     // which of the rule's claims (two may share a variant and metric)
  std::string variant;  // claimed winner
  std::string metric;   // reads, writes, disk, "1000:1"
  int64_t size = 0;
  std::string winner;   // the winner by the deciding evidence
  bool agrees = false;
  bool tie = false;     // neither: the evidence cannot separate them
  bool undecided = false;  // a tie because too few repetitions were run (--tiny)
  std::string decided_by;  // the cost or time figure that decided, "" for a tie
  std::string evidence;    // one line, with the figures
  std::string caveat;      // when a cost points the other way than the rates
  std::string source;      // Claim::source and Claim::quote
  std::string quote;
};

// The A/A check at one size: the scenario's first variant run twice, as two
// variants interleaved with the others. Its two medians differ only by
// noise; the larger of kMinEffect and that difference is the smallest
// difference of rates the verdicts call a difference at this size.
struct NoiseCheck {
  std::string variant;
  int64_t size = 0;
  double read_floor = 0;   // |median A - median A'| / min, reads
  double write_floor = 0;  // same, writes
  bool reads_tie = true;   // the verdict rule calls A and A' a tie
  bool writes_tie = true;
  std::vector<double> read_samples_again;  // A' (A's are in its row)
  std::vector<double> write_samples_again;
};

struct ScenarioResult {
  std::string name;
  std::string title;
  std::string description;
  std::string size_label;
  std::string mode;
  std::vector<std::string> variants;
  std::vector<int64_t> sizes;
  std::vector<std::pair<int64_t, int64_t>> mixes;  // (reads, writes)
  std::vector<RuleOfThumb> rules;
  std::vector<RuleCheck> rule_checks;
  std::vector<Measurement> rows;  // variant-major, sizes in order
  std::vector<std::string> variant_descriptions;  // one per variant
  // The scenario's params as a reader should see them in the prose: the
  // value with its unit ("4,000 bytes"), or the values at each size when
  // they depend on $$n ("512 / 8,192 / 131,072 bytes"). In params order.
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<NoiseCheck> noise;  // one per size (none in test mode)
  std::vector<LimitResult> limits;
  bool consistent = true;         // every variant gave the same answers and dumps
  std::vector<std::string> inconsistencies;
  std::vector<std::string> verdict;  // one line per size
};

struct RunOptions {
  Mode mode = Mode::kFull;
  std::string work_dir;  // scratch space for the databases (emptied per run)
  // Progress: called with the line's key ("blog-comments, comments per post
  // 100"), what runs now ("reads 2/5") and the fraction of that line's work
  // done, in [0, 1]. May be empty.
  std::function<void(const std::string& key, const std::string& what, double done)> progress;
  // The A/A check (the first variant run twice); off in test mode, where
  // one repetition measures nothing.
  bool noise_check = true;
  // How many reads' answers are compared across variants.
  int answers_compared = 10;
  // When positive, replaces the profile's repetitions.
  int repetitions = 0;
  // When not empty, replaces the profile's sizes (the values of $$n).
  std::vector<int64_t> sizes;
  // When not empty, each measured variant's database is moved there after
  // its figures, as <keep_dir>/<scenario>/<variant>-<size> (a directory of
  // that name already there is replaced), instead of deleted: rockdoc
  // variants a rockdoc directory (open it with `rockdoc`, `rockdoc-advise`),
  // SQLite ones a directory holding
  // `lab.sqlite`. The A/A copy and the limits'
  // databases are not kept.
  std::string keep_dir;
  // Runs the schema advisor (rockdoc/advisor.h) over each rockdoc
  // variant's database once measured, with LabAdviseOptions(); the findings go
  // into Measurement::advice and the reports.
  bool advise = false;
};

// The advisor's options for the lab's databases: its defaults, except that
// an index no operation of the scenario used is reported however new it is
// (unused_index_days 0): the run is the database's whole workload. The same
// as `rockdoc-advise --unusedIndexDays 0 DIR` over a kept directory.
advisor::AdviseOptions LabAdviseOptions();

// The sizes a run measures: RunOptions::sizes, or else the profile's.
const std::vector<int64_t>& SizesFor(const Scenario& s, const RunOptions& options);

// Runs one variant at one size (alone: no interleaving, no A/A check).
StatusOr<Measurement> RunVariant(const Scenario& s, const Variant& v, int64_t size,
                                 const RunOptions& options);
// Runs one limit step.
StatusOr<LimitResult> RunLimit(const Scenario& s, const LimitStep& l, const RunOptions& options);
// Runs everything of a scenario and checks that the variants agree.
StatusOr<ScenarioResult> RunScenario(const Scenario& s, const RunOptions& options);
// The verdicts of a measured scenario (RunScenario's last step): each row's
// `verdict`, `mixed_ops_per_sec` and `mixed_samples`, and `r.verdict` and
// `r.rule_checks`, from r.rows, r.noise, r.rules, r.mixes and r.sizes alone
// (no I/O, no clock), so that tests can feed it synthetic samples. Clears
// and refills what it fills.
void Summarize(ScenarioResult& r);

// Prose with every placeholder resolved: "$$name", "`name`" and a bare
// camelCase param name become the param's value with its unit (see
// ScenarioResult::params), "$$n" the sizes; no "$$" is left.
std::string ResolveProse(const ScenarioResult& r, std::string_view text);
// The texts of ScenarioResult::params.
std::vector<std::pair<std::string, std::string>> ParamTexts(const Scenario& s, Mode mode,
                                                            const std::vector<int64_t>& sizes);

// The environment every operation of a scenario at `size` starts from:
// params (profile overrides applied) and $$n.
Env BaseEnv(const Scenario& s, Mode mode, int64_t size);

// An integer with thousands separators (30,000), as the reports print sizes.
std::string Thousands(int64_t v);

}  // namespace rockdoc::lab

#endif  // ROCKDOC_TOOLS_LAB_RUNNER_H_

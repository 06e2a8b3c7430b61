// tools/lab/verdict.h: the lab's statistics and verdicts, as pure functions
// of the measured samples and costs (no I/O, no clock), so that tests can
// feed them synthetic samples.
//
// A timed figure is a set of repetitions. It is summarised by its median and
// a distribution-free confidence interval for the median (order statistics:
// the narrowest symmetric pair [x(k), x(n+1-k)] whose coverage is at least 95%,
// or min..max when n is too small for 95%: 93.75% at n = 5). Two figures
// differ only when their intervals do not overlap and their medians differ by
// at least a minimum effect (the run's noise floor); else they tie.
//
// A claim ("variant V wins metric M") is judged on what was measured:
// first time, when the metric has one: a difference of rates beyond the
// intervals decides, and the deterministic costs (keys and documents
// examined, bytes read and written, disk after compaction), which have no
// noise, only explain it, or are named when they point the other way
// ("X is faster, but costs more (...)"). Where the rates tie, the costs
// decide, lexicographically: the variants within kTiedTimeCostTolerance of
// the lowest cost stay in, the rest are out; when only the claimed variant
// (or its alikes) remains the claim agrees, when it is out it disagrees,
// else it is a tie. A cost decides so only when no later cost points the
// other way between the two it compares (beyond the same tolerance): then
// it is a tie whose evidence names both costs. A metric with no time (disk) is judged on its costs
// alone, within kCostTolerance. Fewer than kMinRepetitions repetitions
// decide nothing: the verdict says so. The verdict names the evidence that
// decided it. Nothing depends on the order of the candidates.
#ifndef ROCKDOC_TOOLS_LAB_VERDICT_H_
#define ROCKDOC_TOOLS_LAB_VERDICT_H_

#include <string>
#include <vector>

namespace rockdoc::lab {

// Two deterministic costs closer than this (relative to the lower) are
// equal: a 2% difference in bytes is not one a schema decision should rest
// on.
inline constexpr double kCostTolerance = 0.02;
// Where the rates tie, a cost must differ by more than this to decide: the
// rates say the difference does not show, and a smaller gap in a proxy
// (bytes, keys) is not evidence against them. Beside rates that differ, a
// cost is named (as explaining or opposing them) past the same gap.
inline constexpr double kTiedTimeCostTolerance = 0.10;
// The smallest difference of medians called a difference, whatever the
// intervals say (rates drift by a few percent on a shared machine). The run's
// A/A check can raise it (see JudgeOptions).
inline constexpr double kMinEffect = 0.05;

// Fewer repetitions than this never make a difference of rates: at 5, the
// min..max interval covers the median with 93.75%; below, with much less.
inline constexpr size_t kMinRepetitions = 5;

struct Interval {
  double median = 0;
  double lo = 0;
  double hi = 0;
  double coverage = 0;  // of the interval [lo, hi], e.g. 0.9375 for n = 5
  int n = 0;
};

// The median of `samples` and its order-statistic confidence interval. An
// empty sample gives n = 0 and NaNs.
Interval MedianInterval(std::vector<double> samples);

enum class Order { kFirst, kSecond, kTie };

// Which sample set has the higher values (higher is better: rates): kFirst
// or kSecond only when both have at least kMinRepetitions samples, the two
// intervals are disjoint and the medians differ by at least `min_effect`
// (relative to the lower median); else kTie.
// Compare(a, b) mirrors Compare(b, a).
Order CompareRates(const std::vector<double>& a, const std::vector<double>& b,
                   double min_effect = kMinEffect);

// One variant as a claim sees it.
struct Candidate {
  std::string name;
  // Deterministic costs, lower is better, in the order they are consulted.
  // Every candidate has the same cost names in the same order; a NaN cost
  // (an engine cannot measure it) skips that cost for all.
  std::vector<double> costs;
  // Timed repetitions, higher is better (ops/s); empty when the metric has
  // no time (disk).
  std::vector<double> samples;
};

struct JudgeOptions {
  std::vector<std::string> cost_names;  // one per Candidate::costs entry
  std::string time_name = "ops/s";      // "reads/s"
  double min_effect = kMinEffect;
};

enum class VerdictKind { kAgrees, kTie, kDisagrees };

struct ClaimVerdict {
  VerdictKind kind = VerdictKind::kTie;
  std::string winner;    // the best candidate by the deciding evidence (or the tie's best)
  std::string decided_by;  // a cost name, the time name, or "" for a tie on everything
  // One line of figures: "bytes written/op: 0-indexes 296 vs 1-index 324".
  // Never the verdict's own word ("tie", "agrees"): the sentence that quotes
  // the evidence says it, once.
  std::string evidence;
  // Set when a deterministic cost points the other way than the rates
  // that decided: "X is faster, but costs more (bytes written/write: ...)".
  std::string caveat;
  // Set (with kind kTie) when a candidate has fewer than kMinRepetitions
  // repetitions: nothing was decided, not even a tie.
  bool too_few_repetitions = false;
  // Set when the rates tied and a cost decided: the winner is the cheaper,
  // not the faster.
  bool rates_tied = false;
  // Set (with kind kTie) when the rates tied and two costs pointed opposite
  // ways past kTiedTimeCostTolerance: the evidence names both.
  bool costs_conflict = false;
};

// Judges "one of `claimed` wins" among `candidates` (at least one claimed
// candidate must be among them).
ClaimVerdict JudgeClaim(const std::vector<Candidate>& candidates,
                        const std::vector<std::string>& claimed, const JudgeOptions& options);

// The noise floor of an A/A pair (the same variant twice): the relative
// difference of the two medians, |a - b| / min(a, b); 0 when either is empty.
double NoiseFloor(const std::vector<double>& a, const std::vector<double>& b);

// "12.3k [11.9k, 12.8k]"-style text of a rate interval.
std::string FormatInterval(const Interval& i);
std::string FormatQuantity(double v);

}  // namespace rockdoc::lab

#endif  // ROCKDOC_TOOLS_LAB_VERDICT_H_

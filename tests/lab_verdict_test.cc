// The lab's statistics and verdicts (tools/lab/verdict.h) on synthetic
// samples: what a noisy shared machine produces, with known truth.
#include "verdict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace rockdoc::lab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// `n` rates around `center` with multiplicative noise of +-`spread`
// (uniform), from a fixed seed: the same samples on every run.
std::vector<double> Rates(double center, double spread, int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> noise(-spread, spread);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1 + noise(gen)));
  return v;
}

Candidate Timed(const std::string& name, std::vector<double> samples,
                std::vector<double> costs = {}) {
  return Candidate{name, std::move(costs), std::move(samples)};
}

JudgeOptions TimeOnly() {
  JudgeOptions o;
  o.time_name = "reads/s";
  return o;
}

TEST(LabStatsTest, MedianIntervalIsAnOrderStatisticInterval) {
  Interval i = MedianInterval({5, 1, 4, 2, 3});
  EXPECT_EQ(i.median, 3);
  EXPECT_EQ(i.n, 5);
  // At 5 samples no pair of order statistics reaches 95%: min..max, 93.75%.
  EXPECT_EQ(i.lo, 1);
  EXPECT_EQ(i.hi, 5);
  EXPECT_DOUBLE_EQ(i.coverage, 1 - 2.0 / 32);
  // At 20, [x(6), x(15)] covers 95.9%; [x(7), x(14)] only 88.5%.
  std::vector<double> twenty;
  for (int k = 1; k <= 20; ++k) twenty.push_back(k);
  std::shuffle(twenty.begin(), twenty.end(), std::mt19937(7));
  i = MedianInterval(twenty);
  EXPECT_EQ(i.median, 10.5);
  EXPECT_EQ(i.lo, 6);
  EXPECT_EQ(i.hi, 15);
  EXPECT_GE(i.coverage, 0.95);
  EXPECT_LT(i.coverage, 0.97);
  i = MedianInterval({});
  EXPECT_EQ(i.n, 0);
  EXPECT_TRUE(std::isnan(i.median));
}

// The same distribution twice is a tie: the A/A case. Five samples each
// separate completely by chance with probability 2/252 (0.8%, the rank
// test's level), so over 1,000 pairs a few may; far fewer than 5% must.
TEST(LabVerdictTest, IdenticalDistributionsTie) {
  int differ = 0;
  for (unsigned seed = 1; seed <= 1000; ++seed) {
    const auto a = Rates(50000, 0.15, 5, seed), b = Rates(50000, 0.15, 5, seed + 5000);
    const ClaimVerdict v = JudgeClaim({Timed("a", a), Timed("b", b)}, {"a"}, TimeOnly());
    ASSERT_EQ(v.kind == VerdictKind::kTie, CompareRates(a, b) == Order::kTie);
    if (v.kind != VerdictKind::kTie) {
      ++differ;
    } else {
      // The figures, without the verdict's word: the sentence quoting
      // them says "tie" once (not "tie (tie (within noise): ...").
      EXPECT_THAT(v.evidence, ::testing::StartsWith("reads/s: a "));
      EXPECT_THAT(v.evidence, Not(HasSubstr("tie")));
    }
  }
  EXPECT_LE(differ, 15) << "of 1000 A/A pairs";
  // The one-sided 5% rule this replaces called 0.6% ahead a win: no more.
  const std::vector<double> a = {10060, 10061, 10062, 10063, 10064};
  const std::vector<double> b = {10000, 10001, 10002, 10003, 10004};
  EXPECT_EQ(JudgeClaim({Timed("a", a), Timed("b", b)}, {"a"}, TimeOnly()).kind,
            VerdictKind::kTie);
}

// A clear shift (1.5x with 10% noise) names the right winner, whichever
// variant the claim is about and in whichever order the candidates come.
TEST(LabVerdictTest, AClearShiftGivesTheRightWinner) {
  const auto fast = Rates(75000, 0.10, 5, 1), slow = Rates(50000, 0.10, 5, 2);
  EXPECT_EQ(CompareRates(fast, slow), Order::kFirst);
  EXPECT_EQ(CompareRates(slow, fast), Order::kSecond);
  const ClaimVerdict right =
      JudgeClaim({Timed("fast", fast), Timed("slow", slow)}, {"fast"}, TimeOnly());
  EXPECT_EQ(right.kind, VerdictKind::kAgrees);
  EXPECT_EQ(right.winner, "fast");
  EXPECT_EQ(right.decided_by, "reads/s");
  EXPECT_THAT(right.evidence, HasSubstr("reads/s: fast"));
  const ClaimVerdict wrong =
      JudgeClaim({Timed("slow", slow), Timed("fast", fast)}, {"slow"}, TimeOnly());
  EXPECT_EQ(wrong.kind, VerdictKind::kDisagrees);
  EXPECT_EQ(wrong.winner, "fast");
}

// Swapping the variants swaps the verdict, and never turns a loss into a
// tie (the old 5% rule was one-sided: 0.6% ahead agreed, 6% behind
// disagreed).
TEST(LabVerdictTest, TheRuleIsSymmetric) {
  for (unsigned seed = 1; seed <= 100; ++seed) {
    for (double ratio : {1.0, 1.03, 1.06, 1.2, 2.0}) {
      const auto a = Rates(10000 * ratio, 0.05, 5, seed), b = Rates(10000, 0.05, 5, seed + 500);
      const Order ab = CompareRates(a, b), ba = CompareRates(b, a);
      ASSERT_EQ(ab == Order::kFirst, ba == Order::kSecond) << seed << " " << ratio;
      ASSERT_EQ(ab == Order::kTie, ba == Order::kTie) << seed << " " << ratio;
      const ClaimVerdict va = JudgeClaim({Timed("a", a), Timed("b", b)}, {"a"}, TimeOnly());
      const ClaimVerdict vb = JudgeClaim({Timed("b", b), Timed("a", a)}, {"b"}, TimeOnly());
      ASSERT_EQ(va.kind == VerdictKind::kAgrees, vb.kind == VerdictKind::kDisagrees)
          << seed << " " << ratio;
      ASSERT_EQ(va.kind == VerdictKind::kTie, vb.kind == VerdictKind::kTie) << seed << " " << ratio;
    }
  }
  // Within the minimum effect (3% apart, no noise at all): a tie both ways.
  const std::vector<double> a(5, 10300), b(5, 10000);
  EXPECT_EQ(CompareRates(a, b), Order::kTie);
  EXPECT_EQ(CompareRates(b, a), Order::kTie);
}

// Below 5 repetitions there is no interval: never a difference.
TEST(LabVerdictTest, TooFewRepetitionsNeverDecide) {
  EXPECT_EQ(CompareRates({100}, {10}), Order::kTie);
  EXPECT_EQ(CompareRates({100, 101, 99, 100}, {10, 11, 9, 10}), Order::kTie);
}

// Where time is a tie, a deterministic cost decides, when it differs by
// more than 10%; a smaller gap against tied rates is a tie.
TEST(LabVerdictTest, ADeterministicCostDecidesWhereTimeTies) {
  JudgeOptions o;
  o.cost_names = {"I/O bytes/write"};
  o.time_name = "writes/s";
  const auto same1 = Rates(30000, 0.2, 5, 3), same2 = Rates(30000, 0.2, 5, 4);
  // index-count: 0 indexes write 296 bytes, 1 index 324, 10 indexes 556.
  std::vector<Candidate> c = {Timed("0-indexes", same2, {296}),
                              Timed("10-indexes", same1, {556})};
  ClaimVerdict v = JudgeClaim(c, {"0-indexes"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kAgrees);
  EXPECT_EQ(v.decided_by, "I/O bytes/write");
  EXPECT_THAT(v.evidence, HasSubstr("rates tie (writes/s: 0-indexes "));
  EXPECT_THAT(v.evidence, HasSubstr("I/O bytes/write: 0-indexes 296 vs 10-indexes 556"));
  v = JudgeClaim(c, {"10-indexes"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kDisagrees);
  EXPECT_EQ(v.winner, "0-indexes");
  // 296 against 324 is 9.5%: under the tolerance, with tied rates a tie.
  std::vector<Candidate> close = {Timed("0-indexes", same2, {296}),
                                  Timed("1-index", same1, {324})};
  v = JudgeClaim(close, {"0-indexes"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kTie);
  EXPECT_THAT(v.evidence, Not(HasSubstr("tie")));
  EXPECT_THAT(v.evidence, HasSubstr("costs within 10%"));
  // A cost nobody can measure (NaN: SQLite) is skipped, not a win.
  std::vector<Candidate> unknown = {Timed("a", same1, {NAN}), Timed("b", same2, {100})};
  EXPECT_EQ(JudgeClaim(unknown, {"a"}, o).kind, VerdictKind::kTie);
}

// Rates that differ beyond their intervals decide, whatever a cost says;
// a cost pointing the other way is said beside them ("faster, but costs
// more"). one-to-one: embedded writes 66.7k/s against linked 40.5k, but
// writes 137 bytes against 119.
TEST(LabVerdictTest, TimeDecidesAndAnOppositeCostIsSaid) {
  JudgeOptions o;
  o.cost_names = {"I/O bytes/write"};
  o.time_name = "writes/s";
  const std::vector<Candidate> c = {Timed("embedded", Rates(66700, 0.05, 5, 11), {137}),
                                    Timed("linked", Rates(40500, 0.05, 5, 12), {119})};
  ClaimVerdict v = JudgeClaim(c, {"embedded"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kAgrees);
  EXPECT_EQ(v.winner, "embedded");
  EXPECT_EQ(v.decided_by, "writes/s");
  EXPECT_THAT(v.caveat, HasSubstr("embedded is faster, but costs more"));
  EXPECT_THAT(v.caveat, HasSubstr("I/O bytes/write: embedded 137 vs linked 119"));
  v = JudgeClaim(c, {"linked"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kDisagrees);
  EXPECT_EQ(v.winner, "embedded");
  EXPECT_THAT(v.caveat, HasSubstr("but costs more"));
  // Where the cheaper one is also faster, the cost explains the rates.
  const std::vector<Candidate> same = {Timed("embedded", Rates(66700, 0.05, 5, 11), {100}),
                                       Timed("linked", Rates(40500, 0.05, 5, 12), {119})};
  v = JudgeClaim(same, {"embedded"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kAgrees);
  EXPECT_EQ(v.caveat, "");
  EXPECT_THAT(v.evidence, HasSubstr("; I/O bytes/write: embedded 100 vs linked 119"));
}

// A mix is judged on its measured rate: product-parts at 1:1, lookup 5,528
// ops/s against denormalized 3,729 with disjoint intervals, though the
// lookup moves more bytes per operation.
TEST(LabVerdictTest, AMixIsJudgedOnItsRate) {
  JudgeOptions o;
  o.cost_names = {"keys + docs examined/op at 1:1", "I/O bytes/op at 1:1"};
  o.time_name = "ops/s at 1:1";
  const std::vector<Candidate> c = {
      Timed("lookup", Rates(5528, 0.04, 5, 21), {201, 30000}),
      Timed("denormalized", Rates(3729, 0.04, 5, 22), {1, 9000})};
  ClaimVerdict v = JudgeClaim(c, {"denormalized"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kDisagrees);
  EXPECT_EQ(v.winner, "lookup");
  EXPECT_EQ(v.decided_by, "ops/s at 1:1");
  EXPECT_THAT(v.caveat, HasSubstr("lookup is faster, but costs more (keys + docs examined"));
  // Where the rates tie, the keys and documents examined decide first,
  // when the I/O does not point the other way.
  const std::vector<Candidate> tied = {Timed("lookup", Rates(4000, 0.1, 5, 23), {201, 3000}),
                                       Timed("denormalized", Rates(4000, 0.1, 5, 24), {1, 3100})};
  v = JudgeClaim(tied, {"denormalized"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kAgrees);
  EXPECT_EQ(v.decided_by, "keys + docs examined/op at 1:1");
  EXPECT_FALSE(v.costs_conflict);
}

// product-parts at 1:1, 200 parts (the quick run of 2026-11-29): the rates
// tie (denormalized 2,540 [747, 3,160] ops/s, lookup 3,221 [2,343, 4,407]);
// denormalized examines 1 key + document an operation where lookup examines
// 201, but writes 28.1k bytes where lookup writes 290. The first cost alone
// made that an AGREES for denormalized (and its claim's rival a DISAGREES):
// a write's bytes never counted at tied rates. Costs pointing opposite ways
// are a tie that names both.
TEST(LabVerdictTest, TiedRatesWithCostsPointingOppositeWaysAreATie) {
  JudgeOptions o;
  o.cost_names = {"keys + docs examined/op at 1:1", "bytes written/op at 1:1"};
  o.time_name = "ops/s at 1:1";
  const std::vector<Candidate> c = {Timed("denormalized", Rates(2540, 0.3, 5, 41), {1, 28100}),
                                    Timed("lookup", Rates(3221, 0.3, 5, 42), {201, 290})};
  for (const char* claimed : {"denormalized", "lookup"}) {
    ClaimVerdict v = JudgeClaim(c, {claimed}, o);
    EXPECT_EQ(v.kind, VerdictKind::kTie) << claimed << ": " << v.evidence;
    EXPECT_TRUE(v.costs_conflict) << claimed;
    EXPECT_EQ(v.winner, claimed);
    EXPECT_THAT(v.evidence, HasSubstr("ops/s at 1:1: ")) << v.evidence;
    EXPECT_THAT(v.evidence,
                HasSubstr("costs disagree (keys + docs examined/op at 1:1: denormalized 1 vs "
                          "lookup 201; bytes written/op at 1:1: denormalized 28.1k vs lookup 290)"))
        << v.evidence;
  }
  // Rates that differ still decide, whatever the costs say.
  const std::vector<Candidate> apart = {Timed("denormalized", Rates(9000, 0.04, 5, 43), {1, 28100}),
                                        Timed("lookup", Rates(3000, 0.04, 5, 44), {201, 290})};
  ClaimVerdict v = JudgeClaim(apart, {"denormalized"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kAgrees);
  EXPECT_FALSE(v.costs_conflict);
}

// two-way-references: equal keys and documents (503/503), bytes 2.6% apart,
// tied rates: a tie, not a DISAGREES on the bytes.
TEST(LabVerdictTest, ASmallCostGapAgainstTiedRatesIsATie) {
  JudgeOptions o;
  o.cost_names = {"keys + docs examined/read", "bytes read/read"};
  o.time_name = "reads/s";
  const std::vector<Candidate> c = {Timed("one-way", Rates(9000, 0.1, 5, 31), {503, 100000}),
                                    Timed("two-way", Rates(9000, 0.1, 5, 32), {503, 102600})};
  ClaimVerdict v = JudgeClaim(c, {"two-way"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kTie) << v.evidence;
  v = JudgeClaim(c, {"one-way"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kTie) << v.evidence;
  // denormalized-rename: 2 keys + documents against 4, tied rates: the
  // cost decides.
  const std::vector<Candidate> d = {Timed("denormalized", Rates(9000, 0.1, 5, 33), {2, 500}),
                                    Timed("referenced", Rates(9000, 0.1, 5, 34), {4, 600})};
  v = JudgeClaim(d, {"denormalized"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kAgrees);
  EXPECT_EQ(v.decided_by, "keys + docs examined/read");
  EXPECT_THAT(v.evidence, HasSubstr("rates tie (reads/s: denormalized"));
  EXPECT_TRUE(v.rates_tied);
}

// --tiny: one repetition decides nothing, and says so, however far apart
// the rates (45.4k against 25.2k reads/s) and whatever the costs.
TEST(LabVerdictTest, TooFewRepetitionsSaySo) {
  JudgeOptions o;
  o.cost_names = {"keys + docs examined/read"};
  o.time_name = "reads/s";
  const std::vector<Candidate> c = {Timed("embedded", {45400}, {1}),
                                    Timed("linked", {25200}, {2})};
  const ClaimVerdict v = JudgeClaim(c, {"embedded"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kTie);
  EXPECT_TRUE(v.too_few_repetitions);
  EXPECT_THAT(v.evidence, HasSubstr("too few repetitions to decide (1; at least 5 needed)"));
  EXPECT_THAT(v.evidence, HasSubstr("45.4k"));
  const std::vector<Candidate> five = {Timed("a", Rates(50000, 0.1, 5, 1)),
                                       Timed("b", Rates(50000, 0.1, 5, 2))};
  EXPECT_FALSE(JudgeClaim(five, {"a"}, TimeOnly()).too_few_repetitions);
}

// Costs are consulted in order; a later cost only separates the variants
// an earlier one left tied with the claimed one.
TEST(LabVerdictTest, CostsAreLexicographic) {
  JudgeOptions o;
  o.cost_names = {"keys + docs examined/read", "bytes read/read"};
  std::vector<Candidate> c = {Candidate{"subset", {1, 2000}, {}},
                              Candidate{"embedded", {1, 90000}, {}},
                              Candidate{"referenced", {11, 1500}, {}}};
  ClaimVerdict v = JudgeClaim(c, {"subset"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kAgrees);
  EXPECT_EQ(v.decided_by, "bytes read/read");
  EXPECT_EQ(v.evidence, "bytes read/read: subset 2000 vs embedded 90.0k");
  // "or": either of two variants doing the same work may win.
  v = JudgeClaim(c, {"embedded", "subset"}, o);
  EXPECT_EQ(v.kind, VerdictKind::kAgrees);
  EXPECT_EQ(v.decided_by, "keys + docs examined/read");
}

TEST(LabVerdictTest, NoiseFloorIsTheRelativeDifferenceOfMedians) {
  EXPECT_DOUBLE_EQ(NoiseFloor({100, 100, 100, 100, 100}, {110, 110, 110, 110, 110}), 0.1);
  EXPECT_DOUBLE_EQ(NoiseFloor({110, 110, 110}, {100, 100, 100}), 0.1);
  EXPECT_EQ(NoiseFloor({}, {1}), 0);
  // A noise floor above the default minimum effect raises it.
  const std::vector<double> a = {100, 101, 102, 103, 104}, b = {110, 111, 112, 113, 114};
  EXPECT_EQ(CompareRates(b, a, kMinEffect), Order::kFirst);
  EXPECT_EQ(CompareRates(b, a, 0.15), Order::kTie);
}

}  // namespace
}  // namespace rockdoc::lab

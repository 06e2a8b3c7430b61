#include "verdict.h"

#include <absl/strings/str_format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace rockdoc::lab {
namespace {

// Whether cost `value` is at most `reference` plus the relative `tolerance`
// (and a floor for costs of zero): equal, as far as a verdict goes.
bool NoMoreThan(double value, double reference, double tolerance) {
  return value <= reference + std::max(std::fabs(reference) * tolerance, 1e-9);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// P(X <= k) for X ~ Binomial(n, 1/2).
double BinomialCdfHalf(int n, int k) {
  double p = 0, term = std::pow(0.5, n);  // C(n, 0) / 2^n
  for (int i = 0; i <= k; ++i) {
    p += term;
    term = term * (n - i) / (i + 1);
  }
  return p;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

double MedianOf(const std::vector<double>& v) { return MedianInterval(v).median; }

}  // namespace

std::string FormatQuantity(double v) {
  if (std::isnan(v)) return "-";
  const double a = std::fabs(v);
  if (a >= 1e9) return absl::StrFormat("%.1fG", v / 1e9);
  if (a >= 1e6) return absl::StrFormat("%.1fM", v / 1e6);
  if (a >= 1e4) return absl::StrFormat("%.1fk", v / 1e3);
  if (a >= 100 || v == std::floor(v)) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.1f", v);
}

std::string FormatInterval(const Interval& i) {
  if (i.n == 0) return "-";
  return absl::StrFormat("%s [%s, %s]", FormatQuantity(i.median), FormatQuantity(i.lo),
                         FormatQuantity(i.hi));
}

Interval MedianInterval(std::vector<double> samples) {
  Interval out;
  // A rate that could not be computed (NaN, e.g. a mix over a zero rate)
  // is no sample: left out, so that the sort below has an order.
  samples.erase(std::remove_if(samples.begin(), samples.end(),
                               [](double x) { return !std::isfinite(x); }),
                samples.end());
  out.n = static_cast<int>(samples.size());
  if (samples.empty()) {
    out.median = out.lo = out.hi = kNaN;
    return out;
  }
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size(), mid = n / 2;
  out.median = n % 2 == 1 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
  // The largest k (1-based: the narrowest pair) whose [x(k), x(n+1-k)] still covers the median
  // with at least 95%; k = 1 (min..max) when even that falls short.
  int k = 1;
  for (int j = 2; 2 * j <= static_cast<int>(n); ++j) {
    if (1 - 2 * BinomialCdfHalf(static_cast<int>(n), j - 1) >= 0.95) k = j;
  }
  out.lo = samples[k - 1];
  out.hi = samples[n - k];
  out.coverage = 1 - 2 * BinomialCdfHalf(static_cast<int>(n), k - 1);
  return out;
}

Order CompareRates(const std::vector<double>& a, const std::vector<double>& b,
                   double min_effect) {
  // Fewer than 5 repetitions give no 95% interval worth the name.
  if (a.size() < kMinRepetitions || b.size() < kMinRepetitions) return Order::kTie;
  const Interval ia = MedianInterval(a), ib = MedianInterval(b);
  const double low = std::min(ia.median, ib.median), high = std::max(ia.median, ib.median);
  const bool effect = low > 0 ? high / low - 1 >= min_effect : high > 0;
  if (!effect) return Order::kTie;
  if (ia.lo > ib.hi) return Order::kFirst;
  if (ib.lo > ia.hi) return Order::kSecond;
  return Order::kTie;
}

double NoiseFloor(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 0;
  const double x = MedianOf(a), y = MedianOf(b);
  const double low = std::min(x, y);
  return low > 0 ? std::fabs(x - y) / low : 0;
}

ClaimVerdict JudgeClaim(const std::vector<Candidate>& candidates,
                        const std::vector<std::string>& claimed, const JudgeOptions& options) {
  ClaimVerdict v;
  std::vector<const Candidate*> in;
  for (const Candidate& c : candidates) in.push_back(&c);
  auto is_claimed = [&](const Candidate* c) { return Contains(claimed, c->name); };
  // Ties between equal values are broken by name, so that the result never
  // depends on the candidates' order.
  auto lower_cost = [](size_t i) {
    return [i](const Candidate* a, const Candidate* b) {
      return a->costs[i] != b->costs[i] ? a->costs[i] < b->costs[i] : a->name < b->name;
    };
  };
  auto higher_rate = [](const Candidate* a, const Candidate* b) {
    // No median (no finite sample) ranks lowest, so the order is strict.
    auto rank = [](double m) { return std::isnan(m) ? -std::numeric_limits<double>::infinity() : m; };
    const double x = rank(MedianOf(a->samples)), y = rank(MedianOf(b->samples));
    return x != y ? x > y : a->name < b->name;
  };
  if (std::none_of(in.begin(), in.end(), is_claimed)) {
    v.kind = VerdictKind::kTie;
    v.evidence = "the claimed variant was not measured here";
    return v;
  }
  if (std::all_of(in.begin(), in.end(), is_claimed)) {
    v.kind = VerdictKind::kAgrees;
    v.winner = claimed.front();
    v.evidence = "no other variant to compare with";
    return v;
  }
  const size_t n_costs = options.cost_names.size();
  auto cost_known = [&](size_t i) {
    return std::none_of(in.begin(), in.end(), [&](const Candidate* c) {
      return i >= c->costs.size() || std::isnan(c->costs[i]);
    });
  };
  auto rate = [&](const Candidate* c) {
    return absl::StrFormat("%s %s", c->name, FormatInterval(MedianInterval(c->samples)));
  };
  auto rates = [&](const Candidate* a, const Candidate* b) {
    return absl::StrFormat("%s: %s vs %s", options.time_name, rate(a), rate(b));
  };
  // The first known cost on which `a` and `b` differ by more than
  // `tolerance`, as "<cost name>: a x vs b y" with whether `a` is the
  // cheaper; nullopt when they are equal on every cost.
  struct CostGap {
    std::string text;
    bool first_cheaper;
  };
  auto cost_gap = [&](const Candidate* a, const Candidate* b,
                      double tolerance) -> std::optional<CostGap> {
    for (size_t i = 0; i < n_costs; ++i) {
      if (!cost_known(i)) continue;
      const double x = a->costs[i], y = b->costs[i];
      const double low = std::min(x, y);
      if (NoMoreThan(std::max(x, y), low, tolerance)) continue;
      return CostGap{absl::StrFormat("%s: %s %s vs %s %s", options.cost_names[i], a->name,
                                     FormatQuantity(x), b->name, FormatQuantity(y)),
                     x < y};
    }
    return std::nullopt;
  };

  // 1. Time, when it was measured: a difference of rates beyond the
  // intervals decides; the costs only explain it (or say they disagree).
  const bool timed = std::any_of(in.begin(), in.end(),
                                 [](const Candidate* c) { return !c->samples.empty(); });
  if (timed) {
    std::vector<const Candidate*> sorted = in;
    std::sort(sorted.begin(), sorted.end(), higher_rate);
    const Candidate* best_claimed = *std::find_if(sorted.begin(), sorted.end(), is_claimed);
    const Candidate* best_other = *std::find_if(
        sorted.begin(), sorted.end(), [&](const Candidate* c) { return !is_claimed(c); });
    const size_t fewest =
        std::min_element(sorted.begin(), sorted.end(), [](const Candidate* a, const Candidate* b) {
          return a->samples.size() < b->samples.size();
        })[0]->samples.size();
    if (fewest < kMinRepetitions) {
      // No interval worth the name: no verdict at all, rather than a tie
      // (which would say the rates were compared and found equal).
      v.kind = VerdictKind::kTie;
      v.too_few_repetitions = true;
      v.winner = best_claimed->name;
      v.evidence = absl::StrFormat(
          "too few repetitions to decide (%d; at least %d needed): %s", fewest, kMinRepetitions,
          rates(best_claimed, best_other));
      return v;
    }
    // The opposite direction of a cost, said beside the time that decided.
    auto but = [&](const Candidate* faster, const Candidate* slower) {
      const std::optional<CostGap> gap = cost_gap(faster, slower, kTiedTimeCostTolerance);
      if (gap && !gap->first_cheaper) {
        v.caveat = absl::StrFormat("%s is faster, but costs more (%s)", faster->name, gap->text);
      }
    };
    auto explained = [&](const Candidate* faster, const Candidate* slower) {
      const std::optional<CostGap> gap = cost_gap(faster, slower, kTiedTimeCostTolerance);
      std::string text = rates(faster, slower);
      if (gap && gap->first_cheaper) text += "; " + gap->text;
      if (!gap && n_costs > 0) {
        text += absl::StrFormat("; costs within %.0f%%", 100 * kTiedTimeCostTolerance);
      }
      return text;
    };
    const bool beats_all = std::all_of(sorted.begin(), sorted.end(), [&](const Candidate* c) {
      return is_claimed(c) ||
             CompareRates(best_claimed->samples, c->samples, options.min_effect) == Order::kFirst;
    });
    // Time decided: `faster` beat `slower` beyond the intervals.
    auto by_time = [&](VerdictKind kind, const Candidate* faster, const Candidate* slower) {
      v.kind = kind;
      v.winner = faster->name;
      v.decided_by = options.time_name;
      v.evidence = explained(faster, slower);
      but(faster, slower);
      return v;
    };
    if (beats_all) return by_time(VerdictKind::kAgrees, best_claimed, best_other);
    for (const Candidate* c : sorted) {
      if (is_claimed(c)) continue;
      if (CompareRates(c->samples, best_claimed->samples, options.min_effect) == Order::kFirst) {
        return by_time(VerdictKind::kDisagrees, c, best_claimed);
      }
    }
    // The rates tie: the variants the best claimed one does not beat stay
    // in, and the costs decide among them, with the wider tolerance.
    std::vector<const Candidate*> tied;
    for (const Candidate* c : sorted) {
      if (is_claimed(c) ||
          CompareRates(best_claimed->samples, c->samples, options.min_effect) != Order::kFirst) {
        tied.push_back(c);
      }
    }
    in = tied;
  }

  // 2. The deterministic costs, in order: the variants clearly worse on one
  // drop out.
  const double tolerance = timed ? kTiedTimeCostTolerance : kCostTolerance;
  // A cost that decides between tied rates says so, with the two rates.
  auto tied_rates = [&](const Candidate* a, const Candidate* b) {
    if (!timed) return;
    v.rates_tied = true;
    v.evidence += "; rates tie (" + rates(a, b) + ")";
  };
  // Where the rates tie, cost i decides for `cheaper` over `dearer` only
  // when no later cost points the other way past the tolerance: a variant
  // that examines one key where the other examines 201 but writes 28.1k
  // bytes where the other writes 290 (product-parts at 1:1) is not cheaper,
  // it is cheaper on one count; the verdict is a tie that names both.
  // Sets `v` to that tie and returns true when they conflict.
  auto conflicts = [&](size_t i, const Candidate* cheaper, const Candidate* dearer) {
    if (!timed) return false;  // without time, the order of the costs is the claim's
    for (size_t j = i + 1; j < n_costs; ++j) {
      if (!cost_known(j)) continue;
      const double a = cheaper->costs[j], b = dearer->costs[j];
      if (NoMoreThan(a, b, tolerance)) continue;
      const Candidate* claimed_one = is_claimed(cheaper) ? cheaper : dearer;
      const Candidate* other = claimed_one == cheaper ? dearer : cheaper;
      v.kind = VerdictKind::kTie;
      v.winner = claimed_one->name;
      v.decided_by.clear();
      v.costs_conflict = true;
      v.evidence = absl::StrFormat(
          "%s; costs disagree (%s: %s %s vs %s %s; %s: %s %s vs %s %s)", rates(claimed_one, other),
          options.cost_names[i], cheaper->name, FormatQuantity(cheaper->costs[i]), dearer->name,
          FormatQuantity(dearer->costs[i]), options.cost_names[j], cheaper->name, FormatQuantity(a),
          dearer->name, FormatQuantity(b));
      return true;
    }
    return false;
  };
  for (size_t i = 0; i < n_costs; ++i) {
    if (!cost_known(i)) continue;
    std::vector<const Candidate*> sorted = in;
    std::sort(sorted.begin(), sorted.end(), lower_cost(i));
    const double best = sorted.front()->costs[i];
    std::vector<const Candidate*> tied, out;
    for (const Candidate* c : sorted) {
      (NoMoreThan(c->costs[i], best, tolerance) ? tied : out).push_back(c);
    }
    const auto claimed_best = std::find_if(sorted.begin(), sorted.end(), is_claimed);
    const std::string& what = options.cost_names[i];
    if (std::none_of(tied.begin(), tied.end(), is_claimed)) {
      if (conflicts(i, sorted.front(), *claimed_best)) return v;
      v.kind = VerdictKind::kDisagrees;
      v.winner = sorted.front()->name;
      v.decided_by = what;
      v.evidence = absl::StrFormat("%s: %s %s vs %s %s", what, sorted.front()->name,
                                   FormatQuantity(best), (*claimed_best)->name,
                                   FormatQuantity((*claimed_best)->costs[i]));
      tied_rates(sorted.front(), *claimed_best);
      return v;
    }
    if (std::all_of(tied.begin(), tied.end(), is_claimed)) {
      if (conflicts(i, *claimed_best, out.front())) return v;
      v.kind = VerdictKind::kAgrees;
      v.winner = (*claimed_best)->name;
      v.decided_by = what;
      v.evidence = absl::StrFormat("%s: %s %s vs %s %s", what, (*claimed_best)->name,
                                   FormatQuantity((*claimed_best)->costs[i]), out.front()->name,
                                   FormatQuantity(out.front()->costs[i]));
      tied_rates(*claimed_best, out.front());
      return v;
    }
    in = tied;  // the claimed variant ties on this cost with others: look further
  }
  const Candidate* best_claimed = *std::find_if(in.begin(), in.end(), is_claimed);
  const Candidate* best_other =
      *std::find_if(in.begin(), in.end(), [&](const Candidate* c) { return !is_claimed(c); });
  v.kind = VerdictKind::kTie;
  v.winner = best_claimed->name;
  if (!timed) {
    v.evidence = absl::StrFormat("%s and %s are equal on every cost", best_claimed->name,
                                 best_other->name);
    return v;
  }
  // The figures only: the sentence around the evidence says "tie" (once).
  v.evidence = absl::StrFormat(
      "%s%s", rates(best_claimed, best_other),
      n_costs > 0 ? absl::StrFormat("; costs within %.0f%%", 100 * kTiedTimeCostTolerance)
                  : std::string());
  return v;
}

}  // namespace rockdoc::lab

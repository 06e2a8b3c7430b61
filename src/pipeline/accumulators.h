// pipeline/accumulators.h: $group's accumulators (also $bucket's and
// $bucketAuto's output fields): $sum $avg $min $max $first $last $push
// $addToSet $count $mergeObjects $stdDevPop $stdDevSamp, and the n-forms
// $firstN $lastN $maxN $minN $top $bottom $topN $bottomN.
//
// Semantics are MongoDB's: $sum/$avg/$stdDev* read numbers only (others are
// skipped); $min/$max skip null and missing; $first/$last keep what they
// see (missing is null); $push/$addToSet skip missing; $maxN/$minN skip
// null and missing; $firstN/$lastN keep them (as null); $top/$bottom order
// by `sortBy` (missing sorts as null) and give `output` of the first/last
// document, $topN/$bottomN the first/last n in sort order; `n` is evaluated
// against a group's first document (MongoDB requires it constant per
// group).
//
// Errors with MongoDB's codes, at parse: 15952 an unknown accumulator,
// 40237 a unary accumulator given an array or $count given arguments,
// 5787901/5787906/5787907 (the N forms' unknown/missing arguments),
// 5788001-5788005 ($top/$bottom's); when running: 5787902/5787908 a bad
// n, 40400 $mergeObjects of a non-object.
#ifndef ROCKDOC_PIPELINE_ACCUMULATORS_H_
#define ROCKDOC_PIPELINE_ACCUMULATORS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "query/expression/expression.h"
#include "query/sort_pattern.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// MongoDB's order of values, missing first.
struct ValueLess {
  bool operator()(const Value& a, const Value& b) const {
    if (!a.ok() || !b.ok()) return !a.ok() && b.ok();
    return CompareValues(a.element(), b.element()) < 0;
  }
};

struct AccumulatorSpec {
  enum Op {
    kSum, kAvg, kMin, kMax, kFirst, kLast, kPush, kAddToSet, kCount, kMergeObjects,
    kStdDevPop, kStdDevSamp, kFirstN, kLastN, kMaxN, kMinN, kTop, kBottom, kTopN, kBottomN
  };
  std::string field;
  Op op = kSum;
  ExpressionPtr arg;  // the value taken: $sum's operand, the N forms' input, $top's output
  ExpressionPtr n;    // the N forms
  SortPattern sort_by;  // $top, $bottom, $topN, $bottomN
};

// Parses one accumulator, {<op>: <argument>}, for output field `field`.
StatusOr<AccumulatorSpec> ParseAccumulator(std::string_view field, const Element& accumulator,
                                           VariableScope* scope);

// One accumulator of one group.
class Accumulator {
 public:
  explicit Accumulator(const AccumulatorSpec* spec) : spec_(spec) {}

  // Takes one document; returns the bytes the accumulator holds more.
  StatusOr<int64_t> Add(DocumentView doc, const ExpressionVariables& vars);
  StatusOr<Value> Result() const;

  // A spilled $group (allowDiskUse): the accumulator's partial state as a
  // document in field `key`, and the merge of such a state into this one,
  // as if this accumulator had also seen that state's documents after its
  // own (so $first, $last, $push and the N forms keep the input order when
  // states are merged in the order they were spilled). Returns the bytes
  // held more.
  void AppendState(std::string_view key, BsonBuilder* out) const;
  StatusOr<int64_t> MergeState(const Element& state);

 private:
  struct Ranked {
    std::vector<Value> key;
    Value value;
  };
  bool RankedLess(const Ranked& a, const Ranked& b) const;
  int64_t TrimRanked();
  int64_t TrimLastN();
  int64_t MergeFields(DocumentView object);
  std::vector<Value> LastN() const;
  static int64_t SizeOf(const Ranked& r);

  const AccumulatorSpec* spec_;
  NumberSum sum_;
  int64_t count_ = 0;
  double mean_ = 0, m2_ = 0;  // $stdDev*: Welford's running mean and squares
  Value best_;
  bool seen_ = false;
  int64_t n_ = -1;  // the N forms, once evaluated
  std::vector<Value> list_;  // $push, $firstN, $lastN (up to 2n: TrimLastN)
  std::multiset<Value, ValueLess> set_;  // $addToSet (unique), $maxN/$minN
  std::vector<std::pair<std::string, Value>> fields_;  // $mergeObjects
  std::vector<Ranked> ranked_;  // $top/$bottom(N)
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_PIPELINE_ACCUMULATORS_H_

// query/expression/expression.h: MongoDB's aggregation expressions
// ("$a.b", "$$ROOT", {$add: [...]}, {$cond: ...}, {a: <expr>}, ...), parsed
// once into a tree and evaluated against a document: the building block of
// the aggregation pipeline's stages ($project, $addFields, $group, ...) and
// of $expr (issue 14; this is its first part).
//
// Semantics are MongoDB's:
//   - a field path that finds nothing is *missing*, which is not null:
//     {$eq: ["$nope", null]} is false, and missing sorts below null; a path
//     through an array maps over it ("$a.b" on {a: [{b: 1}, {b: 2}]} is
//     [1, 2]);
//   - arithmetic keeps MongoDB's numeric types: int32 + int32 stays int32
//     unless it overflows (then int64, then double); a double makes the
//     result a double, a decimal a decimal; a date plus a number is a date;
//   - truthiness: false, null, missing and zero (of any numeric type) are
//     false, everything else (empty strings and arrays too) is true;
//   - errors carry MongoDB's codes and words: 168 "Unrecognized expression
//     '$x'", 16020 "Expression $subtract takes exactly 2 arguments. 1 were
//     passed in.", 16554 "$add only supports numeric or date types, not
//     string", 16608 "can't $divide by zero", 17276 "Use of undefined
//     variable: x", ...
//
// The operators, by family (one file each, expression_internal.h):
// expression.cc: $literal $let $cond $ifNull $switch; $add $subtract
// $multiply $divide $mod $abs $ceil $floor; $eq $ne $gt $gte $lt $lte $cmp;
// $and $or $not; $size $arrayElemAt $isArray $in $concatArrays $first $last
// $slice $reverseArray $range $indexOfArray $filter $map $reduce; $sum $avg
// $max $min (over an array or the arguments). string_operators.cc: $concat
// $substr $substrBytes $substrCP $strLenBytes $strLenCP $indexOfBytes
// $indexOfCP $split $trim $ltrim $rtrim $toUpper $toLower $strcasecmp
// $replaceOne $replaceAll $regexMatch $regexFind $regexFindAll.
// set_operators.cc: $setUnion $setIntersection $setDifference $setEquals
// $setIsSubset $allElementsTrue $anyElementTrue $zip $sortArray $firstN
// $lastN $maxN $minN. convert_operators.cc: $type $isNumber $convert $toBool
// $toInt $toLong $toDouble $toDecimal $toString $toDate $toObjectId.
// object_operators.cc: $mergeObjects $objectToArray $arrayToObject
// $getField $setField $unsetField. math_operators.cc: $sqrt $exp $ln $log
// $log10 $pow $round $trunc and the trigonometric operators.
// date_operators.cc: $year ... $millisecond $dayOfWeek $dayOfYear $week
// $isoWeek $isoWeekYear $isoDayOfWeek (each with an optional timezone: an
// Olson name or a UTC offset), $dateToString $dateFromString $dateToParts
// $dateFromParts $dateTrunc $dateAdd $dateSubtract $dateDiff. Any other
// operator name MongoDB has is NotImplemented (238); a name MongoDB does not
// have is 168.
//
// Thread safety: a parsed tree is immutable and may be evaluated from
// several threads at once.
#ifndef ROCKDOC_QUERY_EXPRESSION_EXPRESSION_H_
#define ROCKDOC_QUERY_EXPRESSION_EXPRESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// What an expression reads when it is evaluated.
// The field of a $vectorSearch result that holds its score (the pipeline's
// $vectorSearch source appends it; pipeline/vector_search_stage.cc), read
// by {$meta: "vectorSearchScore"} and removed from what the pipeline
// returns.
inline constexpr std::string_view kVectorSearchScoreField = "$vectorSearchScore";

struct ExpressionVariables {
  DocumentView root;        // $$ROOT
  // $$CURRENT, which "$path" reads: the root unless set ($redact walks
  // subdocuments with it).
  const DocumentView* current = nullptr;
  int64_t now_ms = 0;       // $$NOW (one instant for a whole pipeline)
  std::vector<Value> user;  // $let's variables (and a pipeline's `let`), by id
};

// The variable names in scope while parsing, each with the id its value
// has in ExpressionVariables::user.
class VariableScope {
 public:
  // Declares `name` (checked as MongoDB checks user variable names: a
  // lowercase letter or a non-ASCII character first, then letters, digits
  // and _) and returns its id.
  StatusOr<int> Define(std::string_view name);
  // The id of the innermost `name` in scope, or -1.
  int Find(std::string_view name) const;
  // Leaves the scopes opened since size() was `size`.
  void PopTo(size_t size) { names_.resize(size); }
  size_t size() const { return names_.size(); }
  // How many ids were given out: the size ExpressionVariables::user needs.
  int id_count() const { return next_id_; }

 private:
  std::vector<std::pair<std::string, int>> names_;
  int next_id_ = 0;
};

class Expression {
 public:
  virtual ~Expression() = default;
  // The value; a missing Value (ok() false) when it evaluates to missing
  // (a field that is not there, $$REMOVE).
  virtual StatusOr<Value> Evaluate(const ExpressionVariables& vars) const = 0;
};
using ExpressionPtr = std::unique_ptr<Expression>;

// Values as expressions make them (IntegerValue: int32 when it fits, else
// int64).
Value NullValue();
Value IntegerValue(int64_t v);
Value Int64Value(int64_t v);
Value DoubleValue(double v);
// An array of these values (a missing one becomes null).
Value ArrayOfValues(const std::vector<Value>& items);

// A sum (or product) of numbers with MongoDB's widening ($add, $multiply,
// $sum, $avg): int32 -> int64 on overflow -> double; a double operand makes
// it a double, a decimal operand a decimal. Non-numbers are the caller's to
// refuse or skip.
//
// A sum keeps, as MongoDB's does, its decimal operands in a decimal total and
// the others in a binary one (exact integers, then a compensated double sum:
// 0.1 + 0.2 + 0.3 is 0.6); with a decimal, the result is the decimal total
// plus the binary one converted to 34 digits. A product converts itself once,
// at its first decimal (a double product to 15 digits), and multiplies on in
// decimal.
class NumberSum {
 public:
  explicit NumberSum(bool multiply = false);
  void Add(const Element& number);
  // The total in its type (int32 while an all-int32 total fits one).
  Value Result() const;
  // The total as a double (nearest).
  double AsDouble() const;
  // $avg: the total divided by `count` (> 0): a double, or a decimal when a
  // decimal was added (the decimal quotient, as MongoDB's).
  Value Average(int64_t count) const;
  // The total rounded to an integer (a date's offset in milliseconds).
  int64_t AsMillis() const;
  // A partial sum, written as {k, l, nd, i, d, c, n, m} into field `key` and read back
  // by Merge (a spilled $group's accumulators), which adds it as if its
  // numbers had been added here (a sum only, not a product).
  void AppendState(std::string_view key, BsonBuilder* out) const;
  Status MergeState(const Element& state);

 private:
  enum Kind { kInteger, kDouble, kDecimal };
  // A sum's binary part.
  void AddNonDecimal(const Element& number);
  void AddDouble(double x);
  double NonDecimalDouble() const;
  Decimal128 NonDecimalAsDecimal() const;

  bool multiply_;
  Kind kind_ = kInteger;  // the widest operand so far
  bool long_ = false;
  // A sum's binary part has become a double (d_ + compensation_; naive_ is
  // the plain sum, which says whether an infinity or NaN was added).
  bool non_decimal_double_ = false;
  int64_t i_;
  double d_;
  double compensation_ = 0;
  double naive_ = 0;
  // A sum: the decimal operands' total; a product: the product once decimal.
  Decimal128 dec_;
};

// Parses an expression: a constant, "$path", "$$variable[.path]", an object
// whose fields are expressions, an array of expressions, or {$op: args}.
StatusOr<ExpressionPtr> ParseExpression(const Element& e, VariableScope* scope);

// Operators MongoDB does not have, added by a program that links the
// library (the schema lab's seeded random values: tools/lab/README.md). An
// extension is looked up only after every operator MongoDB has, so it never
// changes what a MongoDB expression means; `fn` gets the evaluated
// arguments ({$op: [a, b]} or {$op: a}; a missing one as a missing Value),
// and its result is bounded as every operator's is. Registering a name that
// does not start with '$', one MongoDB has, or one already registered is
// BadValue. Thread-safe; expressions parsed after the registration see it.
// Example:
//   RegisterExtensionOperator("$labInt", &LabInt, 2, SIZE_MAX);
using ExtensionOperatorFn = StatusOr<Value> (*)(const std::vector<Value>& args);
Status RegisterExtensionOperator(std::string_view name, ExtensionOperatorFn fn, size_t min_args,
                                 size_t max_args);

// $range's memory bound (MongoDB's internalQueryMaxRangeBytes, 64 MiB by
// default; each value is charged kRangeBytesPerValue): past it $range fails
// with ExceededMemoryLimit (146) before building anything. Process-wide;
// tests and the fuzz target lower it.
inline constexpr int64_t kRangeBytesPerValue = 16;
int64_t RangeMemoryLimitBytes();
void SetRangeMemoryLimitBytes(int64_t bytes);

// Aggregation's truthiness (a missing Element is false).
bool IsTruthy(const Element& e);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_QUERY_EXPRESSION_EXPRESSION_H_

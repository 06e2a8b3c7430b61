// query/expression/expression.cc: parsing and evaluating aggregation
// expressions (expression.h).
#include "query/expression/expression.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <utility>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "bson/decimal_arithmetic.h"
#include "bson/numeric.h"
#include "query/expression/expression_internal.h"
#include "query/field_path.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

Value Int64Value(int64_t v) {
  return expression_detail::Make([&](BsonBuilder& b) { b.AppendInt64("v", v); });
}
Value DoubleValue(double v) {
  return expression_detail::Make([&](BsonBuilder& b) { b.AppendDouble("v", v); });
}
Value NullValue() {
  return expression_detail::Make([&](BsonBuilder& b) { b.AppendNull("v"); });
}
Value IntegerValue(int64_t v) {
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()) {
    return expression_detail::Int32Value(static_cast<int32_t>(v));
  }
  return Int64Value(v);
}

Value ArrayOfValues(const std::vector<Value>& items) {
  return expression_detail::Make([&](BsonBuilder& b) {
    b.OpenArray("v");
    for (const Value& v : items) {
      if (v.ok()) {
        b.AppendElementAs("", v.element());
      } else {
        b.AppendNull("");
      }
    }
    b.Close();
  });
}

namespace expression_detail {

Value Int32Value(int32_t v) {
  return Make([&](BsonBuilder& b) { b.AppendInt32("v", v); });
}
Value DecimalValue(const Decimal128& v) {
  return Make([&](BsonBuilder& b) { b.AppendDecimal128("v", v); });
}
Value BoolValue(bool v) {
  return Make([&](BsonBuilder& b) { b.AppendBool("v", v); });
}
Value StringValue(std::string_view v) {
  return Make([&](BsonBuilder& b) { b.AppendString("v", v); });
}
Value DateValue(int64_t ms) {
  return Make([&](BsonBuilder& b) { b.AppendDateTime("v", ms); });
}


Value ObjectOf(const std::vector<std::pair<std::string, Element>>& fields) {
  return Make([&](BsonBuilder& b) {
    b.OpenDocument("v");
    for (const auto& [name, e] : fields) b.AppendElementAs(name, e);
    b.Close();
  });
}

bool IsNullish(const Value& v) { return !v.ok() || v.element().IsNull() || v.type() == BsonType::kUndefined; }

std::string TypeName(const Value& v) {
  return v.ok() ? std::string(BsonTypeAlias(v.type())) : std::string("missing");
}

std::string Shown(const Value& v) {
  return v.ok() ? ValueToJson(v.element(), JsonFormat::kShell) : std::string("missing");
}

Status Failed(int code, std::string message) {
  return Status(static_cast<ErrorCode>(code), std::move(message));
}

Status NotSupported(std::string what) {
  return Status(ErrorCode::kNotImplemented, std::move(what) + " is not supported by rockdoc yet");
}

int Compare(const Value& a, const Value& b) {
  if (!a.ok() || !b.ok()) return static_cast<int>(a.ok()) - static_cast<int>(b.ok());
  return CompareValues(a.element(), b.element());
}

StatusOr<Value> EvaluateOptional(const ExpressionPtr& arg, const ExpressionVariables& vars) {
  if (arg == nullptr) return Value();
  return arg->Evaluate(vars);
}

StatusOr<std::vector<Value>> EvaluateAll(const Args& args, const ExpressionVariables& vars) {
  std::vector<Value> out;
  out.reserve(args.size());
  for (const ExpressionPtr& a : args) {
    ROCKDOC_ASSIGN_OR_RETURN(Value v, a->Evaluate(vars));
    out.push_back(std::move(v));
  }
  return out;
}

// The array argument of an array operator: null for null/missing (the
// operator then answers null), an error naming the operator otherwise.
StatusOr<std::optional<DocumentView>> ArrayArg(std::string_view op, const Value& v, int code) {
  if (IsNullish(v)) return std::optional<DocumentView>();
  if (v.type() != BsonType::kArray) {
    return Failed(code, std::string(op) + "'s argument must be an array, but is " + TypeName(v));
  }
  return std::optional<DocumentView>(v.element().Array());
}

Value ArrayOf(const std::vector<Element>& items) {
  BsonBuilder b;
  b.OpenArray("v");
  for (const Element& e : items) b.AppendElementAs("", e);
  b.Close();
  Document d = std::move(b).Build();
  return Value::FromElement(d.Get("v"));
}

Status CheckValueBytes(size_t bytes) {
  if (bytes <= kMaxExpressionValueBytes) return Status::OK();
  return Failed(13548, "BufBuilder attempted to grow() to " + std::to_string(bytes) +
                           " bytes, past the 64MB limit.");
}

// An int32-representable integer argument ($slice, $range, $indexOfArray).
StatusOr<int64_t> IntArg(std::string_view op, std::string_view what, const Value& v, int code) {
  int64_t n = 0;
  if (!v.ok() || !v.element().IsNumber() || !v.element().ExactInt64(&n) ||
      n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max()) {
    return Failed(code, std::string(op) + " requires " + std::string(what) +
                            " to be a 32-bit integer, found: " +
                            (v.ok() ? ValueToJson(v.element(), JsonFormat::kShell) : "missing"));
  }
  return n;
}


}  // namespace expression_detail

using namespace expression_detail;  // NOLINT: this folder's shared helpers

namespace {

std::atomic<int64_t> range_memory_limit_bytes{int64_t{64} << 20};

}  // namespace

int64_t RangeMemoryLimitBytes() { return range_memory_limit_bytes.load(std::memory_order_relaxed); }

void SetRangeMemoryLimitBytes(int64_t bytes) {
  range_memory_limit_bytes.store(bytes, std::memory_order_relaxed);
}

namespace {
// ---- numbers ----

// ---- the expression tree ----

class Constant : public Expression {
 public:
  explicit Constant(Value v) : value_(std::move(v)) {}
  StatusOr<Value> Evaluate(const ExpressionVariables&) const override { return value_; }

 private:
  Value value_;
};

// The values along `parts` from `v`: a missing Value when nothing is
// there; over an array, the array of what each element gives (elements
// that are not documents or arrays, or give nothing, are left out).
Value WalkPath(const Element& v, const std::vector<std::string>& parts, size_t i);

Value WalkArray(DocumentView array, const std::vector<std::string>& parts, size_t i) {
  BsonBuilder b;
  b.OpenArray("v");
  for (const Element& e : array) {
    if (e.type() == BsonType::kDocument) {
      Value sub = WalkPath(e, parts, i);
      if (sub.ok()) b.AppendElementAs("", sub.element());
    } else if (e.type() == BsonType::kArray) {
      Value sub = WalkArray(e.Array(), parts, i);
      b.AppendElementAs("", sub.element());
    }
  }
  b.Close();
  Document d = std::move(b).Build();
  return Value::FromElement(d.Get("v"));
}

Value WalkPath(const Element& v, const std::vector<std::string>& parts, size_t i) {
  if (i == parts.size()) return Value::FromElement(v);
  if (v.type() == BsonType::kDocument) {
    Element child = v.Document().Get(parts[i]);
    if (!child.ok()) return Value();
    return WalkPath(child, parts, i + 1);
  }
  if (v.type() == BsonType::kArray) return WalkArray(v.Array(), parts, i);
  return Value();
}

// $$ROOT / $$CURRENT / a user variable, and an optional path inside it.
class Variable : public Expression {
 public:
  static constexpr int kRoot = -1;
  static constexpr int kRemove = -2;
  static constexpr int kNow = -3;
  static constexpr int kCurrent = -4;
  Variable(int id, std::vector<std::string> path) : id_(id), path_(std::move(path)) {}
  StatusOr<Value> Evaluate(const ExpressionVariables& vars) const override {
    if (id_ == kRemove) return Value();
    if (id_ == kRoot || id_ == kCurrent) {
      const DocumentView doc = id_ == kCurrent && vars.current != nullptr ? *vars.current : vars.root;
      if (path_.empty()) return Make([&](BsonBuilder& b) { b.AppendDocument("v", doc); });
      Element child = doc.Get(path_[0]);
      return child.ok() ? WalkPath(child, path_, 1) : Value();
    }
    Value base = id_ == kNow ? DateValue(vars.now_ms)
                             : (static_cast<size_t>(id_) < vars.user.size() ? vars.user[id_] : Value());
    if (path_.empty() || !base.ok()) return base;
    return WalkPath(base.element(), path_, 0);
  }

 private:
  int id_;
  std::vector<std::string> path_;
};

class ObjectExpression : public Expression {
 public:
  explicit ObjectExpression(std::vector<std::pair<std::string, ExpressionPtr>> fields)
      : fields_(std::move(fields)) {}
  StatusOr<Value> Evaluate(const ExpressionVariables& vars) const override {
    BsonBuilder b;
    b.OpenDocument("v");
    for (const auto& [name, expr] : fields_) {
      ROCKDOC_ASSIGN_OR_RETURN(Value v, expr->Evaluate(vars));
      if (v.ok()) b.AppendElementAs(name, v.element());  // a missing value leaves the field out
    }
    b.Close();
    Document d = std::move(b).Build();
    return Value::FromElement(d.Get("v"));
  }

 private:
  std::vector<std::pair<std::string, ExpressionPtr>> fields_;
};

class ArrayExpression : public Expression {
 public:
  explicit ArrayExpression(std::vector<ExpressionPtr> items) : items_(std::move(items)) {}
  StatusOr<Value> Evaluate(const ExpressionVariables& vars) const override {
    BsonBuilder b;
    b.OpenArray("v");
    for (const ExpressionPtr& item : items_) {
      ROCKDOC_ASSIGN_OR_RETURN(Value v, item->Evaluate(vars));
      if (v.ok()) {
        b.AppendElementAs("", v.element());
      } else {
        b.AppendNull("");  // MongoDB: a missing element of an array literal is null
      }
      ROCKDOC_RETURN_IF_ERROR(CheckValueBytes(b.size()));
    }
    b.Close();
    Document d = std::move(b).Build();
    return Value::FromElement(d.Get("v"));
  }

 private:
  std::vector<ExpressionPtr> items_;
};

// An operator: its arguments, and what it does with them (given the
// unevaluated arguments, so $cond, $and, ... evaluate only what they need).

class Operator : public Expression {
 public:
  Operator(OperatorFn fn, Args args) : fn_(fn), args_(std::move(args)) {}
  StatusOr<Value> Evaluate(const ExpressionVariables& vars) const override {
    ROCKDOC_ASSIGN_OR_RETURN(Value v, fn_(args_, vars));
    // Every operator's result is bounded (kMaxExpressionValueBytes); those
    // that can grow a value fast ($concat, $concatArrays) check before
    // building too.
    if (v.ok()) ROCKDOC_RETURN_IF_ERROR(CheckValueBytes(v.element().value_size()));
    return v;
  }

 private:
  OperatorFn fn_;
  Args args_;
};

// ---- arithmetic ----

StatusOr<Value> AddOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> values, EvaluateAll(args, vars));
  NumberSum sum(false);
  std::optional<int64_t> date;
  for (const Value& v : values) {
    if (IsNullish(v)) return NullValue();
    if (v.type() == BsonType::kDateTime) {
      if (date) return Failed(16612, "only one date allowed in an $add expression");
      date = v.element().DateTime();
    } else if (v.element().IsNumber()) {
      sum.Add(v.element());
    } else {
      return Failed(16554, "$add only supports numeric or date types, not " + TypeName(v));
    }
  }
  if (date) return DateValue(*date + sum.AsMillis());
  return sum.Result();
}

StatusOr<Value> MultiplyOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> values, EvaluateAll(args, vars));
  NumberSum product(true);
  for (const Value& v : values) {
    if (IsNullish(v)) return NullValue();
    if (!v.element().IsNumber()) {
      return Failed(16555, "$multiply only supports numeric types, not " + TypeName(v));
    }
    product.Add(v.element());
  }
  return product.Result();
}

StatusOr<Value> SubtractOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  if (IsNullish(v[0]) || IsNullish(v[1])) return NullValue();
  const Element a = v[0].element(), b = v[1].element();
  if (a.IsNumber() && b.IsNumber()) {
    if (a.type() == BsonType::kDecimal128 || b.type() == BsonType::kDecimal128) {
      return DecimalValue(DecimalSubtract(NumberToDecimal(a), NumberToDecimal(b)));
    }
    NumberSum diff(false);
    diff.Add(a);
    // a - b as a + (-b): negate b in its own type.
    if (b.type() == BsonType::kDouble) {
      diff.Add(DoubleValue(-b.Double()).element());
    } else {
      const int64_t n = b.type() == BsonType::kInt32 ? b.Int32() : b.Int64();
      if (n == std::numeric_limits<int64_t>::min()) {
        diff.Add(DoubleValue(-static_cast<double>(n)).element());
      } else {
        diff.Add(b.type() == BsonType::kInt64 ? Int64Value(-n).element() : IntegerValue(-n).element());
      }
    }
    return diff.Result();
  }
  if (a.type() == BsonType::kDateTime && b.type() == BsonType::kDateTime) {
    return Int64Value(a.DateTime() - b.DateTime());
  }
  if (a.type() == BsonType::kDateTime && b.type() == BsonType::kDecimal128) {
    // MongoDB's: the decimal must be a whole number of milliseconds that
    // the difference can hold (Decimal128::toLong raising no flag at all).
    const std::optional<int64_t> ms = DecimalToInt64(b.Decimal(), DecimalRounding::kHalfEven);
    int64_t diff = 0;
    if (!ms || CompareInt64Decimal(*ms, b.Decimal()) != 0 || __builtin_sub_overflow(a.DateTime(), *ms, &diff)) {
      return Status(ErrorCode::kOverflow, "date overflow");
    }
    return DateValue(diff);
  }
  if (a.type() == BsonType::kDateTime && b.IsNumber()) {
    NumberSum offset(false);
    offset.Add(b);
    return DateValue(a.DateTime() - offset.AsMillis());
  }
  return Failed(16556, "can't $subtract " + TypeName(v[1]) + " from " + TypeName(v[0]));
}

// The operands of $divide and $mod: two numbers (`type_code` otherwise);
// *null when either is null or missing (the operator's answer is then null).
Status TwoNumbers(std::string_view op, int type_code, const std::vector<Value>& v, bool* null) {
  *null = IsNullish(v[0]) || IsNullish(v[1]);
  if (*null) return Status::OK();
  const Element a = v[0].element(), b = v[1].element();
  if (!a.IsNumber() || !b.IsNumber()) {
    return Failed(type_code, std::string(op) + " only supports numeric types, not " +
                                 TypeName(v[0]) + " and " + TypeName(v[1]));
  }
  return Status::OK();
}

// With a decimal operand, $divide and $mod are on decimals (MongoDB's rule:
// any decimal operand makes the answer a decimal); the divisor's zero test is
// then the decimal's own, since one too small for a double is not zero.
bool EitherDecimal(const Element& a, const Element& b) {
  return a.type() == BsonType::kDecimal128 || b.type() == BsonType::kDecimal128;
}

StatusOr<Value> DivideOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  bool null = false;
  ROCKDOC_RETURN_IF_ERROR(TwoNumbers("$divide", 16609, v, &null));
  if (null) return NullValue();
  const Element a = v[0].element(), b = v[1].element();
  if (EitherDecimal(a, b)) {
    const Decimal128 divisor = NumberToDecimal(b);
    if (divisor.IsZero()) return Failed(16608, "can't $divide by zero");
    return DecimalValue(DecimalDivide(NumberToDecimal(a), divisor));
  }
  if (b.NumberAsDouble() == 0) return Failed(16608, "can't $divide by zero");
  return DoubleValue(a.NumberAsDouble() / b.NumberAsDouble());
}

StatusOr<Value> ModOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  bool null = false;
  ROCKDOC_RETURN_IF_ERROR(TwoNumbers("$mod", 16611, v, &null));
  if (null) return NullValue();
  const Element a = v[0].element(), b = v[1].element();
  if (EitherDecimal(a, b)) {
    const Decimal128 divisor = NumberToDecimal(b);
    if (divisor.IsZero()) return Failed(16610, "can't $mod by zero");
    return DecimalValue(DecimalModulo(NumberToDecimal(a), divisor));
  }
  if (b.NumberAsDouble() == 0) return Failed(16610, "can't $mod by zero");
  if (a.type() == BsonType::kDouble || b.type() == BsonType::kDouble) {
    return DoubleValue(std::fmod(a.NumberAsDouble(), b.NumberAsDouble()));
  }
  const int64_t x = a.type() == BsonType::kInt32 ? a.Int32() : a.Int64();
  const int64_t y = b.type() == BsonType::kInt32 ? b.Int32() : b.Int64();
  const int64_t r = y == -1 ? 0 : x % y;
  if (a.type() == BsonType::kInt64 || b.type() == BsonType::kInt64) return Int64Value(r);
  return IntegerValue(r);
}

// $abs, $ceil, $floor: one number; integers as they are (but |int32 min|
// is a long), doubles and decimals rounded or made positive (a decimal
// quantized to exponent 0 as MongoDB's: 1E+1 becomes 10, and one that would
// need more than 34 digits, or an infinity, NaN).
enum class Unary { kAbs, kCeil, kFloor };

template <Unary kOp>
StatusOr<Value> UnaryNumberOp(const Args& args, const ExpressionVariables& vars) {
  constexpr const char* kName = kOp == Unary::kAbs ? "$abs" : kOp == Unary::kCeil ? "$ceil" : "$floor";
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  if (IsNullish(v)) return NullValue();
  const Element e = v.element();
  if (!e.IsNumber()) {
    return Failed(28765, std::string(kName) + " only supports numeric types, not " + TypeName(v));
  }
  switch (e.type()) {
    case BsonType::kDouble:
      return DoubleValue(kOp == Unary::kAbs    ? std::fabs(e.Double())
                         : kOp == Unary::kCeil ? std::ceil(e.Double())
                                               : std::floor(e.Double()));
    case BsonType::kInt32:
      if (kOp != Unary::kAbs) return v;
      return e.Int32() == std::numeric_limits<int32_t>::min() ? Int64Value(-int64_t{e.Int32()})
                                                               : Int32Value(std::abs(e.Int32()));
    case BsonType::kInt64:
      if (kOp != Unary::kAbs) return v;
      if (e.Int64() == std::numeric_limits<int64_t>::min()) {
        return Failed(28680, "can't take $abs of long long min");
      }
      return Int64Value(std::abs(e.Int64()));
    default:
      if (kOp == Unary::kAbs) return DecimalValue(DecimalAbs(e.Decimal()));
      return DecimalValue(DecimalQuantize(
          e.Decimal(), 0, kOp == Unary::kCeil ? DecimalRounding::kTowardPositive : DecimalRounding::kTowardNegative));
  }
}

// ---- comparison and logic ----

template <int kOp>  // 0 eq, 1 ne, 2 gt, 3 gte, 4 lt, 5 lte, 6 cmp
StatusOr<Value> CompareOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  const int c = Compare(v[0], v[1]);
  switch (kOp) {
    case 0: return BoolValue(c == 0);
    case 1: return BoolValue(c != 0);
    case 2: return BoolValue(c > 0);
    case 3: return BoolValue(c >= 0);
    case 4: return BoolValue(c < 0);
    case 5: return BoolValue(c <= 0);
    default: return Int32Value(c < 0 ? -1 : c > 0 ? 1 : 0);
  }
}

template <bool kAnd>
StatusOr<Value> AndOrOp(const Args& args, const ExpressionVariables& vars) {
  for (const ExpressionPtr& a : args) {
    ROCKDOC_ASSIGN_OR_RETURN(Value v, a->Evaluate(vars));
    if (IsTruthy(v.element()) != kAnd) return BoolValue(!kAnd);
  }
  return BoolValue(kAnd);
}

StatusOr<Value> NotOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  return BoolValue(!IsTruthy(v.element()));
}

StatusOr<Value> CondOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value test, args[0]->Evaluate(vars));
  return args[IsTruthy(test.element()) ? 1 : 2]->Evaluate(vars);
}

StatusOr<Value> IfNullOp(const Args& args, const ExpressionVariables& vars) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    ROCKDOC_ASSIGN_OR_RETURN(Value v, args[i]->Evaluate(vars));
    if (!IsNullish(v)) return v;
  }
  return args.back()->Evaluate(vars);
}

// $switch's arguments: case, then, case, then, ..., and the default (or
// null when there is none).
StatusOr<Value> SwitchOp(const Args& args, const ExpressionVariables& vars) {
  const size_t branches = (args.size() - 1) / 2;
  for (size_t i = 0; i < branches; ++i) {
    ROCKDOC_ASSIGN_OR_RETURN(Value test, args[2 * i]->Evaluate(vars));
    if (IsTruthy(test.element())) return args[2 * i + 1]->Evaluate(vars);
  }
  if (args.back() == nullptr) {
    return Failed(40066,
                  "$switch could not find a matching branch for an input, and no default was "
                  "specified.");
  }
  return args.back()->Evaluate(vars);
}

// ---- arrays ----

int32_t CountElements(DocumentView array) {
  int32_t n = 0;
  for (const Element& e : array) {
    (void)e;
    ++n;
  }
  return n;
}

StatusOr<Value> SizeOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  if (v.type() != BsonType::kArray) {
    return Failed(17124, "The argument to $size must be an array. Type of argument is: " +
                             TypeName(v));
  }
  return Int32Value(CountElements(v.element().Array()));
}

StatusOr<Value> ArrayElemAtOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  if (IsNullish(v[0]) || IsNullish(v[1])) return NullValue();
  if (v[0].type() != BsonType::kArray) {
    return Failed(28689, "$arrayElemAt's first argument must be an array, but is " +
                             TypeName(v[0]));
  }
  int64_t index = 0;
  if (!v[1].element().IsNumber()) {
    return Failed(28690, "$arrayElemAt's second argument must be a numeric value, but is " +
                             TypeName(v[1]));
  }
  if (!v[1].element().ExactInt64(&index) || index < std::numeric_limits<int32_t>::min() ||
      index > std::numeric_limits<int32_t>::max()) {
    return Failed(28691, "$arrayElemAt's second argument must be representable as a 32-bit "
                         "integer: " + ValueToJson(v[1].element(), JsonFormat::kShell));
  }
  DocumentView array = v[0].element().Array();
  const int64_t n = CountElements(array);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return Value();
  int64_t i = 0;
  for (const Element& e : array) {
    if (i++ == index) return Value::FromElement(e);
  }
  return Value();
}

StatusOr<Value> IsArrayOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  return BoolValue(v.type() == BsonType::kArray);
}

StatusOr<Value> InOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  if (v[1].type() != BsonType::kArray) {
    return Failed(40081, "$in requires an array as a second argument, found: " + TypeName(v[1]));
  }
  for (const Element& e : v[1].element().Array()) {
    if (v[0].ok() && CompareValues(v[0].element(), e) == 0) return BoolValue(true);
  }
  return BoolValue(false);
}

StatusOr<Value> ConcatArraysOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> values, EvaluateAll(args, vars));
  BsonBuilder b;
  b.OpenArray("v");
  for (const Value& v : values) {
    if (IsNullish(v)) return NullValue();
    if (v.type() != BsonType::kArray) {
      return Failed(28664, "$concatArrays only supports arrays, not " + TypeName(v));
    }
    for (const Element& e : v.element().Array()) b.AppendElementAs("", e);
    ROCKDOC_RETURN_IF_ERROR(CheckValueBytes(b.size()));
  }
  b.Close();
  Document d = std::move(b).Build();
  return Value::FromElement(d.Get("v"));
}

// ---- more arrays and objects ----

// $sum / $avg / $max / $min as expressions: over one array argument's
// elements, or over the arguments (as the accumulators, non-numbers are
// skipped by $sum/$avg, null and missing by $max/$min).
template <int kOp>  // 0 sum, 1 avg, 2 max, 3 min
StatusOr<Value> ArrayAccumulatorOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> values, EvaluateAll(args, vars));
  std::vector<Element> items;
  if (values.size() == 1 && values[0].type() == BsonType::kArray) {
    for (const Element& e : values[0].element().Array()) items.push_back(e);
  } else {
    for (const Value& v : values) items.push_back(v.element());
  }
  if (kOp <= 1) {
    NumberSum sum;
    int64_t n = 0;
    for (const Element& e : items) {
      if (e.IsNumber()) {
        sum.Add(e);
        ++n;
      }
    }
    if (kOp == 0) return n == 0 ? Int32Value(0) : sum.Result();
    if (n == 0) return NullValue();
    return sum.Average(n);
  }
  const Element* best = nullptr;
  for (const Element& e : items) {
    if (!e.ok() || e.IsNull() || e.type() == BsonType::kUndefined) continue;
    const int c = best == nullptr ? 0 : CompareValues(e, *best);
    if (best == nullptr || (kOp == 2 ? c > 0 : c < 0)) best = &e;
  }
  return best == nullptr ? NullValue() : Value::FromElement(*best);
}

template <bool kFirst>
StatusOr<Value> FirstLastOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  if (!v.ok()) return Value();
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<DocumentView> array,
                           ArrayArg(kFirst ? "$first" : "$last", v, 28689));
  if (!array) return NullValue();
  Element pick;
  for (const Element& e : *array) {
    pick = e;
    if (kFirst) break;
  }
  return pick.ok() ? Value::FromElement(pick) : Value();
}

StatusOr<Value> ReverseArrayOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  if (IsNullish(v)) return NullValue();
  if (v.type() != BsonType::kArray) {
    return Failed(34435, "The argument to $reverseArray must be an array, but was of type: " +
                             TypeName(v));
  }
  std::vector<Element> items;
  for (const Element& e : v.element().Array()) items.push_back(e);
  std::reverse(items.begin(), items.end());
  return ArrayOf(items);
}

StatusOr<Value> SliceOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  for (const Value& x : v) {
    if (IsNullish(x)) return NullValue();
  }
  if (v[0].type() != BsonType::kArray) {
    return Failed(28724, "First argument to $slice must be an array, but is of type: " +
                             TypeName(v[0]));
  }
  std::vector<Element> items;
  for (const Element& e : v[0].element().Array()) items.push_back(e);
  const int64_t size = static_cast<int64_t>(items.size());
  int64_t start = 0, count = 0;
  if (v.size() == 2) {
    ROCKDOC_ASSIGN_OR_RETURN(int64_t n, IntArg("$slice", "the second argument", v[1], 28725));
    if (n >= 0) {
      count = n;
    } else {
      start = std::max<int64_t>(0, size + n);
      count = size - start;
    }
  } else {
    ROCKDOC_ASSIGN_OR_RETURN(int64_t pos, IntArg("$slice", "the second argument", v[1], 28725));
    ROCKDOC_ASSIGN_OR_RETURN(count, IntArg("$slice", "the third argument", v[2], 28727));
    if (count <= 0) {
      return Failed(28729, "Third argument to $slice must be positive: " +
                               ValueToJson(v[2].element(), JsonFormat::kShell));
    }
    start = pos >= 0 ? std::min(pos, size) : std::max<int64_t>(0, size + pos);
  }
  std::vector<Element> out;
  for (int64_t i = start; i < size && i < start + count; ++i) out.push_back(items[i]);
  return ArrayOf(out);
}

StatusOr<Value> RangeOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  ROCKDOC_ASSIGN_OR_RETURN(int64_t start, IntArg("$range", "a starting value", v[0], 34443));
  ROCKDOC_ASSIGN_OR_RETURN(int64_t end, IntArg("$range", "an ending value", v[1], 34445));
  int64_t step = 1;
  if (v.size() == 3) {
    ROCKDOC_ASSIGN_OR_RETURN(step, IntArg("$range", "a step value", v[2], 34447));
    if (step == 0) return Failed(34449, "$range requires a non-zero step value");
  }
  // The count first, so a range too large fails before anything is built
  // (MongoDB's internalQueryMaxRangeBytes, charging each value as its
  // 16-byte Value).
  const int64_t span = step > 0 ? end - start : start - end;
  const int64_t magnitude = step > 0 ? step : -step;
  const int64_t count = span <= 0 ? 0 : (span + magnitude - 1) / magnitude;
  const int64_t bytes = count * kRangeBytesPerValue;
  if (bytes > RangeMemoryLimitBytes()) {
    return Failed(146, "$range would use too much memory (" + std::to_string(bytes) +
                           " bytes) and cannot spill to disk. Memory limit: " +
                           std::to_string(RangeMemoryLimitBytes()) + " bytes");
  }
  BsonBuilder b;
  b.OpenArray("v");
  for (int64_t k = 0, i = start; k < count; ++k, i += step) {
    b.AppendInt32("", static_cast<int32_t>(i));
  }
  b.Close();
  Document d = std::move(b).Build();
  return Value::FromElement(d.Get("v"));
}

StatusOr<Value> IndexOfArrayOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  if (IsNullish(v[0])) return NullValue();
  if (v[0].type() != BsonType::kArray) {
    return Failed(40090, "$indexOfArray requires an array as a first argument, found: " +
                             TypeName(v[0]));
  }
  std::vector<Element> items;
  for (const Element& e : v[0].element().Array()) items.push_back(e);
  int64_t start = 0, end = static_cast<int64_t>(items.size());
  if (v.size() >= 3) {
    ROCKDOC_ASSIGN_OR_RETURN(start, IntArg("$indexOfArray", "a starting index", v[2], 40096));
    if (start < 0) return Failed(40097, "$indexOfArray requires a nonnegative starting index");
  }
  if (v.size() == 4) {
    ROCKDOC_ASSIGN_OR_RETURN(end, IntArg("$indexOfArray", "an ending index", v[3], 40096));
    if (end < 0) return Failed(40097, "$indexOfArray requires a nonnegative ending index");
    end = std::min<int64_t>(end, static_cast<int64_t>(items.size()));
  }
  for (int64_t i = start; i < end; ++i) {
    if (v[1].ok() && CompareValues(items[i], v[1].element()) == 0) return Int32Value(static_cast<int32_t>(i));
  }
  return Int32Value(-1);
}

// ---- $let ----

class LetExpression : public Expression {
 public:
  LetExpression(std::vector<std::pair<int, ExpressionPtr>> vars, ExpressionPtr in)
      : vars_(std::move(vars)), in_(std::move(in)) {}
  StatusOr<Value> Evaluate(const ExpressionVariables& vars) const override {
    // The variables' values come from the outer scope, then `in` sees them.
    std::vector<Value> values;
    for (const auto& [id, expr] : vars_) {
      ROCKDOC_ASSIGN_OR_RETURN(Value v, expr->Evaluate(vars));
      values.push_back(std::move(v));
    }
    ExpressionVariables inner = vars;
    for (size_t i = 0; i < vars_.size(); ++i) {
      const size_t id = static_cast<size_t>(vars_[i].first);
      if (inner.user.size() <= id) inner.user.resize(id + 1);
      inner.user[id] = std::move(values[i]);
    }
    return in_->Evaluate(inner);
  }

 private:
  std::vector<std::pair<int, ExpressionPtr>> vars_;
  ExpressionPtr in_;
};

// ---- $filter, $map, $reduce: an expression per element ----

class IterateExpression : public Expression {
 public:
  enum Kind { kFilter, kMap, kReduce };
  IterateExpression(Kind kind, ExpressionPtr input, int var, int value_var, ExpressionPtr body,
                    ExpressionPtr initial, ExpressionPtr limit)
      : kind_(kind), input_(std::move(input)), var_(var), value_var_(value_var),
        body_(std::move(body)), initial_(std::move(initial)), limit_(std::move(limit)) {}

  StatusOr<Value> Evaluate(const ExpressionVariables& vars) const override {
    static constexpr const char* kNames[] = {"$filter", "$map", "$reduce"};
    ROCKDOC_ASSIGN_OR_RETURN(Value input, input_->Evaluate(vars));
    if (IsNullish(input)) return NullValue();
    if (input.type() != BsonType::kArray) {
      static constexpr int kCodes[] = {28651, 16883, 40080};
      return Failed(kCodes[kind_], std::string("input to ") + kNames[kind_] +
                                       " must be an array not " + TypeName(input));
    }
    int64_t limit = -1;
    if (limit_) {
      ROCKDOC_ASSIGN_OR_RETURN(Value l, limit_->Evaluate(vars));
      if (!IsNullish(l)) {
        if (!l.element().IsNumber() || !l.element().ExactInt64(&limit) || limit <= 0 ||
            limit > std::numeric_limits<int32_t>::max()) {
          return Failed(327392, "$filter: limit must be a positive 32-bit integer, got " +
                                    ValueToJson(l.element(), JsonFormat::kShell));
        }
      }
    }
    ExpressionVariables inner = vars;
    const size_t need = static_cast<size_t>(std::max(var_, value_var_)) + 1;
    if (inner.user.size() < need) inner.user.resize(need);
    Value acc;
    if (kind_ == kReduce) {
      ROCKDOC_ASSIGN_OR_RETURN(acc, initial_->Evaluate(vars));
    }
    BsonBuilder b;
    b.OpenArray("v");
    int64_t kept = 0;
    for (const Element& e : input.element().Array()) {
      inner.user[var_] = Value::FromElement(e);
      if (kind_ == kReduce) {
        inner.user[value_var_] = acc;
        ROCKDOC_ASSIGN_OR_RETURN(acc, body_->Evaluate(inner));
        continue;
      }
      ROCKDOC_ASSIGN_OR_RETURN(Value r, body_->Evaluate(inner));
      if (kind_ == kMap) {
        if (r.ok()) {
          b.AppendElementAs("", r.element());
        } else {
          b.AppendNull("");
        }
      } else if (IsTruthy(r.element())) {
        b.AppendElementAs("", e);
        if (limit > 0 && ++kept == limit) break;
      }
    }
    if (kind_ == kReduce) return acc;
    b.Close();
    Document d = std::move(b).Build();
    return Value::FromElement(d.Get("v"));
  }

 private:
  Kind kind_;
  ExpressionPtr input_;
  int var_;
  int value_var_;
  ExpressionPtr body_;
  ExpressionPtr initial_;
  ExpressionPtr limit_;
};

// ---- parsing ----

// The arguments of {$op: args}: an array's elements, else the one value.
StatusOr<Args> ParseArgs(const Element& operand, VariableScope* scope) {
  Args args;
  if (operand.type() == BsonType::kArray) {
    for (const Element& e : operand.Array()) {
      ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr a, ParseExpression(e, scope));
      args.push_back(std::move(a));
    }
  } else {
    ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr a, ParseExpression(operand, scope));
    args.push_back(std::move(a));
  }
  return args;
}

Status CheckArity(std::string_view name, size_t n, size_t min, size_t max) {
  if (n >= min && n <= max) return Status::OK();
  if (min == max) {
    return Failed(16020, "Expression " + std::string(name) + " takes exactly " +
                             std::to_string(min) + " arguments. " + std::to_string(n) +
                             " were passed in.");
  }
  if (max == SIZE_MAX) {
    return Failed(16020, "Expression " + std::string(name) + " takes at least " +
                             std::to_string(min) + " arguments. " + std::to_string(n) +
                             " were passed in.");
  }
  return Failed(28667, "Expression " + std::string(name) + " takes at least " +
                           std::to_string(min) + " arguments, and at most " + std::to_string(max) +
                           ", but " + std::to_string(n) + " were passed in.");
}

struct OperatorTables {
  OperatorTable positional;
  NamedOperatorTable named;
};

const OperatorTables& Operators() {
  static const OperatorTables* tables = [] {
    auto* t = new OperatorTables;
    t->positional = {
      {"$add", {&AddOp, 0, SIZE_MAX}},
      {"$subtract", {&SubtractOp, 2, 2}},
      {"$multiply", {&MultiplyOp, 0, SIZE_MAX}},
      {"$divide", {&DivideOp, 2, 2}},
      {"$mod", {&ModOp, 2, 2}},
      {"$abs", {&UnaryNumberOp<Unary::kAbs>, 1, 1}},
      {"$ceil", {&UnaryNumberOp<Unary::kCeil>, 1, 1}},
      {"$floor", {&UnaryNumberOp<Unary::kFloor>, 1, 1}},
      {"$eq", {&CompareOp<0>, 2, 2}},
      {"$ne", {&CompareOp<1>, 2, 2}},
      {"$gt", {&CompareOp<2>, 2, 2}},
      {"$gte", {&CompareOp<3>, 2, 2}},
      {"$lt", {&CompareOp<4>, 2, 2}},
      {"$lte", {&CompareOp<5>, 2, 2}},
      {"$cmp", {&CompareOp<6>, 2, 2}},
      {"$and", {&AndOrOp<true>, 0, SIZE_MAX}},
      {"$or", {&AndOrOp<false>, 0, SIZE_MAX}},
      {"$not", {&NotOp, 1, 1}},
      {"$ifNull", {&IfNullOp, 2, SIZE_MAX}},
      {"$size", {&SizeOp, 1, 1}},
      {"$arrayElemAt", {&ArrayElemAtOp, 2, 2}},
      {"$isArray", {&IsArrayOp, 1, 1}},
      {"$in", {&InOp, 2, 2}},
      {"$concatArrays", {&ConcatArraysOp, 0, SIZE_MAX}},
      {"$sum", {&ArrayAccumulatorOp<0>, 1, SIZE_MAX}},
      {"$avg", {&ArrayAccumulatorOp<1>, 1, SIZE_MAX}},
      {"$max", {&ArrayAccumulatorOp<2>, 1, SIZE_MAX}},
      {"$min", {&ArrayAccumulatorOp<3>, 1, SIZE_MAX}},
      {"$first", {&FirstLastOp<true>, 1, 1}},
      {"$last", {&FirstLastOp<false>, 1, 1}},
      {"$reverseArray", {&ReverseArrayOp, 1, 1}},
      {"$slice", {&SliceOp, 2, 3}},
      {"$range", {&RangeOp, 2, 3}},
      {"$indexOfArray", {&IndexOfArrayOp, 2, 4}},
    };
    AddStringOperators(&t->positional, &t->named);
    AddSetOperators(&t->positional, &t->named);
    AddConvertOperators(&t->positional, &t->named);
    AddObjectOperators(&t->positional, &t->named);
    AddMathOperators(&t->positional, &t->named);
    AddDateOperators(&t->positional, &t->named);
    AddArrayOperators(&t->positional, &t->named);
    return t;
  }();
  return *tables;
}

// MongoDB's other expression operators: known, not implemented yet.
bool IsKnownOperator(std::string_view name) {
  static const char* const kNames[] = {
      "$acos", "$acosh", "$allElementsTrue", "$anyElementTrue", "$arrayToObject", "$asin",
      "$asinh", "$atan", "$atan2", "$atanh", "$avg", "$binarySize", "$bsonSize", "$convert",
      "$cos", "$cosh", "$dateAdd", "$dateDiff", "$dateFromParts", "$dateFromString",
      "$dateSubtract", "$dateToParts", "$dateToString", "$dateTrunc", "$dayOfMonth",
      "$dayOfWeek", "$dayOfYear", "$degreesToRadians", "$exp", "$filter", "$first",
      "$firstN", "$function", "$getField", "$hour", "$indexOfArray", "$indexOfBytes",
      "$indexOfCP", "$isNumber", "$isoDayOfWeek", "$isoWeek", "$isoWeekYear", "$last",
      "$lastN", "$literal", "$ln", "$log", "$log10", "$ltrim", "$map", "$max", "$maxN",
      "$median", "$mergeObjects", "$millisecond", "$min", "$minN", "$minute",
      "$month", "$objectToArray", "$percentile", "$pow", "$radiansToDegrees",
      "$range", "$reduce", "$regexFind", "$regexFindAll", "$regexMatch", "$replaceAll",
      "$replaceOne", "$reverseArray", "$round", "$rtrim", "$sampleRate", "$second",
      "$setDifference", "$setEquals", "$setField", "$setIntersection", "$setIsSubset",
      "$setUnion", "$sin", "$sinh", "$slice", "$sortArray", "$split", "$sqrt", "$stdDevPop",
      "$stdDevSamp", "$strcasecmp", "$strLenBytes", "$substr", "$substrBytes", "$substrCP",
      "$sum", "$switch", "$tan", "$tanh", "$toBool", "$toDate", "$toDecimal", "$toDouble",
      "$toInt", "$toLong", "$toObjectId", "$toString", "$trim", "$trunc", "$tsIncrement",
      "$tsSecond", "$type", "$unsetField", "$week", "$year", "$zip", "$let", "$cond",
      "$accumulator", "$bitAnd", "$bitNot", "$bitOr", "$bitXor", "$top", "$topN", "$bottom",
      "$bottomN", "$getField", "$encStrStartsWith"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

// Operators registered by the program (RegisterExtensionOperator).
struct Extension {
  ExtensionOperatorFn fn;
  size_t min_args;
  size_t max_args;
};

std::shared_mutex& ExtensionsMutex() {
  static std::shared_mutex* mu = new std::shared_mutex;
  return *mu;
}

std::map<std::string, Extension, std::less<>>& Extensions() {
  static auto* extensions = new std::map<std::string, Extension, std::less<>>;
  return *extensions;
}

std::optional<Extension> FindExtension(std::string_view name) {
  std::shared_lock lock(ExtensionsMutex());
  auto it = Extensions().find(name);
  if (it == Extensions().end()) return std::nullopt;
  return it->second;
}

class ExtensionOperator : public Expression {
 public:
  ExtensionOperator(ExtensionOperatorFn fn, Args args) : fn_(fn), args_(std::move(args)) {}
  StatusOr<Value> Evaluate(const ExpressionVariables& vars) const override {
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> values, EvaluateAll(args_, vars));
    ROCKDOC_ASSIGN_OR_RETURN(Value v, fn_(values));
    if (v.ok()) ROCKDOC_RETURN_IF_ERROR(CheckValueBytes(v.element().value_size()));
    return v;
  }

 private:
  ExtensionOperatorFn fn_;
  Args args_;
};

StatusOr<ExpressionPtr> ParseString(std::string_view s, VariableScope* scope) {
  if (s.substr(0, 2) == "$$") {
    std::string_view rest = s.substr(2);
    const size_t dot = rest.find('.');
    std::string_view name = rest.substr(0, dot);
    if (name.empty()) return Failed(16869, "empty variable names are not allowed");
    std::vector<std::string> path;
    if (dot != std::string_view::npos) {
      ROCKDOC_ASSIGN_OR_RETURN(path, SplitFieldPath(rest.substr(dot + 1)));
    }
    int id;
    if (name == "ROOT") {
      id = Variable::kRoot;
    } else if (name == "CURRENT") {
      id = Variable::kCurrent;
    } else if (name == "DESCEND" || name == "PRUNE" || name == "KEEP") {
      // $redact's answers.
      if (dot != std::string_view::npos) return Failed(17276, "Use of undefined variable: " + std::string(rest));
      std::string lower(name);
      for (char& c : lower) c = static_cast<char>(c - 'A' + 'a');
      return ExpressionPtr(std::make_unique<Constant>(StringValue(lower)));
    } else if (name == "REMOVE") {
      id = Variable::kRemove;
    } else if (name == "NOW") {
      id = Variable::kNow;
    } else if (name == "CLUSTER_TIME" || name == "SEARCH_META" || name == "USER_ROLES") {
      return Status(ErrorCode::kNotImplemented,
                    "$$" + std::string(name) + " is not supported by rockdoc");
    } else {
      id = scope->Find(name);
      if (id < 0) return Failed(17276, "Use of undefined variable: " + std::string(name));
    }
    return ExpressionPtr(std::make_unique<Variable>(id, std::move(path)));
  }
  if (s.size() >= 1 && s[0] == '$') {
    if (s.size() == 1) return Failed(16872, "'$' by itself is not a valid FieldPath");
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> path, SplitFieldPath(s.substr(1)));
    return ExpressionPtr(std::make_unique<Variable>(Variable::kCurrent, std::move(path)));
  }
  return ExpressionPtr(std::make_unique<Constant>(StringValue(s)));
}

StatusOr<ExpressionPtr> ParseCond(const Element& operand, VariableScope* scope) {
  Args args(3);
  if (operand.type() == BsonType::kDocument) {
    for (const Element& f : operand.Document()) {
      const int slot = f.key() == "if" ? 0 : f.key() == "then" ? 1 : f.key() == "else" ? 2 : -1;
      if (slot < 0) return Failed(17083, "Unrecognized parameter to $cond: " + std::string(f.key()));
      ROCKDOC_ASSIGN_OR_RETURN(args[slot], ParseExpression(f, scope));
    }
    static const char* const kNames[] = {"if", "then", "else"};
    for (int i = 0; i < 3; ++i) {
      if (!args[i]) {
        return Failed(17080 + i, std::string("Missing '") + kNames[i] + "' parameter to $cond");
      }
    }
  } else {
    ROCKDOC_ASSIGN_OR_RETURN(args, ParseArgs(operand, scope));
    ROCKDOC_RETURN_IF_ERROR(CheckArity("$cond", args.size(), 3, 3));
  }
  return ExpressionPtr(std::make_unique<Operator>(&CondOp, std::move(args)));
}

StatusOr<ExpressionPtr> ParseSwitch(const Element& operand, VariableScope* scope) {
  if (operand.type() != BsonType::kDocument) {
    return Failed(40060, "$switch requires an object as an argument, found: " +
                             std::string(BsonTypeAlias(operand.type())));
  }
  Args args;
  ExpressionPtr fallback;
  bool has_branches = false;
  for (const Element& f : operand.Document()) {
    if (f.key() == "branches") {
      if (f.type() != BsonType::kArray) {
        return Failed(40061, "$switch expected an array for 'branches', found: " +
                                 std::string(BsonTypeAlias(f.type())));
      }
      has_branches = true;
      for (const Element& branch : f.Array()) {
        if (branch.type() != BsonType::kDocument) {
          return Failed(40062, "$switch expected each branch to be an object, found: " +
                                   std::string(BsonTypeAlias(branch.type())));
        }
        ExpressionPtr test, then;
        for (const Element& g : branch.Document()) {
          if (g.key() == "case") {
            ROCKDOC_ASSIGN_OR_RETURN(test, ParseExpression(g, scope));
          } else if (g.key() == "then") {
            ROCKDOC_ASSIGN_OR_RETURN(then, ParseExpression(g, scope));
          } else {
            return Failed(40063, "$switch found an unknown argument to a branch: " +
                                     std::string(g.key()));
          }
        }
        if (!test) return Failed(40064, "$switch requires each branch have a 'case' expression");
        if (!then) return Failed(40065, "$switch requires each branch have a 'then' expression.");
        args.push_back(std::move(test));
        args.push_back(std::move(then));
      }
    } else if (f.key() == "default") {
      ROCKDOC_ASSIGN_OR_RETURN(fallback, ParseExpression(f, scope));
    } else {
      return Failed(40067, "$switch found an unknown argument: " + std::string(f.key()));
    }
  }
  if (!has_branches || args.empty()) return Failed(40068, "$switch requires at least one branch.");
  args.push_back(std::move(fallback));  // null: no default
  return ExpressionPtr(std::make_unique<Operator>(&SwitchOp, std::move(args)));
}

StatusOr<ExpressionPtr> ParseLet(const Element& operand, VariableScope* scope) {
  if (operand.type() != BsonType::kDocument) {
    return Failed(16874, "$let only supports an object as its argument");
  }
  Element vars = operand.Document().Get("vars"), in = operand.Document().Get("in");
  for (const Element& f : operand.Document()) {
    if (f.key() != "vars" && f.key() != "in") {
      return Failed(16875, "Unrecognized parameter to $let: " + std::string(f.key()));
    }
  }
  if (!vars.ok()) return Failed(16876, "Missing 'vars' parameter to $let");
  if (!in.ok()) return Failed(16877, "Missing 'in' parameter to $let");
  if (vars.type() != BsonType::kDocument) {
    return Failed(10065, "invalid parameter: expected an object (vars)");
  }
  // The values are parsed in the outer scope; `in` sees the new names.
  std::vector<std::pair<std::string_view, ExpressionPtr>> parsed;
  for (const Element& v : vars.Document()) {
    ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr e, ParseExpression(v, scope));
    parsed.emplace_back(v.key(), std::move(e));
  }
  const size_t outer = scope->size();
  std::vector<std::pair<int, ExpressionPtr>> defined;
  for (auto& [name, e] : parsed) {
    ROCKDOC_ASSIGN_OR_RETURN(int id, scope->Define(name));
    defined.emplace_back(id, std::move(e));
  }
  StatusOr<ExpressionPtr> body = ParseExpression(in, scope);
  scope->PopTo(outer);
  ROCKDOC_RETURN_IF_ERROR(body.status());
  return ExpressionPtr(std::make_unique<LetExpression>(std::move(defined), std::move(*body)));
}

// {$filter: {input, as, cond, limit}}, {$map: {input, as, in}},
// {$reduce: {input, initialValue, in}} ($$this and $$value).
StatusOr<ExpressionPtr> ParseIterate(std::string_view name, const Element& operand,
                                     VariableScope* scope) {
  const IterateExpression::Kind kind = name == "$filter" ? IterateExpression::kFilter
                                       : name == "$map"  ? IterateExpression::kMap
                                                         : IterateExpression::kReduce;
  static constexpr int kObjectCodes[] = {28646, 16878, 40075};
  if (operand.type() != BsonType::kDocument) {
    return Failed(kObjectCodes[kind], std::string(name) + " only supports an object as its argument");
  }
  Element input, as, body, initial, limit;
  const char* body_name = kind == IterateExpression::kFilter ? "cond" : "in";
  for (const Element& f : operand.Document()) {
    const std::string_view k = f.key();
    if (k == "input") {
      input = f;
    } else if (k == "as" && kind != IterateExpression::kReduce) {
      as = f;
    } else if (k == body_name) {
      body = f;
    } else if (k == "initialValue" && kind == IterateExpression::kReduce) {
      initial = f;
    } else if (k == "limit" && kind == IterateExpression::kFilter) {
      limit = f;
    } else {
      static constexpr int kUnknown[] = {28647, 16879, 40076};
      return Failed(kUnknown[kind], "Unrecognized parameter to " + std::string(name) + ": " +
                                        std::string(k));
    }
  }
  if (!input.ok()) {
    static constexpr int kNoInput[] = {28648, 16880, 40077};
    return Failed(kNoInput[kind], "Missing 'input' parameter to " + std::string(name));
  }
  if (!body.ok()) {
    static constexpr int kNoBody[] = {28650, 16882, 40079};
    return Failed(kNoBody[kind], "Missing '" + std::string(body_name) + "' parameter to " +
                                     std::string(name));
  }
  if (kind == IterateExpression::kReduce && !initial.ok()) {
    return Failed(40078, "Missing 'initialValue' parameter to $reduce");
  }
  ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr input_expr, ParseExpression(input, scope));
  ExpressionPtr initial_expr, limit_expr;
  if (initial.ok()) {
    ROCKDOC_ASSIGN_OR_RETURN(initial_expr, ParseExpression(initial, scope));
  }
  if (limit.ok()) {
    ROCKDOC_ASSIGN_OR_RETURN(limit_expr, ParseExpression(limit, scope));
  }
  std::string_view var_name = "this";
  if (as.ok()) {
    if (as.type() != BsonType::kString) {
      return Failed(14, "'as' must be a string in " + std::string(name));
    }
    var_name = as.String();
  }
  const size_t outer = scope->size();
  ROCKDOC_ASSIGN_OR_RETURN(int var, scope->Define(var_name));
  int value_var = var;
  if (kind == IterateExpression::kReduce) {
    ROCKDOC_ASSIGN_OR_RETURN(value_var, scope->Define("value"));
  }
  StatusOr<ExpressionPtr> body_expr = ParseExpression(body, scope);
  scope->PopTo(outer);
  ROCKDOC_RETURN_IF_ERROR(body_expr.status());
  return ExpressionPtr(std::make_unique<IterateExpression>(
      kind, std::move(input_expr), var, value_var, std::move(*body_expr), std::move(initial_expr),
      std::move(limit_expr)));
}

// {$op: {name: expr, ...}}: the arguments in the definition's order.
StatusOr<ExpressionPtr> ParseNamed(std::string_view op, const NamedOperatorDef& def,
                                   const Element& operand, VariableScope* scope) {
  const bool operator_object = operand.type() == BsonType::kDocument &&
                               !operand.Document().empty() &&
                               (*operand.Document().begin()).key().substr(0, 1) == "$";
  if (!def.shorthand.empty() && (operand.type() != BsonType::kDocument || operator_object)) {
    Args args(def.names.size());
    const size_t slot = std::find(def.names.begin(), def.names.end(), def.shorthand) - def.names.begin();
    ROCKDOC_ASSIGN_OR_RETURN(args[slot], ParseExpression(operand, scope));
    return ExpressionPtr(std::make_unique<Operator>(def.fn, std::move(args)));
  }
  if (operand.type() != BsonType::kDocument) {
    return Failed(def.not_object_code, std::string(op) +
                                           " expects an object of named arguments but found: " +
                                           std::string(BsonTypeAlias(operand.type())));
  }
  Args args(def.names.size());
  for (const Element& f : operand.Document()) {
    auto at = std::find(def.names.begin(), def.names.end(), f.key());
    if (at == def.names.end()) {
      return Failed(def.unknown_code, std::string(op) + " found an unknown argument: " +
                                          std::string(f.key()));
    }
    ROCKDOC_ASSIGN_OR_RETURN(args[at - def.names.begin()], ParseExpression(f, scope));
  }
  for (size_t i = 0; i < def.required; ++i) {
    if (args[i] == nullptr) {
      return Failed(def.missing_code, std::string(op) + " requires '" + std::string(def.names[i]) +
                                          "' to be specified");
    }
  }
  return ExpressionPtr(std::make_unique<Operator>(def.fn, std::move(args)));
}

StatusOr<ExpressionPtr> ParseOperator(std::string_view name, const Element& operand,
                                      VariableScope* scope) {
  if (name == "$literal") return ExpressionPtr(std::make_unique<Constant>(Value::FromElement(operand)));
  if (name == "$cond") return ParseCond(operand, scope);
  if (name == "$switch") return ParseSwitch(operand, scope);
  if (name == "$let") return ParseLet(operand, scope);
  if (name == "$filter" || name == "$map" || name == "$reduce") {
    return ParseIterate(name, operand, scope);
  }
  // The date parts' document form: {date, timezone}, as Args {date, timezone}.
  if (IsDatePartOperator(name) && operand.type() == BsonType::kDocument &&
      !operand.Document().empty() && (*operand.Document().begin()).key().substr(0, 1) != "$") {
    Args args(2);
    for (const Element& f : operand.Document()) {
      const int slot = f.key() == "date" ? 0 : f.key() == "timezone" ? 1 : -1;
      if (slot < 0) {
        return Failed(40535, "unrecognized option to " + std::string(name) + ": \"" +
                                 std::string(f.key()) + "\"");
      }
      ROCKDOC_ASSIGN_OR_RETURN(args[slot], ParseExpression(f, scope));
    }
    if (args[0] == nullptr) {
      return Failed(40539, "missing 'date' argument to " + std::string(name) + ", provided: " +
                               ValueToJson(operand, JsonFormat::kShell));
    }
    return ExpressionPtr(std::make_unique<Operator>(Operators().positional.at(name).fn, std::move(args)));
  }
  if (auto named = Operators().named.find(name); named != Operators().named.end()) {
    return ParseNamed(name, named->second, operand, scope);
  }
  auto it = Operators().positional.find(name);
  if (it == Operators().positional.end()) {
    if (std::optional<Extension> ext = FindExtension(name)) {
      ROCKDOC_ASSIGN_OR_RETURN(Args args, ParseArgs(operand, scope));
      ROCKDOC_RETURN_IF_ERROR(CheckArity(name, args.size(), ext->min_args, ext->max_args));
      return ExpressionPtr(std::make_unique<ExtensionOperator>(ext->fn, std::move(args)));
    }
    if (IsKnownOperator(name)) {
      return Status(ErrorCode::kNotImplemented,
                    "the expression " + std::string(name) + " is not supported by rockdoc yet");
    }
    return Failed(168, "Unrecognized expression '" + std::string(name) + "'");
  }
  ROCKDOC_ASSIGN_OR_RETURN(Args args, ParseArgs(operand, scope));
  ROCKDOC_RETURN_IF_ERROR(CheckArity(name, args.size(), it->second.min_args, it->second.max_args));
  return ExpressionPtr(std::make_unique<Operator>(it->second.fn, std::move(args)));
}

}  // namespace

NumberSum::NumberSum(bool multiply)
    : multiply_(multiply), i_(multiply ? 1 : 0), d_(multiply ? 1 : 0),
      dec_(Decimal128::FromInt64(multiply ? 1 : 0)) {}

namespace {

// The exact sum of two doubles as the nearest double and the remainder
// (Knuth's TwoSum; exact whatever their magnitudes).
std::pair<double, double> TwoSum(double a, double b) {
  const double s = a + b;
  const double a_part = s - b;
  const double b_part = s - a_part;
  return {s, (a - a_part) + (b - b_part)};
}

}  // namespace

void NumberSum::AddDouble(double x) {
  naive_ += x;
  // Neumaier's compensated summation: the running sum and the parts it lost.
  const auto [sum, lost] = TwoSum(d_, x);
  d_ = sum;
  compensation_ += lost;
}

void NumberSum::AddNonDecimal(const Element& e) {
  if (e.type() == BsonType::kDouble || non_decimal_double_) {
    if (!non_decimal_double_) naive_ = d_ = static_cast<double>(i_);
    non_decimal_double_ = true;
    AddDouble(e.NumberAsDouble());
    return;
  }
  const int64_t v = e.type() == BsonType::kInt32 ? e.Int32() : e.Int64();
  int64_t r = 0;
  if (__builtin_add_overflow(i_, v, &r)) {
    non_decimal_double_ = true;
    naive_ = d_ = static_cast<double>(i_);
    AddDouble(static_cast<double>(v));
    return;
  }
  i_ = r;
}

double NumberSum::NonDecimalDouble() const {
  if (!non_decimal_double_) return static_cast<double>(i_);
  // An infinity or NaN poisons the compensation; the plain sum says which.
  if (!std::isfinite(d_ + compensation_)) return naive_;
  return d_ + compensation_;
}

Decimal128 NumberSum::NonDecimalAsDecimal() const {
  if (!non_decimal_double_) return Decimal128::FromInt64(i_);
  if (!std::isfinite(d_ + compensation_)) return DecimalFromDoubleExact(naive_);
  // The nearest double and the rest, each to 34 digits, as MongoDB converts
  // its double-double sum.
  const auto [high, low] = TwoSum(d_, compensation_);
  return DecimalAdd(DecimalFromDoubleExact(high), DecimalFromDoubleExact(low));
}

void NumberSum::Add(const Element& e) {
  if (e.type() == BsonType::kInt64) long_ = true;
  if (!multiply_) {
    // MongoDB's sums keep decimal operands in a decimal total and every other
    // number in a compensated binary one, added together at the end.
    if (e.type() == BsonType::kDecimal128) {
      kind_ = kDecimal;
      dec_ = DecimalAdd(dec_, e.Decimal());
      return;
    }
    if (e.type() == BsonType::kDouble && kind_ == kInteger) kind_ = kDouble;
    AddNonDecimal(e);
    if (non_decimal_double_ && kind_ == kInteger) kind_ = kDouble;
    return;
  }
  if (e.type() == BsonType::kDecimal128 || kind_ == kDecimal) {
    if (kind_ != kDecimal) {
      // The product so far as MongoDB converts it: a double to 15 digits.
      dec_ = kind_ == kDouble ? DecimalFromDouble(d_) : Decimal128::FromInt64(i_);
    }
    kind_ = kDecimal;
    dec_ = DecimalMultiply(dec_, NumberToDecimal(e));
    return;
  }
  if (e.type() == BsonType::kDouble || kind_ == kDouble) {
    if (kind_ != kDouble) d_ = static_cast<double>(i_);
    kind_ = kDouble;
    d_ *= e.NumberAsDouble();
    return;
  }
  const int64_t v = e.type() == BsonType::kInt32 ? e.Int32() : e.Int64();
  int64_t r = 0;
  if (__builtin_mul_overflow(i_, v, &r)) {
    kind_ = kDouble;
    d_ = static_cast<double>(i_) * static_cast<double>(v);
    return;
  }
  i_ = r;
}

Value NumberSum::Result() const {
  switch (kind_) {
    case kDecimal: return DecimalValue(multiply_ ? dec_ : DecimalAdd(dec_, NonDecimalAsDecimal()));
    case kDouble: return DoubleValue(multiply_ ? d_ : NonDecimalDouble());
    default: return long_ ? Int64Value(i_) : IntegerValue(i_);
  }
}

void NumberSum::AppendState(std::string_view key, BsonBuilder* out) const {
  out->OpenDocument(key);
  out->AppendInt32("k", static_cast<int32_t>(kind_));
  out->AppendBool("l", long_);
  out->AppendBool("nd", non_decimal_double_);
  out->AppendInt64("i", i_);
  out->AppendDouble("d", d_);
  out->AppendDouble("c", compensation_);
  out->AppendDouble("n", naive_);
  out->AppendDecimal128("m", dec_);
  out->Close();
}

Status NumberSum::MergeState(const Element& state) {
  const auto damaged = [] { return Status(ErrorCode::kInternalError, "a spilled partial sum is damaged"); };
  if (state.type() != BsonType::kDocument) return damaged();
  const DocumentView s = state.Document();
  const Element k = s.Get("k"), l = s.Get("l"), nd = s.Get("nd"), i = s.Get("i"), d = s.Get("d"),
                c = s.Get("c"), n = s.Get("n"), m = s.Get("m");
  if (k.type() != BsonType::kInt32 || l.type() != BsonType::kBool || nd.type() != BsonType::kBool ||
      i.type() != BsonType::kInt64 || d.type() != BsonType::kDouble || c.type() != BsonType::kDouble ||
      n.type() != BsonType::kDouble || m.type() != BsonType::kDecimal128) {
    return damaged();
  }
  const bool was_long = long_ || l.Bool();
  if (k.Int32() == kDecimal) {
    kind_ = kDecimal;
    dec_ = DecimalAdd(dec_, m.Decimal());
  }
  if (nd.Bool()) {
    if (kind_ == kInteger) kind_ = kDouble;
    if (!non_decimal_double_) naive_ = d_ = static_cast<double>(i_);
    non_decimal_double_ = true;
    AddDouble(d.Double());
    AddDouble(c.Double());
    naive_ += n.Double() - d.Double() - c.Double();
  } else {
    AddNonDecimal(i);
  }
  long_ = was_long;
  return Status::OK();
}

double NumberSum::AsDouble() const {
  if (kind_ == kDecimal) return DecimalToDouble(multiply_ ? dec_ : DecimalAdd(dec_, NonDecimalAsDecimal()));
  if (multiply_) return kind_ == kInteger ? static_cast<double>(i_) : d_;
  return NonDecimalDouble();
}

Value NumberSum::Average(int64_t count) const {
  if (kind_ == kDecimal) {
    return DecimalValue(DecimalDivide(DecimalAdd(dec_, NonDecimalAsDecimal()), Decimal128::FromInt64(count)));
  }
  return DoubleValue(AsDouble() / static_cast<double>(count));
}

int64_t NumberSum::AsMillis() const {
  if (kind_ == kInteger) return i_;
  if (kind_ == kDecimal) {
    // MongoDB's Decimal128::toLong: ties to even.
    return DecimalToInt64(multiply_ ? dec_ : DecimalAdd(dec_, NonDecimalAsDecimal()), DecimalRounding::kHalfEven)
        .value_or(0);
  }
  const double d = AsDouble();
  if (!(std::fabs(d) < 9.2e18)) return 0;  // NaN or out of range: no offset
  return static_cast<int64_t>(std::llround(d));
}

Status RegisterExtensionOperator(std::string_view name, ExtensionOperatorFn fn, size_t min_args,
                                 size_t max_args) {
  if (name.size() < 2 || name[0] != '$' || name[1] == '$') {
    return BadValue("an extension operator's name starts with one '$': " + std::string(name));
  }
  if (Operators().positional.count(name) != 0 || Operators().named.count(name) != 0 ||
      IsKnownOperator(name) || name == "$literal" || name == "$cond" || name == "$switch" ||
      name == "$let" || name == "$filter" || name == "$map" || name == "$reduce") {
    return BadValue("MongoDB has an expression operator " + std::string(name));
  }
  std::unique_lock lock(ExtensionsMutex());
  if (!Extensions().emplace(std::string(name), Extension{fn, min_args, max_args}).second) {
    return BadValue("the extension operator " + std::string(name) + " is already registered");
  }
  return Status::OK();
}

StatusOr<int> VariableScope::Define(std::string_view name) {
  if (name.empty()) return Failed(16866, "empty variable names are not allowed");
  const unsigned char first = static_cast<unsigned char>(name[0]);
  if (!((first >= 'a' && first <= 'z') || first >= 0x80)) {
    return Failed(16867, "'" + std::string(name) +
                             "' starts with an invalid character for a user variable name");
  }
  for (unsigned char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c >= 0x80)) {
      return Failed(16868, "'" + std::string(name) +
                               "' contains an invalid character for a variable name: '" +
                               std::string(1, static_cast<char>(c)) + "'");
    }
  }
  names_.emplace_back(std::string(name), next_id_);
  return next_id_++;
}

int VariableScope::Find(std::string_view name) const {
  for (auto it = names_.rbegin(); it != names_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return -1;
}

bool IsTruthy(const Element& e) {
  switch (e.type()) {
    case BsonType::kEod:
    case BsonType::kNull:
    case BsonType::kUndefined: return false;
    case BsonType::kBool: return e.Bool();
    case BsonType::kInt32: return e.Int32() != 0;
    case BsonType::kInt64: return e.Int64() != 0;
    case BsonType::kDouble: return e.Double() != 0;
    case BsonType::kDecimal128: return !e.Decimal().IsZero();
    default: return true;
  }
}

StatusOr<ExpressionPtr> ParseExpression(const Element& e, VariableScope* scope) {
  switch (e.type()) {
    case BsonType::kString: return ParseString(e.String(), scope);
    case BsonType::kArray: {
      std::vector<ExpressionPtr> items;
      for (const Element& item : e.Array()) {
        ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr x, ParseExpression(item, scope));
        items.push_back(std::move(x));
      }
      return ExpressionPtr(std::make_unique<ArrayExpression>(std::move(items)));
    }
    case BsonType::kDocument: {
      DocumentView doc = e.Document();
      if (!doc.empty() && (*doc.begin()).key().substr(0, 1) == "$") {
        size_t n = 0;
        for (const Element& f : doc) {
          (void)f;
          ++n;
        }
        if (n != 1) {
          return Failed(15983, "an expression specification must contain exactly one field, the "
                               "name of the expression. Found " +
                                   std::to_string(n) + " fields in " +
                                   ValueToJson(e, JsonFormat::kShell));
        }
        const Element op = *doc.begin();
        return ParseOperator(op.key(), op, scope);
      }
      std::vector<std::pair<std::string, ExpressionPtr>> fields;
      for (const Element& f : doc) {
        if (f.key().substr(0, 1) == "$") {
          return Failed(16410, "FieldPath field names may not start with '$'. Consider using "
                               "$getField or $setField.");
        }
        if (f.key().find('.') != std::string_view::npos) {
          return Failed(16412, "FieldPath field names may not contain '.'. Consider using "
                               "$getField or $setField.");
        }
        ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr x, ParseExpression(f, scope));
        fields.emplace_back(std::string(f.key()), std::move(x));
      }
      return ExpressionPtr(std::make_unique<ObjectExpression>(std::move(fields)));
    }
    default:
      return ExpressionPtr(std::make_unique<Constant>(Value::FromElement(e)));
  }
}

}  // namespace rockdoc::internal

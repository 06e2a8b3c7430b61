// query/expression/math_operators.cc: $pow $sqrt $exp $ln $log $log10
// $round $trunc and the trigonometric operators. Results are doubles except
// where MongoDB keeps integers ($pow of integers that fit; $round/$trunc of
// an integer) and where an operand is a decimal: then the answer is a decimal
// from Intel's library (bson/decimal_arithmetic.h), as MongoDB's, with the
// other operand converted as MongoDB's coerceToDecimal converts it.
#include <cmath>
#include <limits>
#include <random>

#include "bson/decimal_arithmetic.h"
#include "bson/numeric.h"
#include "query/expression/expression_internal.h"

namespace rockdoc::internal::expression_detail {

namespace {

// One numeric operand as a double (a decimal's nearest, for the tests that
// a double decides): *null for null/missing; `code` for a non-number.
StatusOr<double> NumberArg(std::string_view op, const Value& v, bool* null, int code = 28765) {
  *null = IsNullish(v);
  if (*null) return 0.0;
  if (!v.element().IsNumber()) {
    return Failed(code, std::string(op) + " only supports numeric types, not " + TypeName(v));
  }
  return v.element().NumberAsDouble();
}

bool IsDecimal(const Value& v) { return v.type() == BsonType::kDecimal128; }

// The sign of x - n for a decimal (NaN sorts below every number).
int CompareTo(const Decimal128& x, int64_t n) { return -CompareInt64Decimal(n, x); }

enum class Fn { kSqrt, kExp, kLn, kLog10 };

// A decimal argument's failure shows it as MongoDB does, through its double.
std::string ShownAsDouble(const Value& v) {
  return IsDecimal(v) ? Shown(DoubleValue(DecimalToDouble(v.element().Decimal()))) : Shown(v);
}

template <Fn kFn>
StatusOr<Value> UnaryMathOp(const Args& args, const ExpressionVariables& vars) {
  static constexpr const char* kNames[] = {"$sqrt", "$exp", "$ln", "$log10"};
  const char* op = kNames[static_cast<int>(kFn)];
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  bool null = false;
  ROCKDOC_ASSIGN_OR_RETURN(double x, NumberArg(op, v, &null));
  if (null) return NullValue();
  if (IsDecimal(v)) {
    // MongoDB's: $sqrt of a decimal NaN is a decimal NaN; $ln and $log10
    // take the decimal only when it is positive, so a decimal NaN falls to
    // the double's path and gives a double NaN.
    const Decimal128 d = v.element().Decimal();
    const bool positive = !d.IsNaN() && CompareTo(d, 0) > 0;
    switch (kFn) {
      case Fn::kSqrt:
        if (!d.IsNaN() && CompareTo(d, 0) < 0) {
          return Failed(28714, "$sqrt's argument must be greater than or equal to 0");
        }
        return DecimalValue(DecimalApply(DecimalFunction::kSqrt, d));
      case Fn::kExp: return DecimalValue(DecimalApply(DecimalFunction::kExp, d));
      case Fn::kLn:
        if (positive) return DecimalValue(DecimalApply(DecimalFunction::kLn, d));
        break;
      case Fn::kLog10:
        if (positive) return DecimalValue(DecimalApply(DecimalFunction::kLog10, d));
        break;
    }
  }
  switch (kFn) {
    case Fn::kSqrt:
      if (x < 0) return Failed(28714, "$sqrt's argument must be greater than or equal to 0");
      return DoubleValue(std::sqrt(x));
    case Fn::kExp: return DoubleValue(std::exp(x));
    case Fn::kLn:
      if (!(x > 0) && !std::isnan(x)) {
        return Failed(28766, "$ln's argument must be a positive number, but is " + ShownAsDouble(v));
      }
      return DoubleValue(std::log(x));
    case Fn::kLog10:
      if (!(x > 0) && !std::isnan(x)) {
        return Failed(28761, "$log10's argument must be a positive number, but is " + ShownAsDouble(v));
      }
      return DoubleValue(std::log10(x));
  }
  return NullValue();
}

StatusOr<Value> LogOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  bool null_x = false, null_base = false;
  ROCKDOC_ASSIGN_OR_RETURN(double x, NumberArg("$log", v[0], &null_x, 28756));
  ROCKDOC_ASSIGN_OR_RETURN(double base, NumberArg("$log", v[1], &null_base, 28757));
  if (null_x || null_base) return NullValue();
  if (IsDecimal(v[0]) || IsDecimal(v[1])) {
    // Decimals when both are in the domain; otherwise, as MongoDB's, the
    // doubles decide (the error, or a double NaN for a NaN).
    const Decimal128 dx = NumberToDecimal(v[0].element()), dbase = NumberToDecimal(v[1].element());
    if (!dx.IsNaN() && !dbase.IsNaN() && CompareTo(dx, 0) > 0 && CompareTo(dbase, 0) > 0 &&
        CompareTo(dbase, 1) != 0) {
      return DecimalValue(DecimalLog(dx, dbase));
    }
  }
  if (!(x > 0) && !std::isnan(x)) {
    return Failed(28758, "$log's argument must be a positive number, but is " + ShownAsDouble(v[0]));
  }
  if (!(base > 0 && base != 1) && !std::isnan(base)) {
    return Failed(28759, "$log's base must be a positive number not equal to 1, but is " +
                             ShownAsDouble(v[1]));
  }
  return DoubleValue(std::log(x) / std::log(base));
}

StatusOr<Value> PowOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  bool null_b = false, null_e = false;
  ROCKDOC_ASSIGN_OR_RETURN(double base, NumberArg("$pow", v[0], &null_b, 28762));
  ROCKDOC_ASSIGN_OR_RETURN(double exponent, NumberArg("$pow", v[1], &null_e, 28763));
  if (null_b || null_e) return NullValue();
  if (IsDecimal(v[0]) || IsDecimal(v[1])) {
    // Tested on the decimals: one too small for a double is not zero.
    const Decimal128 b = NumberToDecimal(v[0].element()), e = NumberToDecimal(v[1].element());
    if (b.IsZero() && e.IsNegative()) {  // the sign bit: -0 too, as MongoDB's
      return Failed(28764, "$pow cannot take a base of 0 and a negative exponent");
    }
    return DecimalValue(DecimalPow(b, e));
  }
  if (base == 0 && exponent < 0) return Failed(28764, "$pow cannot take a base of 0 and a negative exponent");
  const bool integers = v[0].type() != BsonType::kDouble && v[1].type() != BsonType::kDouble;
  if (integers) {
    const bool is_long = v[0].type() == BsonType::kInt64 || v[1].type() == BsonType::kInt64;
    const int64_t b = static_cast<int64_t>(base), e = static_cast<int64_t>(exponent);
    if (e < 0) {
      if (b == 1) return is_long ? Int64Value(1) : IntegerValue(1);
      if (b == -1) return is_long ? Int64Value(e % 2 == 0 ? 1 : -1) : IntegerValue(e % 2 == 0 ? 1 : -1);
      return DoubleValue(std::pow(base, exponent));
    }
    int64_t result = 1;
    bool overflow = false;
    for (int64_t i = 0; i < e && !overflow; ++i) {
      overflow = __builtin_mul_overflow(result, b, &result);
      if (result == 0 || result == 1) break;
      if (b == -1) {
        result = (e % 2 == 0) ? 1 : -1;
        break;
      }
    }
    if (!overflow) {
      if (is_long) return Int64Value(result);
      return IntegerValue(result);  // int32 widens to long when it must
    }
    return DoubleValue(std::pow(base, exponent));
  }
  return DoubleValue(std::pow(base, exponent));
}

// $round / $trunc [number, place]: place in [-20, 100); halves round to even.
template <bool kRound>
StatusOr<Value> RoundOp(const Args& args, const ExpressionVariables& vars) {
  const char* op = kRound ? "$round" : "$trunc";
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  int64_t place = 0;
  if (v.size() == 2) {
    if (IsNullish(v[1])) return NullValue();
    if (!v[1].element().IsNumber() || !v[1].element().ExactInt64(&place)) {
      return Failed(51081, std::string(op) + " requires \"place\" to be an integral value, but got " + Shown(v[1]));
    }
    if (place < -20 || place >= 100) {
      return Failed(51083, std::string(op) + " requires \"place\" to be in [-20, 100), but got " + std::to_string(place));
    }
  }
  if (IsNullish(v[0])) return NullValue();
  if (!v[0].element().IsNumber()) {
    return Failed(51081, std::string(op) + " only supports numeric types, not " + TypeName(v[0]));
  }
  const Element e = v[0].element();
  auto apply = [](double x) { return kRound ? std::nearbyint(x) : std::trunc(x); };
  if (e.type() == BsonType::kDouble) {
    const double x = e.Double();
    if (std::isnan(x) || std::isinf(x)) return v[0];
    const double scale = std::pow(10.0, static_cast<double>(place));
    return DoubleValue(apply(x * scale) / scale);
  }
  if (e.type() == BsonType::kDecimal128) {
    return DecimalValue(DecimalRoundToPlace(e.Decimal(), static_cast<int>(place),
                                            kRound ? DecimalRounding::kHalfEven : DecimalRounding::kTowardZero));
  }
  if (place >= 0) return v[0];
  const int64_t n = e.type() == BsonType::kInt32 ? e.Int32() : e.Int64();
  int64_t scale = 1;
  for (int64_t i = 0; i < -place; ++i) {
    if (__builtin_mul_overflow(scale, 10, &scale)) return e.type() == BsonType::kInt32 ? IntegerValue(0) : Int64Value(0);
  }
  int64_t q = n / scale, r = n % scale;
  if (kRound) {
    const int64_t twice = std::abs(r) * 2;
    if (twice > scale || (twice == scale && q % 2 != 0)) q += n < 0 ? -1 : 1;
  }
  (void)r;
  int64_t out = 0;
  if (__builtin_mul_overflow(q, scale, &out)) return DoubleValue(static_cast<double>(q) * static_cast<double>(scale));
  return e.type() == BsonType::kInt32 ? IntegerValue(out) : Int64Value(out);
}

enum class Trig {
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kTanh, kAsinh, kAcosh, kAtanh,
  kDegreesToRadians, kRadiansToDegrees
};

template <Trig kFn>
StatusOr<Value> TrigOp(const Args& args, const ExpressionVariables& vars) {
  static constexpr const char* kNames[] = {"$sin", "$cos", "$tan", "$asin", "$acos", "$atan",
                                           "$sinh", "$cosh", "$tanh", "$asinh", "$acosh",
                                           "$atanh", "$degreesToRadians", "$radiansToDegrees"};
  const char* op = kNames[static_cast<int>(kFn)];
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  bool null = false;
  ROCKDOC_ASSIGN_OR_RETURN(double x, NumberArg(op, v, &null, 28765));
  if (null) return NullValue();
  auto domain = [&](const char* range) {
    return Failed(50989, std::string("cannot apply ") + op + " to " + Shown(v) + ", value must be in " + range);
  };
  // x's order against a small integer, exactly for a decimal.
  const bool decimal = IsDecimal(v);
  auto below = [&](int64_t n) { return decimal ? CompareTo(v.element().Decimal(), n) < 0 : x < n; };
  auto above = [&](int64_t n) { return decimal ? CompareTo(v.element().Decimal(), n) > 0 : x > n; };
  if (!std::isnan(x)) {
    switch (kFn) {
      case Trig::kSin:
      case Trig::kCos:
      case Trig::kTan:
        if (std::isinf(x) && (!decimal || v.element().Decimal().IsInfinite())) return domain("(-inf,inf)");
        break;
      case Trig::kAsin:
      case Trig::kAcos:
      case Trig::kAtanh:
        if (below(-1) || above(1)) return domain("[-1,1]");
        break;
      case Trig::kAcosh:
        if (below(1)) return domain("[1,inf]");
        break;
      default: break;
    }
  }
  if (decimal) {
    const Decimal128 d = v.element().Decimal();
    switch (kFn) {
      // pi / 180 and 180 / pi to 34 digits.
      case Trig::kDegreesToRadians:
        return DecimalValue(DecimalMultiply(d, *Decimal128::FromString("0.01745329251994329576923690768488613")));
      case Trig::kRadiansToDegrees:
        return DecimalValue(DecimalMultiply(d, *Decimal128::FromString("57.29577951308232087679815481410517")));
      default:
        // Trig's first twelve are DecimalFunction's, from kSin on.
        static_assert(static_cast<int>(DecimalFunction::kAtanh) - static_cast<int>(DecimalFunction::kSin) ==
                      static_cast<int>(Trig::kAtanh));
        return DecimalValue(DecimalApply(
            static_cast<DecimalFunction>(static_cast<int>(DecimalFunction::kSin) + static_cast<int>(kFn)), d));
    }
  }
  switch (kFn) {
    case Trig::kSin: return DoubleValue(std::sin(x));
    case Trig::kCos: return DoubleValue(std::cos(x));
    case Trig::kTan: return DoubleValue(std::tan(x));
    case Trig::kAsin: return DoubleValue(std::asin(x));
    case Trig::kAcos: return DoubleValue(std::acos(x));
    case Trig::kAtan: return DoubleValue(std::atan(x));
    case Trig::kSinh: return DoubleValue(std::sinh(x));
    case Trig::kCosh: return DoubleValue(std::cosh(x));
    case Trig::kTanh: return DoubleValue(std::tanh(x));
    case Trig::kAsinh: return DoubleValue(std::asinh(x));
    case Trig::kAcosh: return DoubleValue(std::acosh(x));
    case Trig::kAtanh: return DoubleValue(std::atanh(x));
    case Trig::kDegreesToRadians: return DoubleValue(x * M_PI / 180.0);
    case Trig::kRadiansToDegrees: return DoubleValue(x * 180.0 / M_PI);
  }
  return NullValue();
}

StatusOr<Value> Atan2Op(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  bool null_y = false, null_x = false;
  ROCKDOC_ASSIGN_OR_RETURN(double y, NumberArg("$atan2", v[0], &null_y, 51044));
  ROCKDOC_ASSIGN_OR_RETURN(double x, NumberArg("$atan2", v[1], &null_x, 51045));
  if (null_y || null_x) return NullValue();
  if (IsDecimal(v[0]) || IsDecimal(v[1])) {
    return DecimalValue(DecimalAtan2(NumberToDecimal(v[0].element()), NumberToDecimal(v[1].element())));
  }
  return DoubleValue(std::atan2(y, x));
}

}  // namespace

// {$rand: {}}: a double drawn uniformly from [0, 1), anew at each
// evaluation (each document), as MongoDB's.
StatusOr<Value> RandOp(const Args&, const ExpressionVariables&) {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return DoubleValue(std::uniform_real_distribution<double>(0.0, 1.0)(engine));
}

void AddMathOperators(OperatorTable* positional, NamedOperatorTable* named) {
  // MongoDB's codes: 10065 for an operand that is not an object, 3040501
  // for an argument ("$rand does not currently accept arguments").
  named->insert({{"$rand", {&RandOp, {}, 0, 10065, 3040501, 0}}});
  positional->insert({
      {"$sqrt", {&UnaryMathOp<Fn::kSqrt>, 1, 1}},
      {"$exp", {&UnaryMathOp<Fn::kExp>, 1, 1}},
      {"$ln", {&UnaryMathOp<Fn::kLn>, 1, 1}},
      {"$log10", {&UnaryMathOp<Fn::kLog10>, 1, 1}},
      {"$log", {&LogOp, 2, 2}},
      {"$pow", {&PowOp, 2, 2}},
      {"$round", {&RoundOp<true>, 1, 2}},
      {"$trunc", {&RoundOp<false>, 1, 2}},
      {"$sin", {&TrigOp<Trig::kSin>, 1, 1}},
      {"$cos", {&TrigOp<Trig::kCos>, 1, 1}},
      {"$tan", {&TrigOp<Trig::kTan>, 1, 1}},
      {"$asin", {&TrigOp<Trig::kAsin>, 1, 1}},
      {"$acos", {&TrigOp<Trig::kAcos>, 1, 1}},
      {"$atan", {&TrigOp<Trig::kAtan>, 1, 1}},
      {"$sinh", {&TrigOp<Trig::kSinh>, 1, 1}},
      {"$cosh", {&TrigOp<Trig::kCosh>, 1, 1}},
      {"$tanh", {&TrigOp<Trig::kTanh>, 1, 1}},
      {"$asinh", {&TrigOp<Trig::kAsinh>, 1, 1}},
      {"$acosh", {&TrigOp<Trig::kAcosh>, 1, 1}},
      {"$atanh", {&TrigOp<Trig::kAtanh>, 1, 1}},
      {"$degreesToRadians", {&TrigOp<Trig::kDegreesToRadians>, 1, 1}},
      {"$radiansToDegrees", {&TrigOp<Trig::kRadiansToDegrees>, 1, 1}},
      {"$atan2", {&Atan2Op, 2, 2}},
  });
}

}  // namespace rockdoc::internal::expression_detail

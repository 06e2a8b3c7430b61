// query/expression/convert_operators.cc: $type, $isNumber, $convert and its
// shorthands ($toBool $toInt $toLong $toDouble $toDecimal $toString
// $toDate $toObjectId). A conversion MongoDB does not define fails with
// ConversionFailure (241), which $convert's onError catches; null or
// missing input gives onNull (or null).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "bson/decimal_arithmetic.h"
#include "query/expression/expression_internal.h"

namespace rockdoc::internal::expression_detail {

namespace {

StatusOr<Value> TypeOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  return StringValue(v.ok() ? BsonTypeAlias(v.type()) : "missing");
}

StatusOr<Value> IsNumberOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  return BoolValue(v.ok() && v.element().IsNumber());
}

enum class Target { kDouble, kString, kObjectId, kBool, kDate, kInt, kLong, kDecimal };

struct TargetName {
  std::string_view name;
  int code;
  Target target;
};
constexpr TargetName kTargets[] = {
    {"double", 1, Target::kDouble}, {"string", 2, Target::kString},
    {"objectId", 7, Target::kObjectId}, {"bool", 8, Target::kBool}, {"date", 9, Target::kDate},
    {"int", 16, Target::kInt}, {"long", 18, Target::kLong}, {"decimal", 19, Target::kDecimal}};

std::string_view NameOf(Target t) {
  for (const TargetName& n : kTargets) {
    if (n.target == t) return n.name;
  }
  return "";
}

StatusOr<Target> TargetOf(const Value& to) {
  if (to.type() == BsonType::kString) {
    for (const TargetName& n : kTargets) {
      if (to.element().String() == n.name) return n.target;
    }
    static const char* const kOthers[] = {"object", "array", "binData", "undefined", "null",
                                          "regex", "dbPointer", "javascript", "symbol",
                                          "javascriptWithScope", "timestamp", "minKey", "maxKey"};
    for (const char* other : kOthers) {
      if (to.element().String() == other) {
        return NotSupported("$convert to " + std::string(other));
      }
    }
    return Failed(2, "Unknown type name: " + std::string(to.element().String()));
  }
  int64_t code = 0;
  if (to.ok() && to.element().IsNumber() && to.element().ExactInt64(&code)) {
    for (const TargetName& n : kTargets) {
      if (code == n.code) return n.target;
    }
    return Failed(2, "Invalid 'to' argument to $convert: " + Shown(to));
  }
  return Failed(9, "$convert's 'to' argument must be a string or number, but is " + TypeName(to));
}

Status Unsupported(const Value& v, Target t) {
  return Failed(241, "Unsupported conversion from " + TypeName(v) + " to " + std::string(NameOf(t)) +
                         " in $convert with no onError value");
}
Status Overflow() {
  return Failed(241, "Conversion would overflow target type in $convert with no onError value");
}

// A whole base-10 integer in a string (optional sign).
StatusOr<int64_t> ParseInteger(std::string_view s) {
  if (s.empty()) return Failed(241, "Failed to parse number '' in $convert with no onError value: No digits");
  std::string text(s);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || std::isspace(static_cast<unsigned char>(text[0]))) {
    return Failed(241, "Failed to parse number '" + text + "' in $convert with no onError value: "
                       "Did not consume whole string.");
  }
  if (errno == ERANGE) {
    return Failed(241, "Failed to parse number '" + text + "' in $convert with no onError value: "
                       "Overflow");
  }
  return static_cast<int64_t>(v);
}

StatusOr<double> ParseDouble(std::string_view s) {
  std::string text(s);
  if (text == "Infinity" || text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-Infinity" || text == "-inf") return -std::numeric_limits<double>::infinity();
  if (text == "NaN" || text == "nan") return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0' ||
      std::isspace(static_cast<unsigned char>(text[0]))) {
    return Failed(241, "Failed to parse number '" + text + "' in $convert with no onError value: "
                       "Did not consume whole string.");
  }
  return d;
}

// An integer in [lo, hi] from a number (doubles and decimals truncated, the
// decimals by Intel's library as MongoDB's Decimal128::toLong). MongoDB's
// messages name NaN and infinity apart.
StatusOr<int64_t> ToInteger(const Value& v, int64_t lo, int64_t hi) {
  const Element e = v.element();
  double d = 0;
  switch (e.type()) {
    case BsonType::kInt32: return e.Int32();
    case BsonType::kInt64:
      if (e.Int64() < lo || e.Int64() > hi) return Overflow();
      return e.Int64();
    case BsonType::kBool: return e.Bool() ? 1 : 0;
    case BsonType::kDouble: d = e.Double(); break;
    case BsonType::kDecimal128: {
      const Decimal128 x = e.Decimal();
      if (x.IsNaN()) d = std::numeric_limits<double>::quiet_NaN();
      if (x.IsInfinite()) d = std::numeric_limits<double>::infinity();
      if (!x.IsFinite()) break;
      const std::optional<int64_t> n = DecimalToInt64(x, DecimalRounding::kTowardZero);
      if (!n || *n < lo || *n > hi) return Overflow();
      return *n;
    }
    default: return Failed(241, "");
  }
  if (std::isnan(d)) {
    return Failed(241, "Attempt to convert NaN value to integer type in $convert with no onError value");
  }
  if (std::isinf(d)) {
    return Failed(241, "Attempt to convert infinity value to integer type in $convert with no "
                       "onError value");
  }
  d = std::trunc(d);
  // hi + 1 is exact as a double for both int32 and int64 (2^63).
  if (d < static_cast<double>(lo) || d >= static_cast<double>(hi) + 1.0) return Overflow();
  return static_cast<int64_t>(d);
}

StatusOr<Value> Convert(const Value& v, Target t) {
  const Element e = v.element();
  const BsonType type = e.type();
  switch (t) {
    case Target::kBool:
      if (type == BsonType::kBool) return v;
      if (e.IsNumber()) return BoolValue(IsTruthy(e));
      return BoolValue(true);  // every other type is true
    case Target::kInt:
    case Target::kLong: {
      const bool is_int = t == Target::kInt;
      const int64_t lo = is_int ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
      const int64_t hi = is_int ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
      if (type == BsonType::kString) {
        ROCKDOC_ASSIGN_OR_RETURN(int64_t n, ParseInteger(e.String()));
        if (n < lo || n > hi) return Overflow();
        return is_int ? Int32Value(static_cast<int32_t>(n)) : Int64Value(n);
      }
      if (type == BsonType::kDateTime && !is_int) return Int64Value(e.DateTime());
      if (!e.IsNumber() && type != BsonType::kBool) return Unsupported(v, t);
      ROCKDOC_ASSIGN_OR_RETURN(int64_t n, ToInteger(v, lo, hi));
      return is_int ? Int32Value(static_cast<int32_t>(n)) : Int64Value(n);
    }
    case Target::kDouble:
      if (type == BsonType::kString) {
        ROCKDOC_ASSIGN_OR_RETURN(double d, ParseDouble(e.String()));
        return DoubleValue(d);
      }
      if (type == BsonType::kBool) return DoubleValue(e.Bool() ? 1 : 0);
      if (type == BsonType::kDateTime) return DoubleValue(static_cast<double>(e.DateTime()));
      if (type == BsonType::kDecimal128) {
        // MongoDB's: a decimal beyond double's range either way is refused,
        // naming the value; one merely rounded is not.
        bool out_of_range = false;
        const double d = DecimalToDouble(e.Decimal(), &out_of_range);
        if (out_of_range) {
          return Failed(241, "Conversion would overflow target type in $convert with no onError value: " +
                                 e.Decimal().ToString());
        }
        return DoubleValue(d);
      }
      if (e.IsNumber()) return DoubleValue(e.NumberAsDouble());
      return Unsupported(v, t);
    case Target::kDecimal:
      if (type == BsonType::kString) {
        // Rounded to 34 digits when it must be, as MongoDB's Decimal128(string).
        std::optional<Decimal128> d = DecimalFromStringRounded(e.String());
        if (!d) {
          return Failed(241, "Failed to parse number '" + std::string(e.String()) +
                                 "' in $convert with no onError value: Failed to parse string to decimal");
        }
        return DecimalValue(*d);
      }
      if (type == BsonType::kBool) return DecimalValue(Decimal128::FromInt64(e.Bool() ? 1 : 0));
      if (type == BsonType::kDateTime) return DecimalValue(Decimal128::FromInt64(e.DateTime()));
      if (e.IsNumber()) return DecimalValue(NumberToDecimal(e));
      return Unsupported(v, t);
    case Target::kString:
      switch (type) {
        case BsonType::kBool: return StringValue(e.Bool() ? "true" : "false");
        case BsonType::kObjectId: return StringValue(e.Oid().ToHex());
        case BsonType::kString:
        case BsonType::kInt32:
        case BsonType::kInt64:
        case BsonType::kDouble:
        case BsonType::kDecimal128:
        case BsonType::kDateTime: {
          ROCKDOC_ASSIGN_OR_RETURN(std::string s, CoerceToString("$convert", v));
          return StringValue(s);
        }
        default: return Unsupported(v, t);
      }
    case Target::kDate:
      switch (type) {
        case BsonType::kDateTime: return v;
        case BsonType::kInt64: return DateValue(e.Int64());
        case BsonType::kDouble:
        case BsonType::kDecimal128: {
          if (type == BsonType::kDecimal128) {
            const std::optional<int64_t> ms = DecimalToInt64(e.Decimal(), DecimalRounding::kTowardZero);
            if (!ms) return Overflow();
            return DateValue(*ms);
          }
          const double d = e.Double();
          if (std::isnan(d) || std::isinf(d) || std::fabs(d) >= 9.2e18) return Overflow();
          return DateValue(static_cast<int64_t>(std::trunc(d)));
        }
        case BsonType::kString: {
          StatusOr<int64_t> ms = ParseDateString(e.String());
          if (!ms.ok()) return Failed(241, std::string(ms.status().message()));
          return DateValue(*ms);
        }
        case BsonType::kObjectId: return DateValue(int64_t{e.Oid().timestamp()} * 1000);
        case BsonType::kTimestamp: return DateValue(int64_t{e.Timestamp().t} * 1000);
        default: return Unsupported(v, t);
      }
    case Target::kObjectId:
      if (type == BsonType::kObjectId) return v;
      if (type == BsonType::kString) {
        StatusOr<ObjectId> oid = ObjectId::FromHex(e.String());
        if (!oid.ok()) {
          return Failed(241, "Failed to parse objectId '" + std::string(e.String()) +
                                 "' in $convert with no onError value: Invalid string length for "
                                 "parsing to OID, expected 24 but found " +
                                 std::to_string(e.String().size()));
        }
        return Make([&](BsonBuilder& b) { b.AppendObjectId("v", *oid); });
      }
      return Unsupported(v, t);
  }
  return Unsupported(v, t);
}

// {input, to, onError, onNull}
StatusOr<Value> ConvertOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value input, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value to, args[1]->Evaluate(vars));
  if (IsNullish(to)) return NullValue();
  ROCKDOC_ASSIGN_OR_RETURN(Target target, TargetOf(to));
  if (IsNullish(input)) {
    if (args[3] != nullptr) return args[3]->Evaluate(vars);
    return NullValue();
  }
  StatusOr<Value> out = Convert(input, target);
  if (!out.ok() && static_cast<int>(out.status().code()) == 241 && args[2] != nullptr) {
    return args[2]->Evaluate(vars);
  }
  return out;
}

template <Target kTarget>
StatusOr<Value> ToOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value input, args[0]->Evaluate(vars));
  if (IsNullish(input)) return NullValue();
  return Convert(input, kTarget);
}

}  // namespace

void AddConvertOperators(OperatorTable* positional, NamedOperatorTable* named) {
  positional->insert({
      {"$type", {&TypeOp, 1, 1}},
      {"$isNumber", {&IsNumberOp, 1, 1}},
      {"$toBool", {&ToOp<Target::kBool>, 1, 1}},
      {"$toInt", {&ToOp<Target::kInt>, 1, 1}},
      {"$toLong", {&ToOp<Target::kLong>, 1, 1}},
      {"$toDouble", {&ToOp<Target::kDouble>, 1, 1}},
      {"$toDecimal", {&ToOp<Target::kDecimal>, 1, 1}},
      {"$toString", {&ToOp<Target::kString>, 1, 1}},
      {"$toDate", {&ToOp<Target::kDate>, 1, 1}},
      {"$toObjectId", {&ToOp<Target::kObjectId>, 1, 1}},
  });
  named->insert({
      {"$convert", {&ConvertOp, {"input", "to", "onError", "onNull"}, 2, 40182, 40181, 40414}},
  });
}

}  // namespace rockdoc::internal::expression_detail

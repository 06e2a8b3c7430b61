// query/expression/expression_internal.h: what the operator families share
// (expression.cc holds the tree, parsing and the arithmetic, comparison,
// logic and array operators; string_operators.cc, set_operators.cc,
// convert_operators.cc, object_operators.cc, math_operators.cc and
// date_operators.cc one family each). Not part of the layer's interface:
// included only by this folder's .cc files.
#ifndef ROCKDOC_QUERY_EXPRESSION_EXPRESSION_INTERNAL_H_
#define ROCKDOC_QUERY_EXPRESSION_EXPRESSION_INTERNAL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "query/expression/expression.h"

namespace rockdoc::internal::expression_detail {

// ---- values ----
// One value, built through a one-field document (Value owns its bytes).
template <typename Fn>
Value Make(Fn&& append) {
  BsonBuilder b;
  append(b);
  Document d = std::move(b).Build();
  return Value::FromElement(d.Get("v"));
}
Value Int32Value(int32_t v);
Value DecimalValue(const Decimal128& v);
Value BoolValue(bool v);
Value StringValue(std::string_view v);
Value DateValue(int64_t ms);
// An array of these elements (or values; a missing value becomes null).
Value ArrayOf(const std::vector<Element>& items);

// A document of these fields, in this order.
Value ObjectOf(const std::vector<std::pair<std::string, Element>>& fields);

// Null, undefined or missing: what most operators answer null for.
bool IsNullish(const Value& v);
// The type's alias, or "missing".
std::string TypeName(const Value& v);
// The value as the shell prints it (error messages), or "missing".
std::string Shown(const Value& v);
Status Failed(int code, std::string message);
// A value an expression builds is at most 64 MiB, MongoDB's BufBuilder
// bound (an intermediate may exceed the 16 MiB of a stored document; the
// result document may not): past it, 13548 with MongoDB's message, so a
// $reduce that doubles a string or an array fails instead of exhausting
// memory.
inline constexpr size_t kMaxExpressionValueBytes = size_t{64} << 20;
Status CheckValueBytes(size_t bytes);
Status NotSupported(std::string what);
// Missing sorts below every value (MongoDB's Value order: EOO first).
int Compare(const Value& a, const Value& b);

// Strings as $toString, $concat's coercion and $dateToString make them.
std::string FormatDouble(double d);  // shortest round-trip ("2.5", "1e+20")
std::string FormatIsoDate(int64_t ms);  // 2024-01-31T12:00:00.000Z
// A value as a string ($toUpper, $substr, $strcasecmp): null/missing "",
// numbers, dates and timestamps in their text; 16007 otherwise.
StatusOr<std::string> CoerceToString(std::string_view op, const Value& v);

// An ISO 8601 date string ("2024-01-31", "2024-01-31T12:00:00.5+01:00") as
// milliseconds since the epoch (UTC when it names no offset); 241 otherwise.
StatusOr<int64_t> ParseDateString(std::string_view s);

// ---- operators ----
using Args = std::vector<ExpressionPtr>;
using OperatorFn = StatusOr<Value> (*)(const Args& args, const ExpressionVariables& vars);

StatusOr<std::vector<Value>> EvaluateAll(const Args& args, const ExpressionVariables& vars);
// Evaluates an optional argument (a named argument not given is missing).
StatusOr<Value> EvaluateOptional(const ExpressionPtr& arg, const ExpressionVariables& vars);

// The array argument of an array operator: nullopt for null/missing (the
// operator then answers null), error `code` naming the operator otherwise.
StatusOr<std::optional<DocumentView>> ArrayArg(std::string_view op, const Value& v, int code);
// An int32-representable integer argument.
StatusOr<int64_t> IntArg(std::string_view op, std::string_view what, const Value& v, int code);

// An operator whose arguments are positional ({$op: [a, b]} or {$op: a}).
struct OperatorDef {
  OperatorFn fn;
  size_t min_args;
  size_t max_args;
};

// An operator whose argument is an object of named arguments ({$op: {input,
// find, ...}}): its Args hold them in `names` order, nullptr for one not
// given. MongoDB's codes for an argument that is not an object, an unknown
// name, and a required name missing (the first `required` names are).
struct NamedOperatorDef {
  OperatorFn fn;
  std::vector<std::string_view> names;
  size_t required;
  int not_object_code;
  int unknown_code;
  int missing_code;
  // When set: an operand that is not an object of these names (a string,
  // or {$expr...}) is this one argument ({$getField: "a"}).
  std::string_view shorthand = {};
};

using OperatorTable = std::map<std::string_view, OperatorDef>;
using NamedOperatorTable = std::map<std::string_view, NamedOperatorDef>;

// Each family adds its operators.
void AddStringOperators(OperatorTable* positional, NamedOperatorTable* named);
void AddSetOperators(OperatorTable* positional, NamedOperatorTable* named);
void AddConvertOperators(OperatorTable* positional, NamedOperatorTable* named);
void AddObjectOperators(OperatorTable* positional, NamedOperatorTable* named);
void AddMathOperators(OperatorTable* positional, NamedOperatorTable* named);
void AddDateOperators(OperatorTable* positional, NamedOperatorTable* named);
void AddArrayOperators(OperatorTable* positional, NamedOperatorTable* named);

// The date operators whose argument may be a date or {date, timezone}.
bool IsDatePartOperator(std::string_view name);

}  // namespace rockdoc::internal::expression_detail

#endif  // ROCKDOC_QUERY_EXPRESSION_EXPRESSION_INTERNAL_H_

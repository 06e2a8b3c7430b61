// Aggregation expressions (query/expression/): the MongoDB manual's examples
// for each operator (the documents, the expression, the value the manual
// shows), MongoDB's numeric type rules, missing versus null, and MongoDB's
// error codes for malformed expressions.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "query/expression/expression.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc::internal {
namespace {

using test::Json;

// The value of `expr` on `doc` as JSON ({"v": ...} unwrapped), "missing",
// or "<code>: <message>" when parsing or evaluating fails.
std::string Eval(std::string_view expr, std::string_view doc = "{}", int64_t now_ms = 0) {
  Document wrapped = Json(std::string("{\"e\": ") + std::string(expr) + "}");
  VariableScope scope;
  StatusOr<ExpressionPtr> parsed = ParseExpression(wrapped.Get("e"), &scope);
  if (!parsed.ok()) {
    return std::to_string(parsed.status().code_number()) + ": " +
           std::string(parsed.status().message());
  }
  Document d = Json(doc);
  ExpressionVariables vars;
  vars.root = d.view();
  vars.now_ms = now_ms;
  vars.user.resize(scope.id_count());
  StatusOr<Value> v = (*parsed)->Evaluate(vars);
  if (!v.ok()) {
    return std::to_string(v.status().code_number()) + ": " + std::string(v.status().message());
  }
  if (!v->ok()) return "missing";
  BsonBuilder b;
  b.AppendElementAs("v", v->element());
  std::string json = ToJson(std::move(b).Build(), JsonFormat::kCanonical);
  // {"v": X} -> X
  return json.substr(6, json.size() - 7);
}

int cases = 0;
#define EXPECT_EVAL(expr, doc, expected) \
  do {                                   \
    ++cases;                             \
    EXPECT_EQ(Eval(expr, doc), expected) << expr << " on " << doc; \
  } while (0)

TEST(ExpressionTest, FieldPathsVariablesAndLiterals) {
  EXPECT_EVAL(R"("$a")", R"({"a": 1})", R"({"$numberInt": "1"})");
  EXPECT_EVAL(R"("$a.b")", R"({"a": {"b": "x"}})", R"("x")");
  EXPECT_EVAL(R"("$nope")", R"({"a": 1})", "missing");
  // A path through an array maps over it; elements without the field are left out.
  EXPECT_EVAL(R"("$a.b")", R"({"a": [{"b": 1}, {"c": 2}, {"b": 3}, 4]})",
              R"([{"$numberInt": "1"}, {"$numberInt": "3"}])");
  EXPECT_EVAL(R"("$a.b")", R"({"a": [[{"b": 1}], {"b": 2}]})",
              R"([[{"$numberInt": "1"}], {"$numberInt": "2"}])");
  EXPECT_EVAL(R"("$$ROOT")", R"({"a": 1})", R"({"a": {"$numberInt": "1"}})");
  EXPECT_EVAL(R"("$$CURRENT.a")", R"({"a": 1})", R"({"$numberInt": "1"})");
  EXPECT_EVAL(R"("$$REMOVE")", "{}", "missing");
  EXPECT_EQ(Eval(R"("$$NOW")", "{}", 86400000), R"({"$date": {"$numberLong": "86400000"}})");
  EXPECT_EVAL(R"({"$literal": "$a"})", R"({"a": 1})", R"("$a")");
  EXPECT_EVAL(R"({"$literal": {"$add": [1, 2]}})", "{}",
              R"({"$add": [{"$numberInt": "1"}, {"$numberInt": "2"}]})");
  // Objects and arrays of expressions; a missing field is left out of an
  // object and is null in an array.
  EXPECT_EVAL(R"({"x": "$a", "y": "$nope", "z": ["$a", "$nope"]})", R"({"a": "s"})",
              R"({"x": "s", "z": ["s", null]})");
  EXPECT_EVAL(R"("plain")", "{}", R"("plain")");
}

// $rand (issue 33 #9): a double in [0, 1), drawn anew at each evaluation.
TEST(ExpressionTest, RandIsAFreshDoubleInTheUnitInterval) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    const std::string v = Eval(R"({"$rand": {}})");
    ASSERT_EQ(v.rfind(R"({"$numberDouble": ")", 0), 0u) << v;
    const double d = std::stod(v.substr(19));
    EXPECT_GE(d, 0.0);
    EXPECT_LT(d, 1.0);
    seen.insert(v);
  }
  EXPECT_GT(seen.size(), 40u);
  EXPECT_EQ(Eval(R"({"$rand": 1})").substr(0, 7), "10065: ");
  EXPECT_EQ(Eval(R"({"$rand": {"a": 1}})").substr(0, 9), "3040501: ");
}

TEST(ExpressionTest, LetScopesItsVariables) {
  // The manual's $let example: total * (1 + tax) with a discount.
  EXPECT_EVAL(R"({"$let": {"vars": {"total": {"$add": ["$price", "$tax"]},
                                    "discounted": {"$cond": {"if": "$applyDiscount", "then": 0.9, "else": 1}}},
                           "in": {"$multiply": ["$$total", "$$discounted"]}}})",
              R"({"price": 10, "tax": 0.5, "applyDiscount": true})", R"({"$numberDouble": "9.450000000000001"})");
  // Nested $let shadows; the outer name comes back after it.
  EXPECT_EVAL(R"({"$let": {"vars": {"x": 1}, "in": [{"$let": {"vars": {"x": 2}, "in": "$$x"}}, "$$x"]}})",
              "{}", R"([{"$numberInt": "2"}, {"$numberInt": "1"}])");
  EXPECT_EVAL(R"({"$let": {"vars": {"d": {"a": 5}}, "in": "$$d.a"}})", "{}", R"({"$numberInt": "5"})");
  EXPECT_EVAL(R"("$$x")", "{}", "17276: Use of undefined variable: x");
  EXPECT_EVAL(R"({"$let": {"vars": {"X": 1}, "in": 1}})", "{}",
              "16867: 'X' starts with an invalid character for a user variable name");
  EXPECT_EVAL(R"({"$let": {"vars": {}}})", "{}", "16877: Missing 'in' parameter to $let");
  EXPECT_EVAL(R"({"$let": {"in": 1}})", "{}", "16876: Missing 'vars' parameter to $let");
  EXPECT_EVAL(R"({"$let": {"vars": {}, "in": 1, "x": 2}})", "{}",
              "16875: Unrecognized parameter to $let: x");
}

TEST(ExpressionTest, ArithmeticKeepsMongoDBsTypes) {
  // The manual's $add: price + fee; a date plus milliseconds.
  EXPECT_EVAL(R"({"$add": ["$price", "$fee"]})", R"({"price": 10, "fee": 2})", R"({"$numberInt": "12"})");
  EXPECT_EVAL(R"({"$add": ["$date", 259200000]})", R"({"date": {"$date": "2014-03-01T08:00:00Z"}})",
              R"({"$date": {"$numberLong": "1393920000000"}})");
  EXPECT_EVAL(R"({"$add": [2147483647, 1]})", "{}", R"({"$numberLong": "2147483648"})");
  EXPECT_EVAL(R"({"$add": [{"$numberLong": "9223372036854775807"}, 1]})", "{}",
              R"({"$numberDouble": "9.223372036854776e+18"})");
  EXPECT_EVAL(R"({"$add": [{"$numberLong": "1"}, 1]})", "{}", R"({"$numberLong": "2"})");
  EXPECT_EVAL(R"({"$add": [1, 0.5]})", "{}", R"({"$numberDouble": "1.5"})");
  EXPECT_EVAL(R"({"$add": [1, {"$numberDecimal": "0.1"}]})", "{}", R"({"$numberDecimal": "1.1"})");
  EXPECT_EVAL(R"({"$add": [1, null]})", "{}", "null");
  EXPECT_EVAL(R"({"$add": [1, "$nope"]})", "{}", "null");
  EXPECT_EVAL(R"({"$add": []})", "{}", R"({"$numberInt": "0"})");
  EXPECT_EVAL(R"({"$add": [1, "x"]})", "{}", "16554: $add only supports numeric or date types, not string");
  EXPECT_EVAL(R"({"$add": [{"$date": "2020-01-01T00:00:00Z"}, {"$date": "2020-01-01T00:00:00Z"}]})", "{}",
              "16612: only one date allowed in an $add expression");
  // $subtract: numbers, dates, a date minus milliseconds.
  EXPECT_EVAL(R"({"$subtract": [{"$add": ["$price", "$fee"]}, "$discount"]})",
              R"({"price": 10, "fee": 2, "discount": 5})", R"({"$numberInt": "7"})");
  EXPECT_EVAL(R"({"$subtract": ["$b", "$a"]})",
              R"({"a": {"$date": "2014-03-01T08:00:00Z"}, "b": {"$date": "2014-03-01T09:00:00Z"}})",
              R"({"$numberLong": "3600000"})");
  EXPECT_EVAL(R"({"$subtract": ["$a", 60000]})", R"({"a": {"$date": "2014-03-01T08:00:00Z"}})",
              R"({"$date": {"$numberLong": "1393660740000"}})");
  EXPECT_EVAL(R"({"$subtract": [{"$numberInt": "-2147483648"}, 1]})", "{}", R"({"$numberLong": "-2147483649"})");
  EXPECT_EVAL(R"({"$subtract": [1, {"$date": "2014-03-01T08:00:00Z"}]})", "{}",
              "16556: can't $subtract date from int");
  EXPECT_EVAL(R"({"$subtract": [1]})", "{}",
              "16020: Expression $subtract takes exactly 2 arguments. 1 were passed in.");
  // $multiply, $divide, $mod.
  EXPECT_EVAL(R"({"$multiply": ["$price", "$quantity"]})", R"({"price": 10, "quantity": 2})",
              R"({"$numberInt": "20"})");
  EXPECT_EVAL(R"({"$multiply": [65536, 65536]})", "{}", R"({"$numberLong": "4294967296"})");
  EXPECT_EVAL(R"({"$multiply": [{"$numberDecimal": "1.5"}, 2]})", "{}", R"({"$numberDecimal": "3.0"})");
  EXPECT_EVAL(R"({"$divide": ["$hours", 8]})", R"({"hours": 80})", R"({"$numberDouble": "10.0"})");
  EXPECT_EVAL(R"({"$divide": [1, 0]})", "{}", "16608: can't $divide by zero");
  EXPECT_EVAL(R"({"$divide": ["$nope", 0]})", "{}", "null");
  EXPECT_EVAL(R"({"$divide": [1, "x"]})", "{}", "16609: $divide only supports numeric types, not int and string");
  EXPECT_EVAL(R"({"$mod": [true, 2]})", "{}", "16611: $mod only supports numeric types, not bool and int");
  EXPECT_EVAL(R"({"$mod": [{"$numberDecimal": "1"}, 2]})", "{}", R"({"$numberDecimal": "1"})");
  EXPECT_EVAL(R"({"$mod": ["$hours", "$tasks"]})", R"({"hours": 80, "tasks": 7})", R"({"$numberInt": "3"})");
  EXPECT_EVAL(R"({"$mod": [-7, 2]})", "{}", R"({"$numberInt": "-1"})");
  EXPECT_EVAL(R"({"$mod": [7.5, 2]})", "{}", R"({"$numberDouble": "1.5"})");
  EXPECT_EVAL(R"({"$mod": [1, 0]})", "{}", "16610: can't $mod by zero");
  // $abs, $ceil, $floor.
  EXPECT_EVAL(R"({"$abs": {"$subtract": ["$startTemp", "$endTemp"]}})", R"({"startTemp": 50, "endTemp": 80})",
              R"({"$numberInt": "30"})");
  EXPECT_EVAL(R"({"$abs": {"$numberInt": "-2147483648"}})", "{}", R"({"$numberLong": "2147483648"})");
  EXPECT_EVAL(R"({"$abs": null})", "{}", "null");
  EXPECT_EVAL(R"({"$ceil": -1.2})", "{}", R"({"$numberDouble": "-1.0"})");
  EXPECT_EVAL(R"({"$floor": 1.8})", "{}", R"({"$numberDouble": "1.0"})");
  EXPECT_EVAL(R"({"$floor": 5})", "{}", R"({"$numberInt": "5"})");
  EXPECT_EVAL(R"({"$ceil": "x"})", "{}", "28765: $ceil only supports numeric types, not string");
}

TEST(ExpressionTest, ComparisonsAndLogic) {
  // The manual's comparison example: qty against 250.
  for (const auto& [op, expected] : std::vector<std::pair<std::string, std::string>>{
           {"$eq", "false"}, {"$ne", "true"}, {"$gt", "true"}, {"$gte", "true"},
           {"$lt", "false"}, {"$lte", "false"}, {"$cmp", R"({"$numberInt": "1"})"}}) {
    EXPECT_EVAL("{\"" + op + "\": [\"$qty\", 250]}", R"({"qty": 300})", expected);
  }
  // Across numeric types by value; missing is not null and sorts below it.
  EXPECT_EVAL(R"({"$eq": [1, {"$numberDecimal": "1.0"}]})", "{}", "true");
  EXPECT_EVAL(R"({"$eq": ["$nope", null]})", "{}", "false");
  EXPECT_EVAL(R"({"$lt": ["$nope", null]})", "{}", "true");
  EXPECT_EVAL(R"({"$gt": ["a", 1]})", "{}", "true");  // strings sort above numbers
  EXPECT_EVAL(R"({"$eq": [1]})", "{}", "16020: Expression $eq takes exactly 2 arguments. 1 were passed in.");
  // $and / $or / $not with MongoDB's truthiness.
  EXPECT_EVAL(R"({"$and": [{"$gt": ["$qty", 100]}, {"$lt": ["$qty", 250]}]})", R"({"qty": 200})", "true");
  EXPECT_EVAL(R"({"$and": [1, "green"]})", "{}", "true");
  EXPECT_EVAL(R"({"$and": [[], null]})", "{}", "false");
  EXPECT_EVAL(R"({"$and": [0]})", "{}", "false");
  EXPECT_EVAL(R"({"$and": []})", "{}", "true");
  EXPECT_EVAL(R"({"$or": [{"$gt": ["$qty", 250]}, {"$lt": ["$qty", 200]}]})", R"({"qty": 300})", "true");
  EXPECT_EVAL(R"({"$or": [null, 0, "$nope"]})", "{}", "false");
  EXPECT_EVAL(R"({"$not": [{"$gt": ["$qty", 250]}]})", R"({"qty": 300})", "false");
  EXPECT_EVAL(R"({"$not": [[]]})", "{}", "false");  // an empty array is true
  EXPECT_EVAL(R"({"$not": [{"$numberDecimal": "0"}]})", "{}", "true");
  // $and stops at the first false: the second clause is never evaluated.
  EXPECT_EVAL(R"({"$and": [false, {"$divide": [1, 0]}]})", "{}", "false");
}

TEST(ExpressionTest, Conditionals) {
  // The manual's $cond: a discount by quantity, in both forms.
  EXPECT_EVAL(R"({"$cond": {"if": {"$gte": ["$qty", 250]}, "then": 30, "else": 20}})", R"({"qty": 300})",
              R"({"$numberInt": "30"})");
  EXPECT_EVAL(R"({"$cond": [{"$gte": ["$qty", 250]}, 30, 20]})", R"({"qty": 100})", R"({"$numberInt": "20"})");
  EXPECT_EVAL(R"({"$cond": {"if": true, "then": 1}})", "{}", "17082: Missing 'else' parameter to $cond");
  EXPECT_EVAL(R"({"$cond": {"if": true, "then": 1, "else": 2, "x": 3}})", "{}",
              "17083: Unrecognized parameter to $cond: x");
  EXPECT_EVAL(R"({"$cond": [true, 1]})", "{}", "16020: Expression $cond takes exactly 3 arguments. 2 were passed in.");
  // The manual's $ifNull: the first of several that is neither null nor missing.
  EXPECT_EVAL(R"({"$ifNull": ["$description", "Unspecified"]})", R"({"description": null})", R"("Unspecified")");
  EXPECT_EVAL(R"({"$ifNull": ["$description", "$quantity", 0]})", R"({"quantity": 5})", R"({"$numberInt": "5"})");
  EXPECT_EVAL(R"({"$ifNull": ["$a", "$b"]})", "{}", "missing");
  EXPECT_EVAL(R"({"$ifNull": ["$a"]})", "{}",
              "16020: Expression $ifNull takes at least 2 arguments. 1 were passed in.");
  // The manual's $switch: a grade's summary.
  const char* kSwitch = R"({"$switch": {"branches": [
      {"case": {"$gte": [{"$avg": "$scores"}, 90]}, "then": "Doing great!"}]}})";
  EXPECT_EVAL(kSwitch, R"({"scores": [95, 92]})", R"("Doing great!")");
  EXPECT_EVAL(kSwitch, R"({"scores": [50]})",
              "40066: $switch could not find a matching branch for an input, and no default was specified.");
  const char* kSwitch2 = R"({"$switch": {"branches": [
      {"case": {"$gte": ["$score", 90]}, "then": "Doing great!"},
      {"case": {"$and": [{"$gte": ["$score", 80]}, {"$lt": ["$score", 90]}]}, "then": "Doing pretty well."}],
      "default": "Needs improvement!"}})";
  EXPECT_EVAL(kSwitch2, R"({"score": 85})", R"("Doing pretty well.")");
  EXPECT_EVAL(kSwitch2, R"({"score": 10})", R"("Needs improvement!")");
  EXPECT_EVAL(R"({"$switch": {"branches": [{"case": false, "then": 1}]}})", "{}",
              "40066: $switch could not find a matching branch for an input, and no default was specified.");
  EXPECT_EVAL(R"({"$switch": {"branches": []}})", "{}", "40068: $switch requires at least one branch.");
  EXPECT_EVAL(R"({"$switch": {"branches": [{"then": 1}]}})", "{}",
              "40064: $switch requires each branch have a 'case' expression");
}

TEST(ExpressionTest, StringsAndArrays) {
  EXPECT_EVAL(R"({"$concat": ["$item", " - ", "$description"]})",
              R"({"item": "ABC1", "description": "product 1"})", R"("ABC1 - product 1")");
  EXPECT_EVAL(R"({"$concat": ["a", null]})", "{}", "null");
  EXPECT_EVAL(R"({"$concat": ["a", 1]})", "{}", "16702: $concat only supports strings, not int");
  EXPECT_EVAL(R"({"$toUpper": "$item"})", R"({"item": "abc1"})", R"("ABC1")");
  EXPECT_EVAL(R"({"$toLower": "$item"})", R"({"item": "PRODUCT 1 é"})", R"("product 1 é")");
  EXPECT_EVAL(R"({"$toLower": "$nope"})", "{}", R"("")");
  EXPECT_EVAL(R"({"$strLenCP": "cafétéria"})", "{}", R"({"$numberInt": "9"})");
  EXPECT_EVAL(R"({"$strLenCP": 1})", "{}", "34471: $strLenCP requires a string argument, found: int");
  // The manual's $size: the number of colors.
  EXPECT_EVAL(R"({"$size": "$colors"})", R"({"colors": ["blue", "black"]})", R"({"$numberInt": "2"})");
  EXPECT_EVAL(R"({"$size": "$nope"})", "{}",
              "17124: The argument to $size must be an array. Type of argument is: missing");
  // The manual's $arrayElemAt: first and last favorites.
  EXPECT_EVAL(R"({"$arrayElemAt": ["$favorites", 0]})", R"({"favorites": ["chocolate", "cake", "butter pecan"]})",
              R"("chocolate")");
  EXPECT_EVAL(R"({"$arrayElemAt": ["$favorites", -1]})", R"({"favorites": ["chocolate", "cake", "butter pecan"]})",
              R"("butter pecan")");
  EXPECT_EVAL(R"({"$arrayElemAt": [[1], 5]})", "{}", "missing");
  EXPECT_EVAL(R"({"$arrayElemAt": [[1], 0.5]})", "{}",
              "28691: $arrayElemAt's second argument must be representable as a 32-bit integer: 0.5");
  EXPECT_EVAL(R"({"$isArray": ["$a"]})", R"({"a": []})", "true");
  EXPECT_EVAL(R"({"$isArray": "$a"})", R"({"a": 1})", "false");
  // The manual's $in: whether a store has bananas.
  EXPECT_EVAL(R"({"$in": ["bananas", "$in_stock"]})", R"({"in_stock": ["apples", "bananas"]})", "true");
  EXPECT_EVAL(R"({"$in": [2, [1, 2.0]]})", "{}", "true");
  EXPECT_EVAL(R"({"$in": [1, "x"]})", "{}", "40081: $in requires an array as a second argument, found: string");
  EXPECT_EVAL(R"({"$concatArrays": ["$instock", "$ordered"]})",
              R"({"instock": ["chocolate"], "ordered": ["butter", "apple"]})", R"(["chocolate", "butter", "apple"])");
  EXPECT_EVAL(R"({"$concatArrays": [[1], null]})", "{}", "null");
  EXPECT_EVAL(R"({"$concatArrays": [[1], 2]})", "{}", "28664: $concatArrays only supports arrays, not int");
}

TEST(ExpressionTest, HigherOrderArrayAndObjectOperators) {
  // The manual's $filter: items priced at least 100.
  const char* kItems = R"({"items": [{"item_id": 43, "quantity": 2, "price": 10},
      {"item_id": 2, "quantity": 1, "price": 240}, {"item_id": 23, "quantity": 3, "price": 110}]})";
  EXPECT_EVAL(R"({"$filter": {"input": "$items", "as": "item", "cond": {"$gte": ["$$item.price", 100]}}})",
              kItems,
              R"([{"item_id": {"$numberInt": "2"}, "quantity": {"$numberInt": "1"}, "price": {"$numberInt": "240"}}, )"
              R"({"item_id": {"$numberInt": "23"}, "quantity": {"$numberInt": "3"}, "price": {"$numberInt": "110"}}])");
  EXPECT_EVAL(R"({"$filter": {"input": [1, 2, 3, 4], "cond": {"$gt": ["$$this", 1]}, "limit": 2}})", "{}",
              R"([{"$numberInt": "2"}, {"$numberInt": "3"}])");
  EXPECT_EVAL(R"({"$filter": {"input": "$nope", "cond": true}})", "{}", "null");
  EXPECT_EVAL(R"({"$filter": {"input": 1, "cond": true}})", "{}", "28651: input to $filter must be an array not int");
  EXPECT_EVAL(R"({"$filter": {"input": [], "cond": true, "x": 1}})", "{}", "28647: Unrecognized parameter to $filter: x");
  // The manual's $map: add 2 to each quiz score.
  EXPECT_EVAL(R"({"$map": {"input": "$quizzes", "as": "grade", "in": {"$add": ["$$grade", 2]}}})",
              R"({"quizzes": [5, 6, 7]})", R"([{"$numberInt": "7"}, {"$numberInt": "8"}, {"$numberInt": "9"}])");
  EXPECT_EVAL(R"({"$map": {"input": [1], "in": "$$grade"}})", "{}", "17276: Use of undefined variable: grade");
  // The manual's $reduce: concatenate strings; sum and product.
  EXPECT_EVAL(R"({"$reduce": {"input": ["a", "b", "c"], "initialValue": "", "in": {"$concat": ["$$value", "$$this"]}}})",
              "{}", R"("abc")");
  EXPECT_EVAL(R"({"$reduce": {"input": [1, 2, 3, 4], "initialValue": {"sum": 5, "product": 2},
      "in": {"sum": {"$add": ["$$value.sum", "$$this"]}, "product": {"$multiply": ["$$value.product", "$$this"]}}}})",
              "{}", R"({"sum": {"$numberInt": "15"}, "product": {"$numberInt": "48"}})");
  EXPECT_EVAL(R"({"$reduce": {"input": [], "in": 1}})", "{}", "40078: Missing 'initialValue' parameter to $reduce");
  // $sum / $avg / $max / $min as expressions: over an array, or the arguments.
  EXPECT_EVAL(R"({"$sum": "$quizzes"})", R"({"quizzes": [10, 6, 7, "x"]})", R"({"$numberInt": "23"})");
  EXPECT_EVAL(R"({"$sum": ["$a", "$b"]})", R"({"a": 1, "b": 2.5})", R"({"$numberDouble": "3.5"})");
  EXPECT_EVAL(R"({"$avg": "$quizzes"})", R"({"quizzes": [10, 6, 8]})", R"({"$numberDouble": "8.0"})");
  EXPECT_EVAL(R"({"$avg": "$nope"})", "{}", "null");
  EXPECT_EVAL(R"({"$max": "$quizzes"})", R"({"quizzes": [10, null, 8]})", R"({"$numberInt": "10"})");
  EXPECT_EVAL(R"({"$min": [5, "$nope", 2]})", "{}", R"({"$numberInt": "2"})");
  // $first, $last, $slice, $reverseArray, $range, $indexOfArray.
  EXPECT_EVAL(R"({"$first": [[1, 2]]})", "{}", R"({"$numberInt": "1"})");
  EXPECT_EVAL(R"({"$first": [1, 2]})", "{}", "16020: Expression $first takes exactly 1 arguments. 2 were passed in.");
  EXPECT_EVAL(R"({"$last": "$a"})", R"({"a": [1, 2]})", R"({"$numberInt": "2"})");
  EXPECT_EVAL(R"({"$first": [[]]})", "{}", "missing");
  EXPECT_EVAL(R"({"$slice": [[1, 2, 3], -2]})", "{}", R"([{"$numberInt": "2"}, {"$numberInt": "3"}])");
  EXPECT_EVAL(R"({"$slice": [[1, 2, 3], 1, 1]})", "{}", R"([{"$numberInt": "2"}])");
  EXPECT_EVAL(R"({"$reverseArray": [[1, 2]]})", "{}", R"([{"$numberInt": "2"}, {"$numberInt": "1"}])");
  EXPECT_EVAL(R"({"$range": [0, 10, 4]})", "{}", R"([{"$numberInt": "0"}, {"$numberInt": "4"}, {"$numberInt": "8"}])");
  EXPECT_EVAL(R"({"$range": [5, 0, -2]})", "{}", R"([{"$numberInt": "5"}, {"$numberInt": "3"}, {"$numberInt": "1"}])");
  EXPECT_EVAL(R"({"$range": [0, 1, 0]})", "{}", "34449: $range requires a non-zero step value");
  // The memory bound is checked on the count, before anything is built:
  // 2^31 values at MongoDB's 16 bytes each, against its 64 MiB default.
  EXPECT_EVAL(R"({"$range": [-2147483648, 2147483647]})", "{}",
              "146: $range would use too much memory (68719476720 bytes) and cannot spill to "
              "disk. Memory limit: 67108864 bytes");
  {
    // Lowered to 5 values: 5 fit (either direction, any step), 6 do not.
    const int64_t saved = rockdoc::internal::RangeMemoryLimitBytes();
    rockdoc::internal::SetRangeMemoryLimitBytes(5 * rockdoc::internal::kRangeBytesPerValue);
    EXPECT_EVAL(R"({"$size": {"$range": [0, 5]}})", "{}", R"({"$numberInt": "5"})");
    EXPECT_EVAL(R"({"$size": {"$range": [10, -10, -4]}})", "{}", R"({"$numberInt": "5"})");
    EXPECT_EVAL(R"({"$size": {"$range": [0, 100, 20]}})", "{}", R"({"$numberInt": "5"})");
    EXPECT_EVAL(R"({"$range": [0, 101, 20]})", "{}",
                "146: $range would use too much memory (96 bytes) and cannot spill to disk. "
                "Memory limit: 80 bytes");
    EXPECT_EVAL(R"({"$range": [5, 0]})", "{}", "[]");
    rockdoc::internal::SetRangeMemoryLimitBytes(saved);
  }
  // A value that doubles each step stops at 64 MiB (MongoDB's BufBuilder
  // bound; a string's value bytes are its length, the string and a NUL) instead of exhausting memory: a string by $concat, an array by
  // $concatArrays.
  EXPECT_EVAL(R"({"$strLenBytes": {"$reduce": {"input": {"$range": [0, 40]}, "initialValue": "ab",
                  "in": {"$concat": ["$$value", "$$value"]}}}})",
              "{}", "13548: BufBuilder attempted to grow() to 67108869 bytes, past the 64MB limit.");
  EXPECT_EVAL(R"({"$strLenBytes": {"$reduce": {"input": {"$range": [0, 24]}, "initialValue": "ab",
                  "in": {"$concat": ["$$value", "$$value"]}}}})",
              "{}", R"({"$numberInt": "33554432"})");
  const std::string doubled_array = Eval(
      R"({"$size": {"$reduce": {"input": {"$range": [0, 40]}, "initialValue": [1],
           "in": {"$concatArrays": ["$$value", "$$value"]}}}})",
      "{}");
  EXPECT_EQ(doubled_array.substr(0, 41), "13548: BufBuilder attempted to grow() to ") << doubled_array;
  EXPECT_EVAL(R"({"$indexOfArray": [["a", "abc", "b"], "b"]})", "{}", R"({"$numberInt": "2"})");
  EXPECT_EVAL(R"({"$indexOfArray": [[1, 2], 5]})", "{}", R"({"$numberInt": "-1"})");
  // $type, $mergeObjects, $objectToArray, $arrayToObject.
  EXPECT_EVAL(R"([{"$type": "$a"}, {"$type": "$b"}, {"$type": "$nope"}])", R"({"a": 1, "b": [1]})",
              R"(["int", "array", "missing"])");
  EXPECT_EVAL(R"({"$mergeObjects": [{"a": 1, "b": 2}, null, {"b": 3, "c": 4}]})", "{}",
              R"({"a": {"$numberInt": "1"}, "b": {"$numberInt": "3"}, "c": {"$numberInt": "4"}})");
  EXPECT_EVAL(R"({"$mergeObjects": [1]})", "{}", "40400: $mergeObjects requires object inputs, but input 1 is of type int");
  EXPECT_EVAL(R"({"$objectToArray": {"item": "foo", "qty": 25}})", "{}",
              R"([{"k": "item", "v": "foo"}, {"k": "qty", "v": {"$numberInt": "25"}}])");
  EXPECT_EVAL(R"({"$arrayToObject": [[["item", "abc123"], ["qty", 25]]]})", "{}",
              R"({"item": "abc123", "qty": {"$numberInt": "25"}})");
  EXPECT_EVAL(R"({"$arrayToObject": {"$literal": [{"k": "a", "v": 1}, {"k": "a", "v": 2}]}})", "{}",
              R"({"a": {"$numberInt": "2"}})");
}

TEST(ExpressionTest, DateParts) {
  // The manual's date example: 2014-01-01T08:15:39.736Z.
  const char* kDoc = R"({"date": {"$date": "2014-01-01T08:15:39.736Z"}})";
  EXPECT_EVAL(R"([{"$year": "$date"}, {"$month": "$date"}, {"$dayOfMonth": "$date"}, {"$hour": "$date"},
      {"$minute": "$date"}, {"$second": "$date"}, {"$millisecond": "$date"}, {"$dayOfYear": "$date"},
      {"$dayOfWeek": "$date"}])",
              kDoc,
              R"([{"$numberInt": "2014"}, {"$numberInt": "1"}, {"$numberInt": "1"}, {"$numberInt": "8"}, )"
              R"({"$numberInt": "15"}, {"$numberInt": "39"}, {"$numberInt": "736"}, {"$numberInt": "1"}, )"
              R"({"$numberInt": "4"}])");
  EXPECT_EVAL(R"([{"$dayOfYear": "$d"}, {"$dayOfWeek": "$d"}, {"$month": "$d"}])",
              R"({"d": {"$date": "2024-12-31T23:59:59Z"}})",
              R"([{"$numberInt": "366"}, {"$numberInt": "3"}, {"$numberInt": "12"}])");
  EXPECT_EVAL(R"([{"$year": "$d"}, {"$dayOfMonth": "$d"}, {"$hour": "$d"}])",
              R"({"d": {"$date": {"$numberLong": "-1"}}})",
              R"([{"$numberInt": "1969"}, {"$numberInt": "31"}, {"$numberInt": "23"}])");
  EXPECT_EVAL(R"({"$year": {"date": "$date"}})", kDoc, R"({"$numberInt": "2014"})");
  EXPECT_EVAL(R"({"$year": {"date": "$date", "timezone": "America/New_York"}})", kDoc,
              R"({"$numberInt": "2014"})");
  EXPECT_EVAL(R"({"$year": "x"})", "{}", "16006: can't convert from BSON type string to Date");
  EXPECT_EVAL(R"({"$year": null})", "{}", "null");
}

TEST(ExpressionTest, MalformedExpressionsFailWithMongoDBsCodes) {
  EXPECT_EVAL(R"({"$bogus": 1})", "{}", "168: Unrecognized expression '$bogus'");
  EXPECT_EVAL(R"({"$add": [1], "$multiply": [2]})", "{}",
              "15983: an expression specification must contain exactly one field, the name of the "
              "expression. Found 2 fields in { $add: [ 1 ], $multiply: [ 2 ] }");
  EXPECT_EVAL(R"({"a": 1, "$b": 2})", "{}",
              "16410: FieldPath field names may not start with '$'. Consider using $getField or $setField.");
  EXPECT_EVAL(R"({"a.b": 1})", "{}",
              "16412: FieldPath field names may not contain '.'. Consider using $getField or $setField.");
  EXPECT_EVAL(R"("$")", "{}", "16872: '$' by itself is not a valid FieldPath");
  EXPECT_EVAL(R"("$a..b")", "{}", "15998: FieldPath field names may not be empty strings.");
  EXPECT_EVAL(R"("$$")", "{}", "16869: empty variable names are not allowed");
  EXPECT_EVAL(R"({"$function": {}})", "{}", "238: the expression $function is not supported by rockdoc yet");
  EXPECT_EVAL(R"({"$dateToString": {}})", "{}", "18628: $dateToString requires 'date' to be specified");
  EXPECT_EVAL(R"({"$trim": "x"})", "{}", "50696: $trim expects an object of named arguments but found: string");
  EXPECT_EVAL(R"({"$trim": {"input": "x", "bogus": 1}})", "{}", "50694: $trim found an unknown argument: bogus");
  EXPECT_EVAL(R"({"$year": {"date": "$d", "zone": "UTC"}})", "{}", "40535: unrecognized option to $year: \"zone\"");
  EXPECT_EVAL(R"({"$sqrt": [1, 2]})", "{}", "16020: Expression $sqrt takes exactly 1 arguments. 2 were passed in.");
  // Errors inside an operand surface when it is parsed, not evaluated.
  EXPECT_EVAL(R"({"$cond": [true, 1, {"$bogus": 1}]})", "{}", "168: Unrecognized expression '$bogus'");
}

// The MongoDB manual's examples for the string operators.
TEST(ExpressionTest, StringOperators) {
  // "cafétéria": é is two bytes, so it is 9 code points and 11 bytes.
  EXPECT_EVAL(R"([{"$strLenCP": "cafétéria"}, {"$strLenBytes": "cafétéria"}])", "{}",
              R"([{"$numberInt": "9"}, {"$numberInt": "11"}])");
  EXPECT_EVAL(R"({"$substrBytes": ["cafétéria", 0, 5]})", "{}", R"("café")");
  EXPECT_EVAL(R"({"$substrBytes": ["cafétéria", 7, 3]})", "{}",
              "28656: $substrBytes:  Invalid range, starting index is a UTF-8 continuation byte.");
  EXPECT_EVAL(R"({"$substrBytes": ["cafétéria", 0, 4]})", "{}",
              "28657: $substrBytes:  Invalid range, ending index is in the middle of a UTF-8 character.");
  EXPECT_EVAL(R"({"$substr": ["WWWW1", 0, 2]})", "{}", R"("WW")");
  EXPECT_EVAL(R"({"$substrBytes": ["abc", -1, 2]})", "{}", R"("")");
  EXPECT_EVAL(R"({"$substrBytes": ["abc", 1, -1]})", "{}", R"("bc")");
  EXPECT_EVAL(R"([{"$substrCP": ["cafétéria", 0, 5]}, {"$substrCP": ["cafétéria", 5, 4]}])", "{}",
              R"(["cafét", "éria"])");
  EXPECT_EVAL(R"({"$substrCP": ["abc", -1, 1]})", "{}",
              "34455: $substrCP: the starting index must be nonnegative integer.");
  EXPECT_EVAL(R"([{"$indexOfBytes": ["cafétéria", "t"]}, {"$indexOfCP": ["cafétéria", "t"]}])", "{}",
              R"([{"$numberInt": "5"}, {"$numberInt": "4"}])");
  EXPECT_EVAL(R"([{"$indexOfBytes": ["foo.bar.fi", ".", 5]}, {"$indexOfCP": ["vanilla", "ll", 0, 2]},
                  {"$indexOfCP": ["abc", "z"]}, {"$indexOfBytes": [null, "a"]}])", "{}",
              R"([{"$numberInt": "7"}, {"$numberInt": "-1"}, {"$numberInt": "-1"}, null])");
  EXPECT_EVAL(R"({"$indexOfCP": [1, "a"]})", "{}",
              "40093: $indexOfCP requires a string as the first argument, found: int");
  EXPECT_EVAL(R"({"$split": ["June-15-2013", "-"]})", "{}", R"(["June", "15", "2013"])");
  EXPECT_EVAL(R"({"$split": ["banana split", "a"]})", "{}", R"(["b", "n", "n", " split"])");
  EXPECT_EVAL(R"({"$split": ["headphone jack", 7]})", "{}",
              "40086: $split requires an expression that evaluates to a string as a second argument, found: int");
  EXPECT_EVAL(R"({"$split": ["abc", ""]})", "{}", "40087: $split requires a non-empty separator");
  EXPECT_EVAL(R"({"$trim": {"input": "  \n good  bye \t  "}})", "{}", R"("good  bye")");
  EXPECT_EVAL(R"({"$trim": {"input": "ggggoodbyeeeee", "chars": "ge"}})", "{}", R"("oodby")");
  EXPECT_EVAL(R"([{"$ltrim": {"input": "  abc  "}}, {"$rtrim": {"input": "  abc  "}}])", "{}",
              R"(["abc  ", "  abc"])");
  EXPECT_EVAL(R"({"$trim": {"input": "\u00a0éxé\u2003", "chars": "é\u00a0\u2003"}})", "{}", R"("x")");
  EXPECT_EVAL(R"({"$trim": {"input": 1}})", "{}",
              "50699: $trim requires its input to be a string, got 1 (of type int) instead.");
  EXPECT_EVAL(R"([{"$strcasecmp": ["13Q1", "13q4"]}, {"$strcasecmp": ["13Q4", "13q4"]},
                  {"$strcasecmp": ["14Q2", "13q4"]}])", "{}",
              R"([{"$numberInt": "-1"}, {"$numberInt": "0"}, {"$numberInt": "1"}])");
  EXPECT_EVAL(R"({"$replaceOne": {"input": "blue paint blue", "find": "blue", "replacement": "red"}})", "{}",
              R"("red paint blue")");
  EXPECT_EVAL(R"({"$replaceAll": {"input": "blue paint blue", "find": "blue", "replacement": "red"}})", "{}",
              R"("red paint red")");
  EXPECT_EVAL(R"({"$replaceAll": {"input": null, "find": "a", "replacement": "b"}})", "{}", "null");
  EXPECT_EVAL(R"({"$replaceOne": {"input": 1, "find": "a", "replacement": "b"}})", "{}",
              "51746: $replaceOne requires that 'input' be a string, found: 1");
  EXPECT_EVAL(R"([{"$toUpper": 1.5}, {"$toLower": "ABC é"}, {"$toUpper": null}])", "{}",
              R"(["1.5", "abc é", ""])");
}

TEST(ExpressionTest, RegexOperators) {
  EXPECT_EVAL(R"({"$regexMatch": {"input": "Contact: jim@example.com", "regex": "@example\\.com$"}})", "{}", "true");
  EXPECT_EVAL(R"({"$regexMatch": {"input": "Single LINE", "regex": "line"}})", "{}", "false");
  EXPECT_EVAL(R"({"$regexMatch": {"input": "Single LINE", "regex": "line", "options": "i"}})", "{}", "true");
  EXPECT_EVAL(R"({"$regexMatch": {"input": "Single LINE", "regex": {"$regularExpression": {"pattern": "line", "options": "i"}}}})",
              "{}", "true");
  EXPECT_EVAL(R"({"$regexMatch": {"input": null, "regex": "a"}})", "{}", "false");
  EXPECT_EVAL(R"({"$regexFind": {"input": "Single LINE description.", "regex": "line", "options": "i"}})", "{}",
              R"({"match": "LINE", "idx": {"$numberInt": "7"}, "captures": []})");
  EXPECT_EVAL(R"({"$regexFind": {"input": "abc", "regex": "z"}})", "{}", "null");
  // idx counts code points; captures that took no part are null.
  EXPECT_EVAL(R"({"$regexFindAll": {"input": "cafétéria", "regex": "é"}})", "{}",
              R"([{"match": "é", "idx": {"$numberInt": "3"}, "captures": []}, )"
              R"({"match": "é", "idx": {"$numberInt": "5"}, "captures": []}])");
  EXPECT_EVAL(R"({"$regexFindAll": {"input": "a1b2c", "regex": "([a-z])(\\d)?"}})", "{}",
              R"([{"match": "a1", "idx": {"$numberInt": "0"}, "captures": ["a", "1"]}, )"
              R"({"match": "b2", "idx": {"$numberInt": "2"}, "captures": ["b", "2"]}, )"
              R"({"match": "c", "idx": {"$numberInt": "4"}, "captures": ["c", null]}])");
  // An empty match moves on one character.
  EXPECT_EVAL(R"({"$size": {"$regexFindAll": {"input": "abc", "regex": "x*"}}})", "{}", R"({"$numberInt": "4"})");
  EXPECT_EVAL(R"({"$regexMatch": {"input": 1, "regex": "a"}})", "{}",
              "51104: $regexMatch needs 'input' to be of type string");
  EXPECT_EVAL(R"({"$regexMatch": {"input": "a", "regex": {"$regularExpression": {"pattern": "a", "options": "i"}}, "options": "m"}})",
              "{}", "51107: $regexMatch found regex option(s) specified in both 'regex' and 'option' fields");
  EXPECT_EVAL(R"({"$regexMatch": {"input": "a", "regex": "("}})", "{}",
              "51111: $regexMatch: Regular expression is invalid: missing closing parenthesis");
  EXPECT_EVAL(R"({"$regexMatch": {"input": "a"}})", "{}", "31022: $regexMatch requires 'regex' to be specified");
}

TEST(ExpressionTest, RegexOperatorsUnderPcre2DefaultLimits) {
  // Issue #34.1: a match PCRE2's default limits decide is answered; one that
  // reaches them is error 51156 in each operator, never false or null.
  const std::string many_a(5000, 'a');
  const std::string doc = R"({"s": ")" + many_a + R"(", "t": ")" + std::string(40, 'a') + R"(!"})";
  EXPECT_EVAL(R"({"$regexMatch": {"input": "$s", "regex": "^(?:a|b)*$"}})", doc, "true");
  EXPECT_EVAL(R"({"$regexMatch": {"input": "$s", "regex": "^(a)*$"}})", doc, "true");
  EXPECT_EVAL(R"({"$regexMatch": {"input": {"$substrBytes": ["$s", 0, 190]}, "regex": "(.*a){3}x|a$"}})",
              doc, "true");
  for (const char* op : {"$regexMatch", "$regexFind", "$regexFindAll"}) {
    EXPECT_EVAL(std::string(R"({")") + op + R"(": {"input": "$t", "regex": "(a+)+$"}})", doc,
                std::string("51156: Error occurred while executing the regular expression in ") + op +
                    ". Result code: match limit exceeded");
  }
}

TEST(ExpressionTest, DatesInTimezones) {
  // The manual's $dateToString example.
  const char* kDoc = R"({"date": {"$date": "2014-01-01T08:15:39.736Z"}})";
  EXPECT_EVAL(R"({"$dateToString": {"format": "%Y-%m-%d", "date": "$date"}})", kDoc, R"("2014-01-01")");
  EXPECT_EVAL(R"({"$dateToString": {"format": "%H:%M:%S:%L%z", "date": "$date", "timezone": "America/New_York"}})",
              kDoc, R"("03:15:39:736-0500")");
  EXPECT_EVAL(R"({"$dateToString": {"format": "%H:%M:%S:%L%z", "date": "$date", "timezone": "+04:30"}})",
              kDoc, R"("12:45:39:736+0430")");
  EXPECT_EVAL(R"([{"$dateToString": {"format": "%Z", "date": "$date", "timezone": "America/New_York"}},
                  {"$dateToString": {"format": "%Z", "date": "$date", "timezone": "+04:30"}}])",
              kDoc, R"(["-300", "270"])");
  EXPECT_EVAL(R"({"$dateToString": {"date": "$date"}})", kDoc, R"("2014-01-01T08:15:39.736Z")");
  EXPECT_EVAL(R"({"$dateToString": {"format": "%j %w %u %U %V %G %%", "date": "$date"}})", kDoc,
              R"("001 4 3 00 01 2014 %")");
  EXPECT_EVAL(R"({"$dateToString": {"date": "$nope", "onNull": "none"}})", kDoc, R"("none")");
  EXPECT_EVAL(R"({"$dateToString": {"date": "$date", "format": "%Q"}})", kDoc,
              "18536: Invalid format character '%Q' in format string");
  EXPECT_EVAL(R"({"$dateToString": {"date": "$date", "timezone": "Mars/Olympus"}})", kDoc,
              R"(40485: unrecognized time zone identifier: "Mars/Olympus")");
  EXPECT_EVAL(R"([{"$hour": {"date": "$date", "timezone": "America/New_York"}},
                  {"$minute": {"date": "$date", "timezone": "+04:30"}},
                  {"$dayOfMonth": {"date": "$date", "timezone": "-09"}}])",
              kDoc, R"([{"$numberInt": "3"}, {"$numberInt": "45"}, {"$numberInt": "31"}])");
  // 2016-01-01 was a Friday in ISO week 53 of 2015, and %U week 0.
  EXPECT_EVAL(R"([{"$isoWeek": "$d"}, {"$isoWeekYear": "$d"}, {"$isoDayOfWeek": "$d"}, {"$week": "$d"}])",
              R"({"d": {"$date": "2016-01-01T00:00:00Z"}})",
              R"([{"$numberInt": "53"}, {"$numberLong": "2015"}, {"$numberInt": "5"}, {"$numberInt": "0"}])");

  EXPECT_EVAL(R"({"$dateFromString": {"dateString": "2017-02-08T12:10:40.787", "timezone": "America/New_York"}})",
              "{}", R"({"$date": {"$numberLong": "1486573840787"}})");
  EXPECT_EVAL(R"({"$dateFromString": {"dateString": "2017-02-08T12:10:40.787Z"}})", "{}",
              R"({"$date": {"$numberLong": "1486555840787"}})");
  EXPECT_EVAL(R"({"$dateFromString": {"dateString": "2017-02-08 12:10:40+05:30"}})", "{}",
              R"({"$date": {"$numberLong": "1486536040000"}})");
  EXPECT_EVAL(R"({"$dateFromString": {"dateString": "15-06-2018", "format": "%d-%m-%Y"}})", "{}",
              R"({"$date": {"$numberLong": "1529020800000"}})");
  EXPECT_EVAL(R"({"$dateFromString": {"dateString": "not a date", "onError": "bad"}})", "{}", R"("bad")");
  EXPECT_EVAL(R"({"$dateFromString": {"dateString": null, "onNull": "none"}})", "{}", R"("none")");
  EXPECT_EVAL(R"({"$dateFromString": {"dateString": "2017-02-30"}})", "{}",
              "241: Error parsing date string '2017-02-30'; The parsed date was invalid");
  EXPECT_EVAL(R"({"$dateFromString": {"dateString": "2017-02-08Z", "timezone": "UTC"}})", "{}",
              "40554: you cannot pass in a date/time string with GMT offset together with a timezone argument");

  const char* kParts = R"({"date": {"$date": "2017-01-01T01:29:09.123Z"}})";
  EXPECT_EVAL(R"({"$dateToParts": {"date": "$date"}})", kParts,
              R"({"year": {"$numberInt": "2017"}, "month": {"$numberInt": "1"}, "day": {"$numberInt": "1"}, )"
              R"("hour": {"$numberInt": "1"}, "minute": {"$numberInt": "29"}, "second": {"$numberInt": "9"}, )"
              R"("millisecond": {"$numberInt": "123"}})");
  EXPECT_EVAL(R"({"$dateToParts": {"date": "$date", "iso8601": true}})", kParts,
              R"({"isoWeekYear": {"$numberInt": "2016"}, "isoWeek": {"$numberInt": "52"}, "isoDayOfWeek": {"$numberInt": "7"}, )"
              R"("hour": {"$numberInt": "1"}, "minute": {"$numberInt": "29"}, "second": {"$numberInt": "9"}, )"
              R"("millisecond": {"$numberInt": "123"}})");
  EXPECT_EVAL(R"({"$dateToParts": {"date": "$date", "timezone": "America/New_York"}})", kParts,
              R"({"year": {"$numberInt": "2016"}, "month": {"$numberInt": "12"}, "day": {"$numberInt": "31"}, )"
              R"("hour": {"$numberInt": "20"}, "minute": {"$numberInt": "29"}, "second": {"$numberInt": "9"}, )"
              R"("millisecond": {"$numberInt": "123"}})");

  EXPECT_EVAL(R"({"$dateFromParts": {"year": 2017, "month": 2, "day": 8, "hour": 12}})", "{}",
              R"({"$date": {"$numberLong": "1486555200000"}})");
  EXPECT_EVAL(R"({"$dateFromParts": {"isoWeekYear": 2017, "isoWeek": 6, "isoDayOfWeek": 3, "hour": 12}})", "{}",
              R"({"$date": {"$numberLong": "1486555200000"}})");
  EXPECT_EVAL(R"({"$dateFromParts": {"year": 2016, "month": 12, "day": 31, "hour": 23, "minute": 46,
                                      "second": 12, "timezone": "America/New_York"}})", "{}",
              R"({"$date": {"$numberLong": "1483245972000"}})");
  // Out-of-range parts carry into the next unit.
  EXPECT_EVAL(R"([{"$dateFromParts": {"year": 2017, "month": 14, "day": 1}},
                  {"$dateFromParts": {"year": 2017, "month": 0, "day": 0}}])", "{}",
              R"([{"$date": {"$numberLong": "1517443200000"}}, {"$date": {"$numberLong": "1480464000000"}}])");
  EXPECT_EVAL(R"({"$dateFromParts": {"year": 0}})", "{}",
              "40523: 'year' must evaluate to a value in the range [1, 9999]; found 0");

  // $dateTrunc: the manual's orders example (2020-05-18T14:10:30Z).
  const char* kOrder = R"({"d": {"$date": "2020-05-18T14:10:30Z"}})";
  EXPECT_EVAL(R"({"$dateTrunc": {"date": "$d", "unit": "week", "binSize": 2, "timezone": "America/Los_Angeles",
                                  "startOfWeek": "Monday"}})",
              kOrder, R"({"$date": {"$numberLong": "1589180400000"}})");
  EXPECT_EVAL(R"([{"$dateTrunc": {"date": "$d", "unit": "month", "binSize": 6}},
                  {"$dateTrunc": {"date": "$d", "unit": "day"}},
                  {"$dateTrunc": {"date": "$d", "unit": "hour", "binSize": 6}},
                  {"$dateTrunc": {"date": "$d", "unit": "quarter"}}])",
              kOrder,
              R"([{"$date": {"$numberLong": "1577836800000"}}, {"$date": {"$numberLong": "1589760000000"}}, )"
              R"({"$date": {"$numberLong": "1589803200000"}}, {"$date": {"$numberLong": "1585699200000"}}])");
  EXPECT_EVAL(R"({"$dateTrunc": {"date": "$d", "unit": "fortnight"}})", kOrder,
              "9: $dateTrunc parameter 'unit' value parsing failed :: caused by :: unknown time unit value: fortnight");

  // $dateAdd keeps the day of month, or the last day of a shorter month.
  EXPECT_EVAL(R"([{"$dateAdd": {"startDate": {"$toDate": "2020-10-31T12:10:05Z"}, "unit": "month", "amount": 1}},
                  {"$dateAdd": {"startDate": {"$toDate": "2020-02-29T00:00:00Z"}, "unit": "year", "amount": 1}},
                  {"$dateSubtract": {"startDate": {"$toDate": "2021-03-01T00:00:00Z"}, "unit": "day", "amount": 1}},
                  {"$dateAdd": {"startDate": {"$toDate": "2021-01-01T00:00:00Z"}, "unit": "hour", "amount": 25}}])",
              "{}",
              R"([{"$date": {"$numberLong": "1606738205000"}}, {"$date": {"$numberLong": "1614470400000"}}, )"
              R"({"$date": {"$numberLong": "1614470400000"}}, {"$date": {"$numberLong": "1609549200000"}}])");
  EXPECT_EVAL(R"({"$dateAdd": {"startDate": "$nope", "unit": "day", "amount": 1}})", "{}", "null");

  // $dateDiff counts the unit boundaries crossed.
  EXPECT_EVAL(R"([{"$dateDiff": {"startDate": {"$toDate": "2020-12-31T23:59:59Z"}, "endDate": {"$toDate": "2021-01-01T00:00:00Z"}, "unit": "year"}},
                  {"$dateDiff": {"startDate": {"$toDate": "2021-01-01"}, "endDate": {"$toDate": "2021-01-31"}, "unit": "week"}},
                  {"$dateDiff": {"startDate": {"$toDate": "2021-01-01"}, "endDate": {"$toDate": "2021-01-31"}, "unit": "week", "startOfWeek": "mon"}},
                  {"$dateDiff": {"startDate": {"$toDate": "2021-01-01"}, "endDate": {"$toDate": "2021-01-31"}, "unit": "day"}},
                  {"$dateDiff": {"startDate": {"$toDate": "2021-01-01T00:00:00Z"}, "endDate": {"$toDate": "2021-01-01T05:30:00Z"}, "unit": "hour"}},
                  {"$dateDiff": {"startDate": {"$toDate": "2021-04-01"}, "endDate": {"$toDate": "2021-01-31"}, "unit": "quarter"}}])",
              "{}",
              R"([{"$numberLong": "1"}, {"$numberLong": "5"}, {"$numberLong": "4"}, {"$numberLong": "30"}, )"
              R"({"$numberLong": "5"}, {"$numberLong": "-1"}])");
}

TEST(ExpressionTest, ConversionOperators) {
  EXPECT_EVAL(R"([{"$convert": {"input": true, "to": "bool"}}, {"$convert": {"input": "5", "to": "int"}},
                  {"$convert": {"input": 5.7, "to": 16}}, {"$convert": {"input": "abc", "to": "int", "onError": "bad"}},
                  {"$convert": {"input": null, "to": "int", "onNull": 0}}, {"$convert": {"input": "$nope", "to": "int"}}])",
              "{}",
              R"([true, {"$numberInt": "5"}, {"$numberInt": "5"}, "bad", {"$numberInt": "0"}, null])");
  EXPECT_EVAL(R"({"$convert": {"input": {"$numberLong": "2147483648"}, "to": "int"}})", "{}",
              "241: Conversion would overflow target type in $convert with no onError value");
  EXPECT_EVAL(R"({"$toInt": "5.5"})", "{}",
              "241: Failed to parse number '5.5' in $convert with no onError value: Did not consume whole string.");
  EXPECT_EVAL(R"({"$convert": {"input": 1, "to": "bogus"}})", "{}", "2: Unknown type name: bogus");
  EXPECT_EVAL(R"({"$convert": {"input": 1, "to": "array"}})", "{}", "238: $convert to array is not supported by rockdoc yet");
  EXPECT_EVAL(R"({"$convert": {"input": 1}})", "{}", "40414: $convert requires 'to' to be specified");
  EXPECT_EVAL(R"([{"$toString": 2.5}, {"$toString": 1.0}, {"$toString": true},
                  {"$toString": {"$toObjectId": "5ab9cbfa31c2ab715d42129e"}},
                  {"$toString": {"$toDate": {"$numberLong": "0"}}}, {"$toString": {"$numberLong": "7"}}])",
              "{}", R"(["2.5", "1", "true", "5ab9cbfa31c2ab715d42129e", "1970-01-01T00:00:00.000Z", "7"])");
  EXPECT_EVAL(R"([{"$toDate": "2018-03-03"}, {"$toDate": {"$numberLong": "120000000000"}}, {"$toDate": 1.5e3}])", "{}",
              R"([{"$date": {"$numberLong": "1520035200000"}}, {"$date": {"$numberLong": "120000000000"}}, )"
              R"({"$date": {"$numberLong": "1500"}}])");
  EXPECT_EVAL(R"({"$toDate": 1})", "{}",
              "241: Unsupported conversion from int to date in $convert with no onError value");
  EXPECT_EVAL(R"([{"$toBool": 0}, {"$toBool": ""}, {"$toBool": 0.5}, {"$toBool": {"$toDate": "2018-03-03"}}])", "{}",
              R"([false, true, true, true])");
  EXPECT_EVAL(R"([{"$toDouble": "5.5"}, {"$toDouble": true}, {"$toLong": {"$toDate": "1970-01-01T00:00:01Z"}},
                  {"$toDecimal": "5"}, {"$toLong": -3.9}])", "{}",
              R"([{"$numberDouble": "5.5"}, {"$numberDouble": "1.0"}, {"$numberLong": "1000"}, )"
              R"({"$numberDecimal": "5"}, {"$numberLong": "-3"}])");
  EXPECT_EVAL(R"({"$toObjectId": "xyz"})", "{}",
              "241: Failed to parse objectId 'xyz' in $convert with no onError value: Invalid string length "
              "for parsing to OID, expected 24 but found 3");
  EXPECT_EVAL(R"([{"$isNumber": 1}, {"$isNumber": "1"}, {"$isNumber": "$nope"}, {"$isNumber": {"$numberDecimal": "1"}}])",
              "{}", R"([true, false, false, true])");
}

TEST(ExpressionTest, MathOperators) {
  EXPECT_EVAL(R"([{"$sqrt": 25}, {"$exp": 0}, {"$ln": 1}, {"$log": [100, 10]}, {"$log10": 1000}, {"$sqrt": null}])", "{}",
              R"([{"$numberDouble": "5.0"}, {"$numberDouble": "1.0"}, {"$numberDouble": "0.0"}, )"
              R"({"$numberDouble": "2.0"}, {"$numberDouble": "3.0"}, null])");
  EXPECT_EVAL(R"({"$sqrt": -1})", "{}", "28714: $sqrt's argument must be greater than or equal to 0");
  EXPECT_EVAL(R"({"$ln": 0})", "{}", "28766: $ln's argument must be a positive number, but is 0");
  EXPECT_EVAL(R"({"$log": [8, 1]})", "{}", "28759: $log's base must be a positive number not equal to 1, but is 1");
  // $pow keeps integers while they fit: int32, then int64, then double.
  EXPECT_EVAL(R"([{"$pow": [5, 0]}, {"$pow": [2, 10]}, {"$pow": [2, 31]}, {"$pow": [2, 64]}, {"$pow": [2, -1]},
                  {"$pow": [-1, -3]}, {"$pow": [{"$numberLong": "3"}, 2]}, {"$pow": [1.5, 2]}])", "{}",
              R"([{"$numberInt": "1"}, {"$numberInt": "1024"}, {"$numberLong": "2147483648"}, )"
              R"({"$numberDouble": "1.8446744073709552e+19"}, {"$numberDouble": "0.5"}, {"$numberInt": "-1"}, )"
              R"({"$numberLong": "9"}, {"$numberDouble": "2.25"}])");
  EXPECT_EVAL(R"({"$pow": [0, -1]})", "{}", "28764: $pow cannot take a base of 0 and a negative exponent");
  // $round: halves go to the even neighbour; $trunc cuts toward zero.
  EXPECT_EVAL(R"([{"$round": [19.25, 1]}, {"$round": [28.73, 1]}, {"$round": [34.32]}, {"$round": [-45.39, -1]},
                  {"$round": [1234, -2]}, {"$round": [1250, -2]}, {"$round": [1350, -2]}, {"$round": [7, 2]}])", "{}",
              R"([{"$numberDouble": "19.2"}, {"$numberDouble": "28.7"}, {"$numberDouble": "34.0"}, )"
              R"({"$numberDouble": "-50.0"}, {"$numberInt": "1200"}, {"$numberInt": "1200"}, {"$numberInt": "1400"}, )"
              R"({"$numberInt": "7"}])");
  EXPECT_EVAL(R"([{"$trunc": [19.25, 1]}, {"$trunc": [-45.39, -1]}, {"$trunc": [-5.9]}, {"$trunc": [1299, -2]}])", "{}",
              R"([{"$numberDouble": "19.2"}, {"$numberDouble": "-40.0"}, {"$numberDouble": "-5.0"}, {"$numberInt": "1200"}])");
  EXPECT_EVAL(R"({"$round": [1.5, 100]})", "{}", R"(51083: $round requires "place" to be in [-20, 100), but got 100)");
  EXPECT_EVAL(R"([{"$sin": 0}, {"$degreesToRadians": 180}, {"$radiansToDegrees": 0}, {"$atan2": [1, 1]}])", "{}",
              R"([{"$numberDouble": "0.0"}, {"$numberDouble": "3.141592653589793"}, {"$numberDouble": "0.0"}, )"
              R"({"$numberDouble": "0.7853981633974483"}])");
  EXPECT_EVAL(R"({"$acos": 2})", "{}", "50989: cannot apply $acos to 2, value must be in [-1,1]");
  EXPECT_EVAL(R"({"$sqrt": "x"})", "{}", "28765: $sqrt only supports numeric types, not string");
}

// Decimal128 (Intel's library, bson/decimal_arithmetic.h). Any decimal
// operand makes the answer a decimal; a double operand is first rounded to
// 15 digits, as MongoDB's coerceToDecimal. The expected values were computed
// with Python's decimal module in IEEE decimal128's context (34 digits,
// Emax 6144, Emin -6143, clamp, half-even), except where MongoDB's manual
// shows the result, and the randomized cross-check in
// tests/wire/pymongo_test.py compares many more against the same module.
#define DEC(s) R"({"$numberDecimal": ")" s R"("})"

TEST(ExpressionTest, DecimalArithmetic) {
  EXPECT_EVAL(R"({"$add": [{"$numberDecimal": "1.0"}, {"$numberDecimal": "1.00"}]})", "{}", DEC("2.00"));
  // A sum keeps its doubles apart, compensated, and adds them to 34 digits at
  // the end (MongoDB's $add and $sum); a product converts a double to 15.
  EXPECT_EVAL(R"({"$add": [{"$numberDecimal": "1"}, 0.1]})", "{}", DEC("1.100000000000000005551115123125783"));
  EXPECT_EVAL(R"({"$add": [0.1, {"$numberDecimal": "1"}, 0.2]})", "{}", DEC("1.300000000000000016653345369377348"));
  EXPECT_EVAL(R"({"$sum": [0.1, 0.2, 0.3]})", "{}", R"({"$numberDouble": "0.6"})");
  EXPECT_EVAL(R"({"$multiply": [0.1, {"$numberDecimal": "3"}]})", "{}", DEC("0.300000000000000"));
  EXPECT_EVAL(R"({"$add": [{"$date": "2020-01-01T00:00:00Z"}, {"$numberDecimal": "0.5"}, {"$numberDecimal": "1.5"}]})",
              "{}", R"({"$date": {"$numberLong": "1577836800002"}})");
  EXPECT_EVAL(R"({"$add": [{"$numberDecimal": "9999999999999999999999999999999999"}, 1]})", "{}",
              DEC("1.000000000000000000000000000000000E+34"));
  // The 35th digit rounds half to even.
  EXPECT_EVAL(R"({"$add": [{"$numberDecimal": "1000000000000000000000000000000000"}, {"$numberDecimal": "0.5"}]})",
              "{}", DEC("1000000000000000000000000000000000"));
  EXPECT_EVAL(R"({"$add": [{"$numberDecimal": "1000000000000000000000000000000001"}, {"$numberDecimal": "0.5"}]})",
              "{}", DEC("1000000000000000000000000000000002"));
  EXPECT_EVAL(R"({"$add": [{"$numberDecimal": "Infinity"}, {"$numberDecimal": "-Infinity"}]})", "{}", DEC("NaN"));
  EXPECT_EVAL(R"({"$add": [{"$numberDecimal": "NaN"}, 1]})", "{}", DEC("NaN"));
  EXPECT_EVAL(R"({"$subtract": [{"$numberDecimal": "1.00"}, {"$numberDecimal": "0.1"}]})", "{}", DEC("0.90"));
  EXPECT_EVAL(R"({"$subtract": [1, {"$numberDecimal": "Infinity"}]})", "{}", DEC("-Infinity"));
  // A date minus a decimal: a whole number of milliseconds, or MongoDB's overflow.
  EXPECT_EVAL(R"({"$subtract": [{"$date": "2020-01-01T00:00:00Z"}, {"$numberDecimal": "1.000E+3"}]})", "{}",
              R"({"$date": {"$numberLong": "1577836799000"}})");
  EXPECT_EVAL(R"({"$subtract": [{"$date": "2020-01-01T00:00:00Z"}, {"$numberDecimal": "0.5"}]})", "{}",
              "15: date overflow");
  EXPECT_EVAL(R"({"$subtract": [{"$date": "2020-01-01T00:00:00Z"}, {"$numberDecimal": "NaN"}]})", "{}",
              "15: date overflow");
  EXPECT_EVAL(R"({"$multiply": [{"$numberDecimal": "1.5"}, 2]})", "{}", DEC("3.0"));
  EXPECT_EVAL(R"({"$multiply": [{"$numberDecimal": "0"}, {"$numberDecimal": "Infinity"}]})", "{}", DEC("NaN"));
  // The largest exponent: 1E+6144 is stored clamped (34 digits at E+6111);
  // ten times it overflows to Infinity; below the smallest, 0E-6176.
  EXPECT_EVAL(R"({"$multiply": [{"$numberDecimal": "1E+6143"}, 10]})", "{}",
              DEC("1.000000000000000000000000000000000E+6144"));
  EXPECT_EVAL(R"({"$multiply": [{"$numberDecimal": "1E+6144"}, 10]})", "{}", DEC("Infinity"));
  EXPECT_EVAL(R"({"$divide": [{"$numberDecimal": "1E-6176"}, 10]})", "{}", DEC("0E-6176"));
  EXPECT_EVAL(R"({"$divide": [{"$numberDecimal": "1"}, 3]})", "{}", DEC("0.3333333333333333333333333333333333"));
  EXPECT_EVAL(R"({"$divide": [2, {"$numberDecimal": "3"}]})", "{}", DEC("0.6666666666666666666666666666666667"));
  EXPECT_EVAL(R"({"$divide": [{"$numberDecimal": "-1"}, 7]})", "{}", DEC("-0.1428571428571428571428571428571429"));
  EXPECT_EVAL(R"({"$divide": [{"$numberDecimal": "10"}, 4]})", "{}", DEC("2.5"));
  EXPECT_EVAL(R"({"$divide": [1, {"$numberDecimal": "1E-400"}]})", "{}", DEC("1E+400"));
  EXPECT_EVAL(R"({"$divide": [{"$numberDecimal": "Infinity"}, {"$numberDecimal": "-Infinity"}]})", "{}", DEC("NaN"));
  EXPECT_EVAL(R"({"$divide": [1, {"$numberDecimal": "0.00"}]})", "{}", "16608: can't $divide by zero");
  EXPECT_EVAL(R"({"$divide": [{"$numberDecimal": "NaN"}, {"$numberDecimal": "-0"}]})", "{}",
              "16608: can't $divide by zero");
  EXPECT_EVAL(R"({"$mod": [{"$numberDecimal": "7.5"}, 2]})", "{}", DEC("1.5"));
  EXPECT_EVAL(R"({"$mod": [{"$numberDecimal": "-7.5"}, 2]})", "{}", DEC("-1.5"));
  EXPECT_EVAL(R"({"$mod": [5, {"$numberDecimal": "0"}]})", "{}", "16610: can't $mod by zero");
  EXPECT_EVAL(R"([{"$abs": {"$numberDecimal": "-2.50"}}, {"$ceil": {"$numberDecimal": "1.1"}},
                  {"$floor": {"$numberDecimal": "-1.1"}}, {"$ceil": {"$numberDecimal": "1E+1"}},
                  {"$abs": {"$numberDecimal": "-NaN"}}])", "{}",
              "[" DEC("2.50") ", " DEC("2") ", " DEC("-2") ", " DEC("10") ", " DEC("NaN") "]");
  // MongoDB's $ceil and $floor quantize to exponent 0: beyond 34 digits, and
  // for an infinity, that is NaN.
  EXPECT_EVAL(R"([{"$ceil": {"$numberDecimal": "1E+40"}}, {"$floor": {"$numberDecimal": "-Infinity"}}])", "{}",
              "[" DEC("NaN") ", " DEC("NaN") "]");
}

TEST(ExpressionTest, DecimalMath) {
  EXPECT_EVAL(R"([{"$sqrt": {"$numberDecimal": "2"}}, {"$sqrt": {"$numberDecimal": "0.25"}},
                  {"$exp": {"$numberDecimal": "1"}}, {"$ln": {"$numberDecimal": "10"}},
                  {"$log10": {"$numberDecimal": "2"}}, {"$pow": [{"$numberDecimal": "1.1"}, 2]},
                  {"$pow": [2, {"$numberDecimal": "10"}]}])", "{}",
              "[" DEC("1.414213562373095048801688724209698") ", " DEC("0.5") ", "
              DEC("2.718281828459045235360287471352662") ", " DEC("2.302585092994045684017991454684364") ", "
              DEC("0.3010299956639811952137388947244930") ", " DEC("1.21") ", " DEC("1024") "]");
  EXPECT_EVAL(R"({"$log": [{"$numberDecimal": "8"}, 2]})", "{}", DEC("3.000000000000000000000000000000000"));
  // A decimal NaN is outside $ln's and $log's decimal domain, so MongoDB
  // answers through the double: a double NaN ($sqrt keeps the decimal).
  EXPECT_EVAL(R"([{"$log": [{"$numberDecimal": "NaN"}, 2]}, {"$ln": {"$numberDecimal": "NaN"}}])", "{}",
              R"([{"$numberDouble": "NaN"}, {"$numberDouble": "NaN"}])");
  EXPECT_EVAL(R"({"$sqrt": {"$numberDecimal": "-1E-400"}})", "{}",
              "28714: $sqrt's argument must be greater than or equal to 0");
  EXPECT_EVAL(R"({"$sqrt": {"$numberDecimal": "NaN"}})", "{}", DEC("NaN"));
  EXPECT_EVAL(R"({"$ln": {"$numberDecimal": "-0"}})", "{}",
              R"(28766: $ln's argument must be a positive number, but is -0)");
  EXPECT_EVAL(R"({"$log10": {"$numberDecimal": "-1"}})", "{}",
              R"(28761: $log10's argument must be a positive number, but is -1)");
  EXPECT_EVAL(R"({"$log": [{"$numberDecimal": "0"}, 10]})", "{}",
              R"(28758: $log's argument must be a positive number, but is 0)");
  EXPECT_EVAL(R"({"$log": [10, {"$numberDecimal": "1.0"}]})", "{}",
              R"(28759: $log's base must be a positive number not equal to 1, but is 1)");
  EXPECT_EVAL(R"({"$pow": [{"$numberDecimal": "0.0"}, -1]})", "{}",
              "28764: $pow cannot take a base of 0 and a negative exponent");
  // The exponent's sign bit decides, -0 included; a base too small for a
  // double is not zero.
  EXPECT_EVAL(R"({"$pow": [{"$numberDecimal": "0"}, {"$numberDecimal": "-0"}]})", "{}",
              "28764: $pow cannot take a base of 0 and a negative exponent");
  EXPECT_EVAL(R"({"$pow": [{"$numberDecimal": "1E-400"}, -1]})", "{}", DEC("1E+400"));
  // $round and $trunc quantize to the place (adding zeros too), half to even.
  EXPECT_EVAL(R"([{"$round": [{"$numberDecimal": "19.25"}, 1]}, {"$round": [{"$numberDecimal": "2.345"}, 2]},
                  {"$round": [{"$numberDecimal": "1250"}, -2]}, {"$round": [{"$numberDecimal": "1350"}, -2]},
                  {"$round": [{"$numberDecimal": "1.5"}]}, {"$round": [{"$numberDecimal": "1.2"}, 5]},
                  {"$trunc": [{"$numberDecimal": "-2.349"}, 2]}, {"$trunc": [{"$numberDecimal": "1299"}, -2]},
                  {"$round": [{"$numberDecimal": "Infinity"}, 2]}])", "{}",
              "[" DEC("19.2") ", " DEC("2.34") ", " DEC("1.2E+3") ", " DEC("1.4E+3") ", " DEC("2") ", "
              DEC("1.20000") ", " DEC("-2.34") ", " DEC("1.2E+3") ", " DEC("Infinity") "]");
  EXPECT_EVAL(R"([{"$sin": {"$numberDecimal": "0"}}, {"$cos": {"$numberDecimal": "0"}},
                  {"$degreesToRadians": {"$numberDecimal": "180"}}, {"$radiansToDegrees": {"$numberDecimal": "1"}},
                  {"$atan2": [{"$numberDecimal": "1"}, 1]}, {"$acosh": {"$numberDecimal": "1"}}])", "{}",
              "[" DEC("0") ", " DEC("1.000000000000000000000000000000000") ", "
              DEC("3.141592653589793238462643383279503") ", "
              DEC("57.29577951308232087679815481410517") ", " DEC("0.7853981633974483096156608458198757") ", "
              DEC("0") "]");
  EXPECT_EVAL(R"({"$asin": {"$numberDecimal": "1.0000000000000000000000001"}})", "{}",
              R"(50989: cannot apply $asin to Decimal128('1.0000000000000000000000001'), value must be in [-1,1])");
  EXPECT_EVAL(R"({"$tan": {"$numberDecimal": "-Infinity"}})", "{}",
              R"(50989: cannot apply $tan to Decimal128('-Infinity'), value must be in (-inf,inf))");
}

TEST(ExpressionTest, DecimalConversions) {
  // The manual's $toDecimal table.
  EXPECT_EVAL(R"([{"$toDecimal": true}, {"$toDecimal": false}, {"$toDecimal": 2.5}, {"$toDecimal": {"$numberInt": "5"}},
                  {"$toDecimal": {"$numberLong": "10000"}}, {"$toDecimal": "-5.5"},
                  {"$toDecimal": {"$date": "2018-03-27T05:04:47.890Z"}}])", "{}",
              "[" DEC("1") ", " DEC("0") ", " DEC("2.50000000000000") ", " DEC("5") ", " DEC("10000") ", "
              DEC("-5.5") ", " DEC("1522127087890") "]");
  // A double keeps 15 significant digits; a long string rounds to 34.
  EXPECT_EVAL(R"([{"$toDecimal": 0.1}, {"$toDecimal": 1e300}, {"$toDecimal": -0.0},
                  {"$toDecimal": "1.00000000000000000000000000000000001"}])", "{}",
              "[" DEC("0.100000000000000") ", " DEC("1.00000000000000E+300") ", " DEC("-0") ", "
              DEC("1.000000000000000000000000000000000") "]");
  EXPECT_EVAL(R"({"$toDecimal": "0x6400"})", "{}",
              "241: Failed to parse number '0x6400' in $convert with no onError value: Failed to parse string to "
              "decimal");
  // The manual's decimal to int, long, double and bool: truncated toward zero.
  EXPECT_EVAL(R"([{"$toInt": {"$numberDecimal": "5.5000"}}, {"$toLong": {"$numberDecimal": "-5.5"}},
                  {"$toDouble": {"$numberDecimal": "-5.5"}}, {"$toBool": {"$numberDecimal": "0"}},
                  {"$toDouble": {"$numberDecimal": "1E-300"}}, {"$toDate": {"$numberDecimal": "1.9"}},
                  {"$toString": {"$numberDecimal": "1.50"}}])", "{}",
              R"([{"$numberInt": "5"}, {"$numberLong": "-5"}, {"$numberDouble": "-5.5"}, false, )"
              R"({"$numberDouble": "1e-300"}, {"$date": {"$numberLong": "1"}}, "1.50"])");
  EXPECT_EVAL(R"({"$toInt": {"$numberDecimal": "2147483648"}})", "{}",
              "241: Conversion would overflow target type in $convert with no onError value");
  EXPECT_EVAL(R"({"$toLong": {"$numberDecimal": "9223372036854775808"}})", "{}",
              "241: Conversion would overflow target type in $convert with no onError value");
  EXPECT_EVAL(R"({"$toLong": {"$numberDecimal": "-9223372036854775808.9"}})", "{}",
              R"({"$numberLong": "-9223372036854775808"})");
  // Beyond double's range, either way (MongoDB's overflow and underflow flags).
  EXPECT_EVAL(R"({"$toDouble": {"$numberDecimal": "1E+400"}})", "{}",
              "241: Conversion would overflow target type in $convert with no onError value: 1E+400");
  EXPECT_EVAL(R"({"$toDouble": {"$numberDecimal": "-1.5E-400"}})", "{}",
              "241: Conversion would overflow target type in $convert with no onError value: -1.5E-400");
  EXPECT_EVAL(R"({"$toInt": {"$numberDecimal": "NaN"}})", "{}",
              "241: Attempt to convert NaN value to integer type in $convert with no onError value");
  EXPECT_EVAL(R"({"$toLong": {"$numberDecimal": "-Infinity"}})", "{}",
              "241: Attempt to convert infinity value to integer type in $convert with no onError value");
}

TEST(ExpressionTest, DecimalSumAndAverage) {
  EXPECT_EVAL(R"([{"$sum": [1, {"$numberDecimal": "2.5"}, {"$numberLong": "3"}]},
                  {"$avg": [{"$numberDecimal": "1"}, 2]}, {"$avg": [[{"$numberDecimal": "1"}, 1, 1]]}])", "{}",
              "[" DEC("6.5") ", " DEC("1.5") ", " DEC("1") "]");
}

TEST(ExpressionTest, SetOperators) {
  const char* kDoc = R"({"A": ["a", "b", "a"], "B": ["b", "a"], "C": ["b", "c"]})";
  EXPECT_EVAL(R"([{"$setEquals": ["$A", "$B"]}, {"$setEquals": ["$A", "$C"]}, {"$setIsSubset": ["$B", "$A"]},
                  {"$setIsSubset": [["a", "b"], [["a", "b"]]]}])", kDoc, R"([true, false, true, false])");
  EXPECT_EVAL(R"([{"$setIntersection": ["$A", "$C"]}, {"$setUnion": ["$A", "$C"]}, {"$setDifference": ["$A", "$C"]},
                  {"$setUnion": []}, {"$setIntersection": ["$A", "$nope"]}])", kDoc,
              R"([["b"], ["a", "b", "c"], ["a"], [], null])");
  EXPECT_EVAL(R"({"$setUnion": ["$A", 1]})", kDoc,
              "17043: All operands of $setUnion must be arrays. One argument is of type: int");
  EXPECT_EVAL(R"({"$setEquals": ["$A"]})", kDoc,
              "16020: Expression $setEquals takes at least 2 arguments. 1 were passed in.");
  EXPECT_EVAL(R"([{"$anyElementTrue": [[true, false]]}, {"$anyElementTrue": [[]]}, {"$allElementsTrue": [[]]},
                  {"$allElementsTrue": [[true, [false]]]}, {"$allElementsTrue": [[null, false, 0]]}])", "{}",
              R"([true, false, true, true, false])");
  EXPECT_EVAL(R"({"$allElementsTrue": 1})", "{}", "17040: $allElementsTrue's argument must be an array, but is int");
}

TEST(ExpressionTest, MoreArrayAndObjectOperators) {
  EXPECT_EVAL(R"({"$zip": {"inputs": [["a", "b"], [1, 2, 3]]}})", "{}",
              R"([["a", {"$numberInt": "1"}], ["b", {"$numberInt": "2"}]])");
  EXPECT_EVAL(R"({"$zip": {"inputs": [["a", "b"], [1, 2, 3]], "useLongestLength": true, "defaults": ["x", 0]}})", "{}",
              R"([["a", {"$numberInt": "1"}], ["b", {"$numberInt": "2"}], ["x", {"$numberInt": "3"}]])");
  EXPECT_EVAL(R"({"$zip": {"inputs": [["a"], null]}})", "{}", "null");
  EXPECT_EVAL(R"({"$zip": {"inputs": [["a"]], "defaults": [1]}})", "{}",
              "34466: cannot specify defaults unless useLongestLength is true");
  EXPECT_EVAL(R"([{"$sortArray": {"input": [3, 1, 2], "sortBy": -1}},
                  {"$sortArray": {"input": [{"a": 2, "n": "x"}, {"a": 1, "n": "y"}], "sortBy": {"a": 1}}}])", "{}",
              R"([[{"$numberInt": "3"}, {"$numberInt": "2"}, {"$numberInt": "1"}], )"
              R"([{"a": {"$numberInt": "1"}, "n": "y"}, {"a": {"$numberInt": "2"}, "n": "x"}]])");
  EXPECT_EVAL(R"({"$sortArray": {"input": [1], "sortBy": 2}})", "{}",
              "2942505: $sortArray requires sortBy to be either 1, -1, or a document of the form {field: 1} found 2");
  EXPECT_EVAL(R"([{"$firstN": {"n": 2, "input": [1, 2, 3]}}, {"$lastN": {"n": 2, "input": [1, 2, 3]}},
                  {"$maxN": {"n": 2, "input": [3, null, 1, 5]}}, {"$minN": {"n": 5, "input": [3, null, 1, 5]}}])", "{}",
              R"([[{"$numberInt": "1"}, {"$numberInt": "2"}], [{"$numberInt": "2"}, {"$numberInt": "3"}], )"
              R"([{"$numberInt": "5"}, {"$numberInt": "3"}], [{"$numberInt": "1"}, {"$numberInt": "3"}, {"$numberInt": "5"}]])");
  EXPECT_EVAL(R"({"$firstN": {"n": 0, "input": [1]}})", "{}", "5787908: 'n' must be greater than 0, found 0");
  // The manual's $getField/$setField examples: fields whose names have dots or $.
  const char* kItem = R"({"price.usd": 45, "$price": 10, "qty": 3})";
  EXPECT_EVAL(R"([{"$getField": "price.usd"}, {"$getField": {"$literal": "$price"}},
                  {"$getField": {"field": "qty", "input": {"qty": 7}}}, {"$getField": "nope"}])", kItem,
              R"([{"$numberInt": "45"}, {"$numberInt": "10"}, {"$numberInt": "7"}, null])");
  EXPECT_EVAL(R"({"$setField": {"field": "price.usd", "input": "$$ROOT", "value": 50}})", kItem,
              R"({"price.usd": {"$numberInt": "50"}, "$price": {"$numberInt": "10"}, "qty": {"$numberInt": "3"}})");
  EXPECT_EVAL(R"([{"$unsetField": {"field": "qty", "input": {"qty": 1, "a": 2}}},
                  {"$setField": {"field": "a", "input": {"qty": 1, "a": 2}, "value": "$$REMOVE"}},
                  {"$setField": {"field": "z", "input": {"qty": 1}, "value": 0}}])", "{}",
              R"([{"a": {"$numberInt": "2"}}, {"qty": {"$numberInt": "1"}}, {"qty": {"$numberInt": "1"}, "z": {"$numberInt": "0"}}])");
  EXPECT_EVAL(R"({"$getField": {"field": 1}})", "{}",
              "3041704: $getField requires 'field' to evaluate to type String, but got int");
}

// The corpus size, printed when the run ends (ctest runs each test alone,
// so each prints its own share).
class CaseCount : public ::testing::Environment {
 public:
  void TearDown() override { std::printf("expression cases run: %d\n", cases); }
};
const auto* const kCaseCount = ::testing::AddGlobalTestEnvironment(new CaseCount);

}  // namespace
}  // namespace rockdoc::internal

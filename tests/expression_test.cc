// Aggregation expressions (query/expression/): the MongoDB manual's examples
// for each operator (the documents, the expression, the value the manual
// shows), MongoDB's numeric type rules, missing versus null, and MongoDB's
// error codes for malformed expressions.
#include <gtest/gtest.h>

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
  EXPECT_EVAL(R"({"$mod": [{"$numberDecimal": "1"}, 2]})", "{}", "238: $mod of a decimal is not supported by rockdoc yet");
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

TEST(ExpressionTest, DatePartsInUtc) {
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
              "238: $year with a timezone is not supported by rockdoc yet (UTC only)");
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
  EXPECT_EVAL(R"({"$dateToString": {}})", "{}", "238: the expression $dateToString is not supported by rockdoc yet");
  // Errors inside an operand surface when it is parsed, not evaluated.
  EXPECT_EVAL(R"({"$cond": [true, 1, {"$bogus": 1}]})", "{}", "168: Unrecognized expression '$bogus'");
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

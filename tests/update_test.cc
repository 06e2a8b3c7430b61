// Tests of the update language (src/query/update/): every operator in
// MongoDB's documented behaviour, from JSON literals: input document, update,
// and the expected output or the expected error code and message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bson/decimal_arithmetic.h"
#include "query/update/update_driver.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using ::testing::HasSubstr;
using test::Json;

std::vector<Document> Filters(const std::vector<std::string>& filters) {
  std::vector<Document> out;
  for (const std::string& f : filters) out.push_back(Json(f));
  return out;
}

StatusOr<UpdateDriver::Result> RunUpdate(std::string_view doc, std::string_view update,
                                   const UpdateContext& ctx = {},
                                   const std::vector<std::string>& filters = {}) {
  auto driver = UpdateDriver::Parse(Json(update), Filters(filters));
  if (!driver.ok()) return driver.status();
  return driver->Apply(Json(doc), ctx);
}

std::string Canonical(DocumentView doc) { return ToJson(doc, JsonFormat::kCanonical); }

// The update turns `doc` into exactly `expected` (types and field order
// included: documents are compared byte for byte).
void ExpectUpdate(std::string_view doc, std::string_view update, std::string_view expected,
                  const UpdateContext& ctx = {}, const std::vector<std::string>& filters = {}) {
  SCOPED_TRACE(std::string(update) + " on " + std::string(doc));
  auto result = RunUpdate(doc, update, ctx, filters);
  ASSERT_TRUE(result.ok()) << result.status();
  Document want = Json(expected);
  EXPECT_EQ(Canonical(result->doc), Canonical(want));
  EXPECT_EQ(result->doc.bytes(), want.bytes());
  EXPECT_EQ(result->modified, result->doc.bytes() != Json(doc).bytes());
}

// The update leaves `doc` unchanged and reports it as not modified.
void ExpectNoOp(std::string_view doc, std::string_view update, const UpdateContext& ctx = {},
                const std::vector<std::string>& filters = {}) {
  SCOPED_TRACE(std::string(update) + " on " + std::string(doc));
  auto result = RunUpdate(doc, update, ctx, filters);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->modified);
  EXPECT_TRUE(result->changed_paths.empty());
  EXPECT_EQ(result->doc.bytes(), Json(doc).bytes());
}

void ExpectError(std::string_view doc, std::string_view update, ErrorCode code,
                 std::string_view message, const UpdateContext& ctx = {},
                 const std::vector<std::string>& filters = {}) {
  SCOPED_TRACE(std::string(update) + " on " + std::string(doc));
  auto result = RunUpdate(doc, update, ctx, filters);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(std::string(message)));
}

// An error raised by Parse, before any document is seen.
void ExpectParseError(std::string_view update, ErrorCode code, std::string_view message,
                      const std::vector<std::string>& filters = {}) {
  SCOPED_TRACE(update);
  auto driver = UpdateDriver::Parse(Json(update), Filters(filters));
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), code) << driver.status();
  EXPECT_THAT(std::string(driver.status().message()), HasSubstr(std::string(message)));
}

// ------------------------------------------------------------------ $set

TEST(SetTest, ReplacesAndAddsFields) {
  ExpectUpdate(R"({"_id": 1, "a": 1, "b": "x"})", R"({"$set": {"a": 2, "c": true}})",
               R"({"_id": 1, "a": 2, "b": "x", "c": true})");
}

TEST(SetTest, CreatesIntermediateDocuments) {
  ExpectUpdate(R"({"_id": 1})", R"({"$set": {"a.b.c": 1}})", R"({"_id": 1, "a": {"b": {"c": 1}}})");
  ExpectUpdate(R"({"_id": 1, "a": {"x": 0}})", R"({"$set": {"a.b.c": 1}})",
               R"({"_id": 1, "a": {"x": 0, "b": {"c": 1}}})");
}

TEST(SetTest, NewFieldsAreCreatedInLexicographicOrder) {
  // MongoDB 5.0+: fields are processed in lexicographic order, numeric names
  // in numeric order.
  ExpectUpdate(R"({"_id": 1})", R"({"$set": {"b": 1, "a": 2}})", R"({"_id": 1, "a": 2, "b": 1})");
  ExpectUpdate(R"({"_id": 1, "m": {}})", R"({"$set": {"m.10": 1, "m.9": 2}})",
               R"({"_id": 1, "m": {"9": 2, "10": 1}})");
}

TEST(SetTest, IndexesIntoArraysAndPadsWithNulls) {
  ExpectUpdate(R"({"_id": 1, "a": [1, 2]})", R"({"$set": {"a.1": 5}})", R"({"_id": 1, "a": [1, 5]})");
  ExpectUpdate(R"({"_id": 1, "a": [1]})", R"({"$set": {"a.3": 1}})",
               R"({"_id": 1, "a": [1, null, null, 1]})");
  ExpectUpdate(R"({"_id": 1, "a": [{"b": 1}, {"b": 2}]})", R"({"$set": {"a.1.b": 3}})",
               R"({"_id": 1, "a": [{"b": 1}, {"b": 3}]})");
  ExpectUpdate(R"({"_id": 1, "a": []})", R"({"$set": {"a.1.b": 3}})",
               R"({"_id": 1, "a": [null, {"b": 3}]})");
}

// Issue 11 #15: update paths read array positions as MongoDB's
// parseUnsignedBase10Integer does: digits only, leading zeros allowed.
TEST(SetTest, ArrayPositionsMayHaveLeadingZeros) {
  ExpectUpdate(R"({"_id": 1, "a": [1, 2, 3]})", R"({"$set": {"a.01": 99}})",
               R"({"_id": 1, "a": [1, 99, 3]})");
  ExpectUpdate(R"({"_id": 1, "a": [1, 2, 3]})", R"({"$inc": {"a.000": 1}})",
               R"({"_id": 1, "a": [2, 2, 3]})");
  ExpectUpdate(R"({"_id": 1, "a": [1]})", R"({"$set": {"a.03": 7}})",
               R"({"_id": 1, "a": [1, null, null, 7]})");
  ExpectUpdate(R"({"_id": 1, "a": [1, 2]})", R"({"$unset": {"a.01": 1}})",
               R"({"_id": 1, "a": [1, null]})");
  ExpectUpdate(R"({"_id": 1, "a": [{"b": 1}, {"b": 2}]})", R"({"$set": {"a.01.b": 3}})",
               R"({"_id": 1, "a": [{"b": 1}, {"b": 3}]})");
  // In a document "01" is just a name.
  ExpectUpdate(R"({"_id": 1, "m": {}})", R"({"$set": {"m.01": 1}})",
               R"({"_id": 1, "m": {"01": 1}})");
  // Signs, exponents and spaces are not positions.
  for (const char* name : {"+1", "1e0", " 1", "1 ", "-1", "0x1"}) {
    ExpectError(R"({"_id": 1, "a": [1, 2, 3]})",
                R"({"$set": {"a.)" + std::string(name) + R"(": 99}})", ErrorCode::kPathNotViable,
                "Cannot create field '" + std::string(name) + "' in element {a: [ 1, 2, 3 ]}");
  }
}

TEST(SetTest, SameValueIsANoOp) {
  ExpectNoOp(R"({"_id": 1, "a": 1, "b": {"c": [1, 2]}})", R"({"$set": {"a": 1, "b.c": [1, 2]}})");
}

TEST(SetTest, SameNumberOfAnotherTypeIsAChange) {
  ExpectUpdate(R"({"_id": 1, "a": 1})", R"({"$set": {"a": {"$numberLong": "1"}}})",
               R"({"_id": 1, "a": {"$numberLong": "1"}})");
}

TEST(SetTest, CannotCreateFieldInsideAScalar) {
  ExpectError(R"({"_id": 1, "a": 1})", R"({"$set": {"a.b": 1}})", ErrorCode::kPathNotViable,
              "Cannot create field 'b' in element {a: 1}");
  ExpectError(R"({"_id": 1, "a": {"b": "s"}})", R"({"$set": {"a.b.c": 1}})",
              ErrorCode::kPathNotViable, "Cannot create field 'c' in element {b: \"s\"}");
}

TEST(SetTest, CannotCreateNamedFieldInsideAnArray) {
  ExpectError(R"({"_id": 1, "a": [{"b": 1}]})", R"({"$set": {"a.b": 2}})",
              ErrorCode::kPathNotViable, "Cannot create field 'b' in element {a: [ { b: 1 } ]}");
}

TEST(SetTest, DollarPrefixedNamesInValuesAreAllowed) {
  ExpectUpdate(R"({"_id": 1})", R"({"$set": {"a": {"$x": 1}, "b.$c": 2}})",
               R"({"_id": 1, "a": {"$x": 1}, "b": {"$c": 2}})");
}

TEST(SetTest, TopLevelDollarFieldOnlyOnUpsertInsert) {
  ExpectError(R"({"_id": 1})", R"({"$set": {"$hotel": 1}})", ErrorCode::kDollarPrefixedFieldName,
              "$hotel");
  UpdateContext insert;
  insert.is_upsert_insert = true;
  ExpectUpdate(R"({"_id": 1})", R"({"$set": {"$hotel": 1}})", R"({"_id": 1, "$hotel": 1})", insert);
}

// ------------------------------------------------------------------ $unset

TEST(UnsetTest, RemovesFields) {
  ExpectUpdate(R"({"_id": 1, "a": 1, "b": {"c": 1, "d": 2}})", R"({"$unset": {"a": "", "b.c": 1}})",
               R"({"_id": 1, "b": {"d": 2}})");
}

TEST(UnsetTest, MissingPathIsANoOp) {
  ExpectNoOp(R"({"_id": 1, "a": 1})", R"({"$unset": {"x": 1, "a.b": 1, "y.z": 1}})");
}

TEST(UnsetTest, ArrayElementBecomesNull) {
  ExpectUpdate(R"({"_id": 1, "a": [1, 2, 3]})", R"({"$unset": {"a.1": 1}})",
               R"({"_id": 1, "a": [1, null, 3]})");
}

// ------------------------------------------------------------------ $inc

TEST(IncTest, AddsAndCreates) {
  ExpectUpdate(R"({"_id": 1, "quantity": 10, "metrics": {"orders": 2}})",
               R"({"$inc": {"quantity": -2, "metrics.orders": 1, "new": 5}})",
               R"({"_id": 1, "quantity": 8, "metrics": {"orders": 3}, "new": 5})");
}

TEST(IncTest, Int32OverflowBecomesInt64) {
  ExpectUpdate(R"({"_id": 1, "a": 2147483647})", R"({"$inc": {"a": 1}})",
               R"({"_id": 1, "a": {"$numberLong": "2147483648"}})");
}

TEST(IncTest, Int64OverflowFails) {
  ExpectError(R"({"_id": 1, "a": {"$numberLong": "9223372036854775807"}})", R"({"$inc": {"a": 1}})",
              ErrorCode::kBadValue, "Failed to apply $inc operations to current value");
}

TEST(IncTest, TypePromotion) {
  ExpectUpdate(R"({"_id": 1, "a": 1})", R"({"$inc": {"a": 0.5}})", R"({"_id": 1, "a": 1.5})");
  ExpectUpdate(R"({"_id": 1, "a": 1})", R"({"$inc": {"a": {"$numberLong": "2"}}})",
               R"({"_id": 1, "a": {"$numberLong": "3"}})");
  ExpectUpdate(R"({"_id": 1, "a": 1})", R"({"$inc": {"a": {"$numberDecimal": "0.25"}}})",
               R"({"_id": 1, "a": {"$numberDecimal": "1.25"}})");
  ExpectUpdate(R"({"_id": 1, "a": {"$numberDecimal": "0.1"}})",
               R"({"$inc": {"a": {"$numberDecimal": "0.2"}}})",
               R"({"_id": 1, "a": {"$numberDecimal": "0.3"}})");
}

// With a decimal on either side the result is a decimal (Intel's library);
// a double side is first rounded to 15 digits, as MongoDB's Decimal128(double).
TEST(IncTest, DecimalWithADoubleAndAtTheLimits) {
  ExpectUpdate(R"({"_id": 1, "a": 0.2})", R"({"$inc": {"a": {"$numberDecimal": "0.1"}}})",
               R"({"_id": 1, "a": {"$numberDecimal": "0.300000000000000"}})");
  ExpectUpdate(R"({"_id": 1, "a": {"$numberDecimal": "9999999999999999999999999999999999"}})",
               R"({"$inc": {"a": 1}})",
               R"({"_id": 1, "a": {"$numberDecimal": "1.000000000000000000000000000000000E+34"}})");
  ExpectUpdate(R"({"_id": 1, "a": {"$numberDecimal": "Infinity"}})",
               R"({"$inc": {"a": {"$numberDecimal": "-Infinity"}}})",
               R"({"_id": 1, "a": {"$numberDecimal": "NaN"}})");
  ExpectUpdate(R"({"_id": 1, "a": {"$numberDecimal": "3"}})", R"({"$mul": {"a": 0.1}})",
               R"({"_id": 1, "a": {"$numberDecimal": "0.300000000000000"}})");
  ExpectUpdate(R"({"_id": 1, "a": {"$numberDecimal": "9E+6144"}})", R"({"$mul": {"a": 10}})",
               R"({"_id": 1, "a": {"$numberDecimal": "Infinity"}})");
  ExpectUpdate(R"({"_id": 1})", R"({"$mul": {"a": {"$numberDecimal": "2.5"}}})",
               R"({"_id": 1, "a": {"$numberDecimal": "0"}})");
}

TEST(IncTest, IncrementByZeroIsANoOp) {
  ExpectNoOp(R"({"_id": 1, "a": 5})", R"({"$inc": {"a": 0}})");
}

TEST(IncTest, NonNumericTargetFails) {
  ExpectError(R"({"_id": 1, "a": "x"})", R"({"$inc": {"a": 1}})", ErrorCode::kTypeMismatch,
              "Cannot apply $inc to a value of non-numeric type. {_id: 1} has the field 'a' of "
              "non-numeric type string");
  // The manual: $inc on a null field is an error.
  ExpectError(R"({"_id": 1, "a": null})", R"({"$inc": {"a": 1}})", ErrorCode::kTypeMismatch,
              "non-numeric type null");
}

TEST(IncTest, NonNumericArgumentFailsAtParse) {
  ExpectParseError(R"({"$inc": {"a": "1"}})", ErrorCode::kTypeMismatch,
                   "Cannot increment with non-numeric argument: {a: \"1\"}");
}

// ------------------------------------------------------------------ $mul

TEST(MulTest, MultipliesAndCreatesZeroOfTheOperandType) {
  ExpectUpdate(R"({"_id": 1, "price": 10, "q": 2})", R"({"$mul": {"price": 1.25, "q": 2}})",
               R"({"_id": 1, "price": 12.5, "q": 4})");
  ExpectUpdate(R"({"_id": 1})", R"({"$mul": {"a": {"$numberLong": "5"}, "b": 2.5}})",
               R"({"_id": 1, "a": {"$numberLong": "0"}, "b": 0.0})");
}

TEST(MulTest, Int32OverflowBecomesInt64) {
  ExpectUpdate(R"({"_id": 1, "a": 65536})", R"({"$mul": {"a": 65536}})",
               R"({"_id": 1, "a": {"$numberLong": "4294967296"}})");
}

TEST(MulTest, NonNumericArgumentFails) {
  ExpectParseError(R"({"$mul": {"a": true}})", ErrorCode::kTypeMismatch,
                   "Cannot multiply with non-numeric argument");
}

// ------------------------------------------------------------------ $min, $max

TEST(MinMaxTest, ReplaceOnlyWhenBeyond) {
  ExpectUpdate(R"({"_id": 1, "lo": 200, "hi": 800})", R"({"$min": {"lo": 150}, "$max": {"hi": 950}})",
               R"({"_id": 1, "lo": 150, "hi": 950})");
  ExpectNoOp(R"({"_id": 1, "lo": 200, "hi": 800})", R"({"$min": {"lo": 250}, "$max": {"hi": 700}})");
}

TEST(MinMaxTest, ComparesAcrossTypesAndCreates) {
  // null sorts below numbers; a string sorts above them.
  ExpectUpdate(R"({"_id": 1, "a": 5, "b": 5})", R"({"$min": {"a": null}, "$max": {"b": "s"}})",
               R"({"_id": 1, "a": null, "b": "s"})");
  ExpectUpdate(R"({"_id": 1})", R"({"$max": {"x": 3}})", R"({"_id": 1, "x": 3})");
  // Equal value of another numeric type: not below, so nothing changes.
  ExpectNoOp(R"({"_id": 1, "a": 1})", R"({"$min": {"a": 1.0}})");
}

// ------------------------------------------------------------------ $rename

TEST(RenameTest, MovesTheValue) {
  ExpectUpdate(R"({"_id": 1, "a": 1, "b": 2})", R"({"$rename": {"a": "c"}})",
               R"({"_id": 1, "b": 2, "c": 1})");
  ExpectUpdate(R"({"_id": 1, "a": {"x": 1}, "b": 2})", R"({"$rename": {"a.x": "n.y"}})",
               R"({"_id": 1, "a": {}, "b": 2, "n": {"y": 1}})");
}

TEST(RenameTest, OverwritesTheDestination) {
  ExpectUpdate(R"({"_id": 1, "a": 1, "b": 2})", R"({"$rename": {"a": "b"}})", R"({"_id": 1, "b": 1})");
}

TEST(RenameTest, MissingSourceIsANoOp) {
  ExpectNoOp(R"({"_id": 1, "b": 2})", R"({"$rename": {"a": "b"}})");
}

TEST(RenameTest, CannotTouchArrays) {
  ExpectError(R"({"_id": 1, "a": [{"b": 1}]})", R"({"$rename": {"a.0.b": "c"}})",
              ErrorCode::kBadValue, "The source field cannot be an array element");
  ExpectError(R"({"_id": 1, "a": 1, "b": [1]})", R"({"$rename": {"a": "b.0"}})",
              ErrorCode::kBadValue, "The destination field cannot be an array element");
}

TEST(RenameTest, ArgumentErrors) {
  ExpectParseError(R"({"$rename": {"a": 1}})", ErrorCode::kBadValue,
                   "The 'to' field for $rename must be a string: a: 1");
  ExpectParseError(R"({"$rename": {"a": "a"}})", ErrorCode::kBadValue, "must differ");
  ExpectParseError(R"({"$rename": {"a": "a.b"}})", ErrorCode::kBadValue,
                   "must not be on the same path");
  ExpectParseError(R"({"$rename": {"a.$": "b"}})", ErrorCode::kBadValue,
                   "The source field for $rename may not be dynamic: a.$");
  ExpectParseError(R"({"$rename": {"a": "b.$[]"}})", ErrorCode::kBadValue,
                   "The destination field for $rename may not be dynamic: b.$[]");
}

// Issue 11 #5: a BSON name is a C string, so a NUL in $rename's target would
// cut it short ("b\u0000" stored {"_id":1,"b":256,"":null}). It is refused
// at parse time, before any document is read or written.
TEST(RenameTest, TargetWithNulIsRefused) {
  for (const char* target : {R"(\u0000a)", R"(b\u0000c)", R"(b\u0000)"}) {
    ExpectParseError(R"({"$rename": {"a": ")" + std::string(target) + R"("}})",
                     ErrorCode::kBadValue,
                     "The 'to' field for $rename cannot contain an embedded null byte");
  }
  // A NUL inside a string value is data, not a name: $set stores it.
  ExpectUpdate(R"({"_id": 1})", R"({"$set": {"a": "b\u0000c"}})",
               R"({"_id": 1, "a": "b\u0000c"})");
}

TEST(RenameTest, TakesPartInConflicts) {
  ExpectParseError(R"({"$rename": {"a": "b"}, "$set": {"b": 1}})",
                   ErrorCode::kConflictingUpdateOperators,
                   "Updating the path 'b' would create a conflict at 'b'");
  ExpectParseError(R"({"$rename": {"a": "b"}, "$set": {"a.x": 1}})",
                   ErrorCode::kConflictingUpdateOperators,
                   "Updating the path 'a.x' would create a conflict at 'a'");
}

// ------------------------------------------------------------------ $bit

// Issue 11 #21: $bit existed only as "Unknown modifier". The manual's
// examples first.
TEST(BitTest, ManualExamples) {
  ExpectUpdate(R"({"_id": 1, "expdata": 13})", R"({"$bit": {"expdata": {"and": 10}}})",
               R"({"_id": 1, "expdata": 8})");
  ExpectUpdate(R"({"_id": 2, "expdata": {"$numberLong": "3"}})",
               R"({"$bit": {"expdata": {"or": 5}}})",
               R"({"_id": 2, "expdata": {"$numberLong": "7"}})");
  ExpectUpdate(R"({"_id": 3, "expdata": {"$numberLong": "1"}})",
               R"({"$bit": {"expdata": {"xor": 5}}})",
               R"({"_id": 3, "expdata": {"$numberLong": "4"}})");
}

TEST(BitTest, TypesOrderAndMissingFields) {
  // int32 with an int64 operand becomes int64, sign-extended.
  ExpectUpdate(R"({"_id": 1, "a": -1})", R"({"$bit": {"a": {"and": {"$numberLong": "4294967296"}}}})",
               R"({"_id": 1, "a": {"$numberLong": "4294967296"}})");
  // Steps apply in the order written; a missing field starts as int32 0.
  ExpectUpdate(R"({"_id": 1, "a": 12})", R"({"$bit": {"a": {"and": 0, "or": 5}}})",
               R"({"_id": 1, "a": 5})");
  ExpectUpdate(R"({"_id": 1})", R"({"$bit": {"n.m": {"or": 6}}})", R"({"_id": 1, "n": {"m": 6}})");
  ExpectUpdate(R"({"_id": 1, "a": [1, 2]})", R"({"$bit": {"a.1": {"xor": 3}}})",
               R"({"_id": 1, "a": [1, 1]})");
  ExpectNoOp(R"({"_id": 1, "a": 5})", R"({"$bit": {"a": {"and": -1}}})");
  ExpectError(R"({"_id": 1, "a": 1.0})", R"({"$bit": {"a": {"or": 1}}})", ErrorCode::kBadValue,
              "Cannot apply $bit to a value of non-integral type.{_id: 1} has the field a of "
              "non-integer type double");
  ExpectError(R"({"_id": 1, "a": "x"})", R"({"$bit": {"a": {"or": 1}}})", ErrorCode::kBadValue,
              "non-integer type string");
}

TEST(BitTest, ArgumentErrors) {
  ExpectParseError(R"({"$bit": {"a": 5}})", ErrorCode::kBadValue,
                   "The $bit modifier is not compatible with a int. You must pass in an embedded "
                   "document: {$bit: {field: {and/or/xor: #}}");
  ExpectParseError(R"({"$bit": {"a": {"not": 1}}})", ErrorCode::kBadValue,
                   "The $bit modifier only supports 'and', 'or', and 'xor', not 'not'");
  ExpectParseError(R"({"$bit": {"a": {"and": 1.0}}})", ErrorCode::kBadValue,
                   "The $bit modifier field must be an Integer(32/64 bit); a 'double' is not "
                   "supported here");
  ExpectParseError(R"({"$bit": {"a": {}}})", ErrorCode::kBadValue,
                   "You must pass in at least one bitwise operation");
  ExpectParseError(R"({"$bit": {"a": {"or": 1}}, "$set": {"a": 2}})",
                   ErrorCode::kConflictingUpdateOperators, "conflict at 'a'");
}

// ------------------------------------------------------------------ $currentDate

TEST(CurrentDateTest, DateAndTimestamp) {
  UpdateContext ctx;
  ctx.now_millis = 1700000000123;
  ExpectUpdate(R"({"_id": 1})",
               R"({"$currentDate": {"d": true, "t": {"$type": "timestamp"}, "e": {"$type": "date"}}})",
               R"({"_id": 1, "d": {"$date": {"$numberLong": "1700000000123"}},
                   "e": {"$date": {"$numberLong": "1700000000123"}},
                   "t": {"$timestamp": {"t": 1700000000, "i": 1}}})",
               ctx);
}

TEST(CurrentDateTest, InvalidArgument) {
  ExpectParseError(R"({"$currentDate": {"d": {"$type": "string"}}})", ErrorCode::kBadValue,
                   "The '$type' string field is required to be 'date' or 'timestamp'");
  ExpectParseError(R"({"$currentDate": {"d": 1}})", ErrorCode::kBadValue, "$currentDate");
}

// ------------------------------------------------------------------ $setOnInsert

TEST(SetOnInsertTest, OnlyWhenAnUpsertInserts) {
  ExpectNoOp(R"({"_id": 1, "a": 1})", R"({"$setOnInsert": {"a": 2, "b": 3}})");
  UpdateContext insert;
  insert.is_upsert_insert = true;
  ExpectUpdate(R"({"_id": 1})", R"({"$setOnInsert": {"b": 3}, "$set": {"a": 1}})",
               R"({"_id": 1, "a": 1, "b": 3})", insert);
  ExpectParseError(R"({"$setOnInsert": {"a": 2}, "$set": {"a": 1}})",
                   ErrorCode::kConflictingUpdateOperators, "conflict at 'a'");
}

// ------------------------------------------------------------------ $push

TEST(PushTest, AppendsAndCreates) {
  ExpectUpdate(R"({"_id": 1, "s": [89, 92]})", R"({"$push": {"s": 85}})",
               R"({"_id": 1, "s": [89, 92, 85]})");
  ExpectUpdate(R"({"_id": 1})", R"({"$push": {"s": [1]}})", R"({"_id": 1, "s": [[1]]})");
}

TEST(PushTest, NonArrayFails) {
  ExpectError(R"({"_id": 1, "x": 1})", R"({"$push": {"x": 2}})", ErrorCode::kBadValue,
              "The field 'x' must be an array but is of type int in document {_id: 1}");
}

TEST(PushTest, EachAndPosition) {
  ExpectUpdate(R"({"_id": 1, "s": [100]})", R"({"$push": {"s": {"$each": [50, 60, 70], "$position": 0}}})",
               R"({"_id": 1, "s": [50, 60, 70, 100]})");
  ExpectUpdate(R"({"_id": 1, "s": [100, 20, 50]})", R"({"$push": {"s": {"$each": [90], "$position": -2}}})",
               R"({"_id": 1, "s": [100, 90, 20, 50]})");
  ExpectUpdate(R"({"_id": 1, "s": [1]})", R"({"$push": {"s": {"$each": [2], "$position": 99}}})",
               R"({"_id": 1, "s": [1, 2]})");
}

TEST(PushTest, Slice) {
  ExpectUpdate(R"({"_id": 1, "s": [40, 50, 60]})", R"({"$push": {"s": {"$each": [80, 78, 86], "$slice": -5}}})",
               R"({"_id": 1, "s": [50, 60, 80, 78, 86]})");
  ExpectUpdate(R"({"_id": 1, "s": [89, 90]})", R"({"$push": {"s": {"$each": [100, 20], "$slice": 3}}})",
               R"({"_id": 1, "s": [89, 90, 100]})");
  ExpectUpdate(R"({"_id": 1, "s": [89, 90]})", R"({"$push": {"s": {"$each": [], "$slice": 0}}})",
               R"({"_id": 1, "s": []})");
}

TEST(PushTest, SortWholeElementsAndEmbeddedFields) {
  ExpectUpdate(R"({"_id": 1, "t": [89, 70, 89, 50]})", R"({"$push": {"t": {"$each": [40, 60], "$sort": 1}}})",
               R"({"_id": 1, "t": [40, 50, 60, 70, 89, 89]})");
  ExpectUpdate(R"({"_id": 1, "t": [89, 70]})", R"({"$push": {"t": {"$each": [100], "$sort": -1}}})",
               R"({"_id": 1, "t": [100, 89, 70]})");
  ExpectUpdate(
      R"({"_id": 5, "quizzes": [{"wk": 1, "score": 10}, {"wk": 2, "score": 8}, {"wk": 3, "score": 5}, {"wk": 4, "score": 6}]})",
      R"({"$push": {"quizzes": {"$each": [{"wk": 5, "score": 8}, {"wk": 6, "score": 7}, {"wk": 7, "score": 6}],
                                "$sort": {"score": -1}, "$slice": 3}}})",
      R"({"_id": 5, "quizzes": [{"wk": 1, "score": 10}, {"wk": 2, "score": 8}, {"wk": 5, "score": 8}]})");
}

TEST(PushTest, SortAlreadySortedEmptyEachIsANoOp) {
  ExpectNoOp(R"({"_id": 1, "t": [1, 2, 3]})", R"({"$push": {"t": {"$each": [], "$sort": 1}}})");
}

TEST(PushTest, InsertThenSliceBackToTheSameArrayCountsAsModified) {
  // Issue #34.4: MongoDB counts an update that pushed elements as modified
  // (nModified: 1) even when $slice, or $sort then $slice, drops them again.
  for (const char* update : {R"({"$push": {"t": {"$each": [9], "$slice": 3}}})",
                             R"({"$push": {"t": {"$each": [0], "$sort": -1, "$slice": 3}}})",
                             R"({"$push": {"t": {"$each": [4], "$sort": -1, "$slice": -3}}})"}) {
    SCOPED_TRACE(update);
    auto result = RunUpdate(R"({"_id": 1, "t": [3, 2, 1]})", update);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(Canonical(result->doc), Canonical(Json(R"({"_id": 1, "t": [3, 2, 1]})")));
    EXPECT_TRUE(result->modified);
  }
  // Nothing pushed, nothing changed: still not a modification.
  ExpectNoOp(R"({"_id": 1, "t": [1, 2, 3]})", R"({"$push": {"t": {"$each": [], "$slice": 5}}})");
}

TEST(PushTest, ArgumentErrors) {
  ExpectParseError(R"({"$push": {"a": {"$each": 1}}})", ErrorCode::kBadValue,
                   "The argument to $each in $push must be an array but it was of type: int");
  ExpectParseError(R"({"$push": {"a": {"$each": [1], "$foo": 1}}})", ErrorCode::kBadValue,
                   "Unrecognized clause in $push: $foo");
  ExpectParseError(R"({"$push": {"a": {"$each": [1], "$slice": "x"}}})", ErrorCode::kBadValue,
                   "The value for $slice must be an integer value but was given type: string");
  ExpectParseError(R"({"$push": {"a": {"$each": [1], "$slice": 1.5}}})", ErrorCode::kBadValue,
                   "$slice");
  ExpectParseError(R"({"$push": {"a": {"$each": [1], "$sort": 2}}})", ErrorCode::kBadValue,
                   "The $sort element value must be either 1 or -1");
  ExpectParseError(R"({"$push": {"a": {"$each": [1], "$sort": {}}}})", ErrorCode::kBadValue,
                   "The $sort pattern is empty");
  ExpectParseError(R"({"$push": {"a": {"$each": [1], "$sort": "x"}}})", ErrorCode::kBadValue,
                   "The $sort is invalid");
  ExpectParseError(R"({"$push": {"a": {"$each": [1], "$position": "x"}}})", ErrorCode::kBadValue,
                   "The value for $position must be an integer value");
}

TEST(PushTest, LargeArrayWithEachSortAndNegativeSlice) {
  // 1,000 elements in descending order; push 1,000 more, sort ascending,
  // keep the last 1,000: the upper half of 0..1999.
  BsonBuilder doc;
  doc.AppendInt32("_id", 1).OpenArray("a");
  for (int i = 999; i >= 0; --i) doc.AppendInt32("", i * 2);
  doc.Close();
  BsonBuilder update;
  update.OpenDocument("$push").OpenDocument("a").OpenArray("$each");
  for (int i = 0; i < 1000; ++i) update.AppendInt32("", i * 2 + 1);
  update.Close().AppendInt32("$sort", 1).AppendInt32("$slice", -1000).Close().Close();
  auto driver = UpdateDriver::Parse(std::move(update).Build(), {});
  ASSERT_TRUE(driver.ok()) << driver.status();
  auto result = driver->Apply(std::move(doc).Build(), {});
  ASSERT_TRUE(result.ok()) << result.status();
  DocumentView a = result->doc.Get("a").Array();
  int expected = 1000;
  size_t count = 0;
  for (Element e : a) {
    ASSERT_EQ(e.Int32(), expected++);
    ++count;
  }
  EXPECT_EQ(count, 1000u);
  EXPECT_EQ(result->changed_paths, std::vector<std::string>{"a"});
}

// $push with $sort against a brute-force stable sort, over old arrays that
// are sorted already (new values merged in) and that are not (a full sort),
// $position, ties (kept in array order, old before new), missing sort fields
// (sorted as null), both directions, whole elements and embedded fields.
TEST(PushTest, SortAgreesWithAStableSortOfTheWholeArray) {
  std::mt19937 rng(15);
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE(round);
    const bool by_field = rng() % 2 == 0;
    const int dir = rng() % 2 == 0 ? 1 : -1;
    struct Item {
      std::optional<int> k;  // by_field: missing when empty
      int tag;
    };
    // null (a missing field) sorts below every number.
    auto key_less = [&](const Item& a, const Item& b) {
      const long ka = a.k ? *a.k : -1000, kb = b.k ? *b.k : -1000;
      return dir > 0 ? ka < kb : ka > kb;
    };
    int tag = 0;
    auto make = [&] {
      Item it{static_cast<int>(rng() % 6), tag++};
      if (by_field && rng() % 10 == 0) it.k.reset();
      return it;
    };
    std::vector<Item> old(rng() % 40), fresh(rng() % 5);
    for (Item& it : old) it = make();
    for (Item& it : fresh) it = make();
    if (rng() % 3 != 0) std::stable_sort(old.begin(), old.end(), key_less);
    std::optional<int> position;
    if (rng() % 4 == 0) position = static_cast<int>(rng() % (old.size() + 1));
    auto json = [&](const Item& it) {
      if (!by_field) return std::to_string(*it.k);
      return std::string("{") + (it.k ? "\"k\": " + std::to_string(*it.k) + ", " : "") +
             "\"tag\": " + std::to_string(it.tag) + "}";
    };
    auto array = [&](const std::vector<Item>& items) {
      std::string out = "[";
      for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + json(items[i]);
      return out + "]";
    };
    std::vector<Item> want = old;
    want.insert(want.begin() + (position ? *position : static_cast<int>(old.size())),
                fresh.begin(), fresh.end());
    std::stable_sort(want.begin(), want.end(), key_less);
    std::string update = R"({"$push": {"a": {"$each": )" + array(fresh) + R"(, "$sort": )" +
                         (by_field ? R"({"k": )" + std::to_string(dir) + "}" : std::to_string(dir));
    if (position) update += R"(, "$position": )" + std::to_string(*position);
    update += "}}}";
    auto result = RunUpdate(R"({"_id": 1, "a": )" + array(old) + "}", update);
    ASSERT_TRUE(result.ok()) << result.status() << " " << update;
    EXPECT_EQ(Canonical(result->doc), Canonical(Json(R"({"_id": 1, "a": )" + array(want) + "}")))
        << update << " on " << array(old);
  }
}

// ------------------------------------------------------------------ $addToSet

TEST(AddToSetTest, AddsOnlyMissingValues) {
  ExpectUpdate(R"({"_id": 1, "tags": ["a", "b"]})", R"({"$addToSet": {"tags": "c"}})",
               R"({"_id": 1, "tags": ["a", "b", "c"]})");
  ExpectNoOp(R"({"_id": 1, "tags": ["a", "b"]})", R"({"$addToSet": {"tags": "a"}})");
  // MongoDB equality: 1.0 equals 1.
  ExpectNoOp(R"({"_id": 1, "n": [1, 2]})", R"({"$addToSet": {"n": 1.0}})");
  // An array argument is one element.
  ExpectUpdate(R"({"_id": 1, "n": [1]})", R"({"$addToSet": {"n": [2, 3]}})",
               R"({"_id": 1, "n": [1, [2, 3]]})");
}

TEST(AddToSetTest, EachDeduplicates) {
  ExpectUpdate(R"({"_id": 1, "tags": ["a"]})", R"({"$addToSet": {"tags": {"$each": ["b", "a", "c", "b"]}}})",
               R"({"_id": 1, "tags": ["a", "b", "c"]})");
  ExpectUpdate(R"({"_id": 1})", R"({"$addToSet": {"tags": {"$each": [1, 1, 2]}}})",
               R"({"_id": 1, "tags": [1, 2]})");
}

TEST(AddToSetTest, Errors) {
  ExpectError(R"({"_id": 1, "a": 1})", R"({"$addToSet": {"a": 2}})", ErrorCode::kBadValue,
              "Cannot apply $addToSet to non-array field. Field named 'a' has non-array type int");
  ExpectParseError(R"({"$addToSet": {"a": {"$each": 1}}})", ErrorCode::kBadValue,
                   "The argument to $each in $addToSet must be an array but it was of type int");
  ExpectParseError(R"({"$addToSet": {"a": {"$each": [1], "x": 1}}})", ErrorCode::kBadValue,
                   "Found unexpected fields after $each in $addToSet");
}

// ------------------------------------------------------------------ $pop

TEST(PopTest, RemovesFirstOrLast) {
  ExpectUpdate(R"({"_id": 1, "s": [8, 9, 10]})", R"({"$pop": {"s": -1}})", R"({"_id": 1, "s": [9, 10]})");
  ExpectUpdate(R"({"_id": 1, "s": [8, 9, 10]})", R"({"$pop": {"s": 1}})", R"({"_id": 1, "s": [8, 9]})");
  ExpectNoOp(R"({"_id": 1, "s": []})", R"({"$pop": {"s": 1}})");
  ExpectNoOp(R"({"_id": 1})", R"({"$pop": {"s": 1}})");
}

TEST(PopTest, Errors) {
  ExpectParseError(R"({"$pop": {"s": 2}})", ErrorCode::kFailedToParse, "$pop expects 1 or -1, found: 2");
  ExpectParseError(R"({"$pop": {"s": "x"}})", ErrorCode::kFailedToParse, "Expected a number in: s: \"x\"");
  ExpectError(R"({"_id": 1, "s": 1})", R"({"$pop": {"s": 1}})", ErrorCode::kTypeMismatch,
              "Path 's' contains an element of non-array type 'int'");
}

// ------------------------------------------------------------------ $pull, $pullAll

TEST(PullTest, ByValue) {
  ExpectUpdate(R"({"_id": 1, "fruits": ["apples", "pears", "oranges", "pears"]})",
               R"({"$pull": {"fruits": "pears"}})", R"({"_id": 1, "fruits": ["apples", "oranges"]})");
  ExpectNoOp(R"({"_id": 1, "fruits": ["apples"]})", R"({"$pull": {"fruits": "kiwi"}})");
  ExpectNoOp(R"({"_id": 1})", R"({"$pull": {"fruits": "kiwi"}})");
}

TEST(PullTest, ByCondition) {
  ExpectUpdate(R"({"_id": 1, "votes": [3, 5, 6, 7, 7, 8]})", R"({"$pull": {"votes": {"$gte": 6}}})",
               R"({"_id": 1, "votes": [3, 5]})");
  ExpectUpdate(R"({"_id": 1, "v": [1, 2, 3, 4]})", R"({"$pull": {"v": {"$in": [2, 4]}}})",
               R"({"_id": 1, "v": [1, 3]})");
}

TEST(PullTest, DocumentsByFields) {
  ExpectUpdate(
      R"({"_id": 1, "results": [{"item": "A", "score": 5}, {"item": "B", "score": 8}, {"item": "B", "score": 4}]})",
      R"({"$pull": {"results": {"score": 8, "item": "B"}}})",
      R"({"_id": 1, "results": [{"item": "A", "score": 5}, {"item": "B", "score": 4}]})");
  // A field condition against each element document; extra fields do not matter.
  ExpectUpdate(
      R"({"_id": 1, "results": [{"item": "A", "answers": [{"q": 1, "a": 4}, {"q": 2, "a": 6}]},
                                {"item": "B", "answers": [{"q": 1, "a": 0}, {"q": 2, "a": 8}]}]})",
      R"({"$pull": {"results": {"answers": {"$elemMatch": {"q": 2, "a": {"$gte": 8}}}}}})",
      R"({"_id": 1, "results": [{"item": "A", "answers": [{"q": 1, "a": 4}, {"q": 2, "a": 6}]}]})");
}

TEST(PullTest, NonArrayFails) {
  ExpectError(R"({"_id": 1, "a": 1})", R"({"$pull": {"a": 1}})", ErrorCode::kBadValue,
              "Cannot apply $pull to a non-array value");
}

TEST(PullAllTest, RemovesEveryListedValue) {
  ExpectUpdate(R"({"_id": 1, "s": [0, 2, 5, 5, 1, 0]})", R"({"$pullAll": {"s": [0, 5]}})",
               R"({"_id": 1, "s": [2, 1]})");
  ExpectParseError(R"({"$pullAll": {"s": 1}})", ErrorCode::kBadValue,
                   "$pullAll requires an array argument but was given a int");
}

// ------------------------------------------------------------------ positional operators

TEST(PositionalTest, DollarUsesTheMatchedIndex) {
  UpdateContext ctx;
  ctx.positional_index = 1;
  ExpectUpdate(R"({"_id": 1, "grades": [85, 80, 80]})", R"({"$set": {"grades.$": 82}})",
               R"({"_id": 1, "grades": [85, 82, 80]})", ctx);
  ExpectUpdate(R"({"_id": 4, "grades": [{"grade": 80, "mean": 75}, {"grade": 85, "mean": 90}]})",
               R"({"$set": {"grades.$.std": 6}})",
               R"({"_id": 4, "grades": [{"grade": 80, "mean": 75}, {"grade": 85, "mean": 90, "std": 6}]})",
               ctx);
}

TEST(PositionalTest, DollarWithoutAMatchFails) {
  ExpectError(R"({"_id": 1, "grades": [85]})", R"({"$set": {"grades.$": 82}})", ErrorCode::kBadValue,
              "The positional operator did not find the match needed from the query.");
}

TEST(PositionalTest, DollarPathErrors) {
  ExpectParseError(R"({"$set": {"$": 1}})", ErrorCode::kBadValue,
                   "Cannot have positional (i.e. '$') element in the first position");
  ExpectParseError(R"({"$set": {"a.$.b.$": 1}})", ErrorCode::kBadValue,
                   "Too many positional (i.e. '$') elements found in path 'a.$.b.$'");
}

TEST(PositionalTest, AllElements) {
  ExpectUpdate(R"({"_id": 1, "grades": [85, 82, 80]})", R"({"$inc": {"grades.$[]": 10}})",
               R"({"_id": 1, "grades": [95, 92, 90]})");
  ExpectUpdate(R"({"_id": 1, "g": [{"a": 1}, {"a": 2}]})", R"({"$set": {"g.$[].b": 0}})",
               R"({"_id": 1, "g": [{"a": 1, "b": 0}, {"a": 2, "b": 0}]})");
  ExpectNoOp(R"({"_id": 1, "g": []})", R"({"$set": {"g.$[].b": 0}})");
}

TEST(PositionalTest, AllElementsNeedsAnExistingArray) {
  ExpectError(R"({"_id": 1})", R"({"$set": {"g.$[]": 0}})", ErrorCode::kBadValue,
              "The path 'g' must exist in the document in order to apply array updates.");
  ExpectError(R"({"_id": 1, "g": 5})", R"({"$set": {"g.$[]": 0}})", ErrorCode::kBadValue,
              "Cannot apply array updates to non-array element g: 5");
}

TEST(ArrayFiltersTest, UpdatesMatchingElements) {
  ExpectUpdate(R"({"_id": 1, "grades": [95, 92, 90, 150, 102]})",
               R"({"$set": {"grades.$[element]": 100}})",
               R"({"_id": 1, "grades": [95, 92, 90, 100, 100]})", {},
               {R"({"element": {"$gte": 100}})"});
  ExpectUpdate(
      R"({"_id": 1, "grades": [{"grade": 80, "mean": 75}, {"grade": 85, "mean": 90}, {"grade": 90, "mean": 85}]})",
      R"({"$set": {"grades.$[elem].mean": 100}})",
      R"({"_id": 1, "grades": [{"grade": 80, "mean": 75}, {"grade": 85, "mean": 100}, {"grade": 90, "mean": 100}]})",
      {}, {R"({"elem.grade": {"$gte": 85}})"});
}

TEST(ArrayFiltersTest, NestedIdentifiersAndChangedPaths) {
  auto result = RunUpdate(R"({"_id": 1, "a": [{"b": [1, 5]}, {"b": [7]}]})",
                    R"({"$inc": {"a.$[].b.$[big]": 100}})", {}, {R"({"big": {"$gt": 4}})"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Canonical(result->doc), Canonical(Json(R"({"_id": 1, "a": [{"b": [1, 105]}, {"b": [107]}]})")));
  EXPECT_EQ(result->changed_paths, (std::vector<std::string>{"a.0.b.1", "a.1.b.0"}));
}

TEST(ArrayFiltersTest, IdentifierErrors) {
  ExpectParseError(R"({"$set": {"a.$[x]": 1}})", ErrorCode::kBadValue,
                   "No array filter found for identifier 'x' in path 'a.$[x]'");
  ExpectParseError(R"({"$set": {"a.$[x]": 1}})", ErrorCode::kFailedToParse,
                   "The array filter for identifier 'y' was not used in the update",
                   {R"({"x": 1})", R"({"y": 1})"});
  ExpectParseError(R"({"$set": {"a.$[x]": 1}})", ErrorCode::kFailedToParse,
                   "Found multiple array filters with the same top-level field name x",
                   {R"({"x": 1})", R"({"x": 2})"});
  ExpectParseError(R"({"$set": {"a.$[x]": 1}})", ErrorCode::kFailedToParse,
                   "Expected a single top-level field name, found 'x' and 'y'",
                   {R"({"x": 1, "y": 1})"});
  ExpectParseError(R"({"$set": {"a.$[X]": 1}})", ErrorCode::kBadValue,
                   "must be an alphanumeric string beginning with a lowercase letter",
                   {R"({"X": 1})"});
  ExpectParseError(R"({"$set": {"a.$[x]": 1}})", ErrorCode::kFailedToParse,
                   "Cannot use an expression without a top-level field name in arrayFilters",
                   {R"({})"});
}

TEST(ArrayFiltersTest, OverlappingFiltersOnOneElementConflict) {
  ExpectError(R"({"_id": 1, "a": [1, 5]})", R"({"$set": {"a.$[x]": 0, "a.$[y]": 1}})",
              ErrorCode::kConflictingUpdateOperators, "Update created a conflict at 'a.1'", {},
              {R"({"x": {"$gt": 2}})", R"({"y": {"$gt": 4}})"});
  // Disjoint elements: no conflict.
  ExpectUpdate(R"({"_id": 1, "a": [1, 5]})", R"({"$set": {"a.$[x]": 0, "a.$[y]": 9}})",
               R"({"_id": 1, "a": [9, 0]})", {}, {R"({"x": {"$gt": 2}})", R"({"y": {"$lt": 2}})"});
}

// ------------------------------------------------------------------ parsing and conflicts

TEST(ParseTest, ConflictingPaths) {
  ExpectParseError(R"({"$set": {"a": 1}, "$inc": {"a": 1}})", ErrorCode::kConflictingUpdateOperators,
                   "Updating the path 'a' would create a conflict at 'a'");
  ExpectParseError(R"({"$set": {"a": 1, "a.b": 2}})", ErrorCode::kConflictingUpdateOperators,
                   "Updating the path 'a.b' would create a conflict at 'a'");
  ExpectParseError(R"({"$set": {"a.b": 1}, "$unset": {"a": 1}})",
                   ErrorCode::kConflictingUpdateOperators,
                   "Updating the path 'a' would create a conflict at 'a'");
  ExpectParseError(R"({"$set": {"a.0": 1, "a.$[]": 2}})", ErrorCode::kConflictingUpdateOperators,
                   "conflict at 'a'");
  // Siblings do not conflict.
  ExpectUpdate(R"({"_id": 1})", R"({"$set": {"a.b": 1, "a.c": 2}, "$inc": {"ab": 1}})",
               R"({"_id": 1, "a": {"b": 1, "c": 2}, "ab": 1})");
}

TEST(ParseTest, UnknownModifierAndMixedFields) {
  ExpectParseError(R"({"$foo": {"a": 1}})", ErrorCode::kFailedToParse, "Unknown modifier: $foo");
  ExpectParseError(R"({"$set": {"a": 1}, "b": 2})", ErrorCode::kFailedToParse, "Unknown modifier: b");
  ExpectParseError(R"({"$set": 1})", ErrorCode::kFailedToParse,
                   "Modifiers operate on fields but we found type int instead");
}

TEST(ParseTest, EmptyOperandIsANoOpSinceMongoDB5) {
  ExpectNoOp(R"({"_id": 1, "a": 1})", R"({"$set": {}, "$inc": {}})");
}

TEST(ParseTest, EmptyPaths) {
  ExpectParseError(R"({"$set": {"": 1}})", ErrorCode::kEmptyFieldName, "An empty update path is not valid.");
  ExpectParseError(R"({"$set": {"a..b": 1}})", ErrorCode::kEmptyFieldName,
                   "The update path 'a..b' contains an empty field name");
  ExpectParseError(R"({"$set": {"a.": 1}})", ErrorCode::kEmptyFieldName, "empty field name");
}

// ------------------------------------------------------------------ _id

TEST(IdTest, ModifyingIdFails) {
  ExpectError(R"({"_id": 1, "a": 1})", R"({"$set": {"_id": 2}})", ErrorCode::kImmutableField,
              "Performing an update on the path '_id' would modify the immutable field '_id'");
  ExpectError(R"({"_id": 1})", R"({"$unset": {"_id": 1}})", ErrorCode::kImmutableField,
              "would modify the immutable field '_id'");
  ExpectError(R"({"_id": {"a": 1}})", R"({"$inc": {"_id.a": 1}})", ErrorCode::kImmutableField,
              "Performing an update on the path '_id.a' would modify the immutable field '_id'");
  ExpectError(R"({"_id": 1, "a": 1})", R"({"$rename": {"_id": "b"}})", ErrorCode::kImmutableField,
              "immutable field '_id'");
  ExpectNoOp(R"({"_id": 1, "a": 1})", R"({"$set": {"_id": 1}})");
}

// ------------------------------------------------------------------ replacement

TEST(ReplacementTest, KeepsIdFirst) {
  auto driver = UpdateDriver::Parse(Json(R"({"b": 2, "_id": 1, "c": 3})"), {});
  ASSERT_TRUE(driver.ok());
  EXPECT_TRUE(driver->is_replacement());
  auto result = driver->Apply(Json(R"({"_id": 1, "a": 1, "c": 3})"), {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Canonical(result->doc), Canonical(Json(R"({"_id": 1, "b": 2, "c": 3})")));
  EXPECT_TRUE(result->modified);
  EXPECT_EQ(result->changed_paths, (std::vector<std::string>{"b", "a"}));
  ExpectUpdate(R"({"_id": 7, "a": 1})", R"({"x": 1})", R"({"_id": 7, "x": 1})");
  ExpectUpdate(R"({"_id": 7, "a": 1})", R"({})", R"({"_id": 7})");
  ExpectNoOp(R"({"_id": 7, "a": 1})", R"({"a": 1})");
}

TEST(ReplacementTest, DifferentIdFails) {
  ExpectError(R"({"_id": 1, "a": 1})", R"({"_id": 2, "a": 1})", ErrorCode::kImmutableField,
              "After applying the update, the (immutable) field '_id' was found to have been "
              "altered to _id: 2");
}

TEST(ReplacementTest, TopLevelDollarFieldFails) {
  ExpectError(R"({"_id": 1})", R"({"a": 1, "$set": {"b": 1}})", ErrorCode::kDollarPrefixedFieldName,
              "The dollar ($) prefixed field '$set' in '$set' is not allowed in the context of an "
              "update's replacement document");
}

// ------------------------------------------------------------------ upserts

std::string Seed(std::string_view filter) {
  auto seeded = SeedUpsertDocument(Json(filter));
  EXPECT_TRUE(seeded.ok()) << seeded.status();
  return seeded.ok() ? Canonical(*seeded) : "";
}

TEST(UpsertTest, SeedsFromEqualities) {
  EXPECT_EQ(Seed(R"({"a": 1})"), Canonical(Json(R"({"a": 1})")));
  EXPECT_EQ(Seed(R"({"a": {"$eq": 1}, "b": {"$gt": 5}})"), Canonical(Json(R"({"a": 1})")));
  EXPECT_EQ(Seed(R"({"$and": [{"x.y": 1}, {"x.z": {"$eq": "s"}}], "n": {"$in": [3]}})"),
            Canonical(Json(R"({"n": 3, "x": {"y": 1, "z": "s"}})")));
  EXPECT_EQ(Seed(R"({"n": {"$in": [3, 4]}, "r": {"$regex": "x"}, "$or": [{"p": 1}, {"q": 1}]})"),
            Canonical(Json(R"({})")));
  EXPECT_EQ(Seed(R"({"$or": [{"p": 1}]})"), Canonical(Json(R"({"p": 1})")));
  // _id comes first whatever the order of the filter.
  EXPECT_EQ(Seed(R"({"b": 1, "_id": 5})"), Canonical(Json(R"({"_id": 5, "b": 1})")));
}

TEST(UpsertTest, AmbiguousEqualitiesFail) {
  auto twice = SeedUpsertDocument(Json(R"({"$and": [{"a": 1}, {"a": 2}]})"));
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), ErrorCode::kNotSingleValueField);
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("path 'a' is matched twice"));
  auto prefix = SeedUpsertDocument(Json(R"({"a": {"b": 1}, "a.c": 2})"));
  ASSERT_FALSE(prefix.ok());
  EXPECT_EQ(prefix.status().code(), ErrorCode::kNotSingleValueField);
}

TEST(UpsertTest, UpdateAppliedToSeedWithSetOnInsert) {
  auto seed = SeedUpsertDocument(Json(R"({"_id": 3, "item": "x"})"));
  ASSERT_TRUE(seed.ok());
  auto driver = UpdateDriver::Parse(Json(R"({"$set": {"qty": 1}, "$setOnInsert": {"def": 100}})"), {});
  ASSERT_TRUE(driver.ok());
  UpdateContext ctx;
  ctx.is_upsert_insert = true;
  auto result = driver->Apply(*seed, ctx);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Canonical(result->doc),
            Canonical(Json(R"({"_id": 3, "item": "x", "def": 100, "qty": 1})")));
  // The seeded _id stays immutable; an upsert without one may set it.
  ExpectError(R"({"_id": 3})", R"({"$set": {"_id": 4}})", ErrorCode::kImmutableField, "_id", ctx);
  ExpectUpdate(R"({"a": 1})", R"({"$setOnInsert": {"_id": 9}})", R"({"_id": 9, "a": 1})", ctx);
}

TEST(UpsertTest, ReplacementKeepsOnlyTheSeededId) {
  auto seed = SeedUpsertDocument(Json(R"({"_id": 3, "item": "x"})"));
  ASSERT_TRUE(seed.ok());
  auto driver = UpdateDriver::Parse(Json(R"({"name": "n"})"), {});
  ASSERT_TRUE(driver.ok());
  UpdateContext ctx;
  ctx.is_upsert_insert = true;
  auto result = driver->Apply(*seed, ctx);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Canonical(result->doc), Canonical(Json(R"({"_id": 3, "name": "n"})")));
}

// Issue 11 #14: MongoDB's jstests/core/upsert_fields.js, every case, as
// facts: an upsert that matches nothing inserts `expected` (no `_id` here
// means the caller generates an ObjectId), or fails with `code`.
struct UpsertFieldsCase {
  std::string filter;
  std::string update;
  std::string expected;  // empty: an error with `code`
  ErrorCode code = ErrorCode::kOk;
};

std::ostream& operator<<(std::ostream& os, const UpsertFieldsCase& c) {
  return os << c.filter << " with " << c.update;
}

// The filter shapes upsert_fields.js tries on both `_id` and `x`, with F for
// the field: equalities an upsert copies, and predicates it does not.
constexpr const char* kExtracted[] = {
    R"({"F": 1})",           R"({"F": {"$eq": 1}})",           R"({"F": {"$all": [1]}})",
    R"({"F": {"$in": [1]}})", R"({"$and": [{"F": 1}]})",        R"({"$and": [{"F": {"$eq": 1}}]})",
    R"({"$or": [{"F": 1}]})", R"({"$or": [{"F": {"$eq": 1}}]})"};
constexpr const char* kNotExtracted[] = {
    R"({"F": {"$gt": 1}})",
    R"({"F": {"$ne": 1}})",
    R"({"F": {"$in": [1, 2]}})",
    R"({"F": {"$elemMatch": {"$eq": 1}}})",
    R"({"F": {"$exists": true}})",
    R"({"F": {"$not": {"$eq": 1}}})",
    R"({"$or": [{"F": 1}, {"F": 1}]})",
    R"({"$or": [{"F": {"$eq": 1}}, {"F": 2}]})",
    R"({"$nor": [{"F": 1}]})",
    R"({"$nor": [{"F": {"$eq": 1}}]})",
    R"({"$nor": [{"F": {"$eq": 1}}, {"F": 1}]})"};

std::string On(std::string shape, std::string_view field) {
  for (size_t at; (at = shape.find("\"F\"")) != std::string::npos;) {
    shape.replace(at, 3, "\"" + std::string(field) + "\"");
  }
  return shape;
}

std::vector<UpsertFieldsCase> UpsertFieldsCases() {
  std::vector<UpsertFieldsCase> cases;
  auto ok = [&](std::string f, std::string u, std::string want) {
    cases.push_back({std::move(f), std::move(u), std::move(want)});
  };
  auto fails = [&](std::string f, std::string u, ErrorCode code) {
    cases.push_back({std::move(f), std::move(u), "", code});
  };
  // _id generated or taken from the update.
  ok("{}", "{}", "{}");
  ok("{}", R"({"a": 1})", R"({"a": 1})");
  ok("{}", R"({"$set": {"a": 1}})", R"({"a": 1})");
  ok("{}", R"({"$setOnInsert": {"a": 1}})", R"({"a": 1})");
  ok("{}", R"({"_id": 1})", R"({"_id": 1})");
  ok("{}", R"({"$set": {"_id": 1}})", R"({"_id": 1})");
  ok("{}", R"({"$setOnInsert": {"_id": 1}})", R"({"_id": 1})");
  fails("{}", R"({"_id": [1, 2]})", ErrorCode::kInvalidIdField);
  fails("{}", R"({"_id": {"$undefined": true}})", ErrorCode::kInvalidIdField);
  fails("{}", R"({"$set": {"_id": [1, 2]}})", ErrorCode::kInvalidIdField);
  fails("{}", R"({"$setOnInsert": {"_id": {"$undefined": true}}})", ErrorCode::kInvalidIdField);
  fails("{}", R"({"_id": {"$regularExpression": {"pattern": "abc", "options": ""}}})",
        ErrorCode::kInvalidIdField);
  fails("{}", R"({"$set": {"_id": {"$regularExpression": {"pattern": "abc", "options": ""}}}})",
        ErrorCode::kInvalidIdField);
  ok(R"({"_id": {"$regularExpression": {"pattern": "abc", "options": ""}}})", "{}", "{}");

  // The same for a replacement and both operator forms.
  for (const std::string update : {"{}", R"({"$set": {"a": 1}})", R"({"$setOnInsert": {"a": 1}})"}) {
    const bool replacement = update == "{}";
    const std::string a = replacement ? "" : R"("a": 1)";
    auto with = [&](std::string fields) {
      if (a.empty()) return "{" + fields + "}";
      return "{" + fields + (fields.empty() ? "" : ", ") + a + "}";
    };
    for (const char* shape : kExtracted) ok(On(shape, "_id"), update, with(R"("_id": 1)"));
    for (const char* shape : kNotExtracted) ok(On(shape, "_id"), update, with(""));
    fails(R"({"_id": [1, 2]})", update, ErrorCode::kInvalidIdField);
    fails(R"({"_id": {"$undefined": true}})", update, ErrorCode::kBadValue);
    fails(R"({"_id": {"$eq": [1, 2]}})", update, ErrorCode::kInvalidIdField);
    fails(R"({"_id": {"$eq": {"$undefined": true}}})", update, ErrorCode::kBadValue);
    fails(R"({"_id": {"$all": [1, 2]}})", update, ErrorCode::kNotSingleValueField);
    fails(R"({"$and": [{"_id": 1}, {"_id": 1}]})", update, ErrorCode::kNotSingleValueField);
    fails(R"({"$and": [{"_id": {"$eq": 1}}, {"_id": 2}]})", update,
          ErrorCode::kNotSingleValueField);
    const ErrorCode nested_id =
        replacement ? ErrorCode::kNotExactValueField : ErrorCode::kNotSingleValueField;
    fails(R"({"_id": 1, "_id.x": 1})", update, nested_id);
    fails(R"({"_id": {"x": 1}, "_id.x": 1})", update, nested_id);
    if (replacement) {
      fails(R"({"_id.x": 1, "_id.y": 2})", update, ErrorCode::kNotExactValueField);
    } else {
      ok(R"({"_id.x": 1, "_id.y": 2})", update, with(R"("_id": {"x": 1, "y": 2})"));
    }

    // Other fields: only operator updates copy them.
    auto x = [&](std::string value) { return replacement ? with("") : with(R"("x": )" + value); };
    for (const char* shape : kExtracted) ok(On(shape, "x"), update, x("1"));
    ok(R"({"x": [1, 2]})", update, x("[1, 2]"));
    ok(R"({"x": {"x.x": 1}})", update, x(R"({"x.x": 1})"));
    for (const char* shape : kNotExtracted) ok(On(shape, "x"), update, with(""));
    fails(R"({"x": {"$undefined": true}})", update, ErrorCode::kBadValue);
    for (const char* f : {R"({"x": {"$all": [1, 2]}})", R"({"$and": [{"x": 1}, {"x": 1}]})",
                          R"({"$and": [{"x": {"$eq": 1}}, {"x": 2}]})"}) {
      if (replacement) {
        ok(f, update, "{}");
      } else {
        fails(f, update, ErrorCode::kNotSingleValueField);
      }
    }
    for (const char* f :
         {R"({"x.x": 1})", R"({"x.x": {"$eq": 1}})", R"({"x.x": {"$all": [1]}})",
          R"({"$and": [{"x.x": 1}]})", R"({"$and": [{"x.x": {"$eq": 1}}]})",
          R"({"$or": [{"x.x": 1}]})", R"({"$or": [{"x.x": {"$eq": 1}}]})"}) {
      ok(f, update, x(R"({"x": 1})"));
    }
    for (const char* f : {R"({"x": 1, "x.x": 1})", R"({"x": {}, "x.x": 1})",
                          R"({"x": {"x": 1}, "x.x": 1})", R"({"x": {"x": 1}, "x.y": 1})",
                          R"({"x": [1, {"x": 1}], "x.x": 1})"}) {
      if (replacement) {
        ok(f, update, "{}");
      } else {
        fails(f, update, ErrorCode::kNotSingleValueField);
      }
    }
  }
  // A regex is a value in an update, a predicate in a filter unless $eq'd.
  ok("{}", R"({"x": {"$regularExpression": {"pattern": "abc", "options": ""}}})",
     R"({"x": {"$regularExpression": {"pattern": "abc", "options": ""}}})");
  ok(R"({"x": {"$eq": {"$regularExpression": {"pattern": "abc", "options": ""}}}})",
     R"({"$set": {"a": 1}})",
     R"({"x": {"$regularExpression": {"pattern": "abc", "options": ""}}, "a": 1})");
  ok(R"({"x": {"$regularExpression": {"pattern": "abc", "options": ""}}})", R"({"$set": {"a": 1}})",
     R"({"a": 1})");
  // Replacements ignore conflicts except on _id.
  ok(R"({"_id": 1, "x": [1, {"x": 1}], "x.x": 1})", "{}", R"({"_id": 1})");
  // DBRef: the filter's "x.$id" is not a field to create (SERVER-14024).
  ok(R"({"x.$id": 1})", R"({"$set": {"x": {"$ref": "a", "$id": 1}}})",
     R"({"x": {"$ref": "a", "$id": 1}})");
  // A replacement may not change the _id the filter fixes.
  fails(R"({"_id": "foo"})", R"({"_id": "bar"})", ErrorCode::kImmutableField);
  ok(R"({"_id": "foo"})", R"({"_id": "foo", "b": 1})", R"({"_id": "foo", "b": 1})");
  return cases;
}

class UpsertFieldsTest : public ::testing::TestWithParam<UpsertFieldsCase> {};

TEST_P(UpsertFieldsTest, MatchesMongoDB) {
  const UpsertFieldsCase& c = GetParam();
  auto filter = FromJson(c.filter);
  ASSERT_TRUE(filter.ok()) << filter.status();
  auto driver = UpdateDriver::Parse(Json(c.update), {});
  ASSERT_TRUE(driver.ok()) << driver.status();
  auto doc = driver->ProduceUpsertDocument(*filter, UpdateContext());
  if (c.expected.empty()) {
    ASSERT_FALSE(doc.ok()) << Canonical(*doc);
    EXPECT_EQ(doc.status().code(), c.code) << doc.status();
    return;
  }
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(Canonical(*doc), Canonical(Json(c.expected)));
}

INSTANTIATE_TEST_SUITE_P(UpsertFieldsJs, UpsertFieldsTest,
                         ::testing::ValuesIn(UpsertFieldsCases()));

TEST(UpsertTest, ConflictMessagesAreMongoDBs) {
  auto twice = UpdateDriver::Parse(Json(R"({"$set": {"a": 1}})"), {})
                   ->ProduceUpsertDocument(Json(R"({"x": {"$all": [1, 2]}})"), {});
  EXPECT_THAT(twice.status().message(),
              HasSubstr("cannot infer query fields to set, path 'x' is matched twice"));
  auto nested = UpdateDriver::Parse(Json(R"({"$set": {"a": 1}})"), {})
                    ->ProduceUpsertDocument(Json(R"({"x": {"x": 1}, "x.y": 1})"), {});
  EXPECT_THAT(nested.status().message(),
              HasSubstr("cannot infer query fields to set, both paths 'x.y' and 'x' are matched"));
  auto whole = UpdateDriver::Parse(Json("{}"), {})->ProduceUpsertDocument(
      Json(R"({"_id.x": 1, "_id.y": 2})"), {});
  EXPECT_THAT(whole.status().message(),
              HasSubstr("field at '_id' must be exactly specified, field at sub-path '_id.x'"));
}

// ------------------------------------------------------------------ results

TEST(ResultTest, ChangedPathsAreConcrete) {
  UpdateContext ctx;
  ctx.positional_index = 0;
  auto result = RunUpdate(R"({"_id": 1, "a": {"b": 1}, "c": [{"d": 1}], "z": 1})",
                    R"({"$set": {"a.b": 2, "c.$.d": 5, "z": 1, "n.m": 1}})", ctx);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->modified);
  EXPECT_EQ(result->changed_paths, (std::vector<std::string>{"a.b", "c.0.d", "n.m"}));
}

// Found by fuzz/update_fuzz: creating a document element in an array
// ({$set: {"a.1.b": 3}} on {a: [{c: 1}]}) reported only "a.1.b", which by
// PathMayAffect leaves an index on "a.c" alone, yet that index now sees the
// new element's missing "c" (a null key). The new element is reported too.
TEST(ResultTest, ANewArrayElementIsAChangedPath) {
  auto covers = [](const std::vector<std::string>& changed, std::string_view index_path) {
    return std::any_of(changed.begin(), changed.end(),
                       [&](const std::string& c) { return PathMayAffect(c, index_path); });
  };
  auto appended = RunUpdate(R"({"_id": 1, "a": [{"c": 1}]})", R"({"$set": {"a.1.b": 3}})");
  ASSERT_TRUE(appended.ok()) << appended.status();
  EXPECT_EQ(appended->changed_paths, (std::vector<std::string>{"a.1.b", "a.1"}));
  EXPECT_TRUE(covers(appended->changed_paths, "a.c"));
  // Padding: the nulls before the new element are new values of "a.c" too.
  auto padded = RunUpdate(R"({"_id": 1, "a": [{"c": 1}]})", R"({"$set": {"a.3.b": 3}})");
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_TRUE(covers(padded->changed_paths, "a.c"));
  // A new field of a new document is not such a change.
  auto nested = RunUpdate(R"({"_id": 1})", R"({"$set": {"x.y.z": 1}})");
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_EQ(nested->changed_paths, std::vector<std::string>{"x.y.z"});
}

// Found by update_fuzz: "a.01" changes array element 1, and the changed
// path must say "a.1", or an index on "a.1" looks untouched by it.
TEST(ResultTest, ChangedPathsNameArrayPositionsCanonically) {
  auto r = RunUpdate(R"({"_id": 1, "a": [{"c": 1}, {"c": 2}], "d": {"01": 1}})",
                     R"({"$set": {"a.01.c": 3, "d.01": 2}})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->changed_paths, (std::vector<std::string>{"a.1.c", "d.01"}));
  EXPECT_TRUE(PathMayAffect(r->changed_paths[0], "a.1.c"));
}

TEST(ResultTest, PathMayAffect) {
  EXPECT_TRUE(PathMayAffect("a.b", "a.b.c"));
  EXPECT_TRUE(PathMayAffect("a.b.c", "a"));
  EXPECT_TRUE(PathMayAffect("grades.1.mean", "grades.mean"));
  EXPECT_FALSE(PathMayAffect("grades.1.mean", "grades.std"));
  EXPECT_FALSE(PathMayAffect("ab", "a"));
}

TEST(ResultTest, OneFieldOfALargeDocumentCopiesTheRestVerbatim) {
  BsonBuilder b;
  b.AppendInt32("_id", 1);
  const std::string big(1 << 20, 'x');
  b.AppendString("blob", big);
  b.OpenArray("list");
  for (int i = 0; i < 1000; ++i) b.AppendInt32("", i);
  b.Close();
  b.AppendInt32("n", 1);
  Document doc = std::move(b).Build();
  auto driver = UpdateDriver::Parse(Json(R"({"$set": {"n": 2}})"), {});
  ASSERT_TRUE(driver.ok());
  auto result = driver->Apply(doc, {});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->doc.size(), doc.size());
  EXPECT_EQ(result->doc.Get("n").Int32(), 2);
  EXPECT_EQ(result->doc.Get("blob").String(), big);
  // Everything before the changed value is byte-identical.
  EXPECT_EQ(result->doc.bytes().substr(0, doc.size() - 5), doc.bytes().substr(0, doc.size() - 5));
}

TEST(ResultTest, ResultPastSixteenMegabytesFails) {
  BsonBuilder b;
  b.AppendInt32("_id", 1);
  b.AppendString("a", std::string(9 << 20, 'a'));
  Document doc = std::move(b).Build();
  const std::string before = doc.bytes();
  BsonBuilder u;
  u.OpenDocument("$push").AppendString("list", std::string(8 << 20, 'b')).Close();
  auto driver = UpdateDriver::Parse(std::move(u).Build(), {});
  ASSERT_TRUE(driver.ok());
  auto result = driver->Apply(doc, {});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), ErrorCode::kUpdateResultTooLarge);
  EXPECT_EQ(result.status().code_number(), 17419);
  EXPECT_EQ(result.status().message(), "Resulting document after update is larger than 16777216");
  EXPECT_EQ(doc.bytes(), before);
}

TEST(ResultTest, ParsedUpdateIsReusable) {
  auto driver = UpdateDriver::Parse(Json(R"({"$inc": {"n": 1}})"), {});
  ASSERT_TRUE(driver.ok());
  UpdateDriver moved = std::move(driver).value();
  for (int i = 0; i < 3; ++i) {
    auto result = moved.Apply(Json(R"({"_id": 1, "n": 10})"), {});
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->doc.Get("n").Int32(), 11);
  }
}

// ------------------------------------------------------------------ decimal arithmetic

Decimal128 Dec(std::string_view s) { return *Decimal128::FromString(s); }

// MongoDB's Decimal128(double): 15 significant digits, half-even, trailing
// zeros kept; a carry into a 16th digit takes the next power of ten.
TEST(DecimalArithmeticTest, DoubleConversionKeeps15Digits) {
  EXPECT_EQ(rockdoc::DecimalFromDouble(2.5).ToString(), "2.50000000000000");
  EXPECT_EQ(rockdoc::DecimalFromDouble(0.1).ToString(), "0.100000000000000");
  EXPECT_EQ(rockdoc::DecimalFromDouble(-1234567.0).ToString(), "-1234567.00000000");
  EXPECT_EQ(rockdoc::DecimalFromDouble(std::nextafter(10.0, 0.0)).ToString(), "10.0000000000000");
  EXPECT_EQ(rockdoc::DecimalFromDouble(1e-320).ToString(), "9.99988867182683E-321");
  EXPECT_EQ(rockdoc::DecimalFromDouble(-0.0).ToString(), "-0");
  EXPECT_EQ(rockdoc::DecimalFromDouble(1.0 / 0.0).ToString(), "Infinity");
  EXPECT_EQ(rockdoc::DecimalFromDoubleExact(0.1).ToString(), "0.1000000000000000055511151231257827");
  // A round trip: every 15-digit decimal that a double holds comes back.
  EXPECT_EQ(rockdoc::DecimalToDouble(rockdoc::DecimalFromDouble(0.1)), 0.1);
  EXPECT_EQ(rockdoc::DecimalToDouble(rockdoc::DecimalFromDouble(123456789012345.0)), 123456789012345.0);
}

TEST(DecimalArithmeticTest, ExactWithPreferredExponent) {
  using rockdoc::DecimalAdd;
  using rockdoc::DecimalMultiply;
  EXPECT_EQ(DecimalAdd(Dec("1.0"), Dec("1.00")).ToString(), "2.00");
  EXPECT_EQ(DecimalAdd(Dec("0.1"), Dec("-0.1")).ToString(), "0.0");
  EXPECT_EQ(DecimalMultiply(Dec("1.5"), Dec("-2")).ToString(), "-3.0");
  EXPECT_EQ(DecimalAdd(Dec("Infinity"), Dec("-Infinity")).ToString(), "NaN");
  // 34 nines + 1 rounds to 1.000...E+34.
  EXPECT_EQ(DecimalAdd(Dec("9999999999999999999999999999999999"), Dec("1")).ToString(),
            "1.000000000000000000000000000000000E+34");
  // Round half to even on the 35th digit.
  EXPECT_EQ(DecimalAdd(Dec("1000000000000000000000000000000000"), Dec("0.5")).ToString(),
            "1000000000000000000000000000000000");
  EXPECT_EQ(DecimalAdd(Dec("1000000000000000000000000000000001"), Dec("0.5")).ToString(),
            "1000000000000000000000000000000002");
  // 90E+6111 still fits (clamped exponent); 34 digits times 10 does not.
  EXPECT_EQ(DecimalMultiply(Dec("9E+6111"), Dec("10")).ToString(), "9.0E+6112");
  EXPECT_EQ(DecimalMultiply(Dec("9999999999999999999999999999999999E+6111"), Dec("10")).ToString(),
            "Infinity");
}

}  // namespace
}  // namespace rockdoc

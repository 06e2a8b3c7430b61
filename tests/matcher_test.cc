// Tests of query filters (src/query/match_expression*): MongoDB's semantics
// operator by operator, written as JSON literals, the parse errors with their
// codes, MatchDetails' array positions, serialization, and a property test
// against a deliberately naive reference evaluator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <random>

#include "query/match_expression.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using ::testing::HasSubstr;
using test::Json;

std::unique_ptr<MatchExpression> Parse(std::string_view filter) {
  auto parsed = ParseMatchExpression(Json(filter));
  EXPECT_TRUE(parsed.ok()) << parsed.status() << " for " << filter;
  if (!parsed.ok()) return std::make_unique<AlwaysBooleanMatchExpression>(false);
  return std::move(parsed).value();
}

bool Matches(std::string_view filter, std::string_view doc) {
  return Parse(filter)->Matches(Json(doc));
}

Status ParseError(std::string_view filter) {
  auto parsed = ParseMatchExpression(Json(filter));
  return parsed.ok() ? Status::OK() : parsed.status();
}

// The error code and a message fragment, as abseil's StatusIs matcher.
#define EXPECT_PARSE_ERROR(filter, error_code, fragment)                 \
  do {                                                                   \
    Status s_ = ParseError(filter);                                      \
    EXPECT_EQ(s_.code(), error_code) << s_ << " for " << (filter);       \
    EXPECT_THAT(std::string(s_.message()), HasSubstr(fragment)) << (filter); \
  } while (0)

struct Case {
  const char* filter;
  const char* doc;
  bool expected;
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(Matches(c.filter, c.doc), c.expected) << c.filter << " on " << c.doc;
  }
}

// ---------------------------------------------------------------------------
// Equality and paths

TEST(Matcher, EqualityOnFieldsAndEmbeddedDocuments) {
  RunCases({
      {R"({"a": 1})", R"({"a": 1})", true},
      {R"({"a": 1})", R"({"a": 1.0})", true},  // numbers compare by value
      {R"({"a": 1})", R"({"a": {"$numberLong": "1"}})", true},
      {R"({"a": 1})", R"({"a": {"$numberDecimal": "1.00"}})", true},
      {R"({"a": 1})", R"({"a": "1"})", false},
      {R"({"a": 1})", R"({"b": 1})", false},
      {R"({"a.b": 1})", R"({"a": {"b": 1}})", true},
      {R"({"a.b.c": "x"})", R"({"a": {"b": {"c": "x"}}})", true},
      {R"({"a.b": 1})", R"({"a": 1})", false},
      {R"({"a": {"b": 1}})", R"({"a": {"b": 1}})", true},
      // Whole-document equality is field-order and field-set sensitive.
      {R"({"a": {"b": 1, "c": 2}})", R"({"a": {"c": 2, "b": 1}})", false},
      {R"({"a": {"b": 1}})", R"({"a": {"b": 1, "c": 2}})", false},
      {R"({"a": 1, "b": 2})", R"({"a": 1, "b": 2})", true},
      {R"({"a": 1, "b": 2})", R"({"a": 1, "b": 3})", false},
      {R"({})", R"({"anything": 1})", true},
      {R"({"": 5})", R"({"": 5})", true},
  });
}

TEST(Matcher, EqualityThroughArrays) {
  RunCases({
      {R"({"tags": "x"})", R"({"tags": ["w", "x"]})", true},
      {R"({"tags": "x"})", R"({"tags": ["w", "y"]})", false},
      // An array also matches when equal as a whole...
      {R"({"a": [1, 2]})", R"({"a": [1, 2]})", true},
      {R"({"a": [1, 2]})", R"({"a": [2, 1]})", false},
      // ...or equal to an element that is itself an array.
      {R"({"a": [1, 2]})", R"({"a": [[1, 2], 3]})", true},
      // Leaf expansion is one level deep.
      {R"({"a": 1})", R"({"a": [[1]]})", false},
      {R"({"a": []})", R"({"a": []})", true},
      {R"({"a": []})", R"({"a": [[]]})", true},
      // Dotted paths reach into arrays of documents.
      {R"({"a.b": 1})", R"({"a": [{"b": 0}, {"b": 1}]})", true},
      {R"({"a.b": 1})", R"({"a": [{"b": [0, 1]}]})", true},
      {R"({"a.b.c": 1})", R"({"a": [{"b": [{"c": 1}]}]})", true},
      {R"({"a.b": 1})", R"({"a": [{"b": 0}, 1]})", false},
      // Arrays directly inside arrays are not traversed by field names.
      {R"({"a.b": 1})", R"({"a": [[{"b": 1}]]})", false},
  });
}

TEST(Matcher, NumericPathPartsArePositionsAndFieldNames) {
  RunCases({
      {R"({"a.0": 5})", R"({"a": [5, 6]})", true},
      {R"({"a.1": 5})", R"({"a": [5, 6]})", false},
      {R"({"a.0": 5})", R"({"a": {"0": 5}})", true},
      // The same part as a field name inside array elements.
      {R"({"a.0": 5})", R"({"a": [{"0": 5}]})", true},
      {R"({"a.0.b": 1})", R"({"a": [{"b": 1}]})", true},
      {R"({"a.1.b": 1})", R"({"a": [{"b": 1}, {"b": 2}]})", false},
      {R"({"a.1.b": 2})", R"({"a": [{"b": 1}, {"b": 2}]})", true},
      // A positional step into a nested array continues through it.
      {R"({"a.0.b": 1})", R"({"a": [[{"b": 1}]]})", true},
      {R"({"a.0.0": 7})", R"({"a": [[7, 8]]})", true},
      // An array reached positionally at the leaf is not expanded.
      {R"({"a.0": 1})", R"({"a": [[1, 2]]})", false},
      {R"({"a.0": [1, 2]})", R"({"a": [[1, 2]]})", true},
      // Leading zeros are not positions.
      {R"({"a.00": 5})", R"({"a": [5]})", false},
  });
}

TEST(Matcher, NullMatchesMissing) {
  RunCases({
      {R"({"a": null})", R"({"a": null})", true},
      {R"({"a": null})", R"({})", true},
      {R"({"a": null})", R"({"a": 0})", false},
      {R"({"a": null})", R"({"a": [1, null]})", true},
      {R"({"a": null})", R"({"a": [1, 2]})", false},
      {R"({"a": null})", R"({"a": []})", false},
      {R"({"a.b": null})", R"({"a": 5})", true},
      {R"({"a.b": null})", R"({"a": {"c": 1}})", true},
      {R"({"a.b": null})", R"({"a": [{"c": 1}]})", true},
      {R"({"a.b": null})", R"({"a": [{"b": 1}, {"c": 1}]})", true},
      {R"({"a.b": null})", R"({"a": [{"b": 1}]})", false},
      // Non-document array elements yield nothing for a longer path.
      {R"({"a.b": null})", R"({"a": [1, 2]})", false},
      {R"({"a.b": null})", R"({"a": []})", false},
      // MongoDB 8.0: null no longer matches undefined.
      {R"({"a": null})", R"({"a": {"$undefined": true}})", false},
      {R"({"a": {"$ne": null}})", R"({"a": 1})", true},
      {R"({"a": {"$ne": null}})", R"({})", false},
      {R"({"a": {"$ne": null}})", R"({"a": [1, null]})", false},
      {R"({"a": {"$in": [null]}})", R"({})", true},
      {R"({"a": {"$in": [null, 2]}})", R"({"a": 2})", true},
      {R"({"a": {"$in": [null]}})", R"({"a": false})", false},
      {R"({"a": {"$nin": [null]}})", R"({})", false},
      {R"({"a": {"$nin": [null]}})", R"({"a": 3})", true},
      {R"({"a": {"$gte": null}})", R"({})", true},
      {R"({"a": {"$lte": null}})", R"({"a": null})", true},
      {R"({"a": {"$gt": null}})", R"({})", false},
      {R"({"a": {"$lt": null}})", R"({"a": null})", false},
  });
}

// ---------------------------------------------------------------------------
// Comparisons

TEST(Matcher, ComparisonsBracketByType) {
  RunCases({
      {R"({"a": {"$gt": 5}})", R"({"a": 6})", true},
      {R"({"a": {"$gt": 5}})", R"({"a": 5})", false},
      {R"({"a": {"$gte": 5}})", R"({"a": 5.0})", true},
      {R"({"a": {"$lt": 5}})", R"({"a": 4.5})", true},
      {R"({"a": {"$lte": 5}})", R"({"a": 6})", false},
      {R"({"a": {"$eq": 5}})", R"({"a": 5})", true},
      // No comparison across canonical types: strings are not > numbers here.
      {R"({"a": {"$gt": 5}})", R"({"a": "z"})", false},
      {R"({"a": {"$lt": "a"}})", R"({"a": 1})", false},
      {R"({"a": {"$gt": 5}})", R"({"a": null})", false},
      {R"({"a": {"$gt": 5}})", R"({})", false},
      {R"({"a": {"$gt": "abc"}})", R"({"a": "abd"})", true},
      {R"({"a": {"$gt": "abc"}})", R"({"a": {"$symbol": "abd"}})", true},
      {R"({"a": {"$gt": {"$date": "2020-01-01T00:00:00Z"}}})",
       R"({"a": {"$date": "2021-01-01T00:00:00Z"}})", true},
      {R"({"a": {"$gt": {"$date": "2020-01-01T00:00:00Z"}}})",
       R"({"a": {"$timestamp": {"t": 1700000000, "i": 1}}})", false},
      {R"({"a": {"$gt": false}})", R"({"a": true})", true},
      // Arrays: any element, or the whole array against an array operand.
      {R"({"a": {"$gt": 5}})", R"({"a": [1, 10]})", true},
      {R"({"a": {"$gt": 5, "$lt": 7}})", R"({"a": [1, 10]})", true},  // different elements
      {R"({"a": {"$gt": [1]}})", R"({"a": [1, 2]})", true},
      {R"({"a": {"$lt": [2]}})", R"({"a": [1]})", true},
      {R"({"a": {"$gt": {"b": 1}}})", R"({"a": {"b": 2}})", true},
      {R"({"a": {"$gt": {"b": 1}}})", R"({"a": {"c": 0}})", true},  // field names first
      // Large int64 against double: exact comparison.
      {R"({"a": {"$gt": {"$numberLong": "9007199254740992"}}})",
       R"({"a": {"$numberLong": "9007199254740993"}})", true},
      {R"({"a": {"$gt": 9007199254740992.0}})", R"({"a": {"$numberLong": "9007199254740993"}})",
       true},
  });
}

TEST(Matcher, NaNEqualsOnlyNaNAndIsNotOrdered) {
  RunCases({
      {R"({"a": {"$numberDouble": "NaN"}})", R"({"a": {"$numberDouble": "NaN"}})", true},
      {R"({"a": {"$numberDouble": "NaN"}})", R"({"a": {"$numberDecimal": "NaN"}})", true},
      {R"({"a": {"$lt": 0}})", R"({"a": {"$numberDouble": "NaN"}})", false},
      {R"({"a": {"$gt": 0}})", R"({"a": {"$numberDouble": "NaN"}})", false},
      {R"({"a": {"$gte": {"$numberDouble": "NaN"}}})", R"({"a": {"$numberDouble": "NaN"}})", true},
      {R"({"a": {"$gt": {"$numberDouble": "NaN"}}})", R"({"a": {"$numberDouble": "NaN"}})", false},
      {R"({"a": {"$lte": {"$numberDouble": "NaN"}}})", R"({"a": 1})", false},
      {R"({"a": {"$lt": {"$numberDouble": "-Infinity"}}})", R"({"a": {"$numberDouble": "NaN"}})",
       false},
  });
}

TEST(Matcher, MinKeyAndMaxKeyBoundEverything) {
  RunCases({
      {R"({"a": {"$gt": {"$minKey": 1}}})", R"({"a": "x"})", true},
      {R"({"a": {"$gt": {"$minKey": 1}}})", R"({"a": null})", true},
      {R"({"a": {"$gt": {"$minKey": 1}}})", R"({})", true},  // MongoDB: missing too
      {R"({"a": {"$gt": {"$minKey": 1}}})", R"({"a": {"$minKey": 1}})", false},
      {R"({"a": {"$gte": {"$minKey": 1}}})", R"({"a": {"$minKey": 1}})", true},
      {R"({"a": {"$lt": {"$maxKey": 1}}})", R"({"a": {"$oid": "5f1d7f0b9d3c2a1b2c3d4e5f"}})", true},
      {R"({"a": {"$lt": {"$minKey": 1}}})", R"({"a": 1})", false},
      {R"({"a": {"$minKey": 1}})", R"({"a": 1})", false},
      {R"({"a": {"$maxKey": 1}})", R"({"a": {"$maxKey": 1}})", true},
  });
}

TEST(Matcher, NeIsNotEqualOverAllValues) {
  RunCases({
      {R"({"a": {"$ne": 1}})", R"({"a": 2})", true},
      {R"({"a": {"$ne": 1}})", R"({})", true},
      {R"({"a": {"$ne": 1}})", R"({"a": [2, 1]})", false},
      {R"({"a": {"$ne": [1, 2]}})", R"({"a": [1, 2]})", false},
      {R"({"a.b": {"$ne": 1}})", R"({"a": [{"b": 2}, {"b": 1}]})", false},
  });
}

// ---------------------------------------------------------------------------
// $in / $nin / $all

TEST(Matcher, InAndNin) {
  RunCases({
      {R"({"a": {"$in": [1, 2]}})", R"({"a": 2})", true},
      {R"({"a": {"$in": [1, 2]}})", R"({"a": 3})", false},
      {R"({"a": {"$in": [1, 2]}})", R"({"a": [5, 1]})", true},
      {R"({"a": {"$in": [[5, 1]]}})", R"({"a": [5, 1]})", true},
      {R"({"a": {"$in": []}})", R"({"a": 1})", false},
      {R"({"a": {"$in": [{"$regularExpression": {"pattern": "^x", "options": ""}}, 7]}})",
       R"({"a": "xyz"})", true},
      {R"({"a": {"$in": [{"$regularExpression": {"pattern": "^x", "options": ""}}]}})",
       R"({"a": "axy"})", false},
      {R"({"a": {"$in": [{"$regularExpression": {"pattern": "^X", "options": "i"}}]}})",
       R"({"a": ["b", "xb"]})", true},
      {R"({"a": {"$in": [{"b": 1}]}})", R"({"a": {"b": 1}})", true},
      {R"({"a": {"$in": [1.0, "s"]}})", R"({"a": {"$numberLong": "1"}})", true},
      {R"({"a": {"$nin": [1, 2]}})", R"({"a": 3})", true},
      {R"({"a": {"$nin": [1, 2]}})", R"({"a": [3, 2]})", false},
      {R"({"a": {"$nin": []}})", R"({})", true},
  });
}

TEST(Matcher, All) {
  RunCases({
      {R"({"a": {"$all": [1, 2]}})", R"({"a": [2, 3, 1]})", true},
      {R"({"a": {"$all": [1, 2]}})", R"({"a": [2, 3]})", false},
      {R"({"a": {"$all": [1]}})", R"({"a": 1})", true},
      {R"({"a": {"$all": []}})", R"({"a": []})", false},
      {R"({"a": {"$all": [[1, 2]]}})", R"({"a": [1, 2]})", true},
      {R"({"a": {"$all": [[1, 2]]}})", R"({"a": [[1, 2], 3]})", true},
      {R"({"a": {"$all": [{"$regularExpression": {"pattern": "^a", "options": ""}}, "bc"]}})",
       R"({"a": ["ab", "bc"]})", true},
      {R"({"a.b": {"$all": [1, 2]}})", R"({"a": [{"b": 1}, {"b": 2}]})", true},
      {R"({"a": {"$all": [{"$elemMatch": {"b": 1}}, {"$elemMatch": {"c": {"$gt": 2}}}]}})",
       R"({"a": [{"b": 1}, {"c": 5}]})", true},
      {R"({"a": {"$all": [{"$elemMatch": {"b": 1, "c": 5}}]}})", R"({"a": [{"b": 1}, {"c": 5}]})",
       false},
  });
}

// ---------------------------------------------------------------------------
// $exists, $type, $size

TEST(Matcher, Exists) {
  RunCases({
      {R"({"a": {"$exists": true}})", R"({"a": null})", true},
      {R"({"a": {"$exists": true}})", R"({})", false},
      {R"({"a": {"$exists": false}})", R"({})", true},
      {R"({"a": {"$exists": 0}})", R"({"a": 1})", false},
      {R"({"a": {"$exists": "yes"}})", R"({"a": 1})", true},
      {R"({"a.b": {"$exists": true}})", R"({"a": [{"c": 1}, {"b": 1}]})", true},
      {R"({"a.b": {"$exists": true}})", R"({"a": [{"c": 1}]})", false},
      {R"({"a.b": {"$exists": false}})", R"({"a": [1, 2]})", true},
      {R"({"a.1": {"$exists": true}})", R"({"a": [1, 2]})", true},
      {R"({"a.2": {"$exists": true}})", R"({"a": [1, 2]})", false},
      {R"({"a": {"$exists": true}})", R"({"a": []})", true},
  });
}

TEST(Matcher, Type) {
  RunCases({
      {R"({"a": {"$type": "string"}})", R"({"a": "x"})", true},
      {R"({"a": {"$type": 2}})", R"({"a": "x"})", true},
      {R"({"a": {"$type": 2.0}})", R"({"a": "x"})", true},
      {R"({"a": {"$type": "string"}})", R"({"a": 1})", false},
      {R"({"a": {"$type": "number"}})", R"({"a": {"$numberDecimal": "1"}})", true},
      {R"({"a": {"$type": "number"}})", R"({"a": "1"})", false},
      {R"({"a": {"$type": ["string", "int"]}})", R"({"a": 3})", true},
      {R"({"a": {"$type": "long"}})", R"({"a": 3})", false},
      {R"({"a": {"$type": "int"}})", R"({"a": [1.5, 3]})", true},  // any element
      {R"({"a": {"$type": "array"}})", R"({"a": []})", true},      // the array itself
      {R"({"a": {"$type": "array"}})", R"({"a": [1]})", true},
      {R"({"a": {"$type": 4}})", R"({"a": {"b": 1}})", false},
      {R"({"a": {"$type": "object"}})", R"({"a": {"b": 1}})", true},
      {R"({"a": {"$type": "null"}})", R"({})", false},
      {R"({"a": {"$type": "null"}})", R"({"a": null})", true},
      {R"({"a": {"$type": -1}})", R"({"a": {"$minKey": 1}})", true},
      {R"({"a": {"$type": "maxKey"}})", R"({"a": {"$maxKey": 1}})", true},
      {R"({"a": {"$type": "undefined"}})", R"({"a": {"$undefined": true}})", true},
      {R"({"a": {"$type": "regex"}})", R"({"a": {"$regularExpression": {"pattern": "x", "options": ""}}})",
       true},
      {R"({"a.b": {"$type": "bool"}})", R"({"a": [{"b": 1}, {"b": true}]})", true},
  });
}

TEST(Matcher, Size) {
  RunCases({
      {R"({"a": {"$size": 2}})", R"({"a": [1, 2]})", true},
      {R"({"a": {"$size": 2}})", R"({"a": [1]})", false},
      {R"({"a": {"$size": 0}})", R"({"a": []})", true},
      {R"({"a": {"$size": 0}})", R"({})", false},
      {R"({"a": {"$size": 1}})", R"({"a": "x"})", false},
      {R"({"a": {"$size": 2.0}})", R"({"a": [1, 2]})", true},
      // $size sees the array itself, not its elements.
      {R"({"a": {"$size": 2}})", R"({"a": [[1, 2]]})", false},
      {R"({"a.b": {"$size": 2}})", R"({"a": [{"b": [1]}, {"b": [1, 2]}]})", true},
      {R"({"a": {"$not": {"$size": 2}}})", R"({"a": [1]})", true},
  });
}

// ---------------------------------------------------------------------------
// $elemMatch

TEST(Matcher, ElemMatchValueForm) {
  RunCases({
      // One element must satisfy both bounds.
      {R"({"a": {"$elemMatch": {"$gt": 1, "$lt": 5}}})", R"({"a": [0, 3]})", true},
      {R"({"a": {"$elemMatch": {"$gt": 1, "$lt": 5}}})", R"({"a": [0, 7]})", false},
      {R"({"a": {"$elemMatch": {"$gt": 1}}})", R"({"a": 5})", false},  // not an array
      {R"({"a": {"$elemMatch": {"$eq": 5}}})", R"({"a": [[5]]})", false},
      {R"({"a": {"$elemMatch": {"$in": [1, 3]}}})", R"({"a": [2, 3]})", true},
      {R"({"a": {"$elemMatch": {"$not": {"$gt": 2}}}})", R"({"a": [3, 1]})", true},
      {R"({"a": {"$elemMatch": {"$size": 1}}})", R"({"a": [[1, 2], [3]]})", true},
      {R"({"a": {"$elemMatch": {"$elemMatch": {"$gt": 2}}}})", R"({"a": [[1], [3]]})", true},
      {R"({"a.b": {"$elemMatch": {"$gt": 2}}})", R"({"a": [{"b": [1]}, {"b": [3]}]})", true},
      {R"({"a": {"$elemMatch": {"$regex": {"$regularExpression": {"pattern": "^x", "options": ""}}}}})",
       R"({"a": ["ax", "xa"]})", true},
  });
}

TEST(Matcher, ElemMatchObjectForm) {
  RunCases({
      {R"({"a": {"$elemMatch": {"b": 1, "c": 2}}})", R"({"a": [{"b": 1, "c": 2}]})", true},
      // Unlike {"a.b": 1, "a.c": 2}, one element must satisfy the whole filter.
      {R"({"a": {"$elemMatch": {"b": 1, "c": 2}}})", R"({"a": [{"b": 1}, {"c": 2}]})", false},
      {R"({"a.b": 1, "a.c": 2})", R"({"a": [{"b": 1}, {"c": 2}]})", true},
      {R"({"a": {"$elemMatch": {"b": {"$gte": 2}}}})", R"({"a": [{"b": 1}, {"b": [0, 3]}]})", true},
      {R"({"a": {"$elemMatch": {"$or": [{"b": 1}, {"c": 1}]}}})", R"({"a": [{"c": 1}]})", true},
      {R"({"a": {"$elemMatch": {"$and": [{"b": 1}]}}})", R"({"a": [{"b": 2}]})", false},
      // Array elements are documents with fields "0", "1", ...
      {R"({"a": {"$elemMatch": {"0": 1}}})", R"({"a": [[1, 2]]})", true},
      {R"({"a": {"$elemMatch": {"b": 1}}})", R"({"a": {"b": 1}})", false},
      {R"({"a": {"$elemMatch": {"b": null}}})", R"({"a": [{"c": 1}]})", true},
      {R"({"a": {"$elemMatch": {"b": null}}})", R"({"a": [1]})", false},
      // A DBRef-shaped argument is a filter on those fields.
      {R"({"a": {"$elemMatch": {"$ref": "c", "$id": 1}}})", R"({"a": [{"$ref": "c", "$id": 1}]})",
       true},
  });
}

// ---------------------------------------------------------------------------
// Logical operators

TEST(Matcher, AndOrNorNot) {
  RunCases({
      {R"({"$and": [{"a": 1}, {"b": 2}]})", R"({"a": 1, "b": 2})", true},
      {R"({"$and": [{"a": 1}, {"b": 2}]})", R"({"a": 1})", false},
      {R"({"$or": [{"a": 1}, {"b": 2}]})", R"({"b": 2})", true},
      {R"({"$or": [{"a": 1}, {"b": 2}]})", R"({"c": 2})", false},
      {R"({"$nor": [{"a": 1}, {"b": 2}]})", R"({"c": 2})", true},
      {R"({"$nor": [{"a": 1}, {"b": 2}]})", R"({"a": 1})", false},
      {R"({"a": {"$not": {"$gt": 5}}})", R"({"a": 3})", true},
      {R"({"a": {"$not": {"$gt": 5}}})", R"({})", true},
      {R"({"a": {"$not": {"$gt": 5}}})", R"({"a": [3, 6]})", false},
      {R"({"a": {"$not": {"$gt": 1, "$lt": 5}}})", R"({"a": 3})", false},
      {R"({"a": {"$not": {"$gt": 1, "$lt": 5}}})", R"({"a": 7})", true},
      {R"({"a": {"$not": {"$regularExpression": {"pattern": "^x", "options": ""}}}})",
       R"({"a": "xy"})", false},
      {R"({"a": {"$not": {"$regularExpression": {"pattern": "^x", "options": ""}}}})",
       R"({"a": "yx"})", true},
      {R"({"a": {"$not": {"$eq": 5}}})", R"({"a": 4})", true},
      {R"({"$or": [{"a": 1}], "b": 2})", R"({"a": 1, "b": 2})", true},
      {R"({"$and": [{"$or": [{"a": 1}, {"a": 2}]}, {"$nor": [{"b": 1}]}]})", R"({"a": 2, "b": 3})",
       true},
      {R"({"$comment": "ignored", "a": 1})", R"({"a": 1})", true},
      {R"({"$alwaysTrue": 1})", R"({})", true},
      {R"({"$alwaysFalse": 1})", R"({})", false},
  });
}

// ---------------------------------------------------------------------------
// $regex and $mod

TEST(Matcher, RegexLiteralsAndOperator) {
  RunCases({
      {R"({"a": {"$regularExpression": {"pattern": "^ab", "options": ""}}})", R"({"a": "abc"})",
       true},
      {R"({"a": {"$regularExpression": {"pattern": "b", "options": ""}}})", R"({"a": "abc"})",
       true},  // a search, not a full match
      {R"({"a": {"$regularExpression": {"pattern": "^AB", "options": "i"}}})", R"({"a": "abc"})",
       true},
      {R"({"a": {"$regularExpression": {"pattern": "^AB", "options": ""}}})", R"({"a": "abc"})",
       false},
      {R"({"a": {"$regularExpression": {"pattern": "^b", "options": "m"}}})", R"({"a": "a\nb"})",
       true},
      {R"({"a": {"$regularExpression": {"pattern": "^b", "options": ""}}})", R"({"a": "a\nb"})",
       false},
      {R"({"a": {"$regularExpression": {"pattern": "a.b", "options": "s"}}})",
       R"({"a": "a\nb"})", true},
      {R"({"a": {"$regularExpression": {"pattern": "a.b", "options": ""}}})", R"({"a": "a\nb"})",
       false},
      {R"({"a": {"$regularExpression": {"pattern": "a b # comment", "options": "x"}}})",
       R"({"a": "ab"})", true},
      {R"({"a": {"$regularExpression": {"pattern": "^é.$", "options": ""}}})", R"({"a": "éx"})",
       true},  // UTF-8 aware: é is one character
      {R"({"a": {"$regularExpression": {"pattern": "x", "options": ""}}})", R"({"a": ["a", "x"]})",
       true},
      {R"({"a": {"$regularExpression": {"pattern": "1", "options": ""}}})", R"({"a": 1})", false},
      {R"({"a": {"$regularExpression": {"pattern": "x", "options": ""}}})",
       R"({"a": {"$symbol": "x"}})", true},
      // A stored regex matches a regex with the same pattern and flags.
      {R"({"a": {"$regularExpression": {"pattern": "x", "options": "i"}}})",
       R"({"a": {"$regularExpression": {"pattern": "x", "options": "i"}}})", true},
      {R"({"a": {"$regularExpression": {"pattern": "x", "options": "i"}}})",
       R"({"a": {"$regularExpression": {"pattern": "x", "options": ""}}})", false},
      // $eq with a regex operand is literal equality with a regex value.
      {R"({"a": {"$eq": {"$regularExpression": {"pattern": "x", "options": ""}}}})",
       R"({"a": "x"})", false},
      // Operator form (a non-legacy shape, so the JSON reader keeps it).
      {R"({"a": {"$regex": "^a", "$options": "i", "$exists": true}})", R"({"a": "Abc"})", true},
      {R"({"a": {"$options": "i", "$regex": "^a", "$exists": true}})", R"({"a": "Abc"})", true},
      {R"({"a": {"$regex": {"$regularExpression": {"pattern": "^a", "options": "i"}}}})",
       R"({"a": "ABC"})", true},
      {R"({"a": {"$not": {"$regex": "^a", "$options": "", "$exists": true}}})", R"({"a": "b"})",
       true},
  });
}

TEST(Matcher, RegexBuiltWithTheBuilder) {
  // {a: {$regex: "^a", $options: "i"}} exactly, which JSON would read as a
  // legacy regex literal.
  BsonBuilder b;
  b.OpenDocument("a").AppendString("$regex", "^a").AppendString("$options", "i").Close();
  auto expr = ParseMatchExpression(std::move(b).Build());
  ASSERT_TRUE(expr.ok()) << expr.status();
  EXPECT_EQ((*expr)->type(), MatchType::kRegex);
  EXPECT_TRUE((*expr)->Matches(Json(R"({"a": "ABC"})")));
  EXPECT_FALSE((*expr)->Matches(Json(R"({"a": "bAC"})")));
}

Document StringField(std::string_view name, const std::string& value) {
  BsonBuilder b;
  b.AppendString(name, value);
  return std::move(b).Build();
}

TEST(Matcher, RegexMatchesUnderPcre2DefaultLimits) {
  // Issue #34.1: these took the 1e6 match limit and 1e4 depth limit rockdoc
  // used to impose for "no match"; PCRE2's default limits (MongoDB's) match
  // them.
  for (const char* pattern : {"^(?:a|b)*$", "^(a)*$"}) {
    auto expr = Parse(std::string(R"({"a": {"$regex": ")") + pattern + R"("}})");
    auto matched = MatchesOrError(*expr, StringField("a", std::string(5000, 'a')));
    ASSERT_TRUE(matched.ok()) << matched.status();
    EXPECT_TRUE(*matched) << pattern;
  }
  auto expr = Parse(R"({"a": {"$regex": "(.*a){3}x|a$"}})");
  // 190 characters: past what the old match limit allowed (185), well
  // within PCRE2's default one.
  auto matched = MatchesOrError(*expr, StringField("a", std::string(190, 'a')));
  ASSERT_TRUE(matched.ok()) << matched.status();
  EXPECT_TRUE(*matched);
}

TEST(Matcher, RegexReachingALimitIsAnErrorNotANo) {
  // Catastrophic backtracking exhausts even PCRE2's default match limit:
  // the filter fails (51156), in $regex and in $in alike, and the error
  // stays the operation's under a $not.
  const std::string subject = std::string(40, 'a') + "!";
  for (const char* filter : {R"({"a": {"$regex": "(a+)+$"}})",
                             R"({"a": {"$not": {"$in": [1, {"$regularExpression": {"pattern": "(a+)+$", "options": ""}}]}}})"}) {
    auto matched = MatchesOrError(*Parse(filter), StringField("a", subject));
    ASSERT_FALSE(matched.ok()) << filter;
    EXPECT_EQ(static_cast<int>(matched.status().code()), 51156);
    EXPECT_THAT(std::string(matched.status().message()),
                HasSubstr("Error occurred while executing the regular expression in "));
    EXPECT_THAT(std::string(matched.status().message()), HasSubstr("match limit exceeded"));
  }
  // The same pattern decides a short subject.
  auto ok = MatchesOrError(*Parse(R"({"a": {"$regex": "(a+)+$"}})"), Json(R"({"a": "aaaa"})"));
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(*ok);
}

TEST(Matcher, Mod) {
  RunCases({
      {R"({"a": {"$mod": [4, 0]}})", R"({"a": 8})", true},
      {R"({"a": {"$mod": [4, 0]}})", R"({"a": 9})", false},
      {R"({"a": {"$mod": [4, 1]}})", R"({"a": 9.9})", true},  // truncated
      {R"({"a": {"$mod": [4, -1]}})", R"({"a": -9})", true},  // sign of the dividend
      {R"({"a": {"$mod": [4.5, 1]}})", R"({"a": 9})", true},  // divisor truncated to 4
      {R"({"a": {"$mod": [4, 1]}})", R"({"a": {"$numberDecimal": "9.75"}})", true},
      {R"({"a": {"$mod": [4, 1]}})", R"({"a": {"$numberLong": "9"}})", true},
      {R"({"a": {"$mod": [4, 0]}})", R"({"a": "8"})", false},
      {R"({"a": {"$mod": [4, 0]}})", R"({"a": {"$numberDouble": "NaN"}})", false},
      {R"({"a": {"$mod": [4, 0]}})", R"({"a": {"$numberDouble": "Infinity"}})", false},
      {R"({"a": {"$mod": [-1, 0]}})", R"({"a": {"$numberLong": "-9223372036854775808"}})", true},
      {R"({"a": {"$mod": [2, 1]}})", R"({"a": [2, 3]})", true},
  });
}

// ---------------------------------------------------------------------------
// Errors

TEST(MatcherErrors, UnknownOperators) {
  EXPECT_PARSE_ERROR(R"({"a": {"$foo": 1}})", ErrorCode::kBadValue, "unknown operator: $foo");
  EXPECT_PARSE_ERROR(R"({"a": {"$gt": 1, "b": 1}})", ErrorCode::kBadValue,
                     "unknown operator: b");
  EXPECT_PARSE_ERROR(R"({"$foo": 1})", ErrorCode::kBadValue,
                     "unknown top level operator: $foo");
  EXPECT_PARSE_ERROR(R"({"$not": {"a": 1}})", ErrorCode::kBadValue, "use $nor");
  EXPECT_PARSE_ERROR(R"({"a": {"$where": "1"}})", ErrorCode::kBadValue,
                     "$where cannot be applied to a field");
  EXPECT_PARSE_ERROR(R"({"$where": "this.a == 1"})", ErrorCode::kNotImplemented, "$where");
  EXPECT_PARSE_ERROR(R"({"a": {"$geoNear": [1, 2]}})", ErrorCode::kNotImplemented, "$geoNear");
}

// ---------------------------------------------------------------------------
// Bit tests (issue 11 #21): the MongoDB manual's collection and results for
// $bitsAllSet, $bitsAnySet, $bitsAllClear and $bitsAnyClear.

// Which _ids of the manual's collection {_id: 1, a: 54}, {_id: 2, a: 20},
// {_id: 3, a: 20.0}, {_id: 4, a: BinData(0, "Zg==")} match `filter`.
std::vector<int> ManualBitIds(std::string_view filter) {
  static const char* const kDocs[] = {
      R"({"_id": 1, "a": 54})", R"({"_id": 2, "a": 20})", R"({"_id": 3, "a": 20.0})",
      R"({"_id": 4, "a": {"$binary": {"base64": "Zg==", "subType": "00"}}})"};
  auto expr = Parse(filter);
  std::vector<int> ids;
  for (const char* doc : kDocs) {
    Document d = Json(doc);
    if (expr->Matches(d)) ids.push_back(d.Get("_id").Int32());
  }
  return ids;
}

TEST(MatcherBits, ManualExamples) {
  using V = std::vector<int>;
  // The manual writes BinData(0, "MC=="); "MA==" is the canonical base64 of
  // the same byte, 0x30.
  const std::string mc = R"({"$binary": {"base64": "MA==", "subType": "00"}})";  // bits 4, 5
  const std::string ia = R"({"$binary": {"base64": "IA==", "subType": "00"}})";  // bit 5
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAllSet": [1, 5]}})"), (V{1, 4}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAllSet": 50}})"), (V{1}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAllSet": )" + mc + "}}"), (V{1}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAnySet": [1, 5]}})"), (V{1, 4}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAnySet": 35}})"), (V{1, 4}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAnySet": )" + mc + "}}"), (V{1, 2, 3, 4}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAllClear": [1, 5]}})"), (V{2, 3}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAllClear": 35}})"), (V{2, 3}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAllClear": )" + ia + "}}"), (V{2, 3}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAnyClear": [1, 5]}})"), (V{2, 3}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAnyClear": 35}})"), (V{1, 2, 3, 4}));
  EXPECT_EQ(ManualBitIds(R"({"a": {"$bitsAnyClear": )" + mc + "}}"), (V{2, 3, 4}));
}

TEST(MatcherBits, NumbersAreSignExtendedBinDataZeroExtended) {
  RunCases({
      // Two's complement: -5 is ...11111011.
      {R"({"a": {"$bitsAllSet": [0, 1, 3, 63, 200]}})", R"({"a": -5})", true},
      {R"({"a": {"$bitsAnyClear": [2]}})", R"({"a": -5})", true},
      {R"({"a": {"$bitsAllClear": [100]}})", R"({"a": 5})", true},
      {R"({"a": {"$bitsAllClear": [100]}})", R"({"a": -1})", false},
      {R"({"a": {"$bitsAllSet": [62]}})", R"({"a": {"$numberLong": "4611686018427387904"}})", true},
      {R"({"a": {"$bitsAllSet": [1]}})", R"({"a": {"$numberDecimal": "2"}})", true},
      // BinData past its length is zero.
      {R"({"a": {"$bitsAllClear": [8, 100]}})", R"({"a": {"$binary": {"base64": "/w==", "subType": "00"}}})", true},
      {R"({"a": {"$bitsAnySet": [7]}})", R"({"a": {"$binary": {"base64": "/w==", "subType": "00"}}})", true},
      // Not integers representable as int64, or not numbers: never.
      {R"({"a": {"$bitsAllClear": [0]}})", R"({"a": 2.5})", false},
      {R"({"a": {"$bitsAllClear": [0]}})", R"({"a": {"$numberDouble": "NaN"}})", false},
      {R"({"a": {"$bitsAllClear": [0]}})", R"({"a": 1e19})", false},
      {R"({"a": {"$bitsAllClear": [0]}})", R"({"a": "x"})", false},
      {R"({"a": {"$bitsAllClear": [0]}})", R"({})", false},
      // Arrays: any element.
      {R"({"a": {"$bitsAllSet": [2]}})", R"({"a": ["x", 1, 4]})", true},
      // No positions: all-tests hold, any-tests do not.
      {R"({"a": {"$bitsAllSet": []}})", R"({"a": 1})", true},
      {R"({"a": {"$bitsAnySet": []}})", R"({"a": 1})", false},
      {R"({"a": {"$bitsAnySet": 0}})", R"({"a": 1})", false},
  });
  EXPECT_EQ(ToJson(Parse(R"({"a": {"$bitsAnySet": 6}})")->Serialize()),
            ToJson(Json(R"({"a": {"$bitsAnySet": [1, 2]}})")));
}

TEST(MatcherBits, ParseErrors) {
  EXPECT_PARSE_ERROR(R"({"a": {"$bitsAllClear": "123"}})", ErrorCode::kBadValue,
                     "a takes an Array, a number, or a BinData but received: $bitsAllClear: ");
  EXPECT_PARSE_ERROR(R"({"a": {"$bitsAllClear": 1.2}})", ErrorCode::kFailedToParse,
                     "Expected an integer: $bitsAllClear: 1.2");
  EXPECT_PARSE_ERROR(R"({"a": {"$bitsAllSet": -1}})", ErrorCode::kFailedToParse,
                     "Expected a non-negative number in: $bitsAllSet: -1");
  EXPECT_PARSE_ERROR(R"({"a": {"$bitsAnySet": {"$numberDouble": "NaN"}}})", ErrorCode::kFailedToParse,
                     "Expected an integer, but found NaN in");
  EXPECT_PARSE_ERROR(R"({"a": {"$bitsAnySet": 1e300}})", ErrorCode::kFailedToParse,
                     "Cannot represent as a 64-bit integer");
  EXPECT_PARSE_ERROR(R"({"a": {"$bitsAnySet": [1, true]}})", ErrorCode::kBadValue,
                     "Failed to parse bit position. Expected a number in: 1: true");
  EXPECT_PARSE_ERROR(R"({"a": {"$bitsAnySet": [-1]}})", ErrorCode::kBadValue,
                     "Failed to parse bit position. Expected a non-negative number in: 0: -1");
  EXPECT_PARSE_ERROR(R"({"a": {"$bitsAnySet": [2.5]}})", ErrorCode::kBadValue,
                     "Failed to parse bit position. Expected an integer: 0: 2.5");
  EXPECT_PARSE_ERROR(R"({"a": {"$bitsAnySet": [4294967296]}})", ErrorCode::kBadValue,
                     "Failed to parse bit position. Cannot represent 0: ");
}

TEST(MatcherErrors, LogicalOperators) {
  EXPECT_PARSE_ERROR(R"({"$and": []})", ErrorCode::kBadValue,
                     "$and/$or/$nor must be a nonempty array");
  EXPECT_PARSE_ERROR(R"({"$or": []})", ErrorCode::kBadValue,
                     "$and/$or/$nor must be a nonempty array");
  EXPECT_PARSE_ERROR(R"({"$nor": {"a": 1}})", ErrorCode::kBadValue, "$nor must be an array");
  EXPECT_PARSE_ERROR(R"({"$or": [1]})", ErrorCode::kBadValue,
                     "$or/$and/$nor entries need to be full objects");
  EXPECT_PARSE_ERROR(R"({"$or": [{"a": {"$bad": 1}}]})", ErrorCode::kBadValue,
                     "unknown operator: $bad");
  EXPECT_PARSE_ERROR(R"({"a": {"$not": 5}})", ErrorCode::kBadValue,
                     "$not needs a regex or a document");
  EXPECT_PARSE_ERROR(R"({"a": {"$not": {}}})", ErrorCode::kBadValue, "$not cannot be empty");
  EXPECT_PARSE_ERROR(R"({"a": {"$not": {"b": 1}}})", ErrorCode::kBadValue,
                     "unknown operator: b");
  EXPECT_PARSE_ERROR(R"({"$alwaysTrue": 2})", ErrorCode::kFailedToParse,
                     "$alwaysTrue must be an integer value of 1");
}

TEST(MatcherErrors, OperatorArguments) {
  EXPECT_PARSE_ERROR(R"({"a": {"$in": 1}})", ErrorCode::kBadValue, "$in needs an array");
  EXPECT_PARSE_ERROR(R"({"a": {"$nin": {"x": 1}}})", ErrorCode::kBadValue, "$nin needs an array");
  EXPECT_PARSE_ERROR(R"({"a": {"$in": [{"$gt": 1}]}})", ErrorCode::kBadValue,
                     "cannot nest $ under $in");
  EXPECT_PARSE_ERROR(R"({"a": {"$in": [{"$undefined": true}]}})", ErrorCode::kBadValue,
                     "cannot be undefined");
  EXPECT_PARSE_ERROR(R"({"a": {"$all": 1}})", ErrorCode::kBadValue, "$all needs an array");
  EXPECT_PARSE_ERROR(R"({"a": {"$all": [{"$elemMatch": {"b": 1}}, 5]}})", ErrorCode::kBadValue,
                     "$all/$elemMatch has to be consistent");
  EXPECT_PARSE_ERROR(R"({"a": {"$all": [1, {"$gt": 5}]}})", ErrorCode::kBadValue,
                     "no $ expressions in $all");
  EXPECT_PARSE_ERROR(R"({"a": {"$size": "2"}})", ErrorCode::kBadValue,
                     "Failed to parse $size. Expected a number");
  EXPECT_PARSE_ERROR(R"({"a": {"$size": -1}})", ErrorCode::kBadValue, "Failed to parse $size");
  EXPECT_PARSE_ERROR(R"({"a": {"$size": 2.5}})", ErrorCode::kBadValue, "Expected an integer");
  EXPECT_PARSE_ERROR(R"({"a": {"$elemMatch": 1}})", ErrorCode::kBadValue,
                     "$elemMatch needs an Object");
  EXPECT_PARSE_ERROR(R"({"a": {"$eq": {"$undefined": true}}})", ErrorCode::kBadValue,
                     "cannot compare to undefined");
  EXPECT_PARSE_ERROR(R"({"a": {"$undefined": true}})", ErrorCode::kBadValue,
                     "cannot compare to undefined");
  EXPECT_PARSE_ERROR(R"({"a": {"$gt": {"$regularExpression": {"pattern": "x", "options": ""}}}})",
                     ErrorCode::kBadValue, "Can't have RegEx as arg to predicate over field 'a'");
  EXPECT_PARSE_ERROR(R"({"a": {"$ne": {"$regularExpression": {"pattern": "x", "options": ""}}}})",
                     ErrorCode::kBadValue, "Can't have regex as arg to $ne.");
}

TEST(MatcherErrors, TypeArguments) {
  EXPECT_PARSE_ERROR(R"({"a": {"$type": "foo"}})", ErrorCode::kBadValue,
                     "Unknown type name alias: foo");
  EXPECT_PARSE_ERROR(R"({"a": {"$type": 99}})", ErrorCode::kBadValue,
                     "Invalid numerical type code: 99");
  EXPECT_PARSE_ERROR(R"({"a": {"$type": 0}})", ErrorCode::kBadValue,
                     "Invalid numerical type code: 0");
  EXPECT_PARSE_ERROR(R"({"a": {"$type": 2.5}})", ErrorCode::kBadValue,
                     "Invalid numerical type code");
  EXPECT_PARSE_ERROR(R"({"a": {"$type": true}})", ErrorCode::kTypeMismatch,
                     "type must be represented as a number or a string");
  EXPECT_PARSE_ERROR(R"({"a": {"$type": []}})", ErrorCode::kFailedToParse,
                     "$type must match at least one type");
}

TEST(MatcherErrors, RegexAndModArguments) {
  EXPECT_PARSE_ERROR(R"({"a": {"$regex": 5}})", ErrorCode::kBadValue, "$regex has to be a string");
  EXPECT_PARSE_ERROR(R"({"a": {"$options": "i"}})", ErrorCode::kBadValue,
                     "$options needs a $regex");
  EXPECT_PARSE_ERROR(R"({"a": {"$regex": "(", "$options": "", "$exists": true}})",
                     static_cast<ErrorCode>(51091), "Regular expression is invalid");
  EXPECT_PARSE_ERROR(R"({"a": {"$regularExpression": {"pattern": "x", "options": "z"}}})",
                     static_cast<ErrorCode>(51108), "invalid flag in regex options: z");
  EXPECT_PARSE_ERROR(
      R"({"a": {"$options": "i", "$regex": {"$regularExpression": {"pattern": "x", "options": "m"}}}})",
      static_cast<ErrorCode>(51074), "options set in both $regex and $options");
  EXPECT_PARSE_ERROR(R"({"a": {"$mod": 4}})", ErrorCode::kBadValue,
                     "malformed mod, needs to be an array");
  EXPECT_PARSE_ERROR(R"({"a": {"$mod": [4]}})", ErrorCode::kBadValue,
                     "malformed mod, not enough elements");
  EXPECT_PARSE_ERROR(R"({"a": {"$mod": [4, 1, 2]}})", ErrorCode::kBadValue,
                     "malformed mod, too many elements");
  EXPECT_PARSE_ERROR(R"({"a": {"$mod": ["4", 1]}})", ErrorCode::kBadValue,
                     "malformed mod, divisor not a number");
  EXPECT_PARSE_ERROR(R"({"a": {"$mod": [4, "1"]}})", ErrorCode::kBadValue,
                     "malformed mod, remainder not a number");
  EXPECT_PARSE_ERROR(R"({"a": {"$mod": [0, 1]}})", ErrorCode::kBadValue, "divisor cannot be 0");
  EXPECT_PARSE_ERROR(R"({"a": {"$mod": [{"$numberDouble": "NaN"}, 1]}})", ErrorCode::kBadValue,
                     "malformed mod, divisor value is invalid");
}

// ---------------------------------------------------------------------------
// Tree shape, details, serialization

TEST(MatcherTree, ShapesAreIntrospectable) {
  auto e = Parse(R"({"a.b": {"$gt": 1, "$lt": 5}, "c": {"$in": [3, 1, 2]}})");
  ASSERT_EQ(e->type(), MatchType::kAnd);
  ASSERT_EQ(e->num_children(), 3u);
  EXPECT_EQ(e->child(0)->type(), MatchType::kGt);
  EXPECT_EQ(e->child(0)->path(), "a.b");
  EXPECT_EQ(e->child(0)->operand().Int32(), 1);
  EXPECT_EQ(e->child(1)->type(), MatchType::kLt);
  const auto* in = dynamic_cast<const InMatchExpression*>(e->child(2));
  ASSERT_NE(in, nullptr);
  ASSERT_EQ(in->equalities().size(), 3u);
  EXPECT_EQ(in->equalities()[0].Int32(), 1);  // sorted for point intervals
  EXPECT_EQ(in->equalities()[2].Int32(), 3);

  auto ne = Parse(R"({"a": {"$ne": 1}})");
  ASSERT_EQ(ne->type(), MatchType::kNot);
  EXPECT_EQ(ne->child(0)->type(), MatchType::kEq);
  EXPECT_EQ(Parse(R"({"a": {"$exists": false}})")->child(0)->type(), MatchType::kExists);
  EXPECT_EQ(Parse(R"({"a": {"$all": []}})")->type(), MatchType::kAlwaysFalse);
  EXPECT_EQ(Parse(R"({"a": {"$elemMatch": {"$gt": 1}}})")->type(), MatchType::kElemMatchValue);
  EXPECT_EQ(Parse(R"({"a": {"$elemMatch": {"b": 1}}})")->type(), MatchType::kElemMatchObject);
  EXPECT_EQ(Parse(R"({"a": {"$elemMatch": {"$or": [{"b": 1}]}}})")->type(),
            MatchType::kElemMatchObject);
  auto empty = Parse("{}");
  EXPECT_EQ(empty->type(), MatchType::kAnd);
  EXPECT_EQ(empty->num_children(), 0u);
}

TEST(MatcherTree, ConstantsOutliveTheFilterBytes) {
  std::unique_ptr<MatchExpression> e;
  {
    Document filter = Json(R"({"a": {"$in": ["long string value", 2]}, "b": "text"})");
    e = std::move(ParseMatchExpression(filter)).value();
  }
  EXPECT_TRUE(e->Matches(Json(R"({"a": "long string value", "b": "text"})")));
  EXPECT_EQ(e->child(1)->operand().String(), "text");
}

TEST(MatcherTree, DebugString) {
  EXPECT_EQ(Parse(R"({"a": 1, "b": {"$gt": 2}})")->DebugString(),
            "$and\n    a $eq 1\n    b $gt 2\n");
  EXPECT_EQ(Parse(R"({"a": {"$not": {"$lt": 2}}})")->DebugString(), "$not\n    a $lt 2\n");
}

TEST(MatcherTree, SerializeGivesTheNormalisedFilter) {
  auto serialized = [](std::string_view filter) { return ToJson(Parse(filter)->Serialize()); };
  EXPECT_EQ(serialized(R"({"a": 1})"), ToJson(Json(R"({"a": {"$eq": 1}})")));
  EXPECT_EQ(serialized(R"({"a": 1, "b": {"$gt": 2}})"),
            ToJson(Json(R"({"$and": [{"a": {"$eq": 1}}, {"b": {"$gt": 2}}]})")));
  EXPECT_EQ(serialized(R"({"a": {"$ne": 1}})"), ToJson(Json(R"({"a": {"$not": {"$eq": 1}}})")));
  EXPECT_EQ(serialized(R"({"a": {"$nin": [2, 1]}})"),
            ToJson(Json(R"({"a": {"$not": {"$in": [1, 2]}}})")));
  EXPECT_EQ(serialized(R"({"a": {"$exists": false}})"),
            ToJson(Json(R"({"a": {"$not": {"$exists": true}}})")));
  EXPECT_EQ(serialized("{}"), "{}");
  EXPECT_EQ(serialized(R"({"$or": [{"a": 1}, {"b": {"$size": 2}}]})"),
            ToJson(Json(R"({"$or": [{"a": {"$eq": 1}}, {"b": {"$size": 2}}]})")));
  EXPECT_EQ(serialized(R"({"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}})"),
            ToJson(Json(R"({"a": {"$elemMatch": {"$gt": 1, "$lt": 3}}})")));
  EXPECT_EQ(serialized(R"({"a": {"$type": "string"}})"), ToJson(Json(R"({"a": {"$type": 2}})")));
  EXPECT_EQ(serialized(R"({"a": {"$not": {"$gt": 1, "$lt": 3}}})"),
            ToJson(Json(R"({"a": {"$not": {"$gt": 1, "$lt": 3}}})")));
}

// Found by fuzz/match_expression_fuzz: a long $in holding equal values of
// different types (0 and 0.0) serialized them in an order that depended on
// the unstable sort, so serializing the reparsed filter changed it. As in
// MongoDB, the list is sorted without repeats; the first of equal values
// stays.
TEST(MatcherTree, SerializedInListIsSortedWithoutRepeats) {
  auto serialized = [](std::string_view filter) { return ToJson(Parse(filter)->Serialize()); };
  EXPECT_EQ(serialized(R"({"a": {"$in": [2, 1, {"$numberLong": "1"}, 1.0, 2]}})"),
            ToJson(Json(R"({"a": {"$in": [1, 2]}})")));
  std::string many = R"({"a": {"$in": [0.0)";
  for (int i = 0; i < 40; ++i) many += ", " + std::to_string(i % 5) + (i % 2 ? ".0" : "");
  many += "]}}";
  const std::string once = serialized(many);
  EXPECT_EQ(once, ToJson(Json(R"({"a": {"$in": [0.0, 1.0, 2, 3.0, 4]}})")));
  EXPECT_EQ(ToJson(ParseMatchExpression(Json(once)).value()->Serialize()), once);
  EXPECT_TRUE(Parse(many)->Matches(Json(R"({"a": 3})")));
  EXPECT_FALSE(Parse(many)->Matches(Json(R"({"a": 5})")));
}

TEST(MatcherDetails, RecordsTheFirstArrayPosition) {
  auto position = [](std::string_view filter, std::string_view doc) -> int {
    MatchDetails details;
    details.RequestElemMatchKey();
    if (!Parse(filter)->Matches(Json(doc), &details)) return -2;
    return details.has_elem_match_key() ? static_cast<int>(details.elem_match_key()) : -1;
  };
  EXPECT_EQ(position(R"({"a": 6})", R"({"a": [5, 6]})"), 1);
  EXPECT_EQ(position(R"({"a.b": 5})", R"({"a": [{"b": 1}, {"b": 5}]})"), 1);
  // The outermost array wins.
  EXPECT_EQ(position(R"({"a.b": 2})", R"({"a": [{"b": [0]}, {"b": [1, 2]}]})"), 1);
  EXPECT_EQ(position(R"({"a": 5})", R"({"a": 5})"), -1);               // no array
  EXPECT_EQ(position(R"({"a": [5, 6]})", R"({"a": [5, 6]})"), -1);     // whole array
  EXPECT_EQ(position(R"({"a.1": 6})", R"({"a": [5, 6]})"), -1);        // positional
  EXPECT_EQ(position(R"({"a": {"$elemMatch": {"b": 2}}})", R"({"a": [{"b": 1}, {"b": 2}]})"), 1);
  EXPECT_EQ(position(R"({"a": {"$elemMatch": {"$gt": 4}}})", R"({"a": [1, 5]})"), 1);
  EXPECT_EQ(position(R"({"x": 1, "a": {"$gte": 3}})", R"({"x": 1, "a": [1, 2, 3]})"), 2);
  EXPECT_EQ(position(R"({"a": 9})", R"({"a": [1]})"), -2);
  // Issue 11 #15: a one-clause $or (or $and) is its clause, as after
  // MongoDB's optimizer, so it records the position like the clause alone.
  EXPECT_EQ(position(R"({"$or": [{"a.x": 4}]})", R"({"a": [{"x": 1}, {"x": 4}]})"), 1);
  EXPECT_EQ(position(R"({"$and": [{"a.x": 4}]})", R"({"a": [{"x": 1}, {"x": 4}]})"), 1);
  EXPECT_EQ(position(R"({"$or": [{"$or": [{"a": 6}]}]})", R"({"a": [5, 6]})"), 1);
  // Several clauses: which one's position is meant is ambiguous: none.
  EXPECT_EQ(position(R"({"$or": [{"a": 6}, {"b": 1}]})", R"({"a": [5, 6]})"), -1);
  // $nor records nothing (MongoDB does not support positional with it).
  EXPECT_EQ(position(R"({"$nor": [{"a": 7}]})", R"({"a": [5, 6]})"), -1);

  // Not recorded unless requested.
  MatchDetails quiet;
  EXPECT_TRUE(Parse(R"({"a": 6})")->Matches(Json(R"({"a": [5, 6]})"), &quiet));
  EXPECT_FALSE(quiet.has_elem_match_key());
}

// ---------------------------------------------------------------------------
// Property test: the matcher agrees with a naive reference evaluator.

// Every value a path reaches, written from MongoDB's documented rules as
// plainly as possible: collect everything, decide afterwards. A missing
// value is a default Element.
void Reach(const Element& v, const std::vector<std::string>& parts, size_t i, bool expand_leaf,
           std::vector<Element>* out) {
  if (i == parts.size()) {
    if (v.type() == BsonType::kArray && expand_leaf) {
      for (const Element& elt : v.Array()) out->push_back(elt);
    }
    out->push_back(v);
    return;
  }
  if (v.type() == BsonType::kDocument) {
    Reach(v.Document().Get(parts[i]), parts, i + 1, expand_leaf, out);
    return;
  }
  if (v.type() != BsonType::kArray) {
    out->push_back(Element());  // missing, or a scalar in the way
    return;
  }
  // Array with more path: every document element, looked up by name...
  for (const Element& elt : v.Array()) {
    if (elt.type() == BsonType::kDocument) {
      Reach(elt.Document().Get(parts[i]), parts, i + 1, expand_leaf, out);
    }
  }
  // ...plus the element at the position the part names, if it is one.
  bool digits = !parts[i].empty() &&
                parts[i].find_first_not_of("0123456789") == std::string::npos;
  if (!digits) return;
  for (const Element& elt : v.Array()) {
    if (elt.key() != parts[i]) continue;
    if (i + 1 == parts.size()) {
      out->push_back(elt);  // not expanded
    } else if (elt.type() == BsonType::kDocument || elt.type() == BsonType::kArray) {
      Reach(elt, parts, i + 1, expand_leaf, out);
    }
  }
}

std::vector<Element> ReachAll(DocumentView doc, const std::string& path, bool expand_leaf) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  std::vector<Element> out;
  Reach(doc.Get(parts[0]), parts, 1, expand_leaf, &out);
  return out;
}

bool IsNaNValue(const Element& e) {
  return (e.type() == BsonType::kDouble && std::isnan(e.Double())) ||
         (e.type() == BsonType::kDecimal128 && e.Decimal().IsNaN());
}

// One value against one comparison, straight from the manual's rules.
bool RefCompare(const std::string& op, const Element& v, const Element& c) {
  const bool missing = !v.ok();
  if (c.type() == BsonType::kNull) {
    bool nullish = missing || v.type() == BsonType::kNull;
    if (op == "$eq" || op == "$gte" || op == "$lte") return nullish;
    return false;
  }
  if (c.type() == BsonType::kMinKey) {
    if (v.type() == BsonType::kMinKey) return op == "$eq" || op == "$gte" || op == "$lte";
    return op == "$gt" || op == "$gte";
  }
  if (c.type() == BsonType::kMaxKey) {
    if (v.type() == BsonType::kMaxKey) return op == "$eq" || op == "$gte" || op == "$lte";
    return op == "$lt" || op == "$lte";
  }
  if (missing) return false;
  if (CanonicalTypeRank(v.type()) != CanonicalTypeRank(c.type())) return false;
  if (op != "$eq" && (IsNaNValue(v) || IsNaNValue(c))) {
    return (op == "$gte" || op == "$lte") && IsNaNValue(v) && IsNaNValue(c);
  }
  int cmp = CompareValues(v, c);
  if (op == "$eq") return cmp == 0;
  if (op == "$gt") return cmp > 0;
  if (op == "$gte") return cmp >= 0;
  if (op == "$lt") return cmp < 0;
  return cmp <= 0;
}

// A reference predicate: a closure over the document.
using RefPredicate = std::function<bool(DocumentView)>;
// A reference test of one value (for $elemMatch's value form and $not).
using RefValueTest = std::function<bool(const Element&)>;

class FilterGenerator {
 public:
  FilterGenerator(uint64_t seed, const std::vector<Document>* docs)
      : rd_(seed), docs_(docs) {}

  // Appends a random filter's fields to `b` and returns its reference.
  RefPredicate Filter(BsonBuilder* b, int depth) {
    int n = Uniform(1, 2);
    std::vector<RefPredicate> parts;
    for (int i = 0; i < n; ++i) parts.push_back(Clause(b, depth));
    return [parts](DocumentView d) {
      for (const auto& p : parts) {
        if (!p(d)) return false;
      }
      return true;
    };
  }

  Document Constants() {
    BsonBuilder b;
    for (int i = 0; i < 8; ++i) rd_.AppendValue(&b, "v", 1);
    return std::move(b).Build();
  }

 private:
  int Uniform(int lo, int hi) { return rd_.Uniform(lo, hi); }

  std::string Path() {
    static const char* const kPaths[] = {"a", "b", "a.b", "a.0", "a.b.c", "b.1"};
    return kPaths[Uniform(0, 5)];
  }

  // A constant: often one that occurs in the documents, so that filters
  // match a fair share of them.
  Element Constant(bool allow_regex) {
    for (;;) {
      Element c;
      if (Uniform(0, 1) == 0 && !docs_->empty()) {
        const Document& d = (*docs_)[Uniform(0, static_cast<int>(docs_->size()) - 1)];
        std::vector<Element> values = ReachAll(d, Path(), true);
        if (values.empty()) continue;  // e.g. "a.b" over an array of scalars
        c = values[Uniform(0, static_cast<int>(values.size()) - 1)];
      } else {
        pool_.push_back(Constants());
        int k = Uniform(0, 7);
        auto it = pool_.back().begin();
        while (k-- > 0) ++it;
        c = *it;
      }
      if (!c.ok() || c.type() == BsonType::kUndefined) continue;
      if (!allow_regex && c.type() == BsonType::kRegex) continue;
      // An operator-looking document would change the filter's meaning.
      if (c.type() == BsonType::kDocument && !c.Document().empty() &&
          (*c.Document().begin()).key()[0] == '$') {
        continue;
      }
      return c;
    }
  }

  // A value-level test, appended as operator fields of the open document.
  RefValueTest ValueOp(BsonBuilder* b) {
    static const char* const kCmp[] = {"$eq", "$gt", "$gte", "$lt", "$lte"};
    switch (Uniform(0, 3)) {
      case 0:
      case 1: {
        std::string op = kCmp[Uniform(0, 4)];
        Element c = Constant(op == "$eq");
        b->AppendElementAs(op, c);
        return [op, c](const Element& v) { return RefCompare(op, v, c); };
      }
      case 2: {
        std::vector<Element> list = ConstantList();
        b->OpenArray("$in");
        for (const Element& c : list) b->AppendElementAs("", c);
        b->Close();
        return [list](const Element& v) {
          for (const Element& c : list) {
            if (RefCompare("$eq", v, c)) return true;
          }
          return false;
        };
      }
      default: {
        static const char* const kAliases[] = {"double", "string", "object", "array", "int",
                                               "long", "null", "bool", "number", "decimal"};
        std::string alias = kAliases[Uniform(0, 9)];
        b->AppendString("$type", alias);
        return [alias](const Element& v) {
          if (!v.ok()) return false;
          if (alias == "number") return v.IsNumber();
          return BsonTypeAlias(v.type()) == alias;
        };
      }
    }
  }

  std::vector<Element> ConstantList() {
    std::vector<Element> list;
    int n = Uniform(0, 3);
    for (int i = 0; i < n; ++i) list.push_back(Constant(false));
    return list;
  }

  RefPredicate Clause(BsonBuilder* b, int depth) {
    int kind = Uniform(0, depth > 0 ? 13 : 10);
    std::string path = Path();
    auto any = [path](bool expand, RefValueTest test) {
      return [path, expand, test](DocumentView d) {
        for (const Element& v : ReachAll(d, path, expand)) {
          if (test(v)) return true;
        }
        return false;
      };
    };
    switch (kind) {
      case 0: {  // {path: value}
        Element c = Constant(false);
        b->AppendElementAs(path, c);
        return any(true, [c](const Element& v) { return RefCompare("$eq", v, c); });
      }
      case 1:
      case 2: {  // {path: {$op: value}} with one value-level operator
        b->OpenDocument(path);
        RefValueTest t = ValueOp(b);
        b->Close();
        return any(true, t);
      }
      case 3: {  // $ne
        Element c = Constant(false);
        b->OpenDocument(path).AppendElementAs("$ne", c).Close();
        auto eq = any(true, [c](const Element& v) { return RefCompare("$eq", v, c); });
        return [eq](DocumentView d) { return !eq(d); };
      }
      case 4: {  // $nin
        std::vector<Element> list = ConstantList();
        b->OpenDocument(path).OpenArray("$nin");
        for (const Element& c : list) b->AppendElementAs("", c);
        b->Close().Close();
        auto in = any(true, [list](const Element& v) {
          for (const Element& c : list) {
            if (RefCompare("$eq", v, c)) return true;
          }
          return false;
        });
        return [in](DocumentView d) { return !in(d); };
      }
      case 5: {  // $exists
        bool want = Uniform(0, 1) == 1;
        b->OpenDocument(path).AppendBool("$exists", want).Close();
        auto exists = any(true, [](const Element& v) { return v.ok(); });
        return [exists, want](DocumentView d) { return exists(d) == want; };
      }
      case 6: {  // $size
        int n = Uniform(0, 3);
        b->OpenDocument(path).AppendInt32("$size", n).Close();
        return any(false, [n](const Element& v) {
          if (v.type() != BsonType::kArray) return false;
          int count = 0;
          for (const Element& e : v.Array()) count += e.ok() ? 1 : 0;
          return count == n;
        });
      }
      case 7: {  // $all of plain values
        std::vector<Element> list = ConstantList();
        b->OpenDocument(path).OpenArray("$all");
        for (const Element& c : list) b->AppendElementAs("", c);
        b->Close().Close();
        return [list, path](DocumentView d) {
          if (list.empty()) return false;
          std::vector<Element> values = ReachAll(d, path, true);
          for (const Element& c : list) {
            bool found = false;
            for (const Element& v : values) found = found || RefCompare("$eq", v, c);
            if (!found) return false;
          }
          return true;
        };
      }
      case 8: {  // $elemMatch, value form
        b->OpenDocument(path).OpenDocument("$elemMatch");
        int n = Uniform(1, 2);
        std::vector<RefValueTest> tests;
        for (int i = 0; i < n; ++i) tests.push_back(ValueOp(b));
        b->Close().Close();
        return any(false, [tests](const Element& v) {
          if (v.type() != BsonType::kArray) return false;
          for (const Element& elt : v.Array()) {
            bool all = true;
            for (const auto& t : tests) all = all && t(elt);
            if (all) return true;
          }
          return false;
        });
      }
      case 9: {  // $not of a value-level operator
        b->OpenDocument(path).OpenDocument("$not");
        RefValueTest t = ValueOp(b);
        b->Close().Close();
        auto pos = any(true, t);
        return [pos](DocumentView d) { return !pos(d); };
      }
      case 10: {  // two operators on one path: both must hold (maybe on different values)
        b->OpenDocument(path);
        RefValueTest t1 = ValueOp(b);
        RefValueTest t2 = ValueOp(b);
        b->Close();
        auto p1 = any(true, t1), p2 = any(true, t2);
        return [p1, p2](DocumentView d) { return p1(d) && p2(d); };
      }
      case 11: {  // $elemMatch, object form
        b->OpenDocument(path).OpenDocument("$elemMatch");
        RefPredicate sub = Filter(b, depth - 1);
        b->Close().Close();
        return any(false, [sub](const Element& v) {
          if (v.type() != BsonType::kArray) return false;
          for (const Element& elt : v.Array()) {
            if (elt.IsContainer() && sub(elt.Document())) return true;
          }
          return false;
        });
      }
      default: {  // $and / $or / $nor
        static const char* const kOps[] = {"$and", "$or", "$nor"};
        std::string op = kOps[kind - 12 + Uniform(0, 1)];
        int n = Uniform(1, 3);
        std::vector<RefPredicate> subs;
        b->OpenArray(op);
        for (int i = 0; i < n; ++i) {
          b->OpenDocument("");
          subs.push_back(Filter(b, depth - 1));
          b->Close();
        }
        b->Close();
        return [op, subs](DocumentView d) {
          int hits = 0;
          for (const auto& s : subs) hits += s(d) ? 1 : 0;
          if (op == "$and") return hits == static_cast<int>(subs.size());
          if (op == "$or") return hits > 0;
          return hits == 0;
        };
      }
    }
  }

  test::RandomDocuments rd_;
  const std::vector<Document>* docs_;
  std::deque<Document> pool_;  // keeps drawn constants alive
};

// Documents shaped for the filter paths: fields a, b, c, "0", "1", with
// documents and arrays (arrays of arrays included) far more often than in
// test::RandomDocuments, and scalars of every type at the leaves.
void AppendShaped(test::RandomDocuments* rd, BsonBuilder* b, const std::string& key, int depth) {
  static const char* const kKeys[] = {"a", "b", "c", "0", "1"};
  int kind = depth >= 3 ? 0 : rd->Uniform(0, 4);
  if (kind <= 1) {
    rd->AppendValue(b, key, 1000);  // beyond its max depth: a scalar
  } else if (kind == 2) {
    b->OpenDocument(key);
    int n = rd->Uniform(0, 3);
    for (int i = 0; i < n; ++i) AppendShaped(rd, b, kKeys[rd->Uniform(0, 4)], depth + 1);
    b->Close();
  } else {
    b->OpenArray(key);
    int n = rd->Uniform(0, 3);
    for (int i = 0; i < n; ++i) AppendShaped(rd, b, "", depth + 1);
    b->Close();
  }
}

TEST(MatcherProperty, AgreesWithNaiveReference) {
  test::RandomDocuments docs_gen(20240601, 3, 6);
  std::vector<Document> docs;
  for (int i = 0; i < 150; ++i) docs.push_back(docs_gen.Next());
  for (int i = 0; i < 250; ++i) {
    BsonBuilder b;
    int n = docs_gen.Uniform(1, 3);
    for (int f = 0; f < n; ++f) AppendShaped(&docs_gen, &b, f == 0 ? "a" : "b", 0);
    docs.push_back(std::move(b).Build());
  }
  FilterGenerator gen(7, &docs);
  int filters = 0, matches = 0, checks = 0;
  for (int f = 0; f < 1500; ++f) {
    BsonBuilder b;
    RefPredicate ref = gen.Filter(&b, 2);
    Document filter = std::move(b).Build();
    auto expr = ParseMatchExpression(filter);
    ASSERT_TRUE(expr.ok()) << expr.status() << " for " << ToJson(filter);
    // The serialized form must mean the same thing.
    auto reparsed = ParseMatchExpression((*expr)->Serialize());
    ASSERT_TRUE(reparsed.ok()) << reparsed.status() << " for " << ToJson((*expr)->Serialize());
    ++filters;
    for (const Document& d : docs) {
      bool want = ref(d);
      bool got = (*expr)->Matches(d);
      ++checks;
      matches += got ? 1 : 0;
      ASSERT_EQ(got, want) << "filter " << ToJson(filter) << "\ndoc " << ToJson(d);
      ASSERT_EQ((*reparsed)->Matches(d), want)
          << "serialized " << ToJson((*expr)->Serialize()) << "\ndoc " << ToJson(d);
    }
  }
  // The generator must exercise both outcomes substantially.
  EXPECT_GT(matches, checks / 20);
  EXPECT_LT(matches, checks - checks / 20);
  EXPECT_EQ(filters, 1500);
}

}  // namespace
}  // namespace rockdoc

// $jsonSchema (query/json_schema.h): each keyword against hand-worked
// cases, parse errors with MongoDB's codes, the error details MongoDB
// reports, and properties checked against an independent truth: the same
// constraint written with ordinary query operators, over random documents.
#include "query/json_schema.h"

#include <gtest/gtest.h>

#include <random>

#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

bool SchemaMatches(std::string_view schema, std::string_view doc) {
  auto expr = ParseMatchExpression(Json(std::string("{\"$jsonSchema\": ") + std::string(schema) + "}"));
  EXPECT_TRUE(expr.ok()) << schema << ": " << expr.status();
  if (!expr.ok()) return false;
  return (*expr)->Matches(Json(doc));
}

Status ParseSchema(std::string_view schema) {
  return ParseMatchExpression(Json(std::string("{\"$jsonSchema\": ") + std::string(schema) + "}"))
      .status();
}

TEST(JsonSchema, PatternReachingARegexLimitIsAnError) {
  // Issue #34.1: pattern and patternProperties fail the match (51156) when
  // PCRE2 cannot decide, instead of taking it for "no match".
  const std::string t = std::string(40, 'a') + "!";
  struct {
    const char* schema;
    std::string field;  // the string the pattern meets: a value, then a name
  } cases[] = {{R"({"properties": {"t": {"pattern": "(a+)+$"}}})", "t"},
               {R"({"patternProperties": {"(a+)+$": {"bsonType": "int"}}})", t}};
  for (const auto& [schema, field] : cases) {
    auto expr = ParseMatchExpression(Json(std::string("{\"$jsonSchema\": ") + schema + "}"));
    ASSERT_TRUE(expr.ok()) << expr.status();
    BsonBuilder b;
    b.AppendString(field, t);
    auto matched = MatchesOrError(**expr, std::move(b).Build());
    ASSERT_FALSE(matched.ok()) << schema;
    EXPECT_EQ(matched.status().code_number(), 51156);
  }
}

struct Case {
  const char* schema;
  const char* doc;
  bool matches;
};

TEST(JsonSchema, Keywords) {
  const Case cases[] = {
      {R"({"bsonType": "object"})", R"({"a": 1})", true},
      {R"({"bsonType": "array"})", R"({"a": 1})", false},
      {R"({"properties": {"a": {"bsonType": "int"}}})", R"({"a": 1})", true},
      {R"({"properties": {"a": {"bsonType": "int"}}})", R"({"a": 1.5})", false},
      {R"({"properties": {"a": {"bsonType": "int"}}})", R"({"b": "x"})", true},
      {R"({"properties": {"a": {"bsonType": ["int", "string"]}}})", R"({"a": "x"})", true},
      {R"({"properties": {"a": {"bsonType": "number"}}})", R"({"a": {"$numberLong": "5"}})", true},
      {R"({"properties": {"a": {"type": "number"}}})", R"({"a": 2.5})", true},
      {R"({"properties": {"a": {"type": "string"}}})", R"({"a": 2.5})", false},
      {R"({"properties": {"a": {"type": ["null", "boolean"]}}})", R"({"a": null})", true},
      {R"({"required": ["a", "b"]})", R"({"a": 1, "b": null})", true},
      {R"({"required": ["a", "b"]})", R"({"a": 1})", false},
      {R"({"properties": {"a": {"enum": [1, "x", {"k": 1}]}}})", R"({"a": 1.0})", true},
      {R"({"properties": {"a": {"enum": [1, "x", {"k": 1}]}}})", R"({"a": {"k": 1}})", true},
      {R"({"properties": {"a": {"enum": [1, "x"]}}})", R"({"a": "y"})", false},
      {R"({"properties": {"a": {"minimum": 5}}})", R"({"a": 5})", true},
      {R"({"properties": {"a": {"minimum": 5, "exclusiveMinimum": true}}})", R"({"a": 5})",
       false},
      {R"({"properties": {"a": {"maximum": 5}}})", R"({"a": 5.5})", false},
      {R"({"properties": {"a": {"maximum": 5}}})", R"({"a": "big"})", true},
      {R"({"properties": {"a": {"maximum": 5, "exclusiveMaximum": true}}})", R"({"a": 4})", true},
      {R"({"properties": {"a": {"multipleOf": 3}}})", R"({"a": 9})", true},
      {R"({"properties": {"a": {"multipleOf": 3}}})", R"({"a": 10})", false},
      {R"({"properties": {"a": {"multipleOf": 0.5}}})", R"({"a": 2.5})", true},
      {R"({"properties": {"a": {"minLength": 2, "maxLength": 3}}})", R"({"a": "ab"})", true},
      {R"({"properties": {"a": {"minLength": 2}}})", R"({"a": "é"})", false},  // 1 code point
      {R"({"properties": {"a": {"maxLength": 3}}})", R"({"a": "abcd"})", false},
      {R"({"properties": {"a": {"pattern": "^x+$"}}})", R"({"a": "xxx"})", true},
      {R"({"properties": {"a": {"pattern": "^x+$"}}})", R"({"a": "xy"})", false},
      {R"({"properties": {"a": {"minItems": 2}}})", R"({"a": [1]})", false},
      {R"({"properties": {"a": {"maxItems": 2}}})", R"({"a": [1, 2]})", true},
      {R"({"properties": {"a": {"uniqueItems": true}}})", R"({"a": [1, 2, 1.0]})", false},
      {R"({"properties": {"a": {"uniqueItems": true}}})", R"({"a": [1, 2, 3]})", true},
      {R"({"properties": {"a": {"items": {"bsonType": "int"}}}})", R"({"a": [1, 2]})", true},
      {R"({"properties": {"a": {"items": {"bsonType": "int"}}}})", R"({"a": [1, "x"]})", false},
      {R"({"properties": {"a": {"items": [{"bsonType": "int"}, {"bsonType": "string"}]}}})",
       R"({"a": [1, "x", true]})", true},
      {R"({"properties": {"a": {"items": [{"bsonType": "int"}], "additionalItems": false}}})",
       R"({"a": [1, 2]})", false},
      {R"({"properties": {"a": {"items": [{"bsonType": "int"}], "additionalItems": {"bsonType": "string"}}}})",
       R"({"a": [1, "s"]})", true},
      {R"({"properties": {"_id": {}, "a": {}}, "additionalProperties": false})",
       R"({"_id": 1, "a": 1})", true},
      {R"({"properties": {"a": {}}, "additionalProperties": false})", R"({"_id": 1, "a": 1})",
       false},
      {R"({"additionalProperties": {"bsonType": "int"}})", R"({"a": 1, "b": 2})", true},
      {R"({"additionalProperties": {"bsonType": "int"}})", R"({"a": 1, "b": "x"})", false},
      {R"({"patternProperties": {"^s_": {"bsonType": "string"}}})", R"({"s_a": "x", "n": 1})",
       true},
      {R"({"patternProperties": {"^s_": {"bsonType": "string"}}})", R"({"s_a": 1})", false},
      {R"({"patternProperties": {"^s_": {}}, "additionalProperties": false})", R"({"s_a": 1})",
       true},
      {R"({"minProperties": 2})", R"({"a": 1})", false},
      {R"({"maxProperties": 2})", R"({"a": 1, "b": 2})", true},
      {R"({"dependencies": {"card": ["address"]}})", R"({"card": 1})", false},
      {R"({"dependencies": {"card": ["address"]}})", R"({"name": 1})", true},
      {R"({"dependencies": {"card": {"required": ["cvv"]}}})", R"({"card": 1, "cvv": 2})", true},
      {R"({"allOf": [{"required": ["a"]}, {"required": ["b"]}]})", R"({"a": 1})", false},
      {R"({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]})", R"({"b": 1})", true},
      {R"({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]})", R"({"a": 1, "b": 1})", false},
      {R"({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]})", R"({"b": 1})", true},
      {R"({"not": {"required": ["a"]}})", R"({"a": 1})", false},
      {R"({"properties": {"o": {"bsonType": "object", "required": ["x"], "properties": {"x": {"minimum": 0}}}}})",
       R"({"o": {"x": -1}})", false},
      {R"({"title": "t", "description": "d"})", R"({})", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SchemaMatches(c.schema, c.doc), c.matches) << c.schema << " on " << c.doc;
  }
}

TEST(JsonSchema, ParseErrorsAreMongoDBs) {
  struct Bad {
    const char* schema;
    ErrorCode code;
    const char* message;
  };
  const Bad cases[] = {
      {R"({"format": "email"})", ErrorCode::kFailedToParse,
       "$jsonSchema keyword 'format' is not currently supported"},
      {R"({"$ref": "#/x"})", ErrorCode::kFailedToParse,
       "$jsonSchema keyword '$ref' is not currently supported"},
      {R"({"frobnicate": 1})", ErrorCode::kFailedToParse, "Unknown $jsonSchema keyword: frobnicate"},
      {R"({"type": "integer"})", ErrorCode::kBadValue,
       "JSON type 'integer' is not currently supported."},
      {R"({"bsonType": "integer"})", ErrorCode::kBadValue, "Unknown type name alias: integer"},
      {R"({"bsonType": 1})", ErrorCode::kTypeMismatch,
       "$jsonSchema keyword 'bsonType' must be either a string or an array of strings"},
      {R"({"type": "object", "bsonType": "object"})", ErrorCode::kFailedToParse,
       "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'"},
      {R"({"required": []})", ErrorCode::kFailedToParse,
       "$jsonSchema keyword 'required' cannot be an empty array"},
      {R"({"required": ["a", "a"]})", ErrorCode::kFailedToParse,
       "$jsonSchema keyword 'required' array cannot contain duplicate values"},
      {R"({"minLength": -1})", ErrorCode::kFailedToParse,
       "$jsonSchema keyword 'minLength' must be a non-negative integer"},
      {R"({"minimum": "x"})", ErrorCode::kTypeMismatch, "$jsonSchema keyword 'minimum' must be a number"},
      {R"({"exclusiveMinimum": true})", ErrorCode::kFailedToParse,
       "$jsonSchema keyword 'minimum' must be a present if exclusiveMinimum is present"},
      {R"({"multipleOf": 0})", ErrorCode::kFailedToParse,
       "$jsonSchema keyword 'multipleOf' must have a positive value"},
      {R"({"enum": []})", ErrorCode::kFailedToParse, "$jsonSchema keyword 'enum' cannot be an empty array"},
      {R"({"allOf": []})", ErrorCode::kFailedToParse, "$jsonSchema keyword 'allOf' must be a nonempty array"},
      {R"({"properties": {"a": 1}})", ErrorCode::kTypeMismatch,
       "Nested schema for $jsonSchema property 'a' must be an object"},
      {R"({"pattern": "("})", static_cast<ErrorCode>(51091), nullptr},
  };
  for (const Bad& c : cases) {
    Status s = ParseSchema(c.schema);
    EXPECT_EQ(s.code(), c.code) << c.schema << ": " << s;
    if (c.message != nullptr) EXPECT_EQ(s.message(), c.message) << c.schema;
  }
  EXPECT_EQ(ParseMatchExpression(Json(R"({"$jsonSchema": 1})")).status().code(),
            ErrorCode::kTypeMismatch);
}

TEST(JsonSchema, SerializesAsGiven) {
  auto expr = ParseMatchExpression(Json(R"({"$jsonSchema": {"required": ["a"]}, "b": 1})"));
  ASSERT_TRUE(expr.ok());
  EXPECT_EQ(ToJson((*expr)->Serialize()),
            ToJson(Json(R"({"$and":[{"$jsonSchema":{"required":["a"]}},{"b":{"$eq":1}}]})")));
}

Document Details(std::string_view filter, std::string_view doc) {
  auto expr = ParseMatchExpression(Json(filter));
  EXPECT_TRUE(expr.ok()) << expr.status();
  return ValidationFailureDetails(**expr, Json(doc));
}

// The expected JSON in ToJson's own spacing.
std::string Same(std::string_view json) { return ToJson(Json(json)); }

TEST(JsonSchema, DetailsHaveMongoDBsShape) {
  Document d = Details(
      R"({"$jsonSchema": {"required": ["name"], "properties": {"gpa": {"bsonType": "double"}}}})",
      R"({"gpa": 3})");
  EXPECT_EQ(
      ToJson(d),
      Same(R"({"operatorName":"$jsonSchema","schemaRulesNotSatisfied":[)"
      R"({"operatorName":"required","specifiedAs":{"required":["name"]},"missingProperties":["name"]},)"
      R"({"operatorName":"properties","propertiesNotSatisfied":[{"propertyName":"gpa","details":[)"
      R"({"operatorName":"bsonType","specifiedAs":{"bsonType":"double"},"reason":"type did not match",)"
      R"("consideredValue":3,"consideredType":"int"}]}]}]})"));
  EXPECT_EQ(ToJson(Details(R"({"a": {"$gt": 5}})", R"({"a": 3})")),
            Same(R"({"operatorName":"$gt","specifiedAs":{"a":{"$gt":5}},"reason":"comparison failed",)"
            R"("consideredValue":3})"));
  EXPECT_EQ(ToJson(Details(R"({"a": {"$gt": 5}, "b": 1})", R"({"a": 6})")),
            Same(R"({"operatorName":"$and","clausesNotSatisfied":[{"index":1,"details":)"
            R"({"operatorName":"$eq","specifiedAs":{"b":{"$eq":1}},"reason":"field was missing"}}]})"));
}

// A random scalar, or a missing field.
void AppendRandomValue(std::mt19937* rng, BsonBuilder* b, std::string_view key) {
  switch ((*rng)() % 8) {
    case 0: b->AppendInt32(key, static_cast<int32_t>((*rng)() % 21) - 10); break;
    case 1: b->AppendDouble(key, static_cast<double>(static_cast<int>((*rng)() % 41) - 20) / 4); break;
    case 2: b->AppendInt64(key, static_cast<int64_t>((*rng)() % 21) - 10); break;
    case 3: b->AppendString(key, std::string((*rng)() % 6, 'x')); break;
    case 4: b->AppendBool(key, (*rng)() % 2 == 0); break;
    case 5: b->AppendNull(key); break;
    case 6: b->OpenDocument(key).AppendInt32("k", static_cast<int32_t>((*rng)() % 3)).Close(); break;
    default: break;  // missing
  }
}

// Each schema keyword family against the same constraint written with
// ordinary query operators (an independent implementation), on random
// documents; and the details list rules exactly when the document fails.
TEST(JsonSchema, AgreesWithEquivalentQueries) {
  struct Pair {
    const char* schema;
    const char* query;
  };
  const Pair pairs[] = {
      {R"({"properties": {"a": {"bsonType": "int"}}})",
       R"({"$or": [{"a": {"$exists": false}}, {"a": {"$type": "int"}}]})"},
      {R"({"properties": {"a": {"bsonType": ["string", "null"]}}})",
       R"({"$or": [{"a": {"$exists": false}}, {"a": {"$type": ["string", "null"]}}]})"},
      {R"({"properties": {"a": {"minimum": 2}}})",
       R"({"$or": [{"a": {"$exists": false}}, {"a": {"$not": {"$type": "number"}}}, {"a": {"$gte": 2}}]})"},
      {R"({"properties": {"a": {"maximum": 2, "exclusiveMaximum": true}}})",
       R"({"$or": [{"a": {"$exists": false}}, {"a": {"$not": {"$type": "number"}}}, {"a": {"$lt": 2}}]})"},
      {R"({"required": ["a", "b"]})", R"({"a": {"$exists": true}, "b": {"$exists": true}})"},
      {R"({"properties": {"a": {"enum": [1, "xx", null, {"k": 2}]}}})",
       R"({"$or": [{"a": {"$exists": false}}, {"a": {"$in": [1, "xx", null, {"k": 2}], "$exists": true}}]})"},
      {R"({"properties": {"a": {"minLength": 3}}})",
       R"({"$or": [{"a": {"$not": {"$type": "string"}}}, {"a": {"$regex": "^.{3}"}}]})"},
      {R"({"properties": {"a": {"multipleOf": 2}}})",
       R"({"$or": [{"a": {"$not": {"$type": "number"}}}, {"a": {"$mod": [2, 0]}}]})"},
      {R"({"not": {"properties": {"b": {"bsonType": "bool"}}}})",
       R"({"b": {"$exists": true, "$not": {"$type": "bool"}}})"},
      {R"({"anyOf": [{"required": ["a"]}, {"properties": {"b": {"bsonType": "object"}}, "required": ["b"]}]})",
       R"({"$or": [{"a": {"$exists": true}}, {"b": {"$type": "object"}}]})"},
  };
  std::mt19937 rng(12345);
  for (const Pair& p : pairs) {
    auto schema = ParseMatchExpression(Json(std::string("{\"$jsonSchema\": ") + p.schema + "}"));
    auto query = ParseMatchExpression(Json(p.query));
    ASSERT_TRUE(schema.ok()) << p.schema << schema.status();
    ASSERT_TRUE(query.ok()) << p.query << query.status();
    int failures = 0;
    for (int i = 0; i < 400; ++i) {
      BsonBuilder b;
      b.AppendInt32("_id", i);
      AppendRandomValue(&rng, &b, "a");
      AppendRandomValue(&rng, &b, "b");
      Document doc = std::move(b).Build();
      // $mod refuses non-integral doubles: skip those for the multipleOf pair.
      Element a = doc.Get("a");
      if (std::string_view(p.schema).find("multipleOf") != std::string_view::npos &&
          a.type() == BsonType::kDouble && a.Double() != static_cast<int64_t>(a.Double())) {
        continue;
      }
      const bool want = (*query)->Matches(doc);
      ASSERT_EQ((*schema)->Matches(doc), want) << p.schema << " on " << ToJson(doc);
      Document details = ValidationFailureDetails(**schema, doc);
      Element rules = details.Get("schemaRulesNotSatisfied");
      ASSERT_EQ(rules.Array().empty(), want) << p.schema << " on " << ToJson(doc) << " -> "
                                             << ToJson(details);
      failures += !want;
    }
    EXPECT_GT(failures, 0) << p.schema;  // the random documents exercised both sides
  }
}

}  // namespace
}  // namespace rockdoc

// Query statistics ($queryStats) and the profiler (profile, system.profile).
//
// Shapes (query/query_shape.h) against hand-written expectations and, over
// random filters and pipelines, hash equality against shape-document
// equality. Each recorded figure against an independent truth: the results
// read back and counted, explain's executionStats of the same query, the
// count a count returns. App-level joins and $lookup pairs; the 1,000-shape
// bound with least-recently-run eviction; persistence across a reopen,
// clearQueryStats, damaged persisted statistics; collect_statistics off; the
// profiler through its commands, with their errors.
//
// Time: a fake monotonic clock (SetClockForTesting) where a figure depends on
// it (the join window, slowms), never a sleep.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api/client_internal.h"
#include "catalog/catalog.h"
#include "common/deadline.h"
#include "query/query_shape.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using ::testing::HasSubstr;
using test::Json;

// A JSON array literal as the BSON array the API takes.
Document Array(std::string_view json) {
  Document d = Json("{\"a\": " + std::string(json) + "}");
  return Document::AdoptValidated(std::string(d.Get("a").Array().bytes()));
}

// ---------------------------------------------------------------- shapes

struct Shape {
  std::string json;  // the shape document, relaxed Extended JSON
  uint64_t hash = 0;
  internal::ShapeTraits traits;
};

// A find's shape, computed as a recorded query computes it: the hash alone
// first (each run), then the hash with the document (a new shape), which
// must agree.
Shape FindShape(const Document& filter, const Document& sort = Document(),
                const Document& projection = Document(), bool skip = false, bool limit = false) {
  Shape s;
  const uint64_t alone =
      internal::ShapeFind(filter, sort, projection, skip, limit, nullptr, &s.traits);
  BsonBuilder b;
  internal::ShapeTraits again;
  s.hash = internal::ShapeFind(filter, sort, projection, skip, limit, &b, &again);
  EXPECT_EQ(alone, s.hash) << ToJson(filter);
  EXPECT_EQ(again.case_insensitive, s.traits.case_insensitive);
  EXPECT_EQ(again.id_lookup, s.traits.id_lookup);
  s.json = ToJson(std::move(b).Build());
  return s;
}

Shape PipelineShape(const Document& pipeline) {
  Shape s;
  const uint64_t alone = internal::ShapePipeline(pipeline, nullptr, &s.traits);
  BsonBuilder b;
  internal::ShapeTraits again;
  s.hash = internal::ShapePipeline(pipeline, &b, &again);
  EXPECT_EQ(alone, s.hash) << ToJson(pipeline);
  s.json = ToJson(std::move(b).Build());
  return s;
}

// The filter part of a find's shape.
std::string FilterShape(std::string_view filter) {
  Shape s = FindShape(Json(filter));
  const std::string prefix = R"({"filter": )";
  EXPECT_EQ(s.json.substr(0, prefix.size()), prefix) << s.json;
  return s.json.substr(prefix.size(), s.json.size() - prefix.size() - 1);
}

TEST(QueryShapeTest, LiteralsBecomeThePlaceholderOfTheirType) {
  // A field compared by value is written {$eq: ...}, as MongoDB normalizes it.
  EXPECT_EQ(FilterShape(R"({"a": 1})"), R"({"a": {"$eq": "?number"}})");
  EXPECT_EQ(FilterShape(R"({"a": {"$eq": 1}})"), R"({"a": {"$eq": "?number"}})");
  // Every numeric type is "?number".
  for (const char* n : {R"(2.5)", R"({"$numberLong": "7"})", R"({"$numberDecimal": "1.1"})"}) {
    EXPECT_EQ(FilterShape(std::string(R"({"a": )") + n + "}"), R"({"a": {"$eq": "?number"}})");
  }
  const std::pair<const char*, const char*> kTypes[] = {
      {R"("text")", "?string"},
      {R"(true)", "?bool"},
      {R"(null)", "?null"},
      {R"({"b": 1})", "?object"},
      {R"({"$date": "2024-01-01T00:00:00Z"})", "?date"},
      {R"({"$oid": "5f0f0f0f0f0f0f0f0f0f0f0f"})", "?objectId"},
      {R"({"$binary": {"base64": "AA==", "subType": "00"}})", "?binData"},
      {R"({"$timestamp": {"t": 1, "i": 2}})", "?timestamp"},
      {R"({"$minKey": 1})", "?minKey"},
      {R"({"$maxKey": 1})", "?maxKey"},
  };
  for (const auto& [value, placeholder] : kTypes) {
    EXPECT_EQ(FilterShape(std::string(R"({"a": )") + value + "}"),
              std::string(R"({"a": {"$eq": ")") + placeholder + R"("}})")
        << value;
  }
  // Operators keep their names, dotted paths stay as they are.
  EXPECT_EQ(FilterShape(R"({"b.c": {"$gt": 1, "$lte": "z"}, "d": {"$exists": true}})"),
            R"({"b.c": {"$gt": "?number", "$lte": "?string"}, "d": {"$exists": "?bool"}})");
  EXPECT_EQ(FilterShape(R"({"a": {"$not": {"$gt": 5}}})"), R"({"a": {"$not": {"$gt": "?number"}}})");
  EXPECT_EQ(FilterShape("{}"), "{}");
}

TEST(QueryShapeTest, ArraysRegexesAndLogicalOperators) {
  // $in: "?array<T>" when every element has placeholder T, else "?array<>".
  EXPECT_EQ(FilterShape(R"({"a": {"$in": [1, 2.5, {"$numberLong": "3"}]}})"),
            R"({"a": {"$in": "?array<?number>"}})");
  EXPECT_EQ(FilterShape(R"({"a": {"$in": ["x", "y"]}})"), R"({"a": {"$in": "?array<?string>"}})");
  EXPECT_EQ(FilterShape(R"({"a": {"$in": [1, "x"]}})"), R"({"a": {"$in": "?array<>"}})");
  EXPECT_EQ(FilterShape(R"({"a": {"$in": []}})"), R"({"a": {"$in": "?array<>"}})");
  EXPECT_EQ(FilterShape(R"({"a": [1, 2]})"), R"({"a": {"$eq": "?array<?number>"}})");
  // A regex literal: {$regex, $options}, whatever its flags.
  const std::string regex = R"({"a": {"$regex": "?string", "$options": "?string"}})";
  EXPECT_EQ(FilterShape(R"({"a": {"$regularExpression": {"pattern": "x", "options": "i"}}})"), regex);
  EXPECT_EQ(FilterShape(R"({"a": {"$regularExpression": {"pattern": "^y", "options": ""}}})"), regex);
  BsonBuilder op;  // the operator form (JSON would read it as a regex literal)
  op.OpenDocument("a").AppendString("$regex", "x").AppendString("$options", "i").Close();
  Shape as_operator = FindShape(std::move(op).Build());
  EXPECT_EQ(as_operator.json, R"({"filter": )" + regex + "}");
  EXPECT_EQ(as_operator.hash,
            FindShape(Json(R"({"a": {"$regularExpression": {"pattern": "q", "options": ""}}})")).hash);
  // $and / $or / $nor: each clause shaped in turn, at any depth.
  EXPECT_EQ(FilterShape(R"({"$and": [{"a": 1}, {"$or": [{"b": {"$gt": 2}}, {"c": "x"}]}]})"),
            R"({"$and": [{"a": {"$eq": "?number"}}, {"$or": [{"b": {"$gt": "?number"}}, )"
            R"({"c": {"$eq": "?string"}}]}]})");
  EXPECT_EQ(FilterShape(R"({"$nor": [{"a": null}]})"), R"({"$nor": [{"a": {"$eq": "?null"}}]})");
  // $elemMatch over documents (a filter) and over values (operators).
  EXPECT_EQ(FilterShape(R"({"a": {"$elemMatch": {"b": 1, "c": {"$lt": 2}}}})"),
            R"({"a": {"$elemMatch": {"b": {"$eq": "?number"}, "c": {"$lt": "?number"}}}})");
  EXPECT_EQ(FilterShape(R"({"a": {"$elemMatch": {"$gte": 1, "$lt": 9}}})"),
            R"({"a": {"$elemMatch": {"$gte": "?number", "$lt": "?number"}}})");
  // $expr: field paths kept, literals replaced.
  EXPECT_EQ(FilterShape(R"({"$expr": {"$gt": ["$a", 5]}})"), R"({"$expr": {"$gt": ["$a", "?number"]}})");
}

TEST(QueryShapeTest, SortAndProjectionAreKeptSkipAndLimitArePlaceholders) {
  Shape s = FindShape(Json(R"({"a": 1})"), Json(R"({"a": 1, "b": -1})"),
                      Json(R"({"a": 1, "_id": 0})"), /*skip=*/true, /*limit=*/true);
  EXPECT_EQ(s.json, R"({"filter": {"a": {"$eq": "?number"}}, "sort": {"a": 1, "b": -1}, )"
                    R"("projection": {"a": 1, "_id": 0}, "skip": "?number", "limit": "?number"})");
  // Each part changes the shape: direction, projected field, skip, limit.
  std::set<uint64_t> hashes = {s.hash};
  hashes.insert(FindShape(Json(R"({"a": 1})"), Json(R"({"a": -1, "b": -1})"),
                          Json(R"({"a": 1, "_id": 0})"), true, true).hash);
  hashes.insert(FindShape(Json(R"({"a": 1})"), Json(R"({"a": 1, "b": -1})"),
                          Json(R"({"b": 1, "_id": 0})"), true, true).hash);
  hashes.insert(FindShape(Json(R"({"a": 1})"), Json(R"({"a": 1, "b": -1})"),
                          Json(R"({"a": 1, "_id": 0})"), false, true).hash);
  hashes.insert(FindShape(Json(R"({"a": 1})"), Json(R"({"a": 1, "b": -1})"),
                          Json(R"({"a": 1, "_id": 0})"), true, false).hash);
  EXPECT_EQ(hashes.size(), 5u);
}

TEST(QueryShapeTest, SameShapeForOtherValuesOtherShapeForOtherTypesOperatorsAndFields) {
  const std::pair<const char*, const char*> kSame[] = {
      {R"({"a": 1})", R"({"a": 99.5})"},
      {R"({"a": 1})", R"({"a": {"$eq": {"$numberLong": "2"}}})"},
      {R"({"a": {"$gt": 1}})", R"({"a": {"$gt": {"$numberDecimal": "7"}}})"},
      {R"({"a": {"$in": [1, 2]}})", R"({"a": {"$in": [3]}})"},
      {R"({"a": "x"})", R"({"a": "a much longer string"})"},
      {R"({"a": {"b": 1}})", R"({"a": {"c": "d", "e": [1]}})"},
      {R"({"$or": [{"a": 1}, {"b": "x"}]})", R"({"$or": [{"a": 2}, {"b": "y"}]})"},
  };
  for (const auto& [x, y] : kSame) {
    Shape a = FindShape(Json(x)), b = FindShape(Json(y));
    EXPECT_EQ(a.json, b.json) << x << " vs " << y;
    EXPECT_EQ(a.hash, b.hash) << x << " vs " << y;
  }
  const std::pair<const char*, const char*> kDifferent[] = {
      {R"({"a": 1})", R"({"a": "1"})"},                      // type
      {R"({"a": 1})", R"({"a": null})"},                     // type
      {R"({"a": {"$gt": 1}})", R"({"a": {"$gte": 1}})"},     // operator
      {R"({"a": 1})", R"({"b": 1})"},                        // field
      {R"({"a": 1})", R"({"a": 1, "b": 1})"},                // one more field
      {R"({"a": {"$in": [1]}})", R"({"a": {"$in": ["x"]}})"},
      {R"({"a": {"$in": [1]}})", R"({"a": {"$in": [1, "x"]}})"},
      {R"({"$or": [{"a": 1}]})", R"({"$and": [{"a": 1}]})"},
      {R"({"$or": [{"a": 1}]})", R"({"$or": [{"a": 1}, {"a": 2}]})"},
      {R"({"a": {"b": 1}})", R"({"a.b": 1})"},
      {R"({"a": {"$elemMatch": {"b": 1}}})", R"({"a": {"$elemMatch": {"c": 1}}})"},
  };
  for (const auto& [x, y] : kDifferent) {
    Shape a = FindShape(Json(x)), b = FindShape(Json(y));
    EXPECT_NE(a.json, b.json) << x << " vs " << y;
    EXPECT_NE(a.hash, b.hash) << x << " vs " << y;
  }
}

TEST(QueryShapeTest, CaseInsensitiveAndIdLookupTraits) {
  auto insensitive = [](const Document& filter) { return FindShape(filter).traits.case_insensitive; };
  EXPECT_TRUE(insensitive(Json(R"({"a": {"$regularExpression": {"pattern": "x", "options": "i"}}})")));
  EXPECT_TRUE(insensitive(Json(R"({"a": {"$regularExpression": {"pattern": "x", "options": "mi"}}})")));
  EXPECT_FALSE(insensitive(Json(R"({"a": {"$regularExpression": {"pattern": "x", "options": ""}}})")));
  EXPECT_FALSE(insensitive(Json(R"({"a": {"$regularExpression": {"pattern": "x", "options": "m"}}})")));
  BsonBuilder op;
  op.OpenDocument("a").AppendString("$regex", "x").AppendString("$options", "i").Close();
  EXPECT_TRUE(insensitive(std::move(op).Build()));
  BsonBuilder op_m;
  op_m.OpenDocument("a").AppendString("$regex", "x").AppendString("$options", "m").Close();
  EXPECT_FALSE(insensitive(std::move(op_m).Build()));
  EXPECT_TRUE(insensitive(Json(R"({"a": {"$in": [1, {"$regularExpression": {"pattern": "x", "options": "i"}}]}})")));
  EXPECT_FALSE(insensitive(Json(R"({"a": {"$in": [1, {"$regularExpression": {"pattern": "x", "options": ""}}]}})")));
  EXPECT_TRUE(insensitive(Json(R"({"$or": [{"b": 1}, {"a": {"$regularExpression": {"pattern": "x", "options": "i"}}}]})")));
  EXPECT_FALSE(insensitive(Json(R"({"a": "i"})")));

  auto id_lookup = [](std::string_view filter) { return FindShape(Json(filter)).traits.id_lookup; };
  EXPECT_TRUE(id_lookup(R"({"_id": 5})"));
  EXPECT_TRUE(id_lookup(R"({"_id": {"$in": [1, 2]}})"));
  EXPECT_TRUE(id_lookup(R"({"_id": {"$eq": "x"}})"));
  EXPECT_FALSE(id_lookup(R"({"_id": {"$gt": 5}})"));
  EXPECT_FALSE(id_lookup(R"({"_id": 5, "a": 1})"));
  EXPECT_FALSE(id_lookup(R"({"a": 5})"));
}

TEST(QueryShapeTest, PipelineKeepsNamesAndPathsAndReplacesLiterals) {
  Shape s = PipelineShape(Array(R"([
      {"$match": {"a": 5, "b": {"$regularExpression": {"pattern": "x", "options": "i"}}}},
      {"$group": {"_id": "$b", "n": {"$sum": 1}}},
      {"$sort": {"n": -1}},
      {"$limit": 10},
      {"$lookup": {"from": "authors", "localField": "_id", "foreignField": "_id", "as": "au"}},
      {"$unwind": "$au"}])"));
  EXPECT_EQ(s.json,
            R"({"pipeline": [{"$match": {"a": {"$eq": "?number"}, "b": {"$regex": "?string", "$options": "?string"}}}, )"
            R"({"$group": {"_id": "$b", "n": {"$sum": "?number"}}}, {"$sort": {"n": -1}}, {"$limit": "?number"}, )"
            R"({"$lookup": {"from": "authors", "localField": "_id", "foreignField": "_id", "as": "au"}}, )"
            R"({"$unwind": "$au"}]})");
  EXPECT_TRUE(s.traits.case_insensitive);
  // Other values: one shape; another joined collection: another.
  EXPECT_EQ(PipelineShape(Array(R"([{"$match": {"a": 6}}, {"$limit": 3}])")).hash,
            PipelineShape(Array(R"([{"$match": {"a": 7.5}}, {"$limit": 99}])")).hash);
  EXPECT_NE(PipelineShape(Array(R"([{"$lookup": {"from": "x", "localField": "a", "foreignField": "_id", "as": "j"}}])")).hash,
            PipelineShape(Array(R"([{"$lookup": {"from": "y", "localField": "a", "foreignField": "_id", "as": "j"}}])")).hash);
  // A $lookup's nested pipeline and let: their values are literals too.
  Shape nested = PipelineShape(Array(R"([{"$lookup": {"from": "x", "let": {"v": "$a", "w": "lit"},
      "pipeline": [{"$match": {"status": "secret", "n": 3}}], "as": "j"}}])"));
  EXPECT_EQ(nested.json,
            R"({"pipeline": [{"$lookup": {"from": "x", "let": {"v": "$a", "w": "?string"}, )"
            R"("pipeline": [{"$match": {"status": {"$eq": "?string"}, "n": {"$eq": "?number"}}}], "as": "j"}}]})");
  EXPECT_EQ(nested.hash, PipelineShape(Array(R"([{"$lookup": {"from": "x", "let": {"v": "$a", "w": "other"},
      "pipeline": [{"$match": {"status": "public", "n": 4}}], "as": "j"}}])")).hash);
  EXPECT_EQ(PipelineShape(Array(R"([{"$unionWith": {"coll": "y", "pipeline": [{"$match": {"k": "v"}}]}},
      {"$unionWith": "z"}, {"$replaceWith": {"r": "$a", "s": "lit"}}, {"$sortByCount": "$b"}])")).json,
            R"({"pipeline": [{"$unionWith": {"coll": "y", "pipeline": [{"$match": {"k": {"$eq": "?string"}}}]}}, )"
            R"({"$unionWith": "z"}, {"$replaceWith": {"r": "$a", "s": "?string"}}, {"$sortByCount": "$b"}]})");
  EXPECT_EQ(PipelineShape(Array(R"([{"$graphLookup": {"from": "x", "startWith": "$m", "connectFromField": "a",
      "connectToField": "b", "as": "g", "maxDepth": 2, "restrictSearchWithMatch": {"t": "u"}}}])")).json,
            R"({"pipeline": [{"$graphLookup": {"from": "x", "startWith": "$m", "connectFromField": "a", )"
            R"("connectToField": "b", "as": "g", "maxDepth": "?number", "restrictSearchWithMatch": {"t": {"$eq": "?string"}}}}]})");
}

// Random filters from a small grammar (few fields, operators and types,
// so that many share a shape with other values and many do not).
class RandomQueries {
 public:
  explicit RandomQueries(uint64_t seed) : rng_(seed) {}

  Document Filter() {
    BsonBuilder b;
    Clauses(&b, 0);
    return std::move(b).Build();
  }
  Document Sort() {
    switch (U(0, 9)) {
      case 0: return Json(R"({"a": 1})");
      case 1: return Json(R"({"a": -1})");
      case 2: return Json(R"({"a": 1, "b": 1})");
      case 3: return Json(R"({"a": 1.0})");  // another type: another shape
      default: return Document();
    }
  }
  Document Projection() {
    switch (U(0, 9)) {
      case 0: return Json(R"({"a": 1})");
      case 1: return Json(R"({"a": 0, "b": 0})");
      case 2: return Json(R"({"a": {"$slice": 2}})");
      // Two types with the same value bytes (eight zero bytes).
      case 3: return Json(R"({"a": 0.0})");
      case 4: return Json(R"({"a": {"$numberLong": "0"}})");
      default: return Document();
    }
  }
  Document Pipeline() {
    BsonBuilder b;
    const int n = U(1, 4);
    for (int i = 0; i < n; ++i) {
      b.OpenDocument("");
      switch (U(0, 6)) {
        case 0: b.OpenDocument("$match"); Clauses(&b, 1); b.Close(); break;
        case 1: b.AppendDocument("$sort", Sort().empty() ? Json(R"({"b": 1})") : Sort()); break;
        case 2: Value(&b, U(0, 1) ? "$limit" : "$skip"); break;
        case 3:
          b.OpenDocument("$group").AppendString("_id", Pick({"$a", "$b"}));
          b.OpenDocument("n"); Value(&b, Pick({"$sum", "$max"})); b.Close();
          b.Close();
          break;
        case 4:
          b.OpenDocument("$lookup").AppendString("from", Pick({"x", "y"}));
          if (U(0, 1)) {
            b.AppendString("localField", Pick({"a", "b"})).AppendString("foreignField", "_id");
          } else {  // a nested pipeline, shaped as one
            b.OpenDocument("let");
            Value(&b, "v");
            b.Close().OpenArray("pipeline").OpenDocument("").OpenDocument("$match");
            Clauses(&b, 1);
            b.Close().Close().Close();
          }
          b.AppendString("as", "j").Close();
          break;
        case 5: b.AppendString("$unwind", Pick({"$a", "$b"})); break;
        default:
          b.OpenDocument("$addFields"); Value(&b, Pick({"k", "l"})); b.Close();
          break;
      }
      b.Close();
    }
    return std::move(b).Build();
  }
  int U(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

 private:
  template <size_t N>
  std::string Pick(const char* const (&options)[N]) {
    return options[U(0, static_cast<int>(N) - 1)];
  }
  void Clauses(BsonBuilder* b, int depth) {
    const int n = U(0, 3) == 0 ? 2 : 1;
    for (int i = 0; i < n; ++i) Clause(b, Pick({"a", "c.d"}) + std::to_string(i), depth);
  }
  void Clause(BsonBuilder* b, const std::string& field, int depth) {
    const int kind = U(0, depth < 1 ? 9 : 7);
    if (kind <= 3) {
      Value(b, field);
    } else if (kind <= 7) {
      b->OpenDocument(field);
      const int ops = U(0, 3) == 0 ? 2 : 1;
      for (int i = 0; i < ops; ++i) {
        const std::string op = Pick({"$eq", "$ne", "$gt", "$lt", "$in", "$nin", "$exists", "$regex",
                                     "$not", "$elemMatch"});
        if (op == "$in" || op == "$nin") {
          b->OpenArray(op);
          const int k = U(0, 3);
          for (int j = 0; j < k; ++j) Value(b, "");
          b->Close();
        } else if (op == "$regex") {
          b->AppendString("$regex", Pick({"x", "^y"}));
          if (U(0, 1)) b->AppendString("$options", Pick({"", "i", "m"}));
        } else if (op == "$not") {
          b->OpenDocument("$not");
          Value(b, Pick({"$gt", "$lt"}));
          b->Close();
        } else if (op == "$elemMatch") {
          b->OpenDocument("$elemMatch");
          if (U(0, 1)) {
            Value(b, Pick({"$gt", "$lt"}));
          } else {
            Clauses(b, depth + 1);
          }
          b->Close();
        } else {
          Value(b, op);
        }
      }
      b->Close();
    } else {
      b->OpenArray(Pick({"$and", "$or", "$nor"}));
      const int k = U(1, 3);
      for (int i = 0; i < k; ++i) {
        b->OpenDocument("");
        Clauses(b, depth + 1);
        b->Close();
      }
      b->Close();
    }
  }
  void Value(BsonBuilder* b, const std::string& key) {
    switch (U(0, 11)) {
      case 0: b->AppendInt32(key, U(-3, 3)); break;
      case 1: b->AppendInt64(key, U(0, 1000)); break;
      case 2: b->AppendDouble(key, U(0, 9) / 4.0); break;
      case 3: b->AppendString(key, Pick({"", "x", "yy"})); break;
      case 4: b->AppendBool(key, U(0, 1)); break;
      case 5: b->AppendNull(key); break;
      case 6: b->AppendDateTime(key, U(0, 1 << 30)); break;
      case 7: b->AppendRegex(key, Pick({"x", "y"}), Pick({"", "i"})); break;
      case 8: b->OpenDocument(key).AppendInt32(Pick({"p", "q"}), U(0, 3)).Close(); break;
      case 9: {
        b->OpenArray(key);
        const int k = U(0, 3);
        for (int j = 0; j < k; ++j) b->AppendInt32("", U(0, 9));
        b->Close();
        break;
      }
      case 10: {
        b->OpenArray(key);
        b->AppendInt32("", 1).AppendString("", Pick({"x", "y"}));
        b->Close();
        break;
      }
      default: b->AppendDecimal128(key, Decimal128::FromInt64(U(0, 9))); break;
    }
  }

  std::mt19937_64 rng_;
};

// The hash is a function of the shape document and tells shapes apart:
// over thousands of random queries, equal hashes exactly when the shape
// documents are equal.
TEST(QueryShapeTest, HashesAreEqualExactlyWhenShapeDocumentsAre) {
  RandomQueries random(20261127);
  std::map<std::string, uint64_t> hash_of;
  std::map<uint64_t, std::string> shape_of;
  int checked = 0;
  auto check = [&](const Shape& s, const std::string& what) {
    auto h = hash_of.emplace(s.json, s.hash).first;
    EXPECT_EQ(h->second, s.hash) << "one shape, two hashes: " << s.json << " from " << what;
    auto d = shape_of.emplace(s.hash, s.json).first;
    EXPECT_EQ(d->second, s.json) << "one hash, two shapes, from " << what;
    ++checked;
  };
  constexpr int kFinds = 6000, kPipelines = 3000;
  for (int i = 0; i < kFinds; ++i) {
    Document filter = random.Filter(), sort = random.Sort(), projection = random.Projection();
    const bool skip = random.U(0, 7) == 0, limit = random.U(0, 7) == 0;
    check(FindShape(filter, sort, projection, skip, limit), ToJson(filter));
  }
  const size_t find_shapes = hash_of.size();
  for (int i = 0; i < kPipelines; ++i) {
    Document pipeline = random.Pipeline();
    check(PipelineShape(pipeline), ToJson(pipeline));
  }
  const size_t pipeline_shapes = hash_of.size() - find_shapes;
  // Both sides of "exactly" were exercised: many shapes, and many queries
  // that had the shape of an earlier one with other values.
  EXPECT_EQ(checked, kFinds + kPipelines);
  EXPECT_GT(find_shapes, 1000u);
  EXPECT_GT(kFinds - find_shapes, 1000u);
  EXPECT_GT(pipeline_shapes, 500u);
  EXPECT_GT(kPipelines - pipeline_shapes, 500u);
}

// ---------------------------------------------------------------- recording

// A settable monotonic clock: frozen at g_now, moving by g_step on each read.
// It starts low: a monotonic reading of the real clock (uptime) is later,
// so nothing a test left behind on the fake clock is "just before" one.
std::atomic<int64_t> g_now{1'000'000'000};
std::atomic<int64_t> g_step{0};
int64_t FakeClock() { return g_now.fetch_add(g_step.load()); }

class QueryStatsTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void TearDown() override {
    internal::SetClockForTesting(nullptr);
    g_step = 0;
  }
  void Open(ClientOptions options = {}) {
    client_.reset();
    auto c = Client::Open(dir_.Sub("db"), options);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Collection Coll(const std::string& name, const std::string& db = "app") {
    return client_->GetDatabase(db).GetCollection(name);
  }
  // Every entry, as {aggregate: 1, pipeline: [{$queryStats: {}}]} in admin
  // reads them (itself not recorded).
  std::vector<Document> AllStats() {
    Document pipeline = Array(R"([{"$queryStats": {}}])");
    auto cursor = client_->GetDatabase("admin").Aggregate(pipeline);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    if (!cursor.ok()) return {};
    auto docs = cursor->ToVector();
    EXPECT_TRUE(docs.ok()) << docs.status();
    return docs.ok() ? *std::move(docs) : std::vector<Document>();
  }
  // The entries of db.coll's `command`s.
  std::vector<Document> StatsOf(std::string_view coll, std::string_view command,
                                std::string_view db = "app") {
    std::vector<Document> out;
    for (Document& d : AllStats()) {
      if (d.GetPath("key.queryShape.cmdNs.db").AsString() == db &&
          d.GetPath("key.queryShape.cmdNs.coll").AsString() == coll &&
          d.GetPath("key.queryShape.command").AsString() == command) {
        out.push_back(std::move(d));
      }
    }
    return out;
  }
  // The only entry of db.coll's `command`s.
  Document Only(std::string_view coll, std::string_view command, std::string_view db = "app") {
    std::vector<Document> all = StatsOf(coll, command, db);
    EXPECT_EQ(all.size(), 1u) << coll << " " << command << ": " << Dump(all);
    return all.empty() ? Document() : all[0];
  }
  static std::string Dump(const std::vector<Document>& docs) {
    std::string out;
    for (const Document& d : docs) out += ToJson(d) + "\n";
    return out;
  }
  static int64_t Num(const Document& d, std::string_view path) {
    int64_t v = -1;
    EXPECT_TRUE(d.GetPath(path).ExactInt64(&v)) << path << " in " << ToJson(d);
    return v;
  }
  static std::string Str(const Document& d, std::string_view path) {
    return std::string(d.GetPath(path).AsString().value_or("<none>"));
  }
  // The documents the cursor returns, read to its end and counted.
  static int64_t Drain(StatusOr<Cursor> cursor) {
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    if (!cursor.ok()) return -1;
    int64_t n = 0;
    while (cursor->Next()) ++n;
    EXPECT_TRUE(cursor->status().ok()) << cursor->status();
    return n;
  }
  // db.coll: {_id: i, a: i % 20, b: i, author: i % 7} for i < n.
  void Fill(int n, const std::string& coll = "c", const std::string& db = "app") {
    std::vector<Document> docs;
    for (int i = 0; i < n; ++i) {
      docs.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"a\": " + std::to_string(i % 20) +
                          ", \"b\": " + std::to_string(i) + ", \"author\": " + std::to_string(i % 7) + "}"));
    }
    ASSERT_TRUE(Coll(coll, db).InsertMany(docs).ok());
  }
  // app.<coll>: {_id: i, name: "n<i>"} for i < 7.
  void FillAuthors(const std::string& coll = "authors") {
    std::vector<Document> docs;
    for (int i = 0; i < 7; ++i) {
      docs.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"name\": \"n" + std::to_string(i) + "\"}"));
    }
    ASSERT_TRUE(Coll(coll).InsertMany(docs).ok());
  }
  void Clear() { ASSERT_TRUE(client_->ClearQueryStats().ok()); }
  Document Run(std::string_view json, std::string_view db = "app") {
    return client_->RunCommand(db, Json(json));
  }
  Document Ok(std::string_view json, std::string_view db = "app") {
    Document r = Run(json, db);
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1.0) << json << " -> " << ToJson(r);
    return r;
  }
  // "<code> <codeName>: <errmsg>" of a command that must fail.
  std::string Error(std::string_view json, std::string_view db = "app") {
    Document r = Run(json, db);
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 0.0) << json << " -> " << ToJson(r);
    return std::to_string(r.Get("code").AsInt32().value_or(-1)) + " " +
           std::string(r.Get("codeName").AsString().value_or("")) + ": " +
           std::string(r.Get("errmsg").AsString().value_or(""));
  }
  // explain("executionStats") of the same find: its totals.
  struct Examined {
    int64_t keys = 0, docs = 0, returned = 0;
    std::string summary;  // the winning plan's leaves, as a planSummary
  };
  Examined ExplainFind(const std::string& coll, const Document& filter, const FindOptions& o = {}) {
    auto e = Coll(coll).ExplainFind(filter, o, ExplainVerbosity::kExecutionStats);
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok()) return {};
    Examined out{Num(*e, "executionStats.totalKeysExamined"),
                 Num(*e, "executionStats.totalDocsExamined"), Num(*e, "executionStats.nReturned"), {}};
    Summarize(e->GetPath("queryPlanner.winningPlan").Document(), &out.summary);
    return out;
  }
  // MongoDB's planSummary from an explained plan: its leaves, an index
  // scan's with its key pattern.
  static void Summarize(DocumentView stage, std::string* out) {
    if (stage.Get("inputStage").IsDocument()) return Summarize(stage.Get("inputStage").Document(), out);
    if (stage.Get("inputStages").IsArray()) {
      for (Element s : stage.Get("inputStages").Array()) Summarize(s.Document(), out);
      return;
    }
    if (!out->empty()) *out += ", ";
    *out += stage.Get("stage").String();
    if (stage.Get("keyPattern").IsDocument()) {
      *out += " {";
      bool first = true;
      for (Element k : stage.Get("keyPattern").Document()) {
        *out += std::string(first ? " " : ", ") + std::string(k.key()) + ": " +
                (k.NumberAsDouble() < 0 ? "-1" : "1");
        first = false;
      }
      *out += " }";
    }
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

// rockdoc-serve reads the user of an authenticated connection before every
// command: the engine's bookkeeping, never a shape in $queryStats (nor the
// profile). The application's reads beside it are recorded.
TEST_F(QueryStatsTest, ReadsOfTheUsersCollectionAreNotRecorded) {
  Collection users = Coll("rockdoc.users", "admin");  // wire/users.h's
  auto inserted = users.InsertOne(Json(R"({"_id": "admin.ann", "user": "ann"})"));
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  for (int i = 0; i < 3; ++i) {
    auto found = users.FindOne(Json(R"({"_id": "admin.ann"})"));
    ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
  }
  EXPECT_EQ(Drain(users.Find(Json(R"({"user": "ann"})"))), 1);
  EXPECT_EQ(Drain(Coll("c").Find(Json(R"({"a": 1})"))), 0);
  EXPECT_TRUE(StatsOf("rockdoc.users", "find", "admin").empty());
  EXPECT_EQ(StatsOf("c", "find").size(), 1u);
}

// N finds of known selectivity, without and with an index: the recorded
// figures are the results counted and explain's totals for the same finds.
TEST_F(QueryStatsTest, FindFiguresAreTheResultsAndExplainsTotals) {
  Fill(200);
  for (bool indexed : {false, true}) {
    SCOPED_TRACE(indexed ? "indexed" : "not indexed");
    if (indexed) {
      ASSERT_TRUE(Coll("c").CreateIndex(Json(R"({"a": 1})")).ok());
    }
    Examined expected;
    int64_t max_returned = 0, min_returned = 1 << 30;
    for (int k : {0, 1, 2, 3, 4, 99}) {
      Document filter = Json("{\"a\": " + std::to_string(k) + "}");
      const Examined e = ExplainFind("c", filter);
      expected.keys += e.keys;
      expected.docs += e.docs;
      expected.returned += e.returned;
    }
    Clear();  // explain is not a run: nothing to clear, but make sure
    ASSERT_TRUE(AllStats().empty()) << Dump(AllStats());
    int64_t returned = 0;
    for (int k : {0, 1, 2, 3, 4, 99}) {
      const int64_t n = Drain(Coll("c").Find(Json("{\"a\": " + std::to_string(k) + "}")));
      returned += n;
      max_returned = std::max(max_returned, n);
      min_returned = std::min(min_returned, n);
    }
    EXPECT_EQ(returned, 50);  // 10 of 200 per value of a in 0..4, none of 99
    EXPECT_EQ(expected.returned, 50);
    Document s = Only("c", "find");
    EXPECT_EQ(Str(s, "key.queryShape.filter.a.$eq"), "?number");
    EXPECT_EQ(Num(s, "metrics.execCount"), 6);
    EXPECT_EQ(Num(s, "metrics.docsReturned.sum"), returned);
    EXPECT_EQ(Num(s, "metrics.docsReturned.max"), max_returned);
    EXPECT_EQ(Num(s, "metrics.docsReturned.min"), min_returned);
    EXPECT_EQ(Num(s, "metrics.keysExamined.sum"), expected.keys);
    EXPECT_EQ(Num(s, "metrics.docsExamined.sum"), expected.docs);
    EXPECT_EQ(Num(s, "rockdoc.collScans"), indexed ? 0 : 6);
    EXPECT_EQ(Str(s, "rockdoc.planSummary"), indexed ? "IXSCAN { a: 1 }" : "COLLSCAN");
    EXPECT_EQ(ExplainFind("c", Json(R"({"a": 1})")).summary, Str(s, "rockdoc.planSummary"));
    EXPECT_FALSE(s.GetPath("rockdoc.caseInsensitiveRegex").Bool());
    if (indexed) {
      EXPECT_EQ(expected.docs, 50);  // the index examines only what matches
    } else {
      EXPECT_EQ(expected.docs, 6 * 200);
      EXPECT_EQ(expected.keys, 0);
    }
    Clear();
  }
}

// Two candidate indexes race; a covered read; a sort with a limit: still
// explain's totals.
TEST_F(QueryStatsTest, FiguresOfRacedCoveredAndSortedPlansAreExplainsToo) {
  Fill(300);
  ASSERT_TRUE(Coll("c").CreateIndex(Json(R"({"a": 1})")).ok());
  ASSERT_TRUE(Coll("c").CreateIndex(Json(R"({"b": 1})")).ok());
  struct Case {
    const char* filter;
    FindOptions options;
  };
  FindOptions covered;
  covered.projection = Json(R"({"a": 1, "_id": 0})");
  FindOptions sorted;
  sorted.sort = Json(R"({"b": -1})");
  sorted.limit = 5;
  sorted.skip = 2;
  const Case cases[] = {{R"({"a": 3, "b": {"$gte": 100}})", {}},
                        {R"({"a": {"$lt": 4}})", covered},
                        {R"({"a": {"$in": [1, 2]}})", sorted}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.filter);
    const Examined e = ExplainFind("c", Json(c.filter), c.options);
    Clear();
    EXPECT_EQ(Drain(Coll("c").Find(Json(c.filter), c.options)), e.returned);
    Document s = Only("c", "find");
    EXPECT_EQ(Num(s, "metrics.keysExamined.sum"), e.keys);
    EXPECT_EQ(Num(s, "metrics.docsExamined.sum"), e.docs);
    EXPECT_EQ(Num(s, "metrics.docsReturned.sum"), e.returned);
    EXPECT_EQ(Str(s, "rockdoc.planSummary"), e.summary);
    EXPECT_THAT(e.summary, ::testing::StartsWith("IXSCAN { "));
  }
  // The covered read examined no document; the sorted one kept its sort,
  // skip and limit in its shape.
  EXPECT_EQ(ExplainFind("c", Json(R"({"a": {"$lt": 4}})"), covered).docs, 0);
  Document s = Only("c", "find");
  EXPECT_EQ(ToJson(s.GetPath("key.queryShape").Document()),
            R"({"cmdNs": {"db": "app", "coll": "c"}, "command": "find", )"
            R"("filter": {"a": {"$in": "?array<?number>"}}, "sort": {"b": -1}, )"
            R"("skip": "?number", "limit": "?number"})");
}

// A cursor is recorded when it goes away, with what it returned.
TEST_F(QueryStatsTest, ACursorClosedEarlyIsRecordedWithWhatItReturned) {
  Fill(200);
  {
    StatusOr<Cursor> cursor = Coll("c").Find(Json("{}"));
    ASSERT_TRUE(cursor.ok());
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(cursor->Next());
    EXPECT_TRUE(StatsOf("c", "find").empty()) << "recorded before it ended";
  }
  Document s = Only("c", "find");
  EXPECT_EQ(Num(s, "metrics.execCount"), 1);
  EXPECT_EQ(Num(s, "metrics.docsReturned.sum"), 7);
  EXPECT_GE(Num(s, "metrics.docsExamined.sum"), 7);
  EXPECT_LT(Num(s, "metrics.docsExamined.sum"), 200);
  // FindOne: one returned, as a find with a limit.
  ASSERT_TRUE(Coll("c").FindOne(Json(R"({"a": 3})")).ok());
  std::vector<Document> finds = StatsOf("c", "find");
  ASSERT_EQ(finds.size(), 2u);
  for (const Document& d : finds) {
    if (d.GetPath("key.queryShape.limit").ok()) {
      EXPECT_EQ(Num(d, "metrics.docsReturned.sum"), 1);
    }
  }
}

// Server-side cursors (find, getMore, killCursors): one run, recorded when
// the cursor is exhausted or killed, with every batch it returned.
TEST_F(QueryStatsTest, AServerCursorIsOneRunWithAllItsBatches) {
  Fill(20);
  Document first = Ok(R"({"find": "c", "filter": {"a": {"$lt": 10}}, "batchSize": 3})");
  const int64_t id = first.GetPath("cursor.id").Int64();
  ASSERT_NE(id, 0);
  EXPECT_TRUE(StatsOf("c", "find").empty());
  int64_t returned = first.GetPath("cursor.firstBatch").Array().CountFields();
  for (int64_t more = id; more != 0;) {
    Document next = Ok("{\"getMore\": {\"$numberLong\": \"" + std::to_string(more) +
                       "\"}, \"collection\": \"c\", \"batchSize\": 4}");
    returned += next.GetPath("cursor.nextBatch").Array().CountFields();
    more = next.GetPath("cursor.id").Int64();
  }
  EXPECT_EQ(returned, 10);
  Document s = Only("c", "find");
  EXPECT_EQ(Num(s, "metrics.execCount"), 1);
  EXPECT_EQ(Num(s, "metrics.docsReturned.sum"), 10);
  EXPECT_EQ(Num(s, "metrics.docsExamined.sum"), 20);
  // Killed after its first batch of 2. Known difference: 3 are counted,
  // the client got 2. To tell an exhausted cursor from one with more, the
  // command layer reads one document ahead of a full batch (FillBatch) and
  // keeps it for the next; the plan returned it, the client never saw it.
  // MongoDB would say 2.
  Clear();
  Document killed = Ok(R"({"find": "c", "filter": {"a": {"$lt": 10}}, "batchSize": 2})");
  EXPECT_EQ(killed.GetPath("cursor.firstBatch").Array().CountFields(), 2u);
  Ok("{\"killCursors\": \"c\", \"cursors\": [{\"$numberLong\": \"" +
     std::to_string(killed.GetPath("cursor.id").Int64()) + "\"}]}");
  EXPECT_EQ(Num(Only("c", "find"), "metrics.docsReturned.sum"), 2 + 1);
}

// Reads on many threads at once: every run counted once.
TEST_F(QueryStatsTest, ConcurrentReadsAreEachCountedOnce) {
  Fill(50);
  constexpr int kThreads = 4, kRuns = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kRuns; ++i) {
        // Five shapes, each on every thread; shapes new to the store race.
        Document filter = Json("{\"f" + std::to_string(i % 5) + "\": " + std::to_string(t) + "}");
        Drain(Coll("c").Find(filter));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<Document> all = StatsOf("c", "find");
  ASSERT_EQ(all.size(), 5u) << Dump(all);
  for (const Document& d : all) {
    EXPECT_EQ(Num(d, "metrics.execCount"), kThreads * kRuns / 5);
    EXPECT_EQ(Num(d, "metrics.docsExamined.sum"), kThreads * kRuns / 5 * 50);
  }
}

// A cursor that outlives its client's Close ends without harm, slow or not
// (its run, after the statistics were persisted, is not kept).
TEST_F(QueryStatsTest, ACursorEndingAfterTheClientClosedIsHarmless) {
  Fill(20);
  internal::SetClockForTesting(&FakeClock);
  g_step = 200'000'000;  // every clock read 200 ms on: a slow query
  for (int level : {0, 2}) {
    ASSERT_TRUE(client_->GetDatabase("app").SetProfilingLevel(level).ok());
    StatusOr<Cursor> cursor = Coll("c").Find(Json(R"({"a": {"$gte": 0}})"));
    ASSERT_TRUE(cursor.ok());
    ASSERT_TRUE(cursor->Next());
    ASSERT_TRUE(client_->Close().ok());
    EXPECT_FALSE(cursor->Next());
    EXPECT_EQ(cursor->status().code(), ErrorCode::kIllegalOperation);
    cursor = Status(ErrorCode::kBadValue, "gone");  // the cursor ends here
    Open();
  }
  g_step = 0;
  EXPECT_TRUE(StatsOf("c", "find").empty()) << Dump(AllStats());
}

TEST_F(QueryStatsTest, CountAndDistinctAreRecordedAsThemselves) {
  Fill(200);
  ASSERT_TRUE(Coll("c").CreateIndex(Json(R"({"b": 1})")).ok());
  Document filter = Json(R"({"a": {"$lt": 5}})");
  auto count_plan = Coll("c").ExplainCount(filter, {}, ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(count_plan.ok()) << count_plan.status();
  auto distinct_plan = Coll("c").ExplainDistinct("a", Json(R"({"b": {"$lt": 90}})"), {},
                                                 ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(distinct_plan.ok()) << distinct_plan.status();

  StatusOr<int64_t> n = Coll("c").CountDocuments(filter);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 50);
  StatusOr<int64_t> m = Coll("c").CountDocuments(Json(R"({"a": {"$lt": 2}})"));
  ASSERT_TRUE(m.ok());
  Document count = Only("c", "count");
  EXPECT_EQ(Num(count, "metrics.execCount"), 2);
  EXPECT_EQ(Num(count, "metrics.docsReturned.sum"), *n + *m);  // a count returns its count
  EXPECT_EQ(Num(count, "metrics.docsReturned.max"), 50);
  EXPECT_EQ(Num(count, "metrics.docsExamined.max"), Num(*count_plan, "executionStats.totalDocsExamined"));
  EXPECT_EQ(Str(count, "rockdoc.planSummary"), "COLLSCAN");

  StatusOr<std::vector<Value>> values = Coll("c").Distinct("a", Json(R"({"b": {"$lt": 90}})"));
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(values->size(), 20u);
  Document distinct = Only("c", "distinct");
  EXPECT_EQ(Str(distinct, "key.queryShape.key"), "a");
  EXPECT_EQ(Num(distinct, "metrics.docsReturned.sum"), 20);  // the values
  EXPECT_EQ(Num(distinct, "metrics.keysExamined.sum"),
            Num(*distinct_plan, "executionStats.totalKeysExamined"));
  EXPECT_EQ(Num(distinct, "metrics.docsExamined.sum"),
            Num(*distinct_plan, "executionStats.totalDocsExamined"));
  EXPECT_EQ(Str(distinct, "rockdoc.planSummary"), "IXSCAN { b: 1 }");
  // The distinct's own find is part of it, not a shape of its own.
  EXPECT_TRUE(StatsOf("c", "find").empty()) << Dump(AllStats());
  // Another key: another shape.
  ASSERT_TRUE(Coll("c").Distinct("b", Json(R"({"b": {"$lt": 90}})")).ok());
  EXPECT_EQ(StatsOf("c", "distinct").size(), 2u);
}

// An aggregate's figures are those of its leading find and of its
// $lookups' reads, as explain counts them per stage; none of those reads
// is recorded apart.
TEST_F(QueryStatsTest, AnAggregateCountsWhatItsFindAndLookupsExamined) {
  Fill(100, "posts");
  FillAuthors();
  FillAuthors("editors");
  ASSERT_TRUE(Coll("posts").CreateIndex(Json(R"({"a": 1})")).ok());
  Document pipeline = Array(R"([
      {"$match": {"a": {"$lt": 3}}},
      {"$lookup": {"from": "authors", "localField": "author", "foreignField": "_id", "as": "by"}},
      {"$lookup": {"from": "editors", "localField": "author", "foreignField": "name", "as": "x"}},
      {"$project": {"by.name": 1}}])");
  auto plan = Coll("posts").ExplainAggregate(pipeline, {}, ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(plan.ok()) << plan.status();
  int64_t keys = 0, docs = 0;
  for (Element stage : plan->Get("stages").Array()) {
    DocumentView st = stage.Document();
    Element cursor = st.Get("$cursor");
    DocumentView figures = cursor.ok() ? cursor.Document().Get("executionStats").Document() : st;
    keys += figures.Get("totalKeysExamined").AsExactInt64().value_or(0);
    docs += figures.Get("totalDocsExamined").AsExactInt64().value_or(0);
  }
  // What explain says, checked by hand: 15 keys and posts from the index,
  // a key and an author per post (IDHACK), one scan of the 7 editors.
  EXPECT_EQ(keys, 15 + 15) << ToJson(*plan);
  EXPECT_EQ(docs, 15 + 15 + 7) << ToJson(*plan);

  Clear();
  EXPECT_EQ(Drain(Coll("posts").Aggregate(pipeline)), 15);
  Document s = Only("posts", "aggregate");
  EXPECT_EQ(Num(s, "metrics.execCount"), 1);
  EXPECT_EQ(Num(s, "metrics.docsReturned.sum"), 15);
  EXPECT_EQ(Num(s, "metrics.keysExamined.sum"), keys);
  EXPECT_EQ(Num(s, "metrics.docsExamined.sum"), docs);
  // The plan of its find, not of a $lookup's read (which end first).
  EXPECT_EQ(Str(s, "rockdoc.planSummary"), "IXSCAN { a: 1 }");
  EXPECT_EQ(ToJson(s.GetPath("rockdoc.lookups").Document()), R"({"authors": 1, "editors": 1})");
  EXPECT_EQ(Num(s, "rockdoc.collScans"), 1);  // the hash join's scan
  EXPECT_EQ(AllStats().size(), 1u) << Dump(AllStats());

  // A find that scans the collection, then _id reads: "COLLSCAN".
  Clear();
  EXPECT_EQ(Drain(Coll("posts").Aggregate(Array(R"([{"$match": {"b": {"$lt": 5}}},
      {"$lookup": {"from": "authors", "localField": "author", "foreignField": "_id", "as": "by"}}])"))), 5);
  s = Only("posts", "aggregate");
  EXPECT_EQ(Str(s, "rockdoc.planSummary"), "COLLSCAN");
  EXPECT_EQ(Num(s, "rockdoc.collScans"), 1);
  EXPECT_EQ(Num(s, "metrics.docsExamined.sum"), 100 + 5);
  EXPECT_EQ(Num(s, "metrics.keysExamined.sum"), 5);
}

// explain runs the query but is not a run of it: nothing is recorded,
// not even the reads of an explained aggregate's $lookup.
TEST_F(QueryStatsTest, ExplainRecordsNothing) {
  Fill(20, "posts");
  FillAuthors();
  Document pipeline = Array(R"([
      {"$lookup": {"from": "authors", "localField": "author", "foreignField": "_id", "as": "by"}},
      {"$lookup": {"from": "authors", "localField": "author", "foreignField": "name", "as": "x"}}])");
  for (ExplainVerbosity v : {ExplainVerbosity::kQueryPlanner, ExplainVerbosity::kExecutionStats,
                             ExplainVerbosity::kAllPlansExecution}) {
    ASSERT_TRUE(Coll("posts").ExplainFind(Json(R"({"a": 1})"), {}, v).ok());
    ASSERT_TRUE(Coll("posts").ExplainCount(Json(R"({"a": 1})"), {}, v).ok());
    ASSERT_TRUE(Coll("posts").ExplainDistinct("a", Json("{}"), {}, v).ok());
    ASSERT_TRUE(Coll("posts").ExplainAggregate(pipeline, {}, v).ok());
  }
  EXPECT_TRUE(AllStats().empty()) << Dump(AllStats());
}

// A collectionless aggregate ({aggregate: 1}: $documents) is not
// recorded, and its $lookup's reads are its own: not recorded apart either.
TEST_F(QueryStatsTest, ACollectionlessAggregatesLookupsAreNotRecordedApart) {
  Fill(20, "posts");
  FillAuthors();
  Document pipeline = Array(R"([{"$documents": [{"x": 1}, {"x": 2}, {"x": 3}]},
      {"$lookup": {"from": "authors", "localField": "x", "foreignField": "_id", "as": "by"}},
      {"$lookup": {"from": "posts", "localField": "x", "foreignField": "a", "as": "p"}}])");
  ASSERT_GE(Drain(Coll("posts").Find(Json(R"({"a": 1})"))), 0);
  Clear();
  StatusOr<Cursor> cursor = client_->GetDatabase("app").Aggregate(pipeline);
  EXPECT_EQ(Drain(std::move(cursor)), 3);
  EXPECT_TRUE(AllStats().empty()) << Dump(AllStats());
}

TEST_F(QueryStatsTest, CaseInsensitiveRegexesAreMarked) {
  Fill(20);
  BsonBuilder op;
  op.OpenDocument("s").AppendString("$regex", "x").AppendString("$options", "i").Close();
  Document as_operator = std::move(op).Build();
  BsonBuilder op_m;
  op_m.OpenDocument("t").AppendString("$regex", "x").AppendString("$options", "m").Close();
  Document sensitive_operator = std::move(op_m).Build();
  // Each on its own field: a shape of its own.
  const std::pair<Document, bool> kCases[] = {
      {Json(R"({"p": {"$regularExpression": {"pattern": "x", "options": "i"}}})"), true},
      {as_operator, true},
      {Json(R"({"q": {"$in": ["a", {"$regularExpression": {"pattern": "x", "options": "i"}}]}})"), true},
      {Json(R"({"r": {"$regularExpression": {"pattern": "x", "options": ""}}})"), false},
      {sensitive_operator, false},
      {Json(R"({"u": "i"})"), false},
  };
  for (const auto& c : kCases) ASSERT_GE(Drain(Coll("c").Find(c.first)), 0);
  std::vector<Document> all = StatsOf("c", "find");
  ASSERT_EQ(all.size(), std::size(kCases));
  for (const auto& c : kCases) {
    const std::string field((*c.first.begin()).key());
    bool found = false;
    for (const Document& d : all) {
      if (!d.GetPath("key.queryShape.filter." + field).ok()) continue;
      found = true;
      EXPECT_EQ(d.GetPath("rockdoc.caseInsensitiveRegex").Bool(), c.second) << ToJson(d);
    }
    EXPECT_TRUE(found) << field;
  }
}

// An _id read of another collection of the database, on this thread, at
// most a second after a query: an application-level join.
TEST_F(QueryStatsTest, AnIdReadOfAnotherCollectionJustAfterAQueryIsAnAppJoin) {
  Fill(30, "posts");
  Fill(30, "posts", "other");
  FillAuthors();
  internal::SetClockForTesting(&FakeClock);
  std::vector<Document> posts = *Coll("posts").Find(Json(R"({"a": {"$lt": 2}})"))->ToVector();
  ASSERT_EQ(posts.size(), 4u);
  for (const Document& p : posts) {
    auto author = Coll("authors").FindOne(Json("{\"_id\": " + std::to_string(p.Get("author").Int32()) + "}"));
    ASSERT_TRUE(author.ok() && author->has_value());
  }
  Document join = Only("authors", "find");
  EXPECT_EQ(ToJson(join.GetPath("key.queryShape").Document()),
            R"({"cmdNs": {"db": "app", "coll": "authors"}, "command": "find", )"
            R"("filter": {"_id": {"$eq": "?number"}}, "limit": "?number"})");
  EXPECT_TRUE(join.GetPath("rockdoc.idLookup").Bool());
  EXPECT_EQ(Str(join, "rockdoc.planSummary"), "IDHACK");
  EXPECT_EQ(Num(join, "metrics.keysExamined.sum"), 4);
  EXPECT_EQ(Num(join, "metrics.docsExamined.sum"), 4);
  EXPECT_EQ(Num(join, "rockdoc.appJoins.count"), 4);
  EXPECT_EQ(ToJson(join.GetPath("rockdoc.appJoins.after").Document()), R"({"posts": 4})");
  // The query itself is no join.
  EXPECT_EQ(Num(Only("posts", "find"), "rockdoc.appJoins.count"), 0);

  // Reads by _id of the queried collection itself are no join.
  Clear();
  ASSERT_GE(Drain(Coll("posts").Find(Json(R"({"a": 1})"))), 0);
  ASSERT_TRUE(Coll("posts").FindOne(Json(R"({"_id": 3})")).ok());
  std::vector<Document> same = StatsOf("posts", "find");
  ASSERT_EQ(same.size(), 2u);
  for (const Document& d : same) EXPECT_EQ(Num(d, "rockdoc.appJoins.count"), 0) << ToJson(d);

  // Past the window (a second): no join.
  Clear();
  ASSERT_GE(Drain(Coll("posts").Find(Json(R"({"a": 1})"))), 0);
  g_now += 1'000'000'001;
  ASSERT_TRUE(Coll("authors").FindOne(Json(R"({"_id": 3})")).ok());
  EXPECT_EQ(Num(Only("authors", "find"), "rockdoc.appJoins.count"), 0);
  // Within it: a join (a query of another database in between is not
  // this database's).
  ASSERT_GE(Drain(Coll("posts").Find(Json(R"({"a": 1})"))), 0);
  g_now += 999'000'000;
  ASSERT_TRUE(Coll("authors").FindOne(Json(R"({"_id": 4})")).ok());
  EXPECT_EQ(Num(Only("authors", "find"), "rockdoc.appJoins.count"), 1);
  ASSERT_GE(Drain(Coll("posts", "other").Find(Json(R"({"a": 1})"))), 0);
  ASSERT_TRUE(Coll("authors").FindOne(Json(R"({"_id": 4})")).ok());
  EXPECT_EQ(Num(Only("authors", "find"), "rockdoc.appJoins.count"), 1);
}

// The N+1 pattern as applications write it: an _id read per document while
// the query's cursor is still open.
TEST_F(QueryStatsTest, IdReadsInsideALoopOverAnOpenCursorAreAppJoins) {
  Fill(30, "posts");
  FillAuthors();
  internal::SetClockForTesting(&FakeClock);
  {
    StatusOr<Cursor> posts = Coll("posts").Find(Json(R"({"a": {"$lt": 2}})"));
    ASSERT_TRUE(posts.ok());
    while (posts->Next()) {
      Document filter = Json("{\"_id\": " + std::to_string(posts->document().Get("author").Int32()) + "}");
      ASSERT_TRUE(Coll("authors").FindOne(filter).ok());
    }
  }
  Document join = Only("authors", "find");
  EXPECT_EQ(Num(join, "rockdoc.appJoins.count"), 4);
  EXPECT_EQ(ToJson(join.GetPath("rockdoc.appJoins.after").Document()), R"({"posts": 4})");
}

// At most 1,000 shapes: a new one past that evicts the least recently run.
TEST_F(QueryStatsTest, AtMostAThousandShapesTheLeastRecentlyRunEvicted) {
  Fill(1);
  auto run = [&](int i) {
    ASSERT_EQ(Drain(Coll("c").Find(Json("{\"f" + std::to_string(i) + "\": 1}"))), 0);
  };
  auto fields = [&]() {
    std::set<std::string> out;
    for (const Document& d : AllStats()) out.insert(std::string((*d.GetPath("key.queryShape.filter").Document().begin()).key()));
    return out;
  };
  for (int i = 0; i < 1000; ++i) run(i);
  EXPECT_EQ(AllStats().size(), 1000u);
  run(0);     // f0 is now the most recently run, f1 the least
  run(1000);  // a new shape: f1 goes
  std::set<std::string> kept = fields();
  EXPECT_EQ(kept.size(), 1000u);
  EXPECT_EQ(kept.count("f1"), 0u);
  EXPECT_EQ(kept.count("f0"), 1u);
  EXPECT_EQ(kept.count("f2"), 1u);
  EXPECT_EQ(kept.count("f1000"), 1u);
  for (int i = 1001; i < 1050; ++i) run(i);  // f2..f50 go, in the order they ran
  kept = fields();
  EXPECT_EQ(kept.size(), 1000u);
  for (int i = 2; i <= 50; ++i) EXPECT_EQ(kept.count("f" + std::to_string(i)), 0u) << i;
  for (int i : {0, 51, 999, 1000, 1049}) EXPECT_EQ(kept.count("f" + std::to_string(i)), 1u) << i;
  // An evicted shape that runs again starts over.
  run(1);
  for (const Document& d : StatsOf("c", "find")) {
    if (d.GetPath("key.queryShape.filter.f1").ok()) {
      EXPECT_EQ(Num(d, "metrics.execCount"), 1);
    }
    if (d.GetPath("key.queryShape.filter.f0").ok()) {
      EXPECT_EQ(Num(d, "metrics.execCount"), 2);
    }
  }
  EXPECT_EQ(AllStats().size(), 1000u);
}

// The entries as JSON, sorted (the order of equally run shapes is not kept).
std::vector<std::string> Sorted(const std::vector<Document>& docs) {
  std::vector<std::string> out;
  for (const Document& d : docs) out.push_back(ToJson(d, JsonFormat::kCanonical));
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(QueryStatsTest, StatisticsSurviveAReopenAndClearingForgetsThemForGood) {
  Fill(50, "posts");
  FillAuthors();
  ASSERT_TRUE(Coll("posts").CreateIndex(Json(R"({"a": 1})")).ok());
  for (int i = 0; i < 3; ++i) ASSERT_GE(Drain(Coll("posts").Find(Json(R"({"a": {"$gt": 15}})"))), 0);
  ASSERT_TRUE(Coll("authors").FindOne(Json(R"({"_id": 2})")).ok());  // a join after posts
  ASSERT_TRUE(Coll("posts").CountDocuments(Json(R"({"b": {"$gt": 5}})")).ok());
  ASSERT_TRUE(Coll("posts").Distinct("a", Json("{}")).ok());
  ASSERT_GE(Drain(Coll("posts").Aggregate(Array(
                R"([{"$lookup": {"from": "authors", "localField": "author", "foreignField": "_id", "as": "by"}}])"))),
            0);
  Fill(3, "c", "other");
  Fill(3, "d", "other");
  ASSERT_GE(Drain(Coll("c", "other").Find(Json(R"({"x": "y"})"))), 0);
  const std::vector<Document> before = AllStats();
  ASSERT_EQ(before.size(), 6u) << Dump(before);

  Open();
  EXPECT_EQ(Sorted(AllStats()), Sorted(before));
  // The same shape after the reopen: the entry it had, counting on.
  ASSERT_GE(Drain(Coll("posts").Find(Json(R"({"a": {"$gt": 2}})"))), 0);
  EXPECT_EQ(Num(Only("posts", "find"), "metrics.execCount"), 4);
  EXPECT_EQ(AllStats().size(), 6u);

  // Cleared, then one new query in "other": app's persisted entries go,
  // other's are the new one's alone.
  Open();
  Clear();
  EXPECT_TRUE(AllStats().empty());
  ASSERT_GE(Drain(Coll("d", "other").Find(Json(R"({"z": 1})"))), 0);
  Open();
  std::vector<Document> after = AllStats();
  ASSERT_EQ(after.size(), 1u) << Dump(after);
  EXPECT_EQ(Str(after[0], "key.queryShape.cmdNs.coll"), "d");
  // Cleared with nothing after it: nothing at the next open.
  Ok(R"({"clearQueryStats": 1})", "admin");
  Open();
  EXPECT_TRUE(AllStats().empty()) << Dump(AllStats());
}

// Damaged persisted statistics: the open fails with DataCorruptionDetected
// naming them (never a crash, never silently dropped). Statistics are only
// advisory, but a damaged catalog entry is refused the same way, and a
// silent drop would hide the damage.
TEST_F(QueryStatsTest, DamagedPersistedStatisticsAreDroppedAndLogged) {
  Fill(5);
  ASSERT_GE(Drain(Coll("c").Find(Json(R"({"a": 1})"))), 0);
  Open();  // persisted at the close, read back
  ASSERT_EQ(StatsOf("c", "find").size(), 1u);
  std::string good;
  {
    auto engine = internal::ClientAccess::EngineOf(client_->GetDatabase("app"));
    bool found = false;
    ASSERT_TRUE(engine->ReadMetadata(internal::QueryStatsKey("app"), &good, &found).ok());
    ASSERT_TRUE(found);
  }
  client_.reset();
  const Document entry = Document::AdoptValidated(
      std::string(Document::AdoptValidated(good).Get("entries").Array().Get("0").Document().bytes()));
  // The entry with `field` replaced by `value` (none: removed).
  auto with = [&](std::string_view field, std::optional<std::string> value) {
    BsonBuilder b;
    b.OpenArray("entries").OpenDocument("");
    for (Element e : entry) {
      if (e.key() != field) {
        b.AppendElement(e);
      } else if (value) {
        b.AppendString(field, *value);
      }
    }
    b.Close().Close();
    return std::string(std::move(b).Build().bytes());
  };
  const std::pair<std::string, std::string> kDamage[] = {
      {good.substr(0, good.size() / 2), "no entries array"},  // not BSON: cut short
      {Json(R"({"entries": 5})").bytes(), "no entries array"},
      {Json(R"({"entries": [1]})").bytes(), "an entry is not a document"},
      {with("metrics", std::nullopt), "lacks key.queryShape, metrics"},
      {with("queryShapeHash", "zzzzzzzzzzzzzzzz"), "not hexadecimal"},
      {with("queryShapeHash", "12"), "lacks key.queryShape"},
  };
  int i = 0;
  for (const auto& [value, message] : kDamage) {
    SCOPED_TRACE(message);
    const std::string path = dir_.Sub("damaged" + std::to_string(i++));
    {
      auto c = Client::Open(path);
      ASSERT_TRUE(c.ok()) << c.status();
      auto engine = internal::ClientAccess::EngineOf((*c)->GetDatabase("app"));
      ASSERT_TRUE(engine->WriteMetadata({{internal::Engine::MetadataWrite::Op::kPut,
                                          internal::QueryStatsKey("app"), value}})
                      .ok());
    }
    // Statistics are the engine's notes, not data: the database opens, the
    // damaged value is dropped, and the LOG says why.
    auto reopened = Client::Open(path);
    ASSERT_TRUE(reopened.ok()) << reopened.status();
    auto cursor = (*reopened)->GetDatabase("admin").Aggregate(Json(R"({"p": [{"$queryStats": {}}]})").Get("p").Array());
    ASSERT_TRUE(cursor.ok());
    EXPECT_FALSE(cursor->Next());
    std::ifstream log(path + "/LOG");
    std::stringstream text;
    text << log.rdbuf();
    EXPECT_THAT(text.str(), HasSubstr("persisted query statistics are damaged"));
    EXPECT_THAT(text.str(), HasSubstr(message));
  }
  // The good value, written the same way, opens.
  {
    auto c = Client::Open(dir_.Sub("fine"));
    ASSERT_TRUE(c.ok());
    auto engine = internal::ClientAccess::EngineOf((*c)->GetDatabase("app"));
    ASSERT_TRUE(engine->WriteMetadata({{internal::Engine::MetadataWrite::Op::kPut,
                                        internal::QueryStatsKey("app"), good}})
                    .ok());
  }
  auto fine = Client::Open(dir_.Sub("fine"));
  ASSERT_TRUE(fine.ok()) << fine.status();
}

TEST_F(QueryStatsTest, WithoutStatisticsNothingIsRecordedAndTheProfilerStaysOff) {
  Fill(20, "posts");
  FillAuthors();
  ClientOptions off;
  off.collect_statistics = false;
  Open(off);
  ASSERT_GE(Drain(Coll("posts").Find(Json(R"({"a": 1})"))), 0);
  ASSERT_TRUE(Coll("authors").FindOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(Coll("posts").CountDocuments(Json(R"({"a": 1})")).ok());
  ASSERT_TRUE(Coll("posts").Distinct("a", Json("{}")).ok());
  ASSERT_GE(Drain(Coll("posts").Aggregate(Array(R"([{"$match": {"a": 1}}])"))), 0);
  EXPECT_TRUE(AllStats().empty()) << Dump(AllStats());
  auto one = client_->GetDatabase("app").SetProfilingLevel(1);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().code(), ErrorCode::kIllegalOperation);
  EXPECT_THAT(one.status().message(), HasSubstr("collect_statistics"));
  EXPECT_THAT(Error(R"({"profile": 2})"), HasSubstr("20 IllegalOperation"));
  auto zero = client_->GetDatabase("app").SetProfilingLevel(0, 50);
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->was, 0);
  EXPECT_EQ(zero->slowms, 100);  // the settings before the call, as MongoDB's
  auto now = client_->GetDatabase("app").SetProfilingLevel(-1);
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_EQ(now->slowms, 50);
  EXPECT_EQ(Num(Ok(R"({"profile": -1})"), "was"), 0);
  // Nothing was persisted either.
  Open();
  EXPECT_TRUE(AllStats().empty()) << Dump(AllStats());
}

// ---------------------------------------------------------------- the profiler

// The profiler keeps a command's comment in its entry's command, as
// MongoDB's (issue 33 #9): find, count, distinct and aggregate.
TEST_F(QueryStatsTest, ProfileEntriesKeepTheCommandsComment) {
  Fill(20);
  Ok(R"({"profile": 2})");
  Ok(R"({"find": "c", "filter": {"a": 3}, "comment": "find-tag"})");
  Ok(R"({"count": "c", "query": {"a": 4}, "comment": {"who": "count-tag"}})");
  Ok(R"({"distinct": "c", "key": "a", "query": {"b": 1}, "comment": 7})");
  Ok(R"({"aggregate": "c", "pipeline": [{"$match": {"a": 5}}], "cursor": {},
         "comment": "agg-tag"})");
  Ok(R"({"find": "c", "filter": {"a": 6}})");
  Ok(R"({"profile": 0})");
  std::vector<Document> entries = *Coll("system.profile").Find(Json(R"({"ns": "app.c"})"))->ToVector();
  std::vector<std::string> comments;
  for (const Document& e : entries) {
    Element c = e.GetPath("command.comment");
    comments.push_back(c.ok() ? ValueToJson(c) : "none");
  }
  EXPECT_EQ(comments, (std::vector<std::string>{R"("find-tag")", R"({"who": "count-tag"})", "7",
                                                R"("agg-tag")", "none"}));
}


TEST_F(QueryStatsTest, ProfileLevelTwoWritesEveryReadToSystemProfile) {
  Fill(200);
  Document status = Ok(R"({"profile": -1})");
  EXPECT_EQ(ToJson(status), R"({"was": 0, "slowms": 100, "sampleRate": 1.0, "ok": 1.0})");
  EXPECT_EQ(status.Get("was").type(), BsonType::kInt32);
  EXPECT_EQ(Num(Ok(R"({"profile": 2})"), "was"), 0);
  EXPECT_EQ(Num(Ok(R"({"profile": -1})"), "was"), 2);
  EXPECT_EQ(Num(Ok(R"({"profile": -1})", "other"), "was"), 0);  // per database

  Document reply = Ok(R"({"find": "c", "filter": {"a": 3, "b": {"$gte": 10}}})");
  const int64_t returned = reply.GetPath("cursor.firstBatch").Array().CountFields();
  EXPECT_EQ(returned, 9);
  const Examined explained = ExplainFind("c", Json(R"({"a": 3, "b": {"$gte": 10}})"));
  Ok(R"({"count": "c", "query": {"a": 4}})");
  Fill(3, "c", "other");
  ASSERT_GE(Drain(Coll("c", "other").Find(Json("{}"))), 0);  // level 0 there

  std::vector<Document> entries =
      *Coll("system.profile").Find(Json(R"({"ns": "app.c"})"))->ToVector();
  ASSERT_EQ(entries.size(), 2u);
  const Document& find = entries[0];
  EXPECT_EQ(Str(find, "op"), "query");
  EXPECT_EQ(Str(find, "ns"), "app.c");
  EXPECT_EQ(Str(find, "command.find"), "c");
  EXPECT_EQ(ToJson(find.GetPath("command.filter").Document()), R"({"a": 3, "b": {"$gte": 10}})");
  EXPECT_EQ(Num(find, "nreturned"), returned);
  EXPECT_EQ(Num(find, "docsExamined"), explained.docs);
  EXPECT_EQ(Num(find, "keysExamined"), explained.keys);
  EXPECT_EQ(Str(find, "planSummary"), "COLLSCAN");
  EXPECT_TRUE(find.Get("ts").IsDateTime());
  const Document& count = entries[1];
  EXPECT_EQ(Str(count, "op"), "command");
  EXPECT_EQ(ToJson(count.GetPath("command.query").Document()), R"({"a": 4})");
  EXPECT_FALSE(count.Get("nreturned").ok());
  EXPECT_EQ(Drain(Coll("system.profile", "other").Find(Json("{}"))), 0);

  // A capped collection, as MongoDB's.
  Document stats = Ok(R"({"collStats": "system.profile"})");
  EXPECT_TRUE(stats.Get("capped").Bool()) << ToJson(stats);

  // Entries waiting at close are written then, and kept.
  ASSERT_GE(Drain(Coll("c").Find(Json(R"({"b": 7})"))), 0);
  Open();
  EXPECT_EQ(Num(Ok(R"({"profile": -1})"), "was"), 0);  // levels are not kept
  std::vector<Document> kept = *Coll("system.profile").Find(Json(R"({"ns": "app.c"})"))->ToVector();
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(ToJson(kept[2].GetPath("command.filter").Document()), R"({"b": 7})");
}

TEST_F(QueryStatsTest, ProfileLevelOneTakesWhatRunsSlowmsOrLonger) {
  Fill(20);
  // Every clock read moves 40 ms on: an _id read (two reads) takes 40 ms.
  internal::SetClockForTesting(&FakeClock);
  g_step = 40'000'000;
  EXPECT_EQ(Num(Ok(R"({"profile": 1, "slowms": 0})"), "was"), 0);
  ASSERT_TRUE(Coll("c").FindOne(Json(R"({"_id": 1})")).ok());
  // The reply has the settings before the command, as MongoDB's.
  EXPECT_EQ(ToJson(Ok(R"({"profile": 1, "slowms": 41})")),
            R"({"was": 1, "slowms": 0, "sampleRate": 1.0, "ok": 1.0})");
  ASSERT_TRUE(Coll("c").FindOne(Json(R"({"_id": 2})")).ok());
  Ok(R"({"profile": 1, "slowms": 40})");
  ASSERT_TRUE(Coll("c").FindOne(Json(R"({"_id": 3})")).ok());
  Ok(R"({"profile": 0})");
  g_step = 0;
  std::vector<Document> entries = *Coll("system.profile").Find(Json("{}"))->ToVector();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(ToJson(entries[0].GetPath("command.filter").Document()), R"({"_id": 1})");
  EXPECT_EQ(ToJson(entries[1].GetPath("command.filter").Document()), R"({"_id": 3})");
  EXPECT_EQ(Num(entries[1], "millis"), 40);
  EXPECT_EQ(Num(entries[1], "durationMicros"), 40000);
  EXPECT_EQ(Str(entries[1], "planSummary"), "IDHACK");
  // The same figures in the query statistics.
  Document s = Only("c", "find");
  EXPECT_EQ(Num(s, "metrics.execCount"), 3);
  EXPECT_EQ(Num(s, "metrics.totalExecMicros.sum"), 120000);
  EXPECT_EQ(Num(s, "metrics.lastExecutionMicros"), 40000);
  // A large slowms: nothing.
  Ok(R"({"profile": 1, "slowms": 100000})");
  g_step = 40'000'000;
  ASSERT_TRUE(Coll("c").FindOne(Json(R"({"_id": 4})")).ok());
  g_step = 0;
  EXPECT_EQ(Drain(Coll("system.profile").Find(Json("{}"))), 2);

  // The log has a line per read at or over slowms, at every level, naming
  // the shape by the hash $queryStats shows.
  const std::string hash = Str(Only("c", "find"), "queryShapeHash");
  client_.reset();
  std::ifstream log(dir_.Sub("db") + "/LOG");
  std::vector<std::string> slow;
  for (std::string line; std::getline(log, line);) {
    if (line.find("Slow query: app.c find") != std::string::npos) slow.push_back(line);
  }
  ASSERT_EQ(slow.size(), 2u);
  for (const std::string& line : slow) {
    EXPECT_THAT(line, HasSubstr("planSummary: IDHACK keysExamined: 1 docsExamined: 1 nreturned: 1 "
                                "durationMillis: 40 queryShapeHash: " + hash));
  }
}

TEST_F(QueryStatsTest, ProfileAndQueryStatsErrors) {
  EXPECT_EQ(Error(R"({"profile": 2, "sampleRate": 0.5})"),
            "238 NotImplemented: BSON field 'profile.sampleRate' other than 1.0 is not supported by "
            "rockdoc");
  EXPECT_THAT(Error(R"({"profile": 2, "filter": {"op": "query"}})"), HasSubstr("238 NotImplemented"));
  EXPECT_THAT(Error(R"({"profile": 3})"), HasSubstr("2 BadValue: Invalid profiling level: 3"));
  EXPECT_THAT(Error(R"({"profile": 1, "slowms": -1})"), HasSubstr("2 BadValue"));
  EXPECT_EQ(Error(R"({"profile": 2, "bogus": 1})"),
            "40415 Location40415: BSON field 'profile.bogus' is an unknown field.");
  // None of the refused commands changed the level or slowms.
  EXPECT_EQ(ToJson(Ok(R"({"profile": -1, "sampleRate": 1})")),
            R"({"was": 0, "slowms": 100, "sampleRate": 1.0, "ok": 1.0})");

  Fill(3);
  EXPECT_THAT(Error(R"({"aggregate": 1, "pipeline": [{"$queryStats": {}}], "cursor": {}})"),
              HasSubstr("73 InvalidNamespace"));
  EXPECT_THAT(Error(R"({"aggregate": 1, "pipeline": [{"$queryStats": {"transformIdentifiers": {}}}], "cursor": {}})", "admin"),
              HasSubstr("238 NotImplemented"));
  EXPECT_EQ(Error(R"({"aggregate": 1, "pipeline": [{"$queryStats": {"bogus": 1}}], "cursor": {}})", "admin"),
            "40415 Location40415: BSON field '$queryStats.bogus' is an unknown field.");
  EXPECT_THAT(Error(R"({"aggregate": "c", "pipeline": [{"$match": {}}, {"$queryStats": {}}], "cursor": {}})"),
              HasSubstr("40602"));
  EXPECT_THAT(Error(R"({"clearQueryStats": 1})"), HasSubstr("13 Unauthorized"));
}

// $queryStats on a collection: that collection's entries; in admin: all.
TEST_F(QueryStatsTest, QueryStatsOnACollectionIsThatCollections) {
  Fill(10);
  Fill(10, "d");
  Fill(10, "c", "other");
  ASSERT_GE(Drain(Coll("c").Find(Json(R"({"a": 1})"))), 0);
  ASSERT_GE(Drain(Coll("c").Find(Json(R"({"b": 1})"))), 0);
  ASSERT_GE(Drain(Coll("d").Find(Json(R"({"a": 1})"))), 0);
  ASSERT_GE(Drain(Coll("c", "other").Find(Json(R"({"a": 1})"))), 0);
  Document reply = Ok(R"({"aggregate": "c", "pipeline": [{"$queryStats": {}}], "cursor": {}})");
  DocumentView batch = reply.GetPath("cursor.firstBatch").Array();
  EXPECT_EQ(batch.CountFields(), 2u);
  for (Element e : batch) {
    EXPECT_EQ(ToJson(e.Document().GetPath("key.queryShape.cmdNs").Document()),
              R"({"db": "app", "coll": "c"})");
  }
  Document all = Ok(R"({"aggregate": 1, "pipeline": [{"$queryStats": {}},
                        {"$match": {"key.queryShape.command": "find"}}], "cursor": {}})", "admin");
  EXPECT_EQ(all.GetPath("cursor.firstBatch").Array().CountFields(), 4u);
  Ok(R"({"clearQueryStats": 1})", "admin");
  EXPECT_TRUE(AllStats().empty());
}

}  // namespace
}  // namespace rockdoc

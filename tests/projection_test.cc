// Tests of find() projections (src/query/projection.*): inclusion,
// exclusion, dotted paths through arrays, $slice, $elemMatch, the positional
// "a.$" with the query's MatchDetails, introspection, and every parse error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "query/projection.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test::Json;

Projection Proj(std::string_view spec) {
  auto p = Projection::Parse(Json(spec), nullptr);
  EXPECT_TRUE(p.ok()) << p.status() << " for " << spec;
  return p.ok() ? std::move(p).value() : std::move(Projection::Parse(Json("{}"), nullptr)).value();
}

// Applies `spec` to `doc`, both JSON; returns the result as JSON.
std::string Apply(std::string_view spec, std::string_view doc) {
  auto out = Proj(spec).Apply(Json(doc), nullptr);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? ToJson(*out) : "<error>";
}

// With the positional form: the query is matched first to find the position.
StatusOr<Document> ApplyWithQuery(std::string_view filter, std::string_view spec,
                                  std::string_view doc) {
  auto query = ParseMatchExpression(Json(filter));
  EXPECT_TRUE(query.ok()) << query.status();
  auto proj = Projection::Parse(Json(spec), query->get());
  if (!proj.ok()) return proj.status();
  Document d = Json(doc);
  MatchDetails details;
  details.RequestElemMatchKey();
  EXPECT_TRUE((*query)->Matches(d, &details)) << filter << " should match " << doc;
  return proj->Apply(d, &details);
}

std::string J(std::string_view json) { return ToJson(Json(json)); }

#define EXPECT_PROJ_ERROR(spec, code, fragment)                                      \
  do {                                                                               \
    Status s_ = Projection::Parse(Json(spec), nullptr).status();                     \
    EXPECT_EQ(s_.code_number(), static_cast<int>(code)) << s_ << " for " << (spec);  \
    EXPECT_THAT(std::string(s_.message()), HasSubstr(fragment)) << (spec);           \
  } while (0)

TEST(Projection, InclusionKeepsIdAndDocumentOrder) {
  const char* doc = R"({"_id": 1, "a": 1, "b": 2, "c": 3})";
  EXPECT_EQ(Apply(R"({"c": 1, "a": 1})", doc), J(R"({"_id": 1, "a": 1, "c": 3})"));
  EXPECT_EQ(Apply(R"({"a": true})", doc), J(R"({"_id": 1, "a": 1})"));
  EXPECT_EQ(Apply(R"({"a": 1, "_id": 0})", doc), J(R"({"a": 1})"));
  EXPECT_EQ(Apply(R"({"missing": 1})", doc), J(R"({"_id": 1})"));
  EXPECT_EQ(Apply(R"({"a": 1})", R"({"a": 5})"), J(R"({"a": 5})"));  // no _id to keep
  EXPECT_EQ(Apply(R"({"_id": 1})", doc), J(R"({"_id": 1})"));
  EXPECT_EQ(Apply("{}", doc), J(doc));
}

TEST(Projection, Exclusion) {
  const char* doc = R"({"_id": 1, "a": 1, "b": 2, "c": 3})";
  EXPECT_EQ(Apply(R"({"b": 0})", doc), J(R"({"_id": 1, "a": 1, "c": 3})"));
  EXPECT_EQ(Apply(R"({"b": false, "_id": 0})", doc), J(R"({"a": 1, "c": 3})"));
  EXPECT_EQ(Apply(R"({"_id": 0})", doc), J(R"({"a": 1, "b": 2, "c": 3})"));
}

TEST(Projection, DottedInclusionThroughDocumentsAndArrays) {
  EXPECT_EQ(Apply(R"({"a.b": 1, "_id": 0})", R"({"a": {"b": 1, "c": 2}, "d": 1})"),
            J(R"({"a": {"b": 1}})"));
  // Array elements: documents are projected (empty when b is absent),
  // scalars are dropped; nested arrays are traversed.
  EXPECT_EQ(Apply(R"({"a.b": 1, "_id": 0})",
                  R"({"a": [{"b": 1, "c": 2}, {"c": 3}, 5, [{"b": 4, "x": 0}]]})"),
            J(R"({"a": [{"b": 1}, {}, [{"b": 4}]]})"));
  // A scalar where the path continues is dropped.
  EXPECT_EQ(Apply(R"({"a.b": 1, "_id": 0})", R"({"a": 5})"), "{}");
  // {a: {b: 1}} is the same as {"a.b": 1}.
  EXPECT_EQ(Apply(R"({"a": {"b": 1}, "_id": 0})", R"({"a": {"b": 1, "c": 2}})"),
            J(R"({"a": {"b": 1}})"));
  EXPECT_EQ(Apply(R"({"a.b.c": 1, "a.d": 1, "_id": 0})",
                  R"({"a": {"b": {"c": 1, "z": 0}, "d": 2, "e": 3}})"),
            J(R"({"a": {"b": {"c": 1}, "d": 2}})"));
}

TEST(Projection, DottedExclusionThroughDocumentsAndArrays) {
  EXPECT_EQ(Apply(R"({"a.b": 0})", R"({"a": {"b": 1, "c": 2}, "d": 1})"),
            J(R"({"a": {"c": 2}, "d": 1})"));
  // Exclusion keeps scalars inside arrays and scalars in the path's way.
  EXPECT_EQ(Apply(R"({"a.b": 0})", R"({"a": [{"b": 1, "c": 2}, 5, [{"b": 1}]]})"),
            J(R"({"a": [{"c": 2}, 5, [{}]]})"));
  EXPECT_EQ(Apply(R"({"a.b": 0})", R"({"a": 5})"), J(R"({"a": 5})"));
}

TEST(Projection, Slice) {
  const char* doc = R"({"_id": 1, "a": [1, 2, 3, 4, 5], "b": 7})";
  // $slice alone is an exclusion-style projection: other fields stay.
  EXPECT_EQ(Apply(R"({"a": {"$slice": 2}})", doc), J(R"({"_id": 1, "a": [1, 2], "b": 7})"));
  EXPECT_EQ(Apply(R"({"a": {"$slice": -2}})", doc), J(R"({"_id": 1, "a": [4, 5], "b": 7})"));
  EXPECT_EQ(Apply(R"({"a": {"$slice": 10}})", doc), J(doc));
  EXPECT_EQ(Apply(R"({"a": {"$slice": -10}})", doc), J(doc));
  EXPECT_EQ(Apply(R"({"a": {"$slice": 0}})", doc), J(R"({"_id": 1, "a": [], "b": 7})"));
  EXPECT_EQ(Apply(R"({"a": {"$slice": [1, 2]}})", doc), J(R"({"_id": 1, "a": [2, 3], "b": 7})"));
  EXPECT_EQ(Apply(R"({"a": {"$slice": [-2, 1]}})", doc), J(R"({"_id": 1, "a": [4], "b": 7})"));
  EXPECT_EQ(Apply(R"({"a": {"$slice": [-9, 2]}})", doc), J(R"({"_id": 1, "a": [1, 2], "b": 7})"));
  EXPECT_EQ(Apply(R"({"a": {"$slice": [9, 2]}})", doc), J(R"({"_id": 1, "a": [], "b": 7})"));
  // Not an array: left as it is.
  EXPECT_EQ(Apply(R"({"b": {"$slice": 1}})", doc), J(doc));
  // With an exclusion.
  EXPECT_EQ(Apply(R"({"a": {"$slice": 1}, "b": 0})", doc), J(R"({"_id": 1, "a": [1]})"));
  // In an inclusion projection the embedded document keeps only the slice.
  EXPECT_EQ(Apply(R"({"qty": 1, "details.colors": {"$slice": 1}})",
                  R"({"_id": 1, "qty": 100, "details": {"colors": ["blue", "red"], "sizes": ["S"]}})"),
            J(R"({"_id": 1, "qty": 100, "details": {"colors": ["blue"]}})"));
  // Through an array of documents.
  EXPECT_EQ(Apply(R"({"a.b": {"$slice": 1}})", R"({"a": [{"b": [1, 2]}, {"b": [3, 4]}]})"),
            J(R"({"a": [{"b": [1]}, {"b": [3]}]})"));
}

TEST(Projection, ElemMatch) {
  const char* doc =
      R"({"_id": 1, "name": "p", "games": [{"g": "abc", "score": 8}, {"g": "xyz", "score": 5}],)"
      R"( "joined": 2020})";
  // Only _id and the field: $elemMatch makes an inclusion projection.
  EXPECT_EQ(Apply(R"({"games": {"$elemMatch": {"score": {"$lt": 7}}}})", doc),
            J(R"({"_id": 1, "games": [{"g": "xyz", "score": 5}]})"));
  // The first matching element only; placed after the other inclusions.
  EXPECT_EQ(Apply(R"({"games": {"$elemMatch": {"score": {"$gt": 1}}}, "joined": 1})", doc),
            J(R"({"_id": 1, "joined": 2020, "games": [{"g": "abc", "score": 8}]})"));
  // No match: the field is omitted.
  EXPECT_EQ(Apply(R"({"games": {"$elemMatch": {"score": 99}}})", doc), J(R"({"_id": 1})"));
  // Value form.
  EXPECT_EQ(Apply(R"({"a": {"$elemMatch": {"$gt": 2}}, "_id": 0})", R"({"a": [1, 3, 4]})"),
            J(R"({"a": [3]})"));
  EXPECT_EQ(Apply(R"({"a": {"$elemMatch": {"$gt": 2}}, "_id": 0})", R"({"a": 5})"), "{}");
}

TEST(Projection, PositionalUsesTheQuerysMatchedElement) {
  auto out = ApplyWithQuery(R"({"grades": {"$gte": 85}})", R"({"grades.$": 1})",
                            R"({"_id": 1, "grades": [80, 87, 90], "x": 1})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToJson(*out), J(R"({"_id": 1, "grades": [87]})"));

  out = ApplyWithQuery(R"({"grades.mean": {"$gt": 70}})", R"({"grades.$": 1, "_id": 0})",
                       R"({"grades": [{"mean": 60}, {"mean": 75, "std": 1}]})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToJson(*out), J(R"({"grades": [{"mean": 75, "std": 1}]})"));

  // A path continuing past the array: the chosen element is projected on.
  out = ApplyWithQuery(R"({"a.b": 2})", R"({"a.b.$": 1, "_id": 0})",
                       R"({"a": [{"b": [0], "c": 1}, {"b": [1, 2], "c": 2}]})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToJson(*out), J(R"({"a": [{"b": [1, 2]}]})"));

  // Positional with other inclusions.
  out = ApplyWithQuery(R"({"a": 3})", R"({"a.$": 1, "b": 1, "_id": 0})",
                       R"({"b": "x", "a": [1, 2, 3], "c": 0})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToJson(*out), J(R"({"b": "x", "a": [3]})"));

  // Issue 11 #15: a one-clause $or gives the position like its clause.
  out = ApplyWithQuery(R"({"$or": [{"a.x": 4}]})", R"({"a.$": 1, "_id": 0})",
                       R"({"a": [{"x": 1}, {"x": 4}]})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ToJson(*out), J(R"({"a": [{"x": 4}]})"));

  // The query must test the projected array, else the position it records
  // would be another array's (MongoDB: 31277).
  {
    auto query = ParseMatchExpression(Json(R"({"b": 2})"));
    ASSERT_TRUE(query.ok());
    auto proj = Projection::Parse(Json(R"({"a.$": 1})"), query->get());
    EXPECT_EQ(proj.status().code_number(), 31277) << proj.status();
    EXPECT_THAT(std::string(proj.status().message()),
                HasSubstr("Positional projection 'a.$' does not match the query document."));
    query = ParseMatchExpression(Json(R"({"$or": [{"x": 1}, {"a.b": {"$not": {"$gt": 2}}}]})"));
    ASSERT_TRUE(query.ok());
    EXPECT_TRUE(Projection::Parse(Json(R"({"a.$": 1})"), query->get()).ok());
  }

  // No array position from the query: error 51246.
  out = ApplyWithQuery(R"({"a": {"$size": 2}})", R"({"a.$": 1})", R"({"x": 1, "a": [1, 2]})");
  EXPECT_EQ(out.status().code_number(), 51246);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("couldn't find a matching element"));
  EXPECT_EQ(Proj(R"({"a.$": 1})").Apply(Json(R"({"a": [1]})"), nullptr).status().code_number(),
            51246);
}

TEST(Projection, Introspection) {
  Projection simple = Proj(R"({"a": 1, "b": 1})");
  EXPECT_EQ(simple.type(), Projection::Type::kInclusion);
  EXPECT_TRUE(simple.is_simple());
  EXPECT_TRUE(simple.includes_id());
  EXPECT_FALSE(simple.needs_whole_document());
  EXPECT_THAT(simple.required_paths(), ElementsAre("_id", "a", "b"));

  Projection no_id = Proj(R"({"a.b": 1, "_id": 0})");
  EXPECT_FALSE(no_id.is_simple());
  EXPECT_FALSE(no_id.includes_id());
  EXPECT_THAT(no_id.required_paths(), ElementsAre("a.b"));

  Projection excl = Proj(R"({"a": 0})");
  EXPECT_EQ(excl.type(), Projection::Type::kExclusion);
  EXPECT_TRUE(excl.is_simple());
  EXPECT_TRUE(excl.includes_id());
  EXPECT_TRUE(excl.needs_whole_document());
  EXPECT_TRUE(excl.required_paths().empty());
  EXPECT_FALSE(Proj(R"({"_id": 0})").includes_id());

  EXPECT_FALSE(Proj(R"({"a": {"$slice": 1}})").is_simple());
  EXPECT_EQ(Proj(R"({"a": {"$slice": 1}})").type(), Projection::Type::kExclusion);
  EXPECT_FALSE(Proj(R"({"a": {"$elemMatch": {"b": 1}}})").is_simple());
  EXPECT_EQ(Proj(R"({"a": {"$elemMatch": {"b": 1}}})").type(), Projection::Type::kInclusion);
  Projection pos = Proj(R"({"a.$": 1})");
  EXPECT_TRUE(pos.requires_match_details());
  EXPECT_FALSE(pos.is_simple());
  EXPECT_FALSE(simple.requires_match_details());
}

TEST(ProjectionErrors, MixingInclusionAndExclusion) {
  EXPECT_PROJ_ERROR(R"({"a": 1, "b": 0})", 31254,
                    "Cannot do exclusion on field b in inclusion projection");
  EXPECT_PROJ_ERROR(R"({"a": 0, "b": 1})", 31253,
                    "Cannot do inclusion on field b in exclusion projection");
  EXPECT_PROJ_ERROR(R"({"a": 0, "b": {"$elemMatch": {"c": 1}}, "d": 1})", 31253,
                    "Cannot do inclusion on field d");
  // _id may go either way.
  EXPECT_TRUE(Projection::Parse(Json(R"({"a": 1, "_id": 0})"), nullptr).ok());
  EXPECT_TRUE(Projection::Parse(Json(R"({"_id": 0, "a": 0})"), nullptr).ok());
}

TEST(ProjectionErrors, PathsAndOperators) {
  EXPECT_PROJ_ERROR(R"({"a": 1, "a.b": 1})", 31249, "Path collision at a.b remaining portion b");
  EXPECT_PROJ_ERROR(R"({"a.b": 1, "a": 1})", 31250, "Path collision at a");
  EXPECT_PROJ_ERROR(R"({"a": {"$slice": 1}, "a.b": 1})", 31249, "Path collision");
  EXPECT_PROJ_ERROR(R"({"a..b": 1})", 15998, "may not be empty");
  EXPECT_PROJ_ERROR(R"({"$a": 1})", 16410, "may not start with '$'");
  EXPECT_PROJ_ERROR(R"({"a": {}})", 51270, "empty sub-projection");
  EXPECT_PROJ_ERROR(R"({"a": {"$slice": "x"}})", 31273,
                    "$slice only supports numbers and [skip, limit] arrays");
  EXPECT_PROJ_ERROR(R"({"a": {"$slice": [1]}})", 31272, "should be of form [skip, limit]");
  EXPECT_PROJ_ERROR(R"({"a": {"$slice": ["x", 1]}})", 31257, "skip argument to be a number");
  EXPECT_PROJ_ERROR(R"({"a": {"$slice": [1, "x"]}})", 31258, "limit argument to be a number");
  EXPECT_PROJ_ERROR(R"({"a": {"$slice": [1, 0]}})", 31259, "$slice limit must be positive");
  EXPECT_PROJ_ERROR(R"({"a": {"$elemMatch": 1}})", 31274,
                    "elemMatch: Invalid argument, object required");
  EXPECT_PROJ_ERROR(R"({"a.b": {"$elemMatch": {"c": 1}}})", 31275,
                    "Cannot use $elemMatch projection on a nested field.");
  EXPECT_PROJ_ERROR(R"({"a": {"$elemMatch": {"c": {"$bad": 1}}}})", 2, "unknown operator: $bad");
  EXPECT_PROJ_ERROR(R"({"a.$": 1, "b.$": 1})", 31276, "more than one positional");
  EXPECT_PROJ_ERROR(R"({"a.$": 1, "b": {"$elemMatch": {"c": 1}}})", 31255,
                    "Cannot specify positional operator and $elemMatch.");
  EXPECT_PROJ_ERROR(R"({"b": {"$elemMatch": {"c": 1}}, "a.$": 1})", 31256,
                    "Cannot specify positional operator and $elemMatch.");
  EXPECT_PROJ_ERROR(R"({"a.$": {"$slice": 1}})", 31271,
                    "positional projection cannot be used with an expression");
  // Ambiguous positional shapes MongoDB refuses rather than guess at.
  EXPECT_PROJ_ERROR(R"({"a.$.": 1})", 31270, "Path cannot end with '.$.'");
  EXPECT_PROJ_ERROR(R"({"a.$.b.$": 1})", 31287, "Cannot use positional operator twice: a.$.b.$");
  EXPECT_PROJ_ERROR(R"({"a.$.$": 1})", 31287, "Cannot use positional operator twice");
  EXPECT_PROJ_ERROR(R"({"a.$": 0})", 16410, "FieldPath field names may not start with '$'");
  // Issue 11 #16: an object with more than one field is a sub-projection,
  // never its first operator, and `$` names are not fields (MongoDB: 16410).
  for (const char* spec :
       {R"({"a": {"$elemMatch": {"x": 1}, "$slice": [1, 4]}})", R"({"a": {"$slice": 1, "x": 1}})",
        R"({"a": {"x": 1, "$slice": 1}})", R"({"a": {"$slice": 1, "$elemMatch": {"x": 1}}})",
        R"({"a": {"$slice": [1, 2], "$slice2": 1}})", R"({"a": {"b": {"$slice": 1, "c": 0}}})"}) {
    EXPECT_PROJ_ERROR(spec, 16410, "FieldPath field names may not start with '$'");
  }
  EXPECT_PROJ_ERROR(R"({"a": {"$add": [1, 2], "b": 1}})", 16410, "may not start with '$'");
  EXPECT_PROJ_ERROR(R"({"a": "literal"})", static_cast<int>(ErrorCode::kNotImplemented),
                    "literals");
  EXPECT_PROJ_ERROR(R"({"a": {"$add": [1, 2]}})", static_cast<int>(ErrorCode::kNotImplemented),
                    "$add");
}

TEST(ProjectionProperty, InclusionAndExclusionPartitionTopLevelFields) {
  // For any document and field set F: the fields of {F: 1} (minus _id) and
  // of {F: 0} (minus _id) partition the document's fields, each in order.
  test::RandomDocuments gen(5);
  const char* const kSpecs[] = {R"({"a": 1, "x": 1})", R"({"b": 1})", R"({"c": 1, "_id": 1})"};
  const char* const kExcl[] = {R"({"a": 0, "x": 0})", R"({"b": 0})", R"({"c": 0, "_id": 0})"};
  for (int i = 0; i < 2000; ++i) {
    Document d = gen.Next();
    for (int s = 0; s < 3; ++s) {
      auto in = Proj(kSpecs[s]).Apply(d, nullptr);
      auto out = Proj(kExcl[s]).Apply(d, nullptr);
      ASSERT_TRUE(in.ok() && out.ok());
      // Merge back by walking the original: each field lands in exactly one side
      // (duplicate keys may appear in random documents; both sides keep them).
      auto ii = in->begin(), oi = out->begin();
      for (const Element& f : d) {
        bool in_side = ii != in->end() && (*ii).raw() != nullptr && (*ii).key() == f.key() &&
                       CompareElements(*ii, f, true) == 0;
        bool out_side = oi != out->end() && (*oi).key() == f.key() &&
                        CompareElements(*oi, f, true) == 0;
        if (f.key() == "_id" && s < 2) {
          // Inclusion keeps _id by default, exclusion too.
          ASSERT_TRUE(in_side && out_side) << ToJson(d);
          ++ii;
          ++oi;
          continue;
        }
        ASSERT_NE(in_side, out_side) << kSpecs[s] << " " << ToJson(d);
        if (in_side) ++ii;
        if (out_side) ++oi;
      }
      ASSERT_TRUE(ii == in->end() && oi == out->end());
    }
  }
}

}  // namespace
}  // namespace rockdoc

// Tests of sort patterns (src/query/sort_pattern.*): parsing and its errors,
// MongoDB's sort keys over arrays, missing fields and empty arrays, and a
// property test of single-field keys against a naive reference over random
// documents.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <numeric>

#include "query/sort_pattern.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using ::testing::HasSubstr;
using test::Json;

SortPattern Pattern(std::string_view spec) {
  auto p = SortPattern::Parse(Json(spec));
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? std::move(p).value() : SortPattern();
}

// Sorts JSON documents with a pattern (stable, like a sort stage that keeps
// input order among ties) and returns them as JSON.
std::vector<std::string> SortDocs(std::string_view spec, const std::vector<std::string>& docs) {
  SortPattern pattern = Pattern(spec);
  std::vector<Document> parsed;
  for (const auto& d : docs) parsed.push_back(Json(d));
  std::vector<std::vector<Element>> keys(parsed.size());
  for (size_t i = 0; i < parsed.size(); ++i) {
    Status s = pattern.ExtractKey(parsed[i], &keys[i]);
    EXPECT_TRUE(s.ok()) << s;
  }
  std::vector<size_t> order(parsed.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return pattern.CompareKeys(keys[a], keys[b]) < 0;
  });
  std::vector<std::string> out;
  for (size_t i : order) out.push_back(ToJson(parsed[i]));
  return out;
}

std::string J(std::string_view json) { return ToJson(Json(json)); }

// Keys view the document's bytes, so documents built inline must outlive
// the keys taken from them.
DocumentView Keep(std::string_view json) {
  static std::deque<Document>* kept = new std::deque<Document>();
  kept->push_back(Json(json));
  return kept->back();
}

TEST(SortPatternParse, AcceptsOneAndMinusOne) {
  SortPattern p = Pattern(R"({"a": 1, "b.c": -1, "d": {"$numberLong": "1"}, "e": -1.0})");
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p.parts()[0].path.dotted(), "a");
  EXPECT_TRUE(p.parts()[0].ascending);
  EXPECT_EQ(p.parts()[1].path.dotted(), "b.c");
  EXPECT_FALSE(p.parts()[1].ascending);
  EXPECT_TRUE(p.parts()[2].ascending);
  EXPECT_FALSE(p.parts()[3].ascending);
  EXPECT_EQ(ToJson(p.ToDocument()), J(R"({"a": 1, "b.c": -1, "d": 1, "e": -1})"));
  EXPECT_TRUE(Pattern("{}").empty());
}

TEST(SortPatternParse, Errors) {
  auto error = [](std::string_view spec) { return SortPattern::Parse(Json(spec)).status(); };
  Status s = error(R"({"a": 2})");
  EXPECT_EQ(s.code_number(), 15975);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("$sort key ordering must be 1 (for ascending) or -1 (for descending)"));
  EXPECT_EQ(error(R"({"a": 0})").code_number(), 15975);
  // Out of int64's range: an error, not an undefined double->int64 cast
  // (the sanitized build's float-cast-overflow check fails here otherwise).
  EXPECT_EQ(error(R"({"a": 1e300})").code_number(), 15975);
  EXPECT_EQ(error(R"({"a": -1e300})").code_number(), 15975);
  EXPECT_TRUE(error(R"({"a": 1.5})").ok()) << "1.5 truncates to 1, as numberInt()";
  s = error(R"({"a": "asc"})");
  EXPECT_EQ(s.code_number(), 15974);
  EXPECT_THAT(std::string(s.message()), HasSubstr("must be specified using a number"));
  EXPECT_EQ(error(R"({"a": {"$meta": "textScore"}})").code(), ErrorCode::kNotImplemented);
  s = error(R"({"a..b": 1})");
  EXPECT_EQ(s.code_number(), 15998);
  EXPECT_THAT(std::string(s.message()), HasSubstr("may not be empty"));
  s = error(R"({"$a": 1})");
  EXPECT_EQ(s.code_number(), 16410);
  EXPECT_THAT(std::string(s.message()), HasSubstr("may not start with '$'"));
}

TEST(SortPattern, OrdersScalarsByTypeThenValue) {
  EXPECT_EQ(SortDocs(R"({"a": 1})", {R"({"a": "x"})", R"({"a": 2})", R"({"a": null})",
                                     R"({"a": 1.5})", R"({"a": {"b": 1}})", R"({"a": true})"}),
            (std::vector<std::string>{J(R"({"a": null})"), J(R"({"a": 1.5})"), J(R"({"a": 2})"),
                                      J(R"({"a": "x"})"), J(R"({"a": {"b": 1}})"),
                                      J(R"({"a": true})")}));
  EXPECT_EQ(SortDocs(R"({"a": -1})", {R"({"a": 1})", R"({"a": 3})", R"({"a": 2})"}),
            (std::vector<std::string>{J(R"({"a": 3})"), J(R"({"a": 2})"), J(R"({"a": 1})")}));
}

TEST(SortPattern, MissingSortsAsNull) {
  // Missing and null tie; the stable sort keeps input order.
  EXPECT_EQ(SortDocs(R"({"a": 1})", {R"({"a": 1})", R"({"b": 1})", R"({"a": null})"}),
            (std::vector<std::string>{J(R"({"b": 1})"), J(R"({"a": null})"), J(R"({"a": 1})")}));
  EXPECT_EQ(SortDocs(R"({"a.b": 1})", {R"({"a": {"b": 0}})", R"({"a": 5})", R"({"a": {"c": 1}})"}),
            (std::vector<std::string>{J(R"({"a": 5})"), J(R"({"a": {"c": 1}})"),
                                      J(R"({"a": {"b": 0}})")}));
}

TEST(SortPattern, ArraysUseTheirSmallestOrLargestElement) {
  // MongoDB's documented example (DOCS-2760): the empty array sorts first in
  // both directions; [0, 1] is 0 ascending and 1 descending.
  const std::vector<std::string> docs = {R"({})", R"({"a": 1})", R"({"a": []})",
                                         R"({"a": [1]})", R"({"a": [0, 1]})"};
  EXPECT_EQ(SortDocs(R"({"a": 1})", docs),
            (std::vector<std::string>{J(R"({"a": []})"), J(R"({})"), J(R"({"a": [0, 1]})"),
                                      J(R"({"a": 1})"), J(R"({"a": [1]})")}));
  EXPECT_EQ(SortDocs(R"({"a": -1})", docs),
            (std::vector<std::string>{J(R"({"a": 1})"), J(R"({"a": [1]})"), J(R"({"a": [0, 1]})"),
                                      J(R"({})"), J(R"({"a": []})")}));
  // The smallest element by the cross-type order, not the first element.
  EXPECT_EQ(SortDocs(R"({"a": 1})", {R"({"a": [2, {"x": 1}]})", R"({"a": [{"x": 3}, 1]})"}),
            (std::vector<std::string>{J(R"({"a": [{"x": 3}, 1]})"), J(R"({"a": [2, {"x": 1}]})")}));
}

TEST(SortPattern, KeysThroughArraysOfDocuments) {
  SortPattern p = Pattern(R"({"a.b": 1})");
  std::vector<Element> key;
  ASSERT_TRUE(p.ExtractKey(Keep(R"({"a": [{"b": 5}, {"b": [3, 9]}]})"), &key).ok());
  EXPECT_EQ(key[0].Int32(), 3);
  // An element without b contributes null, which is smaller than numbers.
  Document with_gap = Json(R"({"a": [{"b": 5}, {"c": 1}]})");
  ASSERT_TRUE(p.ExtractKey(with_gap, &key).ok());
  EXPECT_EQ(key[0].type(), BsonType::kNull);
  SortPattern desc = Pattern(R"({"a.b": -1})");
  ASSERT_TRUE(desc.ExtractKey(with_gap, &key).ok());
  EXPECT_EQ(key[0].Int32(), 5);
  // Positional parts select one element.
  SortPattern pos = Pattern(R"({"a.1": 1})");
  ASSERT_TRUE(pos.ExtractKey(Keep(R"({"a": [7, 3, 1]})"), &key).ok());
  EXPECT_EQ(key[0].Int32(), 3);
  ASSERT_TRUE(pos.ExtractKey(Keep(R"({"a": [7]})"), &key).ok());
  EXPECT_EQ(key[0].type(), BsonType::kNull);
  // Arrays inside arrays are single values.
  SortPattern plain = Pattern(R"({"a": 1})");
  ASSERT_TRUE(plain.ExtractKey(Keep(R"({"a": [[1, 2], 3]})"), &key).ok());
  EXPECT_EQ(key[0].Int32(), 3);  // numbers sort before arrays
}

TEST(SortPattern, CompoundKeysOverOneArrayGoTogether) {
  // For {a.b: 1, a.c: 1} the key is the smallest (b, c) pair of one
  // element, not the smallest b beside the smallest c.
  SortPattern p = Pattern(R"({"a.b": 1, "a.c": 1})");
  std::vector<Element> key;
  ASSERT_TRUE(p.ExtractKey(Keep(R"({"a": [{"b": 2, "c": 0}, {"b": 1, "c": 5}]})"), &key).ok());
  EXPECT_EQ(key[0].Int32(), 1);
  EXPECT_EQ(key[1].Int32(), 5);
  SortPattern mixed = Pattern(R"({"a.b": 1, "a.c": -1})");
  ASSERT_TRUE(
      mixed.ExtractKey(Keep(R"({"a": [{"b": 1, "c": 0}, {"b": 1, "c": 5}]})"), &key).ok());
  EXPECT_EQ(key[1].Int32(), 5);
  // One array and a scalar are fine.
  SortPattern with_scalar = Pattern(R"({"x": 1, "a": -1})");
  ASSERT_TRUE(with_scalar.ExtractKey(Keep(R"({"x": 1, "a": [1, 4]})"), &key).ok());
  EXPECT_EQ(key[0].Int32(), 1);
  EXPECT_EQ(key[1].Int32(), 4);
}

TEST(SortPattern, ParallelArraysAreAnError) {
  SortPattern p = Pattern(R"({"a": 1, "b": 1})");
  std::vector<Element> key;
  Status s = p.ExtractKey(Keep(R"({"a": [1, 2], "b": [3, 4]})"), &key);
  EXPECT_EQ(s.code(), ErrorCode::kBadValue);
  EXPECT_THAT(std::string(s.message()), HasSubstr("parallel arrays"));
  EXPECT_TRUE(p.ExtractKey(Keep(R"({"a": [1, 2], "b": 3})"), &key).ok());
  auto cmp = p.CompareDocuments(Json(R"({"a": [1], "b": [2]})"), Json(R"({"a": 1})"));
  EXPECT_EQ(cmp.status().code(), ErrorCode::kBadValue);
}

// The single-field sort key, from the manual's words: all values the path
// reaches (array elements one level deep, positions for numeric parts),
// null for missing, undefined for an empty array; ascending takes the
// smallest, descending the largest.
void RefValues(const Element& v, const std::vector<std::string>& parts, size_t i,
               std::vector<Element>* out, Document* null_doc, Document* undef_doc) {
  if (i == parts.size()) {
    if (v.type() == BsonType::kArray) {
      if (v.Array().empty()) out->push_back(undef_doc->Get("u"));
      for (const Element& e : v.Array()) out->push_back(e);
    } else {
      out->push_back(v.ok() ? v : null_doc->Get("n"));
    }
    return;
  }
  if (v.type() == BsonType::kDocument) {
    RefValues(v.Document().Get(parts[i]), parts, i + 1, out, null_doc, undef_doc);
  } else if (v.type() == BsonType::kArray) {
    bool digits = parts[i].find_first_not_of("0123456789") == std::string::npos;
    if (digits) {
      RefValues(v.Array().Get(parts[i]), parts, i + 1, out, null_doc, undef_doc);
    } else if (v.Array().empty()) {
      out->push_back(null_doc->Get("n"));
    } else {
      for (const Element& e : v.Array()) {
        RefValues(e.type() == BsonType::kDocument ? e : Element(), parts, i, out, null_doc,
                  undef_doc);
      }
    }
  } else {
    out->push_back(null_doc->Get("n"));
  }
}

TEST(SortPatternProperty, SingleFieldKeysMatchReferenceAndSortIsConsistent) {
  Document null_doc = Json(R"({"n": null})");
  Document undef_doc = Json(R"({"u": {"$undefined": true}})");
  test::RandomDocuments gen(99, 3, 6);
  std::vector<Document> docs;
  for (int i = 0; i < 100000; ++i) docs.push_back(gen.Next());
  for (const char* spec : {R"({"a": 1})", R"({"a": -1})", R"({"a.b": 1})", R"({"a.b": -1})",
                           R"({"a.0": 1})", R"({"b.1": -1})"}) {
    SortPattern p = Pattern(spec);
    std::vector<std::string> parts;
    {
      std::string dotted = p.parts()[0].path.dotted();
      size_t start = 0;
      for (;;) {
        size_t dot = dotted.find('.', start);
        parts.push_back(dotted.substr(start, dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
      }
    }
    const bool asc = p.parts()[0].ascending;
    std::vector<std::vector<Element>> keys(docs.size());
    size_t arrays = 0;
    for (size_t i = 0; i < docs.size(); ++i) {
      ASSERT_TRUE(p.ExtractKey(docs[i], &keys[i]).ok());
      if (i < 12000) {  // the reference is slow-ish; check a prefix of the documents
        std::vector<Element> values;
        RefValues(docs[i].Get(parts[0]), parts, 1, &values, &null_doc, &undef_doc);
        ASSERT_FALSE(values.empty());
        Element want = values[0];
        for (const Element& v : values) {
          int c = CompareValues(v, want);
          if (asc ? c < 0 : c > 0) want = v;
        }
        arrays += values.size() > 1;
        ASSERT_EQ(CompareValues(keys[i][0], want), 0)
            << spec << " on " << ToJson(docs[i]) << ": got " << ValueToJson(keys[i][0])
            << " want " << ValueToJson(want);
      }
    }
    if (parts[0] == "a" && parts.size() == 1) {
      EXPECT_GT(arrays, 50u) << "exercise arrays";
    }
    std::vector<size_t> order(docs.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](size_t x, size_t y) { return p.CompareKeys(keys[x], keys[y]) < 0; });
    for (size_t i = 1; i < order.size(); ++i) {
      ASSERT_LE(p.CompareKeys(keys[order[i - 1]], keys[order[i]]), 0);
    }
  }
}

}  // namespace
}  // namespace rockdoc

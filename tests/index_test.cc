// Secondary indexes, storage half: descriptors, key generation (MongoDB's
// semantics, with vectors from MongoDB's own key generator tests), the entry
// layout, index DDL and its errors, uniqueness (also under concurrency),
// maintenance through every write, validate, and multikey persistence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/iterator.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "catalog/catalog.h"
#include "engine_test_util.h"
#include "index/index_descriptor.h"
#include "index/index_entry.h"
#include "index/key_generator.h"
#include "keystring/keystring.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/rocks.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using internal::IndexDescriptor;
using internal::IndexEntryView;
using internal::IndexKey;
using internal::MultikeyPaths;
using test::Json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// Helpers

std::shared_ptr<IndexDescriptor> MakeIndex(std::string_view pattern, IndexOptions options = {},
                                           uint32_t id = 7) {
  auto d = IndexDescriptor::Create(id, Json(pattern), options);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *d : nullptr;
}

Status CreateError(std::string_view pattern, IndexOptions options = {}) {
  return IndexDescriptor::Create(7, Json(pattern), options).status();
}

// The keys an index should hold, written as a JSON array of key tuples
// ({"k": [[1, "x"], [2, "x"]]}), encoded independently with the keystring
// Builder, sorted and deduplicated as GenerateIndexKeys promises.
std::vector<IndexKey> Expected(const IndexDescriptor& index, std::string_view tuples_json) {
  Document holder = Json(std::string("{\"k\": ") + std::string(tuples_json) + "}");
  std::vector<IndexKey> out;
  for (Element tuple : holder.Get("k").Array()) {
    keystring::Builder b(index.descending_bits());
    for (Element v : tuple.Array()) b.Append(v);
    EXPECT_EQ(b.num_fields(), static_cast<int>(index.num_fields()));
    out.push_back(IndexKey{b.bytes(), b.type_bits()});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const IndexKey& a, const IndexKey& b) { return a.bytes < b.bytes; });
  return out;
}

// Readable keys for failure messages: [{ a: 1 }, ...].
std::string Describe(const IndexDescriptor& index, const std::vector<IndexKey>& keys) {
  std::string s = "[";
  for (const IndexKey& k : keys) {
    s += ToJson(internal::KeyValuesDocument(index, k), JsonFormat::kShell);
    s += " ";
  }
  return s + "]";
}

void ExpectKeys(std::string_view pattern, std::string_view doc, std::string_view expected,
                IndexOptions options = {}, MultikeyPaths* paths_out = nullptr) {
  auto index = MakeIndex(pattern, options);
  ASSERT_NE(index, nullptr);
  std::vector<IndexKey> keys;
  MultikeyPaths paths;
  Status s = internal::GenerateIndexKeys(*index, Json(doc), &keys, &paths);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<IndexKey> want = Expected(*index, expected);
  EXPECT_EQ(keys, want) << pattern << " on " << doc << ": got " << Describe(*index, keys)
                        << " want " << Describe(*index, want);
  if (paths_out != nullptr) *paths_out = paths;
}

MultikeyPaths PathsOf(std::string_view pattern, std::string_view doc) {
  auto index = MakeIndex(pattern);
  std::vector<IndexKey> keys;
  MultikeyPaths paths;
  EXPECT_TRUE(internal::GenerateIndexKeys(*index, Json(doc), &keys, &paths).ok());
  return paths;
}

Status KeyError(std::string_view pattern, std::string_view doc) {
  auto index = MakeIndex(pattern);
  std::vector<IndexKey> keys;
  return internal::GenerateIndexKeys(*index, Json(doc), &keys);
}

// ---------------------------------------------------------------------------
// Descriptor

TEST(IndexDescriptorTest, DerivesNameFieldsAndDirections) {
  auto d = MakeIndex(R"({"a": 1, "b.c": -1, "d": -2.5})");
  EXPECT_EQ(d->name(), "a_1_b.c_-1_d_-2.5");
  EXPECT_THAT(d->field_names(), ElementsAre("a", "b.c", "d"));
  EXPECT_EQ(d->descending_bits(), 0b110u);
  EXPECT_FALSE(d->unique());
  EXPECT_FALSE(d->is_multikey());
  EXPECT_EQ(d->multikey_paths().size(), 3u);
  EXPECT_EQ(MakeIndex(R"({"x": {"$numberLong": "1"}})")->name(), "x_1");
}

TEST(IndexDescriptorTest, RejectsBadKeyPatternsWithMongoMessages) {
  struct Case {
    const char* pattern;
    ErrorCode code;
    const char* message;
  } cases[] = {
      {R"({})", ErrorCode::kCannotCreateIndex, "Index keys cannot be empty."},
      {R"({"a": 0})", ErrorCode::kCannotCreateIndex,
       "Values in the index key pattern cannot be 0."},
      {R"({"a": -0.0})", ErrorCode::kCannotCreateIndex,
       "Values in the index key pattern cannot be 0."},
      {R"({"a": {"$numberDouble": "NaN"}})", ErrorCode::kCannotCreateIndex,
       "Values in the index key pattern cannot be NaN."},
      {R"({"a": {}})", ErrorCode::kCannotCreateIndex,
       "Values in v:2 index key pattern cannot be of type object. Only numbers > 0, numbers < 0, "
       "and strings are allowed."},
      {R"({"a": true})", ErrorCode::kCannotCreateIndex,
       "Values in v:2 index key pattern cannot be of type bool. Only numbers > 0, numbers < 0, "
       "and strings are allowed."},
      {R"({"a": "foo"})", ErrorCode::kCannotCreateIndex, "Unknown index plugin 'foo'"},
      // Special index types: NotImplemented, naming the type, never a
      // field-name error.
      {R"({"a": "2d"})", ErrorCode::kNotImplemented,
       "2d indexes are not supported by rockdoc; use a 2dsphere index (legacy points are "
       "indexed there too)"},
      {R"({"$**": 1})", ErrorCode::kNotImplemented,
       "wildcard indexes are not supported by rockdoc"},
      {R"({"a.$**": -1})", ErrorCode::kNotImplemented,
       "wildcard indexes are not supported by rockdoc"},
      {R"({"a": "geoHaystack"})", ErrorCode::kCannotCreateIndex,
       "GeoHaystack indexes cannot be created in version 5.0 and above"},
      {R"({"a": "wildcard"})", ErrorCode::kCannotCreateIndex,
       "The key pattern value for an 'wildcard' index must be a non-zero number, not a string."},
      {R"({"a..b": 1})", ErrorCode::kCannotCreateIndex,
       "Index keys cannot contain an empty field."},
      {R"({"$a": 1})", ErrorCode::kCannotCreateIndex,
       "Index key contains an illegal field name: field name starts with '$'."},
  };
  for (const Case& c : cases) {
    Status s = CreateError(c.pattern);
    EXPECT_EQ(s.code(), c.code) << c.pattern << ": " << s;
    EXPECT_EQ(s.message(), c.message) << c.pattern;
  }
  // A DBRef field below the top level may be indexed.
  EXPECT_TRUE(CreateError(R"({"r.$id": 1})").ok());
  // A field twice.
  Document dup = [] {
    BsonBuilder b;
    b.AppendInt32("a", 1).AppendInt32("a", -1);
    return std::move(b).Build();
  }();
  Status s = IndexDescriptor::Create(1, dup, {}).status();
  EXPECT_EQ(s.code(), ErrorCode::kBadValue);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("The field 'a' appears multiple times in the index key pattern"));
}

// MongoDB's Ordering has one direction bit per field: 32 fields at most.
TEST(IndexDescriptorTest, MoreThan32FieldsAreTooManyCompoundKeys) {
  std::string pattern = "{";
  for (int i = 0; i < 32; ++i) pattern += (i ? ", \"f" : "\"f") + std::to_string(i) + "\": -1";
  EXPECT_TRUE(CreateError(pattern + "}").ok());
  Status s = CreateError(pattern + ", \"f32\": 1}");
  EXPECT_EQ(s.code_number(), 13103) << s;
  EXPECT_EQ(s.message(), "too many compound keys");
}

TEST(IndexDescriptorTest, PartialFilterAllowsOnlyMongoOperators) {
  IndexOptions ok;
  ok.partial_filter_expression = Json(R"({"b": {"$gt": 5}, "c": {"$exists": true}})");
  EXPECT_TRUE(CreateError(R"({"a": 1})", ok).ok());
  IndexOptions bad;
  bad.partial_filter_expression = Json(R"({"b": {"$ne": 5}})");
  Status s = CreateError(R"({"a": 1})", bad);
  EXPECT_EQ(s.code(), ErrorCode::kCannotCreateIndex);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("Expression not supported in partial index: $not"));
  IndexOptions malformed;
  malformed.partial_filter_expression = Json(R"({"b": {"$bogus": 5}})");
  EXPECT_EQ(CreateError(R"({"a": 1})", malformed).code(), ErrorCode::kBadValue);
}

TEST(IndexDescriptorTest, CatalogEntryRoundTrip) {
  IndexOptions options;
  options.unique = true;
  options.sparse = true;
  options.name = "custom";
  options.partial_filter_expression = Json(R"({"b": {"$gte": 1}})");
  auto d = MakeIndex(R"({"a.b": 1, "c": -1})", options, 42);
  MultikeyPaths paths = {{0}, {}};
  BsonBuilder b;
  d->AppendCatalogEntry(&b, paths);
  Document entry = std::move(b).Build();
  auto back = IndexDescriptor::FromCatalogEntry(entry);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->id(), 42u);
  EXPECT_EQ((*back)->name(), "custom");
  EXPECT_TRUE((*back)->unique());
  EXPECT_TRUE((*back)->sparse());
  EXPECT_TRUE((*back)->partial());
  EXPECT_EQ((*back)->key_pattern(), d->key_pattern());
  EXPECT_TRUE((*back)->is_multikey());
  EXPECT_THAT((*back)->MultikeyPrefixes(0), ElementsAre("a"));
  EXPECT_EQ(ToJson((*back)->ToSpec()),
            R"({"v": 2, "key": {"a.b": 1, "c": -1}, "name": "custom", "unique": true, )"
            R"("sparse": true, "partialFilterExpression": {"b": {"$gte": 1}}})");
}

// ---------------------------------------------------------------------------
// Key generation

TEST(KeyGeneratorTest, SingleAndMissing) {
  ExpectKeys(R"({"a": 1})", R"({"b": 4, "a": 5})", "[[5]]");
  ExpectKeys(R"({"a": 1})", R"({"b": 1})", "[[null]]");
  ExpectKeys(R"({"a": 1})", R"({"a": null})", "[[null]]");
}

TEST(KeyGeneratorTest, CompoundAndDotted) {
  ExpectKeys(R"({"x": 1, "y": 1})", R"({"x": "a", "y": "b"})", R"([["a", "b"]])");
  ExpectKeys(R"({"x": 1, "y": 1})", R"({"x": "a"})", R"([["a", null]])");
  ExpectKeys(R"({"a.b": 1})", R"({"a": {"b": 4}, "c": "foo"})", "[[4]]");
  ExpectKeys(R"({"a.b": 1})", R"({"a": 5})", "[[null]]");
  ExpectKeys(R"({"a.b": 1})", R"({"a": {"b": {"c": 1}}})", R"([[{"c": 1}]])");
}

TEST(KeyGeneratorTest, ArrayOfDocuments) {
  MultikeyPaths paths;
  ExpectKeys(R"({"a.b": 1})", R"({"a": [{"b": 1, "c": 4}, {"b": 2}, {"foo": 41}]})",
             "[[1], [2], [null]]", {}, &paths);
  EXPECT_EQ(paths, (MultikeyPaths{{0}}));
  // Non-document elements have no "b": they count as missing.
  ExpectKeys(R"({"a.b": 1})", R"({"a": [1, 2]})", "[[null]]");
  ExpectKeys(R"({"a.b.c": 1})", R"({"a": {"b": [{"c": 1}, {"c": 2}]}})", "[[1], [2]]", {}, &paths);
  EXPECT_EQ(paths, (MultikeyPaths{{1}}));
  ExpectKeys(R"({"a.b": 1, "d": 99})", R"({"a": [{"b": 1}, {"b": 2}], "d": 99})",
             "[[1, 99], [2, 99]]");
}

TEST(KeyGeneratorTest, MultikeyOneKeyPerElement) {
  MultikeyPaths paths;
  ExpectKeys(R"({"a": 1})", R"({"a": [1, 2, 3]})", "[[1], [2], [3]]", {}, &paths);
  EXPECT_EQ(paths, (MultikeyPaths{{0}}));
  ExpectKeys(R"({"first": 1, "a": 1})", R"({"first": 5, "a": [1, 2]})", "[[5, 1], [5, 2]]", {},
             &paths);
  EXPECT_EQ(paths, (MultikeyPaths{{}, {0}}));
  // Not multikey without arrays.
  EXPECT_EQ(PathsOf(R"({"a.b": 1})", R"({"a": {"b": 1}})"), (MultikeyPaths{{}}));
  // Arrays at two levels of one path.
  ExpectKeys(R"({"a.b": 1})", R"({"a": [{"b": 1}, {"b": [1, 2, 3]}]})", "[[1], [2], [3]]", {},
             &paths);
  EXPECT_EQ(paths, (MultikeyPaths{{0, 1}}));
  // Every array is recorded, even with one element (see key_generator.h).
  EXPECT_EQ(PathsOf(R"({"a": 1})", R"({"a": [1]})"), (MultikeyPaths{{0}}));
}

TEST(KeyGeneratorTest, EqualValuesCollapseKeepingTheFirstType) {
  auto index = MakeIndex(R"({"a": 1})");
  std::vector<IndexKey> keys;
  ASSERT_TRUE(internal::GenerateIndexKeys(
                  *index, Json(R"({"a": [1, 1.0, {"$numberLong": "1"}, 0, 0]})"), &keys)
                  .ok());
  ASSERT_EQ(keys.size(), 2u);
  // 1 was first met as an int32: the key decodes as an int32.
  EXPECT_EQ(ToJson(internal::KeyValuesDocument(*index, keys[1]), JsonFormat::kCanonical),
            R"({"a": {"$numberInt": "1"}})");
}

TEST(KeyGeneratorTest, EmptyArrayIsUndefinedAtTheLeafAndNullInside) {
  ExpectKeys(R"({"a": 1})", R"({"a": []})", R"([[{"$undefined": true}]])");
  ExpectKeys(R"({"a": 1, "b": 1})", R"({"a": 1, "b": []})", R"([[1, {"$undefined": true}]])");
  ExpectKeys(R"({"a.b": 1})", R"({"a": []})", "[[null]]");
  ExpectKeys(R"({"a": 1, "a.b": 1})", R"({"a": []})", R"([[{"$undefined": true}, null]])");
  ExpectKeys(R"({"a": 1, "a.b": 1})", R"({"a": [{"b": 1}]})", R"([[{"b": 1}, 1]])");
  ExpectKeys(R"({"a": 1, "a.b": 1})", R"({"a": [{"b": []}]})",
             R"([[{"b": []}, {"$undefined": true}]])");
}

TEST(KeyGeneratorTest, NestedArraysAreKeyedWhole) {
  ExpectKeys(R"({"a": 1})", R"({"a": [[2]]})", "[[[2]]]");
  ExpectKeys(R"({"a": 1})", R"({"a": [[1, 2], 3]})", "[[[1, 2]], [3]]");
  ExpectKeys(R"({"a.b": 1})", R"({"a": [{"b": [1, 2]}, {"b": [2, 3]}]})", "[[1], [2], [3]]");
  // An array element inside a path is not a document: missing.
  ExpectKeys(R"({"a.b": 1})", R"({"a": [[{"b": 1}]]})", "[[null]]");
}

TEST(KeyGeneratorTest, MongoComplexNestedArraysVector) {
  // MongoDB's GetKeysComplexNestedArrays expectation.
  MultikeyPaths paths;
  ExpectKeys(R"({"a.b.c.d": 1, "a.g": 1, "a.b.f": 1, "a.b.c": 1, "a.b.e": 1})",
             R"({"a": [1, {"b": [2, {"c": [3, {"d": 1}], "e": 4}, 5, {"f": 6}], "g": 7}]})",
             R"([[null, null, null, null, null],
                 [null, 7, null, null, null],
                 [null, 7, null, 3, 4],
                 [null, 7, 6, null, null],
                 [1, 7, null, {"d": 1}, 4]])",
             {}, &paths);
  EXPECT_EQ(paths, (MultikeyPaths{{0, 1, 2}, {0}, {0, 1}, {0, 1, 2}, {0, 1}}));
  // MultipleArraysNotParallelCompound.
  ExpectKeys(R"({"a.b.c": 1, "a.b.d": 1})", R"({"a": [1, 2, {"b": {"c": [3, 4], "d": 5}}]})",
             "[[null, null], [3, 5], [4, 5]]", {}, &paths);
  EXPECT_EQ(paths, (MultikeyPaths{{0, 2}, {0}}));
}

TEST(KeyGeneratorTest, SharedArrayIsNotParallel) {
  ExpectKeys(R"({"a.b": 1, "a.c": 1})", R"({"a": [{"b": 1}, {"c": 2}]})", "[[1, null], [null, 2]]");
  ExpectKeys(R"({"a": 1, "a.b": 1})", R"({"a": [{"b": 1}, {"b": 2}]})",
             R"([[{"b": 1}, 1], [{"b": 2}, 2]])");
}

TEST(KeyGeneratorTest, ParallelArraysAreRefused) {
  Status s = KeyError(R"({"a": 1, "b": 1})", R"({"a": [1, 2], "b": [1, 2]})");
  EXPECT_EQ(s.code(), ErrorCode::kCannotIndexParallelArrays);
  EXPECT_EQ(s.message(), "cannot index parallel arrays [b] [a]");
  s = KeyError(R"({"a.b": 1, "a.c": 1})", R"({"a": [{"b": [1], "c": [2]}]})");
  EXPECT_EQ(s.code(), ErrorCode::kCannotIndexParallelArrays);
  EXPECT_EQ(s.message(), "cannot index parallel arrays [c] [b]");
  // Empty arrays count, as in MongoDB.
  EXPECT_EQ(KeyError(R"({"a": 1, "b": 1})", R"({"a": [], "b": [1, 2]})").code(),
            ErrorCode::kCannotIndexParallelArrays);
  EXPECT_EQ(KeyError(R"({"a.a": 1, "b.a": 1})", R"({"a": {"a": [1]}, "b": {"a": [1]}})").message(),
            "cannot index parallel arrays [a] [a]");
  // One array only: fine.
  EXPECT_TRUE(KeyError(R"({"a": 1, "b": 1})", R"({"a": [1, 2], "b": 3})").ok());
}

TEST(KeyGeneratorTest, PositionalComponentTakesTheElement) {
  MultikeyPaths paths;
  ExpectKeys(R"({"a.0": 1})", R"({"a": [5, 6]})", "[[5]]", {}, &paths);
  EXPECT_EQ(paths, (MultikeyPaths{{}}));
  ExpectKeys(R"({"a.0": 1})", R"({"a": [[1]]})", "[[[1]]]");
  ExpectKeys(R"({"a.0": 1})", R"({"a": [[]]})", R"([[{"$undefined": true}]])");
  ExpectKeys(R"({"a.0": 1})", R"({"a": {"0": 1}})", "[[1]]");
  ExpectKeys(R"({"a.0.0": 1})", R"({"a": [[1]]})", "[[1]]");
  ExpectKeys(R"({"a.0.0": 1})", R"({"a": []})", "[[null]]");
  ExpectKeys(R"({"a.0.b": 1})", R"({"a": [{"b": 1}, {"b": 2}]})", "[[1]]");
  ExpectKeys(R"({"a.2": 1})", R"({"a": [{"2": 5}]})", "[[5]]");
}

// A numeric component that selects an array element must not also name a
// field of a document in that array: the matcher reads both ("a.0" on
// {a: [{"0": "x"}, 5]} sees {"0": "x"} and "x"), an index only one, so
// MongoDB refuses the document (16746).
TEST(KeyGeneratorTest, PositionalComponentAlsoAFieldIsAmbiguous) {
  Status s = KeyError(R"({"arr.0": 1})", R"({"arr": [{"0": "x"}, 5]})");
  EXPECT_EQ(s.code_number(), 16746) << s;
  EXPECT_THAT(std::string(s.message()),
              ::testing::StartsWith("Ambiguous field name found in array (do not use numeric "
                                    "field names in embedded elements in an array), field: '0'"));
  EXPECT_EQ(KeyError(R"({"arr.0": 1})", R"({"arr": [5, {"0": 1}]})").code_number(), 16746);
  EXPECT_EQ(KeyError(R"({"x.arr.1.a": 1})", R"({"x": {"arr": [1, {"1": 2}]}})").code_number(),
            16746);
  // No element at the position: the component is only a field name.
  ExpectKeys(R"({"arr.1": 1})", R"({"arr": [{"1": "x"}]})", R"([["x"]])");
  // The position exists and no document has the field: the element alone.
  ExpectKeys(R"({"arr.0": 1})", R"({"arr": [{"a": 1}, {"1": 2}]})", R"([[{"a": 1}]])");
  ExpectKeys(R"({"arr.0": 1})", R"({"arr": [[{"0": 1}]]})", R"([[[{"0": 1}]]])");
}

TEST(KeyGeneratorTest, SparseSkipsKeysMissingEveryField) {
  IndexOptions sparse;
  sparse.sparse = true;
  ExpectKeys(R"({"a": 1})", R"({"b": 1})", "[]", sparse);
  ExpectKeys(R"({"a": 1})", R"({"a": null})", "[[null]]", sparse);
  ExpectKeys(R"({"a": 1, "b": 1})", R"({"b": 2})", "[[null, 2]]", sparse);
  ExpectKeys(R"({"a": 1, "b": 1})", R"({"c": 2})", "[]", sparse);
  ExpectKeys(R"({"a.b": 1})", R"({"a": []})", "[]", sparse);
  // Per key, as MongoDB: the non-document element yields no key.
  ExpectKeys(R"({"a.b": 1})", R"({"a": [1, {"b": 1}]})", "[[1]]", sparse);
  // An empty array is undefined, which is present.
  ExpectKeys(R"({"a.b": 1, "a": 1})", R"({"a": []})", R"([[null, {"$undefined": true}]])", sparse);
}

TEST(KeyGeneratorTest, PartialSkipsDocumentsTheFilterRejects) {
  IndexOptions partial;
  partial.partial_filter_expression = Json(R"({"b": {"$gt": 5}})");
  ExpectKeys(R"({"a": 1})", R"({"a": 1, "b": 6})", "[[1]]", partial);
  ExpectKeys(R"({"a": 1})", R"({"a": 1, "b": 5})", "[]", partial);
  ExpectKeys(R"({"a": 1})", R"({"a": 1})", "[]", partial);
}

TEST(KeyGeneratorTest, DescendingFieldsSortInReverse) {
  auto index = MakeIndex(R"({"a": 1, "b": -1})");
  std::vector<IndexKey> k1, k2, k3;
  ASSERT_TRUE(internal::GenerateIndexKeys(*index, Json(R"({"a": 1, "b": 1})"), &k1).ok());
  ASSERT_TRUE(internal::GenerateIndexKeys(*index, Json(R"({"a": 1, "b": 2})"), &k2).ok());
  ASSERT_TRUE(internal::GenerateIndexKeys(*index, Json(R"({"a": 2, "b": 9})"), &k3).ok());
  EXPECT_GT(k1[0].bytes, k2[0].bytes);  // b descending
  EXPECT_LT(k2[0].bytes, k3[0].bytes);  // a ascending first
  ExpectKeys(R"({"a": 1, "b": -1})", R"({"a": [1, 2], "b": "x"})", R"([[1, "x"], [2, "x"]])");
}

// ---------------------------------------------------------------------------
// Entries

TEST(IndexEntryTest, RoundTripKeepsExactTypes) {
  for (bool unique : {false, true}) {
    IndexOptions options;
    options.unique = unique;
    auto index = MakeIndex(R"({"a": 1, "b": -1, "c": 1})", options, 0x01020304);
    Document doc = Json(
        R"({"_id": "k", "a": {"$numberLong": "5"}, "b": 1.0, "c": {"$numberDecimal": "1.00"}})");
    std::vector<IndexKey> keys;
    ASSERT_TRUE(internal::GenerateIndexKeys(*index, doc, &keys).ok());
    ASSERT_EQ(keys.size(), 1u);
    std::string id_key = keystring::EncodeValue(doc.Get("_id"));
    std::string k = internal::IndexEntryKey(*index, keys[0].bytes, id_key);
    std::string v = internal::IndexEntryValue(*index, id_key, keys[0].type_bits);
    EXPECT_EQ(k.substr(0, 4), std::string("\x01\x02\x03\x04", 4));
    EXPECT_EQ(internal::IndexPrefix(*index), std::string("\x01\x02\x03\x04", 4));
    EXPECT_EQ(k.size(), 4 + keys[0].bytes.size() + (unique ? 0 : id_key.size()));
    IndexEntryView entry;
    ASSERT_TRUE(internal::ParseIndexEntry(*index, k, v, &entry).ok());
    EXPECT_EQ(entry.values_key, keys[0].bytes);
    EXPECT_EQ(entry.id_key, id_key);
    EXPECT_EQ(entry.type_bits, keys[0].type_bits);
    BsonBuilder b;
    ASSERT_TRUE(internal::DecodeIndexKey(*index, entry, &b).ok());
    EXPECT_EQ(ToJson(std::move(b).Build(), JsonFormat::kCanonical),
              R"({"a": {"$numberLong": "5"}, "b": {"$numberDouble": "1.0"}, )"
              R"("c": {"$numberDecimal": "1.00"}})");
  }
}

TEST(IndexEntryTest, MalformedEntriesAreCorruption) {
  auto index = MakeIndex(R"({"a": 1})", {}, 9);
  IndexEntryView entry;
  EXPECT_EQ(internal::ParseIndexEntry(*index, std::string("\0\0\0\x08\x96\x00", 6),
                                      std::string("\x01", 1), &entry)
                .code(),
            ErrorCode::kDataCorruptionDetected);
  // _id longer than the key.
  EXPECT_EQ(internal::ParseIndexEntry(*index, std::string("\0\0\0\x09\x96", 5),
                                      std::string("\x09", 1), &entry)
                .code(),
            ErrorCode::kDataCorruptionDetected);
  EXPECT_EQ(internal::ParseIndexEntry(*index, std::string("\0\0\0\x09\x96", 5), "", &entry).code(),
            ErrorCode::kDataCorruptionDetected);
}

// ---------------------------------------------------------------------------
// Through the API

class IndexApiTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  void Open(const ClientOptions& options = {}) {
    auto c = Client::Open(dir_.Sub("db"), options);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  void Close() {
    ASSERT_TRUE(client_->Close().ok());
    client_.reset();
  }
  Collection Coll(std::string_view name = "c") {
    return client_->GetDatabase("db").GetCollection(name);
  }
  void Insert(Collection c, std::string_view json) {
    auto r = c.InsertOne(Json(json));
    ASSERT_TRUE(r.ok()) << r.status() << " inserting " << json;
  }
  std::string Create(Collection c, std::string_view keys, IndexOptions options = {}) {
    auto r = c.CreateIndex(Json(keys), options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : "";
  }
  std::vector<std::string> ListIndexesJson(Collection c) {
    auto r = c.ListIndexes();
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<std::string> out;
    if (r.ok()) {
      for (const Document& d : *r) out.push_back(ToJson(d));
    }
    return out;
  }
  void ExpectValid(Collection c, int64_t entries) {
    auto v = c.Validate();
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(v->valid) << (v->errors.empty() ? "" : v->errors[0]);
    EXPECT_EQ(v->index_entries, entries);
  }

  // With the client closed: the engine-level view of the directory.
  std::shared_ptr<internal::Engine> OpenEngine() {
    auto e = test::OpenEngineWithCatalog(dir_.Sub("db"));
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? *e : nullptr;
  }
  // Every entry of the index named `name` of db.c, decoded: "{ a: 1 } _id".
  static std::vector<std::string> ScanIndex(const internal::Engine& engine, std::string_view name,
                                            std::string_view coll = "c") {
    std::vector<std::string> out;
    auto meta = internal::CatalogOf(engine).Find("db", coll);
    EXPECT_NE(meta, nullptr);
    if (meta == nullptr) return out;
    const IndexDescriptor* index = meta->indexes()->FindByName(name);
    EXPECT_NE(index, nullptr) << name;
    if (index == nullptr) return out;
    std::string prefix = internal::IndexPrefix(*index);
    std::unique_ptr<rocksdb::Iterator> it(
        engine.rocks().db->NewIterator(rocksdb::ReadOptions(), engine.rocks().data_cf));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      IndexEntryView entry;
      EXPECT_TRUE(internal::ParseIndexEntry(*index, it->key().ToStringView(), it->value().ToStringView(), &entry).ok());
      BsonBuilder b;
      EXPECT_TRUE(internal::DecodeIndexKey(*index, entry, &b).ok());
      std::string doc_value;
      EXPECT_TRUE(engine.rocks().db
                      ->Get(rocksdb::ReadOptions(), engine.rocks().data_cf,
                            internal::RecordKey(meta->id, entry.id_key), &doc_value)
                      .ok());
      Document doc = Document::AdoptValidated(doc_value);
      out.push_back(ToJson(std::move(b).Build()) + " " + ValueToJson(doc.Get("_id")));
    }
    return out;
  }
  // Number of keys in the data column family outside db.c's records.
  static int64_t CountNonRecordKeys(const internal::Engine& engine, uint32_t collection_id) {
    std::string prefix = internal::PrefixKey(collection_id);
    std::unique_ptr<rocksdb::Iterator> it(
        engine.rocks().db->NewIterator(rocksdb::ReadOptions(), engine.rocks().data_cf));
    int64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (!it->key().starts_with(prefix)) ++n;
    }
    return n;
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(IndexApiTest, CreateListAndDrop) {
  Collection c = Coll();
  Insert(c, R"({"_id": 1, "a": 1, "b": {"c": "x"}})");
  EXPECT_EQ(Create(c, R"({"a": 1})"), "a_1");
  IndexOptions u;
  u.unique = true;
  EXPECT_EQ(Create(c, R"({"b.c": -1})", u), "b.c_-1");
  IndexOptions sp;
  sp.sparse = true;
  sp.name = "sparse_d";
  sp.partial_filter_expression = Json(R"({"d": {"$exists": true}})");
  EXPECT_EQ(Create(c, R"({"d": 1})", sp), "sparse_d");
  EXPECT_THAT(ListIndexesJson(c),
              ElementsAre(R"({"v": 2, "key": {"_id": 1}, "name": "_id_"})",
                          R"({"v": 2, "key": {"a": 1}, "name": "a_1"})",
                          R"({"v": 2, "key": {"b.c": -1}, "name": "b.c_-1", "unique": true})",
                          R"({"v": 2, "key": {"d": 1}, "name": "sparse_d", "sparse": true, )"
                          R"("partialFilterExpression": {"d": {"$exists": true}}})"));
  ExpectValid(c, 2);  // a_1 and b.c_-1; sparse_d skips the document

  // The same index again is a no-op returning its name.
  EXPECT_EQ(Create(c, R"({"a": 1})"), "a_1");
  EXPECT_EQ(Create(c, R"({"a": 1.0})"), "a_1");

  ASSERT_TRUE(c.DropIndex("a_1").ok());
  ASSERT_TRUE(c.DropIndexByKey(Json(R"({"b.c": -1})")).ok());
  EXPECT_EQ(ListIndexesJson(c).size(), 2u);
  ASSERT_TRUE(c.DropIndexes().ok());
  EXPECT_THAT(ListIndexesJson(c), ElementsAre(R"({"v": 2, "key": {"_id": 1}, "name": "_id_"})"));
  ExpectValid(c, 0);

  uint32_t id = 0;
  Close();
  {
    auto engine = OpenEngine();
    id = internal::CatalogOf(*engine).Find("db", "c")->id;
    EXPECT_EQ(CountNonRecordKeys(*engine, id), 0) << "dropped indexes leave no entries";
  }
  Open();
}

TEST_F(IndexApiTest, CreateIndexConflicts) {
  Collection c = Coll();
  EXPECT_EQ(Create(c, R"({"a": 1})"), "a_1");
  // Same name, different key.
  IndexOptions named;
  named.name = "a_1";
  auto r = c.CreateIndex(Json(R"({"b": 1})"), named);
  EXPECT_EQ(r.status().code(), ErrorCode::kIndexKeySpecsConflict);
  EXPECT_EQ(r.status().message(),
            "An existing index has the same name as the requested index. When index names are "
            "not specified, they are auto generated and can cause conflicts. Please refer to our "
            "documentation. Requested index: { v: 2, key: { b: 1 }, name: 'a_1' }, existing "
            "index: { v: 2, key: { a: 1 }, name: 'a_1' }");
  // Same name and key, different options.
  IndexOptions unique;
  unique.unique = true;
  EXPECT_EQ(c.CreateIndex(Json(R"({"a": 1})"), unique).status().code(),
            ErrorCode::kIndexKeySpecsConflict);
  // Same key, different name.
  IndexOptions other;
  other.name = "other";
  r = c.CreateIndex(Json(R"({"a": 1})"), other);
  EXPECT_EQ(r.status().code(), ErrorCode::kIndexOptionsConflict);
  EXPECT_EQ(r.status().message(), "Index already exists with a different name: a_1");
  other.unique = true;
  EXPECT_EQ(c.CreateIndex(Json(R"({"a": 1})"), other).status().code(),
            ErrorCode::kIndexOptionsConflict);
  // The _id index.
  r = c.CreateIndex(Json(R"({"_id": 1})"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "_id_");
  r = c.CreateIndex(Json(R"({"_id": 1})"), unique);
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidIndexSpecificationOption);
  IndexOptions reserved;
  reserved.name = "_id_";
  EXPECT_EQ(c.CreateIndex(Json(R"({"b": 1})"), reserved).status().code(), ErrorCode::kBadValue);
  // A bad key pattern.
  EXPECT_EQ(c.CreateIndex(Json(R"({"b": 0})")).status().code(), ErrorCode::kCannotCreateIndex);
  // Nothing was added by the failures.
  EXPECT_EQ(ListIndexesJson(c).size(), 2u);
}

TEST_F(IndexApiTest, DropErrors) {
  Collection c = Coll();
  Status s = c.DropIndex("a_1");
  EXPECT_EQ(s.code(), ErrorCode::kNamespaceNotFound);
  EXPECT_EQ(c.ListIndexes().status().code(), ErrorCode::kNamespaceNotFound);
  Insert(c, R"({"a": 1})");
  s = c.DropIndex("nope");
  EXPECT_EQ(s.code(), ErrorCode::kIndexNotFound);
  EXPECT_EQ(s.message(), "index not found with name [nope]");
  s = c.DropIndex("_id_");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidOptions);
  EXPECT_EQ(s.message(), "cannot drop _id index");
  EXPECT_EQ(c.DropIndexByKey(Json(R"({"_id": 1})")).code(), ErrorCode::kInvalidOptions);
  s = c.DropIndexByKey(Json(R"({"z": 1})"));
  EXPECT_EQ(s.code(), ErrorCode::kIndexNotFound);
  EXPECT_EQ(s.message(), "can't find index with key: { z: 1 }");
  EXPECT_TRUE(c.DropIndexes().ok());  // nothing to drop
}

TEST_F(IndexApiTest, UniqueInsertAndReplace) {
  Collection c = Coll();
  IndexOptions u;
  u.unique = true;
  EXPECT_EQ(Create(c, R"({"a": 1})", u), "a_1");
  Insert(c, R"({"_id": 1, "a": 1})");
  Insert(c, R"({"_id": 2, "a": 2})");
  auto r = c.InsertOne(Json(R"({"_id": 3, "a": 1.0})"));
  EXPECT_EQ(r.status().code(), ErrorCode::kDuplicateKey);
  EXPECT_EQ(r.status().message(),
            "E11000 duplicate key error collection: db.c index: a_1 dup key: { a: 1 }");
  // Nothing of the refused document was written.
  EXPECT_FALSE(c.FindById(Json(R"({"x": 3})").Get("x"))->has_value());
  // A replacement that takes another document's key fails and changes nothing.
  auto rep = c.ReplaceOne(Json(R"({"_id": 2})"), Json(R"({"a": 1, "z": true})"));
  EXPECT_EQ(rep.status().code(), ErrorCode::kDuplicateKey);
  auto two = c.FindById(Json(R"({"x": 2})").Get("x"));
  ASSERT_TRUE(two.ok() && two->has_value());
  EXPECT_EQ(ToJson(**two), R"({"_id": 2, "a": 2})");
  // Keeping its own key, or moving to a free one, is fine.
  ASSERT_TRUE(c.ReplaceOne(Json(R"({"_id": 2})"), Json(R"({"a": 2, "z": 1})")).ok());
  ASSERT_TRUE(c.ReplaceOne(Json(R"({"_id": 2})"), Json(R"({"a": 5})")).ok());
  // The freed value can be taken again.
  Insert(c, R"({"_id": 4, "a": 2})");
  // Missing fields are null, and null is a value like any other.
  Insert(c, R"({"_id": 5})");
  r = c.InsertOne(Json(R"({"_id": 6, "b": 1})"));
  EXPECT_EQ(r.status().code(), ErrorCode::kDuplicateKey);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("dup key: { a: null }"));
  // Ordered InsertMany stops at the duplicate; unordered goes on.
  auto many = c.InsertMany({Json(R"({"_id": 10, "a": 10})"), Json(R"({"_id": 11, "a": 10})"),
                            Json(R"({"_id": 12, "a": 12})")},
                           InsertManyOptions{false});
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->inserted_count(), 2u);
  ASSERT_EQ(many->write_errors.size(), 1u);
  EXPECT_EQ(many->write_errors[0].index, 1u);
  EXPECT_EQ(many->write_errors[0].status.code(), ErrorCode::kDuplicateKey);
  // A multikey document may repeat its own value.
  Insert(c, R"({"_id": 13, "a": [20, 20, 21]})");
  EXPECT_EQ(c.InsertOne(Json(R"({"_id": 14, "a": [22, 21]})")).status().code(),
            ErrorCode::kDuplicateKey);
  ExpectValid(c, 8);  // 1, 5, 2, null, 10, 12, 20, 21
  EXPECT_EQ(*c.EstimatedDocumentCount(), 7);
}

TEST_F(IndexApiTest, CompoundUniqueMessage) {
  Collection c = Coll();
  IndexOptions u;
  u.unique = true;
  EXPECT_EQ(Create(c, R"({"a": 1, "b": -1})", u), "a_1_b_-1");
  Insert(c, R"({"a": 1, "b": "x"})");
  auto r = c.InsertOne(Json(R"({"a": 1, "b": "x"})"));
  EXPECT_EQ(r.status().message(),
            "E11000 duplicate key error collection: db.c index: a_1_b_-1 dup key: { a: 1, b: "
            "\"x\" }");
  Insert(c, R"({"a": 1, "b": "y"})");
}

TEST_F(IndexApiTest, UniqueBuildOverDuplicatesLeavesNothing) {
  Collection c = Coll();
  for (int i = 0; i < 2500; ++i) {
    Insert(c, "{\"_id\": " + std::to_string(i) + ", \"a\": " + std::to_string(i == 2400 ? 7 : i) +
                  "}");
  }
  IndexOptions u;
  u.unique = true;
  auto r = c.CreateIndex(Json(R"({"a": 1})"), u);
  EXPECT_EQ(r.status().code(), ErrorCode::kDuplicateKey);
  EXPECT_EQ(r.status().message(),
            "E11000 duplicate key error collection: db.c index: a_1 dup key: { a: 7 }");
  EXPECT_EQ(ListIndexesJson(c).size(), 1u);
  ExpectValid(c, 0);
  // Parallel arrays fail a build just as cleanly.
  Insert(c, R"({"_id": "p", "x": [1, 2], "y": [3, 4]})");
  r = c.CreateIndex(Json(R"({"x": 1, "y": 1})"));
  EXPECT_EQ(r.status().code(), ErrorCode::kCannotIndexParallelArrays);
  EXPECT_EQ(r.status().message(), "cannot index parallel arrays [y] [x]");
  EXPECT_EQ(ListIndexesJson(c).size(), 1u);
  // A non-unique index over the same data builds.
  EXPECT_EQ(Create(c, R"({"a": 1})"), "a_1");
  ExpectValid(c, 2501);
  Close();
  {
    auto engine = OpenEngine();
    auto meta = internal::CatalogOf(*engine).Find("db", "c");
    EXPECT_EQ(CountNonRecordKeys(*engine, meta->id), 2501) << "only a_1's entries remain";
  }
  Open();
}

TEST_F(IndexApiTest, ParallelArraysOnInsertWriteNothing) {
  Collection c = Coll();
  EXPECT_EQ(Create(c, R"({"a": 1, "b": 1})"), "a_1_b_1");
  auto r = c.InsertOne(Json(R"({"_id": 1, "a": [1, 2], "b": [1, 2]})"));
  EXPECT_EQ(r.status().code(), ErrorCode::kCannotIndexParallelArrays);
  EXPECT_EQ(r.status().message(), "cannot index parallel arrays [b] [a]");
  EXPECT_FALSE(c.FindById(Json(R"({"x": 1})").Get("x"))->has_value());
  EXPECT_EQ(*c.EstimatedDocumentCount(), 0);
  Insert(c, R"({"_id": 2, "a": [1, 2], "b": 1})");
  auto rep = c.ReplaceOne(Json(R"({"_id": 2})"), Json(R"({"a": [1], "b": [2, 3]})"));
  EXPECT_EQ(rep.status().code(), ErrorCode::kCannotIndexParallelArrays);
  ExpectValid(c, 2);
}

TEST_F(IndexApiTest, ConcurrentUniqueInsertsExactlyOneWins) {
  Collection c = Coll();
  IndexOptions u;
  u.unique = true;
  EXPECT_EQ(Create(c, R"({"k": 1})", u), "k_1");
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<int> ok{0}, dup{0}, other{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Document doc =
            Json("{\"k\": " + std::to_string(round) + ", \"t\": " + std::to_string(t) + "}");
        while (!go.load()) std::this_thread::yield();
        auto r = c.InsertOne(doc);
        if (r.ok()) {
          ++ok;
        } else if (r.status().code() == ErrorCode::kDuplicateKey) {
          ++dup;
        } else {
          ++other;
        }
      });
    }
    go = true;
    for (auto& th : threads) th.join();
    EXPECT_EQ(ok.load(), 1) << "round " << round;
    EXPECT_EQ(dup.load(), kThreads - 1) << "round " << round;
    EXPECT_EQ(other.load(), 0) << "round " << round;
  }
  EXPECT_EQ(*c.EstimatedDocumentCount(), kRounds);
  ExpectValid(c, kRounds);
}

TEST_F(IndexApiTest, MaintainedThroughInsertReplaceDelete) {
  Collection c = Coll();
  EXPECT_EQ(Create(c, R"({"a": 1})"), "a_1");
  EXPECT_EQ(Create(c, R"({"tags": 1, "n": -1})"), "tags_1_n_-1");
  Insert(c, R"({"_id": 1, "a": 5, "tags": ["x", "y"], "n": 1})");
  Insert(c, R"({"_id": 2, "a": {"$numberLong": "5"}, "tags": [], "n": 2})");
  Insert(c, R"({"_id": 3, "n": 3})");
  ExpectValid(c, 3 + 4);
  // Replace: change a value, change a type only, grow and shrink arrays.
  ASSERT_TRUE(
      c.ReplaceOne(Json(R"({"_id": 1})"), Json(R"({"a": 6, "tags": ["y", "z"], "n": 1})")).ok());
  ASSERT_TRUE(
      c.ReplaceOne(Json(R"({"_id": 2})"), Json(R"({"a": 5.0, "tags": ["q"], "n": 2})")).ok());
  ExpectValid(c, 3 + 4);
  ASSERT_TRUE(c.DeleteOne(Json(R"({"_id": 3})")).ok());
  ExpectValid(c, 2 + 3);
  Close();
  {
    auto engine = OpenEngine();
    EXPECT_THAT(ScanIndex(*engine, "a_1"), ElementsAre(R"({"a": 5.0} 2)", R"({"a": 6} 1)"));
    EXPECT_THAT(ScanIndex(*engine, "tags_1_n_-1"),
                ElementsAre(R"({"tags": "q", "n": 2} 2)", R"({"tags": "y", "n": 1} 1)",
                            R"({"tags": "z", "n": 1} 1)"));
  }
  Open();
  c = Coll();
  ASSERT_TRUE(c.DeleteMany(Json("{}")).ok());
  ExpectValid(c, 0);
}

TEST_F(IndexApiTest, ValidateFindsPlantedInconsistencies) {
  Collection c = Coll();
  EXPECT_EQ(Create(c, R"({"a": 1})"), "a_1");
  Insert(c, R"({"_id": 1, "a": 1})");
  Insert(c, R"({"_id": 2, "a": 2})");
  ExpectValid(c, 2);
  Close();
  {
    auto engine = OpenEngine();
    auto meta = internal::CatalogOf(*engine).Find("db", "c");
    const IndexDescriptor& index = *meta->indexes()->FindByName("a_1");
    // Remove _id 1's entry and plant one for a document that does not exist.
    keystring::Builder one, ghost;
    one.Append(Json(R"({"v": 1})").Get("v"));
    ghost.Append(Json(R"({"v": 9})").Get("v"));
    std::string id1 = keystring::EncodeValue(Json(R"({"v": 1})").Get("v"));
    std::string id9 = keystring::EncodeValue(Json(R"({"v": 9})").Get("v"));
    ASSERT_TRUE(engine->rocks().db
                    ->Delete(rocksdb::WriteOptions(), engine->rocks().data_cf,
                             internal::IndexEntryKey(index, one.bytes(), id1))
                    .ok());
    ASSERT_TRUE(engine->rocks().db
                    ->Put(rocksdb::WriteOptions(), engine->rocks().data_cf,
                          internal::IndexEntryKey(index, ghost.bytes(), id9),
                          internal::IndexEntryValue(index, id9, ""))
                    .ok());
  }
  Open();
  auto v = Coll().Validate();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_FALSE(v->valid);
  EXPECT_EQ(v->index_entries, 2);
  std::string all;
  for (const std::string& e : v->errors) all += e + "\n";
  EXPECT_THAT(all, HasSubstr("index a_1 lacks the key { a: 1 } of a document"));
  EXPECT_THAT(all, HasSubstr("index a_1: the entry { a: 9 } points to a document that does not "
                             "exist"));
}

TEST_F(IndexApiTest, MultikeyPathsPersistAcrossReopen) {
  Collection c = Coll();
  EXPECT_EQ(Create(c, R"({"a": 1})"), "a_1");
  EXPECT_EQ(Create(c, R"({"b.c": 1})"), "b.c_1");
  Insert(c, R"({"a": 1, "b": {"c": 1}})");
  Close();
  {
    auto engine = OpenEngine();
    auto meta = internal::CatalogOf(*engine).Find("db", "c");
    EXPECT_FALSE(meta->indexes()->FindByName("a_1")->is_multikey());
    EXPECT_FALSE(meta->indexes()->FindByName("b.c_1")->is_multikey());
  }
  Open();
  c = Coll();
  Insert(c, R"({"a": [1, 2], "b": [{"c": 1}, {"c": 2}]})");
  Insert(c, R"({"b": {"c": [5, 6]}})");
  Close();
  {
    auto engine = OpenEngine();
    auto meta = internal::CatalogOf(*engine).Find("db", "c");
    const IndexDescriptor* a = meta->indexes()->FindByName("a_1");
    const IndexDescriptor* bc = meta->indexes()->FindByName("b.c_1");
    EXPECT_TRUE(a->is_multikey());
    EXPECT_THAT(a->MultikeyPrefixes(0), ElementsAre("a"));
    EXPECT_TRUE(bc->is_multikey());
    EXPECT_THAT(bc->MultikeyPrefixes(0), ElementsAre("b", "b.c"));
  }
  Open();
  // A build over multikey documents records them too.
  c = Coll();
  EXPECT_EQ(Create(c, R"({"b.c": -1})"), "b.c_-1");
  Close();
  {
    auto engine = OpenEngine();
    auto meta = internal::CatalogOf(*engine).Find("db", "c");
    EXPECT_THAT(meta->indexes()->FindByName("b.c_-1")->MultikeyPrefixes(0),
                ElementsAre("b", "b.c"));
  }
  Open();
  ExpectValid(Coll(), 4 + 5 + 5);
}

TEST_F(IndexApiTest, RenameKeepsIndexesAndDropRemovesThem) {
  Collection c = Coll();
  IndexOptions u;
  u.unique = true;
  EXPECT_EQ(Create(c, R"({"a": 1})", u), "a_1");
  Insert(c, R"({"a": 1})");
  ASSERT_TRUE(client_->GetDatabase("db").RenameCollection("c", "d").ok());
  Collection d = Coll("d");
  EXPECT_EQ(ListIndexesJson(d).size(), 2u);
  auto r = d.InsertOne(Json(R"({"a": 1})"));
  EXPECT_EQ(r.status().message(),
            "E11000 duplicate key error collection: db.d index: a_1 dup key: { a: 1 }");
  ExpectValid(d, 1);
  Close();
  {
    auto engine = OpenEngine();
    EXPECT_THAT(ScanIndex(*engine, "a_1", "d"), testing::SizeIs(1));
  }
  Open();
  ASSERT_TRUE(Coll("d").Drop().ok());
  Close();
  {
    auto engine = OpenEngine();
    std::unique_ptr<rocksdb::Iterator> it(
        engine->rocks().db->NewIterator(rocksdb::ReadOptions(), engine->rocks().data_cf));
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid()) << "a dropped collection leaves neither records nor entries";
  }
  Open();
}

TEST_F(IndexApiTest, IndexStatsListsEveryIndex) {
  Collection c = Coll();
  EXPECT_EQ(Create(c, R"({"a": 1})"), "a_1");
  auto stats = c.IndexStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->size(), 2u);
  EXPECT_EQ((*stats)[0].Get("name").String(), "_id_");
  EXPECT_EQ((*stats)[1].Get("name").String(), "a_1");
  EXPECT_EQ(ToJson((*stats)[1].Get("key").Document()), R"({"a": 1})");
  Element ops = (*stats)[1].view().GetPath("accesses.ops");
  ASSERT_EQ(ops.type(), BsonType::kInt64);
  EXPECT_GE(ops.Int64(), 0);
  EXPECT_EQ((*stats)[1].view().GetPath("accesses.since").type(), BsonType::kDateTime);
  Close();
  {
    auto engine = OpenEngine();
    auto meta = internal::CatalogOf(*engine).Find("db", "c");
    const IndexDescriptor* a = meta->indexes()->FindByName("a_1");
    a->RecordAccess();
    a->RecordAccess();
    EXPECT_EQ(a->accesses(), 2);
  }
  Open();
}

TEST_F(IndexApiTest, BuildsOverManyDocumentsWithProgress) {
  Collection c = Coll();
  constexpr int kDocs = 100000;
  std::vector<Document> batch;
  for (int i = 0; i < kDocs; ++i) {
    batch.push_back(Json("{\"_id\": " + std::to_string(i) +
                         ", \"i\": " + std::to_string((i * 7919) % kDocs) + ", \"s\": \"item\"}"));
    if (batch.size() == 10000) {
      auto r = c.InsertMany(batch);
      ASSERT_TRUE(r.ok() && r->ok());
      batch.clear();
    }
  }
  std::vector<int64_t> progress;
  auto r = c.CreateIndex(Json(R"({"i": 1})"), {}, [&](int64_t n) { progress.push_back(n); });
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_GE(progress.size(), 100u);
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_EQ(progress.back(), kDocs);
  ExpectValid(c, kDocs);
}

// A build whose sort spills (a budget of 4 KiB: dozens of runs, merged)
// writes exactly the entries of one sorted in memory, over multikey,
// missing, mixed-type and descending keys; a unique build over duplicates
// fails the same way spilled or not, and leaves nothing behind (no entries,
// no temporary files).
TEST_F(IndexApiTest, SpilledBuildEqualsInMemoryBuild) {
  Collection c = Coll();
  std::mt19937_64 rng(7);
  std::vector<Document> docs;
  for (int i = 0; i < 3000; ++i) {
    std::string tags = "[";
    for (int t = 0, n = static_cast<int>(rng() % 4); t < n; ++t) {
      tags += (t ? ", " : "") + std::to_string(rng() % 50);
    }
    tags += "]";
    std::string s = rng() % 10 == 0 ? "" : ", \"s\": \"w" + std::to_string(rng() % 700) + "\"";
    std::string u = i == 2990 ? "17" : std::to_string(i);  // one duplicate, late
    docs.push_back(Json("{\"_id\": " + std::to_string((i * 7919) % 3000) + ", \"tags\": " + tags +
                        s + ", \"u\": " + (i % 2 || i == 2990 ? u : "\"" + u + "\"") + "}"));
  }
  auto inserted = c.InsertMany(docs);
  ASSERT_TRUE(inserted.ok() && inserted->ok());
  Close();
  auto build = [&](const ClientOptions& options) {
    Open(options);
    Collection coll = Coll();
    EXPECT_EQ(Create(coll, R"({"tags": 1, "s": -1})"), "tags_1_s_-1");
    IndexOptions unique;
    unique.unique = true;
    auto r = coll.CreateIndex(Json(R"({"u": 1})"), unique);
    EXPECT_EQ(r.status().code(), ErrorCode::kDuplicateKey);
    EXPECT_EQ(r.status().message(),
              "E11000 duplicate key error collection: db.c index: u_1 dup key: { u: 17 }");
    auto v = coll.Validate();
    EXPECT_TRUE(v.ok() && v->valid);
    EXPECT_TRUE(coll.DropIndex("tags_1_s_-1").ok());
    const int64_t entries = v.ok() ? v->index_entries : -1;
    Close();
    // Before anything reopens the directory (an open empties _tmp/).
    const std::filesystem::path tmp = std::filesystem::path(dir_.Sub("db")) / "_tmp";
    EXPECT_FALSE(std::filesystem::exists(tmp) && !std::filesystem::is_empty(tmp))
        << "temporary files left behind";
    auto engine = OpenEngine();
    auto meta = internal::CatalogOf(*engine).Find("db", "c");
    EXPECT_EQ(CountNonRecordKeys(*engine, meta->id), 0) << "the failed unique build left entries";
    return entries;
  };
  // Entries listed while the index exists, for both builds.
  auto entries_of = [&](const ClientOptions& options) {
    Open(options);
    EXPECT_EQ(Create(Coll(), R"({"tags": 1, "s": -1})"), "tags_1_s_-1");
    Close();
    auto engine = OpenEngine();
    std::vector<std::string> out = ScanIndex(*engine, "tags_1_s_-1");
    engine.reset();
    Open();
    EXPECT_TRUE(Coll().DropIndex("tags_1_s_-1").ok());
    Close();
    return out;
  };
  ClientOptions spill;
  spill.max_index_build_memory_bytes = 4096;
  const int64_t in_memory_entries = build(ClientOptions{});
  EXPECT_GT(in_memory_entries, 3000);
  EXPECT_EQ(build(spill), in_memory_entries);
  std::vector<std::string> in_memory = entries_of(ClientOptions{});
  std::vector<std::string> spilled = entries_of(spill);
  EXPECT_EQ(in_memory.size(), static_cast<size_t>(in_memory_entries));
  EXPECT_TRUE(spilled == in_memory);
  Open();
}

TEST(IndexBuildOptionsTest, NonPositiveMemoryBudgetIsBadValue) {
  test::ScratchDir dir;
  ClientOptions o;
  o.max_index_build_memory_bytes = 0;
  EXPECT_EQ(Client::Open(dir.path(), o).status().code(), ErrorCode::kBadValue);
}

}  // namespace
}  // namespace rockdoc

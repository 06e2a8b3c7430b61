// Hashed indexes (issue 39): MongoDB's hash of a value, bit for bit (the
// vectors below are MongoDB's own published ones: its hasher tests, whose
// values "have been determined experimentally" and are kept fixed across
// server versions), and the index kind through the library: keys, bounds,
// refusals with MongoDB's codes, and answers equal to a collection scan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "bson/element_hash.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using internal::HashBsonValue;
using test::Json;
using ::testing::HasSubstr;

// The hash of the value `append` writes under "check".
template <typename F>
int64_t HashOf(F append) {
  BsonBuilder b;
  append(b);
  Document d = std::move(b).Build();
  return HashBsonValue(d.Get("check"));
}

TEST(HashBsonValueTest, NumbersHashAsTheirTruncatedInt64) {
  auto i32 = [](int32_t v) { return HashOf([&](BsonBuilder& b) { b.AppendInt32("check", v); }); };
  auto i64 = [](int64_t v) { return HashOf([&](BsonBuilder& b) { b.AppendInt64("check", v); }); };
  auto dbl = [](double v) { return HashOf([&](BsonBuilder& b) { b.AppendDouble("check", v); }); };
  auto dec = [](std::string_view v) {
    return HashOf([&](BsonBuilder& b) { b.AppendDecimal128("check", *Decimal128::FromString(v)); });
  };
  EXPECT_EQ(i32(42), -944302157085130861LL);
  EXPECT_EQ(dbl(42.123), -944302157085130861LL);
  EXPECT_EQ(i64(42), -944302157085130861LL);
  EXPECT_EQ(dec("42.9"), -944302157085130861LL);
  EXPECT_EQ(i32(0), 4854801880128277513LL);
  EXPECT_EQ(dbl(0.456), 4854801880128277513LL);
  EXPECT_EQ(dbl(std::numeric_limits<double>::quiet_NaN()), 4854801880128277513LL);
  EXPECT_EQ(dec("NaN"), 4854801880128277513LL);
  EXPECT_EQ(i32(1), 5902408780260971510LL);
  EXPECT_EQ(dbl(1.987), 5902408780260971510LL);
  EXPECT_EQ(i32(-1), 1140205862565771219LL);
  EXPECT_EQ(dbl(-1.789), 1140205862565771219LL);
  EXPECT_EQ(dec("-1.789"), 1140205862565771219LL);
  EXPECT_EQ(i32(std::numeric_limits<int32_t>::min()), 6165898260261354870LL);
  EXPECT_EQ(dbl(std::numeric_limits<int32_t>::min()), 6165898260261354870LL);
  EXPECT_EQ(i32(std::numeric_limits<int32_t>::max()), 1143184177162245883LL);
  EXPECT_EQ(i64(std::numeric_limits<int32_t>::max()), 1143184177162245883LL);
  // Past int64's range a number clamps.
  EXPECT_EQ(dbl(std::numeric_limits<double>::max()), 921523596458303250LL);
  EXPECT_EQ(i64(std::numeric_limits<int64_t>::max()), 921523596458303250LL);
  EXPECT_EQ(dec("1E+30"), 921523596458303250LL);
  EXPECT_EQ(dec("Infinity"), 921523596458303250LL);
  EXPECT_EQ(dbl(-std::numeric_limits<double>::max()), 4532067210535695462LL);
  EXPECT_EQ(i64(std::numeric_limits<int64_t>::min()), 4532067210535695462LL);
  EXPECT_EQ(dec("-1E+30"), 4532067210535695462LL);
  // The double 2^63 wraps to INT64_MIN, as MongoDB has always hashed it.
  EXPECT_EQ(dbl(9223372036854775808.0), 4532067210535695462LL);
}

TEST(HashBsonValueTest, OtherTypesMatchMongoDBsVectors) {
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendMinKey("check"); }), 7961148599568647290LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendMaxKey("check"); }), 5504842513779440750LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendUndefined("check"); }), 40158834000849533LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendNull("check"); }), 2338878944348059895LL);
  EXPECT_EQ(HashBsonValue(Element()), 2338878944348059895LL);  // missing hashes as null
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendString("check", "abc"); }),
            8478485326885698097LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendSymbol("check", "abc"); }),
            8478485326885698097LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendString("check", ""); }), 2049396243249673340LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) {
              b.OpenDocument("check").AppendString("a", "abc").AppendInt64("b", 123).Close();
            }),
            4771603801758380216LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.OpenDocument("check").Close(); }),
            7980500913326740417LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) {
              b.OpenArray("check").AppendString("", "bar").AppendString("", "baz");
              b.AppendString("", "qux").Close();
            }),
            -2938911267422831539LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.OpenArray("check").Close(); }), 8849948234993459283LL);
  const std::string bytes("\x00\x01\x02\x03\x04\x06", 6);
  EXPECT_EQ(HashOf([&](BsonBuilder& b) { b.AppendBinary("check", BinarySubtype::kGeneric, bytes); }),
            7252465090394235301LL);
  EXPECT_EQ(HashOf([&](BsonBuilder& b) {
              b.AppendBinary("check", static_cast<BinarySubtype>(0x80), bytes);
            }),
            5736670452907618262LL);
  std::string uuid;
  for (int i = 0; i < 16; ++i) uuid.push_back(static_cast<char>(i));
  EXPECT_EQ(HashOf([&](BsonBuilder& b) { b.AppendBinary("check", BinarySubtype::kUuid, uuid); }),
            6084661258071355978LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) {
              b.AppendObjectId("check", *ObjectId::FromHex("010203040506070809101112"));
            }),
            -5588663249627035708LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) {
              b.AppendObjectId("check", *ObjectId::FromHex("000000000000000000000000"));
            }),
            -4293118519463489418LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendBool("check", true); }), 6405873908747105701LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendBool("check", false); }), 6289544573401934092LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendDateTime("check", 0x5566778811223344LL); }),
            4476222765095560467LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendDateTime("check", 0); }), -1178696894582842035LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendRegex("check", "mongodb", ""); }),
            -7275792090268217043LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendRegex("check", ".*", "i"); }),
            7095855029187981886LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) {
              b.AppendDbPointer("check", "c", *ObjectId::FromHex("010203040506070809101112"));
            }),
            940175826736461384LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) {
              b.AppendDbPointer("check", "db.c", *ObjectId::FromHex("010203040506070809101112"));
            }),
            2426768198104018194LL);
  EXPECT_EQ(HashOf([](BsonBuilder& b) { b.AppendCode("check", "func f() { return 1; }"); }),
            6861638109178014270LL);
  BsonBuilder scope;
  scope.AppendBool("c", true);
  Document scope_doc = std::move(scope).Build();
  EXPECT_EQ(HashOf([&](BsonBuilder& b) {
              b.AppendCodeWithScope("check", "func f() { return 1; }", scope_doc);
            }),
            501342939894575968LL);
}

TEST(HashBsonValueTest, EmbeddedNumbersSquashAlike) {
  // MongoDB's RecursiveSquashingIntsAndDoubles.
  auto a = Json(R"({"x": {"a": 3, "b": [3.1, {"c": 3}]}})");
  auto b = Json(R"({"x": {"a": 3.1, "b": [3, {"c": 3.0}]}})");
  EXPECT_EQ(HashBsonValue(a.Get("x")), HashBsonValue(b.Get("x")));
  auto c = Json(R"({"x": {"a": 4, "b": [3, {"c": 3.0}]}})");
  EXPECT_NE(HashBsonValue(a.Get("x")), HashBsonValue(c.Get("x")));
}

// ---- The index kind through the library ----

class HashedIndexTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    client_.reset();
    auto c = Client::Open(dir_.Sub("db"), test::TestClientOptions());
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Collection Coll() { return client_->GetDatabase("db").GetCollection("c"); }
  // The _ids a query returns, in _id order.
  std::vector<std::string> Ids(std::string_view filter, FindOptions options = {}) {
    options.sort = Json(R"({"_id": 1})");
    auto cursor = Coll().Find(Json(filter), options);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    if (!cursor.ok()) return {};
    auto all = cursor->ToVector();
    EXPECT_TRUE(all.ok()) << all.status();
    std::vector<std::string> ids;
    if (all.ok())
      for (const Document& d : *all) ids.push_back(ToJson(d));
    return ids;
  }
  // The same query forced to a collection scan: the truth.
  std::vector<std::string> ScanIds(std::string_view filter) {
    FindOptions natural;
    natural.hint = Json(R"({"$natural": 1})");
    return Ids(filter, natural);
  }
  std::string Explain(std::string_view filter, FindOptions options = {}) {
    auto e = Coll().ExplainFind(Json(filter), options, ExplainVerbosity::kQueryPlanner);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? ToJson(*e) : "";
  }
  Status Insert(std::string_view doc) { return Coll().InsertOne(Json(doc)).status(); }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(HashedIndexTest, EqualityAndInGoThroughTheHashesAndAgreeWithAScan) {
  auto name = Coll().CreateIndex(Json(R"({"a": "hashed"})"), {});
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "a_hashed");
  // Values that collide on purpose (2, 2.3, 2.9 and NumberDecimal 2.5 hash
  // alike), of several types, null, and missing.
  const std::vector<std::string> values = {
      "2", "2.3", "2.9", R"({"$numberDecimal": "2.5"})", "3", "-1", "\"x\"", "\"y\"", "null",
      R"({"b": 1})", R"({"b": 1.0})", "true", R"({"$date": "2020-01-01T00:00:00Z"})"};
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    const size_t pick = rng() % (values.size() + 1);
    std::string doc = "{\"_id\": " + std::to_string(i);
    if (pick < values.size()) doc += ", \"a\": " + values[pick];
    ASSERT_TRUE(Insert(doc + "}").ok()) << doc;
  }
  for (const std::string& v : values) {
    const std::string eq = "{\"a\": " + v + "}";
    EXPECT_EQ(Ids(eq), ScanIds(eq)) << eq;
    const std::string explain = Explain(eq);
    EXPECT_THAT(explain, HasSubstr("\"IXSCAN\"")) << eq;
    EXPECT_THAT(explain, HasSubstr("\"FETCH\"")) << eq;  // hashes collide: the document settles it
  }
  const std::string in = R"({"a": {"$in": [2, "x", null, {"b": 1}]}})";
  EXPECT_EQ(Ids(in), ScanIds(in));
  EXPECT_THAT(Explain(in), HasSubstr("\"IXSCAN\""));
  // The bounds are the hashes, as MongoDB's explain shows them.
  EXPECT_THAT(Explain(R"({"a": 1})"),
              HasSubstr(R"("indexBounds": {"a": ["[5902408780260971510, 5902408780260971510]"]})"));
  // Ranges and regexes give no bounds on a hashed field.
  EXPECT_THAT(Explain(R"({"a": {"$gt": 2}})"), HasSubstr("COLLSCAN"));
  EXPECT_EQ(Ids(R"({"a": {"$gt": 2}})"), ScanIds(R"({"a": {"$gt": 2}})"));
  EXPECT_THAT(Explain(R"({"a": {"$regex": "^x"}})"), HasSubstr("COLLSCAN"));
}

TEST_F(HashedIndexTest, KeysFollowEveryWrite) {
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"a": "hashed"})"), {}).ok());
  ASSERT_TRUE(Insert(R"({"_id": 1, "a": "old"})").ok());
  ASSERT_TRUE(Coll().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"a": "new"}})")).ok());
  EXPECT_TRUE(Ids(R"({"a": "old"})").empty());
  EXPECT_EQ(Ids(R"({"a": "new"})").size(), 1u);
  ASSERT_TRUE(Coll().DeleteOne(Json(R"({"_id": 1})")).ok());
  EXPECT_TRUE(Ids(R"({"a": "new"})").empty());
  // The catalog brings the kind back after a reopen.
  ASSERT_TRUE(Insert(R"({"_id": 2, "a": 7})").ok());
  Open();
  EXPECT_EQ(Ids(R"({"a": 7})").size(), 1u);
  EXPECT_THAT(Explain(R"({"a": 7})"), HasSubstr("a_hashed"));
  auto specs = Coll().ListIndexes();
  ASSERT_TRUE(specs.ok());
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ(ToJson((*specs)[1].Get("key").Document()), R"({"a": "hashed"})");
}

TEST_F(HashedIndexTest, ArraysAlongTheIndexedPathsAreRefused) {
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"x": 1, "a.b": "hashed"})"), {}).ok());
  Status s = Insert(R"({"_id": 1, "a": {"b": [1, 2]}})");
  EXPECT_EQ(static_cast<int>(s.code()), 16766) << s;
  EXPECT_EQ(s.message(),
            "Error: hashed indexes do not currently support array values. Found array at "
            "path: a.b");
  s = Insert(R"({"_id": 2, "a": [{"b": 1}]})");
  EXPECT_EQ(static_cast<int>(s.code()), 16766) << s;
  EXPECT_THAT(s.message(), HasSubstr("Found array at path: a"));
  // The ordered fields of a compound hashed index may not be arrays either.
  s = Insert(R"({"_id": 3, "x": [1], "a": {"b": 1}})");
  EXPECT_EQ(static_cast<int>(s.code()), 16766) << s;
  EXPECT_THAT(s.message(), HasSubstr("Found array at path: x"));
  // An array inside the hashed value itself is part of the value.
  EXPECT_TRUE(Insert(R"({"_id": 4, "a": {"b": {"c": [1, 2]}}})").ok());
  EXPECT_EQ(Ids(R"({"a.b": {"c": [1, 2]}})").size(), 1u);
  EXPECT_EQ(Coll().CountDocuments(Json("{}")).value(), 1);  // nothing else went in

  // An index build over a document with an array fails the same way.
  ASSERT_TRUE(client_->GetDatabase("db").GetCollection("d").InsertOne(Json(R"({"t": [1]})")).ok());
  auto built = client_->GetDatabase("db").GetCollection("d").CreateIndex(Json(R"({"t": "hashed"})"),
                                                                          {});
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(static_cast<int>(built.status().code()), 16766);
}

TEST_F(HashedIndexTest, MongoDBsRefusals) {
  IndexOptions unique;
  unique.unique = true;
  auto s = Coll().CreateIndex(Json(R"({"a": "hashed"})"), unique);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(static_cast<int>(s.status().code()), 16764);
  s = Coll().CreateIndex(Json(R"({"a": "hashed", "b": "hashed"})"), {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(static_cast<int>(s.status().code()), 31303);
  EXPECT_THAT(s.status().message(), HasSubstr("A maximum of one index field is allowed to be hashed"));
  s = Coll().CreateIndex(Json(R"({"a": "hashed", "b": "text"})"), {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kCannotCreateIndex);
  IndexOptions ttl;
  ttl.expire_after_seconds = 10;
  s = Coll().CreateIndex(Json(R"({"a": "hashed"})"), ttl);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), ErrorCode::kCannotCreateIndex);
}

TEST_F(HashedIndexTest, NoSortAndNoCoveringFromHashes) {
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"a": "hashed"})"), {}).ok());
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(Insert("{\"_id\": " + std::to_string(i) + ", \"a\": " + std::to_string(i % 3) + "}")
                    .ok());
  FindOptions sorted;
  sorted.sort = Json(R"({"a": 1})");
  EXPECT_THAT(Explain(R"({"a": {"$in": [1, 2]}})", sorted), HasSubstr("\"SORT\""));
  FindOptions covered;
  covered.projection = Json(R"({"_id": 0, "a": 1})");
  const std::string explain = Explain(R"({"a": 1})", covered);
  EXPECT_THAT(explain, ::testing::Not(HasSubstr("PROJECTION_COVERED")));
  auto cursor = Coll().Find(Json(R"({"a": 1})"), covered);
  ASSERT_TRUE(cursor.ok());
  auto docs = cursor->ToVector();
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), 7u);
  EXPECT_EQ(ToJson((*docs)[0]), R"({"a": 1})");  // the value, never its hash
  EXPECT_EQ(Coll().CountDocuments(Json(R"({"a": 1})")).value(), 7);
}

TEST_F(HashedIndexTest, CompoundAndSparse) {
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"b": 1, "a": "hashed"})"), {}).ok());
  IndexOptions sparse;
  sparse.sparse = true;
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"s": "hashed"})"), sparse).ok());
  for (int i = 0; i < 60; ++i) {
    std::string doc = "{\"_id\": " + std::to_string(i) + ", \"b\": " + std::to_string(i % 4) +
                      ", \"a\": \"v" + std::to_string(i % 5) + "\"";
    if (i % 2 == 0) doc += ", \"s\": " + std::to_string(i % 6);
    ASSERT_TRUE(Insert(doc + "}").ok());
  }
  const std::string both = R"({"b": 2, "a": "v3"})";
  EXPECT_EQ(Ids(both), ScanIds(both));
  EXPECT_FALSE(Ids(both).empty());
  const std::string explain = Explain(both);
  EXPECT_THAT(explain, HasSubstr("b_1_a_hashed"));
  EXPECT_THAT(explain, HasSubstr(R"("b": ["[2, 2]"])"));
  const std::string range = R"({"b": {"$gte": 1, "$lt": 3}})";  // the ordered prefix alone
  EXPECT_EQ(Ids(range), ScanIds(range));
  EXPECT_THAT(Explain(range), HasSubstr("b_1_a_hashed"));
  // A sparse hashed index answers equality, and never a query that
  // matches missing fields.
  EXPECT_EQ(Ids(R"({"s": 4})"), ScanIds(R"({"s": 4})"));
  EXPECT_THAT(Explain(R"({"s": 4})"), HasSubstr("s_hashed"));
  EXPECT_EQ(Ids(R"({"s": null})"), ScanIds(R"({"s": null})"));
  EXPECT_THAT(Explain(R"({"s": null})"), ::testing::Not(HasSubstr("s_hashed")));
}

// $toHashedIndexKey gives the key a hashed index stores: for each value
// kind, and for a missing field the hash of null.
TEST_F(HashedIndexTest, ToHashedIndexKeyIsTheIndexHash) {
  ASSERT_TRUE(Coll()
                  .InsertMany({Json(R"({"_id": 1, "a": 1})"), Json(R"({"_id": 2, "a": "abc"})"),
                               Json(R"({"_id": 3})")})
                  .ok());
  Document pipeline =
      Json(R"({"p": [{"$sort": {"_id": 1}}, {"$project": {"h": {"$toHashedIndexKey": "$a"}}}]})");
  auto cursor = Coll().Aggregate(pipeline.Get("p").Array());
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  auto docs = cursor->ToVector();
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_EQ((*docs)[0].Get("h").Int64(), 5902408780260971510LL);
  EXPECT_EQ((*docs)[1].Get("h").Int64(), 8478485326885698097LL);
  EXPECT_EQ((*docs)[2].Get("h").Int64(), 2338878944348059895LL);
  EXPECT_EQ((*docs)[2].Get("h").type(), BsonType::kInt64);
}

// Under a collation the collation key is hashed (MongoDB's
// CollationAppliedBeforeHashing): a strength-2 hashed index finds "Alice"
// for "alice" under its collation, and serves no query of another one.
TEST_F(HashedIndexTest, ACollatedHashedIndexHashesCollationKeys) {
  IndexOptions collated;
  collated.collation = Json(R"({"locale": "en", "strength": 2})");
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"b": 1, "a": "hashed"})"), collated).ok());
  ASSERT_TRUE(Insert(R"({"_id": 1, "b": "X", "a": "Alice"})").ok());
  ASSERT_TRUE(Insert(R"({"_id": 2, "b": "x", "a": "bob"})").ok());
  FindOptions same;
  same.collation = Json(R"({"locale": "en", "strength": 2})");
  EXPECT_EQ(Ids(R"({"b": "x", "a": "ALICE"})", same).size(), 1u);
  EXPECT_EQ(Ids(R"({"a": {"$in": ["alice", "BOB"]}})", same).size(), 2u);
  EXPECT_THAT(Explain(R"({"b": "x", "a": "ALICE"})", same), HasSubstr("b_1_a_hashed"));
  // The simple collation: no match, and the index is not used.
  EXPECT_TRUE(Ids(R"({"b": "x", "a": "ALICE"})").empty());
  EXPECT_THAT(Explain(R"({"b": "x", "a": "ALICE"})"), ::testing::Not(HasSubstr("b_1_a_hashed")));
}

}  // namespace
}  // namespace rockdoc

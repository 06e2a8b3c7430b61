// The update and query language through the public API (issue 11 #5, #14,
// #15, #21): what a user's call stores, end to end, where the pure-function
// tests (update_test, matcher_test, projection_test) cannot see the stored
// document.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

class UpdateApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.path());
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  void TearDown() override { ASSERT_TRUE(client_->Close().ok()); }

  Collection Coll() const { return client_->GetDatabase("db").GetCollection("c"); }

  void Insert(std::string_view json) {
    auto r = Coll().InsertOne(Json(json));
    ASSERT_TRUE(r.ok()) << r.status() << " inserting " << json;
  }

  // Every stored document, in _id order, as one JSON array.
  std::string All() {
    FindOptions options;
    options.sort = Json(R"({"_id": 1})");
    auto cursor = Coll().Find(Document(), options);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    std::string out = "[";
    while (cursor->Next()) {
      if (out.size() > 1) out += ", ";
      out += ToJson(cursor->document());
    }
    EXPECT_TRUE(cursor->status().ok()) << cursor->status();
    return out + "]";
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

// #5: a NUL in $rename's target used to store {"_id":1,"b":256,"":null}
// (or crash the shell reading it back). Now refused before anything is read,
// and the stored document is unchanged.
TEST_F(UpdateApiTest, RenameToANameWithNulIsRefusedAndStoresNothing) {
  Insert(R"({"_id": 1, "a": 1})");
  const std::string before = All();
  for (const char* target : {R"(\u0000a)", R"(b\u0000c)", R"(b\u0000)"}) {
    const std::string update = R"({"$rename": {"a": ")" + std::string(target) + R"("}})";
    auto r = Coll().UpdateOne(Json(R"({"_id": 1})"), Json(update));
    ASSERT_FALSE(r.ok()) << update;
    EXPECT_EQ(r.status().code(), ErrorCode::kBadValue) << r.status();
    EXPECT_THAT(std::string(r.status().message()),
                ::testing::HasSubstr("cannot contain an embedded null byte"));
    UpdateOptions upsert;
    upsert.upsert = true;
    r = Coll().UpdateMany(Json(R"({"_id": 2})"), Json(update), upsert);
    EXPECT_EQ(r.status().code(), ErrorCode::kBadValue) << r.status();
  }
  EXPECT_EQ(All(), before);
}

// #14: the upsert seeds from the filter as MongoDB does, and a replacement
// cannot change the filter's _id.
TEST_F(UpdateApiTest, UpsertsSeedAsMongoDB) {
  UpdateOptions upsert;
  upsert.upsert = true;
  auto r = Coll().UpdateOne(Json(R"({"_id": 1, "x": {"$all": [1]}, "y.z": {"$all": [2]}})"),
                            Json(R"({"$set": {"a": 1}})"), upsert);
  ASSERT_TRUE(r.ok()) << r.status();
  r = Coll().UpdateOne(Json(R"({"_id": 2, "x": {"$all": [1, 2]}})"), Json(R"({"$set": {"a": 1}})"),
                       upsert);
  EXPECT_EQ(r.status().code(), ErrorCode::kNotSingleValueField) << r.status();
  auto replaced = Coll().ReplaceOne(Json(R"({"_id": "foo"})"), Json(R"({"_id": "bar"})"), true);
  EXPECT_EQ(replaced.status().code(), ErrorCode::kImmutableField) << replaced.status();
  replaced = Coll().ReplaceOne(Json(R"({"_id.x": 1, "_id.y": 2})"), Json(R"({"b": 1})"), true);
  EXPECT_EQ(replaced.status().code(), ErrorCode::kNotExactValueField) << replaced.status();
  replaced = Coll().ReplaceOne(Json(R"({"_id": 3, "x": [1, {"x": 1}], "x.x": 1})"),
                               Json(R"({"b": 1})"), true);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ(All(), "[" + ToJson(Json(R"({"_id": 1, "x": 1, "y": {"z": 2}, "a": 1})")) + ", " +
                       ToJson(Json(R"({"_id": 3, "b": 1})")) + "]");
}

// #15: "a.01" is element 1; the positional `$` works after a one-clause $or.
TEST_F(UpdateApiTest, LeadingZeroPositionsAndPositionalAfterOneClauseOr) {
  Insert(R"({"_id": 1, "a": [1, 2, 3]})");
  Insert(R"({"_id": 2, "a": [{"x": 1}, {"x": 4}]})");
  auto r = Coll().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"a.01": 99}})"));
  ASSERT_TRUE(r.ok()) << r.status();
  r = Coll().UpdateOne(Json(R"({"$or": [{"a.x": 4}]})"), Json(R"({"$set": {"a.$.z": 9}})"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->modified_count, 1);
  EXPECT_EQ(All(), "[" + ToJson(Json(R"({"_id": 1, "a": [1, 99, 3]})")) + ", " +
                       ToJson(Json(R"({"_id": 2, "a": [{"x": 1}, {"x": 4, "z": 9}]})")) + "]");
}

// #21: $bit and the $bits* query operators through the API.
TEST_F(UpdateApiTest, BitUpdateAndBitQueries) {
  Insert(R"({"_id": 1, "a": 54})");
  Insert(R"({"_id": 2, "a": 20})");
  auto n = Coll().CountDocuments(Json(R"({"a": {"$bitsAllSet": [1, 5]}})"));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
  auto r = Coll().UpdateMany(Json(R"({"a": {"$bitsAnySet": [2]}})"),
                             Json(R"({"$bit": {"a": {"and": 6}}})"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->modified_count, 2);
  EXPECT_EQ(All(), "[" + ToJson(Json(R"({"_id": 1, "a": 6})")) + ", " +
                       ToJson(Json(R"({"_id": 2, "a": 4})")) + "]");
}

}  // namespace
}  // namespace rockdoc

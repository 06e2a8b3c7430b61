// Tests of command options: createIndex's and createCollection's options
// documents decode from one table of known names (an unknown name is
// MongoDB's error, a known option rockdoc lacks is NotImplemented, never
// accepted and dropped), and createIndexes builds all of its indexes or
// none.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <memory>
#include <string>
#include <vector>

#include "command/index_options.h"
#include "rockdoc/client.h"
#include "storage/engine.h"
#include "storage/rocks.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test::Json;

// ---------------------------------------------------------------------------
// internal::ParseIndexOptions (command/index_options.h): the one decoder of
// createIndexes' index options.

TEST(ParseIndexOptions, DecodesTheOptionsRockdocImplements) {
  auto o = internal::ParseIndexOptions(Json(
      R"({"name": "n", "unique": true, "sparse": 1, "partialFilterExpression": {"a": {"$gt": 1}},
          "v": 2, "background": true, "ns": "db.c"})"));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->name, "n");
  EXPECT_TRUE(o->unique);
  EXPECT_TRUE(o->sparse);
  EXPECT_EQ(o->partial_filter_expression, Json(R"({"a": {"$gt": 1}})"));

  auto empty = internal::ParseIndexOptions(Json("{}"));
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->unique);
  EXPECT_EQ(empty->name, "");
}

// Each option MongoDB knows and rockdoc does not implement.
const char* const kUnsupportedIndexOptions[] = {
    R"({"bits": 26})",
    R"({"min": -180})",
    R"({"max": 180})",
    R"({"wildcardProjection": {"a": 1}})",
    R"({"storageEngine": {}})",
    R"({"prepareUnique": true})",
};

TEST(ParseIndexOptions, EveryKnownButUnsupportedOptionIsNotImplemented) {
  for (const char* options : kUnsupportedIndexOptions) {
    Status s = internal::ParseIndexOptions(Json(options)).status();
    EXPECT_EQ(s.code(), ErrorCode::kNotImplemented) << options << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("is not supported by rockdoc")) << options;
    std::string name = std::string(Json(options).begin().operator*().key());
    EXPECT_THAT(std::string(s.message()), HasSubstr("'" + name + "'")) << options;
  }
}

TEST(ParseIndexOptions, AnUnknownOptionIsInvalidIndexSpecificationOption) {
  Status s = internal::ParseIndexOptions(Json(R"({"unique": true, "foo": 1})")).status();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidIndexSpecificationOption) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("The field 'foo' is not valid for an index specification"));
  // Names are checked before values, as MongoDB does: the unknown name wins
  // over an unsupported option earlier in the document.
  s = internal::ParseIndexOptions(Json(R"({"weights": {}, "foo": 1})")).status();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidIndexSpecificationOption) << s;
}

TEST(ParseIndexOptions, WrongTypesAndVersions) {
  struct Case {
    const char* options;
    ErrorCode code;
  } cases[] = {
      {R"({"name": 1})", ErrorCode::kTypeMismatch},
      {R"({"unique": "yes"})", ErrorCode::kTypeMismatch},
      {R"({"sparse": null})", ErrorCode::kTypeMismatch},
      {R"({"background": "x"})", ErrorCode::kTypeMismatch},
      {R"({"partialFilterExpression": 1})", ErrorCode::kTypeMismatch},
      {R"({"v": "2"})", ErrorCode::kTypeMismatch},
      {R"({"v": 3})", ErrorCode::kCannotCreateIndex},
      {R"({"v": 1})", ErrorCode::kNotImplemented},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(internal::ParseIndexOptions(Json(c.options)).status().code(), c.code) << c.options;
  }
}

// ---------------------------------------------------------------------------
// Through the API

class OptionsApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Database Db() { return client_->GetDatabase("db"); }
  Collection Coll() { return Db().GetCollection("c"); }
  std::vector<std::string> IndexNames() {
    std::vector<std::string> out;
    auto r = Coll().ListIndexes();
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) {
      for (const Document& d : *r) out.emplace_back(d.Get("name").String());
    }
    return out;
  }
  bool CollectionExists(std::string_view name) {
    auto names = Db().ListCollectionNames();
    EXPECT_TRUE(names.ok());
    return names.ok() && std::find(names->begin(), names->end(), name) != names->end();
  }
  // Keys in the data column family: documents and index entries.
  int64_t DataKeys() {
    EXPECT_TRUE(client_->Close().ok());
    client_.reset();
    auto engine = internal::Engine::Open(dir_.Sub("db"), ClientOptions{});
    EXPECT_TRUE(engine.ok()) << engine.status();
    if (!engine.ok()) return -1;
    std::unique_ptr<rocksdb::Iterator> it(
        (*engine)->rocks().db->NewIterator(rocksdb::ReadOptions(), (*engine)->rocks().data_cf));
    int64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    return n;
  }

  // CreateIndexes over {keys, options} JSON pairs, each options document
  // decoded as the createIndexes command decodes it (the API takes them
  // typed): a refused option fails the call before anything is built.
  StatusOr<std::vector<std::string>> CreateIndexes(
      const std::vector<std::pair<std::string, std::string>>& specs) {
    std::vector<IndexModel> models;
    for (const auto& [keys, options] : specs) {
      ROCKDOC_ASSIGN_OR_RETURN(IndexOptions decoded, internal::ParseIndexOptions(Json(options)));
      models.push_back(IndexModel{Json(keys), std::move(decoded)});
    }
    return Coll().CreateIndexes(models);
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(OptionsApiTest, CreateIndexesRefusesUnsupportedAndUnknownOptionsAndBuildsNothing) {
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"a": 1})")).ok());
  for (const char* options : kUnsupportedIndexOptions) {
    auto r = CreateIndexes({{R"({"a": 1})", options}});
    EXPECT_EQ(r.status().code(), ErrorCode::kNotImplemented) << options << ": " << r.status();
  }
  auto r = CreateIndexes({{R"({"a": 1})", R"({"foo": true})"}});
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidIndexSpecificationOption) << r.status();
  EXPECT_THAT(IndexNames(), ElementsAre("_id_"));

  // Valid options work through the same entry.
  r = CreateIndexes({{R"({"a": 1})", R"({"unique": true, "background": true, "v": 2})"}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(*r, ElementsAre("a_1"));
  EXPECT_THAT(IndexNames(), ElementsAre("_id_", "a_1"));
}

TEST_F(OptionsApiTest, SpecialIndexTypesAreNotImplemented) {
  for (const char* keys : {R"({"$**": 1})", R"({"a.$**": 1})", R"({"a": "2d"})"}) {
    auto r = Coll().CreateIndex(Json(keys));
    EXPECT_EQ(r.status().code(), ErrorCode::kNotImplemented) << keys << ": " << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("indexes are not supported by rockdoc"))
        << keys;
  }
  EXPECT_EQ(Coll().CreateIndex(Json(R"({"$**": 1})")).status().message(),
            "wildcard indexes are not supported by rockdoc");
}

TEST_F(OptionsApiTest, CreateIndexesWithOneBadSpecBuildsNone) {
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"a": 1, "b": 1})")).ok());
  // A bad key pattern, a bad option, an unsupported index type: each after
  // a good spec.
  const char* const bad_keys[] = {R"({"b": 0})", R"({"b": 1})", R"({"$**": 1})"};
  const char* const bad_options[] = {"{}", R"({"collation": {"locale": "nowhere"}})", "{}"};
  for (int i = 0; i < 3; ++i) {
    auto r = CreateIndexes({{R"({"a": 1})", "{}"}, {bad_keys[i], bad_options[i]}});
    EXPECT_FALSE(r.ok()) << bad_keys[i];
    EXPECT_THAT(IndexNames(), ElementsAre("_id_")) << bad_keys[i];
  }
  // Two specs that conflict with each other.
  auto r =
      CreateIndexes({{R"({"a": 1})", R"({"name": "x"})"}, {R"({"b": 1})", R"({"name": "x"})"}});
  EXPECT_EQ(r.status().code(), ErrorCode::kIndexKeySpecsConflict) << r.status();
  EXPECT_THAT(IndexNames(), ElementsAre("_id_"));
  // The same spec twice is one index.
  r = CreateIndexes({{R"({"a": 1})", "{}"}, {R"({"a": 1})", "{}"}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(*r, ElementsAre("a_1", "a_1"));
  EXPECT_THAT(IndexNames(), ElementsAre("_id_", "a_1"));
}

TEST_F(OptionsApiTest, ABuildFailingMidwayRemovesTheIndexesBuiltInTheSameCall) {
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 1, "a": 1, "b": 5})")).ok());
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 2, "a": 2, "b": 5})")).ok());
  // The first index builds; the second is unique over duplicates.
  auto r = CreateIndexes({{R"({"a": 1})", "{}"}, {R"({"b": 1})", R"({"unique": true})"}});
  EXPECT_EQ(r.status().code(), ErrorCode::kDuplicateKey) << r.status();
  EXPECT_THAT(IndexNames(), ElementsAre("_id_"));
  auto v = Coll().Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
  // Not a single entry of either index is left: only the two documents.
  EXPECT_EQ(DataKeys(), 2);
}

TEST_F(OptionsApiTest, CreateIndexesNeedsAtLeastOneIndex) {
  EXPECT_EQ(CreateIndexes({}).status().code(), ErrorCode::kBadValue);
}

// Each createCollection option MongoDB knows and rockdoc does not implement
// (validators and capped collections are: tests/validator_test.cc,
// tests/capped_test.cc).
const char* const kUnsupportedCollectionOptions[] = {
    R"({"timeseries": {"timeField": "t"}})",
    R"({"clusteredIndex": {"key": {"_id": 1}, "unique": true}})",
    R"({"expireAfterSeconds": 60})",
    R"({"storageEngine": {}})",
    R"({"indexOptionDefaults": {}})",
    R"({"encryptedFields": {}})",
};

TEST_F(OptionsApiTest, CreateCollectionRefusesUnsupportedOptionsAndCreatesNothing) {
  for (const char* options : kUnsupportedCollectionOptions) {
    Status s = test::CreateCommand(*client_, "db", "c", options);
    EXPECT_EQ(s.code(), ErrorCode::kNotImplemented) << options << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("is not supported by rockdoc")) << options;
    EXPECT_FALSE(CollectionExists("c")) << options;
  }
}

TEST_F(OptionsApiTest, CreateCollectionRefusesAnUnknownOptionAsMongoDBDoes) {
  Status s = test::CreateCommand(*client_, "db", "c", R"({"foo": 1})");
  EXPECT_EQ(s.code(), ErrorCode::kUnknownBsonField) << s;
  EXPECT_EQ(s.code_number(), 40415);
  EXPECT_EQ(s.message(), "BSON field 'create.foo' is an unknown field.");
  EXPECT_EQ(s.code_name(), "Location40415");
  EXPECT_FALSE(CollectionExists("c"));
}

TEST_F(OptionsApiTest, CreateCollectionWithNoOrHarmlessOptionsCreates) {
  EXPECT_TRUE(test::CreateCommand(*client_, "db", "c", "{}").ok());
  EXPECT_TRUE(test::CreateCommand(*client_, "db", "d", R"({"comment": "why"})").ok());
  EXPECT_TRUE(CollectionExists("c"));
  EXPECT_TRUE(CollectionExists("d"));
  EXPECT_EQ(test::CreateCommand(*client_, "db", "c", "{}").code(), ErrorCode::kNamespaceExists);
}

}  // namespace
}  // namespace rockdoc

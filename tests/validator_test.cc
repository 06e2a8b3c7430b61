// Collection validators: createCollection / collMod's validator,
// validationLevel and validationAction, applied on every write path
// (insert, update, replace, upsert, findAndModify, commands), with
// bypassDocumentValidation, MongoDB's error 121 and its errInfo, and kept
// across restarts.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using test::ScratchDir;

constexpr char kStudentSchema[] = R"({"validator": {"$jsonSchema": {
    "bsonType": "object", "required": ["name", "year"],
    "properties": {"name": {"bsonType": "string"},
                   "year": {"bsonType": "int", "minimum": 2017}}}}})";

class ValidatorTest : public test::ClientTest {
 protected:
  Collection coll(std::string_view name = "students") { return db().GetCollection(name); }
  std::string All(std::string_view name = "students") {
    auto docs = coll(name).Find(Json("{}"), FindOptions{.sort = Json(R"({"_id": 1})")});
    EXPECT_TRUE(docs.ok());
    auto v = docs->ToVector();
    EXPECT_TRUE(v.ok());
    std::string out;
    for (const Document& d : *v) out += ToJson(d) + ";";
    return out;
  }
};

TEST_F(ValidatorTest, FailingInsertsAreRefusedWith121AndChangeNothing) {
  ASSERT_TRUE(test::CreateCommand(*client_, "test", "students", kStudentSchema).ok());
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "name": "Ann", "year": 2019})")).ok());
  auto bad = coll().InsertOne(Json(R"({"_id": 2, "name": "Bob", "year": 1999})"));
  ASSERT_EQ(bad.status().code(), ErrorCode::kDocumentValidationFailure);
  EXPECT_EQ(bad.status().message(), "Document failed validation");
  auto info = Document::FromBytes(bad.status().error_info());
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->Get("failingDocumentId").Int32(), 2);
  EXPECT_EQ(info->GetPath("details.operatorName").String(), "$jsonSchema");
  // An unordered InsertMany reports the bad one and keeps the good ones.
  std::vector<Document> docs = {Json(R"({"_id": 3, "name": "Cy", "year": 2020})"),
                                Json(R"({"_id": 4, "year": 2020})"),
                                Json(R"({"_id": 5, "name": "Di", "year": 2021})")};
  auto many = coll().InsertMany(docs, InsertManyOptions{.ordered = false});
  ASSERT_TRUE(many.ok());
  ASSERT_EQ(many->write_errors.size(), 1u);
  EXPECT_EQ(many->write_errors[0].index, 1u);
  EXPECT_EQ(many->write_errors[0].status.code(), ErrorCode::kDocumentValidationFailure);
  EXPECT_EQ(All(), R"({"_id": 1, "name": "Ann", "year": 2019};)"
                   R"({"_id": 3, "name": "Cy", "year": 2020};)"
                   R"({"_id": 5, "name": "Di", "year": 2021};)");
}

TEST_F(ValidatorTest, UpdatesReplacementsAndUpsertsAreChecked) {
  ASSERT_TRUE(test::CreateCommand(*client_, "test", "students", kStudentSchema).ok());
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "name": "Ann", "year": 2019})")).ok());
  const std::string before = All();
  EXPECT_EQ(coll().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"year": 1}})")).status().code(),
            ErrorCode::kDocumentValidationFailure);
  EXPECT_EQ(coll().UpdateMany(Json("{}"), Json(R"({"$unset": {"name": 1}})")).status().code(),
            ErrorCode::kDocumentValidationFailure);
  EXPECT_EQ(coll().ReplaceOne(Json(R"({"_id": 1})"), Json(R"({"name": 5, "year": 2020})"))
                .status().code(),
            ErrorCode::kDocumentValidationFailure);
  UpdateOptions upsert;
  upsert.upsert = true;
  EXPECT_EQ(coll().UpdateOne(Json(R"({"_id": 9})"), Json(R"({"$set": {"name": "Zed"}})"), upsert)
                .status().code(),
            ErrorCode::kDocumentValidationFailure);
  EXPECT_EQ(coll().FindOneAndUpdate(Json(R"({"_id": 1})"), Json(R"({"$set": {"year": "x"}})"))
                .status().code(),
            ErrorCode::kDocumentValidationFailure);
  EXPECT_EQ(All(), before);
  // A valid change goes through.
  ASSERT_TRUE(coll().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"year": 2020}})")).ok());
  // bypassDocumentValidation skips the validator on each path.
  UpdateOptions bypass;
  bypass.bypass_document_validation = true;
  ASSERT_TRUE(coll().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"year": 1}})"), bypass).ok());
  InsertOneOptions insert_bypass;
  insert_bypass.bypass_document_validation = true;
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 2})"), insert_bypass).ok());
  EXPECT_EQ(All(), R"({"_id": 1, "name": "Ann", "year": 1};{"_id": 2};)");
}

TEST_F(ValidatorTest, ModerateLevelSkipsDocumentsThatAlreadyFailed) {
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "a": 1})")).ok());   // invalid later
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 2, "a": 10})")).ok());  // valid later
  auto r = test::CollModCommand(*client_, "test", "students", R"({"validator": {"a": {"$gte": 5}},
                                              "validationLevel": "moderate"})");
  ASSERT_TRUE(r.ok()) << r.status();
  // The already-invalid document may be updated to anything.
  EXPECT_TRUE(coll().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"a": 2}})")).ok());
  // The valid one must stay valid.
  EXPECT_EQ(coll().UpdateOne(Json(R"({"_id": 2})"), Json(R"({"$set": {"a": 2}})")).status().code(),
            ErrorCode::kDocumentValidationFailure);
  // Inserts are always checked.
  EXPECT_EQ(coll().InsertOne(Json(R"({"_id": 3, "a": 1})")).status().code(),
            ErrorCode::kDocumentValidationFailure);
  // Level off: nothing is checked.
  ASSERT_TRUE(
      test::CollModCommand(*client_, "test", "students", R"({"validationLevel": "off"})").ok());
  EXPECT_TRUE(coll().InsertOne(Json(R"({"_id": 3, "a": 1})")).ok());
}

TEST_F(ValidatorTest, WarnActionLogsAndWrites) {
  ASSERT_TRUE(
      test::CreateCommand(*client_, "test", "students", R"({"validator": {"a": {"$type": "int"}},
                                                            "validationAction": "warn"})")
          .ok());
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "a": "not an int"})")).ok());
  EXPECT_EQ(All(), R"({"_id": 1, "a": "not an int"};)");
  client_.reset();  // flushes the log
  std::ifstream log(dir_.Sub("db") + "/LOG");
  std::stringstream text;
  text << log.rdbuf();
  EXPECT_NE(text.str().find("Document would fail validation in test.students"), std::string::npos);
  EXPECT_NE(text.str().find("\"failingDocumentId\": 1"), std::string::npos);
}

TEST_F(ValidatorTest, CollModChangesTheValidatorAndItSurvivesRestart) {
  ASSERT_TRUE(test::CreateCommand(*client_, "test", "students", kStudentSchema).ok());
  ASSERT_TRUE(test::CollModCommand(*client_, "test", "students",
                                   R"({"validator": {"n": {"$exists": true}}})")
                  .ok());
  EXPECT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "n": 1})")).ok());  // no name, year needed now
  EXPECT_EQ(coll().InsertOne(Json(R"({"_id": 2})")).status().code(),
            ErrorCode::kDocumentValidationFailure);
  Open();
  EXPECT_EQ(coll().InsertOne(Json(R"({"_id": 2})")).status().code(),
            ErrorCode::kDocumentValidationFailure);
  auto infos = db().ListCollections();
  ASSERT_TRUE(infos.ok());
  ASSERT_EQ(infos->size(), 1u);
  EXPECT_EQ(ToJson((*infos)[0].options), R"({"validator": {"n": {"$exists": true}}})");
  // An empty validator removes it.
  ASSERT_TRUE(test::CollModCommand(*client_, "test", "students", R"({"validator": {}})").ok());
  EXPECT_TRUE(coll().InsertOne(Json(R"({"_id": 2})")).ok());
}

TEST_F(ValidatorTest, BadOptionsFailAsMongoDBFailsThem) {
  struct Bad {
    const char* options;
    ErrorCode code;
  };
  const Bad cases[] = {
      {R"({"validator": 1})", ErrorCode::kTypeMismatch},
      {R"({"validator": {"$jsonSchema": {"format": "x"}}})", ErrorCode::kFailedToParse},
      {R"({"validator": {"a": {"$bogus": 1}}})", ErrorCode::kBadValue},
      {R"({"validationLevel": "sometimes"})", ErrorCode::kBadValue},
      {R"({"validationAction": "shout"})", ErrorCode::kBadValue},
      {R"({"validationAction": 1})", ErrorCode::kTypeMismatch},
      {R"({"timeseries": {"timeField": "t"}})", ErrorCode::kNotImplemented},
      {R"({"collation": {"locale": "nowhere"}})", ErrorCode::kBadValue},
      {R"({"validatr": {}})", ErrorCode::kUnknownBsonField},
  };
  for (const Bad& c : cases) {
    Status s = test::CreateCommand(*client_, "test", "x", c.options);
    EXPECT_EQ(s.code(), c.code) << c.options << ": " << s;
  }
  EXPECT_EQ(test::CollModCommand(*client_, "test", "x", R"({"validator": {}})").status().code(),
            ErrorCode::kNamespaceNotFound);  // nothing was created by the failures
  EXPECT_EQ(client_->GetDatabase("admin")
                .CreateCollection("x", test::ValidatorOptions(R"({"a": 1})"))
                .code(),
            ErrorCode::kInvalidOptions);
}

TEST_F(ValidatorTest, CommandsReportErrInfoAndHonourBypass) {
  Document r = client_->RunCommand("test", Json(R"({"create": "students", "validator":
      {"$jsonSchema": {"required": ["name"]}}, "validationAction": "error"})"));
  ASSERT_EQ(r.Get("ok").NumberAsDouble(), 1.0) << ToJson(r);
  r = client_->RunCommand("test", Json(R"({"insert": "students", "documents": [{"_id": 1}]})"));
  EXPECT_EQ(r.Get("n").Int32(), 0);
  EXPECT_EQ(r.GetPath("writeErrors.0.code").Int32(), 121);
  EXPECT_EQ(r.GetPath("writeErrors.0.errInfo.failingDocumentId").Int32(), 1);
  EXPECT_EQ(ToJson(r.GetPath("writeErrors.0.errInfo.details").Document()),
            ToJson(Json(R"({"operatorName": "$jsonSchema", "schemaRulesNotSatisfied": [
                {"operatorName": "required", "specifiedAs": {"required": ["name"]},
                 "missingProperties": ["name"]}]})")));
  r = client_->RunCommand("test", Json(R"({"insert": "students", "documents": [{"_id": 1}],
                                           "bypassDocumentValidation": true})"));
  EXPECT_EQ(r.Get("n").Int32(), 1) << ToJson(r);
  r = client_->RunCommand("test", Json(R"({"update": "students",
      "updates": [{"q": {"_id": 1}, "u": {"$set": {"x": 1}}}]})"));
  EXPECT_EQ(r.GetPath("writeErrors.0.code").Int32(), 121) << ToJson(r);
  r = client_->RunCommand("test", Json(R"({"findAndModify": "students", "query": {"_id": 1},
      "update": {"$set": {"x": 1}}})"));
  EXPECT_EQ(r.Get("code").Int32(), 121) << ToJson(r);
  EXPECT_EQ(r.GetPath("errInfo.failingDocumentId").Int32(), 1) << ToJson(r);
  r = client_->RunCommand("test", Json(R"({"findAndModify": "students", "query": {"_id": 1},
      "update": {"$set": {"x": 1}}, "bypassDocumentValidation": true})"));
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1.0) << ToJson(r);
  r = client_->RunCommand("test", Json(R"({"listCollections": 1, "filter": {"name": "students"}})"));
  EXPECT_EQ(ToJson(r.GetPath("cursor.firstBatch.0.options").Document()),
            ToJson(Json(R"({"validator": {"$jsonSchema": {"required": ["name"]}},
                            "validationAction": "error"})")));
  r = client_->RunCommand("test", Json(R"({"collMod": "students", "validationLevel": "off"})"));
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1.0) << ToJson(r);
  r = client_->RunCommand("test", Json(R"({"insert": "students", "documents": [{"_id": 2}]})"));
  EXPECT_EQ(r.Get("n").Int32(), 1) << ToJson(r);
}

}  // namespace
}  // namespace rockdoc

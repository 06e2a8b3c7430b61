// The command layer (Client::RunCommand): replies shaped as MongoDB's
// (field names and BSON types), its error codes and messages, server-side
// cursors with the 16 MiB batch rule and the idle timeout.
#include <gtest/gtest.h>

#include <thread>

#include "command/cursor_manager.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using test::ScratchDir;

// An array field as JSON: "[1, 2]".
std::string ArrayJson(const Element& e) {
  EXPECT_EQ(e.type(), BsonType::kArray);
  BsonBuilder b;
  b.AppendElementAs("a", e);
  std::string json = ToJson(std::move(b).Build());  // {"a": [...]}
  return json.substr(6, json.size() - 7);
}

size_t ArrayLength(const Element& e) {
  EXPECT_EQ(e.type(), BsonType::kArray);
  size_t n = 0;
  for (Element x : e.Array()) {
    (void)x;
    ++n;
  }
  return n;
}

class CommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }

  Document Run(std::string_view json, std::string_view db = "test") {
    return client_->RunCommand(db, Json(json));
  }
  // Runs a command that must succeed.
  Document Ok(std::string_view json, std::string_view db = "test") {
    Document r = Run(json, db);
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1.0) << json << " -> " << ToJson(r);
    return r;
  }
  // "<code> <codeName>: <errmsg>" of a command that must fail.
  std::string Error(std::string_view json, std::string_view db = "test") {
    Document r = Run(json, db);
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 0.0) << json << " -> " << ToJson(r);
    EXPECT_EQ(r.Get("ok").type(), BsonType::kDouble);
    EXPECT_EQ(r.Get("code").type(), BsonType::kInt32);
    EXPECT_EQ(r.Get("codeName").type(), BsonType::kString);
    return std::to_string(r.Get("code").Int32()) + " " + std::string(r.Get("codeName").String()) +
           ": " + std::string(r.Get("errmsg").String());
  }
  static std::vector<std::string> Batch(const Document& reply, std::string_view field) {
    std::vector<std::string> out;
    Element batch = reply.Get("cursor").Document().Get(field);
    EXPECT_EQ(batch.type(), BsonType::kArray);
    for (Element d : batch.Array()) out.push_back(ToJson(d.Document()));
    return out;
  }
  static int64_t CursorId(const Document& reply) {
    Element id = reply.Get("cursor").Document().Get("id");
    EXPECT_EQ(id.type(), BsonType::kInt64);
    return id.Int64();
  }
  void InsertNumbers(int n, std::string_view coll = "c") {
    std::string docs;
    for (int i = 0; i < n; ++i) {
      if (i > 0) docs += ", ";
      docs += "{\"_id\": " + std::to_string(i) + "}";
    }
    Document r = Ok("{\"insert\": \"" + std::string(coll) + "\", \"documents\": [" + docs + "]}");
    EXPECT_EQ(r.Get("n").Int32(), n);
  }

  ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

// ---- The dispatcher ----

TEST_F(CommandTest, PingAnswersOk) {
  Document r = Ok(R"({"ping": 1})");
  EXPECT_EQ(ToJson(r), R"({"ok": 1.0})");
}

TEST_F(CommandTest, ErrorsCarryMongoDBsCodesAndMessages) {
  EXPECT_EQ(Error(R"({"bogus": 1})"), "59 CommandNotFound: no such command: 'bogus'");
  EXPECT_EQ(Error(R"({"find": "c", "bogus": 1})"),
            "40415 Location40415: BSON field 'find.bogus' is an unknown field.");
  EXPECT_EQ(Error(R"({"find": "c", "limit": "x"})"),
            "14 TypeMismatch: BSON field 'find.limit' is the wrong type 'string', expected types "
            "'[long, int, decimal, double]'");
  EXPECT_EQ(Error(R"({"find": "c", "filter": 3})"),
            "14 TypeMismatch: BSON field 'find.filter' is the wrong type 'int', expected type "
            "'object'");
  EXPECT_EQ(Error(R"({"find": "c", "limit": -1})"),
            "51024 Location51024: BSON field 'find.limit' value must be >= 0, actual value '-1'");
  EXPECT_EQ(Error(R"({"find": "c", "collation": {"locale": "fr", "strength": 9}})"),
            "9 FailedToParse: Field 'strength' must be an integer 1 through 5. Got: 9");
  EXPECT_EQ(Error(R"({"find": "c", "lsid": {}})"),
            "9 FailedToParse: BSON field 'find.lsid.id' is missing but a required field");
  EXPECT_EQ(Error(R"({"find": "c", "readConcern": {"level": "linearizable"}})"),
            "238 NotImplemented: readConcern level 'linearizable' is not supported by rockdoc");
  EXPECT_EQ(Error(R"({"insert": "c", "documents": [{}], "writeConcern": {"w": 2}})"),
            "238 NotImplemented: writeConcern w: 2 (a single embedded node acknowledges w: 1 "
            "and w: 'majority' only) is not supported by rockdoc");
  EXPECT_EQ(Error(R"({"ping": 1, "$db": "other"})"),
            "73 InvalidNamespace: $db does not name the database the command runs against");
  EXPECT_EQ(Error(R"({"ping": 1})", "bad.db"),
            "73 InvalidNamespace: Invalid database name: 'bad.db'");
  // maxTimeMS is a generic argument: checked everywhere, applied where a
  // command can run long, refused where it would not be.
  Ok(R"({"ping": 1, "maxTimeMS": 100})");
  EXPECT_EQ(Error(R"({"ping": 1, "maxTimeMS": -1})"),
            "2 BadValue: maxTimeMS value must be within the range [0, 2147483647]");
  // Applied by insert too (tests/max_time_test.cc), and accepted by the
  // catalog commands drivers send it with.
  Ok(R"({"insert": "c", "documents": [{}], "maxTimeMS": 600000})");
  Ok(R"({"listCollections": 1, "maxTimeMS": 600000})");
  Ok(R"({"listIndexes": "c", "maxTimeMS": 600000})");
  Ok(R"({"createIndexes": "c", "indexes": [{"key": {"m": 1}, "name": "m_1"}],
         "maxTimeMS": 600000})");
  // Accepted generic fields: the ones with one meaning on one node.
  Ok(R"({"ping": 1, "$db": "test", "comment": "x", "$readPreference": {"mode": "secondary"},
         "apiVersion": "1", "readConcern": {"level": "majority"}, "writeConcern": {"w": "majority"}})");
}

TEST_F(CommandTest, MalformedBsonIsAnErrorReply) {
  std::string bytes = std::string(Json(R"({"ping": 1})").bytes());
  bytes[4] = 0x50;  // the first element's type: no BSON type
  Document r =
      client_->RunCommand("test", DocumentView(reinterpret_cast<const uint8_t*>(bytes.data())));
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 0.0);
  EXPECT_EQ(r.Get("code").Int32(), static_cast<int32_t>(ErrorCode::kInvalidBSON)) << ToJson(r);
}

// ---- Handshake and server ----

TEST_F(CommandTest, HelloDescribesAStandalone) {
  Document r = Ok(R"({"hello": 1, "client": {"driver": {"name": "x"}}, "compression": []})");
  EXPECT_TRUE(r.Get("isWritablePrimary").Bool());
  EXPECT_EQ(r.Get("maxBsonObjectSize").Int32(), 16777216);
  EXPECT_EQ(r.Get("maxMessageSizeBytes").Int32(), 48000000);
  EXPECT_EQ(r.Get("maxWriteBatchSize").Int32(), 100000);
  EXPECT_EQ(r.Get("localTime").type(), BsonType::kDateTime);
  EXPECT_EQ(r.Get("logicalSessionTimeoutMinutes").type(), BsonType::kInt32);
  EXPECT_EQ(r.Get("minWireVersion").Int32(), 0);
  EXPECT_GE(r.Get("maxWireVersion").Int32(), 17);  // modern drivers' minimum
  EXPECT_EQ(r.Get("topologyVersion").Document().Get("processId").type(), BsonType::kObjectId);
  EXPECT_FALSE(r.Get("setName").ok());  // not a replica set
  Document legacy = Ok(R"({"isMaster": 1, "helloOk": true})");
  EXPECT_TRUE(legacy.Get("ismaster").Bool());
  EXPECT_TRUE(legacy.Get("helloOk").Bool());
  EXPECT_FALSE(legacy.Get("isWritablePrimary").ok());
  EXPECT_EQ(Error(R"({"hello": 1, "loadBalanced": true})"),
            "238 NotImplemented: BSON field 'hello.loadBalanced' is not supported by rockdoc");
}

TEST_F(CommandTest, BuildInfoNamesTheCompatibleVersion) {
  Document r = Ok(R"({"buildInfo": 1})");
  EXPECT_EQ(r.Get("version").String(), "7.0.0");
  EXPECT_EQ(ArrayJson(r.Get("versionArray")), "[7, 0, 0, 0]");
  EXPECT_FALSE(r.Get("rockdocVersion").String().empty());
  EXPECT_EQ(r.Get("bits").Int32(), 64);
}

// ---- Writes ----

// Duplicate keys (issue 33 #7) carry keyPattern and keyValue, as MongoDB
// 4.4+'s, wherever they are reported: an insert's and an update's write
// errors, findAndModify's and $merge's command errors.
TEST_F(CommandTest, DuplicateKeyErrorsCarryKeyPatternAndKeyValue) {
  Ok(R"({"createIndexes": "u", "indexes": [{"key": {"a": 1, "b": -1}, "name": "a_1_b_-1",
         "unique": true}]})");
  Ok(R"({"insert": "u", "documents": [{"_id": 1, "a": 1, "b": "x"}, {"_id": 2, "a": 2, "b": "x"}]})");
  auto first_error = [](const Document& reply) {
    Element errors = reply.Get("writeErrors");
    EXPECT_EQ(errors.type(), BsonType::kArray) << ToJson(reply);
    if (errors.type() != BsonType::kArray) return std::string();
    return ToJson((*errors.Array().begin()).Document());
  };
  constexpr std::string_view kDup =
      R"("code": 11000, "keyPattern": {"a": 1, "b": -1}, "keyValue": {"a": 1, "b": "x"}, )"
      R"("errmsg": "E11000 duplicate key error collection: test.u index: a_1_b_-1 dup key: )"
      R"({ a: 1, b: \"x\" }")";
  EXPECT_EQ(first_error(Ok(R"({"insert": "u", "documents": [{"_id": 3, "a": 1, "b": "x"}]})")),
            R"({"index": 0, )" + std::string(kDup) + "}");
  EXPECT_EQ(first_error(Ok(R"({"update": "u", "updates": [{"q": {"_id": 2},
                                "u": {"$set": {"a": 1}}}]})")),
            R"({"index": 0, )" + std::string(kDup) + "}");
  Document fam = Run(R"({"findAndModify": "u", "query": {"_id": 2}, "update": {"$set": {"a": 1}}})");
  EXPECT_EQ(ToJson(fam), R"({"ok": 0.0, "errmsg": "E11000 duplicate key error collection: )"
                         R"(test.u index: a_1_b_-1 dup key: { a: 1, b: \"x\" }", "code": 11000, )"
                         R"("codeName": "DuplicateKey", "keyPattern": {"a": 1, "b": -1}, )"
                         R"("keyValue": {"a": 1, "b": "x"}})");
  // $merge with whenMatched: "fail": the insert's error, under $merge's words.
  Ok(R"({"insert": "src", "documents": [{"_id": 1, "z": 1}]})");
  Document merge = Run(R"({"aggregate": "src", "cursor": {},
      "pipeline": [{"$merge": {"into": "u", "whenMatched": "fail"}}]})");
  EXPECT_EQ(ToJson(merge),
            R"({"ok": 0.0, "errmsg": "$merge failed due to a DuplicateKey error :: caused by :: )"
            R"(E11000 duplicate key error collection: test.u index: _id_ dup key: { _id: 1 }", )"
            R"("code": 11000, "codeName": "DuplicateKey", "keyPattern": {"_id": 1}, )"
            R"("keyValue": {"_id": 1}})");
}

TEST_F(CommandTest, InsertReportsCountAndWriteErrors) {
  InsertNumbers(3);
  Document dup = Ok(R"({"insert": "c", "documents": [{"_id": 7}, {"_id": 1}, {"_id": 8}]})");
  EXPECT_EQ(dup.Get("n").Int32(), 1);  // ordered: stops at the duplicate
  Element errors = dup.Get("writeErrors");
  ASSERT_EQ(errors.type(), BsonType::kArray);
  ASSERT_EQ(ArrayLength(errors), 1u);
  Document e = Document::AdoptValidated(std::string((*errors.Array().begin()).Document().bytes()));
  EXPECT_EQ(e.Get("index").Int32(), 1);
  EXPECT_EQ(e.Get("code").Int32(), 11000);
  // MongoDB 4.4+'s shape: keyPattern and keyValue beside code and errmsg.
  EXPECT_EQ(ToJson(e),
            R"({"index": 1, "code": 11000, "keyPattern": {"_id": 1}, "keyValue": {"_id": 1}, )"
            R"("errmsg": "E11000 duplicate key error collection: test.c index: _id_ dup key: )"
            R"({ _id: 1 }"})");
  Document unordered =
      Ok(R"({"insert": "c", "ordered": false, "documents": [{"_id": 1}, {"_id": 9}, {"_id": 2}]})");
  EXPECT_EQ(unordered.Get("n").Int32(), 1);
  EXPECT_EQ(ArrayLength(unordered.Get("writeErrors")), 2u);
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 5);  // 3 + {_id: 7} + {_id: 9}
  EXPECT_EQ(Error(R"({"insert": "c"})"),
            "9 FailedToParse: BSON field 'insert.documents' is missing but a required field");
  EXPECT_EQ(Error(R"({"insert": "c", "documents": [1]})"),
            "14 TypeMismatch: BSON field 'insert.0' is the wrong type 'int', expected type "
            "'object'");
}

TEST_F(CommandTest, UpdateReportsMatchedModifiedAndUpserted) {
  InsertNumbers(4);
  Document r = Ok(R"({"update": "c", "updates": [
      {"q": {"_id": {"$lt": 2}}, "u": {"$set": {"x": 1}}, "multi": true},
      {"q": {"_id": 0}, "u": {"$set": {"x": 1}}},
      {"q": {"_id": 3}, "u": {"y": 2}},
      {"q": {"_id": 10}, "u": {"$set": {"z": 1}}, "upsert": true}]})");
  EXPECT_EQ(r.Get("n").Int32(), 5);          // 2 + 1 + 1 matched, 1 upserted
  EXPECT_EQ(r.Get("nModified").Int32(), 3);  // the second changed nothing
  ASSERT_EQ(r.Get("upserted").type(), BsonType::kArray);
  EXPECT_EQ(ArrayJson(r.Get("upserted")), R"([{"index": 3, "_id": 10}])");
  EXPECT_FALSE(r.Get("writeErrors").ok());
  EXPECT_EQ(ToJson(*client_->GetDatabase("test")
                        .GetCollection("c")
                        .FindById(Json(R"({"_id": 3})").Get("_id"))
                        .value()),
            R"({"_id": 3, "y": 2})");
  Document bad = Ok(R"({"update": "c", "updates": [{"q": {}, "u": {"a": 1}, "multi": true}]})");
  EXPECT_EQ(ArrayJson(bad.Get("writeErrors")),
            R"([{"index": 0, "code": 9, "errmsg": "multi update is not supported for )"
            R"(replacement-style update"}])");
  // What mongod refuses when it parses the request fails the whole command
  // (ok: 0) before any statement runs (issue 33 #10): an unknown or
  // mistyped field, a missing q or u, a pipeline stage that is not one.
  EXPECT_EQ(Error(R"({"update": "c", "updates": [{"q": {}, "u": {"$set": {"a": 1}}, "x": 1}]})"),
            "40415 Location40415: BSON field 'update.updates.x' is an unknown field.");
  EXPECT_EQ(Error(R"({"update": "c", "updates": [{"q": {"_id": 3}, "u": {"$set": {"w9": 1}}},
                                                {"q": {}, "u": [{"$bogus": {}}]}]})"),
            "40324 Location40324: Unrecognized pipeline stage name: '$bogus'");
  EXPECT_EQ(Error(R"({"update": "c", "updates": [{"q": {"_id": 3}, "u": {"$set": {"w9": 1}}},
                                                {"q": {}, "u": [{"$set": {"z": {"$bogus": 1}}}]}]})")
                .substr(0, 4),
            "168 ");
  EXPECT_EQ(Error(R"({"update": "c", "updates": [{"q": {"_id": 3}, "u": {"$set": {"w9": 1}}},
                                                {"q": {}}]})"),
            "9 FailedToParse: BSON field 'update.updates.u' is missing but a required field");
  // The first statement did not run.
  EXPECT_EQ(Ok(R"({"count": "c", "query": {"w9": {"$exists": true}}})").Get("n").Int32(), 0);
  // Running a statement finds an unknown update operator: its write error.
  Document op = Ok(R"({"update": "c", "updates": [{"q": {}, "u": {"$bogus": {"a": 1}}}]})");
  EXPECT_EQ(ArrayLength(op.Get("writeErrors")), 1u);
}

// hint on delete statements and findAndModify (issue 33 #9): the index
// that finds the targets, in explain too; one that does not exist is
// MongoDB's BadValue.
TEST_F(CommandTest, DeleteAndFindAndModifyTakeAHint) {
  Ok(R"({"insert": "h", "documents": [{"_id": 1, "a": 1}, {"_id": 2, "a": 2}, {"_id": 3, "a": 3}]})");
  Ok(R"({"createIndexes": "h", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})");
  auto winning = [&](const char* explain) {
    return ToJson(Ok(explain).GetPath("queryPlanner.winningPlan").Document());
  };
  EXPECT_NE(winning(R"({"explain": {"delete": "h", "deletes": [{"q": {"_id": 1}, "limit": 1,
                                                              "hint": "a_1"}]}})")
                .find("\"indexName\": \"a_1\""),
            std::string::npos);
  EXPECT_NE(winning(R"({"explain": {"findAndModify": "h", "query": {"_id": 1}, "remove": true,
                                    "hint": {"a": 1}}})")
                .find("\"indexName\": \"a_1\""),
            std::string::npos);
  EXPECT_NE(winning(R"({"explain": {"findAndModify": "h", "query": {"_id": 1},
                                    "update": {"$set": {"b": 1}}, "hint": "a_1"}})")
                .find("\"indexName\": \"a_1\""),
            std::string::npos);
  EXPECT_EQ(Ok(R"({"delete": "h", "deletes": [{"q": {"_id": 1}, "limit": 1, "hint": {"a": 1}}]})")
                .Get("n")
                .Int32(),
            1);
  Document bad = Ok(R"({"delete": "h", "deletes": [{"q": {"_id": 2}, "limit": 1, "hint": "nope"}]})");
  EXPECT_EQ(ArrayJson(bad.Get("writeErrors")),
            R"([{"index": 0, "code": 2, "errmsg": "hint provided does not correspond to an )"
            R"(existing index"}])");
  Document fam = Ok(R"({"findAndModify": "h", "query": {"_id": 2}, "update": {"$set": {"b": 2}},
                        "new": true, "hint": "a_1"})");
  EXPECT_EQ(ToJson(fam.Get("value").Document()), R"({"_id": 2, "a": 2, "b": 2})");
  fam = Ok(R"({"findAndModify": "h", "query": {"_id": 3}, "remove": true, "hint": {"a": 1}})");
  EXPECT_EQ(ToJson(fam.Get("value").Document()), R"({"_id": 3, "a": 3})");
  EXPECT_EQ(Error(R"({"findAndModify": "h", "query": {"_id": 2}, "remove": true, "hint": "nope"})"),
            "2 BadValue: hint provided does not correspond to an existing index");
}

// let on find, update, delete and findAndModify (issue 33 #9): variables
// for the filter's $expr and an update pipeline's expressions.
TEST_F(CommandTest, LetBindsVariablesForFiltersAndUpdatePipelines) {
  Ok(R"({"insert": "l", "documents": [{"_id": 1, "a": 1}, {"_id": 2, "a": 2}, {"_id": 3, "a": 3}]})");
  Document found = Ok(R"({"find": "l", "filter": {"$expr": {"$eq": ["$a", "$$v"]}},
                          "let": {"v": {"$add": [1, 1]}}})");
  EXPECT_EQ(Batch(found, "firstBatch"), (std::vector<std::string>{R"({"_id": 2, "a": 2})"}));
  Document updated = Ok(R"({"update": "l", "let": {"id": 1, "val": "x"},
      "updates": [{"q": {"$expr": {"$eq": ["$_id", "$$id"]}}, "u": [{"$set": {"b": "$$val"}}]}]})");
  EXPECT_EQ(updated.Get("nModified").Int32(), 1);
  Document fam = Ok(R"({"findAndModify": "l", "let": {"id": 2, "val": "y"}, "new": true,
      "query": {"$expr": {"$eq": ["$_id", "$$id"]}}, "update": [{"$set": {"c": "$$val"}}]})");
  EXPECT_EQ(ToJson(fam.Get("value").Document()), R"({"_id": 2, "a": 2, "c": "y"})");
  Document deleted = Ok(R"({"delete": "l", "let": {"lim": 3},
      "deletes": [{"q": {"$expr": {"$lt": ["$a", "$$lim"]}}, "limit": 0}]})");
  EXPECT_EQ(deleted.Get("n").Int32(), 2);
  EXPECT_EQ(Batch(Ok(R"({"find": "l"})"), "firstBatch"),
            (std::vector<std::string>{R"({"_id": 3, "a": 3})"}));
  // Without the let, the name is undefined: MongoDB's error.
  EXPECT_EQ(Error(R"({"find": "l", "filter": {"$expr": {"$eq": ["$a", "$$v"]}}})").substr(0, 6),
            "17276 ");
}

TEST_F(CommandTest, DeleteHonoursLimit) {
  InsertNumbers(5);
  EXPECT_EQ(Ok(R"({"delete": "c", "deletes": [{"q": {"_id": {"$gte": 0}}, "limit": 1}]})")
                .Get("n")
                .Int32(),
            1);
  EXPECT_EQ(Ok(R"({"delete": "c", "deletes": [{"q": {"_id": {"$gte": 0}}, "limit": 0}]})")
                .Get("n")
                .Int32(),
            4);
  // A malformed statement fails the command before any runs, as mongod's
  // parse of the request.
  EXPECT_EQ(Error(R"({"delete": "c", "deletes": [{"q": {}, "limit": 0}, {"q": {}, "limit": 5}]})"),
            "9 FailedToParse: The limit field in delete objects must be 0 or 1. Got 5");
  EXPECT_EQ(Error(R"({"delete": "c", "deletes": [{"q": {}, "limit": 0}, {"limit": 0}]})"),
            "9 FailedToParse: BSON field 'delete.deletes.q' is missing but a required field");
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 0);
}

// ---- Reads and cursors ----

TEST_F(CommandTest, FindReturnsAFirstBatchAndGetMoreTheRest) {
  InsertNumbers(250);
  Document first = Ok(R"({"find": "c", "sort": {"_id": 1}})");
  EXPECT_EQ(Batch(first, "firstBatch").size(), 101u);  // the default first batch
  EXPECT_EQ(first.Get("cursor").Document().Get("ns").String(), "test.c");
  const int64_t id = CursorId(first);
  ASSERT_NE(id, 0);
  const std::string get_more =
      "{\"getMore\": {\"$numberLong\": \"" + std::to_string(id) + "\"}, \"collection\": \"c\"";
  Document second = Ok(get_more + ", \"batchSize\": 100}");
  std::vector<std::string> batch = Batch(second, "nextBatch");
  ASSERT_EQ(batch.size(), 100u);
  EXPECT_EQ(batch.front(), R"({"_id": 101})");
  EXPECT_EQ(CursorId(second), id);
  Document last = Ok(get_more + "}");
  EXPECT_EQ(Batch(last, "nextBatch").size(), 49u);
  EXPECT_EQ(CursorId(last), 0);  // exhausted: closed
  EXPECT_EQ(Error(get_more + "}"),
            "43 CursorNotFound: cursor id " + std::to_string(id) + " not found");
}

TEST_F(CommandTest, FindOptionsApply) {
  InsertNumbers(20);
  Document r = Ok(R"({"find": "c", "filter": {"_id": {"$gte": 5}}, "sort": {"_id": -1},
                      "projection": {"_id": 1}, "skip": 2, "limit": 3})");
  EXPECT_EQ(Batch(r, "firstBatch"),
            (std::vector<std::string>{R"({"_id": 17})", R"({"_id": 16})", R"({"_id": 15})"}));
  EXPECT_EQ(CursorId(r), 0);
  Document empty = Ok(R"({"find": "c", "batchSize": 0})");
  EXPECT_TRUE(Batch(empty, "firstBatch").empty());
  EXPECT_NE(CursorId(empty), 0);  // the results wait for getMore
  Document single = Ok(R"({"find": "c", "batchSize": 5, "singleBatch": true})");
  EXPECT_EQ(Batch(single, "firstBatch").size(), 5u);
  EXPECT_EQ(CursorId(single), 0);
  Document hinted = Ok(R"({"find": "c", "hint": "_id_", "limit": 1})");
  EXPECT_EQ(Batch(hinted, "firstBatch").size(), 1u);
  EXPECT_EQ(Error(R"({"find": "c", "hint": "nosuch"})").substr(0, 3), "2 B");
}

TEST_F(CommandTest, BatchesStopAt16MiB) {
  const std::string big(5 * 1024 * 1024, 'x');
  Collection c = client_->GetDatabase("test").GetCollection("big");
  for (int i = 0; i < 5; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i);
    b.AppendString("s", big);
    ASSERT_TRUE(c.InsertOne(std::move(b).Build()).ok());
  }
  Document first = Ok(R"({"find": "big"})");
  EXPECT_EQ(Batch(first, "firstBatch").size(), 3u);  // 3 x 5 MiB; a 4th would pass 16 MiB
  const std::string get_more = "{\"getMore\": {\"$numberLong\": \"" +
                               std::to_string(CursorId(first)) + "\"}, \"collection\": \"big\"}";
  Document rest = Ok(get_more);
  EXPECT_EQ(Batch(rest, "nextBatch").size(), 2u);
  EXPECT_EQ(CursorId(rest), 0);
}

TEST_F(CommandTest, KillCursorsReportsWhatItKilled) {
  InsertNumbers(10);
  const int64_t id = CursorId(Ok(R"({"find": "c", "batchSize": 2})"));
  Document r = Ok("{\"killCursors\": \"c\", \"cursors\": [{\"$numberLong\": \"" +
                  std::to_string(id) + "\"}, {\"$numberLong\": \"12345\"}]}");
  EXPECT_EQ(ArrayJson(r.Get("cursorsKilled")), "[" + std::to_string(id) + "]");
  EXPECT_EQ(ArrayJson(r.Get("cursorsNotFound")), "[12345]");
  EXPECT_EQ(ArrayJson(r.Get("cursorsAlive")), "[]");
  EXPECT_EQ(ArrayJson(r.Get("cursorsUnknown")), "[]");
  EXPECT_EQ(Error("{\"getMore\": {\"$numberLong\": \"" + std::to_string(id) +
                  "\"}, \"collection\": \"c\"}")
                .substr(0, 17),
            "43 CursorNotFound");
}

TEST_F(CommandTest, GetMoreOnAnotherNamespaceIsRefused) {
  InsertNumbers(10);
  const int64_t id = CursorId(Ok(R"({"find": "c", "batchSize": 2})"));
  EXPECT_EQ(Error("{\"getMore\": {\"$numberLong\": \"" + std::to_string(id) +
                  "\"}, \"collection\": \"other\"}"),
            "13 Unauthorized: Requested getMore on namespace 'test.other', but cursor belongs "
            "to a different namespace test.c");
  EXPECT_EQ(Error(R"({"getMore": 5, "collection": "c"})"),
            "14 TypeMismatch: BSON field 'getMore.getMore' is the wrong type 'int', expected "
            "type 'long'");
}

TEST(CursorManagerTest, IdleCursorsAreClosed) {
  internal::CursorManager manager(/*idle_timeout_ms=*/50);
  auto keep =
      std::make_unique<internal::CommandCursor>("db", "c", std::vector<Document>{Document()});
  keep->no_timeout = true;
  const int64_t kept = manager.Register(std::move(keep));
  const int64_t id = manager.Register(
      std::make_unique<internal::CommandCursor>("db", "c", std::vector<Document>{Document()}));
  ASSERT_NE(id, 0);
  ASSERT_NE(id, kept);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  auto gone = manager.CheckOut(id, "db.c");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), ErrorCode::kCursorNotFound);
  auto still = manager.CheckOut(kept, "db.c");  // noCursorTimeout
  ASSERT_TRUE(still.ok());
  // Checked out: a second getMore meanwhile is refused.
  auto busy = manager.CheckOut(kept, "db.c");
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), ErrorCode::kOperationFailed);
  manager.CheckIn(kept, std::move(still).value());
  EXPECT_EQ(manager.open_cursors(), 1u);
}

TEST_F(CommandTest, CountAndDistinct) {
  Ok(R"({"insert": "c", "documents": [{"a": 1}, {"a": [1, 2]}, {"a": "x"}, {"b": 1}]})");
  EXPECT_EQ(Ok(R"({"count": "c", "query": {"a": 1}})").Get("n").Int32(), 2);
  EXPECT_EQ(Ok(R"({"count": "c", "limit": -1})").Get("n").Int32(), 1);
  EXPECT_EQ(Ok(R"({"count": "c", "skip": 3})").Get("n").Int32(), 1);
  EXPECT_EQ(Ok(R"({"count": "missing"})").Get("n").Int32(), 0);
  EXPECT_EQ(ArrayJson(Ok(R"({"distinct": "c", "key": "a"})").Get("values")), R"([1, 2, "x"])");
  EXPECT_EQ(ArrayJson(Ok(R"({"distinct": "c", "key": "a", "query": {"a": "x"}})").Get("values")),
            R"(["x"])");
  EXPECT_EQ(Error(R"({"distinct": "c"})"),
            "9 FailedToParse: BSON field 'distinct.key' is missing but a required field");
}

// ---- Catalog ----

TEST_F(CommandTest, CreateListAndDropCollections) {
  Ok(R"({"create": "a"})");
  Ok(R"({"create": "b", "writeConcern": {"w": 1}})");
  EXPECT_EQ(Error(R"({"create": "a"})").substr(0, 19), "48 NamespaceExists:");
  EXPECT_EQ(Error(R"({"create": "z", "timeseries": {"timeField": "t"}})").substr(0, 4), "238 ");
  Document all = Ok(R"({"listCollections": 1})");
  std::vector<std::string> infos = Batch(all, "firstBatch");
  ASSERT_EQ(infos.size(), 2u);
  // info.uuid: the collection's (CollectionUuids below).
  Element uuid = all.Get("cursor").Document().GetPath("firstBatch.0.info.uuid");
  ASSERT_TRUE(uuid.IsBinary());
  EXPECT_EQ(infos[0],
            R"({"name": "a", "type": "collection", "options": {}, "info": {"readOnly": false, )"
            R"("uuid": )" + ValueToJson(uuid) + R"(}, )"
            R"("idIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_"}})");
  EXPECT_EQ(all.Get("cursor").Document().Get("ns").String(), "test.$cmd.listCollections");
  Document names = Ok(R"({"listCollections": 1, "nameOnly": true, "filter": {"name": "b"}})");
  EXPECT_EQ(Batch(names, "firstBatch"),
            (std::vector<std::string>{R"({"name": "b", "type": "collection"})"}));
  Document drop = Ok(R"({"drop": "a"})");
  EXPECT_EQ(drop.Get("nIndexesWas").Int32(), 1);
  EXPECT_EQ(drop.Get("ns").String(), "test.a");
  Ok(R"({"drop": "a"})");  // gone: still ok, as MongoDB 7.0
  Document dropped = Ok(R"({"dropDatabase": 1})");
  EXPECT_EQ(dropped.Get("dropped").String(), "test");
  EXPECT_TRUE(Batch(Ok(R"({"listCollections": 1})"), "firstBatch").empty());
}

// create's options, decoded from one table (command/collection_options.h):
// MongoDB's names, the ones rockdoc lacks refused, the types checked; then
// Database::CreateCollection's checks of the values.
TEST_F(CommandTest, CreateOptionsDecodedFromOneTable) {
  EXPECT_EQ(Error(R"({"create": "c", "bogus": 1})"),
            "40415 Location40415: BSON field 'create.bogus' is an unknown field.");
  // Options MongoDB has and rockdoc lacks: NotImplemented, never ignored.
  for (const char* name : {"autoIndexId", "idIndex", "indexOptionDefaults",
                           "timeseries", "clusteredIndex", "expireAfterSeconds", "encryptedFields",
                           "storageEngine", "temp", "flags"}) {
    EXPECT_EQ(Error(std::string(R"({"create": "c", ")") + name + R"(": 1})"),
              std::string("238 NotImplemented: The createCollection option '") + name +
                  "' is not supported by rockdoc");
  }
  auto code = [&](std::string_view fields) {
    return Error(std::string(R"({"create": "c", )") + std::string(fields) + "}").substr(0, 3);
  };
  EXPECT_EQ(code(R"("capped": true, "size": "x")"), "14 ");
  EXPECT_EQ(Error(R"({"create": "c", "capped": true, "size": "x"})"),
            "14 TypeMismatch: BSON field 'create.size' is the wrong type 'string', expected types "
            "'[long, int, decimal, double]'");
  EXPECT_EQ(code(R"("capped": "yes")"), "14 ");
  EXPECT_EQ(code(R"("validator": 1)"), "14 ");
  EXPECT_EQ(code(R"("viewOn": 1)"), "14 ");
  EXPECT_EQ(code(R"("viewOn": "a", "pipeline": [1])"), "14 ");
  EXPECT_EQ(code(R"("validationLevel": "x")"), "2 B");
  EXPECT_EQ(code(R"("validationAction": "x")"), "2 B");
  // The values, checked below the command for every caller.
  EXPECT_EQ(code(R"("capped": true)"), "72 ");
  EXPECT_EQ(code(R"("size": 100)"), "72 ");
  EXPECT_EQ(code(R"("capped": true, "size": 0)"), "72 ");
  EXPECT_EQ(code(R"("pipeline": [])"), "72 ");
  EXPECT_EQ(code(R"("viewOn": "")"), "2 B");
  EXPECT_EQ(code(R"("viewOn": "a", "capped": true, "size": 1)"), "72 ");
  Ok(R"({"create": "v", "comment": "fine", "viewOn": "a", "pipeline": []})");
  // A number for capped, and a fractional size, as MongoDB reads them.
  Ok(R"({"create": "capped", "capped": 1, "size": 4096.7, "max": 5})");
  Document listed = Ok(R"({"listCollections": 1, "filter": {"name": "capped"}})");
  EXPECT_EQ(ToJson(listed.Get("cursor").Document().GetPath("firstBatch.0.options").Document()),
            R"({"capped": true, "size": 4096, "max": 5})");
}

// Every collection has a UUID (listCollections' info.uuid, binary subtype
// 4): random (version 4) at creation, kept by a rename and by reopening, a
// caller's own with CreateCollectionWithUuid; a view has none.
TEST_F(CommandTest, CollectionUuids) {
  auto uuids = [&]() {
    std::map<std::string, std::string> out;
    Document r = Ok(R"({"listCollections": 1})");
    for (Element e : r.Get("cursor").Document().Get("firstBatch").Array()) {
      Element u = e.Document().GetPath("info.uuid");
      out[std::string(e.Document().Get("name").String())] =
          u.ok() ? std::string(u.Binary().data) : std::string("none");
      if (u.ok()) EXPECT_EQ(u.Binary().subtype, BinarySubtype::kUuid);
    }
    return out;
  };
  Ok(R"({"create": "a"})");
  Ok(R"({"insert": "b", "documents": [{}]})");  // created by its first insert
  Ok(R"({"create": "v", "viewOn": "a", "pipeline": []})");
  auto first = uuids();
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first["a"].size(), 16u);
  EXPECT_EQ(first["b"].size(), 16u);
  EXPECT_NE(first["a"], first["b"]);
  EXPECT_EQ(static_cast<unsigned char>(first["a"][6]) >> 4, 4u);       // version 4
  EXPECT_EQ(static_cast<unsigned char>(first["a"][8]) & 0xc0, 0x80u);  // RFC variant
  EXPECT_EQ(first["v"], "none");
  Ok(R"({"renameCollection": "test.a", "to": "test.c"})", "admin");
  ASSERT_TRUE(client_->Close().ok());
  client_ = std::move(Client::Open(dir_.Sub("db"))).value();
  auto later = uuids();
  EXPECT_EQ(later["c"], first["a"]);
  EXPECT_EQ(later["b"], first["b"]);
  EXPECT_EQ(later.count("a"), 0u);
  // A given UUID (restore --preserveUUID).
  Database db = client_->GetDatabase("test");
  const std::string mine = "0123456789abcdef";
  CreateCollectionOptions capped;
  capped.capped = true;
  capped.size = 4096;
  ASSERT_TRUE(db.CreateCollectionWithUuid("d", capped, mine).ok());
  EXPECT_EQ(uuids()["d"], mine);
  auto listed = db.ListCollections();
  ASSERT_TRUE(listed.ok());
  for (const auto& info : *listed) {
    if (info.name == "d") EXPECT_EQ(info.uuid, mine);
    if (info.name == "v") EXPECT_TRUE(info.uuid.empty());
  }
  EXPECT_EQ(db.CreateCollectionWithUuid("e", CreateCollectionOptions(), "short").code(),
            ErrorCode::kBadValue);
  CreateCollectionOptions view;
  view.view_on = "c";
  EXPECT_EQ(db.CreateCollectionWithUuid("e", view, mine).code(), ErrorCode::kBadValue);
  // No command field sets it.
  EXPECT_EQ(Error(R"({"create": "e", "uuid": 1})").substr(0, 6), "40415 ");
}

TEST_F(CommandTest, CreateListAndDropIndexes) {
  Document created = Ok(R"({"createIndexes": "c", "indexes": [
      {"key": {"a": 1}, "name": "a_1"}, {"key": {"b": -1}, "name": "b", "unique": true}]})");
  EXPECT_EQ(created.Get("numIndexesBefore").Int32(), 1);
  EXPECT_EQ(created.Get("numIndexesAfter").Int32(), 3);
  EXPECT_TRUE(created.Get("createdCollectionAutomatically").Bool());
  Document again = Ok(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})");
  EXPECT_EQ(again.Get("note").String(), "all indexes already exist");
  EXPECT_FALSE(again.Get("createdCollectionAutomatically").Bool());
  EXPECT_EQ(Error(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}}]})"),
            "9 FailedToParse: The 'name' field is a required property of an index specification");
  Document list = Ok(R"({"listIndexes": "c"})");
  EXPECT_EQ(
      Batch(list, "firstBatch"),
      (std::vector<std::string>{R"({"v": 2, "key": {"_id": 1}, "name": "_id_"})",
                                R"({"v": 2, "key": {"a": 1}, "name": "a_1"})",
                                R"({"v": 2, "key": {"b": -1}, "name": "b", "unique": true})"}));
  // background: no effect, kept in the specification as MongoDB keeps it
  // (issue 33 #9), across a restart too.
  Ok(R"({"createIndexes": "c", "indexes": [{"key": {"g": 1}, "name": "g_1", "background": true},
                                          {"key": {"h": 1}, "name": "h_1", "background": 0}]})");
  const std::vector<std::string> listed = {
      R"({"v": 2, "key": {"g": 1}, "name": "g_1", "background": true})",
      R"({"v": 2, "key": {"h": 1}, "name": "h_1", "background": false})"};
  for (int round = 0; round < 2; ++round) {
    std::vector<std::string> all = Batch(Ok(R"({"listIndexes": "c"})"), "firstBatch");
    ASSERT_EQ(all.size(), 5u);
    EXPECT_EQ(std::vector<std::string>(all.begin() + 3, all.end()), listed);
    client_.reset();
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Ok(R"({"dropIndexes": "c", "index": ["g_1", "h_1"]})");
  Document one = Ok(R"({"dropIndexes": "c", "index": "b"})");
  EXPECT_EQ(one.Get("nIndexesWas").Int32(), 3);
  Document rest = Ok(R"({"dropIndexes": "c", "index": "*"})");
  EXPECT_EQ(rest.Get("nIndexesWas").Int32(), 2);
  EXPECT_EQ(Batch(Ok(R"({"listIndexes": "c"})"), "firstBatch").size(), 1u);
  EXPECT_EQ(Error(R"({"listIndexes": "missing"})").substr(0, 21), "26 NamespaceNotFound:");
}

TEST_F(CommandTest, FindAndModifyReportsLastErrorObject) {
  InsertNumbers(3);
  Document before =
      Ok(R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$set": {"a": 1}}})");
  EXPECT_EQ(ToJson(before.Get("lastErrorObject").Document()),
            R"({"n": 1, "updatedExisting": true})");
  EXPECT_EQ(ToJson(before.Get("value").Document()), R"({"_id": 1})");
  Document after = Ok(R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"a": 1}},
                          "new": true, "fields": {"a": 1, "_id": 0}})");
  EXPECT_EQ(ToJson(after.Get("value").Document()), R"({"a": 2})");
  Document upserted =
      Ok(R"({"findAndModify": "c", "query": {"_id": 9}, "update": {"$set": {"b": 1}},
                             "upsert": true})");
  EXPECT_EQ(ToJson(upserted.Get("lastErrorObject").Document()),
            R"({"n": 1, "updatedExisting": false, "upserted": 9})");
  EXPECT_EQ(upserted.Get("value").type(), BsonType::kNull);
  Document none =
      Ok(R"({"findAndModify": "c", "query": {"_id": 99}, "update": {"$set": {"b": 1}}})");
  EXPECT_EQ(ToJson(none.Get("lastErrorObject").Document()),
            R"({"n": 0, "updatedExisting": false})");
  Document removed = Ok(R"({"findAndModify": "c", "query": {"_id": 0}, "remove": true})");
  EXPECT_EQ(ToJson(removed.Get("lastErrorObject").Document()), R"({"n": 1})");
  EXPECT_EQ(ToJson(removed.Get("value").Document()), R"({"_id": 0})");
  EXPECT_EQ(Error(R"({"findAndModify": "c", "query": {}})"),
            "9 FailedToParse: Either an update or remove=true must be specified");
  EXPECT_EQ(Error(R"({"findAndModify": "c", "remove": true, "update": {}})"),
            "9 FailedToParse: Cannot specify both an update and remove=true");
  EXPECT_EQ(Error(R"({"findAndModify": "c", "remove": true, "new": true})"),
            "9 FailedToParse: Cannot specify both new=true and remove=true; 'remove' always "
            "returns the deleted document");
}

TEST_F(CommandTest, ExplainWrapsTheCommandsItExplains) {
  InsertNumbers(10);
  Ok(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})");
  Document find =
      Ok(R"({"explain": {"find": "c", "filter": {"a": 1}}, "verbosity": "queryPlanner"})");
  EXPECT_EQ(find.Get("queryPlanner").Document().Get("namespace").String(), "test.c");
  EXPECT_FALSE(find.Get("executionStats").ok());
  Document count = Ok(R"({"explain": {"count": "c", "query": {"a": 1}}})");  // allPlansExecution
  EXPECT_TRUE(count.Get("executionStats").ok()) << ToJson(count);
  Document update =
      Ok(R"({"explain": {"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"x": 1}}}]},
                           "verbosity": "executionStats"})");
  EXPECT_NE(ToJson(update).find("\"UPDATE\""), std::string::npos) << ToJson(update);
  EXPECT_FALSE(
      client_->GetDatabase("test").GetCollection("c").FindOne(Json(R"({"x": 1})"))->has_value());
  Document del = Ok(R"({"explain": {"delete": "c", "deletes": [{"q": {}, "limit": 0}]}})");
  EXPECT_NE(ToJson(del).find("\"DELETE\""), std::string::npos);
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 10);  // explain deletes nothing
  Document fam = Ok(R"({"explain": {"findAndModify": "c", "query": {"_id": 2}, "remove": true}})");
  EXPECT_NE(ToJson(fam).find("\"DELETE\""), std::string::npos);
  // A distinct's plan is its query's: an index on the filter's field.
  Document distinct = Ok(R"({"explain": {"distinct": "c", "key": "_id", "query": {"a": 1}},
                              "verbosity": "executionStats"})");
  EXPECT_NE(ToJson(distinct).find("\"IXSCAN\""), std::string::npos) << ToJson(distinct);
  EXPECT_EQ(Error(R"({"explain": {"distinct": "c", "key": "$a"}})"),
            "2 BadValue: distinct: the key must not start with '$'");
  EXPECT_EQ(Error(R"({"explain": {"distinct": "c"}})"),
            "9 FailedToParse: BSON field 'distinct.key' is missing but a required field");
  EXPECT_EQ(Error(R"({"explain": {"find": "c", "bogus": 1}})"),
            "40415 Location40415: BSON field 'find.bogus' is an unknown field.");
  EXPECT_EQ(Error(R"({"explain": {"ping": 1}})"),
            "59 CommandNotFound: Explain failed due to unknown command: ping");
  EXPECT_EQ(Error(R"({"explain": {"find": "c"}, "verbosity": "loud"})"),
            "2 BadValue: Enumeration value 'loud' for field 'explain.verbosity' is not a valid "
            "value.");
  EXPECT_EQ(
      Error(
          R"({"explain": {"delete": "c", "deletes": [{"q": {}, "limit": 0}, {"q": {}, "limit": 0}]}})"),
      "16 InvalidLength: explained delete batches must be of size 1");
}

TEST_F(CommandTest, CollModRenameAndValidate) {
  Ok(R"({"createIndexes": "c", "indexes": [{"key": {"t": 1}, "name": "t_1", "expireAfterSeconds": 100}]})");
  Document mod = Ok(R"({"collMod": "c", "index": {"name": "t_1", "expireAfterSeconds": 50}})");
  EXPECT_EQ(mod.Get("expireAfterSeconds_old").NumberAsDouble(), 100);
  EXPECT_EQ(mod.Get("expireAfterSeconds_new").NumberAsDouble(), 50);
  EXPECT_EQ(Error(R"({"collMod": "c", "timeseries": {}})").substr(0, 4), "238 ");
  // One "ok" in the reply, the dispatcher's.
  Document validator = Ok(R"({"collMod": "c", "validator": {}})");
  EXPECT_EQ(ToJson(validator), R"({"ok": 1.0})");
  EXPECT_EQ(Error(R"({"collMod": "missing", "index": {"name": "x", "expireAfterSeconds": 1}})")
                .substr(0, 21),
            "26 NamespaceNotFound:");
  InsertNumbers(4);
  EXPECT_EQ(Error(R"({"renameCollection": "test.c", "to": "test.d"})").substr(0, 15),
            "13 Unauthorized");  // admin only
  Ok(R"({"renameCollection": "test.c", "to": "test.d"})", "admin");
  EXPECT_EQ(Ok(R"({"count": "d"})").Get("n").Int32(), 4);
  EXPECT_EQ(Error(R"({"renameCollection": "test.d", "to": "other.d"})", "admin"),
            "238 NotImplemented: renameCollection across databases is not supported by rockdoc");
  Document v = Ok(R"({"validate": "d", "full": true})");
  EXPECT_EQ(v.Get("ns").String(), "test.d");
  EXPECT_EQ(v.Get("nrecords").Int32(), 4);
  EXPECT_EQ(v.Get("nIndexes").Int32(), 2);
  EXPECT_TRUE(v.Get("valid").Bool());
  EXPECT_EQ(ArrayJson(v.Get("errors")), "[]");
  EXPECT_EQ(Error(R"({"validate": "d", "repair": true})").substr(0, 4), "238 ");
}

TEST_F(CommandTest, StatsReportRealSizes) {
  Collection c = client_->GetDatabase("test").GetCollection("c");
  const std::string text(200, 'x');
  int64_t bytes = 0;
  for (int i = 0; i < 500; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i);
    b.AppendString("s", text);
    b.AppendInt32("k", i % 50);
    Document d = std::move(b).Build();
    bytes += static_cast<int64_t>(d.size());
    ASSERT_TRUE(c.InsertOne(d).ok());
  }
  ASSERT_TRUE(c.CreateIndex(Json(R"({"k": 1})")).ok());
  // Storage sizes are RocksDB's estimates, which for memtables may be 0 on
  // small ranges: reopening flushes them into table files first.
  ASSERT_TRUE(client_->Close().ok());
  client_ = std::move(Client::Open(dir_.Sub("db"))).value();
  Document s = Ok(R"({"collStats": "c"})");
  EXPECT_EQ(s.Get("ns").String(), "test.c");
  EXPECT_EQ(s.Get("count").type(), BsonType::kInt32);  // appendNumber: int32 when it fits
  EXPECT_EQ(s.Get("count").NumberAsDouble(), 500.0);
  EXPECT_EQ(s.Get("size").NumberAsDouble(),
            static_cast<double>(bytes));  // the documents' BSON bytes, exactly
  EXPECT_EQ(s.Get("avgObjSize").NumberAsDouble(), static_cast<double>(bytes / 500));
  EXPECT_GT(s.Get("storageSize").NumberAsDouble(), 0);
  EXPECT_EQ(s.Get("nindexes").NumberAsDouble(), 2.0);
  DocumentView sizes = s.Get("indexSizes").Document();
  EXPECT_EQ(sizes.Get("_id_").NumberAsDouble(), 0.0);  // clustered: no storage of its own
  EXPECT_GT(sizes.Get("k_1").NumberAsDouble(), 0);
  EXPECT_EQ(s.Get("totalIndexSize").NumberAsDouble(), sizes.Get("k_1").NumberAsDouble());
  EXPECT_EQ(s.Get("totalSize").NumberAsDouble(),
            s.Get("storageSize").NumberAsDouble() + s.Get("totalIndexSize").NumberAsDouble());
  Document scaled = Ok(R"({"collStats": "c", "scale": 1024})");
  EXPECT_EQ(scaled.Get("size").NumberAsDouble(), static_cast<double>(bytes / 1024));
  EXPECT_EQ(scaled.Get("scaleFactor").NumberAsDouble(), 1024.0);
  EXPECT_EQ(Error(R"({"collStats": "c", "scale": 0})").substr(0, 11), "2 BadValue:");
  EXPECT_EQ(Error(R"({"collStats": "missing"})").substr(0, 21), "26 NamespaceNotFound:");

  Document db = Ok(R"({"dbStats": 1})");
  EXPECT_EQ(db.Get("db").String(), "test");
  EXPECT_EQ(db.Get("collections").NumberAsDouble(), 1.0);
  EXPECT_EQ(db.Get("objects").NumberAsDouble(), 500.0);
  EXPECT_EQ(db.Get("dataSize").NumberAsDouble(), static_cast<double>(bytes));
  EXPECT_EQ(db.Get("indexes").NumberAsDouble(), 2.0);
  EXPECT_GT(db.Get("fsTotalSize").NumberAsDouble(), 0);
  EXPECT_FALSE(db.Get("freeStorageSize").ok());
  Document free = Ok(R"({"dbStats": 1, "freeStorage": 1})");
  EXPECT_EQ(free.Get("freeStorageSize").NumberAsDouble(), 0.0);
  EXPECT_EQ(free.Get("totalFreeStorageSize").NumberAsDouble(), 0.0);

  // admin, config and local are listed as mongod lists them; here they
  // hold nothing.
  Document list = Ok(R"({"listDatabases": 1})", "admin");
  ASSERT_EQ(ArrayLength(list.Get("databases")), 4u);
  std::vector<DocumentView> entries;
  for (Element e : list.Get("databases").Array()) entries.push_back(e.Document());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(entries[i].Get("sizeOnDisk").NumberAsDouble(), 0.0) << ToJson(list);
    EXPECT_TRUE(entries[i].Get("empty").Bool()) << ToJson(list);
  }
  DocumentView entry = entries[3];
  EXPECT_EQ(entry.Get("name").String(), "test");
  EXPECT_EQ(entry.Get("sizeOnDisk").NumberAsDouble(), s.Get("totalSize").NumberAsDouble());
  EXPECT_FALSE(entry.Get("empty").Bool());
  EXPECT_EQ(list.Get("totalSize").NumberAsDouble(), entry.Get("sizeOnDisk").NumberAsDouble());
  EXPECT_EQ(ArrayJson(Ok(R"({"listDatabases": 1, "nameOnly": true})", "admin").Get("databases")),
            R"([{"name": "admin"}, {"name": "config"}, {"name": "local"}, {"name": "test"}])");
  EXPECT_EQ(
      ArrayLength(
          Ok(R"({"listDatabases": 1, "filter": {"name": "other"}})", "admin").Get("databases")),
      0u);
  EXPECT_EQ(Error(R"({"listDatabases": 1})"),
            "13 Unauthorized: listDatabases may only be run against the admin database.");
}

TEST_F(CommandTest, ServerStatusAndHostInfo) {
  Document s = Ok(R"({"serverStatus": 1, "repl": 0, "metrics": 0})");
  EXPECT_EQ(s.Get("process").String(), "rockdoc");
  EXPECT_EQ(s.Get("version").String(), "7.0.0");
  EXPECT_EQ(s.Get("pid").type(), BsonType::kInt64);
  EXPECT_EQ(s.Get("localTime").type(), BsonType::kDateTime);
  EXPECT_EQ(s.Get("storageEngine").Document().Get("name").String(), "rocksdb");
  EXPECT_EQ(Error(R"({"serverStatus": 1, "repl": "x"})").substr(0, 15), "14 TypeMismatch");
  Document h = Ok(R"({"hostInfo": 1})");
  EXPECT_GT(h.Get("system").Document().Get("numCores").Int32(), 0);
  EXPECT_GT(h.Get("system").Document().Get("memSizeMB").Int64(), 0);
  EXPECT_EQ(h.Get("os").Document().Get("type").String(), "Linux");
}

// ---- Sessions and transactions ----

// A command with the session fields of session `id` (a UUID of that byte).
Document WithSession(std::string_view json, uint8_t id, std::optional<int64_t> txn = {},
                     bool start = false) {
  BsonBuilder b;
  for (Element e : Json(json)) b.AppendElement(e);
  b.OpenDocument("lsid");
  b.AppendBinary("id", BinarySubtype::kUuid, std::string(16, static_cast<char>(id)));
  b.Close();
  if (txn) {
    b.AppendInt64("txnNumber", *txn);
    b.AppendBool("autocommit", false);
    if (start) b.AppendBool("startTransaction", true);
  }
  return std::move(b).Build();
}

// A retryable write (txnNumber without autocommit) runs update and delete
// statements one by one: every statement is still checked before the first
// runs, so a malformed one fails the command with nothing applied (issue
// 33 #10).
TEST_F(CommandTest, RetryableWritesCheckEveryStatementBeforeTheFirstRuns) {
  InsertNumbers(3);
  Document r = client_->RunCommand(
      "test", WithSession(R"({"update": "c", "txnNumber": 1, "updates": [
          {"q": {"_id": {"$gte": 0}}, "u": {"$set": {"w8": 1}}, "multi": true},
          {"q": {}, "u": [{"$bogus": {}}]}]})", 5));
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 0.0) << ToJson(r);
  EXPECT_EQ(r.Get("code").Int32(), 40324) << ToJson(r);
  EXPECT_EQ(Ok(R"({"count": "c", "query": {"w8": 1}})").Get("n").Int32(), 0);
  r = client_->RunCommand(
      "test", WithSession(R"({"delete": "c", "txnNumber": 2, "deletes": [
          {"q": {}, "limit": 0}, {"q": {}, "limit": 5}]})", 5));
  EXPECT_EQ(r.Get("code").Int32(), 9) << ToJson(r);
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 3);
}

TEST_F(CommandTest, TransactionsRunOverCommands) {
  auto run = [&](const Document& cmd, std::string_view db = "test") {
    return client_->RunCommand(db, cmd);
  };
  auto ok = [](const Document& r) { return r.Get("ok").NumberAsDouble() == 1; };
  Document r = run(WithSession(R"({"insert": "c", "documents": [{"_id": 1}]})", 1, 1, true));
  ASSERT_TRUE(ok(r)) << ToJson(r);
  ASSERT_TRUE(ok(run(WithSession(R"({"insert": "c", "documents": [{"_id": 2}]})", 1, 1))));
  // Outside the transaction nothing is visible yet; inside, both are.
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 0);
  r = run(WithSession(R"({"find": "c"})", 1, 1));
  EXPECT_EQ(Batch(r, "firstBatch").size(), 2u) << ToJson(r);
  r = run(WithSession(R"({"commitTransaction": 1})", 1, 1), "admin");
  ASSERT_TRUE(ok(r)) << ToJson(r);
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 2);
  // A retried commit of the same transaction succeeds.
  EXPECT_TRUE(ok(run(WithSession(R"({"commitTransaction": 1})", 1, 1), "admin")));

  // Abort discards.
  ASSERT_TRUE(ok(run(WithSession(R"({"insert": "c", "documents": [{"_id": 3}]})", 1, 2, true))));
  ASSERT_TRUE(ok(run(WithSession(R"({"abortTransaction": 1})", 1, 2), "admin")));
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 2);

  // The drivers' numbering rules.
  auto error = [&](const Document& cmd, std::string_view db = "test") {
    Document e = run(cmd, db);
    return std::to_string(e.Get("code").Int32()) + " " + std::string(e.Get("codeName").String());
  };
  EXPECT_EQ(error(WithSession(R"({"find": "c"})", 1, 1)), "225 Location225");  // too old
  EXPECT_EQ(error(WithSession(R"({"find": "c"})", 1, 7)), "251 NoSuchTransaction");
  EXPECT_EQ(error(WithSession(R"({"commitTransaction": 1})", 1, 2)), "13 Unauthorized");
  BsonBuilder autocommit;
  for (Element e : WithSession(R"({"find": "c", "txnNumber": 9, "autocommit": true})", 1)) {
    autocommit.AppendElement(e);
  }
  EXPECT_EQ(error(std::move(autocommit).Build()), "72 InvalidOptions");
  EXPECT_EQ(error(Json(R"({"find": "c", "txnNumber": 3, "autocommit": false})")),
            "72 InvalidOptions");  // no lsid
  BsonBuilder retryable;
  for (Element e : WithSession(R"({"insert": "c", "documents": [{}], "txnNumber": 4})", 1)) {
    retryable.AppendElement(e);
  }
  // A retryable write (tests/retryable_writes_test.cc): a new number is fine.
  EXPECT_EQ(run(std::move(retryable).Build()).Get("n").Int32(), 1);
}

TEST_F(CommandTest, ConflictingTransactionsGetATransientError) {
  InsertNumbers(1);
  ASSERT_EQ(client_
                ->RunCommand("test", WithSession(R"({"update": "c", "updates": [
      {"q": {"_id": 0}, "u": {"$set": {"by": 1}}}]})",
                                                 1, 1, true))
                .Get("ok")
                .NumberAsDouble(),
            1);
  Document second = client_->RunCommand("test", WithSession(R"({"update": "c", "updates": [
      {"q": {"_id": 0}, "u": {"$set": {"by": 2}}}]})",
                                                            2, 1, true));
  EXPECT_EQ(second.Get("ok").NumberAsDouble(), 0) << ToJson(second);
  EXPECT_EQ(second.Get("code").Int32(), 112);
  EXPECT_EQ(ArrayJson(second.Get("errorLabels")), R"(["TransientTransactionError"])");
  EXPECT_EQ(client_->RunCommand("admin", WithSession(R"({"commitTransaction": 1})", 1, 1))
                .Get("ok")
                .NumberAsDouble(),
            1);
  EXPECT_EQ(ToJson(*client_->GetDatabase("test").GetCollection("c").FindOne(Document()).value()),
            R"({"_id": 0, "by": 1})");
}

TEST_F(CommandTest, EndSessionsAbortsTheirTransactions) {
  ASSERT_EQ(client_
                ->RunCommand("test", WithSession(R"({"insert": "c", "documents": [{"_id": 1}]})", 3,
                                                 1, true))
                .Get("ok")
                .NumberAsDouble(),
            1);
  BsonBuilder end;
  end.OpenArray("endSessions");
  end.OpenDocument("");
  end.AppendBinary("id", BinarySubtype::kUuid, std::string(16, '\x03'));
  end.Close();
  end.Close();
  Document r = client_->RunCommand("admin", std::move(end).Build());
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 0);
  // The lsid starts a new session: the old transaction is gone.
  Document late = client_->RunCommand("admin", WithSession(R"({"commitTransaction": 1})", 3, 1));
  EXPECT_EQ(late.Get("ok").NumberAsDouble(), 0);
  EXPECT_EQ(Error(R"({"endSessions": [{"id": 1}]})").substr(0, 11), "2 BadValue:");
}

// Issue #33.2: a command MongoDB does not run in a transaction is refused
// in one (263), by the dispatcher's table, before it does anything:
// renameCollection used to run outside the transaction and survive its
// abort.
TEST_F(CommandTest, CommandsNotAllowedInATransactionAreRefused) {
  InsertNumbers(1);
  auto run = [&](const Document& cmd, std::string_view db = "test") {
    return client_->RunCommand(db, cmd);
  };
  auto error = [&](const Document& cmd, std::string_view db = "test") {
    Document e = run(cmd, db);
    if (e.Get("ok").NumberAsDouble() == 1) return std::string("ok");
    return std::to_string(e.Get("code").Int32()) + " " + std::string(e.Get("errmsg").String());
  };
  ASSERT_EQ(error(WithSession(R"({"insert": "c", "documents": [{"_id": 100}]})", 5, 1, true)), "ok");
  EXPECT_EQ(error(WithSession(R"({"renameCollection": "test.c", "to": "test.d"})", 5, 1), "admin"),
            "263 Cannot run 'renameCollection' in a multi-document transaction.");
  for (const char* command : {R"({"drop": "c"})", R"({"count": "c"})", R"({"listCollections": 1})",
                              R"({"collMod": "c"})", R"({"dropIndexes": "c", "index": "*"})",
                              R"({"explain": {"find": "c"}})", R"({"dbStats": 1})",
                              R"({"validate": "c"})", R"({"dropDatabase": 1})", R"({"ping": 1})"}) {
    EXPECT_EQ(error(WithSession(command, 5, 1)).substr(0, 4), "263 ") << command;
  }
  // Nothing ran: after the abort the collection keeps its name and its
  // document, without the transaction's insert.
  ASSERT_EQ(error(WithSession(R"({"abortTransaction": 1})", 5, 1), "admin"), "ok");
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 1);
  EXPECT_EQ(Ok(R"({"count": "d"})").Get("n").Int32(), 0);
  // Outside a transaction the same session renames.
  EXPECT_EQ(error(WithSession(R"({"renameCollection": "test.c", "to": "test.d"})", 5), "admin"), "ok");
  EXPECT_EQ(Ok(R"({"count": "d"})").Get("n").Int32(), 1);
}

// Concerns in a transaction (MongoDB's rules): the first command may give a
// readConcern of a transaction's levels, the others none; only the commit
// and abort take a writeConcern.
TEST_F(CommandTest, ConcernsInATransactionFollowMongoDBsRules) {
  auto error = [&](const Document& cmd, std::string_view db = "test") {
    Document e = client_->RunCommand(db, cmd);
    if (e.Get("ok").NumberAsDouble() == 1) return std::string("ok");
    return std::to_string(e.Get("code").Int32()) + " " + std::string(e.Get("codeName").String());
  };
  EXPECT_EQ(error(WithSession(R"({"find": "c", "readConcern": {"level": "linearizable"}})", 4, 1,
                              true)),
            "72 InvalidOptions");
  EXPECT_EQ(
      error(WithSession(R"({"find": "c", "readConcern": {"level": "snapshot"}})", 4, 2, true)),
      "ok");
  EXPECT_EQ(error(WithSession(R"({"find": "c", "readConcern": {"level": "local"}})", 4, 2)),
            "72 InvalidOptions");
  EXPECT_EQ(error(WithSession(R"({"insert": "c", "documents": [{"_id": 1}],
                                  "writeConcern": {"w": 1}})",
                              4, 2)),
            "72 InvalidOptions");
  EXPECT_EQ(error(WithSession(R"({"insert": "c", "documents": [{"_id": 1}]})", 4, 2)), "ok");
  EXPECT_EQ(
      error(WithSession(R"({"commitTransaction": 1, "writeConcern": {"w": "majority"}})", 4, 2),
            "admin"),
      "ok");
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 1);
  // Outside a transaction, "snapshot" is for reads.
  EXPECT_EQ(error(Json(R"({"insert": "c", "documents": [{}], "readConcern": {"level": "snapshot"}})")),
            "72 InvalidOptions");
  EXPECT_EQ(error(Json(R"({"find": "c", "readConcern": {"level": "snapshot"}})")), "ok");
}

// A session's snapshot reads (readConcern snapshot, no transaction) all see
// the point of its first one; other sessions and plain reads see the writes.
TEST_F(CommandTest, SnapshotReadsOfASessionSeeOnePointInTime) {
  InsertNumbers(2);
  auto count = [&](uint8_t session) {
    Document r = client_->RunCommand(
        "test", WithSession(R"({"count": "c", "readConcern": {"level": "snapshot"}})", session));
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
    return r.Get("n").Int32();
  };
  EXPECT_EQ(count(5), 2);
  Ok(R"({"insert": "c", "documents": [{"_id": 100}]})");
  EXPECT_EQ(count(5), 2);
  Document found = client_->RunCommand(
      "test", WithSession(R"({"find": "c", "readConcern": {"level": "snapshot"}})", 5));
  EXPECT_EQ(Batch(found, "firstBatch").size(), 2u) << ToJson(found);
  EXPECT_EQ(count(6), 3);  // another session's first snapshot is later
  EXPECT_EQ(Ok(R"({"count": "c"})").Get("n").Int32(), 3);
}

// ---- Issue #33.8: what drivers' harnesses and admin tools send ----

TEST_F(CommandTest, GetParameterAnswersAsMongod) {
  EXPECT_EQ(ToJson(Ok(R"({"getParameter": 1, "cursorTimeoutMillis": 1, "comment": "x"})", "admin")),
            R"({"cursorTimeoutMillis": 600000, "ok": 1.0})");
  Document all = Ok(R"({"getParameter": "*"})", "admin");
  EXPECT_EQ(ToJson(all.Get("featureCompatibilityVersion").Document()), R"({"version": "7.0"})");
  EXPECT_EQ(all.Get("localLogicalSessionTimeoutMinutes").NumberAsDouble(), 30);
  EXPECT_EQ(all.Get("transactionLifetimeLimitSeconds").NumberAsDouble(), 60);
  EXPECT_EQ(all.Get("internalQueryMaxBlockingSortMemoryUsageBytes").NumberAsDouble(), 104857600);
  EXPECT_EQ(ToJson(Ok(R"({"getParameter": {"showDetails": true}, "ttlMonitorSleepSecs": 1})",
                      "admin")),
            R"({"ttlMonitorSleepSecs": {"value": 60, "settableAtRuntime": false, )"
            R"("settableAtStartup": true}, "ok": 1.0})");
  EXPECT_EQ(Ok(R"({"getParameter": {"allParameters": true}})", "admin").Get("requireApiVersion").Bool(),
            false);
  // Names it does not have select nothing; nothing selected is the error.
  EXPECT_EQ(ToJson(Ok(R"({"getParameter": 1, "noSuch": 1, "cursorTimeoutMillis": 1})", "admin")),
            R"({"cursorTimeoutMillis": 600000, "ok": 1.0})");
  EXPECT_EQ(Error(R"({"getParameter": 1, "noSuch": 1})", "admin"),
            "72 InvalidOptions: no option found to get");
  EXPECT_EQ(Error(R"({"getParameter": {"bogus": true}})", "admin").substr(0, 5), "40415");
  EXPECT_EQ(Error(R"({"getParameter": 1, "cursorTimeoutMillis": 1})"),
            "13 Unauthorized: getParameter may only be run against the admin database.");
}

// The stream itself: tests/change_stream_test.cc.
TEST_F(CommandTest, ChangeStreamsOpenFirstInAnAggregate) {
  EXPECT_EQ(
      Error(
          R"({"aggregate": "c", "pipeline": [{"$match": {}}, {"$changeStream": {}}], "cursor": {}})"),
      "40602 Location40602: $changeStream is only valid as the first stage in a pipeline.");
  // What a change stream does not apply is refused, never ignored.
  for (const char* field : {R"("explain": true)", R"("maxTimeMS": 5, "cursor": {})",
                            R"("hint": {"a": 1}, "cursor": {})", R"("let": {"x": 1}, "cursor": {})"}) {
    const std::string name = std::string(field).substr(1, std::string(field).find('"', 1) - 1);
    EXPECT_EQ(Error(std::string(R"({"aggregate": "c", "pipeline": [{"$changeStream": {}}], )") +
                    field + "}"),
              "238 NotImplemented: " + name +
                  " on a $changeStream aggregate is not supported by rockdoc yet");
  }
  EXPECT_EQ(Error(R"({"aggregate": "c", "pipeline": [{"$changeStream": {}}]})").substr(0, 16),
            "9 FailedToParse:");
  // A comment is a note for the logs, as on every command: past the
  // refusals, to the stream's own check (this client has no change log).
  EXPECT_EQ(
      Error(R"({"aggregate": "c", "pipeline": [{"$changeStream": {}}], "cursor": {}, "comment": "c"})")
          .substr(0, 6),
      "40573 ");
}

TEST_F(CommandTest, ApiStrictIsEnforced) {
  Ok(R"({"insert": "c", "documents": [{"_id": 1}], "apiVersion": "1", "apiStrict": true})");
  Ok(R"({"find": "c", "apiVersion": "1", "apiStrict": true})");
  Ok(R"({"count": "c", "apiVersion": "1", "apiStrict": true})");
  EXPECT_EQ(Error(R"({"distinct": "c", "key": "_id", "apiVersion": "1", "apiStrict": true})"),
            "323 APIStrictError: Provided apiStrict:true, but the command distinct is not in API "
            "Version 1. Information on supported commands and migrations in API Version 1 can be "
            "found at https://dochub.mongodb.org/core/manual-versioned-api");
  EXPECT_EQ(Error(R"({"isMaster": 1, "apiVersion": "1", "apiStrict": true})").substr(0, 18),
            "323 APIStrictError");
  EXPECT_EQ(Error(R"({"aggregate": "c", "pipeline": [{"$indexStats": {}}], "cursor": {},
                     "apiVersion": "1", "apiStrict": true})"),
            "323 APIStrictError: $indexStats is not allowed with 'apiStrict: true' in API Version 1");
  Ok(R"({"aggregate": "c", "pipeline": [{"$match": {}}], "cursor": {}, "apiVersion": "1",
        "apiStrict": true})");
  Ok(R"({"distinct": "c", "key": "_id", "apiVersion": "1", "apiStrict": false})");
  Ok(R"({"distinct": "c", "key": "_id", "apiVersion": "1"})");
  EXPECT_EQ(Error(R"({"ping": 1, "apiStrict": false})"),
            "4886600 Location4886600: Provided apiStrict without passing apiVersion");
  EXPECT_EQ(Error(R"({"ping": 1, "apiDeprecationErrors": true})"),
            "4886601 Location4886601: Provided apiDeprecationErrors without passing apiVersion");
  EXPECT_EQ(Error(R"({"ping": 1, "apiVersion": "2"})"),
            "322 APIVersionError: API version must be \"1\"");
}

// ---- Issue #34.6: results are bounded as MongoDB bounds them ----

TEST_F(CommandTest, ResultsOverTheLimitAreErrors) {
  // 40 documents of 512 KiB (each its own value): $push of all of them is a
  // 20 MiB document.
  std::vector<Document> docs;
  for (int i = 0; i < 40; ++i) {
    BsonBuilder d;
    d.AppendInt32("_id", i);
    d.AppendString("pad", std::to_string(i) + std::string(512 * 1024, 'p'));
    docs.push_back(std::move(d).Build());
  }
  ASSERT_TRUE(client_->GetDatabase("test").GetCollection("big").InsertMany(docs).ok());
  const std::string group = Error(
      R"({"aggregate": "big", "pipeline": [{"$group": {"_id": null, "all": {"$push": "$pad"}}}],
          "cursor": {}})");
  EXPECT_EQ(group.rfind("10334 BSONObjectTooLarge: BSONObj size: 209", 0), 0u) << group;
  EXPECT_NE(group.find(" is invalid. Size must be between 0 and 16793600(16MB) First element: "
                       "_id: null"),
            std::string::npos)
      << group;
  // A first batch that fits, then a document too large: the getMore fails.
  // (Groups 0 and 1 hold one document each, group 2 the other 38.)
  Document first = Ok(R"({"aggregate": "big", "pipeline": [
      {"$group": {"_id": {"$min": [2, "$_id"]}, "all": {"$push": "$pad"}}}, {"$sort": {"_id": 1}}],
      "cursor": {"batchSize": 1}})");
  EXPECT_EQ(ArrayLength(first.Get("cursor").Document().Get("firstBatch")), 1u);
  const int64_t id = first.Get("cursor").Document().Get("id").Int64();
  ASSERT_NE(id, 0);
  BsonBuilder more;
  more.AppendInt64("getMore", id);
  more.AppendString("collection", "big");
  Document r = client_->RunCommand("test", std::move(more).Build());
  EXPECT_EQ(r.Get("code").NumberAsDouble(), 10334) << ToJson(r).substr(0, 300);
  // distinct: its values at most 16 MiB (MongoDB's 17217).
  EXPECT_EQ(Error(R"({"distinct": "big", "key": "pad"})"),
            "17217 Location17217: distinct too big, 16mb cap");
  EXPECT_EQ(ArrayLength(Ok(R"({"distinct": "big", "key": "pad", "query": {"_id": {"$lt": 20}}})")
                            .Get("values")),
            20u);
}

}  // namespace
}  // namespace rockdoc

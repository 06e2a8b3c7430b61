// Retryable writes through the command layer (command/retryable_writes.cc):
// a write sent again with the same lsid and txnNumber is applied once, its
// retry reports what the first attempt did (retriedStmtIds), statements
// the first attempt did not run run on the retry, and the numbering rules
// against transactions and older numbers.
#include <gtest/gtest.h>

#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using rockdoc::test::Json;

class RetryableWritesTest : public rockdoc::test::ClientTest {
 protected:
  // `json` with lsid {id: UUID of byte `session`} and txnNumber `txn`.
  static Document Retryable(std::string_view json, int64_t txn, uint8_t session = 1) {
    BsonBuilder b;
    for (Element e : Json(json)) b.AppendElement(e);
    b.OpenDocument("lsid");
    b.AppendBinary("id", BinarySubtype::kUuid, std::string(16, static_cast<char>(session)));
    b.Close();
    b.AppendInt64("txnNumber", txn);
    return std::move(b).Build();
  }
  std::string Run(std::string_view json, int64_t txn, uint8_t session = 1) {
    return ToJson(client_->RunCommand("test", Retryable(json, txn, session)));
  }
  std::string Find(std::string_view filter = "{}") {
    Document r = client_->RunCommand(
        "test", Json(std::string(R"({"find": "c", "sort": {"_id": 1}, "filter": )") +
                     std::string(filter) + "}"));
    return ToJson(r.Get("cursor").Document().Get("firstBatch").Array());
  }
};

TEST_F(RetryableWritesTest, InsertIsAppliedOnce) {
  const char* insert = R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})";
  EXPECT_EQ(Run(insert, 1), R"({"n": 2, "ok": 1.0})");
  // The retry: no duplicate key error, the same n, both statements retried.
  EXPECT_EQ(Run(insert, 1), R"({"n": 2, "retriedStmtIds": [0, 1], "ok": 1.0})");
  EXPECT_EQ(Find(), R"({"0": {"_id": 1}, "1": {"_id": 2}})");
  // A new number is a new write: now the duplicate is one.
  Document again = client_->RunCommand("test", Retryable(insert, 2));
  EXPECT_EQ(again.Get("writeErrors").Array().Get("0").Document().Get("code").Int32(), 11000);
}

TEST_F(RetryableWritesTest, UpdateIsAppliedOnce) {
  ASSERT_EQ(Run(R"({"insert": "c", "documents": [{"_id": 1, "n": 0}]})", 1),
            R"({"n": 1, "ok": 1.0})");
  const char* update = R"({"update": "c", "updates": [
      {"q": {"_id": 1}, "u": {"$inc": {"n": 1}}},
      {"q": {"_id": 7}, "u": {"$inc": {"n": 1}}, "upsert": true}]})";
  EXPECT_EQ(Run(update, 2),
            R"({"n": 2, "nModified": 1, "upserted": [{"index": 1, "_id": 7}], "ok": 1.0})");
  EXPECT_EQ(Run(update, 2), R"({"n": 2, "nModified": 1, "upserted": [{"index": 1, "_id": 7}], )"
                            R"("retriedStmtIds": [0, 1], "ok": 1.0})");
  EXPECT_EQ(Find(), R"({"0": {"_id": 1, "n": 1}, "1": {"_id": 7, "n": 1}})");
  // Without the record, the retry would have incremented again: a new
  // number does.
  Run(update, 3);
  EXPECT_EQ(Find(), R"({"0": {"_id": 1, "n": 2}, "1": {"_id": 7, "n": 2}})");
}

TEST_F(RetryableWritesTest, DeleteReportsItsFirstOutcome) {
  Run(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}, {"_id": 3}]})", 1);
  const char* del = R"({"delete": "c", "deletes": [{"q": {"_id": {"$lte": 2}}, "limit": 0}]})";
  EXPECT_EQ(Run(del, 2), R"({"n": 2, "ok": 1.0})");
  EXPECT_EQ(Run(del, 2), R"({"n": 2, "retriedStmtIds": [0], "ok": 1.0})");
  EXPECT_EQ(Find(), R"({"0": {"_id": 3}})");
}

TEST_F(RetryableWritesTest, FindAndModifyReturnsTheFirstAttemptsDocument) {
  Run(R"({"insert": "c", "documents": [{"_id": 1, "n": 0}]})", 1);
  const char* fam =
      R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"n": 1}}, "new": true})";
  Document first = client_->RunCommand("test", Retryable(fam, 2));
  EXPECT_EQ(ToJson(first.Get("value").Document()), R"({"_id": 1, "n": 1})");
  Document retry = client_->RunCommand("test", Retryable(fam, 2));
  EXPECT_EQ(ToJson(retry.Get("value").Document()), R"({"_id": 1, "n": 1})");
  EXPECT_TRUE(retry.Get("retriedStmtIds").IsArray());
  EXPECT_EQ(Find(), R"({"0": {"_id": 1, "n": 1}})");
}

TEST_F(RetryableWritesTest, RetryRunsOnlyTheStatementsNotYetApplied) {
  Run(R"({"insert": "c", "documents": [{"_id": 2}]})", 1);
  // Ordered: statement 1 fails, so 2 does not run.
  const char* insert = R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}, {"_id": 3}]})";
  Document r = client_->RunCommand("test", Retryable(insert, 2));
  EXPECT_EQ(r.Get("n").Int32(), 1) << ToJson(r);
  EXPECT_EQ(r.Get("writeErrors").Array().Get("0").Document().Get("index").Int32(), 1);
  // The obstacle goes; the retry runs statements 1 and 2 and reports 0 as retried.
  ASSERT_EQ(client_->RunCommand("test", Json(R"({"delete": "c", "deletes": [
      {"q": {"_id": 2}, "limit": 1}]})")).Get("n").Int32(), 1);
  EXPECT_EQ(Run(insert, 2), R"({"n": 3, "retriedStmtIds": [0], "ok": 1.0})");
  EXPECT_EQ(Find(), R"({"0": {"_id": 1}, "1": {"_id": 2}, "2": {"_id": 3}})");
  // Unordered, with the error mapped to the statement's own index.
  const char* unordered = R"({"insert": "c", "ordered": false,
      "documents": [{"_id": 10}, {"_id": 1}, {"_id": 11}]})";
  r = client_->RunCommand("test", Retryable(unordered, 3));
  EXPECT_EQ(r.Get("n").Int32(), 2) << ToJson(r);
  r = client_->RunCommand("test", Retryable(unordered, 3));
  EXPECT_EQ(r.Get("n").Int32(), 2) << ToJson(r);
  EXPECT_EQ(r.Get("writeErrors").Array().Get("0").Document().Get("index").Int32(), 1);
  EXPECT_EQ(ToJson(r.Get("retriedStmtIds").Array()), R"({"0": 0, "1": 2})");
}

TEST_F(RetryableWritesTest, NumberingRules) {
  auto code = [&](std::string_view json, int64_t txn, std::string_view db = "test") {
    return client_->RunCommand(db, Retryable(json, txn)).Get("code").Int32();
  };
  Run(R"({"insert": "c", "documents": [{"_id": 1}]})", 5);
  EXPECT_EQ(code(R"({"insert": "c", "documents": [{"_id": 2}]})", 4), 225);  // too old
  EXPECT_EQ(code(R"({"find": "c"})", 6), 50768);  // not a retryable write command
  // A number a transaction used is not a retryable write's, and the reverse.
  BsonBuilder start;
  for (Element e : Retryable(R"({"insert": "c", "documents": [{"_id": 3}]})", 7)) {
    start.AppendElement(e);
  }
  start.AppendBool("autocommit", false);
  start.AppendBool("startTransaction", true);
  ASSERT_EQ(client_->RunCommand("test", std::move(start).Build()).Get("ok").NumberAsDouble(), 1);
  EXPECT_EQ(code(R"({"insert": "c", "documents": [{"_id": 4}]})", 7), 20);
  BsonBuilder in_txn;
  for (Element e : Retryable(R"({"insert": "c", "documents": [{"_id": 5}]})", 5)) {
    in_txn.AppendElement(e);
  }
  in_txn.AppendBool("autocommit", false);
  EXPECT_EQ(client_->RunCommand("test", std::move(in_txn).Build()).Get("code").Int32(), 225);
  // A greater number supersedes (aborts) the transaction, as MongoDB.
  EXPECT_EQ(Run(R"({"insert": "c", "documents": [{"_id": 6}]})", 8), R"({"n": 1, "ok": 1.0})");
  EXPECT_EQ(Find(), R"({"0": {"_id": 1}, "1": {"_id": 6}})");
  // Sessions are separate.
  EXPECT_EQ(Run(R"({"insert": "c", "documents": [{"_id": 9}]})", 1, 2), R"({"n": 1, "ok": 1.0})");
}

}  // namespace
}  // namespace rockdoc

// find's options that change what a cursor is (issue 33, item 9): min and
// max (a key range of the hinted index), returnKey, showRecordId, and
// tailable / awaitData cursors on capped collections, through the command
// layer (Client::RunCommand) as drivers send them.
#include <gtest/gtest.h>

#include <thread>

#include "command/command.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using test::ScratchDir;

class FindExtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }

  Document Run(std::string_view json) { return client_->RunCommand("test", Json(json)); }
  Document Ok(std::string_view json) {
    Document r = Run(json);
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1.0) << json << " -> " << ToJson(r);
    return r;
  }
  // "<code>: <errmsg>" of a command that must fail.
  std::string Error(std::string_view json) {
    Document r = Run(json);
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 0.0) << json << " -> " << ToJson(r);
    if (r.Get("ok").NumberAsDouble() != 0.0) return "ok";
    return std::to_string(r.Get("code").Int32()) + ": " + std::string(r.Get("errmsg").String());
  }
  // The documents of a find's or getMore's batch, as one JSON array.
  static std::string Batch(const Document& reply) {
    Element cursor = reply.Get("cursor");
    if (cursor.type() != BsonType::kDocument) return "no cursor: " + ToJson(reply);
    Element batch = cursor.Document().Get("firstBatch");
    if (!batch.ok()) batch = cursor.Document().Get("nextBatch");
    std::string out = "[";
    for (Element d : batch.Array()) {
      if (out.size() > 1) out += ", ";
      out += ToJson(d.Document());
    }
    return out + "]";
  }
  static int64_t CursorId(const Document& reply) {
    return reply.Get("cursor").Document().Get("id").Int64();
  }
  std::string GetMore(int64_t id, std::string_view coll, std::string_view extra = "") {
    return "{\"getMore\": {\"$numberLong\": \"" + std::to_string(id) +
           "\"}, \"collection\": \"" + std::string(coll) + "\"" + std::string(extra) + "}";
  }
  // {_id: i, a: i} for i in [0, n), and an index on a in `direction`.
  void NumbersWithIndex(int n, int direction = 1) {
    std::string docs;
    for (int i = 0; i < n; ++i) {
      docs += (i ? ", " : "") + ("{\"_id\": " + std::to_string(i) + ", \"a\": " +
                                 std::to_string(i) + "}");
    }
    Ok("{\"insert\": \"c\", \"documents\": [" + docs + "]}");
    Ok("{\"createIndexes\": \"c\", \"indexes\": [{\"key\": {\"a\": " + std::to_string(direction) +
       "}, \"name\": \"a\"}]}");
  }
  void Capped(std::string_view extra = "") {
    Ok("{\"create\": \"log\", \"capped\": true, \"size\": 100000" + std::string(extra) + "}");
  }

  ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

// ---- min / max ----

TEST_F(FindExtTest, MinMaxScanOnlyTheHintedIndexsKeyRange) {
  NumbersWithIndex(10);
  const char* find = R"({"find": "c", "hint": {"a": 1}, "min": {"a": 3}, "max": {"a": 6}})";
  EXPECT_EQ(Batch(Ok(find)),
            R"([{"_id": 3, "a": 3}, {"_id": 4, "a": 4}, {"_id": 5, "a": 5}])");
  // With a filter, which applies inside the range.
  EXPECT_EQ(Batch(Ok(R"({"find": "c", "filter": {"a": {"$ne": 4}}, "hint": "a",
                         "min": {"a": 3}, "max": {"a": 6}})")),
            R"([{"_id": 3, "a": 3}, {"_id": 5, "a": 5}])");
  // Only min, only max.
  EXPECT_EQ(Batch(Ok(R"({"find": "c", "hint": "a", "min": {"a": 8}})")),
            R"([{"_id": 8, "a": 8}, {"_id": 9, "a": 9}])");
  EXPECT_EQ(Batch(Ok(R"({"find": "c", "hint": "a", "max": {"a": 1}})")), R"([{"_id": 0, "a": 0}])");
  // The plan reads those keys and no others.
  Document explain = Ok(R"({"explain": {"find": "c", "hint": {"a": 1}, "min": {"a": 3},
                            "max": {"a": 6}}, "verbosity": "executionStats"})");
  const std::string ixscan =
      ToJson(explain.GetPath("executionStats.executionStages.inputStage").Document());
  EXPECT_NE(ixscan.find(R"("stage": "IXSCAN")"), std::string::npos) << ixscan;
  EXPECT_NE(ixscan.find(R"("indexBounds": {"startKey": {"a": 3}, "startKeyInclusive": true, )"
                        R"("endKey": {"a": 6}, "endKeyInclusive": false})"),
            std::string::npos)
      << ixscan;
  EXPECT_EQ(explain.GetPath("executionStats.totalKeysExamined").NumberAsDouble(), 3) << ixscan;
  EXPECT_EQ(explain.GetPath("executionStats.totalDocsExamined").NumberAsDouble(), 3) << ixscan;
}

TEST_F(FindExtTest, MinMaxFollowTheIndexOrderOnDescendingAndCompoundKeys) {
  NumbersWithIndex(10, -1);
  // Index order is descending: min is the higher value.
  EXPECT_EQ(Batch(Ok(R"({"find": "c", "hint": {"a": -1}, "min": {"a": 7}, "max": {"a": 4},
                         "projection": {"_id": 0}})")),
            R"([{"a": 7}, {"a": 6}, {"a": 5}])");
  EXPECT_EQ(Error(R"({"find": "c", "hint": {"a": -1}, "min": {"a": 4}, "max": {"a": 7}})"),
            "51175: The value provided for min() does not come before the value provided for "
            "max() in the hinted index");
  // A compound key: whole keys bound the range, not each field alone.
  Ok(R"({"insert": "k", "documents": [{"_id": 1, "x": 1, "y": 1}, {"_id": 2, "x": 1, "y": 9},
         {"_id": 3, "x": 2, "y": 1}, {"_id": 4, "x": 2, "y": 9}, {"_id": 5, "x": 3, "y": 0}]})");
  Ok(R"({"createIndexes": "k", "indexes": [{"key": {"x": 1, "y": 1}, "name": "xy"}]})");
  EXPECT_EQ(Batch(Ok(R"({"find": "k", "hint": "xy", "min": {"x": 1, "y": 5},
                         "max": {"x": 2, "y": 5}, "projection": {"_id": 1}})")),
            R"([{"_id": 2}, {"_id": 3}])");
  // The _id index: the clustered records' own order.
  EXPECT_EQ(Batch(Ok(R"({"find": "k", "hint": {"_id": 1}, "min": {"_id": 4},
                         "projection": {"_id": 1}})")),
            R"([{"_id": 4}, {"_id": 5}])");
}

TEST_F(FindExtTest, MinMaxErrorsAreMongoDBs) {
  NumbersWithIndex(3);
  EXPECT_EQ(Error(R"({"find": "c", "min": {"a": 1}})"),
            "51173: When using min()/max() a hint of which index to use must be provided");
  EXPECT_EQ(Error(R"({"find": "c", "min": {"a": 1}, "hint": {"$natural": 1}})"),
            "291: min and max are incompatible with $natural");
  EXPECT_EQ(Error(R"({"find": "c", "min": {"b": 1}, "hint": {"a": 1}})"),
            "51174: The index chosen is not compatible with min/max");
  EXPECT_EQ(Error(R"({"find": "c", "min": {"a": 1}, "max": {"b": 2}, "hint": {"a": 1}})"),
            "51176: min and max must have the same field names");
  EXPECT_EQ(Error(R"({"find": "c", "min": {"a": 2}, "max": {"a": 2}, "hint": {"a": 1}})"),
            "51175: The value provided for min() does not come before the value provided for "
            "max() in the hinted index");
  EXPECT_EQ(Error(R"({"find": "c", "min": 1, "hint": {"a": 1}})").substr(0, 3), "14:");
}

// ---- returnKey, showRecordId ----

TEST_F(FindExtTest, ReturnKeyReturnsTheIndexKeyOfEachResult) {
  NumbersWithIndex(10);
  Ok(R"({"update": "c", "updates": [{"q": {}, "u": {"$set": {"b": "x"}}, "multi": true}]})");
  EXPECT_EQ(Batch(Ok(R"({"find": "c", "filter": {"a": {"$gte": 8}}, "hint": {"a": 1},
                         "returnKey": true})")),
            R"([{"a": 8}, {"a": 9}])");
  // Through a blocking sort, and whatever the projection (ignored, as MongoDB's).
  EXPECT_EQ(Batch(Ok(R"({"find": "c", "filter": {"a": {"$gte": 7}}, "hint": {"a": 1},
                         "sort": {"_id": -1}, "projection": {"b": 1}, "returnKey": true})")),
            R"([{"a": 9}, {"a": 8}, {"a": 7}])");
  // The _id order's key is the _id; a collection scan has none.
  EXPECT_EQ(Batch(Ok(R"({"find": "c", "filter": {"_id": 2}, "returnKey": true})")),
            R"([{"_id": 2}])");
  EXPECT_EQ(Batch(Ok(R"({"find": "c", "filter": {"b": "x"}, "limit": 2, "returnKey": true})")),
            R"([{}, {}])");
}

TEST_F(FindExtTest, ShowRecordIdIsStablePerDocument) {
  NumbersWithIndex(3);
  // The records are clustered by _id: the _id's keystring, as BinData.
  Document a = Ok(R"({"find": "c", "filter": {"_id": 1}, "showRecordId": true})");
  Document b = Ok(R"({"find": "c", "filter": {"a": 1}, "hint": "a", "showRecordId": true,
                      "projection": {"a": 1}})");
  Element ra = a.GetPath("cursor.firstBatch.0.$recordId");
  Element rb = b.GetPath("cursor.firstBatch.0.$recordId");
  ASSERT_EQ(ra.type(), BsonType::kBinary) << ToJson(a);
  ASSERT_EQ(rb.type(), BsonType::kBinary) << ToJson(b);
  EXPECT_EQ(ValueToJson(ra), ValueToJson(rb));
  EXPECT_NE(Batch(b).find(R"({"_id": 1, "a": 1, "$recordId": {"$binary")"), std::string::npos)
      << Batch(b);
  // A capped collection's: its insertion order, a long.
  Capped();
  Ok(R"({"insert": "log", "documents": [{"_id": "z"}, {"_id": "a"}, {"_id": "m"}]})");
  EXPECT_EQ(Batch(Ok(R"({"find": "log", "showRecordId": true})")),
            R"([{"_id": "z", "$recordId": 1}, {"_id": "a", "$recordId": 2}, )"
            R"({"_id": "m", "$recordId": 3}])");
  Document m = Ok(R"({"find": "log", "filter": {"_id": "m"}, "showRecordId": true})");
  EXPECT_EQ(m.GetPath("cursor.firstBatch.0.$recordId").type(), BsonType::kInt64);
  EXPECT_EQ(m.GetPath("cursor.firstBatch.0.$recordId").Int64(), 3);
}

// A find on a view is an aggregate, which has none of these: MongoDB's
// InvalidPipelineOperator (168), not the options ignored.
TEST_F(FindExtTest, ViewsRefuseTheOptionsAggregatesLack) {
  NumbersWithIndex(3);
  Ok(R"({"create": "v", "viewOn": "c", "pipeline": []})");
  EXPECT_EQ(Error(R"({"find": "v", "returnKey": true})"),
            "168: Option returnKey not supported in aggregation.");
  EXPECT_EQ(Error(R"({"find": "v", "showRecordId": true})"),
            "168: Option showRecordId not supported in aggregation.");
  EXPECT_EQ(Error(R"({"find": "v", "min": {"a": 1}, "hint": {"a": 1}})"),
            "168: Option min not supported in aggregation.");
  EXPECT_EQ(Error(R"({"find": "v", "tailable": true})"),
            "168: Tailable cursors are not supported in aggregation.");
  EXPECT_EQ(Run(R"({"find": "v", "returnKey": true})").Get("codeName").String(),
            "InvalidPipelineOperator");
}

// ---- tailable and awaitData ----

TEST_F(FindExtTest, TailableCursorStaysOpenAndReturnsLaterInserts) {
  Capped();
  Ok(R"({"insert": "log", "documents": [{"_id": 1}, {"_id": 2}]})");
  Document first = Ok(R"({"find": "log", "tailable": true})");
  EXPECT_EQ(Batch(first), R"([{"_id": 1}, {"_id": 2}])");
  const int64_t id = CursorId(first);
  ASSERT_NE(id, 0);
  // At its end: an empty batch, and still open.
  Document empty = Ok(GetMore(id, "log"));
  EXPECT_EQ(Batch(empty), "[]");
  EXPECT_EQ(CursorId(empty), id);
  Ok(R"({"insert": "log", "documents": [{"_id": 3}, {"_id": 0}]})");
  Document more = Ok(GetMore(id, "log"));
  EXPECT_EQ(Batch(more), R"([{"_id": 3}, {"_id": 0}])");  // insertion order
  EXPECT_EQ(CursorId(more), id);
  // A filter and a limit: the limit closes it.
  Document limited = Ok(R"({"find": "log", "tailable": true, "filter": {"_id": {"$gt": 2}},
                             "limit": 2})");
  EXPECT_EQ(Batch(limited), R"([{"_id": 3}])");
  ASSERT_NE(CursorId(limited), 0);
  Ok(R"({"insert": "log", "documents": [{"_id": -5}, {"_id": 7}, {"_id": 8}]})");
  Document last = Ok(GetMore(CursorId(limited), "log"));
  EXPECT_EQ(Batch(last), R"([{"_id": 7}])");
  EXPECT_EQ(CursorId(last), 0);
  // An empty capped collection's tailable cursor stays open too.
  Ok(R"({"create": "empty", "capped": true, "size": 4096})");
  Document none = Ok(R"({"find": "empty", "tailable": true})");
  EXPECT_EQ(Batch(none), "[]");
  ASSERT_NE(CursorId(none), 0);
  Ok(R"({"insert": "empty", "documents": [{"_id": 1}]})");
  EXPECT_EQ(Batch(Ok(GetMore(CursorId(none), "empty"))), R"([{"_id": 1}])");
}

TEST_F(FindExtTest, TailableErrorsAreMongoDBs) {
  Ok(R"({"insert": "plain", "documents": [{"_id": 1}]})");
  const std::string not_capped = Error(R"({"find": "plain", "tailable": true})");
  EXPECT_EQ(not_capped.substr(0, 3), "2: ") << not_capped;
  EXPECT_NE(not_capped.find("error processing query: "), std::string::npos) << not_capped;
  EXPECT_NE(not_capped.find(" tailable cursor requested on non capped collection"),
            std::string::npos)
      << not_capped;
  Capped();
  EXPECT_EQ(Error(R"({"find": "log", "tailable": true, "sort": {"_id": 1}})"),
            "2: cannot use tailable option with a sort other than {$natural: 1}");
  EXPECT_EQ(Error(R"({"find": "log", "tailable": true, "sort": {"$natural": -1}})"),
            "2: cannot use tailable option with a sort other than {$natural: 1}");
  Ok(R"({"find": "log", "tailable": true, "sort": {"$natural": 1}})");
  EXPECT_EQ(Error(R"({"find": "log", "awaitData": true})"),
            "9: Cannot set 'awaitData' without also setting 'tailable'");
  EXPECT_EQ(Error(R"({"find": "log", "tailable": true, "singleBatch": true})"),
            "2: cannot use tailable option with the 'singleBatch' option");
  // getMore's maxTimeMS belongs to awaitData cursors only (the cursor lives on).
  Ok(R"({"insert": "log", "documents": [{"_id": 1}, {"_id": 2}]})");
  const int64_t id = CursorId(Ok(R"({"find": "log", "batchSize": 1})"));
  EXPECT_EQ(Error(GetMore(id, "log", R"(, "maxTimeMS": 100)")),
            "2: cannot set maxTimeMS on getMore command for a non-awaitData cursor");
  EXPECT_EQ(Batch(Ok(GetMore(id, "log"))), R"([{"_id": 2}])");
}

TEST_F(FindExtTest, TailableCursorOverwrittenByTheRollOverDiesWithCappedPositionLost) {
  Capped(R"(, "max": 3)");
  Ok(R"({"insert": "log", "documents": [{"_id": 1}, {"_id": 2}]})");
  Document first = Ok(R"({"find": "log", "tailable": true})");
  const int64_t id = CursorId(first);
  ASSERT_NE(id, 0);
  // Four more: {_id: 2}, where the cursor stands, goes with the roll-over.
  Ok(R"({"insert": "log", "documents": [{"_id": 3}, {"_id": 4}, {"_id": 5}, {"_id": 6}]})");
  const std::string lost = Error(GetMore(id, "log"));
  EXPECT_EQ(lost.substr(0, 5), "136: ") << lost;
  EXPECT_NE(lost.find("position in capped collection being deleted"), std::string::npos) << lost;
  EXPECT_EQ(Error(GetMore(id, "log")).substr(0, 4), "43: ");  // closed
}

TEST_F(FindExtTest, AwaitDataGetMoreReturnsTheDocumentAnotherThreadInserts) {
  Capped();
  Ok(R"({"insert": "log", "documents": [{"_id": 1}]})");
  Document first = Ok(R"({"find": "log", "tailable": true, "awaitData": true})");
  const int64_t id = CursorId(first);
  ASSERT_NE(id, 0);
  // Ten minutes: the getMore returns when the insert wakes it (an insert
  // before its scan is found at once), never by its time limit.
  Document got;
  std::thread waiter([&] { got = Run(GetMore(id, "log", R"(, "maxTimeMS": 600000)")); });
  Ok(R"({"insert": "log", "documents": [{"_id": 2, "x": "new"}]})");
  waiter.join();
  EXPECT_EQ(Batch(got), R"([{"_id": 2, "x": "new"}])") << ToJson(got);
  EXPECT_EQ(CursorId(got), id);
  // With nothing inserted, the wait ends at maxTimeMS with an empty batch,
  // and the cursor stays open.
  Document timed_out = Ok(GetMore(id, "log", R"(, "maxTimeMS": 1)"));
  EXPECT_EQ(Batch(timed_out), "[]");
  EXPECT_EQ(CursorId(timed_out), id);
}

TEST_F(FindExtTest, KillCursorsEndsAWaitingAwaitDataGetMore) {
  Capped();
  Ok(R"({"insert": "log", "documents": [{"_id": 1}]})");
  const int64_t id = CursorId(Ok(R"({"find": "log", "tailable": true, "awaitData": true})"));
  ASSERT_NE(id, 0);
  Document got;
  std::thread waiter([&] { got = Run(GetMore(id, "log", R"(, "maxTimeMS": 600000)")); });
  Ok("{\"killCursors\": \"log\", \"cursors\": [{\"$numberLong\": \"" + std::to_string(id) +
     "\"}]}");
  waiter.join();  // woken (or never started waiting): not after ten minutes
  // Killed before the getMore took it (43), or while it waited (11601).
  const int code = got.Get("code").Int32();
  EXPECT_TRUE(code == 43 || code == 11601) << ToJson(got);
  EXPECT_EQ(Error(GetMore(id, "log")).substr(0, 4), "43: ");
}

// rockdoc-serve's shutdown lets each connection finish its request: one
// waiting for a capped collection's writes returns its empty batch at once.
TEST_F(FindExtTest, ShutdownEndsAwaitDataWaits) {
  Capped();
  Ok(R"({"insert": "log", "documents": [{"_id": 1}]})");
  const int64_t id = CursorId(Ok(R"({"find": "log", "tailable": true, "awaitData": true})"));
  ASSERT_NE(id, 0);
  Document got;
  std::thread waiter([&] { got = Run(GetMore(id, "log", R"(, "maxTimeMS": 600000)")); });
  internal::StopCursorWaits(*client_);
  waiter.join();  // woken (or never started waiting): not after ten minutes
  EXPECT_EQ(got.Get("ok").NumberAsDouble(), 1.0) << ToJson(got);
  EXPECT_EQ(Batch(got), "[]");
  // And later ones do not wait either; the cursor is still there.
  Document again = Ok(GetMore(id, "log", R"(, "maxTimeMS": 600000)"));
  EXPECT_EQ(Batch(again), "[]");
  EXPECT_EQ(CursorId(again), id);
}

}  // namespace
}  // namespace rockdoc

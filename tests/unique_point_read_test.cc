// IXSCAN's point reads on unique indexes (exec/index_stages.h,
// SetUniquePointGetEnabled; issue 36): when the bounds are points on every
// field of a unique index, each entry is read with a Get of its key instead
// of an iterator's seek. The truth is the same query with point reads off
// and a collection scan ($natural), over random documents and random
// equality, $in and null queries, ascending, descending, compound,
// multikey, sparse and partial unique indexes, inside and outside a
// transaction.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "exec/index_stages.h"
#include "planner/query_planner.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

class UniquePointReadTest : public test::ClientTest {
 protected:
  void TearDown() override { internal::SetUniquePointGetEnabled(true); }

  Collection Coll() const { return client_->GetDatabase("db").GetCollection("c"); }

  void CreateIndex(std::string_view keys, IndexOptions options = {}) {
    options.unique = true;
    auto r = Coll().CreateIndex(Json(keys), options);
    ASSERT_TRUE(r.ok()) << r.status() << " " << keys;
  }

  std::vector<std::string> Found(const Collection& c, const Document& filter,
                                 const FindOptions& options = {}) const {
    return test::FoundJson(c, filter, options);
  }

  // The winning plan's IXSCAN figures: "<index> keys <n> seeks <n>".
  std::string Scan(const Document& filter, const FindOptions& options = {}) const {
    auto e = Coll().ExplainFind(filter, options, ExplainVerbosity::kExecutionStats);
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok()) return "";
    Element stage = e->GetPath("executionStats.executionStages");
    while (stage.IsDocument() && stage.Document().Get("stage").String() != "IXSCAN") {
      stage = stage.Document().Get("inputStage");
    }
    if (!stage.IsDocument()) return "no IXSCAN";
    int64_t keys = -1, seeks = -1;
    stage.Document().Get("keysExamined").ExactInt64(&keys);
    stage.Document().Get("seeks").ExactInt64(&seeks);
    return std::string(stage.Document().Get("indexName").String()) + " keys " +
           std::to_string(keys) + " seeks " + std::to_string(seeks);
  }
};

TEST_F(UniquePointReadTest, EqualityAndInReadTheirPoints) {
  for (int i = 0; i < 50; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i).AppendInt32("u", i * 2);
    ASSERT_TRUE(Coll().InsertOne(std::move(b).Build()).ok());
  }
  CreateIndex(R"({"u": 1})");
  EXPECT_EQ(Found(Coll(), Json(R"({"u": 8})")),
            (std::vector<std::string>{R"({"_id": 4, "u": 8})"}));
  EXPECT_EQ(Found(Coll(), Json(R"({"u": 9})")), (std::vector<std::string>{}));
  // A number of another type is the same key.
  EXPECT_EQ(Found(Coll(), Json(R"({"u": 8.0})")),
            (std::vector<std::string>{R"({"_id": 4, "u": 8})"}));
  EXPECT_EQ(Scan(Json(R"({"u": {"$in": [2, 3, 4, 97]}})")), "u_1 keys 2 seeks 4");
  FindOptions desc;
  desc.sort = Json(R"({"u": -1})");
  EXPECT_EQ(Found(Coll(), Json(R"({"u": {"$in": [2, 3, 4, 98]}})"), desc),
            (std::vector<std::string>{R"({"_id": 49, "u": 98})", R"({"_id": 2, "u": 4})",
                                      R"({"_id": 1, "u": 2})"}));
}

TEST_F(UniquePointReadTest, SeesTheTransactionsOwnWrites) {
  CreateIndex(R"({"u": 1})");
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 1, "u": 1})")).ok());
  auto started = client_->StartSession();
  ASSERT_TRUE(started.ok()) << started.status();
  Session session = std::move(started).value();
  ASSERT_TRUE(session.StartTransaction().ok());
  Collection in_txn = session.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(in_txn.InsertOne(Json(R"({"_id": 2, "u": 2})")).ok());
  ASSERT_TRUE(in_txn.DeleteOne(Json(R"({"_id": 1})")).ok());
  EXPECT_EQ(Found(in_txn, Json(R"({"u": {"$in": [1, 2]}})")),
            (std::vector<std::string>{R"({"_id": 2, "u": 2})"}));
  // Outside, the committed state.
  EXPECT_EQ(Found(Coll(), Json(R"({"u": {"$in": [1, 2]}})")),
            (std::vector<std::string>{R"({"_id": 1, "u": 1})"}));
  ASSERT_TRUE(session.AbortTransaction().ok());
}

// Random documents under several unique indexes, random point queries: the
// same answers with point reads on and off, and as a collection scan.
TEST_F(UniquePointReadTest, RandomPointQueriesAnswerAsAScan) {
  std::mt19937 rng(3636);
  auto n = [&](int mod) { return static_cast<int32_t>(rng() % mod); };
  CreateIndex(R"({"u": 1})");
  CreateIndex(R"({"d": -1})");
  CreateIndex(R"({"p": 1, "q": -1})");
  IndexOptions sparse;
  sparse.sparse = true;
  CreateIndex(R"({"s": 1})", sparse);
  IndexOptions partial;
  partial.partial_filter_expression = Json(R"({"r": {"$gt": 10}})");
  CreateIndex(R"({"r": 1})", partial);
  CreateIndex(R"({"m": 1})");  // multikey: arrays of distinct values across documents
  for (int i = 0; i < 300; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i);
    if (i != 5) b.AppendInt32("u", i * 3);  // one document without u: null
    if (i % 2 == 0) {
      b.AppendInt64("d", i);
    } else {
      b.AppendString("d", "s" + std::to_string(i));
    }
    b.AppendInt32("p", i / 10).AppendInt32("q", i % 10);
    if (i % 3 == 0) b.AppendInt32("s", i);
    b.AppendInt32("r", i % 2 == 0 ? i : -i);
    b.OpenArray("m").AppendInt32("", 2 * i).AppendInt32("", 2 * i + 1).Close();
    ASSERT_TRUE(Coll().InsertOne(std::move(b).Build()).ok()) << i;
  }
  auto value_list = [&](BsonBuilder* b, const char* field, int mod, int count) {
    b->OpenDocument(field).OpenArray("$in");
    for (int k = 0; k < count; ++k) b->AppendInt32("", n(mod));
    b->Close().Close();
  };
  for (int round = 0; round < 400; ++round) {
    BsonBuilder b;
    FindOptions options;
    switch (n(8)) {
      case 0:
        b.AppendInt32("u", n(1000));
        break;
      case 1:
        value_list(&b, "u", 1000, 1 + n(6));
        break;
      case 2:
        if (n(2) == 0) {
          b.AppendInt64("d", n(300));
        } else {
          b.AppendString("d", "s" + std::to_string(n(300)));
        }
        break;
      case 3:
        b.AppendInt32("p", n(32)).AppendInt32("q", n(10));
        break;
      case 4:
        value_list(&b, "p", 32, 2);
        value_list(&b, "q", 10, 2);
        break;
      case 5:
        b.AppendInt32("s", n(300));
        options.hint = Json(R"({"s": 1})");
        break;
      case 6:
        b.OpenArray("$and");
        b.OpenDocument("").AppendInt32("r", n(300)).Close();
        b.OpenDocument("").OpenDocument("r").AppendInt32("$gt", 10).Close().Close();
        b.Close();
        break;
      default:
        value_list(&b, "m", 610, 1 + n(4));
        break;
    }
    if (n(3) == 0) options.sort = Json(R"({"_id": -1})");
    Document filter = std::move(b).Build();
    SCOPED_TRACE(ToJson(filter) + " hint " + ToJson(options.hint));
    std::vector<std::string> points = Found(Coll(), filter, options);
    internal::SetUniquePointGetEnabled(false);
    std::vector<std::string> walked = Found(Coll(), filter, options);
    internal::SetUniquePointGetEnabled(true);
    FindOptions scan = options;
    scan.hint = Json(R"({"$natural": 1})");
    ASSERT_EQ(points, walked);
    ASSERT_EQ(points, Found(Coll(), filter, scan));
  }
  // null: the document without u.
  EXPECT_EQ(Found(Coll(), Json(R"({"u": null})")).size(), 1u);
}

}  // namespace
}  // namespace rockdoc

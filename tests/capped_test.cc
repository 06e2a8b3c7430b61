// Capped collections: at most `max` documents and `size` bytes, the oldest
// (by insertion) out first, natural order = insertion order, across
// restarts. The truth is a model: a queue of the documents, evicted by the
// same rules, compared after every step of random inserts, deletes and
// updates (with indexes, and then reopened).
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <thread>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using test::ScratchDir;

class CappedTest : public test::ClientTest {
 protected:
  Collection coll(std::string_view name = "log") { return db().GetCollection(name); }
  // The documents in natural order (a collection scan), as JSON.
  std::vector<std::string> Natural(std::string_view name = "log", int direction = 1) {
    FindOptions o;
    o.sort = Json(direction > 0 ? R"({"$natural": 1})" : R"({"$natural": -1})");
    auto cursor = coll(name).Find(Json("{}"), o);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    std::vector<std::string> out;
    auto docs = cursor->ToVector();
    EXPECT_TRUE(docs.ok()) << docs.status();
    for (const Document& d : *docs) out.push_back(ToJson(d));
    return out;
  }
};

// The model: documents in insertion order, evicted oldest-first on insert.
struct Model {
  int64_t size_limit;
  int64_t max;
  std::deque<Document> docs;

  int64_t Bytes() const {
    int64_t n = 0;
    for (const Document& d : docs) n += static_cast<int64_t>(d.size());
    return n;
  }
  void Insert(Document d) {
    docs.push_back(std::move(d));
    while (docs.size() > 1 &&
           ((max > 0 && static_cast<int64_t>(docs.size()) > max) || Bytes() > size_limit)) {
      docs.pop_front();
    }
  }
  std::vector<std::string> Json() const {
    std::vector<std::string> out;
    for (const Document& d : docs) out.push_back(ToJson(d));
    return out;
  }
};

Document Doc(int64_t id, int tag, size_t pad) {
  BsonBuilder b;
  b.AppendInt64("_id", id).AppendInt32("tag", tag).AppendString("pad", std::string(pad, 'p'));
  return std::move(b).Build();
}

Document IdFilter(const Element& id) {
  BsonBuilder b;
  b.AppendElement(id);
  return std::move(b).Build();
}

TEST_F(CappedTest, KeepsTheNewestWithinMaxAndSizeInInsertionOrderAgainstAModel) {
  ASSERT_TRUE(db().CreateCollection("log", test::CappedOptions(6000, 25)).ok());
  ASSERT_TRUE(coll().CreateIndex(Json(R"({"tag": 1})")).ok());
  Model model{6144, 25, {}};  // 6000 rounded up to a multiple of 256
  std::mt19937 rng(7);
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 2000; ++i) ids.push_back(i);
  std::shuffle(ids.begin(), ids.end(), rng);  // _id order is not insertion order
  size_t next = 0;
  for (int step = 0; step < 600; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 7 || model.docs.empty()) {
      Document d = Doc(ids[next++], static_cast<int>(rng() % 5), rng() % 400);
      ASSERT_TRUE(coll().InsertOne(d).ok());
      model.Insert(std::move(d));
    } else if (op < 9) {
      // Delete a random live document.
      size_t victim = rng() % model.docs.size();
      Element id = model.docs[victim].Get("_id");
      auto r = coll().DeleteOne(IdFilter(id));
      ASSERT_TRUE(r.ok());
      ASSERT_EQ(r->deleted_count, 1);
      model.docs.erase(model.docs.begin() + static_cast<std::ptrdiff_t>(victim));
    } else {
      // An update that changes the size (allowed since MongoDB 6.0; the
      // limits apply at the next insert).
      size_t target = rng() % model.docs.size();
      Element id = model.docs[target].Get("_id");
      Document changed = Doc(id.Int64(), 9, rng() % 400);
      ASSERT_TRUE(coll().ReplaceOne(IdFilter(id), changed).ok());
      model.docs[target] = changed;
    }
    ASSERT_EQ(Natural(), model.Json()) << "step " << step;
    if (step == 300) Open();  // the order and the totals survive a restart
  }
  std::vector<std::string> backward = model.Json();
  std::reverse(backward.begin(), backward.end());
  EXPECT_EQ(Natural("log", -1), backward);
  auto count = coll().CountDocuments(Json("{}"));
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, static_cast<int64_t>(model.docs.size()));
  // Evicted documents left no index entries behind.
  auto v = coll().Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
  EXPECT_EQ(v->index_entries, static_cast<int64_t>(model.docs.size()));
  // Every index read agrees with the model.
  auto tagged = coll().CountDocuments(Json(R"({"tag": {"$gte": 0}})"));
  ASSERT_TRUE(tagged.ok());
  EXPECT_EQ(*tagged, static_cast<int64_t>(model.docs.size()));
}

TEST_F(CappedTest, InsertManyEvictsWithinOneCall) {
  ASSERT_TRUE(db().CreateCollection("log", test::CappedOptions(100000, 10)).ok());
  std::vector<Document> docs;
  for (int i = 0; i < 2500; ++i) docs.push_back(Doc(i, 0, 1));
  auto r = coll().InsertMany(docs);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->inserted_count(), 2500u);
  std::vector<std::string> want;
  for (int i = 2490; i < 2500; ++i) want.push_back(ToJson(Doc(i, 0, 1)));
  EXPECT_EQ(Natural(), want);
  Open();
  ASSERT_TRUE(coll().InsertOne(Doc(5000, 0, 1)).ok());
  want.erase(want.begin());
  want.push_back(ToJson(Doc(5000, 0, 1)));
  EXPECT_EQ(Natural(), want);
}

TEST_F(CappedTest, OptionsAreCheckedAsMongoDBChecksThem) {
  EXPECT_EQ(test::CreateCommand(*client_, "test", "a", R"({"capped": true})").code(),
            ErrorCode::kInvalidOptions);
  EXPECT_EQ(test::CreateCommand(*client_, "test", "a", R"({"capped": true, "size": 0})").code(),
            ErrorCode::kInvalidOptions);
  EXPECT_EQ(test::CreateCommand(*client_, "test", "a", R"({"size": 1000})").code(),
            ErrorCode::kInvalidOptions);
  EXPECT_EQ(test::CreateCommand(*client_, "test", "a",
                                R"({"capped": true, "size": 1000, "max": 3000000000})")
                .code(),
            ErrorCode::kInvalidOptions);
  EXPECT_EQ(test::CreateCommand(*client_, "test", "a", R"({"capped": true, "size": "big"})").code(),
            ErrorCode::kTypeMismatch);
  ASSERT_TRUE(db().CreateCollection("a", test::CappedOptions(5000)).ok());
  auto infos = db().ListCollections();
  ASSERT_TRUE(infos.ok());
  ASSERT_EQ(infos->size(), 1u);
  EXPECT_EQ(ToJson((*infos)[0].options), R"({"capped": true, "size": 5120})");
  ASSERT_TRUE(db().CreateCollection("b", test::CappedOptions(10, 5)).ok());
  auto stats = coll("b").Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_TRUE(stats->capped);
  EXPECT_EQ(stats->max_size, 4096);
  EXPECT_EQ(stats->max, 5);
  // A document larger than the whole collection can never be kept.
  EXPECT_EQ(coll("b").InsertOne(Doc(1, 0, 5000)).status().code(), ErrorCode::kBadValue);
  EXPECT_EQ(coll("b").InsertOne(Doc(1, 0, 5000)).status().message(),
            "object to insert exceeds cappedMaxSize");
}

TEST_F(CappedTest, WritesInTransactionsAreRefused) {
  ASSERT_TRUE(db().CreateCollection("log", test::CappedOptions(5000)).ok());
  auto session = client_->StartSession();
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(session->StartTransaction().ok());
  Status s = session->GetDatabase("test").GetCollection("log").InsertOne(Doc(1, 0, 1)).status();
  EXPECT_EQ(s.code(), ErrorCode::kOperationNotSupportedInTransaction) << s;
  EXPECT_TRUE(session->AbortTransaction().ok() || true);
  EXPECT_TRUE(Natural().empty());
}

TEST_F(CappedTest, CollModChangesTheLimitsFromTheNextInsert) {
  ASSERT_TRUE(db().CreateCollection("log", test::CappedOptions(100000, 5)).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(coll().InsertOne(Doc(i, 0, 1)).ok());
  ASSERT_TRUE(test::CollModCommand(*client_, "test", "log", R"({"cappedMax": 2})").ok());
  EXPECT_EQ(Natural().size(), 5u);  // nothing removed until the next insert
  ASSERT_TRUE(coll().InsertOne(Doc(5, 0, 1)).ok());
  EXPECT_EQ(Natural(), (std::vector<std::string>{ToJson(Doc(4, 0, 1)), ToJson(Doc(5, 0, 1))}));
  ASSERT_TRUE(db().CreateCollection("plain").ok());
  EXPECT_EQ(
      test::CollModCommand(*client_, "test", "plain", R"({"cappedSize": 5000})").status().code(),
      ErrorCode::kInvalidOptions);
}

TEST_F(CappedTest, RenameKeepsAndDropForgetsTheOrder) {
  ASSERT_TRUE(db().CreateCollection("log", test::CappedOptions(100000, 3)).ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(coll().InsertOne(Doc(10 - i, 0, 1)).ok());
  ASSERT_TRUE(db().RenameCollection("log", "log2").ok());
  ASSERT_TRUE(coll("log2").InsertOne(Doc(1, 0, 1)).ok());
  EXPECT_EQ(Natural("log2"), (std::vector<std::string>{ToJson(Doc(8, 0, 1)), ToJson(Doc(7, 0, 1)),
                                                       ToJson(Doc(1, 0, 1))}));
  ASSERT_TRUE(db().DropCollection("log2").ok());
  ASSERT_TRUE(coll("log2").InsertOne(Doc(1, 0, 1)).ok());  // a new, uncapped collection
  for (int i = 2; i < 10; ++i) ASSERT_TRUE(coll("log2").InsertOne(Doc(i, 0, 1)).ok());
  EXPECT_EQ(Natural("log2").size(), 9u);
  Open();
  EXPECT_EQ(Natural("log2").size(), 9u);
}

TEST_F(CappedTest, ConcurrentWritersKeepTheLimits) {
  ASSERT_TRUE(db().CreateCollection("log", test::CappedOptions(100000, 50)).ok());
  ASSERT_TRUE(coll().CreateIndex(Json(R"({"tag": 1})")).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        Status s = coll().InsertOne(Doc(t * 1000 + i, t, 10)).status();
        EXPECT_TRUE(s.ok()) << s;
        if (i % 7 == 0) coll().DeleteOne(Json(R"({"tag": 0})")).status().IgnoreError();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<std::string> docs = Natural();
  EXPECT_LE(docs.size(), 50u);
  EXPECT_GE(docs.size(), 40u);
  auto v = coll().Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
  // Each writer's documents appear in the order it inserted them.
  for (int t = 0; t < 4; ++t) {
    int64_t last = -1;
    for (const std::string& json : docs) {
      Document d = Json(json);
      if (d.Get("tag").Int32() != t) continue;
      const auto id = static_cast<int64_t>(d.Get("_id").NumberAsDouble());
      EXPECT_GT(id, last);
      last = id;
    }
  }
}

TEST_F(CappedTest, CommandsCreateAndReportCappedCollections) {
  Document r = client_->RunCommand("test", Json(R"({"create": "log", "capped": true,
                                                    "size": 8192, "max": 2})"));
  ASSERT_EQ(r.Get("ok").NumberAsDouble(), 1.0) << ToJson(r);
  for (int i = 0; i < 3; ++i) {
    r = client_->RunCommand("test", Json(R"({"insert": "log", "documents": [{"x": 1}]})"));
    ASSERT_EQ(r.Get("n").Int32(), 1) << ToJson(r);
  }
  r = client_->RunCommand("test", Json(R"({"collStats": "log"})"));
  EXPECT_EQ(r.Get("capped").Bool(), true) << ToJson(r);
  EXPECT_EQ(r.Get("count").NumberAsDouble(), 2);
  EXPECT_EQ(r.Get("max").NumberAsDouble(), 2);
  EXPECT_EQ(r.Get("maxSize").NumberAsDouble(), 8192);
  r = client_->RunCommand("test", Json(R"({"listCollections": 1})"));
  EXPECT_EQ(ToJson(r.GetPath("cursor.firstBatch.0.options").Document()),
            R"({"capped": true, "size": 8192, "max": 2})");
}

}  // namespace
}  // namespace rockdoc

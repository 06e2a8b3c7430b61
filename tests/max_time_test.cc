// maxTimeMS (issue 11 #10): every read and write that can run long takes a
// time limit and fails with MaxTimeMSExpired (50) "operation exceeded time
// limit" once it has run that long, checked inside scans (the plan
// executor's work loop: collection scans, index scans, count scans, sort
// input), per document of a write, and inside long update operators.
//
// Expiry is made deterministic with a fake clock (SetClockForTesting) that
// advances a fixed step at every read: an operation expires after a number
// of clock checks, whatever the machine's speed. No timings are asserted.
#include <gtest/gtest.h>

#include <atomic>

#include "common/deadline.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

constexpr int64_t kMs = 1000000;  // nanoseconds
std::atomic<int64_t> fake_now{1};
std::atomic<int64_t> fake_step{0};
int64_t FakeClock() { return fake_now.fetch_add(fake_step.load()); }

class MaxTimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.path());
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  void TearDown() override { internal::SetClockForTesting(nullptr); }

  // Every read of the clock advances it by `step_ms` (fractions allowed).
  static void UseFakeClock(double step_ms) {
    fake_step = static_cast<int64_t>(step_ms * kMs);
    internal::SetClockForTesting(&FakeClock);
  }
  Collection Coll(std::string_view name = "c") const {
    return client_->GetDatabase("db").GetCollection(name);
  }
  // {_id: i, a: i % 100, n: 0} for i < n, indexed on a.
  void Fill(int n) {
    std::vector<Document> docs;
    for (int i = 0; i < n; ++i) {
      BsonBuilder b;
      b.AppendInt64("_id", i);
      b.AppendInt64("a", i % 100);
      b.AppendInt64("n", 0);
      docs.push_back(std::move(b).Build());
    }
    ASSERT_TRUE(Coll().InsertMany(docs)->ok());
    ASSERT_TRUE(Coll().CreateIndex(Json(R"({"a": 1})")).ok());
  }
  static void ExpectExpired(const Status& s) {
    EXPECT_EQ(s.code(), ErrorCode::kMaxTimeMSExpired) << s;
    EXPECT_EQ(s.message(), "operation exceeded time limit");
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

constexpr int kDocs = 20000;

TEST_F(MaxTimeTest, FindExpiresInsideAScan) {
  Fill(kDocs);
  UseFakeClock(1);
  FindOptions options;
  options.max_time_ms = 100;
  for (const char* filter : {R"({"nomatch": 1})",                 // COLLSCAN
                             R"({"a": {"$gte": 0}, "x": 1})"}) {  // IXSCAN + FETCH
    SCOPED_TRACE(filter);
    auto cursor = Coll().Find(Json(filter), options);
    ASSERT_TRUE(cursor.ok()) << cursor.status();
    EXPECT_FALSE(cursor->Next());
    ExpectExpired(cursor->status());
  }
  // A blocking sort expires while it reads its input.
  FindOptions sorted = options;
  sorted.sort = Json(R"({"n": -1})");
  auto cursor = Coll().Find(Document(), sorted);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  EXPECT_FALSE(cursor->Next());
  ExpectExpired(cursor->status());
  // No limit: the same scan runs to the end.
  auto unlimited = Coll().Find(Json(R"({"nomatch": 1})"));
  ASSERT_TRUE(unlimited.ok());
  EXPECT_FALSE(unlimited->Next());
  EXPECT_TRUE(unlimited->status().ok()) << unlimited->status();
}

TEST_F(MaxTimeTest, CountAndDistinctExpire) {
  Fill(kDocs);
  UseFakeClock(1);
  CountOptions count;
  count.max_time_ms = 100;
  ExpectExpired(Coll().CountDocuments(Json(R"({"nomatch": 1})"), count).status());
  // A count the index answers alone (COUNT_SCAN / covered IXSCAN).
  ExpectExpired(Coll().CountDocuments(Json(R"({"a": {"$gte": 0}})"), count).status());
  DistinctOptions distinct;
  distinct.max_time_ms = 100;
  ExpectExpired(Coll().Distinct("a", Document(), distinct).status());
  FindOneAndModifyOptions fam;
  fam.max_time_ms = 100;
  ExpectExpired(Coll()
                    .FindOneAndUpdate(Json(R"({"nomatch": 1})"), Json(R"({"$set": {"x": 1}})"), fam)
                    .status());
  ExpectExpired(Coll().FindOneAndDelete(Json(R"({"nomatch": 1})"), fam).status());
  EXPECT_EQ(*Coll().CountDocuments(Json(R"({"a": {"$gte": 0}})")), kDocs);
}

// A cursor's limit is cumulative processing time across Next() calls: time
// between them (the caller's) does not count, time inside them does.
TEST_F(MaxTimeTest, CursorLimitCountsProcessingTimeNotIdleTime) {
  Fill(1000);
  FindOptions options;
  options.max_time_ms = 50;
  UseFakeClock(0.001);  // 1 us per clock read
  auto cursor = Coll().Find(Document(), options);
  ASSERT_TRUE(cursor.ok());
  int returned = 0;
  while (cursor->Next()) {
    ++returned;
    fake_now += int64_t{3600} * 1000 * kMs;  // an hour idle between calls
  }
  EXPECT_TRUE(cursor->status().ok()) << cursor->status();
  EXPECT_EQ(returned, 1000);

  UseFakeClock(1);  // now each Next() costs a few ms of processing
  auto slow = Coll().Find(Document(), options);
  ASSERT_TRUE(slow.ok());
  returned = 0;
  while (slow->Next()) ++returned;
  ExpectExpired(slow->status());
  EXPECT_GT(returned, 0);
  EXPECT_LT(returned, 1000);
}

// A write that runs out of time keeps what it did: each document is
// changed entirely or not at all, and the count and indexes stay exact.
TEST_F(MaxTimeTest, UpdateManyAndDeleteManyStopBetweenWholeDocuments) {
  constexpr int kWriteDocs = 5000;
  Fill(kWriteDocs);
  UseFakeClock(1);
  UpdateOptions update;
  update.max_time_ms = 2000;
  auto r = Coll().UpdateMany(Document(), Json(R"({"$inc": {"n": 1}, "$set": {"m": 1}})"), update);
  ExpectExpired(r.status());
  internal::SetClockForTesting(nullptr);
  int64_t updated = *Coll().CountDocuments(Json(R"({"n": 1, "m": 1})"));
  EXPECT_GT(updated, 0);
  EXPECT_LT(updated, kWriteDocs);
  EXPECT_EQ(*Coll().CountDocuments(Json(R"({"n": 0, "m": {"$exists": false}})")),
            kWriteDocs - updated);

  UseFakeClock(1);
  DeleteOptions del;
  del.max_time_ms = 2000;
  ExpectExpired(Coll().DeleteMany(Json(R"({"a": {"$gte": 0}})"), del).status());
  internal::SetClockForTesting(nullptr);
  int64_t left = *Coll().EstimatedDocumentCount();
  EXPECT_GT(left, 0);
  EXPECT_LT(left, kWriteDocs);
  EXPECT_EQ(*Coll().CountDocuments(Json(R"({"_id": {"$gte": 0}})")), left);
  auto v = Coll().Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid) << (v->errors.empty() ? "" : v->errors[0]);
}

// Inserts (issue 33 #5): drivers with a client-side timeout (timeoutMS)
// send maxTimeMS with every insert. The limit is checked before each
// document; the documents before it stay inserted.
TEST_F(MaxTimeTest, InsertManyStopsBetweenDocumentsAndInsertCommandFails) {
  constexpr int kInsertDocs = 2000;
  std::vector<Document> docs;
  for (int i = 0; i < kInsertDocs; ++i) {
    BsonBuilder b;
    b.AppendInt64("_id", i);
    docs.push_back(std::move(b).Build());
  }
  UseFakeClock(1);
  InsertManyOptions options;
  options.max_time_ms = 100;
  auto r = Coll().InsertMany(docs, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->write_errors.size(), 1u);
  ExpectExpired(r->write_errors[0].status);
  internal::SetClockForTesting(nullptr);
  const int64_t inserted = *Coll().EstimatedDocumentCount();
  EXPECT_GT(inserted, 0);
  EXPECT_LT(inserted, kInsertDocs);
  EXPECT_EQ(static_cast<int64_t>(r->inserted_count()), inserted);

  // Through the command: mongod fails the whole batch on an interruption
  // (ok: 0, code 50), it is not one statement's write error.
  BsonBuilder cmd;
  cmd.AppendString("insert", "d");
  cmd.OpenArray("documents");
  for (const Document& d : docs) cmd.AppendDocument("", d.view());
  cmd.Close();
  cmd.AppendInt32("maxTimeMS", 100);
  const Document command = std::move(cmd).Build();
  UseFakeClock(1);
  Document reply = client_->RunCommand("db", command);
  internal::SetClockForTesting(nullptr);
  EXPECT_EQ(reply.Get("ok").NumberAsDouble(), 0.0) << ToJson(reply);
  EXPECT_EQ(reply.Get("code").NumberAsDouble(), 50.0) << ToJson(reply);
  EXPECT_EQ(reply.Get("codeName").String(), "MaxTimeMSExpired");
  EXPECT_LT(*Coll("d").EstimatedDocumentCount(), kInsertDocs);

  // A generous limit inserts everything, through the API and the command.
  InsertManyOptions generous;
  generous.max_time_ms = 600000;
  auto all = Coll("e").InsertMany(docs, generous);
  ASSERT_TRUE(all.ok() && all->ok());
  EXPECT_EQ(*Coll("e").EstimatedDocumentCount(), kInsertDocs);
  reply = client_->RunCommand(
      "db", Json(R"({"insert": "f", "documents": [{"_id": 1}, {"_id": 2}], "maxTimeMS": 600000})"));
  EXPECT_EQ(ToJson(reply), R"({"n": 2, "ok": 1.0})");
  reply = client_->RunCommand(
      "db", Json(R"({"insert": "f", "documents": [{"_id": 3}], "maxTimeMS": 2147483648})"));
  EXPECT_EQ(reply.Get("code").NumberAsDouble(), 2.0) << ToJson(reply);
}

// createIndexes applies maxTimeMS (drivers with timeoutMS send it): the
// build's scan checks the limit, and an expired build leaves no index.
TEST_F(MaxTimeTest, CreateIndexesExpiresInsideTheBuildAndLeavesNoIndex) {
  Fill(20000);  // the scan checks the clock every 128 documents
  UseFakeClock(1);
  Document reply = client_->RunCommand(
      "db", Json(R"({"createIndexes": "c", "indexes": [{"key": {"n": 1}, "name": "n_1"}],
                     "maxTimeMS": 50})"));
  internal::SetClockForTesting(nullptr);
  EXPECT_EQ(reply.Get("code").NumberAsDouble(), 50.0) << ToJson(reply);
  auto indexes = Coll().ListIndexes();
  ASSERT_TRUE(indexes.ok()) << indexes.status();
  for (const Document& index : *indexes) EXPECT_NE(index.Get("name").String(), "n_1");

  reply = client_->RunCommand(
      "db", Json(R"({"createIndexes": "c", "indexes": [{"key": {"n": 1}, "name": "n_1"}],
                     "maxTimeMS": 600000})"));
  EXPECT_EQ(reply.Get("ok").NumberAsDouble(), 1.0) << ToJson(reply);
  EXPECT_EQ(reply.Get("numIndexesAfter").NumberAsDouble(),
            reply.Get("numIndexesBefore").NumberAsDouble() + 1);
}

// Update operators whose work grows with the array: the limit is checked
// inside them, and the document stays as it was.
TEST_F(MaxTimeTest, LongUpdateOperatorsExpireAndLeaveTheDocument) {
  constexpr int kElements = 20000;
  BsonBuilder b;
  b.AppendInt64("_id", 1);
  b.OpenArray("a");
  for (int i = 0; i < kElements; ++i) b.AppendInt64(std::to_string(i), i);
  b.Close();
  Document doc = std::move(b).Build();
  ASSERT_TRUE(Coll().InsertOne(doc).ok());
  BsonBuilder each;
  each.OpenDocument("$addToSet");
  each.OpenDocument("a");
  each.OpenArray("$each");
  for (int i = 0; i < 500; ++i) each.AppendInt64(std::to_string(i), kElements + i);
  each.Close();
  each.Close();
  each.Close();
  Document add_to_set = std::move(each).Build();

  UseFakeClock(1);
  UpdateOptions options;
  options.max_time_ms = 50;
  for (const Document& update :
       {add_to_set, Json(R"({"$push": {"a": {"$each": [-1], "$sort": -1}}})"),
        Json(R"({"$pull": {"a": {"$gte": 1000000}}})"),
        Json(R"({"$pull": {"a": {"$in": [-5, -6]}}})")}) {
    SCOPED_TRACE(ToJson(update));
    ExpectExpired(Coll().UpdateOne(Json(R"({"_id": 1})"), update, options).status());
  }
  internal::SetClockForTesting(nullptr);
  auto stored = Coll().FindOne(Json(R"({"_id": 1})"));
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->bytes(), doc.bytes());
}

// An aggregate's maxTimeMS is one deadline for the whole pipeline: the
// finds of its $lookup stages share it (each used to get a fresh limit, so
// a pipeline of many short lookups never expired).
TEST_F(MaxTimeTest, AggregateHasOneDeadlineForAllItsFinds) {
  Fill(300);
  std::vector<Document> others;
  for (int i = 0; i < 100; ++i) others.push_back(Json("{\"_id\": " + std::to_string(i) + "}"));
  ASSERT_TRUE(Coll("other").InsertMany(others)->ok());
  const Document pipeline = Json(R"({"p": [{"$lookup": {"from": "other", "localField": "a",
                                                         "foreignField": "_id", "as": "j"}},
                                           {"$group": {"_id": null, "n": {"$sum": {"$size": "$j"}}}}]})");
  UseFakeClock(1);
  AggregateOptions options;
  options.max_time_ms = 200;  // more than any one lookup's find takes, less than all of them
  StatusOr<Cursor> cursor = Coll().Aggregate(pipeline.Get("p").Array(), options);
  if (cursor.ok()) {
    EXPECT_FALSE(cursor->Next());
    ExpectExpired(cursor->status());
  } else {
    ExpectExpired(cursor.status());
  }
  // With room for all of it, the same pipeline answers.
  options.max_time_ms = 1000000;
  cursor = Coll().Aggregate(pipeline.Get("p").Array(), options);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  ASSERT_TRUE(cursor->Next()) << cursor->status();
  EXPECT_EQ(cursor->document().Get("n").Int32(), 300);
}

// Issue #34.8: a slow regex (millions of PCRE2 steps per document) used to
// run to the end of its match, the clock read only every 128 documents; the
// match now checks the deadline itself (PCRE2's callouts), in a filter and
// in $regexMatch alike. Three documents, far fewer than the executor's
// check interval: only a check inside the match can expire them.
TEST_F(MaxTimeTest, ASlowRegexExpiresInsideOneMatch) {
  std::vector<Document> docs;
  for (int i = 0; i < 3; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i);
    b.AppendString("s", std::string(190, 'a'));
    docs.push_back(std::move(b).Build());
  }
  ASSERT_TRUE(Coll().InsertMany(docs)->ok());
  const Document filter = Json(R"({"s": {"$regex": "(.*a){3}x|a$"}})");
  const Document pipeline = Json(R"({"p": [{"$project": {"m": {"$regexMatch": {
                                      "input": "$s", "regex": "(.*a){3}x|a$"}}}}]})");
  UseFakeClock(1);
  FindOptions find;
  find.max_time_ms = 100;
  StatusOr<Cursor> cursor = Coll().Find(filter, find);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  EXPECT_FALSE(cursor->Next());
  ExpectExpired(cursor->status());
  AggregateOptions aggregate;
  aggregate.max_time_ms = 100;
  cursor = Coll().Aggregate(pipeline.Get("p").Array(), aggregate);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  EXPECT_FALSE(cursor->Next());
  ExpectExpired(cursor->status());
  // Without a limit the regex answers: the document matches (by "a$").
  internal::SetClockForTesting(nullptr);
  cursor = Coll().Find(Json(R"({"_id": 0, "s": {"$regex": "(.*a){3}x|a$"}})"), FindOptions{});
  ASSERT_TRUE(cursor.ok());
  int n = 0;
  while (cursor->Next()) ++n;
  EXPECT_TRUE(cursor->status().ok()) << cursor->status();
  EXPECT_EQ(n, 1);
}

TEST_F(MaxTimeTest, GenerousLimitsSucceed) {
  Fill(100);
  constexpr int64_t kGenerous = 600000;
  FindOptions find;
  find.max_time_ms = kGenerous;
  auto all = Coll().Find(Json(R"({"a": {"$lt": 10}})"), find);
  ASSERT_TRUE(all.ok());
  auto docs = all->ToVector();
  ASSERT_TRUE(docs.ok()) << docs.status();
  EXPECT_EQ(docs->size(), 10u);
  CountOptions count;
  count.max_time_ms = kGenerous;
  EXPECT_EQ(*Coll().CountDocuments(Json(R"({"a": {"$lt": 10}})"), count), 10);
  DistinctOptions distinct;
  distinct.max_time_ms = kGenerous;
  EXPECT_EQ(Coll().Distinct("a", Document(), distinct)->size(), 100u);
  UpdateOptions update;
  update.max_time_ms = kGenerous;
  EXPECT_EQ(
      Coll().UpdateMany(Json(R"({"a": 1})"), Json(R"({"$inc": {"n": 1}})"), update)->modified_count,
      1);
  FindOneAndModifyOptions fam;
  fam.max_time_ms = kGenerous;
  EXPECT_TRUE(Coll()
                  .FindOneAndUpdate(Json(R"({"_id": 5})"), Json(R"({"$set": {"x": 1}})"), fam)
                  ->has_value());
  DeleteOptions del;
  del.max_time_ms = kGenerous;
  EXPECT_EQ(Coll().DeleteMany(Json(R"({"a": 2})"), del)->deleted_count, 1);
  EXPECT_EQ(Coll().DeleteOne(Json(R"({"a": 3})"), del)->deleted_count, 1);
}

TEST_F(MaxTimeTest, OutOfRangeLimitsAreBadValue) {
  Fill(10);
  for (int64_t bad : {int64_t{-1}, int64_t{1} << 31}) {
    SCOPED_TRACE(bad);
    FindOptions find;
    find.max_time_ms = bad;
    EXPECT_EQ(Coll().Find(Document(), find).status().code(), ErrorCode::kBadValue);
    CountOptions count;
    count.max_time_ms = bad;
    EXPECT_EQ(Coll().CountDocuments(Document(), count).status().code(), ErrorCode::kBadValue);
    UpdateOptions update;
    update.max_time_ms = bad;
    auto u = Coll().UpdateMany(Document(), Json(R"({"$set": {"x": 1}})"), update);
    EXPECT_EQ(u.status().code(), ErrorCode::kBadValue);
    EXPECT_EQ(u.status().message(),
              std::to_string(bad) + " value for maxTimeMS is out of range [0, 2147483647]");
    DeleteOptions del;
    del.max_time_ms = bad;
    EXPECT_EQ(Coll().DeleteMany(Document(), del).status().code(), ErrorCode::kBadValue);
  }
  EXPECT_EQ(*Coll().EstimatedDocumentCount(), 10);
}

}  // namespace
}  // namespace rockdoc

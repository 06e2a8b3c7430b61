// TTL indexes, the background runner that deletes expired documents, collMod
// of expireAfterSeconds, and the reclaiming of index prefixes an interrupted
// drop left behind (issue 12). No timing is asserted: expiry is waited for
// with a bounded poll, and each check is on the documents that remain.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "api/client_internal.h"
#include "catalog/catalog.h"
#include "command/index_options.h"
#include "common/background_runner.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/rocks.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Document WithDate(int64_t id, std::string_view field, int64_t millis) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  b.AppendDateTime(field, millis);
  return std::move(b).Build();
}

class TtlTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(50); }
  void Open(int64_t period_ms) {
    client_.reset();
    ClientOptions options;
    options.ttl_monitor_period_ms = period_ms;
    auto c = Client::Open(dir_.path(), options);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Collection Coll() const { return client_->GetDatabase("db").GetCollection("c"); }
  // The TTL monitor's completed passes over this client's databases.
  int64_t Passes() const {
    return internal::ClientAccess::EngineOf(client_->GetDatabase("db"))->runner().runs("ttl");
  }
  // Waits for two whole passes of the monitor that begin after this call
  // (the one under way, if any, is not counted): what a pass would delete
  // is then deleted, however slow the machine. No time is assumed.
  void WaitForWholePasses() {
    const int64_t target = Passes() + 3;
    while (Passes() < target) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Whether `pred` holds once the monitor has made its passes.
  template <typename Pred>
  bool Eventually(Pred pred) {
    WaitForWholePasses();
    return pred();
  }
  int64_t Count(std::string_view filter = "{}") {
    return Coll().CountDocuments(Json(filter)).value_or(-1);
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(TtlTest, ExpiredDocumentsGoAndOthersStay) {
  IndexOptions ttl;
  ttl.expire_after_seconds = 60;
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"t": 1})"), ttl).ok());
  const int64_t now = NowMs();
  ASSERT_TRUE(Coll().InsertOne(WithDate(1, "t", now - 3600 * 1000)).ok());   // expired
  ASSERT_TRUE(Coll().InsertOne(WithDate(2, "t", now)).ok());                 // fresh
  ASSERT_TRUE(Coll().InsertOne(WithDate(3, "t", now + 3600 * 1000)).ok());   // future
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 4, "t": "yesterday"})")).ok());  // not a date
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 5, "t": 12345})")).ok());        // a number
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 6})")).ok());                    // missing
  // An array holding an expired date expires (MongoDB uses the earliest).
  BsonBuilder arr;
  arr.AppendInt64("_id", 7);
  arr.OpenArray("t").AppendDateTime("", now + 3600 * 1000).AppendDateTime("", now - 7200 * 1000).Close();
  ASSERT_TRUE(Coll().InsertOne(std::move(arr).Build()).ok());
  EXPECT_TRUE(Eventually([&] { return Count() == 5; })) << Count();
  auto ids = Coll().Distinct("_id", Json("{}"));
  ASSERT_TRUE(ids.ok());
  std::vector<int64_t> left;
  for (const Value& v : *ids) left.push_back(v.element().AsExactInt64().value_or(-1));
  EXPECT_EQ(left, (std::vector<int64_t>{2, 3, 4, 5, 6}));
  // Nothing more goes on later passes.
  WaitForWholePasses();
  EXPECT_EQ(Count(), 5);
  auto v = Coll().Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
}

TEST_F(TtlTest, APartialTtlIndexDeletesOnlyWhatItIndexes) {
  IndexOptions ttl;
  ttl.expire_after_seconds = 0;
  ttl.partial_filter_expression = Json(R"({"kind": "session"})");
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"t": 1})"), ttl).ok());
  const int64_t old = NowMs() - 1000;
  Document a = WithDate(1, "t", old), b = WithDate(2, "t", old);
  ASSERT_TRUE(Coll().InsertOne(a).ok());
  ASSERT_TRUE(Coll().InsertOne(b).ok());
  ASSERT_TRUE(Coll().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"kind": "session"}})")).ok());
  EXPECT_TRUE(Eventually([&] { return Count() == 1; }));
  EXPECT_EQ(Count(R"({"_id": 2})"), 1);
}

TEST_F(TtlTest, ListIndexesShowsItAndItSurvivesReopen) {
  IndexOptions ttl;
  ttl.expire_after_seconds = 3600;
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"t": 1})"), ttl).ok());
  auto specs = Coll().ListIndexes();
  ASSERT_TRUE(specs.ok());
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ(ToJson((*specs)[1], JsonFormat::kShell),
            "{ v: 2, key: { t: 1 }, name: 't_1', expireAfterSeconds: 3600 }");
  // The same index again is a no-op; another expiry is a conflict.
  EXPECT_TRUE(Coll().CreateIndex(Json(R"({"t": 1})"), ttl).ok());
  IndexOptions other = ttl;
  other.expire_after_seconds = 10;
  EXPECT_EQ(Coll().CreateIndex(Json(R"({"t": 1})"), other).status().code(),
            ErrorCode::kIndexKeySpecsConflict);
  ASSERT_TRUE(client_->Close().ok());
  Open(50);
  specs = Coll().ListIndexes();
  ASSERT_TRUE(specs.ok());
  EXPECT_EQ(ToJson((*specs)[1], JsonFormat::kShell),
            "{ v: 2, key: { t: 1 }, name: 't_1', expireAfterSeconds: 3600 }");
}

TEST_F(TtlTest, InvalidTtlOptionsFailWithMongoDBsCodes) {
  auto create = [&](std::string_view keys, std::string_view options) {
    auto parsed = internal::ParseIndexOptions(Json(options));
    if (!parsed.ok()) return parsed.status();
    return Coll().CreateIndex(Json(keys), *parsed).status();
  };
  Status s = create(R"({"t": 1})", R"({"expireAfterSeconds": -1})");
  EXPECT_EQ(s.code(), ErrorCode::kCannotCreateIndex) << s;
  EXPECT_NE(s.message().find("0 to 2147483647"), std::string_view::npos) << s;
  EXPECT_EQ(create(R"({"t": 1})", R"({"expireAfterSeconds": 2147483648})").code(),
            ErrorCode::kCannotCreateIndex);
  s = create(R"({"t": 1})", R"({"expireAfterSeconds": "soon"})");
  EXPECT_EQ(s.code(), ErrorCode::kCannotCreateIndex) << s;
  EXPECT_NE(s.message().find("must be numeric"), std::string_view::npos) << s;
  s = create(R"({"t": 1, "u": 1})", R"({"expireAfterSeconds": 5})");
  EXPECT_EQ(s.code(), ErrorCode::kCannotCreateIndex) << s;
  EXPECT_NE(s.message().find("compound indexes do not support TTL"), std::string_view::npos);
  EXPECT_EQ(Coll().ListIndexes().value_or(std::vector<Document>()).size(), 0u);
}

TEST_F(TtlTest, CollModChangesTheExpiryAndPersistsIt) {
  IndexOptions ttl;
  ttl.expire_after_seconds = 100000;
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"t": 1})"), ttl).ok());
  ASSERT_TRUE(Coll().InsertOne(WithDate(1, "t", NowMs() - 60 * 1000)).ok());
  WaitForWholePasses();
  EXPECT_EQ(Count(), 1);  // a minute old, 100000 s allowed
  Database db = client_->GetDatabase("db");
  auto reply = test::CollModCommand(
      *client_, "db", "c", R"({"index": {"keyPattern": {"t": 1}, "expireAfterSeconds": 30}})");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(ToJson(*reply, JsonFormat::kShell),
            "{ expireAfterSeconds_old: Long('100000'), expireAfterSeconds_new: Long('30'), ok: 1 }");
  EXPECT_TRUE(Eventually([&] { return Count() == 0; }))
      << ToJson(Coll().ListIndexes().value()[1], JsonFormat::kShell) << " "
      << ToJson(Coll().FindOne(Json("{}")).value().value(), JsonFormat::kShell);
  ASSERT_TRUE(client_->Close().ok());
  Open(50);
  auto specs = Coll().ListIndexes();
  ASSERT_TRUE(specs.ok());
  EXPECT_EQ((*specs)[1].Get("expireAfterSeconds").AsExactInt64().value_or(-1), 30);
  // By name; a plain single-field index can become a TTL index.
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"u": 1})")).ok());
  db = client_->GetDatabase("db");
  reply = test::CollModCommand(*client_, "db", "c",
                               R"({"index": {"name": "u_1", "expireAfterSeconds": 5}})");
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(ToJson(*reply, JsonFormat::kShell), "{ expireAfterSeconds_new: Long('5'), ok: 1 }");
}

TEST_F(TtlTest, CollModRefusesWhatItDoesNotImplement) {
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"t": 1})")).ok());
  Database db = client_->GetDatabase("db");
  EXPECT_EQ(test::CollModCommand(*client_, "db", "c", R"({"timeseries": {}})").status().code(),
            ErrorCode::kNotImplemented);
  EXPECT_EQ(test::CollModCommand(*client_, "db", "c",
                                 R"({"index": {"name": "t_1", "prepareUnique": true}})")
                .status()
                .code(),
            ErrorCode::kNotImplemented);
  Status s = test::CollModCommand(*client_, "db", "c", R"({"bogus": 1})").status();
  EXPECT_EQ(s.code(), ErrorCode::kUnknownBsonField);
  EXPECT_EQ(s.message(), "BSON field 'collMod.bogus' is an unknown field.");
  EXPECT_EQ(test::CollModCommand(*client_, "db", "missing",
                                 R"({"index": {"name": "t_1", "expireAfterSeconds": 1}})")
                .status()
                .code(),
            ErrorCode::kNamespaceNotFound);
  EXPECT_EQ(test::CollModCommand(*client_, "db", "c",
                                 R"({"index": {"name": "nope", "expireAfterSeconds": 1}})")
                .status()
                .code(),
            ErrorCode::kIndexNotFound);
  EXPECT_TRUE(test::CollModCommand(*client_, "db", "c", R"({"comment": "nothing to do"})").ok());
  // The API takes the changes typed, and checks their values as the
  // command's decoders do.
  CollModOptions change;
  change.index = CollModIndex{"t_1", Document(), int64_t{1} << 31};
  EXPECT_EQ(db.CollMod("c", change).status().code(), ErrorCode::kCannotCreateIndex);
  change.index->expire_after_seconds = 7;
  auto done = db.CollMod("c", change);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(done->expire_after_seconds_old.has_value());  // t_1 was not a TTL index
  EXPECT_EQ(done->expire_after_seconds_new, 7);
  CollModOptions capped;
  capped.capped_size = 0;
  EXPECT_EQ(db.CollMod("c", capped).status().code(), ErrorCode::kInvalidOptions);
}

TEST_F(TtlTest, CloseStopsTheMonitorPromptly) {
  Open(3600 * 1000);  // an hour between passes
  IndexOptions ttl;
  ttl.expire_after_seconds = 0;
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"t": 1})"), ttl).ok());
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(client_->Close().ok());
  // Bounded generously: Close must not wait out the period.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(TtlOptionsTest, ANegativePeriodIsRefusedAndZeroTurnsTheMonitorOff) {
  test::ScratchDir dir;
  ClientOptions options;
  options.ttl_monitor_period_ms = -1;
  EXPECT_EQ(Client::Open(dir.path(), options).status().code(), ErrorCode::kBadValue);
  options.ttl_monitor_period_ms = 0;
  auto client = Client::Open(dir.path(), options);
  ASSERT_TRUE(client.ok());
  Collection c = (*client)->GetDatabase("db").GetCollection("c");
  IndexOptions ttl;
  ttl.expire_after_seconds = 0;
  ASSERT_TRUE(c.CreateIndex(Json(R"({"t": 1})"), ttl).ok());
  ASSERT_TRUE(c.InsertOne(WithDate(1, "t", NowMs() - 1000)).ok());
  // Off: no monitor task at all (so no pass to wait for), and nothing goes.
  EXPECT_EQ(internal::ClientAccess::EngineOf((*client)->GetDatabase("db"))->runner().runs("ttl"), 0);
  EXPECT_EQ(c.CountDocuments(Json("{}")).value_or(-1), 1);
}

TEST(BackgroundRunnerTest, RunsTasksOnTheirPeriodAndStopsAtOnce) {
  internal::BackgroundRunner runner;
  std::atomic<int> fast{0};
  runner.Add("fast", 5, [&] { ++fast; });
  runner.Add("slow", 3600 * 1000, [] {});
  while (runner.runs("fast") < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE(runner.runs("fast"), 3);
  EXPECT_EQ(runner.runs("slow"), 0);
  runner.Stop();
  int after = fast.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(fast.load(), after);  // nothing runs after Stop
  runner.Stop();                  // idempotent
}

// A drop interrupted between its catalog write and its range delete leaves
// entries under an id nothing owns: the next open removes them.
TEST(ReclaimTest, DataUnderAnUnownedPrefixIsRemovedAtOpen) {
  test::ScratchDir dir;
  uint32_t orphan = 0;
  {
    auto client = Client::Open(dir.path());
    ASSERT_TRUE(client.ok());
    Collection c = (*client)->GetDatabase("db").GetCollection("c");
    ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1, "a": 1})")).ok());
    ASSERT_TRUE(c.CreateIndex(Json(R"({"a": 1})")).ok());
    ASSERT_TRUE((*client)->Close().ok());
  }
  {
    // Plant keys under a prefix id the catalog does not own.
    auto engine = internal::Engine::Open(dir.path(), ClientOptions());
    ASSERT_TRUE(engine.ok());
    orphan = 900;
    const internal::EngineRocks& rocks = (*engine)->rocks();
    for (int i = 0; i < 3; ++i) {
      std::string key = internal::PrefixKey(orphan) + std::string(1, static_cast<char>('a' + i));
      ASSERT_TRUE(rocks.db->Put(rocksdb::WriteOptions(), rocks.data_cf, key, "x").ok());
    }
    ASSERT_TRUE((*engine)->Close().ok());
  }
  auto client = Client::Open(dir.path());
  ASSERT_TRUE(client.ok()) << client.status();
  Collection c = (*client)->GetDatabase("db").GetCollection("c");
  EXPECT_EQ(c.CountDocuments(Json(R"({"a": 1})")).value_or(-1), 1);  // owned data intact
  auto v = c.Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
  ASSERT_TRUE((*client)->Close().ok());
  auto engine = internal::Engine::Open(dir.path(), ClientOptions());
  ASSERT_TRUE(engine.ok());
  const internal::EngineRocks& rocks = (*engine)->rocks();
  std::unique_ptr<rocksdb::Iterator> it(rocks.db->NewIterator(rocksdb::ReadOptions(), rocks.data_cf));
  it->Seek(internal::PrefixKey(orphan));
  EXPECT_FALSE(it->Valid() && it->key().starts_with(internal::PrefixKey(orphan)))
      << "the orphaned entries are still there";
}

}  // namespace
}  // namespace rockdoc

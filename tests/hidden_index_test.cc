// Hidden indexes (issue 39): kept by every write and enforced (unique, TTL)
// but invisible to the planner, hidden and shown again by collMod (mongosh's
// hideIndex / unhideIndex), through the library, the commands and the
// shell, with MongoDB's refusals (the _id index, system collections, a
// hint naming a hidden index). The truth for query answers is the same
// query forced to a collection scan ($natural).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "api/client_internal.h"
#include "common/background_runner.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using ::testing::HasSubstr;

class HiddenIndexTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open(int64_t ttl_period_ms = 0) {
    client_.reset();
    ClientOptions options;
    if (ttl_period_ms > 0) options.ttl_monitor_period_ms = ttl_period_ms;
    auto c = Client::Open(dir_.path(), options);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Collection Coll(std::string_view name = "c") const {
    return client_->GetDatabase("db").GetCollection(name);
  }
  StatusOr<Document> Command(std::string_view json) {
    return test::RunCommandOk(*client_, "db", Json(json));
  }
  // The winning plan's stages, outermost first: "FETCH IXSCAN".
  std::string Plan(std::string_view filter, const FindOptions& options = {}) {
    auto e = Coll().ExplainFind(Json(filter), options, ExplainVerbosity::kQueryPlanner);
    if (!e.ok()) return "error " + std::string(e.status().message());
    std::string out;
    Element stage = e->GetPath("queryPlanner.winningPlan");
    while (stage.IsDocument()) {
      Element name = stage.Document().Get("stage");
      if (name.IsString()) out += (out.empty() ? "" : " ") + std::string(name.String());
      stage = stage.Document().Get("inputStage");
    }
    return out;
  }
  // The documents a filter finds, in _id order: by the planner's choice,
  // and by a collection scan.
  std::vector<std::string> Found(std::string_view filter, bool scan = false) {
    FindOptions options;
    options.sort = Json(R"({"_id": 1})");
    if (scan) options.hint = Json(R"({"$natural": 1})");
    auto cursor = Coll().Find(Json(filter), options);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    std::vector<std::string> out;
    if (!cursor.ok()) return out;
    auto docs = cursor->ToVector();
    EXPECT_TRUE(docs.ok()) << docs.status();
    if (docs.ok()) {
      for (const Document& d : *docs) out.push_back(ToJson(d));
    }
    return out;
  }
  // The index named `name` as listIndexes shows it ("" when absent).
  std::string Spec(std::string_view name) {
    auto specs = Coll().ListIndexes();
    EXPECT_TRUE(specs.ok());
    if (!specs.ok()) return "";
    for (const Document& spec : *specs) {
      if (spec.Get("name").String() == name) return ToJson(spec);
    }
    return "";
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(HiddenIndexTest, ThePlannerDoesNotSeeItAndWritesKeepIt) {
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(Coll()
                    .InsertOne(Json("{\"_id\": " + std::to_string(i) +
                                    ", \"a\": " + std::to_string(i % 20) + "}"))
                    .ok());
  }
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"a": 1})")).ok());
  EXPECT_EQ(Plan(R"({"a": 5})"), "FETCH IXSCAN");

  auto hidden =
      test::CollModCommand(*client_, "db", "c", R"({"index": {"name": "a_1", "hidden": true}})");
  ASSERT_TRUE(hidden.ok()) << hidden.status();
  EXPECT_EQ(hidden->Get("hidden_old").Bool(), false);
  EXPECT_EQ(hidden->Get("hidden_new").Bool(), true);
  EXPECT_EQ(Plan(R"({"a": 5})"), "COLLSCAN");
  EXPECT_EQ(Plan(R"({"$or": [{"a": 5}, {"a": 6}]})"), "COLLSCAN");
  // A hint naming it is as one naming no index (MongoDB's BadValue, 2).
  FindOptions hint;
  hint.hint = Json(R"({"a": 1})");
  EXPECT_THAT(Plan(R"({"a": 5})", hint), HasSubstr("hint provided does not correspond"));
  EXPECT_EQ(Coll().Find(Json(R"({"a": 5})"), hint).status().code(), ErrorCode::kBadValue);
  FindOptions by_name;
  by_name.hint_name = "a_1";
  EXPECT_EQ(Coll().Find(Json(R"({"a": 5})"), by_name).status().code(), ErrorCode::kBadValue);

  // Writes while it is hidden: inserts, updates that move keys, deletes.
  for (int i = 200; i < 260; ++i) {
    ASSERT_TRUE(Coll().InsertOne(Json("{\"_id\": " + std::to_string(i) + ", \"a\": 5}")).ok());
  }
  ASSERT_TRUE(Coll().UpdateMany(Json(R"({"a": 6})"), Json(R"({"$set": {"a": 5}})")).ok());
  ASSERT_TRUE(Coll().DeleteMany(Json(R"({"_id": {"$lt": 40}, "a": 5})")).ok());

  // Shown again (by key pattern), it answers as a collection scan does.
  auto shown = test::CollModCommand(*client_, "db", "c",
                                    R"({"index": {"keyPattern": {"a": 1}, "hidden": false}})");
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_EQ(shown->Get("hidden_old").Bool(), true);
  EXPECT_EQ(shown->Get("hidden_new").Bool(), false);
  EXPECT_EQ(Plan(R"({"a": 5})"), "FETCH IXSCAN");
  for (const char* filter : {R"({"a": 5})", R"({"a": 6})", R"({"a": {"$gte": 3, "$lt": 8}})",
                             R"({"a": {"$in": [0, 5, 19]}})"}) {
    EXPECT_EQ(Found(filter), Found(filter, /*scan=*/true)) << filter;
  }
  EXPECT_EQ(Found(R"({"a": 5})").size(), 60u + 10u + 10u - 4u);
  auto valid = Coll().Validate();
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_TRUE(valid->valid);
}

TEST_F(HiddenIndexTest, UniqueStillHolds) {
  IndexOptions options;
  options.unique = true;
  options.hidden = true;  // created hidden, through the library
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"email": 1})"), options).ok());
  EXPECT_EQ(Spec("email_1"),
            R"({"v": 2, "key": {"email": 1}, "name": "email_1", "unique": true, "hidden": true})");
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 1, "email": "a@x"})")).ok());
  auto dup = Coll().InsertOne(Json(R"({"_id": 2, "email": "a@x"})"));
  EXPECT_EQ(dup.status().code(), ErrorCode::kDuplicateKey);
  EXPECT_EQ(Plan(R"({"email": "a@x"})"), "COLLSCAN");
}

TEST_F(HiddenIndexTest, ListedOnlyWhenHiddenAndKeptAcrossReopen) {
  ASSERT_TRUE(Command(R"({"createIndexes": "c", "indexes": [
      {"key": {"y": 1}, "name": "y", "hidden": false},
      {"key": {"z": 1}, "name": "z", "hidden": true}]})")
                  .ok());
  EXPECT_EQ(Spec("y"), R"({"v": 2, "key": {"y": 1}, "name": "y"})");
  EXPECT_EQ(Spec("z"), R"({"v": 2, "key": {"z": 1}, "name": "z", "hidden": true})");
  // A change to nothing: ok, and no hidden_old / hidden_new.
  auto same =
      test::CollModCommand(*client_, "db", "c", R"({"index": {"name": "z", "hidden": true}})");
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->Get("hidden_old").ok());
  EXPECT_FALSE(same->Get("hidden_new").ok());
  // Through the library: y hidden, z shown.
  CollModOptions hide_y;
  hide_y.index = CollModIndex{.name = "y", .hidden = true};
  auto r = client_->GetDatabase("db").CollMod("c", hide_y);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->hidden_old, std::optional<bool>(false));
  EXPECT_EQ(r->hidden_new, std::optional<bool>(true));
  CollModOptions show_z;
  show_z.index = CollModIndex{.name = "z", .hidden = false};
  ASSERT_TRUE(client_->GetDatabase("db").CollMod("c", show_z).ok());
  // Hidden together with a TTL change (MongoDB's hidden_index.js).
  ASSERT_TRUE(Command(R"({"createIndexes": "c", "indexes": [
      {"key": {"tm": 1}, "name": "tm_1", "expireAfterSeconds": 10}]})")
                  .ok());
  auto both = test::CollModCommand(
      *client_, "db", "c",
      R"({"index": {"name": "tm_1", "expireAfterSeconds": 1, "hidden": true}})");
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->Get("expireAfterSeconds_new").Int64(), 1);
  EXPECT_TRUE(both->Get("hidden_new").Bool());

  Open();  // the catalog keeps it
  EXPECT_EQ(Spec("y"), R"({"v": 2, "key": {"y": 1}, "name": "y", "hidden": true})");
  EXPECT_EQ(Spec("z"), R"({"v": 2, "key": {"z": 1}, "name": "z"})");
  EXPECT_EQ(
      Spec("tm_1"),
      R"({"v": 2, "key": {"tm": 1}, "name": "tm_1", "expireAfterSeconds": 1, "hidden": true})");
  EXPECT_EQ(Plan(R"({"y": 1})"), "COLLSCAN");
  EXPECT_EQ(Plan(R"({"z": 1})"), "FETCH IXSCAN");
  // $indexStats shows the specification as listIndexes does.
  const Document pipeline = Json(R"({"p": [{"$indexStats": {}}, {"$match": {"name": "y"}}]})");
  auto stats = Coll().Aggregate(pipeline.Get("p").Array());
  ASSERT_TRUE(stats.ok()) << stats.status();
  auto rows = stats->ToVector();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_TRUE((*rows)[0].GetPath("spec.hidden").Bool());
}

TEST_F(HiddenIndexTest, RefusedWhereMongoDBRefusesIt) {
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 1})")).ok());
  for (const char* which :
       {R"({"name": "_id_", "hidden": true})", R"({"keyPattern": {"_id": 1}, "hidden": true})"}) {
    auto r = test::CollModCommand(*client_, "db", "c", std::string(R"({"index": )") + which + "}");
    EXPECT_EQ(r.status().code(), ErrorCode::kBadValue) << which;
    EXPECT_EQ(r.status().message(), "can't hide _id index") << which;
  }
  auto id = Command(R"({"createIndexes": "c", "indexes": [
      {"key": {"_id": 1}, "name": "_id_", "hidden": true}]})");
  EXPECT_EQ(id.status().code(), ErrorCode::kBadValue);
  // A system collection's indexes.
  auto system = Command(R"({"createIndexes": "system.x", "indexes": [
      {"key": {"a": 1}, "name": "a_1", "hidden": true}]})");
  EXPECT_EQ(system.status().code(), ErrorCode::kBadValue);
  EXPECT_THAT(std::string(system.status().message()), HasSubstr("system collection"));
  // Types, as MongoDB's: a bool (or a number, as createIndexes' booleans).
  auto typed =
      test::CollModCommand(*client_, "db", "c", R"({"index": {"name": "a", "hidden": 1}})");
  EXPECT_EQ(typed.status().code(), ErrorCode::kTypeMismatch);
  auto spec = Command(R"({"createIndexes": "c", "indexes": [
      {"key": {"b": 1}, "name": "b_1", "hidden": "yes"}]})");
  EXPECT_EQ(spec.status().code(), ErrorCode::kTypeMismatch);
  // Nothing was created or changed by the refusals.
  auto names = Coll().ListIndexes();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(names->size(), 1u);  // _id_
}

// The TTL monitor still deletes through a hidden TTL index (MongoDB: "It is
// handled in the same way as other indexes by the index catalog and for TTL
// purposes"). No time is assumed: the monitor's passes are counted.
TEST_F(HiddenIndexTest, TtlStillDeletes) {
  Open(/*ttl_period_ms=*/20);
  IndexOptions ttl;
  ttl.expire_after_seconds = 60;
  ttl.hidden = true;
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"t": 1})"), ttl).ok());
  BsonBuilder old;
  old.AppendInt32("_id", 1).AppendDateTime("t", 0);  // 1970: long expired
  ASSERT_TRUE(Coll().InsertOne(std::move(old).Build()).ok());
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 2, "t": "not a date"})")).ok());
  auto* engine = internal::ClientAccess::EngineOf(client_->GetDatabase("db")).get();
  const int64_t target = engine->runner().runs("ttl") + 3;
  while (engine->runner().runs("ttl") < target) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(Found("{}"), (std::vector<std::string>{R"({"_id": 2, "t": "not a date"})"}));
}

}  // namespace
}  // namespace rockdoc

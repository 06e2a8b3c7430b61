// The profiler's view of updates and deletes (api/query_recorder.h's
// RecordWrite): entries in system.profile with the counts the writes
// report themselves, and nothing at level 0 or with statistics off.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

std::vector<Document> ProfileOf(const Database& db) {
  std::vector<Document> out;
  auto cursor = db.GetCollection("system.profile").Find(Document());
  EXPECT_TRUE(cursor.ok()) << cursor.status();
  if (!cursor.ok()) return out;
  while (cursor->Next()) out.push_back(Document::AdoptValidated(std::string(cursor->document().bytes())));
  return out;
}

void Fill(const Collection& c) {
  std::vector<Document> docs;
  for (int i = 0; i < 50; ++i) {
    docs.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"a\": " + std::to_string(i % 5) + "}"));
  }
  ASSERT_TRUE(c.InsertMany(docs).ok());
}

TEST(ProfilerWritesTest, UpdatesAndDeletesAreProfiledWithTheirCounts) {
  test::ScratchDir dir;
  auto client = Client::Open(dir.Sub("db"));
  ASSERT_TRUE(client.ok()) << client.status();
  Database db = (*client)->GetDatabase("app");
  Collection c = db.GetCollection("t");
  Fill(c);
  // Level 0: nothing is written.
  ASSERT_TRUE(c.UpdateMany(Json(R"({"a": 1})"), Json(R"({"$set": {"b": 1}})")).ok());
  EXPECT_TRUE(ProfileOf(db).empty());
  auto was = db.SetProfilingLevel(2);
  ASSERT_TRUE(was.ok()) << was.status();
  EXPECT_EQ(was->was, 0);
  auto updated = c.UpdateMany(Json(R"({"a": 1})"), Json(R"({"$inc": {"b": 1}})"));
  ASSERT_TRUE(updated.ok());
  auto deleted = c.DeleteOne(Json(R"({"a": 2})"));
  ASSERT_TRUE(deleted.ok());
  std::vector<Document> entries = ProfileOf(db);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].Get("op").String(), "update");
  EXPECT_EQ(entries[0].Get("ns").String(), "app.t");
  EXPECT_EQ(ToJson(entries[0].Get("command").Document()), R"({"q": {"a": 1}, "multi": true})");
  EXPECT_EQ(entries[0].Get("nMatched").AsExactInt64(), updated->matched_count);
  EXPECT_EQ(entries[0].Get("nModified").AsExactInt64(), updated->modified_count);
  EXPECT_EQ(entries[0].Get("docsExamined").AsExactInt64(), 50);  // a collection scan
  EXPECT_EQ(entries[0].Get("planSummary").String(), "COLLSCAN");
  EXPECT_EQ(entries[1].Get("op").String(), "remove");
  EXPECT_EQ(ToJson(entries[1].Get("command").Document()), R"({"q": {"a": 2}, "limit": 1})");
  EXPECT_EQ(entries[1].Get("ndeleted").AsExactInt64(), deleted->deleted_count);
  // With an index the plan says so.
  ASSERT_TRUE(c.CreateIndex(Json(R"({"a": 1})")).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"a": 3})"), Json(R"({"$set": {"c": 1}})")).ok());
  entries = ProfileOf(db);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[2].Get("planSummary").String(), "IXSCAN { a: 1 }");
  EXPECT_EQ(entries[2].Get("docsExamined").AsExactInt64(), 1);
}

TEST(ProfilerWritesTest, NothingWithStatisticsOff) {
  test::ScratchDir dir;
  ClientOptions options;
  options.collect_statistics = false;
  auto client = Client::Open(dir.Sub("db"), options);
  ASSERT_TRUE(client.ok()) << client.status();
  Database db = (*client)->GetDatabase("app");
  Fill(db.GetCollection("t"));
  EXPECT_EQ(db.SetProfilingLevel(2).status().code(), ErrorCode::kIllegalOperation);
  ASSERT_TRUE(db.SetProfilingLevel(0).ok());
  ASSERT_TRUE(db.GetCollection("t").UpdateMany(Json(R"({"a": 1})"), Json(R"({"$inc": {"b": 1}})")).ok());
  EXPECT_TRUE(ProfileOf(db).empty());
}

}  // namespace
}  // namespace rockdoc

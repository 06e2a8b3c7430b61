// The profiler's view of updates and deletes (api/query_recorder.h's
// RecordWrite): entries in system.profile with the counts the writes
// report themselves, and nothing at level 0 or with statistics off.
#include <gtest/gtest.h>

#include <optional>
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

// A $lookup of a name no collection can have (a NUL byte) is recorded
// without it, and the statistics persist and read back.
TEST(ProfilerWritesTest, ALookupOfAnImpossibleNameIsNotAPartner) {
  test::ScratchDir dir;
  auto client = Client::Open(dir.Sub("db"));
  ASSERT_TRUE(client.ok()) << client.status();
  Collection c = (*client)->GetDatabase("app").GetCollection("t");
  Fill(c);
  BsonBuilder b;
  b.OpenArray("p").OpenDocument("").OpenDocument("$lookup");
  b.AppendString("from", std::string("a\0b", 3)).AppendString("localField", "a");
  b.AppendString("foreignField", "_id").AppendString("as", "x");
  b.Close().Close().Close();
  const Document p = std::move(b).Build();
  {
    auto cursor = c.Aggregate(p.Get("p").Array());
    if (cursor.ok()) {
      while (cursor->Next()) {
      }
    }
  }
  ASSERT_TRUE((*client)->Close().ok());
  auto again = Client::Open(dir.Sub("db"));
  ASSERT_TRUE(again.ok()) << again.status();
}

// An aggregate's cursor may outlive its client and every handle: it is
// recorded when it goes (the engine kept alive), without a crash.
TEST(ProfilerWritesTest, AnAggregateCursorOutlivingItsClient) {
  test::ScratchDir dir;
  std::optional<Cursor> cursor;
  {
    auto client = Client::Open(dir.Sub("db"));
    ASSERT_TRUE(client.ok()) << client.status();
    Collection c = (*client)->GetDatabase("app").GetCollection("t");
    Fill(c);
    auto opened = c.Aggregate(Json(R"({"p": [{"$match": {"a": 1}}]})").Get("p").Array());
    ASSERT_TRUE(opened.ok());
    cursor.emplace(std::move(opened).value());
    ASSERT_TRUE(cursor->Next());
  }
  cursor.reset();
}

}  // namespace
}  // namespace rockdoc

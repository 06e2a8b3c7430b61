// In-memory databases (issue 41): ":memory:" and ClientOptions::in_memory
// open a database that lives and dies with its Client, with no file read or
// written anywhere (checked on the directory a path names, and on the
// working directory, which ":memory:" would otherwise be created in), each
// Open its own; everything else (indexes, aggregation and its spilling,
// transactions, compaction, statistics) as on disk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

namespace fs = std::filesystem;
using test::Json;

// Runs the test in a scratch working directory, so that a stray
// ":memory:" directory (the old behaviour) would be seen and removed.
class InMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    old_cwd_ = fs::current_path();
    fs::current_path(cwd_.path());
  }
  void TearDown() override { fs::current_path(old_cwd_); }
  // Every entry under the scratch working directory.
  std::vector<std::string> FilesHere() const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(cwd_.path())) {
      out.push_back(e.path().string());
    }
    return out;
  }
  static std::unique_ptr<Client> OpenOrDie(const std::string& path,
                                           const ClientOptions& options = {}) {
    auto c = Client::Open(path, options);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  test::ScratchDir cwd_;
  fs::path old_cwd_;
};

TEST_F(InMemoryTest, WorksAsOnDiskAndWritesNoFile) {
  auto client = OpenOrDie(kInMemoryPath);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->path(), ":memory:");
  Collection c = client->GetDatabase("db").GetCollection("c");
  std::vector<Document> docs;
  for (int i = 0; i < 2000; ++i) {
    docs.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"g\": " + std::to_string(i % 7) +
                        ", \"s\": \"" + std::string(static_cast<size_t>(i % 50), 'x') + "\"}"));
  }
  ASSERT_TRUE(c.InsertMany(docs).ok());
  ASSERT_TRUE(c.CreateIndex(Json(R"({"g": 1})")).ok());
  auto plan = c.ExplainFind(Json(R"({"g": 3})"), FindOptions{}, ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->GetPath("queryPlanner.winningPlan.inputStage.stage").String(), "IXSCAN");
  EXPECT_EQ(c.CountDocuments(Json(R"({"g": 3})")).value_or(-1), 286);
  ASSERT_TRUE(c.UpdateMany(Json(R"({"g": 3})"), Json(R"({"$inc": {"g": 10}})")).ok());
  EXPECT_EQ(c.CountDocuments(Json(R"({"g": 13})")).value_or(-1), 286);

  // A $group that spills (allowDiskUse) spills into memory, and answers as
  // the same $group in memory does.
  const Document p =
      Json(R"({"p": [{"$group": {"_id": "$g", "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}]})");
  auto answer = [&](int64_t limit) {
    AggregateOptions options;
    options.allow_disk_use = true;
    options.max_blocking_stage_bytes = limit;
    std::string out;
    auto cursor = c.Aggregate(p.Get("p").Array(), options);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    if (!cursor.ok()) return out;
    while (cursor->Next()) out += ToJson(cursor->document());
    EXPECT_TRUE(cursor->status().ok()) << cursor->status();
    return out;
  };
  const std::string roomy = answer(int64_t{100} << 20);
  EXPECT_THAT(roomy, ::testing::HasSubstr(R"({"_id": 13, "n": 286})"));
  EXPECT_EQ(answer(100), roomy);
  AggregateOptions spilling;
  spilling.allow_disk_use = true;
  spilling.max_blocking_stage_bytes = 100;
  auto explained =
      c.ExplainAggregate(p.Get("p").Array(), spilling, ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_THAT(ToJson(*explained), ::testing::HasSubstr(R"("usedDisk": true)"));

  // A transaction, compaction and the storage statistics.
  auto session = client->StartSession();
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(session->StartTransaction().ok());
  ASSERT_TRUE(session->GetDatabase("db").GetCollection("c").DeleteMany(Json(R"({"g": 13})")).ok());
  ASSERT_TRUE(session->CommitTransaction().ok());
  EXPECT_EQ(c.CountDocuments(Json("{}")).value_or(-1), 2000 - 286);
  ASSERT_TRUE(client->Compact().ok());
  EXPECT_GT(client->GetStorageStats().live_sst_bytes, 0u);
  auto valid = c.Validate();
  ASSERT_TRUE(valid.ok());
  EXPECT_TRUE(valid->valid);
  // A journaled write (writeConcern j: true) is acknowledged, with no
  // writeConcernError: there is no log to sync.
  Document reply = client->RunCommand(
      "db", Json(R"({"insert": "c", "documents": [{"_id": -1}], "writeConcern": {"j": true}})"));
  EXPECT_EQ(reply.Get("ok").NumberAsDouble(), 1.0) << ToJson(reply);
  EXPECT_FALSE(reply.Get("writeConcernError").ok()) << ToJson(reply);
  EXPECT_EQ(reply.Get("n").Int32(), 1) << ToJson(reply);
  // No files to copy.
  EXPECT_EQ(client->Checkpoint(cwd_.Sub("copy")).code(), ErrorCode::kIllegalOperation);
  ASSERT_TRUE(client->Close().ok());
  EXPECT_THAT(FilesHere(), ::testing::IsEmpty());
}

TEST_F(InMemoryTest, EachOpenIsANewDatabaseAndCloseLosesIt) {
  auto a = OpenOrDie(kInMemoryPath);
  auto b = OpenOrDie(kInMemoryPath);  // no DBPathInUse: another database
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->GetDatabase("db").GetCollection("c").InsertOne(Json(R"({"_id": 1})")).ok());
  EXPECT_EQ(b->GetDatabase("db").GetCollection("c").CountDocuments(Json("{}")).value_or(-1), 0);
  ASSERT_TRUE(a->Close().ok());
  a = OpenOrDie(kInMemoryPath);
  ASSERT_NE(a, nullptr);
  auto names = a->ListDatabaseNames();
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ::testing::IsEmpty());
  EXPECT_THAT(FilesHere(), ::testing::IsEmpty());
}

TEST_F(InMemoryTest, TheOptionIgnoresThePathsDirectory) {
  ClientOptions options;
  options.in_memory = true;
  const std::string path = cwd_.Sub("would-be-db");
  auto client = OpenOrDie(path, options);
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->path(), ":memory:");
  ASSERT_TRUE(client->GetDatabase("db").GetCollection("c").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(client->Close().ok());
  EXPECT_FALSE(fs::exists(path));
  EXPECT_THAT(FilesHere(), ::testing::IsEmpty());
}

}  // namespace
}  // namespace rockdoc

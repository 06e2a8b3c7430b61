// Read-only clients (issue 41, several processes): a client opened with
// ClientOptions::read_only reads a directory that another client (in this
// process here; tests/read_only_process_test.sh does it across processes)
// owns for writing, follows the owner's writes, writes nothing into the
// directory, and refuses every write with IllegalOperation naming the owner.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

ClientOptions ReadOnly() {
  ClientOptions o;
  o.read_only = true;
  return o;
}

int64_t Count(const Client& client, std::string_view coll, std::string_view filter = "{}") {
  auto n = client.GetDatabase("db").GetCollection(std::string(coll)).CountDocuments(Json(filter));
  EXPECT_TRUE(n.ok()) << n.status() << " counting " << filter;
  return n.ok() ? *n : -1;
}

// Every file in a directory with its size and contents' hash: what a
// read-only client must leave as it was.
std::map<std::string, std::string> Listing(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    files[fs::relative(e.path(), dir).string()] =
        std::to_string(bytes.size()) + ":" + std::to_string(std::hash<std::string>()(bytes));
  }
  return files;
}

class ReadOnlyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    owner_ = std::move(c).value();
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(Owner("c").InsertOne(Json("{\"_id\": " + std::to_string(i) + ", \"k\": " +
                                            std::to_string(i % 3) + "}"))
                      .ok());
    }
  }
  Collection Owner(const std::string& name) { return owner_->GetDatabase("db").GetCollection(name); }
  std::unique_ptr<Client> OpenReader() {
    auto c = Client::Open(dir_.Sub("db"), ReadOnly());
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> owner_;
};

TEST_F(ReadOnlyTest, ReadsAndFollowsTheOwnersWrites) {
  std::unique_ptr<Client> reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->read_only());
  EXPECT_FALSE(owner_->read_only());
  EXPECT_EQ(Count(*reader, "c"), 10);
  EXPECT_EQ(Count(*reader, "c", R"({"k": 1})"), 3);

  // Documents, then a new collection with an index, then a drop: each seen
  // at the next operation, without reopening.
  ASSERT_TRUE(Owner("c").InsertOne(Json(R"({"_id": 100, "k": 1})")).ok());
  EXPECT_EQ(Count(*reader, "c", R"({"k": 1})"), 4);
  ASSERT_TRUE(Owner("d").InsertOne(Json(R"({"_id": 1, "x": "new"})")).ok());
  ASSERT_TRUE(Owner("d").CreateIndex(Json(R"({"x": 1})"), {}).ok());
  auto names = reader->GetDatabase("db").ListCollectionNames();
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ::testing::UnorderedElementsAre("c", "d"));
  auto plan = reader->GetDatabase("db").GetCollection("d").ExplainFind(
      Json(R"({"x": "new"})"), {}, ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(ToJson(*plan), HasSubstr("x_1"));
  EXPECT_EQ(Count(*reader, "d", R"({"x": "new"})"), 1);
  ASSERT_TRUE(owner_->GetDatabase("db").GetCollection("c").Drop().ok());
  names = reader->GetDatabase("db").ListCollectionNames();
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ::testing::ElementsAre("d"));
  EXPECT_TRUE(reader->CatchUp().ok());
  EXPECT_TRUE(owner_->CatchUp().ok());  // nothing for a writer
}

TEST_F(ReadOnlyTest, ACursorKeepsItsSnapshotWhileTheOwnerWrites) {
  std::unique_ptr<Client> reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  FindOptions small;
  small.sort = Json(R"({"_id": 1})");
  auto cursor = reader->GetDatabase("db").GetCollection("c").Find(Json("{}"), small);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  ASSERT_TRUE(cursor->Next()) << cursor->status();
  ASSERT_TRUE(Owner("c").DeleteMany(Json("{}")).ok());
  ASSERT_TRUE(reader->CatchUp().ok());
  int seen = 1;
  while (cursor->Next()) ++seen;
  ASSERT_TRUE(cursor->status().ok()) << cursor->status();
  EXPECT_EQ(seen, 10);  // the cursor's view, from before the deletes
  EXPECT_EQ(Count(*reader, "c"), 0);  // a new operation sees them
}

TEST_F(ReadOnlyTest, EveryWriteIsRefusedNamingTheOwner) {
  std::unique_ptr<Client> reader = OpenReader();
  ASSERT_NE(reader, nullptr);
  Collection c = reader->GetDatabase("db").GetCollection("c");
  auto refused = [](const Status& s, const char* what) {
    EXPECT_EQ(s.code(), ErrorCode::kIllegalOperation) << what << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("read-only")) << what;
    EXPECT_THAT(std::string(s.message()), HasSubstr("this process")) << what;  // the owner
  };
  refused(c.InsertOne(Json(R"({"_id": 50})")).status(), "insert");
  refused(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"k": 9}})")).status(), "update");
  refused(c.DeleteOne(Json(R"({"_id": 1})")).status(), "delete");
  refused(c.CreateIndex(Json(R"({"k": 1})"), {}).status(), "createIndex");
  refused(reader->GetDatabase("db").CreateCollection("e"), "create");
  refused(reader->GetDatabase("db").GetCollection("brand_new").InsertOne(Json("{}")).status(),
          "an insert that would create a collection");
  refused(c.Drop(), "drop");
  refused(reader->Compact(), "compact");
  refused(reader->Checkpoint(dir_.Sub("copy")), "checkpoint");
  auto session = reader->StartSession();
  ASSERT_TRUE(session.ok());
  Status txn = session->WithTransaction([&](Session& s) -> Status {
    return s.GetDatabase("db").GetCollection("c").InsertOne(Json(R"({"_id": 51})")).status();
  });
  EXPECT_EQ(txn.code(), ErrorCode::kIllegalOperation) << txn;
  // Nothing changed: the owner sees its ten documents, and the reader too.
  EXPECT_EQ(Count(*owner_, "c"), 10);
  EXPECT_EQ(Count(*reader, "c"), 10);
  EXPECT_FALSE(fs::exists(dir_.Sub("copy")));
  // No change streams on a read-only client.
  auto stream = c.Watch();
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(static_cast<int>(stream.status().code()), 40573);
  EXPECT_THAT(std::string(stream.status().message()), HasSubstr("read-only"));
}

TEST_F(ReadOnlyTest, WithoutAnOwnerNothingInTheDirectoryChanges) {
  ASSERT_TRUE(owner_->Close().ok());
  owner_.reset();
  const auto before = Listing(dir_.Sub("db"));
  {
    std::unique_ptr<Client> reader = OpenReader();
    ASSERT_NE(reader, nullptr);
    EXPECT_EQ(Count(*reader, "c"), 10);
    Status s = reader->GetDatabase("db").GetCollection("c").InsertOne(Json("{}")).status();
    EXPECT_THAT(std::string(s.message()), HasSubstr("no process owns it for writing now"));
    // Two readers at once, and an aggregation that spills (outside the
    // directory).
    std::unique_ptr<Client> second = OpenReader();
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(Count(*second, "c", R"({"k": 2})"), 3);
    ASSERT_TRUE(reader->Close().ok());
  }
  EXPECT_EQ(Listing(dir_.Sub("db")), before);
  // The owner can come back while nothing holds the directory.
  auto again = Client::Open(dir_.Sub("db"));
  ASSERT_TRUE(again.ok()) << again.status();
}

TEST(ReadOnlyOpenTest, WhatCannotBeOpenedReadOnly) {
  test::ScratchDir dir;
  auto missing = Client::Open(dir.Sub("none"), ReadOnly());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNonExistentPath);
  EXPECT_FALSE(fs::exists(dir.Sub("none")));  // created nothing
  fs::create_directories(dir.Sub("empty"));
  auto empty = Client::Open(dir.Sub("empty"), ReadOnly());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), ErrorCode::kNonExistentPath);
  EXPECT_TRUE(fs::is_empty(dir.Sub("empty")));
  ClientOptions memory = ReadOnly();
  memory.in_memory = true;
  auto in_memory = Client::Open("x", memory);
  ASSERT_FALSE(in_memory.ok());
  EXPECT_EQ(in_memory.status().code(), ErrorCode::kInvalidOptions);
  fs::create_directories(dir.Sub("other"));
  std::ofstream(dir.Sub("other") + "/notes.txt") << "hello";
  auto other = Client::Open(dir.Sub("other"), ReadOnly());
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), ErrorCode::kUnsupportedFormat);
}

}  // namespace
}  // namespace rockdoc

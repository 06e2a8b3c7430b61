// Every aggregation stage MongoDB's manual lists that rockdoc supports parses
// and runs, through the public API only, so that the same source checks both
// libraries: as pipeline_stages_test it links the static archive (librockdoc.a,
// as installed), as pipeline_stages_shared_test the shared library
// (librockdoc.so). Each stage file registers its stages with the stage table
// (pipeline/stage.h); a stage the linker dropped from either library would be
// "Unrecognized pipeline stage name" here. Unknown names keep MongoDB's
// 40324, $changeStream its 40573 and MongoDB's other stages 238.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"

namespace rockdoc {
namespace {

class PipelineStagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/rockdoc_pipeline_stages_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    // In memory under CTest's in_memory label (tests/test_util.h's
    // TestClientOptions, which this public-API-only test cannot include).
    ClientOptions options;
    const char* in_memory = std::getenv("ROCKDOC_TEST_IN_MEMORY");
    options.in_memory = in_memory != nullptr && std::string(in_memory) == "1";
    auto client = Client::Open(dir_ + "/db", options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    Command("app", R"({"insert": "c", "documents": [
        {"_id": 1, "g": "x", "n": 1, "t": {"$date": "2024-01-01T00:00:00Z"}, "tags": ["a", "b"], "p": null},
        {"_id": 2, "g": "y", "n": 3, "t": {"$date": "2024-01-03T00:00:00Z"}, "tags": [], "p": 1},
        {"_id": 3, "g": "x", "n": 5, "tags": ["c"], "p": 2}]})");
    Command("app", R"({"insert": "f", "documents": [{"_id": 10, "g": "x", "v": "fx"}]})");
  }
  void TearDown() override {
    client_.reset();
    std::filesystem::remove_all(dir_);
  }

  Document Command(std::string_view db, std::string_view json) {
    StatusOr<Document> command = FromJson(json);
    EXPECT_TRUE(command.ok()) << json;
    if (!command.ok()) return Document();
    return client_->RunCommand(db, command->view());
  }

  // The first batch of {aggregate: <coll>, pipeline: <pipeline>} in `db`,
  // as JSON documents joined by ", ", or "<code>: <errmsg>".
  std::string Aggregate(std::string_view db, std::string_view coll, std::string_view pipeline) {
    const std::string target = coll == "1" ? "1" : "\"" + std::string(coll) + "\"";
    Document reply = Command(db, "{\"aggregate\": " + target + ", \"pipeline\": " +
                                     std::string(pipeline) + ", \"cursor\": {}}");
    if (reply.Get("ok").NumberAsDouble() != 1) {
      return std::to_string(reply.Get("code").Int32()) + ": " +
             std::string(reply.Get("errmsg").String());
    }
    std::string out;
    for (const Element& d : reply.GetPath("cursor.firstBatch").Array()) {
      out += (out.empty() ? "" : ", ") + ToJson(d.Document());
    }
    return out;
  }
  std::string Aggregate(std::string_view pipeline) { return Aggregate("app", "c", pipeline); }

  std::string dir_;
  std::unique_ptr<Client> client_;
};

// Each stage after a $set (so that it runs as a stage, not as part of the
// pipeline's find), with the output the manual's semantics give.
TEST_F(PipelineStagesTest, EveryStageTheManualListsRunsAsAStage) {
  const std::string lead = R"({"$set": {"k": 1}}, )";
  struct Case {
    std::string_view stage;
    std::string_view expected;
  };
  const std::vector<Case> cases = {
      {R"({"$match": {"n": {"$gt": 2}}}, {"$project": {"n": 1}})", R"({"_id": 2, "n": 3}, {"_id": 3, "n": 5})"},
      {R"({"$project": {"_id": 0, "g": 1}}, {"$limit": 1})", R"({"g": "x"})"},
      {R"({"$addFields": {"m": {"$add": ["$n", 1]}}}, {"$project": {"m": 1}}, {"$limit": 1})", R"({"_id": 1, "m": 2})"},
      {R"({"$set": {"m": "$g"}}, {"$project": {"m": 1}}, {"$limit": 1})", R"({"_id": 1, "m": "x"})"},
      {R"({"$unset": ["g", "n", "t", "tags", "p", "k"]}, {"$limit": 1})", R"({"_id": 1})"},
      {R"({"$replaceRoot": {"newRoot": {"x": "$n"}}}, {"$limit": 1})", R"({"x": 1})"},
      {R"({"$replaceWith": {"x": "$g"}}, {"$limit": 1})", R"({"x": "x"})"},
      {R"({"$sort": {"n": -1}}, {"$project": {"n": 1}}, {"$limit": 1})", R"({"_id": 3, "n": 5})"},
      {R"({"$skip": 2}, {"$project": {"n": 1}})", R"({"_id": 3, "n": 5})"},
      {R"({"$limit": 1}, {"$project": {"n": 1}})", R"({"_id": 1, "n": 1})"},
      {R"({"$count": "total"})", R"({"total": 3})"},
      {R"({"$group": {"_id": "$g", "s": {"$sum": "$n"}}}, {"$sort": {"_id": 1}})", R"({"_id": "x", "s": 6}, {"_id": "y", "s": 3})"},
      {R"({"$sortByCount": "$g"})", R"({"_id": "x", "count": 2}, {"_id": "y", "count": 1})"},
      {R"({"$unwind": "$tags"}, {"$project": {"tags": 1}})", R"({"_id": 1, "tags": "a"}, {"_id": 1, "tags": "b"}, {"_id": 3, "tags": "c"})"},
      {R"({"$lookup": {"from": "f", "localField": "g", "foreignField": "g", "as": "j"}}, {"$project": {"j.v": 1}}, {"$limit": 1})", R"({"_id": 1, "j": [{"v": "fx"}]})"},
      {R"({"$unionWith": "f"}, {"$project": {"v": 1}}, {"$skip": 3})", R"({"_id": 10, "v": "fx"})"},
      {R"({"$sample": {"size": 3}}, {"$count": "n"})", R"({"n": 3})"},
      {R"({"$facet": {"a": [{"$count": "n"}], "b": [{"$limit": 1}, {"$project": {"g": 1}}]}})", R"({"a": [{"n": 3}], "b": [{"_id": 1, "g": "x"}]})"},
      {R"({"$bucket": {"groupBy": "$n", "boundaries": [0, 4, 10]}})", R"({"_id": 0, "count": 2}, {"_id": 4, "count": 1})"},
      {R"({"$bucketAuto": {"groupBy": "$n", "buckets": 1}})", R"({"_id": {"min": 1, "max": 5}, "count": 3})"},
      {R"({"$redact": {"$cond": [{"$eq": ["$g", "y"]}, "$$PRUNE", "$$KEEP"]}}, {"$project": {"n": 1}})", R"({"_id": 1, "n": 1}, {"_id": 3, "n": 5})"},
      {R"({"$graphLookup": {"from": "c", "startWith": "$p", "connectFromField": "p", "connectToField": "_id", "as": "up"}}, {"$project": {"up._id": 1}}, {"$skip": 2})", R"({"_id": 3, "up": [{"_id": 2}, {"_id": 1}]})"},
      {R"({"$setWindowFields": {"sortBy": {"n": 1}, "output": {"r": {"$sum": "$n", "window": {"documents": ["unbounded", "current"]}}}}}, {"$project": {"r": 1}})", R"({"_id": 1, "r": 1}, {"_id": 2, "r": 4}, {"_id": 3, "r": 9})"},
      {R"({"$match": {"t": {"$exists": true}}}, {"$densify": {"field": "t", "range": {"step": 1, "unit": "day", "bounds": "full"}}}, {"$project": {"_id": 0, "t": 1}})", R"({"t": {"$date": "2024-01-01T00:00:00Z"}}, {"t": {"$date": "2024-01-02T00:00:00Z"}}, {"t": {"$date": "2024-01-03T00:00:00Z"}})"},
      {R"({"$fill": {"sortBy": {"n": 1}, "output": {"p": {"method": "locf"}}}}, {"$project": {"p": 1}})", R"({"_id": 1, "p": null}, {"_id": 2, "p": 1}, {"_id": 3, "p": 2})"},
      {R"({"$out": "o"})", ""},
      {R"({"$merge": {"into": "m"}})", ""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Aggregate("[" + lead + std::string(c.stage) + "]"), c.expected) << c.stage;
  }
  // $out and $merge wrote their targets.
  EXPECT_EQ(Aggregate("app", "o", R"([{"$count": "n"}])"), R"({"n": 3})");
  EXPECT_EQ(Aggregate("app", "m", R"([{"$count": "n"}])"), R"({"n": 3})");
}

// The stages that open a pipeline in place of its find.
TEST_F(PipelineStagesTest, SourceStagesRunFirst) {
  EXPECT_EQ(Aggregate(R"([{"$collStats": {"count": {}}}, {"$project": {"_id": 0, "ns": 1, "count": 1}}])"),
            R"({"ns": "app.c", "count": 3})");
  EXPECT_EQ(Aggregate(R"([{"$indexStats": {}}, {"$project": {"_id": 0, "name": 1}}])"),
            R"({"name": "_id_"})");
  EXPECT_EQ(Aggregate("app", "1", R"([{"$documents": [{"a": 1}, {"a": 2}]}, {"$match": {"a": 2}}])"),
            R"({"a": 2})");
  EXPECT_EQ(Aggregate("admin", "1", R"([{"$queryStats": {}}, {"$count": "n"}, {"$match": {"n": -1}}])"),
            "");
  // Anywhere but first: 40602.
  EXPECT_EQ(Aggregate(R"([{"$set": {"k": 1}}, {"$documents": []}])"),
            "40602: $documents is only valid as the first stage in a pipeline");
  EXPECT_EQ(Aggregate(R"([{"$set": {"k": 1}}, {"$collStats": {}}])"),
            "40602: $collStats is only valid as the first stage in a pipeline");
}

TEST_F(PipelineStagesTest, PlacesAndRefusalsKeepMongoDBsErrors) {
  EXPECT_EQ(Aggregate(R"([{"$set": {"k": 1}}, {"$x": {}}])"),
            "40324: Unrecognized pipeline stage name: '$x'");
  EXPECT_EQ(Aggregate(R"([{"$x": {}}])"), "40324: Unrecognized pipeline stage name: '$x'");
  // The command opens a change stream (tests/change_stream_test.cc), with
  // the change log on (off here, as on a standalone mongod). The library's
  // Aggregate points at Watch.
  EXPECT_EQ(Aggregate(R"([{"$changeStream": {}}])"),
            "40573: The $changeStream stage is only supported on replica sets (rockdoc: "
            "ClientOptions::change_log is off)");
  auto pipeline = FromJson(R"({"p": [{"$changeStream": {}}]})");
  ASSERT_TRUE(pipeline.ok());
  auto opened =
      client_->GetDatabase("app").GetCollection("c").Aggregate(pipeline->Get("p").Array());
  EXPECT_EQ(opened.status().ToString(),
            "Location40573 (40573): The $changeStream stage opens a change stream, which "
            "Collection::Watch, Database::Watch and Client::Watch (or the aggregate command) "
            "open; Aggregate runs pipelines over a snapshot");
  EXPECT_EQ(Aggregate(R"([{"$geoNear": {}}])"),
            "2: $geoNear requires a 'near' option as an Array or Object");
  EXPECT_EQ(Aggregate(R"([{"$out": "o"}, {"$set": {"k": 1}}])"),
            "40601: $out can only be the final stage in the pipeline");
  EXPECT_EQ(Aggregate(R"([{"$facet": {"a": [{"$merge": {"into": "m"}}]}}])"),
            "40600: $merge is not allowed to be used within a $facet stage");
  EXPECT_EQ(Aggregate(R"([{"$facet": {"a": [{"$facet": {"b": []}}]}}])"),
            "40600: $facet is not allowed to be used within a $facet stage");
}

}  // namespace
}  // namespace rockdoc

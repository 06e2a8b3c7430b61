// Spilling blocking stages (aggregate's allowDiskUse): $sort and $group past
// their memory limit write sorted runs (storage/spill.h) and answer exactly
// what they answer in memory. The truth is the same pipeline run with room
// enough; the runs are real, in a real database directory's _tmp/.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "pipeline/pipeline.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/spill.h"
#include "test_util.h"
#include "vector_find.h"

namespace rockdoc {
namespace {

using test::Json;

// Random documents: a group key g (40 values, some missing or null), a
// number v (some missing, null or double), a string s from a few, an
// object o, so that every accumulator sees ties, gaps and types.
std::vector<Document> RandomDocuments(uint32_t seed, int count) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  std::vector<Document> docs;
  for (int i = 0; i < count; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i);
    const int g = pick(42);
    if (g == 40) {
      b.AppendNull("g");
    } else if (g < 40) {
      b.AppendInt32("g", g);
    }
    const int kind = pick(10);
    if (kind == 0) {
      b.AppendNull("v");
    } else if (kind == 1) {
      b.AppendDouble("v", pick(100) / 4.0);
    } else if (kind == 3) {
      // Decimals make a group's sums decimal; their partial states (the
      // decimal total beside the binary one) must merge as they add.
      Decimal128::Parts parts;
      parts.coefficient_low = static_cast<uint64_t>(pick(1000));
      parts.exponent = -2;
      b.AppendDecimal128("v", Decimal128::FromParts(parts));
    } else if (kind != 2) {
      b.AppendInt32("v", pick(101) - 50);
    }
    static const char* kWords[] = {"ant", "bee", "cat", "dog", "eel", "fox", "gnu"};
    b.AppendString("s", kWords[pick(7)]);
    b.OpenDocument("o");
    b.AppendInt32(std::string("k") + std::to_string(pick(5)), i);
    b.Close();
    b.AppendString("pad", std::string(static_cast<size_t>(pick(40)), 'x'));
    docs.push_back(std::move(b).Build());
  }
  return docs;
}

class SpillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = internal::Engine::Open(dir_.Sub("db"), ClientOptions{});
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = std::move(e).value();
    docs_ = RandomDocuments(7, 3000);
  }
  void TearDown() override {
    if (engine_) EXPECT_TRUE(engine_->Close().ok());
  }

  std::string SpillFolder() const { return dir_.Sub("db") + "/_tmp"; }
  int SpilledFiles() const {
    std::error_code ec;
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(SpillFolder(), ec)) {
      (void)e;
      ++n;
    }
    return n;
  }

  internal::PipelineOptions Options(int64_t memory_limit, bool allow_disk_use) {
    internal::PipelineOptions o;
    o.memory_limit = memory_limit;
    o.allow_disk_use = allow_disk_use;
    o.new_spill_run = [this] {
      ++runs_opened_;
      return internal::NewSpillRun(*engine_);
    };
    return o;
  }

  // The pipeline's output, or its error; `files_seen` gets the most files
  // _tmp/ held while the output was read.
  StatusOr<std::vector<Document>> Run(std::string_view pipeline_json,
                                      const internal::PipelineOptions& options,
                                      int* files_seen = nullptr) {
    Document p = Json(std::string("{\"p\": ") + std::string(pipeline_json) + "}");
    ROCKDOC_ASSIGN_OR_RETURN(auto source, internal::OpenPipeline("c", p.Get("p").Array(), options,
                                                                 test::VectorFind(&docs_)));
    std::vector<Document> out;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> d, source->Next());
      if (files_seen != nullptr) *files_seen = std::max(*files_seen, SpilledFiles());
      if (!d) break;
      out.push_back(std::move(*d));
    }
    return out;
  }

  static std::string Lines(const std::vector<Document>& docs) {
    std::string out;
    for (const Document& d : docs) out += ToJson(d) + "\n";
    return out;
  }
  static std::vector<Document> ById(std::vector<Document> docs) {
    std::stable_sort(docs.begin(), docs.end(), [](const Document& a, const Document& b) {
      return CompareValues(a.Get("_id"), b.Get("_id")) < 0;
    });
    return docs;
  }

  test::ScratchDir dir_;
  std::shared_ptr<internal::Engine> engine_;
  std::vector<Document> docs_;
  int runs_opened_ = 0;
};

constexpr int64_t kRoomEnough = int64_t{1} << 30;

TEST_F(SpillTest, SortSpillsAndKeepsTheInMemoryOrder) {
  // {g: 1} has many ties (stability shows), {s: -1, v: 1} a compound key
  // over mixed types and missing values. (A leading $sort would be the
  // find's: the $set keeps these in the pipeline.)
  for (const char* pipeline :
       {R"([{"$set": {"x": 1}}, {"$sort": {"g": 1}}])",
        R"([{"$set": {"x": 1}}, {"$sort": {"s": -1, "v": 1}}])",
        R"([{"$set": {"x": 1}}, {"$sort": {"v": -1}}, {"$limit": 2500}, {"$project": {"pad": 0}}])"}) {
    SCOPED_TRACE(pipeline);
    auto truth = Run(pipeline, Options(kRoomEnough, false));
    ASSERT_TRUE(truth.ok()) << truth.status();
    ASSERT_EQ(truth->size(), std::string(pipeline).find("limit") != std::string::npos ? 2500u : 3000u);
    runs_opened_ = 0;
    int files = 0;
    auto spilled = Run(pipeline, Options(20 * 1000, true), &files);
    ASSERT_TRUE(spilled.ok()) << spilled.status();
    EXPECT_GE(runs_opened_, 5);  // ~300 KB through a 20 KB buffer
    EXPECT_GE(files, 5);
    EXPECT_EQ(Lines(*spilled), Lines(*truth));
    EXPECT_EQ(SpilledFiles(), 0);  // every run's file is gone once read
  }
}

TEST_F(SpillTest, GroupSpillsPartialStatesAndMergesThem) {
  // Every accumulator, over groups that span every run.
  const char* pipeline = R"([{"$group": {"_id": "$g",
      "n": {"$count": {}}, "s": {"$sum": "$v"}, "a": {"$avg": "$v"}, "mn": {"$min": "$s"},
      "mx": {"$max": "$v"}, "f": {"$first": "$v"}, "l": {"$last": "$v"}, "p": {"$push": "$v"},
      "u": {"$addToSet": "$s"}, "m": {"$mergeObjects": "$o"}, "sd": {"$stdDevPop": "$v"},
      "ss": {"$stdDevSamp": "$v"}, "fn": {"$firstN": {"input": "$v", "n": 3}},
      "ln": {"$lastN": {"input": "$v", "n": 3}}, "xn": {"$maxN": {"input": "$v", "n": 2}},
      "nn": {"$minN": {"input": "$s", "n": 2}}, "t": {"$top": {"sortBy": {"v": 1}, "output": "$s"}},
      "b": {"$bottom": {"sortBy": {"v": 1}, "output": ["$s", "$_id"]}},
      "tn": {"$topN": {"sortBy": {"s": 1, "v": -1}, "output": "$_id", "n": 2}},
      "bn": {"$bottomN": {"sortBy": {"v": -1}, "output": "$_id", "n": 3}}}},
    {"$set": {"a": {"$round": ["$a", 9]}, "sd": {"$round": ["$sd", 9]},
              "ss": {"$round": ["$ss", 9]}}}])";
  for (uint32_t seed : {7u, 11u, 13u}) {
    SCOPED_TRACE(seed);
    docs_ = RandomDocuments(seed, 3000);
    runs_opened_ = 0;
    auto truth = Run(pipeline, Options(kRoomEnough, false));
    ASSERT_TRUE(truth.ok()) << truth.status();
    ASSERT_EQ(truth->size(), 41u);  // 40 keys and null (with missing)
    int files = 0;
    auto spilled = Run(pipeline, Options(400 * 1000, true), &files);
    ASSERT_TRUE(spilled.ok()) << spilled.status();
    EXPECT_GE(runs_opened_, 5);
    EXPECT_GE(files, 5);
    // Spilled, the groups come in _id order; their contents are the same.
    EXPECT_EQ(Lines(*spilled), Lines(ById(*truth)));
    EXPECT_EQ(SpilledFiles(), 0);
  }

  // One group past the limit on its own cannot spill: a clear error.
  auto one = Run(R"([{"$group": {"_id": null, "all": {"$push": "$pad"}}}])", Options(20 * 1000, true));
  EXPECT_EQ(one.status().code(), ErrorCode::kExceededMemoryLimit) << one.status();

  // $sortByCount is a $group and a $sort: its $group spills (7 words).
  const char* by_count = R"([{"$sortByCount": "$s"}])";
  auto counted = Run(by_count, Options(kRoomEnough, false));
  runs_opened_ = 0;
  auto counted_spilled = Run(by_count, Options(2000, true));
  EXPECT_GE(runs_opened_, 3);
  ASSERT_TRUE(counted.ok() && counted_spilled.ok());
  EXPECT_EQ(Lines(ById(*counted_spilled)), Lines(ById(*counted)));
}

TEST_F(SpillTest, GroupWithManyKeysSpillsEachOnce) {
  // 3000 distinct keys, a few per run: the merge meets each key once.
  const char* pipeline = R"([{"$group": {"_id": "$_id", "v": {"$first": "$v"}, "n": {"$sum": 1}}}])";
  auto truth = Run(pipeline, Options(kRoomEnough, false));
  auto spilled = Run(pipeline, Options(30 * 1000, true));
  ASSERT_TRUE(truth.ok() && spilled.ok());
  ASSERT_EQ(spilled->size(), 3000u);
  EXPECT_GE(runs_opened_, 5);
  EXPECT_EQ(Lines(*spilled), Lines(ById(*truth)));
}

TEST_F(SpillTest, WithoutAllowDiskUseOrForOtherStagesTheLimitHolds) {
  auto no_disk = Run(R"([{"$set": {"x": 1}}, {"$sort": {"pad": 1}}])", Options(20 * 1000, false));
  EXPECT_EQ(no_disk.status().code(), ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed);
  EXPECT_NE(no_disk.status().message().find("pass allowDiskUse:true"), std::string::npos);
  EXPECT_EQ(runs_opened_, 0);
  // $sample does not spill: allowDiskUse does not help it, and it says so.
  auto sample = Run(R"([{"$sample": {"size": 3000}}])", Options(20 * 1000, true));
  EXPECT_EQ(sample.status().code(), ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed);
  EXPECT_NE(sample.status().message().find("does not spill"), std::string::npos);
}

TEST_F(SpillTest, FacetSpillsItsInputToARunPerFacet) {
  const char* pipeline = R"([{"$facet": {
      "groups": [{"$group": {"_id": "$g", "n": {"$sum": 1}, "s": {"$sum": "$v"}}}, {"$sort": {"_id": 1}}],
      "count": [{"$match": {"v": {"$gt": 10}}}, {"$count": "n"}],
      "last": [{"$sort": {"_id": -1}}, {"$limit": 3}, {"$project": {"_id": 1}}]}}])";
  auto truth = Run(pipeline, Options(kRoomEnough, false));
  ASSERT_TRUE(truth.ok()) << truth.status();
  auto refused = Run(pipeline, Options(50 * 1000, false));
  EXPECT_EQ(refused.status().code(), ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed);
  runs_opened_ = 0;
  int files = 0;
  auto spilled = Run(pipeline, Options(50 * 1000, true), &files);
  ASSERT_TRUE(spilled.ok()) << spilled.status();
  EXPECT_GE(runs_opened_, 3);  // one per facet
  EXPECT_EQ(Lines(*spilled), Lines(*truth));
  EXPECT_EQ(SpilledFiles(), 0);
}

TEST_F(SpillTest, BucketAutoSpillsSortedRunsAndBucketsAsTheyStream) {
  for (const char* pipeline :
       {R"([{"$bucketAuto": {"groupBy": "$v", "buckets": 7, "output": {"n": {"$sum": 1}, "ids": {"$push": "$_id"}, "s": {"$addToSet": "$s"}}}}])",
        R"([{"$bucketAuto": {"groupBy": "$g", "buckets": 5}}])",
        R"([{"$bucketAuto": {"groupBy": "$_id", "buckets": 3000}}])"}) {
    SCOPED_TRACE(pipeline);
    auto truth = Run(pipeline, Options(kRoomEnough, false));
    ASSERT_TRUE(truth.ok()) << truth.status();
    runs_opened_ = 0;
    auto spilled = Run(pipeline, Options(50 * 1000, true));
    ASSERT_TRUE(spilled.ok()) << spilled.status();
    EXPECT_GE(runs_opened_, 5);
    EXPECT_EQ(Lines(*spilled), Lines(*truth));
    EXPECT_EQ(SpilledFiles(), 0);
  }
}

TEST_F(SpillTest, SetWindowFieldsSpillsBetweenPartitions) {
  const char* pipeline = R"([{"$setWindowFields": {"partitionBy": "$g", "sortBy": {"v": 1},
      "output": {"run": {"$sum": "$v", "window": {"documents": ["unbounded", "current"]}},
                 "r": {"$rank": {}}, "near": {"$push": "$_id", "window": {"documents": [-1, 1]}},
                 "whole": {"$max": "$s"}}}}])";
  auto truth = Run(pipeline, Options(kRoomEnough, false));
  ASSERT_TRUE(truth.ok()) << truth.status();
  ASSERT_EQ(truth->size(), 3000u);
  auto refused = Run(pipeline, Options(100 * 1000, false));
  EXPECT_EQ(refused.status().code(), ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed);
  runs_opened_ = 0;
  auto spilled = Run(pipeline, Options(100 * 1000, true));
  ASSERT_TRUE(spilled.ok()) << spilled.status();
  EXPECT_GE(runs_opened_, 5);
  EXPECT_EQ(Lines(*spilled), Lines(*truth));
  EXPECT_EQ(SpilledFiles(), 0);
}

// A partition past the limit (here the whole input: no partitionBy) goes to
// a run of its own, read back by position through a cache of half the
// limit; each output's values to a run, then the documents assembled.
TEST_F(SpillTest, SetWindowFieldsSpillsWithinAPartition) {
  for (const char* pipeline : {
           R"([{"$setWindowFields": {"sortBy": {"v": 1}, "output": {
               "run": {"$sum": "$v", "window": {"documents": ["unbounded", "current"]}},
               "near": {"$push": "$_id", "window": {"documents": [-2, 1]}},
               "r": {"$rank": {}}, "d": {"$denseRank": {}}, "n": {"$documentNumber": {}},
               "prev": {"$shift": {"output": "$_id", "by": -1, "default": "none"}},
               "next3": {"$shift": {"output": "$s", "by": 3}},
               "whole": {"$avg": "$v"}}}}])",
           // One partition of many fits, one does not.
           R"([{"$set": {"big": {"$cond": [{"$lt": ["$_id", 2500]}, 1, "$_id"]}}},
               {"$setWindowFields": {"partitionBy": "$big", "sortBy": {"_id": -1}, "output": {
                 "r": {"$rank": {}}, "s": {"$sum": 1, "window": {"documents": [-5, 5]}}}}}])"}) {
    SCOPED_TRACE(pipeline);
    auto truth = Run(pipeline, Options(kRoomEnough, false));
    ASSERT_TRUE(truth.ok()) << truth.status();
    ASSERT_EQ(truth->size(), 3000u);
    runs_opened_ = 0;
    int files = 0;
    auto spilled = Run(pipeline, Options(100 * 1000, true), &files);
    ASSERT_TRUE(spilled.ok()) << spilled.status();
    EXPECT_GE(runs_opened_, 5);
    EXPECT_EQ(Lines(*spilled), Lines(*truth));
    EXPECT_EQ(SpilledFiles(), 0);
  }
  // A range window over such a partition: its bounds by two pointers over
  // ascending numbers; values that do not ascend (nulls first, a
  // descending sort) are refused rather than answered by quadratic seeks.
  // (The $project keeps the $match out of the find, which these tests' finds ignore.)
  const char* range = R"([{"$project": {"v": 1}}, {"$match": {"v": {"$gte": 30}}}, {"$setWindowFields": {"sortBy": {"v": 1},
      "output": {"a": {"$sum": "$v", "window": {"range": [-2, 1]}}, "b": {"$push": "$_id", "window": {"range": ["unbounded", -19]}},
                 "c": {"$count": {}, "window": {"range": [15, "unbounded"]}}}}}])";
  auto truth = Run(range, Options(kRoomEnough, false));
  ASSERT_TRUE(truth.ok()) << truth.status();
  ASSERT_GT(truth->size(), 300u);
  runs_opened_ = 0;
  auto spilled = Run(range, Options(20 * 1000, true));
  EXPECT_GE(runs_opened_, 3);
  ASSERT_TRUE(spilled.ok()) << spilled.status();
  EXPECT_EQ(Lines(*spilled), Lines(*truth));
  auto nulls = Run(R"([{"$setWindowFields": {"sortBy": {"v": 1}, "output": {
      "a": {"$avg": "$v", "window": {"range": [-1, 1]}}}}}])", Options(100 * 1000, true));
  EXPECT_EQ(nulls.status().code(), ErrorCode::kExceededMemoryLimit) << nulls.status();
  auto descending = Run(R"([{"$project": {"v": 1}}, {"$match": {"v": {"$type": "number"}}}, {"$setWindowFields": {"sortBy": {"v": -1}, "output": {
      "a": {"$avg": "$v", "window": {"range": [-1, 1]}}}}}])", Options(100 * 1000, true));
  EXPECT_EQ(descending.status().code(), ErrorCode::kExceededMemoryLimit) << descending.status();
}

TEST_F(SpillTest, AFailedSpillIsAnErrorAndLeavesNoFile) {
  internal::PipelineOptions o = Options(20 * 1000, true);
  int opened = 0;
  o.new_spill_run = [&]() -> StatusOr<std::unique_ptr<internal::SpillWriter>> {
    if (++opened == 3) return Status(ErrorCode::kInternalError, "No space left on device");
    return internal::NewSpillRun(*engine_);
  };
  auto r = Run(R"([{"$set": {"x": 1}}, {"$sort": {"s": 1}}])", o);
  EXPECT_EQ(r.status().code(), ErrorCode::kInternalError);
  EXPECT_EQ(opened, 3);
  EXPECT_EQ(SpilledFiles(), 0);  // the two finished runs went with the stage
}

TEST_F(SpillTest, RunsRoundTripAndAnEmptyRunReadsEmpty) {
  auto w = internal::NewSpillRun(*engine_);
  ASSERT_TRUE(w.ok()) << w.status();
  std::vector<std::string> records = {"", "a", std::string(100000, 'z'), std::string("\0x\0", 3)};
  for (const std::string& r : records) ASSERT_TRUE((*w)->Add(r).ok());
  EXPECT_EQ((*w)->bytes(), 100004);
  auto reader = (*w)->Finish();
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (const std::string& r : records) {
    auto next = (*reader)->Next();
    ASSERT_TRUE(next.ok() && next->has_value());
    EXPECT_EQ(std::string(**next), r);
  }
  auto end = (*reader)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
  EXPECT_EQ(SpilledFiles(), 1);
  reader->reset();
  EXPECT_EQ(SpilledFiles(), 0);

  auto empty = internal::NewSpillRun(*engine_);
  ASSERT_TRUE(empty.ok());
  auto empty_reader = (*empty)->Finish();
  ASSERT_TRUE(empty_reader.ok());
  auto none = (*empty_reader)->Next();
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(SpillOpenTest, OpeningADatabaseRemovesWhatAKilledProcessSpilled) {
  test::ScratchDir dir;
  const std::string db = dir.Sub("db");
  {
    auto c = Client::Open(db);
    ASSERT_TRUE(c.ok());
  }
  std::filesystem::create_directories(db + "/_tmp");
  std::ofstream(db + "/_tmp/run-1-0.spill") << "left behind";
  auto c = Client::Open(db);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(std::filesystem::exists(db + "/_tmp"));
}

// The public API and the aggregate command take allowDiskUse; find's is
// still refused (a find's sort does not spill).
TEST(SpillApiTest, AllowDiskUseThroughTheApiAndTheCommand) {
  test::ScratchDir dir;
  auto c = Client::Open(dir.Sub("db"));
  ASSERT_TRUE(c.ok());
  Collection coll = (*c)->GetDatabase("test").GetCollection("c");
  ASSERT_TRUE(coll.InsertOne(Json(R"({"_id": 1, "g": "a"})")).ok());
  ASSERT_TRUE(coll.InsertOne(Json(R"({"_id": 2, "g": "a"})")).ok());
  AggregateOptions options;
  options.allow_disk_use = true;
  Document p = Json(R"({"p": [{"$group": {"_id": "$g", "n": {"$sum": 1}}}]})");
  auto cursor = coll.Aggregate(p.Get("p").Array(), options);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  ASSERT_TRUE(cursor->Next());
  EXPECT_EQ(ToJson(cursor->document()), R"({"_id": "a", "n": 2})");
  // The limit is the caller's to lower (MongoDB's server parameter).
  options.max_blocking_stage_bytes = 0;
  EXPECT_EQ(coll.Aggregate(p.Get("p").Array(), options).status().code(), ErrorCode::kBadValue);
  options.max_blocking_stage_bytes = 100;
  options.allow_disk_use = false;
  auto over = coll.Aggregate(p.Get("p").Array(), options);
  ASSERT_TRUE(over.ok());
  EXPECT_FALSE(over->Next());
  EXPECT_EQ(over->status().code(), ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed);
  options.allow_disk_use = true;
  auto spilled = coll.Aggregate(p.Get("p").Array(), options);
  ASSERT_TRUE(spilled.ok());
  ASSERT_TRUE(spilled->Next()) << spilled->status();
  EXPECT_EQ(ToJson(spilled->document()), R"({"_id": "a", "n": 2})");
  // explain's executionStats says whether each stage spilled, and how often.
  auto plan = coll.ExplainAggregate(p.Get("p").Array(), options, ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const DocumentView group = plan->Get("stages").Array().Get("1").Document();
  EXPECT_TRUE(group.Get("usedDisk").Bool()) << ToJson(*plan);
  EXPECT_EQ(group.Get("spills").Int64(), 2) << ToJson(*plan);  // a run per group
  options.max_blocking_stage_bytes = int64_t{100} << 20;
  auto roomy = coll.ExplainAggregate(p.Get("p").Array(), options, ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(roomy.ok());
  EXPECT_FALSE(roomy->Get("stages").Array().Get("1").Document().Get("usedDisk").Bool());

  Document reply = (*c)->RunCommand("test", Json(
      R"({"aggregate": "c", "pipeline": [{"$sort": {"g": 1}}], "allowDiskUse": true, "cursor": {}})"));
  EXPECT_EQ(reply.Get("ok").NumberAsDouble(), 1.0) << ToJson(reply);
  Document bad = (*c)->RunCommand(
      "test", Json(R"({"aggregate": "c", "pipeline": [], "allowDiskUse": "yes", "cursor": {}})"));
  EXPECT_EQ(bad.Get("code").NumberAsDouble(), 14.0) << ToJson(bad);  // TypeMismatch
  Document find = (*c)->RunCommand("test", Json(R"({"find": "c", "allowDiskUse": true})"));
  EXPECT_EQ(find.Get("code").NumberAsDouble(), 238.0) << ToJson(find);
}

}  // namespace
}  // namespace rockdoc

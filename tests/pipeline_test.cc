// The aggregation pipeline (pipeline/, Collection::Aggregate, the aggregate
// command): the MongoDB manual's stage examples with the output the manual
// shows, a property test against find, MongoDB's error codes before
// anything is read, and the blocking stages' memory limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "pipeline/pipeline.h"
#include "pipeline/stage.h"
#include "query/expression/document_transform.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"
#include "vector_find.h"

namespace rockdoc {
namespace {

using test::Json;

class PipelineTest : public test::ClientTest {
 protected:
  Collection Coll(std::string_view name) { return db().GetCollection(name); }
  void Insert(std::string_view coll, std::string_view docs_json) {
    ASSERT_TRUE(Coll(coll).InsertMany(test::JsonArray(docs_json)).ok());
  }
  // The pipeline's output as JSON lines joined by ", ", or the error.
  std::string Run(std::string_view coll, std::string_view pipeline_json) {
    Document p = Json(std::string("{\"p\": ") + std::string(pipeline_json) + "}");
    StatusOr<Cursor> cursor = Coll(coll).Aggregate(p.Get("p").Array());
    if (!cursor.ok()) {
      return std::to_string(cursor.status().code_number()) + ": " +
             std::string(cursor.status().message());
    }
    std::string out;
    while (cursor->Next()) out += (out.empty() ? "" : ", ") + ToJson(cursor->document());
    if (!cursor->status().ok()) {
      return std::to_string(cursor->status().code_number()) + ": " +
             std::string(cursor->status().message());
    }
    return out;
  }
};

TEST_F(PipelineTest, MatchGroupSortAsTheManualShows) {
  // The manual's $group example: sales grouped by item, with totals.
  Insert("sales", R"([
    {"_id": 1, "item": "abc", "price": 10, "quantity": 2},
    {"_id": 2, "item": "jkl", "price": 20, "quantity": 1},
    {"_id": 3, "item": "xyz", "price": 5, "quantity": 10},
    {"_id": 4, "item": "xyz", "price": 5, "quantity": 20},
    {"_id": 5, "item": "abc", "price": 10, "quantity": 10}])");
  EXPECT_EQ(Run("sales", R"([
      {"$group": {"_id": "$item", "totalSaleAmount": {"$sum": {"$multiply": ["$price", "$quantity"]}},
                  "count": {"$count": {}}, "avgQty": {"$avg": "$quantity"}}},
      {"$match": {"totalSaleAmount": {"$gte": 100}}},
      {"$sort": {"totalSaleAmount": -1}}])"),
            R"({"_id": "xyz", "totalSaleAmount": 150, "count": 2, "avgQty": 15.0}, )"
            R"({"_id": "abc", "totalSaleAmount": 120, "count": 2, "avgQty": 6.0})");
  // _id: null groups everything; $min/$max/$first/$last/$push/$addToSet.
  EXPECT_EQ(Run("sales", R"([{"$sort": {"_id": 1}},
      {"$group": {"_id": null, "lo": {"$min": "$price"}, "hi": {"$max": "$price"},
                  "first": {"$first": "$item"}, "last": {"$last": "$item"},
                  "items": {"$addToSet": "$item"}, "qty": {"$push": "$quantity"}}}])"),
            R"({"_id": null, "lo": 5, "hi": 20, "first": "abc", "last": "abc", )"
            R"("items": ["abc", "jkl", "xyz"], "qty": [2, 1, 10, 20, 10]})");
  // $sortByCount and $count.
  EXPECT_EQ(Run("sales", R"([{"$sortByCount": "$item"}, {"$limit": 2}])"),
            R"({"_id": "abc", "count": 2}, {"_id": "xyz", "count": 2})");
  EXPECT_EQ(Run("sales", R"([{"$match": {"price": {"$lt": 20}}}, {"$count": "cheap"}])"),
            R"({"cheap": 4})");
  EXPECT_EQ(Run("sales", R"([{"$match": {"price": 99}}, {"$count": "none"}])"), "");
}

TEST_F(PipelineTest, ProjectAddFieldsUnsetReplaceRoot) {
  // The manual's $project examples: inclusion (with _id), exclusion,
  // computed and nested fields.
  Insert("books", R"([{"_id": 1, "title": "abc123", "isbn": "0001122223334",
      "author": {"last": "zzz", "first": "aaa"}, "copies": 5}])");
  EXPECT_EQ(Run("books", R"([{"$project": {"title": 1, "author": 1}}])"),
            R"({"_id": 1, "title": "abc123", "author": {"last": "zzz", "first": "aaa"}})");
  EXPECT_EQ(Run("books", R"([{"$project": {"_id": 0}}, {"$project": {"copies": 1, "_id": 1}}])"),
            R"({"copies": 5})");
  EXPECT_EQ(Run("books", R"([{"$project": {"_id": 1}}])"), R"({"_id": 1})");
  EXPECT_EQ(Run("books", R"([{"$project": {"_id": 0, "title": 1, "author.first": 1}}])"),
            R"({"title": "abc123", "author": {"first": "aaa"}})");
  EXPECT_EQ(Run("books", R"([{"$project": {"isbn": 0, "author": {"first": 0}, "copies": 0}}])"),
            R"({"_id": 1, "title": "abc123", "author": {"last": "zzz"}})");
  EXPECT_EQ(Run("books", R"([{"$project": {"title": 1, "isbn": {
      "prefix": {"$concat": ["x-", "$title"]}}, "lastName": "$author.last",
      "copiesSold": {"$literal": 0}}}])"),
            R"({"_id": 1, "title": "abc123", "isbn": {"prefix": "x-abc123"}, "lastName": "zzz", )"
            R"("copiesSold": 0})");
  // $addFields replaces in place and appends; $$REMOVE drops; dotted paths nest.
  EXPECT_EQ(Run("books", R"([{"$addFields": {"copies": {"$add": ["$copies", 1]},
      "author.middle": "b", "isbn": "$$REMOVE", "new": true}}])"),
            R"({"_id": 1, "title": "abc123", "author": {"last": "zzz", "first": "aaa", "middle": "b"}, )"
            R"("copies": 6, "new": true})");
  EXPECT_EQ(Run("books", R"([{"$set": {"author": 1}}, {"$unset": ["isbn", "copies"]}])"),
            R"({"_id": 1, "title": "abc123", "author": 1})");
  EXPECT_EQ(Run("books", R"([{"$replaceRoot": {"newRoot": "$author"}}])"),
            R"({"last": "zzz", "first": "aaa"})");
  EXPECT_EQ(Run("books", R"([{"$replaceWith": {"t": "$title"}}])"), R"({"t": "abc123"})");
  EXPECT_EQ(Run("books", R"([{"$replaceWith": "$copies"}])"),
            "40228: 'newRoot' expression must evaluate to an object, but resulting value was: 5. "
            "Type of resulting value: 'int'. Input document: { _id: 1, title: 'abc123', isbn: "
            "'0001122223334', author: { last: 'zzz', first: 'aaa' }, copies: 5 }");
  EXPECT_EQ(Run("books", R"([{"$project": {"a": 1, "b": 0}}])"),
            "31254: Invalid $project :: caused by :: Cannot do exclusion on field b in inclusion "
            "projection");
}

TEST_F(PipelineTest, UnwindAsTheManualShows) {
  Insert("inventory", R"([
    {"_id": 1, "item": "ABC", "price": 80, "sizes": ["S", "M", "L"]},
    {"_id": 2, "item": "EFG", "price": 120, "sizes": []},
    {"_id": 3, "item": "IJK", "price": 160, "sizes": "M"},
    {"_id": 4, "item": "LMN", "price": 10},
    {"_id": 5, "item": "XYZ", "price": 5.75, "sizes": null}])");
  EXPECT_EQ(Run("inventory", R"([{"$unwind": "$sizes"}, {"$project": {"sizes": 1}}])"),
            R"({"_id": 1, "sizes": "S"}, {"_id": 1, "sizes": "M"}, {"_id": 1, "sizes": "L"}, )"
            R"({"_id": 3, "sizes": "M"})");
  EXPECT_EQ(Run("inventory", R"([{"$unwind": {"path": "$sizes", "preserveNullAndEmptyArrays": true,
      "includeArrayIndex": "i"}}, {"$project": {"price": 0}}])"),
            R"({"_id": 1, "item": "ABC", "sizes": "S", "i": 0}, )"
            R"({"_id": 1, "item": "ABC", "sizes": "M", "i": 1}, )"
            R"({"_id": 1, "item": "ABC", "sizes": "L", "i": 2}, {"_id": 2, "item": "EFG", "i": null}, )"
            R"({"_id": 3, "item": "IJK", "sizes": "M", "i": null}, {"_id": 4, "item": "LMN", "i": null}, )"
            R"({"_id": 5, "item": "XYZ", "sizes": null, "i": null})");
  EXPECT_EQ(Run("inventory", R"([{"$unwind": "sizes"}])"),
            "28818: path option to $unwind stage should be prefixed with a '$': sizes");
}

TEST_F(PipelineTest, LookupJoinsAsTheManualShows) {
  // The manual's orders / inventory example.
  Insert("orders", R"([
    {"_id": 1, "item": "almonds", "price": 12, "quantity": 2},
    {"_id": 2, "item": "pecans", "price": 20, "quantity": 1},
    {"_id": 3}])");
  Insert("inventory", R"([
    {"_id": 1, "sku": "almonds", "description": "product 1", "instock": 120},
    {"_id": 2, "sku": "bread", "description": "product 2", "instock": 80},
    {"_id": 3, "sku": "cashews", "description": "product 3", "instock": 60},
    {"_id": 4, "sku": "pecans", "description": "product 4", "instock": 70},
    {"_id": 5, "sku": null, "description": "Incomplete"},
    {"_id": 6}])");
  const std::string with_index_off = Run("orders", R"([{"$lookup": {"from": "inventory",
      "localField": "item", "foreignField": "sku", "as": "inventory_docs"}},
      {"$project": {"n": {"$size": "$inventory_docs"}, "ids": "$inventory_docs._id"}}])");
  EXPECT_EQ(with_index_off, R"({"_id": 1, "n": 1, "ids": [1]}, {"_id": 2, "n": 1, "ids": [4]}, )"
                            R"({"_id": 3, "n": 2, "ids": [5, 6]})");
  // Through an index on foreignField: the same documents.
  ASSERT_TRUE(Coll("inventory").CreateIndex(Json(R"({"sku": 1})")).ok());
  EXPECT_EQ(Run("orders", R"([{"$lookup": {"from": "inventory",
      "localField": "item", "foreignField": "sku", "as": "inventory_docs"}},
      {"$project": {"n": {"$size": "$inventory_docs"}, "ids": "$inventory_docs._id"}}])"),
            with_index_off);
  // An array localField matches each element.
  Insert("classes", R"([{"_id": 1, "enrolled": ["almonds", "bread"]}])");
  EXPECT_EQ(Run("classes", R"([{"$lookup": {"from": "inventory", "localField": "enrolled",
      "foreignField": "sku", "as": "x"}}, {"$project": {"ids": "$x._id"}}])"),
            R"({"_id": 1, "ids": [1, 2]})");
  EXPECT_EQ(Run("orders", R"([{"$lookup": {"from": "inventory", "localField": "item"}}])"),
            "9: must specify 'as' field for a $lookup");
  // An uncorrelated pipeline sees the whole foreign collection.
  EXPECT_EQ(Run("orders", R"([{"$lookup": {"from": "inventory", "let": {}, "pipeline": [{"$count": "n"}], "as": "x"}},
                              {"$project": {"x": 1}}])"),
            R"({"_id": 1, "x": [{"n": 6}]}, {"_id": 2, "x": [{"n": 6}]}, {"_id": 3, "x": [{"n": 6}]})");
}

TEST_F(PipelineTest, BadPipelinesFailBeforeAnythingIsRead) {
  Insert("c", R"([{"_id": 1, "a": 0}])");
  for (const auto& [pipeline, expected] : std::vector<std::pair<std::string, std::string>>{
           {R"([{"$bogus": {}}])", "40324: Unrecognized pipeline stage name: '$bogus'"},
           {R"([{"$match": {}, "$limit": 1}])",
            "40323: A pipeline stage specification object must contain exactly one field."},
           {R"([{"$group": {"n": {"$sum": 1}}}])", "15955: a group specification must include an _id"},
           {R"([{"$group": {"_id": 1, "n": {"$total": 1}}}])", "15952: unknown group operator '$total'"},
           {R"([{"$group": {"_id": 1, "n": 1}}])", "40234: The field 'n' must be an accumulator object"},
           {R"([{"$limit": 0}])", "15958: the limit must be positive"},
           {R"([{"$skip": -1}])", "15956: Argument to $skip cannot be negative"},
           {R"([{"$project": {"x": {"$bogus": 1}}}])", "168: Unrecognized expression '$bogus'"},
           {R"([{"$match": {"$bogus": 1}}])",
            "2: unknown top level operator: $bogus. If you have a field name that starts with a "
            "'$' symbol, consider using $getField or $setField."},
           {R"([{"$count": "$x"}])", "40158: the count field cannot be a $-prefixed path"},
           {R"([{"$facet": {}}])",
            "40169: the $facet specification must be a non-empty object, but found: {}"},
           {R"([{"$facet": {"a": [{"$facet": {"b": []}}]}}])",
            "40600: $facet is not allowed to be used within a $facet stage"},
           {R"([{"$sample": {"size": -1}}])", "28747: size argument to $sample must not be negative"},
           {R"([{"$unionWith": {"pipeline": []}}])",
            "40414: BSON field '$unionWith.coll' is missing but a required field"},
           {R"([{"$geoNear": {}}])", "2: $geoNear requires a 'near' option as an Array or Object"},
           {R"([{"$densify": {}}])", "40414: BSON field '$densify.field' is missing but a required field"},
           // A stage that would fail on the document never runs: the bad
           // stage after it is found first.
           {R"([{"$project": {"x": {"$divide": [1, "$a"]}}}, {"$bogus": 1}])",
            "40324: Unrecognized pipeline stage name: '$bogus'"},
       }) {
    EXPECT_EQ(Run("c", pipeline), expected) << pipeline;
  }
  // And an evaluation error fails the cursor.
  EXPECT_EQ(Run("c", R"([{"$project": {"x": {"$divide": [1, "$a"]}}}])"), "16608: can't $divide by zero");
}

TEST_F(PipelineTest, FacetUnionWithSample) {
  // The manual's $facet: several aggregations over the same input.
  Insert("artwork", R"([
    {"_id": 1, "title": "The Pillars of Society", "year": 1926, "price": 199.99, "tags": ["painting", "satire"]},
    {"_id": 2, "title": "Melancholy III", "year": 1902, "price": 280.00, "tags": ["woodcut", "landscape"]},
    {"_id": 3, "title": "Dancer", "year": 1925, "price": 76.04, "tags": ["oil", "painting"]},
    {"_id": 4, "title": "The Great Wave", "year": 1831, "price": 167.30, "tags": ["woodblock", "ocean"]}])");
  EXPECT_EQ(Run("artwork", R"([{"$facet": {
      "byTag": [{"$unwind": "$tags"}, {"$sortByCount": "$tags"}, {"$limit": 1}],
      "cheap": [{"$match": {"price": {"$lt": 100}}}, {"$project": {"_id": 1}}],
      "count": [{"$count": "n"}]}}])"),
            R"({"byTag": [{"_id": "painting", "count": 2}], "cheap": [{"_id": 3}], "count": [{"n": 4}]})");
  // $unionWith: this collection's documents, then the other's pipeline's.
  Insert("sales2019", R"([{"_id": 1, "store": "A", "qty": 5}, {"_id": 2, "store": "B", "qty": 1}])");
  Insert("sales2020", R"([{"_id": 1, "store": "A", "qty": 7}])");
  EXPECT_EQ(Run("sales2019", R"([{"$project": {"_id": 0}},
      {"$unionWith": {"coll": "sales2020", "pipeline": [{"$project": {"_id": 0, "store": 1, "qty": 1}}]}},
      {"$group": {"_id": "$store", "qty": {"$sum": "$qty"}}}, {"$sort": {"_id": 1}}])"),
            R"({"_id": "A", "qty": 12}, {"_id": "B", "qty": 1})");
  EXPECT_EQ(Run("sales2019", R"([{"$unionWith": "sales2020"}, {"$count": "n"}])"), R"({"n": 3})");
  // $sample: `size` distinct documents of the input (all of them when fewer).
  const std::string sampled = Run("artwork", R"([{"$sample": {"size": 2}}, {"$project": {"_id": 1}}])");
  EXPECT_EQ(std::count(sampled.begin(), sampled.end(), '{'), 2) << sampled;
  EXPECT_EQ(Run("artwork", R"([{"$sample": {"size": 10}}, {"$count": "n"}])"), R"({"n": 4})");
  EXPECT_EQ(Run("artwork", R"([{"$sample": {"size": 10}}, {"$group": {"_id": null, "ids": {"$addToSet": "$_id"}}}])"),
            R"({"_id": null, "ids": [1, 2, 3, 4]})");
}

// [$match, $sort, $skip, $limit, $project] returns exactly what the
// equivalent find returns, for random documents and random queries.
TEST_F(PipelineTest, TheFindShapedPipelineEqualsFind) {
  std::mt19937_64 rng(20261126);
  std::vector<Document> docs;
  for (int i = 0; i < 300; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i);
    if (rng() % 5) b.AppendInt32("a", static_cast<int32_t>(rng() % 10));
    if (rng() % 3) b.AppendString("b", std::string(1, static_cast<char>('a' + rng() % 5)));
    if (rng() % 4 == 0) b.OpenArray("c").AppendInt32("", static_cast<int32_t>(rng() % 10)).Close();
    b.AppendInt32("d", static_cast<int32_t>(rng() % 100));
    docs.push_back(std::move(b).Build());
  }
  ASSERT_TRUE(Coll("p").InsertMany(docs).ok());
  ASSERT_TRUE(Coll("p").CreateIndex(Json(R"({"a": 1})")).ok());
  const char* filters[] = {R"({})", R"({"a": {"$gt": 4}})", R"({"b": "c"})",
                           R"({"$or": [{"a": 1}, {"c": 3}]})", R"({"a": {"$in": [1, 2, 3]}, "d": {"$lt": 50}})"};
  const char* sorts[] = {R"({"_id": 1})", R"({"d": -1, "_id": 1})", R"({"a": 1, "_id": -1})"};
  const char* projections[] = {R"({"a": 1, "d": 1})", R"({"b": 0, "c": 0})", R"({"_id": 0, "d": 1})",
                               R"({"_id": 0})", R"({"_id": 1})", R"({"c": 0, "_id": 0})"};
  int compared = 0;
  for (int round = 0; round < 60; ++round) {
    const std::string filter = filters[rng() % std::size(filters)];
    const std::string sort = sorts[rng() % std::size(sorts)];
    const std::string projection = projections[rng() % std::size(projections)];
    const int64_t skip = static_cast<int64_t>(rng() % 20), limit = 1 + static_cast<int64_t>(rng() % 50);
    FindOptions fo;
    fo.sort = Json(sort);
    fo.projection = Json(projection);
    fo.skip = skip;
    fo.limit = limit;
    auto found = Coll("p").Find(Json(filter), fo);
    ASSERT_TRUE(found.ok());
    std::string expected;
    while (found->Next()) expected += (expected.empty() ? "" : ", ") + ToJson(found->document());
    const std::string pipeline = "[{\"$match\": " + filter + "}, {\"$sort\": " + sort +
                                 "}, {\"$skip\": " + std::to_string(skip) + "}, {\"$limit\": " +
                                 std::to_string(limit) + "}, {\"$project\": " + projection + "}]";
    EXPECT_EQ(Run("p", pipeline), expected) << pipeline;
    // The same through the stages themselves (a $match that is not first
    // runs here, not in the find).
    const std::string later = "[{\"$project\": {\"zz\": 0}}, {\"$match\": " + filter +
                              "}, {\"$sort\": " + sort + "}, {\"$skip\": " + std::to_string(skip) +
                              "}, {\"$limit\": " + std::to_string(limit) + "}, {\"$project\": " +
                              projection + "}]";
    EXPECT_EQ(Run("p", later), expected) << later;
    ++compared;
  }
  EXPECT_EQ(compared, 60);
}

// Blocking stages refuse to hold more than their limit (292), as MongoDB
// without allowDiskUse.
TEST(PipelineMemoryTest, BlockingStagesStopAtTheirLimit) {
  std::vector<Document> docs;
  for (int i = 0; i < 1000; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i).AppendString("pad", std::string(100, 'x'));
    docs.push_back(std::move(b).Build());
  }
  internal::FindFn find = test::VectorFind(&docs);
  internal::PipelineOptions options;
  options.memory_limit = 50 * 1000;  // half of what the documents take
  auto drain = [&](std::string_view json) -> Status {
    Document p = Json(std::string("{\"p\": ") + std::string(json) + "}");
    ROCKDOC_ASSIGN_OR_RETURN(auto source, internal::OpenPipeline("c", p.Get("p").Array(), options, find));
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> d, source->Next());
      if (!d) return Status::OK();
    }
  };
  EXPECT_EQ(drain(R"([{"$project": {"pad": 1}}, {"$sort": {"pad": 1}}])").code(),
            ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed);
  EXPECT_EQ(drain(R"([{"$group": {"_id": "$_id", "all": {"$push": "$pad"}}}])").code(),
            ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed);
  // Within the limit they answer.
  EXPECT_TRUE(drain(R"([{"$group": {"_id": null, "n": {"$sum": 1}}}])").ok());
  options.memory_limit = internal::kBlockingStageMemoryLimit;
  EXPECT_TRUE(drain(R"([{"$project": {"pad": 1}}, {"$sort": {"pad": 1}}])").ok());
}

// explain: the find's plan under $cursor, the stages as given; run at the
// higher verbosities, with each stage's count.
TEST_F(PipelineTest, ExplainShowsTheFindAndTheStages) {
  Insert("c", R"([{"_id": 1, "a": 1, "g": "x"}, {"_id": 2, "a": 2, "g": "y"}, {"_id": 3, "a": 3, "g": "x"}])");
  ASSERT_TRUE(Coll("c").CreateIndex(Json(R"({"a": 1})")).ok());
  Document p = Json(R"({"p": [{"$match": {"a": {"$gte": 2}}}, {"$group": {"_id": "$g"}}, {"$sort": {"_id": 1}}]})");
  auto plan = Coll("c").ExplainAggregate(p.Get("p").Array(), {}, ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->Get("explainVersion").String(), "1");
  std::vector<std::string> names;
  for (const Element& st : plan->Get("stages").Array()) names.emplace_back((*st.Document().begin()).key());
  EXPECT_EQ(names, (std::vector<std::string>{"$cursor", "$group", "$sort"}));
  const std::string json = ToJson(*plan);
  EXPECT_NE(json.find(R"("indexName": "a_1")"), std::string::npos) << json;
  EXPECT_EQ(json.find("nReturned"), std::string::npos) << json;  // queryPlanner runs nothing
  auto run = Coll("c").ExplainAggregate(p.Get("p").Array(), {}, ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(run.ok()) << run.status();
  std::vector<int64_t> counts;
  for (const Element& st : run->Get("stages").Array()) counts.push_back(st.Document().Get("nReturned").Int64());
  EXPECT_EQ(counts, (std::vector<int64_t>{2, 2, 2}));
  // A pipeline the find runs whole explains as the find.
  Document q = Json(R"({"p": [{"$match": {"a": 1}}, {"$limit": 1}]})");
  auto whole = Coll("c").ExplainAggregate(q.Get("p").Array(), {}, ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(whole.ok());
  EXPECT_TRUE(whole->Get("queryPlanner").ok()) << ToJson(*whole);
  // Through the commands: explain {aggregate}, and aggregate with explain: true.
  Document e = client_->RunCommand("test", Json(R"({"explain": {"aggregate": "c", "pipeline":
      [{"$group": {"_id": "$g"}}], "cursor": {}}, "verbosity": "executionStats"})"));
  EXPECT_EQ(e.Get("ok").NumberAsDouble(), 1) << ToJson(e);
  EXPECT_EQ(e.Get("stages").Array().Get("1").Document().Get("nReturned").Int64(), 2) << ToJson(e);
  Document t = client_->RunCommand("test", Json(R"({"aggregate": "c", "pipeline":
      [{"$group": {"_id": "$g"}}], "explain": true})"));
  EXPECT_EQ(t.Get("ok").NumberAsDouble(), 1) << ToJson(t);
  EXPECT_TRUE(t.Get("stages").ok()) << ToJson(t);
  EXPECT_FALSE(t.Get("cursor").ok());
  Document bad = client_->RunCommand("test", Json(R"({"explain": {"aggregate": "c", "pipeline": [{"$bogus": 1}]}})"));
  EXPECT_EQ(bad.Get("code").Int32(), 40324) << ToJson(bad);
}

// The aggregate command: cursor batches and getMore, its fields decoded.
TEST_F(PipelineTest, TheAggregateCommand) {
  Insert("c", R"([{"_id": 1, "g": "x"}, {"_id": 2, "g": "y"}, {"_id": 3, "g": "x"}])");
  Document r = client_->RunCommand("test", Json(R"({"aggregate": "c",
      "pipeline": [{"$group": {"_id": "$g", "n": {"$sum": 1}}}, {"$sort": {"_id": 1}}],
      "cursor": {"batchSize": 1}})"));
  ASSERT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
  DocumentView cursor = r.Get("cursor").Document();
  EXPECT_EQ(ToJson(cursor.Get("firstBatch").Array()), R"({"0": {"_id": "x", "n": 2}})");
  EXPECT_EQ(cursor.Get("ns").String(), "test.c");
  BsonBuilder more;
  more.AppendInt64("getMore", cursor.Get("id").Int64()).AppendString("collection", "c");
  Document next = client_->RunCommand("test", std::move(more).Build());
  EXPECT_EQ(ToJson(next.Get("cursor").Document().Get("nextBatch").Array()),
            R"({"0": {"_id": "y", "n": 1}})");
  auto code = [&](std::string_view json) {
    Document e = client_->RunCommand("test", Json(json));
    return e.Get("ok").NumberAsDouble() == 1 ? 0 : e.Get("code").Int32();
  };
  EXPECT_EQ(code(R"({"aggregate": "c", "pipeline": []})"), 9);  // cursor is required
  EXPECT_EQ(code(R"({"aggregate": "c", "cursor": {}})"), 9);   // pipeline is required
  EXPECT_EQ(code(R"({"aggregate": "c", "pipeline": [], "cursor": {}, "bogus": 1})"), 40415);
  EXPECT_EQ(code(R"({"aggregate": "c", "pipeline": [], "cursor": {}, "let": {}})"), 0);
  EXPECT_EQ(code(R"({"aggregate": "c", "pipeline": [], "cursor": {}, "let": 1})"), 14);
  EXPECT_EQ(code(R"({"aggregate": "c", "pipeline": [], "cursor": {}, "allowDiskUse": true})"), 0);
  EXPECT_EQ(code(R"({"aggregate": 1, "pipeline": [], "cursor": {}})"), 73);  // no $documents
  EXPECT_EQ(code(R"({"aggregate": 1, "pipeline": [{"$documents": []}], "cursor": {}})"), 0);
  EXPECT_EQ(code(R"({"aggregate": "c", "pipeline": [{"$bogus": 1}], "cursor": {}})"), 40324);
  EXPECT_EQ(code(R"({"aggregate": "c", "pipeline": [], "cursor": {}, "hint": {"zz": 1}})"), 2);
}

// Update pipelines (UpdatePipeline): the manual's examples, MongoDB's _id
// rule, index maintenance, upserts, and the stages an update refuses.
class UpdatePipelineTest : public PipelineTest {
 protected:
  Document Stages(std::string_view json) {
    return Json(std::string("{\"p\": ") + std::string(json) + "}");
  }
  std::string Docs(std::string_view coll) {
    std::string out;
    Cursor c = Coll(coll).Find(Json("{}"), FindOptions{}).value();
    while (c.Next()) out += (out.empty() ? "" : ", ") + ToJson(c.document());
    return out;
  }
};

TEST_F(UpdatePipelineTest, TheManualsExamples) {
  // The manual's updateMany with an aggregation pipeline: total the scores
  // and stamp the change.
  Insert("students", R"([{"_id": 1, "tests": [95, 92, 90]}, {"_id": 2, "tests": [94, 88, 90]}])");
  Document p = Stages(R"([{"$set": {"average": {"$trunc": [{"$avg": "$tests"}, 0]}}},
                         {"$set": {"grade": {"$switch": {"branches": [
                             {"case": {"$gte": ["$average", 93]}, "then": "A"},
                             {"case": {"$gte": ["$average", 90]}, "then": "B"}], "default": "F"}}}}])");
  StatusOr<UpdateResult> r = Coll("students").UpdateMany(Json("{}"), UpdatePipeline{p.Get("p").Array()});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->modified_count, 2);
  EXPECT_EQ(Docs("students"),
            R"({"_id": 1, "tests": [95, 92, 90], "average": 92.0, "grade": "B"}, )"
            R"({"_id": 2, "tests": [94, 88, 90], "average": 90.0, "grade": "B"})");
  // A stage that changes nothing modifies nothing.
  p = Stages(R"([{"$set": {"grade": "$grade"}}])");
  r = Coll("students").UpdateMany(Json("{}"), UpdatePipeline{p.Get("p").Array()});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matched_count, 2);
  EXPECT_EQ(r->modified_count, 0);
}

TEST_F(UpdatePipelineTest, IdStaysAndIndexesFollow) {
  Insert("c", R"([{"_id": 1, "a": 1, "b": 5}, {"_id": 2, "a": 2, "b": 6}])");
  ASSERT_TRUE(Coll("c").CreateIndex(Json(R"({"b": 1})")).ok());
  // $replaceWith without _id: the original _id is kept, first.
  Document p = Stages(R"([{"$replaceWith": {"b": {"$multiply": ["$b", 10]}}}])");
  ASSERT_TRUE(Coll("c").UpdateOne(Json(R"({"_id": 1})"), UpdatePipeline{p.Get("p").Array()}).ok());
  EXPECT_EQ(Docs("c"), R"({"_id": 1, "b": 50}, {"_id": 2, "a": 2, "b": 6})");
  // The index on b saw the change.
  FindOptions by_b;
  by_b.hint = Json(R"({"b": 1})");
  Cursor c = Coll("c").Find(Json(R"({"b": 50})"), by_b).value();
  ASSERT_TRUE(c.Next());
  EXPECT_EQ(c.document().Get("_id").Int32(), 1);
  EXPECT_FALSE(c.Next());
  EXPECT_FALSE(Coll("c").Find(Json(R"({"b": 5})"), by_b).value().Next());
  // Changing _id is ImmutableField, and the document stays as it was.
  p = Stages(R"([{"$set": {"_id": 9}}])");
  StatusOr<UpdateResult> r = Coll("c").UpdateOne(Json(R"({"_id": 2})"), UpdatePipeline{p.Get("p").Array()});
  EXPECT_EQ(r.status().code(), ErrorCode::kImmutableField);
  EXPECT_EQ(Docs("c"), R"({"_id": 1, "b": 50}, {"_id": 2, "a": 2, "b": 6})");
  // Fields named with $ or dots can be made ($setField, MongoDB 5.0+).
  p = Stages(R"([{"$replaceWith": {"$setField": {"field": {"$literal": "$x.y"}, "value": 1, "input": "$$ROOT"}}}])");
  ASSERT_TRUE(Coll("c").UpdateOne(Json(R"({"_id": 2})"), UpdatePipeline{p.Get("p").Array()}).ok());
  EXPECT_EQ(Docs("c"), R"({"_id": 1, "b": 50}, {"_id": 2, "a": 2, "b": 6, "$x.y": 1})");
}

TEST_F(UpdatePipelineTest, UpsertSeedsFromTheFilter) {
  Document p = Stages(R"([{"$set": {"n": {"$add": [{"$ifNull": ["$n", 0]}, 1]}, "k": "$k"}}])");
  UpdateOptions upsert;
  upsert.upsert = true;
  StatusOr<UpdateResult> r = Coll("u").UpdateOne(Json(R"({"_id": "x", "k": 7})"), UpdatePipeline{p.Get("p").Array()}, upsert);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->upserted_id.has_value());
  EXPECT_EQ(Docs("u"), R"({"_id": "x", "k": 7, "n": 1})");
  r = Coll("u").UpdateOne(Json(R"({"_id": "x", "k": 7})"), UpdatePipeline{p.Get("p").Array()}, upsert);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Docs("u"), R"({"_id": "x", "k": 7, "n": 2})");
}

TEST_F(UpdatePipelineTest, RefusedBeforeAnythingIsWritten) {
  Insert("c", R"([{"_id": 1, "a": 1}])");
  const std::pair<const char*, std::string> kCases[] = {
      {R"([{"$match": {}}])", "72: $match is not allowed to be used within an update"},
      {R"([{"$bogus": {}}])", "40324: Unrecognized pipeline stage name: '$bogus'"},
      {R"([{"$set": {"a": 1}, "$unset": "b"}])",
       "40323: A pipeline stage specification object must contain exactly one field."},
      {R"([1])", "14: Each element of the 'pipeline' array must be an object"},
      {R"([{"$set": {"a": {"$bogus": 1}}}])", "168: Unrecognized expression '$bogus'"},
      {R"([{"$project": {"a": 1, "b": 0}}])",
       "31254: Invalid $project :: caused by :: Cannot do exclusion on field b in inclusion projection"},
  };
  for (const auto& [json, expected] : kCases) {
    Document p = Stages(json);
    StatusOr<UpdateResult> r = Coll("c").UpdateMany(Json("{}"), UpdatePipeline{p.Get("p").Array()});
    ASSERT_FALSE(r.ok()) << json;
    EXPECT_EQ(std::to_string(r.status().code_number()) + ": " + std::string(r.status().message()), expected) << json;
  }
  Document p = Stages(R"([{"$set": {"a": 2}}])");
  UpdateOptions with_filters;
  with_filters.array_filters.push_back(Json(R"({"x": 1})"));
  EXPECT_EQ(Coll("c").UpdateOne(Json("{}"), UpdatePipeline{p.Get("p").Array()}, with_filters).status().code(),
            ErrorCode::kFailedToParse);
  // An evaluation error on one document leaves it as it was.
  p = Stages(R"([{"$set": {"a": {"$divide": [1, 0]}}}])");
  EXPECT_EQ(Coll("c").UpdateOne(Json("{}"), UpdatePipeline{p.Get("p").Array()}).status().code_number(), 16608);
  EXPECT_EQ(Docs("c"), R"({"_id": 1, "a": 1})");
}

// Issue #34.10: a pipeline lists at most 1,000 stages (MongoDB's
// internalPipelineLengthLimit, 7749501), wherever it is parsed: aggregate,
// $lookup, $unionWith and $facet sub-pipelines, update pipelines, views
// (their definitions, and what a read over them runs).
std::string StagesOf(size_t n, const std::string& stage = R"({"$set": {"x": 1}})") {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + stage;
  return out + "]";
}

TEST_F(UpdatePipelineTest, APipelineOfMoreThanAThousandStagesIsRefused) {
  Insert("c", R"([{"_id": 1, "a": 1}])");
  Insert("o", R"([{"_id": 1}])");
  const std::string kTooLong = "7749501: Pipeline length must be no longer than 1000 stages.";
  const std::string many = StagesOf(1001);
  EXPECT_EQ(Run("c", many), kTooLong);
  EXPECT_EQ(Run("c", StagesOf(100000)), kTooLong);
  EXPECT_EQ(Run("c", R"([{"$lookup": {"from": "o", "pipeline": )" + many + R"(, "as": "j"}}])"), kTooLong);
  EXPECT_EQ(Run("c", R"([{"$unionWith": {"coll": "o", "pipeline": )" + many + R"(}}])"), kTooLong);
  EXPECT_EQ(Run("c", R"([{"$facet": {"f": )" + many + R"(}}])"), kTooLong);
  // 1,000 is allowed.
  EXPECT_EQ(Run("c", StagesOf(1000)), R"({"_id": 1, "a": 1, "x": 1})");
  Document p = Stages(many);
  StatusOr<UpdateResult> r = Coll("c").UpdateMany(Json("{}"), UpdatePipeline{p.Get("p").Array()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::to_string(r.status().code_number()) + ": " + std::string(r.status().message()), kTooLong);
  EXPECT_EQ(Docs("c"), R"({"_id": 1, "a": 1})");
  // A view: its definition, and a read whose stages and the view's exceed it.
  p = Stages(many);
  EXPECT_EQ(db().CreateView("v_long", "c", p.Get("p").Array()).code_number(), 7749501);
  p = Stages(StagesOf(600));
  ASSERT_TRUE(db().CreateView("v", "c", p.Get("p").Array()).ok());
  EXPECT_EQ(Run("v", StagesOf(600)), kTooLong);
  EXPECT_EQ(Run("v", StagesOf(400)), R"({"_id": 1, "a": 1, "x": 1})");
}

// $lookup with let and pipeline: the manual's three examples.
TEST_F(PipelineTest, LookupPipelinesAsTheManualShows) {
  Insert("orders", R"([
    {"_id": 1, "item": "almonds", "price": 12, "ordered": 2},
    {"_id": 2, "item": "pecans", "price": 20, "ordered": 1},
    {"_id": 3, "item": "cookies", "price": 10, "ordered": 60}])");
  Insert("warehouses", R"([
    {"_id": 1, "stock_item": "almonds", "warehouse": "A", "instock": 120},
    {"_id": 2, "stock_item": "pecans", "warehouse": "A", "instock": 80},
    {"_id": 3, "stock_item": "almonds", "warehouse": "B", "instock": 60},
    {"_id": 4, "stock_item": "cookies", "warehouse": "B", "instock": 40},
    {"_id": 5, "stock_item": "cookies", "warehouse": "A", "instock": 80}])");
  // Correlated: several join conditions through let and $expr.
  EXPECT_EQ(Run("orders", R"([{"$lookup": {"from": "warehouses",
      "let": {"order_item": "$item", "order_qty": "$ordered"},
      "pipeline": [{"$match": {"$expr": {"$and": [{"$eq": ["$stock_item", "$$order_item"]},
                                                  {"$gte": ["$instock", "$$order_qty"]}]}}},
                   {"$project": {"stock_item": 0, "_id": 0}}],
      "as": "stockdata"}}])"),
            R"({"_id": 1, "item": "almonds", "price": 12, "ordered": 2, "stockdata": [{"warehouse": "A", "instock": 120}, {"warehouse": "B", "instock": 60}]}, )"
            R"({"_id": 2, "item": "pecans", "price": 20, "ordered": 1, "stockdata": [{"warehouse": "A", "instock": 80}]}, )"
            R"({"_id": 3, "item": "cookies", "price": 10, "ordered": 60, "stockdata": [{"warehouse": "A", "instock": 80}]})");
  // Uncorrelated: the same sub-pipeline for every document.
  Insert("absences", R"([
    {"_id": 1, "student": "Ann Aardvark", "sickdays": [{"$date": "2018-05-01T00:00:00Z"}]},
    {"_id": 2, "student": "Zoe Zebra", "sickdays": [{"$date": "2018-02-01T00:00:00Z"}]}])");
  Insert("holidays", R"([
    {"_id": 1, "year": 2018, "name": "New Years", "date": {"$date": "2018-01-01T00:00:00Z"}},
    {"_id": 2, "year": 2018, "name": "Pi Day", "date": {"$date": "2018-03-14T00:00:00Z"}},
    {"_id": 4, "year": 2017, "name": "New Years", "date": {"$date": "2017-01-01T00:00:00Z"}}])");
  EXPECT_EQ(Run("absences", R"([{"$lookup": {"from": "holidays",
      "pipeline": [{"$match": {"year": 2018}}, {"$project": {"_id": 0, "date": {"name": "$name", "date": "$date"}}},
                   {"$replaceRoot": {"newRoot": "$date"}}],
      "as": "holidays"}}, {"$project": {"student": 1, "holidays.name": 1}}])"),
            R"({"_id": 1, "student": "Ann Aardvark", "holidays": [{"name": "New Years"}, {"name": "Pi Day"}]}, )"
            R"({"_id": 2, "student": "Zoe Zebra", "holidays": [{"name": "New Years"}, {"name": "Pi Day"}]})");
  // The combined form: the equality, then the pipeline on what it found.
  Insert("restaurants", R"([
    {"_id": 1, "name": "American Steak House", "food": ["filet", "sirloin"], "beverages": ["beer", "wine"]},
    {"_id": 2, "name": "Honest John Pizza", "food": ["cheese pizza", "pepperoni pizza"], "beverages": ["soda"]}])");
  Insert("porders", R"([
    {"_id": 1, "item": "filet", "restaurant_name": "American Steak House"},
    {"_id": 2, "item": "cheese pizza", "restaurant_name": "Honest John Pizza", "drink": "lemonade"},
    {"_id": 3, "item": "cheese pizza", "restaurant_name": "Honest John Pizza", "drink": "soda"}])");
  EXPECT_EQ(Run("porders", R"([{"$lookup": {"from": "restaurants", "localField": "restaurant_name",
      "foreignField": "name", "let": {"orders_drink": "$drink"},
      "pipeline": [{"$match": {"$expr": {"$in": ["$$orders_drink", "$beverages"]}}}, {"$project": {"name": 1}}],
      "as": "matches"}}, {"$project": {"matches": 1}}])"),
            R"({"_id": 1, "matches": []}, {"_id": 2, "matches": []}, {"_id": 3, "matches": [{"_id": 2, "name": "Honest John Pizza"}]})");
  // A nested $lookup sees the outer let's names.
  EXPECT_EQ(Run("orders", R"([{"$match": {"_id": 2}}, {"$lookup": {"from": "warehouses", "let": {"it": "$item"},
      "pipeline": [{"$match": {"$expr": {"$eq": ["$stock_item", "$$it"]}}},
                   {"$lookup": {"from": "orders", "let": {"w": "$warehouse"},
                                "pipeline": [{"$match": {"$expr": {"$eq": ["$item", "$$it"]}}},
                                             {"$project": {"_id": 0, "tag": {"$concat": ["$$it", "@", "$$w"]}}}],
                                "as": "again"}},
                   {"$project": {"_id": 0, "again": 1}}],
      "as": "w"}}, {"$project": {"w": 1}}])"),
            R"({"_id": 2, "w": [{"again": [{"tag": "pecans@A"}]}]})");
  // Checked before anything is read.
  EXPECT_EQ(Run("orders", R"([{"$lookup": {"from": "warehouses", "let": {"x": 1}, "as": "a"}}])"),
            "9: $lookup with 'let' requires a 'pipeline'");
  EXPECT_EQ(Run("orders", R"([{"$lookup": {"from": "warehouses", "pipeline": {}, "as": "a"}}])"),
            "9: 'pipeline' option must be specified as an array");
  EXPECT_EQ(Run("orders", R"([{"$lookup": {"from": "warehouses", "pipeline": [{"$match": {"$expr": "$$nope"}}], "as": "a"}}])"),
            "17276: Use of undefined variable: nope");
  EXPECT_EQ(Run("orders", R"([{"$lookup": {"from": "warehouses", "let": {"Bad": 1}, "pipeline": [], "as": "a"}}])"),
            "16867: 'Bad' starts with an invalid character for a user variable name");
  EXPECT_EQ(Run("orders", R"([{"$lookup": {"from": "warehouses", "pipeline": [{"$out": "x"}], "as": "a"}}])"),
            "51047: $out is not allowed within a $lookup's sub-pipeline");
}

// The accumulators beyond the first nine: the manual's examples.
TEST_F(PipelineTest, MoreAccumulatorsAsTheManualShows) {
  Insert("gamescores", R"([
    {"_id": 1, "playerId": "PlayerA", "gameId": "G1", "score": 31},
    {"_id": 2, "playerId": "PlayerB", "gameId": "G1", "score": 33},
    {"_id": 3, "playerId": "PlayerC", "gameId": "G1", "score": 99},
    {"_id": 4, "playerId": "PlayerD", "gameId": "G1", "score": 1},
    {"_id": 5, "playerId": "PlayerA", "gameId": "G2", "score": 10},
    {"_id": 6, "playerId": "PlayerB", "gameId": "G2", "score": 14},
    {"_id": 7, "playerId": "PlayerC", "gameId": "G2", "score": 66},
    {"_id": 8, "playerId": "PlayerD", "gameId": "G2", "score": 80}])");
  EXPECT_EQ(Run("gamescores", R"([{"$group": {"_id": "$gameId",
      "top": {"$top": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}}},
      "bottom": {"$bottom": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}}}}},
      {"$sort": {"_id": 1}}])"),
            R"({"_id": "G1", "top": ["PlayerC", 99], "bottom": ["PlayerD", 1]}, )"
            R"({"_id": "G2", "top": ["PlayerD", 80], "bottom": ["PlayerA", 10]})");
  EXPECT_EQ(Run("gamescores", R"([{"$group": {"_id": "$gameId",
      "topN": {"$topN": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}, "n": 3}},
      "bottomN": {"$bottomN": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}, "n": 3}}}},
      {"$sort": {"_id": 1}}])"),
            R"({"_id": "G1", "topN": [["PlayerC", 99], ["PlayerB", 33], ["PlayerA", 31]], )"
            R"("bottomN": [["PlayerB", 33], ["PlayerA", 31], ["PlayerD", 1]]}, )"
            R"({"_id": "G2", "topN": [["PlayerD", 80], ["PlayerC", 66], ["PlayerB", 14]], )"
            R"("bottomN": [["PlayerC", 66], ["PlayerB", 14], ["PlayerA", 10]]})");
  EXPECT_EQ(Run("gamescores", R"([{"$match": {"gameId": "G1"}}, {"$group": {"_id": "$gameId",
      "firstN": {"$firstN": {"input": ["$playerId", "$score"], "n": 3}},
      "lastN": {"$lastN": {"input": "$playerId", "n": 3}},
      "maxN": {"$maxN": {"input": "$score", "n": 3}},
      "minN": {"$minN": {"input": "$score", "n": 3}}}}])"),
            R"({"_id": "G1", "firstN": [["PlayerA", 31], ["PlayerB", 33], ["PlayerC", 99]], )"
            R"("lastN": ["PlayerB", "PlayerC", "PlayerD"], "maxN": [99, 33, 31], "minN": [1, 31, 33]})");
  // n from the group key (the manual's "n depends on _id" example).
  EXPECT_EQ(Run("gamescores", R"([{"$group": {"_id": {"gameId": "$gameId"},
      "s": {"$firstN": {"input": "$score", "n": {"$cond": {"if": {"$eq": ["$gameId", "G2"]}, "then": 1, "else": 3}}}}}},
      {"$sort": {"_id.gameId": 1}}])"),
            R"({"_id": {"gameId": "G1"}, "s": [31, 33, 99]}, {"_id": {"gameId": "G2"}, "s": [10]})");
  // Standard deviations (the manual's quiz scores).
  Insert("users", R"([
    {"_id": 1, "quiz": 1, "score": 85}, {"_id": 2, "quiz": 1, "score": 90}, {"_id": 3, "quiz": 1, "score": 71},
    {"_id": 4, "quiz": 2, "score": 96}, {"_id": 5, "quiz": 2, "score": 77}, {"_id": 6, "quiz": 2, "score": 82},
    {"_id": 7, "quiz": 3, "score": "n/a"}])");
  EXPECT_EQ(Run("users", R"([{"$group": {"_id": "$quiz", "pop": {"$stdDevPop": "$score"},
                                         "samp": {"$stdDevSamp": "$score"}}}, {"$sort": {"_id": 1}}])"),
            R"({"_id": 1, "pop": 8.04155872120988, "samp": 9.848857801796104}, )"
            R"({"_id": 2, "pop": 8.04155872120988, "samp": 9.848857801796104}, )"
            R"({"_id": 3, "pop": null, "samp": null})");
  // $mergeObjects (the manual's quarterly sales).
  Insert("sales", R"([
    {"_id": 1, "year": 2017, "item": "A", "quantity": {"2017Q1": 500, "2017Q2": 500}},
    {"_id": 2, "year": 2016, "item": "A", "quantity": {"2016Q1": 400, "2016Q2": 300, "2016Q3": 0, "2016Q4": 0}},
    {"_id": 3, "year": 2017, "item": "B", "quantity": {"2017Q1": 300}},
    {"_id": 4, "year": 2016, "item": "B", "quantity": {"2016Q3": 100, "2016Q4": 250}}])");
  EXPECT_EQ(Run("sales", R"([{"$group": {"_id": "$item", "mergedSales": {"$mergeObjects": "$quantity"}}},
                            {"$sort": {"_id": 1}}])"),
            R"({"_id": "A", "mergedSales": {"2017Q1": 500, "2017Q2": 500, "2016Q1": 400, "2016Q2": 300, "2016Q3": 0, "2016Q4": 0}}, )"
            R"({"_id": "B", "mergedSales": {"2017Q1": 300, "2016Q3": 100, "2016Q4": 250}})");
  // Malformed accumulators fail before anything is read.
  EXPECT_EQ(Run("sales", R"([{"$group": {"_id": 1, "x": {"$topN": {"output": "$a", "sortBy": {"a": 1}}}}}])"),
            "5787906: $topN requires 'n' to be specified");
  EXPECT_EQ(Run("sales", R"([{"$group": {"_id": 1, "x": {"$top": {"output": "$a"}}}}])"),
            "5788004: $top requires 'sortBy' to be specified");
  EXPECT_EQ(Run("sales", R"([{"$group": {"_id": 1, "x": {"$firstN": {"input": "$a", "n": 1, "z": 1}}}}])"),
            "5787901: Unknown argument to $firstN 'z'");
  EXPECT_EQ(Run("sales", R"([{"$group": {"_id": 1, "x": {"$firstN": {"input": "$a", "n": 0}}}}])"),
            "5787908: 'n' must be greater than 0, found 0");
  EXPECT_EQ(Run("sales", R"([{"$group": {"_id": 1, "x": {"$mergeObjects": "$year"}}}])"),
            "40400: $mergeObjects requires object inputs, but input 2017 is of type int");
  EXPECT_EQ(Run("sales", R"([{"$group": {"_id": 1, "x": {"$median": "$year"}}}])"),
            "238: the accumulator $median is not supported by rockdoc yet");
}

// $topN/$bottomN/$maxN/$minN keep only n per group while running: the
// answer over many documents equals sorting them all (brute force).
TEST_F(PipelineTest, RankedAccumulatorsAgreeWithASort) {
  std::vector<Document> docs;
  std::vector<int> scores;
  for (int i = 0; i < 400; ++i) {
    const int score = (i * 37) % 101;
    scores.push_back(score);
    docs.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"score\": " + std::to_string(score) + "}"));
  }
  ASSERT_TRUE(Coll("many").InsertMany(docs).ok());
  std::vector<int> sorted = scores;
  std::stable_sort(sorted.begin(), sorted.end(), std::greater<int>());
  auto list = [](std::vector<int>::const_iterator from, std::vector<int>::const_iterator to) {
    std::string out;
    for (auto it = from; it != to; ++it) out += (out.empty() ? "" : ", ") + std::to_string(*it);
    return "[" + out + "]";
  };
  EXPECT_EQ(Run("many", R"([{"$group": {"_id": null,
      "top": {"$topN": {"n": 7, "sortBy": {"score": -1}, "output": "$score"}},
      "bottom": {"$bottomN": {"n": 7, "sortBy": {"score": -1}, "output": "$score"}},
      "max": {"$maxN": {"n": 7, "input": "$score"}},
      "last": {"$lastN": {"n": 3, "input": "$_id"}}}}])"),
            "{\"_id\": null, \"top\": " + list(sorted.begin(), sorted.begin() + 7) +
                ", \"bottom\": " + list(sorted.end() - 7, sorted.end()) +
                ", \"max\": " + list(sorted.begin(), sorted.begin() + 7) + ", \"last\": [397, 398, 399]}");
}

// $bucket and $bucketAuto: the manual's artists, and bucketAuto's rules.
TEST_F(PipelineTest, BucketsAsTheManualShows) {
  Insert("artists", R"([
    {"_id": 1, "last_name": "Bernard", "first_name": "Emil", "year_born": 1868},
    {"_id": 2, "last_name": "Rippl-Ronai", "first_name": "Joszef", "year_born": 1861},
    {"_id": 3, "last_name": "Ostroumova", "first_name": "Anna", "year_born": 1871},
    {"_id": 4, "last_name": "Van Gogh", "first_name": "Vincent", "year_born": 1853},
    {"_id": 5, "last_name": "Maurer", "first_name": "Alfred", "year_born": 1868},
    {"_id": 6, "last_name": "Munch", "first_name": "Edvard", "year_born": 1863},
    {"_id": 7, "last_name": "Redon", "first_name": "Odilon", "year_born": 1840},
    {"_id": 8, "last_name": "Diriks", "first_name": "Edvard", "year_born": 1855},
    {"_id": 9, "last_name": "Anon"}])");
  EXPECT_EQ(Run("artists", R"([{"$bucket": {"groupBy": "$year_born", "boundaries": [1840, 1850, 1860, 1870, 1880],
      "default": "Other", "output": {"count": {"$sum": 1},
      "artists": {"$push": {"name": {"$concat": ["$first_name", " ", "$last_name"]}, "year_born": "$year_born"}}}}},
      {"$match": {"count": {"$gt": 3}}}])"),
            R"({"_id": 1860, "count": 4, "artists": [{"name": "Emil Bernard", "year_born": 1868}, )"
            R"({"name": "Joszef Rippl-Ronai", "year_born": 1861}, {"name": "Alfred Maurer", "year_born": 1868}, )"
            R"({"name": "Edvard Munch", "year_born": 1863}]})");
  // Without output: a count; the default bucket sorts by its value.
  EXPECT_EQ(Run("artists", R"([{"$bucket": {"groupBy": "$year_born", "boundaries": [1840, 1850, 1860, 1870, 1880],
      "default": "Other"}}])"),
            R"({"_id": 1840, "count": 1}, {"_id": 1850, "count": 2}, {"_id": 1860, "count": 4}, )"
            R"({"_id": 1870, "count": 1}, {"_id": "Other", "count": 1})");
  EXPECT_EQ(Run("artists", R"([{"$bucket": {"groupBy": "$year_born", "boundaries": [1840, 1880]}}])"),
            "40066: $switch could not find a matching branch for an input, and no default was specified.");
  EXPECT_EQ(Run("artists", R"([{"$bucket": {"groupBy": "$year_born", "boundaries": [1880, 1840]}}])"),
            "40194: The 'boundaries' option to $bucket must be sorted in ascending order, but elements 1880 "
            "and 1840 are not in ascending order.");
  EXPECT_EQ(Run("artists", R"([{"$bucket": {"groupBy": "$year_born", "boundaries": [1, "a"]}}])"),
            "40193: All values in the the 'boundaries' option to $bucket must have the same type. Found "
            "conflicting types int and string.");
  EXPECT_EQ(Run("artists", R"([{"$bucket": {"groupBy": "$year_born", "boundaries": [1, 5], "default": 3}}])"),
            "40199: The $bucket 'default' field must be less than the lowest boundary or greater than or "
            "equal to the highest boundary.");
  EXPECT_EQ(Run("artists", R"([{"$bucket": {"groupBy": "year_born", "boundaries": [1, 5]}}])"),
            "40202: The $bucket 'groupBy' field must be defined as a $-prefixed path or an expression, but "
            "found: 'year_born'.");
  EXPECT_EQ(Run("artists", R"([{"$bucket": {"groupBy": "$a", "boundaries": [1, 5], "bogus": 1}}])"),
            "40197: Unrecognized option to $bucket: bogus.");

  // $bucketAuto: about n/buckets each; a bucket's max is the next one's
  // min (the last's is its own maximum); missing sorts first, as null.
  Insert("artwork", R"([
    {"_id": 1, "price": 199.99}, {"_id": 2, "price": 280}, {"_id": 3, "price": 76.04},
    {"_id": 4, "price": 167.3}, {"_id": 5, "price": 483}, {"_id": 6, "price": 385},
    {"_id": 7}, {"_id": 8, "price": 159}])");
  EXPECT_EQ(Run("artwork", R"([{"$bucketAuto": {"groupBy": "$price", "buckets": 4}}])"),
            R"({"_id": {"min": null, "max": 159}, "count": 2}, {"_id": {"min": 159, "max": 199.99}, "count": 2}, )"
            R"({"_id": {"min": 199.99, "max": 385}, "count": 2}, {"_id": {"min": 385, "max": 483}, "count": 2})");
  // Equal values stay in one bucket, so there may be fewer buckets.
  Insert("same", R"([{"v": 1}, {"v": 1}, {"v": 1}, {"v": 1}, {"v": 2}, {"v": 3}])");
  EXPECT_EQ(Run("same", R"([{"$bucketAuto": {"groupBy": "$v", "buckets": 3, "output": {"n": {"$sum": 1}, "vs": {"$addToSet": "$v"}}}}])"),
            R"({"_id": {"min": 1, "max": 2}, "n": 4, "vs": [1]}, {"_id": {"min": 2, "max": 3}, "n": 2, "vs": [2, 3]})");
  EXPECT_EQ(Run("same", R"([{"$bucketAuto": {"groupBy": "$v", "buckets": 0}}])"),
            "40243: The $bucketAuto 'buckets' field must be greater than 0, but found: 0.");
  EXPECT_EQ(Run("same", R"([{"$bucketAuto": {"groupBy": "$v", "buckets": 2, "granularity": "R5"}}])"),
            "238: $bucketAuto's granularity is not supported by rockdoc yet");
}

// $documents (Database::Aggregate, {aggregate: 1}) and an aggregate's let.
TEST_F(PipelineTest, DocumentsAndLet) {
  auto run_db = [&](std::string_view pipeline_json) {
    Document p = Json(std::string("{\"p\": ") + std::string(pipeline_json) + "}");
    StatusOr<Cursor> cursor = db().Aggregate(p.Get("p").Array());
    if (!cursor.ok()) {
      return std::to_string(cursor.status().code_number()) + ": " + std::string(cursor.status().message());
    }
    std::string out;
    while (cursor->Next()) out += (out.empty() ? "" : ", ") + ToJson(cursor->document());
    return out;
  };
  // The manual's example: $documents then $bucketAuto.
  EXPECT_EQ(run_db(R"([{"$documents": [{"x": 10}, {"x": 2}, {"x": 5}]}, {"$bucketAuto": {"groupBy": "$x", "buckets": 4}}])"),
            R"({"_id": {"min": 2, "max": 5}, "count": 1}, {"_id": {"min": 5, "max": 10}, "count": 1}, )"
            R"({"_id": {"min": 10, "max": 10}, "count": 1})");
  // ... and joined to a collection.
  Insert("locations", R"([{"_id": 1, "name": "Berkeley", "state": "CA"}, {"_id": 2, "name": "Boston", "state": "MA"}])");
  EXPECT_EQ(run_db(R"([{"$documents": [{"city": "Berkeley"}, {"city": "Nowhere"}]},
                       {"$lookup": {"from": "locations", "localField": "city", "foreignField": "name", "as": "l"}},
                       {"$project": {"city": 1, "state": {"$first": "$l.state"}}}])"),
            R"({"city": "Berkeley", "state": "CA"}, {"city": "Nowhere"})");
  EXPECT_EQ(run_db(R"([{"$match": {}}])"), "73: {aggregate: 1} is not valid for '$match'; a collection is required.");
  EXPECT_EQ(run_db(R"([{"$documents": [1]}])"),
            "5858202: error during $documents stage: $documents must evaluate to an array of objects");
  EXPECT_EQ(Run("locations", R"([{"$documents": []}])"), "40602: $documents is only valid as the first stage in a pipeline");
  // let: variables for the whole pipeline, $match's $expr included.
  AggregateOptions with_let;
  with_let.let = Json(R"({"min": 1, "label": {"$concat": ["st", "ate"]}})");
  Document p = Json(R"({"p": [{"$match": {"$expr": {"$gt": ["$_id", "$$min"]}}}, {"$project": {"_id": 0, "v": "$$label"}}]})");
  StatusOr<Cursor> c = Coll("locations").Aggregate(p.Get("p").Array(), with_let);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->Next());
  EXPECT_EQ(ToJson(c->document()), R"({"v": "state"})");
  EXPECT_FALSE(c->Next());
  with_let.let = Json(R"({"Min": 1})");
  EXPECT_EQ(Coll("locations").Aggregate(p.Get("p").Array(), with_let).status().code_number(), 16867);
}

// $redact and $graphLookup: the manual's examples.
TEST_F(PipelineTest, RedactAndGraphLookupAsTheManualShows) {
  Insert("forecasts", R"([{"_id": 1, "title": "123 Department Report", "tags": ["G", "STLW"], "year": 2014,
    "subsections": [
      {"subtitle": "Section 1: Overview", "tags": ["SI", "G"], "content": "Section 1: This is the content of section 1."},
      {"subtitle": "Section 2: Analysis", "tags": ["STLW"], "content": "Section 2: This is the content of section 2."},
      {"subtitle": "Section 3: Budgeting", "tags": ["TK"],
       "content": {"text": "Section 3: This is the content of section 3.", "tags": ["HCS"]}}]}])");
  EXPECT_EQ(Run("forecasts", R"([{"$match": {"year": 2014}}, {"$redact": {"$cond": {
      "if": {"$gt": [{"$size": {"$setIntersection": ["$tags", ["STLW", "G"]]}}, 0]},
      "then": "$$DESCEND", "else": "$$PRUNE"}}}])"),
            R"({"_id": 1, "title": "123 Department Report", "tags": ["G", "STLW"], "year": 2014, "subsections": [)"
            R"({"subtitle": "Section 1: Overview", "tags": ["SI", "G"], "content": "Section 1: This is the content of section 1."}, )"
            R"({"subtitle": "Section 2: Analysis", "tags": ["STLW"], "content": "Section 2: This is the content of section 2."}]})");
  // $$KEEP keeps a level whole; $$ROOT stays the top document while "$path" reads the current level.
  EXPECT_EQ(Run("forecasts", R"([{"$redact": {"$cond": [{"$eq": ["$$ROOT.year", 2014]}, "$$KEEP", "$$PRUNE"]}},
                                 {"$project": {"n": {"$size": "$subsections"}}}])"),
            R"({"_id": 1, "n": 3})");
  EXPECT_EQ(Run("forecasts", R"([{"$redact": 1}])"),
            "17053: $redact's expression should not return anything aside from the variables $$KEEP, "
            "$$DESCEND, and $$PRUNE, but returned 1");

  Insert("employees", R"([
    {"_id": 1, "name": "Dev"}, {"_id": 2, "name": "Eliot", "reportsTo": "Dev"},
    {"_id": 3, "name": "Ron", "reportsTo": "Eliot"}, {"_id": 4, "name": "Andrew", "reportsTo": "Eliot"},
    {"_id": 5, "name": "Asya", "reportsTo": "Ron"}, {"_id": 6, "name": "Dan", "reportsTo": "Andrew"}])");
  EXPECT_EQ(Run("employees", R"([{"$graphLookup": {"from": "employees", "startWith": "$reportsTo",
      "connectFromField": "reportsTo", "connectToField": "name", "as": "reportingHierarchy"}},
      {"$project": {"name": 1, "chain": {"$sortArray": {"input": "$reportingHierarchy.name", "sortBy": 1}}}}])"),
            R"({"_id": 1, "name": "Dev", "chain": []}, {"_id": 2, "name": "Eliot", "chain": ["Dev"]}, )"
            R"({"_id": 3, "name": "Ron", "chain": ["Dev", "Eliot"]}, {"_id": 4, "name": "Andrew", "chain": ["Dev", "Eliot"]}, )"
            R"({"_id": 5, "name": "Asya", "chain": ["Dev", "Eliot", "Ron"]}, {"_id": 6, "name": "Dan", "chain": ["Andrew", "Dev", "Eliot"]})");
  // maxDepth and depthField; restrictSearchWithMatch.
  EXPECT_EQ(Run("employees", R"([{"$match": {"name": "Asya"}}, {"$graphLookup": {"from": "employees", "startWith": "$reportsTo",
      "connectFromField": "reportsTo", "connectToField": "name", "as": "up", "maxDepth": 1, "depthField": "d"}},
      {"$project": {"up": {"$sortArray": {"input": {"$map": {"input": "$up", "in": {"n": "$$this.name", "d": "$$this.d"}}}, "sortBy": {"d": 1}}}}}])"),
            R"({"_id": 5, "up": [{"n": "Ron", "d": 0}, {"n": "Eliot", "d": 1}]})");
  EXPECT_EQ(Run("employees", R"([{"$match": {"name": "Asya"}}, {"$graphLookup": {"from": "employees", "startWith": "$reportsTo",
      "connectFromField": "reportsTo", "connectToField": "name", "as": "up", "restrictSearchWithMatch": {"name": {"$ne": "Eliot"}}}},
      {"$project": {"up.name": 1}}])"),
            R"({"_id": 5, "up": [{"name": "Ron"}]})");
  EXPECT_EQ(Run("employees", R"([{"$graphLookup": {"from": "employees", "startWith": "$a", "as": "x"}}])"),
            "40105: must specify 'startWith', 'connectFromField', 'connectToField', 'from', and 'as' for $graphLookup");
  EXPECT_EQ(Run("employees", R"([{"$graphLookup": {"from": "employees", "startWith": "$a", "connectFromField": "a",
      "connectToField": "b", "as": "x", "maxDepth": -1}}])"),
            "40101: maxDepth requires a nonnegative argument, found: -1");
}

// $out and $merge: the manual's examples, each whenMatched/whenNotMatched
// mode, and all-or-nothing failures.
TEST_F(PipelineTest, OutAndMergeAsTheManualShows) {
  Insert("books", R"([
    {"_id": 8751, "title": "The Banquet", "author": "Dante", "copies": 2},
    {"_id": 8752, "title": "Divine Comedy", "author": "Dante", "copies": 1},
    {"_id": 8645, "title": "Eclogues", "author": "Dante", "copies": 2},
    {"_id": 7000, "title": "The Odyssey", "author": "Homer", "copies": 10},
    {"_id": 7020, "title": "Iliad", "author": "Homer", "copies": 10}])");
  // The target exists, with an index: $out replaces its documents, keeps the index.
  Insert("authors", R"([{"_id": "old"}])");
  ASSERT_TRUE(Coll("authors").CreateIndex(Json(R"({"books": 1})")).ok());
  EXPECT_EQ(Run("books", R"([{"$sort": {"_id": 1}}, {"$group": {"_id": "$author", "books": {"$push": "$title"}}},
                             {"$out": "authors"}])"), "");
  EXPECT_EQ(Run("authors", R"([{"$sort": {"_id": 1}}])"),
            R"({"_id": "Dante", "books": ["Eclogues", "The Banquet", "Divine Comedy"]}, {"_id": "Homer", "books": ["The Odyssey", "Iliad"]})");
  EXPECT_EQ(Coll("authors").ListIndexes().value().size(), 2u);
  // A failing $out (two documents with one _id) leaves the target as it was, and no temporary collection.
  EXPECT_EQ(Run("books", R"([{"$project": {"_id": "same"}}, {"$out": "authors"}])").substr(0, 6), "11000:");
  EXPECT_EQ(Coll("authors").CountDocuments(Json("{}")).value(), 2);
  const auto collections = db().ListCollections().value();
  for (const auto& info : collections) EXPECT_EQ(info.name.find("tmp.agg_out"), std::string::npos);
  EXPECT_EQ(Run("books", R"([{"$out": "authors"}, {"$match": {}}])"), "40601: $out can only be the final stage in the pipeline");
  EXPECT_EQ(Run("books", R"([{"$facet": {"a": [{"$out": "x"}]}}])"), "40600: $out is not allowed to be used within a $facet stage");
  EXPECT_EQ(Run("books", R"([{"$out": "system.x"}])"), "17385: Can't $out to special collection: system.x");
  EXPECT_EQ(Run("books", R"([{"$out": {"db": "other", "coll": "copy"}}])"), "");
  EXPECT_EQ(client_->GetDatabase("other").GetCollection("copy").CountDocuments(Json("{}")).value(), 5);

  // $merge: the manual's budgets roll-up.
  Insert("salaries", R"([
    {"_id": 1, "employee": "Ant", "dept": "A", "salary": 100000, "fiscal_year": 2017},
    {"_id": 2, "employee": "Bee", "dept": "A", "salary": 120000, "fiscal_year": 2017},
    {"_id": 3, "employee": "Cat", "dept": "Z", "salary": 115000, "fiscal_year": 2017},
    {"_id": 4, "employee": "Ant", "dept": "A", "salary": 115000, "fiscal_year": 2018},
    {"_id": 5, "employee": "Bee", "dept": "Z", "salary": 145000, "fiscal_year": 2018},
    {"_id": 6, "employee": "Cat", "dept": "Z", "salary": 135000, "fiscal_year": 2018}])");
  EXPECT_EQ(Run("salaries", R"([{"$group": {"_id": {"fiscal_year": "$fiscal_year", "dept": "$dept"}, "salaries": {"$sum": "$salary"}}},
      {"$merge": {"into": "budgets", "on": "_id", "whenMatched": "replace", "whenNotMatched": "insert"}}])"), "");
  EXPECT_EQ(Run("budgets", R"([{"$sort": {"_id.fiscal_year": 1, "_id.dept": 1}}])"),
            R"({"_id": {"fiscal_year": 2017, "dept": "A"}, "salaries": 220000}, {"_id": {"fiscal_year": 2017, "dept": "Z"}, "salaries": 115000}, )"
            R"({"_id": {"fiscal_year": 2018, "dept": "A"}, "salaries": 115000}, {"_id": {"fiscal_year": 2018, "dept": "Z"}, "salaries": 280000})");

  // Each mode, merging [{_id: 1, a: 10, b: 1}, {_id: 3, a: 3}] into [{_id: 1, a: 1, keep: "x"}, {_id: 2, a: 2}].
  auto merge = [&](std::string_view how) {
    EXPECT_TRUE(Coll("t").Drop().ok());
    Insert("t", R"([{"_id": 1, "a": 1, "keep": "x"}, {"_id": 2, "a": 2}])");
    Document p = Json(std::string(R"({"p": [{"$documents": [{"_id": 1, "a": 10, "b": 1}, {"_id": 3, "a": 3}]},
                                            {"$merge": {"into": "t", )") + std::string(how) + "}}]}");
    StatusOr<Cursor> c = db().Aggregate(p.Get("p").Array());
    std::string out = c.ok() ? "" : std::to_string(c.status().code_number()) + ": ";
    return out + Run("t", R"([{"$sort": {"_id": 1}}])");
  };
  EXPECT_EQ(merge(R"("whenMatched": "merge")"),
            R"({"_id": 1, "a": 10, "keep": "x", "b": 1}, {"_id": 2, "a": 2}, {"_id": 3, "a": 3})");
  EXPECT_EQ(merge(R"("whenMatched": "replace")"),
            R"({"_id": 1, "a": 10, "b": 1}, {"_id": 2, "a": 2}, {"_id": 3, "a": 3})");
  EXPECT_EQ(merge(R"("whenMatched": "keepExisting", "whenNotMatched": "discard")"),
            R"({"_id": 1, "a": 1, "keep": "x"}, {"_id": 2, "a": 2})");
  EXPECT_EQ(merge(R"("whenMatched": [{"$set": {"a": {"$add": ["$a", "$$new.a"]}}}])"),
            R"({"_id": 1, "a": 11, "keep": "x"}, {"_id": 2, "a": 2}, {"_id": 3, "a": 3})");
  EXPECT_EQ(merge(R"("let": {"incoming": "$a"}, "whenMatched": [{"$set": {"from": "$$incoming"}}])"),
            R"({"_id": 1, "a": 1, "keep": "x", "from": 10}, {"_id": 2, "a": 2}, {"_id": 3, "a": 3})");
  // fail modes: all or nothing.
  EXPECT_EQ(merge(R"("whenMatched": "fail")").substr(0, 7), "11000: ");
  EXPECT_EQ(Run("t", "[]"), R"({"_id": 1, "a": 1, "keep": "x"}, {"_id": 2, "a": 2})");
  EXPECT_EQ(merge(R"("whenMatched": "merge", "whenNotMatched": "fail")"),
            "13113: " R"({"_id": 1, "a": 1, "keep": "x"}, {"_id": 2, "a": 2})");
  // `on` other than _id needs a unique index on those fields.
  EXPECT_EQ(merge(R"("on": "a")").substr(0, 7), "51183: ");
  ASSERT_TRUE(Coll("u").CreateIndex(Json(R"({"k": 1})"), IndexOptions{.unique = true}).ok());
  Insert("u", R"([{"_id": 1, "k": "x", "n": 1}])");
  Document p = Json(R"({"p": [{"$documents": [{"k": "x", "n": 2}, {"k": "y", "n": 3}]}, {"$merge": {"into": "u", "on": "k"}}]})");
  ASSERT_TRUE(db().Aggregate(p.Get("p").Array()).ok()) << db().Aggregate(p.Get("p").Array()).status();
  EXPECT_EQ(Run("u", R"([{"$project": {"_id": 0}}, {"$sort": {"k": 1}}])"), R"({"k": "x", "n": 2}, {"k": "y", "n": 3})");
  EXPECT_EQ(Run("books", R"([{"$merge": {"into": "t", "whenMatched": "bogus"}}])"),
            "2: Enumeration value 'bogus' for field '$merge.whenMatched' is not a valid value.");
  EXPECT_EQ(Run("books", R"([{"$merge": {"into": "t", "let": {"x": 1}}}])"),
            "51199: Cannot use 'let' variables with 'whenMatched: merge' mode");
}

// Decimals through the accumulators and window functions: $sum and $avg stay
// decimal (the quotient to 34 digits, as Python's decimal computes it);
// $stdDevPop is a double, as MongoDB's.
TEST_F(PipelineTest, DecimalAccumulatorsAndWindows) {
  Insert("prices", R"([{"_id": 1, "p": {"$numberDecimal": "10.10"}}, {"_id": 2, "p": {"$numberDecimal": "20.20"}},
                       {"_id": 3, "p": {"$numberDecimal": "5.05"}}])");
  EXPECT_EQ(Run("prices", R"([{"$group": {"_id": null, "s": {"$sum": "$p"}, "a": {"$avg": "$p"},
                                          "sd": {"$stdDevPop": "$p"}}},
                              {"$project": {"s": 1, "a": 1, "sd": {"$type": "$sd"}}}])"),
            R"({"_id": null, "s": {"$numberDecimal": "35.35"}, )"
            R"("a": {"$numberDecimal": "11.78333333333333333333333333333333"}, "sd": "double"})");
  EXPECT_EQ(Run("prices", R"([{"$setWindowFields": {"sortBy": {"_id": 1},
      "output": {"m": {"$avg": "$p", "window": {"documents": [-1, 0]}}, "t": {"$sum": "$p"}}}},
      {"$project": {"m": 1, "t": 1}}])"),
            R"({"_id": 1, "m": {"$numberDecimal": "10.10"}, "t": {"$numberDecimal": "35.35"}}, )"
            R"({"_id": 2, "m": {"$numberDecimal": "15.15"}, "t": {"$numberDecimal": "35.35"}}, )"
            R"({"_id": 3, "m": {"$numberDecimal": "12.625"}, "t": {"$numberDecimal": "35.35"}})");
}

// $setWindowFields: the manual's cake sales.
TEST_F(PipelineTest, SetWindowFieldsAsTheManualShows) {
  Insert("cakeSales", R"([
    {"_id": 0, "type": "chocolate", "orderDate": {"$date": "2020-05-18T14:10:30Z"}, "state": "CA", "price": 13, "quantity": 120},
    {"_id": 1, "type": "chocolate", "orderDate": {"$date": "2021-03-20T11:30:05Z"}, "state": "WA", "price": 14, "quantity": 140},
    {"_id": 2, "type": "vanilla", "orderDate": {"$date": "2021-01-11T06:31:15Z"}, "state": "CA", "price": 12, "quantity": 145},
    {"_id": 3, "type": "vanilla", "orderDate": {"$date": "2020-02-08T13:13:23Z"}, "state": "WA", "price": 13, "quantity": 104},
    {"_id": 4, "type": "strawberry", "orderDate": {"$date": "2019-05-18T16:09:01Z"}, "state": "CA", "price": 41, "quantity": 162},
    {"_id": 5, "type": "strawberry", "orderDate": {"$date": "2019-01-08T06:12:03Z"}, "state": "WA", "price": 43, "quantity": 134}])");
  // Cumulative quantity per state.
  EXPECT_EQ(Run("cakeSales", R"([{"$setWindowFields": {"partitionBy": "$state", "sortBy": {"orderDate": 1},
      "output": {"cumulativeQuantityForState": {"$sum": "$quantity", "window": {"documents": ["unbounded", "current"]}}}}},
      {"$project": {"c": "$cumulativeQuantityForState"}}])"),
            R"({"_id": 4, "c": 162}, {"_id": 0, "c": 282}, {"_id": 2, "c": 427}, )"
            R"({"_id": 5, "c": 134}, {"_id": 3, "c": 238}, {"_id": 1, "c": 378})");
  // Moving average of the order and the one before, per year.
  EXPECT_EQ(Run("cakeSales", R"([{"$setWindowFields": {"partitionBy": {"$year": "$orderDate"}, "sortBy": {"orderDate": 1},
      "output": {"averageQuantity": {"$avg": "$quantity", "window": {"documents": [-1, 0]}}}}},
      {"$project": {"a": "$averageQuantity"}}])"),
            R"({"_id": 5, "a": 134.0}, {"_id": 4, "a": 148.0}, {"_id": 3, "a": 104.0}, {"_id": 0, "a": 112.0}, )"
            R"({"_id": 2, "a": 145.0}, {"_id": 1, "a": 142.5})");
  // Rank, dense rank, document number, shift, and a whole-partition total.
  EXPECT_EQ(Run("cakeSales", R"([{"$setWindowFields": {"partitionBy": "$state", "sortBy": {"quantity": -1},
      "output": {"rank": {"$rank": {}}, "dense": {"$denseRank": {}}, "n": {"$documentNumber": {}},
                 "next": {"$shift": {"output": "$quantity", "by": 1, "default": "Not available"}},
                 "total": {"$sum": "$quantity"}}}},
      {"$project": {"rank": 1, "dense": 1, "n": 1, "next": 1, "total": 1}}])"),
            R"({"_id": 4, "rank": 1, "dense": 1, "n": 1, "next": 145, "total": 427}, )"
            R"({"_id": 2, "rank": 2, "dense": 2, "n": 2, "next": 120, "total": 427}, )"
            R"({"_id": 0, "rank": 3, "dense": 3, "n": 3, "next": "Not available", "total": 427}, )"
            R"({"_id": 1, "rank": 1, "dense": 1, "n": 1, "next": 134, "total": 378}, )"
            R"({"_id": 5, "rank": 2, "dense": 2, "n": 2, "next": 104, "total": 378}, )"
            R"({"_id": 3, "rank": 3, "dense": 3, "n": 3, "next": "Not available", "total": 378})");
  // Ties share a rank; $rank leaves a gap after them, $denseRank does not.
  EXPECT_EQ(Run("cakeSales", R"([{"$setWindowFields": {"sortBy": {"price": 1},
      "output": {"rank": {"$rank": {}}, "dense": {"$denseRank": {}}, "near": {"$count": {}, "window": {"range": [-1, 1]}}}}},
      {"$project": {"price": 1, "rank": 1, "dense": 1, "near": 1}}])"),
            R"({"_id": 2, "price": 12, "rank": 1, "dense": 1, "near": 3}, {"_id": 0, "price": 13, "rank": 2, "dense": 2, "near": 4}, )"
            R"({"_id": 3, "price": 13, "rank": 2, "dense": 2, "near": 4}, {"_id": 1, "price": 14, "rank": 4, "dense": 3, "near": 3}, )"
            R"({"_id": 4, "price": 41, "rank": 5, "dense": 4, "near": 1}, {"_id": 5, "price": 43, "rank": 6, "dense": 5, "near": 1})");
  // Range in a date unit: orders within 400 days before each.
  EXPECT_EQ(Run("cakeSales", R"([{"$setWindowFields": {"sortBy": {"orderDate": 1},
      "output": {"recent": {"$push": "$_id", "window": {"range": [-400, 0], "unit": "day"}}}}},
      {"$project": {"recent": 1}}])"),
            R"({"_id": 5, "recent": [5]}, {"_id": 4, "recent": [5, 4]}, {"_id": 3, "recent": [5, 4, 3]}, )"
            R"({"_id": 0, "recent": [4, 3, 0]}, {"_id": 2, "recent": [3, 0, 2]}, {"_id": 1, "recent": [0, 2, 1]})");
  EXPECT_EQ(Run("cakeSales", R"([{"$setWindowFields": {"output": {"r": {"$rank": {}}}}}])"),
            "5371602: $rank must be specified with a top level sortBy expression with exactly one element");
  EXPECT_EQ(Run("cakeSales", R"([{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"r": {"$bogus": {}}}}}])"),
            "5397900: Unrecognized window function, $bogus");
  EXPECT_EQ(Run("cakeSales", R"([{"$setWindowFields": {"sortBy": {"a": 1}, "output": {"r": {"$sum": 1, "window": {"documents": [1, -1]}}}}}])"),
            "5339900: Lower bound must not exceed upper bound");
}

// $collStats and $indexStats: a collection's figures as documents.
TEST_F(PipelineTest, CollStatsAndIndexStats) {
  Insert("s", R"([{"_id": 1, "a": 1}, {"_id": 2, "a": 2}, {"_id": 3, "a": 3}])");
  ASSERT_TRUE(Coll("s").CreateIndex(Json(R"({"a": 1})")).ok());
  ASSERT_TRUE(Coll("s").Find(Json(R"({"a": 2})"), FindOptions{}).value().Next());  // one use of a_1
  EXPECT_EQ(Run("s", R"([{"$collStats": {"count": {}, "storageStats": {}}},
      {"$project": {"_id": 0, "ns": 1, "count": 1, "n": "$storageStats.count", "nindexes": "$storageStats.nindexes",
                    "sizes": {"$objectToArray": "$storageStats.indexSizes"}}},
      {"$project": {"ns": 1, "count": 1, "n": 1, "nindexes": 1, "names": "$sizes.k"}}])"),
            R"({"ns": "test.s", "count": 3, "n": 3, "nindexes": 2, "names": ["_id_", "a_1"]})");
  EXPECT_EQ(Run("s", R"([{"$indexStats": {}}, {"$project": {"_id": 0, "name": 1, "ops": "$accesses.ops"}}, {"$sort": {"name": 1}}])"),
            R"({"name": "_id_", "ops": 0}, {"name": "a_1", "ops": 1})");
  EXPECT_EQ(Run("s", R"([{"$match": {}}, {"$indexStats": {}}])"),
            "40602: $indexStats is only valid as the first stage in a pipeline");
  EXPECT_EQ(Run("s", R"([{"$collStats": {"latencyStats": {}}}])"),
            "238: $collStats latencyStats is not supported by rockdoc (it keeps no operation latencies)");
  EXPECT_EQ(Run("s", R"([{"$collStats": {"bogus": {}}}])"), "40415: BSON field '$collStats.bogus' is an unknown field.");
}

// $indexStats' counters and their since survive a restart (the client
// records them in the catalog when it closes); the _id_ index's too.
TEST_F(PipelineTest, IndexStatsSurviveRestarts) {
  Insert("s", R"([{"_id": 1, "a": 1}, {"_id": 2, "a": 2}])");
  ASSERT_TRUE(Coll("s").CreateIndex(Json(R"({"a": 1})")).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Coll("s").Find(Json(R"({"a": 2})"), FindOptions{}).value().Next());
  ASSERT_TRUE(Coll("s").Find(Json(R"({"_id": 2})"), FindOptions{}).value().Next());
  const std::string stats =
      R"([{"$indexStats": {}}, {"$project": {"_id": 0, "name": 1, "ops": "$accesses.ops", "since": "$accesses.since"}}, {"$sort": {"name": 1}}])";
  const std::string before = Run("s", stats);
  ASSERT_THAT(before, ::testing::HasSubstr(R"("name": "a_1", "ops": 3)"));
  ASSERT_THAT(before, ::testing::HasSubstr(R"("name": "_id_", "ops": 1)"));
  Open();  // close and reopen
  EXPECT_EQ(Run("s", stats), before);
  ASSERT_TRUE(Coll("s").Find(Json(R"({"a": 1})"), FindOptions{}).value().Next());
  Open();
  EXPECT_THAT(Run("s", stats), ::testing::HasSubstr(R"("name": "a_1", "ops": 4)"));
  // A rename keeps every count (the _id_ index's too), as a restore's
  // aside-and-rename does.
  ASSERT_TRUE(db().RenameCollection("s", "t").ok());
  Open();
  const std::string renamed = Run("t", stats);
  EXPECT_THAT(renamed, ::testing::HasSubstr(R"("name": "_id_", "ops": 1)"));
  EXPECT_THAT(renamed, ::testing::HasSubstr(R"("name": "a_1", "ops": 4)"));
}

// $densify and $fill: the manual's examples.
TEST_F(PipelineTest, DensifyAndFillAsTheManualShows) {
  Insert("weather", R"([
    {"_id": 1, "timestamp": {"$date": "2021-05-18T00:00:00Z"}, "temp": 12},
    {"_id": 2, "timestamp": {"$date": "2021-05-18T04:00:00Z"}, "temp": 11},
    {"_id": 3, "timestamp": {"$date": "2021-05-18T08:00:00Z"}, "temp": 11},
    {"_id": 4, "timestamp": {"$date": "2021-05-18T12:00:00Z"}, "temp": 12}])");
  EXPECT_EQ(Run("weather", R"([{"$densify": {"field": "timestamp", "range": {"step": 1, "unit": "hour",
      "bounds": [{"$date": "2021-05-18T00:00:00Z"}, {"$date": "2021-05-18T08:00:00Z"}]}}},
      {"$project": {"_id": 0, "h": {"$hour": "$timestamp"}, "temp": 1}}])"),
            R"({"temp": 12, "h": 0}, {"h": 1}, {"h": 2}, {"h": 3}, {"temp": 11, "h": 4}, {"h": 5}, {"h": 6}, {"h": 7}, )"
            R"({"temp": 11, "h": 8}, {"temp": 12, "h": 12})");
  Insert("coffee", R"([{"_id": 1, "v": "a", "x": 1}, {"_id": 2, "v": "a", "x": 4}, {"_id": 3, "v": "b", "x": 10}, {"_id": 4, "v": "b", "x": 12}])");
  EXPECT_EQ(Run("coffee", R"([{"$densify": {"field": "x", "partitionByFields": ["v"], "range": {"step": 1, "bounds": "partition"}}}])"),
            R"({"_id": 1, "v": "a", "x": 1}, {"x": 2, "v": "a"}, {"x": 3, "v": "a"}, {"_id": 2, "v": "a", "x": 4}, )"
            R"({"_id": 3, "v": "b", "x": 10}, {"x": 11, "v": "b"}, {"_id": 4, "v": "b", "x": 12})");
  EXPECT_EQ(Run("coffee", R"([{"$densify": {"field": "x", "range": {"step": 0, "bounds": "full"}}}])"),
            "5733401: the step parameter in a range statement must be a strictly positive numeric value");
  EXPECT_EQ(Run("coffee", R"([{"$densify": {"field": "x", "range": {"step": 1, "bounds": "partition"}}}])"),
            "5733408: one may not specify the bounds as 'partition' without specifying a non-empty array of partitionByFields");

  Insert("dailySales", R"([
    {"_id": 1, "bootsSold": 10, "sandalsSold": 20, "sneakersSold": 12},
    {"_id": 2, "bootsSold": 7, "sneakersSold": 18},
    {"_id": 3, "sneakersSold": 5}])");
  EXPECT_EQ(Run("dailySales", R"([{"$fill": {"output": {"bootsSold": {"value": 0}, "sandalsSold": {"value": 0},
      "sneakersSold": {"value": 0}}}}])"),
            R"({"_id": 1, "bootsSold": 10, "sandalsSold": 20, "sneakersSold": 12}, )"
            R"({"_id": 2, "bootsSold": 7, "sneakersSold": 18, "sandalsSold": 0}, {"_id": 3, "sneakersSold": 5, "bootsSold": 0, "sandalsSold": 0})");
  Insert("stock", R"([
    {"_id": 1, "time": {"$date": "2021-03-08T09:00:00Z"}, "price": 500},
    {"_id": 2, "time": {"$date": "2021-03-08T09:05:00Z"}, "price": 550},
    {"_id": 3, "time": {"$date": "2021-03-08T09:10:00Z"}},
    {"_id": 4, "time": {"$date": "2021-03-08T09:15:00Z"}},
    {"_id": 5, "time": {"$date": "2021-03-08T09:20:00Z"}, "price": 600}])");
  EXPECT_EQ(Run("stock", R"([{"$fill": {"sortBy": {"time": 1}, "output": {"price": {"method": "linear"}}}},
                            {"$project": {"p": {"$round": ["$price", 2]}}}])"),
            R"({"_id": 1, "p": 500}, {"_id": 2, "p": 550}, {"_id": 3, "p": 566.67}, {"_id": 4, "p": 583.33}, {"_id": 5, "p": 600})");
  Insert("reviews", R"([{"_id": 1, "d": 8, "score": 90}, {"_id": 2, "d": 9, "score": 92}, {"_id": 3, "d": 10},
                        {"_id": 4, "d": 11}, {"_id": 5, "d": 12, "score": 85}, {"_id": 6, "d": 13}])");
  EXPECT_EQ(Run("reviews", R"([{"$fill": {"sortBy": {"d": 1}, "output": {"score": {"method": "locf"}}}}, {"$project": {"score": 1}}])"),
            R"({"_id": 1, "score": 90}, {"_id": 2, "score": 92}, {"_id": 3, "score": 92}, {"_id": 4, "score": 92}, )"
            R"({"_id": 5, "score": 85}, {"_id": 6, "score": 85})");
  EXPECT_EQ(Run("reviews", R"([{"$fill": {"output": {"score": {"method": "locf"}}}}])"),
            "6050201: 'sortBy' is required for the 'locf' and 'linear' methods of '$fill'");
  EXPECT_EQ(Run("reviews", R"([{"$fill": {"output": {"score": {"method": "mean"}}}}])"),
            "6050202: Method must be either 'linear' or 'locf'");
}

// The reference filter of a $lookup's equality for local value `k`:
// {<field>: {$in: <k's elements, or k, or null when missing or []>}}.
Document LookupReference(const Element& k, std::string_view field) {
  BsonBuilder filter;
  filter.OpenDocument(field).OpenArray("$in");
  if (k.type() == BsonType::kArray && !k.Array().empty()) {
    for (const Element& e : k.Array()) filter.AppendElementAs("", e);
  } else if (k.ok() && k.type() != BsonType::kArray) {
    filter.AppendElementAs("", k);
  } else {
    filter.AppendNull("");
  }
  filter.Close().Close();
  return std::move(filter).Build();
}

// Every $lookup strategy returns the same documents: the hash join (no
// index on foreignField), the indexed loop (with one), and a find per
// document with the equality MongoDB defines (the reference), over random
// values: numbers of several types, strings, null, missing, arrays, paths
// through arrays of documents.
TEST_F(PipelineTest, LookupStrategiesAgree) {
  std::mt19937 rng(20261126);
  auto value = [&]() -> std::string {
    static const char* const kValues[] = {"0", "1", "2", "1.0", "{\"$numberLong\": \"2\"}", "\"a\"", "\"b\"",
                                          "null", "[1, 2]", "[]", "[\"a\", null]", "{\"x\": 1}"};
    return kValues[rng() % std::size(kValues)];
  };
  std::vector<Document> local, foreign;
  for (int i = 0; i < 60; ++i) {
    const int shape = static_cast<int>(rng() % 4);
    std::string l = "{\"_id\": " + std::to_string(i);
    if (shape != 0) l += ", \"k\": " + value();
    local.push_back(Json(l + "}"));
    std::string f = "{\"_id\": " + std::to_string(i);
    if (shape == 1) f += ", \"f\": {\"g\": " + value() + "}";
    if (shape == 2) f += ", \"f\": [{\"g\": " + value() + "}, {\"g\": " + value() + "}]";
    if (shape == 3) f += ", \"f\": {\"h\": 1}";
    foreign.push_back(Json(f + "}"));
  }
  ASSERT_TRUE(Coll("l").InsertMany(local).ok());
  ASSERT_TRUE(Coll("fr").InsertMany(foreign).ok());
  // Each local document's matched _ids, sorted (a join's order is not defined).
  auto joined = [&]() {
    std::vector<std::string> out;
    const std::string r = Run("l", R"([{"$lookup": {"from": "fr", "localField": "k", "foreignField": "f.g", "as": "m"}},
        {"$project": {"ids": {"$sortArray": {"input": "$m._id", "sortBy": 1}}}}])");
    return r;
  };
  const std::string hash = joined();
  ASSERT_TRUE(Coll("fr").CreateIndex(Json(R"({"f.g": 1})")).ok());
  const std::string indexed = joined();
  EXPECT_EQ(hash, indexed);
  // The reference: a find per local document, {f.g: {$in: <its values>}}.
  std::string reference;
  for (const Document& d : local) {
    std::vector<int> ids;
    Cursor c = Coll("fr").Find(LookupReference(d.Get("k"), "f.g"), FindOptions{}).value();
    while (c.Next()) ids.push_back(c.document().Get("_id").Int32());
    std::sort(ids.begin(), ids.end());
    std::string list;
    for (int id : ids) list += (list.empty() ? "" : ", ") + std::to_string(id);
    reference += (reference.empty() ? "" : ", ") + std::string("{\"_id\": ") + std::to_string(d.Get("_id").Int32()) +
                 ", \"ids\": [" + list + "]}";
  }
  EXPECT_EQ(hash, reference);
  EXPECT_NE(hash.find("\"ids\": [4, 7"), std::string::npos) << hash;  // documents did match
}

// $sort then $limit (or $skip, $limit) keeps only what the limit needs (a
// top-k), and answers exactly what the full sort does, ties in input order;
// the truth is the same pipeline with an empty $match between them, which
// stops the coalescence. Also when the kept documents outgrow the memory
// limit (the top-k gives way to the full, spilling, sort).
TEST_F(PipelineTest, SortThenLimitIsATopKWithTheFullSortsAnswer) {
  std::mt19937 rng(5);
  std::vector<Document> docs;
  for (int i = 0; i < 500; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i).AppendInt32("a", static_cast<int>(rng() % 10));
    if (rng() % 3 != 0) b.AppendInt32("b", static_cast<int>(rng() % 4));
    b.AppendString("pad", std::string(rng() % 50, 'x'));
    docs.push_back(std::move(b).Build());
  }
  ASSERT_TRUE(Coll("k").InsertMany(docs).ok());
  auto run = [&](const std::string& pipeline, int64_t memory) {
    Document p = Json("{\"p\": " + pipeline + "}");
    AggregateOptions o;
    o.max_blocking_stage_bytes = memory;
    o.allow_disk_use = true;
    StatusOr<Cursor> c = Coll("k").Aggregate(p.Get("p").Array(), o);
    if (!c.ok()) return c.status().ToString();
    std::string out;
    while (c->Next()) out += ToJson(c->document()) + "\n";
    return c->status().ok() ? out : c->status().ToString();
  };
  int cases = 0;
  for (const char* sort : {R"({"a": 1})", R"({"b": -1, "a": 1})", R"({"b": 1})"}) {
    for (const char* tail : {R"({"$limit": 7})", R"({"$skip": 3}, {"$limit": 20})", R"({"$limit": 1000})"}) {
      for (int64_t memory : {int64_t{100} << 20, int64_t{2000}}) {
        // A leading $set keeps the sort out of the find.
        const std::string head = std::string(R"([{"$set": {"c": 1}}, {"$sort": )") + sort + "}, ";
        const std::string topk = run(head + tail + "]", memory);
        const std::string full = run(head + R"({"$match": {}}, )" + tail + "]", memory);
        ASSERT_EQ(topk, full) << sort << " " << tail << " " << memory;
        ASSERT_NE(topk.find("_id"), std::string::npos) << topk;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 18);
  Document p = Json(R"({"p": [{"$set": {"c": 1}}, {"$sort": {"a": 1}}, {"$skip": 2}, {"$limit": 5}]})");
  auto plan = Coll("k").ExplainAggregate(p.Get("p").Array(), AggregateOptions{},
                                         ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->Get("stages").Array().Get("2").Document().Get("limit").Int64(), 7) << ToJson(*plan);
}

// A $lookup on _id reads each single value's match by a point read: the
// same documents as the find MongoDB defines ({_id: {$in: <values>}}), for
// numbers equal across types, strings, documents, null, missing and arrays;
// explain counts one key per point read.
TEST_F(PipelineTest, LookupOnIdByPointReadsMatchesTheFind) {
  ASSERT_TRUE(Coll("fid").InsertMany({Json(R"({"_id": 1, "n": "int"})"), Json(R"({"_id": 2.5})"),
                                      Json(R"({"_id": {"$numberLong": "3"}})"), Json(R"({"_id": "a"})"),
                                      Json(R"({"_id": {"x": 1}})"), Json(R"({"_id": null})"),
                                      Json(R"({"_id": {"$numberDecimal": "4"}})")})
                  .ok());
  const char* const kLocal[] = {"1.0", R"({"$numberLong": "1"})", "2.5", "3", "4.0", R"("a")", R"("b")",
                                R"({"x": 1})", R"({"x": 2})", "null", R"([1, "a"])", "[]", R"({"$numberDecimal": "3"})"};
  std::vector<Document> local;
  for (size_t i = 0; i < std::size(kLocal); ++i) {
    local.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"k\": " + kLocal[i] + "}"));
  }
  local.push_back(Json(R"({"_id": 100})"));  // k missing
  ASSERT_TRUE(Coll("lid").InsertMany(local).ok());
  const std::string joined = Run("lid", R"([{"$lookup": {"from": "fid", "localField": "k", "foreignField": "_id", "as": "m"}},
      {"$project": {"ids": "$m._id"}}])");
  std::string reference;
  for (const Document& d : local) {
    BsonBuilder ids;
    ids.AppendElementAs("_id", d.Get("_id")).OpenArray("ids");
    Cursor c = Coll("fid").Find(LookupReference(d.Get("k"), "_id"), FindOptions{}).value();
    while (c.Next()) ids.AppendElementAs("", c.document().Get("_id"));
    ids.Close();
    reference += (reference.empty() ? "" : ", ") + ToJson(std::move(ids).Build());
  }
  EXPECT_EQ(joined, reference);
  EXPECT_NE(joined.find(R"({"_id": 0, "ids": [1]})"), std::string::npos) << joined;
  EXPECT_NE(joined.find(R"({"_id": 12, "ids": [3]})"), std::string::npos) << joined;  // decimal 3 = long 3
  // Explain: a key per point read, a document per match.
  Document p = Json(R"({"p": [{"$match": {"_id": {"$lt": 3}}},
      {"$lookup": {"from": "fid", "localField": "k", "foreignField": "_id", "as": "m"}}]})");
  auto plan = Coll("lid").ExplainAggregate(p.Get("p").Array(), AggregateOptions{},
                                           ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Document lookup = Document::AdoptValidated(
      std::string(plan->Get("stages").Array().Get("1").Document().bytes()));
  EXPECT_EQ(lookup.Get("totalKeysExamined").Int64(), 3) << ToJson(*plan);
  EXPECT_EQ(lookup.Get("totalDocsExamined").Int64(), 3) << ToJson(*plan);
}

// A point-read $lookup builds its output in one pass: `as` replaces a field
// of that name where it stands (as $addFields), is added at the end when
// absent, and holds [] when nothing matches; a localField inside a
// document (read through the expression) gives the same documents; a
// dotted `as` enters the document along it.
TEST_F(PipelineTest, LookupOnIdSetsAsWhereTheFieldStands) {
  ASSERT_TRUE(Coll("pf").InsertMany({Json(R"({"_id": 1, "v": "one"})")}).ok());
  ASSERT_TRUE(Coll("pl").InsertMany({Json(R"({"_id": "a", "k": 1, "m": "old", "z": 0, "in": {"k": 1}})"),
                                     Json(R"({"_id": "b", "k": 2, "z": 0, "in": {"k": 2}})")})
                  .ok());
  EXPECT_EQ(Run("pl", R"([{"$lookup": {"from": "pf", "localField": "k", "foreignField": "_id", "as": "m"}}])"),
            R"({"_id": "a", "k": 1, "m": [{"_id": 1, "v": "one"}], "z": 0, "in": {"k": 1}}, )"
            R"({"_id": "b", "k": 2, "z": 0, "in": {"k": 2}, "m": []})");
  EXPECT_EQ(Run("pl", R"([{"$lookup": {"from": "pf", "localField": "in.k", "foreignField": "_id", "as": "m"}}])"),
            R"({"_id": "a", "k": 1, "m": [{"_id": 1, "v": "one"}], "z": 0, "in": {"k": 1}}, )"
            R"({"_id": "b", "k": 2, "z": 0, "in": {"k": 2}, "m": []})");
  // A dotted `as`: the documents along it made or entered, as $addFields.
  EXPECT_EQ(Run("pl", R"([{"$lookup": {"from": "pf", "localField": "k", "foreignField": "_id", "as": "in.m"}}])"),
            R"({"_id": "a", "k": 1, "m": "old", "z": 0, "in": {"k": 1, "m": [{"_id": 1, "v": "one"}]}}, )"
            R"({"_id": "b", "k": 2, "z": 0, "in": {"k": 2, "m": []}})");
}

// A $match moves ahead of the stages that do not change what it reads
// ($sort, $set/$addFields/$unset of other fields, $unwind of another path,
// $lookup into another field), reaching the find and its index; the
// answer is the same pipeline with a {$skip: 0} before the $match, which
// it cannot pass.
TEST_F(PipelineTest, MatchMovesAheadOfStagesItDoesNotDependOn) {
  std::mt19937 rng(8);
  std::vector<Document> docs;
  for (int i = 0; i < 200; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i).AppendInt32("a", static_cast<int>(rng() % 10));
    b.OpenArray("arr");
    for (uint32_t k = rng() % 3; k > 0; --k) b.AppendInt32("", static_cast<int>(rng() % 5));
    b.Close();
    if (rng() % 2) b.AppendInt32("b", static_cast<int>(rng() % 3));
    docs.push_back(std::move(b).Build());
  }
  ASSERT_TRUE(Coll("mv").InsertMany(docs).ok());
  ASSERT_TRUE(Coll("mv").CreateIndex(Json(R"({"a": 1})")).ok());
  auto Lines = [&](const std::string& pipeline) {
    Document p = Json("{\"p\": " + pipeline + "}");
    std::vector<std::string> out;
    StatusOr<Cursor> c = Coll("mv").Aggregate(p.Get("p").Array());
    if (!c.ok()) return std::vector<std::string>{c.status().ToString()};
    while (c->Next()) out.push_back(ToJson(c->document()));
    if (!c->status().ok()) out.push_back(c->status().ToString());
    return out;
  };
  Insert("side", R"([{"_id": 0, "t": "zero"}, {"_id": 1, "t": "one"}, {"_id": 2, "t": "two"}])");
  const char* const kBefore[] = {
      R"({"$sort": {"b": -1, "_id": 1}})",
      R"({"$set": {"c": {"$add": ["$a", 1]}, "b": 5}})",
      R"({"$addFields": {"d.e": "$a"}})",
      R"({"$unset": ["b"]})",
      R"({"$unwind": {"path": "$arr", "includeArrayIndex": "i", "preserveNullAndEmptyArrays": true}})",
      R"({"$unwind": "$arr"})",
      R"({"$lookup": {"from": "side", "localField": "b", "foreignField": "_id", "as": "s"}})",
      R"({"$project": {"a": 1, "b": 1}})"};
  const char* const kMatches[] = {R"({"a": {"$gte": 7}})", R"({"b": 1})", R"({"arr": 2})",
                                  R"({"$or": [{"a": 1}, {"c": 3}]})", R"({"s.t": "one"})",
                                  R"({"d.e": {"$lt": 3}})", R"({"i": 0})", R"({"$expr": {"$eq": ["$a", 4]}})"};
  int cases = 0;
  for (size_t x = 0; x < std::size(kBefore); ++x) {
    for (size_t y = 0; y < std::size(kBefore); ++y) {
      for (const char* m : kMatches) {
        const std::string head = std::string("[") + kBefore[x] + ", " + kBefore[y] + ", ";
        std::vector<std::string> moved = Lines(head + R"({"$match": )" + m + "}]");
        std::vector<std::string> stayed = Lines(head + R"({"$skip": 0}, {"$match": )" + m + "}]");
        // Without a $sort the order is not defined (the index may give it).
        if (x != 0 && y != 0) {
          std::sort(moved.begin(), moved.end());
          std::sort(stayed.begin(), stayed.end());
        }
        ASSERT_EQ(moved, stayed) << head << m;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 8 * 8 * 8);
  // The match reached the find, and the index: past a $sort, a $set of
  // another field and an $unwind.
  Document p = Json(R"({"p": [{"$sort": {"b": 1}}, {"$set": {"c": 1}}, {"$unwind": "$arr"},
                              {"$match": {"a": 3}}]})");
  auto plan = Coll("mv").ExplainAggregate(p.Get("p").Array(), AggregateOptions{},
                                          ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string shown = ToJson(*plan);
  EXPECT_NE(shown.find("IXSCAN"), std::string::npos) << shown;
  EXPECT_NE(shown.find(R"("parsedQuery": {"a": {"$eq": 3}})"), std::string::npos) << shown;
  // Not past a $set of what it reads.
  Document q = Json(R"({"p": [{"$set": {"a": 1}}, {"$match": {"a": 3}}]})");
  plan = Coll("mv").ExplainAggregate(q.Get("p").Array(), AggregateOptions{},
                                     ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(ToJson(*plan).find("IXSCAN"), std::string::npos) << ToJson(*plan);
}

// Explain names each $lookup's strategy; with maxTimeMS (deadline checks
// between the stages) the per-stage counts still line up with the stages.
TEST_F(PipelineTest, ExplainNamesTheLookupStrategy) {
  Insert("o", R"([{"_id": 1, "p": 10}, {"_id": 2, "p": 11}, {"_id": 3, "p": 10}])");
  Insert("prod", R"([{"_id": 10, "code": 10}, {"_id": 11, "code": 11}])");
  Document p = Json(R"({"p": [{"$lookup": {"from": "prod", "localField": "p", "foreignField": "_id", "as": "a"}},
                              {"$lookup": {"from": "prod", "localField": "p", "foreignField": "code", "as": "b"}},
                              {"$match": {"b.code": 10}}]})");
  AggregateOptions timed;
  timed.max_time_ms = 60000;
  for (ExplainVerbosity v : {ExplainVerbosity::kQueryPlanner, ExplainVerbosity::kExecutionStats}) {
    auto plan = Coll("o").ExplainAggregate(p.Get("p").Array(), timed, v);
    ASSERT_TRUE(plan.ok()) << plan.status();
    DocumentView stages = plan->Get("stages").Array();
    EXPECT_EQ(stages.Get("1").Document().Get("strategy").String(), "IndexedLoopJoin") << ToJson(*plan);
    EXPECT_EQ(stages.Get("2").Document().Get("strategy").String(), "HashJoin") << ToJson(*plan);
    if (v == ExplainVerbosity::kExecutionStats) {
      std::vector<int64_t> counts;
      for (const Element& st : stages) counts.push_back(st.Document().Get("nReturned").Int64());
      EXPECT_EQ(counts, (std::vector<int64_t>{3, 3, 3, 2}));
      EXPECT_EQ(stages.Get("2").Document().Get("foreignDocsRead").Int32(), 2);
      // What the joins' finds examined: a point read of _id per order (3
      // keys, 3 documents); the hash join's one scan of the 2 products.
      EXPECT_EQ(stages.Get("1").Document().Get("totalKeysExamined").Int64(), 3) << ToJson(*plan);
      EXPECT_EQ(stages.Get("1").Document().Get("totalDocsExamined").Int64(), 3);
      EXPECT_EQ(stages.Get("2").Document().Get("totalKeysExamined").Int64(), 0);
      EXPECT_EQ(stages.Get("2").Document().Get("totalDocsExamined").Int64(), 2);
    }
  }
  ASSERT_TRUE(Coll("prod").CreateIndex(Json(R"({"code": 1})")).ok());
  auto plan = Coll("o").ExplainAggregate(p.Get("p").Array(), {}, ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->Get("stages").Array().Get("2").Document().Get("strategy").String(), "IndexedLoopJoin");
}

// $expr in find filters, $match, updates, deletes and validators.
TEST_F(PipelineTest, ExprInFiltersEverywhere) {
  // The manual's $expr example: budgets where spent exceeds budget.
  Insert("monthlyBudget", R"([
    {"_id": 1, "category": "food", "budget": 400, "spent": 450},
    {"_id": 2, "category": "drinks", "budget": 100, "spent": 150},
    {"_id": 3, "category": "clothes", "budget": 100, "spent": 50},
    {"_id": 4, "category": "misc", "budget": 500, "spent": 300},
    {"_id": 5, "category": "travel", "budget": 200, "spent": 650}])");
  Collection c = Coll("monthlyBudget");
  auto ids = [&](std::string_view filter) {
    StatusOr<Cursor> cur = c.Find(Json(filter), FindOptions{});
    if (!cur.ok()) return std::to_string(cur.status().code_number()) + ": " + std::string(cur.status().message());
    std::string out;
    while (cur->Next()) out += (out.empty() ? "" : ",") + std::to_string(cur->document().Get("_id").Int32());
    if (!cur->status().ok()) return std::to_string(cur->status().code_number()) + ": " + std::string(cur->status().message());
    return out;
  };
  EXPECT_EQ(ids(R"({"$expr": {"$gt": ["$spent", "$budget"]}})"), "1,2,5");
  // A conditional: half the budget from 200 up, three quarters below.
  EXPECT_EQ(ids(R"({"$expr": {"$lt": [{"$cond": {"if": {"$gte": ["$budget", 200]}, "then": {"$multiply": ["$budget", 0.5]},
                                                 "else": {"$multiply": ["$budget", 0.75]}}}, "$spent"]}})"),
            "1,2,4,5");
  // Beside ordinary predicates, inside $or, and through an index.
  ASSERT_TRUE(c.CreateIndex(Json(R"({"category": 1})")).ok());
  EXPECT_EQ(ids(R"({"category": {"$in": ["food", "misc"]}, "$expr": {"$gt": ["$spent", "$budget"]}})"), "1");
  EXPECT_EQ(ids(R"({"$or": [{"_id": 3}, {"$expr": {"$eq": ["$spent", 650]}}]})"), "3,5");
  // An evaluation error fails the find, not silently the document.
  EXPECT_EQ(ids(R"({"$expr": {"$divide": ["$spent", {"$subtract": ["$budget", 100]}]}})"),
            "16608: can't $divide by zero");
  // The error is the operation's even where a $or or $nor would answer
  // without it, and it does not linger into the next operation.
  EXPECT_EQ(ids(R"({"$or": [{"$expr": {"$divide": [1, 0]}}, {"_id": 1}]})"), "16608: can't $divide by zero");
  EXPECT_EQ(ids(R"({"$nor": [{"$expr": {"$divide": [1, 0]}}]})"), "16608: can't $divide by zero");
  EXPECT_EQ(ids(R"({"_id": 1})"), "1");
  EXPECT_EQ(Run("monthlyBudget", R"([{"$match": {"$nor": [{"$expr": {"$divide": [1, 0]}}]}}])"),
            "16608: can't $divide by zero");
  EXPECT_EQ(c.CountDocuments(Json(R"({"_id": 2})")).value(), 1);
  EXPECT_EQ(ids(R"({"a": {"$elemMatch": {"$expr": {"$eq": [1, 1]}}}})"),
            "2: $expr can only be applied to the top-level document");
  EXPECT_EQ(ids(R"({"$expr": {"$bogus": 1}})"), "168: Unrecognized expression '$bogus'");
  EXPECT_EQ(c.CountDocuments(Json(R"({"$expr": {"$lte": ["$spent", "$budget"]}})")).value(), 2);
  EXPECT_EQ(Run("monthlyBudget", R"([{"$match": {"$expr": {"$gt": ["$spent", 600]}}}, {"$project": {"_id": 1}}])"),
            R"({"_id": 5})");
  // Updates and deletes select with it too; an error leaves everything as it was.
  EXPECT_EQ(c.UpdateMany(Json(R"({"$expr": {"$gt": ["$spent", "$budget"]}})"), Json(R"({"$set": {"over": true}})"))
                .value().modified_count, 3);
  EXPECT_EQ(c.DeleteMany(Json(R"({"$expr": {"$divide": [1, 0]}})")).status().code_number(), 16608);
  EXPECT_EQ(c.CountDocuments(Json("{}")).value(), 5);
  EXPECT_EQ(c.DeleteMany(Json(R"({"$expr": {"$eq": ["$over", true]}})")).value().deleted_count, 3);
  // arrayFilters and $pull conditions test elements, not documents.
  EXPECT_EQ(c.UpdateOne(Json("{}"), Json(R"({"$pull": {"a": {"$expr": {"$eq": [1, 1]}}}})")).status().code_number(), 224);
  // A validator with $expr.
  ASSERT_TRUE(db().CreateCollection("checked", test::ValidatorOptions(
                                                   R"({"$expr": {"$lte": ["$spent", "$budget"]}})"))
                  .ok());
  EXPECT_TRUE(Coll("checked").InsertOne(Json(R"({"budget": 10, "spent": 5})")).ok());
  EXPECT_EQ(Coll("checked").InsertOne(Json(R"({"budget": 10, "spent": 50})")).status().code_number(), 121);
}

// The stage table (pipeline/stage.h): every stage name rockdoc knows, each
// entry added by the file that defines the stage, none twice; a name in no
// entry is MongoDB's 40324 (pipeline_stages_test runs each through both
// libraries).
TEST(StageTableTest, ListsEveryStageItKnows) {
  const std::vector<std::string_view> expected = {
      "$addFields", "$bucket", "$bucketAuto", "$changeStream", "$changeStreamSplitLargeEvent",
      "$collStats", "$count", "$currentOp", "$densify", "$documents", "$facet", "$fill",
      "$geoNear", "$graphLookup", "$group", "$indexStats", "$limit", "$listLocalSessions",
      "$listSampledQueries", "$listSearchIndexes", "$listSessions", "$lookup", "$match",
      "$merge", "$out", "$planCacheStats", "$project", "$queryStats", "$redact",
      "$replaceRoot", "$replaceWith", "$sample", "$search", "$searchMeta", "$set",
      "$setWindowFields", "$shardedDataDistribution", "$skip", "$sort", "$sortByCount",
      "$unionWith", "$unset", "$unwind", "$vectorSearch"};
  EXPECT_EQ(internal::StageNames(), expected);
  for (std::string_view name : expected) {
    const internal::StageDef* def = internal::FindStage(name);
    ASSERT_NE(def, nullptr) << name;
    // A stage either parses or is a source that only opens a pipeline;
    // $geoNear is both first and parsed: its find is the pipeline's
    // (planning.cc), and the stage adds the distances.
    if (name == "$geoNear") {
      EXPECT_TRUE(def->parse != nullptr && def->place == internal::StagePlace::kFirst);
      continue;
    }
    EXPECT_EQ(def->parse == nullptr, def->place == internal::StagePlace::kFirst) << name;
  }
  EXPECT_EQ(internal::FindStage("$x"), nullptr);
  // The reshaping stages are the ones query/expression/ parses.
  for (std::string_view name : {"$project", "$addFields", "$set", "$unset", "$replaceRoot",
                                "$replaceWith"}) {
    EXPECT_TRUE(internal::IsDocumentTransformStage(name)) << name;
  }
  // What a $match may move ahead of: the stages whose files say which
  // fields they change.
  std::vector<std::string_view> passable;
  for (std::string_view name : expected) {
    if (internal::FindStage(name)->changed_roots != nullptr) passable.push_back(name);
  }
  EXPECT_EQ(passable, (std::vector<std::string_view>{"$addFields", "$lookup", "$set", "$sort",
                                                     "$unset", "$unwind"}));
}

}  // namespace
}  // namespace rockdoc

// Views (db.createView; create with viewOn + pipeline): read-only, computed
// on read, persisted in the catalog, refused where MongoDB refuses them.
// The truth for reads is the view materialized: the same pipeline run once
// into a real collection ($out), which every find, count and join of the
// view must match.
#include <gtest/gtest.h>

#include <random>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

class ViewTest : public test::ClientTest {
 protected:
  Collection Coll(std::string_view name) { return db().GetCollection(name); }
  void Insert(std::string_view coll, std::string_view docs_json) {
    ASSERT_TRUE(Coll(coll).InsertMany(test::JsonArray(docs_json)).ok());
  }
  static Document Array(std::string_view json) {
    Document d = Json(std::string("{\"a\": ") + std::string(json) + "}");
    return Document::AdoptValidated(std::string(d.Get("a").Array().bytes()));
  }
  Status CreateView(std::string_view name, std::string_view on, std::string_view pipeline) {
    return db().CreateView(name, on, Array(pipeline).view());
  }
  static std::string Lines(StatusOr<Cursor> cursor) {
    if (!cursor.ok()) return std::to_string(cursor.status().code_number()) + ": " + std::string(cursor.status().message());
    std::string out;
    while (cursor->Next()) out += (out.empty() ? "" : ", ") + ToJson(cursor->document());
    if (!cursor->status().ok()) {
      return std::to_string(cursor->status().code_number()) + ": " +
             std::string(cursor->status().message());
    }
    return out;
  }
  std::string Find(std::string_view coll, std::string_view filter, const FindOptions& fo = {}) {
    return Lines(Coll(coll).Find(Json(filter), fo));
  }
  std::string Aggregate(std::string_view coll, std::string_view pipeline) {
    return Lines(Coll(coll).Aggregate(Array(pipeline).view()));
  }
  // The command's error code (a write command's first write error's), or 0.
  int Code(std::string_view command) {
    Document r = client_->RunCommand("test", Json(command));
    if (r.Get("ok").NumberAsDouble() != 1) return static_cast<int>(r.Get("code").NumberAsDouble());
    const Element errors = r.Get("writeErrors");
    if (errors.type() != BsonType::kArray || errors.Array().empty()) return 0;
    return static_cast<int>((*errors.Array().begin()).Document().Get("code").NumberAsDouble());
  }
};

// The manual's example (db.createView, "Create a View from a Single
// Collection"): the survey's management feedback.
TEST_F(ViewTest, TheManualsManagementFeedbackView) {
  Insert("survey", R"([
    {"_id": 1, "empNumber": "abc123", "feedback": {"management": 3, "environment": 3}, "department": "A"},
    {"_id": 2, "empNumber": "xyz987", "feedback": {"management": 2, "environment": 3}, "department": "B"},
    {"_id": 3, "empNumber": "ijk555", "feedback": {"management": 3, "environment": 4}, "department": "A"}])");
  ASSERT_TRUE(CreateView("managementFeedback", "survey",
                         R"([{"$project": {"management": "$feedback.management", "department": 1}}])")
                  .ok());
  EXPECT_EQ(Find("managementFeedback", "{}"),
            R"({"_id": 1, "department": "A", "management": 3}, )"
            R"({"_id": 2, "department": "B", "management": 2}, )"
            R"({"_id": 3, "department": "A", "management": 3})");
  EXPECT_EQ(Aggregate("managementFeedback", R"([{"$sortByCount": "$department"}])"),
            R"({"_id": "A", "count": 2}, {"_id": "B", "count": 1})");
  // The reads a view supports: findOne, counts, distinct.
  auto one = Coll("managementFeedback").FindOne(Json(R"({"management": 2})"));
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ(ToJson(**one), R"({"_id": 2, "department": "B", "management": 2})");
  EXPECT_EQ(Coll("managementFeedback").CountDocuments(Json(R"({"department": "A"})")).value(), 2);
  EXPECT_EQ(Coll("managementFeedback").EstimatedDocumentCount().value(), 3);
  auto distinct = Coll("managementFeedback").Distinct("management", Json("{}"));
  ASSERT_TRUE(distinct.ok());
  ASSERT_EQ(distinct->size(), 2u);
  auto by_id = Coll("managementFeedback").FindById(Json(R"({"_id": 3})").Get("_id"));
  ASSERT_TRUE(by_id.ok() && by_id->has_value());
  EXPECT_EQ(ToJson(**by_id), R"({"_id": 3, "department": "A", "management": 3})");
  // Nothing of the view is stored: a change of the collection shows at once.
  ASSERT_TRUE(Coll("survey").InsertOne(Json(R"({"_id": 4, "feedback": {"management": 1}, "department": "C"})")).ok());
  EXPECT_EQ(Coll("managementFeedback").CountDocuments(Json("{}")).value(), 4);
}

// Random finds on a view equal the same finds on the view materialized.
TEST_F(ViewTest, FindsOnAViewMatchTheViewMaterialized) {
  std::mt19937 rng(11);
  std::vector<Document> docs;
  for (int i = 0; i < 300; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i).AppendInt32("a", static_cast<int>(rng() % 20));
    if (rng() % 4 != 0) b.AppendInt32("b", static_cast<int>(rng() % 7));
    b.AppendString("s", std::string(1, static_cast<char>('a' + rng() % 5)));
    b.OpenArray("t").AppendInt32("", static_cast<int>(rng() % 4)).AppendInt32("", static_cast<int>(rng() % 4)).Close();
    docs.push_back(std::move(b).Build());
  }
  ASSERT_TRUE(Coll("c").InsertMany(docs).ok());
  ASSERT_TRUE(Coll("c").CreateIndex(Json(R"({"a": 1})")).ok());
  const char* kDefinition = R"([{"$match": {"a": {"$lt": 15}}},
      {"$addFields": {"ab": {"$add": ["$a", {"$ifNull": ["$b", 0]}]}}},
      {"$project": {"t": 0}}])";
  ASSERT_TRUE(CreateView("v", "c", kDefinition).ok());
  // The truth: the definition run once into a collection.
  std::string out = std::string(kDefinition);
  out.insert(out.size() - 1, R"(, {"$out": "m"})");
  ASSERT_EQ(Aggregate("c", out), "");
  ASSERT_EQ(Coll("m").CountDocuments(Json("{}")).value(), Coll("v").CountDocuments(Json("{}")).value());

  const std::vector<std::string> filters = {
      "{}", R"({"a": 3})", R"({"ab": {"$gte": 10}})", R"({"b": null})", R"({"s": {"$in": ["a", "c"]}})",
      R"({"$or": [{"a": {"$lt": 2}}, {"ab": 20}]})", R"({"t": {"$exists": false}})",
      R"({"$expr": {"$gt": ["$ab", "$a"]}})"};
  const std::vector<std::string> sorts = {R"({"_id": 1})", R"({"ab": -1, "_id": 1})",
                                          R"({"s": 1, "a": -1, "_id": 1})"};
  const std::vector<std::string> projections = {"{}", R"({"ab": 1})", R"({"s": 0, "b": 0})"};
  int cases = 0;
  for (const std::string& f : filters) {
    for (const std::string& s : sorts) {
      for (const std::string& p : projections) {
        for (int64_t skip : {0, 7}) {
          for (int64_t limit : {0, 5}) {
            FindOptions fo;
            fo.sort = Json(s);
            fo.projection = Json(p);
            fo.skip = skip;
            fo.limit = limit;
            const std::string want = Find("m", f, fo);
            ASSERT_EQ(Find("v", f, fo), want) << f << " sort " << s << " projection " << p;
            CountOptions co;
            co.skip = skip;
            co.limit = limit;
            ASSERT_EQ(Coll("v").CountDocuments(Json(f), co).value(),
                      Coll("m").CountDocuments(Json(f), co).value())
                << f;
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 8 * 3 * 3 * 2 * 2);
}

TEST_F(ViewTest, ViewsOfViewsRunTheInnermostFirst) {
  Insert("c", R"([{"_id": 1, "x": 1}, {"_id": 2, "x": 2}, {"_id": 3, "x": 3}])");
  ASSERT_TRUE(CreateView("v1", "c", R"([{"$set": {"y": {"$multiply": ["$x", 10]}}}])").ok());
  ASSERT_TRUE(CreateView("v2", "v1", R"([{"$match": {"y": {"$gte": 20}}}, {"$set": {"z": {"$add": ["$y", 1]}}}])").ok());
  ASSERT_TRUE(CreateView("v3", "v2", R"([{"$project": {"z": 1}}])").ok());
  EXPECT_EQ(Find("v3", "{}"), R"({"_id": 2, "z": 21}, {"_id": 3, "z": 31})");
  // A view on a missing collection is empty (and may be made before it).
  ASSERT_TRUE(CreateView("later", "notyet", "[]").ok());
  EXPECT_EQ(Find("later", "{}"), "");
  Insert("notyet", R"([{"_id": 9}])");
  EXPECT_EQ(Find("later", "{}"), R"({"_id": 9})");
}

TEST_F(ViewTest, AViewIsReadOnly) {
  Insert("c", R"([{"_id": 1, "x": 1}])");
  ASSERT_TRUE(CreateView("v", "c", "[]").ok());
  Collection v = Coll("v");
  auto is_view = [](const Status& s) {
    return s.code() == ErrorCode::kCommandNotSupportedOnView &&
           s.message() == "Namespace test.v is a view, not a collection";
  };
  EXPECT_TRUE(is_view(v.InsertOne(Json(R"({"_id": 2})")).status()));
  EXPECT_TRUE(is_view(v.InsertMany({Json(R"({"_id": 2})")}).status()));
  EXPECT_TRUE(is_view(v.UpdateOne(Json("{}"), Json(R"({"$set": {"x": 2}})")).status()));
  UpdateOptions upsert;
  upsert.upsert = true;
  EXPECT_TRUE(is_view(v.UpdateMany(Json(R"({"_id": 5})"), Json(R"({"$set": {"x": 2}})"), upsert).status()));
  EXPECT_TRUE(is_view(v.ReplaceOne(Json("{}"), Json(R"({"x": 3})")).status()));
  EXPECT_TRUE(is_view(v.DeleteOne(Json("{}")).status()));
  EXPECT_TRUE(is_view(v.DeleteMany(Json(R"({"nothing": 1})")).status()));
  EXPECT_TRUE(is_view(v.FindOneAndDelete(Json("{}")).status()));
  EXPECT_TRUE(is_view(v.FindOneAndUpdate(Json("{}"), Json(R"({"$inc": {"x": 1}})")).status()));
  EXPECT_TRUE(is_view(v.CreateIndex(Json(R"({"x": 1})")).status()));
  EXPECT_TRUE(is_view(v.DropIndex("x_1")));
  EXPECT_TRUE(is_view(v.DropIndexes()));
  EXPECT_TRUE(is_view(v.ListIndexes().status()));
  EXPECT_TRUE(is_view(v.Stats().status()));
  EXPECT_TRUE(is_view(v.Validate().status()));
  // The same through the commands.
  EXPECT_EQ(Code(R"({"insert": "v", "documents": [{"_id": 3}]})"), 166);
  EXPECT_EQ(Code(R"({"update": "v", "updates": [{"q": {}, "u": {"$set": {"x": 1}}}]})"), 166);
  EXPECT_EQ(Code(R"({"delete": "v", "deletes": [{"q": {}, "limit": 0}]})"), 166);
  EXPECT_EQ(Code(R"({"findAndModify": "v", "query": {}, "remove": true})"), 166);
  EXPECT_EQ(Code(R"({"createIndexes": "v", "indexes": [{"key": {"x": 1}, "name": "x_1"}]})"), 166);
  EXPECT_EQ(Code(R"({"listIndexes": "v"})"), 166);
  // Nothing changed underneath, and no collection took the view's name.
  EXPECT_EQ(Find("c", "{}"), R"({"_id": 1, "x": 1})");
  EXPECT_EQ(Find("v", "{}"), R"({"_id": 1, "x": 1})");
  // $out and $merge cannot write to a view.
  EXPECT_EQ(Aggregate("c", R"([{"$out": "v"}])").substr(0, 4), "166:");
  EXPECT_EQ(Aggregate("c", R"([{"$merge": {"into": "v"}}])").substr(0, 4), "166:");
  EXPECT_EQ(Find("v", "{}"), R"({"_id": 1, "x": 1})");
}

TEST_F(ViewTest, NamesAreSharedWithCollections) {
  Insert("c", R"([{"_id": 1}])");
  EXPECT_EQ(CreateView("c", "other", "[]").code(), ErrorCode::kNamespaceExists);
  ASSERT_TRUE(CreateView("v", "c", "[]").ok());
  EXPECT_EQ(CreateView("v", "c", "[]").code(), ErrorCode::kNamespaceExists);
  EXPECT_EQ(db().CreateCollection("v").code(), ErrorCode::kNamespaceExists);
  Status rename = db().RenameCollection("v", "w");
  EXPECT_EQ(rename.code(), ErrorCode::kCommandNotSupportedOnView);
  EXPECT_EQ(rename.message(), "cannot rename view: test.v");
  EXPECT_EQ(db().RenameCollection("c", "v").code(), ErrorCode::kNamespaceExists);
  EXPECT_EQ(db().RenameCollection("c", "v", /*drop_target=*/true).code(), ErrorCode::kNamespaceExists);
  EXPECT_EQ(CreateView("", "c", "[]").code(), ErrorCode::kInvalidNamespace);
  EXPECT_EQ(CreateView("system.special", "c", "[]").code(), ErrorCode::kInvalidNamespace);
  EXPECT_EQ(CreateView("dollar$", "c", "[]").code(), ErrorCode::kInvalidNamespace);
  // Listed with the collections, sorted; a view's entry as MongoDB's.
  auto names = db().ListCollectionNames();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"c", "v"}));
  Document listed = client_->RunCommand("test", Json(R"({"listCollections": 1, "filter": {"type": "view"}})"));
  EXPECT_EQ(ToJson(listed.Get("cursor").Document().Get("firstBatch").Array()),
            R"({"0": {"name": "v", "type": "view", "options": {"viewOn": "c", "pipeline": []}, )"
            R"("info": {"readOnly": true}}})");
  Document stats = client_->RunCommand("test", Json(R"({"dbStats": 1})"));
  EXPECT_EQ(stats.Get("views").NumberAsDouble(), 1) << ToJson(stats);
  EXPECT_EQ(stats.Get("collections").NumberAsDouble(), 1) << ToJson(stats);
  // Dropping a view drops the definition alone; the name is free again.
  bool existed = false;
  ASSERT_TRUE(db().DropCollection("v", &existed).ok());
  EXPECT_TRUE(existed);
  EXPECT_EQ(Find("c", "{}"), R"({"_id": 1})");
  ASSERT_TRUE(Coll("v").InsertOne(Json(R"({"_id": 5})")).ok());
  EXPECT_EQ(Find("v", "{}"), R"({"_id": 5})");
  // dropDatabase drops views with the collections.
  ASSERT_TRUE(CreateView("w", "c", "[]").ok());
  ASSERT_TRUE(db().Drop().ok());
  EXPECT_TRUE(db().ListCollectionNames()->empty());
  EXPECT_EQ(client_->ListDatabaseNames().value(), std::vector<std::string>{});
}

TEST_F(ViewTest, BadDefinitionsAreRefusedBeforeAnythingIsStored) {
  Insert("c", R"([{"_id": 1}])");
  EXPECT_EQ(CreateView("v", "c", R"([{"$out": "x"}])").code(), ErrorCode::kOptionNotSupportedOnView);
  EXPECT_EQ(CreateView("v", "c", R"([{"$match": {}}, {"$merge": {"into": "x"}}])").message(),
            "The aggregation stage $merge in location 1 of the pipeline cannot be used in the view "
            "definition of test.v because it writes to disk");
  EXPECT_EQ(CreateView("v", "c", R"([{"$lookup": {"from": "o", "pipeline": [{"$out": "x"}], "as": "r"}}])")
                .code_number(),
            51047);
  EXPECT_EQ(CreateView("v", "c", R"([{"$bogus": 1}])").code_number(), 40324);
  EXPECT_EQ(CreateView("v", "c", R"([{"$match": {"$nope": 1}}])").code(), ErrorCode::kBadValue);
  EXPECT_EQ(CreateView("v", "c", R"([{"$project": {"a": 1, "b": 0}}])").code_number(), 31254);
  // create's fields.
  EXPECT_EQ(Code(R"({"create": "v", "pipeline": []})"), 72);
  EXPECT_EQ(Code(R"({"create": "v", "viewOn": 1})"), 14);
  EXPECT_EQ(Code(R"({"create": "v", "viewOn": "c", "pipeline": {}})"), 14);
  EXPECT_EQ(Code(R"({"create": "v", "viewOn": "c", "pipeline": [1]})"), 14);
  EXPECT_EQ(Code(R"({"create": "v", "viewOn": ""})"), 2);
  EXPECT_EQ(Code(R"({"create": "v", "viewOn": "c", "capped": true, "size": 100})"), 72);
  EXPECT_EQ(Code(R"({"create": "v", "viewOn": "c", "collation": {"locale": "fr"}})"), 238);
  EXPECT_TRUE(db().ListCollectionNames().value() == std::vector<std::string>{"c"});
  // And a good one through create.
  EXPECT_EQ(Code(R"({"create": "v", "viewOn": "c", "pipeline": [{"$set": {"k": 1}}]})"), 0);
  EXPECT_EQ(Find("v", "{}"), R"({"_id": 1, "k": 1})");
}

TEST_F(ViewTest, CyclesAndDepthAreRefused) {
  ASSERT_TRUE(CreateView("a", "c", "[]").ok());
  EXPECT_EQ(CreateView("self", "self", "[]").code(), ErrorCode::kGraphContainsCycle);
  EXPECT_EQ(CreateView("l", "c", R"([{"$lookup": {"from": "l", "localField": "x", "foreignField": "y", "as": "r"}}])")
                .code(),
            ErrorCode::kGraphContainsCycle);
  ASSERT_TRUE(CreateView("b", "a", "[]").ok());
  // collMod cannot close the loop: a on b on a.
  Document closing = client_->RunCommand(
      "test", Json(R"({"collMod": "a", "viewOn": "b", "pipeline": []})"));
  EXPECT_EQ(closing.Get("code").NumberAsDouble(), 93);
  EXPECT_EQ(closing.Get("errmsg").String(), "View cycle detected: [test.a => test.b => test.a]");
  // Nor a $unionWith deep in a $facet.
  EXPECT_EQ(Code(R"({"collMod": "a", "viewOn": "c", "pipeline": [{"$facet": {"f": [{"$unionWith": "b"}]}}]})"), 93);
  EXPECT_EQ(Code(R"({"collMod": "a", "viewOn": "c", "pipeline": [{"$unionWith": {"coll": "b", "pipeline": []}}]})"), 93);
  EXPECT_EQ(Code(R"({"collMod": "a", "viewOn": "c", "pipeline": [{"$unionWith": "elsewhere"}]})"), 0);
  // 20 views deep, and no more.
  std::string under = "b";
  for (int i = 3; i <= 20; ++i) {
    const std::string name = "d" + std::to_string(i);
    ASSERT_TRUE(CreateView(name, under, "[]").ok()) << i;
    under = name;
  }
  EXPECT_EQ(CreateView("d21", under, "[]").code(), ErrorCode::kViewDepthLimitExceeded);
  // Nor by deepening the bottom of the chain.
  ASSERT_TRUE(CreateView("x", "c", "[]").ok());
  EXPECT_EQ(Code(R"({"collMod": "a", "viewOn": "x", "pipeline": []})"), 165);
  Insert("c", R"([{"_id": 1}])");
  EXPECT_EQ(Find(under, "{}"), R"({"_id": 1})");
}

TEST_F(ViewTest, CollModChangesTheDefinition) {
  Insert("c", R"([{"_id": 1, "x": 1}, {"_id": 2, "x": 2}])");
  Insert("d", R"([{"_id": 7}])");
  ASSERT_TRUE(CreateView("v", "c", R"([{"$match": {"x": 1}}])").ok());
  EXPECT_EQ(Code(R"({"collMod": "v", "viewOn": "c", "pipeline": [{"$match": {"x": 2}}]})"), 0);
  EXPECT_EQ(Find("v", "{}"), R"({"_id": 2, "x": 2})");
  EXPECT_EQ(Code(R"({"collMod": "v", "viewOn": "d", "pipeline": []})"), 0);
  EXPECT_EQ(Find("v", "{}"), R"({"_id": 7})");
  EXPECT_EQ(Code(R"({"collMod": "v", "pipeline": []})"), 72);
  EXPECT_EQ(Code(R"({"collMod": "v", "viewOn": "c"})"), 72);
  EXPECT_EQ(Code(R"({"collMod": "v", "validator": {"x": 1}})"), 72);
  EXPECT_EQ(Code(R"({"collMod": "c", "viewOn": "d", "pipeline": []})"), 72);
  EXPECT_EQ(Code(R"({"collMod": "v", "viewOn": "c", "pipeline": [{"$out": "z"}]})"), 167);
  EXPECT_EQ(Find("v", "{}"), R"({"_id": 7})");
}

TEST_F(ViewTest, ViewsSurviveReopening) {
  Insert("c", R"([{"_id": 1, "x": 5}])");
  ASSERT_TRUE(CreateView("v", "c", R"([{"$set": {"y": "$x"}}])").ok());
  ASSERT_TRUE(CreateView("w", "v", R"([{"$lookup": {"from": "c", "localField": "y", "foreignField": "x", "as": "j"}}])").ok());
  Open();
  EXPECT_EQ(Find("w", "{}"), R"({"_id": 1, "x": 5, "y": 5, "j": [{"_id": 1, "x": 5}]})");
  EXPECT_EQ(db().CreateCollection("v").code(), ErrorCode::kNamespaceExists);
  // The cycle check still sees the reloaded dependencies.
  EXPECT_EQ(Code(R"({"collMod": "v", "viewOn": "w", "pipeline": []})"), 93);
}

// $lookup, $graphLookup and $unionWith read a view as its documents:
// every join strategy gives what it gives over the view materialized.
TEST_F(ViewTest, JoinsReadViewsAsTheirDocuments) {
  Insert("orders", R"([{"_id": 1, "item": "a", "qty": 2}, {"_id": 2, "item": "b", "qty": 1},
                      {"_id": 3, "item": "c", "qty": 5}, {"_id": 4, "item": "a", "qty": 1}])");
  Insert("items", R"([{"_id": "a", "price": 3, "up": null}, {"_id": "b", "price": 10, "up": "a"},
                     {"_id": "c", "price": 7, "up": "b"}])");
  // The view keeps the priced-under-10 items, with a computed field.
  const char* kDefinition = R"([{"$match": {"price": {"$lt": 10}}}, {"$set": {"sku": "$_id", "double": {"$multiply": ["$price", 2]}}}])";
  ASSERT_TRUE(CreateView("cheap", "items", kDefinition).ok());
  std::string out = kDefinition;
  out.insert(out.size() - 1, R"(, {"$out": "cheap_m"})");
  ASSERT_EQ(Aggregate("items", out), "");
  auto both = [&](const std::string& pipeline) {
    std::string p = pipeline;
    const std::string on_view = Aggregate("orders", p);
    for (size_t at = p.find("\"cheap\""); at != std::string::npos; at = p.find("\"cheap\"", at)) {
      p.replace(at, 7, "\"cheap_m\"");
    }
    EXPECT_EQ(on_view, Aggregate("orders", p)) << pipeline;
    return on_view;
  };
  // localField/foreignField on the view's computed field (a hash join:
  // a view has no index) and on _id.
  EXPECT_EQ(both(R"([{"$lookup": {"from": "cheap", "localField": "item", "foreignField": "sku", "as": "m"}},
                     {"$project": {"n": {"$size": "$m"}}}])"),
            R"({"_id": 1, "n": 1}, {"_id": 2, "n": 0}, {"_id": 3, "n": 1}, {"_id": 4, "n": 1})");
  both(R"([{"$lookup": {"from": "cheap", "localField": "item", "foreignField": "_id", "as": "m"}}])");
  // let + pipeline, and the combined form.
  both(R"([{"$lookup": {"from": "cheap", "let": {"i": "$item", "q": "$qty"},
                         "pipeline": [{"$match": {"$expr": {"$and": [{"$eq": ["$_id", "$$i"]}, {"$gt": ["$double", "$$q"]}]}}}],
                         "as": "m"}}])");
  both(R"([{"$lookup": {"from": "cheap", "localField": "item", "foreignField": "_id", "let": {"q": "$qty"},
                         "pipeline": [{"$project": {"t": {"$multiply": ["$price", "$$q"]}}}], "as": "m"}}])");
  EXPECT_EQ(both(R"([{"$match": {"_id": 1}}, {"$unionWith": {"coll": "cheap", "pipeline": [{"$project": {"sku": 1}}]}}])"),
            R"({"_id": 1, "item": "a", "qty": 2}, {"_id": "a", "sku": "a"}, {"_id": "c", "sku": "c"})");
  both(R"([{"$match": {"_id": 3}}, {"$graphLookup": {"from": "cheap", "startWith": "$item", "connectFromField": "up",
                         "connectToField": "_id", "as": "chain"}}, {"$project": {"n": {"$size": "$chain"}}}])");
}

TEST_F(ViewTest, ExplainShowsTheResolvedPipeline) {
  Insert("c", R"([{"_id": 1, "a": 1}, {"_id": 2, "a": 2}])");
  ASSERT_TRUE(Coll("c").CreateIndex(Json(R"({"a": 1})")).ok());
  ASSERT_TRUE(CreateView("v", "c", R"([{"$match": {"a": {"$gte": 2}}}, {"$set": {"b": 1}}])").ok());
  auto e = Coll("v").ExplainFind(Json(R"({"b": 1})"), FindOptions(), ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string shown = ToJson(*e);
  // The view's $match went to the index; the find's filter runs after $set.
  EXPECT_NE(shown.find("IXSCAN"), std::string::npos) << shown;
  EXPECT_NE(shown.find(R"({"$set": {"b": 1})"), std::string::npos) << shown;
  EXPECT_NE(shown.find(R"({"$match": {"b": 1})"), std::string::npos) << shown;
  // A find's filter on a field the view does not change moves ahead of the
  // view's stages, to the index.
  ASSERT_TRUE(CreateView("w", "c", R"([{"$set": {"b": 1}}, {"$sort": {"_id": -1}}])").ok());
  auto w = Coll("w").ExplainFind(Json(R"({"a": 2})"), FindOptions(), ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_NE(ToJson(*w).find("IXSCAN"), std::string::npos) << ToJson(*w);
  EXPECT_EQ(Find("w", R"({"a": 2})"), R"({"_id": 2, "a": 2, "b": 1})");
  auto c = Coll("v").ExplainCount(Json("{}"), CountOptions(), ExplainVerbosity::kQueryPlanner);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NE(ToJson(*c).find("$count"), std::string::npos);
  Document cmd = client_->RunCommand("test", Json(R"({"explain": {"find": "v", "filter": {}}})"));
  EXPECT_EQ(cmd.Get("ok").NumberAsDouble(), 1) << ToJson(cmd);
}

TEST_F(ViewTest, AViewReadsTheTransactionsWrites) {
  Insert("c", R"([{"_id": 1}])");
  ASSERT_TRUE(CreateView("v", "c", R"([{"$set": {"seen": true}}])").ok());
  auto session = client_->StartSession();
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(session->StartTransaction().ok());
  Database in = session->GetDatabase("test");
  ASSERT_TRUE(in.GetCollection("c").InsertOne(Json(R"({"_id": 2})")).ok());
  EXPECT_EQ(in.GetCollection("v").CountDocuments(Json("{}")).value(), 2);
  EXPECT_EQ(Coll("v").CountDocuments(Json("{}")).value(), 1);  // outside: not yet
  ASSERT_TRUE(session->CommitTransaction().ok());
  EXPECT_EQ(Coll("v").CountDocuments(Json("{}")).value(), 2);
}

}  // namespace
}  // namespace rockdoc

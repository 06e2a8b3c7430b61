// Collation (issue 39): the collation document decoded and normalized as
// MongoDB's, and applied by every door of the library and the commands:
// find's filter and sort, count, distinct, update, delete, findAndModify, a
// collection's default, and indexes whose keys are ICU sort keys (unique
// ones collide on "Alice"/"alice" at strength 2; the planner uses them only
// for the same collation).
//
// The property test's truth is independent of the engine's query path: the
// same ICU collator (query/collator.h) applied by brute force to the
// inserted strings, in memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "query/collator.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc::test {
namespace {

using ::testing::HasSubstr;

CollatorPtr MakeCollator(std::string_view json) {
  auto c = Collator::Make(Json(json));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : nullptr;
}

Status CollatorError(std::string_view json) { return Collator::Make(Json(json)).status(); }

TEST(CollatorTest, NormalizedSpecHasEveryFieldAsMongoDBFillsIt) {
  CollatorPtr en = MakeCollator(R"({"locale": "en_US"})");
  ASSERT_NE(en, nullptr);
  const std::string version = std::string(en->spec().Get("version").String());
  EXPECT_EQ(ToJson(en->spec()),
            R"({"locale": "en_US", "caseLevel": false, "caseFirst": "off", "strength": 3, )"
            R"("numericOrdering": false, "alternate": "non-ignorable", "maxVariable": "punct", )"
            R"("normalization": false, "backwards": false, "version": ")" +
                version + R"("})");
  // fr_CA sorts accents backwards by default (ICU's rules for the locale).
  EXPECT_TRUE(MakeCollator(R"({"locale": "fr_CA"})")->spec().Get("backwards").Bool());
  EXPECT_FALSE(MakeCollator(R"({"locale": "fr"})")->spec().Get("backwards").Bool());
  CollatorPtr two = MakeCollator(R"({"locale": "de", "strength": 2, "numericOrdering": true})");
  EXPECT_EQ(two->spec().Get("strength").Int32(), 2);
  EXPECT_TRUE(two->spec().Get("numericOrdering").Bool());
  // The normalized spec is a fixed point, and a version given back is accepted.
  CollatorPtr again = Collator::Make(two->spec()).value();
  EXPECT_TRUE(Collator::Same(two.get(), again.get()));
  EXPECT_FALSE(Collator::Same(two.get(), en.get()));
  EXPECT_FALSE(Collator::Same(two.get(), nullptr));
}

TEST(CollatorTest, SimpleIsNoCollator) {
  auto simple = Collator::Make(Json(R"({"locale": "simple"})"));
  ASSERT_TRUE(simple.ok());
  EXPECT_EQ(*simple, nullptr);
  EXPECT_EQ(CollatorError(R"({"locale": "simple", "strength": 2})").code(),
            ErrorCode::kBadValue);
}

TEST(CollatorTest, ComparesAndSortKeysAgree) {
  CollatorPtr ci = MakeCollator(R"({"locale": "en", "strength": 2})");
  EXPECT_EQ(ci->CompareStrings("Alice", "alice"), 0);
  EXPECT_LT(ci->CompareStrings("alice", "Bob"), 0);  // binary order says otherwise
  EXPECT_NE(ci->CompareStrings("resume", "résumé"), 0);
  CollatorPtr base = MakeCollator(R"({"locale": "en", "strength": 1})");
  EXPECT_EQ(base->CompareStrings("resume", "Résumé"), 0);
  CollatorPtr num = MakeCollator(R"({"locale": "en", "numericOrdering": true})");
  EXPECT_LT(num->CompareStrings("item 9", "item 10"), 0);
  EXPECT_EQ(ci->SortKey("Alice"), ci->SortKey("alice"));
  EXPECT_EQ(ci->SortKey("x").find('\0'), std::string::npos);
}

TEST(CollatorTest, InvalidSpecificationsFailWithMongoDBCodes) {
  EXPECT_EQ(CollatorError(R"({"strength": 2})").code(), ErrorCode::kFailedToParse);
  EXPECT_EQ(CollatorError(R"({"locale": "en", "foo": 1})").code(), ErrorCode::kFailedToParse);
  EXPECT_THAT(CollatorError(R"({"locale": "en", "foo": 1})").message(),
              HasSubstr("Unknown collation spec field: foo"));
  EXPECT_EQ(CollatorError(R"({"locale": "xx_nowhere"})").code(), ErrorCode::kBadValue);
  EXPECT_THAT(CollatorError(R"({"locale": "xx_nowhere"})").message(),
              HasSubstr("Field 'locale' is invalid in:"));
  EXPECT_EQ(CollatorError(R"({"locale": 5})").code(), ErrorCode::kTypeMismatch);
  EXPECT_EQ(CollatorError(R"({"locale": "en", "strength": 6})").code(),
            ErrorCode::kFailedToParse);
  EXPECT_EQ(CollatorError(R"({"locale": "en", "strength": 1.5})").code(),
            ErrorCode::kFailedToParse);
  EXPECT_EQ(CollatorError(R"({"locale": "en", "caseLevel": 1})").code(),
            ErrorCode::kTypeMismatch);
  EXPECT_EQ(CollatorError(R"({"locale": "en", "caseFirst": "middle"})").code(),
            ErrorCode::kFailedToParse);
  EXPECT_EQ(CollatorError(R"({"locale": "en", "alternate": "x"})").code(),
            ErrorCode::kFailedToParse);
  EXPECT_EQ(CollatorError(R"({"locale": "en", "maxVariable": "x"})").code(),
            ErrorCode::kFailedToParse);
  EXPECT_EQ(CollatorError(R"({"locale": "en", "version": "1.0"})").code(),
            ErrorCode::kBadValue);
}

// ---------------------------------------------------------------------------
// Through the commands (the door of the shell, the C API and the wire).

class CollationCommandTest : public ClientTest {
 protected:
  Document Ok(std::string_view json) {
    auto r = RunCommandOk(*client_, "test", Json(json));
    EXPECT_TRUE(r.ok()) << json << " -> " << r.status();
    return r.ok() ? *r : Document();
  }
  Status Err(std::string_view json) { return RunCommandOk(*client_, "test", Json(json)).status(); }
  // The `field` values of a find's first batch, in order.
  std::vector<std::string> Names(std::string_view json, std::string_view field = "name") {
    Document r = Ok(json);
    std::vector<std::string> out;
    Element batch = r.Get("cursor").Document().Get("firstBatch");
    for (Element d : batch.Array()) out.emplace_back(d.Document().Get(field).String());
    return out;
  }
  std::string WinningStage(std::string_view find_json) {
    Document r = Ok(R"({"explain": )" + std::string(find_json) + R"(, "verbosity": "queryPlanner"})");
    return ToJson(r.Get("queryPlanner").Document().Get("winningPlan").Document());
  }
  void InsertNames() {
    Ok(R"({"insert": "c", "documents": [{"_id": 1, "name": "bob"}, {"_id": 2, "name": "Alice"},
          {"_id": 3, "name": "alice"}, {"_id": 4, "name": "Émile"}, {"_id": 5, "name": "emile"},
          {"_id": 6, "name": "Zoë"}]})");
  }
};

TEST_F(CollationCommandTest, FindFiltersAndSortsWithTheCollation) {
  InsertNames();
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": "alice"}})"),
              ::testing::ElementsAre("alice"));
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": "alice"}, "sort": {"_id": 1},
                        "collation": {"locale": "en", "strength": 2}})"),
              ::testing::ElementsAre("Alice", "alice"));
  // strength 1 ignores accents too; $in and $ne follow it.
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": {"$in": ["EMILE"]}}, "sort": {"_id": 1},
                        "collation": {"locale": "en", "strength": 1}})"),
              ::testing::ElementsAre("Émile", "emile"));
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": {"$nin": ["ALICE", "emile", "BOB"]}},
                        "sort": {"_id": 1}, "collation": {"locale": "en", "strength": 1}})"),
              ::testing::ElementsAre("Zoë"));
  // Binary order puts capitals first; English order does not.
  EXPECT_THAT(Names(R"({"find": "c", "sort": {"name": 1, "_id": 1}})"),
              ::testing::ElementsAre("Alice", "Zoë", "alice", "bob", "emile", "Émile"));
  EXPECT_THAT(Names(R"({"find": "c", "sort": {"name": 1, "_id": 1},
                        "collation": {"locale": "en"}})"),
              ::testing::ElementsAre("alice", "Alice", "bob", "emile", "Émile", "Zoë"));
  // Ranges compare by the collation.
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": {"$lt": "B"}}, "sort": {"_id": 1},
                        "collation": {"locale": "en"}})"),
              ::testing::ElementsAre("Alice", "alice"));
  // $regex never uses the collation.
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": {"$regex": "^a"}},
                        "collation": {"locale": "en", "strength": 1}})"),
              ::testing::ElementsAre("alice"));
  // Strings inside embedded documents and arrays compare by it too.
  Ok(R"({"insert": "d", "documents": [{"_id": 1, "v": {"x": "ABC"}}, {"_id": 2, "v": ["Q", "abc"]}]})");
  EXPECT_EQ(Ok(R"({"count": "d", "query": {"v": {"x": "abc"}},
                   "collation": {"locale": "en", "strength": 2}})").Get("n").NumberAsDouble(), 1);
  EXPECT_EQ(Ok(R"({"count": "d", "query": {"v": "ABC"},
                   "collation": {"locale": "en", "strength": 2}})").Get("n").NumberAsDouble(), 1);
}

TEST_F(CollationCommandTest, CountDistinctUpdateDeleteFindAndModify) {
  InsertNames();
  EXPECT_EQ(Ok(R"({"count": "c", "query": {"name": "ALICE"},
                   "collation": {"locale": "en", "strength": 2}})").Get("n").NumberAsDouble(), 2);
  Document d = Ok(R"({"distinct": "c", "key": "name",
                      "collation": {"locale": "en", "strength": 1}})");
  // alice/Alice, emile/Émile collapse; bob, Zoë stay: four values.
  size_t n = 0;
  for (Element e : d.Get("values").Array()) (void)e, ++n;
  EXPECT_EQ(n, 4u);
  Document u = Ok(R"({"update": "c", "updates": [{"q": {"name": "ALICE"}, "u": {"$set": {"k": 1}},
                      "multi": true, "collation": {"locale": "en", "strength": 2}}]})");
  EXPECT_EQ(u.Get("nModified").NumberAsDouble(), 2);
  Document f = Ok(R"({"findAndModify": "c", "query": {"name": "EMILE"}, "sort": {"_id": -1},
                      "update": {"$set": {"k": 2}}, "new": true,
                      "collation": {"locale": "en", "strength": 1}})");
  EXPECT_EQ(f.Get("value").Document().Get("_id").NumberAsDouble(), 5);
  Document del = Ok(R"({"delete": "c", "deletes": [{"q": {"name": "EMILE"}, "limit": 0,
                        "collation": {"locale": "fr", "strength": 1}}]})");
  EXPECT_EQ(del.Get("n").NumberAsDouble(), 2);
}

TEST_F(CollationCommandTest, CollectionDefaultAppliesAndIsListed) {
  Ok(R"({"create": "c", "collation": {"locale": "en", "strength": 2}})");
  InsertNames();
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": "ALICE"}, "sort": {"_id": 1}})"),
              ::testing::ElementsAre("Alice", "alice"));
  // The operation's collation overrides the default.
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": "alice"},
                        "collation": {"locale": "simple"}})"),
              ::testing::ElementsAre("alice"));
  Document list = Ok(R"({"listCollections": 1, "filter": {"name": "c"}})");
  Element info = *list.Get("cursor").Document().Get("firstBatch").Array().begin();
  Element collation = info.Document().Get("options").Document().Get("collation");
  ASSERT_EQ(collation.type(), BsonType::kDocument) << ToJson(info.Document());
  EXPECT_EQ(collation.Document().Get("strength").Int32(), 2);
  EXPECT_EQ(std::string(collation.Document().Get("caseFirst").String()), "off");
  // New indexes take it when they name none.
  Ok(R"({"createIndexes": "c", "indexes": [{"key": {"name": 1}, "name": "name_1"}]})");
  Document indexes = Ok(R"({"listIndexes": "c"})");
  bool found = false;
  for (Element spec : indexes.Get("cursor").Document().Get("firstBatch").Array()) {
    if (spec.Document().Get("name").String() != "name_1") continue;
    found = true;
    EXPECT_EQ(spec.Document().Get("collation").Document().Get("strength").Int32(), 2);
  }
  EXPECT_TRUE(found);
  // It survives a restart (the catalog persists it).
  Open();
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": "ALICE"}, "sort": {"_id": 1}})"),
              ::testing::ElementsAre("Alice", "alice"));
  EXPECT_THAT(WinningStage(R"({"find": "c", "filter": {"name": "ALICE"}})"), HasSubstr("IXSCAN"));
}

TEST_F(CollationCommandTest, UniqueIndexAtStrengthTwoRefusesCaseVariants) {
  Ok(R"({"createIndexes": "users", "indexes": [{"key": {"user": 1}, "name": "user_1",
         "unique": true, "collation": {"locale": "en", "strength": 2}}]})");
  Ok(R"({"insert": "users", "documents": [{"_id": 1, "user": "Alice"}]})");
  Document r = client_->RunCommand(
      "test", Json(R"({"insert": "users", "documents": [{"_id": 2, "user": "alice"}]})"));
  Element errors = r.Get("writeErrors");
  ASSERT_EQ(errors.type(), BsonType::kArray) << ToJson(r);
  Element first = *errors.Array().begin();
  EXPECT_EQ(first.Document().Get("code").NumberAsDouble(), 11000);
  EXPECT_THAT(std::string(first.Document().Get("errmsg").String()),
              HasSubstr("index: user_1 collation: { locale: \"en\""));
  EXPECT_THAT(std::string(first.Document().Get("errmsg").String()), HasSubstr("dup key: { user: \"0x"));
  // A different user is fine; a unique index built over existing
  // duplicates fails the same way.
  Ok(R"({"insert": "users", "documents": [{"_id": 3, "user": "Bob"}]})");
  Ok(R"({"insert": "u2", "documents": [{"_id": 1, "user": "X"}, {"_id": 2, "user": "x"}]})");
  EXPECT_EQ(Err(R"({"createIndexes": "u2", "indexes": [{"key": {"user": 1}, "name": "user_1",
                    "unique": true, "collation": {"locale": "en", "strength": 2}}]})")
                .code(),
            ErrorCode::kDuplicateKey);
  // The same key pattern in another collation is another index.
  Ok(R"({"createIndexes": "users", "indexes": [{"key": {"user": 1}, "name": "user_simple"}]})");
}

TEST_F(CollationCommandTest, ExplainUsesACollatedIndexOnlyForItsCollation) {
  InsertNames();
  Ok(R"({"createIndexes": "c", "indexes": [{"key": {"name": 1}, "name": "name_en2",
         "collation": {"locale": "en", "strength": 2}}]})");
  const std::string en2 = R"("collation": {"locale": "en", "strength": 2})";
  EXPECT_THAT(WinningStage(R"({"find": "c", "filter": {"name": "ALICE"}, )" + en2 + "}"),
              HasSubstr("\"indexName\": \"name_en2\""));
  // Another collation (or the simple one) cannot use it for strings...
  EXPECT_THAT(WinningStage(R"({"find": "c", "filter": {"name": "ALICE"}})"), HasSubstr("COLLSCAN"));
  EXPECT_THAT(WinningStage(R"({"find": "c", "filter": {"name": "ALICE"},
                              "collation": {"locale": "fr", "strength": 2}})"),
              HasSubstr("COLLSCAN"));
  // ...but may for predicates without strings, as MongoDB's planner does.
  EXPECT_THAT(WinningStage(R"({"find": "c", "filter": {"name": 5}})"), HasSubstr("IXSCAN"));
  // A collated index provides its own collation's sort and never covers.
  const std::string sorted = WinningStage(R"({"find": "c", "filter": {"name": {"$gt": "a"}},
      "sort": {"name": 1}, "projection": {"_id": 0, "name": 1}, )" + en2 + "}");
  EXPECT_THAT(sorted, HasSubstr("FETCH"));
  EXPECT_THAT(sorted, ::testing::Not(HasSubstr("SORT")));
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": {"$gt": "a"}}, "sort": {"name": 1, "_id": 1},
                        "projection": {"_id": 0, "name": 1}, )" + en2 + "}"),
              ::testing::ElementsAre("Alice", "alice", "bob", "emile", "Émile", "Zoë"));
  // A hint of an index in another collation is a full scan of it, filtered.
  EXPECT_THAT(Names(R"({"find": "c", "filter": {"name": "alice"}, "hint": "name_en2"})"),
              ::testing::ElementsAre("alice"));
}

// countDocuments is an aggregate in every driver: its $match takes the
// collation (the pipeline's find), its $group counts.
TEST_F(CollationCommandTest, AggregateTakesTheCollationInItsFind) {
  InsertNames();
  Document r = Ok(R"({"aggregate": "c", "pipeline": [{"$match": {"name": "ALICE"}}, {"$skip": 0},
      {"$group": {"_id": 1, "n": {"$sum": 1}}}], "cursor": {},
      "collation": {"locale": "en", "strength": 2}})");
  EXPECT_EQ((*r.Get("cursor").Document().Get("firstBatch").Array().begin())
                .Document()
                .Get("n")
                .NumberAsDouble(),
            2);
  EXPECT_THAT(Names(R"({"aggregate": "c", "pipeline": [{"$sort": {"name": 1, "_id": 1}},
      {"$limit": 2}, {"$project": {"name": 1}}], "cursor": {}, "collation": {"locale": "en"}})"),
              ::testing::ElementsAre("alice", "Alice"));
  // A collection's default applies to its aggregates too.
  Ok(R"({"create": "d", "collation": {"locale": "en", "strength": 1}})");
  Ok(R"({"insert": "d", "documents": [{"s": "Éa"}, {"s": "ea"}]})");
  EXPECT_EQ(Err(R"({"aggregate": "d", "pipeline": [{"$group": {"_id": "$s"}}], "cursor": {}})")
                .code(),
            ErrorCode::kNotImplemented);
  EXPECT_THAT(Names(R"({"aggregate": "d", "pipeline": [{"$match": {"s": "EA"}}], "cursor": {}})",
                    "s"),
              ::testing::SizeIs(2));
}

TEST_F(CollationCommandTest, MisuseFailsWithMongoDBCodes) {
  InsertNames();
  EXPECT_EQ(Err(R"({"find": "c", "collation": "en"})").code(), ErrorCode::kTypeMismatch);
  EXPECT_EQ(Err(R"({"find": "c", "collation": {"locale": "en", "strength": 0}})").code(),
            ErrorCode::kFailedToParse);
  EXPECT_EQ(Err(R"({"find": "c", "collation": {"locale": "nowhere"}})").code(),
            ErrorCode::kBadValue);
  EXPECT_EQ(Err(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1",
                    "collation": {"locale": "en", "bogus": true}}]})").code(),
            ErrorCode::kFailedToParse);
  EXPECT_EQ(Err(R"({"create": "e", "collation": {}})").code(), ErrorCode::kFailedToParse);
  // min()/max() need the hinted index in the query's collation.
  Ok(R"({"createIndexes": "c", "indexes": [{"key": {"name": 1}, "name": "name_en",
         "collation": {"locale": "en"}}]})");
  EXPECT_EQ(static_cast<int>(Err(R"({"find": "c", "hint": "name_en", "min": {"name": "a"}})").code()),
            51174);
  // Not implemented yet: a collation over an aggregate's later stages, a view's.
  EXPECT_EQ(Err(R"({"aggregate": "c", "pipeline": [{"$group": {"_id": "$name"}}], "cursor": {},
                    "collation": {"locale": "en"}})")
                .code(),
            ErrorCode::kNotImplemented);
  EXPECT_EQ(Err(R"({"create": "v", "viewOn": "c", "collation": {"locale": "en"}})").code(),
            ErrorCode::kNotImplemented);
}

// ---------------------------------------------------------------------------
// The property: over random Unicode strings, in several locales and
// strengths, an index in a collation answers equality, range, $in and
// sorted queries exactly as the collator applied by brute force does, and
// explain shows the index chosen only when the query's collation is the
// index's.

std::string RandomString(std::mt19937& rng) {
  static const std::vector<std::string> kPieces = {
      "a", "A", "b", "B", "e", "E", "é", "É", "è", "ë", "o", "ö", "Ö", "ø", "å", "Å",
      "z", "Z", "ß", "ss", "c", "ç", "n", "ñ", "1", "2", "9", "10", "0", " ", "-", ".",
      ",", "'", "ä", "Ä", "æ", "œ", "日", "本", "中", "文", "ア", "あ", "が", "か", "ｶ", "ch"};
  std::uniform_int_distribution<size_t> len(0, 5), piece(0, kPieces.size() - 1);
  std::string s;
  for (size_t n = len(rng); n > 0; --n) s += kPieces[piece(rng)];
  return s;
}

TEST(CollationPropertyTest, CollatedIndexAgreesWithBruteForceAndExplainMatchesCollations) {
  const char* const kCollations[] = {
      R"({"locale": "en", "strength": 1})",
      R"({"locale": "en", "strength": 2})",
      R"({"locale": "en"})",
      R"({"locale": "fr_CA", "strength": 2})",
      R"({"locale": "de", "strength": 1, "numericOrdering": true})",
      R"({"locale": "sv"})",
      R"({"locale": "ja", "strength": 2})",
      R"({"locale": "zh", "strength": 1})",
      R"({"locale": "en", "alternate": "shifted", "strength": 3})",
  };
  ScratchDir dir;
  auto client = Client::Open(dir.Sub("db"), TestClientOptions());
  ASSERT_TRUE(client.ok()) << client.status();
  std::mt19937 rng(39);
  constexpr int kDocs = 150;
  int config = 0;
  for (const char* collation_json : kCollations) {
    SCOPED_TRACE(collation_json);
    CollatorPtr collator = MakeCollator(collation_json);
    ASSERT_NE(collator, nullptr);
    const std::string coll = "p" + std::to_string(config++);
    const Document collation = Json(collation_json);
    Collection c = (*client)->GetDatabase("test").GetCollection(coll);
    IndexOptions io;
    io.name = "s_1";
    io.collation = collation;
    ASSERT_TRUE(c.CreateIndex(Json(R"({"s": 1})"), io).ok());
    std::vector<std::string> strings;
    for (int i = 0; i < kDocs; ++i) {
      strings.push_back(RandomString(rng));
      BsonBuilder b;
      b.AppendInt32("_id", i).AppendString("s", strings.back());
      ASSERT_TRUE(c.InsertOne(std::move(b).Build()).ok());
    }
    for (int q = 0; q < 12; ++q) {
      const std::string probe = q % 3 == 0 ? strings[rng() % kDocs] : RandomString(rng);
      const std::string other = strings[rng() % kDocs];
      struct Case {
        const char* op;
        std::function<bool(const std::string&)> truth;
      };
      auto cmp = [&](const std::string& s) { return collator->CompareStrings(s, probe); };
      const std::vector<Case> cases = {
          {"$eq", [&](const std::string& s) { return cmp(s) == 0; }},
          {"$lt", [&](const std::string& s) { return cmp(s) < 0; }},
          {"$gte", [&](const std::string& s) { return cmp(s) >= 0; }},
          {"$in", [&](const std::string& s) {
             return cmp(s) == 0 || collator->CompareStrings(s, other) == 0;
           }},
      };
      for (const Case& k : cases) {
        SCOPED_TRACE(std::string(k.op) + " " + probe);
        BsonBuilder fb;
        fb.OpenDocument("s");
        if (std::string_view(k.op) == "$in") {
          fb.OpenArray("$in").AppendString("", probe).AppendString("", other).Close();
        } else {
          fb.AppendString(k.op, probe);
        }
        fb.Close();
        Document filter = std::move(fb).Build();
        FindOptions fo;
        fo.collation = collation;
        fo.sort = Json(R"({"s": 1})");
        // Through the index: explain says so.
        auto plan = c.ExplainFind(filter, fo, ExplainVerbosity::kQueryPlanner);
        ASSERT_TRUE(plan.ok()) << plan.status();
        EXPECT_THAT(ToJson(*plan), HasSubstr("\"indexName\": \"s_1\""));
        EXPECT_THAT(ToJson(plan->Get("queryPlanner").Document().Get("winningPlan").Document()),
                    ::testing::Not(HasSubstr("\"stage\": \"SORT\"")));
        auto cursor = c.Find(filter, fo);
        ASSERT_TRUE(cursor.ok()) << cursor.status();
        std::set<int> got;
        std::vector<std::string> order;
        while (cursor->Next()) {
          got.insert(cursor->document().Get("_id").Int32());
          order.emplace_back(cursor->document().Get("s").String());
        }
        ASSERT_TRUE(cursor->status().ok()) << cursor->status();
        std::set<int> want;
        for (int i = 0; i < kDocs; ++i)
          if (k.truth(strings[i])) want.insert(i);
        EXPECT_EQ(got, want);
        for (size_t i = 1; i < order.size(); ++i) {
          EXPECT_LE(collator->CompareStrings(order[i - 1], order[i]), 0)
              << order[i - 1] << " before " << order[i];
        }
        // The simple collation may not use this index for strings; a
        // collection scan with its binary comparison answers instead.
        FindOptions simple;
        auto simple_plan = c.ExplainFind(filter, simple, ExplainVerbosity::kQueryPlanner);
        ASSERT_TRUE(simple_plan.ok());
        EXPECT_THAT(ToJson(*simple_plan), ::testing::Not(HasSubstr("\"indexName\": \"s_1\"")));
      }
    }
  }
}

}  // namespace
}  // namespace rockdoc::test

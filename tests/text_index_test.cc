// Text indexes and $text (issue 39): the tokenizer, Snowball stemmers and
// stop words (index/fts.h), the index kind through the library (listIndexes'
// shape, MongoDB's refusals), the MongoDB manual's $text examples as a corpus
// (tests/data/manual_text_examples.json: the articles collection of the
// $text reference page, each query's documents and scores as the manual
// shows them), explain's TEXT_MATCH / TEXT_OR / IXSCAN shape, and a property:
// every $text query answers exactly what a brute-force scan with the same
// tokenizer answers, with the same scores.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "index/fts.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fts = internal::fts;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Document Owned(DocumentView v) { return Document::AdoptValidated(std::string(v.bytes())); }

TEST(FtsTest, TokenizerFoldsCaseAndDiacriticsAndSplitsOnPunctuation) {
  EXPECT_THAT(fts::Tokenize("Café Con-Leche, CRÈME brûlée!", "english"),
              ElementsAre("cafe", "con", "leche", "creme", "brulee"));
  EXPECT_THAT(fts::Tokenize("Café", "english", {.case_sensitive = true}), ElementsAre("Cafe"));
  EXPECT_THAT(fts::Tokenize("Café", "english", {.diacritic_sensitive = true}),
              ElementsAre("café"));
  // A combining mark is folded away; Cyrillic is case folded.
  EXPECT_THAT(fts::Tokenize("Сы\u0301рники", "russian"), ElementsAre("сырники"));
  EXPECT_TRUE(fts::Tokenize(" ... --- ", "english").empty());
}

TEST(FtsTest, SnowballStemsAndStopWordsPerLanguage) {
  EXPECT_EQ(fts::Stem("english", "baking"), "bake");
  EXPECT_EQ(fts::Stem("english", "shopping"), "shop");
  EXPECT_EQ(fts::Stem("spanish", "leches"), "lech");
  EXPECT_EQ(fts::Stem("none", "baking"), "baking");
  EXPECT_TRUE(fts::IsStopWord("english", "the"));
  EXPECT_TRUE(fts::IsStopWord("english", "The"));
  EXPECT_FALSE(fts::IsStopWord("english", "coffee"));
  EXPECT_TRUE(fts::IsStopWord("spanish", "con"));
  EXPECT_FALSE(fts::IsStopWord("none", "the"));
  EXPECT_EQ(fts::CanonicalLanguage("es"), "spanish");
  EXPECT_EQ(fts::CanonicalLanguage("none"), "none");
  EXPECT_EQ(fts::CanonicalLanguage("klingon"), std::nullopt);
}

TEST(FtsTest, ScoresFollowMongoDBsFormula) {
  std::map<std::string, double> scores;
  // Two tokens (the stop word "a" does not count): 1 * (0.5 * 1/2 + 0.5).
  fts::ScoreString("Baking a cake", "english", 1, &scores);
  EXPECT_DOUBLE_EQ(scores["cake"], 0.75);
  EXPECT_DOUBLE_EQ(scores["bake"], 0.75);
  scores.clear();
  // A repeated term: frequency 1 + 1/2, coefficient 0.5 * 2/3 + 0.5, weight 10.
  fts::ScoreString("coffee coffee tea", "english", 10, &scores);
  EXPECT_DOUBLE_EQ(scores["coffe"], 10 * 1.5 * (0.5 * 2 / 3 + 0.5));
}

TEST(FtsTest, SearchStringsParseIntoTermsNegationsAndPhrases) {
  fts::TextQuery q = fts::ParseTextQuery("coffee -shop \"cafe con leche\" -\"ice cream\" the",
                                         "english", {});
  EXPECT_EQ(q.terms, (std::set<std::string>{"coffe", "cafe", "con", "lech"}));
  EXPECT_EQ(q.negated_terms, (std::set<std::string>{"shop"}));
  EXPECT_THAT(q.phrases, ElementsAre("cafe con leche"));
  EXPECT_THAT(q.negated_phrases, ElementsAre("ice cream"));
  // A hyphen inside a word is a delimiter, not a negation.
  q = fts::ParseTextQuery("pre-market", "english", {});
  EXPECT_EQ(q.terms, (std::set<std::string>{"pre", "market"}));
  EXPECT_TRUE(q.negated_terms.empty());
}

const char* const kArticles = R"([
  {"_id": 1, "subject": "coffee", "author": "xyz", "views": 50},
  {"_id": 2, "subject": "Coffee Shopping", "author": "efg", "views": 5},
  {"_id": 3, "subject": "Baking a cake", "author": "abc", "views": 90},
  {"_id": 4, "subject": "baking", "author": "xyz", "views": 100},
  {"_id": 5, "subject": "Café Con Leche", "author": "abc", "views": 200},
  {"_id": 6, "subject": "Сырники", "author": "jkl", "views": 80},
  {"_id": 7, "subject": "coffee and cream", "author": "efg", "views": 10},
  {"_id": 8, "subject": "Cafe con Leche", "author": "xyz", "views": 10}
])";

class TextIndexTest : public test::ClientTest {
 protected:
  Collection Articles() {
    Collection c = db().GetCollection("articles");
    auto r = c.InsertMany(test::JsonArray(kArticles));
    EXPECT_TRUE(r.ok()) << r.status();
    auto name = c.CreateIndex(Json(R"({"subject": "text"})"));
    EXPECT_TRUE(name.ok()) << name.status();
    return c;
  }
  static StatusOr<std::vector<Document>> Run(const Collection& c, const Document& filter,
                                             FindOptions options = {}) {
    ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, c.Find(filter, options));
    return cursor.ToVector();
  }
};

TEST_F(TextIndexTest, ListIndexesShowsMongoDBsShape) {
  Collection c = Articles();
  IndexOptions options;
  auto blog = db().GetCollection("blog");
  ASSERT_TRUE(blog.InsertOne(Json(R"({"_id": 1, "content": "x"})")).ok());
  options.weights = Json(R"({"content": 10, "keywords": 5})");
  options.name = "TextIndex";
  options.default_language = "es";
  auto name = blog.CreateIndex(Json(R"({"content": "text", "keywords": "text", "about": "text"})"),
                               options);
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "TextIndex");
  auto specs = blog.ListIndexes();
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ(ToJson((*specs)[1], JsonFormat::kRelaxed),
            ToJson(Json(R"({"v": 2, "key": {"_fts": "text", "_ftsx": 1}, "name": "TextIndex",
                "weights": {"about": 1, "content": 10, "keywords": 5},
                "default_language": "es", "language_override": "language",
                "textIndexVersion": 3})"),
                   JsonFormat::kRelaxed));
  specs = c.ListIndexes();
  ASSERT_TRUE(specs.ok());
  EXPECT_EQ((*specs)[1].Get("name").String(), "subject_text");
  // The catalog form survives a restart.
  Open();
  specs = db().GetCollection("blog").ListIndexes();
  ASSERT_TRUE(specs.ok()) << specs.status();
  EXPECT_EQ((*specs)[1].Get("weights").Document().Get("content").Int32(), 10);
  auto found = Run(db().GetCollection("blog"), Json(R"({"$text": {"$search": "x"}})"));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->size(), 1u);
}

TEST_F(TextIndexTest, RefusalsCarryMongoDBsCodes) {
  Collection c = Articles();
  // A second text index: the same kept key pattern with other options.
  auto second = c.CreateIndex(Json(R"({"author": "text"})"));
  EXPECT_EQ(second.status().code(), ErrorCode::kIndexOptionsConflict) << second.status();
  auto compound = c.CreateIndex(Json(R"({"views": 1, "author": "text"})"));
  EXPECT_EQ(compound.status().code(), ErrorCode::kIndexOptionsConflict) << compound.status();
  EXPECT_THAT(std::string(compound.status().message()),
              HasSubstr("only one text index per collection allowed"));
  // The same index again is fine (nothing to do).
  EXPECT_TRUE(c.CreateIndex(Json(R"({"subject": "text"})")).ok());
  Collection other = db().GetCollection("other");
  ASSERT_TRUE(other.InsertOne(Json(R"({"_id": 1, "a": "x"})")).ok());
  IndexOptions bad_version;
  bad_version.text_index_version = 2;
  EXPECT_EQ(other.CreateIndex(Json(R"({"a": "text"})"), bad_version).status().code(),
            ErrorCode::kNotImplemented);
  bad_version.text_index_version = 7;
  EXPECT_EQ(static_cast<int>(other.CreateIndex(Json(R"({"a": "text"})"), bad_version).status().code()),
            17364);
  IndexOptions bad_language;
  bad_language.default_language = "klingon";
  EXPECT_EQ(other.CreateIndex(Json(R"({"a": "text"})"), bad_language).status().code(),
            ErrorCode::kBadValue);
  IndexOptions bad_weight;
  bad_weight.weights = Json(R"({"a": 100000})");
  EXPECT_EQ(other.CreateIndex(Json(R"({"a": "text"})"), bad_weight).status().code(),
            ErrorCode::kCannotCreateIndex);
  IndexOptions unique;
  unique.unique = true;
  EXPECT_EQ(other.CreateIndex(Json(R"({"a": "text"})"), unique).status().code(),
            ErrorCode::kCannotCreateIndex);
  // $text without a text index, and misuse of $text and textScore.
  auto no_index = Run(other, Json(R"({"$text": {"$search": "x"}})"));
  EXPECT_EQ(no_index.status().code(), ErrorCode::kIndexNotFound);
  EXPECT_EQ(no_index.status().message(), "text index required for $text query");
  EXPECT_EQ(Run(c, Json(R"({"$or": [{"$text": {"$search": "x"}}, {"a": 1}]})")).status().code(),
            ErrorCode::kBadValue);
  EXPECT_EQ(Run(c, Json(R"({"$text": {"$search": "x"}, "$and": [{"$text": {"$search": "y"}}]})"))
                .status()
                .code(),
            ErrorCode::kBadValue);
  EXPECT_EQ(Run(c, Json(R"({"a": {"$elemMatch": {"$text": {"$search": "x"}}}})")).status().code(),
            ErrorCode::kBadValue);
  EXPECT_EQ(Run(c, Json(R"({"$text": {"$search": 1}})")).status().code(), ErrorCode::kTypeMismatch);
  EXPECT_EQ(Run(c, Json(R"({"$text": {"$search": "x", "$bogus": 1}})")).status().code(),
            ErrorCode::kBadValue);
  EXPECT_EQ(Run(c, Json(R"({"$text": {"$search": "x", "$language": "klingon"}})")).status().code(),
            ErrorCode::kBadValue);
  FindOptions score;
  score.projection = Json(R"({"score": {"$meta": "textScore"}})");
  EXPECT_EQ(static_cast<int>(Run(c, Json("{}"), score).status().code()), 40218);
  FindOptions sort;
  sort.sort = Json(R"({"score": {"$meta": "textScore"}})");
  EXPECT_EQ(static_cast<int>(Run(c, Json(R"({"a": 1})"), sort).status().code()), 40218);
  FindOptions collated;
  collated.collation = Json(R"({"locale": "fr"})");
  EXPECT_EQ(Run(c, Json(R"({"$text": {"$search": "x"}})"), collated).status().code(),
            ErrorCode::kBadValue);
  // A document naming a language MongoDB lacks is refused on insert.
  auto klingon = c.InsertOne(Json(R"({"_id": 99, "subject": "x", "language": "klingon"})"));
  EXPECT_EQ(static_cast<int>(klingon.status().code()), 17262) << klingon.status();
}

// One case of the corpus: "" when it passed.
std::string RunCorpusCase(const Collection& c, DocumentView kase) {
  FindOptions options;
  if (Element p = kase.Get("projection"); p.ok()) options.projection = Owned(p.Document());
  if (Element s = kase.Get("sort"); s.ok()) options.sort = Owned(s.Document());
  if (Element l = kase.Get("limit"); l.ok()) options.limit = l.Int32();
  auto cursor = c.Find(kase.Get("filter").Document(), options);
  if (!cursor.ok()) return "find: " + cursor.status().ToString();
  auto got = cursor->ToVector();
  if (!got.ok()) return "cursor: " + got.status().ToString();
  std::vector<Document> want;
  for (Element e : kase.Get("expect").Array()) want.push_back(Owned(e.Document()));
  const bool full = kase.Get("full").ok();
  std::vector<Document> shown;
  for (const Document& d : *got) {
    if (full) {
      shown.push_back(Owned(d.view()));
    } else {
      BsonBuilder b;
      b.AppendElement(d.Get("_id"));
      shown.push_back(std::move(b).Build());
    }
  }
  auto by_id = [](const Document& a, const Document& b) {
    return CompareDocuments(a.view(), b.view()) < 0;
  };
  if (kase.Get("unordered").ok()) {
    std::sort(shown.begin(), shown.end(), by_id);
    std::sort(want.begin(), want.end(), by_id);
  }
  if (kase.Get("ties").ok()) {
    // Equal scores may come in any order: order each run of ties by _id.
    auto tie_order = [](std::vector<Document>* docs) {
      std::stable_sort(docs->begin(), docs->end(), [](const Document& a, const Document& b) {
        double sa = a.Get("score").NumberAsDouble(), sb = b.Get("score").NumberAsDouble();
        if (sa != sb) return sa > sb;
        return CompareValues(a.Get("_id"), b.Get("_id")) < 0;
      });
    };
    tie_order(&shown);
    tie_order(&want);
  }
  std::string got_text, want_text;
  for (const Document& d : shown) got_text += ToJson(d) + " ";
  for (const Document& d : want) want_text += ToJson(d) + " ";
  if (shown.size() != want.size()) return "got " + got_text + "\nwant " + want_text;
  for (size_t i = 0; i < shown.size(); ++i) {
    if (CompareDocuments(shown[i].view(), want[i].view()) != 0) {
      return "got " + got_text + "\nwant " + want_text;
    }
  }
  return "";
}

TEST_F(TextIndexTest, ManualExamplesGiveTheManualsDocumentsAndScores) {
  Collection c = Articles();
  const std::string path = test::TestsSourceDir() + "/data/manual_text_examples.json";
  StatusOr<Document> corpus = FromJson("{\"cases\": " + ReadFile(path) + "}");
  ASSERT_TRUE(corpus.ok()) << path << ": " << corpus.status();
  int cases = 0;
  for (Element e : corpus->Get("cases").Array()) {
    ++cases;
    EXPECT_EQ(RunCorpusCase(c, e.Document()), "") << e.Document().Get("name").String();
  }
  EXPECT_GE(cases, 14);
}

TEST_F(TextIndexTest, ExplainShowsTextMatchOverTextOrOverIxscans) {
  Collection c = Articles();
  auto explain = c.ExplainFind(Json(R"({"$text": {"$search": "coffee -shop cake"}, "views": {"$gt": 5}})"),
                               FindOptions(), ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(explain.ok()) << explain.status();
  DocumentView plan = explain->Get("queryPlanner").Document().Get("winningPlan").Document();
  EXPECT_EQ(plan.Get("stage").String(), "TEXT_MATCH");
  EXPECT_EQ(plan.Get("indexName").String(), "subject_text");
  EXPECT_EQ(plan.Get("textIndexVersion").Int32(), 3);
  EXPECT_EQ(ToJson(plan.Get("parsedTextQuery").Document()),
            ToJson(Json(R"({"terms": ["cake", "coffe"], "negatedTerms": ["shop"], "phrases": [],
                            "negatedPhrases": []})")));
  DocumentView text_or = plan.Get("inputStage").Document();
  EXPECT_EQ(text_or.Get("stage").String(), "TEXT_OR");
  EXPECT_TRUE(text_or.Get("filter").ok());
  int scans = 0;
  for (Element s : text_or.Get("inputStages").Array()) {
    EXPECT_EQ(s.Document().Get("stage").String(), "IXSCAN");
    EXPECT_EQ(ToJson(s.Document().Get("keyPattern").Document()),
              ToJson(Json(R"({"_fts": "text", "_ftsx": 1})")));
    ++scans;
  }
  EXPECT_EQ(scans, 2);
  DocumentView stats = explain->Get("executionStats").Document();
  EXPECT_EQ(stats.Get("nReturned").NumberAsDouble(), 3);  // 1, 3, 7 (2 says "shop"; 5 views)
}

// Brute force: the documents a $text query matches and their scores,
// computed from the documents alone with the tokenizer (no index).
std::map<int, double> BruteForce(const std::vector<Document>& docs, const fts::TextQuery& q,
                                 const std::string& field) {
  std::map<int, double> out;
  for (const Document& d : docs) {
    Element s = d.Get(field);
    if (!s.IsString()) continue;
    std::map<std::string, double> scores;
    fts::ScoreString(s.String(), "english", 1, &scores);
    double score = 0;
    bool any = false;
    for (const std::string& t : q.terms) {
      if (scores.count(t)) {
        any = true;
        score += scores[t];
      }
    }
    if (!any) continue;
    bool negated = false;
    for (const std::string& t : fts::Terms(s.String(), "english")) negated |= q.negated_terms.count(t) > 0;
    if (negated) continue;
    const std::string folded = fts::Fold(s.String(), {});
    bool phrases = true;
    for (const std::string& p : q.phrases) phrases &= folded.find(fts::Fold(p, {})) != std::string::npos;
    if (!phrases) continue;
    out[d.Get("_id").Int32()] = score;
  }
  return out;
}

TEST_F(TextIndexTest, EveryQueryAnswersWhatABruteForceScanAnswers) {
  const std::vector<std::string> words = {"coffee", "Coffees", "shop", "shopping", "cake", "the",
                                          "baking", "bakes", "café", "cafe", "leche", "and",
                                          "cream", "tea", "TEA", "a"};
  std::mt19937 rng(39);
  std::vector<Document> docs;
  for (int i = 0; i < 300; ++i) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 8);
    for (int w = 0; w < n; ++w) text += words[rng() % words.size()] + (rng() % 4 == 0 ? ", " : " ");
    BsonBuilder b;
    b.AppendInt32("_id", i);
    b.AppendString("body", text);
    b.AppendInt32("n", i % 7);
    docs.push_back(std::move(b).Build());
  }
  Collection c = db().GetCollection("property");
  ASSERT_TRUE(c.InsertMany(docs).ok());
  ASSERT_TRUE(c.CreateIndex(Json(R"({"body": "text"})")).ok());
  for (int query = 0; query < 60; ++query) {
    std::string search;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int w = 0; w < n; ++w) {
      const int kind = static_cast<int>(rng() % 6);
      const std::string& word = words[rng() % words.size()];
      if (kind == 0) {
        search += "-" + word + " ";
      } else if (kind == 1) {
        search += "\"" + word + " " + words[rng() % words.size()] + "\" ";
      } else {
        search += word + " ";
      }
    }
    BsonBuilder f;
    f.OpenDocument("$text").AppendString("$search", search).Close();
    FindOptions options;
    options.projection = Json(R"({"score": {"$meta": "textScore"}})");
    auto got = Run(c, std::move(f).Build(), options);
    ASSERT_TRUE(got.ok()) << got.status();
    std::map<int, double> from_index;
    for (const Document& d : *got) from_index[d.Get("_id").Int32()] = d.Get("score").Double();
    const std::map<int, double> want =
        BruteForce(docs, fts::ParseTextQuery(search, "english", {}), "body");
    ASSERT_EQ(from_index.size(), want.size()) << search;
    for (const auto& [id, score] : want) {
      ASSERT_TRUE(from_index.count(id)) << search << ": " << id;
      EXPECT_NEAR(from_index[id], score, 1e-12) << search << ": " << id;
    }
  }
}

TEST_F(TextIndexTest, CompoundIndexNeedsItsEqualityPrefix) {
  Collection c = db().GetCollection("compound");
  ASSERT_TRUE(c.InsertMany(test::JsonArray(R"([
    {"_id": 1, "shop": "a", "body": "coffee beans"},
    {"_id": 2, "shop": "b", "body": "coffee cups"},
    {"_id": 3, "shop": "a", "body": "tea"}])")).ok());
  ASSERT_TRUE(c.CreateIndex(Json(R"({"shop": 1, "body": "text"})")).ok());
  auto found = Run(c, Json(R"({"shop": "a", "$text": {"$search": "coffee"}})"));
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].Get("_id").Int32(), 1);
  auto no_prefix = Run(c, Json(R"({"$text": {"$search": "coffee"}})"));
  EXPECT_EQ(no_prefix.status().code(), ErrorCode::kBadValue);
  EXPECT_THAT(std::string(no_prefix.status().message()), HasSubstr("equality predicates"));
  // The text index answers no ordinary query: a collection scan does.
  auto plain = Run(c, Json(R"({"shop": "a"})"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->size(), 2u);
  auto arrays = c.InsertOne(Json(R"({"_id": 4, "shop": ["a", "b"], "body": "x"})"));
  EXPECT_EQ(static_cast<int>(arrays.status().code()), 16675);
}

TEST_F(TextIndexTest, WeightsWildcardAndLanguageOverride) {
  Collection c = db().GetCollection("weights");
  ASSERT_TRUE(c.InsertMany(test::JsonArray(R"([
    {"_id": 1, "title": "coffee", "body": "tea"},
    {"_id": 2, "title": "tea", "body": "coffee", "nested": {"deep": ["coffee"]}},
    {"_id": 3, "title": "leches", "language": "spanish"}])")).ok());
  IndexOptions options;
  options.weights = Json(R"({"title": 10})");
  ASSERT_TRUE(c.CreateIndex(Json(R"({"$**": "text"})"), options).ok());
  FindOptions find;
  find.projection = Json(R"({"score": {"$meta": "textScore"}, "_id": 1})");
  find.sort = Json(R"({"score": {"$meta": "textScore"}})");
  auto got = Run(c, Json(R"({"$text": {"$search": "coffee"}})"), find);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ(ToJson((*got)[0]), ToJson(Json(R"({"_id": 1, "score": 10.0})")));
  EXPECT_EQ(ToJson((*got)[1]), ToJson(Json(R"({"_id": 2, "score": 2.0})")));
  // Stemmed in the document's own language (Spanish "leches" -> "lech").
  auto spanish = Run(c, Json(R"({"$text": {"$search": "leche", "$language": "es"}})"));
  ASSERT_TRUE(spanish.ok()) << spanish.status();
  ASSERT_EQ(spanish->size(), 1u);
  EXPECT_EQ((*spanish)[0].Get("_id").Int32(), 3);
}

TEST_F(TextIndexTest, AggregationTakesTextInItsFirstMatchOnly) {
  Collection c = Articles();
  const Document first = Json(R"({"p": [{"$match": {"$text": {"$search": "coffee"}}},
                                        {"$sort": {"_id": 1}}, {"$project": {"_id": 1}}]})");
  auto cursor = c.Aggregate(first.Get("p").Array());
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  auto got = cursor->ToVector();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[2].Get("_id").Int32(), 7);
  const Document late_stages = Json(R"({"p": [{"$sort": {"_id": 1}},
                                              {"$match": {"$text": {"$search": "coffee"}}}]})");
  auto late = c.Aggregate(late_stages.Get("p").Array());
  Status s = late.ok() ? late->ToVector().status() : late.status();
  EXPECT_EQ(static_cast<int>(s.code()), 17313) << s;
}

// $out replaces a collection and keeps its indexes: the text index comes
// back with its weights (IndexDescriptor::Options through the catalog form).
TEST_F(TextIndexTest, OutKeepsTheTargetsTextIndex) {
  Collection c = Articles();
  Collection target = db().GetCollection("target");
  ASSERT_TRUE(target.InsertOne(Json(R"({"_id": 100, "subject": "old"})")).ok());
  IndexOptions weighted;
  weighted.weights = Json(R"({"subject": 4})");
  ASSERT_TRUE(target.CreateIndex(Json(R"({"subject": "text"})"), weighted).ok());
  const Document out = Json(R"({"p": [{"$match": {"_id": {"$lte": 3}}}, {"$out": "target"}]})");
  auto cursor = c.Aggregate(out.Get("p").Array());
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  ASSERT_TRUE(cursor->ToVector().ok());
  FindOptions score;
  score.projection = Json(R"({"score": {"$meta": "textScore"}})");
  auto got = Run(target, Json(R"({"$text": {"$search": "cake"}})"), score);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_DOUBLE_EQ((*got)[0].Get("score").Double(), 4 * 0.75);
}

}  // namespace
}  // namespace rockdoc

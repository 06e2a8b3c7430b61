// The MongoDB manual's documented examples, as data: for every stage,
// accumulator and expression family of issue 14, the input documents, the
// pipeline and the output the manual shows (tests/data/manual_examples_*.json).
// Each case runs in a fresh database; its output must equal the expected
// documents (in order, unless the case says "unordered"), field by field, with
// numbers compared by value as MongoDB compares them (a case that is about a
// number's type checks it with $type). A case's "covers" names what it
// exercises; the test fails unless every required name is covered by a
// passing case, and prints how many cases ran.
//
// Case fields: name, covers, docs ({collection: [documents]}), indexes
// ({collection: [key patterns]}), collection (default "c"), database (true:
// a pipeline without a collection, $documents first), let, pipeline, expect,
// unordered, then ({collection, expect}: the collection's documents after
// the pipeline, by _id, for $out and $merge).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

// What issue 14 lists: every stage, accumulator and expression family
// (window functions as "window:<name>").
const char* const kRequired[] = {
    // Stages.
    "$match", "$project", "$addFields", "$set", "$unset", "$replaceRoot", "$replaceWith", "$group",
    "$sort", "$limit", "$skip", "$unwind", "$lookup", "$graphLookup", "$facet", "$bucket",
    "$bucketAuto", "$sortByCount", "$count", "$sample", "$unionWith", "$out", "$merge", "$redact",
    "$setWindowFields", "$densify", "$fill", "$documents", "$indexStats", "$collStats",
    // Window functions and windows.
    "window:$sum", "window:$avg", "window:$min", "window:$max", "window:$count", "window:$first",
    "window:$last", "window:$push", "window:$rank", "window:$denseRank", "window:$documentNumber",
    "window:$shift", "window:documents", "window:range",
    // Accumulators.
    "$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet", "$mergeObjects",
    "$stdDevPop", "$stdDevSamp", "$top", "$bottom", "$topN", "$bottomN", "$firstN", "$lastN",
    "$maxN", "$minN",
    // Expression families, and the operators the issue names.
    "arithmetic", "comparison", "boolean", "conditional", "string", "array", "set", "date", "type",
    "object", "variables", "literal", "$cond", "$ifNull", "$switch", "$regexMatch", "$regexFind",
    "$regexFindAll", "$substrCP", "$substrBytes", "$strLenCP", "$strLenBytes", "$filter", "$map",
    "$reduce", "$slice", "$concatArrays", "$arrayElemAt", "$indexOfArray", "$range",
    "$reverseArray", "$zip", "$sortArray", "$in", "$size", "$isArray", "$dateToString",
    "$dateFromString", "$dateTrunc", "$dateAdd", "$dateSubtract", "$dateDiff", "$dateToParts",
    "$dateFromParts", "$year", "$convert", "$toInt", "$toLong", "$toDouble", "$toDecimal",
    "$toString", "$toBool", "$toDate", "$toObjectId", "$isNumber", "$type", "$objectToArray",
    "$arrayToObject", "$getField", "$setField", "$let", "$$ROOT", "$$CURRENT", "$$REMOVE", "$$NOW",
    "let", "$literal", "$expr"};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Document Owned(DocumentView v) { return Document::AdoptValidated(std::string(v.bytes())); }

std::string Shown(const std::vector<Document>& docs) {
  std::string out = "[";
  for (const Document& d : docs) out += (out.size() > 1 ? ", " : "") + ToJson(d);
  return out + "]";
}

bool SameDocuments(std::vector<Document> got, std::vector<Document> want, bool unordered) {
  if (got.size() != want.size()) return false;
  auto less = [](const Document& a, const Document& b) { return CompareDocuments(a.view(), b.view()) < 0; };
  if (unordered) {
    std::sort(got.begin(), got.end(), less);
    std::sort(want.begin(), want.end(), less);
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (CompareDocuments(got[i].view(), want[i].view()) != 0) return false;
  }
  return true;
}

std::vector<Document> ArrayOf(const Element& e) {
  std::vector<Document> out;
  if (e.type() != BsonType::kArray) return out;
  for (const Element& d : e.Array()) out.push_back(Owned(d.Document()));
  return out;
}

class ManualExamplesTest : public test::ClientTest {
 protected:
  // Runs one case; "" when it passed, else what went wrong.
  std::string RunCase(DocumentView c) {
    Database db = client_->GetDatabase("manual");
    if (Status s = db.Drop(); !s.ok()) return "drop: " + s.ToString();
    if (Element docs = c.Get("docs"); docs.ok()) {
      for (const Element& coll : docs.Document()) {
        auto r = db.GetCollection(coll.key()).InsertMany(ArrayOf(coll));
        if (!r.ok()) return "insert: " + r.status().ToString();
      }
    }
    if (Element indexes = c.Get("indexes"); indexes.ok()) {
      for (const Element& coll : indexes.Document()) {
        for (const Document& key : ArrayOf(coll)) {
          auto r = db.GetCollection(coll.key()).CreateIndex(key);
          if (!r.ok()) return "index: " + r.status().ToString();
        }
      }
    }
    AggregateOptions options;
    if (Element let = c.Get("let"); let.ok()) options.let = Owned(let.Document());
    const DocumentView pipeline = c.Get("pipeline").Array();
    const std::string coll = c.Get("collection").ok() ? std::string(c.Get("collection").String()) : "c";
    StatusOr<Cursor> cursor = c.Get("database").ok() ? db.Aggregate(pipeline, options)
                                                     : db.GetCollection(coll).Aggregate(pipeline, options);
    if (!cursor.ok()) return "aggregate: " + cursor.status().ToString();
    auto got = cursor->ToVector();
    if (!got.ok()) return "cursor: " + got.status().ToString();
    const std::vector<Document> want = ArrayOf(c.Get("expect"));
    if (!SameDocuments(*got, want, c.Get("unordered").ok())) {
      return "got " + Shown(*got) + "\nwant " + Shown(want);
    }
    if (Element then = c.Get("then"); then.ok()) {
      FindOptions by_id;
      by_id.sort = test::Json(R"({"_id": 1})");
      auto written = db.GetCollection(then.Document().Get("collection").String()).Find(Document(), by_id);
      if (!written.ok()) return "then: " + written.status().ToString();
      auto docs = written->ToVector();
      const std::vector<Document> want_then = ArrayOf(then.Document().Get("expect"));
      if (!docs.ok() || !SameDocuments(*docs, want_then, false)) {
        return "then got " + (docs.ok() ? Shown(*docs) : docs.status().ToString()) + "\nwant " +
               Shown(want_then);
      }
    }
    return "";
  }
};

TEST_F(ManualExamplesTest, EveryCaseGivesTheManualsOutput) {
  std::set<std::string> covered;
  int cases = 0, passed = 0;
  for (const char* file : {"stages", "accumulators", "expressions"}) {
    const std::string path =
        rockdoc::test::TestsSourceDir() + "/data/manual_examples_" + file + ".json";
    const std::string text = ReadFile(path);
    ASSERT_FALSE(text.empty()) << path;
    StatusOr<Document> corpus = FromJson("{\"cases\": " + text + "}");
    ASSERT_TRUE(corpus.ok()) << path << ": " << corpus.status();
    for (const Element& c : corpus->Get("cases").Array()) {
      const DocumentView kase = c.Document();
      ++cases;
      const std::string failure = RunCase(kase);
      EXPECT_EQ(failure, "") << file << ": " << kase.Get("name").String();
      if (!failure.empty()) continue;
      ++passed;
      for (const Element& name : kase.Get("covers").Array()) covered.insert(std::string(name.String()));
    }
  }
  for (const char* name : kRequired) {
    EXPECT_TRUE(covered.count(name)) << name << " is covered by no passing manual example";
  }
  std::cout << "manual examples: " << passed << " of " << cases << " cases passed, covering "
            << covered.size() << " names (" << std::size(kRequired) << " required)\n";
  RecordProperty("cases", cases);
  EXPECT_GT(cases, 60);
}

}  // namespace
}  // namespace rockdoc

// Tests of the rockdoc shell (src/shell/), driven in-process: scripts run
// through rockdoc::shell::Shell and the tests compare what it prints, what
// it returns, and what landed in the database (read back through the public
// C++ API, an independent view of the data).
#include "shell/shell.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <atomic>
#include <thread>

#include "common/deadline.h"
#include "rockdoc/c.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc::shell {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class ShellTest : public ::testing::Test {
 protected:
  void SetUp() override { OpenShell(/*json=*/false); }

  void OpenShell(bool json) {
    shell_.reset();
    ShellOptions options;
    options.db_path = dir_.Sub("db");
    options.out = &out_;
    options.err = &err_;
    options.json = json;
    auto shell = Shell::Open(options);
    ASSERT_TRUE(shell.ok()) << shell.status();
    shell_ = std::move(shell).value();
  }

  // Runs `code` as the REPL runs an entry (its value is displayed) and
  // returns what was printed on the output stream.
  std::string Show(std::string_view code) {
    out_.str("");
    err_.str("");
    ok_ = shell_->Evaluate(code, "<test>", /*show_result=*/true);
    return out_.str();
  }
  // Runs `code` as a script (values not displayed); returns the output.
  std::string Run(std::string_view code) {
    out_.str("");
    err_.str("");
    ok_ = shell_->Evaluate(code, "<test>", /*show_result=*/false);
    return out_.str();
  }
  // Runs `code`, expecting it to succeed.
  std::string Ok(std::string_view code) {
    std::string out = Run(code);
    EXPECT_TRUE(ok_) << code << "\nerror: " << err_.str();
    return out;
  }
  std::string err() const { return err_.str(); }

  Collection Coll(const std::string& name, const std::string& db = "test") {
    return shell_->client().GetDatabase(db).GetCollection(name);
  }
  // The stored document with _id `id` (an int), in canonical Extended JSON.
  std::string Stored(const std::string& coll, int id) {
    auto doc = Coll(coll).FindOne(test::Json("{\"_id\": " + std::to_string(id) + "}"));
    EXPECT_TRUE(doc.ok()) << doc.status();
    if (!doc.ok() || !doc->has_value()) return "<missing>";
    return ToJson(**doc, JsonFormat::kCanonical);
  }

  test::ScratchDir dir_;
  std::ostringstream out_;
  std::ostringstream err_;
  std::unique_ptr<Shell> shell_;
  bool ok_ = false;
};

// ---------------------------------------------------------------- start-up

TEST_F(ShellTest, StartsInTestDatabase) {
  EXPECT_EQ(Show("db"), "test\n");
  EXPECT_EQ(shell_->Prompt(), "test> ");
  EXPECT_EQ(Show("db.getName()"), "test\n");
}

TEST_F(ShellTest, SecondShellOnSameDirectoryIsRefused) {
  ShellOptions options;
  options.db_path = dir_.Sub("db");
  auto second = Shell::Open(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kDBPathInUse);
}

TEST_F(ShellTest, ShellsOneAfterAnotherReopenTheData) {
  Ok("db.c.insertOne({_id: 1, a: 'kept'})");
  OpenShell(false);  // closes the first shell, opens a new context
  EXPECT_EQ(Show("db.c.findOne()"), "{ _id: 1, a: 'kept' }\n");
}

// db.advise() / db.c.advise(): the schema advisor's report, shown as its
// text, with the JSON form's fields; options decoded from a table.
TEST_F(ShellTest, AdvisePrintsTheAdvisorsReport) {
  Ok("db.posts.insertOne({_id: 1, comments: Array.from({length: 300}, (_, i) => ({i}))});"
     "db.other.insertOne({_id: 1, tags: ['a']})");
  std::string shown = Show("db.advise()");
  EXPECT_NE(shown.find("[warning] large-array in test.posts"), std::string::npos) << shown;
  EXPECT_NE(shown.find("Examined 1 database(s), 2 collection(s), 2 document(s)."), std::string::npos) << shown;
  EXPECT_EQ(Show("db.advise().findings[0].evidence.max"), "Long('300')\n");
  EXPECT_EQ(Show("db.other.advise({full: true}).findings.length"), "0\n");
  EXPECT_EQ(Show("db.posts.advise({sample: 1}).documentsExamined"), "Long('1')\n");
  Run("db.advise({bogus: 1})");
  EXPECT_FALSE(ok_);
  EXPECT_NE(err().find("BSON field 'advise.bogus' is an unknown field."), std::string::npos) << err();
  Run("db.advise({unusedIndexDays: -1})");
  EXPECT_FALSE(ok_);
}

// mongosh's profiler helpers over the profile command, and rockdoc's query
// statistics helpers over $queryStats and clearQueryStats.
TEST_F(ShellTest, ProfilerAndQueryStatsHelpers) {
  EXPECT_EQ(Show("db.setProfilingLevel(2)"), "{ was: 0, slowms: 100, sampleRate: 1, ok: 1 }\n");
  EXPECT_EQ(Show("db.getProfilingStatus()"), "{ was: 2, slowms: 100, sampleRate: 1 }\n");
  EXPECT_EQ(Show("db.getProfilingLevel()"), "2\n");
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}, {_id: 3, a: 2}]);"
     "db.c.find({a: 2}).toArray(); db.c.find({a: 1}).toArray(); db.c.countDocuments({a: 2});"
     "db.d.insertOne({_id: 1}); db.d.findOne({_id: 1})");
  // test.c: the finds' shape (run twice) and the count's; test.d: its read.
  EXPECT_EQ(Show("db.c.queryStats().length"), "2\n");
  EXPECT_EQ(Show("db.queryStats().filter(s => s.key.queryShape.cmdNs.coll === 'c' && "
                 "s.key.queryShape.command === 'find').map(s => s.metrics.execCount).join()"),
            "2\n");
  EXPECT_EQ(Show("db.queryStats().filter(s => s.key.queryShape.cmdNs.coll === 'd').length"), "1\n");
  // The profiler took each read of test.c, in order, as it was sent.
  EXPECT_EQ(Show("db.system.profile.find({ns: 'test.c'}).toArray().slice(0, 3)"
                 ".map(e => e.op + ' ' + e.nreturned).join()"),
            "query 2,query 1,command 1\n");
  EXPECT_EQ(Show("db.system.profile.findOne({ns: 'test.c'}).command.filter"), "{ a: 2 }\n");
  // The settings before the call, as mongosh shows them.
  EXPECT_EQ(Show("db.setProfilingLevel(1, {slowms: 20})"), "{ was: 2, slowms: 100, sampleRate: 1, ok: 1 }\n");
  EXPECT_EQ(Show("db.getProfilingStatus()"), "{ was: 1, slowms: 20, sampleRate: 1 }\n");
  EXPECT_EQ(Show("db.setProfilingLevel(0, 50)"), "{ was: 1, slowms: 20, sampleRate: 1, ok: 1 }\n");
  EXPECT_EQ(Show("db.getProfilingStatus()"), "{ was: 0, slowms: 50, sampleRate: 1 }\n");
  Run("db.setProfilingLevel(1, {sampleRate: 0.5})");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("sampleRate' other than 1.0 is not supported by rockdoc"));
  EXPECT_EQ(Show("db.getProfilingLevel()"), "0\n");
  EXPECT_EQ(Show("db.clearQueryStats()"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.queryStats().length"), "0\n");
  // The N+1 loop as a shell script writes it: an _id read per post, while
  // the posts' cursor is open (120 posts: more than a first batch).
  Ok("db.authors.insertMany([{_id: 'ada'}, {_id: 'bob'}]);"
     "db.posts.insertMany(Array.from({length: 120}, (_, i) => ({by: i % 2 ? 'ada' : 'bob'})));"
     "db.posts.find().forEach(p => db.authors.findOne({_id: p.by}))");
  EXPECT_EQ(Show("db.queryStats().filter(s => s.key.queryShape.cmdNs.coll === 'authors')"
                 ".map(s => s.rockdoc.appJoins.count + ' after ' + Object.keys(s.rockdoc.appJoins.after)).join()"),
            "120 after posts\n");
}

// A write that raises growth warnings (GrowthStatistics) prints each on the
// error stream, one line, as mongosh prints a warning; what the write
// returns is unchanged. Every write method that can grow a document.
TEST_F(ShellTest, WritesPrintTheirGrowthWarnings) {
  const std::string kTail =
      " elements (250 or more); the schema advisor (rockdoc-advise, or db.advise() in the "
      "shell) says what to do\n";
  auto array_of = [](int n) {
    return "Array.from({length: " + std::to_string(n) + "}, (_, i) => i)";
  };
  Ok("db.c.insertOne({_id: 1, a: " + array_of(249) + "})");
  EXPECT_EQ(err(), "");
  EXPECT_EQ(Show("db.c.updateOne({_id: 1}, {$push: {a: 249}})"),
            "{\n  acknowledged: true,\n  insertedId: null,\n  matchedCount: 1,\n  "
            "modifiedCount: 1,\n  upsertedCount: 0\n}\n");
  EXPECT_EQ(err(), "Warning: document growth in test.c: the document {\"_id\": 1} has an array "
                   "'a' of 250" + kTail);
  Ok("db.c.insertMany([{_id: 2, t: {r: " + array_of(250) + "}}, {_id: 3, a: " + array_of(251) +
     "}])");
  EXPECT_EQ(err(),
            "Warning: document growth in test.c: the document {\"_id\": 2} has an array 't.r' "
            "of 250" + kTail +
            "Warning: document growth in test.c: the document {\"_id\": 3} has an array 'a' of "
            "251" + kTail);
  Ok("db.c.replaceOne({_id: 4}, {a: " + array_of(260) + "}, {upsert: true})");
  EXPECT_THAT(err(), StartsWith("Warning: document growth in test.c: the document {\"_id\": 4} "
                                "has an array 'a' of 260"));
  Ok("db.c.updateMany({}, {$set: {a: []}});"
     "db.c.updateMany({_id: {$in: [1, 3]}}, {$set: {a: " + array_of(300) + "}})");
  const std::string two = err();
  EXPECT_EQ(std::count(two.begin(), two.end(), '\n'), 2) << two;
  Ok("db.c.findOneAndUpdate({_id: 1}, {$push: {b: {$each: " + array_of(1000) + "}}})");
  EXPECT_THAT(err(), HasSubstr("has an array 'b' of 1000 elements (1000 or more)"));
  Ok("db.c.bulkWrite([{insertOne: {document: {_id: 9, a: " + array_of(250) + "}}}, "
     "{updateOne: {filter: {_id: 4}, update: {$push: {a: {$each: " + array_of(250) + "}}}}}])");
  EXPECT_THAT(err(), HasSubstr("the document {\"_id\": 9} has an array 'a' of 250"));
  EXPECT_THAT(err(), HasSubstr("the document {\"_id\": 4} has an array 'a' of 250"));
  // A write that crosses nothing prints nothing.
  Ok("db.c.updateOne({_id: 9}, {$push: {a: 1}}); db.c.insertOne({_id: 10})");
  EXPECT_EQ(err(), "");
}

// With statistics off (ClientOptions::collect_statistics) there are no
// growth warnings to print.
TEST_F(ShellTest, NoGrowthWarningsWithStatisticsOff) {
  shell_.reset();
  ShellOptions options;
  options.db_path = dir_.Sub("db");
  options.out = &out_;
  options.err = &err_;
  options.client.collect_statistics = false;
  auto shell = Shell::Open(options);
  ASSERT_TRUE(shell.ok()) << shell.status();
  shell_ = std::move(shell).value();
  Ok("db.c.insertOne({_id: 1, a: Array.from({length: 300}, (_, i) => i)})");
  EXPECT_EQ(err(), "");
  EXPECT_EQ(Show("db.c.stats().growthWarnings.array250"), "0\n");
}

// ---------------------------------------------------------------- values

TEST_F(ShellTest, PlainNumbersAreStoredAsMongoshStoresThem) {
  Ok("db.n.insertOne({_id: 1, i: 1, neg: -5, d: 1.5, big: 2147483648, small: -2147483648, "
     "mz: -0, inf: Infinity, e: 1e300})");
  EXPECT_EQ(
      Stored("n", 1),
      R"({"_id": {"$numberInt": "1"}, "i": {"$numberInt": "1"}, "neg": {"$numberInt": "-5"}, )"
      R"("d": {"$numberDouble": "1.5"}, "big": {"$numberDouble": "2147483648.0"}, )"
      R"("small": {"$numberInt": "-2147483648"}, "mz": {"$numberDouble": "-0.0"}, )"
      R"("inf": {"$numberDouble": "Infinity"}, "e": {"$numberDouble": "1e+300"}})");
}

TEST_F(ShellTest, WrapperTypesStoreTheirBsonTypes) {
  Ok(R"js(db.t.insertOne({_id: 1,
      oid: ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f'), date: ISODate('2024-01-02T03:04:05.678Z'),
      long: NumberLong('9007199254740993'), dec: NumberDecimal('12.50'), int: NumberInt(7),
      dbl: Double(3), bin: BinData(0, 'AQID'), uuid: UUID('00112233-4455-6677-8899-aabbccddeeff'),
      ts: Timestamp({t: 1700000000, i: 3}), min: MinKey(), max: MaxKey, re: /^a.c$/i,
      nil: null, undef: undefined, big: 5n, boxed: new String('s')}))js");
  EXPECT_EQ(
      Stored("t", 1),
      R"({"_id": {"$numberInt": "1"}, "oid": {"$oid": "5f1d7f0b9d3c2a1b2c3d4e5f"}, )"
      R"("date": {"$date": {"$numberLong": "1704164645678"}}, "long": {"$numberLong": "9007199254740993"}, )"
      R"("dec": {"$numberDecimal": "12.50"}, "int": {"$numberInt": "7"}, "dbl": {"$numberDouble": "3.0"}, )"
      R"("bin": {"$binary": {"base64": "AQID", "subType": "00"}}, )"
      R"("uuid": {"$binary": {"base64": "ABEiM0RVZneImaq7zN3u/w==", "subType": "04"}}, )"
      R"("ts": {"$timestamp": {"t": 1700000000, "i": 3}}, "min": {"$minKey": 1}, "max": {"$maxKey": 1}, )"
      R"("re": {"$regularExpression": {"pattern": "^a.c$", "options": "i"}}, "nil": null, "undef": null, )"
      R"("big": {"$numberLong": "5"}, "boxed": "s"})");
}

TEST_F(ShellTest, AFieldNamedBsontypeIsData) {
  Ok("db.o.insertOne({_id: 1, _bsontype: 'ObjectId'})");
  Ok("const d = db.o.findOne(); d._id = 2; db.o.insertOne(d)");
  EXPECT_EQ(Stored("o", 2), R"({"_id": {"$numberInt": "2"}, "_bsontype": "ObjectId"})");
}

TEST_F(ShellTest, FieldOrderIsKept) {
  Ok("db.o.insertOne({_id: 1, z: 1, a: 2, m: {y: 1, b: 2}, c: 3})");
  EXPECT_EQ(ToJson(*Coll("o").FindOne(test::Json("{}")).value(), JsonFormat::kRelaxed),
            R"({"_id": 1, "z": 1, "a": 2, "m": {"y": 1, "b": 2}, "c": 3})");
  EXPECT_EQ(Show("db.o.findOne()"), "{ _id: 1, z: 1, a: 2, m: { y: 1, b: 2 }, c: 3 }\n");
}

// What the shell's conversion must make of a document read from the engine
// and written back: the same BSON, except where mongosh's own rules change
// it (integral doubles in int32 range become int32, undefined becomes null,
// a repeated key keeps its first position and its last value, as a JS
// object does). Returns false when JavaScript cannot hold the document at
// all (a date beyond +-8.64e15 ms).
bool ExpectedAfterShell(DocumentView in, bool is_array, BsonBuilder* b) {
  std::vector<std::string> keys;
  std::vector<Element> values;
  for (const Element& e : in) {
    std::string key(e.key());
    auto it = std::find(keys.begin(), keys.end(), key);
    if (!is_array && it != keys.end()) {
      values[it - keys.begin()] = e;
    } else {
      keys.push_back(key);
      values.push_back(e);
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    const Element& e = values[i];
    const std::string& k = keys[i];
    switch (e.type()) {
      case BsonType::kDouble: {
        double d = e.Double();
        if (std::isfinite(d) && d == std::trunc(d) && d >= INT32_MIN && d <= INT32_MAX &&
            !(d == 0 && std::signbit(d))) {
          b->AppendInt32(k, static_cast<int32_t>(d));
        } else {
          b->AppendElementAs(k, e);
        }
        break;
      }
      case BsonType::kUndefined:
        b->AppendNull(k);
        break;
      case BsonType::kDateTime:
        if (std::abs(static_cast<double>(e.DateTime())) > 8.64e15) return false;
        b->AppendElementAs(k, e);
        break;
      case BsonType::kDocument:
        b->OpenDocument(k);
        if (!ExpectedAfterShell(e.Document(), false, b)) return false;
        b->Close();
        break;
      case BsonType::kArray:
        b->OpenArray(k);
        if (!ExpectedAfterShell(e.Array(), true, b)) return false;
        b->Close();
        break;
      default:
        b->AppendElementAs(k, e);
    }
  }
  return true;
}

TEST_F(ShellTest, ValuesRoundTripThroughJavaScriptWithoutLoss) {
  test::RandomDocuments random(20240607);
  std::vector<Document> expected;
  int tested = 0;
  for (int i = 0; i < 400; ++i) {
    Document doc = random.Next();
    BsonBuilder in;
    in.AppendInt32("_id", i).AppendDocument("d", doc);
    Document original = std::move(in).Build();
    BsonBuilder want;
    want.AppendInt32("_id", i).OpenDocument("d");
    if (!ExpectedAfterShell(doc, false, &want)) continue;
    want.Close();
    ASSERT_TRUE(Coll("src").InsertOne(original).ok());
    expected.push_back(std::move(want).Build());
    ++tested;
  }
  ASSERT_GT(tested, 300);
  // Every document goes BSON -> JS (find) -> BSON (insertMany).
  Ok("db.dst.insertMany(db.src.find().toArray())");
  FindOptions by_id;
  by_id.sort = test::Json(R"({"_id": 1})");
  auto cursor = Coll("dst").Find(Document(), by_id);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  auto docs = cursor->ToVector();
  ASSERT_TRUE(docs.ok());
  ASSERT_EQ(docs->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(ToJson((*docs)[i], JsonFormat::kCanonical),
              ToJson(expected[i], JsonFormat::kCanonical));
  }
}

TEST_F(ShellTest, PrintsResultsAsMongoshDoes) {
  Ok(R"js(db.t.insertOne({_id: 1,
      oid: ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f'), date: ISODate('2024-01-02T03:04:05.678Z'),
      long: NumberLong('9007199254740993'), dec: NumberDecimal('12.50'), int: NumberInt(7),
      dbl: 2.5, str: "it's", bin: BinData(0, 'AQID'), uuid: UUID('00112233-4455-6677-8899-aabbccddeeff'),
      ts: Timestamp({t: 1700000000, i: 3}), min: MinKey(), max: MaxKey(), re: /^a.c$/i,
      nil: null, t: true, arr: [1, 'two', {three: 3}], sub: {x: {y: 1}}, 'odd key': 1}))js");
  EXPECT_EQ(Show("db.t.findOne()"),
            "{\n"
            "  _id: 1,\n"
            "  oid: ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f'),\n"
            "  date: ISODate('2024-01-02T03:04:05.678Z'),\n"
            "  long: Long('9007199254740993'),\n"
            "  dec: Decimal128('12.50'),\n"
            "  int: 7,\n"
            "  dbl: 2.5,\n"
            "  str: \"it's\",\n"
            "  bin: Binary.createFromBase64('AQID', 0),\n"
            "  uuid: UUID('00112233-4455-6677-8899-aabbccddeeff'),\n"
            "  ts: Timestamp({ t: 1700000000, i: 3 }),\n"
            "  min: MinKey(),\n"
            "  max: MaxKey(),\n"
            "  re: /^a.c$/i,\n"
            "  nil: null,\n"
            "  t: true,\n"
            "  arr: [ 1, 'two', { three: 3 } ],\n"
            "  sub: { x: { y: 1 } },\n"
            "  'odd key': 1\n"
            "}\n");
  EXPECT_EQ(Show("printjsononeline({a: NumberLong(1), b: 'x'})"), "{ a: Long('1'), b: 'x' }\n");
}

TEST_F(ShellTest, ShortResultsStayOnOneLine) {
  EXPECT_EQ(Show("({a: 1, b: [1, 2], c: {d: 'x'}})"), "{ a: 1, b: [ 1, 2 ], c: { d: 'x' } }\n");
  EXPECT_EQ(Show("[]"), "[]\n");
  EXPECT_EQ(Show("({})"), "{}\n");
  // Three levels of nesting below: broken over lines even though short.
  EXPECT_EQ(Show("({a: {b: {c: {d: 1}}}})"), "{\n  a: { b: { c: { d: 1 } } }\n}\n");
}

TEST_F(ShellTest, ShortensLongArraysAndStrings) {
  std::string out = Show("Array.from({length: 150}, (_, i) => i)");
  EXPECT_THAT(out, HasSubstr("... 50 more items\n]"));
  EXPECT_THAT(out, HasSubstr("  0,  1,  2,"));  // numbers aligned in columns
  out = Show("({s: 'x'.repeat(10005)})");
  EXPECT_THAT(out, HasSubstr("'... 5 more characters"));
  EXPECT_EQ(
      Show("({a: {b: {c: {d: {e: {f: {g: {h: 1}}}}}}}})").find("[Object]") != std::string::npos,
      true);
}

TEST_F(ShellTest, TopLevelStringsPrintBareAndNestedOnesQuoted) {
  EXPECT_EQ(Show("'plain'"), "plain\n");
  EXPECT_EQ(Show("['a\\nb', \"it's\"]"), "[ 'a\\nb', \"it's\" ]\n");
  EXPECT_EQ(Show("undefined"), "");
  EXPECT_EQ(Show("null"), "null\n");
  EXPECT_EQ(Show("-0"), "-0\n");
  EXPECT_EQ(Show("10n"), "10n\n");
}

// ---------------------------------------------------------------- helpers

TEST_F(ShellTest, ObjectIdHelper) {
  EXPECT_EQ(Show("ObjectId('5F1D7F0B9D3C2A1B2C3D4E5F')"), "ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f')\n");
  EXPECT_EQ(Show("ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f').getTimestamp()"),
            "ISODate('2020-07-26T13:03:07.000Z')\n");
  EXPECT_EQ(Show("ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f').toHexString()"),
            "5f1d7f0b9d3c2a1b2c3d4e5f\n");
  EXPECT_EQ(Show("ObjectId().str.length"), "24\n");
  EXPECT_EQ(Show("ObjectId().equals(ObjectId())"), "false\n");
  EXPECT_EQ(Show("new ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f').equals('5f1d7f0b9d3c2a1b2c3d4e5f')"),
            "true\n");
  EXPECT_EQ(Show("ObjectId.isValid('xyz')"), "false\n");
}

TEST_F(ShellTest, DateHelpers) {
  EXPECT_EQ(Show("ISODate('2020-01-02')"), "ISODate('2020-01-02T00:00:00.000Z')\n");
  EXPECT_EQ(Show("ISODate('2020-01-02T03:04:05+01:00')"), "ISODate('2020-01-02T02:04:05.000Z')\n");
  EXPECT_EQ(Show("ISODate('2020-01-02 03:04:05.5')"), "ISODate('2020-01-02T03:04:05.500Z')\n");
  EXPECT_EQ(Show("new Date(0)"), "ISODate('1970-01-01T00:00:00.000Z')\n");
  EXPECT_EQ(Show("Math.abs(ISODate() - new Date()) < 5000"), "true\n");
  Ok("db.d.insertOne({_id: 1, at: new Date(86400000)})");
  EXPECT_EQ(Stored("d", 1),
            R"({"_id": {"$numberInt": "1"}, "at": {"$date": {"$numberLong": "86400000"}}})");
  EXPECT_EQ(Show("db.d.findOne().at instanceof Date"), "true\n");
}

TEST_F(ShellTest, NumericHelpers) {
  EXPECT_EQ(Show("NumberInt('42')"), "Int32(42)\n");
  EXPECT_EQ(Show("NumberLong(5) + 1"), "6\n");
  EXPECT_EQ(Show("NumberLong('-9223372036854775808')"), "Long('-9223372036854775808')\n");
  EXPECT_EQ(Show("NumberLong('123').toBigInt() * 2n"), "246n\n");
  EXPECT_EQ(Show("NumberDecimal('1.10')"), "Decimal128('1.10')\n");
  EXPECT_EQ(Show("Decimal128('-0')"), "Decimal128('-0')\n");
  EXPECT_EQ(Show("NumberDecimal(0.1)"), "Decimal128('0.1')\n");
  Ok("db.n.insertOne({_id: 1, l: NumberLong(2), i: NumberInt(3)})");
  EXPECT_EQ(Show("db.n.findOne()"), "{ _id: 1, l: Long('2'), i: 3 }\n");
}

TEST_F(ShellTest, BinaryHelpers) {
  EXPECT_EQ(Show("BinData(0, 'SGVsbG8=')"), "Binary.createFromBase64('SGVsbG8=', 0)\n");
  EXPECT_EQ(Show("BinData(0, 'SGVsbG8=').hex()"), "48656c6c6f\n");
  EXPECT_EQ(Show("HexData(5, '00ff').base64()"), "AP8=\n");
  EXPECT_EQ(Show("UUID('00112233-4455-6677-8899-aabbccddeeff')"),
            "UUID('00112233-4455-6677-8899-aabbccddeeff')\n");
  // A random UUID is version 4 with the RFC 4122 variant.
  EXPECT_EQ(Show("/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/"
                 ".test(UUID().toString())"),
            "true\n");
  EXPECT_EQ(Show("UUID().sub_type"), "4\n");
}

TEST_F(ShellTest, TimestampMinKeyMaxKey) {
  EXPECT_EQ(Show("Timestamp(5, 6)"), "Timestamp({ t: 5, i: 6 })\n");
  EXPECT_EQ(Show("Timestamp({t: 7, i: 8}).t"), "7\n");
  EXPECT_EQ(Show("[MinKey(), MaxKey()]"), "[ MinKey(), MaxKey() ]\n");
  // MinKey sorts before everything, MaxKey after, as the engine orders them.
  Ok("db.k.insertMany([{_id: 1, v: 5}, {_id: 2, v: MaxKey()}, {_id: 3, v: MinKey}, {_id: 4, v: "
     "'a'}])");
  EXPECT_EQ(Show("db.k.find().sort({v: 1}).map(d => d._id).toArray()"), "[ 3, 1, 4, 2 ]\n");
}

TEST_F(ShellTest, BsonSizeIsTheStoredSize) {
  Ok("db.s.insertOne({_id: 1, a: 'hello', b: [1, 2, 3], c: NumberLong(1)})");
  auto stored = Coll("s").FindOne(test::Json("{}"));
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ(Show("Object.bsonsize(db.s.findOne())"), std::to_string((*stored)->size()) + "\n");
  EXPECT_EQ(Show("Object.bsonsize({})"), "5\n");
  EXPECT_EQ(Show("Object.bsonsize({a: 1})"), "12\n");
}

TEST_F(ShellTest, PrintAndPrintjson) {
  EXPECT_EQ(Run("print('a', 1, {b: 2}); printjson({c: [3]}); print()"),
            "a 1 { b: 2 }\n{ c: [ 3 ] }\n\n");
  EXPECT_EQ(Run("printjson('s')"), "'s'\n");
  EXPECT_EQ(Show("tojson({a: 1})"), "{ a: 1 }\n");
  EXPECT_EQ(Show("EJSON.stringify({a: NumberLong(1)})"), "{\"a\":1}\n");  // js-bson's text
  EXPECT_EQ(Show("EJSON.parse('{\"a\": {\"$numberLong\": \"5\"}}').a"), "Long('5')\n");
}

TEST_F(ShellTest, LoadRunsAFileInTheGlobalScope) {
  std::string path = dir_.Sub("lib.js");
  std::ofstream(path) << "use other\nvar loadedValue = db.getName() + ':' + 41;\n";
  EXPECT_EQ(Show("load('" + path + "')"), "true\n");
  EXPECT_EQ(Show("loadedValue"), "other:41\n");
  EXPECT_EQ(Show("db"), "other\n");
}

TEST_F(ShellTest, HelpAndVersion) {
  EXPECT_THAT(Show("help"), HasSubstr("show collections"));
  EXPECT_THAT(Show("db.help()"), HasSubstr("db.getSiblingDB"));
  EXPECT_THAT(Show("db.c.help()"), HasSubstr("findOneAndUpdate"));
  EXPECT_THAT(Show("db.c.find().help()"), HasSubstr("itcount"));
  EXPECT_EQ(Show("typeof version()"), "string\n");
}

TEST_F(ShellTest, ExitAndQuitEndTheShellWithAStatus) {
  EXPECT_FALSE(shell_->exit_requested());
  EXPECT_EQ(Run("print('before'); exit(3); print('after')"), "before\n");
  EXPECT_FALSE(ok_);
  EXPECT_TRUE(shell_->exit_requested());
  EXPECT_EQ(shell_->exit_code(), 3);
  EXPECT_EQ(err(), "");  // not an error: no message
  OpenShell(false);
  Run("try { quit() } catch (e) { print('caught') }");  // uncatchable
  EXPECT_TRUE(shell_->exit_requested());
  EXPECT_EQ(shell_->exit_code(), 0);
  OpenShell(false);
  Show("exit");  // the command form
  EXPECT_TRUE(shell_->exit_requested());
}

// ---------------------------------------------------------------- db

TEST_F(ShellTest, UseSwitchesTheDatabase) {
  EXPECT_EQ(Show("use library"), "switched to db library\n");
  EXPECT_EQ(Show("db"), "library\n");
  EXPECT_EQ(shell_->Prompt(), "library> ");
  Ok("db.books.insertOne({_id: 1})");
  EXPECT_EQ(Coll("books", "library").EstimatedDocumentCount().value(), 1);
  // `use` is a command only alone on its line; `use` as a name is JavaScript.
  EXPECT_EQ(Show("var use = 5; use + 1"), "6\n");
}

TEST_F(ShellTest, SiblingAndSisterDatabases) {
  EXPECT_EQ(Show("db.getSiblingDB('a').getName()"), "a\n");
  EXPECT_EQ(Show("db.getSisterDB('b')"), "b\n");
  Ok("db.getSiblingDB('other').x.insertOne({_id: 1})");
  EXPECT_EQ(Coll("x", "other").EstimatedDocumentCount().value(), 1);
  EXPECT_EQ(Show("db"), "test\n");  // unchanged
  Ok("db = db.getSiblingDB('other')");
  EXPECT_EQ(Show("db.x.countDocuments()"), "1\n");
}

TEST_F(ShellTest, ShowDatabasesAndCollections) {
  Ok("db.b.insertOne({}); db.a.insertMany([{}, {}]); db.getSiblingDB('zoo').z.insertOne({})");
  EXPECT_EQ(Show("show collections"), "a\nb\n");
  EXPECT_EQ(Show("show tables"), "a\nb\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'a', 'b' ]\n");
  // listDatabases lists admin, config and local as mongod does (empty here).
  const std::string dbs =
      "admin   0 collections, 0 documents\nconfig  0 collections, 0 documents\n"
      "local   0 collections, 0 documents\ntest    2 collections, 3 documents\n"
      "zoo     1 collection, 1 document\n";
  EXPECT_EQ(Show("show dbs"), dbs);
  EXPECT_EQ(Show("show databases"), dbs);
  Show("show nonsense");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("don't know how to show 'nonsense'"));
}

TEST_F(ShellTest, CollectionsAreProperties) {
  EXPECT_EQ(Show("db.books"), "test.books\n");
  EXPECT_EQ(Show("db.books.getName()"), "books\n");
  EXPECT_EQ(Show("db.books.archive.getFullName()"), "test.books.archive\n");
  EXPECT_EQ(Show("db.getCollection('my-books')"), "test.my-books\n");
  EXPECT_EQ(Show("db['with space'].getName()"), "with space\n");
  EXPECT_EQ(Show("typeof db.getName"), "function\n");  // methods win over collections
  Ok("db.books.insertOne({_id: 1}); db.books.archive.insertOne({_id: 2})");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'books', 'books.archive' ]\n");
  Show("db.getCollection('')");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("collection name must be a non-empty string"));
}

TEST_F(ShellTest, CreateCollection) {
  EXPECT_EQ(Show("db.createCollection('fresh')"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'fresh' ]\n");
  EXPECT_EQ(Show("try { db.createCollection('fresh') } catch (e) { [e.code, e.codeName] }"),
            "[ 48, 'NamespaceExists' ]\n");
  EXPECT_EQ(Show("try { db.createCollection('bad$name') } catch (e) { e.code }"), "73\n");
}

TEST_F(ShellTest, DropDatabase) {
  Ok("use gone\ndb.a.insertOne({}); db.b.insertOne({})");
  EXPECT_EQ(Show("db.dropDatabase()"), "{ ok: 1, dropped: 'gone' }\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[]\n");
  EXPECT_EQ(shell_->client().ListDatabaseNames().value(), std::vector<std::string>{});
}

TEST_F(ShellTest, DatabaseStats) {
  Ok("db.a.insertMany([{_id: 1, s: 'xx'}, {_id: 2}]); db.b.insertOne({_id: 1}); "
     "db.b.createIndex({x: 1})");
  EXPECT_EQ(Show("const s = db.stats(); [s.db, s.collections, s.objects, s.indexes, s.ok]"),
            "[ 'test', 2, 3, 3, 1 ]\n");
  EXPECT_EQ(Show("db.stats().dataSize === Object.bsonsize({_id: 1, s: 'xx'}) + 2 * "
                 "Object.bsonsize({_id: 1})"),
            "true\n");
}

// ---------------------------------------------------------------- CRUD

TEST_F(ShellTest, InsertOneResult) {
  EXPECT_EQ(Show("db.c.insertOne({_id: 'a', x: 1})"), "{ acknowledged: true, insertedId: 'a' }\n");
  EXPECT_EQ(Show("db.c.insertOne({_id: ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f')})"),
            "{\n  acknowledged: true,\n  insertedId: ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f')\n}\n");
  // Without _id the engine assigns an ObjectId, which the result returns.
  EXPECT_EQ(Show("const r = db.c.insertOne({y: 2}); "
                 "r.insertedId instanceof ObjectId && db.c.findOne({_id: r.insertedId}).y"),
            "2\n");
}

TEST_F(ShellTest, InsertsGiveTheDocumentItsId) {
  EXPECT_EQ(Show("const d = {a: 1}; const r = db.c.insertOne(d); d._id.equals(r.insertedId)"),
            "true\n");
  EXPECT_EQ(Show("const ds = [{b: 1}, {_id: 7}]; db.c.insertMany(ds); [ds[0]._id instanceof "
                 "ObjectId, ds[1]._id]"),
            "[ true, 7 ]\n");
  EXPECT_EQ(Show("const l = {c: 1}; db.c.insert(l); l._id instanceof ObjectId"), "true\n");
  // A frozen document is inserted all the same.
  EXPECT_EQ(Show("db.c.insertOne(Object.freeze({f: 1})).insertedId instanceof ObjectId"), "true\n");
}

TEST_F(ShellTest, InsertManyResult) {
  EXPECT_EQ(Show("db.c.insertMany([{_id: 1}, {_id: 2}])"),
            "{ acknowledged: true, insertedIds: { '0': 1, '1': 2 } }\n");
  EXPECT_EQ(Show("Object.keys(db.c.insertMany([{}, {}, {}]).insertedIds)"), "[ '0', '1', '2' ]\n");
  Show("db.c.insertMany({_id: 5})");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("insertMany needs an array of documents"));
}

TEST_F(ShellTest, InsertManyErrorsAreBulkWriteErrors) {
  Ok("db.c.insertOne({_id: 2})");
  EXPECT_EQ(Show(R"js(
      try { db.c.insertMany([{_id: 1}, {_id: 2}, {_id: 3}]) }
      catch (e) { [e.name, e.code, e.codeName, e.writeErrors[0].index, e.insertedCount,
                   e instanceof MongoServerError] })js"),
            "[ 'MongoBulkWriteError', 11000, 'DuplicateKey', 1, 1, true ]\n");
  EXPECT_EQ(Show("db.c.countDocuments()"), "2\n");  // ordered: stopped at the error
  EXPECT_EQ(Show(R"js(
      try { db.c.insertMany([{_id: 4}, {_id: 2}, {_id: 5}], {ordered: false}) }
      catch (e) { [e.insertedCount, e.insertedIds] })js"),
            "[ 2, { '0': 4, '2': 5 } ]\n");
  EXPECT_EQ(Show("db.c.countDocuments()"), "4\n");
}

TEST_F(ShellTest, FindAndFindOne) {
  Ok("db.c.insertMany([{_id: 1, a: 1, b: 'x'}, {_id: 2, a: 2, b: 'y'}, {_id: 3, a: 3, b: 'z'}])");
  EXPECT_EQ(Show("db.c.find({a: {$gte: 2}})"),
            "[ { _id: 2, a: 2, b: 'y' }, { _id: 3, a: 3, b: 'z' } ]\n");
  EXPECT_EQ(Show("db.c.find({}, {b: 1, _id: 0}).toArray()"),
            "[ { b: 'x' }, { b: 'y' }, { b: 'z' } ]\n");
  EXPECT_EQ(Show("db.c.find({}, null, {sort: {a: -1}, limit: 1}).toArray()"),
            "[ { _id: 3, a: 3, b: 'z' } ]\n");
  EXPECT_EQ(Show("db.c.findOne({b: 'y'})"), "{ _id: 2, a: 2, b: 'y' }\n");
  EXPECT_EQ(Show("db.c.findOne({b: 'y'}, {a: 1})"), "{ _id: 2, a: 2 }\n");
  EXPECT_EQ(Show("db.c.findOne({b: 'nope'})"), "null\n");
  EXPECT_EQ(Show("db.c.find({b: /^[xz]$/}).map(d => d._id).toArray()"), "[ 1, 3 ]\n");
  EXPECT_EQ(Show("db.empty.find()"), "");  // an empty result prints nothing
}

TEST_F(ShellTest, UpdateOneUpdateManyReplaceOne) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 1}, {_id: 3, a: 2}])");
  EXPECT_EQ(
      Show("db.c.updateOne({a: 1}, {$set: {b: true}})"),
      "{\n  acknowledged: true,\n  insertedId: null,\n  matchedCount: 1,\n  modifiedCount: 1,\n"
      "  upsertedCount: 0\n}\n");
  EXPECT_EQ(
      Show("const r = db.c.updateMany({a: 1}, {$inc: {n: 5}}); [r.matchedCount, r.modifiedCount]"),
      "[ 2, 2 ]\n");
  EXPECT_EQ(Stored("c", 2),
            R"({"_id": {"$numberInt": "2"}, "a": {"$numberInt": "1"}, "n": {"$numberInt": "5"}})");
  EXPECT_EQ(Show("const u = db.c.updateOne({_id: 9}, {$set: {a: 9}}, {upsert: true}); "
                 "[u.insertedId, u.upsertedCount, u.matchedCount]"),
            "[ 9, 1, 0 ]\n");
  EXPECT_EQ(
      Show("db.c.replaceOne({_id: 3}, {z: 1})"),
      "{\n  acknowledged: true,\n  insertedId: null,\n  matchedCount: 1,\n  modifiedCount: 1,\n"
      "  upsertedCount: 0\n}\n");
  EXPECT_EQ(Stored("c", 3), R"({"_id": {"$numberInt": "3"}, "z": {"$numberInt": "1"}})");
  EXPECT_EQ(Show("db.c.replaceOne({_id: 10}, {z: 2}, {upsert: true}).insertedId"), "10\n");
  EXPECT_EQ(Show("db.c.updateMany({a: 100}, {$set: {x: 1}}).matchedCount"), "0\n");
  // arrayFilters reach the engine.
  Ok("db.arr.insertOne({_id: 1, v: [1, 5, 9]})");
  Ok("db.arr.updateOne({_id: 1}, {$set: {'v.$[big]': 0}}, {arrayFilters: [{big: {$gt: 4}}]})");
  EXPECT_EQ(Show("db.arr.findOne().v"), "[ 1, 0, 0 ]\n");
}

TEST_F(ShellTest, UpdateArgumentErrors) {
  Ok("db.c.insertOne({_id: 1, s: 'text'})");
  EXPECT_EQ(Show("try { db.c.updateOne({}, {a: 1}) } catch (e) { [e.name, e.code, e.message] }"),
            "[\n  'MongoInvalidArgumentError',\n  2,\n  'Update document requires atomic "
            "operators'\n]\n");
  EXPECT_EQ(Show("try { db.c.replaceOne({}, {$set: {a: 1}}) } catch (e) { e.message }"),
            "Replacement document must not contain atomic operators\n");
  // An error the engine finds: $inc on a string.
  EXPECT_EQ(
      Show("try { db.c.updateOne({_id: 1}, {$inc: {s: 1}}) } catch (e) { [e.name, e.codeName] }"),
      "[ 'MongoServerError', 'TypeMismatch' ]\n");
  EXPECT_EQ(Show("try { db.c.updateOne({_id: 1}, {$bogus: {s: 1}}) } catch (e) { e.code }"), "9\n");
  EXPECT_EQ(Show("try { db.c.replaceOne({_id: 1}, {_id: 2}) } catch (e) { e.codeName }"),
            "ImmutableField\n");
}

TEST_F(ShellTest, DeleteOneDeleteMany) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 1}, {_id: 3, a: 1}, {_id: 4, a: 2}])");
  EXPECT_EQ(Show("db.c.deleteOne({a: 1})"), "{ acknowledged: true, deletedCount: 1 }\n");
  EXPECT_EQ(Show("db.c.deleteMany({a: 1})"), "{ acknowledged: true, deletedCount: 2 }\n");
  EXPECT_EQ(Show("db.c.deleteMany({})"), "{ acknowledged: true, deletedCount: 1 }\n");
  EXPECT_EQ(Coll("c").EstimatedDocumentCount().value(), 0);
}

TEST_F(ShellTest, FindOneAndModify) {
  Ok("db.c.insertMany([{_id: 1, n: 1}, {_id: 2, n: 2}])");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 1}, {$inc: {n: 10}})"), "{ _id: 1, n: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 1}, {$inc: {n: 10}}, {returnDocument: 'after'})"),
            "{ _id: 1, n: 21 }\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({}, {$set: {t: 1}}, {sort: {n: -1}, projection: {n: 1}, "
                 "returnNewDocument: true})"),
            "{ _id: 1, n: 21 }\n");
  EXPECT_EQ(Show("db.c.findOneAndReplace({_id: 2}, {r: 1}, {returnDocument: 'after'})"),
            "{ _id: 2, r: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 7}, {$set: {u: 1}}, {upsert: true, returnDocument: "
                 "'after'})"),
            "{ _id: 7, u: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndDelete({_id: 2})"), "{ _id: 2, r: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndDelete({_id: 2})"), "null\n");
  EXPECT_EQ(Show("db.c.countDocuments()"), "2\n");
}

TEST_F(ShellTest, CountsAndDistinct) {
  Ok("db.c.insertMany([{_id: 1, t: ['a', 'b']}, {_id: 2, t: 'b'}, {_id: 3, t: 'c'}, {_id: 4}])");
  EXPECT_EQ(Show("db.c.countDocuments()"), "4\n");
  EXPECT_EQ(Show("db.c.countDocuments({t: 'b'})"), "2\n");
  EXPECT_EQ(Show("db.c.countDocuments({}, {skip: 1, limit: 2})"), "2\n");
  EXPECT_EQ(Show("db.c.estimatedDocumentCount()"), "4\n");
  EXPECT_EQ(Show("db.c.distinct('t')"), "[ 'a', 'b', 'c' ]\n");
  EXPECT_EQ(Show("db.c.distinct('t', {_id: {$gt: 1}})"), "[ 'b', 'c' ]\n");
  EXPECT_EQ(Show("db.c.count({t: 'c'})"), "1\n");  // legacy
}

// ---------------------------------------------------------------- indexes

TEST_F(ShellTest, CreateListAndDropIndexes) {
  Ok("db.c.insertMany([{_id: 1, a: 1, b: 1}, {_id: 2, a: 2, b: 1}])");
  EXPECT_EQ(Show("db.c.createIndex({a: 1})"), "a_1\n");
  EXPECT_EQ(Show("db.c.createIndex({b: -1}, {name: 'by_b', sparse: true})"), "by_b\n");
  EXPECT_EQ(Show("db.c.createIndexes([{a: 1, b: 1}, {b: 1}])"), "[ 'a_1_b_1', 'b_1' ]\n");
  EXPECT_EQ(Show("db.c.getIndexes().map(i => i.name)"),
            "[ '_id_', 'a_1', 'by_b', 'a_1_b_1', 'b_1' ]\n");
  EXPECT_EQ(Show("db.c.getIndexes()[2]"), "{ v: 2, key: { b: -1 }, name: 'by_b', sparse: true }\n");
  EXPECT_EQ(Show("db.c.getIndexKeys()[1]"), "{ a: 1 }\n");
  EXPECT_EQ(Show("db.c.dropIndex('by_b')"), "{ nIndexesWas: 5, ok: 1 }\n");
  EXPECT_EQ(Show("db.c.dropIndex({a: 1, b: 1})"), "{ nIndexesWas: 4, ok: 1 }\n");
  EXPECT_EQ(Show("try { db.c.dropIndex('nope') } catch (e) { [e.code, e.codeName] }"),
            "[ 27, 'IndexNotFound' ]\n");
  EXPECT_EQ(Show("try { db.c.dropIndex('_id_') } catch (e) { e.code }"), "72\n");
  EXPECT_EQ(Show("db.c.dropIndexes()"),
            "{\n  nIndexesWas: 3,\n  msg: 'non-_id indexes dropped for collection',\n  ok: 1\n}\n");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
}

TEST_F(ShellTest, IndexOptionsRockdocLacksAreRefusedNotDropped) {
  Ok("db.c.insertOne({a: 1})");
  for (const char* options : {"{collation: {locale: 'en', strength: 2}}", "{hidden: true}",
                              "{weights: {a: 1}}", "{default_language: 'english'}",
                              "{'2dsphereIndexVersion': 3}", "{wildcardProjection: {a: 1}}"}) {
    EXPECT_EQ(Show(std::string("try { db.c.createIndex({a: 1}, ") + options +
                   ") } catch (e) { [e.code, e.codeName] }"),
              "[ 238, 'NotImplemented' ]\n")
        << options;
  }
  EXPECT_EQ(Show("try { db.c.createIndex({a: 1}, {hidden: true}) } catch (e) { e.message }"),
            "The index option 'hidden' is not supported by rockdoc\n");
  // TTL indexes are built (issue 12), and listIndexes shows the option.
  EXPECT_EQ(Show("db.c.createIndex({t: 1}, {expireAfterSeconds: 3600})"), "t_1\n");
  EXPECT_EQ(Show("db.c.getIndexes()[1].expireAfterSeconds"), "3600\n");
  EXPECT_EQ(Show("db.c.dropIndex('t_1')"), "{ nIndexesWas: 2, ok: 1 }\n");
  EXPECT_EQ(Show("try { db.c.createIndex({a: 1}, {foo: 1}) } catch (e) { [e.code, e.codeName] }"),
            "[ 197, 'InvalidIndexSpecificationOption' ]\n");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
  // MongoDB accepts background (meaningless since 4.2), and so does rockdoc.
  EXPECT_EQ(Show("db.c.createIndex({a: 1}, {background: true, unique: true})"), "a_1\n");
}

TEST_F(ShellTest, SpecialIndexTypesAreNotImplemented) {
  EXPECT_EQ(Show("try { db.c.createIndex({'$**': 1}) } catch (e) { [e.code, e.message] }"),
            "[ 238, 'wildcard indexes are not supported by rockdoc' ]\n");
  EXPECT_EQ(Show("try { db.c.createIndex({a: 'text'}) } catch (e) { [e.code, e.message] }"),
            "[ 238, 'text indexes are not supported by rockdoc' ]\n");
}

TEST_F(ShellTest, CreateIndexesBuildsAllOrNone) {
  Ok("db.c.insertMany([{_id: 1, a: 1, b: 5}, {_id: 2, a: 2, b: 5}])");
  // One bad spec: nothing is built.
  EXPECT_EQ(Show("try { db.c.createIndexes([{a: 1}, {b: 0}]) } catch (e) { e.code }"), "67\n");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
  // A unique violation in the second build: the first is removed.
  EXPECT_EQ(
      Show("try { db.c.createIndexes([{a: 1}, {b: 1}], {unique: true}) } catch (e) { e.code }"),
      "11000\n");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
  EXPECT_EQ(Show("db.c.createIndexes([{a: 1}, {a: -1}], {unique: true})"), "[ 'a_1', 'a_-1' ]\n");
}

TEST_F(ShellTest, CreateCollectionOptionsRockdocLacksAreRefused) {
  for (const char* options :
       {"{timeseries: {timeField: 't'}}",
        "{clusteredIndex: {key: {_id: 1}, unique: true}}", "{collation: {locale: 'fr'}}",
        "{changeStreamPreAndPostImages: {enabled: true}}", "{expireAfterSeconds: 60}"}) {
    EXPECT_EQ(
        Show(std::string("try { db.createCollection('x', ") + options + ") } catch (e) { e.code }"),
        "238\n")
        << options;
  }
  EXPECT_EQ(Show("try { db.createCollection('x', {foo: 1}) } catch (e) { [e.code, e.message] }"),
            "[ 40415, \"BSON field 'create.foo' is an unknown field.\" ]\n");
  EXPECT_EQ(Show("db.getCollectionNames().includes('x')"), "false\n");
  EXPECT_EQ(Show("db.createCollection('x', {})"), "{ ok: 1 }\n");
}

// mongosh's db.createView, and a view read as a collection is.
TEST_F(ShellTest, CreateViewMakesAReadOnlyView) {
  Ok("db.people.insertMany([{_id: 1, name: 'Ann', age: 31}, {_id: 2, name: 'Bo', age: 17}])");
  EXPECT_EQ(Show("db.createView('adults', 'people', [{$match: {age: {$gte: 18}}}, {$project: {age: 0}}])"),
            "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.adults.find().toArray()"), "[ { _id: 1, name: 'Ann' } ]\n");
  EXPECT_EQ(Show("db.adults.countDocuments()"), "1\n");
  EXPECT_EQ(Show("db.adults.aggregate([{$count: 'n'}]).toArray()"), "[ { n: 1 } ]\n");
  EXPECT_EQ(Show("show collections"), "adults\npeople\n");
  EXPECT_EQ(Show("db.getCollectionInfos({type: 'view'})[0].options.viewOn"), "people\n");
  EXPECT_EQ(Show("try { db.adults.insertOne({_id: 3}) } catch (e) { [e.code, e.message] }"),
            "[ 166, 'Namespace test.adults is a view, not a collection' ]\n");
  EXPECT_EQ(Show("try { db.createView('bad', 'people', [{$out: 'x'}]) } catch (e) { e.code }"),
            "167\n");
  EXPECT_EQ(Show("db.adults.drop()"), "true\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'people' ]\n");
}

TEST_F(ShellTest, ValidatorsRefuseWithErrInfoAndShowInCollectionInfos) {
  Ok("db.createCollection('s', {validator: {$jsonSchema: {required: ['name']}}})");
  EXPECT_EQ(Show("try { db.s.insertOne({_id: 1}) } catch (e) {"
                 " [e.code, e.codeName, e.message, e.errInfo.failingDocumentId,"
                 "  e.errInfo.details.schemaRulesNotSatisfied[0].missingProperties] }"),
            "[\n  121,\n  'DocumentValidationFailure',\n  'Document failed validation',\n  1,\n"
            "  [ 'name' ]\n]\n");
  EXPECT_EQ(Show("db.s.insertOne({_id: 2}, {bypassDocumentValidation: true}).insertedId"), "2\n");
  EXPECT_EQ(Show("try { db.s.insertMany([{_id: 3}]) } catch (e) {"
                 " e.writeErrors[0].errInfo.failingDocumentId }"),
            "3\n");
  EXPECT_EQ(Show("db.getCollectionInfos({name: 's'})[0].options"),
            "{\n  validator: { $jsonSchema: { required: [ 'name' ] } }\n}\n");
  EXPECT_EQ(Show("db.s.isCapped()"), "false\n");
  EXPECT_EQ(Show("db.getCollectionInfos({}, {nameOnly: true})"),
            "[ { name: 's', type: 'collection' } ]\n");
}

TEST_F(ShellTest, CappedCollectionsKeepTheNewestInInsertionOrder) {
  Ok("db.createCollection('log', {capped: true, size: 4096, max: 2});"
     "for (const id of [5, 1, 9]) db.log.insertOne({_id: id})");
  EXPECT_EQ(Show("db.log.find().toArray()"), "[ { _id: 1 }, { _id: 9 } ]\n");
  EXPECT_EQ(Show("db.log.isCapped()"), "true\n");
  EXPECT_EQ(Show("db.log.stats().maxSize"), "4096\n");
}

TEST_F(ShellTest, UniqueIndexRejectsDuplicates) {
  Ok("db.u.createIndex({email: 1}, {unique: true}); db.u.insertOne({email: 'a@x'})");
  EXPECT_EQ(Show("try { db.u.insertOne({email: 'a@x'}) } catch (e) { [e.code, e.codeName] }"),
            "[ 11000, 'DuplicateKey' ]\n");
  Ok("db.v.insertMany([{k: 1}, {k: 1}])");
  EXPECT_EQ(Show("try { db.v.createIndex({k: 1}, {unique: true}) } catch (e) { e.code }"),
            "11000\n");
}

TEST_F(ShellTest, EnsureIndexLegacyResult) {
  EXPECT_EQ(
      Show("db.fresh.ensureIndex({a: 1})"),
      "{\n  createdCollectionAutomatically: true,\n  numIndexesBefore: 0,\n  numIndexesAfter: 2,\n"
      "  ok: 1\n}\n");
  EXPECT_EQ(Show("db.fresh.ensureIndex({b: 1}).numIndexesBefore"), "2\n");
}

// ---------------------------------------------------------------- collections

TEST_F(ShellTest, DropAndRename) {
  Ok("db.c.insertOne({_id: 1}); db.d.insertOne({_id: 2})");
  EXPECT_EQ(Show("db.c.renameCollection('e')"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'd', 'e' ]\n");
  EXPECT_EQ(Show("try { db.e.renameCollection('d') } catch (e) { e.codeName }"),
            "NamespaceExists\n");
  EXPECT_EQ(Show("db.e.renameCollection('d', true).ok"), "1\n");
  EXPECT_EQ(Show("db.d.findOne()"), "{ _id: 1 }\n");
  EXPECT_EQ(Show("try { db.missing.renameCollection('x') } catch (e) { e.code }"), "26\n");
  EXPECT_EQ(Show("db.d.drop()"), "true\n");
  // MongoDB 7.0's drop succeeds on a missing collection, so mongosh's
  // drop() answers true there too.
  EXPECT_EQ(Show("db.d.drop()"), "true\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[]\n");
}

TEST_F(ShellTest, CollectionStatsAndValidate) {
  Ok("db.c.insertMany([{_id: 1, a: 'x'}, {_id: 2, a: 'yy'}]); db.c.createIndex({a: 1})");
  EXPECT_EQ(Show("const s = db.c.stats(); [s.ns, s.count, s.nindexes, Object.keys(s.indexSizes), "
                 "s.ok]"),
            "[ 'test.c', 2, 2, [ '_id_', 'a_1' ], 1 ]\n");
  EXPECT_EQ(Show("const t = db.c.stats(); t.totalSize === t.storageSize + t.totalIndexSize"),
            "true\n");
  EXPECT_EQ(Show("[db.c.totalSize(), db.c.storageSize(), db.c.totalIndexSize()]"
                 ".every((n) => typeof n === 'number' && n >= 0)"),
            "true\n");
  EXPECT_EQ(Show("db.c.dataSize() === db.c.runCommand('collStats', {scale: 1}).size"), "true\n");
  EXPECT_EQ(Show("db.serverStatus().process"), "rockdoc\n");
  EXPECT_EQ(Show("db.hostInfo().system.numCores > 0"), "true\n");
  EXPECT_EQ(Show("db.c.stats().size === Object.bsonsize({_id: 1, a: 'x'}) + Object.bsonsize({_id: "
                 "2, a: 'yy'})"),
            "true\n");
  EXPECT_EQ(
      Show("db.c.validate()"),
      "{\n  ns: 'test.c',\n  nrecords: 2,\n  nIndexes: 2,\n  valid: true,\n  repaired: false,\n"
      "  warnings: [],\n  errors: [],\n  ok: 1\n}\n");
}

TEST_F(ShellTest, ExplainShowsTheChosenPlan) {
  Ok("for (let i = 0; i < 50; i++) db.c.insertOne({_id: i, a: i % 10, b: i}); db.c.createIndex({a: "
     "1})");
  EXPECT_EQ(Show("db.c.find({a: 3}).explain().queryPlanner.winningPlan.inputStage.indexName"),
            "a_1\n");
  EXPECT_EQ(Show("db.c.find({a: 3}).hint({$natural: 1}).explain().queryPlanner.winningPlan.stage"),
            "COLLSCAN\n");
  EXPECT_EQ(
      Show("db.c.find({b: 3}).hint('a_1').explain().queryPlanner.winningPlan.inputStage.indexName"),
      "a_1\n");
  EXPECT_EQ(Show("db.c.find({b: 3}).explain().queryPlanner.winningPlan.stage"), "COLLSCAN\n");
  EXPECT_EQ(Show("const e = db.c.find({a: 3}).explain('executionStats').executionStats; "
                 "[e.nReturned, e.totalKeysExamined, e.totalDocsExamined].map(Number)"),
            "[ 5, 5, 5 ]\n");
  // The explain() helper form, as mongosh prints it.
  std::string shown = Show("db.c.explain('executionStats').find({a: 3})");
  EXPECT_THAT(shown, HasSubstr("executionStats: {\n"));
  EXPECT_THAT(shown, HasSubstr("indexName: 'a_1',"));
  EXPECT_EQ(Show("db.c.explain().find({a: 3}).sort({b: -1}).next().queryPlanner.namespace"),
            "test.c\n");
  EXPECT_EQ(Show("db.c.explain().updateOne({a: 4}, {$set: {x: 1}}).queryPlanner.winningPlan.stage"),
            "UPDATE\n");
  EXPECT_EQ(Show("db.c.explain().deleteMany({a: 4}).queryPlanner.winningPlan.stage"), "DELETE\n");
  // A distinct's plan is the plan of its query.
  EXPECT_EQ(Show("db.c.explain().distinct('b', {a: 4}).queryPlanner.winningPlan.inputStage"
                 ".indexName"),
            "a_1\n");
  // A count the index answers alone: COUNT over COUNT_SCAN, no document read.
  EXPECT_EQ(Show("const c = db.c.explain('executionStats').count({a: 4}); "
                 "[c.queryPlanner.winningPlan.stage, c.queryPlanner.winningPlan.inputStage.stage, "
                 "c.executionStats.totalKeysExamined, c.executionStats.totalDocsExamined]"),
            "[ 'COUNT', 'COUNT_SCAN', 5, 0 ]\n");
  EXPECT_EQ(Show("db.c.countDocuments({a: 4})"), "5\n");  // explain changed nothing
  EXPECT_EQ(Show("try { db.c.find().explain('loud') } catch (e) { e.codeName }"), "BadValue\n");
}

// ---------------------------------------------------------------- cursors

TEST_F(ShellTest, CursorOptionsAccumulateUntilTheFirstResult) {
  Ok("for (let i = 0; i < 10; i++) db.c.insertOne({_id: i, g: i % 3})");
  EXPECT_EQ(Show("const c = db.c.find({g: {$ne: 1}}); c.sort({_id: -1}); c.skip(1); c.limit(3); "
                 "c.project({g: 0}); c.toArray()"),
            "[ { _id: 8 }, { _id: 6 }, { _id: 5 } ]\n");
  EXPECT_EQ(
      Show("const d = db.c.find(); d.next(); try { d.sort({_id: 1}) } catch (e) { e.message }"),
      "cannot call sort() on a cursor that has already returned results\n");
  EXPECT_EQ(Show("db.c.find().hint({_id: 1}).batchSize(2).limit(5).itcount()"), "5\n");
  EXPECT_EQ(Show("db.c.find().projection({_id: 1}).sort({_id: 1}).limit(1).pretty().toArray()"),
            "[ { _id: 0 } ]\n");
}

TEST_F(ShellTest, QueryErrorsSurfaceAtTheFirstResult) {
  Ok("db.c.insertOne({a: 1})");
  // The cursor is lazy: building it succeeds, iterating reports the error.
  EXPECT_EQ(Run("const bad = db.c.find({a: {$bogus: 1}}); print('built')"), "built\n");
  EXPECT_EQ(Show("try { bad.toArray() } catch (e) { [e.code, e.codeName, e.message] }"),
            "[ 2, 'BadValue', 'unknown operator: $bogus' ]\n");
  Show("db.c.find({a: {$bogus: 1}})");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "MongoServerError[BadValue]: unknown operator: $bogus\n");
  EXPECT_EQ(Show("try { db.c.find().sort({a: 'sideways'}).next() } catch (e) { e.code }"),
            "15974\n");
}

// mongosh's aggregate: an AggregationCursor over the aggregate command.
TEST_F(ShellTest, AggregateRunsThePipeline) {
  Ok("db.s.insertMany([{item: 'a', q: 2}, {item: 'b', q: 1}, {item: 'a', q: 5}])");
  EXPECT_EQ(Show("db.s.aggregate([{$group: {_id: '$item', total: {$sum: '$q'}}}, {$sort: {_id: 1}}])"),
            "[ { _id: 'a', total: 7 }, { _id: 'b', total: 1 } ]\n");
  EXPECT_EQ(Show("db.s.aggregate([{$match: {q: {$gt: 1}}}, {$project: {_id: 0, q: 1}}], "
                 "{batchSize: 1}).toArray()"),
            "[ { q: 2 }, { q: 5 } ]\n");
  EXPECT_EQ(Show("db.s.aggregate([{$count: 'n'}]).next().n"), "3\n");
  EXPECT_EQ(Show("try { db.s.aggregate([{$bogus: 1}]).toArray() } catch (e) { [e.code, e.message] }"),
            "[ 40324, \"Unrecognized pipeline stage name: '$bogus'\" ]\n");
  EXPECT_EQ(Show("try { db.s.aggregate([], {bogus: 1}).toArray() } catch (e) { e.message }"),
            "BSON field 'aggregate.bogus' is an unknown field.\n");
  // explain: the find under $cursor, then the stages (with counts when run).
  Ok("db.s.createIndex({q: 1})");
  EXPECT_EQ(Show("db.s.explain().aggregate([{$match: {q: 5}}, {$group: {_id: '$item'}}])"
                 ".stages[0].$cursor.queryPlanner.winningPlan.inputStage.indexName"),
            "q_1\n");
  EXPECT_EQ(Show("db.s.explain('executionStats').aggregate([{$match: {q: {$gte: 2}}}, "
                 "{$group: {_id: '$item'}}]).stages.map((s) => Object.keys(s)[0] + ' ' + s.nReturned)"),
            "[ '$cursor 2', '$group 1' ]\n");
  // No query modifiers on an aggregation cursor (as mongosh).
  EXPECT_EQ(Show("typeof db.s.aggregate([]).sort"), "undefined\n");
}

TEST_F(ShellTest, CursorIteration) {
  Ok("db.c.insertMany([{_id: 1}, {_id: 2}, {_id: 3}])");
  EXPECT_EQ(Run("const c = db.c.find(); while (c.hasNext()) print(c.next()._id); print(c.next())"),
            "1\n2\n3\nnull\n");
  EXPECT_EQ(Run("db.c.find().forEach(d => print(d._id))"), "1\n2\n3\n");
  EXPECT_EQ(Run("db.c.find().forEach(d => { print(d._id); return false })"), "1\n");
  EXPECT_EQ(Show("db.c.find().map(d => d._id * 10).toArray()"), "[ 10, 20, 30 ]\n");
  EXPECT_EQ(Show("[...db.c.find()].length"), "3\n");
  EXPECT_EQ(Show("let s = 0; for (const d of db.c.find()) s += d._id; s"), "6\n");
  EXPECT_EQ(Show("db.c.find().skip(1).itcount()"), "2\n");
  // count() ignores skip/limit unless asked; size() applies them.
  EXPECT_EQ(Show("[db.c.find().limit(1).count(), db.c.find().limit(1).count(true), "
                 "db.c.find().skip(2).size()]"),
            "[ 3, 1, 1 ]\n");
  EXPECT_EQ(Show("const k = db.c.find(); k.next(); k.close(); [k.hasNext(), k.isClosed()]"),
            "[ false, true ]\n");
}

TEST_F(ShellTest, ReplShowsTwentyResultsThenIt) {
  Ok("for (let i = 0; i < 45; i++) db.c.insertOne({_id: i})");
  std::string page1 = Show("db.c.find()");
  EXPECT_THAT(page1, StartsWith("[\n  { _id: 0 },\n  { _id: 1 },\n"));
  EXPECT_THAT(page1, HasSubstr("  { _id: 19 }\n]\nType \"it\" for more\n"));
  EXPECT_EQ(page1.find("_id: 20 "), std::string::npos);
  std::string page2 = Show("it");
  EXPECT_THAT(page2, StartsWith("[\n  { _id: 20 },\n"));
  EXPECT_THAT(page2, HasSubstr("  { _id: 39 }\n]\nType \"it\" for more\n"));
  std::string page3 = Show("it");
  EXPECT_EQ(page3, "[ { _id: 40 }, { _id: 41 }, { _id: 42 }, { _id: 43 }, { _id: 44 } ]\n");
  EXPECT_EQ(Show("it"), "no cursor\n");
  // A small batch size does not change what a page shows.
  std::string small = Show("db.c.find().batchSize(3)");
  EXPECT_THAT(small, HasSubstr("{ _id: 19 }\n]\nType \"it\" for more\n"));
}

// ---------------------------------------------------------------- legacy API

TEST_F(ShellTest, LegacyInsert) {
  EXPECT_EQ(Show("db.c.insert({_id: 1})"), "WriteResult({ nInserted: 1 })\n");
  EXPECT_EQ(Show("db.c.insert({_id: 1})"),
            "WriteResult({\n  nInserted: 0,\n  writeError: {\n    code: 11000,\n"
            "    errmsg: 'E11000 duplicate key error collection: test.c index: _id_ dup key: { "
            "_id: 1 }'\n"
            "  }\n})\n");
  EXPECT_EQ(Show("db.c.insert({_id: 1}).hasWriteError()"), "true\n");
  EXPECT_EQ(Show("const r = db.c.insert([{_id: 2}, {_id: 3}]); [r.nInserted, r.hasWriteErrors()]"),
            "[ 2, false ]\n");
  EXPECT_THAT(Show("db.c.insert([{_id: 4}])"),
              StartsWith("BulkWriteResult({\n  writeErrors: [],\n"));
}

TEST_F(ShellTest, LegacyUpdateWithUpsertAndMulti) {
  Ok("db.c.insert([{_id: 1, a: 1}, {_id: 2, a: 1}])");
  EXPECT_EQ(Show("db.c.update({a: 1}, {$set: {b: 1}})"),
            "WriteResult({ nMatched: 1, nUpserted: 0, nModified: 1 })\n");
  EXPECT_EQ(Show("db.c.update({a: 1}, {$set: {c: 1}}, {multi: true})"),
            "WriteResult({ nMatched: 2, nUpserted: 0, nModified: 2 })\n");
  EXPECT_EQ(Show("db.c.update({_id: 5}, {$set: {a: 5}}, true)"),
            "WriteResult({ nMatched: 0, nUpserted: 1, nModified: 0, _id: 5 })\n");
  EXPECT_EQ(Show("db.c.update({_id: 2}, {replaced: true})"),
            "WriteResult({ nMatched: 1, nUpserted: 0, nModified: 1 })\n");
  EXPECT_EQ(Stored("c", 2), R"({"_id": {"$numberInt": "2"}, "replaced": true})");
  EXPECT_EQ(Show("try { db.c.update({}, {x: 1}, false, true) } catch (e) { e.code }"), "2\n");
  EXPECT_THAT(Show("db.c.update({_id: 1}, {$inc: {a: 'x'}})"),
              HasSubstr("writeError: {\n    code: 14,"));
}

TEST_F(ShellTest, LegacySaveRemoveCount) {
  EXPECT_EQ(Show("db.c.save({_id: 1, v: 1})"),
            "WriteResult({ nMatched: 0, nUpserted: 1, nModified: 0, _id: 1 })\n");
  EXPECT_EQ(Show("db.c.save({_id: 1, v: 2})"),
            "WriteResult({ nMatched: 1, nUpserted: 0, nModified: 1 })\n");
  EXPECT_EQ(Show("db.c.save({v: 3})"), "WriteResult({ nInserted: 1 })\n");
  EXPECT_EQ(Show("db.c.count()"), "2\n");
  Ok("db.c.insert([{k: 1}, {k: 1}, {k: 1}])");
  EXPECT_EQ(Show("db.c.remove({k: 1}, true)"), "WriteResult({ nRemoved: 1 })\n");
  EXPECT_EQ(Show("db.c.remove({k: 1}, {justOne: false})"), "WriteResult({ nRemoved: 2 })\n");
  EXPECT_EQ(Show("db.c.remove({})"), "WriteResult({ nRemoved: 2 })\n");
  EXPECT_EQ(Show("db.c.count()"), "0\n");
}

TEST_F(ShellTest, LegacyFindAndModify) {
  Ok("db.c.insert([{_id: 1, n: 1}, {_id: 2, n: 2}])");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 1}, update: {$inc: {n: 1}}})"),
            "{ _id: 1, n: 1 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 1}, update: {$inc: {n: 1}}, new: true})"),
            "{ _id: 1, n: 3 }\n");
  EXPECT_EQ(
      Show("db.c.findAndModify({query: {}, sort: {n: -1}, update: {$set: {top: true}}, new: true, "
           "fields: {top: 1}})"),
      "{ _id: 1, top: true }\n");
  EXPECT_EQ(
      Show(
          "db.c.findAndModify({query: {_id: 3}, update: {$set: {n: 3}}, upsert: true, new: true})"),
      "{ _id: 3, n: 3 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 2}, update: {whole: 1}, new: true})"),
            "{ _id: 2, whole: 1 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 2}, remove: true})"), "{ _id: 2, whole: 1 }\n");
  EXPECT_EQ(Show("db.c.count()"), "2\n");
}

// ---------------------------------------------------------------- JSON mode

TEST_F(ShellTest, JsonModePrintsRelaxedExtendedJsonLines) {
  OpenShell(/*json=*/true);
  EXPECT_EQ(Show("use other"), "");  // commands are quiet in JSON mode
  EXPECT_EQ(Show("db.c.insertOne({_id: 1, d: new Date(0), l: NumberLong(7), o: "
                 "ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f')})"),
            "{\"acknowledged\": true, \"insertedId\": 1}\n");
  Ok("db.c.insertMany([{_id: 2, x: 1.5}, {_id: 3, t: 'a'}])");
  EXPECT_EQ(Show("db.c.find()"),
            "{\"_id\": 1, \"d\": {\"$date\": \"1970-01-01T00:00:00Z\"}, \"l\": 7, "
            "\"o\": {\"$oid\": \"5f1d7f0b9d3c2a1b2c3d4e5f\"}}\n"
            "{\"_id\": 2, \"x\": 1.5}\n"
            "{\"_id\": 3, \"t\": \"a\"}\n");
  EXPECT_EQ(Show("db.c.find({_id: {$gt: 1}}).toArray()"),
            "{\"_id\": 2, \"x\": 1.5}\n{\"_id\": 3, \"t\": \"a\"}\n");
  EXPECT_EQ(Show("db.c.countDocuments()"), "3\n");
  EXPECT_EQ(Show("'text'"), "\"text\"\n");
  EXPECT_EQ(Show("show collections"), "\"c\"\n");
  EXPECT_EQ(Show("db.c.insert({_id: 9})"), "{\"nInserted\": 1}\n");
  EXPECT_EQ(Run("printjson({a: [1, {b: 2}]}); print({z: 1}, 'raw')"),
            "{\"a\": [1, {\"b\": 2}]}\n{\"z\": 1} raw\n");
}

// ---------------------------------------------------------------- errors

TEST_F(ShellTest, EngineErrorsAreCatchableWithCodeAndName) {
  Ok("db.c.insertOne({_id: 1})");
  EXPECT_EQ(
      Show(R"js(
      try { db.c.insertOne({_id: 1}) }
      catch (e) { [e instanceof MongoServerError, e instanceof Error, e.code === 11000, e.codeName, e.message] })js"),
      "[\n  true,\n  true,\n  true,\n  'DuplicateKey',\n"
      "  'E11000 duplicate key error collection: test.c index: _id_ dup key: { _id: 1 }'\n]\n");
  // With MongoDB's details of a duplicate key (issue 33 #7).
  EXPECT_EQ(Show("try { db.c.insertOne({_id: 1}) } catch (e) { [e.keyPattern, e.keyValue] }"),
            "[ { _id: 1 }, { _id: 1 } ]\n");
  Ok("db.c.createIndex({u: 1}, {unique: true}); db.c.insertMany([{_id: 3, u: 1}, {_id: 4, u: 2}])");
  EXPECT_EQ(Show("try { db.c.findOneAndUpdate({_id: 4}, {$set: {u: 1}}) } "
                 "catch (e) { [e.code, e.keyPattern, e.keyValue] }"),
            "[ 11000, { u: 1 }, { u: 1 } ]\n");
}

TEST_F(ShellTest, UncaughtErrorsPrintOneLineAndTheShellGoesOn) {
  Ok("db.c.insertOne({_id: 1})");
  EXPECT_EQ(Show("db.c.insertOne({_id: 1})"), "");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(),
            "MongoServerError[DuplicateKey]: E11000 duplicate key error collection: test.c "
            "index: _id_ dup key: { _id: 1 }\n");
  EXPECT_EQ(Show("1 + 1"), "2\n");
  EXPECT_TRUE(ok_);
  Show("notDefined + 1");
  EXPECT_EQ(err(), "ReferenceError: notDefined is not defined\n");
  Show("throw 'plain'");
  EXPECT_EQ(err(), "Uncaught 'plain'\n");
  Show("throw new Error('custom')");
  EXPECT_EQ(err(), "Error: custom\n");
}

TEST_F(ShellTest, SyntaxErrorsGiveThePosition) {
  Show("let a = 1;\nlet b = ;");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "SyntaxError: expected expression, got ';' @ <test>:2:9\n");
  EXPECT_TRUE(shell_->IsCompleteEntry("let b = ;"));  // complete, even if wrong
  EXPECT_FALSE(shell_->IsCompleteEntry("function f() {"));
  EXPECT_FALSE(shell_->IsCompleteEntry("db.c.find({"));
  EXPECT_TRUE(shell_->IsCompleteEntry("use library"));
}

TEST_F(ShellTest, RuntimeErrorsInFilesGiveThePosition) {
  std::string path = dir_.Sub("bad.js");
  std::ofstream(path) << "print('one')\nnoSuchFunction()\nprint('never')\n";
  out_.str("");
  EXPECT_FALSE(shell_->RunFile(path));
  EXPECT_EQ(out_.str(), "one\n");
  EXPECT_EQ(err_.str(), "ReferenceError: noSuchFunction is not defined @ " + path + ":2:1\n");
  EXPECT_FALSE(shell_->RunFile(dir_.Sub("missing.js")));
  EXPECT_THAT(err_.str(), HasSubstr("cannot read " + dir_.Sub("missing.js")));
}

TEST_F(ShellTest, ValueConversionErrors) {
  EXPECT_EQ(Show("try { ObjectId('xyz') } catch (e) { [e.name, e.message] }"),
            "[ 'BSONError', 'ObjectId must be a 24-character hex string, got xyz' ]\n");
  EXPECT_EQ(Show("try { NumberDecimal('abc') } catch (e) { e.codeName }"), "FailedToParse\n");
  EXPECT_EQ(Show("try { NumberLong('9223372036854775808') } catch (e) { e.name }"), "BSONError\n");
  EXPECT_EQ(Show("try { ISODate('yesterday') } catch (e) { e.message }"),
            "[COMMON-10001] \"yesterday\" is not a valid ISODate\n");
  EXPECT_EQ(Show("try { UUID('12') } catch (e) { e.name }"), "BSONError\n");
  EXPECT_EQ(Show("try { db.c.insertOne({d: new Date(NaN)}) } catch (e) { [e.name, e.message] }"),
            "[ 'TypeError', 'an invalid Date cannot be stored' ]\n");
  EXPECT_EQ(Show("try { db.c.insertOne({b: 2n ** 64n}) } catch (e) { e.name }"), "TypeError\n");
  EXPECT_EQ(Show("try { db.c.insertOne('text') } catch (e) { e.message }"),
            "document must be an object\n");
  EXPECT_EQ(Show("try { db.c.find([1]).toArray() } catch (e) { e.message }"),
            "BSON field 'find.filter' is the wrong type 'array', expected type 'object'\n");
  EXPECT_EQ(Show("const o = {}; o.self = o; try { db.c.insertOne(o) } catch (e) { e.message }"),
            "object nested too deeply (or cyclic) to convert to BSON\n");
  EXPECT_EQ(Show("try { db.c.insertOne({_id: [1]}) } catch (e) { e.codeName }"), "BadValue\n");
  EXPECT_EQ(Show("db.c.countDocuments()"), "0\n");
}

TEST_F(ShellTest, DocumentsOverSixteenMegabytesAreRejected) {
  // The engine reports the same size Object.bsonsize computes.
  EXPECT_EQ(Show("const big = {_id: 1, s: 'x'.repeat(16 * 1024 * 1024)}; "
                 "try { db.c.insertOne(big) } catch (e) { [e.code, e.message.split(',')[0]] }"),
            "[ 2, 'object to insert too large. size in bytes: 16777238' ]\n");
  EXPECT_EQ(Show("Object.bsonsize(big)"), "16777238\n");
  EXPECT_EQ(
      Show("Object.bsonsize({_id: 1, s: 'x'.repeat(16 * 1024 * 1024 - 30)}) <= 16 * 1024 * 1024 && "
           "db.c.insertOne({_id: 2, s: 'x'.repeat(16 * 1024 * 1024 - 30)}).insertedId"),
      "2\n");
  EXPECT_EQ(Show("db.c.countDocuments()"), "1\n");
}

TEST_F(ShellTest, LoadErrors) {
  EXPECT_EQ(Show("try { load('/nonexistent/x.js') } catch (e) { [e.code, e.codeName] }"),
            "[ 38, 'FileNotOpen' ]\n");
  std::string path = dir_.Sub("throws.js");
  std::ofstream(path) << "throw new Error('from file')\n";
  EXPECT_EQ(Show("try { load('" + path + "') } catch (e) { e.message }"), "from file\n");
}

// A statement started when it starts: an interrupt requested before that is
// dropped (Evaluate clears it), so the interrupter asks again until the
// statement has ended, instead of guessing when it is running.
void InterruptUntil(Shell* shell, const std::atomic<bool>& done) {
  while (!done.load()) {
    shell->RequestInterrupt();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST_F(ShellTest, InterruptStopsTheRunningStatement) {
  std::atomic<bool> done{false};
  std::thread interrupter([&] { InterruptUntil(shell_.get(), done); });
  Show("let spins = 0; while (true) { spins++ }");
  done = true;
  interrupter.join();
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "Interrupted: the statement was stopped\n");
  EXPECT_FALSE(shell_->exit_requested());
  EXPECT_EQ(Show("typeof spins"), "number\n");  // the shell goes on, with the statement's state
  // A native wait is interruptible too (it would otherwise end after a minute, ok).
  std::atomic<bool> slept{false};
  std::thread again([&] { InterruptUntil(shell_.get(), slept); });
  Show("sleep(60000)");
  slept = true;
  again.join();
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "Interrupted: the statement was stopped\n");
}

// maxTimeMS reaches every operation that takes it (issue 11 #10), through a
// test clock that advances 1 ms at every read, so that expiry does not
// depend on the machine's speed.
int64_t MillisecondPerReadClock() {
  static std::atomic<int64_t> now{1};
  return now.fetch_add(1000000);
}

TEST_F(ShellTest, MaxTimeMSReachesEveryOperation) {
  Ok("db.c.insertMany(Array.from({length: 3000}, (_, i) => ({_id: i, a: i % 10})))");
  const std::string expiring[] = {
      "db.c.find({x: 1}).maxTimeMS(LIMIT).toArray()",
      "db.c.find({x: 1}, {}, {maxTimeMS: LIMIT}).toArray()",
      "db.c.findOne({x: 1}, {}, {maxTimeMS: LIMIT})",
      "db.c.countDocuments({x: 1}, {maxTimeMS: LIMIT})",
      "db.c.distinct('a', {x: 1}, {maxTimeMS: LIMIT})",
      "db.c.updateOne({x: 1}, {$set: {y: 1}}, {maxTimeMS: LIMIT})",
      "db.c.updateMany({x: 1}, {$set: {y: 1}}, {maxTimeMS: LIMIT})",
      "db.c.deleteOne({x: 1}, {maxTimeMS: LIMIT})",
      "db.c.deleteMany({x: 1}, {maxTimeMS: LIMIT})",
      "db.c.findOneAndUpdate({x: 1}, {$set: {y: 1}}, {maxTimeMS: LIMIT})",
      "db.c.findOneAndReplace({x: 1}, {y: 1}, {maxTimeMS: LIMIT})",
      "db.c.findOneAndDelete({x: 1}, {maxTimeMS: LIMIT})",
  };
  auto with_limit = [](std::string code, std::string_view limit) {
    return code.replace(code.find("LIMIT"), 5, limit);
  };
  internal::SetClockForTesting(&MillisecondPerReadClock);
  for (const std::string& code : expiring) {
    EXPECT_EQ(
        Show("try { " + with_limit(code, "5") + "; 'no error' } catch (e) { [e.code, e.message] }"),
        "[ 50, 'operation exceeded time limit' ]\n")
        << code;
  }
  internal::SetClockForTesting(nullptr);
  for (const std::string& code : expiring) Ok(with_limit(code, "600000"));
  EXPECT_EQ(Show("db.c.find({a: 1}).maxTimeMS(600000).itcount()"), "300\n");
}

TEST_F(ShellTest, PromisesAreAwaitedForDisplay) {
  EXPECT_EQ(Show("Promise.resolve(41).then(x => x + 1)"), "42\n");
  EXPECT_EQ(Show("(async () => db.c.insertOne({_id: 1}).insertedId)()"), "1\n");
  Show("Promise.reject(new Error('no'))");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "Error: no\n");
}

// ---------------------------------------------------------------- nothing silently wrong

// The value of `e.code` as the shell prints it.
std::string CodeLine(ErrorCode code) { return std::to_string(static_cast<int>(code)) + "\n"; }

TEST_F(ShellTest, AFunctionInAFilterIsCodeNotDropped) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}, {_id: 3, a: 3}])");
  // $where with a function fails as the string form does, before anything
  // runs (the function used to vanish and the filter matched everything).
  EXPECT_EQ(Show("try { db.c.deleteMany({$where: function() { return this.a == 2 }}) } "
                 "catch (e) { e.code }"),
            CodeLine(ErrorCode::kNotImplemented));
  EXPECT_EQ(
      Show("try { db.c.deleteMany({$where: function() { return this.a == 2 }}) } "
           "catch (e) { [e.name, e.message] }"),
      Show("try { db.c.deleteMany({$where: 'this.a == 2'}) } catch (e) { [e.name, e.message] }"));
  EXPECT_EQ(Coll("c").EstimatedDocumentCount().value(), 3);
  // A function is BSON JavaScript code (mongosh's serializeFunctions):
  // equal to no stored value here.
  EXPECT_EQ(Show("db.c.deleteMany({a: function(){}}).deletedCount"), "0\n");
  EXPECT_EQ(Show("db.c.updateMany({a: function(){}}, {$set: {x: 1}}).matchedCount"), "0\n");
  EXPECT_EQ(Coll("c").EstimatedDocumentCount().value(), 3);
  EXPECT_EQ(Show("db.c.explain().deleteMany({a: function(){}}).queryPlanner.parsedQuery"),
            "{ a: { $eq: Code('function(){}') } }\n");
  // In documents, updates and arrays it is stored as code, as mongosh stores it.
  Ok("db.c.insertOne({_id: 4, f: function () { return 1; }, l: [function(){}]})");
  Ok("db.c.updateOne({_id: 1}, {$set: {g: function(){}}})");
  EXPECT_EQ(Stored("c", 4),
            R"({"_id": {"$numberInt": "4"}, "f": {"$code": "function () { return 1; }"}, )"
            R"("l": [{"$code": "function(){}"}]})");
  EXPECT_EQ(
      Stored("c", 1),
      R"({"_id": {"$numberInt": "1"}, "a": {"$numberInt": "1"}, "g": {"$code": "function(){}"}})");
}

TEST_F(ShellTest, ValuesWithNoBsonFormAreRefusedBeforeAnythingRuns) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}])");
  // Anywhere in a document, filter, update or option: an error, not a gap.
  EXPECT_EQ(
      Show("try { db.c.insertOne({_id: 3, s: Symbol('x')}) } catch (e) { [e.name, e.message] }"),
      "[ 'TypeError', 'cannot convert a Symbol to BSON' ]\n");
  EXPECT_EQ(Show("try { db.c.insertOne({_id: 3, l: [1, Symbol('x')]}) } catch (e) { e.message }"),
            "cannot convert a Symbol to BSON\n");
  EXPECT_EQ(Show("try { db.c.deleteMany({a: Symbol('x')}) } catch (e) { e.message }"),
            "cannot convert a Symbol to BSON\n");
  EXPECT_EQ(Show("try { db.c.updateMany({}, {$set: {s: new Set([1])}}) } catch (e) { e.message }"),
            "cannot convert a Set to BSON\n");
  EXPECT_EQ(Show("try { db.c.find({}, {}, {sort: {a: new WeakMap()}}).toArray() } catch (e) { "
                 "e.message }"),
            "cannot convert a WeakMap to BSON\n");
  EXPECT_EQ(Show("try { db.c.insertOne({p: Promise.resolve(1)}) } catch (e) { e.message }"),
            "cannot convert a Promise to BSON\n");
  EXPECT_EQ(Show("try { db.c.insertOne({b: new ArrayBuffer(2)}) } catch (e) { e.message }"),
            "cannot convert an ArrayBuffer to BSON\n");
  EXPECT_EQ(Show("try { db.c.insertOne({i: new Map().keys()}) } catch (e) { e.message }"),
            "cannot convert an iterator to BSON\n");
  EXPECT_EQ(Show("function T() {} T.prototype._bsontype = 'Nope'; "
                 "try { db.c.insertOne({t: new T()}) } catch (e) { e.message }"),
            "Unrecognized or invalid _bsontype: Nope\n");
  // Where a document belongs, a value that is not one is refused (by the
  // command, with MongoDB's message): an ObjectId has no fields, and read
  // as {} it would match every document.
  EXPECT_EQ(Show("try { db.c.deleteOne(ObjectId()) } catch (e) { [e.name, e.codeName] }"),
            "[ 'MongoServerError', 'TypeMismatch' ]\n");
  EXPECT_EQ(Show("try { db.c.deleteMany(new Date()) } catch (e) { e.message }"),
            "BSON field 'delete.deletes.q' is the wrong type 'date', expected type 'object'\n");
  EXPECT_EQ(Show("try { db.c.updateMany(function(){}, {$set: {x: 1}}) } catch (e) { e.message }"),
            "BSON field 'update.updates.q' is the wrong type 'javascript', expected type "
            "'object'\n");
  EXPECT_EQ(Show("try { db.c.deleteMany(null) } catch (e) { e.message }"),
            "BSON field 'delete.deletes.q' is the wrong type 'null', expected type 'object'\n");
  EXPECT_EQ(
      Show("try { db.c.find({}, {}, {hint: function(){}}).toArray() } catch (e) { e.message }"),
      "BSON field 'find.hint' is the wrong type 'javascript', expected types '[string, "
      "object]'\n");
  EXPECT_EQ(Coll("c").EstimatedDocumentCount().value(), 2);
  EXPECT_EQ(Stored("c", 1), R"({"_id": {"$numberInt": "1"}, "a": {"$numberInt": "1"}})");
  // A Map is the document of its entries (js-bson), in a value or as one.
  Ok("db.c.insertOne({_id: 3, m: new Map([['x', 1], ['y', [2]]])})");
  EXPECT_EQ(
      Stored("c", 3),
      R"({"_id": {"$numberInt": "3"}, "m": {"x": {"$numberInt": "1"}, "y": [{"$numberInt": "2"}]}})");
  EXPECT_EQ(Show("db.c.find(new Map([['_id', 3]])).count()"), "1\n");
  EXPECT_EQ(Show("try { db.c.insertOne({m: new Map([[1, 1]])}) } catch (e) { e.message }"),
            "a Map needs string keys to convert to BSON\n");
}

TEST_F(ShellTest, RequiredArgumentsAreRequired) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}])");
  // deleteMany(), deleteOne() and remove() deleted documents; mongosh refuses.
  EXPECT_EQ(Show("try { db.c.deleteMany() } catch (e) { [e.name, e.code, e.message] }"),
            "[\n  'MongoshInvalidInputError',\n  2,\n  '[COMMON-10001] Missing required argument "
            "at position 0 (Collection.deleteMany)'\n]\n");
  EXPECT_EQ(Show("try { db.c.deleteMany() } catch (e) { e.code }"), CodeLine(ErrorCode::kBadValue));
  Show("db.c.deleteOne()");
  EXPECT_EQ(err(),
            "MongoshInvalidInputError: [COMMON-10001] Missing required argument "
            "at position 0 (Collection.deleteOne)\n");
  Show("db.c.remove()");
  EXPECT_THAT(err(), HasSubstr("Missing required argument at position 0 (Collection.remove)"));
  Show("db.c.explain().deleteMany()");
  EXPECT_THAT(err(), HasSubstr("Missing required argument at position 0 (Collection.deleteMany)"));
  EXPECT_EQ(Coll("c").EstimatedDocumentCount().value(), 2);
  // The same table covers every method whose arguments mongosh requires.
  const std::pair<const char*, const char*> kCalls[] = {
      {"db.c.updateOne()", "0 (Collection.updateOne)"},
      {"db.c.updateOne({})", "1 (Collection.updateOne)"},
      {"db.c.updateMany({_id: 1})", "1 (Collection.updateMany)"},
      {"db.c.update({})", "1 (Collection.update)"},
      {"db.c.replaceOne({})", "1 (Collection.replaceOne)"},
      {"db.c.findOneAndUpdate({})", "1 (Collection.findOneAndUpdate)"},
      {"db.c.findOneAndReplace({})", "1 (Collection.findOneAndReplace)"},
      {"db.c.findOneAndDelete()", "0 (Collection.findOneAndDelete)"},
      {"db.c.findAndModify()", "0 (Collection.findAndModify)"},
      {"db.c.insertOne()", "0 (Collection.insertOne)"},
      {"db.c.insertMany()", "0 (Collection.insertMany)"},
      {"db.c.insert()", "0 (Collection.insert)"},
      {"db.c.save()", "0 (Collection.save)"},
      {"db.c.createIndex()", "0 (Collection.createIndex)"},
      {"db.c.createIndexes()", "0 (Collection.createIndexes)"},
      {"db.c.dropIndex()", "0 (Collection.dropIndex)"},
      {"db.c.distinct()", "0 (Collection.distinct)"},
      {"db.c.renameCollection()", "0 (Collection.renameCollection)"},
      {"db.c.explain().updateOne({})", "1 (Collection.updateOne)"},
      {"db.getSiblingDB()", "0 (Database.getSiblingDB)"},
      {"db.createCollection()", "0 (Database.createCollection)"},
      {"db.getMongo().getDB()", "0 (Mongo.getDB)"},
  };
  for (const auto& [call, what] : kCalls) {
    EXPECT_EQ(Show(std::string("try { ") + call + " } catch (e) { [e.name, e.code, e.message] }"),
              std::string("[\n  'MongoshInvalidInputError',\n  2,\n  '[COMMON-10001] Missing "
                          "required argument at position ") +
                  what + "'\n]\n")
        << call;
  }
  EXPECT_EQ(Show("try { db.c.findAndModify({remove: true}) } catch (e) { e.message }"),
            "[COMMON-10001] Missing required property: \"query\"\n");
  EXPECT_EQ(Coll("c").EstimatedDocumentCount().value(), 2);
  EXPECT_EQ(Stored("c", 1), R"({"_id": {"$numberInt": "1"}, "a": {"$numberInt": "1"}})");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
}

// Issue 33.15: an uncaught mongosh error prints its code once, as mongosh
// prints it (the message holds "[COMMON-10001]"; no "[BadValue]" too).
TEST_F(ShellTest, MongoshErrorsPrintTheirCodeOnce) {
  Show("ISODate('2024-02-30')");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(),
            "MongoshInvalidInputError: [COMMON-10001] \"2024-02-30\" is not a valid ISODate\n");
  EXPECT_EQ(Show("try { ISODate('2024-02-30') } catch (e) { [e.code, e.codeName] }"),
            "[ 2, 'BadValue' ]\n");
  Show("db.c.insertOne({_id: 1}); db.c.insertOne({_id: 1})");  // server errors keep theirs
  EXPECT_THAT(err(), StartsWith("MongoServerError[DuplicateKey]: E11000"));
}

// Issue 33.15: NumberLong and NumberDecimal given a number warn as mongosh
// does (the number may have lost precision before the call); a string, Long
// or Decimal128 does not warn.
TEST_F(ShellTest, NumberLongAndNumberDecimalWarnOfANumberArgument) {
  EXPECT_EQ(Show("NumberLong(9007199254740993)"), "Long('9007199254740992')\n");
  EXPECT_EQ(err(),
            "Warning: NumberLong: specifying a number as argument is deprecated and may lead to "
            "loss of precision, pass a string instead\n");
  EXPECT_EQ(Show("NumberDecimal(0.1)"), "Decimal128('0.1')\n");
  EXPECT_EQ(err(),
            "Warning: NumberDecimal: specifying a number as argument is deprecated and may lead "
            "to loss of precision, pass a string instead\n");
  for (const char* quiet : {"NumberLong('9007199254740993')", "Long(5)", "NumberLong(Long('7'))",
                            "NumberDecimal('0.1')", "Decimal128(0.5)", "NumberLong()"}) {
    Show(quiet);
    EXPECT_TRUE(ok_) << quiet;
    EXPECT_EQ(err(), "") << quiet;
  }
  EXPECT_EQ(Show("NumberLong('9007199254740993') instanceof NumberLong"), "true\n");
  EXPECT_EQ(Show("new NumberLong('7')"), "Long('7')\n");
  EXPECT_EQ(Show("new NumberDecimal('0.5') instanceof Decimal128"), "true\n");
  EXPECT_EQ(err(), "");
}

// Issue 33.14: what Tab offers, as mongosh completes.
TEST_F(ShellTest, CompletionOffersCollectionsMethodsAndOperators) {
  Ok("db.books.insertOne({_id: 1}); db.bookings.insertOne({_id: 1}); db.users.insertOne({_id: 1})");
  using ::testing::Contains;
  using ::testing::ElementsAre;
  using ::testing::Not;
  // db.<TAB>: collection names and database methods.
  EXPECT_THAT(shell_->Complete("db.boo"), ElementsAre("db.bookings", "db.books"));
  auto db_all = shell_->Complete("db.");
  EXPECT_THAT(db_all, Contains("db.users"));
  EXPECT_THAT(db_all, Contains("db.getCollectionNames"));
  EXPECT_THAT(db_all, Not(Contains("db._run")));
  EXPECT_THAT(shell_->Complete("db.getColl"),
              ElementsAre("db.getCollection", "db.getCollectionInfos", "db.getCollectionNames"));
  // db.coll.<TAB>: collection methods; after find(...) the cursor's.
  EXPECT_THAT(shell_->Complete("db.books.insertM"), ElementsAre("db.books.insertMany"));
  EXPECT_THAT(shell_->Complete("db.books.find({a: 1}).so"),
              ElementsAre("db.books.find({a: 1}).sort"));
  EXPECT_THAT(shell_->Complete("db.books.aggregate([]).to"),
              ElementsAre("db.books.aggregate([]).toArray"));
  EXPECT_THAT(shell_->Complete("db.books.aggregate([]).so"), ElementsAre());  // no sort there
  // $ in a filter: query operators; in an update's second argument: update
  // operators; at a pipeline's top level: stages; inside a stage:
  // expression operators and accumulators.
  EXPECT_THAT(shell_->Complete("db.books.find({year: {$gt"),
              ElementsAre("db.books.find({year: {$gt", "db.books.find({year: {$gte"));
  EXPECT_THAT(shell_->Complete("db.books.find({'year': {\"$exi"),
              ElementsAre("db.books.find({'year': {\"$exists"));
  EXPECT_THAT(shell_->Complete("db.books.updateOne({_id: 1}, {$in"),
              ElementsAre("db.books.updateOne({_id: 1}, {$inc"));
  EXPECT_THAT(shell_->Complete("db.books.updateOne({_id: {$in"),
              ElementsAre("db.books.updateOne({_id: {$in"));
  EXPECT_THAT(shell_->Complete("db.books.aggregate([{$match: {}}, {$gro"),
              ElementsAre("db.books.aggregate([{$match: {}}, {$group"));
  EXPECT_THAT(shell_->Complete("db.books.aggregate([{$group: {_id: null, n: {$ad"),
              ElementsAre("db.books.aggregate([{$group: {_id: null, n: {$add",
                          "db.books.aggregate([{$group: {_id: null, n: {$addToSet"));
  // Commands and globals at the start; `show` and `use` arguments.
  EXPECT_THAT(shell_->Complete("sh"), Contains("show"));
  EXPECT_THAT(shell_->Complete("Object"), Contains("ObjectId"));
  EXPECT_THAT(shell_->Complete("show coll"), ElementsAre("show collections"));
  EXPECT_THAT(shell_->Complete("use te"), ElementsAre("use test"));
  // Nothing fits: nothing offered, and nothing ran.
  EXPECT_THAT(shell_->Complete("db.books.nosuch"), ElementsAre());
  EXPECT_THAT(shell_->Complete("1 + 2 +"), ElementsAre());
}

// Issue 33.13: `.help` works as in mongosh (the REPL's commands too), and
// `help`; `.exit` leaves.
TEST_F(ShellTest, DotHelpAndHelp) {
  EXPECT_THAT(Show("help"), HasSubstr("show collections"));
  EXPECT_THAT(Show(".help"), HasSubstr("show collections"));
  EXPECT_THAT(Show(".help"), HasSubstr(".exit"));
  EXPECT_TRUE(ok_) << err();
  Show(".exit");
  EXPECT_TRUE(shell_->exit_requested());
}

TEST_F(ShellTest, IsoDateRefusesImpossibleDatesAndKeepsEarlyYears) {
  for (const char* text : {"2020-13-45", "2020-00-10", "2020-02-30", "2021-02-29", "1900-02-29",
                           "2020-04-31", "2020-01-00", "2020-01-01T24:00:00Z", "2020-01-01T23:60",
                           "2020-01-01T23:59:60Z", "2020-01-01T00:00:00+24:00",
                           "0000-01-01T00:00:00+01:00", "25-03-19", " 2020-01-01", "2020-01-01Z"}) {
    EXPECT_EQ(Show(std::string("try { ISODate('") + text +
                   "') } catch (e) { [e.name, e.code, e.message] }"),
              std::string("[\n  'MongoshInvalidInputError',\n  2,\n  '[COMMON-10001] \"") + text +
                  "\" is not a valid ISODate'\n]\n")
        << text;
  }
  EXPECT_EQ(Show("try { ISODate(NaN) } catch (e) { e.code }"), CodeLine(ErrorCode::kBadValue));
  // Years 0-99 stay as written (Date.UTC read 0099 as 1999).
  EXPECT_EQ(Show("ISODate('0099-06-01T00:00:00Z')"), "ISODate('0099-06-01T00:00:00.000Z')\n");
  EXPECT_EQ(Show("ISODate('0000-01-01').getTime()"), "-62167219200000\n");
  EXPECT_EQ(Show("ISODate('0001-01-01').getTime()"), "-62135596800000\n");
  EXPECT_EQ(Show("ISODate('0099-06-01').getTime()"), "-59029948800000\n");
  EXPECT_EQ(Show("ISODate('0100-01-01').getTime()"), "-59011459200000\n");
  EXPECT_EQ(Show("ISODate('2000-02-29').getTime()"), "951782400000\n");
  EXPECT_EQ(Show("ISODate('9999-12-31T23:59:59.999Z').getTime()"), "253402300799999\n");
  EXPECT_EQ(Show("ISODate('20201002T102950.8429+0200')"), "ISODate('2020-10-02T08:29:50.842Z')\n");
  EXPECT_EQ(Show("ISODate(null).getTime()"), "0\n");
  // Stored and read back as the same date, years below 100 included.
  Ok("db.d.insertOne({_id: 1, y0: ISODate('0000-01-01'), y99: ISODate('0099-06-01'), "
     "y100: new Date(ISODate('0100-01-01').getTime())})");
  EXPECT_EQ(Stored("d", 1),
            R"({"_id": {"$numberInt": "1"}, "y0": {"$date": {"$numberLong": "-62167219200000"}}, )"
            R"("y99": {"$date": {"$numberLong": "-59029948800000"}}, )"
            R"("y100": {"$date": {"$numberLong": "-59011459200000"}}})");
  EXPECT_EQ(Show("db.d.findOne().y99"), "ISODate('0099-06-01T00:00:00.000Z')\n");
}

// db.runCommand and db.adminCommand run the command layer, returning its
// reply and throwing MongoServerError on ok: 0, as mongosh.
TEST_F(ShellTest, RunCommandRunsTheCommandLayer) {
  EXPECT_EQ(Show("db.runCommand({ping: 1})"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.runCommand('ping')"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.runCommand({insert: 'c', documents: [{_id: 1}, {_id: 2}]}).n"), "2\n");
  EXPECT_EQ(Show("db.runCommand({find: 'c', filter: {_id: 2}}).cursor.firstBatch"),
            "[ { _id: 2 } ]\n");
  EXPECT_EQ(Show("db.hello().isWritablePrimary"), "true\n");
  EXPECT_EQ(Show("db.serverBuildInfo().version"), "7.0.0\n");
  EXPECT_EQ(Show("try { db.runCommand({bogus: 1}) } catch (e) { [e.name, e.code, e.codeName, "
                 "e.message] }"),
            "[\n  'MongoServerError',\n  59,\n  'CommandNotFound',\n  \"no such command: "
            "'bogus'\"\n]\n");
  EXPECT_EQ(Show("try { db.adminCommand({renameCollection: 'test.c', to: 'test.d'}); "
                 "db.d.countDocuments({}) } catch (e) { e.message }"),
            "2\n");
  EXPECT_EQ(Show("try { db.runCommand({collMod: 'd', index: {name: 'x', expireAfterSeconds: 5}}) "
                 "} catch (e) { e.codeName }"),
            "IndexNotFound\n");
}

// bulkWrite: the six models as insert/update/delete commands, with
// mongosh's result and MongoBulkWriteError.
TEST_F(ShellTest, BulkWriteRunsTheSixModels) {
  Ok("db.c.insertOne({_id: 1, a: 1})");
  EXPECT_EQ(Show(R"(
    const r = db.c.bulkWrite([
      {insertOne: {document: {_id: 2, a: 2}}},
      {insertOne: {document: {_id: 3}}},
      {updateOne: {filter: {_id: 1}, update: {$set: {a: 10}}}},
      {updateMany: {filter: {}, update: {$inc: {n: 1}}}},
      {replaceOne: {filter: {_id: 3}, replacement: {b: 1}}},
      {updateOne: {filter: {_id: 9}, update: {$set: {a: 9}}, upsert: true}},
      {deleteOne: {filter: {_id: 2}}},
      {deleteMany: {filter: {a: {$gt: 100}}}},
    ]);
    [r.acknowledged, r.insertedCount, r.matchedCount, r.modifiedCount, r.deletedCount,
     r.upsertedCount, r.upsertedIds[5], r.insertedIds[0], r.insertedIds[1]].join(' ')
  )"),
            "true 2 5 5 1 1 9 2 3\n")
      << err();
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).toArray()"),
            "[ { _id: 1, a: 10, n: 1 }, { _id: 3, b: 1 }, { _id: 9, a: 9 } ]\n");
  // Ordered: the first error stops the rest.
  EXPECT_EQ(Show(R"(
    try { db.c.bulkWrite([{insertOne: {document: {_id: 1}}}, {insertOne: {document: {_id: 20}}}]) }
    catch (e) { [e.name, e.code, e.writeErrors.length, e.writeErrors[0].index, e.result.insertedCount] }
  )"),
            "[ 'MongoBulkWriteError', 11000, 1, 0, 0 ]\n");
  EXPECT_EQ(Show("db.c.countDocuments({_id: 20})"), "0\n");
  // Unordered: every operation runs, every error is reported (an unknown
  // update operator is found running the statement: a write error; an
  // unknown field of a statement fails its whole command, as mongod's
  // parse of the request).
  EXPECT_EQ(Show(R"(
    try { db.c.bulkWrite([{insertOne: {document: {_id: 1}}}, {insertOne: {document: {_id: 21}}},
                          {updateOne: {filter: {_id: 21}, update: {$bogus: {a: 1}}}}], {ordered: false}) }
    catch (e) { [e.writeErrors.map((w) => w.index + ':' + w.codeName), e.result.insertedCount] }
  )"),
            "[ [ '0:DuplicateKey', '2:FailedToParse' ], 1 ]\n");
  EXPECT_EQ(Show(R"(
    try { db.c.bulkWrite([{deleteOne: {filter: {_id: 21}, bogus: 1}}], {ordered: false}) }
    catch (e) { [e.name, e.code] }
  )"),
            "[ 'MongoServerError', 40415 ]\n");
  EXPECT_EQ(Show("db.c.countDocuments({_id: 21})"), "1\n");
  // Options are the commands' fields: an unknown one is refused by them.
  EXPECT_EQ(Show("try { db.c.bulkWrite([{insertOne: {document: {}}}], {bogus: 1}) } "
                 "catch (e) { e.code + ' ' + e.message }"),
            "40415 BSON field 'insert.bogus' is an unknown field.\n");
  EXPECT_EQ(Show("try { db.c.bulkWrite([{frob: {}}]) } catch (e) { e.name }"),
            "MongoInvalidArgumentError\n");
}

// mongosh's db.aggregate: a pipeline without a collection.
TEST_F(ShellTest, DatabaseAggregate) {
  EXPECT_EQ(Show("db.aggregate([{$documents: [{a: 1}, {a: 2}]}, {$match: {a: {$gt: 1}}}]).toArray()"),
            "[ { a: 2 } ]\n");
  EXPECT_EQ(Show("db.aggregate([{$documents: [{a: 1}, {a: 2}, {a: 3}]}], {batchSize: 1}).toArray().length"),
            "3\n");
  EXPECT_EQ(Show("db.c.aggregate([{$project: {_id: 0, v: '$$x'}}], {let: {x: 5}}).toArray()"), "[]\n");
  Ok("db.c.insertOne({_id: 1})");
  EXPECT_EQ(Show("db.c.aggregate([{$project: {_id: 0, v: '$$x'}}], {let: {x: 5}}).toArray()"), "[ { v: 5 } ]\n");
}

// mongosh's update pipelines: an array of stages instead of operators.
TEST_F(ShellTest, UpdatePipelines) {
  Ok("db.c.insertMany([{_id: 1, a: 2, b: 3}, {_id: 2, a: 10, b: 1, old: true}])");
  EXPECT_EQ(Show("db.c.updateOne({_id: 1}, [{$set: {total: {$add: ['$a', '$b']}}}, {$unset: 'b'}]).modifiedCount"),
            "1\n");
  EXPECT_EQ(Show("db.c.findOne({_id: 1})"), "{ _id: 1, a: 2, total: 5 }\n");
  EXPECT_EQ(Show("db.c.updateMany({}, [{$replaceWith: {$mergeObjects: [{n: 0}, '$$ROOT']}}]).modifiedCount"),
            "2\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 2}, [{$project: {a: 1}}], {returnDocument: 'after'})"),
            "{ _id: 2, a: 10 }\n");
  // A stage an update does not run, checked by the server side.
  EXPECT_EQ(Show("try { db.c.updateOne({}, [{$match: {}}]) } catch (e) { [e.code, e.message] }"),
            "[ 72, '$match is not allowed to be used within an update' ]\n");
}

TEST_F(ShellTest, MongoshNamesRockdocLacksSayNotSupported) {
  Ok("db.c.insertOne({_id: 1})");
  const std::pair<const char*, const char*> kCalls[] = {
      {"db.c.watch()", "Collection.watch"},
      {"db.c.latencyStats()", "Collection.latencyStats"},
      {"db.c.initializeOrderedBulkOp()", "Collection.initializeOrderedBulkOp"},
      {"db.currentOp()", "Database.currentOp"},
      {"db.createUser({user: 'u'})", "Database.createUser"},
      {"db.getMongo().watch()", "Mongo.watch"},
      {"db.c.find().tailable()", "Cursor.tailable"},
      {"db.c.find().collation({locale: 'en'})", "Cursor.collation"},
      {"rs.status()", "rs.status"},
      {"sh.status()", "sh.status"},
      {"connect('mongodb://x')", "connect"},
  };
  for (const auto& [call, what] : kCalls) {
    EXPECT_EQ(
        Show(std::string("try { ") + call + " } catch (e) { [e.name, e.codeName, e.message] }"),
        std::string("[\n  'MongoshUnimplementedError',\n  'NotImplemented',\n  '") + what +
            " is not supported by rockdoc'\n]\n")
        << call;
    EXPECT_EQ(Show(std::string("try { ") + call + " } catch (e) { e.code }"),
              CodeLine(ErrorCode::kNotImplemented))
        << call;
  }
  // A mongosh method name is a method, not the sub-collection "c.totalSize";
  // other names still are sub-collections, as in MongoDB.
  EXPECT_EQ(Show("typeof db.c.latencyStats"), "function\n");
  EXPECT_EQ(Show("typeof db.runCommand"), "function\n");
  EXPECT_EQ(Show("db.a.b.getFullName()"), "test.a.b\n");
  Ok("db.a.b.insertOne({_id: 7})");
  EXPECT_EQ(Show("db.a.b.find().toArray()"), "[ { _id: 7 } ]\n");
  EXPECT_EQ(Coll("a.b").EstimatedDocumentCount().value(), 1);
  // What rockdoc has of them works.
  EXPECT_EQ(Show("db.getMongo().getDBNames()"), "[ 'admin', 'config', 'local', 'test' ]\n");
  EXPECT_EQ(Show("db.getMongo().getDB('test').c.countDocuments({})"), "1\n");
  EXPECT_EQ(Show("db.c.isCapped()"), "false\n");
  EXPECT_EQ(Show("db.c.getIndices().length"), "1\n");
}

TEST_F(ShellTest, ConsoleLogPrintsAsPrint) {
  EXPECT_EQ(Run("console.log('a', 1, {b: 2}); console.info('i')"), "a 1 { b: 2 }\ni\n");
  EXPECT_EQ(Run("console.error('e', [1])"), "");
  EXPECT_EQ(err(), "e [ 1 ]\n");
}

TEST_F(ShellTest, InsertManyOfNothingFailsAsTheDriverDoes) {
  EXPECT_EQ(Show("try { db.c.insertMany([]) } catch (e) { [e.name, e.code, e.message] }"),
            "[\n  'MongoInvalidArgumentError',\n  2,\n  'Invalid BulkOperation, Batch cannot be "
            "empty'\n]\n");
  EXPECT_EQ(Show("try { db.c.insert([]) } catch (e) { e.message }"),
            "Invalid BulkOperation, Batch cannot be empty\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[]\n");
}

TEST_F(ShellTest, EjsonStringifyWritesWhatJsBsonWrites) {
  // js-bson's documented examples.
  EXPECT_EQ(Show("EJSON.stringify({int32: NumberInt(10)}, {relaxed: false})"),
            R"({"int32":{"$numberInt":"10"}})"
            "\n");
  EXPECT_EQ(Show("EJSON.stringify({int32: NumberInt(10)})"), R"({"int32":10})"
                                                             "\n");
  // Relaxed (the default): Long as a number, dates 1970-9999 as ISO text
  // without zero milliseconds, non-finite doubles as $numberDouble.
  EXPECT_EQ(
      Show("EJSON.stringify({l: NumberLong('5'), d: ISODate('2020-01-02'), "
           "m: ISODate('2020-01-02T03:04:05.006Z'), old: new Date(-1000), x: 1.5, n: 3, "
           "inf: Infinity, dbl: Double(3), big: 7n})"),
      R"({"l":5,"d":{"$date":"2020-01-02T00:00:00Z"},"m":{"$date":"2020-01-02T03:04:05.006Z"},)"
      R"("old":{"$date":{"$numberLong":"-1000"}},"x":1.5,"n":3,)"
      R"("inf":{"$numberDouble":"Infinity"},"dbl":3,"big":7})"
      "\n");
  // Canonical: every number typed; plain integers as the smallest type.
  EXPECT_EQ(
      Show("EJSON.stringify({l: NumberLong('5'), d: ISODate('2020-01-02'), x: 1.5, n: 3, "
           "n64: 3e9, mz: -0, dbl: Double(3), nz: Double(-0), big: 7n}, {relaxed: false})"),
      R"({"l":{"$numberLong":"5"},"d":{"$date":{"$numberLong":"1577923200000"}},)"
      R"("x":{"$numberDouble":"1.5"},"n":{"$numberInt":"3"},"n64":{"$numberLong":"3000000000"},)"
      R"("mz":{"$numberDouble":"-0.0"},"dbl":{"$numberDouble":"3.0"},"nz":{"$numberDouble":"-0.0"},)"
      R"("big":{"$numberLong":"7"}})"
      "\n");
  EXPECT_EQ(
      Show("EJSON.stringify({o: ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f'), dec: NumberDecimal('1.50'), "
           "b: BinData(0, 'AQID'), u: UUID('00112233-4455-6677-8899-aabbccddeeff'), "
           "t: Timestamp({t: 1, i: 2}), r: /a.c/mi, min: MinKey(), max: MaxKey(), "
           "c: Code('f()'), s: 'x', nil: null, undef: undefined, f: function(){}, "
           "arr: [undefined, function(){}]})"),
      R"({"o":{"$oid":"5f1d7f0b9d3c2a1b2c3d4e5f"},"dec":{"$numberDecimal":"1.50"},)"
      R"("b":{"$binary":{"base64":"AQID","subType":"00"}},)"
      R"("u":{"$binary":{"base64":"ABEiM0RVZneImaq7zN3u/w==","subType":"04"}},)"
      R"("t":{"$timestamp":{"t":1,"i":2}},"r":{"$regularExpression":{"pattern":"a.c","options":"im"}},)"
      R"js("min":{"$minKey":1},"max":{"$maxKey":1},"c":{"$code":"f()"},"s":"x","nil":null,"undef":null,)js"
      R"("arr":[null,null]})"
      "\n");
  // The replacer and the indentation are JSON.stringify's; options may come
  // second or third.
  EXPECT_EQ(Show("EJSON.stringify({a: [1], b: NumberLong(2)}, null, 2)"),
            "{\n  \"a\": [\n    1\n  ],\n  \"b\": 2\n}\n");
  EXPECT_EQ(Show("EJSON.stringify({a: 1, b: 2, c: 3}, ['c', 'a'])"), R"({"c":3,"a":1})"
                                                                     "\n");
  EXPECT_EQ(Show("EJSON.stringify({b: NumberLong(2)}, null, {relaxed: false})"),
            R"({"b":{"$numberLong":"2"}})"
            "\n");
  EXPECT_EQ(Show("EJSON.stringify({d: ISODate('2020-01-02')}, {legacy: true})"),
            R"({"d":{"$date":1577923200000}})"
            "\n");
  EXPECT_EQ(Show("EJSON.stringify(NumberLong(9), {relaxed: false})"), R"({"$numberLong":"9"})"
                                                                      "\n");
  EXPECT_EQ(Show("EJSON.serialize({a: NumberInt(1)}, {relaxed: false}).a"),
            "{ $numberInt: '1' }\n");
  EXPECT_EQ(Show("const o = {}; o.o = o; try { EJSON.stringify(o) } catch (e) { e.name }"),
            "BSONError\n");
}

// ------------------------------------------------ CRUD options (issue 11)

// Every method's options are decoded from a table of known names: an option
// rockdoc lacks is NotImplemented (238) and changes nothing; a name MongoDB
// does not know is its unknown-field error (40415). They used to be dropped.
class CrudOptionsTest : public ShellTest {
 protected:
  void SetUp() override {
    ShellTest::SetUp();
    Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}, {_id: 3, a: 3}])");
  }
  // The error code `call` throws, or "none".
  std::string Code(const std::string& call) {
    return Show("try { " + call + "; 'none' } catch (e) { e.code }");
  }
  // Nothing changed: the three documents as inserted.
  void ExpectUnchanged() {
    EXPECT_EQ(Show("db.c.find().sort({_id: 1}).toArray().map((d) => [d._id, d.a, d.b])"),
              "[ [ 1, 1, undefined ], [ 2, 2, undefined ], [ 3, 3, undefined ] ]\n");
  }
};

TEST_F(CrudOptionsTest, UnsupportedWriteOptionsAreRefusedAndChangeNothing) {
  const std::string coll = "{collation: {locale: 'en', strength: 2}}";
  for (const std::string& call : std::vector<std::string>{
           "db.c.deleteMany({}, " + coll + ")",
           "db.c.deleteOne({}, " + coll + ")",
           "db.c.updateMany({}, {$set: {b: 1}}, " + coll + ")",
           "db.c.findOneAndUpdate({_id: 1}, {$set: {b: 1}}, " + coll + ")",
           "db.c.findAndModify({query: {_id: 1}, remove: true, collation: {locale: 'en'}})",
           "db.c.insertOne({_id: 4}, {writeConcern: {w: 0}})",
           "db.c.deleteMany({}, {writeConcern: {w: 2}})",
       }) {
    EXPECT_EQ(Code(call), CodeLine(ErrorCode::kNotImplemented)) << call;
    ExpectUnchanged();
  }
  // updateMany changes every match: a sort is MongoDB's FailedToParse.
  EXPECT_EQ(Code("db.c.updateMany({}, {$set: {b: 1}}, {sort: {_id: 1}})"),
            CodeLine(ErrorCode::kFailedToParse));
  ExpectUnchanged();
  // findAndModify's remove form takes new and upsert only as false.
  EXPECT_EQ(Code("db.c.findAndModify({query: {_id: 1}, remove: true, new: true})"),
            CodeLine(ErrorCode::kFailedToParse));
  EXPECT_EQ(Code("db.c.findOneAndDelete({_id: 1}, {upsert: true})"),
            CodeLine(ErrorCode::kFailedToParse));
  ExpectUnchanged();
  // A statement's field rockdoc does not implement fails the command, as
  // mongod's parse of the request does (the legacy methods too).
  EXPECT_EQ(Code("db.c.remove({}, {justOne: false, collation: {locale: 'en'}})"),
            CodeLine(ErrorCode::kNotImplemented));
  ExpectUnchanged();
  // hint on deletes and findAndModify, let on every write and find (issue
  // 33 #9): taken (here matching nothing).
  for (const std::string& call : std::vector<std::string>{
           "db.c.deleteMany({_id: 9}, {hint: {_id: 1}})",
           "db.c.deleteMany({$expr: {$eq: ['$_id', '$$x']}}, {let: {x: 9}})",
           "db.c.updateOne({$expr: {$eq: ['$_id', '$$x']}}, {$set: {b: 1}}, {let: {x: 9}})",
           "db.c.update({_id: 9}, {$set: {b: 1}}, {multi: true, let: {x: 1}})",
           "db.c.findOneAndReplace({_id: 9}, {a: 1, b: 1}, {hint: {_id: 1}})",
           "db.c.findOneAndDelete({$expr: {$eq: ['$_id', '$$x']}}, {let: {x: 9}})",
           "db.c.findOne({$expr: {$eq: ['$_id', '$$x']}}, {}, {let: {x: 9}})",
           "db.c.explain().deleteOne({}, {hint: {_id: 1}})",
       }) {
    EXPECT_EQ(Code(call), "none\n") << call;
  }
  ExpectUnchanged();
  EXPECT_EQ(Show("try { db.c.deleteMany({}, " + coll + ") } catch (e) { e.message }"),
            "BSON field 'delete.deletes.collation' is not supported by rockdoc\n");
}

// writeConcern j: true is honoured (the command layer syncs the log before
// the reply); a session's own writeConcern would have to be sent with each
// of its operations, which the shell does not do: refused, not ignored.
TEST_F(CrudOptionsTest, JournaledWriteConcern) {
  EXPECT_EQ(Show("db.c.insertMany([{_id: 4}], {writeConcern: {w: 1, j: true}}).acknowledged"),
            "true\n");
  EXPECT_EQ(Show("db.c.deleteOne({_id: 4}, {writeConcern: {j: true}}).deletedCount"), "1\n");
  ExpectUnchanged();
  EXPECT_EQ(Code("db.getMongo().startSession({writeConcern: {j: true}})"),
            CodeLine(ErrorCode::kNotImplemented));
  EXPECT_EQ(Code("db.getMongo().startSession({writeConcern: {w: 1}}).endSession()"), "none\n");
}

TEST_F(CrudOptionsTest, UnknownOptionsAreMongoDbsUnknownFieldError) {
  for (const std::string& call : std::vector<std::string>{
           std::string("db.c.updateOne({_id: 1}, {$set: {b: 1}}, {upsrt: true})"),
           std::string("db.c.deleteOne({_id: 1}, {upsert: true})"),
           std::string("db.c.deleteMany({}, {justOne: true})"),
           std::string("db.c.insertMany([{_id: 4}], {orderd: false})"),
           std::string("db.c.deleteMany({}, {writeConcern: {w: 1, x: 1}})"),
       }) {
    EXPECT_EQ(Code(call), CodeLine(ErrorCode::kUnknownBsonField)) << call;
    ExpectUnchanged();
  }
  // Options a method's command has but that contradict it: MongoDB's
  // FailedToParse (an array filter a replacement cannot use; new with
  // remove).
  EXPECT_EQ(Code("db.c.replaceOne({_id: 1}, {b: 1}, {arrayFilters: [{x: 1}]})"),
            CodeLine(ErrorCode::kFailedToParse));
  EXPECT_EQ(Code("db.c.findOneAndDelete({_id: 1}, {returnDocument: 'after'})"),
            CodeLine(ErrorCode::kFailedToParse));
  ExpectUnchanged();
  EXPECT_EQ(Code("db.c.find({}, {}, {foo: 1}).toArray()"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.findOne({}, {}, {foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.countDocuments({}, {foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.count({}, {foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.distinct('a', {}, {foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.estimatedDocumentCount({foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.explain().find({}, {}, {foo: 1}).finish()"),
            CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.explain().findOne({}, {}, {foo: 1})"),
            CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.explain().deleteMany({}, {foo: 1})"),
            CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.explain().updateMany({}, {$set: {b: 1}}, {foo: 1})"),
            CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Show("try { db.c.find({}, {}, {foo: 1}).toArray() } catch (e) { e.message }"),
            "BSON field 'find.foo' is an unknown field.\n");
  EXPECT_EQ(Show("try { db.c.updateOne({}, {$set: {b: 1}}, {upsrt: true}) } "
                 "catch (e) { e.message }"),
            "BSON field 'update.upsrt' is an unknown field.\n");
}

TEST_F(CrudOptionsTest, UnsupportedReadOptionsAreRefused) {
  for (const char* call : {
           "db.c.find({}, {}, {collation: {locale: 'en'}}).toArray()",
           "db.c.find({}, {}, {allowDiskUse: true}).toArray()",
           "db.c.find().allowDiskUse().toArray()",
           "db.c.countDocuments({}, {collation: {locale: 'en'}})",
           "db.c.distinct('a', {}, {collation: {locale: 'en'}})",
           "db.c.explain().count({}, {collation: {locale: 'en'}})",
       }) {
    EXPECT_EQ(Code(call), CodeLine(ErrorCode::kNotImplemented)) << call;
  }
}

// find's min, max, returnKey and showRecordId reach the find command
// (tests/findext_test.cc shows what it does with them), as options and as
// cursor methods; tailable too, refused on a collection that is not capped.
TEST_F(CrudOptionsTest, KeyRangeAndRecordOptionsReachTheFindCommand) {
  EXPECT_EQ(Code("db.c.find({}, {}, {min: {_id: 2}}).toArray()"),
            CodeLine(static_cast<ErrorCode>(51173)));
  EXPECT_EQ(Show("db.c.find().hint({_id: 1}).min({_id: 2}).max({_id: 3}).toArray().length"), "1\n");
  EXPECT_EQ(Show("JSON.stringify(db.c.find({}, {}, {returnKey: true}).toArray()[0])"), "{}\n");
  EXPECT_EQ(Show("JSON.stringify(db.c.find({_id: 2}).returnKey().toArray())"), "[{\"_id\":2}]\n");
  EXPECT_EQ(Show("'$recordId' in db.c.find().showRecordId().next()"), "true\n");
  EXPECT_EQ(Code("db.c.find({}, {}, {tailable: true}).toArray()"), CodeLine(ErrorCode::kBadValue));
}

TEST_F(CrudOptionsTest, MeaninglessOptionsAndSupportedOnesWork) {
  // No effect on one embedded node: accepted.
  EXPECT_EQ(Show("db.c.find({}, {}, {comment: 'x', readPreference: 'secondary', "
                 "readConcern: {level: 'majority'}, noCursorTimeout: true, "
                 "allowPartialResults: true, allowDiskUse: false, batchSize: 2}).itcount()"),
            "3\n");
  EXPECT_EQ(Show("db.c.find().comment('x').readPref('primary').noCursorTimeout().itcount()"),
            "3\n");
  // A snapshot read outside a session: one command's cursor reads one
  // snapshot anyway (MongoDB 5.0+ takes it on find, distinct, aggregate).
  EXPECT_EQ(Show("db.c.find().readConcern('snapshot').itcount()"), "3\n");
  Ok("db.c.insertOne({_id: 4}, {writeConcern: {w: 'majority', wtimeout: 100}, comment: 'x'})");
  Ok("db.c.insertMany([{_id: 5}], {ordered: false, writeConcern: {w: 1, j: false}, "
     "bypassDocumentValidation: true})");
  EXPECT_EQ(Show("db.c.deleteMany({_id: {$gte: 4}}, {writeConcern: {w: 1}, maxTimeMS: 1000})"
                 ".deletedCount"),
            "2\n");
  // Supported ones still work.
  EXPECT_EQ(Show("db.c.find({}, {_id: 1}, {sort: {_id: -1}, skip: 1, limit: 1}).toArray()"),
            "[ { _id: 2 } ]\n");
  EXPECT_EQ(Show("db.c.countDocuments({}, {skip: 1, limit: 5, maxTimeMS: 1000})"), "2\n");
  EXPECT_EQ(Show("db.c.estimatedDocumentCount({maxTimeMS: 1000})"), "3\n");
  EXPECT_EQ(Show("db.c.replaceOne({_id: 9}, {a: 9}, {upsert: true}).upsertedCount"), "1\n");
  // replaceOne's hint and maxTimeMS are the update statement's and
  // command's: applied (a hint naming no index fails).
  EXPECT_EQ(Show("db.c.replaceOne({_id: 9}, {a: 9, c: 1}, {hint: {_id: 1}, maxTimeMS: 1000})"
                 ".modifiedCount"),
            "1\n");
  EXPECT_EQ(Code("db.c.replaceOne({_id: 9}, {a: 9}, {hint: {zz: 1}})"),
            CodeLine(ErrorCode::kBadValue));
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 1}, {$set: {b: 1}}, "
                 "{returnDocument: 'after', projection: {b: 1}})"),
            "{ _id: 1, b: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 1}, {$set: {b: 2}}, "
                 "{returnNewDocument: true, projection: {b: 1}})"),
            "{ _id: 1, b: 2 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 1}, update: {$set: {b: 3}}, new: true, "
                 "fields: {b: 1}})"),
            "{ _id: 1, b: 3 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 9}, remove: true, new: false, upsert: false})"),
            "{ _id: 9, a: 9, c: 1 }\n");
  Ok("db.c.insertOne({_id: 9, a: 9})");
  EXPECT_EQ(Show("db.c.findOneAndDelete({}, {sort: {_id: -1}, projection: {_id: 1}})"),
            "{ _id: 9 }\n");
  EXPECT_EQ(Show("db.c.update({}, {$set: {b: 4}}, {multi: true}).nModified"), "3\n");
  EXPECT_EQ(Show("db.c.remove({}, {justOne: true}).nRemoved"), "1\n");
  EXPECT_EQ(Show("db.c.explain().updateMany({}, {$set: {b: 1}}, {upsert: false}).ok"), "1\n");
}

TEST_F(ShellTest, IntegerOptionsTakeLongsAndRefuseWhatIsNotAnInt64) {
  Ok("db.c.insertMany([{_id: 1}, {_id: 2}, {_id: 3}])");
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).limit(NumberLong(1)).toArray()"), "[ { _id: 1 } ]\n");
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).skip(NumberLong(2)).toArray()"), "[ { _id: 3 } ]\n");
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).skip(NumberInt(1)).limit(Double(1)).toArray()"),
            "[ { _id: 2 } ]\n");
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).batchSize(NumberLong(2)).toArray().length"), "3\n");
  EXPECT_EQ(Show("db.c.countDocuments({}, {skip: NumberLong(1), limit: NumberInt(1)})"), "1\n");
  // MongoDB's integer parsing: FailedToParse, never a double cast out of range.
  EXPECT_EQ(Show("try { db.c.find().skip(1e300).toArray() } catch (e) { [e.code, e.message] }"),
            "[ 9, 'Cannot represent as a 64-bit integer: skip: 1e+300' ]\n");
  EXPECT_EQ(Show("try { db.c.find().skip(1e300).toArray() } catch (e) { e.code }"),
            CodeLine(ErrorCode::kFailedToParse));
  EXPECT_EQ(Show("try { db.c.find().limit(1.5).toArray() } catch (e) { e.message }"),
            "Expected an integer: limit: 1.5\n");
  EXPECT_EQ(Show("try { db.c.find().skip(NaN).toArray() } catch (e) { e.message }"),
            "Expected an integer, but found NaN in: skip: NaN\n");
  EXPECT_EQ(Show("try { db.c.find().limit(-Infinity).toArray() } catch (e) { e.code }"),
            CodeLine(ErrorCode::kFailedToParse));
  // countDocuments is an aggregate (as the drivers run it): its skip and
  // limit are $skip and $limit stages, refused with those stages' codes.
  EXPECT_EQ(Show("try { db.c.countDocuments({}, {limit: 2 ** 63}) } catch (e) { e.code }"), "15957\n");
  EXPECT_EQ(Show("try { db.c.countDocuments({}, {skip: 'x'}) } catch (e) { e.code }"), "15972\n");
  EXPECT_EQ(Show("[db.c.countDocuments({}), db.c.countDocuments({}, {skip: 1, limit: 1})]"), "[ 3, 1 ]\n");
  EXPECT_EQ(Show("try { db.c.find().batchSize(NaN) } catch (e) { e.code }"),
            CodeLine(ErrorCode::kBadValue));
  EXPECT_EQ(Show("try { exit(1e300) } catch (e) { e.message }"), "exit code must be an integer\n");
  EXPECT_FALSE(shell_->exit_requested());
}

// ---------------------------------------------------------------- REPL input

TEST_F(ShellTest, PipedReplRunsEntriesWithoutPrompts) {
  std::istringstream in(
      "db.c.insertOne({_id: 1})\n"
      "function twice(x) {\n"
      "  return 2 * x\n"
      "}\n"
      "\n"
      "twice(21)\n"
      "use other\n"
      "db\n"
      "oops(\n");
  ReplOptions options;
  options.in = &in;
  out_.str("");
  err_.str("");
  int status = RunRepl(*shell_, options);
  EXPECT_EQ(out_.str(), "{ acknowledged: true, insertedId: 1 }\n42\nswitched to db other\nother\n");
  EXPECT_THAT(err_.str(), StartsWith("SyntaxError: "));  // the unfinished last entry
  EXPECT_EQ(status, 1);
}

TEST_F(ShellTest, PipedReplStopsAtExit) {
  std::istringstream in("print(1)\nexit(4)\nprint(2)\n");
  ReplOptions options;
  options.in = &in;
  out_.str("");
  EXPECT_EQ(RunRepl(*shell_, options), 4);
  EXPECT_EQ(out_.str(), "1\n");
}

// ---------------------------------------------------------------- RunMain

class RunMainTest : public ::testing::Test {
 protected:
  int Main(std::vector<std::string> args) {
    args.insert(args.begin(), "rockdoc");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    int status = RunMain(static_cast<int>(argv.size()), argv.data());
    out_ = testing::internal::GetCapturedStdout();
    err_ = testing::internal::GetCapturedStderr();
    return status;
  }
  test::ScratchDir dir_;
  std::string out_, err_;
};

TEST_F(RunMainTest, EvalAndFilesRunInOrder) {
  std::string db = dir_.Sub("db");
  std::string script = dir_.Sub("s.js");
  std::ofstream(script) << "print('file sees', db.c.countDocuments())\ndb.c.find()  // not shown\n";
  EXPECT_EQ(Main({"--db", db, "--quiet", "--eval", "db.c.insertOne({_id: 1})", "--eval",
                  "db.c.findOne()", script}),
            0);
  EXPECT_EQ(out_, "{ acknowledged: true, insertedId: 1 }\n{ _id: 1 }\nfile sees 1\n");
  EXPECT_EQ(err_, "");
}

// Issue 33.1: as mongosh, a pipeline that writes ($out, $merge) runs when
// aggregate() is called, whether or not its cursor is ever read.
TEST_F(RunMainTest, ScriptsRunOutAndMergeWithoutReadingTheCursor) {
  std::string db = dir_.Sub("db");
  std::string script = dir_.Sub("s.js");
  std::ofstream(script)
      << "db.a.insertMany([{_id: 1}, {_id: 2}, {_id: 3}])\n"
         "var r = db.a.aggregate([{$out: 'b'}])\n"
         "db.a.aggregate([{$match: {_id: {$gt: 1}}}, {$merge: {into: 'm'}}])\n"
         "db.getSiblingDB('test').aggregate([{$documents: [{x: 1}]}, {$out: 'd'}])\n"
         "db.a.aggregate([{$match: {_id: 1}}])  // reads nothing, writes nothing\n"
         "print('done')\n";
  EXPECT_EQ(Main({"--db", db, "--quiet", script}), 0) << err_;
  EXPECT_EQ(out_, "done\n");
  EXPECT_EQ(Main({"--db", db, "--quiet", "--eval",
                  "[db.b.countDocuments(), db.m.countDocuments(), db.d.countDocuments()]"}),
            0)
      << err_;
  EXPECT_EQ(out_, "[ 3, 2, 1 ]\n");
}

TEST_F(RunMainTest, JsonFlag) {
  EXPECT_EQ(Main({"--db=" + dir_.Sub("db"), "--json", "--eval",
                  "db.c.insertMany([{_id: 1}, {_id: 2}]); db.c.find()"}),
            0);
  EXPECT_EQ(out_, "{\"_id\": 1}\n{\"_id\": 2}\n");
}

TEST_F(RunMainTest, ExitStatusIsNonZeroWhenAScriptThrows) {
  std::string script = dir_.Sub("bad.js");
  std::ofstream(script) << "throw new Error('boom')\n";
  EXPECT_EQ(Main({"--db", dir_.Sub("db"), script, "--eval", "print('not reached')"}), 1);
  EXPECT_EQ(err_, "Error: boom @ " + script + ":1:7\n");
  EXPECT_EQ(Main({"--db", dir_.Sub("db"), "--eval",
                  "db.c.insertOne({_id: 1}); db.c.insertOne({_id: 1})"}),
            1);
  EXPECT_THAT(err_, StartsWith("MongoServerError[DuplicateKey]"));
  EXPECT_EQ(Main({"--db", dir_.Sub("db"), "--eval", "quit(7)"}), 7);
  EXPECT_EQ(Main({"--db", dir_.Sub("db"), "--bogus"}), 2);
  EXPECT_THAT(err_, HasSubstr("unknown option \"--bogus\""));
}

// Issue 11 #4: salvage is an explicit operation of its own, reachable from
// the command line; a refused open says how to reach it.
TEST_F(RunMainTest, SalvageKeepsWhatIsBeforeTheDamage) {
  std::string live = dir_.Sub("live"), image = dir_.Sub("image");
  auto insert = [](const std::string& dir, int from, bool copy_to, const std::string& to) {
    ClientOptions o;
    o.sync = true;
    auto client = Client::Open(dir, o);
    ASSERT_TRUE(client.ok()) << client.status();
    Collection c = (*client)->GetDatabase("test").GetCollection("c");
    for (int i = from; i < from + 50; ++i) {
      ASSERT_TRUE(c.InsertOne(test::Json("{\"_id\": " + std::to_string(i) + "}")).ok());
    }
    // A crash image: the directory as a kill would leave it.
    if (copy_to) std::filesystem::copy(dir, to, std::filesystem::copy_options::recursive);
  };
  insert(live, 0, false, "");  // closed cleanly: these 50 are in table files
  insert(live, 50, true, image);
  EXPECT_EQ(Main({"--db", live, "--salvage"}), 0);
  EXPECT_THAT(out_, HasSubstr("needed no salvage")) << out_ << err_;
  // The live log, holding the last 50 inserts, is lost.
  for (const auto& e : std::filesystem::directory_iterator(image)) {
    if (e.path().extension() == ".log") std::filesystem::remove(e.path());
  }
  EXPECT_EQ(Main({"--db", image, "--quiet", "--eval", "db.c.countDocuments()"}), 1);
  EXPECT_THAT(err_, HasSubstr("DataCorruptionDetected"));
  EXPECT_THAT(err_, HasSubstr("--salvage"));
  EXPECT_EQ(Main({"--db", image, "--salvage"}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("found: ")) << out_;
  EXPECT_EQ(Main({"--db", image, "--quiet", "--eval",
                  "print(db.c.countDocuments(), db.c.validate().valid)"}),
            0)
      << err_;
  EXPECT_EQ(out_, "50 true\n");
  EXPECT_EQ(Main({"--salvage"}), 2);
  EXPECT_THAT(err_, HasSubstr("--salvage takes --dbpath DIR"));
}

// Issue 33.13: `rockdoc DIR` opens (or creates) DIR, as sqlite3 FILE and
// mongosh's address argument; --dbpath is mongod's name for it (--db an
// alias); a second directory is an error; --version and --help print on
// stdout and exit 0.
TEST_F(RunMainTest, APositionalDirectoryIsTheDatabase) {
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path());
  std::string script = dir_.Sub("count.js");
  std::ofstream(script) << "print('count', db.c.countDocuments())\n";
  int first = Main({"fresh", "--quiet", "--eval", "db.c.insertOne({_id: 1}).insertedId"});
  std::string first_out = out_;
  int second = Main({script, dir_.Sub("fresh")});  // either order
  std::string second_out = out_;
  int third = Main({"--dbpath", dir_.Sub("fresh"), "--eval", "db.c.countDocuments()"});
  std::string third_out = out_;
  int twice = Main({"fresh", "other"});
  std::string twice_err = err_;
  std::filesystem::current_path(cwd);
  EXPECT_EQ(first, 0) << err_;
  EXPECT_EQ(first_out, "1\n");
  EXPECT_EQ(second, 0);
  EXPECT_EQ(second_out, "count 1\n");
  EXPECT_EQ(third, 0);
  EXPECT_EQ(third_out, "1\n");
  EXPECT_EQ(twice, 2);
  EXPECT_THAT(twice_err,
              HasSubstr("other is neither a script (FILE.js) nor the database directory"));
  EXPECT_TRUE(std::filesystem::is_directory(dir_.Sub("fresh")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("rockdoc-data")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("other")));

  EXPECT_EQ(Main({"--version"}), 0);
  EXPECT_EQ(out_, std::string("rockdoc version: ") + rockdoc_version() + "\n");
  EXPECT_EQ(Main({"--help"}), 0);
  EXPECT_THAT(out_, HasSubstr("  --dbpath DIR "));
  EXPECT_THAT(out_, HasSubstr("  --version "));
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("rockdoc-data")));
}

TEST_F(RunMainTest, DefaultDirectoryIsRockdocData) {
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path());
  int status = Main({"--eval", "db.c.insertOne({_id: 1}).insertedId"});
  std::filesystem::current_path(cwd);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out_, "1\n");
  EXPECT_TRUE(std::filesystem::is_directory(dir_.Sub("rockdoc-data")));
}

}  // namespace
}  // namespace rockdoc::shell

// ------------------------------------------------- sessions and transactions

namespace rockdoc::shell {
namespace {

// mongosh's session API over the library's Session (issue 12).
TEST_F(ShellTest, ATransactionsWritesAppearAtCommit) {
  Ok("db.acct.insertMany([{_id: 1, b: 100}, {_id: 2, b: 0}])");
  Ok(R"(
    const s = db.getMongo().startSession();
    const a = s.getDatabase('test').acct;
    s.startTransaction({readConcern: {level: 'snapshot'}, writeConcern: {w: 'majority'}});
    a.updateOne({_id: 1}, {$inc: {b: -30}});
    a.updateOne({_id: 2}, {$inc: {b: 30}});
    print(a.findOne({_id: 2}).b, db.acct.findOne({_id: 2}).b);
    s.commitTransaction();
    print(db.acct.findOne({_id: 2}).b);
    s.endSession();
  )");
  EXPECT_EQ(out_.str(), "30 0\n30\n");
  EXPECT_EQ(Show("db.acct.find({}, {_id: 0}).toArray()"), "[ { b: 70 }, { b: 30 } ]\n");
}

TEST_F(ShellTest, AbortAndEndSessionDiscardTheTransaction) {
  Ok(R"(
    const s = db.getMongo().startSession();
    const c = s.getDatabase('test').getCollection('c');
    s.startTransaction();
    c.insertOne({_id: 1});
    s.abortTransaction();
    s.startTransaction();
    c.insertOne({_id: 2});
    s.endSession();
  )");
  EXPECT_EQ(Show("db.c.countDocuments({})"), "0\n");
  EXPECT_EQ(Show("try { const s = db.getMongo().startSession(); s.endSession(); "
                 "s.getDatabase('test').c.insertOne({}) } catch (e) { e.message }"),
            "Cannot use a session that has ended\n");
}

TEST_F(ShellTest, AWriteConflictCarriesTheTransientLabel) {
  Ok("db.c.insertOne({_id: 1, v: 0})");
  std::string out = Show(R"(
    const s1 = db.getMongo().startSession(), s2 = db.getMongo().startSession();
    s1.startTransaction(); s2.startTransaction();
    s1.getDatabase('test').c.updateOne({_id: 1}, {$set: {v: 1}});
    let caught;
    try { s2.getDatabase('test').c.updateOne({_id: 1}, {$set: {v: 2}}); }
    catch (e) { caught = [e.name, e.codeName, e.errorLabels, e.hasErrorLabel('TransientTransactionError')]; }
    s1.commitTransaction();
    let commit;
    try { s2.commitTransaction(); } catch (e) { commit = e.codeName; }
    [caught, commit, db.c.findOne().v]
  )");
  EXPECT_EQ(out,
            "[\n  [\n    'MongoServerError',\n    'WriteConflict',\n"
            "    [ 'TransientTransactionError' ],\n    true\n  ],\n"
            "  'NoSuchTransaction',\n  1\n]\n")
      << err();
}

TEST_F(ShellTest, WithTransactionRetriesTransientErrorsAndReturnsTheResult) {
  Ok("db.c.insertOne({_id: 1, n: 0})");
  EXPECT_EQ(Show(R"(
    const s = db.getMongo().startSession();
    let calls = 0;
    const r = s.withTransaction((session) => {
      calls++;
      session.getDatabase('test').c.updateOne({_id: 1}, {$inc: {n: 1}});
      if (calls === 1) {
        const e = new MongoServerError(112, 'WriteConflict', 'simulated', ['TransientTransactionError']);
        throw e;
      }
      return 'done';
    });
    [r, calls, db.c.findOne().n]
  )"),
            "[ 'done', 2, 1 ]\n")
      << err();
  // Any other error aborts and is thrown.
  EXPECT_EQ(Show(R"(
    const t = db.getMongo().startSession();
    try { t.withTransaction((s) => { s.getDatabase('test').c.insertOne({_id: 2}); throw new Error('no'); }); }
    catch (e) { [e.message, db.c.countDocuments({})] }
  )"),
            "[ 'no', 1 ]\n");
}

TEST_F(ShellTest, CommandsInATransactionAndMisuseFailAsMongoshSays) {
  EXPECT_EQ(Show(R"(
    const s = db.getMongo().startSession();
    s.startTransaction();
    const out = [];
    try { s.getDatabase('test').c.renameCollection('d'); } catch (e) { out.push(e.code); }
    // Refused before it ran: the transaction goes on.
    s.getDatabase('test').c.insertOne({_id: 1});
    s.commitTransaction();
    try { s.commitTransaction(); s.getDatabase('test').c.insertOne({_id: 1}); }
    catch (e) { out.push(e.codeName); }
    try { s.commitTransaction(); } catch (e) { out.push(e.message); }
    try { s.startTransaction(); s.startTransaction(); } catch (e) { out.push(e.message); }
    s.abortTransaction();
    try { s.abortTransaction(); } catch (e) { out.push(e.message); }
    out
  )"),
            "[\n  263,\n  'DuplicateKey',\n  'No transaction started',\n"
            "  'Transaction already in progress on this session.',\n"
            "  'Cannot call abortTransaction twice'\n]\n")
      << err();
  EXPECT_EQ(Show("db.c.countDocuments({})"), "1\n");
}

TEST_F(ShellTest, SessionAndTransactionOptionsAreDecodedFromTables) {
  auto code_of = [&](const std::string& call) {
    return Show("try { " + call + "; 'ok' } catch (e) { e.codeName + ': ' + e.message }");
  };
  EXPECT_EQ(code_of("db.getMongo().startSession({causalConsistency: true, retryWrites: true})"),
            "ok\n");
  EXPECT_EQ(code_of("db.getMongo().startSession({bogus: 1})"),
            "Location40415: BSON field 'startSession.bogus' is an unknown field.\n");
  EXPECT_EQ(code_of("db.getMongo().startSession().startTransaction({maxCommitTimeMS: 5})"),
            "NotImplemented: startTransaction option 'maxCommitTimeMS' is not supported by "
            "rockdoc\n");
  EXPECT_EQ(code_of("db.getMongo().startSession().startTransaction({writeConcern: {w: 0}})"),
            "InvalidOptions: transactions do not support unacknowledged write concern\n");
  EXPECT_EQ(code_of("db.getMongo().startSession().startTransaction({readPreference: 'secondary'})"),
            "InvalidOptions: read preference in a transaction must be primary, not 'secondary'\n");
  EXPECT_EQ(code_of("db.getMongo().startSession().startTransaction({readConcern: {level: "
                    "'linearizable'}})"),
            "InvalidOptions: The readConcern level must be either 'local' (default), 'majority' or "
            "'snapshot' in a transaction, not 'linearizable'\n");
  // defaultTransactionOptions are checked when the session starts.
  EXPECT_EQ(code_of("db.getMongo().startSession({defaultTransactionOptions: {w: 1}})"),
            "Location40415: BSON field 'defaultTransactionOptions.w' is an unknown field.\n");
}

// The transactions spec: operations in a transaction take its concerns and
// may not give their own; outside a transaction the same calls work.
TEST_F(ShellTest, OperationsInATransactionRefuseTheirOwnConcerns) {
  EXPECT_EQ(
      Show(R"(
    const s = db.getMongo().startSession();
    const c = s.getDatabase('test').c;
    const out = [];
    s.startTransaction();
    try { c.insertOne({_id: 1}, {writeConcern: {w: 1}}); } catch (e) { out.push(e.codeName); }
    try { c.find({}, {}, {readConcern: {level: 'local'}}).toArray(); } catch (e) { out.push(e.codeName); }
    try { c.findOne({}, {}, {readConcern: {level: 'local'}}); } catch (e) { out.push(e.codeName); }
    try { c.updateOne({}, {$set: {a: 1}}, {writeConcern: {w: 'majority'}}); } catch (e) { out.push(e.codeName); }
    c.insertOne({_id: 2});
    s.commitTransaction();
    c.insertOne({_id: 3}, {writeConcern: {w: 1}});
    out.push(c.countDocuments({}, {readConcern: {level: 'majority'}}));
    out
  )"),
      "[\n  'InvalidOptions',\n  'InvalidOptions',\n  'InvalidOptions',\n  'InvalidOptions',\n  "
      "2\n]\n")
      << err();
}

TEST_F(ShellTest, SnapshotSessionsReadOnePointInTime) {
  Ok("db.a.insertOne({_id: 1}); db.b.insertOne({_id: 1})");
  EXPECT_EQ(Show(R"(
    const s = db.getMongo().startSession({snapshot: true});
    const sdb = s.getDatabase('test');
    const before = sdb.a.countDocuments({});
    db.a.insertOne({_id: 2}); db.b.deleteOne({_id: 1});
    let write;
    try { sdb.a.insertOne({_id: 3}); } catch (e) { write = e.codeName; }
    [before, sdb.a.countDocuments({}), sdb.b.countDocuments({}), db.a.countDocuments({}), write]
  )"),
            "[ 1, 1, 1, 2, 'InvalidOptions' ]\n")
      << err();
}

}  // namespace
}  // namespace rockdoc::shell


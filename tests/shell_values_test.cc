// Tests of the rockdoc shell (src/shell/), driven in-process: JavaScript
// values and BSON. How values are stored (mongosh's number rules, the
// wrapper types, field order, a round trip of random documents without
// loss), how results print (mongosh's layout, JSON mode, EJSON), the type
// helpers (ObjectId, ISODate, NumberLong, BinData, ...) and the values that
// are refused rather than silently changed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "shell_test_fixture.h"

namespace rockdoc::shell {
namespace {

using ::testing::HasSubstr;

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

// ---------------------------------------------------------------- printing

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

TEST_F(ShellTest, PrintAndPrintjson) {
  EXPECT_EQ(Run("print('a', 1, {b: 2}); printjson({c: [3]}); print()"),
            "a 1 { b: 2 }\n{ c: [ 3 ] }\n\n");
  EXPECT_EQ(Run("printjson('s')"), "'s'\n");
  EXPECT_EQ(Show("tojson({a: 1})"), "{ a: 1 }\n");
  EXPECT_EQ(Show("EJSON.stringify({a: NumberLong(1)})"), "{\"a\":1}\n");  // js-bson's text
  EXPECT_EQ(Show("EJSON.parse('{\"a\": {\"$numberLong\": \"5\"}}').a"), "Long('5')\n");
}

TEST_F(ShellTest, ConsoleLogPrintsAsPrint) {
  EXPECT_EQ(Run("console.log('a', 1, {b: 2}); console.info('i')"), "a 1 { b: 2 }\ni\n");
  EXPECT_EQ(Run("console.error('e', [1])"), "");
  EXPECT_EQ(err(), "e [ 1 ]\n");
}

TEST_F(ShellTest, PromisesAreAwaitedForDisplay) {
  EXPECT_EQ(Show("Promise.resolve(41).then(x => x + 1)"), "42\n");
  EXPECT_EQ(Show("(async () => db.c.insertOne({_id: 1}).insertedId)()"), "1\n");
  Show("Promise.reject(new Error('no'))");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "Error: no\n");
}

// ---------------------------------------------------------------- JSON mode and EJSON

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

// Decimal arithmetic from the shell: NumberDecimal values through the
// expressions and $inc (Intel's library, bson/decimal_arithmetic.h), printed
// as mongosh prints Decimal128. The values are IEEE decimal128's, as Python's
// decimal module computes them in that context.
TEST_F(ShellTest, DecimalArithmeticThroughTheShell) {
  Ok("db.dec.insertOne({_id: 1, a: NumberDecimal('1'), b: NumberDecimal('3'), c: NumberDecimal('0.1')})");
  EXPECT_EQ(Show("db.dec.aggregate([{$project: {_id: 0, q: {$divide: ['$a', '$b']}, "
                 "s: {$add: ['$c', NumberDecimal('0.2')]}, r: {$sqrt: NumberDecimal('2')}, "
                 "t: {$toDecimal: 2.5}, m: {$round: [NumberDecimal('2.345'), 2]}}}]).toArray()"),
            "[\n  {\n    q: Decimal128('0.3333333333333333333333333333333333'),\n"
            "    s: Decimal128('0.3'),\n    r: Decimal128('1.414213562373095048801688724209698'),\n"
            "    t: Decimal128('2.50000000000000'),\n    m: Decimal128('2.34')\n  }\n]\n");
  Ok("db.dec.updateOne({_id: 1}, {$inc: {c: NumberDecimal('0.2')}, $mul: {b: 0.5}})");
  EXPECT_EQ(Show("db.dec.findOne({}, {_id: 0, b: 1, c: 1})"),
            "{ b: Decimal128('1.500000000000000'), c: Decimal128('0.3') }\n");
  EXPECT_EQ(Show("try { db.dec.aggregate([{$project: {q: {$divide: ['$a', NumberDecimal('0')]}}}]).toArray() } "
                 "catch (e) { e.code + ': ' + e.message }"),
            "16608: can't $divide by zero\n");
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

// ------------------------------------------------ values refused, not silently changed

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

}  // namespace
}  // namespace rockdoc::shell

// Tests of the BSON document model: builder, views, dotted paths,
// validation of untrusted bytes, ObjectId, and MongoDB's comparison order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/endian.h"
#include "common/utf8.h"
#include "rockdoc/document.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using ::testing::HasSubstr;
using test::Json;

TEST(BsonBuilder, BuildsNestedDocumentsAndArrays) {
  BsonBuilder b;
  b.AppendString("name", "Ada").AppendInt32("born", 1815);
  b.OpenDocument("address").AppendString("city", "London").Close();
  b.OpenArray("tags").AppendString("ignored", "math").AppendString("", "code").Close();
  Document doc = std::move(b).Build();

  EXPECT_TRUE(ValidateBson(doc.bytes()).ok());
  EXPECT_EQ(doc.Get("name").String(), "Ada");
  EXPECT_EQ(doc.Get("born").Int32(), 1815);
  EXPECT_EQ(doc.GetPath("address.city").String(), "London");
  // Array keys are positions whatever key the caller passed.
  EXPECT_EQ(doc.GetPath("tags.0").key(), "0");
  EXPECT_EQ(doc.GetPath("tags.1").String(), "code");
  EXPECT_FALSE(doc.GetPath("tags.2").ok());
  EXPECT_FALSE(doc.GetPath("name.x").ok());
  EXPECT_FALSE(doc.GetPath("tags.01").ok()) << "leading zeros are not positions";
  EXPECT_EQ(doc.view().CountFields(), 4u);
}

// Issue 11 #5: a key or regex with a NUL would write a corrupt document
// that may still parse; the builder refuses in every build type.
TEST(BsonBuilderDeathTest, NulInACStringIsRefused) {
  const std::string_view nul_key("a\0b", 3);
  EXPECT_DEATH(BsonBuilder().AppendInt32(nul_key, 1), "");
  EXPECT_DEATH(BsonBuilder().OpenDocument(nul_key), "");
  EXPECT_DEATH(BsonBuilder().AppendRegex("r", std::string_view("x\0", 2), ""), "");
  EXPECT_DEATH(BsonBuilder().AppendRegex("r", "x", std::string_view("i\0", 2)), "");
}

// One element of every BSON type (and the old binary subtype), with
// `oid` as the ObjectId.
Document EveryType(const ObjectId& oid) {
  Document scope = std::move(BsonBuilder().AppendInt32("x", 1)).Build();
  Document inner = std::move(BsonBuilder().AppendInt32("y", 2)).Build();
  BsonBuilder b;
  b.AppendDouble("d", -2.5)
      .AppendString("s", std::string_view("a\0b", 3))
      .AppendDocument("doc", inner)
      .AppendArray("arr", inner)
      .AppendBinary("bin", BinarySubtype::kUuid, "0123456789abcdef")
      .AppendBinary("old", BinarySubtype::kBinaryOld, "xyz")
      .AppendUndefined("u")
      .AppendObjectId("oid", oid)
      .AppendBool("t", true)
      .AppendDateTime("dt", -1234)
      .AppendNull("n")
      .AppendRegex("re", "^a.*", "im")
      .AppendDbPointer("ptr", "db.coll", oid)
      .AppendCode("code", "function(){}")
      .AppendSymbol("sym", "sym")
      .AppendCodeWithScope("cws", "x+1", scope)
      .AppendInt32("i", -7)
      .AppendTimestamp("ts", BsonTimestamp{100, 3})
      .AppendInt64("l", INT64_MIN)
      .AppendDecimal128("dec", Decimal128(0x3040000000000000ULL, 15))
      .AppendMinKey("min")
      .AppendMaxKey("max");
  return std::move(b).Build();
}

TEST(BsonBuilder, EveryTypeRoundTripsThroughAccessors) {
  ObjectId oid = ObjectId::Generate();
  Document doc = EveryType(oid);
  ASSERT_TRUE(ValidateBson(doc.bytes()).ok()) << ValidateBson(doc.bytes());

  EXPECT_EQ(doc.Get("d").Double(), -2.5);
  EXPECT_EQ(doc.Get("s").String(), std::string_view("a\0b", 3));
  EXPECT_EQ(doc.Get("bin").Binary().subtype, BinarySubtype::kUuid);
  EXPECT_EQ(doc.Get("bin").Binary().data, "0123456789abcdef");
  EXPECT_EQ(doc.Get("old").Binary().data, "xyz");
  EXPECT_EQ(doc.Get("old").value_size(), 4u + 1 + 4 + 3);
  EXPECT_EQ(doc.Get("u").type(), BsonType::kUndefined);
  EXPECT_EQ(doc.Get("oid").Oid(), oid);
  EXPECT_TRUE(doc.Get("t").Bool());
  EXPECT_EQ(doc.Get("dt").DateTime(), -1234);
  EXPECT_EQ(doc.Get("n").type(), BsonType::kNull);
  EXPECT_EQ(doc.Get("re").Regex().pattern, "^a.*");
  EXPECT_EQ(doc.Get("re").Regex().options, "im");
  EXPECT_EQ(doc.Get("ptr").DbPointer().ns, "db.coll");
  EXPECT_EQ(doc.Get("ptr").DbPointer().id, oid);
  EXPECT_EQ(doc.Get("code").String(), "function(){}");
  EXPECT_EQ(doc.Get("sym").String(), "sym");
  EXPECT_EQ(doc.Get("cws").CodeWithScopeCode(), "x+1");
  EXPECT_EQ(doc.Get("cws").CodeWithScopeScope().Get("x").Int32(), 1);
  EXPECT_EQ(doc.Get("i").Int32(), -7);
  EXPECT_EQ(doc.Get("ts").Timestamp().t, 100u);
  EXPECT_EQ(doc.Get("ts").Timestamp().i, 3u);
  EXPECT_EQ(doc.Get("l").Int64(), INT64_MIN);
  EXPECT_EQ(doc.Get("dec").Decimal().low(), 15u);
  EXPECT_EQ(doc.Get("min").type(), BsonType::kMinKey);
  EXPECT_EQ(doc.Get("max").type(), BsonType::kMaxKey);

  // Copying every element through the builder reproduces the bytes.
  BsonBuilder copy;
  for (Element e : doc) copy.AppendElement(e);
  EXPECT_EQ(std::move(copy).Build(), doc);
}

// Every accessor on `e`, whose type is `type` (kEod: missing): the one that
// matches gives the value, every other one its documented neutral value or
// nullopt. Never a crash or a read outside the document (the ASan build
// runs this too).
void ExpectSafeAccessors(const Element& e, BsonType type) {
  SCOPED_TRACE(std::string(BsonTypeAlias(type)));
  auto is = [&](BsonType t) { return type == t; };
  EXPECT_EQ(e.ok(), type != BsonType::kEod);
  EXPECT_EQ(e.type(), type);
  if (!e.ok()) {
    EXPECT_EQ(e.key(), "");
    EXPECT_EQ(e.value_size(), 0u);
    EXPECT_NE(e.value_data(), nullptr);
  }
  // Unchecked accessors: neutral values unless the type matches.
  if (!is(BsonType::kDouble)) { EXPECT_EQ(e.Double(), 0.0); }
  if (!is(BsonType::kString) && !is(BsonType::kCode) && !is(BsonType::kSymbol)) {
    EXPECT_EQ(e.String(), "");
  }
  if (!e.IsContainer()) {
    EXPECT_TRUE(e.Document().empty());
    EXPECT_TRUE(e.Array().empty());
  }
  if (!is(BsonType::kBinary)) { EXPECT_EQ(e.Binary().data, ""); }
  if (!is(BsonType::kObjectId)) { EXPECT_EQ(e.Oid(), ObjectId()); }
  if (!is(BsonType::kBool)) { EXPECT_FALSE(e.Bool()); }
  if (!is(BsonType::kDateTime)) { EXPECT_EQ(e.DateTime(), 0); }
  if (!is(BsonType::kRegex)) { EXPECT_EQ(e.Regex().pattern, ""); }
  if (!is(BsonType::kDbPointer)) { EXPECT_EQ(e.DbPointer().ns, ""); }
  if (!is(BsonType::kCodeWithScope)) {
    EXPECT_EQ(e.CodeWithScopeCode(), "");
    EXPECT_TRUE(e.CodeWithScopeScope().empty());
  }
  if (!is(BsonType::kInt32)) { EXPECT_EQ(e.Int32(), 0); }
  if (!is(BsonType::kTimestamp)) { EXPECT_EQ(e.Timestamp(), BsonTimestamp{}); }
  if (!is(BsonType::kInt64)) { EXPECT_EQ(e.Int64(), 0); }
  if (!is(BsonType::kDecimal128)) { EXPECT_EQ(e.Decimal(), Decimal128()); }
  if (!e.IsNumber()) {
    EXPECT_EQ(e.NumberAsDouble(), 0.0);
    int64_t untouched = 42;
    EXPECT_FALSE(e.ExactInt64(&untouched));
    EXPECT_EQ(untouched, 42);
    EXPECT_FALSE(e.AsExactInt64().has_value());
  }
  // Is* and As* agree with type().
  EXPECT_EQ(e.IsDouble(), is(BsonType::kDouble));
  EXPECT_EQ(e.AsDouble().has_value(), is(BsonType::kDouble));
  EXPECT_EQ(e.IsString(), is(BsonType::kString));
  EXPECT_EQ(e.AsString().has_value(), is(BsonType::kString));
  EXPECT_EQ(e.IsDocument(), is(BsonType::kDocument));
  EXPECT_EQ(e.AsDocument().has_value(), is(BsonType::kDocument));
  EXPECT_EQ(e.IsArray(), is(BsonType::kArray));
  EXPECT_EQ(e.AsArray().has_value(), is(BsonType::kArray));
  EXPECT_EQ(e.IsBinary(), is(BsonType::kBinary));
  EXPECT_EQ(e.AsBinary().has_value(), is(BsonType::kBinary));
  EXPECT_EQ(e.IsObjectId(), is(BsonType::kObjectId));
  EXPECT_EQ(e.AsObjectId().has_value(), is(BsonType::kObjectId));
  EXPECT_EQ(e.IsBool(), is(BsonType::kBool));
  EXPECT_EQ(e.AsBool().has_value(), is(BsonType::kBool));
  EXPECT_EQ(e.IsDateTime(), is(BsonType::kDateTime));
  EXPECT_EQ(e.AsDateTime().has_value(), is(BsonType::kDateTime));
  EXPECT_EQ(e.IsNull(), is(BsonType::kNull));
  EXPECT_EQ(e.IsRegex(), is(BsonType::kRegex));
  EXPECT_EQ(e.AsRegex().has_value(), is(BsonType::kRegex));
  EXPECT_EQ(e.IsInt32(), is(BsonType::kInt32));
  EXPECT_EQ(e.AsInt32().has_value(), is(BsonType::kInt32));
  EXPECT_EQ(e.IsTimestamp(), is(BsonType::kTimestamp));
  EXPECT_EQ(e.AsTimestamp().has_value(), is(BsonType::kTimestamp));
  EXPECT_EQ(e.IsInt64(), is(BsonType::kInt64));
  EXPECT_EQ(e.AsInt64().has_value(), is(BsonType::kInt64));
  EXPECT_EQ(e.IsDecimal(), is(BsonType::kDecimal128));
  EXPECT_EQ(e.AsDecimal().has_value(), is(BsonType::kDecimal128));
}

TEST(Element, EveryAccessorIsSafeOnEveryTypeAndOnMissing) {
  Document doc = EveryType(ObjectId::Generate());
  int seen = 0;
  for (Element e : doc) {
    ExpectSafeAccessors(e, e.type());
    ++seen;
  }
  EXPECT_EQ(seen, 22);
  // Missing: a lookup, a path through a scalar, a default Element, the
  // terminator an end() iterator points at, a default Value.
  ExpectSafeAccessors(doc.Get("missing"), BsonType::kEod);
  ExpectSafeAccessors(doc.GetPath("i.x.y"), BsonType::kEod);
  ExpectSafeAccessors(Element(), BsonType::kEod);
  ExpectSafeAccessors(*doc.end(), BsonType::kEod);
  ExpectSafeAccessors(Value().element(), BsonType::kEod);
  ExpectSafeAccessors(Value::FromElement(doc.Get("missing")).element(), BsonType::kEod);
}

TEST(Element, TheIssueExampleReadsNeutralValuesAndCheckedOptionals) {
  Document doc = Json(R"({"n": 5, "s": "x"})");
  EXPECT_EQ(doc.Get("missing").String(), "");
  EXPECT_EQ(doc.Get("missing").Document().CountFields(), 0u);
  EXPECT_EQ(doc.Get("n").AsInt32(), 5);
  EXPECT_EQ(doc.Get("n").AsString(), std::nullopt);
  EXPECT_EQ(doc.Get("n").AsExactInt64(), 5);
  EXPECT_EQ(doc.Get("s").AsString(), "x");
  EXPECT_EQ(doc.Get("s").Int64(), 0);
  // The other public readers of an element take a missing one too.
  EXPECT_EQ(CompareValues(doc.Get("missing"), Element()), 0);
  EXPECT_LT(CompareValues(doc.Get("missing"), doc.Get("n")), 0);
  EXPECT_EQ(CompareElements(doc.Get("missing"), Element(), /*consider_field_names=*/true), 0);
  EXPECT_EQ(ValueToJson(doc.Get("missing")), "null");
}

TEST(Element, AppendingAMissingElementWritesNothing) {
  Document doc = Json(R"({"a": 1})");
  BsonBuilder b;
  b.AppendElement(doc.Get("missing")).AppendElementAs("x", Element()).AppendInt32("b", 2);
  Document out = std::move(b).Build();
  EXPECT_TRUE(ValidateBson(out.bytes()).ok());
  EXPECT_EQ(out, Json(R"({"b": 2})"));
}

TEST(DocumentView, AdvancingEndStaysAtEnd) {
  Document doc = Json(R"({"a": 1})");
  auto it = doc.end();
  ++it;
  ++it;
  EXPECT_TRUE(it == doc.end());
  EXPECT_FALSE((*it).ok());
}

TEST(Element, ExactInt64) {
  Document doc = std::move(BsonBuilder()
                               .AppendDouble("a", 3.0)
                               .AppendDouble("b", 3.5)
                               .AppendDouble("c", 9223372036854775808.0)
                               .AppendInt32("d", -4)
                               .AppendDecimal128("e", Decimal128(0x303E000000000000ULL, 420))
                               .AppendDecimal128("f", Decimal128(0x303E000000000000ULL, 425)))
                     .Build();
  int64_t v = 0;
  EXPECT_TRUE(doc.Get("a").ExactInt64(&v));
  EXPECT_EQ(v, 3);
  EXPECT_FALSE(doc.Get("b").ExactInt64(&v));
  EXPECT_FALSE(doc.Get("c").ExactInt64(&v)) << "2^63 is out of int64 range";
  EXPECT_TRUE(doc.Get("d").ExactInt64(&v));
  EXPECT_EQ(v, -4);
  EXPECT_TRUE(doc.Get("e").ExactInt64(&v)) << "420E-1 is 42";
  EXPECT_EQ(v, 42);
  EXPECT_FALSE(doc.Get("f").ExactInt64(&v)) << "425E-1 is 42.5";
}

// ---- Validation ----

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(ValidateBson, AcceptsTheEmptyDocument) {
  EXPECT_TRUE(ValidateBson(Bytes({5, 0, 0, 0, 0})).ok());
}

TEST(ValidateBson, RejectsStructuralDamageWithInvalidBSON) {
  struct Case {
    const char* what;
    std::string bytes;
    const char* message;
  };
  std::vector<Case> cases = {
      {"too short", Bytes({4, 0, 0, 0}), "cannot hold"},
      {"length mismatch", Bytes({6, 0, 0, 0, 0}), "does not match"},
      {"terminator is a type byte", Bytes({5, 0, 0, 0, 1}), "field name is missing"},
      {"unknown type", Bytes({8, 0, 0, 0, 0x20, 'a', 0, 0}), "unknown BSON type 0x20"},
      {"bool 2", Bytes({9, 0, 0, 0, 8, 'a', 0, 2, 0}), "not 0 or 1"},
      {"key runs off", Bytes({7, 0, 0, 0, 0x10, 'a', 'b'}), "field name is not NUL-terminated"},
      {"negative string length",
       Bytes({13, 0, 0, 0, 2, 'a', 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0}), "is invalid"},
      {"string not terminated", Bytes({14, 0, 0, 0, 2, 'a', 0, 2, 0, 0, 0, 'x', 'y', 0}),
       "not NUL-terminated"},
      {"bad utf8", Bytes({14, 0, 0, 0, 2, 'a', 0, 2, 0, 0, 0, 0xC0, 0, 0}), "UTF-8"},
      {"overlong utf8", Bytes({15, 0, 0, 0, 2, 'a', 0, 3, 0, 0, 0, 0xC0, 0x80, 0, 0}), "UTF-8"},
      {"int32 truncated", Bytes({9, 0, 0, 0, 0x10, 'a', 0, 1, 0}), "int32 value truncated"},
      // Found by fuzzing: a type byte where the terminator belongs once
      // made the key scan run past the buffer.
      {"type byte in terminator position",
       Bytes({0x10, 0, 0, 0, 0x01, 0x64, 0, 0, 0xCE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}),
       "field name is missing"},
      {"subdocument eats terminator",
       Bytes({13, 0, 0, 0, 3, 'a', 0, 6, 0, 0, 0, 0, 0}), "runs past"},
  };
  for (const Case& c : cases) {
    Status s = ValidateBson(c.bytes);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidBSON) << c.what << ": " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.what;
  }
}

TEST(ValidateBson, SizeLimitIsBSONObjectTooLarge) {
  std::string bytes = Bytes({0, 0, 0, 0, 0});
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(bytes.data()), kMaxBsonObjectSize + 1);
  Status s = ValidateBson(bytes);
  EXPECT_EQ(s.code(), ErrorCode::kBSONObjectTooLarge);
  EXPECT_EQ(s.code_number(), 10334);
}

Document Nested(int depth) {
  BsonBuilder b;
  for (int i = 0; i < depth; ++i) b.OpenDocument("a");
  for (int i = 0; i < depth; ++i) b.Close();
  return std::move(b).Build();
}

TEST(ValidateBson, NestingLimitIsOneHundred) {
  EXPECT_TRUE(ValidateBson(Nested(kMaxNestingDepth).bytes()).ok());
  Status s = ValidateBson(Nested(kMaxNestingDepth + 1).bytes());
  EXPECT_EQ(s.code(), ErrorCode::kOverflow);
  EXPECT_THAT(std::string(s.message()), HasSubstr("nesting depth"));
}

// Every single-byte corruption and every truncation of a rich document is
// either rejected or still a well-formed document: never a crash (run under
// ASan in CI to catch out-of-bounds reads).
TEST(ValidateBson, SurvivesEveryByteFlipAndTruncation) {
  test::RandomDocuments gen(42);
  int rejected = 0, accepted = 0;
  for (int round = 0; round < 20; ++round) {
    Document doc = gen.Next();
    const std::string& original = doc.bytes();
    for (size_t i = 0; i < original.size(); ++i) {
      for (int flip : {0x01, 0x80, 0xFF}) {
        std::string bytes = original;
        bytes[i] = static_cast<char>(bytes[i] ^ flip);
        Status s = ValidateBson(bytes);
        if (s.ok()) {
          ++accepted;
          // Whatever was accepted must be fully walkable.
          auto d = Document::FromBytes(bytes);
          ASSERT_TRUE(d.ok());
          EXPECT_EQ(CompareDocuments(*d, *d), 0);
        } else {
          ++rejected;
        }
      }
    }
    for (size_t n = 0; n < original.size(); ++n) {
      EXPECT_EQ(ValidateBson(std::string_view(original).substr(0, n)).code(), ErrorCode::kInvalidBSON)
          << "truncated to " << n << " bytes";
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0);
}

// ---- ObjectId ----

// ToValidUtf8 against its definition: the output is valid UTF-8, valid
// input is kept as it is, and every byte of the input is either kept (as
// part of a valid sequence) or becomes one '?'.
TEST(Utf8, ToValidUtf8KeepsValidSequencesAndReplacesEachOtherByte) {
  EXPECT_EQ(ToValidUtf8("plain"), "plain");
  EXPECT_EQ(ToValidUtf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(ToValidUtf8(".dmi\xa9"), ".dmi?");
  EXPECT_EQ(ToValidUtf8("\xc3"), "?");                 // truncated
  EXPECT_EQ(ToValidUtf8("\xc0\x80"), "??");             // overlong
  EXPECT_EQ(ToValidUtf8("\xed\xa0\x80x"), "???x");     // surrogate
  EXPECT_EQ(ToValidUtf8("\xf0\x9f\x98\x80\xff"), "\xf0\x9f\x98\x80?");
  std::mt19937 rng(7);
  for (int round = 0; round < 20000; ++round) {
    std::string in(rng() % 12, '\0');
    for (char& c : in) c = static_cast<char>(rng() % 4 == 0 ? 0x80 | rng() % 0x80 : rng());
    std::string out = ToValidUtf8(in);
    ASSERT_TRUE(IsValidUtf8(out)) << round;
    if (IsValidUtf8(in)) ASSERT_EQ(out, in);
    ASSERT_EQ(out.size(), in.size());  // one '?' for one byte, kept bytes kept
    for (size_t i = 0; i < in.size(); ++i) ASSERT_TRUE(out[i] == in[i] || out[i] == '?');
  }
}

// An error's message quotes what a caller sent and becomes a BSON string
// (errmsg), so it is valid UTF-8 whatever was quoted.
TEST(Utf8, StatusMessagesAreValidUtf8) {
  Status s(ErrorCode::kInvalidNamespace, "Invalid database name: '.dmi\xa9'");
  EXPECT_EQ(s.message(), "Invalid database name: '.dmi?'");
  EXPECT_EQ(s.WithContext("in \xff").message(), "in ?: Invalid database name: '.dmi?'");
  EXPECT_EQ(BadValue("\xe2\x82").message(), "??");
}

TEST(ObjectId, GenerateParseAndPrint) {
  ObjectId a = ObjectId::GenerateAt(0x5f1d7f0b);
  ObjectId b = ObjectId::GenerateAt(0x5f1d7f0b);
  EXPECT_NE(a, b) << "the counter makes ids unique";
  EXPECT_EQ(a.timestamp(), 0x5f1d7f0bu);
  EXPECT_EQ(a.ToHex().substr(0, 8), "5f1d7f0b");
  auto parsed = ObjectId::FromHex(a.ToHex());
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, a);
  auto upper = ObjectId::FromHex("5F1D7F0B9D3C2A1B2C3D4E5F");
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(upper->ToHex(), "5f1d7f0b9d3c2a1b2c3d4e5f");
  EXPECT_EQ(ObjectId::FromHex("5f1d").status().code(), ErrorCode::kFailedToParse);
  EXPECT_EQ(ObjectId::FromHex("zz1d7f0b9d3c2a1b2c3d4e5f").status().code(),
            ErrorCode::kFailedToParse);
}

// ---- Comparison ----

// One value of each type in MongoDB's documented order, lowest first.
Document OneOfEachTypeInOrder() {
  BsonBuilder b;
  b.AppendMinKey("a")
      .AppendNull("b")
      .AppendInt32("c", 1)
      .AppendString("d", "x")
      .OpenDocument("e").Close()
      .OpenArray("f").Close()
      .AppendBinary("g", BinarySubtype::kGeneric, "")
      .AppendObjectId("h", ObjectId())
      .AppendBool("i", false)
      .AppendDateTime("j", 0)
      .AppendTimestamp("k", BsonTimestamp{})
      .AppendRegex("l", "a", "")
      .AppendMaxKey("m");
  return std::move(b).Build();
}

TEST(Compare, CrossTypeOrderIsMongoDBs) {
  Document doc = OneOfEachTypeInOrder();
  std::vector<Element> v(doc.begin(), doc.end());
  for (size_t i = 0; i < v.size(); ++i) {
    for (size_t j = 0; j < v.size(); ++j) {
      int c = CompareValues(v[i], v[j]);
      EXPECT_EQ(c < 0, i < j) << v[i].key() << " vs " << v[j].key();
      EXPECT_EQ(c == 0, i == j) << v[i].key() << " vs " << v[j].key();
    }
  }
}

TEST(Compare, WithinTypes) {
  Document d = std::move(BsonBuilder()
                             .AppendString("s1", "ab")
                             .AppendString("s2", "abc")
                             .AppendSymbol("sym", "ab")
                             .AppendBinary("b1", BinarySubtype::kUserDefined, "z")
                             .AppendBinary("b2", BinarySubtype::kGeneric, "aa")
                             .AppendDateTime("d1", -5)
                             .AppendDateTime("d2", 5)
                             .AppendInt32("i", 2)
                             .AppendDouble("x", 2.0)
                             .AppendInt64("l", 3))
                   .Build();
  EXPECT_LT(CompareValues(d.Get("s1"), d.Get("s2")), 0);
  EXPECT_EQ(CompareValues(d.Get("s1"), d.Get("sym")), 0) << "string and symbol compare equal";
  EXPECT_LT(CompareValues(d.Get("b1"), d.Get("b2")), 0) << "binary: shorter first";
  EXPECT_LT(CompareValues(d.Get("d1"), d.Get("d2")), 0) << "dates are signed";
  EXPECT_EQ(CompareValues(d.Get("i"), d.Get("x")), 0);
  EXPECT_LT(CompareValues(d.Get("x"), d.Get("l")), 0);
}

TEST(Compare, DocumentsComparePrefixFirstThenTypeThenName) {
  auto doc = [](auto fill) {
    BsonBuilder b;
    fill(b);
    return std::move(b).Build();
  };
  Document a1 = doc([](BsonBuilder& b) { b.AppendInt32("a", 1); });
  Document a1b = doc([](BsonBuilder& b) { b.AppendInt32("a", 1).AppendInt32("b", 0); });
  Document astr = doc([](BsonBuilder& b) { b.AppendString("a", ""); });
  Document b1 = doc([](BsonBuilder& b) { b.AppendInt32("b", 1); });
  EXPECT_LT(CompareDocuments(a1, a1b), 0);
  EXPECT_LT(CompareDocuments(a1, astr), 0) << "type rank before value";
  EXPECT_LT(CompareDocuments(a1, b1), 0) << "field name before value";
  EXPECT_LT(CompareDocuments(b1, astr), 0) << "type rank before field name";
}

// Property: CompareValues is a total preorder over random values:
// antisymmetric, transitive, and consistent with the canonical type rank.
TEST(Compare, IsATotalOrderOverRandomValues) {
  test::RandomDocuments gen(7);
  std::vector<Document> docs;
  std::vector<Element> values;
  for (int i = 0; i < 60; ++i) docs.push_back(gen.Next());
  for (const Document& d : docs)
    for (Element e : d) values.push_back(e);
  ASSERT_GT(values.size(), 100u);
  std::mt19937 rng(1);
  for (int trial = 0; trial < 20000; ++trial) {
    const Element& a = values[rng() % values.size()];
    const Element& b = values[rng() % values.size()];
    const Element& c = values[rng() % values.size()];
    int ab = CompareValues(a, b), ba = CompareValues(b, a);
    ASSERT_EQ(ab < 0, ba > 0);
    ASSERT_EQ(ab == 0, ba == 0);
    if (CanonicalTypeRank(a.type()) < CanonicalTypeRank(b.type())) {
      ASSERT_LT(ab, 0);
    }
    int bc = CompareValues(b, c), ac = CompareValues(a, c);
    if (ab <= 0 && bc <= 0) {
      ASSERT_LE(ac, 0);
    }
    if (ab == 0 && bc == 0) {
      ASSERT_EQ(ac, 0);
    }
  }
  // Sorting with the comparison must give a sequence that is ordered pairwise.
  std::vector<Element> sorted = values;
  std::sort(sorted.begin(), sorted.end(),
            [](const Element& x, const Element& y) { return CompareValues(x, y) < 0; });
  for (size_t i = 1; i < sorted.size(); ++i) EXPECT_LE(CompareValues(sorted[i - 1], sorted[i]), 0);
}

}  // namespace
}  // namespace rockdoc

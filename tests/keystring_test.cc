// keystring: byte order equals MongoDB's value order, equal values give
// equal bytes, encodings are prefix-free, and decoding with the type bits is
// exact. Fixed vectors pin the on-disk format (README.md); properties over
// random values check the rest against CompareValues as independent truth.
#include "keystring/keystring.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc::keystring {
namespace {

using ::testing::HasSubstr;

std::string Hex(std::string_view s) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

int Sign(int v) { return v < 0 ? -1 : (v > 0 ? 1 : 0); }
int ByteOrder(std::string_view a, std::string_view b) { return Sign(a.compare(b)); }

// A document holding one value under "v": values are built and kept this way.
class Value {
 public:
  explicit Value(Document doc) : doc_(std::move(doc)) {}
  Element element() const { return doc_.view().begin() == doc_.view().end() ? Element() : *doc_.view().begin(); }
  const Document& doc() const { return doc_; }

 private:
  Document doc_;
};

template <typename F>
Value Make(F append) {
  BsonBuilder b;
  append(b);
  return Value(std::move(b).Build());
}
Value Int32(int32_t v) { return Make([&](BsonBuilder& b) { b.AppendInt32("v", v); }); }
Value Int64(int64_t v) { return Make([&](BsonBuilder& b) { b.AppendInt64("v", v); }); }
Value Dbl(double v) { return Make([&](BsonBuilder& b) { b.AppendDouble("v", v); }); }
Value Dec(std::string_view text) {
  auto d = Decimal128::FromString(text);
  EXPECT_TRUE(d.ok()) << text;
  return Make([&](BsonBuilder& b) { b.AppendDecimal128("v", d.value_or(Decimal128())); });
}
Value Str(std::string_view s) { return Make([&](BsonBuilder& b) { b.AppendString("v", s); }); }
// The first field of a JSON literal, e.g. J(R"({"v": {"a": 1}})").
Value J(std::string_view json) { return Value(test::Json(json)); }

struct Encoded {
  std::string bytes;
  std::string type_bits;
};
Encoded Encode(const Element& e, uint32_t descending = 0) {
  Builder b(descending);
  b.Append(e);
  return {b.bytes(), b.type_bits()};
}

// Decodes a one-field key into {"v": ...}.
StatusOr<Document> DecodeOne(std::string_view key, std::string_view type_bits,
                             uint32_t descending = 0, size_t* consumed = nullptr) {
  BsonBuilder b;
  Status s = Decode(key, type_bits, descending, {"v"}, &b, consumed);
  if (!s.ok()) return s;
  return std::move(b).Build();
}

std::string ValueText(const Value& v) { return ToJson(v.doc().view(), JsonFormat::kCanonical); }

// ---------------------------------------------------------------------------
// Format vectors: these bytes are on disk. If one of these fails, the format
// changed: existing databases would sort wrongly. Do not "fix" the test.
// ---------------------------------------------------------------------------
TEST(KeyStringFormat, Vectors) {
  struct Case {
    Value value;
    std::string hex;
  };
  const Case cases[] = {
      {J(R"({"v": {"$minKey": 1}})"), "0a"},
      {J(R"({"v": {"$undefined": true}})"), "0b"},
      {J(R"({"v": null})"), "0c"},
      {Dbl(std::nan("")), "10"},
      {Dbl(-INFINITY), "11"},
      {Int32(-1), "52 ff"},        // class 0x13 + (63 - 0), group inverted
      {Int32(0), "74"},
      {Int32(1), "96 00"},         // class 0x76 + (0 + 32), no fraction bits
      {Int32(3), "97 80"},         // 2^1 * 1.1b: group 1000000b, last
      {Dbl(0.5), "95 00"},
      {Int64(INT64_MAX), "d4 ff ff ff ff ff ff ff ff fc"},  // E = 62: 62 one bits
      {Dbl(0x1p64), "d6 80 40 00"},  // E = 64: large class, 2-byte exponent
      {Dbl(INFINITY), "d7"},
      {Str(""), "e0 00"},
      {Str(std::string("a\0\x01", 3)), "e0 61 01 01 01 02 00"},
      {J(R"({"v": {}})"), "e1 00"},
      {J(R"({"v": {"a": 1}})"), "e1 04 61 00 96 00 00"},
      {J(R"({"v": [true, false]})"), "e2 e6 e5 00"},
      {J(R"({"v": {"$binary": {"base64": "AQI=", "subType": "80"}}})"), "e3 02 80 01 02"},
      {J(R"({"v": {"$oid": "0102030405060708090a0b0c"}})"),
       "e4 01 02 03 04 05 06 07 08 09 0a 0b 0c"},
      {J(R"({"v": {"$date": {"$numberLong": "1"}}})"), "e7 80 00 00 00 00 00 00 01"},
      {J(R"({"v": {"$timestamp": {"t": 1, "i": 2}}})"), "e8 00 00 00 01 00 00 00 02"},
      {J(R"({"v": {"$regularExpression": {"pattern": "a", "options": "i"}}})"), "e9 61 00 69 00"},
      {J(R"({"v": {"$code": "f"}})"), "eb 66 00"},
      {J(R"({"v": {"$maxKey": 1}})"), "f0"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Hex(Encode(c.value.element()).bytes), c.hex) << ValueText(c.value);
  }
  // A descending field inverts its bytes; a missing element is null.
  EXPECT_EQ(Hex(Encode(Int32(1).element(), /*descending=*/1).bytes), "69 ff");
  EXPECT_EQ(Hex(EncodeValue(Element())), "0c");
  // Decimal 0.1 is not dyadic: 1.1001 1001 1001...b * 2^-4, so 9 groups of
  // its binary expansion (period 4 over groups of 7), all marked "more",
  // then its exact decimal: adjusted exponent -1 (+0x8000), digits "1" + pad.
  EXPECT_EQ(Hex(Encode(Dec("0.1").element()).bytes),
            "92 99 cd 67 33 99 cd 67 33 99 7f ff 14");
}

TEST(KeyStringFormat, TypeBitsAreEmptyForDefaultFlavours) {
  // int32, string and the types with a single flavour need no side data.
  for (const Value& v : {Int32(5), Int32(0), Str("x"), J(R"({"v": {"$oid": "0102030405060708090a0b0c"}})"),
                         J(R"({"v": {"a": [1, "x", {"b": null}, true]}})")}) {
    EXPECT_EQ(Encode(v.element()).type_bits, "") << ValueText(v);
  }
  // Others do: the numeric type, the sign of a zero, a symbol.
  for (const Value& v : {Int64(5), Dbl(2.5), Dbl(0.0), Dbl(-0.0), Dec("1.0"),
                         J(R"({"v": {"$symbol": "x"}})")}) {
    EXPECT_NE(Encode(v.element()).type_bits, "") << ValueText(v);
  }
}

// ---------------------------------------------------------------------------
// Numbers.
// ---------------------------------------------------------------------------
TEST(KeyStringNumbers, EqualValuesOfAnyTypeGiveEqualBytesAndDecodeExactly) {
  const std::vector<std::vector<Value>> groups = [] {
    std::vector<std::vector<Value>> g;
    g.push_back({});
    for (auto* v : {"1", "1.0", "1.00", "1.000000000000000000000000000000000", "1000E-3"}) g.back().push_back(Dec(v));
    g.back().push_back(Int32(1));
    g.back().push_back(Int64(1));
    g.back().push_back(Dbl(1.0));
    g.push_back({Int32(0), Int64(0), Dbl(0.0), Dbl(-0.0), Dec("0"), Dec("-0"), Dec("0E+300"),
                 Dec("-0.000")});
    g.push_back({Dbl(std::nan("")), Dbl(-std::nan("")), Dbl(std::nan("0x123")), Dec("NaN"),
                 Dec("-NaN")});
    g.push_back({Dbl(-INFINITY), Dec("-Infinity")});
    g.push_back({Int64(INT64_MIN), Dbl(-0x1p63), Dec("-9223372036854775808")});
    g.push_back({Int64((int64_t{1} << 53) + 1), Dec("9007199254740993")});
    g.push_back({Dbl(0.5), Dec("0.5"), Dec("0.50000")});
    g.push_back({Dbl(0x1p-20), Dec("9.5367431640625E-7"), Dec("0.00000095367431640625000")});
    return g;
  }();
  for (const auto& group : groups) {
    const Encoded first = Encode(group[0].element());
    std::map<std::string, std::string> bson_by_type_bits;
    for (const Value& v : group) {
      Encoded e = Encode(v.element());
      EXPECT_EQ(Hex(e.bytes), Hex(first.bytes)) << ValueText(v) << " vs " << ValueText(group[0]);
      EXPECT_EQ(CompareValues(v.element(), group[0].element()), 0) << ValueText(v);
      auto back = DecodeOne(e.bytes, e.type_bits);
      ASSERT_TRUE(back.ok()) << back.status() << " " << ValueText(v);
      EXPECT_EQ(Hex(back->bytes()), Hex(v.doc().bytes())) << ValueText(v);
      // Distinct representations need distinct type bits.
      auto [it, inserted] = bson_by_type_bits.emplace(e.type_bits, v.doc().bytes());
      EXPECT_TRUE(inserted || it->second == v.doc().bytes()) << ValueText(v);
    }
    EXPECT_GT(bson_by_type_bits.size(), 1u);
  }
}

TEST(KeyStringNumbers, SortedEdgeValuesEncodeInOrder) {
  // Strictly ascending by exact value.
  const std::vector<Value> ascending = {
      Dbl(std::nan("")),
      Dbl(-INFINITY),
      Dec("-9.999999999999999999999999999999999E+6144"),
      Dbl(-std::numeric_limits<double>::max()),
      Dec("-1E+30"),
      Dbl(-0x1p64),
      Dec("-18446744073709551615"),
      Int64(INT64_MIN),
      Int64(INT64_MIN + 1),
      Int64(-(int64_t{1} << 53) - 1),
      Dbl(-0x1p53),
      Int32(INT32_MIN),
      Dbl(-1.5),
      Int32(-1),
      Dec("-0.99999999999999999999999999999999"),
      Dbl(-0x1p-33),
      Dbl(-std::numeric_limits<double>::denorm_min()),
      Dec("-1E-6176"),
      Int32(0),
      Dec("1E-6176"),
      Dbl(std::numeric_limits<double>::denorm_min()),
      Dbl(std::numeric_limits<double>::min()),
      Dec("1E-300"),
      Dbl(0x1p-33),
      Dbl(0x1p-32),
      Dec("0.1"),
      Dbl(0.1),
      Dec("0.1000000000000000055511151231257828"),
      Dbl(0.5),
      Dec("0.99999999999999999999999999999999"),
      Int32(1),
      Dec("1.000000000000000000000000000000001"),
      Dbl(1.0000000000000002),
      Dbl(2.5),
      Int32(3),
      Int32(INT32_MAX),
      Dbl(0x1p53),
      Int64((int64_t{1} << 53) + 1),
      Dbl(0x1p53 + 2),
      Int64(INT64_MAX - 1),
      Int64(INT64_MAX),
      Dbl(0x1p63),
      Dec("9223372036854775808.5"),
      Dec("18446744073709551615"),
      Dbl(0x1p64),
      Dec("18446744073709551617"),
      Dec("1E+30"),
      Dbl(1e300),
      Dbl(std::numeric_limits<double>::max()),
      Dec("1E+309"),
      Dec("9.999999999999999999999999999999999E+6144"),
      Dbl(INFINITY),
  };
  for (size_t i = 0; i < ascending.size(); ++i) {
    const std::string a = Encode(ascending[i].element()).bytes;
    for (size_t j = 0; j < ascending.size(); ++j) {
      const std::string b = Encode(ascending[j].element()).bytes;
      const int expected = i < j ? -1 : (i > j ? 1 : 0);
      ASSERT_EQ(Sign(CompareValues(ascending[i].element(), ascending[j].element())), expected)
          << "the list itself is wrong at " << ValueText(ascending[i]) << " vs "
          << ValueText(ascending[j]);
      EXPECT_EQ(ByteOrder(a, b), expected)
          << ValueText(ascending[i]) << " [" << Hex(a) << "] vs " << ValueText(ascending[j])
          << " [" << Hex(b) << "]";
    }
  }
}

TEST(KeyStringNumbers, IntegersAndIntegralDoublesAreCompact) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    const auto v = static_cast<int64_t>(rng()) >> (rng() % 64);
    EXPECT_LE(Encode(Int64(v).element()).bytes.size(), 10u) << v;
    EXPECT_LE(Encode(Dbl(static_cast<double>(v)).element()).bytes.size(), 10u) << v;
    EXPECT_LE(Encode(Dbl(std::ldexp(static_cast<double>(v), -20)).element()).bytes.size(), 9u);
  }
  EXPECT_EQ(Encode(Int64(INT64_MIN).element()).bytes.size(), 2u);  // -2^63: no fraction bits
  EXPECT_EQ(Encode(Int64(INT64_MIN + 1).element()).bytes.size(), 10u);
  EXPECT_EQ(Encode(Int32(100).element()).bytes.size(), 2u);
}

// ---------------------------------------------------------------------------
// Other types.
// ---------------------------------------------------------------------------
void ExpectAscending(const std::vector<Value>& values) {
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    const Element a = values[i].element(), b = values[i + 1].element();
    ASSERT_LT(CompareValues(a, b), 0)
        << "the list itself is wrong at " << ValueText(values[i]) << " vs " << ValueText(values[i + 1]);
    EXPECT_LT(Encode(a).bytes, Encode(b).bytes)
        << ValueText(values[i]) << " [" << Hex(Encode(a).bytes) << "] vs " << ValueText(values[i + 1])
        << " [" << Hex(Encode(b).bytes) << "]";
  }
}

TEST(KeyStringTypes, CrossTypeOrderIsMongoDbs) {
  ExpectAscending({
      J(R"({"v": {"$minKey": 1}})"),
      J(R"({"v": {"$undefined": true}})"),
      J(R"({"v": null})"),
      Dbl(std::nan("")),
      Dbl(INFINITY),
      Str(""),
      J(R"({"v": {"$symbol": "b"}})"),
      Str("c"),
      J(R"({"v": {}})"),
      J(R"({"v": []})"),
      J(R"({"v": {"$binary": {"base64": "", "subType": "00"}}})"),
      J(R"({"v": {"$oid": "000000000000000000000000"}})"),
      J(R"({"v": false})"),
      J(R"({"v": true})"),
      J(R"({"v": {"$date": {"$numberLong": "-9223372036854775808"}}})"),
      J(R"({"v": {"$timestamp": {"t": 0, "i": 0}}})"),
      J(R"({"v": {"$regularExpression": {"pattern": "", "options": ""}}})"),
      J(R"({"v": {"$dbPointer": {"$ref": "", "$id": {"$oid": "000000000000000000000000"}}}})"),
      J(R"({"v": {"$code": ""}})"),
      J(R"({"v": {"$code": "", "$scope": {}}})"),
      J(R"({"v": {"$maxKey": 1}})"),
  });
}

TEST(KeyStringTypes, StringsWithNulAndLowBytes) {
  const std::string nul(1, '\0');
  ExpectAscending({Str(""), Str(nul), Str(nul + nul), Str(nul + "\x01"), Str("\x01"),
                   Str("\x01" + nul), Str("\x02"), Str("a"), Str("a" + nul), Str("a\x01"),
                   Str("a\x01\x01"), Str("a\x02"), Str("ab"), Str("b"), Str("\x7f"),
                   Str("\xc3\xa9"), Str("\xe6\x97\xa5"), Str("\xff")});
  // String and symbol with the same text are equal and decode to their own type.
  const Value sym = J(R"({"v": {"$symbol": "a\u0000b"}})");
  const Value str = Str(std::string("a\0b", 3));
  EXPECT_EQ(Encode(sym.element()).bytes, Encode(str.element()).bytes);
  auto back = DecodeOne(Encode(sym.element()).bytes, Encode(sym.element()).type_bits);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->bytes(), sym.doc().bytes());
}

TEST(KeyStringTypes, ObjectsCompareByTypeRankThenNameThenValue) {
  ExpectAscending({
      J(R"({"v": {}})"),
      J(R"({"v": {"b": null}})"),        // null ranks below numbers, whatever the name
      J(R"({"v": {"a": {"$numberDouble": "NaN"}}})"),
      J(R"({"v": {"a": 1}})"),
      J(R"({"v": {"a": 1, "b": 1}})"),   // a prefix sorts first
      J(R"({"v": {"a": 1, "c": 1}})"),
      J(R"({"v": {"a": 2}})"),
      J(R"({"v": {"b": {"$numberDouble": "NaN"}}})"),  // same rank: the name decides
      J(R"({"v": {"ba": -5}})"),
      J(R"({"v": {"": "x"}})"),           // strings rank above numbers
      J(R"({"v": {"a": "x"}})"),
      J(R"({"v": {"a": {}}})"),
      J(R"({"v": {"a": []}})"),
  });
}

TEST(KeyStringTypes, ArraysCompareElementByElement) {
  ExpectAscending({J(R"({"v": []})"), J(R"({"v": [null]})"), J(R"({"v": [1]})"),
                   J(R"({"v": [1, null]})"), J(R"({"v": [1, 2]})"), J(R"({"v": [1.5]})"),
                   J(R"({"v": [2]})"), J(R"({"v": [""]})"), J(R"({"v": [[]]})"),
                   J(R"({"v": [[1]]})"), J(R"({"v": [true]})")});
}

TEST(KeyStringTypes, BinDataComparesByLengthThenSubtypeThenBytes) {
  auto bin = [](uint8_t subtype, std::string data) {
    return Make([&](BsonBuilder& b) {
      b.AppendBinary("v", static_cast<BinarySubtype>(subtype), data);
    });
  };
  ExpectAscending({bin(0x80, ""), bin(0x00, "a"), bin(0x80, "a"), bin(0x00, "ab"),
                   bin(0x00, "b\xff"), bin(0x04, "aa"), bin(0x02, ""),  // outer length 4
                   bin(0x00, "abcde"), bin(0x00, std::string(300, 'x')),
                   bin(0x00, std::string(301, '\0'))});
}

TEST(KeyStringTypes, DbPointerComparesByNamespaceLengthFirst) {
  auto ptr = [](std::string ns, uint8_t last) {
    uint8_t bytes[12] = {};
    bytes[11] = last;
    return Make([&](BsonBuilder& b) { b.AppendDbPointer("v", ns, ObjectId(bytes)); });
  };
  ExpectAscending({ptr("", 9), ptr("z", 0), ptr("z", 1), ptr("aa", 0), ptr("ab", 0)});
}

TEST(KeyStringTypes, OtherScalarsOrderWithinTheirType) {
  ExpectAscending({J(R"({"v": {"$date": {"$numberLong": "-9223372036854775808"}}})"),
                   J(R"({"v": {"$date": {"$numberLong": "-1"}}})"),
                   J(R"({"v": {"$date": {"$numberLong": "0"}}})"),
                   J(R"({"v": {"$date": {"$numberLong": "9223372036854775807"}}})")});
  ExpectAscending({J(R"({"v": {"$timestamp": {"t": 0, "i": 4294967295}}})"),
                   J(R"({"v": {"$timestamp": {"t": 1, "i": 0}}})"),
                   J(R"({"v": {"$timestamp": {"t": 4294967295, "i": 0}}})")});
  ExpectAscending({J(R"({"v": {"$regularExpression": {"pattern": "a", "options": "m"}}})"),
                   J(R"({"v": {"$regularExpression": {"pattern": "a", "options": "mx"}}})"),
                   J(R"({"v": {"$regularExpression": {"pattern": "ab", "options": ""}}})"),
                   J(R"({"v": {"$regularExpression": {"pattern": "b", "options": ""}}})")});
  ExpectAscending({J(R"({"v": {"$code": "a", "$scope": {"x": 2}}})"),
                   J(R"({"v": {"$code": "a", "$scope": {"y": 1}}})"),
                   J(R"({"v": {"$code": "b", "$scope": {}}})")});
  ExpectAscending({J(R"({"v": {"$oid": "000000000000000000000001"}})"),
                   J(R"({"v": {"$oid": "0000000000000000000000ff"}})"),
                   J(R"({"v": {"$oid": "ff0000000000000000000000"}})")});
}

TEST(KeyStringTypes, DeepNestingRoundTrips) {
  BsonBuilder b;
  b.OpenDocument("v");
  for (int i = 1; i < kMaxNestingDepth - 1; ++i) {
    if (i % 2) {
      b.OpenArray("x");
    } else {
      b.OpenDocument("x");
    }
  }
  b.AppendDecimal128("d", *Decimal128::FromString("-1.50"));
  while (b.depth() > 0) b.Close();
  const Document doc = std::move(b).Build();
  ASSERT_TRUE(ValidateBson(doc.bytes()).ok());
  const Encoded e = Encode(*doc.begin());
  auto back = DecodeOne(e.bytes, e.type_bits);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->bytes(), doc.bytes());
}

// ---------------------------------------------------------------------------
// Compound keys, directions, bounds.
// ---------------------------------------------------------------------------
TEST(KeyStringCompound, DescendingFieldInvertsItsBytes) {
  const Value one = Int32(1), two = Int32(2);
  Builder asc(0), desc(1);
  asc.Append(one.element());
  desc.Append(one.element());
  ASSERT_EQ(asc.bytes().size(), desc.bytes().size());
  for (size_t i = 0; i < asc.bytes().size(); ++i) {
    EXPECT_EQ(static_cast<uint8_t>(asc.bytes()[i]), static_cast<uint8_t>(~desc.bytes()[i]));
  }
  EXPECT_GT(Encode(one.element(), 1).bytes, Encode(two.element(), 1).bytes);
  // MinKey/MaxKey conveniences invert too, and equal the encoded values.
  Builder b(0b10);
  b.AppendMinKey();
  b.AppendMinKey();
  Builder c(0b10);
  c.Append(J(R"({"v": {"$minKey": 1}})").element());
  c.Append(J(R"({"v": {"$minKey": 1}})").element());
  EXPECT_EQ(b.bytes(), c.bytes());
  EXPECT_EQ(Hex(b.bytes()), "0a f5");
  Builder m;
  m.AppendMaxKey();
  EXPECT_EQ(m.bytes(), EncodeValue(J(R"({"v": {"$maxKey": 1}})").element()));
}

TEST(KeyStringCompound, DecodeReportsConsumedBytesForAnIdSuffix) {
  const Document doc = test::Json(R"({"a": "x", "b": -2.5, "_id": {"$oid": "0102030405060708090a0b0c"}})");
  Builder b(0b10);
  b.Append(doc.Get("a"));
  b.Append(doc.Get("b"));
  const size_t key_size = b.bytes().size();
  b.Append(doc.Get("_id"));
  BsonBuilder out;
  size_t consumed = 0;
  ASSERT_TRUE(Decode(b.bytes(), b.type_bits(), 0b10, {"a", "b"}, &out, &consumed).ok());
  EXPECT_EQ(consumed, key_size);
  EXPECT_EQ(ToJson(std::move(out).Build()), R"({"a": "x", "b": -2.5})");
  EXPECT_EQ(std::string_view(b.bytes()).substr(consumed), EncodeValue(doc.Get("_id")));
  BsonBuilder all;
  ASSERT_TRUE(Decode(b.bytes(), b.type_bits(), 0b10, {"a", "b", "_id"}, &all, &consumed).ok());
  EXPECT_EQ(consumed, b.bytes().size());
  EXPECT_EQ(std::move(all).Build().bytes(), doc.bytes());
}

TEST(KeyStringCompound, ResetStartsOver) {
  Builder b(1);
  b.Append(Int64(7).element());
  b.Reset();
  EXPECT_EQ(b.bytes(), "");
  EXPECT_EQ(b.type_bits(), "");
  EXPECT_EQ(b.num_fields(), 0);
  b.Append(Int32(7).element());
  EXPECT_EQ(b.bytes(), Encode(Int32(7).element(), 1).bytes);
  EXPECT_EQ(b.type_bits(), "");
}

TEST(KeyStringBounds, PrefixSuccessor) {
  EXPECT_EQ(PrefixSuccessor(""), "");
  EXPECT_EQ(PrefixSuccessor("\xff\xff"), "");
  EXPECT_EQ(PrefixSuccessor("a"), "b");
  EXPECT_EQ(PrefixSuccessor(std::string("a\xff\xff", 3)), "b");
  EXPECT_EQ(PrefixSuccessor(std::string("a\x00", 2)), std::string("a\x01", 2));
}

// ---------------------------------------------------------------------------
// Malformed input: a specific error, never a crash.
// ---------------------------------------------------------------------------
void ExpectCorrupt(std::string_view key, std::string_view type_bits, std::string_view what) {
  auto r = DecodeOne(key, type_bits);
  ASSERT_FALSE(r.ok()) << Hex(key);
  EXPECT_EQ(r.status().code(), ErrorCode::kDataCorruptionDetected) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(what)) << Hex(key);
}

TEST(KeyStringDecode, RejectsMalformedKeys) {
  ExpectCorrupt("", "", "truncated value");
  ExpectCorrupt("\x01", "", "unknown type byte 1");
  ExpectCorrupt("\xe0" "ab", "", "bad string");
  ExpectCorrupt("\xe0\x01\x03\x00", "", "bad string");
  ExpectCorrupt("\x96", "", "truncated number");
  ExpectCorrupt(std::string("\x96\x01\x00", 3), "", "non-canonical number");  // 1 with a zero group
  ExpectCorrupt(std::string("\x95\x00", 2), "", "not an integer");             // 0.5 as int32
  ExpectCorrupt(std::string("\xd4\xff\xff\xff\xff\xff\xff\xff\xff\xfc", 10), "",
                "int32 out of range");  // INT64_MAX as int32
  ExpectCorrupt(std::string("\xe1\x05\x61\x00\x96\x00\x00", 7), "", "rank does not match");
  ExpectCorrupt(std::string("\xe2\xe6", 2), "", "truncated array");
  ExpectCorrupt(std::string("\xe3\xff\x00\x00\x00\x05\x00", 7), "", "bad binData");
  ExpectCorrupt(std::string("\xe3\x03\x02\x00\x00\x00", 6), "", "bad binData");
  ExpectCorrupt(std::string("\xe4\x01\x02", 3), "", "truncated ObjectId");
  // A decimal tail with a pair above 99.
  ExpectCorrupt(std::string("\x92\x99\x99\x99\x99\x99\x99\x99\x99\x99\x7f\xff\xfe", 13), "\xc0",
                "bad decimal tail");
  // Nesting beyond the limit.
  ExpectCorrupt(std::string(200, '\xe2'), "", "nesting too deep");
}

// Found by fuzz/keystring_decode_fuzz: the type bits spelled out the 64 or
// 128 bits of a value their short form already implies (+0.0, a canonical
// decimal zero), so two type-bit strings decoded to one value. Only the
// encoder's (canonical) form decodes.
TEST(KeyStringDecode, RejectsNonCanonicalTypeBits) {
  // Zero; double; explicit bits, all zero: +0.0, which the short form implies.
  ExpectCorrupt("\x74", "\xa0", "non-canonical type bits");
  // Zero; decimal; explicit bits of the decimal zero 0E+...: canonical.
  ExpectCorrupt("\x74", "\xe6\x56", "non-canonical type bits");
  // NaN; double; explicit bits of the quiet NaN 0x7FF8000000000000.
  ExpectCorrupt("\x10", std::string("\xaf\xff\x00", 3), "non-canonical type bits");
  // What needs the explicit form still decodes exactly.
  for (const Value& v : {Dbl(-0.0), Dec("-0E+3"), Dec("1.0")}) {
    Encoded e = Encode(v.element());
    auto back = DecodeOne(e.bytes, e.type_bits);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->bytes(), v.doc().bytes()) << ValueText(v);
  }
}

TEST(KeyStringDecode, MutatedKeysDecodeCanonicallyOrFailCleanly) {
  test::RandomDocuments gen(99);
  std::mt19937_64 rng(5);
  int decoded = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    const Document doc = gen.Next();
    for (const Element& e : doc) {
      Encoded enc = Encode(e);
      std::string key = enc.bytes, bits = enc.type_bits;
      switch (rng() % 4) {
        case 0: key.resize(rng() % (key.size() + 1)); break;
        case 1: key[rng() % key.size()] = static_cast<char>(rng()); break;
        case 2: key.insert(rng() % (key.size() + 1), 1, static_cast<char>(rng())); break;
        case 3: bits.push_back(static_cast<char>(rng())); bits[rng() % bits.size()] ^= 1; break;
      }
      size_t consumed = 0;
      auto r = DecodeOne(key, bits, 0, &consumed);
      if (r.ok()) {
        ++decoded;
        // Whatever decodes is a canonical encoding of what it decoded to.
        // Structurally valid BSON (UTF-8 is not checked: see keystring.h).
        BsonValidationOptions no_utf8;
        no_utf8.check_utf8 = false;
        ASSERT_TRUE(ValidateBson(r->bytes(), no_utf8).ok()) << Hex(key);
        EXPECT_EQ(Hex(EncodeValue(*r->begin())), Hex(key.substr(0, consumed)));
      } else {
        ++rejected;
        EXPECT_EQ(r.status().code(), ErrorCode::kDataCorruptionDetected) << r.status();
      }
    }
  }
  EXPECT_GT(decoded, 0);
  EXPECT_GT(rejected, 0);
}

// ---------------------------------------------------------------------------
// Properties over random values.
// ---------------------------------------------------------------------------

// Random values whose numbers often coincide across types (so that equality
// across int32/int64/double/decimal is exercised), with every BSON type.
class ValueGenerator {
 public:
  explicit ValueGenerator(uint64_t seed) : rng_(seed) {}

  Value Next(int max_depth = 3) {
    BsonBuilder b;
    Append(&b, "v", max_depth);
    return Value(std::move(b).Build());
  }

  void Append(BsonBuilder* b, std::string_view key, int depth) {
    switch (Uniform(0, depth > 0 ? 22 : 19)) {
      case 0: case 1: case 2: case 3: case 4: AppendNumber(b, key); break;
      case 5: case 6: b->AppendString(key, Text()); break;
      case 7: b->AppendSymbol(key, Text()); break;
      case 8: b->AppendBinary(key, Pick<BinarySubtype>({BinarySubtype::kGeneric, BinarySubtype::kBinaryOld,
                                                        BinarySubtype::kUuid, BinarySubtype::kUserDefined}),
                              Bytes()); break;
      case 9: b->AppendObjectId(key, Oid()); break;
      case 10: b->AppendBool(key, Uniform(0, 1) == 1); break;
      case 11: b->AppendDateTime(key, Pick<int64_t>({INT64_MIN, -1, 0, 1, INT64_MAX, 1700000000000})); break;
      case 12: b->AppendTimestamp(key, BsonTimestamp{Pick<uint32_t>({0, 1, 0x80000000u, 0xFFFFFFFFu}),
                                                     Pick<uint32_t>({0, 1, 0xFFFFFFFFu})}); break;
      case 13: b->AppendRegex(key, Pick<std::string>({"", "a", "ab", "b"}), Pick<std::string>({"", "i", "im"})); break;
      case 14: b->AppendDbPointer(key, Pick<std::string>({"", "a", "ab", "b"}), Oid()); break;
      case 15: b->AppendCode(key, Text()); break;
      case 16: b->AppendNull(key); break;
      case 17: b->AppendUndefined(key); break;
      case 18: b->AppendMinKey(key); break;
      case 19: b->AppendMaxKey(key); break;
      case 20:
        b->OpenDocument(key);
        for (int n = Uniform(0, 3); n > 0; --n) {
          Append(b, Pick<std::string>({"", "a", "b", "ab", "\x01"}), depth - 1);
        }
        b->Close();
        break;
      case 21:
        b->OpenArray(key);
        for (int n = Uniform(0, 3); n > 0; --n) Append(b, "", depth - 1);
        b->Close();
        break;
      case 22: {
        BsonBuilder scope;
        for (int n = Uniform(0, 2); n > 0; --n) Append(&scope, Pick<std::string>({"a", "b"}), depth - 1);
        b->AppendCodeWithScope(key, Text(), std::move(scope).Build().view());
        break;
      }
    }
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  template <typename T>
  T Pick(std::initializer_list<T> items) {
    return *(items.begin() + Uniform(0, static_cast<int>(items.size()) - 1));
  }

  std::string Text() {
    static const char* kPieces[] = {"a", "b", "\0", "\x01", "\x02", "\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x98\x80"};
    std::string s;
    for (int n = Uniform(0, 3); n > 0; --n) {
      const char* p = kPieces[Uniform(0, 7)];
      s.append(p, *p == '\0' ? 1 : std::strlen(p));
    }
    return s;
  }
  std::string Bytes() {
    std::string s;
    for (int n = Uniform(0, 4); n > 0; --n) s.push_back(Pick<char>({'\0', '\x01', 'a', '\xff'}));
    return s;
  }
  ObjectId Oid() {
    uint8_t bytes[12] = {};
    bytes[0] = static_cast<uint8_t>(Uniform(0, 2));
    bytes[11] = static_cast<uint8_t>(Uniform(0, 255));
    return ObjectId(bytes);
  }

  // An exact rational "seed" value, then written as any type that holds it.
  void AppendNumber(BsonBuilder* b, std::string_view key) {
    switch (Uniform(0, 9)) {
      case 0: {  // small integers in every type
        const int v = Uniform(-3, 3);
        switch (Uniform(0, 3)) {
          case 0: b->AppendInt32(key, v); break;
          case 1: b->AppendInt64(key, v); break;
          case 2: b->AppendDouble(key, v == 0 && Uniform(0, 1) ? -0.0 : v); break;
          case 3: b->AppendDecimal128(key, *Decimal128::FromString(
                      std::to_string(v) + Pick<std::string>({"", ".0", ".00", "E+3", "E-2"})));
            break;
        }
        break;
      }
      case 1: {  // int64 edges, as int64, double (when exact) or decimal
        const int64_t base = Pick<int64_t>({INT64_MIN, INT64_MAX, int64_t{1} << 53, -(int64_t{1} << 53),
                                            int64_t{1} << 62, INT32_MAX, INT32_MIN, 1000000});
        const int64_t v = base + Uniform(base == INT64_MIN ? 0 : -1, base == INT64_MAX ? 0 : 1);
        switch (Uniform(0, 3)) {
          case 0: b->AppendInt64(key, v); break;
          case 1:
            if (v >= INT32_MIN && v <= INT32_MAX) {
              b->AppendInt32(key, static_cast<int32_t>(v));
            } else {
              b->AppendInt64(key, v);
            }
            break;
          case 2: b->AppendDouble(key, static_cast<double>(v)); break;
          case 3: b->AppendDecimal128(key, Decimal128::FromInt64(v)); break;
        }
        break;
      }
      case 2: {  // dyadic fractions, as double or decimal
        const double v = Pick<double>({0.5, -0.5, 0.25, 1.5, -2.75, 0x1p-20, 1048576.125});
        if (Uniform(0, 1)) {
          b->AppendDouble(key, v);
        } else {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.20g", v);
          b->AppendDecimal128(key, *Decimal128::FromString(buf));
        }
        break;
      }
      case 3:  // special doubles
        b->AppendDouble(key, Pick<double>({std::nan(""), -std::nan(""), INFINITY, -INFINITY, -0.0,
                                           std::numeric_limits<double>::denorm_min(),
                                           -std::numeric_limits<double>::denorm_min(),
                                           std::numeric_limits<double>::min(),
                                           std::numeric_limits<double>::max(), 0.1, 0x1p63, 0x1p64,
                                           -0x1p64, 1e300, 1e-300}));
        break;
      case 4: {  // random double bits (any exponent, subnormals)
        double d;
        uint64_t bits = rng_();
        if (Uniform(0, 1)) {  // an exponent near 1 rather than anywhere
          bits = (bits & ~(uint64_t{0x7FF} << 52)) | (static_cast<uint64_t>(1023 + Uniform(-30, 70)) << 52);
        }
        std::memcpy(&d, &bits, sizeof d);
        b->AppendDouble(key, d);
        break;
      }
      case 5:  // special decimals
        b->AppendDecimal128(key, *Decimal128::FromString(Pick<std::string>(
            {"NaN", "-NaN", "Infinity", "-Infinity", "0.1", "-0.1", "0.10", "1E-6176", "-1E-6176",
             "9.999999999999999999999999999999999E+6144", "1E+6111", "0E+6111", "-0E-6176",
             "0.1000000000000000055511151231257827", "0.1000000000000000055511151231257828",
             "9223372036854775807.5", "18446744073709551616", "1E+30", "1.000000000000000000000000000000001",
             "0.99999999999999999999999999999999"})));
        break;
      case 6: {  // random coefficient and exponent
        std::string digits;
        for (int n = Uniform(1, 34); n > 0; --n) digits.push_back(static_cast<char>('0' + Uniform(0, 9)));
        const int exponent = Uniform(0, 1) ? Uniform(-40, 40) : Uniform(-6176, 6111);
        b->AppendDecimal128(key, *Decimal128::FromString((Uniform(0, 1) ? "-" : "") + digits + "E" +
                                                         std::to_string(exponent)));
        break;
      }
      case 7: {  // a decimal near a random double
        double d = std::ldexp(static_cast<double>(rng_() >> 11), Uniform(-80, 40));
        b->AppendDecimal128(key, Decimal128::FromDouble(Uniform(0, 1) ? d : -d));
        break;
      }
      case 8: b->AppendInt32(key, static_cast<int32_t>(rng_())); break;
      case 9: b->AppendInt64(key, static_cast<int64_t>(rng_()) >> Uniform(0, 63)); break;
    }
  }

  std::mt19937_64 rng_;
};

struct Sample {
  Value value;
  Encoded enc;
};

std::vector<Sample> Samples(uint64_t seed, int n) {
  ValueGenerator gen(seed);
  std::vector<Sample> out;
  for (int i = 0; i < n; ++i) {
    Value v = gen.Next();
    Encoded e = Encode(v.element());
    out.push_back({std::move(v), std::move(e)});
  }
  return out;
}

TEST(KeyStringProperties, ByteOrderEqualsCompareValues) {
  const std::vector<Sample> samples = Samples(1, 1500);
  int equal_pairs = 0, failures = 0;
  for (size_t i = 0; i < samples.size() && failures < 20; ++i) {
    for (size_t j = i; j < samples.size(); ++j) {
      const int expected = Sign(CompareValues(samples[i].value.element(), samples[j].value.element()));
      const int actual = ByteOrder(samples[i].enc.bytes, samples[j].enc.bytes);
      if (expected == 0) ++equal_pairs;
      if (expected != actual && ++failures < 20) {
        ADD_FAILURE() << ValueText(samples[i].value) << " [" << Hex(samples[i].enc.bytes) << "] vs "
                      << ValueText(samples[j].value) << " [" << Hex(samples[j].enc.bytes)
                      << "]: CompareValues " << expected << ", bytes " << actual;
      }
    }
  }
  // Equal values of different representations must have come up often.
  EXPECT_GT(equal_pairs, 3000);
}

TEST(KeyStringProperties, RoundTripIsExact) {
  for (const Sample& s : Samples(2, 5000)) {
    size_t consumed = 0;
    auto back = DecodeOne(s.enc.bytes, s.enc.type_bits, 0, &consumed);
    ASSERT_TRUE(back.ok()) << back.status() << " " << ValueText(s.value) << " " << Hex(s.enc.bytes);
    EXPECT_EQ(consumed, s.enc.bytes.size());
    EXPECT_EQ(Hex(back->bytes()), Hex(s.value.doc().bytes())) << ValueText(s.value);
    // Descending: same values back from the inverted bytes.
    const Encoded desc = Encode(s.value.element(), 1);
    auto back_desc = DecodeOne(desc.bytes, desc.type_bits, 1);
    ASSERT_TRUE(back_desc.ok()) << back_desc.status();
    EXPECT_EQ(back_desc->bytes(), s.value.doc().bytes());
  }
}

TEST(KeyStringProperties, EncodingsArePrefixFreeAndSuccessorsBound) {
  const std::vector<Sample> samples = Samples(3, 5000);
  for (uint32_t descending : {0u, 1u}) {
    std::vector<std::string> keys;
    for (const Sample& s : samples) keys.push_back(Encode(s.value.element(), descending).bytes);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    ASSERT_GT(keys.size(), 1500u);
    for (size_t i = 0; i + 1 < keys.size(); ++i) {
      // In sorted order a proper prefix would sit right before its extension.
      EXPECT_FALSE(keys[i + 1].starts_with(keys[i])) << Hex(keys[i]) << " / " << Hex(keys[i + 1]);
      // The successor of a key bounds everything starting with it, and
      // nothing greater sorts below it.
      const std::string succ = PrefixSuccessor(keys[i]);
      EXPECT_LT(keys[i] + std::string(3, '\xff'), succ);
      EXPECT_LE(succ, keys[i + 1]);
    }
  }
}

TEST(KeyStringProperties, CompoundKeysWithMixedDirectionsCompareFieldByField) {
  // Few distinct values, so that leading fields tie and later ones decide.
  const std::vector<Sample> pool = Samples(4, 40);
  std::mt19937_64 rng(4);
  constexpr int kFields = 3;
  int failures = 0;
  for (int trial = 0; trial < 200000 && failures < 20; ++trial) {
    const auto dirs = static_cast<uint32_t>(rng() & 7);
    int a[kFields], b[kFields];
    for (int f = 0; f < kFields; ++f) {
      a[f] = static_cast<int>(rng() % pool.size());
      b[f] = rng() % 3 == 0 ? a[f] : static_cast<int>(rng() % pool.size());
    }
    Builder ka(dirs), kb(dirs);
    int expected = 0;
    for (int f = 0; f < kFields; ++f) {
      ka.Append(pool[a[f]].value.element());
      kb.Append(pool[b[f]].value.element());
      if (expected == 0) {
        expected = Sign(CompareValues(pool[a[f]].value.element(), pool[b[f]].value.element()));
        if ((dirs >> f) & 1) expected = -expected;
      }
    }
    if (ByteOrder(ka.bytes(), kb.bytes()) != expected && ++failures < 20) {
      ADD_FAILURE() << "directions " << dirs << ": " << Hex(ka.bytes()) << " vs " << Hex(kb.bytes());
    }
    if (trial % 1000 == 0) {
      // And the whole key decodes back, type bits shared by all fields.
      BsonBuilder out;
      ASSERT_TRUE(Decode(ka.bytes(), ka.type_bits(), dirs, {"x", "y", "z"}, &out).ok());
      const Document d = std::move(out).Build();
      auto it = d.begin();
      for (int f = 0; f < kFields; ++f, ++it) {
        BsonBuilder one;
        one.AppendElementAs("v", *it);
        EXPECT_EQ(std::move(one).Build().bytes(), pool[a[f]].value.doc().bytes());
      }
    }
  }
}

}  // namespace
}  // namespace rockdoc::keystring

// Tests of rockdoc::Decimal128 against the BSON specification's corpus
// (decimal128-1.json .. decimal128-7.json), the independent truth for the
// encoding, the to-string algorithm and the parser, plus focused unit tests.
#include <simdjson.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rockdoc/status.h"
#include "rockdoc/types.h"
#include "test_paths.h"

namespace rockdoc {
namespace {

using ::testing::HasSubstr;

std::string CorpusPath(int n) {
  return rockdoc::test::TestDataDir() + "/bson-corpus/decimal128-" + std::to_string(n) +
         ".json";
}

std::vector<uint8_t> HexToBytes(std::string_view hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    ADD_FAILURE() << "bad hex digit " << c;
    return 0;
  };
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  }
  return out;
}

uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The decimal in {"d": <decimal128>} encoded as canonical_bson hex: int32
// length, type 0x13, "d\0", then 16 bytes (low half first), then 0x00.
std::optional<Decimal128> DecimalFromCorpusBson(std::string_view hex) {
  const std::vector<uint8_t> bytes = HexToBytes(hex);
  if (bytes.size() != 24 || bytes[4] != 0x13 || bytes[5] != 'd' || bytes[6] != 0 ||
      bytes[23] != 0) {
    return std::nullopt;
  }
  return Decimal128(LoadLittleEndian64(&bytes[15]), LoadLittleEndian64(&bytes[7]));
}

// {"d" : {"$numberDecimal" : "..."}} -> "...".
std::string NumberDecimalString(simdjson::dom::parser& parser, std::string_view extjson) {
  simdjson::dom::element doc;
  if (auto err = parser.parse(extjson.data(), extjson.size()).get(doc)) {
    ADD_FAILURE() << "cannot parse extjson " << extjson << ": " << err;
    return "";
  }
  std::string_view s;
  if (auto err = doc["d"]["$numberDecimal"].get(s)) {
    ADD_FAILURE() << "no d.$numberDecimal in " << extjson << ": " << err;
    return "";
  }
  return std::string(s);
}

std::string Hex(const Decimal128& d) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(d.high()),
                static_cast<unsigned long long>(d.low()));
  return buf;
}

// ---------------------------------------------------------------------------
// The corpus.

TEST(Decimal128CorpusTest, EveryValidAndParseErrorCase) {
  simdjson::dom::parser file_parser;
  simdjson::dom::parser extjson_parser;
  int valid = 0, round_trips = 0, degenerate = 0, parse_errors = 0, lossy = 0;
  for (int file = 1; file <= 7; ++file) {
    const std::string path = CorpusPath(file);
    simdjson::dom::element root;
    ASSERT_EQ(file_parser.load(path).get(root), simdjson::SUCCESS) << path;

    simdjson::dom::array valid_cases;
    if (root["valid"].get(valid_cases) == simdjson::SUCCESS) {
      for (simdjson::dom::element c : valid_cases) {
        std::string_view description, bson_hex, canonical_extjson;
        ASSERT_EQ(c["description"].get(description), simdjson::SUCCESS);
        ASSERT_EQ(c["canonical_bson"].get(bson_hex), simdjson::SUCCESS);
        ASSERT_EQ(c["canonical_extjson"].get(canonical_extjson), simdjson::SUCCESS);
        bool is_lossy = false;
        if (c["lossy"].get(is_lossy) != simdjson::SUCCESS) is_lossy = false;
        SCOPED_TRACE(path + ": " + std::string(description));
        ++valid;

        const std::optional<Decimal128> bits = DecimalFromCorpusBson(bson_hex);
        ASSERT_TRUE(bits.has_value()) << bson_hex;
        const std::string canonical = NumberDecimalString(extjson_parser, canonical_extjson);
        EXPECT_EQ(bits->ToString(), canonical) << Hex(*bits);

        if (!is_lossy) {
          ++round_trips;
          StatusOr<Decimal128> parsed = Decimal128::FromString(canonical);
          ASSERT_TRUE(parsed.ok()) << canonical << ": " << parsed.status();
          EXPECT_EQ(Hex(*parsed), Hex(*bits)) << canonical;
          // Finite canonical values survive ToParts/FromParts unchanged.
          if (bits->IsFinite()) {
            EXPECT_EQ(Hex(Decimal128::FromParts(bits->ToParts())), Hex(*bits));
          }
        } else {
          ++lossy;
        }

        std::string_view degenerate_extjson;
        if (c["degenerate_extjson"].get(degenerate_extjson) == simdjson::SUCCESS) {
          ++degenerate;
          const std::string text = NumberDecimalString(extjson_parser, degenerate_extjson);
          StatusOr<Decimal128> parsed = Decimal128::FromString(text);
          ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.status();
          EXPECT_EQ(Hex(*parsed), Hex(*bits)) << text;
        }
      }
    }

    simdjson::dom::array error_cases;
    if (root["parseErrors"].get(error_cases) == simdjson::SUCCESS) {
      for (simdjson::dom::element c : error_cases) {
        std::string_view description, text;
        ASSERT_EQ(c["description"].get(description), simdjson::SUCCESS);
        ASSERT_EQ(c["string"].get(text), simdjson::SUCCESS);
        SCOPED_TRACE(path + ": " + std::string(description));
        ++parse_errors;
        StatusOr<Decimal128> parsed = Decimal128::FromString(text);
        EXPECT_FALSE(parsed.ok()) << "'" << text << "' parsed as " << parsed->ToString();
        EXPECT_EQ(parsed.status().code(), ErrorCode::kFailedToParse) << text;
      }
    }
  }
  // The corpus is pinned (commit 92b3c0b): these are its exact sizes, so a
  // case skipped by a reading mistake fails here.
  EXPECT_EQ(valid, 605);
  EXPECT_EQ(lossy, 8);
  EXPECT_EQ(round_trips, 597);
  EXPECT_EQ(degenerate, 319);
  EXPECT_EQ(parse_errors, 131);
}

// ---------------------------------------------------------------------------
// Construction and encoding.

TEST(Decimal128Test, DefaultIsZeroWithExponentZero) {
  Decimal128 d;
  EXPECT_EQ(d.high(), 0x3040000000000000ULL);
  EXPECT_EQ(d.low(), 0u);
  EXPECT_EQ(d.ToString(), "0");
  EXPECT_TRUE(d.IsZero());
  EXPECT_TRUE(d.IsFinite());
  EXPECT_FALSE(d.IsNegative());
  EXPECT_EQ(d.ToParts().exponent, 0);
}

TEST(Decimal128Test, SpecialValues) {
  EXPECT_EQ(Decimal128::NaN().high(), 0x7C00000000000000ULL);
  EXPECT_TRUE(Decimal128::NaN().IsNaN());
  EXPECT_FALSE(Decimal128::NaN().IsInfinite());
  EXPECT_FALSE(Decimal128::NaN().IsZero());
  EXPECT_EQ(Decimal128::NaN().ToString(), "NaN");

  EXPECT_EQ(Decimal128::Infinity(false).high(), 0x7800000000000000ULL);
  EXPECT_EQ(Decimal128::Infinity(true).high(), 0xF800000000000000ULL);
  EXPECT_TRUE(Decimal128::Infinity(true).IsInfinite());
  EXPECT_FALSE(Decimal128::Infinity(true).IsNaN());
  EXPECT_EQ(Decimal128::Infinity(false).ToString(), "Infinity");
  EXPECT_EQ(Decimal128::Infinity(true).ToString(), "-Infinity");
  EXPECT_EQ(Decimal128::Infinity(true).ToDouble(), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(Decimal128::NaN().ToDouble()));
}

TEST(Decimal128Test, FromInt64) {
  EXPECT_EQ(Decimal128::FromInt64(0).ToString(), "0");
  EXPECT_EQ(Decimal128::FromInt64(0), Decimal128());
  EXPECT_EQ(Decimal128::FromInt64(-42).ToString(), "-42");
  EXPECT_EQ(Decimal128::FromInt64(INT64_MAX).ToString(), "9223372036854775807");
  EXPECT_EQ(Decimal128::FromInt64(INT64_MIN).ToString(), "-9223372036854775808");
  Decimal128::Parts p = Decimal128::FromInt64(INT64_MIN).ToParts();
  EXPECT_TRUE(p.negative);
  EXPECT_EQ(p.coefficient_high, 0u);
  EXPECT_EQ(p.coefficient_low, uint64_t{1} << 63);
  EXPECT_EQ(p.exponent, 0);
}

TEST(Decimal128Test, FromDoubleUsesShortestDigits) {
  EXPECT_EQ(Decimal128::FromDouble(0.1).ToString(), "0.1");
  EXPECT_EQ(Decimal128::FromDouble(-0.1).ToString(), "-0.1");
  EXPECT_EQ(Decimal128::FromDouble(1e300).ToString(), "1E+300");
  EXPECT_EQ(Decimal128::FromDouble(1.5).ToString(), "1.5");
  EXPECT_EQ(Decimal128::FromDouble(100.0).ToString(), "100");  // integers stay integers
  EXPECT_EQ(Decimal128::FromDouble(0.0).ToString(), "0");
  EXPECT_EQ(Decimal128::FromDouble(-0.0).ToString(), "-0");
  EXPECT_EQ(Decimal128::FromDouble(1e-7).ToString(), "1E-7");
  EXPECT_EQ(Decimal128::FromDouble(DBL_MAX).ToString(), "1.7976931348623157E+308");
  EXPECT_EQ(Decimal128::FromDouble(5e-324).ToString(), "5E-324");
  EXPECT_EQ(Decimal128::FromDouble(1.0 / 3).ToString(), "0.3333333333333333");
  EXPECT_EQ(Decimal128::FromDouble(9007199254740992.0).ToString(), "9007199254740992");
  EXPECT_TRUE(Decimal128::FromDouble(std::nan("")).IsNaN());
  EXPECT_EQ(Decimal128::FromDouble(-HUGE_VAL), Decimal128::Infinity(true));
  EXPECT_EQ(Decimal128::FromDouble(HUGE_VAL), Decimal128::Infinity(false));
}

TEST(Decimal128Test, FromDoubleRoundTripsThroughToDouble) {
  std::mt19937_64 rng(20240521);
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    const Decimal128 dec = Decimal128::FromDouble(d);
    const double back = dec.ToDouble();
    ASSERT_EQ(std::memcmp(&back, &d, sizeof d), 0)
        << std::hexfloat << d << " -> " << dec.ToString() << " -> " << back;
    // At most 17 significant digits.
    Decimal128::Parts p = dec.ToParts();
    EXPECT_EQ(p.coefficient_high, 0u);
    EXPECT_LT(p.coefficient_low, 100000000000000000ULL);
    ++checked;
  }
  EXPECT_GT(checked, 19000);
}

TEST(Decimal128Test, ToDoubleRoundsToNearest) {
  auto to_double = [](std::string_view s) { return Decimal128::FromString(s)->ToDouble(); };
  EXPECT_EQ(to_double("0.1"), 0.1);
  EXPECT_EQ(to_double("1E+400"), HUGE_VAL);
  EXPECT_EQ(to_double("-1E+400"), -HUGE_VAL);
  EXPECT_EQ(to_double("1E-400"), 0.0);
  EXPECT_TRUE(std::signbit(to_double("-0")));
  EXPECT_TRUE(std::signbit(to_double("-1E-400")));
  // Halfway between 2^53 and 2^53 + 2: ties to even.
  EXPECT_EQ(to_double("9007199254740993"), 9007199254740992.0);
  EXPECT_EQ(to_double("9007199254740995"), 9007199254740996.0);
  EXPECT_EQ(to_double("1.7976931348623157E+308"), DBL_MAX);
  EXPECT_EQ(to_double("4.9406564584124654E-324"), 5e-324);
  EXPECT_EQ(to_double("123.456E-2"), 1.23456);
}

TEST(Decimal128Test, ToStringFollowsTheSpec) {
  auto str = [](bool negative, uint64_t coefficient, int exponent) {
    Decimal128::Parts p;
    p.negative = negative;
    p.coefficient_low = coefficient;
    p.exponent = exponent;
    return Decimal128::FromParts(p).ToString();
  };
  EXPECT_EQ(str(false, 15, 2), "1.5E+3");
  EXPECT_EQ(str(false, 1, -7), "1E-7");
  EXPECT_EQ(str(false, 1, -6), "0.000001");
  EXPECT_EQ(str(false, 1, -3), "0.001");
  EXPECT_EQ(str(false, 1000, -3), "1.000");
  EXPECT_EQ(str(false, 12345, -2), "123.45");
  EXPECT_EQ(str(true, 0, 0), "-0");
  EXPECT_EQ(str(false, 0, 3), "0E+3");
  EXPECT_EQ(str(false, 0, -7), "0E-7");
  EXPECT_EQ(str(false, 0, -6), "0.000000");
  EXPECT_EQ(str(false, 1, 1), "1E+1");
  EXPECT_EQ(str(false, 1234, -10), "1.234E-7");
  EXPECT_EQ(str(true, 100, 0), "-100");
}

// ---------------------------------------------------------------------------
// Parsing.

TEST(Decimal128Test, FromStringAcceptsTheGrammar) {
  auto bits = [](std::string_view s) {
    StatusOr<Decimal128> d = Decimal128::FromString(s);
    EXPECT_TRUE(d.ok()) << s << ": " << d.status();
    return d.ok() ? d->ToString() : std::string("<error>");
  };
  EXPECT_EQ(bits("1.5E+3"), "1.5E+3");
  EXPECT_EQ(bits("1500"), "1500");
  EXPECT_EQ(bits("+1.50"), "1.50");
  EXPECT_EQ(bits("-.5"), "-0.5");
  EXPECT_EQ(bits("5."), "5");
  EXPECT_EQ(bits("00012.3400"), "12.3400");
  EXPECT_EQ(bits("1e-2"), "0.01");
  EXPECT_EQ(bits("1E+000000000000000000000000000000002"), "1E+2");
  EXPECT_EQ(bits("-0.0"), "-0.0");
  EXPECT_EQ(bits("INF"), "Infinity");
  EXPECT_EQ(bits("-Infinity"), "-Infinity");
  EXPECT_EQ(bits("NAN"), "NaN");
  EXPECT_TRUE(Decimal128::FromString("-nan")->IsNegative());
  EXPECT_TRUE(Decimal128::FromString("-nan")->IsNaN());
}

TEST(Decimal128Test, FromStringRejectsNearSpecials) {
  // Only "inf", "infinity" and "nan" (any case, optional sign) are special;
  // signalling NaNs and partial or padded words are not in the grammar.
  for (std::string_view text : {"sNaN", "-snan", "Infinityx", "infinit", "nan1", "NaN ", "+",
                                "-", "1e+", "0x10", "1_000"}) {
    StatusOr<Decimal128> d = Decimal128::FromString(text);
    EXPECT_EQ(d.status().code(), ErrorCode::kFailedToParse) << "'" << text << "'";
  }
}

TEST(Decimal128Test, FromStringClampsOnlyWithoutLosingDigits) {
  auto str = [](std::string_view s) { return Decimal128::FromString(s)->ToString(); };
  // Zeros clamp to either end of the exponent range.
  EXPECT_EQ(str("0E+99999999999999999999"), "0E+6111");
  EXPECT_EQ(str("-0E-99999999999999999999"), "-0E-6176");
  // Too large an exponent: zeros appended to the coefficient ("fold-down").
  EXPECT_EQ(str("1E+6112"), "1.0E+6112");
  EXPECT_EQ(str("1E+6144"), "1.000000000000000000000000000000000E+6144");
  // Too small an exponent: only trailing zeros may go.
  EXPECT_EQ(str("10E-6177"), "1E-6176");
  // More than 34 digits: only trailing zeros may go.
  EXPECT_EQ(str("12345678901234567890123456789012340"), "1.234567890123456789012345678901234E+34");
  // Trailing zeros that need not go are kept.
  EXPECT_EQ(str("1.000"), "1.000");
}

TEST(Decimal128Test, FromStringRejectsRoundingWithSpecificErrors) {
  StatusOr<Decimal128> inexact = Decimal128::FromString("1.11111111111111111111111111111234549");
  EXPECT_EQ(inexact.status().code(), ErrorCode::kFailedToParse);
  EXPECT_THAT(std::string(inexact.status().message()), HasSubstr("would be rounded"));

  StatusOr<Decimal128> underflow = Decimal128::FromString("1E-6177");
  EXPECT_EQ(underflow.status().code(), ErrorCode::kFailedToParse);
  EXPECT_THAT(std::string(underflow.status().message()), HasSubstr("underflows"));

  StatusOr<Decimal128> overflow = Decimal128::FromString("1E+6145");
  EXPECT_EQ(overflow.status().code(), ErrorCode::kFailedToParse);
  EXPECT_THAT(std::string(overflow.status().message()), HasSubstr("overflows"));

  StatusOr<Decimal128> syntax = Decimal128::FromString("12f4");
  EXPECT_EQ(syntax.status().code(), ErrorCode::kFailedToParse);
  EXPECT_THAT(std::string(syntax.status().message()), HasSubstr("'12f4'"));

  // Long inputs are quoted only in part.
  StatusOr<Decimal128> long_bad = Decimal128::FromString(std::string(1000, '1') + "x");
  EXPECT_EQ(long_bad.status().code(), ErrorCode::kFailedToParse);
  EXPECT_LT(long_bad.status().message().size(), 200u);
}

// ---------------------------------------------------------------------------
// Parts and non-canonical encodings.

TEST(Decimal128Test, PartsRoundTrip) {
  Decimal128::Parts p;
  p.negative = true;
  // 10^34 - 1 = 0x1ED09BEAD87C0378D8E63FFFFFFFF.
  p.coefficient_high = 0x1ED09BEAD87C0ULL;
  p.coefficient_low = 0x378D8E63FFFFFFFFULL;
  p.exponent = Decimal128::kMaxExponent;
  Decimal128 d = Decimal128::FromParts(p);
  EXPECT_EQ(d.ToString(), "-9.999999999999999999999999999999999E+6144");
  Decimal128::Parts back = d.ToParts();
  EXPECT_TRUE(back.negative);
  EXPECT_EQ(back.coefficient_high, p.coefficient_high);
  EXPECT_EQ(back.coefficient_low, p.coefficient_low);
  EXPECT_EQ(back.exponent, Decimal128::kMaxExponent);

  p.negative = false;
  p.coefficient_high = 0;
  p.coefficient_low = 7;
  p.exponent = Decimal128::kMinExponent;
  EXPECT_EQ(Decimal128::FromParts(p).ToString(), "7E-6176");
  EXPECT_EQ(Decimal128::FromParts(p).high(), 0u);
  EXPECT_EQ(Decimal128::FromParts(p).low(), 7u);
}

TEST(Decimal128Test, NonCanonicalCoefficientsReadAsZero) {
  // 10^34 exactly in the ordinary form, exponent 0: one above the maximum.
  Decimal128 too_big(0x3040000000000000ULL | 0x1ED09BEAD87C0ULL, 0x378D8E6400000000ULL);
  EXPECT_TRUE(too_big.IsZero());
  EXPECT_EQ(too_big.ToString(), "0");
  EXPECT_EQ(too_big.ToParts().coefficient_low, 0u);
  EXPECT_EQ(too_big.ToParts().coefficient_high, 0u);
  EXPECT_EQ(too_big.ToDouble(), 0.0);

  // The "11" combination form (not NaN/inf): exponent in bits 124..111,
  // coefficient implicitly >= 2^113. Exponent bits 6176 + 5.
  const uint64_t high = (uint64_t{0x3} << 61) | (uint64_t{6176 + 5} << 47) | 0x1234;
  Decimal128 large_form(high, 0xFFFF);
  EXPECT_TRUE(large_form.IsZero());
  EXPECT_FALSE(large_form.IsNaN());
  EXPECT_FALSE(large_form.IsInfinite());
  EXPECT_EQ(large_form.ToString(), "0E+5");
  EXPECT_EQ(large_form.ToParts().exponent, 5);
  Decimal128 negative_large_form(high | (uint64_t{1} << 63), 0);
  EXPECT_EQ(negative_large_form.ToString(), "-0E+5");
}

}  // namespace
}  // namespace rockdoc

// Tests of exact numeric comparison across int32, int64, double and
// decimal128 (bson/numeric.h).
//
// The independent truth is a reference that writes every number out as an
// exact decimal digit string and compares the strings: glibc's printf prints
// the exact decimal expansion of a double when asked for enough digits (at
// most 767 significant ones exist), an int64 prints exactly, and a decimal's
// ToString() is checked against the BSON corpus in decimal128_test.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bson/numeric.h"
#include "gtest/gtest.h"
#include "rockdoc/document.h"
#include "rockdoc/types.h"

namespace rockdoc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int Sign(int v) { return (v > 0) - (v < 0); }

Decimal128 Dec(std::string_view text) {
  StatusOr<Decimal128> d = Decimal128::FromString(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.status();
  return d.value_or(Decimal128::NaN());
}

// ---------------------------------------------------------------------------
// The reference: exact decimal strings.

// NaN < -inf < finite < +inf; a finite value is
// (negative ? -1 : 1) * 0.digits * 10^point, digits without leading or
// trailing zeros (empty for zero).
struct RefValue {
  int rank = 2;  // 0 NaN, 1 -inf, 2 finite, 3 +inf
  bool negative = false;
  std::string digits;
  long point = 0;
};

// Parses "[-]ddd[.ddd][e[+-]ddd]" (printf's %e, std::to_string and
// Decimal128::ToString all produce this shape).
RefValue ParseExact(const std::string& text) {
  RefValue v;
  size_t i = 0;
  if (text[i] == '-') {
    v.negative = true;
    ++i;
  }
  std::string mantissa;
  long integer_digits = 0;
  bool seen_point = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      seen_point = true;
      continue;
    }
    mantissa.push_back(text[i]);
    if (!seen_point) ++integer_digits;
  }
  const long exponent = i < text.size() ? std::stol(text.substr(i + 1)) : 0;
  const size_t first = mantissa.find_first_not_of('0');
  if (first == std::string::npos) return RefValue{};  // zero, any sign
  const size_t last = mantissa.find_last_not_of('0');
  v.digits = mantissa.substr(first, last - first + 1);
  v.point = integer_digits - static_cast<long>(first) + exponent;
  return v;
}

RefValue RefInt64(int64_t x) { return ParseExact(std::to_string(x)); }

RefValue Special(int rank) {
  RefValue v;
  v.rank = rank;
  return v;
}

RefValue RefDouble(double x) {
  if (std::isnan(x)) return Special(0);
  if (std::isinf(x)) return Special(x < 0 ? 1 : 3);
  char buf[1000];
  std::snprintf(buf, sizeof(buf), "%.800e", x);
  return ParseExact(buf);
}

RefValue RefDecimal(const Decimal128& d) {
  if (d.IsNaN()) return Special(0);
  if (d.IsInfinite()) return Special(d.IsNegative() ? 1 : 3);
  return ParseExact(d.ToString());
}

int RefCompare(const RefValue& a, const RefValue& b) {
  if (a.rank != b.rank) return a.rank < b.rank ? -1 : 1;
  if (a.rank != 2) return 0;
  const int sign_a = a.digits.empty() ? 0 : (a.negative ? -1 : 1);
  const int sign_b = b.digits.empty() ? 0 : (b.negative ? -1 : 1);
  if (sign_a != sign_b) return sign_a < sign_b ? -1 : 1;
  if (sign_a == 0) return 0;
  int magnitude = 0;
  if (a.point != b.point) {
    magnitude = a.point < b.point ? -1 : 1;
  } else {
    // Same order of magnitude: digit strings without trailing zeros compare
    // lexicographically (a proper prefix is the smaller value).
    magnitude = Sign(a.digits.compare(b.digits));
  }
  return sign_a * magnitude;
}

TEST(NumericReferenceTest, ParsesExactExpansions) {
  RefValue tenth = RefDouble(0.1);
  EXPECT_EQ(tenth.digits, "1000000000000000055511151231257827021181583404541015625");
  EXPECT_EQ(tenth.point, 0);
  EXPECT_EQ(RefDecimal(Dec("1.5E+3")).digits, "15");
  EXPECT_EQ(RefDecimal(Dec("1.5E+3")).point, 4);
  EXPECT_EQ(RefInt64(-120).digits, "12");
  EXPECT_TRUE(RefInt64(-120).negative);
  EXPECT_EQ(RefCompare(RefDouble(-0.0), RefInt64(0)), 0);
  EXPECT_EQ(RefCompare(RefDecimal(Dec("0.1")), RefDouble(0.1)), -1);
}

// ---------------------------------------------------------------------------
// Numbers as BSON elements.

// One number of any type, owning a one-element document {"v": value}.
class TestNumber {
 public:
  static TestNumber Int32(int32_t v) {
    return TestNumber(BsonType::kInt32, &v, sizeof v, RefInt64(v), "int32 " + std::to_string(v));
  }
  static TestNumber Int64(int64_t v) {
    return TestNumber(BsonType::kInt64, &v, sizeof v, RefInt64(v), "int64 " + std::to_string(v));
  }
  static TestNumber Double(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "double %.17g (%a)", v, v);
    return TestNumber(BsonType::kDouble, &v, sizeof v, RefDouble(v), buf);
  }
  static TestNumber Decimal(const Decimal128& v) {
    uint64_t halves[2] = {v.low(), v.high()};  // low half first on disk
    return TestNumber(BsonType::kDecimal128, halves, sizeof halves, RefDecimal(v),
                      "decimal " + v.ToString());
  }

  Element element() const {
    return Element(reinterpret_cast<const uint8_t*>(bytes_.data()) + 4);
  }
  const RefValue& ref() const { return ref_; }
  const std::string& name() const { return name_; }

 private:
  TestNumber(BsonType type, const void* value, size_t size, RefValue ref, std::string name)
      : ref_(std::move(ref)), name_(std::move(name)) {
    bytes_.assign(4, '\0');
    bytes_.push_back(static_cast<char>(type));
    bytes_.append("v", 2);  // key and its NUL
    bytes_.append(static_cast<const char*>(value), size);
    bytes_.push_back('\0');
    const int32_t length = static_cast<int32_t>(bytes_.size());
    std::memcpy(bytes_.data(), &length, sizeof length);
  }

  std::string bytes_;
  RefValue ref_;
  std::string name_;
};

int Cmp(const TestNumber& a, const TestNumber& b) {
  return Sign(CompareNumbers(a.element(), b.element()));
}

// ---------------------------------------------------------------------------
// Hand-picked cases.

TEST(CompareNumbersTest, ElementsHoldTheValuesTheTestsMeant) {
  EXPECT_EQ(TestNumber::Int32(-7).element().Int32(), -7);
  EXPECT_EQ(TestNumber::Int64(INT64_MIN).element().Int64(), INT64_MIN);
  EXPECT_EQ(TestNumber::Double(0.25).element().Double(), 0.25);
  EXPECT_EQ(TestNumber::Decimal(Dec("1.5")).element().Decimal(), Dec("1.5"));
  EXPECT_TRUE(TestNumber::Decimal(Dec("1.5")).element().IsNumber());
}

TEST(CompareNumbersTest, Int64AgainstDoubleIsExact) {
  EXPECT_EQ(CompareInt64Double(9007199254740993, 9007199254740992.0), 1);
  EXPECT_EQ(CompareInt64Double(9007199254740992, 9007199254740992.0), 0);
  EXPECT_EQ(CompareInt64Double(9007199254740991, 9007199254740992.0), -1);
  EXPECT_EQ(CompareInt64Double(INT64_MAX, 9223372036854775808.0), -1);
  EXPECT_EQ(CompareInt64Double(INT64_MIN, -9223372036854775808.0), 0);
  EXPECT_EQ(CompareInt64Double(INT64_MIN, -9223372036854777856.0), 1);  // next double down
  EXPECT_EQ(CompareInt64Double(0, -0.0), 0);
  EXPECT_EQ(CompareInt64Double(1, 1.5), -1);
  EXPECT_EQ(CompareInt64Double(-1, -1.5), 1);
  EXPECT_EQ(CompareInt64Double(-2, -1.5), -1);
  EXPECT_EQ(CompareInt64Double(0, 5e-324), -1);
  EXPECT_EQ(CompareInt64Double(0, -5e-324), 1);
  EXPECT_EQ(CompareInt64Double(INT64_MAX, kInf), -1);
  EXPECT_EQ(CompareInt64Double(INT64_MIN, -kInf), 1);
  EXPECT_EQ(CompareInt64Double(INT64_MIN, kNaN), 1);

  EXPECT_EQ(Cmp(TestNumber::Int64(9007199254740993), TestNumber::Double(9007199254740992.0)), 1);
  EXPECT_EQ(Cmp(TestNumber::Double(9007199254740992.0), TestNumber::Int64(9007199254740993)), -1);
  EXPECT_EQ(Cmp(TestNumber::Int32(3), TestNumber::Double(3.0)), 0);
  EXPECT_EQ(Cmp(TestNumber::Int32(3), TestNumber::Int64(4)), -1);
}

TEST(CompareNumbersTest, DecimalAgainstDoubleIsExact) {
  // The double 0.1 is 0.1000000000000000055511151231257827021181583404541015625.
  EXPECT_EQ(CompareDoubleDecimal(0.1, Dec("0.1")), 1);
  EXPECT_EQ(CompareDoubleDecimal(0.1, Dec("0.1000000000000000055511151231257827")), 1);
  EXPECT_EQ(CompareDoubleDecimal(0.1, Dec("0.1000000000000000055511151231257828")), -1);
  EXPECT_EQ(CompareDoubleDecimal(-0.1, Dec("-0.1")), -1);
  // Dyadic fractions with short expansions are equal.
  EXPECT_EQ(CompareDoubleDecimal(0.375, Dec("0.375")), 0);
  EXPECT_EQ(CompareDoubleDecimal(std::ldexp(1.0, -20), Dec("9.5367431640625E-7")), 0);
  EXPECT_EQ(CompareDoubleDecimal(1e300, Dec("1E+300")), 1);  // the double is 1.0000000000000000525...E+300
  EXPECT_EQ(CompareDoubleDecimal(std::ldexp(1.0, 100), Dec("1267650600228229401496703205376")), 0);
  // Beyond the double range.
  EXPECT_EQ(CompareDoubleDecimal(DBL_MAX, Dec("1E+400")), -1);
  EXPECT_EQ(CompareDoubleDecimal(-DBL_MAX, Dec("-1E+400")), 1);
  EXPECT_EQ(CompareDoubleDecimal(kInf, Dec("9.999999999999999999999999999999999E+6144")), 1);
  EXPECT_EQ(CompareDoubleDecimal(5e-324, Dec("1E-6176")), 1);
  EXPECT_EQ(CompareDoubleDecimal(5e-324, Dec("4.9406564584124654E-324")), 1);
  EXPECT_EQ(CompareDoubleDecimal(5e-324, Dec("4.9406564584124655E-324")), -1);
  EXPECT_EQ(CompareDoubleDecimal(0.0, Dec("-1E-6176")), 1);
  // Zeros, infinities and NaNs.
  EXPECT_EQ(CompareDoubleDecimal(-0.0, Dec("0E+300")), 0);
  EXPECT_EQ(CompareDoubleDecimal(0.0, Dec("-0")), 0);
  EXPECT_EQ(CompareDoubleDecimal(kInf, Decimal128::Infinity(false)), 0);
  EXPECT_EQ(CompareDoubleDecimal(-kInf, Decimal128::Infinity(true)), 0);
  EXPECT_EQ(CompareDoubleDecimal(-kInf, Decimal128::Infinity(false)), -1);
  EXPECT_EQ(CompareDoubleDecimal(kNaN, Decimal128::NaN()), 0);
  EXPECT_EQ(CompareDoubleDecimal(-kNaN, Decimal128::NaN()), 0);
  EXPECT_EQ(CompareDoubleDecimal(kNaN, Decimal128::Infinity(true)), -1);
  EXPECT_EQ(CompareDoubleDecimal(-kInf, Decimal128::NaN()), 1);
}

TEST(CompareNumbersTest, Int64AgainstDecimal) {
  EXPECT_EQ(CompareInt64Decimal(INT64_MIN, Dec("-9223372036854775808")), 0);
  EXPECT_EQ(CompareInt64Decimal(INT64_MIN, Dec("-9223372036854775809")), 1);
  EXPECT_EQ(CompareInt64Decimal(INT64_MAX, Dec("9223372036854775807.0000000000001")), -1);
  EXPECT_EQ(CompareInt64Decimal(INT64_MAX, Dec("9.223372036854775807E+18")), 0);
  EXPECT_EQ(CompareInt64Decimal(1, Dec("1.00")), 0);
  EXPECT_EQ(CompareInt64Decimal(100, Dec("1E+2")), 0);
  EXPECT_EQ(CompareInt64Decimal(0, Dec("-0E-6176")), 0);
  EXPECT_EQ(CompareInt64Decimal(0, Dec("1E-6176")), -1);
  EXPECT_EQ(CompareInt64Decimal(INT64_MIN, Decimal128::NaN()), 1);
  EXPECT_EQ(CompareInt64Decimal(INT64_MAX, Decimal128::Infinity(false)), -1);
}

TEST(CompareNumbersTest, DecimalsCompareByValueNotRepresentation) {
  EXPECT_EQ(CompareDecimals(Dec("1.0"), Dec("1.00")), 0);
  EXPECT_EQ(CompareDecimals(Dec("1"), Dec("1.00")), 0);
  EXPECT_EQ(CompareDecimals(Dec("1E+6144"), Dec("1000E+6141")), 0);
  EXPECT_EQ(CompareDecimals(Dec("1E+6144"), Dec("9.999999999999999999999999999999999E+6143")), 1);
  EXPECT_EQ(CompareDecimals(Dec("-1E+6144"), Dec("-9.999999999999999999999999999999999E+6143")),
            -1);
  EXPECT_EQ(CompareDecimals(Dec("1E-6176"), Dec("0")), 1);
  EXPECT_EQ(CompareDecimals(Dec("-0"), Dec("0E+6111")), 0);
  EXPECT_EQ(CompareDecimals(Dec("1E-6176"), Dec("9.999999999999999999999999999999999E+6144")), -1);
  EXPECT_EQ(CompareDecimals(Dec("12345678901234567890123456789012.34"),
                            Dec("1234567890123456789012345678901.235E+1")),
            -1);
  EXPECT_EQ(CompareDecimals(Decimal128::NaN(), Dec("-NaN")), 0);
  EXPECT_EQ(CompareDecimals(Decimal128::NaN(), Decimal128::Infinity(true)), -1);
  // A non-canonical coefficient reads as zero.
  EXPECT_EQ(CompareDecimals(Decimal128(0x3040000000000000ULL | 0x1ED09BEAD87C0ULL,
                                       0x378D8E6400000000ULL),
                            Dec("0")),
            0);
}

TEST(CompareNumbersTest, DoublesAmongThemselves) {
  EXPECT_EQ(CompareDoubles(-0.0, 0.0), 0);
  EXPECT_EQ(CompareDoubles(kNaN, -kNaN), 0);
  EXPECT_EQ(CompareDoubles(kNaN, -kInf), -1);
  EXPECT_EQ(CompareDoubles(-kInf, kNaN), 1);
  EXPECT_EQ(CompareDoubles(1.0, std::nextafter(1.0, 2.0)), -1);
  EXPECT_EQ(Cmp(TestNumber::Double(kNaN), TestNumber::Int64(INT64_MIN)), -1);
  EXPECT_EQ(Cmp(TestNumber::Decimal(Decimal128::NaN()), TestNumber::Double(kNaN)), 0);
}

// ---------------------------------------------------------------------------
// Properties over random values, against the reference.

class NumberGenerator {
 public:
  explicit NumberGenerator(uint64_t seed) : rng_(seed) {}

  // A few values around one random seed value, so that pools hold many
  // equal and nearly equal numbers of different types (the hard cases), as
  // well as far-apart ones.
  std::vector<TestNumber> Family() {
    std::vector<TestNumber> out;
    switch (Below(3)) {
      case 0: {
        const int64_t v = RandomInt64();
        out.push_back(TestNumber::Int64(v));
        if (v >= INT32_MIN && v <= INT32_MAX) out.push_back(TestNumber::Int32(static_cast<int32_t>(v)));
        const double d = static_cast<double>(v);
        out.push_back(TestNumber::Double(d));
        out.push_back(TestNumber::Double(std::nextafter(d, kInf)));
        out.push_back(TestNumber::Double(std::nextafter(d, -kInf)));
        out.push_back(TestNumber::Decimal(Decimal128::FromInt64(v)));
        out.push_back(TestNumber::Decimal(Rescaled(Decimal128::FromInt64(v))));
        out.push_back(TestNumber::Decimal(Decimal128::FromDouble(d)));
        out.push_back(TestNumber::Decimal(Nudged(Decimal128::FromInt64(v))));
        break;
      }
      case 1: {
        const double d = RandomDouble();
        out.push_back(TestNumber::Double(d));
        out.push_back(TestNumber::Double(std::nextafter(d, kInf)));
        const Decimal128 shortest = Decimal128::FromDouble(d);
        out.push_back(TestNumber::Decimal(shortest));
        if (shortest.IsFinite()) {
          out.push_back(TestNumber::Decimal(Rescaled(shortest)));
          out.push_back(TestNumber::Decimal(Nudged(shortest)));
        }
        if (std::isfinite(d) && std::fabs(d) < 9.2e18) {
          out.push_back(TestNumber::Int64(static_cast<int64_t>(d)));
        }
        break;
      }
      default: {
        const Decimal128 dec = RandomDecimal();
        out.push_back(TestNumber::Decimal(dec));
        if (dec.IsFinite()) {
          out.push_back(TestNumber::Decimal(Rescaled(dec)));
          out.push_back(TestNumber::Decimal(Nudged(dec)));
        }
        const double d = dec.ToDouble();
        out.push_back(TestNumber::Double(d));
        out.push_back(TestNumber::Double(std::nextafter(d, -kInf)));
        break;
      }
    }
    return out;
  }

  std::vector<TestNumber> Pool(int families) {
    std::vector<TestNumber> pool;
    for (int i = 0; i < families; ++i) {
      for (TestNumber& n : Family()) pool.push_back(std::move(n));
    }
    return pool;
  }

  uint64_t Below(uint64_t n) { return rng_() % n; }

  int64_t RandomInt64() {
    switch (Below(6)) {
      case 0: return static_cast<int64_t>(rng_());
      case 1: return static_cast<int64_t>(Below(201)) - 100;
      case 2: return (int64_t{1} << 53) + static_cast<int64_t>(Below(9)) - 4;
      case 3: return -(int64_t{1} << 53) + static_cast<int64_t>(Below(9)) - 4;
      case 4: return Below(2) ? INT64_MAX - static_cast<int64_t>(Below(4))
                              : INT64_MIN + static_cast<int64_t>(Below(4));
      default: return static_cast<int64_t>(rng_() >> Below(64)) * (Below(2) ? 1 : -1);
    }
  }

  double RandomDouble() {
    static const double kSpecial[] = {0.0,      -0.0,     kInf,         -kInf,       kNaN,
                                      -kNaN,    DBL_MAX,  -DBL_MAX,     DBL_MIN,     -DBL_MIN,
                                      5e-324,   -5e-324,  0.1,          -0.1,        1.0 / 3,
                                      1e300,    1e-300,   9.2233720368547758e18,     0.5};
    switch (Below(4)) {
      case 0:
        return kSpecial[Below(sizeof(kSpecial) / sizeof(kSpecial[0]))];
      case 1: {  // any bit pattern: subnormals, huge, NaN payloads
        const uint64_t bits = rng_();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
      }
      case 2: {  // moderate magnitudes with fractions
        const double d = std::ldexp(static_cast<double>(rng_() >> 11), -static_cast<int>(Below(80)));
        return Below(2) ? d : -d;
      }
      default: {  // subnormals
        const uint64_t bits = rng_() >> 12 | (Below(2) ? uint64_t{1} << 63 : 0);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
      }
    }
  }

  Decimal128 RandomDecimal() {
    switch (Below(8)) {
      case 0: return Decimal128::NaN();
      case 1: return Decimal128::Infinity(Below(2) != 0);
      case 2: {  // zero with any exponent and sign
        Decimal128::Parts p;
        p.negative = Below(2) != 0;
        p.exponent = RandomExponent(true);
        return Decimal128::FromParts(p);
      }
      default: {
        Decimal128::Parts p;
        p.negative = Below(2) != 0;
        const int digits = 1 + static_cast<int>(Below(34));
        unsigned __int128 c = 0;
        for (int i = 0; i < digits; ++i) c = c * 10 + Below(10);
        p.coefficient_high = static_cast<uint64_t>(c >> 64);
        p.coefficient_low = static_cast<uint64_t>(c);
        p.exponent = RandomExponent(Below(4) == 0);
        return Decimal128::FromParts(p);
      }
    }
  }

  int RandomExponent(bool full_range) {
    if (full_range) {
      return Decimal128::kMinExponent +
             static_cast<int>(Below(Decimal128::kMaxExponent - Decimal128::kMinExponent + 1));
    }
    // Around the double range, where comparisons against doubles are close.
    return static_cast<int>(Below(700)) - 370;
  }

  // The same value with a different exponent (coefficient * 10^k, exponent
  // - k), when the coefficient has room; otherwise unchanged.
  Decimal128 Rescaled(const Decimal128& d) {
    Decimal128::Parts p = d.ToParts();
    unsigned __int128 c = (static_cast<unsigned __int128>(p.coefficient_high) << 64) | p.coefficient_low;
    const unsigned __int128 limit = static_cast<unsigned __int128>(1000000000000000000ULL) *
                                    10000000000000000ULL;  // 10^34
    int k = 1 + static_cast<int>(Below(5));
    while (k > 0 && c * 10 < limit && p.exponent > Decimal128::kMinExponent) {
      c *= 10;
      --p.exponent;
      --k;
    }
    p.coefficient_high = static_cast<uint64_t>(c >> 64);
    p.coefficient_low = static_cast<uint64_t>(c);
    return Decimal128::FromParts(p);
  }

  // A neighbour: the coefficient one unit up or down (one ulp of this
  // exponent), so values differ from their family by the smallest amount.
  Decimal128 Nudged(const Decimal128& d) {
    Decimal128 r = Rescaled(d);
    Decimal128::Parts p = r.ToParts();
    unsigned __int128 c = (static_cast<unsigned __int128>(p.coefficient_high) << 64) | p.coefficient_low;
    const unsigned __int128 max = static_cast<unsigned __int128>(1000000000000000000ULL) *
                                      10000000000000000ULL - 1;
    if (Below(2) && c < max) {
      ++c;
    } else if (c > 0) {
      --c;
    }
    p.coefficient_high = static_cast<uint64_t>(c >> 64);
    p.coefficient_low = static_cast<uint64_t>(c);
    return Decimal128::FromParts(p);
  }

 private:
  std::mt19937_64 rng_;
};

TEST(CompareNumbersPropertyTest, AgreesWithTheReferenceWithinFamilies) {
  NumberGenerator gen(0x5eed0001);
  int pairs = 0, equal = 0, less = 0, greater = 0;
  for (int f = 0; f < 3000; ++f) {
    const std::vector<TestNumber> family = gen.Family();
    for (const TestNumber& a : family) {
      for (const TestNumber& b : family) {
        const int expected = RefCompare(a.ref(), b.ref());
        ASSERT_EQ(Cmp(a, b), expected) << a.name() << " vs " << b.name();
        ++pairs;
        if (expected == 0) ++equal;
        if (expected < 0) ++less;
        if (expected > 0) ++greater;
      }
    }
  }
  // The families are built to produce all three outcomes often.
  EXPECT_GT(pairs, 50000);
  EXPECT_GT(equal, 5000);
  EXPECT_GT(less, 10000);
  EXPECT_GT(greater, 10000);
}

TEST(CompareNumbersPropertyTest, AgreesWithTheReferenceAcrossRandomPairs) {
  NumberGenerator gen(0x5eed0002);
  const std::vector<TestNumber> pool = gen.Pool(800);
  ASSERT_GT(pool.size(), 3000u);
  for (int i = 0; i < 60000; ++i) {
    const TestNumber& a = pool[gen.Below(pool.size())];
    const TestNumber& b = pool[gen.Below(pool.size())];
    const int ab = Cmp(a, b);
    ASSERT_EQ(ab, RefCompare(a.ref(), b.ref())) << a.name() << " vs " << b.name();
    ASSERT_EQ(Cmp(b, a), -ab) << "antisymmetry: " << a.name() << " vs " << b.name();
  }
}

TEST(CompareNumbersPropertyTest, TransitiveOnTriples) {
  NumberGenerator gen(0x5eed0003);
  // Small pools of families so that triples often involve equal or
  // neighbouring values.
  int checked_chains = 0;
  for (int round = 0; round < 200; ++round) {
    const std::vector<TestNumber> pool = gen.Pool(4);
    for (const TestNumber& a : pool) {
      for (const TestNumber& b : pool) {
        const int ab = Cmp(a, b);
        if (ab > 0) continue;
        for (const TestNumber& c : pool) {
          const int bc = Cmp(b, c);
          if (bc > 0) continue;
          ++checked_chains;
          const int ac = Cmp(a, c);
          // a <= b <= c implies a <= c, and a == c exactly when both are ==.
          ASSERT_LE(ac, 0) << a.name() << " <= " << b.name() << " <= " << c.name();
          ASSERT_EQ(ac == 0, ab == 0 && bc == 0)
              << a.name() << " / " << b.name() << " / " << c.name();
        }
      }
    }
  }
  EXPECT_GT(checked_chains, 50000);
}

// On x86-64 a long double has a 64-bit significand: every int64 and every
// double converts to it exactly, so comparing there is a brute-force truth.
TEST(CompareNumbersPropertyTest, Int64DoubleAgreesWithLongDouble) {
  if (std::numeric_limits<long double>::digits < 64) GTEST_SKIP() << "long double too narrow";
  NumberGenerator gen(0x5eed0004);
  int compared = 0;
  for (int i = 0; i < 200000; ++i) {
    const int64_t a = gen.RandomInt64();
    double b = gen.Below(2) ? gen.RandomDouble() : static_cast<double>(gen.RandomInt64());
    if (gen.Below(3) == 0) b = std::nextafter(b, gen.Below(2) ? kInf : -kInf);
    if (std::isnan(b)) {
      ASSERT_EQ(CompareInt64Double(a, b), 1);
      continue;
    }
    const long double la = static_cast<long double>(a);
    const long double lb = static_cast<long double>(b);
    const int expected = (la > lb) - (la < lb);
    ASSERT_EQ(CompareInt64Double(a, b), expected) << a << " vs " << std::hexfloat << b;
    ++compared;
  }
  EXPECT_GT(compared, 150000);
}

}  // namespace
}  // namespace rockdoc

// Exact comparison of int32, int64, double and decimal128 values.
//
// Every finite non-zero number is brought to one exact form,
//   sign * mantissa * 2^pow2 * 5^pow5,
// (an int64 has pow2 = pow5 = 0, a double m * 2^e has pow5 = 0, a decimal
// c * 10^q has pow2 = pow5 = q). Two such magnitudes are first compared by
// their binary orders of magnitude, which decides almost every pair with a
// few floating-point operations; only values within a factor of about four
// of each other are multiplied out into big integers and compared exactly.
#include "bson/numeric.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/logging.h"

namespace rockdoc {
namespace {

using Uint128 = unsigned __int128;

// A minimal arbitrary-precision unsigned integer: just what an exact
// comparison of m * 2^a * 5^b values needs (multiply by 5^k, shift, compare).
class BigUint {
 public:
  explicit BigUint(Uint128 value) {
    while (value != 0) {
      limbs_.push_back(static_cast<uint64_t>(value));
      value >>= 64;
    }
  }

  void MultiplyBySmall(uint64_t factor) {
    Uint128 carry = 0;
    for (uint64_t& limb : limbs_) {
      const Uint128 product = static_cast<Uint128>(limb) * factor + carry;
      limb = static_cast<uint64_t>(product);
      carry = product >> 64;
    }
    if (carry != 0) limbs_.push_back(static_cast<uint64_t>(carry));
  }

  void MultiplyByPowerOf5(int exponent) {
    // 5^27 is the largest power of five below 2^64.
    constexpr uint64_t kFivePow27 = 7450580596923828125ULL;
    for (; exponent >= 27; exponent -= 27) MultiplyBySmall(kFivePow27);
    uint64_t rest = 1;
    for (; exponent > 0; --exponent) rest *= 5;
    if (rest != 1) MultiplyBySmall(rest);
  }

  void ShiftLeft(int bits) {
    if (limbs_.empty() || bits == 0) return;
    const int whole_limbs = bits / 64;
    const int rest = bits % 64;
    if (rest != 0) {
      uint64_t carry = 0;
      for (uint64_t& limb : limbs_) {
        const uint64_t shifted = (limb << rest) | carry;
        carry = limb >> (64 - rest);
        limb = shifted;
      }
      if (carry != 0) limbs_.push_back(carry);
    }
    limbs_.insert(limbs_.begin(), static_cast<size_t>(whole_limbs), 0);
  }

  // Limbs never have leading zero limbs, so the longer number is larger.
  friend int Compare(const BigUint& a, const BigUint& b) {
    if (a.limbs_.size() != b.limbs_.size()) return a.limbs_.size() < b.limbs_.size() ? -1 : 1;
    for (size_t i = a.limbs_.size(); i-- > 0;) {
      if (a.limbs_[i] != b.limbs_[i]) return a.limbs_[i] < b.limbs_[i] ? -1 : 1;
    }
    return 0;
  }

 private:
  std::vector<uint64_t> limbs_;  // least significant first
};

// mantissa * 2^pow2 * 5^pow5, mantissa > 0.
struct Magnitude {
  Uint128 mantissa = 0;
  int pow2 = 0;
  int pow5 = 0;
};

int BitLength(Uint128 v) {
  const uint64_t high = static_cast<uint64_t>(v >> 64);
  if (high != 0) return 128 - __builtin_clzll(high);
  const uint64_t low = static_cast<uint64_t>(v);
  return low == 0 ? 0 : 64 - __builtin_clzll(low);
}

int CompareMagnitudes(const Magnitude& a, const Magnitude& b) {
  if (a.pow2 == b.pow2 && a.pow5 == b.pow5) {
    return a.mantissa == b.mantissa ? 0 : (a.mantissa < b.mantissa ? -1 : 1);
  }
  // log2 of a value lies in [top - 1, top) where top is computed below. The
  // only rounding is in pow5 * log2(5) with |pow5| <= 6176: an error below
  // 1e-11, far inside the margin.
  constexpr double kLog2Of5 = 2.321928094887362347870319429489390175864831393;
  constexpr double kMargin = 1e-6;
  const double top_a = BitLength(a.mantissa) + a.pow2 + a.pow5 * kLog2Of5;
  const double top_b = BitLength(b.mantissa) + b.pow2 + b.pow5 * kLog2Of5;
  if (top_a + kMargin < top_b - 1) return -1;  // a < 2^top_a <= 2^(top_b - 1) <= b
  if (top_b + kMargin < top_a - 1) return 1;

  // Close in magnitude: divide both by 2^min(pow2) * 5^min(pow5), leaving
  // integers, and compare those exactly.
  const int min2 = std::min(a.pow2, b.pow2);
  const int min5 = std::min(a.pow5, b.pow5);
  BigUint x(a.mantissa);
  x.ShiftLeft(a.pow2 - min2);
  x.MultiplyByPowerOf5(a.pow5 - min5);
  BigUint y(b.mantissa);
  y.ShiftLeft(b.pow2 - min2);
  y.MultiplyByPowerOf5(b.pow5 - min5);
  return Compare(x, y);
}

// Any number, in the total order NaN < -inf < finite < +inf.
struct ExactNumber {
  enum class Class { kNaN = 0, kNegativeInfinity = 1, kFinite = 2, kPositiveInfinity = 3 };
  Class cls = Class::kFinite;
  int sign = 0;  // finite only: -1, 0 (any zero) or 1
  Magnitude magnitude;  // finite non-zero only
};

ExactNumber FromInt64(int64_t v) {
  ExactNumber n;
  if (v == 0) return n;
  n.sign = v < 0 ? -1 : 1;
  // Through uint64 so that INT64_MIN's magnitude does not overflow.
  n.magnitude.mantissa = v < 0 ? ~static_cast<uint64_t>(v) + 1 : static_cast<uint64_t>(v);
  return n;
}

ExactNumber FromDouble(double v) {
  ExactNumber n;
  if (std::isnan(v)) {
    n.cls = ExactNumber::Class::kNaN;
  } else if (std::isinf(v)) {
    n.cls = v < 0 ? ExactNumber::Class::kNegativeInfinity : ExactNumber::Class::kPositiveInfinity;
  } else if (v != 0) {  // both zeros keep sign 0: -0 == +0
    n.sign = v < 0 ? -1 : 1;
    int exponent = 0;
    // frexp gives |v| = f * 2^exponent with f in [0.5, 1); f * 2^53 is an
    // integer for every double, subnormals included.
    const double fraction = std::frexp(std::fabs(v), &exponent);
    uint64_t mantissa = static_cast<uint64_t>(std::ldexp(fraction, 53));
    int pow2 = exponent - 53;
    const int trailing = __builtin_ctzll(mantissa);  // keeps the big integers small
    mantissa >>= trailing;
    pow2 += trailing;
    n.magnitude.mantissa = mantissa;
    n.magnitude.pow2 = pow2;
  }
  return n;
}

ExactNumber FromDecimal(const Decimal128& d) {
  ExactNumber n;
  if (d.IsNaN()) {
    n.cls = ExactNumber::Class::kNaN;
  } else if (d.IsInfinite()) {
    n.cls = d.IsNegative() ? ExactNumber::Class::kNegativeInfinity
                           : ExactNumber::Class::kPositiveInfinity;
  } else {
    const Decimal128::Parts parts = d.ToParts();
    const Uint128 coefficient =
        (static_cast<Uint128>(parts.coefficient_high) << 64) | parts.coefficient_low;
    if (coefficient != 0) {  // zeros of any exponent and sign are equal
      n.sign = parts.negative ? -1 : 1;
      n.magnitude.mantissa = coefficient;
      n.magnitude.pow2 = parts.exponent;
      n.magnitude.pow5 = parts.exponent;
    }
  }
  return n;
}

int Compare(const ExactNumber& a, const ExactNumber& b) {
  if (a.cls != b.cls) return a.cls < b.cls ? -1 : 1;
  if (a.cls != ExactNumber::Class::kFinite) return 0;  // NaN == NaN, inf == inf
  if (a.sign != b.sign) return a.sign < b.sign ? -1 : 1;
  if (a.sign == 0) return 0;
  const int c = CompareMagnitudes(a.magnitude, b.magnitude);
  return a.sign > 0 ? c : -c;
}

// A number read out of an element, in the widest form of its family.
struct RawNumber {
  enum class Kind { kInt64, kDouble, kDecimal };
  Kind kind = Kind::kInt64;
  int64_t int64 = 0;
  double dbl = 0;
  Decimal128 decimal;
};

RawNumber Read(const Element& e) {
  RawNumber n;
  switch (e.type()) {
    case BsonType::kInt32:
      n.int64 = e.Int32();
      break;
    case BsonType::kInt64:
      n.int64 = e.Int64();
      break;
    case BsonType::kDouble:
      n.kind = RawNumber::Kind::kDouble;
      n.dbl = e.Double();
      break;
    case BsonType::kDecimal128:
      n.kind = RawNumber::Kind::kDecimal;
      n.decimal = e.Decimal();
      break;
    default:
      ROCKDOC_DCHECK(false && "CompareNumbers on a non-number");
      break;
  }
  return n;
}

}  // namespace

int CompareInt64Double(int64_t a, double b) {
  if (std::isnan(b)) return 1;
  // Outside [-2^63, 2^63) the double is beyond every int64 (this also
  // covers the infinities).
  constexpr double kTwoPow63 = 9223372036854775808.0;
  if (b >= kTwoPow63) return -1;
  if (b < -kTwoPow63) return 1;
  // In range, the integer part of b is an exact int64 and the fraction
  // b - trunc(b) is exact too.
  const double whole = std::trunc(b);
  const int64_t whole_int = static_cast<int64_t>(whole);
  if (a != whole_int) return a < whole_int ? -1 : 1;
  const double fraction = b - whole;
  return fraction > 0 ? -1 : (fraction < 0 ? 1 : 0);
}

int CompareDoubles(double a, double b) {
  const bool a_nan = std::isnan(a);
  const bool b_nan = std::isnan(b);
  if (a_nan || b_nan) return static_cast<int>(b_nan) - static_cast<int>(a_nan);
  return (a > b) - (a < b);  // -0 == +0 as IEEE says
}

int CompareDoubleDecimal(double a, const Decimal128& b) {
  return Compare(FromDouble(a), FromDecimal(b));
}

int CompareInt64Decimal(int64_t a, const Decimal128& b) {
  return Compare(FromInt64(a), FromDecimal(b));
}

int CompareDecimals(const Decimal128& a, const Decimal128& b) {
  return Compare(FromDecimal(a), FromDecimal(b));
}

int CompareNumbers(const Element& a, const Element& b) {
  const RawNumber x = Read(a);
  const RawNumber y = Read(b);
  using Kind = RawNumber::Kind;
  switch (x.kind) {
    case Kind::kInt64:
      switch (y.kind) {
        case Kind::kInt64:
          return (x.int64 > y.int64) - (x.int64 < y.int64);
        case Kind::kDouble:
          return CompareInt64Double(x.int64, y.dbl);
        case Kind::kDecimal:
          return CompareInt64Decimal(x.int64, y.decimal);
      }
      break;
    case Kind::kDouble:
      switch (y.kind) {
        case Kind::kInt64:
          return -CompareInt64Double(y.int64, x.dbl);
        case Kind::kDouble:
          return CompareDoubles(x.dbl, y.dbl);
        case Kind::kDecimal:
          return CompareDoubleDecimal(x.dbl, y.decimal);
      }
      break;
    case Kind::kDecimal:
      switch (y.kind) {
        case Kind::kInt64:
          return -CompareInt64Decimal(y.int64, x.decimal);
        case Kind::kDouble:
          return -CompareDoubleDecimal(y.dbl, x.decimal);
        case Kind::kDecimal:
          return CompareDecimals(x.decimal, y.decimal);
      }
      break;
  }
  return 0;
}

}  // namespace rockdoc

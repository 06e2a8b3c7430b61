// Decimal128: IEEE 754-2008 decimal128 in the binary integer decimal (BID)
// encoding, as the BSON specification stores it.
//
// Layout of the 128 bits (high word first), from the BSON Decimal128 spec:
//   bit 127        sign
//   bits 126..122  combination field:
//                  11111 -> NaN, 11110 -> Infinity;
//                  11xxx -> "large coefficient" form: a 14-bit exponent in
//                           bits 124..111 and an implicit 0b100 prefix on the
//                           coefficient, which makes it at least 2^113, above
//                           the largest legal coefficient 10^34 - 1. Such a
//                           value is non-canonical and reads as coefficient 0;
//                  otherwise the exponent is bits 126..113 and the
//                  coefficient bits 112..0 (also read as 0 when >= 10^34).
// The exponent is stored with bias 6176.
//
// The string forms follow the spec's to-string and from-string algorithms:
// no rounding is ever performed when parsing, so a string that would need it
// is rejected (FailedToParse), as the BSON corpus requires.
#include "bson/decimal_arithmetic.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "common/logging.h"
#include "rockdoc/status.h"
#include "rockdoc/types.h"

namespace rockdoc {
namespace {

using Uint128 = unsigned __int128;

constexpr uint64_t kSignBit = uint64_t{1} << 63;
constexpr uint64_t kInfinityHigh = uint64_t{0x78} << 56;  // combination 11110
constexpr uint64_t kNaNHigh = uint64_t{0x7C} << 56;       // combination 11111
constexpr uint64_t kCoefficientHighMask = (uint64_t{1} << 49) - 1;
constexpr int kExponentShift = 49;  // exponent position in the high word
// In the "11" form the exponent sits two bits lower (bits 124..111).
constexpr int kLargeFormExponentShift = 47;
constexpr uint64_t kExponentMask = 0x3FFF;

constexpr Uint128 TenPow(int n) {
  Uint128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}
constexpr Uint128 kMaxCoefficient = TenPow(Decimal128::kMaxDigits) - 1;

enum class Kind { kFinite, kInfinity, kNaN };

// The decoded meaning of 128 bits.
struct Decoded {
  Kind kind = Kind::kFinite;
  bool negative = false;
  Uint128 coefficient = 0;  // 0 for non-canonical encodings
  int exponent = 0;         // unbiased
};

Decoded Decode(uint64_t high, uint64_t low) {
  Decoded d;
  d.negative = (high & kSignBit) != 0;
  const uint64_t combination = (high >> 58) & 0x1F;
  if (combination == 0x1F) {
    d.kind = Kind::kNaN;
    return d;
  }
  if (combination == 0x1E) {
    d.kind = Kind::kInfinity;
    return d;
  }
  if (((high >> 61) & 0x3) == 0x3) {
    // The coefficient is 0b100 followed by 111 bits: always >= 2^113, so
    // never canonical; the spec says to read it as zero.
    d.exponent = static_cast<int>((high >> kLargeFormExponentShift) & kExponentMask) -
                 Decimal128::kExponentBias;
    return d;
  }
  d.exponent =
      static_cast<int>((high >> kExponentShift) & kExponentMask) - Decimal128::kExponentBias;
  Uint128 coefficient = (static_cast<Uint128>(high & kCoefficientHighMask) << 64) | low;
  d.coefficient = coefficient > kMaxCoefficient ? 0 : coefficient;
  return d;
}

Decimal128 Encode(bool negative, Uint128 coefficient, int exponent) {
  ROCKDOC_DCHECK(coefficient <= kMaxCoefficient);
  ROCKDOC_DCHECK(exponent >= Decimal128::kMinExponent && exponent <= Decimal128::kMaxExponent);
  const uint64_t biased = static_cast<uint64_t>(exponent + Decimal128::kExponentBias);
  uint64_t high = (negative ? kSignBit : 0) | (biased << kExponentShift) |
                  static_cast<uint64_t>(coefficient >> 64);
  return Decimal128(high, static_cast<uint64_t>(coefficient));
}

std::string CoefficientDigits(Uint128 coefficient) {
  if (coefficient == 0) return "0";
  char buf[40];
  int n = 0;
  while (coefficient != 0) {
    buf[n++] = static_cast<char>('0' + static_cast<int>(coefficient % 10));
    coefficient /= 10;
  }
  std::reverse(buf, buf + n);
  return std::string(buf, n);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Error messages quote the input, but not a megabyte of it.
std::string Quote(std::string_view text) {
  constexpr size_t kMaxQuoted = 64;
  if (text.size() <= kMaxQuoted) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kMaxQuoted)) + "...'";
}

// Exponents are accumulated saturating at this magnitude: far beyond any
// representable exponent even after shifting by the digit count of any
// string that fits in memory, yet far from int64 overflow.
constexpr int64_t kExponentSaturation = int64_t{1} << 50;

}  // namespace

Decimal128::Decimal128()
    : high_(static_cast<uint64_t>(kExponentBias) << kExponentShift), low_(0) {}

StatusOr<Decimal128> Decimal128::FromString(std::string_view text) {
  auto syntax_error = [&text]() {
    return FailedToParse("Decimal128: " + Quote(text) + " is not a valid decimal string");
  };
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  const std::string_view body = text.substr(pos);
  if (EqualsIgnoreCase(body, "inf") || EqualsIgnoreCase(body, "infinity")) {
    return Infinity(negative);
  }
  if (EqualsIgnoreCase(body, "nan")) {
    // The sign of a NaN is kept: the corpus parses "-NaN" to the negative
    // NaN bits (it prints as "NaN" either way).
    return Decimal128(kNaNHigh | (negative ? kSignBit : 0), 0);
  }

  // Significand: digits with at most one '.', at least one digit.
  std::string significant;  // digits with leading zeros dropped
  int64_t fraction_digits = 0;
  int64_t digit_count = 0;
  bool seen_point = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '.') {
      if (seen_point) return syntax_error();
      seen_point = true;
    } else if (IsDigit(c)) {
      ++digit_count;
      if (seen_point) ++fraction_digits;
      if (!significant.empty() || c != '0') significant.push_back(c);
    } else {
      break;
    }
  }
  if (digit_count == 0) return syntax_error();

  // Exponent: 'e' or 'E', an optional sign, at least one digit.
  int64_t exponent = 0;
  if (pos < text.size()) {
    if (text[pos] != 'e' && text[pos] != 'E') return syntax_error();
    ++pos;
    bool exponent_negative = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      exponent_negative = text[pos] == '-';
      ++pos;
    }
    if (pos == text.size()) return syntax_error();
    for (; pos < text.size(); ++pos) {
      if (!IsDigit(text[pos])) return syntax_error();
      exponent = std::min(exponent * 10 + (text[pos] - '0'), kExponentSaturation);
    }
    if (exponent_negative) exponent = -exponent;
  }
  exponent -= fraction_digits;

  if (significant.empty()) {
    // Zero: any exponent clamps into range without changing the value.
    exponent = std::clamp<int64_t>(exponent, kMinExponent, kMaxExponent);
    return Encode(negative, 0, static_cast<int>(exponent));
  }

  // More than 34 significant digits: only trailing zeros may go (raising the
  // exponent); dropping anything else would round.
  if (significant.size() > static_cast<size_t>(kMaxDigits)) {
    const size_t excess = significant.size() - kMaxDigits;
    if (significant.find_first_not_of('0', kMaxDigits) != std::string::npos) {
      return FailedToParse("Decimal128: " + Quote(text) +
                           " has more than 34 significant digits and would be rounded");
    }
    significant.resize(kMaxDigits);
    exponent += static_cast<int64_t>(excess);
  }
  // Exponent too large: lower it by appending zeros to the coefficient
  // ("fold-down" clamping), while the coefficient still fits.
  if (exponent > kMaxExponent) {
    const int64_t need = exponent - kMaxExponent;
    if (static_cast<int64_t>(significant.size()) + need > kMaxDigits) {
      return FailedToParse("Decimal128: " + Quote(text) + " overflows (exponent too large)");
    }
    significant.append(static_cast<size_t>(need), '0');
    exponent = kMaxExponent;
  }
  // Exponent too small: raise it by dropping trailing zeros only.
  if (exponent < kMinExponent) {
    const int64_t need = kMinExponent - exponent;
    const size_t last_nonzero = significant.find_last_not_of('0');
    const int64_t trailing_zeros = static_cast<int64_t>(significant.size() - 1 - last_nonzero);
    if (need > trailing_zeros) {
      return FailedToParse("Decimal128: " + Quote(text) +
                           " underflows (exponent too small, would be rounded)");
    }
    significant.resize(significant.size() - static_cast<size_t>(need));
    exponent = kMinExponent;
  }

  Uint128 coefficient = 0;
  for (char c : significant) coefficient = coefficient * 10 + static_cast<unsigned>(c - '0');
  return Encode(negative, coefficient, static_cast<int>(exponent));
}

Decimal128 Decimal128::FromInt64(int64_t value) {
  // Through uint64 so that INT64_MIN's magnitude does not overflow.
  const uint64_t magnitude =
      value < 0 ? ~static_cast<uint64_t>(value) + 1 : static_cast<uint64_t>(value);
  return Encode(value < 0, magnitude, 0);
}

Decimal128 Decimal128::FromDouble(double value) {
  if (std::isnan(value)) return NaN();
  if (std::isinf(value)) return Infinity(value < 0);
  const bool negative = std::signbit(value);
  const double magnitude = std::fabs(value);
  // Integers below 2^53 are exact in a double: keep them integers (100.0
  // becomes "100", not the equally short "1E+2"), which reads better and is
  // what a user who stored a whole number expects to see.
  constexpr double kTwoPow53 = 9007199254740992.0;
  if (magnitude < kTwoPow53 && magnitude == std::floor(magnitude)) {
    return Encode(negative, static_cast<uint64_t>(magnitude), 0);
  }
  // std::to_chars without a precision gives the shortest digits that read
  // back to the same double, e.g. "1e-01" for 0.1, "1.7976931348623157e+308".
  char buf[64];
  const auto result =
      std::to_chars(buf, buf + sizeof(buf), magnitude, std::chars_format::scientific);
  ROCKDOC_CHECK(result.ec == std::errc());
  const std::string_view text(buf, static_cast<size_t>(result.ptr - buf));
  const size_t e_pos = text.find('e');
  ROCKDOC_CHECK(e_pos != std::string_view::npos);
  uint64_t coefficient = 0;
  int digits = 0;
  for (char c : text.substr(0, e_pos)) {
    if (c == '.') continue;
    coefficient = coefficient * 10 + static_cast<uint64_t>(c - '0');
    ++digits;
  }
  int exponent10 = 0;
  std::from_chars(text.data() + e_pos + 1 + (text[e_pos + 1] == '+' ? 1 : 0),
                  text.data() + text.size(), exponent10);
  // "d.ddd" x 10^e is coefficient x 10^(e - digits + 1); doubles span
  // 10^-324..10^308, well inside decimal128's exponent range.
  return Encode(negative, coefficient, exponent10 - (digits - 1));
}

Decimal128 Decimal128::NaN() { return Decimal128(kNaNHigh, 0); }

Decimal128 Decimal128::Infinity(bool negative) {
  return Decimal128(kInfinityHigh | (negative ? kSignBit : 0), 0);
}

std::string Decimal128::ToString() const {
  const Decoded d = Decode(high_, low_);
  if (d.kind == Kind::kNaN) return "NaN";  // the spec prints NaN without sign
  std::string out = d.negative ? "-" : "";
  if (d.kind == Kind::kInfinity) return out + "Infinity";

  const std::string digits = CoefficientDigits(d.coefficient);
  const int n = static_cast<int>(digits.size());
  const int adjusted = d.exponent + (n - 1);
  if (d.exponent <= 0 && adjusted >= -6) {
    // Plain notation.
    if (d.exponent == 0) return out + digits;
    const int fraction = -d.exponent;
    if (n > fraction) {
      out += digits.substr(0, n - fraction);
      out += '.';
      out += digits.substr(n - fraction);
    } else {
      out += "0.";
      out.append(static_cast<size_t>(fraction - n), '0');
      out += digits;
    }
    return out;
  }
  // Scientific notation: one digit before the point, the adjusted exponent
  // always signed.
  out += digits[0];
  if (n > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += 'E';
  out += adjusted >= 0 ? '+' : '-';
  out += std::to_string(adjusted >= 0 ? adjusted : -adjusted);
  return out;
}

// Intel's library, as every decimal conversion (decimal_arithmetic.h): to
// nearest, ties to even; beyond double's range an infinity, below it zero.
double Decimal128::ToDouble() const { return DecimalToDouble(*this); }

bool Decimal128::IsNaN() const { return Decode(high_, low_).kind == Kind::kNaN; }

bool Decimal128::IsInfinite() const { return Decode(high_, low_).kind == Kind::kInfinity; }

bool Decimal128::IsZero() const {
  const Decoded d = Decode(high_, low_);
  return d.kind == Kind::kFinite && d.coefficient == 0;
}

Decimal128::Parts Decimal128::ToParts() const {
  const Decoded d = Decode(high_, low_);
  Parts parts;
  parts.negative = d.negative;
  if (d.kind != Kind::kFinite) return parts;  // NaN and infinities have no parts
  parts.coefficient_high = static_cast<uint64_t>(d.coefficient >> 64);
  parts.coefficient_low = static_cast<uint64_t>(d.coefficient);
  parts.exponent = d.exponent;
  return parts;
}

Decimal128 Decimal128::FromParts(const Parts& parts) {
  const Uint128 coefficient =
      (static_cast<Uint128>(parts.coefficient_high) << 64) | parts.coefficient_low;
  ROCKDOC_CHECK(coefficient <= kMaxCoefficient);
  ROCKDOC_CHECK(parts.exponent >= kMinExponent && parts.exponent <= kMaxExponent);
  return Encode(parts.negative, coefficient, parts.exponent);
}

}  // namespace rockdoc

// Decimal128 arithmetic over exact decimal digit strings.
//
// Coefficients have at most 34 digits, but aligning two exponents can need
// up to ~12,300 digits: the operations work on plain digit strings (most
// significant first), exactly, and round once at the end. $inc and $mul
// call this once per update, so simplicity wins over speed.
#include "bson/decimal_arithmetic.h"

#include <algorithm>
#include <string>
#include <vector>

namespace rockdoc {

namespace {

using Uint128 = unsigned __int128;

struct Exact {
  bool negative = false;
  std::string digits;  // no leading zeros; "0" for zero
  int exponent = 0;
};

std::string ToDigits(Uint128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v != 0) {
    s.push_back(static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  std::reverse(s.begin(), s.end());
  return s;
}

Exact FromDecimal(const Decimal128& d) {
  Decimal128::Parts p = d.ToParts();
  Exact e;
  e.negative = p.negative;
  e.digits = ToDigits((static_cast<Uint128>(p.coefficient_high) << 64) | p.coefficient_low);
  e.exponent = p.exponent;
  return e;
}

void StripLeadingZeros(std::string* s) {
  size_t nz = s->find_first_not_of('0');
  if (nz == std::string::npos) {
    *s = "0";
  } else if (nz > 0) {
    s->erase(0, nz);
  }
}

int CompareMagnitude(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

std::string AddMagnitudes(const std::string& a, const std::string& b) {
  std::string out;
  int carry = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
    int s = carry;
    if (i < a.size()) s += a[a.size() - 1 - i] - '0';
    if (i < b.size()) s += b[b.size() - 1 - i] - '0';
    out.push_back(static_cast<char>('0' + s % 10));
    carry = s / 10;
  }
  std::reverse(out.begin(), out.end());
  StripLeadingZeros(&out);
  return out;
}

// a - b for |a| >= |b|.
std::string SubtractMagnitudes(const std::string& a, const std::string& b) {
  std::string out;
  int borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int s = (a[a.size() - 1 - i] - '0') - borrow;
    if (i < b.size()) s -= b[b.size() - 1 - i] - '0';
    borrow = s < 0;
    if (s < 0) s += 10;
    out.push_back(static_cast<char>('0' + s));
  }
  std::reverse(out.begin(), out.end());
  StripLeadingZeros(&out);
  return out;
}

std::string MultiplyMagnitudes(const std::string& a, const std::string& b) {
  std::vector<int> acc(a.size() + b.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < b.size(); ++j) {
      acc[i + j + 1] += (a[i] - '0') * (b[j] - '0');
    }
  }
  for (size_t k = acc.size() - 1; k > 0; --k) {
    acc[k - 1] += acc[k] / 10;
    acc[k] %= 10;
  }
  std::string out;
  for (int d : acc) out.push_back(static_cast<char>('0' + d));
  StripLeadingZeros(&out);
  return out;
}

// Drops the last `n` digits of `digits` with round-half-even. Returns the
// rounded coefficient (may gain a digit: 999 -> 1000).
std::string DropDigitsRounded(const std::string& digits, size_t n) {
  if (n == 0) return digits;
  std::string kept;
  char first_dropped = '0';
  bool rest_nonzero = false;
  if (n > digits.size()) {
    kept = "0";
    rest_nonzero = digits != "0";  // everything is below half a unit
  } else {
    kept = digits.substr(0, digits.size() - n);
    if (kept.empty()) kept = "0";
    first_dropped = digits[digits.size() - n];
    rest_nonzero = digits.find_first_not_of('0', digits.size() - n + 1) != std::string::npos;
  }
  bool round_up = first_dropped > '5' || (first_dropped == '5' && rest_nonzero) ||
                  (first_dropped == '5' && !rest_nonzero && ((kept.back() - '0') % 2 == 1));
  if (round_up) kept = AddMagnitudes(kept, "1");
  return kept;
}

Decimal128 Finish(Exact e) {
  StripLeadingZeros(&e.digits);
  // Round to 34 significant digits.
  if (e.digits.size() > static_cast<size_t>(Decimal128::kMaxDigits)) {
    size_t drop = e.digits.size() - Decimal128::kMaxDigits;
    e.digits = DropDigitsRounded(e.digits, drop);
    e.exponent += static_cast<int>(drop);
    if (e.digits.size() > static_cast<size_t>(Decimal128::kMaxDigits)) {
      e.digits.pop_back();  // the carry made 10^34: drop a zero
      e.exponent += 1;
    }
  }
  // Below the smallest exponent: round away low digits (subnormal results).
  if (e.exponent < Decimal128::kMinExponent) {
    size_t drop = static_cast<size_t>(Decimal128::kMinExponent - e.exponent);
    e.digits = DropDigitsRounded(e.digits, drop);
    e.exponent = Decimal128::kMinExponent;
  }
  // Above the largest exponent: pad the coefficient with zeros if it has
  // room (clamping), else the value overflows to infinity.
  if (e.exponent > Decimal128::kMaxExponent) {
    if (e.digits == "0") {
      e.exponent = Decimal128::kMaxExponent;
    } else {
      size_t pad = static_cast<size_t>(e.exponent - Decimal128::kMaxExponent);
      if (e.digits.size() + pad > static_cast<size_t>(Decimal128::kMaxDigits)) {
        return Decimal128::Infinity(e.negative);
      }
      e.digits.append(pad, '0');
      e.exponent = Decimal128::kMaxExponent;
    }
  }
  Uint128 c = 0;
  for (char d : e.digits) c = c * 10 + static_cast<unsigned>(d - '0');
  Decimal128::Parts p;
  p.negative = e.negative;
  p.coefficient_high = static_cast<uint64_t>(c >> 64);
  p.coefficient_low = static_cast<uint64_t>(c);
  p.exponent = e.exponent;
  return Decimal128::FromParts(p);
}

}  // namespace

Decimal128 DecimalAdd(const Decimal128& a, const Decimal128& b) {
  if (a.IsNaN() || b.IsNaN()) return Decimal128::NaN();
  if (a.IsInfinite() || b.IsInfinite()) {
    if (a.IsInfinite() && b.IsInfinite() && a.IsNegative() != b.IsNegative()) {
      return Decimal128::NaN();
    }
    return a.IsInfinite() ? a : b;
  }
  Exact x = FromDecimal(a);
  Exact y = FromDecimal(b);
  int exponent = std::min(x.exponent, y.exponent);
  x.digits.append(static_cast<size_t>(x.exponent - exponent), '0');
  y.digits.append(static_cast<size_t>(y.exponent - exponent), '0');
  StripLeadingZeros(&x.digits);
  StripLeadingZeros(&y.digits);
  Exact r;
  r.exponent = exponent;
  if (x.negative == y.negative) {
    r.negative = x.negative;
    r.digits = AddMagnitudes(x.digits, y.digits);
  } else {
    int cmp = CompareMagnitude(x.digits, y.digits);
    if (cmp == 0) {
      r.negative = false;  // x + (-x) is +0 when rounding to nearest
      r.digits = "0";
    } else if (cmp > 0) {
      r.negative = x.negative;
      r.digits = SubtractMagnitudes(x.digits, y.digits);
    } else {
      r.negative = y.negative;
      r.digits = SubtractMagnitudes(y.digits, x.digits);
    }
  }
  // -0 + -0 keeps its sign; any other zero sum is +0.
  if (r.digits == "0" && !(x.negative && y.negative)) r.negative = false;
  return Finish(std::move(r));
}

Decimal128 DecimalMultiply(const Decimal128& a, const Decimal128& b) {
  const bool negative = a.IsNegative() != b.IsNegative();
  if (a.IsNaN() || b.IsNaN()) return Decimal128::NaN();
  if (a.IsInfinite() || b.IsInfinite()) {
    if (a.IsZero() || b.IsZero()) return Decimal128::NaN();
    return Decimal128::Infinity(negative);
  }
  Exact x = FromDecimal(a);
  Exact y = FromDecimal(b);
  Exact r;
  r.negative = negative;
  r.digits = MultiplyMagnitudes(x.digits, y.digits);
  r.exponent = x.exponent + y.exponent;
  return Finish(std::move(r));
}

Decimal128 NumberToDecimal(const Element& e) {
  switch (e.type()) {
    case BsonType::kInt32: return Decimal128::FromInt64(e.Int32());
    case BsonType::kInt64: return Decimal128::FromInt64(e.Int64());
    case BsonType::kDouble: return Decimal128::FromDouble(e.Double());
    default: return e.Decimal();
  }
}

}  // namespace rockdoc

// Decimal128 arithmetic on Intel's BID library (decimal_arithmetic.h says
// why that library and which variant).
//
// Decimal128 and BID_UINT128 are the same 128 bits: the BID encoding with
// the low 64 bits first (w[0]) on a little-endian machine, which is also
// BSON's order. The status flags each call raises are dropped: MongoDB
// decides on the operands (division by zero, a negative square root) before
// it calls the library, and so do the callers here.
#include "bson/decimal_arithmetic.h"

#include <string>

extern "C" {
#include <bid_conf.h>
#include <bid_functions.h>
}

namespace rockdoc {

namespace {

BID_UINT128 ToBid(const Decimal128& d) {
  BID_UINT128 b;
  b.w[0] = d.low();
  b.w[1] = d.high();
  return b;
}

Decimal128 FromBid(const BID_UINT128& b) { return Decimal128(b.w[1], b.w[0]); }

unsigned int ToBidRounding(DecimalRounding mode) {
  switch (mode) {
    case DecimalRounding::kHalfEven: return BID_ROUNDING_TO_NEAREST;
    case DecimalRounding::kHalfAwayFromZero: return BID_ROUNDING_TIES_AWAY;
    case DecimalRounding::kTowardPositive: return BID_ROUNDING_UP;
    case DecimalRounding::kTowardNegative: return BID_ROUNDING_DOWN;
    case DecimalRounding::kTowardZero: return BID_ROUNDING_TO_ZERO;
  }
  return BID_ROUNDING_TO_NEAREST;
}

constexpr unsigned int kNearest = BID_ROUNDING_TO_NEAREST;

// 1E<exponent>, the quantum that quantize takes.
Decimal128 One(int exponent) {
  Decimal128::Parts p;
  p.coefficient_low = 1;
  p.exponent = exponent;
  return Decimal128::FromParts(p);
}

// The number of decimal digits of a finite value's coefficient (1 for 0).
int CoefficientDigits(const Decimal128& x) {
  const Decimal128::Parts p = x.ToParts();
  unsigned __int128 c = (static_cast<unsigned __int128>(p.coefficient_high) << 64) | p.coefficient_low;
  int n = 1;
  while (c >= 10) {
    c /= 10;
    ++n;
  }
  return n;
}

}  // namespace

Decimal128 DecimalAdd(const Decimal128& a, const Decimal128& b) {
  _IDEC_flags flags = 0;
  return FromBid(bid128_add(ToBid(a), ToBid(b), kNearest, &flags));
}

Decimal128 DecimalSubtract(const Decimal128& a, const Decimal128& b) {
  _IDEC_flags flags = 0;
  return FromBid(bid128_sub(ToBid(a), ToBid(b), kNearest, &flags));
}

Decimal128 DecimalMultiply(const Decimal128& a, const Decimal128& b) {
  _IDEC_flags flags = 0;
  return FromBid(bid128_mul(ToBid(a), ToBid(b), kNearest, &flags));
}

Decimal128 DecimalDivide(const Decimal128& a, const Decimal128& b) {
  _IDEC_flags flags = 0;
  return FromBid(bid128_div(ToBid(a), ToBid(b), kNearest, &flags));
}

Decimal128 DecimalModulo(const Decimal128& a, const Decimal128& b) {
  _IDEC_flags flags = 0;
  return FromBid(bid128_fmod(ToBid(a), ToBid(b), &flags));
}

Decimal128 DecimalPow(const Decimal128& a, const Decimal128& b) {
  _IDEC_flags flags = 0;
  return FromBid(bid128_pow(ToBid(a), ToBid(b), kNearest, &flags));
}

Decimal128 DecimalAbs(const Decimal128& x) { return FromBid(bid128_abs(ToBid(x))); }

Decimal128 DecimalNegate(const Decimal128& x) { return FromBid(bid128_negate(ToBid(x))); }

Decimal128 DecimalApply(DecimalFunction fn, const Decimal128& x) {
  using Fn = BID_UINT128 (*)(BID_UINT128, _IDEC_round, _IDEC_flags*);
  // In DecimalFunction's order.
  static constexpr Fn kFunctions[] = {
      &bid128_sqrt, &bid128_exp,  &bid128_log,  &bid128_log10, &bid128_sin,   &bid128_cos,
      &bid128_tan,  &bid128_asin, &bid128_acos, &bid128_atan,  &bid128_sinh,  &bid128_cosh,
      &bid128_tanh, &bid128_asinh, &bid128_acosh, &bid128_atanh};
  static_assert(sizeof(kFunctions) / sizeof(kFunctions[0]) ==
                static_cast<size_t>(DecimalFunction::kAtanh) + 1);
  _IDEC_flags flags = 0;
  return FromBid(kFunctions[static_cast<int>(fn)](ToBid(x), kNearest, &flags));
}

Decimal128 DecimalAtan2(const Decimal128& y, const Decimal128& x) {
  _IDEC_flags flags = 0;
  return FromBid(bid128_atan2(ToBid(y), ToBid(x), kNearest, &flags));
}

Decimal128 DecimalLog(const Decimal128& x, const Decimal128& base) {
  return DecimalDivide(DecimalApply(DecimalFunction::kLn, x), DecimalApply(DecimalFunction::kLn, base));
}

Decimal128 DecimalQuantize(const Decimal128& x, int exponent, DecimalRounding mode) {
  _IDEC_flags flags = 0;
  return FromBid(bid128_quantize(ToBid(x), ToBid(One(exponent)), ToBidRounding(mode), &flags));
}

Decimal128 DecimalRoundToPlace(const Decimal128& x, int place, DecimalRounding mode) {
  if (x.IsInfinite()) return x;
  return DecimalQuantize(x, -place, mode);
}

Decimal128 DecimalFromDoubleExact(double value) {
  _IDEC_flags flags = 0;
  return FromBid(binary64_to_bid128(value, kNearest, &flags));
}

Decimal128 DecimalFromDouble(double value) {
  const Decimal128 exact = DecimalFromDoubleExact(value);
  if (value == 0 || !exact.IsFinite()) return exact;
  // Keep 15 significant digits: the quantum is 10^(adjusted exponent - 14);
  // when rounding carries into a 16th digit (9.999...95 -> 10.0...0), one
  // more power of ten.
  constexpr int kDigits = 15;
  const int adjusted = exact.ToParts().exponent + CoefficientDigits(exact) - 1;
  Decimal128 rounded = DecimalQuantize(exact, adjusted - (kDigits - 1), DecimalRounding::kHalfEven);
  if (CoefficientDigits(rounded) > kDigits) {
    rounded = DecimalQuantize(exact, adjusted - (kDigits - 2), DecimalRounding::kHalfEven);
  }
  return rounded;
}

double DecimalToDouble(const Decimal128& x, bool* out_of_range) {
  _IDEC_flags flags = 0;
  const double d = bid128_to_binary64(ToBid(x), kNearest, &flags);
  if (out_of_range != nullptr) {
    *out_of_range = (flags & (BID_OVERFLOW_EXCEPTION | BID_UNDERFLOW_EXCEPTION)) != 0;
  }
  return d;
}

std::optional<int64_t> DecimalToInt64(const Decimal128& x, DecimalRounding mode) {
  using Fn = BID_SINT64 (*)(BID_UINT128, _IDEC_flags*);
  // In DecimalRounding's order.
  static constexpr Fn kConversions[] = {&bid128_to_int64_rnint, &bid128_to_int64_rninta,
                                        &bid128_to_int64_ceil, &bid128_to_int64_floor,
                                        &bid128_to_int64_int};
  _IDEC_flags flags = 0;
  const int64_t n = kConversions[static_cast<int>(mode)](ToBid(x), &flags);
  if ((flags & BID_INVALID_EXCEPTION) != 0) return std::nullopt;
  return n;
}

std::optional<int32_t> DecimalToInt32(const Decimal128& x, DecimalRounding mode) {
  using Fn = int (*)(BID_UINT128, _IDEC_flags*);
  static constexpr Fn kConversions[] = {&bid128_to_int32_rnint, &bid128_to_int32_rninta,
                                        &bid128_to_int32_ceil, &bid128_to_int32_floor,
                                        &bid128_to_int32_int};
  _IDEC_flags flags = 0;
  const int32_t n = kConversions[static_cast<int>(mode)](ToBid(x), &flags);
  if ((flags & BID_INVALID_EXCEPTION) != 0) return std::nullopt;
  return n;
}

std::optional<Decimal128> DecimalFromStringRounded(std::string_view text) {
  // The strict parser knows the spellings of NaN; the library answers a
  // syntax error with a NaN (and no flag), so a NaN from it is an error.
  if (StatusOr<Decimal128> exact = Decimal128::FromString(text); exact.ok()) return *exact;
  std::string copy(text);
  _IDEC_flags flags = 0;
  const Decimal128 rounded = FromBid(bid128_from_string(copy.data(), kNearest, &flags));
  if (rounded.IsNaN() || (flags & BID_INVALID_EXCEPTION) != 0) return std::nullopt;
  return rounded;
}

Decimal128 NumberToDecimal(const Element& e) {
  switch (e.type()) {
    case BsonType::kDecimal128: return e.Decimal();
    case BsonType::kDouble: return DecimalFromDouble(e.Double());
    case BsonType::kInt32: return Decimal128::FromInt64(e.Int32());
    case BsonType::kInt64: return Decimal128::FromInt64(e.Int64());
    default: return Decimal128::FromInt64(0);
  }
}

}  // namespace rockdoc

// bson/decimal_arithmetic.h: Decimal128 arithmetic, rounding and
// conversions, for the expressions ($add ... $sqrt, $round, $toDecimal, the
// trigonometric operators), the accumulators and $inc / $mul (MongoDB keeps
// them in platform/decimal128.h, beside the type).
//
// Every function here is Intel's Decimal Floating-Point Math Library (BID
// encoding, the variant with the rounding mode and the status flags passed
// as arguments: `libbidgcc000`), the library MongoDB's own Decimal128 calls,
// so that each answer is MongoDB's to the byte. IEEE 754-2008 semantics:
// round-half-even to 34 digits unless a mode is given; an exact result
// mostly has the preferred exponent (1.0 + 1.00 = 2.00), but a sum of
// operands whose exponents are far apart may carry 34 digits (8.6495E+36 +
// -4.99E+23 = 8.649499999999501000000000000000000E+36), as MongoDB's; overflow
// gives an infinity, underflow a subnormal or zero; NaN propagates; Inf - Inf,
// 0 * Inf, 0 / 0 and sqrt(-1) are NaN. Whether an operand is acceptable
// (division by zero, a logarithm of a non-positive number) is the callers'
// business: they know MongoDB's error for it.
//
// The transcendental functions ($exp, $ln, $pow, the trigonometric ones) are
// not correctly rounded in the last digit (the library's README says so);
// they are MongoDB's answers all the same.
//
// Pure functions, thread-safe (no global rounding mode or flags).
#ifndef ROCKDOC_BSON_DECIMAL_ARITHMETIC_H_
#define ROCKDOC_BSON_DECIMAL_ARITHMETIC_H_

#include <cstdint>
#include <optional>

#include "rockdoc/document.h"
#include "rockdoc/types.h"

namespace rockdoc {

// IEEE 754's rounding directions, as MongoDB's Decimal128::RoundingMode.
enum class DecimalRounding {
  kHalfEven,          // to nearest, ties to even (the default)
  kHalfAwayFromZero,  // to nearest, ties away from zero
  kTowardPositive,    // ceiling
  kTowardNegative,    // floor
  kTowardZero,        // truncation
};

Decimal128 DecimalAdd(const Decimal128& a, const Decimal128& b);
Decimal128 DecimalSubtract(const Decimal128& a, const Decimal128& b);
Decimal128 DecimalMultiply(const Decimal128& a, const Decimal128& b);
// a / b; x / 0 is an infinity of the quotient's sign (NaN for 0 / 0).
Decimal128 DecimalDivide(const Decimal128& a, const Decimal128& b);
// fmod: a - b * trunc(a / b), exact, with a's sign (MongoDB's $mod).
Decimal128 DecimalModulo(const Decimal128& a, const Decimal128& b);
// a^b (MongoDB's Decimal128::power).
Decimal128 DecimalPow(const Decimal128& a, const Decimal128& b);
Decimal128 DecimalAbs(const Decimal128& x);
Decimal128 DecimalNegate(const Decimal128& x);

// The one-argument functions of the math expressions.
enum class DecimalFunction {
  kSqrt, kExp, kLn, kLog10,
  kSin, kCos, kTan, kAsin, kAcos, kAtan,
  kSinh, kCosh, kTanh, kAsinh, kAcosh, kAtanh,
};
Decimal128 DecimalApply(DecimalFunction fn, const Decimal128& x);
// atan2(y, x).
Decimal128 DecimalAtan2(const Decimal128& y, const Decimal128& x);
// The logarithm of x in `base`: ln(x) / ln(base), as MongoDB's $log.
Decimal128 DecimalLog(const Decimal128& x, const Decimal128& base);

// x with exponent `exponent` (IEEE's quantize): rounded in `mode` when
// digits are dropped; NaN when the result would need more than 34 digits.
Decimal128 DecimalQuantize(const Decimal128& x, int exponent, DecimalRounding mode);
// x rounded to `place` digits after the point (negative: to tens, hundreds,
// ...), for $round / $trunc as MongoDB's: x quantized to exponent -place, so
// digits are added as well as dropped (1.2 to 3 places is 1.200), and NaN
// when that needs more than 34 digits; an infinity as it is.
Decimal128 DecimalRoundToPlace(const Decimal128& x, int place, DecimalRounding mode);

// A double as MongoDB's Decimal128(double) makes it (the default
// kRoundTo15Digits): the double's binary value rounded to 15 significant
// digits, half-even, trailing zeros kept (2.5 -> 2.50000000000000, 0.1 ->
// 0.100000000000000); zeros, infinities and NaN as they are.
Decimal128 DecimalFromDouble(double value);
// The double's binary value rounded to 34 digits (kRoundTo34Digits).
Decimal128 DecimalFromDoubleExact(double value);
// Nearest double (ties to even); beyond double's range an infinity, below
// it zero or a subnormal. *out_of_range, when given, says whether IEEE's
// overflow or underflow flag was raised ($convert refuses both, as MongoDB's).
double DecimalToDouble(const Decimal128& x, bool* out_of_range = nullptr);
// An integer from x rounded in `mode`; std::nullopt for NaN, infinities and
// values outside int64's (int32's) range.
std::optional<int64_t> DecimalToInt64(const Decimal128& x, DecimalRounding mode);
std::optional<int32_t> DecimalToInt32(const Decimal128& x, DecimalRounding mode);
// Parses text as bid128_from_string does, rounding to 34 digits when it
// must (MongoDB's $convert from a string): std::nullopt when the text is not
// a number. Decimal128::FromString, which never rounds, is the strict form.
std::optional<Decimal128> DecimalFromStringRounded(std::string_view text);

// A number element (int32, int64, double or decimal) as a decimal, as
// MongoDB's coerceToDecimal: integers exactly, doubles by DecimalFromDouble.
Decimal128 NumberToDecimal(const Element& e);

}  // namespace rockdoc

#endif  // ROCKDOC_BSON_DECIMAL_ARITHMETIC_H_

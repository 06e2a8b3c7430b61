// bson/numeric.h: exact comparison of numbers across BSON's four numeric
// types (int32, int64, double, decimal128), as MongoDB orders them.
//
// Numbers compare by exact mathematical value, never through a lossy
// conversion: int64 9007199254740993 > double 9007199254740992.0, and
// decimal "0.1" < double 0.1 (the double is 0.1000000000000000055511...).
// The order is total:
//   NaN (double or decimal, any sign or payload) < -Infinity < finite values
//   < +Infinity;
// all NaNs are equal to each other; -0 == +0; decimals equal in value but
// written with different exponents (1, 1.0, 1.00) are equal.
//
// All functions are pure and thread-safe. Comparisons that cannot be decided
// from signs and orders of magnitude fall back to arbitrary-precision
// integers (a double is m * 2^e and a decimal c * 10^q exactly), which costs
// at most a few microseconds for the widest exponent gaps.
#ifndef ROCKDOC_BSON_NUMERIC_H_
#define ROCKDOC_BSON_NUMERIC_H_

#include <cstdint>

#include "rockdoc/document.h"
#include "rockdoc/types.h"

namespace rockdoc {

// <0, 0 or >0 as a is below, equal to or above b by exact value.
// Precondition: a.IsNumber() && b.IsNumber().
int CompareNumbers(const Element& a, const Element& b);

// The same order for raw values, for layers that hold numbers outside
// elements (keystrings, the matcher's constants).
int CompareInt64Double(int64_t a, double b);
int CompareDoubles(double a, double b);
int CompareDoubleDecimal(double a, const Decimal128& b);
int CompareInt64Decimal(int64_t a, const Decimal128& b);
int CompareDecimals(const Decimal128& a, const Decimal128& b);

}  // namespace rockdoc

#endif  // ROCKDOC_BSON_NUMERIC_H_

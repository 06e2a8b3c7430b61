// bson/decimal_arithmetic.h: addition and multiplication of
// Decimal128 values, for $inc and $mul and the expressions $add, $multiply,
// $subtract, $sum and $toDecimal (MongoDB keeps them in platform/decimal128.h,
// beside the type).
//
// IEEE 754-2008 semantics with round-half-even to 34 digits, as MongoDB's
// Decimal128::add / multiply (Intel's BID library) compute them: the exact
// result's exponent is kept when the coefficient fits (1.0 + 1.00 = 2.00);
// overflow gives an infinity; NaN propagates; Inf - Inf and 0 * Inf are NaN.
// Pure functions, thread-safe.
#ifndef ROCKDOC_BSON_DECIMAL_ARITHMETIC_H_
#define ROCKDOC_BSON_DECIMAL_ARITHMETIC_H_

#include "rockdoc/document.h"
#include "rockdoc/types.h"

namespace rockdoc {

Decimal128 DecimalAdd(const Decimal128& a, const Decimal128& b);
Decimal128 DecimalMultiply(const Decimal128& a, const Decimal128& b);
// A number element (int32, int64, double or decimal) as a decimal.
Decimal128 NumberToDecimal(const Element& e);

}  // namespace rockdoc

#endif  // ROCKDOC_BSON_DECIMAL_ARITHMETIC_H_

// keystring: the order-preserving encoding of BSON values. The format is
// specified in README.md beside this file; the comments here say how the
// code meets it, the README says what the bytes are.
#include "keystring/keystring.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/endian.h"
#include "common/logging.h"

namespace rockdoc::keystring {

namespace {

using Uint128 = unsigned __int128;

// ---------------------------------------------------------------------------
// Type bytes ("CTypes"). On-disk values: do not change them (README.md,
// "Value type bytes"). Their order is MongoDB's cross-type order; numbers
// take a range of their own so that the sign and the binary exponent of a
// number are part of its first byte.
// ---------------------------------------------------------------------------
constexpr uint8_t kEnd = 0x00;  // ends an object, array or scope
constexpr uint8_t kMinKey = 0x0A;
constexpr uint8_t kUndefined = 0x0B;
constexpr uint8_t kNull = 0x0C;
constexpr uint8_t kNumNaN = 0x10;
constexpr uint8_t kNumNegInf = 0x11;
constexpr uint8_t kNumNegLargeHigh = 0x12;  // negative, E > 63, 2-byte E follows
constexpr uint8_t kNumNegSmall = 0x13;      // + (63 - E) for E in [-32, 63]
constexpr uint8_t kNumNegLargeLow = 0x73;   // negative, E < -32, 2-byte E follows
constexpr uint8_t kNumZero = 0x74;
constexpr uint8_t kNumPosLargeLow = 0x75;   // positive, E < -32
constexpr uint8_t kNumPosSmall = 0x76;      // + (E + 32) for E in [-32, 63]
constexpr uint8_t kNumPosLargeHigh = 0xD6;  // positive, E > 63
constexpr uint8_t kNumPosInf = 0xD7;
constexpr uint8_t kString = 0xE0;  // string and symbol
constexpr uint8_t kObject = 0xE1;
constexpr uint8_t kArray = 0xE2;
constexpr uint8_t kBinData = 0xE3;
constexpr uint8_t kObjectId = 0xE4;
constexpr uint8_t kFalse = 0xE5;
constexpr uint8_t kTrue = 0xE6;
constexpr uint8_t kDate = 0xE7;
constexpr uint8_t kTimestamp = 0xE8;
constexpr uint8_t kRegex = 0xE9;
constexpr uint8_t kDbPointer = 0xEA;
constexpr uint8_t kCode = 0xEB;
constexpr uint8_t kCodeWithScope = 0xEC;
constexpr uint8_t kMaxKey = 0xF0;

// The binary exponents that fit in a "small" number class byte.
constexpr int kSmallExponentMin = -32;
constexpr int kSmallExponentMax = 63;
static_assert(kNumNegSmall + (kSmallExponentMax - kSmallExponentMin) + 1 == kNumNegLargeLow);
static_assert(kNumPosSmall + (kSmallExponentMax - kSmallExponentMin) + 1 == kNumPosLargeHigh);
// Bias of the 2-byte exponent of the "large" classes.
constexpr int kLargeExponentBias = 0x8000;
// Bias of the decimal exponent in a decimal tail.
constexpr int kTailExponentBias = 0x8000;
// 9 groups of 7 bits: the 63 bits after the leading one that every int64
// and double fits in.
constexpr int kMaxGroups = 9;

// Field type-rank bytes, written before each field name inside objects so
// that fields compare by type rank, then name, then value. On-disk values.
constexpr uint8_t kRankMinKey = 0x01;
constexpr uint8_t kRankUndefined = 0x02;
constexpr uint8_t kRankNull = 0x03;
constexpr uint8_t kRankNumber = 0x04;
constexpr uint8_t kRankString = 0x05;
constexpr uint8_t kRankObject = 0x06;
constexpr uint8_t kRankArray = 0x07;
constexpr uint8_t kRankBinData = 0x08;
constexpr uint8_t kRankObjectId = 0x09;
constexpr uint8_t kRankBool = 0x0A;
constexpr uint8_t kRankDate = 0x0B;
constexpr uint8_t kRankTimestamp = 0x0C;
constexpr uint8_t kRankRegex = 0x0D;
constexpr uint8_t kRankDbPointer = 0x0E;
constexpr uint8_t kRankCode = 0x0F;
constexpr uint8_t kRankCodeWithScope = 0x10;
constexpr uint8_t kRankMaxKey = 0x11;

// Type bits: numeric flavours (2 bits). On-disk values.
constexpr uint64_t kTbInt32 = 0;
constexpr uint64_t kTbInt64 = 1;
constexpr uint64_t kTbDouble = 2;
constexpr uint64_t kTbDecimal = 3;
// The canonical quiet NaN (what std::numeric_limits<double>::quiet_NaN and
// JavaScript produce); other NaNs keep their bits in the type bits.
constexpr uint64_t kCanonicalDoubleNaN = 0x7FF8000000000000ULL;

uint8_t RankByte(BsonType type) {
  switch (type) {
    case BsonType::kMinKey: return kRankMinKey;
    case BsonType::kUndefined: return kRankUndefined;
    case BsonType::kEod:
    case BsonType::kNull: return kRankNull;
    case BsonType::kDouble:
    case BsonType::kInt32:
    case BsonType::kInt64:
    case BsonType::kDecimal128: return kRankNumber;
    case BsonType::kString:
    case BsonType::kSymbol: return kRankString;
    case BsonType::kDocument: return kRankObject;
    case BsonType::kArray: return kRankArray;
    case BsonType::kBinary: return kRankBinData;
    case BsonType::kObjectId: return kRankObjectId;
    case BsonType::kBool: return kRankBool;
    case BsonType::kDateTime: return kRankDate;
    case BsonType::kTimestamp: return kRankTimestamp;
    case BsonType::kRegex: return kRankRegex;
    case BsonType::kDbPointer: return kRankDbPointer;
    case BsonType::kCode: return kRankCode;
    case BsonType::kCodeWithScope: return kRankCodeWithScope;
    case BsonType::kMaxKey: return kRankMaxKey;
  }
  return kRankNull;
}

// The rank byte a value's type byte belongs to (0 when not a type byte).
uint8_t RankOfCType(uint8_t ctype) {
  if (ctype >= kNumNaN && ctype <= kNumPosInf) return kRankNumber;
  switch (ctype) {
    case kMinKey: return kRankMinKey;
    case kUndefined: return kRankUndefined;
    case kNull: return kRankNull;
    case kString: return kRankString;
    case kObject: return kRankObject;
    case kArray: return kRankArray;
    case kBinData: return kRankBinData;
    case kObjectId: return kRankObjectId;
    case kFalse:
    case kTrue: return kRankBool;
    case kDate: return kRankDate;
    case kTimestamp: return kRankTimestamp;
    case kRegex: return kRankRegex;
    case kDbPointer: return kRankDbPointer;
    case kCode: return kRankCode;
    case kCodeWithScope: return kRankCodeWithScope;
    case kMaxKey: return kRankMaxKey;
    default: return 0;
  }
}

// ---------------------------------------------------------------------------
// A small arbitrary-precision unsigned integer, for the rare numbers that do
// not fit 128 bits: decimals far from 1, and decoding decimals. Little-endian
// 32-bit limbs without leading zero limbs. Not fast; never on the int/double
// path.
// ---------------------------------------------------------------------------
class BigInt {
 public:
  BigInt() = default;
  explicit BigInt(Uint128 v) {
    while (v != 0) {
      limbs_.push_back(static_cast<uint32_t>(v));
      v >>= 32;
    }
  }

  bool IsZero() const { return limbs_.empty(); }
  int BitLength() const {
    if (limbs_.empty()) return 0;
    return static_cast<int>(32 * (limbs_.size() - 1)) + (32 - std::countl_zero(limbs_.back()));
  }

  void MulSmall(uint32_t m) {
    uint64_t carry = 0;
    for (uint32_t& limb : limbs_) {
      uint64_t t = static_cast<uint64_t>(limb) * m + carry;
      limb = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    if (carry != 0) limbs_.push_back(static_cast<uint32_t>(carry));
  }
  void MulPow10(int k) {
    static constexpr uint32_t kPow10[] = {1,      10,      100,      1000,     10000,
                                          100000, 1000000, 10000000, 100000000};
    for (; k >= 9; k -= 9) MulSmall(1000000000u);
    if (k > 0) MulSmall(kPow10[k]);
  }
  void MulPow5(int k) {
    uint32_t p = 1;
    for (; k > 0; --k) {
      if (p > 0xFFFFFFFFu / 5) {
        MulSmall(p);
        p = 1;
      }
      p *= 5;
    }
    if (p != 1) MulSmall(p);
  }

  void ShiftLeft(int bits) {
    if (limbs_.empty() || bits == 0) return;
    const int words = bits / 32, rem = bits % 32;
    if (rem != 0) {
      uint32_t carry = 0;
      for (uint32_t& limb : limbs_) {
        uint32_t next = limb >> (32 - rem);
        limb = (limb << rem) | carry;
        carry = next;
      }
      if (carry != 0) limbs_.push_back(carry);
    }
    limbs_.insert(limbs_.begin(), static_cast<size_t>(words), 0u);
  }
  void ShiftRight1() {
    for (size_t i = 0; i < limbs_.size(); ++i) {
      uint32_t hi = i + 1 < limbs_.size() ? limbs_[i + 1] : 0;
      limbs_[i] = (limbs_[i] >> 1) | (hi << 31);
    }
    Trim();
  }

  static int Compare(const BigInt& a, const BigInt& b) {
    if (a.limbs_.size() != b.limbs_.size()) return a.limbs_.size() < b.limbs_.size() ? -1 : 1;
    for (size_t i = a.limbs_.size(); i-- > 0;) {
      if (a.limbs_[i] != b.limbs_[i]) return a.limbs_[i] < b.limbs_[i] ? -1 : 1;
    }
    return 0;
  }
  // Precondition: *this >= b.
  void Subtract(const BigInt& b) {
    int64_t borrow = 0;
    for (size_t i = 0; i < limbs_.size(); ++i) {
      int64_t t = static_cast<int64_t>(limbs_[i]) - borrow -
                  (i < b.limbs_.size() ? static_cast<int64_t>(b.limbs_[i]) : 0);
      borrow = t < 0 ? 1 : 0;
      limbs_[i] = static_cast<uint32_t>(t + (borrow << 32));
    }
    Trim();
  }
  // Divides in place; returns the remainder.
  uint32_t DivSmall(uint32_t d) {
    uint64_t rem = 0;
    for (size_t i = limbs_.size(); i-- > 0;) {
      uint64_t cur = (rem << 32) | limbs_[i];
      limbs_[i] = static_cast<uint32_t>(cur / d);
      rem = cur % d;
    }
    Trim();
    return static_cast<uint32_t>(rem);
  }
  // Decimal digits, most significant first ("0" for zero).
  std::string ToDecimal() const {
    if (IsZero()) return "0";
    BigInt t = *this;
    std::string reversed;
    while (!t.IsZero()) {
      uint32_t chunk = t.DivSmall(1000000000u);
      for (int i = 0; i < 9; ++i) {
        reversed.push_back(static_cast<char>('0' + chunk % 10));
        chunk /= 10;
      }
    }
    while (reversed.size() > 1 && reversed.back() == '0') reversed.pop_back();
    return std::string(reversed.rbegin(), reversed.rend());
  }

 private:
  void Trim() {
    while (!limbs_.empty() && limbs_.back() == 0) limbs_.pop_back();
  }
  std::vector<uint32_t> limbs_;
};

// ---------------------------------------------------------------------------
// Numbers. A finite nonzero number is sign * 2^E * 1.f (f the binary digits
// after the leading one, possibly infinitely many for decimals). The key
// holds E, the first 63 bits of f and, when f has more nonzero bits (only
// decimals), a decimal "tail" with the exact value.
// ---------------------------------------------------------------------------

// The binary form of a finite nonzero magnitude: exponent, the 63 bits after
// the leading one left-aligned in a uint64 (bit 0 always clear), and whether
// any nonzero bit follows them.
struct BinaryForm {
  int exponent = 0;
  uint64_t frac = 0;
  bool sticky = false;
};

// The exact decimal value of a decimal whose binary form is sticky: its
// coefficient without trailing zeros, as digits, and adjusted exponent (the
// power of ten of its first digit).
struct DecimalTail {
  char digits[Decimal128::kMaxDigits];
  int num_digits = 0;
  int adjusted_exponent = 0;
};

// Binary form of v > 0 (v < 2^128).
BinaryForm BinaryFormOf128(Uint128 v) {
  const uint64_t hi = static_cast<uint64_t>(v >> 64), lo = static_cast<uint64_t>(v);
  const int top = hi != 0 ? 127 - std::countl_zero(hi) : 63 - std::countl_zero(lo);
  Uint128 w = v << (127 - top);  // leading one at bit 127
  w <<= 1;                        // drop it: the fraction bits, left-aligned
  BinaryForm form;
  form.exponent = top;
  const uint64_t whi = static_cast<uint64_t>(w >> 64);
  form.frac = whi & ~uint64_t{1};
  form.sticky = (whi & 1) != 0 || static_cast<uint64_t>(w) != 0;
  return form;
}

// Binary form of n / d (both nonzero), by long division to a 65-bit quotient.
BinaryForm BinaryFormOfRatio(BigInt n, BigInt d) {
  // Scale so that the quotient lies in [2^63, 2^65): n/d is within
  // (2^(ln-ld-1), 2^(ln-ld+1)).
  const int shift = 64 - (n.BitLength() - d.BitLength());
  if (shift > 0) n.ShiftLeft(shift);
  if (shift < 0) d.ShiftLeft(-shift);
  d.ShiftLeft(64);
  Uint128 quotient = 0;
  for (int bit = 64; bit >= 0; --bit) {
    if (BigInt::Compare(n, d) >= 0) {
      n.Subtract(d);
      quotient |= Uint128{1} << bit;
    }
    d.ShiftRight1();
  }
  BinaryForm form = BinaryFormOf128(quotient);
  form.exponent -= shift;
  form.sticky = form.sticky || !n.IsZero();
  return form;
}

constexpr Uint128 Pow10U128(int k) {
  Uint128 r = 1;
  for (int i = 0; i < k; ++i) r *= 10;
  return r;
}

// Binary form of coefficient * 10^exponent (coefficient nonzero, without
// trailing zeros).
BinaryForm BinaryFormOfDecimal(Uint128 coefficient, int exponent) {
  if (exponent >= 0 && exponent <= 38) {
    const Uint128 scale = Pow10U128(exponent);
    if (coefficient <= ~Uint128{0} / scale) return BinaryFormOf128(coefficient * scale);
  }
  BigInt n(coefficient), d(1);
  if (exponent >= 0) {
    n.MulPow10(exponent);
  } else {
    d.MulPow10(-exponent);
  }
  return BinaryFormOfRatio(std::move(n), std::move(d));
}

// Appends the key of a finite nonzero number. Negative numbers invert every
// byte after the class byte so that larger magnitudes sort first.
void AppendFiniteNumber(bool negative, const BinaryForm& form, const DecimalTail* tail,
                        std::string* out) {
  uint8_t buf[1 + 2 + kMaxGroups + 2 + Decimal128::kMaxDigits / 2];
  size_t n = 0;
  const int e = form.exponent;
  if (e > kSmallExponentMax || e < kSmallExponentMin) {
    const bool high = e > kSmallExponentMax;
    buf[n++] = negative ? (high ? kNumNegLargeHigh : kNumNegLargeLow)
                        : (high ? kNumPosLargeHigh : kNumPosLargeLow);
    const auto biased = static_cast<uint16_t>(e + kLargeExponentBias);
    buf[n++] = static_cast<uint8_t>(biased >> 8);
    buf[n++] = static_cast<uint8_t>(biased);
  } else {
    buf[n++] = negative ? static_cast<uint8_t>(kNumNegSmall + (kSmallExponentMax - e))
                        : static_cast<uint8_t>(kNumPosSmall + (e - kSmallExponentMin));
  }
  uint64_t frac = form.frac;
  if (tail == nullptr) {
    // Groups of 7 bits, low bit "more follows"; the last group has it clear.
    do {
      const auto group = static_cast<uint8_t>(frac >> 57);
      frac <<= 7;
      buf[n++] = static_cast<uint8_t>((group << 1) | (frac != 0 ? 1 : 0));
    } while (frac != 0);
  } else {
    for (int i = 0; i < kMaxGroups; ++i) {
      const auto group = static_cast<uint8_t>(frac >> 57);
      frac <<= 7;
      buf[n++] = static_cast<uint8_t>((group << 1) | 1);
    }
    const auto biased = static_cast<uint16_t>(tail->adjusted_exponent + kTailExponentBias);
    buf[n++] = static_cast<uint8_t>(biased >> 8);
    buf[n++] = static_cast<uint8_t>(biased);
    for (int i = 0; i < tail->num_digits; i += 2) {
      const int hi = tail->digits[i] - '0';
      const int lo = i + 1 < tail->num_digits ? tail->digits[i + 1] - '0' : 0;
      const bool more = i + 2 < tail->num_digits;
      buf[n++] = static_cast<uint8_t>(((hi * 10 + lo) << 1) | (more ? 1 : 0));
    }
  }
  if (negative) {
    for (size_t i = 1; i < n; ++i) buf[i] = static_cast<uint8_t>(~buf[i]);
  }
  out->append(reinterpret_cast<const char*>(buf), n);
}

void AppendInt64Key(int64_t v, std::string* out) {
  if (v == 0) {
    out->push_back(static_cast<char>(kNumZero));
    return;
  }
  const bool negative = v < 0;
  const uint64_t mag = negative ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const int lz = std::countl_zero(mag);
  BinaryForm form;
  form.exponent = 63 - lz;
  form.frac = (mag << lz) << 1;
  AppendFiniteNumber(negative, form, nullptr, out);
}

void AppendDoubleKey(double d, std::string* out) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  const bool negative = (bits >> 63) != 0;
  const int biased_exp = static_cast<int>((bits >> 52) & 0x7FF);
  const uint64_t mantissa = bits & ((uint64_t{1} << 52) - 1);
  if (biased_exp == 0x7FF) {
    out->push_back(static_cast<char>(mantissa != 0 ? kNumNaN : (negative ? kNumNegInf : kNumPosInf)));
    return;
  }
  BinaryForm form;
  if (biased_exp != 0) {
    form.exponent = biased_exp - 1023;
    form.frac = mantissa << 12;
  } else if (mantissa != 0) {  // subnormal: mantissa * 2^-1074
    const int lz = std::countl_zero(mantissa);
    form.exponent = (63 - lz) - 1074;
    form.frac = (mantissa << lz) << 1;
  } else {
    out->push_back(static_cast<char>(kNumZero));
    return;
  }
  AppendFiniteNumber(negative, form, nullptr, out);
}

// Strips trailing decimal zeros of a nonzero coefficient, raising exponent.
void StripDecimalZeros(Uint128* coefficient, int* exponent, int* stripped) {
  *stripped = 0;
  while (*coefficient % 10 == 0) {
    *coefficient /= 10;
    ++*exponent;
    ++*stripped;
  }
}

int DecimalDigits(Uint128 v, char* digits) {
  char rev[40];
  int n = 0;
  do {
    rev[n++] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  } while (v != 0);
  for (int i = 0; i < n; ++i) digits[i] = rev[n - 1 - i];
  return n;
}

// The canonical Decimal128 of a decimal's value class, used to decide
// whether its bits must be kept verbatim in the type bits.
bool IsCanonicalDecimal(const Decimal128& d) {
  if (d.IsNaN()) return d == Decimal128::NaN();
  if (d.IsInfinite()) return d == Decimal128::Infinity(d.IsNegative());
  return Decimal128::FromParts(d.ToParts()) == d;
}

// Appends the key of a decimal; reports how many trailing zeros its
// coefficient had (for the type bits).
void AppendDecimalKey(const Decimal128& d, std::string* out, int* trailing_zeros) {
  *trailing_zeros = 0;
  if (d.IsNaN()) {
    out->push_back(static_cast<char>(kNumNaN));
    return;
  }
  if (d.IsInfinite()) {
    out->push_back(static_cast<char>(d.IsNegative() ? kNumNegInf : kNumPosInf));
    return;
  }
  if (d.IsZero()) {
    out->push_back(static_cast<char>(kNumZero));
    return;
  }
  const Decimal128::Parts parts = d.ToParts();
  Uint128 coefficient = (static_cast<Uint128>(parts.coefficient_high) << 64) | parts.coefficient_low;
  int exponent = parts.exponent;
  StripDecimalZeros(&coefficient, &exponent, trailing_zeros);
  const BinaryForm form = BinaryFormOfDecimal(coefficient, exponent);
  if (!form.sticky) {
    AppendFiniteNumber(parts.negative, form, nullptr, out);
    return;
  }
  DecimalTail tail;
  tail.num_digits = DecimalDigits(coefficient, tail.digits);
  tail.adjusted_exponent = exponent + tail.num_digits - 1;
  AppendFiniteNumber(parts.negative, form, &tail, out);
}

// An order-preserving length: one byte below 0xFF, else 0xFF and 4 bytes.
void AppendLength(uint32_t length, std::string* out) {
  if (length < 0xFF) {
    out->push_back(static_cast<char>(length));
  } else {
    out->push_back(static_cast<char>(0xFF));
    AppendBE32(out, length);
  }
}

// A string that may hold any byte: 0x00 -> 01 01, 0x01 -> 01 02, then 0x00.
void AppendEscapedString(std::string_view s, std::string* out) {
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<uint8_t>(s[i]);
    if (c > 0x01) continue;
    out->append(s.data() + start, i - start);
    out->push_back(static_cast<char>(0x01));
    out->push_back(static_cast<char>(c + 1));
    start = i + 1;
  }
  out->append(s.data() + start, s.size() - start);
  out->push_back(static_cast<char>(kEnd));
}

// A C string (no NUL inside: field names, regex pattern and options).
void AppendCString(std::string_view s, std::string* out) {
  out->append(s.data(), s.size());
  out->push_back(static_cast<char>(kEnd));
}

}  // namespace

// ---------------------------------------------------------------------------
// Encoding.
// ---------------------------------------------------------------------------

// Walks a value depth-first, writing key bytes and type bits in one order
// (the decoder walks the same way).
class Encoder {
 public:
  explicit Encoder(Builder* builder) : b_(builder), out_(&builder->bytes_) {}

  void Value(const Element& e) {
    switch (e.type()) {
      case BsonType::kEod:
      case BsonType::kNull:
        Put(kNull);
        return;
      case BsonType::kMinKey:
        Put(kMinKey);
        return;
      case BsonType::kMaxKey:
        Put(kMaxKey);
        return;
      case BsonType::kUndefined:
        Put(kUndefined);
        return;
      case BsonType::kInt32:
        AppendInt64Key(e.Int32(), out_);
        b_->WriteBits(kTbInt32, 2);
        return;
      case BsonType::kInt64:
        AppendInt64Key(e.Int64(), out_);
        b_->WriteBits(kTbInt64, 2);
        return;
      case BsonType::kDouble:
        Double(e.Double());
        return;
      case BsonType::kDecimal128:
        Decimal(e.Decimal());
        return;
      case BsonType::kString:
      case BsonType::kSymbol:
        Put(kString);
        AppendEscapedString(e.String(), out_);
        b_->WriteBits(e.type() == BsonType::kSymbol ? 1 : 0, 1);
        return;
      case BsonType::kCode:
        Put(kCode);
        AppendEscapedString(e.String(), out_);
        return;
      case BsonType::kDocument:
        Put(kObject);
        ObjectBody(e.Document());
        return;
      case BsonType::kArray:
        Put(kArray);
        for (const Element& item : e.Array()) Value(item);
        Put(kEnd);
        return;
      case BsonType::kBinary: {
        // Raw layout: int32 length, subtype, bytes (for the old subtype 2
        // the bytes start with the repeated length): MongoDB's order is by
        // that length, then subtype, then the bytes.
        const uint8_t* v = e.value_data();
        const auto length = static_cast<uint32_t>(LoadLE<int32_t>(v));
        Put(kBinData);
        AppendLength(length, out_);
        out_->append(reinterpret_cast<const char*>(v + 4), 1 + static_cast<size_t>(length));
        return;
      }
      case BsonType::kObjectId:
        Put(kObjectId);
        out_->append(reinterpret_cast<const char*>(e.value_data()), ObjectId::kSize);
        return;
      case BsonType::kBool:
        Put(e.Bool() ? kTrue : kFalse);
        return;
      case BsonType::kDateTime:
        Put(kDate);
        AppendBE64(out_, static_cast<uint64_t>(e.DateTime()) ^ (uint64_t{1} << 63));
        return;
      case BsonType::kTimestamp:
        Put(kTimestamp);
        AppendBE64(out_, e.Timestamp().AsUint64());
        return;
      case BsonType::kRegex: {
        const RegexView r = e.Regex();
        Put(kRegex);
        AppendCString(r.pattern, out_);
        AppendCString(r.options, out_);
        return;
      }
      case BsonType::kDbPointer: {
        // MongoDB: by value size (so by namespace length), then namespace
        // bytes, then ObjectId.
        const DbPointerView p = e.DbPointer();
        Put(kDbPointer);
        AppendLength(static_cast<uint32_t>(p.ns.size()), out_);
        out_->append(p.ns.data(), p.ns.size());
        out_->append(reinterpret_cast<const char*>(p.id.data()), ObjectId::kSize);
        return;
      }
      case BsonType::kCodeWithScope:
        Put(kCodeWithScope);
        AppendEscapedString(e.CodeWithScopeCode(), out_);
        ObjectBody(e.CodeWithScopeScope());
        return;
    }
    ROCKDOC_DCHECK(false);  // validated BSON has no other type byte
    Put(kNull);
  }

 private:
  void Put(uint8_t byte) { out_->push_back(static_cast<char>(byte)); }

  void ObjectBody(DocumentView doc) {
    for (const Element& field : doc) {
      Put(RankByte(field.type()));
      AppendCString(field.key(), out_);
      Value(field);
    }
    Put(kEnd);
  }

  void Double(double d) {
    AppendDoubleKey(d, out_);
    b_->WriteBits(kTbDouble, 2);
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    const bool is_zero = (bits << 1) == 0;
    if (is_zero || std::isnan(d)) {
      // +0.0 and the canonical NaN are implied; anything else is kept.
      const bool canonical = bits == 0 || bits == kCanonicalDoubleNaN;
      b_->WriteBits(canonical ? 0 : 1, 1);
      if (!canonical) b_->WriteBits(bits, 64);
    }
  }

  void Decimal(const Decimal128& d) {
    int trailing_zeros = 0;
    AppendDecimalKey(d, out_, &trailing_zeros);
    b_->WriteBits(kTbDecimal, 2);
    if (!IsCanonicalDecimal(d)) {
      b_->WriteBits(1, 1);
      b_->WriteBits(d.high(), 64);
      b_->WriteBits(d.low(), 64);
      return;
    }
    b_->WriteBits(0, 1);
    if (d.IsNaN() || d.IsInfinite()) return;
    if (d.IsZero()) {
      b_->WriteBits(d.IsNegative() ? 1 : 0, 1);
      b_->WriteBits(static_cast<uint64_t>(d.ToParts().exponent + Decimal128::kExponentBias), 14);
      return;
    }
    b_->WriteBits(static_cast<uint64_t>(trailing_zeros), 6);
  }

  Builder* b_;
  std::string* out_;
};

Builder::Builder(uint32_t descending_bits) : descending_bits_(descending_bits) {}

void Builder::WriteBits(uint64_t value, int count) {
  // Zero bits are implied past the end of type_bits_, so only 1 bits grow
  // it: the string never ends in a zero byte and defaults cost nothing.
  if (value == 0) {
    type_bit_count_ += static_cast<uint64_t>(count);
    return;
  }
  for (int i = count - 1; i >= 0; --i) {
    if ((value >> i) & 1) {
      const size_t byte = type_bit_count_ / 8;
      if (byte >= type_bits_.size()) type_bits_.resize(byte + 1, '\0');
      type_bits_[byte] = static_cast<char>(type_bits_[byte] | (0x80 >> (type_bit_count_ % 8)));
    }
    ++type_bit_count_;
  }
}

void Builder::Append(const Element& value) {
  const size_t start = bytes_.size();
  Encoder(this).Value(value);
  if (num_fields_ < kMaxDirectionFields && ((descending_bits_ >> num_fields_) & 1) != 0) {
    for (size_t i = start; i < bytes_.size(); ++i) bytes_[i] = static_cast<char>(~bytes_[i]);
  }
  ++num_fields_;
}

void Builder::AppendMinKey() {
  const bool descending =
      num_fields_ < kMaxDirectionFields && ((descending_bits_ >> num_fields_) & 1) != 0;
  bytes_.push_back(static_cast<char>(descending ? ~kMinKey : kMinKey));
  ++num_fields_;
}

void Builder::AppendMaxKey() {
  const bool descending =
      num_fields_ < kMaxDirectionFields && ((descending_bits_ >> num_fields_) & 1) != 0;
  bytes_.push_back(static_cast<char>(descending ? ~kMaxKey : kMaxKey));
  ++num_fields_;
}

void Builder::Reset() {
  num_fields_ = 0;
  bytes_.clear();
  type_bits_.clear();
  type_bit_count_ = 0;
}

std::string EncodeValue(const Element& value) {
  Builder b;
  b.Append(value);
  return b.bytes();
}

std::string PrefixSuccessor(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty() && static_cast<uint8_t>(s.back()) == 0xFF) s.pop_back();
  if (!s.empty()) s.back() = static_cast<char>(static_cast<uint8_t>(s.back()) + 1);
  return s;
}

// ---------------------------------------------------------------------------
// Decoding. Every read is bounds-checked; every number is re-encoded and
// compared with the bytes it came from, so only canonical encodings decode.
// ---------------------------------------------------------------------------
namespace {

Status Corrupt(std::string_view what, size_t offset) {
  return Status(ErrorCode::kDataCorruptionDetected,
                "keystring: " + std::string(what) + " at byte " + std::to_string(offset));
}

class Decoder {
 public:
  Decoder(std::string_view key, std::string_view type_bits)
      : key_(reinterpret_cast<const uint8_t*>(key.data())),
        size_(key.size()),
        type_bits_(type_bits) {}

  size_t pos() const { return pos_; }
  void set_invert(bool invert) { invert_ = invert ? 0xFF : 0x00; }

  Status Value(std::string_view name, BsonBuilder* out, int depth) {
    uint8_t ctype;
    if (!Read(&ctype)) return Corrupt("truncated value", pos_);
    return ValueOfType(ctype, name, out, depth);
  }

 private:
  bool Read(uint8_t* byte) {
    if (pos_ >= size_) return false;
    *byte = key_[pos_++] ^ invert_;
    return true;
  }
  bool ReadN(size_t n, std::string* out) {
    if (size_ - pos_ < n) return false;
    out->resize(n);
    for (size_t i = 0; i < n; ++i) (*out)[i] = static_cast<char>(key_[pos_ + i] ^ invert_);
    pos_ += n;
    return true;
  }
  uint64_t ReadBits(int count) {
    uint64_t v = 0;
    for (int i = 0; i < count; ++i) {
      const uint64_t byte = bit_pos_ / 8;
      int bit = 0;
      if (byte < type_bits_.size()) {
        bit = (static_cast<uint8_t>(type_bits_[byte]) >> (7 - bit_pos_ % 8)) & 1;
      }
      v = (v << 1) | static_cast<uint64_t>(bit);
      ++bit_pos_;
    }
    return v;
  }

  bool ReadLength(uint32_t* length) {
    uint8_t b;
    if (!Read(&b)) return false;
    if (b != 0xFF) {
      *length = b;
      return true;
    }
    std::string be;
    if (!ReadN(4, &be)) return false;
    *length = LoadBE32(reinterpret_cast<const uint8_t*>(be.data()));
    return *length >= 0xFF && *length <= static_cast<uint32_t>(kMaxBsonObjectSize);
  }
  bool ReadEscapedString(std::string* s) {
    s->clear();
    uint8_t b;
    while (true) {
      if (!Read(&b)) return false;
      if (b == kEnd) return true;
      if (b == 0x01) {
        if (!Read(&b) || (b != 0x01 && b != 0x02)) return false;
        s->push_back(static_cast<char>(b - 1));
      } else {
        s->push_back(static_cast<char>(b));
      }
    }
  }
  bool ReadCString(std::string* s) {
    s->clear();
    uint8_t b;
    while (true) {
      if (!Read(&b)) return false;
      if (b == kEnd) return true;
      s->push_back(static_cast<char>(b));
    }
  }

  Status ValueOfType(uint8_t ctype, std::string_view name, BsonBuilder* out, int depth) {
    const size_t at = pos_ - 1;
    if (ctype >= kNumNaN && ctype <= kNumPosInf) return Number(ctype, at, name, out);
    switch (ctype) {
      case kMinKey:
        out->AppendMinKey(name);
        return Status::OK();
      case kMaxKey:
        out->AppendMaxKey(name);
        return Status::OK();
      case kUndefined:
        out->AppendUndefined(name);
        return Status::OK();
      case kNull:
        out->AppendNull(name);
        return Status::OK();
      case kFalse:
      case kTrue:
        out->AppendBool(name, ctype == kTrue);
        return Status::OK();
      case kString: {
        std::string s;
        if (!ReadEscapedString(&s)) return Corrupt("bad string", at);
        if (ReadBits(1) != 0) {
          out->AppendSymbol(name, s);
        } else {
          out->AppendString(name, s);
        }
        return Status::OK();
      }
      case kCode: {
        std::string s;
        if (!ReadEscapedString(&s)) return Corrupt("bad code string", at);
        out->AppendCode(name, s);
        return Status::OK();
      }
      case kObject: {
        if (depth >= kMaxNestingDepth) return Corrupt("nesting too deep", at);
        out->OpenDocument(name);
        ROCKDOC_RETURN_IF_ERROR(ObjectBody(out, depth + 1));
        out->Close();
        return Status::OK();
      }
      case kArray: {
        if (depth >= kMaxNestingDepth) return Corrupt("nesting too deep", at);
        out->OpenArray(name);
        while (true) {
          uint8_t b;
          if (!Read(&b)) return Corrupt("truncated array", at);
          if (b == kEnd) break;
          ROCKDOC_RETURN_IF_ERROR(ValueOfType(b, "", out, depth + 1));
        }
        out->Close();
        return Status::OK();
      }
      case kBinData: {
        uint32_t length;
        uint8_t subtype;
        std::string data;
        if (!ReadLength(&length) || !Read(&subtype) || !ReadN(length, &data)) {
          return Corrupt("bad binData", at);
        }
        if (subtype == static_cast<uint8_t>(BinarySubtype::kBinaryOld)) {
          // The payload repeats its own length; BsonBuilder writes it back.
          if (length < 4 ||
              LoadLE<int32_t>(reinterpret_cast<const uint8_t*>(data.data())) !=
                  static_cast<int32_t>(length - 4)) {
            return Corrupt("bad binData subtype 2 length", at);
          }
          data.erase(0, 4);
        }
        out->AppendBinary(name, static_cast<BinarySubtype>(subtype), data);
        return Status::OK();
      }
      case kObjectId: {
        std::string bytes;
        if (!ReadN(ObjectId::kSize, &bytes)) return Corrupt("truncated ObjectId", at);
        out->AppendObjectId(name, ObjectId(reinterpret_cast<const uint8_t*>(bytes.data())));
        return Status::OK();
      }
      case kDate:
      case kTimestamp: {
        std::string bytes;
        if (!ReadN(8, &bytes)) return Corrupt("truncated date/timestamp", at);
        const uint64_t v = LoadBE64(reinterpret_cast<const uint8_t*>(bytes.data()));
        if (ctype == kDate) {
          out->AppendDateTime(name, static_cast<int64_t>(v ^ (uint64_t{1} << 63)));
        } else {
          out->AppendTimestamp(name, BsonTimestamp::FromUint64(v));
        }
        return Status::OK();
      }
      case kRegex: {
        std::string pattern, options;
        if (!ReadCString(&pattern) || !ReadCString(&options)) return Corrupt("bad regex", at);
        out->AppendRegex(name, pattern, options);
        return Status::OK();
      }
      case kDbPointer: {
        uint32_t length;
        std::string ns, oid;
        if (!ReadLength(&length) || !ReadN(length, &ns) || !ReadN(ObjectId::kSize, &oid)) {
          return Corrupt("bad dbPointer", at);
        }
        out->AppendDbPointer(name, ns, ObjectId(reinterpret_cast<const uint8_t*>(oid.data())));
        return Status::OK();
      }
      case kCodeWithScope: {
        if (depth >= kMaxNestingDepth) return Corrupt("nesting too deep", at);
        std::string code;
        if (!ReadEscapedString(&code)) return Corrupt("bad codeWithScope code", at);
        BsonBuilder scope;
        Status s = ObjectBody(&scope, depth + 1);
        if (!s.ok()) return s;
        const Document scope_doc = std::move(scope).Build();
        out->AppendCodeWithScope(name, code, scope_doc.view());
        return Status::OK();
      }
      default:
        return Corrupt("unknown type byte " + std::to_string(ctype), at);
    }
  }

  // Elements (rank, name, value) up to kEnd, into the open document `out`.
  Status ObjectBody(BsonBuilder* out, int depth) {
    std::string field_name;
    while (true) {
      const size_t at = pos_;
      uint8_t rank;
      if (!Read(&rank)) return Corrupt("truncated object", at);
      if (rank == kEnd) return Status::OK();
      if (!ReadCString(&field_name)) return Corrupt("bad field name", at);
      uint8_t ctype;
      if (!Read(&ctype)) return Corrupt("truncated field value", pos_);
      if (RankOfCType(ctype) != rank) return Corrupt("field rank does not match its value", at);
      ROCKDOC_RETURN_IF_ERROR(ValueOfType(ctype, field_name, out, depth));
    }
  }

  // Parses the number starting with class byte `ctype` at `at`, rebuilds it
  // from the type bits, and checks that it re-encodes to the same bytes.
  Status Number(uint8_t ctype, size_t at, std::string_view name, BsonBuilder* out) {
    bool negative = false;
    bool finite = false;
    int exponent = 0;
    if (ctype >= kNumNegLargeHigh && ctype <= kNumNegLargeLow) {
      negative = true;
      finite = true;
    } else if (ctype >= kNumPosLargeLow && ctype <= kNumPosLargeHigh) {
      finite = true;
    }
    const uint8_t body_invert = negative ? 0xFF : 0x00;
    auto read_body = [&](uint8_t* b) {
      if (!Read(b)) return false;
      *b ^= body_invert;
      return true;
    };
    BinaryForm form;
    bool has_tail = false;
    DecimalTail tail;
    if (finite) {
      const bool large = ctype == kNumNegLargeHigh || ctype == kNumNegLargeLow ||
                         ctype == kNumPosLargeLow || ctype == kNumPosLargeHigh;
      if (large) {
        uint8_t hi, lo;
        if (!read_body(&hi) || !read_body(&lo)) return Corrupt("truncated number", at);
        exponent = ((hi << 8) | lo) - kLargeExponentBias;
      } else if (negative) {
        exponent = kSmallExponentMax - (ctype - kNumNegSmall);
      } else {
        exponent = (ctype - kNumPosSmall) + kSmallExponentMin;
      }
      form.exponent = exponent;
      bool more = true;
      for (int i = 0; i < kMaxGroups && more; ++i) {
        uint8_t b;
        if (!read_body(&b)) return Corrupt("truncated number", at);
        form.frac |= static_cast<uint64_t>(b >> 1) << (57 - 7 * i);
        more = (b & 1) != 0;
      }
      if (more) {
        has_tail = true;
        uint8_t hi, lo;
        if (!read_body(&hi) || !read_body(&lo)) return Corrupt("truncated decimal tail", at);
        tail.adjusted_exponent = ((hi << 8) | lo) - kTailExponentBias;
        bool more_digits = true;
        while (more_digits) {
          uint8_t b;
          if (!read_body(&b)) return Corrupt("truncated decimal tail", at);
          const int pair = b >> 1;
          more_digits = (b & 1) != 0;
          if (pair > 99 || tail.num_digits + 2 > Decimal128::kMaxDigits) {
            return Corrupt("bad decimal tail digits", at);
          }
          tail.digits[tail.num_digits++] = static_cast<char>('0' + pair / 10);
          tail.digits[tail.num_digits++] = static_cast<char>('0' + pair % 10);
        }
        while (tail.num_digits > 1 && tail.digits[tail.num_digits - 1] == '0') --tail.num_digits;
      }
    }

    std::string reencoded;
    const uint64_t flavour = ReadBits(2);
    switch (flavour) {
      case kTbInt32:
      case kTbInt64: {
        int64_t v = 0;
        if (finite) {
          if (has_tail || exponent < 0 || exponent > 63) return Corrupt("not an integer", at);
          const uint64_t m = (uint64_t{1} << 63) | (form.frac >> 1);
          const int shift = 63 - exponent;
          if (shift > 0 && (m & ((uint64_t{1} << shift) - 1)) != 0) {
            return Corrupt("not an integer", at);
          }
          const uint64_t mag = m >> shift;
          if (negative ? mag > (uint64_t{1} << 63) : mag > uint64_t{INT64_MAX}) {
            return Corrupt("integer out of range", at);
          }
          v = negative ? static_cast<int64_t>(uint64_t{0} - mag) : static_cast<int64_t>(mag);
        } else if (ctype != kNumZero) {
          return Corrupt("integer flavour on a non-finite number", at);
        }
        if (flavour == kTbInt32) {
          if (v < INT32_MIN || v > INT32_MAX) return Corrupt("int32 out of range", at);
          out->AppendInt32(name, static_cast<int32_t>(v));
        } else {
          out->AppendInt64(name, v);
        }
        AppendInt64Key(v, &reencoded);
        break;
      }
      case kTbDouble: {
        double d;
        if (ctype == kNumZero || ctype == kNumNaN) {
          const uint64_t implied = ctype == kNumZero ? 0 : kCanonicalDoubleNaN;
          uint64_t bits = implied;
          if (ReadBits(1) != 0) {
            // Explicit bits only for what the implied form cannot rebuild.
            bits = ReadBits(64);
            if (bits == implied) return Corrupt("non-canonical type bits", at);
          }
          std::memcpy(&d, &bits, sizeof(d));
        } else if (ctype == kNumNegInf || ctype == kNumPosInf) {
          d = ctype == kNumNegInf ? -std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::infinity();
        } else {
          if (has_tail || exponent < -1100 || exponent > 1100) {
            return Corrupt("not a double", at);
          }
          // 1.frac as a 64-bit integer times 2^(E-63); inexact results are
          // caught by the re-encoding check below.
          const uint64_t m = (uint64_t{1} << 63) | (form.frac >> 1);
          d = std::ldexp(static_cast<double>(m), exponent - 63);
          if (negative) d = -d;
        }
        out->AppendDouble(name, d);
        AppendDoubleKey(d, &reencoded);
        break;
      }
      case kTbDecimal: {
        Decimal128 d;
        ROCKDOC_RETURN_IF_ERROR(
            DecodeDecimal(ctype, negative, form, has_tail ? &tail : nullptr, at, &d));
        out->AppendDecimal128(name, d);
        int unused;
        AppendDecimalKey(d, &reencoded, &unused);
        break;
      }
    }
    // Only the canonical encoding of the rebuilt value is accepted.
    const size_t length = pos_ - at;
    if (reencoded.size() != length) return Corrupt("non-canonical number", at);
    for (size_t i = 0; i < length; ++i) {
      if (static_cast<uint8_t>(reencoded[i]) != (key_[at + i] ^ invert_)) {
        return Corrupt("non-canonical number", at);
      }
    }
    return Status::OK();
  }

  Status DecodeDecimal(uint8_t ctype, bool negative, const BinaryForm& form,
                       const DecimalTail* tail, size_t at, Decimal128* d) {
    if (ReadBits(1) != 0) {
      const uint64_t high = ReadBits(64);
      const uint64_t low = ReadBits(64);
      *d = Decimal128(high, low);
      // Explicit bits only for what the short forms cannot rebuild.
      if (IsCanonicalDecimal(*d)) return Corrupt("non-canonical type bits", at);
      return Status::OK();
    }
    switch (ctype) {
      case kNumNaN:
        *d = Decimal128::NaN();
        return Status::OK();
      case kNumNegInf:
      case kNumPosInf:
        *d = Decimal128::Infinity(ctype == kNumNegInf);
        return Status::OK();
      case kNumZero: {
        Decimal128::Parts parts;
        parts.negative = ReadBits(1) != 0;
        parts.exponent = static_cast<int>(ReadBits(14)) - Decimal128::kExponentBias;
        if (parts.exponent > Decimal128::kMaxExponent) return Corrupt("bad decimal zero", at);
        *d = Decimal128::FromParts(parts);
        return Status::OK();
      }
      default:
        break;
    }
    // The value without trailing zeros: digits and the exponent of the last.
    std::string digits;
    int exponent;
    if (tail != nullptr) {
      digits.assign(tail->digits, static_cast<size_t>(tail->num_digits));
      exponent = tail->adjusted_exponent - (tail->num_digits - 1);
    } else {
      // Exactly m * 2^e2 with m odd: an integer when e2 >= 0, else
      // m * 5^-e2 / 10^-e2. A decimal of at most 34 digits that has no
      // tail has -49 <= e2 <= 203 (README); the bound keeps corrupt input
      // from costing big-number work.
      const uint64_t full = (uint64_t{1} << 63) | (form.frac >> 1);
      const int tz = std::countr_zero(full);
      const int e2 = form.exponent - 63 + tz;
      if (e2 < -64 || e2 > 256) return Corrupt("not a decimal", at);
      BigInt n(full >> tz);
      if (e2 >= 0) {
        n.ShiftLeft(e2);
        exponent = 0;
      } else {
        n.MulPow5(-e2);
        exponent = e2;
      }
      digits = n.ToDecimal();
      while (digits.size() > 1 && digits.back() == '0') {
        digits.pop_back();
        ++exponent;
      }
    }
    const int trailing_zeros = static_cast<int>(ReadBits(6));
    if (digits.size() + static_cast<size_t>(trailing_zeros) >
        static_cast<size_t>(Decimal128::kMaxDigits)) {
      return Corrupt("decimal has too many digits", at);
    }
    exponent -= trailing_zeros;
    if (exponent < Decimal128::kMinExponent || exponent > Decimal128::kMaxExponent) {
      return Corrupt("decimal exponent out of range", at);
    }
    Uint128 coefficient = 0;
    for (char c : digits) coefficient = coefficient * 10 + static_cast<unsigned>(c - '0');
    for (int i = 0; i < trailing_zeros; ++i) coefficient *= 10;
    Decimal128::Parts parts;
    parts.negative = negative;
    parts.coefficient_high = static_cast<uint64_t>(coefficient >> 64);
    parts.coefficient_low = static_cast<uint64_t>(coefficient);
    parts.exponent = exponent;
    *d = Decimal128::FromParts(parts);
    return Status::OK();
  }

  const uint8_t* key_;
  size_t size_;
  size_t pos_ = 0;
  uint8_t invert_ = 0;
  std::string_view type_bits_;
  uint64_t bit_pos_ = 0;
};

}  // namespace

Status Decode(std::string_view key, std::string_view type_bits, uint32_t descending_bits,
              const std::vector<std::string_view>& field_names, BsonBuilder* out,
              size_t* consumed) {
  const int start_depth = out->depth();
  Decoder decoder(key, type_bits);
  for (size_t i = 0; i < field_names.size(); ++i) {
    decoder.set_invert(i < kMaxDirectionFields && ((descending_bits >> i) & 1) != 0);
    Status s = decoder.Value(field_names[i], out, 0);
    if (!s.ok()) {
      while (out->depth() > start_depth) out->Close();
      return s;
    }
  }
  if (consumed != nullptr) *consumed = decoder.pos();
  return Status::OK();
}

}  // namespace rockdoc::keystring

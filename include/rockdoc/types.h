// rockdoc/types.h: the value types of BSON that are more than a C++ scalar.
//
// BsonType numbers are the BSON specification's type bytes: they are an
// on-disk format, do not change them. ObjectId, Decimal128 and BsonTimestamp
// are small values, freely copied; all functions here are thread-safe.
#ifndef ROCKDOC_TYPES_H_
#define ROCKDOC_TYPES_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "rockdoc/export.h"
#include "rockdoc/status.h"

namespace rockdoc {

// The 16 MiB limit on one document, as MongoDB enforces it.
inline constexpr int32_t kMaxBsonObjectSize = 16 * 1024 * 1024;  // 16777216
// MongoDB's BSONObjMaxInternalSize, 16 MiB + 16 KiB (16793600): the largest
// command, and the largest document a query or aggregation returns (its
// results are not stored, and may carry a little more than a document).
inline constexpr int32_t kMaxBsonObjectInternalSize = kMaxBsonObjectSize + 16 * 1024;
// The deepest nesting of documents and arrays a stored document may have.
inline constexpr int kMaxNestingDepth = 100;

// BSON type bytes (bsonspec.org). On-disk values: do not change.
enum class BsonType : uint8_t {
  kEod = 0x00,  // end of document; also "missing" for a lookup that found nothing
  kDouble = 0x01,
  kString = 0x02,
  kDocument = 0x03,
  kArray = 0x04,
  kBinary = 0x05,
  kUndefined = 0x06,  // deprecated
  kObjectId = 0x07,
  kBool = 0x08,
  kDateTime = 0x09,
  kNull = 0x0A,
  kRegex = 0x0B,
  kDbPointer = 0x0C,  // deprecated
  kCode = 0x0D,
  kSymbol = 0x0E,         // deprecated
  kCodeWithScope = 0x0F,  // deprecated
  kInt32 = 0x10,
  kTimestamp = 0x11,
  kInt64 = 0x12,
  kDecimal128 = 0x13,
  kMinKey = 0xFF,
  kMaxKey = 0x7F,
};

// True for the type bytes the BSON spec defines.
ROCKDOC_EXPORT bool IsValidBsonType(uint8_t type_byte);

// MongoDB's alias for a type, as `$type` accepts it: "double", "string",
// "object", "array", "binData", "undefined", "objectId", "bool", "date",
// "null", "regex", "dbPointer", "javascript", "symbol",
// "javascriptWithScope", "int", "timestamp", "long", "decimal", "minKey",
// "maxKey"; "eoo" for kEod.
ROCKDOC_EXPORT std::string_view BsonTypeAlias(BsonType type);

// Rank of a type in MongoDB's cross-type sort order: MinKey < Undefined <
// Null < numbers < string/symbol < object < array < binData < objectId <
// bool < date < timestamp < regex < dbPointer < code < codeWithScope <
// MaxKey. All numeric types share one rank, as do string and symbol.
ROCKDOC_EXPORT int CanonicalTypeRank(BsonType type);

// Binary subtypes. On-disk values: do not change.
enum class BinarySubtype : uint8_t {
  kGeneric = 0x00,
  kFunction = 0x01,
  kBinaryOld = 0x02,
  kUuidOld = 0x03,
  kUuid = 0x04,
  kMd5 = 0x05,
  kEncrypted = 0x06,
  kColumn = 0x07,
  kSensitive = 0x08,
  kUserDefined = 0x80,
};

// A 12-byte ObjectId: 4-byte big-endian seconds since the epoch, 5-byte
// per-process random value, 3-byte big-endian counter.
class ROCKDOC_EXPORT ObjectId {
 public:
  static constexpr size_t kSize = 12;

  // The all-zero ObjectId.
  ObjectId() : bytes_{} {}
  explicit ObjectId(const uint8_t* bytes) { std::memcpy(bytes_.data(), bytes, kSize); }

  // A new ObjectId for the current time. Thread-safe; ids from one process
  // are unique (the counter starts at a random value and increments).
  static ObjectId Generate();
  // A new ObjectId with the given timestamp (seconds since the epoch).
  static ObjectId GenerateAt(uint32_t seconds);
  // Parses exactly 24 hex digits (either case). FailedToParse otherwise.
  static StatusOr<ObjectId> FromHex(std::string_view hex);

  // 24 lowercase hex digits.
  std::string ToHex() const;
  // Seconds since the epoch stored in the first four bytes.
  uint32_t timestamp() const;
  const std::array<uint8_t, kSize>& bytes() const { return bytes_; }
  const uint8_t* data() const { return bytes_.data(); }

  friend bool operator==(const ObjectId& a, const ObjectId& b) { return a.bytes_ == b.bytes_; }
  friend bool operator!=(const ObjectId& a, const ObjectId& b) { return a.bytes_ != b.bytes_; }
  friend bool operator<(const ObjectId& a, const ObjectId& b) { return a.bytes_ < b.bytes_; }

 private:
  std::array<uint8_t, kSize> bytes_;
};

// BSON Timestamp: an increment `i` and seconds `t`; stored as one
// little-endian uint64 whose high 32 bits are `t`. Ordered by (t, i).
struct ROCKDOC_EXPORT BsonTimestamp {
  uint32_t t = 0;
  uint32_t i = 0;
  uint64_t AsUint64() const { return (static_cast<uint64_t>(t) << 32) | i; }
  static BsonTimestamp FromUint64(uint64_t v) {
    return BsonTimestamp{static_cast<uint32_t>(v >> 32), static_cast<uint32_t>(v)};
  }
  friend bool operator==(const BsonTimestamp& a, const BsonTimestamp& b) {
    return a.t == b.t && a.i == b.i;
  }
};

// IEEE 754-2008 decimal128 in the binary integer decimal (BID) encoding, as
// BSON stores it: two little-endian uint64 halves, low first on disk.
//
// A finite value is (-1)^negative * coefficient * 10^exponent with a
// coefficient below 10^34 and an exponent in [-6176, 6111].
class ROCKDOC_EXPORT Decimal128 {
 public:
  static constexpr int kMaxExponent = 6111;
  static constexpr int kMinExponent = -6176;
  static constexpr int kExponentBias = 6176;
  static constexpr int kMaxDigits = 34;

  // Zero (0E-6176 has all bits zero; this is the "0" that MongoDB writes,
  // coefficient 0 exponent 0).
  Decimal128();
  Decimal128(uint64_t high, uint64_t low) : high_(high), low_(low) {}

  // Parses the spec's decimal string grammar ("1.5E+3", "-0.0", "Infinity",
  // "-inf", "NaN", ...). A value that cannot be represented without rounding
  // away a non-zero digit, or with an exponent out of range after clamping,
  // is FailedToParse, as the BSON corpus requires.
  static StatusOr<Decimal128> FromString(std::string_view text);
  // Exact.
  static Decimal128 FromInt64(int64_t value);
  // The double's shortest round-trip decimal digits (at most 17), as
  // MongoDB's Decimal128(double) with 17-digit precision does: inexact in general.
  static Decimal128 FromDouble(double value);
  static Decimal128 NaN();
  static Decimal128 Infinity(bool negative);

  // The spec's to-string algorithm (scientific when the exponent is large or
  // small, plain otherwise): "1.5E+3", "0.001", "-0", "NaN", "Infinity".
  std::string ToString() const;
  // Nearest double (correctly rounded).
  double ToDouble() const;

  uint64_t high() const { return high_; }
  uint64_t low() const { return low_; }

  bool IsNaN() const;
  bool IsInfinite() const;
  bool IsFinite() const { return !IsNaN() && !IsInfinite(); }
  bool IsNegative() const { return (high_ >> 63) != 0; }
  bool IsZero() const;  // finite with coefficient 0

  // For finite values: coefficient as two 64-bit halves (coefficient =
  // hi * 2^64 + lo, hi < 2^49) and the unbiased exponent.
  struct Parts {
    bool negative = false;
    uint64_t coefficient_high = 0;
    uint64_t coefficient_low = 0;
    int exponent = 0;
  };
  Parts ToParts() const;
  // Inverse of ToParts; the coefficient must be below 10^34 and the
  // exponent in range (programmer error otherwise).
  static Decimal128 FromParts(const Parts& parts);

  // Bitwise equality (same representation), not numeric equality: use
  // CompareNumbers for that.
  friend bool operator==(const Decimal128& a, const Decimal128& b) {
    return a.high_ == b.high_ && a.low_ == b.low_;
  }
  friend bool operator!=(const Decimal128& a, const Decimal128& b) { return !(a == b); }

 private:
  uint64_t high_;
  uint64_t low_;
};

}  // namespace rockdoc

#endif  // ROCKDOC_TYPES_H_

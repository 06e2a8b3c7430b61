// BsonType tables and ObjectId.
#include <atomic>
#include <chrono>
#include <random>

#include "common/endian.h"
#include "rockdoc/types.h"

namespace rockdoc {

bool IsValidBsonType(uint8_t b) {
  return (b >= 0x01 && b <= 0x13) || b == 0xFF || b == 0x7F;
}

std::string_view BsonTypeAlias(BsonType type) {
  switch (type) {
    case BsonType::kEod: return "eoo";
    case BsonType::kDouble: return "double";
    case BsonType::kString: return "string";
    case BsonType::kDocument: return "object";
    case BsonType::kArray: return "array";
    case BsonType::kBinary: return "binData";
    case BsonType::kUndefined: return "undefined";
    case BsonType::kObjectId: return "objectId";
    case BsonType::kBool: return "bool";
    case BsonType::kDateTime: return "date";
    case BsonType::kNull: return "null";
    case BsonType::kRegex: return "regex";
    case BsonType::kDbPointer: return "dbPointer";
    case BsonType::kCode: return "javascript";
    case BsonType::kSymbol: return "symbol";
    case BsonType::kCodeWithScope: return "javascriptWithScope";
    case BsonType::kInt32: return "int";
    case BsonType::kTimestamp: return "timestamp";
    case BsonType::kInt64: return "long";
    case BsonType::kDecimal128: return "decimal";
    case BsonType::kMinKey: return "minKey";
    case BsonType::kMaxKey: return "maxKey";
  }
  return "unknown";
}

// The ranks follow MongoDB's canonicalizeBSONType so that the gaps match
// what readers of MongoDB's documentation expect.
int CanonicalTypeRank(BsonType type) {
  switch (type) {
    case BsonType::kMinKey: return -1;
    case BsonType::kEod:
    case BsonType::kUndefined: return 0;
    case BsonType::kNull: return 5;
    case BsonType::kDouble:
    case BsonType::kInt32:
    case BsonType::kInt64:
    case BsonType::kDecimal128: return 10;
    case BsonType::kString:
    case BsonType::kSymbol: return 15;
    case BsonType::kDocument: return 20;
    case BsonType::kArray: return 25;
    case BsonType::kBinary: return 30;
    case BsonType::kObjectId: return 35;
    case BsonType::kBool: return 40;
    case BsonType::kDateTime: return 45;
    case BsonType::kTimestamp: return 47;
    case BsonType::kRegex: return 50;
    case BsonType::kDbPointer: return 55;
    case BsonType::kCode: return 60;
    case BsonType::kCodeWithScope: return 65;
    case BsonType::kMaxKey: return 127;
  }
  return 0;
}

namespace {

struct ObjectIdState {
  uint8_t random[5];
  std::atomic<uint32_t> counter;
  ObjectIdState() {
    std::random_device rd;
    std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
    uint64_t r = gen();
    std::memcpy(random, &r, sizeof(random));
    counter.store(static_cast<uint32_t>(gen()) & 0xFFFFFF);
  }
};

ObjectIdState& State() {
  static ObjectIdState state;
  return state;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

ObjectId ObjectId::GenerateAt(uint32_t seconds) {
  ObjectIdState& s = State();
  uint8_t b[kSize];
  uint32_t be = __builtin_bswap32(seconds);
  std::memcpy(b, &be, 4);
  std::memcpy(b + 4, s.random, 5);
  uint32_t c = s.counter.fetch_add(1, std::memory_order_relaxed) & 0xFFFFFF;
  b[9] = static_cast<uint8_t>(c >> 16);
  b[10] = static_cast<uint8_t>(c >> 8);
  b[11] = static_cast<uint8_t>(c);
  return ObjectId(b);
}

ObjectId ObjectId::Generate() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return GenerateAt(
      static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::seconds>(now).count()));
}

StatusOr<ObjectId> ObjectId::FromHex(std::string_view hex) {
  if (hex.size() != 2 * kSize) {
    return FailedToParse("invalid ObjectId: expected 24 hex digits, got " +
                         std::to_string(hex.size()) + " characters");
  }
  uint8_t b[kSize];
  for (size_t i = 0; i < kSize; ++i) {
    int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return FailedToParse("invalid ObjectId: '" + std::string(hex) + "' is not hexadecimal");
    }
    b[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return ObjectId(b);
}

std::string ObjectId::ToHex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * kSize, '0');
  for (size_t i = 0; i < kSize; ++i) {
    out[2 * i] = kDigits[bytes_[i] >> 4];
    out[2 * i + 1] = kDigits[bytes_[i] & 0xF];
  }
  return out;
}

uint32_t ObjectId::timestamp() const { return LoadBE32(bytes_.data()); }

}  // namespace rockdoc

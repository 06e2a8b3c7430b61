#include "bson/element_hash.h"

#include <openssl/evp.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "common/endian.h"
#include "common/logging.h"

namespace rockdoc::internal {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// A double as MongoDB's safeNumberLongForHash: NaN is 0, out of range
// clamps, and 2^63 itself is INT64_MIN (the wrap of an old cast that
// MongoDB keeps so that hashes never change).
int64_t DoubleForHash(double d) {
  if (std::isnan(d)) return 0;
  constexpr double kTwo63 = 9223372036854775808.0;
  if (d == kTwo63) return kInt64Min;
  if (d > kTwo63) return kInt64Max;
  if (d <= -kTwo63) return kInt64Min;
  return static_cast<int64_t>(d);  // truncates toward zero
}

// A decimal truncated toward zero, NaN as 0, clamped to int64's range.
int64_t DecimalForHash(const Decimal128& d) {
  if (d.IsNaN()) return 0;
  if (d.IsInfinite()) return d.IsNegative() ? kInt64Min : kInt64Max;
  const Decimal128::Parts p = d.ToParts();
  unsigned __int128 c = (static_cast<unsigned __int128>(p.coefficient_high) << 64) |
                        p.coefficient_low;
  // 2^63, the magnitude past which a value clamps (for negatives, the
  // magnitude of INT64_MIN itself).
  const unsigned __int128 limit = static_cast<unsigned __int128>(1) << 63;
  bool clamped = false;
  if (p.exponent >= 0) {
    for (int i = 0; i < p.exponent && c != 0; ++i) {
      if (c > limit) {
        clamped = true;
        break;
      }
      c *= 10;
    }
  } else {
    for (int i = 0; i < -p.exponent && c != 0; ++i) c /= 10;
  }
  if (clamped || c >= limit) {
    if (p.negative) return kInt64Min;
    return kInt64Max;
  }
  const int64_t magnitude = static_cast<int64_t>(c);
  return p.negative ? -magnitude : magnitude;
}

class Md5 {
 public:
  Md5() : ctx_(EVP_MD_CTX_new()) {
    ROCKDOC_CHECK(ctx_ != nullptr && EVP_DigestInit_ex(ctx_, EVP_md5(), nullptr) == 1);
  }
  ~Md5() { EVP_MD_CTX_free(ctx_); }
  Md5(const Md5&) = delete;
  Md5& operator=(const Md5&) = delete;

  void Add(const void* data, size_t n) {
    if (n > 0) ROCKDOC_CHECK(EVP_DigestUpdate(ctx_, data, n) == 1);
  }
  void AddInt32(int32_t v) {
    uint8_t b[4];
    StoreLE<uint32_t>(b, static_cast<uint32_t>(v));
    Add(b, sizeof(b));
  }
  void AddInt64(int64_t v) {
    uint8_t b[8];
    StoreLE<uint64_t>(b, static_cast<uint64_t>(v));
    Add(b, sizeof(b));
  }
  int64_t Finish() {
    uint8_t digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    ROCKDOC_CHECK(EVP_DigestFinal_ex(ctx_, digest, &n) == 1 && n == 16);
    return static_cast<int64_t>(LoadLE<uint64_t>(digest));
  }

 private:
  EVP_MD_CTX* ctx_;
};

void HashFields(Md5* h, DocumentView doc);

// One value: its rank, then (for an embedded element) its field name, then
// its contents.
void HashValue(Md5* h, const Element& e, bool with_name) {
  const BsonType type = e.ok() ? e.type() : BsonType::kNull;
  h->AddInt32(CanonicalTypeRank(type));
  if (with_name) {
    std::string_view name = e.key();
    h->Add(name.data(), name.size());
    h->Add("", 1);  // the name's NUL
  }
  switch (type) {
    case BsonType::kDouble: h->AddInt64(DoubleForHash(e.Double())); return;
    case BsonType::kInt32: h->AddInt64(e.Int32()); return;
    case BsonType::kInt64: h->AddInt64(e.Int64()); return;
    case BsonType::kDecimal128: h->AddInt64(DecimalForHash(e.Decimal())); return;
    case BsonType::kDocument:
    case BsonType::kArray: HashFields(h, e.Document()); return;
    case BsonType::kCodeWithScope: {
      std::string_view code = e.CodeWithScopeCode();
      h->Add(code.data(), code.size());
      h->Add("", 1);  // the code's NUL, which its length counts
      HashFields(h, e.CodeWithScopeScope());
      return;
    }
    default:
      if (e.ok()) h->Add(e.value_data(), e.value_size());
      return;
  }
}

void HashFields(Md5* h, DocumentView doc) {
  for (Element child : doc) HashValue(h, child, /*with_name=*/true);
  // The end of the document: rank 0 and an empty name (no NUL: MongoDB's
  // end-of-object element has a name of size 0).
  h->AddInt32(CanonicalTypeRank(BsonType::kEod));
}

}  // namespace

int64_t HashBsonValue(const Element& value, int32_t seed) {
  Md5 h;
  h.AddInt32(seed);
  HashValue(&h, value, /*with_name=*/false);
  return h.Finish();
}

}  // namespace rockdoc::internal

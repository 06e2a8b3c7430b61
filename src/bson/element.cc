// Element and DocumentView: reading validated BSON in place.
#include <cstring>

#include "common/endian.h"
#include "common/logging.h"
#include "rockdoc/document.h"

namespace rockdoc {

namespace {

// The empty document's bytes, for default-constructed views.
constexpr uint8_t kEmptyDocument[5] = {5, 0, 0, 0, 0};

inline size_t CStringSize(const uint8_t* p) {
  return std::strlen(reinterpret_cast<const char*>(p)) + 1;
}

}  // namespace

Element::Element(const uint8_t* data) : data_(data) {}

std::string_view Element::key() const {
  if (data_ == nullptr) return std::string_view();
  return std::string_view(reinterpret_cast<const char*>(data_ + 1));
}

const uint8_t* Element::value_data() const { return data_ + 1 + CStringSize(data_ + 1); }

size_t Element::value_size() const {
  if (data_ == nullptr) return 0;
  const uint8_t* v = value_data();
  switch (type()) {
    case BsonType::kEod:
    case BsonType::kUndefined:
    case BsonType::kNull:
    case BsonType::kMinKey:
    case BsonType::kMaxKey:
      return 0;
    case BsonType::kBool:
      return 1;
    case BsonType::kInt32:
      return 4;
    case BsonType::kDouble:
    case BsonType::kDateTime:
    case BsonType::kTimestamp:
    case BsonType::kInt64:
      return 8;
    case BsonType::kObjectId:
      return 12;
    case BsonType::kDecimal128:
      return 16;
    case BsonType::kString:
    case BsonType::kCode:
    case BsonType::kSymbol:
      return 4 + static_cast<size_t>(LoadLE<int32_t>(v));
    case BsonType::kDocument:
    case BsonType::kArray:
    case BsonType::kCodeWithScope:
      return static_cast<size_t>(LoadLE<int32_t>(v));
    case BsonType::kBinary:
      return 5 + static_cast<size_t>(LoadLE<int32_t>(v));
    case BsonType::kRegex: {
      size_t pattern = CStringSize(v);
      return pattern + CStringSize(v + pattern);
    }
    case BsonType::kDbPointer:
      return 4 + static_cast<size_t>(LoadLE<int32_t>(v)) + 12;
  }
  return 0;
}

size_t Element::size() const {
  if (data_ == nullptr) return 0;
  if (type() == BsonType::kEod) return 1;
  return static_cast<size_t>(value_data() - data_) + value_size();
}

double Element::Double() const {
  ROCKDOC_DCHECK(type() == BsonType::kDouble);
  return LoadLE<double>(value_data());
}

std::string_view Element::String() const {
  ROCKDOC_DCHECK(type() == BsonType::kString || type() == BsonType::kCode ||
                 type() == BsonType::kSymbol);
  const uint8_t* v = value_data();
  int32_t len = LoadLE<int32_t>(v);
  return std::string_view(reinterpret_cast<const char*>(v + 4), static_cast<size_t>(len - 1));
}

DocumentView Element::Document() const {
  ROCKDOC_DCHECK(IsContainer());
  return DocumentView(value_data());
}

DocumentView Element::Array() const { return Document(); }

BinaryView Element::Binary() const {
  ROCKDOC_DCHECK(type() == BsonType::kBinary);
  const uint8_t* v = value_data();
  int32_t len = LoadLE<int32_t>(v);
  auto subtype = static_cast<BinarySubtype>(v[4]);
  const char* payload = reinterpret_cast<const char*>(v + 5);
  if (subtype == BinarySubtype::kBinaryOld) {
    // The old binary subtype repeats the length inside the payload.
    return BinaryView{subtype, std::string_view(payload + 4, static_cast<size_t>(len - 4))};
  }
  return BinaryView{subtype, std::string_view(payload, static_cast<size_t>(len))};
}

ObjectId Element::Oid() const {
  ROCKDOC_DCHECK(type() == BsonType::kObjectId);
  return ObjectId(value_data());
}

bool Element::Bool() const {
  ROCKDOC_DCHECK(type() == BsonType::kBool);
  return value_data()[0] != 0;
}

int64_t Element::DateTime() const {
  ROCKDOC_DCHECK(type() == BsonType::kDateTime);
  return LoadLE<int64_t>(value_data());
}

RegexView Element::Regex() const {
  ROCKDOC_DCHECK(type() == BsonType::kRegex);
  const char* v = reinterpret_cast<const char*>(value_data());
  std::string_view pattern(v);
  return RegexView{pattern, std::string_view(v + pattern.size() + 1)};
}

DbPointerView Element::DbPointer() const {
  ROCKDOC_DCHECK(type() == BsonType::kDbPointer);
  const uint8_t* v = value_data();
  int32_t len = LoadLE<int32_t>(v);
  return DbPointerView{
      std::string_view(reinterpret_cast<const char*>(v + 4), static_cast<size_t>(len - 1)),
      ObjectId(v + 4 + len)};
}

std::string_view Element::CodeWithScopeCode() const {
  ROCKDOC_DCHECK(type() == BsonType::kCodeWithScope);
  const uint8_t* v = value_data() + 4;
  int32_t len = LoadLE<int32_t>(v);
  return std::string_view(reinterpret_cast<const char*>(v + 4), static_cast<size_t>(len - 1));
}

DocumentView Element::CodeWithScopeScope() const {
  ROCKDOC_DCHECK(type() == BsonType::kCodeWithScope);
  const uint8_t* v = value_data() + 4;
  int32_t len = LoadLE<int32_t>(v);
  return DocumentView(v + 4 + len);
}

int32_t Element::Int32() const {
  ROCKDOC_DCHECK(type() == BsonType::kInt32);
  return LoadLE<int32_t>(value_data());
}

BsonTimestamp Element::Timestamp() const {
  ROCKDOC_DCHECK(type() == BsonType::kTimestamp);
  return BsonTimestamp::FromUint64(LoadLE<uint64_t>(value_data()));
}

int64_t Element::Int64() const {
  ROCKDOC_DCHECK(type() == BsonType::kInt64);
  return LoadLE<int64_t>(value_data());
}

Decimal128 Element::Decimal() const {
  ROCKDOC_DCHECK(type() == BsonType::kDecimal128);
  const uint8_t* v = value_data();
  return Decimal128(LoadLE<uint64_t>(v + 8), LoadLE<uint64_t>(v));
}

bool Element::IsNumber() const {
  switch (type()) {
    case BsonType::kInt32:
    case BsonType::kInt64:
    case BsonType::kDouble:
    case BsonType::kDecimal128:
      return true;
    default:
      return false;
  }
}

double Element::NumberAsDouble() const {
  switch (type()) {
    case BsonType::kInt32: return Int32();
    case BsonType::kInt64: return static_cast<double>(Int64());
    case BsonType::kDouble: return Double();
    case BsonType::kDecimal128: return Decimal().ToDouble();
    default: return 0;
  }
}

bool Element::ExactInt64(int64_t* out) const {
  switch (type()) {
    case BsonType::kInt32:
      *out = Int32();
      return true;
    case BsonType::kInt64:
      *out = Int64();
      return true;
    case BsonType::kDouble: {
      double d = Double();
      // 2^63 is exactly representable; anything at or past it is out of range.
      if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
      int64_t i = static_cast<int64_t>(d);
      if (static_cast<double>(i) != d) return false;
      *out = i;
      return true;
    }
    case BsonType::kDecimal128: {
      Decimal128 dec = Decimal();
      if (!dec.IsFinite()) return false;
      Decimal128::Parts p = dec.ToParts();
      unsigned __int128 c = (static_cast<unsigned __int128>(p.coefficient_high) << 64) |
                            p.coefficient_low;
      int exp = p.exponent;
      // Exact: scale the coefficient by 10^exponent while it stays in range.
      for (; exp < 0; ++exp) {
        if (c % 10 != 0) return false;
        c /= 10;
      }
      constexpr unsigned __int128 kLimit = static_cast<unsigned __int128>(1) << 63;
      for (; exp > 0 && c != 0; --exp) {
        c *= 10;
        if (c > kLimit) return false;
      }
      if (c > kLimit || (c == kLimit && !p.negative)) return false;
      *out = p.negative ? static_cast<int64_t>(-static_cast<__int128>(c)) : static_cast<int64_t>(c);
      return true;
    }
    default:
      return false;
  }
}

// ---- DocumentView ----

DocumentView::DocumentView() : data_(kEmptyDocument) {}

size_t DocumentView::size() const { return static_cast<size_t>(LoadLE<int32_t>(data_)); }

DocumentView::Iterator& DocumentView::Iterator::operator++() {
  cur_ += Element(cur_).size();
  return *this;
}

DocumentView::Iterator DocumentView::begin() const { return Iterator(data_ + 4); }
DocumentView::Iterator DocumentView::end() const { return Iterator(data_ + size() - 1); }

Element DocumentView::Get(std::string_view field) const {
  for (Element e : *this) {
    if (e.key() == field) return e;
  }
  return Element();
}

namespace {
// Parses a non-negative decimal array index without leading zeros.
bool ParseArrayIndex(std::string_view s, size_t* out) {
  if (s.empty() || s.size() > 9) return false;
  if (s.size() > 1 && s[0] == '0') return false;
  size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  *out = v;
  return true;
}
}  // namespace

Element DocumentView::GetPath(std::string_view path) const {
  DocumentView current = *this;
  bool current_is_array = false;
  while (true) {
    size_t dot = path.find('.');
    std::string_view part = path.substr(0, dot);
    Element e;
    if (current_is_array) {
      size_t index;
      if (!ParseArrayIndex(part, &index)) return Element();
      size_t i = 0;
      for (Element item : current) {
        if (i++ == index) {
          e = item;
          break;
        }
      }
    } else {
      e = current.Get(part);
    }
    if (!e.ok() || dot == std::string_view::npos) return e;
    if (!e.IsContainer()) return Element();
    current_is_array = e.type() == BsonType::kArray;
    current = e.Document();
    path = path.substr(dot + 1);
  }
}

size_t DocumentView::CountFields() const {
  size_t n = 0;
  for (auto it = begin(); it != end(); ++it) ++n;
  return n;
}

// ---- Document ----

Document::Document() : bytes_(reinterpret_cast<const char*>(kEmptyDocument), 5) {}

Document Document::AdoptValidated(std::string bytes) { return Document(std::move(bytes)); }

StatusOr<Document> Document::FromBytes(std::string_view bytes) {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(bytes));
  return Document(std::string(bytes));
}

}  // namespace rockdoc

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
  // A missing element, or the terminator an end() iterator points at, has
  // no key: the byte after a terminator is outside the document.
  if (!ok()) return std::string_view();
  return std::string_view(reinterpret_cast<const char*>(data_ + 1));
}

// A missing element has no value bytes: a non-null pointer to none.
const uint8_t* Element::value_data() const { return ok() ? ValueData() : kEmptyDocument; }

const uint8_t* Element::ValueData() const { return data_ + 1 + CStringSize(data_ + 1); }

size_t Element::value_size() const {
  if (!ok()) return 0;
  const uint8_t* v = ValueData();
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
  return static_cast<size_t>(ValueData() - data_) + value_size();
}

double Element::Double() const {
  if (type() != BsonType::kDouble) return 0;
  return LoadLE<double>(ValueData());
}

std::string_view Element::String() const {
  if (type() != BsonType::kString && type() != BsonType::kCode && type() != BsonType::kSymbol) {
    return std::string_view();
  }
  const uint8_t* v = ValueData();
  int32_t len = LoadLE<int32_t>(v);
  return std::string_view(reinterpret_cast<const char*>(v + 4), static_cast<size_t>(len - 1));
}

DocumentView Element::Document() const {
  if (!IsContainer()) return DocumentView();
  return DocumentView(ValueData());
}

DocumentView Element::Array() const { return Document(); }

BinaryView Element::Binary() const {
  if (type() != BsonType::kBinary) return BinaryView{};
  const uint8_t* v = ValueData();
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
  if (type() != BsonType::kObjectId) return ObjectId();
  return ObjectId(ValueData());
}

bool Element::Bool() const {
  if (type() != BsonType::kBool) return false;
  return ValueData()[0] != 0;
}

int64_t Element::DateTime() const {
  if (type() != BsonType::kDateTime) return 0;
  return LoadLE<int64_t>(ValueData());
}

RegexView Element::Regex() const {
  if (type() != BsonType::kRegex) return RegexView{};
  const char* v = reinterpret_cast<const char*>(ValueData());
  std::string_view pattern(v);
  return RegexView{pattern, std::string_view(v + pattern.size() + 1)};
}

DbPointerView Element::DbPointer() const {
  if (type() != BsonType::kDbPointer) return DbPointerView{};
  const uint8_t* v = ValueData();
  int32_t len = LoadLE<int32_t>(v);
  return DbPointerView{
      std::string_view(reinterpret_cast<const char*>(v + 4), static_cast<size_t>(len - 1)),
      ObjectId(v + 4 + len)};
}

std::string_view Element::CodeWithScopeCode() const {
  if (type() != BsonType::kCodeWithScope) return std::string_view();
  const uint8_t* v = ValueData() + 4;
  int32_t len = LoadLE<int32_t>(v);
  return std::string_view(reinterpret_cast<const char*>(v + 4), static_cast<size_t>(len - 1));
}

DocumentView Element::CodeWithScopeScope() const {
  if (type() != BsonType::kCodeWithScope) return DocumentView();
  const uint8_t* v = ValueData() + 4;
  int32_t len = LoadLE<int32_t>(v);
  return DocumentView(v + 4 + len);
}

int32_t Element::Int32() const {
  if (type() != BsonType::kInt32) return 0;
  return LoadLE<int32_t>(ValueData());
}

BsonTimestamp Element::Timestamp() const {
  if (type() != BsonType::kTimestamp) return BsonTimestamp{};
  return BsonTimestamp::FromUint64(LoadLE<uint64_t>(ValueData()));
}

int64_t Element::Int64() const {
  if (type() != BsonType::kInt64) return 0;
  return LoadLE<int64_t>(ValueData());
}

Decimal128 Element::Decimal() const {
  if (type() != BsonType::kDecimal128) return Decimal128();
  const uint8_t* v = ValueData();
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

// Each As* is its unchecked accessor behind a type test.
#define ROCKDOC_AS(Name, Type, Test, Accessor)                  \
  std::optional<Type> Element::As##Name() const {               \
    if (!(Test)) return std::nullopt;                           \
    return Accessor();                                          \
  }
ROCKDOC_AS(Double, double, IsDouble(), Double)
ROCKDOC_AS(String, std::string_view, IsString(), String)
ROCKDOC_AS(Document, DocumentView, IsDocument(), Document)
ROCKDOC_AS(Array, DocumentView, IsArray(), Array)
ROCKDOC_AS(Binary, BinaryView, IsBinary(), Binary)
ROCKDOC_AS(ObjectId, ObjectId, IsObjectId(), Oid)
ROCKDOC_AS(Bool, bool, IsBool(), Bool)
ROCKDOC_AS(DateTime, int64_t, IsDateTime(), DateTime)
ROCKDOC_AS(Regex, RegexView, IsRegex(), Regex)
ROCKDOC_AS(Int32, int32_t, IsInt32(), Int32)
ROCKDOC_AS(Timestamp, BsonTimestamp, IsTimestamp(), Timestamp)
ROCKDOC_AS(Int64, int64_t, IsInt64(), Int64)
ROCKDOC_AS(Decimal, Decimal128, IsDecimal(), Decimal)
#undef ROCKDOC_AS

std::optional<int64_t> Element::AsExactInt64() const {
  int64_t value = 0;
  if (!ExactInt64(&value)) return std::nullopt;
  return value;
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
  // end() stays end(): advancing past the terminator would read outside
  // the document.
  if (*cur_ != 0) cur_ += Element(cur_).size();
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

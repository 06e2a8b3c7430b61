// MongoDB's comparison order over BSON values and documents.
#include <cstring>

#include "bson/numeric.h"
#include "bson/string_comparator.h"
#include "common/endian.h"
#include "rockdoc/document.h"

namespace rockdoc {

namespace {

template <typename T>
int Sign(T a, T b) {
  return a < b ? -1 : (a > b ? 1 : 0);
}

int CompareBytes(std::string_view a, std::string_view b) {
  size_t common = std::min(a.size(), b.size());
  int c = common == 0 ? 0 : std::memcmp(a.data(), b.data(), common);
  if (c != 0) return c < 0 ? -1 : 1;
  return Sign(a.size(), b.size());
}

// Arrays compare element by element (their keys are positions and agree);
// strings by `strings` (binary when null).
int CompareArraysWith(DocumentView a, DocumentView b, const StringComparator* strings) {
  auto ia = a.begin(), ea = a.end();
  auto ib = b.begin(), eb = b.end();
  for (; ia != ea && ib != eb; ++ia, ++ib) {
    int c = CompareValuesWith(*ia, *ib, strings);
    if (c != 0) return c;
  }
  return (ia == ea) ? (ib == eb ? 0 : -1) : 1;
}

}  // namespace

int CompareValues(const Element& a, const Element& b) {
  int ra = CanonicalTypeRank(a.type()), rb = CanonicalTypeRank(b.type());
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (a.type()) {
    case BsonType::kEod:
    case BsonType::kUndefined:
    case BsonType::kNull:
    case BsonType::kMinKey:
    case BsonType::kMaxKey:
      return 0;
    case BsonType::kDouble:
    case BsonType::kInt32:
    case BsonType::kInt64:
    case BsonType::kDecimal128:
      return CompareNumbers(a, b);
    case BsonType::kString:
    case BsonType::kSymbol:
    case BsonType::kCode:
      return CompareBytes(a.String(), b.String());
    case BsonType::kDocument:
      return CompareDocuments(a.Document(), b.Document());
    case BsonType::kArray:
      return CompareArraysWith(a.Array(), b.Array(), nullptr);
    case BsonType::kBinary: {
      // MongoDB orders binary data by length, then subtype, then bytes.
      int32_t la = LoadLE<int32_t>(a.value_data()), lb = LoadLE<int32_t>(b.value_data());
      if (la != lb) return Sign(la, lb);
      uint8_t sa = a.value_data()[4], sb = b.value_data()[4];
      if (sa != sb) return Sign(sa, sb);
      int c = la == 0 ? 0 : std::memcmp(a.value_data() + 5, b.value_data() + 5, la);
      return Sign(c, 0);
    }
    case BsonType::kObjectId:
      return Sign(std::memcmp(a.value_data(), b.value_data(), ObjectId::kSize), 0);
    case BsonType::kBool:
      return Sign(a.Bool(), b.Bool());
    case BsonType::kDateTime:
      return Sign(a.DateTime(), b.DateTime());
    case BsonType::kTimestamp:
      return Sign(a.Timestamp().AsUint64(), b.Timestamp().AsUint64());
    case BsonType::kRegex: {
      RegexView ra_ = a.Regex(), rb_ = b.Regex();
      int c = CompareBytes(ra_.pattern, rb_.pattern);
      return c != 0 ? c : CompareBytes(ra_.options, rb_.options);
    }
    case BsonType::kDbPointer: {
      // As MongoDB: by the size of the value, then its bytes.
      size_t sa = a.value_size(), sb = b.value_size();
      if (sa != sb) return Sign(sa, sb);
      return Sign(std::memcmp(a.value_data(), b.value_data(), sa), 0);
    }
    case BsonType::kCodeWithScope: {
      int c = CompareBytes(a.CodeWithScopeCode(), b.CodeWithScopeCode());
      return c != 0 ? c : CompareDocuments(a.CodeWithScopeScope(), b.CodeWithScopeScope());
    }
  }
  return 0;
}

int CompareElements(const Element& a, const Element& b, bool consider_field_names) {
  int ra = CanonicalTypeRank(a.type()), rb = CanonicalTypeRank(b.type());
  if (ra != rb) return ra < rb ? -1 : 1;
  if (consider_field_names) {
    int c = CompareBytes(a.key(), b.key());
    if (c != 0) return c;
  }
  return CompareValues(a, b);
}

int CompareDocuments(DocumentView a, DocumentView b) {
  auto ia = a.begin(), ea = a.end();
  auto ib = b.begin(), eb = b.end();
  for (; ia != ea && ib != eb; ++ia, ++ib) {
    int c = CompareElements(*ia, *ib, true);
    if (c != 0) return c;
  }
  return (ia == ea) ? (ib == eb ? 0 : -1) : 1;
}

int CompareValuesWith(const Element& a, const Element& b, const StringComparator* strings) {
  if (strings == nullptr) return CompareValues(a, b);
  int ra = CanonicalTypeRank(a.type()), rb = CanonicalTypeRank(b.type());
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (a.type()) {
    case BsonType::kString:
    case BsonType::kSymbol: {
      int c = strings->CompareStrings(a.String(), b.String());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case BsonType::kDocument:
      return CompareDocumentsWith(a.Document(), b.Document(), strings);
    case BsonType::kArray:
      return CompareArraysWith(a.Array(), b.Array(), strings);
    default:
      return CompareValues(a, b);
  }
}

int CompareDocumentsWith(DocumentView a, DocumentView b, const StringComparator* strings) {
  if (strings == nullptr) return CompareDocuments(a, b);
  auto ia = a.begin(), ea = a.end();
  auto ib = b.begin(), eb = b.end();
  for (; ia != ea && ib != eb; ++ia, ++ib) {
    const Element ea_ = *ia, eb_ = *ib;
    int ra = CanonicalTypeRank(ea_.type()), rb = CanonicalTypeRank(eb_.type());
    if (ra != rb) return ra < rb ? -1 : 1;
    int c = CompareBytes(ea_.key(), eb_.key());
    if (c != 0) return c;
    c = CompareValuesWith(*ia, *ib, strings);
    if (c != 0) return c;
  }
  return (ia == ea) ? (ib == eb ? 0 : -1) : 1;
}

}  // namespace rockdoc

// BsonBuilder: append-only construction of BSON in one growing buffer.
#include <charconv>
#include <cstring>

#include "common/endian.h"
#include "common/logging.h"
#include "rockdoc/document.h"

namespace rockdoc {

BsonBuilder::BsonBuilder() {
  buf_.reserve(64);
  stack_.reserve(8);
  stack_.push_back(Frame{0, false, 0});
  buf_.append(4, '\0');  // length, patched on Close/Build
}

void BsonBuilder::Reset() {
  buf_.clear();
  stack_.clear();
  stack_.push_back(Frame{0, false, 0});
  buf_.append(4, '\0');
}

void BsonBuilder::AppendHeader(BsonType type, std::string_view key) {
  buf_.push_back(static_cast<char>(type));
  Frame& top = stack_.back();
  if (top.is_array) {
    char digits[16];
    auto res = std::to_chars(digits, digits + sizeof(digits), top.next_index++);
    buf_.append(digits, static_cast<size_t>(res.ptr - digits));
  } else {
    // Always checked: a NUL would end the name early and turn the rest of
    // the element into garbage that may still parse (a corrupt document).
    ROCKDOC_CHECK(key.find('\0') == std::string_view::npos);
    buf_.append(key.data(), key.size());
  }
  buf_.push_back('\0');
}

namespace {
void AppendLengthPrefixedString(std::string* buf, std::string_view s) {
  AppendLE<int32_t>(buf, static_cast<int32_t>(s.size() + 1));
  buf->append(s.data(), s.size());
  buf->push_back('\0');
}
}  // namespace

BsonBuilder& BsonBuilder::AppendDouble(std::string_view key, double value) {
  AppendHeader(BsonType::kDouble, key);
  AppendLE(&buf_, value);
  return *this;
}

BsonBuilder& BsonBuilder::AppendString(std::string_view key, std::string_view value) {
  AppendHeader(BsonType::kString, key);
  AppendLengthPrefixedString(&buf_, value);
  return *this;
}

BsonBuilder& BsonBuilder::AppendDocument(std::string_view key, DocumentView doc) {
  AppendHeader(BsonType::kDocument, key);
  buf_.append(doc.bytes());
  return *this;
}

BsonBuilder& BsonBuilder::AppendArray(std::string_view key, DocumentView array) {
  AppendHeader(BsonType::kArray, key);
  buf_.append(array.bytes());
  return *this;
}

BsonBuilder& BsonBuilder::AppendBinary(std::string_view key, BinarySubtype subtype,
                                       std::string_view data) {
  AppendHeader(BsonType::kBinary, key);
  if (subtype == BinarySubtype::kBinaryOld) {
    AppendLE<int32_t>(&buf_, static_cast<int32_t>(data.size() + 4));
    buf_.push_back(static_cast<char>(subtype));
    AppendLE<int32_t>(&buf_, static_cast<int32_t>(data.size()));
  } else {
    AppendLE<int32_t>(&buf_, static_cast<int32_t>(data.size()));
    buf_.push_back(static_cast<char>(subtype));
  }
  buf_.append(data.data(), data.size());
  return *this;
}

BsonBuilder& BsonBuilder::AppendUndefined(std::string_view key) {
  AppendHeader(BsonType::kUndefined, key);
  return *this;
}

BsonBuilder& BsonBuilder::AppendObjectId(std::string_view key, const ObjectId& oid) {
  AppendHeader(BsonType::kObjectId, key);
  buf_.append(reinterpret_cast<const char*>(oid.data()), ObjectId::kSize);
  return *this;
}

BsonBuilder& BsonBuilder::AppendBool(std::string_view key, bool value) {
  AppendHeader(BsonType::kBool, key);
  buf_.push_back(value ? 1 : 0);
  return *this;
}

BsonBuilder& BsonBuilder::AppendDateTime(std::string_view key, int64_t millis) {
  AppendHeader(BsonType::kDateTime, key);
  AppendLE(&buf_, millis);
  return *this;
}

BsonBuilder& BsonBuilder::AppendNull(std::string_view key) {
  AppendHeader(BsonType::kNull, key);
  return *this;
}

BsonBuilder& BsonBuilder::AppendRegex(std::string_view key, std::string_view pattern,
                                      std::string_view options) {
  AppendHeader(BsonType::kRegex, key);
  ROCKDOC_CHECK(pattern.find('\0') == std::string_view::npos);
  ROCKDOC_CHECK(options.find('\0') == std::string_view::npos);
  buf_.append(pattern.data(), pattern.size());
  buf_.push_back('\0');
  buf_.append(options.data(), options.size());
  buf_.push_back('\0');
  return *this;
}

BsonBuilder& BsonBuilder::AppendDbPointer(std::string_view key, std::string_view ns,
                                          const ObjectId& oid) {
  AppendHeader(BsonType::kDbPointer, key);
  AppendLengthPrefixedString(&buf_, ns);
  buf_.append(reinterpret_cast<const char*>(oid.data()), ObjectId::kSize);
  return *this;
}

BsonBuilder& BsonBuilder::AppendCode(std::string_view key, std::string_view code) {
  AppendHeader(BsonType::kCode, key);
  AppendLengthPrefixedString(&buf_, code);
  return *this;
}

BsonBuilder& BsonBuilder::AppendSymbol(std::string_view key, std::string_view symbol) {
  AppendHeader(BsonType::kSymbol, key);
  AppendLengthPrefixedString(&buf_, symbol);
  return *this;
}

BsonBuilder& BsonBuilder::AppendCodeWithScope(std::string_view key, std::string_view code,
                                              DocumentView scope) {
  AppendHeader(BsonType::kCodeWithScope, key);
  int32_t total = static_cast<int32_t>(4 + 4 + code.size() + 1 + scope.size());
  AppendLE<int32_t>(&buf_, total);
  AppendLengthPrefixedString(&buf_, code);
  buf_.append(scope.bytes());
  return *this;
}

BsonBuilder& BsonBuilder::AppendInt32(std::string_view key, int32_t value) {
  AppendHeader(BsonType::kInt32, key);
  AppendLE(&buf_, value);
  return *this;
}

BsonBuilder& BsonBuilder::AppendTimestamp(std::string_view key, BsonTimestamp value) {
  AppendHeader(BsonType::kTimestamp, key);
  AppendLE(&buf_, value.AsUint64());
  return *this;
}

BsonBuilder& BsonBuilder::AppendInt64(std::string_view key, int64_t value) {
  AppendHeader(BsonType::kInt64, key);
  AppendLE(&buf_, value);
  return *this;
}

BsonBuilder& BsonBuilder::AppendDecimal128(std::string_view key, Decimal128 value) {
  AppendHeader(BsonType::kDecimal128, key);
  AppendLE(&buf_, value.low());
  AppendLE(&buf_, value.high());
  return *this;
}

BsonBuilder& BsonBuilder::AppendMinKey(std::string_view key) {
  AppendHeader(BsonType::kMinKey, key);
  return *this;
}

BsonBuilder& BsonBuilder::AppendMaxKey(std::string_view key) {
  AppendHeader(BsonType::kMaxKey, key);
  return *this;
}

BsonBuilder& BsonBuilder::AppendElement(const Element& element) {
  return AppendElementAs(element.key(), element);
}

BsonBuilder& BsonBuilder::AppendElementAs(std::string_view key, const Element& element) {
  // A missing element has no value; writing its type byte (0, the
  // terminator) would end the document early.
  if (!element.ok()) return *this;
  AppendHeader(element.type(), key);
  buf_.append(reinterpret_cast<const char*>(element.value_data()), element.value_size());
  return *this;
}

BsonBuilder& BsonBuilder::OpenDocument(std::string_view key) {
  AppendHeader(BsonType::kDocument, key);
  stack_.push_back(Frame{buf_.size(), false, 0});
  buf_.append(4, '\0');
  return *this;
}

BsonBuilder& BsonBuilder::OpenArray(std::string_view key) {
  AppendHeader(BsonType::kArray, key);
  stack_.push_back(Frame{buf_.size(), true, 0});
  buf_.append(4, '\0');
  return *this;
}

BsonBuilder& BsonBuilder::Close() {
  ROCKDOC_CHECK(stack_.size() > 1);
  buf_.push_back('\0');
  size_t start = stack_.back().start;
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(&buf_[start]),
                   static_cast<int32_t>(buf_.size() - start));
  stack_.pop_back();
  return *this;
}

Document BsonBuilder::Build() && {
  ROCKDOC_CHECK(stack_.size() == 1);
  buf_.push_back('\0');
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(&buf_[0]), static_cast<int32_t>(buf_.size()));
  Document doc = Document::AdoptValidated(std::move(buf_));
  Reset();
  return doc;
}

}  // namespace rockdoc

namespace rockdoc {

Value::Value() : bytes_(std::string("\x05\x00\x00\x00\x00", 5)) {}

Value Value::FromElement(const Element& element) {
  Value v;
  if (!element.ok()) return v;
  BsonBuilder b;
  b.AppendElementAs("", element);
  v.bytes_ = std::move(b).Build().bytes();
  return v;
}

Element Value::element() const {
  if (bytes_.size() < 5) return Element();  // moved from
  DocumentView view(reinterpret_cast<const uint8_t*>(bytes_.data()));
  return view.empty() ? Element() : *view.begin();
}

}  // namespace rockdoc

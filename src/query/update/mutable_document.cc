// MutableNode: lazy expansion and raw-byte serialisation; message formatting.
#include "query/update/mutable_document.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "common/endian.h"
#include "common/logging.h"
#include "rockdoc/json.h"

namespace rockdoc::update_internal {

Element Arena::Make(const std::function<void(BsonBuilder&, std::string_view)>& append) {
  BsonBuilder b;
  append(b, "");
  Document doc = std::move(b).Build();
  held_.push_back(doc.bytes());
  return Element(reinterpret_cast<const uint8_t*>(held_.back().data()) + 4);
}

Element Arena::Int32(int32_t v) {
  return Make([v](BsonBuilder& b, std::string_view k) { b.AppendInt32(k, v); });
}
Element Arena::Int64(int64_t v) {
  return Make([v](BsonBuilder& b, std::string_view k) { b.AppendInt64(k, v); });
}
Element Arena::Double(double v) {
  return Make([v](BsonBuilder& b, std::string_view k) { b.AppendDouble(k, v); });
}
Element Arena::Decimal(Decimal128 v) {
  return Make([v](BsonBuilder& b, std::string_view k) { b.AppendDecimal128(k, v); });
}
Element Arena::Null() {
  return Make([](BsonBuilder& b, std::string_view k) { b.AppendNull(k); });
}
Element Arena::DateTime(int64_t millis) {
  return Make([millis](BsonBuilder& b, std::string_view k) { b.AppendDateTime(k, millis); });
}
Element Arena::Timestamp(BsonTimestamp ts) {
  return Make([ts](BsonBuilder& b, std::string_view k) { b.AppendTimestamp(k, ts); });
}

Element Arena::Raw(BsonType type, std::string_view value) {
  // type byte, empty key, value: an element; the document wrapper around it
  // is never read, so no length prefix is needed.
  std::string bytes;
  bytes.reserve(2 + value.size());
  bytes.push_back(static_cast<char>(type));
  bytes.push_back('\0');
  bytes.append(value);
  held_.push_back(std::move(bytes));
  return Element(reinterpret_cast<const uint8_t*>(held_.back().data()));
}

MutableNode MutableNode::NewContainer(std::string_view key, BsonType type) {
  MutableNode n;
  n.key_ = key;
  n.expanded_ = true;
  n.container_type_ = type;
  return n;
}

Element MutableNode::AsElement(Arena* arena) const {
  if (!expanded_) return value_;
  std::string bytes;
  WriteValue(&bytes);
  return arena->Raw(container_type_, bytes);
}

void MutableNode::SetValue(Element value) {
  value_ = value;
  expanded_ = false;
  container_type_ = BsonType::kEod;
  children_.clear();
}

void MutableNode::Expand() {
  if (expanded_) return;
  ROCKDOC_DCHECK(IsContainer());
  container_type_ = value_.type();
  expanded_ = true;
  children_.clear();
  for (Element child : value_.Document()) children_.emplace_back(child.key(), child);
}

MutableNode* MutableNode::FindField(std::string_view key) {
  for (MutableNode& child : children_) {
    if (child.key_ == key) return &child;
  }
  return nullptr;
}

void MutableNode::WriteValue(std::string* out) const {
  if (!expanded_) {
    out->append(reinterpret_cast<const char*>(value_.value_data()), value_.value_size());
    return;
  }
  size_t start = out->size();
  out->append(4, '\0');
  const bool is_array = container_type_ == BsonType::kArray;
  char digits[24];
  for (size_t i = 0; i < children_.size(); ++i) {
    if (is_array) {
      auto res = std::to_chars(digits, digits + sizeof(digits), i);
      children_[i].WriteElement(std::string_view(digits, res.ptr - digits), out);
    } else {
      children_[i].WriteElement(children_[i].key_, out);
    }
  }
  out->push_back('\0');
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(out->data() + start),
                   static_cast<int32_t>(out->size() - start));
}

void MutableNode::WriteElement(std::string_view key, std::string* out) const {
  out->push_back(static_cast<char>(type()));
  out->append(key.data(), key.size());
  out->push_back('\0');
  WriteValue(out);
}

size_t MutableNode::ValueSize() const {
  if (!expanded_) return value_.value_size();
  size_t total = 5;
  const bool is_array = container_type_ == BsonType::kArray;
  for (size_t i = 0; i < children_.size(); ++i) {
    size_t key_size = is_array ? std::to_string(i).size() : children_[i].key_.size();
    total += 2 + key_size + children_[i].ValueSize();
  }
  return total;
}

bool BinaryEqualValues(const Element& a, const Element& b) {
  if (a.type() != b.type()) return false;
  size_t n = a.value_size();
  return n == b.value_size() && std::memcmp(a.value_data(), b.value_data(), n) == 0;
}

namespace {

constexpr size_t kMaxFormattedSize = 1024;

void AppendValue(const Element& v, std::string* out);

void AppendContainer(const Element& v, std::string* out) {
  const bool is_array = v.type() == BsonType::kArray;
  DocumentView d = v.Document();
  if (d.empty()) {
    out->append(is_array ? "[]" : "{}");
    return;
  }
  out->append(is_array ? "[ " : "{ ");
  bool first = true;
  for (Element child : d) {
    if (out->size() > kMaxFormattedSize) {
      out->append("...");
      break;
    }
    if (!first) out->append(", ");
    first = false;
    if (!is_array) {
      out->append(child.key());
      out->append(": ");
    }
    AppendValue(child, out);
  }
  out->append(is_array ? " ]" : " }");
}

void AppendValue(const Element& v, std::string* out) {
  switch (v.type()) {
    case BsonType::kInt32:
      out->append(std::to_string(v.Int32()));
      return;
    case BsonType::kInt64:
      out->append(std::to_string(v.Int64()));
      return;
    case BsonType::kDouble: {
      double d = v.Double();
      if (std::isnan(d)) {
        out->append("nan.0");
        return;
      }
      if (std::isinf(d)) {
        out->append(d > 0 ? "inf.0" : "-inf.0");
        return;
      }
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof(buf), d);
      std::string_view s(buf, res.ptr - buf);
      out->append(s);
      if (s.find_first_of(".e") == std::string_view::npos) out->append(".0");
      return;
    }
    case BsonType::kString:
      out->push_back('"');
      out->append(v.String());
      out->push_back('"');
      return;
    case BsonType::kBool:
      out->append(v.Bool() ? "true" : "false");
      return;
    case BsonType::kNull:
      out->append("null");
      return;
    case BsonType::kDocument:
    case BsonType::kArray:
      AppendContainer(v, out);
      return;
    case BsonType::kObjectId:
      out->append("ObjectId('" + v.Oid().ToHex() + "')");
      return;
    case BsonType::kDecimal128:
      out->append("NumberDecimal(\"" + v.Decimal().ToString() + "\")");
      return;
    case BsonType::kDateTime:
      out->append("new Date(" + std::to_string(v.DateTime()) + ")");
      return;
    case BsonType::kTimestamp:
      out->append("Timestamp(" + std::to_string(v.Timestamp().t) + ", " +
                  std::to_string(v.Timestamp().i) + ")");
      return;
    default:
      out->append(ValueToJson(v, JsonFormat::kShell));
      return;
  }
}

}  // namespace

std::string FormatValue(const Element& value) {
  std::string out;
  AppendValue(value, &out);
  return out;
}

std::string FormatElement(std::string_view key, const Element& value) {
  std::string out(key);
  out.append(": ");
  AppendValue(value, &out);
  return out;
}

std::string FormatIdForMessage(DocumentView doc) {
  Element id = doc.Get("_id");
  if (!id.ok()) return "{}";
  return "{" + FormatElement("_id", id) + "}";
}

bool ParseArrayIndex(std::string_view part, size_t* index) {
  if (part.empty()) return false;
  // Leading zeros are allowed, as MongoDB's parseUnsignedBase10Integer does
  // for update paths ("a.01" is element 1); the significant digits are
  // bounded so the value cannot overflow.
  std::string_view significant = part.substr(std::min(part.find_first_not_of('0'), part.size()));
  if (significant.size() > 18) return false;
  size_t v = 0;
  for (char c : part) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<size_t>(c - '0');
  }
  *index = v;
  return true;
}

}  // namespace rockdoc::update_internal

// ValidateBson: structural validation of untrusted bytes. Every read is
// bounds-checked against the enclosing document's end, so malformed input
// yields a Status and never an out-of-bounds read.
#include <string>

#include "common/utf8.h"
#include "common/endian.h"
#include "rockdoc/document.h"

namespace rockdoc {

namespace {

class Validator {
 public:
  Validator(const uint8_t* base, const BsonValidationOptions& options)
      : base_(base), options_(options) {}

  // Validates the document starting at `p` whose bytes must end at or before
  // `limit`; on success `*end` is one past its terminator.
  Status Document(const uint8_t* p, const uint8_t* limit, int depth, bool is_array,
                  const uint8_t** end) {
    if (depth > options_.max_depth) {
      return Status(ErrorCode::kOverflow,
                    "BSON nesting depth exceeds the maximum of " +
                        std::to_string(options_.max_depth) + " at byte " + Offset(p));
    }
    if (limit - p < 5) return Error(p, "document too short to hold its length");
    int32_t len = LoadLE<int32_t>(p);
    if (len < 5) return Error(p, "document length " + std::to_string(len) + " is too small");
    if (len > limit - p) {
      return Error(p, "document length " + std::to_string(len) + " runs past its container");
    }
    const uint8_t* doc_end = p + len;  // one past the terminator
    const uint8_t* q = p + 4;
    (void)is_array;  // array keys are not checked: degenerate keys are legal BSON
    while (true) {
      if (q >= doc_end) return Error(q, "missing document terminator");
      uint8_t type = *q;
      if (type == 0) {
        if (q + 1 != doc_end) return Error(q, "document terminator before its stated end");
        *end = doc_end;
        return Status::OK();
      }
      if (!IsValidBsonType(type)) {
        return Error(q, "unknown BSON type 0x" + Hex(type));
      }
      ++q;
      const uint8_t* key_end;
      ROCKDOC_RETURN_IF_ERROR(CString(q, doc_end - 1, &key_end, "field name"));
      q = key_end;
      ROCKDOC_RETURN_IF_ERROR(Value(static_cast<BsonType>(type), q, doc_end - 1, depth, &q));
    }
  }

 private:
  // `limit` is the position of the enclosing document's terminator: values
  // must end at or before it.
  Status Value(BsonType type, const uint8_t* p, const uint8_t* limit, int depth,
               const uint8_t** end) {
    auto fixed = [&](ptrdiff_t n, const char* what) -> Status {
      if (limit - p < n) return Error(p, std::string(what) + " value truncated");
      *end = p + n;
      return Status::OK();
    };
    switch (type) {
      case BsonType::kEod:
        return Error(p, "unexpected end of document");
      case BsonType::kUndefined:
      case BsonType::kNull:
      case BsonType::kMinKey:
      case BsonType::kMaxKey:
        *end = p;
        return Status::OK();
      case BsonType::kBool:
        ROCKDOC_RETURN_IF_ERROR(fixed(1, "boolean"));
        if (*p > 1) return Error(p, "boolean value " + std::to_string(*p) + " is not 0 or 1");
        return Status::OK();
      case BsonType::kInt32:
        return fixed(4, "int32");
      case BsonType::kDouble:
        return fixed(8, "double");
      case BsonType::kDateTime:
        return fixed(8, "date");
      case BsonType::kTimestamp:
        return fixed(8, "timestamp");
      case BsonType::kInt64:
        return fixed(8, "int64");
      case BsonType::kObjectId:
        return fixed(12, "ObjectId");
      case BsonType::kDecimal128:
        return fixed(16, "decimal128");
      case BsonType::kString:
      case BsonType::kCode:
      case BsonType::kSymbol:
        return String(p, limit, end);
      case BsonType::kDocument:
      case BsonType::kArray:
        return Document(p, limit, depth + 1, type == BsonType::kArray, end);
      case BsonType::kBinary: {
        if (limit - p < 5) return Error(p, "binary value truncated");
        int32_t len = LoadLE<int32_t>(p);
        if (len < 0) return Error(p, "negative binary length");
        if (len > limit - p - 5) return Error(p, "binary length runs past the document");
        if (p[4] == static_cast<uint8_t>(BinarySubtype::kBinaryOld)) {
          // The old subtype repeats the length inside; the two must agree.
          if (len < 4 || LoadLE<int32_t>(p + 5) != len - 4) {
            return Error(p, "binary subtype 2 inner length does not match");
          }
        }
        *end = p + 5 + len;
        return Status::OK();
      }
      case BsonType::kRegex: {
        const uint8_t* q;
        ROCKDOC_RETURN_IF_ERROR(CString(p, limit, &q, "regex pattern"));
        return CString(q, limit, end, "regex options");
      }
      case BsonType::kDbPointer: {
        const uint8_t* q;
        ROCKDOC_RETURN_IF_ERROR(String(p, limit, &q));
        if (limit - q < 12) return Error(q, "DBPointer ObjectId truncated");
        *end = q + 12;
        return Status::OK();
      }
      case BsonType::kCodeWithScope: {
        if (limit - p < 4) return Error(p, "code with scope truncated");
        int32_t total = LoadLE<int32_t>(p);
        // 4 (total) + 5 (empty string) + 5 (empty scope) at the least.
        if (total < 14) return Error(p, "code with scope length is too small");
        if (total > limit - p) return Error(p, "code with scope length runs past the document");
        const uint8_t* field_end = p + total;
        const uint8_t* q;
        ROCKDOC_RETURN_IF_ERROR(String(p + 4, field_end, &q));
        ROCKDOC_RETURN_IF_ERROR(Document(q, field_end, depth + 1, false, &q));
        if (q != field_end) return Error(p, "code with scope length does not match its parts");
        *end = field_end;
        return Status::OK();
      }
    }
    return Error(p, "unknown type");
  }

  // int32 length (counting the NUL), bytes, NUL.
  Status String(const uint8_t* p, const uint8_t* limit, const uint8_t** end) {
    if (limit - p < 4) return Error(p, "string length truncated");
    int32_t len = LoadLE<int32_t>(p);
    if (len < 1) return Error(p, "string length " + std::to_string(len) + " is invalid");
    if (len > limit - p - 4) return Error(p, "string length runs past the document");
    const uint8_t* s = p + 4;
    if (s[len - 1] != 0) return Error(p, "string is not NUL-terminated");
    if (options_.check_utf8 && !IsValidUtf8(s, static_cast<size_t>(len - 1))) {
      return Error(p, "string is not valid UTF-8");
    }
    *end = s + len;
    return Status::OK();
  }

  // NUL-terminated, no length.
  Status CString(const uint8_t* p, const uint8_t* limit, const uint8_t** end, const char* what) {
    // A type byte in the terminator's place leaves no room at all.
    if (p >= limit) return Error(p, std::string(what) + " is missing");
    const void* nul = std::memchr(p, 0, static_cast<size_t>(limit - p));
    if (nul == nullptr) return Error(p, std::string(what) + " is not NUL-terminated");
    const uint8_t* n = static_cast<const uint8_t*>(nul);
    if (options_.check_utf8 && !IsValidUtf8(p, static_cast<size_t>(n - p))) {
      return Error(p, std::string(what) + " is not valid UTF-8");
    }
    *end = n + 1;
    return Status::OK();
  }

  Status Error(const uint8_t* at, const std::string& what) const {
    return InvalidBSON("invalid BSON at byte " + Offset(at) + ": " + what);
  }
  std::string Offset(const uint8_t* at) const { return std::to_string(at - base_); }
  static std::string Hex(uint8_t b) {
    static constexpr char kDigits[] = "0123456789abcdef";
    return std::string{kDigits[b >> 4], kDigits[b & 0xF]};
  }

  const uint8_t* base_;
  const BsonValidationOptions& options_;
};

}  // namespace

Status ValidateBson(std::string_view bytes, const BsonValidationOptions& options) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 5) {
    return InvalidBSON("invalid BSON: " + std::to_string(bytes.size()) +
                       " bytes cannot hold a document (5 at the least)");
  }
  int32_t len = LoadLE<int32_t>(p);
  if (len >= 0 && static_cast<size_t>(len) > options.max_size) {
    return Status(ErrorCode::kBSONObjectTooLarge,
                  "BSONObj size: " + std::to_string(len) + " is invalid. Size must be between 0 and " +
                      std::to_string(options.max_size));
  }
  if (len < 5 || static_cast<size_t>(len) != bytes.size()) {
    return InvalidBSON("invalid BSON: stated length " + std::to_string(len) +
                       " does not match the " + std::to_string(bytes.size()) + " bytes given");
  }
  Validator v(p, options);
  const uint8_t* end;
  return v.Document(p, p + bytes.size(), 0, false, &end);
}

}  // namespace rockdoc

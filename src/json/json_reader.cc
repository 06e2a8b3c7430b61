// JSON / Extended JSON v2 text to BSON, with simdjson's On-Demand API.
//
// The fast path streams each value straight into a BsonBuilder: keys and
// strings are unescaped by simdjson into its own buffer and copied once,
// into the BSON output. Only an object whose first key starts with '$' (a
// possible type wrapper) takes the slow path: a first pass reads its keys
// and the JSON types of their values without consuming them, decides what
// the object is (wrapper, legacy form, DBRef or plain document), then the
// object is rewound and read for real. simdjson forbids unescaping a string
// twice, so the first pass reads raw keys (unescaping by hand only the rare
// key with a backslash in it).
//
// Each thread keeps one Reader (parser, padded input buffer) so that a call
// allocates nothing but its result.
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "common/utf8.h"
#include "json/json_internal.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"

namespace rockdoc {
namespace {

namespace od = simdjson::ondemand;
using json_internal::HexValue;

// Deeper than MongoDB stores (100), as the Extended JSON spec asks parsers to
// accept at least 200 levels; bounded so recursion cannot exhaust the stack.
constexpr int kMaxJsonDepth = 200;

// The '$' keys that mean something to Extended JSON.
enum class Key : uint8_t {
  kPlain = 0,  // anything else
  kOid,
  kSymbol,
  kNumberInt,
  kNumberLong,
  kNumberDouble,
  kNumberDecimal,
  kBinary,
  kCode,
  kScope,
  kTimestamp,
  kRegularExpression,
  kDbPointer,
  kDate,
  kMinKey,
  kMaxKey,
  kUndefined,
  kUuid,
  // Keys that are special only in company (legacy forms) or never (DBRef).
  kType,
  kRegex,
  kOptions,
  kRef,
  kId,
  kDb,
  kCount,
};

constexpr uint32_t Bit(Key k) { return uint32_t{1} << static_cast<int>(k); }
// Keys whose presence makes an object a type wrapper that must be exact.
constexpr uint32_t kSpecialKeys =
    Bit(Key::kOid) | Bit(Key::kSymbol) | Bit(Key::kNumberInt) | Bit(Key::kNumberLong) |
    Bit(Key::kNumberDouble) | Bit(Key::kNumberDecimal) | Bit(Key::kBinary) | Bit(Key::kCode) |
    Bit(Key::kScope) | Bit(Key::kTimestamp) | Bit(Key::kRegularExpression) |
    Bit(Key::kDbPointer) | Bit(Key::kDate) | Bit(Key::kMinKey) | Bit(Key::kMaxKey) |
    Bit(Key::kUndefined) | Bit(Key::kUuid);

// Wrappers that always have exactly one key ($code and $binary have
// two-key forms, $scope never comes alone).
constexpr uint32_t kSingleKeyWrappers =
    kSpecialKeys & ~(Bit(Key::kCode) | Bit(Key::kBinary) | Bit(Key::kScope));

Key ClassifyKey(std::string_view k) {
  if (k.size() < 3 || k[0] != '$') return Key::kPlain;
  std::string_view n = k.substr(1);
  switch (n[0]) {
    case 'b':
      if (n == "binary") return Key::kBinary;
      break;
    case 'c':
      if (n == "code") return Key::kCode;
      break;
    case 'd':
      if (n == "date") return Key::kDate;
      if (n == "dbPointer") return Key::kDbPointer;
      if (n == "db") return Key::kDb;
      break;
    case 'i':
      if (n == "id") return Key::kId;
      break;
    case 'm':
      if (n == "minKey") return Key::kMinKey;
      if (n == "maxKey") return Key::kMaxKey;
      break;
    case 'n':
      if (n == "numberInt") return Key::kNumberInt;
      if (n == "numberLong") return Key::kNumberLong;
      if (n == "numberDouble") return Key::kNumberDouble;
      if (n == "numberDecimal") return Key::kNumberDecimal;
      break;
    case 'o':
      if (n == "oid") return Key::kOid;
      if (n == "options") return Key::kOptions;
      break;
    case 'r':
      if (n == "regularExpression") return Key::kRegularExpression;
      if (n == "regex") return Key::kRegex;
      if (n == "ref") return Key::kRef;
      break;
    case 's':
      if (n == "symbol") return Key::kSymbol;
      if (n == "scope") return Key::kScope;
      break;
    case 't':
      if (n == "timestamp") return Key::kTimestamp;
      if (n == "type") return Key::kType;
      break;
    case 'u':
      if (n == "undefined") return Key::kUndefined;
      if (n == "uuid") return Key::kUuid;
      break;
  }
  return Key::kPlain;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The text of a raw (still escaped) key: `raw` points just after its opening
// quote, in a buffer simdjson has already checked (the closing quote exists).
// Keys without a backslash are returned in place; others are unescaped into
// `scratch`. Malformed escapes give an unmatchable key: the second pass,
// which unescapes through simdjson, reports them.
std::string_view RawKeyText(const char* raw, std::string* scratch) {
  const char* p = raw;
  while (*p != '"' && *p != '\\') ++p;
  if (*p == '"') return std::string_view(raw, p - raw);
  scratch->assign(raw, p - raw);
  auto hex4 = [](const char* h, uint32_t* v) {
    *v = 0;
    for (int i = 0; i < 4; ++i) {
      int d = HexValue(h[i]);
      if (d < 0) return false;
      *v = *v * 16 + d;
    }
    return true;
  };
  while (*p != '"') {
    if (*p != '\\') {
      scratch->push_back(*p++);
      continue;
    }
    char e = p[1];
    p += 2;
    switch (e) {
      case '"': scratch->push_back('"'); break;
      case '\\': scratch->push_back('\\'); break;
      case '/': scratch->push_back('/'); break;
      case 'b': scratch->push_back('\b'); break;
      case 'f': scratch->push_back('\f'); break;
      case 'n': scratch->push_back('\n'); break;
      case 'r': scratch->push_back('\r'); break;
      case 't': scratch->push_back('\t'); break;
      case 'u': {
        uint32_t cp;
        if (!hex4(p, &cp)) return "\x01invalid";
        p += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && p[0] == '\\' && p[1] == 'u') {
          uint32_t lo;
          if (hex4(p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
          }
        }
        AppendUtf8(cp, scratch);
        break;
      }
      default:
        return "\x01invalid";
    }
  }
  return *scratch;
}

bool ParseInt64Strict(std::string_view s, int64_t* out) {
  if (s.empty() || s[0] == '+') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool ParseDoubleStrict(std::string_view s, double* out) {
  if (s == "Infinity") {
    *out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == "-Infinity") {
    *out = -std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  // from_chars would also take "inf", "nan(...)" and hex forms: only decimal
  // notation is Extended JSON.
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) {
      return false;
    }
  }
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool ParseUuid(std::string_view s, std::string* out) {
  const bool dashed = s.size() == 36;
  if (!dashed && s.size() != 32) return false;
  for (size_t i = 0; i < s.size();) {
    if (dashed && (i == 8 || i == 13 || i == 18 || i == 23)) {
      if (s[i] != '-') return false;
      ++i;
      continue;
    }
    int hi = HexValue(s[i]), lo = i + 1 < s.size() ? HexValue(s[i + 1]) : -1;
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out->size() == 16;
}

// Regex options are stored sorted so that equal regexes have equal bytes
// (the corpus's "flags not alphabetized" case). Options are ASCII letters;
// anything else is left in its order, as sorting bytes would tear UTF-8
// sequences apart (found by fuzzing). The writer follows the same rule.
void SortedOptions(std::string_view options, std::string* out) {
  out->assign(options);
  for (char c : options) {
    if (static_cast<unsigned char>(c) >= 0x80) return;
  }
  std::sort(out->begin(), out->end());
}

// Keys are short: a loop beats a call to memchr.
inline bool ContainsNul(std::string_view s) {
  for (char c : s) {
    if (c == '\0') return true;
  }
  return false;
}

class Reader {
 public:
  // `padded`: the caller guarantees simdjson::SIMDJSON_PADDING readable
  // bytes after the text, so no copy is needed.
  StatusOr<Document> Parse(std::string_view json, bool padded);

 private:
  Status ParseFields(od::object& obj, bool top_level, int depth);
  Status ParseField(od::field& field, bool top_level, int depth);
  Status ParseValue(std::string_view key, od::value& value, int depth);
  Status ParseNumber(std::string_view key, od::value& value);
  Status ParseObjectValue(std::string_view key, od::value& value, int depth);
  Status ParseDollarObject(std::string_view key, od::object& obj, const char* at, int depth);
  Status ParseWrapper(std::string_view key, od::object& obj, const char* at, uint32_t mask,
                      int count, int depth);
  // A wrapper of one key `k` (not $code or $binary, which may have two)
  // whose value is `value`.
  Status ParseSingleWrapper(std::string_view key, Key k, od::value& value, const char* at);
  // The parser's current position, or nullptr when it has none.
  const char* Location() {
    const char* loc = nullptr;
    if (doc_.current_location().get(loc) != simdjson::SUCCESS) return nullptr;
    return loc;
  }
  // Reads `value` as a string, or fails naming `what`.
  Status GetString(od::value& value, std::string_view what, std::string_view* out);
  Status ParseObjectIdValue(od::value& value, ObjectId* oid);
  Status ParseTimestamp(od::value& value, const char* at, BsonTimestamp* ts);
  Status ParseDate(od::value& value, const char* at, int64_t* millis);

  Status Error(const char* at, std::string_view what) const;
  Status SimdError(simdjson::error_code code, const char* at = nullptr);

  od::parser parser_;
  od::document doc_;
  std::string input_;  // the text plus simdjson's padding
  const char* base_ = nullptr;
  size_t size_ = 0;
  BsonBuilder* b_ = nullptr;
  std::string scratch_;  // raw-key unescaping
  std::string bytes_;    // base64 / uuid payloads
  std::string options_;  // sorted regex options
};

Status Reader::Error(const char* at, std::string_view what) const {
  size_t offset = size_;
  if (at != nullptr && at >= base_ && at <= base_ + size_) offset = at - base_;
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (base_[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return FailedToParse("invalid JSON at offset " + std::to_string(offset) + " (line " +
                       std::to_string(line) + ", column " + std::to_string(column) +
                       "): " + std::string(what));
}

Status Reader::SimdError(simdjson::error_code code, const char* at) {
  if (at == nullptr) at = Location();
  std::string_view what;
  switch (code) {
    case simdjson::UTF8_ERROR: what = "invalid UTF-8"; break;
    case simdjson::UNCLOSED_STRING: what = "unclosed string"; break;
    case simdjson::STRING_ERROR: what = "invalid string (bad escape or control character)"; break;
    case simdjson::NUMBER_ERROR: what = "invalid number"; break;
    case simdjson::T_ATOM_ERROR: what = "invalid literal (expected true)"; break;
    case simdjson::F_ATOM_ERROR: what = "invalid literal (expected false)"; break;
    case simdjson::N_ATOM_ERROR: what = "invalid literal (expected null)"; break;
    case simdjson::TAPE_ERROR: what = "unexpected character or structure"; break;
    case simdjson::INCORRECT_TYPE: what = "invalid value"; break;
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      // simdjson notices unbalanced brackets before reading anything, so it
      // has no position to offer but the end.
      what = "unbalanced braces or brackets, or text after the document";
      at = base_ + size_;
      break;
    case simdjson::DEPTH_ERROR: what = "nesting too deep"; break;
    case simdjson::EMPTY: what = "empty input"; break;
    default: what = simdjson::error_message(code);
  }
  return Error(at, what);
}

StatusOr<Document> Reader::Parse(std::string_view json, bool padded) {
  if (padded) {
    base_ = json.data();
  } else {
    // simdjson reads in blocks past the end of the text: give it a copy with
    // padding. (This copy is the first touch of the input, and costs about
    // a sixth of the parse of a 300-byte document.)
    input_.assign(json);
    input_.append(simdjson::SIMDJSON_PADDING, '\0');
    base_ = input_.data();
  }
  size_ = json.size();
  auto err = parser_.iterate(base_, size_, size_ + simdjson::SIMDJSON_PADDING).get(doc_);
  if (err) {
    // Stage 1 failures carry no position; find an invalid UTF-8 byte ourselves.
    const char* at = base_ + size_;
    if (err == simdjson::UTF8_ERROR) at = base_ + FirstInvalidUtf8(json);
    return SimdError(err, at);
  }
  od::json_type type;
  if (auto e = doc_.type().get(type)) return SimdError(e);
  if (type != od::json_type::object) {
    return Error(Location(), "the top level must be an object");
  }
  od::object obj;
  if (auto e = doc_.get_object().get(obj)) return SimdError(e);
  BsonBuilder builder;
  b_ = &builder;
  ROCKDOC_RETURN_IF_ERROR(ParseFields(obj, /*top_level=*/true, 1));
  // simdjson has no position past the end: having one means trailing text.
  if (Location() != nullptr) {
    return Error(Location(), "unexpected text after the document");
  }
  return std::move(builder).Build();
}

Status Reader::ParseFields(od::object& obj, bool top_level, int depth) {
  for (auto result : obj) {
    od::field field;
    if (auto e = std::move(result).get(field)) return SimdError(e);
    ROCKDOC_RETURN_IF_ERROR(ParseField(field, top_level, depth));
  }
  return Status::OK();
}

Status Reader::ParseField(od::field& field, bool top_level, int depth) {
  const char* key_at = field.key().raw() - 1;
  std::string_view key;
  if (auto e = field.unescaped_key().get(key)) return SimdError(e, key_at);
  if (ContainsNul(key)) {
    return Error(key_at, "field names may not contain NUL");
  }
  // Only nested objects can be type wrappers; a wrapper key among ordinary
  // fields is malformed (the spec: a wrapper has exactly its keys).
  if (!top_level && !key.empty() && key[0] == '$' &&
      (Bit(ClassifyKey(key)) & kSpecialKeys) != 0) {
    return Error(key_at, "'" + std::string(key) + "' is a type wrapper key, but the object has other fields");
  }
  return ParseValue(key, field.value(), depth);
}

Status Reader::ParseValue(std::string_view key, od::value& value, int depth) {
  od::json_type type;
  if (auto e = value.type().get(type)) return SimdError(e);
  switch (type) {
    case od::json_type::object:
      return ParseObjectValue(key, value, depth);
    case od::json_type::array: {
      if (depth >= kMaxJsonDepth) return Error(value.raw_json_token().data(), "nesting too deep");
      od::array array;
      if (auto e = value.get_array().get(array)) return SimdError(e);
      b_->OpenArray(key);
      for (auto result : array) {
        od::value element;
        if (auto e = std::move(result).get(element)) return SimdError(e);
        ROCKDOC_RETURN_IF_ERROR(ParseValue(std::string_view(), element, depth + 1));
      }
      b_->Close();
      return Status::OK();
    }
    case od::json_type::string: {
      std::string_view s;
      if (auto e = value.get_string().get(s)) return SimdError(e);
      b_->AppendString(key, s);
      return Status::OK();
    }
    case od::json_type::number:
      return ParseNumber(key, value);
    case od::json_type::boolean: {
      bool v;
      if (auto e = value.get_bool().get(v)) return SimdError(e);
      b_->AppendBool(key, v);
      return Status::OK();
    }
    case od::json_type::null: {
      const char* at = value.raw_json_token().data();
      bool is_null = false;
      if (auto e = value.is_null().get(is_null)) return SimdError(e, at);
      if (!is_null) return Error(at, "invalid literal (expected null)");
      b_->AppendNull(key);
      return Status::OK();
    }
  }
  return Error(value.raw_json_token().data(), "unexpected value");
}

// mongoimport's rule: integers as int32 when they fit, else int64, else
// double; numbers with a fraction or exponent as double.
Status Reader::ParseNumber(std::string_view key, od::value& value) {
  const char* at = value.raw_json_token().data();
  od::number number;
  if (value.get_number().get(number) == simdjson::SUCCESS) {
    switch (number.get_number_type()) {
      case od::number_type::signed_integer: {
        int64_t i = number.get_int64();
        if (i >= std::numeric_limits<int32_t>::min() && i <= std::numeric_limits<int32_t>::max()) {
          b_->AppendInt32(key, static_cast<int32_t>(i));
        } else {
          b_->AppendInt64(key, i);
        }
        return Status::OK();
      }
      case od::number_type::unsigned_integer:  // beyond int64: a double
        b_->AppendDouble(key, static_cast<double>(number.get_uint64()));
        return Status::OK();
      case od::number_type::floating_point_number:
        b_->AppendDouble(key, number.get_double());
        return Status::OK();
    }
  }
  // An integer beyond int64: a double, precision lost as the spec allows.
  // (A failed get_int64/get_uint64 leaves the value unconsumed.)
  double d;
  if (value.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d)) {
    return Error(at, "number out of range");
  }
  b_->AppendDouble(key, d);
  return Status::OK();
}

Status Reader::ParseObjectValue(std::string_view key, od::value& value, int depth) {
  const char* at = value.raw_json_token().data();
  if (depth >= kMaxJsonDepth) return Error(at, "nesting too deep");
  od::object obj;
  if (auto e = value.get_object().get(obj)) return SimdError(e, at);
  od::object_iterator it, end;
  if (auto e = obj.begin().get(it)) return SimdError(e, at);
  if (auto e = obj.end().get(end)) return SimdError(e, at);
  if (it == end) {
    b_->OpenDocument(key);
    b_->Close();
    return Status::OK();
  }
  od::field field;
  if (auto e = (*it).get(field)) return SimdError(e);
  const char* raw = field.key().raw();
  if (*raw == '$' || *raw == '\\') {
    // A possible type wrapper. The common one-key wrappers ($oid, $date,
    // $numberLong, ...) are read in one pass: their value, then there must
    // be no other field. The rest need to see all their keys first.
    Key k = ClassifyKey(RawKeyText(raw, &scratch_));
    if ((Bit(k) & kSingleKeyWrappers) == 0) return ParseDollarObject(key, obj, at, depth);
    ROCKDOC_RETURN_IF_ERROR(ParseSingleWrapper(key, k, field.value(), at));
    ++it;
    if (it != end) return Error(at, "malformed type wrapper: wrong set of '$' keys");
    return Status::OK();
  }
  b_->OpenDocument(key);
  while (true) {
    ROCKDOC_RETURN_IF_ERROR(ParseField(field, /*top_level=*/false, depth + 1));
    ++it;
    if (it == end) break;
    if (auto e = (*it).get(field)) return SimdError(e);
  }
  b_->Close();
  return Status::OK();
}

Status Reader::ParseDollarObject(std::string_view key, od::object& obj, const char* at,
                                 int depth) {
  // First pass: which keys, and the JSON types of the values of '$' keys.
  if (auto e = obj.reset().error()) return SimdError(e, at);
  uint32_t mask = 0;
  int count = 0;
  od::json_type types[static_cast<int>(Key::kCount)] = {};
  for (auto result : obj) {
    od::field field;
    if (auto e = std::move(result).get(field)) return SimdError(e);
    ++count;
    Key k = ClassifyKey(RawKeyText(field.key().raw(), &scratch_));
    if (k == Key::kPlain) continue;
    mask |= Bit(k);
    if (auto e = field.value().type().get(types[static_cast<int>(k)])) return SimdError(e);
  }
  auto type_of = [&types](Key k) { return types[static_cast<int>(k)]; };
  if (auto e = obj.reset().error()) return SimdError(e, at);

  if ((mask & kSpecialKeys) != 0) return ParseWrapper(key, obj, at, mask, count, depth);

  // Legacy {"$regex": string, "$options": string}; with a non-string $regex
  // it is the query operator ({"$regex": {"$regularExpression": ..}}), a
  // plain document.
  const bool legacy_regex =
      (mask & Bit(Key::kRegex)) && type_of(Key::kRegex) == od::json_type::string &&
      ((count == 1) || (count == 2 && (mask & Bit(Key::kOptions)) &&
                        type_of(Key::kOptions) == od::json_type::string));
  if (legacy_regex) {
    std::string_view pattern, options;
    for (auto result : obj) {
      od::field field;
      if (auto e = std::move(result).get(field)) return SimdError(e);
      Key k = ClassifyKey(RawKeyText(field.key().raw(), &scratch_));
      ROCKDOC_RETURN_IF_ERROR(
          GetString(field.value(), "$regex", k == Key::kRegex ? &pattern : &options));
    }
    if (pattern.find('\0') != std::string_view::npos ||
        options.find('\0') != std::string_view::npos) {
      return Error(at, "a regular expression may not contain NUL");
    }
    SortedOptions(options, &options_);
    b_->AppendRegex(key, pattern, options_);
    return Status::OK();
  }

  // A plain document ({"$ref": .., "$id": ..}, {"$type": "string"}, ...).
  b_->OpenDocument(key);
  ROCKDOC_RETURN_IF_ERROR(ParseFields(obj, /*top_level=*/false, depth + 1));
  b_->Close();
  return Status::OK();
}

Status Reader::GetString(od::value& value, std::string_view what, std::string_view* out) {
  const char* at = value.raw_json_token().data();
  od::json_type type;
  if (auto e = value.type().get(type)) return SimdError(e, at);
  if (type != od::json_type::string) return Error(at, std::string(what) + " must be a string");
  if (auto e = value.get_string().get(*out)) return SimdError(e, at);
  return Status::OK();
}

Status Reader::ParseObjectIdValue(od::value& value, ObjectId* oid) {
  std::string_view hex;
  const char* at = value.raw_json_token().data();
  ROCKDOC_RETURN_IF_ERROR(GetString(value, "$oid", &hex));
  // By hand rather than ObjectId::FromHex: no StatusOr on the hot path of
  // every exported _id.
  uint8_t bytes[ObjectId::kSize];
  bool ok = hex.size() == 2 * ObjectId::kSize;
  for (size_t i = 0; ok && i < ObjectId::kSize; ++i) {
    int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    bytes[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  if (!ok) return Error(at, "$oid must be 24 hex digits");
  *oid = ObjectId(bytes);
  return Status::OK();
}

Status Reader::ParseTimestamp(od::value& value, const char* at, BsonTimestamp* ts) {
  od::object obj;
  if (value.get_object().get(obj) != simdjson::SUCCESS) {
    return Error(at, "$timestamp must be an object {t, i}");
  }
  bool have_t = false, have_i = false;
  for (auto result : obj) {
    od::field field;
    if (auto e = std::move(result).get(field)) return SimdError(e);
    std::string_view k = RawKeyText(field.key().raw(), &scratch_);
    const char* vat = field.value().raw_json_token().data();
    uint32_t* slot;
    if (k == "t" && !have_t) {
      have_t = true;
      slot = &ts->t;
    } else if (k == "i" && !have_i) {
      have_i = true;
      slot = &ts->i;
    } else {
      return Error(vat, "$timestamp takes exactly the fields t and i");
    }
    od::json_type type;
    if (auto e = field.value().type().get(type)) return SimdError(e, vat);
    uint64_t v;
    if (type != od::json_type::number || field.value().get_uint64().get(v) != simdjson::SUCCESS ||
        v > std::numeric_limits<uint32_t>::max()) {
      return Error(vat, "$timestamp t and i must be integers in [0, 2^32)");
    }
    *slot = static_cast<uint32_t>(v);
  }
  if (!have_t || !have_i) return Error(at, "$timestamp takes exactly the fields t and i");
  return Status::OK();
}

Status Reader::ParseDate(od::value& value, const char* at, int64_t* millis) {
  od::json_type type;
  if (auto e = value.type().get(type)) return SimdError(e, at);
  if (type == od::json_type::string) {
    std::string_view s;
    if (auto e = value.get_string().get(s)) return SimdError(e, at);
    if (!json_internal::ParseIsoDate(s, millis)) {
      return Error(at, "$date string must be an ISO-8601 date-time with Z or an offset");
    }
    return Status::OK();
  }
  if (type == od::json_type::object) {
    od::object obj;
    if (auto e = value.get_object().get(obj)) return SimdError(e, at);
    int n = 0;
    for (auto result : obj) {
      od::field field;
      if (auto e = std::move(result).get(field)) return SimdError(e);
      if (++n > 1 || ClassifyKey(RawKeyText(field.key().raw(), &scratch_)) != Key::kNumberLong) {
        return Error(at, "$date object must be {\"$numberLong\": \"<millis>\"}");
      }
      std::string_view digits;
      ROCKDOC_RETURN_IF_ERROR(GetString(field.value(), "$numberLong", &digits));
      if (!ParseInt64Strict(digits, millis)) return Error(at, "$numberLong must be a 64-bit integer");
    }
    if (n == 1) return Status::OK();
  }
  // The corpus rejects the legacy {"$date": <number>} (top.json parseErrors).
  return Error(at, "$date must be an ISO-8601 string or {\"$numberLong\": ..}");
}

Status Reader::ParseWrapper(std::string_view key, od::object& obj, const char* at,
                            uint32_t mask, int count, int depth) {
  auto only = [&](uint32_t keys, int n) { return mask == keys && count == n; };

  // Two-key wrappers, read in whatever key order they come.
  if (only(Bit(Key::kCode) | Bit(Key::kScope), 2)) {
    std::string_view code;
    BsonBuilder scope;
    bool have_scope = false;
    for (auto result : obj) {
      od::field field;
      if (auto e = std::move(result).get(field)) return SimdError(e);
      Key k = ClassifyKey(RawKeyText(field.key().raw(), &scratch_));
      if (k == Key::kCode) {
        ROCKDOC_RETURN_IF_ERROR(GetString(field.value(), "$code", &code));
      } else {
        const char* vat = field.value().raw_json_token().data();
        od::object scope_obj;
        if (field.value().get_object().get(scope_obj) != simdjson::SUCCESS) {
          return Error(vat, "$scope must be an object");
        }
        BsonBuilder* outer = b_;
        b_ = &scope;
        Status s = ParseFields(scope_obj, /*top_level=*/false, depth + 1);
        b_ = outer;
        ROCKDOC_RETURN_IF_ERROR(s);
        have_scope = true;
      }
    }
    if (!have_scope) return Error(at, "$scope must be an object");
    Document scope_doc = std::move(scope).Build();
    b_->AppendCodeWithScope(key, code, scope_doc.view());
    return Status::OK();
  }
  if (only(Bit(Key::kBinary) | Bit(Key::kType), 2)) {
    // Legacy {"$binary": "<base64>", "$type": "<hex>"}.
    std::string_view data, subtype;
    const char* data_at = at;
    for (auto result : obj) {
      od::field field;
      if (auto e = std::move(result).get(field)) return SimdError(e);
      Key k = ClassifyKey(RawKeyText(field.key().raw(), &scratch_));
      if (k == Key::kBinary) {
        data_at = field.value().raw_json_token().data();
        ROCKDOC_RETURN_IF_ERROR(GetString(field.value(), "legacy $binary", &data));
      } else {
        ROCKDOC_RETURN_IF_ERROR(GetString(field.value(), "$type", &subtype));
      }
    }
    int hi = subtype.size() == 2 ? HexValue(subtype[0]) : 0;
    int lo = subtype.empty() ? -1 : HexValue(subtype.back());
    if (subtype.empty() || subtype.size() > 2 || hi < 0 || lo < 0) {
      return Error(at, "$type must be one or two hex digits");
    }
    bytes_.clear();
    if (!json_internal::DecodeBase64(data, &bytes_)) return Error(data_at, "invalid base64");
    b_->AppendBinary(key, static_cast<BinarySubtype>(hi * 16 + lo), bytes_);
    return Status::OK();
  }

  // Every other wrapper has exactly one key.
  if (count != 1 || (mask & (mask - 1)) != 0) {
    return Error(at, "malformed type wrapper: wrong set of '$' keys");
  }
  for (auto result : obj) {
    od::field field;
    if (auto e = std::move(result).get(field)) return SimdError(e);
    Key k = ClassifyKey(RawKeyText(field.key().raw(), &scratch_));
    return ParseSingleWrapper(key, k, field.value(), at);
  }
  return Error(at, "malformed type wrapper: wrong set of '$' keys");
}

Status Reader::ParseSingleWrapper(std::string_view key, Key k, od::value& value, const char* at) {
  const char* vat = value.raw_json_token().data();
  std::string_view s;
  switch (k) {
    case Key::kOid: {
      ObjectId oid;
      ROCKDOC_RETURN_IF_ERROR(ParseObjectIdValue(value, &oid));
      b_->AppendObjectId(key, oid);
      break;
    }
    case Key::kSymbol:
      ROCKDOC_RETURN_IF_ERROR(GetString(value, "$symbol", &s));
      b_->AppendSymbol(key, s);
      break;
    case Key::kCode:
      ROCKDOC_RETURN_IF_ERROR(GetString(value, "$code", &s));
      b_->AppendCode(key, s);
      break;
    case Key::kNumberInt: {
      ROCKDOC_RETURN_IF_ERROR(GetString(value, "$numberInt", &s));
      int64_t v;
      if (!ParseInt64Strict(s, &v) || v < std::numeric_limits<int32_t>::min() ||
          v > std::numeric_limits<int32_t>::max()) {
        return Error(vat, "$numberInt must be a 32-bit integer in a string");
      }
      b_->AppendInt32(key, static_cast<int32_t>(v));
      break;
    }
    case Key::kNumberLong: {
      ROCKDOC_RETURN_IF_ERROR(GetString(value, "$numberLong", &s));
      int64_t v;
      if (!ParseInt64Strict(s, &v)) return Error(vat, "$numberLong must be a 64-bit integer in a string");
      b_->AppendInt64(key, v);
      break;
    }
    case Key::kNumberDouble: {
      ROCKDOC_RETURN_IF_ERROR(GetString(value, "$numberDouble", &s));
      double d;
      if (!ParseDoubleStrict(s, &d)) return Error(vat, "$numberDouble must be a decimal number in a string");
      b_->AppendDouble(key, d);
      break;
    }
    case Key::kNumberDecimal: {
      ROCKDOC_RETURN_IF_ERROR(GetString(value, "$numberDecimal", &s));
      auto d = Decimal128::FromString(s);
      if (!d.ok()) return Error(vat, "invalid $numberDecimal: " + std::string(d.status().message()));
      b_->AppendDecimal128(key, *d);
      break;
    }
    case Key::kUuid: {
      ROCKDOC_RETURN_IF_ERROR(GetString(value, "$uuid", &s));
      bytes_.clear();
      if (!ParseUuid(s, &bytes_)) return Error(vat, "$uuid must be 32 hex digits in the 8-4-4-4-12 form");
      b_->AppendBinary(key, BinarySubtype::kUuid, bytes_);
      break;
    }
    case Key::kBinary: {
      od::object bin;
      if (value.get_object().get(bin) != simdjson::SUCCESS) {
        return Error(vat, "$binary must be {\"base64\": .., \"subType\": ..}");
      }
      std::string_view data, subtype;
      bool have_data = false, have_subtype = false;
      for (auto result : bin) {
        od::field f;
        if (auto e = std::move(result).get(f)) return SimdError(e);
        std::string_view name = RawKeyText(f.key().raw(), &scratch_);
        if (name == "base64" && !have_data) {
          have_data = true;
          ROCKDOC_RETURN_IF_ERROR(GetString(f.value(), "$binary.base64", &data));
        } else if (name == "subType" && !have_subtype) {
          have_subtype = true;
          ROCKDOC_RETURN_IF_ERROR(GetString(f.value(), "$binary.subType", &subtype));
        } else {
          return Error(vat, "$binary takes exactly the fields base64 and subType");
        }
      }
      if (!have_data || !have_subtype) {
        return Error(vat, "$binary takes exactly the fields base64 and subType");
      }
      int hi = subtype.size() == 2 ? HexValue(subtype[0]) : 0;
      int lo = subtype.empty() ? -1 : HexValue(subtype.back());
      if (subtype.empty() || subtype.size() > 2 || hi < 0 || lo < 0) {
        return Error(vat, "$binary.subType must be one or two hex digits");
      }
      bytes_.clear();
      if (!json_internal::DecodeBase64(data, &bytes_)) return Error(vat, "invalid base64 in $binary");
      b_->AppendBinary(key, static_cast<BinarySubtype>(hi * 16 + lo), bytes_);
      break;
    }
    case Key::kTimestamp: {
      BsonTimestamp ts;
      ROCKDOC_RETURN_IF_ERROR(ParseTimestamp(value, vat, &ts));
      b_->AppendTimestamp(key, ts);
      break;
    }
    case Key::kRegularExpression: {
      od::object re;
      if (value.get_object().get(re) != simdjson::SUCCESS) {
        return Error(vat, "$regularExpression must be {\"pattern\": .., \"options\": ..}");
      }
      std::string_view pattern, options;
      bool have_pattern = false, have_options = false;
      for (auto result : re) {
        od::field f;
        if (auto e = std::move(result).get(f)) return SimdError(e);
        std::string_view name = RawKeyText(f.key().raw(), &scratch_);
        if (name == "pattern" && !have_pattern) {
          have_pattern = true;
          ROCKDOC_RETURN_IF_ERROR(GetString(f.value(), "pattern", &pattern));
        } else if (name == "options" && !have_options) {
          have_options = true;
          ROCKDOC_RETURN_IF_ERROR(GetString(f.value(), "options", &options));
        } else {
          return Error(vat, "$regularExpression takes exactly the fields pattern and options");
        }
      }
      if (!have_pattern || !have_options) {
        return Error(vat, "$regularExpression takes exactly the fields pattern and options");
      }
      if (pattern.find('\0') != std::string_view::npos ||
          options.find('\0') != std::string_view::npos) {
        return Error(vat, "a regular expression may not contain NUL");
      }
      SortedOptions(options, &options_);
      b_->AppendRegex(key, pattern, options_);
      break;
    }
    case Key::kDbPointer: {
      od::object ptr;
      if (value.get_object().get(ptr) != simdjson::SUCCESS) {
        return Error(vat, "$dbPointer must be {\"$ref\": .., \"$id\": ..}");
      }
      std::string_view ns;
      ObjectId oid;
      bool have_ref = false, have_id = false;
      for (auto result : ptr) {
        od::field f;
        if (auto e = std::move(result).get(f)) return SimdError(e);
        Key pk = ClassifyKey(RawKeyText(f.key().raw(), &scratch_));
        if (pk == Key::kRef && !have_ref) {
          have_ref = true;
          ROCKDOC_RETURN_IF_ERROR(GetString(f.value(), "$dbPointer.$ref", &ns));
        } else if (pk == Key::kId && !have_id) {
          have_id = true;
          // The id must be an ObjectId wrapper, exactly {"$oid": ".."}.
          const char* id_at = f.value().raw_json_token().data();
          od::object id_obj;
          if (f.value().get_object().get(id_obj) != simdjson::SUCCESS) {
            return Error(id_at, "$dbPointer.$id must be {\"$oid\": ..}");
          }
          int n = 0;
          for (auto id_result : id_obj) {
            od::field idf;
            if (auto e = std::move(id_result).get(idf)) return SimdError(e);
            if (++n > 1 || ClassifyKey(RawKeyText(idf.key().raw(), &scratch_)) != Key::kOid) {
              return Error(id_at, "$dbPointer.$id must be {\"$oid\": ..}");
            }
            ROCKDOC_RETURN_IF_ERROR(ParseObjectIdValue(idf.value(), &oid));
          }
          if (n != 1) return Error(id_at, "$dbPointer.$id must be {\"$oid\": ..}");
        } else {
          return Error(vat, "$dbPointer takes exactly the fields $ref and $id");
        }
      }
      if (!have_ref || !have_id) return Error(vat, "$dbPointer takes exactly the fields $ref and $id");
      b_->AppendDbPointer(key, ns, oid);
      break;
    }
    case Key::kDate: {
      int64_t millis;
      ROCKDOC_RETURN_IF_ERROR(ParseDate(value, vat, &millis));
      b_->AppendDateTime(key, millis);
      break;
    }
    case Key::kMinKey:
    case Key::kMaxKey: {
      int64_t one = 0;
      od::json_type type;
      if (auto e = value.type().get(type)) return SimdError(e, vat);
      if (type != od::json_type::number || value.get_int64().get(one) != simdjson::SUCCESS ||
          one != 1) {
        return Error(vat, k == Key::kMinKey ? "$minKey must be 1" : "$maxKey must be 1");
      }
      if (k == Key::kMinKey) {
        b_->AppendMinKey(key);
      } else {
        b_->AppendMaxKey(key);
      }
      break;
    }
    case Key::kUndefined: {
      bool v = false;
      od::json_type type;
      if (auto e = value.type().get(type)) return SimdError(e, vat);
      if (type != od::json_type::boolean || value.get_bool().get(v) != simdjson::SUCCESS || !v) {
        return Error(vat, "$undefined must be true");
      }
      b_->AppendUndefined(key);
      break;
    }
    default:
      return Error(at, "malformed type wrapper: wrong set of '$' keys");
  }
  return Status::OK();
}

}  // namespace

namespace {
// One reader per thread: the parser's buffers and the padded copy of the
// input are reused from call to call.
Reader& ThreadReader() {
  thread_local Reader reader;
  return reader;
}
}  // namespace

StatusOr<Document> FromJson(std::string_view json) { return ThreadReader().Parse(json, false); }

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING,
              "the public padding must cover what simdjson reads past the end");

StatusOr<Document> FromPaddedJson(std::string_view json) {
  return ThreadReader().Parse(json, true);
}

}  // namespace rockdoc

// BSON to JSON text: Extended JSON v2 canonical and relaxed, and mongosh's
// printing. One pass over validated bytes, appending to one string whose
// capacity is reserved up front from the BSON size.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "json/json_internal.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"

namespace rockdoc {
namespace {

using json_internal::kHexDigits;

// Bytes that a JSON string must escape: control characters, '"' and '\'.
// In shell (single-quoted) strings '\'' is escaped instead of '"'.
constexpr bool NeedsEscape(uint8_t c, char quote) { return c < 0x20 || c == '\\' || c == quote; }

void AppendQuoted(std::string_view s, char quote, std::string* out) {
  out->push_back(quote);
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    const char* run = p;
    while (p < end && !NeedsEscape(static_cast<uint8_t>(*p), quote)) ++p;
    out->append(run, p - run);
    if (p == end) break;
    uint8_t c = static_cast<uint8_t>(*p++);
    if (c == '\\' || c == static_cast<uint8_t>(quote)) {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else {
      char esc[6] = {'\\', 'u', '0', '0', kHexDigits[c >> 4], kHexDigits[c & 15]};
      out->append(esc, 6);
    }
  }
  out->push_back(quote);
}

template <typename Int>
void AppendInt(Int v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr - buf);
}

// The text of a finite double: the shortest digits that read back to the
// same double, in fixed notation for decimal exponents in [min_fixed,
// max_fixed] and scientific outside. Extended JSON (point_zero) always has a
// '.' or an exponent so that a reader sees a double and not an integer:
// 1.0, -0.0, 0.0001, 1e-05, 1.2345678921232e+18, 1e+300. The shell prints
// as JavaScript does (1, 0.000001, 1e-7 from -7 down, 1e+21 from 21 up).
void AppendDouble(double d, int min_fixed, int max_fixed, bool point_zero, std::string* out) {
  char sci[32];
  auto r = std::to_chars(sci, sci + sizeof(sci), d, std::chars_format::scientific);
  std::string_view text(sci, r.ptr - sci);
  size_t e_pos = text.find('e');
  int exponent = 0;
  std::from_chars(text.data() + e_pos + 1 + (text[e_pos + 1] == '+'), text.data() + text.size(),
                  exponent);
  if (exponent < min_fixed || exponent > max_fixed) {
    if (point_zero) {
      out->append(text);
    } else {
      // JavaScript writes "1e-7", not "1e-07".
      size_t digits = e_pos + 2;
      while (digits + 1 < text.size() && text[digits] == '0') ++digits;
      out->append(text.substr(0, e_pos + 2));
      out->append(text.substr(digits));
    }
    return;
  }
  bool negative = text[0] == '-';
  // The significant digits without sign and point.
  char digits[24];
  size_t n = 0;
  for (size_t i = negative; i < e_pos; ++i) {
    if (text[i] != '.') digits[n++] = text[i];
  }
  if (negative) out->push_back('-');
  if (exponent >= 0) {
    size_t int_digits = static_cast<size_t>(exponent) + 1;
    if (n <= int_digits) {
      out->append(digits, n);
      out->append(int_digits - n, '0');
      if (point_zero) out->append(".0");
    } else {
      out->append(digits, int_digits);
      out->push_back('.');
      out->append(digits + int_digits, n - int_digits);
    }
  } else {
    out->append("0.");
    out->append(static_cast<size_t>(-exponent - 1), '0');
    out->append(digits, n);
  }
}

// The non-finite spellings shared by Extended JSON and the shell.
bool AppendNonFinite(double d, std::string* out) {
  if (std::isnan(d)) {
    out->append("NaN");
  } else if (std::isinf(d)) {
    out->append(d > 0 ? "Infinity" : "-Infinity");
  } else {
    return false;
  }
  return true;
}

bool IsShellIdentifier(std::string_view key) {
  if (key.empty()) return false;
  auto start = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
  };
  if (!start(key[0])) return false;
  for (char c : key) {
    if (!start(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

class Writer {
 public:
  Writer(JsonFormat format, std::string* out) : format_(format), out_(out) {}

  void Document(DocumentView doc, bool is_array) {
    auto it = doc.begin(), end = doc.end();
    if (it == end) {
      out_->append(is_array ? "[]" : "{}");
      return;
    }
    const bool shell = format_ == JsonFormat::kShell;
    out_->push_back(is_array ? '[' : '{');
    if (shell) out_->push_back(' ');
    bool first = true;
    for (; it != end; ++it) {
      Element e = *it;
      if (!first) out_->append(", ");
      first = false;
      if (!is_array) {
        if (shell && IsShellIdentifier(e.key())) {
          out_->append(e.key());
        } else {
          String(e.key());
        }
        out_->append(": ");
      }
      Value(e);
    }
    if (shell) out_->push_back(' ');
    out_->push_back(is_array ? ']' : '}');
  }

  void Value(const Element& e) {
    if (format_ == JsonFormat::kShell) return ShellValue(e);
    const bool relaxed = format_ == JsonFormat::kRelaxed;
    switch (e.type()) {
      case BsonType::kDouble: {
        double d = e.Double();
        if (relaxed && std::isfinite(d)) {
          AppendExtendedDouble(d);
          return;
        }
        out_->append("{\"$numberDouble\": \"");
        if (!AppendNonFinite(d, out_)) AppendExtendedDouble(d);
        out_->append("\"}");
        return;
      }
      case BsonType::kString:
        return String(e.String());
      case BsonType::kDocument:
        return Document(e.Document(), false);
      case BsonType::kArray:
        return Document(e.Array(), true);
      case BsonType::kBinary: {
        BinaryView bin = e.Binary();
        out_->append("{\"$binary\": {\"base64\": \"");
        json_internal::AppendBase64(bin.data, out_);
        out_->append("\", \"subType\": \"");
        HexByte(static_cast<uint8_t>(bin.subtype));
        out_->append("\"}}");
        return;
      }
      case BsonType::kUndefined:
        out_->append("{\"$undefined\": true}");
        return;
      case BsonType::kObjectId:
        out_->append("{\"$oid\": \"");
        out_->append(e.Oid().ToHex());
        out_->append("\"}");
        return;
      case BsonType::kBool:
        out_->append(e.Bool() ? "true" : "false");
        return;
      case BsonType::kDateTime: {
        int64_t millis = e.DateTime();
        if (relaxed && json_internal::DateYearInRange(millis, 1970, 9999)) {
          out_->append("{\"$date\": \"");
          json_internal::AppendIsoDate(millis, /*always_millis=*/false, out_);
          out_->append("\"}");
          return;
        }
        out_->append("{\"$date\": {\"$numberLong\": \"");
        AppendInt(millis, out_);
        out_->append("\"}}");
        return;
      }
      case BsonType::kNull:
        out_->append("null");
        return;
      case BsonType::kRegex: {
        RegexView re = e.Regex();
        out_->append("{\"$regularExpression\": {\"pattern\": ");
        String(re.pattern);
        out_->append(", \"options\": ");
        SortedOptions(re.options);
        out_->append("}}");
        return;
      }
      case BsonType::kDbPointer: {
        DbPointerView ptr = e.DbPointer();
        out_->append("{\"$dbPointer\": {\"$ref\": ");
        String(ptr.ns);
        out_->append(", \"$id\": {\"$oid\": \"");
        out_->append(ptr.id.ToHex());
        out_->append("\"}}}");
        return;
      }
      case BsonType::kCode:
        out_->append("{\"$code\": ");
        String(e.String());
        out_->push_back('}');
        return;
      case BsonType::kSymbol:
        out_->append("{\"$symbol\": ");
        String(e.String());
        out_->push_back('}');
        return;
      case BsonType::kCodeWithScope:
        out_->append("{\"$code\": ");
        String(e.CodeWithScopeCode());
        out_->append(", \"$scope\": ");
        Document(e.CodeWithScopeScope(), false);
        out_->push_back('}');
        return;
      case BsonType::kInt32:
        if (relaxed) return AppendInt(e.Int32(), out_);
        out_->append("{\"$numberInt\": \"");
        AppendInt(e.Int32(), out_);
        out_->append("\"}");
        return;
      case BsonType::kTimestamp: {
        BsonTimestamp ts = e.Timestamp();
        out_->append("{\"$timestamp\": {\"t\": ");
        AppendInt(ts.t, out_);
        out_->append(", \"i\": ");
        AppendInt(ts.i, out_);
        out_->append("}}");
        return;
      }
      case BsonType::kInt64:
        if (relaxed) return AppendInt(e.Int64(), out_);
        out_->append("{\"$numberLong\": \"");
        AppendInt(e.Int64(), out_);
        out_->append("\"}");
        return;
      case BsonType::kDecimal128:
        out_->append("{\"$numberDecimal\": \"");
        out_->append(e.Decimal().ToString());
        out_->append("\"}");
        return;
      case BsonType::kMinKey:
        out_->append("{\"$minKey\": 1}");
        return;
      case BsonType::kMaxKey:
        out_->append("{\"$maxKey\": 1}");
        return;
      case BsonType::kEod:
        break;
    }
    out_->append("null");  // a missing element: nothing better to print
  }

 private:
  void String(std::string_view s) { AppendQuoted(s, format_ == JsonFormat::kShell ? '\'' : '"', out_); }

  void AppendExtendedDouble(double d) { AppendDouble(d, -5, 15, /*point_zero=*/true, out_); }

  void HexByte(uint8_t b) {
    out_->push_back(kHexDigits[b >> 4]);
    out_->push_back(kHexDigits[b & 15]);
  }

  // Options sorted, as the spec asks of generators: BSON from elsewhere may
  // hold them in any order (the corpus's degenerate "mix"). Options with
  // non-ASCII bytes stay as they are: sorting bytes would tear UTF-8 apart
  // (the reader does the same).
  void SortedOptions(std::string_view options) {
    char buf[64];
    bool ascii = true;
    for (char c : options) ascii &= static_cast<unsigned char>(c) < 0x80;
    if (!ascii) {
      String(options);
      return;
    }
    if (options.size() > sizeof(buf)) {
      std::string sorted(options);
      std::sort(sorted.begin(), sorted.end());
      String(sorted);
      return;
    }
    std::memcpy(buf, options.data(), options.size());
    std::sort(buf, buf + options.size());
    String(std::string_view(buf, options.size()));
  }

  void ShellDouble(double d) {
    if (AppendNonFinite(d, out_)) return;
    AppendDouble(d, -6, 20, /*point_zero=*/false, out_);
  }

  void ShellValue(const Element& e) {
    switch (e.type()) {
      case BsonType::kDouble:
        return ShellDouble(e.Double());
      case BsonType::kString:
        return String(e.String());
      case BsonType::kDocument:
        return Document(e.Document(), false);
      case BsonType::kArray:
        return Document(e.Array(), true);
      case BsonType::kBinary: {
        BinaryView bin = e.Binary();
        if (bin.subtype == BinarySubtype::kUuid && bin.data.size() == 16) {
          out_->append("UUID('");
          for (size_t i = 0; i < 16; ++i) {
            if (i == 4 || i == 6 || i == 8 || i == 10) out_->push_back('-');
            HexByte(static_cast<uint8_t>(bin.data[i]));
          }
          out_->append("')");
          return;
        }
        out_->append("Binary.createFromBase64('");
        json_internal::AppendBase64(bin.data, out_);
        out_->append("', ");
        AppendInt(static_cast<int>(bin.subtype), out_);
        out_->push_back(')');
        return;
      }
      case BsonType::kUndefined:
        out_->append("undefined");
        return;
      case BsonType::kObjectId:
        out_->append("ObjectId('");
        out_->append(e.Oid().ToHex());
        out_->append("')");
        return;
      case BsonType::kBool:
        out_->append(e.Bool() ? "true" : "false");
        return;
      case BsonType::kDateTime: {
        int64_t millis = e.DateTime();
        if (json_internal::DateYearInRange(millis, 0, 9999)) {
          out_->append("ISODate('");
          json_internal::AppendIsoDate(millis, /*always_millis=*/true, out_);
          out_->append("')");
        } else {
          out_->append("new Date(");
          AppendInt(millis, out_);
          out_->push_back(')');
        }
        return;
      }
      case BsonType::kNull:
        out_->append("null");
        return;
      case BsonType::kRegex: {
        RegexView re = e.Regex();
        // A JavaScript literal when it reads back the same; otherwise the
        // constructor, as mongosh does for flags JavaScript lacks.
        bool literal = !re.pattern.empty() &&
                       re.pattern.find_first_of("/\n\r") == std::string_view::npos &&
                       re.options.find_first_not_of("dgimsuy") == std::string_view::npos;
        if (literal) {
          out_->push_back('/');
          out_->append(re.pattern);
          out_->push_back('/');
          out_->append(re.options);
        } else {
          out_->append("BSONRegExp(");
          String(re.pattern);
          out_->append(", ");
          SortedOptions(re.options);
          out_->push_back(')');
        }
        return;
      }
      case BsonType::kDbPointer: {
        DbPointerView ptr = e.DbPointer();
        out_->append("DBPointer(");
        String(ptr.ns);
        out_->append(", ObjectId('");
        out_->append(ptr.id.ToHex());
        out_->append("'))");
        return;
      }
      case BsonType::kCode:
        out_->append("Code(");
        String(e.String());
        out_->push_back(')');
        return;
      case BsonType::kSymbol:
        out_->append("BSONSymbol(");
        String(e.String());
        out_->push_back(')');
        return;
      case BsonType::kCodeWithScope:
        out_->append("Code(");
        String(e.CodeWithScopeCode());
        out_->append(", ");
        Document(e.CodeWithScopeScope(), false);
        out_->push_back(')');
        return;
      case BsonType::kInt32:
        return AppendInt(e.Int32(), out_);
      case BsonType::kTimestamp: {
        BsonTimestamp ts = e.Timestamp();
        out_->append("Timestamp({ t: ");
        AppendInt(ts.t, out_);
        out_->append(", i: ");
        AppendInt(ts.i, out_);
        out_->append(" })");
        return;
      }
      case BsonType::kInt64:
        out_->append("Long('");
        AppendInt(e.Int64(), out_);
        out_->append("')");
        return;
      case BsonType::kDecimal128:
        out_->append("Decimal128('");
        out_->append(e.Decimal().ToString());
        out_->append("')");
        return;
      case BsonType::kMinKey:
        out_->append("MinKey()");
        return;
      case BsonType::kMaxKey:
        out_->append("MaxKey()");
        return;
      case BsonType::kEod:
        break;
    }
    out_->append("undefined");
  }

  JsonFormat format_;
  std::string* out_;
};

}  // namespace

std::string ToJson(DocumentView doc, JsonFormat format) {
  std::string out;
  // Extended JSON of typical documents is 1.5-2.5x their BSON size.
  out.reserve(doc.size() * 2 + 16);
  Writer(format, &out).Document(doc, /*is_array=*/false);
  return out;
}

std::string ValueToJson(const Element& value, JsonFormat format) {
  std::string out;
  Writer(format, &out).Value(value);
  return out;
}

}  // namespace rockdoc

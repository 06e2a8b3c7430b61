// Legacy (shell-mode) Extended JSON to v2 (tools/legacy_json.h): a
// recursive-descent reader of one value that writes its v2 text.
#include "tools/legacy_json.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include "tools/formats.h"

namespace rockdoc::tools {
namespace {

constexpr int kMaxDepth = 200;  // nesting, as the BSON depth limits go

std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back(i + 2 < bytes.size() ? kAlphabet[n & 63] : '=');
  }
  return out;
}

// `s` as a JSON string literal.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out.push_back(kHex[(c >> 4) & 15]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

class Converter {
 public:
  explicit Converter(std::string_view in) : in_(in) {}

  StatusOr<std::string> Run() {
    std::string out;
    ROCKDOC_RETURN_IF_ERROR(Value(&out, 0));
    SkipSpace();
    if (pos_ != in_.size()) return Error("the end of the value");
    return out;
  }

 private:
  // A value, appended to `out` as v2 JSON.
  Status Value(std::string* out, int depth) {
    if (depth > kMaxDepth) return Error("less nesting (over " + std::to_string(kMaxDepth) + " levels)");
    SkipSpace();
    if (pos_ >= in_.size()) return Error("a value");
    char c = in_[pos_];
    if (c == '{') return Object(out, depth);
    if (c == '[') return Array(out, depth);
    if (c == '"' || c == '\'') {
      ROCKDOC_ASSIGN_OR_RETURN(std::string s, String());
      *out += Quote(s);
      return Status::OK();
    }
    if (c == '/') return Regex(out);
    if (c == '-' && in_.substr(pos_, 9) == "-Infinity") {
      pos_ += 9;
      *out += R"({"$numberDouble": "-Infinity"})";
      return Status::OK();
    }
    if (c == '-' || c == '+' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) {
      ROCKDOC_ASSIGN_OR_RETURN(std::string n, Number());
      *out += n;
      return Status::OK();
    }
    if (IsIdentStart(c)) return Identified(out, depth);
    return Error("a value");
  }

  // An object's or array's items after its opening bracket: `item` reads
  // one; items are separated by ',' and end at `close`.
  template <typename Item>
  Status Items(char open, char close, std::string* out, const Item& item) {
    ++pos_;
    out->push_back(open);
    SkipSpace();
    if (Peek() != close) {
      while (true) {
        ROCKDOC_RETURN_IF_ERROR(item());
        SkipSpace();
        if (Peek() != ',') break;
        ++pos_;
        out->append(", ");
      }
      if (Peek() != close) return Error(std::string("',' or '") + close + "'");
    }
    ++pos_;
    out->push_back(close);
    return Status::OK();
  }

  Status Object(std::string* out, int depth) {
    return Items('{', '}', out, [&]() -> Status {
      SkipSpace();
      std::string key;
      if (Peek() == '"' || Peek() == '\'') {
        ROCKDOC_ASSIGN_OR_RETURN(key, String());
      } else if (IsIdentStart(Peek())) {
        key = Identifier();
      } else {
        return Error("a field name");
      }
      *out += Quote(key);
      SkipSpace();
      if (Peek() != ':') return Error("':' after field name " + Quote(key));
      ++pos_;
      out->append(": ");
      return Value(out, depth + 1);
    });
  }

  Status Array(std::string* out, int depth) {
    return Items('[', ']', out, [&]() { return Value(out, depth + 1); });
  }

  // A single- or double-quoted string's value (JSON's escapes, and \' ).
  StatusOr<std::string> String() {
    const char quote = in_[pos_++];
    std::string s;
    while (pos_ < in_.size() && in_[pos_] != quote) {
      char c = in_[pos_++];
      if (c != '\\') {
        s.push_back(c);
        continue;
      }
      if (pos_ >= in_.size()) break;
      char e = in_[pos_++];
      switch (e) {
        case 'n': s.push_back('\n'); break;
        case 't': s.push_back('\t'); break;
        case 'r': s.push_back('\r'); break;
        case 'b': s.push_back('\b'); break;
        case 'f': s.push_back('\f'); break;
        case 'v': s.push_back('\v'); break;
        case '0': s.push_back('\0'); break;
        case 'x': {  // \xHH, as JavaScript
          std::string byte;
          if (!HexDecode(in_.substr(pos_, 2), &byte) || byte.size() != 1) {
            return Error("two hex digits after \\x");
          }
          AppendUtf8(static_cast<unsigned char>(byte[0]), &s);
          pos_ += 2;
          break;
        }
        case 'u': {
          ROCKDOC_ASSIGN_OR_RETURN(uint32_t cp, CodeUnit());
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a surrogate pair's first half
            if (in_.substr(pos_, 2) != "\\u") return Error("the second half of a surrogate pair");
            pos_ += 2;
            ROCKDOC_ASSIGN_OR_RETURN(uint32_t low, CodeUnit());
            if (low < 0xDC00 || low > 0xDFFF) return Error("the second half of a surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Error("a code point, not half a surrogate pair");
          }
          AppendUtf8(cp, &s);
          break;
        }
        default: s.push_back(e);  // \" \' \\ \/ and JavaScript's identity escapes
      }
    }
    if (pos_ >= in_.size()) return Error(std::string("a closing ") + quote);
    ++pos_;
    return s;
  }

  // /pattern/flags -> $regularExpression (options sorted, as v2 wants).
  Status Regex(std::string* out) {
    ++pos_;  // '/'
    std::string pattern;
    bool in_class = false;
    while (pos_ < in_.size() && (in_[pos_] != '/' || in_class)) {
      char c = in_[pos_++];
      if (c == '\\' && pos_ < in_.size()) {
        pattern.push_back(c);
        c = in_[pos_++];
      } else if (c == '[') {
        in_class = true;
      } else if (c == ']') {
        in_class = false;
      }
      if (c == '\n') return Error("the end of the regular expression before the line ends");
      pattern.push_back(c);
    }
    if (pos_ >= in_.size()) return Error("the closing '/' of a regular expression");
    ++pos_;
    std::string flags;
    while (pos_ < in_.size() && std::isalpha(static_cast<unsigned char>(in_[pos_]))) {
      flags.push_back(in_[pos_++]);
    }
    std::sort(flags.begin(), flags.end());
    *out += R"({"$regularExpression": {"pattern": )" + Quote(pattern) +
            R"(, "options": )" + Quote(flags) + "}}";
    return Status::OK();
  }

  StatusOr<std::string> Number() {
    size_t start = pos_;
    if (in_[pos_] == '+') ++start;  // JSON has no '+'
    ++pos_;
    while (pos_ < in_.size() && (std::isdigit(static_cast<unsigned char>(in_[pos_])) ||
                                 std::strchr(".eE+-", in_[pos_]) != nullptr)) {
      ++pos_;
    }
    std::string n(in_.substr(start, pos_ - start));
    if (n.empty() || n == "-") return Error("a number");
    if (n[0] == '.') n.insert(0, "0");
    if (n.size() > 1 && n[0] == '-' && n[1] == '.') n.insert(1, "0");
    return n;
  }

  // A literal (true, undefined, MinKey, ...) or a constructor call.
  Status Identified(std::string* out, int depth) {
    const size_t start = pos_;
    std::string name = Identifier();
    if (name == "new") {
      SkipSpace();
      if (!IsIdentStart(Peek())) return Error("a constructor after 'new'");
      name = Identifier();
    }
    SkipSpace();
    const bool call = Peek() == '(';
    if (!call) {
      static const std::pair<const char*, const char*> kLiterals[] = {
          {"true", "true"},
          {"false", "false"},
          {"null", "null"},
          {"undefined", R"({"$undefined": true})"},
          {"NaN", R"({"$numberDouble": "NaN"})"},
          {"Infinity", R"({"$numberDouble": "Infinity"})"},
          {"MinKey", R"({"$minKey": 1})"},
          {"MaxKey", R"({"$maxKey": 1})"}};
      for (const auto& [literal, v2] : kLiterals) {
        if (name == literal) {
          *out += v2;
          return Status::OK();
        }
      }
      pos_ = start;
      return Error("a value (unknown name '" + name + "')");
    }
    ++pos_;  // '('
    // The arguments, each as v2 text, and the raw value of string ones.
    std::vector<std::string> args;
    std::vector<std::optional<std::string>> strings;
    SkipSpace();
    while (Peek() != ')') {
      SkipSpace();
      if (Peek() == '"' || Peek() == '\'') {
        ROCKDOC_ASSIGN_OR_RETURN(std::string s, String());
        strings.push_back(s);
        args.push_back(Quote(s));
      } else {
        std::string v;
        ROCKDOC_RETURN_IF_ERROR(Value(&v, depth + 1));
        strings.push_back(std::nullopt);
        args.push_back(std::move(v));
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipSpace();
        if (Peek() == ')') return Error("an argument after ',' in " + name + "()");
        continue;
      }
      if (Peek() != ')') return Error("',' or ')' in the arguments of " + name + "()");
    }
    ++pos_;  // ')'
    auto arity = [&](size_t n) -> Status {
      if (args.size() == n) return Status::OK();
      pos_ = start;
      return Error(name + "() with " + std::to_string(n) + " argument(s), not " +
                   std::to_string(args.size()));
    };
    auto string_arg = [&](size_t i) -> StatusOr<std::string> {
      if (!strings[i]) {
        pos_ = start;
        return Error("a string as argument " + std::to_string(i + 1) + " of " + name + "()");
      }
      return *strings[i];
    };
    // An integer argument, given as a number or a string of one.
    auto integer_arg = [&](size_t i) -> StatusOr<std::string> {
      std::string v = strings[i] ? *strings[i] : args[i];
      size_t digits = v[0] == '-' ? 1 : 0;
      if (v.size() == digits || !std::all_of(v.begin() + digits, v.end(), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
          })) {
        pos_ = start;
        return Error("an integer as argument " + std::to_string(i + 1) + " of " + name + "()");
      }
      return v;
    };
    auto binary = [&](std::string_view bytes, const std::string& subtype) {
      *out += R"({"$binary": {"base64": )" + Quote(Base64(bytes)) + R"(, "subType": )" +
              Quote(subtype) + "}}";
    };
    if (name == "ObjectId") {
      ROCKDOC_RETURN_IF_ERROR(arity(1));
      ROCKDOC_ASSIGN_OR_RETURN(std::string hex, string_arg(0));
      *out += R"({"$oid": )" + Quote(hex) + "}";
    } else if (name == "Date" || name == "ISODate") {
      ROCKDOC_RETURN_IF_ERROR(arity(1));
      if (strings[0]) {
        *out += R"({"$date": )" + Quote(*strings[0]) + "}";
      } else {
        ROCKDOC_ASSIGN_OR_RETURN(std::string ms, integer_arg(0));
        *out += R"({"$date": {"$numberLong": )" + Quote(ms) + "}}";
      }
    } else if (name == "NumberLong" || name == "NumberInt") {
      ROCKDOC_RETURN_IF_ERROR(arity(1));
      ROCKDOC_ASSIGN_OR_RETURN(std::string n, integer_arg(0));
      *out += std::string(name == "NumberLong" ? R"({"$numberLong": )" : R"({"$numberInt": )") +
              Quote(n) + "}";
    } else if (name == "NumberDecimal") {
      ROCKDOC_RETURN_IF_ERROR(arity(1));
      std::string v = strings[0] ? *strings[0] : args[0];
      *out += R"({"$numberDecimal": )" + Quote(v) + "}";
    } else if (name == "Timestamp") {
      ROCKDOC_RETURN_IF_ERROR(arity(2));
      ROCKDOC_ASSIGN_OR_RETURN(std::string t, integer_arg(0));
      ROCKDOC_ASSIGN_OR_RETURN(std::string i, integer_arg(1));
      *out += R"({"$timestamp": {"t": )" + t + R"(, "i": )" + i + "}}";
    } else if (name == "BinData" || name == "HexData") {
      ROCKDOC_RETURN_IF_ERROR(arity(2));
      ROCKDOC_ASSIGN_OR_RETURN(std::string sub, integer_arg(0));
      ROCKDOC_ASSIGN_OR_RETURN(std::string data, string_arg(1));
      long subtype = std::strtol(sub.c_str(), nullptr, 10);
      if (subtype < 0 || subtype > 255) return Error("a binary subtype 0..255");
      static constexpr char kHex[] = "0123456789abcdef";
      std::string sub_hex{kHex[subtype >> 4], kHex[subtype & 15]};
      if (name == "BinData") {
        *out += R"({"$binary": {"base64": )" + Quote(data) + R"(, "subType": )" + Quote(sub_hex) +
                "}}";
      } else {
        std::string bytes;
        if (!HexDecode(data, &bytes)) return Error("hex digits in HexData()");
        binary(bytes, sub_hex);
      }
    } else if (name == "UUID") {
      ROCKDOC_RETURN_IF_ERROR(arity(1));
      ROCKDOC_ASSIGN_OR_RETURN(std::string hex, string_arg(0));
      hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
      std::string bytes;
      if (hex.size() != 32 || !HexDecode(hex, &bytes)) return Error("32 hex digits in UUID()");
      binary(bytes, "04");
    } else if (name == "DBRef") {
      ROCKDOC_RETURN_IF_ERROR(arity(2));
      ROCKDOC_ASSIGN_OR_RETURN(std::string coll, string_arg(0));
      *out += R"({"$ref": )" + Quote(coll) + R"(, "$id": )" + args[1] + "}";
    } else if (name == "MinKey" || name == "MaxKey") {
      ROCKDOC_RETURN_IF_ERROR(arity(0));
      *out += name == "MinKey" ? R"({"$minKey": 1})" : R"({"$maxKey": 1})";
    } else if (name == "Symbol") {
      ROCKDOC_RETURN_IF_ERROR(arity(1));
      ROCKDOC_ASSIGN_OR_RETURN(std::string s, string_arg(0));
      *out += R"({"$symbol": )" + Quote(s) + "}";
    } else {
      pos_ = start;
      return Error("a value (" + name + "() is not a constructor rockdoc-import reads)");
    }
    return Status::OK();
  }

  // The four hex digits after "\u".
  StatusOr<uint32_t> CodeUnit() {
    std::string_view hex = in_.substr(pos_, 4);
    if (hex.size() != 4 || !std::all_of(hex.begin(), hex.end(), [](char h) {
          return std::isxdigit(static_cast<unsigned char>(h));
        })) {
      return Error("four hex digits after \\u");
    }
    pos_ += 4;
    return static_cast<uint32_t>(std::strtoul(std::string(hex).c_str(), nullptr, 16));
  }
  static void AppendUtf8(uint32_t cp, std::string* s) {
    if (cp < 0x80) {
      s->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      s->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  static bool IsIdentStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  }
  std::string Identifier() {
    size_t start = pos_;
    while (pos_ < in_.size() && (IsIdentStart(in_[pos_]) ||
                                 std::isdigit(static_cast<unsigned char>(in_[pos_])))) {
      ++pos_;
    }
    return std::string(in_.substr(start, pos_ - start));
  }
  char Peek() const { return pos_ < in_.size() ? in_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < in_.size() && std::isspace(static_cast<unsigned char>(in_[pos_]))) ++pos_;
  }
  Status Error(const std::string& expected) const {
    std::string found = pos_ < in_.size() ? "'" + std::string(in_.substr(pos_, 12)) + "'"
                                          : std::string("the end");
    return Status(ErrorCode::kFailedToParse, "legacy JSON at offset " + std::to_string(pos_) +
                                                 ": expected " + expected + ", found " + found);
  }

  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<std::string> LegacyJsonToV2(std::string_view text) { return Converter(text).Run(); }

std::string UpgradeLegacyJson(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  JsonStringTracker strings;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!strings.in_string() && c == '"' && text.substr(i, 7) == "\"$date\"") {
      size_t j = i + 7;
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j < text.size() && text[j] == ':') {
        size_t k = j + 1;
        while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
        size_t start = k;
        if (k < text.size() && text[k] == '-') ++k;
        while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
        bool integral = k > start && std::isdigit(static_cast<unsigned char>(text[k - 1])) &&
                        (k >= text.size() || (text[k] != '.' && text[k] != 'e' && text[k] != 'E'));
        if (integral) {
          out.append("\"$date\": {\"$numberLong\": \"");
          out.append(text.substr(start, k - start));
          out.append("\"}");
          i = k - 1;
          continue;
        }
      }
    }
    strings.Feed(c);
    out.push_back(c);
  }
  return out;
}


}  // namespace rockdoc::tools

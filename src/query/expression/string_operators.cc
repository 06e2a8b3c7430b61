// query/expression/string_operators.cc: the string operators ($concat,
// $substr*, $strLen*, $indexOf*, $split, $trim, $toUpper/$toLower,
// $strcasecmp, $replaceOne/$replaceAll, $regexMatch/$regexFind/
// $regexFindAll). Byte variants count UTF-8 bytes, CP variants code points;
// a byte index that falls inside a character is an error, as MongoDB's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "query/expression/expression_internal.h"
#include "query/regex.h"
#include "rockdoc/json.h"

namespace rockdoc::internal::expression_detail {

std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

StatusOr<std::string> CoerceToString(std::string_view op, const Value& v) {
  (void)op;
  if (IsNullish(v)) return std::string();
  const Element e = v.element();
  switch (e.type()) {
    case BsonType::kString:
    case BsonType::kCode:
    case BsonType::kSymbol: return std::string(e.String());
    case BsonType::kInt32: return std::to_string(e.Int32());
    case BsonType::kInt64: return std::to_string(e.Int64());
    case BsonType::kDouble: return FormatDouble(e.Double());
    case BsonType::kDecimal128: return e.Decimal().ToString();
    case BsonType::kDateTime: return FormatIsoDate(e.DateTime());
    case BsonType::kTimestamp:
      return "Timestamp(" + std::to_string(e.Timestamp().t) + ", " + std::to_string(e.Timestamp().i) + ")";
    default:
      return Failed(16007, "can't convert from BSON type " + TypeName(v) + " to String");
  }
}

namespace {

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) n += !IsContinuation(c);
  return n;
}

// The byte offset of code point `cp` in `s` (s.size() when past the end).
size_t ByteOfCodePoint(std::string_view s, int64_t cp) {
  size_t i = 0;
  for (; i < s.size() && cp > 0; --cp) {
    ++i;
    while (i < s.size() && IsContinuation(static_cast<unsigned char>(s[i]))) ++i;
  }
  return i;
}

StatusOr<Value> ConcatOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> values, EvaluateAll(args, vars));
  size_t total = 0;
  for (const Value& v : values) {
    if (IsNullish(v)) return NullValue();
    if (v.type() != BsonType::kString) {
      return Failed(16702, "$concat only supports strings, not " + TypeName(v));
    }
    total += v.element().String().size();
  }
  ROCKDOC_RETURN_IF_ERROR(CheckValueBytes(total + 5));  // + its length and NUL
  std::string out;
  out.reserve(total);
  for (const Value& v : values) out += v.element().String();
  return StringValue(out);
}

// $toUpper / $toLower: ASCII letters change (as MongoDB's, which leaves
// other characters alone); null and missing are "".
template <bool kUpper>
StatusOr<Value> CaseOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(std::string s, CoerceToString(kUpper ? "$toUpper" : "$toLower", v));
  for (char& c : s) {
    if (kUpper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!kUpper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return StringValue(s);
}

template <bool kBytes>
StatusOr<Value> StrLenOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  if (v.type() != BsonType::kString) {
    return Failed(kBytes ? 34473 : 34471, std::string(kBytes ? "$strLenBytes" : "$strLenCP") +
                                              " requires a string argument, found: " + TypeName(v));
  }
  const std::string_view s = v.element().String();
  return IntegerValue(kBytes ? static_cast<int64_t>(s.size()) : CodePoints(s));
}

// $substrBytes (and its old name $substr): [string, byte start, byte count];
// a negative start gives "", a negative count means "to the end".
StatusOr<Value> SubstrBytesOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  ROCKDOC_ASSIGN_OR_RETURN(std::string s, CoerceToString("$substrBytes", v[0]));
  if (!v[1].ok() || !v[1].element().IsNumber()) {
    return Failed(16034, "$substrBytes: starting index must be a numeric type (is BSON type " +
                             TypeName(v[1]) + ")");
  }
  if (!v[2].ok() || !v[2].element().IsNumber()) {
    return Failed(16035, "$substrBytes: length must be a numeric type (is BSON type " +
                             TypeName(v[2]) + ")");
  }
  const double start_d = v[1].element().NumberAsDouble();
  const double length_d = v[2].element().NumberAsDouble();
  if (start_d < 0 || static_cast<size_t>(start_d) >= s.size()) return StringValue("");
  const size_t start = static_cast<size_t>(start_d);
  if (IsContinuation(static_cast<unsigned char>(s[start]))) {
    return Failed(28656, "$substrBytes:  Invalid range, starting index is a UTF-8 continuation "
                         "byte.");
  }
  size_t length = length_d < 0 ? s.size() - start
                               : static_cast<size_t>(std::min<double>(length_d, static_cast<double>(s.size())));
  length = std::min(length, s.size() - start);
  if (start + length < s.size() && IsContinuation(static_cast<unsigned char>(s[start + length]))) {
    return Failed(28657, "$substrBytes:  Invalid range, ending index is in the middle of a UTF-8 "
                         "character.");
  }
  return StringValue(std::string_view(s).substr(start, length));
}

StatusOr<Value> SubstrCPOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  ROCKDOC_ASSIGN_OR_RETURN(std::string s, CoerceToString("$substrCP", v[0]));
  int64_t start = 0, length = 0;
  if (!v[1].ok() || !v[1].element().IsNumber()) {
    return Failed(34450, "$substrCP: starting index must be a numeric type (is BSON type " +
                             TypeName(v[1]) + ")");
  }
  if (!v[1].element().ExactInt64(&start) || start < std::numeric_limits<int32_t>::min() ||
      start > std::numeric_limits<int32_t>::max()) {
    return Failed(34451, "$substrCP: starting index cannot be represented as a 32-bit integral "
                         "value: " + Shown(v[1]));
  }
  if (!v[2].ok() || !v[2].element().IsNumber()) {
    return Failed(34452, "$substrCP: length must be a numeric type (is BSON type " +
                             TypeName(v[2]) + ")");
  }
  if (!v[2].element().ExactInt64(&length) || length < std::numeric_limits<int32_t>::min() ||
      length > std::numeric_limits<int32_t>::max()) {
    return Failed(34453, "$substrCP: length cannot be represented as a 32-bit integral value: " +
                             Shown(v[2]));
  }
  if (length < 0) return Failed(34454, "$substrCP: length must be a nonnegative integer.");
  if (start < 0) return Failed(34455, "$substrCP: the starting index must be nonnegative integer.");
  const size_t from = ByteOfCodePoint(s, start);
  const size_t to = from + ByteOfCodePoint(std::string_view(s).substr(from), length);
  return StringValue(std::string_view(s).substr(from, to - from));
}

// $indexOfBytes / $indexOfCP: [string, substring, start, end].
template <bool kBytes>
StatusOr<Value> IndexOfStringOp(const Args& args, const ExpressionVariables& vars) {
  const char* op = kBytes ? "$indexOfBytes" : "$indexOfCP";
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  if (IsNullish(v[0])) return NullValue();
  if (v[0].type() != BsonType::kString) {
    return Failed(kBytes ? 40091 : 40093, std::string(op) +
                                              " requires a string as the first argument, found: " +
                                              TypeName(v[0]));
  }
  if (v[1].type() != BsonType::kString) {
    return Failed(kBytes ? 40092 : 40094, std::string(op) +
                                              " requires a string as the second argument, found: " +
                                              TypeName(v[1]));
  }
  const std::string_view s = v[0].element().String(), needle = v[1].element().String();
  const int64_t size = kBytes ? static_cast<int64_t>(s.size()) : CodePoints(s);
  int64_t start = 0, end = size;
  if (v.size() >= 3) {
    ROCKDOC_ASSIGN_OR_RETURN(start, IntArg(op, "a starting index", v[2], 40096));
    if (start < 0) return Failed(40097, std::string(op) + " requires a nonnegative start index, found: " + Shown(v[2]));
  }
  if (v.size() == 4) {
    ROCKDOC_ASSIGN_OR_RETURN(end, IntArg(op, "an ending index", v[3], 40096));
    if (end < 0) return Failed(40097, std::string(op) + " requires a nonnegative end index, found: " + Shown(v[3]));
  }
  end = std::min(end, size);
  if (start > end) return Int32Value(-1);
  const size_t from = kBytes ? static_cast<size_t>(start) : ByteOfCodePoint(s, start);
  const size_t to = kBytes ? static_cast<size_t>(end) : ByteOfCodePoint(s, end);
  const size_t at = s.substr(0, to).find(needle, from);
  if (at == std::string_view::npos) return Int32Value(-1);
  return IntegerValue(kBytes ? static_cast<int64_t>(at) : CodePoints(s.substr(0, at)));
}

StatusOr<Value> SplitOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  if (IsNullish(v[0]) || IsNullish(v[1])) return NullValue();
  if (v[0].type() != BsonType::kString) {
    return Failed(40085, "$split requires an expression that evaluates to a string as a first "
                         "argument, found: " + TypeName(v[0]));
  }
  if (v[1].type() != BsonType::kString) {
    return Failed(40086, "$split requires an expression that evaluates to a string as a second "
                         "argument, found: " + TypeName(v[1]));
  }
  const std::string_view s = v[0].element().String(), sep = v[1].element().String();
  if (sep.empty()) return Failed(40087, "$split requires a non-empty separator");
  return Make([&](BsonBuilder& b) {
    b.OpenArray("v");
    size_t from = 0;
    for (;;) {
      const size_t at = s.find(sep, from);
      b.AppendString("", s.substr(from, at == std::string_view::npos ? at : at - from));
      if (at == std::string_view::npos) break;
      from = at + sep.size();
    }
    b.Close();
  });
}

// The code points of `s`, each as its UTF-8 bytes.
std::vector<std::string_view> CodePointsOf(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    while (j < s.size() && IsContinuation(static_cast<unsigned char>(s[j]))) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// $trim / $ltrim / $rtrim {input, chars}: by code point; without chars,
// MongoDB's whitespace (NUL, space, \t \n \v \f \r, no-break space and the
// Unicode spaces U+1680, U+2000..U+200A).
template <int kEnds>  // 1 left, 2 right, 3 both
StatusOr<Value> TrimOp(const Args& args, const ExpressionVariables& vars) {
  const char* op = kEnds == 3 ? "$trim" : kEnds == 1 ? "$ltrim" : "$rtrim";
  ROCKDOC_ASSIGN_OR_RETURN(Value input, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value chars, EvaluateOptional(args[1], vars));
  if (IsNullish(input)) return NullValue();
  if (input.type() != BsonType::kString) {
    return Failed(50699, std::string(op) + " requires its input to be a string, got " +
                             Shown(input) + " (of type " + TypeName(input) + ") instead.");
  }
  std::vector<std::string_view> trim;
  static const char* const kSpaces[] = {
      " ", "\t", "\n", "\v", "\f", "\r", "\xC2\xA0",
      "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x81", "\xE2\x80\x82", "\xE2\x80\x83",
      "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86", "\xE2\x80\x87", "\xE2\x80\x88",
      "\xE2\x80\x89", "\xE2\x80\x8A"};
  if (args[1] != nullptr) {
    if (IsNullish(chars)) return NullValue();
    if (chars.type() != BsonType::kString) {
      return Failed(50700, std::string(op) + " requires 'chars' to be a string, got " +
                               Shown(chars) + " (of type " + TypeName(chars) + ") instead.");
    }
    trim = CodePointsOf(chars.element().String());
  } else {
    trim.emplace_back("\0", 1);
    for (const char* space : kSpaces) trim.emplace_back(space);
  }
  const std::vector<std::string_view> cps = CodePointsOf(input.element().String());
  auto trimmed = [&](std::string_view cp) {
    return std::find(trim.begin(), trim.end(), cp) != trim.end();
  };
  size_t begin = 0, end = cps.size();
  if (kEnds & 1) {
    while (begin < end && trimmed(cps[begin])) ++begin;
  }
  if (kEnds & 2) {
    while (end > begin && trimmed(cps[end - 1])) --end;
  }
  std::string out;
  for (size_t i = begin; i < end; ++i) out += cps[i];
  return StringValue(out);
}

StatusOr<Value> StrcasecmpOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  ROCKDOC_ASSIGN_OR_RETURN(std::string a, CoerceToString("$strcasecmp", v[0]));
  ROCKDOC_ASSIGN_OR_RETURN(std::string b, CoerceToString("$strcasecmp", v[1]));
  auto upper = [](std::string s) {
    for (char& c : s) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return s;
  };
  const int c = upper(a).compare(upper(b));
  return Int32Value(c < 0 ? -1 : c > 0 ? 1 : 0);
}

// $replaceOne / $replaceAll {input, find, replacement}.
template <bool kAll>
StatusOr<Value> ReplaceOp(const Args& args, const ExpressionVariables& vars) {
  const char* op = kAll ? "$replaceAll" : "$replaceOne";
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  static const char* const kNames[] = {"input", "find", "replacement"};
  for (int i = 0; i < 3; ++i) {
    if (!IsNullish(v[i]) && v[i].type() != BsonType::kString) {
      return Failed(51746, std::string(op) + " requires that '" + kNames[i] +
                               "' be a string, found: " + Shown(v[i]));
    }
  }
  for (const Value& x : v) {
    if (IsNullish(x)) return NullValue();
  }
  const std::string_view s = v[0].element().String(), find = v[1].element().String(),
                         with = v[2].element().String();
  std::string out;
  size_t from = 0;
  for (;;) {
    const size_t at = s.find(find, from);
    if (at == std::string_view::npos) break;
    out.append(s.substr(from, at - from)).append(with);
    from = at + find.size();
    if (!kAll) break;
    if (find.empty()) {  // an empty `find` matches before every character
      if (from >= s.size()) break;
      size_t next = from + 1;
      while (next < s.size() && IsContinuation(static_cast<unsigned char>(s[next]))) ++next;
      out.append(s.substr(from, next - from));
      from = next;
    }
  }
  out.append(s.substr(std::min(from, s.size())));
  if (kAll && find.empty() && s.empty()) out = std::string(with);
  return StringValue(out);
}

// ---- regular expressions ----

enum class RegexOp { kMatch, kFind, kFindAll };

// The compiled regex of {input, regex, options}; nullptr when the input or
// regex is null (the operator's null answer).
StatusOr<std::shared_ptr<const Regex>> RegexOf(const char* op, const Value& input,
                                               const Value& regex, const Value& options) {
  if (!IsNullish(input) && input.type() != BsonType::kString) {
    return Failed(51104, std::string(op) + " needs 'input' to be of type string");
  }
  std::string pattern, flags;
  if (regex.type() == BsonType::kRegex) {
    pattern = std::string(regex.element().Regex().pattern);
    flags = std::string(regex.element().Regex().options);
  } else if (regex.type() == BsonType::kString) {
    pattern = std::string(regex.element().String());
  } else if (!IsNullish(regex)) {
    return Failed(51105, std::string(op) + " needs 'regex' to be of type string or regex");
  }
  if (!IsNullish(options)) {
    if (options.type() != BsonType::kString) {
      return Failed(51106, std::string(op) + " needs 'options' to be of type string");
    }
    if (!flags.empty()) {
      return Failed(51107, std::string(op) + " found regex option(s) specified in both 'regex' "
                                             "and 'option' fields");
    }
    flags = std::string(options.element().String());
  }
  if (IsNullish(input) || IsNullish(regex)) return std::shared_ptr<const Regex>();
  StatusOr<std::shared_ptr<const Regex>> compiled = Regex::Compile(pattern, flags);
  if (!compiled.ok()) {
    return Failed(51111, std::string(op) + ": " + std::string(compiled.status().message()));
  }
  return compiled;
}

// {match, idx, captures} of one match.
void AppendMatch(BsonBuilder& b, std::string_view key, std::string_view s,
                 const std::vector<Regex::Span>& groups) {
  b.OpenDocument(key);
  b.AppendString("match", s.substr(groups[0].begin, groups[0].end - groups[0].begin));
  b.AppendInt32("idx", static_cast<int32_t>(CodePoints(s.substr(0, groups[0].begin))));
  b.OpenArray("captures");
  for (size_t i = 1; i < groups.size(); ++i) {
    if (groups[i].begin < 0) {
      b.AppendNull("");
    } else {
      b.AppendString("", s.substr(groups[i].begin, groups[i].end - groups[i].begin));
    }
  }
  b.Close();
  b.Close();
}

template <RegexOp kOp>
StatusOr<Value> RegexOpFn(const Args& args, const ExpressionVariables& vars) {
  const char* op = kOp == RegexOp::kMatch ? "$regexMatch" : kOp == RegexOp::kFind ? "$regexFind" : "$regexFindAll";
  ROCKDOC_ASSIGN_OR_RETURN(Value input, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value regex, args[1]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value options, EvaluateOptional(args[2], vars));
  ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<const Regex> re, RegexOf(op, input, regex, options));
  std::vector<Regex::Span> groups;
  if (re == nullptr) {
    if (kOp == RegexOp::kMatch) return BoolValue(false);
    if (kOp == RegexOp::kFind) return NullValue();
    return ArrayOf({});
  }
  const std::string_view s = input.element().String();
  if (kOp == RegexOp::kMatch) {
    ROCKDOC_ASSIGN_OR_RETURN(bool matched, re->PartialMatch(s, op));
    return BoolValue(matched);
  }
  if (kOp == RegexOp::kFind) {
    ROCKDOC_ASSIGN_OR_RETURN(bool found, re->Search(s, 0, &groups, op));
    if (!found) return NullValue();
    BsonBuilder b;
    AppendMatch(b, "v", s, groups);
    Document d = std::move(b).Build();
    return Value::FromElement(d.Get("v"));
  }
  Status failed;
  Value all = Make([&](BsonBuilder& b) {
    b.OpenArray("v");
    size_t from = 0;
    while (from <= s.size()) {
      StatusOr<bool> found = re->Search(s, from, &groups, op);
      if (!found.ok()) failed = found.status();
      if (!found.ok() || !*found) break;
      AppendMatch(b, "", s, groups);
      if (groups[0].end > groups[0].begin) {
        from = static_cast<size_t>(groups[0].end);
      } else {  // an empty match: step over one character
        from = static_cast<size_t>(groups[0].end) + 1;
        while (from < s.size() && IsContinuation(static_cast<unsigned char>(s[from]))) ++from;
      }
    }
    b.Close();
  });
  if (!failed.ok()) return failed;
  return all;
}

}  // namespace

void AddStringOperators(OperatorTable* positional, NamedOperatorTable* named) {
  positional->insert({
      {"$concat", {&ConcatOp, 0, SIZE_MAX}},
      {"$toUpper", {&CaseOp<true>, 1, 1}},
      {"$toLower", {&CaseOp<false>, 1, 1}},
      {"$strLenCP", {&StrLenOp<false>, 1, 1}},
      {"$strLenBytes", {&StrLenOp<true>, 1, 1}},
      {"$substr", {&SubstrBytesOp, 3, 3}},
      {"$substrBytes", {&SubstrBytesOp, 3, 3}},
      {"$substrCP", {&SubstrCPOp, 3, 3}},
      {"$indexOfBytes", {&IndexOfStringOp<true>, 2, 4}},
      {"$indexOfCP", {&IndexOfStringOp<false>, 2, 4}},
      {"$split", {&SplitOp, 2, 2}},
      {"$strcasecmp", {&StrcasecmpOp, 2, 2}},
  });
  named->insert({
      {"$trim", {&TrimOp<3>, {"input", "chars"}, 1, 50696, 50694, 50695}},
      {"$ltrim", {&TrimOp<1>, {"input", "chars"}, 1, 50696, 50694, 50695}},
      {"$rtrim", {&TrimOp<2>, {"input", "chars"}, 1, 50696, 50694, 50695}},
      {"$replaceOne", {&ReplaceOp<false>, {"input", "find", "replacement"}, 3, 51751, 51750, 51749}},
      {"$replaceAll", {&ReplaceOp<true>, {"input", "find", "replacement"}, 3, 51751, 51750, 51749}},
      {"$regexMatch", {&RegexOpFn<RegexOp::kMatch>, {"input", "regex", "options"}, 2, 51103, 31024, 31022}},
      {"$regexFind", {&RegexOpFn<RegexOp::kFind>, {"input", "regex", "options"}, 2, 51103, 31024, 31022}},
      {"$regexFindAll", {&RegexOpFn<RegexOp::kFindAll>, {"input", "regex", "options"}, 2, 51103, 31024, 31022}},
  });
}

}  // namespace rockdoc::internal::expression_detail

// Export and import in mongoexport's and mongoimport's formats
// (rockdoc/tools.h): JSON lines, JSON arrays, CSV and TSV.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "rockdoc/json.h"
#include "rockdoc/tools.h"
#include "tools/formats.h"
#include "tools/legacy_json.h"
#include "tools/progress.h"
#include "tools/streams.h"

namespace rockdoc::tools {
namespace {

void Log(std::ostream* log, const std::string& line) {
  if (log != nullptr) *log << LogTimestamp() << '\t' << line << '\n';
}

// ---- export ----

// Go's json.Indent(dst, src, "", "\t") of compact JSON, as mongoexport
// --pretty writes.
std::string Indent(std::string_view compact) {
  std::string out;
  int depth = 0;
  JsonStringTracker strings;
  auto newline = [&]() {
    out.push_back('\n');
    out.append(static_cast<size_t>(depth), '\t');
  };
  for (size_t i = 0; i < compact.size(); ++i) {
    char c = compact[i];
    if (strings.Feed(c)) {
      out.push_back(c);
      continue;
    }
    switch (c) {
      case '{':
      case '[':
        out.push_back(c);
        if (i + 1 < compact.size() && (compact[i + 1] == '}' || compact[i + 1] == ']')) {
          out.push_back(compact[++i]);
        } else {
          ++depth;
          newline();
        }
        break;
      case '}':
      case ']':
        --depth;
        newline();
        out.push_back(c);
        break;
      case ',':
        out.push_back(c);
        newline();
        break;
      case ':':
        out.append(": ");
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// A value as mongoexport writes it in a CSV cell: strings as they are,
// numbers (Decimal128 too) and booleans bare, ObjectId(hex), dates in ISO-8601, documents
// and arrays as relaxed Extended JSON; a missing value is empty.
std::string CsvCell(const Element& e) {
  switch (e.type()) {
    case BsonType::kEod:
    case BsonType::kNull:
    case BsonType::kUndefined:
      return "";
    case BsonType::kString:
    case BsonType::kSymbol:
    case BsonType::kCode:
      return std::string(e.String());
    case BsonType::kObjectId:
      return "ObjectId(" + e.Oid().ToHex() + ")";
    case BsonType::kBool:
      return e.Bool() ? "true" : "false";
    case BsonType::kInt32:
      return std::to_string(e.Int32());
    case BsonType::kInt64:
      return std::to_string(e.Int64());
    case BsonType::kDecimal128:
      // Its plain string, as mongoexport ("1.10", not {"$numberDecimal":
      // ...}, which imported back as that text). Imported without a type it
      // becomes a double (1.1); a `price.decimal()` column (--columnsHaveTypes)
      // keeps the exact value.
      return e.Decimal().ToString();
    case BsonType::kDateTime: {
      // ISO-8601 with milliseconds, UTC ("2020-01-02T03:04:05.000Z"), for
      // years 0 to 9999; other dates as Extended JSON.
      int64_t ms = e.DateTime();
      int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
      int milli = static_cast<int>(ms - secs * 1000);
      std::time_t t = static_cast<std::time_t>(secs);
      std::tm tm;
      if (gmtime_r(&t, &tm) != nullptr && tm.tm_year >= -1900 && tm.tm_year <= 9999 - 1900) {
        char buf[40];
        std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, milli);
        return buf;
      }
      return CompactJson(ValueToJson(e, JsonFormat::kRelaxed));
    }
    default:
      return CompactJson(ValueToJson(e, JsonFormat::kRelaxed));
  }
}

// Go's encoding/csv quoting rule.
std::string CsvQuote(const std::string& cell, char delimiter) {
  bool quote = !cell.empty() && (cell[0] == ' ' || cell[0] == '\t');
  for (char c : cell) {
    if (c == delimiter || c == '"' || c == '\n' || c == '\r') quote = true;
  }
  if (!quote) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// ---- import ----

struct Parsed {
  Document doc;
  uint64_t line = 0;  // where in the input it starts
};

// Receives each parsed document and the line it starts on.
using Emit = std::function<Status(Document doc, uint64_t line)>;

// The longest JSON text of one document: a 16 MiB document of escaped
// control characters (\u0000, six bytes each) fits; past it the text is
// not a document the server could hold, whatever follows.
constexpr size_t kMaxDocumentText = size_t{128} << 20;

// Splits JSON input into its documents as mongoimport's streaming decoder
// does: a sequence of documents separated by white space (one per line as
// mongoexport writes them, or spanning lines as --pretty writes them), or
// with `array` one JSON array of documents. Holds one document's text at a
// time. Errors name the file and the line where the document starts.
Status ParseJson(const std::string& name, ByteReader* in, bool array, bool legacy,
                 const Emit& emit) {
  in->SkipBom();
  uint64_t line = 1;
  auto get = [&]() {
    int c = in->Get();
    if (c == '\n') ++line;
    return c;
  };
  auto skip_space = [&]() {
    int c;
    while ((c = in->Peek()) != -1 && std::isspace(c)) get();
    return c;
  };
  auto fail = [&](uint64_t at, const std::string& what) {
    return Status(ErrorCode::kFailedToParse, name + ":" + std::to_string(at) + ": " + what);
  };
  auto found = [](int c) {
    return c == -1 ? std::string("the end of the input") : "'" + std::string(1, char(c)) + "'";
  };
  std::string text;
  // One document: from its '{' to the bracket that closes it.
  auto read_document = [&]() -> Status {
    const uint64_t start = line;
    text.clear();
    JsonStringTracker strings(/*single_quotes=*/legacy);
    // Legacy text has regular expression literals, whose brackets do not
    // count either: a '/' where a value starts opens one.
    char last = 0;  // the last byte outside strings and white space
    bool in_regex = false, regex_escape = false, regex_class = false;
    int depth = 0;
    bool done = false;
    // A run of buffered bytes at a time: the document's text is appended
    // and its lines counted per run, not per byte.
    for (std::string_view run = in->Available(); !run.empty() && !done; run = in->Available()) {
      size_t i = 0;
      for (; i < run.size() && !done; ++i) {
        const char c = run[i];
        if (in_regex) {
          if (regex_escape) {
            regex_escape = false;
          } else if (c == '\\') {
            regex_escape = true;
          } else if (c == '[') {
            regex_class = true;
          } else if (c == ']') {
            regex_class = false;
          } else if (c == '/' && !regex_class) {
            in_regex = false;
          } else if (c == '\n') {
            in_regex = false;  // not a regular expression: the converter says so
          }
          continue;
        }
        if (strings.Feed(c)) continue;
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
        if (legacy && c == '/' && (last == ':' || last == '[' || last == ',' || last == '(')) {
          in_regex = true;
          regex_escape = regex_class = false;
          continue;
        }
        last = c;
        if (c == '{' || c == '[') {
          ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
          done = true;
        }
      }
      text.append(run.data(), i);
      line += static_cast<uint64_t>(std::count(run.begin(), run.begin() + static_cast<long>(i), '\n'));
      in->Consume(i);
      if (text.size() > kMaxDocumentText) {
        return fail(start, "a document's JSON text is over " +
                               std::to_string(kMaxDocumentText >> 20) + " MiB");
      }
    }
    ROCKDOC_RETURN_IF_ERROR(in->status());
    if (legacy) {
      auto v2 = LegacyJsonToV2(text);
      if (!v2.ok()) return fail(start, std::string(v2.status().message()));
      text = *std::move(v2);
    }
    // Most documents have no {"$date": <ms>} to upgrade: no copy for them.
    if (text.find("\"$date\"") != std::string::npos) text = UpgradeLegacyJson(text);
    auto doc = FromJson(text);
    if (!doc.ok()) return fail(start, std::string(doc.status().message()));
    return emit(*std::move(doc), start);
  };
  if (!array) {
    for (int c = skip_space(); c != -1; c = skip_space()) {
      if (c != '{') return fail(line, "expected a document ('{'), found " + found(c));
      ROCKDOC_RETURN_IF_ERROR(read_document());
    }
    return in->status();
  }
  int c = skip_space();
  if (c != '[') return fail(line, "expected a JSON array ('['), found " + found(c));
  get();
  c = skip_space();
  if (c == ']') {
    get();
  } else {
    for (uint64_t n = 1;; ++n) {
      if (c != '{') {
        return fail(line, "element " + std::to_string(n) + " of the array is not a document (found " +
                              found(c) + ")");
      }
      ROCKDOC_RETURN_IF_ERROR(read_document());
      c = skip_space();
      if (c == ']') {
        get();
        break;
      }
      if (c != ',') {
        return fail(line, "expected ',' or ']' after element " + std::to_string(n) + ", found " +
                              found(c));
      }
      get();
      c = skip_space();
    }
  }
  c = skip_space();
  if (c != -1) return fail(line, "text after the JSON array: " + found(c));
  return in->status();
}

// One CSV/TSV record's cells. Go's encoding/csv rules (RFC 4180): quoted
// cells may hold the delimiter, newlines and doubled quotes; a quote inside
// an unquoted cell is an error. TSV has no quoting.
StatusOr<bool> NextRecord(ByteReader* in, char delim, bool quoting, uint64_t* line_no,
                          std::vector<std::string>* cells) {
  cells->clear();
  if (in->Peek() == -1) {
    ROCKDOC_RETURN_IF_ERROR(in->status());
    return false;
  }
  std::string cell;
  bool quoted = false, after_quote = false, cell_start = true;
  const uint64_t start_line = *line_no + 1;
  for (int ci = in->Get(); ci != -1; ci = in->Get()) {
    char c = static_cast<char>(ci);
    if (quoted) {
      if (c == '"') {
        if (in->Peek() == '"') {
          cell.push_back('"');
          in->Get();
        } else {
          quoted = false;
          after_quote = true;
        }
      } else {
        if (c == '\n') ++*line_no;
        cell.push_back(c);
      }
      continue;
    }
    if (c == delim) {
      cells->push_back(std::move(cell));
      cell.clear();
      cell_start = true;
      after_quote = false;
      continue;
    }
    if (c == '\n' || c == '\r') {
      if (c == '\r' && in->Peek() == '\n') in->Get();
      ++*line_no;
      cells->push_back(std::move(cell));
      return true;
    }
    if (quoting && c == '"') {
      if (cell_start) {
        quoted = true;
        cell_start = false;
        continue;
      }
      return Status(ErrorCode::kFailedToParse,
                    "line " + std::to_string(start_line) + ": bare \" in non-quoted field");
    }
    if (after_quote) {
      return Status(ErrorCode::kFailedToParse,
                    "line " + std::to_string(start_line) + ": extraneous \" in field");
    }
    cell_start = false;
    cell.push_back(c);
  }
  ROCKDOC_RETURN_IF_ERROR(in->status());
  if (quoted) {
    return Status(ErrorCode::kFailedToParse,
                  "line " + std::to_string(start_line) + ": quoted field not closed");
  }
  ++*line_no;
  cells->push_back(std::move(cell));
  return true;
}

enum class ColumnType {
  kAuto, kString, kInt32, kInt64, kDouble, kDecimal, kBoolean, kBinaryBase64, kBinaryBase32, kBinaryHex,
  kDate
};

struct Column {
  std::string name;
  ColumnType type = ColumnType::kAuto;
  std::string layout;  // kDate: a Go time layout
};

// The elements of Go's time layouts that date()/date_go() columns accept
// (Go's reference time Mon Jan 2 15:04:05 MST 2006), longest first.
constexpr std::string_view kLayoutTokens[] = {
    "Z07:00", "-07:00", "Z0700", "-0700", "January", "2006", "Jan", "15", "01", "02", "03", "04",
    "05", "06", "PM", "pm", "_2", "1", "2", "3", "4", "5"};

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Parses `text` by a Go layout into milliseconds since the epoch; false
// when it does not match. Unsupported layout elements are refused when the
// column is declared (CheckLayout).
bool ParseGoTime(std::string_view layout, std::string_view text, int64_t* millis) {
  int64_t year = 1, month = 1, day = 1, hour = 0, minute = 0, second = 0, frac_ms = 0;
  int64_t offset_s = 0;
  bool pm = false, has_pm = false;
  size_t t = 0;
  auto digits = [&](size_t min_n, size_t max_n, int64_t* out) {
    size_t n = 0;
    int64_t v = 0;
    while (n < max_n && t + n < text.size() && std::isdigit(static_cast<unsigned char>(text[t + n]))) {
      v = v * 10 + (text[t + n] - '0');
      ++n;
    }
    if (n < min_n) return false;
    t += n;
    *out = v;
    return true;
  };
  static const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                  "July",    "August",   "September", "October", "November", "December"};
  size_t l = 0;
  while (l < layout.size()) {
    // Fractional seconds: ".000" / ".999" (any count).
    if (layout[l] == '.' && l + 1 < layout.size() && (layout[l + 1] == '0' || layout[l + 1] == '9')) {
      char z = layout[l + 1];
      size_t n = 1;
      while (l + n < layout.size() && layout[l + n] == z) ++n;
      l += n;
      if (t < text.size() && text[t] == '.') {
        ++t;
        size_t start = t;
        int64_t v = 0;
        while (t < text.size() && std::isdigit(static_cast<unsigned char>(text[t]))) {
          if (t - start < 3) v = v * 10 + (text[t] - '0');
          ++t;
        }
        if (t == start) return false;
        for (size_t k = t - start; k < 3; ++k) v *= 10;
        frac_ms = v;
      } else if (z == '0') {
        return false;
      }
      continue;
    }
    std::string_view token;
    for (std::string_view tok : kLayoutTokens) {
      if (layout.substr(l, tok.size()) == tok) {
        token = tok;
        break;
      }
    }
    if (token.empty()) {
      if (t >= text.size() || text[t] != layout[l]) return false;
      ++t;
      ++l;
      continue;
    }
    l += token.size();
    if (token == "2006") {
      if (!digits(4, 4, &year)) return false;
    } else if (token == "06") {
      if (!digits(2, 2, &year)) return false;
      year += year >= 69 ? 1900 : 2000;
    } else if (token == "01" || token == "1") {
      if (!digits(token.size(), 2, &month)) return false;
    } else if (token == "January" || token == "Jan") {
      bool found = false;
      for (int m = 0; m < 12 && !found; ++m) {
        std::string_view name = kMonths[m];
        if (token == "Jan") name = name.substr(0, 3);
        if (EqualsIgnoringAsciiCase(text.substr(t, name.size()), name)) {  // as Go's
          month = m + 1;
          t += name.size();
          found = true;
        }
      }
      if (!found) return false;
    } else if (token == "02" || token == "2" || token == "_2") {
      if (token == "_2" && t < text.size() && text[t] == ' ') ++t;
      if (!digits(token == "02" ? 2 : 1, 2, &day)) return false;
    } else if (token == "15") {
      if (!digits(1, 2, &hour)) return false;  // Go: one or two digits
    } else if (token == "03" || token == "3") {
      if (!digits(token.size(), 2, &hour)) return false;
    } else if (token == "04" || token == "4") {
      if (!digits(token.size(), 2, &minute)) return false;
    } else if (token == "05" || token == "5") {
      if (!digits(token.size(), 2, &second)) return false;
    } else if (token == "PM" || token == "pm") {
      std::string_view ap = text.substr(t, 2);
      if (ap == "PM" || ap == "pm") {
        pm = true;
      } else if (ap != "AM" && ap != "am") {
        return false;
      }
      has_pm = true;
      t += 2;
    } else {  // zone offsets
      if (token[0] == 'Z' && t < text.size() && text[t] == 'Z') {
        ++t;
        continue;
      }
      if (t >= text.size() || (text[t] != '+' && text[t] != '-')) return false;
      int sign = text[t] == '-' ? -1 : 1;
      ++t;
      int64_t hh = 0, mm = 0;
      if (!digits(2, 2, &hh)) return false;
      if (token.find(':') != std::string_view::npos) {
        if (t >= text.size() || text[t] != ':') return false;
        ++t;
      }
      if (!digits(2, 2, &mm)) return false;
      offset_s = sign * (hh * 3600 + mm * 60);
    }
  }
  if (t != text.size()) return false;
  if (has_pm) {
    if (hour < 1 || hour > 12) return false;
    hour = hour % 12 + (pm ? 12 : 0);
  }
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1] || hour > 23 || minute > 59 ||
      second > 59) {
    return false;
  }
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month == 2 && day == 29 && !leap) return false;
  int64_t secs = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second -
                 offset_s;
  *millis = secs * 1000 + frac_ms;
  return true;
}

// A date format of another system, as the Go layout that means the same:
// date_ms() takes Microsoft's custom date and time format specifiers (SQL
// Server's FORMAT, .NET), date_oracle() Oracle's datetime format elements
// (TO_DATE; case-insensitive). `tokens` maps each to Go's element, longest
// first; an empty Go element is one rockdoc cannot read (weekdays, zone
// names, ...): NotImplemented. Between elements, only separators stand for
// themselves (a letter or digit there would read as a Go element).
struct DateToken {
  std::string_view token;
  std::string_view go;
};

StatusOr<std::string> ToGoLayout(std::string_view format, const DateToken* tokens, size_t n,
                                  bool case_insensitive, const std::string& spec) {
  auto matches = [&](size_t at, std::string_view tok) {
    if (format.size() - at < tok.size()) return false;
    for (size_t k = 0; k < tok.size(); ++k) {
      char c = format[at + k];
      if (case_insensitive) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (c != tok[k]) return false;
    }
    return true;
  };
  std::string layout;
  for (size_t i = 0; i < format.size();) {
    const DateToken* hit = nullptr;
    for (size_t k = 0; k < n && hit == nullptr; ++k) {
      if (matches(i, tokens[k].token)) hit = &tokens[k];
    }
    if (hit != nullptr) {
      if (hit->go.empty()) {
        return Status(ErrorCode::kNotImplemented, "the date format element '" +
                                                      std::string(format.substr(i, hit->token.size())) +
                                                      "' is not supported by rockdoc ('" + spec + "')");
      }
      if (hit->go.find_first_not_of('0') == std::string_view::npos &&
          (layout.empty() || layout.back() != '.')) {
        return BadValue("fractional seconds must follow a '.' in '" + spec + "'");
      }
      layout.append(hit->go);
      i += hit->token.size();
      continue;
    }
    char c = format[i];
    if (c == '"' || c == '\'' || c == '\\' || c == '%') {
      return Status(ErrorCode::kNotImplemented,
                    "quoted text and escapes in date formats are not supported by rockdoc ('" +
                        spec + "')");
    }
    if (std::isalnum(static_cast<unsigned char>(c)) && c != 'T') {
      return BadValue("'" + std::string(1, c) + "' is not a date format element in '" + spec + "'");
    }
    layout.push_back(c);
    ++i;
  }
  return layout;
}

// Microsoft's custom format specifiers.
constexpr DateToken kMsTokens[] = {
    {"dddd", ""},      {"ddd", ""},    {"dd", "02"},    {"d", "2"},          {"MMMM", "January"},
    {"MMM", "Jan"},    {"MM", "01"},   {"M", "1"},      {"yyyy", "2006"},    {"yy", "06"},
    {"HH", "15"},      {"H", "15"},    {"hh", "03"},    {"h", "3"},          {"mm", "04"},
    {"m", "4"},        {"ss", "05"},   {"s", "5"},      {"fff", "000"},      {"ff", "00"},
    {"f", "0"},        {"tt", "PM"},   {"zzz", "-07:00"}, {"zz", ""},        {"z", ""},
    {"K", ""},         {"gg", ""},     {"g", ""},       {"FFF", ""},         {"FF", ""},
    {"F", ""},         {"t", ""},      {"y", ""}};
// Oracle's datetime format elements (upper-cased before matching).
constexpr DateToken kOracleTokens[] = {
    {"YYYY", "2006"}, {"YY", "06"},      {"MONTH", "January"}, {"MON", "Jan"}, {"MM", "01"},
    {"DDD", ""},      {"DD", "02"},      {"DAY", ""},          {"DY", ""},     {"D", ""},
    {"HH24", "15"},   {"HH12", "03"},    {"HH", "03"},         {"MI", "04"},   {"SSSSS", ""},
    {"SS", "05"},     {"FF3", "000"},    {"FF2", "00"},        {"FF1", "0"},   {"FF", ""},
    {"AM", "PM"},     {"PM", "PM"},      {"A.M.", ""},         {"P.M.", ""},   {"TZH:TZM", "-07:00"},
    {"TZH", ""},      {"TZD", ""},       {"TZR", ""},          {"RRRR", ""},   {"RR", ""},
    {"Y", ""},        {"J", ""},         {"Q", ""},            {"WW", ""},     {"W", ""},
    {"IW", ""},       {"I", ""},         {"BC", ""},           {"AD", ""},     {"CC", ""},
    {"SCC", ""},      {"SYYYY", ""},     {"X", ""},            {"E", ""}};

// "name.type(arg)" of --columnsHaveTypes.
StatusOr<Column> ParseTypedColumn(const std::string& spec) {
  size_t paren = spec.rfind('(');
  size_t dot = spec.rfind('.', paren);
  if (paren == std::string::npos || spec.back() != ')' || dot == std::string::npos) {
    return BadValue("field '" + spec + "' has no type: expected name.type()");
  }
  Column col;
  col.name = spec.substr(0, dot);
  std::string type = spec.substr(dot + 1, paren - dot - 1);
  std::string arg = spec.substr(paren + 1, spec.size() - paren - 2);
  static const std::pair<const char*, ColumnType> kTypes[] = {
      {"auto", ColumnType::kAuto},       {"string", ColumnType::kString},
      {"int32", ColumnType::kInt32},     {"int64", ColumnType::kInt64},
      {"double", ColumnType::kDouble},   {"decimal", ColumnType::kDecimal},
      {"boolean", ColumnType::kBoolean}};
  for (const auto& [n, t] : kTypes) {
    if (type == n) {
      if (!arg.empty()) return BadValue("type " + type + " takes no argument in '" + spec + "'");
      col.type = t;
      return col;
    }
  }
  if (type == "binary") {
    if (arg == "base64") {
      col.type = ColumnType::kBinaryBase64;
      return col;
    }
    if (arg == "hex") {
      col.type = ColumnType::kBinaryHex;
      return col;
    }
    if (arg == "base32") {
      col.type = ColumnType::kBinaryBase32;
      return col;
    }
    return BadValue("binary() takes base64, base32 or hex, not '" + arg + "' in '" + spec + "'");
  }
  if (type == "date" || type == "date_go") {
    if (arg.empty()) return BadValue("date() needs a layout in '" + spec + "'");
    if (arg.find("MST") != std::string::npos || arg.find("Mon") != std::string::npos) {
      return Status(ErrorCode::kNotImplemented,
                    "zone names and weekdays in date layouts are not supported by rockdoc yet ('" +
                        spec + "')");
    }
    col.type = ColumnType::kDate;
    col.layout = arg;
    return col;
  }
  if (type == "date_ms" || type == "date_oracle") {
    if (arg.empty()) return BadValue(type + "() needs a format in '" + spec + "'");
    const bool ms = type == "date_ms";
    ROCKDOC_ASSIGN_OR_RETURN(
        col.layout, ms ? ToGoLayout(arg, kMsTokens, std::size(kMsTokens), false, spec)
                       : ToGoLayout(arg, kOracleTokens, std::size(kOracleTokens), true, spec));
    col.type = ColumnType::kDate;
    return col;
  }
  return BadValue("unknown column type '" + type + "' in '" + spec + "'");
}

// RFC 4648 base64 and base32 with padding, as Go's StdEncodings decode
// them (bits past the last whole byte are ignored); false when malformed.
bool DecodeRfc4648(const std::string& text, int bits, std::string* out) {
  auto value = [bits](char c) -> int {
    if (bits == 5) {  // A-Z 2-7
      if (c >= 'A' && c <= 'Z') return c - 'A';
      if (c >= '2' && c <= '7') return c - '2' + 26;
      return -1;
    }
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  const size_t group = bits == 6 ? 4 : 8;  // characters per padded group
  if (text.size() % group != 0) return false;
  size_t end = text.size();
  while (end > 0 && text[end - 1] == '=') --end;
  const size_t pad = text.size() - end;
  // The paddings a last group can have: 1 or 2 bytes short of 3 (base64),
  // 1 to 4 bytes short of 5 (base32).
  const bool pad_ok = bits == 6 ? pad <= 2 : (pad == 0 || pad == 1 || pad == 3 || pad == 4 || pad == 6);
  if (!pad_ok) return false;
  uint32_t acc = 0;
  int have = 0;
  for (size_t i = 0; i < end; ++i) {
    int v = value(text[i]);
    if (v < 0) return false;
    acc = (acc << bits) | static_cast<uint32_t>(v);
    have += bits;
    if (have >= 8) {
      have -= 8;
      out->push_back(static_cast<char>((acc >> have) & 0xff));
    }
  }
  return true;
}

// Appends `text` typed as `type`; false when it does not parse as that type.
bool AppendTyped(BsonBuilder* b, std::string_view key, const std::string& text, ColumnType type,
                 const std::string& layout = "") {
  auto as_int64 = [&](int64_t* v) {
    auto r = std::from_chars(text.data(), text.data() + text.size(), *v);
    return r.ec == std::errc() && r.ptr == text.data() + text.size() && !text.empty();
  };
  auto as_double = [&](double* v) {
    if (text.empty()) return false;
    char* end = nullptr;
    *v = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size();
  };
  int64_t i = 0;
  double d = 0;
  switch (type) {
    case ColumnType::kString:
      b->AppendString(key, text);
      return true;
    case ColumnType::kInt32:
      if (!as_int64(&i) || i < INT32_MIN || i > INT32_MAX) return false;
      b->AppendInt32(key, static_cast<int32_t>(i));
      return true;
    case ColumnType::kInt64:
      if (!as_int64(&i)) return false;
      b->AppendInt64(key, i);
      return true;
    case ColumnType::kDouble:
      if (!as_double(&d)) return false;
      b->AppendDouble(key, d);
      return true;
    case ColumnType::kDecimal: {
      auto dec = Decimal128::FromString(text);
      if (!dec.ok()) return false;
      b->AppendDecimal128(key, *dec);
      return true;
    }
    case ColumnType::kBoolean:
      if (text == "true" || text == "TRUE" || text == "True" || text == "1" || text == "t" ||
          text == "T") {
        b->AppendBool(key, true);
      } else if (text == "false" || text == "FALSE" || text == "False" || text == "0" ||
                 text == "f" || text == "F") {
        b->AppendBool(key, false);
      } else {
        return false;
      }
      return true;
    case ColumnType::kDate: {
      int64_t ms = 0;
      if (!ParseGoTime(layout, text, &ms)) return false;
      b->AppendDateTime(key, ms);
      return true;
    }
    case ColumnType::kBinaryBase64:
    case ColumnType::kBinaryBase32:
    case ColumnType::kBinaryHex: {
      std::string bytes;
      bool ok = type == ColumnType::kBinaryHex      ? HexDecode(text, &bytes)
                : type == ColumnType::kBinaryBase64 ? DecodeRfc4648(text, 6, &bytes)
                                                    : DecodeRfc4648(text, 5, &bytes);
      if (!ok) return false;
      b->AppendBinary(key, BinarySubtype::kGeneric, bytes);
      return true;
    }
    case ColumnType::kAuto:
      // mongoimport's guess: an integer (int32 when it fits), a float, or a string.
      if (as_int64(&i)) {
        if (i >= INT32_MIN && i <= INT32_MAX) {
          b->AppendInt32(key, static_cast<int32_t>(i));
        } else {
          b->AppendInt64(key, i);
        }
      } else if (as_double(&d) && text.find_first_not_of("0123456789+-.eE") == std::string::npos) {
        b->AppendDouble(key, d);
      } else {
        b->AppendString(key, text);
      }
      return true;
  }
  return false;
}

// Builds a document from dotted names ("a.b.c") and values: a tree of
// nested documents, fields in first-seen order.
struct Node {
  std::string name;
  std::vector<Node> children;
  // Leaf: the cell index and its column.
  int cell = -1;
};

void Insert(Node* root, const std::string& path, int cell) {
  Node* n = root;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    Node* child = nullptr;
    for (Node& c : n->children) {
      if (c.name == part) child = &c;
    }
    if (child == nullptr) {
      n->children.push_back(Node{part, {}, -1});
      child = &n->children.back();
    }
    if (dot == std::string::npos) {
      child->cell = cell;
      return;
    }
    n = child;
    start = dot + 1;
  }
}

Status ParseDelimited(const std::string& name, ByteReader* in, const ImportOptions& o,
                      const Emit& emit) {
  in->SkipBom();
  const char delim = o.type == ExportType::kTsv ? '\t' : ',';
  const bool quoting = o.type == ExportType::kCsv;
  uint64_t line_no = 0;
  std::vector<std::string> cells;
  std::vector<std::string> names = o.fields;
  auto fail = [&](const Status& s) {
    return Status(s.code(), name + ": " + std::string(s.message()));
  };
  if (o.header_line) {
    auto have = NextRecord(in, delim, quoting, &line_no, &cells);
    if (!have.ok()) return fail(have.status());
    if (!*have) return Status(ErrorCode::kFailedToParse, name + ": no header line");
    names = cells;
  }
  if (names.empty()) {
    return BadValue("must specify --fields, --fieldFile or --headerline to import this file type");
  }
  std::vector<Column> columns;
  for (const std::string& n : names) {
    if (o.columns_have_types) {
      auto col = ParseTypedColumn(n);
      if (!col.ok()) return fail(col.status());
      columns.push_back(*col);
    } else {
      columns.push_back(Column{n, ColumnType::kAuto, {}});
    }
    const std::string& field = columns.back().name;
    if (field.empty() || field.front() == '$' || field.find("..") != std::string::npos ||
        field.front() == '.' || field.back() == '.') {
      return BadValue(name + ": invalid field name '" + field + "'");
    }
  }
  // As mongoimport's validateFields: two columns of one field ("a,a"), or a
  // field and one inside it ("a,a.b"), would keep one value and drop the
  // other, so such names are refused before anything is read.
  std::set<std::string_view> seen;
  for (const Column& c : columns) {
    if (!seen.insert(c.name).second) {
      return BadValue(name + ": fields cannot be identical: '" + c.name + "' and '" + c.name + "'");
    }
  }
  for (const Column& c : columns) {
    for (size_t dot = c.name.find('.'); dot != std::string::npos; dot = c.name.find('.', dot + 1)) {
      std::string_view prefix = std::string_view(c.name).substr(0, dot);
      if (seen.count(prefix) != 0) {
        return BadValue(name + ": fields '" + std::string(prefix) + "' and '" + c.name +
                        "' are incompatible");
      }
    }
  }
  while (true) {
    uint64_t record_line = line_no + 1;
    auto have = NextRecord(in, delim, quoting, &line_no, &cells);
    if (!have.ok()) return fail(have.status());
    if (!*have) break;
    if (cells.size() == 1 && cells[0].empty()) continue;  // a blank line
    std::string where = name + ":" + std::to_string(record_line);
    if (cells.size() > columns.size()) {
      // mongoimport names extra cells field<N>; rockdoc refuses them rather
      // than invent names.
      return Status(ErrorCode::kFailedToParse,
                    where + ": " + std::to_string(cells.size()) + " fields, but " +
                        std::to_string(columns.size()) + " field names");
    }
    Node root;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (o.ignore_blanks && cells[i].empty()) continue;
      Insert(&root, columns[i].name, static_cast<int>(i));
    }
    bool skip_row = false;
    Status err;
    BsonBuilder b;
    std::function<void(const Node&)> append_node = [&](const Node& n) {
      for (const Node& c : n.children) {
        if (!err.ok() || skip_row) return;
        if (c.cell < 0) {
          b.OpenDocument(c.name);
          append_node(c);
          b.Close();
          continue;
        }
        const Column& col = columns[static_cast<size_t>(c.cell)];
        const std::string& cell = cells[static_cast<size_t>(c.cell)];
        if (AppendTyped(&b, c.name, cell, col.type, col.layout)) continue;
        switch (o.parse_grace) {
          case ParseGrace::kAutoCast:
            AppendTyped(&b, c.name, cell, ColumnType::kAuto);
            break;
          case ParseGrace::kSkipField:
            break;
          case ParseGrace::kSkipRow:
            skip_row = true;
            break;
          case ParseGrace::kStop:
            err = Status(ErrorCode::kFailedToParse,
                         where + ": value '" + cell + "' of field " + col.name +
                             " does not parse as its type");
            break;
        }
      }
    };
    append_node(root);
    if (!err.ok()) return err;
    if (skip_row) continue;
    ROCKDOC_RETURN_IF_ERROR(emit(std::move(b).Build(), record_line));
  }
  return Status::OK();
}

Document FilterFor(DocumentView doc, const std::vector<std::string>& fields, bool* complete) {
  BsonBuilder f;
  *complete = true;
  for (const std::string& field : fields) {
    Element e = doc.GetPath(field);
    if (!e.ok()) {
      *complete = false;
      continue;
    }
    f.AppendElementAs(field, e);
  }
  return std::move(f).Build();
}

Document WithoutId(DocumentView doc) {
  BsonBuilder b;
  for (Element e : doc) {
    if (e.key() != "_id") b.AppendElement(e);
  }
  return std::move(b).Build();
}

}  // namespace

StatusOr<int64_t> Export(const Client& client, const ExportOptions& options) {
  if (options.db.empty() || options.collection.empty()) {
    return BadValue("must specify a database (--db) and a collection (--collection)");
  }
  if (options.type == ExportType::kTsv) {
    return BadValue("invalid output type 'tsv', choose 'json' or 'csv'");
  }
  if (options.type == ExportType::kCsv && options.fields.empty()) {
    return BadValue("CSV mode requires a field list");
  }
  if (options.type == ExportType::kCsv && (options.json_array || options.pretty)) {
    return BadValue("--jsonArray and --pretty apply to JSON output only");
  }
  ROCKDOC_ASSIGN_OR_RETURN(Session snapshot, client.StartSession(SessionOptions{.snapshot = true}));
  Collection coll = snapshot.GetDatabase(options.db).GetCollection(options.collection);
  FindOptions find;
  find.sort = options.sort;
  find.skip = options.skip;
  find.limit = options.limit;
  if (options.type == ExportType::kJson && !options.fields.empty()) {
    BsonBuilder p;
    for (const std::string& f : options.fields) p.AppendInt32(f, 1);
    find.projection = std::move(p).Build();
  }
  ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, coll.Find(options.query, find));
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> out, OpenOutput(options.out, false));
  int64_t n = 0;
  std::string line;
  Progress progress(options.progress, options.db + "." + options.collection, 0);
  if (options.type == ExportType::kCsv) {
    if (!options.no_header_line) {
      line.clear();
      for (size_t i = 0; i < options.fields.size(); ++i) {
        if (i > 0) line.push_back(',');
        line += CsvQuote(options.fields[i], ',');
      }
      line.push_back('\n');
      ROCKDOC_RETURN_IF_ERROR(out->Write(line));
    }
  } else if (options.json_array) {
    ROCKDOC_RETURN_IF_ERROR(out->Write("["));
  }
  while (cursor.Next()) {
    DocumentView doc = cursor.document();
    line.clear();
    if (options.type == ExportType::kCsv) {
      for (size_t i = 0; i < options.fields.size(); ++i) {
        if (i > 0) line.push_back(',');
        line += CsvQuote(CsvCell(doc.GetPath(options.fields[i])), ',');
      }
      line.push_back('\n');
    } else {
      std::string json = CompactJson(ToJson(doc, options.json_format));
      if (options.pretty) json = Indent(json);
      if (options.json_array && n > 0) line.push_back(',');
      line += json;
      if (!options.json_array || options.pretty) line.push_back('\n');
    }
    ROCKDOC_RETURN_IF_ERROR(out->Write(line));
    ++n;
    progress.Add(1, static_cast<int64_t>(line.size()));
  }
  ROCKDOC_RETURN_IF_ERROR(cursor.status());
  if (options.type == ExportType::kJson && options.json_array) {
    ROCKDOC_RETURN_IF_ERROR(out->Write("]\n"));
  }
  ROCKDOC_RETURN_IF_ERROR(out->Close());
  Log(options.log, "exported " + std::to_string(n) + " record" + (n == 1 ? "" : "s"));
  return n;
}

// Documents per InsertMany of an import (mongoimport's batches are up to
// 1,000 documents as well).
constexpr size_t kImportBatch = 1000;

// Where an import's parsed documents wait between the parse and the writes:
// an anonymous temporary file (tmpfile(3): in $TMPDIR, gone when closed,
// even if the process dies), so that an import holds one batch in memory,
// not its input. Each record: the line (8 bytes, little-endian), then the
// document's BSON.
class ParsedSpill {
 public:
  explicit ParsedSpill(std::string name) : name_(std::move(name)) {}
  ~ParsedSpill() {
    if (f_ != nullptr) std::fclose(f_);
  }
  ParsedSpill(const ParsedSpill&) = delete;
  ParsedSpill& operator=(const ParsedSpill&) = delete;

  Status Open() {
    f_ = std::tmpfile();
    if (f_ == nullptr) return Error("creating a temporary file for");
    return Status::OK();
  }
  Status Add(DocumentView doc, uint64_t line) {
    char prefix[8];
    std::memcpy(prefix, &line, 8);  // read back by this process only
    if (std::fwrite(prefix, 1, 8, f_) != 8 ||
        std::fwrite(doc.bytes().data(), 1, doc.size(), f_) != doc.size()) {
      return Error("writing the temporary file of");
    }
    bytes_ += static_cast<int64_t>(doc.size());
    return Status::OK();
  }
  Status Rewind() {
    if (std::fflush(f_) != 0 || std::fseek(f_, 0, SEEK_SET) != 0) {
      return Error("reading the temporary file of");
    }
    return Status::OK();
  }
  // The next document and where it came from; false at the end.
  StatusOr<bool> Next(Parsed* p) {
    char head[12];
    size_t got = std::fread(head, 1, sizeof(head), f_);
    if (got == 0 && !std::ferror(f_)) return false;
    if (got != sizeof(head)) return Error("reading the temporary file of");
    uint64_t line;
    int32_t len;
    std::memcpy(&line, head, 8);
    std::memcpy(&len, head + 8, 4);
    if (len < 5) return Status(ErrorCode::kInternalError, "corrupt temporary file of " + name_);
    std::string bytes(static_cast<size_t>(len), '\0');
    std::memcpy(bytes.data(), head + 8, 4);
    if (std::fread(bytes.data() + 4, 1, bytes.size() - 4, f_) != bytes.size() - 4) {
      return Error("reading the temporary file of");
    }
    // Written by Add from a valid document, in this process.
    p->doc = Document::AdoptValidated(std::move(bytes));
    p->line = line;
    return true;
  }
  // BSON bytes of every document added.
  int64_t bytes() const { return bytes_; }

 private:
  Status Error(const std::string& what) const {
    return Status(ErrorCode::kFileNotOpen, "error " + what + " " + name_ + ": " +
                                               std::strerror(errno));
  }
  std::string name_;
  FILE* f_ = nullptr;
  int64_t bytes_ = 0;
};

StatusOr<ImportReport> Import(const Client& client, const ImportOptions& options) {
  if (options.db.empty() || options.collection.empty()) {
    return BadValue("must specify a database (--db) and a collection (--collection)");
  }
  if (options.type != ExportType::kJson && options.json_array) {
    return BadValue("cannot use --jsonArray except with JSON input");
  }
  if (options.type != ExportType::kJson && options.legacy) {
    return BadValue("--legacy applies to JSON input only");
  }
  if (options.type == ExportType::kJson &&
      (options.header_line || !options.fields.empty() || options.columns_have_types)) {
    return BadValue("--fields, --fieldFile, --headerline and --columnsHaveTypes apply to CSV and "
                    "TSV input only");
  }
  if (!options.upsert_fields.empty() && options.mode == ImportMode::kInsert) {
    return BadValue("--upsertFields needs --mode upsert, merge or delete");
  }
  // The whole input is parsed before anything is written, into a spill
  // file; then the documents are written from it, a batch at a time.
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> in, OpenInput(options.file, false));
  const std::string name = in->name();
  ParsedSpill spill(name);
  ROCKDOC_RETURN_IF_ERROR(spill.Open());
  {
    ByteReader reader(in.get());
    // Every parsed document is checked whole before it is kept: a CSV or
    // TSV cell is copied as it is, and one that is not UTF-8 (a file saved
    // as Latin-1) is bad input, refused with its line before anything is
    // written, as a syntax error is (not a document that "failed").
    Emit emit = [&spill, &name](Document doc, uint64_t line) {
      Status valid = ValidateBson(doc.bytes());
      if (!valid.ok()) {
        std::string why(valid.message());
        if (why.find("UTF-8") != std::string::npos) why = "a value is not valid UTF-8";
        return Status(ErrorCode::kFailedToParse, name + ":" + std::to_string(line) + ": " + why);
      }
      return spill.Add(doc, line);
    };
    if (options.type == ExportType::kJson) {
      ROCKDOC_RETURN_IF_ERROR(ParseJson(name, &reader, options.json_array, options.legacy, emit));
    } else {
      ROCKDOC_RETURN_IF_ERROR(ParseDelimited(name, &reader, options, emit));
    }
  }
  ROCKDOC_RETURN_IF_ERROR(spill.Rewind());
  Collection coll = client.GetDatabase(options.db).GetCollection(options.collection);
  if (options.drop) {
    Log(options.log, "dropping: " + options.db + "." + options.collection);
    ROCKDOC_RETURN_IF_ERROR(coll.Drop());
  }
  ImportReport report;
  auto failed = [&](uint64_t line, const Status& s) -> Status {
    const std::string where = name + ":" + std::to_string(line);
    ++report.failed;
    report.failures.push_back(where + ": " + s.ToString());
    Log(options.log, "continuing through error: " + where + ": " + s.ToString());
    if (options.stop_on_error) return s.WithContext(where);
    return Status::OK();
  };
  Progress progress(options.progress, options.db + "." + options.collection, spill.bytes());
  const std::vector<std::string> keys =
      options.upsert_fields.empty() ? std::vector<std::string>{"_id"} : options.upsert_fields;
  if (options.mode == ImportMode::kInsert) {
    InsertManyOptions insert;
    insert.ordered = options.stop_on_error || options.maintain_insertion_order;
    std::vector<Document> batch;
    std::vector<uint64_t> lines;  // batch[i] starts on lines[i]
    while (true) {
      batch.clear();
      lines.clear();
      Parsed p;
      while (batch.size() < kImportBatch) {
        ROCKDOC_ASSIGN_OR_RETURN(bool more, spill.Next(&p));
        if (!more) break;
        progress.Add(1, static_cast<int64_t>(p.doc.size()));
        lines.push_back(p.line);
        batch.push_back(std::move(p.doc));
      }
      if (batch.empty()) break;
      ROCKDOC_ASSIGN_OR_RETURN(InsertManyResult r, coll.InsertMany(batch, insert));
      report.imported += static_cast<int64_t>(r.inserted_count());
      for (const WriteError& w : r.write_errors) {
        ROCKDOC_RETURN_IF_ERROR(failed(lines[w.index], w.status));
      }
      if (insert.ordered && !r.write_errors.empty()) {
        // An ordered batch stops at its first failure: the rest of the
        // batch was not tried; go on with it one by one.
        for (size_t i = r.write_errors.back().index + 1; i < batch.size(); ++i) {
          auto one = coll.InsertOne(batch[i]);
          if (one.ok()) {
            ++report.imported;
          } else {
            ROCKDOC_RETURN_IF_ERROR(failed(lines[i], one.status()));
          }
        }
      }
    }
  } else {
    Parsed p;
    while (true) {
      ROCKDOC_ASSIGN_OR_RETURN(bool more, spill.Next(&p));
      if (!more) break;
      progress.Add(1, static_cast<int64_t>(p.doc.size()));
      bool complete = false;
      Document filter = FilterFor(p.doc, keys, &complete);
      Status st;
      if (options.mode == ImportMode::kDelete) {
        if (!complete) {
          st = BadValue("the document lacks an --upsertFields field");
        } else {
          auto r = coll.DeleteOne(filter);
          st = r.status();
        }
      } else if (!complete) {
        // Nothing to match on: insert, as mongoimport does.
        st = coll.InsertOne(p.doc).status();
      } else if (options.mode == ImportMode::kUpsert) {
        st = coll.ReplaceOne(filter, p.doc, /*upsert=*/true).status();
      } else {
        BsonBuilder u;
        u.AppendDocument("$set", WithoutId(p.doc));
        UpdateOptions upsert;
        upsert.upsert = true;
        Document set_doc = WithoutId(p.doc);
        st = set_doc.empty() ? coll.ReplaceOne(filter, p.doc, true).status()
                             : coll.UpdateOne(filter, std::move(u).Build(), upsert).status();
      }
      if (st.ok()) {
        ++report.imported;
      } else {
        ROCKDOC_RETURN_IF_ERROR(failed(p.line, st));
      }
    }
  }
  Log(options.log, std::to_string(report.imported) + " document(s) imported successfully. " +
                       std::to_string(report.failed) + " document(s) failed to import.");
  return report;
}

}  // namespace rockdoc::tools

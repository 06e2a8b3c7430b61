#include "index/fts.h"

#include <libstemmer.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>


#ifndef ROCKDOC_STOP_WORDS_DIR
#error "ROCKDOC_STOP_WORDS_DIR: the directory of Snowball's <language>.stop lists"
#endif

namespace rockdoc::internal::fts {

namespace {

struct LanguageName {
  const char* name;
  const char* code;
};
// MongoDB's text search languages (v3), and their ISO 639-1 codes.
constexpr LanguageName kLanguages[] = {
    {"danish", "da"},  {"dutch", "nl"},      {"english", "en"},    {"finnish", "fi"},
    {"french", "fr"},  {"german", "de"},     {"hungarian", "hu"},  {"italian", "it"},
    {"norwegian", "nb"}, {"portuguese", "pt"}, {"romanian", "ro"}, {"russian", "ru"},
    {"spanish", "es"}, {"swedish", "sv"},    {"turkish", "tr"},    {"none", "none"},
};

// Snowball's stop words for `language` (none for "none" and for a language
// Snowball has no list for, as romanian).
const std::unordered_set<std::string>& StopWords(const std::string& language) {
  static std::mutex mu;
  static auto* lists = new std::unordered_map<std::string, std::unordered_set<std::string>>();
  std::lock_guard<std::mutex> g(mu);
  auto it = lists->find(language);
  if (it != lists->end()) return it->second;
  std::unordered_set<std::string>& words = (*lists)[language];
  if (language != "none") {
    std::ifstream in(std::string(ROCKDOC_STOP_WORDS_DIR) + "/" + language + ".stop");
    std::string line;
    while (std::getline(in, line)) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (!line.empty()) words.insert(line);
    }
  }
  return words;
}

void AppendUtf8(UChar32 c, std::string* out) {
  char buf[4];
  int32_t n = 0;
  UBool error = false;
  U8_APPEND(reinterpret_cast<uint8_t*>(buf), n, 4, c, error);
  if (!error) out->append(buf, static_cast<size_t>(n));
}

bool IsDelimiter(UChar32 c, bool english) {
  if (c == '\'' || c == 0x2019) return !english;
  if (c < 0x80) return !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
  if (u_isUWhiteSpace(c)) return true;
  switch (u_charType(c)) {
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_CONNECTOR_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
    case U_MATH_SYMBOL:
    case U_CURRENCY_SYMBOL:
    case U_MODIFIER_SYMBOL:
    case U_OTHER_SYMBOL:
    case U_CONTROL_CHAR:
    case U_SPACE_SEPARATOR:
    case U_LINE_SEPARATOR:
    case U_PARAGRAPH_SEPARATOR:
      return true;
    default:
      return false;
  }
}

// Appends `c` folded as `options` say.
void AppendFolded(UChar32 c, TokenOptions options, std::string* out) {
  if (c < 0x80) {  // ASCII: no diacritics; folding is lowering
    out->push_back(static_cast<char>(!options.case_sensitive && c >= 'A' && c <= 'Z' ? c + 32 : c));
    return;
  }
  if (!options.case_sensitive) c = u_foldCase(c, U_FOLD_CASE_DEFAULT);
  if (options.diacritic_sensitive) {
    AppendUtf8(c, out);
    return;
  }
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  icu::UnicodeString decomposed;
  if (U_FAILURE(status) || !nfd->getDecomposition(c, decomposed)) {
    if (!u_hasBinaryProperty(c, UCHAR_DIACRITIC) || u_isalnum(c)) AppendUtf8(c, out);
    return;
  }
  for (int32_t i = 0; i < decomposed.length();) {
    UChar32 d = decomposed.char32At(i);
    i += U16_LENGTH(d);
    if (u_getCombiningClass(d) != 0 || (u_hasBinaryProperty(d, UCHAR_DIACRITIC) && !u_isalnum(d))) {
      continue;
    }
    AppendUtf8(d, out);
  }
}

// Calls fn(token) for each token of `text`.
template <typename Fn>
void ForEachToken(std::string_view text, const std::string& language, TokenOptions options,
                  Fn fn) {
  const bool english = language == "english";
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t length = static_cast<int32_t>(text.size());
  std::string token;
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U8_NEXT(s, i, length, c);
    if (c < 0 || IsDelimiter(c, english)) {
      if (!token.empty()) fn(token);
      token.clear();
      continue;
    }
    AppendFolded(c, options, &token);
  }
  if (!token.empty()) fn(token);
}

struct StemmerDeleter {
  void operator()(sb_stemmer* s) const { sb_stemmer_delete(s); }
};

}  // namespace

std::optional<std::string> CanonicalLanguage(std::string_view name) {
  for (const LanguageName& l : kLanguages) {
    if (name == l.name || name == l.code) return std::string(l.name);
  }
  return std::nullopt;
}

std::vector<std::string> Tokenize(std::string_view text, const std::string& language,
                                  TokenOptions options) {
  std::vector<std::string> out;
  ForEachToken(text, language, options, [&](const std::string& t) { out.push_back(t); });
  return out;
}

bool IsStopWord(const std::string& language, const std::string& token) {
  const auto& words = StopWords(language);
  if (words.empty()) return false;
  return words.count(Fold(token, TokenOptions{})) > 0;
}

std::string Stem(const std::string& language, const std::string& token) {
  if (language == "none") return token;
  thread_local std::unordered_map<std::string, std::unique_ptr<sb_stemmer, StemmerDeleter>>
      stemmers;
  auto& stemmer = stemmers[language];
  if (stemmer == nullptr) stemmer.reset(sb_stemmer_new(language.c_str(), "UTF_8"));
  if (stemmer == nullptr) return token;  // CanonicalLanguage admits only Snowball's
  const sb_symbol* stemmed = sb_stemmer_stem(
      stemmer.get(), reinterpret_cast<const sb_symbol*>(token.data()), static_cast<int>(token.size()));
  if (stemmed == nullptr) return token;  // out of memory in libstemmer: unstemmed
  return std::string(reinterpret_cast<const char*>(stemmed),
                     static_cast<size_t>(sb_stemmer_length(stemmer.get())));
}

std::vector<std::string> Terms(std::string_view text, const std::string& language,
                               TokenOptions options) {
  std::vector<std::string> out;
  ForEachToken(text, language, options, [&](const std::string& t) {
    if (!IsStopWord(language, t)) out.push_back(Stem(language, t));
  });
  return out;
}

std::string Fold(std::string_view text, TokenOptions options) {
  std::string out;
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t length = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U8_NEXT(s, i, length, c);
    if (c < 0) continue;
    AppendFolded(c, options, &out);
  }
  return out;
}

void ScoreString(std::string_view text, const std::string& language, double weight,
                 std::map<std::string, double>* scores) {
  struct Seen {
    int count = 0;
    double freq = 0;
    double exp = 0;
  };
  std::map<std::string, Seen> terms;
  int tokens = 0;
  for (const std::string& term : Terms(text, language)) {
    Seen& s = terms[term];
    s.exp = s.exp == 0 ? 1 : s.exp * 2;
    s.count += 1;
    s.freq += 1 / s.exp;
    ++tokens;
  }
  for (const auto& [term, s] : terms) {
    const double coeff = 0.5 * s.count / tokens + 0.5;
    (*scores)[term] += weight * s.freq * coeff;
  }
}

TextQuery ParseTextQuery(std::string_view search, const std::string& language,
                         TokenOptions options) {
  TextQuery q;
  q.options = options;
  q.language = language;
  const bool sensitive = options.case_sensitive || options.diacritic_sensitive;
  auto add_terms = [&](std::string_view text, bool negated) {
    for (const std::string& t : Terms(text, language)) {
      if (!negated) q.terms.insert(t);
      if (!sensitive) {
        if (negated) q.negated_terms.insert(t);
      }
    }
    if (!sensitive) return;
    for (const std::string& t : Terms(text, language, options)) {
      (negated ? q.negated_terms : q.sensitive_terms).insert(t);
    }
  };
  size_t i = 0;
  const size_t n = search.size();
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (i < n) {
    if (is_space(search[i])) {
      ++i;
      continue;
    }
    bool negated = false;
    if (search[i] == '-' && i + 1 < n && !is_space(search[i + 1])) {
      negated = true;
      ++i;
    }
    if (search[i] == '"') {
      size_t end = search.find('"', i + 1);
      std::string_view phrase =
          search.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1);
      (negated ? q.negated_phrases : q.phrases).emplace_back(phrase);
      // A phrase's words are terms too (they find the candidates); a negated
      // phrase's are not.
      if (!negated) add_terms(phrase, false);
      i = end == std::string_view::npos ? n : end + 1;
      continue;
    }
    size_t end = i;
    while (end < n && !is_space(search[end]) && search[end] != '"') ++end;
    add_terms(search.substr(i, end - i), negated);
    i = end;
  }
  return q;
}

Document TextQuery::ToExplain() const {
  BsonBuilder b;
  b.OpenArray("terms");
  for (const auto& t : terms) b.AppendString("", t);
  b.Close();
  b.OpenArray("negatedTerms");
  for (const auto& t : negated_terms) b.AppendString("", t);
  b.Close();
  b.OpenArray("phrases");
  for (const auto& t : phrases) b.AppendString("", t);
  b.Close();
  b.OpenArray("negatedPhrases");
  for (const auto& t : negated_phrases) b.AppendString("", t);
  b.Close();
  return std::move(b).Build();
}

}  // namespace rockdoc::internal::fts

// index/fts.h: text search's language machinery (MongoDB's fts/ of
// textIndexVersion 3): the languages, their Snowball stemmers and stop
// words, the Unicode tokenizer, the per-document term scores that text index
// keys carry, and a $search string parsed into terms, negated terms and
// phrases.
//
//   * Languages: MongoDB's list (danish ... turkish, and their two-letter
//     codes) and "none" (no stemming, no stop words).
//   * Stemming: libstemmer's Snowball stemmers (UTF-8).
//   * Stop words: Snowball's lists, read at first use from the directory the
//     build found (PostgreSQL's tsearch_data, which ships Snowball's lists
//     unchanged; ROCKDOC_STOP_WORDS_DIR). MongoDB's own English list adds
//     some words to Snowball's; rockdoc uses Snowball's.
//   * Tokens: maximal runs of non-delimiter code points; delimiters are
//     white space, punctuation, symbols and controls (Unicode properties, via
//     ICU), except the apostrophe in English. Unless case sensitive, a token
//     is case folded; unless diacritic sensitive, it loses its combining
//     marks (after canonical decomposition), as v3 does.
//   * Scores: for each field string of weight w, with n the non-stop-word
//     tokens and, per term, c its occurrences: score += w * f * (0.5 * c / n
//     + 0.5), where f = 1 + 1/2 + ... + 1/2^(c-1) (MongoDB's scoring).
//
// Thread safety: all functions are thread-safe (stemmers are per thread).
#ifndef ROCKDOC_INDEX_FTS_H_
#define ROCKDOC_INDEX_FTS_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal::fts {

// A supported language's canonical name ("english" for "en"), or
// std::nullopt. "none" is a language.
std::optional<std::string> CanonicalLanguage(std::string_view name);

struct TokenOptions {
  bool case_sensitive = false;
  bool diacritic_sensitive = false;
};

// The tokens of `text` (folded as `options` say), in order.
std::vector<std::string> Tokenize(std::string_view text, const std::string& language,
                                  TokenOptions options = {});
// Whether `token` (folded) is a stop word of `language`.
bool IsStopWord(const std::string& language, const std::string& token);
// The Snowball stem of `token` in `language` ("none": the token).
std::string Stem(const std::string& language, const std::string& token);
// The indexable terms of `text`: tokens, stop words dropped, stemmed.
std::vector<std::string> Terms(std::string_view text, const std::string& language,
                               TokenOptions options = {});

// Case folding and diacritic removal of a whole string (phrase matching).
std::string Fold(std::string_view text, TokenOptions options);

// Adds the scores of `text` (a field string of weight `weight`) to *scores.
void ScoreString(std::string_view text, const std::string& language, double weight,
                 std::map<std::string, double>* scores);

// A $search string parsed as MongoDB's FTSQuery: terms (stemmed, stop
// words dropped), negated terms ("-word"), phrases ("\"a b\""), negated
// phrases ("-\"a b\"").
struct TextQuery {
  std::set<std::string> terms;
  std::set<std::string> negated_terms;
  std::vector<std::string> phrases;
  std::vector<std::string> negated_phrases;
  // A case or diacritic sensitive query: the index is searched for `terms`
  // (folded, as keys are), and a document must also hold one of these,
  // tokenized with the query's options.
  std::set<std::string> sensitive_terms;
  TokenOptions options;
  std::string language;
  // {terms: [...], negatedTerms: [...], phrases: [...], negatedPhrases: [...]}
  Document ToExplain() const;
};
TextQuery ParseTextQuery(std::string_view search, const std::string& language,
                         TokenOptions options);

}  // namespace rockdoc::internal::fts

#endif  // ROCKDOC_INDEX_FTS_H_

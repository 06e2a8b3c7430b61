// index/text_index.h: the text index kind ({a: "text"}), as MongoDB's
// textIndexVersion 3 (index/fts.h holds the language machinery).
//
// Key pattern: kept as MongoDB keeps it, the text fields replaced by
// `_fts: "text", _ftsx: 1` between the ordered prefix and suffix fields
// ({a: 1, b: "text", c: "text"} becomes {a: 1, _fts: "text", _ftsx: 1}
// with weights {b: 1, c: 1}); "$**" indexes every string. Entries: one per
// (prefix values, term, score, suffix values) and document: the `_fts`
// value is the stemmed term, the `_ftsx` value the document's score for it
// (index/fts.h's formula, summed over the fields), so a $text query reads
// one key range per term and adds the scores it finds.
//
// Thread safety: a TextIndexSpec is immutable.
#ifndef ROCKDOC_INDEX_TEXT_INDEX_H_
#define ROCKDOC_INDEX_TEXT_INDEX_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "index/access_method.h"
#include "index/fts.h"
#include "query/field_path.h"

namespace rockdoc::internal {

class TextIndexSpec final : public IndexKindState {
 public:
  // Built from a normalized key pattern and options (Normalize's).
  TextIndexSpec(DocumentView key_pattern, const IndexOptions& options);

  const Document& weights() const { return weights_; }
  // The default language's canonical name ("spanish" for "es").
  const std::string& default_language() const { return default_language_; }
  // ... and as createIndex gave it (listIndexes shows this).
  const std::string& default_language_given() const { return default_language_given_; }
  const std::string& language_override() const { return language_override_; }
  // The number of ordered fields before `_fts` (the equality prefix a $text
  // query must give).
  size_t prefix_fields() const { return prefix_fields_; }

  // The language of `doc` (its language_override field, else the default).
  // 17262 "language override unsupported: x" for a language MongoDB lacks.
  StatusOr<std::string> DocumentLanguage(DocumentView doc) const;
  // Calls fn(string, weight) for every indexed string of `doc`.
  void ForEachString(DocumentView doc,
                     const std::function<void(std::string_view, double)>& fn) const;
  // The document's term scores (what its keys carry).
  StatusOr<std::map<std::string, double>> Scores(DocumentView doc) const;
  // Whether `doc` satisfies the parts of `query` the index cannot decide:
  // no negated term, every phrase, no negated phrase, and (case or
  // diacritic sensitive) a term as the query spelt it.
  bool Matches(const fts::TextQuery& query, DocumentView doc) const;

 private:
  Document weights_;
  std::vector<std::pair<FieldPath, double>> fields_;  // path -> weight, "$**" aside
  double wildcard_weight_ = 0;                          // 0: no "$**"
  std::string default_language_;
  std::string default_language_given_;
  std::string language_override_;
  size_t prefix_fields_ = 0;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_INDEX_TEXT_INDEX_H_

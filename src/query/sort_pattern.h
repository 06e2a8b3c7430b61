// query/sort_pattern.h: a find() sort specification ({a: 1, "b.c": -1}) and
// MongoDB's sort keys.
//
// A document's sort key has one value per pattern part, chosen as MongoDB
// does (its sort key generator is the index key generator):
//   - a missing field, or a path blocked by a scalar, sorts as null;
//   - an array reached by the path contributes its elements (one level), so
//     an ascending part uses the smallest element and a descending part the
//     largest ("With arrays, a less-than comparison or an ascending sort
//     compares the smallest element of arrays");
//   - an empty array sorts as `undefined`, below null, in both directions
//     (so sort({a: 1}) gives [] before a missing a, and sort({a: -1}) the
//     reverse of the non-array order with [] still last);
//   - parts that go through the same array are taken element by element
//     together, and the document's key is the smallest such combination in
//     the pattern's order; parts through two different arrays are an error
//     ("cannot sort with keys that are parallel arrays", BadValue), as in
//     MongoDB;
//   - a numeric path part after an array selects that position ("a.0").
// Keys are Elements viewing the document's bytes (or static null /
// undefined values): extracting one allocates nothing for documents without
// arrays on the sorted paths, so keys can be computed once per document and
// compared cheaply during the sort.
//
// Thread safety: a SortPattern is immutable; all methods are const and
// thread-safe.
//
// Example:
//   auto pattern = rockdoc::SortPattern::Parse(*rockdoc::FromJson(R"({"a": 1})"));
//   std::vector<rockdoc::Element> ka, kb;
//   ROCKDOC_RETURN_IF_ERROR(pattern->ExtractKey(doc_a, &ka));
//   ROCKDOC_RETURN_IF_ERROR(pattern->ExtractKey(doc_b, &kb));
//   bool a_first = pattern->CompareKeys(ka, kb) < 0;
#ifndef ROCKDOC_QUERY_SORT_PATTERN_H_
#define ROCKDOC_QUERY_SORT_PATTERN_H_

#include <string>
#include <vector>

#include "query/collator.h"
#include "query/field_path.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc {

class SortPattern {
 public:
  struct Part {
    FieldPath path;
    bool ascending = true;
    // {$meta: "textScore"}: the result's text score, descending; its key
    // part is null in ExtractKey (the caller supplies the score).
    bool text_score = false;
  };

  // The empty pattern (no sort).
  SortPattern() = default;

  // Parses {path: 1 | -1, ...}. Errors: 15974 "$sort key ordering must be
  // specified using a number or {$meta: 'textScore'}" for non-numbers;
  // 15975 "$sort key ordering must be 1 (for ascending) or -1 (for
  // descending)" (numbers are truncated to integers first, as MongoDB's
  // numberInt); 15998 / 16410 for empty or '$'-prefixed path parts;
  // NotImplemented for {$meta: ...}, unless `allow_text_score` (a find's
  // sort: {$meta: "textScore"} parts; other $meta names are BadValue).
  static StatusOr<SortPattern> Parse(DocumentView spec, bool allow_text_score = false);
  // Whether a part is {$meta: "textScore"}.
  bool has_text_score() const;

  const std::vector<Part>& parts() const { return parts_; }
  size_t size() const { return parts_.size(); }
  bool empty() const { return parts_.empty(); }

  // Fills `key` (resized to size()) with the document's sort key. The
  // Elements are valid while `doc`'s bytes are. Error: BadValue "cannot sort
  // with keys that are parallel arrays".
  Status ExtractKey(DocumentView doc, std::vector<Element>* key) const;

  // Orders two keys of this pattern: <0 when `a` sorts first, 0 on a tie.
  int CompareKeys(const std::vector<Element>& a, const std::vector<Element>& b) const {
    return CompareKeys(a.data(), b.data());
  }
  int CompareKeys(const Element* a, const Element* b) const;
  // The same over keys kept as Values (each present: a missing key part is
  // stored as null), without building Element vectors per comparison.
  int CompareKeys(const std::vector<Value>& a, const std::vector<Value>& b) const;

  // Convenience: extracts both keys and compares them.
  StatusOr<int> CompareDocuments(DocumentView a, DocumentView b) const;

  // The pattern as a document, {a: 1, "b.c": -1} (for explain).
  Document ToDocument() const;

  // Strings in keys compare by `collator` (null: binary). Keys are chosen
  // (an array's smallest element) and compared with it.
  void set_collator(CollatorPtr collator) { collator_ = std::move(collator); }
  const Collator* collator() const { return collator_.get(); }

 private:
  std::vector<Part> parts_;
  CollatorPtr collator_;
};

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_SORT_PATTERN_H_

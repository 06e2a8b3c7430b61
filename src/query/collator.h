// query/collator.h: MongoDB's collation, on ICU's collation service.
//
// A collation document ({locale: "en", strength: 2, ...}) names how strings
// compare: by locale rules, ignoring case or accents, with digits as
// numbers. `Collator::Make` decodes it from a table of MongoDB's option
// names (locale, caseLevel, caseFirst, strength, numericOrdering, alternate,
// maxVariable, normalization, backwards, version), validates it as MongoDB
// does, and builds the ICU collator. {locale: "simple"} is the simple
// (binary) collation, which is no collator at all: a null pointer
// everywhere in rockdoc.
//
// A collator is a `StringComparator` (bson/string_comparator.h): matching,
// sorting and grouping compare through CompareValuesWith. Indexes with a
// collation store, for each string, its ICU sort key (`SortKey`), whose bytes
// order as the collator orders strings, encoded as a string so that the
// type order stays MongoDB's (as MongoDB's KeyString does);
// `CollationKeyOf` turns a whole value (strings inside arrays and documents
// included) into that form.
//
// `spec()` is the normalized specification MongoDB reports in listIndexes,
// listCollections and explain: every field filled, defaults from the
// locale (fr_CA sorts accents backwards; ICU says so), and `version`, ICU's
// version as MongoDB reports its own ICU's ("72.1" for ICU 72).
//
// Thread safety: a Collator is immutable after Make; ICU's collators are
// thread-safe for comparison and sort keys. Shared as
// std::shared_ptr<const Collator>.
//
// Example:
//   ROCKDOC_ASSIGN_OR_RETURN(auto c, Collator::Make(Json(R"({"locale": "en", "strength": 2})")));
//   c->CompareStrings("Alice", "alice");  // 0
#ifndef ROCKDOC_QUERY_COLLATOR_H_
#define ROCKDOC_QUERY_COLLATOR_H_

#include <memory>
#include <string>
#include <string_view>

#include "bson/string_comparator.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

struct UCollator;

namespace rockdoc {

class Collator final : public StringComparator {
 public:
  ~Collator() override;
  Collator(const Collator&) = delete;
  Collator& operator=(const Collator&) = delete;

  // Decodes and validates a collation document. Null (and OK) for
  // {locale: "simple"}. Errors, as MongoDB's:
  //   FailedToParse (9): "Unknown collation spec field: foo",
  //     "Missing locale string", "Field 'strength' must be an integer 1
  //     through 5. Got: 6", "Field 'caseFirst' must be 'upper', 'lower', or
  //     'off'. Got: x", "Field 'alternate' must be 'non-ignorable' or
  //     'shifted'. Got: x", "Field 'maxVariable' must be 'punct' or 'space'.
  //     Got: x";
  //   TypeMismatch (14): "Field 'strength' must be of type number in: {...}"
  //     (and 'locale' string, the booleans bool);
  //   BadValue (2): "Field 'locale' is invalid in: {...}" (ICU has no
  //     collation for it), "If 'locale' is 'simple', no other collation
  //     field may be given", "Field 'version' ... the only available
  //     collator version was 72.1", a 'caseFirst' or 'caseLevel' with
  //     strength 5... not checked: ICU ignores them, as MongoDB lets it.
  static StatusOr<std::shared_ptr<const Collator>> Make(DocumentView spec);
  // The same for a command's field: BadValue... TypeMismatch "collation
  // must be an object" when `field` is not a document.
  static StatusOr<std::shared_ptr<const Collator>> FromElement(const Element& field);

  int CompareStrings(std::string_view a, std::string_view b) const override;
  // ICU's sort key of `s` (UTF-8), without its terminating NUL: bytes that
  // compare with memcmp as CompareStrings compares the strings. Never
  // contains a NUL byte.
  std::string SortKey(std::string_view s) const;

  // The normalized specification (see above).
  const Document& spec() const { return spec_; }

  // Whether two collations are the same (null is simple).
  static bool Same(const Collator* a, const Collator* b);

 private:
  Collator() = default;
  UCollator* collator_ = nullptr;
  Document spec_;
};

using CollatorPtr = std::shared_ptr<const Collator>;

// `value` with every string and symbol (inside arrays and embedded
// documents too) replaced by its sort key under `collator`, as a string; the
// value itself when `collator` is null or the value holds no strings.
Value CollationKeyOf(const Element& value, const Collator* collator);

// Whether a comparison with `value` depends on the collation: it is, or
// holds, a string or symbol (MongoDB's "collatable" values; documents and
// arrays count by what they hold).
bool IsCollatable(const Element& value);

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_COLLATOR_H_

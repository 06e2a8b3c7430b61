// bson/string_comparator.h: MongoDB's comparison order with a collation.
//
// A collation changes one thing in the comparison order: how two strings
// (BSON string and symbol values, wherever they sit: at the top, inside
// arrays, inside embedded documents' values) compare. Field names, the
// order of types and every other type compare as CompareValues does.
// `StringComparator` is that one decision; query/collator.h implements it
// with ICU. A null comparator is the simple (binary) collation.
//
// Thread safety: implementations must be immutable and callable from many
// threads at once.
#ifndef ROCKDOC_BSON_STRING_COMPARATOR_H_
#define ROCKDOC_BSON_STRING_COMPARATOR_H_

#include <string_view>

#include "rockdoc/document.h"

namespace rockdoc {

class StringComparator {
 public:
  virtual ~StringComparator() = default;
  // <0, 0 or >0 as `a` sorts before, equal to or after `b`.
  virtual int CompareStrings(std::string_view a, std::string_view b) const = 0;
};

// CompareValues with strings compared by `strings` (CompareValues itself
// when null).
int CompareValuesWith(const Element& a, const Element& b, const StringComparator* strings);
// CompareDocuments with the same rule (field names still binary).
int CompareDocumentsWith(DocumentView a, DocumentView b, const StringComparator* strings);

}  // namespace rockdoc

#endif  // ROCKDOC_BSON_STRING_COMPARATOR_H_

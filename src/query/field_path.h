// query/field_path.h: dotted paths and MongoDB's rules for walking them
// through embedded documents and arrays.
//
// A query path such as "a.b.0.c" names a value that may sit behind any number
// of arrays. MongoDB does not follow one route: at an array it fans out over
// the elements that are documents ("implicit array traversal"), and where the
// next part is a decimal index it also takes the element at that position.
// At the end of the path an array yields each of its elements and then
// itself as a whole. `ForEachPathValue` enumerates exactly the values the
// server's matcher considers (mongo/db/matcher/path.cpp semantics), in place,
// without copying or allocating.
//
// Thread safety: FieldPath is immutable after construction; the walk is a
// pure function.
#ifndef ROCKDOC_QUERY_FIELD_PATH_H_
#define ROCKDOC_QUERY_FIELD_PATH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc {

// A dotted path split into parts. Parts are kept as offsets into the owned
// `dotted()` string (not as views, which a move of a short, inline-stored
// string would invalidate), so FieldPath copies and moves freely.
class FieldPath {
 public:
  FieldPath() = default;
  explicit FieldPath(std::string dotted);

  const std::string& dotted() const { return dotted_; }
  size_t size() const { return parts_.size(); }
  bool empty() const { return parts_.empty(); }
  std::string_view part(size_t i) const {
    return std::string_view(dotted_).substr(parts_[i].first, parts_[i].second);
  }
  // True when part `i` is all decimal digits, so it may also name an array
  // position ("a.0"). An empty part never does.
  bool part_is_index(size_t i) const { return index_parts_[i]; }

 private:
  void Split();
  std::string dotted_;
  std::vector<std::pair<uint32_t, uint32_t>> parts_;  // offset, length
  std::vector<bool> index_parts_;
};

// True when `s` is non-empty and all ASCII digits.
bool IsAllDigits(std::string_view s);

// What the walk yields for an array found at the end of the path.
enum class LeafArrayMode {
  // Each element, then the array itself: what equality, ranges, $in,
  // $type, $exists, $regex and $mod see.
  kTraverse,
  // Only the array itself: what $size and $elemMatch see.
  kNoTraversal,
};

// The array position reported for a value reached through an array: the
// index in the *outermost* array that was implicitly traversed, or
// kNoArrayOffset when no array was traversed (or only positionally).
inline constexpr int64_t kNoArrayOffset = -1;

namespace path_internal {

template <typename Fn>
bool WalkDocument(DocumentView doc, const FieldPath& path, size_t part, int64_t offset,
                  LeafArrayMode mode, const Fn& fn);

// `array` was found at path part `part - 1`; `part` is the next one to
// resolve (== path.size() when the array is the leaf).
template <typename Fn>
bool WalkArray(const Element& array, const FieldPath& path, size_t part, int64_t offset,
               LeafArrayMode mode, const Fn& fn) {
  if (part == path.size()) {
    if (mode == LeafArrayMode::kTraverse) {
      int64_t index = 0;
      for (const Element& elt : array.Array()) {
        if (fn(elt, offset != kNoArrayOffset ? offset : index)) return true;
        ++index;
      }
    }
    return fn(array, offset);
  }
  const bool positional = path.part_is_index(part);
  const std::string_view next = path.part(part);
  int64_t index = 0;
  for (const Element& elt : array.Array()) {
    const int64_t elt_offset = offset != kNoArrayOffset ? offset : index;
    const bool at_position = positional && elt.key() == next;
    if (elt.type() == BsonType::kDocument) {
      // The element is a document: the rest of the path applies inside it,
      // with the numeric part read as a field name...
      if (WalkDocument(elt.Document(), path, part, elt_offset, mode, fn)) return true;
    }
    if (at_position) {
      // ...and, at the named position, the part also selects this element.
      // Positional access is not implicit traversal: it reports no offset of
      // its own, and an array reached this way at the leaf is not expanded.
      if (part + 1 == path.size()) {
        if (fn(elt, offset)) return true;
      } else if (elt.type() == BsonType::kDocument) {
        if (WalkDocument(elt.Document(), path, part + 1, offset, mode, fn)) return true;
      } else if (elt.type() == BsonType::kArray) {
        if (WalkArray(elt, path, part + 1, offset, mode, fn)) return true;
      }
    }
    ++index;
  }
  return false;
}

template <typename Fn>
bool WalkDocument(DocumentView doc, const FieldPath& path, size_t part, int64_t offset,
                  LeafArrayMode mode, const Fn& fn) {
  for (;;) {
    Element e = doc.Get(path.part(part));
    if (!e.ok()) return fn(Element(), offset);  // missing
    const bool leaf = part + 1 == path.size();
    if (e.type() == BsonType::kArray) return WalkArray(e, path, part + 1, offset, mode, fn);
    if (leaf) return fn(e, offset);
    if (e.type() != BsonType::kDocument) return fn(Element(), offset);  // a scalar blocks
    doc = e.Document();
    ++part;
  }
}

}  // namespace path_internal

// Calls `fn(const Element& value, int64_t array_offset) -> bool` for every
// value the path reaches in `doc`, stopping at (and returning true on) the
// first call that returns true. A missing value is passed as a default
// Element (type kEod): a path that ends at a missing field, or runs into a
// scalar, yields one missing value; array elements that are not documents
// yield nothing for a path that continues past them.
//
// Example: path "a.b" over {a: [{b: [1, 2]}, {c: 1}]} with kTraverse yields
// 1 (offset 0), 2 (offset 0), [1, 2] (offset 0), missing (offset 1).
template <typename Fn>
bool ForEachPathValue(DocumentView doc, const FieldPath& path, LeafArrayMode mode,
                      const Fn& fn) {
  if (path.empty()) return false;
  return path_internal::WalkDocument(doc, path, 0, kNoArrayOffset, mode, fn);
}

// "a.b.c" -> {"a", "b", "c"} ("" parts kept, for the caller to refuse).
std::vector<std::string> SplitDotted(std::string_view path);

// SplitDotted, each part checked as MongoDB's FieldPath (an aggregation
// path after its '$', $unwind's, $lookup's): 15998 "FieldPath field names
// may not be empty strings." for an empty part, 16410 for one that starts
// with '$'.
StatusOr<std::vector<std::string>> SplitFieldPath(std::string_view path);

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_FIELD_PATH_H_

// index/key_generator.h: the index keys of a document, with MongoDB's
// semantics.
//
// For an index on fields f1..fn, each key holds one value per field:
//   * a missing field is null (a sparse index drops a key whose fields are
//     all missing; a partial index drops documents its filter rejects);
//   * an array along a path yields one key per element ("multikey"): at the
//     end of the path each element is a value (an element that is itself an
//     array is keyed whole: arrays are expanded one level per path
//     component); in the middle of the path each element that is a
//     document continues the path, and any other element counts as missing;
//   * an empty array is `undefined` at the end of a path and missing (null)
//     in the middle;
//   * a numeric path component ("a.0") takes the element at that position
//     without expanding the array, when the array has one (and then no
//     document in the array may have a field of that name: MongoDB's 16746
//     "Ambiguous field name found in array"); otherwise the array is
//     expanded and the component names a field of its documents;
//   * fields reaching the same array (a compound index on "a.b" and "a.c")
//     take their values from the same element, one key per element; fields
//     reaching two different arrays are "parallel arrays", which MongoDB
//     refuses: CannotIndexParallelArrays (171) "cannot index parallel
//     arrays [b] [a]" (the later array's field name, then the first's);
//   * keys equal in value (1 and 1.0) collapse to one.
//
// Unlike MongoDB, which ignores arrays of fewer than two elements when it
// records multikey paths, every expanded array is recorded: a covered query
// over {a: [1]} must give back [1], not 1, so the planner has to know.
//
// Thread safety: pure functions.
#ifndef ROCKDOC_INDEX_KEY_GENERATOR_H_
#define ROCKDOC_INDEX_KEY_GENERATOR_H_

#include <string>
#include <vector>

#include "index/index_descriptor.h"
#include "keystring/keystring.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// One key: its values encoded as a keystring with the index's directions,
// and the type bits that decode them exactly.
struct IndexKey {
  std::string bytes;
  std::string type_bits;
  friend bool operator==(const IndexKey& a, const IndexKey& b) {
    return a.bytes == b.bytes && a.type_bits == b.type_bits;
  }
};

// Generates the keys of `doc` for `index` into *keys (replacing its
// contents), sorted by `bytes` with duplicates removed (the first in
// document order is kept). Empty when the document is not in the index
// (partial filter not matched, or sparse and every field missing).
// *multikey_paths (if not null) receives, per field, the path components
// at which arrays were expanded. Errors: CannotIndexParallelArrays (171);
// 16746 for an ambiguous positional component; on error *keys is
// unspecified.
//
// Example: on {a: 1, "b.c": -1}, {a: [1, 2], b: {c: "x"}} gives the keys
// (1, "x") and (2, "x"), and multikey paths [{0}, {}].
Status GenerateIndexKeys(const IndexDescriptor& index, DocumentView doc,
                         std::vector<IndexKey>* keys, MultikeyPaths* multikey_paths = nullptr);

// Appends one key value to `b`: under a collation (not null), a string (or
// a value holding strings) as its collation key (query/collator.h), so that
// keys order as the collation orders values; the value itself otherwise.
void AppendKeyValue(keystring::Builder* b, const Element& value, const Collator* collator);

// Whether `doc` belongs in `index` at all (its partial filter matches).
bool InPartialIndex(const IndexDescriptor& index, DocumentView doc);

// The start every kind's GetKeys shares: `keys` emptied, `multikey_paths`
// (if not null) one empty entry per field; whether `doc` belongs in the
// index at all (InPartialIndex), so that false means "no keys".
bool BeginIndexKeys(const IndexDescriptor& index, DocumentView doc, std::vector<IndexKey>* keys,
                    MultikeyPaths* multikey_paths);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_INDEX_KEY_GENERATOR_H_

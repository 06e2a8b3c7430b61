// query/projection.h: find() projections ({a: 1, "b.c": 1}, {x: 0},
// {arr: {$slice: 2}}, {arr: {$elemMatch: {...}}}, {"arr.$": 1}).
//
// Semantics are MongoDB's (4.4 and later):
//   - An inclusion projection returns `_id` (unless `_id: 0`) and the listed
//     paths, in the document's field order; an exclusion projection returns
//     everything but the listed paths. Mixing the two is an error, except
//     for `_id`.
//   - Dotted paths go through embedded documents and arrays of documents:
//     {"a.b": 1} on {a: [{b: 1, c: 2}, 3]} gives {a: [{b: 1}]} (inclusion
//     drops non-document array elements; exclusion keeps them).
//   - {a: {b: 1}} is the same as {"a.b": 1}.
//   - $slice: n (first n, or last -n), or [skip, limit] (a negative skip
//     counts from the end). A projection whose only entries are $slice
//     behaves as an exclusion projection; in an inclusion projection the
//     sliced array's parent keeps only what is projected.
//   - $elemMatch (top-level fields only) keeps the first matching element;
//     the field is omitted when none matches, and is placed after the other
//     included fields, as MongoDB 4.4+ does. It makes the projection an
//     inclusion projection.
//   - "a.$" keeps, in the first array along path a, only the element at the
//     query's matched position (MatchDetails::elem_match_key); applying it
//     without one is error 51246.
// Literal values and aggregation expressions ({a: "x"}, {a: {$add: ...}},
// $meta) are not supported (NotImplemented). true/false and numbers mean
// include/exclude.
//
// Thread safety: a Projection is immutable after Parse; Apply is const and
// may run on many threads. Copies share the parsed tree.
//
// Example:
//   auto proj = rockdoc::Projection::Parse(*rockdoc::FromJson(R"({"name": 1})"), nullptr);
//   rockdoc::StatusOr<rockdoc::Document> out = proj->Apply(stored_doc, nullptr);
#ifndef ROCKDOC_QUERY_PROJECTION_H_
#define ROCKDOC_QUERY_PROJECTION_H_

#include <memory>
#include <string>
#include <vector>

#include "query/match_expression.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc {

class Projection {
 public:
  enum class Type { kInclusion, kExclusion };

  // Parses a projection document. `query` is the find's filter (may be
  // null); it is not retained. Errors, with MongoDB's codes:
  //   31253 "Cannot do inclusion on field x in exclusion projection"
  //   31254 "Cannot do exclusion on field x in inclusion projection"
  //   31250 "Path collision at a", 31249 "Path collision at a.b remaining portion b"
  //   31271 positional with an expression, 31276 two positionals,
  //   31277 "a.$" when `query` (if given) tests no path under "a",
  //   31270 a path ending in ".$.", 31287 a second "$" after the first,
  //   31255/31256 positional and $elemMatch together,
  //   31272/31257/31258/31259/31273 malformed $slice,
  //   31274 $elemMatch argument not an object, 31275 $elemMatch on a dotted field,
  //   15998 empty field name, 16410 a field name starting with '$',
  //   51270 empty sub-projection {a: {}},
  //   any error of parsing an $elemMatch filter (BadValue, ...),
  //   NotImplemented for literals, expressions and $meta.
  static StatusOr<Projection> Parse(DocumentView spec, const MatchExpression* query);

  // The projected document. `details` is the query's MatchDetails for this
  // document (with RequestElemMatchKey() called before matching); it is
  // needed only when requires_match_details(). Error 51246 when a
  // positional projection has no matched array position to use.
  StatusOr<Document> Apply(DocumentView doc, const MatchDetails* details) const;

  Type type() const { return type_; }
  // No dotted paths, $slice, $elemMatch or positional: only top-level
  // inclusions or exclusions. Explain calls its stage PROJECTION_SIMPLE
  // (else PROJECTION_DEFAULT).
  bool is_simple() const { return simple_; }
  // Uses the positional "a.$" form: the caller must request and pass the
  // query's MatchDetails.
  bool requires_match_details() const { return positional_; }
  // Whether `_id` is in the output (an exclusion projection keeps it unless
  // `_id: 0`).
  bool includes_id() const { return includes_id_; }
  // Exclusion projections need the whole document.
  bool needs_whole_document() const { return type_ == Type::kExclusion; }
  // For an inclusion projection: the dotted paths whose values the output
  // is built from (`_id` included when projected), for covered-query
  // analysis. Empty for exclusion projections (see needs_whole_document).
  const std::vector<std::string>& required_paths() const { return required_paths_; }

  struct Node;  // the parsed tree, defined in projection.cc

 private:
  std::shared_ptr<const Node> root_;
  Type type_ = Type::kExclusion;
  bool simple_ = true;
  bool positional_ = false;
  bool includes_id_ = true;
  std::vector<std::string> required_paths_;
};

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_PROJECTION_H_

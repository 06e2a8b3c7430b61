// index/index_bounds.h: what part of an index a query must read.
//
// For each field of an index, an ordered list of intervals of BSON values
// (MongoDB's OrderedIntervalList); explain prints them as MongoDB does
// ("[1, 1]", "(5, inf.0]", "[MinKey, MaxKey]"). Bounds are always a
// superset of the keys a query needs; where they are exactly the keys a
// predicate matches (BoundsTightness::kExact) the planner drops that
// predicate from the filter applied to what the scan returns, as MongoDB
// does. The planner may loosen bounds (for multikey fields, for predicates
// it cannot translate) but never tighten them wrongly.
//
// Bounds become byte ranges over keystrings (ranges are prefix-free
// encodings, so an interval on a prefix of fields is a byte range).
#ifndef ROCKDOC_INDEX_INDEX_BOUNDS_H_
#define ROCKDOC_INDEX_INDEX_BOUNDS_H_

#include <string>
#include <vector>

#include "query/match_expression.h"
#include "rockdoc/document.h"

namespace rockdoc::internal {

struct Interval {
  Value start;
  Value end;
  bool start_inclusive = true;
  bool end_inclusive = true;

  bool IsPoint() const;
  // "[1, 1]", "(5, inf.0]" ...
  std::string ToString() const;
  static Interval Point(const Element& v);
  static Interval All();  // [MinKey, MaxKey]
};

// Intervals over one field, ascending by value, non-overlapping.
struct OrderedIntervalList {
  std::string field;
  std::vector<Interval> intervals;
  bool IsAll() const;
  bool IsSinglePoint() const { return intervals.size() == 1 && intervals[0].IsPoint(); }
  bool AllPoints() const;
};

struct IndexBounds {
  std::vector<OrderedIntervalList> fields;
  // min()/max(): one range of whole keys instead of intervals per field
  // (MongoDB's simple range), from `start_key` (inclusive; empty: the
  // index's first key) to `end_key` (exclusive; empty: past its last), in
  // the index's order; each names the index's fields, in order. `fields` is
  // then empty. Explain shows {startKey, startKeyInclusive, endKey,
  // endKeyInclusive}.
  bool simple_range = false;
  Document start_key;
  Document end_key;
  // {field: ["[1, 1]", ...], ...} in index order (descending fields listed
  // from high to low, as a scan meets them).
  Document ToExplain(uint32_t descending_bits, bool backward) const;
};

// How exactly a leaf's intervals answer it (MongoDB's IndexBoundsBuilder
// tightness), for an index field that holds the path's value itself (one
// key value per value the matcher tests; the planner weakens this for
// multikey, positional and unenforced fields):
//   kExact:          a value is in the intervals iff it matches: the
//                    predicate need not be evaluated again;
//   kInexactCovered: the intervals are a superset, and the predicate can be
//                    evaluated on the key value (a regex over all strings);
//   kInexactFetch:   a superset that only the document can settle (null,
//                    which also matches missing fields; NaN; MinKey ...).
enum class BoundsTightness { kExact, kInexactCovered, kInexactFetch };

// The intervals a leaf predicate allows for its path's values, in value
// order, and (if `tightness` is not null) how exactly they answer it.
// Returns false when the predicate gives no bounds (the caller uses
// [MinKey, MaxKey]): negations, $type, $exists, $size, equality to an array,
// ... A regex gives its literal prefix's range (all strings without one) and
// the point of the regex value itself, which it also matches.
//
// Example: {a: {$lt: 5}} gives [-inf.0, 5), exact; {a: /^ab/i} gives
// ["", {}) and [/^ab/i, /^ab/i], inexact (covered).
bool IntervalsForLeaf(const MatchExpression& leaf, std::vector<Interval>* out,
                      BoundsTightness* tightness = nullptr);

// Set operations on value-ordered interval lists.
std::vector<Interval> UnionIntervals(std::vector<Interval> a);
std::vector<Interval> IntersectIntervals(const std::vector<Interval>& a,
                                         const std::vector<Interval>& b);

// A half-open byte range [start, end) of keys (without the index prefix);
// an empty `end` means "to the end of the index".
struct KeyRange {
  std::string start;
  std::string end;
};

inline constexpr size_t kMaxKeyRanges = 20000;

// Byte ranges covering `bounds` over keystrings built with
// `descending_bits`, ascending and disjoint. Leading fields whose intervals
// are all points are expanded as a product (up to `max_ranges` ranges); the
// first other field contributes its intervals; later fields are left
// unbounded (the filter checks them). A simple range is one byte range.
std::vector<KeyRange> BoundsToKeyRanges(const IndexBounds& bounds, uint32_t descending_bits,
                                        size_t max_ranges = kMaxKeyRanges);

// How many leading fields of `bounds` the ranges of BoundsToKeyRanges
// enforce (the expanded point fields and the field after them); the
// intervals of later fields are not checked by a scan. None for a simple
// range (it answers no predicate).
size_t EnforcedFieldCount(const IndexBounds& bounds, size_t max_ranges = kMaxKeyRanges);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_INDEX_INDEX_BOUNDS_H_

// index/index_bounds.h: what part of an index a query must read.
//
// For each field of an index, an ordered list of intervals of BSON values
// (MongoDB's OrderedIntervalList); explain prints them as MongoDB does
// ("[1, 1]", "(5, inf.0]", "[MinKey, MaxKey]"). Bounds are always a
// superset of the keys a query needs: the query's filter is applied again to
// what the scan returns, so the planner may loosen bounds (for multikey
// fields, for predicates it cannot translate) but never tighten them wrongly.
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
  // {field: ["[1, 1]", ...], ...} in index order (descending fields listed
  // from high to low, as a scan meets them).
  Document ToExplain(uint32_t descending_bits, bool backward) const;
};

// The intervals a leaf predicate allows for its path's values, in value
// order. Returns false when the predicate gives no bounds (the caller uses
// [MinKey, MaxKey]): negations, $type, $exists, $size, regexes without a
// literal prefix, equality to an array, ...
bool IntervalsForLeaf(const MatchExpression& leaf, std::vector<Interval>* out);

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

// Byte ranges covering `bounds` over keystrings built with
// `descending_bits`, ascending and disjoint. Leading fields whose intervals
// are all points are expanded as a product (up to `max_ranges` ranges); the
// first other field contributes its intervals; later fields are left
// unbounded (the filter checks them).
std::vector<KeyRange> BoundsToKeyRanges(const IndexBounds& bounds, uint32_t descending_bits,
                                        size_t max_ranges = 20000);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_INDEX_INDEX_BOUNDS_H_

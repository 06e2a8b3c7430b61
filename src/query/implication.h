// query/implication.h: whether one filter implies another (MongoDB's
// expression::isSubsetOf), for the planner's partial indexes: an index whose
// partialFilterExpression holds only the documents its filter matches may
// answer a query only when every document the query matches is in it.
//
// The check is conservative: true means implied (every document matching
// `query` matches `filter`); false means "not shown", never "not implied".
// MongoDB's rules, conjunct by conjunct: each conjunct of the filter (its
// top-level $and flattened) must be implied by one conjunct of the query on
// the same path:
//   - the same predicate;
//   - an equality (or an $in of plain values, each of them) whose value the
//     filter's comparison or $in accepts: {a: 1} implies {a: {$lte: 1.5}};
//   - a range of the same direction with a tighter or equal bound, within
//     one canonical type (type bracketing: {a: {$lte: 1}} implies
//     {a: {$lte: 1.5}}, {a: {$lt: 2}} implies {a: {$lte: 2}}, and
//     {a: {$lte: "b"}} implies nothing about numbers);
//   - anything that cannot match a missing field implies {$exists: true}.
// Null, MinKey, MaxKey, NaN, arrays and documents as bounds imply nothing
// (their matching rules differ from plain ordering).
//
// Thread safety: pure functions.
#ifndef ROCKDOC_QUERY_IMPLICATION_H_
#define ROCKDOC_QUERY_IMPLICATION_H_

#include <vector>

#include "query/match_expression.h"

namespace rockdoc::internal {

// Whether the one-path predicate `query` implies `filter` (both leaves).
bool LeafImplies(const MatchExpression& query, const MatchExpression& filter);

// Whether the conjunction `query_conjuncts` implies `filter` (each of its
// top-level conjuncts implied by one of them).
bool ConjunctsImply(const std::vector<const MatchExpression*>& query_conjuncts,
                    const MatchExpression& filter);

// The same, for a whole query filter.
bool FilterImplies(const MatchExpression& query, const MatchExpression& filter);

// The conjuncts of `e`: its children when it is an $and (flattened), else
// itself.
void CollectConjuncts(const MatchExpression* e, std::vector<const MatchExpression*>* out);

// True when the leaf cannot match a document in which its path is missing.
bool CannotMatchMissing(const MatchExpression* leaf);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_QUERY_IMPLICATION_H_

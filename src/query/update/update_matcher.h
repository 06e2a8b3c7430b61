// query/update/update_matcher.h: the query predicates that updates evaluate
// themselves: `$pull` conditions and `arrayFilters`.
//
// This is a deliberately small seam. The query layer's matcher
// (src/query/match_expression.h, `ParseMatchExpression`) was being written
// at the same time as this layer; until it is available, `ParseUpdateMatcher`
// returns a compact internal matcher covering the operators $pull and
// arrayFilters use in practice (equality, $eq $ne $gt $gte $lt $lte $in $nin
// $exists $type $size $all $elemMatch $not $regex $mod, $and $or $nor, dotted
// paths with MongoDB's array fan-out). Switching to MatchExpression means
// changing only ParseUpdateMatcher's body: every caller goes through this
// interface.
//
// Thread safety: a parsed matcher is immutable and may be shared.
#ifndef ROCKDOC_QUERY_UPDATE_UPDATE_MATCHER_H_
#define ROCKDOC_QUERY_UPDATE_UPDATE_MATCHER_H_

#include <memory>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::update_internal {

class UpdateMatcher {
 public:
  virtual ~UpdateMatcher() = default;
  // True when `doc` satisfies the query this matcher was parsed from.
  virtual bool Matches(DocumentView doc) const = 0;
};

// Parses a query filter document. Errors are BadValue (2) as MongoDB's
// parser reports them ("unknown operator: $foo", "$in needs an array", ...).
// The matcher keeps views into `query`: it must outlive the matcher.
StatusOr<std::unique_ptr<UpdateMatcher>> ParseUpdateMatcher(DocumentView query);

}  // namespace rockdoc::update_internal

#endif  // ROCKDOC_QUERY_UPDATE_UPDATE_MATCHER_H_

// query/update/update_matcher.h: the query predicates that updates evaluate
// themselves: `$pull` conditions and `arrayFilters`.
//
// A small seam over the query layer's matcher (query/match_expression.h):
// updates depend only on this interface, so the query language they accept
// is exactly find()'s, and tests of the update layer do not reach into the
// matcher's tree.
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

// Parses a query filter document with ParseMatchExpression; its errors
// (BadValue "unknown operator: $foo", ...) are returned unchanged.
StatusOr<std::unique_ptr<UpdateMatcher>> ParseUpdateMatcher(DocumentView query);

}  // namespace rockdoc::update_internal

#endif  // ROCKDOC_QUERY_UPDATE_UPDATE_MATCHER_H_

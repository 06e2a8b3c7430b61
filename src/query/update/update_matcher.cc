// ParseUpdateMatcher over the query layer's MatchExpression: $pull
// conditions and arrayFilters use exactly the semantics of find().
#include "query/update/update_matcher.h"

#include "query/match_expression.h"

namespace rockdoc::update_internal {

namespace {

class MatchExpressionMatcher : public UpdateMatcher {
 public:
  explicit MatchExpressionMatcher(std::unique_ptr<MatchExpression> expr) : expr_(std::move(expr)) {}
  bool Matches(DocumentView doc) const override { return expr_->Matches(doc); }

 private:
  std::unique_ptr<MatchExpression> expr_;
};

}  // namespace

StatusOr<std::unique_ptr<UpdateMatcher>> ParseUpdateMatcher(DocumentView query) {
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<MatchExpression> expr, ParseMatchExpression(query));
  return std::unique_ptr<UpdateMatcher>(std::make_unique<MatchExpressionMatcher>(std::move(expr)));
}

}  // namespace rockdoc::update_internal

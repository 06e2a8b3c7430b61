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

bool HasExpr(const MatchExpression& e) {
  if (e.type() == MatchType::kExpr) return true;
  for (size_t i = 0; i < e.num_children(); ++i) {
    if (HasExpr(*e.child(i))) return true;
  }
  return false;
}

}  // namespace

StatusOr<std::unique_ptr<UpdateMatcher>> ParseUpdateMatcher(DocumentView query) {
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<MatchExpression> expr, ParseMatchExpression(query));
  // $expr tests whole documents; these conditions test array elements.
  if (HasExpr(*expr)) {
    return Status(static_cast<ErrorCode>(224),  // QueryFeatureNotAllowed
                  "$expr is not allowed in the context of an array filter or $pull condition");
  }
  return std::unique_ptr<UpdateMatcher>(std::make_unique<MatchExpressionMatcher>(std::move(expr)));
}

}  // namespace rockdoc::update_internal

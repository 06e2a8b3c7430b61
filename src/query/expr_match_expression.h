// query/expr_match_expression.h: {$expr: <aggregation expression>} in a
// filter: the document matches when the expression, evaluated against it,
// is truthy (query/expression/). $expr is top-level only (a $elemMatch or
// a field's operators cannot hold it), uses no index, and may refer to
// variables a caller binds ($lookup's `let`).
//
// An evaluation error ({$expr: {$divide: ["$a", 0]}}) makes Matches answer
// false and records the error for the calling thread (TakeMatchError in
// match_expression.h), which every caller that runs a user's filter turns
// into the operation's error.
#ifndef ROCKDOC_QUERY_EXPR_MATCH_EXPRESSION_H_
#define ROCKDOC_QUERY_EXPR_MATCH_EXPRESSION_H_

#include <memory>
#include <vector>

#include "query/expression/expression.h"
#include "query/match_expression.h"

namespace rockdoc {

// Variables bound from outside a filter: their names while parsing, their
// values (by id) while matching. The values may change between matches
// (one $lookup input document after another), never during one.
struct FilterVariables {
  internal::VariableScope scope;
  std::vector<Value> values;
};

// The variables of a command's `let` ({name: <expression>}: an aggregate's,
// a find's, an update's ...): each expression evaluated once, without a
// document (it may use $$NOW and the names before it). Errors: the names'
// (16866-16868) and expressions'.
StatusOr<std::shared_ptr<FilterVariables>> BindLetVariables(DocumentView let);

class ExprMatchExpression : public MatchExpression {
 public:
  // `operand` is $expr's value; `variables` may be null (no bound names).
  static StatusOr<std::unique_ptr<MatchExpression>> Parse(
      const Element& operand, std::shared_ptr<FilterVariables> variables);

  bool Matches(DocumentView doc, MatchDetails* details = nullptr) const override;
  // $expr tests documents, not values: false.
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  // {$expr: <the expression as given>}.
  void SerializeTo(BsonBuilder* builder) const override;

 protected:
  std::string DebugLine() const override;

 private:
  ExprMatchExpression(Document spec, internal::ExpressionPtr expr, int variable_count,
                      std::shared_ptr<FilterVariables> variables);
  Document spec_;  // {$expr: ...}
  internal::ExpressionPtr expr_;
  int variable_count_;
  std::shared_ptr<FilterVariables> variables_;
  int64_t now_ms_;
};

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_EXPR_MATCH_EXPRESSION_H_

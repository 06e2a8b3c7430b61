// query/expr_match_expression.cc: $expr (expr_match_expression.h).
#include "query/expr_match_expression.h"

#include <chrono>

#include "rockdoc/json.h"

namespace rockdoc {

StatusOr<std::shared_ptr<FilterVariables>> BindLetVariables(DocumentView let) {
  auto bound = std::make_shared<FilterVariables>();
  internal::ExpressionVariables vars;
  vars.now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  for (const Element& v : let) {
    ROCKDOC_ASSIGN_OR_RETURN(internal::ExpressionPtr e,
                             internal::ParseExpression(v, &bound->scope));
    vars.user.resize(static_cast<size_t>(bound->scope.id_count()));
    ROCKDOC_ASSIGN_OR_RETURN(Value value, e->Evaluate(vars));
    ROCKDOC_ASSIGN_OR_RETURN(int id, bound->scope.Define(v.key()));
    vars.user.resize(static_cast<size_t>(id) + 1);
    vars.user[static_cast<size_t>(id)] = std::move(value);
  }
  bound->values = vars.user;
  return bound;
}

StatusOr<std::unique_ptr<MatchExpression>> ExprMatchExpression::Parse(
    const Element& operand, std::shared_ptr<FilterVariables> variables) {
  internal::VariableScope own;
  internal::VariableScope* scope = variables != nullptr ? &variables->scope : &own;
  const size_t outer = scope->size();
  StatusOr<internal::ExpressionPtr> expr = internal::ParseExpression(operand, scope);
  const int count = scope->id_count();
  scope->PopTo(outer);
  ROCKDOC_RETURN_IF_ERROR(expr.status());
  BsonBuilder b;
  b.AppendElementAs("$expr", operand);
  return std::unique_ptr<MatchExpression>(
      new ExprMatchExpression(std::move(b).Build(), std::move(*expr), count, std::move(variables)));
}

ExprMatchExpression::ExprMatchExpression(Document spec, internal::ExpressionPtr expr,
                                         int variable_count,
                                         std::shared_ptr<FilterVariables> variables)
    : MatchExpression(MatchType::kExpr),
      spec_(std::move(spec)),
      expr_(std::move(expr)),
      variable_count_(variable_count),
      variables_(std::move(variables)),
      now_ms_(std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count()) {}

bool ExprMatchExpression::Matches(DocumentView doc, MatchDetails*) const {
  internal::ExpressionVariables vars;
  vars.root = doc;
  vars.now_ms = now_ms_;
  if (variables_ != nullptr) vars.user = variables_->values;
  if (vars.user.size() < static_cast<size_t>(variable_count_)) vars.user.resize(variable_count_);
  StatusOr<Value> v = expr_->Evaluate(vars);
  if (!v.ok()) {
    RecordMatchError(v.status());
    return false;
  }
  return internal::IsTruthy(v->element());
}

bool ExprMatchExpression::MatchesSingleElement(const Element&, MatchDetails*) const { return false; }

void ExprMatchExpression::SerializeTo(BsonBuilder* builder) const {
  builder->AppendElement(spec_.Get("$expr"));
}

std::string ExprMatchExpression::DebugLine() const {
  return "$expr " + ValueToJson(spec_.Get("$expr"), JsonFormat::kShell);
}

}  // namespace rockdoc

// pipeline/match_stage.cc: $match (pipeline.h). A leading $match is the
// pipeline's find (planning.cc); elsewhere it filters as a stage.
#include <memory>
#include <optional>
#include <utility>

#include "pipeline/stage.h"
#include "query/match_expression.h"

namespace rockdoc::internal {

namespace {

class MatchStage : public Stage {
 public:
  explicit MatchStage(std::unique_ptr<MatchExpression> expr) : expr_(std::move(expr)) {}
  StatusOr<std::optional<Document>> Next() override {
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) return doc;
      ROCKDOC_ASSIGN_OR_RETURN(bool matched, MatchesOrError(*expr_, doc->view()));
      if (matched) return doc;
    }
  }

 private:
  std::unique_ptr<MatchExpression> expr_;
};

bool HasText(const MatchExpression& e) {
  if (e.type() == MatchType::kText) return true;
  for (size_t i = 0; i < e.num_children(); ++i) {
    if (HasText(*e.child(i))) return true;
  }
  return false;
}

StatusOr<std::unique_ptr<Stage>> ParseMatch(const Element& s, const StageContext& ctx) {
  if (s.type() != BsonType::kDocument) {
    return StageFailed(15959, "the match filter must be an expression in an object");
  }
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<MatchExpression> m,
                           ParseMatchExpression(s.Document(), ctx.options.variables));
  // A leading $match is the pipeline's find, which plans $text; here it
  // would be matched document by document, which only a text index can do.
  if (HasText(*m)) {
    return StageFailed(17313, "$match with $text is only allowed as the first pipeline stage");
  }
  return std::unique_ptr<Stage>(std::make_unique<MatchStage>(std::move(m)));
}

}  // namespace

void AddMatchStage(StageTable* table) { table->emplace("$match", StageDef{.parse = &ParseMatch}); }

}  // namespace rockdoc::internal

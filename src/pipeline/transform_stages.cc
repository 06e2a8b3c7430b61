// pipeline/transform_stages.cc: $project, $addFields/$set, $unset,
// $replaceRoot/$replaceWith (pipeline.h): one document in, one reshaped
// document out, through query/expression/document_transform.h, which
// update pipelines share.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "pipeline/planning.h"
#include "pipeline/stage.h"
#include "query/expression/document_transform.h"

namespace rockdoc::internal {

namespace {

class TransformStage : public ExpressionStage {
 public:
  TransformStage(std::unique_ptr<DocumentTransform> transform, int variables, int64_t now_ms,
                 std::shared_ptr<FilterVariables> bound)
      : ExpressionStage(variables, now_ms, std::move(bound)), transform_(std::move(transform)) {}
  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
    if (!doc) return doc;
    ROCKDOC_ASSIGN_OR_RETURN(Document out, transform_->Apply(doc->view(), VariablesFor(*doc)));
    return std::optional<Document>(std::move(out));
  }

 private:
  std::unique_ptr<DocumentTransform> transform_;
};

StatusOr<std::unique_ptr<Stage>> ParseTransform(const Element& s, const StageContext& ctx) {
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<DocumentTransform> t,
                           ParseDocumentTransform(s.key(), s, ctx.scope));
  return std::unique_ptr<Stage>(std::make_unique<TransformStage>(
      std::move(t), ctx.scope->id_count(), ctx.now_ms, ctx.options.variables));
}

// A $match passes an $addFields/$set of other fields.
bool AddFieldsChangedRoots(const Element& stage, std::set<std::string>* changed) {
  if (stage.type() != BsonType::kDocument) return false;
  for (const Element& f : stage.Document()) changed->insert(RootOf(f.key()));
  return true;
}

// And an $unset of other fields.
bool UnsetChangedRoots(const Element& stage, std::set<std::string>* changed) {
  if (stage.type() == BsonType::kString) {
    changed->insert(RootOf(stage.String()));
    return true;
  }
  if (stage.type() != BsonType::kArray) return false;
  for (const Element& f : stage.Array()) {
    if (f.type() != BsonType::kString) return false;
    changed->insert(RootOf(f.String()));
  }
  return true;
}

}  // namespace

void AddTransformStages(StageTable* table) {
  table->emplace("$project", StageDef{.parse = &ParseTransform});
  table->emplace("$addFields",
                 StageDef{.parse = &ParseTransform, .changed_roots = &AddFieldsChangedRoots});
  table->emplace("$set", StageDef{.parse = &ParseTransform, .changed_roots = &AddFieldsChangedRoots});
  table->emplace("$unset", StageDef{.parse = &ParseTransform, .changed_roots = &UnsetChangedRoots});
  table->emplace("$replaceRoot", StageDef{.parse = &ParseTransform});
  table->emplace("$replaceWith", StageDef{.parse = &ParseTransform});
}

}  // namespace rockdoc::internal

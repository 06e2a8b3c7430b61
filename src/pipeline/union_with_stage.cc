// pipeline/union_with_stage.cc: $unionWith (pipeline.h): the input's
// documents, then another collection's pipeline's.
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {

// The input's documents, then the other collection's pipeline's.
class UnionWithStage : public Stage {
 public:
  explicit UnionWithStage(std::unique_ptr<DocumentSource> other) : other_(std::move(other)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (!input_done_) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (doc) return doc;
      input_done_ = true;
    }
    return other_->Next();
  }

 private:
  std::unique_ptr<DocumentSource> other_;
  bool input_done_ = false;
};

StatusOr<std::unique_ptr<Stage>> ParseUnionWith(const Element& s, const StageContext& ctx) {
  std::string coll;
  Document sub;  // the other collection's pipeline ([] by default)
  if (s.type() == BsonType::kString) {
    coll = std::string(s.String());
  } else if (s.type() == BsonType::kDocument) {
    bool has_coll = false;
    for (const Element& f : s.Document()) {
      if (f.key() == "coll") {
        if (f.type() != BsonType::kString) {
          return StageFailed(14, "BSON field '$unionWith.coll' is the wrong type '" +
                                     std::string(BsonTypeAlias(f.type())) +
                                     "', expected type 'string'");
        }
        coll = std::string(f.String());
        has_coll = true;
      } else if (f.key() == "pipeline") {
        if (f.type() != BsonType::kArray) {
          return StageFailed(14, "BSON field '$unionWith.pipeline' is the wrong type '" +
                                     std::string(BsonTypeAlias(f.type())) +
                                     "', expected type 'array'");
        }
        sub = Document::AdoptValidated(std::string(f.Array().bytes()));
      } else {
        return StageFailed(
            40415, "BSON field '$unionWith." + std::string(f.key()) + "' is an unknown field.");
      }
    }
    if (!has_coll) {
      return StageFailed(40414, "BSON field '$unionWith.coll' is missing but a required field");
    }
  } else {
    return StageFailed(
        9, "the $unionWith stage specification must be an object or string, but found " +
               std::string(BsonTypeAlias(s.type())));
  }
  // Opened as it is parsed (CheckPipeline's find opens nothing).
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<DocumentSource> other,
                           OpenPipeline(coll, sub.view(), ctx.options, ctx.find));
  return std::unique_ptr<Stage>(std::make_unique<UnionWithStage>(std::move(other)));
}

}  // namespace

void AddUnionWithStage(StageTable* table) {
  table->emplace("$unionWith", StageDef{.parse = &ParseUnionWith});
}

}  // namespace rockdoc::internal

// pipeline/count_stage.cc: $count (pipeline.h).
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {

class CountStage : public Stage {
 public:
  explicit CountStage(std::string field) : field_(std::move(field)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (done_) return std::optional<Document>();
    done_ = true;
    int64_t n = 0;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      ++n;
    }
    if (n == 0) return std::optional<Document>();  // no input, no document (as MongoDB)
    BsonBuilder b;
    b.AppendElementAs(field_, IntegerValue(n).element());
    return std::optional<Document>(std::move(b).Build());
  }

 private:
  std::string field_;
  bool done_ = false;
};

StatusOr<std::string> ParseCountField(const Element& e) {
  if (e.type() != BsonType::kString) {
    return StageFailed(40156, "the count field must be a non-empty string");
  }
  std::string_view name = e.String();
  if (name.empty()) return StageFailed(40157, "the count field must be a non-empty string");
  if (name[0] == '$') return StageFailed(40158, "the count field cannot be a $-prefixed path");
  if (name.find('.') != std::string_view::npos) {
    return StageFailed(40160, "the count field cannot contain '.'");
  }
  return std::string(name);
}

StatusOr<std::unique_ptr<Stage>> ParseCount(const Element& s, const StageContext& ctx) {
  (void)ctx;
  ROCKDOC_ASSIGN_OR_RETURN(std::string field, ParseCountField(s));
  return std::unique_ptr<Stage>(std::make_unique<CountStage>(std::move(field)));
}

}  // namespace

void AddCountStage(StageTable* table) { table->emplace("$count", StageDef{.parse = &ParseCount}); }

}  // namespace rockdoc::internal

// pipeline/skip_limit_stages.cc: $skip and $limit (pipeline.h). Leading
// ones are the pipeline's find's (planning.cc), and a $limit after a $sort
// makes the sort a top-k.
#include <memory>
#include <optional>
#include <string>

#include "pipeline/stage.h"

namespace rockdoc::internal {

StatusOr<int64_t> StageCount(std::string_view stage, const Element& e) {
  int64_t n = 0;
  if (!e.IsNumber()) {
    return stage == "$limit" ? StageFailed(15957, "the limit must be specified as a number")
                             : StageFailed(15972, "Argument to $skip must be a number");
  }
  if (!e.ExactInt64(&n)) {
    return StageFailed(stage == "$limit" ? 15957 : 15972,
                       "invalid argument to " + std::string(stage) +
                           " stage: Cannot represent as a 64-bit integer: " + Shown(e));
  }
  if (stage == "$limit" && n <= 0) return StageFailed(15958, "the limit must be positive");
  if (stage == "$skip" && n < 0) return StageFailed(15956, "Argument to $skip cannot be negative");
  return n;
}

namespace {

class SkipLimitStage : public Stage {
 public:
  SkipLimitStage(int64_t skip, int64_t limit) : skip_(skip), limit_(limit) {}
  StatusOr<std::optional<Document>> Next() override {
    while (skip_ > 0) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) return doc;
      --skip_;
    }
    if (limit_ == 0) return std::optional<Document>();
    if (limit_ > 0) --limit_;
    return input_->Next();
  }

 private:
  int64_t skip_;
  int64_t limit_;  // -1: none
};

StatusOr<std::unique_ptr<Stage>> ParseSkip(const Element& s, const StageContext& ctx) {
  (void)ctx;
  ROCKDOC_ASSIGN_OR_RETURN(int64_t n, StageCount(s.key(), s));
  return std::unique_ptr<Stage>(std::make_unique<SkipLimitStage>(n, -1));
}

StatusOr<std::unique_ptr<Stage>> ParseLimit(const Element& s, const StageContext& ctx) {
  (void)ctx;
  ROCKDOC_ASSIGN_OR_RETURN(int64_t n, StageCount(s.key(), s));
  return std::unique_ptr<Stage>(std::make_unique<SkipLimitStage>(0, n));
}

}  // namespace

void AddSkipLimitStages(StageTable* table) {
  table->emplace("$skip", StageDef{.parse = &ParseSkip});
  table->emplace("$limit", StageDef{.parse = &ParseLimit});
}

}  // namespace rockdoc::internal

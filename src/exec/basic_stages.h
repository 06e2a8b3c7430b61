// exec/basic_stages.h: stages that shape a stream of results without reading
// storage: SKIP, LIMIT, and the OR of several inputs (deduplicated by record).
#ifndef ROCKDOC_EXEC_BASIC_STAGES_H_
#define ROCKDOC_EXEC_BASIC_STAGES_H_

#include <memory>
#include <string>
#include <unordered_set>

#include "exec/plan_stage.h"

namespace rockdoc::internal {

class SkipStage : public PlanStage {
 public:
  SkipStage(std::unique_ptr<PlanStage> child, int64_t skip);
  std::string_view name() const override { return "SKIP"; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  int64_t skip_;
  int64_t skipped_ = 0;
};

class LimitStage : public PlanStage {
 public:
  LimitStage(std::unique_ptr<PlanStage> child, int64_t limit);
  std::string_view name() const override { return "LIMIT"; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  int64_t limit_;
  int64_t returned_ = 0;
};

// Returns each record once across all children, in child order.
class OrStage : public PlanStage {
 public:
  explicit OrStage(std::vector<std::unique_ptr<PlanStage>> children);
  std::string_view name() const override { return "OR"; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  size_t current_ = 0;
  std::unordered_set<std::string> seen_;
  int64_t dups_dropped_ = 0;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_BASIC_STAGES_H_

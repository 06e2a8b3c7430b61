#include "exec/basic_stages.h"

namespace rockdoc::internal {

SkipStage::SkipStage(std::unique_ptr<PlanStage> child, int64_t skip) : skip_(skip) {
  AddChild(std::move(child));
}

StageState SkipStage::DoWork(WorkingMember** out) {
  StageState s = child()->Work(out);
  if (s == StageState::kFailure) return Fail(child()->status());
  if (s == StageState::kAdvanced && skipped_ < skip_) {
    ++skipped_;
    return StageState::kNeedTime;
  }
  return s;
}

void SkipStage::ExplainFields(BsonBuilder* out, ExplainVerbosity) const {
  AppendNumber(out, "skipAmount", skip_);
}

LimitStage::LimitStage(std::unique_ptr<PlanStage> child, int64_t limit) : limit_(limit) {
  AddChild(std::move(child));
}

StageState LimitStage::DoWork(WorkingMember** out) {
  if (returned_ >= limit_) return StageState::kEof;
  StageState s = child()->Work(out);
  if (s == StageState::kFailure) return Fail(child()->status());
  if (s == StageState::kAdvanced) ++returned_;
  return s;
}

void LimitStage::ExplainFields(BsonBuilder* out, ExplainVerbosity) const {
  AppendNumber(out, "limitAmount", limit_);
}

OrStage::OrStage(std::vector<std::unique_ptr<PlanStage>> children) {
  for (auto& c : children) AddChild(std::move(c));
}

StageState OrStage::DoWork(WorkingMember** out) {
  while (current_ < children_.size()) {
    StageState s = child(current_)->Work(out);
    if (s == StageState::kFailure) return Fail(child(current_)->status());
    if (s == StageState::kEof) {
      ++current_;
      return StageState::kNeedTime;
    }
    if (s == StageState::kNeedTime) return s;
    // A record reached by two branches is returned once.
    if (!seen_.emplace((*out)->record_key).second) {
      ++dups_dropped_;
      return StageState::kNeedTime;
    }
    return StageState::kAdvanced;
  }
  return StageState::kEof;
}

void OrStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    AppendNumber(out, "dupsTested", static_cast<int64_t>(seen_.size() + dups_dropped_));
    AppendNumber(out, "dupsDropped", dups_dropped_);
  }
}

}  // namespace rockdoc::internal

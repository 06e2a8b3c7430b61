#include "exec/write_stages.h"

namespace rockdoc::internal {

WriteStage::WriteStage(Kind kind, std::unique_ptr<PlanStage> child, const Engine& engine,
                       const CollectionMeta& meta, const Deadline& deadline,
                       const ReadView& view, TargetWriter write, bool dry_run,
                       KvTransaction* outer)
    : kind_(kind),
      view_(view),
      write_(write),
      dry_run_(dry_run),
      loop_(engine, meta, deadline, std::move(write), outer) {
  AddChild(std::move(child));
}

StageState WriteStage::DoWork(WorkingMember** /*out*/) {
  if (collecting_) {
    // First the child's whole answer, at its snapshot: writing while the
    // plan still reads could show it its own changes (a document moved
    // forward in an index scanned again).
    WorkingMember* in = nullptr;
    StageState s = child()->Work(&in);
    if (s == StageState::kFailure) return Fail(child()->status());
    if (s == StageState::kAdvanced) {
      targets_.push_back(WriteTarget{std::string(in->record_key)});
      return StageState::kNeedTime;
    }
    if (s == StageState::kNeedTime) return s;
    collecting_ = false;
    targets_found_ = static_cast<int64_t>(targets_.size());
    counts_.targets = targets_found_;
    if (!dry_run_) loop_.SetTargets(std::move(targets_));
    return StageState::kNeedTime;
  }
  if (dry_run_) return DryStep();
  if (loop_.done()) {
    Status s = loop_.Finish();
    if (!s.ok()) return Fail(s);
    counts_ = loop_.counts();
    counts_.targets = targets_found_;
    return StageState::kEof;
  }
  TargetOutcome outcome;
  Status s = loop_.Step(&outcome);
  counts_ = loop_.counts();
  counts_.targets = targets_found_;
  if (!s.ok()) return Fail(s);
  return StageState::kNeedTime;
}

StageState WriteStage::DryStep() {
  if (dry_next_ >= targets_.size()) return StageState::kEof;
  const std::string& key = targets_[dry_next_++].record_key;
  bool found = false;
  Status s = view_.Get(key, &value_, &found);
  if (!s.ok()) return Fail(s);
  if (!found) return StageState::kNeedTime;
  Document current = Document::AdoptValidated(std::string(value_.view()));
  WriteDelta delta;
  size_t bytes = 0;
  StatusOr<TargetOutcome> outcome = write_(nullptr, key, current, &delta, &bytes);
  if (!outcome.ok()) return Fail(outcome.status());
  if (*outcome != TargetOutcome::kNoMatch) ++counts_.matched;
  if (*outcome == TargetOutcome::kWritten) ++counts_.written;
  return StageState::kNeedTime;
}

void WriteStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (verbosity == ExplainVerbosity::kQueryPlanner) return;
  if (kind_ == Kind::kUpdate) {
    AppendNumber(out, "nMatched", counts_.matched);
    AppendNumber(out, "nWouldModify", counts_.written);
    AppendNumber(out, "nWouldUpsert", upserts_);
  } else {
    AppendNumber(out, "nWouldDelete", counts_.written);
  }
}

CountStage::CountStage(std::unique_ptr<PlanStage> child) { AddChild(std::move(child)); }

StageState CountStage::DoWork(WorkingMember** /*out*/) {
  WorkingMember* in = nullptr;
  StageState s = child()->Work(&in);
  if (s == StageState::kFailure) return Fail(child()->status());
  if (s == StageState::kAdvanced) {
    ++counted_;
    return StageState::kNeedTime;
  }
  return s;
}

void CountStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (verbosity == ExplainVerbosity::kQueryPlanner) return;
  AppendNumber(out, "nCounted", counted_);
  AppendNumber(out, "nSkipped", 0);
}

}  // namespace rockdoc::internal

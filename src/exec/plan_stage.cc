#include "exec/plan_stage.h"

#include <chrono>

namespace rockdoc::internal {

StageState PlanStage::Work(WorkingMember** out) {
  if (released_) return Fail(Status(ErrorCode::kIllegalOperation, "the database was closed"));
  ++stats_.works;
  StageState state;
  if (timed_) {
    auto start = std::chrono::steady_clock::now();
    state = DoWork(out);
    stats_.execution_nanos += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - start)
                                  .count();
  } else {
    state = DoWork(out);
  }
  switch (state) {
    case StageState::kAdvanced: ++stats_.advanced; break;
    case StageState::kNeedTime: ++stats_.need_time; break;
    case StageState::kEof: stats_.is_eof = true; break;
    case StageState::kFailure: break;
  }
  return state;
}

void PlanStage::ExplainFields(BsonBuilder* /*out*/, ExplainVerbosity /*verbosity*/) const {}

void PlanStage::Explain(BsonBuilder* out, ExplainVerbosity verbosity) const {
  out->AppendString("stage", name());
  ExplainFields(out, verbosity);
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    AppendNumber(out, "nReturned", stats_.advanced);
    AppendNumber(out, "executionTimeMillisEstimate", stats_.execution_nanos / 1000000);
    AppendNumber(out, "works", stats_.works);
    AppendNumber(out, "advanced", stats_.advanced);
    AppendNumber(out, "needTime", stats_.need_time);
    out->AppendBool("isEOF", stats_.is_eof);
  }
  if (children_.size() == 1) {
    out->OpenDocument("inputStage");
    children_[0]->Explain(out, verbosity);
    out->Close();
  } else if (children_.size() > 1) {
    out->OpenArray("inputStages");
    for (const auto& c : children_) {
      out->OpenDocument("");
      c->Explain(out, verbosity);
      out->Close();
    }
    out->Close();
  }
}

void PlanStage::EnableTiming() {
  timed_ = true;
  for (auto& c : children_) c->EnableTiming();
}

void PlanStage::ReleaseResources() {
  released_ = true;
  ReleaseOwnResources();
  for (auto& c : children_) c->ReleaseResources();
}

namespace {
void SummarizeLeaves(const PlanStage& stage, std::string* out, bool* collscan) {
  if (stage.children().empty()) {
    if (!out->empty()) out->append(", ");
    out->append(stage.SummaryPart());
    if (stage.name() == "COLLSCAN") *collscan = true;
    return;
  }
  for (const auto& c : stage.children()) SummarizeLeaves(*c, out, collscan);
}
}  // namespace

bool PlanScansCollection(const PlanStage& root) {
  if (root.children().empty()) return root.name() == "COLLSCAN";
  for (const auto& c : root.children()) {
    if (PlanScansCollection(*c)) return true;
  }
  return false;
}

std::string PlanSummary(const PlanStage& root, bool* collscan) {
  std::string out;
  *collscan = false;
  SummarizeLeaves(root, &out, collscan);
  return out;
}

int64_t TotalKeysExamined(const PlanStage& root) {
  int64_t n = root.keys_examined();
  for (const auto& c : root.children()) n += TotalKeysExamined(*c);
  return n;
}

int64_t TotalDocsExamined(const PlanStage& root) {
  int64_t n = root.docs_examined();
  for (const auto& c : root.children()) n += TotalDocsExamined(*c);
  return n;
}

}  // namespace rockdoc::internal

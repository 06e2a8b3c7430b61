// pipeline/spilled_runs.cc: the sorted runs a blocking stage spills with
// allowDiskUse (stage.h's SpilledRuns, over storage/spill.h), and a run read
// back as a source.
#include <optional>
#include <string>
#include <utility>

#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {
class SpillSource : public DocumentSource {
 public:
  explicit SpillSource(std::unique_ptr<SpillReader> run) : run_(std::move(run)) {}
  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<std::string_view> record, run_->Next());
    if (!record) return std::optional<Document>();
    // Written by this process from documents it holds: valid BSON.
    return std::optional<Document>(Document::AdoptValidated(std::string(*record)));
  }

 private:
  std::unique_ptr<SpillReader> run_;
};
}  // namespace

std::unique_ptr<DocumentSource> MakeSpillSource(std::unique_ptr<SpillReader> run) {
  return std::make_unique<SpillSource>(std::move(run));
}

Status SpilledRuns::Spill(const SpillPolicy& policy,
                          const std::function<Status(SpillWriter*)>& write) {
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillWriter> writer, policy.new_run());
  ROCKDOC_RETURN_IF_ERROR(write(writer.get()));
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillReader> reader, writer->Finish());
  runs_.push_back(std::move(reader));
  return Status::OK();
}

Status SpilledRuns::Start() {
  heads_.resize(runs_.size());
  for (size_t i = 0; i < runs_.size(); ++i) ROCKDOC_RETURN_IF_ERROR(Advance(static_cast<int>(i)));
  return Status::OK();
}

Status SpilledRuns::Advance(int run) {
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<std::string_view> record, runs_[run]->Next());
  if (!record) {
    heads_[run].reset();
    return Status::OK();
  }
  heads_[run] = Document::AdoptValidated(std::string(*record));
  return Status::OK();
}

StatusOr<int> SpilledRuns::Least(
    const std::function<StatusOr<int>(DocumentView, DocumentView)>& compare) const {
  int least = -1;
  for (size_t i = 0; i < heads_.size(); ++i) {
    if (!heads_[i]) continue;
    if (least >= 0) {
      ROCKDOC_ASSIGN_OR_RETURN(int c, compare(heads_[i]->view(), heads_[least]->view()));
      if (c >= 0) continue;
    }
    least = static_cast<int>(i);
  }
  return least;
}

}  // namespace rockdoc::internal

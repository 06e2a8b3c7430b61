#include "exec/text_stages.h"

#include "exec/index_stages.h"
#include "index/access_method.h"
#include "index/text_index.h"

namespace rockdoc::internal {

TextOrStage::TextOrStage(const ReadView& view, std::vector<std::unique_ptr<PlanStage>> scans,
                         StageFilter filter)
    : view_(view), filter_(std::move(filter)) {
  for (auto& s : scans) AddChild(std::move(s));
}

StageState TextOrStage::DoWork(WorkingMember** out) {
  if (current_ < children_.size()) {
    WorkingMember* in = nullptr;
    StageState s = child(current_)->Work(&in);
    if (s == StageState::kFailure) return Fail(child(current_)->status());
    if (s == StageState::kEof) {
      if (++current_ == children_.size()) next_ = scores_.begin();
      return StageState::kNeedTime;
    }
    if (s == StageState::kAdvanced) {
      Element score = in->doc.Get("_ftsx");
      if (!score.IsNumber()) {
        return Fail(Status(ErrorCode::kDataCorruptionDetected, "text index entry without a score"));
      }
      scores_[std::string(in->record_key)] += score.NumberAsDouble();
    }
    return StageState::kNeedTime;
  }
  if (children_.empty() && scores_.empty()) return StageState::kEof;
  if (next_ == scores_.end()) return StageState::kEof;
  const auto& [record_key, score] = *next_++;
  if (Status f = FetchDocument(view_, record_key, &value_, &member_); !f.ok()) return Fail(f);
  ++docs_examined_;
  member_.text_score = score;
  if (StageState s; FilteredOut(filter_, &member_, StageState::kNeedTime, &s)) return s;
  *out = &member_;
  return StageState::kAdvanced;
}

void TextOrStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (filter_) filter_.describe(out);
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    AppendNumber(out, "docsExamined", docs_examined_);
  }
}

TextMatchStage::TextMatchStage(std::unique_ptr<PlanStage> child,
                               std::shared_ptr<const IndexDescriptor> index, fts::TextQuery query,
                               Document index_prefix)
    : index_(std::move(index)),
      spec_(index_->access_method().TextSearch(*index_)),
      query_(std::move(query)),
      index_prefix_(std::move(index_prefix)) {
  AddChild(std::move(child));
}

StageState TextMatchStage::DoWork(WorkingMember** out) {
  WorkingMember* in = nullptr;
  StageState s = child()->Work(&in);
  if (s == StageState::kFailure) return Fail(child()->status());
  if (s != StageState::kAdvanced) return s;
  if (!spec_->Matches(query_, in->doc)) {
    ++docs_rejected_;
    return StageState::kNeedTime;
  }
  *out = in;
  return StageState::kAdvanced;
}

void TextMatchStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  out->AppendDocument("indexPrefix", index_prefix_);
  out->AppendString("indexName", index_->name());
  out->AppendDocument("parsedTextQuery", query_.ToExplain());
  out->AppendInt32("textIndexVersion", 3);
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    AppendNumber(out, "docsRejected", docs_rejected_);
  }
}

}  // namespace rockdoc::internal

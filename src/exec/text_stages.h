// exec/text_stages.h: the stages of a $text plan, as MongoDB's:
//   TEXT_OR:    works one IXSCAN per query term over the text index (each
//               entry's `_ftsx` value is the document's score for that
//               term), adds the scores per document, then fetches each
//               document once, applies the rest of the filter, and returns
//               it with its text score (WorkingMember::text_score).
//   TEXT_MATCH: keeps the documents that satisfy what the index cannot:
//               no negated term, every phrase, no negated phrase, and for a
//               case or diacritic sensitive query a term as spelt.
// Thread safety: as every stage, one thread at a time.
#ifndef ROCKDOC_EXEC_TEXT_STAGES_H_
#define ROCKDOC_EXEC_TEXT_STAGES_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/plan_stage.h"
#include "exec/scan_stages.h"
#include "index/fts.h"
#include "index/index_descriptor.h"

namespace rockdoc::internal {

class TextIndexSpec;

class TextOrStage : public PlanStage {
 public:
  // `scans`: IXSCANs with Output::kKeyDocument (their key documents hold
  // `_ftsx`); `filter`: the conjuncts other than $text.
  TextOrStage(const ReadView& view, std::vector<std::unique_ptr<PlanStage>> scans,
              StageFilter filter);
  std::string_view name() const override { return "TEXT_OR"; }
  int64_t docs_examined() const override { return docs_examined_; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  ReadView view_;
  StageFilter filter_;
  size_t current_ = 0;  // the scan being read; == children: returning
  std::map<std::string, double> scores_;  // record key -> score
  std::map<std::string, double>::const_iterator next_;
  int64_t docs_examined_ = 0;
  PinnedValue value_;
  WorkingMember member_;
};

class TextMatchStage : public PlanStage {
 public:
  TextMatchStage(std::unique_ptr<PlanStage> child, std::shared_ptr<const IndexDescriptor> index,
                 fts::TextQuery query, Document index_prefix);
  std::string_view name() const override { return "TEXT_MATCH"; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  std::shared_ptr<const IndexDescriptor> index_;
  const TextIndexSpec* spec_;
  fts::TextQuery query_;
  Document index_prefix_;
  int64_t docs_rejected_ = 0;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_TEXT_STAGES_H_

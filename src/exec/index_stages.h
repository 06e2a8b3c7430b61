// exec/index_stages.h: reading through a secondary index.
//   IXSCAN:  walks keystring byte ranges of one index (bounds), returning the
//            record key of each entry, and for covered plans the key values
//            decoded into a document (with the original types).
//   FETCH:   reads the document of each record key (at the query's snapshot)
//            and applies the filter.
//   PROJECTION_SIMPLE / _DEFAULT / _COVERED: shapes each result.
#ifndef ROCKDOC_EXEC_INDEX_STAGES_H_
#define ROCKDOC_EXEC_INDEX_STAGES_H_


#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "exec/plan_stage.h"
#include "exec/range_iterator.h"
#include "exec/scan_stages.h"
#include "index/index_descriptor.h"
#include "index/index_bounds.h"

namespace rockdoc::internal {

class IndexScanStage : public PlanStage {
 public:
  // What each entry yields.
  enum class Output {
    kRecordKey,    // the document's record key, for a FETCH above
    kKeyDocument,  // also the entry's values decoded into a document named by
                   // the index fields (covered plans); `key_filter` applies to it
    kCount,        // nothing but the entry (COUNT_SCAN: the bounds are the
                   // filter, exactly, over a non-multikey index)
  };
  IndexScanStage(const ReadView& view, uint32_t collection_id,
                 std::shared_ptr<const IndexDescriptor> index, IndexBounds bounds, bool forward,
                 Output output, StageFilter key_filter);
  std::string_view name() const override {
    return output_ == Output::kCount ? "COUNT_SCAN" : "IXSCAN";
  }
  int64_t keys_examined() const override { return keys_examined_; }
  std::string SummaryPart() const override;

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ReleaseOwnResources() override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  ReadView view_;
  uint32_t collection_id_;
  std::shared_ptr<const IndexDescriptor> index_;
  IndexBounds bounds_;
  bool forward_;
  Output output_;
  StageFilter key_filter_;
  RangeIterator walk_;  // over absolute keys (index prefix included)
  int64_t keys_examined_ = 0;
  int64_t dups_tested_ = 0;
  int64_t dups_dropped_ = 0;
  std::unordered_set<std::string> seen_;  // multikey: one result per record
  std::string record_key_;
  BsonBuilder key_builder_;  // kKeyDocument: one builder for every entry
  WorkingMember member_;
};

class FetchStage : public PlanStage {
 public:
  FetchStage(const ReadView& view, std::unique_ptr<PlanStage> child, StageFilter filter);
  std::string_view name() const override { return "FETCH"; }
  int64_t docs_examined() const override { return docs_examined_; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  ReadView view_;
  StageFilter filter_;
  int64_t docs_examined_ = 0;
  PinnedValue value_;
  std::string record_key_;
  WorkingMember member_;
};

class ProjectionStage : public PlanStage {
 public:
  using Function = std::function<StatusOr<Document>(const WorkingMember&)>;
  // `stage_name`: PROJECTION_SIMPLE, PROJECTION_DEFAULT or PROJECTION_COVERED.
  // A null `fn`: the child's documents are already the projection's output
  // (a covered plan whose key documents hold exactly the projected fields);
  // the stage passes them through and still explains the projection.
  ProjectionStage(std::unique_ptr<PlanStage> child, std::string stage_name, Document spec,
                  Function fn);
  std::string_view name() const override { return stage_name_; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  std::string stage_name_;
  Document spec_;
  Function fn_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_INDEX_STAGES_H_

// exec/index_stages.h: reading through a secondary index.
//   IXSCAN:  walks keystring byte ranges of one index (bounds), returning the
//            record key of each entry, and for covered plans the key values
//            decoded into a document (with the original types).
//   FETCH:   reads the document of each record key (at the query's snapshot)
//            and applies the filter.
//   PROJECTION_SIMPLE / _DEFAULT / _COVERED: shapes each result.
//   RETURN_KEY: each result becomes the index key it came from (returnKey).
//   SHOW_RECORD_ID: appends `$recordId` to each result (showRecordId).
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

// IXSCAN reads a unique index's points with point reads: when every field
// of the bounds is a set of points, each range holds at most one entry of an
// index that keeps one entry per value (IndexEntryFormat::kUnique: its key is
// the values alone), so a Get replaces an iterator and its seek. The answer
// is the same either way; this switch (on by default) is for tests and
// `compare_bench --ab unique_get`.
void SetUniquePointGetEnabled(bool enabled);

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
  // Point reads instead of walk_ (see SetUniquePointGetEnabled): the point
  // ranges, ascending (each one's start is its entry's key), and the next
  // one to read in the scan's direction.
  bool point_mode_ = false;
  std::vector<KeyRange> points_;
  size_t next_point_ = 0;
  int64_t point_reads_ = 0;
  PinnedValue point_value_;
  int64_t keys_examined_ = 0;
  int64_t dups_tested_ = 0;
  int64_t dups_dropped_ = 0;
  std::unordered_set<std::string> seen_;  // multikey: one result per record
  std::string record_key_;
  BsonBuilder key_builder_;  // kKeyDocument: one builder for every entry
  WorkingMember member_;
};

// What FETCH does for each record key an index scan gives: reads the
// document into `value` and points `member` (cleared first) at it and at
// `record_key`, which must outlive the member's use. DataCorruptionDetected
// when the document is missing (an index entry without its document:
// validate() reports these).
Status FetchDocument(const ReadView& view, std::string_view record_key, PinnedValue* value,
                     WorkingMember* member);

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

// A stage that reshapes each result of its one child in place: Transform
// is called on every advanced result (PROJECTION_*, RETURN_KEY,
// SHOW_RECORD_ID).
class TransformStage : public PlanStage {
 protected:
  explicit TransformStage(std::unique_ptr<PlanStage> child) { AddChild(std::move(child)); }
  virtual Status Transform(WorkingMember* m) = 0;
  StageState DoWork(WorkingMember** out) final;
};

class ProjectionStage : public TransformStage {
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
  Status Transform(WorkingMember* m) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  std::string stage_name_;
  Document spec_;
  Function fn_;
};

// RETURN_KEY (MongoDB's stage of the same name): each result becomes the
// key of the index entry that produced it ({a: 5} on {a: 1}), decoded with
// its original types; `id_order` (the plan reads the _id order, IDHACK or
// CLUSTERED_IXSCAN): {_id: <the _id>}; otherwise (a collection scan) {}.
class ReturnKeyStage : public TransformStage {
 public:
  ReturnKeyStage(std::unique_ptr<PlanStage> child, bool id_order);
  std::string_view name() const override { return "RETURN_KEY"; }

 protected:
  Status Transform(WorkingMember* m) override;

 private:
  bool id_order_;
  BsonBuilder builder_;
};

// SHOW_RECORD_ID: appends `$recordId` to each result: in a capped
// collection (`capped_order_id` non-zero) the document's insertion sequence
// number, a long (read from its capped sequence entry at the plan's view);
// elsewhere the keystring of its _id, which is its record's key in the
// clustered order, as BinData subtype 0 (FindOptions::show_record_id).
class ShowRecordIdStage : public TransformStage {
 public:
  ShowRecordIdStage(const ReadView& view, std::unique_ptr<PlanStage> child,
                    uint32_t capped_order_id);
  std::string_view name() const override { return "SHOW_RECORD_ID"; }

 protected:
  Status Transform(WorkingMember* m) override;

 private:
  ReadView view_;
  uint32_t capped_order_id_;
  PinnedValue seq_;
  BsonBuilder builder_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_INDEX_STAGES_H_

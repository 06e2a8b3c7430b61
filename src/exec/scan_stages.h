// exec/scan_stages.h: the leaves that read documents from storage.
//   COLLSCAN: every document of a collection in _id order (or reverse),
//             optionally filtered; a capped collection's in insertion order
//             (its natural order, as MongoDB's), through its order entries.
//   IDHACK:   the one document whose _id equals a value (a point read).
#ifndef ROCKDOC_EXEC_SCAN_STAGES_H_
#define ROCKDOC_EXEC_SCAN_STAGES_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/plan_stage.h"
#include "exec/range_iterator.h"
#include "index/index_bounds.h"

namespace rockdoc::internal {

// A document predicate evaluated inside a scan (MongoDB's COLLSCAN and FETCH
// apply their filters themselves). `describe` renders it for explain.
struct StageFilter {
  std::function<bool(DocumentView, WorkingMember*)> matches;
  std::function<void(BsonBuilder*)> describe;  // appends "filter": {...}
  explicit operator bool() const { return static_cast<bool>(matches); }
};

class CollectionScanStage : public PlanStage {
 public:
  // `capped_order_id` (non-zero): the collection is capped, and the scan
  // walks its order entries (storage/format.h) and reads each document.
  // `resume_after_seq` (capped, forward; a tailable cursor's next scan):
  // the scan starts after that entry, which must still be there, else it
  // fails with CappedPositionLost (136), as MongoDB's.
  CollectionScanStage(const ReadView& view, uint32_t collection_id, bool forward,
                      StageFilter filter, uint32_t capped_order_id = 0,
                      uint64_t resume_after_seq = 0);
  std::string_view name() const override { return "COLLSCAN"; }
  int64_t docs_examined() const override { return docs_examined_; }
  // Capped: the sequence number of the last order entry examined (matching
  // the filter or not), else the scan's `resume_after_seq`.
  uint64_t last_seq() const { return last_seq_; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ReleaseOwnResources() override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  ReadView view_;
  std::string lower_, upper_;
  bool forward_;
  StageFilter filter_;
  std::unique_ptr<KvIterator> it_;
  bool started_ = false;
  int64_t docs_examined_ = 0;
  WorkingMember member_;
  // Capped: the document read through the current order entry.
  bool capped_ = false;
  uint64_t last_seq_ = 0;
  std::string record_key_;
  PinnedValue document_;
};

class IdHackStage : public PlanStage {
 public:
  // `record_key` is the full RocksDB key (collection prefix + keystring).
  IdHackStage(const ReadView& view, std::string record_key, StageFilter filter);
  std::string_view name() const override { return "IDHACK"; }
  int64_t keys_examined() const override { return keys_examined_; }
  int64_t docs_examined() const override { return docs_examined_; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  ReadView view_;
  std::string key_;
  StageFilter filter_;
  bool done_ = false;
  int64_t keys_examined_ = 0;
  int64_t docs_examined_ = 0;
  PinnedValue value_;
  WorkingMember member_;
};

}  // namespace rockdoc::internal


namespace rockdoc::internal {

// EOF: the plan of a query over a collection that does not exist.
class EofStage : public PlanStage {
 public:
  std::string_view name() const override { return "EOF"; }

 protected:
  StageState DoWork(WorkingMember**) override { return StageState::kEof; }
};

}  // namespace rockdoc::internal


namespace rockdoc::internal {

// CLUSTERED_IXSCAN: the documents whose _id lies in bounds, read straight
// from the clustered records (the _id order is the _id_ index): a range or
// a set of points ($in) of _id values without a separate index.
//
// When every interval is a point ({_id: v}, {_id: {$in: [...]}}), each
// range holds at most one record, whose key is known exactly (keystring is
// prefix-free), so the stage reads the points in key order with batched
// MultiGets instead of a Seek (and a Next) per point: a point read uses the
// bloom filters and skips the merging iterator. Explain's "seeks" then
// counts the points looked up.
class ClusteredScanStage : public PlanStage {
 public:
  ClusteredScanStage(const ReadView& view, uint32_t collection_id, IndexBounds bounds,
                     bool forward, StageFilter filter);
  std::string_view name() const override { return "CLUSTERED_IXSCAN"; }
  int64_t keys_examined() const override { return keys_examined_; }
  int64_t docs_examined() const override { return docs_examined_; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ReleaseOwnResources() override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  ReadView view_;
  IndexBounds bounds_;
  bool forward_;
  StageFilter filter_;
  RangeIterator walk_;
  int64_t keys_examined_ = 0;
  int64_t docs_examined_ = 0;
  WorkingMember member_;

  // Point mode (see above): the next batch of point reads, in scan order.
  StageState DoPointWork(WorkingMember** out);
  bool points_ = false;
  size_t batch_limit_ = 0;                    // grows from small to large
  std::vector<size_t> batch_ranges_;          // indexes into walk_.ranges()
  std::vector<std::string_view> batch_keys_;
  std::vector<PinnedValue> batch_values_;
  std::vector<bool> batch_found_;
  size_t batch_next_ = 0;                     // next result of the batch to hand out
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_SCAN_STAGES_H_

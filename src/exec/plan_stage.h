// exec/plan_stage.h: the execution engine's building block.
//
// A query runs as a tree of stages (COLLSCAN, IXSCAN, FETCH, SORT, ...), as
// in MongoDB. Each call to Work() does a bounded amount of work and says
// whether it produced a result (kAdvanced), needs more calls (kNeedTime),
// is done (kEof) or failed (kFailure, see status()). Bounded steps let the
// planner race candidate plans a few works at a time, and let every stage
// report MongoDB's per-stage explain figures.
//
// A result is a WorkingMember: a document (a view into storage, valid until
// the producing stage's next Work()), and/or the index key it came from.
//
// Thread safety: a stage tree is used by one thread at a time.
#ifndef ROCKDOC_EXEC_PLAN_STAGE_H_
#define ROCKDOC_EXEC_PLAN_STAGE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bson/append_number.h"
#include "query/match_expression.h"
#include "rockdoc/document.h"
#include "rockdoc/options.h"
#include "rockdoc/status.h"
#include "storage/kv.h"

namespace rockdoc::internal {

class IndexDescriptor;

// Where a plan reads from: one snapshot for the whole query, or a
// multi-document transaction (its snapshot and its own writes).
// storage/kv.h's ReadView.

struct WorkingMember {
  // The RocksDB key of the document, when known (record key).
  std::string_view record_key;
  // The document, when fetched or produced.
  bool has_doc = false;
  DocumentView doc;
  // Storage for a document a stage made (a projection, a copy that must
  // outlive an iterator step).
  Document owned;
  // The index entry (key without its prefix, and type bits) for plans that
  // read an index, and that index: covered plans build results from it, and
  // returnKey's RETURN_KEY stage (FETCH and SORT pass it on).
  std::string_view index_key;
  std::string_view index_type_bits;
  const IndexDescriptor* index = nullptr;
  // Array position matched by the filter (for the positional projection).
  std::optional<size_t> matched_array_index;
  // The document's text score ({$meta: "textScore"}), set by TEXT_OR.
  std::optional<double> text_score;

  void SetOwned(Document d) {
    owned = std::move(d);
    doc = owned.view();
    has_doc = true;
  }
  void Clear() {
    record_key = {};
    has_doc = false;
    index_key = {};
    index_type_bits = {};
    index = nullptr;
    matched_array_index.reset();
    text_score.reset();
  }
};

enum class StageState { kAdvanced, kNeedTime, kEof, kFailure };

// MongoDB's common per-stage figures.
struct StageStats {
  int64_t works = 0;
  int64_t advanced = 0;
  int64_t need_time = 0;
  bool is_eof = false;
  int64_t execution_nanos = 0;
};

class PlanStage {
 public:
  virtual ~PlanStage() = default;

  // One bounded step. On kAdvanced, *out is the result (owned by the stage,
  // valid until its next Work()).
  StageState Work(WorkingMember** out);

  // kFailure's reason.
  const Status& status() const { return status_; }
  // "COLLSCAN", "IXSCAN", ...
  virtual std::string_view name() const = 0;

  // Appends this stage as explain shows it: {stage: NAME, ...fields,
  // [execution figures], inputStage(s): ...}.
  void Explain(BsonBuilder* out, ExplainVerbosity verbosity) const;

  const StageStats& stats() const { return stats_; }
  const std::vector<std::unique_ptr<PlanStage>>& children() const { return children_; }

  // Keys and documents examined by this stage alone (IXSCAN / FETCH,
  // COLLSCAN). Summed over the tree for executionStats.
  virtual int64_t keys_examined() const { return 0; }
  virtual int64_t docs_examined() const { return 0; }

  // Drops RocksDB iterators and pinned data in this tree (the engine is
  // closing). Later Work() fails with IllegalOperation.
  void ReleaseResources();

  // This stage in a plan summary (MongoDB's planSummary): its name, and an
  // index scan's key pattern ("IXSCAN { a: 1 }").
  virtual std::string SummaryPart() const { return std::string(name()); }

  // Measures time per stage (executionTimeMillisEstimate) in this tree.
  // Off by default: reading the clock twice per work is a tenth of a fast
  // scan's cost, so only explain turns it on.
  void EnableTiming();

 protected:
  virtual StageState DoWork(WorkingMember** out) = 0;
  // This stage's own part of ReleaseResources (its iterators); children are
  // released by the caller.
  virtual void ReleaseOwnResources() {}
  // Stage-specific explain fields (filter, indexName, bounds...).
  virtual void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const;
  StageState Fail(Status s) {
    status_ = std::move(s);
    return StageState::kFailure;
  }
  // Runs the stage's filter on the member: false when it passes; true with
  // *state set when it does not (`otherwise`) or could not decide ($expr's
  // evaluation error fails the stage, whatever the filter answered).
  template <typename Filter>
  bool FilteredOut(const Filter& filter, WorkingMember* member, StageState otherwise,
                   StageState* state) {
    if (!filter) return false;
    const bool passes = filter.matches(member->doc, member);
    if (MatchErrorPending()) {
      *state = Fail(TakeMatchError());
      return true;
    }
    if (!passes) *state = otherwise;
    return !passes;
  }
  // Works a child, passing failure up.
  void AddChild(std::unique_ptr<PlanStage> child) { children_.push_back(std::move(child)); }
  PlanStage* child(size_t i = 0) const { return children_[i].get(); }

  Status status_;
  StageStats stats_;
  std::vector<std::unique_ptr<PlanStage>> children_;
  bool timed_ = false;
  bool released_ = false;
};

// MongoDB's planSummary of a tree: its leaves, comma separated
// ("IXSCAN { a: 1 }", "COLLSCAN", "IXSCAN { a: 1 }, IXSCAN { b: 1 }" for an
// OR). `collscan`: set when a leaf scans the collection.
std::string PlanSummary(const PlanStage& root, bool* collscan);
// Whether a leaf of the tree scans the collection (no text built).
bool PlanScansCollection(const PlanStage& root);

// Sums keys/documents examined over a tree.
int64_t TotalKeysExamined(const PlanStage& root);
int64_t TotalDocsExamined(const PlanStage& root);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_PLAN_STAGE_H_

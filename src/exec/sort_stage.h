// exec/sort_stage.h: SORT, the blocking sort, with a top-k heap when a limit
// is known (sorting a large collection for its first 10 keeps 10 documents)
// and MongoDB's memory bound (QueryExceededMemoryLimitNoDiskUseAllowed).
//
// Sort keys are keystrings (keystring/keystring.h) built by the planner's
// key function, so comparing two keys is one memcmp.
#ifndef ROCKDOC_EXEC_SORT_STAGE_H_
#define ROCKDOC_EXEC_SORT_STAGE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/plan_stage.h"

namespace rockdoc::internal {

class SortStage : public PlanStage {
 public:
  // Appends the sort key of a result (its document, and its text score) to
  // *key.
  using KeyFunction = std::function<Status(const WorkingMember& m, std::string* key)>;

  // `limit` 0 = unbounded; else only the first `limit` results are kept.
  SortStage(std::unique_ptr<PlanStage> child, Document pattern, KeyFunction key_fn, int64_t limit,
            int64_t max_memory_bytes);
  std::string_view name() const override { return "SORT"; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  struct Item {
    std::string key;
    uint64_t seq;  // input order: ties keep it
    std::string record_key;
    std::string doc;
    // The index entry the input came from, if any (WorkingMember).
    std::string index_key;
    std::string index_type_bits;
    const IndexDescriptor* index = nullptr;
    std::optional<double> text_score;
  };
  static bool Less(const Item& a, const Item& b) {
    int c = a.key.compare(b.key);
    return c != 0 ? c < 0 : a.seq < b.seq;
  }
  Status Add(const WorkingMember& m);
  static void SetEntry(const WorkingMember& m, Item* item);

  Document pattern_;
  KeyFunction key_fn_;
  int64_t limit_;
  int64_t max_memory_;
  std::vector<Item> items_;  // a max-heap while a limit is set, else a plain list
  bool sorted_ = false;
  size_t next_ = 0;
  uint64_t seq_ = 0;
  int64_t memory_ = 0;
  int64_t peak_memory_ = 0;
  int64_t total_input_ = 0;
  WorkingMember member_;
  std::string scratch_key_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_SORT_STAGE_H_

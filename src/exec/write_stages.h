// exec/write_stages.h: the stages at the top of a write's or a count's plan,
// as MongoDB's UpdateStage, DeleteStage and CountStage.
//   UPDATE / DELETE: take the record keys their child plan produces, then
//       lock, re-read, re-match and change each document through the
//       store's write loop (store/write_batcher.h). Explain runs them dry:
//       every target is read and matched, nothing written, and the figures
//       say what would have been (nWouldModify, nWouldDelete).
//   COUNT: counts what its child produces, without handing any of it out.
//
// Thread safety: a stage tree is used by one thread at a time.
#ifndef ROCKDOC_EXEC_WRITE_STAGES_H_
#define ROCKDOC_EXEC_WRITE_STAGES_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/plan_stage.h"
#include "store/write_batcher.h"

namespace rockdoc::internal {

class WriteStage : public PlanStage {
 public:
  enum class Kind { kUpdate, kDelete };
  // `view` is what the child reads (a dry run reads the targets there too);
  // `outer` the multi-document transaction to write in, or null.
  WriteStage(Kind kind, std::unique_ptr<PlanStage> child, const Engine& engine,
             const CollectionMeta& meta, const Deadline& deadline, const ReadView& view,
             TargetWriter write, bool dry_run, KvTransaction* outer);
  std::string_view name() const override { return kind_ == Kind::kUpdate ? "UPDATE" : "DELETE"; }
  const WriteCounts& counts() const { return counts_; }
  // An upsert's insert, when the plan matched nothing (nWouldUpsert).
  void CountUpsert() { ++upserts_; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  StageState DryStep();

  const Kind kind_;
  ReadView view_;
  TargetWriter write_;
  const bool dry_run_;
  TargetWriteLoop loop_;
  std::vector<WriteTarget> targets_;
  bool collecting_ = true;
  int64_t targets_found_ = 0;
  size_t dry_next_ = 0;
  PinnedValue value_;
  WriteCounts counts_;
  int64_t upserts_ = 0;
};

class CountStage : public PlanStage {
 public:
  explicit CountStage(std::unique_ptr<PlanStage> child);
  std::string_view name() const override { return "COUNT"; }
  int64_t counted() const { return counted_; }

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  int64_t counted_ = 0;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_WRITE_STAGES_H_

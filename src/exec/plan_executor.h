// exec/plan_executor.h: runs a stage tree to completion or step by step, over
// one RocksDB snapshot, and is the implementation behind a public Cursor.
//
// Thread safety: one thread at a time per executor.
#ifndef ROCKDOC_EXEC_PLAN_EXECUTOR_H_
#define ROCKDOC_EXEC_PLAN_EXECUTOR_H_

#include <functional>
#include <memory>

#include "common/deadline.h"
#include "exec/plan_stage.h"
#include "storage/engine.h"

namespace rockdoc::internal {

struct CappedState;

// What a public Cursor delegates to.
class CursorImpl {
 public:
  virtual ~CursorImpl() = default;
  virtual bool Next() = 0;
  virtual DocumentView document() const = 0;
  virtual Status status() const = 0;
  // What the cursor's plan examined so far (index keys, documents): the
  // figures a $lookup's explain sums over its finds.
  struct Examined {
    int64_t keys = 0;
    int64_t docs = 0;
  };
  virtual Examined examined() const { return {}; }
  // A tailable cursor (FindOptions::tailable): the capped collection's
  // state, which an awaitData getMore waits on, and the count of its writes
  // (CappedState::writes) taken before the cursor's last scan began: when it
  // has changed, Next() may find more. Null and 0 for other cursors.
  virtual std::shared_ptr<CappedState> tailed() const { return nullptr; }
  virtual uint64_t writes_seen() const { return 0; }
};

// A snapshot of the engine and the view of it that plans read.
class SnapshotHolder : public KvSnapshot {
 public:
  using KvSnapshot::KvSnapshot;
  ReadView context() const { return ReadView(engine(), this); }
};

class PlanExecutor;

// Something that tracks executors (a session whose transaction they read
// through): told when one goes away.
class ExecutorRegistry {
 public:
  virtual ~ExecutorRegistry() = default;
  virtual void RemoveExecutor(PlanExecutor* exec) = 0;
};

class PlanExecutor : public CursorImpl, public EngineResource {
 public:
  // Takes the tree and the snapshot it reads (null when the tree reads
  // through a transaction, whose owner invalidates this executor when the
  // transaction ends). `engine` stays alive (and open, or this executor is
  // told) while the executor lives.
  PlanExecutor(std::shared_ptr<const Engine> engine, std::unique_ptr<SnapshotHolder> snapshot,
               std::unique_ptr<PlanStage> root);
  ~PlanExecutor() override;

  bool Next() override;
  // Runs the plan to the end and returns how many results it produced
  // (countDocuments): one engine use for the whole run, not one per result.
  StatusOr<int64_t> CountRemaining();
  DocumentView document() const override { return current_ ? current_->doc : DocumentView(); }
  Status status() const override { return status_; }
  // maxTimeMS: the run may spend `max_time_ms` (0 = no limit) of processing
  // time, `used_nanos` of which went already (planning). Only time inside
  // Next() / CountRemaining() counts, as MongoDB counts a cursor's
  // processing time and not its idle time; past the limit the run stops
  // with MaxTimeMSExpired.
  void SetTimeLimit(int64_t max_time_ms, int64_t used_nanos);

  // The current result's WorkingMember (for callers that need the record key).
  const WorkingMember* current() const { return current_; }

  PlanStage* root() const { return root_.get(); }
  Examined examined() const override;
  int64_t n_returned() const { return n_returned_; }

  void ReleaseEngineResources() override;
  // Drops the tree's iterators and ends the run with `why` (the engine is
  // closing, or the transaction the tree reads through ended). The caller
  // makes sure no Next() runs meanwhile.
  void Invalidate(const Status& why);

  // Keeps `owner` (what the stage tree points into: the parsed query) alive
  // as long as the tree.
  void KeepAlive(std::shared_ptr<const void> owner) { owner_ = std::move(owner); }
  // Calls `fn` once, when the executor goes away, with its processing time
  // (`used_nanos`, planning, plus the time inside Next() and
  // CountRemaining()): the query statistics' and profiler's record of the
  // run. The tree is still there for `fn` to read its figures.
  using DoneFn = std::function<void(const PlanExecutor& exec, int64_t work_nanos)>;
  void OnDone(DoneFn fn, int64_t used_nanos) {
    done_fn_ = std::move(fn);
    work_nanos_ = used_nanos;
  }

  // Tells `registry` when this executor is destroyed (it keeps it alive).
  void SetRegistry(std::shared_ptr<ExecutorRegistry> registry) { registry_ = std::move(registry); }

 private:
  // Works the plan to its next result, under the caller's engine use.
  bool WorkToNext();
  // Starts / ends the timing of one Next() or CountRemaining() call.
  void StartTimedCall();
  void EndTimedCall();
  // Ends the run, keeping the first error; returns false.
  bool Stop(const Status& why);

  std::shared_ptr<const void> owner_;  // declared first: destroyed after the tree
  std::shared_ptr<ExecutorRegistry> registry_;
  std::shared_ptr<const Engine> engine_;
  std::unique_ptr<SnapshotHolder> snapshot_;
  std::unique_ptr<PlanStage> root_;
  WorkingMember* current_ = nullptr;
  Status status_;
  bool done_ = false;
  int64_t n_returned_ = 0;
  // maxTimeMS: processing time left (0 = no limit), the deadline of the
  // current call, when it started, and works since the last clock check.
  int64_t budget_nanos_ = 0;
  Deadline deadline_;
  int64_t call_start_nanos_ = 0;
  uint32_t works_ = 0;
  DoneFn done_fn_;
  int64_t work_nanos_ = 0;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_PLAN_EXECUTOR_H_

#include "exec/plan_executor.h"

#include <algorithm>

namespace rockdoc::internal {

PlanExecutor::PlanExecutor(std::shared_ptr<const Engine> engine,
                           std::unique_ptr<SnapshotHolder> snapshot,
                           std::unique_ptr<PlanStage> root)
    : engine_(std::move(engine)), snapshot_(std::move(snapshot)), root_(std::move(root)) {
  engine_->Register(this);
}

CursorImpl::Examined PlanExecutor::examined() const {
  if (root_ == nullptr) return {};
  return {TotalKeysExamined(*root_), TotalDocsExamined(*root_)};
}

PlanExecutor::~PlanExecutor() {
  if (done_fn_) done_fn_(*this, work_nanos_);
  // Hold off Close() while the iterators go, then drop them in order.
  if (registry_) registry_->RemoveExecutor(this);
  auto use = engine_->Enter();
  engine_->Unregister(this);
  if (use.status().ok()) {
    root_.reset();
    snapshot_.reset();
  }
}

void PlanExecutor::ReleaseEngineResources() {
  // Called by Engine::Close with its lock held: no Next() is running.
  Invalidate(Status(ErrorCode::kIllegalOperation, "the database was closed under this cursor"));
}

void PlanExecutor::Invalidate(const Status& why) {
  if (root_) root_->ReleaseResources();
  if (snapshot_) snapshot_->Release();
  if (status_.ok()) status_ = why;
  current_ = nullptr;
  done_ = true;
}

void PlanExecutor::SetTimeLimit(int64_t max_time_ms, int64_t used_nanos) {
  if (max_time_ms <= 0) return;
  // At least 1 ns left, so that "no limit" (0) is never reached by spending.
  budget_nanos_ = std::max<int64_t>(1, max_time_ms * 1000000 - used_nanos);
  if (used_nanos >= max_time_ms * 1000000) Stop(MaxTimeExpiredError());
}

void PlanExecutor::StartTimedCall() {
  if (budget_nanos_ == 0 && !done_fn_) return;
  call_start_nanos_ = MonotonicNanos();
  if (budget_nanos_ != 0) deadline_ = Deadline::At(call_start_nanos_ + budget_nanos_);
}

void PlanExecutor::EndTimedCall() {
  if (budget_nanos_ == 0 && !done_fn_) return;
  const int64_t spent = MonotonicNanos() - call_start_nanos_;
  work_nanos_ += spent;
  if (budget_nanos_ != 0) budget_nanos_ = std::max<int64_t>(1, budget_nanos_ - spent);
}

bool PlanExecutor::Next() {
  current_ = nullptr;
  if (done_) return false;
  auto use = engine_->Enter();
  if (!use.status().ok()) return Stop(use.status());
  StartTimedCall();
  bool advanced = WorkToNext();
  EndTimedCall();
  return advanced;
}

StatusOr<int64_t> PlanExecutor::CountRemaining() {
  current_ = nullptr;
  int64_t n = 0;
  if (!done_) {
    auto use = engine_->Enter();
    if (use.status().ok()) {
      StartTimedCall();
      while (WorkToNext()) ++n;
      EndTimedCall();
      current_ = nullptr;  // counted, never read
    } else {
      Stop(use.status());
    }
  }
  ROCKDOC_RETURN_IF_ERROR(status_);
  return n;
}

bool PlanExecutor::WorkToNext() {
  while (true) {
    // maxTimeMS and killOp: the clock and the interrupt flag are read
    // every kCheckInterval works.
    if (deadline_.checked() && ++works_ % DeadlineChecker::kCheckInterval == 0) {
      Status expired = deadline_.Check();
      if (!expired.ok()) return Stop(expired);
    }
    WorkingMember* out = nullptr;
    StageState state;
    {
      // Work inside one step (a regex match) checks the deadline too.
      DeadlineScope scope(&deadline_);
      state = root_->Work(&out);
    }
    if (state == StageState::kAdvanced) {
      current_ = out;
      ++n_returned_;
      return true;
    }
    if (state == StageState::kNeedTime) continue;
    return Stop(state == StageState::kFailure ? root_->status() : Status::OK());
  }
}

bool PlanExecutor::Stop(const Status& why) {
  if (status_.ok()) status_ = why;
  done_ = true;
  return false;
}

}  // namespace rockdoc::internal

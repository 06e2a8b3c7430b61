#include "exec/sort_stage.h"

#include <algorithm>

namespace rockdoc::internal {

namespace {
int64_t ItemBytes(size_t key, size_t record, size_t doc) {
  return static_cast<int64_t>(key + record + doc + 64);
}
}  // namespace

SortStage::SortStage(std::unique_ptr<PlanStage> child, Document pattern, KeyFunction key_fn,
                     int64_t limit, int64_t max_memory_bytes)
    : pattern_(std::move(pattern)),
      key_fn_(std::move(key_fn)),
      limit_(limit),
      max_memory_(max_memory_bytes) {
  AddChild(std::move(child));
}

// Keeps the index entry `m` came from (returnKey reads it after the sort).
void SortStage::SetEntry(const WorkingMember& m, Item* item) {
  item->index_key.assign(m.index_key);
  item->index_type_bits.assign(m.index_type_bits);
  item->index = m.index;
  item->text_score = m.text_score;
}

Status SortStage::Add(const WorkingMember& m) {
  ++total_input_;
  scratch_key_.clear();
  ROCKDOC_RETURN_IF_ERROR(key_fn_(m, &scratch_key_));
  auto cmp = [](const Item& a, const Item& b) { return Less(a, b); };
  if (limit_ > 0 && static_cast<int64_t>(items_.size()) >= limit_) {
    // Top-k: the heap's front is the largest kept; a new item enters only
    // when it sorts before it (ties: the earlier input wins).
    const Item& top = items_.front();
    int c = scratch_key_.compare(top.key);
    if (c >= 0) return Status::OK();
    std::pop_heap(items_.begin(), items_.end(), cmp);
    Item& slot = items_.back();
    memory_ -= ItemBytes(slot.key.size(), slot.record_key.size() + slot.index_key.size(),
                         slot.doc.size());
    slot.key = scratch_key_;
    slot.seq = seq_++;
    slot.record_key.assign(m.record_key);
    slot.doc.assign(m.doc.bytes());
    SetEntry(m, &slot);
    memory_ += ItemBytes(slot.key.size(), slot.record_key.size() + slot.index_key.size(),
                         slot.doc.size());
    std::push_heap(items_.begin(), items_.end(), cmp);
  } else {
    items_.push_back(Item{scratch_key_, seq_++, std::string(m.record_key),
                          std::string(m.doc.bytes()), std::string(m.index_key),
                          std::string(m.index_type_bits), m.index, m.text_score});
    memory_ += ItemBytes(scratch_key_.size(), m.record_key.size() + m.index_key.size(),
                         m.doc.size());
    if (limit_ > 0) std::push_heap(items_.begin(), items_.end(), cmp);
  }
  peak_memory_ = std::max(peak_memory_, memory_);
  if (memory_ > max_memory_) {
    return Status(ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed,
                  "Sort exceeded memory limit of " + std::to_string(max_memory_) +
                      " bytes, but did not opt in to external sorting.");
  }
  return Status::OK();
}

StageState SortStage::DoWork(WorkingMember** out) {
  if (!sorted_) {
    WorkingMember* in = nullptr;
    StageState s = child()->Work(&in);
    if (s == StageState::kFailure) return Fail(child()->status());
    if (s == StageState::kAdvanced) {
      if (!in->has_doc) return Fail(InternalError("SORT input without a document"));
      Status st = Add(*in);
      if (!st.ok()) return Fail(st);
      return StageState::kNeedTime;
    }
    if (s == StageState::kNeedTime) return s;
    std::sort(items_.begin(), items_.end(), [](const Item& a, const Item& b) { return Less(a, b); });
    sorted_ = true;
    return StageState::kNeedTime;
  }
  if (next_ >= items_.size()) return StageState::kEof;
  Item& item = items_[next_++];
  member_.Clear();
  member_.record_key = item.record_key;
  member_.index_key = item.index_key;
  member_.index_type_bits = item.index_type_bits;
  member_.index = item.index;
  member_.text_score = item.text_score;
  member_.doc = DocumentView(reinterpret_cast<const uint8_t*>(item.doc.data()));
  member_.has_doc = true;
  *out = &member_;
  return StageState::kAdvanced;
}

void SortStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  out->AppendDocument("sortPattern", pattern_);
  AppendNumber(out, "memLimit", max_memory_);
  if (limit_ > 0) AppendNumber(out, "limitAmount", limit_);
  out->AppendString("type", "simple");
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    AppendNumber(out, "totalDataSizeSorted", peak_memory_);
    out->AppendBool("usedDisk", false);
    AppendNumber(out, "spills", 0);
  }
}

}  // namespace rockdoc::internal

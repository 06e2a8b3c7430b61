#include "exec/scan_stages.h"

#include "storage/engine.h"
#include "storage/format.h"

namespace rockdoc::internal {

namespace {
DocumentView ViewOf(std::string_view s) {
  return DocumentView(reinterpret_cast<const uint8_t*>(s.data()));
}
}  // namespace

CollectionScanStage::CollectionScanStage(const ReadView& view, uint32_t collection_id,
                                         bool forward, StageFilter filter,
                                         uint32_t capped_order_id, uint64_t resume_after_seq)
    : view_(view),
      lower_(capped_order_id ? CappedOrderKey(capped_order_id, resume_after_seq)
                             : PrefixKey(collection_id)),
      upper_(capped_order_id ? CappedOrderEnd(capped_order_id) : PrefixKey(collection_id + 1)),
      forward_(forward),
      filter_(std::move(filter)),
      capped_(capped_order_id != 0),
      last_seq_(resume_after_seq) {}

void CollectionScanStage::ReleaseOwnResources() {
  it_.reset();
  document_.Reset();
}

StageState CollectionScanStage::DoWork(WorkingMember** out) {
  if (!started_) {
    it_ = view_.NewIterator(lower_, upper_, /*sequential=*/true);
    if (forward_) {
      it_->SeekToFirst();
    } else {
      it_->SeekToLast();
    }
    started_ = true;
    if (capped_ && last_seq_ != 0) {
      // Resuming: the first entry must be the one last examined.
      uint64_t seq = 0;
      int64_t size = 0;
      std::string_view record_key;
      if (!it_->Valid() ||
          !ParseCappedOrderEntry(it_->key(), it_->value(), &seq, &size, &record_key).ok() ||
          seq != last_seq_) {
        Status s = it_->status();
        if (!s.ok()) return Fail(s.WithContext("collection scan"));
        return Fail(Status(ErrorCode::kCappedPositionLost,
                           "CollectionScan died due to position in capped collection being "
                           "deleted. Last seen record id: RecordId(" +
                               std::to_string(last_seq_) + ")"));
      }
      it_->Next();
    }
  } else if (it_->Valid()) {
    if (forward_) {
      it_->Next();
    } else {
      it_->Prev();
    }
  }
  if (!it_->Valid()) {
    Status s = it_->status();
    if (!s.ok()) return Fail(s.WithContext("collection scan"));
    return StageState::kEof;
  }
  member_.Clear();
  if (capped_) {
    uint64_t seq = 0;
    int64_t size = 0;
    std::string_view record_key;
    Status s = ParseCappedOrderEntry(it_->key(), it_->value(), &seq, &size, &record_key);
    if (!s.ok()) return Fail(s);
    last_seq_ = seq;
    record_key_ = std::string(record_key);
    bool found = false;
    s = view_.GetRecord(record_key_, &document_, &found);
    if (!s.ok()) return Fail(s.WithContext("collection scan"));
    if (!found) return StageState::kNeedTime;  // deleted after the view's snapshot began
    member_.record_key = record_key_;
    member_.doc = ViewOf(document_.view());
  } else {
    member_.record_key = it_->key();
    member_.doc = ViewOf(it_->value());
  }
  ++docs_examined_;
  member_.has_doc = true;
  if (StageState s; FilteredOut(filter_, &member_, StageState::kNeedTime, &s)) return s;
  *out = &member_;
  return StageState::kAdvanced;
}

void CollectionScanStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (filter_) filter_.describe(out);
  out->AppendString("direction", forward_ ? "forward" : "backward");
  if (verbosity != ExplainVerbosity::kQueryPlanner) AppendNumber(out, "docsExamined", docs_examined_);
}

IdHackStage::IdHackStage(const ReadView& view, std::string record_key, StageFilter filter)
    : view_(view), key_(std::move(record_key)), filter_(std::move(filter)) {}

StageState IdHackStage::DoWork(WorkingMember** out) {
  if (done_) return StageState::kEof;
  done_ = true;
  ++keys_examined_;
  bool found = false;
  Status s = view_.GetRecord(key_, &value_, &found);
  if (!s.ok()) return Fail(s.WithContext("_id lookup"));
  if (!found) return StageState::kEof;
  ++docs_examined_;
  member_.Clear();
  member_.record_key = key_;
  member_.doc = ViewOf(value_.view());
  member_.has_doc = true;
  if (StageState s; FilteredOut(filter_, &member_, StageState::kEof, &s)) return s;
  *out = &member_;
  return StageState::kAdvanced;
}

void IdHackStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (filter_) filter_.describe(out);
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    AppendNumber(out, "keysExamined", keys_examined_);
    AppendNumber(out, "docsExamined", docs_examined_);
  }
}

}  // namespace rockdoc::internal

#include <algorithm>

#include "keystring/keystring.h"

namespace rockdoc::internal {

namespace {
std::vector<KeyRange> AbsoluteRanges(const IndexBounds& bounds, const std::string& prefix,
                                     const std::string& prefix_end) {
  std::vector<KeyRange> out;
  for (KeyRange& r : BoundsToKeyRanges(bounds, 0)) {
    out.push_back(KeyRange{prefix + r.start, r.end.empty() ? prefix_end : prefix + r.end});
  }
  return out;
}
}  // namespace

ClusteredScanStage::ClusteredScanStage(const ReadView& view, uint32_t collection_id,
                                       IndexBounds bounds, bool forward, StageFilter filter)
    : view_(view),
      bounds_(std::move(bounds)),
      forward_(forward),
      filter_(std::move(filter)),
      walk_(PrefixKey(collection_id), PrefixKey(collection_id + 1),
            AbsoluteRanges(bounds_, PrefixKey(collection_id), PrefixKey(collection_id + 1)),
            forward) {
  // Point intervals give ranges [k, successor(k)), each holding only the
  // record whose key is exactly k (keystring is prefix-free).
  const size_t prefix_size = 4;
  points_ = bounds_.fields.size() == 1 && bounds_.fields[0].AllPoints() && !walk_.ranges().empty();
  for (const KeyRange& r : walk_.ranges()) {
    if (!points_) break;
    points_ = r.start.size() > prefix_size && r.end == keystring::PrefixSuccessor(r.start);
  }
}

void ClusteredScanStage::ReleaseOwnResources() {
  walk_.Release();
  batch_values_.clear();  // they may pin blocks of the cache
}

StageState ClusteredScanStage::DoPointWork(WorkingMember** out) {
  constexpr size_t kFirstBatch = 16, kMaxBatch = 128;
  if (batch_next_ >= batch_ranges_.size()) {
    size_t remaining = walk_.remaining_ranges();
    if (remaining == 0) return StageState::kEof;
    batch_limit_ = batch_limit_ == 0 ? kFirstBatch : std::min(kMaxBatch, batch_limit_ * 2);
    size_t n = std::min(remaining, batch_limit_);
    batch_ranges_.clear();
    batch_keys_.clear();
    for (size_t i = 0, r = 0; i < n && walk_.TakeRange(&r); ++i) {
      batch_ranges_.push_back(r);
      batch_keys_.emplace_back(walk_.ranges()[r].start);
    }
    // MultiGet wants its keys sorted; a backward scan collected them in
    // descending order, so look them up reversed and hand them out as listed.
    if (!forward_) std::reverse(batch_keys_.begin(), batch_keys_.end());
    Status read = view_.MultiGetRecords(batch_keys_, &batch_values_, &batch_found_);
    if (!read.ok()) return Fail(read.WithContext("clustered scan"));
    if (!forward_) {
      std::reverse(batch_keys_.begin(), batch_keys_.end());
      std::reverse(batch_values_.begin(), batch_values_.begin() + n);
      std::reverse(batch_found_.begin(), batch_found_.end());
    }
    walk_.CountSeeks(static_cast<int64_t>(n));
    batch_next_ = 0;
  }
  size_t i = batch_next_++;
  if (!batch_found_[i]) return StageState::kNeedTime;
  ++keys_examined_;
  ++docs_examined_;
  member_.Clear();
  member_.record_key = walk_.ranges()[batch_ranges_[i]].start;
  member_.doc = ViewOf(batch_values_[i].view());
  member_.has_doc = true;
  if (StageState s; FilteredOut(filter_, &member_, StageState::kNeedTime, &s)) return s;
  *out = &member_;
  return StageState::kAdvanced;
}

StageState ClusteredScanStage::DoWork(WorkingMember** out) {
  if (points_) return DoPointWork(out);
  switch (walk_.Next(view_)) {
    case RangeIterator::Step::kEof: return StageState::kEof;
    case RangeIterator::Step::kNextRange: return StageState::kNeedTime;
    case RangeIterator::Step::kError: return Fail(walk_.status());
    case RangeIterator::Step::kKey: break;
  }
  ++keys_examined_;
  ++docs_examined_;
  member_.Clear();
  member_.record_key = std::string_view(walk_.key().data(), walk_.key().size());
  member_.doc = DocumentView(reinterpret_cast<const uint8_t*>(walk_.value().data()));
  member_.has_doc = true;
  if (StageState s; FilteredOut(filter_, &member_, StageState::kNeedTime, &s)) return s;
  *out = &member_;
  return StageState::kAdvanced;
}

void ClusteredScanStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (filter_) filter_.describe(out);
  out->AppendDocument("keyPattern", DocumentView(reinterpret_cast<const uint8_t*>(
                                        "\x0e\x00\x00\x00\x10_id\x00\x01\x00\x00\x00\x00")));
  out->AppendString("indexName", "_id_");
  out->AppendString("direction", forward_ ? "forward" : "backward");
  out->AppendDocument("indexBounds", bounds_.ToExplain(0, !forward_));
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    AppendNumber(out, "keysExamined", keys_examined_);
    AppendNumber(out, "docsExamined", docs_examined_);
    AppendNumber(out, "seeks", walk_.seeks());
  }
}

}  // namespace rockdoc::internal

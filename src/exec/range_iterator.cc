#include "exec/range_iterator.h"

#include <algorithm>


namespace rockdoc::internal {

RangeIterator::RangeIterator(std::string lower, std::string upper, std::vector<KeyRange> ranges,
                             bool forward)
    : lower_(std::move(lower)), upper_(std::move(upper)), ranges_(std::move(ranges)),
      forward_(forward) {
  range_ = forward_ ? 0 : ranges_.size();
  // The storage iterator is bounded by the ranges themselves, not by the
  // whole index or collection: RocksDB then stops at the last range's end
  // without reading on into the next data block or file (an equality's scan
  // ends at its one entry instead of loading what follows it).
  if (!ranges_.empty()) {
    lower_ = std::max(lower_, ranges_.front().start);
    upper_ = std::min(upper_, ranges_.back().end);
  }
}

Status RangeIterator::status() const {
  if (it_ == nullptr) return Status(ErrorCode::kIllegalOperation, "the database was closed");
  return it_->status();
}

bool RangeIterator::TakeRange(size_t* index) {
  if (remaining_ranges() == 0) return false;
  *index = forward_ ? range_++ : --range_;
  return true;
}

// Positions the iterator at the first key of the current range, in scan
// direction; false when no ranges remain.
bool RangeIterator::PositionAtRange() {
  if (remaining_ranges() == 0) return false;
  const KeyRange& r = ranges_[forward_ ? range_ : range_ - 1];
  if (forward_) {
    // A previous range may already have left the iterator past this start.
    if (!it_->Valid() || it_->key() < std::string_view(r.start)) {
      it_->Seek(r.start);
      ++seeks_;
    }
  } else if (!it_->Valid() || it_->key() >= std::string_view(r.end)) {
    it_->SeekForPrev(r.end);
    ++seeks_;
    if (it_->Valid() && it_->key() >= std::string_view(r.end)) it_->Prev();
  }
  return true;
}

RangeIterator::Step RangeIterator::Next(const ReadView& view) {
  if (!it_) it_ = view.NewIterator(lower_, upper_);
  if (!in_range_) {
    if (!PositionAtRange()) return Step::kEof;
    in_range_ = true;
  } else if (it_->Valid()) {
    if (forward_) {
      it_->Next();
    } else {
      it_->Prev();
    }
  }
  if (!it_->Valid()) return it_->status().ok() ? Step::kEof : Step::kError;
  const KeyRange& r = ranges_[forward_ ? range_ : range_ - 1];
  bool inside = forward_ ? it_->key() < std::string_view(r.end)
                         : it_->key() >= std::string_view(r.start);
  if (!inside) {
    in_range_ = false;
    if (forward_) {
      ++range_;
    } else {
      --range_;
    }
    return Step::kNextRange;
  }
  return Step::kKey;
}

}  // namespace rockdoc::internal

// exec/range_iterator.h: a RocksDB iterator that walks a list of key ranges
// (ascending and disjoint, all inside [lower, upper)) forward or backward,
// seeking only when the next range starts past where the iterator is. The
// common walk of IXSCAN and CLUSTERED_IXSCAN.
//
// Thread safety: one thread at a time.
#ifndef ROCKDOC_EXEC_RANGE_ITERATOR_H_
#define ROCKDOC_EXEC_RANGE_ITERATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "exec/plan_stage.h"
#include "index/index_bounds.h"

namespace rockdoc::internal {

class RangeIterator {
 public:
  RangeIterator(std::string lower, std::string upper, std::vector<KeyRange> ranges, bool forward);

  enum class Step {
    kKey,       // key() and value() are the next entry inside a range
    kNextRange, // left one range; call again
    kEof,       // no ranges left
    kError,     // status() says what failed
  };
  Step Next(const ReadView& view);

  std::string_view key() const { return it_->key(); }
  std::string_view value() const { return it_->value(); }
  Status status() const;

  // Hands out the next unvisited range (in scan order) without iterating it:
  // for callers that read point ranges another way. False when none remain.
  bool TakeRange(size_t* index);
  size_t remaining_ranges() const { return forward_ ? ranges_.size() - range_ : range_; }
  const std::vector<KeyRange>& ranges() const { return ranges_; }
  bool forward() const { return forward_; }

  int64_t seeks() const { return seeks_; }
  void CountSeeks(int64_t n) { seeks_ += n; }
  // Drops the storage iterator (the engine is closing).
  void Release() { it_.reset(); }

 private:
  bool PositionAtRange();

  std::string lower_, upper_;
  std::vector<KeyRange> ranges_;
  bool forward_;
  std::unique_ptr<KvIterator> it_;
  size_t range_ = 0;  // forward: next range; backward: one past it
  bool in_range_ = false;
  int64_t seeks_ = 0;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_RANGE_ITERATOR_H_

#include "exec/geo_near_stage.h"

#include <algorithm>
#include <cmath>

#include "index/access_method.h"
#include "query/field_path.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

double NearestDistance(const GeoNearMatchExpression& near, DocumentView doc, Element* location) {
  double best = -1;
  ForEachPathValue(doc, near.field_path(), LeafArrayMode::kTraverse,
                   [&](const Element& v, int64_t) {
                     const double d = near.DistanceOf(v);
                     if (d >= 0 && (best < 0 || d < best)) {
                       best = d;
                       if (location != nullptr) *location = v;
                     }
                     return false;
                   });
  return best;
}

GeoNearStage::GeoNearStage(const ReadView& view, uint32_t collection_id,
                           std::shared_ptr<const IndexDescriptor> index, IndexBounds bounds,
                           size_t near_field, const GeoNearMatchExpression* near,
                           StageFilter filter)
    : view_(view),
      collection_id_(collection_id),
      index_(std::move(index)),
      bounds_(std::move(bounds)),
      near_field_(near_field),
      near_(near),
      filter_(std::move(filter)) {}

std::string GeoNearStage::SummaryPart() const {
  return "GEO_NEAR_2DSPHERE " + ToJson(index_->key_pattern(), JsonFormat::kShell);
}

Status GeoNearStage::StartCap() {
  // The first cap: the finest indexed cells' size (500 m), past $minDistance.
  constexpr double kFirst = 500.0 / kEarthRadiusMeters;
  radius_ = radius_ == 0 ? near_->min_radians() + kFirst : radius_ * 2;
  if (radius_ >= near_->max_radians() || radius_ >= M_PI) {
    radius_ = std::min(near_->max_radians(), M_PI);
    last_cap_ = true;
  }
  std::vector<Interval> intervals;
  if (!index_->access_method().NearIntervals(*index_, near_field_, near_->center(), radius_,
                                             &intervals)) {
    return Status(ErrorCode::kInternalError, "the index cannot search by distance");
  }
  IndexBounds bounds = bounds_;
  bounds.fields[near_field_].intervals = std::move(intervals);
  auto scan = std::make_unique<IndexScanStage>(view_, collection_id_, index_, std::move(bounds),
                                               true, IndexScanStage::Output::kRecordKey,
                                               StageFilter());
  AddChild(std::make_unique<FetchStage>(view_, std::move(scan), filter_));
  if (timed_) children_.back()->EnableTiming();
  scanning_ = children_.back().get();
  return Status::OK();
}

StageState GeoNearStage::DoWork(WorkingMember** out) {
  // Return what the caps scanned so far settle.
  const bool all_scanned = last_cap_ && scanning_ == nullptr;
  if (!buffer_.empty() &&
      (all_scanned || (scanning_ == nullptr && buffer_.front().distance <= radius_))) {
    std::pop_heap(buffer_.begin(), buffer_.end(), Farther());
    current_ = std::move(buffer_.back());
    buffer_.pop_back();
    member_.Clear();
    member_.record_key = current_.record_key;
    member_.doc = current_.doc.view();
    member_.has_doc = true;
    *out = &member_;
    return StageState::kAdvanced;
  }
  if (all_scanned) return StageState::kEof;
  if (scanning_ == nullptr) {
    Status s = StartCap();
    if (!s.ok()) return Fail(s);
    return StageState::kNeedTime;
  }
  WorkingMember* in = nullptr;
  StageState s = scanning_->Work(&in);
  if (s == StageState::kFailure) return Fail(scanning_->status());
  if (s == StageState::kEof) {
    scanning_ = nullptr;
    return StageState::kNeedTime;
  }
  if (s != StageState::kAdvanced) return s;
  std::string key(in->record_key);
  if (!seen_.insert(key).second) return StageState::kNeedTime;
  const double d = NearestDistance(*near_, in->doc);
  if (d < 0 || d < near_->min_radians() || d > near_->max_radians()) {
    return StageState::kNeedTime;
  }
  buffer_.push_back(Found{d, found_++, Document::AdoptValidated(std::string(in->doc.bytes())),
                          std::move(key)});
  std::push_heap(buffer_.begin(), buffer_.end(), Farther());
  return StageState::kNeedTime;
}

void GeoNearStage::ExplainFields(BsonBuilder* out, ExplainVerbosity) const {
  out->AppendDocument("keyPattern", index_->key_pattern());
  out->AppendString("indexName", index_->name());
  out->AppendInt32("indexVersion", kIndexVersion);
}

}  // namespace rockdoc::internal

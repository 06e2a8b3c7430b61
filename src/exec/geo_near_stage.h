// exec/geo_near_stage.h: GEO_NEAR_2DSPHERE, the nearest-first scan of a
// geo index ($near, $nearSphere and the $geoNear stage), as MongoDB's:
// growing caps around the query point, each scanned as an IXSCAN + FETCH
// of the intervals the index kind gives for it
// (IndexAccessMethod::NearIntervals), the documents found buffered by
// distance, and those no farther than the cap's radius returned, nearest
// first (a document within that radius has a key in that cap's covering,
// so no later cap can hold a nearer one). Documents outside
// [$minDistance, $maxDistance] are dropped; the radius doubles from the
// index's finest cell size until it passes $maxDistance (or half the
// globe), and then the rest of the buffer is returned.
//
// Thread safety: one thread at a time, as every stage.
#ifndef ROCKDOC_EXEC_GEO_NEAR_STAGE_H_
#define ROCKDOC_EXEC_GEO_NEAR_STAGE_H_

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "exec/index_stages.h"
#include "exec/plan_stage.h"
#include "exec/scan_stages.h"
#include "index/index_bounds.h"
#include "index/index_descriptor.h"
#include "query/geo_match_expression.h"

namespace rockdoc::internal {

// The distance from `near`'s point to the nearest geometry `doc` holds at
// `near`'s path, in radians, and (when `location` is not null) that
// geometry's value; negative when it holds none.
double NearestDistance(const GeoNearMatchExpression& near, DocumentView doc,
                       Element* location = nullptr);

class GeoNearStage : public PlanStage {
 public:
  // `bounds`: the index's bounds from the other predicates; field
  // `near_field`'s intervals are replaced by each cap's. `filter`: the
  // query's other conjuncts. `near` is owned by the query and outlives the
  // stage.
  GeoNearStage(const ReadView& view, uint32_t collection_id,
               std::shared_ptr<const IndexDescriptor> index, IndexBounds bounds,
               size_t near_field, const GeoNearMatchExpression* near, StageFilter filter);
  std::string_view name() const override { return "GEO_NEAR_2DSPHERE"; }
  std::string SummaryPart() const override;

 protected:
  StageState DoWork(WorkingMember** out) override;
  void ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const override;

 private:
  struct Found {
    double distance;
    uint64_t order;  // ties: the order found, for a stable answer
    Document doc;
    std::string record_key;
  };
  struct Farther {
    bool operator()(const Found& a, const Found& b) const {
      return a.distance != b.distance ? a.distance > b.distance : a.order > b.order;
    }
  };
  Status StartCap();

  ReadView view_;
  uint32_t collection_id_;
  std::shared_ptr<const IndexDescriptor> index_;
  IndexBounds bounds_;
  size_t near_field_;
  const GeoNearMatchExpression* near_;
  StageFilter filter_;
  double radius_ = 0;         // the cap being scanned (or last scanned)
  bool last_cap_ = false;     // radius_ reaches every distance allowed
  PlanStage* scanning_ = nullptr;  // the current cap's FETCH, among children_
  std::vector<Found> buffer_;  // a heap, nearest on top (Farther)
  std::unordered_set<std::string> seen_;  // record keys measured already
  uint64_t found_ = 0;
  Found current_;
  WorkingMember member_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_EXEC_GEO_NEAR_STAGE_H_

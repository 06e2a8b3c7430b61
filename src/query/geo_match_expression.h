// query/geo_match_expression.h: the geospatial query operators as match
// expressions, over query/geometry.h (S2).
//
//   {loc: {$geoWithin: {$geometry: <Polygon|MultiPolygon>}}}   GEO_WITHIN
//   {loc: {$geoWithin: {$centerSphere: [[lng, lat], radians]}}}
//   {loc: {$geoWithin: {$box: [[x1, y1], [x2, y2]]}}}         (flat)
//   {loc: {$geoWithin: {$polygon: [[x, y], ...]}}}            (flat)
//   {loc: {$geoIntersects: {$geometry: <GeoJSON>}}}           GEO_INTERSECTS
//   {loc: {$near: {$geometry: <Point>, $maxDistance: m, $minDistance: m}}}
//   {loc: {$near: [lng, lat], $maxDistance: radians}}          GEO_NEAR
//   and $nearSphere in both forms.
// $geoWithin and $geoIntersects test each value the path reaches (a legacy
// [lng, lat] pair is the array itself) and need no index: a collection scan
// checks them with S2. $near and $nearSphere also order the results by
// distance, which only a geo index's scan does (planner/: without one the
// query fails with NoQueryExecutionPlans, 291, as MongoDB's); as a filter
// they test the distance bounds. Distances are in meters for a GeoJSON
// point, in radians for a legacy one.
//
// Thread safety: immutable after parsing.
#ifndef ROCKDOC_QUERY_GEO_MATCH_EXPRESSION_H_
#define ROCKDOC_QUERY_GEO_MATCH_EXPRESSION_H_

#include <memory>
#include <string>

#include "query/geometry.h"
#include "query/match_expression.h"

namespace rockdoc {

// $geoWithin / $geoIntersects.
class GeoMatchExpression : public PathMatchExpression {
 public:
  // `type` is kGeoWithin or kGeoIntersects; `arg` is the operator's
  // argument as given (what explain and serialization show).
  static StatusOr<std::unique_ptr<MatchExpression>> Parse(MatchType type, std::string path,
                                                          const Element& arg);

  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  void SerializeRhs(BsonBuilder* builder) const override;
  Element operand() const override { return arg_.element(); }

  // Exactly one of these is meaningful, by type().
  const GeoRegion& region() const { return *region_; }
  const Geometry& geometry() const { return *geometry_; }

 private:
  GeoMatchExpression(MatchType type, std::string path, const Element& arg);
  Value arg_;
  std::shared_ptr<GeoRegion> region_;
  std::shared_ptr<Geometry> geometry_;
};

// $near / $nearSphere.
class GeoNearMatchExpression : public PathMatchExpression {
 public:
  // `op` is "$near" or "$nearSphere"; `context` the operator document it
  // sits in (a legacy point's $maxDistance / $minDistance are siblings).
  static StatusOr<std::unique_ptr<MatchExpression>> Parse(std::string_view op, std::string path,
                                                          const Element& arg,
                                                          DocumentView context);

  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  void SerializeRhs(BsonBuilder* builder) const override;
  Element operand() const override { return arg_.element(); }

  const GeoPoint& center() const { return center_; }
  // Bounds in radians on the unit sphere (max: pi when none was given).
  double min_radians() const { return min_radians_; }
  double max_radians() const { return max_radians_; }
  // Meters (GeoJSON) or radians (legacy): the unit of distances shown.
  bool meters() const { return meters_; }
  // The distance of `value`'s geometry from the center in radians, or a
  // negative number when it holds none.
  double DistanceOf(const Element& value) const;

 private:
  GeoNearMatchExpression(std::string path, std::string op, const Element& arg);
  std::string op_;
  Value arg_;
  Value min_given_, max_given_;  // siblings, for serialization
  GeoPoint center_;
  double min_radians_ = 0;
  double max_radians_ = 0;
  bool meters_ = false;
};

// The $near / $nearSphere inside `root` (at the top or in its top-level
// $and), or null. BadValue (2) "Too many geoNear expressions" when two.
StatusOr<const GeoNearMatchExpression*> FindGeoNear(const MatchExpression* root);

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_GEO_MATCH_EXPRESSION_H_

// query/geometry.h: GeoJSON and legacy coordinates on the sphere, through
// S2 (Debian's libs2, the library MongoDB's 2dsphere is built on, so that
// validity, containment and intersection agree with MongoDB's).
//
// A stored geometry (`ParseStoredGeometry`) is a GeoJSON object (Point,
// LineString, Polygon with holes, MultiPoint, MultiLineString,
// MultiPolygon, GeometryCollection) or a legacy point ([lng, lat] or
// {x: lng, y: lat}); a query region (`ParseGeoWithinRegion`,
// `ParseGeoIntersectsGeometry`) is what $geoWithin and $geoIntersects take.
// Validation follows MongoDB's GeoParser: coordinates must be numbers,
// longitude in [-180, 180] and latitude in [-90, 90], a LineString has two
// distinct vertices at least, a Polygon's loops are closed, have three
// distinct vertices, do not self-intersect, and its holes lie inside its
// first (exterior) loop. A loop encloses the smaller of the two regions
// it bounds (MongoDB's rule for the default CRS); MongoDB's strict-winding
// big-polygon CRS ("urn:x-mongodb:crs:strictwinding:EPSG:4326") is refused
// (NotImplemented), and so is any other `crs`.
//
// Thread safety: a parsed Geometry or GeoRegion is immutable and may be
// read from many threads.
#ifndef ROCKDOC_QUERY_GEOMETRY_H_
#define ROCKDOC_QUERY_GEOMETRY_H_

#include <memory>
#include <string>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

class S2Polygon;
class S2Polyline;
class S2CellUnion;

namespace rockdoc {

// The earth's radius MongoDB's 2dsphere uses, in meters (kRadiusOfEarthInMeters).
inline constexpr double kEarthRadiusMeters = 6378.1 * 1000.0;

// A point on the unit sphere (S2Point's coordinates).
struct GeoPoint {
  double x = 0, y = 0, z = 0;
};

// One parsed geometry: its points, polylines and polygons (a Multi* or a
// GeometryCollection holds several).
class Geometry {
 public:
  Geometry();
  ~Geometry();
  Geometry(Geometry&&) noexcept;
  Geometry& operator=(Geometry&&) noexcept;

  const std::vector<GeoPoint>& points() const { return points_; }
  const std::vector<std::unique_ptr<S2Polyline>>& lines() const { return lines_; }
  const std::vector<std::unique_ptr<S2Polygon>>& polygons() const { return polygons_; }
  bool empty() const { return points_.empty() && lines_.empty() && polygons_.empty(); }
  // True for a single point (what $near and $geoNear take and measure).
  bool is_point() const { return points_.size() == 1 && lines_.empty() && polygons_.empty(); }

  // Whether this geometry and `other` share a point ($geoIntersects).
  bool Intersects(const Geometry& other) const;
  // The shortest distance, in radians on the unit sphere, from `p` to any
  // part of this geometry (0 inside a polygon).
  double DistanceRadians(const GeoPoint& p) const;

  std::vector<GeoPoint> points_;
  std::vector<std::unique_ptr<S2Polyline>> lines_;
  std::vector<std::unique_ptr<S2Polygon>> polygons_;
};

// $geoWithin's region: a GeoJSON Polygon or MultiPolygon ($geometry), a
// spherical cap ($centerSphere), or a flat box or polygon in longitude /
// latitude coordinates ($box, $polygon; flat geometry, as MongoDB's).
class GeoRegion {
 public:
  enum class Kind { kPolygons, kCap, kFlatBox, kFlatPolygon };
  GeoRegion();
  ~GeoRegion();
  GeoRegion(GeoRegion&&) noexcept;

  Kind kind() const { return kind_; }
  // Whether every part of `g` lies in the region.
  bool Contains(const Geometry& g) const;

  Kind kind_ = Kind::kPolygons;
  Geometry polygons_;           // kPolygons
  GeoPoint cap_center_;         // kCap
  double cap_radius_ = 0;       // kCap, radians
  std::vector<double> flat_;    // kFlatBox: x1, y1, x2, y2; kFlatPolygon: x, y pairs
};

// A document's geometry at one value: GeoJSON or a legacy point. BadValue
// (2) with MongoDB's message when it is neither or invalid.
Status ParseStoredGeometry(const Element& value, Geometry* out);
// A GeoJSON object (not a legacy point), for $geometry.
Status ParseGeoJson(DocumentView obj, Geometry* out);
// The argument of $geoWithin; BadValue (2) with MongoDB's messages.
Status ParseGeoWithinRegion(const Element& arg, GeoRegion* out);
// The argument of $geoIntersects ({$geometry: <GeoJSON>}).
Status ParseGeoIntersectsGeometry(const Element& arg, Geometry* out);
// A point given as GeoJSON or a legacy pair ($near's argument).
Status ParseGeoPoint(const Element& value, GeoPoint* out);

// Cell coverings, for the 2dsphere index: cell ids between `coarsest` and
// `finest` level (inclusive) whose union covers the geometry or region.
struct CoveringParams {
  int coarsest_level;
  int finest_level;
  int max_cells;
};
// MongoDB's 2dsphere (version 3) parameters: finest level from 500 m,
// coarsest from 100 km, 50 cells.
CoveringParams DefaultCoveringParams();
std::vector<uint64_t> CoverGeometry(const Geometry& g, const CoveringParams& params);
std::vector<uint64_t> CoverRegion(const GeoRegion& r, const CoveringParams& params);
// A cap of `radius` radians around `center` (the annuli of $near).
std::vector<uint64_t> CoverCap(const GeoPoint& center, double radius,
                               const CoveringParams& params);
// An S2 cell id's range of descendants [min, max] and its parent at `level`.
uint64_t CellRangeMin(uint64_t cell);
uint64_t CellRangeMax(uint64_t cell);
int CellLevel(uint64_t cell);
uint64_t CellParent(uint64_t cell, int level);

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_GEOMETRY_H_

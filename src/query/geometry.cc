#include "query/geometry.h"

#include <s2/s1angle.h>
#include <s2/s1chord_angle.h>
#include <s2/s2cap.h>
#include <s2/s2cell_id.h>
#include <s2/s2cell_union.h>
#include <s2/s2error.h>
#include <s2/s2latlng.h>
#include <s2/s2latlng_rect.h>
#include <s2/s2loop.h>
#include <s2/s2metrics.h>
#include <s2/s2polygon.h>
#include <s2/s2polyline.h>
#include <s2/s2region_coverer.h>

#include <algorithm>
#include <cmath>

#include "rockdoc/json.h"

namespace rockdoc {

namespace {

Status Bad(std::string message) { return Status(ErrorCode::kBadValue, std::move(message)); }

S2Point ToS2(const GeoPoint& p) { return S2Point(p.x, p.y, p.z); }
GeoPoint FromS2(const S2Point& p) { return GeoPoint{p.x(), p.y(), p.z()}; }

std::string Num(double v) {
  BsonBuilder b;
  b.AppendDouble("", v);
  Document d = std::move(b).Build();
  return ValueToJson(d.Get(""), JsonFormat::kShell);
}

// [lng, lat] of a GeoJSON position: at least two numbers (an altitude and
// more are allowed and ignored, as MongoDB does), within bounds.
Status ParseCoordinate(const Element& e, S2Point* out) {
  if (e.type() != BsonType::kArray) {
    return Bad("GeoJSON coordinates must be an array of coordinates");
  }
  std::vector<double> v;
  for (const Element& c : e.Array()) {
    if (!c.IsNumber()) return Bad("Point must only contain numeric elements");
    v.push_back(c.NumberAsDouble());
  }
  if (v.size() < 2) return Bad("Point must contain at least two coordinates");
  const double lng = v[0], lat = v[1];
  if (!(std::isfinite(lng) && std::isfinite(lat)) || lng < -180 || lng > 180 || lat < -90 ||
      lat > 90) {
    return Bad("longitude/latitude is out of bounds, lng: " + Num(lng) + " lat: " + Num(lat));
  }
  *out = S2LatLng::FromDegrees(lat, lng).ToPoint();
  return Status::OK();
}

// A legacy pair: an array or document whose first two values are numbers
// (x = longitude, y = latitude).
bool LegacyPair(const Element& e, double* x, double* y) {
  if (e.type() != BsonType::kArray && e.type() != BsonType::kDocument) return false;
  std::vector<double> v;
  for (const Element& c : e.Document()) {
    if (!c.IsNumber()) return false;
    v.push_back(c.NumberAsDouble());
    if (v.size() == 2) break;
  }
  if (v.size() != 2) return false;
  *x = v[0];
  *y = v[1];
  return true;
}

Status ParseLegacyPoint(const Element& e, S2Point* out) {
  double x, y;
  if (!LegacyPair(e, &x, &y)) return Bad("Point must only contain numeric elements");
  if (!(std::isfinite(x) && std::isfinite(y)) || x < -180 || x > 180 || y < -90 || y > 90) {
    return Bad("longitude/latitude is out of bounds, lng: " + Num(x) + " lat: " + Num(y));
  }
  *out = S2LatLng::FromDegrees(y, x).ToPoint();
  return Status::OK();
}

Status ParseLineCoordinates(const Element& coords, std::unique_ptr<S2Polyline>* out) {
  if (coords.type() != BsonType::kArray) {
    return Bad("GeoJSON coordinates must be an array of coordinates");
  }
  std::vector<S2Point> vertices;
  for (const Element& c : coords.Array()) {
    S2Point p;
    ROCKDOC_RETURN_IF_ERROR(ParseCoordinate(c, &p));
    // Consecutive duplicates are dropped, as MongoDB's parser does.
    if (vertices.empty() || vertices.back() != p) vertices.push_back(p);
  }
  if (vertices.size() < 2) return Bad("GeoJSON LineString must have at least 2 vertices");
  auto line = std::make_unique<S2Polyline>(vertices, S2Debug::DISABLE);
  S2Error error;
  if (line->FindValidationError(&error)) {
    return Bad("GeoJSON LineString is not valid: " + error.text());
  }
  *out = std::move(line);
  return Status::OK();
}

Status ParseLoop(const Element& ring, std::unique_ptr<S2Loop>* out) {
  if (ring.type() != BsonType::kArray) {
    return Bad("Polygon coordinates must be an array of arrays of coordinates");
  }
  std::vector<S2Point> vertices;
  for (const Element& c : ring.Array()) {
    S2Point p;
    ROCKDOC_RETURN_IF_ERROR(ParseCoordinate(c, &p));
    if (vertices.empty() || vertices.back() != p) vertices.push_back(p);
  }
  if (vertices.size() >= 2 && vertices.front() != vertices.back()) {
    return Bad("Loop is not closed, first vertex does not equal last vertex");
  }
  if (vertices.size() < 4) return Bad("Loop must have at least 3 different vertices");
  vertices.pop_back();  // S2 loops are implicitly closed
  if (vertices.size() < 3) return Bad("Loop must have at least 3 different vertices");
  auto loop = std::make_unique<S2Loop>(vertices, S2Debug::DISABLE);
  S2Error error;
  if (loop->FindValidationError(&error)) return Bad("Loop is not valid: " + error.text());
  // The smaller of the two regions the ring bounds (MongoDB's default CRS).
  loop->Normalize();
  *out = std::move(loop);
  return Status::OK();
}

Status ParsePolygonCoordinates(const Element& coords, std::unique_ptr<S2Polygon>* out) {
  if (coords.type() != BsonType::kArray) {
    return Bad("Polygon coordinates must be an array of arrays of coordinates");
  }
  std::vector<std::unique_ptr<S2Loop>> loops;
  for (const Element& ring : coords.Array()) {
    std::unique_ptr<S2Loop> loop;
    ROCKDOC_RETURN_IF_ERROR(ParseLoop(ring, &loop));
    if (!loops.empty()) {
      if (!loops[0]->Contains(*loop)) {
        return Bad("Secondary loops not contained by first exterior loop - secondary loops "
                   "must be holes");
      }
      for (size_t i = 1; i < loops.size(); ++i) {
        if (loops[i]->Intersects(*loop)) {
          return Bad("Polygon has overlapping holes");
        }
      }
    }
    loops.push_back(std::move(loop));
  }
  if (loops.empty()) return Bad("Polygon has no loops.");
  auto polygon = std::make_unique<S2Polygon>();
  polygon->set_s2debug_override(S2Debug::DISABLE);
  polygon->InitNested(std::move(loops));
  S2Error error;
  if (polygon->FindValidationError(&error)) {
    return Bad("Polygon is not valid: " + error.text());
  }
  *out = std::move(polygon);
  return Status::OK();
}

Status CheckCrs(DocumentView obj) {
  Element crs = obj.Get("crs");
  if (!crs.ok()) return Status::OK();
  if (crs.type() != BsonType::kDocument) return Bad("GeoJSON CRS must be an object");
  Element props = crs.Document().Get("properties");
  Element name = props.type() == BsonType::kDocument ? props.Document().Get("name") : Element();
  if (name.type() == BsonType::kString &&
      (name.String() == "EPSG:4326" || name.String() == "urn:ogc:def:crs:OGC:1.3:CRS84")) {
    return Status::OK();  // the default CRS, named
  }
  if (name.type() == BsonType::kString &&
      name.String() == "urn:x-mongodb:crs:strictwinding:EPSG:4326") {
    return Status(ErrorCode::kNotImplemented,
                  "big polygons (the strict winding CRS) are not supported by rockdoc");
  }
  return Bad("Unknown CRS name: " + ToJson(crs.Document(), JsonFormat::kShell));
}

Status ParseGeoJsonInto(DocumentView obj, Geometry* out, int depth) {
  Element type = obj.Get("type");
  if (type.type() != BsonType::kString) {
    return Bad("unknown GeoJSON type: " + ToJson(obj, JsonFormat::kShell));
  }
  ROCKDOC_RETURN_IF_ERROR(CheckCrs(obj));
  std::string_view t = type.String();
  if (t == "GeometryCollection") {
    Element geometries = obj.Get("geometries");
    if (geometries.type() != BsonType::kArray) {
      return Bad("GeometryCollection geometries must be an array");
    }
    if (depth > 0) return Bad("GeometryCollections cannot be nested");
    for (const Element& g : geometries.Array()) {
      if (g.type() != BsonType::kDocument) {
        return Bad("Element " + std::string(g.key()) +
                   " of \"geometries\" is not an object: " + ValueToJson(g, JsonFormat::kShell));
      }
      ROCKDOC_RETURN_IF_ERROR(ParseGeoJsonInto(g.Document(), out, depth + 1));
    }
    return Status::OK();
  }
  Element coords = obj.Get("coordinates");
  if (t == "Point") {
    S2Point p;
    ROCKDOC_RETURN_IF_ERROR(ParseCoordinate(coords, &p));
    out->points_.push_back(FromS2(p));
    return Status::OK();
  }
  if (t == "LineString") {
    std::unique_ptr<S2Polyline> line;
    ROCKDOC_RETURN_IF_ERROR(ParseLineCoordinates(coords, &line));
    out->lines_.push_back(std::move(line));
    return Status::OK();
  }
  if (t == "Polygon") {
    std::unique_ptr<S2Polygon> polygon;
    ROCKDOC_RETURN_IF_ERROR(ParsePolygonCoordinates(coords, &polygon));
    out->polygons_.push_back(std::move(polygon));
    return Status::OK();
  }
  if (t == "MultiPoint" || t == "MultiLineString" || t == "MultiPolygon") {
    if (coords.type() != BsonType::kArray) {
      return Bad(std::string(t) + " coordinates must be an array");
    }
    if (coords.Array().empty()) return Bad(std::string(t) + " coordinates must have at least 1 element");
    for (const Element& c : coords.Array()) {
      if (t == "MultiPoint") {
        S2Point p;
        ROCKDOC_RETURN_IF_ERROR(ParseCoordinate(c, &p));
        out->points_.push_back(FromS2(p));
      } else if (t == "MultiLineString") {
        std::unique_ptr<S2Polyline> line;
        ROCKDOC_RETURN_IF_ERROR(ParseLineCoordinates(c, &line));
        out->lines_.push_back(std::move(line));
      } else {
        std::unique_ptr<S2Polygon> polygon;
        ROCKDOC_RETURN_IF_ERROR(ParsePolygonCoordinates(c, &polygon));
        out->polygons_.push_back(std::move(polygon));
      }
    }
    return Status::OK();
  }
  return Bad("unknown GeoJSON type: " + ToJson(obj, JsonFormat::kShell));
}

// Within this angle of each other two points are one (a point "on" a
// line): S2's own rounding of degrees to unit vectors is ~1e-15.
const S1Angle kTouch = S1Angle::Radians(1e-12);

bool PointOnLine(const S2Point& p, const S2Polyline& line) {
  int next;
  return S1Angle(p, line.Project(p, &next)) <= kTouch;
}

bool PointInFlatPolygon(double x, double y, const std::vector<double>& v) {
  const size_t n = v.size() / 2;
  bool inside = false;
  for (size_t i = 0, j = n - 1; i < n; j = i++) {
    const double xi = v[2 * i], yi = v[2 * i + 1], xj = v[2 * j], yj = v[2 * j + 1];
    // On an edge counts as inside (MongoDB's flat polygon includes its boundary).
    const double cross = (xj - xi) * (y - yi) - (yj - yi) * (x - xi);
    if (std::fabs(cross) < 1e-12 && x >= std::min(xi, xj) && x <= std::max(xi, xj) &&
        y >= std::min(yi, yj) && y <= std::max(yi, yj)) {
      return true;
    }
    if ((yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

// Every vertex of `g`, as [lng, lat] degrees.
template <typename Fn>
bool AllVertices(const Geometry& g, const Fn& fn) {
  auto ll = [&](const S2Point& p) {
    S2LatLng l(p);
    return fn(l.lng().degrees(), l.lat().degrees(), p);
  };
  for (const GeoPoint& p : g.points()) {
    if (!ll(ToS2(p))) return false;
  }
  for (const auto& line : g.lines()) {
    for (int i = 0; i < line->num_vertices(); ++i)
      if (!ll(line->vertex(i))) return false;
  }
  for (const auto& poly : g.polygons()) {
    for (int l = 0; l < poly->num_loops(); ++l) {
      const S2Loop* loop = poly->loop(l);
      for (int i = 0; i < loop->num_vertices(); ++i)
        if (!ll(loop->vertex(i))) return false;
    }
  }
  return true;
}

S2CellUnion Cover(const S2Region& region, const CoveringParams& params) {
  S2RegionCoverer::Options options;
  options.set_min_level(params.coarsest_level);
  options.set_max_level(params.finest_level);
  options.set_max_cells(params.max_cells);
  S2RegionCoverer coverer(options);
  return coverer.GetCovering(region);
}

std::vector<uint64_t> Ids(const S2CellUnion& u) {
  std::vector<uint64_t> out;
  for (const S2CellId& id : u) out.push_back(id.id());
  return out;
}

}  // namespace

Geometry::Geometry() = default;
Geometry::~Geometry() = default;
Geometry::Geometry(Geometry&&) noexcept = default;
Geometry& Geometry::operator=(Geometry&&) noexcept = default;
GeoRegion::GeoRegion() = default;
GeoRegion::~GeoRegion() = default;
GeoRegion::GeoRegion(GeoRegion&&) noexcept = default;

bool Geometry::Intersects(const Geometry& o) const {
  for (const GeoPoint& gp : points_) {
    const S2Point p = ToS2(gp);
    for (const GeoPoint& q : o.points_)
      if (S1Angle(p, ToS2(q)) <= kTouch) return true;
    for (const auto& line : o.lines_)
      if (PointOnLine(p, *line)) return true;
    for (const auto& poly : o.polygons_)
      if (poly->Contains(p)) return true;
  }
  for (const auto& line : lines_) {
    for (const GeoPoint& q : o.points_)
      if (PointOnLine(ToS2(q), *line)) return true;
    for (const auto& other : o.lines_)
      if (line->Intersects(*other)) return true;
    for (const auto& poly : o.polygons_)
      if (poly->Intersects(*line)) return true;
  }
  for (const auto& poly : polygons_) {
    for (const GeoPoint& q : o.points_)
      if (poly->Contains(ToS2(q))) return true;
    for (const auto& line : o.lines_)
      if (poly->Intersects(*line)) return true;
    for (const auto& other : o.polygons_)
      if (poly->Intersects(*other)) return true;
  }
  return false;
}

double Geometry::DistanceRadians(const GeoPoint& gp) const {
  const S2Point p = ToS2(gp);
  double best = M_PI;
  for (const GeoPoint& q : points_) best = std::min(best, S1Angle(p, ToS2(q)).radians());
  for (const auto& line : lines_) {
    int next;
    best = std::min(best, S1Angle(p, line->Project(p, &next)).radians());
  }
  for (const auto& poly : polygons_) {
    best = std::min(best, poly->GetDistance(p).radians());
  }
  return best;
}

bool GeoRegion::Contains(const Geometry& g) const {
  if (g.empty()) return false;
  switch (kind_) {
    case Kind::kPolygons: {
      auto in_some = [&](auto&& test) {
        for (const auto& poly : polygons_.polygons())
          if (test(*poly)) return true;
        return false;
      };
      for (const GeoPoint& p : g.points())
        if (!in_some([&](const S2Polygon& r) { return r.Contains(ToS2(p)); })) return false;
      for (const auto& line : g.lines())
        if (!in_some([&](const S2Polygon& r) { return r.Contains(*line); })) return false;
      for (const auto& poly : g.polygons())
        if (!in_some([&](const S2Polygon& r) { return r.Contains(*poly); })) return false;
      return true;
    }
    case Kind::kCap: {
      const S2Cap cap(ToS2(cap_center_), S1Angle::Radians(cap_radius_));
      // Every vertex inside, and no polygon holding the cap's far side.
      if (!AllVertices(g, [&](double, double, const S2Point& p) { return cap.Contains(p); })) {
        return false;
      }
      for (const auto& poly : g.polygons())
        if (poly->Contains(-cap.center())) return false;
      return true;
    }
    case Kind::kFlatBox:
      return AllVertices(g, [&](double x, double y, const S2Point&) {
        return x >= flat_[0] && x <= flat_[2] && y >= flat_[1] && y <= flat_[3];
      });
    case Kind::kFlatPolygon:
      return AllVertices(
          g, [&](double x, double y, const S2Point&) { return PointInFlatPolygon(x, y, flat_); });
  }
  return false;
}

Status ParseGeoJson(DocumentView obj, Geometry* out) { return ParseGeoJsonInto(obj, out, 0); }

Status ParseStoredGeometry(const Element& value, Geometry* out) {
  *out = Geometry();
  if (value.type() == BsonType::kDocument && value.Document().Get("type").ok()) {
    return ParseGeoJson(value.Document(), out);
  }
  double x, y;
  if (LegacyPair(value, &x, &y)) {
    S2Point p;
    ROCKDOC_RETURN_IF_ERROR(ParseLegacyPoint(value, &p));
    out->points_.push_back(FromS2(p));
    return Status::OK();
  }
  return Bad("Point must only contain numeric elements");
}

Status ParseGeoPoint(const Element& value, GeoPoint* out) {
  Geometry g;
  ROCKDOC_RETURN_IF_ERROR(ParseStoredGeometry(value, &g));
  if (!g.is_point()) {
    return Bad("invalid point in geo near query $geometry argument: " +
               ValueToJson(value, JsonFormat::kShell));
  }
  *out = g.points()[0];
  return Status::OK();
}

Status ParseGeoIntersectsGeometry(const Element& arg, Geometry* out) {
  Element geometry = arg.type() == BsonType::kDocument ? arg.Document().Get("$geometry") : Element();
  if (geometry.type() != BsonType::kDocument) {
    return Bad("$geoIntersects not supported with provided geometry: " +
               ValueToJson(arg, JsonFormat::kShell));
  }
  return ParseGeoJson(geometry.Document(), out);
}

Status ParseGeoWithinRegion(const Element& arg, GeoRegion* out) {
  if (arg.type() != BsonType::kDocument || arg.Document().empty()) {
    return Bad("$geoWithin not supported with provided geometry: " +
               ValueToJson(arg, JsonFormat::kShell));
  }
  const Element shape = *arg.Document().begin();
  std::string_view name = shape.key();
  auto unsupported = [&] {
    return Bad("$geoWithin not supported with provided geometry: " +
               ValueToJson(arg, JsonFormat::kShell));
  };
  if (name == "$geometry") {
    if (shape.type() != BsonType::kDocument) return unsupported();
    out->kind_ = GeoRegion::Kind::kPolygons;
    ROCKDOC_RETURN_IF_ERROR(ParseGeoJson(shape.Document(), &out->polygons_));
    if (out->polygons_.polygons().empty() || !out->polygons_.points().empty() ||
        !out->polygons_.lines().empty()) {
      return unsupported();  // $geoWithin takes a Polygon or MultiPolygon
    }
    return Status::OK();
  }
  if (name == "$centerSphere") {
    if (shape.type() != BsonType::kArray) return unsupported();
    std::vector<Element> parts;
    for (const Element& e : shape.Array()) parts.push_back(e);
    if (parts.size() != 2 || !parts[1].IsNumber()) return unsupported();
    S2Point center;
    ROCKDOC_RETURN_IF_ERROR(ParseLegacyPoint(parts[0], &center));
    const double r = parts[1].NumberAsDouble();
    if (!(r >= 0) || !std::isfinite(r)) return Bad("radius must be a non-negative number");
    out->kind_ = GeoRegion::Kind::kCap;
    out->cap_center_ = FromS2(center);
    out->cap_radius_ = r;
    return Status::OK();
  }
  if (name == "$box" || name == "$polygon") {
    if (shape.type() != BsonType::kArray) return unsupported();
    std::vector<double> v;
    for (const Element& e : shape.Array()) {
      double x, y;
      if (!LegacyPair(e, &x, &y)) return Bad("Point must only contain numeric elements");
      if (!std::isfinite(x) || !std::isfinite(y)) {
        return Bad("longitude/latitude is out of bounds, lng: " + Num(x) + " lat: " + Num(y));
      }
      v.push_back(x);
      v.push_back(y);
    }
    if (name == "$box") {
      if (v.size() != 4) return Bad("Point must only contain numeric elements");
      out->kind_ = GeoRegion::Kind::kFlatBox;
      out->flat_ = {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]),
                    std::max(v[1], v[3])};
    } else {
      if (v.size() < 6) return Bad("Polygon must have at least 3 points");
      out->kind_ = GeoRegion::Kind::kFlatPolygon;
      out->flat_ = std::move(v);
    }
    return Status::OK();
  }
  if (name == "$center") {
    return Status(ErrorCode::kNotImplemented,
                  "$center (flat circles, for 2d indexes) is not supported by rockdoc; use "
                  "$centerSphere");
  }
  return unsupported();
}

CoveringParams DefaultCoveringParams() {
  return CoveringParams{S2::kAvgEdge.GetClosestLevel(100 * 1000.0 / kEarthRadiusMeters),
                        S2::kAvgEdge.GetClosestLevel(500.0 / kEarthRadiusMeters), 50};
}

std::vector<uint64_t> CoverGeometry(const Geometry& g, const CoveringParams& params) {
  std::vector<S2CellId> cells;
  for (const GeoPoint& p : g.points()) {
    cells.push_back(S2CellId(ToS2(p)).parent(params.finest_level));
  }
  for (const auto& line : g.lines()) {
    for (const S2CellId& id : Cover(*line, params)) cells.push_back(id);
  }
  for (const auto& poly : g.polygons()) {
    for (const S2CellId& id : Cover(*poly, params)) cells.push_back(id);
  }
  std::vector<uint64_t> out;
  for (const S2CellId& id : cells) out.push_back(id.id());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<uint64_t> CoverRegion(const GeoRegion& r, const CoveringParams& params) {
  switch (r.kind()) {
    case GeoRegion::Kind::kPolygons:
      return CoverGeometry(r.polygons_, params);
    case GeoRegion::Kind::kCap:
      return CoverCap(r.cap_center_, r.cap_radius_, params);
    case GeoRegion::Kind::kFlatBox:
    case GeoRegion::Kind::kFlatPolygon: {
      // The flat shape's longitude/latitude bounds: a superset of it.
      double x1 = 180, y1 = 90, x2 = -180, y2 = -90;
      for (size_t i = 0; i + 1 < r.flat_.size(); i += 2) {
        x1 = std::min(x1, r.flat_[i]);
        x2 = std::max(x2, r.flat_[i]);
        y1 = std::min(y1, r.flat_[i + 1]);
        y2 = std::max(y2, r.flat_[i + 1]);
      }
      auto clamp = [](double v, double lo, double hi) { return std::max(lo, std::min(hi, v)); };
      const S2LatLngRect rect(
          S2LatLng::FromDegrees(clamp(y1, -90, 90), clamp(x1, -180, 180)),
          S2LatLng::FromDegrees(clamp(y2, -90, 90), clamp(x2, -180, 180)));
      if (rect.is_empty()) return {};
      return Ids(Cover(rect, params));
    }
  }
  return {};
}

std::vector<uint64_t> CoverCap(const GeoPoint& center, double radius,
                               const CoveringParams& params) {
  const S2Cap cap(ToS2(center), S1Angle::Radians(std::min(radius, M_PI)));
  return Ids(Cover(cap, params));
}

uint64_t CellRangeMin(uint64_t cell) { return S2CellId(cell).range_min().id(); }
uint64_t CellRangeMax(uint64_t cell) { return S2CellId(cell).range_max().id(); }
int CellLevel(uint64_t cell) { return S2CellId(cell).level(); }
uint64_t CellParent(uint64_t cell, int level) { return S2CellId(cell).parent(level).id(); }

}  // namespace rockdoc

#include "query/geo_match_expression.h"

#include <cmath>

#include "rockdoc/json.h"

namespace rockdoc {

namespace {

Status Bad(std::string message) { return Status(ErrorCode::kBadValue, std::move(message)); }

}  // namespace

GeoMatchExpression::GeoMatchExpression(MatchType type, std::string path, const Element& arg)
    : PathMatchExpression(type, std::move(path), LeafArrayMode::kTraverse),
      arg_(Value::FromElement(arg)) {}

StatusOr<std::unique_ptr<MatchExpression>> GeoMatchExpression::Parse(MatchType type,
                                                                     std::string path,
                                                                     const Element& arg) {
  std::unique_ptr<GeoMatchExpression> e(new GeoMatchExpression(type, std::move(path), arg));
  if (type == MatchType::kGeoWithin) {
    auto region = std::make_shared<GeoRegion>();
    ROCKDOC_RETURN_IF_ERROR(ParseGeoWithinRegion(e->arg_.element(), region.get()));
    e->region_ = std::move(region);
  } else {
    auto geometry = std::make_shared<Geometry>();
    ROCKDOC_RETURN_IF_ERROR(ParseGeoIntersectsGeometry(e->arg_.element(), geometry.get()));
    e->geometry_ = std::move(geometry);
  }
  return std::unique_ptr<MatchExpression>(std::move(e));
}

bool GeoMatchExpression::MatchesSingleElement(const Element& value, MatchDetails*) const {
  if (value.type() != BsonType::kDocument && value.type() != BsonType::kArray) return false;
  Geometry g;
  if (!ParseStoredGeometry(value, &g).ok()) return false;
  return type() == MatchType::kGeoWithin ? region_->Contains(g) : g.Intersects(*geometry_);
}

void GeoMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->AppendElementAs(MatchTypeName(type()), arg_.element());
}

GeoNearMatchExpression::GeoNearMatchExpression(std::string path, std::string op,
                                               const Element& arg)
    : PathMatchExpression(MatchType::kGeoNear, std::move(path), LeafArrayMode::kTraverse),
      op_(std::move(op)),
      arg_(Value::FromElement(arg)) {}

StatusOr<std::unique_ptr<MatchExpression>> GeoNearMatchExpression::Parse(std::string_view op,
                                                                         std::string path,
                                                                         const Element& arg,
                                                                         DocumentView context) {
  std::unique_ptr<GeoNearMatchExpression> e(
      new GeoNearMatchExpression(std::move(path), std::string(op), arg));
  Element point, min, max;
  if (arg.type() == BsonType::kDocument && arg.Document().Get("$geometry").ok()) {
    // {$near: {$geometry: <Point>, $maxDistance: m, $minDistance: m}}
    for (const Element& f : arg.Document()) {
      if (f.key() == "$geometry") {
        point = f;
      } else if (f.key() == "$maxDistance") {
        max = f;
      } else if (f.key() == "$minDistance") {
        min = f;
      } else {
        return Bad("invalid argument in geo near query: " + std::string(f.key()));
      }
    }
    if (point.type() != BsonType::kDocument) {
      return Bad("invalid point in geo near query $geometry argument: " +
                 ValueToJson(point, JsonFormat::kShell));
    }
    e->meters_ = true;
  } else {
    // {$near: [lng, lat], $maxDistance: radians} (or {x, y}).
    point = arg;
    max = context.Get("$maxDistance");
    min = context.Get("$minDistance");
    e->min_given_ = Value::FromElement(min);
    e->max_given_ = Value::FromElement(max);
  }
  ROCKDOC_RETURN_IF_ERROR(ParseGeoPoint(point, &e->center_));
  const double scale = e->meters_ ? kEarthRadiusMeters : 1.0;
  auto distance = [&](const Element& d, const char* name, double* out) -> Status {
    if (!d.ok()) return Status::OK();
    if (!d.IsNumber()) return Bad(std::string(name) + " must be a number");
    const double v = d.NumberAsDouble();
    if (std::isnan(v) || v < 0) return Bad(std::string(name) + " must be non-negative");
    *out = v / scale;
    return Status::OK();
  };
  e->max_radians_ = M_PI;
  ROCKDOC_RETURN_IF_ERROR(distance(min, "$minDistance", &e->min_radians_));
  ROCKDOC_RETURN_IF_ERROR(distance(max, "$maxDistance", &e->max_radians_));
  return std::unique_ptr<MatchExpression>(std::move(e));
}

double GeoNearMatchExpression::DistanceOf(const Element& value) const {
  if (value.type() != BsonType::kDocument && value.type() != BsonType::kArray) return -1;
  Geometry g;
  if (!ParseStoredGeometry(value, &g).ok()) return -1;
  return g.DistanceRadians(center_);
}

bool GeoNearMatchExpression::MatchesSingleElement(const Element& value, MatchDetails*) const {
  const double d = DistanceOf(value);
  return d >= 0 && d >= min_radians_ && d <= max_radians_;
}

void GeoNearMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->AppendElementAs(op_, arg_.element());
  if (min_given_.element().ok()) builder->AppendElementAs("$minDistance", min_given_.element());
  if (max_given_.element().ok()) builder->AppendElementAs("$maxDistance", max_given_.element());
}

namespace {

bool HasNearBelow(const MatchExpression* e) {
  if (e->type() == MatchType::kGeoNear) return true;
  for (size_t i = 0; i < e->num_children(); ++i)
    if (HasNearBelow(e->child(i))) return true;
  return false;
}

}  // namespace

StatusOr<const GeoNearMatchExpression*> FindGeoNear(const MatchExpression* root) {
  const GeoNearMatchExpression* found = nullptr;
  auto take = [&](const MatchExpression* e) -> Status {
    if (e->type() != MatchType::kGeoNear) {
      if (HasNearBelow(e)) return Bad("geo near must be top-level expr");
      return Status::OK();
    }
    if (found != nullptr) return Bad("Too many geoNear expressions");
    found = static_cast<const GeoNearMatchExpression*>(e);
    return Status::OK();
  };
  if (root->type() == MatchType::kAnd) {
    for (size_t i = 0; i < root->num_children(); ++i) {
      ROCKDOC_RETURN_IF_ERROR(take(root->child(i)));
    }
  } else {
    ROCKDOC_RETURN_IF_ERROR(take(root));
  }
  return found;
}

}  // namespace rockdoc

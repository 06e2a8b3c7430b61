// pipeline/geo_near_stage.cc: $geoNear (MongoDB's first stage that returns
// documents nearest first, with their distance). The pipeline's find runs
// the search: Pushdown makes it {<key>: {$nearSphere: ...}} and the stage's
// `query` (planned by planner/ as any $nearSphere: GEO_NEAR_2DSPHERE over
// the 2dsphere index on `key`, or NoQueryExecutionPlans 291 without one);
// this stage then writes `distanceField` (meters for a GeoJSON point,
// radians for a legacy pair, times `distanceMultiplier`) and `includeLocs`
// (the location the distance was measured to) into each document.
// Options are decoded from a table (40415 for an unknown one). `key` is
// required: rockdoc does not pick the collection's only geo index for you
// (NotImplemented without it). `spherical: false` is accepted and the
// distance is spherical all the same (there are no flat 2d indexes).
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "exec/geo_near_stage.h"
#include "pipeline/planning.h"
#include "pipeline/stage.h"
#include "query/geo_match_expression.h"

namespace rockdoc::internal {

namespace {

Status Bad(std::string message) { return Status(ErrorCode::kBadValue, std::move(message)); }

struct GeoNearSpec {
  Document filter;                 // the find's filter
  std::vector<std::string> distance_field;
  std::vector<std::string> include_locs;  // empty: none
  double multiplier = 1;
};

StatusOr<GeoNearSpec> ParseSpec(const Element& spec) {
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(10065, "invalid parameter: object expected for $geoNear");
  }
  Element near, distance_field, spherical, key, query, include_locs, max, min, multiplier;
  ROCKDOC_RETURN_IF_ERROR(DecodeStageFields(
      "$geoNear", spec.Document(),
      {{"near", &near}, {"distanceField", &distance_field}, {"spherical", &spherical},
       {"key", &key}, {"query", &query}, {"includeLocs", &include_locs},
       {"maxDistance", &max}, {"minDistance", &min}, {"distanceMultiplier", &multiplier}}));
  if (!near.ok()) return Bad("$geoNear requires a 'near' option as an Array or Object");
  if (near.type() != BsonType::kArray && near.type() != BsonType::kDocument) {
    return Bad("$geoNear requires near argument to be a GeoJSON object or a legacy point(array)");
  }
  if (!distance_field.ok()) return Bad("$geoNear requires a 'distanceField' option as a String");
  if (distance_field.type() != BsonType::kString) {
    return Status(ErrorCode::kTypeMismatch, "distanceField must be a string");
  }
  if (spherical.ok() && spherical.type() != BsonType::kBool && !spherical.IsNumber()) {
    return Status(ErrorCode::kTypeMismatch, "spherical must be a boolean");
  }
  if (query.ok() && query.type() != BsonType::kDocument) {
    return Status(ErrorCode::kTypeMismatch, "query must be an object");
  }
  if (include_locs.ok() && include_locs.type() != BsonType::kString) {
    return Status(ErrorCode::kTypeMismatch, "includeLocs must be a string");
  }
  for (const Element* d : {&max, &min, &multiplier}) {
    if (d->ok() && (!d->IsNumber() || !(d->NumberAsDouble() >= 0))) {
      return Bad(std::string(d->key()) + " must be a nonnegative number");
    }
  }
  if (!key.ok()) {
    return Status(ErrorCode::kNotImplemented,
                  "$geoNear without 'key' is not supported by rockdoc: name the 2dsphere-indexed "
                  "field");
  }
  if (key.type() != BsonType::kString || key.String().empty()) {
    return Bad("$geoNear parameter 'key' must be of type string but found type: " +
               std::string(BsonTypeAlias(key.type())));
  }
  GeoNearSpec out;
  // {<key>: {$nearSphere: <near>, $minDistance, $maxDistance}}: a GeoJSON
  // point takes its distances inside, a legacy pair beside it.
  BsonBuilder b;
  b.OpenArray("$and");
  b.OpenDocument("");
  b.OpenDocument(key.String());
  const bool geojson = near.type() == BsonType::kDocument && near.Document().Get("type").ok();
  if (geojson) {
    b.OpenDocument("$nearSphere");
    b.AppendDocument("$geometry", near.Document());
    if (min.ok()) b.AppendElementAs("$minDistance", min);
    if (max.ok()) b.AppendElementAs("$maxDistance", max);
    b.Close();
  } else {
    b.AppendElementAs("$nearSphere", near);
    if (min.ok()) b.AppendElementAs("$minDistance", min);
    if (max.ok()) b.AppendElementAs("$maxDistance", max);
  }
  b.Close().Close();
  if (query.ok()) b.AppendDocument("", query.Document());
  b.Close();
  out.filter = std::move(b).Build();
  out.distance_field = SplitDotted(distance_field.String());
  if (include_locs.ok()) out.include_locs = SplitDotted(include_locs.String());
  if (multiplier.ok()) out.multiplier = multiplier.NumberAsDouble();
  return out;
}

class GeoNearStage final : public Stage {
 public:
  GeoNearStage(GeoNearSpec spec, std::unique_ptr<MatchExpression> filter,
               const GeoNearMatchExpression* near)
      : spec_(std::move(spec)), filter_(std::move(filter)), near_(near) {}

  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
    if (!doc) return doc;
    Element location;
    const double radians = NearestDistance(*near_, doc->view(), &location);
    const double distance =
        (near_->meters() ? radians * kEarthRadiusMeters : radians) * spec_.multiplier;
    BsonBuilder holder;
    holder.AppendDouble("d", distance);
    if (location.ok()) holder.AppendElementAs("l", location);
    Document values = std::move(holder).Build();
    Document out = WithField(doc->view(), spec_.distance_field, values.Get("d"));
    if (!spec_.include_locs.empty()) out = WithField(out.view(), spec_.include_locs, values.Get("l"));
    return std::optional<Document>(std::move(out));
  }

 private:
  GeoNearSpec spec_;
  std::unique_ptr<MatchExpression> filter_;  // owns near_
  const GeoNearMatchExpression* near_;
};

StatusOr<std::unique_ptr<Stage>> ParseGeoNear(const Element& s, const StageContext& ctx) {
  (void)ctx;
  ROCKDOC_ASSIGN_OR_RETURN(GeoNearSpec spec, ParseSpec(s));
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<MatchExpression> filter,
                           ParseMatchExpression(spec.filter.view()));
  ROCKDOC_ASSIGN_OR_RETURN(const GeoNearMatchExpression* near, FindGeoNear(filter.get()));
  if (near == nullptr) return Bad("$geoNear: no near point");
  return std::unique_ptr<Stage>(
      std::make_unique<GeoNearStage>(std::move(spec), std::move(filter), near));
}

}  // namespace

StatusOr<Document> GeoNearFindFilter(const Element& spec) {
  ROCKDOC_ASSIGN_OR_RETURN(GeoNearSpec parsed, ParseSpec(spec));
  return std::move(parsed.filter);
}

void AddGeoNearStage(StageTable* table) {
  table->emplace("$geoNear", StageDef{.parse = &ParseGeoNear, .place = StagePlace::kFirst,
                                      .in_facet = false});
}

}  // namespace rockdoc::internal

// Geospatial queries and 2dsphere indexes (issue 40, geo part), through the
// library: GeoJSON validation with MongoDB's codes, the index kind's
// options, plans and explain, $near ordered by distance, and a property
// test: over random points and polygons (some crossing the antimeridian,
// some enclosing a pole), every query answered through the 2dsphere index
// returns exactly the _ids of a collection scan and of a brute-force check
// with S2 directly. The manual's examples for each operator, with the
// outputs the manual shows, are tests/data/manual_examples_geo.json.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <s2/s1angle.h>
#include <s2/s2latlng.h>
#include <s2/s2loop.h>
#include <s2/s2polygon.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using ::testing::HasSubstr;

std::string Fmt(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

class GeoTest : public test::ClientTest {
 protected:
  Collection coll() { return db().GetCollection("places"); }

  StatusOr<std::vector<Document>> Find(std::string_view filter, FindOptions options = {}) {
    auto cursor = coll().Find(Json(filter), options);
    if (!cursor.ok()) return cursor.status();
    return cursor->ToVector();
  }
  std::set<int64_t> Ids(std::string_view filter, FindOptions options = {}) {
    auto docs = Find(filter, options);
    EXPECT_TRUE(docs.ok()) << docs.status() << " " << filter;
    std::set<int64_t> out;
    if (!docs.ok()) return out;
    for (const Document& d : *docs) {
      int64_t id = 0;
      EXPECT_TRUE(d.Get("_id").ExactInt64(&id));
      out.insert(id);
    }
    return out;
  }
  std::string WinningStage(std::string_view filter) {
    auto e = coll().ExplainFind(Json(filter), {}, ExplainVerbosity::kQueryPlanner);
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok()) return "";
    return ToJson(e->GetPath("queryPlanner.winningPlan").Document(), JsonFormat::kShell);
  }
};

// ---- Validation ----

TEST_F(GeoTest, InvalidGeometriesAreRefusedOnInsertWith16755) {
  ASSERT_TRUE(coll().CreateIndex(Json(R"({"loc": "2dsphere"})")).ok());
  struct Case {
    const char* doc;
    const char* message;
  } cases[] = {
      {R"({"_id": 1, "loc": {"type": "Point", "coordinates": [200, 0]}})",
       "longitude/latitude is out of bounds"},
      {R"({"_id": 2, "loc": {"type": "Point", "coordinates": ["a", 0]}})",
       "Point must only contain numeric elements"},
      {R"({"_id": 3, "loc": {"type": "LineString", "coordinates": [[0, 0]]}})",
       "GeoJSON LineString must have at least 2 vertices"},
      {R"({"_id": 4, "loc": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]]}})",
       "Loop is not closed"},
      {R"({"_id": 5, "loc": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 0]]]}})",
       "Loop must have at least 3 different vertices"},
      {R"({"_id": 6, "loc": {"type": "Polygon", "coordinates":
          [[[0, 0], [2, 2], [2, 0], [0, 2], [0, 0]]]}})",
       "Loop is not valid"},
      {R"({"_id": 7, "loc": {"type": "Polygon", "coordinates":
          [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], [[5, 5], [6, 5], [6, 6], [5, 5]]]}})",
       "Secondary loops not contained by first exterior loop"},
      {R"({"_id": 8, "loc": {"type": "Triangle", "coordinates": []}})", "unknown GeoJSON type"},
      {R"({"_id": 9, "loc": [1, "x"]})", "Point must only contain numeric elements"},
      {R"({"_id": 10, "loc": "here"})", "Point must only contain numeric elements"},
  };
  for (const Case& c : cases) {
    Status s = coll().InsertOne(Json(c.doc)).status();
    EXPECT_EQ(static_cast<int>(s.code()), 16755) << c.doc << " " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr("Can't extract geo keys")) << c.doc;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message)) << c.doc;
  }
  EXPECT_EQ(*coll().CountDocuments(Document()), 0);
  // Valid ones, and documents without a geometry (not in the index).
  for (const char* ok : {R"({"_id": 20, "loc": {"type": "Point", "coordinates": [180, -90]}})",
                         R"({"_id": 21, "loc": [10, 20]})", R"({"_id": 22, "loc": {"x": 1, "y": 2}})",
                         R"({"_id": 23})", R"({"_id": 24, "loc": null})", R"({"_id": 25, "loc": []})",
                         R"({"_id": 26, "loc": {"type": "Polygon", "coordinates":
                             [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]],
                              [[1, 1], [2, 1], [2, 2], [1, 2], [1, 1]]]}})",
                         R"({"_id": 27, "loc": {"type": "GeometryCollection", "geometries": [
                             {"type": "Point", "coordinates": [1, 1]},
                             {"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]]]}]}})"}) {
    EXPECT_TRUE(coll().InsertOne(Json(ok)).ok()) << ok;
  }
  // The hole is not part of the polygon.
  EXPECT_EQ(Ids(R"({"loc": {"$geoIntersects": {"$geometry":
                {"type": "Point", "coordinates": [1.5, 1.5]}}}})"),
            std::set<int64_t>{});
  EXPECT_EQ(Ids(R"({"loc": {"$geoIntersects": {"$geometry":
                {"type": "Point", "coordinates": [3, 3]}}}})"),
            std::set<int64_t>({26}));
}

TEST_F(GeoTest, InvalidQueryGeometriesAreBadValue) {
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "loc": [0, 0]})")).ok());
  for (const char* filter : {
           R"({"loc": {"$geoWithin": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}})",
           R"({"loc": {"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 1]]]}}}})",
           R"({"loc": {"$geoWithin": {"$centerSphere": [[0, 0], -1]}}})",
           R"({"loc": {"$geoWithin": {"$nowhere": 1}}})",
           R"({"loc": {"$geoWithin": 5}})",
           R"({"loc": {"$geoIntersects": {"type": "Point", "coordinates": [0, 0]}}})",
           R"({"loc": {"$geoIntersects": {"$geometry": {"type": "Point", "coordinates": [0, 95]}}}})",
           R"({"loc": {"$geoWithin": {"$box": [[0, 0], [{"$numberDouble": "NaN"}, 1]]}}})",
           R"({"loc": {"$maxDistance": 5}})"}) {
    auto r = Find(filter);
    EXPECT_FALSE(r.ok()) << filter;
    EXPECT_EQ(r.status().code(), ErrorCode::kBadValue) << filter << " " << r.status();
  }
  // The strict-winding CRS of big polygons is refused, saying so.
  auto big = Find(R"({"loc": {"$geoWithin": {"$geometry": {"type": "Polygon",
      "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]],
      "crs": {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}}}}})");
  EXPECT_EQ(big.status().code(), ErrorCode::kNotImplemented);
  EXPECT_THAT(std::string(big.status().message()), HasSubstr("not supported"));
}

// ---- The index kind ----

TEST_F(GeoTest, IndexOptionsAreMongoDBs) {
  auto name = coll().CreateIndex(Json(R"({"loc": "2dsphere", "category": 1})"));
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "loc_2dsphere_category_1");
  auto specs = coll().ListIndexes();
  ASSERT_TRUE(specs.ok());
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[1].Get("2dsphereIndexVersion").Int32(), 3);

  IndexOptions v2;
  v2.sphere_index_version = 2;
  EXPECT_EQ(coll().CreateIndex(Json(R"({"a": "2dsphere"})"), v2).status().code(),
            ErrorCode::kNotImplemented);
  IndexOptions v9;
  v9.sphere_index_version = 9;
  EXPECT_EQ(coll().CreateIndex(Json(R"({"a": "2dsphere"})"), v9).status().code(),
            ErrorCode::kCannotCreateIndex);
  EXPECT_EQ(coll().CreateIndex(Json(R"({"a": 1})"), v9).status().code(),
            ErrorCode::kCannotCreateIndex);
  IndexOptions unique;
  unique.unique = true;
  EXPECT_EQ(coll().CreateIndex(Json(R"({"a": "2dsphere"})"), unique).status().code(),
            ErrorCode::kCannotCreateIndex);
  Status two_d = coll().CreateIndex(Json(R"({"a": "2d"})")).status();
  EXPECT_EQ(two_d.code(), ErrorCode::kNotImplemented);
  EXPECT_THAT(std::string(two_d.message()), HasSubstr("2d indexes are not supported"));

  // The index survives a reopen (its options in the catalog).
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "loc": [1, 1], "category": "a"})")).ok());
  Open();
  EXPECT_EQ(Ids(R"({"loc": {"$geoWithin": {"$centerSphere": [[1, 1], 0.001]}}})"),
            std::set<int64_t>({1}));
  EXPECT_THAT(WinningStage(R"({"loc": {"$geoWithin": {"$centerSphere": [[1, 1], 0.001]}}})"),
              HasSubstr("loc_2dsphere_category_1"));
}

TEST_F(GeoTest, PlansUseTheIndexOnlyForGeoPredicates) {
  ASSERT_TRUE(coll().CreateIndex(Json(R"({"category": 1, "loc": "2dsphere"})")).ok());
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "loc": [1, 1], "category": "a"})")).ok());
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 2, "category": "a"})")).ok());
  // No geo predicate: the index would miss _id 2.
  EXPECT_THAT(WinningStage(R"({"category": "a"})"), HasSubstr("COLLSCAN"));
  EXPECT_EQ(Ids(R"({"category": "a"})"), std::set<int64_t>({1, 2}));
  // A geo predicate: the index, though its first field is unbounded; the
  // FETCH re-checks the geometry.
  const char* within =
      R"({"loc": {"$geoWithin": {"$geometry": {"type": "Polygon",
          "coordinates": [[[0, 0], [3, 0], [3, 3], [0, 3], [0, 0]]]}}}})";
  const std::string plan = WinningStage(within);
  EXPECT_THAT(plan, HasSubstr("stage: 'FETCH'"));
  EXPECT_THAT(plan, HasSubstr("stage: 'IXSCAN'"));
  EXPECT_THAT(plan, HasSubstr("indexName: 'category_1_loc_2dsphere'"));
  EXPECT_THAT(plan, HasSubstr("category: [ '[MinKey, MaxKey]' ]"));
  EXPECT_THAT(plan, HasSubstr("$geoWithin"));
  EXPECT_EQ(Ids(within), std::set<int64_t>({1}));
}

// ---- $near ----

TEST_F(GeoTest, NearNeedsAGeoIndex) {
  ASSERT_TRUE(coll().InsertOne(Json(R"({"_id": 1, "loc": [1, 1]})")).ok());
  auto r = Find(R"({"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [0, 0]}}}})");
  EXPECT_EQ(r.status().code(), ErrorCode::kNoQueryExecutionPlans);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("unable to find index for $geoNear query"));
  auto nested = Find(R"({"$or": [{"loc": {"$near": [0, 0]}}, {"a": 1}]})");
  EXPECT_EQ(nested.status().code(), ErrorCode::kBadValue);
}

TEST_F(GeoTest, NearReturnsNearestFirstWithinTheDistances) {
  ASSERT_TRUE(coll().CreateIndex(Json(R"({"loc": "2dsphere"})")).ok());
  // Points along the equator, 1 degree apart (111.3 km at MongoDB's radius).
  for (int i = 10; i >= -10; --i) {
    ASSERT_TRUE(coll()
                    .InsertOne(Json(R"({"_id": )" + std::to_string(i) +
                                    R"(, "loc": {"type": "Point", "coordinates": [)" +
                                    std::to_string(i * 1.0) + ", 0]}}"))
                    .ok());
  }
  auto docs = Find(R"({"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [0.2, 0]},
                     "$minDistance": 100000, "$maxDistance": 350000}}})");
  ASSERT_TRUE(docs.ok()) << docs.status();
  std::vector<int64_t> ids;
  for (const Document& d : *docs) ids.push_back(d.Get("_id").Int32());
  // 0.2 degrees is 22 km from _id 0 (under the minimum), then 1 (89 km, also
  // under), -1 (134 km), 2 (200 km), -2 (245 km), 3 (311 km); 4 and -3 past.
  EXPECT_EQ(ids, (std::vector<int64_t>{-1, 2, -2, 3}));
  // Legacy pairs measure in radians ($nearSphere), and limit stops early.
  FindOptions limit;
  limit.limit = 3;
  docs = Find(R"({"loc": {"$nearSphere": [-4.4, 0]}})", limit);
  ASSERT_TRUE(docs.ok()) << docs.status();
  ids.clear();
  for (const Document& d : *docs) ids.push_back(d.Get("_id").Int32());
  EXPECT_EQ(ids, (std::vector<int64_t>{-4, -5, -3}));

  auto explain = coll().ExplainFind(Json(R"({"loc": {"$near": [0, 0]}})"), {},
                                    ExplainVerbosity::kExecutionStats);
  ASSERT_TRUE(explain.ok()) << explain.status();
  const std::string plan =
      ToJson(explain->GetPath("queryPlanner.winningPlan").Document(), JsonFormat::kShell);
  EXPECT_THAT(plan, HasSubstr("stage: 'GEO_NEAR_2DSPHERE'"));
  EXPECT_THAT(plan, HasSubstr("indexName: 'loc_2dsphere'"));
  EXPECT_EQ(explain->GetPath("executionStats.nReturned").NumberAsDouble(), 21);
  const std::string stats =
      ToJson(explain->GetPath("executionStats.executionStages").Document(), JsonFormat::kShell);
  EXPECT_THAT(stats, HasSubstr("inputStages"));
  EXPECT_THAT(stats, HasSubstr("stage: 'IXSCAN'"));
}

// ---- The property test ----

struct LngLat {
  double lng, lat;
};

// A ring of `n` vertices `radius` degrees around (lng, lat), longitudes
// wrapped into [-180, 180] (so rings near 180 cross the antimeridian).
std::vector<LngLat> Ring(double lng, double lat, double radius, int n, std::mt19937* rng) {
  std::vector<LngLat> out;
  std::uniform_real_distribution<double> jitter(0.6, 1.0);
  for (int i = 0; i < n; ++i) {
    const double a = 2 * M_PI * i / n;
    const double r = radius * jitter(*rng);
    double x = lng + r * std::cos(a) / std::max(0.2, std::cos(lat * M_PI / 180));
    double y = std::max(-89.0, std::min(89.0, lat + r * std::sin(a)));
    if (x > 180) x -= 360;
    if (x < -180) x += 360;
    out.push_back({x, y});
  }
  return out;
}

// A ring around a pole: every longitude at one latitude.
std::vector<LngLat> PolarRing(double lat, int n) {
  std::vector<LngLat> out;
  for (int i = 0; i < n; ++i) out.push_back({-180 + 360.0 * i / n + 0.5, lat});
  return out;
}

std::string RingJson(const std::vector<LngLat>& ring) {
  std::string s = "[[";
  for (const LngLat& p : ring) s += "[" + Fmt(p.lng) + ", " + Fmt(p.lat) + "], ";
  s += "[" + Fmt(ring[0].lng) + ", " + Fmt(ring[0].lat) + "]]]";
  return s;
}

S2Point ToPoint(const LngLat& p) { return S2LatLng::FromDegrees(p.lat, p.lng).ToPoint(); }

// The polygon as S2 reads it (the smaller of the two regions).
std::unique_ptr<S2Polygon> S2Of(const std::vector<LngLat>& ring) {
  std::vector<S2Point> v;
  for (const LngLat& p : ring) v.push_back(ToPoint(p));
  auto loop = std::make_unique<S2Loop>(v);
  loop->Normalize();
  return std::make_unique<S2Polygon>(std::move(loop));
}

TEST_F(GeoTest, IndexPlansEqualCollectionScansAndS2) {
  std::mt19937 rng(40);
  std::uniform_real_distribution<double> lng(-180, 180), lat(-90, 90);
  std::uniform_real_distribution<double> unit(0, 1);
  struct Doc {
    int id;
    LngLat point;                     // a point document, or
    std::vector<LngLat> ring;         // a polygon document
  };
  std::vector<Doc> docs;
  auto add = [&](Doc d) {
    std::string loc;
    if (d.ring.empty()) {
      loc = unit(rng) < 0.5 ? "[" + Fmt(d.point.lng) + ", " + Fmt(d.point.lat) + "]"
                            : R"({"type": "Point", "coordinates": [)" + Fmt(d.point.lng) + ", " +
                                  Fmt(d.point.lat) + "]}";
    } else {
      loc = R"({"type": "Polygon", "coordinates": )" + RingJson(d.ring) + "}";
    }
    ASSERT_TRUE(coll()
                    .InsertOne(Json(R"({"_id": )" + std::to_string(d.id) + R"(, "loc": )" + loc +
                                    "}"))
                    .ok())
        << loc;
    docs.push_back(std::move(d));
  };
  int id = 0;
  // Points everywhere, and clustered near the antimeridian and the poles.
  for (int i = 0; i < 300; ++i) add(Doc{id++, {lng(rng), lat(rng)}, {}});
  for (int i = 0; i < 100; ++i) {
    double x = 170 + 20 * unit(rng);
    add(Doc{id++, {x > 180 ? x - 360 : x, -30 + 60 * unit(rng)}, {}});
  }
  for (int i = 0; i < 100; ++i) add(Doc{id++, {lng(rng), (i % 2 ? 1 : -1) * (75 + 15 * unit(rng))}, {}});
  // Small polygons, some across the antimeridian.
  for (int i = 0; i < 60; ++i) {
    const double cx = i % 3 == 0 ? 179.5 : lng(rng);
    add(Doc{id++, {}, Ring(cx, -60 + 120 * unit(rng), 0.5 + 3 * unit(rng), 5, &rng)});
  }
  ASSERT_TRUE(coll().CreateIndex(Json(R"({"loc": "2dsphere"})")).ok());

  FindOptions natural;
  natural.hint = Json(R"({"$natural": 1})");
  // Query regions: rings around random centres, across the antimeridian,
  // around each pole.
  std::vector<std::vector<LngLat>> queries;
  for (int i = 0; i < 12; ++i) queries.push_back(Ring(lng(rng), -60 + 120 * unit(rng), 2 + 25 * unit(rng), 7, &rng));
  for (int i = 0; i < 4; ++i) queries.push_back(Ring(180, -40 + 80 * unit(rng), 5 + 15 * unit(rng), 6, &rng));
  queries.push_back(PolarRing(70, 12));
  queries.push_back(PolarRing(-75, 9));
  int nonempty = 0;
  for (const auto& q : queries) {
    const auto region = S2Of(q);
    std::set<int64_t> within, intersects;
    for (const Doc& d : docs) {
      if (d.ring.empty()) {
        if (region->Contains(ToPoint(d.point))) {
          within.insert(d.id);
          intersects.insert(d.id);
        }
      } else {
        const auto poly = S2Of(d.ring);
        if (region->Contains(*poly)) within.insert(d.id);
        if (region->Intersects(*poly)) intersects.insert(d.id);
      }
    }
    nonempty += within.empty() ? 0 : 1;
    const std::string geometry = R"({"type": "Polygon", "coordinates": )" + RingJson(q) + "}";
    for (const auto& [op, want] :
         {std::pair<std::string, std::set<int64_t>>{"$geoWithin", within},
          std::pair<std::string, std::set<int64_t>>{"$geoIntersects", intersects}}) {
      const std::string filter = R"({"loc": {")" + op + R"(": {"$geometry": )" + geometry + "}}}";
      EXPECT_THAT(WinningStage(filter), HasSubstr("IXSCAN")) << filter;
      EXPECT_EQ(Ids(filter), want) << filter;
      EXPECT_EQ(Ids(filter, natural), want) << filter;
    }
  }
  EXPECT_GE(nonempty, 8);  // the regions do hold points

  // $centerSphere and $nearSphere against S2's distances.
  for (int i = 0; i < 10; ++i) {
    const LngLat c{i < 3 ? 179.9 : lng(rng), i == 3 ? 89.0 : -80 + 160 * unit(rng)};
    const double radius = 0.02 + 0.3 * unit(rng);
    const double min = radius * unit(rng) * 0.5;
    std::set<int64_t> want;
    std::vector<std::pair<double, int64_t>> by_distance;
    std::set<int64_t> polygons;  // $centerSphere is compared over points alone
    std::vector<double> distance(docs.size());
    for (const Doc& d : docs) {
      const double dist = d.ring.empty() ? S1Angle(ToPoint(c), ToPoint(d.point)).radians()
                                         : S2Of(d.ring)->GetDistance(ToPoint(c)).radians();
      distance[d.id] = dist;
      if (!d.ring.empty()) polygons.insert(d.id);
      if (dist <= radius && d.ring.empty()) want.insert(d.id);
      if (dist >= min && dist <= radius) by_distance.emplace_back(dist, d.id);
    }
    auto points_of = [&](std::set<int64_t> ids) {
      for (int64_t p : polygons) ids.erase(p);
      return ids;
    };
    const std::string center = "[" + Fmt(c.lng) + ", " + Fmt(c.lat) + "]";
    const std::string cap =
        R"({"loc": {"$geoWithin": {"$centerSphere": [)" + center + ", " + Fmt(radius) + "]}}}";
    EXPECT_EQ(points_of(Ids(cap)), want) << cap;
    EXPECT_EQ(points_of(Ids(cap, natural)), want) << cap;
    std::sort(by_distance.begin(), by_distance.end());
    const std::string near = R"({"loc": {"$nearSphere": )" + center + R"(, "$minDistance": )" +
                             Fmt(min) + R"(, "$maxDistance": )" + Fmt(radius) + "}}";
    auto got = Find(near);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), by_distance.size()) << near;
    for (size_t k = 0; k < got->size(); ++k) {
      int64_t gid = 0;
      ASSERT_TRUE((*got)[k].Get("_id").ExactInt64(&gid));
      // Equal distances may come in either order; the distance must match.
      EXPECT_NEAR(distance[gid], by_distance[k].first, 1e-12)
          << near << " at " << k;
    }
  }
}

// ---- The commands ----

TEST_F(GeoTest, CommandsCreateFindAndAggregate) {
  auto run = [&](const char* command) {
    return ToJson(client_->RunCommand("test", Json(command)), JsonFormat::kRelaxed);
  };
  EXPECT_THAT(run(R"({"createIndexes": "places", "indexes": [{"key": {"loc": "2dsphere"},
                  "name": "loc_2dsphere", "2dsphereIndexVersion": 3}]})"),
              HasSubstr(R"("ok": 1.0)"));
  EXPECT_THAT(run(R"({"createIndexes": "places", "indexes": [{"key": {"other": "2dsphere"},
                  "name": "o", "2dsphereIndexVersion": 1}]})"),
              HasSubstr(R"("code": 238)"));
  EXPECT_THAT(run(R"({"listIndexes": "places"})"), HasSubstr(R"("2dsphereIndexVersion": 3)"));
  EXPECT_THAT(run(R"({"insert": "places", "documents": [
                  {"_id": 1, "loc": {"type": "Point", "coordinates": [2, 2]}},
                  {"_id": 2, "loc": {"type": "Point", "coordinates": [1, 1]}},
                  {"_id": 3, "loc": {"type": "Point", "coordinates": [400, 1]}}]})"),
              HasSubstr(R"("code": 16755)"));
  EXPECT_THAT(run(R"({"find": "places", "filter": {"loc": {"$near": {"$geometry":
                  {"type": "Point", "coordinates": [0, 0]}}}}})"),
              HasSubstr(R"("firstBatch": [{"_id": 2, )"));
  EXPECT_THAT(run(R"({"aggregate": "places", "cursor": {}, "pipeline": [{"$geoNear": {
                  "near": [0, 0], "distanceField": "d", "key": "loc", "distanceMultiplier": 0}}]})"),
              HasSubstr(R"("firstBatch": [{"_id": 2, "loc": {"type": "Point", "coordinates": [1, 1]}, "d": 0.0})"));
  EXPECT_THAT(run(R"({"aggregate": "places", "cursor": {}, "pipeline": [{"$geoNear": {
                  "near": [0, 0], "distanceField": "d"}}]})"),
              HasSubstr(R"("code": 238)"));
  EXPECT_THAT(run(R"({"aggregate": "places", "cursor": {}, "pipeline": [{"$geoNear": {
                  "near": [0, 0], "distanceField": "d", "key": "loc", "bogus": 1}}]})"),
              HasSubstr(R"("code": 40415)"));
  EXPECT_THAT(run(R"({"aggregate": "places", "cursor": {}, "pipeline": [{"$match": {}},
                  {"$geoNear": {"near": [0, 0], "distanceField": "d", "key": "loc"}}]})"),
              HasSubstr(R"("code": 40602)"));
  EXPECT_THAT(run(R"({"explain": {"find": "places", "filter": {"loc": {"$nearSphere": [0, 0]}}}})"),
              HasSubstr("GEO_NEAR_2DSPHERE"));
}

// ---- The manual's examples ----

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(GeoTest, ManualExamplesGiveTheManualsOutput) {
  const std::string path = test::TestsSourceDir() + "/data/manual_examples_geo.json";
  StatusOr<Document> corpus = FromJson("{\"cases\": " + ReadFile(path) + "}");
  ASSERT_TRUE(corpus.ok()) << path << ": " << corpus.status();
  std::set<std::string> covered;
  int cases = 0;
  for (const Element& c : corpus->Get("cases").Array()) {
    DocumentView kase = c.Document();
    const std::string name(kase.Get("name").String());
    ++cases;
    Database d = client_->GetDatabase("manual");
    ASSERT_TRUE(d.Drop().ok());
    Collection places = d.GetCollection("places");
    for (const Element& doc : kase.Get("docs").Array()) {
      ASSERT_TRUE(places.InsertOne(doc.Document()).ok()) << name;
    }
    if (Element indexes = kase.Get("indexes"); indexes.ok()) {
      for (const Element& key : indexes.Array()) {
        ASSERT_TRUE(places.CreateIndex(key.Document()).ok()) << name;
      }
    }
    StatusOr<Cursor> cursor = Status(ErrorCode::kBadValue, "no query");
    if (Element filter = kase.Get("filter"); filter.ok()) {
      FindOptions options;
      if (Element sort = kase.Get("sort"); sort.ok()) {
        options.sort = Document::AdoptValidated(std::string(sort.Document().bytes()));
      }
      cursor = places.Find(filter.Document(), options);
    } else {
      cursor = places.Aggregate(kase.Get("pipeline").Array());
    }
    ASSERT_TRUE(cursor.ok()) << name << ": " << cursor.status();
    auto got = cursor->ToVector();
    ASSERT_TRUE(got.ok()) << name << ": " << got.status();
    std::vector<std::string> got_json, want_json;
    for (const Document& g : *got) got_json.push_back(ToJson(g, JsonFormat::kRelaxed));
    for (const Element& w : kase.Get("expect").Array()) {
      want_json.push_back(ToJson(w.Document(), JsonFormat::kRelaxed));
    }
    EXPECT_EQ(got_json, want_json) << name;
    for (const Element& cov : kase.Get("covers").Array()) covered.insert(std::string(cov.String()));
  }
  for (const char* op : {"$geoWithin", "$geoIntersects", "$near", "$nearSphere", "$centerSphere",
                         "$box", "$polygon", "$geometry", "$minDistance", "$maxDistance"}) {
    EXPECT_TRUE(covered.count(op)) << op << " is covered by no manual example";
  }
  EXPECT_GE(cases, 8);
}

}  // namespace
}  // namespace rockdoc

// The 2dsphere index kind ({loc: "2dsphere"}, compound with ordered fields
// before or after it), MongoDB's 2dsphereIndexVersion 3 over S2
// (query/geometry.h):
//   * the geo field's keys are the S2 cell ids (NumberLong, the id's 64
//     bits as a signed integer, as MongoDB's version 3 stores them) of the
//     geometry's covering, between the coarsest (100 km) and finest
//     (500 m) indexed levels, at most 50 cells per shape; a document with
//     no geometry there (missing, null, an empty array) has no entry, as
//     MongoDB's version 2 and 3 (sparse on the geo field whatever the
//     `sparse` option says); an invalid one is refused, 16755
//     "Can't extract geo keys: <document>  <reason>";
//   * the other fields are keyed as a btree's, one value each (an array
//     there is refused: NotImplemented);
//   * $geoWithin and $geoIntersects bound the geo field by the cell-id
//     ranges of the query region's covering and the cells above them
//     (inexact: the FETCH tests the geometry with S2); a query with no geo
//     predicate on the geo field cannot use the index (it misses documents
//     without a geometry);
//   * $near / $nearSphere scan it by growing caps around the point, whose
//     coverings this kind gives (NearIntervals);
//   * no sort, no covered plans, never unique, no TTL.
#include <algorithm>

#include "index/access_method.h"
#include "keystring/keystring.h"
#include "query/geo_match_expression.h"
#include "query/geometry.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

constexpr std::string_view k2dsphere = "2dsphere";

Status CannotCreateIndex(std::string message) {
  return Status(ErrorCode::kCannotCreateIndex, std::move(message));
}

size_t GeoField(const IndexDescriptor& index) {
  size_t i = 0;
  for (Element e : index.key_pattern()) {
    if (e.IsString()) return i;
    ++i;
  }
  return 0;
}

Value CellValue(uint64_t cell) {
  BsonBuilder b;
  b.AppendInt64("", static_cast<int64_t>(cell));
  Document d = std::move(b).Build();
  return Value::FromElement(d.Get(""));
}

// The geometries a document holds at the geo field's path: each value the
// path reaches (through arrays of documents on the way) is a GeoJSON
// object, a legacy pair, or an array of those.
Status GeometriesAt(DocumentView doc, const FieldPath& path, std::vector<Geometry>* out) {
  Status error = Status::OK();
  auto add = [&](const Element& v) {
    Geometry g;
    Status s = ParseStoredGeometry(v, &g);
    if (!s.ok()) {
      error = s;
      return;
    }
    out->push_back(std::move(g));
  };
  ForEachPathValue(doc, path, LeafArrayMode::kNoTraversal, [&](const Element& v, int64_t) {
    if (!error.ok()) return true;
    if (!v.ok() || v.type() == BsonType::kNull || v.type() == BsonType::kUndefined) return false;
    if (v.type() == BsonType::kArray) {
      Geometry point;
      if (ParseStoredGeometry(v, &point).ok()) {
        out->push_back(std::move(point));  // a legacy [lng, lat]
        return false;
      }
      bool numeric = false;
      for (const Element& item : v.Array()) numeric = numeric || item.IsNumber();
      if (numeric) {
        add(v);  // a bad legacy pair: its error
        return false;
      }
      for (const Element& item : v.Array()) add(item);
      return false;
    }
    add(v);
    return false;
  });
  return error;
}

// A non-geo field's value (missing: null); arrays are not indexed here.
Status ScalarAt(DocumentView doc, const FieldPath& path, Element* out) {
  *out = Element();
  DocumentView at = doc;
  for (size_t part = 0; part < path.size(); ++part) {
    Element e = at.Get(path.part(part));
    if (!e.ok()) return Status::OK();
    if (e.type() == BsonType::kArray) {
      return Status(ErrorCode::kNotImplemented,
                    "rockdoc's 2dsphere indexes do not index arrays in their other fields; "
                    "found one at '" +
                        path.dotted() + "'");
    }
    if (part + 1 == path.size()) {
      *out = e;
      return Status::OK();
    }
    if (e.type() != BsonType::kDocument) return Status::OK();
    at = e.Document();
  }
  return Status::OK();
}

// The cell-id intervals that hold every indexed cell meeting `cells`:
// each cell's descendants, and its ancestors down to the coarsest level.
std::vector<Interval> CellIntervals(const std::vector<uint64_t>& cells,
                                    const CoveringParams& params) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (uint64_t c : cells) {
    ranges.emplace_back(static_cast<int64_t>(CellRangeMin(c)),
                        static_cast<int64_t>(CellRangeMax(c)));
    for (int level = CellLevel(c) - 1; level >= params.coarsest_level; --level) {
      const auto parent = static_cast<int64_t>(CellParent(c, level));
      ranges.emplace_back(parent, parent);
    }
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<Interval> out;
  for (size_t i = 0; i < ranges.size();) {
    int64_t lo = ranges[i].first, hi = ranges[i].second;
    for (++i; i < ranges.size() && ranges[i].first <= hi; ++i) hi = std::max(hi, ranges[i].second);
    Interval iv;
    iv.start = CellValue(static_cast<uint64_t>(lo));
    iv.end = CellValue(static_cast<uint64_t>(hi));
    out.push_back(std::move(iv));
  }
  return out;
}

// A query region's covering may use cells coarser than any indexed one
// (a cell's id range holds all its descendants): a cap over half the globe
// is then tens of cells, not the tens of thousands of level-6 cells the
// indexed levels would need.
CoveringParams QueryParams() {
  CoveringParams p = DefaultCoveringParams();
  p.coarsest_level = 0;
  return p;
}

class Geo2dsphere final : public IndexAccessMethod {
 public:
  std::string_view kind() const override { return k2dsphere; }

  Status ValidateKeyField(const Element& e) const override {
    if (e.IsString()) return Status::OK();
    return BtreeAccessMethod().ValidateKeyField(e);
  }

  Status ValidateOptions(const IndexDescriptor& index, const IndexOptions& options) const override {
    int geo = 0;
    for (Element e : index.key_pattern()) geo += e.IsString() ? 1 : 0;
    if (geo > 1) {
      return Status(ErrorCode::kNotImplemented,
                    "rockdoc's 2dsphere indexes take one 2dsphere field, found " +
                        std::to_string(geo) + " in " +
                        ToJson(index.key_pattern(), JsonFormat::kShell));
    }
    if (options.sphere_index_version && *options.sphere_index_version != 3) {
      if (*options.sphere_index_version == 1 || *options.sphere_index_version == 2) {
        return Status(ErrorCode::kNotImplemented,
                      "2dsphereIndexVersion " + std::to_string(*options.sphere_index_version) +
                          " is not supported by rockdoc; omit it or use 3");
      }
      return CannotCreateIndex("unsupported geo index version { 2dsphereIndexVersion : " +
                               std::to_string(*options.sphere_index_version) +
                               " }, only support versions: [1,2,3]");
    }
    ROCKDOC_RETURN_IF_ERROR(RefuseTextOptions(options));
    if (options.unique) {
      return CannotCreateIndex("Index type '2dsphere' does not support unique indexes.");
    }
    if (options.expire_after_seconds) {
      return CannotCreateIndex("Index type '2dsphere' does not support TTL indexes.");
    }
    if (options.collation) {
      return Status(ErrorCode::kNotImplemented,
                    "collations on 2dsphere indexes are not supported by rockdoc");
    }
    return Status::OK();
  }

  void AppendOptions(const IndexDescriptor& index, IndexOptionsForm form,
                     BsonBuilder* out) const override {
    BtreeAccessMethod().AppendOptions(index, form, out);
    out->AppendInt32("2dsphereIndexVersion", 3);
  }
  StatusOr<IndexOptions> OptionsFromCatalog(DocumentView entry) const override {
    Element version = entry.Get("2dsphereIndexVersion");
    if (version.type() != BsonType::kInt32 || version.Int32() != 3) {
      return DamagedIndexEntry("missing or mistyped 2dsphereIndexVersion in " +
                               ToJson(entry, JsonFormat::kShell));
    }
    ROCKDOC_ASSIGN_OR_RETURN(IndexOptions options, BtreeAccessMethod().OptionsFromCatalog(entry));
    options.sphere_index_version = 3;
    return options;
  }

  Status GetKeys(const IndexDescriptor& index, DocumentView doc, std::vector<IndexKey>* keys,
                 MultikeyPaths* multikey_paths) const override {
    if (!BeginIndexKeys(index, doc, keys, multikey_paths)) return Status::OK();
    const size_t geo = GeoField(index);
    std::vector<Geometry> geometries;
    Status s = GeometriesAt(doc, index.field_paths()[geo], &geometries);
    if (!s.ok()) {
      return Status(static_cast<ErrorCode>(16755), "Can't extract geo keys: " +
                                                        ToJson(doc, JsonFormat::kShell) + "  " +
                                                        std::string(s.message()));
    }
    std::vector<uint64_t> cells;
    const CoveringParams params = DefaultCoveringParams();
    for (const Geometry& g : geometries) {
      std::vector<uint64_t> c = CoverGeometry(g, params);
      cells.insert(cells.end(), c.begin(), c.end());
    }
    std::sort(cells.begin(), cells.end(), [](uint64_t a, uint64_t b) {
      return static_cast<int64_t>(a) < static_cast<int64_t>(b);
    });
    cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
    if (cells.empty()) return Status::OK();  // no geometry: not in the index
    std::vector<Element> others(index.num_fields());
    for (size_t i = 0; i < index.num_fields(); ++i) {
      if (i == geo) continue;
      ROCKDOC_RETURN_IF_ERROR(ScalarAt(doc, index.field_paths()[i], &others[i]));
    }
    for (uint64_t cell : cells) {
      keystring::Builder b(index.descending_bits());
      for (size_t i = 0; i < index.num_fields(); ++i) {
        if (i == geo) {
          b.Append(CellValue(cell).element());
        } else {
          AppendKeyValue(&b, others[i], nullptr);
        }
      }
      keys->push_back(IndexKey{b.bytes(), b.type_bits()});
    }
    std::sort(keys->begin(), keys->end(),
              [](const IndexKey& a, const IndexKey& b) { return a.bytes < b.bytes; });
    // Several cells are several entries for one document: a scan must
    // deduplicate, as for arrays.
    if (keys->size() > 1 && multikey_paths != nullptr) {
      (*multikey_paths)[geo].insert(index.field_paths()[geo].size() - 1);
    }
    return Status::OK();
  }

  IndexEntryFormat EntryFormat(const IndexDescriptor&) const override {
    return IndexEntryFormat::kStandard;
  }

  Status DecodeKey(const IndexDescriptor& index, const IndexEntryView& entry,
                   BsonBuilder* out) const override {
    return DecodeIndexKey(index, entry, out);  // the geo field decodes as its cell id
  }

  bool IntervalsFor(const IndexDescriptor& index, size_t field, const MatchExpression& leaf,
                    std::vector<Interval>* out, BoundsTightness* tightness) const override {
    if (field != GeoField(index)) {
      if (leaf.type() == MatchType::kGeoWithin || leaf.type() == MatchType::kGeoIntersects ||
          leaf.type() == MatchType::kGeoNear) {
        return false;
      }
      return BtreeAccessMethod().IntervalsFor(index, field, leaf, out, tightness);
    }
    const CoveringParams params = DefaultCoveringParams();
    std::vector<uint64_t> cells;
    if (leaf.type() == MatchType::kGeoWithin) {
      cells = CoverRegion(static_cast<const GeoMatchExpression&>(leaf).region(), QueryParams());
    } else if (leaf.type() == MatchType::kGeoIntersects) {
      cells =
          CoverGeometry(static_cast<const GeoMatchExpression&>(leaf).geometry(), QueryParams());
    } else {
      return false;
    }
    *out = CellIntervals(cells, params);
    if (tightness != nullptr) *tightness = BoundsTightness::kInexactFetch;
    return true;
  }

  IndexEligibility Eligibility(const IndexDescriptor& index,
                               const std::vector<const MatchExpression*>& preds) const override {
    const std::string& path = index.field_names()[GeoField(index)];
    for (const MatchExpression* p : preds) {
      if ((p->type() == MatchType::kGeoWithin || p->type() == MatchType::kGeoIntersects ||
           p->type() == MatchType::kGeoNear) &&
          p->path() == path) {
        return IndexEligibility::kAlways;
      }
    }
    return IndexEligibility::kNever;
  }

  bool NearIntervals(const IndexDescriptor& index, size_t field, const GeoPoint& center,
                     double radius, std::vector<Interval>* out) const override {
    if (field != GeoField(index)) return false;
    const CoveringParams params = DefaultCoveringParams();
    *out = CellIntervals(CoverCap(center, radius, QueryParams()), params);
    return true;
  }
  std::optional<size_t> NearField(const IndexDescriptor& index) const override {
    return GeoField(index);
  }

  bool KeysAreOrdered() const override { return false; }
  bool KeysHoldValues() const override { return false; }

  void AppendExplain(const IndexDescriptor& index, BsonBuilder* out) const override {
    BtreeAccessMethod().AppendExplain(index, out);
  }
};

}  // namespace

const IndexAccessMethod& Geo2dsphereAccessMethod() {
  static const Geo2dsphere* geo = new Geo2dsphere();
  return *geo;
}

}  // namespace rockdoc::internal

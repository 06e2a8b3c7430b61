#include "planner/query_planner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>

#include "exec/basic_stages.h"
#include "exec/index_stages.h"
#include "exec/sort_stage.h"
#include "exec/geo_near_stage.h"
#include "exec/text_stages.h"
#include "index/fts.h"
#include "index/text_index.h"
#include "index/access_method.h"
#include "query/geo_match_expression.h"
#include "index/key_generator.h"
#include "keystring/keystring.h"
#include "query/implication.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "store/write_ops.h"

namespace rockdoc::internal {

namespace {

using Access = QuerySolution::Access;

// ---- Predicates ----

// Leaves a covered plan can evaluate on index keys: predicates that never
// hinge on a field being missing (an index stores missing as null).
bool CoverableFilter(const MatchExpression* e, std::vector<std::string>* paths) {
  switch (e->type()) {
    case MatchType::kAnd:
    case MatchType::kOr:
      for (size_t i = 0; i < e->num_children(); ++i)
        if (!CoverableFilter(e->child(i), paths)) return false;
      return true;
    default:
      if (!CannotMatchMissing(e)) return false;
      if (e->operand().ok() &&
          (e->operand().type() == BsonType::kArray || e->operand().type() == BsonType::kDocument)) {
        return false;
      }
      paths->push_back(e->path());
      return true;
  }
}

bool ShareMultikeyPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const auto& x : a)
    for (const auto& y : b)
      if (x == y) return true;
  return false;
}

// A conjunct whose intervals went into the bounds of index field `field`,
// and whether those bounds answer it exactly there (it need not be
// evaluated again when the scan enforces that field).
struct UsedPredicate {
  const MatchExpression* pred;
  size_t field;
  bool exact;
};

bool HasPositionalPart(const FieldPath& path) {
  for (size_t i = 0; i < path.size(); ++i)
    if (path.part_is_index(i)) return true;
  return false;
}

// Intervals for index field `field` (path `path`) from the conjuncts that
// test it. Without intersection (a multikey path), the first predicate
// that yields bounds is used alone: bounds must stay a superset of the
// matching keys. On a path with a numeric component ("a.0") the matcher
// also reads the component as a field name of the array's documents, where
// it is missing: only predicates that cannot match a missing value give
// bounds there, and none exactly.
// Whether an index of collation `index_collator` may give bounds for `p`
// under the query's collation: the same collation, or a predicate whose
// answer does not depend on it (no string in its operand; a regex never
// uses the collation), as MongoDB's planner decides.
bool CollationAllowsBounds(const Collator* index_collator, const Collator* query_collator,
                           const MatchExpression& p) {
  if (Collator::Same(index_collator, query_collator)) return true;
  if (p.is_comparison()) return !IsCollatable(p.operand());
  if (p.type() == MatchType::kIn) {
    for (const Element& e : static_cast<const InMatchExpression&>(p).equalities()) {
      if (IsCollatable(e)) return false;
    }
  }
  return true;
}

// `index` is null for the records' own _id order (a btree, simple
// collation). `query_collator`: the query's collation.
OrderedIntervalList FieldBounds(const IndexDescriptor* index, const FieldPath& path, size_t field,
                                const std::vector<const MatchExpression*>& preds,
                                bool allow_intersect, bool* bounded,
                                std::vector<UsedPredicate>* used,
                                const Collator* query_collator) {
  OrderedIntervalList list;
  list.field = path.dotted();
  *bounded = false;
  const bool positional = HasPositionalPart(path);
  for (const MatchExpression* p : preds) {
    if (p->is_logical() || p->path() != path.dotted()) continue;
    if (positional && !CannotMatchMissing(p)) continue;
    if (!CollationAllowsBounds(index != nullptr ? index->collator() : nullptr, query_collator, *p)) {
      continue;
    }
    std::vector<Interval> iv;
    BoundsTightness tightness;
    const bool has_bounds =
        index != nullptr ? index->access_method().IntervalsFor(*index, field, *p, &iv, &tightness)
                         : IntervalsForLeaf(*p, &iv, &tightness);
    if (!has_bounds) continue;
    if (used != nullptr) {
      used->push_back(UsedPredicate{p, field, tightness == BoundsTightness::kExact && !positional});
    }
    if (!*bounded) {
      list.intervals = std::move(iv);
      *bounded = true;
      if (!allow_intersect) break;
    } else {
      list.intervals = IntersectIntervals(list.intervals, iv);
    }
  }
  if (!*bounded) list.intervals = {Interval::All()};
  return list;
}

IndexBounds BoundsForIndex(const IndexDescriptor& index,
                           const std::vector<const MatchExpression*>& preds, int* bounded_fields,
                           std::vector<UsedPredicate>* used, const Collator* query_collator) {
  IndexBounds bounds;
  *bounded_fields = 0;
  std::vector<std::vector<std::string>> used_prefixes;
  for (size_t i = 0; i < index.num_fields(); ++i) {
    std::vector<std::string> prefixes = index.MultikeyPrefixes(i);
    bool usable = true;
    for (const auto& prior : used_prefixes)
      if (ShareMultikeyPrefix(prior, prefixes)) usable = false;
    bool bounded = false;
    OrderedIntervalList list;
    if (usable) {
      list =
          FieldBounds(&index, index.field_paths()[i], i, preds, prefixes.empty(), &bounded, used,
                      query_collator);
    } else {
      list.field = index.field_names()[i];
      list.intervals = {Interval::All()};
    }
    if (bounded) {
      used_prefixes.push_back(prefixes);
      if (i == static_cast<size_t>(*bounded_fields)) ++*bounded_fields;
    }
    bounds.fields.push_back(std::move(list));
  }
  return bounds;
}

// The conjuncts a scan with `bounds` leaves to the filter: all but those
// answered exactly by a field the scan's key ranges enforce.
std::vector<const MatchExpression*> ResidualConjuncts(
    const std::vector<const MatchExpression*>& preds, const std::vector<UsedPredicate>& used,
    const IndexBounds& bounds) {
  const size_t enforced = EnforcedFieldCount(bounds);
  std::vector<const MatchExpression*> out;
  for (const MatchExpression* p : preds) {
    bool answered = false;
    for (const UsedPredicate& u : used)
      if (u.pred == p && u.exact && u.field < enforced) answered = true;
    if (!answered) out.push_back(p);
  }
  return out;
}

// Whether scanning `index` with `bounds` returns documents in `sort` order,
// and in which direction.
bool IndexProvidesSort(const IndexDescriptor& index, const IndexBounds& bounds,
                       const SortPattern& sort, bool* forward) {
  *forward = true;
  if (sort.empty()) return true;
  if (!index.access_method().KeysAreOrdered()) return false;
  // Keys in another collation's order do not give this sort's order.
  if (!Collator::Same(index.collator(), sort.collator())) return false;
  size_t points = 0;
  while (points < bounds.fields.size() && bounds.fields[points].IsSinglePoint()) ++points;
  for (size_t start = 0; start <= points; ++start) {
    if (start + sort.size() > index.num_fields()) break;
    bool ok = true;
    int direction = 0;  // +1 forward, -1 backward
    for (size_t k = 0; k < sort.size() && ok; ++k) {
      size_t f = start + k;
      if (index.field_names()[f] != sort.parts()[k].path.dotted() ||
          !index.MultikeyPrefixes(f).empty()) {
        ok = false;
        break;
      }
      int d = (sort.parts()[k].ascending != index.descending(f)) ? 1 : -1;
      if (direction == 0) direction = d;
      if (d != direction) ok = false;
    }
    if (ok) {
      *forward = direction >= 0;
      return true;
    }
  }
  return false;
}

// Whether `preds` imply the index's partial filter (query/implication.h).
bool ImpliesPartialFilter(const IndexDescriptor& index,
                          const std::vector<const MatchExpression*>& preds) {
  return ConjunctsImply(preds, *index.partial_filter());
}

bool SparseUsable(const IndexDescriptor& index, const std::vector<const MatchExpression*>& preds) {
  for (const MatchExpression* q : preds) {
    if (q->is_logical()) continue;
    for (const std::string& f : index.field_names())
      if (q->path() == f && CannotMatchMissing(q)) return true;
  }
  return false;
}

bool IsCovered(const CanonicalQuery& cq, const IndexDescriptor& index) {
  // A count needs no output fields at all.
  const bool needs_fields = !(cq.count_only && !cq.projection);
  if (needs_fields &&
      (!cq.projection || !cq.projection->inclusion || cq.projection->coverable_fields.empty())) {
    return false;
  }
  if (!index.access_method().KeysHoldValues()) return false;
  // A collated index holds sort keys, not the strings (MongoDB FETCHes too).
  if (index.collator() != nullptr) return false;
  if (index.is_multikey() || index.sparse() || index.partial()) return false;
  auto in_index = [&](const std::string& f) {
    for (const std::string& n : index.field_names())
      if (n == f) return f.find('.') == std::string::npos;
    return false;
  };
  if (needs_fields) {
    for (const std::string& f : cq.projection->coverable_fields)
      if (!in_index(f)) return false;
    if (cq.projection->include_id && !in_index("_id")) return false;
  }
  std::vector<std::string> paths;
  if (!cq.match_everything() && !CoverableFilter(cq.root.get(), &paths)) return false;
  for (const std::string& p : paths)
    if (!in_index(p)) return false;
  for (const auto& part : cq.sort.parts())
    if (!in_index(part.path.dotted())) return false;
  return true;
}

// The _id bounds of the filter, when it constrains _id.
// _id is never an array and never missing, so its bounds answer exact
// predicates exactly (*used, if not null, receives them).
bool IdBounds(const std::vector<const MatchExpression*>& preds, IndexBounds* out,
              std::vector<UsedPredicate>* used, const Collator* query_collator) {
  static const FieldPath kId("_id");
  bool bounded = false;
  OrderedIntervalList list =
      FieldBounds(nullptr, kId, 0, preds, true, &bounded, used, query_collator);
  if (!bounded) return false;
  out->fields = {std::move(list)};
  return true;
}

bool IsPlainIdEquality(const CanonicalQuery& cq) {
  const MatchExpression* r = cq.root.get();
  if (r->type() == MatchType::kAnd && r->num_children() == 1) r = r->child(0);
  if (r->type() != MatchType::kEq || r->path() != "_id") return false;
  // The _id order is binary: a collated string equality is not a point.
  if (cq.collator != nullptr && IsCollatable(r->operand())) return false;
  BsonType t = r->operand().type();
  return t != BsonType::kArray && t != BsonType::kRegex && t != BsonType::kNull &&
         t != BsonType::kUndefined && t != BsonType::kMinKey && t != BsonType::kMaxKey;
}

// Whether the records' _id order gives the sort: a sort on _id alone, in
// the simple collation (the _id order is binary).
bool IdOrderSorts(const CanonicalQuery& cq) {
  return cq.sort.size() == 1 && cq.sort.parts()[0].path.dotted() == "_id" &&
         cq.collator == nullptr;
}

// ---- Building stages ----

// A covered plan's key documents hold the index's fields: when an inclusion
// projection asks for exactly those (with _id when the index has it), its
// output is the key document itself, so the projection need not run.
bool KeyDocumentIsProjection(const ProjectionInfo& p, const IndexDescriptor& index) {
  if (!p.inclusion || !p.simple || p.needs_elem_match_key) return false;
  std::vector<std::string> wanted = p.coverable_fields;
  if (p.include_id) wanted.push_back("_id");
  std::vector<std::string> have = index.field_names();
  std::sort(wanted.begin(), wanted.end());
  std::sort(have.begin(), have.end());
  return wanted == have;
}

std::unique_ptr<PlanStage> BuildStages(const QuerySolution& sol, const CanonicalQuery& cq,
                                       const CollectionMeta* meta, const ReadView& view) {
  bool want_key = cq.projection && cq.projection->needs_elem_match_key;
  StageFilter filter = sol.filter_reduced ? MakeConjunctionFilter(sol.residual)
                                          : MakeStageFilter(cq.root.get(), want_key);
  std::unique_ptr<PlanStage> root;
  switch (sol.access) {
    case Access::kEof:
      root = std::make_unique<EofStage>();
      break;
    case Access::kCollScan:
      root = std::make_unique<CollectionScanStage>(view, meta->id, sol.forward, filter,
                                                   meta->capped_order_id, cq.resume_after_seq);
      break;
    case Access::kIdHack:
      root = std::make_unique<IdHackStage>(view, sol.id_record_key, filter);
      break;
    case Access::kClustered:
      root =
          std::make_unique<ClusteredScanStage>(view, meta->id, sol.id_bounds, sol.forward, filter);
      break;
    case Access::kIndex: {
      const auto& part = sol.parts[0];
      if (sol.count_scan) {
        root =
            std::make_unique<IndexScanStage>(view, meta->id, part.index, part.bounds, part.forward,
                                             IndexScanStage::Output::kCount, StageFilter());
      } else if (sol.covered) {
        root =
            std::make_unique<IndexScanStage>(view, meta->id, part.index, part.bounds, part.forward,
                                             IndexScanStage::Output::kKeyDocument, filter);
      } else {
        auto scan =
            std::make_unique<IndexScanStage>(view, meta->id, part.index, part.bounds, part.forward,
                                             IndexScanStage::Output::kRecordKey, StageFilter());
        root = std::make_unique<FetchStage>(view, std::move(scan), filter);
      }
      break;
    }
    case Access::kGeoNear: {
      const auto& part = sol.parts[0];
      root = std::make_unique<GeoNearStage>(view, meta->id, part.index, part.bounds,
                                            sol.near_field, sol.near, filter);
      break;
    }
    case Access::kText: {
      const auto& part = sol.parts[0];
      std::vector<std::unique_ptr<PlanStage>> scans;
      const size_t fields = part.index->num_fields();
      for (const std::string& term : sol.text_query->terms) {
        IndexBounds bounds = part.bounds;  // the prefix's points
        BsonBuilder t;
        t.AppendString("", term);
        Document term_doc = std::move(t).Build();
        const size_t prefix = bounds.fields.size();  // then _fts, _ftsx, suffix
        for (size_t i = prefix; i < fields; ++i) {
          OrderedIntervalList list;
          list.field = part.index->field_names()[i];
          list.intervals = {i == prefix ? Interval::Point(term_doc.Get("")) : Interval::All()};
          bounds.fields.push_back(std::move(list));
        }
        scans.push_back(std::make_unique<IndexScanStage>(view, meta->id, part.index,
                                                         std::move(bounds), true,
                                                         IndexScanStage::Output::kKeyDocument,
                                                         StageFilter()));
      }
      root = std::make_unique<TextMatchStage>(
          std::make_unique<TextOrStage>(view, std::move(scans), filter), part.index,
          *sol.text_query, sol.text_prefix);
      break;
    }
    case Access::kOr: {
      std::vector<std::unique_ptr<PlanStage>> scans;
      for (const auto& part : sol.parts) {
        scans.push_back(
            std::make_unique<IndexScanStage>(view, meta->id, part.index, part.bounds, part.forward,
                                             IndexScanStage::Output::kRecordKey, StageFilter()));
      }
      root =
          std::make_unique<FetchStage>(view, std::make_unique<OrStage>(std::move(scans)), filter);
      break;
    }
  }
  if (!cq.sort.empty() && !sol.provides_sort) {
    const SortPattern* pattern = &cq.sort;
    uint32_t bits = 0;
    for (size_t i = 0; i < pattern->size() && i < 32; ++i)
      if (!pattern->parts()[i].ascending) bits |= 1u << i;
    auto key_fn = [pattern, bits](const WorkingMember& m, std::string* key) -> Status {
      std::vector<Element> values;
      ROCKDOC_RETURN_IF_ERROR(pattern->ExtractKey(m.doc, &values));
      keystring::Builder b(bits);
      // Under a collation, strings sort as their sort keys (as in an index).
      for (size_t i = 0; i < values.size(); ++i) {
        if (pattern->parts()[i].text_score) {
          BsonBuilder score;
          score.AppendDouble("", m.text_score.value_or(0));
          Document d = std::move(score).Build();
          b.Append(d.Get(""));
          continue;
        }
        AppendKeyValue(&b, values[i], pattern->collator());
      }
      *key = b.bytes();
      return Status::OK();
    };
    int64_t top_k = cq.limit > 0 ? cq.limit + cq.skip : 0;
    root = std::make_unique<SortStage>(std::move(root), cq.sort_spec, key_fn, top_k,
                                       cq.max_sort_bytes);
  }
  if (cq.skip > 0) root = std::make_unique<SkipStage>(std::move(root), cq.skip);
  if (cq.limit > 0) root = std::make_unique<LimitStage>(std::move(root), cq.limit);
  if (cq.projection) {
    const ProjectionInfo* p = &*cq.projection;
    std::string name = sol.covered ? "PROJECTION_COVERED"
                                   : (p->simple ? "PROJECTION_SIMPLE" : "PROJECTION_DEFAULT");
    ProjectionStage::Function fn;
    if (!(sol.covered && sol.access == Access::kIndex &&
          KeyDocumentIsProjection(*p, *sol.parts[0].index))) {
      fn = [p](const WorkingMember& m) -> StatusOr<Document> {
        ROCKDOC_ASSIGN_OR_RETURN(Document d, p->apply(m.doc, m.matched_array_index));
        if (p->text_score_fields.empty()) return d;
        // {$meta: "textScore"} fields come last, as MongoDB's.
        BsonBuilder b;
        for (Element e : d.view()) {
          if (std::find(p->text_score_fields.begin(), p->text_score_fields.end(), e.key()) ==
              p->text_score_fields.end()) {
            b.AppendElement(e);
          }
        }
        for (const std::string& f : p->text_score_fields) {
          b.AppendDouble(f, m.text_score.value_or(0));
        }
        return std::move(b).Build();
      };
    }
    root = std::make_unique<ProjectionStage>(std::move(root), name, p->spec, fn);
  }
  if (cq.return_key) {
    // The key replaces the document; MongoDB's RETURN_KEY drops the record
    // id too, so showRecordId adds nothing then.
    const bool id_order = sol.access == Access::kIdHack || sol.access == Access::kClustered;
    return std::make_unique<ReturnKeyStage>(std::move(root), id_order);
  }
  if (cq.show_record_id && meta != nullptr) {
    root = std::make_unique<ShowRecordIdStage>(view, std::move(root), meta->capped_order_id);
  }
  return root;
}

// ---- Candidates ----

// The index a (non-$natural) hint names: true for the _id index (the
// records' own order), else *chosen (null when there is none).
bool ResolveHint(const CanonicalQuery& cq, const IndexSet& indexes,
                 std::shared_ptr<IndexDescriptor>* chosen) {
  bool id_index = cq.hint_name == "_id_";
  if (!cq.hint.empty()) {
    Element first = *cq.hint.begin();
    if (cq.hint.view().CountFields() == 1 && first.key() == "_id" && first.IsNumber() &&
        first.NumberAsDouble() > 0) {
      id_index = true;
    }
  }
  for (const auto& idx : indexes) {
    if (idx->hidden()) continue;  // as if it did not exist, as MongoDB's
    if ((!cq.hint_name.empty() && idx->name() == cq.hint_name) ||
        (!cq.hint.empty() && idx->SameKeyPattern(cq.hint))) {
      *chosen = idx;
      break;
    }
  }
  return id_index;
}

// Whether a min()/max() document names exactly `fields`, in order (an
// empty one names nothing and fits any index).
bool FitsMinMax(DocumentView bound, const std::vector<std::string>& fields) {
  if (bound.empty()) return true;
  size_t i = 0;
  for (const Element& e : bound) {
    if (i == fields.size() || e.key() != fields[i]) return false;
    ++i;
  }
  return i == fields.size();
}

// min()/max(): the one plan, a scan of the hinted index from min
// (inclusive) to max (exclusive), as MongoDB's planner makes it.
Status MinMaxSolution(const CanonicalQuery& cq, const IndexSet& indexes, QuerySolution* sol) {
  if (cq.natural_sort != 0 || cq.hint.Get("$natural").ok()) {
    return Status(ErrorCode::kNoQueryExecutionPlans, "min and max are incompatible with $natural");
  }
  if (cq.hint.empty() && cq.hint_name.empty()) {
    return Status(static_cast<ErrorCode>(51173),
                  "When using min()/max() a hint of which index to use must be provided");
  }
  const Status incompatible(static_cast<ErrorCode>(51174),
                            "The index chosen is not compatible with min/max");
  const Status not_before(static_cast<ErrorCode>(51175),
                          "The value provided for min() does not come before the value provided "
                          "for max() in the hinted index");
  std::shared_ptr<IndexDescriptor> chosen;
  if (ResolveHint(cq, indexes, &chosen)) {
    // The _id order: an interval of _id values over the clustered records.
    static const std::vector<std::string> kId = {"_id"};
    if (!FitsMinMax(cq.min, kId) || !FitsMinMax(cq.max, kId)) return incompatible;
    Interval range = Interval::All();
    if (!cq.min.empty()) range.start = Value::FromElement(*cq.min.begin());
    if (!cq.max.empty()) {
      range.end = Value::FromElement(*cq.max.begin());
      range.end_inclusive = false;
    }
    OrderedIntervalList list;
    list.field = "_id";
    list.intervals = {std::move(range)};
    sol->access = Access::kClustered;
    sol->id_bounds.fields = {std::move(list)};
    if (BoundsToKeyRanges(sol->id_bounds, 0).empty()) return not_before;
    bool asc = IdOrderSorts(cq);
    sol->provides_sort = cq.sort.empty() || asc;
    sol->forward = cq.sort.empty() || !asc || cq.sort.parts()[0].ascending;
    return Status::OK();
  }
  if (chosen == nullptr) return BadValue("hint provided does not correspond to an existing index");
  if (!chosen->access_method().KeysAreOrdered() ||
      !Collator::Same(chosen->collator(), cq.collator.get()) ||
      !FitsMinMax(cq.min, chosen->field_names()) ||
      !FitsMinMax(cq.max, chosen->field_names())) {
    return incompatible;
  }
  QuerySolution::IndexPart part;
  part.index = chosen;
  part.bounds.simple_range = true;
  part.bounds.start_key = cq.min;
  part.bounds.end_key = cq.max;
  if (!cq.min.empty() && !cq.max.empty() &&
      BoundsToKeyRanges(part.bounds, chosen->descending_bits()).empty()) {
    return not_before;
  }
  bool forward = true;
  sol->access = Access::kIndex;
  sol->provides_sort = IndexProvidesSort(*chosen, part.bounds, cq.sort, &forward);
  part.forward = forward;
  sol->covered = IsCovered(cq, *chosen);
  sol->parts = {std::move(part)};
  return Status::OK();
}

// Drops from a plan's filter the conjuncts its bounds answer exactly,
// unless the projection needs the array position the filter matched at
// (then every conjunct must run).
void Reduce(const CanonicalQuery& cq, const std::vector<const MatchExpression*>& preds,
            QuerySolution* sol, std::vector<const MatchExpression*> residual) {
  const bool may_reduce = !(cq.projection && cq.projection->needs_elem_match_key);
  if (!may_reduce || residual.size() == preds.size()) return;
  sol->filter_reduced = true;
  sol->residual = std::move(residual);
}

// An IXSCAN (+FETCH) of `index`: false when the index may not answer the
// query (a partial index whose filter the query does not imply, a sparse
// one that could miss a match), or, unless hinted, when it neither bounds
// the scan nor gives the sort.
bool IndexSolution(const CanonicalQuery& cq, const std::vector<const MatchExpression*>& preds,
                   const std::shared_ptr<IndexDescriptor>& index, bool hinted, QuerySolution* sol) {
  if (!index->access_method().AnswersPlainQueries()) return false;
  if (index->partial() && !ImpliesPartialFilter(*index, preds)) return false;
  if (index->sparse() && !hinted && !SparseUsable(*index, preds)) return false;
  const IndexEligibility eligibility = index->access_method().Eligibility(*index, preds);
  if (eligibility == IndexEligibility::kNever && !hinted) return false;
  int bounded = 0;
  QuerySolution::IndexPart part;
  part.index = index;
  std::vector<UsedPredicate> used;
  part.bounds = BoundsForIndex(*index, preds, &bounded, &used, cq.collator.get());
  bool forward = true;
  bool sorts = IndexProvidesSort(*index, part.bounds, cq.sort, &forward);
  if (!hinted && bounded == 0 && !(sorts && !cq.sort.empty()) &&
      eligibility != IndexEligibility::kAlways) {
    return false;
  }
  part.forward = forward;
  sol->access = Access::kIndex;
  sol->provides_sort = sorts;
  sol->covered = IsCovered(cq, *index);
  Reduce(cq, preds, sol, ResidualConjuncts(preds, used, part.bounds));
  // Every entry in the bounds is then one matching document.
  sol->count_scan = sol->covered && cq.count_only && !cq.projection && sol->filter_reduced &&
                    sol->residual.empty();
  sol->parts = {std::move(part)};
  return true;
}

bool ResolveHint(const CanonicalQuery& cq, const IndexSet& indexes,
                 std::shared_ptr<IndexDescriptor>* chosen);

// $near / $nearSphere: the nearest-first scan of the index whose kind
// searches by distance on the near path (the hinted one, if any): the only
// plan, as in MongoDB. NoQueryExecutionPlans (291) when there is none.
Status GeoNearSolution(const CanonicalQuery& cq, const std::vector<const MatchExpression*>& preds,
                       const IndexSet& indexes, const GeoNearMatchExpression& near,
                       QuerySolution* sol) {
  std::shared_ptr<IndexDescriptor> hinted;
  const bool has_hint = !cq.hint.empty() || !cq.hint_name.empty();
  if (has_hint) ResolveHint(cq, indexes, &hinted);
  for (const auto& idx : indexes) {
    if (idx->hidden() || (has_hint && idx != hinted)) continue;
    std::optional<size_t> field = idx->access_method().NearField(*idx);
    if (!field || idx->field_names()[*field] != near.path()) continue;
    if (idx->partial() && !ImpliesPartialFilter(*idx, preds)) continue;
    std::vector<const MatchExpression*> others;
    for (const MatchExpression* p : preds)
      if (p != &near) others.push_back(p);
    int bounded = 0;
    QuerySolution::IndexPart part;
    part.index = idx;
    part.bounds = BoundsForIndex(*idx, others, &bounded, nullptr, cq.collator.get());
    sol->access = Access::kGeoNear;
    sol->near = &near;
    sol->near_field = *field;
    sol->provides_sort = cq.sort.empty();
    sol->filter_reduced = true;  // the stage itself keeps to the distances
    sol->residual = std::move(others);
    sol->parts = {std::move(part)};
    return Status::OK();
  }
  return Status(ErrorCode::kNoQueryExecutionPlans,
                "error processing query: planner returned error :: caused by :: unable to find "
                "index for $geoNear query");
}

// A CLUSTERED_IXSCAN over the _id bounds of the filter; false when it
// does not bound _id.
bool ClusteredSolution(const CanonicalQuery& cq, const std::vector<const MatchExpression*>& preds,
                       QuerySolution* sol) {
  std::vector<UsedPredicate> used;
  if (!IdBounds(preds, &sol->id_bounds, &used, cq.collator.get())) return false;
  sol->access = Access::kClustered;
  Reduce(cq, preds, sol, ResidualConjuncts(preds, used, sol->id_bounds));
  bool asc = IdOrderSorts(cq);
  sol->provides_sort = cq.sort.empty() || asc;
  sol->forward = cq.sort.empty() || cq.sort.parts()[0].ascending;
  return true;
}

// The COLLSCAN when nothing else applies.
QuerySolution CollScanSolution(const CanonicalQuery& cq) {
  QuerySolution sol;
  sol.access = Access::kCollScan;
  bool by_id = IdOrderSorts(cq);
  sol.provides_sort = cq.sort.empty() || by_id;
  sol.forward = cq.sort.empty() || !by_id || cq.sort.parts()[0].ascending;
  return sol;
}

// The plan of a $text query: TEXT_MATCH over TEXT_OR over one IXSCAN of
// the collection's text index per term, with the index's equality prefix
// taken from the filter. Errors, as MongoDB's: IndexNotFound (27) with no
// text index, BadValue for a prefix the filter does not give by equality,
// an unsupported $language, a collation, a hint, min/max, $natural or a
// tailable cursor with $text.
Status TextSolution(const CanonicalQuery& cq, const std::vector<const MatchExpression*>& preds,
                    const IndexSet& indexes, QuerySolution* sol) {
  if (cq.collation_given && cq.collator != nullptr) {
    return BadValue("$text queries do not support a collation other than the simple one");
  }
  if (!cq.hint.empty() || !cq.hint_name.empty() || !cq.min.empty() || !cq.max.empty() ||
      cq.natural_sort != 0 || cq.tailable) {
    return BadValue(
        "$text queries take no hint, min, max, $natural sort or tailable cursor in rockdoc");
  }
  std::shared_ptr<IndexDescriptor> index;
  for (const auto& idx : indexes) {
    if (!idx->hidden() && idx->access_method().TextSearch(*idx) != nullptr) index = idx;
  }
  if (index == nullptr) {
    return Status(ErrorCode::kIndexNotFound, "text index required for $text query");
  }
  const TextIndexSpec& spec = *index->access_method().TextSearch(*index);
  std::string language = spec.default_language();
  if (!cq.text->language().empty()) {
    std::optional<std::string> c = fts::CanonicalLanguage(cq.text->language());
    if (!c) {
      return BadValue("unsupported language: \"" + cq.text->language() +
                      "\" for text index version 3");
    }
    language = *c;
  }
  fts::TokenOptions options{cq.text->case_sensitive(), cq.text->diacritic_sensitive()};
  sol->text_query = std::make_shared<const fts::TextQuery>(
      fts::ParseTextQuery(cq.text->search(), language, options));
  QuerySolution::IndexPart part;
  part.index = index;
  BsonBuilder prefix;
  for (size_t i = 0; i < spec.prefix_fields(); ++i) {
    const MatchExpression* eq = nullptr;
    for (const MatchExpression* p : preds) {
      if (p->type() == MatchType::kEq && p->path() == index->field_paths()[i].dotted() &&
          p->operand().type() != BsonType::kArray && p->operand().type() != BsonType::kRegex) {
        eq = p;
      }
    }
    if (eq == nullptr) {
      return BadValue(
          "error processing query: planner returned error :: caused by :: failed to use text "
          "index to satisfy $text query (if text index is compound, are equality predicates "
          "given for all prefix fields?)");
    }
    OrderedIntervalList list;
    list.field = index->field_names()[i];
    list.intervals = {Interval::Point(eq->operand())};
    part.bounds.fields.push_back(std::move(list));
    prefix.AppendElementAs(index->field_names()[i], eq->operand());
  }
  sol->text_prefix = std::move(prefix).Build();
  sol->access = Access::kText;
  sol->parts = {std::move(part)};
  std::vector<const MatchExpression*> residual;
  for (const MatchExpression* p : preds) {
    if (p != cq.text) residual.push_back(p);
  }
  sol->filter_reduced = true;
  sol->residual = std::move(residual);
  return Status::OK();
}

std::vector<QuerySolution> EnumerateSolutions(const CanonicalQuery& cq, const CollectionMeta* meta,
                                              const IndexSet& indexes, Status* error) {
  if (cq.text != nullptr) {
    std::vector<QuerySolution> out;
    std::vector<const MatchExpression*> preds;
    CollectConjuncts(cq.root.get(), &preds);
    QuerySolution sol;
    *error = TextSolution(cq, preds, indexes, &sol);
    if (error->ok()) out.push_back(std::move(sol));
    return out;
  }
  std::vector<QuerySolution> out;
  std::vector<const MatchExpression*> preds;
  CollectConjuncts(cq.root.get(), &preds);
  auto reduce = [&](QuerySolution* sol, std::vector<const MatchExpression*> residual) {
    Reduce(cq, preds, sol, std::move(residual));
  };
  auto index_solution = [&](const std::shared_ptr<IndexDescriptor>& index, bool hinted,
                            QuerySolution* sol) -> bool {
    return IndexSolution(cq, preds, index, hinted, sol);
  };

  // A tailable cursor reads a capped collection's insertion order, whatever
  // the hint (as MongoDB's planner makes a collection scan of it).
  if (cq.tailable) {
    QuerySolution sol;
    sol.access = Access::kCollScan;
    sol.provides_sort = true;
    out.push_back(std::move(sol));
    return out;
  }

  // $near / $nearSphere: a nearest-first scan, or no plan at all.
  {
    StatusOr<const GeoNearMatchExpression*> near = FindGeoNear(cq.root.get());
    if (!near.ok()) {
      *error = near.status();
      return out;
    }
    if (*near != nullptr) {
      QuerySolution sol;
      *error = GeoNearSolution(cq, preds, indexes, **near, &sol);
      if (error->ok()) out.push_back(std::move(sol));
      return out;
    }
  }

  if (!cq.min.empty() || !cq.max.empty()) {
    QuerySolution sol;
    *error = MinMaxSolution(cq, indexes, &sol);
    if (error->ok()) out.push_back(std::move(sol));
    return out;
  }

  // A $natural sort is storage order (a $natural hint, if any, agrees).
  if (cq.natural_sort != 0) {
    QuerySolution sol;
    sol.access = Access::kCollScan;
    sol.forward = cq.natural_sort > 0;
    sol.provides_sort = true;
    out.push_back(std::move(sol));
    return out;
  }

  // Hints pin the plan.
  if (!cq.hint.empty() || !cq.hint_name.empty()) {
    Element natural = cq.hint.Get("$natural");
    if (natural.ok()) {
      QuerySolution sol;
      sol.access = Access::kCollScan;
      sol.forward = natural.NumberAsDouble() >= 0;
      sol.provides_sort = cq.sort.empty();
      out.push_back(std::move(sol));
      return out;
    }
    std::shared_ptr<IndexDescriptor> chosen;
    const bool id_index = ResolveHint(cq, indexes, &chosen);
    if (id_index) {
      QuerySolution sol;
      sol.access = Access::kClustered;
      std::vector<UsedPredicate> used;
      if (IdBounds(preds, &sol.id_bounds, &used, cq.collator.get())) {
        reduce(&sol, ResidualConjuncts(preds, used, sol.id_bounds));
      } else {
        OrderedIntervalList all;
        all.field = "_id";
        all.intervals = {Interval::All()};
        sol.id_bounds.fields = {std::move(all)};
      }
      sol.provides_sort = cq.sort.empty();
      out.push_back(std::move(sol));
      return out;
    }
    if (chosen == nullptr) {
      *error = BadValue("hint provided does not correspond to an existing index");
      return out;
    }
    QuerySolution sol;
    if (!index_solution(chosen, true, &sol)) {
      *error = BadValue("hint provided does not correspond to an existing index");
      return out;
    }
    out.push_back(std::move(sol));
    return out;
  }

  if (IsPlainIdEquality(cq)) {
    const MatchExpression* r = cq.root.get();
    if (r->type() == MatchType::kAnd) r = r->child(0);
    QuerySolution sol;
    sol.access = Access::kIdHack;
    sol.id_record_key = DocumentKey(*meta, r->operand());
    sol.provides_sort = true;
    reduce(&sol, {});  // the record found is the one whose _id equals it
    out.push_back(std::move(sol));
    return out;
  }

  {
    QuerySolution sol;
    if (ClusteredSolution(cq, preds, &sol)) out.push_back(std::move(sol));
  }
  for (const auto& idx : indexes) {
    QuerySolution sol;
    if (!idx->hidden() && index_solution(idx, false, &sol)) out.push_back(std::move(sol));
  }

  // $or: one index scan per branch, when every branch has one.
  if (out.empty() && cq.root->type() == MatchType::kOr && cq.root->num_children() > 0) {
    QuerySolution sol;
    sol.access = Access::kOr;
    bool all = true;
    bool branches_exact = true;  // every branch answered by its bounds alone
    for (size_t b = 0; b < cq.root->num_children() && all; ++b) {
      std::vector<const MatchExpression*> branch;
      CollectConjuncts(cq.root->child(b), &branch);
      QuerySolution::IndexPart best;
      int best_bounded = 0;
      bool best_exact = false;
      for (const auto& idx : indexes) {
        if (idx->hidden() || !idx->access_method().AnswersPlainQueries()) continue;
        if (idx->partial() && !ImpliesPartialFilter(*idx, branch)) continue;
        if (idx->sparse() && !SparseUsable(*idx, branch)) continue;
        const IndexEligibility eligibility = idx->access_method().Eligibility(*idx, branch);
        if (eligibility == IndexEligibility::kNever) continue;
        int bounded = 0;
        std::vector<UsedPredicate> used;
        IndexBounds bounds = BoundsForIndex(*idx, branch, &bounded, &used, cq.collator.get());
        if (eligibility == IndexEligibility::kAlways) bounded = std::max(bounded, 1);
        if (bounded > best_bounded) {
          best_bounded = bounded;
          best.index = idx;
          best_exact = !branch.empty() && ResidualConjuncts(branch, used, bounds).empty();
          best.bounds = std::move(bounds);
        }
      }
      if (best_bounded == 0) {
        all = false;
      } else {
        branches_exact = branches_exact && best_exact;
        sol.parts.push_back(std::move(best));
      }
    }
    if (all && branches_exact) reduce(&sol, {});
    if (all) out.push_back(std::move(sol));
  }

  if (out.empty()) out.push_back(CollScanSolution(cq));
  return out;
}

// ---- The plan cache (catalog/plan_cache.h) ----

std::atomic<bool> g_plan_cache_enabled{true};

// Whether a query's plan may come from, and go into, the plan cache: not a
// plan that a hint, min()/max(), a $natural sort or a tailable cursor pins,
// nor the IDHACK (cheaper than a lookup); not over a collection with a
// visible partial or sparse index, whose eligibility hangs on the query's
// values rather than its shape.
bool CacheableQuery(const CanonicalQuery& cq, const IndexSet& indexes) {
  if (cq.tailable || !cq.min.empty() || !cq.max.empty() || cq.natural_sort != 0 ||
      !cq.hint.empty() || !cq.hint_name.empty() || IsPlainIdEquality(cq)) {
    return false;
  }
  for (const auto& idx : indexes)
    if (!idx->hidden() && (idx->partial() || idx->sparse())) return false;
  return true;
}

// The plan cache's key: the find's shape (query/query_shape.h: literals
// replaced by their type), and the flags that change which plans exist.
uint64_t PlanCacheKey(const CanonicalQuery& cq) {
  const CanonicalQuery::FindShape& shape = cq.find_shape();
  const uint64_t flags = (cq.count_only ? 1u : 0u) | (cq.return_key ? 2u : 0u) |
                         (cq.show_record_id ? 4u : 0u) | (shape.traits.case_insensitive ? 8u : 0u);
  return shape.hash ^ ((flags + 1) * 0x9E3779B97F4A7C15ull);
}

std::optional<CachedPlanChoice> ChoiceOf(const QuerySolution& sol) {
  CachedPlanChoice c;
  switch (sol.access) {
    case Access::kCollScan:
      c.kind = CachedPlanChoice::Kind::kCollScan;
      return c;
    case Access::kClustered:
      c.kind = CachedPlanChoice::Kind::kClustered;
      return c;
    case Access::kIndex:
      c.kind = CachedPlanChoice::Kind::kIndex;
      c.index_name = sol.parts[0].index->name();
      return c;
    default:
      return std::nullopt;  // EOF, IDHACK, OR: planned each time
  }
}

// The cached choice rebuilt from this query's own values; false when it
// no longer applies (the index is gone or hidden, or cannot answer these
// values): then the query is planned in full.
bool SolutionFromChoice(const CanonicalQuery& cq, const IndexSet& indexes,
                        const CachedPlanChoice& choice, QuerySolution* sol) {
  if (choice.kind == CachedPlanChoice::Kind::kCollScan) {
    *sol = CollScanSolution(cq);
    return true;
  }
  std::vector<const MatchExpression*> preds;
  CollectConjuncts(cq.root.get(), &preds);
  if (choice.kind == CachedPlanChoice::Kind::kClustered) return ClusteredSolution(cq, preds, sol);
  for (const auto& idx : indexes) {
    if (idx->name() != choice.index_name) continue;
    return !idx->hidden() && IndexSolution(cq, preds, idx, /*hinted=*/false, sol);
  }
  return false;
}

}  // namespace

std::string QuerySolution::Describe() const {
  switch (access) {
    case Access::kEof:
      return "EOF";
    case Access::kCollScan:
      return "COLLSCAN";
    case Access::kIdHack:
      return "IDHACK";
    case Access::kClustered:
      return "CLUSTERED_IXSCAN";
    case Access::kIndex:
      return "IXSCAN " + parts[0].index->name();
    case Access::kGeoNear:
      return "GEO_NEAR_2DSPHERE " + parts[0].index->name();
    case Access::kOr:
      return "OR";
    case Access::kText:
      return "TEXT " + parts[0].index->name();
  }
  return "?";
}

StageFilter MakeConjunctionFilter(std::vector<const MatchExpression*> conjuncts) {
  if (conjuncts.empty()) return StageFilter();
  if (conjuncts.size() == 1) return MakeStageFilter(conjuncts[0], false);
  StageFilter f;
  auto shared = std::make_shared<const std::vector<const MatchExpression*>>(std::move(conjuncts));
  f.matches = [shared](DocumentView doc, WorkingMember*) {
    for (const MatchExpression* e : *shared)
      if (!e->Matches(doc, nullptr)) return false;
    return true;
  };
  f.describe = [shared](BsonBuilder* b) {
    b->OpenDocument("filter");
    b->OpenArray("$and");
    for (const MatchExpression* e : *shared) b->AppendDocument("", e->Serialize());
    b->Close();
    b->Close();
  };
  return f;
}

StageFilter MakeStageFilter(const MatchExpression* expr, bool want_elem_match_key) {
  if (expr == nullptr || (expr->type() == MatchType::kAnd && expr->num_children() == 0)) {
    return StageFilter();
  }
  StageFilter f;
  f.matches = [expr, want_elem_match_key](DocumentView doc, WorkingMember* m) {
    if (!want_elem_match_key) return expr->Matches(doc, nullptr);
    MatchDetails details;
    details.RequestElemMatchKey();
    bool ok = expr->Matches(doc, &details);
    if (ok && details.has_elem_match_key()) m->matched_array_index = details.elem_match_key();
    return ok;
  };
  f.describe = [expr](BsonBuilder* b) { b->AppendDocument("filter", expr->Serialize()); };
  return f;
}

void SetPlanCacheEnabled(bool enabled) {
  g_plan_cache_enabled.store(enabled, std::memory_order_relaxed);
}

bool PlanCacheEnabled() { return g_plan_cache_enabled.load(std::memory_order_relaxed); }

StatusOr<PreparedPlan> PlanQuery(const CanonicalQuery& cq, const CollectionMeta* meta,
                                 const ReadView& view, PlanCacheUse cache_use) {
  PreparedPlan plan;
  if (meta == nullptr) {
    plan.solution.access = Access::kEof;
    plan.solution.provides_sort = true;
    plan.root = BuildStages(plan.solution, cq, meta, view);
    return plan;
  }
  // The epoch before the index set: a choice made over a set that an index
  // change replaces meanwhile is not cached (catalog/plan_cache.h).
  const uint64_t cache_epoch = meta->plan_cache.epoch();
  std::shared_ptr<const IndexSet> indexes = meta->indexes();
  static const IndexSet kNoIndexes;
  const IndexSet& index_set = indexes ? *indexes : kNoIndexes;
  std::optional<uint64_t> cache_key;
  if (cache_use == PlanCacheUse::kUse && PlanCacheEnabled() && CacheableQuery(cq, index_set)) {
    cache_key = PlanCacheKey(cq);
  }
  std::vector<QuerySolution> solutions;
  if (cache_key) {
    if (std::optional<CachedPlanChoice> choice = meta->plan_cache.Lookup(*cache_key)) {
      QuerySolution sol;
      if (SolutionFromChoice(cq, index_set, *choice, &sol)) solutions.push_back(std::move(sol));
    }
  }
  plan.from_plan_cache = !solutions.empty();
  if (!plan.from_plan_cache) {
    Status error;
    solutions = EnumerateSolutions(cq, meta, index_set, &error);
    if (!error.ok()) return error;
  }
  plan.candidates = static_cast<int64_t>(solutions.size());

  size_t winner = 0;
  if (solutions.size() > 1) {
    // The race: one work per plan in turn until one plan produces a batch,
    // finishes, or the work budget runs out.
    std::vector<std::unique_ptr<PlanStage>> trials;
    for (const auto& s : solutions) trials.push_back(BuildStages(s, cq, meta, view));
    const int64_t target = cq.limit > 0 ? std::min<int64_t>(cq.limit + cq.skip, 101) : 101;
    const int64_t max_works = 10000;
    std::vector<int64_t> results(trials.size(), 0);
    std::vector<bool> eof(trials.size(), false), failed(trials.size(), false);
    bool stop = false;
    for (int64_t round = 0; round < max_works && !stop; ++round) {
      for (size_t i = 0; i < trials.size(); ++i) {
        if (eof[i] || failed[i]) continue;
        WorkingMember* out = nullptr;
        StageState st = trials[i]->Work(&out);
        if (st == StageState::kAdvanced && ++results[i] >= target) stop = true;
        if (st == StageState::kEof) {
          eof[i] = true;
          stop = true;
        }
        if (st == StageState::kFailure) failed[i] = true;
      }
      bool any_alive = false;
      for (size_t i = 0; i < trials.size(); ++i) any_alive |= !(eof[i] || failed[i]);
      if (!any_alive) stop = true;
    }
    double best = -1;
    for (size_t i = 0; i < trials.size(); ++i) {
      if (failed[i]) continue;
      double works = std::max<int64_t>(1, trials[i]->stats().works);
      double score = 1.0 + static_cast<double>(results[i]) / works;
      if (solutions[i].covered) score += 1e-4;
      if (solutions[i].provides_sort) score += 1e-4;
      if (eof[i]) score += 1.0;
      if (score > best) {
        best = score;
        winner = i;
      }
    }
    if (best < 0) return trials[0]->status();
    for (size_t i = 0; i < trials.size(); ++i) {
      if (i == winner) {
        plan.winner_trial = std::move(trials[i]);
      } else {
        plan.rejected.push_back(std::move(trials[i]));
      }
    }
  }
  if (cache_key && !plan.from_plan_cache) {
    if (std::optional<CachedPlanChoice> choice = ChoiceOf(solutions[winner])) {
      choice->candidates = plan.candidates;
      meta->plan_cache.Insert(*cache_key, std::move(*choice), cache_epoch);
    }
  }
  plan.solution = std::move(solutions[winner]);
  for (const auto& part : plan.solution.parts) part.index->RecordAccess();
  // The _id_ index: a point read or a range of the clustered _id order.
  if (plan.solution.access == Access::kIdHack || plan.solution.access == Access::kClustered) {
    meta->id_index_accesses.fetch_add(1, std::memory_order_relaxed);
  }
  plan.root = BuildStages(plan.solution, cq, meta, view);
  return plan;
}

Document BuildExplain(const std::string& ns, const CanonicalQuery& cq, PreparedPlan& plan,
                      ExplainVerbosity verbosity, int64_t n_returned, int64_t execution_millis) {
  BsonBuilder b;
  b.AppendString("explainVersion", "1");
  b.OpenDocument("queryPlanner");
  b.AppendString("namespace", ns);
  b.AppendBool("indexFilterSet", false);
  b.AppendDocument("parsedQuery", cq.root->Serialize());
  b.AppendBool("maxIndexedOrSolutionsReached", false);
  b.AppendBool("maxIndexedAndSolutionsReached", false);
  b.AppendBool("maxScansToExplodeReached", false);
  b.OpenDocument("winningPlan");
  plan.root->Explain(&b, ExplainVerbosity::kQueryPlanner);
  b.Close();
  b.OpenArray("rejectedPlans");
  for (const auto& r : plan.rejected) {
    b.OpenDocument("");
    r->Explain(&b, ExplainVerbosity::kQueryPlanner);
    b.Close();
  }
  b.Close();
  b.Close();
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    b.OpenDocument("executionStats");
    b.AppendBool("executionSuccess", true);
    AppendNumber(&b, "nReturned", n_returned);
    AppendNumber(&b, "executionTimeMillis", execution_millis);
    AppendNumber(&b, "totalKeysExamined", TotalKeysExamined(*plan.root));
    AppendNumber(&b, "totalDocsExamined", TotalDocsExamined(*plan.root));
    b.OpenDocument("executionStages");
    plan.root->Explain(&b, verbosity);
    b.Close();
    if (verbosity == ExplainVerbosity::kAllPlansExecution) {
      b.OpenArray("allPlansExecution");
      auto trial = [&](const PlanStage& s) {
        b.OpenDocument("");
        AppendNumber(&b, "nReturned", s.stats().advanced);
        AppendNumber(&b, "executionTimeMillisEstimate", s.stats().execution_nanos / 1000000);
        AppendNumber(&b, "totalKeysExamined", TotalKeysExamined(s));
        AppendNumber(&b, "totalDocsExamined", TotalDocsExamined(s));
        b.OpenDocument("executionStages");
        s.Explain(&b, verbosity);
        b.Close();
        b.Close();
      };
      if (plan.winner_trial) trial(*plan.winner_trial);
      for (const auto& r : plan.rejected) trial(*r);
      b.Close();
    }
    b.Close();
  }
  b.OpenDocument("command");
  size_t dot = ns.find('.');
  b.AppendString("find", dot == std::string::npos ? ns : ns.substr(dot + 1));
  b.AppendDocument("filter", cq.filter);
  if (!cq.sort_spec.empty()) b.AppendDocument("sort", cq.sort_spec);
  if (cq.projection) b.AppendDocument("projection", cq.projection->spec);
  if (cq.skip > 0) AppendNumber(&b, "skip", cq.skip);
  if (cq.limit > 0) AppendNumber(&b, "limit", cq.limit);
  b.Close();
  b.AppendDouble("ok", 1.0);
  return std::move(b).Build();
}

}  // namespace rockdoc::internal

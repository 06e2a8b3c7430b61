// planner/query_planner.h: from a CanonicalQuery and a collection's indexes
// to a running stage tree, and explain.
//
// Candidate plans: a CLUSTERED_IXSCAN over the _id order when the filter
// bounds _id; an IXSCAN (+FETCH) for each index whose leading field the
// filter constrains or whose order gives the requested sort; an OR of index
// scans when every branch of a top-level $or can use one; a COLLSCAN when
// nothing else applies (or when hinted with {$natural: 1}). With more than
// one candidate the planner races them for a short trial, as MongoDB does,
// and keeps the most productive (results per unit of work; small bonuses
// for needing no FETCH and no blocking SORT; reaching the end wins).
//
// Correctness rule: index bounds are always a superset of what the query
// needs, and the filter is applied again to what the scan returns (to the
// fetched document, or to the index key for covered plans), so every plan
// returns exactly what a collection scan returns. Conjuncts the bounds
// answer exactly (BoundsTightness::kExact on a field the scan enforces) are
// left out of that filter, as MongoDB leaves out predicates its tight
// bounds answer.
#ifndef ROCKDOC_PLANNER_QUERY_PLANNER_H_
#define ROCKDOC_PLANNER_QUERY_PLANNER_H_

#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "exec/plan_stage.h"
#include "exec/scan_stages.h"
#include "index/index_descriptor.h"
#include "planner/canonical_query.h"
#include "index/index_bounds.h"
#include "query/geo_match_expression.h"

namespace rockdoc::internal {

namespace fts {
struct TextQuery;
}

// One way to answer a query, before it is turned into stages.
struct QuerySolution {
  enum class Access { kEof, kCollScan, kIdHack, kClustered, kIndex, kOr, kGeoNear, kText };
  Access access = Access::kCollScan;
  bool forward = true;
  std::string id_record_key;  // kIdHack
  IndexBounds id_bounds;      // kClustered
  struct IndexPart {
    std::shared_ptr<const IndexDescriptor> index;
    IndexBounds bounds;
    bool forward = true;
  };
  std::vector<IndexPart> parts;  // kIndex, kGeoNear, kText: one; kOr: one per branch
  // kGeoNear: the $near / $nearSphere (owned by the query) and the index
  // field it searches.
  const GeoNearMatchExpression* near = nullptr;
  size_t near_field = 0;
  // kText: the $search string parsed in the index's language, and the
  // equality prefix ({a: 1} of {a: 1, _fts: "text", _ftsx: 1}) as
  // explain's indexPrefix shows it.
  std::shared_ptr<const fts::TextQuery> text_query;
  Document text_prefix;
  bool provides_sort = false;    // no blocking SORT needed
  bool covered = false;          // no FETCH: answered from the index keys
  bool count_scan = false;       // count_only and the bounds are exactly the filter
  // When the bounds answer some conjuncts of the filter exactly (MongoDB's
  // "tight" bounds), the plan evaluates only the others, `residual`;
  // otherwise the whole filter.
  bool filter_reduced = false;
  std::vector<const MatchExpression*> residual;
  std::string Describe() const;
};

// Planning's result: the stages of the chosen plan, ready to run, and what
// explain needs.
struct PreparedPlan {
  std::unique_ptr<PlanStage> root;
  QuerySolution solution;
  // Trees of the candidates that lost the race (already worked), and the
  // winner's trial tree, for explain's rejectedPlans / allPlansExecution.
  std::vector<std::unique_ptr<PlanStage>> rejected;
  std::unique_ptr<PlanStage> winner_trial;
  int64_t candidates = 1;
  // The plan is the plan cache's choice for the query's shape.
  bool from_plan_cache = false;
};

// Whether planning may use the collection's plan cache
// (catalog/plan_cache.h). Explain bypasses it, as MongoDB's does: it always
// enumerates and races every candidate, so rejectedPlans are shown.
enum class PlanCacheUse { kUse, kBypass };

// Plans `cq` over the collection (`meta` null: it does not exist) at the
// snapshot of `view`. With kUse, a query of a shape planned before builds
// the cached choice alone, rebuilt from its own values (no enumeration, no
// race), and a full planning caches its winner. Errors: a hint naming no
// index (BadValue 2).
StatusOr<PreparedPlan> PlanQuery(const CanonicalQuery& cq, const CollectionMeta* meta,
                                 const ReadView& view, PlanCacheUse cache_use = PlanCacheUse::kUse);

// The plan cache's process-wide switch, for tests and benchmarks (the
// answers are the same either way; on by default). MongoDB has no such
// public option either.
void SetPlanCacheEnabled(bool enabled);
bool PlanCacheEnabled();

// A StageFilter evaluating `expr` (null or {} = none); with
// `want_elem_match_key` it records the matched array position.
StageFilter MakeStageFilter(const MatchExpression* expr, bool want_elem_match_key);

// A StageFilter requiring every expression in `conjuncts` (none: no
// filter); explain shows the expression alone, or {$and: [...]}.
StageFilter MakeConjunctionFilter(std::vector<const MatchExpression*> conjuncts);

// The explain document: {queryPlanner: {...}, executionStats?: {...}}. For
// the execution verbosities the caller has run plan.root to completion and
// passes what it returned and how long it took.
Document BuildExplain(const std::string& ns, const CanonicalQuery& cq, PreparedPlan& plan,
                      ExplainVerbosity verbosity, int64_t n_returned, int64_t execution_millis);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_PLANNER_QUERY_PLANNER_H_

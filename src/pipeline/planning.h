// pipeline/planning.h: the planning passes over a pipeline's stages before
// any is parsed into a Stage: $match movement (each $match ahead of the
// stages that do not change what it reads), the leading find (push-down of
// the leading $match, $sort, $skip and $limit into the query planner) and
// $sort + $limit coalescing (a top-k). planning.cc; the stage table says
// which stages a $match may pass (StageDef::changed_roots). Not part of the
// layer's interface.
#ifndef ROCKDOC_PIPELINE_PLANNING_H_
#define ROCKDOC_PIPELINE_PLANNING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/pipeline.h"

namespace rockdoc::internal {

// The stages of `pipeline` (each one field; 40323 otherwise, 7749501 past
// 1,000), its $match stages moved as early as they may go.
StatusOr<std::vector<Element>> StageElements(DocumentView pipeline);

// The root field of a dotted path ("a" of "a.b.c").
std::string RootOf(std::string_view path);

// How many documents a $sort's output needs when stages[next] is a $limit
// or a $skip then a $limit (the sort is then a top-k; the stages still
// run); 0 when all.
int64_t TopK(const std::vector<Element>& stages, size_t next);

// The pipeline's find: its leading $match (several: their $and), $sort,
// then $skip/$limit, checked with MongoDB's errors.
struct LeadingFind {
  Document filter;
  FindOptions options;
  size_t next = 0;  // the first stage the find does not run
};
// A leading $geoNear's find: {$and: [{<key>: {$nearSphere: ...}}, <query>]}
// (pipeline/geo_near_stage.cc; the stage itself then adds the distances).
StatusOr<Document> GeoNearFindFilter(const Element& spec);
StatusOr<LeadingFind> Pushdown(const std::vector<Element>& stages, const PipelineOptions& options);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_PIPELINE_PLANNING_H_

#include "planner/canonical_query.h"

namespace rockdoc::internal {

StatusOr<std::unique_ptr<CanonicalQuery>> MakeCanonicalQuery(DocumentView filter,
                                                             const FindOptions& options) {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(filter.bytes()));
  auto cq = std::make_unique<CanonicalQuery>();
  cq->filter = Document::AdoptValidated(std::string(filter.bytes()));
  ROCKDOC_ASSIGN_OR_RETURN(cq->root, ParseMatchExpression(cq->filter));
  if (!options.sort.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(cq->sort, SortPattern::Parse(options.sort));
    cq->sort_spec = cq->sort.ToDocument();
  }
  if (!options.projection.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(ProjectionInfo p,
                             MakeProjectionInfo(options.projection, cq->root.get()));
    cq->projection = std::move(p);
  }
  if (options.skip < 0) return BadValue("skip value must be non-negative, but received: " +
                                        std::to_string(options.skip));
  cq->skip = options.skip;
  cq->limit = options.limit < 0 ? -options.limit : options.limit;
  cq->hint = options.hint;
  cq->hint_name = options.hint_name;
  cq->max_sort_bytes = options.max_blocking_sort_bytes;
  return cq;
}

}  // namespace rockdoc::internal

// The planner's view of a projection (query/projection.h).
#include "planner/canonical_query.h"
#include "query/projection.h"

namespace rockdoc::internal {

StatusOr<ProjectionInfo> MakeProjectionInfo(DocumentView spec, const MatchExpression* filter) {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(spec.bytes()));
  ROCKDOC_ASSIGN_OR_RETURN(Projection projection, Projection::Parse(spec, filter));
  ProjectionInfo info;
  info.spec = Document::AdoptValidated(std::string(spec.bytes()));
  info.simple = projection.is_simple();
  info.inclusion = projection.type() == Projection::Type::kInclusion;
  info.include_id = projection.includes_id();
  info.needs_elem_match_key = projection.requires_match_details();
  if (info.inclusion && info.simple) {
    for (const std::string& path : projection.required_paths()) {
      if (path != "_id") info.coverable_fields.push_back(path);
    }
  }
  info.apply = [projection = std::move(projection)](
                   DocumentView doc, std::optional<size_t> elem_match_key) -> StatusOr<Document> {
    if (!projection.requires_match_details()) return projection.Apply(doc, nullptr);
    MatchDetails details;
    details.RequestElemMatchKey();
    if (elem_match_key) details.SetElemMatchKey(*elem_match_key);
    return projection.Apply(doc, &details);
  };
  return info;
}

}  // namespace rockdoc::internal

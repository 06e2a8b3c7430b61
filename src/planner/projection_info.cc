// The planner's view of a projection (query/projection.h).
#include "planner/canonical_query.h"
#include "query/projection.h"

#include <functional>

namespace rockdoc::internal {

StatusOr<ProjectionInfo> MakeProjectionInfo(DocumentView spec, const MatchExpression* filter) {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(spec.bytes()));
  // {$meta: "textScore"} fields are the planner's (the result's score);
  // the rest is the projection proper.
  ProjectionInfo info;
  BsonBuilder rest;
  for (Element e : spec) {
    if (e.IsDocument()) {
      Element meta = e.Document().Get("$meta");
      if (meta.IsString() && meta.String() == "textScore") {
        info.text_score_fields.emplace_back(e.key());
        continue;
      }
    }
    rest.AppendElement(e);
  }
  Document rest_spec = std::move(rest).Build();
  ROCKDOC_ASSIGN_OR_RETURN(Projection projection, Projection::Parse(rest_spec, filter));
  info.spec = Document::AdoptValidated(std::string(spec.bytes()));
  info.simple = projection.is_simple() && info.text_score_fields.empty();
  info.inclusion = projection.type() == Projection::Type::kInclusion;
  info.include_id = projection.includes_id();
  info.needs_elem_match_key = projection.requires_match_details();
  if (info.inclusion && info.simple && info.text_score_fields.empty()) {
    for (const std::string& path : projection.required_paths()) {
      if (path != "_id") info.coverable_fields.push_back(path);
    }
  }
  const bool only_meta = rest_spec.empty();
  info.apply = [projection = std::move(projection), only_meta](
                   DocumentView doc, std::optional<size_t> elem_match_key) -> StatusOr<Document> {
    if (only_meta) return Document::AdoptValidated(std::string(doc.bytes()));
    if (!projection.requires_match_details()) return projection.Apply(doc, nullptr);
    MatchDetails details;
    details.RequestElemMatchKey();
    if (elem_match_key) details.SetElemMatchKey(*elem_match_key);
    return projection.Apply(doc, &details);
  };
  return info;
}

StatusOr<const TextMatchExpression*> TopLevelText(const MatchExpression* root) {
  const TextMatchExpression* found = nullptr;
  int nested = 0;
  std::function<void(const MatchExpression*, bool)> walk = [&](const MatchExpression* e,
                                                               bool top) {
    if (e->type() == MatchType::kText) {
      if (top && found == nullptr) {
        found = static_cast<const TextMatchExpression*>(e);
      } else {
        ++nested;
      }
      return;
    }
    const bool conjunction = top && e->type() == MatchType::kAnd;
    for (size_t i = 0; i < e->num_children(); ++i) walk(e->child(i), conjunction);
  };
  walk(root, true);
  if (nested > 0 && found != nullptr) return BadValue("Too many text expressions");
  if (nested > 0) {
    return BadValue(
        "$text is only supported as a top-level conjunct of the query filter in rockdoc "
        "(not under $or, $nor or $not)");
  }
  return found;
}

}  // namespace rockdoc::internal

// query/expression/document_transform.h: the stages that reshape one
// document at a time ($project, $addFields/$set, $unset, $replaceRoot/
// $replaceWith), parsed once and applied to each document. The aggregation
// pipeline runs them as stages; an update pipeline (updateOne(filter,
// [{$set: ...}, ...])) is a list of them applied to each target.
//
// Semantics are MongoDB's: $project is an inclusion (listed and computed
// fields, _id unless excluded) or an exclusion (never both, 31254); paths
// into arrays map over their elements; $addFields replaces or adds fields
// in place ($$REMOVE removes one); $replaceRoot's newRoot must evaluate to
// a document (40228).
//
// Thread safety: a parsed transform is immutable.
#ifndef ROCKDOC_QUERY_EXPRESSION_DOCUMENT_TRANSFORM_H_
#define ROCKDOC_QUERY_EXPRESSION_DOCUMENT_TRANSFORM_H_

#include <memory>
#include <string_view>

#include "query/expression/expression.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

class DocumentTransform {
 public:
  virtual ~DocumentTransform() = default;
  // The new document for `doc`; `vars.root` is `doc`.
  virtual StatusOr<Document> Apply(DocumentView doc, const ExpressionVariables& vars) const = 0;
};

// True for $project, $addFields, $set, $unset, $replaceRoot, $replaceWith.
bool IsDocumentTransformStage(std::string_view name);

// MongoDB's internalPipelineLengthLimit: the most stages a pipeline may
// list (each pipeline on its own: aggregate's, a $lookup's, $unionWith's,
// each $facet's, an update's, a view's with the stages run over it).
inline constexpr size_t kMaxPipelineStages = 1000;

// The stages of a pipeline (an array of stage documents), each its stage
// document's one field, in order: what aggregation and update pipelines
// parse. Errors, MongoDB's: 7749501 "Pipeline length must be no longer than
// 1000 stages." (checked first, before anything is parsed); TypeMismatch
// (14) "Each element of the 'pipeline' array must be an object"; 40323 "A
// pipeline stage specification object must contain exactly one field.".
StatusOr<std::vector<Element>> PipelineStages(DocumentView pipeline);

// Parses the specification of one of those stages (`spec` is the stage
// document's one field), with MongoDB's codes: 15969 $project not an
// object, 40272 $addFields/$set not an object, 31002/31120 a bad $unset,
// 40228/40414/40415 a bad $replaceRoot, 51272/31254/31250/51270 bad
// projections, and the expressions' own codes.
StatusOr<std::unique_ptr<DocumentTransform>> ParseDocumentTransform(std::string_view name,
                                                                    const Element& spec,
                                                                    VariableScope* scope);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_QUERY_EXPRESSION_DOCUMENT_TRANSFORM_H_

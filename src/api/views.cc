// api/views.cc: views (db.createView, create with viewOn + pipeline), as
// MongoDB's: read-only, nothing stored but the definition (the catalog's),
// and every read of a view rewritten, before it plans, into an aggregate of
// the collection under it (nested views resolved): the views' pipelines,
// innermost first, then the read's own stages. A find becomes [view...,
// $match, $sort, $skip, $limit, $project], a count [view..., $match, $skip,
// $limit, $count]; $lookup, $graphLookup and $unionWith read a view through
// those finds and pipelines (PipelineFind resolves the view like any find).
// Writes, index commands and collStats refuse a view with
// CommandNotSupportedOnView (166), from the catalog and the collection lock.
#include <cstdlib>
#include <set>

#include "api/client_internal.h"
#include "api/collection_internal.h"
#include "pipeline/pipeline.h"
#include "rockdoc/client.h"

namespace rockdoc {

namespace internal {

namespace {

// The namespaces a pipeline reads besides its own: $lookup's and
// $graphLookup's `from`, $unionWith's collection, at any depth ($lookup's
// and $unionWith's sub-pipelines, $facet's).
void CollectDependencies(DocumentView pipeline, std::set<std::string>* out) {
  for (const Element& stage : pipeline) {
    if (stage.type() != BsonType::kDocument || stage.Document().empty()) continue;
    const Element spec = *stage.Document().begin();
    const std::string_view name = spec.key();
    if (name == "$unionWith" && spec.type() == BsonType::kString) {
      out->insert(std::string(spec.String()));
      continue;
    }
    if (spec.type() != BsonType::kDocument) continue;
    if (name == "$lookup" || name == "$graphLookup" || name == "$unionWith") {
      const Element from = spec.Document().Get(name == "$unionWith" ? "coll" : "from");
      if (from.type() == BsonType::kString) out->insert(std::string(from.String()));
      const Element sub = spec.Document().Get("pipeline");
      if (sub.type() == BsonType::kArray) CollectDependencies(sub.Array(), out);
    } else if (name == "$facet") {
      for (const Element& facet : spec.Document()) {
        if (facet.type() == BsonType::kArray) CollectDependencies(facet.Array(), out);
      }
    }
  }
}

}  // namespace

Document ConcatPipelines(DocumentView first, DocumentView second) {
  BsonBuilder b;
  int i = 0;
  for (const Element& stage : first) b.AppendElementAs(std::to_string(i++), stage);
  for (const Element& stage : second) b.AppendElementAs(std::to_string(i++), stage);
  return std::move(b).Build();
}

StatusOr<std::optional<ResolvedView>> ResolveView(const Engine& engine, const std::string& db,
                                                  const std::string& name) {
  const Catalog& catalog = CatalogOf(engine);
  std::shared_ptr<const ViewDefinition> view = catalog.FindView(db, name);
  if (view == nullptr) return std::optional<ResolvedView>();
  ResolvedView out;
  out.pipeline = view->pipeline;
  for (int depth = 1;; ++depth) {
    std::shared_ptr<const ViewDefinition> under = catalog.FindView(db, view->view_on);
    if (under == nullptr) break;
    if (depth >= kMaxViewDepth) {
      return Status(ErrorCode::kViewDepthLimitExceeded,
                    "View depth too deep or view cycle detected. Maximum depth is " +
                        std::to_string(kMaxViewDepth));
    }
    out.pipeline = ConcatPipelines(under->pipeline.view(), out.pipeline.view());
    view = std::move(under);
  }
  out.collection = view->view_on;
  return std::optional<ResolvedView>(std::move(out));
}

// Checks a view's definition as MongoDB does when it is created or
// changed: a pipeline that parses, that writes nothing (OptionNotSupportedOnView,
// 167; nested $out/$merge fail with their stage's own code), and a graph of
// views without a cycle (the catalog's check, from the dependencies).
StatusOr<ViewDefinition> MakeViewDefinition(const std::string& db, std::string_view name,
                                            std::string_view view_on, DocumentView pipeline) {
  ROCKDOC_RETURN_IF_ERROR(ValidateDatabaseName(db));
  ROCKDOC_RETURN_IF_ERROR(ValidateCollectionName(db, name));
  ROCKDOC_RETURN_IF_ERROR(ValidateCollectionName(db, view_on));
  int i = 0;
  for (const Element& stage : pipeline) {
    if (stage.type() != BsonType::kDocument) {
      return Status(ErrorCode::kTypeMismatch, "'pipeline' must be an array of objects");
    }
    if (!stage.Document().empty()) {
      const std::string_view s = (*stage.Document().begin()).key();
      if (s == "$out" || s == "$merge") {
        return Status(ErrorCode::kOptionNotSupportedOnView,
                      "The aggregation stage " + std::string(s) + " in location " +
                          std::to_string(i) + " of the pipeline cannot be used in the view "
                          "definition of " + db + "." + std::string(name) +
                          " because it writes to disk");
      }
    }
    ++i;
  }
  PipelineOptions check;
  check.database = db;
  ROCKDOC_RETURN_IF_ERROR(CheckPipeline(pipeline, check));
  ViewDefinition view;
  view.db = db;
  view.name = std::string(name);
  view.view_on = std::string(view_on);
  view.pipeline = Document::AdoptValidated(std::string(pipeline.bytes()));
  std::set<std::string> deps = {view.view_on};
  CollectDependencies(pipeline, &deps);
  view.depends_on.assign(deps.begin(), deps.end());
  return view;
}

}  // namespace internal

Status Database::CreateView(std::string_view name, std::string_view view_on,
                            DocumentView pipeline) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "create"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_ASSIGN_OR_RETURN(internal::ViewDefinition view,
                           internal::MakeViewDefinition(name_, name, view_on, pipeline));
  return CatalogOf(*engine_).CreateView(std::move(view));
}

StatusOr<std::optional<Collection::ViewRead>> Collection::ResolveView() const {
  // The catalog lives as long as the engine (closed or not), and asking it
  // costs one atomic load while there is no view: no Enter here; the read
  // of the view enters as any read does.
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<internal::ResolvedView> view,
                           internal::ResolveView(*engine_, db_name_, name_));
  if (!view) return std::optional<ViewRead>();
  return std::optional<ViewRead>(
      ViewRead(Collection(engine_, db_name_, std::move(view->collection), session_),
               std::move(view->pipeline)));
}

namespace {

// A find's stages after a view's: MongoDB's conversion of a find on a view
// into an aggregate.
StatusOr<Document> FindStages(DocumentView filter, const FindOptions& options) {
  // The options an aggregate has no equivalent of: MongoDB's
  // InvalidPipelineOperator (168), as its asAggregationCommand answers.
  const auto unsupported = [](std::string_view option) {
    return Status(ErrorCode::kInvalidPipelineOperator,
                  "Option " + std::string(option) + " not supported in aggregation.");
  };
  if (!options.min.empty()) return unsupported("min");
  if (!options.max.empty()) return unsupported("max");
  if (options.return_key) return unsupported("returnKey");
  if (options.show_record_id) return unsupported("showRecordId");
  if (options.tailable) {
    return Status(ErrorCode::kInvalidPipelineOperator,
                  "Tailable cursors are not supported in aggregation.");
  }
  BsonBuilder b;
  int i = 0;
  auto stage = [&](std::string_view name) -> BsonBuilder& {
    return b.OpenDocument(std::to_string(i++)).OpenDocument(name);
  };
  if (!filter.empty()) {
    b.OpenDocument(std::to_string(i++)).AppendDocument("$match", filter).Close();
  }
  if (!options.sort.empty()) {
    if ((*options.sort.view().begin()).key() == "$natural") {
      return Status(ErrorCode::kNotImplemented,
                    "a $natural sort of a view is not supported by rockdoc");
    }
    b.OpenDocument(std::to_string(i++)).AppendDocument("$sort", options.sort.view()).Close();
  }
  if (options.skip < 0) {
    return Status(static_cast<ErrorCode>(51024), "BSON field 'skip' value must be >= 0, actual value '" +
                                                     std::to_string(options.skip) + "'");
  }
  if (options.skip > 0) b.OpenDocument(std::to_string(i++)).AppendInt64("$skip", options.skip).Close();
  if (options.limit != 0) {
    b.OpenDocument(std::to_string(i++)).AppendInt64("$limit", std::llabs(options.limit)).Close();
  }
  if (!options.projection.empty()) {
    stage("$project");
    for (const Element& e : options.projection.view()) b.AppendElement(e);
    b.Close().Close();
  }
  return std::move(b).Build();
}

AggregateOptions ViewAggregateOptions(int64_t max_time_ms, const Document& hint,
                                      const std::string& hint_name) {
  AggregateOptions ao;
  ao.max_time_ms = max_time_ms;
  ao.hint = hint;
  ao.hint_name = hint_name;
  return ao;
}

}  // namespace

StatusOr<Cursor> Collection::FindOnView(const ViewRead& read, DocumentView filter,
                                        const FindOptions& options) const {
  const auto& [backing, view] = read;
  ROCKDOC_ASSIGN_OR_RETURN(Document stages, FindStages(filter, options));
  AggregateOptions ao = ViewAggregateOptions(options.max_time_ms, options.hint, options.hint_name);
  ao.max_blocking_stage_bytes = options.max_blocking_sort_bytes;
  return backing.Aggregate(internal::ConcatPipelines(view.view(), stages.view()).view(), ao);
}

StatusOr<Document> Collection::ExplainFindOnView(const ViewRead& read, DocumentView filter,
                                                 const FindOptions& options,
                                                 ExplainVerbosity verbosity) const {
  const auto& [backing, view] = read;
  ROCKDOC_ASSIGN_OR_RETURN(Document stages, FindStages(filter, options));
  AggregateOptions ao = ViewAggregateOptions(options.max_time_ms, options.hint, options.hint_name);
  ao.max_blocking_stage_bytes = options.max_blocking_sort_bytes;
  return backing.ExplainAggregate(internal::ConcatPipelines(view.view(), stages.view()).view(), ao,
                                  verbosity);
}

namespace {

// A count's stages after a view's (the view's stages first).
StatusOr<Document> CountPipeline(const Document& view, DocumentView filter,
                                 const CountOptions& options) {
  FindOptions fo;
  fo.skip = options.skip;
  fo.limit = options.limit;
  ROCKDOC_ASSIGN_OR_RETURN(Document find, FindStages(filter, fo));
  BsonBuilder count;
  count.OpenDocument("0").AppendString("$count", "n").Close();
  Document c = std::move(count).Build();
  return internal::ConcatPipelines(
      internal::ConcatPipelines(view.view(), find.view()).view(), c.view());
}

}  // namespace

StatusOr<int64_t> Collection::CountOnView(const ViewRead& read, DocumentView filter,
                                          const CountOptions& options) const {
  const auto& [backing, view] = read;
  ROCKDOC_ASSIGN_OR_RETURN(Document pipeline, CountPipeline(view, filter, options));
  ROCKDOC_ASSIGN_OR_RETURN(
      Cursor cursor,
      backing.Aggregate(pipeline.view(),
                        ViewAggregateOptions(options.max_time_ms, options.hint, options.hint_name)));
  int64_t n = 0;
  if (cursor.Next()) {
    const Element e = cursor.document().Get("n");
    if (!e.IsNumber() || !e.ExactInt64(&n)) n = 0;
  }
  ROCKDOC_RETURN_IF_ERROR(cursor.status());
  return n;
}

StatusOr<Document> Collection::ExplainCountOnView(const ViewRead& read, DocumentView filter,
                                                  const CountOptions& options,
                                                  ExplainVerbosity verbosity) const {
  const auto& [backing, view] = read;
  ROCKDOC_ASSIGN_OR_RETURN(Document pipeline, CountPipeline(view, filter, options));
  return backing.ExplainAggregate(
      pipeline.view(), ViewAggregateOptions(options.max_time_ms, options.hint, options.hint_name),
      verbosity);
}

}  // namespace rockdoc

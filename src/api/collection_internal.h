// api/collection_internal.h: pieces shared by the Collection operations
// (collection.cc: inserts, deletes, replace, validate; collection_query.cc:
// find, count, distinct, explain; collection_update.cc: updates).
#ifndef ROCKDOC_API_COLLECTION_INTERNAL_H_
#define ROCKDOC_API_COLLECTION_INTERNAL_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/session_internal.h"
#include "catalog/catalog.h"
#include "common/deadline.h"
#include "exec/plan_executor.h"
#include "pipeline/pipeline.h"
#include "exec/write_stages.h"
#include "planner/canonical_query.h"
#include "planner/query_planner.h"
#include "rockdoc/client.h"
#include "storage/engine.h"
#include "store/collection_lock.h"
#include "store/write_batcher.h"

namespace rockdoc::internal {

// A target of a write and the write loop: store/write_batcher.h.

// ---- Views (api/views.cc) ----

// A view resolved: the collection under it (through nested views) and the
// pipeline over that collection (the innermost view's stages first).
struct ResolvedView {
  std::string collection;
  Document pipeline;
};
// nullopt when `name` is not a view; ViewDepthLimitExceeded (165) past
// kMaxViewDepth.
StatusOr<std::optional<ResolvedView>> ResolveView(const Engine& engine, const std::string& db,
                                                  const std::string& name);
// One array of the stages of `first`, then of `second`.
Document ConcatPipelines(DocumentView first, DocumentView second);
// A view's definition, checked as MongoDB checks it: names, a pipeline that
// parses and writes nothing (167 for a top-level $out or $merge), and its
// dependencies (for the catalog's cycle check).
StatusOr<ViewDefinition> MakeViewDefinition(const std::string& db, std::string_view name,
                                            std::string_view view_on, DocumentView pipeline);

// Plans and opens a cursor over `cq` (which the cursor then owns), limited to
// `max_time_ms` of processing (0 = none; out of range: BadValue).
// Inside a transaction the cursor reads through it and is invalidated when
// it ends; in a snapshot session it reads the session's snapshot.
// `top`, when given, puts a stage over the plan (COUNT) before it runs.
using TopStage = std::function<std::unique_ptr<PlanStage>(
    std::unique_ptr<PlanStage> plan, const CollectionMeta& meta, const ReadView& view)>;
StatusOr<std::unique_ptr<PlanExecutor>> OpenQuery(const std::shared_ptr<const Engine>& engine,
                                                  const CollectionMeta* meta,
                                                  std::shared_ptr<const CanonicalQuery> cq,
                                                  int64_t max_time_ms, const OpContext& op,
                                                  const TopStage& top = {});

// Runs `cq` at the requested verbosity and returns MongoDB's explain.
// `top`, when given, puts a stage over the plan (UPDATE, DELETE, COUNT)
// before it runs: explain then shows and runs the real tree.
StatusOr<Document> ExplainQuery(const std::shared_ptr<const Engine>& engine,
                                const CollectionMeta* meta, const std::string& ns,
                                const CanonicalQuery& cq, ExplainVerbosity verbosity,
                                const TopStage& top = {});

// Runs a write: plans `cq` (at a fresh snapshot, or in op's transaction)
// and runs the plan under an UPDATE or DELETE stage whose writer is
// `write`. Returns the targets matched and written; on an error the
// documents written before it stay written (each one all-or-nothing).
StatusOr<WriteCounts> RunWritePlan(const std::shared_ptr<const Engine>& engine,
                                   const CollectionMeta& meta, const CanonicalQuery& cq,
                                   const Deadline& deadline, const OpContext& op,
                                   WriteStage::Kind kind, const TargetWriter& write);
// The same plan as explain shows it (a dry run at the higher verbosities).
StatusOr<Document> ExplainWritePlan(const std::shared_ptr<const Engine>& engine,
                                    const CollectionMeta* meta, const std::string& ns,
                                    const CanonicalQuery& cq, ExplainVerbosity verbosity,
                                    WriteStage::Kind kind, const TargetWriter& write);

// A query on `meta`'s collection takes its default collation unless it
// named one (`meta` may be null: no collection, no default).
inline void ApplyDefaultCollation(CanonicalQuery* cq, const CollectionMeta* meta) {
  if (meta != nullptr) cq->UseDefaultCollation(meta->options()->collator);
}
// The collation an operation on `meta` runs with: `given`'s, else the
// collection's default (null: simple). Errors: Collator::Make's.
StatusOr<CollatorPtr> OperationCollator(const std::optional<Document>& given,
                                        const CollectionMeta* meta);

// $vectorSearch over `coll` (api/vector_search.cc), as an operation of
// `session` (null: none): the documents, best first, each with its score as
// its last field kVectorSearchScoreField.
StatusOr<std::vector<Document>> RunVectorSearch(const std::shared_ptr<const Engine>& engine,
                                                const std::shared_ptr<SessionState>& session,
                                                const std::string& db, const std::string& coll,
                                                const VectorSearchRequest& request);

// The collection's metadata for a read (null when it does not exist).
StatusOr<std::shared_ptr<CollectionMeta>> LookupForRead(const Engine& engine, const std::string& db,
                                                        const std::string& name);

// Checks that an update's result stays within 16 MiB (code 17419) and 100
// levels of nesting (only below `changed_paths` when given: the rest of the
// document was already within the limit).
Status CheckUpdateResultSize(const Document& doc,
                             const std::vector<std::string>* changed_paths = nullptr);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_API_COLLECTION_INTERNAL_H_

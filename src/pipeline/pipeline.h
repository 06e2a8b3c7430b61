// pipeline/pipeline.h: MongoDB's aggregation pipeline ([{$match: ...},
// {$group: ...}, ...]) as a chain of document sources, each stage one class
// that parses its specification first (failing with MongoDB's code and
// message before any document is read) and then pulls documents from the
// stage before it.
//
// A leading run of $match, $sort, $skip and $limit is the pipeline's find:
// it goes to the query planner (`FindFn`), so a pipeline uses indexes as the
// equivalent find does; the rest runs here, over the expression evaluator
// (query/expression/). Before that, each $match moves ahead of the stages
// that do not change what it reads ($sort; $addFields/$set/$unset, $unwind
// and $lookup of other fields), so it filters early and, at the front,
// reaches the find (a view's reads gain the most); a $sort followed by
// $limit (or $skip, $limit) keeps only what the limit needs (a top-k); a
// $lookup on _id reads each single value's match by a point read.
//
// Stages (issue 14, in progress): $match (with $expr), $project,
// $addFields/$set, $unset, $replaceRoot/$replaceWith (those four shared
// with update pipelines: query/expression/document_transform.h), $sort,
// $skip, $limit, $count, $group (the accumulators of
// pipeline/accumulators.h), $sortByCount, $unwind, $lookup (localField/
// foreignField: an indexed loop, a find per document, when foreignField
// leads an index; else a hash join of the foreign collection read once,
// when it fits the memory limit; else a find (a scan) per document; let + pipeline, the sub-pipeline run per input
// document with the let variables bound; and the combined form, whose
// equality runs first as the sub-pipeline's find), $unionWith, $sample,
// $facet, $bucket, $bucketAuto (bucket_stages.cc), $redact, $graphLookup
// (recursive_stages.cc: breadth first through the foreign collection's
// finds, so an index on connectToField is used), $out and $merge (every
// whenMatched/whenNotMatched mode; write_stages.cc, all or nothing through
// a PipelineTarget, run when the pipeline is opened), $setWindowFields
// (window_stage.cc), $collStats (storageStats, count) and $indexStats first
// in a collection's pipeline, and $documents first in
// a pipeline without a collection (OpenCollectionlessPipeline). $changeStream
// fails with 40573 as on a standalone mongod ("only supported on replica
// sets"); MongoDB's other stages are NotImplemented (238); an unknown name
// is 40324.
//
// Blocking stages ($sort, $group, $sample, $facet, $bucketAuto,
// $setWindowFields, $densify, $fill, a hash join's table) hold at most
// 100 MB each; past it they fail with QueryExceededMemoryLimitNoDiskUseAllowed
// (292). With allowDiskUse, $sort (and the sorts of $sortByCount and
// $bucket), $group, $bucketAuto, $setWindowFields and $facet spill instead: $sort writes each full buffer as a
// sorted run and merges the runs (stable: ties keep input order); $group
// writes its groups, ordered by key, with each accumulator's partial state,
// and merges the runs key by key in spill order (so $first, $last, $push
// keep input order); its output is then in _id order. $bucketAuto writes
// sorted runs and forms its buckets as the merged runs stream by. $setWindowFields
// writes sorted runs of its rows and merges them one partition at a time (a
// partition must fit; its results go to a run); $facet writes its input to
// a run per facet. The others refuse allowDiskUse's extra room with 292 all
// the same, saying they do not spill.
//
// Thread safety: a Pipeline is used by one thread at a time.
#ifndef ROCKDOC_PIPELINE_PIPELINE_H_
#define ROCKDOC_PIPELINE_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/deadline.h"
#include "exec/plan_executor.h"
#include "query/expr_match_expression.h"
#include "rockdoc/document.h"
#include "rockdoc/options.h"
#include "rockdoc/results.h"
#include "rockdoc/status.h"
#include "stats/server_activity.h"
#include "storage/spill.h"

namespace rockdoc::internal {

// Opens a find on collection `collection` of the pipeline's database (the
// caller's snapshot or transaction).
using FindFn = std::function<StatusOr<std::unique_ptr<CursorImpl>>(
    std::string_view collection, DocumentView filter, const FindOptions& options)>;

// Where $out and $merge write: a collection opened by the caller (the api
// layer) for one all-or-nothing write. Destroying it without Commit undoes
// every write made through it.
class PipelineTarget {
 public:
  virtual ~PipelineTarget() = default;
  // The target's document matching `filter` (as its writes so far left it).
  virtual StatusOr<std::optional<Document>> FindOne(DocumentView filter) = 0;
  // Inserts (an _id is added when missing); replaces the one document
  // matching `filter` (keeping its _id).
  virtual Status Insert(DocumentView doc) = 0;
  virtual Status Replace(DocumentView filter, DocumentView doc) = 0;
  // The target's index specifications (listIndexes; none when it does not
  // exist yet).
  virtual StatusOr<std::vector<Document>> Indexes() = 0;
  virtual Status Commit() = 0;
};
// Opens collection `coll` of database `db` for $merge (`replace` false: its
// writes join the collection in one transaction) or $out (`replace` true:
// the writes go to a new collection that, on Commit, takes the target's
// place and indexes).
using OpenTargetFn = std::function<StatusOr<std::unique_ptr<PipelineTarget>>(
    std::string_view db, std::string_view coll, bool replace)>;

// The memory a blocking stage may hold (MongoDB's 100 MB).
inline constexpr int64_t kBlockingStageMemoryLimit = int64_t{100} << 20;

// Opens a new temporary run for a blocking stage to spill to.
using NewSpillRunFn = std::function<StatusOr<std::unique_ptr<SpillWriter>>()>;

// A $vectorSearch stage, decoded (pipeline/vector_search_stage.cc): the
// search the caller's PipelineOptions::vector_search runs.
struct VectorSearchRequest {
  std::string index;
  std::string path;
  std::vector<float> query_vector;
  int64_t num_candidates = 0;  // 0 with exact
  int64_t limit = 0;
  bool exact = false;
  Document filter;  // {}: none
};

struct PipelineOptions {
  // maxTimeMS: one deadline for the whole pipeline, its stages' work and
  // every find it runs ($lookup's, $graphLookup's, $unionWith's included).
  int64_t max_time_ms = 0;
  Deadline deadline;  // set from max_time_ms when the pipeline opens
  // The maxTimeMS a find of the pipeline gets: what is left of the deadline.
  int64_t FindMaxTimeMS() const { return deadline.is_set() ? deadline.RemainingMillis() : 0; }
  std::optional<Document> hint;
  std::optional<std::string> hint_name;
  int64_t memory_limit = kBlockingStageMemoryLimit;  // per blocking stage (AggregateOptions::max_blocking_stage_bytes)
  // allowDiskUse: $sort and $group past memory_limit spill sorted runs
  // through new_spill_run (storage/spill.h) instead of failing with 292.
  bool allow_disk_use = false;
  NewSpillRunFn new_spill_run;
  // Variables bound outside the pipeline: a $lookup sub-pipeline's `let`
  // (names and, per outer document, values). Null: none.
  std::shared_ptr<FilterVariables> variables;
  // The database the pipeline runs in, and how $out/$merge open their
  // target (null: $out and $merge are refused, as in explain).
  std::string database;
  OpenTargetFn open_target;
  // The sources of $collStats and $indexStats: the collection's statistics
  // and its indexes' ({name, key, accesses: {ops, since}, spec}). Null:
  // those stages are refused.
  std::function<StatusOr<CollectionStats>(std::string_view collection)> collection_stats;
  std::function<StatusOr<std::vector<Document>>(std::string_view collection)> index_stats;
  // The source of $queryStats: the query statistics of `collection` (empty:
  // of every collection, {aggregate: 1} in admin). Null: refused.
  std::function<StatusOr<std::vector<Document>>(std::string_view collection)> query_stats;
  // The source of $currentOp: the operations in flight ({aggregate: 1} in
  // admin). Null: refused.
  std::function<std::vector<Document>(const CurrentOpOptions& options)> current_op;
  // A point read of `collection`'s document whose _id equals `id`: a
  // $lookup on _id reads each single local value's match this way (as
  // MongoDB's IDHACK), with no find planned per document. Null: a find.
  std::function<StatusOr<std::optional<Document>>(std::string_view collection, const Element& id)>
      find_by_id;
  // Whether `field` of `collection` leads an index (or is _id): $lookup
  // then joins through it, else by a hash join. Null: no index is assumed.
  std::function<bool(std::string_view collection, std::string_view field)> has_index_on;
  // $vectorSearch's source: the documents of `collection` nearest to the
  // request's vector, best first, each with its score appended as
  // kVectorSearchScoreField. Null: $vectorSearch is refused.
  std::function<StatusOr<std::vector<Document>>(std::string_view collection,
                                                const VectorSearchRequest& request)>
      vector_search;
  // $listSearchIndexes' source: the collection's search indexes (of that
  // name only, when given). Null: refused.
  std::function<StatusOr<std::vector<Document>>(std::string_view collection,
                                                const std::optional<std::string>& name)>
      list_search_indexes;
};

// collStats' figures as the command and $collStats's storageStats show
// them (sizes divided by `scale`).
void AppendStorageStats(const CollectionStats& stats, int64_t scale, BsonBuilder* out);

// A stream of documents.
class DocumentSource {
 public:
  virtual ~DocumentSource() = default;
  // The next document, or nullopt at the end.
  virtual StatusOr<std::optional<Document>> Next() = 0;
};

// Parses `pipeline` (an array of stage documents) over `collection` and
// opens it: the leading find runs through `find`. Errors: 7749501 for a
// pipeline (or sub-pipeline) of more than 1,000 stages, 40323 for a stage
// that is not a one-field object, 40324 for an unknown stage, the stage's
// own codes for a bad specification; all before any document is read. Its
// results are bounded (every opened pipeline's): a document over
// kMaxBsonObjectInternalSize fails the Next that reaches it with 10334 in
// MongoDB's words (stage.h's ResultTooLarge), and every later Next too.
StatusOr<std::unique_ptr<DocumentSource>> OpenPipeline(std::string_view collection,
                                                       DocumentView pipeline,
                                                       const PipelineOptions& options,
                                                       FindFn find);

// Parses `pipeline` as OpenPipeline does, opening and reading nothing: the
// errors a view's definition gets when it is created.
Status CheckPipeline(DocumentView pipeline, const PipelineOptions& options);

// A pipeline without a collection (aggregate: 1): its first stage is
// {$documents: <an expression giving an array of documents>}, which is its
// source. Errors: 73 when the first stage is not $documents; 5858202 when
// $documents does not give an array of objects.
StatusOr<std::unique_ptr<DocumentSource>> OpenCollectionlessPipeline(DocumentView pipeline,
                                                                     const PipelineOptions& options,
                                                                     FindFn find);

// The explain of the pipeline's find on its collection (at the caller's
// verbosity).
using ExplainFindFn =
    std::function<StatusOr<Document>(DocumentView filter, const FindOptions& options)>;

// MongoDB's explain of an aggregate: when the find runs the whole pipeline,
// the find's explain; otherwise {explainVersion: "1", stages: [{$cursor:
// <the find's explain>}, {<stage>: <its specification>}, ...]}, and with
// `execute` (executionStats and allPlansExecution) the pipeline is run and
// each stage also reports nReturned and executionTimeMillisEstimate
// (cumulative, as MongoDB's).
StatusOr<Document> ExplainPipeline(std::string_view collection, DocumentView pipeline,
                                   const PipelineOptions& options, FindFn find,
                                   ExplainFindFn explain_find, bool execute);

// A DocumentSource as the library's cursor implementation.
std::unique_ptr<CursorImpl> PipelineCursor(std::unique_ptr<DocumentSource> source);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_PIPELINE_PIPELINE_H_

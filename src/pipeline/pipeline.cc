// pipeline/pipeline.cc: opening a pipeline (pipeline.h): its source (the
// leading find, a statistics source, $documents), its stages parsed through
// the stage table (stage_table.cc), its results bounded, and the pipeline
// as a cursor. The stages are one file each (pipeline/README.md).
#include "pipeline/pipeline.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/planning.h"
#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {

// The pipeline's find.
class CursorSource : public DocumentSource {
 public:
  explicit CursorSource(std::unique_ptr<CursorImpl> cursor) : cursor_(std::move(cursor)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (cursor_->Next()) {
      return std::optional<Document>(
          Document::AdoptValidated(std::string(cursor_->document().bytes())));
    }
    ROCKDOC_RETURN_IF_ERROR(cursor_->status());
    return std::optional<Document>();
  }

 private:
  std::unique_ptr<CursorImpl> cursor_;
};

// What a pipeline returns, bounded as MongoDB bounds it: a result document
// over BSONObjMaxInternalSize (16 MiB + 16 KiB), however a stage built it
// ($group's accumulators, $project, $addFields, $facet, $lookup, ...), is
// an error (10334, MongoDB's words), never a larger answer. The next call
// fails again: the pipeline does not go on past it.
class BoundedResults : public DocumentSource {
 public:
  explicit BoundedResults(std::unique_ptr<DocumentSource> input) : input_(std::move(input)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (!failed_.ok()) return failed_;
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
    if (doc && doc->size() > static_cast<size_t>(kMaxBsonObjectInternalSize)) {
      failed_ = ResultTooLarge(*doc);
      return failed_;
    }
    return doc;
  }

 private:
  std::unique_ptr<DocumentSource> input_;
  Status failed_;
};

// A pipeline ending in $out or $merge writes when it is opened, as the
// aggregate command does (its cursor is then empty); an error is the open's.
// Every opened pipeline leaves through here, its results bounded.
StatusOr<std::unique_ptr<DocumentSource>> RunWrites(const std::vector<Element>& stages,
                                                    std::unique_ptr<DocumentSource> source) {
  if (!stages.empty() && IsWriteStage(stages.back().key())) {
    ROCKDOC_RETURN_IF_ERROR(source->Next().status());
  }
  return std::unique_ptr<DocumentSource>(std::make_unique<BoundedResults>(std::move(source)));
}

class PipelineCursorImpl : public CursorImpl {
 public:
  explicit PipelineCursorImpl(std::unique_ptr<DocumentSource> source) : source_(std::move(source)) {}
  bool Next() override {
    if (!status_.ok() || done_) return false;
    StatusOr<std::optional<Document>> next = source_->Next();
    if (!next.ok()) {
      status_ = next.status();
      return false;
    }
    if (!*next) {
      done_ = true;
      return false;
    }
    current_ = std::move(**next);
    return true;
  }
  DocumentView document() const override { return current_.view(); }
  Status status() const override { return status_; }

 private:
  std::unique_ptr<DocumentSource> source_;
  Document current_;
  Status status_;
  bool done_ = false;
};

// $vectorSearch's results without the field that carries their score to
// {$meta: "vectorSearchScore"} (MongoDB keeps it as metadata, never as a
// field).
class WithoutScoreSource final : public DocumentSource {
 public:
  explicit WithoutScoreSource(std::unique_ptr<DocumentSource> input) : input_(std::move(input)) {}
  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> d, input_->Next());
    if (!d || !d->Get(kVectorSearchScoreField).ok()) return d;
    BsonBuilder b;
    for (Element e : d->view()) {
      if (e.key() != kVectorSearchScoreField) b.AppendElement(e);
    }
    return std::optional<Document>(std::move(b).Build());
  }

 private:
  std::unique_ptr<DocumentSource> input_;
};

std::unique_ptr<DocumentSource> WithoutSearchScore(std::unique_ptr<DocumentSource> input) {
  return std::make_unique<WithoutScoreSource>(std::move(input));
}

// The source that opens a collection's pipeline in place of its find
// (StageDef::source: $collStats, $indexStats, $queryStats), or null.
StageSource SourceOf(const std::vector<Element>& stages) {
  if (stages.empty()) return nullptr;
  const StageDef* def = FindStage(stages[0].key());
  return def != nullptr ? def->source : nullptr;
}

}  // namespace

std::unique_ptr<DocumentSource> MakeCursorSource(std::unique_ptr<CursorImpl> cursor) {
  return std::make_unique<CursorSource>(std::move(cursor));
}

// The options with maxTimeMS's deadline set, once, at the outermost open
// (sub-pipelines inherit it).
PipelineOptions WithDeadline(const PipelineOptions& options) {
  PipelineOptions out = options;
  if (!out.deadline.is_set() && out.max_time_ms > 0) out.deadline = Deadline::AfterMillis(out.max_time_ms);
  return out;
}

StatusOr<std::unique_ptr<DocumentSource>> OpenPipeline(std::string_view collection,
                                                       DocumentView pipeline,
                                                       const PipelineOptions& given,
                                                       FindFn find) {
  const PipelineOptions options = WithDeadline(given);
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, StageElements(pipeline));
  if (const StageSource source = SourceOf(stages)) {
    // A source of its own: the collection's statistics, then the rest.
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> docs, source(collection, stages[0], options));
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Stage>> chain,
                             ParseStages(stages, 1, options, find, /*in_facet=*/false));
    std::unique_ptr<DocumentSource> out = Connect(MakeVectorSource(std::move(docs)), std::move(chain));
    if (stages[0].key() == "$vectorSearch") out = WithoutSearchScore(std::move(out));
    return RunWrites(stages, std::move(out));
  }

  ROCKDOC_ASSIGN_OR_RETURN(LeadingFind leading, Pushdown(stages, options));
  // The rest, parsed before the find opens.
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Stage>> chain,
                           ParseStages(stages, leading.next, options, find, /*in_facet=*/false));
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CursorImpl> cursor,
                           find(collection, leading.filter.view(), leading.options));
  return RunWrites(stages, Connect(std::make_unique<CursorSource>(std::move(cursor)), std::move(chain)));
}

Status CheckPipeline(DocumentView pipeline, const PipelineOptions& options) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, StageElements(pipeline));
  // $unionWith opens its pipeline as it is parsed: over nothing, here.
  const FindFn no_find = [](std::string_view, DocumentView, const FindOptions&)
      -> StatusOr<std::unique_ptr<CursorImpl>> {
    return PipelineCursor(MakeVectorSource({}));
  };
  size_t from = 0;
  if (SourceOf(stages) != nullptr) {
    from = 1;
  } else {
    ROCKDOC_ASSIGN_OR_RETURN(LeadingFind leading, Pushdown(stages, options));
    from = leading.next;
  }
  return ParseStages(stages, from, options, no_find, /*in_facet=*/false).status();
}

std::unique_ptr<CursorImpl> PipelineCursor(std::unique_ptr<DocumentSource> source) {
  return std::make_unique<PipelineCursorImpl>(std::move(source));
}

StatusOr<std::unique_ptr<DocumentSource>> OpenCollectionlessPipeline(DocumentView pipeline,
                                                                     const PipelineOptions& given,
                                                                     FindFn find) {
  const PipelineOptions options = WithDeadline(given);
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, StageElements(pipeline));
  if (!stages.empty() && (stages[0].key() == "$queryStats" || stages[0].key() == "$currentOp")) {
    // Every collection's statistics, or the operations in flight: MongoDB's
    // form, in admin only.
    if (options.database != "admin") {
      return StageFailed(73, std::string(stages[0].key()) +
                                 " must be run against the 'admin' database with {aggregate: 1}");
    }
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> docs, SourceOf(stages)("", stages[0], options));
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Stage>> chain,
                             ParseStages(stages, 1, options, find, /*in_facet=*/false));
    std::unique_ptr<DocumentSource> out = Connect(MakeVectorSource(std::move(docs)), std::move(chain));
    if (stages[0].key() == "$vectorSearch") out = WithoutSearchScore(std::move(out));
    return RunWrites(stages, std::move(out));
  }
  if (stages.empty() || stages[0].key() != "$documents") {
    return StageFailed(
        73, "{aggregate: 1} is not valid for '" +
                (stages.empty() ? std::string("an empty pipeline") : std::string(stages[0].key())) +
                "'; a collection is required.");
  }
  VariableScope scope = options.variables != nullptr ? options.variables->scope : VariableScope();
  ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr expr, ParseExpression(stages[0], &scope));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Stage>> chain,
                           ParseStages(stages, 1, options, find, /*in_facet=*/false));
  ExpressionVariables vars;
  vars.now_ms = NowMillis();
  if (options.variables != nullptr) vars.user = options.variables->values;
  vars.user.resize(std::max<size_t>(vars.user.size(), static_cast<size_t>(scope.id_count())));
  ROCKDOC_ASSIGN_OR_RETURN(Value docs, expr->Evaluate(vars));
  std::vector<Document> out;
  bool objects = docs.type() == BsonType::kArray;
  if (objects) {
    for (const Element& d : docs.element().Array()) {
      if (d.type() != BsonType::kDocument) {
        objects = false;
        break;
      }
      out.push_back(Document::AdoptValidated(std::string(d.Document().bytes())));
    }
  }
  if (!objects) {
    return StageFailed(5858202,
                       "error during $documents stage: $documents must evaluate to an array "
                       "of objects");
  }
  return RunWrites(stages, Connect(MakeVectorSource(std::move(out)), std::move(chain)));
}

}  // namespace rockdoc::internal

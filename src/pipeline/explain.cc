// pipeline/explain.cc: explain of an aggregate (pipeline.h's
// ExplainPipeline): the find's explain as the $cursor stage, then each
// stage's specification with what its class adds (Stage::AppendExplain,
// and after a run AppendExecutionStats), counted and timed per stage.
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "pipeline/planning.h"
#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {

// Counts (and times) the documents a source gives, for explain.
class CountingSource : public DocumentSource {
 public:
  explicit CountingSource(std::unique_ptr<DocumentSource> input) : input_(std::move(input)) {}
  StatusOr<std::optional<Document>> Next() override {
    const auto start = std::chrono::steady_clock::now();
    StatusOr<std::optional<Document>> next = input_->Next();
    nanos_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    if (next.ok() && *next) ++returned_;
    return next;
  }
  int64_t returned() const { return returned_; }
  int64_t millis() const { return nanos_ / 1000000; }

 private:
  std::unique_ptr<DocumentSource> input_;
  int64_t returned_ = 0;
  int64_t nanos_ = 0;
};

// {explainVersion: "1", stages: [{$cursor: <find explain>, nReturned?,
// executionTimeMillisEstimate?}, {<stage>: <spec>, nReturned?, ...}]}.
void AppendStages(const std::vector<Element>& stages, size_t from, const Document& find_explain,
                  const std::vector<const CountingSource*>& counters,
                  const std::vector<const Stage*>& explained, BsonBuilder* out) {
  out->AppendString("explainVersion", "1");
  out->OpenArray("stages");
  auto stats = [&](size_t k) {
    if (k < counters.size()) {
      out->AppendInt64("nReturned", counters[k]->returned());
      out->AppendInt64("executionTimeMillisEstimate", counters[k]->millis());
    }
  };
  out->OpenDocument("");
  // The find's plan and statistics (its command and ok belong to the
  // aggregate's reply, not to the stage).
  out->OpenDocument("$cursor");
  for (const Element& e : find_explain.view()) {
    if (e.key() != "ok" && e.key() != "command" && e.key() != "explainVersion" &&
        e.key() != "serverInfo") {
      out->AppendElement(e);
    }
  }
  out->Close();
  stats(0);
  out->Close();
  for (size_t i = from; i < stages.size(); ++i) {
    out->OpenDocument("");
    out->AppendElement(stages[i]);
    if (i - from < explained.size()) explained[i - from]->AppendExplain(out);
    stats(i - from + 1);
    if (!counters.empty() && i - from < explained.size()) {
      explained[i - from]->AppendExecutionStats(out);
    }
    out->Close();
  }
  out->Close();
}

}  // namespace

StatusOr<Document> ExplainPipeline(std::string_view collection, DocumentView pipeline,
                                   const PipelineOptions& given, FindFn find,
                                   ExplainFindFn explain_find, bool execute) {
  const PipelineOptions options = WithDeadline(given);
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, StageElements(pipeline));
  ROCKDOC_ASSIGN_OR_RETURN(LeadingFind leading, Pushdown(stages, options));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Stage>> chain,
                           ParseStages(stages, leading.next, options, find, /*in_facet=*/false));
  ROCKDOC_ASSIGN_OR_RETURN(Document find_explain,
                           explain_find(leading.filter.view(), leading.options));
  if (leading.next == stages.size()) return find_explain;  // the find is the pipeline

  // The stages as the pipeline lists them (the deadline checks between
  // them aside).
  std::vector<const Stage*> explained;
  for (const std::unique_ptr<Stage>& s : chain) {
    if (dynamic_cast<const DeadlineStage*>(s.get()) == nullptr) explained.push_back(s.get());
  }
  std::vector<const CountingSource*> counters;
  if (execute) {
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CursorImpl> cursor,
                             find(collection, leading.filter.view(), leading.options));
    auto counted = std::make_unique<CountingSource>(MakeCursorSource(std::move(cursor)));
    counters.push_back(counted.get());
    std::unique_ptr<DocumentSource> source = std::move(counted);
    for (std::unique_ptr<Stage>& stage : chain) {
      stage->set_input(std::move(source));
      if (dynamic_cast<const DeadlineStage*>(stage.get()) != nullptr) {
        source = std::move(stage);  // not a stage of the pipeline's own
        continue;
      }
      auto c = std::make_unique<CountingSource>(std::move(stage));
      counters.push_back(c.get());
      source = std::move(c);
    }
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, source->Next());
      if (!doc) break;
    }
    BsonBuilder b;
    AppendStages(stages, leading.next, find_explain, counters, explained, &b);
    return std::move(b).Build();
  }
  BsonBuilder b;
  AppendStages(stages, leading.next, find_explain, counters, explained, &b);
  return std::move(b).Build();
}

}  // namespace rockdoc::internal

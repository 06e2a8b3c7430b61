// pipeline/stage_table.cc: the stage table (stage.h) and the parse of a
// pipeline's stages through it. The table is built once, from each stage
// file's Add...Stages: the list below is the only place that names them.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {

// A change stream is not a pipeline over a snapshot: Watch opens it (and
// the aggregate command, which sends a $changeStream pipeline there).
StatusOr<std::unique_ptr<Stage>> ParseChangeStream(const Element& spec, const StageContext& ctx) {
  (void)spec;
  (void)ctx;
  return StageFailed(40573,
                     "The $changeStream stage opens a change stream, which Collection::Watch, "
                     "Database::Watch and Client::Watch (or the aggregate command) open; "
                     "Aggregate runs pipelines over a snapshot");
}

// MongoDB's stages rockdoc does not have: NotImplemented (238), not 40324.
StatusOr<std::unique_ptr<Stage>> ParseNotImplemented(const Element& spec,
                                                     const StageContext& ctx) {
  (void)ctx;
  return Status(ErrorCode::kNotImplemented,
                "the stage " + std::string(spec.key()) + " is not supported by rockdoc yet");
}

void AddRefusedStages(StageTable* table) {
  table->emplace("$changeStream", StageDef{.parse = &ParseChangeStream});
  for (std::string_view name :
       {"$changeStreamSplitLargeEvent", "$listLocalSessions",
        "$listSampledQueries", "$listSearchIndexes", "$listSessions", "$planCacheStats",
        "$search", "$searchMeta", "$shardedDataDistribution", "$vectorSearch"}) {
    table->emplace(name, StageDef{.parse = &ParseNotImplemented});
  }
}

const StageTable& Table() {
  static const StageTable* const table = [] {
    auto* t = new StageTable;
    AddMatchStage(t);
    AddTransformStages(t);
    AddSkipLimitStages(t);
    AddSortStage(t);
    AddCountStage(t);
    AddGroupStages(t);
    AddUnwindStage(t);
    AddLookupStage(t);
    AddUnionWithStage(t);
    AddSampleStage(t);
    AddFacetStage(t);
    AddSourceStages(t);
    AddVectorSearchStages(t);
    AddBucketStages(t);
    AddRecursiveStages(t);
    AddWindowStage(t);
    AddFillStages(t);
    AddWriteStages(t);
    AddGeoNearStage(t);
    AddRefusedStages(t);
    return t;
  }();
  return *table;
}

}  // namespace

const StageDef* FindStage(std::string_view name) {
  const StageTable& table = Table();
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

bool IsWriteStage(std::string_view name) {
  const StageDef* def = FindStage(name);
  return def != nullptr && def->place == StagePlace::kLast;
}

std::vector<std::string_view> StageNames() {
  std::vector<std::string_view> names;
  for (const auto& [name, def] : Table()) names.push_back(name);
  return names;
}

StatusOr<std::vector<std::unique_ptr<Stage>>> ParseStages(const std::vector<Element>& stages,
                                                          size_t from,
                                                          const PipelineOptions& options,
                                                          const FindFn& find, bool in_facet) {
  // Names bound outside ($lookup's let) are in scope, with the first ids.
  VariableScope scope = options.variables != nullptr ? options.variables->scope : VariableScope();
  const int64_t now_ms = NowMillis();
  std::vector<std::unique_ptr<Stage>> chain;
  for (size_t i = from; i < stages.size(); ++i) {
    const Element& s = stages[i];
    const std::string_view name = s.key();
    const StageDef* def = FindStage(name);
    if (def == nullptr) {
      return StageFailed(40324, "Unrecognized pipeline stage name: '" + std::string(name) + "'");
    }
    // A source runs before these stages; a first stage that parses
    // ($geoNear, whose find the pipeline ran) is at 0 and nowhere else.
    if (def->place == StagePlace::kFirst && (def->parse == nullptr || i != 0)) {
      return StageFailed(40602, std::string(name) + " is only valid as the first stage in a pipeline");
    }
    if (in_facet && !def->in_facet) {
      return StageFailed(40600,
                         std::string(name) + " is not allowed to be used within a $facet stage");
    }
    if (def->place == StagePlace::kLast && i + 1 != stages.size()) {
      return StageFailed(40601, std::string(name) + " can only be the final stage in the pipeline");
    }
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<Stage> stage,
                             def->parse(s, StageContext{&scope, now_ms, options, find, stages, i}));
    if (options.deadline.checked()) chain.push_back(std::make_unique<DeadlineStage>(options.deadline));
    chain.push_back(std::move(stage));
  }
  // After the last stage too, so that its own work runs under the deadline.
  if (options.deadline.checked() && !chain.empty()) {
    chain.push_back(std::make_unique<DeadlineStage>(options.deadline));
  }
  return chain;
}

}  // namespace rockdoc::internal

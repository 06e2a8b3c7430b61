// pipeline/stage.h: what the pipeline's stage files share: the Stage base
// classes, the context a parser gets, the stage table each file registers its
// stages with, and the helpers several stages use (stage.cc, spilled_runs.cc).
// One file per stage or small family (sort_stage.cc, lookup_stage.cc,
// bucket_stages.cc, ...); pipeline/README.md says how to add one. Not part
// of the layer's interface.
#ifndef ROCKDOC_PIPELINE_STAGE_H_
#define ROCKDOC_PIPELINE_STAGE_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/accumulators.h"
#include "pipeline/pipeline.h"
#include "query/expression/expression.h"
#include "query/sort_pattern.h"

namespace rockdoc::internal {

// A stage over the stage before it.
class Stage : public DocumentSource {
 public:
  virtual void set_input(std::unique_ptr<DocumentSource> input) { input_ = std::move(input); }
  // Fields explain shows beside the stage's specification ($lookup's
  // strategy).
  virtual void AppendExplain(BsonBuilder* out) const { (void)out; }
  // What explain's executionStats adds once the stage has run ($sort's and
  // $group's usedDisk and spills).
  virtual void AppendExecutionStats(BsonBuilder* out) const { (void)out; }

 protected:
  std::unique_ptr<DocumentSource> input_;
};

// A stage that evaluates expressions against each document: their
// variables ($$ROOT the document, $$NOW the pipeline's instant, the names
// bound outside the pipeline, room for the $let variables parsed).
class ExpressionStage : public Stage {
 public:
  // `bound`: the variables bound outside the pipeline ($lookup's let), whose
  // ids come first.
  ExpressionStage(int variables, int64_t now_ms, std::shared_ptr<FilterVariables> bound)
      : variables_(variables), now_ms_(now_ms), bound_(std::move(bound)) {}

 protected:
  ExpressionVariables VariablesFor(const Document& doc) const {
    ExpressionVariables vars;
    vars.root = doc.view();
    vars.now_ms = now_ms_;
    if (bound_ != nullptr) vars.user = bound_->values;
    if (vars.user.size() < static_cast<size_t>(variables_)) vars.user.resize(variables_);
    return vars;
  }

 private:
  int variables_;
  int64_t now_ms_;
  std::shared_ptr<FilterVariables> bound_;
};

// A stage that reads its whole input before it answers ($bucketAuto,
// $setWindowFields, $densify, $fill): Build makes the output, once.
class BlockingStage : public ExpressionStage {
 public:
  using ExpressionStage::ExpressionStage;
  StatusOr<std::optional<Document>> Next() final {
    if (!built_) {
      ROCKDOC_RETURN_IF_ERROR(Build(&results_));
      built_ = true;
    }
    if (spilled_results_ != nullptr) return spilled_results_->Next();
    if (next_ == results_.size()) return std::optional<Document>();
    return std::optional<Document>(std::move(results_[next_++]));
  }

 protected:
  virtual Status Build(std::vector<Document>* out) = 0;
  // A Build that wrote its results to a spill run (more than the memory
  // limit holds) hands the run's reader here instead of filling `out`.
  void set_spilled_results(std::unique_ptr<DocumentSource> source) {
    spilled_results_ = std::move(source);
  }

 private:
  bool built_ = false;
  std::vector<Document> results_;
  size_t next_ = 0;
  std::unique_ptr<DocumentSource> spilled_results_;
};

// The source followed by the chain.
std::unique_ptr<DocumentSource> Connect(std::unique_ptr<DocumentSource> source,
                                        std::vector<std::unique_ptr<Stage>> chain);

// Stages that one stage name stands for ($sortByCount: $group then $sort),
// as one stage.
class SequenceStage : public Stage {
 public:
  explicit SequenceStage(std::vector<std::unique_ptr<Stage>> parts) : parts_(std::move(parts)) {}
  void set_input(std::unique_ptr<DocumentSource> input) override {
    tail_ = Connect(std::move(input), std::move(parts_));
  }
  StatusOr<std::optional<Document>> Next() override { return tail_->Next(); }

 private:
  std::vector<std::unique_ptr<Stage>> parts_;
  std::unique_ptr<DocumentSource> tail_;
};

// Before each stage, and after the last, when a deadline is set: stops the
// pipeline with MaxTimeMSExpired (50) once it passes, however the stages
// spend the time, and makes it the thread's CurrentDeadline() while the
// stages before it work (a regex match in an expression stops there too).
class DeadlineStage : public Stage {
 public:
  explicit DeadlineStage(const Deadline& deadline) : deadline_(deadline), checker_(&deadline_) {}
  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_RETURN_IF_ERROR(checker_.Tick());
    DeadlineScope scope(&deadline_);
    return input_->Next();
  }

 private:
  Deadline deadline_;
  DeadlineChecker checker_;
};

// What parsing one stage may use.
struct StageContext {
  VariableScope* scope;  // the pipeline's names
  int64_t now_ms;        // $$NOW
  const PipelineOptions& options;
  const FindFn& find;
  // The (sub-)pipeline's stages and this one's index in them ($sort looks
  // ahead for the $limit that makes it a top-k).
  const std::vector<Element>& stages;
  size_t index;
};

// ---- the stage table ----
//
// Every stage name rockdoc knows is one entry, added by the file that
// defines the stage (its Add...Stages function, called once when the table
// is first used: an explicit list in stage_table.cc, so that no stage
// depends on a static initializer the linker could drop from an archive).
// The entry holds the parser; the stage's class holds its explain
// (Stage::AppendExplain, AppendExecutionStats) and its spilling (a
// SpillPolicy from the options). A name in no entry is 40324.

// Parses a stage's specification (`spec`: the stage's one field) before
// anything runs, failing with MongoDB's code and message.
using StageParser = StatusOr<std::unique_ptr<Stage>> (*)(const Element& spec,
                                                          const StageContext& ctx);
// The documents a source stage gives ($collStats, $indexStats, $queryStats
// of `collection`; "" for $queryStats of every collection).
using StageSource = StatusOr<std::vector<Document>> (*)(std::string_view collection,
                                                        const Element& spec,
                                                        const PipelineOptions& options);
// For the planner's $match movement (planning.h): the root fields the stage
// may change, when a $match may pass it; false when it may not (or the
// specification is too malformed to say).
using ChangedRootsFn = bool (*)(const Element& spec, std::set<std::string>* changed);

// Where a stage may stand.
enum class StagePlace {
  kAnywhere,
  kFirst,  // a source: 40602 anywhere else
  kLast,   // a write ($out, $merge): 40601 anywhere else
};

struct StageDef {
  StageParser parse = nullptr;  // null for a source, which only opens a pipeline
  StagePlace place = StagePlace::kAnywhere;
  bool in_facet = true;  // false: 40600 inside a $facet's pipelines
  StageSource source = nullptr;          // a source that opens a collection's pipeline
  ChangedRootsFn changed_roots = nullptr;  // null: a $match never moves ahead of it
};
using StageTable = std::map<std::string_view, StageDef>;

// The entry of stage `name`, or null for a name rockdoc does not know.
const StageDef* FindStage(std::string_view name);
// Whether `name` is a write stage ($out, $merge: its place is last).
bool IsWriteStage(std::string_view name);
// Every stage name in the table, sorted (tests list them).
std::vector<std::string_view> StageNames();

// Each file adds its stages.
void AddMatchStage(StageTable* table);
void AddGeoNearStage(StageTable* table);
void AddTransformStages(StageTable* table);
void AddSkipLimitStages(StageTable* table);
void AddSortStage(StageTable* table);
void AddCountStage(StageTable* table);
void AddGroupStages(StageTable* table);
void AddUnwindStage(StageTable* table);
void AddLookupStage(StageTable* table);
void AddUnionWithStage(StageTable* table);
void AddSampleStage(StageTable* table);
void AddFacetStage(StageTable* table);
void AddSourceStages(StageTable* table);
void AddVectorSearchStages(StageTable* table);
void AddBucketStages(StageTable* table);
void AddRecursiveStages(StageTable* table);
void AddWindowStage(StageTable* table);
void AddFillStages(StageTable* table);
void AddWriteStages(StageTable* table);

// Parses stages[from..] into the stages that run after a source (the
// pipeline's find, or a $facet's input), with a DeadlineStage between them
// when the options have a deadline. `in_facet`: the stages $facet refuses
// inside itself are 40600.
StatusOr<std::vector<std::unique_ptr<Stage>>> ParseStages(const std::vector<Element>& stages,
                                                          size_t from,
                                                          const PipelineOptions& options,
                                                          const FindFn& find, bool in_facet);

// A stage's named arguments, decoded from a table of the names it knows:
// each field of `spec` (an object) goes to its slot; a name not in the
// table is 40415 "BSON field '<stage>.<name>' is an unknown field.".
struct StageField {
  std::string_view name;
  Element* slot;
};
Status DecodeStageFields(std::string_view stage, DocumentView spec,
                         std::initializer_list<StageField> fields);

// MongoDB's QueryExceededMemoryLimitNoDiskUseAllowed (292) for `stage`
// (`allow_disk_use`: the pipeline allowed spilling, which `stage` cannot).
Status MemoryExceeded(std::string_view stage, bool allow_disk_use = false);

// BSONObjectTooLarge (10334) in MongoDB's words for a result document over
// kMaxBsonObjectInternalSize: "BSONObj size: N (0xN) is invalid. Size must
// be between 0 and 16793600(16MB) First element: _id: ...".
Status ResultTooLarge(const Document& doc);

// How a blocking stage that can spill ($sort, $group) holds its input.
struct SpillPolicy {
  int64_t memory_limit = kBlockingStageMemoryLimit;
  bool allow_disk_use = false;
  NewSpillRunFn new_run;
  static SpillPolicy Of(const PipelineOptions& options) {
    return {options.memory_limit, options.allow_disk_use, options.new_spill_run};
  }
  bool can_spill() const { return allow_disk_use && new_run != nullptr; }
};

// The sorted runs a stage spilled, read back together: each run's head
// record, the least of the heads, and the next record of one run.
class SpilledRuns {
 public:
  // Writes one more run: `write` adds its records, in order.
  Status Spill(const SpillPolicy& policy, const std::function<Status(SpillWriter*)>& write);
  bool empty() const { return runs_.empty(); }
  size_t size() const { return runs_.size(); }
  // explain's {usedDisk, spills}.
  void AppendExecutionStats(BsonBuilder* out) const {
    out->AppendBool("usedDisk", !runs_.empty());
    out->AppendInt64("spills", static_cast<int64_t>(runs_.size()));
  }
  // Reads every run's first record; once, after the last Spill.
  Status Start();
  // The run whose head is least by `compare` (ties: the earliest run), or
  // -1 once every run is spent.
  StatusOr<int> Least(
      const std::function<StatusOr<int>(DocumentView, DocumentView)>& compare) const;
  const Document& head(int run) const { return *heads_[run]; }
  Status Advance(int run);

 private:
  std::vector<std::unique_ptr<SpillReader>> runs_;
  std::vector<std::optional<Document>> heads_;
};
// A Status of MongoDB's numeric `code` (many are not in the ErrorCode table).
Status StageFailed(int code, std::string message);

// A value as MongoDB's messages show it (the shell's form).
std::string Shown(const Element& e);

// A field name of an output document: not empty, no '$' first.
Status CheckFieldName(std::string_view stage, std::string_view name);

// The clock's time for $$NOW.
int64_t NowMillis();

// A held document's share of a blocking stage's memory: its object and its
// bytes on the heap. Inline: $sort counts every document it holds.
inline int64_t DocumentBytes(const Document& doc) {
  return static_cast<int64_t>(sizeof(Document) + doc.size() + 16);
}

// The argument of $skip or $limit (`stage`), checked with MongoDB's errors.
StatusOr<int64_t> StageCount(std::string_view stage, const Element& e);

// ---- paths inside documents (no traversal of arrays), for $unwind and $lookup ----

// The field at `parts` (missing when a part on the way is not a document).
Element GetField(DocumentView doc, const std::vector<std::string>& parts);

// Appends the value of a field, named `key`, to `out`.
using FieldWriter = std::function<void(std::string_view key, BsonBuilder* out)>;

// `doc` with the field at `parts` set to what `write` appends (removed when
// `write` is null), creating documents along the way (a non-document in the
// way is replaced, as $addFields does). The field keeps its place when it
// exists and is added at the end when not.
void SetFieldWith(DocumentView doc, const std::vector<std::string>& parts, size_t i,
                  const FieldWriter& write, BsonBuilder* out);

// `doc` with the field at `parts` set to `value` (removed when `value` is
// missing).
Document WithField(DocumentView doc, const std::vector<std::string>& parts, const Element& value);

// Stages other files build on.
std::unique_ptr<Stage> MakeGroupStage(ExpressionPtr id, std::vector<AccumulatorSpec> accumulators,
                                      const StageContext& ctx);
std::unique_ptr<Stage> MakeSortStage(SortPattern pattern, const PipelineOptions& options);
// The documents of a vector, as a source.
std::unique_ptr<DocumentSource> MakeVectorSource(std::vector<Document> docs);
// The documents of a spill run (each record one document's BSON), as a source.
std::unique_ptr<DocumentSource> MakeSpillSource(std::unique_ptr<SpillReader> run);
// The documents of a find's cursor, as a source.
std::unique_ptr<DocumentSource> MakeCursorSource(std::unique_ptr<CursorImpl> cursor);

// The options with maxTimeMS's deadline set, once, at the outermost open
// (sub-pipelines inherit it).
PipelineOptions WithDeadline(const PipelineOptions& options);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_PIPELINE_STAGE_H_

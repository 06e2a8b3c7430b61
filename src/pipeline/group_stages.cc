// pipeline/group_stages.cc: $group (pipeline.h; its accumulators in
// accumulators.h), spilling with allowDiskUse each accumulator's partial
// state in runs merged key by key, and $sortByCount, a $group then a $sort.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/accumulators.h"
#include "pipeline/stage.h"
#include "query/sort_pattern.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

class GroupStage : public ExpressionStage {
 public:
  GroupStage(ExpressionPtr id, std::vector<AccumulatorSpec> accumulators, int variables,
             int64_t now_ms, SpillPolicy policy, std::shared_ptr<FilterVariables> bound)
      : ExpressionStage(variables, now_ms, std::move(bound)),
        id_(std::move(id)),
        accumulators_(std::move(accumulators)),
        policy_(std::move(policy)) {}
  void AppendExecutionStats(BsonBuilder* out) const override { runs_.AppendExecutionStats(out); }

  StatusOr<std::optional<Document>> Next() override {
    if (!grouped_) {
      ROCKDOC_RETURN_IF_ERROR(GroupAll());
      grouped_ = true;
    }
    if (!runs_.empty()) return NextMerged();
    if (next_ == groups_.size()) return std::optional<Document>();
    return Output(groups_[next_++]);
  }

 private:
  struct GroupState {
    Value key;
    std::vector<Accumulator> accumulators;
  };

  GroupState NewGroup(Value key) const {
    GroupState g;
    g.key = std::move(key);
    for (const AccumulatorSpec& a : accumulators_) g.accumulators.emplace_back(&a);
    return g;
  }

  StatusOr<std::optional<Document>> Output(const GroupState& g) const {
    BsonBuilder b;
    b.AppendElementAs("_id", g.key.ok() ? g.key.element() : NullValue().element());
    for (size_t i = 0; i < accumulators_.size(); ++i) {
      ROCKDOC_ASSIGN_OR_RETURN(Value v, g.accumulators[i].Result());
      b.AppendElementAs(accumulators_[i].field, v.element());
    }
    return std::optional<Document>(std::move(b).Build());
  }

  Status GroupAll() {
    int64_t bytes = 0;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      const ExpressionVariables vars = VariablesFor(*doc);
      ROCKDOC_ASSIGN_OR_RETURN(Value key, id_->Evaluate(vars));
      if (!key.ok()) key = NullValue();  // a missing key groups with null
      auto it = index_.find(key);
      if (it == index_.end()) {
        // The group, its accumulators, the key twice (the group's and the
        // index's, on the heap past 15 bytes) and the index's tree node.
        const int64_t key_bytes = static_cast<int64_t>(key.element().value_size()) + 7;
        bytes += static_cast<int64_t>(sizeof(GroupState) + sizeof(Value) + 48 +
                                      accumulators_.size() * sizeof(Accumulator)) +
                 (key_bytes > 15 ? 2 * (key_bytes + 16) : 0);
        groups_.push_back(NewGroup(key));
        it = index_.emplace(std::move(key), groups_.size() - 1).first;
      }
      GroupState& g = groups_[it->second];
      for (size_t i = 0; i < accumulators_.size(); ++i) {
        ROCKDOC_ASSIGN_OR_RETURN(int64_t more, g.accumulators[i].Add(doc->view(), vars));
        bytes += more;
      }
      if (bytes > policy_.memory_limit) {
        if (!policy_.can_spill()) return MemoryExceeded("$group", policy_.allow_disk_use);
        ROCKDOC_RETURN_IF_ERROR(SpillGroups());
        bytes = 0;
      }
    }
    if (!runs_.empty()) {
      // The rest joins the runs, so that one merge makes every group.
      if (!groups_.empty()) ROCKDOC_RETURN_IF_ERROR(SpillGroups());
      ROCKDOC_RETURN_IF_ERROR(runs_.Start());
    }
    index_.clear();  // the output reads groups_ (or the runs) alone
    return Status::OK();
  }

  // Writes the groups held, in key order, as {k: key, s: [state, ...]}, and
  // forgets them.
  Status SpillGroups() {
    ROCKDOC_RETURN_IF_ERROR(runs_.Spill(policy_, [&](SpillWriter* w) -> Status {
      for (const auto& [key, at] : index_) {
        const GroupState& g = groups_[at];
        BsonBuilder b;
        b.AppendElementAs("k", g.key.element());
        b.OpenArray("s");
        for (const Accumulator& a : g.accumulators) a.AppendState("", &b);
        b.Close();
        ROCKDOC_RETURN_IF_ERROR(w->Add(std::move(b).Build().bytes()));
      }
      return Status::OK();
    }));
    index_.clear();
    groups_.clear();
    groups_.shrink_to_fit();
    return Status::OK();
  }

  // The next group of the merged runs: the least key's states, merged in
  // spill order (earlier input first).
  StatusOr<std::optional<Document>> NextMerged() {
    auto by_key = [](DocumentView a, DocumentView b) -> StatusOr<int> {
      return CompareValues(a.Get("k"), b.Get("k"));
    };
    ROCKDOC_ASSIGN_OR_RETURN(int run, runs_.Least(by_key));
    if (run < 0) return std::optional<Document>();
    GroupState g = NewGroup(Value::FromElement(runs_.head(run).Get("k")));
    int64_t held = 0;
    for (int r = run; r >= 0;) {
      const Element states = runs_.head(r).Get("s");
      if (states.type() != BsonType::kArray) {
        return Status(ErrorCode::kInternalError, "a spilled $group state is damaged");
      }
      size_t i = 0;
      for (const Element& state : states.Document()) {
        if (i == g.accumulators.size()) break;
        ROCKDOC_ASSIGN_OR_RETURN(int64_t more, g.accumulators[i++].MergeState(state));
        held += more;
      }
      // One group alone past the limit ($push of everything): merging it
      // cannot spill, as MongoDB's $push cannot (ExceededMemoryLimit).
      if (held > policy_.memory_limit) {
        return Status(ErrorCode::kExceededMemoryLimit,
                      "$group's group " + ValueToJson(g.key.element(), JsonFormat::kShell) +
                          " holds more than the memory limit (" +
                          std::to_string(policy_.memory_limit) + " bytes) and cannot spill");
      }
      ROCKDOC_RETURN_IF_ERROR(runs_.Advance(r));
      // The next run (after r) whose head has the same key.
      ROCKDOC_ASSIGN_OR_RETURN(int least, runs_.Least(by_key));
      r = -1;
      if (least >= 0 && CompareValues(runs_.head(least).Get("k"), g.key.element()) == 0) r = least;
    }
    return Output(g);
  }

  ExpressionPtr id_;
  std::vector<AccumulatorSpec> accumulators_;
  SpillPolicy policy_;
  bool grouped_ = false;
  std::map<Value, size_t, ValueLess> index_;
  std::vector<GroupState> groups_;
  size_t next_ = 0;
  SpilledRuns runs_;
};

StatusOr<std::unique_ptr<Stage>> ParseGroup(const Element& spec, const StageContext& ctx) {
  VariableScope* scope = ctx.scope;
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(15947, "a group's fields must be specified in an object");
  }
  ExpressionPtr id;
  std::vector<AccumulatorSpec> accumulators;
  for (const Element& f : spec.Document()) {
    if (f.key() == "_id") {
      ROCKDOC_ASSIGN_OR_RETURN(id, ParseExpression(f, scope));
      continue;
    }
    ROCKDOC_RETURN_IF_ERROR(CheckFieldName("$group", f.key()));
    if (f.key().find('.') != std::string_view::npos) {
      return StageFailed(40235, "The field name '" + std::string(f.key()) + "' cannot contain '.'");
    }
    if (f.type() != BsonType::kDocument || f.Document().empty()) {
      return StageFailed(40234, "The field '" + std::string(f.key()) + "' must be an accumulator object");
    }
    size_t n = 0;
    for (const Element& x : f.Document()) {
      (void)x;
      ++n;
    }
    if (n != 1) {
      return StageFailed(40238,
                         "The field '" + std::string(f.key()) + "' must specify one accumulator");
    }
    ROCKDOC_ASSIGN_OR_RETURN(AccumulatorSpec a, ParseAccumulator(f.key(), *f.Document().begin(), scope));
    accumulators.push_back(std::move(a));
  }
  if (!id) return StageFailed(15955, "a group specification must include an _id");
  return MakeGroupStage(std::move(id), std::move(accumulators), ctx);
}

// {$group: {_id: <expr>, count: {$sum: 1}}}, {$sort: {count: -1}}.
StatusOr<std::unique_ptr<Stage>> ParseSortByCount(const Element& s, const StageContext& ctx) {
  VariableScope& scope = *ctx.scope;
  if (s.type() == BsonType::kDocument && !s.Document().empty() &&
      (*s.Document().begin()).key().substr(0, 1) != "$") {
    return StageFailed(40147,
                       "the sortByCount field must be defined as a $-prefixed path or an "
                       "expression");
  }
  if (s.type() == BsonType::kString && s.String().substr(0, 1) != "$") {
    return StageFailed(40148,
                       "the sortByCount field must be defined as a $-prefixed path or an "
                       "expression");
  }
  ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr id, ParseExpression(s, &scope));
  std::vector<AccumulatorSpec> acc;
  BsonBuilder one;
  one.AppendInt32("v", 1);
  Document one_doc = std::move(one).Build();
  ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr one_expr, ParseExpression(one_doc.Get("v"), &scope));
  AccumulatorSpec count;
  count.field = "count";
  count.op = AccumulatorSpec::kSum;
  count.arg = std::move(one_expr);
  acc.push_back(std::move(count));
  std::vector<std::unique_ptr<Stage>> parts;
  parts.push_back(MakeGroupStage(std::move(id), std::move(acc), ctx));
  BsonBuilder sort;
  sort.AppendInt32("count", -1);
  ROCKDOC_ASSIGN_OR_RETURN(SortPattern pattern, SortPattern::Parse(std::move(sort).Build()));
  parts.push_back(MakeSortStage(std::move(pattern), ctx.options));
  return std::unique_ptr<Stage>(std::make_unique<SequenceStage>(std::move(parts)));
}

}  // namespace

std::unique_ptr<Stage> MakeGroupStage(ExpressionPtr id, std::vector<AccumulatorSpec> accumulators,
                                      const StageContext& ctx) {
  return std::make_unique<GroupStage>(std::move(id), std::move(accumulators),
                                      ctx.scope->id_count(), ctx.now_ms,
                                      SpillPolicy::Of(ctx.options), ctx.options.variables);
}

void AddGroupStages(StageTable* table) {
  table->emplace("$group", StageDef{.parse = &ParseGroup});
  table->emplace("$sortByCount", StageDef{.parse = &ParseSortByCount});
}

}  // namespace rockdoc::internal

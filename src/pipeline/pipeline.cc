// pipeline/pipeline.cc: the aggregation pipeline's stages (pipeline.h).
#include "pipeline/pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "bson/append_number.h"
#include "pipeline/accumulators.h"
#include "pipeline/stage.h"
#include "query/expression/document_transform.h"
#include "query/expression/expression.h"
#include "query/expr_match_expression.h"
#include "query/match_expression.h"
#include "query/sort_pattern.h"
#include "query/field_path.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

Status Failed(int code, std::string message) {
  return Status(static_cast<ErrorCode>(code), std::move(message));
}

std::string Shown(const Element& e) { return ValueToJson(e, JsonFormat::kShell); }


// A field name of an output document: not empty, no '$' first, no '.'.
Status CheckFieldName(std::string_view stage, std::string_view name) {
  if (name.empty()) return Failed(40352, "FieldPath cannot be constructed with empty string");
  if (name[0] == '$') {
    return Failed(16410, std::string(stage) +
                             ": FieldPath field names may not start with '$'. Consider using "
                             "$getField or $setField.");
  }
  return Status::OK();
}

// ---- sources ----

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



// ---- $match ----

class MatchStage : public Stage {
 public:
  explicit MatchStage(std::unique_ptr<MatchExpression> expr) : expr_(std::move(expr)) {}
  StatusOr<std::optional<Document>> Next() override {
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) return doc;
      ROCKDOC_ASSIGN_OR_RETURN(bool matched, MatchesOrError(*expr_, doc->view()));
      if (matched) return doc;
    }
  }

 private:
  std::unique_ptr<MatchExpression> expr_;
};

// ---- $project, $addFields/$set, $unset, $replaceRoot/$replaceWith ----

// One document in, one reshaped document out (query/expression/
// document_transform.h, shared with update pipelines).
class TransformStage : public ExpressionStage {
 public:
  TransformStage(std::unique_ptr<DocumentTransform> transform, int variables, int64_t now_ms,
                 std::shared_ptr<FilterVariables> bound)
      : ExpressionStage(variables, now_ms, std::move(bound)), transform_(std::move(transform)) {}
  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
    if (!doc) return doc;
    ROCKDOC_ASSIGN_OR_RETURN(Document out, transform_->Apply(doc->view(), VariablesFor(*doc)));
    return std::optional<Document>(std::move(out));
  }

 private:
  std::unique_ptr<DocumentTransform> transform_;
};

// ---- $skip, $limit ----

StatusOr<int64_t> StageCount(std::string_view stage, const Element& e) {
  int64_t n = 0;
  if (!e.IsNumber()) {
    return stage == "$limit" ? Failed(15957, "the limit must be specified as a number")
                             : Failed(15972, "Argument to $skip must be a number");
  }
  if (!e.ExactInt64(&n)) {
    return Failed(stage == "$limit" ? 15957 : 15972,
                  "invalid argument to " + std::string(stage) +
                      " stage: Cannot represent as a 64-bit integer: " + Shown(e));
  }
  if (stage == "$limit" && n <= 0) return Failed(15958, "the limit must be positive");
  if (stage == "$skip" && n < 0) return Failed(15956, "Argument to $skip cannot be negative");
  return n;
}

class SkipLimitStage : public Stage {
 public:
  SkipLimitStage(int64_t skip, int64_t limit) : skip_(skip), limit_(limit) {}
  StatusOr<std::optional<Document>> Next() override {
    while (skip_ > 0) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) return doc;
      --skip_;
    }
    if (limit_ == 0) return std::optional<Document>();
    if (limit_ > 0) --limit_;
    return input_->Next();
  }

 private:
  int64_t skip_;
  int64_t limit_;  // -1: none
};

// ---- $sort ----


// A held document: its object and its bytes on the heap.
int64_t DocumentBytes(const Document& doc) {
  return static_cast<int64_t>(sizeof(Document) + doc.size() + 16);
}

class SortStage : public Stage {
 public:
  // `keep`: when a $limit follows (after a $skip or not), the output needs
  // only the first `keep` documents: a top-k (0: all).
  SortStage(SortPattern pattern, SpillPolicy policy, int64_t keep = 0)
      : pattern_(std::move(pattern)), policy_(std::move(policy)), keep_(keep) {}
  void AppendExplain(BsonBuilder* out) const override {
    if (keep_ > 0) out->AppendInt64("limit", keep_);  // MongoDB's $sort + $limit coalescence
  }
  void AppendExecutionStats(BsonBuilder* out) const override { runs_.AppendExecutionStats(out); }
  StatusOr<std::optional<Document>> Next() override {
    if (!sorted_) {
      ROCKDOC_RETURN_IF_ERROR(ReadAll());
      sorted_ = true;
    }
    if (!runs_.empty()) return NextMerged();
    if (next_ == docs_.size()) return std::optional<Document>();
    return std::optional<Document>(std::move(docs_[next_++]));
  }

 private:
  StatusOr<int> Compare(DocumentView a, DocumentView b) const {
    return pattern_.CompareDocuments(a, b);
  }

  Status SortBuffer() {
    Status failed;
    std::stable_sort(docs_.begin(), docs_.end(), [&](const Document& a, const Document& b) {
      StatusOr<int> c = Compare(a.view(), b.view());
      if (!c.ok()) {
        if (failed.ok()) failed = c.status();
        return false;
      }
      return *c < 0;
    });
    return failed;
  }

  // A top-k: the `keep_` least documents seen so far in a heap whose top is
  // the greatest (ties: the later input is greater, so the first kept
  // wins, as the stable sort). True when the input is read and docs_ holds
  // the answer sorted; false when the kept documents outgrew the memory
  // limit (huge documents): docs_ then holds them, sorted, for the full
  // sort to go on from (*bytes: their size).
  StatusOr<bool> ReadTopK(int64_t* bytes) {
    struct Kept {
      Document doc;
      int64_t seq;
    };
    std::vector<Kept> heap;
    Status failed;
    auto before = [&](const Kept& a, const Kept& b) {
      StatusOr<int> c = Compare(a.doc.view(), b.doc.view());
      if (!c.ok()) {
        if (failed.ok()) failed = c.status();
        return false;
      }
      return *c < 0 || (*c == 0 && a.seq < b.seq);
    };
    auto sorted_out = [&]() -> Status {
      std::sort_heap(heap.begin(), heap.end(), before);
      ROCKDOC_RETURN_IF_ERROR(failed);
      docs_.reserve(heap.size());
      for (Kept& k : heap) docs_.push_back(std::move(k.doc));
      return Status::OK();
    };
    for (int64_t seq = 0;; ++seq) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      Kept k{std::move(*doc), seq};
      if (static_cast<int64_t>(heap.size()) < keep_) {
        *bytes += DocumentBytes(k.doc);
        heap.push_back(std::move(k));
        std::push_heap(heap.begin(), heap.end(), before);
      } else if (before(k, heap.front())) {
        *bytes += DocumentBytes(k.doc) - DocumentBytes(heap.front().doc);
        std::pop_heap(heap.begin(), heap.end(), before);
        heap.back() = std::move(k);
        std::push_heap(heap.begin(), heap.end(), before);
      }
      ROCKDOC_RETURN_IF_ERROR(failed);
      if (*bytes > policy_.memory_limit) {
        ROCKDOC_RETURN_IF_ERROR(sorted_out());
        return false;
      }
    }
    ROCKDOC_RETURN_IF_ERROR(sorted_out());
    return true;
  }

  // The whole input: in memory while it fits, else as sorted runs on disk
  // (allowDiskUse) and the last part in memory.
  Status ReadAll() {
    int64_t bytes = 0;
    if (keep_ > 0) {
      ROCKDOC_ASSIGN_OR_RETURN(bool done, ReadTopK(&bytes));
      if (done) return Status::OK();
    }
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      bytes += DocumentBytes(*doc);
      if (bytes > policy_.memory_limit) {
        if (!policy_.can_spill()) return MemoryExceeded("$sort", policy_.allow_disk_use);
        ROCKDOC_RETURN_IF_ERROR(SortBuffer());
        ROCKDOC_RETURN_IF_ERROR(runs_.Spill(policy_, [&](SpillWriter* w) -> Status {
          for (const Document& d : docs_) ROCKDOC_RETURN_IF_ERROR(w->Add(d.bytes()));
          return Status::OK();
        }));
        docs_.clear();
        docs_.shrink_to_fit();
        bytes = DocumentBytes(*doc);
      }
      docs_.push_back(std::move(*doc));
    }
    ROCKDOC_RETURN_IF_ERROR(SortBuffer());
    if (!runs_.empty()) ROCKDOC_RETURN_IF_ERROR(runs_.Start());
    return Status::OK();
  }

  // The least of the runs' heads and the buffer's; a tie goes to the runs,
  // which hold earlier input.
  StatusOr<std::optional<Document>> NextMerged() {
    ROCKDOC_ASSIGN_OR_RETURN(int run, runs_.Least([this](DocumentView a, DocumentView b) {
                               return Compare(a, b);
                             }));
    const bool buffered = next_ < docs_.size();
    if (run >= 0 && buffered) {
      ROCKDOC_ASSIGN_OR_RETURN(int c, Compare(docs_[next_].view(), runs_.head(run).view()));
      if (c < 0) run = -1;
    }
    if (run < 0) {
      if (!buffered) return std::optional<Document>();
      return std::optional<Document>(std::move(docs_[next_++]));
    }
    std::optional<Document> out(runs_.head(run));
    ROCKDOC_RETURN_IF_ERROR(runs_.Advance(run));
    return out;
  }

  SortPattern pattern_;
  SpillPolicy policy_;
  int64_t keep_ = 0;
  bool sorted_ = false;
  std::vector<Document> docs_;
  size_t next_ = 0;
  SpilledRuns runs_;
};

// ---- $count ----

class CountStage : public Stage {
 public:
  explicit CountStage(std::string field) : field_(std::move(field)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (done_) return std::optional<Document>();
    done_ = true;
    int64_t n = 0;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      ++n;
    }
    if (n == 0) return std::optional<Document>();  // no input, no document (as MongoDB)
    BsonBuilder b;
    b.AppendElementAs(field_, IntegerValue(n).element());
    return std::optional<Document>(std::move(b).Build());
  }

 private:
  std::string field_;
  bool done_ = false;
};

StatusOr<std::string> ParseCountField(const Element& e) {
  if (e.type() != BsonType::kString) {
    return Failed(40156, "the count field must be a non-empty string");
  }
  std::string_view name = e.String();
  if (name.empty()) return Failed(40157, "the count field must be a non-empty string");
  if (name[0] == '$') return Failed(40158, "the count field cannot be a $-prefixed path");
  if (name.find('.') != std::string_view::npos) {
    return Failed(40160, "the count field cannot contain '.'");
  }
  return std::string(name);
}

// ---- $group ----

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

StatusOr<std::unique_ptr<Stage>> ParseGroup(const Element& spec, VariableScope* scope,
                                            int64_t now_ms, const PipelineOptions& options) {
  if (spec.type() != BsonType::kDocument) {
    return Failed(15947, "a group's fields must be specified in an object");
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
      return Failed(40235, "The field name '" + std::string(f.key()) + "' cannot contain '.'");
    }
    if (f.type() != BsonType::kDocument || f.Document().empty()) {
      return Failed(40234, "The field '" + std::string(f.key()) + "' must be an accumulator object");
    }
    size_t n = 0;
    for (const Element& x : f.Document()) {
      (void)x;
      ++n;
    }
    if (n != 1) {
      return Failed(40238, "The field '" + std::string(f.key()) +
                               "' must specify one accumulator");
    }
    ROCKDOC_ASSIGN_OR_RETURN(AccumulatorSpec a, ParseAccumulator(f.key(), *f.Document().begin(), scope));
    accumulators.push_back(std::move(a));
  }
  if (!id) return Failed(15955, "a group specification must include an _id");
  return std::unique_ptr<Stage>(std::make_unique<GroupStage>(
      std::move(id), std::move(accumulators), scope->id_count(), now_ms, SpillPolicy::Of(options),
      options.variables));
}

// ---- paths inside documents (no traversal of arrays), for $unwind and $lookup ----

Element GetField(DocumentView doc, const std::vector<std::string>& parts) {
  Element e;
  for (size_t i = 0; i < parts.size(); ++i) {
    e = doc.Get(parts[i]);
    if (i + 1 == parts.size()) return e;
    if (e.type() != BsonType::kDocument) return Element();
    doc = e.Document();
  }
  return e;
}

// Appends the value of a field, named `key`, to `out`.
using FieldWriter = std::function<void(std::string_view key, BsonBuilder* out)>;

// `doc` with the field at `parts` set to what `write` appends (removed when
// `write` is null), creating documents along the way (a non-document in the
// way is replaced, as $addFields does). The field keeps its place when it
// exists and is added at the end when not.
void SetFieldWith(DocumentView doc, const std::vector<std::string>& parts, size_t i,
                  const FieldWriter& write, BsonBuilder* out) {
  bool done = false;
  for (const Element& e : doc) {
    if (e.key() != parts[i]) {
      out->AppendElement(e);
      continue;
    }
    done = true;
    if (i + 1 == parts.size()) {
      if (write) write(parts[i], out);
    } else {
      out->OpenDocument(parts[i]);
      SetFieldWith(e.type() == BsonType::kDocument ? e.Document() : DocumentView(), parts, i + 1,
                   write, out);
      out->Close();
    }
  }
  if (done || !write) return;
  if (i + 1 == parts.size()) {
    write(parts[i], out);
  } else {
    out->OpenDocument(parts[i]);
    SetFieldWith(DocumentView(), parts, i + 1, write, out);
    out->Close();
  }
}

// SetFieldWith for a value at hand (removed when `value` is missing).
void SetField(DocumentView doc, const std::vector<std::string>& parts, size_t i,
              const Element& value, BsonBuilder* out) {
  FieldWriter write;
  if (value.ok()) {
    write = [&value](std::string_view key, BsonBuilder* o) { o->AppendElementAs(key, value); };
  }
  SetFieldWith(doc, parts, i, write, out);
}

Document WithField(DocumentView doc, const std::vector<std::string>& parts, const Element& value) {
  BsonBuilder b;
  SetField(doc, parts, 0, value, &b);
  return std::move(b).Build();
}

// ---- $unwind ----

class UnwindStage : public Stage {
 public:
  UnwindStage(std::vector<std::string> path, std::optional<std::vector<std::string>> index,
              bool preserve)
      : path_(std::move(path)), index_(std::move(index)), preserve_(preserve) {}

  StatusOr<std::optional<Document>> Next() override {
    for (;;) {
      if (current_ && position_ < elements_.size()) {
        const size_t i = position_++;
        Document out = WithField(current_->view(), path_, elements_[i]);
        if (index_) out = WithField(out.view(), *index_, Int64Value(static_cast<int64_t>(i)).element());
        return std::optional<Document>(std::move(out));
      }
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) return doc;
      current_ = std::move(doc);
      elements_.clear();
      position_ = 0;
      const Element value = GetField(current_->view(), path_);
      if (value.type() == BsonType::kArray) {
        for (const Element& e : value.Array()) elements_.push_back(e);
        if (!elements_.empty()) continue;
        if (!preserve_) continue;
        // An empty array, preserved: the document without the field.
        Document out = WithField(current_->view(), path_, Element());
        if (index_) out = WithField(out.view(), *index_, NullValue().element());
        return std::optional<Document>(std::move(out));
      }
      const bool nullish = !value.ok() || value.IsNull() || value.type() == BsonType::kUndefined;
      if (nullish && !preserve_) continue;
      // A value that is not an array is one element; a null or missing one
      // (preserved) is the document as it is.
      Document out = Document::AdoptValidated(std::string(current_->bytes()));
      if (index_) out = WithField(out.view(), *index_, NullValue().element());
      return std::optional<Document>(std::move(out));
    }
  }

 private:
  std::vector<std::string> path_;
  std::optional<std::vector<std::string>> index_;
  bool preserve_;
  std::optional<Document> current_;
  std::vector<Element> elements_;  // views into *current_
  size_t position_ = 0;
};

StatusOr<std::vector<std::string>> UnwindPath(std::string_view what, const Element& e) {
  if (e.type() != BsonType::kString) {
    return Failed(28808, "Expected a string as the path for $unwind stage, got " +
                             std::string(BsonTypeAlias(e.type())));
  }
  std::string_view path = e.String();
  if (path.empty()) return Failed(28810, "No path specified to $unwind stage");
  if (path[0] != '$') {
    return Failed(28818, std::string(what) + " option to $unwind stage should be prefixed with a "
                                              "'$': " +
                             std::string(path));
  }
  std::vector<std::string> parts = SplitDotted(path.substr(1));
  for (const std::string& p : parts) {
    if (p.empty()) return Failed(15998, "FieldPath field names may not be empty strings.");
    if (p[0] == '$') {
      return Failed(16410, "FieldPath field names may not start with '$'. Consider using "
                           "$getField or $setField.");
    }
  }
  return parts;
}

StatusOr<std::unique_ptr<Stage>> ParseUnwind(const Element& spec) {
  if (spec.type() == BsonType::kString) {
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> path, UnwindPath("path", spec));
    return std::unique_ptr<Stage>(std::make_unique<UnwindStage>(std::move(path), std::nullopt, false));
  }
  if (spec.type() != BsonType::kDocument) {
    return Failed(15981, "expected either a string or an object as specification for $unwind "
                         "stage, got " +
                             std::string(BsonTypeAlias(spec.type())));
  }
  std::optional<std::vector<std::string>> path, index;
  bool preserve = false;
  for (const Element& f : spec.Document()) {
    if (f.key() == "path") {
      ROCKDOC_ASSIGN_OR_RETURN(path, UnwindPath("path", f));
    } else if (f.key() == "includeArrayIndex") {
      if (f.type() != BsonType::kString) {
        return Failed(28810, "expected a non-empty string for the includeArrayIndex option to "
                             "$unwind stage");
      }
      if (f.String().empty() || f.String()[0] == '$') {
        return Failed(28822, "includeArrayIndex option to $unwind stage should not be prefixed "
                             "with a '$': " +
                                 std::string(f.String()));
      }
      index = SplitDotted(f.String());
    } else if (f.key() == "preserveNullAndEmptyArrays") {
      if (!f.IsBool()) {
        return Failed(28809, "expected a boolean for the preserveNullAndEmptyArrays option to "
                             "$unwind stage");
      }
      preserve = f.Bool();
    } else {
      return Failed(28811, "unrecognized option to $unwind stage: " + std::string(f.key()));
    }
  }
  if (!path) return Failed(28812, "no path specified to $unwind stage");
  return std::unique_ptr<Stage>(
      std::make_unique<UnwindStage>(std::move(*path), std::move(index), preserve));
}

// ---- $lookup ----

// The value at localField, through arrays (as a find's path would).
Value LocalValue(const Expression& local_expr, DocumentView doc) {
  ExpressionVariables vars;
  vars.root = doc;
  StatusOr<Value> v = local_expr.Evaluate(vars);
  return v.ok() ? *v : Value();
}

// The foreign side's filter for a local value: an array's elements each;
// missing matches null. One value is an equality ({f: {$eq: v}}: on an
// _id, one point read), several an $in.
StatusOr<Document> LocalMatchFilter(const Value& local, const std::string& foreign) {
  const auto refuse_regex = [] {
    return Status(ErrorCode::kNotImplemented,
                  "$lookup on a regular expression value is not supported by rockdoc");
  };
  if (local.type() == BsonType::kRegex) return refuse_regex();
  BsonBuilder filter;
  filter.OpenDocument(foreign);
  if (local.ok() && local.type() != BsonType::kUndefined && local.type() != BsonType::kArray) {
    filter.AppendElementAs("$eq", local.element());
  } else {
    filter.OpenArray("$in");
    bool any = false;
    if (local.type() == BsonType::kArray) {
      for (const Element& e : local.element().Array()) {
        if (e.type() == BsonType::kRegex) return refuse_regex();
        filter.AppendElementAs("", e);
        any = true;
      }
    }
    if (!any) filter.AppendNull("");  // missing, or an empty array: matches null (as MongoDB)
    filter.Close();
  }
  filter.Close();
  return std::move(filter).Build();
}

// The input document with its matches at `as` (16 MiB at most).
Status CheckJoinedSize(const Document& out) {
  if (out.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
    return Status(ErrorCode::kBSONObjectTooLarge,
                  "$lookup: the document with its matches is " + std::to_string(out.size()) +
                      " bytes, over the 16 MiB limit");
  }
  return Status::OK();
}

StatusOr<Document> WithMatches(DocumentView doc, const std::vector<std::string>& as,
                               const Element& matches) {
  Document out = WithField(doc, as, matches);
  ROCKDOC_RETURN_IF_ERROR(CheckJoinedSize(out));
  return out;
}

// What the finds of a $lookup examined, over all of them (MongoDB's
// totalKeysExamined and totalDocsExamined in its executionStats): each
// cursor of a Counting find adds its figures when it goes.
class ExaminedTotal {
 public:
  ExaminedTotal() : total_(std::make_shared<CursorImpl::Examined>()) {}
  FindFn Counting(FindFn find) const {
    return [find = std::move(find), total = total_](std::string_view coll, DocumentView filter,
                                                    const FindOptions& options)
               -> StatusOr<std::unique_ptr<CursorImpl>> {
      ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CursorImpl> cursor, find(coll, filter, options));
      return std::unique_ptr<CursorImpl>(std::make_unique<Counted>(std::move(cursor), total));
    };
  }
  // What a read outside a find examined (a point read: a key, and the
  // document when there was one).
  void Add(int64_t keys, int64_t docs) const {
    total_->keys += keys;
    total_->docs += docs;
  }
  void Append(BsonBuilder* out) const {
    out->AppendInt64("totalKeysExamined", total_->keys);
    out->AppendInt64("totalDocsExamined", total_->docs);
  }

 private:
  class Counted : public CursorImpl {
   public:
    Counted(std::unique_ptr<CursorImpl> inner, std::shared_ptr<CursorImpl::Examined> total)
        : inner_(std::move(inner)), total_(std::move(total)) {}
    ~Counted() override {
      const Examined e = inner_->examined();
      total_->keys += e.keys;
      total_->docs += e.docs;
    }
    bool Next() override { return inner_->Next(); }
    DocumentView document() const override { return inner_->document(); }
    Status status() const override { return inner_->status(); }
    Examined examined() const override { return inner_->examined(); }

   private:
    std::unique_ptr<CursorImpl> inner_;
    std::shared_ptr<CursorImpl::Examined> total_;
  };
  std::shared_ptr<CursorImpl::Examined> total_;
};

class LookupStage : public Stage {
 public:
  LookupStage(std::string from, std::string local_field, ExpressionPtr local,
              std::string foreign, std::string as, FindFn find, const PipelineOptions& options)
      : from_(std::move(from)),
        local_field_(std::move(local_field)),
        local_expr_(std::move(local)),
        foreign_(std::move(foreign)),
        as_(SplitDotted(as)),
        find_(examined_.Counting(std::move(find))),
        options_(options),
        local_top_level_(local_field_.find('.') == std::string::npos) {}

  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
    if (!doc) return doc;
    if (strategy_ == Strategy::kUndecided) ROCKDOC_RETURN_IF_ERROR(Decide());
    // The local value: a top-level localField read in place (no expression
    // evaluated, no copy), a dotted one through the expression (paths
    // through arrays, as a find's).
    Value evaluated;
    Element local;
    if (local_top_level_) {
      local = doc->view().Get(local_field_);
    } else {
      evaluated = LocalValue(*local_expr_, doc->view());
      if (evaluated.ok()) local = evaluated.element();
    }
    if (strategy_ == Strategy::kHash) return HashMatches(*doc, ValueOf(local));
    if (foreign_ == "_id" && options_.find_by_id && IsPointValue(local)) {
      // One value on _id: its document, if any, by a point read (the
      // equality's one match, a find would plan the same IDHACK per
      // document), written straight into the output.
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> match, options_.find_by_id(from_, local));
      examined_.Add(1, match ? 1 : 0);
      BsonBuilder out;
      SetFieldWith(doc->view(), as_, 0,
                   [&match](std::string_view key, BsonBuilder* o) {
                     o->OpenArray(key);
                     if (match) o->AppendDocument("", match->view());
                     o->Close();
                   },
                   &out);
      Document joined = std::move(out).Build();
      ROCKDOC_RETURN_IF_ERROR(CheckJoinedSize(joined));
      return std::optional<Document>(std::move(joined));
    }
    // The local values: an array's elements each; missing matches null.
    // One value is an equality ({f: {$eq: v}}), several an $in.
    ROCKDOC_ASSIGN_OR_RETURN(Document f, LocalMatchFilter(ValueOf(local), foreign_));
    FindOptions fo;
    fo.max_time_ms = options_.FindMaxTimeMS();
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CursorImpl> cursor, find_(from_, f.view(), fo));
    BsonBuilder matches;
    matches.OpenArray("v");
    while (cursor->Next()) matches.AppendDocument("", cursor->document());
    ROCKDOC_RETURN_IF_ERROR(cursor->status());
    matches.Close();
    Document m = std::move(matches).Build();
    ROCKDOC_ASSIGN_OR_RETURN(Document out, WithMatches(doc->view(), as_, m.Get("v")));
    return std::optional<Document>(std::move(out));
  }

 private:
  // A value whose equality on _id is one point read: present, and not an
  // array ($in of its elements), a regex (a pattern match), null or
  // undefined (which match null and missing).
  static bool IsPointValue(const Element& v) {
    if (!v.ok()) return false;
    const BsonType t = v.type();
    return t != BsonType::kArray && t != BsonType::kRegex && t != BsonType::kNull &&
           t != BsonType::kUndefined;
  }
  static Value ValueOf(const Element& e) { return e.ok() ? Value::FromElement(e) : Value(); }

  // MongoDB's three: an indexed loop when foreignField has an index (a find
  // per input document, which uses it), a hash join when not and the
  // foreign collection fits the memory limit (read once, keyed by
  // foreignField), a nested loop (a find, a scan, per input document)
  // otherwise.
  enum class Strategy { kUndecided, kIndexedLoop, kHash, kNestedLoop };

  Status Decide() {
    strategy_ = Strategy::kIndexedLoop;
    if (options_.has_index_on && options_.has_index_on(from_, foreign_)) return Status::OK();
    FindOptions fo;
    fo.max_time_ms = options_.FindMaxTimeMS();
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CursorImpl> cursor, find_(from_, DocumentView(), fo));
    const std::vector<std::string> parts = SplitDotted(foreign_);
    int64_t bytes = 0;
    while (cursor->Next()) {
      const DocumentView d = cursor->document();
      bytes += static_cast<int64_t>(d.size()) + 64;
      if (bytes > options_.memory_limit) {
        foreign_docs_.clear();
        table_.clear();
        strategy_ = Strategy::kNestedLoop;
        return Status::OK();
      }
      const size_t ordinal = foreign_docs_.size();
      foreign_docs_.push_back(Document::AdoptValidated(std::string(d.bytes())));
      std::vector<Value> keys;
      BsonBuilder wrap;
      wrap.AppendDocument("d", d);
      Document w = std::move(wrap).Build();
      KeysAt(w.Get("d"), parts, 0, &keys);
      if (keys.empty()) keys.push_back(NullValue());  // missing matches null
      for (Value& k : keys) {
        std::vector<size_t>& slot = table_[std::move(k)];
        if (slot.empty() || slot.back() != ordinal) slot.push_back(ordinal);
      }
    }
    ROCKDOC_RETURN_IF_ERROR(cursor->status());
    strategy_ = Strategy::kHash;
    return Status::OK();
  }

  // The values a find's equality on `parts` compares with: through arrays
  // of documents, and an array's elements (and the array itself).
  static void KeysAt(const Element& e, const std::vector<std::string>& parts, size_t i,
                     std::vector<Value>* out) {
    if (i == parts.size()) {
      out->push_back(Value::FromElement(e));
      if (e.type() == BsonType::kArray) {
        for (const Element& x : e.Array()) out->push_back(Value::FromElement(x));
      }
      return;
    }
    if (e.type() == BsonType::kDocument) {
      Element child = e.Document().Get(parts[i]);
      if (child.ok()) KeysAt(child, parts, i + 1, out);
    } else if (e.type() == BsonType::kArray) {
      for (const Element& x : e.Array()) {
        if (x.type() == BsonType::kDocument || x.type() == BsonType::kArray) KeysAt(x, parts, i, out);
      }
    }
  }

  // MongoDB's names for the strategies (the one it will use, before it runs).
  void AppendExplain(BsonBuilder* out) const override {
    Strategy s = strategy_;
    if (s == Strategy::kUndecided) {
      s = options_.has_index_on && options_.has_index_on(from_, foreign_) ? Strategy::kIndexedLoop
                                                                          : Strategy::kHash;
    }
    out->AppendString("strategy", s == Strategy::kIndexedLoop ? "IndexedLoopJoin"
                                  : s == Strategy::kHash      ? "HashJoin"
                                                              : "NestedLoopJoin");
    if (s == Strategy::kHash && strategy_ == Strategy::kHash) {
      AppendNumber(out, "foreignDocsRead", static_cast<int64_t>(foreign_docs_.size()));
    }
  }

  void AppendExecutionStats(BsonBuilder* out) const override { examined_.Append(out); }

  StatusOr<std::optional<Document>> HashMatches(const Document& doc, const Value& local) {
    std::vector<Value> wanted;
    if (local.type() == BsonType::kArray) {
      for (const Element& e : local.element().Array()) wanted.push_back(Value::FromElement(e));
    } else if (local.ok() && local.type() != BsonType::kUndefined) {
      wanted.push_back(local);
    }
    if (wanted.empty()) wanted.push_back(NullValue());  // missing, or []: matches null
    std::vector<size_t> hits;
    for (const Value& w : wanted) {
      if (w.type() == BsonType::kRegex) {
        return Status(ErrorCode::kNotImplemented,
                      "$lookup on a regular expression value is not supported by rockdoc");
      }
      const Value key = w.type() == BsonType::kUndefined ? NullValue() : w;
      auto it = table_.find(key);
      if (it != table_.end()) hits.insert(hits.end(), it->second.begin(), it->second.end());
    }
    std::sort(hits.begin(), hits.end());
    hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
    BsonBuilder matches;
    matches.OpenArray("v");
    for (size_t h : hits) matches.AppendDocument("", foreign_docs_[h].view());
    matches.Close();
    Document m = std::move(matches).Build();
    ROCKDOC_ASSIGN_OR_RETURN(Document out, WithMatches(doc.view(), as_, m.Get("v")));
    return std::optional<Document>(std::move(out));
  }

  ExaminedTotal examined_;  // before find_, which counts into it
  std::string from_;
  std::string local_field_;
  ExpressionPtr local_expr_;  // "$<localField>"
  std::string foreign_;
  std::vector<std::string> as_;
  FindFn find_;
  PipelineOptions options_;
  bool local_top_level_;  // localField names a top-level field
  Strategy strategy_ = Strategy::kUndecided;
  std::vector<Document> foreign_docs_;                         // kHash
  std::map<Value, std::vector<size_t>, ValueLess> table_;      // kHash: key -> ordinals
};

// Defined below: parsing a (sub-)pipeline.
StatusOr<std::vector<Element>> StageElements(DocumentView pipeline);
StatusOr<std::vector<std::unique_ptr<Stage>>> ParseStages(const std::vector<Element>& stages,
                                                          size_t from,
                                                          const PipelineOptions& options,
                                                          const FindFn& find, bool in_facet);

// {$lookup: {from, let, pipeline, as}} and the combined form with
// localField/foreignField: for each input document, the let variables are
// evaluated against it and the pipeline runs over `from` with them bound
// (after the foreignField equality, in the combined form, which the
// pipeline's find uses an index for).
class LookupPipelineStage : public Stage {
 public:
  struct Spec {
    std::string from;
    ExpressionPtr local;  // null unless the combined form
    std::string foreign;
    std::vector<std::string> as;
    std::vector<std::pair<int, ExpressionPtr>> let;  // ids in `scope`
    VariableScope scope;  // the outer names, then let's
    Document pipeline;    // the array
  };
  LookupPipelineStage(Spec spec, FindFn find, const PipelineOptions& options)
      : spec_(std::move(spec)), find_(examined_.Counting(std::move(find))), options_(options) {}
  void AppendExecutionStats(BsonBuilder* out) const override { examined_.Append(out); }

  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
    if (!doc) return doc;
    auto bound = std::make_shared<FilterVariables>();
    bound->scope = spec_.scope;
    if (options_.variables != nullptr) bound->values = options_.variables->values;
    bound->values.resize(static_cast<size_t>(spec_.scope.id_count()));
    ExpressionVariables vars;
    vars.root = doc->view();
    vars.user = bound->values;
    for (const auto& [id, expr] : spec_.let) {
      ROCKDOC_ASSIGN_OR_RETURN(Value v, expr->Evaluate(vars));
      bound->values[static_cast<size_t>(id)] = std::move(v);
    }
    Document pipeline = spec_.pipeline;
    if (spec_.local != nullptr) {
      // The foreignField equality first, as a $match the find runs.
      ROCKDOC_ASSIGN_OR_RETURN(Document f, LocalMatchFilter(LocalValue(*spec_.local, doc->view()), spec_.foreign));
      BsonBuilder b;
      b.OpenDocument("0").AppendDocument("$match", f.view()).Close();
      int i = 1;
      for (const Element& stage : spec_.pipeline.view()) {
        b.AppendElementAs(std::to_string(i++), stage);
      }
      pipeline = std::move(b).Build();
    }
    PipelineOptions sub = options_;
    sub.variables = std::move(bound);
    sub.hint.reset();
    sub.hint_name.reset();
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<DocumentSource> source,
                             OpenPipeline(spec_.from, pipeline.view(), sub, find_));
    BsonBuilder matches;
    matches.OpenArray("v");
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> match, source->Next());
      if (!match) break;
      matches.AppendDocument("", match->view());
    }
    matches.Close();
    Document m = std::move(matches).Build();
    ROCKDOC_ASSIGN_OR_RETURN(Document out, WithMatches(doc->view(), spec_.as, m.Get("v")));
    return std::optional<Document>(std::move(out));
  }

 private:
  ExaminedTotal examined_;  // before find_, which counts into it
  Spec spec_;
  FindFn find_;
  PipelineOptions options_;
};

StatusOr<std::unique_ptr<Stage>> ParseLookup(const Element& spec, FindFn find,
                                             const PipelineOptions& options) {
  if (spec.type() != BsonType::kDocument) {
    return Failed(9, "the $lookup specification must be an Object, but found " +
                      std::string(BsonTypeAlias(spec.type())));
  }
  std::optional<std::string> from, local, foreign, as;
  Element let, pipeline;
  for (const Element& f : spec.Document()) {
    const std::string_view k = f.key();
    if (k == "let") {
      if (f.type() != BsonType::kDocument) {
        return Failed(9, "$lookup argument 'let' must be an object, is type " +
                          std::string(BsonTypeAlias(f.type())));
      }
      let = f;
      continue;
    }
    if (k == "pipeline") {
      if (f.type() != BsonType::kArray) {
        return Failed(9, "'pipeline' option must be specified as an array");
      }
      pipeline = f;
      continue;
    }
    std::optional<std::string>* slot = k == "from"           ? &from
                                       : k == "localField"   ? &local
                                       : k == "foreignField" ? &foreign
                                       : k == "as"           ? &as
                                                             : nullptr;
    if (slot == nullptr) {
      return Failed(9, "unknown argument to $lookup: " + std::string(k));
    }
    if (f.type() != BsonType::kString) {
      return Failed(9, "$lookup argument '" + std::string(k) + ": " + Shown(f) +
                           "' must be a string, is type " + std::string(BsonTypeAlias(f.type())));
    }
    *slot = std::string(f.String());
  }
  if (!as) return Failed(9, "must specify 'as' field for a $lookup");
  if (!from) return Failed(9, "must specify 'from' field for a $lookup");
  if (local.has_value() != foreign.has_value()) {
    return Failed(9, "$lookup requires both or neither of 'localField' and 'foreignField' to be "
                     "specified");
  }
  if (let.ok() && !pipeline.ok()) {
    return Failed(9, "$lookup with 'let' requires a 'pipeline'");
  }
  if (!pipeline.ok() && !local) {
    return Failed(9, "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' "
                     "to be specified");
  }
  std::vector<const std::string*> paths = {&*as};
  if (local) {
    paths.push_back(&*local);
    paths.push_back(&*foreign);
  }
  for (const std::string* path : paths) {
    for (const std::string& part : SplitDotted(*path)) {
      if (part.empty()) return Failed(15998, "FieldPath field names may not be empty strings.");
      if (part[0] == '$') {
        return Failed(16410, "FieldPath field names may not start with '$'. Consider using "
                             "$getField or $setField.");
      }
    }
  }
  ExpressionPtr local_expr;
  if (local) {
    BsonBuilder path;
    path.AppendString("p", "$" + *local);
    Document path_doc = std::move(path).Build();
    VariableScope scope;
    ROCKDOC_ASSIGN_OR_RETURN(local_expr, ParseExpression(path_doc.Get("p"), &scope));
  }
  if (pipeline.ok()) {
    LookupPipelineStage::Spec s;
    s.from = std::move(*from);
    s.local = std::move(local_expr);
    s.foreign = local ? std::move(*foreign) : std::string();
    s.as = SplitDotted(*as);
    s.pipeline = Document::AdoptValidated(std::string(pipeline.Array().bytes()));
    if (options.variables != nullptr) s.scope = options.variables->scope;
    if (let.ok()) {
      // The values are expressions over the input document (and the
      // outer variables); the pipeline sees the names.
      std::vector<std::pair<std::string_view, ExpressionPtr>> parsed;
      VariableScope outer = s.scope;
      for (const Element& v : let.Document()) {
        ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr e, ParseExpression(v, &outer));
        parsed.emplace_back(v.key(), std::move(e));
      }
      for (auto& [name, e] : parsed) {
        ROCKDOC_ASSIGN_OR_RETURN(int id, s.scope.Define(name));
        s.let.emplace_back(id, std::move(e));
      }
    }
    for (const Element& stage : s.pipeline.view()) {
      if (stage.type() == BsonType::kDocument && !stage.Document().empty()) {
        const std::string_view name = (*stage.Document().begin()).key();
        if (name == "$out" || name == "$merge") {
          return Failed(51047, std::string(name) + " is not allowed within a $lookup's sub-pipeline");
        }
      }
    }
    // The sub-pipeline is checked now, before anything is read: parsed with
    // the names bound (their values do not matter to parsing).
    PipelineOptions check = options;
    check.variables = std::make_shared<FilterVariables>();
    check.variables->scope = s.scope;
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, StageElements(s.pipeline.view()));
    ROCKDOC_RETURN_IF_ERROR(ParseStages(stages, 0, check, find, /*in_facet=*/false).status());
    return std::unique_ptr<Stage>(
        std::make_unique<LookupPipelineStage>(std::move(s), std::move(find), options));
  }
  return std::unique_ptr<Stage>(std::make_unique<LookupStage>(
      std::move(*from), *local, std::move(local_expr), std::move(*foreign), std::move(*as),
      std::move(find), options));
}

// ---- $unionWith, $sample, $facet ----

// The input's documents, then the other collection's pipeline's.
class UnionWithStage : public Stage {
 public:
  explicit UnionWithStage(std::unique_ptr<DocumentSource> other) : other_(std::move(other)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (!input_done_) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (doc) return doc;
      input_done_ = true;
    }
    return other_->Next();
  }

 private:
  std::unique_ptr<DocumentSource> other_;
  bool input_done_ = false;
};

// `size` documents chosen at random (reservoir sampling), in random order.
class SampleStage : public Stage {
 public:
  SampleStage(int64_t size, SpillPolicy policy) : size_(size), policy_(std::move(policy)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (!sampled_) {
      std::mt19937_64 rng(std::random_device{}());
      int64_t seen = 0, bytes = 0;
      for (;;) {
        ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
        if (!doc) break;
        ++seen;
        if (static_cast<int64_t>(kept_.size()) < size_) {
          bytes += static_cast<int64_t>(doc->size());
          kept_.push_back(std::move(*doc));
        } else {
          const uint64_t j = rng() % static_cast<uint64_t>(seen);
          if (j < static_cast<uint64_t>(size_)) {
            bytes += static_cast<int64_t>(doc->size()) - static_cast<int64_t>(kept_[j].size());
            kept_[j] = std::move(*doc);
          }
        }
        if (bytes > policy_.memory_limit) return MemoryExceeded("$sample", policy_.allow_disk_use);
      }
      std::shuffle(kept_.begin(), kept_.end(), rng);
      sampled_ = true;
    }
    if (next_ == kept_.size()) return std::optional<Document>();
    return std::optional<Document>(std::move(kept_[next_++]));
  }

 private:
  int64_t size_;
  SpillPolicy policy_;
  bool sampled_ = false;
  std::vector<Document> kept_;
  size_t next_ = 0;
};

StatusOr<int64_t> ParseSampleSize(const Element& spec) {
  if (spec.type() != BsonType::kDocument) {
    return Failed(28745, "the $sample stage specification must be an object");
  }
  std::optional<int64_t> size;
  for (const Element& f : spec.Document()) {
    if (f.key() != "size") {
      return Failed(28748, "unrecognized option to $sample: " + std::string(f.key()));
    }
    int64_t n = 0;
    if (!f.IsNumber() || !f.ExactInt64(&n)) {
      return Failed(28746, "size argument to $sample must be a number");
    }
    if (n < 0) return Failed(28747, "size argument to $sample must not be negative");
    size = n;
  }
  if (!size) return Failed(28749, "$sample stage must specify a size");
  return *size;
}

// A buffered input, read again by each facet.
class VectorSource : public DocumentSource {
 public:
  explicit VectorSource(const std::vector<Document>* docs) : docs_(docs) {}
  StatusOr<std::optional<Document>> Next() override {
    if (next_ == docs_->size()) return std::optional<Document>();
    return std::optional<Document>(Document::AdoptValidated(std::string((*docs_)[next_++].bytes())));
  }

 private:
  const std::vector<Document>* docs_;
  size_t next_ = 0;
};

// The same, owning its documents.
class OwnedVectorSource : public DocumentSource {
 public:
  explicit OwnedVectorSource(std::vector<Document> docs) : docs_(std::move(docs)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (next_ == docs_.size()) return std::optional<Document>();
    return std::optional<Document>(std::move(docs_[next_++]));
  }

 private:
  std::vector<Document> docs_;
  size_t next_ = 0;
};

// One document: {<facet>: [its pipeline's output over the input], ...}.
class FacetStage : public Stage {
 public:
  using Facets = std::vector<std::pair<std::string, std::vector<std::unique_ptr<Stage>>>>;
  FacetStage(Facets facets, SpillPolicy policy)
      : facets_(std::move(facets)), policy_(std::move(policy)) {}
  void AppendExecutionStats(BsonBuilder* out) const override { out->AppendBool("usedDisk", spilled_); }
  StatusOr<std::optional<Document>> Next() override {
    if (done_) return std::optional<Document>();
    done_ = true;
    // The input, in memory while it fits; past the limit (allowDiskUse) a
    // run per facet, each read once by its facet.
    std::vector<Document> docs;
    std::vector<std::unique_ptr<SpillWriter>> runs;
    int64_t bytes = 0;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      if (spilled_) {
        for (auto& run : runs) ROCKDOC_RETURN_IF_ERROR(run->Add(doc->bytes()));
        continue;
      }
      bytes += DocumentBytes(*doc);
      if (bytes > policy_.memory_limit) {
        if (!policy_.can_spill()) return MemoryExceeded("$facet", policy_.allow_disk_use);
        docs.push_back(std::move(*doc));
        for (size_t i = 0; i < facets_.size(); ++i) {
          ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillWriter> run, policy_.new_run());
          for (const Document& d : docs) ROCKDOC_RETURN_IF_ERROR(run->Add(d.bytes()));
          runs.push_back(std::move(run));
        }
        docs.clear();
        docs.shrink_to_fit();
        spilled_ = true;
        continue;
      }
      docs.push_back(std::move(*doc));
    }
    BsonBuilder out;
    size_t i = 0;
    for (auto& [name, chain] : facets_) {
      std::unique_ptr<DocumentSource> input;
      if (spilled_) {
        ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillReader> run, runs[i]->Finish());
        input = MakeSpillSource(std::move(run));
      } else {
        input = std::make_unique<VectorSource>(&docs);
      }
      ++i;
      std::unique_ptr<DocumentSource> source = Connect(std::move(input), std::move(chain));
      out.OpenArray(name);
      for (;;) {
        ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, source->Next());
        if (!doc) break;
        out.AppendDocument("", doc->view());
      }
      out.Close();
    }
    Document result = std::move(out).Build();
    if (result.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
      return Status(ErrorCode::kBSONObjectTooLarge,
                    "$facet: the output document is " + std::to_string(result.size()) +
                        " bytes, over the 16 MiB limit");
    }
    return std::optional<Document>(std::move(result));
  }

 private:
  Facets facets_;
  SpillPolicy policy_;
  bool done_ = false;
  bool spilled_ = false;
};

// ---- the pipeline ----

bool IsKnownStage(std::string_view name) {
  static const char* const kNames[] = {
      "$bucket", "$bucketAuto", "$changeStream", "$changeStreamSplitLargeEvent", "$collStats",
      "$currentOp", "$densify", "$documents", "$fill", "$geoNear", "$graphLookup",
      "$indexStats", "$listLocalSessions", "$listSampledQueries", "$listSearchIndexes",
      "$listSessions", "$merge", "$out", "$planCacheStats", "$queryStats", "$redact",
      "$search", "$searchMeta", "$setWindowFields", "$shardedDataDistribution",
      "$vectorSearch"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The stages of `pipeline` (each one field). 40323 otherwise.
// ---- $match movement ----
//
// A $match moves ahead of the stages before it that do not change what it
// reads (as MongoDB's optimizer moves it), so that it filters earlier and,
// reaching the front, becomes the find's filter and uses an index (a view's
// reads gain the most). It passes a $sort, an $addFields/$set or $unset of
// other fields, an $unwind of another path, a $lookup into another field:
// each keeps the other fields of a document as they were, one output per
// input or copies of it, in order. The $match must parse, and name its
// fields plainly (no $expr, $where, $text: those stay where they are).

// The root fields `filter` reads (its paths' first parts); false when it
// reads something unnamed.
bool MatchRoots(DocumentView filter, std::set<std::string>* roots) {
  for (const Element& e : filter) {
    const std::string_view k = e.key();
    if (k == "$and" || k == "$or" || k == "$nor") {
      if (e.type() != BsonType::kArray) return false;
      for (const Element& clause : e.Array()) {
        if (clause.type() != BsonType::kDocument || !MatchRoots(clause.Document(), roots)) return false;
      }
    } else if (k == "$comment") {
      continue;
    } else if (k.empty() || k[0] == '$') {
      return false;
    } else {
      roots->insert(std::string(k.substr(0, k.find('.'))));
    }
  }
  return true;
}

// The root fields `stage` may change, when it is one a $match may pass
// (and well formed enough to say); false otherwise.
bool ChangedRoots(const Element& stage, std::set<std::string>* changed) {
  const std::string_view name = stage.key();
  auto root = [](std::string_view path) { return std::string(path.substr(0, path.find('.'))); };
  if (name == "$sort") return stage.type() == BsonType::kDocument && !stage.Document().empty();
  if (name == "$addFields" || name == "$set") {
    if (stage.type() != BsonType::kDocument) return false;
    for (const Element& f : stage.Document()) changed->insert(root(f.key()));
    return true;
  }
  if (name == "$unset") {
    if (stage.type() == BsonType::kString) {
      changed->insert(root(stage.String()));
      return true;
    }
    if (stage.type() != BsonType::kArray) return false;
    for (const Element& f : stage.Array()) {
      if (f.type() != BsonType::kString) return false;
      changed->insert(root(f.String()));
    }
    return true;
  }
  if (name == "$unwind") {
    Element path = stage;
    if (stage.type() == BsonType::kDocument) {
      path = stage.Document().Get("path");
      const Element index = stage.Document().Get("includeArrayIndex");
      if (index.ok()) {
        if (index.type() != BsonType::kString) return false;
        changed->insert(root(index.String()));
      }
    }
    if (path.type() != BsonType::kString || path.String().size() < 2 || path.String()[0] != '$') return false;
    changed->insert(root(path.String().substr(1)));
    return true;
  }
  if (name == "$lookup") {
    if (stage.type() != BsonType::kDocument) return false;
    const Element as = stage.Document().Get("as");
    if (as.type() != BsonType::kString) return false;
    changed->insert(root(as.String()));
    return true;
  }
  return false;
}

void MoveMatchesEarlier(std::vector<Element>* stages) {
  for (size_t i = 1; i < stages->size(); ++i) {
    if ((*stages)[i].key() != "$match" || (*stages)[i].type() != BsonType::kDocument) continue;
    std::set<std::string> reads;
    if (!MatchRoots((*stages)[i].Document(), &reads)) continue;
    // How far it may move; parsed (to move only a well-formed one) only
    // when it moves at all: a $lookup's sub-pipeline opens per document.
    size_t to = i;
    for (; to > 0; --to) {
      std::set<std::string> changed;
      if (!ChangedRoots((*stages)[to - 1], &changed)) break;
      bool disjoint = true;
      for (const std::string& r : reads) disjoint = disjoint && changed.count(r) == 0;
      if (!disjoint) break;
    }
    if (to == i || !ParseMatchExpression((*stages)[i].Document()).ok()) continue;
    std::rotate(stages->begin() + static_cast<std::ptrdiff_t>(to),
                stages->begin() + static_cast<std::ptrdiff_t>(i),
                stages->begin() + static_cast<std::ptrdiff_t>(i + 1));
  }
}

StatusOr<std::vector<Element>> StageElements(DocumentView pipeline) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, PipelineStages(pipeline));
  MoveMatchesEarlier(&stages);
  return stages;
}

// How many documents a $sort's output needs when stages[next] is a $limit
// or a $skip then a $limit (the sort is then a top-k; the stages still
// run); 0 when all.
int64_t TopK(const std::vector<Element>& stages, size_t next) {
  int64_t skip = 0;
  if (next < stages.size() && stages[next].key() == "$skip") {
    StatusOr<int64_t> n = StageCount("$skip", stages[next]);
    if (!n.ok()) return 0;
    skip = *n;
    ++next;
  }
  if (next >= stages.size() || stages[next].key() != "$limit") return 0;
  StatusOr<int64_t> n = StageCount("$limit", stages[next]);
  if (!n.ok() || *n > INT64_MAX - skip) return 0;
  return skip + *n;
}

// Parses stages[from..] into the stages that run after a source (the
// pipeline's find, or a $facet's input). `in_facet`: the stages $facet
// refuses inside itself are 40600.
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
    std::unique_ptr<Stage> stage;
    if (name == "$match") {
      if (s.type() != BsonType::kDocument) {
        return Failed(15959, "the match filter must be an expression in an object");
      }
      ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<MatchExpression> m,
                               ParseMatchExpression(s.Document(), options.variables));
      stage = std::make_unique<MatchStage>(std::move(m));
    } else if (IsDocumentTransformStage(name)) {
      ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<DocumentTransform> t,
                               ParseDocumentTransform(name, s, &scope));
      stage = std::make_unique<TransformStage>(std::move(t), scope.id_count(), now_ms,
                                               options.variables);
    } else if (name == "$sort") {
      if (s.type() != BsonType::kDocument) {
        return Failed(15973, "the $sort key specification must be an object");
      }
      if (s.Document().empty()) return Failed(15976, "$sort stage must have at least one sort key");
      ROCKDOC_ASSIGN_OR_RETURN(SortPattern pattern, SortPattern::Parse(s.Document()));
      stage = std::make_unique<SortStage>(std::move(pattern), SpillPolicy::Of(options),
                                          TopK(stages, i + 1));
    } else if (name == "$skip") {
      ROCKDOC_ASSIGN_OR_RETURN(int64_t n, StageCount(name, s));
      stage = std::make_unique<SkipLimitStage>(n, -1);
    } else if (name == "$limit") {
      ROCKDOC_ASSIGN_OR_RETURN(int64_t n, StageCount(name, s));
      stage = std::make_unique<SkipLimitStage>(0, n);
    } else if (name == "$count") {
      ROCKDOC_ASSIGN_OR_RETURN(std::string field, ParseCountField(s));
      stage = std::make_unique<CountStage>(std::move(field));
    } else if (name == "$group") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseGroup(s, &scope, now_ms, options));
    } else if (name == "$sortByCount") {
      // {$group: {_id: <expr>, count: {$sum: 1}}}, {$sort: {count: -1}}.
      if (s.type() == BsonType::kDocument && !s.Document().empty() &&
          (*s.Document().begin()).key().substr(0, 1) != "$") {
        return Failed(40147, "the sortByCount field must be defined as a $-prefixed path or an "
                             "expression");
      }
      if (s.type() == BsonType::kString && s.String().substr(0, 1) != "$") {
        return Failed(40148, "the sortByCount field must be defined as a $-prefixed path or an "
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
      parts.push_back(std::make_unique<GroupStage>(std::move(id), std::move(acc),
                                                   scope.id_count(), now_ms, SpillPolicy::Of(options),
                                                   options.variables));
      BsonBuilder sort;
      sort.AppendInt32("count", -1);
      ROCKDOC_ASSIGN_OR_RETURN(SortPattern pattern, SortPattern::Parse(std::move(sort).Build()));
      parts.push_back(std::make_unique<SortStage>(std::move(pattern), SpillPolicy::Of(options)));
      stage = std::make_unique<SequenceStage>(std::move(parts));
    } else if (name == "$documents" || name == "$collStats" || name == "$indexStats" ||
               name == "$queryStats") {
      return Failed(40602, std::string(name) + " is only valid as the first stage in a pipeline");
    } else if (name == "$out" || name == "$merge") {
      if (in_facet) {
        return Failed(40600, std::string(name) + " is not allowed to be used within a $facet stage");
      }
      if (i + 1 != stages.size()) {
        return Failed(40601, std::string(name) + " can only be the final stage in the pipeline");
      }
      const StageContext ctx{&scope, now_ms, options, find};
      ROCKDOC_ASSIGN_OR_RETURN(stage, name == "$out" ? ParseOut(s, ctx) : ParseMerge(s, ctx));
    } else if (name == "$densify") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseDensify(s, StageContext{&scope, now_ms, options, find}));
    } else if (name == "$fill") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseFill(s, StageContext{&scope, now_ms, options, find}));
    } else if (name == "$setWindowFields") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseSetWindowFields(s, StageContext{&scope, now_ms, options, find}));
    } else if (name == "$redact") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseRedact(s, StageContext{&scope, now_ms, options, find}));
    } else if (name == "$graphLookup") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseGraphLookup(s, StageContext{&scope, now_ms, options, find}));
    } else if (name == "$bucket") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseBucket(s, StageContext{&scope, now_ms, options, find}));
    } else if (name == "$bucketAuto") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseBucketAuto(s, StageContext{&scope, now_ms, options, find}));
    } else if (name == "$unwind") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseUnwind(s));
    } else if (name == "$lookup") {
      ROCKDOC_ASSIGN_OR_RETURN(stage, ParseLookup(s, find, options));
    } else if (name == "$sample") {
      ROCKDOC_ASSIGN_OR_RETURN(int64_t size, ParseSampleSize(s));
      stage = std::make_unique<SampleStage>(size, SpillPolicy::Of(options));
    } else if (name == "$unionWith") {
      std::string coll;
      Document sub;  // the other collection's pipeline ([] by default)
      if (s.type() == BsonType::kString) {
        coll = std::string(s.String());
      } else if (s.type() == BsonType::kDocument) {
        bool has_coll = false;
        for (const Element& f : s.Document()) {
          if (f.key() == "coll") {
            if (f.type() != BsonType::kString) {
              return Failed(14, "BSON field '$unionWith.coll' is the wrong type '" +
                                    std::string(BsonTypeAlias(f.type())) +
                                    "', expected type 'string'");
            }
            coll = std::string(f.String());
            has_coll = true;
          } else if (f.key() == "pipeline") {
            if (f.type() != BsonType::kArray) {
              return Failed(14, "BSON field '$unionWith.pipeline' is the wrong type '" +
                                    std::string(BsonTypeAlias(f.type())) +
                                    "', expected type 'array'");
            }
            sub = Document::AdoptValidated(std::string(f.Array().bytes()));
          } else {
            return Failed(40415, "BSON field '$unionWith." + std::string(f.key()) +
                                     "' is an unknown field.");
          }
        }
        if (!has_coll) {
          return Failed(40414, "BSON field '$unionWith.coll' is missing but a required field");
        }
      } else {
        return Failed(9, "the $unionWith stage specification must be an object or string, but found " +
                          std::string(BsonTypeAlias(s.type())));
      }
      ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<DocumentSource> other,
                               OpenPipeline(coll, sub.view(), options, find));
      stage = std::make_unique<UnionWithStage>(std::move(other));
    } else if (name == "$facet") {
      if (in_facet) return Failed(40600, "$facet is not allowed to be used within a $facet stage");
      if (s.type() != BsonType::kDocument || s.Document().empty()) {
        return Failed(40169, "the $facet specification must be a non-empty object, but found: " +
                                 Shown(s));
      }
      FacetStage::Facets facets;
      for (const Element& f : s.Document()) {
        ROCKDOC_RETURN_IF_ERROR(CheckFieldName("$facet", f.key()));
        if (f.type() != BsonType::kArray) {
          return Failed(40170, "arguments to $facet must be arrays, " + std::string(f.key()) +
                                   " is type " + std::string(BsonTypeAlias(f.type())));
        }
        ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> sub, StageElements(f.Array()));
        ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Stage>> chain,
                                 ParseStages(sub, 0, options, find, /*in_facet=*/true));
        facets.emplace_back(std::string(f.key()), std::move(chain));
      }
      stage = std::make_unique<FacetStage>(std::move(facets), SpillPolicy::Of(options));
    } else if (name == "$changeStream") {
      // What a standalone mongod answers: rockdoc is one node, with no
      // replication oplog to stream from.
      return Failed(40573, "The $changeStream stage is only supported on replica sets");
    } else if (IsKnownStage(name)) {
      return Status(ErrorCode::kNotImplemented,
                    "the stage " + std::string(name) + " is not supported by rockdoc yet");
    } else {
      return Failed(40324, "Unrecognized pipeline stage name: '" + std::string(name) + "'");
    }
    if (options.deadline.is_set()) chain.push_back(std::make_unique<DeadlineStage>(options.deadline));
    chain.push_back(std::move(stage));
  }
  // After the last stage too, so that its own work runs under the deadline.
  if (options.deadline.is_set() && !chain.empty()) {
    chain.push_back(std::make_unique<DeadlineStage>(options.deadline));
  }
  return chain;
}


// The pipeline's find: its leading $match (several: their $and), $sort,
// then $skip/$limit, checked with MongoDB's errors.
// Whether a filter has an $expr (at its top or inside $and/$or/$nor).
bool MentionsExpr(DocumentView filter) {
  for (const Element& f : filter) {
    if (f.key() == "$expr") return true;
    if ((f.key() == "$and" || f.key() == "$or" || f.key() == "$nor") && f.type() == BsonType::kArray) {
      for (const Element& clause : f.Array()) {
        if (clause.type() == BsonType::kDocument && MentionsExpr(clause.Document())) return true;
      }
    }
  }
  return false;
}

struct LeadingFind {
  Document filter;
  FindOptions options;
  size_t next = 0;  // the first stage the find does not run
};

StatusOr<LeadingFind> Pushdown(const std::vector<Element>& stages, const PipelineOptions& options) {
  size_t i = 0;
  BsonBuilder filter_builder;
  std::vector<Element> matches;
  FindOptions fo;
  fo.max_time_ms = options.FindMaxTimeMS();
  if (options.hint) fo.hint = *options.hint;
  if (options.hint_name) fo.hint_name = *options.hint_name;
  while (i < stages.size() && stages[i].key() == "$match") {
    if (stages[i].type() != BsonType::kDocument) {
      return Failed(15959, "the match filter must be an expression in an object");
    }
    // A $match that may read variables bound outside ($lookup's let) runs
    // as a stage: the find knows no variables.
    if (options.variables != nullptr && MentionsExpr(stages[i].Document())) break;
    // Checked here, with MongoDB's error, before anything runs.
    ROCKDOC_RETURN_IF_ERROR(ParseMatchExpression(stages[i].Document()).status());
    matches.push_back(stages[i]);
    ++i;
  }
  if (i < stages.size() && stages[i].key() == "$sort") {
    if (stages[i].type() != BsonType::kDocument) {
      return Failed(15973, "the $sort key specification must be an object");
    }
    if (stages[i].Document().empty()) return Failed(15976, "$sort stage must have at least one sort key");
    ROCKDOC_RETURN_IF_ERROR(SortPattern::Parse(stages[i].Document()).status());
    fo.sort = Document::AdoptValidated(std::string(stages[i].Document().bytes()));
    ++i;
  }
  bool limited = false;
  while (i < stages.size() && (stages[i].key() == "$skip" || stages[i].key() == "$limit")) {
    ROCKDOC_ASSIGN_OR_RETURN(int64_t n, StageCount(stages[i].key(), stages[i]));
    if (stages[i].key() == "$skip") {
      if (limited) break;  // a skip after a limit is not a find's
      fo.skip += n;
    } else {
      fo.limit = limited ? std::min(fo.limit, n) : n;
      limited = true;
    }
    ++i;
  }
  LeadingFind out;
  Document& filter = out.filter;
  if (matches.size() == 1) {
    filter = Document::AdoptValidated(std::string(matches[0].Document().bytes()));
  } else if (matches.size() > 1) {
    filter_builder.OpenArray("$and");
    for (const Element& m : matches) filter_builder.AppendDocument("", m.Document());
    filter_builder.Close();
    filter = std::move(filter_builder).Build();
  }

  out.options = std::move(fo);
  out.next = i;
  return out;
}

class CountingSource;
void AppendStages(const std::vector<Element>& stages, size_t from, const Document& find_explain,
                  const std::vector<const CountingSource*>& counters,
                  const std::vector<const Stage*>& explained, BsonBuilder* out);

}  // namespace

// $collStats's one document, or $indexStats's one per index.
StatusOr<std::vector<Document>> StatsDocuments(std::string_view collection, const Element& stage,
                                               const PipelineOptions& options) {
  std::vector<Document> out;
  if (stage.key() == "$queryStats") {
    if (stage.type() != BsonType::kDocument) {
      return Failed(14, "BSON field '$queryStats' is the wrong type '" +
                            std::string(BsonTypeAlias(stage.type())) + "', expected type 'object'");
    }
    for (const Element& f : stage.Document()) {
      if (f.key() == "transformIdentifiers") {
        return Status(ErrorCode::kNotImplemented,
                      "BSON field '$queryStats.transformIdentifiers' is not supported by rockdoc");
      }
      return Failed(40415, "BSON field '$queryStats." + std::string(f.key()) + "' is an unknown field.");
    }
    if (!options.query_stats) return Status(ErrorCode::kNotImplemented, "$queryStats is not supported here");
    return options.query_stats(collection);
  }
  if (stage.key() == "$indexStats") {
    if (stage.type() != BsonType::kDocument || !stage.Document().empty()) {
      return Failed(28803, "The $indexStats stage specification must be an empty object");
    }
    if (!options.index_stats) return Status(ErrorCode::kNotImplemented, "$indexStats is not supported here");
    return options.index_stats(collection);
  }
  if (stage.type() != BsonType::kDocument) {
    return Failed(5447000, "$collStats must take a nested object but found: " + Shown(stage));
  }
  if (!options.collection_stats) return Status(ErrorCode::kNotImplemented, "$collStats is not supported here");
  BsonBuilder b;
  b.AppendString("ns", options.database + "." + std::string(collection));
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  b.AppendString("host", host);
  b.AppendDateTime("localTime", NowMillis());
  std::optional<CollectionStats> stats;
  for (const Element& f : stage.Document()) {
    if (f.key() == "storageStats" || f.key() == "count") {
      if (f.type() != BsonType::kDocument) {
        return Failed(14, "BSON field '$collStats." + std::string(f.key()) + "' is the wrong type '" +
                              std::string(BsonTypeAlias(f.type())) + "', expected type 'object'");
      }
      if (!stats) {
        ROCKDOC_ASSIGN_OR_RETURN(CollectionStats s, options.collection_stats(collection));
        stats = std::move(s);
      }
      if (f.key() == "count") {
        if (!f.Document().empty()) return Failed(40415, "BSON field '$collStats.count' takes no arguments");
        b.AppendInt64("count", stats->count);
        continue;
      }
      int64_t scale = 1;
      for (const Element& o : f.Document()) {
        if (o.key() != "scale") {
          return Failed(40415, "BSON field '$collStats.storageStats." + std::string(o.key()) + "' is an unknown field.");
        }
        if (!o.IsNumber() || !o.ExactInt64(&scale) || scale < 1) {
          return Failed(51024, "BSON field 'scale' value must be >= 1, actual value '" + Shown(o) + "'");
        }
      }
      b.OpenDocument("storageStats");
      AppendStorageStats(*stats, scale, &b);
      b.Close();
    } else if (f.key() == "latencyStats" || f.key() == "queryExecStats") {
      return Status(ErrorCode::kNotImplemented,
                    "$collStats " + std::string(f.key()) + " is not supported by rockdoc (it keeps no operation latencies)");
    } else {
      return Failed(40415, "BSON field '$collStats." + std::string(f.key()) + "' is an unknown field.");
    }
  }
  out.push_back(std::move(b).Build());
  return out;
}

// The options with maxTimeMS's deadline set, once, at the outermost open
// (sub-pipelines inherit it).
PipelineOptions WithDeadline(const PipelineOptions& options) {
  PipelineOptions out = options;
  if (!out.deadline.is_set() && out.max_time_ms > 0) out.deadline = Deadline::AfterMillis(out.max_time_ms);
  return out;
}

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
  if (!stages.empty() && (stages.back().key() == "$out" || stages.back().key() == "$merge")) {
    ROCKDOC_RETURN_IF_ERROR(source->Next().status());
  }
  return std::unique_ptr<DocumentSource>(std::make_unique<BoundedResults>(std::move(source)));
}

StatusOr<std::unique_ptr<DocumentSource>> OpenPipeline(std::string_view collection,
                                                       DocumentView pipeline,
                                                       const PipelineOptions& given,
                                                       FindFn find) {
  const PipelineOptions options = WithDeadline(given);
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, StageElements(pipeline));
  if (!stages.empty() && (stages[0].key() == "$collStats" || stages[0].key() == "$indexStats" ||
                          stages[0].key() == "$queryStats")) {
    // A source of its own: the collection's statistics, then the rest.
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> docs, StatsDocuments(collection, stages[0], options));
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Stage>> chain,
                             ParseStages(stages, 1, options, find, /*in_facet=*/false));
    return RunWrites(stages, Connect(MakeVectorSource(std::move(docs)), std::move(chain)));
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
  if (!stages.empty() && (stages[0].key() == "$collStats" || stages[0].key() == "$indexStats" ||
                          stages[0].key() == "$queryStats")) {
    from = 1;
  } else {
    ROCKDOC_ASSIGN_OR_RETURN(LeadingFind leading, Pushdown(stages, options));
    from = leading.next;
  }
  return ParseStages(stages, from, options, no_find, /*in_facet=*/false).status();
}

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
    auto counted = std::make_unique<CountingSource>(std::make_unique<CursorSource>(std::move(cursor)));
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

namespace {

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

}  // namespace

std::unique_ptr<CursorImpl> PipelineCursor(std::unique_ptr<DocumentSource> source) {
  return std::make_unique<PipelineCursorImpl>(std::move(source));
}

StatusOr<std::unique_ptr<DocumentSource>> OpenCollectionlessPipeline(DocumentView pipeline,
                                                                     const PipelineOptions& given,
                                                                     FindFn find) {
  const PipelineOptions options = WithDeadline(given);
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, StageElements(pipeline));
  if (!stages.empty() && stages[0].key() == "$queryStats") {
    // Every collection's statistics: MongoDB's form, in admin only.
    if (options.database != "admin") {
      return Failed(73, "$queryStats must be run against the 'admin' database with {aggregate: 1}");
    }
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> docs, StatsDocuments("", stages[0], options));
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Stage>> chain,
                             ParseStages(stages, 1, options, find, /*in_facet=*/false));
    return RunWrites(stages, Connect(MakeVectorSource(std::move(docs)), std::move(chain)));
  }
  if (stages.empty() || stages[0].key() != "$documents") {
    return Failed(73, "{aggregate: 1} is not valid for '" +
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
    return Failed(5858202, "error during $documents stage: $documents must evaluate to an array "
                           "of objects");
  }
  return RunWrites(stages, Connect(MakeVectorSource(std::move(out)), std::move(chain)));
}

void AppendStorageStats(const CollectionStats& stats, int64_t k, BsonBuilder* out) {
  auto number = [&](std::string_view name, int64_t v) { AppendNumber(out, name, v); };
  number("size", stats.size / k);
  number("count", stats.count);
  if (stats.count > 0) number("avgObjSize", stats.size / stats.count);
  number("numOrphanDocs", 0);
  number("storageSize", stats.storage_size / k);
  number("freeStorageSize", 0);
  out->AppendBool("capped", stats.capped);
  if (stats.capped) {
    number("max", stats.max);
    number("maxSize", stats.max_size / k);
  }
  out->AppendInt32("nindexes", static_cast<int32_t>(stats.index_sizes.size()));
  out->OpenArray("indexBuilds");
  out->Close();
  number("totalIndexSize", stats.total_index_size / k);
  number("totalSize", (stats.storage_size + stats.total_index_size) / k);
  out->OpenDocument("indexSizes");
  for (const auto& [name, bytes] : stats.index_sizes) number(name, bytes / k);
  out->Close();
  out->AppendInt32("scaleFactor", static_cast<int32_t>(k));
  // rockdoc's own: writes that made a document or an array cross a
  // threshold (CollectionStats; the schema advisor's growth warnings).
  const GrowthStatistics& growth = stats.growth;
  out->OpenDocument("growthWarnings");
  number("documentSize50Percent", growth.size_50_percent_warnings);
  number("documentSize90Percent", growth.size_90_percent_warnings);
  number("array250", growth.array_250_warnings);
  number("array1000", growth.array_1000_warnings);
  number("array10000", growth.array_10000_warnings);
  out->Close();
  // And the distributions kept on write, in power-of-two buckets (not
  // scaled: they are per document, as avgObjSize).
  auto histogram = [&](const Log2Histogram& h, int64_t max) {
    number("count", h.total());
    number("p50", h.PercentileBound(50));
    number("p90", h.PercentileBound(90));
    number("max", max);
    out->OpenArray("buckets");
    for (size_t i = 0; i < h.counts.size(); ++i) {
      if (h.counts[i] == 0) continue;
      out->OpenDocument("");
      number("min", i == 0 ? 0 : int64_t{1} << i);
      number("max", (int64_t{2} << i) - 1);
      number("count", h.counts[i]);
      out->Close();
    }
    out->Close();
  };
  out->OpenDocument("documentSizes");
  out->AppendBool("known", growth.document_sizes_known);
  if (growth.document_sizes_known) {
    histogram(growth.document_sizes, growth.document_sizes.MaxBound());
  }
  out->Close();
  out->OpenArray("arrayLengths");
  for (const ArrayLengths& a : growth.array_lengths) {
    out->OpenDocument("");
    out->AppendString("path", a.path);
    histogram(a.lengths, a.max);
    out->Close();
  }
  out->Close();
}

// ---- shared with the other stage files (stage.h) ----

Status ResultTooLarge(const Document& doc) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "%zX", doc.size());
  std::string first;
  if (!doc.empty()) {
    const Element e = *doc.begin();
    first = std::string(e.key()) + ": " + Shown(e);
    if (first.size() > 100) first = first.substr(0, 100) + "...";
  }
  return Status(ErrorCode::kBSONObjectTooLarge,
                "BSONObj size: " + std::to_string(doc.size()) + " (0x" + hex +
                    ") is invalid. Size must be between 0 and " +
                    std::to_string(kMaxBsonObjectInternalSize) + "(16MB) First element: " + first);
}

std::unique_ptr<DocumentSource> Connect(std::unique_ptr<DocumentSource> source,
                                        std::vector<std::unique_ptr<Stage>> chain) {
  for (std::unique_ptr<Stage>& stage : chain) {
    stage->set_input(std::move(source));
    source = std::move(stage);
  }
  return source;
}

Status MemoryExceeded(std::string_view stage, bool allow_disk_use) {
  if (allow_disk_use) {
    return Status(ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed,
                  "Exceeded memory limit for " + std::string(stage) +
                      "; rockdoc does not spill this stage to disk (only $sort and $group do), "
                      "so allowDiskUse cannot help it.");
  }
  return Status(ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed,
                "Exceeded memory limit for " + std::string(stage) +
                    ", but didn't allow external spilling; pass allowDiskUse:true to opt in.");
}

Status DecodeStageFields(std::string_view stage, DocumentView spec,
                         std::initializer_list<StageField> fields) {
  for (const Element& f : spec) {
    auto it = std::find_if(fields.begin(), fields.end(),
                           [&](const StageField& s) { return s.name == f.key(); });
    if (it == fields.end()) {
      return Failed(40415, "BSON field '" + std::string(stage) + "." + std::string(f.key()) +
                               "' is an unknown field.");
    }
    *it->slot = f;
  }
  return Status::OK();
}

Status StageFailed(int code, std::string message) {
  return Status(static_cast<ErrorCode>(code), std::move(message));
}

std::unique_ptr<Stage> MakeGroupStage(ExpressionPtr id, std::vector<AccumulatorSpec> accumulators,
                                      const StageContext& ctx) {
  return std::make_unique<GroupStage>(std::move(id), std::move(accumulators),
                                      ctx.scope->id_count(), ctx.now_ms,
                                      SpillPolicy::Of(ctx.options), ctx.options.variables);
}

std::unique_ptr<Stage> MakeSortStage(SortPattern pattern, const PipelineOptions& options) {
  return std::make_unique<SortStage>(std::move(pattern), SpillPolicy::Of(options));
}

namespace {
class SpillSource : public DocumentSource {
 public:
  explicit SpillSource(std::unique_ptr<SpillReader> run) : run_(std::move(run)) {}
  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<std::string_view> record, run_->Next());
    if (!record) return std::optional<Document>();
    // Written by this process from documents it holds: valid BSON.
    return std::optional<Document>(Document::AdoptValidated(std::string(*record)));
  }

 private:
  std::unique_ptr<SpillReader> run_;
};
}  // namespace

std::unique_ptr<DocumentSource> MakeSpillSource(std::unique_ptr<SpillReader> run) {
  return std::make_unique<SpillSource>(std::move(run));
}

Status SpilledRuns::Spill(const SpillPolicy& policy,
                          const std::function<Status(SpillWriter*)>& write) {
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillWriter> writer, policy.new_run());
  ROCKDOC_RETURN_IF_ERROR(write(writer.get()));
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillReader> reader, writer->Finish());
  runs_.push_back(std::move(reader));
  return Status::OK();
}

Status SpilledRuns::Start() {
  heads_.resize(runs_.size());
  for (size_t i = 0; i < runs_.size(); ++i) ROCKDOC_RETURN_IF_ERROR(Advance(static_cast<int>(i)));
  return Status::OK();
}

Status SpilledRuns::Advance(int run) {
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<std::string_view> record, runs_[run]->Next());
  if (!record) {
    heads_[run].reset();
    return Status::OK();
  }
  heads_[run] = Document::AdoptValidated(std::string(*record));
  return Status::OK();
}

StatusOr<int> SpilledRuns::Least(
    const std::function<StatusOr<int>(DocumentView, DocumentView)>& compare) const {
  int least = -1;
  for (size_t i = 0; i < heads_.size(); ++i) {
    if (!heads_[i]) continue;
    if (least >= 0) {
      ROCKDOC_ASSIGN_OR_RETURN(int c, compare(heads_[i]->view(), heads_[least]->view()));
      if (c >= 0) continue;
    }
    least = static_cast<int>(i);
  }
  return least;
}

std::unique_ptr<DocumentSource> MakeVectorSource(std::vector<Document> docs) {
  return std::make_unique<OwnedVectorSource>(std::move(docs));
}

}  // namespace rockdoc::internal

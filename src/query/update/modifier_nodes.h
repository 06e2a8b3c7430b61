// query/update/modifier_nodes.h: one class per update operator.
//
// As MongoDB's update system (src/mongo/db/update/*_node.h) does, each
// operator is a leaf of the update tree that owns its parsed argument:
// `Init` parses and checks the argument and fails with MongoDB's error before
// any document is touched; `UpdateExisting` / `CreateValue` then compute the
// new value of one target path. The tree walk that finds targets, creates
// intermediate documents, expands `$`, `$[]` and `$[id]` and detects
// conflicts lives in update_driver.cc; operators never see paths beyond the
// one they modify.
//
// Nodes are immutable after Init, so one parsed update may be applied to
// many documents (updateMany), from several threads at once.
#ifndef ROCKDOC_QUERY_UPDATE_MODIFIER_NODES_H_
#define ROCKDOC_QUERY_UPDATE_MODIFIER_NODES_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/deadline.h"
#include "query/update/mutable_document.h"
#include "query/update/update_matcher.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::update_internal {

// Per-Apply state shared by all operators.
struct ApplyState {
  DocumentView original;  // the document before the update (never modified)
  bool is_upsert_insert = false;
  int64_t now_millis = 0;
  uint32_t timestamp_increment = 1;
  const internal::Deadline* deadline = nullptr;  // maxTimeMS, null = none
  // An operator did work MongoDB counts as a modification even when the
  // document reads the same afterwards: a $push that inserted elements,
  // which its $slice (or $sort and $slice) then dropped again.
  bool counts_as_modified = false;
  Arena arena;
  // Storage for keys made during the walk (positional indexes), so that
  // MutableNode keys viewing them stay valid.
  std::deque<std::string> keys;
};

// Where an operator is applied.
struct ApplyParams {
  ApplyState* state;
  std::string_view path;        // concrete dotted path of the target ("a.0.b")
  std::string_view field_name;  // its last component
  bool parent_is_array = false;
};

// What applying an operator to an existing target did.
struct LeafOutcome {
  bool changed = false;  // the value (or its presence) changed
  bool remove = false;   // the walker must remove the target from its document
};

class ModifierNode {
 public:
  virtual ~ModifierNode() = default;
  // "$set", "$push", ...
  virtual std::string_view name() const = 0;
  // Parses the argument: `arg` is the field of the operator document
  // ({$inc: {"a.b": 2}} gives key "a.b", value 2).
  virtual Status Init(const Element& arg) = 0;
  // Whether a missing target is created (false: applying to a missing path
  // is a no-op, as for $unset, $pop, $pull, $pullAll).
  virtual bool ShouldCreate(const ApplyState& /*state*/) const { return true; }
  // Applies to an existing target, replacing or editing *target in place.
  virtual Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                                LeafOutcome* outcome) const = 0;
  // Gives a value to a newly created target (key already set). Called only
  // when ShouldCreate() is true.
  virtual Status CreateValue(MutableNode* fresh, const ApplyParams& params) const = 0;
};

// $set: {path: value}.
class SetNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$set"; }
  Status Init(const Element& arg) override;
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode* fresh, const ApplyParams& params) const override;

 protected:
  Element value_;
};

// $setOnInsert: $set, but only when an upsert inserts; otherwise a no-op
// (that still takes part in conflict detection).
class SetOnInsertNode : public SetNode {
 public:
  std::string_view name() const override { return "$setOnInsert"; }
  bool ShouldCreate(const ApplyState& state) const override { return state.is_upsert_insert; }
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
};

// $unset: removes a field; inside an array, sets the element to null so that
// positions do not shift.
class UnsetNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$unset"; }
  Status Init(const Element& /*arg*/) override { return Status::OK(); }
  bool ShouldCreate(const ApplyState&) const override { return false; }
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode*, const ApplyParams&) const override { return Status::OK(); }
};

// $inc and $mul, with MongoDB's numeric type promotion: int32 op int32 stays
// int32 unless the result overflows (then int64); int64 overflow is an
// error; any double operand gives a double; any decimal gives a decimal.
class ArithmeticNode : public ModifierNode {
 public:
  enum class Op { kAdd, kMultiply };
  explicit ArithmeticNode(Op op) : op_(op) {}
  std::string_view name() const override { return op_ == Op::kAdd ? "$inc" : "$mul"; }
  Status Init(const Element& arg) override;
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  // $inc creates the field with the operand; $mul with a zero of the
  // operand's type.
  Status CreateValue(MutableNode* fresh, const ApplyParams& params) const override;

 private:
  Op op_;
  Element operand_;
};

// $min / $max: replace when the operand sorts below / above the current
// value in MongoDB's cross-type order.
class CompareNode : public ModifierNode {
 public:
  enum class Mode { kMin, kMax };
  explicit CompareNode(Mode mode) : mode_(mode) {}
  std::string_view name() const override { return mode_ == Mode::kMin ? "$min" : "$max"; }
  Status Init(const Element& arg) override;
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode* fresh, const ApplyParams& params) const override;

 private:
  Mode mode_;
  Element value_;
};

// $bit: {path: {and: n, or: n, xor: n}}, applied in the order written to an
// int32 or int64 (a missing field starts as int32 0). int32 op int32 stays
// int32; with an int64 on either side the result is int64, the int32 sign-
// extended. Doubles, decimals and other types are refused.
class BitNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$bit"; }
  Status Init(const Element& arg) override;
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode* fresh, const ApplyParams& params) const override;

 private:
  enum class Op { kAnd, kOr, kXor };
  struct Step {
    Op op;
    Element operand;  // int32 or int64
  };
  // `value` (int32 or int64) after every step, in the arena.
  Element ApplySteps(const Element& value, Arena* arena) const;
  std::vector<Step> steps_;
};

// $currentDate: {path: true} or {path: {$type: "date" | "timestamp"}}; the
// time is UpdateContext::now_millis.
class CurrentDateNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$currentDate"; }
  Status Init(const Element& arg) override;
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode* fresh, const ApplyParams& params) const override;

 private:
  Element Now(ApplyState* state) const;
  bool timestamp_ = false;
};

// $rename's destination: receives the source's value from the original
// document. The source side is RenameSourceNode, placed at the source path
// of the same update tree (so both paths take part in conflict detection).
class RenameNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$rename"; }
  // `arg` is {source: "destination"}.
  Status Init(const Element& arg) override;
  const std::string& source() const { return source_; }
  const std::string& destination() const { return destination_; }
  // Checks, against the original document, that neither path goes through
  // an array (MongoDB's restriction). Called once per Apply.
  Status CheckArrays(DocumentView original) const;
  bool ShouldCreate(const ApplyState& state) const override;
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode* fresh, const ApplyParams& params) const override;

 private:
  Element SourceValue(DocumentView original) const;
  std::string source_;
  std::string destination_;
};

class RenameSourceNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$rename"; }
  Status Init(const Element&) override { return Status::OK(); }
  bool ShouldCreate(const ApplyState&) const override { return false; }
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode*, const ApplyParams&) const override { return Status::OK(); }
};

// $push: a value, or {$each: [...], $position: n, $sort: 1|-1|{field: 1|-1},
// $slice: n}. Applied as MongoDB does: insert at $position, then sort, then
// slice.
class PushNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$push"; }
  Status Init(const Element& arg) override;
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode* fresh, const ApplyParams& params) const override;

 private:
  struct SortField {
    std::string path;
    int direction;
  };
  // Applies $each/$position/$sort/$slice to an expanded array node.
  Status PushInto(MutableNode* array, ApplyState* state, bool* changed) const;
  std::vector<Element> values_;
  std::optional<int64_t> position_;
  std::optional<int64_t> slice_;
  bool has_sort_ = false;
  int whole_sort_ = 0;                   // 1 / -1 when sorting whole elements
  std::vector<SortField> sort_fields_;  // when sorting by embedded fields
};

// $addToSet: a value, or {$each: [...]}; appends the values not already
// present (MongoDB equality: 1 == 1.0, documents field by field in order).
class AddToSetNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$addToSet"; }
  Status Init(const Element& arg) override;
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode* fresh, const ApplyParams& params) const override;

 private:
  std::vector<Element> values_;  // de-duplicated, first occurrence kept
};

// $pop: 1 removes the last element, -1 the first.
class PopNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$pop"; }
  Status Init(const Element& arg) override;
  bool ShouldCreate(const ApplyState&) const override { return false; }
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode*, const ApplyParams&) const override { return Status::OK(); }

 private:
  bool from_front_ = false;
};

// $pull: removes the elements equal to a value, or matching a condition:
// {field: cond, ...} for arrays of documents (matched against each element
// document) or {$op: ...} (matched against each element value).
class PullNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$pull"; }
  Status Init(const Element& arg) override;
  bool ShouldCreate(const ApplyState&) const override { return false; }
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode*, const ApplyParams&) const override { return Status::OK(); }

 private:
  enum class Mode { kEquality, kObject, kWrapped };
  bool ElementMatches(const Element& e) const;
  Mode mode_ = Mode::kEquality;
  Element value_;
  Document wrapped_query_;  // {"": value} for kWrapped
  std::shared_ptr<const UpdateMatcher> matcher_;
};

// $pullAll: removes every element equal to one of the listed values.
class PullAllNode : public ModifierNode {
 public:
  std::string_view name() const override { return "$pullAll"; }
  Status Init(const Element& arg) override;
  bool ShouldCreate(const ApplyState&) const override { return false; }
  Status UpdateExisting(MutableNode* target, const ApplyParams& params,
                        LeafOutcome* outcome) const override;
  Status CreateValue(MutableNode*, const ApplyParams&) const override { return Status::OK(); }

 private:
  std::vector<Element> values_;
};

// The operator class for an update operator name, or nullptr when unknown.
std::unique_ptr<ModifierNode> MakeModifierNode(std::string_view op);

}  // namespace rockdoc::update_internal

#endif  // ROCKDOC_QUERY_UPDATE_MODIFIER_NODES_H_

// Array operators: $push, $addToSet, $pop, $pull, $pullAll; and the
// operator factory.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "query/update/modifier_nodes.h"

namespace rockdoc::update_internal {

namespace {

std::string TypeAlias(BsonType t) { return std::string(BsonTypeAlias(t)); }

// An integral number as int64 (1.0 counts; 1.5 does not).
bool IntegralValue(const Element& e, int64_t* out) { return e.IsNumber() && e.ExactInt64(out); }

Status MustBeArrayForPush(const MutableNode& target, const ApplyParams& params) {
  if (target.type() == BsonType::kArray) return Status::OK();
  return Status(ErrorCode::kBadValue,
                "The field '" + std::string(params.field_name) + "' must be an array but is of type " +
                    TypeAlias(target.type()) + " in document " +
                    FormatIdForMessage(params.state->original));
}

}  // namespace

// ---------------------------------------------------------------- $push

Status PushNode::Init(const Element& arg) {
  if (arg.type() != BsonType::kDocument || !arg.Document().Has("$each")) {
    values_.push_back(arg);
    return Status::OK();
  }
  for (Element clause : arg.Document()) {
    std::string_view name = clause.key();
    if (name == "$each") {
      if (clause.type() != BsonType::kArray) {
        return Status(ErrorCode::kBadValue,
                      "The argument to $each in $push must be an array but it was of type: " +
                          TypeAlias(clause.type()));
      }
      for (Element v : clause.Array()) values_.push_back(v);
    } else if (name == "$slice") {
      int64_t n;
      if (!clause.IsNumber()) {
        return Status(ErrorCode::kBadValue,
                      "The value for $slice must be an integer value but was given type: " +
                          TypeAlias(clause.type()));
      }
      if (!IntegralValue(clause, &n)) {
        return Status(ErrorCode::kBadValue,
                      "The $slice value in $push must be an integer value but was given value: " +
                          FormatValue(clause));
      }
      slice_ = n;
    } else if (name == "$position") {
      int64_t n;
      if (!clause.IsNumber()) {
        return Status(ErrorCode::kBadValue,
                      "The value for $position must be an integer value, not of type: " +
                          TypeAlias(clause.type()));
      }
      if (!IntegralValue(clause, &n)) {
        return Status(ErrorCode::kBadValue,
                      "The $position value in $push must be an integer value but was given value: " +
                          FormatValue(clause));
      }
      position_ = n;
    } else if (name == "$sort") {
      has_sort_ = true;
      if (clause.IsNumber()) {
        int64_t d;
        if (!IntegralValue(clause, &d) || (d != 1 && d != -1)) {
          return Status(ErrorCode::kBadValue, "The $sort element value must be either 1 or -1");
        }
        whole_sort_ = static_cast<int>(d);
      } else if (clause.type() == BsonType::kDocument) {
        if (clause.Document().empty()) {
          return Status(ErrorCode::kBadValue,
                        "The $sort pattern is empty when it should be a set of fields.");
        }
        for (Element field : clause.Document()) {
          std::string_view path = field.key();
          if (path.empty() || path.front() == '.' || path.back() == '.' ||
              path.find("..") != std::string_view::npos) {
            return Status(ErrorCode::kBadValue,
                          "The $sort field is a dotted field but has an empty part: " +
                              std::string(path));
          }
          int64_t d;
          if (!IntegralValue(field, &d) || (d != 1 && d != -1)) {
            return Status(ErrorCode::kBadValue, "The $sort element value must be either 1 or -1");
          }
          sort_fields_.push_back(SortField{std::string(path), static_cast<int>(d)});
        }
      } else {
        return Status(ErrorCode::kBadValue,
                      "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} "
                      "to sort embedded fields");
      }
    } else {
      return Status(ErrorCode::kBadValue, "Unrecognized clause in $push: " + std::string(name));
    }
  }
  return Status::OK();
}

Status PushNode::PushInto(MutableNode* array, ApplyState* state, bool* changed) const {
  std::vector<MutableNode>& children = array->children();
  const int64_t size = static_cast<int64_t>(children.size());
  int64_t pos = size;
  if (position_) {
    pos = *position_ >= 0 ? std::min(*position_, size) : std::max<int64_t>(0, size + *position_);
  }
  if (!values_.empty()) {
    std::vector<MutableNode> fresh;
    fresh.reserve(values_.size());
    for (const Element& v : values_) fresh.emplace_back(std::string_view(), v);
    children.insert(children.begin() + pos, std::make_move_iterator(fresh.begin()),
                    std::make_move_iterator(fresh.end()));
    *changed = true;
    state->counts_as_modified = true;
  }

  if (has_sort_ && children.size() > 1) {
    // Sort keys are computed once per element, not once per comparison.
    const size_t n = children.size();
    const size_t width = whole_sort_ != 0 ? 1 : sort_fields_.size();
    const Element null_value = state->arena.Null();
    std::vector<Element> keys(n * width);
    internal::DeadlineChecker checker(state->deadline);
    for (size_t i = 0; i < n; ++i) {
      ROCKDOC_RETURN_IF_ERROR(checker.Tick());
      Element e = children[i].AsElement(&state->arena);
      if (whole_sort_ != 0) {
        keys[i] = e;
        continue;
      }
      for (size_t f = 0; f < width; ++f) {
        Element k;
        if (e.type() == BsonType::kDocument) k = e.Document().GetPath(sort_fields_[f].path);
        keys[i * width + f] = k.ok() ? k : null_value;  // missing sorts as null
      }
    }
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto less = [&](size_t a, size_t b) {
      for (size_t f = 0; f < width; ++f) {
        int c = CompareValues(keys[a * width + f], keys[b * width + f]);
        int dir = whole_sort_ != 0 ? whole_sort_ : sort_fields_[f].direction;
        if (c != 0) return dir > 0 ? c < 0 : c > 0;
      }
      return false;
    };
    // The sort itself cannot stop part-way: the limit is checked around it.
    if (state->deadline != nullptr) ROCKDOC_RETURN_IF_ERROR(state->deadline->Check());
    // The array a $push with $sort keeps is usually sorted already (the last
    // such $push sorted it): when the new values went to the end and the old
    // elements are in order, sorting the new ones and merging them in is the
    // stable sort's answer (on ties the old elements, earlier, come first)
    // in linear time instead of n log n comparisons.
    const size_t fresh = values_.size();
    const size_t old = n - fresh;
    bool old_sorted = pos == size && old > 0;
    for (size_t i = 1; old_sorted && i < old; ++i) old_sorted = !less(i, i - 1);
    if (old_sorted) {
      std::stable_sort(order.begin() + old, order.end(), less);
      std::inplace_merge(order.begin(), order.begin() + old, order.end(), less);
    } else {
      std::stable_sort(order.begin(), order.end(), less);
    }
    if (state->deadline != nullptr) ROCKDOC_RETURN_IF_ERROR(state->deadline->Check());
    bool reordered = false;
    for (size_t i = 0; i < n; ++i) reordered |= order[i] != i;
    if (reordered) {
      std::vector<MutableNode> sorted;
      sorted.reserve(n);
      for (size_t i : order) sorted.push_back(std::move(children[i]));
      children = std::move(sorted);
      *changed = true;
    }
  }

  if (slice_) {
    const int64_t count = static_cast<int64_t>(children.size());
    if (*slice_ >= 0 && count > *slice_) {
      children.erase(children.begin() + *slice_, children.end());
      *changed = true;
    } else if (*slice_ < 0 && count > -*slice_) {
      children.erase(children.begin(), children.begin() + (count + *slice_));
      *changed = true;
    }
  }
  return Status::OK();
}

Status PushNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                LeafOutcome* outcome) const {
  ROCKDOC_RETURN_IF_ERROR(MustBeArrayForPush(*target, params));
  target->Expand();
  return PushInto(target, params.state, &outcome->changed);
}

Status PushNode::CreateValue(MutableNode* fresh, const ApplyParams& params) const {
  std::string_view key = fresh->key();
  *fresh = MutableNode::NewContainer(key, BsonType::kArray);
  bool changed = false;
  return PushInto(fresh, params.state, &changed);
}

// ---------------------------------------------------------------- $addToSet

Status AddToSetNode::Init(const Element& arg) {
  std::vector<Element> candidates;
  if (arg.type() == BsonType::kDocument && !arg.Document().empty() &&
      (*arg.Document().begin()).key() == "$each") {
    DocumentView spec = arg.Document();
    Element each = *spec.begin();
    if (spec.CountFields() > 1) {
      return Status(ErrorCode::kBadValue, "Found unexpected fields after $each in $addToSet: " +
                                              FormatValue(arg));
    }
    if (each.type() != BsonType::kArray) {
      return Status(ErrorCode::kBadValue,
                    "The argument to $each in $addToSet must be an array but it was of type " +
                        TypeAlias(each.type()));
    }
    for (Element v : each.Array()) candidates.push_back(v);
  } else {
    candidates.push_back(arg);
  }
  // The first of each set of equal values, in order, as MongoDB keeps them;
  // through an ordered set, so that a long $each is not quadratic before
  // any time limit can be checked.
  auto less = [](const Element& a, const Element& b) { return CompareValues(a, b) < 0; };
  std::set<Element, decltype(less)> seen(less);
  for (const Element& v : candidates) {
    if (seen.insert(v).second) values_.push_back(v);
  }
  return Status::OK();
}

Status AddToSetNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                    LeafOutcome* outcome) const {
  if (target->type() != BsonType::kArray) {
    return Status(ErrorCode::kBadValue,
                  "Cannot apply $addToSet to non-array field. Field named '" +
                      std::string(params.field_name) + "' has non-array type " +
                      TypeAlias(target->type()));
  }
  std::vector<Element> missing;
  {
    // Check membership against the array as it was, before expanding it.
    // values_ x array comparisons: checked against maxTimeMS as they go.
    internal::DeadlineChecker checker(params.state->deadline);
    Element current = target->AsElement(&params.state->arena);
    for (const Element& v : values_) {
      bool present = false;
      for (Element item : current.Array()) {
        ROCKDOC_RETURN_IF_ERROR(checker.Tick());
        if (CompareValues(item, v) == 0) {
          present = true;
          break;
        }
      }
      if (!present) missing.push_back(v);
    }
  }
  if (missing.empty()) return Status::OK();
  target->Expand();
  for (const Element& v : missing) target->children().emplace_back(std::string_view(), v);
  outcome->changed = true;
  return Status::OK();
}

Status AddToSetNode::CreateValue(MutableNode* fresh, const ApplyParams&) const {
  std::string_view key = fresh->key();
  *fresh = MutableNode::NewContainer(key, BsonType::kArray);
  for (const Element& v : values_) fresh->children().emplace_back(std::string_view(), v);
  return Status::OK();
}

// ---------------------------------------------------------------- $pop

Status PopNode::Init(const Element& arg) {
  if (!arg.IsNumber()) {
    return Status(ErrorCode::kFailedToParse,
                  "Expected a number in: " + FormatElement(arg.key(), arg));
  }
  double v = arg.NumberAsDouble();
  if (v != 1 && v != -1) {
    return Status(ErrorCode::kFailedToParse, "$pop expects 1 or -1, found: " + FormatValue(arg));
  }
  from_front_ = v < 0;
  return Status::OK();
}

Status PopNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                               LeafOutcome* outcome) const {
  if (target->type() != BsonType::kArray) {
    return Status(ErrorCode::kTypeMismatch, "Path '" + std::string(params.path) +
                                                "' contains an element of non-array type '" +
                                                TypeAlias(target->type()) + "'");
  }
  target->Expand();
  auto& children = target->children();
  if (children.empty()) return Status::OK();
  children.erase(from_front_ ? children.begin() : children.end() - 1);
  outcome->changed = true;
  return Status::OK();
}

// ---------------------------------------------------------------- $pull

namespace {

// Operators that take a path's value ({$gte: 6}), as opposed to top-level
// ones ($and, $or, ...) or field names: they make $pull match element values.
bool IsPathAcceptingOperator(std::string_view name) {
  static constexpr std::string_view kOperators[] = {
      "$eq",  "$ne",  "$gt",     "$gte",  "$lt",  "$lte",   "$in",        "$nin",
      "$all", "$exists", "$type", "$size", "$mod", "$regex", "$options", "$elemMatch",
      "$not", "$bitsAllSet", "$bitsAllClear", "$bitsAnySet", "$bitsAnyClear"};
  return std::find(std::begin(kOperators), std::end(kOperators), name) != std::end(kOperators);
}

Status CannotPull(std::string_view op) {
  return Status(ErrorCode::kBadValue, "Cannot apply " + std::string(op) + " to a non-array value");
}

// Removes the children for which `remove(element)` holds, checking
// maxTimeMS as it goes.
template <typename Pred>
Status RemoveMatching(MutableNode* target, ApplyState* state, LeafOutcome* outcome, Pred remove) {
  Arena* arena = &state->arena;
  internal::DeadlineChecker checker(state->deadline);
  Element current = target->AsElement(arena);
  bool any = false;
  for (Element item : current.Array()) {
    ROCKDOC_RETURN_IF_ERROR(checker.Tick());
    if (remove(item)) {
      any = true;
      break;
    }
  }
  if (!any) return Status::OK();  // leave the array unexpanded: copied as raw bytes
  target->Expand();
  auto& children = target->children();
  Status expired;  // the update fails as a whole, so the half-done erase is dropped
  children.erase(std::remove_if(children.begin(), children.end(),
                                [&](const MutableNode& c) {
                                  if (expired.ok()) expired = checker.Tick();
                                  return expired.ok() && remove(c.AsElement(arena));
                                }),
                 children.end());
  ROCKDOC_RETURN_IF_ERROR(expired);
  outcome->changed = true;
  return Status::OK();
}

}  // namespace

Status PullNode::Init(const Element& arg) {
  value_ = arg;
  if (arg.type() == BsonType::kDocument &&
      (arg.Document().empty() || !IsPathAcceptingOperator((*arg.Document().begin()).key()))) {
    mode_ = Mode::kObject;
    ROCKDOC_ASSIGN_OR_RETURN(auto m, ParseUpdateMatcher(arg.Document()));
    matcher_ = std::move(m);
    return Status::OK();
  }
  if (arg.type() == BsonType::kDocument || arg.type() == BsonType::kRegex) {
    mode_ = Mode::kWrapped;
    BsonBuilder b;
    b.AppendElementAs("", arg);
    wrapped_query_ = std::move(b).Build();
    ROCKDOC_ASSIGN_OR_RETURN(auto m, ParseUpdateMatcher(wrapped_query_.view()));
    matcher_ = std::move(m);
    return Status::OK();
  }
  mode_ = Mode::kEquality;
  return Status::OK();
}

bool PullNode::ElementMatches(const Element& e) const {
  switch (mode_) {
    case Mode::kEquality:
      return CompareValues(e, value_) == 0;
    case Mode::kObject:
      return e.type() == BsonType::kDocument && matcher_->Matches(e.Document());
    case Mode::kWrapped: {
      BsonBuilder b;
      b.AppendElementAs("", e);
      Document wrapped = std::move(b).Build();
      return matcher_->Matches(wrapped.view());
    }
  }
  return false;
}

Status PullNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                LeafOutcome* outcome) const {
  if (target->type() != BsonType::kArray) return CannotPull("$pull");
  return RemoveMatching(target, params.state, outcome,
                        [this](const Element& e) { return ElementMatches(e); });
}

// ---------------------------------------------------------------- $pullAll

Status PullAllNode::Init(const Element& arg) {
  if (arg.type() != BsonType::kArray) {
    return Status(ErrorCode::kBadValue,
                  "$pullAll requires an array argument but was given a " + TypeAlias(arg.type()));
  }
  for (Element v : arg.Array()) values_.push_back(v);
  return Status::OK();
}

Status PullAllNode::UpdateExisting(MutableNode* target, const ApplyParams& params,
                                   LeafOutcome* outcome) const {
  if (target->type() != BsonType::kArray) return CannotPull("$pullAll");
  return RemoveMatching(target, params.state, outcome, [this](const Element& e) {
    return std::any_of(values_.begin(), values_.end(),
                       [&](const Element& v) { return CompareValues(e, v) == 0; });
  });
}

// ---------------------------------------------------------------- factory

std::unique_ptr<ModifierNode> MakeModifierNode(std::string_view op) {
  if (op == "$set") return std::make_unique<SetNode>();
  if (op == "$unset") return std::make_unique<UnsetNode>();
  if (op == "$inc") return std::make_unique<ArithmeticNode>(ArithmeticNode::Op::kAdd);
  if (op == "$mul") return std::make_unique<ArithmeticNode>(ArithmeticNode::Op::kMultiply);
  if (op == "$bit") return std::make_unique<BitNode>();
  if (op == "$min") return std::make_unique<CompareNode>(CompareNode::Mode::kMin);
  if (op == "$max") return std::make_unique<CompareNode>(CompareNode::Mode::kMax);
  if (op == "$currentDate") return std::make_unique<CurrentDateNode>();
  if (op == "$setOnInsert") return std::make_unique<SetOnInsertNode>();
  if (op == "$rename") return std::make_unique<RenameNode>();
  if (op == "$push") return std::make_unique<PushNode>();
  if (op == "$addToSet") return std::make_unique<AddToSetNode>();
  if (op == "$pop") return std::make_unique<PopNode>();
  if (op == "$pull") return std::make_unique<PullNode>();
  if (op == "$pullAll") return std::make_unique<PullAllNode>();
  return nullptr;
}

}  // namespace rockdoc::update_internal

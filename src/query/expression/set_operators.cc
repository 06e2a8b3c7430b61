// query/expression/set_operators.cc: the set operators ($setUnion,
// $setIntersection, $setDifference, $setEquals, $setIsSubset,
// $allElementsTrue, $anyElementTrue) and the array operators that take
// named arguments or order values ($zip, $sortArray, $firstN, $lastN,
// $maxN, $minN). A set is an array whose duplicates and order do not
// matter; results are in MongoDB's value order, without duplicates.
#include <algorithm>

#include "query/expression/expression_internal.h"

namespace rockdoc::internal::expression_detail {

namespace {

std::vector<Element> Elements(DocumentView array) {
  std::vector<Element> out;
  for (const Element& e : array) out.push_back(e);
  return out;
}

// Sorted, without duplicates (MongoDB's value comparison).
std::vector<Element> AsSet(DocumentView array) {
  std::vector<Element> out = Elements(array);
  std::sort(out.begin(), out.end(), [](const Element& a, const Element& b) { return CompareValues(a, b) < 0; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Element& a, const Element& b) { return CompareValues(a, b) == 0; }),
            out.end());
  return out;
}

bool Contains(const std::vector<Element>& set, const Element& e) {
  return std::binary_search(set.begin(), set.end(), e,
                            [](const Element& a, const Element& b) { return CompareValues(a, b) < 0; });
}

Status NotArrays(std::string_view op, int code, const Value& v) {
  return Failed(code, "All operands of " + std::string(op) + " must be arrays. One argument is of type: " +
                          TypeName(v));
}

// $setUnion / $setIntersection: null when any operand is null or missing.
template <bool kUnion>
StatusOr<Value> UnionIntersectionOp(const Args& args, const ExpressionVariables& vars) {
  const char* op = kUnion ? "$setUnion" : "$setIntersection";
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  bool null = false;
  for (const Value& x : v) {
    if (IsNullish(x)) {
      null = true;
    } else if (x.type() != BsonType::kArray) {
      return NotArrays(op, kUnion ? 17043 : 17047, x);
    }
  }
  if (null) return NullValue();
  std::vector<Element> result;
  for (size_t i = 0; i < v.size(); ++i) {
    std::vector<Element> set = AsSet(v[i].element().Array());
    if (i == 0) {
      result = std::move(set);
      continue;
    }
    std::vector<Element> merged;
    if (kUnion) {
      merged = result;
      for (const Element& e : set) {
        if (!Contains(result, e)) merged.push_back(e);
      }
      std::sort(merged.begin(), merged.end(), [](const Element& a, const Element& b) { return CompareValues(a, b) < 0; });
    } else {
      for (const Element& e : result) {
        if (Contains(set, e)) merged.push_back(e);
      }
    }
    result = std::move(merged);
  }
  return ArrayOf(result);
}

StatusOr<Value> SetDifferenceOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  if (IsNullish(v[0]) || IsNullish(v[1])) return NullValue();
  if (v[0].type() != BsonType::kArray) {
    return Failed(17048, "both operands of $setDifference must be arrays. First argument is of type: " +
                             TypeName(v[0]));
  }
  if (v[1].type() != BsonType::kArray) {
    return Failed(17049, "both operands of $setDifference must be arrays. Second argument is of type: " +
                             TypeName(v[1]));
  }
  const std::vector<Element> other = AsSet(v[1].element().Array());
  std::vector<Element> out;
  for (const Element& e : AsSet(v[0].element().Array())) {
    if (!Contains(other, e)) out.push_back(e);
  }
  return ArrayOf(out);
}

StatusOr<Value> SetEqualsOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  std::vector<Element> first;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].type() != BsonType::kArray) return NotArrays("$setEquals", 17044, v[i]);
    std::vector<Element> set = AsSet(v[i].element().Array());
    if (i == 0) {
      first = std::move(set);
    } else if (set.size() != first.size() ||
               !std::equal(set.begin(), set.end(), first.begin(),
                           [](const Element& a, const Element& b) { return CompareValues(a, b) == 0; })) {
      return BoolValue(false);
    }
  }
  return BoolValue(true);
}

StatusOr<Value> SetIsSubsetOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Value> v, EvaluateAll(args, vars));
  if (v[0].type() != BsonType::kArray) {
    return Failed(17046, "both operands of $setIsSubset must be arrays. First argument is of type: " +
                             TypeName(v[0]));
  }
  if (v[1].type() != BsonType::kArray) {
    return Failed(17042, "both operands of $setIsSubset must be arrays. Second argument is of type: " +
                             TypeName(v[1]));
  }
  const std::vector<Element> super = AsSet(v[1].element().Array());
  for (const Element& e : v[0].element().Array()) {
    if (!Contains(super, e)) return BoolValue(false);
  }
  return BoolValue(true);
}

template <bool kAll>
StatusOr<Value> ElementsTrueOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, args[0]->Evaluate(vars));
  if (v.type() != BsonType::kArray) {
    return Failed(kAll ? 17040 : 17041, std::string(kAll ? "$allElementsTrue" : "$anyElementTrue") +
                                            "'s argument must be an array, but is " + TypeName(v));
  }
  for (const Element& e : v.element().Array()) {
    if (IsTruthy(e) != kAll) return BoolValue(!kAll);
  }
  return BoolValue(kAll);
}

// ---- arrays with named arguments ----

// {inputs, useLongestLength, defaults}
StatusOr<Value> ZipOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value inputs, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value longest_v, EvaluateOptional(args[1], vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value defaults_v, EvaluateOptional(args[2], vars));
  if (inputs.type() != BsonType::kArray) {
    return Failed(34461, "inputs must be an array of expressions, found " + TypeName(inputs));
  }
  if (longest_v.ok() && longest_v.type() != BsonType::kBool) {
    return Failed(34463, "useLongestLength must be a bool, found " + TypeName(longest_v));
  }
  const bool longest = longest_v.ok() && longest_v.element().Bool();
  std::vector<std::vector<Element>> arrays;
  for (const Element& e : inputs.element().Array()) {
    if (e.IsNull() || e.type() == BsonType::kUndefined) return NullValue();
    if (e.type() != BsonType::kArray) {
      return Failed(34468, "$zip found a non-array expression in input: " + Shown(Value::FromElement(e)));
    }
    arrays.push_back(Elements(e.Array()));
  }
  std::vector<Element> defaults;
  if (defaults_v.ok()) {
    if (!longest) return Failed(34466, "cannot specify defaults unless useLongestLength is true");
    if (defaults_v.type() != BsonType::kArray) {
      return Failed(34462, "defaults must be an array of expressions, found " + TypeName(defaults_v));
    }
    defaults = Elements(defaults_v.element().Array());
    if (defaults.size() != arrays.size()) {
      return Failed(34467, "defaults and inputs must have the same length");
    }
  }
  size_t n = arrays.empty() ? 0 : (longest ? 0 : SIZE_MAX);
  for (const auto& a : arrays) n = longest ? std::max(n, a.size()) : std::min(n, a.size());
  return Make([&](BsonBuilder& b) {
    b.OpenArray("v");
    for (size_t i = 0; i < n; ++i) {
      b.OpenArray("");
      for (size_t k = 0; k < arrays.size(); ++k) {
        if (i < arrays[k].size()) {
          b.AppendElementAs("", arrays[k][i]);
        } else if (!defaults.empty()) {
          b.AppendElementAs("", defaults[k]);
        } else {
          b.AppendNull("");
        }
      }
      b.Close();
    }
    b.Close();
  });
}

// The value at a dotted path inside an element (missing when not there).
Element At(const Element& e, std::string_view path) {
  Element cur = e;
  while (!path.empty()) {
    if (cur.type() != BsonType::kDocument) return Element();
    const size_t dot = path.find('.');
    cur = cur.Document().Get(path.substr(0, dot));
    if (!cur.ok()) return cur;
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return cur;
}

int CompareMissingFirst(const Element& a, const Element& b) {
  if (!a.ok() || !b.ok()) return static_cast<int>(a.ok()) - static_cast<int>(b.ok());
  return CompareValues(a, b);
}

// {input, sortBy}: sortBy 1/-1 orders the values, a document orders by its
// fields.
StatusOr<Value> SortArrayOp(const Args& args, const ExpressionVariables& vars) {
  ROCKDOC_ASSIGN_OR_RETURN(Value input, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value sort_by, args[1]->Evaluate(vars));
  std::vector<std::pair<std::string, int>> keys;
  if (sort_by.ok() && sort_by.element().IsNumber() &&
      (sort_by.element().NumberAsDouble() == 1 || sort_by.element().NumberAsDouble() == -1)) {
    keys.emplace_back("", static_cast<int>(sort_by.element().NumberAsDouble()));
  } else if (sort_by.type() == BsonType::kDocument && !sort_by.element().Document().empty()) {
    for (const Element& f : sort_by.element().Document()) {
      if (!f.IsNumber() || (f.NumberAsDouble() != 1 && f.NumberAsDouble() != -1)) {
        return Failed(15975, "$sort key ordering must be 1 (for ascending) or -1 (for descending)");
      }
      keys.emplace_back(std::string(f.key()), static_cast<int>(f.NumberAsDouble()));
    }
  } else {
    return Failed(2942505, "$sortArray requires sortBy to be either 1, -1, or a document of the "
                           "form {field: 1} found " + Shown(sort_by));
  }
  if (IsNullish(input)) return NullValue();
  if (input.type() != BsonType::kArray) {
    return Failed(2942504, "The input argument to $sortArray must be an array, but was of type: " +
                               TypeName(input));
  }
  std::vector<Element> items = Elements(input.element().Array());
  std::stable_sort(items.begin(), items.end(), [&](const Element& a, const Element& b) {
    for (const auto& [path, dir] : keys) {
      const int c = path.empty() ? CompareValues(a, b) : CompareMissingFirst(At(a, path), At(b, path));
      if (c != 0) return dir * c < 0;
    }
    return false;
  });
  return ArrayOf(items);
}

// {n, input}: $firstN/$lastN take from the ends; $maxN/$minN the largest or
// smallest non-null values, in that order.
enum class NOp { kFirst, kLast, kMax, kMin };

template <NOp kOp>
StatusOr<Value> NItemsOp(const Args& args, const ExpressionVariables& vars) {
  static constexpr const char* kNames[] = {"$firstN", "$lastN", "$maxN", "$minN"};
  const char* op = kNames[static_cast<int>(kOp)];
  ROCKDOC_ASSIGN_OR_RETURN(Value n_v, args[0]->Evaluate(vars));
  ROCKDOC_ASSIGN_OR_RETURN(Value input, args[1]->Evaluate(vars));
  int64_t n = 0;
  if (!n_v.ok() || !n_v.element().IsNumber() || !n_v.element().ExactInt64(&n)) {
    return Failed(5787902, std::string("Value for 'n' must be of integral type, but found ") + Shown(n_v));
  }
  if (n <= 0) return Failed(5787908, std::string("'n' must be greater than 0, found ") + Shown(n_v));
  if (input.type() != BsonType::kArray) {
    return Failed(5788200, std::string("Input must be an array, but found ") + Shown(input) +
                               " in " + op);
  }
  std::vector<Element> items;
  for (const Element& e : input.element().Array()) {
    if ((kOp == NOp::kMax || kOp == NOp::kMin) && (e.IsNull() || e.type() == BsonType::kUndefined)) continue;
    items.push_back(e);
  }
  const size_t k = std::min<size_t>(items.size(), static_cast<size_t>(n));
  if (kOp == NOp::kFirst) items.resize(k);
  if (kOp == NOp::kLast) items.erase(items.begin(), items.end() - static_cast<ptrdiff_t>(k));
  if (kOp == NOp::kMax || kOp == NOp::kMin) {
    std::stable_sort(items.begin(), items.end(), [](const Element& a, const Element& b) {
      return kOp == NOp::kMax ? CompareValues(a, b) > 0 : CompareValues(a, b) < 0;
    });
    items.resize(k);
  }
  return ArrayOf(items);
}

}  // namespace

void AddSetOperators(OperatorTable* positional, NamedOperatorTable* named) {
  (void)named;
  positional->insert({
      {"$setUnion", {&UnionIntersectionOp<true>, 0, SIZE_MAX}},
      {"$setIntersection", {&UnionIntersectionOp<false>, 0, SIZE_MAX}},
      {"$setDifference", {&SetDifferenceOp, 2, 2}},
      {"$setEquals", {&SetEqualsOp, 2, SIZE_MAX}},
      {"$setIsSubset", {&SetIsSubsetOp, 2, 2}},
      {"$allElementsTrue", {&ElementsTrueOp<true>, 1, 1}},
      {"$anyElementTrue", {&ElementsTrueOp<false>, 1, 1}},
  });
}

void AddArrayOperators(OperatorTable* positional, NamedOperatorTable* named) {
  (void)positional;
  named->insert({
      {"$zip", {&ZipOp, {"inputs", "useLongestLength", "defaults"}, 1, 34460, 34464, 34465}},
      {"$sortArray", {&SortArrayOp, {"input", "sortBy"}, 2, 2942500, 2942501, 2942502}},
      {"$firstN", {&NItemsOp<NOp::kFirst>, {"n", "input"}, 2, 5787801, 5787901, 5787906}},
      {"$lastN", {&NItemsOp<NOp::kLast>, {"n", "input"}, 2, 5787801, 5787901, 5787906}},
      {"$maxN", {&NItemsOp<NOp::kMax>, {"n", "input"}, 2, 5787801, 5787901, 5787906}},
      {"$minN", {&NItemsOp<NOp::kMin>, {"n", "input"}, 2, 5787801, 5787901, 5787906}},
  });
}

}  // namespace rockdoc::internal::expression_detail

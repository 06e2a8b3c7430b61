// pipeline/accumulators.cc: $group's accumulators (accumulators.h).
#include "pipeline/accumulators.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

Status Failed(int code, std::string message) {
  return Status(static_cast<ErrorCode>(code), std::move(message));
}

bool Nullish(const Value& v) {
  return !v.ok() || v.type() == BsonType::kNull || v.type() == BsonType::kUndefined;
}

// A held Value: the object, and its bytes on the heap (with the
// allocator's overhead) when they outgrow the object's own buffer.
int64_t SizeOfValue(const Value& v) {
  const int64_t bytes = v.ok() ? static_cast<int64_t>(v.element().value_size()) + 7 : 5;
  return static_cast<int64_t>(sizeof(Value)) + (bytes > 15 ? bytes + 16 : 0);
}

}  // namespace

int64_t Accumulator::SizeOf(const Ranked& r) {
  int64_t size = SizeOfValue(r.value);
  for (const Value& k : r.key) size += SizeOfValue(k);
  return size;
}

namespace {


bool IsNForm(AccumulatorSpec::Op op) {
  return op == AccumulatorSpec::kFirstN || op == AccumulatorSpec::kLastN ||
         op == AccumulatorSpec::kMaxN || op == AccumulatorSpec::kMinN ||
         op == AccumulatorSpec::kTopN || op == AccumulatorSpec::kBottomN;
}
bool IsRanked(AccumulatorSpec::Op op) {
  return op == AccumulatorSpec::kTop || op == AccumulatorSpec::kBottom ||
         op == AccumulatorSpec::kTopN || op == AccumulatorSpec::kBottomN;
}

// {n, input} ($firstN ...) or {n?, sortBy, output} ($top ...).
Status ParseNamedArguments(std::string_view name, const Element& acc, VariableScope* scope,
                           AccumulatorSpec* spec) {
  const bool ranked = IsRanked(spec->op);
  if (acc.type() != BsonType::kDocument) {
    return Failed(ranked ? 5788001 : 5787801,
                  "specification must be an object; found " + ValueToJson(acc, JsonFormat::kShell));
  }
  const bool wants_n = IsNForm(spec->op);
  const char* value_name = ranked ? "output" : "input";
  Element n, value, sort_by;
  for (const Element& f : acc.Document()) {
    if (f.key() == "n" && wants_n) {
      n = f;
    } else if (f.key() == value_name) {
      value = f;
    } else if (f.key() == "sortBy" && ranked) {
      sort_by = f;
    } else {
      return Failed(ranked ? 5788005 : 5787901, "Unknown argument to " + std::string(name) +
                                                    " '" + std::string(f.key()) + "'");
    }
  }
  if (wants_n && !n.ok()) {
    return Failed(5787906, std::string(name) + " requires 'n' to be specified");
  }
  if (!value.ok()) {
    return Failed(ranked ? 5788003 : 5787907,
                  std::string(name) + " requires '" + value_name + "' to be specified");
  }
  if (ranked) {
    if (!sort_by.ok()) return Failed(5788004, std::string(name) + " requires 'sortBy' to be specified");
    if (sort_by.type() != BsonType::kDocument) {
      return Failed(5788004, std::string(name) + " 'sortBy' must be an object");
    }
    ROCKDOC_ASSIGN_OR_RETURN(spec->sort_by, SortPattern::Parse(sort_by.Document()));
  }
  if (wants_n) {
    ROCKDOC_ASSIGN_OR_RETURN(spec->n, ParseExpression(n, scope));
  }
  ROCKDOC_ASSIGN_OR_RETURN(spec->arg, ParseExpression(value, scope));
  return Status::OK();
}

}  // namespace

StatusOr<AccumulatorSpec> ParseAccumulator(std::string_view field, const Element& acc,
                                           VariableScope* scope) {
  using Op = AccumulatorSpec::Op;
  static const std::map<std::string_view, Op> kOps = {
      {"$sum", Op::kSum},           {"$avg", Op::kAvg},
      {"$min", Op::kMin},           {"$max", Op::kMax},
      {"$first", Op::kFirst},       {"$last", Op::kLast},
      {"$push", Op::kPush},         {"$addToSet", Op::kAddToSet},
      {"$count", Op::kCount},       {"$mergeObjects", Op::kMergeObjects},
      {"$stdDevPop", Op::kStdDevPop}, {"$stdDevSamp", Op::kStdDevSamp},
      {"$firstN", Op::kFirstN},     {"$lastN", Op::kLastN},
      {"$maxN", Op::kMaxN},         {"$minN", Op::kMinN},
      {"$top", Op::kTop},           {"$bottom", Op::kBottom},
      {"$topN", Op::kTopN},         {"$bottomN", Op::kBottomN}};
  const std::string_view name = acc.key();
  auto it = kOps.find(name);
  if (it == kOps.end()) {
    static const char* const kKnown[] = {"$accumulator", "$median", "$percentile"};
    for (const char* k : kKnown) {
      if (name == k) {
        return Status(ErrorCode::kNotImplemented,
                      "the accumulator " + std::string(name) + " is not supported by rockdoc yet");
      }
    }
    return Failed(15952, "unknown group operator '" + std::string(name) + "'");
  }
  AccumulatorSpec spec;
  spec.field = std::string(field);
  spec.op = it->second;
  if (spec.op == Op::kCount) {
    if (acc.type() != BsonType::kDocument || !acc.Document().empty()) {
      return Failed(40237, "$count takes no arguments, i.e. $count:{}");
    }
    return spec;
  }
  if (IsNForm(spec.op) || IsRanked(spec.op)) {
    ROCKDOC_RETURN_IF_ERROR(ParseNamedArguments(name, acc, scope, &spec));
    return spec;
  }
  if (acc.type() == BsonType::kArray) {
    return Failed(40237, "The " + std::string(name) + " accumulator is a unary operator");
  }
  ROCKDOC_ASSIGN_OR_RETURN(spec.arg, ParseExpression(acc, scope));
  return spec;
}

// $mergeObjects: the fields of `object` over those held (a field already
// held keeps its place). Returns the bytes held more.
int64_t Accumulator::MergeFields(DocumentView object) {
  int64_t added = 0;
  for (const Element& f : object) {
    auto at = std::find_if(fields_.begin(), fields_.end(),
                           [&](const auto& p) { return p.first == f.key(); });
    if (at == fields_.end()) {
      fields_.emplace_back(std::string(f.key()), Value::FromElement(f));
      added += static_cast<int64_t>(f.size()) + 32;
    } else {
      at->second = Value::FromElement(f);
    }
  }
  return added;
}

// $lastN keeps up to 2n values and drops the oldest n at once (amortized
// O(1) per value). Returns the bytes freed.
int64_t Accumulator::TrimLastN() {
  if (static_cast<int64_t>(list_.size()) <= 2 * n_) return 0;
  const auto drop = list_.end() - static_cast<ptrdiff_t>(n_);
  int64_t freed = 0;
  for (auto it = list_.begin(); it != drop; ++it) freed += SizeOfValue(*it);
  list_.erase(list_.begin(), drop);
  return freed;
}

std::vector<Value> Accumulator::LastN() const {
  const size_t keep = std::min(list_.size(), static_cast<size_t>(std::max<int64_t>(n_, 0)));
  return std::vector<Value>(list_.end() - static_cast<ptrdiff_t>(keep), list_.end());
}

bool Accumulator::RankedLess(const Ranked& a, const Ranked& b) const {
  return spec_->sort_by.CompareKeys(a.key, b.key) < 0;
}

// Keeps the n that can still be the answer (the first n in sort order for
// $top/$topN, the last n for $bottom/$bottomN), so memory stays O(n).
// Returns the bytes freed.
int64_t Accumulator::TrimRanked() {
  const size_t keep = spec_->op == AccumulatorSpec::kTop || spec_->op == AccumulatorSpec::kBottom
                          ? 1
                          : static_cast<size_t>(n_);
  if (ranked_.size() <= 2 * keep + 16) return 0;
  auto less = [this](const Ranked& a, const Ranked& b) { return RankedLess(a, b); };
  std::stable_sort(ranked_.begin(), ranked_.end(), less);
  const bool top = spec_->op == AccumulatorSpec::kTop || spec_->op == AccumulatorSpec::kTopN;
  const auto first = top ? ranked_.begin() + static_cast<ptrdiff_t>(keep) : ranked_.begin();
  const auto last = top ? ranked_.end() : ranked_.end() - static_cast<ptrdiff_t>(keep);
  int64_t freed = 0;
  for (auto it = first; it != last; ++it) freed += SizeOf(*it);
  ranked_.erase(first, last);
  return freed;
}

StatusOr<int64_t> Accumulator::Add(DocumentView doc, const ExpressionVariables& vars) {
  using Op = AccumulatorSpec::Op;
  const Op op = spec_->op;
  if (op == Op::kCount) {
    ++count_;
    return 0;
  }
  if (spec_->n != nullptr && n_ < 0) {
    ROCKDOC_ASSIGN_OR_RETURN(Value n, spec_->n->Evaluate(vars));
    int64_t v = 0;
    if (!n.ok() || !n.element().IsNumber() || !n.element().ExactInt64(&v)) {
      return Failed(5787902, "Value for 'n' must be of integral type, but found " +
                                 (n.ok() ? ValueToJson(n.element(), JsonFormat::kShell) : "missing"));
    }
    if (v <= 0) return Failed(5787908, "'n' must be greater than 0, found " + std::to_string(v));
    n_ = v;
  }
  ROCKDOC_ASSIGN_OR_RETURN(Value v, spec_->arg->Evaluate(vars));
  switch (op) {
    case Op::kSum:
    case Op::kAvg:
      if (v.ok() && v.element().IsNumber()) {
        sum_.Add(v.element());
        ++count_;
      }
      return 0;
    case Op::kStdDevPop:
    case Op::kStdDevSamp:
      if (v.ok() && v.element().IsNumber()) {
        const double x = v.element().NumberAsDouble();
        ++count_;
        const double delta = x - mean_;
        mean_ += delta / static_cast<double>(count_);
        m2_ += delta * (x - mean_);
      }
      return 0;
    case Op::kMin:
    case Op::kMax:
      if (Nullish(v)) return 0;
      if (!best_.ok() || (op == Op::kMin ? CompareValues(v.element(), best_.element()) < 0
                                         : CompareValues(v.element(), best_.element()) > 0)) {
        best_ = std::move(v);
      }
      return 0;
    case Op::kFirst:
      if (!seen_) best_ = std::move(v);
      seen_ = true;
      return 0;
    case Op::kLast:
      best_ = std::move(v);
      seen_ = true;
      return 0;
    case Op::kPush: {
      if (!v.ok()) return 0;
      const int64_t size = SizeOfValue(v);
      list_.push_back(std::move(v));
      return size;
    }
    case Op::kAddToSet: {
      if (!v.ok() || set_.count(v) > 0) return 0;
      const int64_t size = SizeOfValue(v);
      set_.insert(std::move(v));
      return size;
    }
    case Op::kMergeObjects: {
      if (Nullish(v)) return 0;
      if (v.type() != BsonType::kDocument) {
        return Failed(40400, "$mergeObjects requires object inputs, but input " +
                                 ValueToJson(v.element(), JsonFormat::kShell) + " is of type " +
                                 std::string(BsonTypeAlias(v.type())));
      }
      return MergeFields(v.element().Document());
    }
    case Op::kFirstN: {
      if (static_cast<int64_t>(list_.size()) >= n_) return 0;
      const int64_t size = SizeOfValue(v);
      list_.push_back(v.ok() ? std::move(v) : NullValue());
      return size;
    }
    case Op::kLastN: {
      const int64_t size = SizeOfValue(v);
      list_.push_back(v.ok() ? std::move(v) : NullValue());
      return size - TrimLastN();
    }
    case Op::kMaxN:
    case Op::kMinN: {
      if (Nullish(v)) return 0;
      const int64_t size = SizeOfValue(v);
      set_.insert(std::move(v));
      if (static_cast<int64_t>(set_.size()) > n_) {
        auto drop = op == Op::kMaxN ? set_.begin() : std::prev(set_.end());
        const int64_t dropped = SizeOfValue(*drop);
        set_.erase(drop);
        return size - dropped;
      }
      return size;
    }
    case Op::kTop:
    case Op::kBottom:
    case Op::kTopN:
    case Op::kBottomN: {
      std::vector<Element> key;
      ROCKDOC_RETURN_IF_ERROR(spec_->sort_by.ExtractKey(doc, &key));
      Ranked r;
      // A missing key part sorts as null.
      for (const Element& k : key) r.key.push_back(k.ok() ? Value::FromElement(k) : NullValue());
      r.value = v.ok() ? std::move(v) : NullValue();
      const int64_t size = SizeOf(r);
      ranked_.push_back(std::move(r));
      return size - TrimRanked();
    }
    case Op::kCount: break;
  }
  return 0;
}

StatusOr<Value> Accumulator::Result() const {
  using Op = AccumulatorSpec::Op;
  switch (spec_->op) {
    case Op::kSum: return count_ == 0 ? IntegerValue(0) : sum_.Result();
    case Op::kCount: return IntegerValue(count_);
    case Op::kAvg:
      if (count_ == 0) return NullValue();
      return sum_.Average(count_);
    case Op::kStdDevPop:
      if (count_ == 0) return NullValue();
      return DoubleValue(std::sqrt(m2_ / static_cast<double>(count_)));
    case Op::kStdDevSamp:
      if (count_ < 2) return NullValue();
      return DoubleValue(std::sqrt(m2_ / static_cast<double>(count_ - 1)));
    case Op::kMin:
    case Op::kMax:
    case Op::kFirst:
    case Op::kLast: return best_.ok() ? best_ : NullValue();
    case Op::kPush:
    case Op::kFirstN: return ArrayOfValues(list_);
    case Op::kLastN: return ArrayOfValues(LastN());
    case Op::kAddToSet:
    case Op::kMinN: return ArrayOfValues(std::vector<Value>(set_.begin(), set_.end()));
    case Op::kMaxN: return ArrayOfValues(std::vector<Value>(set_.rbegin(), set_.rend()));
    case Op::kMergeObjects: {
      BsonBuilder b;
      b.OpenDocument("v");
      for (const auto& [name, value] : fields_) b.AppendElementAs(name, value.element());
      b.Close();
      Document d = std::move(b).Build();
      return Value::FromElement(d.Get("v"));
    }
    case Op::kTop:
    case Op::kBottom:
    case Op::kTopN:
    case Op::kBottomN: {
      std::vector<Ranked> sorted = ranked_;
      std::stable_sort(sorted.begin(), sorted.end(),
                       [this](const Ranked& a, const Ranked& b) { return RankedLess(a, b); });
      const bool top = spec_->op == Op::kTop || spec_->op == Op::kTopN;
      if (spec_->op == Op::kTop || spec_->op == Op::kBottom) {
        if (sorted.empty()) return NullValue();
        return top ? sorted.front().value : sorted.back().value;
      }
      const size_t keep = std::min(sorted.size(), static_cast<size_t>(std::max<int64_t>(n_, 0)));
      std::vector<Value> out;
      const size_t from = top ? 0 : sorted.size() - keep;
      for (size_t i = from; i < from + keep; ++i) out.push_back(sorted[i].value);
      return ArrayOfValues(out);
    }
  }
  return NullValue();
}

// ---- partial states (a spilled $group) ----
//
// {c: count, s: <sum state>, m: mean, q: sum of squared deviations, v: the
// held value or values, f: seen, n: the N forms' n, r: [[key..., value]...]}
// with only the fields the operator uses.

namespace {

void AppendValues(std::string_view key, const auto& values, BsonBuilder* out) {
  out->OpenArray(key);
  for (const Value& v : values) {
    if (v.ok()) {
      out->AppendElementAs("", v.element());
    } else {
      out->AppendNull("");
    }
  }
  out->Close();
}

Status DamagedState() {
  return Status(ErrorCode::kInternalError, "a spilled $group state is damaged");
}

}  // namespace

void Accumulator::AppendState(std::string_view key, BsonBuilder* out) const {
  using Op = AccumulatorSpec::Op;
  out->OpenDocument(key);
  out->AppendInt64("c", count_);
  out->AppendInt64("n", n_);
  switch (spec_->op) {
    case Op::kSum:
    case Op::kAvg: sum_.AppendState("s", out); break;
    case Op::kStdDevPop:
    case Op::kStdDevSamp:
      out->AppendDouble("m", mean_);
      out->AppendDouble("q", m2_);
      break;
    case Op::kMin:
    case Op::kMax:
    case Op::kFirst:
    case Op::kLast:
      out->AppendBool("f", seen_);
      if (best_.ok()) out->AppendElementAs("v", best_.element());
      break;
    case Op::kPush:
    case Op::kFirstN: AppendValues("v", list_, out); break;
    case Op::kLastN: AppendValues("v", LastN(), out); break;
    case Op::kAddToSet:
    case Op::kMaxN:
    case Op::kMinN: AppendValues("v", set_, out); break;
    case Op::kMergeObjects:
      out->OpenDocument("v");
      for (const auto& [name, value] : fields_) out->AppendElementAs(name, value.element());
      out->Close();
      break;
    case Op::kTop:
    case Op::kBottom:
    case Op::kTopN:
    case Op::kBottomN:
      out->OpenArray("r");
      for (const Ranked& r : ranked_) {
        out->OpenArray("");
        AppendValues("", r.key, out);
        out->AppendElementAs("", r.value.element());
        out->Close();
      }
      out->Close();
      break;
    case Op::kCount: break;
  }
  out->Close();
}

StatusOr<int64_t> Accumulator::MergeState(const Element& state) {
  using Op = AccumulatorSpec::Op;
  if (state.type() != BsonType::kDocument) return DamagedState();
  const DocumentView s = state.Document();
  const Element c = s.Get("c"), n = s.Get("n"), v = s.Get("v");
  if (c.type() != BsonType::kInt64 || n.type() != BsonType::kInt64) return DamagedState();
  const int64_t count = c.Int64();
  if (n_ < 0) n_ = n.Int64();
  auto values = [&]() -> StatusOr<DocumentView> {
    if (v.type() != BsonType::kArray) return DamagedState();
    return v.Document();
  };
  int64_t added = 0;
  switch (spec_->op) {
    case Op::kCount: count_ += count; break;
    case Op::kSum:
    case Op::kAvg:
      ROCKDOC_RETURN_IF_ERROR(sum_.MergeState(s.Get("s")));
      count_ += count;
      break;
    case Op::kStdDevPop:
    case Op::kStdDevSamp: {
      // Chan et al.'s pairwise combination of running means and squares.
      const Element m = s.Get("m"), q = s.Get("q");
      if (m.type() != BsonType::kDouble || q.type() != BsonType::kDouble) return DamagedState();
      if (count == 0) break;
      const double na = static_cast<double>(count_), nb = static_cast<double>(count);
      const double delta = m.Double() - mean_;
      mean_ += delta * nb / (na + nb);
      m2_ += q.Double() + delta * delta * na * nb / (na + nb);
      count_ += count;
      break;
    }
    case Op::kMin:
    case Op::kMax:
      if (v.ok()) {
        const Value x = Value::FromElement(v);
        if (!best_.ok() || (spec_->op == Op::kMin ? CompareValues(x.element(), best_.element()) < 0
                                                  : CompareValues(x.element(), best_.element()) > 0)) {
          best_ = x;
        }
      }
      break;
    case Op::kFirst:
      if (!seen_ && s.Get("f").IsBool() && s.Get("f").Bool()) {
        if (v.ok()) best_ = Value::FromElement(v);
        seen_ = true;
      }
      break;
    case Op::kLast:
      if (s.Get("f").IsBool() && s.Get("f").Bool()) {
        best_ = v.ok() ? Value::FromElement(v) : Value();
        seen_ = true;
      }
      break;
    case Op::kPush:
    case Op::kFirstN:
    case Op::kLastN: {
      ROCKDOC_ASSIGN_OR_RETURN(DocumentView items, values());
      for (const Element& x : items) {
        if (spec_->op == Op::kFirstN && static_cast<int64_t>(list_.size()) >= n_) break;
        list_.push_back(Value::FromElement(x));
        added += SizeOfValue(list_.back());
        if (spec_->op == Op::kLastN) added -= TrimLastN();
      }
      break;
    }
    case Op::kAddToSet:
    case Op::kMaxN:
    case Op::kMinN: {
      ROCKDOC_ASSIGN_OR_RETURN(DocumentView items, values());
      for (const Element& x : items) {
        Value item = Value::FromElement(x);
        if (spec_->op == Op::kAddToSet && set_.count(item) > 0) continue;
        added += SizeOfValue(item);
        set_.insert(std::move(item));
        if (spec_->op != Op::kAddToSet && static_cast<int64_t>(set_.size()) > n_) {
          auto drop = spec_->op == Op::kMaxN ? set_.begin() : std::prev(set_.end());
          added -= SizeOfValue(*drop);
          set_.erase(drop);
        }
      }
      break;
    }
    case Op::kMergeObjects:
      if (v.type() != BsonType::kDocument) return DamagedState();
      added += MergeFields(v.Document());
      break;
    case Op::kTop:
    case Op::kBottom:
    case Op::kTopN:
    case Op::kBottomN: {
      const Element r = s.Get("r");
      if (r.type() != BsonType::kArray) return DamagedState();
      for (const Element& entry : r.Document()) {
        if (entry.type() != BsonType::kArray) return DamagedState();
        const Element key = entry.Document().Get("0"), value = entry.Document().Get("1");
        if (key.type() != BsonType::kArray || !value.ok()) return DamagedState();
        Ranked ranked;
        for (const Element& k : key.Document()) ranked.key.push_back(Value::FromElement(k));
        ranked.value = Value::FromElement(value);
        added += SizeOf(ranked);
        ranked_.push_back(std::move(ranked));
        added -= TrimRanked();
      }
      break;
    }
  }
  return added;
}

}  // namespace rockdoc::internal

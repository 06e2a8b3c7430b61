// query/implication.cc: whether one filter implies another
// (query/implication.h).
#include "query/implication.h"

#include <cmath>

#include "rockdoc/document.h"
#include "rockdoc/types.h"

namespace rockdoc::internal {

namespace {

bool IsNullish(const Element& v) {
  return v.type() == BsonType::kNull || v.type() == BsonType::kUndefined;
}

bool IsComparison(MatchType t) {
  return t == MatchType::kEq || t == MatchType::kLt || t == MatchType::kLte ||
         t == MatchType::kGt || t == MatchType::kGte;
}
bool IsUpperBound(MatchType t) { return t == MatchType::kLt || t == MatchType::kLte; }
bool IsLowerBound(MatchType t) { return t == MatchType::kGt || t == MatchType::kGte; }

// A value whose comparisons are plain ordering within its canonical type:
// not null or undefined (which match missing fields), MinKey or MaxKey
// (which bound every type), NaN (equal only to itself), an array (compared
// whole and element by element) or a document, or a regex.
bool IsPlainBound(const Element& v) {
  switch (v.type()) {
    case BsonType::kNull:
    case BsonType::kUndefined:
    case BsonType::kMinKey:
    case BsonType::kMaxKey:
    case BsonType::kArray:
    case BsonType::kDocument:
    case BsonType::kRegex:
      return false;
    default:
      break;
  }
  if (v.IsNumber() && std::isnan(v.NumberAsDouble())) return false;
  return true;
}

bool SameBracket(const Element& a, const Element& b) {
  return CanonicalTypeRank(a.type()) == CanonicalTypeRank(b.type());
}

// Whether `filter` accepts every value equal to `v` (a plain value). Only
// filters that decide by comparison: an equal value of another numeric type
// (1 and 1.0) gets the same answer, which $type would not give.
bool AcceptsEqualValues(const MatchExpression& filter, const Element& v) {
  if (!IsPlainBound(v)) return false;
  if (IsComparison(filter.type())) {
    if (!IsPlainBound(filter.operand())) return false;
    return filter.MatchesSingleElement(v);
  }
  if (filter.type() == MatchType::kIn) {
    const auto& in = static_cast<const InMatchExpression&>(filter);
    for (const Element& e : in.equalities()) {
      if (SameBracket(e, v) && CompareValues(e, v) == 0) return true;
    }
    return false;
  }
  return false;
}

// A range of the query against a range of the filter, both one-sided.
bool RangeImplies(const MatchExpression& query, const MatchExpression& filter) {
  const MatchType q = query.type(), f = filter.type();
  const bool upper = IsUpperBound(q) && IsUpperBound(f);
  const bool lower = IsLowerBound(q) && IsLowerBound(f);
  if (!upper && !lower) return false;
  const Element qv = query.operand(), fv = filter.operand();
  if (!IsPlainBound(qv) || !IsPlainBound(fv) || !SameBracket(qv, fv)) return false;
  const int c = CompareValues(qv, fv);
  // The query's bound strictly inside the filter's, or equal with the
  // filter's at least as inclusive.
  const bool query_strict = q == MatchType::kLt || q == MatchType::kGt;
  const bool filter_inclusive = f == MatchType::kLte || f == MatchType::kGte;
  if (c == 0) return query_strict || filter_inclusive;
  return upper ? c < 0 : c > 0;
}

}  // namespace

void CollectConjuncts(const MatchExpression* e, std::vector<const MatchExpression*>* out) {
  if (e->type() == MatchType::kAnd) {
    for (size_t i = 0; i < e->num_children(); ++i) CollectConjuncts(e->child(i), out);
  } else {
    out->push_back(e);
  }
}

bool CannotMatchMissing(const MatchExpression* leaf) {
  Element v = leaf->operand();
  switch (leaf->type()) {
    case MatchType::kEq:
      return !IsNullish(v) && v.type() != BsonType::kMinKey && v.type() != BsonType::kMaxKey;
    case MatchType::kLt:
    case MatchType::kGt:
      return v.type() != BsonType::kMinKey && v.type() != BsonType::kMaxKey;
    case MatchType::kLte:
    case MatchType::kGte:
      return !IsNullish(v) && v.type() != BsonType::kMinKey && v.type() != BsonType::kMaxKey;
    case MatchType::kIn: {
      const auto& in = static_cast<const InMatchExpression&>(*leaf);
      for (const Element& e : in.equalities())
        if (IsNullish(e)) return false;
      return true;
    }
    case MatchType::kRegex:
    case MatchType::kGeoWithin:
    case MatchType::kGeoIntersects:
    case MatchType::kGeoNear:
      return true;
    default:
      return false;
  }
}

bool LeafImplies(const MatchExpression& query, const MatchExpression& filter) {
  if (query.is_logical() || filter.is_logical() || query.path() != filter.path()) return false;
  if (query.Serialize() == filter.Serialize()) return true;
  if (filter.type() == MatchType::kExists) {
    // {$exists: true} (a false one is a $not of it, a logical node).
    return CannotMatchMissing(&query);
  }
  switch (query.type()) {
    case MatchType::kEq:
      return AcceptsEqualValues(filter, query.operand());
    case MatchType::kIn: {
      const auto& in = static_cast<const InMatchExpression&>(query);
      if (!in.regexes().empty() || in.equalities().empty()) return false;
      for (const Element& v : in.equalities()) {
        if (!AcceptsEqualValues(filter, v)) return false;
      }
      return true;
    }
    case MatchType::kLt:
    case MatchType::kLte:
    case MatchType::kGt:
    case MatchType::kGte:
      return RangeImplies(query, filter);
    default:
      return false;
  }
}

bool ConjunctsImply(const std::vector<const MatchExpression*>& query_conjuncts,
                    const MatchExpression& filter) {
  std::vector<const MatchExpression*> required;
  CollectConjuncts(&filter, &required);
  for (const MatchExpression* r : required) {
    bool met = false;
    for (const MatchExpression* q : query_conjuncts) {
      if (LeafImplies(*q, *r)) {
        met = true;
        break;
      }
    }
    if (!met) return false;
  }
  return true;
}

bool FilterImplies(const MatchExpression& query, const MatchExpression& filter) {
  std::vector<const MatchExpression*> conjuncts;
  CollectConjuncts(&query, &conjuncts);
  return ConjunctsImply(conjuncts, filter);
}

}  // namespace rockdoc::internal

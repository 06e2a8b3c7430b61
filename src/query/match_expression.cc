// Evaluation, debug rendering and serialization of match expressions. The
// parser is in match_expression_parser.cc.
#include "query/match_expression.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rockdoc/json.h"

namespace rockdoc {

std::string_view MatchTypeName(MatchType type) {
  switch (type) {
    case MatchType::kAnd: return "$and";
    case MatchType::kOr: return "$or";
    case MatchType::kNor: return "$nor";
    case MatchType::kNot: return "$not";
    case MatchType::kEq: return "$eq";
    case MatchType::kLt: return "$lt";
    case MatchType::kLte: return "$lte";
    case MatchType::kGt: return "$gt";
    case MatchType::kGte: return "$gte";
    case MatchType::kIn: return "$in";
    case MatchType::kRegex: return "$regex";
    case MatchType::kMod: return "$mod";
    case MatchType::kExists: return "$exists";
    case MatchType::kType: return "$type";
    case MatchType::kBitsAllSet: return "$bitsAllSet";
    case MatchType::kBitsAllClear: return "$bitsAllClear";
    case MatchType::kBitsAnySet: return "$bitsAnySet";
    case MatchType::kBitsAnyClear: return "$bitsAnyClear";
    case MatchType::kSize: return "$size";
    case MatchType::kElemMatchObject:
    case MatchType::kElemMatchValue: return "$elemMatch";
    case MatchType::kAlwaysTrue: return "$alwaysTrue";
    case MatchType::kAlwaysFalse: return "$alwaysFalse";
    case MatchType::kJsonSchema: return "$jsonSchema";
    case MatchType::kExpr: return "$expr";
    case MatchType::kGeoWithin: return "$geoWithin";
    case MatchType::kGeoIntersects: return "$geoIntersects";
    case MatchType::kGeoNear: return "$near";
    case MatchType::kText: return "$text";
  }
  return "?";
}

namespace {

std::string Render(const Element& e) {
  if (!e.ok()) return "<missing>";
  return ValueToJson(e, JsonFormat::kShell);
}

bool IsNaN(const Element& e) {
  if (e.type() == BsonType::kDouble) return std::isnan(e.Double());
  if (e.type() == BsonType::kDecimal128) return e.Decimal().IsNaN();
  return false;
}

// The path shared by `e` (a path leaf) or by all children of `e` (an AND of
// path leaves), so that NOT(e) can be written {path: {$not: {...}}}.
bool SharedLeafPath(const MatchExpression* e, std::string* path) {
  if (!e->is_logical() && e->type() != MatchType::kAlwaysTrue &&
      e->type() != MatchType::kAlwaysFalse) {
    *path = e->path();
    return true;
  }
  if (e->type() != MatchType::kAnd || e->num_children() == 0) return false;
  std::string first;
  for (size_t i = 0; i < e->num_children(); ++i) {
    const MatchExpression* c = e->child(i);
    if (c->is_logical() || c->type() == MatchType::kAlwaysTrue ||
        c->type() == MatchType::kAlwaysFalse) {
      return false;
    }
    if (i == 0) {
      first = c->path();
    } else if (c->path() != first) {
      return false;
    }
  }
  *path = first;
  return true;
}

Value MakeInt32Value(int32_t v) {
  BsonBuilder b;
  b.AppendInt32("", v);
  Document d = std::move(b).Build();
  return Value::FromElement(*d.view().begin());
}

}  // namespace

// ---------------------------------------------------------------------------
// MatchExpression

MatchExpression::~MatchExpression() = default;

void MatchExpression::SetCollator(const CollatorPtr& collator) {
  for (auto& child : children_) child->SetCollator(collator);
}

std::string MatchExpression::DebugString() const {
  std::string out;
  AppendDebug(&out, 0);
  return out;
}

void MatchExpression::AppendDebug(std::string* out, int indent) const {
  out->append(static_cast<size_t>(indent) * 4, ' ');
  out->append(DebugLine());
  out->push_back('\n');
  for (const auto& c : children_) c->AppendDebug(out, indent + 1);
}

std::string MatchExpression::DebugLine() const { return std::string(MatchTypeName(type_)); }

Document MatchExpression::Serialize() const {
  BsonBuilder b;
  SerializeTo(&b);
  return std::move(b).Build();
}

void MatchExpression::SerializeRhs(BsonBuilder* builder) const {
  // Only reached for shapes that cannot be written as operators on one path
  // (callers check SharedLeafPath first); keep the output well-formed.
  builder->OpenArray("$and");
  builder->OpenDocument("");
  SerializeTo(builder);
  builder->Close();
  builder->Close();
}

// ---------------------------------------------------------------------------
// Logical nodes

ListOfMatchExpression::ListOfMatchExpression(
    MatchType type, std::vector<std::unique_ptr<MatchExpression>> children)
    : MatchExpression(type) {
  children_ = std::move(children);
}

bool ListOfMatchExpression::Matches(DocumentView doc, MatchDetails* details) const {
  switch (type()) {
    case MatchType::kAnd:
      for (const auto& c : children_) {
        if (!c->Matches(doc, details)) {
          if (details) details->ResetOutput();
          return false;
        }
      }
      return true;
    case MatchType::kOr:
      // As MongoDB: which branch's array position would be meant is
      // ambiguous, so $or records none.
      for (const auto& c : children_) {
        if (c->Matches(doc, nullptr)) return true;
      }
      return false;
    default:  // kNor
      for (const auto& c : children_) {
        if (c->Matches(doc, nullptr)) return false;
      }
      return true;
  }
}

bool ListOfMatchExpression::MatchesSingleElement(const Element& value,
                                                 MatchDetails* details) const {
  switch (type()) {
    case MatchType::kAnd:
      for (const auto& c : children_) {
        if (!c->MatchesSingleElement(value, details)) return false;
      }
      return true;
    case MatchType::kOr:
      for (const auto& c : children_) {
        if (c->MatchesSingleElement(value, nullptr)) return true;
      }
      return false;
    default:
      for (const auto& c : children_) {
        if (c->MatchesSingleElement(value, nullptr)) return false;
      }
      return true;
  }
}

void ListOfMatchExpression::SerializeTo(BsonBuilder* builder) const {
  if (type() == MatchType::kAnd && children_.empty()) return;  // {}
  builder->OpenArray(MatchTypeName(type()));
  for (const auto& c : children_) {
    builder->OpenDocument("");
    c->SerializeTo(builder);
    builder->Close();
  }
  builder->Close();
}

void ListOfMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  std::string path;
  if (type() == MatchType::kAnd && SharedLeafPath(this, &path)) {
    for (const auto& c : children_) c->SerializeRhs(builder);
    return;
  }
  MatchExpression::SerializeRhs(builder);
}

NotMatchExpression::NotMatchExpression(std::unique_ptr<MatchExpression> child)
    : MatchExpression(MatchType::kNot) {
  children_.push_back(std::move(child));
}

bool NotMatchExpression::Matches(DocumentView doc, MatchDetails*) const {
  return !children_[0]->Matches(doc, nullptr);
}

bool NotMatchExpression::MatchesSingleElement(const Element& value, MatchDetails*) const {
  return !children_[0]->MatchesSingleElement(value, nullptr);
}

void NotMatchExpression::SerializeTo(BsonBuilder* builder) const {
  std::string path;
  if (SharedLeafPath(children_[0].get(), &path)) {
    builder->OpenDocument(path);
    SerializeRhs(builder);
    builder->Close();
    return;
  }
  builder->OpenArray("$nor");
  builder->OpenDocument("");
  children_[0]->SerializeTo(builder);
  builder->Close();
  builder->Close();
}

void NotMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->OpenDocument("$not");
  children_[0]->SerializeRhs(builder);
  builder->Close();
}

void AlwaysBooleanMatchExpression::SerializeTo(BsonBuilder* builder) const {
  builder->AppendInt32(MatchTypeName(type()), 1);
}

std::string AlwaysBooleanMatchExpression::DebugLine() const {
  return std::string(MatchTypeName(type()));
}

// ---------------------------------------------------------------------------
// Path leaves

bool PathMatchExpression::Matches(DocumentView doc, MatchDetails* details) const {
  return ForEachPathValue(doc, field_path(), leaf_mode_,
                          [&](const Element& value, int64_t offset) {
                            if (!MatchesSingleElement(value, details)) return false;
                            // The outermost array position wins over one an
                            // $elemMatch recorded inside the array it tested.
                            if (details != nullptr && offset != kNoArrayOffset) {
                              details->SetElemMatchKey(static_cast<size_t>(offset));
                            }
                            return true;
                          });
}

void PathMatchExpression::SerializeTo(BsonBuilder* builder) const {
  builder->OpenDocument(path());
  SerializeRhs(builder);
  builder->Close();
}

// --- comparisons

ComparisonMatchExpression::ComparisonMatchExpression(MatchType type, std::string path,
                                                     const Element& rhs)
    : PathMatchExpression(type, std::move(path), LeafArrayMode::kTraverse),
      rhs_(Value::FromElement(rhs)) {}

bool ComparisonMatchExpression::CompareForMatch(MatchType type, const Element& value,
                                                const Element& rhs, const Collator* collator) {
  const BsonType vt = value.type(), rt = rhs.type();
  if (vt != rt && CanonicalTypeRank(vt) != CanonicalTypeRank(rt)) {
    // Different canonical types never compare, with two exceptions.
    if (rt == BsonType::kNull) {
      // null stands for "no value": {$eq: null}, $lte and $gte match a
      // missing field (MongoDB 8.0: but not an undefined value).
      return vt == BsonType::kEod &&
             (type == MatchType::kEq || type == MatchType::kLte || type == MatchType::kGte);
    }
    if (rt == BsonType::kMinKey || rt == BsonType::kMaxKey) {
      // MinKey and MaxKey bound every value, a missing one included.
      switch (type) {
        case MatchType::kLt:
        case MatchType::kLte: return rt == BsonType::kMaxKey;
        case MatchType::kGt:
        case MatchType::kGte: return rt == BsonType::kMinKey;
        default: return false;
      }
    }
    return false;
  }
  if (type != MatchType::kEq) {
    // NaN is only equal to NaN; it is neither below nor above anything,
    // although the sort order puts it below all numbers.
    const bool vnan = IsNaN(value), rnan = IsNaN(rhs);
    if (vnan || rnan) {
      return (type == MatchType::kLte || type == MatchType::kGte) && vnan && rnan;
    }
  }
  const int c = CompareValuesWith(value, rhs, collator);
  switch (type) {
    case MatchType::kEq: return c == 0;
    case MatchType::kLt: return c < 0;
    case MatchType::kLte: return c <= 0;
    case MatchType::kGt: return c > 0;
    case MatchType::kGte: return c >= 0;
    default: return false;
  }
}

bool ComparisonMatchExpression::MatchesSingleElement(const Element& value,
                                                     MatchDetails*) const {
  return CompareForMatch(type(), value, rhs_.element(), collator_.get());
}

void ComparisonMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->AppendElementAs(MatchTypeName(type()), rhs_.element());
}

std::string ComparisonMatchExpression::DebugLine() const {
  return path() + " " + std::string(MatchTypeName(type())) + " " + Render(rhs_.element());
}

// --- regex

bool RegexMatches(const Regex& regex, std::string_view subject, std::string_view op) {
  StatusOr<bool> matched = regex.PartialMatch(subject, op);
  if (matched.ok()) return *matched;
  RecordMatchError(matched.status());
  return false;
}

RegexMatchExpression::RegexMatchExpression(std::string path, std::shared_ptr<const Regex> regex)
    : PathMatchExpression(MatchType::kRegex, std::move(path), LeafArrayMode::kTraverse),
      regex_(std::move(regex)) {}

bool RegexMatchExpression::MatchesSingleElement(const Element& value, MatchDetails*) const {
  switch (value.type()) {
    case BsonType::kString:
    case BsonType::kSymbol:
      return RegexMatches(*regex_, value.String(), "$regex");
    case BsonType::kRegex: {
      RegexView r = value.Regex();
      return r.pattern == regex_->pattern() && r.options == regex_->options();
    }
    default:
      return false;
  }
}

void RegexMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->AppendString("$regex", regex_->pattern());
  if (!regex_->options().empty()) builder->AppendString("$options", regex_->options());
}

std::string RegexMatchExpression::DebugLine() const {
  return path() + " regex /" + regex_->pattern() + "/" + regex_->options();
}

// --- $in

InMatchExpression::InMatchExpression(std::string path, const Element& array,
                                     std::vector<std::shared_ptr<const Regex>> regexes)
    : PathMatchExpression(MatchType::kIn, std::move(path), LeafArrayMode::kTraverse),
      array_(Value::FromElement(array)),
      regexes_(std::move(regexes)) {
  for (const Element& e : array_.element().Array()) {
    if (e.type() == BsonType::kRegex) continue;  // compiled into regexes_
    if (e.type() == BsonType::kNull) has_null_ = true;
    equalities_.push_back(e);
  }
  // Sorted and without repeats, as MongoDB keeps them; of equal values
  // (1, 1.0) the first given stays, so that the serialized list is a fixed
  // point of parsing and serializing.
  std::stable_sort(equalities_.begin(), equalities_.end(),
                   [](const Element& a, const Element& b) { return CompareValues(a, b) < 0; });
  equalities_.erase(
      std::unique(equalities_.begin(), equalities_.end(),
                  [](const Element& a, const Element& b) { return CompareValues(a, b) == 0; }),
      equalities_.end());
}

void InMatchExpression::SetCollator(const CollatorPtr& collator) {
  collator_ = collator;
  collated_.clear();
  if (collator_ == nullptr) return;
  const Collator* c = collator_.get();
  collated_ = equalities_;
  std::stable_sort(collated_.begin(), collated_.end(), [c](const Element& a, const Element& b) {
    return CompareValuesWith(a, b, c) < 0;
  });
  collated_.erase(std::unique(collated_.begin(), collated_.end(),
                              [c](const Element& a, const Element& b) {
                                return CompareValuesWith(a, b, c) == 0;
                              }),
                  collated_.end());
}

bool InMatchExpression::MatchesSingleElement(const Element& value, MatchDetails*) const {
  if (!value.ok()) return has_null_;  // a null in the set matches "missing"
  const Collator* c = collator_.get();
  const std::vector<Element>& set = c == nullptr ? equalities_ : collated_;
  auto it = std::lower_bound(
      set.begin(), set.end(), value,
      [c](const Element& a, const Element& b) { return CompareValuesWith(a, b, c) < 0; });
  if (it != set.end() && CompareValuesWith(*it, value, c) == 0) return true;
  for (const auto& re : regexes_) {
    switch (value.type()) {
      case BsonType::kString:
      case BsonType::kSymbol:
        if (RegexMatches(*re, value.String(), "$in")) return true;
        break;
      case BsonType::kRegex: {
        RegexView r = value.Regex();
        if (r.pattern == re->pattern() && r.options == re->options()) return true;
        break;
      }
      default:
        break;
    }
  }
  return false;
}

void InMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->OpenArray("$in");
  for (const Element& e : equalities_) builder->AppendElementAs("", e);
  for (const auto& re : regexes_) builder->AppendRegex("", re->pattern(), re->options());
  builder->Close();
}

std::string InMatchExpression::DebugLine() const {
  std::string out = path() + " $in [ ";
  for (const Element& e : equalities_) out += Render(e) + " ";
  for (const auto& re : regexes_) out += "/" + re->pattern() + "/" + re->options() + " ";
  out += "]";
  return out;
}

// --- $mod

namespace {

// The value truncated toward zero as an int64, as $mod's dividend; false
// for non-numbers, NaN, infinities and values outside the int64 range.
bool TruncatedInt64(const Element& e, int64_t* out) {
  switch (e.type()) {
    case BsonType::kInt32:
      *out = e.Int32();
      return true;
    case BsonType::kInt64:
      *out = e.Int64();
      return true;
    case BsonType::kDouble: {
      double d = e.Double();
      if (!std::isfinite(d)) return false;
      d = std::trunc(d);
      // 2^63 is exactly representable; every double below it in magnitude
      // that is >= -2^63 converts without overflow.
      if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return false;
      *out = static_cast<int64_t>(d);
      return true;
    }
    case BsonType::kDecimal128: {
      Decimal128 dec = e.Decimal();
      if (!dec.IsFinite()) return false;
      Decimal128::Parts p = dec.ToParts();
      unsigned __int128 coefficient =
          (static_cast<unsigned __int128>(p.coefficient_high) << 64) | p.coefficient_low;
      const unsigned __int128 kLimit = static_cast<unsigned __int128>(1) << 63;
      if (p.exponent < 0) {
        for (int i = 0; i < -p.exponent && coefficient != 0; ++i) coefficient /= 10;
      } else {
        for (int i = 0; i < p.exponent && coefficient != 0; ++i) {
          if (coefficient > kLimit) return false;
          coefficient *= 10;
        }
      }
      if (coefficient > kLimit || (coefficient == kLimit && !p.negative)) return false;
      if (p.negative) {
        *out = coefficient == kLimit ? std::numeric_limits<int64_t>::min()
                                     : -static_cast<int64_t>(coefficient);
      } else {
        *out = static_cast<int64_t>(coefficient);
      }
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

bool ModMatchExpression::MatchesSingleElement(const Element& value, MatchDetails*) const {
  int64_t dividend;
  if (!TruncatedInt64(value, &dividend)) return false;
  // INT64_MIN % -1 overflows in C++; mathematically it is 0.
  const int64_t r = divisor_ == -1 ? 0 : dividend % divisor_;
  return r == remainder_;
}

void ModMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->OpenArray("$mod");
  builder->AppendInt64("", divisor_);
  builder->AppendInt64("", remainder_);
  builder->Close();
}

std::string ModMatchExpression::DebugLine() const {
  return path() + " mod " + std::to_string(divisor_) + " % x == " + std::to_string(remainder_);
}

// --- $bitsAllSet, $bitsAllClear, $bitsAnySet, $bitsAnyClear

BitTestMatchExpression::BitTestMatchExpression(MatchType type, std::string path,
                                               std::vector<uint32_t> positions)
    : PathMatchExpression(type, std::move(path), LeafArrayMode::kTraverse),
      positions_(std::move(positions)) {
  // Numbers are sign-extended: every bit above 63 is the sign bit.
  for (uint32_t p : positions_) mask_ |= uint64_t{1} << std::min<uint32_t>(p, 63);
}

template <typename IsSet>
bool BitTestMatchExpression::Test(IsSet is_set) const {
  const bool want_set = type() == MatchType::kBitsAllSet || type() == MatchType::kBitsAnySet;
  const bool all = type() == MatchType::kBitsAllSet || type() == MatchType::kBitsAllClear;
  for (uint32_t p : positions_) {
    const bool as_wanted = is_set(p) == want_set;
    if (all && !as_wanted) return false;
    if (!all && as_wanted) return true;
  }
  return all;
}

bool BitTestMatchExpression::MatchesSingleElement(const Element& value, MatchDetails*) const {
  if (value.type() == BsonType::kBinary) {
    std::string_view bytes = value.Binary().data;
    return Test([&](uint32_t p) {
      return p / 8 < bytes.size() && (static_cast<uint8_t>(bytes[p / 8]) >> (p % 8)) & 1;
    });
  }
  int64_t n;
  if (!value.IsNumber() || !value.ExactInt64(&n)) return false;  // 2.5, NaN, 2^63, "x"
  const uint64_t bits = static_cast<uint64_t>(n);
  switch (type()) {
    case MatchType::kBitsAllSet: return (bits & mask_) == mask_;
    case MatchType::kBitsAllClear: return (bits & mask_) == 0;
    case MatchType::kBitsAnySet: return (bits & mask_) != 0;
    default: return (bits & mask_) != mask_;  // kBitsAnyClear
  }
}

void BitTestMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->OpenArray(MatchTypeName(type()));
  for (uint32_t p : positions_) builder->AppendInt32("", static_cast<int32_t>(p));
  builder->Close();
}

std::string BitTestMatchExpression::DebugLine() const {
  std::string out = path() + " " + std::string(MatchTypeName(type())) + ":";
  for (uint32_t p : positions_) out += " " + std::to_string(p);
  return out;
}

// --- $exists

void ExistsMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->AppendBool("$exists", true);
}

std::string ExistsMatchExpression::DebugLine() const { return path() + " exists"; }

// --- $type

bool MatchTypeSet::Has(BsonType t) const {
  if (t == BsonType::kEod) return false;
  if (all_numbers && (t == BsonType::kInt32 || t == BsonType::kInt64 ||
                      t == BsonType::kDouble || t == BsonType::kDecimal128)) {
    return true;
  }
  return types.test(static_cast<uint8_t>(t));
}

void TypeMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  const size_t count = set_.types.count() + (set_.all_numbers ? 1 : 0);
  auto append_all = [&](BsonBuilder* b, std::string_view key) {
    if (set_.all_numbers) b->AppendString(key, "number");
    for (int t = 0; t < 256; ++t) {
      if (!set_.types.test(t)) continue;
      // MinKey's type byte is 0xFF, but its $type code is -1.
      b->AppendInt32(key, t == 0xFF ? -1 : t);
    }
  };
  if (count == 1) {
    append_all(builder, "$type");
  } else {
    builder->OpenArray("$type");
    append_all(builder, "");
    builder->Close();
  }
}

std::string TypeMatchExpression::DebugLine() const {
  std::string out = path() + " type [";
  bool first = true;
  if (set_.all_numbers) {
    out += "number";
    first = false;
  }
  for (int t = 0; t < 256; ++t) {
    if (!set_.types.test(t)) continue;
    if (!first) out += ", ";
    out += std::string(BsonTypeAlias(static_cast<BsonType>(t)));
    first = false;
  }
  return out + "]";
}

// --- $size

SizeMatchExpression::SizeMatchExpression(std::string path, int32_t size)
    : PathMatchExpression(MatchType::kSize, std::move(path), LeafArrayMode::kNoTraversal),
      size_(size),
      size_value_(MakeInt32Value(size)) {}

bool SizeMatchExpression::MatchesSingleElement(const Element& value, MatchDetails*) const {
  if (value.type() != BsonType::kArray) return false;
  return value.Array().CountFields() == static_cast<size_t>(size_);
}

void SizeMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->AppendInt32("$size", size_);
}

std::string SizeMatchExpression::DebugLine() const {
  return path() + " $size : " + std::to_string(size_);
}

// --- $elemMatch

ElemMatchObjectMatchExpression::ElemMatchObjectMatchExpression(
    std::string path, std::unique_ptr<MatchExpression> sub)
    : PathMatchExpression(MatchType::kElemMatchObject, std::move(path),
                          LeafArrayMode::kNoTraversal) {
  children_.push_back(std::move(sub));
}

bool ElemMatchObjectMatchExpression::MatchesSingleElement(const Element& value,
                                                          MatchDetails* details) const {
  if (value.type() != BsonType::kArray) return false;
  size_t index = 0;
  for (const Element& elt : value.Array()) {
    // Arrays count as documents here (their fields are "0", "1", ...).
    if (elt.IsContainer() && children_[0]->Matches(elt.Document(), nullptr)) {
      if (details) details->SetElemMatchKey(index);
      return true;
    }
    ++index;
  }
  return false;
}

void ElemMatchObjectMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->OpenDocument("$elemMatch");
  children_[0]->SerializeTo(builder);
  builder->Close();
}

std::string ElemMatchObjectMatchExpression::DebugLine() const {
  return path() + " $elemMatch (obj)";
}

ElemMatchValueMatchExpression::ElemMatchValueMatchExpression(
    std::string path, std::vector<std::unique_ptr<MatchExpression>> children)
    : PathMatchExpression(MatchType::kElemMatchValue, std::move(path),
                          LeafArrayMode::kNoTraversal) {
  children_ = std::move(children);
}

bool ElemMatchValueMatchExpression::MatchesSingleElement(const Element& value,
                                                         MatchDetails* details) const {
  if (value.type() != BsonType::kArray) return false;
  size_t index = 0;
  for (const Element& elt : value.Array()) {
    bool all = true;
    for (const auto& c : children_) {
      if (!c->MatchesSingleElement(elt, nullptr)) {
        all = false;
        break;
      }
    }
    if (all) {
      if (details) details->SetElemMatchKey(index);
      return true;
    }
    ++index;
  }
  return false;
}

void ElemMatchValueMatchExpression::SerializeRhs(BsonBuilder* builder) const {
  builder->OpenDocument("$elemMatch");
  for (const auto& c : children_) c->SerializeRhs(builder);
  builder->Close();
}

std::string ElemMatchValueMatchExpression::DebugLine() const {
  return path() + " $elemMatch (value)";
}

namespace match_internal {
thread_local bool error_pending = false;
}  // namespace match_internal

namespace {
thread_local Status match_error;
}  // namespace

void RecordMatchError(const Status& error) {
  if (match_internal::error_pending) return;
  match_error = error;
  match_internal::error_pending = true;
}

Status TakeMatchError() {
  if (!match_internal::error_pending) return Status::OK();
  Status error = std::move(match_error);
  match_error = Status::OK();
  match_internal::error_pending = false;
  return error;
}

}  // namespace rockdoc

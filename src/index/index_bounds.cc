#include "index/index_bounds.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <cmath>
#include <limits>

#include "keystring/keystring.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

// The smallest value of each canonical type rank, in rank order: an
// interval "all values of type T" is [smallest of T, smallest of next T).
struct Bracket {
  int rank;
  Value smallest;
};

const std::vector<Bracket>& Brackets() {
  static const std::vector<Bracket> brackets = [] {
    BsonBuilder b;
    b.AppendMinKey("");
    b.AppendUndefined("");
    b.AppendNull("");
    b.AppendDouble("", std::numeric_limits<double>::quiet_NaN());
    b.AppendString("", "");
    b.OpenDocument("").Close();
    b.OpenArray("").Close();
    b.AppendBinary("", BinarySubtype::kGeneric, "");
    b.AppendObjectId("", ObjectId());
    b.AppendBool("", false);
    b.AppendDateTime("", std::numeric_limits<int64_t>::min());
    b.AppendTimestamp("", BsonTimestamp{0, 0});
    b.AppendRegex("", "", "");
    b.AppendDbPointer("", "", ObjectId());
    b.AppendCode("", "");
    b.AppendCodeWithScope("", "", DocumentView());
    b.AppendMaxKey("");
    static Document doc = std::move(b).Build();
    std::vector<Bracket> out;
    for (Element e : doc) out.push_back(Bracket{CanonicalTypeRank(e.type()), Value::FromElement(e)});
    return out;
  }();
  return brackets;
}

const Value& SmallestOfRank(int rank) {
  for (const Bracket& b : Brackets())
    if (b.rank == rank) return b.smallest;
  return Brackets().back().smallest;
}

// The smallest value of the first rank above `rank`.
const Value& SmallestAboveRank(int rank) {
  for (const Bracket& b : Brackets())
    if (b.rank > rank) return b.smallest;
  return Brackets().back().smallest;
}

Value MakeValue(const std::function<void(BsonBuilder&)>& fill) {
  BsonBuilder b;
  fill(b);
  Document d = std::move(b).Build();
  return Value::FromElement(*d.begin());
}

const Value& MinKeyValue() { return Brackets().front().smallest; }
const Value& MaxKeyValue() { return Brackets().back().smallest; }
const Value& PositiveInfinity() {
  static const Value v =
      MakeValue([](BsonBuilder& b) { b.AppendDouble("", std::numeric_limits<double>::infinity()); });
  return v;
}

int CompareStart(const Interval& a, const Interval& b) {
  int c = CompareValues(a.start.element(), b.start.element());
  if (c != 0) return c;
  if (a.start_inclusive == b.start_inclusive) return 0;
  return a.start_inclusive ? -1 : 1;
}

// Is end `a` beyond end `b`?
int CompareEnd(const Interval& a, const Interval& b) {
  int c = CompareValues(a.end.element(), b.end.element());
  if (c != 0) return c;
  if (a.end_inclusive == b.end_inclusive) return 0;
  return a.end_inclusive ? 1 : -1;
}

bool IsEmpty(const Interval& i) {
  int c = CompareValues(i.start.element(), i.end.element());
  return c > 0 || (c == 0 && !(i.start_inclusive && i.end_inclusive));
}

std::string BoundValueString(const Element& e) {
  switch (e.type()) {
    case BsonType::kMinKey: return "MinKey";
    case BsonType::kMaxKey: return "MaxKey";
    case BsonType::kInt32: return std::to_string(e.Int32());
    case BsonType::kInt64: return std::to_string(e.Int64());
    case BsonType::kDouble: {
      double d = e.Double();
      if (std::isnan(d)) return "nan.0";
      if (std::isinf(d)) return d > 0 ? "inf.0" : "-inf.0";
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof(buf), d);
      std::string s(buf, r.ptr);
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    }
    case BsonType::kString: return ValueToJson(e, JsonFormat::kRelaxed);
    default: return ValueToJson(e, JsonFormat::kShell);
  }
}

}  // namespace

bool Interval::IsPoint() const {
  return start_inclusive && end_inclusive && CompareValues(start.element(), end.element()) == 0;
}

std::string Interval::ToString() const {
  std::string s = start_inclusive ? "[" : "(";
  s += BoundValueString(start.element());
  s += ", ";
  s += BoundValueString(end.element());
  s += end_inclusive ? "]" : ")";
  return s;
}

Interval Interval::Point(const Element& v) {
  Interval i;
  i.start = Value::FromElement(v);
  i.end = i.start;
  return i;
}

Interval Interval::All() {
  Interval i;
  i.start = MinKeyValue();
  i.end = MaxKeyValue();
  return i;
}

bool OrderedIntervalList::IsAll() const {
  return intervals.size() == 1 && intervals[0].start.type() == BsonType::kMinKey &&
         intervals[0].end.type() == BsonType::kMaxKey;
}

bool OrderedIntervalList::AllPoints() const {
  for (const Interval& i : intervals)
    if (!i.IsPoint()) return false;
  return true;
}

Document IndexBounds::ToExplain(uint32_t descending_bits, bool backward) const {
  BsonBuilder b;
  if (simple_range) {
    b.AppendDocument("startKey", start_key);
    b.AppendBool("startKeyInclusive", true);
    b.AppendDocument("endKey", end_key);
    b.AppendBool("endKeyInclusive", false);
    return std::move(b).Build();
  }
  for (size_t f = 0; f < fields.size(); ++f) {
    bool reversed = (((descending_bits >> f) & 1) != 0) != backward;
    b.OpenArray(fields[f].field);
    const auto& list = fields[f].intervals;
    for (size_t k = 0; k < list.size(); ++k) {
      const Interval& i = list[reversed ? list.size() - 1 - k : k];
      if (!reversed) {
        b.AppendString("", i.ToString());
      } else {
        Interval flipped;
        flipped.start = i.end;
        flipped.end = i.start;
        flipped.start_inclusive = i.end_inclusive;
        flipped.end_inclusive = i.start_inclusive;
        b.AppendString("", flipped.ToString());
      }
    }
    b.Close();
  }
  return std::move(b).Build();
}

namespace {

bool IsNaN(const Element& v) {
  return (v.type() == BsonType::kDouble && std::isnan(v.Double())) ||
         (v.type() == BsonType::kDecimal128 && v.Decimal().IsNaN());
}

// Whether a point or range over constant `v` holds exactly the values a
// comparison with `v` matches. Not so for null (which also matches missing
// fields), NaN (one key for every NaN, and no order), MinKey/MaxKey (which
// the matcher compares across types) and undefined.
bool ExactOperand(const Element& v) {
  if (v.IsNumber()) return !IsNaN(v);
  switch (v.type()) {
    case BsonType::kString:
    case BsonType::kSymbol:
    case BsonType::kDocument:
    case BsonType::kBinary:
    case BsonType::kObjectId:
    case BsonType::kBool:
    case BsonType::kDateTime:
    case BsonType::kTimestamp:
      return true;
    default:
      return false;
  }
}

bool IntervalsForValue(const Element& v, std::vector<Interval>* out) {
  // Equality to an array matches the array itself and documents holding it
  // as an element; an index holds elements, so no tight bounds exist.
  if (v.type() == BsonType::kArray) return false;
  out->push_back(Interval::Point(v));
  return true;
}

void AllStrings(std::vector<Interval>* out) {
  Interval i;
  i.start = SmallestOfRank(CanonicalTypeRank(BsonType::kString));
  i.end = SmallestAboveRank(CanonicalTypeRank(BsonType::kString));
  i.end_inclusive = false;
  out->push_back(std::move(i));
}

Value StringValue(std::string_view s) {
  return MakeValue([&](BsonBuilder& b) { b.AppendString("", s); });
}

// The literal prefix every string a regex matches starts with, when the
// pattern is anchored at the start ("^abc", "\Aabc") and read with flags
// that keep it so (none, or "s"); `*whole` tells whether the pattern is
// nothing but that anchored literal (then the prefix range is exactly its
// matches). Conservative: an alternation anywhere, an escape, a class or a
// group ends the prefix (or, for '|', gives none).
std::string RegexPrefix(std::string_view pattern, std::string_view flags, bool* whole) {
  *whole = false;
  for (char f : flags)
    if (f != 's') return "";
  if (pattern.find('|') != std::string_view::npos) return "";
  size_t i;
  if (pattern.substr(0, 1) == "^") {
    i = 1;
  } else if (pattern.substr(0, 2) == "\\A") {
    i = 2;
  } else {
    return "";
  }
  std::string prefix;
  for (; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (std::string_view("\\^$.|?*+()[]{}#").find(c) != std::string_view::npos) {
      // A quantifier that allows zero repetitions makes the last literal
      // (a whole UTF-8 character) optional.
      if (c == '?' || c == '*' || c == '{') {
        while (!prefix.empty() && (static_cast<unsigned char>(prefix.back()) & 0xc0) == 0x80) {
          prefix.pop_back();
        }
        if (!prefix.empty()) prefix.pop_back();
      }
      return prefix;
    }
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') return prefix;
    prefix += c;
  }
  *whole = !prefix.empty();
  return prefix;
}

// [prefix, successor of prefix): every string that starts with `prefix`.
void StringsWithPrefix(const std::string& prefix, std::vector<Interval>* out) {
  Interval i;
  i.start = StringValue(prefix);
  std::string next = prefix;
  while (!next.empty() && static_cast<unsigned char>(next.back()) == 0xff) next.pop_back();
  if (next.empty()) {
    i.end = SmallestAboveRank(CanonicalTypeRank(BsonType::kString));
  } else {
    next.back() = static_cast<char>(static_cast<unsigned char>(next.back()) + 1);
    i.end = StringValue(next);
  }
  i.end_inclusive = false;
  out->push_back(std::move(i));
}

// The strings a regex may match, and the regex value itself (a stored
// regex equal in pattern and flags matches too, as in MongoDB).
BoundsTightness RegexIntervals(std::string_view pattern, std::string_view flags,
                               std::vector<Interval>* out) {
  bool whole = false;
  std::string prefix = RegexPrefix(pattern, flags, &whole);
  if (prefix.empty()) {
    AllStrings(out);
  } else {
    StringsWithPrefix(prefix, out);
  }
  Interval self;
  self.start = MakeValue([&](BsonBuilder& b) { b.AppendRegex("", pattern, flags); });
  self.end = self.start;
  out->push_back(std::move(self));
  return whole ? BoundsTightness::kExact : BoundsTightness::kInexactCovered;
}

const Value& NegativeInfinity() {
  static const Value v = MakeValue(
      [](BsonBuilder& b) { b.AppendDouble("", -std::numeric_limits<double>::infinity()); });
  return v;
}

}  // namespace

bool IntervalsForLeaf(const MatchExpression& leaf, std::vector<Interval>* out,
                      BoundsTightness* tightness) {
  out->clear();
  BoundsTightness unused;
  if (tightness == nullptr) tightness = &unused;
  *tightness = BoundsTightness::kInexactFetch;
  Element v = leaf.operand();
  switch (leaf.type()) {
    case MatchType::kEq:
      if (!IntervalsForValue(v, out)) return false;
      // A regex constant under $eq matches only an equal regex value.
      if (ExactOperand(v) || v.type() == BsonType::kRegex) *tightness = BoundsTightness::kExact;
      return true;
    case MatchType::kLt:
    case MatchType::kLte:
    case MatchType::kGt:
    case MatchType::kGte: {
      if (v.type() == BsonType::kArray || v.type() == BsonType::kMinKey ||
          v.type() == BsonType::kMaxKey) {
        return false;
      }
      const bool or_equal = leaf.type() == MatchType::kLte || leaf.type() == MatchType::kGte;
      if (IsNaN(v)) {
        // NaN is neither below nor above anything; it equals only NaN.
        if (or_equal) out->push_back(Interval::Point(v));
        if (!or_equal) *tightness = BoundsTightness::kExact;
        return true;
      }
      int rank = CanonicalTypeRank(v.type());
      Interval i;
      bool upper = leaf.type() == MatchType::kLt || leaf.type() == MatchType::kLte;
      if (upper) {
        // Numbers below a number start at -inf: NaN (the smallest number
        // in the order) is not less than anything.
        i.start = v.IsNumber() ? NegativeInfinity() : SmallestOfRank(rank);
        i.start_inclusive = true;
        i.end = Value::FromElement(v);
        i.end_inclusive = or_equal;
      } else {
        i.start = Value::FromElement(v);
        i.start_inclusive = or_equal;
        if (v.IsNumber()) {
          i.end = PositiveInfinity();
          i.end_inclusive = true;
        } else {
          i.end = SmallestAboveRank(rank);
          i.end_inclusive = false;
        }
      }
      if (!IsEmpty(i)) out->push_back(std::move(i));
      if (ExactOperand(v)) *tightness = BoundsTightness::kExact;
      return true;
    }
    case MatchType::kIn: {
      const auto& in = static_cast<const InMatchExpression&>(leaf);
      bool exact = true;
      for (const Element& e : in.equalities()) {
        if (!IntervalsForValue(e, out)) return false;
        exact = exact && (ExactOperand(e) || e.type() == BsonType::kRegex);
      }
      for (const auto& re : in.regexes()) {
        exact = RegexIntervals(re->pattern(), re->options(), out) == BoundsTightness::kExact &&
                exact;
      }
      *out = UnionIntervals(std::move(*out));
      if (exact) {
        *tightness = BoundsTightness::kExact;
      } else if (in.has_null()) {
        *tightness = BoundsTightness::kInexactFetch;
      } else {
        *tightness = BoundsTightness::kInexactCovered;
      }
      return true;
    }
    case MatchType::kRegex: {
      const auto& re = static_cast<const RegexMatchExpression&>(leaf);
      *tightness = RegexIntervals(re.pattern(), re.flags(), out);
      *out = UnionIntervals(std::move(*out));
      return true;
    }
    default:
      return false;
  }
}

std::vector<Interval> UnionIntervals(std::vector<Interval> a) {
  std::sort(a.begin(), a.end(),
            [](const Interval& x, const Interval& y) { return CompareStart(x, y) < 0; });
  std::vector<Interval> out;
  for (Interval& i : a) {
    if (IsEmpty(i)) continue;
    if (!out.empty()) {
      Interval& cur = out.back();
      int c = CompareValues(cur.end.element(), i.start.element());
      if (c > 0 || (c == 0 && (cur.end_inclusive || i.start_inclusive))) {
        if (CompareEnd(i, cur) > 0) {
          cur.end = i.end;
          cur.end_inclusive = i.end_inclusive;
        }
        continue;
      }
    }
    out.push_back(std::move(i));
  }
  return out;
}

std::vector<Interval> IntersectIntervals(const std::vector<Interval>& a,
                                         const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    Interval x;
    const Interval& s = CompareStart(a[i], b[j]) >= 0 ? a[i] : b[j];
    x.start = s.start;
    x.start_inclusive = s.start_inclusive;
    const Interval& e = CompareEnd(a[i], b[j]) <= 0 ? a[i] : b[j];
    x.end = e.end;
    x.end_inclusive = e.end_inclusive;
    if (!IsEmpty(x)) out.push_back(std::move(x));
    if (CompareEnd(a[i], b[j]) <= 0) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

namespace {

struct ByteInterval {
  std::string lo, hi;
  bool lo_inclusive, hi_inclusive;
};

std::string EncodeField(const Element& v, bool descending) {
  keystring::Builder b(descending ? 1u : 0u);
  b.Append(v);
  return b.bytes();
}

std::vector<ByteInterval> ToBytes(const OrderedIntervalList& list, bool descending) {
  std::vector<ByteInterval> out;
  for (const Interval& i : list.intervals) {
    ByteInterval b;
    if (!descending) {
      b.lo = EncodeField(i.start.element(), false);
      b.lo_inclusive = i.start_inclusive;
      b.hi = EncodeField(i.end.element(), false);
      b.hi_inclusive = i.end_inclusive;
    } else {
      b.lo = EncodeField(i.end.element(), true);
      b.lo_inclusive = i.end_inclusive;
      b.hi = EncodeField(i.start.element(), true);
      b.hi_inclusive = i.start_inclusive;
    }
    out.push_back(std::move(b));
  }
  std::sort(out.begin(), out.end(),
            [](const ByteInterval& x, const ByteInterval& y) { return x.lo < y.lo; });
  return out;
}

}  // namespace

namespace {

// The number of leading fields whose points BoundsToKeyRanges expands as a
// product: all-point fields, while the product stays within `max_ranges`.
// *empty is set when one of them has no interval at all (nothing matches).
size_t PointFieldCount(const IndexBounds& bounds, size_t max_ranges, bool* empty) {
  *empty = false;
  size_t product = 1;
  size_t f = 0;
  for (; f < bounds.fields.size(); ++f) {
    const OrderedIntervalList& list = bounds.fields[f];
    if (!list.AllPoints()) break;
    if (list.intervals.empty()) {
      *empty = true;
      break;
    }
    if (product * list.intervals.size() > max_ranges) break;
    product *= list.intervals.size();
  }
  return f;
}

}  // namespace

size_t EnforcedFieldCount(const IndexBounds& bounds, size_t max_ranges) {
  if (bounds.simple_range) return 0;
  bool empty = false;
  size_t points = PointFieldCount(bounds, max_ranges, &empty);
  if (empty) return bounds.fields.size();  // no key at all: every field holds
  return std::min(points + 1, bounds.fields.size());
}

std::vector<KeyRange> BoundsToKeyRanges(const IndexBounds& bounds, uint32_t descending_bits,
                                        size_t max_ranges) {
  if (bounds.simple_range) {
    // The keys of whole index values: an entry's key begins with them, and
    // keystrings are prefix-free, so [start, end) holds exactly the entries
    // whose values are at least start_key and below end_key.
    auto key_of = [descending_bits](DocumentView values) {
      keystring::Builder b(descending_bits);
      for (const Element& v : values) b.Append(v);
      return b.bytes();
    };
    KeyRange r{key_of(bounds.start_key), bounds.end_key.empty() ? "" : key_of(bounds.end_key)};
    if (!r.end.empty() && r.end <= r.start) return {};
    return {std::move(r)};
  }
  std::vector<std::string> prefixes = {""};
  bool empty = false;
  const size_t point_fields = PointFieldCount(bounds, max_ranges, &empty);
  if (empty) return {};
  size_t f = 0;
  for (; f < point_fields; ++f) {
    const OrderedIntervalList& list = bounds.fields[f];
    bool desc = ((descending_bits >> f) & 1) != 0;
    std::vector<ByteInterval> points = ToBytes(list, desc);
    std::vector<std::string> next;
    next.reserve(prefixes.size() * points.size());
    for (const std::string& p : prefixes)
      for (const ByteInterval& b : points) next.push_back(p + b.lo);
    prefixes = std::move(next);
  }
  std::vector<KeyRange> ranges;
  if (f == bounds.fields.size()) {
    for (const std::string& p : prefixes) ranges.push_back(KeyRange{p, keystring::PrefixSuccessor(p)});
  } else {
    bool desc = ((descending_bits >> f) & 1) != 0;
    std::vector<ByteInterval> field = ToBytes(bounds.fields[f], desc);
    if (field.empty()) return {};
    for (const std::string& p : prefixes) {
      for (const ByteInterval& b : field) {
        KeyRange r;
        r.start = b.lo_inclusive ? p + b.lo : keystring::PrefixSuccessor(p + b.lo);
        r.end = b.hi_inclusive ? keystring::PrefixSuccessor(p + b.hi) : p + b.hi;
        ranges.push_back(std::move(r));
      }
    }
  }
  // Ascending and disjoint: sort, then merge overlaps.
  std::sort(ranges.begin(), ranges.end(),
            [](const KeyRange& a, const KeyRange& b) { return a.start < b.start; });
  std::vector<KeyRange> merged;
  for (KeyRange& r : ranges) {
    if (!r.end.empty() && r.end <= r.start) continue;
    if (!merged.empty()) {
      KeyRange& m = merged.back();
      if (m.end.empty() || r.start <= m.end) {
        if (!m.end.empty() && (r.end.empty() || r.end > m.end)) m.end = r.end;
        continue;
      }
    }
    merged.push_back(std::move(r));
  }
  return merged;
}

}  // namespace rockdoc::internal

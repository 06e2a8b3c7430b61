// query/match_expression.h: MongoDB query filters as an expression tree.
//
// `ParseMatchExpression` turns a filter document ({a: {$gt: 1}, b: "x"}) into
// a tree of MatchExpression nodes once; `Matches` then evaluates the tree
// directly on stored BSON (a DocumentView) without copying the document.
// The semantics are MongoDB's, including its array rules: a path fans out
// over arrays (see query/field_path.h), a predicate holds when any reached
// value satisfies it, comparisons bracket by canonical type, null matches
// missing fields, and so on.
//
// The tree is also the query planner's input, so it is introspectable: each
// node has a MatchType, the full dotted path it tests, its constant operand
// (`operand()`, an Element owned by the node), and its children. Shapes the
// parser produces (MongoDB's own normal form):
//   {a: 1}                 EQ(a, 1)
//   {a: 1, b: 2}           AND(EQ(a, 1), EQ(b, 2))
//   {a: {$gt: 1, $lt: 5}}  AND(GT(a, 1), LT(a, 5))
//   {a: {$ne: 1}}          NOT(EQ(a, 1))
//   {a: {$nin: [1, 2]}}    NOT(IN(a, [1, 2]))
//   {a: {$exists: false}}  NOT(EXISTS(a))
//   {a: {$all: [1, 2]}}    AND(EQ(a, 1), EQ(a, 2));  {$all: []} is ALWAYS_FALSE
//   {a: /x/}               REGEX(a)
//   {$or: [{a: 1}]}        EQ(a, 1): a one-clause $and / $or is its clause
//   {a: {$bitsAllSet: 6}}  BITS_ALL_SET(a, [1, 2])
//   {}                     AND() with no children, which matches everything
//   {$jsonSchema: {...}}    JSON_SCHEMA (query/json_schema.h)
//   {$expr: {...}}         EXPR (query/expr_match_expression.h)
//   {a: {$geoWithin: ...}}  GEO_WITHIN (query/geo_match_expression.h), and
//   $geoIntersects, $near, $nearSphere likewise
// $comment is dropped. $where and $text are not supported (NotImplemented).
//
// Ownership and threading: a tree owns copies of all constants it refers
// to, so it does not depend on the filter's bytes after parsing. A parsed
// tree is immutable and may be evaluated from many threads at once.
//
// Example:
//   auto filter = rockdoc::FromJson(R"({"tags": "x", "n": {"$gte": 2}})");
//   auto expr = rockdoc::ParseMatchExpression(*filter);
//   if (!expr.ok()) return expr.status();        // BadValue (2), ...
//   bool hit = (*expr)->Matches(stored_doc_view);
#ifndef ROCKDOC_QUERY_MATCH_EXPRESSION_H_
#define ROCKDOC_QUERY_MATCH_EXPRESSION_H_

#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "query/collator.h"
#include "query/field_path.h"
#include "query/regex.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc {

// The kind of a node. Stable names for explain come from MatchTypeName.
enum class MatchType {
  // Logical.
  kAnd,
  kOr,
  kNor,
  kNot,
  // Leaves over a path.
  kEq,
  kLt,
  kLte,
  kGt,
  kGte,
  kIn,
  kRegex,
  kMod,
  kExists,
  kType,
  kBitsAllSet,
  kBitsAllClear,
  kBitsAnySet,
  kBitsAnyClear,
  // Array leaves: they see the array itself, never its elements one by one.
  kSize,
  kElemMatchObject,
  kElemMatchValue,
  // Constants ($alwaysTrue / $alwaysFalse, and $all: []).
  kAlwaysTrue,
  kAlwaysFalse,
  // $jsonSchema (query/json_schema.h): tests the whole document.
  kJsonSchema,
  // $expr (query/expr_match_expression.h): an aggregation expression.
  kExpr,
  // Geospatial leaves (query/geo_match_expression.h): $geoWithin,
  // $geoIntersects, and $near / $nearSphere (which also order the results).
  kGeoWithin,
  kGeoIntersects,
  kGeoNear,
  // $text: answered by a text index's TEXT plan alone (planner/).
  kText,
};

// "$and", "$eq", "$elemMatch", ... ("$elemMatch" for both $elemMatch forms).
std::string_view MatchTypeName(MatchType type);

// Out-of-band results of a match. When `RequestElemMatchKey()` was called
// before matching, a successful match records the position, in the first
// (outermost) array along the matched path, of the element that satisfied
// the predicate: MongoDB's "elemMatchKey", which the positional `$`
// projection and the positional `$` update use.
//
// Example: {"a.b": 5} on {a: [{b: 1}, {b: 5}]} records 1.
class MatchDetails {
 public:
  void RequestElemMatchKey() { requested_ = true; }
  bool needs_record() const { return requested_; }
  bool has_elem_match_key() const { return key_.has_value(); }
  // Precondition: has_elem_match_key().
  size_t elem_match_key() const { return *key_; }
  void SetElemMatchKey(size_t position) {
    if (requested_) key_ = position;
  }
  void ResetOutput() { key_.reset(); }

 private:
  bool requested_ = false;
  std::optional<size_t> key_;
};

class MatchExpression {
 public:
  virtual ~MatchExpression();
  MatchExpression(const MatchExpression&) = delete;
  MatchExpression& operator=(const MatchExpression&) = delete;

  MatchType type() const { return type_; }

  // The full dotted path a leaf tests (what index bounds are built for).
  // Empty for logical nodes and constants, and for the children of a
  // value-form $elemMatch ({a: {$elemMatch: {$gt: 1}}}), which test each
  // array element itself.
  const std::string& path() const { return path_.dotted(); }
  const FieldPath& field_path() const { return path_; }

  bool is_logical() const {
    return type_ == MatchType::kAnd || type_ == MatchType::kOr || type_ == MatchType::kNor ||
           type_ == MatchType::kNot;
  }
  // EQ/LT/LTE/GT/GTE: operand() is the constant compared against.
  bool is_comparison() const {
    return type_ == MatchType::kEq || type_ == MatchType::kLt || type_ == MatchType::kLte ||
           type_ == MatchType::kGt || type_ == MatchType::kGte;
  }

  // Whether `doc` satisfies the expression. `details`, when not null and
  // requested, receives the elemMatchKey of a successful match.
  virtual bool Matches(DocumentView doc, MatchDetails* details = nullptr) const = 0;

  // Whether one value (an array element, or a value already found by a
  // path walk) satisfies the expression's own test, without walking a path.
  // A missing value is a default-constructed Element.
  virtual bool MatchesSingleElement(const Element& value,
                                    MatchDetails* details = nullptr) const = 0;

  // Children: the operands of AND/OR/NOR, the single child of NOT, the
  // filter inside an object-form $elemMatch, the predicates of a value-form
  // $elemMatch. Zero for the other leaves.
  size_t num_children() const { return children_.size(); }
  const MatchExpression* child(size_t i) const { return children_[i].get(); }

  // The constant of a comparison (EQ/LT/LTE/GT/GTE), the array of an IN
  // (equalities and regexes, as given), the size of a SIZE. A missing
  // Element for the others.
  virtual Element operand() const { return Element(); }

  // An indented, multi-line rendering for logs and tests:
  //   $and
  //       a $eq 1
  //       b $gt 2
  std::string DebugString() const;

  // A normalised filter document with the same meaning, as MongoDB's
  // explain shows it in `parsedQuery`: {a: {$eq: 1}}, {$and: [...]},
  // {a: {$not: {$eq: 1}}}, {a: {$in: [...]}}, {a: {$regex: "x", $options: "i"}}.
  Document Serialize() const;

  // Makes the tree compare strings with `collator` (null: binary), as
  // MongoDB's setCollator: $eq/$lt/$lte/$gt/$gte and $in (and so $ne,
  // $nin, $all's equalities, $elemMatch's predicates); never $regex, field
  // names, $expr or $jsonSchema. Call before matching, from one thread.
  virtual void SetCollator(const CollatorPtr& collator);

  // Appends this expression's fields to the document `builder` has open
  // (the building block of Serialize).
  virtual void SerializeTo(BsonBuilder* builder) const = 0;

  // For a leaf: appends the "right-hand side" operator fields ($eq: 1) to
  // the open document. Used to serialize {path: {<rhs>}} and $elemMatch
  // value forms. Logical nodes append a $not / $and form when possible.
  virtual void SerializeRhs(BsonBuilder* builder) const;

 protected:
  MatchExpression(MatchType type, std::string path) : type_(type), path_(std::move(path)) {}
  explicit MatchExpression(MatchType type) : type_(type) {}

  virtual void AppendDebug(std::string* out, int indent) const;
  // Single-line description of the node itself ("a $eq 1").
  virtual std::string DebugLine() const;

  std::vector<std::unique_ptr<MatchExpression>> children_;

 private:
  MatchType type_;
  FieldPath path_;
};

// ---------------------------------------------------------------------------
// Logical nodes.

// AND / OR / NOR over any number of children. An AND with no children
// matches everything; OR with none matches nothing; NOR with none, all.
class ListOfMatchExpression : public MatchExpression {
 public:
  ListOfMatchExpression(MatchType type, std::vector<std::unique_ptr<MatchExpression>> children);
  void Add(std::unique_ptr<MatchExpression> child) { children_.push_back(std::move(child)); }
  // Removes and returns all children (the node is left with none).
  std::vector<std::unique_ptr<MatchExpression>> ReleaseChildren() {
    return std::move(children_);
  }

  bool Matches(DocumentView doc, MatchDetails* details = nullptr) const override;
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  void SerializeTo(BsonBuilder* builder) const override;
  void SerializeRhs(BsonBuilder* builder) const override;
};

class NotMatchExpression : public MatchExpression {
 public:
  explicit NotMatchExpression(std::unique_ptr<MatchExpression> child);
  bool Matches(DocumentView doc, MatchDetails* details = nullptr) const override;
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  void SerializeTo(BsonBuilder* builder) const override;
  void SerializeRhs(BsonBuilder* builder) const override;
};

class AlwaysBooleanMatchExpression : public MatchExpression {
 public:
  explicit AlwaysBooleanMatchExpression(bool value)
      : MatchExpression(value ? MatchType::kAlwaysTrue : MatchType::kAlwaysFalse) {}
  bool Matches(DocumentView, MatchDetails* = nullptr) const override {
    return type() == MatchType::kAlwaysTrue;
  }
  bool MatchesSingleElement(const Element&, MatchDetails* = nullptr) const override {
    return type() == MatchType::kAlwaysTrue;
  }
  void SerializeTo(BsonBuilder* builder) const override;

 protected:
  std::string DebugLine() const override;
};

// {$text: {$search, $language, $caseSensitive, $diacriticSensitive}}: a
// text search, which only a text index's plan answers (the planner's TEXT
// stages; index/fts.h parses the search string with the index's language).
// Matching a document with it directly (a $text where no text plan can
// take it) records BadValue as the match error.
class TextMatchExpression : public MatchExpression {
 public:
  // BadValue / TypeMismatch for a malformed $text argument.
  static StatusOr<std::unique_ptr<MatchExpression>> Parse(const Element& e);
  const std::string& search() const { return search_; }
  // Empty: the index's default language.
  const std::string& language() const { return language_; }
  bool case_sensitive() const { return case_sensitive_; }
  bool diacritic_sensitive() const { return diacritic_sensitive_; }
  bool Matches(DocumentView, MatchDetails* = nullptr) const override;
  bool MatchesSingleElement(const Element&, MatchDetails* = nullptr) const override {
    return false;
  }
  void SerializeTo(BsonBuilder* builder) const override;

 private:
  TextMatchExpression() : MatchExpression(MatchType::kText) {}
  std::string search_;
  std::string language_;
  bool case_sensitive_ = false;
  bool diacritic_sensitive_ = false;
};

// ---------------------------------------------------------------------------
// Leaves over a path. `Matches` walks the path (query/field_path.h) and
// succeeds when any reached value passes `MatchesSingleElement`.

class PathMatchExpression : public MatchExpression {
 public:
  bool Matches(DocumentView doc, MatchDetails* details = nullptr) const override;
  void SerializeTo(BsonBuilder* builder) const override;
  LeafArrayMode leaf_array_mode() const { return leaf_mode_; }

 protected:
  PathMatchExpression(MatchType type, std::string path, LeafArrayMode mode)
      : MatchExpression(type, std::move(path)), leaf_mode_(mode) {}

 private:
  LeafArrayMode leaf_mode_;
};

// $eq $lt $lte $gt $gte. Values of different canonical types never compare,
// except: null operands match missing fields for $eq/$lte/$gte, and MinKey /
// MaxKey operands bound everything. NaN equals only NaN and is neither
// less nor greater than anything. Following MongoDB 8.0, a null operand does
// not match `undefined` values.
class ComparisonMatchExpression : public PathMatchExpression {
 public:
  // `type` is one of kEq/kLt/kLte/kGt/kGte; `rhs` is copied. Precondition:
  // rhs is not undefined (the parser reports that as BadValue).
  ComparisonMatchExpression(MatchType type, std::string path, const Element& rhs);

  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  Element operand() const override { return rhs_.element(); }
  void SerializeRhs(BsonBuilder* builder) const override;
  void SetCollator(const CollatorPtr& collator) override { collator_ = collator; }
  const Collator* collator() const { return collator_.get(); }

  // The comparison itself, for reuse (sort-free filters, tests); strings
  // compare by `collator` when not null.
  static bool CompareForMatch(MatchType type, const Element& value, const Element& rhs,
                              const Collator* collator = nullptr);

 protected:
  std::string DebugLine() const override;

 private:
  Value rhs_;
  CollatorPtr collator_;
};

// {$regex: pattern, $options: flags}, or a BSON regex literal. Matches
// strings and symbols by regex search, and a stored regex value with the same
// pattern and flags.
class RegexMatchExpression : public PathMatchExpression {
 public:
  RegexMatchExpression(std::string path, std::shared_ptr<const Regex> regex);
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  void SerializeRhs(BsonBuilder* builder) const override;
  const Regex& regex() const { return *regex_; }
  // The pattern and option letters as given (the planner derives prefix
  // bounds from a pattern such as ^abc).
  std::string_view pattern() const { return regex_->pattern(); }
  std::string_view flags() const { return regex_->options(); }

 protected:
  std::string DebugLine() const override;

 private:
  std::shared_ptr<const Regex> regex_;
};

// $in: equality with any of a set of values, or a match of any regex in it.
// A null in the set also matches missing fields.
class InMatchExpression : public PathMatchExpression {
 public:
  // `array` is the $in argument (an array Element), copied. Regex values in
  // it are compiled by the parser and passed in `regexes`.
  InMatchExpression(std::string path, const Element& array,
                    std::vector<std::shared_ptr<const Regex>> regexes);

  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  Element operand() const override { return array_.element(); }
  void SerializeRhs(BsonBuilder* builder) const override;

  // The non-regex values, sorted by CompareValues (the planner's point
  // intervals, in key order).
  const std::vector<Element>& equalities() const { return equalities_; }
  const std::vector<std::shared_ptr<const Regex>>& regexes() const { return regexes_; }
  bool has_null() const { return has_null_; }
  void SetCollator(const CollatorPtr& collator) override;
  const Collator* collator() const { return collator_.get(); }

 protected:
  std::string DebugLine() const override;

 private:
  Value array_;
  std::vector<Element> equalities_;  // views into array_
  // With a collator: the equalities sorted and deduplicated by it (what
  // matching searches); equalities_ stays as given, for explain.
  CollatorPtr collator_;
  std::vector<Element> collated_;
  std::vector<std::shared_ptr<const Regex>> regexes_;
  bool has_null_ = false;
};

// $mod: [divisor, remainder]: numbers whose truncated integer value has that
// remainder. NaN and infinities never match.
class ModMatchExpression : public PathMatchExpression {
 public:
  ModMatchExpression(std::string path, int64_t divisor, int64_t remainder)
      : PathMatchExpression(MatchType::kMod, std::move(path), LeafArrayMode::kTraverse),
        divisor_(divisor),
        remainder_(remainder) {}
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  void SerializeRhs(BsonBuilder* builder) const override;
  int64_t divisor() const { return divisor_; }
  int64_t remainder() const { return remainder_; }

 protected:
  std::string DebugLine() const override;

 private:
  int64_t divisor_;
  int64_t remainder_;
};

// $bitsAllSet / $bitsAllClear / $bitsAnySet / $bitsAnyClear: bit tests of
// numbers and BinData against a set of bit positions (given as positions, a
// non-negative integer bitmask, or a BinData bitmask, bytes little-endian).
// A number matches when it is an integer representable as int64 (doubles and
// decimals included), tested in two's complement and sign-extended, so a
// position past 63 reads the sign bit; BinData is zero-extended. Other
// values (strings, NaN, 2.5, 2^63) never match.
class BitTestMatchExpression : public PathMatchExpression {
 public:
  // `type` is one of the four kBits*; `positions` are bit numbers (0 is the
  // least significant), duplicates allowed.
  BitTestMatchExpression(MatchType type, std::string path, std::vector<uint32_t> positions);
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  void SerializeRhs(BsonBuilder* builder) const override;
  const std::vector<uint32_t>& positions() const { return positions_; }

 protected:
  std::string DebugLine() const override;

 private:
  // Whether the test holds given, for each position in turn, whether its bit
  // is set.
  template <typename IsSet>
  bool Test(IsSet is_set) const;
  std::vector<uint32_t> positions_;
  uint64_t mask_ = 0;  // positions_ for int64 values, positions above 63 as 63
};

// $exists: true (false parses as NOT(EXISTS)).
class ExistsMatchExpression : public PathMatchExpression {
 public:
  explicit ExistsMatchExpression(std::string path)
      : PathMatchExpression(MatchType::kExists, std::move(path), LeafArrayMode::kTraverse) {}
  bool MatchesSingleElement(const Element& value, MatchDetails* = nullptr) const override {
    return value.ok();
  }
  void SerializeRhs(BsonBuilder* builder) const override;

 protected:
  std::string DebugLine() const override;
};

// The set of BSON types a $type accepts; "number" is all four numeric types.
struct MatchTypeSet {
  std::bitset<256> types;  // indexed by the BSON type byte
  bool all_numbers = false;
  bool Has(BsonType t) const;
  bool empty() const { return !all_numbers && types.none(); }
};

// Adds the type MongoDB's alias names ("int", "objectId", "number", ...) to
// `set`. BadValue "Unknown type name alias: x" otherwise.
Status AddTypeAliasToSet(std::string_view alias, MatchTypeSet* set);

// $type. Matches values of the listed types; an array field matches
// "array" (the whole array is one of the values the walk reaches).
class TypeMatchExpression : public PathMatchExpression {
 public:
  TypeMatchExpression(std::string path, MatchTypeSet set)
      : PathMatchExpression(MatchType::kType, std::move(path), LeafArrayMode::kTraverse),
        set_(set) {}
  bool MatchesSingleElement(const Element& value, MatchDetails* = nullptr) const override {
    return value.ok() && set_.Has(value.type());
  }
  void SerializeRhs(BsonBuilder* builder) const override;
  const MatchTypeSet& type_set() const { return set_; }

 protected:
  std::string DebugLine() const override;

 private:
  MatchTypeSet set_;
};

// $size: arrays with exactly that many elements.
class SizeMatchExpression : public PathMatchExpression {
 public:
  SizeMatchExpression(std::string path, int32_t size);
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  Element operand() const override { return size_value_.element(); }
  void SerializeRhs(BsonBuilder* builder) const override;
  int32_t size() const { return size_; }

 protected:
  std::string DebugLine() const override;

 private:
  int32_t size_;
  Value size_value_;
};

// {a: {$elemMatch: {b: 1, c: {$gt: 2}}}}: some element of the array a is a
// document (or array) satisfying the whole inner filter, child(0).
class ElemMatchObjectMatchExpression : public PathMatchExpression {
 public:
  ElemMatchObjectMatchExpression(std::string path, std::unique_ptr<MatchExpression> sub);
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  void SerializeRhs(BsonBuilder* builder) const override;

 protected:
  std::string DebugLine() const override;
};

// {a: {$elemMatch: {$gt: 1, $lt: 5}}}: some element of the array a passes
// every child (whose paths are empty: they test the element itself).
class ElemMatchValueMatchExpression : public PathMatchExpression {
 public:
  ElemMatchValueMatchExpression(std::string path,
                                std::vector<std::unique_ptr<MatchExpression>> children);
  bool MatchesSingleElement(const Element& value, MatchDetails* details = nullptr) const override;
  void SerializeRhs(BsonBuilder* builder) const override;

 protected:
  std::string DebugLine() const override;
};

// ---------------------------------------------------------------------------

// Parses a filter document into an expression tree. The result does not
// refer to `filter`'s bytes.
//
// Errors, with MongoDB's codes and messages, among them:
//   BadValue (2): "unknown operator: $foo", "unknown top level operator: $foo. ...",
//     "$in needs an array", "$nin needs an array", "$all needs an array",
//     "$and/$or/$nor must be a nonempty array", "$and must be an array",
//     "$or/$and/$nor entries need to be full objects",
//     "$not needs a regex or a document", "$not cannot be empty",
//     "$elemMatch needs an Object", "cannot compare to undefined",
//     "Can't have regex as arg to $ne.", "cannot nest $ under $in",
//     "$all/$elemMatch has to be consistent", "no $ expressions in $all",
//     "$options needs a $regex", "$regex has to be a string",
//     "malformed mod, ...", "divisor cannot be 0", "Failed to parse $size. ...",
//     "Unknown type name alias: foo", "Invalid numerical type code: 99"
//   TypeMismatch (14): "type must be represented as a number or a string"
//   FailedToParse (9): "$type must match at least one type",
//     "$alwaysTrue must be an integer value of 1"
//   51091 invalid regex, 51108 invalid regex flag, 51074/51075 options set twice
//   $bitsAllSet & co.: BadValue (2) "a takes an Array, a number, or a BinData
//     but received: ...", "Failed to parse bit position. ..."; FailedToParse
//     (9) for a bitmask that is not a non-negative int64 ("Expected an
//     integer: $bitsAllSet: 1.5", "Expected a non-negative number in: ...")
//   NotImplemented (238): $where, $text.
StatusOr<std::unique_ptr<MatchExpression>> ParseMatchExpression(DocumentView filter);
// The same, where $expr may use the variables `variables` binds ($lookup's
// `let`); their values are read at each match.
struct FilterVariables;
StatusOr<std::unique_ptr<MatchExpression>> ParseMatchExpression(
    DocumentView filter, std::shared_ptr<FilterVariables> variables);

// A match that could not be decided ($expr failing to evaluate) answers
// false and records its error for the calling thread: RecordMatchError
// keeps the first, TakeMatchError returns it (OK when none) and clears it.
// The error is the operation's whatever the filter's answer (a $or or a
// $not around the $expr may still answer true): every caller that runs a
// filter a user wrote checks MatchErrorPending after each Matches.
void RecordMatchError(const Status& error);
Status TakeMatchError();
// A regex's answer inside a filter: a match PCRE2 cannot decide (a limit
// reached) answers false and records its error, so the operation fails with
// it (51156) instead of taking it for "no match".
bool RegexMatches(const Regex& regex, std::string_view subject, std::string_view op);
namespace match_internal {
extern thread_local bool error_pending;
}  // namespace match_internal
inline bool MatchErrorPending() { return match_internal::error_pending; }

// Matches, then the error a $expr met on the way, if any.
inline StatusOr<bool> MatchesOrError(const MatchExpression& expr, DocumentView doc,
                                     MatchDetails* details = nullptr) {
  const bool matched = expr.Matches(doc, details);
  if (MatchErrorPending()) return TakeMatchError();
  return matched;
}

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_MATCH_EXPRESSION_H_

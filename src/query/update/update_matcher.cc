// The interim matcher behind ParseUpdateMatcher (see the header for why it
// exists). A query becomes a tree of Nodes; a path predicate walks the
// document with MongoDB's array rules: a predicate on a path that reaches an
// array matches when it matches the array itself or any of its elements,
// and a dotted path fans out over arrays of documents.
#include "query/update/update_matcher.h"

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "query/update/mutable_document.h"

namespace rockdoc::update_internal {

namespace {

// A predicate over one value (which may be missing).
class ValuePredicate {
 public:
  virtual ~ValuePredicate() = default;
  virtual bool MatchesSingle(const Element& v) const = 0;
  // Whether an array value also matches when one of its elements does.
  virtual bool FansOutOverArrays() const { return true; }
};

// A predicate over a whole document.
class Node {
 public:
  virtual ~Node() = default;
  virtual bool Matches(DocumentView doc) const = 0;
};

bool MatchValue(const Element& v, const ValuePredicate& pred) {
  if (pred.MatchesSingle(v)) return true;
  if (v.type() == BsonType::kArray && pred.FansOutOverArrays()) {
    for (Element item : v.Array()) {
      if (pred.MatchesSingle(item)) return true;
    }
  }
  return false;
}

bool MatchPath(DocumentView doc, const std::vector<std::string>& parts, size_t i,
               const ValuePredicate& pred) {
  Element e = doc.Get(parts[i]);
  if (i + 1 == parts.size()) return MatchValue(e, pred);
  if (e.type() == BsonType::kDocument) return MatchPath(e.Document(), parts, i + 1, pred);
  if (e.type() == BsonType::kArray) {
    size_t index;
    if (ParseArrayIndex(parts[i + 1], &index)) {
      size_t n = 0;
      for (Element item : e.Array()) {
        if (n++ != index) continue;
        if (i + 2 == parts.size()) {
          if (MatchValue(item, pred)) return true;
        } else if (item.type() == BsonType::kDocument &&
                   MatchPath(item.Document(), parts, i + 2, pred)) {
          return true;
        }
        break;
      }
    }
    bool any_document = false;
    for (Element item : e.Array()) {
      if (item.type() != BsonType::kDocument) continue;
      any_document = true;
      if (MatchPath(item.Document(), parts, i + 1, pred)) return true;
    }
    // No element has the path at all: the path is missing.
    return !any_document && pred.MatchesSingle(Element());
  }
  return pred.MatchesSingle(Element());
}

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    parts.emplace_back(path.substr(start, dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

bool IsMissingOrNull(const Element& v) {
  return !v.ok() || v.type() == BsonType::kNull || v.type() == BsonType::kUndefined;
}

// Regex match of a string value.
class RegexPredicate : public ValuePredicate {
 public:
  static StatusOr<std::unique_ptr<RegexPredicate>> Make(std::string_view pattern,
                                                        std::string_view options) {
    auto flags = std::regex::ECMAScript;
    for (char c : options) {
      if (c == 'i') flags |= std::regex::icase;
      if (c == 'm') flags |= std::regex::multiline;
    }
    auto p = std::make_unique<RegexPredicate>();
    try {
      p->re_ = std::regex(std::string(pattern), flags);
    } catch (const std::regex_error& e) {
      return Status(ErrorCode::kBadValue, "Regular expression is invalid: " + std::string(e.what()));
    }
    return p;
  }
  bool MatchesSingle(const Element& v) const override {
    if (v.type() != BsonType::kString && v.type() != BsonType::kSymbol) return false;
    std::string_view s = v.String();
    return std::regex_search(s.begin(), s.end(), re_);
  }

 private:
  std::regex re_;
};

enum class CompareOp { kEq, kLt, kLte, kGt, kGte };

class ComparisonPredicate : public ValuePredicate {
 public:
  ComparisonPredicate(CompareOp op, Element operand) : op_(op), operand_(operand) {}
  bool MatchesSingle(const Element& v) const override {
    if (operand_.type() == BsonType::kNull) {
      // null matches missing and null, for the inclusive operators only.
      return IsMissingOrNull(v) && op_ != CompareOp::kLt && op_ != CompareOp::kGt;
    }
    if (!v.ok()) return false;
    if (operand_.type() == BsonType::kMinKey || operand_.type() == BsonType::kMaxKey) {
      return Accept(CompareValues(v, operand_));
    }
    // Type bracketing: only values of the operand's type class compare.
    if (CanonicalTypeRank(v.type()) != CanonicalTypeRank(operand_.type())) return false;
    return Accept(CompareValues(v, operand_));
  }

 private:
  bool Accept(int c) const {
    switch (op_) {
      case CompareOp::kEq: return c == 0;
      case CompareOp::kLt: return c < 0;
      case CompareOp::kLte: return c <= 0;
      case CompareOp::kGt: return c > 0;
      case CompareOp::kGte: return c >= 0;
    }
    return false;
  }
  CompareOp op_;
  Element operand_;
};

class InPredicate : public ValuePredicate {
 public:
  std::vector<std::unique_ptr<ValuePredicate>> alternatives;
  bool MatchesSingle(const Element& v) const override {
    for (const auto& a : alternatives) {
      if (a->MatchesSingle(v)) return true;
    }
    return false;
  }
};

class ExistsPredicate : public ValuePredicate {
 public:
  bool MatchesSingle(const Element& v) const override { return v.ok(); }
  bool FansOutOverArrays() const override { return false; }
};

class TypePredicate : public ValuePredicate {
 public:
  std::vector<BsonType> types;
  bool any_number = false;
  bool MatchesSingle(const Element& v) const override {
    if (!v.ok()) return false;
    if (any_number && v.IsNumber()) return true;
    for (BsonType t : types) {
      if (v.type() == t) return true;
    }
    return false;
  }
};

class SizePredicate : public ValuePredicate {
 public:
  explicit SizePredicate(int64_t n) : n_(n) {}
  bool MatchesSingle(const Element& v) const override {
    return v.type() == BsonType::kArray &&
           static_cast<int64_t>(v.Array().CountFields()) == n_;
  }
  bool FansOutOverArrays() const override { return false; }

 private:
  int64_t n_;
};

class ModPredicate : public ValuePredicate {
 public:
  ModPredicate(int64_t divisor, int64_t remainder) : divisor_(divisor), remainder_(remainder) {}
  bool MatchesSingle(const Element& v) const override {
    if (!v.IsNumber()) return false;
    double d = v.NumberAsDouble();
    if (!std::isfinite(d)) return false;
    int64_t x = static_cast<int64_t>(std::trunc(d));
    return x % divisor_ == remainder_;
  }

 private:
  int64_t divisor_;
  int64_t remainder_;
};

// All of several predicates on the same value ({$gte: 1, $lt: 5}). Each
// operator fans out on its own, as MongoDB's separate path expressions do.
class AllOfPredicate : public ValuePredicate {
 public:
  std::vector<std::unique_ptr<ValuePredicate>> parts;
  bool MatchesSingle(const Element& v) const override {
    for (const auto& p : parts) {
      if (!MatchValue(v, *p)) return false;
    }
    return true;
  }
  bool FansOutOverArrays() const override { return false; }
};

class NotPredicate : public ValuePredicate {
 public:
  explicit NotPredicate(std::unique_ptr<ValuePredicate> inner) : inner_(std::move(inner)) {}
  bool MatchesSingle(const Element& v) const override { return !MatchValue(v, *inner_); }
  bool FansOutOverArrays() const override { return false; }

 private:
  std::unique_ptr<ValuePredicate> inner_;
};

class AllPredicate : public ValuePredicate {
 public:
  std::vector<std::unique_ptr<ValuePredicate>> required;
  bool MatchesSingle(const Element& v) const override {
    if (required.empty()) return false;
    for (const auto& r : required) {
      if (!MatchValue(v, *r)) return false;
    }
    return true;
  }
  bool FansOutOverArrays() const override { return false; }
};

class ElemMatchPredicate : public ValuePredicate {
 public:
  std::unique_ptr<Node> object_query;         // {$elemMatch: {a: 1}}
  std::unique_ptr<ValuePredicate> value_query;  // {$elemMatch: {$gt: 1}}
  bool MatchesSingle(const Element& v) const override {
    if (v.type() != BsonType::kArray) return false;
    for (Element item : v.Array()) {
      if (object_query) {
        if (item.type() == BsonType::kDocument && object_query->Matches(item.Document())) {
          return true;
        }
      } else if (value_query->MatchesSingle(item)) {
        return true;
      }
    }
    return false;
  }
  bool FansOutOverArrays() const override { return false; }
};

class PathNode : public Node {
 public:
  PathNode(std::string_view path, std::unique_ptr<ValuePredicate> pred)
      : parts_(SplitPath(path)), pred_(std::move(pred)) {}
  bool Matches(DocumentView doc) const override { return MatchPath(doc, parts_, 0, *pred_); }

 private:
  std::vector<std::string> parts_;
  std::unique_ptr<ValuePredicate> pred_;
};

enum class LogicalOp { kAnd, kOr, kNor };

class LogicalNode : public Node {
 public:
  explicit LogicalNode(LogicalOp op) : op_(op) {}
  std::vector<std::unique_ptr<Node>> children;
  bool Matches(DocumentView doc) const override {
    for (const auto& c : children) {
      bool m = c->Matches(doc);
      if (op_ == LogicalOp::kAnd && !m) return false;
      if (op_ != LogicalOp::kAnd && m) return op_ == LogicalOp::kOr;
    }
    return op_ != LogicalOp::kOr;
  }

 private:
  LogicalOp op_;
};

// Negation of a path predicate over the whole path ($ne, $nin, $not are
// "no value on the path matches", not "some value does not match").
class NotPathNode : public Node {
 public:
  explicit NotPathNode(std::unique_ptr<Node> inner) : inner_(std::move(inner)) {}
  bool Matches(DocumentView doc) const override { return !inner_->Matches(doc); }

 private:
  std::unique_ptr<Node> inner_;
};

StatusOr<std::unique_ptr<Node>> ParseQuery(DocumentView query);

StatusOr<std::unique_ptr<ValuePredicate>> EqualityPredicate(const Element& operand) {
  if (operand.type() == BsonType::kRegex) {
    ROCKDOC_ASSIGN_OR_RETURN(auto re, RegexPredicate::Make(operand.Regex().pattern,
                                                           operand.Regex().options));
    return std::unique_ptr<ValuePredicate>(std::move(re));
  }
  return std::unique_ptr<ValuePredicate>(
      std::make_unique<ComparisonPredicate>(CompareOp::kEq, operand));
}

StatusOr<std::unique_ptr<ValuePredicate>> ParseInList(const Element& list, std::string_view op) {
  if (list.type() != BsonType::kArray) {
    return Status(ErrorCode::kBadValue, std::string(op) + " needs an array");
  }
  auto in = std::make_unique<InPredicate>();
  for (Element item : list.Array()) {
    if (item.type() == BsonType::kDocument && !item.Document().empty() &&
        (*item.Document().begin()).key().substr(0, 1) == "$") {
      return Status(ErrorCode::kBadValue, "cannot nest $ under " + std::string(op));
    }
    ROCKDOC_ASSIGN_OR_RETURN(auto eq, EqualityPredicate(item));
    in->alternatives.push_back(std::move(eq));
  }
  return std::unique_ptr<ValuePredicate>(std::move(in));
}

bool IsOperatorDocument(const Element& v) {
  if (v.type() != BsonType::kDocument || v.Document().empty()) return false;
  return (*v.Document().begin()).key().substr(0, 1) == "$";
}

StatusOr<std::unique_ptr<ValuePredicate>> ParseOperators(DocumentView ops, bool* negated_out);

// One operator of an operator document. Sets *negate for $ne/$nin (the
// caller negates at the path level).
StatusOr<std::unique_ptr<ValuePredicate>> ParseOperator(const Element& op, DocumentView all,
                                                        bool* negate) {
  std::string_view name = op.key();
  *negate = false;
  auto cmp = [&](CompareOp c) -> StatusOr<std::unique_ptr<ValuePredicate>> {
    if (op.type() == BsonType::kRegex && c == CompareOp::kEq) return EqualityPredicate(op);
    return std::unique_ptr<ValuePredicate>(std::make_unique<ComparisonPredicate>(c, op));
  };
  if (name == "$eq") return cmp(CompareOp::kEq);
  if (name == "$lt") return cmp(CompareOp::kLt);
  if (name == "$lte") return cmp(CompareOp::kLte);
  if (name == "$gt") return cmp(CompareOp::kGt);
  if (name == "$gte") return cmp(CompareOp::kGte);
  if (name == "$ne") {
    if (op.type() == BsonType::kRegex) return Status(ErrorCode::kBadValue, "Can't have regex as arg to $ne.");
    *negate = true;
    return cmp(CompareOp::kEq);
  }
  if (name == "$in") return ParseInList(op, "$in");
  if (name == "$nin") {
    *negate = true;
    return ParseInList(op, "$nin");
  }
  if (name == "$exists") {
    bool want = op.type() == BsonType::kBool ? op.Bool()
                                              : (op.IsNumber() ? op.NumberAsDouble() != 0
                                                               : op.ok() && op.type() != BsonType::kNull);
    *negate = !want;
    return std::unique_ptr<ValuePredicate>(std::make_unique<ExistsPredicate>());
  }
  if (name == "$type") {
    auto tp = std::make_unique<TypePredicate>();
    auto add = [&](const Element& t) -> Status {
      if (t.type() == BsonType::kString) {
        if (t.String() == "number") {
          tp->any_number = true;
          return Status::OK();
        }
        for (int code = 1; code <= 0xFF; ++code) {
          if (IsValidBsonType(static_cast<uint8_t>(code)) &&
              BsonTypeAlias(static_cast<BsonType>(code)) == t.String()) {
            tp->types.push_back(static_cast<BsonType>(code));
            return Status::OK();
          }
        }
        return Status(ErrorCode::kBadValue, "Unknown type name alias: " + std::string(t.String()));
      }
      int64_t code;
      if (t.ExactInt64(&code)) {
        if (code == -1) code = 0xFF;
        if (code == 127) code = 0x7F;
        if (code >= 0 && code <= 0xFF && IsValidBsonType(static_cast<uint8_t>(code))) {
          tp->types.push_back(static_cast<BsonType>(code));
          return Status::OK();
        }
      }
      return Status(ErrorCode::kBadValue, "Invalid numerical type code: " + FormatValue(t));
    };
    if (op.type() == BsonType::kArray) {
      for (Element t : op.Array()) ROCKDOC_RETURN_IF_ERROR(add(t));
    } else {
      ROCKDOC_RETURN_IF_ERROR(add(op));
    }
    return std::unique_ptr<ValuePredicate>(std::move(tp));
  }
  if (name == "$size") {
    int64_t n;
    if (!op.ExactInt64(&n) || n < 0) {
      return Status(ErrorCode::kBadValue, "Failed to parse $size. Expected a non-negative integer");
    }
    return std::unique_ptr<ValuePredicate>(std::make_unique<SizePredicate>(n));
  }
  if (name == "$mod") {
    if (op.type() != BsonType::kArray) return Status(ErrorCode::kBadValue, "malformed mod, needs to be an array");
    std::vector<Element> args;
    for (Element a : op.Array()) args.push_back(a);
    int64_t d, r;
    if (args.size() != 2 || !args[0].ExactInt64(&d) || !args[1].ExactInt64(&r) || d == 0) {
      return Status(ErrorCode::kBadValue, "malformed mod, needs to be an array of two numbers with a non-zero divisor");
    }
    return std::unique_ptr<ValuePredicate>(std::make_unique<ModPredicate>(d, r));
  }
  if (name == "$all") {
    if (op.type() != BsonType::kArray) return Status(ErrorCode::kBadValue, "$all needs an array");
    auto all_pred = std::make_unique<AllPredicate>();
    for (Element item : op.Array()) {
      ROCKDOC_ASSIGN_OR_RETURN(auto eq, EqualityPredicate(item));
      all_pred->required.push_back(std::move(eq));
    }
    return std::unique_ptr<ValuePredicate>(std::move(all_pred));
  }
  if (name == "$elemMatch") {
    if (op.type() != BsonType::kDocument) return Status(ErrorCode::kBadValue, "$elemMatch needs an Object");
    auto em = std::make_unique<ElemMatchPredicate>();
    if (IsOperatorDocument(op) && (*op.Document().begin()).key() != "$and" &&
        (*op.Document().begin()).key() != "$or" && (*op.Document().begin()).key() != "$nor") {
      bool negated = false;
      ROCKDOC_ASSIGN_OR_RETURN(em->value_query, ParseOperators(op.Document(), &negated));
      if (negated) em->value_query = std::make_unique<NotPredicate>(std::move(em->value_query));
    } else {
      ROCKDOC_ASSIGN_OR_RETURN(em->object_query, ParseQuery(op.Document()));
    }
    return std::unique_ptr<ValuePredicate>(std::move(em));
  }
  if (name == "$not") {
    std::unique_ptr<ValuePredicate> inner;
    if (op.type() == BsonType::kRegex) {
      ROCKDOC_ASSIGN_OR_RETURN(inner, EqualityPredicate(op));
    } else if (op.type() == BsonType::kDocument && !op.Document().empty()) {
      bool negated = false;
      ROCKDOC_ASSIGN_OR_RETURN(inner, ParseOperators(op.Document(), &negated));
      if (negated) inner = std::make_unique<NotPredicate>(std::move(inner));
    } else {
      return Status(ErrorCode::kBadValue, "$not needs a regex or a document");
    }
    *negate = true;
    return inner;
  }
  if (name == "$regex") {
    std::string_view pattern, options;
    if (op.type() == BsonType::kRegex) {
      pattern = op.Regex().pattern;
      options = op.Regex().options;
    } else if (op.type() == BsonType::kString) {
      pattern = op.String();
    } else {
      return Status(ErrorCode::kBadValue, "$regex has to be a string");
    }
    Element opts = all.Get("$options");
    if (opts.type() == BsonType::kString) options = opts.String();
    ROCKDOC_ASSIGN_OR_RETURN(auto re, RegexPredicate::Make(pattern, options));
    return std::unique_ptr<ValuePredicate>(std::move(re));
  }
  return Status(ErrorCode::kBadValue, "unknown operator: " + std::string(name));
}

// An operator document as one predicate. *negated_out is set when the whole
// document is a single negation (so $elemMatch/$not can wrap it); otherwise
// negations are folded in as NotPredicate.
StatusOr<std::unique_ptr<ValuePredicate>> ParseOperators(DocumentView ops, bool* negated_out) {
  auto all = std::make_unique<AllOfPredicate>();
  *negated_out = false;
  for (Element op : ops) {
    if (op.key() == "$options") {
      if (!ops.Has("$regex")) return Status(ErrorCode::kBadValue, "$options needs a $regex");
      continue;
    }
    bool negate = false;
    ROCKDOC_ASSIGN_OR_RETURN(auto pred, ParseOperator(op, ops, &negate));
    if (negate) pred = std::make_unique<NotPredicate>(std::move(pred));
    all->parts.push_back(std::move(pred));
  }
  return std::unique_ptr<ValuePredicate>(std::move(all));
}

StatusOr<std::unique_ptr<Node>> ParsePathPredicate(std::string_view path, const Element& value) {
  auto and_node = std::make_unique<LogicalNode>(LogicalOp::kAnd);
  if (!IsOperatorDocument(value)) {
    ROCKDOC_ASSIGN_OR_RETURN(auto eq, EqualityPredicate(value));
    return std::unique_ptr<Node>(std::make_unique<PathNode>(path, std::move(eq)));
  }
  DocumentView ops = value.Document();
  for (Element op : ops) {
    if (op.key() == "$options") {
      if (!ops.Has("$regex")) return Status(ErrorCode::kBadValue, "$options needs a $regex");
      continue;
    }
    bool negate = false;
    ROCKDOC_ASSIGN_OR_RETURN(auto pred, ParseOperator(op, ops, &negate));
    std::unique_ptr<Node> node = std::make_unique<PathNode>(path, std::move(pred));
    if (negate) node = std::make_unique<NotPathNode>(std::move(node));
    and_node->children.push_back(std::move(node));
  }
  return std::unique_ptr<Node>(std::move(and_node));
}

StatusOr<std::unique_ptr<Node>> ParseQuery(DocumentView query) {
  auto root = std::make_unique<LogicalNode>(LogicalOp::kAnd);
  for (Element field : query) {
    std::string_view key = field.key();
    if (key == "$and" || key == "$or" || key == "$nor") {
      if (field.type() != BsonType::kArray || field.Array().empty()) {
        return Status(ErrorCode::kBadValue, std::string(key) + " must be a nonempty array");
      }
      auto node = std::make_unique<LogicalNode>(
          key == "$and" ? LogicalOp::kAnd : (key == "$or" ? LogicalOp::kOr : LogicalOp::kNor));
      for (Element clause : field.Array()) {
        if (clause.type() != BsonType::kDocument) {
          return Status(ErrorCode::kBadValue, "$or/$and/$nor entries need to be full objects");
        }
        ROCKDOC_ASSIGN_OR_RETURN(auto child, ParseQuery(clause.Document()));
        node->children.push_back(std::move(child));
      }
      root->children.push_back(std::move(node));
      continue;
    }
    if (key.substr(0, 1) == "$") {
      return Status(ErrorCode::kBadValue, "unknown top level operator: " + std::string(key));
    }
    ROCKDOC_ASSIGN_OR_RETURN(auto child, ParsePathPredicate(key, field));
    root->children.push_back(std::move(child));
  }
  return std::unique_ptr<Node>(std::move(root));
}

class InterimMatcher : public UpdateMatcher {
 public:
  explicit InterimMatcher(std::unique_ptr<Node> root) : root_(std::move(root)) {}
  bool Matches(DocumentView doc) const override { return root_->Matches(doc); }

 private:
  std::unique_ptr<Node> root_;
};

}  // namespace

StatusOr<std::unique_ptr<UpdateMatcher>> ParseUpdateMatcher(DocumentView query) {
  ROCKDOC_ASSIGN_OR_RETURN(auto root, ParseQuery(query));
  return std::unique_ptr<UpdateMatcher>(std::make_unique<InterimMatcher>(std::move(root)));
}

}  // namespace rockdoc::update_internal

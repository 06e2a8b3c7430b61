#include "query/projection.h"

#include <cmath>
#include <optional>
#include <utility>

namespace rockdoc {

struct Projection::Node {
  enum class Kind { kInner, kInclude, kExclude, kSlice, kElemMatch, kPositional };
  Kind kind = Kind::kInner;
  // Children of an inner node, in specification order.
  std::vector<std::pair<std::string, std::unique_ptr<Node>>> children;
  // True on the inner nodes leading to a positional node: the first array
  // met along them is where the matched position applies.
  bool on_positional_path = false;
  // $slice.
  std::optional<int32_t> skip;
  int32_t limit = 0;
  // $elemMatch: the parsed {field: {$elemMatch: ...}}.
  std::unique_ptr<MatchExpression> elem_match;

  Node* Find(std::string_view name) const {
    for (const auto& [key, child] : children) {
      if (key == name) return child.get();
    }
    return nullptr;
  }
};

namespace {

using Node = Projection::Node;
using Kind = Node::Kind;

Status Error(int code, std::string message) {
  return Status(static_cast<ErrorCode>(code), std::move(message));
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

std::string JoinTail(const std::vector<std::string_view>& parts, size_t from) {
  std::string out;
  for (size_t i = from; i < parts.size(); ++i) {
    if (i > from) out += '.';
    out += parts[i];
  }
  return out;
}

Status ValidatePath(const std::vector<std::string_view>& parts) {
  for (std::string_view p : parts) {
    if (p.empty()) return Error(15998, "FieldPath field names may not be empty strings.");
    if (p[0] == '$') {
      return Error(16410,
                   "FieldPath field names may not start with '$'. Consider using $getField or "
                   "$setField.");
    }
  }
  return Status::OK();
}

// Adds `leaf` at `path`, creating inner nodes, with MongoDB's collision
// errors when a path and one of its prefixes are both projected.
Status AddAtPath(Node* root, const std::string& path, std::unique_ptr<Node> leaf,
                 bool positional) {
  std::vector<std::string_view> parts = SplitPath(path);
  Node* node = root;
  for (size_t i = 0; i < parts.size(); ++i) {
    Node* child = node->Find(parts[i]);
    if (i + 1 == parts.size()) {
      if (child != nullptr) return Error(31250, "Path collision at " + path);
      node->children.emplace_back(std::string(parts[i]), std::move(leaf));
      return Status::OK();
    }
    if (child == nullptr) {
      auto inner = std::make_unique<Node>();
      child = inner.get();
      node->children.emplace_back(std::string(parts[i]), std::move(inner));
    } else if (child->kind != Kind::kInner) {
      return Error(31249, "Path collision at " + path + " remaining portion " +
                              JoinTail(parts, i + 1));
    }
    if (positional) child->on_positional_path = true;
    node = child;
  }
  return Status::OK();
}

bool Truthy(const Element& e) {
  switch (e.type()) {
    case BsonType::kBool: return e.Bool();
    case BsonType::kDecimal128: return !e.Decimal().IsZero();
    default: return e.NumberAsDouble() != 0 || std::isnan(e.NumberAsDouble());
  }
}

// numberInt(): truncation, saturating at the int32 range.
int32_t NumberInt(const Element& e) {
  if (e.type() == BsonType::kInt32) return e.Int32();
  double d = e.NumberAsDouble();
  if (std::isnan(d)) return 0;
  if (d >= 2147483647.0) return 2147483647;
  if (d <= -2147483648.0) return -2147483647 - 1;
  return static_cast<int32_t>(d);
}

// Whether `query` tests a path whose first component is `field`: MongoDB's
// hasPositionalOperatorMatch, which "a.$" needs to know which array the
// query's matched position belongs to.
bool QueryTestsField(const MatchExpression& query, std::string_view field) {
  if (query.is_logical()) {
    for (size_t i = 0; i < query.num_children(); ++i) {
      if (QueryTestsField(*query.child(i), field)) return true;
    }
    return false;
  }
  std::string_view path = query.path();
  return !path.empty() && path.substr(0, path.find('.')) == field;
}

class Parser {
 public:
  Parser(Node* root, const MatchExpression* query) : root_(root), query_(query) {}

  Status ParseField(const std::string& name, const Element& value) {
    if (name == "_id" || name.rfind("_id.", 0) == 0) id_specified_ = true;
    // The positional operator: "a.$" (MongoDB also accepts and ignores a
    // tail after "a.$.", which it otherwise forbids).
    std::optional<std::string> positional_path;
    std::string_view after_positional;
    size_t mid = name.find(".$.");
    if (mid != std::string::npos) {
      positional_path = name.substr(0, mid);
      after_positional = std::string_view(name).substr(mid + 3);
    } else if (name.size() >= 2 && name.compare(name.size() - 2, 2, ".$") == 0) {
      positional_path = name.substr(0, name.size() - 2);
    }
    std::vector<std::string_view> parts = SplitPath(positional_path ? *positional_path : name);
    ROCKDOC_RETURN_IF_ERROR(ValidatePath(parts));

    if (value.type() == BsonType::kDocument) {
      if (positional_path) {
        return Error(31271, "positional projection cannot be used with an expression");
      }
      DocumentView sub = value.Document();
      if (sub.empty()) {
        return Error(51270, "An empty sub-projection is not a valid value. Found empty object at "
                            "path " + name);
      }
      const Element first = *sub.begin();
      // As MongoDB: only an object of exactly one `$` field is an operator;
      // any other object is a sub-projection, where a `$` name is refused
      // (16410), so {a: {$slice: 1, x: 1}} is an error, never its first key.
      if (sub.CountFields() == 1 && !first.key().empty() && first.key()[0] == '$') {
        if (first.key() == "$slice") return ParseSlice(name, first);
        if (first.key() == "$elemMatch") return ParseElemMatch(name, value, first);
        return Status(ErrorCode::kNotImplemented,
                      "projection expressions (" + std::string(first.key()) +
                          ") are not supported by rockdoc");
      }
      // {a: {b: 1}} is {"a.b": 1}.
      for (const Element& e : sub) {
        ROCKDOC_RETURN_IF_ERROR(ParseField(name + "." + std::string(e.key()), e));
      }
      return Status::OK();
    }
    if (!value.IsNumber() && value.type() != BsonType::kBool) {
      return Status(ErrorCode::kNotImplemented,
                    "projection values other than numbers and booleans (literals) are not "
                    "supported by rockdoc: " + name);
    }
    if (Truthy(value)) {
      if (positional_path) {
        if (has_positional_) {
          return Error(31276, "Cannot specify more than one positional projection per query.");
        }
        if (has_elem_match_) {
          return Error(31256, "Cannot specify positional operator and $elemMatch.");
        }
        // Without a query that tests this array, the matched position would
        // belong to another one: MongoDB refuses rather than guess.
        if (query_ != nullptr && !QueryTestsField(*query_, name.substr(0, name.find('.')))) {
          return Error(31277, "Positional projection '" + name +
                                  "' does not match the query document.");
        }
        if (name.size() >= 3 && name.compare(name.size() - 3, 3, ".$.") == 0) {
          return Error(31270, "Path cannot end with '.$.'");
        }
        if (after_positional == "$" || after_positional.find(".$.") != std::string::npos ||
            (after_positional.size() >= 2 &&
             after_positional.substr(after_positional.size() - 2) == ".$")) {
          return Error(31287, "Cannot use positional operator twice: " + name);
        }
        auto leaf = std::make_unique<Node>();
        leaf->kind = Kind::kPositional;
        ROCKDOC_RETURN_IF_ERROR(AddAtPath(root_, *positional_path, std::move(leaf), true));
        has_positional_ = true;
        simple_ = false;
        required_.push_back(*positional_path);
      } else {
        auto leaf = std::make_unique<Node>();
        leaf->kind = Kind::kInclude;
        ROCKDOC_RETURN_IF_ERROR(AddAtPath(root_, name, std::move(leaf), false));
        if (parts.size() > 1) simple_ = false;
        required_.push_back(name);
      }
      if (type_ && *type_ != Projection::Type::kInclusion) {
        return Error(31253, "Cannot do inclusion on field " + name + " in exclusion projection");
      }
      type_ = Projection::Type::kInclusion;
      return Status::OK();
    }
    // "a.$": 0 excludes nothing MongoDB can name: "$" is not a field.
    if (positional_path) ROCKDOC_RETURN_IF_ERROR(ValidatePath(SplitPath(name)));
    auto leaf = std::make_unique<Node>();
    leaf->kind = Kind::kExclude;
    ROCKDOC_RETURN_IF_ERROR(AddAtPath(root_, name, std::move(leaf), false));
    if (parts.size() > 1) simple_ = false;
    if (name == "_id") {
      id_excluded_ = true;
    } else {
      if (type_ && *type_ != Projection::Type::kExclusion) {
        return Error(31254, "Cannot do exclusion on field " + name + " in inclusion projection");
      }
      type_ = Projection::Type::kExclusion;
    }
    return Status::OK();
  }

  Status ParseSlice(const std::string& name, const Element& arg) {
    auto leaf = std::make_unique<Node>();
    leaf->kind = Kind::kSlice;
    if (arg.IsNumber()) {
      leaf->limit = NumberInt(arg);
    } else if (arg.type() == BsonType::kArray) {
      std::vector<Element> items(arg.Array().begin(), arg.Array().end());
      if (items.size() != 2) {
        return Error(31272, "$slice array argument should be of form [skip, limit]");
      }
      if (!items[0].IsNumber()) {
        return Error(31257, "$slice expects the skip argument to be a number, got " +
                                std::string(BsonTypeAlias(items[0].type())));
      }
      if (!items[1].IsNumber()) {
        return Error(31258, "$slice expects the limit argument to be a number, got " +
                                std::string(BsonTypeAlias(items[1].type())));
      }
      int32_t limit = NumberInt(items[1]);
      if (limit <= 0) {
        return Error(31259, "$slice limit must be positive, got " + std::to_string(limit));
      }
      leaf->skip = NumberInt(items[0]);
      leaf->limit = limit;
    } else {
      return Error(31273, "$slice only supports numbers and [skip, limit] arrays");
    }
    ROCKDOC_RETURN_IF_ERROR(AddAtPath(root_, name, std::move(leaf), false));
    has_slice_ = true;
    simple_ = false;
    required_.push_back(name);
    return Status::OK();
  }

  Status ParseElemMatch(const std::string& name, const Element& whole, const Element& arg) {
    if (arg.type() != BsonType::kDocument) {
      return Error(31274, "elemMatch: Invalid argument, object required, but got " +
                              std::string(BsonTypeAlias(arg.type())));
    }
    if (has_positional_) return Error(31255, "Cannot specify positional operator and $elemMatch.");
    if (name.find('.') != std::string::npos) {
      return Error(31275, "Cannot use $elemMatch projection on a nested field.");
    }
    BsonBuilder b;
    b.OpenDocument(name).AppendElement(arg).Close();
    ROCKDOC_ASSIGN_OR_RETURN(auto expr, ParseMatchExpression(std::move(b).Build()));
    (void)whole;
    auto leaf = std::make_unique<Node>();
    leaf->kind = Kind::kElemMatch;
    leaf->elem_match = std::move(expr);
    ROCKDOC_RETURN_IF_ERROR(AddAtPath(root_, name, std::move(leaf), false));
    has_elem_match_ = true;
    simple_ = false;
    required_.push_back(name);
    return Status::OK();
  }

  // find()'s defaults when only $slice / $elemMatch were given.
  Projection::Type FinalType() const {
    if (type_) return *type_;
    if (has_slice_) return Projection::Type::kExclusion;
    if (has_elem_match_) return Projection::Type::kInclusion;
    return Projection::Type::kExclusion;
  }

  bool id_specified_ = false;
  bool id_excluded_ = false;
  bool has_positional_ = false;
  bool has_elem_match_ = false;
  bool has_slice_ = false;
  bool simple_ = true;
  std::optional<Projection::Type> type_;
  std::vector<std::string> required_;

 private:
  Node* root_;
  const MatchExpression* query_;  // may be null: positional checked on Apply
};

// ---------------------------------------------------------------------------
// Application

class Applier {
 public:
  Applier(Projection::Type type, const MatchDetails* details) : type_(type), details_(details) {}

  Status ApplyDocument(const Node& node, DocumentView doc, BsonBuilder* out, bool top,
                       bool positional_done) {
    std::vector<std::pair<const Node*, Element>> deferred;  // $elemMatch fields go last
    for (const Element& f : doc) {
      const Node* child = node.Find(f.key());
      if (child == nullptr) {
        if (type_ == Projection::Type::kExclusion) out->AppendElement(f);
        continue;
      }
      switch (child->kind) {
        case Kind::kInclude:
          out->AppendElement(f);
          break;
        case Kind::kExclude:
          break;
        case Kind::kSlice:
          AppendSliced(*child, f, out);
          break;
        case Kind::kElemMatch:
          if (top) deferred.emplace_back(child, f);
          break;
        case Kind::kPositional:
        case Kind::kInner:
          ROCKDOC_RETURN_IF_ERROR(ApplyInner(*child, f, out, positional_done));
          break;
      }
    }
    for (const auto& [child, f] : deferred) AppendElemMatch(*child, f, out);
    return Status::OK();
  }

 private:
  Status ApplyInner(const Node& child, const Element& f, BsonBuilder* out, bool positional_done) {
    const bool positional_here = !positional_done && (child.kind == Kind::kPositional ||
                                                      child.on_positional_path);
    if (f.type() == BsonType::kArray && positional_here) {
      if (details_ == nullptr || !details_->has_elem_match_key()) {
        return Error(51246,
                     "positional operator '.$' couldn't find a matching element in the array");
      }
      Element chosen;
      for (const Element& e : f.Array()) {
        if (e.key() == std::to_string(details_->elem_match_key())) {
          chosen = e;
          break;
        }
      }
      if (!chosen.ok()) {
        return Error(51246,
                     "positional operator '.$' element mismatch: the matched position is past "
                     "the end of the array");
      }
      out->OpenArray(f.key());
      if (child.kind == Kind::kPositional) {
        out->AppendElementAs("", chosen);
      } else {
        ROCKDOC_RETURN_IF_ERROR(ApplyValue(child, chosen, out, /*positional_done=*/true));
      }
      out->Close();
      return Status::OK();
    }
    if (child.kind == Kind::kPositional) {
      // Not an array: nothing to select, the value is kept as a whole.
      out->AppendElement(f);
      return Status::OK();
    }
    if (f.type() == BsonType::kDocument) {
      out->OpenDocument(f.key());
      ROCKDOC_RETURN_IF_ERROR(ApplyDocument(child, f.Document(), out, false, positional_done));
      out->Close();
    } else if (f.type() == BsonType::kArray) {
      out->OpenArray(f.key());
      ROCKDOC_RETURN_IF_ERROR(ApplyArray(child, f.Array(), out, positional_done));
      out->Close();
    } else if (type_ == Projection::Type::kExclusion) {
      out->AppendElement(f);  // a scalar where the path continues: untouched
    }
    return Status::OK();
  }

  // One array element (or chosen positional element) under an inner node.
  Status ApplyValue(const Node& node, const Element& e, BsonBuilder* out, bool positional_done) {
    if (e.type() == BsonType::kDocument) {
      out->OpenDocument("");
      ROCKDOC_RETURN_IF_ERROR(ApplyDocument(node, e.Document(), out, false, positional_done));
      out->Close();
    } else if (e.type() == BsonType::kArray) {
      out->OpenArray("");
      ROCKDOC_RETURN_IF_ERROR(ApplyArray(node, e.Array(), out, positional_done));
      out->Close();
    } else if (type_ == Projection::Type::kExclusion) {
      out->AppendElementAs("", e);  // inclusion drops scalars inside arrays
    }
    return Status::OK();
  }

  Status ApplyArray(const Node& node, DocumentView array, BsonBuilder* out,
                    bool positional_done) {
    for (const Element& e : array) {
      ROCKDOC_RETURN_IF_ERROR(ApplyValue(node, e, out, positional_done));
    }
    return Status::OK();
  }

  void AppendSliced(const Node& node, const Element& f, BsonBuilder* out) {
    if (f.type() != BsonType::kArray) {
      out->AppendElement(f);
      return;
    }
    const int64_t size = static_cast<int64_t>(f.Array().CountFields());
    int64_t start, count;
    if (!node.skip) {
      if (node.limit >= 0) {
        start = 0;
        count = node.limit;
      } else {
        start = std::max<int64_t>(0, size + node.limit);
        count = size - start;
      }
    } else {
      start = *node.skip >= 0 ? *node.skip : std::max<int64_t>(0, size + *node.skip);
      count = node.limit;
    }
    out->OpenArray(f.key());
    int64_t i = 0;
    for (const Element& e : f.Array()) {
      if (i >= start && i < start + count) out->AppendElementAs("", e);
      ++i;
    }
    out->Close();
  }

  void AppendElemMatch(const Node& node, const Element& f, BsonBuilder* out) {
    if (f.type() != BsonType::kArray) return;
    MatchDetails d;
    d.RequestElemMatchKey();
    if (!node.elem_match->MatchesSingleElement(f, &d) || !d.has_elem_match_key()) return;
    size_t i = 0;
    for (const Element& e : f.Array()) {
      if (i++ == d.elem_match_key()) {
        out->OpenArray(f.key());
        out->AppendElementAs("", e);
        out->Close();
        return;
      }
    }
  }

  Projection::Type type_;
  const MatchDetails* details_;
};

}  // namespace

StatusOr<Projection> Projection::Parse(DocumentView spec, const MatchExpression* query) {
  auto root = std::make_shared<Node>();
  Parser parser(root.get(), query);
  for (const Element& e : spec) {
    ROCKDOC_RETURN_IF_ERROR(parser.ParseField(std::string(e.key()), e));
  }
  Projection p;
  p.type_ = parser.FinalType();
  if (p.type_ == Type::kInclusion && !parser.id_specified_) {
    auto leaf = std::make_unique<Node>();
    leaf->kind = Kind::kInclude;
    root->children.insert(root->children.begin(), {"_id", std::move(leaf)});
    parser.required_.insert(parser.required_.begin(), "_id");
  }
  p.includes_id_ = !parser.id_excluded_ &&
                   (p.type_ == Type::kExclusion || root->Find("_id") != nullptr);
  p.simple_ = parser.simple_;
  p.positional_ = parser.has_positional_;
  if (p.type_ == Type::kInclusion) {
    // `_id: 0` in an inclusion projection is not a needed path.
    for (const std::string& path : parser.required_) {
      if (path == "_id" && parser.id_excluded_) continue;
      p.required_paths_.push_back(path);
    }
  }
  p.root_ = std::move(root);
  return p;
}

StatusOr<Document> Projection::Apply(DocumentView doc, const MatchDetails* details) const {
  BsonBuilder out;
  Applier applier(type_, details);
  ROCKDOC_RETURN_IF_ERROR(applier.ApplyDocument(*root_, doc, &out, /*top=*/true,
                                                /*positional_done=*/false));
  return std::move(out).Build();
}

}  // namespace rockdoc

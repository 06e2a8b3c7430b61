// UpdateDriver: parses an update into a tree of paths with operator leaves,
// then walks the tree and the document together.
//
// The update tree mirrors MongoDB's UpdateObjectNode / UpdateArrayNode: one
// node per path component, children ordered as MongoDB 5.0 applies them
// (numeric names numerically, others lexicographically, which is also the
// order new fields are created in). A node has concrete field children and a
// positional `$` child, or else `$[]` / `$[id]` children (mixing them is a
// conflict, as in MongoDB). Two operators on paths where one is a prefix of
// the other meet at a node that has both a leaf and children: the conflict
// is found while building the tree, before any document is seen.
#include "query/update/update_driver.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>

#include "query/expr_match_expression.h"
#include "query/expression/document_transform.h"
#include "query/match_expression.h"
#include "query/update/modifier_nodes.h"
#include "query/update/mutable_document.h"
#include "query/update/update_matcher.h"

namespace rockdoc {

using update_internal::ApplyParams;
using update_internal::ApplyState;
using update_internal::FormatElement;
using update_internal::FormatValue;
using update_internal::LeafOutcome;
using update_internal::ModifierNode;
using update_internal::MutableNode;
using update_internal::ParseArrayIndex;
using update_internal::RenameNode;
using update_internal::UpdateMatcher;

namespace {

// MongoDB caps how far an update may pad an array with nulls.
constexpr size_t kMaxPaddingAllowed = 1500000;

bool IsNumericName(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// MongoDB 5.0's application order of sibling fields.
struct FieldOrder {
  bool operator()(const std::string& a, const std::string& b) const {
    if (IsNumericName(a) && IsNumericName(b)) {
      std::string_view x = a, y = b;
      x.remove_prefix(std::min(x.find_first_not_of('0'), x.size()));
      y.remove_prefix(std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
    }
    return a < b;
  }
};

enum class PartKind { kField, kPositional, kAllPositional, kFilter };

struct PathPart {
  PartKind kind;
  std::string name;  // the field name, or the identifier of $[identifier]
};

struct TrieNode {
  std::string path;  // as written in the update ("a.$[x].b"), for messages
  std::unique_ptr<ModifierNode> leaf;
  std::map<std::string, std::unique_ptr<TrieNode>, FieldOrder> fields;
  std::unique_ptr<TrieNode> positional;
  // "" for $[], the identifier for $[identifier].
  std::map<std::string, std::unique_ptr<TrieNode>> array_children;
  // Pairs of array children whose subtrees reach a common path: applying
  // both to one element is a conflict at `relative_path` below it.
  struct ArrayConflict {
    std::string a, b, relative_path;
  };
  std::vector<ArrayConflict> array_conflicts;

  bool HasChildren() const {
    return !fields.empty() || positional != nullptr || !array_children.empty();
  }
};

Status ConflictError(std::string_view path, std::string_view at) {
  return Status(ErrorCode::kConflictingUpdateOperators,
                "Updating the path '" + std::string(path) + "' would create a conflict at '" +
                    std::string(at) + "'");
}

std::string FormatDocument(DocumentView doc) {
  BsonBuilder b;
  b.AppendDocument("", doc);
  Document wrapper = std::move(b).Build();
  return FormatValue(*wrapper.view().begin());
}

Status ParsePath(std::string_view path, std::vector<PathPart>* parts) {
  if (path.empty()) return Status(ErrorCode::kEmptyFieldName, "An empty update path is not valid.");
  parts->clear();
  int positional = 0;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string_view part = path.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty()) {
      return Status(ErrorCode::kEmptyFieldName,
                    "The update path '" + std::string(path) +
                        "' contains an empty field name, which is not allowed.");
    }
    if (part == "$") {
      parts->push_back({PartKind::kPositional, "$"});
      ++positional;
    } else if (part == "$[]") {
      parts->push_back({PartKind::kAllPositional, ""});
    } else if (part.size() > 3 && part.substr(0, 2) == "$[" && part.back() == ']') {
      parts->push_back({PartKind::kFilter, std::string(part.substr(2, part.size() - 3))});
    } else {
      parts->push_back({PartKind::kField, std::string(part)});
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (positional > 1) {
    return Status(ErrorCode::kBadValue, "Too many positional (i.e. '$') elements found in path '" +
                                            std::string(path) + "'");
  }
  if (parts->front().kind == PartKind::kPositional) {
    return Status(ErrorCode::kBadValue,
                  "Cannot have positional (i.e. '$') element in the first position in path '" +
                      std::string(path) + "'");
  }
  if (parts->front().kind != PartKind::kField) {
    return Status(ErrorCode::kBadValue,
                  "Cannot have array filter identifier (i.e. '$[<id>]') element in the first "
                  "position in path '" +
                      std::string(path) + "'");
  }
  return Status::OK();
}

std::string PartText(const PathPart& p) {
  switch (p.kind) {
    case PartKind::kField: return p.name;
    case PartKind::kPositional: return "$";
    case PartKind::kAllPositional: return "$[]";
    case PartKind::kFilter: return "$[" + p.name + "]";
  }
  return p.name;
}

Status InsertLeaf(TrieNode* root, const std::vector<PathPart>& parts, std::string_view full_path,
                  std::unique_ptr<ModifierNode> leaf) {
  TrieNode* node = root;
  for (const PathPart& part : parts) {
    if (node->leaf) return ConflictError(full_path, node->path);
    const bool array_part = part.kind == PartKind::kAllPositional || part.kind == PartKind::kFilter;
    if (array_part && (!node->fields.empty() || node->positional)) {
      return ConflictError(full_path, node->path);
    }
    if (!array_part && !node->array_children.empty()) return ConflictError(full_path, node->path);
    std::unique_ptr<TrieNode>* slot;
    switch (part.kind) {
      case PartKind::kField: slot = &node->fields[part.name]; break;
      case PartKind::kPositional: slot = &node->positional; break;
      default: slot = &node->array_children[part.name]; break;
    }
    if (*slot == nullptr) {
      *slot = std::make_unique<TrieNode>();
      (*slot)->path = node->path.empty() ? PartText(part) : node->path + "." + PartText(part);
    }
    node = slot->get();
  }
  if (node->leaf || node->HasChildren()) return ConflictError(full_path, node->path);
  node->leaf = std::move(leaf);
  return Status::OK();
}

// Leaf paths of a subtree, relative to it, with every $[...] as "$[]" (two
// array parts may reach the same element, so they are compared as equal).
void CollectLeafPaths(const TrieNode& node, const std::string& prefix, std::vector<std::string>* out) {
  if (node.leaf) out->push_back(prefix);
  auto join = [&](const std::string& part) { return prefix.empty() ? part : prefix + "." + part; };
  for (const auto& [name, child] : node.fields) CollectLeafPaths(*child, join(name), out);
  if (node.positional) CollectLeafPaths(*node.positional, join("$"), out);
  for (const auto& [id, child] : node.array_children) CollectLeafPaths(*child, join("$[]"), out);
}

bool IsPathPrefix(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return true;  // the element itself
  if (a.size() > b.size()) std::swap(a, b);
  return b.substr(0, a.size()) == a && (b.size() == a.size() || b[a.size()] == '.');
}

void ComputeArrayConflicts(TrieNode* node) {
  for (auto& [name, child] : node->fields) ComputeArrayConflicts(child.get());
  if (node->positional) ComputeArrayConflicts(node->positional.get());
  for (auto& [id, child] : node->array_children) ComputeArrayConflicts(child.get());
  if (node->array_children.size() < 2) return;
  std::vector<std::pair<std::string, std::vector<std::string>>> leaves;
  for (auto& [id, child] : node->array_children) {
    std::vector<std::string> paths;
    CollectLeafPaths(*child, "", &paths);
    leaves.emplace_back(id, std::move(paths));
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    for (size_t j = i + 1; j < leaves.size(); ++j) {
      for (const std::string& p : leaves[i].second) {
        auto hit = std::find_if(leaves[j].second.begin(), leaves[j].second.end(),
                                [&](const std::string& q) { return IsPathPrefix(p, q); });
        if (hit == leaves[j].second.end()) continue;
        const std::string& shorter = p.size() <= hit->size() ? p : *hit;
        node->array_conflicts.push_back({leaves[i].first, leaves[j].first, shorter});
        break;
      }
    }
  }
}

bool IsValidIdentifier(std::string_view id) {
  if (id.empty() || !(id[0] >= 'a' && id[0] <= 'z')) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

// The identifiers named by an array filter's top-level paths.
void CollectFilterIds(DocumentView filter, std::vector<std::string>* ids) {
  for (Element e : filter) {
    std::string_view key = e.key();
    if ((key == "$and" || key == "$or" || key == "$nor") && e.type() == BsonType::kArray) {
      for (Element clause : e.Array()) {
        if (clause.type() == BsonType::kDocument) CollectFilterIds(clause.Document(), ids);
      }
      continue;
    }
    std::string id(key.substr(0, key.find('.')));
    if (std::find(ids->begin(), ids->end(), id) == ids->end()) ids->push_back(id);
  }
}

}  // namespace

struct UpdateDriver::Impl {
  Document update;
  bool replacement = false;
  // An update pipeline: its stages, and the $let variables they declare.
  bool is_pipeline = false;
  std::vector<std::unique_ptr<internal::DocumentTransform>> pipeline;
  int pipeline_variables = 0;
  std::vector<Value> let_values;  // the command's let, by id
  bool uses_positional = false;
  TrieNode root;
  // A deque: matchers view into these documents, which must never move.
  std::deque<Document> filter_docs;
  std::map<std::string, std::unique_ptr<UpdateMatcher>> filters;
  std::vector<const RenameNode*> renames;
};

namespace {

// One Apply of a modifier update.
class Applier {
 public:
  Applier(const std::map<std::string, std::unique_ptr<UpdateMatcher>>& filters, ApplyState* state,
          const UpdateContext& ctx, std::vector<std::string>* changed)
      : filters_(filters), state_(state), ctx_(ctx), changed_(changed) {}

  // Applies `t`'s children to the expanded container (the node reached by
  // `path`, named `container_key` in its parent).
  Status ApplyChildren(MutableNode* container, std::string_view container_key, const TrieNode& t,
                       std::string* path) {
    const bool is_array = container->type() == BsonType::kArray;
    for (const auto& [name, child] : t.fields) {
      size_t index;
      if (is_array && !ParseArrayIndex(name, &index)) {
        if (!SubtreeCreates(*child)) continue;
        return Status(ErrorCode::kPathNotViable,
                      "Cannot create field '" + name + "' in element {" +
                          FormatElement(container_key, container->AsElement(&state_->arena)) + "}");
      }
      ROCKDOC_RETURN_IF_ERROR(ApplyAt(container, name, *child, path));
    }
    if (t.positional) {
      if (!ctx_.positional_index) {
        return Status(ErrorCode::kBadValue,
                      "The positional operator did not find the match needed from the query.");
      }
      const std::string& key = state_->keys.emplace_back(std::to_string(*ctx_.positional_index));
      if (t.fields.count(key) != 0) {
        return Status(ErrorCode::kConflictingUpdateOperators,
                      "Update created a conflict at '" + Join(*path, key) + "'");
      }
      ROCKDOC_RETURN_IF_ERROR(ApplyAt(container, key, *t.positional, path));
    }
    return Status::OK();
  }

 private:
  static std::string Join(std::string_view a, std::string_view b) {
    if (a.empty()) return std::string(b);
    if (b.empty()) return std::string(a);
    std::string s(a);
    s.push_back('.');
    s.append(b);
    return s;
  }

  Status ApplyAt(MutableNode* container, std::string_view key, const TrieNode& t,
                 std::string* path) {
    const size_t restore = path->size();
    if (!path->empty()) path->push_back('.');
    // An array position is recorded in its canonical form ("a.01" changes
    // "a.1"), so that changed paths compare with index paths by name.
    size_t index = 0;
    if (container->type() == BsonType::kArray && ParseArrayIndex(key, &index)) {
      path->append(std::to_string(index));
    } else {
      path->append(key);
    }
    Status s = ApplyAtPath(container, key, t, path);
    path->resize(restore);
    return s;
  }

  MutableNode* Lookup(MutableNode* container, std::string_view key, size_t* position) {
    auto& children = container->children();
    if (container->type() == BsonType::kArray) {
      size_t index;
      if (!ParseArrayIndex(key, &index) || index >= children.size()) return nullptr;
      *position = index;
      return &children[index];
    }
    for (size_t i = 0; i < children.size(); ++i) {
      if (children[i].key() == key) {
        *position = i;
        return &children[i];
      }
    }
    return nullptr;
  }

  // Appends a new child named `key` (documents) or at position `key`
  // (arrays, padding with nulls). Precondition for arrays: `key` is an index.
  StatusOr<MutableNode*> CreateChild(MutableNode* container, std::string_view key,
                                     MutableNode node) {
    auto& children = container->children();
    if (container->type() == BsonType::kArray) {
      size_t index = 0;
      ParseArrayIndex(key, &index);
      if (index > children.size() && index - children.size() > kMaxPaddingAllowed) {
        return Status(ErrorCode::kCannotBackfillArray,
                      "can't backfill more than " + std::to_string(kMaxPaddingAllowed) +
                          " elements");
      }
      Element null_value = state_->arena.Null();
      while (children.size() < index) children.emplace_back(std::string_view(), null_value);
      node.set_key(std::string_view());
    } else {
      node.set_key(key);
    }
    children.push_back(std::move(node));
    return &children.back();
  }

  Status ApplyAtPath(MutableNode* container, std::string_view key, const TrieNode& t,
                     std::string* path) {
    size_t position = 0;
    MutableNode* target = Lookup(container, key, &position);
    ApplyParams params{state_, *path, key, container->type() == BsonType::kArray};
    if (t.leaf) {
      if (target != nullptr) {
        LeafOutcome outcome;
        ROCKDOC_RETURN_IF_ERROR(t.leaf->UpdateExisting(target, params, &outcome));
        if (outcome.changed) ROCKDOC_RETURN_IF_ERROR(RecordChange(*path));
        if (outcome.remove) container->children().erase(container->children().begin() + position);
        return Status::OK();
      }
      if (!t.leaf->ShouldCreate(*state_)) return Status::OK();
      ROCKDOC_ASSIGN_OR_RETURN(MutableNode * fresh, CreateChild(container, key, MutableNode()));
      ROCKDOC_RETURN_IF_ERROR(t.leaf->CreateValue(fresh, params));
      return RecordChange(*path);
    }
    if (target != nullptr) {
      if (!t.array_children.empty()) {
        if (target->type() != BsonType::kArray) {
          return Status(ErrorCode::kBadValue,
                        "Cannot apply array updates to non-array element " +
                            FormatElement(key, target->AsElement(&state_->arena)));
        }
        target->Expand();
        return ApplyArray(target, t, path);
      }
      if (target->IsContainer()) {
        target->Expand();
        return ApplyChildren(target, key, t, path);
      }
      std::string blocked = FirstCreatingChild(t);
      if (blocked.empty()) return Status::OK();  // e.g. $unset below a scalar: nothing to do
      return Status(ErrorCode::kPathNotViable,
                    "Cannot create field '" + blocked + "' in element {" +
                        FormatElement(key, target->AsElement(&state_->arena)) + "}");
    }
    if (!t.array_children.empty()) {
      return Status(ErrorCode::kBadValue, "The path '" + *path +
                                              "' must exist in the document in order to apply "
                                              "array updates.");
    }
    if (!SubtreeCreates(t)) return Status::OK();
    ROCKDOC_ASSIGN_OR_RETURN(
        MutableNode * fresh,
        CreateChild(container, key, MutableNode::NewContainer(key, BsonType::kDocument)));
    ROCKDOC_RETURN_IF_ERROR(ApplyChildren(fresh, key, t, path));
    // A new array element (and the nulls padding up to it) is a change of
    // its own: an index on a sibling path ("a.c" when "a.4.b" is created)
    // sees one more value there.
    if (container->type() == BsonType::kArray) return RecordChange(*path);
    return Status::OK();
  }

  Status ApplyArray(MutableNode* array, const TrieNode& t, std::string* path) {
    const size_t n = array->children().size();
    std::vector<const std::string*> matching;
    for (size_t i = 0; i < n; ++i) {
      matching.clear();
      Document wrapped;
      for (const auto& [id, child] : t.array_children) {
        if (id.empty()) {
          matching.push_back(&id);
          continue;
        }
        // An array filter {"x.grade": ...} is a query over {x: <element>}.
        BsonBuilder b;
        b.AppendElementAs(id, array->children()[i].AsElement(&state_->arena));
        wrapped = std::move(b).Build();
        if (filters_.at(id)->Matches(wrapped.view())) matching.push_back(&id);
      }
      const std::string index = std::to_string(i);
      if (matching.size() > 1) {
        for (const auto& conflict : t.array_conflicts) {
          auto has = [&](const std::string& id) {
            return std::any_of(matching.begin(), matching.end(),
                               [&](const std::string* m) { return *m == id; });
          };
          if (has(conflict.a) && has(conflict.b)) {
            std::string at = Join(Join(*path, index), conflict.relative_path);
            return Status(ErrorCode::kConflictingUpdateOperators,
                          "Update created a conflict at '" + at + "'");
          }
        }
      }
      for (const std::string* id : matching) {
        ROCKDOC_RETURN_IF_ERROR(
            ApplyAt(array, index, *t.array_children.at(*id), path));
      }
    }
    return Status::OK();
  }

  bool SubtreeCreates(const TrieNode& t) const {
    if (t.leaf) return t.leaf->ShouldCreate(*state_);
    for (const auto& [name, child] : t.fields) {
      if (SubtreeCreates(*child)) return true;
    }
    if (t.positional && SubtreeCreates(*t.positional)) return true;
    // Array updates below a missing path are an error whatever they do, so
    // walking on must reach them.
    return !t.array_children.empty();
  }

  std::string FirstCreatingChild(const TrieNode& t) const {
    for (const auto& [name, child] : t.fields) {
      if (SubtreeCreates(*child)) return name;
    }
    if (t.positional && SubtreeCreates(*t.positional) && ctx_.positional_index) {
      return std::to_string(*ctx_.positional_index);
    }
    return "";
  }

  Status RecordChange(const std::string& path) {
    std::string_view first = std::string_view(path).substr(0, path.find('.'));
    if (first == "_id" && state_->original.Has("_id")) {
      return Status(ErrorCode::kImmutableField, "Performing an update on the path '" + path +
                                                    "' would modify the immutable field '_id'");
    }
    if (!first.empty() && first[0] == '$' && !state_->is_upsert_insert) {
      return Status(ErrorCode::kDollarPrefixedFieldName,
                    "The dollar ($) prefixed field '" + std::string(first) + "' in '" + path +
                        "' is not valid for storage.");
    }
    changed_->push_back(path);
    return Status::OK();
  }

  const std::map<std::string, std::unique_ptr<UpdateMatcher>>& filters_;
  ApplyState* state_;
  const UpdateContext& ctx_;
  std::vector<std::string>* changed_;
};

Status TooLarge() {
  return Status(ErrorCode::kUpdateResultTooLarge,
                "Resulting document after update is larger than " +
                    std::to_string(kMaxBsonObjectSize));
}

}  // namespace

UpdateDriver::UpdateDriver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
UpdateDriver::UpdateDriver(UpdateDriver&&) noexcept = default;
UpdateDriver& UpdateDriver::operator=(UpdateDriver&&) noexcept = default;
UpdateDriver::~UpdateDriver() = default;

bool UpdateDriver::is_replacement() const { return impl_->replacement; }
bool UpdateDriver::uses_positional() const { return impl_->uses_positional; }

StatusOr<UpdateDriver> UpdateDriver::ParsePipeline(DocumentView stages,
                                                   const FilterVariables* let) {
  auto impl = std::make_unique<Impl>();
  impl->is_pipeline = true;
  impl->update = Document::AdoptValidated(std::string(stages.bytes()));
  // The command's variables first: their ids, then their values at Apply.
  internal::VariableScope scope = let != nullptr ? let->scope : internal::VariableScope();
  if (let != nullptr) impl->let_values = let->values;
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> elements,
                           internal::PipelineStages(impl->update.view()));
  for (const Element& s : elements) {
    if (!internal::IsDocumentTransformStage(s.key())) {
      static const char* const kStages[] = {
          "$match", "$group", "$sort", "$limit", "$skip", "$lookup", "$unwind", "$facet",
          "$count", "$sortByCount", "$sample", "$unionWith", "$bucket", "$bucketAuto",
          "$graphLookup", "$out", "$merge", "$redact", "$setWindowFields", "$densify", "$fill",
          "$documents", "$geoNear", "$indexStats", "$collStats"};
      for (const char* known : kStages) {
        if (s.key() == known) {
          return Status(ErrorCode::kInvalidOptions,
                        std::string(s.key()) + " is not allowed to be used within an update");
        }
      }
      return Status(static_cast<ErrorCode>(40324),
                    "Unrecognized pipeline stage name: '" + std::string(s.key()) + "'");
    }
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<internal::DocumentTransform> t,
                             internal::ParseDocumentTransform(s.key(), s, &scope));
    impl->pipeline.push_back(std::move(t));
  }
  impl->pipeline_variables = scope.id_count();
  return UpdateDriver(std::move(impl));
}

StatusOr<UpdateDriver> UpdateDriver::Parse(DocumentView update,
                                           const std::vector<Document>& array_filters) {
  auto impl = std::make_unique<Impl>();
  impl->update = Document::AdoptValidated(std::string(update.bytes()));
  DocumentView spec = impl->update.view();

  // Array filters first: paths are checked against the identifiers.
  for (const Document& filter : array_filters) {
    if (filter.empty()) {
      return Status(ErrorCode::kFailedToParse,
                    "Cannot use an expression without a top-level field name in arrayFilters");
    }
    std::vector<std::string> ids;
    CollectFilterIds(filter.view(), &ids);
    if (ids.size() != 1) {
      return Status(ErrorCode::kFailedToParse,
                    "Error parsing array filter :: caused by :: Expected a single top-level field "
                    "name, found '" +
                        ids[0] + "' and '" + ids[1] + "'");
    }
    const std::string& id = ids[0];
    if (!IsValidIdentifier(id)) {
      return Status(ErrorCode::kBadValue,
                    "Error parsing array filter :: caused by :: The top-level field name must be "
                    "an alphanumeric string beginning with a lowercase letter, found '" +
                        id + "'");
    }
    if (impl->filters.count(id) != 0) {
      return Status(ErrorCode::kFailedToParse,
                    "Found multiple array filters with the same top-level field name " + id);
    }
    const Document& held = impl->filter_docs.emplace_back(
        Document::AdoptValidated(std::string(filter.bytes())));
    auto matcher = update_internal::ParseUpdateMatcher(held.view());
    if (!matcher.ok()) {
      return Status(matcher.status().code(), "Error parsing array filter :: caused by :: " +
                                                 std::string(matcher.status().message()));
    }
    impl->filters[id] = std::move(matcher).value();
  }

  if (spec.empty() || (*spec.begin()).key().substr(0, 1) != "$") {
    // A replacement: checked against each document in Apply.
    impl->replacement = true;
    if (!impl->filters.empty()) {
      return Status(ErrorCode::kFailedToParse,
                    "The array filter for identifier '" + impl->filters.begin()->first +
                        "' was not used in the update " + FormatDocument(spec));
    }
    return UpdateDriver(std::move(impl));
  }

  std::map<std::string, bool> used;
  auto check_identifiers = [&](const std::vector<PathPart>& parts,
                               std::string_view path) -> Status {
    for (const PathPart& p : parts) {
      if (p.kind == PartKind::kPositional) impl->uses_positional = true;
      if (p.kind != PartKind::kFilter) continue;
      if (impl->filters.count(p.name) == 0) {
        return Status(ErrorCode::kBadValue, "No array filter found for identifier '" + p.name +
                                                "' in path '" + std::string(path) + "'");
      }
      used[p.name] = true;
    }
    return Status::OK();
  };

  for (Element op : spec) {
    std::string_view op_name = op.key();
    std::unique_ptr<ModifierNode> probe =
        op_name.substr(0, 1) == "$" ? update_internal::MakeModifierNode(op_name) : nullptr;
    if (probe == nullptr) {
      return Status(ErrorCode::kFailedToParse,
                    "Unknown modifier: " + std::string(op_name) +
                        ". Expected a valid update modifier or pipeline-style update specified as "
                        "an array");
    }
    if (op.type() != BsonType::kDocument) {
      return Status(ErrorCode::kFailedToParse,
                    "Modifiers operate on fields but we found type " +
                        std::string(BsonTypeAlias(op.type())) +
                        " instead. For example: {$mod: {<field>: ...}} not {" +
                        FormatElement(op_name, op) + "}");
    }
    // MongoDB 5.0+: an empty operand ({$set: {}}) is a no-op, not an error.
    for (Element arg : op.Document()) {
      std::string_view path = arg.key();
      std::vector<PathPart> parts;
      ROCKDOC_RETURN_IF_ERROR(ParsePath(path, &parts));
      if (op_name == "$rename") {
        auto rename = std::make_unique<RenameNode>();
        ROCKDOC_RETURN_IF_ERROR(rename->Init(arg));
        std::vector<PathPart> to_parts;
        ROCKDOC_RETURN_IF_ERROR(ParsePath(rename->destination(), &to_parts));
        auto dynamic = [](const std::vector<PathPart>& ps) {
          return std::any_of(ps.begin(), ps.end(),
                             [](const PathPart& p) { return p.kind != PartKind::kField; });
        };
        if (dynamic(parts)) {
          return Status(ErrorCode::kBadValue,
                        "The source field for $rename may not be dynamic: " + std::string(path));
        }
        if (dynamic(to_parts)) {
          return Status(ErrorCode::kBadValue, "The destination field for $rename may not be dynamic: " +
                                                  rename->destination());
        }
        if (rename->source() == rename->destination()) {
          return Status(ErrorCode::kBadValue, "The source and target field for $rename must differ: " +
                                                  FormatElement(path, arg));
        }
        if (IsPathPrefix(rename->source(), rename->destination())) {
          return Status(ErrorCode::kBadValue,
                        "The source and target field for $rename must not be on the same path: " +
                            FormatElement(path, arg));
        }
        impl->renames.push_back(rename.get());
        ROCKDOC_RETURN_IF_ERROR(InsertLeaf(&impl->root, parts, path,
                                           std::make_unique<update_internal::RenameSourceNode>()));
        // Copied first: argument evaluation order would otherwise let the
        // move empty `rename` before destination() is read.
        const std::string destination = rename->destination();
        ROCKDOC_RETURN_IF_ERROR(
            InsertLeaf(&impl->root, to_parts, destination, std::move(rename)));
        continue;
      }
      ROCKDOC_RETURN_IF_ERROR(check_identifiers(parts, path));
      std::unique_ptr<ModifierNode> node = update_internal::MakeModifierNode(op_name);
      ROCKDOC_RETURN_IF_ERROR(node->Init(arg));
      ROCKDOC_RETURN_IF_ERROR(InsertLeaf(&impl->root, parts, path, std::move(node)));
    }
  }
  for (const auto& [id, matcher] : impl->filters) {
    if (!used.count(id)) {
      return Status(ErrorCode::kFailedToParse, "The array filter for identifier '" + id +
                                                   "' was not used in the update " +
                                                   FormatDocument(spec));
    }
  }
  ComputeArrayConflicts(&impl->root);
  return UpdateDriver(std::move(impl));
}

namespace {

void AppendRaw(const Element& e, std::string* out) {
  out->append(reinterpret_cast<const char*>(e.raw()), e.size());
}

// `from_pipeline`: the replacement is an update pipeline's result, whose
// top-level fields may start with `$` (MongoDB 5.0+, through $setField or
// $replaceWith).
StatusOr<UpdateDriver::Result> ApplyReplacement(DocumentView replacement, DocumentView doc,
                                                const UpdateContext& ctx, bool from_pipeline = false) {
  Element old_id = doc.Get("_id");
  Element new_id = replacement.Get("_id");
  if (old_id.ok() && new_id.ok() &&
      (old_id.type() != new_id.type() || CompareValues(old_id, new_id) != 0)) {
    return Status(ErrorCode::kImmutableField,
                  "After applying the update, the (immutable) field '_id' was found to have been "
                  "altered to " +
                      FormatElement("_id", new_id));
  }
  std::string out;
  out.reserve(replacement.size() + (old_id.ok() ? old_id.size() : 0));
  out.append(4, '\0');
  if (old_id.ok()) {
    AppendRaw(old_id, &out);
  } else if (new_id.ok()) {
    AppendRaw(new_id, &out);
  }
  for (Element e : replacement) {
    if (e.key() == "_id") continue;
    if (!ctx.is_upsert_insert && !from_pipeline && e.key().substr(0, 1) == "$") {
      return Status(ErrorCode::kDollarPrefixedFieldName,
                    "The dollar ($) prefixed field '" + std::string(e.key()) + "' in '" +
                        std::string(e.key()) +
                        "' is not allowed in the context of an update's replacement document. "
                        "Consider using an aggregation pipeline with $replaceWith.");
    }
    AppendRaw(e, &out);
  }
  out.push_back('\0');
  if (out.size() > static_cast<size_t>(kMaxBsonObjectSize)) return TooLarge();
  int32_t size = static_cast<int32_t>(out.size());
  std::memcpy(out.data(), &size, 4);

  UpdateDriver::Result result;
  result.doc = Document::AdoptValidated(std::move(out));
  result.modified = result.doc.bytes() != doc.bytes();
  if (result.modified) {
    DocumentView now = result.doc.view();
    for (Element e : now) {
      Element before = doc.Get(e.key());
      if (!before.ok() || !update_internal::BinaryEqualValues(before, e)) {
        result.changed_paths.emplace_back(e.key());
      }
    }
    for (Element e : doc) {
      if (!now.Has(e.key())) result.changed_paths.emplace_back(e.key());
    }
  }
  return result;
}

}  // namespace

StatusOr<UpdateDriver::Result> UpdateDriver::Apply(DocumentView doc, const UpdateContext& ctx) const {
  if (impl_->replacement) return ApplyReplacement(impl_->update.view(), doc, ctx);
  if (impl_->is_pipeline) {
    Document current = Document::AdoptValidated(std::string(doc.bytes()));
    for (const auto& stage : impl_->pipeline) {
      internal::ExpressionVariables vars;
      vars.root = current.view();
      vars.now_ms = ctx.now_millis;
      vars.user = impl_->let_values;
      vars.user.resize(impl_->pipeline_variables);
      ROCKDOC_ASSIGN_OR_RETURN(Document next, stage->Apply(current.view(), vars));
      current = std::move(next);
    }
    return ApplyReplacement(current.view(), doc, ctx, /*from_pipeline=*/true);
  }

  ApplyState state;
  state.original = doc;
  state.is_upsert_insert = ctx.is_upsert_insert;
  state.now_millis = ctx.now_millis;
  state.timestamp_increment = ctx.timestamp_increment;
  state.deadline = ctx.deadline;
  for (const RenameNode* rename : impl_->renames) {
    ROCKDOC_RETURN_IF_ERROR(rename->CheckArrays(doc));
  }

  MutableNode root = MutableNode::NewContainer("", BsonType::kDocument);
  for (Element e : doc) root.children().emplace_back(e.key(), e);

  Result result;
  Applier applier(impl_->filters, &state, ctx, &result.changed_paths);
  std::string path;
  ROCKDOC_RETURN_IF_ERROR(applier.ApplyChildren(&root, "", impl_->root, &path));

  if (result.changed_paths.empty()) {
    result.doc = Document::AdoptValidated(std::string(doc.bytes()));
    result.modified = false;
    return result;
  }
  if (ctx.is_upsert_insert) {
    // An inserted document has _id first, as MongoDB's inserts do.
    auto& children = root.children();
    auto id = std::find_if(children.begin(), children.end(),
                           [](const MutableNode& n) { return n.key() == "_id"; });
    if (id != children.end()) {
      if (id->type() == BsonType::kArray) {
        return Status(ErrorCode::kInvalidIdField, "The '_id' value cannot be of type array");
      }
      std::rotate(children.begin(), id, id + 1);
    }
  }
  std::string out;
  out.reserve(doc.size() + 64);
  root.WriteValue(&out);
  if (out.size() > static_cast<size_t>(kMaxBsonObjectSize)) return TooLarge();
  result.modified = out != doc.bytes() || state.counts_as_modified;
  if (!result.modified) result.changed_paths.clear();
  result.doc = Document::AdoptValidated(std::move(out));
  return result;
}

// ------------------------------------------------------------------ upserts

namespace {

// One equality the filter fixes: the path and the value it must have.
struct Equality {
  std::string path;
  Element value;  // views into the parsed filter
};

// The equalities of a parsed filter, as MongoDB's extractEqualityMatches
// finds them after its optimizer: $eq leaves under (nested) $and, the one
// clause of a one-clause $or (the parser already reduces both, and $all of
// one value, to the clause itself), and $in whose values are all one value.
void CollectEqualities(const MatchExpression& e, std::vector<Equality>* out) {
  switch (e.type()) {
    case MatchType::kAnd:
      for (size_t i = 0; i < e.num_children(); ++i) CollectEqualities(*e.child(i), out);
      return;
    case MatchType::kOr:
      if (e.num_children() == 1) CollectEqualities(*e.child(0), out);
      return;
    case MatchType::kEq:
      out->push_back({e.path(), e.operand()});
      return;
    case MatchType::kIn: {
      const auto& in = static_cast<const InMatchExpression&>(e);
      const auto& values = in.equalities();
      if (!in.regexes().empty() || values.empty()) return;
      for (const Element& v : values) {
        if (CompareValues(v, values.front()) != 0) return;
      }
      out->push_back({e.path(), values.front()});
      return;
    }
    default:
      return;  // ranges, $ne, $not, $nor, $elemMatch, regexes...: no value
  }
}

bool IsStrictPrefix(std::string_view prefix, std::string_view path) {
  return path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix &&
         path[prefix.size()] == '.';
}

// The equalities an upsert copies, in path order, checked as MongoDB does:
// a path fixed twice, or below a fixed path, cannot be inferred. With
// `only_id` (replacement upserts) only `_id` is taken, and it must be fixed
// as a whole.
StatusOr<std::vector<Equality>> UpsertEqualities(const MatchExpression& filter, bool only_id) {
  std::vector<Equality> all;
  CollectEqualities(filter, &all);
  std::stable_sort(all.begin(), all.end(),
                   [](const Equality& a, const Equality& b) { return a.path < b.path; });
  std::vector<Equality> kept;
  for (Equality& eq : all) {
    if (only_id) {
      if (eq.path != "_id" && !IsStrictPrefix("_id", eq.path)) continue;
      if (eq.path != "_id") {
        return Status(ErrorCode::kNotExactValueField,
                      "field at '_id' must be exactly specified, field at sub-path '" + eq.path +
                          "'found");
      }
    }
    for (const Equality& earlier : kept) {
      if (earlier.path == eq.path) {
        return Status(ErrorCode::kNotSingleValueField,
                      "cannot infer query fields to set, path '" + eq.path + "' is matched twice");
      }
      if (IsStrictPrefix(earlier.path, eq.path)) {
        return Status(ErrorCode::kNotSingleValueField,
                      "cannot infer query fields to set, both paths '" + eq.path + "' and '" +
                          earlier.path + "' are matched");
      }
    }
    kept.push_back(std::move(eq));
  }
  // Paths with `$` parts ("a.$", "x.$id") are not fields an insert makes.
  kept.erase(std::remove_if(kept.begin(), kept.end(),
                            [](const Equality& eq) {
                              return eq.path.empty() || eq.path[0] == '$' ||
                                     eq.path.find(".$") != std::string::npos;
                            }),
             kept.end());
  return kept;
}

StatusOr<Document> Seed(DocumentView filter, bool only_id) {
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<MatchExpression> expr, ParseMatchExpression(filter));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Equality> equalities, UpsertEqualities(*expr, only_id));
  if (equalities.empty()) return Document();
  BsonBuilder b;
  b.OpenDocument("$set");
  for (const Equality& eq : equalities) b.AppendElementAs(eq.path, eq.value);
  b.Close();
  Document update = std::move(b).Build();
  ROCKDOC_ASSIGN_OR_RETURN(UpdateDriver driver, UpdateDriver::Parse(update.view(), {}));
  UpdateContext ctx;
  ctx.is_upsert_insert = true;
  ROCKDOC_ASSIGN_OR_RETURN(UpdateDriver::Result seeded, driver.Apply(Document().view(), ctx));
  return std::move(seeded.doc);
}

}  // namespace

StatusOr<Document> SeedUpsertDocument(DocumentView filter, UpsertSeed kind) {
  return Seed(filter, kind == UpsertSeed::kIdOnly);
}

StatusOr<Document> UpdateDriver::ProduceUpsertDocument(DocumentView filter,
                                                       UpdateContext ctx) const {
  ROCKDOC_ASSIGN_OR_RETURN(Document seed, Seed(filter, impl_->replacement));
  ctx.is_upsert_insert = true;
  ctx.positional_index.reset();
  ROCKDOC_ASSIGN_OR_RETURN(Result result, Apply(seed.view(), ctx));
  Element id = result.doc.Get("_id");
  if (id.ok() && (id.type() == BsonType::kArray || id.type() == BsonType::kRegex ||
                  id.type() == BsonType::kUndefined)) {
    return Status(ErrorCode::kInvalidIdField,
                  "The '_id' value cannot be of type " + std::string(BsonTypeAlias(id.type())));
  }
  return std::move(result.doc);
}

// ------------------------------------------------------------------ indexes

namespace {

bool MayAffect(const std::vector<std::string_view>& c, size_t i,
               const std::vector<std::string_view>& p, size_t j) {
  if (i == c.size() || j == p.size()) return true;
  if (c[i] == p[j] && MayAffect(c, i + 1, p, j + 1)) return true;
  // A numeric component may be an array position that index paths skip.
  return IsNumericName(c[i]) && MayAffect(c, i + 1, p, j);
}

std::vector<std::string_view> SplitDottedViews(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

}  // namespace

bool PathMayAffect(std::string_view changed_path, std::string_view index_path) {
  return MayAffect(SplitDottedViews(changed_path), 0, SplitDottedViews(index_path), 0);
}

}  // namespace rockdoc

// query/expression/document_transform.cc: $project, $addFields/$set,
// $unset, $replaceRoot/$replaceWith over one document (document_transform.h).
#include "query/expression/document_transform.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "query/field_path.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

Status Failed(int code, std::string message) {
  return Status(static_cast<ErrorCode>(code), std::move(message));
}


// A tree of the specification's paths.
struct ProjectionNode {
  enum Kind { kInternal, kInclude, kExclude, kComputed };
  Kind kind = kInternal;
  ExpressionPtr expr;                                                      // kComputed
  std::vector<std::pair<std::string, std::unique_ptr<ProjectionNode>>> children;  // kInternal

  ProjectionNode* Child(std::string_view name) const {
    for (const auto& [n, c] : children) {
      if (n == name) return c.get();
    }
    return nullptr;
  }
  bool HasComputed() const {
    if (kind == kComputed) return true;
    for (const auto& [n, c] : children) {
      if (c->HasComputed()) return true;
    }
    return false;
  }
};

// Where `path` (dotted) goes in the tree; 31250-style path collisions as
// MongoDB reports them.
StatusOr<ProjectionNode*> NodeAt(ProjectionNode* root, std::string_view stage,
                                 std::string_view path) {
  ProjectionNode* node = root;
  std::vector<std::string> parts = SplitDotted(path);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty()) return Failed(40352, "FieldPath cannot be constructed with empty string");
    if (part[0] == '$') {
      return Failed(16410, "FieldPath field names may not start with '$'. Consider using "
                           "$getField or $setField.");
    }
    if (node->kind != ProjectionNode::kInternal) {
      return Failed(31250, "Invalid " + std::string(stage) + " :: caused by :: Path collision at " +
                               std::string(path));
    }
    ProjectionNode* child = node->Child(part);
    if (child == nullptr) {
      node->children.emplace_back(part, std::make_unique<ProjectionNode>());
      child = node->children.back().second.get();
    } else if (i + 1 == parts.size() || child->kind != ProjectionNode::kInternal) {
      return Failed(31250, "Invalid " + std::string(stage) + " :: caused by :: Path collision at " +
                               std::string(path));
    }
    node = child;
  }
  return node;
}

class Projection : public DocumentTransform {
 public:
  enum Mode { kInclusion, kExclusion, kAddFields };

  // $project's specification.
  static StatusOr<Projection> ParseProject(DocumentView spec, VariableScope* scope) {
    Projection p;
    p.mode_ = kInclusion;
    bool any_include = false, any_exclude = false, id_seen = false;
    std::string first_include, first_exclude;
    std::vector<std::pair<std::string, const Element*>> flat;
    if (spec.empty()) {
      return Failed(51272, "Invalid $project :: caused by :: projection specification must have "
                           "at least one field");
    }
    ROCKDOC_RETURN_IF_ERROR(p.AddSpec(spec, "", scope, &any_include, &any_exclude, &id_seen,
                                      &first_include, &first_exclude));
    if (any_exclude && any_include) {
      return Failed(31254, "Invalid $project :: caused by :: Cannot do exclusion on field " +
                               first_exclude + " in inclusion projection");
    }
    const ProjectionNode* id = p.root_.Child("_id");
    const bool only_id_excluded =
        !any_include && id != nullptr && id->kind == ProjectionNode::kExclude;
    if (any_exclude || only_id_excluded) {
      p.mode_ = kExclusion;  // {_id: 0} alone removes _id and keeps the rest
    } else if (!id_seen) {
      // _id is kept unless excluded: first, as MongoDB writes it.
      auto id = std::make_unique<ProjectionNode>();
      id->kind = ProjectionNode::kInclude;
      p.root_.children.insert(p.root_.children.begin(), {"_id", std::move(id)});
    }
    return p;
  }

  // $addFields / $set: every field computed.
  static StatusOr<Projection> ParseAddFields(std::string_view stage, DocumentView spec,
                                             VariableScope* scope) {
    Projection p;
    p.mode_ = kAddFields;
    for (const Element& f : spec) {
      ROCKDOC_ASSIGN_OR_RETURN(ProjectionNode * node, NodeAt(&p.root_, stage, f.key()));
      node->kind = ProjectionNode::kComputed;
      ROCKDOC_ASSIGN_OR_RETURN(node->expr, ParseExpression(f, scope));
    }
    return p;
  }

  // $unset: the named fields removed.
  static StatusOr<Projection> ParseUnset(const Element& spec) {
    Projection p;
    p.mode_ = kExclusion;
    std::vector<std::string_view> names;
    if (spec.type() == BsonType::kString) {
      names.push_back(spec.String());
    } else if (spec.type() == BsonType::kArray && !spec.Array().empty()) {
      for (const Element& e : spec.Array()) {
        if (e.type() != BsonType::kString) {
          return Failed(31120, "$unset specification must be a string or an array containing "
                               "only string values");
        }
        names.push_back(e.String());
      }
    } else {
      return Failed(31002, "$unset specification must be a string or an array with at least one "
                           "field");
    }
    for (std::string_view name : names) {
      ROCKDOC_ASSIGN_OR_RETURN(ProjectionNode * node, NodeAt(&p.root_, "$unset", name));
      node->kind = ProjectionNode::kExclude;
    }
    return p;
  }

  StatusOr<Document> Apply(DocumentView doc, const ExpressionVariables& vars) const override {
    BsonBuilder b;
    b.OpenDocument("v");
    ROCKDOC_RETURN_IF_ERROR(ApplyNode(root_, doc, vars, &b));
    b.Close();
    Document wrapped = std::move(b).Build();
    return Document::AdoptValidated(std::string(wrapped.Get("v").Document().bytes()));
  }

 private:
  Status AddSpec(DocumentView spec, const std::string& prefix, VariableScope* scope,
                 bool* any_include, bool* any_exclude, bool* id_seen, std::string* first_include,
                 std::string* first_exclude) {
    for (const Element& f : spec) {
      const std::string path = prefix.empty() ? std::string(f.key()) : prefix + "." + std::string(f.key());
      if (path == "_id") *id_seen = true;
      const bool nested = f.type() == BsonType::kDocument && !f.Document().empty() &&
                          (*f.Document().begin()).key().substr(0, 1) != "$";
      if (nested) {
        ROCKDOC_RETURN_IF_ERROR(AddSpec(f.Document(), path, scope, any_include, any_exclude,
                                        id_seen, first_include, first_exclude));
        continue;
      }
      if (f.type() == BsonType::kDocument && f.Document().empty()) {
        return Failed(51270, "Invalid $project :: caused by :: An empty sub-projection is not a "
                             "valid value. Found empty object at path");
      }
      ROCKDOC_ASSIGN_OR_RETURN(ProjectionNode * node, NodeAt(&root_, "$project", path));
      if (f.IsBool() || f.IsNumber()) {
        const bool include = IsTruthy(f);
        node->kind = include ? ProjectionNode::kInclude : ProjectionNode::kExclude;
        if (path != "_id") {
          if (include) {
            if (!*any_include) *first_include = path;
            *any_include = true;
          } else {
            if (!*any_exclude) *first_exclude = path;
            *any_exclude = true;
          }
        }
      } else {
        node->kind = ProjectionNode::kComputed;
        ROCKDOC_ASSIGN_OR_RETURN(node->expr, ParseExpression(f, scope));
        if (path != "_id") {
          if (!*any_include) *first_include = path;
          *any_include = true;
        }
      }
    }
    return Status::OK();
  }

  // Appends `in`'s fields as `node` projects them to the open document.
  Status ApplyNode(const ProjectionNode& node, DocumentView in, const ExpressionVariables& vars,
                   BsonBuilder* out) const {
    std::set<std::string_view> seen;
    for (const Element& e : in) {
      const ProjectionNode* child = node.Child(e.key());
      if (child == nullptr) {
        if (mode_ != kInclusion) out->AppendElement(e);  // kept unless included-only
        continue;
      }
      seen.insert(e.key());
      switch (child->kind) {
        case ProjectionNode::kInclude: out->AppendElement(e); break;
        case ProjectionNode::kExclude: break;
        case ProjectionNode::kComputed:
          if (mode_ == kAddFields) {
            ROCKDOC_ASSIGN_OR_RETURN(Value v, child->expr->Evaluate(vars));
            if (v.ok()) out->AppendElementAs(e.key(), v.element());  // $$REMOVE drops it
          }
          break;  // an inclusion's computed fields come after the kept ones
        case ProjectionNode::kInternal:
          ROCKDOC_RETURN_IF_ERROR(ApplyInternal(*child, e, vars, out));
          break;
      }
    }
    if (mode_ == kExclusion) return Status::OK();
    // Computed fields (and paths into fields the input lacks).
    for (const auto& [name, child] : node.children) {
      const bool present = seen.count(name) > 0;
      if (child->kind == ProjectionNode::kComputed && (mode_ == kInclusion || !present)) {
        ROCKDOC_ASSIGN_OR_RETURN(Value v, child->expr->Evaluate(vars));
        if (v.ok()) out->AppendElementAs(name, v.element());
      } else if (child->kind == ProjectionNode::kInternal && !present && child->HasComputed()) {
        out->OpenDocument(name);
        ROCKDOC_RETURN_IF_ERROR(ApplyNode(*child, DocumentView(), vars, out));
        out->Close();
      }
    }
    return Status::OK();
  }

  // A field whose subfields the node names: documents recurse, arrays map
  // over their elements; other values are dropped by an inclusion, kept by
  // an exclusion, and replaced by a document of the new fields by
  // $addFields.
  Status ApplyInternal(const ProjectionNode& node, const Element& e,
                       const ExpressionVariables& vars, BsonBuilder* out) const {
    if (e.type() == BsonType::kDocument) {
      out->OpenDocument(e.key());
      ROCKDOC_RETURN_IF_ERROR(ApplyNode(node, e.Document(), vars, out));
      out->Close();
      return Status::OK();
    }
    if (e.type() == BsonType::kArray) {
      out->OpenArray(e.key());
      for (const Element& item : e.Array()) {
        if (item.type() == BsonType::kDocument || item.type() == BsonType::kArray) {
          ROCKDOC_RETURN_IF_ERROR(ApplyInternal(node, item, vars, out));
        } else if (mode_ == kExclusion) {
          out->AppendElement(item);
        } else if (mode_ == kAddFields) {
          out->OpenDocument("");
          ROCKDOC_RETURN_IF_ERROR(ApplyNode(node, DocumentView(), vars, out));
          out->Close();
        }
      }
      out->Close();
      return Status::OK();
    }
    if (mode_ == kExclusion) {
      out->AppendElement(e);
    } else if (mode_ == kAddFields || (mode_ == kInclusion && node.HasComputed())) {
      out->OpenDocument(e.key());
      ROCKDOC_RETURN_IF_ERROR(ApplyNode(node, DocumentView(), vars, out));
      out->Close();
    }
    return Status::OK();
  }

  Mode mode_ = kInclusion;
  ProjectionNode root_;
};

class ReplaceRoot : public DocumentTransform {
 public:
  explicit ReplaceRoot(ExpressionPtr expr) : expr_(std::move(expr)) {}
  StatusOr<Document> Apply(DocumentView doc, const ExpressionVariables& vars) const override {
    ROCKDOC_ASSIGN_OR_RETURN(Value v, expr_->Evaluate(vars));
    if (v.type() != BsonType::kDocument) {
      return Failed(40228, "'newRoot' expression must evaluate to an object, but resulting value "
                           "was: " +
                               (v.ok() ? ValueToJson(v.element(), JsonFormat::kShell) : std::string("MISSING")) +
                               ". Type of resulting value: '" +
                               (v.ok() ? std::string(BsonTypeAlias(v.type())) : "missing") +
                               "'. Input document: " + ToJson(doc, JsonFormat::kShell));
    }
    return Document::AdoptValidated(std::string(v.element().Document().bytes()));
  }

 private:
  ExpressionPtr expr_;
};

}  // namespace

StatusOr<std::vector<Element>> PipelineStages(DocumentView pipeline) {
  // The length first, as MongoDB: before a stage is looked at.
  size_t length = 0;
  for (auto it = pipeline.begin(); it != pipeline.end(); ++it) {
    if (++length > kMaxPipelineStages) {
      return Status(static_cast<ErrorCode>(7749501),
                    "Pipeline length must be no longer than " +
                        std::to_string(kMaxPipelineStages) + " stages.");
    }
  }
  std::vector<Element> stages;
  stages.reserve(length);
  for (const Element& s : pipeline) {
    if (s.type() != BsonType::kDocument) {
      return Status(ErrorCode::kTypeMismatch,
                    "Each element of the 'pipeline' array must be an object");
    }
    DocumentView spec = s.Document();
    if (spec.empty() || std::next(spec.begin()) != spec.end()) {
      return Status(static_cast<ErrorCode>(40323),
                    "A pipeline stage specification object must contain exactly one field.");
    }
    stages.push_back(*spec.begin());
  }
  return stages;
}

bool IsDocumentTransformStage(std::string_view name) {
  return name == "$project" || name == "$addFields" || name == "$set" || name == "$unset" ||
         name == "$replaceRoot" || name == "$replaceWith";
}

StatusOr<std::unique_ptr<DocumentTransform>> ParseDocumentTransform(std::string_view name,
                                                                    const Element& s,
                                                                    VariableScope* scope) {
  if (name == "$project") {
    if (s.type() != BsonType::kDocument) {
      return Failed(15969, "$project specification must be an object");
    }
    ROCKDOC_ASSIGN_OR_RETURN(Projection p, Projection::ParseProject(s.Document(), scope));
    return std::unique_ptr<DocumentTransform>(std::make_unique<Projection>(std::move(p)));
  }
  if (name == "$addFields" || name == "$set") {
    if (s.type() != BsonType::kDocument) {
      return Failed(40272, std::string(name) + " specification stage must be an object, got " +
                               std::string(BsonTypeAlias(s.type())));
    }
    ROCKDOC_ASSIGN_OR_RETURN(Projection p, Projection::ParseAddFields(name, s.Document(), scope));
    return std::unique_ptr<DocumentTransform>(std::make_unique<Projection>(std::move(p)));
  }
  if (name == "$unset") {
    ROCKDOC_ASSIGN_OR_RETURN(Projection p, Projection::ParseUnset(s));
    return std::unique_ptr<DocumentTransform>(std::make_unique<Projection>(std::move(p)));
  }
  Element root = s;
  if (name == "$replaceRoot") {
    if (s.type() != BsonType::kDocument) {
      return Failed(40228, "expected an object as specification for $replaceRoot stage, got " +
                               std::string(BsonTypeAlias(s.type())));
    }
    root = s.Document().Get("newRoot");
    for (const Element& f : s.Document()) {
      if (f.key() != "newRoot") {
        return Failed(40415, "BSON field '$replaceRoot." + std::string(f.key()) +
                                 "' is an unknown field.");
      }
    }
    if (!root.ok()) {
      return Failed(40414, "BSON field '$replaceRoot.newRoot' is missing but a required field");
    }
  } else if (name != "$replaceWith") {
    return Status(ErrorCode::kInternalError, "not a document transform: " + std::string(name));
  }
  ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr e, ParseExpression(root, scope));
  return std::unique_ptr<DocumentTransform>(std::make_unique<ReplaceRoot>(std::move(e)));
}

}  // namespace rockdoc::internal

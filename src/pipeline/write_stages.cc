// pipeline/write_stages.cc: $out (the pipeline's output replaces a
// collection) and $merge (it is merged into one, document by document).
// Both write through a PipelineTarget (pipeline.h), all or nothing: a
// pipeline that fails, or a $merge that meets a document it must refuse,
// leaves the target as it was.
#include <algorithm>

#include "pipeline/stage.h"
#include "query/expression/document_transform.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

std::string Type(const Element& e) { return std::string(BsonTypeAlias(e.type())); }

Status CheckTargetName(std::string_view stage, std::string_view coll) {
  if (coll.empty()) return StageFailed(73, "Invalid " + std::string(stage) + " target namespace: empty collection name");
  if (coll.substr(0, 7) == "system.") {
    return StageFailed(17385, "Can't " + std::string(stage) + " to special collection: " + std::string(coll));
  }
  if (coll.find('$') != std::string_view::npos || coll.find('\0') != std::string_view::npos) {
    return StageFailed(73, "Invalid collection name: " + std::string(coll));
  }
  return Status::OK();
}

// "coll" or {db, coll}, for `stage` ($out, or $merge's `into`).
Status ParseTarget(std::string_view stage, const Element& e, const std::string& default_db,
                   std::string* db, std::string* coll) {
  *db = default_db;
  if (e.type() == BsonType::kString) {
    *coll = std::string(e.String());
    return CheckTargetName(stage, *coll);
  }
  if (e.type() != BsonType::kDocument) {
    return StageFailed(14,
                       std::string(stage) + " target must be a string or an object, but found " + Type(e));
  }
  bool has_coll = false;
  for (const Element& f : e.Document()) {
    if ((f.key() == "db" || f.key() == "coll") && f.type() != BsonType::kString) {
      return StageFailed(14, "BSON field '" + std::string(stage) + "." + std::string(f.key()) +
                                 "' is the wrong type '" + Type(f) + "', expected type 'string'");
    }
    if (f.key() == "db") {
      *db = std::string(f.String());
    } else if (f.key() == "coll") {
      *coll = std::string(f.String());
      has_coll = true;
    } else if (f.key() == "timeseries") {
      return Status(ErrorCode::kNotImplemented, std::string(stage) + " to a time series collection is not supported by rockdoc");
    } else {
      return StageFailed(40415, "BSON field '" + std::string(stage) + "." + std::string(f.key()) +
                                    "' is an unknown field.");
    }
  }
  if (!has_coll) return StageFailed(40414, "BSON field '" + std::string(stage) + ".coll' is missing but a required field");
  if (db->empty()) return StageFailed(73, "Invalid " + std::string(stage) + " target: empty database name");
  return CheckTargetName(stage, *coll);
}

// ---- $out ----

class OutStage : public Stage {
 public:
  OutStage(std::string db, std::string coll, OpenTargetFn open)
      : db_(std::move(db)), coll_(std::move(coll)), open_(std::move(open)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (done_) return std::optional<Document>();
    done_ = true;
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<PipelineTarget> target, open_(db_, coll_, /*replace=*/true));
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      ROCKDOC_RETURN_IF_ERROR(target->Insert(doc->view()));
    }
    ROCKDOC_RETURN_IF_ERROR(target->Commit());
    return std::optional<Document>();  // $out's cursor is empty
  }

 private:
  std::string db_, coll_;
  OpenTargetFn open_;
  bool done_ = false;
};

// ---- $merge ----

enum class WhenMatched { kReplace, kKeepExisting, kMerge, kFail, kPipeline };
enum class WhenNotMatched { kInsert, kDiscard, kFail };

struct MergeSpec {
  std::string db, coll;
  std::vector<std::string> on = {"_id"};
  WhenMatched matched = WhenMatched::kMerge;
  WhenNotMatched not_matched = WhenNotMatched::kInsert;
  std::vector<std::unique_ptr<DocumentTransform>> pipeline;  // kPipeline
  std::vector<std::pair<int, ExpressionPtr>> let;            // over the source document
  int variables = 0;
};

Element FieldAt(DocumentView doc, std::string_view path) {
  Element e;
  for (;;) {
    const size_t dot = path.find('.');
    e = doc.Get(path.substr(0, dot));
    if (dot == std::string_view::npos || e.type() != BsonType::kDocument) {
      return dot == std::string_view::npos ? e : Element();
    }
    doc = e.Document();
    path = path.substr(dot + 1);
  }
}

class MergeStage : public ExpressionStage {
 public:
  MergeStage(MergeSpec spec, const StageContext& ctx)
      : ExpressionStage(ctx.scope->id_count(), ctx.now_ms, ctx.options.variables),
        spec_(std::move(spec)),
        open_(ctx.options.open_target) {}

  StatusOr<std::optional<Document>> Next() override {
    if (done_) return std::optional<Document>();
    done_ = true;
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<PipelineTarget> target, open_(spec_.db, spec_.coll, false));
    ROCKDOC_RETURN_IF_ERROR(CheckOnIndex(target.get()));
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      ROCKDOC_RETURN_IF_ERROR(MergeOne(*doc, target.get()));
    }
    ROCKDOC_RETURN_IF_ERROR(target->Commit());
    return std::optional<Document>();
  }

 private:
  // `on` other than _id needs a unique index on exactly those fields.
  Status CheckOnIndex(PipelineTarget* target) const {
    if (spec_.on.size() == 1 && spec_.on[0] == "_id") return Status::OK();
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> indexes, target->Indexes());
    std::vector<std::string> want = spec_.on;
    std::sort(want.begin(), want.end());
    for (const Document& index : indexes) {
      Element unique = index.Get("unique");
      if (!unique.ok() || !IsTruthy(unique) || index.Get("partialFilterExpression").ok()) continue;
      std::vector<std::string> keys;
      for (const Element& k : index.Get("key").Document()) keys.emplace_back(k.key());
      std::sort(keys.begin(), keys.end());
      if (keys == want) return Status::OK();
    }
    return StageFailed(51183, "Cannot find index to verify that join fields will be unique");
  }

  Status MergeOne(const Document& source_doc, PipelineTarget* target) {
    Document doc = source_doc;
    if (!doc.Get("_id").ok() && std::find(spec_.on.begin(), spec_.on.end(), "_id") != spec_.on.end()) {
      // Merged on _id, a document without one gets a new one (and so
      // matches nothing). Otherwise a match keeps the target's _id.
      BsonBuilder b;
      b.AppendObjectId("_id", ObjectId::Generate());
      for (const Element& e : doc.view()) b.AppendElement(e);
      doc = std::move(b).Build();
    }
    BsonBuilder filter;
    for (const std::string& field : spec_.on) {
      const Element v = FieldAt(doc.view(), field);
      if (!v.ok() || v.IsNull() || v.type() == BsonType::kUndefined || v.type() == BsonType::kArray) {
        return StageFailed(51132, "$merge write error: 'on' field '" + field +
                                      "' cannot be missing, null, undefined or an array");
      }
      filter.OpenDocument(field).AppendElementAs("$eq", v).Close();
    }
    Document f = std::move(filter).Build();
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> existing, target->FindOne(f.view()));
    if (!existing) {
      switch (spec_.not_matched) {
        case WhenNotMatched::kInsert: return target->Insert(doc.view());
        case WhenNotMatched::kDiscard: return Status::OK();
        case WhenNotMatched::kFail:
          return StageFailed(13113, "$merge could not find a matching document in the target "
                                    "collection for at least one document in the source collection");
      }
    }
    switch (spec_.matched) {
      case WhenMatched::kKeepExisting: return Status::OK();
      case WhenMatched::kFail: {
        // As mongod: the insert fails on the unique index that matched (the
        // `on` fields' or _id's), and its DuplicateKey error, with its
        // keyPattern and keyValue, is the stage's.
        Status s = target->Insert(doc.view());
        if (s.code() != ErrorCode::kDuplicateKey) return s;
        return Status(ErrorCode::kDuplicateKey,
                      "$merge failed due to a DuplicateKey error :: caused by :: " +
                          std::string(s.message()))
            .WithExtraInfo(std::string(s.extra_info()));
      }
      case WhenMatched::kReplace: return target->Replace(f.view(), doc.view());
      case WhenMatched::kMerge: {
        // The target's fields, overwritten by the source's; new ones after.
        BsonBuilder b;
        for (const Element& e : existing->view()) {
          Element over = doc.Get(e.key());
          b.AppendElementAs(e.key(), over.ok() ? over : e);
        }
        for (const Element& e : doc.view()) {
          if (!existing->Get(e.key()).ok()) b.AppendElement(e);
        }
        Document merged = std::move(b).Build();
        return target->Replace(f.view(), merged.view());
      }
      case WhenMatched::kPipeline: {
        // The target document through the stages, $$new (or let's names)
        // being the source document.
        ExpressionVariables source_vars = VariablesFor(doc);
        std::vector<Value> values(static_cast<size_t>(spec_.variables));
        for (const auto& [id, expr] : spec_.let) {
          ROCKDOC_ASSIGN_OR_RETURN(Value v, expr->Evaluate(source_vars));
          values[static_cast<size_t>(id)] = std::move(v);
        }
        Document current = std::move(*existing);
        for (const auto& stage : spec_.pipeline) {
          ExpressionVariables vars = VariablesFor(current);
          for (size_t i = 0; i < values.size() && i < vars.user.size(); ++i) {
            if (values[i].ok()) vars.user[i] = values[i];
          }
          ROCKDOC_ASSIGN_OR_RETURN(Document next, stage->Apply(current.view(), vars));
          current = std::move(next);
        }
        return target->Replace(f.view(), current.view());
      }
    }
    return Status::OK();
  }

  MergeSpec spec_;
  OpenTargetFn open_;
  bool done_ = false;
};


StatusOr<std::unique_ptr<Stage>> ParseOut(const Element& spec, const StageContext& ctx) {
  std::string db, coll;
  ROCKDOC_RETURN_IF_ERROR(ParseTarget("$out", spec, ctx.options.database, &db, &coll));
  if (!ctx.options.open_target) {
    return Status(ErrorCode::kNotImplemented, "$out is not supported here (explain, or a sub-pipeline)");
  }
  return std::unique_ptr<Stage>(std::make_unique<OutStage>(std::move(db), std::move(coll), ctx.options.open_target));
}

StatusOr<std::unique_ptr<Stage>> ParseMerge(const Element& spec, const StageContext& ctx) {
  MergeSpec m;
  if (spec.type() == BsonType::kString) {
    ROCKDOC_RETURN_IF_ERROR(ParseTarget("$merge", spec, ctx.options.database, &m.db, &m.coll));
  } else if (spec.type() != BsonType::kDocument) {
    return StageFailed(51182, "$merge requires a string or object argument, but found " + Type(spec));
  } else {
    Element into, on, let, matched, not_matched;
    for (const Element& f : spec.Document()) {
      const std::string_view k = f.key();
      Element* slot = k == "into" ? &into : k == "on" ? &on : k == "let" ? &let
                      : k == "whenMatched" ? &matched : k == "whenNotMatched" ? &not_matched : nullptr;
      if (slot == nullptr) {
        return StageFailed(40415, "BSON field '$merge." + std::string(k) + "' is an unknown field.");
      }
      *slot = f;
    }
    if (!into.ok()) return StageFailed(40414, "BSON field '$merge.into' is missing but a required field");
    ROCKDOC_RETURN_IF_ERROR(ParseTarget("$merge", into, ctx.options.database, &m.db, &m.coll));
    if (on.ok()) {
      m.on.clear();
      if (on.type() == BsonType::kString) {
        m.on.emplace_back(on.String());
      } else if (on.type() == BsonType::kArray && !on.Array().empty()) {
        for (const Element& f : on.Array()) {
          if (f.type() != BsonType::kString) {
            return StageFailed(51134, "$merge 'on' array elements must be strings, but found " + Type(f));
          }
          if (std::find(m.on.begin(), m.on.end(), f.String()) != m.on.end()) {
            return StageFailed(31465, "Found a duplicate field '" + std::string(f.String()) + "'");
          }
          m.on.emplace_back(f.String());
        }
      } else {
        return StageFailed(51186, "$merge 'on' field must be either a string or an array of strings, "
                                  "but found " + Type(on));
      }
    }
    if (not_matched.ok()) {
      const std::string_view v = not_matched.type() == BsonType::kString ? not_matched.String() : "";
      if (v == "insert") {
        m.not_matched = WhenNotMatched::kInsert;
      } else if (v == "discard") {
        m.not_matched = WhenNotMatched::kDiscard;
      } else if (v == "fail") {
        m.not_matched = WhenNotMatched::kFail;
      } else {
        return StageFailed(2, "Enumeration value '" + std::string(v) +
                                  "' for field '$merge.whenNotMatched' is not a valid value.");
      }
    }
    VariableScope* scope = ctx.scope;
    if (matched.ok() && matched.type() == BsonType::kArray) {
      m.matched = WhenMatched::kPipeline;
      // `let` (default {new: "$$ROOT"}) over the source document; the
      // stages see its names.
      std::vector<std::pair<std::string_view, ExpressionPtr>> parsed;
      Document default_let;
      if (let.ok()) {
        if (let.type() != BsonType::kDocument) {
          return StageFailed(14, "BSON field '$merge.let' is the wrong type '" + Type(let) +
                                     "', expected type 'object'");
        }
      } else {
        BsonBuilder b;
        b.OpenDocument("let").AppendString("new", "$$ROOT").Close();
        default_let = std::move(b).Build();
        let = default_let.Get("let");
      }
      for (const Element& v : let.Document()) {
        ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr e, ParseExpression(v, scope));
        parsed.emplace_back(v.key(), std::move(e));
      }
      for (auto& [name, e] : parsed) {
        ROCKDOC_ASSIGN_OR_RETURN(int id, scope->Define(name));
        m.let.emplace_back(id, std::move(e));
      }
      for (const Element& stage : matched.Array()) {
        if (stage.type() != BsonType::kDocument || stage.Document().empty()) {
          return StageFailed(14, "Each element of the 'whenMatched' pipeline must be an object");
        }
        const Element s = *stage.Document().begin();
        if (!IsDocumentTransformStage(s.key())) {
          return StageFailed(72,
                             std::string(s.key()) + " is not allowed to be used within an update");
        }
        ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<DocumentTransform> t, ParseDocumentTransform(s.key(), s, scope));
        m.pipeline.push_back(std::move(t));
      }
      m.variables = scope->id_count();
    } else {
      if (let.ok()) {
        return StageFailed(51199, "Cannot use 'let' variables with 'whenMatched: " +
                                      (matched.ok() ? ValueToJson(matched, JsonFormat::kShell) : std::string("merge")) +
                                      "' mode");
      }
      if (matched.ok()) {
        const std::string_view v = matched.type() == BsonType::kString ? matched.String() : "";
        if (v == "replace") {
          m.matched = WhenMatched::kReplace;
        } else if (v == "keepExisting") {
          m.matched = WhenMatched::kKeepExisting;
        } else if (v == "merge") {
          m.matched = WhenMatched::kMerge;
        } else if (v == "fail") {
          m.matched = WhenMatched::kFail;
        } else {
          return StageFailed(2, "Enumeration value '" + std::string(v) +
                                    "' for field '$merge.whenMatched' is not a valid value.");
        }
      }
    }
  }
  if (!ctx.options.open_target) {
    return Status(ErrorCode::kNotImplemented, "$merge is not supported here (explain, or a sub-pipeline)");
  }
  return std::unique_ptr<Stage>(std::make_unique<MergeStage>(std::move(m), ctx));
}

}  // namespace

void AddWriteStages(StageTable* table) {
  table->emplace("$out", StageDef{.parse = &ParseOut, .place = StagePlace::kLast, .in_facet = false});
  table->emplace("$merge", StageDef{.parse = &ParseMerge, .place = StagePlace::kLast, .in_facet = false});
}

}  // namespace rockdoc::internal

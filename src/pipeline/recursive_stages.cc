// pipeline/recursive_stages.cc: the stages that walk: $redact (down a
// document's subdocuments, keeping or pruning each) and $graphLookup (out
// from a document through a collection's references, breadth first).
#include <set>

#include "pipeline/stage.h"
#include "query/field_path.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

// ---- $redact ----

class RedactStage : public ExpressionStage {
 public:
  RedactStage(ExpressionPtr expr, const StageContext& ctx)
      : ExpressionStage(ctx.scope->id_count(), ctx.now_ms, ctx.options.variables),
        expr_(std::move(expr)) {}

  StatusOr<std::optional<Document>> Next() override {
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) return doc;
      ExpressionVariables vars = VariablesFor(*doc);
      BsonBuilder b;
      b.OpenDocument("v");
      ROCKDOC_ASSIGN_OR_RETURN(bool kept, Redact(doc->view(), &vars, &b));
      if (!kept) continue;
      b.Close();
      Document wrapped = std::move(b).Build();
      return std::optional<Document>(Document::AdoptValidated(std::string(wrapped.Get("v").Document().bytes())));
    }
  }

 private:
  enum class Verdict { kKeep, kPrune, kDescend };

  StatusOr<Verdict> Decide(DocumentView current, ExpressionVariables* vars) const {
    vars->current = &current;
    StatusOr<Value> v = expr_->Evaluate(*vars);
    vars->current = nullptr;
    ROCKDOC_RETURN_IF_ERROR(v.status());
    if (v->type() == BsonType::kString) {
      const std::string_view s = v->element().String();
      if (s == "keep") return Verdict::kKeep;
      if (s == "prune") return Verdict::kPrune;
      if (s == "descend") return Verdict::kDescend;
    }
    return StageFailed(17053, "$redact's expression should not return anything aside from the "
                              "variables $$KEEP, $$DESCEND, and $$PRUNE, but returned " +
                                  (v->ok() ? ValueToJson(v->element(), JsonFormat::kShell) : "missing"));
  }

  // Appends `doc` as redacted to the open document; false when pruned.
  StatusOr<bool> Redact(DocumentView doc, ExpressionVariables* vars, BsonBuilder* out) const {
    ROCKDOC_ASSIGN_OR_RETURN(Verdict verdict, Decide(doc, vars));
    if (verdict == Verdict::kPrune) return false;
    for (const Element& f : doc) {
      if (verdict == Verdict::kKeep) {
        out->AppendElement(f);
      } else if (f.type() == BsonType::kDocument) {
        BsonBuilder sub;
        sub.OpenDocument("v");
        ROCKDOC_ASSIGN_OR_RETURN(bool kept, Redact(f.Document(), vars, &sub));
        if (!kept) continue;
        sub.Close();
        Document d = std::move(sub).Build();
        out->AppendDocument(f.key(), d.Get("v").Document());
      } else if (f.type() == BsonType::kArray) {
        out->OpenArray(f.key());
        ROCKDOC_RETURN_IF_ERROR(RedactArray(f.Array(), vars, out));
        out->Close();
      } else {
        out->AppendElement(f);
      }
    }
    return true;
  }

  // An array's documents are redacted (pruned ones dropped), arrays inside
  // it walked, other values kept.
  Status RedactArray(DocumentView array, ExpressionVariables* vars, BsonBuilder* out) const {
    for (const Element& e : array) {
      if (e.type() == BsonType::kDocument) {
        BsonBuilder sub;
        sub.OpenDocument("v");
        ROCKDOC_ASSIGN_OR_RETURN(bool kept, Redact(e.Document(), vars, &sub));
        if (!kept) continue;
        sub.Close();
        Document d = std::move(sub).Build();
        out->AppendDocument("", d.Get("v").Document());
      } else if (e.type() == BsonType::kArray) {
        out->OpenArray("");
        ROCKDOC_RETURN_IF_ERROR(RedactArray(e.Array(), vars, out));
        out->Close();
      } else {
        out->AppendElement(e);
      }
    }
    return Status::OK();
  }

  ExpressionPtr expr_;
};

// ---- $graphLookup ----

struct GraphSpec {
  std::string from;
  ExpressionPtr start_with;
  std::string connect_from;
  std::string connect_to;
  std::vector<std::string> as;
  int64_t max_depth = -1;  // -1: no limit
  std::string depth_field;
  Document restrict;  // restrictSearchWithMatch ({} when none)
};


// The values at a dotted path, through arrays (each element one value).
void ValuesAt(const Element& e, const std::vector<std::string>& parts, size_t i, std::vector<Value>* out) {
  if (i == parts.size()) {
    if (e.type() == BsonType::kArray) {
      for (const Element& x : e.Array()) out->push_back(Value::FromElement(x));
    } else {
      out->push_back(Value::FromElement(e));
    }
    return;
  }
  if (e.type() == BsonType::kDocument) {
    Element child = e.Document().Get(parts[i]);
    if (child.ok()) ValuesAt(child, parts, i + 1, out);
  } else if (e.type() == BsonType::kArray) {
    for (const Element& x : e.Array()) {
      if (x.type() == BsonType::kDocument) ValuesAt(x, parts, i, out);
    }
  }
}

class GraphLookupStage : public ExpressionStage {
 public:
  GraphLookupStage(GraphSpec spec, const StageContext& ctx)
      : ExpressionStage(ctx.scope->id_count(), ctx.now_ms, ctx.options.variables),
        spec_(std::move(spec)),
        find_(ctx.find),
        options_(ctx.options) {}

  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
    if (!doc) return doc;
    ROCKDOC_ASSIGN_OR_RETURN(Value start, spec_.start_with->Evaluate(VariablesFor(*doc)));
    std::vector<Value> frontier;
    if (start.type() == BsonType::kArray) {
      for (const Element& e : start.element().Array()) frontier.push_back(Value::FromElement(e));
    } else {
      frontier.push_back(start.ok() ? start : NullValue());
    }
    std::set<Value, ValueLess> visited_ids, queried;
    BsonBuilder found;
    found.OpenArray("v");
    int64_t bytes = 0;
    const std::vector<std::string> from_parts = SplitDotted(spec_.connect_from);
    for (int64_t depth = 0; !frontier.empty() && (spec_.max_depth < 0 || depth <= spec_.max_depth); ++depth) {
      // {$and: [{connectToField: {$in: frontier}}, restrictSearchWithMatch]}
      BsonBuilder filter;
      filter.OpenArray("$and");
      filter.OpenDocument("").OpenDocument(spec_.connect_to).OpenArray("$in");
      for (const Value& v : frontier) filter.AppendElementAs("", v.element());
      filter.Close().Close().Close();
      filter.AppendDocument("", spec_.restrict.view());
      filter.Close();
      Document f = std::move(filter).Build();
      FindOptions fo;
      fo.max_time_ms = options_.FindMaxTimeMS();
      ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CursorImpl> cursor, find_(spec_.from, f.view(), fo));
      std::vector<Value> next;
      while (cursor->Next()) {
        DocumentView match = cursor->document();
        Value id = Value::FromElement(match.Get("_id"));
        if (!visited_ids.insert(id).second) continue;
        if (spec_.depth_field.empty()) {
          found.AppendDocument("", match);
        } else {
          found.OpenDocument("");
          for (const Element& e : match) {
            if (e.key() != spec_.depth_field) found.AppendElement(e);
          }
          found.AppendInt64(spec_.depth_field, depth);
          found.Close();
        }
        bytes += static_cast<int64_t>(match.size());
        if (bytes > options_.memory_limit) return MemoryExceeded("$graphLookup", options_.allow_disk_use);
        BsonBuilder wrap;
        wrap.AppendDocument("d", match);
        Document w = std::move(wrap).Build();
        std::vector<Value> values;
        ValuesAt(w.Get("d"), from_parts, 0, &values);
        for (Value& v : values) {
          if (queried.insert(v).second) next.push_back(std::move(v));
        }
      }
      ROCKDOC_RETURN_IF_ERROR(cursor->status());
      for (const Value& v : frontier) queried.insert(v);
      frontier = std::move(next);
    }
    found.Close();
    Document all = std::move(found).Build();
    // The input with `as` set (a top-level or dotted field).
    Document result = WithField(doc->view(), spec_.as, all.Get("v"));
    if (result.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
      return Status(ErrorCode::kBSONObjectTooLarge,
                    "$graphLookup: the document with its matches is over the 16 MiB limit");
    }
    return std::optional<Document>(std::move(result));
  }

 private:
  GraphSpec spec_;
  FindFn find_;
  PipelineOptions options_;
};


StatusOr<std::unique_ptr<Stage>> ParseRedact(const Element& spec, const StageContext& ctx) {
  ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr expr, ParseExpression(spec, ctx.scope));
  return std::unique_ptr<Stage>(std::make_unique<RedactStage>(std::move(expr), ctx));
}

StatusOr<std::unique_ptr<Stage>> ParseGraphLookup(const Element& spec, const StageContext& ctx) {
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(40327, "the $graphLookup stage specification must be an object, but found " +
                                  std::string(BsonTypeAlias(spec.type())));
  }
  GraphSpec g;
  Element start;
  bool has_from = false, has_as = false, has_from_field = false, has_to_field = false;
  for (const Element& f : spec.Document()) {
    const std::string_view k = f.key();
    auto string_arg = [&](std::string* out) -> Status {
      if (f.type() != BsonType::kString) {
        return StageFailed(40103, "expected string as argument for " + std::string(k) + ", found: " +
                                      ValueToJson(f, JsonFormat::kShell));
      }
      *out = std::string(f.String());
      return Status::OK();
    };
    if (k == "from") {
      ROCKDOC_RETURN_IF_ERROR(string_arg(&g.from));
      has_from = true;
    } else if (k == "startWith") {
      start = f;
    } else if (k == "connectFromField") {
      ROCKDOC_RETURN_IF_ERROR(string_arg(&g.connect_from));
      has_from_field = true;
    } else if (k == "connectToField") {
      ROCKDOC_RETURN_IF_ERROR(string_arg(&g.connect_to));
      has_to_field = true;
    } else if (k == "as") {
      std::string as;
      ROCKDOC_RETURN_IF_ERROR(string_arg(&as));
      g.as = SplitDotted(as);
      has_as = true;
    } else if (k == "depthField") {
      ROCKDOC_RETURN_IF_ERROR(string_arg(&g.depth_field));
    } else if (k == "maxDepth") {
      int64_t n = 0;
      if (!f.IsNumber() || !f.ExactInt64(&n)) {
        return StageFailed(40100, "maxDepth must be numeric, found type: " +
                                      std::string(BsonTypeAlias(f.type())));
      }
      if (n < 0) return StageFailed(40101, "maxDepth requires a nonnegative argument, found: " + std::to_string(n));
      g.max_depth = n;
    } else if (k == "restrictSearchWithMatch") {
      if (f.type() != BsonType::kDocument) {
        return StageFailed(40185, "restrictSearchWithMatch must be an object, but found " +
                                      std::string(BsonTypeAlias(f.type())));
      }
      ROCKDOC_RETURN_IF_ERROR(ParseMatchExpression(f.Document()).status());
      g.restrict = Document::AdoptValidated(std::string(f.Document().bytes()));
    } else {
      return StageFailed(40104, "Unknown argument to $graphLookup: " + std::string(k));
    }
  }
  if (!has_from || !has_as || !start.ok() || !has_from_field || !has_to_field) {
    return StageFailed(40105, "must specify 'startWith', 'connectFromField', 'connectToField', "
                              "'from', and 'as' for $graphLookup");
  }
  for (const std::string* path : {&g.connect_from, &g.connect_to, &g.depth_field}) {
    if (path->empty() && path == &g.depth_field) continue;
    for (const std::string& part : SplitDotted(*path)) {
      if (part.empty() || part[0] == '$') {
        return StageFailed(16410, "FieldPath field names may not be empty or start with '$'.");
      }
    }
  }
  ROCKDOC_ASSIGN_OR_RETURN(g.start_with, ParseExpression(start, ctx.scope));
  return std::unique_ptr<Stage>(std::make_unique<GraphLookupStage>(std::move(g), ctx));
}

}  // namespace

void AddRecursiveStages(StageTable* table) {
  table->emplace("$redact", StageDef{.parse = &ParseRedact});
  table->emplace("$graphLookup", StageDef{.parse = &ParseGraphLookup});
}

}  // namespace rockdoc::internal

// pipeline/lookup_stage.cc: $lookup (pipeline.h): localField/foreignField
// by an indexed loop, a hash join or a nested loop (MongoDB's three
// strategies, which explain names), let + pipeline with the sub-pipeline run
// per input document, and the combined form.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bson/append_number.h"
#include "pipeline/planning.h"
#include "pipeline/stage.h"
#include "query/field_path.h"

namespace rockdoc::internal {

namespace {

// The value at localField, through arrays (as a find's path would).
Value LocalValue(const Expression& local_expr, DocumentView doc) {
  ExpressionVariables vars;
  vars.root = doc;
  StatusOr<Value> v = local_expr.Evaluate(vars);
  return v.ok() ? *v : Value();
}

// The foreign side's filter for a local value: an array's elements each;
// missing matches null. One value is an equality ({f: {$eq: v}}: on an
// _id, one point read), several an $in.
StatusOr<Document> LocalMatchFilter(const Value& local, const std::string& foreign) {
  const auto refuse_regex = [] {
    return Status(ErrorCode::kNotImplemented,
                  "$lookup on a regular expression value is not supported by rockdoc");
  };
  if (local.type() == BsonType::kRegex) return refuse_regex();
  BsonBuilder filter;
  filter.OpenDocument(foreign);
  if (local.ok() && local.type() != BsonType::kUndefined && local.type() != BsonType::kArray) {
    filter.AppendElementAs("$eq", local.element());
  } else {
    filter.OpenArray("$in");
    bool any = false;
    if (local.type() == BsonType::kArray) {
      for (const Element& e : local.element().Array()) {
        if (e.type() == BsonType::kRegex) return refuse_regex();
        filter.AppendElementAs("", e);
        any = true;
      }
    }
    if (!any) filter.AppendNull("");  // missing, or an empty array: matches null (as MongoDB)
    filter.Close();
  }
  filter.Close();
  return std::move(filter).Build();
}

// The input document with its matches at `as` (16 MiB at most).
Status CheckJoinedSize(const Document& out) {
  if (out.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
    return Status(ErrorCode::kBSONObjectTooLarge,
                  "$lookup: the document with its matches is " + std::to_string(out.size()) +
                      " bytes, over the 16 MiB limit");
  }
  return Status::OK();
}

StatusOr<Document> WithMatches(DocumentView doc, const std::vector<std::string>& as,
                               const Element& matches) {
  Document out = WithField(doc, as, matches);
  ROCKDOC_RETURN_IF_ERROR(CheckJoinedSize(out));
  return out;
}

// What the finds of a $lookup examined, over all of them (MongoDB's
// totalKeysExamined and totalDocsExamined in its executionStats): each
// cursor of a Counting find adds its figures when it goes.
class ExaminedTotal {
 public:
  ExaminedTotal() : total_(std::make_shared<CursorImpl::Examined>()) {}
  FindFn Counting(FindFn find) const {
    return [find = std::move(find), total = total_](std::string_view coll, DocumentView filter,
                                                    const FindOptions& options)
               -> StatusOr<std::unique_ptr<CursorImpl>> {
      ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CursorImpl> cursor, find(coll, filter, options));
      return std::unique_ptr<CursorImpl>(std::make_unique<Counted>(std::move(cursor), total));
    };
  }
  // What a read outside a find examined (a point read: a key, and the
  // document when there was one).
  void Add(int64_t keys, int64_t docs) const {
    total_->keys += keys;
    total_->docs += docs;
  }
  void Append(BsonBuilder* out) const {
    out->AppendInt64("totalKeysExamined", total_->keys);
    out->AppendInt64("totalDocsExamined", total_->docs);
  }

 private:
  class Counted : public CursorImpl {
   public:
    Counted(std::unique_ptr<CursorImpl> inner, std::shared_ptr<CursorImpl::Examined> total)
        : inner_(std::move(inner)), total_(std::move(total)) {}
    ~Counted() override {
      const Examined e = inner_->examined();
      total_->keys += e.keys;
      total_->docs += e.docs;
    }
    bool Next() override { return inner_->Next(); }
    DocumentView document() const override { return inner_->document(); }
    Status status() const override { return inner_->status(); }
    Examined examined() const override { return inner_->examined(); }

   private:
    std::unique_ptr<CursorImpl> inner_;
    std::shared_ptr<CursorImpl::Examined> total_;
  };
  std::shared_ptr<CursorImpl::Examined> total_;
};

class LookupStage : public Stage {
 public:
  LookupStage(std::string from, std::string local_field, ExpressionPtr local,
              std::string foreign, std::string as, FindFn find, const PipelineOptions& options)
      : from_(std::move(from)),
        local_field_(std::move(local_field)),
        local_expr_(std::move(local)),
        foreign_(std::move(foreign)),
        as_(SplitDotted(as)),
        find_(examined_.Counting(std::move(find))),
        options_(options),
        local_top_level_(local_field_.find('.') == std::string::npos) {}

  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
    if (!doc) return doc;
    if (strategy_ == Strategy::kUndecided) ROCKDOC_RETURN_IF_ERROR(Decide());
    // The local value: a top-level localField read in place (no expression
    // evaluated, no copy), a dotted one through the expression (paths
    // through arrays, as a find's).
    Value evaluated;
    Element local;
    if (local_top_level_) {
      local = doc->view().Get(local_field_);
    } else {
      evaluated = LocalValue(*local_expr_, doc->view());
      if (evaluated.ok()) local = evaluated.element();
    }
    if (strategy_ == Strategy::kHash) return HashMatches(*doc, ValueOf(local));
    if (foreign_ == "_id" && options_.find_by_id && IsPointValue(local)) {
      // One value on _id: its document, if any, by a point read (the
      // equality's one match, a find would plan the same IDHACK per
      // document), written straight into the output.
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> match, options_.find_by_id(from_, local));
      examined_.Add(1, match ? 1 : 0);
      BsonBuilder out;
      SetFieldWith(doc->view(), as_, 0,
                   [&match](std::string_view key, BsonBuilder* o) {
                     o->OpenArray(key);
                     if (match) o->AppendDocument("", match->view());
                     o->Close();
                   },
                   &out);
      Document joined = std::move(out).Build();
      ROCKDOC_RETURN_IF_ERROR(CheckJoinedSize(joined));
      return std::optional<Document>(std::move(joined));
    }
    // The local values: an array's elements each; missing matches null.
    // One value is an equality ({f: {$eq: v}}), several an $in.
    ROCKDOC_ASSIGN_OR_RETURN(Document f, LocalMatchFilter(ValueOf(local), foreign_));
    FindOptions fo;
    fo.max_time_ms = options_.FindMaxTimeMS();
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CursorImpl> cursor, find_(from_, f.view(), fo));
    BsonBuilder matches;
    matches.OpenArray("v");
    while (cursor->Next()) matches.AppendDocument("", cursor->document());
    ROCKDOC_RETURN_IF_ERROR(cursor->status());
    matches.Close();
    Document m = std::move(matches).Build();
    ROCKDOC_ASSIGN_OR_RETURN(Document out, WithMatches(doc->view(), as_, m.Get("v")));
    return std::optional<Document>(std::move(out));
  }

 private:
  // A value whose equality on _id is one point read: present, and not an
  // array ($in of its elements), a regex (a pattern match), null or
  // undefined (which match null and missing).
  static bool IsPointValue(const Element& v) {
    if (!v.ok()) return false;
    const BsonType t = v.type();
    return t != BsonType::kArray && t != BsonType::kRegex && t != BsonType::kNull &&
           t != BsonType::kUndefined;
  }
  static Value ValueOf(const Element& e) { return e.ok() ? Value::FromElement(e) : Value(); }

  // MongoDB's three: an indexed loop when foreignField has an index (a find
  // per input document, which uses it), a hash join when not and the
  // foreign collection fits the memory limit (read once, keyed by
  // foreignField), a nested loop (a find, a scan, per input document)
  // otherwise.
  enum class Strategy { kUndecided, kIndexedLoop, kHash, kNestedLoop };

  Status Decide() {
    strategy_ = Strategy::kIndexedLoop;
    if (options_.has_index_on && options_.has_index_on(from_, foreign_)) return Status::OK();
    FindOptions fo;
    fo.max_time_ms = options_.FindMaxTimeMS();
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CursorImpl> cursor, find_(from_, DocumentView(), fo));
    const std::vector<std::string> parts = SplitDotted(foreign_);
    int64_t bytes = 0;
    while (cursor->Next()) {
      const DocumentView d = cursor->document();
      bytes += static_cast<int64_t>(d.size()) + 64;
      if (bytes > options_.memory_limit) {
        foreign_docs_.clear();
        table_.clear();
        strategy_ = Strategy::kNestedLoop;
        return Status::OK();
      }
      const size_t ordinal = foreign_docs_.size();
      foreign_docs_.push_back(Document::AdoptValidated(std::string(d.bytes())));
      std::vector<Value> keys;
      BsonBuilder wrap;
      wrap.AppendDocument("d", d);
      Document w = std::move(wrap).Build();
      KeysAt(w.Get("d"), parts, 0, &keys);
      if (keys.empty()) keys.push_back(NullValue());  // missing matches null
      for (Value& k : keys) {
        std::vector<size_t>& slot = table_[std::move(k)];
        if (slot.empty() || slot.back() != ordinal) slot.push_back(ordinal);
      }
    }
    ROCKDOC_RETURN_IF_ERROR(cursor->status());
    strategy_ = Strategy::kHash;
    return Status::OK();
  }

  // The values a find's equality on `parts` compares with: through arrays
  // of documents, and an array's elements (and the array itself).
  static void KeysAt(const Element& e, const std::vector<std::string>& parts, size_t i,
                     std::vector<Value>* out) {
    if (i == parts.size()) {
      out->push_back(Value::FromElement(e));
      if (e.type() == BsonType::kArray) {
        for (const Element& x : e.Array()) out->push_back(Value::FromElement(x));
      }
      return;
    }
    if (e.type() == BsonType::kDocument) {
      Element child = e.Document().Get(parts[i]);
      if (child.ok()) KeysAt(child, parts, i + 1, out);
    } else if (e.type() == BsonType::kArray) {
      for (const Element& x : e.Array()) {
        if (x.type() == BsonType::kDocument || x.type() == BsonType::kArray) KeysAt(x, parts, i, out);
      }
    }
  }

  // MongoDB's names for the strategies (the one it will use, before it runs).
  void AppendExplain(BsonBuilder* out) const override {
    Strategy s = strategy_;
    if (s == Strategy::kUndecided) {
      s = options_.has_index_on && options_.has_index_on(from_, foreign_) ? Strategy::kIndexedLoop
                                                                          : Strategy::kHash;
    }
    out->AppendString("strategy", s == Strategy::kIndexedLoop ? "IndexedLoopJoin"
                                  : s == Strategy::kHash      ? "HashJoin"
                                                              : "NestedLoopJoin");
    if (s == Strategy::kHash && strategy_ == Strategy::kHash) {
      AppendNumber(out, "foreignDocsRead", static_cast<int64_t>(foreign_docs_.size()));
    }
  }

  void AppendExecutionStats(BsonBuilder* out) const override { examined_.Append(out); }

  StatusOr<std::optional<Document>> HashMatches(const Document& doc, const Value& local) {
    std::vector<Value> wanted;
    if (local.type() == BsonType::kArray) {
      for (const Element& e : local.element().Array()) wanted.push_back(Value::FromElement(e));
    } else if (local.ok() && local.type() != BsonType::kUndefined) {
      wanted.push_back(local);
    }
    if (wanted.empty()) wanted.push_back(NullValue());  // missing, or []: matches null
    std::vector<size_t> hits;
    for (const Value& w : wanted) {
      if (w.type() == BsonType::kRegex) {
        return Status(ErrorCode::kNotImplemented,
                      "$lookup on a regular expression value is not supported by rockdoc");
      }
      const Value key = w.type() == BsonType::kUndefined ? NullValue() : w;
      auto it = table_.find(key);
      if (it != table_.end()) hits.insert(hits.end(), it->second.begin(), it->second.end());
    }
    std::sort(hits.begin(), hits.end());
    hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
    BsonBuilder matches;
    matches.OpenArray("v");
    for (size_t h : hits) matches.AppendDocument("", foreign_docs_[h].view());
    matches.Close();
    Document m = std::move(matches).Build();
    ROCKDOC_ASSIGN_OR_RETURN(Document out, WithMatches(doc.view(), as_, m.Get("v")));
    return std::optional<Document>(std::move(out));
  }

  ExaminedTotal examined_;  // before find_, which counts into it
  std::string from_;
  std::string local_field_;
  ExpressionPtr local_expr_;  // "$<localField>"
  std::string foreign_;
  std::vector<std::string> as_;
  FindFn find_;
  PipelineOptions options_;
  bool local_top_level_;  // localField names a top-level field
  Strategy strategy_ = Strategy::kUndecided;
  std::vector<Document> foreign_docs_;                         // kHash
  std::map<Value, std::vector<size_t>, ValueLess> table_;      // kHash: key -> ordinals
};

// {$lookup: {from, let, pipeline, as}} and the combined form with
// localField/foreignField: for each input document, the let variables are
// evaluated against it and the pipeline runs over `from` with them bound
// (after the foreignField equality, in the combined form, which the
// pipeline's find uses an index for).
class LookupPipelineStage : public Stage {
 public:
  struct Spec {
    std::string from;
    ExpressionPtr local;  // null unless the combined form
    std::string foreign;
    std::vector<std::string> as;
    std::vector<std::pair<int, ExpressionPtr>> let;  // ids in `scope`
    VariableScope scope;  // the outer names, then let's
    Document pipeline;    // the array
  };
  LookupPipelineStage(Spec spec, FindFn find, const PipelineOptions& options)
      : spec_(std::move(spec)), find_(examined_.Counting(std::move(find))), options_(options) {}
  void AppendExecutionStats(BsonBuilder* out) const override { examined_.Append(out); }

  StatusOr<std::optional<Document>> Next() override {
    ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
    if (!doc) return doc;
    auto bound = std::make_shared<FilterVariables>();
    bound->scope = spec_.scope;
    if (options_.variables != nullptr) bound->values = options_.variables->values;
    bound->values.resize(static_cast<size_t>(spec_.scope.id_count()));
    ExpressionVariables vars;
    vars.root = doc->view();
    vars.user = bound->values;
    for (const auto& [id, expr] : spec_.let) {
      ROCKDOC_ASSIGN_OR_RETURN(Value v, expr->Evaluate(vars));
      bound->values[static_cast<size_t>(id)] = std::move(v);
    }
    Document pipeline = spec_.pipeline;
    if (spec_.local != nullptr) {
      // The foreignField equality first, as a $match the find runs.
      ROCKDOC_ASSIGN_OR_RETURN(Document f, LocalMatchFilter(LocalValue(*spec_.local, doc->view()), spec_.foreign));
      BsonBuilder b;
      b.OpenDocument("0").AppendDocument("$match", f.view()).Close();
      int i = 1;
      for (const Element& stage : spec_.pipeline.view()) {
        b.AppendElementAs(std::to_string(i++), stage);
      }
      pipeline = std::move(b).Build();
    }
    PipelineOptions sub = options_;
    sub.variables = std::move(bound);
    sub.hint.reset();
    sub.hint_name.reset();
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<DocumentSource> source,
                             OpenPipeline(spec_.from, pipeline.view(), sub, find_));
    BsonBuilder matches;
    matches.OpenArray("v");
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> match, source->Next());
      if (!match) break;
      matches.AppendDocument("", match->view());
    }
    matches.Close();
    Document m = std::move(matches).Build();
    ROCKDOC_ASSIGN_OR_RETURN(Document out, WithMatches(doc->view(), spec_.as, m.Get("v")));
    return std::optional<Document>(std::move(out));
  }

 private:
  ExaminedTotal examined_;  // before find_, which counts into it
  Spec spec_;
  FindFn find_;
  PipelineOptions options_;
};

// The let + pipeline form (and the combined one), `s` holding all but the
// scope and the let variables: the let values parsed over the input
// document, the sub-pipeline checked now, before anything is read, parsed
// with the let names bound (their values do not matter to parsing).
StatusOr<std::unique_ptr<Stage>> ParseLookupPipeline(LookupPipelineStage::Spec s,
                                                     const Element& let,
                                                     const StageContext& ctx) {
  const PipelineOptions& options = ctx.options;
  if (options.variables != nullptr) s.scope = options.variables->scope;
  if (let.ok()) {
    // The values are expressions over the input document (and the
    // outer variables); the pipeline sees the names.
    std::vector<std::pair<std::string_view, ExpressionPtr>> parsed;
    VariableScope outer = s.scope;
    for (const Element& v : let.Document()) {
      ROCKDOC_ASSIGN_OR_RETURN(ExpressionPtr e, ParseExpression(v, &outer));
      parsed.emplace_back(v.key(), std::move(e));
    }
    for (auto& [name, e] : parsed) {
      ROCKDOC_ASSIGN_OR_RETURN(int id, s.scope.Define(name));
      s.let.emplace_back(id, std::move(e));
    }
  }
  for (const Element& stage : s.pipeline.view()) {
    if (stage.type() == BsonType::kDocument && !stage.Document().empty()) {
      const std::string_view name = (*stage.Document().begin()).key();
      if (IsWriteStage(name)) {
        return StageFailed(51047, std::string(name) + " is not allowed within a $lookup's sub-pipeline");
      }
    }
  }
  PipelineOptions check = options;
  check.variables = std::make_shared<FilterVariables>();
  check.variables->scope = s.scope;
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> stages, StageElements(s.pipeline.view()));
  ROCKDOC_RETURN_IF_ERROR(ParseStages(stages, 0, check, ctx.find, /*in_facet=*/false).status());
  return std::unique_ptr<Stage>(std::make_unique<LookupPipelineStage>(std::move(s), ctx.find, options));
}

StatusOr<std::unique_ptr<Stage>> ParseLookup(const Element& spec, const StageContext& ctx) {
  const FindFn& find = ctx.find;
  const PipelineOptions& options = ctx.options;
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(9, "the $lookup specification must be an Object, but found " +
                              std::string(BsonTypeAlias(spec.type())));
  }
  std::optional<std::string> from, local, foreign, as;
  Element let, pipeline;
  for (const Element& f : spec.Document()) {
    const std::string_view k = f.key();
    if (k == "let") {
      if (f.type() != BsonType::kDocument) {
        return StageFailed(9, "$lookup argument 'let' must be an object, is type " +
                                  std::string(BsonTypeAlias(f.type())));
      }
      let = f;
      continue;
    }
    if (k == "pipeline") {
      if (f.type() != BsonType::kArray) {
        return StageFailed(9, "'pipeline' option must be specified as an array");
      }
      pipeline = f;
      continue;
    }
    std::optional<std::string>* slot = k == "from"           ? &from
                                       : k == "localField"   ? &local
                                       : k == "foreignField" ? &foreign
                                       : k == "as"           ? &as
                                                             : nullptr;
    if (slot == nullptr) {
      return StageFailed(9, "unknown argument to $lookup: " + std::string(k));
    }
    if (f.type() != BsonType::kString) {
      return StageFailed(9, "$lookup argument '" + std::string(k) + ": " + Shown(f) +
                                "' must be a string, is type " +
                                std::string(BsonTypeAlias(f.type())));
    }
    *slot = std::string(f.String());
  }
  if (!as) return StageFailed(9, "must specify 'as' field for a $lookup");
  if (!from) return StageFailed(9, "must specify 'from' field for a $lookup");
  if (local.has_value() != foreign.has_value()) {
    return StageFailed(9,
                       "$lookup requires both or neither of 'localField' and 'foreignField' to be "
                       "specified");
  }
  if (let.ok() && !pipeline.ok()) {
    return StageFailed(9, "$lookup with 'let' requires a 'pipeline'");
  }
  if (!pipeline.ok() && !local) {
    return StageFailed(9,
                       "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' "
                       "to be specified");
  }
  std::vector<const std::string*> paths = {&*as};
  if (local) {
    paths.push_back(&*local);
    paths.push_back(&*foreign);
  }
  for (const std::string* path : paths) ROCKDOC_RETURN_IF_ERROR(SplitFieldPath(*path).status());
  ExpressionPtr local_expr;
  if (local) {
    BsonBuilder path;
    path.AppendString("p", "$" + *local);
    Document path_doc = std::move(path).Build();
    VariableScope scope;
    ROCKDOC_ASSIGN_OR_RETURN(local_expr, ParseExpression(path_doc.Get("p"), &scope));
  }
  if (pipeline.ok()) {
    LookupPipelineStage::Spec s;
    s.from = std::move(*from);
    s.local = std::move(local_expr);
    s.foreign = local ? std::move(*foreign) : std::string();
    s.as = SplitDotted(*as);
    s.pipeline = Document::AdoptValidated(std::string(pipeline.Array().bytes()));
    return ParseLookupPipeline(std::move(s), let, ctx);
  }
  return std::unique_ptr<Stage>(std::make_unique<LookupStage>(
      std::move(*from), *local, std::move(local_expr), std::move(*foreign), std::move(*as),
      std::move(find), options));
}

// A $match passes a $lookup into another field.
bool LookupChangedRoots(const Element& stage, std::set<std::string>* changed) {
  if (stage.type() != BsonType::kDocument) return false;
  const Element as = stage.Document().Get("as");
  if (as.type() != BsonType::kString) return false;
  changed->insert(RootOf(as.String()));
  return true;
}

}  // namespace

void AddLookupStage(StageTable* table) {
  table->emplace("$lookup", StageDef{.parse = &ParseLookup, .changed_roots = &LookupChangedRoots});
}

}  // namespace rockdoc::internal

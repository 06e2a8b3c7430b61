#include "scenario.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/option_table.h"
#include "rockdoc/json.h"

#ifndef ROCKDOC_LAB_SCENARIO_DIR
#define ROCKDOC_LAB_SCENARIO_DIR ""
#endif
#ifndef ROCKDOC_LAB_INSTALLED_SCENARIO_DIR
#define ROCKDOC_LAB_INSTALLED_SCENARIO_DIR ""
#endif

namespace rockdoc::lab {
namespace {

Document Wrap(const Element& e) {
  BsonBuilder b;
  b.AppendElementAs("v", e);
  return std::move(b).Build();
}

Status Invalid(const std::string& where, const std::string& what) {
  return BadValue("scenario " + where + ": " + what);
}

StatusOr<std::string> GetString(DocumentView d, std::string_view field, const std::string& where,
                                bool required) {
  Element e = d.Get(field);
  if (!e.ok()) {
    if (required) return Invalid(where, "missing \"" + std::string(field) + "\"");
    return std::string();
  }
  if (e.type() != BsonType::kString) {
    return Invalid(where, "\"" + std::string(field) + "\" must be a string");
  }
  return std::string(e.String());
}

StatusOr<int64_t> GetInt(DocumentView d, std::string_view field, int64_t fallback,
                         const std::string& where) {
  Element e = d.Get(field);
  if (!e.ok()) return fallback;
  int64_t v = 0;
  if (!e.ExactInt64(&v)) return Invalid(where, "\"" + std::string(field) + "\" must be an integer");
  return v;
}

StatusOr<Document> GetDocument(DocumentView d, std::string_view field, const std::string& where) {
  Element e = d.Get(field);
  if (!e.ok()) return Document();
  if (e.type() != BsonType::kDocument) {
    return Invalid(where, "\"" + std::string(field) + "\" must be an object");
  }
  return Document::AdoptValidated(std::string(e.Document().bytes()));
}

StatusOr<std::vector<Document>> ParseOps(const Element& e, const std::string& where) {
  std::vector<Document> ops;
  if (!e.ok()) return ops;
  if (e.type() != BsonType::kArray) return Invalid(where, "operations must be an array");
  for (const Element& op : e.Array()) {
    if (op.type() != BsonType::kDocument || op.Document().Get("op").type() != BsonType::kString) {
      return Invalid(where, "each operation is an object with a string \"op\": " +
                                ValueToJson(op));
    }
    ops.push_back(Document::AdoptValidated(std::string(op.Document().bytes())));
  }
  return ops;
}

// An operation list is either an array of operations or {ops, answer}.
StatusOr<OpList> ParseOpList(const Element& e, const std::string& where) {
  OpList list;
  if (!e.ok()) return list;
  if (e.type() == BsonType::kArray) {
    ROCKDOC_ASSIGN_OR_RETURN(list.ops, ParseOps(e, where));
    return list;
  }
  if (e.type() != BsonType::kDocument) return Invalid(where, "expected {ops, answer} or [ops]");
  ROCKDOC_ASSIGN_OR_RETURN(list.ops, ParseOps(e.Document().Get("ops"), where));
  if (Element a = e.Document().Get("answer"); a.ok()) list.answer = Wrap(a);
  return list;
}

StatusOr<Profile> ParseProfile(DocumentView profiles, std::string_view name,
                               const Profile* fallback, const std::string& where) {
  Element e = profiles.Get(name);
  if (!e.ok()) {
    if (fallback != nullptr) return *fallback;
    return Invalid(where, "missing profile \"" + std::string(name) + "\"");
  }
  if (e.type() != BsonType::kDocument) return Invalid(where, "a profile must be an object");
  DocumentView d = e.Document();
  std::string w = where + " profile " + std::string(name);
  Profile p;
  Element sizes = d.Get("sizes");
  if (sizes.type() != BsonType::kArray) return Invalid(w, "\"sizes\" must be an array");
  for (const Element& s : sizes.Array()) {
    int64_t v = 0;
    if (!s.ExactInt64(&v) || v < 0) return Invalid(w, "sizes are non-negative integers");
    p.sizes.push_back(v);
  }
  if (p.sizes.empty()) return Invalid(w, "\"sizes\" is empty");
  ROCKDOC_ASSIGN_OR_RETURN(int64_t reps, GetInt(d, "repetitions", 3, w));
  ROCKDOC_ASSIGN_OR_RETURN(int64_t reads, GetInt(d, "readOps", 100, w));
  ROCKDOC_ASSIGN_OR_RETURN(int64_t writes, GetInt(d, "writeOps", 100, w));
  if (reps < 1 || reads < 1 || writes < 1) {
    return Invalid(w, "repetitions, readOps and writeOps must be at least 1");
  }
  p.repetitions = static_cast<int>(reps);
  p.read_ops = static_cast<int>(reads);
  p.write_ops = static_cast<int>(writes);
  ROCKDOC_ASSIGN_OR_RETURN(p.params, GetDocument(d, "params", w));
  return p;
}

}  // namespace

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kFull: return "full";
    case Mode::kQuick: return "quick";
    case Mode::kTest: return "test";
  }
  return "?";
}

const Profile& ProfileFor(const Scenario& s, Mode mode) {
  switch (mode) {
    case Mode::kQuick: return s.quick;
    case Mode::kTest: return s.test;
    default: return s.full;
  }
}

StatusOr<Scenario> ParseScenario(std::string_view json) {
  ROCKDOC_ASSIGN_OR_RETURN(Document doc, FromJson(json));
  DocumentView d = doc.view();
  Scenario s;
  ROCKDOC_ASSIGN_OR_RETURN(s.name, GetString(d, "name", "file", true));
  const std::string where = "\"" + s.name + "\"";
  ROCKDOC_ASSIGN_OR_RETURN(s.title, GetString(d, "title", where, false));
  if (s.title.empty()) s.title = s.name;
  ROCKDOC_ASSIGN_OR_RETURN(s.description, GetString(d, "description", where, false));
  ROCKDOC_ASSIGN_OR_RETURN(std::string label, GetString(d, "sizeLabel", where, false));
  if (!label.empty()) s.size_label = label;
  ROCKDOC_ASSIGN_OR_RETURN(s.params, GetDocument(d, "params", where));
  ROCKDOC_ASSIGN_OR_RETURN(Document let, GetDocument(d, "let", where));
  ROCKDOC_ASSIGN_OR_RETURN(s.read_let, GetDocument(let, "read", where + " let"));
  ROCKDOC_ASSIGN_OR_RETURN(s.write_let, GetDocument(let, "write", where + " let"));

  ROCKDOC_ASSIGN_OR_RETURN(Document profiles, GetDocument(d, "profiles", where));
  ROCKDOC_ASSIGN_OR_RETURN(s.full, ParseProfile(profiles, "full", nullptr, where));
  ROCKDOC_ASSIGN_OR_RETURN(s.quick, ParseProfile(profiles, "quick", &s.full, where));
  ROCKDOC_ASSIGN_OR_RETURN(s.test, ParseProfile(profiles, "test", &s.quick, where));

  Element variants = d.Get("variants");
  if (variants.type() != BsonType::kArray || variants.Array().empty()) {
    return Invalid(where, "\"variants\" must be a non-empty array");
  }
  for (const Element& ve : variants.Array()) {
    if (ve.type() != BsonType::kDocument) return Invalid(where, "a variant must be an object");
    DocumentView vd = ve.Document();
    Variant v;
    ROCKDOC_ASSIGN_OR_RETURN(v.name, GetString(vd, "name", where + " variant", true));
    const std::string vw = where + " variant " + v.name;
    ROCKDOC_ASSIGN_OR_RETURN(v.description, GetString(vd, "description", vw, false));
    ROCKDOC_ASSIGN_OR_RETURN(std::string engine, GetString(vd, "engine", vw, false));
    if (engine == "sqlite") {
      v.engine = EngineKind::kSqlite;
    } else if (!engine.empty() && engine != "rockdoc") {
      return Invalid(vw, "\"engine\" is \"rockdoc\" or \"sqlite\"");
    }
    ROCKDOC_ASSIGN_OR_RETURN(v.mirrors, GetString(vd, "mirrors", vw, false));
    ROCKDOC_ASSIGN_OR_RETURN(v.max_size, GetInt(vd, "maxSize", 0, vw));
    if (Element codes = vd.Get("setupMayFail"); codes.ok()) {
      if (codes.type() != BsonType::kArray) return Invalid(vw, "\"setupMayFail\" is an array of codes");
      for (const Element& c : codes.Array()) {
        int64_t code = 0;
        if (!c.ExactInt64(&code)) return Invalid(vw, "\"setupMayFail\" holds error codes");
        v.setup_may_fail.push_back(static_cast<int32_t>(code));
      }
    }
    ROCKDOC_ASSIGN_OR_RETURN(v.setup, ParseOpList(vd.Get("setup"), vw + " setup"));
    ROCKDOC_ASSIGN_OR_RETURN(v.read, ParseOpList(vd.Get("read"), vw + " read"));
    ROCKDOC_ASSIGN_OR_RETURN(v.write, ParseOpList(vd.Get("write"), vw + " write"));
    ROCKDOC_ASSIGN_OR_RETURN(v.dump, ParseOpList(vd.Get("dump"), vw + " dump"));
    if (v.read.ops.empty() || v.write.ops.empty()) {
      return Invalid(vw, "needs \"read\" and \"write\" operations");
    }
    for (const Variant& other : s.variants) {
      if (other.name == v.name) return Invalid(vw, "duplicate variant name");
    }
    s.variants.push_back(std::move(v));
  }
  for (const Variant& v : s.variants) {
    if (v.mirrors.empty()) continue;
    auto it = std::find_if(s.variants.begin(), s.variants.end(),
                           [&](const Variant& x) { return x.name == v.mirrors; });
    if (it == s.variants.end() || it->engine != EngineKind::kRockdoc) {
      return Invalid(where + " variant " + v.name, "mirrors no rockdoc variant " + v.mirrors);
    }
  }
  if (s.variants.front().engine != EngineKind::kRockdoc) {
    return Invalid(where, "the first variant (the reference of the invariants) runs on rockdoc");
  }
  if (Element rules = d.Get("rulesOfThumb"); rules.ok()) {
    const std::string rw = where + " rulesOfThumb";
    if (rules.type() != BsonType::kArray) return Invalid(rw, "must be an array");
    for (const Element& re : rules.Array()) {
      if (re.type() != BsonType::kDocument) return Invalid(rw, "a rule is {text, claims}");
      RuleOfThumb rule;
      ROCKDOC_ASSIGN_OR_RETURN(rule.text, GetString(re.Document(), "text", rw, true));
      Element claims = re.Document().Get("claims");
      if (claims.type() != BsonType::kArray) return Invalid(rw, "\"claims\" must be an array");
      for (const Element& ce : claims.Array()) {
        if (ce.type() != BsonType::kDocument) return Invalid(rw, "a claim is an object");
        DocumentView cd = ce.Document();
        Claim c;
        ROCKDOC_ASSIGN_OR_RETURN(c.variant, GetString(cd, "variant", rw, true));
        ROCKDOC_ASSIGN_OR_RETURN(c.metric, GetString(cd, "wins", rw, true));
        ROCKDOC_ASSIGN_OR_RETURN(c.from, GetInt(cd, "from", 0, rw));
        ROCKDOC_ASSIGN_OR_RETURN(c.to, GetInt(cd, "to", INT64_MAX, rw));
        if (std::none_of(s.variants.begin(), s.variants.end(), [&](const Variant& v) {
              return v.name == c.variant && v.engine == EngineKind::kRockdoc;
            })) {
          return Invalid(rw, "no rockdoc variant named " + c.variant);
        }
        rule.claims.push_back(std::move(c));
      }
      s.rules.push_back(std::move(rule));
    }
  }
  if (Element mixes = d.Get("mixes"); mixes.ok()) {
    if (mixes.type() != BsonType::kArray) return Invalid(where, "\"mixes\" must be an array");
    for (const Element& m : mixes.Array()) {
      int64_t r = 0, w = 0;
      if (m.type() != BsonType::kArray || m.Array().CountFields() != 2 ||
          !m.Array().Get("0").ExactInt64(&r) || !m.Array().Get("1").ExactInt64(&w) || r < 0 ||
          w < 0 || r + w == 0) {
        return Invalid(where, "a mix is [reads, writes], non-negative, not both 0");
      }
      s.mixes.emplace_back(r, w);
    }
  }
  for (const RuleOfThumb& rule : s.rules) {
    for (const Claim& c : rule.claims) {
      bool known = c.metric == "reads" || c.metric == "writes" || c.metric == "disk";
      for (auto [r, w] : s.mixes) known = known || c.metric == std::to_string(r) + ":" + std::to_string(w);
      if (!known) {
        return Invalid(where + " rulesOfThumb",
                       "\"wins\" is reads, writes, disk or one of the mixes (\"1000:1\"), not " +
                           c.metric);
      }
    }
  }

  if (Element limits = d.Get("limits"); limits.ok()) {
    if (limits.type() != BsonType::kArray) return Invalid(where, "\"limits\" must be an array");
    for (const Element& le : limits.Array()) {
      if (le.type() != BsonType::kDocument) return Invalid(where, "a limit must be an object");
      DocumentView ld = le.Document();
      const std::string lw = where + " limit";
      LimitStep l;
      ROCKDOC_ASSIGN_OR_RETURN(l.title, GetString(ld, "title", lw, false));
      ROCKDOC_ASSIGN_OR_RETURN(l.variant, GetString(ld, "variant", lw, true));
      if (std::none_of(s.variants.begin(), s.variants.end(),
                       [&](const Variant& v) { return v.name == l.variant; })) {
        return Invalid(lw, "no variant named " + l.variant);
      }
      ROCKDOC_ASSIGN_OR_RETURN(l.size, GetInt(ld, "size", 0, lw));
      ROCKDOC_ASSIGN_OR_RETURN(Document target, GetDocument(ld, "target", lw));
      ROCKDOC_ASSIGN_OR_RETURN(l.collection, GetString(target, "collection", lw + " target", true));
      ROCKDOC_ASSIGN_OR_RETURN(l.target_filter, GetDocument(target, "filter", lw + " target"));
      ROCKDOC_ASSIGN_OR_RETURN(l.step, ParseOps(ld.Get("step"), lw + " step"));
      if (l.step.empty()) return Invalid(lw, "needs \"step\" operations");
      if (Element m = ld.Get("measure"); m.ok()) l.measure = Wrap(m);
      ROCKDOC_ASSIGN_OR_RETURN(l.max_steps, GetInt(ld, "maxSteps", 100000, lw));
      ROCKDOC_ASSIGN_OR_RETURN(int64_t code, GetInt(ld, "expectCode", 0, lw));
      l.expect_code = static_cast<int32_t>(code);
      s.limits.push_back(std::move(l));
    }
  }
  return s;
}

StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorCode::kNonExistentPath, "cannot read scenario file " + path);
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<Scenario> s = ParseScenario(text.str());
  if (!s.ok()) return s.status().WithContext(path);
  s->source_path = path;
  return s;
}

StatusOr<std::vector<Scenario>> LoadScenarioDir(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  }
  if (ec) return Status(ErrorCode::kNonExistentPath, "cannot list " + dir + ": " + ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<Scenario> out;
  for (const std::string& p : paths) {
    ROCKDOC_ASSIGN_OR_RETURN(Scenario s, LoadScenarioFile(p));
    out.push_back(std::move(s));
  }
  return out;
}

std::string DefaultScenarioDir() {
  for (const char* dir : {ROCKDOC_LAB_SCENARIO_DIR, ROCKDOC_LAB_INSTALLED_SCENARIO_DIR}) {
    std::error_code ec;
    if (*dir != '\0' && std::filesystem::is_directory(dir, ec)) return dir;
  }
  return "";
}

// ---- Executor ----

Collection RockdocExecutor::Coll(DocumentView op) const {
  Element c = op.Get("collection");
  Database db = session_ != nullptr ? session_->GetDatabase(db_) : client_->GetDatabase(db_);
  return db.GetCollection(c.type() == BsonType::kString ? c.String() : "");
}

Status RockdocExecutor::Explain(const Collection& c, DocumentView filter,
                                const FindOptions* find) {
  if (explain_ == nullptr) return Status::OK();
  StatusOr<Document> plan =
      find != nullptr ? c.ExplainFind(filter, *find, ExplainVerbosity::kExecutionStats)
                      : c.ExplainCount(filter, CountOptions(), ExplainVerbosity::kExecutionStats);
  ROCKDOC_RETURN_IF_ERROR(plan.status());
  Element stats = plan->Get("executionStats");
  if (stats.type() != BsonType::kDocument) return InternalError("explain has no executionStats");
  int64_t keys = 0, docs = 0;
  stats.Document().Get("totalKeysExamined").ExactInt64(&keys);
  stats.Document().Get("totalDocsExamined").ExactInt64(&docs);
  explain_->keys_examined += keys;
  explain_->docs_examined += docs;
  return Status::OK();
}

Status Executor::Run(const std::vector<Document>& ops, Env& env) {
  for (const Document& op : ops) {
    Status st = RunOne(op, env);
    if (!st.ok()) return st;
  }
  return Status::OK();
}

StatusOr<Value> Executor::RunForAnswer(const OpList& list, Env& env) {
  ROCKDOC_RETURN_IF_ERROR(Run(list.ops, env));
  if (!list.has_answer()) return NullValue();
  return Evaluate(list.answer.Get("v"), env);
}

void Executor::Bind(DocumentView op, Env& env, Value v) {
  if (Element as = op.Get("as"); as.type() == BsonType::kString) {
    env.Set(std::string(as.String()), std::move(v));
  }
}

Status Executor::WithContext(const Status& st, DocumentView op) {
  return st.ok() ? st : st.WithContext(std::string(op.Get("op").String()) + " " + ToJson(op));
}

Status ForEachItem(const Element& t, const Env& env,
                   const std::function<Status(const Element&)>& fn) {
  if (t.type() == BsonType::kDocument && t.Document().CountFields() == 1 &&
      t.Document().Get("$$generate").type() == BsonType::kDocument) {
    DocumentView spec = t.Document().Get("$$generate").Document();
    ROCKDOC_ASSIGN_OR_RETURN(Value count_v, Evaluate(spec.Get("count"), env));
    int64_t count = 0;
    if (!count_v.element().ExactInt64(&count)) return BadValue("$$generate: bad count");
    const std::string var =
        spec.Get("as").type() == BsonType::kString ? std::string(spec.Get("as").String()) : "i";
    for (int64_t i = 0; i < count; ++i) {
      Env inner(&env);
      inner.Set(var, IntValue(i));
      ROCKDOC_ASSIGN_OR_RETURN(Value item, Evaluate(spec.Get("template"), inner));
      ROCKDOC_RETURN_IF_ERROR(fn(item.element()));
    }
    return Status::OK();
  }
  ROCKDOC_ASSIGN_OR_RETURN(Value list, Evaluate(t, env));
  if (list.type() != BsonType::kArray) return BadValue("expected an array of items");
  for (const Element& e : list.element().Array()) ROCKDOC_RETURN_IF_ERROR(fn(e));
  return Status::OK();
}

Status Executor::RunOne(DocumentView op, Env& env) {
  const std::string name(op.Get("op").String());
  if (name == "let") {
    // Sequential: a later variable may use an earlier one.
    Element vars = op.Get("vars");
    if (vars.type() != BsonType::kDocument) {
      return WithContext(BadValue("\"vars\" must be an object"), op);
    }
    for (const Element& v : vars.Document()) {
      ROCKDOC_ASSIGN_OR_RETURN(Value value, Evaluate(v, env));
      env.Set(std::string(v.key()), std::move(value));
    }
    return Status::OK();
  }
  if (name == "forEach") {
    // {in: array, as: "x", do: [ops], collect: <template>, into: "name"}:
    // the loop's variables stay inside it; only `into` comes out.
    ROCKDOC_ASSIGN_OR_RETURN(Value input, Evaluate(op.Get("in"), env));
    if (input.type() != BsonType::kArray) {
      return WithContext(BadValue("\"in\" must be an array"), op);
    }
    std::string var = op.Get("as").type() == BsonType::kString ? std::string(op.Get("as").String())
                                                                 : "this";
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> body, ParseOps(op.Get("do"), "forEach"));
    Element collect = op.Get("collect");
    BsonBuilder b;
    b.OpenArray("v");
    for (const Element& e : input.element().Array()) {
      Env inner(&env);
      inner.Set(var, Value::FromElement(e));
      ROCKDOC_RETURN_IF_ERROR(Run(body, inner));
      if (collect.ok()) ROCKDOC_RETURN_IF_ERROR(AppendEvaluated(collect, inner, "", b));
    }
    b.Close();
    Document d = std::move(b).Build();
    if (Element into = op.Get("into"); into.type() == BsonType::kString) {
      env.Set(std::string(into.String()), Value::FromElement(d.Get("v")));
    }
    return Status::OK();
  }
  if (name == "transaction") {
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> body, ParseOps(op.Get("do"), "transaction"));
    return WithContext(RunTransaction(body, env), op);
  }
  return RunEngineOp(name, op, env);
}

Status Executor::RunTransaction(const std::vector<Document>&, Env&) {
  return NotImplemented("this engine does not run the lab's transaction operation");
}

Status RockdocExecutor::RunTransaction(const std::vector<Document>& body, Env& env) {
  if (session_ != nullptr) return BadValue("transactions do not nest");
  ROCKDOC_ASSIGN_OR_RETURN(Session session, client_->StartSession());
  session_ = &session;
  Status s = session.WithTransaction([&](Session&) {
    // Variables bound by the body are kept only from the attempt that commits.
    Env attempt(&env);
    ROCKDOC_RETURN_IF_ERROR(Run(body, attempt));
    attempt.MoveInto(env);
    return Status::OK();
  });
  session_ = nullptr;
  return s;
}

namespace {

// The fields each engine operation reads, as option tables
// (common/option_table.h): a field with no row (a typo, an option such as
// collation that the executor does not pass on) is an error, never dropped.
// The values are read, and checked, where the operation runs.
struct OpFields {};
Status ReadByTheOperation(const Element&, OpFields*) { return Status::OK(); }
#define ROCKDOC_LAB_OP_FIELDS(...)                                              \
  {"op", &ReadByTheOperation}, {"collection", &ReadByTheOperation},             \
      {"as", &ReadByTheOperation}, __VA_ARGS__
#define ROCKDOC_LAB_FIELD(name) {name, &ReadByTheOperation}
constexpr internal::OptionField<OpFields> kInsertOneFields[] = {
    ROCKDOC_LAB_OP_FIELDS(ROCKDOC_LAB_FIELD("document"))};
constexpr internal::OptionField<OpFields> kInsertManyFields[] = {
    ROCKDOC_LAB_OP_FIELDS(ROCKDOC_LAB_FIELD("documents"))};
constexpr internal::OptionField<OpFields> kCreateIndexFields[] = {
    ROCKDOC_LAB_OP_FIELDS(ROCKDOC_LAB_FIELD("keys"), ROCKDOC_LAB_FIELD("options"))};
constexpr internal::OptionField<OpFields> kFindFields[] = {ROCKDOC_LAB_OP_FIELDS(
    ROCKDOC_LAB_FIELD("filter"), ROCKDOC_LAB_FIELD("sort"), ROCKDOC_LAB_FIELD("projection"),
    ROCKDOC_LAB_FIELD("hint"), ROCKDOC_LAB_FIELD("limit"), ROCKDOC_LAB_FIELD("skip"))};
constexpr internal::OptionField<OpFields> kFilterFields[] = {
    ROCKDOC_LAB_OP_FIELDS(ROCKDOC_LAB_FIELD("filter"))};
constexpr internal::OptionField<OpFields> kUpdateFields[] = {
    ROCKDOC_LAB_OP_FIELDS(ROCKDOC_LAB_FIELD("filter"), ROCKDOC_LAB_FIELD("update"),
                          ROCKDOC_LAB_FIELD("upsert"), ROCKDOC_LAB_FIELD("arrayFilters"))};
constexpr internal::OptionField<OpFields> kReplaceFields[] = {ROCKDOC_LAB_OP_FIELDS(
    ROCKDOC_LAB_FIELD("filter"), ROCKDOC_LAB_FIELD("replacement"), ROCKDOC_LAB_FIELD("upsert"))};
constexpr internal::OptionField<OpFields> kDropFields[] = {ROCKDOC_LAB_OP_FIELDS()};
#undef ROCKDOC_LAB_FIELD
#undef ROCKDOC_LAB_OP_FIELDS

template <size_t N>
Status CheckOpFields(const std::string& name, DocumentView op,
                     const internal::OptionField<OpFields> (&table)[N]) {
  OpFields unused;
  return internal::DecodeOptions(
      op, table, &unused,
      [&](std::string_view field) {
        return Status(ErrorCode::kUnknownBsonField, "BSON field '" + name + "." +
                                                        std::string(field) +
                                                        "' is an unknown field.");
      },
      [](std::string_view) { return Status::OK(); });
}

Status CheckEngineOpFields(const std::string& name, DocumentView op) {
  if (name == "insertOne") return CheckOpFields(name, op, kInsertOneFields);
  if (name == "insertMany") return CheckOpFields(name, op, kInsertManyFields);
  if (name == "createIndex") return CheckOpFields(name, op, kCreateIndexFields);
  if (name == "find" || name == "findOne") return CheckOpFields(name, op, kFindFields);
  if (name == "count" || name == "deleteOne" || name == "deleteMany") {
    return CheckOpFields(name, op, kFilterFields);
  }
  if (name == "updateOne" || name == "updateMany") return CheckOpFields(name, op, kUpdateFields);
  if (name == "replaceOne") return CheckOpFields(name, op, kReplaceFields);
  if (name == "drop") return CheckOpFields(name, op, kDropFields);
  return Status::OK();  // an unknown operation is refused below
}

}  // namespace

Status RockdocExecutor::RunEngineOp(const std::string& name, DocumentView op, Env& env) {
  ROCKDOC_RETURN_IF_ERROR(WithContext(CheckEngineOpFields(name, op), op));
  auto bind = [&](Value v) { Bind(op, env, std::move(v)); };
  auto with_context = [&](Status st) { return WithContext(st, op); };
  Collection c = Coll(op);

  if (name == "insertOne") {
    ROCKDOC_ASSIGN_OR_RETURN(Document doc, EvaluateDocument(op.Get("document"), env));
    auto r = c.InsertOne(doc);
    if (!r.ok()) return with_context(r.status());
    bind(Value(r->inserted_id));
    return Status::OK();
  }
  if (name == "insertMany") {
    // Inserted in batches as the documents are generated.
    constexpr size_t kBatch = 1000;
    std::vector<Document> batch;
    auto flush = [&]() -> Status {
      if (batch.empty()) return Status::OK();
      auto r = c.InsertMany(batch);
      batch.clear();
      if (!r.ok()) return r.status();
      return r->ok() ? Status::OK() : r->write_errors.front().status;
    };
    Status st = ForEachItem(op.Get("documents"), env, [&](const Element& e) -> Status {
      if (e.type() != BsonType::kDocument) return BadValue("\"documents\" holds a non-document");
      batch.push_back(Document::AdoptValidated(std::string(e.Document().bytes())));
      return batch.size() == kBatch ? flush() : Status::OK();
    });
    if (st.ok()) st = flush();
    return with_context(st);
  }
  if (name == "createIndex") {
    ROCKDOC_ASSIGN_OR_RETURN(Document keys, EvaluateDocument(op.Get("keys"), env));
    ROCKDOC_ASSIGN_OR_RETURN(Document opts, EvaluateDocument(op.Get("options"), env));
    // The library decodes the options: one that rockdoc lacks is an error,
    // never silently dropped.
    auto r = c.CreateIndexes({IndexModel{std::move(keys), std::move(opts)}});
    return with_context(r.status());
  }
  if (name == "find" || name == "findOne") {
    ROCKDOC_ASSIGN_OR_RETURN(Document filter, EvaluateDocument(op.Get("filter"), env));
    FindOptions fo;
    ROCKDOC_ASSIGN_OR_RETURN(fo.sort, EvaluateDocument(op.Get("sort"), env));
    ROCKDOC_ASSIGN_OR_RETURN(fo.projection, EvaluateDocument(op.Get("projection"), env));
    ROCKDOC_ASSIGN_OR_RETURN(fo.hint, EvaluateDocument(op.Get("hint"), env));
    for (const char* f : {"limit", "skip"}) {
      if (Element e = op.Get(f); e.ok()) {
        ROCKDOC_ASSIGN_OR_RETURN(Value v, Evaluate(e, env));
        int64_t n = 0;
        if (!v.element().ExactInt64(&n)) return with_context(BadValue(std::string(f) + " must be an integer"));
        (std::string_view(f) == "limit" ? fo.limit : fo.skip) = n;
      }
    }
    if (name == "findOne") fo.limit = 1;
    ROCKDOC_RETURN_IF_ERROR(with_context(Explain(c, filter, &fo)));
    auto cursor = c.Find(filter, fo);
    if (!cursor.ok()) return with_context(cursor.status());
    if (name == "findOne") {
      if (cursor->Next()) {
        bind(DocumentValue(cursor->document()));
      } else {
        ROCKDOC_RETURN_IF_ERROR(with_context(cursor->status()));
        bind(NullValue());
      }
      return Status::OK();
    }
    BsonBuilder b;
    b.OpenArray("v");
    while (cursor->Next()) b.AppendDocument("", cursor->document());
    ROCKDOC_RETURN_IF_ERROR(with_context(cursor->status()));
    b.Close();
    Document d = std::move(b).Build();
    bind(Value::FromElement(d.Get("v")));
    return Status::OK();
  }
  if (name == "count") {
    ROCKDOC_ASSIGN_OR_RETURN(Document filter, EvaluateDocument(op.Get("filter"), env));
    ROCKDOC_RETURN_IF_ERROR(with_context(Explain(c, filter, nullptr)));
    auto n = c.CountDocuments(filter);
    if (!n.ok()) return with_context(n.status());
    bind(IntValue(*n));
    return Status::OK();
  }
  if (name == "updateOne" || name == "updateMany" || name == "replaceOne") {
    ROCKDOC_ASSIGN_OR_RETURN(Document filter, EvaluateDocument(op.Get("filter"), env));
    bool replace = name == "replaceOne";
    ROCKDOC_ASSIGN_OR_RETURN(Document update,
                             EvaluateDocument(op.Get(replace ? "replacement" : "update"), env));
    UpdateOptions uo;
    if (Element u = op.Get("upsert"); u.ok()) {
      if (u.type() != BsonType::kBool) return with_context(BadValue("upsert must be a boolean"));
      uo.upsert = u.Bool();
    }
    if (Element af = op.Get("arrayFilters"); af.ok()) {
      ROCKDOC_ASSIGN_OR_RETURN(Document filters, EvaluateDocument(af, env, true));
      for (const Element& f : filters.view()) {
        if (f.type() != BsonType::kDocument) return with_context(BadValue("bad arrayFilters"));
        uo.array_filters.push_back(Document::AdoptValidated(std::string(f.Document().bytes())));
      }
    }
    StatusOr<UpdateResult> r = replace ? c.ReplaceOne(filter, update, uo.upsert)
                               : name == "updateOne" ? c.UpdateOne(filter, update, uo)
                                                     : c.UpdateMany(filter, update, uo);
    if (!r.ok()) return with_context(r.status());
    BsonBuilder b;
    b.AppendInt64("matched", r->matched_count).AppendInt64("modified", r->modified_count);
    bind(DocumentValue(std::move(b).Build()));
    return Status::OK();
  }
  if (name == "deleteOne" || name == "deleteMany") {
    ROCKDOC_ASSIGN_OR_RETURN(Document filter, EvaluateDocument(op.Get("filter"), env));
    auto r = name == "deleteOne" ? c.DeleteOne(filter) : c.DeleteMany(filter);
    if (!r.ok()) return with_context(r.status());
    bind(IntValue(r->deleted_count));
    return Status::OK();
  }
  if (name == "drop") return with_context(c.Drop());
  return BadValue("unknown operation \"" + name + "\" in " + ToJson(op));
}

}  // namespace rockdoc::lab

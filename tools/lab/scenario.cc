#include "scenario.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <sstream>

#include "index/index_descriptor.h"
#include "store/write_ops.h"
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

// Nothing in a scenario file is accepted and ignored: a field that is not
// one of `known` (a typo such as "agianst") is an error naming it.
Status OnlyFields(DocumentView d, std::initializer_list<std::string_view> known,
                  const std::string& where) {
  for (const Element& f : d) {
    if (std::find(known.begin(), known.end(), f.key()) == known.end()) {
      return Invalid(where, "unknown field \"" + std::string(f.key()) + "\"");
    }
  }
  return Status::OK();
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
  ROCKDOC_RETURN_IF_ERROR(OnlyFields(e.Document(), {"ops", "answer"}, where));
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
  ROCKDOC_RETURN_IF_ERROR(
      OnlyFields(d, {"sizes", "repetitions", "readOps", "writeOps", "params", "blockCacheBytes"}, w));
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
  ROCKDOC_ASSIGN_OR_RETURN(p.block_cache_bytes, GetInt(d, "blockCacheBytes", 0, w));
  if (p.block_cache_bytes < 0) return Invalid(w, "\"blockCacheBytes\" must not be negative");
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
  ROCKDOC_RETURN_IF_ERROR(OnlyFields(d,
                                     {"name", "title", "description", "sizeLabel", "params",
                                      "profiles", "let", "variants", "limits", "mixes",
                                      "rulesOfThumb"},
                                     where));
  ROCKDOC_ASSIGN_OR_RETURN(s.title, GetString(d, "title", where, false));
  if (s.title.empty()) s.title = s.name;
  ROCKDOC_ASSIGN_OR_RETURN(s.description, GetString(d, "description", where, false));
  ROCKDOC_ASSIGN_OR_RETURN(std::string label, GetString(d, "sizeLabel", where, false));
  if (!label.empty()) s.size_label = label;
  ROCKDOC_ASSIGN_OR_RETURN(s.params, GetDocument(d, "params", where));
  ROCKDOC_ASSIGN_OR_RETURN(Document let, GetDocument(d, "let", where));
  ROCKDOC_RETURN_IF_ERROR(OnlyFields(let, {"read", "write"}, where + " let"));
  ROCKDOC_ASSIGN_OR_RETURN(s.read_let, GetDocument(let, "read", where + " let"));
  ROCKDOC_ASSIGN_OR_RETURN(s.write_let, GetDocument(let, "write", where + " let"));

  ROCKDOC_ASSIGN_OR_RETURN(Document profiles, GetDocument(d, "profiles", where));
  ROCKDOC_RETURN_IF_ERROR(OnlyFields(profiles, {"full", "quick", "test"}, where + " profiles"));
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
    ROCKDOC_RETURN_IF_ERROR(OnlyFields(vd,
                                       {"name", "description", "engine", "mirrors", "maxSize",
                                        "setupMayFail", "setup", "read", "write", "dump",
                                        "observe"},
                                       vw));
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
    ROCKDOC_ASSIGN_OR_RETURN(v.observe, ParseOpList(vd.Get("observe"), vw + " observe"));
    if (!v.observe.ops.empty() && !v.observe.has_answer()) {
      return Invalid(vw + " observe", "needs an \"answer\": true when the state is whole");
    }
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
      ROCKDOC_RETURN_IF_ERROR(OnlyFields(re.Document(), {"text", "claims"}, rw));
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
        if (Element alike = cd.Get("or"); alike.ok()) {
          if (alike.type() != BsonType::kArray) return Invalid(rw, "\"or\" must be an array of variant names");
          for (const Element& a : alike.Array()) {
            if (a.type() != BsonType::kString ||
                std::none_of(s.variants.begin(), s.variants.end(),
                             [&](const Variant& v) { return v.name == a.String(); })) {
              return Invalid(rw, "\"or\" names no variant: " + std::string(a.type() == BsonType::kString ? a.String() : "a non-string"));
            }
            c.alike.emplace_back(a.String());
          }
        }
        if (Element against = cd.Get("against"); against.ok()) {
          if (against.type() != BsonType::kArray) {
            return Invalid(rw, "\"against\" must be an array of variant names");
          }
          for (const Element& a : against.Array()) {
            if (a.type() != BsonType::kString ||
                std::none_of(s.variants.begin(), s.variants.end(), [&](const Variant& v) {
                  return v.name == a.String() && v.engine == EngineKind::kRockdoc;
                })) {
              return Invalid(rw, "\"against\" names no rockdoc variant: " +
                                     ValueToJson(a));
            }
            c.against.emplace_back(a.String());
          }
        }
        // Every claim says who makes it (nothing in the lab is an
        // anonymous rule of thumb).
        Element source = cd.Get("source");
        if (source.type() == BsonType::kString && source.String() == "lab") {
          // the lab's own: source and quote stay empty
        } else if (source.type() == BsonType::kDocument) {
          const std::string sw = rw + " claim source";
          ROCKDOC_RETURN_IF_ERROR(OnlyFields(source.Document(), {"seed", "quote"}, sw));
          ROCKDOC_ASSIGN_OR_RETURN(c.source, GetString(source.Document(), "seed", sw, true));
          ROCKDOC_ASSIGN_OR_RETURN(c.quote, GetString(source.Document(), "quote", sw, true));
          if (c.source.empty() || c.quote.empty()) {
            return Invalid(sw, "\"seed\" and \"quote\" must not be empty");
          }
        } else {
          return Invalid(rw, "a claim needs \"source\": {\"seed\": FILE, \"quote\": TEXT} "
                             "or \"lab\" (the lab's own claim)");
        }
        ROCKDOC_RETURN_IF_ERROR(OnlyFields(
            cd, {"variant", "wins", "from", "to", "or", "against", "source"}, rw + " claim"));
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
      bool known = c.metric == "reads" || c.metric == "writes" || c.metric == "disk" ||
                   c.metric == "queries" || c.metric == "bytes written" ||
                   c.metric == "bytes read" || c.metric == "atomic";
      for (auto [r, w] : s.mixes) known = known || c.metric == std::to_string(r) + ":" + std::to_string(w);
      if (!known) {
        return Invalid(where + " rulesOfThumb",
                       "\"wins\" is reads, writes, disk, queries, bytes written, bytes read, atomic or "
                       "one of the mixes (\"1000:1\"), not " +
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
      ROCKDOC_ASSIGN_OR_RETURN(l.label, GetString(ld, "label", lw, false));
      ROCKDOC_RETURN_IF_ERROR(OnlyFields(ld,
                                         {"title", "variant", "label", "size", "target", "step",
                                          "measure", "maxSteps", "expectCode"},
                                         lw));
      if (std::none_of(s.variants.begin(), s.variants.end(),
                       [&](const Variant& v) { return v.name == l.variant; })) {
        return Invalid(lw, "no variant named " + l.variant);
      }
      ROCKDOC_ASSIGN_OR_RETURN(l.size, GetInt(ld, "size", 0, lw));
      ROCKDOC_ASSIGN_OR_RETURN(Document target, GetDocument(ld, "target", lw));
      ROCKDOC_RETURN_IF_ERROR(OnlyFields(target, {"collection", "filter"}, lw + " target"));
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

std::string SourceText(const Claim& c) {
  return c.source.empty() ? "the lab's own claim"
                          : "source " + c.source + ": \"" + c.quote + "\"";
}

std::string DefaultScenarioDir() {
  for (const char* dir : {ROCKDOC_LAB_SCENARIO_DIR, ROCKDOC_LAB_INSTALLED_SCENARIO_DIR}) {
    std::error_code ec;
    if (*dir != '\0' && std::filesystem::is_directory(dir, ec)) return dir;
  }
  return "";
}

// ---- Executor ----

namespace {

// A fresh random UUID (version 4) for a logical session's id.
std::string NewSessionId() {
  std::random_device rd;
  std::string id(16, '\0');
  for (char& c : id) c = static_cast<char>(rd() & 0xff);
  id[6] = static_cast<char>((id[6] & 0x0f) | 0x40);
  id[8] = static_cast<char>((id[8] & 0x3f) | 0x80);
  return id;
}

// A command reply as a Status: its error, or its first write error.
Status ReplyStatus(const Document& reply) {
  auto status_of = [](DocumentView d) {
    Status s(static_cast<ErrorCode>(d.Get("code").Int32()), std::string(d.Get("errmsg").String()));
    if (Element labels = d.Get("errorLabels"); labels.type() == BsonType::kArray) {
      for (const Element& l : labels.Array()) s = s.WithErrorLabel(std::string(l.String()));
    }
    return s;
  };
  if (reply.Get("ok").NumberAsDouble() != 1) return status_of(reply.view());
  if (Element errors = reply.Get("writeErrors"); errors.type() == BsonType::kArray) {
    for (const Element& e : errors.Array()) return status_of(e.Document());
  }
  return Status::OK();
}

// A driver refuses a document over 16 MiB before sending it (no command
// could carry it): with the server's error for an insert that large.
Status CheckSize(DocumentView doc) {
  if (doc.size() <= static_cast<size_t>(kMaxBsonObjectSize)) return Status::OK();
  return internal::PrepareInsert(doc).status();
}

// The fields of `op` that are the lab's own, not the command's.
bool IsLabField(std::string_view name) {
  return name == "op" || name == "collection" || name == "as";
}

}  // namespace

RockdocExecutor::RockdocExecutor(const Client* client, std::string db)
    : client_(client), db_(std::move(db)), lsid_(NewSessionId()) {}

RockdocExecutor::~RockdocExecutor() {
  if (!session_used_) return;
  BsonBuilder end;
  end.OpenArray("endSessions").OpenDocument("");
  end.AppendBinary("id", BinarySubtype::kUuid, lsid_);
  end.Close().Close();
  client_->RunCommand("admin", std::move(end).Build());  // ends (and aborts) what is open
}

StatusOr<Document> RockdocExecutor::Command(const Document& cmd, std::string_view db) {
  Document reply;
  if (in_txn_) {
    BsonBuilder b;
    for (const Element& e : cmd.view()) b.AppendElement(e);
    b.OpenDocument("lsid").AppendBinary("id", BinarySubtype::kUuid, lsid_).Close();
    b.AppendInt64("txnNumber", txn_number_);
    b.AppendBool("autocommit", false);
    if (!txn_started_) b.AppendBool("startTransaction", true);
    txn_started_ = true;
    session_used_ = true;
    reply = client_->RunCommand(db.empty() ? db_ : db, std::move(b).Build());
  } else {
    reply = client_->RunCommand(db.empty() ? db_ : db, cmd);
  }
  ROCKDOC_RETURN_IF_ERROR(ReplyStatus(reply));
  return reply;
}

StatusOr<std::vector<Document>> RockdocExecutor::Drain(const Document& reply) {
  std::vector<Document> out;
  DocumentView cursor = reply.Get("cursor").Document();
  for (const Element& d : cursor.Get("firstBatch").Array()) {
    out.push_back(Document::AdoptValidated(std::string(d.Document().bytes())));
  }
  const std::string_view ns = cursor.Get("ns").String();
  const std::string collection(ns.substr(ns.find('.') + 1));
  int64_t id = cursor.Get("id").Int64();
  while (id != 0) {
    BsonBuilder more;
    more.AppendInt64("getMore", id).AppendString("collection", collection);
    ROCKDOC_ASSIGN_OR_RETURN(Document next, Command(std::move(more).Build()));
    DocumentView c = next.Get("cursor").Document();
    for (const Element& d : c.Get("nextBatch").Array()) {
      out.push_back(Document::AdoptValidated(std::string(d.Document().bytes())));
    }
    id = c.Get("id").Int64();
  }
  return out;
}

Status RockdocExecutor::Explain(const Document& command) {
  if (explain_ == nullptr) return Status::OK();
  ++explain_->queries;
  BsonBuilder b;
  b.AppendDocument("explain", command.view()).AppendString("verbosity", "executionStats");
  ROCKDOC_ASSIGN_OR_RETURN(Document plan, Command(std::move(b).Build()));
  // A find's (or count's) executionStats; an aggregate's stages: its
  // find's under $cursor, and what each stage's own finds examined ($lookup).
  auto add = [&](DocumentView stats) {
    int64_t keys = 0, docs = 0;
    stats.Get("totalKeysExamined").ExactInt64(&keys);
    stats.Get("totalDocsExamined").ExactInt64(&docs);
    explain_->keys_examined += keys;
    explain_->docs_examined += docs;
  };
  if (Element stats = plan.Get("executionStats"); stats.type() == BsonType::kDocument) {
    add(stats.Document());
    return Status::OK();
  }
  Element stages = plan.Get("stages");
  if (stages.type() != BsonType::kArray) return InternalError("explain has no executionStats");
  for (const Element& stage : stages.Array()) {
    if (stage.type() != BsonType::kDocument) continue;
    Element cursor = stage.Document().Get("$cursor");
    if (cursor.type() == BsonType::kDocument) {
      Element stats = cursor.Document().Get("executionStats");
      if (stats.type() == BsonType::kDocument) add(stats.Document());
    } else {
      add(stage.Document());
    }
  }
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
    // {in: array, as: "x", do: [ops], collect: <expression>, into: "name"}:
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
      if (collect.ok()) {
        ROCKDOC_ASSIGN_OR_RETURN(Value item, Evaluate(collect, inner));
        b.AppendElementAs("", item.element());
      }
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
  if (in_txn_) return BadValue("transactions do not nest");
  // The drivers' withTransaction: run again while an error is labelled
  // TransientTransactionError, for up to 120 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    ++txn_number_;
    in_txn_ = true;
    txn_started_ = false;
    // Variables bound by the body are kept only from the attempt that commits.
    Env attempt(&env);
    Status s = Run(body, attempt);
    auto end = [&](const char* command) {
      BsonBuilder b;
      b.AppendInt32(command, 1);
      return Command(std::move(b).Build(), "admin").status();
    };
    if (s.ok() && txn_started_) s = end("commitTransaction");
    if (!s.ok() && txn_started_) end("abortTransaction").IgnoreError();  // may be over already
    in_txn_ = false;
    if (s.ok()) {
      attempt.MoveInto(env);
      return Status::OK();
    }
    if (!s.HasErrorLabel("TransientTransactionError") ||
        std::chrono::steady_clock::now() > deadline) {
      return s;
    }
  }
}

Status RockdocExecutor::RunEngineOp(const std::string& name, DocumentView op, Env& env) {
  auto bind = [&](Value v) { Bind(op, env, std::move(v)); };
  // Binds the documents a query answered, as an array.
  auto bind_documents = [&](const std::vector<Document>& docs) {
    BsonBuilder list;
    list.OpenArray("v");
    for (const Document& d : docs) list.AppendDocument("", d.view());
    list.Close();
    Document d = std::move(list).Build();
    bind(Value::FromElement(d.Get("v")));
  };
  auto with_context = [&](Status st) { return WithContext(st, op); };
  Element coll = op.Get("collection");
  const std::string collection(coll.type() == BsonType::kString ? coll.String() : "");
  // Appends the op's fields but `skip` (and the lab's own), evaluated, to
  // `b`: the command or statement decodes them.
  auto append_rest = [&](BsonBuilder& b, std::initializer_list<std::string_view> skip) -> Status {
    for (const Element& e : op) {
      if (IsLabField(e.key()) || std::find(skip.begin(), skip.end(), e.key()) != skip.end()) {
        continue;
      }
      ROCKDOC_RETURN_IF_ERROR(AppendFilled(e, env, e.key(), b));
    }
    return Status::OK();
  };
  // Appends the op's field `from` evaluated, as `to` (nothing when absent).
  auto append_as = [&](BsonBuilder& b, std::string_view from, std::string_view to) -> Status {
    Element e = op.Get(from);
    return e.ok() ? AppendFilled(e, env, to, b) : Status::OK();
  };

  if (name == "insertOne") {
    ROCKDOC_ASSIGN_OR_RETURN(Document doc, FillDocument(op.Get("document"), env));
    ROCKDOC_RETURN_IF_ERROR(with_context(CheckSize(doc.view())));
    // As the drivers: a document without an _id gets an ObjectId here, so
    // the operation can bind it.
    Value id = Value::FromElement(doc.Get("_id"));
    BsonBuilder b;
    b.AppendString("insert", collection).OpenArray("documents").OpenDocument("");
    if (!doc.Get("_id").ok()) {
      const ObjectId oid = ObjectId::Generate();
      b.AppendObjectId("_id", oid);
      BsonBuilder idb;
      idb.AppendObjectId("v", oid);
      id = Value::FromElement(std::move(idb).Build().Get("v"));
    }
    for (const Element& e : doc.view()) b.AppendElement(e);
    b.Close().Close();
    ROCKDOC_RETURN_IF_ERROR(with_context(append_rest(b, {"document"})));
    ROCKDOC_RETURN_IF_ERROR(with_context(Command(std::move(b).Build()).status()));
    bind(std::move(id));
    return Status::OK();
  }
  if (name == "insertMany") {
    // Inserted in batches of 1,000 as the documents are generated.
    constexpr size_t kBatch = 1000;
    std::vector<Document> batch;
    auto flush = [&]() -> Status {
      if (batch.empty()) return Status::OK();
      BsonBuilder b;
      b.AppendString("insert", collection).OpenArray("documents");
      for (const Document& d : batch) b.AppendDocument("", d.view());
      b.Close();
      batch.clear();
      ROCKDOC_RETURN_IF_ERROR(append_rest(b, {"documents"}));
      return Command(std::move(b).Build()).status();
    };
    Status st = ForEachItem(op.Get("documents"), env, [&](const Element& e) -> Status {
      if (e.type() != BsonType::kDocument) return BadValue("\"documents\" holds a non-document");
      ROCKDOC_RETURN_IF_ERROR(CheckSize(e.Document()));
      batch.push_back(Document::AdoptValidated(std::string(e.Document().bytes())));
      return batch.size() == kBatch ? flush() : Status::OK();
    });
    if (st.ok()) st = flush();
    return with_context(st);
  }
  if (name == "createIndex") {
    // {keys, options}: one index specification of createIndexes, named as
    // the drivers name it unless the options name it.
    ROCKDOC_ASSIGN_OR_RETURN(Document keys, FillDocument(op.Get("keys"), env));
    ROCKDOC_ASSIGN_OR_RETURN(Document opts, FillDocument(op.Get("options"), env));
    BsonBuilder b;
    b.AppendString("createIndexes", collection).OpenArray("indexes").OpenDocument("");
    b.AppendDocument("key", keys.view());
    if (!opts.Get("name").ok()) {
      b.AppendString("name", internal::IndexDescriptor::DefaultName(keys.view()));
    }
    for (const Element& e : opts.view()) b.AppendElement(e);
    b.Close().Close();
    ROCKDOC_RETURN_IF_ERROR(with_context(append_rest(b, {"keys", "options"})));
    return with_context(Command(std::move(b).Build()).status());
  }
  if (name == "find" || name == "findOne") {
    BsonBuilder b;
    b.AppendString("find", collection);
    ROCKDOC_RETURN_IF_ERROR(with_context(append_rest(b, {})));
    if (name == "findOne") b.AppendInt64("limit", 1).AppendBool("singleBatch", true);
    Document find = std::move(b).Build();
    ROCKDOC_RETURN_IF_ERROR(with_context(Explain(find)));
    StatusOr<Document> reply = Command(find);
    if (!reply.ok()) return with_context(reply.status());
    StatusOr<std::vector<Document>> docs_or = Drain(*reply);
    if (!docs_or.ok()) return with_context(docs_or.status());
    const std::vector<Document>& docs = *docs_or;
    if (name == "findOne") {
      bind(docs.empty() ? NullValue() : DocumentValue(docs.front().view()));
      return Status::OK();
    }
    bind_documents(docs);
    return Status::OK();
  }
  if (name == "aggregate") {
    BsonBuilder b;
    b.AppendString("aggregate", collection);
    ROCKDOC_RETURN_IF_ERROR(with_context(append_rest(b, {})));
    b.OpenDocument("cursor").Close();
    Document aggregate = std::move(b).Build();
    ROCKDOC_RETURN_IF_ERROR(with_context(Explain(aggregate)));
    StatusOr<Document> reply = Command(aggregate);
    if (!reply.ok()) return with_context(reply.status());
    StatusOr<std::vector<Document>> docs = Drain(*reply);
    if (!docs.ok()) return with_context(docs.status());
    bind_documents(*docs);
    return Status::OK();
  }
  if (name == "count") {
    BsonBuilder b;
    b.AppendString("count", collection);
    ROCKDOC_RETURN_IF_ERROR(with_context(append_as(b, "filter", "query")));
    ROCKDOC_RETURN_IF_ERROR(with_context(append_rest(b, {"filter"})));
    Document count = std::move(b).Build();
    ROCKDOC_RETURN_IF_ERROR(with_context(Explain(count)));
    StatusOr<Document> reply = Command(count);
    if (!reply.ok()) return with_context(reply.status());
    int64_t n = 0;
    reply->Get("n").ExactInt64(&n);
    bind(IntValue(n));
    return Status::OK();
  }
  if (name == "updateOne" || name == "updateMany" || name == "replaceOne") {
    // One update statement: {q: filter, u: update or replacement, multi},
    // with the op's other fields (upsert, arrayFilters, hint, ...).
    BsonBuilder b;
    b.AppendString("update", collection).OpenArray("updates").OpenDocument("");
    ROCKDOC_RETURN_IF_ERROR(with_context(append_as(b, "filter", "q")));
    ROCKDOC_RETURN_IF_ERROR(
        with_context(append_as(b, name == "replaceOne" ? "replacement" : "update", "u")));
    b.AppendBool("multi", name == "updateMany");
    ROCKDOC_RETURN_IF_ERROR(with_context(append_rest(b, {"filter", "update", "replacement"})));
    b.Close().Close();
    StatusOr<Document> reply = Command(std::move(b).Build());
    if (!reply.ok()) return with_context(reply.status());
    int64_t n = 0, modified = 0;
    reply->Get("n").ExactInt64(&n);
    reply->Get("nModified").ExactInt64(&modified);
    if (Element upserted = reply->Get("upserted"); upserted.type() == BsonType::kArray) {
      n -= upserted.Array().CountFields();
    }
    BsonBuilder r;
    r.AppendInt64("matched", n).AppendInt64("modified", modified);
    bind(DocumentValue(std::move(r).Build()));
    return Status::OK();
  }
  if (name == "deleteOne" || name == "deleteMany") {
    BsonBuilder b;
    b.AppendString("delete", collection).OpenArray("deletes").OpenDocument("");
    ROCKDOC_RETURN_IF_ERROR(with_context(append_as(b, "filter", "q")));
    b.AppendInt32("limit", name == "deleteOne" ? 1 : 0);
    ROCKDOC_RETURN_IF_ERROR(with_context(append_rest(b, {"filter"})));
    b.Close().Close();
    StatusOr<Document> reply = Command(std::move(b).Build());
    if (!reply.ok()) return with_context(reply.status());
    int64_t n = 0;
    reply->Get("n").ExactInt64(&n);
    bind(IntValue(n));
    return Status::OK();
  }
  if (name == "drop") {
    BsonBuilder b;
    b.AppendString("drop", collection);
    ROCKDOC_RETURN_IF_ERROR(with_context(append_rest(b, {})));
    return with_context(Command(std::move(b).Build()).status());
  }
  return BadValue("unknown operation \"" + name + "\" in " + ToJson(op));
}

}  // namespace rockdoc::lab

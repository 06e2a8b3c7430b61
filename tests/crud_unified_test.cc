// The CRUD specification's unified tests (mongodb/specifications,
// source/crud/tests/unified), run through rockdoc's command layer
// (Client::RunCommand), as a driver runs them against a server.
//
// Each test of each file in ../shared/test-data/crud-unified is one
// GoogleTest case, Spec/CrudUnifiedTest.<file>__<description>. A case opens
// a fresh rockdoc::Client in a scratch directory, creates the file's
// entities (clients, databases, collections: names only), loads
// `initialData`, runs the test's `operations` in order, checks each
// operation's `expectResult` / `expectError` with the unified format's
// matching rules (unified_matcher.h), then checks `outcome` (each
// collection's whole contents, in _id order, compared exactly).
//
// The runner plays the part of a MongoDB driver over rockdoc: it turns each
// CRUD operation into the command a driver sends (find with getMore,
// insert, update, delete, findAndModify, count, distinct, createIndexes,
// dropIndexes, create, drop), renaming the spec's arguments to the
// command's fields and passing them on undecoded: the command layer
// decodes every option, once. It shapes results as the CRUD spec does
// (InsertOneResult -> {insertedId}, UpdateResult -> {matchedCount,
// modifiedCount, upsertedCount, upsertedId}, ...), does what the spec gives
// drivers to do (an ObjectId _id for inserts without one, the index name
// from its keys, "update requires atomic operators" and "replacement must
// not contain them" as client errors), and batches bulkWrite into insert,
// update and delete commands (runs of one kind when ordered, one per kind
// when not) with the spec's BulkWriteResult. countDocuments is an aggregate
// ($match, $skip, $limit, $group), as the drivers run it. Everything
// else is rockdoc's own behaviour.
//
// Which tests run: INDEX.json classes every test `core`, `optional` or
// `not-applicable` (server-only: old-server behaviour, fail points, events
// only, ...). Not-applicable tests are skipped with INDEX.json's reasons;
// any other skip must be listed in kSkips below with its reason. A test
// that needs something the runner cannot do and is not listed fails, as
// does an unknown operation, argument or special operator, so nothing is
// skipped silently. Event assertions (`expectEvents`: the commands a driver
// sends) have no meaning for an embedded engine and are not checked; the
// operations, results and outcome of those tests are.
//
// At the end the binary prints, per class, how many tests ran, passed,
// failed and were skipped, with the skip reasons.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"
#include "test_util.h"
#include "unified_matcher.h"

namespace rockdoc::test {
namespace {

namespace ondemand = simdjson::ondemand;

// ---------------------------------------------------------------------------
// Skips other than INDEX.json's not-applicable class. Only matters a
// server-free engine cannot have belong here (update pipelines, aggregate,
// server sessions); an engine bug is a failure, never a skip.

struct SkipEntry {
  const char* file;
  const char* description;
  const char* reason;
};

constexpr SkipEntry kSkips[] = {
    {"db-aggregate.json", "Aggregate with $listLocalSessions",
     "$listLocalSessions lists a server's logical sessions: rockdoc is in-process and keeps "
     "no server session registry to list"},
};

// Tests INDEX.json classes not-applicable that rockdoc runs all the same:
// it has what they need (views, for this one: INDEX.json judged it by its
// createCollection and dropCollection operations).
constexpr SkipEntry kRunAnyway[] = {
    {"estimatedDocumentCount.json", "estimatedDocumentCount works correctly on views",
     "rockdoc has views"},
};

bool RunsAnyway(const std::string& file, const std::string& description) {
  for (const SkipEntry& s : kRunAnyway) {
    if (file == s.file && description == s.description) return true;
  }
  return false;
}

const SkipEntry* FindSkip(const std::string& file, const std::string& description) {
  for (const SkipEntry& s : kSkips) {
    if (file == s.file && description == s.description) return &s;
  }
  return nullptr;
}

std::string CrudDir() { return TestDataDir() + "/crud-unified"; }

// ---------------------------------------------------------------------------
// JSON structure with simdjson; values with rockdoc::FromJson.
//
// The structure of a test file (file -> tests -> operations) is walked with
// simdjson's On-Demand API, which hands out the raw text of every value;
// each value the runner uses (arguments, expectations, documents) is then
// converted with rockdoc::FromJson from that exact text, so Extended JSON
// ({"$numberLong": "1"}, 1 vs 1.0) keeps its types.

// A JSON object's fields as (key, raw JSON text), in file order.
using RawObject = std::vector<std::pair<std::string, std::string>>;

Status JsonError(simdjson::error_code err, std::string_view what) {
  return Status(ErrorCode::kFailedToParse, std::string(what) + ": " + simdjson::error_message(err));
}

// raw_json_token() returns a plain string_view in some simdjson versions and
// a simdjson_result in others.
simdjson::error_code TakeToken(std::string_view token, std::string_view* out) {
  *out = token;
  return simdjson::SUCCESS;
}
[[maybe_unused]] simdjson::error_code TakeToken(simdjson::simdjson_result<std::string_view> token,
                                                std::string_view* out) {
  return std::move(token).get(*out);
}

// The text of `value` as it appears in the input, without trailing blanks.
Status RawText(ondemand::value value, std::string* out) {
  ondemand::json_type type;
  if (auto err = value.type().get(type)) return JsonError(err, "type");
  std::string_view raw;
  simdjson::error_code err = simdjson::SUCCESS;
  if (type == ondemand::json_type::object) {
    ondemand::object object;
    err = value.get_object().get(object);
    if (!err) err = object.raw_json().get(raw);
  } else if (type == ondemand::json_type::array) {
    ondemand::array array;
    err = value.get_array().get(array);
    if (!err) err = array.raw_json().get(raw);
  } else {
    err = TakeToken(value.raw_json_token(), &raw);
  }
  if (err) return JsonError(err, "raw text");
  while (!raw.empty() &&
         (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) {
    raw.remove_suffix(1);
  }
  *out = std::string(raw);
  return Status::OK();
}

StatusOr<RawObject> ParseObject(std::string_view json) {
  simdjson::padded_string padded(json);
  ondemand::parser parser;
  ondemand::document doc;
  if (auto err = parser.iterate(padded).get(doc)) return JsonError(err, "parse");
  ondemand::object object;
  if (auto err = doc.get_object().get(object)) return JsonError(err, "expected an object");
  RawObject fields;
  for (auto field_result : object) {
    ondemand::field field;
    if (auto err = std::move(field_result).get(field)) return JsonError(err, "field");
    std::string_view key;
    if (auto err = field.unescaped_key().get(key)) return JsonError(err, "key");
    std::string key_copy(key);
    std::string raw;
    ROCKDOC_RETURN_IF_ERROR(RawText(field.value(), &raw));
    fields.emplace_back(std::move(key_copy), std::move(raw));
  }
  return fields;
}

StatusOr<std::vector<std::string>> ParseArray(std::string_view json) {
  simdjson::padded_string padded(json);
  ondemand::parser parser;
  ondemand::document doc;
  if (auto err = parser.iterate(padded).get(doc)) return JsonError(err, "parse");
  ondemand::array array;
  if (auto err = doc.get_array().get(array)) return JsonError(err, "expected an array");
  std::vector<std::string> items;
  for (auto item_result : array) {
    ondemand::value item;
    if (auto err = std::move(item_result).get(item)) return JsonError(err, "array element");
    std::string raw;
    ROCKDOC_RETURN_IF_ERROR(RawText(item, &raw));
    items.push_back(std::move(raw));
  }
  return items;
}

const std::string* Field(const RawObject& object, std::string_view key) {
  for (const auto& [k, v] : object) {
    if (k == key) return &v;
  }
  return nullptr;
}

// Any Extended JSON value as a rockdoc Value.
StatusOr<Value> ParseValue(std::string_view json) {
  std::string wrapped = "{\"v\": ";
  wrapped.append(json);
  wrapped.append("}");
  ROCKDOC_ASSIGN_OR_RETURN(Document holder, FromJson(wrapped));
  return Value::FromElement(holder.Get("v"));
}

StatusOr<std::string> ParseString(std::string_view json) {
  ROCKDOC_ASSIGN_OR_RETURN(Value v, ParseValue(json));
  if (v.type() != BsonType::kString) return BadValue("expected a string, got " + std::string(json));
  return std::string(v.element().String());
}

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorCode::kNonExistentPath, "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---- Values the runner builds ----

Document CopyDocument(DocumentView view) {
  return Document::AdoptValidated(std::string(view.bytes()));
}

Value DocumentValue(DocumentView doc) {
  BsonBuilder b;
  b.AppendDocument("v", doc);
  Document holder = std::move(b).Build();
  return Value::FromElement(holder.Get("v"));
}

Value ArrayOfDocuments(const std::vector<Document>& docs) {
  BsonBuilder b;
  b.OpenArray("v");
  for (const Document& d : docs) b.AppendDocument("", d);
  b.Close();
  Document holder = std::move(b).Build();
  return Value::FromElement(holder.Get("v"));
}

Value Int64Value(int64_t n) {
  BsonBuilder b;
  b.AppendInt64("v", n);
  Document holder = std::move(b).Build();
  return Value::FromElement(holder.Get("v"));
}

Value NullValue() {
  BsonBuilder b;
  b.AppendNull("v");
  Document holder = std::move(b).Build();
  return Value::FromElement(holder.Get("v"));
}

Value StringValue(std::string_view s) {
  BsonBuilder b;
  b.AppendString("v", s);
  Document holder = std::move(b).Build();
  return Value::FromElement(holder.Get("v"));
}

// ---------------------------------------------------------------------------
// The catalogue: every test of every file, with its INDEX.json class.

struct CaseParam {
  std::string file;         // "find.json"
  std::string description;  // the test's description
  std::string cls;          // core / optional / not-applicable ("" when INDEX.json lacks it)
  std::string reasons;      // INDEX.json's reasons, joined
  std::string name;         // the GoogleTest name
};

void PrintTo(const CaseParam& p, std::ostream* os) { *os << p.file << ": " << p.description; }

struct Catalogue {
  std::vector<CaseParam> cases;
  std::vector<std::string> errors;  // problems loading the files
  // (file, test) pairs INDEX.json lists, with their class and reasons.
  struct IndexEntry {
    std::string cls;
    std::string reasons;
  };
  std::map<std::pair<std::string, std::string>, IndexEntry> index;
};

std::string SanitizeName(std::string_view text) {
  std::string out;
  for (char c : text) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum) {
      out.push_back(c);
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

Status LoadIndex(Catalogue* cat) {
  ROCKDOC_ASSIGN_OR_RETURN(std::string text, ReadFile(CrudDir() + "/INDEX.json"));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> entries, ParseArray(text));
  for (const std::string& raw : entries) {
    ROCKDOC_ASSIGN_OR_RETURN(Document entry, FromJson(raw));
    Element file = entry.Get("file");
    Element test = entry.Get("test");
    Element cls = entry.Get("cls");
    if (file.type() != BsonType::kString || test.type() != BsonType::kString ||
        cls.type() != BsonType::kString) {
      return BadValue("INDEX.json entry without file/test/cls: " + raw);
    }
    std::string reasons;
    Element rs = entry.Get("reasons");
    if (rs.type() == BsonType::kArray) {
      for (Element r : rs.Array()) {
        if (r.type() != BsonType::kString) continue;
        if (!reasons.empty()) reasons += ", ";
        reasons += std::string(r.String());
      }
    }
    auto key = std::make_pair(std::string(file.String()), std::string(test.String()));
    Catalogue::IndexEntry value{std::string(cls.String()), reasons};
    if (!cat->index.emplace(key, std::move(value)).second) {
      return BadValue("INDEX.json lists twice: " + key.first + ": " + key.second);
    }
  }
  return Status::OK();
}

Catalogue LoadCatalogue() {
  Catalogue cat;
  Status index_status = LoadIndex(&cat);
  if (!index_status.ok()) cat.errors.push_back("INDEX.json: " + index_status.ToString());
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(CrudDir(), ec)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".json" && name != "INDEX.json") files.push_back(name);
  }
  if (ec) cat.errors.push_back("cannot list " + CrudDir() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  std::set<std::string> names;
  for (const std::string& file : files) {
    auto text = ReadFile(CrudDir() + "/" + file);
    if (!text.ok()) {
      cat.errors.push_back(file + ": " + text.status().ToString());
      continue;
    }
    auto top = ParseObject(*text);
    const std::string* tests_raw = top.ok() ? Field(*top, "tests") : nullptr;
    if (tests_raw == nullptr) {
      cat.errors.push_back(file + ": no tests array");
      continue;
    }
    auto tests = ParseArray(*tests_raw);
    if (!tests.ok()) {
      cat.errors.push_back(file + ": " + tests.status().ToString());
      continue;
    }
    for (const std::string& test_raw : *tests) {
      auto test = ParseObject(test_raw);
      const std::string* desc_raw = test.ok() ? Field(*test, "description") : nullptr;
      auto desc = desc_raw ? ParseString(*desc_raw) : StatusOr<std::string>(BadValue("none"));
      if (!desc.ok()) {
        cat.errors.push_back(file + ": a test without a description");
        continue;
      }
      CaseParam p;
      p.file = file;
      p.description = *desc;
      auto it = cat.index.find({file, *desc});
      if (it != cat.index.end()) {
        p.cls = it->second.cls;
        p.reasons = it->second.reasons;
      }
      std::string stem = file.substr(0, file.size() - 5);
      std::string name = SanitizeName(stem) + "__" + SanitizeName(*desc);
      std::string unique = name;
      for (int n = 2; names.count(unique) != 0; ++n) unique = name + "_" + std::to_string(n);
      names.insert(unique);
      p.name = unique;
      cat.cases.push_back(std::move(p));
    }
  }
  return cat;
}

const Catalogue& GetCatalogue() {
  static const Catalogue* const kCatalogue = new Catalogue(LoadCatalogue());
  return *kCatalogue;
}

// ---------------------------------------------------------------------------
// Per-class counts, printed at the end of the run.

struct ClassStats {
  int run = 0;
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  std::vector<std::string> failures;
  std::map<std::string, int> skip_reasons;
};

struct RunStats {
  std::map<std::string, ClassStats> by_class;
  int events_unchecked = 0;  // tests that ran with expectEvents not checked
  // Extra fields that root-level result documents were allowed to hold, by
  // test: legal under the spec, but worth a look (a projection ignored?).
  std::vector<std::string> extra_root_fields;
};

RunStats& Stats() {
  static RunStats* const kStats = new RunStats();
  return *kStats;
}

class SummaryEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    const RunStats& stats = Stats();
    if (stats.by_class.empty()) return;
    std::printf("\n[crud-unified] results by INDEX.json class\n");
    std::printf("  %-16s %5s %7s %7s %8s\n", "class", "run", "passed", "failed", "skipped");
    for (const auto& [cls, s] : stats.by_class) {
      std::printf("  %-16s %5d %7d %7d %8d\n", cls.c_str(), s.run, s.passed, s.failed, s.skipped);
    }
    for (const auto& [cls, s] : stats.by_class) {
      for (const auto& [reason, n] : s.skip_reasons) {
        std::printf("  skipped %-14s x%-3d %s\n", cls.c_str(), n, reason.c_str());
      }
    }
    for (const auto& [cls, s] : stats.by_class) {
      for (const std::string& f : s.failures)
        std::printf("  FAILED %-15s %s\n", cls.c_str(), f.c_str());
    }
    for (const std::string& e : stats.extra_root_fields) {
      std::printf("  note: extra field in a root-level result: %s\n", e.c_str());
    }
    if (stats.events_unchecked > 0) {
      std::printf(
          "  %d tests that ran also assert command events (expectEvents): not checked, an "
          "embedded engine sends no commands\n",
          stats.events_unchecked);
    }
    std::fflush(stdout);
  }
};

[[maybe_unused]] ::testing::Environment* const kSummaryEnvironment =
    ::testing::AddGlobalTestEnvironment(new SummaryEnvironment());

// ---------------------------------------------------------------------------
// Operation arguments, with every key accounted for.

class Args {
 public:
  Args() = default;
  explicit Args(Document doc) : doc_(std::move(doc)) {}

  // The argument `key`, or a missing Element.
  Element Get(std::string_view key) {
    used_.insert(std::string(key));
    return doc_.Get(key);
  }
  // A document argument ({} when absent).
  Document Doc(std::string_view key) {
    Element e = Get(key);
    if (!e.ok()) return Document();
    if (e.type() != BsonType::kDocument) {
      Problem(std::string(key) + " must be a document, got " + DescribeValue(e));
      return Document();
    }
    return CopyDocument(e.Document());
  }
  bool Bool(std::string_view key, bool fallback) {
    Element e = Get(key);
    if (!e.ok()) return fallback;
    if (e.type() != BsonType::kBool) {
      Problem(std::string(key) + " must be a boolean, got " + DescribeValue(e));
      return fallback;
    }
    return e.Bool();
  }
  std::string String(std::string_view key) {
    Element e = Get(key);
    if (!e.ok()) return "";
    if (e.type() != BsonType::kString) {
      Problem(std::string(key) + " must be a string, got " + DescribeValue(e));
      return "";
    }
    return std::string(e.String());
  }
  // Every argument not yet used, as a document (an operation's options for
  // the library to decode), now counted as used.
  Document Rest() {
    BsonBuilder b;
    for (Element e : doc_) {
      if (used_.insert(std::string(e.key())).second) b.AppendElement(e);
    }
    return std::move(b).Build();
  }
  // Marks arguments rockdoc's API cannot express.
  void Unsupported(std::string_view key, std::string_view why) {
    used_.insert(std::string(key));
    if (doc_.Get(key).ok()) Problem("argument " + std::string(key) + ": " + std::string(why));
  }
  void Problem(std::string what) { problems_.push_back(std::move(what)); }

  // "" when every argument was understood; else what was not.
  std::string Problems() const {
    std::string out;
    for (const std::string& p : problems_) out += (out.empty() ? "" : "; ") + p;
    for (Element e : doc_) {
      if (used_.count(std::string(e.key())) == 0) {
        out += (out.empty() ? "" : "; ") + ("unknown argument " + std::string(e.key()));
      }
    }
    return out;
  }

 private:
  Document doc_;
  std::set<std::string> used_;
  std::vector<std::string> problems_;
};

// ---------------------------------------------------------------------------
// What an operation did.

struct OpResult {
  // The result; missing when the operation returns nothing.
  Value result;
  // Which parts of the result are root-level documents.
  RootMode root = RootMode::kNone;
  // The operation raised an error.
  bool failed = false;
  Status error;
  // Raised by the runner's driver-side checks, before rockdoc was called.
  bool client_error = false;
  // A BulkWriteError's result (what was done before/around the failures).
  Value error_result;
  // Non-empty: the runner cannot execute the operation as written (unknown
  // operation or argument, a feature rockdoc's API lacks). A test failure
  // unless the test is listed in kSkips.
  std::string runner_error;
};

OpResult Success(Value v, RootMode root) {
  OpResult r;
  r.result = std::move(v);
  r.root = root;
  return r;
}
OpResult EngineError(Status s) {
  OpResult r;
  r.failed = true;
  r.error = std::move(s);
  return r;
}
OpResult ClientError(std::string message) {
  OpResult r;
  r.failed = true;
  r.client_error = true;
  r.error = BadValue(std::move(message));
  return r;
}
OpResult RunnerError(std::string why) {
  OpResult r;
  r.runner_error = std::move(why);
  return r;
}

// ---------------------------------------------------------------------------
// The driver. Each CRUD operation becomes the command a MongoDB driver sends
// for it (the CRUD and Bulk API specifications: find and getMore, insert,
// update, delete, findAndModify, count, distinct, createIndexes, ...), run
// through Client::RunCommand. The runner only renames the spec's arguments
// to the command's fields and reads the replies, as a driver does; every
// option is decoded once, by the command layer, which applies it or refuses
// it with MongoDB's codes.

// Where a spec argument goes: the command, or one statement of it (an
// update's or delete's per-document part).
enum class Place { kCommand, kStatement };
struct Route {
  std::string_view arg;    // the spec's name
  std::string_view field;  // the command's
  Place place;
};

// Copies the arguments `routes` names, under the command's names.
void RouteArgs(Args& args, std::initializer_list<Route> routes, BsonBuilder* command,
               BsonBuilder* statement) {
  for (const Route& r : routes) {
    Element e = args.Get(r.arg);
    if (!e.ok()) continue;
    (r.place == Place::kCommand ? command : statement)->AppendElementAs(r.field, e);
  }
}

// The error of a command reply ({ok: 0, code, errmsg, errInfo?}), or of a
// write error in it.
Status ReplyError(DocumentView reply) {
  Element code = reply.Get("code");
  Element message = reply.Get("errmsg");
  Status s(static_cast<ErrorCode>(code.ok() ? static_cast<int>(code.NumberAsDouble()) : 8),
           std::string(message.type() == BsonType::kString ? message.String() : "no errmsg"));
  Element info = reply.Get("errInfo");
  if (info.type() == BsonType::kDocument) s = s.WithErrorInfo(std::string(info.Document().bytes()));
  return s;
}

bool ReplyOk(DocumentView reply) { return reply.Get("ok").NumberAsDouble() == 1.0; }

int64_t ReplyNumber(DocumentView reply, std::string_view field) {
  Element e = reply.Get(field);
  return e.IsNumber() ? static_cast<int64_t>(e.NumberAsDouble()) : 0;
}

// The write errors of a write command's reply, by statement index.
std::vector<std::pair<size_t, Status>> WriteErrors(DocumentView reply) {
  std::vector<std::pair<size_t, Status>> out;
  Element errors = reply.Get("writeErrors");
  if (errors.type() != BsonType::kArray) return out;
  for (Element e : errors.Array()) {
    if (e.type() != BsonType::kDocument) continue;
    out.emplace_back(static_cast<size_t>(ReplyNumber(e.Document(), "index")),
                     ReplyError(e.Document()));
  }
  return out;
}

// What drivers do before an insert: a document without _id gets an
// ObjectId, so that the driver can report the id it inserted.
Document WithId(DocumentView doc) {
  if (doc.Has("_id")) return CopyDocument(doc);
  BsonBuilder b;
  b.AppendObjectId("_id", ObjectId::Generate());
  for (Element e : doc) b.AppendElement(e);
  return std::move(b).Build();
}

// The index name drivers derive from a key pattern: "a_1_b_-1".
std::string IndexName(DocumentView keys) {
  std::string name;
  for (Element e : keys) {
    if (!name.empty()) name += "_";
    name += std::string(e.key()) + "_";
    if (e.type() == BsonType::kString) {
      name += std::string(e.String());
    } else {
      name += ValueToJson(e, JsonFormat::kRelaxed);
    }
  }
  return name;
}

bool StartsWithDollar(DocumentView doc) {
  auto it = doc.begin();
  if (it == doc.end()) return false;
  std::string_view key = (*it).key();
  return !key.empty() && key[0] == '$';
}

// The CRUD spec's client-side check of an update: update operators
// required. "" when fine.
std::string CheckUpdateDocument(DocumentView update) {
  if (update.empty() || !StartsWithDollar(update)) {
    return "update document must contain atomic operators (first key must start with '$')";
  }
  return "";
}
// ... and of a replacement: no update operators.
std::string CheckReplacementDocument(DocumentView replacement) {
  if (StartsWithDollar(replacement)) {
    return "replacement document must not contain atomic operators (first key starts with '$')";
  }
  return "";
}

// One write of insertOne ... deleteMany or of a bulkWrite: the command it
// goes in, and its statement there.
enum class WriteKind { kInsertOne, kUpdateOne, kUpdateMany, kReplaceOne, kDeleteOne, kDeleteMany };
enum class CommandKind { kInsert, kUpdate, kDelete };

struct WriteModel {
  WriteKind kind = WriteKind::kInsertOne;
  CommandKind command = CommandKind::kInsert;
  Document statement;  // insert: the document (with its _id)
};

// Builds one write from its arguments. Returns a runner error ("" when
// fine) and, through *client_error, the driver-side validation failure.
// Command-level arguments (comment, let, bypassDocumentValidation) go to
// *command_args.
std::string ParseWriteModel(WriteKind kind, Args& args, WriteModel* m, std::string* client_error,
                            BsonBuilder* command_args) {
  m->kind = kind;
  BsonBuilder st;
  const std::initializer_list<Route> command_routes = {
      {"comment", "comment", Place::kCommand},
      {"let", "let", Place::kCommand},
      {"bypassDocumentValidation", "bypassDocumentValidation", Place::kCommand}};
  switch (kind) {
    case WriteKind::kInsertOne: {
      m->command = CommandKind::kInsert;
      Element doc = args.Get("document");
      if (doc.type() != BsonType::kDocument) {
        args.Problem("document is required and must be a document");
        break;
      }
      RouteArgs(args, command_routes, command_args, nullptr);
      m->statement = WithId(doc.Document());
      return args.Problems();
    }
    case WriteKind::kUpdateOne:
    case WriteKind::kUpdateMany:
    case WriteKind::kReplaceOne: {
      m->command = CommandKind::kUpdate;
      const bool replace = kind == WriteKind::kReplaceOne;
      Element u = args.Get(replace ? "replacement" : "update");
      if (!u.ok()) args.Problem(std::string(replace ? "replacement" : "update") + " is required");
      if (u.type() == BsonType::kArray && replace) {
        args.Problem("a replacement must be a document, not a pipeline");
      } else if (u.type() == BsonType::kDocument) {
        *client_error = replace ? CheckReplacementDocument(u.Document())
                                : CheckUpdateDocument(u.Document());
      }
      st.AppendDocument("q", args.Doc("filter").view());
      st.AppendElementAs("u", u);
      if (kind == WriteKind::kUpdateMany) st.AppendBool("multi", true);
      RouteArgs(args,
                {{"upsert", "upsert", Place::kStatement},
                 {"arrayFilters", "arrayFilters", Place::kStatement},
                 {"hint", "hint", Place::kStatement},
                 {"collation", "collation", Place::kStatement},
                 {"sort", "sort", Place::kStatement}},
                nullptr, &st);
      break;
    }
    case WriteKind::kDeleteOne:
    case WriteKind::kDeleteMany:
      m->command = CommandKind::kDelete;
      st.AppendDocument("q", args.Doc("filter").view());
      st.AppendInt32("limit", kind == WriteKind::kDeleteOne ? 1 : 0);
      RouteArgs(args,
                {{"hint", "hint", Place::kStatement}, {"collation", "collation", Place::kStatement}},
                nullptr, &st);
      break;
  }
  RouteArgs(args, command_routes, command_args, nullptr);
  m->statement = std::move(st).Build();
  return args.Problems();
}

// The CRUD spec's BulkWriteResult.
struct BulkResult {
  int64_t inserted = 0;
  int64_t matched = 0;
  int64_t modified = 0;
  int64_t deleted = 0;
  std::vector<std::pair<size_t, Value>> inserted_ids;
  std::vector<std::pair<size_t, Value>> upserted_ids;

  Value ToValue() const {
    BsonBuilder b;
    b.OpenDocument("v");
    b.AppendInt64("insertedCount", inserted);
    b.AppendInt64("matchedCount", matched);
    b.AppendInt64("modifiedCount", modified);
    b.AppendInt64("deletedCount", deleted);
    b.AppendInt64("upsertedCount", static_cast<int64_t>(upserted_ids.size()));
    b.OpenDocument("upsertedIds");
    for (const auto& [i, id] : upserted_ids) b.AppendElementAs(std::to_string(i), id.element());
    b.Close();
    b.OpenDocument("insertedIds");
    for (const auto& [i, id] : inserted_ids) b.AppendElementAs(std::to_string(i), id.element());
    b.Close();
    b.Close();
    Document holder = std::move(b).Build();
    return Value::FromElement(holder.Get("v"));
  }
};

// A BulkWriteError: its code is the first write error's, its message lists
// them all, and it carries the partial result.
OpResult BulkWriteError(const std::vector<std::pair<size_t, Status>>& errors,
                        const BulkResult& partial) {
  std::string message = "BulkWriteError:";
  for (const auto& [i, s] : errors) {
    message += " [index " + std::to_string(i) + "] " + s.ToString() + ";";
  }
  OpResult r = EngineError(Status(errors.front().second.code(), message));
  r.error_result = partial.ToValue();
  return r;
}

// ---------------------------------------------------------------------------
// The runner of one test.

struct Entity {
  enum class Kind { kClient, kDatabase, kCollection } kind = Entity::Kind::kClient;
  std::string database;
  std::string collection;
  // Non-empty: options rockdoc cannot honour (a write concern of {w: 0},
  // ...). Creating the entity is fine; an operation on it is a runner error.
  std::string unsupported;
};

class UnifiedTestRunner {
 public:
  explicit UnifiedTestRunner(const CaseParam& param) : param_(param) {}

  // Runs the test, reporting failures through GoogleTest.
  void Run();
  // True when the test asserts command events (not checked).
  bool has_events() const { return has_events_; }
  // Non-empty when the test file says to skip the test (test.skipReason).
  const std::string& skip_reason() const { return skip_reason_; }

 private:
  bool Setup(const RawObject& file_fields);
  bool CreateEntities(const std::string& raw);
  bool LoadInitialData(const std::string& raw);
  // False when the test cannot go on (a runner error).
  bool RunOperation(size_t index, const std::string& raw);
  void CheckOutcome(const std::string& raw);

  // A command's reply (what RunCommand returns: ok 1 or 0).
  Document Command(std::string_view db, const Document& command) {
    return client_->RunCommand(db, command);
  }
  // Runs a cursor command (find, listIndexes) and every getMore to its end.
  StatusOr<std::vector<Document>> Drain(std::string_view db, std::string_view collection,
                                        const Document& command, const Element& batch_size);
  // Drops a collection, ignoring NamespaceNotFound as drivers do.
  Status DropCollection(std::string_view db, std::string_view collection);
  // Runs write commands for `models` (one per run of one kind when ordered,
  // one per kind when not, as drivers batch) and gathers their results.
  OpResult RunWrites(const Entity& coll, const std::vector<WriteModel>& models,
                     const Document& command_args, bool ordered, BulkResult* bulk,
                     std::vector<std::pair<size_t, Status>>* errors);

  OpResult Execute(const std::string& name, const std::string& object, Args& args);
  OpResult CollectionOp(const std::string& name, const Entity& coll, Args& args);
  OpResult DatabaseOp(const std::string& name, const Entity& db, Args& args);
  OpResult Find(const Entity& coll, Args& args, bool one);
  OpResult InsertMany(const Entity& coll, Args& args);
  OpResult SingleWrite(WriteKind kind, const Entity& coll, Args& args);
  OpResult FindOneAndModify(const std::string& name, const Entity& coll, Args& args);
  OpResult BulkWrite(const Entity& coll, Args& args);

  void CheckError(const OpResult& r, DocumentView expect_error);

  const CaseParam& param_;
  ScratchDir dir_;
  std::unique_ptr<Client> client_;
  std::map<std::string, Entity> entities_;
  bool has_events_ = false;
  std::string skip_reason_;
};

void UnifiedTestRunner::Run() {
  auto text = ReadFile(CrudDir() + "/" + param_.file);
  ASSERT_TRUE(text.ok()) << text.status();
  auto file_fields = ParseObject(*text);
  ASSERT_TRUE(file_fields.ok()) << file_fields.status();
  const std::string* tests_raw = Field(*file_fields, "tests");
  ASSERT_NE(tests_raw, nullptr);
  auto tests = ParseArray(*tests_raw);
  ASSERT_TRUE(tests.ok()) << tests.status();
  std::optional<RawObject> test;
  for (const std::string& raw : *tests) {
    auto t = ParseObject(raw);
    ASSERT_TRUE(t.ok()) << t.status();
    const std::string* d = Field(*t, "description");
    if (d != nullptr && ParseString(*d).value_or("") == param_.description) {
      test = std::move(t).value();
      break;
    }
  }
  ASSERT_TRUE(test.has_value()) << "test not found in " << param_.file;

  for (const auto& [key, raw] : *test) {
    if (key == "skipReason") {
      skip_reason_ = "skipReason: " + ParseString(raw).value_or(raw);
      return;
    }
  }
  if (!Setup(*file_fields)) return;

  for (const auto& [key, raw] : *test) {
    if (key == "description" || key == "operations" || key == "outcome" ||
        key == "runOnRequirements") {
      continue;  // runOnRequirements: INDEX.json's class says what applies
    }
    if (key == "expectEvents") {
      has_events_ = true;
      continue;
    }
    ADD_FAILURE() << "runner error: unknown test field " << key;
    return;
  }
  const std::string* ops_raw = Field(*test, "operations");
  ASSERT_NE(ops_raw, nullptr) << "test without operations";
  auto ops = ParseArray(*ops_raw);
  ASSERT_TRUE(ops.ok()) << ops.status();
  for (size_t i = 0; i < ops->size(); ++i) {
    if (!RunOperation(i, (*ops)[i])) return;
  }
  if (const std::string* outcome = Field(*test, "outcome")) CheckOutcome(*outcome);
}

bool UnifiedTestRunner::Setup(const RawObject& file_fields) {
  auto client = Client::Open(dir_.path(), test::TestClientOptions());
  if (!client.ok()) {
    ADD_FAILURE() << "Client::Open: " << client.status();
    return false;
  }
  client_ = std::move(client).value();
  for (const auto& [key, raw] : file_fields) {
    if (key == "createEntities") {
      if (!CreateEntities(raw)) return false;
    }
  }
  for (const auto& [key, raw] : file_fields) {
    if (key == "initialData") {
      if (!LoadInitialData(raw)) return false;
    } else if (key != "createEntities" && key != "description" && key != "schemaVersion" &&
               key != "tests" && key != "runOnRequirements" && key != "_yamlAnchors") {
      ADD_FAILURE() << "runner error: unknown file field " << key;
      return false;
    }
  }
  return true;
}

bool UnifiedTestRunner::CreateEntities(const std::string& raw) {
  auto list = ParseArray(raw);
  if (!list.ok()) {
    ADD_FAILURE() << "createEntities: " << list.status();
    return false;
  }
  for (const std::string& entity_raw : *list) {
    auto parsed = FromJson(entity_raw);
    if (!parsed.ok() || parsed->view().CountFields() != 1) {
      ADD_FAILURE() << "createEntities: bad entity " << entity_raw;
      return false;
    }
    Element spec = *parsed->begin();
    std::string type(spec.key());
    if (spec.type() != BsonType::kDocument) {
      ADD_FAILURE() << "createEntities: bad entity " << entity_raw;
      return false;
    }
    DocumentView s = spec.Document();
    Element id = s.Get("id");
    if (id.type() != BsonType::kString || entities_.count(std::string(id.String())) != 0) {
      ADD_FAILURE() << "createEntities: missing or duplicate id in " << entity_raw;
      return false;
    }
    Entity e;
    if (type == "client") {
      // One rockdoc::Client plays every client of the file: one deployment.
      // Its options (observeEvents, uriOptions, ...) concern a server.
      e.kind = Entity::Kind::kClient;
    } else if (type == "database") {
      Element client = s.Get("client");
      Element name = s.Get("databaseName");
      if (client.type() != BsonType::kString || name.type() != BsonType::kString ||
          entities_.count(std::string(client.String())) == 0 ||
          entities_[std::string(client.String())].kind != Entity::Kind::kClient) {
        ADD_FAILURE() << "createEntities: bad database " << entity_raw;
        return false;
      }
      if (s.Has("databaseOptions")) {
        e.unsupported = "databaseOptions (read/write concerns) concern a server";
      }
      e.kind = Entity::Kind::kDatabase;
      e.database = std::string(name.String());
    } else if (type == "collection") {
      Element db = s.Get("database");
      Element name = s.Get("collectionName");
      if (db.type() != BsonType::kString || name.type() != BsonType::kString ||
          entities_.count(std::string(db.String())) == 0 ||
          entities_[std::string(db.String())].kind != Entity::Kind::kDatabase) {
        ADD_FAILURE() << "createEntities: bad collection " << entity_raw;
        return false;
      }
      if (s.Has("collectionOptions")) {
        e.unsupported = "collectionOptions (read/write concerns) concern a server";
      }
      e.kind = Entity::Kind::kCollection;
      e.database = entities_[std::string(db.String())].database;
      e.collection = std::string(name.String());
    } else {
      ADD_FAILURE() << "runner error: entity type " << type << " is not supported";
      return false;
    }
    entities_.emplace(std::string(id.String()), std::move(e));
  }
  return true;
}

bool UnifiedTestRunner::LoadInitialData(const std::string& raw) {
  auto list = ParseArray(raw);
  if (!list.ok()) {
    ADD_FAILURE() << "initialData: " << list.status();
    return false;
  }
  for (const std::string& item : *list) {
    auto data = FromJson(item);
    if (!data.ok()) {
      ADD_FAILURE() << "initialData: " << data.status();
      return false;
    }
    Element coll_name = data->Get("collectionName");
    Element db_name = data->Get("databaseName");
    Element docs = data->Get("documents");
    Element create_options = data->Get("createOptions");
    if (coll_name.type() != BsonType::kString || db_name.type() != BsonType::kString ||
        docs.type() != BsonType::kArray ||
        (create_options.ok() && create_options.type() != BsonType::kDocument)) {
      ADD_FAILURE() << "initialData: unsupported entry " << item;
      return false;
    }
    Status dropped = DropCollection(db_name.String(), coll_name.String());
    if (!dropped.ok()) {
      ADD_FAILURE() << "initialData: drop: " << dropped;
      return false;
    }
    // As the unified runner specification: create the collection (with
    // createOptions) when it has options or no documents, then insert.
    if (create_options.ok() || docs.Array().empty()) {
      BsonBuilder create;
      create.AppendString("create", coll_name.String());
      if (create_options.ok()) {
        for (Element o : create_options.Document()) create.AppendElement(o);
      }
      Document reply = Command(db_name.String(), std::move(create).Build());
      if (!ReplyOk(reply)) {
        ADD_FAILURE() << "initialData: create: " << ToJson(reply);
        return false;
      }
    }
    if (docs.Array().empty()) continue;
    BsonBuilder insert;
    insert.AppendString("insert", coll_name.String());
    insert.AppendArray("documents", docs.Array());
    Document reply = Command(db_name.String(), std::move(insert).Build());
    if (!ReplyOk(reply) || reply.Get("writeErrors").ok()) {
      ADD_FAILURE() << "initialData: insert: " << ToJson(reply);
      return false;
    }
  }
  return true;
}

bool UnifiedTestRunner::RunOperation(size_t index, const std::string& raw) {
  auto op = ParseObject(raw);
  if (!op.ok()) {
    ADD_FAILURE() << "operation " << index << ": " << op.status();
    return false;
  }
  std::string name, object;
  std::optional<Value> expect_result;
  std::optional<Document> expect_error;
  bool ignore_result = false;
  Document arguments;
  for (const auto& [key, value_raw] : *op) {
    Status st;
    if (key == "name" || key == "object") {
      auto s = ParseString(value_raw);
      st = s.status();
      if (s.ok()) (key == "name" ? name : object) = *s;
    } else if (key == "arguments") {
      auto d = FromJson(value_raw);
      st = d.status();
      if (d.ok()) arguments = std::move(d).value();
    } else if (key == "expectResult") {
      auto v = ParseValue(value_raw);
      st = v.status();
      if (v.ok()) expect_result = std::move(v).value();
    } else if (key == "expectError") {
      auto d = FromJson(value_raw);
      st = d.status();
      if (d.ok()) expect_error = std::move(d).value();
    } else if (key == "ignoreResultAndError") {
      ignore_result = value_raw == "true";
    } else {
      ADD_FAILURE() << "operation " << index << ": runner error: unsupported field " << key;
      return false;
    }
    if (!st.ok()) {
      ADD_FAILURE() << "operation " << index << " field " << key << ": " << st;
      return false;
    }
  }
  SCOPED_TRACE("operation " + std::to_string(index) + ": " + name + " on " + object + " " +
               ToJson(arguments));
  Args args(std::move(arguments));
  OpResult r = Execute(name, object, args);
  if (!r.runner_error.empty()) {
    ADD_FAILURE() << "runner cannot execute " << name << ": " << r.runner_error
                  << "\n(if this is a server-only matter, list the test in kSkips with the reason)";
    return false;
  }
  if (ignore_result) return true;
  if (expect_error) {
    CheckError(r, *expect_error);
    return true;
  }
  if (r.failed) {
    ADD_FAILURE() << name << " failed: " << r.error
                  << (r.client_error ? " (runner's driver-side check)" : "");
    return true;
  }
  if (expect_result) {
    MatchNotes notes;
    std::string why = MatchValue(expect_result->element(), r.result.element(), r.root, "$", &notes);
    EXPECT_EQ(why, "") << name
                       << " result differs\n  expected: " << DescribeValue(expect_result->element())
                       << "\n  actual:   " << DescribeValue(r.result.element());
    for (const std::string& path : notes.extra_root_keys) {
      Stats().extra_root_fields.push_back(param_.file + ": " + param_.description + ": operation " +
                                          std::to_string(index) + " " + name + " " + path);
    }
  }
  return true;
}

void UnifiedTestRunner::CheckError(const OpResult& r, DocumentView expect_error) {
  if (!r.failed) {
    ADD_FAILURE() << "expected an error " << ToJson(expect_error) << ", got the result "
                  << DescribeValue(r.result.element());
    return;
  }
  for (Element e : expect_error) {
    std::string_view key = e.key();
    if (key == "isError") {
      EXPECT_TRUE(e.type() == BsonType::kBool && e.Bool()) << "isError must be true";
    } else if (key == "isClientError") {
      EXPECT_EQ(r.client_error, e.type() == BsonType::kBool && e.Bool())
          << "isClientError: expected " << DescribeValue(e) << ", the error is " << r.error
          << (r.client_error ? " (runner's driver-side check)" : " (from rockdoc)");
    } else if (key == "errorContains") {
      EXPECT_NE(AsciiLower(r.error.message()).find(AsciiLower(e.String())), std::string::npos)
          << "errorContains: \"" << e.String() << "\" not in " << r.error;
    } else if (key == "errorCode") {
      int64_t code = 0;
      EXPECT_TRUE(e.ExactInt64(&code) && code == r.error.code_number())
          << "errorCode: expected " << DescribeValue(e) << ", got " << r.error;
    } else if (key == "errorCodeName") {
      EXPECT_EQ(AsciiLower(r.error.code_name()), AsciiLower(e.String()))
          << "errorCodeName: got " << r.error;
    } else if (key == "expectResult") {
      MatchNotes notes;
      std::string why = MatchValue(e, r.error_result.element(), RootMode::kDocument, "$", &notes);
      EXPECT_EQ(why, "") << "the error's result differs\n  expected: " << DescribeValue(e)
                         << "\n  actual:   " << DescribeValue(r.error_result.element());
    } else {
      ADD_FAILURE() << "runner error: expectError." << key << " is not supported";
    }
  }
}

void UnifiedTestRunner::CheckOutcome(const std::string& raw) {
  auto list = ParseArray(raw);
  ASSERT_TRUE(list.ok()) << "outcome: " << list.status();
  for (const std::string& item : *list) {
    auto data = FromJson(item);
    ASSERT_TRUE(data.ok()) << "outcome: " << data.status();
    Element coll_name = data->Get("collectionName");
    Element db_name = data->Get("databaseName");
    Element docs = data->Get("documents");
    ASSERT_TRUE(coll_name.type() == BsonType::kString && db_name.type() == BsonType::kString &&
                docs.type() == BsonType::kArray)
        << "outcome: bad entry " << item;
    std::string ns = std::string(db_name.String()) + "." + std::string(coll_name.String());
    SCOPED_TRACE("outcome of " + ns);
    // Everything, in _id order: sorted here rather than by rockdoc's sort,
    // so the outcome does not depend on the planner under test.
    BsonBuilder find;
    find.AppendString("find", coll_name.String());
    auto actual = Drain(db_name.String(), coll_name.String(), std::move(find).Build(), Element());
    ASSERT_TRUE(actual.ok()) << "reading " << ns << ": " << actual.status();
    std::stable_sort(actual->begin(), actual->end(), [](const Document& a, const Document& b) {
      return CompareValues(a.Get("_id"), b.Get("_id")) < 0;
    });
    std::vector<Element> expected(docs.Array().begin(), docs.Array().end());
    auto describe_all = [&]() {
      std::string s;
      for (const Document& d : *actual) s += "\n    " + ToJson(d, JsonFormat::kShell);
      return s;
    };
    if (expected.size() != actual->size()) {
      ADD_FAILURE() << ns << " holds " << actual->size() << " documents, expected "
                    << expected.size() << "\n  expected: " << DescribeValue(docs)
                    << "\n  actual:" << describe_all();
      continue;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      Value got = DocumentValue((*actual)[i]);
      std::string why = MatchExact(expected[i], got.element(), "$[" + std::to_string(i) + "]");
      EXPECT_EQ(why, "") << ns << " document " << i
                         << " differs\n  expected: " << DescribeValue(expected[i])
                         << "\n  actual:   " << DescribeValue(got.element())
                         << "\n  collection:" << describe_all();
    }
  }
}

StatusOr<std::vector<Document>> UnifiedTestRunner::Drain(std::string_view db,
                                                         std::string_view collection,
                                                         const Document& command,
                                                         const Element& batch_size) {
  std::vector<Document> out;
  Document reply = Command(db, command);
  const char* batch_name = "firstBatch";
  for (;;) {
    if (!ReplyOk(reply)) return ReplyError(reply);
    Element cursor = reply.Get("cursor");
    if (cursor.type() != BsonType::kDocument) return InternalError("no cursor in " + ToJson(reply));
    Element batch = cursor.Document().Get(batch_name);
    if (batch.type() != BsonType::kArray) return InternalError("no batch in " + ToJson(reply));
    for (Element d : batch.Array()) out.push_back(CopyDocument(d.Document()));
    Element id = cursor.Document().Get("id");
    if (!id.IsNumber() || id.NumberAsDouble() == 0) return out;
    BsonBuilder more;
    more.AppendElementAs("getMore", id);
    more.AppendString("collection", collection);
    if (batch_size.ok()) more.AppendElementAs("batchSize", batch_size);
    reply = Command(db, std::move(more).Build());
    batch_name = "nextBatch";
  }
}

Status UnifiedTestRunner::DropCollection(std::string_view db, std::string_view collection) {
  BsonBuilder drop;
  drop.AppendString("drop", collection);
  Document reply = Command(db, std::move(drop).Build());
  if (ReplyOk(reply)) return Status::OK();
  Status s = ReplyError(reply);
  return s.code() == ErrorCode::kNamespaceNotFound ? Status::OK() : s;
}

OpResult UnifiedTestRunner::Execute(const std::string& name, const std::string& object,
                                    Args& args) {
  if (object == "testRunner") {
    return RunnerError("special test operation " + name +
                       " (fail points, sessions, event assertions) concerns a server");
  }
  auto it = entities_.find(object);
  if (it == entities_.end()) return RunnerError("no entity named " + object);
  const Entity& e = it->second;
  if (!e.unsupported.empty()) return RunnerError(object + ": " + e.unsupported);
  args.Unsupported("session", "the runner's entities have no sessions");
  switch (e.kind) {
    case Entity::Kind::kCollection:
      return CollectionOp(name, e, args);
    case Entity::Kind::kDatabase:
      return DatabaseOp(name, e, args);
    case Entity::Kind::kClient:
      return RunnerError("client operation " + name +
                         " is not supported (clientBulkWrite, "
                         "listDatabases, watch concern a server)");
  }
  return RunnerError("unreachable");
}

// A command whose reply is just ok (drop, create, dropIndexes): its error
// or success with no result.
OpResult NoResult(const Document& reply) {
  return ReplyOk(reply) ? Success(Value(), RootMode::kNone) : EngineError(ReplyError(reply));
}

OpResult UnifiedTestRunner::DatabaseOp(const std::string& name, const Entity& db, Args& args) {
  if (name == "dropCollection") {
    std::string coll = args.String("collection");
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    Status s = DropCollection(db.database, coll);
    return s.ok() ? Success(Value(), RootMode::kNone) : EngineError(s);
  }
  if (name == "createCollection") {
    std::string coll = args.String("collection");
    BsonBuilder cmd;
    cmd.AppendString("create", coll);
    for (Element e : args.Rest()) cmd.AppendElement(e);  // decoded by the command
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    return NoResult(Command(db.database, std::move(cmd).Build()));
  }
  return RunnerError("database operation " + name + " is not supported by the runner");
}

OpResult UnifiedTestRunner::CollectionOp(const std::string& name, const Entity& coll,
                                         Args& args) {
  if (name == "find") return Find(coll, args, /*one=*/false);
  if (name == "findOne") return Find(coll, args, /*one=*/true);
  if (name == "insertOne") return SingleWrite(WriteKind::kInsertOne, coll, args);
  if (name == "insertMany") return InsertMany(coll, args);
  if (name == "updateOne") return SingleWrite(WriteKind::kUpdateOne, coll, args);
  if (name == "updateMany") return SingleWrite(WriteKind::kUpdateMany, coll, args);
  if (name == "replaceOne") return SingleWrite(WriteKind::kReplaceOne, coll, args);
  if (name == "deleteOne") return SingleWrite(WriteKind::kDeleteOne, coll, args);
  if (name == "deleteMany") return SingleWrite(WriteKind::kDeleteMany, coll, args);
  if (name == "findOneAndUpdate" || name == "findOneAndReplace" || name == "findOneAndDelete") {
    return FindOneAndModify(name, coll, args);
  }
  if (name == "bulkWrite") return BulkWrite(coll, args);
  BsonBuilder cmd;
  if (name == "countDocuments") {
    // As the drivers: an aggregation, [{$match}, {$skip}, {$limit},
    // {$group: {_id: 1, n: {$sum: 1}}}], whose one document holds the count.
    cmd.AppendString("aggregate", coll.collection);
    cmd.OpenArray("pipeline");
    cmd.OpenDocument("").AppendDocument("$match", args.Doc("filter").view()).Close();
    for (const char* stage : {"skip", "limit"}) {
      if (Element e = args.Get(stage); e.ok()) {
        cmd.OpenDocument("").AppendElementAs(std::string("$") + stage, e).Close();
      }
    }
    cmd.OpenDocument("").OpenDocument("$group").AppendInt32("_id", 1);
    cmd.OpenDocument("n").AppendInt32("$sum", 1).Close().Close().Close();
    cmd.Close();
    cmd.OpenDocument("cursor").Close();
    // hint, maxTimeMS, comment, collation: the aggregate command's fields.
    for (Element e : args.Rest()) cmd.AppendElement(e);
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    auto docs = Drain(coll.database, coll.collection, std::move(cmd).Build(), Element());
    if (!docs.ok()) return EngineError(docs.status());
    int64_t n = 0;
    if (!docs->empty()) (*docs)[0].Get("n").ExactInt64(&n);
    return Success(Int64Value(n), RootMode::kNone);
  }
  if (name == "count" || name == "estimatedDocumentCount") {
    cmd.AppendString("count", coll.collection);
    if (name != "estimatedDocumentCount") {
      cmd.AppendDocument("query", args.Doc("filter").view());
    }
    RouteArgs(args,
              {{"skip", "skip", Place::kCommand},
               {"limit", "limit", Place::kCommand},
               {"hint", "hint", Place::kCommand},
               {"collation", "collation", Place::kCommand},
               {"maxTimeMS", "maxTimeMS", Place::kCommand},
               {"comment", "comment", Place::kCommand}},
              &cmd, nullptr);
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    Document reply = Command(coll.database, std::move(cmd).Build());
    if (!ReplyOk(reply)) return EngineError(ReplyError(reply));
    return Success(Int64Value(ReplyNumber(reply, "n")), RootMode::kNone);
  }
  if (name == "aggregate") {
    cmd.AppendString("aggregate", coll.collection);
    Element pipeline = args.Get("pipeline");
    if (!pipeline.ok()) args.Problem("pipeline is required");
    cmd.AppendElement(pipeline);
    Element batch_size = args.Get("batchSize");
    cmd.OpenDocument("cursor");
    if (batch_size.ok()) cmd.AppendElement(batch_size);
    cmd.Close();
    // Every other argument is a field of the aggregate command, by name.
    for (Element e : args.Rest()) cmd.AppendElement(e);
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    auto docs = Drain(coll.database, coll.collection, std::move(cmd).Build(), batch_size);
    if (!docs.ok()) return EngineError(docs.status());
    return Success(ArrayOfDocuments(*docs), RootMode::kEachDocument);
  }
  if (name == "distinct") {
    cmd.AppendString("distinct", coll.collection);
    if (!args.Get("fieldName").ok()) args.Problem("fieldName is required");
    RouteArgs(args,
              {{"fieldName", "key", Place::kCommand},
               {"filter", "query", Place::kCommand},
               {"hint", "hint", Place::kCommand},
               {"collation", "collation", Place::kCommand},
               {"maxTimeMS", "maxTimeMS", Place::kCommand},
               {"comment", "comment", Place::kCommand}},
              &cmd, nullptr);
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    Document reply = Command(coll.database, std::move(cmd).Build());
    if (!ReplyOk(reply)) return EngineError(ReplyError(reply));
    return Success(Value::FromElement(reply.Get("values")), RootMode::kNone);
  }
  if (name == "createIndex") {
    Document keys = args.Doc("keys");
    std::string index_name = args.String("name");
    if (index_name.empty()) index_name = IndexName(keys);
    cmd.AppendString("createIndexes", coll.collection);
    cmd.OpenArray("indexes").OpenDocument("");
    cmd.AppendDocument("key", keys.view());
    cmd.AppendString("name", index_name);
    for (Element e : args.Rest()) cmd.AppendElement(e);  // the index's options
    cmd.Close().Close();
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    Document reply = Command(coll.database, std::move(cmd).Build());
    if (!ReplyOk(reply)) return EngineError(ReplyError(reply));
    return Success(StringValue(index_name), RootMode::kNone);
  }
  if (name == "dropIndex") {
    cmd.AppendString("dropIndexes", coll.collection);
    RouteArgs(args, {{"name", "index", Place::kCommand}}, &cmd, nullptr);
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    return NoResult(Command(coll.database, std::move(cmd).Build()));
  }
  if (name == "drop") {
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    Status s = DropCollection(coll.database, coll.collection);
    return s.ok() ? Success(Value(), RootMode::kNone) : EngineError(s);
  }
  return RunnerError("collection operation " + name + " is not supported");
}

OpResult UnifiedTestRunner::Find(const Entity& coll, Args& args, bool one) {
  BsonBuilder cmd;
  cmd.AppendString("find", coll.collection);
  Element batch_size = args.Get("batchSize");
  // A negative limit is a single batch of that many (the CRUD spec).
  Element limit = args.Get("limit");
  int64_t n = 0;
  bool single_batch = one;
  if (limit.ok() && limit.ExactInt64(&n) && n < 0) {
    cmd.AppendInt64("limit", -n);
    single_batch = true;
  } else if (one) {
    cmd.AppendInt64("limit", 1);
  } else if (limit.ok()) {
    cmd.AppendElement(limit);
  }
  if (single_batch) cmd.AppendBool("singleBatch", true);
  if (batch_size.ok()) cmd.AppendElement(batch_size);
  // Every other argument of find is a field of the find command, by name.
  for (Element e : args.Rest()) cmd.AppendElement(e);
  if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
  auto docs = Drain(coll.database, coll.collection, std::move(cmd).Build(), batch_size);
  if (!docs.ok()) return EngineError(docs.status());
  if (one) {
    return Success(docs->empty() ? NullValue() : DocumentValue(docs->front()),
                   RootMode::kDocument);
  }
  return Success(ArrayOfDocuments(*docs), RootMode::kEachDocument);
}

OpResult UnifiedTestRunner::RunWrites(const Entity& coll, const std::vector<WriteModel>& models,
                                      const Document& command_args, bool ordered,
                                      BulkResult* bulk,
                                      std::vector<std::pair<size_t, Status>>* errors) {
  // The batches: runs of one command kind in order (ordered), or one batch
  // per kind (unordered), each a list of model indexes.
  std::vector<std::vector<size_t>> batches;
  if (ordered) {
    for (size_t i = 0; i < models.size(); ++i) {
      if (batches.empty() || models[batches.back().front()].command != models[i].command) {
        batches.emplace_back();
      }
      batches.back().push_back(i);
    }
  } else {
    for (CommandKind kind : {CommandKind::kInsert, CommandKind::kUpdate, CommandKind::kDelete}) {
      std::vector<size_t> batch;
      for (size_t i = 0; i < models.size(); ++i) {
        if (models[i].command == kind) batch.push_back(i);
      }
      if (!batch.empty()) batches.push_back(std::move(batch));
    }
  }
  for (const std::vector<size_t>& batch : batches) {
    const CommandKind kind = models[batch.front()].command;
    static constexpr const char* kNames[] = {"insert", "update", "delete"};
    static constexpr const char* kStatements[] = {"documents", "updates", "deletes"};
    BsonBuilder cmd;
    cmd.AppendString(kNames[static_cast<int>(kind)], coll.collection);
    cmd.OpenArray(kStatements[static_cast<int>(kind)]);
    for (size_t i : batch) cmd.AppendDocument("", models[i].statement.view());
    cmd.Close();
    cmd.AppendBool("ordered", ordered);
    for (Element e : command_args) cmd.AppendElement(e);
    Document reply = Command(coll.database, std::move(cmd).Build());
    if (!ReplyOk(reply)) return EngineError(ReplyError(reply));
    std::vector<std::pair<size_t, Status>> batch_errors = WriteErrors(reply);
    std::set<size_t> failed;
    for (auto& [index, status] : batch_errors) {
      failed.insert(index);
      errors->emplace_back(batch[index], status);
    }
    const int64_t n = ReplyNumber(reply, "n");
    switch (kind) {
      case CommandKind::kInsert: {
        bulk->inserted += n;
        // Ordered: nothing after the first failure was tried.
        size_t stop = ordered && !failed.empty() ? *failed.begin() : batch.size();
        for (size_t k = 0; k < stop; ++k) {
          if (failed.count(k)) continue;
          bulk->inserted_ids.emplace_back(
              batch[k], Value::FromElement(models[batch[k]].statement.Get("_id")));
        }
        break;
      }
      case CommandKind::kUpdate: {
        int64_t upserted = 0;
        Element list = reply.Get("upserted");
        if (list.type() == BsonType::kArray) {
          for (Element u : list.Array()) {
            ++upserted;
            bulk->upserted_ids.emplace_back(
                batch[static_cast<size_t>(ReplyNumber(u.Document(), "index"))],
                Value::FromElement(u.Document().Get("_id")));
          }
        }
        bulk->matched += n - upserted;
        bulk->modified += ReplyNumber(reply, "nModified");
        break;
      }
      case CommandKind::kDelete:
        bulk->deleted += n;
        break;
    }
    if (ordered && !batch_errors.empty()) break;
  }
  std::sort(errors->begin(), errors->end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::sort(bulk->inserted_ids.begin(), bulk->inserted_ids.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::sort(bulk->upserted_ids.begin(), bulk->upserted_ids.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return Success(Value(), RootMode::kNone);
}

OpResult UnifiedTestRunner::InsertMany(const Entity& coll, Args& args) {
  Element documents = args.Get("documents");
  if (documents.type() != BsonType::kArray) return RunnerError("documents must be an array");
  const bool ordered = args.Bool("ordered", true);
  BsonBuilder command_args;
  RouteArgs(args,
            {{"comment", "comment", Place::kCommand},
             {"bypassDocumentValidation", "bypassDocumentValidation", Place::kCommand}},
            &command_args, nullptr);
  if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
  std::vector<WriteModel> models;
  for (Element d : documents.Array()) {
    if (d.type() != BsonType::kDocument) return ClientError("documents must be documents");
    models.push_back({WriteKind::kInsertOne, CommandKind::kInsert, WithId(d.Document())});
  }
  if (models.empty()) return ClientError("insertMany needs at least one document");
  BulkResult bulk;
  std::vector<std::pair<size_t, Status>> errors;
  OpResult r = RunWrites(coll, models, std::move(command_args).Build(), ordered, &bulk, &errors);
  if (r.failed) return r;
  if (!errors.empty()) return BulkWriteError(errors, bulk);
  BsonBuilder b;
  b.OpenDocument("v");
  b.OpenDocument("insertedIds");
  for (const auto& [i, id] : bulk.inserted_ids) b.AppendElementAs(std::to_string(i), id.element());
  b.Close();
  b.Close();
  Document holder = std::move(b).Build();
  return Success(Value::FromElement(holder.Get("v")), RootMode::kDocument);
}

OpResult UnifiedTestRunner::SingleWrite(WriteKind kind, const Entity& coll, Args& args) {
  WriteModel m;
  std::string client_error;
  BsonBuilder command_args;
  if (std::string p = ParseWriteModel(kind, args, &m, &client_error, &command_args); !p.empty()) {
    return RunnerError(p);
  }
  if (!client_error.empty()) return ClientError(client_error);
  BulkResult bulk;
  std::vector<std::pair<size_t, Status>> errors;
  OpResult r = RunWrites(coll, {m}, std::move(command_args).Build(), true, &bulk, &errors);
  if (r.failed) return r;
  if (!errors.empty()) return EngineError(errors.front().second);
  BsonBuilder b;
  b.OpenDocument("v");
  switch (m.command) {
    case CommandKind::kInsert:
      b.AppendElementAs("insertedId", m.statement.Get("_id"));
      break;
    case CommandKind::kDelete:
      b.AppendInt64("deletedCount", bulk.deleted);
      break;
    case CommandKind::kUpdate:
      b.AppendInt64("matchedCount", bulk.matched);
      b.AppendInt64("modifiedCount", bulk.modified);
      b.AppendInt64("upsertedCount", static_cast<int64_t>(bulk.upserted_ids.size()));
      if (!bulk.upserted_ids.empty()) {
        b.AppendElementAs("upsertedId", bulk.upserted_ids.front().second.element());
      }
      break;
  }
  b.Close();
  Document holder = std::move(b).Build();
  return Success(Value::FromElement(holder.Get("v")), RootMode::kDocument);
}

OpResult UnifiedTestRunner::FindOneAndModify(const std::string& name, const Entity& coll,
                                             Args& args) {
  BsonBuilder cmd;
  cmd.AppendString("findAndModify", coll.collection);
  cmd.AppendDocument("query", args.Doc("filter").view());
  RouteArgs(args,
            {{"sort", "sort", Place::kCommand},
             {"projection", "fields", Place::kCommand},
             {"hint", "hint", Place::kCommand},
             {"collation", "collation", Place::kCommand},
             {"maxTimeMS", "maxTimeMS", Place::kCommand},
             {"comment", "comment", Place::kCommand},
             {"let", "let", Place::kCommand},
             {"bypassDocumentValidation", "bypassDocumentValidation", Place::kCommand}},
            &cmd, nullptr);
  std::string client_error;
  if (name == "findOneAndDelete") {
    cmd.AppendBool("remove", true);
  } else {
    const bool replace = name == "findOneAndReplace";
    Element u = args.Get(replace ? "replacement" : "update");
    if (u.type() == BsonType::kArray && !replace) {
      cmd.AppendArray("update", u.Array());  // an update pipeline
    } else if (u.type() != BsonType::kDocument) {
      args.Problem(std::string(replace ? "replacement" : "update") + " must be a document");
    } else {
      client_error =
          replace ? CheckReplacementDocument(u.Document()) : CheckUpdateDocument(u.Document());
      cmd.AppendDocument("update", u.Document());
    }
    std::string rd = args.String("returnDocument");
    if (rd != "" && rd != "Before" && rd != "After") {
      args.Problem("returnDocument must be Before or After, got " + rd);
    }
    cmd.AppendBool("new", rd == "After");
    RouteArgs(args,
              {{"upsert", "upsert", Place::kCommand},
               {"arrayFilters", "arrayFilters", Place::kCommand}},
              &cmd, nullptr);
  }
  if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
  if (!client_error.empty()) return ClientError(client_error);
  Document reply = Command(coll.database, std::move(cmd).Build());
  if (!ReplyOk(reply)) return EngineError(ReplyError(reply));
  Element value = reply.Get("value");
  return Success(value.type() == BsonType::kDocument ? DocumentValue(value.Document())
                                                      : NullValue(),
                 RootMode::kDocument);
}

OpResult UnifiedTestRunner::BulkWrite(const Entity& coll, Args& args) {
  Element requests = args.Get("requests");
  bool ordered = args.Bool("ordered", true);
  BsonBuilder command_args;
  RouteArgs(args,
            {{"comment", "comment", Place::kCommand},
             {"let", "let", Place::kCommand},
             {"bypassDocumentValidation", "bypassDocumentValidation", Place::kCommand}},
            &command_args, nullptr);
  if (requests.type() != BsonType::kArray) args.Problem("requests must be an array");
  if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
  // As a driver does, every model is built and checked before any write.
  static const std::map<std::string, WriteKind, std::less<>> kKinds = {
      {"insertOne", WriteKind::kInsertOne},   {"updateOne", WriteKind::kUpdateOne},
      {"updateMany", WriteKind::kUpdateMany}, {"replaceOne", WriteKind::kReplaceOne},
      {"deleteOne", WriteKind::kDeleteOne},   {"deleteMany", WriteKind::kDeleteMany}};
  std::vector<WriteModel> models;
  for (Element request : requests.Array()) {
    if (request.type() != BsonType::kDocument || request.Document().CountFields() != 1) {
      return RunnerError("a bulkWrite request must be {<operation>: {...}}: " +
                         DescribeValue(request));
    }
    Element op = *request.Document().begin();
    auto kind = kKinds.find(op.key());
    if (kind == kKinds.end() || op.type() != BsonType::kDocument) {
      return RunnerError("bulkWrite request " + std::string(op.key()) + " is not supported");
    }
    Args model_args(CopyDocument(op.Document()));
    WriteModel m;
    std::string client_error;
    BsonBuilder unused;  // a model has no command-level arguments
    if (std::string p = ParseWriteModel(kind->second, model_args, &m, &client_error, &unused);
        !p.empty()) {
      return RunnerError(std::string(op.key()) + ": " + p);
    }
    if (!client_error.empty()) return ClientError(client_error);
    models.push_back(std::move(m));
  }
  if (models.empty()) return ClientError("bulkWrite needs at least one request");
  BulkResult bulk;
  std::vector<std::pair<size_t, Status>> errors;
  OpResult r = RunWrites(coll, models, std::move(command_args).Build(), ordered, &bulk, &errors);
  if (r.failed) return r;
  if (!errors.empty()) return BulkWriteError(errors, bulk);
  return Success(bulk.ToValue(), RootMode::kDocument);
}

// ---------------------------------------------------------------------------
// The tests.

class CrudUnifiedTest : public ::testing::TestWithParam<CaseParam> {
 protected:
  void TearDown() override {
    const CaseParam& p = GetParam();
    ClassStats& s = Stats().by_class[p.cls.empty() ? "(not in INDEX)" : p.cls];
    if (IsSkipped()) {
      ++s.skipped;
      ++s.skip_reasons[skip_reason_];
      return;
    }
    ++s.run;
    if (HasFailure()) {
      ++s.failed;
      s.failures.push_back(p.file + ": " + p.description);
    } else {
      ++s.passed;
    }
    if (events_) ++Stats().events_unchecked;
  }
  std::string skip_reason_;
  bool events_ = false;
};

TEST_P(CrudUnifiedTest, Run) {
  const CaseParam& p = GetParam();
  ASSERT_FALSE(p.cls.empty()) << "INDEX.json does not list this test";
  if (p.cls == "not-applicable" && !RunsAnyway(p.file, p.description)) {
    skip_reason_ = "not-applicable (INDEX.json): " + p.reasons;
    GTEST_SKIP() << skip_reason_;
  }
  if (const SkipEntry* skip = FindSkip(p.file, p.description)) {
    skip_reason_ = skip->reason;
    GTEST_SKIP() << skip_reason_;
  }
  UnifiedTestRunner runner(p);
  runner.Run();
  events_ = runner.has_events();
  if (!runner.skip_reason().empty()) {
    skip_reason_ = runner.skip_reason();
    GTEST_SKIP() << skip_reason_;
  }
}

INSTANTIATE_TEST_SUITE_P(Spec, CrudUnifiedTest, ::testing::ValuesIn(GetCatalogue().cases),
                         [](const ::testing::TestParamInfo<CaseParam>& info) {
                           return info.param.name;
                         });

// The catalogue itself: the files and INDEX.json agree, and every listed
// skip names a real test.
TEST(CrudUnifiedCatalogue, FilesAndIndexAgree) {
  const Catalogue& cat = GetCatalogue();
  for (const std::string& e : cat.errors) ADD_FAILURE() << e;
  ASSERT_FALSE(cat.cases.empty()) << "no tests found in " << CrudDir();
  std::map<std::string, int> per_class;
  std::set<std::pair<std::string, std::string>> in_files;
  for (const CaseParam& p : cat.cases) {
    EXPECT_FALSE(p.cls.empty()) << "INDEX.json lacks " << p.file << ": " << p.description;
    ++per_class[p.cls];
    in_files.insert({p.file, p.description});
    if (p.cls == "not-applicable") {
      EXPECT_FALSE(p.reasons.empty()) << "a not-applicable test without reasons: " << p.description;
    }
  }
  for (const auto& [key, entry] : cat.index) {
    EXPECT_EQ(in_files.count(key), 1u)
        << "INDEX.json lists a test no file has: " << key.first << ": " << key.second;
  }
  EXPECT_EQ(per_class["core"], 89);
  for (const SkipEntry& s : kSkips) {
    auto it = std::find_if(cat.cases.begin(), cat.cases.end(), [&](const CaseParam& p) {
      return p.file == s.file && p.description == s.description;
    });
    ASSERT_NE(it, cat.cases.end())
        << "kSkips names a missing test: " << s.file << ": " << s.description;
    EXPECT_NE(it->cls, "not-applicable") << "already skipped by INDEX.json: " << s.description;
    EXPECT_NE(it->cls, "core") << "a core test must run: " << s.file << ": " << s.description;
    EXPECT_NE(std::string(s.reason), "");
  }
}

// ---------------------------------------------------------------------------
// The matcher, checked on its own: each rule can fail.

std::string MatchJson(std::string_view expected, std::string_view actual, RootMode root) {
  Value e = ParseValue(expected).value();
  Value a = actual.empty() ? Value() : ParseValue(actual).value();
  return MatchValue(e.element(), a.element(), root, "$", nullptr);
}

TEST(UnifiedMatcher, RootDocumentsMayHaveExtraFieldsNestedOnesMayNot) {
  EXPECT_EQ(MatchJson(R"({"x": 1})", R"({"x": 1, "y": 1})", RootMode::kDocument), "");
  EXPECT_NE(MatchJson(R"({"x": 1})", R"({"x": 1, "y": 1})", RootMode::kNone), "");
  EXPECT_NE(MatchJson(R"({"x": {"y": 1}})", R"({"x": {"y": 1, "z": 1}})", RootMode::kDocument), "");
  EXPECT_NE(MatchJson(R"({"x": 1, "y": 1})", R"({"x": 1})", RootMode::kDocument), "");
  EXPECT_EQ(MatchJson(R"({"x": 1, "y": 2})", R"({"y": 2, "x": 1})", RootMode::kNone), "");
  EXPECT_EQ(MatchJson(R"([{"x": 1}])", R"([{"x": 1, "y": 2}])", RootMode::kEachDocument), "");
  EXPECT_NE(MatchJson(R"([{"x": 1}])", R"([{"x": 1, "y": 2}])", RootMode::kNone), "");
}

TEST(UnifiedMatcher, NumbersMatchByValueExceptDecimal) {
  EXPECT_EQ(MatchJson("1", R"({"$numberLong": "1"})", RootMode::kNone), "");
  EXPECT_EQ(MatchJson("1", "1.0", RootMode::kNone), "");
  EXPECT_NE(MatchJson("1", "1.5", RootMode::kNone), "");
  EXPECT_NE(MatchJson("1", R"({"$numberDecimal": "1"})", RootMode::kNone), "");
  EXPECT_NE(MatchJson("1", R"("1")", RootMode::kNone), "");
  EXPECT_NE(MatchJson("null", "", RootMode::kNone), "");
}

TEST(UnifiedMatcher, ArraysMustHaveTheSameLength) {
  EXPECT_EQ(MatchJson("[1, 2]", "[1, 2]", RootMode::kNone), "");
  EXPECT_NE(MatchJson("[1, 2]", "[1, 2, 3]", RootMode::kNone), "");
  EXPECT_NE(MatchJson("[1, 2]", "[2, 1]", RootMode::kNone), "");
}

TEST(UnifiedMatcher, SpecialOperators) {
  EXPECT_EQ(MatchJson(R"({"$$unsetOrMatches": 1})", "", RootMode::kNone), "");
  EXPECT_EQ(MatchJson(R"({"$$unsetOrMatches": 1})", "1", RootMode::kNone), "");
  EXPECT_NE(MatchJson(R"({"$$unsetOrMatches": 1})", "2", RootMode::kNone), "");
  EXPECT_EQ(
      MatchJson(R"({"$$unsetOrMatches": {"a": 1}})", R"({"a": 1, "b": 2})", RootMode::kDocument),
      "");
  EXPECT_EQ(MatchJson(R"({"a": {"$$exists": false}})", R"({"b": 1})", RootMode::kDocument), "");
  EXPECT_NE(MatchJson(R"({"a": {"$$exists": false}})", R"({"a": 1})", RootMode::kDocument), "");
  EXPECT_NE(MatchJson(R"({"a": {"$$exists": true}})", R"({"b": 1})", RootMode::kDocument), "");
  EXPECT_EQ(MatchJson(R"({"$$type": ["int", "long"]})", R"({"$numberLong": "5"})", RootMode::kNone),
            "");
  EXPECT_NE(MatchJson(R"({"$$type": "string"})", "5", RootMode::kNone), "");
  EXPECT_NE(MatchJson(R"({"$$type": "string"})", "", RootMode::kNone), "");
  EXPECT_NE(MatchJson(R"({"$$matchesEntity": "x"})", "5", RootMode::kNone), "");
}

TEST(UnifiedMatcher, OutcomeIsExact) {
  Value e = ParseValue(R"({"_id": 1, "a": {"b": 1}})").value();
  EXPECT_EQ(MatchExact(e.element(), ParseValue(R"({"a": {"b": 1.0}, "_id": 1})")->element(), "$"),
            "");
  EXPECT_NE(
      MatchExact(e.element(), ParseValue(R"({"_id": 1, "a": {"b": 1}, "c": 1})")->element(), "$"),
      "");
  EXPECT_NE(
      MatchExact(e.element(), ParseValue(R"({"_id": 1, "a": {"b": 1, "c": 1}})")->element(), "$"),
      "");
  EXPECT_NE(MatchExact(e.element(), ParseValue(R"({"_id": 1})")->element(), "$"), "");
}

}  // namespace
}  // namespace rockdoc::test

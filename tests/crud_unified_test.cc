// The CRUD specification's unified tests (mongodb/specifications,
// source/crud/tests/unified), run against rockdoc's public API.
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
// The runner plays the part of a MongoDB driver over rockdoc: it maps each
// CRUD operation to the API in rockdoc/client.h, shapes results as the CRUD
// spec does (InsertOneResult -> {insertedId}, UpdateResult -> {matchedCount,
// modifiedCount, upsertedCount, upsertedId}, ...), performs the checks the
// CRUD spec gives drivers before anything is sent ("update requires atomic
// operators", "replacement must not contain them": client errors), and
// implements bulkWrite as a sequence of single writes with the spec's
// BulkWriteResult. Everything else is rockdoc's own behaviour.
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

constexpr char kNoAggregate[] = "aggregate: rockdoc's API has no aggregation pipeline (client.h)";
constexpr char kNoUpdatePipeline[] =
    "update pipeline ([{$set: ...}], $replaceWith, $setField): rockdoc's updates take update "
    "operator documents or replacements only";

constexpr SkipEntry kSkips[] = {
    {"aggregate.json", "aggregate with multiple batches works", kNoAggregate},
    {"aggregate.json", "Aggregate with multiple stages", kNoAggregate},
    {"db-aggregate.json", "Aggregate with $listLocalSessions",
     "database aggregate over $listLocalSessions: server sessions and aggregation, neither "
     "exists in rockdoc"},
    {"bulkWrite-updateMany-dots_and_dollars.json",
     "Updating document to set top-level dollar-prefixed key on 5.0+ server", kNoUpdatePipeline},
    {"bulkWrite-updateMany-dots_and_dollars.json",
     "Updating document to set top-level dotted key on 5.0+ server", kNoUpdatePipeline},
    {"bulkWrite-updateMany-dots_and_dollars.json",
     "Updating document to set dollar-prefixed key in embedded doc on 5.0+ server",
     kNoUpdatePipeline},
    {"bulkWrite-updateMany-dots_and_dollars.json",
     "Updating document to set dotted key in embedded doc on 5.0+ server", kNoUpdatePipeline},
    {"bulkWrite-updateMany-pipeline.json", "UpdateMany in bulk write using pipelines",
     kNoUpdatePipeline},
    {"bulkWrite-updateOne-dots_and_dollars.json",
     "Updating document to set top-level dollar-prefixed key on 5.0+ server", kNoUpdatePipeline},
    {"bulkWrite-updateOne-dots_and_dollars.json",
     "Updating document to set top-level dotted key on 5.0+ server", kNoUpdatePipeline},
    {"bulkWrite-updateOne-dots_and_dollars.json",
     "Updating document to set dollar-prefixed key in embedded doc on 5.0+ server",
     kNoUpdatePipeline},
    {"bulkWrite-updateOne-dots_and_dollars.json",
     "Updating document to set dotted key in embedded doc on 5.0+ server", kNoUpdatePipeline},
    {"bulkWrite-updateOne-pipeline.json", "UpdateOne in bulk write using pipelines",
     kNoUpdatePipeline},
    {"bulkWrite-updateOne-sort.json", "BulkWrite updateOne with sort option", kNoUpdatePipeline},
    {"findOneAndUpdate-dots_and_dollars.json",
     "Updating document to set top-level dollar-prefixed key on 5.0+ server", kNoUpdatePipeline},
    {"findOneAndUpdate-dots_and_dollars.json",
     "Updating document to set top-level dotted key on 5.0+ server", kNoUpdatePipeline},
    {"findOneAndUpdate-dots_and_dollars.json",
     "Updating document to set dollar-prefixed key in embedded doc on 5.0+ server",
     kNoUpdatePipeline},
    {"findOneAndUpdate-dots_and_dollars.json",
     "Updating document to set dotted key in embedded doc on 5.0+ server", kNoUpdatePipeline},
    {"findOneAndUpdate-pipeline.json", "FindOneAndUpdate using pipelines", kNoUpdatePipeline},
    {"updateMany-dots_and_dollars.json",
     "Updating document to set top-level dollar-prefixed key on 5.0+ server", kNoUpdatePipeline},
    {"updateMany-dots_and_dollars.json",
     "Updating document to set top-level dotted key on 5.0+ server", kNoUpdatePipeline},
    {"updateMany-dots_and_dollars.json",
     "Updating document to set dollar-prefixed key in embedded doc on 5.0+ server",
     kNoUpdatePipeline},
    {"updateMany-dots_and_dollars.json",
     "Updating document to set dotted key in embedded doc on 5.0+ server", kNoUpdatePipeline},
    {"updateMany-pipeline.json", "UpdateMany using pipelines", kNoUpdatePipeline},
    {"updateOne-dots_and_dollars.json",
     "Updating document to set top-level dollar-prefixed key on 5.0+ server", kNoUpdatePipeline},
    {"updateOne-dots_and_dollars.json",
     "Updating document to set top-level dotted key on 5.0+ server", kNoUpdatePipeline},
    {"updateOne-dots_and_dollars.json",
     "Updating document to set dollar-prefixed key in embedded doc on 5.0+ server",
     kNoUpdatePipeline},
    {"updateOne-dots_and_dollars.json",
     "Updating document to set dotted key in embedded doc on 5.0+ server", kNoUpdatePipeline},
    {"updateOne-pipeline.json", "UpdateOne using pipelines", kNoUpdatePipeline},
};

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

Value ArrayOfValues(const std::vector<Value>& values) {
  BsonBuilder b;
  b.OpenArray("v");
  for (const Value& v : values) b.AppendElementAs("", v.element());
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
  int64_t Int(std::string_view key, int64_t fallback) {
    Element e = Get(key);
    if (!e.ok()) return fallback;
    int64_t n = 0;
    if (!e.ExactInt64(&n))
      Problem(std::string(key) + " must be an integer, got " + DescribeValue(e));
    return n;
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
  std::vector<Document> DocArray(std::string_view key) {
    std::vector<Document> out;
    Element e = Get(key);
    if (!e.ok()) return out;
    if (e.type() != BsonType::kArray) {
      Problem(std::string(key) + " must be an array, got " + DescribeValue(e));
      return out;
    }
    for (Element d : e.Array()) {
      if (d.type() != BsonType::kDocument) {
        Problem(std::string(key) + " must hold documents, got " + DescribeValue(d));
        continue;
      }
      out.push_back(CopyDocument(d.Document()));
    }
    return out;
  }
  // The hint argument: a key pattern or an index name.
  void Hint(Document* pattern, std::string* name) {
    Element e = Get("hint");
    if (!e.ok()) return;
    if (e.type() == BsonType::kString) {
      *name = std::string(e.String());
    } else if (e.type() == BsonType::kDocument) {
      *pattern = CopyDocument(e.Document());
    } else {
      Problem("hint must be a string or a document, got " + DescribeValue(e));
    }
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
  // Arguments that change nothing for an embedded engine.
  void Ignore(std::string_view key) { used_.insert(std::string(key)); }
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
// Writes, shared by the single-write operations and bulkWrite.

enum class WriteKind { kInsertOne, kUpdateOne, kUpdateMany, kReplaceOne, kDeleteOne, kDeleteMany };

struct WriteModel {
  WriteKind kind = WriteKind::kInsertOne;
  Document document;  // insertOne
  Document filter;
  Document update;  // the update, or the replacement
  Document sort;    // updateOne / replaceOne
  bool upsert = false;
  std::vector<Document> array_filters;
  Document hint;
  std::string hint_name;
};

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

// Reads the update argument `key`: a document, or a pipeline (unsupported).
void ReadUpdate(Args& args, std::string_view key, Document* out) {
  Element e = args.Get(key);
  if (e.type() == BsonType::kArray) {
    args.Problem(std::string(key) + " is an update pipeline: rockdoc has no update pipelines");
    return;
  }
  if (e.type() != BsonType::kDocument) {
    args.Problem(std::string(key) + " must be a document, got " + DescribeValue(e));
    return;
  }
  *out = CopyDocument(e.Document());
}

// Parses one write's arguments. Returns a runner error ("" when fine) and,
// through *client_error, the driver-side validation failure if any.
std::string ParseWriteModel(WriteKind kind, Args& args, WriteModel* m, std::string* client_error) {
  m->kind = kind;
  args.Ignore("comment");
  args.Unsupported("collation", "rockdoc has no collations");
  args.Unsupported("let", "let variables are not supported by rockdoc's API");
  args.Unsupported("bypassDocumentValidation", "rockdoc has no document validation");
  switch (kind) {
    case WriteKind::kInsertOne:
      m->document = args.Doc("document");
      if (!args.Get("document").ok()) args.Problem("document is required");
      break;
    case WriteKind::kUpdateOne:
    case WriteKind::kUpdateMany:
      m->filter = args.Doc("filter");
      ReadUpdate(args, "update", &m->update);
      m->upsert = args.Bool("upsert", false);
      m->array_filters = args.DocArray("arrayFilters");
      args.Hint(&m->hint, &m->hint_name);
      if (kind == WriteKind::kUpdateOne) m->sort = args.Doc("sort");
      if (args.Get("update").type() == BsonType::kDocument) {
        *client_error = CheckUpdateDocument(m->update);
      }
      break;
    case WriteKind::kReplaceOne:
      m->filter = args.Doc("filter");
      m->update = args.Doc("replacement");
      if (!args.Get("replacement").ok()) args.Problem("replacement is required");
      m->upsert = args.Bool("upsert", false);
      m->sort = args.Doc("sort");
      args.Unsupported("hint", "rockdoc's ReplaceOne takes no hint");
      *client_error = CheckReplacementDocument(m->update);
      break;
    case WriteKind::kDeleteOne:
    case WriteKind::kDeleteMany:
      m->filter = args.Doc("filter");
      args.Unsupported("hint", "rockdoc's DeleteOne/DeleteMany take no hint");
      break;
  }
  return args.Problems();
}

// What one write did.
struct WriteOutcome {
  Status status;
  int64_t inserted = 0;
  int64_t matched = 0;
  int64_t modified = 0;
  int64_t deleted = 0;
  std::optional<Value> inserted_id;
  std::optional<Value> upserted_id;
};

// rockdoc's UpdateOne and ReplaceOne take no sort (MongoDB 8.0 added one).
// The runner picks the first match in `sort` order with FindOne and narrows
// the filter to that document's _id; with no match the filter is kept (an
// upsert then seeds from it).
StatusOr<Document> NarrowBySort(const Collection& coll, const Document& filter,
                                const Document& sort) {
  FindOptions fo;
  fo.sort = sort;
  fo.projection = Json(R"({"_id": 1})");
  ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> first, coll.FindOne(filter, fo));
  if (!first) return filter;
  Element id = first->Get("_id");
  if (!id.ok()) return InternalError("FindOne with projection {_id: 1} returned no _id");
  BsonBuilder b;
  b.OpenArray("$and");
  b.AppendDocument("", filter);
  b.OpenDocument("");
  b.AppendElementAs("_id", id);
  b.Close();
  b.Close();
  return std::move(b).Build();
}

WriteOutcome ApplyWrite(const Collection& coll, const WriteModel& m) {
  WriteOutcome out;
  auto take_update = [&out](const StatusOr<UpdateResult>& r) {
    if (!r.ok()) {
      out.status = r.status();
      return;
    }
    out.matched = r->matched_count;
    out.modified = r->modified_count;
    if (r->upserted_id) out.upserted_id = *r->upserted_id;
  };
  switch (m.kind) {
    case WriteKind::kInsertOne: {
      auto r = coll.InsertOne(m.document);
      if (!r.ok()) {
        out.status = r.status();
      } else {
        out.inserted = 1;
        out.inserted_id = r->inserted_id;
      }
      break;
    }
    case WriteKind::kUpdateOne:
    case WriteKind::kUpdateMany: {
      UpdateOptions uo;
      uo.upsert = m.upsert;
      uo.array_filters = m.array_filters;
      uo.hint = m.hint;
      uo.hint_name = m.hint_name;
      if (m.kind == WriteKind::kUpdateMany) {
        take_update(coll.UpdateMany(m.filter, m.update, uo));
        break;
      }
      Document filter = m.filter;
      if (!m.sort.empty()) {
        auto narrowed = NarrowBySort(coll, m.filter, m.sort);
        if (!narrowed.ok()) {
          out.status = narrowed.status();
          break;
        }
        filter = std::move(narrowed).value();
      }
      take_update(coll.UpdateOne(filter, m.update, uo));
      break;
    }
    case WriteKind::kReplaceOne: {
      Document filter = m.filter;
      if (!m.sort.empty()) {
        auto narrowed = NarrowBySort(coll, m.filter, m.sort);
        if (!narrowed.ok()) {
          out.status = narrowed.status();
          break;
        }
        filter = std::move(narrowed).value();
      }
      take_update(coll.ReplaceOne(filter, m.update, m.upsert));
      break;
    }
    case WriteKind::kDeleteOne:
    case WriteKind::kDeleteMany: {
      auto r =
          m.kind == WriteKind::kDeleteOne ? coll.DeleteOne(m.filter) : coll.DeleteMany(m.filter);
      if (!r.ok()) {
        out.status = r.status();
      } else {
        out.deleted = r->deleted_count;
      }
      break;
    }
  }
  return out;
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

Value UpdateResultValue(const WriteOutcome& w) {
  BsonBuilder b;
  b.OpenDocument("v");
  b.AppendInt64("matchedCount", w.matched);
  b.AppendInt64("modifiedCount", w.modified);
  b.AppendInt64("upsertedCount", w.upserted_id ? 1 : 0);
  if (w.upserted_id) b.AppendElementAs("upsertedId", w.upserted_id->element());
  b.Close();
  Document holder = std::move(b).Build();
  return Value::FromElement(holder.Get("v"));
}

// ---------------------------------------------------------------------------
// The runner of one test.

struct Entity {
  enum class Kind { kClient, kDatabase, kCollection } kind = Entity::Kind::kClient;
  std::optional<Database> database;
  std::optional<Collection> collection;
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

  OpResult Execute(const std::string& name, const std::string& object, Args& args);
  OpResult CollectionOp(const std::string& name, const Collection& coll, Args& args);
  OpResult DatabaseOp(const std::string& name, const Database& db, Args& args);
  OpResult Find(const Collection& coll, Args& args, bool one);
  OpResult InsertMany(const Collection& coll, Args& args);
  OpResult SingleWrite(WriteKind kind, const Collection& coll, Args& args);
  OpResult FindOneAndModify(const std::string& name, const Collection& coll, Args& args);
  OpResult BulkWrite(const Collection& coll, Args& args);

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
  auto client = Client::Open(dir_.path());
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
      e.database = client_->GetDatabase(name.String());
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
      e.collection = entities_[std::string(db.String())].database->GetCollection(name.String());
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
    if (coll_name.type() != BsonType::kString || db_name.type() != BsonType::kString ||
        docs.type() != BsonType::kArray || data->Get("createOptions").ok()) {
      ADD_FAILURE() << "initialData: unsupported entry " << item;
      return false;
    }
    Database db = client_->GetDatabase(db_name.String());
    Status dropped = db.DropCollection(coll_name.String());
    if (!dropped.ok()) {
      ADD_FAILURE() << "initialData: DropCollection: " << dropped;
      return false;
    }
    std::vector<Document> documents;
    for (Element d : docs.Array()) {
      if (d.type() != BsonType::kDocument) {
        ADD_FAILURE() << "initialData: not a document: " << DescribeValue(d);
        return false;
      }
      documents.push_back(CopyDocument(d.Document()));
    }
    if (documents.empty()) {
      Status created = db.CreateCollection(coll_name.String());
      if (!created.ok()) {
        ADD_FAILURE() << "initialData: CreateCollection: " << created;
        return false;
      }
      continue;
    }
    auto inserted = db.GetCollection(coll_name.String()).InsertMany(documents);
    if (!inserted.ok() || !inserted->ok()) {
      ADD_FAILURE() << "initialData: InsertMany failed: "
                    << (inserted.ok() ? inserted->write_errors.front().status : inserted.status());
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
    Collection coll = client_->GetDatabase(db_name.String()).GetCollection(coll_name.String());
    // Everything, in _id order: sorted here rather than by rockdoc's sort,
    // so the outcome does not depend on the planner under test.
    auto cursor = coll.Find(Document());
    ASSERT_TRUE(cursor.ok()) << "Find({}) on " << ns << ": " << cursor.status();
    auto actual = cursor->ToVector();
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
  args.Unsupported("session", "rockdoc has no sessions");
  switch (e.kind) {
    case Entity::Kind::kCollection:
      return CollectionOp(name, *e.collection, args);
    case Entity::Kind::kDatabase:
      return DatabaseOp(name, *e.database, args);
    case Entity::Kind::kClient:
      return RunnerError("client operation " + name +
                         " is not supported (clientBulkWrite, "
                         "listDatabases, watch concern a server)");
  }
  return RunnerError("unreachable");
}

OpResult UnifiedTestRunner::DatabaseOp(const std::string& name, const Database& db, Args& args) {
  if (name == "dropCollection") {
    std::string coll = args.String("collection");
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    Status s = db.DropCollection(coll);
    return s.ok() ? Success(Value(), RootMode::kNone) : EngineError(s);
  }
  if (name == "createCollection") {
    std::string coll = args.String("collection");
    Document options = args.Rest();  // decoded, and refused, by the library
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    Status s = db.CreateCollection(coll, options);
    return s.ok() ? Success(Value(), RootMode::kNone) : EngineError(s);
  }
  return RunnerError("database operation " + name + " is not supported by rockdoc's API");
}

OpResult UnifiedTestRunner::CollectionOp(const std::string& name, const Collection& coll,
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
  if (name == "countDocuments" || name == "count") {
    Document filter = args.Doc("filter");
    CountOptions co;
    co.skip = args.Int("skip", 0);
    co.limit = args.Int("limit", 0);
    args.Hint(&co.hint, &co.hint_name);
    args.Ignore("comment");
    args.Unsupported("collation", "rockdoc has no collations");
    co.max_time_ms = args.Int("maxTimeMS", 0);
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    auto n = coll.CountDocuments(filter, co);
    return n.ok() ? Success(Int64Value(*n), RootMode::kNone) : EngineError(n.status());
  }
  if (name == "estimatedDocumentCount") {
    args.Ignore("comment");
    args.Unsupported("maxTimeMS", "rockdoc's EstimatedDocumentCount takes no options");
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    auto n = coll.EstimatedDocumentCount();
    return n.ok() ? Success(Int64Value(*n), RootMode::kNone) : EngineError(n.status());
  }
  if (name == "distinct") {
    std::string field = args.String("fieldName");
    if (!args.Get("fieldName").ok()) args.Problem("fieldName is required");
    Document filter = args.Doc("filter");
    args.Ignore("comment");
    args.Unsupported("collation", "rockdoc has no collations");
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    auto values = coll.Distinct(field, filter);
    return values.ok() ? Success(ArrayOfValues(*values), RootMode::kNone)
                       : EngineError(values.status());
  }
  if (name == "createIndex") {
    Document keys = args.Doc("keys");
    Document options = args.Rest();  // decoded, and refused, by the library
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    auto created = coll.CreateIndexes({IndexModel{std::move(keys), std::move(options)}});
    return created.ok() ? Success(StringValue(created->front()), RootMode::kNone)
                        : EngineError(created.status());
  }
  if (name == "dropIndex") {
    std::string index = args.String("name");
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    Status s = coll.DropIndex(index);
    return s.ok() ? Success(Value(), RootMode::kNone) : EngineError(s);
  }
  if (name == "drop") {
    if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
    Status s = coll.Drop();
    return s.ok() ? Success(Value(), RootMode::kNone) : EngineError(s);
  }
  if (name == "aggregate") return RunnerError("aggregate: rockdoc's API has no aggregation");
  return RunnerError("collection operation " + name + " is not supported");
}

OpResult UnifiedTestRunner::Find(const Collection& coll, Args& args, bool one) {
  Document filter = args.Doc("filter");
  FindOptions fo;
  fo.sort = args.Doc("sort");
  fo.projection = args.Doc("projection");
  fo.skip = args.Int("skip", 0);
  fo.limit = args.Int("limit", 0);
  args.Hint(&fo.hint, &fo.hint_name);
  args.Ignore("batchSize");
  args.Ignore("comment");
  // false is what rockdoc does; true would let a blocking sort spill to
  // disk, which rockdoc cannot (it fails past 100 MB): not dropped.
  if (args.Bool("allowDiskUse", false)) {
    args.Problem("argument allowDiskUse: true: rockdoc's blocking sort cannot spill to disk");
  }
  args.Unsupported("collation", "rockdoc has no collations");
  args.Unsupported("let", "let variables are not supported by rockdoc's API");
  fo.max_time_ms = args.Int("maxTimeMS", 0);
  if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
  if (one) {
    auto doc = coll.FindOne(filter, fo);
    if (!doc.ok()) return EngineError(doc.status());
    return Success(*doc ? DocumentValue(**doc) : NullValue(), RootMode::kDocument);
  }
  auto cursor = coll.Find(filter, fo);
  if (!cursor.ok()) return EngineError(cursor.status());
  auto docs = cursor->ToVector();
  if (!docs.ok()) return EngineError(docs.status());
  return Success(ArrayOfDocuments(*docs), RootMode::kEachDocument);
}

OpResult UnifiedTestRunner::InsertMany(const Collection& coll, Args& args) {
  std::vector<Document> docs = args.DocArray("documents");
  if (!args.Get("documents").ok()) args.Problem("documents is required");
  InsertManyOptions io;
  io.ordered = args.Bool("ordered", true);
  args.Ignore("comment");
  args.Unsupported("bypassDocumentValidation", "rockdoc has no document validation");
  if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
  auto r = coll.InsertMany(docs, io);
  if (!r.ok()) return EngineError(r.status());
  // rockdoc reports the ids of the documents inserted, in input order, and
  // the failures by input position: give each id back its position.
  std::set<size_t> failed;
  for (const WriteError& we : r->write_errors) failed.insert(we.index);
  size_t stop = docs.size();
  if (io.ordered && !r->write_errors.empty()) stop = r->write_errors.front().index;
  BulkResult bulk;
  size_t next = 0;
  for (size_t i = 0; i < stop && next < r->inserted_ids.size(); ++i) {
    if (failed.count(i) != 0) continue;
    bulk.inserted_ids.emplace_back(i, r->inserted_ids[next++]);
  }
  bulk.inserted = static_cast<int64_t>(r->inserted_ids.size());
  if (next != r->inserted_ids.size() ||
      (r->write_errors.empty() && r->inserted_ids.size() != docs.size())) {
    return EngineError(InternalError(
        "InsertMany's result is inconsistent: " + std::to_string(r->inserted_ids.size()) +
        " ids, " + std::to_string(r->write_errors.size()) + " write errors, " +
        std::to_string(docs.size()) + " documents"));
  }
  if (!r->write_errors.empty()) {
    std::vector<std::pair<size_t, Status>> errors;
    for (const WriteError& we : r->write_errors) errors.emplace_back(we.index, we.status);
    return BulkWriteError(errors, bulk);
  }
  BsonBuilder b;
  b.OpenDocument("v");
  b.OpenDocument("insertedIds");
  for (const auto& [i, id] : bulk.inserted_ids) b.AppendElementAs(std::to_string(i), id.element());
  b.Close();
  b.Close();
  Document holder = std::move(b).Build();
  return Success(Value::FromElement(holder.Get("v")), RootMode::kDocument);
}

OpResult UnifiedTestRunner::SingleWrite(WriteKind kind, const Collection& coll, Args& args) {
  WriteModel m;
  std::string client_error;
  if (std::string p = ParseWriteModel(kind, args, &m, &client_error); !p.empty()) {
    return RunnerError(p);
  }
  if (!client_error.empty()) return ClientError(client_error);
  WriteOutcome w = ApplyWrite(coll, m);
  if (!w.status.ok()) return EngineError(w.status);
  BsonBuilder b;
  switch (kind) {
    case WriteKind::kInsertOne:
      b.OpenDocument("v").AppendElementAs("insertedId", w.inserted_id->element()).Close();
      break;
    case WriteKind::kDeleteOne:
    case WriteKind::kDeleteMany:
      b.OpenDocument("v").AppendInt64("deletedCount", w.deleted).Close();
      break;
    default:
      return Success(UpdateResultValue(w), RootMode::kDocument);
  }
  Document holder = std::move(b).Build();
  return Success(Value::FromElement(holder.Get("v")), RootMode::kDocument);
}

OpResult UnifiedTestRunner::FindOneAndModify(const std::string& name, const Collection& coll,
                                             Args& args) {
  Document filter = args.Doc("filter");
  FindOneAndModifyOptions fo;
  fo.sort = args.Doc("sort");
  fo.projection = args.Doc("projection");
  args.Ignore("comment");
  args.Unsupported("collation", "rockdoc has no collations");
  args.Unsupported("let", "let variables are not supported by rockdoc's API");
  args.Unsupported("hint", "rockdoc's FindOneAnd* take no hint");
  fo.max_time_ms = args.Int("maxTimeMS", 0);
  args.Unsupported("bypassDocumentValidation", "rockdoc has no document validation");
  Document update;
  std::string client_error;
  if (name != "findOneAndDelete") {
    fo.upsert = args.Bool("upsert", false);
    std::string rd = args.String("returnDocument");
    if (rd == "After") {
      fo.return_document = ReturnDocument::kAfter;
    } else if (rd.empty() || rd == "Before") {
      fo.return_document = ReturnDocument::kBefore;
    } else {
      args.Problem("returnDocument must be Before or After, got " + rd);
    }
    if (name == "findOneAndUpdate") {
      ReadUpdate(args, "update", &update);
      fo.array_filters = args.DocArray("arrayFilters");
      if (args.Get("update").type() == BsonType::kDocument)
        client_error = CheckUpdateDocument(update);
    } else {
      update = args.Doc("replacement");
      if (!args.Get("replacement").ok()) args.Problem("replacement is required");
      client_error = CheckReplacementDocument(update);
    }
  }
  if (std::string p = args.Problems(); !p.empty()) return RunnerError(p);
  if (!client_error.empty()) return ClientError(client_error);
  StatusOr<std::optional<Document>> r =
      name == "findOneAndDelete"   ? coll.FindOneAndDelete(filter, fo)
      : name == "findOneAndUpdate" ? coll.FindOneAndUpdate(filter, update, fo)
                                   : coll.FindOneAndReplace(filter, update, fo);
  if (!r.ok()) return EngineError(r.status());
  return Success(*r ? DocumentValue(**r) : NullValue(), RootMode::kDocument);
}

OpResult UnifiedTestRunner::BulkWrite(const Collection& coll, Args& args) {
  Element requests = args.Get("requests");
  bool ordered = args.Bool("ordered", true);
  args.Ignore("comment");
  args.Unsupported("let", "let variables are not supported by rockdoc's API");
  args.Unsupported("bypassDocumentValidation", "rockdoc has no document validation");
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
    if (std::string p = ParseWriteModel(kind->second, model_args, &m, &client_error); !p.empty()) {
      return RunnerError(std::string(op.key()) + ": " + p);
    }
    if (!client_error.empty()) return ClientError(client_error);
    models.push_back(std::move(m));
  }
  if (models.empty()) return ClientError("bulkWrite needs at least one request");
  BulkResult bulk;
  std::vector<std::pair<size_t, Status>> errors;
  for (size_t i = 0; i < models.size(); ++i) {
    WriteOutcome w = ApplyWrite(coll, models[i]);
    if (!w.status.ok()) {
      errors.emplace_back(i, w.status);
      if (ordered) break;
      continue;
    }
    bulk.inserted += w.inserted;
    bulk.matched += w.matched;
    bulk.modified += w.modified;
    bulk.deleted += w.deleted;
    if (w.inserted_id) bulk.inserted_ids.emplace_back(i, *w.inserted_id);
    if (w.upserted_id) bulk.upserted_ids.emplace_back(i, *w.upserted_id);
  }
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
  if (p.cls == "not-applicable") {
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

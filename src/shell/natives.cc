// The `__native` functions: the only place where the shell's JavaScript
// reaches the engine. Every database operation is a command
// (Client::RunCommand, command/): shell_api.js builds the command documents
// as a driver does and shapes the replies as mongosh shows them, so the
// options of every method are decoded once, by the command layer. What is
// left here is the shell's own: output, files, time, BSON helpers, and the
// client-side options of sessions and transactions (which a driver decodes
// itself, and no command carries).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>

#include "command/command.h"
#include "common/option_table.h"
#include "rockdoc/advisor.h"
#include "rockdoc/json.h"
#include "shell/shell_internal.h"

namespace rockdoc::shell {
namespace {

using internal::OptionField;
using internal::WrongType;

bool ArgString(JSContext* cx, const JS::CallArgs& args, unsigned i, std::string* out) {
  if (i >= args.length() || !args[i].isString()) {
    return ThrowTypeError(cx, "internal: argument " + std::to_string(i) + " must be a string");
  }
  return JsStringToUtf8(cx, args[i].toString(), out);
}

// A document argument; undefined and null mean {} (an omitted filter).
bool ArgDoc(JSContext* cx, const JS::CallArgs& args, unsigned i, const char* what, Document* out) {
  if (i >= args.length() || args[i].isNullOrUndefined()) {
    *out = Document();
    return true;
  }
  return GetState(cx)->converter.ToDocument(cx, args[i], what, out);
}

// ---- session and transaction options (the driver's, client side) ----

// A boolean option: true/false or a number (non-zero is true); null unset.
Status BoolValue(const Element& e, std::optional<bool>* out) {
  if (e.IsNull()) return Status::OK();
  if (e.IsBool()) {
    *out = e.Bool();
  } else if (e.IsNumber()) {
    *out = e.NumberAsDouble() != 0;
  } else {
    return WrongType(e, "type 'bool'");
  }
  return Status::OK();
}

// Concerns are checked as the command layer checks them (command/fields.cc);
// null is unset.
template <typename O>
Status ReadConcernOption(const Element& e, O*) {
  return e.IsNull() ? Status::OK() : internal::CheckReadConcern(e);
}
template <typename O>
Status WriteConcernOption(const Element& e, O*) {
  return e.IsNull() ? Status::OK() : internal::CheckWriteConcern(e);
}
// Rows whose option has no observable effect here; each use says why.
template <typename O>
Status AcceptMeaningless(const Element&, O*) {
  return Status::OK();
}

// A transaction's readConcern: the levels MongoDB allows in a transaction
// (all read the transaction's snapshot here); the others refused as MongoDB
// refuses them, when the transaction starts rather than at its first
// command.
Status TxnReadConcernOption(const Element& e, TransactionOptions* o) {
  if (e.IsDocument()) {
    std::string_view level = e.Document().Get("level").String();
    if (!level.empty() && level != "snapshot" && level != "majority" && level != "local") {
      return Status(ErrorCode::kInvalidOptions,
                    "The readConcern level must be either 'local' (default), 'majority' or "
                    "'snapshot' in a transaction, not '" +
                        std::string(level) + "'");
    }
  }
  return ReadConcernOption(e, o);
}

// A transaction's writeConcern: w: 1 and 'majority' (one node acknowledges
// both at commit); an unacknowledged commit is refused, as by MongoDB.
Status TxnWriteConcernOption(const Element& e, TransactionOptions* o) {
  if (e.IsDocument()) {
    for (Element f : e.Document()) {
      int64_t n = -1;
      if (f.key() == "w" && f.IsNumber() && f.ExactInt64(&n) && n == 0) {
        return Status(ErrorCode::kInvalidOptions,
                      "transactions do not support unacknowledged write concern");
      }
    }
  }
  return WriteConcernOption(e, o);
}

// A transaction reads from the primary: here the one node.
Status TxnReadPreferenceOption(const Element& e, TransactionOptions*) {
  if (e.IsNull()) return Status::OK();
  std::optional<std::string_view> mode = e.AsString();
  if (!mode && e.IsDocument()) mode = e.Document().Get("mode").AsString();
  if (!mode) return WrongType(e, "types '[string, object]'");
  if (*mode != "primary") {
    return Status(
        ErrorCode::kInvalidOptions,
        "read preference in a transaction must be primary, not '" + std::string(*mode) + "'");
  }
  return Status::OK();
}

// session.startTransaction(options) and defaultTransactionOptions.
constexpr OptionField<TransactionOptions> kTransactionOptions[] = {
    {"readConcern", &TxnReadConcernOption},
    {"writeConcern", &TxnWriteConcernOption},
    {"readPreference", &TxnReadPreferenceOption},
    {"maxCommitTimeMS", nullptr},
};

// db.getMongo().startSession(options).
struct ShellSessionOptions {
  bool snapshot = false;
};
Status SnapshotOption(const Element& e, ShellSessionOptions* o) {
  std::optional<bool> b;
  ROCKDOC_RETURN_IF_ERROR(BoolValue(e, &b));
  if (b) o->snapshot = *b;
  return Status::OK();
}
// One node is causally consistent whatever is asked; the value is checked.
Status CausalConsistencyOption(const Element& e, ShellSessionOptions*) {
  std::optional<bool> b;
  return BoolValue(e, &b);
}
Status DecodeClientOptions(const Document& doc, std::string_view what,
                           const auto& table, auto* out);
Status DefaultTransactionOptionsOption(const Element& e, ShellSessionOptions*) {
  if (e.IsNull()) return Status::OK();
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  TransactionOptions checked;
  return DecodeClientOptions(Document::AdoptValidated(std::string(e.Document().bytes())),
                             "defaultTransactionOptions", kTransactionOptions, &checked);
}
// A session's own writeConcern (startSession({writeConcern})): w: 1 and
// 'majority' are what every write gets; j: true would need each operation
// of the session to carry it, which the shell does not do, so it is refused
// rather than ignored (an operation's writeConcern, and a transaction's at
// its commit, honour it).
Status SessionWriteConcernOption(const Element& e, ShellSessionOptions* o) {
  ROCKDOC_RETURN_IF_ERROR(WriteConcernOption(e, o));
  if (internal::JournalRequested(e)) {
    return Status(ErrorCode::kNotImplemented,
                  "a session's writeConcern j: true is not supported by rockdoc's shell: give "
                  "writeConcern to each operation, or to the transaction");
  }
  return Status::OK();
}
constexpr OptionField<ShellSessionOptions> kSessionOptions[] = {
    {"causalConsistency", &CausalConsistencyOption},
    {"snapshot", &SnapshotOption},
    {"defaultTransactionOptions", &DefaultTransactionOptionsOption},
    {"readConcern", &ReadConcernOption<ShellSessionOptions>},
    {"writeConcern", &SessionWriteConcernOption},
    // One node serves every read preference.
    {"readPreference", &AcceptMeaningless<ShellSessionOptions>},
    // Retryable writes are about failovers; one embedded node has none.
    {"retryWrites", &AcceptMeaningless<ShellSessionOptions>},
};

// Decodes client-side options `doc` of `what` (startSession,
// startTransaction, ...) through `table`: an unknown name is MongoDB's
// 40415, a known one rockdoc lacks NotImplemented.
Status DecodeClientOptions(const Document& doc, std::string_view what, const auto& table,
                           auto* out) {
  return internal::DecodeOptions(
      doc, table, out,
      [&](std::string_view name) {
        return Status(ErrorCode::kUnknownBsonField, "BSON field '" + std::string(what) + "." +
                                                        std::string(name) +
                                                        "' is an unknown field.");
      },
      [&](std::string_view name) {
        return Status(ErrorCode::kNotImplemented, std::string(what) + " option '" +
                                                      std::string(name) +
                                                      "' is not supported by rockdoc");
      });
}

// ---- results ----

bool SetProp(JSContext* cx, JS::HandleObject obj, const char* name, JS::HandleValue v) {
  return JS_DefineProperty(cx, obj, name, v, JSPROP_ENUMERATE);
}

bool SetNumber(JSContext* cx, JS::HandleObject obj, const char* name, double d) {
  JS::RootedValue v(cx, JS::NumberValue(d));
  return SetProp(cx, obj, name, v);
}

bool SetString(JSContext* cx, JS::HandleObject obj, const char* name, std::string_view s) {
  JSString* str = NewJsString(cx, s);
  if (!str) return false;
  JS::RootedValue v(cx, JS::StringValue(str));
  return SetProp(cx, obj, name, v);
}

bool ReturnDoc(JSContext* cx, JS::CallArgs& args, const std::optional<Document>& doc) {
  if (!doc) {
    args.rval().setNull();
    return true;
  }
  return GetState(cx)->converter.FromDocument(cx, *doc, args.rval());
}

// ---- the natives ----

#define NATIVE(name) bool name(JSContext* cx, unsigned argc, JS::Value* vp)
#define ARGS JS::CallArgs args = JS::CallArgsFromVp(argc, vp)
#define STATUS_OR_THROW(lhs, expr)                               \
  auto lhs##_or = (expr);                                        \
  if (!lhs##_or.ok()) return ThrowStatus(cx, lhs##_or.status()); \
  auto& lhs = *lhs##_or

NATIVE(Write) {
  ARGS;
  std::string s;
  if (args.length() > 0 && !JsValueToUtf8(cx, args[0], &s)) return false;
  *GetState(cx)->out << s << std::flush;
  args.rval().setUndefined();
  return true;
}

NATIVE(WriteErr) {
  ARGS;
  std::string s;
  if (args.length() > 0 && !JsValueToUtf8(cx, args[0], &s)) return false;
  *GetState(cx)->err << s << std::flush;
  args.rval().setUndefined();
  return true;
}

NATIVE(Config) {
  ARGS;
  ShellState* st = GetState(cx);
  JS::RootedObject obj(cx, JS_NewPlainObject(cx));
  if (!obj) return false;
  JS::RootedValue json(cx, JS::BooleanValue(st->options->json));
  JS::RootedValue quiet(cx, JS::BooleanValue(st->options->quiet));
  if (!SetProp(cx, obj, "json", json) || !SetProp(cx, obj, "quiet", quiet) ||
      !SetNumber(cx, obj, "batchSize", st->options->display_batch_size) ||
      !SetString(cx, obj, "initialDb", st->options->initial_db) ||
      !SetString(cx, obj, "path", st->client->path())) {
    return false;
  }
  args.rval().setObject(*obj);
  return true;
}

// runCommand(db, command) -> the reply: the command layer
// (Client::RunCommand), under every database method of shell_api.js. A
// failed command throws MongoServerError (with its errInfo and
// errorLabels), as mongosh's runCommand does.
NATIVE(RunCommand) {
  ARGS;
  std::string db;
  Document command;
  if (!ArgString(cx, args, 0, &db) || !ArgDoc(cx, args, 1, "command", &command)) return false;
  Document reply = GetState(cx)->client->RunCommand(db, command);
  if (reply.Get("ok").NumberAsDouble() != 1) {
    Status failed(static_cast<ErrorCode>(reply.Get("code").Int32()),
                  std::string(reply.Get("errmsg").String()));
    Element labels = reply.Get("errorLabels");
    if (labels.type() == BsonType::kArray) {
      for (Element label : labels.Array()) failed = failed.WithErrorLabel(std::string(label.String()));
    }
    Element info = reply.Get("errInfo");
    if (info.IsDocument()) failed = failed.WithErrorInfo(std::string(info.Document().bytes()));
    // The reply's other fields (a duplicate key's keyPattern and keyValue)
    // are the error's extra fields, as the driver's error copies them.
    BsonBuilder extra;
    bool any_extra = false;
    for (Element e : reply.view()) {
      const std::string_view k = e.key();
      if (k == "ok" || k == "errmsg" || k == "code" || k == "codeName" || k == "errInfo" ||
          k == "errorLabels") {
        continue;
      }
      extra.AppendElement(e);
      any_extra = true;
    }
    if (any_extra) failed = failed.WithExtraInfo(std::string(std::move(extra).Build().bytes()));
    return ThrowStatus(cx, failed);
  }
  return ReturnDoc(cx, args, reply);
}

// advise(db, options) -> {report, text}: the schema advisor
// (rockdoc/advisor.h) over database `db` (null: every database), with
// options {collection, full, sample, unusedIndexDays}; db.advise() and
// db.c.advise() in shell_api.js.
Status AdviseCollectionOption(const Element& e, advisor::AdviseOptions* o) {
  if (!e.IsString()) return WrongType(e, "type 'string'");
  o->collection = std::string(e.String());
  return Status::OK();
}
Status AdviseFullOption(const Element& e, advisor::AdviseOptions* o) {
  std::optional<bool> b;
  ROCKDOC_RETURN_IF_ERROR(BoolValue(e, &b));
  o->full = b.value_or(false);
  return Status::OK();
}
Status AdviseSampleOption(const Element& e, advisor::AdviseOptions* o) {
  ROCKDOC_ASSIGN_OR_RETURN(o->sample_size, internal::IntegerField(e));
  return Status::OK();
}
Status AdviseUnusedDaysOption(const Element& e, advisor::AdviseOptions* o) {
  ROCKDOC_ASSIGN_OR_RETURN(o->unused_index_days, internal::IntegerField(e));
  if (o->unused_index_days < 0) return Status(ErrorCode::kBadValue, "unusedIndexDays must be 0 or more");
  return Status::OK();
}
constexpr OptionField<advisor::AdviseOptions> kAdviseOptions[] = {
    {"collection", &AdviseCollectionOption},
    {"full", &AdviseFullOption},
    {"sample", &AdviseSampleOption},
    {"unusedIndexDays", &AdviseUnusedDaysOption},
};

NATIVE(Advise) {
  ARGS;
  Document doc;
  if (!ArgDoc(cx, args, 1, "options", &doc)) return false;
  advisor::AdviseOptions options;
  Status status = DecodeClientOptions(doc, "advise", kAdviseOptions, &options);
  if (!status.ok()) return ThrowStatus(cx, status);
  if (!args[0].isNullOrUndefined()) {
    std::string db;
    if (!ArgString(cx, args, 0, &db)) return false;
    options.dbs.push_back(std::move(db));
  }
  STATUS_OR_THROW(report, advisor::Advise(*GetState(cx)->client, options));
  BsonBuilder out;
  out.AppendDocument("report", advisor::ToDocument(report)).AppendString("text", advisor::FormatText(report));
  return ReturnDoc(cx, args, std::move(out).Build());
}

// codeName(code) -> MongoDB's name of an error code ("DuplicateKey").
NATIVE(CodeName) {
  ARGS;
  if (args.length() < 1 || !args[0].isNumber()) return ThrowTypeError(cx, "codeName needs a number");
  JSString* name = NewJsString(
      cx, ErrorCodeName(static_cast<ErrorCode>(static_cast<int32_t>(args[0].toNumber()))));
  if (!name) return false;
  args.rval().setString(name);
  return true;
}

// checkSessionOptions(options) -> {snapshot}: startSession's options,
// decoded (the session itself is shell_api.js's: an lsid its commands
// carry).
NATIVE(CheckSessionOptions) {
  ARGS;
  Document doc;
  if (!ArgDoc(cx, args, 0, "options", &doc)) return false;
  ShellSessionOptions options;
  Status status = DecodeClientOptions(doc, "startSession", kSessionOptions, &options);
  if (!status.ok()) return ThrowStatus(cx, status);
  JS::RootedObject obj(cx, JS_NewPlainObject(cx));
  JS::RootedValue snapshot(cx, JS::BooleanValue(options.snapshot));
  if (!obj || !SetProp(cx, obj, "snapshot", snapshot)) return false;
  args.rval().setObject(*obj);
  return true;
}

// checkTransactionOptions(options): startTransaction's options, decoded;
// throws when one is refused.
NATIVE(CheckTransactionOptions) {
  ARGS;
  Document doc;
  if (!ArgDoc(cx, args, 0, "options", &doc)) return false;
  TransactionOptions options;
  Status status = DecodeClientOptions(doc, "startTransaction", kTransactionOptions, &options);
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setUndefined();
  return true;
}

// bsonsize(doc): the document's BSON size in bytes, the figure the 16 MiB
// limit applies to.
NATIVE(BsonSize) {
  ARGS;
  Document doc;
  if (!GetState(cx)->converter.ToDocument(cx, args.get(0), "document", &doc)) return false;
  args.rval().setNumber(static_cast<double>(doc.size()));
  return true;
}

// toJson(value, format): "relaxed" (default), "canonical" or "shell".
NATIVE(ToJsonNative) {
  ARGS;
  std::string format = "relaxed";
  if (args.length() > 1 && args[1].isString() && !JsStringToUtf8(cx, args[1].toString(), &format)) {
    return false;
  }
  JsonFormat f = format == "canonical" ? JsonFormat::kCanonical
                 : format == "shell"   ? JsonFormat::kShell
                                       : JsonFormat::kRelaxed;
  Document holder;
  if (!GetState(cx)->converter.ToSingleFieldDocument(cx, "v", args.get(0), &holder)) {
    return false;
  }
  JSString* s = NewJsString(cx, ValueToJson(holder.Get("v"), f));
  if (!s) return false;
  args.rval().setString(s);
  return true;
}

// fromJson(text): Extended JSON (canonical, relaxed or legacy) -> document.
NATIVE(FromJsonNative) {
  ARGS;
  std::string text;
  if (!ArgString(cx, args, 0, &text)) return false;
  STATUS_OR_THROW(doc, FromJson(text));
  return GetState(cx)->converter.FromDocument(cx, doc, args.rval());
}

NATIVE(Load) {
  ARGS;
  std::string path;
  if (!ArgString(cx, args, 0, &path)) return false;
  ShellState* st = GetState(cx);
  if (!st->load_file(cx, path)) return false;
  args.rval().setBoolean(true);
  return true;
}

// quit(code): ends the running code without a catchable exception.
NATIVE(Quit) {
  ARGS;
  ShellState* st = GetState(cx);
  double code = 0;
  if (args.length() > 0 && !args[0].isUndefined() && !JS::ToNumber(cx, args[0], &code)) {
    return false;
  }
  // Checked before the cast (a double out of int's range is undefined
  // behaviour); Node's process.exit refuses such codes too.
  if (!(code > -2147483649.0 && code < 2147483648.0)) {
    return ThrowTypeError(cx, "exit code must be an integer");
  }
  st->exit_requested = true;
  st->exit_code = static_cast<int>(code);
  return false;
}

// sleep(ms), interruptible by Ctrl-C.
NATIVE(Sleep) {
  ARGS;
  double ms = 0;
  if (args.length() > 0 && !JS::ToNumber(cx, args[0], &ms)) return false;
  // Clamped before the cast: sleep(1e300) sleeps (interruptibly) for
  // decades rather than casting out of the int64 range.
  constexpr double kMaxSleepMs = 1e12;  // ~31 years
  auto until = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(
                   static_cast<int64_t>(std::isnan(ms) ? 0.0 : std::clamp(ms, 0.0, kMaxSleepMs)));
  while (std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!JS_CheckForInterrupt(cx)) return false;
  }
  args.rval().setUndefined();
  return true;
}

// newObjectId([seconds]) -> 24 hex digits of a fresh ObjectId.
NATIVE(NewObjectId) {
  ARGS;
  ObjectId oid = ObjectId::Generate();
  if (args.length() > 0 && args[0].isNumber()) {
    double seconds = args[0].toNumber();
    if (!(seconds >= 0 && seconds <= 4294967295.0)) {
      return ThrowTypeError(cx, "ObjectId time must be in [0, 2^32) seconds");
    }
    oid = ObjectId::GenerateAt(static_cast<uint32_t>(seconds));
  }
  JSString* s = NewJsString(cx, oid.ToHex());
  if (!s) return false;
  args.rval().setString(s);
  return true;
}

// decimalString(text) -> the canonical text of the decimal128 `text` parses
// to; throws (FailedToParse) when it is not one.
NATIVE(DecimalString) {
  ARGS;
  std::string text;
  if (!ArgString(cx, args, 0, &text)) return false;
  auto dec = Decimal128::FromString(text);
  if (!dec.ok()) return ThrowStatus(cx, dec.status());
  JSString* s = NewJsString(cx, dec->ToString());
  if (!s) return false;
  args.rval().setString(s);
  return true;
}


// ---- live queries (Cursor.observe) ----

// The find options a live query takes; every other one is refused by the
// script before it gets here (shell_api.js's Cursor.observe).
const OptionField<ObserveOptions> kObserveOptions[] = {
    {"sort", [](const Element& e, ObserveOptions* o) {
       if (!e.IsDocument()) return WrongType(e, "type 'object'");
       o->sort = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"projection", [](const Element& e, ObserveOptions* o) {
       if (!e.IsDocument()) return WrongType(e, "type 'object'");
       o->projection = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"skip", [](const Element& e, ObserveOptions* o) {
       std::optional<int64_t> n = e.AsExactInt64();
       if (!n) return WrongType(e, "an integer");
       o->skip = *n;
       return Status::OK();
     }},
    {"limit", [](const Element& e, ObserveOptions* o) {
       std::optional<int64_t> n = e.AsExactInt64();
       if (!n) return WrongType(e, "an integer");
       o->limit = *n;
       return Status::OK();
     }},
};

void AppendId(BsonBuilder* b, std::string_view key, const Value& id) {
  b->AppendElementAs(key, id.element());
}

ObserveCallbacks QueueingCallbacks(ShellLiveQuery* q) {
  ObserveCallbacks cb;
  cb.added = [q](const Value& id, const Document& doc, const std::optional<Value>& before) {
    BsonBuilder b;
    b.AppendString("op", "added");
    AppendId(&b, "id", id);
    b.AppendDocument("doc", doc);
    if (before) AppendId(&b, "before", *before);
    q->changes.push_back(std::move(b).Build());
  };
  cb.changed = [q](const Value& id, const Document& fields,
                   const std::vector<std::string>& removed) {
    BsonBuilder b;
    b.AppendString("op", "changed");
    AppendId(&b, "id", id);
    b.AppendDocument("fields", fields);
    BsonBuilder names;
    for (size_t i = 0; i < removed.size(); ++i) names.AppendString(std::to_string(i), removed[i]);
    b.AppendArray("removed", std::move(names).Build());
    q->changes.push_back(std::move(b).Build());
  };
  cb.moved = [q](const Value& id, const std::optional<Value>& before) {
    BsonBuilder b;
    b.AppendString("op", "moved");
    AppendId(&b, "id", id);
    if (before) AppendId(&b, "before", *before);
    q->changes.push_back(std::move(b).Build());
  };
  cb.removed = [q](const Value& id) {
    BsonBuilder b;
    b.AppendString("op", "removed");
    AppendId(&b, "id", id);
    q->changes.push_back(std::move(b).Build());
  };
  return cb;
}

// Hands the queued changes of `q` to the script: {changes: [...]}.
bool ReturnChanges(JSContext* cx, JS::CallArgs& args, ShellLiveQuery* q) {
  BsonBuilder list;
  for (size_t i = 0; i < q->changes.size(); ++i) {
    list.AppendDocument(std::to_string(i), q->changes[i]);
  }
  q->changes.clear();
  BsonBuilder out;
  out.AppendArray("changes", std::move(list).Build());
  return ReturnDoc(cx, args, std::move(out).Build());
}

ShellLiveQuery* LiveQueryArg(JSContext* cx, const JS::CallArgs& args) {
  double handle = 0;
  if (args.length() < 1 || !args[0].isNumber()) {
    ThrowTypeError(cx, "internal: a live query's handle must be a number");
    return nullptr;
  }
  handle = args[0].toNumber();
  auto& queries = GetState(cx)->live_queries;
  auto it = queries.find(static_cast<int64_t>(handle));
  if (it == queries.end()) {
    ThrowStatus(cx, Status(ErrorCode::kIllegalOperation, "the live query is stopped"));
    return nullptr;
  }
  return it->second.get();
}

// observe(db, collection, filter, options) -> {handle, changes}: a live query
// (Collection::Observe, polled on this thread) and its initial result.
NATIVE(Observe) {
  ARGS;
  std::string db, coll;
  Document filter, options;
  if (!ArgString(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll) ||
      !ArgDoc(cx, args, 2, "filter", &filter) || !ArgDoc(cx, args, 3, "options", &options)) {
    return false;
  }
  ObserveOptions o;
  Status decoded = DecodeClientOptions(options, "observe", kObserveOptions, &o);
  if (!decoded.ok()) return ThrowStatus(cx, decoded);
  o.own_thread = false;
  ShellState* st = GetState(cx);
  auto q = std::make_unique<ShellLiveQuery>();
  auto live =
      st->client->GetDatabase(db).GetCollection(coll).Observe(filter, o, QueueingCallbacks(q.get()));
  if (!live.ok()) return ThrowStatus(cx, live.status());
  q->query.emplace(std::move(*live));
  const int64_t handle = st->next_live_query++;
  ShellLiveQuery* raw = q.get();
  st->live_queries.emplace(handle, std::move(q));
  JS::RootedValue changes(cx);
  if (!ReturnChanges(cx, args, raw)) return false;
  changes = args.rval();
  JS::RootedObject out(cx, JS_NewPlainObject(cx));
  if (!out || !SetNumber(cx, out, "handle", static_cast<double>(handle)) ||
      !SetProp(cx, out, "result", changes)) {
    return false;
  }
  args.rval().setObject(*out);
  return true;
}

// observePoll(handle, waitMs) -> {changes}: what committed since the last
// poll, waiting up to waitMs (interruptibly, by Ctrl-C) for a first change.
NATIVE(ObservePoll) {
  ARGS;
  ShellLiveQuery* q = LiveQueryArg(cx, args);
  if (q == nullptr) return false;
  double ms = 0;
  if (args.length() > 1 && !JS::ToNumber(cx, args[1], &ms)) return false;
  constexpr double kMaxWaitMs = 1e12;
  const auto until =
      std::chrono::steady_clock::now() +
      std::chrono::milliseconds(
          static_cast<int64_t>(std::isnan(ms) ? 0.0 : std::clamp(ms, 0.0, kMaxWaitMs)));
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    Status s = q->query->Poll(std::clamp<int64_t>(left, 0, 50));
    if (!s.ok()) return ThrowStatus(cx, s);
    if (!q->changes.empty() || left <= 0) break;
    if (!JS_CheckForInterrupt(cx)) return false;
  }
  return ReturnChanges(cx, args, q);
}

// observeStop(handle): stops the live query (a stopped one: nothing).
NATIVE(ObserveStop) {
  ARGS;
  if (args.length() > 0 && args[0].isNumber()) {
    GetState(cx)->live_queries.erase(static_cast<int64_t>(args[0].toNumber()));
  }
  args.rval().setUndefined();
  return true;
}

#undef NATIVE
#undef ARGS
#undef STATUS_OR_THROW

const JSFunctionSpec kNatives[] = {
    JS_FN("write", Write, 1, 0),
    JS_FN("writeErr", WriteErr, 1, 0),
    JS_FN("config", Config, 0, 0),
    JS_FN("runCommand", RunCommand, 2, 0),
    JS_FN("codeName", CodeName, 1, 0),
    JS_FN("advise", Advise, 2, 0),
    JS_FN("checkSessionOptions", CheckSessionOptions, 1, 0),
    JS_FN("checkTransactionOptions", CheckTransactionOptions, 1, 0),
    JS_FN("bsonsize", BsonSize, 1, 0),
    JS_FN("toJson", ToJsonNative, 2, 0),
    JS_FN("fromJson", FromJsonNative, 1, 0),
    JS_FN("load", Load, 1, 0),
    JS_FN("quit", Quit, 1, 0),
    JS_FN("sleep", Sleep, 1, 0),
    JS_FN("newObjectId", NewObjectId, 1, 0),
    JS_FN("decimalString", DecimalString, 1, 0),
    JS_FN("observe", Observe, 4, 0),
    JS_FN("observePoll", ObservePoll, 2, 0),
    JS_FN("observeStop", ObserveStop, 1, 0),
    JS_FS_END};

}  // namespace

bool DefineNatives(JSContext* cx, JS::HandleObject global) {
  JS::RootedObject natives(cx, JS_NewPlainObject(cx));
  if (!natives || !JS_DefineFunctions(cx, natives, kNatives)) return false;
  JS::RootedValue v(cx, JS::ObjectValue(*natives));
  // Not enumerable: it is the prelude's, not the user's.
  return JS_DefineProperty(cx, global, "__native", v, JSPROP_READONLY | JSPROP_PERMANENT);
}

bool ThrowStatus(JSContext* cx, const Status& status) {
  JS::RootedObject global(cx, JS::CurrentGlobalOrNull(cx));
  JS::RootedValueArray<4> args(cx);
  args[0].setInt32(status.code_number());
  JSString* name = NewJsString(cx, status.code_name());
  JSString* message = name ? NewJsString(cx, status.message()) : nullptr;
  if (!message) return false;
  args[1].setString(name);
  args[2].setString(message);
  // MongoDB's error labels (TransientTransactionError, ...), as the
  // driver's error carries them.
  JS::RootedObject labels(cx, JS::NewArrayObject(cx, 0));
  if (!labels) return false;
  uint32_t n = 0;
  for (const std::string& label : status.error_labels()) {
    JSString* l = NewJsString(cx, label);
    if (!l) return false;
    JS::RootedValue lv(cx, JS::StringValue(l));
    if (!JS_SetElement(cx, labels, n++, lv)) return false;
  }
  args[3].setObject(*labels);
  JS::RootedValue error(cx);
  if (!JS_CallFunctionName(cx, global, "__makeServerError", args, &error)) return false;
  if (!status.error_info().empty() && error.isObject()) {
    // errInfo (a DocumentValidationFailure's details), as the driver's
    // MongoServerError carries it.
    JS::RootedObject error_object(cx, &error.toObject());
    JS::RootedValue info(cx);
    if (!GetState(cx)->converter.FromDocument(
            cx, Document::AdoptValidated(std::string(status.error_info())).view(), &info) ||
        !JS_SetProperty(cx, error_object, "errInfo", info)) {
      return false;
    }
  }
  if (!status.extra_info().empty() && error.isObject()) {
    // The extra fields (a duplicate key's keyPattern and keyValue), as
    // properties of the error, as the driver's MongoServerError has them.
    JS::RootedObject error_object(cx, &error.toObject());
    for (Element e : DocumentView(reinterpret_cast<const uint8_t*>(status.extra_info().data()))) {
      JS::RootedValue v(cx);
      if (!GetState(cx)->converter.FromElement(cx, e, &v) ||
          !JS_SetProperty(cx, error_object, std::string(e.key()).c_str(), v)) {
        return false;
      }
    }
  }
  JS_SetPendingException(cx, error);
  return false;
}

}  // namespace rockdoc::shell

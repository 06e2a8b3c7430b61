// The `__native` functions: the only place where the shell's JavaScript
// reaches the engine. Each takes plain JS values (database and collection
// names, documents as objects, options as objects), calls the public API and
// returns JS values; an error Status becomes a thrown MongoServerError.
// Result shapes (mongosh's, the legacy shell's) are built in shell_api.js.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include "common/logging.h"
#include "command/command.h"
#include "common/option_table.h"
#include "rockdoc/json.h"
#include "shell/shell_internal.h"

namespace rockdoc::shell {
namespace {

// ---- arguments ----

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

// The filter of a write: required. A missing or null filter is an error, not
// {} (which would update or delete every document); the shell's JavaScript
// reports a missing one first, with mongosh's message.
bool ArgWriteFilter(JSContext* cx, const JS::CallArgs& args, unsigned i, Document* out) {
  return GetState(cx)->converter.ToDocument(cx, args.get(i), "filter", out);
}

bool ArgBool(const JS::CallArgs& args, unsigned i) {
  return i < args.length() && JS::ToBoolean(args[i]);
}

// Options objects: absent fields keep the C++ defaults.
bool OptValue(JSContext* cx, const JS::CallArgs& args, unsigned i, const char* name,
              JS::MutableHandleValue out) {
  out.setUndefined();
  if (i >= args.length() || !args[i].isObject()) return true;
  JS::RootedObject obj(cx, &args[i].toObject());
  return JS_GetProperty(cx, obj, name, out);
}

// An integer option (skip, limit) parsed as MongoDB parses one
// (BSONElement::parseIntegerElementToLong): any number type whose value is
// an exact int64, so NumberLong(1) and 1 are the same and 1e300 or 1.5 are
// FailedToParse rather than a double cast out of range.
Status ExactInt64Option(const Element& e, int64_t* out) {
  if (!e.IsNumber()) {
    return Status(ErrorCode::kTypeMismatch, "BSON field '" + std::string(e.key()) +
                                                "' is the wrong type '" +
                                                std::string(BsonTypeAlias(e.type())) +
                                                "', expected types '[long, int, decimal, double]'");
  }
  if (e.ExactInt64(out)) return Status::OK();
  std::string shown = std::string(e.key()) + ": " + ValueToJson(e, JsonFormat::kShell);
  double d = e.NumberAsDouble();
  if (std::isnan(d)) {
    return Status(ErrorCode::kFailedToParse, "Expected an integer, but found NaN in: " + shown);
  }
  // A fractional double in range is "not an integer"; anything else (out of
  // range, infinite, a fractional decimal) "cannot be represented".
  if (e.type() == BsonType::kDouble && std::abs(d) < 9223372036854775808.0) {
    return Status(ErrorCode::kFailedToParse, "Expected an integer: " + shown);
  }
  return Status(ErrorCode::kFailedToParse, "Cannot represent as a 64-bit integer: " + shown);
}

bool OptDocArray(JSContext* cx, const JS::CallArgs& args, unsigned i, const char* name,
                 std::vector<Document>* out) {
  JS::RootedValue v(cx);
  if (!OptValue(cx, args, i, name, &v)) return false;
  if (v.isNullOrUndefined()) return true;
  bool is_array = false;
  if (!v.isObject() || !JS::IsArrayObject(cx, v, &is_array) || !is_array) {
    if (!JS_IsExceptionPending(cx)) ThrowTypeError(cx, std::string(name) + " must be an array");
    return false;
  }
  JS::RootedObject arr(cx, &v.toObject());
  uint32_t length = 0;
  if (!JS::GetArrayLength(cx, arr, &length)) return false;
  JS::RootedValue element(cx);
  for (uint32_t k = 0; k < length; ++k) {
    if (!JS_GetElement(cx, arr, k, &element)) return false;
    Document doc;
    if (!GetState(cx)->converter.ToDocument(cx, element, name, &doc)) return false;
    out->push_back(std::move(doc));
  }
  return true;
}

// ---- CRUD options: one table per method ----
//
// Every options object a CRUD method takes is decoded through a table of the
// names MongoDB knows for that command (common/option_table.h): a decoder
// into the library's options struct; a null decoder for an option rockdoc
// does not implement (NotImplemented, 238); or AcceptMeaningless, only for an
// option that has no observable effect on a standalone embedded database
// (each such row says why). A name with no row is MongoDB's unknown-field
// error (40415), as the server answers mongosh, which passes options through.
// Nothing is ever accepted and dropped.

using internal::OptionField;

// MongoDB's message; `expected` is "type 'object'" or "types '[...]'".
Status WrongType(const Element& e, std::string_view expected) {
  return Status(ErrorCode::kTypeMismatch,
                "BSON field '" + std::string(e.key()) + "' is the wrong type '" +
                    std::string(BsonTypeAlias(e.type())) + "', expected " + std::string(expected));
}

// A null value (JavaScript undefined or null) leaves the default, as before.
template <typename O, Document O::*kMember>
Status DocOption(const Element& e, O* o) {
  if (e.IsNull()) return Status::OK();
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  ROCKDOC_ASSIGN_OR_RETURN(o->*kMember, Document::FromBytes(e.Document().bytes()));
  return Status::OK();
}

template <typename O, int64_t O::*kMember>
Status Int64Option(const Element& e, O* o) {
  if (e.IsNull()) return Status::OK();
  return ExactInt64Option(e, &(o->*kMember));
}

// A boolean option: true/false or a number (non-zero is true), as MongoDB's
// BSONElement::trueValue for the fields it types as "bool".
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

template <typename O, bool O::*kMember>
Status BoolOption(const Element& e, O* o) {
  std::optional<bool> b;
  ROCKDOC_RETURN_IF_ERROR(BoolValue(e, &b));
  if (b) o->*kMember = *b;
  return Status::OK();
}

// hint: a key pattern document or an index name.
template <typename O>
Status HintOption(const Element& e, O* o) {
  if (e.IsNull()) return Status::OK();
  if (e.IsString()) {
    o->hint_name = std::string(e.String());
    return Status::OK();
  }
  if (!e.IsDocument()) return WrongType(e, "types '[string, object]'");
  return DocOption<O, &O::hint>(e, o);
}

template <typename O>
Status ArrayFiltersOption(const Element& e, O* o) {
  if (e.IsNull()) return Status::OK();
  if (!e.IsArray()) return WrongType(e, "type 'array'");
  for (Element f : e.Array()) {
    if (!f.IsDocument()) return WrongType(f, "type 'object'");
    ROCKDOC_ASSIGN_OR_RETURN(Document d, Document::FromBytes(f.Document().bytes()));
    o->array_filters.push_back(std::move(d));
  }
  return Status::OK();
}

// Rows whose option has no observable effect here; each use says why.
template <typename O>
Status AcceptMeaningless(const Element&, O*) {
  return Status::OK();
}

// batchSize only sizes the shell's round trips to the engine (the shell
// applies it itself); the documents returned are the same. Checked, not used.
template <typename O>
Status BatchSizeOption(const Element& e, O*) {
  int64_t n = 0;
  if (e.IsNull()) return Status::OK();
  ROCKDOC_RETURN_IF_ERROR(ExactInt64Option(e, &n));
  if (n < 0) return Status(ErrorCode::kBadValue, "batchSize must be non-negative");
  return Status::OK();
}

// allowDiskUse: the find command's check (command/fields.cc); null is unset.
template <typename O>
Status AllowDiskUseOption(const Element& e, O*) {
  if (e.IsNull()) return Status::OK();
  return internal::CheckAllowDiskUse(e);
}

// readConcern {level}: one node's committed data is its majority-committed
// data, so "local", "available" and "majority" read the same snapshot;
// "snapshot" (atClusterTime) and "linearizable" promise more: refused.
// readConcern {level}: each level is checked by `check_level`; other fields
// are not supported.
Status CheckReadConcern(const Element& e,
                        const std::function<Status(std::string_view level)>& check_level) {
  if (e.IsNull()) return Status::OK();
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  for (Element f : e.Document()) {
    if (f.key() != "level") {
      return Status(ErrorCode::kNotImplemented, "readConcern option '" + std::string(f.key()) +
                                                    "' is not supported by rockdoc");
    }
    std::optional<std::string_view> level = f.AsString();
    if (!level) return WrongType(f, "type 'string'");
    ROCKDOC_RETURN_IF_ERROR(check_level(*level));
  }
  return Status::OK();
}

template <typename O>
Status ReadConcernOption(const Element& e, O*) {
  return CheckReadConcern(e, [](std::string_view level) {
    if (level != "local" && level != "available" && level != "majority") {
      return Status(ErrorCode::kNotImplemented,
                    "readConcern level '" + std::string(level) + "' is not supported by rockdoc");
    }
    return Status::OK();
  });
}

// writeConcern: the command layer's check (command/fields.cc: w: 1 and
// "majority" are met by the one node; w: 0, w > 1, tags and j: true are
// NotImplemented); null is unset.
template <typename O>
Status WriteConcernOption(const Element& e, O*) {
  if (e.IsNull()) return Status::OK();
  return internal::CheckWriteConcern(e);
}

// ---- session and transaction options ----

// A transaction's readConcern: every level MongoDB allows in a transaction
// reads the transaction's snapshot here (one node); the others are refused
// as MongoDB refuses them.
Status TxnReadConcernOption(const Element& e, TransactionOptions*) {
  return CheckReadConcern(e, [](std::string_view level) {
    if (level != "snapshot" && level != "majority" && level != "local") {
      return Status(ErrorCode::kInvalidOptions,
                    "The readConcern level must be either 'local' (default), 'majority' or "
                    "'snapshot' in a transaction, not '" +
                        std::string(level) + "'");
    }
    return Status::OK();
  });
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
  SessionOptions session;
};
Status SnapshotOption(const Element& e, ShellSessionOptions* o) {
  std::optional<bool> b;
  ROCKDOC_RETURN_IF_ERROR(BoolValue(e, &b));
  if (b) o->session.snapshot = *b;
  return Status::OK();
}
// One node is causally consistent whatever is asked; the value is checked.
Status CausalConsistencyOption(const Element& e, ShellSessionOptions*) {
  std::optional<bool> b;
  return BoolValue(e, &b);
}
Status DefaultTransactionOptionsOption(const Element& e, ShellSessionOptions*) {
  if (e.IsNull()) return Status::OK();
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  TransactionOptions checked;
  return internal::DecodeOptions(
      e.Document(), kTransactionOptions, &checked,
      [](std::string_view name) {
        return Status(ErrorCode::kUnknownBsonField, "BSON field 'defaultTransactionOptions." +
                                                        std::string(name) +
                                                        "' is an unknown field.");
      },
      [](std::string_view name) {
        return Status(ErrorCode::kNotImplemented,
                      "transaction option '" + std::string(name) + "' is not supported by rockdoc");
      });
}
constexpr OptionField<ShellSessionOptions> kSessionOptions[] = {
    {"causalConsistency", &CausalConsistencyOption},
    {"snapshot", &SnapshotOption},
    {"defaultTransactionOptions", &DefaultTransactionOptionsOption},
    {"readConcern", &ReadConcernOption<ShellSessionOptions>},
    {"writeConcern", &WriteConcernOption<ShellSessionOptions>},
    {"readPreference", &AcceptMeaningless<ShellSessionOptions>},
    // Retryable writes are about failovers; one embedded node has none.
    {"retryWrites", &AcceptMeaningless<ShellSessionOptions>},
};

// Rows shared by every command. comment: MongoDB only attaches it to logs,
// the profiler and currentOp, none of which rockdoc has.
#define ROCKDOC_COMMON_OPTION_ROWS(O) {"comment", &AcceptMeaningless<O>},
// Reads: readPreference chooses a member; a standalone serves every mode
// itself (MongoDB ignores it there too).
#define ROCKDOC_READ_OPTION_ROWS(O)                                       \
  ROCKDOC_COMMON_OPTION_ROWS(O){"readPreference", &AcceptMeaningless<O>}, \
      {"readConcern", &ReadConcernOption<O>},
// Writes: bypassDocumentValidation skips the collection's validator (a
// delete writes no document, so it has nothing to skip).
template <typename O>
Status BypassValidationOption(const Element& e, O* o) {
  if constexpr (requires { o->bypass_document_validation; }) {
    return BoolOption<O, &O::bypass_document_validation>(e, o);
  } else {
    std::optional<bool> b;
    return BoolValue(e, &b);
  }
}
#define ROCKDOC_WRITE_OPTION_ROWS(O)                                     \
  ROCKDOC_COMMON_OPTION_ROWS(O){"writeConcern", &WriteConcernOption<O>}, \
      {"bypassDocumentValidation", &BypassValidationOption<O>},

// find, findOne, cursor.explain(), db.c.explain().find(): the find command.
constexpr OptionField<FindOptions> kFindOptions[] = {
    {"sort", &DocOption<FindOptions, &FindOptions::sort>},
    {"projection", &DocOption<FindOptions, &FindOptions::projection>},
    {"skip", &Int64Option<FindOptions, &FindOptions::skip>},
    {"limit", &Int64Option<FindOptions, &FindOptions::limit>},
    {"hint", &HintOption<FindOptions>},
    {"maxTimeMS", &Int64Option<FindOptions, &FindOptions::max_time_ms>},
    {"batchSize", &BatchSizeOption<FindOptions>},
    {"allowDiskUse", &AllowDiskUseOption<FindOptions>},
    // Partial results are about unreachable shards; there are none.
    {"allowPartialResults", &AcceptMeaningless<FindOptions>},
    // rockdoc's cursors never time out: every cursor is already one.
    {"noCursorTimeout", &AcceptMeaningless<FindOptions>},
    ROCKDOC_READ_OPTION_ROWS(FindOptions){"collation", nullptr},
    {"let", nullptr},
    {"min", nullptr},
    {"max", nullptr},
    {"returnKey", nullptr},
    {"showRecordId", nullptr},
    {"tailable", nullptr},
    {"awaitData", nullptr},
    {"maxAwaitTimeMS", nullptr},
    {"singleBatch", nullptr},
    {"oplogReplay", nullptr},
    {"explain", nullptr},
};

// countDocuments, count, cursor.count(), db.c.explain().count().
constexpr OptionField<CountOptions> kCountOptions[] = {
    {"skip", &Int64Option<CountOptions, &CountOptions::skip>},
    {"limit", &Int64Option<CountOptions, &CountOptions::limit>},
    {"hint", &HintOption<CountOptions>},
    {"maxTimeMS", &Int64Option<CountOptions, &CountOptions::max_time_ms>},
    ROCKDOC_READ_OPTION_ROWS(CountOptions){"collation", nullptr},
};

// estimatedDocumentCount reads a stored count: no time passes for maxTimeMS
// to bound, so it is checked and has nothing to limit.
struct EstimatedCountOptions {
  int64_t max_time_ms = 0;
};
constexpr OptionField<EstimatedCountOptions> kEstimatedCountOptions[] = {
    {"maxTimeMS", &Int64Option<EstimatedCountOptions, &EstimatedCountOptions::max_time_ms>},
    ROCKDOC_READ_OPTION_ROWS(EstimatedCountOptions)};

constexpr OptionField<DistinctOptions> kDistinctOptions[] = {
    {"maxTimeMS", &Int64Option<DistinctOptions, &DistinctOptions::max_time_ms>},
    ROCKDOC_READ_OPTION_ROWS(DistinctOptions){"collation", nullptr},
    {"hint", nullptr},
};

// updateOne, updateMany, update (its `multi` taken by the shell), and their
// explain.
constexpr OptionField<UpdateOptions> kUpdateOptions[] = {
    {"upsert", &BoolOption<UpdateOptions, &UpdateOptions::upsert>},
    {"arrayFilters", &ArrayFiltersOption<UpdateOptions>},
    {"hint", &HintOption<UpdateOptions>},
    {"sort", &DocOption<UpdateOptions, &UpdateOptions::sort>},
    {"maxTimeMS", &Int64Option<UpdateOptions, &UpdateOptions::max_time_ms>},
    ROCKDOC_WRITE_OPTION_ROWS(UpdateOptions){"collation", nullptr},
    {"let", nullptr},
};

// replaceOne (and update with a replacement document).
struct ReplaceOptions {
  bool upsert = false;
  bool bypass_document_validation = false;
};
constexpr OptionField<ReplaceOptions> kReplaceOptions[] = {
    {"upsert", &BoolOption<ReplaceOptions, &ReplaceOptions::upsert>},
    ROCKDOC_WRITE_OPTION_ROWS(ReplaceOptions){"hint", nullptr},
    {"sort", nullptr},
    {"maxTimeMS", nullptr},
    {"collation", nullptr},
    {"let", nullptr},
};

// deleteOne, deleteMany, remove (its `justOne` taken by the shell).
constexpr OptionField<DeleteOptions> kDeleteOptions[] = {
    {"maxTimeMS", &Int64Option<DeleteOptions, &DeleteOptions::max_time_ms>},
    ROCKDOC_WRITE_OPTION_ROWS(DeleteOptions){"hint", nullptr},
    {"collation", nullptr},
    {"let", nullptr},
};

// explain of a delete: Collection::ExplainDelete takes no options.
struct ExplainDeleteOptions {};
constexpr OptionField<ExplainDeleteOptions> kExplainDeleteOptions[] = {
    ROCKDOC_WRITE_OPTION_ROWS(ExplainDeleteOptions){"maxTimeMS", nullptr},
    {"hint", nullptr},
    {"collation", nullptr},
    {"let", nullptr},
};

// insertOne, insertMany, insert.
constexpr OptionField<InsertManyOptions> kInsertOptions[] = {
    {"ordered", &BoolOption<InsertManyOptions, &InsertManyOptions::ordered>},
    ROCKDOC_WRITE_OPTION_ROWS(InsertManyOptions)};

// findOneAndUpdate / findOneAndReplace / findAndModify's update form. The
// returned document is chosen by returnDocument ('before' | 'after', the
// driver's), returnNewDocument (mongosh's) or new (findAndModify's).
Status ReturnNewOption(const Element& e, FindOneAndModifyOptions* o) {
  std::optional<bool> b;
  ROCKDOC_RETURN_IF_ERROR(BoolValue(e, &b));
  if (b) o->return_document = *b ? ReturnDocument::kAfter : ReturnDocument::kBefore;
  return Status::OK();
}
Status ReturnDocumentOption(const Element& e, FindOneAndModifyOptions* o) {
  if (e.IsNull()) return Status::OK();
  std::optional<std::string_view> s = e.AsString();
  if (s && (*s == "before" || *s == "after")) {
    o->return_document = *s == "after" ? ReturnDocument::kAfter : ReturnDocument::kBefore;
    return Status::OK();
  }
  return Status(ErrorCode::kBadValue, "returnDocument must be 'before' or 'after'");
}
#define ROCKDOC_MODIFY_OPTION_ROWS                                                                 \
  {"sort", &DocOption<FindOneAndModifyOptions, &FindOneAndModifyOptions::sort>},                   \
      {"projection", &DocOption<FindOneAndModifyOptions, &FindOneAndModifyOptions::projection>},   \
      {"fields", &DocOption<FindOneAndModifyOptions, &FindOneAndModifyOptions::projection>},       \
      {"maxTimeMS", &Int64Option<FindOneAndModifyOptions, &FindOneAndModifyOptions::max_time_ms>}, \
      ROCKDOC_WRITE_OPTION_ROWS(FindOneAndModifyOptions){"hint", nullptr}, {"collation", nullptr}, \
      {"let", nullptr},
constexpr OptionField<FindOneAndModifyOptions> kModifyOptions[] = {
    ROCKDOC_MODIFY_OPTION_ROWS{
        "upsert", &BoolOption<FindOneAndModifyOptions, &FindOneAndModifyOptions::upsert>},
    {"arrayFilters", &ArrayFiltersOption<FindOneAndModifyOptions>},
    {"returnDocument", &ReturnDocumentOption},
    {"returnNewDocument", &ReturnNewOption},
    {"new", &ReturnNewOption},
};
// findOneAndDelete / findAndModify({remove: true}): new and upsert are
// findAndModify fields that only false suits (MongoDB's FailedToParse).
template <const char* kMessage>
Status FalseWithRemoveOption(const Element& e, FindOneAndModifyOptions*) {
  std::optional<bool> b;
  ROCKDOC_RETURN_IF_ERROR(BoolValue(e, &b));
  if (b.value_or(false)) return Status(ErrorCode::kFailedToParse, kMessage);
  return Status::OK();
}
constexpr char kNewWithRemove[] =
    "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document";
// MongoDB's text, its trailing space included.
constexpr char kUpsertWithRemove[] = "Cannot specify both upsert=true and remove=true ";
constexpr OptionField<FindOneAndModifyOptions> kModifyDeleteOptions[] = {
    ROCKDOC_MODIFY_OPTION_ROWS{"new", &FalseWithRemoveOption<kNewWithRemove>},
    {"upsert", &FalseWithRemoveOption<kUpsertWithRemove>},
};

// The session whose database args[0] names (session.getDatabase), or null.
Session* ArgSessionOf(JSContext* cx, const JS::CallArgs& args);

// Decodes the options object args[i] (absent, undefined or null: none) for
// `method` (named in NotImplemented) through `table`; `command` is the server
// command that names an unknown field.
template <typename O, size_t N>
bool ArgOptions(JSContext* cx, const JS::CallArgs& args, unsigned i, std::string_view command,
                std::string_view method, const OptionField<O> (&table)[N], O* out) {
  if (i >= args.length() || args[i].isNullOrUndefined()) return true;
  Document doc;
  if (!GetState(cx)->converter.ToDocument(cx, args[i], "options", &doc)) return false;
  // The transactions spec: an operation inside a transaction takes the
  // transaction's read and write concerns and may not give its own.
  if (Session* session = ArgSessionOf(cx, args); session != nullptr && session->InTransaction()) {
    if (doc.Get("readConcern").ok()) {
      return ThrowStatus(cx, Status(ErrorCode::kInvalidOptions,
                                    "Only the first command in a transaction may specify a "
                                    "readConcern; give it to startTransaction"));
    }
    if (doc.Get("writeConcern").ok()) {
      return ThrowStatus(cx, Status(ErrorCode::kInvalidOptions,
                                    "writeConcern is not allowed within a multi-statement "
                                    "transaction; give it to startTransaction"));
    }
  }
  Status status = internal::DecodeOptions(
      doc, table, out,
      [&](std::string_view name) {
        return Status(ErrorCode::kUnknownBsonField, "BSON field '" + std::string(command) + "." +
                                                        std::string(name) +
                                                        "' is an unknown field.");
      },
      [&](std::string_view name) {
        return Status(ErrorCode::kNotImplemented, std::string(method) + " option '" +
                                                      std::string(name) +
                                                      "' is not supported by rockdoc");
      });
  if (!status.ok()) return ThrowStatus(cx, status);
  return true;
}

#undef ROCKDOC_MODIFY_OPTION_ROWS
#undef ROCKDOC_WRITE_OPTION_ROWS
#undef ROCKDOC_READ_OPTION_ROWS
#undef ROCKDOC_COMMON_OPTION_ROWS

bool ParseVerbosity(JSContext* cx, const JS::CallArgs& args, unsigned i, ExplainVerbosity* out) {
  std::string v = "queryPlanner";
  if (i < args.length() && args[i].isString() && !JsStringToUtf8(cx, args[i].toString(), &v)) {
    return false;
  }
  if (v == "queryPlanner") {
    *out = ExplainVerbosity::kQueryPlanner;
  } else if (v == "executionStats") {
    *out = ExplainVerbosity::kExecutionStats;
  } else if (v == "allPlansExecution") {
    *out = ExplainVerbosity::kAllPlansExecution;
  } else {
    return ThrowStatus(cx, BadValue("verbosity must be one of queryPlanner, executionStats, "
                                    "allPlansExecution; got '" +
                                    v + "'"));
  }
  return true;
}

// A database argument names a database ("shop"), or one reached through a
// session ({name: "shop", session: 3}: session.getDatabase). Inside C++ the
// latter travels as "shop" kSessionMark "3"; a name holding the mark is
// refused, so it cannot be forged.
constexpr char kSessionMark = '\x1f';

// The session of id `id` (IllegalOperation when there is none).
StatusOr<Session*> FindSession(JSContext* cx, int64_t id) {
  auto& sessions = GetState(cx)->sessions;
  auto it = sessions.find(id);
  if (it == sessions.end()) {
    return Status(ErrorCode::kIllegalOperation, "no session " + std::to_string(id));
  }
  return &it->second;
}

Session* ArgSessionOf(JSContext* cx, const JS::CallArgs& args) {
  if (args.length() == 0 || !args[0].isObject()) return nullptr;
  JS::RootedObject obj(cx, &args[0].toObject());
  JS::RootedValue session(cx);
  if (!JS_GetProperty(cx, obj, "session", &session) || !session.isNumber()) {
    JS_ClearPendingException(cx);
    return nullptr;
  }
  StatusOr<Session*> found = FindSession(cx, static_cast<int64_t>(session.toNumber()));
  return found.ok() ? *found : nullptr;
}

bool ArgDbName(JSContext* cx, const JS::CallArgs& args, unsigned i, std::string* out) {
  if (i < args.length() && args[i].isObject()) {
    JS::RootedObject obj(cx, &args[i].toObject());
    JS::RootedValue name(cx), session(cx);
    if (!JS_GetProperty(cx, obj, "name", &name) || !JS_GetProperty(cx, obj, "session", &session)) {
      return false;
    }
    if (!name.isString() || !session.isNumber()) {
      return ThrowTypeError(cx, "internal: a session database needs a name and a session");
    }
    if (!JsStringToUtf8(cx, name.toString(), out)) return false;
    const int64_t id = static_cast<int64_t>(session.toNumber());
    StatusOr<Session*> found = FindSession(cx, id);
    if (!found.ok()) return ThrowStatus(cx, found.status());
    out->push_back(kSessionMark);
    out->append(std::to_string(id));
    return true;
  }
  if (!ArgString(cx, args, i, out)) return false;
  if (out->find(kSessionMark) != std::string::npos) {
    return ThrowStatus(cx, Status(ErrorCode::kInvalidNamespace,
                                  "Invalid database name: a control character (0x1f)"));
  }
  return true;
}

Database GetDatabase(JSContext* cx, const std::string& db) {
  size_t mark = db.find(kSessionMark);
  if (mark != std::string::npos) {
    StatusOr<Session*> session = FindSession(cx, std::strtoll(db.c_str() + mark + 1, nullptr, 10));
    // ArgDbName checked that the session exists, and none is ever removed.
    ROCKDOC_CHECK(session.ok());
    return (*session)->GetDatabase(db.substr(0, mark));
  }
  return GetState(cx)->client->GetDatabase(db);
}

Collection GetCollection(JSContext* cx, const std::string& db, const std::string& name) {
  return GetDatabase(cx, db).GetCollection(name);
}

// Arguments 0 and 1 of every collection native: the database and
// collection names.
bool ArgCollection(JSContext* cx, const JS::CallArgs& args, std::optional<Collection>* out) {
  std::string db, name;
  if (!ArgDbName(cx, args, 0, &db) || !ArgString(cx, args, 1, &name)) return false;
  out->emplace(GetCollection(cx, db, name));
  return true;
}

// The (db, coll, filter, options) arguments of find, findOne and their
// explain.
bool ArgFind(JSContext* cx, const JS::CallArgs& args, std::optional<Collection>* c,
             Document* filter, FindOptions* options) {
  return ArgCollection(cx, args, c) && ArgDoc(cx, args, 2, "filter", filter) &&
         ArgOptions(cx, args, 3, "find", "find", kFindOptions, options);
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

bool ReturnElement(JSContext* cx, JS::CallArgs& args, const Value& value) {
  if (!value.ok()) {
    args.rval().setUndefined();
    return true;
  }
  return GetState(cx)->converter.FromElement(cx, value.element(), args.rval());
}

bool StringsToJs(JSContext* cx, const std::vector<std::string>& names, JS::MutableHandleValue out) {
  JS::RootedObject arr(cx, JS::NewArrayObject(cx, 0));
  if (!arr) return false;
  for (size_t i = 0; i < names.size(); ++i) {
    JSString* s = NewJsString(cx, names[i]);
    if (!s) return false;
    JS::RootedValue v(cx, JS::StringValue(s));
    if (!JS_DefineElement(cx, arr, static_cast<uint32_t>(i), v, JSPROP_ENUMERATE)) return false;
  }
  out.setObject(*arr);
  return true;
}

bool ReturnStrings(JSContext* cx, JS::CallArgs& args, const std::vector<std::string>& names) {
  return StringsToJs(cx, names, args.rval());
}

bool ReturnDocs(JSContext* cx, JS::CallArgs& args, const std::vector<Document>& docs) {
  JS::RootedObject arr(cx, JS::NewArrayObject(cx, 0));
  if (!arr) return false;
  JS::RootedValue v(cx);
  for (size_t i = 0; i < docs.size(); ++i) {
    if (!GetState(cx)->converter.FromDocument(cx, docs[i], &v)) return false;
    if (!JS_DefineElement(cx, arr, static_cast<uint32_t>(i), v, JSPROP_ENUMERATE)) return false;
  }
  args.rval().setObject(*arr);
  return true;
}

// {matchedCount, modifiedCount, upsertedId?}
bool ReturnUpdateResult(JSContext* cx, JS::CallArgs& args, const UpdateResult& r) {
  JS::RootedObject obj(cx, JS_NewPlainObject(cx));
  if (!obj || !SetNumber(cx, obj, "matchedCount", static_cast<double>(r.matched_count)) ||
      !SetNumber(cx, obj, "modifiedCount", static_cast<double>(r.modified_count))) {
    return false;
  }
  if (r.upserted_id && r.upserted_id->ok()) {
    JS::RootedValue id(cx);
    if (!GetState(cx)->converter.FromElement(cx, r.upserted_id->element(), &id) ||
        !SetProp(cx, obj, "upsertedId", id)) {
      return false;
    }
  }
  args.rval().setObject(*obj);
  return true;
}

// ---- cursors ----

void FinalizeCursor(JS::GCContext*, JSObject* obj) {
  auto* holder = JS::GetMaybePtrFromReservedSlot<CursorHolder>(obj, 0);
  if (!holder) return;
  if (holder->registry) holder->registry->erase(holder);
  delete holder;
}

const JSClassOps kCursorClassOps = {nullptr, nullptr,        nullptr, nullptr, nullptr,
                                    nullptr, FinalizeCursor, nullptr, nullptr, nullptr};
const JSClass kCursorClass = {
    "NativeCursor",   JSCLASS_HAS_RESERVED_SLOTS(1) | JSCLASS_FOREGROUND_FINALIZE,
    &kCursorClassOps, nullptr,
    nullptr,          nullptr};

CursorHolder* GetCursorHolder(JSContext* cx, const JS::CallArgs& args) {
  if (args.length() < 1 || !args[0].isObject() ||
      JS::GetClass(&args[0].toObject()) != &kCursorClass) {
    ThrowTypeError(cx, "internal: not a native cursor");
    return nullptr;
  }
  return JS::GetMaybePtrFromReservedSlot<CursorHolder>(&args[0].toObject(), 0);
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

NATIVE(InsertOne) {
  ARGS;
  std::optional<Collection> c;
  Document doc;
  InsertManyOptions options;
  if (!ArgCollection(cx, args, &c) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(2), "document", &doc) ||
      !ArgOptions(cx, args, 3, "insert", "insertOne", kInsertOptions, &options)) {
    return false;
  }
  InsertOneOptions one;
  one.bypass_document_validation = options.bypass_document_validation;
  STATUS_OR_THROW(r, c->InsertOne(doc, one));
  return ReturnElement(cx, args, r.inserted_id);
}

// -> {insertedIds: {index: id}, insertedCount, writeErrors: [{index, code, codeName, errmsg}]}
NATIVE(InsertMany) {
  ARGS;
  std::optional<Collection> c;
  if (!ArgCollection(cx, args, &c)) return false;
  bool is_array = false;
  if (!args.get(2).isObject() || !JS::IsArrayObject(cx, args[2], &is_array) || !is_array) {
    if (JS_IsExceptionPending(cx)) return false;
    return ThrowTypeError(cx, "documents must be an array");
  }
  JS::RootedObject arr(cx, &args[2].toObject());
  uint32_t length = 0;
  if (!JS::GetArrayLength(cx, arr, &length)) return false;
  std::vector<Document> docs;
  docs.reserve(length);
  JS::RootedValue element(cx);
  for (uint32_t i = 0; i < length; ++i) {
    if (!JS_GetElement(cx, arr, i, &element)) return false;
    Document doc;
    if (!GetState(cx)->converter.ToDocument(cx, element, "document", &doc)) return false;
    docs.push_back(std::move(doc));
  }
  InsertManyOptions options;
  if (!ArgOptions(cx, args, 3, "insert", "insertMany", kInsertOptions, &options)) return false;
  STATUS_OR_THROW(r, c->InsertMany(docs, options));

  // Map the inserted ids back to input positions: every position that is
  // not a write error (and, for an ordered insert, precedes the first one)
  // was inserted, in order.
  std::set<size_t> failed;
  for (const WriteError& we : r.write_errors) failed.insert(we.index);
  JS::RootedObject ids(cx, JS_NewPlainObject(cx));
  JS::RootedObject errors(cx, JS::NewArrayObject(cx, 0));
  if (!ids || !errors) return false;
  JS::RootedValue v(cx);
  size_t next_id = 0;
  for (size_t i = 0; i < docs.size() && next_id < r.inserted_ids.size(); ++i) {
    if (failed.count(i)) continue;
    if (!GetState(cx)->converter.FromElement(cx, r.inserted_ids[next_id++].element(), &v)) {
      return false;
    }
    if (!JS_DefineElement(cx, ids, static_cast<uint32_t>(i), v, JSPROP_ENUMERATE)) return false;
  }
  for (size_t k = 0; k < r.write_errors.size(); ++k) {
    const WriteError& we = r.write_errors[k];
    JS::RootedObject e(cx, JS_NewPlainObject(cx));
    if (!e || !SetNumber(cx, e, "index", static_cast<double>(we.index)) ||
        !SetNumber(cx, e, "code", we.status.code_number()) ||
        !SetString(cx, e, "codeName", we.status.code_name()) ||
        !SetString(cx, e, "errmsg", we.status.message())) {
      return false;
    }
    if (!we.status.error_info().empty()) {
      JS::RootedValue info(cx);
      if (!GetState(cx)->converter.FromDocument(
              cx, Document::AdoptValidated(std::string(we.status.error_info())).view(), &info) ||
          !JS_SetProperty(cx, e, "errInfo", info)) {
        return false;
      }
    }
    v.setObject(*e);
    if (!JS_DefineElement(cx, errors, static_cast<uint32_t>(k), v, JSPROP_ENUMERATE)) return false;
  }
  JS::RootedObject result(cx, JS_NewPlainObject(cx));
  JS::RootedValue ids_value(cx, JS::ObjectValue(*ids));
  JS::RootedValue errors_value(cx, JS::ObjectValue(*errors));
  if (!result || !SetProp(cx, result, "insertedIds", ids_value) ||
      !SetNumber(cx, result, "insertedCount", static_cast<double>(r.inserted_count())) ||
      !SetProp(cx, result, "writeErrors", errors_value)) {
    return false;
  }
  args.rval().setObject(*result);
  return true;
}

NATIVE(Find) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  FindOptions options;
  if (!ArgFind(cx, args, &c, &filter, &options)) return false;
  STATUS_OR_THROW(cursor, c->Find(filter, options));
  JS::RootedObject obj(cx, JS_NewObject(cx, &kCursorClass));
  if (!obj) return false;
  ShellState* st = GetState(cx);
  auto* holder = new CursorHolder;
  holder->cursor.emplace(std::move(cursor));
  holder->registry = &st->cursors;
  st->cursors.insert(holder);
  JS::SetReservedSlot(obj, 0, JS::PrivateValue(holder));
  args.rval().setObject(*obj);
  return true;
}

// cursorNext(cursor, n) -> up to n documents; [] at the end.
NATIVE(CursorNext) {
  ARGS;
  CursorHolder* holder = GetCursorHolder(cx, args);
  if (!holder) return false;
  double n = 100;
  if (args.length() > 1 && !JS::ToNumber(cx, args[1], &n)) return false;
  JS::RootedObject arr(cx, JS::NewArrayObject(cx, 0));
  if (!arr) return false;
  if (!holder->cursor) {
    args.rval().setObject(*arr);
    return true;
  }
  JS::RootedValue v(cx);
  uint32_t count = 0;
  while (count < n && holder->cursor->Next()) {
    if (!GetState(cx)->converter.FromDocument(cx, holder->cursor->document(), &v)) return false;
    if (!JS_DefineElement(cx, arr, count++, v, JSPROP_ENUMERATE)) return false;
  }
  Status status = holder->cursor->status();
  if (!status.ok()) {
    holder->cursor.reset();
    return ThrowStatus(cx, status);
  }
  // Release the snapshot as soon as the cursor is exhausted.
  if (count < n) holder->cursor.reset();
  args.rval().setObject(*arr);
  return true;
}

NATIVE(CursorClose) {
  ARGS;
  CursorHolder* holder = GetCursorHolder(cx, args);
  if (!holder) return false;
  holder->cursor.reset();
  args.rval().setUndefined();
  return true;
}

NATIVE(FindOne) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  FindOptions options;
  if (!ArgFind(cx, args, &c, &filter, &options)) return false;
  STATUS_OR_THROW(doc, c->FindOne(filter, options));
  return ReturnDoc(cx, args, doc);
}

// The (db, coll, filter, {skip, limit, hint}) arguments of count and its
// explain.
bool ArgCount(JSContext* cx, const JS::CallArgs& args, std::optional<Collection>* c,
              Document* filter, CountOptions* options) {
  return ArgCollection(cx, args, c) && ArgDoc(cx, args, 2, "filter", filter) &&
         ArgOptions(cx, args, 3, "count", "countDocuments", kCountOptions, options);
}

NATIVE(Count) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  CountOptions options;
  if (!ArgCount(cx, args, &c, &filter, &options)) return false;
  STATUS_OR_THROW(n, c->CountDocuments(filter, options));
  args.rval().setNumber(static_cast<double>(n));
  return true;
}

NATIVE(EstimatedCount) {
  ARGS;
  std::optional<Collection> c;
  EstimatedCountOptions options;
  if (!ArgCollection(cx, args, &c) || !ArgOptions(cx, args, 2, "count", "estimatedDocumentCount",
                                                  kEstimatedCountOptions, &options)) {
    return false;
  }
  STATUS_OR_THROW(n, c->EstimatedDocumentCount());
  args.rval().setNumber(static_cast<double>(n));
  return true;
}

NATIVE(Distinct) {
  ARGS;
  std::string db, coll, field;
  Document filter;
  DistinctOptions options;
  if (!ArgDbName(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll) ||
      !ArgString(cx, args, 2, &field) || !ArgDoc(cx, args, 3, "filter", &filter) ||
      !ArgOptions(cx, args, 4, "distinct", "distinct", kDistinctOptions, &options)) {
    return false;
  }
  STATUS_OR_THROW(values, GetCollection(cx, db, coll).Distinct(field, filter, options));
  JS::RootedObject arr(cx, JS::NewArrayObject(cx, 0));
  if (!arr) return false;
  JS::RootedValue v(cx);
  for (size_t i = 0; i < values.size(); ++i) {
    if (!GetState(cx)->converter.FromElement(cx, values[i].element(), &v)) return false;
    if (!JS_DefineElement(cx, arr, static_cast<uint32_t>(i), v, JSPROP_ENUMERATE)) return false;
  }
  args.rval().setObject(*arr);
  return true;
}

// The options of updateOne / updateMany (and update, explain's update).
bool ArgUpdateOptions(JSContext* cx, const JS::CallArgs& args, unsigned i, bool multi,
                      UpdateOptions* o) {
  return ArgOptions(cx, args, i, "update", multi ? "updateMany" : "updateOne", kUpdateOptions, o);
}

// update(db, coll, filter, update, options, multi)
NATIVE(Update) {
  ARGS;
  std::optional<Collection> c;
  Document filter, update;
  UpdateOptions options;
  if (!ArgCollection(cx, args, &c) || !ArgWriteFilter(cx, args, 2, &filter) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(3), "update", &update) ||
      !ArgUpdateOptions(cx, args, 4, ArgBool(args, 5), &options)) {
    return false;
  }
  STATUS_OR_THROW(r, ArgBool(args, 5) ? c->UpdateMany(filter, update, options)
                                      : c->UpdateOne(filter, update, options));
  return ReturnUpdateResult(cx, args, r);
}

// replaceOne(db, coll, filter, replacement, options)
NATIVE(ReplaceOne) {
  ARGS;
  std::optional<Collection> c;
  Document filter, replacement;
  ReplaceOptions options;
  if (!ArgCollection(cx, args, &c) || !ArgWriteFilter(cx, args, 2, &filter) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(3), "replacement", &replacement) ||
      !ArgOptions(cx, args, 4, "update", "replaceOne", kReplaceOptions, &options)) {
    return false;
  }
  UpdateOptions update_options;
  update_options.upsert = options.upsert;
  update_options.bypass_document_validation = options.bypass_document_validation;
  STATUS_OR_THROW(r, c->ReplaceOne(filter, replacement, update_options));
  return ReturnUpdateResult(cx, args, r);
}

// remove(db, coll, filter, multi, options) -> deletedCount
NATIVE(Delete) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  DeleteOptions options;
  if (!ArgCollection(cx, args, &c) || !ArgWriteFilter(cx, args, 2, &filter) ||
      !ArgOptions(cx, args, 4, "delete", ArgBool(args, 3) ? "deleteMany" : "deleteOne",
                  kDeleteOptions, &options)) {
    return false;
  }
  STATUS_OR_THROW(
      r, ArgBool(args, 3) ? c->DeleteMany(filter, options) : c->DeleteOne(filter, options));
  args.rval().setNumber(static_cast<double>(r.deleted_count));
  return true;
}

// findOneAndUpdate / findOneAndReplace (db, coll, filter, update, options)
bool FindOneAndModify(JSContext* cx, unsigned argc, JS::Value* vp, bool replace) {
  ARGS;
  std::string db, coll;
  Document filter, update;
  FindOneAndModifyOptions options;
  if (!ArgDbName(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll) ||
      !ArgWriteFilter(cx, args, 2, &filter) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(3), replace ? "replacement" : "update",
                                          &update) ||
      !ArgOptions(cx, args, 4, "findAndModify", replace ? "findOneAndReplace" : "findOneAndUpdate",
                  kModifyOptions, &options)) {
    return false;
  }
  Collection c = GetCollection(cx, db, coll);
  STATUS_OR_THROW(doc, replace ? c.FindOneAndReplace(filter, update, options)
                               : c.FindOneAndUpdate(filter, update, options));
  return ReturnDoc(cx, args, doc);
}

NATIVE(FindOneAndUpdate) { return FindOneAndModify(cx, argc, vp, false); }
NATIVE(FindOneAndReplace) { return FindOneAndModify(cx, argc, vp, true); }

NATIVE(FindOneAndDelete) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  FindOneAndModifyOptions options;
  if (!ArgCollection(cx, args, &c) || !ArgWriteFilter(cx, args, 2, &filter) ||
      !ArgOptions(cx, args, 3, "findAndModify", "findOneAndDelete", kModifyDeleteOptions,
                  &options)) {
    return false;
  }
  STATUS_OR_THROW(doc, c->FindOneAndDelete(filter, options));
  return ReturnDoc(cx, args, doc);
}

// explainFind(db, coll, filter, options, verbosity)
NATIVE(ExplainFind) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  FindOptions options;
  ExplainVerbosity verbosity;
  if (!ArgFind(cx, args, &c, &filter, &options) || !ParseVerbosity(cx, args, 4, &verbosity)) {
    return false;
  }
  STATUS_OR_THROW(doc, c->ExplainFind(filter, options, verbosity));
  return ReturnDoc(cx, args, doc);
}

// explainCount(db, coll, filter, options, verbosity)
NATIVE(ExplainCount) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  CountOptions options;
  ExplainVerbosity verbosity;
  if (!ArgCount(cx, args, &c, &filter, &options) || !ParseVerbosity(cx, args, 4, &verbosity)) {
    return false;
  }
  STATUS_OR_THROW(doc, c->ExplainCount(filter, options, verbosity));
  return ReturnDoc(cx, args, doc);
}

// explainUpdate(db, coll, filter, update, multi, options, verbosity)
NATIVE(ExplainUpdate) {
  ARGS;
  std::string db, coll;
  Document filter, update;
  UpdateOptions options;
  ExplainVerbosity verbosity;
  if (!ArgDbName(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll) ||
      !ArgDoc(cx, args, 2, "filter", &filter) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(3), "update", &update) ||
      !ArgUpdateOptions(cx, args, 5, ArgBool(args, 4), &options) ||
      !ParseVerbosity(cx, args, 6, &verbosity)) {
    return false;
  }
  STATUS_OR_THROW(doc, GetCollection(cx, db, coll)
                           .ExplainUpdate(filter, update, ArgBool(args, 4), options, verbosity));
  return ReturnDoc(cx, args, doc);
}

// explainDelete(db, coll, filter, multi, verbosity, options)
NATIVE(ExplainDelete) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  ExplainVerbosity verbosity;
  ExplainDeleteOptions options;
  if (!ArgCollection(cx, args, &c) || !ArgDoc(cx, args, 2, "filter", &filter) ||
      !ParseVerbosity(cx, args, 4, &verbosity) ||
      !ArgOptions(cx, args, 5, "delete", ArgBool(args, 3) ? "deleteMany" : "deleteOne",
                  kExplainDeleteOptions, &options)) {
    return false;
  }
  STATUS_OR_THROW(doc, c->ExplainDelete(filter, ArgBool(args, 3), verbosity));
  return ReturnDoc(cx, args, doc);
}

// createIndexes(db, coll, {keys: [key pattern, ...]}, options): one options
// document for every index, decoded by the library's table (so an option
// rockdoc lacks is refused there, never dropped here). All or none.
NATIVE(CreateIndexes) {
  ARGS;
  std::optional<Collection> c;
  std::vector<Document> keys;
  Document options;
  if (!ArgCollection(cx, args, &c) || !OptDocArray(cx, args, 2, "keys", &keys) ||
      !ArgDoc(cx, args, 3, "index options", &options)) {
    return false;
  }
  std::vector<IndexModel> models;
  for (Document& k : keys) models.push_back(IndexModel{std::move(k), options});
  STATUS_OR_THROW(names, c->CreateIndexes(models));
  return ReturnStrings(cx, args, names);
}

NATIVE(ListIndexes) {
  ARGS;
  std::optional<Collection> c;
  if (!ArgCollection(cx, args, &c)) return false;
  STATUS_OR_THROW(indexes, c->ListIndexes());
  return ReturnDocs(cx, args, indexes);
}

// dropIndex(db, coll, nameOrKeyPattern)
NATIVE(DropIndex) {
  ARGS;
  std::optional<Collection> c;
  if (!ArgCollection(cx, args, &c)) return false;
  Status status;
  if (args.get(2).isString()) {
    std::string name;
    if (!JsStringToUtf8(cx, args[2].toString(), &name)) return false;
    status = c->DropIndex(name);
  } else {
    Document keys;
    if (!GetState(cx)->converter.ToDocument(cx, args.get(2), "index", &keys)) return false;
    status = c->DropIndexByKey(keys);
  }
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setUndefined();
  return true;
}

NATIVE(DropIndexes) {
  ARGS;
  std::optional<Collection> c;
  if (!ArgCollection(cx, args, &c)) return false;
  Status status = c->DropIndexes();
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setUndefined();
  return true;
}

// dropCollection(db, coll) -> whether it existed
NATIVE(DropCollection) {
  ARGS;
  std::string db, coll;
  if (!ArgDbName(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll)) return false;
  bool existed = false;
  Status status = GetDatabase(cx, db).DropCollection(coll, &existed);
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setBoolean(existed);
  return true;
}

// renameCollection(db, from, to, dropTarget)
NATIVE(RenameCollection) {
  ARGS;
  std::string db, from, to;
  if (!ArgDbName(cx, args, 0, &db) || !ArgString(cx, args, 1, &from) ||
      !ArgString(cx, args, 2, &to)) {
    return false;
  }
  Status status = GetDatabase(cx, db).RenameCollection(from, to, ArgBool(args, 3));
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setUndefined();
  return true;
}

NATIVE(Validate) {
  ARGS;
  std::optional<Collection> c;
  if (!ArgCollection(cx, args, &c)) return false;
  STATUS_OR_THROW(r, c->Validate());
  JS::RootedObject obj(cx, JS_NewPlainObject(cx));
  if (!obj) return false;
  JS::RootedValue valid(cx, JS::BooleanValue(r.valid));
  JS::RootedValue errors(cx), warnings(cx);
  if (!SetProp(cx, obj, "valid", valid) ||
      !SetNumber(cx, obj, "records", static_cast<double>(r.records)) ||
      !SetNumber(cx, obj, "indexEntries", static_cast<double>(r.index_entries)) ||
      !StringsToJs(cx, r.errors, &errors) || !SetProp(cx, obj, "errors", errors) ||
      !StringsToJs(cx, r.warnings, &warnings) || !SetProp(cx, obj, "warnings", warnings)) {
    return false;
  }
  args.rval().setObject(*obj);
  return true;
}

// collStats(db, coll) -> {count, size, maxObjSize, indexNames}: the sizes are
// the documents' BSON sizes, summed over a scan (the public API has no
// storage-size figures per collection).
// createCollection(db, name, options): options decoded by the library.
NATIVE(CreateCollection) {
  ARGS;
  std::string db, coll;
  Document options;
  if (!ArgDbName(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll) ||
      !ArgDoc(cx, args, 2, "createCollection options", &options)) {
    return false;
  }
  Status status = GetDatabase(cx, db).CreateCollection(coll, options);
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setUndefined();
  return true;
}

NATIVE(ListCollections) {
  ARGS;
  std::string db;
  if (!ArgDbName(cx, args, 0, &db)) return false;
  STATUS_OR_THROW(names, GetDatabase(cx, db).ListCollectionNames());
  return ReturnStrings(cx, args, names);
}

// db.runCommand / db.adminCommand: the command layer (Client::RunCommand).
// A failed command throws MongoServerError, as mongosh's runCommand does.
NATIVE(RunCommand) {
  ARGS;
  std::string db;
  if (!ArgDbName(cx, args, 0, &db)) return false;
  if (db.find(kSessionMark) != std::string::npos) {
    return ThrowStatus(cx, Status(ErrorCode::kNotImplemented,
                                  "runCommand through a session is not supported by rockdoc yet"));
  }
  Document command;
  if (!ArgDoc(cx, args, 1, "command", &command)) return false;
  Document reply = GetState(cx)->client->RunCommand(db, command);
  if (reply.Get("ok").NumberAsDouble() != 1) {
    Status failed(static_cast<ErrorCode>(reply.Get("code").Int32()),
                  std::string(reply.Get("errmsg").String()));
    Element labels = reply.Get("errorLabels");
    if (labels.type() == BsonType::kArray) {
      for (Element label : labels.Array()) failed = failed.WithErrorLabel(std::string(label.String()));
    }
    return ThrowStatus(cx, failed);
  }
  return ReturnDoc(cx, args, reply);
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

NATIVE(ListDatabases) {
  ARGS;
  STATUS_OR_THROW(names, GetState(cx)->client->ListDatabaseNames());
  return ReturnStrings(cx, args, names);
}

// ---- sessions and transactions ----

NATIVE(StartSession) {
  ARGS;
  ShellSessionOptions options;
  if (!ArgOptions(cx, args, 0, "startSession", "startSession", kSessionOptions, &options)) {
    return false;
  }
  STATUS_OR_THROW(session, GetState(cx)->client->StartSession(options.session));
  ShellState* state = GetState(cx);
  int64_t id = state->next_session_id++;
  state->sessions.emplace(id, std::move(session));
  args.rval().setNumber(static_cast<double>(id));
  return true;
}

// Argument 0 of the session natives: the session's id.
bool ArgSession(JSContext* cx, const JS::CallArgs& args, Session** out) {
  if (args.length() < 1 || !args[0].isNumber()) {
    return ThrowTypeError(cx, "internal: argument 0 must be a session id");
  }
  StatusOr<Session*> s = FindSession(cx, static_cast<int64_t>(args[0].toNumber()));
  if (!s.ok()) return ThrowStatus(cx, s.status());
  *out = *s;
  return true;
}

NATIVE(SessionStartTransaction) {
  ARGS;
  Session* session = nullptr;
  TransactionOptions options;
  if (!ArgSession(cx, args, &session) ||
      !ArgOptions(cx, args, 1, "startTransaction", "startTransaction", kTransactionOptions,
                  &options)) {
    return false;
  }
  Status status = session->StartTransaction(options);
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setUndefined();
  return true;
}

// commitTransaction, abortTransaction, endSession: what `op` does to the
// session, thrown when it fails.
template <Status (Session::*kOp)()>
NATIVE(SessionCall) {
  ARGS;
  Session* session = nullptr;
  if (!ArgSession(cx, args, &session)) return false;
  Status status = (session->*kOp)();
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setUndefined();
  return true;
}

NATIVE(SessionInTransaction) {
  ARGS;
  Session* session = nullptr;
  if (!ArgSession(cx, args, &session)) return false;
  args.rval().setBoolean(session->InTransaction());
  return true;
}

NATIVE(DropDatabase) {
  ARGS;
  std::string db;
  if (!ArgDbName(cx, args, 0, &db)) return false;
  Status status = GetDatabase(cx, db).Drop();
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

#undef NATIVE
#undef ARGS
#undef STATUS_OR_THROW

const JSFunctionSpec kNatives[] = {
    JS_FN("write", Write, 1, 0),
    JS_FN("writeErr", WriteErr, 1, 0),
    JS_FN("config", Config, 0, 0),
    JS_FN("insertOne", InsertOne, 3, 0),
    JS_FN("runCommand", RunCommand, 2, 0),
    JS_FN("codeName", CodeName, 1, 0),
    JS_FN("insertMany", InsertMany, 4, 0),
    JS_FN("find", Find, 4, 0),
    JS_FN("cursorNext", CursorNext, 2, 0),
    JS_FN("cursorClose", CursorClose, 1, 0),
    JS_FN("findOne", FindOne, 4, 0),
    JS_FN("count", Count, 4, 0),
    JS_FN("estimatedCount", EstimatedCount, 2, 0),
    JS_FN("distinct", Distinct, 4, 0),
    JS_FN("update", Update, 6, 0),
    JS_FN("replaceOne", ReplaceOne, 5, 0),
    JS_FN("remove", Delete, 4, 0),
    JS_FN("findOneAndUpdate", FindOneAndUpdate, 5, 0),
    JS_FN("findOneAndReplace", FindOneAndReplace, 5, 0),
    JS_FN("findOneAndDelete", FindOneAndDelete, 4, 0),
    JS_FN("explainFind", ExplainFind, 5, 0),
    JS_FN("explainCount", ExplainCount, 5, 0),
    JS_FN("explainUpdate", ExplainUpdate, 7, 0),
    JS_FN("explainDelete", ExplainDelete, 5, 0),
    JS_FN("createIndexes", CreateIndexes, 4, 0),
    JS_FN("listIndexes", ListIndexes, 2, 0),
    JS_FN("dropIndex", DropIndex, 3, 0),
    JS_FN("dropIndexes", DropIndexes, 2, 0),
    JS_FN("dropCollection", DropCollection, 2, 0),
    JS_FN("renameCollection", RenameCollection, 4, 0),
    JS_FN("validate", Validate, 2, 0),
    JS_FN("createCollection", CreateCollection, 3, 0),
    JS_FN("listCollections", ListCollections, 1, 0),
    JS_FN("listDatabases", ListDatabases, 0, 0),
    JS_FN("dropDatabase", DropDatabase, 1, 0),
    JS_FN("bsonsize", BsonSize, 1, 0),
    JS_FN("toJson", ToJsonNative, 2, 0),
    JS_FN("fromJson", FromJsonNative, 1, 0),
    JS_FN("load", Load, 1, 0),
    JS_FN("startSession", StartSession, 1, 0),
    JS_FN("sessionStartTransaction", SessionStartTransaction, 2, 0),
    JS_FN("sessionCommit", SessionCall<&Session::CommitTransaction>, 1, 0),
    JS_FN("sessionAbort", SessionCall<&Session::AbortTransaction>, 1, 0),
    JS_FN("sessionEnd", SessionCall<&Session::EndSession>, 1, 0),
    JS_FN("sessionInTransaction", SessionInTransaction, 1, 0),
    JS_FN("quit", Quit, 1, 0),
    JS_FN("sleep", Sleep, 1, 0),
    JS_FN("newObjectId", NewObjectId, 1, 0),
    JS_FN("decimalString", DecimalString, 1, 0),
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
  JS_SetPendingException(cx, error);
  return false;
}

}  // namespace rockdoc::shell

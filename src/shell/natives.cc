// The `__native` functions: the only place where the shell's JavaScript
// reaches the engine. Each takes plain JS values (database and collection
// names, documents as objects, options as objects), calls the public API and
// returns JS values; an error Status becomes a thrown MongoServerError.
// Result shapes (mongosh's, the legacy shell's) are built in shell_api.js.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <thread>

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

bool OptDoc(JSContext* cx, const JS::CallArgs& args, unsigned i, const char* name, Document* out) {
  JS::RootedValue v(cx);
  if (!OptValue(cx, args, i, name, &v)) return false;
  if (v.isNullOrUndefined()) return true;
  return GetState(cx)->converter.ToDocument(cx, v, name, out);
}

// An integer option (skip, limit) parsed as MongoDB parses one
// (BSONElement::parseIntegerElementToLong): any number type whose value is
// an exact int64, so NumberLong(1) and 1 are the same and 1e300 or 1.5 are
// FailedToParse rather than a double cast out of range.
Status ExactInt64Option(const Element& e, int64_t* out) {
  if (!e.IsNumber()) {
    return Status(ErrorCode::kTypeMismatch,
                  "BSON field '" + std::string(e.key()) + "' is the wrong type '" +
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

bool OptInt64(JSContext* cx, const JS::CallArgs& args, unsigned i, const char* name, int64_t* out) {
  JS::RootedValue v(cx);
  if (!OptValue(cx, args, i, name, &v)) return false;
  if (v.isNullOrUndefined()) return true;
  Document holder;
  if (!GetState(cx)->converter.ToSingleFieldDocument(cx, name, v, &holder)) return false;
  Status status = ExactInt64Option(holder.Get(name), out);
  if (!status.ok()) return ThrowStatus(cx, status);
  return true;
}

bool OptBool(JSContext* cx, const JS::CallArgs& args, unsigned i, const char* name, bool* out) {
  JS::RootedValue v(cx);
  if (!OptValue(cx, args, i, name, &v)) return false;
  if (!v.isUndefined()) *out = JS::ToBoolean(v);
  return true;
}

// hint: a key pattern document or an index name.
bool OptHint(JSContext* cx, const JS::CallArgs& args, unsigned i, Document* hint,
             std::string* hint_name) {
  JS::RootedValue v(cx);
  if (!OptValue(cx, args, i, "hint", &v)) return false;
  if (v.isNullOrUndefined()) return true;
  if (v.isString()) return JsStringToUtf8(cx, v.toString(), hint_name);
  return GetState(cx)->converter.ToDocument(cx, v, "hint", hint);
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

bool ParseFindOptions(JSContext* cx, const JS::CallArgs& args, unsigned i, FindOptions* o) {
  return OptDoc(cx, args, i, "sort", &o->sort) &&
         OptDoc(cx, args, i, "projection", &o->projection) &&
         OptInt64(cx, args, i, "skip", &o->skip) && OptInt64(cx, args, i, "limit", &o->limit) &&
         OptHint(cx, args, i, &o->hint, &o->hint_name) &&
         OptInt64(cx, args, i, "maxTimeMS", &o->max_time_ms);
}

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

Collection GetCollection(JSContext* cx, const std::string& db, const std::string& name) {
  return GetState(cx)->client->GetDatabase(db).GetCollection(name);
}

// Arguments 0 and 1 of every collection native: the database and
// collection names.
bool ArgCollection(JSContext* cx, const JS::CallArgs& args, std::optional<Collection>* out) {
  std::string db, name;
  if (!ArgString(cx, args, 0, &db) || !ArgString(cx, args, 1, &name)) return false;
  out->emplace(GetCollection(cx, db, name));
  return true;
}

// The (db, coll, filter, options) arguments of find, findOne and their
// explain.
bool ArgFind(JSContext* cx, const JS::CallArgs& args, std::optional<Collection>* c,
             Document* filter, FindOptions* options) {
  return ArgCollection(cx, args, c) && ArgDoc(cx, args, 2, "filter", filter) &&
         ParseFindOptions(cx, args, 3, options);
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
  if (!ArgCollection(cx, args, &c) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(2), "document", &doc)) {
    return false;
  }
  STATUS_OR_THROW(r, c->InsertOne(doc));
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
  options.ordered = args.length() < 4 || args[3].isUndefined() || JS::ToBoolean(args[3]);
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
         OptInt64(cx, args, 3, "skip", &options->skip) &&
         OptInt64(cx, args, 3, "limit", &options->limit) &&
         OptHint(cx, args, 3, &options->hint, &options->hint_name) &&
         OptInt64(cx, args, 3, "maxTimeMS", &options->max_time_ms);
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
  if (!ArgCollection(cx, args, &c)) return false;
  STATUS_OR_THROW(n, c->EstimatedDocumentCount());
  args.rval().setNumber(static_cast<double>(n));
  return true;
}

NATIVE(Distinct) {
  ARGS;
  std::string db, coll, field;
  Document filter;
  DistinctOptions options;
  if (!ArgString(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll) ||
      !ArgString(cx, args, 2, &field) || !ArgDoc(cx, args, 3, "filter", &filter) ||
      !OptInt64(cx, args, 4, "maxTimeMS", &options.max_time_ms)) {
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

bool ParseUpdateOptions(JSContext* cx, const JS::CallArgs& args, unsigned i, UpdateOptions* o) {
  return OptBool(cx, args, i, "upsert", &o->upsert) &&
         OptDocArray(cx, args, i, "arrayFilters", &o->array_filters) &&
         OptHint(cx, args, i, &o->hint, &o->hint_name) &&
         OptInt64(cx, args, i, "maxTimeMS", &o->max_time_ms);
}

// update(db, coll, filter, update, options, multi)
NATIVE(Update) {
  ARGS;
  std::optional<Collection> c;
  Document filter, update;
  UpdateOptions options;
  if (!ArgCollection(cx, args, &c) ||
      !ArgWriteFilter(cx, args, 2, &filter) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(3), "update", &update) ||
      !ParseUpdateOptions(cx, args, 4, &options)) {
    return false;
  }
    STATUS_OR_THROW(r, ArgBool(args, 5) ? c->UpdateMany(filter, update, options)
                                      : c->UpdateOne(filter, update, options));
  return ReturnUpdateResult(cx, args, r);
}

// replaceOne(db, coll, filter, replacement, upsert)
NATIVE(ReplaceOne) {
  ARGS;
  std::optional<Collection> c;
  Document filter, replacement;
  if (!ArgCollection(cx, args, &c) ||
      !ArgWriteFilter(cx, args, 2, &filter) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(3), "replacement", &replacement)) {
    return false;
  }
  STATUS_OR_THROW(r, c->ReplaceOne(filter, replacement, ArgBool(args, 4)));
  return ReturnUpdateResult(cx, args, r);
}

// remove(db, coll, filter, multi, {maxTimeMS}) -> deletedCount
NATIVE(Delete) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  DeleteOptions options;
  if (!ArgCollection(cx, args, &c) ||
      !ArgWriteFilter(cx, args, 2, &filter) ||
      !OptInt64(cx, args, 4, "maxTimeMS", &options.max_time_ms)) {
    return false;
  }
    STATUS_OR_THROW(r, ArgBool(args, 3) ? c->DeleteMany(filter, options)
                                        : c->DeleteOne(filter, options));
  args.rval().setNumber(static_cast<double>(r.deleted_count));
  return true;
}

bool ParseModifyOptions(JSContext* cx, const JS::CallArgs& args, unsigned i,
                        FindOneAndModifyOptions* o) {
  bool return_new = false;
  if (!OptDoc(cx, args, i, "sort", &o->sort) ||
      !OptDoc(cx, args, i, "projection", &o->projection) ||
      !OptBool(cx, args, i, "upsert", &o->upsert) ||
      !OptBool(cx, args, i, "returnNew", &return_new) ||
      !OptDocArray(cx, args, i, "arrayFilters", &o->array_filters) ||
      !OptInt64(cx, args, i, "maxTimeMS", &o->max_time_ms)) {
    return false;
  }
  o->return_document = return_new ? ReturnDocument::kAfter : ReturnDocument::kBefore;
  return true;
}

// findOneAndUpdate / findOneAndReplace (db, coll, filter, update, options)
bool FindOneAndModify(JSContext* cx, unsigned argc, JS::Value* vp, bool replace) {
  ARGS;
  std::string db, coll;
  Document filter, update;
  FindOneAndModifyOptions options;
  if (!ArgString(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll) ||
      !ArgWriteFilter(cx, args, 2, &filter) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(3), replace ? "replacement" : "update",
                                          &update) ||
      !ParseModifyOptions(cx, args, 4, &options)) {
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
  if (!ArgCollection(cx, args, &c) ||
      !ArgWriteFilter(cx, args, 2, &filter) || !ParseModifyOptions(cx, args, 3, &options)) {
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
  if (!ArgString(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll) ||
      !ArgDoc(cx, args, 2, "filter", &filter) ||
      !GetState(cx)->converter.ToDocument(cx, args.get(3), "update", &update) ||
      !ParseUpdateOptions(cx, args, 5, &options) || !ParseVerbosity(cx, args, 6, &verbosity)) {
    return false;
  }
  STATUS_OR_THROW(doc, GetCollection(cx, db, coll)
                           .ExplainUpdate(filter, update, ArgBool(args, 4), options, verbosity));
  return ReturnDoc(cx, args, doc);
}

// explainDelete(db, coll, filter, multi, verbosity)
NATIVE(ExplainDelete) {
  ARGS;
  std::optional<Collection> c;
  Document filter;
  ExplainVerbosity verbosity;
  if (!ArgCollection(cx, args, &c) ||
      !ArgDoc(cx, args, 2, "filter", &filter) || !ParseVerbosity(cx, args, 4, &verbosity)) {
    return false;
  }
  STATUS_OR_THROW(doc,
                  c->ExplainDelete(filter, ArgBool(args, 3), verbosity));
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
  if (!ArgString(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll)) return false;
  bool existed = false;
  Status status = GetState(cx)->client->GetDatabase(db).DropCollection(coll, &existed);
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setBoolean(existed);
  return true;
}

// renameCollection(db, from, to, dropTarget)
NATIVE(RenameCollection) {
  ARGS;
  std::string db, from, to;
  if (!ArgString(cx, args, 0, &db) || !ArgString(cx, args, 1, &from) ||
      !ArgString(cx, args, 2, &to)) {
    return false;
  }
  Status status =
      GetState(cx)->client->GetDatabase(db).RenameCollection(from, to, ArgBool(args, 3));
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
NATIVE(CollStats) {
  ARGS;
  std::optional<Collection> c;
  if (!ArgCollection(cx, args, &c)) return false;
    STATUS_OR_THROW(cursor, c->Find(Document()));
  double count = 0, size = 0, max_size = 0;
  while (cursor.Next()) {
    double s = static_cast<double>(cursor.document().size());
    count += 1;
    size += s;
    if (s > max_size) max_size = s;
    // A scan of a big collection can take a while: let Ctrl-C stop it.
    if (static_cast<int64_t>(count) % 4096 == 0 && !JS_CheckForInterrupt(cx)) return false;
  }
  if (!cursor.status().ok()) return ThrowStatus(cx, cursor.status());
  STATUS_OR_THROW(indexes, c->ListIndexes());
  std::vector<std::string> names;
  for (const Document& index : indexes) {
    Element name = index.Get("name");
    if (name.type() == BsonType::kString) names.emplace_back(name.String());
  }
  JS::RootedObject obj(cx, JS_NewPlainObject(cx));
  if (!obj || !SetNumber(cx, obj, "count", count) || !SetNumber(cx, obj, "size", size) ||
      !SetNumber(cx, obj, "maxObjSize", max_size)) {
    return false;
  }
  JS::RootedValue index_names(cx);
  if (!StringsToJs(cx, names, &index_names) || !SetProp(cx, obj, "indexNames", index_names)) {
    return false;
  }
  args.rval().setObject(*obj);
  return true;
}

// createCollection(db, name, options): options decoded by the library.
NATIVE(CreateCollection) {
  ARGS;
  std::string db, coll;
  Document options;
  if (!ArgString(cx, args, 0, &db) || !ArgString(cx, args, 1, &coll) ||
      !ArgDoc(cx, args, 2, "createCollection options", &options)) {
    return false;
  }
  Status status = GetState(cx)->client->GetDatabase(db).CreateCollection(coll, options);
  if (!status.ok()) return ThrowStatus(cx, status);
  args.rval().setUndefined();
  return true;
}

NATIVE(ListCollections) {
  ARGS;
  std::string db;
  if (!ArgString(cx, args, 0, &db)) return false;
  STATUS_OR_THROW(names, GetState(cx)->client->GetDatabase(db).ListCollectionNames());
  return ReturnStrings(cx, args, names);
}

NATIVE(ListDatabases) {
  ARGS;
  STATUS_OR_THROW(names, GetState(cx)->client->ListDatabaseNames());
  return ReturnStrings(cx, args, names);
}

NATIVE(DropDatabase) {
  ARGS;
  std::string db;
  if (!ArgString(cx, args, 0, &db)) return false;
  Status status = GetState(cx)->client->DropDatabase(db);
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
               std::chrono::milliseconds(static_cast<int64_t>(
                   std::isnan(ms) ? 0.0 : std::clamp(ms, 0.0, kMaxSleepMs)));
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

const JSFunctionSpec kNatives[] = {JS_FN("write", Write, 1, 0),
                                   JS_FN("writeErr", WriteErr, 1, 0),
                                   JS_FN("config", Config, 0, 0),
                                   JS_FN("insertOne", InsertOne, 3, 0),
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
                                   JS_FN("collStats", CollStats, 2, 0),
                                   JS_FN("createCollection", CreateCollection, 3, 0),
                                   JS_FN("listCollections", ListCollections, 1, 0),
                                   JS_FN("listDatabases", ListDatabases, 0, 0),
                                   JS_FN("dropDatabase", DropDatabase, 1, 0),
                                   JS_FN("bsonsize", BsonSize, 1, 0),
                                   JS_FN("toJson", ToJsonNative, 2, 0),
                                   JS_FN("fromJson", FromJsonNative, 1, 0),
                                   JS_FN("load", Load, 1, 0),
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
  JS::RootedValueArray<3> args(cx);
  args[0].setInt32(status.code_number());
  JSString* name = NewJsString(cx, status.code_name());
  JSString* message = name ? NewJsString(cx, status.message()) : nullptr;
  if (!message) return false;
  args[1].setString(name);
  args[2].setString(message);
  JS::RootedValue error(cx);
  if (!JS_CallFunctionName(cx, global, "__makeServerError", args, &error)) return false;
  JS_SetPendingException(cx, error);
  return false;
}

}  // namespace rockdoc::shell

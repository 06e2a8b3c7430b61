#include "shell/bson_convert.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "rockdoc/types.h"

namespace rockdoc::shell {
namespace {

// Objects built from BSON wrapper values: ordinary objects whose prototype
// is the wrapper class's (ObjectId.prototype, ...). A class of our own is
// needed only because JS_NewObjectWithGivenProto takes one.
const JSClass kWrapperClass = {"Object", 0, nullptr, nullptr, nullptr, nullptr};

// Deeper than any storable document (100) with room for the engine to
// report its own Overflow error; it stops cycles long before the C++ stack.
constexpr int kMaxConvertDepth = 160;

// Non-enumerable, read-only: wrapper state that printing and Object.keys
// should not show.
constexpr unsigned kHiddenAttrs = JSPROP_READONLY | JSPROP_PERMANENT;

bool ThrowType(JSContext* cx, const std::string& message) { return ThrowTypeError(cx, message); }

bool GetProp(JSContext* cx, JS::HandleObject obj, const char* name, JS::MutableHandleValue v) {
  return JS_GetProperty(cx, obj, name, v);
}

bool GetStringProp(JSContext* cx, JS::HandleObject obj, const char* name, std::string* out) {
  JS::RootedValue v(cx);
  if (!GetProp(cx, obj, name, &v)) return false;
  if (!v.isString()) return ThrowType(cx, std::string("malformed BSON wrapper: ") + name);
  return JsStringToUtf8(cx, v.toString(), out);
}

bool GetNumberProp(JSContext* cx, JS::HandleObject obj, const char* name, double* out) {
  JS::RootedValue v(cx);
  if (!GetProp(cx, obj, name, &v)) return false;
  if (!v.isNumber()) return ThrowType(cx, std::string("malformed BSON wrapper: ") + name);
  *out = v.toNumber();
  return true;
}

// A wrapper's integer field, checked to be integral and within [lo, hi] so
// the cast that follows is exact (the constructors in bson_types.js check
// too; this keeps a converted value from ever being undefined behaviour).
bool GetIntegerProp(JSContext* cx, JS::HandleObject obj, const char* name, double lo, double hi,
                    double* out) {
  if (!GetNumberProp(cx, obj, name, out)) return false;
  if (!(*out >= lo && *out <= hi) || *out != std::trunc(*out)) {
    return ThrowType(cx, std::string("malformed BSON wrapper: ") + name + " out of range");
  }
  return true;
}

bool DefineHidden(JSContext* cx, JS::HandleObject obj, const char* name, JS::HandleValue v) {
  return JS_DefineProperty(cx, obj, name, v, kHiddenAttrs);
}

bool DefineHiddenString(JSContext* cx, JS::HandleObject obj, const char* name, std::string_view s) {
  JS::RootedString str(cx, NewJsString(cx, s));
  if (!str) return false;
  JS::RootedValue v(cx, JS::StringValue(str));
  return DefineHidden(cx, obj, name, v);
}

bool DefineHiddenNumber(JSContext* cx, JS::HandleObject obj, const char* name, double d) {
  JS::RootedValue v(cx, JS::NumberValue(d));
  return DefineHidden(cx, obj, name, v);
}

// JS RegExp flags -> BSON regex options (sorted, as MongoDB stores them).
// g and y have no meaning in a stored pattern and are dropped, as mongosh does.
std::string RegExpOptions(JS::RegExpFlags flags) {
  std::string options;
  if (flags.ignoreCase()) options += 'i';
  if (flags.multiline()) options += 'm';
  if (flags.dotAll()) options += 's';
  if (flags.unicode()) options += 'u';
  return options;
}

}  // namespace

bool ThrowTypeError(JSContext* cx, const std::string& message) {
  JS::RootedObject global(cx, JS::CurrentGlobalOrNull(cx));
  JS::RootedValue ctor(cx);
  if (!global || !JS_GetProperty(cx, global, "TypeError", &ctor)) return false;
  JS::RootedValueArray<1> args(cx);
  JSString* text = NewJsString(cx, message);
  if (!text) return false;
  args[0].setString(text);
  JS::RootedObject error(cx);
  if (!JS::Construct(cx, ctor, args, &error)) return false;
  JS::RootedValue error_value(cx, JS::ObjectValue(*error));
  JS_SetPendingException(cx, error_value);
  return false;
}

bool JsStringToUtf8(JSContext* cx, JSString* str, std::string* out) {
  JS::RootedString rooted(cx, str);
  JSLinearString* linear = JS_EnsureLinearString(cx, rooted);
  if (!linear) return false;
  size_t length = JS::GetDeflatedUTF8StringLength(linear);
  out->resize(length);
  if (length > 0) JS::DeflateStringToUTF8Buffer(linear, mozilla::Span<char>(out->data(), length));
  return true;
}

bool JsValueToUtf8(JSContext* cx, JS::HandleValue value, std::string* out) {
  JS::RootedString str(cx, JS::ToString(cx, value));
  if (!str) return false;
  return JsStringToUtf8(cx, str, out);
}

JSString* NewJsString(JSContext* cx, std::string_view utf8) {
  return JS_NewStringCopyUTF8N(cx, JS::UTF8Chars(utf8.data(), utf8.size()));
}

bool BsonConverter::Init(JSContext* cx, JS::HandleObject global) {
  static constexpr const char* kNames[kNumWrappers] = {
      "ObjectId", "Long",   "Decimal128", "Binary",    "Timestamp",
      "MinKey",   "MaxKey", "Code",       "DBPointer", "BSONSymbol"};
  for (int i = 0; i < kNumWrappers; ++i) {
    JS::RootedValue ctor(cx);
    if (!JS_GetProperty(cx, global, kNames[i], &ctor)) return false;
    if (!ctor.isObject()) return ThrowType(cx, std::string("shell prelude lacks ") + kNames[i]);
    JS::RootedObject ctor_obj(cx, &ctor.toObject());
    JS::RootedValue proto(cx);
    if (!JS_GetProperty(cx, ctor_obj, "prototype", &proto)) return false;
    if (!proto.isObject()) return ThrowType(cx, std::string(kNames[i]) + " has no prototype");
    protos_[i] = std::make_unique<JS::PersistentRootedObject>(cx, &proto.toObject());
  }
  JS::RootedValue factory(cx);
  if (!JS_GetProperty(cx, global, "__bsonFactory", &factory)) return false;
  if (!factory.isObject()) return ThrowType(cx, "shell prelude lacks __bsonFactory");
  factory_ = std::make_unique<JS::PersistentRootedObject>(cx, &factory.toObject());
  return true;
}

void BsonConverter::Reset() {
  for (auto& p : protos_) p.reset();
  factory_.reset();
}

JSObject* BsonConverter::NewWrapper(JSContext* cx, Wrapper kind) {
  JS::RootedObject proto(cx, *protos_[kind]);
  return JS_NewObjectWithGivenProto(cx, &kWrapperClass, proto);
}

// ---- JS -> BSON ----

// A JS object's BSON shape. kNoBsonForm carries the class name for the
// error; kWrapper the wrapper's _bsontype.
enum class ObjectKind {
  kDocument,
  kMap,
  kArray,
  kDate,
  kRegExp,
  kBoxed,
  kBytes,
  kWrapper,
  kFunction,
  kNoBsonForm
};

struct BsonConverter::ObjectClass {
  ObjectKind kind = ObjectKind::kDocument;
  std::string name;  // the wrapper's _bsontype, or what has no BSON form
};

namespace {

bool IsKnownWrapperType(std::string_view type) {
  static constexpr std::string_view kTypes[] = {
      "ObjectId", "Long",    "Int32", "Double", "Decimal128", "Binary",    "Timestamp",
      "MinKey",   "MaxKey", "BSONRegExp", "Code", "DBPointer", "BSONSymbol"};
  for (std::string_view t : kTypes) {
    if (type == t) return true;
  }
  return false;
}

}  // namespace

bool BsonConverter::Classify(JSContext* cx, JS::HandleObject obj, ObjectClass* out) {
  *out = ObjectClass();
  // A wrapper's type sits on its prototype (a document that merely has a
  // field named _bsontype is data); MinKey and MaxKey themselves (the legacy
  // shell's `{a: MinKey}`) carry it as an own property of the function.
  bool callable = JS::IsCallable(obj);
  bool own_type = false;
  if (!JS_HasOwnProperty(cx, obj, "_bsontype", &own_type)) return false;
  JS::RootedValue type(cx);
  if (own_type == callable && !JS_GetProperty(cx, obj, "_bsontype", &type)) return false;
  if (type.isString()) {
    if (!JsStringToUtf8(cx, type.toString(), &out->name)) return false;
    if (!IsKnownWrapperType(out->name)) {
      return ThrowType(cx, "Unrecognized or invalid _bsontype: " + out->name);
    }
    out->kind = ObjectKind::kWrapper;
    return true;
  }
  if (callable) {
    *out = {ObjectKind::kFunction, "a function"};
    return true;
  }
  js::ESClass cls;
  if (!JS::GetBuiltinClass(cx, obj, &cls)) return false;
  switch (cls) {
    case js::ESClass::Array:
      *out = {ObjectKind::kArray, "an array"};
      return true;
    case js::ESClass::Date:
      *out = {ObjectKind::kDate, "a Date"};
      return true;
    case js::ESClass::RegExp:
      *out = {ObjectKind::kRegExp, "a RegExp"};
      return true;
    case js::ESClass::Number:
    case js::ESClass::String:
    case js::ESClass::Boolean:
    case js::ESClass::BigInt:
      *out = {ObjectKind::kBoxed, "a boxed primitive"};
      return true;
    case js::ESClass::Map:
      *out = {ObjectKind::kMap, "a Map"};
      return true;
    // js-bson stores these as {} (their data is not in enumerable
    // properties): silently empty, so refused here.
    case js::ESClass::Set: out->name = "a Set"; break;
    case js::ESClass::Promise: out->name = "a Promise"; break;
    case js::ESClass::MapIterator:
    case js::ESClass::SetIterator: out->name = "an iterator"; break;
    case js::ESClass::ArrayBuffer:
    case js::ESClass::SharedArrayBuffer: out->name = "an ArrayBuffer"; break;
    default:
      if (JS::IsWeakMapObject(obj)) out->name = "a WeakMap";
      break;
  }
  if (!out->name.empty()) {
    out->kind = ObjectKind::kNoBsonForm;
    return true;
  }
  size_t length = 0;
  bool shared = false;
  uint8_t* data = nullptr;
  if (JS_GetObjectAsUint8Array(obj, &length, &shared, &data)) {
    out->kind = ObjectKind::kBytes;
    out->name = "a Uint8Array";
  }
  return true;
}

bool BsonConverter::ToDocument(JSContext* cx, JS::HandleValue value, const char* what,
                               Document* out) {
  if (!value.isObject()) {
    return ThrowType(cx, std::string(what) + " must be an object");
  }
  JS::RootedObject obj(cx, &value.toObject());
  ObjectClass cls;
  if (!Classify(cx, obj, &cls)) return false;
  BsonBuilder b;
  switch (cls.kind) {
    case ObjectKind::kDocument:
      if (!AppendFields(cx, b, obj, 0)) return false;
      break;
    case ObjectKind::kMap:
      if (!AppendMapEntries(cx, b, obj, 0)) return false;
      break;
    case ObjectKind::kArray:
      return ThrowType(cx, std::string(what) + " must be an object, not an array");
    default:
      // An ObjectId, a Date or a function where a document belongs (say
      // `deleteOne(id)` for `deleteOne({_id: id})`) has no fields: reading
      // it as {} would match every document.
      return ThrowType(cx, std::string(what) + " must be an object, not " +
                               (cls.kind == ObjectKind::kWrapper
                                    ? (std::strchr("AEIOU", cls.name[0]) ? "an " : "a ") + cls.name
                                    : cls.name));
  }
  *out = std::move(b).Build();
  return true;
}

bool BsonConverter::ToSingleFieldDocument(JSContext* cx, std::string_view key,
                                          JS::HandleValue value, Document* out) {
  BsonBuilder b;
  if (!AppendValue(cx, b, key, value, 0)) return false;
  *out = std::move(b).Build();
  return true;
}

bool BsonConverter::AppendFields(JSContext* cx, BsonBuilder& b, JS::HandleObject obj, int depth) {
  JS::Rooted<JS::IdVector> ids(cx, JS::IdVector(cx));
  if (!JS_Enumerate(cx, obj, &ids)) return false;
  JS::RootedValue key_value(cx);
  JS::RootedValue field(cx);
  std::string key;
  for (size_t i = 0; i < ids.length(); ++i) {
    JS::HandleId id = ids[i];
    if (id.isSymbol()) continue;  // symbols are not data
    if (!JS_IdToValue(cx, id, &key_value)) return false;
    if (!JsValueToUtf8(cx, key_value, &key)) return false;
    if (key.find('\0') != std::string::npos) {
      return ThrowType(cx, "field names cannot contain a NUL character");
    }
    if (!JS_GetPropertyById(cx, obj, id, &field)) return false;
    if (!AppendValue(cx, b, key, field, depth + 1)) return false;
  }
  return true;
}

bool BsonConverter::AppendMapEntries(JSContext* cx, BsonBuilder& b, JS::HandleObject map,
                                     int depth) {
  // js-bson stores a Map as the document of its entries, in order.
  JS::RootedObject factory(cx, *factory_);
  JS::RootedValueArray<1> args(cx);
  args[0].setObject(*map);
  JS::RootedValue entries(cx);
  if (!JS_CallFunctionName(cx, factory, "mapEntries", args, &entries)) return false;
  JS::RootedObject arr(cx, &entries.toObject());
  uint32_t length = 0;
  if (!JS::GetArrayLength(cx, arr, &length)) return false;
  JS::RootedValue entry(cx), key(cx), value(cx);
  std::string name;
  for (uint32_t i = 0; i < length; ++i) {
    if (!JS_GetElement(cx, arr, i, &entry)) return false;
    JS::RootedObject pair(cx, &entry.toObject());
    if (!JS_GetElement(cx, pair, 0, &key) || !JS_GetElement(cx, pair, 1, &value)) return false;
    if (!key.isString()) return ThrowType(cx, "a Map needs string keys to convert to BSON");
    if (!JsStringToUtf8(cx, key.toString(), &name)) return false;
    if (name.find('\0') != std::string::npos) {
      return ThrowType(cx, "field names cannot contain a NUL character");
    }
    if (!AppendValue(cx, b, name, value, depth + 1)) return false;
  }
  return true;
}

bool BsonConverter::AppendValue(JSContext* cx, BsonBuilder& b, std::string_view key,
                                JS::HandleValue v, int depth) {
  if (depth > kMaxConvertDepth) {
    return ThrowType(cx, "object nested too deeply (or cyclic) to convert to BSON");
  }
  if (v.isInt32()) {
    b.AppendInt32(key, v.toInt32());
    return true;
  }
  if (v.isDouble()) {
    double d = v.toDouble();
    // mongosh's rule: integral values in int32 range are int32; -0 stays a
    // double so its sign survives.
    if (std::isfinite(d) && d == std::trunc(d) && d >= std::numeric_limits<int32_t>::min() &&
        d <= std::numeric_limits<int32_t>::max() && !(d == 0 && std::signbit(d))) {
      b.AppendInt32(key, static_cast<int32_t>(d));
    } else {
      b.AppendDouble(key, d);
    }
    return true;
  }
  if (v.isString()) {
    std::string s;
    if (!JsStringToUtf8(cx, v.toString(), &s)) return false;
    b.AppendString(key, s);
    return true;
  }
  if (v.isBoolean()) {
    b.AppendBool(key, v.toBoolean());
    return true;
  }
  if (v.isNullOrUndefined()) {
    b.AppendNull(key);
    return true;
  }
  if (v.isBigInt()) {
    int64_t n = 0;
    if (!JS::BigIntFits(v.toBigInt(), &n)) {
      return ThrowType(cx, "BigInt out of the int64 range cannot be stored");
    }
    b.AppendInt64(key, n);
    return true;
  }
  if (v.isSymbol()) return ThrowType(cx, "cannot convert a Symbol to BSON");
  JS::RootedObject obj(cx, &v.toObject());
  ObjectClass cls;
  if (!Classify(cx, obj, &cls)) return false;
  switch (cls.kind) {
    case ObjectKind::kWrapper:
      return AppendWrapper(cx, b, key, obj, cls.name, depth);
    case ObjectKind::kFunction: {
      // mongosh serializes functions (serializeFunctions: true) as BSON
      // JavaScript code holding their source, as the legacy shell did.
      std::string code;
      if (!JsValueToUtf8(cx, v, &code)) return false;
      b.AppendCode(key, code);
      return true;
    }
    case ObjectKind::kArray: {
      uint32_t length = 0;
      if (!JS::GetArrayLength(cx, obj, &length)) return false;
      b.OpenArray(key);
      JS::RootedValue element(cx);
      for (uint32_t i = 0; i < length; ++i) {
        if (!JS_GetElement(cx, obj, i, &element)) return false;
        if (!AppendValue(cx, b, "", element, depth + 1)) return false;
      }
      b.Close();
      return true;
    }
    case ObjectKind::kDate: {
      double ms = 0;
      if (!js::DateGetMsecSinceEpoch(cx, obj, &ms)) return false;
      // A valid Date holds an integral time within +-8.64e15 ms: the cast is
      // exact.
      if (!std::isfinite(ms)) return ThrowType(cx, "an invalid Date cannot be stored");
      b.AppendDateTime(key, static_cast<int64_t>(ms));
      return true;
    }
    case ObjectKind::kRegExp: {
      JS::RootedString source(cx, JS::GetRegExpSource(cx, obj));
      if (!source) return false;
      std::string pattern;
      if (!JsStringToUtf8(cx, source, &pattern)) return false;
      if (pattern.find('\0') != std::string::npos) {
        return ThrowType(cx, "regular expression cannot contain a NUL character");
      }
      b.AppendRegex(key, pattern, RegExpOptions(JS::GetRegExpFlags(cx, obj)));
      return true;
    }
    case ObjectKind::kBoxed: {
      // new Number(1) and friends store as the primitive they box.
      JS::RootedValue unboxed(cx);
      if (!JS_CallFunctionName(cx, obj, "valueOf", JS::HandleValueArray::empty(), &unboxed)) {
        return false;
      }
      if (unboxed.isObject()) return ThrowType(cx, "cannot convert a boxed value to BSON");
      return AppendValue(cx, b, key, unboxed, depth);
    }
    case ObjectKind::kBytes: {
      size_t length = 0;
      bool shared = false;
      uint8_t* data = nullptr;
      JS_GetObjectAsUint8Array(obj, &length, &shared, &data);
      b.AppendBinary(key, BinarySubtype::kGeneric,
                     std::string_view(reinterpret_cast<const char*>(data), length));
      return true;
    }
    case ObjectKind::kMap:
      b.OpenDocument(key);
      if (!AppendMapEntries(cx, b, obj, depth)) return false;
      b.Close();
      return true;
    case ObjectKind::kNoBsonForm:
      return ThrowType(cx, "cannot convert " + cls.name + " to BSON");
    case ObjectKind::kDocument:
      break;
  }
  b.OpenDocument(key);
  if (!AppendFields(cx, b, obj, depth)) return false;
  b.Close();
  return true;
}

bool BsonConverter::AppendWrapper(JSContext* cx, BsonBuilder& b, std::string_view key,
                                  JS::HandleObject obj, const std::string& bson_type,
                                  int depth) {
  if (bson_type == "ObjectId") {
    std::string hex;
    if (!GetStringProp(cx, obj, "_hex", &hex)) return false;
    auto oid = ObjectId::FromHex(hex);
    if (!oid.ok()) return ThrowType(cx, "invalid ObjectId: " + hex);
    b.AppendObjectId(key, *oid);
  } else if (bson_type == "Long") {
    std::string text;
    if (!GetStringProp(cx, obj, "_str", &text)) return false;
    errno = 0;
    char* end = nullptr;
    long long n = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0') {
      return ThrowType(cx, "invalid Long: " + text);
    }
    b.AppendInt64(key, n);
  } else if (bson_type == "Int32") {
    double d = 0;
    if (!GetIntegerProp(cx, obj, "_num", std::numeric_limits<int32_t>::min(),
                        std::numeric_limits<int32_t>::max(), &d)) {
      return false;
    }
    b.AppendInt32(key, static_cast<int32_t>(d));
  } else if (bson_type == "Double") {
    double d = 0;
    if (!GetNumberProp(cx, obj, "_num", &d)) return false;
    b.AppendDouble(key, d);
  } else if (bson_type == "Decimal128") {
    std::string text;
    if (!GetStringProp(cx, obj, "_str", &text)) return false;
    auto dec = Decimal128::FromString(text);
    if (!dec.ok()) return ThrowType(cx, "invalid Decimal128: " + text);
    b.AppendDecimal128(key, *dec);
  } else if (bson_type == "Binary") {
    double sub = 0;
    if (!GetIntegerProp(cx, obj, "_sub", 0, 255, &sub)) return false;
    JS::RootedValue bytes(cx);
    if (!GetProp(cx, obj, "_bytes", &bytes)) return false;
    size_t length = 0;
    bool shared = false;
    uint8_t* data = nullptr;
    if (!bytes.isObject() ||
        !JS_GetObjectAsUint8Array(&bytes.toObject(), &length, &shared, &data)) {
      return ThrowType(cx, "malformed Binary");
    }
    b.AppendBinary(key, static_cast<BinarySubtype>(static_cast<uint8_t>(sub)),
                   std::string_view(reinterpret_cast<const char*>(data), length));
  } else if (bson_type == "Timestamp") {
    double t = 0, i = 0;
    if (!GetIntegerProp(cx, obj, "_t", 0, 4294967295.0, &t) ||
        !GetIntegerProp(cx, obj, "_i", 0, 4294967295.0, &i)) {
      return false;
    }
    b.AppendTimestamp(key, BsonTimestamp{static_cast<uint32_t>(t), static_cast<uint32_t>(i)});
  } else if (bson_type == "MinKey") {
    b.AppendMinKey(key);
  } else if (bson_type == "MaxKey") {
    b.AppendMaxKey(key);
  } else if (bson_type == "BSONRegExp") {
    std::string pattern, options;
    if (!GetStringProp(cx, obj, "_pattern", &pattern) ||
        !GetStringProp(cx, obj, "_options", &options)) {
      return false;
    }
    if (pattern.find('\0') != std::string::npos || options.find('\0') != std::string::npos) {
      return ThrowType(cx, "regular expression cannot contain a NUL character");
    }
    b.AppendRegex(key, pattern, options);
  } else if (bson_type == "Code") {
    std::string code;
    if (!GetStringProp(cx, obj, "_code", &code)) return false;
    JS::RootedValue scope(cx);
    if (!GetProp(cx, obj, "_scope", &scope)) return false;
    if (scope.isObject()) {
      BsonBuilder sb;
      JS::RootedObject scope_obj(cx, &scope.toObject());
      if (!AppendFields(cx, sb, scope_obj, depth)) return false;
      Document scope_doc = std::move(sb).Build();
      b.AppendCodeWithScope(key, code, scope_doc);
    } else {
      b.AppendCode(key, code);
    }
  } else if (bson_type == "DBPointer") {
    std::string ns, hex;
    if (!GetStringProp(cx, obj, "_ns", &ns)) return false;
    JS::RootedValue id(cx);
    if (!GetProp(cx, obj, "_oid", &id)) return false;
    if (!id.isObject()) return ThrowType(cx, "malformed DBPointer");
    JS::RootedObject id_obj(cx, &id.toObject());
    if (!GetStringProp(cx, id_obj, "_hex", &hex)) return false;
    auto oid = ObjectId::FromHex(hex);
    if (!oid.ok()) return ThrowType(cx, "invalid ObjectId in DBPointer");
    b.AppendDbPointer(key, ns, *oid);
  } else if (bson_type == "BSONSymbol") {
    std::string text;
    if (!GetStringProp(cx, obj, "_str", &text)) return false;
    b.AppendSymbol(key, text);
  } else {
    return ThrowType(cx, "Unrecognized or invalid _bsontype: " + bson_type);
  }
  return true;
}

// ---- BSON -> JS ----

bool BsonConverter::FromDocument(JSContext* cx, DocumentView doc, JS::MutableHandleValue out) {
  JS::RootedObject obj(cx, JS_NewPlainObject(cx));
  if (!obj) return false;
  JS::RootedValue value(cx);
  JS::RootedString name(cx);
  JS::RootedId id(cx);
  for (const Element& e : doc) {
    if (!FromElement(cx, e, &value)) return false;
    name = NewJsString(cx, e.key());
    if (!name || !JS_StringToId(cx, name, &id)) return false;
    // Define, not set: a field named "__proto__" is data, not a prototype.
    if (!JS_DefinePropertyById(cx, obj, id, value, JSPROP_ENUMERATE)) return false;
  }
  out.setObject(*obj);
  return true;
}

bool BsonConverter::FromArray(JSContext* cx, DocumentView array, JS::MutableHandleValue out) {
  JS::RootedObject arr(cx, JS::NewArrayObject(cx, 0));
  if (!arr) return false;
  JS::RootedValue value(cx);
  uint32_t index = 0;
  for (const Element& e : array) {
    if (!FromElement(cx, e, &value)) return false;
    if (!JS_DefineElement(cx, arr, index++, value, JSPROP_ENUMERATE)) return false;
  }
  out.setObject(*arr);
  return true;
}

bool BsonConverter::FromElement(JSContext* cx, const Element& e, JS::MutableHandleValue out) {
  switch (e.type()) {
    case BsonType::kDouble:
      out.set(JS::CanonicalizedDoubleValue(e.Double()));
      return true;
    case BsonType::kString: {
      JSString* s = NewJsString(cx, e.String());
      if (!s) return false;
      out.setString(s);
      return true;
    }
    case BsonType::kDocument:
      return FromDocument(cx, e.Document(), out);
    case BsonType::kArray:
      return FromArray(cx, e.Array(), out);
    case BsonType::kBinary: {
      BinaryView bin = e.Binary();
      JS::RootedObject bytes(cx, JS_NewUint8Array(cx, bin.data.size()));
      if (!bytes) return false;
      size_t length = 0;
      bool shared = false;
      uint8_t* data = nullptr;
      if (!JS_GetObjectAsUint8Array(bytes, &length, &shared, &data)) return false;
      if (length > 0) std::memcpy(data, bin.data.data(), length);
      JS::RootedObject obj(cx, NewWrapper(cx, kBinary));
      if (!obj) return false;
      JS::RootedValue bytes_value(cx, JS::ObjectValue(*bytes));
      if (!DefineHiddenNumber(cx, obj, "_sub", static_cast<uint8_t>(bin.subtype)) ||
          !DefineHidden(cx, obj, "_bytes", bytes_value)) {
        return false;
      }
      out.setObject(*obj);
      return true;
    }
    case BsonType::kUndefined:
      out.setUndefined();
      return true;
    case BsonType::kObjectId: {
      JS::RootedObject obj(cx, NewWrapper(cx, kObjectId));
      if (!obj || !DefineHiddenString(cx, obj, "_hex", e.Oid().ToHex())) return false;
      out.setObject(*obj);
      return true;
    }
    case BsonType::kBool:
      out.setBoolean(e.Bool());
      return true;
    case BsonType::kDateTime: {
      // Dates beyond JavaScript's range (+-8.64e15 ms) cannot be a Date;
      // they show as Invalid Date (the BSON value is not representable).
      JSObject* date = JS::NewDateObject(cx, JS::TimeClip(static_cast<double>(e.DateTime())));
      if (!date) return false;
      out.setObject(*date);
      return true;
    }
    case BsonType::kNull:
      out.setNull();
      return true;
    case BsonType::kRegex: {
      RegexView re = e.Regex();
      JS::RootedValueArray<2> args(cx);
      JSString* pattern = NewJsString(cx, re.pattern);
      if (!pattern) return false;
      args[0].setString(pattern);
      JSString* options = NewJsString(cx, re.options);
      if (!options) return false;
      args[1].setString(options);
      JS::RootedObject factory(cx, *factory_);
      return JS_CallFunctionName(cx, factory, "regex", args, out);
    }
    case BsonType::kDbPointer: {
      DbPointerView ptr = e.DbPointer();
      JS::RootedObject id(cx, NewWrapper(cx, kObjectId));
      if (!id || !DefineHiddenString(cx, id, "_hex", ptr.id.ToHex())) return false;
      JS::RootedObject obj(cx, NewWrapper(cx, kDbPointer));
      JS::RootedValue id_value(cx, JS::ObjectValue(*id));
      if (!obj || !DefineHiddenString(cx, obj, "_ns", ptr.ns) ||
          !DefineHidden(cx, obj, "_oid", id_value)) {
        return false;
      }
      out.setObject(*obj);
      return true;
    }
    case BsonType::kCode:
    case BsonType::kCodeWithScope: {
      JS::RootedObject obj(cx, NewWrapper(cx, kCode));
      if (!obj) return false;
      bool with_scope = e.type() == BsonType::kCodeWithScope;
      if (!DefineHiddenString(cx, obj, "_code", with_scope ? e.CodeWithScopeCode() : e.String())) {
        return false;
      }
      JS::RootedValue scope(cx, JS::NullValue());
      if (with_scope && !FromDocument(cx, e.CodeWithScopeScope(), &scope)) return false;
      if (!DefineHidden(cx, obj, "_scope", scope)) return false;
      out.setObject(*obj);
      return true;
    }
    case BsonType::kSymbol: {
      JS::RootedObject obj(cx, NewWrapper(cx, kSymbol));
      if (!obj || !DefineHiddenString(cx, obj, "_str", e.String())) return false;
      out.setObject(*obj);
      return true;
    }
    case BsonType::kInt32:
      out.setInt32(e.Int32());
      return true;
    case BsonType::kTimestamp: {
      BsonTimestamp ts = e.Timestamp();
      JS::RootedObject obj(cx, NewWrapper(cx, kTimestamp));
      if (!obj || !DefineHiddenNumber(cx, obj, "_t", ts.t) ||
          !DefineHiddenNumber(cx, obj, "_i", ts.i)) {
        return false;
      }
      out.setObject(*obj);
      return true;
    }
    case BsonType::kInt64: {
      JS::RootedObject obj(cx, NewWrapper(cx, kLong));
      if (!obj || !DefineHiddenString(cx, obj, "_str", std::to_string(e.Int64()))) return false;
      out.setObject(*obj);
      return true;
    }
    case BsonType::kDecimal128: {
      JS::RootedObject obj(cx, NewWrapper(cx, kDecimal128));
      if (!obj || !DefineHiddenString(cx, obj, "_str", e.Decimal().ToString())) return false;
      out.setObject(*obj);
      return true;
    }
    case BsonType::kMinKey:
    case BsonType::kMaxKey: {
      JS::RootedObject obj(cx, NewWrapper(cx, e.type() == BsonType::kMinKey ? kMinKey : kMaxKey));
      if (!obj) return false;
      out.setObject(*obj);
      return true;
    }
    case BsonType::kEod:
      out.setUndefined();
      return true;
  }
  out.setUndefined();
  return true;
}

}  // namespace rockdoc::shell

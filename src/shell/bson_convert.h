// shell/bson_convert.h: JavaScript values <-> BSON, without loss.
//
// JS -> BSON follows mongosh (js-bson with mongosh's serializeFunctions:
// true): a plain number is an int32 when it is integral and in range (and
// not -0), else a double; `undefined` becomes null; a function becomes BSON
// JavaScript code (its source text), so `{$where: function () {...}}` reaches
// the query parser as the string form does; a BigInt is an int64; Date,
// RegExp, Uint8Array and arrays map to their BSON types; a Map is a document
// of its entries; objects whose prototype carries a `_bsontype` (the wrapper
// classes defined in bson_types.js: ObjectId, Long, Int32, Double,
// Decimal128, Binary, Timestamp, MinKey, MaxKey, BSONRegExp, Code,
// DBPointer, BSONSymbol) map to the type they wrap. Field order is the
// object's property order.
//
// Nothing is dropped silently: a value with no BSON form (a Symbol, a Set,
// a WeakMap, a Promise, an ArrayBuffer, an iterator, an unknown _bsontype)
// anywhere in the value is a TypeError before anything runs, and a document
// argument (filter, update, options) must be a plain object or a Map: an
// ObjectId, a Date or a function given where a document belongs is refused,
// not read as `{}`.
//
// BSON -> JS gives plain objects and arrays (field order kept), numbers for
// int32 and double, and wrapper objects for every type JavaScript has no
// exact counterpart for (int64 -> Long, decimal128 -> Decimal128, ...), so a
// document read and written back is the same BSON, except that doubles with
// integral values come back as int32 (mongosh's rule) and the deprecated
// undefined becomes null.
//
// Threading: one converter per JSContext, used on that context's thread.
// Ownership: the converter holds persistent roots; Reset() must run before
// the context is destroyed.
#ifndef ROCKDOC_SHELL_BSON_CONVERT_H_
#define ROCKDOC_SHELL_BSON_CONVERT_H_

#include <array>
#include <memory>
#include <string>

#include "rockdoc/document.h"
#include "shell/js_headers.h"

namespace rockdoc::shell {

// Throws a JS TypeError with `message`; always returns false (JSAPI style:
// `return ThrowTypeError(cx, "...");`).
bool ThrowTypeError(JSContext* cx, const std::string& message);
// Copies a JS string out as UTF-8 (embedded NULs kept; lone surrogates
// become U+FFFD). False with a pending exception on failure.
bool JsStringToUtf8(JSContext* cx, JSString* str, std::string* out);
// ToString(value) as UTF-8.
bool JsValueToUtf8(JSContext* cx, JS::HandleValue value, std::string* out);
// A JS string from UTF-8 bytes; nullptr with a pending exception on failure.
JSString* NewJsString(JSContext* cx, std::string_view utf8);

class BsonConverter {
 public:
  BsonConverter() = default;
  BsonConverter(const BsonConverter&) = delete;
  BsonConverter& operator=(const BsonConverter&) = delete;

  // Looks up the wrapper classes' prototypes on the global object (they are
  // defined by bson_types.js, which must have run). False with a pending
  // exception when one is missing.
  bool Init(JSContext* cx, JS::HandleObject global);
  // Drops the persistent roots. Idempotent.
  void Reset();

  // `value` must be an object that is not an array. `what` names it in the
  // TypeError thrown otherwise ("filter", "document", ...). On failure a JS
  // exception is pending and false is returned.
  bool ToDocument(JSContext* cx, JS::HandleValue value, const char* what, Document* out);
  // Any value, as the single field named `key` of a one-field document
  // (callers take the element back with Get(key)).
  bool ToSingleFieldDocument(JSContext* cx, std::string_view key, JS::HandleValue value,
                             Document* out);

  bool FromDocument(JSContext* cx, DocumentView doc, JS::MutableHandleValue out);
  bool FromArray(JSContext* cx, DocumentView array, JS::MutableHandleValue out);
  bool FromElement(JSContext* cx, const Element& element, JS::MutableHandleValue out);

 private:
  enum Wrapper {
    kObjectId,
    kLong,
    kDecimal128,
    kBinary,
    kTimestamp,
    kMinKey,
    kMaxKey,
    kCode,
    kDbPointer,
    kSymbol,
    kNumWrappers
  };
  bool AppendValue(JSContext* cx, BsonBuilder& b, std::string_view key, JS::HandleValue v,
                   int depth);
  bool AppendFields(JSContext* cx, BsonBuilder& b, JS::HandleObject obj, int depth);
  bool AppendMapEntries(JSContext* cx, BsonBuilder& b, JS::HandleObject map, int depth);
  // What a JS object is in BSON terms (see the .cc).
  struct ObjectClass;
  bool Classify(JSContext* cx, JS::HandleObject obj, ObjectClass* out);
  bool AppendWrapper(JSContext* cx, BsonBuilder& b, std::string_view key, JS::HandleObject obj,
                     const std::string& bson_type, int depth);
  JSObject* NewWrapper(JSContext* cx, Wrapper kind);

  std::array<std::unique_ptr<JS::PersistentRootedObject>, kNumWrappers> protos_;
  // bson_types.js's __bsonFactory.regex(pattern, options): a RegExp when
  // JavaScript can express it, else a BSONRegExp.
  std::unique_ptr<JS::PersistentRootedObject> factory_;
};

}  // namespace rockdoc::shell

#endif  // ROCKDOC_SHELL_BSON_CONVERT_H_

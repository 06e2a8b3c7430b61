// rockdoc/document.h: BSON documents: read-only views, owned documents,
// an append-only builder, validation of untrusted bytes, and MongoDB's
// comparison order.
//
// Ownership: `Document` owns its bytes. `DocumentView` and `Element` are
// non-owning views (a pointer into bytes someone else owns) and must not
// outlive those bytes. Views assume *validated* bytes: everything rockdoc
// hands out is validated; bytes from outside go through `Document::FromBytes`
// or `ValidateBson` first.
//
// Thread safety: views and documents are immutable and may be read from many
// threads at once. A BsonBuilder is single-threaded.
//
// Example:
//   rockdoc::BsonBuilder b;
//   b.AppendString("name", "Ada").OpenArray("tags");
//   b.AppendString("", "math").AppendString("", "code").Close();
//   rockdoc::Document doc = std::move(b).Build();
//   rockdoc::Element tag = doc.view().GetPath("tags.1");  // "code"
#ifndef ROCKDOC_DOCUMENT_H_
#define ROCKDOC_DOCUMENT_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/export.h"
#include "rockdoc/status.h"
#include "rockdoc/types.h"

namespace rockdoc {

class DocumentView;

// Binary data: subtype and payload (the payload of the old subtype 2 is
// the inner bytes, without the repeated length).
struct BinaryView {
  BinarySubtype subtype = BinarySubtype::kGeneric;
  std::string_view data;
};
struct RegexView {
  std::string_view pattern;
  std::string_view options;
};
struct DbPointerView {
  std::string_view ns;
  ObjectId id;
};

// Element: one (type, key, value) entry of a document, viewed in place.
// A default-constructed Element is "missing" (type kEod, ok() false): that
// is what lookups return when nothing is found.
//
// Every accessor is safe on any Element, in every build: a missing element
// or one of another type never crashes or reads outside the document.
//   * Is*() say whether the element holds that type (false when missing).
//   * As*() return the value when the element holds exactly that type and
//     std::nullopt otherwise (missing included). Use these when the type is
//     not known.
//   * The unchecked accessors (Double(), String(), ...) return the value
//     when the type matches and otherwise a neutral value: 0, false, "", the
//     empty document, a zero ObjectId / Decimal128 / timestamp, an empty
//     BinaryView / RegexView / DbPointerView. They are for code that has
//     already checked type(); a neutral value cannot be told from a real one.
//
// Example:
//   Document doc = FromJson(R"({"n": 5})").value();
//   doc.Get("n").AsInt32();          // 5
//   doc.Get("n").AsString();         // nullopt: an int32, not a string
//   doc.Get("missing").String();     // "" (missing: the neutral value)
class ROCKDOC_EXPORT Element {
 public:
  Element() = default;
  // `data` points at the type byte of a validated element.
  explicit Element(const uint8_t* data);

  bool ok() const { return data_ != nullptr && type() != BsonType::kEod; }
  explicit operator bool() const { return ok(); }

  // kEod when missing.
  BsonType type() const { return data_ ? static_cast<BsonType>(data_[0]) : BsonType::kEod; }
  // "" when missing.
  std::string_view key() const;
  // The whole element: type byte, key, NUL, value. Null when
  // default-constructed.
  const uint8_t* raw() const { return data_; }
  // Bytes of the whole element; 0 when missing (1 for the terminator an
  // end() iterator points at).
  size_t size() const;
  // The value bytes alone; when missing, a non-null pointer and size 0.
  const uint8_t* value_data() const;
  size_t value_size() const;

  // Unchecked typed accessors: the value when type() is the named type,
  // else the neutral value described above.
  double Double() const;
  std::string_view String() const;  // kString, kCode, kSymbol
  DocumentView Document() const;    // kDocument and kArray
  DocumentView Array() const;       // kArray (and kDocument)
  BinaryView Binary() const;
  ObjectId Oid() const;
  bool Bool() const;
  int64_t DateTime() const;  // milliseconds since the epoch
  RegexView Regex() const;
  DbPointerView DbPointer() const;
  std::string_view CodeWithScopeCode() const;
  DocumentView CodeWithScopeScope() const;
  int32_t Int32() const;
  BsonTimestamp Timestamp() const;
  int64_t Int64() const;
  Decimal128 Decimal() const;

  // Type tests (false when missing).
  bool IsDouble() const { return type() == BsonType::kDouble; }
  bool IsString() const { return type() == BsonType::kString; }
  bool IsDocument() const { return type() == BsonType::kDocument; }
  bool IsArray() const { return type() == BsonType::kArray; }
  bool IsBinary() const { return type() == BsonType::kBinary; }
  bool IsObjectId() const { return type() == BsonType::kObjectId; }
  bool IsBool() const { return type() == BsonType::kBool; }
  bool IsDateTime() const { return type() == BsonType::kDateTime; }
  bool IsNull() const { return type() == BsonType::kNull; }
  bool IsRegex() const { return type() == BsonType::kRegex; }
  bool IsInt32() const { return type() == BsonType::kInt32; }
  bool IsTimestamp() const { return type() == BsonType::kTimestamp; }
  bool IsInt64() const { return type() == BsonType::kInt64; }
  bool IsDecimal() const { return type() == BsonType::kDecimal128; }
  bool IsNumber() const;  // int32, int64, double, decimal128
  bool IsContainer() const { return type() == BsonType::kDocument || type() == BsonType::kArray; }

  // Checked accessors: the value when the element holds exactly that type,
  // std::nullopt otherwise (a missing element included).
  std::optional<double> AsDouble() const;
  std::optional<std::string_view> AsString() const;  // kString only
  std::optional<DocumentView> AsDocument() const;    // kDocument only
  std::optional<DocumentView> AsArray() const;       // kArray only
  std::optional<BinaryView> AsBinary() const;
  std::optional<ObjectId> AsObjectId() const;
  std::optional<bool> AsBool() const;
  std::optional<int64_t> AsDateTime() const;
  std::optional<RegexView> AsRegex() const;
  std::optional<int32_t> AsInt32() const;
  std::optional<BsonTimestamp> AsTimestamp() const;
  std::optional<int64_t> AsInt64() const;
  std::optional<Decimal128> AsDecimal() const;
  // Any number with an exact int64 value (int32, int64, an integral double
  // or decimal in range); std::nullopt otherwise.
  std::optional<int64_t> AsExactInt64() const;

  // Any numeric type as a double (decimal128 rounded). 0 for non-numbers
  // and when missing.
  double NumberAsDouble() const;
  // True, and the value, when the element is a number with an exact int64
  // value (int32, int64, an integral double or decimal in range). False,
  // and *out untouched, otherwise.
  bool ExactInt64(int64_t* out) const;

 private:
  const uint8_t* ValueData() const;  // unchecked: requires ok()
  const uint8_t* data_ = nullptr;
};

// A validated BSON document (or array, whose keys are "0", "1", ...) viewed
// in place.
class ROCKDOC_EXPORT DocumentView {
 public:
  // The empty document.
  DocumentView();
  // `data` points at the int32 length of validated BSON.
  explicit DocumentView(const uint8_t* data) : data_(data) {}

  const uint8_t* data() const { return data_; }
  size_t size() const;  // total bytes, the length prefix included
  std::string_view bytes() const {
    return std::string_view(reinterpret_cast<const char*>(data_), size());
  }
  bool empty() const { return size() <= 5; }

  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Element;
    using difference_type = std::ptrdiff_t;
    using pointer = const Element*;
    using reference = const Element&;

    Iterator() = default;
    explicit Iterator(const uint8_t* at) : cur_(at) {}
    // At end(): the terminator, a missing Element (ok() false).
    Element operator*() const { return Element(cur_); }
    // Advancing end() leaves it at end().
    Iterator& operator++();
    Iterator operator++(int) {
      Iterator t = *this;
      ++*this;
      return t;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.cur_ == b.cur_; }
    friend bool operator!=(const Iterator& a, const Iterator& b) { return a.cur_ != b.cur_; }

   private:
    const uint8_t* cur_ = nullptr;
  };
  Iterator begin() const;
  Iterator end() const;

  // The first field named `field`, or a missing Element.
  // Lookups never fail: a missing step anywhere gives a missing Element.
  Element Get(std::string_view field) const;
  // Follows a dotted path ("a.b.0.c"): each part names a field of a
  // document, or a position of an array when the part is a decimal index.
  // Does not fan out over arrays (that is the matcher's job).
  Element GetPath(std::string_view dotted_path) const;
  bool Has(std::string_view field) const { return Get(field).ok(); }
  size_t CountFields() const;

 private:
  const uint8_t* data_;
};

// An owned, validated BSON document.
class ROCKDOC_EXPORT Document {
 public:
  // The empty document {}.
  Document();

  // Copies `bytes` after validating them (structure, UTF-8, size at most
  // kMaxBsonObjectSize, nesting at most kMaxNestingDepth). Errors: InvalidBSON,
  // BSONObjectTooLarge (10334), Overflow (nesting).
  static StatusOr<Document> FromBytes(std::string_view bytes);
  // Takes bytes known to be valid (for example from a BsonBuilder or our
  // own storage). Not for untrusted input.
  static Document AdoptValidated(std::string bytes);

  DocumentView view() const {
    return DocumentView(reinterpret_cast<const uint8_t*>(bytes_.data()));
  }
  operator DocumentView() const { return view(); }  // NOLINT: a view of it
  const std::string& bytes() const { return bytes_; }
  // Takes the bytes out (AdoptValidated's inverse), leaving the document
  // as a moved-from one: only assignment and destruction remain valid.
  std::string ReleaseBytes() && { return std::move(bytes_); }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return view().empty(); }

  DocumentView::Iterator begin() const { return view().begin(); }
  DocumentView::Iterator end() const { return view().end(); }
  Element Get(std::string_view field) const { return view().Get(field); }
  Element GetPath(std::string_view path) const { return view().GetPath(path); }

  // Byte equality.
  friend bool operator==(const Document& a, const Document& b) { return a.bytes_ == b.bytes_; }
  friend bool operator!=(const Document& a, const Document& b) { return a.bytes_ != b.bytes_; }

 private:
  explicit Document(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string bytes_;
};

// Value: one owned BSON value (no key), for results such as an inserted
// `_id`. Cheap to move; copies its bytes.
class ROCKDOC_EXPORT Value {
 public:
  // A missing value (element().ok() is false).
  Value();
  // Copies the value of `element` (its key is dropped).
  static Value FromElement(const Element& element);
  // A view of the value, with key "". Valid while this Value lives. A
  // missing Value (default, moved from, or made from a missing element)
  // gives a missing Element, whose accessors are safe as Element says.
  Element element() const;
  BsonType type() const { return element().type(); }
  bool ok() const { return element().ok(); }

 private:
  std::string bytes_;  // a document of one element with an empty key
};

// Validation of untrusted bytes.
struct BsonValidationOptions {
  size_t max_size = kMaxBsonObjectSize;
  int max_depth = kMaxNestingDepth;
  bool check_utf8 = true;
};
// OK when `bytes` is exactly one well-formed BSON document: lengths agree
// and stay within the buffer, every type byte is known, strings are
// NUL-terminated valid UTF-8 with correct lengths, booleans are 0 or 1,
// nesting is within the limit. Never reads outside `bytes`.
// Errors: InvalidBSON (22) with the byte offset and reason;
// BSONObjectTooLarge (10334) when the length exceeds max_size; Overflow (15)
// when nesting exceeds max_depth.
ROCKDOC_EXPORT Status ValidateBson(std::string_view bytes,
                                   const BsonValidationOptions& options = {});

// An append-only builder of BSON. Open documents and arrays nest; while an
// array is the innermost open container, the key passed to Append* is
// ignored and the next array index ("0", "1", ...) is written instead.
// Keys, and a regex's pattern and options, are C strings in BSON and must not
// contain NUL: a NUL would cut the name short and corrupt the document, so the
// builder checks this in every build and aborts rather than write one (a
// programmer error, like any broken precondition). Input from users is
// checked before it gets here: JSON parsing, the shell's conversion and the
// update parser (paths, $rename's target) refuse NUL in names with BadValue;
// other code that makes names from untrusted strings must check first.
class ROCKDOC_EXPORT BsonBuilder {
 public:
  BsonBuilder();

  BsonBuilder& AppendDouble(std::string_view key, double value);
  BsonBuilder& AppendString(std::string_view key, std::string_view value);
  // Embeds a copy of `doc` as an object / an array.
  BsonBuilder& AppendDocument(std::string_view key, DocumentView doc);
  BsonBuilder& AppendArray(std::string_view key, DocumentView array);
  BsonBuilder& AppendBinary(std::string_view key, BinarySubtype subtype, std::string_view data);
  BsonBuilder& AppendUndefined(std::string_view key);
  BsonBuilder& AppendObjectId(std::string_view key, const ObjectId& oid);
  BsonBuilder& AppendBool(std::string_view key, bool value);
  BsonBuilder& AppendDateTime(std::string_view key, int64_t millis_since_epoch);
  BsonBuilder& AppendNull(std::string_view key);
  BsonBuilder& AppendRegex(std::string_view key, std::string_view pattern,
                           std::string_view options);
  BsonBuilder& AppendDbPointer(std::string_view key, std::string_view ns, const ObjectId& oid);
  BsonBuilder& AppendCode(std::string_view key, std::string_view code);
  BsonBuilder& AppendSymbol(std::string_view key, std::string_view symbol);
  BsonBuilder& AppendCodeWithScope(std::string_view key, std::string_view code,
                                   DocumentView scope);
  BsonBuilder& AppendInt32(std::string_view key, int32_t value);
  BsonBuilder& AppendTimestamp(std::string_view key, BsonTimestamp value);
  BsonBuilder& AppendInt64(std::string_view key, int64_t value);
  BsonBuilder& AppendDecimal128(std::string_view key, Decimal128 value);
  BsonBuilder& AppendMinKey(std::string_view key);
  BsonBuilder& AppendMaxKey(std::string_view key);

  // Copies an element's value under its own key / under `key`. A missing
  // element appends nothing.
  BsonBuilder& AppendElement(const Element& element);
  BsonBuilder& AppendElementAs(std::string_view key, const Element& element);

  // Starts an embedded document / array; Close() ends the innermost one.
  BsonBuilder& OpenDocument(std::string_view key);
  BsonBuilder& OpenArray(std::string_view key);
  BsonBuilder& Close();

  // Number of open embedded containers (0 at top level).
  int depth() const { return static_cast<int>(stack_.size()) - 1; }
  // Bytes written so far (the finished document is this plus closing bytes).
  size_t size() const { return buf_.size(); }
  bool in_array() const { return stack_.back().is_array; }

  // Finishes the document. Precondition: depth() == 0. The result is not
  // checked against kMaxBsonObjectSize: callers that store it do that.
  Document Build() &&;
  // Starts over with an empty document, keeping the buffer's capacity.
  void Reset();

 private:
  struct Frame {
    size_t start;
    bool is_array;
    uint32_t next_index;
  };
  void AppendHeader(BsonType type, std::string_view key);
  std::string buf_;
  std::vector<Frame> stack_;
};

// MongoDB's comparison of element values (keys ignored): by canonical type
// rank first, then within the type; numbers by exact value across int32,
// int64, double and decimal128 (NaN equal to NaN and below every other
// number). Returns <0, 0 or >0.
ROCKDOC_EXPORT int CompareValues(const Element& a, const Element& b);
// Whole documents, field by field: type rank, then field name, then value;
// a shorter document that is a prefix of a longer one sorts first.
ROCKDOC_EXPORT int CompareDocuments(DocumentView a, DocumentView b);
// Elements as BSONElement::woCompare with field names considered.
ROCKDOC_EXPORT int CompareElements(const Element& a, const Element& b, bool consider_field_names);

}  // namespace rockdoc

#endif  // ROCKDOC_DOCUMENT_H_

// query/update/mutable_document.h: the document being updated, as a tree that
// is expanded only along the paths an update touches.
//
// An update rewrites a few paths of a document that may be megabytes long.
// Decoding the whole document into an object tree and re-encoding it would
// cost time proportional to the document for every update, so a MutableNode
// is either
//   - a view of an unchanged value (an Element into bytes someone else owns:
//     the stored document, the update specification, or the Arena), copied
//     out as raw bytes when the result is written, or
//   - an expanded document or array whose children are MutableNodes.
// Only the nodes on the path to a change are expanded; everything else is
// copied with one memcpy per unchanged sibling.
//
// Ownership: nodes never own bytes. Keys and values point into the input
// document, the parsed update (owned by UpdateDriver) or an Arena, all of
// which outlive the tree during UpdateDriver::Apply. Single-threaded.
#ifndef ROCKDOC_QUERY_UPDATE_MUTABLE_DOCUMENT_H_
#define ROCKDOC_QUERY_UPDATE_MUTABLE_DOCUMENT_H_

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/document.h"

namespace rockdoc::update_internal {

// Owns the bytes of values an update computes ($inc results, new arrays, ...).
// Each value is held as a one-element document so that an Element can view it.
class Arena {
 public:
  // Builds a value with `append(builder, key)`, which must append exactly one
  // element under `key`, and returns a view of it valid for the Arena's life.
  Element Make(const std::function<void(BsonBuilder&, std::string_view)>& append);
  Element Int32(int32_t v);
  Element Int64(int64_t v);
  Element Double(double v);
  Element Decimal(Decimal128 v);
  Element Null();
  Element DateTime(int64_t millis);
  Element Timestamp(BsonTimestamp ts);
  // A copy of the value bytes `value` of type `type` (used to materialise
  // expanded containers).
  Element Raw(BsonType type, std::string_view value);

 private:
  // A deque never moves its elements, so views into held strings stay valid.
  std::deque<std::string> held_;
};

// One value of the document being rewritten; see the file comment.
class MutableNode {
 public:
  MutableNode() = default;
  // A view of an existing value. `value`'s own key is ignored.
  MutableNode(std::string_view key, Element value) : key_(key), value_(value) {}
  // An expanded, empty document or array.
  static MutableNode NewContainer(std::string_view key, BsonType type);

  std::string_view key() const { return key_; }
  void set_key(std::string_view key) { key_ = key; }
  BsonType type() const { return expanded_ ? container_type_ : value_.type(); }
  bool IsContainer() const {
    BsonType t = type();
    return t == BsonType::kDocument || t == BsonType::kArray;
  }
  bool expanded() const { return expanded_; }

  // The value as an Element. For an expanded node the value is serialised
  // into `arena` first (rare: only when an operator needs to compare a
  // container that another part of the same update has rewritten).
  Element AsElement(Arena* arena) const;
  // The unexpanded value. Precondition: !expanded().
  Element value() const { return value_; }

  // Replaces the value, dropping any expansion.
  void SetValue(Element value);
  // Turns an unexpanded document or array into children views. No-op when
  // already expanded. Precondition: IsContainer().
  void Expand();

  // Children of an expanded container (for arrays, position order).
  std::vector<MutableNode>& children() { return children_; }
  const std::vector<MutableNode>& children() const { return children_; }
  // The child of an expanded document named `key`, or nullptr.
  MutableNode* FindField(std::string_view key);

  // Appends the value bytes (without type byte or key) to `out`.
  void WriteValue(std::string* out) const;
  // Appends a whole element: type byte, `key`, value.
  void WriteElement(std::string_view key, std::string* out) const;
  // Serialised size of the value in bytes (walks expanded children).
  size_t ValueSize() const;

 private:
  std::string_view key_;
  Element value_;
  bool expanded_ = false;
  BsonType container_type_ = BsonType::kEod;
  std::vector<MutableNode> children_;
};

// True when both elements have the same type and identical value bytes:
// MongoDB's "binary equal values", its test for a no-op.
bool BinaryEqualValues(const Element& a, const Element& b);

// An element as MongoDB's BSONElement::toString prints it inside error
// messages: `a: 1`, `a: "x"`, `a: { b: 1 }`, `a: [ 1, 2 ]`. Long values are
// cut short.
std::string FormatElement(std::string_view key, const Element& value);
// The value alone, in the same notation.
std::string FormatValue(const Element& value);
// "{_id: 1}" or "{}" when the document has no _id: how MongoDB names the
// document in update error messages.
std::string FormatIdForMessage(DocumentView doc);

// An array position in an update path: decimal digits only, leading zeros
// allowed ("0", "17", "01" is 1), as MongoDB's update system reads them; no
// sign, space, exponent or other character ("+1", "1e0", " 1" are names).
// (Query paths are stricter: there "01" is never a position.)
bool ParseArrayIndex(std::string_view part, size_t* index);

}  // namespace rockdoc::update_internal

#endif  // ROCKDOC_QUERY_UPDATE_MUTABLE_DOCUMENT_H_

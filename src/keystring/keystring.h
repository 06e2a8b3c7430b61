// keystring/keystring.h: the order-preserving byte encoding of BSON values.
//
// RocksDB compares keys with memcmp. A keystring turns a list of BSON values
// (the fields of an index key, or a document's _id) into bytes whose memcmp
// order is MongoDB's value order (rockdoc::CompareValues) field by field, so
// that documents clustered by keystring(_id) and index entries
//   index prefix + keystring(key values...) + keystring(_id)
// sort as MongoDB sorts them. The format is persistent and specified byte by
// byte in src/keystring/README.md: do not change it without a format version.
//
// Properties (all tested in tests/keystring_test.cc):
//   * Order: memcmp(Encode(a), Encode(b)) has the sign of CompareValues(a, b).
//   * Equal values give equal bytes: int32 1, int64 1, double 1.0 and decimal
//     1.00 encode identically; so do all NaNs, and -0.0 and 0.
//   * Prefix-free: no value's encoding is a proper prefix of another's, so a
//     concatenation of fields compares field by field, and
//     PrefixSuccessor(Encode(v)) is an exclusive upper bound for keys whose
//     first field is v.
//   * Descending fields have every byte of their encoding inverted.
//   * Exact: the bytes plus the "type bits" (side information: which numeric
//     type, decimal exponent, -0.0, string vs symbol, ...) decode to
//     byte-identical BSON values.
//
// Thread safety: a Builder is single-threaded; the free functions are pure
// and thread-safe.
//
// Example (an index on {a: 1, b: -1} with the _id as a suffix):
//   keystring::Builder key(/*descending_bits=*/0b10);
//   key.Append(doc.Get("a"));
//   key.Append(doc.Get("b"));
//   key.Append(doc.Get("_id"));
//   std::string rocks_key = index_prefix + key.bytes();
//   std::string rocks_value = key.type_bits();  // kept for covered queries
#ifndef ROCKDOC_KEYSTRING_KEYSTRING_H_
#define ROCKDOC_KEYSTRING_KEYSTRING_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::keystring {

// The largest number of fields whose direction `descending_bits` can set;
// fields past it are ascending.
inline constexpr int kMaxDirectionFields = 32;

// Builder: encodes the fields of one key, in order.
class Builder {
 public:
  // Bit i of `descending_bits` set means field i (0-based, counting every
  // Append*) is descending: its bytes are inverted so that it sorts in
  // reverse.
  explicit Builder(uint32_t descending_bits = 0);

  // Encodes the value of `value` (its key is ignored) as the next field.
  // A missing element (type kEod) is encoded as null, which is how MongoDB
  // indexes a missing field. `value` must come from validated BSON (nesting
  // at most kMaxNestingDepth), as every rockdoc view does.
  void Append(const Element& value);
  // The values MinKey and MaxKey as the next field: conveniences for bounds.
  // In a descending field they are inverted like any other value.
  void AppendMinKey();
  void AppendMaxKey();

  // The key so far.
  const std::string& bytes() const { return bytes_; }
  // Side information needed to decode the key's values exactly. Empty when
  // every value is of its default flavour (string, int32, +0, ...), which is
  // the common case: store it beside the key and pass it back to Decode.
  const std::string& type_bits() const { return type_bits_; }
  // Number of fields appended so far.
  int num_fields() const { return num_fields_; }

  // Starts a new key with the same directions, keeping buffer capacity.
  void Reset();

 private:
  void WriteBits(uint64_t value, int count);
  friend class Encoder;

  uint32_t descending_bits_;
  int num_fields_ = 0;
  std::string bytes_;
  std::string type_bits_;  // always without trailing zero bytes
  uint64_t type_bit_count_ = 0;
};

// The ascending encoding of one value (type bits discarded): the form used
// for a document's _id in its clustered key.
std::string EncodeValue(const Element& value);

// Rebuilds the values of the first field_names.size() fields of `key` into
// `out`, one element per field, named field_names[i] (through out->Append*).
// `type_bits` and `descending_bits` must be those the key was built with;
// type bits of further fields (such as an _id suffix) may follow. The values
// are byte-identical to the encoded ones: numeric type, a decimal's exact
// representation (1.0 vs 1.00), -0.0 and NaN payloads, string vs symbol.
// On success, *consumed (if not null) is the number of key bytes the fields
// took, so the caller can find what follows (e.g. the _id suffix).
// Errors: DataCorruptionDetected (296) when the bytes or type bits are not a
// valid encoding (every number must be in canonical form); never reads
// outside the inputs. Structure is checked, UTF-8 of strings is not (keys come
// from validated documents; RocksDB checksums guard against bit rot). On error `out` may hold a
// partial document (its depth is restored, so it can still be built).
//
// Example:
//   BsonBuilder b;
//   Status s = keystring::Decode(entry_key, entry_value, 0b10, {"a", "b"}, &b);
Status Decode(std::string_view key, std::string_view type_bits, uint32_t descending_bits,
              const std::vector<std::string_view>& field_names, BsonBuilder* out,
              size_t* consumed = nullptr);

// The smallest byte string greater than every string having `prefix` as a
// prefix: `prefix` with trailing 0xFF bytes dropped and its last byte
// incremented; "" when there is none (prefix empty or all 0xFF), meaning
// "no upper bound". Turns a prefix or an exclusive bound into a seek target.
std::string PrefixSuccessor(std::string_view prefix);

}  // namespace rockdoc::keystring

#endif  // ROCKDOC_KEYSTRING_KEYSTRING_H_

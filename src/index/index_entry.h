// index/index_entry.h: how an index key is stored in RocksDB, and how the
// planner's index scans read entries back. The layout is an on-disk format,
// specified in storage/README.md ("Index entries"):
//
//   non-unique: key   = id(BE32) keystring(values) keystring(_id)
//               value = varint32 len(keystring(_id)), type bits of values
//   unique:     key   = id(BE32) keystring(values)
//               value = varint32 len(keystring(_id)), keystring(_id),
//                       type bits of values
//
// keystring(values) is encoded with the index's directions; keystring(_id)
// is always ascending (keystring::EncodeValue), so the document's record
// key is RecordKey(collection_id, id_key). A unique index keeps one entry
// per key value, so uniqueness is a locked point read of the key.
//
// Thread safety: pure functions.
//
// Example (an index scan):
//   for (it->Seek(IndexPrefix(index)); it->Valid() && it->key().starts_with(prefix); ...) {
//     IndexEntryView entry;
//     ROCKDOC_RETURN_IF_ERROR(ParseIndexEntry(index, it->key(), it->value(), &entry));
//     std::string record = RecordKey(collection_id, entry.id_key);
//   }
#ifndef ROCKDOC_INDEX_INDEX_ENTRY_H_
#define ROCKDOC_INDEX_INDEX_ENTRY_H_


#include <string>
#include <string_view>

#include "index/index_descriptor.h"
#include "index/key_generator.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// The 4-byte big-endian prefix shared by every entry of the index; the
// index's entries are exactly the keys in [IndexPrefix(i), IndexPrefix(id+1)).
std::string IndexPrefix(const IndexDescriptor& index);

// An entry, viewed in place (views into the RocksDB key and value).
struct IndexEntryView {
  std::string_view values_key;  // keystring of the key values (index directions)
  std::string_view id_key;      // keystring of the document's _id (ascending)
  std::string_view type_bits;   // type bits of the key values
};

// The RocksDB key / value of the entry of `key` for the document whose
// _id has keystring `id_key`.
std::string IndexEntryKey(const IndexDescriptor& index, std::string_view values_key,
                          std::string_view id_key);
std::string IndexEntryValue(const IndexDescriptor& index, std::string_view id_key,
                            std::string_view type_bits);

// Splits a stored entry of `index` into its parts. DataCorruptionDetected
// (296) when the key does not carry the index's prefix or the value is
// malformed. O(1): no decoding.
Status ParseIndexEntry(const IndexDescriptor& index, std::string_view key, std::string_view value,
                       IndexEntryView* out);

// Appends the entry's key values to the open document of `out`, one field
// per key field named as in the key pattern ("a", "b.c"), with their exact
// original types (int32 stays int32, 1.0 stays a double): what a covered
// query returns. DataCorruptionDetected on a malformed key.
//
// Example: on {a: 1, "b.c": -1}, an entry for (NumberLong(5), "x") appends
//   {a: NumberLong(5), "b.c": "x"}.
Status DecodeIndexKey(const IndexDescriptor& index, const IndexEntryView& entry, BsonBuilder* out);

// The key values of `key` as a document ({a: 1, b: "x"}), as duplicate key
// errors show them.
Document KeyValuesDocument(const IndexDescriptor& index, const IndexKey& key);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_INDEX_INDEX_ENTRY_H_

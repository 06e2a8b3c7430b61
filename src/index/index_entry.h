// index/index_entry.h: an index entry's parts (IndexEntryView) and their
// decoding into key values. The entry's byte layout is in storage/format.h,
// with every other key layout of the database:
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

// An entry, viewed in place (views into the RocksDB key and value).
struct IndexEntryView {
  std::string_view values_key;  // keystring of the key values (index directions)
  std::string_view id_key;      // keystring of the document's _id (ascending)
  std::string_view type_bits;   // type bits of the key values
};

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

#include "index/index_entry.h"

#include "index/access_method.h"
#include "keystring/keystring.h"

namespace rockdoc::internal {

namespace {

Status Corrupt(const IndexDescriptor& index, const char* what) {
  return Status(ErrorCode::kDataCorruptionDetected,
                "index " + index.name() + ": malformed entry (" + what + ")");
}

}  // namespace

Status DecodeIndexKey(const IndexDescriptor& index, const IndexEntryView& entry, BsonBuilder* out) {
  size_t consumed = 0;
  ROCKDOC_RETURN_IF_ERROR(keystring::Decode(entry.values_key, entry.type_bits,
                                            index.descending_bits(), index.field_name_views(), out,
                                            &consumed));
  if (consumed != entry.values_key.size()) return Corrupt(index, "trailing key bytes");
  return Status::OK();
}

Document KeyValuesDocument(const IndexDescriptor& index, const IndexKey& key) {
  BsonBuilder b;
  IndexEntryView view{key.bytes, {}, key.type_bits};
  if (!index.access_method().DecodeKey(index, view, &b).ok()) return Document();
  return std::move(b).Build();
}

}  // namespace rockdoc::internal

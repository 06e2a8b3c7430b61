// storage/format.cc: the key layouts of storage/format.h.
#include "storage/format.h"

#include "common/endian.h"

namespace rockdoc::internal {

namespace {

constexpr size_t kPrefixBytes = 4;

void AppendVarint32(std::string* out, uint32_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads a varint32 from the front of *in, advancing it. False when malformed.
bool ReadVarint32(std::string_view* in, uint32_t* v) {
  uint32_t result = 0;
  for (int shift = 0; shift <= 28 && !in->empty(); shift += 7) {
    uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    if (shift == 28 && (byte & 0xF0) != 0) return false;
    result |= static_cast<uint32_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

Status Corrupt(const IndexDescriptor& index, const char* what) {
  return Status(ErrorCode::kDataCorruptionDetected,
                "index " + index.name() + ": malformed entry (" + what + ")");
}

}  // namespace

std::string PrefixKey(uint32_t id) {
  std::string k;
  AppendBE32(&k, id);
  return k;
}

std::string RecordKey(uint32_t collection_id, std::string_view id_key) {
  std::string k;
  k.reserve(4 + id_key.size());
  AppendBE32(&k, collection_id);
  k.append(id_key);
  return k;
}

std::string IndexPrefix(const IndexDescriptor& index) {
  std::string p;
  AppendBE32(&p, index.id());
  return p;
}

void AppendIndexEntryKey(const IndexDescriptor& index, std::string_view values_key,
                         std::string_view id_key, std::string* out) {
  AppendBE32(out, index.id());
  out->append(values_key);
  if (index.entry_format() != IndexEntryFormat::kUnique) out->append(id_key);
}

void AppendIndexEntryValue(const IndexDescriptor& index, std::string_view id_key,
                           std::string_view type_bits, std::string* out) {
  AppendVarint32(out, static_cast<uint32_t>(id_key.size()));
  if (index.entry_format() == IndexEntryFormat::kUnique) out->append(id_key);
  out->append(type_bits);
}

std::string IndexEntryKey(const IndexDescriptor& index, std::string_view values_key,
                          std::string_view id_key) {
  std::string k;
  k.reserve(kPrefixBytes + values_key.size() + id_key.size());
  AppendIndexEntryKey(index, values_key, id_key, &k);
  return k;
}

std::string IndexEntryValue(const IndexDescriptor& index, std::string_view id_key,
                            std::string_view type_bits) {
  std::string v;
  AppendIndexEntryValue(index, id_key, type_bits, &v);
  return v;
}

Status ParseIndexEntry(const IndexDescriptor& index, std::string_view key, std::string_view value,
                       IndexEntryView* out) {
  std::string_view k = key;
  std::string_view v = value;
  if (k.size() < kPrefixBytes ||
      LoadBE32(reinterpret_cast<const uint8_t*>(k.data())) != index.id()) {
    return Corrupt(index, "prefix");
  }
  k.remove_prefix(kPrefixBytes);
  uint32_t id_len = 0;
  if (!ReadVarint32(&v, &id_len) || id_len == 0) return Corrupt(index, "_id length");
  if (index.entry_format() == IndexEntryFormat::kUnique) {
    if (v.size() < id_len) return Corrupt(index, "_id");
    out->values_key = k;
    out->id_key = v.substr(0, id_len);
    out->type_bits = v.substr(id_len);
  } else {
    if (k.size() < id_len) return Corrupt(index, "_id");
    out->values_key = k.substr(0, k.size() - id_len);
    out->id_key = k.substr(k.size() - id_len);
    out->type_bits = v;
  }
  return Status::OK();
}

namespace {
// prefix db \0 name: a catalog entry's key.
std::string NamespaceKey(char prefix, std::string_view db, std::string_view name) {
  std::string k(1, prefix);
  k.append(db);
  k.push_back('\0');
  k.append(name);
  return k;
}
}  // namespace

std::string CatalogMetaKey(std::string_view db, std::string_view name) {
  return NamespaceKey(kCatalogMetaPrefix, db, name);
}

std::string QueryStatsKey(std::string_view db) {
  std::string key(1, kQueryStatsPrefix);
  key.append(db);
  return key;
}

std::string CatalogViewKey(std::string_view db, std::string_view name) {
  return NamespaceKey(kCatalogViewPrefix, db, name);
}

std::string CappedOrderKey(uint32_t order_id, uint64_t seq) {
  std::string k;
  AppendBE32(&k, order_id);
  k.push_back('\x01');
  AppendBE64(&k, seq);
  return k;
}

std::string CappedOrderEnd(uint32_t order_id) {
  std::string k;
  AppendBE32(&k, order_id);
  k.push_back('\x02');
  return k;
}

std::string CappedOrderValue(int64_t size, std::string_view record_key) {
  std::string v;
  AppendLE<int64_t>(&v, size);
  v.append(record_key);
  return v;
}

std::string CappedSeqKey(uint32_t order_id, std::string_view id_key) {
  std::string k;
  AppendBE32(&k, order_id);
  k.push_back('\x02');
  k.append(id_key);
  return k;
}

Status ParseCappedOrderEntry(std::string_view key, std::string_view value, uint64_t* seq,
                             int64_t* size, std::string_view* record_key) {
  if (key.size() != 13 || key[4] != '\x01' || value.size() < 8) {
    return Status(ErrorCode::kDataCorruptionDetected, "a capped order entry is malformed");
  }
  *seq = LoadBE64(reinterpret_cast<const uint8_t*>(key.data()) + 5);
  *size = LoadLE<int64_t>(reinterpret_cast<const uint8_t*>(value.data()));
  *record_key = value.substr(8);
  return Status::OK();
}

StatusOr<uint64_t> ParseCappedSeq(std::string_view value) {
  if (value.size() != 8) {
    return Status(ErrorCode::kDataCorruptionDetected, "a capped sequence entry is malformed");
  }
  return LoadBE64(reinterpret_cast<const uint8_t*>(value.data()));
}

std::string CountKey(uint32_t collection_id) {
  std::string k(1, kCatalogCountPrefix);
  AppendBE32(&k, collection_id);
  return k;
}

}  // namespace rockdoc::internal

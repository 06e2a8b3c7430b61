// ValidateIndexes (declared in store/write_ops.h): the index half of
// Collection::Validate. Two passes, so that a missing entry and an extra
// entry are both found and named:
//   1. documents → entries: every key of every document has its entry;
//   2. entries → documents: every entry's document exists and has its key.
// With both, the entries are exactly the keys the documents generate.
#include <algorithm>

#include "index/access_method.h"
#include "index/index_entry.h"
#include "index/key_generator.h"
#include "rockdoc/json.h"
#include "storage/format.h"
#include "store/write_ops.h"

namespace rockdoc::internal {

namespace {

constexpr size_t kMaxReportedErrors = 100;

class IndexValidator {
 public:
  IndexValidator(const CollectionMeta& meta, const ReadView& view, ValidateResult* result)
      : meta_(meta), view_(view), result_(result) {}

  Status Run() {
    std::shared_ptr<const IndexSet> indexes = meta_.indexes();
    if (indexes->empty()) return Status::OK();
    ROCKDOC_RETURN_IF_ERROR(CheckDocuments(*indexes));
    for (const auto& index : *indexes) ROCKDOC_RETURN_IF_ERROR(CheckEntries(*index));
    return Status::OK();
  }

 private:
  void Error(std::string message) {
    result_->valid = false;
    if (result_->errors.size() < kMaxReportedErrors) result_->errors.push_back(std::move(message));
  }

  static std::string KeyText(const IndexDescriptor& index, const IndexKey& key) {
    return ToJson(KeyValuesDocument(index, key), JsonFormat::kShell);
  }

  static bool Contains(const std::vector<IndexKey>& keys, std::string_view bytes,
                       std::string_view type_bits) {
    auto it = std::lower_bound(keys.begin(), keys.end(), bytes,
                               [](const IndexKey& k, std::string_view b) { return k.bytes < b; });
    return it != keys.end() && it->bytes == bytes && it->type_bits == type_bits;
  }

  // Pass 1: each document's keys are in each index.
  Status CheckDocuments(const IndexSet& indexes) {
    std::string lower = PrefixKey(meta_.id), upper = PrefixKey(meta_.id + 1);
    std::unique_ptr<KvIterator> it = view_.NewIterator(lower, upper, /*sequential=*/true);
    std::vector<IndexKey> keys;
    MultikeyPaths paths;
    PinnedValue value;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view bytes = it->value();
      if (!ValidateBson(bytes).ok()) continue;  // the record check reports it
      DocumentView doc(reinterpret_cast<const uint8_t*>(bytes.data()));
      std::string_view id_key = it->key().substr(lower.size());
      for (const auto& index : indexes) {
        Status s = index->access_method().GetKeys(*index, doc, &keys, &paths);
        if (!s.ok()) {
          Error("index " + index->name() +
                ": a document's keys cannot be generated: " + s.ToString());
          continue;
        }
        if (index->NeedsMultikeyUpdate(paths)) {
          Error("index " + index->name() +
                " is not marked multikey for an array that a document holds");
        }
        for (const IndexKey& key : keys) {
          std::string entry_key = IndexEntryKey(*index, key.bytes, id_key);
          bool found = false;
          ROCKDOC_RETURN_IF_ERROR(view_.Get(entry_key, &value, &found));
          if (!found) {
            Error("index " + index->name() + " lacks the key " + KeyText(*index, key) +
                  " of a document");
            continue;
          }
          IndexEntryView entry;
          if (!ParseIndexEntry(*index, entry_key, value.view(), &entry).ok()) continue;  // pass 2
          if (entry.id_key != id_key) {
            Error("index " + index->name() + ": the entry for " + KeyText(*index, key) +
                  " names another document");
          } else if (entry.type_bits != key.type_bits) {
            Error("index " + index->name() + ": the entry for " + KeyText(*index, key) +
                  " has the wrong value types");
          }
        }
      }
    }
    return it->status();
  }

  // Pass 2: each entry of `index` is a key of an existing document.
  Status CheckEntries(const IndexDescriptor& index) {
    std::string lower = IndexPrefix(index), upper = PrefixKey(index.id() + 1);
    std::unique_ptr<KvIterator> it = view_.NewIterator(lower, upper, /*sequential=*/true);
    std::vector<IndexKey> keys;
    PinnedValue value;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++result_->index_entries;
      IndexEntryView entry;
      Status s = ParseIndexEntry(index, it->key(), it->value(), &entry);
      if (!s.ok()) {
        Error(std::string(s.message()));
        continue;
      }
      BsonBuilder decoded;
      s = index.access_method().DecodeKey(index, entry, &decoded);
      if (!s.ok()) {
        Error("index " + index.name() + ": an entry does not decode: " + s.ToString());
        continue;
      }
      std::string key_text = ToJson(std::move(decoded).Build(), JsonFormat::kShell);
      bool found = false;
      ROCKDOC_RETURN_IF_ERROR(view_.Get(RecordKey(meta_.id, entry.id_key), &value, &found));
      if (!found) {
        Error("index " + index.name() + ": the entry " + key_text +
              " points to a document that does not exist");
        continue;
      }
      if (!ValidateBson(value.view()).ok()) continue;  // the record check reports it
      DocumentView doc(reinterpret_cast<const uint8_t*>(value.view().data()));
      if (!index.access_method().GetKeys(index, doc, &keys, nullptr).ok() ||
          !Contains(keys, entry.values_key, entry.type_bits)) {
        Error("index " + index.name() + ": the entry " + key_text +
              " is not a key of the document it points to");
      }
    }
    return it->status();
  }

  const CollectionMeta& meta_;
  const ReadView& view_;
  ValidateResult* result_;
};

}  // namespace

Status ValidateIndexes(const CollectionMeta& meta, const ReadView& view, ValidateResult* result) {
  return IndexValidator(meta, view, result).Run();
}

}  // namespace rockdoc::internal

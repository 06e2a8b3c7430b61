// store/index_build.cc: index builds and drops (store/index_build.h).
#include "store/index_build.h"

#include <algorithm>
#include <optional>

#include "common/deadline.h"
#include "common/endian.h"
#include "index/access_method.h"
#include "index/key_generator.h"
#include "storage/format.h"
#include "storage/kv.h"
#include "storage/spill.h"
#include "store/write_ops.h"

namespace rockdoc::internal {

namespace {

// The scan reports progress every this many documents.
constexpr int64_t kProgressDocuments = 1000;

// An index's entries in ascending key order: sorted in memory up to a
// budget, in sorted runs on disk past it (storage/spill.h), merged when
// drained. Equal keys come out adjacent.
class EntrySorter {
 public:
  EntrySorter(const Engine& engine, size_t memory_bytes)
      : engine_(engine), memory_bytes_(memory_bytes) {}

  // Adds one entry, written in place into the sort's buffer: `append_key`
  // and `append_value` each append their bytes to the string they are given.
  template <typename AppendKey, typename AppendValue>
  Status Emplace(const AppendKey& append_key, const AppendValue& append_value) {
    const size_t offset = arena_.size();
    append_key(&arena_);
    const size_t key_end = arena_.size();
    append_value(&arena_);
    entries_.push_back({offset, static_cast<uint32_t>(key_end - offset),
                        static_cast<uint32_t>(arena_.size() - key_end)});
    if (arena_.size() + entries_.size() * sizeof(Entry) >= memory_bytes_) return Spill();
    return Status::OK();
  }

  // Calls `fn` on every entry in ascending key order.
  Status Drain(const std::function<Status(std::string_view key, std::string_view value)>& fn) {
    SortBuffer();
    if (runs_.empty()) {
      for (const Entry& e : entries_) ROCKDOC_RETURN_IF_ERROR(fn(KeyOf(e), ValueOf(e)));
      return Status::OK();
    }
    if (!entries_.empty()) ROCKDOC_RETURN_IF_ERROR(Spill());
    // A k-way merge of the runs' heads (a handful: a linear pick is enough).
    std::vector<std::optional<std::string_view>> heads(runs_.size());
    for (size_t r = 0; r < runs_.size(); ++r) {
      ROCKDOC_ASSIGN_OR_RETURN(heads[r], runs_[r]->Next());
    }
    while (true) {
      int least = -1;
      for (size_t r = 0; r < heads.size(); ++r) {
        if (heads[r] && (least < 0 || RecordKey(*heads[r]) < RecordKey(*heads[least]))) {
          least = static_cast<int>(r);
        }
      }
      if (least < 0) return Status::OK();
      const std::string_view record = *heads[least];
      const std::string_view key = RecordKey(record);
      ROCKDOC_RETURN_IF_ERROR(fn(key, record.substr(4 + key.size())));
      ROCKDOC_ASSIGN_OR_RETURN(heads[least], runs_[least]->Next());
    }
  }

 private:
  struct Entry {
    size_t offset;
    uint32_t key_size, value_size;
  };
  std::string_view KeyOf(const Entry& e) const {
    return std::string_view(arena_).substr(e.offset, e.key_size);
  }
  std::string_view ValueOf(const Entry& e) const {
    return std::string_view(arena_).substr(e.offset + e.key_size, e.value_size);
  }
  // A run's record: the key's length (4 bytes, little-endian), the key, the value.
  static std::string_view RecordKey(std::string_view record) {
    return record.substr(4, LoadLE<uint32_t>(reinterpret_cast<const uint8_t*>(record.data())));
  }

  void SortBuffer() {
    std::sort(entries_.begin(), entries_.end(),
              [this](const Entry& a, const Entry& b) { return KeyOf(a) < KeyOf(b); });
  }

  Status Spill() {
    SortBuffer();
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillWriter> run, NewSpillRun(engine_));
    std::string record;
    for (const Entry& e : entries_) {
      record.clear();
      AppendLE<uint32_t>(&record, e.key_size);
      record.append(KeyOf(e));
      record.append(ValueOf(e));
      ROCKDOC_RETURN_IF_ERROR(run->Add(record));
    }
    ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillReader> reader, run->Finish());
    runs_.push_back(std::move(reader));
    entries_.clear();
    arena_.clear();
    return Status::OK();
  }

  const Engine& engine_;
  const size_t memory_bytes_;
  std::string arena_;
  std::vector<Entry> entries_;
  std::vector<std::unique_ptr<SpillReader>> runs_;
};

}  // namespace

Status RemoveIndexEntries(const Engine& engine, const IndexDescriptor& index) {
  return engine.DeleteRange(PrefixKey(index.id()), PrefixKey(index.id() + 1));
}

// Writes the entries of every document of the collection into `index`
// (not yet published: no one else reads or writes its prefix) as a sorted
// bulk load: the entries generated in one scan, sorted, and ingested as
// table files in one step, the way MongoDB's index builds feed a bulk
// builder from an external sort. On error nothing has been written.
Status BuildIndexEntries(const Engine& engine, const CollectionMeta& meta, IndexDescriptor* index,
                         const std::function<void(int64_t)>& progress) {
  // The collection's lock is held exclusively: no writer can change it, so
  // the latest state is as stable as a snapshot.
  std::string lower = PrefixKey(meta.id), upper = PrefixKey(meta.id + 1);
  // A one-pass scan of the whole collection would only evict hot blocks.
  std::unique_ptr<KvIterator> it =
      ReadView(&engine, nullptr)
          .NewIterator(lower, upper, /*sequential=*/true, /*fill_cache=*/false);

  MultikeyPaths all_paths(index->num_fields());
  MultikeyPaths paths;
  std::vector<IndexKey> keys;
  EntrySorter sorter(engine, static_cast<size_t>(engine.options().max_index_build_memory_bytes));
  int64_t indexed = 0;
  // The deadline of the command that builds (createIndexes' maxTimeMS):
  // past it the build fails and nothing is written.
  DeadlineChecker deadline(CurrentDeadline());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ROCKDOC_RETURN_IF_ERROR(deadline.Tick());
    DocumentView doc(reinterpret_cast<const uint8_t*>(it->value().data()));
    std::string_view id_key = it->key().substr(lower.size());
    ROCKDOC_RETURN_IF_ERROR(index->access_method().GetKeys(*index, doc, &keys, &paths));
    for (size_t f = 0; f < paths.size(); ++f) all_paths[f].insert(paths[f].begin(), paths[f].end());
    for (const IndexKey& key : keys) {
      ROCKDOC_RETURN_IF_ERROR(sorter.Emplace(
          [&](std::string* out) { AppendIndexEntryKey(*index, key.bytes, id_key, out); },
          [&](std::string* out) { AppendIndexEntryValue(*index, id_key, key.type_bits, out); }));
    }
    if (++indexed % kProgressDocuments == 0 && progress) progress(indexed);
  }
  ROCKDOC_RETURN_IF_ERROR(it->status().WithContext("index build scan"));
  if (progress) progress(indexed);

  // Entries of a unique index carry no record id in their key: two equal
  // keys in the sorted stream are two documents with the same values.
  const bool unique = OneEntryPerValue(*index);
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<BulkLoad> load, NewBulkLoad(engine));
  std::string previous;
  bool first = true;
  ROCKDOC_RETURN_IF_ERROR(sorter.Drain([&](std::string_view key, std::string_view value) -> Status {
    if (unique && !first && key == previous) {
      IndexEntryView entry;
      ROCKDOC_RETURN_IF_ERROR(ParseIndexEntry(*index, key, value, &entry));
      return DuplicateKeyError(
          meta, index->name(), index->key_pattern(),
          KeyValuesDocument(*index, IndexKey{std::string(entry.values_key),
                                             std::string(entry.type_bits)}),
          index->collator() != nullptr ? index->collator()->spec().view() : DocumentView());
    }
    if (unique) previous.assign(key);
    first = false;
    return load->Add(key, value);
  }));
  ROCKDOC_RETURN_IF_ERROR(load->Finish());
  index->SetMultikeyPaths(std::move(all_paths));
  return Status::OK();
}

// Publishes `next` as the collection's index set and persists it; restores
// the previous set when the catalog write fails. Holds meta.mu exclusively.
Status PublishIndexSet(const Engine& engine, CollectionMeta* meta,
                       std::shared_ptr<const IndexSet> next,
                       const std::vector<std::string>& events) {
  std::shared_ptr<const IndexSet> previous = meta->indexes();
  meta->set_indexes(std::move(next));
  Status s = CatalogOf(engine).PersistCollection(*meta, events);
  if (!s.ok()) meta->set_indexes(std::move(previous));
  return s;
}

std::string IndexEvent(const CollectionMeta& meta, std::string_view operation,
                       const std::vector<const IndexDescriptor*>& indexes) {
  BsonBuilder description;
  description.OpenArray("indexes");
  for (const IndexDescriptor* index : indexes) description.AppendDocument("", index->ToSpec());
  description.Close();
  const Document description_doc = std::move(description).Build();
  return CatalogEvent({.operation = operation,
                       .db = meta.db,
                       .coll = meta.name,
                       .uuid = meta.uuid,
                       .description = description_doc});
}

// Drops the listed indexes of the guarded collection.
Status DropIndexesLocked(const Engine& engine, CollectionMeta* meta,
                         const std::vector<std::string>& names) {
  std::shared_ptr<const IndexSet> before = meta->indexes();
  std::shared_ptr<const IndexSet> after = before;
  std::vector<std::string> events;
  for (const std::string& name : names) {
    after = after->Without(name);
    const IndexDescriptor* index = before->FindByName(name);
    if (index != nullptr && engine.change_log() != nullptr) {
      events.push_back(IndexEvent(*meta, "dropIndexes", {index}));
    }
  }
  ROCKDOC_RETURN_IF_ERROR(PublishIndexSet(engine, meta, after, events));
  // The catalog no longer names them and ids are never reused: the entries
  // are unreachable, and the range deletions reclaim their space.
  for (const std::string& name : names) {
    const IndexDescriptor* index = before->FindByName(name);
    if (index != nullptr) ROCKDOC_RETURN_IF_ERROR(RemoveIndexEntries(engine, *index));
  }
  return Status::OK();
}

}  // namespace rockdoc::internal

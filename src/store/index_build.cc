// store/index_build.cc: index builds and drops (store/index_build.h).
#include "store/index_build.h"

#include "index/access_method.h"
#include "index/key_generator.h"
#include "storage/format.h"
#include "storage/kv.h"
#include "store/write_ops.h"

namespace rockdoc::internal {

namespace {
constexpr int64_t kBuildBatchDocuments = 1000;
constexpr size_t kBuildBatchBytes = size_t{8} << 20;
}  // namespace

Status RemoveIndexEntries(const Engine& engine, const IndexDescriptor& index) {
  return engine.DeleteRange(PrefixKey(index.id()), PrefixKey(index.id() + 1));
}

// Writes the entries of every document of the collection into `index`
// (not yet published: no one else reads or writes its prefix), in batches.
// On error the caller removes whatever was written.
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
  std::unique_ptr<KvTransaction> txn = engine.Begin();
  int64_t indexed = 0;
  int64_t batch_docs = 0;
  size_t batch_bytes = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    DocumentView doc(reinterpret_cast<const uint8_t*>(it->value().data()));
    std::string_view id_key = it->key().substr(lower.size());
    ROCKDOC_RETURN_IF_ERROR(index->access_method().GetKeys(*index, doc, &keys, &paths));
    for (size_t f = 0; f < paths.size(); ++f) all_paths[f].insert(paths[f].begin(), paths[f].end());
    for (const IndexKey& key : keys) {
      ROCKDOC_RETURN_IF_ERROR(
          AddEntryToUnpublishedIndex(txn.get(), meta, *index, key, id_key, &batch_bytes));
    }
    ++indexed;
    if (++batch_docs >= kBuildBatchDocuments || batch_bytes >= kBuildBatchBytes) {
      ROCKDOC_RETURN_IF_ERROR(txn->Commit());
      txn = engine.Begin({}, std::move(txn));
      batch_docs = 0;
      batch_bytes = 0;
      if (progress) progress(indexed);
    }
  }
  ROCKDOC_RETURN_IF_ERROR(it->status().WithContext("index build scan"));
  ROCKDOC_RETURN_IF_ERROR(txn->Commit());
  if (progress) progress(indexed);
  index->SetMultikeyPaths(std::move(all_paths));
  return Status::OK();
}

// Publishes `next` as the collection's index set and persists it; restores
// the previous set when the catalog write fails. Holds meta.mu exclusively.
Status PublishIndexSet(const Engine& engine, CollectionMeta* meta,
                       std::shared_ptr<const IndexSet> next) {
  std::shared_ptr<const IndexSet> previous = meta->indexes();
  meta->set_indexes(std::move(next));
  Status s = CatalogOf(engine).PersistCollection(*meta);
  if (!s.ok()) meta->set_indexes(std::move(previous));
  return s;
}

// Drops the listed indexes of the guarded collection.
Status DropIndexesLocked(const Engine& engine, CollectionMeta* meta,
                         const std::vector<std::string>& names) {
  std::shared_ptr<const IndexSet> before = meta->indexes();
  std::shared_ptr<const IndexSet> after = before;
  for (const std::string& name : names) after = after->Without(name);
  ROCKDOC_RETURN_IF_ERROR(PublishIndexSet(engine, meta, after));
  // The catalog no longer names them and ids are never reused: the entries
  // are unreachable, and the range deletions reclaim their space.
  for (const std::string& name : names) {
    const IndexDescriptor* index = before->FindByName(name);
    if (index != nullptr) ROCKDOC_RETURN_IF_ERROR(RemoveIndexEntries(engine, *index));
  }
  return Status::OK();
}

}  // namespace rockdoc::internal

// store/index_build.h: building and dropping a collection's secondary
// indexes. A build scans the collection (its lock held exclusively, so the
// latest state is as stable as a snapshot), sorts the entries and ingests
// them as table files into a prefix nobody else can reach until it is
// published.
//
// Thread safety: the caller holds the collection's CollectionLock
// exclusively.
#ifndef ROCKDOC_STORE_INDEX_BUILD_H_
#define ROCKDOC_STORE_INDEX_BUILD_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "index/index_descriptor.h"
#include "rockdoc/status.h"
#include "storage/engine.h"

namespace rockdoc::internal {

// Writes the entries of every document of the collection into `index` (not
// yet published), and records its multikey paths: one scan, the entries
// sorted (in memory up to ClientOptions::max_index_build_memory_bytes, in
// sorted runs on disk past it) and ingested as one bulk load
// (storage/spill.h), so nothing is written unless the whole build succeeds.
// DuplicateKey for a unique index over duplicates. `progress` gets the
// documents scanned so far.
Status BuildIndexEntries(const Engine& engine, const CollectionMeta& meta, IndexDescriptor* index,
                         const std::function<void(int64_t)>& progress);
// Range-deletes every entry of `index`.
Status RemoveIndexEntries(const Engine& engine, const IndexDescriptor& index);
// Publishes `next` as the collection's index set and persists it; restores
// the previous set when the catalog write fails. `events`: the change's
// change-log events (createIndexes), written in the catalog's batch.
Status PublishIndexSet(const Engine& engine, CollectionMeta* meta,
                       std::shared_ptr<const IndexSet> next,
                       const std::vector<std::string>& events = {});
// The createIndexes or dropIndexes change-log event of `indexes` in
// `meta` (operationDescription: {indexes: [their specs]}).
std::string IndexEvent(const CollectionMeta& meta, std::string_view operation,
                       const std::vector<const IndexDescriptor*>& indexes);
// Drops the indexes named `names` (one dropIndexes event each, as
// MongoDB's oplog has one entry each): unpublished first, then their
// entries.
Status DropIndexesLocked(const Engine& engine, CollectionMeta* meta,
                         const std::vector<std::string>& names);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORE_INDEX_BUILD_H_

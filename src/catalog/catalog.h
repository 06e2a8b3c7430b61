// catalog/catalog.h: which collections exist, under which prefix id, with
// which indexes; persisted in the "catalog" column family (format in
// storage/README.md) and cached in memory.
//
// Each collection's metadata carries a reader-writer lock: document writes
// hold it shared for the length of their transaction, while drop, rename
// and index builds hold it exclusively, so that a write never lands in a
// collection that is being dropped. A writer that finds its collection
// dropped looks it up again (and so recreates it, as MongoDB does on insert).
//
// Thread safety: all members are thread-safe.
#ifndef ROCKDOC_CATALOG_CATALOG_H_
#define ROCKDOC_CATALOG_CATALOG_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

class Engine;

struct CollectionMeta {
  uint32_t id = 0;
  std::string db;
  std::string name;
  std::string full_name() const { return db + "." + name; }

  mutable std::shared_mutex mu;
  std::atomic<bool> dropped{false};
};

// MongoDB's naming rules. InvalidNamespace (73) with MongoDB's wording.
Status ValidateDatabaseName(std::string_view name);
Status ValidateCollectionName(std::string_view db, std::string_view name);

class Catalog {
 public:
  explicit Catalog(Engine* engine) : engine_(engine) {}

  // Reads the persisted catalog. Called once, at open.
  Status Load();

  // The collection, or nullptr when it does not exist.
  std::shared_ptr<CollectionMeta> Find(std::string_view db, std::string_view name) const;
  // The collection, created when missing (a first insert creates it).
  StatusOr<std::shared_ptr<CollectionMeta>> GetOrCreate(std::string_view db,
                                                        std::string_view name);
  // Creates; NamespaceExists (48) when it exists.
  Status Create(std::string_view db, std::string_view name);
  Status Drop(std::string_view db, std::string_view name, bool* existed);
  Status Rename(std::string_view db, std::string_view from, std::string_view to,
                bool drop_target);

  std::vector<std::string> DatabaseNames() const;
  std::vector<std::string> CollectionNames(std::string_view db) const;

  // The key of the collection's document count (an int64 kept by merges).
  static std::string CountKey(uint32_t collection_id);
  // Reads the stored count at the latest state.
  StatusOr<int64_t> ReadCount(uint32_t collection_id) const;

 private:
  using Key = std::pair<std::string, std::string>;
  static std::string MetaKey(std::string_view db, std::string_view name);
  Status Persist(const CollectionMeta& meta, std::string_view delete_key = {});
  StatusOr<uint32_t> AllocateIdLocked();
  Status DropLocked(const std::shared_ptr<CollectionMeta>& meta);

  Engine* engine_;
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<CollectionMeta>, std::less<>> collections_;
  uint32_t next_id_ = 1;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_CATALOG_CATALOG_H_

// store/collection_lock.h: the locking protocol of the collection store.
//
// One guard for a collection: CollectionLock, shared by every document
// write (insert, update, delete, in or out of a transaction) and by
// validate, exclusive for whatever changes the collection's index set or
// existence (index builds and drops; drop and rename take the same lock
// inside the catalog). It looks the collection up again when a concurrent
// drop or rename got there first, so a write never lands in a collection
// that is being dropped.
//
// Lock order (a thread holding a lock may only take those below it):
//   1. Engine::close_mu_ (shared per operation: Engine::Use; exclusive in
//      Close, which then only calls ReleaseEngineResources)
//   2. SessionState::mu_ (never held across an operation: taken and
//      released by BeginOperation / EndOperation)
//   3. Catalog::mu_ (the map of collections; drop and rename hold it while
//      they take 4 exclusively, so nothing waits on 3 while holding 4)
//   4. CollectionMeta::mu (this guard)
//   5. CollectionMeta::persist_mu (the collection's catalog entry writes);
//      CollectionStatistics::commit_mu (shared by a writer around its
//      commit while the collection's document sizes are unknown, also by a
//      multi-document transaction's commit, which holds 2; exclusive only
//      while Collection::Stats takes the snapshot it rebuilds them from,
//      holding 1 alone). Several are taken in address order.
//   6. IndexDescriptor::multikey_mu_, CollectionMeta::indexes_mu_,
//      Catalog::id_mu_, Engine::resources_mu_, CollectionStatistics::mu_:
//      leaves, never held while taking another lock
// RocksDB's row locks (documents, unique index keys) come after all of
// these: a thread may wait for a row lock while holding 1 and 4 (shared),
// never while holding 3, 5 or 6. Row locks are taken in record-key order
// (store/write_batcher.h), so two writers never wait for each other in a
// cycle; a multi-document transaction never waits for one (lock timeout 0:
// a conflict is a WriteConflict).
//
// The mutexes are common/mutex.h's (over the standard library's, so that
// ThreadSanitizer sees them), annotated (ABSL_GUARDED_BY and friends) so
// that clang's -Wthread-safety checks the members they guard; CI builds
// with -Werror=thread-safety (scripts/test.sh).
//
// Thread safety: a CollectionLock is held by one thread and released when
// destroyed.
#ifndef ROCKDOC_STORE_COLLECTION_LOCK_H_
#define ROCKDOC_STORE_COLLECTION_LOCK_H_

#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "rockdoc/status.h"
#include "storage/engine.h"

namespace rockdoc::internal {

class CollectionLock {
 public:
  enum class Mode { kShared, kExclusive };

  // Locks collection `db`.`name` in `mode`. With `create`, a missing
  // collection is created (a first insert creates it); without, meta() is
  // null when it does not exist. InvalidNamespace for a bad name.
  static StatusOr<CollectionLock> Acquire(const Engine& engine, const std::string& db,
                                          const std::string& name, Mode mode, bool create);
  // Locks an already looked-up collection (the caller re-checks dropped()).
  CollectionLock(std::shared_ptr<CollectionMeta> meta, Mode mode);

  CollectionLock(CollectionLock&& other) noexcept;
  CollectionLock& operator=(CollectionLock&&) = delete;
  CollectionLock(const CollectionLock&) = delete;
  ~CollectionLock();

  CollectionMeta* meta() const { return meta_.get(); }
  bool dropped() const {
    return meta_ != nullptr && meta_->dropped.load(std::memory_order_acquire);
  }

 private:
  std::shared_ptr<CollectionMeta> meta_;
  Mode mode_;
  bool held_ = false;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORE_COLLECTION_LOCK_H_

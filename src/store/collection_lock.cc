#include "store/collection_lock.h"

namespace rockdoc::internal {

StatusOr<CollectionLock> CollectionLock::Acquire(const Engine& engine, const std::string& db,
                                                 const std::string& name, Mode mode,
                                                 bool create) {
  ROCKDOC_RETURN_IF_ERROR(ValidateDatabaseName(db));
  while (true) {
    std::shared_ptr<CollectionMeta> meta;
    if (create) {
      ROCKDOC_ASSIGN_OR_RETURN(meta, CatalogOf(engine).GetOrCreate(db, name));
    } else {
      meta = CatalogOf(engine).Find(db, name);
      if (meta == nullptr) {
        // A view is read-only: no write reaches it, not even one that
        // finds nothing.
        if (CatalogOf(engine).FindView(db, name) != nullptr) return ViewNotCollection(db, name);
        return CollectionLock(nullptr, mode);
      }
    }
    CollectionLock lock(std::move(meta), mode);
    if (!lock.dropped()) return lock;
  }
}

// The analysis cannot follow a lock whose mode is chosen at run time and
// that moves between objects; the protocol above is what holds.
CollectionLock::CollectionLock(std::shared_ptr<CollectionMeta> meta, Mode mode)
    ABSL_NO_THREAD_SAFETY_ANALYSIS : meta_(std::move(meta)), mode_(mode) {
  if (meta_ == nullptr) return;
  if (mode_ == Mode::kShared) {
    meta_->mu.ReaderLock();
  } else {
    meta_->mu.WriterLock();
  }
  held_ = true;
}

CollectionLock::CollectionLock(CollectionLock&& other) noexcept
    : meta_(std::move(other.meta_)), mode_(other.mode_), held_(other.held_) {
  other.held_ = false;
}

CollectionLock::~CollectionLock() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (!held_) return;
  if (mode_ == Mode::kShared) {
    meta_->mu.ReaderUnlock();
  } else {
    meta_->mu.WriterUnlock();
  }
}

}  // namespace rockdoc::internal

// common/mutex.h: the mutexes of rockdoc, annotated for clang's thread-safety
// analysis (abseil's ABSL_GUARDED_BY and friends) and built on the standard
// library's, so that ThreadSanitizer sees every lock: Debian's abseil is not
// built with ThreadSanitizer, and an absl::Mutex it cannot see makes it
// report races that are not there.
//
// Thread safety: these are the synchronisation primitives.
#ifndef ROCKDOC_COMMON_MUTEX_H_
#define ROCKDOC_COMMON_MUTEX_H_

#include <mutex>
#include <shared_mutex>

#include "absl/base/thread_annotations.h"

namespace rockdoc::internal {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) { return mu_.try_lock(); }
  // For a std::condition_variable wait; the caller holds the lock.
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

// Readers share it, a writer has it alone.
class ABSL_LOCKABLE SharedMutex {
 public:
  void WriterLock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void WriterUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class ABSL_SCOPED_LOCKABLE WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->WriterLock();
  }
  ~WriterMutexLock() ABSL_UNLOCK_FUNCTION() { mu_->WriterUnlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex* const mu_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMON_MUTEX_H_

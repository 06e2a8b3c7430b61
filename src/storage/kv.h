// storage/kv.h: the key-value vocabulary the layers above storage/ use, so
// that no RocksDB type is seen above it.
//
//   KvIterator    a bounded iterator over the data column family
//   PinnedValue   a value read in place (no copy while it lives)
//   KvSnapshot    a consistent point-in-time view of the whole database
//   KvTransaction a pessimistic transaction: writes, document locks,
//                 savepoints, commit; it reads its own writes
//   ReadView      what a query plan reads: the database at a snapshot, or
//                 through a transaction (its snapshot plus its own writes)
//
// Every failure is returned as a Status (FromRocks's mapping: Busy is
// WriteConflict, TimedOut is LockTimeout, NoSpace is OutOfDiskSpace, ...);
// none is dropped.
//
// Thread safety: a KvIterator, KvTransaction or PinnedValue is used by one
// thread at a time; a KvSnapshot may be shared (it is immutable).
#ifndef ROCKDOC_STORAGE_KV_H_
#define ROCKDOC_STORAGE_KV_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "rockdoc/status.h"

namespace rockdoc::internal {

class Engine;
class RecordCache;

// The key spaces (column families): documents, counts' neighbours and
// index entries in kData; collection metadata and counts in kCatalog; the
// change log's events in kChanges (storage/README.md).
enum class KeySpace { kData, kCatalog, kChanges };

class KvIterator {
 public:
  ~KvIterator();
  KvIterator(const KvIterator&) = delete;
  KvIterator& operator=(const KvIterator&) = delete;

  // Positioning, always inside [lower, upper) given at creation.
  void SeekToFirst();
  void SeekToLast();
  void Seek(std::string_view key);         // first key >= key
  void SeekForPrev(std::string_view key);  // last key <= key
  void Next();
  void Prev();
  bool Valid() const;
  // Valid only while Valid() and until the next positioning call.
  std::string_view key() const;
  std::string_view value() const;
  // Not OK when iteration stopped on an error (not at the end).
  Status status() const;

 private:
  friend class ReadView;
  struct Rep;
  explicit KvIterator(std::unique_ptr<Rep> rep);
  bool InBounds() const;
  std::unique_ptr<Rep> rep_;
};

// A value read in place (or held from the record cache): view() stays valid
// until Reset() or destruction.
class PinnedValue {
 public:
  PinnedValue();
  ~PinnedValue();
  PinnedValue(PinnedValue&&) noexcept;
  PinnedValue& operator=(PinnedValue&&) noexcept;
  std::string_view view() const;
  void Reset();

 private:
  friend class ReadView;
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

// A point-in-time view of the database, released when destroyed (or when
// the engine closes: Release()).
class KvSnapshot {
 public:
  explicit KvSnapshot(std::shared_ptr<const Engine> engine);
  ~KvSnapshot();
  KvSnapshot(const KvSnapshot&) = delete;
  KvSnapshot& operator=(const KvSnapshot&) = delete;
  // Lets go of the RocksDB snapshot (the engine is closing); reads through
  // it afterwards see the latest state, and the caller stops reading.
  void Release();
  const Engine* engine() const { return engine_.get(); }
  // The storage engine's snapshot, opaque above storage/.
  const void* handle() const { return snapshot_; }
  // Its sequence number (the last commit it sees); 0 once released.
  uint64_t sequence() const;

 private:
  friend class KvTransaction;
  std::shared_ptr<const Engine> engine_;
  const void* snapshot_ = nullptr;  // a rocksdb::Snapshot
};

class KvTransaction;

// What a plan reads. Copyable and cheap; it points at (does not own) its
// engine, snapshot or transaction, which must outlive it.
class ReadView {
 public:
  ReadView() = default;
  // The database at `snapshot` (nullptr: whatever is latest at each read).
  ReadView(const Engine* engine, const KvSnapshot* snapshot)
      : engine_(engine), snapshot_(snapshot) {}
  // Through `txn`: its snapshot and its own uncommitted writes.
  explicit ReadView(KvTransaction* txn);

  const Engine* engine() const { return engine_; }
  KvTransaction* transaction() const { return txn_; }
  // The same view, whose record reads use the record cache's versions but
  // never install what they read: a write's plan, which finds documents
  // that its commit is about to replace (the version would be dropped at
  // once).
  ReadView WithoutCacheFill() const {
    ReadView v = *this;
    v.fill_cache_ = false;
    return v;
  }

  // An iterator over the data keys in [lower, upper). `sequential` hints a
  // long forward or backward scan (read-ahead); `fill_cache` false keeps a
  // one-pass bulk scan (an index build) from evicting hot blocks.
  std::unique_ptr<KvIterator> NewIterator(std::string_view lower, std::string_view upper,
                                          bool sequential = false, bool fill_cache = true) const;
  // Reads the data key `key` into *value. *found is false (and the status
  // OK) when there is none.
  Status Get(std::string_view key, PinnedValue* value, bool* found) const;
  // Reads `keys` (ascending) at once. (*values)[i] and (*found)[i] as Get's;
  // the first error is returned.
  Status MultiGet(const std::vector<std::string_view>& keys, std::vector<PinnedValue>* values,
                  std::vector<bool>* found) const;
  // Get and MultiGet of record keys (storage/format.h's RecordKey: a
  // document under its collection and _id) and of unique index entries,
  // through the record cache (storage/record_cache.h) when the engine has
  // one and the view is not a transaction's: the same answers, from memory
  // when the cache may serve them. Only those keys: the store marks their
  // writes (store/write_ops.cc), the cache knows of no other key's.
  Status GetRecord(std::string_view key, PinnedValue* value, bool* found) const;
  Status MultiGetRecords(const std::vector<std::string_view>& keys,
                         std::vector<PinnedValue>* values, std::vector<bool>* found) const;
  // Reads a catalog-space key (a count) into *value; *found as Get's.
  Status GetCatalog(std::string_view key, std::string* value, bool* found) const;

 private:
  // The record cache when this view may use it (null otherwise), and the
  // sequence its reads are at (RecordCache::kLatest without a snapshot).
  RecordCache* CacheFor(uint64_t* at) const;
  const Engine* engine_ = nullptr;
  const KvSnapshot* snapshot_ = nullptr;
  KvTransaction* txn_ = nullptr;
  bool fill_cache_ = true;  // record reads install what they read
};

// A pessimistic RocksDB transaction (Engine::BeginTransaction). Writes lock
// their keys until commit or rollback.
class KvTransaction {
 public:
  struct Options {
    // Read everything (and validate every write) at the snapshot taken when
    // the transaction began: a key written by someone else after it is a
    // WriteConflict. Multi-document transactions use it; single writes
    // lock and re-read the latest version instead.
    bool snapshot = false;
    // How long to wait for a lock held by another transaction (ms);
    // negative: the client's lock_timeout_ms. 0: never wait (WriteConflict
    // at once, as MongoDB's transactions behave).
    int64_t lock_timeout_ms = -1;
    // After this long (ms; negative: never) another writer may take this
    // transaction's locks, and its commit then fails.
    int64_t expiration_ms = -1;
    // PutUnindexed skips the index of the transaction's own writes (one
    // skip-list insert per key, compared key by key): for a transaction
    // that seldom reads back what it wrote, such as a batch of inserts.
    // Without it PutUnindexed is an indexed write.
    bool unindexed_writes = false;
  };

  ~KvTransaction();
  KvTransaction(const KvTransaction&) = delete;
  KvTransaction& operator=(const KvTransaction&) = delete;

  Status Put(KeySpace space, std::string_view key, std::string_view value);
  Status Delete(KeySpace space, std::string_view key);
  Status Merge(KeySpace space, std::string_view key, std::string_view value);
  // The same without locking the key (the caller holds a lock that covers
  // it: a non-unique index entry under its locked document, a count that
  // only merges).
  Status PutUntracked(KeySpace space, std::string_view key, std::string_view value);
  Status DeleteUntracked(KeySpace space, std::string_view key);
  Status MergeUntracked(KeySpace space, std::string_view key, std::string_view value);
  // Put (`track`: locking the key) or PutUntracked of a data key whose
  // entry skips the index of the transaction's own writes (with
  // Options::unindexed_writes). Reads through the transaction stay exact:
  // one that could see such a write (a Get, GetForUpdate or Lock of its key,
  // any iterator or multi-get through the transaction) first indexes them
  // all, one pass over the batch.
  Status PutUnindexed(std::string_view key, std::string_view value, bool track);
  // Locks `key` (data space) for the rest of the transaction and reads its
  // current version (with Options::snapshot: fails with WriteConflict when
  // it changed after the snapshot). *found false when it does not exist.
  Status GetForUpdate(std::string_view key, std::string* value, bool* found);
  // Locks a data key without reading it (a unique index key).
  Status Lock(std::string_view key);
  // Reads a data key as of the transaction (its own writes included),
  // without locking.
  Status Get(std::string_view key, std::string* value, bool* found);

  void SetSavePoint();
  Status RollbackToSavePoint();
  Status PopSavePoint();
  void SetLockTimeout(int64_t ms);

  Status Commit();
  Status Rollback();

  // Work tied to this transaction's commit (the store's change set: its
  // statistics, which count committed writes only, and its change-log
  // events): BeforeCommit runs just before the commit (an error stops it:
  // the commit fails with it), AfterCommit just after it (`committed`:
  // whether it succeeded; also for a hook whose BeforeCommit did not run).
  // The savepoint calls follow the transaction's savepoints (`depth`: the
  // savepoint's number, 1 for the outermost), so that a hook drops what was
  // added after a savepoint rolled back. A transaction rolled back, or
  // destroyed without committing, drops its hook unrun.
  class CommitHook {
   public:
    virtual ~CommitHook() = default;
    virtual Status BeforeCommit() { return Status::OK(); }
    virtual void AfterCommit(bool committed) = 0;
    virtual void SavePointSet(int depth) { (void)depth; }
    virtual void RolledBackTo(int depth) { (void)depth; }
    virtual void SavePointPopped(int depth) { (void)depth; }
  };
  // Hooks run in the order added. A layer that adds work to a transaction
  // more than once finds its own hook among them and adds to it.
  void AddCommitHook(std::unique_ptr<CommitHook> hook) { commit_hooks_.push_back(std::move(hook)); }
  const std::vector<std::unique_ptr<CommitHook>>& commit_hooks() const { return commit_hooks_; }
  // The savepoints open now (the depth a new hook starts at).
  int savepoint_depth() const { return savepoints_; }

  // Bytes of keys and values written so far.
  size_t write_bytes() const;

  const Engine* engine() const { return engine_; }

 private:
  friend class Engine;
  friend class ReadView;
  KvTransaction(const Engine* engine, void* txn, bool unindexed_writes);
  // Indexes the writes PutUnindexed left out (all of them; `key` empty) or,
  // when `key` is one of them, all of them too; otherwise nothing.
  Status IndexOwnWrites(std::string_view key = {});
  const Engine* engine_;
  void* txn_;  // a rocksdb::Transaction, owned
  const bool unindexed_writes_;
  // The keys written by PutUnindexed since the index was last complete;
  // looked up by string_view (no string built per read).
  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_set<std::string, ViewHash, std::equal_to<>> unindexed_;
  std::vector<std::unique_ptr<CommitHook>> commit_hooks_;
  int savepoints_ = 0;  // open savepoints
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORAGE_KV_H_

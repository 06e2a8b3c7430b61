// storage/kv.cc: the RocksDB side of storage/kv.h.
#include "storage/kv.h"

#include <rocksdb/iterator.h>
#include <rocksdb/slice.h>
#include <rocksdb/utilities/transaction.h>
#include <rocksdb/utilities/transaction_db.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include "storage/engine.h"
#include "storage/record_cache.h"
#include "storage/rocks.h"

namespace rockdoc::internal {

namespace {

rocksdb::Slice AsSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }
std::string_view AsView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

rocksdb::Transaction* Txn(void* p) { return static_cast<rocksdb::Transaction*>(p); }

const rocksdb::Snapshot* SnapshotOf(const KvSnapshot* s);

}  // namespace

// ---- KvIterator ----

struct KvIterator::Rep {
  std::string lower, upper;
  rocksdb::Slice lower_slice, upper_slice;
  std::unique_ptr<rocksdb::Iterator> it;
  // A transaction's iterator (its writes over the database) does not keep
  // to iterate_*_bound on its own side: the bounds are checked here.
  bool check_bounds = false;
};

KvIterator::KvIterator(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
KvIterator::~KvIterator() = default;

bool KvIterator::InBounds() const {
  if (!rep_->it->Valid()) return false;
  if (!rep_->check_bounds) return true;
  std::string_view k = AsView(rep_->it->key());
  return k >= std::string_view(rep_->lower) && k < std::string_view(rep_->upper);
}

void KvIterator::SeekToFirst() { rep_->it->Seek(rep_->lower_slice); }

void KvIterator::SeekToLast() {
  rep_->it->SeekForPrev(rep_->upper_slice);
  if (rep_->it->Valid() && AsView(rep_->it->key()) >= std::string_view(rep_->upper)) {
    rep_->it->Prev();
  }
}

void KvIterator::Seek(std::string_view key) { rep_->it->Seek(AsSlice(key)); }
void KvIterator::SeekForPrev(std::string_view key) { rep_->it->SeekForPrev(AsSlice(key)); }
void KvIterator::Next() { rep_->it->Next(); }
void KvIterator::Prev() { rep_->it->Prev(); }
bool KvIterator::Valid() const { return InBounds(); }
std::string_view KvIterator::key() const { return AsView(rep_->it->key()); }
std::string_view KvIterator::value() const { return AsView(rep_->it->value()); }
Status KvIterator::status() const { return FromRocks(rep_->it->status(), "iterator"); }

// ---- PinnedValue ----

struct PinnedValue::Rep {
  rocksdb::PinnableSlice slice;
  std::shared_ptr<const std::string> cached;  // a version from the record cache
};

PinnedValue::PinnedValue() : rep_(std::make_unique<Rep>()) {}
PinnedValue::~PinnedValue() = default;
PinnedValue::PinnedValue(PinnedValue&&) noexcept = default;
PinnedValue& PinnedValue::operator=(PinnedValue&&) noexcept = default;
std::string_view PinnedValue::view() const {
  return rep_->cached != nullptr ? std::string_view(*rep_->cached) : AsView(rep_->slice);
}
void PinnedValue::Reset() {
  rep_->slice.Reset();
  rep_->cached.reset();
}

// ---- KvSnapshot ----

KvSnapshot::KvSnapshot(std::shared_ptr<const Engine> engine) : engine_(std::move(engine)) {
  // A secondary instance (a read-only engine) has no snapshots: its state
  // changes only when it catches up, which no operation reads across
  // (Engine::Use). Its reads are of the latest state it has.
  if (!engine_->read_only()) snapshot_ = engine_->rocks().base->GetSnapshot();
}

KvSnapshot::~KvSnapshot() { Release(); }

void KvSnapshot::Release() {
  if (snapshot_ != nullptr && !engine_->closed()) {
    engine_->rocks().base->ReleaseSnapshot(static_cast<const rocksdb::Snapshot*>(snapshot_));
  }
  snapshot_ = nullptr;
}

namespace {
const rocksdb::Snapshot* SnapshotOf(const KvSnapshot* s) {
  return s == nullptr ? nullptr : static_cast<const rocksdb::Snapshot*>(s->handle());
}
}  // namespace

uint64_t KvSnapshot::sequence() const {
  return snapshot_ == nullptr ? 0 : SnapshotOf(this)->GetSequenceNumber();
}

// ---- ReadView ----

ReadView::ReadView(KvTransaction* txn) : engine_(txn->engine()), txn_(txn) {}

namespace {
rocksdb::ReadOptions ReadOptionsFor(const KvSnapshot* snapshot, KvTransaction* txn, void* raw) {
  rocksdb::ReadOptions ro;
  if (txn != nullptr) {
    ro.snapshot = Txn(raw)->GetSnapshot();
  } else {
    ro.snapshot = SnapshotOf(snapshot);
  }
  return ro;
}
}  // namespace

std::unique_ptr<KvIterator> ReadView::NewIterator(std::string_view lower, std::string_view upper,
                                                  bool sequential, bool fill_cache) const {
  auto rep = std::make_unique<KvIterator::Rep>();
  rep->lower.assign(lower);
  rep->upper.assign(upper);
  rep->lower_slice = rocksdb::Slice(rep->lower);
  rep->upper_slice = rocksdb::Slice(rep->upper);
  rocksdb::ReadOptions ro =
      ReadOptionsFor(snapshot_, txn_, txn_ != nullptr ? txn_->txn_ : nullptr);
  ro.iterate_lower_bound = &rep->lower_slice;
  ro.iterate_upper_bound = &rep->upper_slice;
  ro.adaptive_readahead = sequential;
  ro.fill_cache = fill_cache;
  if (txn_ != nullptr) {
    Status indexed = txn_->IndexOwnWrites();
    if (!indexed.ok()) {
      rep->it.reset(rocksdb::NewErrorIterator(rocksdb::Status::Aborted(indexed.ToString())));
      return std::unique_ptr<KvIterator>(new KvIterator(std::move(rep)));
    }
    rep->it.reset(Txn(txn_->txn_)->GetIterator(ro, engine_->rocks().data_cf));
    rep->check_bounds = true;
  } else {
    rep->it.reset(engine_->rocks().base->NewIterator(ro, engine_->rocks().data_cf));
  }
  return std::unique_ptr<KvIterator>(new KvIterator(std::move(rep)));
}

Status ReadView::Get(std::string_view key, PinnedValue* value, bool* found) const {
  value->Reset();
  if (txn_ != nullptr) ROCKDOC_RETURN_IF_ERROR(txn_->IndexOwnWrites(key));
  rocksdb::ReadOptions ro =
      ReadOptionsFor(snapshot_, txn_, txn_ != nullptr ? txn_->txn_ : nullptr);
  rocksdb::Status s =
      txn_ != nullptr
          ? Txn(txn_->txn_)->Get(ro, engine_->rocks().data_cf, AsSlice(key), &value->rep_->slice)
          : engine_->rocks().base->Get(ro, engine_->rocks().data_cf, AsSlice(key), &value->rep_->slice);
  *found = s.ok();
  if (s.IsNotFound()) return Status::OK();
  return FromRocks(s, "read");
}

Status ReadView::MultiGet(const std::vector<std::string_view>& keys,
                          std::vector<PinnedValue>* values, std::vector<bool>* found) const {
  if (txn_ != nullptr) ROCKDOC_RETURN_IF_ERROR(txn_->IndexOwnWrites());
  const size_t n = keys.size();
  std::vector<rocksdb::Slice> slices;
  slices.reserve(n);
  for (std::string_view k : keys) slices.push_back(AsSlice(k));
  if (values->size() < n) values->resize(n);
  std::vector<rocksdb::PinnableSlice> pinned(n);
  std::vector<rocksdb::Status> statuses(n);
  rocksdb::ReadOptions ro =
      ReadOptionsFor(snapshot_, txn_, txn_ != nullptr ? txn_->txn_ : nullptr);
  if (txn_ != nullptr) {
    Txn(txn_->txn_)->MultiGet(ro, engine_->rocks().data_cf, n, slices.data(), pinned.data(),
                              statuses.data(), /*sorted_input=*/true);
  } else {
    engine_->rocks().base->MultiGet(ro, engine_->rocks().data_cf, n, slices.data(), pinned.data(),
                            statuses.data(), /*sorted_input=*/true);
  }
  found->assign(n, false);
  Status first;
  for (size_t i = 0; i < n; ++i) {
    (*values)[i].rep_->slice = std::move(pinned[i]);
    if (statuses[i].ok()) {
      (*found)[i] = true;
    } else if (!statuses[i].IsNotFound() && first.ok()) {
      first = FromRocks(statuses[i], "read");
    }
  }
  return first;
}

RecordCache* ReadView::CacheFor(uint64_t* at) const {
  // A transaction reads its own writes, which the cache does not hold.
  if (txn_ != nullptr || engine_ == nullptr || engine_->record_cache() == nullptr ||
      !RecordCacheReadsEnabled()) {
    return nullptr;
  }
  const rocksdb::Snapshot* snapshot = SnapshotOf(snapshot_);
  *at = snapshot != nullptr ? snapshot->GetSequenceNumber() : RecordCache::kLatest;
  return engine_->record_cache();
}

Status ReadView::GetRecord(std::string_view key, PinnedValue* value, bool* found) const {
  uint64_t at = 0;
  RecordCache* cache = CacheFor(&at);
  if (cache == nullptr) return Get(key, value, found);
  if (std::shared_ptr<const std::string> hit = cache->Lookup(key, at)) {
    value->Reset();
    value->rep_->cached = std::move(hit);
    *found = true;
    return Status::OK();
  }
  // Without a snapshot the read is of what is latest when RocksDB reads:
  // at or after `from`, at or before the sequence read after it.
  const bool latest = at == RecordCache::kLatest;
  const uint64_t from = latest ? engine_->LatestSequenceNumber() : at;
  ROCKDOC_RETURN_IF_ERROR(Get(key, value, found));
  if (*found && fill_cache_) {
    cache->Offer(key, value->view(), from, latest ? engine_->LatestSequenceNumber() : at);
  }
  return Status::OK();
}

Status ReadView::MultiGetRecords(const std::vector<std::string_view>& keys,
                                 std::vector<PinnedValue>* values,
                                 std::vector<bool>* found) const {
  uint64_t at = 0;
  RecordCache* cache = CacheFor(&at);
  if (cache == nullptr) return MultiGet(keys, values, found);
  const size_t n = keys.size();
  if (values->size() < n) values->resize(n);
  found->assign(n, false);
  std::vector<std::string_view> missed;  // still ascending
  std::vector<size_t> where;
  for (size_t i = 0; i < n; ++i) {
    (*values)[i].Reset();
    if (std::shared_ptr<const std::string> hit = cache->Lookup(keys[i], at)) {
      (*values)[i].rep_->cached = std::move(hit);
      (*found)[i] = true;
    } else {
      missed.push_back(keys[i]);
      where.push_back(i);
    }
  }
  if (missed.empty()) return Status::OK();
  const bool latest = at == RecordCache::kLatest;
  const uint64_t from = latest ? engine_->LatestSequenceNumber() : at;
  std::vector<PinnedValue> read;
  std::vector<bool> read_found;
  Status s = MultiGet(missed, &read, &read_found);
  const uint64_t stamp = latest ? engine_->LatestSequenceNumber() : at;
  for (size_t j = 0; j < missed.size(); ++j) {
    if (!read_found[j]) continue;
    (*found)[where[j]] = true;
    (*values)[where[j]] = std::move(read[j]);
    if (s.ok() && fill_cache_) cache->Offer(missed[j], (*values)[where[j]].view(), from, stamp);
  }
  return s;
}

Status ReadView::GetCatalog(std::string_view key, std::string* value, bool* found) const {
  rocksdb::ReadOptions ro =
      ReadOptionsFor(snapshot_, txn_, txn_ != nullptr ? txn_->txn_ : nullptr);
  rocksdb::Status s =
      txn_ != nullptr ? Txn(txn_->txn_)->Get(ro, engine_->rocks().catalog_cf, AsSlice(key), value)
                      : engine_->rocks().base->Get(ro, engine_->rocks().catalog_cf, AsSlice(key), value);
  *found = s.ok();
  if (s.IsNotFound()) return Status::OK();
  return FromRocks(s, "read");
}

// ---- KvTransaction ----

KvTransaction::KvTransaction(const Engine* engine, void* txn, bool unindexed_writes)
    : engine_(engine), txn_(txn), unindexed_writes_(unindexed_writes) {}

KvTransaction::~KvTransaction() {
  // An unfinished transaction is rolled back by RocksDB's destructor.
  delete Txn(txn_);
}

namespace {
rocksdb::ColumnFamilyHandle* Cf(const Engine* engine, KeySpace space) {
  switch (space) {
    case KeySpace::kData:
      return engine->rocks().data_cf;
    case KeySpace::kCatalog:
      return engine->rocks().catalog_cf;
    case KeySpace::kChanges:
      return engine->rocks().changes_cf;
  }
  return nullptr;
}
}  // namespace

Status KvTransaction::Put(KeySpace space, std::string_view key, std::string_view value) {
  return FromRocks(Txn(txn_)->Put(Cf(engine_, space), AsSlice(key), AsSlice(value)), "write");
}

Status KvTransaction::Delete(KeySpace space, std::string_view key) {
  return FromRocks(Txn(txn_)->Delete(Cf(engine_, space), AsSlice(key)), "delete");
}

Status KvTransaction::Merge(KeySpace space, std::string_view key, std::string_view value) {
  return FromRocks(Txn(txn_)->Merge(Cf(engine_, space), AsSlice(key), AsSlice(value)), "merge");
}

Status KvTransaction::PutUntracked(KeySpace space, std::string_view key, std::string_view value) {
  return FromRocks(Txn(txn_)->PutUntracked(Cf(engine_, space), AsSlice(key), AsSlice(value)),
                   "write");
}

Status KvTransaction::DeleteUntracked(KeySpace space, std::string_view key) {
  return FromRocks(Txn(txn_)->DeleteUntracked(Cf(engine_, space), AsSlice(key)), "delete");
}

Status KvTransaction::MergeUntracked(KeySpace space, std::string_view key,
                                     std::string_view value) {
  return FromRocks(Txn(txn_)->MergeUntracked(Cf(engine_, space), AsSlice(key), AsSlice(value)),
                   "merge");
}

Status KvTransaction::PutUnindexed(std::string_view key, std::string_view value, bool track) {
  if (!unindexed_writes_) {
    return track ? Put(KeySpace::kData, key, value) : PutUntracked(KeySpace::kData, key, value);
  }
  rocksdb::Transaction* txn = Txn(txn_);
  txn->DisableIndexing();
  rocksdb::Status s = track ? txn->Put(engine_->rocks().data_cf, AsSlice(key), AsSlice(value))
                            : txn->PutUntracked(engine_->rocks().data_cf, AsSlice(key), AsSlice(value));
  txn->EnableIndexing();
  if (s.ok()) unindexed_.emplace(key);
  return FromRocks(s, "write");
}

Status KvTransaction::IndexOwnWrites(std::string_view key) {
  if (unindexed_.empty() || (!key.empty() && !unindexed_.contains(key))) {
    return Status::OK();
  }
  // Rolling back to a savepoint just set removes nothing and rebuilds the
  // write batch's index from every entry in it (WriteBatchWithIndex::
  // RollbackToSavePoint), the unindexed ones included.
  Txn(txn_)->SetSavePoint();
  ROCKDOC_RETURN_IF_ERROR(
      FromRocks(Txn(txn_)->RollbackToSavePoint(), "index a transaction's writes"));
  unindexed_.clear();
  return Status::OK();
}

Status KvTransaction::GetForUpdate(std::string_view key, std::string* value, bool* found) {
  ROCKDOC_RETURN_IF_ERROR(IndexOwnWrites(key));
  rocksdb::ReadOptions ro;
  ro.snapshot = Txn(txn_)->GetSnapshot();
  rocksdb::Status s = Txn(txn_)->GetForUpdate(ro, engine_->rocks().data_cf, AsSlice(key), value);
  *found = s.ok();
  if (s.IsNotFound()) return Status::OK();
  return FromRocks(s, "lock a document");
}

Status KvTransaction::Lock(std::string_view key) {
  ROCKDOC_RETURN_IF_ERROR(IndexOwnWrites(key));
  rocksdb::ReadOptions ro;
  ro.snapshot = Txn(txn_)->GetSnapshot();
  rocksdb::PinnableSlice ignored;
  rocksdb::Status s = Txn(txn_)->GetForUpdate(ro, engine_->rocks().data_cf, AsSlice(key), &ignored);
  if (s.IsNotFound()) return Status::OK();
  return FromRocks(s, "lock a key");
}

Status KvTransaction::Get(std::string_view key, std::string* value, bool* found) {
  ROCKDOC_RETURN_IF_ERROR(IndexOwnWrites(key));
  rocksdb::ReadOptions ro;
  ro.snapshot = Txn(txn_)->GetSnapshot();
  rocksdb::Status s = Txn(txn_)->Get(ro, engine_->rocks().data_cf, AsSlice(key), value);
  *found = s.ok();
  if (s.IsNotFound()) return Status::OK();
  return FromRocks(s, "read");
}

void KvTransaction::SetSavePoint() {
  Txn(txn_)->SetSavePoint();
  ++savepoints_;
  for (const auto& hook : commit_hooks_) hook->SavePointSet(savepoints_);
}

Status KvTransaction::RollbackToSavePoint() {
  ROCKDOC_RETURN_IF_ERROR(FromRocks(Txn(txn_)->RollbackToSavePoint(), "roll back to a savepoint"));
  unindexed_.clear();  // the rollback rebuilt the index from what remains
  for (const auto& hook : commit_hooks_) hook->RolledBackTo(savepoints_);
  --savepoints_;
  return Status::OK();
}

Status KvTransaction::PopSavePoint() {
  ROCKDOC_RETURN_IF_ERROR(FromRocks(Txn(txn_)->PopSavePoint(), "pop a savepoint"));
  for (const auto& hook : commit_hooks_) hook->SavePointPopped(savepoints_);
  --savepoints_;
  return Status::OK();
}

void KvTransaction::SetLockTimeout(int64_t ms) { Txn(txn_)->SetLockTimeout(ms); }

Status KvTransaction::Commit() {
  unindexed_.clear();
  savepoints_ = 0;
  std::vector<std::unique_ptr<CommitHook>> hooks = std::move(commit_hooks_);
  commit_hooks_.clear();
  Status s;
  for (const auto& hook : hooks) {
    s = hook->BeforeCommit();
    if (!s.ok()) break;
  }
  if (s.ok()) {
    s = FromRocks(Txn(txn_)->Commit(), "commit");
  } else {
    Txn(txn_)->Rollback().PermitUncheckedError();  // failing with s
  }
  for (const auto& hook : hooks) hook->AfterCommit(s.ok());
  return s;
}

Status KvTransaction::Rollback() {
  unindexed_.clear();
  savepoints_ = 0;
  commit_hooks_.clear();
  return FromRocks(Txn(txn_)->Rollback(), "roll back");
}

size_t KvTransaction::write_bytes() const {
  return Txn(txn_)->GetWriteBatch()->GetWriteBatch()->GetDataSize();
}

}  // namespace rockdoc::internal

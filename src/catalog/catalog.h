// catalog/catalog.h: which collections exist, under which prefix id, with
// which indexes (and their multikey paths); persisted in the "catalog"
// column family (format in storage/README.md) and cached in memory.
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
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "catalog/plan_cache.h"
#include "common/mutex.h"
#include "index/index_descriptor.h"
#include "query/match_expression.h"
#include "rockdoc/document.h"
#include "rockdoc/options.h"
#include "rockdoc/status.h"
#include "stats/collection_statistics.h"
#include "storage/engine.h"

namespace rockdoc::internal {

class KvTransaction;

// A collection's options (createCollection / collMod), checked
// (MakeCollectionOptions) and with the validator parsed. The create
// command's table of every option MongoDB knows is command/'s: one that is
// implemented has a field in CreateCollectionOptions; the others are
// refused there, never accepted and dropped.
// ValidationLevel and ValidationAction are the public API's (rockdoc/options.h).
struct CollectionOptions {
  // The validator document as given ({} when none) and its parsed form
  // (null when none): query operators and $jsonSchema.
  Document validator;
  std::shared_ptr<const MatchExpression> validator_expr;
  ValidationLevel validation_level = ValidationLevel::kStrict;
  ValidationAction validation_action = ValidationAction::kError;
  // Which of the three validation fields were given (listCollections shows
  // what was set, as MongoDB does).
  bool has_validation_level = false;
  bool has_validation_action = false;

  // A view's definition (create with viewOn): `view_on` non-empty, and
  // `pipeline` the array of stages (empty when not given). A view takes
  // no other option.
  std::string view_on;
  Document pipeline;
  bool is_view() const { return !view_on.empty(); }

  // Capped collections: at most `capped_size` bytes of documents (rounded
  // as MongoDB rounds: up to 4096, then up to a multiple of 256) and, when
  // capped_max > 0, at most that many documents; the oldest go first.
  bool capped = false;
  int64_t capped_size = 0;
  int64_t capped_max = 0;

  // changeStreamPreAndPostImages: {enabled: true}: each update, replace and
  // delete records the document before it (and an update the document
  // after it) in its change event (store/change_set.h), for change
  // streams' fullDocumentBeforeChange and fullDocument
  // "whenAvailable"/"required".
  bool change_stream_pre_and_post_images = false;

  // The default collation (create's `collation`; null: simple): of every
  // operation that names none, and of new indexes that name none.
  CollatorPtr collator;

  // The collection's UUID (16 bytes) when its creator gives one (restore
  // with --preserveUUID, as MongoDB's applyOps create with `ui`); empty:
  // the catalog makes a random one. Not a user option: no create command
  // field sets it, and ToDocument leaves it out.
  std::string uuid;

  // The options as listCollections reports them ({capped, size, max,
  // validator, validationLevel, validationAction,
  // changeStreamPreAndPostImages: {enabled: true} when enabled, as
  // MongoDB shows it}); also what the catalog persists.
  Document ToDocument() const;
};

// A capped collection's state in memory. Writes to a capped collection are
// serialized by `mu` (MongoDB serializes them too), which the store's
// WriteBatcher holds for its whole life; the other fields are read and
// written only under it. The totals are what the order entries
// (storage/format.h) say: loaded on first use, and marked unloaded
// whenever a write is rolled back, so that they are read again.
struct CappedState {
  Mutex mu;
  bool loaded = false;
  uint64_t next_seq = 1;    // the sequence number of the next insert
  uint64_t oldest_seq = 1;  // no entry below it (a seek's lower bound)
  int64_t count = 0;
  int64_t bytes = 0;

  // What tailable awaitData cursors wait on (MongoDB's capped insert
  // notifier): a count of the write batches that ended, each after its
  // commit (store/write_batcher.h), so that a reader who took the count
  // before its snapshot and then waits for it to change misses no insert.
  // Its own lock, not `mu`, which a writer holds for its whole batch.
  uint64_t writes() ABSL_LOCKS_EXCLUDED(signal_mu_) {
    MutexLock g(&signal_mu_);
    return writes_;
  }
  // A write batch ended: wakes every waiter.
  void NotifyWrite() ABSL_LOCKS_EXCLUDED(signal_mu_);
  // Blocks until writes() differs from `seen`, `*stop` is set (whoever sets
  // it calls Wake()), or `timeout_ms` has passed; returns whether writes()
  // changed. A condition variable wait: no polling.
  bool WaitForWrite(uint64_t seen, int64_t timeout_ms, const std::atomic<bool>* stop)
      ABSL_LOCKS_EXCLUDED(signal_mu_);
  // Wakes every waiter to look at its `stop` flag again.
  void Wake() ABSL_LOCKS_EXCLUDED(signal_mu_);

 private:
  Mutex signal_mu_;
  std::condition_variable signal_;
  uint64_t writes_ ABSL_GUARDED_BY(signal_mu_) = 0;
};

struct CollectionMeta {
  uint32_t id = 0;
  std::string db;
  std::string name;
  // MongoDB's collection UUID (16 bytes, listCollections' info.uuid): set
  // at creation, kept by renames, persisted in the catalog entry. rockdoc
  // finds collections by name, never by UUID, so it need not be unique
  // (a restore with --preserveUUID builds a copy aside under the same one).
  std::string uuid;
  std::string full_name() const { return db + "." + name; }

  // Capped collections: the prefix id of the insertion order entries (0
  // for other collections) and the writers' state.
  uint32_t capped_order_id = 0;
  std::shared_ptr<CappedState> capped;
  bool is_capped() const { return capped_order_id != 0; }

  // The collection lock (store/collection_lock.h: CollectionLock).
  mutable SharedMutex mu;
  std::atomic<bool> dropped{false};
  // The transaction that created it, until that commits (null after, and
  // for collections created outside one): its entry is written through
  // that transaction (Catalog::PersistCollection and every other write of
  // it), so that an abort leaves nothing (CatalogTransactionScope).
  std::atomic<const KvTransaction*> creating_txn{nullptr};

  // The secondary indexes, as an immutable snapshot: a reader (a planner,
  // a writer holding `mu` shared) keeps the set it took for as long as it
  // needs it. The `_id_` index (the clustered order) is not in it.
  std::shared_ptr<const IndexSet> indexes() const {
    MutexLock g(&indexes_mu_);
    return indexes_;
  }
  // Publishes a new set (copy-on-write). The caller holds `mu` exclusively,
  // or is the only one who can reach this meta yet.
  void set_indexes(std::shared_ptr<const IndexSet> indexes) {
    {
      MutexLock g(&indexes_mu_);
      indexes_ = std::move(indexes);
    }
    plan_cache.Clear();  // after the new set is visible (catalog/plan_cache.h)
  }

  // The query planner's cache of choices per query shape, cleared by every
  // change of the indexes (set_indexes, and collMod's changes of one).
  mutable PlanCache plan_cache;

  // The collection's options (validator, capped), an immutable snapshot
  // replaced whole by collMod.
  std::shared_ptr<const CollectionOptions> options() const {
    MutexLock g(&indexes_mu_);
    return options_;
  }
  void set_options(std::shared_ptr<const CollectionOptions> options) {
    MutexLock g(&indexes_mu_);
    record_images_.store(options->change_stream_pre_and_post_images, std::memory_order_relaxed);
    options_ = std::move(options);
  }
  // Whether its change events carry pre- and post-images
  // (CollectionOptions::change_stream_pre_and_post_images): what the
  // store asks on every write, without the options' lock. A writer holds
  // `mu` shared, collMod changes it holding `mu` exclusively.
  bool record_images() const { return record_images_.load(std::memory_order_relaxed); }

  // What the store records of the collection's writes (growth warnings,
  // document sizes, array lengths: stats/collection_statistics.h),
  // persisted with the entry ("statistics"). Shared by the metas of a
  // rename, so that a write or transaction committing under the old name
  // lands in the same figures.
  std::shared_ptr<CollectionStatistics> statistics = std::make_shared<CollectionStatistics>();

  // Uses of the _id_ index by query plans ($indexStats), and since when;
  // persisted with the entry ("idIndexUsage") as the other indexes' are.
  mutable std::atomic<int64_t> id_index_accesses{0};
  mutable std::atomic<int64_t> id_index_persisted_accesses{0};
  int64_t id_index_since_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();

  // Serializes the writes of this collection's catalog entry, so that the
  // last write always carries every multikey path published before it.
  mutable Mutex persist_mu;

 private:
  mutable Mutex indexes_mu_;
  std::shared_ptr<const IndexSet> indexes_ ABSL_GUARDED_BY(indexes_mu_) =
      std::make_shared<const IndexSet>();
  std::shared_ptr<const CollectionOptions> options_ ABSL_GUARDED_BY(indexes_mu_) =
      std::make_shared<const CollectionOptions>();
  std::atomic<bool> record_images_{false};
};

// A view (db.createView, create with viewOn + pipeline): read-only, its
// documents those of `pipeline` run over `view_on`, a collection or
// another view of the same database. `depends_on` is every namespace the
// definition reads (viewOn, and the `from`/`coll` of its $lookup,
// $graphLookup and $unionWith stages, at any depth), kept so that a cycle
// is refused when a view is defined.
struct ViewDefinition {
  std::string db;
  std::string name;
  std::string view_on;
  Document pipeline;  // the array of stages
  std::vector<std::string> depends_on;
  std::string full_name() const { return db + "." + name; }
};
// The longest chain of views MongoDB resolves.
inline constexpr int kMaxViewDepth = 20;
// CommandNotSupportedOnView (166): "Namespace db.v is a view, not a
// collection", what writes and collection-only commands get on a view.
Status ViewNotCollection(std::string_view db, std::string_view name);

// createCollection's options checked and completed, as MongoDB checks them:
// InvalidOptions (72) for capped without size, a size outside 1..2^50, a max
// of 2^31 or more, size or max without capped, pipeline without viewOn, or a
// view with any other option; BadValue for an empty viewOn; a validator
// that does not parse (and none in admin, local or config: `db` is the
// collection's database). The capped size is rounded (RoundCappedSize) and
// a negative max is none. The create command's document is decoded into
// CreateCollectionOptions by command/; the catalog's own entries by
// catalog.cc.
StatusOr<CollectionOptions> MakeCollectionOptions(std::string_view db,
                                                  const CreateCollectionOptions& options);
// A capped collection's size as MongoDB keeps it: at least 4096, else
// rounded up to a multiple of 256.
int64_t RoundCappedSize(int64_t size);
// Parses a validator document (create's and collMod's `validator`).
StatusOr<std::shared_ptr<const MatchExpression>> ParseValidator(std::string_view db,
                                                                DocumentView validator);
// "off" | "strict" | "moderate"; "error" | "warn". BadValue otherwise.
StatusOr<ValidationLevel> ParseValidationLevel(const Element& e, std::string_view command);
StatusOr<ValidationAction> ParseValidationAction(const Element& e, std::string_view command);
// changeStreamPreAndPostImages: {enabled: <bool>} (create's, collMod's, the
// catalog's own), as MongoDB's IDL decodes it: TypeMismatch (14) for a
// value that is not an object or an `enabled` that is not a bool, 40414
// when `enabled` is missing, 40415 for any other field ("BSON field
// '<command>.changeStreamPreAndPostImages.x' is an unknown field.").
StatusOr<bool> ParsePreAndPostImagesOption(const Element& e, std::string_view command);
// InvalidOptions (72) for enabling it in admin, config or local, as MongoDB
// refuses (MakeCollectionOptions and collMod ask).
Status CheckPreAndPostImagesAllowed(std::string_view db, bool enabled);

// A change-log event of a catalog change, in the layout of the store's
// document events (store/change_set.h): {operationType, wallTime, ns: {db,
// coll?}, to?: {db, coll} (a rename's), collectionUUID?,
// operationDescription? (the expanded events': showExpandedEvents),
// stateBeforeChange? (modify's)}. Written with the change, in the same
// batch (Engine::WriteMetadata's `events`).
struct CatalogChange {
  std::string_view operation;
  std::string_view db;
  std::string_view coll;      // empty: the database's (dropDatabase)
  std::string_view uuid;      // the collection's; empty: none (a view's)
  std::string_view to;        // a rename's new name
  DocumentView description;   // operationDescription; empty: none
  DocumentView state_before;  // stateBeforeChange; empty: none
};
std::string CatalogEvent(const CatalogChange& change);

// A random (version 4) UUID, as MongoDB gives a new collection (and a
// session its lsid).
std::string RandomUuid();

// admin, config and local: MongoDB's own databases (no validators there;
// change streams of every database leave them out).
bool IsInternalDatabaseName(std::string_view db);

// MongoDB's naming rules. InvalidNamespace (73) with MongoDB's wording.
Status ValidateDatabaseName(std::string_view name);
Status ValidateCollectionName(std::string_view db, std::string_view name);

// The multi-document transaction the calling thread's operation runs in,
// as the catalog sees it. A collection such an operation creates (a first
// insert) is the transaction's until it commits, as in MongoDB 4.4+: its
// entry is written through the transaction, Find shows it to that
// transaction's operations only, another creator of the name gets
// WriteConflict (112) until the transaction ends, and an abort leaves
// nothing. api/'s RunOperation sets the scope for an operation's length;
// the session publishes (Catalog::CommitCreations) or forgets
// (Catalog::AbortCreations) what its transaction created.
class CatalogTransactionScope {
 public:
  explicit CatalogTransactionScope(KvTransaction* txn);
  ~CatalogTransactionScope();
  CatalogTransactionScope(const CatalogTransactionScope&) = delete;
  CatalogTransactionScope& operator=(const CatalogTransactionScope&) = delete;
  // The calling thread's transaction, or null.
  static KvTransaction* Current();

 private:
  KvTransaction* previous_;
};

class Catalog : public EngineAttachment {
 public:
  explicit Catalog(Engine* engine) : engine_(engine) {}

  // Loads the catalog of a newly opened engine and attaches it there.
  static Status AttachTo(Engine* engine);

  // Reads the persisted catalog. Called once, at open.
  Status Load();
  // A read-only engine's catalog (ClientOptions::read_only) follows the
  // owner's: when the engine has caught up with the owner's writes (no
  // operation runs then: Engine::Use) and the persisted entries changed, it
  // loads them again (collections and views the owner created, dropped or
  // changed). A failed load keeps the last view.
  void OwnerAdvanced() override ABSL_LOCKS_EXCLUDED(mu_, id_mu_, follow_mu_);
  // Writes the entries of the collections whose index usage counters
  // ($indexStats) or write statistics (CollectionMeta::statistics) moved
  // since their entry was last written: the client calls it when it
  // closes, so that they survive restarts (the query statistics are the
  // telemetry's, stats/telemetry.h).
  Status PersistUsage();
  // The engine is closing, no operation runs: the last PersistUsage, then
  // the mark that every entry's statistics hold every write, as the last
  // write (the next Load takes any later write, such as one lost by a
  // crash, for a sign that the document sizes are unknown).
  void BeforeClose() override;

  // The collection, or nullptr when it does not exist (or is being created
  // by a transaction other than the thread's, CatalogTransactionScope).
  std::shared_ptr<CollectionMeta> Find(std::string_view db, std::string_view name) const;
  // The collection, created when missing (a first insert creates it); in a
  // transaction, created as the transaction's (CatalogTransactionScope).
  // WriteConflict (112) while another transaction's creation of it is
  // pending.
  StatusOr<std::shared_ptr<CollectionMeta>> GetOrCreate(std::string_view db,
                                                        std::string_view name);
  // After `txn` committed: the collections it created are everyone's.
  void CommitCreations(const KvTransaction* txn);
  // After `txn` rolled back (or before it is destroyed uncommitted): the
  // collections it created are gone.
  void AbortCreations(const KvTransaction* txn);
  // Creates with `options`; NamespaceExists (48) when it exists.
  Status Create(std::string_view db, std::string_view name,
                const CollectionOptions& options = CollectionOptions());
  Status Drop(std::string_view db, std::string_view name, bool* existed);
  Status Rename(std::string_view db, std::string_view from, std::string_view to,
                bool drop_target);

  std::vector<std::string> DatabaseNames() const;
  std::vector<std::string> CollectionNames(std::string_view db) const;

  // Views. FindView: the view, or nullptr (cheap when there are none, as
  // on every read of a missing collection). CreateView: NamespaceExists
  // (48) when a collection or view has the name; GraphContainsCycle (93)
  // when the definition would read itself; ViewDepthLimitExceeded (165)
  // past kMaxViewDepth views. ModifyView (collMod's viewOn + pipeline):
  // NamespaceNotFound when there is no such view, the same checks. Drop
  // and DropView remove a view; Rename refuses one (166). CreateView and
  // ModifyView write their create / modify change-log event (showExpandedEvents)
  // in the view entry's batch.
  std::shared_ptr<const ViewDefinition> FindView(std::string_view db, std::string_view name) const;
  Status CreateView(ViewDefinition view);
  Status ModifyView(ViewDefinition view);
  std::vector<std::string> ViewNames(std::string_view db) const;

  // A new prefix id (for an index), never used before and never reused.
  StatusOr<uint32_t> AllocateId();
  // Writes the collection's catalog entry (its index definitions and
  // multikey paths included) as it is in memory. The caller holds meta.mu
  // exclusively when the index set changed.
  // `events`: change-log events of the change, written in the same batch
  // (CatalogEvent; nothing when the log is off).
  Status PersistCollection(const CollectionMeta& meta, const std::vector<std::string>& events = {});
  // Writes `event` (CatalogEvent) alone: a catalog change that writes no
  // entry (a collMod that changes nothing). Nothing when the log is off.
  Status RecordEvent(const std::string& event);
  // The change log's dropDatabase event of `db` (after its collections'
  // drops, which Drop records). Nothing when the log is off.
  Status RecordDropDatabase(std::string_view db);
  // Adds the multikey paths `seen` of each listed index (a writer met new
  // arrays) to the catalog on disk, then to the descriptors in memory: on
  // disk first, so that no committed document is ever multikey where the
  // persisted catalog says it is not. The caller holds meta.mu (shared) and
  // commits its documents only after this returns OK.
  Status PersistMultikeyPaths(const CollectionMeta& meta,
                              const std::vector<std::pair<IndexDescriptor*, MultikeyPaths>>& seen);

  // Reads the stored count at the latest state.
  StatusOr<int64_t> ReadCount(uint32_t collection_id) const;

 private:
  using Key = std::pair<std::string, std::string>;
  // Range-deletes data under prefix ids no collection or index owns (left
  // by a drop interrupted between its catalog write and its range delete).
  Status ReclaimUnownedPrefixes() ABSL_LOCKS_EXCLUDED(mu_);
  // Adds one persisted collection entry (Load's step).
  Status LoadEntry(std::string_view value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_, id_mu_);
  // Decides, after the entries are loaded, whether each collection's
  // document sizes are known (collection_statistics.h; Load's last step).
  Status SettleStatistics() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  StatusOr<std::shared_ptr<CollectionMeta>> GetOrCreateLocked(
      std::string_view db, std::string_view name, bool* created,
      const CollectionOptions* options = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes meta's entry (indexes with their multikey paths, or the paths in
  // `multikey_override` for the indexes it names), deleting `delete_key` in
  // the same batch. Persist takes meta.persist_mu; PersistLocked needs it.
  // `events`: the change-log events written with it (a rename's).
  Status Persist(const CollectionMeta& meta, std::string_view delete_key = {},
                 const std::vector<std::string>& events = {}) ABSL_LOCKS_EXCLUDED(meta.persist_mu);
  // Meta's catalog entry as PersistLocked writes it; `usage_written` and
  // `statistics_version` get what it records, for marking once written.
  Document EntryOf(const CollectionMeta& meta,
                   const std::vector<std::pair<IndexDescriptor*, MultikeyPaths>>* multikey_override,
                   std::vector<std::pair<const IndexDescriptor*, int64_t>>* usage_written,
                   uint64_t* statistics_version) const;
  Status PersistLocked(
      const CollectionMeta& meta, std::string_view delete_key,
      const std::vector<std::pair<IndexDescriptor*, MultikeyPaths>>* multikey_override,
      const std::vector<std::string>& events = {}) ABSL_EXCLUSIVE_LOCKS_REQUIRED(meta.persist_mu);
  // Takes `meta` by value: the caller's reference is usually the map entry
  // that the drop erases.
  Status DropLocked(std::shared_ptr<CollectionMeta> meta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds one persisted view entry (Load's step).
  Status LoadView(std::string_view value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Refuses a definition that would read itself or nest too deep.
  Status CheckViewGraph(const ViewDefinition& view) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Status PersistView(const ViewDefinition& view, const std::vector<std::string>& events = {})
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Engine* engine_;
  mutable Mutex mu_;
  std::map<Key, std::shared_ptr<CollectionMeta>, std::less<>> collections_ ABSL_GUARDED_BY(mu_);
  std::map<Key, std::shared_ptr<const ViewDefinition>, std::less<>> views_ ABSL_GUARDED_BY(mu_);
  // Collections created by transactions not yet committed, with their
  // creator (CatalogTransactionScope); not in collections_.
  struct PendingCreation {
    std::shared_ptr<CollectionMeta> meta;
    const KvTransaction* txn;
  };
  std::map<Key, PendingCreation, std::less<>> pending_ ABSL_GUARDED_BY(mu_);
  // The pending creation of `key`, visible to the thread's transaction
  // only; nullptr otherwise.
  std::shared_ptr<CollectionMeta> FindPendingLocked(const Key& key) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // CommitCreations and AbortCreations.
  void EndCreations(const KvTransaction* txn, bool committed) ABSL_LOCKS_EXCLUDED(mu_);
  // views_.size(), read without mu_: a read of a missing collection asks
  // for a view only when there is one.
  std::atomic<size_t> view_count_{0};
  // Guards next_id_. A leaf lock: index builds allocate ids while holding a
  // collection's lock, which drop and rename take while holding mu_.
  mutable Mutex id_mu_;
  // FollowOwner's: the persisted entries the maps were last loaded from.
  mutable Mutex follow_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable std::string followed_entries_ ABSL_GUARDED_BY(follow_mu_);
  uint32_t next_id_ ABSL_GUARDED_BY(id_mu_) = 1;
};

// The catalog attached to `engine` (Catalog::AttachTo).
inline Catalog& CatalogOf(const Engine& engine) {
  return *static_cast<Catalog*>(engine.attachment(AttachmentSlot::kCatalog));
}

}  // namespace rockdoc::internal

#endif  // ROCKDOC_CATALOG_CATALOG_H_

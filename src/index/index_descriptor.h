// index/index_descriptor.h: what a secondary index is: its key pattern,
// options, prefix id, multikey state and usage counters; and IndexSet, the
// immutable list of a collection's secondary indexes.
//
// The `_id` order of the clustered records is the collection's `_id_` index;
// it has no descriptor and is never in an IndexSet.
//
// A descriptor's definition (id, name, key pattern, options) never changes
// after creation. Two things do, and are thread-safe:
//   * the multikey paths, which only grow, and only through
//     Catalog::PersistMultikeyPaths (so that the catalog on disk never says
//     less than memory: see catalog.h);
//   * the usage counters ($indexStats), bumped by the planner.
//
// Ownership and threading: descriptors are shared (std::shared_ptr) between
// IndexSet snapshots; an IndexSet is immutable once built and may be read
// from many threads. A collection swaps in a new IndexSet (copy-on-write)
// under its exclusive lock; readers keep the snapshot they took.
//
// Example:
//   ROCKDOC_ASSIGN_OR_RETURN(auto desc,
//       IndexDescriptor::Create(id, Json(R"({"a": 1, "b.c": -1})"), IndexOptions{}));
//   desc->name();             // "a_1_b.c_-1"
//   desc->descending_bits();  // 0b10
#ifndef ROCKDOC_INDEX_INDEX_DESCRIPTOR_H_
#define ROCKDOC_INDEX_INDEX_DESCRIPTOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "common/mutex.h"
#include "query/collator.h"
#include "query/field_path.h"
#include "query/match_expression.h"
#include "rockdoc/document.h"
#include "rockdoc/options.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

// MongoDB's multikeyPaths: for each field of the key pattern, the positions
// (0-based path components) at which some document held an array. For the
// field "a.b.c", {0} means "a" has been an array, {1} means "a.b".
using MultikeyComponents = std::set<size_t>;
using MultikeyPaths = std::vector<MultikeyComponents>;

// The index version listIndexes reports (MongoDB's current v: 2).
inline constexpr int kIndexVersion = 2;

class IndexAccessMethod;  // index/access_method.h
class IndexKindState;     // index/access_method.h

// How an index's entries are laid out (the bytes: storage/format.h).
enum class IndexEntryFormat {
  // One entry per (key, document): the document's _id ends the key.
  kStandard,
  // One entry per key value, the _id in the value: the write path locks the
  // entry and refuses a second document with the same key (DuplicateKey).
  kUnique,
};

// createIndex's / collMod's expireAfterSeconds: a number of seconds in
// 0..2147483647 (CannotCreateIndex, 67, with MongoDB's messages otherwise).
StatusOr<int64_t> ParseExpireAfterSeconds(const Element& e);
// The range alone, for a value given typed (collMod through the API).
Status CheckExpireAfterSeconds(int64_t seconds);
// Is `keys` the _id index's key pattern {_id: 1}?
bool IsIdIndexPattern(DocumentView keys);
// Whether an index of db.coll may be hidden (created hidden, or hidden by
// collMod), as MongoDB allows it: not the _id index ("can't hide _id
// index"), nor any index of a system collection (system.*); BadValue.
Status CheckHideable(std::string_view db, std::string_view coll, bool id_index);

// State a kind keeps beside its entries in RocksDB (vectorSearch: the
// in-memory graph built from them), made by the kind when the descriptor is
// (IndexAccessMethod::NewRuntimeState) and told of every committed change
// of the index's entries (store/change_set.h). Thread-safe: commits and
// searches of many threads reach it at once.
class IndexRuntimeState {
 public:
  virtual ~IndexRuntimeState() = default;
  // One committed change of an entry: the entry of document `id_key` with
  // key values `key_bytes` and type bits `type_bits` (an IndexKey's) was put
  // (true) or deleted (false).
  struct EntryChange {
    std::string id_key;
    std::string key_bytes;
    std::string type_bits;
    bool put = false;
  };
  // The changes of one committed transaction, in the order they were made.
  virtual void EntriesCommitted(const std::vector<EntryChange>& changes) = 0;
};

class IndexDescriptor {
 public:
  // Validates a key pattern and options as createIndex does and returns the
  // descriptor of a new (empty, not multikey) index with prefix id `id`.
  // Errors (with MongoDB's messages):
  //   CannotCreateIndex (67): "Index keys cannot be empty.", "Values in the
  //     index key pattern cannot be 0.", "... cannot be NaN.", "Values in v:2
  //     index key pattern cannot be of type object. Only numbers > 0, numbers
  //     < 0, and strings are allowed.", "Index keys cannot contain an empty
  //     field.", "Index key contains an illegal field name: field name starts
  //     with '$'.", "Unknown index plugin 'x'", and partial filters using
  //     operators MongoDB refuses there ("Expression not supported in
  //     partial index: ...");
  //   NotImplemented (238): special index types, which rockdoc does not
  //     build: "text indexes are not supported by rockdoc" (also 2d,
  //     2dsphere, hashed, columnstore, and wildcard for a "$**" path);
  //     the kind's own checks (IndexAccessMethod::ValidateKeyPattern,
  //     ValidateOptions: TTL on a compound index, ...);
  //   BadValue (2): "The field 'a' appears multiple times in the index key
  //     pattern ...", an invalid name, a malformed partialFilterExpression.
  static StatusOr<std::shared_ptr<IndexDescriptor>> Create(uint32_t id, DocumentView key_pattern,
                                                           const IndexOptions& options);

  // Rebuilds a descriptor from its catalog entry (AppendCatalogEntry's
  // form). DataCorruptionDetected when the entry is damaged.
  static StatusOr<std::shared_ptr<IndexDescriptor>> FromCatalogEntry(DocumentView entry);

  IndexDescriptor(const IndexDescriptor&) = delete;
  IndexDescriptor& operator=(const IndexDescriptor&) = delete;

  // The catalog form, appended as the fields of the open document:
  //   {id: <int64>, name, key, <the kind's options>,
  //    multikeyPaths: [[<int32> component, ...] per key field],
  //    usage: {accesses: <int64>, since: <int64 ms>}}
  // (btree's options: unique, sparse, partialFilterExpression?,
  // expireAfterSeconds?).
  // `multikey` overrides the descriptor's own paths (the catalog writes the
  // paths it is about to publish).
  // Returns the usage count it recorded (MarkUsagePersisted once written).
  int64_t AppendCatalogEntry(BsonBuilder* out, const MultikeyPaths& multikey) const;

  // The index as listIndexes shows it: {v: 2, key, name, <the kind's
  // options>} (btree: unique?: true, sparse?: true, partialFilterExpression?,
  // expireAfterSeconds?).
  Document ToSpec() const;

  // The default name MongoDB gives a key pattern: "a_1_b.c_-1".
  static std::string DefaultName(DocumentView key_pattern);

  uint32_t id() const { return id_; }
  const std::string& name() const { return name_; }
  const Document& key_pattern() const { return key_pattern_; }
  // The dotted field names of the key pattern, in order.
  const std::vector<std::string>& field_names() const { return field_names_; }
  // The same names as views (what keystring::Decode takes). Valid while the
  // descriptor lives.
  const std::vector<std::string_view>& field_name_views() const { return field_name_views_; }
  const std::vector<FieldPath>& field_paths() const { return field_paths_; }
  size_t num_fields() const { return field_names_.size(); }
  // Bit i set: field i is descending (for keystring::Builder / Decode).
  uint32_t descending_bits() const { return descending_bits_; }
  bool descending(size_t field) const {
    return field < 32 && ((descending_bits_ >> field) & 1) != 0;
  }

  // What this kind of index does (never null once created).
  const IndexAccessMethod& access_method() const { return *access_method_; }
  // The kind's parsed options (IndexAccessMethod::MakeState), or null.
  const IndexKindState* kind_state() const { return kind_state_.get(); }
  // The layout of its entries (the access method's choice, kept here).
  IndexEntryFormat entry_format() const { return entry_format_; }

  bool unique() const { return unique_; }
  // TTL (expireAfterSeconds): -1 when not a TTL index. collMod changes it,
  // under the collection's exclusive lock, so readers see it atomically.
  bool ttl() const { return expire_after_seconds() >= 0; }
  int64_t expire_after_seconds() const {
    return expire_after_seconds_.load(std::memory_order_acquire);
  }
  void set_expire_after_seconds(int64_t seconds) {
    expire_after_seconds_.store(seconds, std::memory_order_release);
  }
  // Hidden from the planner (IndexOptions::hidden); still written and
  // enforced. collMod changes it as it changes the expiry.
  bool hidden() const { return hidden_.load(std::memory_order_acquire) || is_search_index(); }
  void set_hidden(bool hidden) { hidden_.store(hidden, std::memory_order_release); }
  bool sparse() const { return sparse_; }
  // `background` as the specification gave it (no effect; listed).
  std::optional<bool> background() const { return background_; }
  bool partial() const { return partial_filter_ != nullptr; }
  // The filter as given ({} when not partial) and parsed (null when not).
  const Document& partial_filter_expression() const { return partial_filter_doc_; }
  // The options this index was created with (name included), as
  // CreateIndex takes them: what rebuilds it elsewhere ($out).
  IndexOptions Options() const;
  const MatchExpression* partial_filter() const { return partial_filter_.get(); }
  // The index's collation (null: simple): its string keys are sort keys
  // (index/key_generator.h), it never covers, and the planner uses it for
  // string predicates and sorts of the same collation only.
  const Collator* collator() const { return collator_.get(); }
  const CollatorPtr& collator_ptr() const { return collator_; }
  // A search index's definition (IndexOptions::search_definition; empty
  // for other indexes), and whether this is one: a search index is kept by
  // every write as any index is, but listIndexes does not list it and the
  // planner never sees it (as a hidden index), as in MongoDB, where search
  // indexes are apart from the collection's indexes.
  const Document& search_definition() const { return search_definition_; }
  bool is_search_index() const { return !search_definition_.empty(); }
  // The kind's state beside the entries (null for kinds that keep none).
  const std::shared_ptr<IndexRuntimeState>& runtime_state() const { return runtime_state_; }

  // Whether the options (unique, sparse, partial filter, collation) equal
  // `other`'s.
  bool SameOptions(const IndexDescriptor& other) const;
  // Whether the key pattern is the same as `other`'s (names and directions
  // compared as MongoDB does: 1 and 1.0 are the same direction value).
  bool SameKeyPattern(DocumentView other) const;

  // ---- Multikey state ----
  // A copy of the current multikey paths (one entry per key field).
  MultikeyPaths multikey_paths() const;
  // True when some document had an array along some indexed path.
  bool is_multikey() const { return multikey_.load(std::memory_order_acquire); }
  // The dotted prefixes of field `field` that have been arrays
  // ("a.b" with {0} gives {"a"}).
  std::vector<std::string> MultikeyPrefixes(size_t field) const;
  // True when `seen` holds a component not yet in multikey_paths(): the
  // writer that saw it must publish it before committing.
  bool NeedsMultikeyUpdate(const MultikeyPaths& seen) const;
  // Replaces the paths. Only the catalog calls this, after persisting them.
  void SetMultikeyPaths(MultikeyPaths paths);

  // ---- Usage ($indexStats) ----
  // Counts one use of the index by a query plan. Thread-safe, lock-free.
  void RecordAccess() const { accesses_.fetch_add(1, std::memory_order_relaxed); }
  int64_t accesses() const { return accesses_.load(std::memory_order_relaxed); }
  // When counting started (the index was created), ms since epoch. Both
  // are persisted with the catalog entry (AppendCatalogEntry, and by
  // Catalog::PersistUsage at close), so they survive restarts.
  int64_t since_ms() const { return since_ms_; }
  // Whether the count moved since the catalog entry last recorded it, and
  // the mark that it did (the catalog, after writing `accesses`).
  bool UsageChanged() const {
    return accesses() != persisted_accesses_.load(std::memory_order_relaxed);
  }
  void MarkUsagePersisted(int64_t accesses) const {
    persisted_accesses_.store(accesses, std::memory_order_relaxed);
  }

 private:
  IndexDescriptor() = default;
  // Fills the derived fields from the key pattern and the options, with
  // the checks every kind shares and the kind's own key pattern check.
  // Does not apply expireAfterSeconds (Create checks it first).
  Status Init(DocumentView key_pattern, const IndexOptions& options);

  uint32_t id_ = 0;
  const IndexAccessMethod* access_method_ = nullptr;
  std::shared_ptr<const IndexKindState> kind_state_;
  IndexEntryFormat entry_format_ = IndexEntryFormat::kStandard;
  std::string name_;
  Document key_pattern_;
  std::vector<std::string> field_names_;
  std::vector<std::string_view> field_name_views_;
  std::vector<FieldPath> field_paths_;
  uint32_t descending_bits_ = 0;
  bool unique_ = false;
  bool sparse_ = false;
  std::optional<bool> background_;
  Document partial_filter_doc_;
  std::unique_ptr<MatchExpression> partial_filter_;
  CollatorPtr collator_;
  Document search_definition_;
  std::shared_ptr<IndexRuntimeState> runtime_state_;

  mutable Mutex multikey_mu_;
  MultikeyPaths multikey_paths_ ABSL_GUARDED_BY(multikey_mu_);
  std::atomic<bool> multikey_{false};

  std::atomic<int64_t> expire_after_seconds_{-1};
  std::atomic<bool> hidden_{false};
  mutable std::atomic<int64_t> accesses_{0};
  mutable std::atomic<int64_t> persisted_accesses_{0};  // what the catalog entry holds
  int64_t since_ms_ = 0;
};

// The secondary indexes of one collection at one moment. Immutable.
class IndexSet {
 public:
  IndexSet() = default;
  explicit IndexSet(std::vector<std::shared_ptr<IndexDescriptor>> indexes)
      : indexes_(std::move(indexes)) {}

  const std::vector<std::shared_ptr<IndexDescriptor>>& all() const { return indexes_; }
  bool empty() const { return indexes_.empty(); }
  size_t size() const { return indexes_.size(); }
  auto begin() const { return indexes_.begin(); }
  auto end() const { return indexes_.end(); }

  // The index named `name`, or null.
  const IndexDescriptor* FindByName(std::string_view name) const;
  // The indexes whose key pattern equals `key_pattern` (see SameKeyPattern).
  std::vector<const IndexDescriptor*> FindByKeyPattern(DocumentView key_pattern) const;

  // A copy with `index` added / with the index named `name` removed.
  std::shared_ptr<const IndexSet> With(std::shared_ptr<IndexDescriptor> index) const;
  std::shared_ptr<const IndexSet> Without(std::string_view name) const;

 private:
  std::vector<std::shared_ptr<IndexDescriptor>> indexes_;
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_INDEX_INDEX_DESCRIPTOR_H_

#include "catalog/catalog.h"

#include <cstring>
#include <functional>
#include <random>
#include <set>

#include "bson/append_number.h"
#include "common/clock.h"
#include "common/endian.h"
#include "common/option_table.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/kv.h"

namespace rockdoc::internal {

namespace {
// The options of a catalog entry (below, with the other option decoding).
StatusOr<CollectionOptions> PersistedCollectionOptions(std::string_view db, DocumentView stored);
}  // namespace

namespace {

// The longest "db.collection" MongoDB accepts.
constexpr size_t kMaxNamespaceBytes = 255;
constexpr size_t kMaxDatabaseNameBytes = 63;

Status InvalidNamespace(std::string message) {
  return Status(ErrorCode::kInvalidNamespace, std::move(message));
}

// RFC 9562's version and variant bits over 16 bytes.
std::string MarkUuid(std::string bytes, unsigned version) {
  bytes[6] = static_cast<char>((static_cast<unsigned char>(bytes[6]) & 0x0f) | (version << 4));
  bytes[8] = static_cast<char>((static_cast<unsigned char>(bytes[8]) & 0x3f) | 0x80);
  return bytes;
}

}  // namespace

std::string RandomUuid() {
  std::random_device rd;
  std::string bytes(16, '\0');
  for (size_t i = 0; i < 16; i += 4) {
    uint32_t r = rd();
    std::memcpy(bytes.data() + i, &r, 4);
  }
  return MarkUuid(std::move(bytes), 4);
}

namespace {

// SplitMix64's output function: a bijective mix of 64 bits.
uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The UUID of a collection whose catalog entry predates UUIDs: a function
// of its prefix id (unique in the directory), so the same at every open
// (version 8: RFC 9562's custom layout).
std::string DerivedUuid(uint32_t id) {
  std::string bytes;
  AppendBE64(&bytes, Mix64(id));
  AppendBE64(&bytes, Mix64(id ^ 0x726f636b646f6375ULL));  // "rockdocu"
  return MarkUuid(std::move(bytes), 8);
}

}  // namespace

Status ValidateDatabaseName(std::string_view name) {
  if (name.empty()) return InvalidNamespace("Invalid database name: ''");
  if (name.size() > kMaxDatabaseNameBytes) {
    return InvalidNamespace("db name is too long: '" + std::string(name) + "' (max " +
                            std::to_string(kMaxDatabaseNameBytes) + " bytes)");
  }
  for (char c : name) {
    if (c == '/' || c == '\\' || c == '.' || c == ' ' || c == '"' || c == '$' || c == '\0' ||
        c == '*' || c == '<' || c == '>' || c == ':' || c == '|' || c == '?') {
      return InvalidNamespace("Invalid database name: '" + std::string(name) + "'");
    }
  }
  return Status::OK();
}

Status ValidateCollectionName(std::string_view db, std::string_view name) {
  std::string printable(name);
  for (char& c : printable)
    if (c == '\0') c = '?';
  if (name.empty()) return InvalidNamespace("Invalid collection name: collection names cannot be empty");
  if (name.find('\0') != std::string_view::npos) {
    return InvalidNamespace("Invalid collection name: collection names cannot contain a null byte: '" + printable + "'");
  }
  if (name.find('$') != std::string_view::npos) {
    return InvalidNamespace("Invalid collection name: '" + printable + "': collection names cannot contain '$'");
  }
  if (name.front() == '.') {
    return InvalidNamespace("Invalid collection name: '" + printable + "': collection names cannot begin with '.'");
  }
  // system.profile: the profiler's (api/query_recorder.h), as MongoDB's.
  if (name.substr(0, 7) == "system." && name != "system.profile") {
    return InvalidNamespace("Invalid collection name: '" + printable +
                            "': names beginning with 'system.' are reserved");
  }
  if (db.size() + 1 + name.size() > kMaxNamespaceBytes) {
    return InvalidNamespace("Fully qualified namespace is too long. Namespace: " + std::string(db) +
                            "." + printable + " Max: " + std::to_string(kMaxNamespaceBytes));
  }
  return Status::OK();
}

Status Catalog::AttachTo(Engine* engine) {
  auto catalog = std::make_unique<Catalog>(engine);
  ROCKDOC_RETURN_IF_ERROR(catalog->Load());
  // A read-only engine deletes nothing: the owner reclaims its garbage.
  if (!engine->read_only()) ROCKDOC_RETURN_IF_ERROR(catalog->ReclaimUnownedPrefixes());
  engine->Attach(AttachmentSlot::kCatalog, std::move(catalog));
  return Status::OK();
}

Status Catalog::ReclaimUnownedPrefixes() {
  // A drop removes the catalog entry, then range-deletes the prefix; a
  // crash in between leaves entries under an id nothing owns (ids are
  // never reused, so they are garbage). Seek prefix by prefix: one seek per
  // prefix present, not a scan of the data.
  std::set<uint32_t> owned;
  {
    MutexLock g(&mu_);
    for (const auto& [key, meta] : collections_) {
      owned.insert(meta->id);
      if (meta->is_capped()) owned.insert(meta->capped_order_id);
      for (const auto& index : *meta->indexes()) owned.insert(index->id());
    }
  }
  std::vector<uint32_t> unowned;
  {
    std::unique_ptr<KvIterator> it =
        ReadView(engine_, nullptr).NewIterator(PrefixKey(0), std::string(5, '\xff'));
    for (it->SeekToFirst(); it->Valid();) {
      std::string_view key = it->key();
      if (key.size() < 4) return Status(ErrorCode::kDataCorruptionDetected, "a data key without a prefix");
      uint32_t id = LoadBE32(reinterpret_cast<const uint8_t*>(key.data()));
      if (!owned.contains(id)) unowned.push_back(id);
      if (id == UINT32_MAX) break;
      it->Seek(PrefixKey(id + 1));
    }
    // A damaged data block met on the way stops the reclaiming, not the
    // open: the damage is the reads' and validate's to report (they name
    // the document), and what was not reclaimed is found again next open.
    if (!it->status().ok()) {
      it->status().IgnoreError();
      return Status::OK();
    }
  }
  for (uint32_t id : unowned) {
    ROCKDOC_RETURN_IF_ERROR(engine_->DeleteRange(PrefixKey(id), PrefixKey(id + 1)));
  }
  return Status::OK();
}

void Catalog::OwnerAdvanced() {
  // The entries as they are now, collections' and views'.
  std::string entries;
  for (char prefix : {kCatalogMetaPrefix, kCatalogViewPrefix}) {
    Status scanned = engine_->ScanMetadata(
        std::string(1, prefix), [&](std::string_view key, std::string_view value) {
          entries.append(key).append(1, '\0').append(value).append(1, '\0');
          return Status::OK();
        });
    if (!scanned.ok()) return;
  }
  MutexLock f(&follow_mu_);
  if (entries == followed_entries_) return;
  if (Load().ok()) followed_entries_ = std::move(entries);
}

Status Catalog::Load() {
  MutexLock g(&mu_);
  MutexLock ids(&id_mu_);
  // Again (a read-only catalog following its owner): from nothing.
  collections_.clear();
  views_.clear();
  std::string next;
  bool found = false;
  ROCKDOC_RETURN_IF_ERROR(engine_->ReadMetadata(kCatalogNextIdKey, &next, &found));
  if (found && next.size() == 4) {
    next_id_ = LoadLE<uint32_t>(reinterpret_cast<const uint8_t*>(next.data()));
  }
  std::vector<std::string> entries;
  ROCKDOC_RETURN_IF_ERROR(engine_->ScanMetadata(
      std::string(1, kCatalogMetaPrefix), [&](std::string_view, std::string_view value) {
        entries.emplace_back(value);
        return Status::OK();
      }));
  for (const std::string& entry : entries) ROCKDOC_RETURN_IF_ERROR(LoadEntry(entry));
  entries.clear();
  ROCKDOC_RETURN_IF_ERROR(engine_->ScanMetadata(
      std::string(1, kCatalogViewPrefix), [&](std::string_view, std::string_view value) {
        entries.emplace_back(value);
        return Status::OK();
      }));
  for (const std::string& entry : entries) ROCKDOC_RETURN_IF_ERROR(LoadView(entry));
  view_count_.store(views_.size(), std::memory_order_release);
  return SettleStatistics();
}

Status Catalog::SettleStatistics() {
  // Clean: the last write to the database was the mark of a clean close,
  // so the entries hold every write's statistics. Any write since, by this
  // rockdoc or by an older one that knows nothing of statistics, took a
  // later sequence number.
  std::string mark;
  bool found = false;
  ROCKDOC_RETURN_IF_ERROR(engine_->ReadMetadata(kCatalogStatisticsCleanKey, &mark, &found));
  const bool clean =
      found && mark.size() == 8 &&
      LoadLE<uint64_t>(reinterpret_cast<const uint8_t*>(mark.data())) ==
          engine_->LatestSequenceNumber();
  for (const auto& [key, meta] : collections_) {
    CollectionStatistics& stats = *meta->statistics;
    // The document count is exact (kept in the documents' transactions):
    // an empty collection's sizes are known whatever happened, and sizes
    // that do not add up to the count are not every document's, whatever
    // the entry says. Without the mark of a clean close, writes after the
    // entry was last written may be missing from them.
    ROCKDOC_ASSIGN_OR_RETURN(int64_t count, ReadCount(meta->id));
    const bool known = stats.sizes_known();
    const int64_t total = known ? stats.Snapshot().document_sizes.total() : -1;
    if (count == 0) {
      if (total != 0) stats.SetLoadedSizes(/*known_empty=*/true);
    } else if (known && (!clean || total != count)) {
      stats.SetLoadedSizes(/*known_empty=*/false);
    }
  }
  return Status::OK();
}

void Catalog::BeforeClose() {
  // Best effort, as Client::Close's PersistUsage: a failure leaves the
  // mark behind the last write, and the next open takes the sizes for
  // unknown. No operation runs: the mark's write (one batch, one sequence
  // number) is the next after the latest.
  if (!PersistUsage().ok()) return;
  std::string mark;
  AppendLE<uint64_t>(&mark, engine_->LatestSequenceNumber() + 1);
  engine_
      ->WriteMetadata({{Engine::MetadataWrite::Op::kPut, std::string(kCatalogStatisticsCleanKey), mark}})
      .IgnoreError();
}

Status Catalog::LoadEntry(std::string_view value) {
  {
    auto doc = Document::FromBytes(value);
    if (!doc.ok()) {
      return Status(ErrorCode::kDataCorruptionDetected,
                    "catalog entry is damaged: " + std::string(doc.status().message()));
    }
    Element id = doc->Get("id"), db = doc->Get("db"), name = doc->Get("name");
    if (id.type() != BsonType::kInt64 || db.type() != BsonType::kString ||
        name.type() != BsonType::kString) {
      return Status(ErrorCode::kDataCorruptionDetected, "catalog entry lacks id/db/name");
    }
    auto meta = std::make_shared<CollectionMeta>();
    meta->id = static_cast<uint32_t>(id.Int64());
    meta->db = std::string(db.String());
    meta->name = std::string(name.String());
    if (meta->id >= next_id_) next_id_ = meta->id + 1;
    Element uuid = doc->Get("uuid");
    if (uuid.ok()) {
      std::optional<BinaryView> bin = uuid.AsBinary();
      if (!bin.has_value() || bin->subtype != BinarySubtype::kUuid || bin->data.size() != 16) {
        return Status(ErrorCode::kDataCorruptionDetected, "catalog entry has a bad uuid");
      }
      meta->uuid = std::string(bin->data);
    } else {
      // Written before collections had UUIDs: one derived from the prefix
      // id, the same at every open until the entry is next written.
      meta->uuid = DerivedUuid(meta->id);
    }
    Element id_usage = doc->Get("idIndexUsage");
    if (id_usage.ok()) {
      Element accesses = id_usage.IsDocument() ? id_usage.Document().Get("accesses") : Element();
      Element since = id_usage.IsDocument() ? id_usage.Document().Get("since") : Element();
      if (accesses.type() != BsonType::kInt64 || since.type() != BsonType::kInt64) {
        return Status(ErrorCode::kDataCorruptionDetected, "catalog entry has a bad idIndexUsage");
      }
      meta->id_index_accesses.store(accesses.Int64(), std::memory_order_relaxed);
      meta->id_index_persisted_accesses.store(accesses.Int64(), std::memory_order_relaxed);
      meta->id_index_since_ms = since.Int64();
    }
    Element statistics = doc->Get("statistics");
    if (statistics.ok() && !meta->statistics->Load(statistics).ok()) {
      // Figures derived from the documents, and rebuilt from them: damage
      // here is no reason to refuse the database. They start again.
      meta->statistics = std::make_shared<CollectionStatistics>();
      meta->statistics->SetLoadedSizes(/*known_empty=*/false);
    }
    if (!statistics.ok()) {
      // Written before rockdoc kept statistics (SettleStatistics decides).
      meta->statistics->SetLoadedSizes(/*known_empty=*/false);
    }
    Element indexes = doc->Get("indexes");
    if (indexes.ok()) {
      if (indexes.type() != BsonType::kArray) {
        return Status(ErrorCode::kDataCorruptionDetected, "catalog entry has a bad index list");
      }
      std::vector<std::shared_ptr<IndexDescriptor>> list;
      for (Element entry : indexes.Array()) {
        if (entry.type() != BsonType::kDocument) {
          return Status(ErrorCode::kDataCorruptionDetected, "catalog entry has a bad index");
        }
        ROCKDOC_ASSIGN_OR_RETURN(auto index, IndexDescriptor::FromCatalogEntry(entry.Document()));
        if (index->id() >= next_id_) next_id_ = index->id() + 1;
        list.push_back(std::move(index));
      }
      meta->set_indexes(std::make_shared<const IndexSet>(std::move(list)));
    }
    Element order = doc->Get("cappedOrderId");
    if (order.ok()) {
      if (order.type() != BsonType::kInt64) {
        return Status(ErrorCode::kDataCorruptionDetected, "catalog entry has a bad cappedOrderId");
      }
      meta->capped_order_id = static_cast<uint32_t>(order.Int64());
      meta->capped = std::make_shared<CappedState>();
      if (meta->capped_order_id >= next_id_) next_id_ = meta->capped_order_id + 1;
    }
    Element options = doc->Get("options");
    if (options.ok()) {
      if (options.type() != BsonType::kDocument) {
        return Status(ErrorCode::kDataCorruptionDetected, "catalog entry has bad options");
      }
      auto parsed = PersistedCollectionOptions(meta->db, options.Document());
      if (!parsed.ok()) {
        return Status(ErrorCode::kDataCorruptionDetected,
                      "catalog entry of " + meta->full_name() + " has options that do not parse: " +
                          std::string(parsed.status().message()));
      }
      meta->set_options(std::make_shared<const CollectionOptions>(std::move(*parsed)));
    }
    collections_[Key(meta->db, meta->name)] = std::move(meta);
  }
  return Status::OK();
}

namespace {
thread_local KvTransaction* current_transaction = nullptr;
}  // namespace

CatalogTransactionScope::CatalogTransactionScope(KvTransaction* txn)
    : previous_(current_transaction) {
  current_transaction = txn;
}

CatalogTransactionScope::~CatalogTransactionScope() { current_transaction = previous_; }

KvTransaction* CatalogTransactionScope::Current() { return current_transaction; }

std::shared_ptr<CollectionMeta> Catalog::Find(std::string_view db, std::string_view name) const {
  MutexLock g(&mu_);
  const Key key{std::string(db), std::string(name)};
  auto it = collections_.find(key);
  return it == collections_.end() ? FindPendingLocked(key) : it->second;
}

std::shared_ptr<CollectionMeta> Catalog::FindPendingLocked(const Key& key) const {
  if (pending_.empty()) return nullptr;
  auto it = pending_.find(key);
  const KvTransaction* txn = CatalogTransactionScope::Current();
  if (it == pending_.end() || txn == nullptr || it->second.txn != txn) return nullptr;
  return it->second.meta;
}

void Catalog::CommitCreations(const KvTransaction* txn) { EndCreations(txn, true); }

void Catalog::AbortCreations(const KvTransaction* txn) { EndCreations(txn, false); }

void Catalog::EndCreations(const KvTransaction* txn, bool committed) {
  MutexLock g(&mu_);
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.txn != txn) {
      ++it;
      continue;
    }
    if (committed) {
      it->second.meta->creating_txn.store(nullptr, std::memory_order_release);
      collections_[it->first] = std::move(it->second.meta);
    } else {
      // Its documents and catalog entry went with the transaction; a
      // writer still holding it looks the name up again.
      it->second.meta->dropped.store(true, std::memory_order_release);
    }
    it = pending_.erase(it);
  }
}

StatusOr<uint32_t> Catalog::AllocateId() {
  MutexLock g(&id_mu_);
  uint32_t id = next_id_++;
  std::string v;
  AppendLE<uint32_t>(&v, next_id_);
  ROCKDOC_RETURN_IF_ERROR(
      engine_->WriteMetadata({{Engine::MetadataWrite::Op::kPut, std::string(kCatalogNextIdKey), v}})
          .WithContext("allocating a collection id"));
  return id;
}

Status Catalog::Persist(const CollectionMeta& meta, std::string_view delete_key,
                        const std::vector<std::string>& events) {
  MutexLock persist(&meta.persist_mu);
  return PersistLocked(meta, delete_key, nullptr, events);
}

std::string CatalogEvent(const CatalogChange& change) {
  BsonBuilder b;
  b.AppendString("operationType", change.operation);
  b.AppendDateTime("wallTime", WallMillis());
  b.OpenDocument("ns").AppendString("db", change.db);
  if (!change.coll.empty()) b.AppendString("coll", change.coll);
  b.Close();
  if (!change.to.empty()) {
    b.OpenDocument("to").AppendString("db", change.db).AppendString("coll", change.to).Close();
  }
  if (change.uuid.size() == 16) {
    b.AppendBinary("collectionUUID", BinarySubtype::kUuid, change.uuid);
  }
  if (!change.description.empty()) b.AppendDocument("operationDescription", change.description);
  if (!change.state_before.empty()) b.AppendDocument("stateBeforeChange", change.state_before);
  return std::string(std::move(b).Build().bytes());
}

Status Catalog::RecordEvent(const std::string& event) {
  return engine_->WriteMetadata({}, {event});
}

Status Catalog::RecordDropDatabase(std::string_view db) {
  return RecordEvent(CatalogEvent({.operation = "dropDatabase", .db = db}));
}

Document Catalog::EntryOf(
    const CollectionMeta& meta,
    const std::vector<std::pair<IndexDescriptor*, MultikeyPaths>>* multikey_override,
    std::vector<std::pair<const IndexDescriptor*, int64_t>>* usage_written,
    uint64_t* statistics_version) const {
  BsonBuilder b;
  b.AppendInt64("id", meta.id).AppendString("db", meta.db).AppendString("name", meta.name);
  b.AppendBinary("uuid", BinarySubtype::kUuid, meta.uuid);
  if (meta.is_capped()) b.AppendInt64("cappedOrderId", meta.capped_order_id);
  b.OpenDocument("idIndexUsage")
      .AppendInt64("accesses", meta.id_index_accesses.load(std::memory_order_relaxed))
      .AppendInt64("since", meta.id_index_since_ms)
      .Close();
  std::shared_ptr<const IndexSet> indexes = meta.indexes();
  if (!indexes->empty()) {
    b.OpenArray("indexes");
    for (const auto& index : *indexes) {
      MultikeyPaths paths = index->multikey_paths();
      if (multikey_override != nullptr) {
        for (const auto& [target, override_paths] : *multikey_override) {
          if (target == index.get()) paths = override_paths;
        }
      }
      b.OpenDocument("");
      usage_written->emplace_back(index.get(), index->AppendCatalogEntry(&b, paths));
      b.Close();
    }
    b.Close();
  }
  std::shared_ptr<const CollectionOptions> options = meta.options();
  Document options_doc = options->ToDocument();
  if (!options_doc.view().empty()) b.AppendDocument("options", options_doc.view());
  *statistics_version = meta.statistics->AppendTo(&b, "statistics");
  return std::move(b).Build();
}

Status Catalog::PersistLocked(
    const CollectionMeta& meta, std::string_view delete_key,
    const std::vector<std::pair<IndexDescriptor*, MultikeyPaths>>* multikey_override,
    const std::vector<std::string>& events) {
  // The usage counts this entry records, marked as persisted once it is
  // written (a failed write leaves them to be written again).
  const int64_t id_accesses = meta.id_index_accesses.load(std::memory_order_relaxed);
  std::vector<std::pair<const IndexDescriptor*, int64_t>> usage_written;
  uint64_t statistics_version = 0;
  Document doc = EntryOf(meta, multikey_override, &usage_written, &statistics_version);
  if (const KvTransaction* creator = meta.creating_txn.load(std::memory_order_acquire)) {
    // A transaction's creation: its entry commits (or not) with the
    // transaction. Only that transaction's operations see the collection,
    // so the thread's transaction is the creator.
    KvTransaction* txn = CatalogTransactionScope::Current();
    if (txn != creator || !delete_key.empty()) {
      return Status(ErrorCode::kInternalError,
                    "the catalog entry of " + meta.full_name() +
                        " written outside the transaction creating it");
    }
    return txn->Put(KeySpace::kCatalog, CatalogMetaKey(meta.db, meta.name), doc.bytes());
  }
  std::vector<Engine::MetadataWrite> writes;
  writes.push_back({Engine::MetadataWrite::Op::kPut, CatalogMetaKey(meta.db, meta.name),
                    std::string(doc.bytes())});
  if (!delete_key.empty()) {
    writes.push_back({Engine::MetadataWrite::Op::kDelete, std::string(delete_key), {}});
  }
  ROCKDOC_RETURN_IF_ERROR(engine_->WriteMetadata(writes, events));
  meta.id_index_persisted_accesses.store(id_accesses, std::memory_order_relaxed);
  for (const auto& [index, accesses] : usage_written) index->MarkUsagePersisted(accesses);
  meta.statistics->MarkPersisted(statistics_version);
  return Status::OK();
}

Status Catalog::PersistCollection(const CollectionMeta& meta,
                                  const std::vector<std::string>& events) {
  return Persist(meta, {}, events);
}

Status Catalog::PersistUsage() {
  std::vector<std::shared_ptr<CollectionMeta>> changed;
  {
    MutexLock g(&mu_);
    for (const auto& [key, meta] : collections_) {
      bool moved = meta->id_index_accesses.load(std::memory_order_relaxed) !=
                       meta->id_index_persisted_accesses.load(std::memory_order_relaxed) ||
                   meta->statistics->ChangedSincePersisted();
      for (const auto& index : *meta->indexes()) moved = moved || index->UsageChanged();
      if (moved) changed.push_back(meta);
    }
  }
  for (const auto& meta : changed) {
    // Shared, as a writer holds it: a drop (exclusive) cannot slip in
    // between the check and the write and have its entry written back.
    meta->mu.ReaderLock();
    Status st = meta->dropped.load(std::memory_order_acquire) ? Status::OK() : Persist(*meta);
    meta->mu.ReaderUnlock();
    ROCKDOC_RETURN_IF_ERROR(st);
  }
  return Status::OK();
}

Status Catalog::PersistMultikeyPaths(
    const CollectionMeta& meta,
    const std::vector<std::pair<IndexDescriptor*, MultikeyPaths>>& seen) {
  MutexLock persist(&meta.persist_mu);
  // Merge under the lock: every update of the paths goes through here, so
  // nothing merged by another writer can be lost.
  std::vector<std::pair<IndexDescriptor*, MultikeyPaths>> merged;
  for (const auto& [index, paths] : seen) {
    MultikeyPaths current = index->multikey_paths();
    bool grew = false;
    for (size_t i = 0; i < paths.size() && i < current.size(); ++i) {
      for (size_t c : paths[i]) grew = current[i].insert(c).second || grew;
    }
    if (grew) merged.emplace_back(index, std::move(current));
  }
  if (merged.empty()) return Status::OK();
  ROCKDOC_RETURN_IF_ERROR(PersistLocked(meta, {}, &merged));
  for (auto& [index, paths] : merged) index->SetMultikeyPaths(std::move(paths));
  return Status::OK();
}

StatusOr<std::shared_ptr<CollectionMeta>> Catalog::GetOrCreate(std::string_view db,
                                                               std::string_view name) {
  MutexLock g(&mu_);
  return GetOrCreateLocked(db, name, nullptr);
}

StatusOr<std::shared_ptr<CollectionMeta>> Catalog::GetOrCreateLocked(
    std::string_view db, std::string_view name, bool* created, const CollectionOptions* options) {
  if (created != nullptr) *created = false;
  const Key key{std::string(db), std::string(name)};
  auto it = collections_.find(key);
  if (it != collections_.end()) return it->second;
  if (views_.count(key) != 0) return ViewNotCollection(db, name);
  KvTransaction* txn = CatalogTransactionScope::Current();
  if (auto pending = pending_.find(key); pending != pending_.end()) {
    if (txn != nullptr && pending->second.txn == txn) return pending->second.meta;
    // MongoDB's answer to the second creator while the first transaction
    // is open (in a transaction, labelled TransientTransactionError).
    return Status(ErrorCode::kWriteConflict,
                  "Collection " + std::string(db) + "." + std::string(name) +
                      " is being created by a transaction that has not committed");
  }
  ROCKDOC_RETURN_IF_ERROR(ValidateDatabaseName(db));
  ROCKDOC_RETURN_IF_ERROR(ValidateCollectionName(db, name));
  ROCKDOC_ASSIGN_OR_RETURN(uint32_t id, AllocateId());
  auto meta = std::make_shared<CollectionMeta>();
  meta->id = id;
  meta->db = std::string(db);
  meta->name = std::string(name);
  meta->uuid = options != nullptr && !options->uuid.empty() ? options->uuid : RandomUuid();
  if (options != nullptr) {
    meta->set_options(std::make_shared<const CollectionOptions>(*options));
    if (options->capped) {
      ROCKDOC_ASSIGN_OR_RETURN(meta->capped_order_id, AllocateId());
      meta->capped = std::make_shared<CappedState>();
    }
  }
  if (created != nullptr) *created = true;
  // In a transaction, the transaction's: Persist writes its entry through
  // it, and it stays out of collections_ until the commit.
  meta->creating_txn.store(txn, std::memory_order_release);
  // Its create event (shown under showExpandedEvents), in the entry's
  // batch. A transaction's creation writes its entry through the
  // transaction, whose events are the store's: it has none.
  std::vector<std::string> events;
  if (txn == nullptr && engine_->change_log() != nullptr) {
    BsonBuilder description;
    for (const Element& e : meta->options()->ToDocument()) description.AppendElement(e);
    description.OpenDocument("idIndex")
        .AppendInt32("v", 2)
        .OpenDocument("key")
        .AppendInt32("_id", 1)
        .Close()
        .AppendString("name", "_id_")
        .Close();
    const Document description_doc = std::move(description).Build();
    events.push_back(CatalogEvent({.operation = "create",
                                   .db = meta->db,
                                   .coll = meta->name,
                                   .uuid = meta->uuid,
                                   .description = description_doc}));
  }
  ROCKDOC_RETURN_IF_ERROR(Persist(*meta, {}, events));
  if (txn != nullptr) {
    pending_[key] = PendingCreation{meta, txn};
    return meta;
  }
  collections_[key] = meta;
  return meta;
}

namespace {

Status InvalidOptions(std::string message) {
  return Status(ErrorCode::kInvalidOptions, std::move(message));
}

// The options as the catalog persists them (CollectionOptions::ToDocument),
// decoded strictly: a name or a type ToDocument does not write is not the
// catalog's, and the caller reports it as corruption. The create command's
// own decoding, with MongoDB's leniency and messages, is command/'s.
Status NotPersisted(const Element& e) {
  return Status(ErrorCode::kDataCorruptionDetected, "the persisted option '" +
                                                        std::string(e.key()) + "' is a " +
                                                        std::string(BsonTypeAlias(e.type())));
}
Status PersistedWhole(const Element& e, std::optional<int64_t>* out) {
  int64_t n = 0;
  if (!e.IsNumber() || !e.ExactInt64(&n)) return NotPersisted(e);
  *out = n;
  return Status::OK();
}
constexpr OptionField<CreateCollectionOptions> kPersistedOptionFields[] = {
    {"capped",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       if (e.type() != BsonType::kBool) return NotPersisted(e);
       o->capped = e.Bool();
       return Status::OK();
     }},
    {"size",
     [](const Element& e, CreateCollectionOptions* o) { return PersistedWhole(e, &o->size); }},
    {"max",
     [](const Element& e, CreateCollectionOptions* o) { return PersistedWhole(e, &o->max); }},
    {"validator",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       if (e.type() != BsonType::kDocument) return NotPersisted(e);
       o->validator = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"validationLevel",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->validation_level, ParseValidationLevel(e, "catalog"));
       return Status::OK();
     }},
    {"validationAction",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->validation_action, ParseValidationAction(e, "catalog"));
       return Status::OK();
     }},
    {"changeStreamPreAndPostImages",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->change_stream_pre_and_post_images,
                                ParsePreAndPostImagesOption(e, "catalog"));
       return Status::OK();
     }},
    {"collation",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       if (e.type() != BsonType::kDocument) return NotPersisted(e);
       o->collation = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
};

StatusOr<CollectionOptions> PersistedCollectionOptions(std::string_view db, DocumentView stored) {
  CreateCollectionOptions options;
  auto not_ours = [](std::string_view name) {
    return Status(ErrorCode::kDataCorruptionDetected,
                  "'" + std::string(name) + "' is not a persisted option");
  };
  ROCKDOC_RETURN_IF_ERROR(
      DecodeOptions(stored, kPersistedOptionFields, &options, not_ours, not_ours));
  return MakeCollectionOptions(db, options);
}

}  // namespace

bool IsInternalDatabaseName(std::string_view db) {
  return db == "admin" || db == "local" || db == "config";
}

StatusOr<std::shared_ptr<const MatchExpression>> ParseValidator(std::string_view db,
                                                                DocumentView validator) {
  if (validator.empty()) return std::shared_ptr<const MatchExpression>();
  if (IsInternalDatabaseName(db)) {
    return InvalidOptions("Document validators not allowed on system collection " +
                          std::string(db) + " database");
  }
  ROCKDOC_ASSIGN_OR_RETURN(auto expr, ParseMatchExpression(validator));
  return std::shared_ptr<const MatchExpression>(std::move(expr));
}

StatusOr<ValidationLevel> ParseValidationLevel(const Element& e, std::string_view command) {
  if (e.type() != BsonType::kString) {
    return TypeMismatch("BSON field '" + std::string(command) +
                        ".validationLevel' is the wrong type '" +
                        std::string(BsonTypeAlias(e.type())) + "', expected type 'string'");
  }
  if (e.String() == "off") return ValidationLevel::kOff;
  if (e.String() == "strict") return ValidationLevel::kStrict;
  if (e.String() == "moderate") return ValidationLevel::kModerate;
  return BadValue("Enumeration value '" + std::string(e.String()) + "' for field '" +
                  std::string(command) + ".validationLevel' is not a valid value.");
}

StatusOr<ValidationAction> ParseValidationAction(const Element& e, std::string_view command) {
  if (e.type() != BsonType::kString) {
    return TypeMismatch("BSON field '" + std::string(command) +
                        ".validationAction' is the wrong type '" +
                        std::string(BsonTypeAlias(e.type())) + "', expected type 'string'");
  }
  if (e.String() == "error") return ValidationAction::kError;
  if (e.String() == "warn") return ValidationAction::kWarn;
  return BadValue("Enumeration value '" + std::string(e.String()) + "' for field '" +
                  std::string(command) + ".validationAction' is not a valid value.");
}

StatusOr<bool> ParsePreAndPostImagesOption(const Element& e, std::string_view command) {
  const std::string field = std::string(command) + ".changeStreamPreAndPostImages";
  auto wrong_type = [](const std::string& name, const Element& v, std::string_view expected) {
    return TypeMismatch("BSON field '" + name + "' is the wrong type '" +
                        std::string(BsonTypeAlias(v.type())) + "', expected type '" +
                        std::string(expected) + "'");
  };
  if (!e.IsDocument()) return wrong_type(field, e, "object");
  std::optional<bool> enabled;
  for (const Element& sub : e.Document()) {
    if (sub.key() != "enabled") {
      return Status(
          ErrorCode::kUnknownBsonField,
          "BSON field '" + field + "." + std::string(sub.key()) + "' is an unknown field.");
    }
    if (!sub.IsBool()) return wrong_type(field + ".enabled", sub, "bool");
    enabled = sub.Bool();
  }
  if (!enabled) {
    return Status(static_cast<ErrorCode>(40414),
                  "BSON field '" + field + ".enabled' is missing but a required field");
  }
  return *enabled;
}

Status CheckPreAndPostImagesAllowed(std::string_view db, bool enabled) {
  if (!enabled || !IsInternalDatabaseName(db)) return Status::OK();
  return InvalidOptions("changeStreamPreAndPostImages may not be enabled on a collection of the " +
                        std::string(db) + " database");
}

void CappedState::NotifyWrite() {
  {
    MutexLock g(&signal_mu_);
    ++writes_;
  }
  signal_.notify_all();
}

void CappedState::Wake() {
  // Under the lock, so that a waiter between its check of `stop` and its
  // wait cannot miss it.
  MutexLock g(&signal_mu_);
  signal_.notify_all();
}

bool CappedState::WaitForWrite(uint64_t seen, int64_t timeout_ms, const std::atomic<bool>* stop) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  signal_mu_.Lock();
  // Waits on the held lock (adopted, then handed back), as BackgroundRunner.
  std::unique_lock<std::mutex> held(signal_mu_.native(), std::adopt_lock);
  while (writes_ == seen && !(stop != nullptr && stop->load(std::memory_order_acquire))) {
    if (signal_.wait_until(held, until) == std::cv_status::timeout) break;
  }
  const bool changed = writes_ != seen;
  held.release();
  signal_mu_.Unlock();
  return changed;
}

int64_t RoundCappedSize(int64_t size) {
  return size <= 4096 ? 4096 : (size + 255) / 256 * 256;
}

Document CollectionOptions::ToDocument() const {
  BsonBuilder b;
  if (capped) {
    b.AppendBool("capped", true);
    AppendNumber(&b, "size", capped_size);
    if (capped_max > 0) AppendNumber(&b, "max", capped_max);
  }
  if (validator_expr != nullptr) b.AppendDocument("validator", validator.view());
  if (has_validation_level) {
    b.AppendString("validationLevel", validation_level == ValidationLevel::kOff      ? "off"
                                      : validation_level == ValidationLevel::kStrict ? "strict"
                                                                                     : "moderate");
  }
  if (has_validation_action) {
    b.AppendString("validationAction",
                   validation_action == ValidationAction::kError ? "error" : "warn");
  }
  if (change_stream_pre_and_post_images) {
    b.OpenDocument("changeStreamPreAndPostImages").AppendBool("enabled", true).Close();
  }
  if (collator != nullptr) b.AppendDocument("collation", collator->spec());
  return std::move(b).Build();
}

StatusOr<CollectionOptions> MakeCollectionOptions(std::string_view db,
                                                  const CreateCollectionOptions& given) {
  CollectionOptions o;
  if (given.pipeline && !given.view_on) {
    return InvalidOptions("'pipeline' requires 'viewOn' to also be specified");
  }
  if (given.view_on) {
    if (given.view_on->empty()) return BadValue("'viewOn' cannot be empty");
    if (given.collation) {
      return Status(ErrorCode::kNotImplemented,
                    "a view's collation is not supported by rockdoc (a view reads with its "
                    "collection's)");
    }
    // A view is its definition alone.
    if (given.capped || given.size || given.max || given.validator || given.validation_level ||
        given.validation_action || given.change_stream_pre_and_post_images) {
      return InvalidOptions("a view takes no option but viewOn and pipeline (and collation, "
                            "which rockdoc does not support)");
    }
    o.view_on = *given.view_on;
    if (given.pipeline) o.pipeline = *given.pipeline;
    return o;
  }
  if (given.capped) {
    // MongoDB's rules (create_collection.cpp): size is required, positive,
    // at most 1 PB; max under 2^31; the size rounded up.
    if (!given.size) return InvalidOptions("the 'size' field is required when 'capped' is true");
    if (*given.size <= 0) return InvalidOptions("size has to be a positive number");
    if (*given.size > (int64_t{1} << 50)) return InvalidOptions("size cannot exceed 1 PB");
    const int64_t max = given.max.value_or(0);
    if (max >= (int64_t{1} << 31)) {
      return InvalidOptions("max in a capped collection has to be < 2^31 or not set");
    }
    o.capped = true;
    o.capped_size = RoundCappedSize(*given.size);
    o.capped_max = max < 0 ? 0 : max;  // MongoDB: a negative max means no limit
  } else if (given.size || given.max) {
    // MongoDB 7.0 ignores size and max without capped; rockdoc refuses
    // rather than accept an option that would do nothing.
    return InvalidOptions("the 'size' and 'max' fields apply only to capped collections "
                          "(capped: true)");
  }
  if (given.validator) {
    ROCKDOC_ASSIGN_OR_RETURN(o.validator_expr, ParseValidator(db, given.validator->view()));
    o.validator = *given.validator;
  }
  // A validation level or action without a validator is allowed, as
  // MongoDB allows it: they apply once collMod sets a validator.
  if (given.validation_level) {
    o.validation_level = *given.validation_level;
    o.has_validation_level = true;
  }
  if (given.validation_action) {
    o.validation_action = *given.validation_action;
    o.has_validation_action = true;
  }
  o.change_stream_pre_and_post_images = given.change_stream_pre_and_post_images.value_or(false);
  ROCKDOC_RETURN_IF_ERROR(CheckPreAndPostImagesAllowed(db, o.change_stream_pre_and_post_images));
  if (given.collation) {
    ROCKDOC_ASSIGN_OR_RETURN(o.collator, Collator::Make(*given.collation));
  }
  return o;
}

Status Catalog::Create(std::string_view db, std::string_view name,
                       const CollectionOptions& options) {
  ROCKDOC_RETURN_IF_ERROR(ValidateDatabaseName(db));
  ROCKDOC_RETURN_IF_ERROR(ValidateCollectionName(db, name));
  // Check and create under one lock: of racing creators exactly one wins.
  MutexLock g(&mu_);
  const Key key{std::string(db), std::string(name)};
  if (collections_.count(key) != 0 || views_.count(key) != 0 || FindPendingLocked(key) != nullptr) {
    return Status(ErrorCode::kNamespaceExists,
                  "Collection " + std::string(db) + "." + std::string(name) + " already exists.");
  }
  return GetOrCreateLocked(db, name, nullptr, &options).status();
}

Status Catalog::DropLocked(std::shared_ptr<CollectionMeta> meta) {
  // Wait for in-flight writers, then make the collection unreachable.
  WriterMutexLock writers(&meta->mu);
  meta->dropped.store(true, std::memory_order_release);
  ROCKDOC_RETURN_IF_ERROR(
      engine_
          ->WriteMetadata(
              {{Engine::MetadataWrite::Op::kDelete, CatalogMetaKey(meta->db, meta->name), {}},
               {Engine::MetadataWrite::Op::kDelete, CountKey(meta->id), {}}},
              {CatalogEvent(
                  {.operation = "drop", .db = meta->db, .coll = meta->name, .uuid = meta->uuid})})
          .WithContext("dropping " + meta->full_name()));
  collections_.erase(Key(meta->db, meta->name));
  // Ids are never reused, so the documents and index entries are
  // unreachable from here on; the range deletions reclaim their space.
  ROCKDOC_RETURN_IF_ERROR(engine_->DeleteRange(PrefixKey(meta->id), PrefixKey(meta->id + 1)));
  if (meta->is_capped()) {
    ROCKDOC_RETURN_IF_ERROR(engine_->DeleteRange(PrefixKey(meta->capped_order_id),
                                                 PrefixKey(meta->capped_order_id + 1)));
  }
  for (const auto& index : *meta->indexes()) {
    ROCKDOC_RETURN_IF_ERROR(
        engine_->DeleteRange(PrefixKey(index->id()), PrefixKey(index->id() + 1)));
  }
  return Status::OK();
}

Status Catalog::Drop(std::string_view db, std::string_view name, bool* existed) {
  MutexLock g(&mu_);
  const Key key{std::string(db), std::string(name)};
  if (auto view = views_.find(key); view != views_.end()) {
    if (existed != nullptr) *existed = true;
    ROCKDOC_RETURN_IF_ERROR(
        engine_->WriteMetadata({{Engine::MetadataWrite::Op::kDelete, CatalogViewKey(db, name), {}}})
            .WithContext("dropping the view " + view->second->full_name()));
    views_.erase(view);
    view_count_.store(views_.size(), std::memory_order_release);
    return Status::OK();
  }
  auto it = collections_.find(key);
  if (existed != nullptr) *existed = it != collections_.end();
  if (it == collections_.end()) return Status::OK();
  return DropLocked(it->second);
}

Status Catalog::Rename(std::string_view db, std::string_view from, std::string_view to,
                       bool drop_target) {
  ROCKDOC_RETURN_IF_ERROR(ValidateCollectionName(db, to));
  MutexLock g(&mu_);
  if (views_.count(Key(std::string(db), std::string(from))) != 0) {
    return Status(ErrorCode::kCommandNotSupportedOnView,
                  "cannot rename view: " + std::string(db) + "." + std::string(from));
  }
  if (views_.count(Key(std::string(db), std::string(to))) != 0) {
    return Status(ErrorCode::kNamespaceExists,
                  "a view already exists with that name: " + std::string(db) + "." + std::string(to));
  }
  auto src = collections_.find(Key(std::string(db), std::string(from)));
  if (src == collections_.end()) {
    return Status(ErrorCode::kNamespaceNotFound,
                  "Source collection " + std::string(db) + "." + std::string(from) +
                      " does not exist");
  }
  if (from == to) {
    return Status(ErrorCode::kIllegalOperation, "Can't rename a collection to itself");
  }
  auto dst = collections_.find(Key(std::string(db), std::string(to)));
  // The expanded rename event's description: its target, and the UUID of
  // the collection it replaced (MongoDB's dropTarget), if any.
  BsonBuilder description;
  description.OpenDocument("to").AppendString("db", db).AppendString("coll", to).Close();
  if (dst != collections_.end()) {
    if (!drop_target) {
      return Status(ErrorCode::kNamespaceExists,
                    "target namespace exists: " + std::string(db) + "." + std::string(to));
    }
    if (dst->second->uuid.size() == 16) {
      description.AppendBinary("dropTarget", BinarySubtype::kUuid, dst->second->uuid);
    }
    ROCKDOC_RETURN_IF_ERROR(DropLocked(dst->second));
  }
  std::shared_ptr<CollectionMeta> old = src->second;
  WriterMutexLock writers(&old->mu);
  // The renamed collection keeps its id (so its documents stay where they
  // are); handles on the old name see it gone.
  auto renamed = std::make_shared<CollectionMeta>();
  renamed->id = old->id;
  renamed->db = old->db;
  renamed->name = std::string(to);
  renamed->uuid = old->uuid;  // as MongoDB's rename within a database
  // The indexes keep their ids, entries, multikey paths and counters.
  renamed->set_indexes(old->indexes());
  renamed->id_index_since_ms = old->id_index_since_ms;
  renamed->id_index_accesses.store(old->id_index_accesses.load(std::memory_order_relaxed),
                                   std::memory_order_relaxed);
  renamed->statistics = old->statistics;  // shared: see CollectionMeta::statistics
  // And its options, and a capped collection its order and writers' state.
  renamed->set_options(old->options());
  renamed->capped_order_id = old->capped_order_id;
  renamed->capped = old->capped;
  const Document description_doc = std::move(description).Build();
  ROCKDOC_RETURN_IF_ERROR(Persist(*renamed, CatalogMetaKey(old->db, old->name),
                                  {CatalogEvent({.operation = "rename",
                                                 .db = old->db,
                                                 .coll = old->name,
                                                 .uuid = old->uuid,
                                                 .to = to,
                                                 .description = description_doc})}));
  old->dropped.store(true, std::memory_order_release);
  collections_.erase(src);
  collections_[Key(renamed->db, renamed->name)] = renamed;
  return Status::OK();
}

std::vector<std::string> Catalog::DatabaseNames() const {
  MutexLock g(&mu_);
  std::set<std::string> names;
  for (const auto& [key, meta] : collections_) names.insert(key.first);
  for (const auto& [key, view] : views_) names.insert(key.first);
  return std::vector<std::string>(names.begin(), names.end());
}

std::vector<std::string> Catalog::CollectionNames(std::string_view db) const {
  MutexLock g(&mu_);
  std::vector<std::string> names;
  for (const auto& [key, meta] : collections_)
    if (key.first == db) names.push_back(key.second);
  return names;
}

// ---- Views ----

Status ViewNotCollection(std::string_view db, std::string_view name) {
  return Status(ErrorCode::kCommandNotSupportedOnView,
                "Namespace " + std::string(db) + "." + std::string(name) +
                    " is a view, not a collection");
}

Status Catalog::LoadView(std::string_view value) {
  auto doc = Document::FromBytes(value);
  auto damaged = [](std::string why) {
    return Status(ErrorCode::kDataCorruptionDetected, "a view's catalog entry is damaged: " + why);
  };
  if (!doc.ok()) return damaged(std::string(doc.status().message()));
  const Element db = doc->Get("db"), name = doc->Get("name"), on = doc->Get("viewOn"),
                pipeline = doc->Get("pipeline"), depends = doc->Get("dependsOn");
  if (db.type() != BsonType::kString || name.type() != BsonType::kString ||
      on.type() != BsonType::kString || pipeline.type() != BsonType::kArray ||
      depends.type() != BsonType::kArray) {
    return damaged("it lacks db, name, viewOn, pipeline or dependsOn");
  }
  auto view = std::make_shared<ViewDefinition>();
  view->db = std::string(db.String());
  view->name = std::string(name.String());
  view->view_on = std::string(on.String());
  view->pipeline = Document::AdoptValidated(std::string(pipeline.Array().bytes()));
  for (const Element& d : depends.Array()) {
    if (d.type() != BsonType::kString) return damaged("dependsOn holds a non-string");
    view->depends_on.emplace_back(d.String());
  }
  views_[Key(view->db, view->name)] = std::move(view);
  return Status::OK();
}

std::shared_ptr<const ViewDefinition> Catalog::FindView(std::string_view db,
                                                        std::string_view name) const {
  if (view_count_.load(std::memory_order_acquire) == 0) return nullptr;
  MutexLock g(&mu_);
  auto it = views_.find(Key(std::string(db), std::string(name)));
  return it == views_.end() ? nullptr : it->second;
}

std::vector<std::string> Catalog::ViewNames(std::string_view db) const {
  MutexLock g(&mu_);
  std::vector<std::string> names;
  for (const auto& [key, view] : views_)
    if (key.first == db) names.push_back(key.second);
  return names;
}

Status Catalog::CheckViewGraph(const ViewDefinition& view) const {
  // A cycle: some path of dependencies from the new definition leads back
  // to it (MongoDB's GraphContainsCycle). Depth: the chain of viewOn.
  std::vector<std::string> path = {view.full_name()};
  std::set<std::string> done;
  // The walks below read a copy (the lock is held; the lambdas cannot say so).
  const std::map<Key, std::shared_ptr<const ViewDefinition>, std::less<>> views = views_;
  std::function<Status(const std::vector<std::string>&)> visit =
      [&](const std::vector<std::string>& deps) -> Status {
    for (const std::string& dep : deps) {
      if (dep == view.name) {
        std::string shown = "[";
        for (const std::string& p : path) shown += p + " => ";
        shown += view.full_name() + "]";
        return Status(ErrorCode::kGraphContainsCycle, "View cycle detected: " + shown);
      }
      if (done.count(dep) != 0) continue;
      done.insert(dep);
      auto it = views.find(Key(view.db, dep));
      if (it == views.end()) continue;
      path.push_back(it->second->full_name());
      ROCKDOC_RETURN_IF_ERROR(visit(it->second->depends_on));
      path.pop_back();
    }
    return Status::OK();
  };
  ROCKDOC_RETURN_IF_ERROR(visit(view.depends_on));
  int depth = 1;
  for (std::string on = view.view_on;; ++depth) {
    auto it = views.find(Key(view.db, on));
    if (it == views.end()) break;
    if (depth >= kMaxViewDepth) {
      return Status(ErrorCode::kViewDepthLimitExceeded,
                    "View depth too deep or view cycle detected. Maximum depth is " +
                        std::to_string(kMaxViewDepth));
    }
    on = it->second->view_on;
  }
  // Views defined on this one grow deeper too.
  std::function<int(const std::string&, int)> deepest = [&](const std::string& name, int d) {
    int most = d;
    for (const auto& [key, other] : views) {
      if (key.first == view.db && other->view_on == name && other->name != view.name) {
        most = std::max(most, deepest(other->name, d + 1));
      }
    }
    return most;
  };
  if (deepest(view.name, depth) > kMaxViewDepth) {
    return Status(ErrorCode::kViewDepthLimitExceeded,
                  "View depth too deep or view cycle detected. Maximum depth is " +
                      std::to_string(kMaxViewDepth));
  }
  return Status::OK();
}

Status Catalog::PersistView(const ViewDefinition& view, const std::vector<std::string>& events) {
  BsonBuilder b;
  b.AppendString("db", view.db).AppendString("name", view.name).AppendString("viewOn", view.view_on);
  b.AppendArray("pipeline", view.pipeline.view());
  b.OpenArray("dependsOn");
  for (const std::string& d : view.depends_on) b.AppendString("", d);
  b.Close();
  Document doc = std::move(b).Build();
  return engine_->WriteMetadata({{Engine::MetadataWrite::Op::kPut,
                                  CatalogViewKey(view.db, view.name), std::string(doc.bytes())}},
                                events);
}

Status Catalog::CreateView(ViewDefinition view) {
  ROCKDOC_RETURN_IF_ERROR(ValidateDatabaseName(view.db));
  ROCKDOC_RETURN_IF_ERROR(ValidateCollectionName(view.db, view.name));
  MutexLock g(&mu_);
  const Key key(view.db, view.name);
  if (collections_.count(key) != 0 || views_.count(key) != 0) {
    return Status(ErrorCode::kNamespaceExists, "Namespace " + view.full_name() + " already exists");
  }
  ROCKDOC_RETURN_IF_ERROR(CheckViewGraph(view));
  // Its create event: a view's has its definition and no UUID.
  BsonBuilder description;
  description.AppendString("viewOn", view.view_on).AppendArray("pipeline", view.pipeline.view());
  const Document description_doc = std::move(description).Build();
  ROCKDOC_RETURN_IF_ERROR(PersistView(view, {CatalogEvent({.operation = "create",
                                                           .db = view.db,
                                                           .coll = view.name,
                                                           .description = description_doc})}));
  views_[key] = std::make_shared<const ViewDefinition>(std::move(view));
  view_count_.store(views_.size(), std::memory_order_release);
  return Status::OK();
}

Status Catalog::ModifyView(ViewDefinition view) {
  MutexLock g(&mu_);
  const Key key(view.db, view.name);
  auto old = views_.find(key);
  if (old == views_.end()) {
    return Status(ErrorCode::kNamespaceNotFound, "ns does not exist: " + view.full_name());
  }
  ROCKDOC_RETURN_IF_ERROR(CheckViewGraph(view));
  // Its modify event: the new definition, and the old one before it (a
  // view has no UUID).
  BsonBuilder description, before;
  description.AppendString("viewOn", view.view_on).AppendArray("pipeline", view.pipeline.view());
  before.OpenDocument("collectionOptions")
      .AppendString("viewOn", old->second->view_on)
      .AppendArray("pipeline", old->second->pipeline.view())
      .Close();
  const Document description_doc = std::move(description).Build();
  const Document before_doc = std::move(before).Build();
  ROCKDOC_RETURN_IF_ERROR(PersistView(view, {CatalogEvent({.operation = "modify",
                                                           .db = view.db,
                                                           .coll = view.name,
                                                           .description = description_doc,
                                                           .state_before = before_doc})}));
  views_[key] = std::make_shared<const ViewDefinition>(std::move(view));
  return Status::OK();
}

StatusOr<int64_t> Catalog::ReadCount(uint32_t collection_id) const {
  std::string v;
  bool found = false;
  ROCKDOC_RETURN_IF_ERROR(
      engine_->ReadMetadata(CountKey(collection_id), &v, &found).WithContext("reading a count"));
  if (!found) return int64_t{0};
  if (v.size() != 8) return Status(ErrorCode::kDataCorruptionDetected, "count value is damaged");
  return LoadLE<int64_t>(reinterpret_cast<const uint8_t*>(v.data()));
}

}  // namespace rockdoc::internal

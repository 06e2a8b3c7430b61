// Client and Database: opening a directory, naming databases, and the
// catalog operations on collections.
#include "rockdoc/client.h"

#include <algorithm>

#include "api/client_internal.h"
#include "api/collection_internal.h"
#include "api/query_recorder.h"
#include "api/session_internal.h"
#include "catalog/catalog.h"
#include "common/option_table.h"
#include "exec/plan_executor.h"
#include "rockdoc/json.h"
#include "stats/telemetry.h"
#include "storage/change_log.h"
#include "storage/encryption.h"
#include "storage/engine.h"
#include "store/collection_lock.h"

namespace rockdoc {

using internal::Engine;

size_t DefaultBlockCacheBytes() { return internal::AutoBlockCacheBytes(); }

StatusOr<std::unique_ptr<Client>> Client::Open(const std::string& path,
                                               const ClientOptions& options) {
  return internal::ClientAccess::Open(path, options, nullptr);
}

StatusOr<std::unique_ptr<Client>> internal::ClientAccess::Open(
    const std::string& path, const ClientOptions& options,
    std::shared_ptr<rocksdb::FileSystem> file_system) {
  if (options.ttl_monitor_period_ms < 0) {
    return BadValue("ttl_monitor_period_ms must be >= 0 (0 turns the TTL monitor off)");
  }
  if (options.max_index_build_memory_bytes <= 0) {
    return BadValue("max_index_build_memory_bytes must be positive");
  }
  if (options.max_open_files != -1 && options.max_open_files < 20) {
    return BadValue("max_open_files must be -1 (no bound) or at least 20");
  }
  if (options.change_log_max_bytes <= 0) {
    return BadValue("change_log_max_bytes must be positive");
  }
  if (!(options.change_log_min_retention_hours >= 0)) {
    return BadValue("change_log_min_retention_hours must be >= 0");
  }
  ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<Engine> engine,
                           Engine::Open(path, options, std::move(file_system)));
  // The client core: the storage engine and, attached to it, the catalog
  // and the telemetry (query statistics, the profiler).
  Status loaded = internal::Catalog::AttachTo(engine.get());
  if (loaded.ok()) loaded = internal::Telemetry::AttachTo(engine.get());
  if (!loaded.ok()) {
    engine->Close().IgnoreError();  // already failing with `loaded`
    return loaded;
  }
  internal::StartTtlMonitor(engine);
  return std::unique_ptr<Client>(new Client(std::move(engine)));
}

StatusOr<SalvageReport> Client::Salvage(const std::string& path, const ClientOptions& options) {
  return Engine::Salvage(path, options);
}

StatusOr<KeyRotationReport> Client::RotateEncryptionKey(const std::string& path,
                                                        const std::string& old_key,
                                                        const std::string& new_key) {
  KeyRotationReport report;
  ROCKDOC_RETURN_IF_ERROR(internal::RotateDirectoryKey(path, old_key, new_key, &report));
  return report;
}

StatusOr<std::string> EncryptionKeyFromFile(const std::string& path) {
  return internal::ReadEncryptionKeyFile(path);
}

Client::Client(std::shared_ptr<Engine> engine)
    : engine_(std::move(engine)), rep_(std::make_unique<internal::ClientRep>()) {}

Client::~Client() { Close().IgnoreError(); }

Status Client::Close() {
  // The profiler's waiting entries go into system.profile, and the index
  // usage counters ($indexStats) and query statistics into the catalog, so
  // that they survive the restart (best effort: a failure to record them
  // must not keep the database from closing).
  internal::FlushAllProfiles(engine_).IgnoreError();
  {
    auto use = engine_->Enter();
    if (use.status().ok()) CatalogOf(*engine_).PersistUsage().IgnoreError();
  }
  return engine_->Close();
}

const std::string& Client::path() const { return engine_->path(); }

StorageStats Client::GetStorageStats() const { return engine_->GetStorageStats(); }

Status Client::Checkpoint(const std::string& dir) const { return engine_->Checkpoint(dir); }

Status Client::Compact() { return engine_->Compact(); }

Status Client::CatchUp() const { return engine_->CatchUp(); }

bool Client::read_only() const { return engine_->read_only(); }

Status Client::SetChangeLogRetention(int64_t max_bytes, double min_retention_hours) const {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  if (max_bytes <= 0) return BadValue("change_log_max_bytes must be positive");
  if (!(min_retention_hours >= 0)) return BadValue("change_log_min_retention_hours must be >= 0");
  internal::ChangeLog* log = engine_->change_log();
  if (log == nullptr) {
    return Status(ErrorCode::kIllegalOperation,
                  "the change log is off (ClientOptions::change_log): it has no retention");
  }
  log->SetRetention(max_bytes, min_retention_hours);
  return Status::OK();
}

Status Client::ClearQueryStats() const {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  StatsOf(*engine_).query_stats().Clear();
  return Status::OK();
}

StatusOr<Database::ProfilingStatus> Database::SetProfilingLevel(
    int level, std::optional<int64_t> slowms) const {
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(name_));
  if (level < -1 || level > 2) {
    return Status(ErrorCode::kBadValue,
                  "Invalid profiling level: " + std::to_string(level) + " (0, 1 or 2; -1 to read)");
  }
  if (slowms && *slowms < 0) {
    return Status(ErrorCode::kBadValue, "slowms must not be negative");
  }
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  if (level > 0 && !engine_->options().collect_statistics) {
    return Status(ErrorCode::kIllegalOperation,
                  "the profiler needs statistics, which this client does not collect "
                  "(ClientOptions::collect_statistics is false)");
  }
  internal::Profiler& profiler = StatsOf(*engine_).profiler();
  ProfilingStatus status;
  status.was = profiler.Set(name_, level, slowms, &status.slowms);
  return status;
}

Database Client::GetDatabase(std::string_view name) const {
  return Database(engine_, std::string(name));
}

StatusOr<std::vector<std::string>> Client::ListDatabaseNames() const {
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  return CatalogOf(*engine_).DatabaseNames();
}

Status Client::DropDatabase(std::string_view name) { return GetDatabase(name).Drop(); }

Collection Database::GetCollection(std::string_view name) const {
  return Collection(engine_, name_, std::string(name), session_);
}

Status Database::CreateCollection(std::string_view name) const {
  return Create(name, CreateCollectionOptions(), nullptr);
}

Status Database::CreateCollection(std::string_view name,
                                  const CreateCollectionOptions& options) const {
  return Create(name, options, nullptr);
}

Status Database::CreateCollectionWithUuid(std::string_view name,
                                          const CreateCollectionOptions& options,
                                          std::string_view uuid) const {
  if (uuid.size() != 16) {
    return Status(ErrorCode::kBadValue,
                  "a collection UUID is 16 bytes, not " + std::to_string(uuid.size()));
  }
  const std::string bytes(uuid);
  return Create(name, options, &bytes);
}

Status Database::Create(std::string_view name, const CreateCollectionOptions& options,
                        const std::string* uuid) const {
  // In a transaction a collection (not a view) is created as the
  // transaction's, as MongoDB 4.4+ does: others see it once it commits.
  const bool in_transaction = session_ != nullptr && session_->InTransaction();
  if (!in_transaction) ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "create"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  // Refuse what would not hold before creating anything.
  ROCKDOC_ASSIGN_OR_RETURN(internal::CollectionOptions decoded,
                           internal::MakeCollectionOptions(name_, options));
  if (uuid != nullptr) {
    if (decoded.is_view()) return Status(ErrorCode::kBadValue, "a view has no UUID");
    decoded.uuid = *uuid;
  }
  if (decoded.is_view()) {
    if (in_transaction) {
      return Status(ErrorCode::kOperationNotSupportedInTransaction,
                    "Cannot create a view in a multi-document transaction.");
    }
    ROCKDOC_ASSIGN_OR_RETURN(
        internal::ViewDefinition view,
        internal::MakeViewDefinition(name_, name, decoded.view_on, decoded.pipeline.view()));
    return CatalogOf(*engine_).CreateView(std::move(view));
  }
  if (!in_transaction) return CatalogOf(*engine_).Create(name_, name, decoded);
  if (decoded.capped) {  // no capped write runs in a transaction either
    return Status(ErrorCode::kOperationNotSupportedInTransaction,
                  "Cannot create a capped collection in a multi-document transaction.");
  }
  return internal::RunOperation<Status>(session_, internal::OpKind::kWrite, "create",
                                        [&](const internal::OpContext&) {
                                          return CatalogOf(*engine_).Create(name_, name, decoded);
                                        });
}

StatusOr<std::vector<std::string>> Database::ListCollectionNames() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "listCollections"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(name_));
  std::vector<std::string> names = CatalogOf(*engine_).CollectionNames(name_);
  for (std::string& view : CatalogOf(*engine_).ViewNames(name_)) names.push_back(std::move(view));
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<std::vector<Database::CollectionInfo>> Database::ListCollections() const {
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> names, ListCollectionNames());
  std::vector<CollectionInfo> out;
  for (std::string& name : names) {
    std::shared_ptr<internal::CollectionMeta> meta = CatalogOf(*engine_).Find(name_, name);
    if (meta != nullptr) {
      out.push_back({std::move(name), meta->options()->ToDocument(), false, meta->uuid});
      continue;
    }
    std::shared_ptr<const internal::ViewDefinition> view = CatalogOf(*engine_).FindView(name_, name);
    if (view == nullptr) continue;  // dropped meanwhile
    BsonBuilder options;
    options.AppendString("viewOn", view->view_on).AppendArray("pipeline", view->pipeline.view());
    out.push_back({std::move(name), std::move(options).Build(), /*is_view=*/true, {}});
  }
  return out;
}

Status Database::DropCollection(std::string_view name, bool* existed) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "drop"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  return CatalogOf(*engine_).Drop(name_, name, existed);
}

Status Database::RenameCollection(std::string_view from, std::string_view to,
                                  bool drop_target) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "renameCollection"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  return CatalogOf(*engine_).Rename(name_, from, to, drop_target);
}

Status Database::Drop() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "dropDatabase"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(name_));
  const std::vector<std::string> collections = CatalogOf(*engine_).CollectionNames(name_);
  const std::vector<std::string> views = CatalogOf(*engine_).ViewNames(name_);
  for (const std::string& c : collections) {
    ROCKDOC_RETURN_IF_ERROR(CatalogOf(*engine_).Drop(name_, c, nullptr));
  }
  for (const std::string& v : views) {
    ROCKDOC_RETURN_IF_ERROR(CatalogOf(*engine_).Drop(name_, v, nullptr));
  }
  // As MongoDB's: a database that held nothing was not dropped.
  if (collections.empty() && views.empty()) return Status::OK();
  return CatalogOf(*engine_).RecordDropDatabase(name_);
}

// ---- collMod ----

StatusOr<CollModResult> Database::CollMod(std::string_view collection,
                                          const CollModOptions& decoded) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "collMod"));
  // The values' ranges, for every caller (the collMod command decodes only
  // their types).
  if (decoded.capped_size && (*decoded.capped_size <= 0 || *decoded.capped_size > (int64_t{1} << 50))) {
    return Status(ErrorCode::kInvalidOptions, "cappedSize must be greater than 0 and at most 1 PB");
  }
  if (decoded.capped_max && *decoded.capped_max >= (int64_t{1} << 31)) {
    return Status(ErrorCode::kInvalidOptions, "cappedMax must be less than 2^31");
  }
  if (decoded.index && decoded.index->expire_after_seconds) {
    ROCKDOC_RETURN_IF_ERROR(internal::CheckExpireAfterSeconds(*decoded.index->expire_after_seconds));
  }
  if (decoded.change_stream_pre_and_post_images) {
    ROCKDOC_RETURN_IF_ERROR(
        internal::CheckPreAndPostImagesAllowed(name_, *decoded.change_stream_pre_and_post_images));
  }
  std::shared_ptr<const MatchExpression> validator_expr;
  if (decoded.validator) {
    ROCKDOC_ASSIGN_OR_RETURN(validator_expr,
                             internal::ParseValidator(name_, decoded.validator->view()));
  }
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateCollectionName(name_, collection));
  const std::string ns = name_ + "." + std::string(collection);
  if (CatalogOf(*engine_).FindView(name_, collection) != nullptr) {
    // A view's definition: viewOn and pipeline together, nothing else.
    if (decoded.index || decoded.validator || decoded.validation_level ||
        decoded.validation_action || decoded.capped_size || decoded.capped_max ||
        decoded.change_stream_pre_and_post_images) {
      return Status(ErrorCode::kInvalidOptions,
                    "a view's collMod takes viewOn and pipeline only: " + ns + " is a view");
    }
    if (!decoded.view_on || !decoded.pipeline) {
      return Status(ErrorCode::kInvalidOptions,
                    "must specify both 'viewOn' and 'pipeline' when modifying a view");
    }
    ROCKDOC_ASSIGN_OR_RETURN(internal::ViewDefinition view,
                             internal::MakeViewDefinition(name_, collection, *decoded.view_on,
                                                          decoded.pipeline->view()));
    ROCKDOC_RETURN_IF_ERROR(CatalogOf(*engine_).ModifyView(std::move(view)));
    return CollModResult{};
  }
  if (decoded.view_on || decoded.pipeline) {
    return Status(ErrorCode::kInvalidOptions,
                  "'viewOn' and 'pipeline' apply to views only: " + ns + " is not a view");
  }
  ROCKDOC_ASSIGN_OR_RETURN(
      internal::CollectionLock lock,
      internal::CollectionLock::Acquire(*engine_, name_, std::string(collection),
                                        internal::CollectionLock::Mode::kExclusive, false));
  if (lock.meta() == nullptr) {
    return Status(ErrorCode::kNamespaceNotFound, "ns does not exist: " + ns);
  }
  internal::CollectionMeta& meta = *lock.meta();
  CollModResult result;
  if ((decoded.capped_size || decoded.capped_max) && !meta.is_capped()) {
    return Status(ErrorCode::kInvalidOptions,
                  "Collection " + ns + " is not capped: cappedSize and cappedMax apply to capped "
                  "collections only");
  }
  // Everything is checked before anything changes, then changed in memory
  // and persisted in one catalog write with the modify event (taken back
  // whole if that write fails), so that a collMod happens whole or not.
  internal::IndexDescriptor* index = nullptr;
  if (decoded.index) {
    const CollModIndex& want = *decoded.index;
    if (want.key_pattern.empty() == want.name.empty()) {
      return Status(ErrorCode::kInvalidOptions,
                    "must specify either index name or key pattern for collMod");
    }
    if (want.hidden) {
      const bool id_index = want.name == "_id_" || internal::IsIdIndexPattern(want.key_pattern);
      ROCKDOC_RETURN_IF_ERROR(internal::CheckHideable(name_, collection, id_index));
    }
    std::shared_ptr<const internal::IndexSet> indexes = meta.indexes();
    const internal::IndexDescriptor* found_index = nullptr;
    if (!want.name.empty()) {
      found_index = indexes->FindByName(want.name);
    } else {
      std::vector<const internal::IndexDescriptor*> found =
          indexes->FindByKeyPattern(want.key_pattern);
      if (found.size() > 1) {
        return Status(ErrorCode::kAmbiguousIndexKeyPattern,
                      "index keyPattern " + ToJson(want.key_pattern, JsonFormat::kShell) +
                          " matches " + std::to_string(found.size()) +
                          " indexes, must use index name");
      }
      if (!found.empty()) found_index = found[0];
    }
    if (found_index == nullptr) {
      return Status(ErrorCode::kIndexNotFound,
                    "cannot find index " +
                        (want.name.empty() ? ToJson(want.key_pattern, JsonFormat::kShell)
                                           : want.name) +
                        " for ns " + ns);
    }
    if (want.expire_after_seconds && !found_index->ttl() && found_index->num_fields() != 1) {
      return Status(ErrorCode::kInvalidOptions,
                    "TTL indexes are single-field indexes, compound indexes do not support TTL");
    }
    // Changed only under the exclusive lock, published at once (the next
    // plan sees it; the plan cache is cleared below).
    index = const_cast<internal::IndexDescriptor*>(found_index);
  }

  // The modify event's description (what changed) and stateBeforeChange.
  BsonBuilder description, index_before;
  std::shared_ptr<const internal::CollectionOptions> old = meta.options();
  const bool options_change = decoded.validator || decoded.validation_level ||
                              decoded.validation_action || decoded.capped_size ||
                              decoded.capped_max || decoded.change_stream_pre_and_post_images;
  if (options_change) {
    // A new snapshot of the options, published under the exclusive lock
    // (writers hold it shared, so none is between its check and its commit
    // meanwhile).
    auto changed = std::make_shared<internal::CollectionOptions>(*old);
    if (decoded.validator) {
      changed->validator = *decoded.validator;
      changed->validator_expr = validator_expr;
    }
    if (decoded.validation_level) {
      changed->validation_level = *decoded.validation_level;
      changed->has_validation_level = true;
    }
    if (decoded.validation_action) {
      changed->validation_action = *decoded.validation_action;
      changed->has_validation_action = true;
    }
    // New limits apply from the next insert, as in MongoDB.
    if (decoded.capped_size) changed->capped_size = internal::RoundCappedSize(*decoded.capped_size);
    if (decoded.capped_max) changed->capped_max = std::max<int64_t>(0, *decoded.capped_max);
    if (decoded.change_stream_pre_and_post_images) {
      changed->change_stream_pre_and_post_images = *decoded.change_stream_pre_and_post_images;
    }
    // The description names the options given, as the new options show them.
    const Document now = changed->ToDocument();
    for (const Element& e : now) {
      const std::string_view k = e.key();
      if ((k == "validator" && decoded.validator) ||
          (k == "validationLevel" && decoded.validation_level) ||
          (k == "validationAction" && decoded.validation_action) ||
          (k == "size" && decoded.capped_size) || (k == "max" && decoded.capped_max)) {
        description.AppendElement(e);
      }
    }
    if (decoded.change_stream_pre_and_post_images) {
      description.OpenDocument("changeStreamPreAndPostImages")
          .AppendBool("enabled", *decoded.change_stream_pre_and_post_images)
          .Close();
    }
    meta.set_options(changed);
  }
  const int64_t old_ttl = index != nullptr ? index->expire_after_seconds() : -1;
  const bool old_hidden = index != nullptr && index->hidden();
  bool index_change = false;
  if (index != nullptr) {
    const CollModIndex& want = *decoded.index;
    description.OpenDocument("index").AppendString("name", index->name());
    if (want.expire_after_seconds) {
      index->set_expire_after_seconds(*want.expire_after_seconds);
      description.AppendInt64("expireAfterSeconds", *want.expire_after_seconds);
      if (old_ttl >= 0) index_before.AppendInt64("expireAfterSeconds", old_ttl);
      index_change = true;
    }
    if (want.hidden) {
      description.AppendBool("hidden", *want.hidden);
      index_before.AppendBool("hidden", old_hidden);
      if (old_hidden != *want.hidden) {
        index->set_hidden(*want.hidden);
        index_change = true;
      }
    }
    description.Close();
  }
  std::vector<std::string> events;
  if (engine_->change_log() != nullptr) {
    BsonBuilder before;
    before.OpenDocument("collectionOptions");
    before.AppendBinary("uuid", BinarySubtype::kUuid, meta.uuid);
    for (const Element& e : old->ToDocument()) before.AppendElement(e);
    before.Close();
    if (index != nullptr) before.AppendDocument("indexOptions", std::move(index_before).Build());
    const Document description_doc = std::move(description).Build();
    const Document before_doc = std::move(before).Build();
    events.push_back(internal::CatalogEvent({.operation = "modify",
                                             .db = meta.db,
                                             .coll = meta.name,
                                             .uuid = meta.uuid,
                                             .description = description_doc,
                                             .state_before = before_doc}));
  }
  // A collMod that changes nothing still has its modify event, as MongoDB's.
  Status persisted =
      options_change || index_change
          ? CatalogOf(*engine_).PersistCollection(meta, events)
          : (events.empty() ? Status::OK() : CatalogOf(*engine_).RecordEvent(events.front()));
  if (!persisted.ok()) {
    if (options_change) meta.set_options(old);
    if (index != nullptr) {
      index->set_expire_after_seconds(old_ttl);
      index->set_hidden(old_hidden);
    }
    return persisted;
  }
  if (index != nullptr) {
    const CollModIndex& want = *decoded.index;
    if (want.expire_after_seconds) {
      if (old_ttl >= 0) result.expire_after_seconds_old = old_ttl;
      result.expire_after_seconds_new = *want.expire_after_seconds;
    }
    if (want.hidden && old_hidden != *want.hidden) {
      result.hidden_old = old_hidden;
      result.hidden_new = *want.hidden;
    }
    // Cached plans chose among the indexes as they were (catalog/plan_cache.h).
    meta.plan_cache.Clear();
  }
  return result;
}

// ---- Cursor ----

Cursor::Cursor(std::unique_ptr<internal::CursorImpl> impl) : impl_(std::move(impl)) {}
Cursor::Cursor(Cursor&&) noexcept = default;
Cursor& Cursor::operator=(Cursor&&) noexcept = default;
Cursor::~Cursor() = default;

bool Cursor::Next() { return impl_ && impl_->Next(); }
DocumentView Cursor::document() const { return impl_ ? impl_->document() : DocumentView(); }
Status Cursor::status() const { return impl_ ? impl_->status() : Status::OK(); }

StatusOr<std::vector<Document>> Cursor::ToVector() {
  std::vector<Document> out;
  while (Next()) out.push_back(Document::AdoptValidated(std::string(document().bytes())));
  ROCKDOC_RETURN_IF_ERROR(status());
  return out;
}

}  // namespace rockdoc

// Client and Database: opening a directory, naming databases, and the
// catalog operations on collections.
#include "api/client_internal.h"
#include "api/session_internal.h"
#include "catalog/catalog.h"
#include "exec/plan_executor.h"
#include "rockdoc/client.h"
#include "storage/engine.h"

namespace rockdoc {

using internal::Engine;

StatusOr<std::unique_ptr<Client>> Client::Open(const std::string& path,
                                               const ClientOptions& options) {
  return internal::ClientAccess::Open(path, options, nullptr);
}

StatusOr<std::unique_ptr<Client>> internal::ClientAccess::Open(
    const std::string& path, const ClientOptions& options,
    std::shared_ptr<rocksdb::FileSystem> file_system) {
  ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<Engine> engine,
                           Engine::Open(path, options, std::move(file_system)));
  // The client core: the storage engine and, attached to it, the catalog.
  Status loaded = internal::Catalog::AttachTo(engine.get());
  if (!loaded.ok()) {
    engine->Close().IgnoreError();  // already failing with `loaded`
    return loaded;
  }
  return std::unique_ptr<Client>(new Client(std::move(engine)));
}

StatusOr<SalvageReport> Client::Salvage(const std::string& path, const ClientOptions& options) {
  return Engine::Salvage(path, options);
}

Client::Client(std::shared_ptr<Engine> engine) : engine_(std::move(engine)) {}

Client::~Client() { Close().IgnoreError(); }

Status Client::Close() { return engine_->Close(); }

const std::string& Client::path() const { return engine_->path(); }

StorageStats Client::GetStorageStats() const { return engine_->GetStorageStats(); }

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
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "create"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  return CatalogOf(*engine_).Create(name_, name);
}

Status Database::CreateCollection(std::string_view name, DocumentView options) const {
  // Refuse what would not hold before creating anything.
  ROCKDOC_RETURN_IF_ERROR(internal::ParseCollectionOptions(options).status());
  return CreateCollection(name);
}

StatusOr<std::vector<std::string>> Database::ListCollectionNames() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "listCollections"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(name_));
  return CatalogOf(*engine_).CollectionNames(name_);
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
  for (const std::string& c : CatalogOf(*engine_).CollectionNames(name_)) {
    ROCKDOC_RETURN_IF_ERROR(CatalogOf(*engine_).Drop(name_, c, nullptr));
  }
  return Status::OK();
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

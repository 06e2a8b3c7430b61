// Collection: the index operations (createIndex, listIndexes, dropIndex,
// $indexStats). Definitions live in the catalog (catalog/catalog.h); entries
// are written by index builds here and kept up to date by every document
// write (store/write_ops.h).
//
// Index DDL holds the collection's lock exclusively: a build sees a stable
// collection and publishes the new index set before any writer runs again,
// so no document is ever written without its entries.


#include <algorithm>
#include <cstdio>

#include "api/session_internal.h"
#include "index/access_method.h"
#include "catalog/catalog.h"
#include "index/access_method.h"
#include "index/index_descriptor.h"
#include "index/vector_search.h"
#include "index/index_entry.h"
#include "index/key_generator.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "store/collection_lock.h"
#include "store/index_build.h"
#include "store/write_ops.h"

namespace rockdoc {

using internal::CollectionLock;
using internal::CollectionMeta;
using internal::Engine;
using internal::IndexDescriptor;
using internal::IndexSet;
using internal::IsIdIndexPattern;

namespace {

// A build commits its entries every this many documents or bytes of entries,
// and reports progress at each commit: bounded memory whatever the size of
// the collection.

// MongoDB's limit: 64 indexes per collection, _id_ included.
constexpr size_t kMaxIndexes = 64;

constexpr char kIdIndexName[] = "_id_";

Document IdIndexKeyPattern() {
  BsonBuilder b;
  b.AppendInt32("_id", 1);
  return std::move(b).Build();
}

Document IdIndexSpec() {
  BsonBuilder b;
  b.AppendInt32("v", internal::kIndexVersion);
  b.AppendDocument("key", IdIndexKeyPattern());
  b.AppendString("name", kIdIndexName);
  return std::move(b).Build();
}

Status NamespaceNotFound(const std::string& ns) {
  return Status(ErrorCode::kNamespaceNotFound, "ns does not exist: " + ns);
}

std::string SpecText(DocumentView spec) { return ToJson(spec, JsonFormat::kShell); }

// One index of a createIndexes call, validated before any lock is taken.
struct IndexRequest {
  DocumentView keys;
  const IndexOptions* options;
  // Null for the _id index's pattern, which always exists.
  std::shared_ptr<IndexDescriptor> requested;
  // The options with the collection's default collation filled in, when
  // the request named none (`options` then points here).
  IndexOptions with_default = {};
};

// Checks one index against the _id index's rules, or builds its descriptor
// (id 0: not allocated yet), checking the key pattern and options.
Status ValidateRequest(IndexRequest* request) {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(request->keys.bytes()));
  const IndexOptions& options = *request->options;
  if (IsIdIndexPattern(request->keys)) {
    // The _id_ index always exists; only its own name and no options fit it.
    const char* option = options.unique                               ? "unique"
                         : options.sparse                             ? "sparse"
                         : !options.partial_filter_expression.empty() ? "partialFilterExpression"
                                                                      : nullptr;
    if (option != nullptr) {
      return Status(ErrorCode::kInvalidIndexSpecificationOption,
                    "The field '" + std::string(option) +
                        "' is not valid for an _id index specification. Specification: " +
                        SpecText(IdIndexSpec()));
    }
    if (!options.name.empty() && options.name != kIdIndexName) {
      return Status(ErrorCode::kIndexOptionsConflict,
                    std::string("Index already exists with a different name: ") + kIdIndexName);
    }
    return Status::OK();
  }
  ROCKDOC_ASSIGN_OR_RETURN(request->requested,
                           IndexDescriptor::Create(0, request->keys, options));
  return Status::OK();
}

// Whether `requested` is already in `indexes` (true: nothing to build), or
// the error for one that conflicts with it.
StatusOr<bool> AlreadyExists(const IndexSet& indexes, const IndexDescriptor& requested) {
  DocumentView keys = requested.key_pattern();
  if (const IndexDescriptor* same_name = indexes.FindByName(requested.name())) {
    if (same_name->SameKeyPattern(keys) && same_name->SameOptions(requested)) return true;
    return Status(ErrorCode::kIndexKeySpecsConflict,
                  "An existing index has the same name as the requested index. When index names "
                  "are not specified, they are auto generated and can cause conflicts. Please "
                  "refer to our documentation. Requested index: " +
                      SpecText(requested.ToSpec()) +
                      ", existing index: " + SpecText(same_name->ToSpec()));
  }
  for (const IndexDescriptor* other : indexes.FindByKeyPattern(keys)) {
    // Indexes of one key pattern in different collations are different
    // indexes (MongoDB allows both, under different names).
    if (!Collator::Same(other->collator(), requested.collator())) continue;
    if (other->SameOptions(requested)) {
      return Status(ErrorCode::kIndexOptionsConflict,
                    "Index already exists with a different name: " + other->name());
    }
    return Status(ErrorCode::kIndexOptionsConflict,
                  "An equivalent index already exists with a different name and options. "
                  "Requested index: " +
                      SpecText(requested.ToSpec()) + ", existing index: " + SpecText(other->ToSpec()));
  }
  // One text index per collection, as MongoDB's (two of the same key
  // pattern were refused above).
  if (requested.access_method().OnePerCollection()) {
    for (const auto& other : indexes) {
      if (&other->access_method() != &requested.access_method()) continue;
      return Status(ErrorCode::kIndexOptionsConflict,
                    "only one " + std::string(requested.access_method().kind()) +
                        " index per collection allowed, found existing " +
                        std::string(requested.access_method().kind()) + " index \"" +
                        other->name() + "\"");
    }
  }
  return false;
}

// createIndexes: validates every request, then builds the new ones and
// publishes them together, or none.
// `txn`: the transaction the call runs in (null: none), where only a
// collection that transaction created and that is still empty takes new
// indexes, as in MongoDB 4.4+ (there is no entry to build; the catalog
// entry is written through the transaction). Any other is
// OperationNotSupportedInTransaction (263).
StatusOr<std::vector<std::string>> CreateIndexesImpl(
    const Engine& engine, const std::string& db, const std::string& coll,
    std::vector<IndexRequest> requests, const std::function<void(int64_t)>& progress,
    internal::KvTransaction* txn, Collection::CreateIndexesReport* report) {
  // An index that names no collation takes the collection's default.
  if (std::shared_ptr<CollectionMeta> existing = CatalogOf(engine).Find(db, coll)) {
    if (const CollatorPtr& fallback = existing->options()->collator) {
      for (IndexRequest& request : requests) {
        if (request.options->collation || IsIdIndexPattern(request.keys)) continue;
        request.with_default = *request.options;
        request.with_default.collation = fallback->spec();
        request.options = &request.with_default;
      }
    }
  }
  // Validate every specification before taking any lock or id.
  for (IndexRequest& request : requests) {
    if (request.options->hidden) {
      ROCKDOC_RETURN_IF_ERROR(internal::CheckHideable(db, coll, IsIdIndexPattern(request.keys)));
    }
    ROCKDOC_RETURN_IF_ERROR(ValidateRequest(&request));
  }
  const bool existed = CatalogOf(engine).Find(db, coll) != nullptr;
  ROCKDOC_ASSIGN_OR_RETURN(CollectionLock guard, CollectionLock::Acquire(engine, db, coll, CollectionLock::Mode::kExclusive, true));
  CollectionMeta* meta = guard.meta();
  std::shared_ptr<const IndexSet> current = meta->indexes();
  Collection::CreateIndexesReport counted;
  counted.created_collection_automatically = !existed;
  counted.num_indexes_before = counted.num_indexes_after = static_cast<int32_t>(current->size() + 1);
  if (report != nullptr) *report = counted;

  // Against the existing indexes and the ones earlier in this call.
  std::vector<std::string> names;
  std::vector<const IndexRequest*> to_build;
  std::shared_ptr<const IndexSet> planned = current;
  for (const IndexRequest& request : requests) {
    if (request.requested == nullptr) {
      names.push_back(kIdIndexName);
      continue;
    }
    names.push_back(request.requested->name());
    ROCKDOC_ASSIGN_OR_RETURN(bool exists, AlreadyExists(*planned, *request.requested));
    if (exists) continue;
    if (planned->size() + 1 >= kMaxIndexes) {
      return Status(ErrorCode::kCannotCreateIndex,
                    "add index fails, too many indexes for " + meta->full_name() +
                        " key:" + SpecText(request.keys));
    }
    planned = planned->With(request.requested);
    to_build.push_back(&request);
  }
  if (to_build.empty()) return names;
  if (txn != nullptr) {
    bool empty = false;
    if (meta->creating_txn.load(std::memory_order_acquire) == txn) {
      std::unique_ptr<internal::KvIterator> it = internal::ReadView(txn).NewIterator(
          internal::PrefixKey(meta->id), internal::PrefixKey(meta->id + 1));
      it->SeekToFirst();
      ROCKDOC_RETURN_IF_ERROR(it->status());
      empty = !it->Valid();
    }
    if (!empty) {
      return Status(ErrorCode::kOperationNotSupportedInTransaction,
                    "Cannot create new indexes on existing collection " + meta->full_name() +
                        " in a multi-document transaction.");
    }
  }

  // Build each into a prefix no one else reads; publish all at once. On any
  // failure, every index of this call goes: their entries are removed and
  // the catalog never named them.
  std::vector<std::shared_ptr<IndexDescriptor>> built;
  auto abandon = [&](Status error) {
    for (const auto& index : built) internal::RemoveIndexEntries(engine, *index).IgnoreError();
    return error;
  };
  std::shared_ptr<const IndexSet> next = current;
  for (const IndexRequest* request : to_build) {
    // The id allocator's lock is a leaf lock, so taking it here, under the
    // collection's lock, cannot deadlock with drop or rename.
    StatusOr<uint32_t> id = CatalogOf(engine).AllocateId();
    if (!id.ok()) return abandon(id.status());
    auto index = IndexDescriptor::Create(*id, request->keys, *request->options);
    if (!index.ok()) return abandon(index.status());
    built.push_back(*index);
    if (txn == nullptr) {  // in a transaction the collection is empty
      Status s = internal::BuildIndexEntries(engine, *meta, index->get(), progress);
      if (!s.ok()) return abandon(s);
    }
    next = next->With(*index);
  }
  std::vector<std::string> events;
  if (engine.change_log() != nullptr && !built.empty()) {
    std::vector<const IndexDescriptor*> specs;
    for (const auto& index : built) specs.push_back(index.get());
    events.push_back(internal::IndexEvent(*meta, "createIndexes", specs));
  }
  Status published = internal::PublishIndexSet(engine, meta, next, events);
  if (!published.ok()) return abandon(published);
  if (report != nullptr) report->num_indexes_after = static_cast<int32_t>(next->size() + 1);
  return names;
}

// CreateIndexesImpl as an operation of `session` (which may be null): in
// its transaction when one is open.
StatusOr<std::vector<std::string>> CreateIndexesIn(
    const std::shared_ptr<internal::SessionState>& session, const Engine& engine,
    const std::string& db, const std::string& coll, std::vector<IndexRequest> requests,
    const std::function<void(int64_t)>& progress, Collection::CreateIndexesReport* report) {
  if (session == nullptr || !session->InTransaction()) {
    return CreateIndexesImpl(engine, db, coll, std::move(requests), progress, nullptr, report);
  }
  return internal::RunOperation<StatusOr<std::vector<std::string>>>(
      session, internal::OpKind::kWrite, "createIndexes", [&](const internal::OpContext& op) {
        return CreateIndexesImpl(engine, db, coll, std::move(requests), progress, op.txn, report);
      });
}

// In a transaction createIndexes runs (on a collection it creates); outside
// one, the session's other checks apply.
Status CheckCreateIndexes(const std::shared_ptr<internal::SessionState>& session) {
  if (session != nullptr && session->InTransaction()) return Status::OK();
  return internal::CheckCommand(session, "createIndexes");
}

// createIndexes makes no search index (createSearchIndexes does).
Status CheckNotSearchIndex(const IndexOptions& options) {
  if (!options.search_definition) return Status::OK();
  return Status(ErrorCode::kBadValue,
                "search indexes are made by createSearchIndexes, not createIndexes");
}

}  // namespace

StatusOr<std::string> Collection::CreateIndex(DocumentView keys, const IndexOptions& options,
                                              const std::function<void(int64_t)>& progress) const {
  ROCKDOC_RETURN_IF_ERROR(CheckCreateIndexes(session_));
  ROCKDOC_RETURN_IF_ERROR(CheckNotSearchIndex(options));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_ASSIGN_OR_RETURN(
      std::vector<std::string> names,
      CreateIndexesIn(session_, *engine_, db_name_, name_,
                      {IndexRequest{keys, &options, nullptr}}, progress, nullptr));
  return names.front();
}

StatusOr<std::vector<std::string>> Collection::CreateIndexes(
    const std::vector<IndexModel>& indexes, const std::function<void(int64_t)>& progress,
    CreateIndexesReport* report) const {
  ROCKDOC_RETURN_IF_ERROR(CheckCreateIndexes(session_));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  if (indexes.empty()) {
    return Status(ErrorCode::kBadValue, "Must specify at least one index.");
  }
  std::vector<IndexRequest> requests;
  for (const IndexModel& model : indexes) {
    ROCKDOC_RETURN_IF_ERROR(CheckNotSearchIndex(model.options));
    requests.push_back(IndexRequest{model.keys, &model.options, nullptr});
  }
  return CreateIndexesIn(session_, *engine_, db_name_, name_, std::move(requests), progress,
                         report);
}

StatusOr<std::vector<Document>> Collection::ListIndexes() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "listIndexes"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  std::shared_ptr<CollectionMeta> meta = CatalogOf(*engine_).Find(db_name_, name_);
  if (meta == nullptr) {
    if (CatalogOf(*engine_).FindView(db_name_, name_) != nullptr) {
      return internal::ViewNotCollection(db_name_, name_);
    }
    return NamespaceNotFound(full_name());
  }
  std::vector<Document> out;
  out.push_back(IdIndexSpec());
  for (const auto& index : *meta->indexes()) {
    if (!index->is_search_index()) out.push_back(index->ToSpec());
  }
  return out;
}

Status Collection::DropIndex(std::string_view name) const {
  if (name == "*") return DropIndexes();
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "dropIndexes"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  if (name == kIdIndexName) {
    return Status(ErrorCode::kInvalidOptions, "cannot drop _id index");
  }
  ROCKDOC_ASSIGN_OR_RETURN(CollectionLock guard,
                           CollectionLock::Acquire(*engine_, db_name_, name_, CollectionLock::Mode::kExclusive, false));
  if (guard.meta() == nullptr) return NamespaceNotFound(full_name());
  const IndexDescriptor* named = guard.meta()->indexes()->FindByName(name);
  if (named == nullptr || named->is_search_index()) {
    return Status(ErrorCode::kIndexNotFound,
                  "index not found with name [" + std::string(name) + "]");
  }
  return internal::DropIndexesLocked(*engine_, guard.meta(), {std::string(name)});
}

Status Collection::DropIndexByKey(DocumentView keys) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "dropIndexes"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(keys.bytes()));
  if (IsIdIndexPattern(keys)) {
    return Status(ErrorCode::kInvalidOptions, "cannot drop _id index");
  }
  ROCKDOC_ASSIGN_OR_RETURN(CollectionLock guard,
                           CollectionLock::Acquire(*engine_, db_name_, name_, CollectionLock::Mode::kExclusive, false));
  if (guard.meta() == nullptr) return NamespaceNotFound(full_name());
  std::vector<const IndexDescriptor*> found = guard.meta()->indexes()->FindByKeyPattern(keys);
  std::erase_if(found, [](const IndexDescriptor* d) { return d->is_search_index(); });
  if (found.empty()) {
    return Status(ErrorCode::kIndexNotFound, "can't find index with key: " + SpecText(keys));
  }
  return internal::DropIndexesLocked(*engine_, guard.meta(), {found.front()->name()});
}

Status Collection::DropIndexes() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "dropIndexes"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_ASSIGN_OR_RETURN(CollectionLock guard,
                           CollectionLock::Acquire(*engine_, db_name_, name_, CollectionLock::Mode::kExclusive, false));
  if (guard.meta() == nullptr) return NamespaceNotFound(full_name());
  std::vector<std::string> names;
  for (const auto& index : *guard.meta()->indexes()) {
    if (!index->is_search_index()) names.push_back(index->name());
  }
  if (names.empty()) return Status::OK();
  return internal::DropIndexesLocked(*engine_, guard.meta(), names);
}

StatusOr<std::vector<Document>> Collection::IndexStats() const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "aggregate"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  std::shared_ptr<CollectionMeta> meta = CatalogOf(*engine_).Find(db_name_, name_);
  if (meta == nullptr) return std::vector<Document>();
  auto stats = [](std::string_view name, DocumentView key, int64_t ops, int64_t since,
                  DocumentView spec) {
    BsonBuilder b;
    b.AppendString("name", name);
    b.AppendDocument("key", key);
    b.OpenDocument("accesses").AppendInt64("ops", ops).AppendDateTime("since", since).Close();
    b.AppendDocument("spec", spec);
    return std::move(b).Build();
  };
  std::vector<Document> out;
  out.push_back(stats(kIdIndexName, IdIndexKeyPattern(),
                      meta->id_index_accesses.load(std::memory_order_relaxed),
                      meta->id_index_since_ms, IdIndexSpec()));
  for (const auto& index : *meta->indexes()) {
    if (index->is_search_index()) continue;
    out.push_back(stats(index->name(), index->key_pattern(), index->accesses(), index->since_ms(),
                        index->ToSpec()));
  }
  return out;
}

// ---- Search indexes ----

namespace {

// A search index's id as listSearchIndexes gives it: 24 hex digits (the
// shape of Atlas's ids) of its catalog id.
std::string SearchIndexId(const IndexDescriptor& index) {
  char buf[25];
  std::snprintf(buf, sizeof buf, "%024x", index.id());
  return buf;
}

// The key pattern and options of a search index model.
StatusOr<std::pair<Document, IndexOptions>> SearchIndexRequest(const SearchIndexModel& model) {
  if (model.type == "search") {
    return Status(ErrorCode::kNotImplemented,
                  "search indexes of type 'search' (Atlas Search) are not supported by rockdoc");
  }
  if (model.type != "vectorSearch") {
    return Status(ErrorCode::kBadValue, "Invalid search index type '" + model.type +
                                            "': expected 'search' or 'vectorSearch'");
  }
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(model.definition.bytes()));
  ROCKDOC_ASSIGN_OR_RETURN(internal::VectorDefinition def,
                           internal::ParseVectorDefinition(model.definition));
  BsonBuilder keys;
  keys.AppendString(def.path, "vectorSearch");
  IndexOptions options;
  options.name = model.name.empty() ? "default" : model.name;
  options.search_definition = model.definition;
  return std::make_pair(std::move(keys).Build(), std::move(options));
}

const IndexDescriptor* FindSearchIndex(const IndexSet& indexes, std::string_view name) {
  const IndexDescriptor* d = indexes.FindByName(name);
  return d != nullptr && d->is_search_index() ? d : nullptr;
}

Status SearchIndexNotFound(std::string_view name) {
  return Status(ErrorCode::kIndexNotFound,
                "search index not found with name [" + std::string(name) + "]");
}

}  // namespace

StatusOr<std::vector<std::string>> Collection::CreateSearchIndexes(
    const std::vector<SearchIndexModel>& models) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "createSearchIndexes"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  if (models.empty()) return Status(ErrorCode::kBadValue, "Must specify at least one index.");
  std::vector<std::pair<Document, IndexOptions>> parsed;
  for (const SearchIndexModel& model : models) {
    ROCKDOC_ASSIGN_OR_RETURN(auto request, SearchIndexRequest(model));
    parsed.push_back(std::move(request));
  }
  std::vector<IndexRequest> requests;
  for (const auto& [keys, options] : parsed) requests.push_back(IndexRequest{keys, &options, nullptr});
  return CreateIndexesIn(nullptr, *engine_, db_name_, name_, std::move(requests), {}, nullptr);
}

StatusOr<std::vector<Document>> Collection::ListSearchIndexes(
    const std::optional<std::string>& name) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "aggregate"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_RETURN_IF_ERROR(internal::ValidateDatabaseName(db_name_));
  std::vector<Document> out;
  std::shared_ptr<CollectionMeta> meta = CatalogOf(*engine_).Find(db_name_, name_);
  if (meta == nullptr) return out;
  for (const auto& index : *meta->indexes()) {
    if (!index->is_search_index() || (name && *name != index->name())) continue;
    BsonBuilder b;
    b.AppendString("id", SearchIndexId(*index));
    b.AppendString("name", index->name());
    b.AppendString("type", index->access_method().kind());
    b.AppendString("status", "READY");
    b.AppendBool("queryable", true);
    b.AppendDocument("latestDefinition", index->search_definition());
    out.push_back(std::move(b).Build());
  }
  return out;
}

Status Collection::DropSearchIndex(std::string_view name) const {
  ROCKDOC_RETURN_IF_ERROR(internal::CheckCommand(session_, "dropSearchIndex"));
  auto use = engine_->Enter();
  ROCKDOC_RETURN_IF_ERROR(use.status());
  ROCKDOC_ASSIGN_OR_RETURN(CollectionLock guard,
                           CollectionLock::Acquire(*engine_, db_name_, name_,
                                                   CollectionLock::Mode::kExclusive, false));
  if (guard.meta() == nullptr || FindSearchIndex(*guard.meta()->indexes(), name) == nullptr) {
    return SearchIndexNotFound(name);
  }
  return internal::DropIndexesLocked(*engine_, guard.meta(), {std::string(name)});
}

Status Collection::UpdateSearchIndex(std::string_view name, DocumentView definition) const {
  {
    auto use = engine_->Enter();
    ROCKDOC_RETURN_IF_ERROR(use.status());
    std::shared_ptr<CollectionMeta> meta = CatalogOf(*engine_).Find(db_name_, name_);
    const IndexDescriptor* index =
        meta != nullptr ? FindSearchIndex(*meta->indexes(), name) : nullptr;
    if (index == nullptr) return SearchIndexNotFound(name);
    SearchIndexModel model{std::string(name), std::string(index->access_method().kind()),
                           Document::AdoptValidated(std::string(definition.bytes()))};
    // The new definition is checked before the old index goes.
    ROCKDOC_RETURN_IF_ERROR(ValidateBson(definition.bytes()));
    ROCKDOC_RETURN_IF_ERROR(SearchIndexRequest(model).status());
  }
  ROCKDOC_RETURN_IF_ERROR(DropSearchIndex(name));
  SearchIndexModel model{std::string(name), "vectorSearch",
                         Document::AdoptValidated(std::string(definition.bytes()))};
  return CreateSearchIndexes({model}).status();
}

}  // namespace rockdoc

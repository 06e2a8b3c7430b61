// api/pipeline_target.cc: where $out and $merge write (pipeline.h's
// PipelineTarget), all or nothing.
//   $out: the documents go to a new collection "tmp.agg_out.<n>" of the
//   target's database; Commit gives it the target's indexes and renames it
//   over the target (dropping the old one); without Commit it is dropped.
//   $merge: the writes run in a transaction of their own on the target;
//   Commit commits it, without Commit it aborts.
#include <atomic>
#include <random>

#include "api/client_internal.h"
#include "api/session_internal.h"
#include "catalog/catalog.h"
#include "index/access_method.h"

namespace rockdoc::internal {

namespace {

constexpr size_t kInsertBatch = 1000;

class OutTarget : public PipelineTarget {
 public:
  OutTarget(Database db, std::string coll, std::string temp)
      : db_(std::move(db)), coll_(std::move(coll)), temp_(std::move(temp)) {}
  ~OutTarget() override {
    if (!committed_) db_.GetCollection(temp_).Drop().IgnoreError();
  }

  StatusOr<std::optional<Document>> FindOne(DocumentView filter) override {
    return db_.GetCollection(temp_).FindOne(filter);
  }
  Status Insert(DocumentView doc) override {
    pending_.push_back(Document::AdoptValidated(std::string(doc.bytes())));
    return pending_.size() >= kInsertBatch ? Flush() : Status::OK();
  }
  Status Replace(DocumentView filter, DocumentView doc) override {
    ROCKDOC_RETURN_IF_ERROR(Flush());
    return db_.GetCollection(temp_).ReplaceOne(filter, doc).status();
  }
  StatusOr<std::vector<Document>> Indexes() override { return TargetIndexes(); }
  Status Commit() override {
    ROCKDOC_RETURN_IF_ERROR(Flush());
    // The target's indexes, built on the new documents (a unique index they
    // break fails the $out, the target untouched).
    std::vector<IndexModel> models;
    std::vector<SearchIndexModel> search_models;
    std::shared_ptr<CollectionMeta> target =
        CatalogOf(*ClientAccess::EngineOf(db_)).Find(db_.name(), coll_);
    if (target != nullptr) {
      // The snapshot of the target's index set (the _id index is not in it).
      for (const auto& index : *target->indexes()) {
        if (index->is_search_index()) {
          search_models.push_back(SearchIndexModel{
              index->name(), std::string(index->access_method().kind()),
              index->search_definition()});
        } else {
          models.push_back(IndexModel{index->key_pattern(), index->Options()});
        }
      }
    }
    Collection temp = db_.GetCollection(temp_);
    if (!models.empty()) ROCKDOC_RETURN_IF_ERROR(temp.CreateIndexes(models).status());
    if (!search_models.empty()) {
      ROCKDOC_RETURN_IF_ERROR(temp.CreateSearchIndexes(search_models).status());
    }
    ROCKDOC_RETURN_IF_ERROR(db_.RenameCollection(temp_, coll_, /*drop_target=*/true));
    committed_ = true;
    return Status::OK();
  }

 private:
  Status Flush() {
    if (pending_.empty()) return Status::OK();
    StatusOr<InsertManyResult> r = db_.GetCollection(temp_).InsertMany(pending_);
    pending_.clear();
    ROCKDOC_RETURN_IF_ERROR(r.status());
    if (!r->write_errors.empty()) return r->write_errors.front().status;
    return Status::OK();
  }
  StatusOr<std::vector<Document>> TargetIndexes() {
    StatusOr<std::vector<Document>> indexes = db_.GetCollection(coll_).ListIndexes();
    if (!indexes.ok() && indexes.status().code() == ErrorCode::kNamespaceNotFound) {
      return std::vector<Document>();
    }
    return indexes;
  }

  Database db_;
  std::string coll_, temp_;
  std::vector<Document> pending_;
  bool committed_ = false;
};

class MergeTarget : public PipelineTarget {
 public:
  MergeTarget(std::shared_ptr<SessionState> session, Database db, std::string coll)
      : session_(std::move(session)), coll_(db.GetCollection(coll)) {}
  ~MergeTarget() override {
    if (session_->InTransaction()) session_->AbortTransaction().IgnoreError();
    session_->EndSession().IgnoreError();
  }
  StatusOr<std::optional<Document>> FindOne(DocumentView filter) override {
    return coll_.FindOne(filter);
  }
  Status Insert(DocumentView doc) override { return coll_.InsertOne(doc).status(); }
  Status Replace(DocumentView filter, DocumentView doc) override {
    return coll_.ReplaceOne(filter, doc).status();
  }
  StatusOr<std::vector<Document>> Indexes() override { return indexes_; }
  Status Commit() override { return session_->CommitTransaction(); }

  std::vector<Document> indexes_;  // read before the transaction began

 private:
  std::shared_ptr<SessionState> session_;
  Collection coll_;
};

std::string TempName() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t seed = std::random_device{}();
  return "tmp.agg_out." + std::to_string(seed % 1000000) + "_" + std::to_string(++counter);
}

}  // namespace

OpenTargetFn MakeOpenTarget(std::shared_ptr<Engine> engine, std::shared_ptr<SessionState> session) {
  return [engine, session](std::string_view db, std::string_view coll,
                           bool replace) -> StatusOr<std::unique_ptr<PipelineTarget>> {
    if (session != nullptr && session->InTransaction()) {
      return Status(ErrorCode::kOperationNotSupportedInTransaction,
                    std::string(replace ? "$out" : "$merge") + " cannot be used in a transaction");
    }
    // A view takes no write (before any document is read).
    if (CatalogOf(*engine).FindView(db, coll) != nullptr) return ViewNotCollection(db, coll);
    Database database = ClientAccess::DatabaseOf(engine, std::string(db));
    if (replace) {
      std::string temp = TempName();
      ROCKDOC_RETURN_IF_ERROR(database.CreateCollection(temp));
      return std::unique_ptr<PipelineTarget>(
          std::make_unique<OutTarget>(std::move(database), std::string(coll), std::move(temp)));
    }
    // $merge creates its target when missing (outside the transaction, as
    // a collection is made before it is written).
    Collection target = database.GetCollection(coll);
    StatusOr<std::vector<Document>> indexes = target.ListIndexes();
    if (!indexes.ok()) {
      if (indexes.status().code() != ErrorCode::kNamespaceNotFound) return indexes.status();
      Status created = database.CreateCollection(coll);
      if (!created.ok() && created.code() != ErrorCode::kNamespaceExists) return created;
      indexes = target.ListIndexes();
      ROCKDOC_RETURN_IF_ERROR(indexes.status());
    }
    auto own = std::make_shared<SessionState>(engine, SessionOptions{});
    ROCKDOC_RETURN_IF_ERROR(own->StartTransaction());
    auto t = std::make_unique<MergeTarget>(own, ClientAccess::DatabaseOf(engine, std::string(db), own),
                                           std::string(coll));
    t->indexes_ = std::move(*indexes);
    return std::unique_ptr<PipelineTarget>(std::move(t));
  };
}

}  // namespace rockdoc::internal

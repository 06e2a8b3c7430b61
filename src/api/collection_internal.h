// api/collection_internal.h: pieces shared by the Collection operations
// (collection.cc: inserts, deletes, replace, validate; collection_query.cc:
// find, count, distinct, explain; collection_update.cc: updates).
#ifndef ROCKDOC_API_COLLECTION_INTERNAL_H_
#define ROCKDOC_API_COLLECTION_INTERNAL_H_

#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "exec/plan_executor.h"
#include "planner/canonical_query.h"
#include "planner/query_planner.h"
#include "rockdoc/client.h"
#include "storage/engine.h"

namespace rockdoc::internal {

// Holds a collection's metadata shared-locked for one write, looking it up
// again when a concurrent drop or rename got there first. meta() is null
// when the collection does not exist and `create` was false.
class CollectionWriteGuard {
 public:
  static StatusOr<CollectionWriteGuard> Acquire(const Engine& engine, const std::string& db,
                                                const std::string& name, bool create);
  const CollectionMeta* meta() const { return meta_.get(); }
  bool dropped() const {
    return meta_ != nullptr && meta_->dropped.load(std::memory_order_acquire);
  }

 private:
  explicit CollectionWriteGuard(std::shared_ptr<CollectionMeta> meta);
  std::shared_ptr<CollectionMeta> meta_;
  std::shared_lock<std::shared_mutex> lock_;
};

// A target of a write: the record key of a matching document, read from a
// snapshot (the writer then locks and re-reads it).
struct WriteTarget {
  std::string record_key;
};

// The record keys of documents matching the query (in its sort order; at
// most `limit`, 0 = all), at a fresh snapshot.
StatusOr<std::vector<WriteTarget>> FindWriteTargets(const std::shared_ptr<const Engine>& engine,
                                                    const CollectionMeta* meta,
                                                    const CanonicalQuery& cq);

// Plans and opens a cursor over `cq` (which the cursor then owns).
StatusOr<std::unique_ptr<PlanExecutor>> OpenQuery(const std::shared_ptr<const Engine>& engine,
                                                  const CollectionMeta* meta,
                                                  std::unique_ptr<CanonicalQuery> cq);

// Runs `cq` at the requested verbosity and returns MongoDB's explain.
StatusOr<Document> ExplainQuery(const std::shared_ptr<const Engine>& engine,
                                const CollectionMeta* meta, const std::string& ns,
                                const CanonicalQuery& cq, ExplainVerbosity verbosity);

// Wraps the plan of an explain in an outer stage (UPDATE, DELETE, COUNT), as
// MongoDB's explain of those commands shows it.
Document WrapExplain(const Document& explain, std::string_view stage);

// The collection's metadata for a read (null when it does not exist).
StatusOr<std::shared_ptr<CollectionMeta>> LookupForRead(const Engine& engine, const std::string& db,
                                                        const std::string& name);

// Checks that an update's result stays within 16 MiB (code 17419) and 100
// levels of nesting (only below `changed_paths` when given: the rest of the
// document was already within the limit).
Status CheckUpdateResultSize(const Document& doc,
                             const std::vector<std::string>* changed_paths = nullptr);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_API_COLLECTION_INTERNAL_H_

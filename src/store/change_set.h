// store/change_set.h: the record of a transaction's changes, made where the
// changes are made (store/write_ops.h), and applied when it commits: the
// transaction's one KvTransaction::CommitHook (the commit path's design:
// store/README.md).
//
// It holds three things:
//  - the statistics of the collections a multi-document transaction wrote
//    (ApplyAtCommit, store/write_batcher.h), applied once it commits;
//  - with a change log (storage/change_log.h), one event per document
//    written: at commit it takes the log's sequencer, writes its events into
//    the transaction's own batch under the commit's cluster time, and
//    publishes them once committed. A savepoint rolled back takes its events
//    with it; a transaction rolled back has none;
//  - with a record cache (storage/record_cache.h), the record keys the
//    transaction replaced or deleted: marked in flux before the commit,
//    their cached versions dropped after it (inserts need no mark). A
//    savepoint rolled back keeps its keys: an extra drop is harmless.
//
// An event as stored (the change log's value, BSON), MongoDB's change event
// without the fields its position gives (_id, the resume token, and
// clusterTime, which the reader adds: api/change_stream.cc):
//   {operationType: "insert" | "update" | "replace" | "delete",
//    wallTime: Date (the commit's),
//    fullDocument: <the document> (insert, replace),
//    ns: {db, coll}, documentKey: {_id},
//    updateDescription: {...} (update: query/update/update_description.h),
//    postImage: <the document after> (update), preImage: <the document
//      before> (update, replace, delete): both only when the collection has
//      changeStreamPreAndPostImages enabled (CollectionMeta::record_images),
//      so that a collection without them writes what it wrote before. The
//      images live and go with their event: the log's retention
//      (storage/change_log.h) is theirs, as MongoDB's pre-images collection
//      is trimmed with the oplog. The reader turns them into fullDocument
//      and fullDocumentBeforeChange as the stream asks;
//    collectionUUID: UUID,
//    txnNumber: Long, lsid: {id: UUID} (a multi-document transaction's)}
//
// Thread safety: used by the transaction's thread.
#ifndef ROCKDOC_STORE_CHANGE_SET_H_
#define ROCKDOC_STORE_CHANGE_SET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"
#include "storage/engine.h"
#include "storage/kv.h"

namespace rockdoc::internal {

// Which event a replacement of a stored document is.
enum class ReplaceKind { kUpdate, kReplace };

class ChangeSet : public KvTransaction::CommitHook {
 public:
  // `txn`'s change set, added on first use.
  static ChangeSet* Of(const Engine& engine, KvTransaction* txn);

  // The statistics `delta` of `meta`'s collection, applied after commit.
  void AddStatistics(const CollectionMeta& meta, StatisticsDelta delta);

  // Events, for an engine with a change log (the callers, store/write_ops.cc,
  // check: without one no change set is made for them).
  void RecordInsert(const CollectionMeta& meta, DocumentView doc);
  void RecordReplace(const CollectionMeta& meta, DocumentView old_doc, DocumentView new_doc,
                     ReplaceKind kind);
  void RecordDelete(const CollectionMeta& meta, DocumentView old_doc);
  // The record `key` is replaced or deleted, for an engine with a record
  // cache (the callers check).
  void NoteRecordWrite(std::string_view key) { record_keys_.emplace_back(key); }
  // An entry of an index whose kind keeps a runtime state beside its
  // entries (vectorSearch's graph) is put or deleted: the state is told
  // after the commit succeeds, never before nor for a rollback.
  void NoteEntryChange(std::shared_ptr<IndexRuntimeState> state,
                       IndexRuntimeState::EntryChange change) {
    entry_changes_.emplace_back(std::move(state), std::move(change));
  }
  // Tags the events of a multi-document transaction (before any is
  // recorded): its session's lsid and its txnNumber.
  void Tag(DocumentView lsid, int64_t txn_number);

  Status BeforeCommit() override;
  void AfterCommit(bool committed) override;
  void SavePointSet(int depth) override;
  void RolledBackTo(int depth) override;
  void SavePointPopped(int depth) override;

 private:
  ChangeSet(const Engine& engine, KvTransaction* txn);
  // An event's operationType and its wallTime (0, filled at commit; its
  // offset in *wall_time_offset).
  static void Start(std::string_view operation, BsonBuilder* b, size_t* wall_time_offset);
  // Its ns and documentKey (after fullDocument).
  static void AppendKey(const CollectionMeta& meta, DocumentView doc, BsonBuilder* b);
  // Its collectionUUID and transaction tags, and keeps it.
  void Finish(const CollectionMeta& meta, BsonBuilder* b, size_t wall_time_offset);

  struct PendingStatistics {
    std::shared_ptr<CollectionStatistics> stats;
    StatisticsDelta delta;
    bool locked;
  };
  struct Event {
    std::string value;
    size_t wall_time_offset;  // of the wallTime's 8 bytes in `value`
  };

  const Engine& engine_;
  KvTransaction* const txn_;
  std::vector<PendingStatistics> statistics_;
  std::vector<Event> events_;
  std::vector<size_t> marks_;  // events_.size() at each savepoint
  std::string lsid_;           // BSON of the lsid; empty when untagged
  int64_t txn_number_ = 0;
  uint64_t cluster_time_ = 0;  // while it holds the sequencer
  uint64_t event_bytes_ = 0;
  std::vector<std::string> record_keys_;
  std::vector<std::pair<std::shared_ptr<IndexRuntimeState>, IndexRuntimeState::EntryChange>>
      entry_changes_;
  std::vector<size_t> entry_marks_;  // entry_changes_.size() at each savepoint
  bool records_marked_ = false;  // BeforeCommit marked them in flux
};

// Applies a committed `delta` to `stats` and logs its growth warnings (the
// first ten of each kind, then every power of two). Defined in
// store/write_batcher.cc, whose StatisticsCommit applies a batch's the
// same way.
void ApplyCommittedStatistics(const Engine& engine, CollectionStatistics& stats,
                              const StatisticsDelta& delta);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STORE_CHANGE_SET_H_

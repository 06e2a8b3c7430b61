#include "store/change_set.h"

#include <algorithm>
#include <cstring>

#include "common/clock.h"
#include "common/endian.h"
#include "query/update/update_description.h"
#include "storage/change_log.h"
#include "storage/record_cache.h"

namespace rockdoc::internal {

ChangeSet::ChangeSet(const Engine& engine, KvTransaction* txn) : engine_(engine), txn_(txn) {
  // Savepoints set before this set existed hold none of its events.
  marks_.assign(static_cast<size_t>(txn->savepoint_depth()), 0);
  entry_marks_.assign(static_cast<size_t>(txn->savepoint_depth()), 0);
}

ChangeSet* ChangeSet::Of(const Engine& engine, KvTransaction* txn) {
  for (const auto& hook : txn->commit_hooks()) {
    if (auto* mine = dynamic_cast<ChangeSet*>(hook.get())) return mine;
  }
  auto hook = std::unique_ptr<ChangeSet>(new ChangeSet(engine, txn));
  ChangeSet* set = hook.get();
  txn->AddCommitHook(std::move(hook));
  return set;
}

void ChangeSet::AddStatistics(const CollectionMeta& meta, StatisticsDelta delta) {
  for (PendingStatistics& p : statistics_) {
    if (p.stats == meta.statistics) {
      p.delta.Merge(std::move(delta));
      return;
    }
  }
  statistics_.push_back({meta.statistics, std::move(delta), false});
}

void ChangeSet::Tag(DocumentView lsid, int64_t txn_number) {
  lsid_.assign(reinterpret_cast<const char*>(lsid.data()), lsid.size());
  txn_number_ = txn_number;
}

void ChangeSet::Start(std::string_view operation, BsonBuilder* b, size_t* wall_time_offset) {
  b->AppendString("operationType", operation);
  // The date's 8 bytes follow its type byte and its name.
  *wall_time_offset = b->size() + 1 + std::strlen("wallTime") + 1;
  b->AppendDateTime("wallTime", 0);
}

void ChangeSet::AppendKey(const CollectionMeta& meta, DocumentView doc, BsonBuilder* b) {
  b->OpenDocument("ns");
  b->AppendString("db", meta.db);
  b->AppendString("coll", meta.name);
  b->Close();
  b->OpenDocument("documentKey");
  b->AppendElement(*doc.begin());  // _id, first in every stored document
  b->Close();
}

void ChangeSet::Finish(const CollectionMeta& meta, BsonBuilder* b, size_t wall_time_offset) {
  if (meta.uuid.size() == 16) b->AppendBinary("collectionUUID", BinarySubtype::kUuid, meta.uuid);
  if (!lsid_.empty()) {
    b->AppendInt64("txnNumber", txn_number_);
    b->AppendDocument("lsid", DocumentView(reinterpret_cast<const uint8_t*>(lsid_.data())));
  }
  std::string value = std::move(*b).Build().ReleaseBytes();
  event_bytes_ += value.size();
  events_.push_back({std::move(value), wall_time_offset});
}

void ChangeSet::RecordInsert(const CollectionMeta& meta, DocumentView doc) {
  BsonBuilder b;
  size_t at = 0;
  Start("insert", &b, &at);
  b.AppendDocument("fullDocument", doc);
  AppendKey(meta, doc, &b);
  Finish(meta, &b, at);
}

void ChangeSet::RecordReplace(const CollectionMeta& meta, DocumentView old_doc,
                              DocumentView new_doc, ReplaceKind kind) {
  BsonBuilder b;
  size_t at = 0;
  if (kind == ReplaceKind::kReplace) {
    Start("replace", &b, &at);
    b.AppendDocument("fullDocument", new_doc);
    AppendKey(meta, new_doc, &b);
  } else {
    Start("update", &b, &at);
    AppendKey(meta, new_doc, &b);
    b.AppendDocument("updateDescription", ComputeUpdateDescription(old_doc, new_doc));
    if (meta.record_images()) b.AppendDocument("postImage", new_doc);
  }
  if (meta.record_images()) b.AppendDocument("preImage", old_doc);
  Finish(meta, &b, at);
}

void ChangeSet::RecordDelete(const CollectionMeta& meta, DocumentView old_doc) {
  BsonBuilder b;
  size_t at = 0;
  Start("delete", &b, &at);
  AppendKey(meta, old_doc, &b);
  if (meta.record_images()) b.AppendDocument("preImage", old_doc);
  Finish(meta, &b, at);
}

void ChangeSet::SavePointSet(int depth) {
  marks_.resize(static_cast<size_t>(depth), 0);
  marks_[depth - 1] = events_.size();
  entry_marks_.resize(static_cast<size_t>(depth), 0);
  entry_marks_[depth - 1] = entry_changes_.size();
}

void ChangeSet::RolledBackTo(int depth) {
  const size_t d = static_cast<size_t>(depth);
  const size_t keep = d <= marks_.size() ? marks_[d - 1] : 0;
  for (size_t i = keep; i < events_.size(); ++i) event_bytes_ -= events_[i].value.size();
  events_.resize(std::min(keep, events_.size()));
  marks_.resize(std::min(marks_.size(), d - 1));
  const size_t keep_entries = d <= entry_marks_.size() ? entry_marks_[d - 1] : 0;
  entry_changes_.resize(std::min(keep_entries, entry_changes_.size()));
  entry_marks_.resize(std::min(entry_marks_.size(), d - 1));
}

void ChangeSet::SavePointPopped(int depth) {
  marks_.resize(std::min(marks_.size(), static_cast<size_t>(depth - 1)));
  entry_marks_.resize(std::min(entry_marks_.size(), static_cast<size_t>(depth - 1)));
}

// The statistics' commit locks that need one, in one order (their
// addresses), so that two such commits never wait for each other; then the
// change log's sequencer (always after them: the lock order).
Status ChangeSet::BeforeCommit() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (RecordCache* cache = engine_.record_cache(); cache != nullptr && !record_keys_.empty()) {
    for (const std::string& key : record_keys_) cache->MarkInFlux(key);
    records_marked_ = true;
  }
  std::sort(statistics_.begin(), statistics_.end(),
            [](const PendingStatistics& a, const PendingStatistics& b) {
              return a.stats.get() < b.stats.get();
            });
  for (PendingStatistics& p : statistics_) {
    if (p.delta.sizes_changed && !p.stats->sizes_known()) {
      p.stats->commit_mu.ReaderLock();
      p.locked = true;
    }
  }
  ChangeLog* log = engine_.change_log();
  if (log == nullptr || events_.empty()) return Status::OK();
  cluster_time_ = log->BeginCommit();
  const int64_t now = WallMillis();
  for (size_t i = 0; i < events_.size(); ++i) {
    Event& e = events_[i];
    StoreLE<int64_t>(reinterpret_cast<uint8_t*>(e.value.data() + e.wall_time_offset), now);
    ROCKDOC_RETURN_IF_ERROR(log->Write(txn_, {cluster_time_, static_cast<uint32_t>(i)}, e.value));
  }
  return Status::OK();
}

void ChangeSet::AfterCommit(bool committed) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  if (cluster_time_ != 0) {
    engine_.change_log()->EndCommit(cluster_time_, committed, event_bytes_);
    cluster_time_ = 0;
  }
  for (PendingStatistics& p : statistics_) {
    if (committed) ApplyCommittedStatistics(engine_, *p.stats, p.delta);
    if (p.locked) p.stats->commit_mu.ReaderUnlock();
    p.locked = false;
  }
  // After the sequencer is released (the cache needs none). The stamp is
  // read once the commit returned: at or after the commit's own sequence.
  if (records_marked_) {
    const uint64_t stamp = committed ? engine_.LatestSequenceNumber() : 0;
    RecordCache* cache = engine_.record_cache();
    for (const std::string& key : record_keys_) cache->EndInFlux(key, committed, stamp);
    records_marked_ = false;
  }
  // Each run of one state's changes in one call, in the order they were made.
  if (committed) {
    std::vector<IndexRuntimeState::EntryChange> run;
    for (size_t i = 0; i < entry_changes_.size(); ++i) {
      run.push_back(std::move(entry_changes_[i].second));
      if (i + 1 == entry_changes_.size() ||
          entry_changes_[i + 1].first != entry_changes_[i].first) {
        entry_changes_[i].first->EntriesCommitted(run);
        run.clear();
      }
    }
  }
  entry_changes_.clear();
}

}  // namespace rockdoc::internal

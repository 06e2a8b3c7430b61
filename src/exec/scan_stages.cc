#include "exec/scan_stages.h"

#include "storage/engine.h"

namespace rockdoc::internal {

namespace {
DocumentView ViewOf(const rocksdb::Slice& s) {
  return DocumentView(reinterpret_cast<const uint8_t*>(s.data()));
}
}  // namespace

CollectionScanStage::CollectionScanStage(const ReadContext& ctx, uint32_t collection_id,
                                         bool forward, StageFilter filter)
    : ctx_(ctx),
      lower_(PrefixKey(collection_id)),
      upper_(PrefixKey(collection_id + 1)),
      forward_(forward),
      filter_(std::move(filter)) {}

void CollectionScanStage::ReleaseResources() {
  it_.reset();
  released_ = true;
}

StageState CollectionScanStage::DoWork(WorkingMember** out) {
  if (released_) return Fail(Status(ErrorCode::kIllegalOperation, "the database was closed"));
  if (!started_) {
    rocksdb::ReadOptions ro = ctx_.read_options();
    upper_slice_ = rocksdb::Slice(upper_);
    lower_slice_ = rocksdb::Slice(lower_);
    ro.iterate_upper_bound = &upper_slice_;
    ro.iterate_lower_bound = &lower_slice_;
    ro.adaptive_readahead = true;
    it_.reset(ctx_.engine->db()->NewIterator(ro, ctx_.engine->data_cf()));
    if (forward_) {
      it_->SeekToFirst();
    } else {
      it_->SeekToLast();
    }
    started_ = true;
  } else if (it_->Valid()) {
    if (forward_) {
      it_->Next();
    } else {
      it_->Prev();
    }
  }
  if (!it_->Valid()) {
    if (!it_->status().ok()) return Fail(FromRocks(it_->status(), "collection scan"));
    return StageState::kEof;
  }
  ++docs_examined_;
  member_.Clear();
  member_.record_key = std::string_view(it_->key().data(), it_->key().size());
  member_.doc = ViewOf(it_->value());
  member_.has_doc = true;
  if (filter_ && !filter_.matches(member_.doc, &member_)) return StageState::kNeedTime;
  *out = &member_;
  return StageState::kAdvanced;
}

void CollectionScanStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (filter_) filter_.describe(out);
  out->AppendString("direction", forward_ ? "forward" : "backward");
  if (verbosity != ExplainVerbosity::kQueryPlanner) out->AppendInt64("docsExamined", docs_examined_);
}

IdHackStage::IdHackStage(const ReadContext& ctx, std::string record_key, StageFilter filter)
    : ctx_(ctx), key_(std::move(record_key)), filter_(std::move(filter)) {}

StageState IdHackStage::DoWork(WorkingMember** out) {
  if (done_) return StageState::kEof;
  done_ = true;
  ++keys_examined_;
  value_.Reset();
  rocksdb::Status s =
      ctx_.engine->db()->Get(ctx_.read_options(), ctx_.engine->data_cf(), key_, &value_);
  if (s.IsNotFound()) return StageState::kEof;
  if (!s.ok()) return Fail(FromRocks(s, "_id lookup"));
  ++docs_examined_;
  member_.Clear();
  member_.record_key = key_;
  member_.doc = ViewOf(value_);
  member_.has_doc = true;
  if (filter_ && !filter_.matches(member_.doc, &member_)) return StageState::kEof;
  *out = &member_;
  return StageState::kAdvanced;
}

void IdHackStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (filter_) filter_.describe(out);
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    out->AppendInt64("keysExamined", keys_examined_);
    out->AppendInt64("docsExamined", docs_examined_);
  }
}

}  // namespace rockdoc::internal

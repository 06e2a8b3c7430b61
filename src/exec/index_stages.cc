#include "exec/index_stages.h"

#include "index/index_entry.h"
#include "keystring/keystring.h"
#include "storage/engine.h"

namespace rockdoc::internal {

IndexScanStage::IndexScanStage(const ReadContext& ctx, uint32_t collection_id,
                               std::shared_ptr<const IndexDescriptor> index, IndexBounds bounds,
                               bool forward, bool produce_key_doc, StageFilter key_filter)
    : ctx_(ctx),
      collection_id_(collection_id),
      index_(std::move(index)),
      bounds_(std::move(bounds)),
      forward_(forward),
      produce_key_doc_(produce_key_doc),
      key_filter_(std::move(key_filter)) {
  prefix_ = IndexPrefix(*index_);
  prefix_end_ = keystring::PrefixSuccessor(prefix_);
  for (KeyRange& r : BoundsToKeyRanges(bounds_, index_->descending_bits())) {
    KeyRange abs;
    abs.start = prefix_ + r.start;
    abs.end = r.end.empty() ? prefix_end_ : prefix_ + r.end;
    ranges_.push_back(std::move(abs));
  }
  range_ = forward_ ? 0 : ranges_.size();
}

void IndexScanStage::ReleaseResources() {
  it_.reset();
  released_ = true;
}

// Positions the iterator at the first key of the current range (in scan
// direction); false when no ranges remain.
bool IndexScanStage::PositionAtRange() {
  if (forward_) {
    if (range_ >= ranges_.size()) return false;
    const KeyRange& r = ranges_[range_];
    // A previous range may already have left the iterator past this start.
    if (!it_->Valid() || it_->key().compare(r.start) < 0) {
      it_->Seek(r.start);
      ++seeks_;
    }
  } else {
    if (range_ == 0) return false;
    const KeyRange& r = ranges_[range_ - 1];
    if (!it_->Valid() || it_->key().compare(r.end) >= 0) {
      it_->SeekForPrev(r.end);
      ++seeks_;
      if (it_->Valid() && it_->key().compare(r.end) >= 0) it_->Prev();
    }
  }
  return true;
}

StageState IndexScanStage::DoWork(WorkingMember** out) {
  if (released_) return Fail(Status(ErrorCode::kIllegalOperation, "the database was closed"));
  if (!it_) {
    rocksdb::ReadOptions ro = ctx_.read_options();
    lower_slice_ = rocksdb::Slice(prefix_);
    upper_slice_ = rocksdb::Slice(prefix_end_);
    ro.iterate_lower_bound = &lower_slice_;
    ro.iterate_upper_bound = &upper_slice_;
    it_.reset(ctx_.engine->db()->NewIterator(ro, ctx_.engine->data_cf()));
  }
  if (!in_range_) {
    if (!PositionAtRange()) return StageState::kEof;
    in_range_ = true;
  } else if (it_->Valid()) {
    if (forward_) {
      it_->Next();
    } else {
      it_->Prev();
    }
  }
  if (!it_->Valid()) {
    if (!it_->status().ok()) return Fail(FromRocks(it_->status(), "index scan"));
    return StageState::kEof;
  }
  const KeyRange& r = ranges_[forward_ ? range_ : range_ - 1];
  bool inside = forward_ ? it_->key().compare(r.end) < 0 : it_->key().compare(r.start) >= 0;
  if (!inside) {
    in_range_ = false;
    if (forward_) {
      ++range_;
    } else {
      --range_;
    }
    return StageState::kNeedTime;
  }
  ++keys_examined_;
  IndexEntryView entry;
  Status s = ParseIndexEntry(*index_, it_->key(), it_->value(), &entry);
  if (!s.ok()) return Fail(s);
  record_key_ = RecordKey(collection_id_, entry.id_key);
  if (index_->is_multikey()) {
    ++dups_tested_;
    if (!seen_.insert(record_key_).second) {
      ++dups_dropped_;
      return StageState::kNeedTime;
    }
  }
  member_.Clear();
  member_.record_key = record_key_;
  member_.index_key = entry.values_key;
  member_.index_type_bits = entry.type_bits;
  if (produce_key_doc_) {
    BsonBuilder b;
    s = DecodeIndexKey(*index_, entry, &b);
    if (!s.ok()) return Fail(s);
    member_.SetOwned(std::move(b).Build());
    if (key_filter_ && !key_filter_.matches(member_.doc, &member_)) return StageState::kNeedTime;
  }
  *out = &member_;
  return StageState::kAdvanced;
}

void IndexScanStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (key_filter_) key_filter_.describe(out);
  out->AppendDocument("keyPattern", index_->key_pattern());
  out->AppendString("indexName", index_->name());
  out->AppendBool("isMultiKey", index_->is_multikey());
  out->OpenDocument("multiKeyPaths");
  for (size_t i = 0; i < index_->num_fields(); ++i) {
    out->OpenArray(index_->field_names()[i]);
    for (const std::string& p : index_->MultikeyPrefixes(i)) out->AppendString("", p);
    out->Close();
  }
  out->Close();
  out->AppendBool("isUnique", index_->unique());
  out->AppendBool("isSparse", index_->sparse());
  out->AppendBool("isPartial", index_->partial());
  out->AppendInt32("indexVersion", kIndexVersion);
  out->AppendString("direction", forward_ ? "forward" : "backward");
  out->AppendDocument("indexBounds", bounds_.ToExplain(index_->descending_bits(), !forward_));
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    AppendCount(out, "keysExamined", keys_examined_);
    AppendCount(out, "seeks", seeks_);
    AppendCount(out, "dupsTested", dups_tested_);
    AppendCount(out, "dupsDropped", dups_dropped_);
  }
}

FetchStage::FetchStage(const ReadContext& ctx, std::unique_ptr<PlanStage> child,
                       StageFilter filter)
    : ctx_(ctx), filter_(std::move(filter)) {
  AddChild(std::move(child));
}

StageState FetchStage::DoWork(WorkingMember** out) {
  WorkingMember* in = nullptr;
  StageState s = child()->Work(&in);
  if (s == StageState::kFailure) return Fail(child()->status());
  if (s != StageState::kAdvanced) return s;
  record_key_.assign(in->record_key);
  value_.Reset();
  rocksdb::Status rs =
      ctx_.engine->db()->Get(ctx_.read_options(), ctx_.engine->data_cf(), record_key_, &value_);
  if (rs.IsNotFound()) {
    // An index entry without its document: validate() reports these.
    return Fail(Status(ErrorCode::kDataCorruptionDetected,
                       "an index entry points to a missing document"));
  }
  if (!rs.ok()) return Fail(FromRocks(rs, "fetch"));
  ++docs_examined_;
  member_.Clear();
  member_.record_key = record_key_;
  member_.doc = DocumentView(reinterpret_cast<const uint8_t*>(value_.data()));
  member_.has_doc = true;
  if (filter_ && !filter_.matches(member_.doc, &member_)) return StageState::kNeedTime;
  *out = &member_;
  return StageState::kAdvanced;
}

void FetchStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (filter_) filter_.describe(out);
  if (verbosity != ExplainVerbosity::kQueryPlanner) AppendCount(out, "docsExamined", docs_examined_);
}

ProjectionStage::ProjectionStage(std::unique_ptr<PlanStage> child, std::string stage_name,
                                 Document spec, Function fn)
    : stage_name_(std::move(stage_name)), spec_(std::move(spec)), fn_(std::move(fn)) {
  AddChild(std::move(child));
}

StageState ProjectionStage::DoWork(WorkingMember** out) {
  StageState s = child()->Work(out);
  if (s == StageState::kFailure) return Fail(child()->status());
  if (s != StageState::kAdvanced) return s;
  StatusOr<Document> projected = fn_(**out);
  if (!projected.ok()) return Fail(projected.status());
  (*out)->SetOwned(std::move(projected).value());
  return StageState::kAdvanced;
}

void ProjectionStage::ExplainFields(BsonBuilder* out, ExplainVerbosity) const {
  out->AppendDocument("transformBy", spec_);
}

}  // namespace rockdoc::internal

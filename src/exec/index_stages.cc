#include "exec/index_stages.h"

#include <atomic>

#include "index/access_method.h"
#include "index/index_entry.h"
#include "keystring/keystring.h"
#include "storage/engine.h"
#include "storage/format.h"

namespace rockdoc::internal {

namespace {
std::atomic<bool> g_unique_point_get{true};

std::vector<KeyRange> IndexRanges(const IndexDescriptor& index, const IndexBounds& bounds) {
  std::string prefix = IndexPrefix(index);
  std::string prefix_end = keystring::PrefixSuccessor(prefix);
  std::vector<KeyRange> out;
  for (KeyRange& r : BoundsToKeyRanges(bounds, index.descending_bits())) {
    out.push_back(KeyRange{prefix + r.start, r.end.empty() ? prefix_end : prefix + r.end});
  }
  return out;
}
// Whether each of `ranges` holds one entry at most, its start: a unique
// index's ranges of whole point keys ([p, successor of p): an entry key is
// the prefix and the values' keystring, and keystrings are prefix-free, so
// p is the only key there).
bool ArePointRanges(const IndexDescriptor& index, const IndexBounds& bounds,
                    const std::vector<KeyRange>& ranges) {
  if (index.entry_format() != IndexEntryFormat::kUnique || bounds.simple_range) return false;
  for (const OrderedIntervalList& list : bounds.fields)
    if (!list.AllPoints()) return false;
  for (const KeyRange& r : ranges)
    if (r.end.empty() || r.end != keystring::PrefixSuccessor(r.start)) return false;
  return true;
}

}  // namespace

void SetUniquePointGetEnabled(bool enabled) {
  g_unique_point_get.store(enabled, std::memory_order_relaxed);
}

IndexScanStage::IndexScanStage(const ReadView& view, uint32_t collection_id,
                               std::shared_ptr<const IndexDescriptor> index, IndexBounds bounds,
                               bool forward, Output output, StageFilter key_filter)
    : view_(view),
      collection_id_(collection_id),
      index_(std::move(index)),
      bounds_(std::move(bounds)),
      forward_(forward),
      output_(output),
      key_filter_(std::move(key_filter)),
      walk_({}, {}, {}, forward) {  // set below unless the scan reads points
  std::vector<KeyRange> ranges = IndexRanges(*index_, bounds_);
  point_mode_ = g_unique_point_get.load(std::memory_order_relaxed) &&
                ArePointRanges(*index_, bounds_, ranges);
  if (point_mode_) {
    points_ = std::move(ranges);  // each one's start is its entry's key
  } else {
    std::string prefix = IndexPrefix(*index_);
    std::string prefix_end = keystring::PrefixSuccessor(prefix);
    walk_ = RangeIterator(std::move(prefix), std::move(prefix_end), std::move(ranges), forward);
  }
}

void IndexScanStage::ReleaseOwnResources() { walk_.Release(); }

StageState IndexScanStage::DoWork(WorkingMember** out) {
  std::string_view key, value;
  if (point_mode_) {
    // One point read per work, as the walk takes one work per range.
    if (next_point_ == points_.size()) return StageState::kEof;
    const size_t i = forward_ ? next_point_ : points_.size() - 1 - next_point_;
    ++next_point_;
    ++point_reads_;
    bool found = false;
    Status s = view_.GetRecord(points_[i].start, &point_value_, &found);
    if (!s.ok()) return Fail(s);
    if (!found) return StageState::kNeedTime;
    key = points_[i].start;
    value = point_value_.view();
  } else {
    switch (walk_.Next(view_)) {
      case RangeIterator::Step::kEof:
        return StageState::kEof;
      case RangeIterator::Step::kNextRange:
        return StageState::kNeedTime;
      case RangeIterator::Step::kError:
        return Fail(walk_.status());
      case RangeIterator::Step::kKey:
        break;
    }
    key = walk_.key();
    value = walk_.value();
  }
  ++keys_examined_;
  if (output_ == Output::kCount) {
    // Every entry in the bounds is one matching document.
    member_.Clear();
    *out = &member_;
    return StageState::kAdvanced;
  }
  IndexEntryView entry;
  Status s = ParseIndexEntry(*index_, key, value, &entry);
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
  member_.index = index_.get();
  if (output_ == Output::kKeyDocument) {
    key_builder_.Reset();
    s = index_->access_method().DecodeKey(*index_, entry, &key_builder_);
    if (!s.ok()) return Fail(s);
    member_.SetOwned(std::move(key_builder_).Build());
    if (StageState s; FilteredOut(key_filter_, &member_, StageState::kNeedTime, &s)) return s;
  }
  *out = &member_;
  return StageState::kAdvanced;
}

std::string IndexScanStage::SummaryPart() const {
  // As mongosh prints a key pattern: { a: 1, b: -1 }.
  std::string out(name());
  out.append(" {");
  bool first = true;
  for (Element e : index_->key_pattern()) {
    out.append(first ? " " : ", ");
    first = false;
    out.append(e.key());
    out.append(": ");
    if (e.type() == BsonType::kString) {
      out.append("\"").append(e.String()).append("\"");
    } else {
      const double d = e.NumberAsDouble();
      out.append(d < 0 ? "-1" : "1");
    }
  }
  out.append(" }");
  return out;
}

void IndexScanStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (key_filter_) key_filter_.describe(out);
  index_->access_method().AppendExplain(*index_, out);
  out->AppendString("direction", forward_ ? "forward" : "backward");
  out->AppendDocument("indexBounds", bounds_.ToExplain(index_->descending_bits(), !forward_));
  if (verbosity != ExplainVerbosity::kQueryPlanner) {
    AppendNumber(out, "keysExamined", keys_examined_);
    AppendNumber(out, "seeks", point_mode_ ? point_reads_ : walk_.seeks());
    AppendNumber(out, "dupsTested", dups_tested_);
    AppendNumber(out, "dupsDropped", dups_dropped_);
  }
}

FetchStage::FetchStage(const ReadView& view, std::unique_ptr<PlanStage> child, StageFilter filter)
    : view_(view), filter_(std::move(filter)) {
  AddChild(std::move(child));
}

Status FetchDocument(const ReadView& view, std::string_view record_key, PinnedValue* value,
                     WorkingMember* member) {
  bool found = false;
  Status rs = view.GetRecord(record_key, value, &found);
  if (!rs.ok()) return rs.WithContext("fetch");
  if (!found) {
    return Status(ErrorCode::kDataCorruptionDetected,
                  "an index entry points to a missing document");
  }
  member->Clear();
  member->record_key = record_key;
  member->doc = DocumentView(reinterpret_cast<const uint8_t*>(value->view().data()));
  member->has_doc = true;
  return Status::OK();
}

StageState FetchStage::DoWork(WorkingMember** out) {
  WorkingMember* in = nullptr;
  StageState s = child()->Work(&in);
  if (s == StageState::kFailure) return Fail(child()->status());
  if (s != StageState::kAdvanced) return s;
  record_key_.assign(in->record_key);
  if (Status f = FetchDocument(view_, record_key_, &value_, &member_); !f.ok()) return Fail(f);
  ++docs_examined_;
  // The entry stays valid until the child's next Work(), which comes after
  // this result's consumers are done with it.
  member_.index_key = in->index_key;
  member_.index_type_bits = in->index_type_bits;
  member_.index = in->index;
  member_.text_score = in->text_score;
  if (StageState s; FilteredOut(filter_, &member_, StageState::kNeedTime, &s)) return s;
  *out = &member_;
  return StageState::kAdvanced;
}

void FetchStage::ExplainFields(BsonBuilder* out, ExplainVerbosity verbosity) const {
  if (filter_) filter_.describe(out);
  if (verbosity != ExplainVerbosity::kQueryPlanner)
    AppendNumber(out, "docsExamined", docs_examined_);
}

StageState TransformStage::DoWork(WorkingMember** out) {
  StageState s = child()->Work(out);
  if (s == StageState::kFailure) return Fail(child()->status());
  if (s != StageState::kAdvanced) return s;
  Status t = Transform(*out);
  if (!t.ok()) return Fail(t);
  return StageState::kAdvanced;
}

ProjectionStage::ProjectionStage(std::unique_ptr<PlanStage> child, std::string stage_name,
                                 Document spec, Function fn)
    : TransformStage(std::move(child)),
      stage_name_(std::move(stage_name)),
      spec_(std::move(spec)),
      fn_(std::move(fn)) {}

Status ProjectionStage::Transform(WorkingMember* m) {
  if (!fn_) return Status::OK();
  ROCKDOC_ASSIGN_OR_RETURN(Document projected, fn_(*m));
  m->SetOwned(std::move(projected));
  return Status::OK();
}

void ProjectionStage::ExplainFields(BsonBuilder* out, ExplainVerbosity) const {
  out->AppendDocument("transformBy", spec_);
}

ReturnKeyStage::ReturnKeyStage(std::unique_ptr<PlanStage> child, bool id_order)
    : TransformStage(std::move(child)), id_order_(id_order) {}

Status ReturnKeyStage::Transform(WorkingMember* m) {
  builder_.Reset();
  if (m->index != nullptr && !m->index_key.empty()) {
    IndexEntryView entry;
    entry.values_key = m->index_key;
    entry.type_bits = m->index_type_bits;
    ROCKDOC_RETURN_IF_ERROR(m->index->access_method().DecodeKey(*m->index, entry, &builder_));
  } else if (id_order_ && m->has_doc) {
    Element id = m->doc.Get("_id");
    if (id.ok()) builder_.AppendElement(id);
  }
  m->SetOwned(std::move(builder_).Build());
  return Status::OK();
}

ShowRecordIdStage::ShowRecordIdStage(const ReadView& view, std::unique_ptr<PlanStage> child,
                                     uint32_t capped_order_id)
    : TransformStage(std::move(child)), view_(view), capped_order_id_(capped_order_id) {}

Status ShowRecordIdStage::Transform(WorkingMember* m) {
  constexpr size_t kPrefix = 4;  // the collection's prefix id (storage/format.h)
  if (!m->has_doc || m->record_key.size() < kPrefix) {
    return InternalError("SHOW_RECORD_ID input without a record");
  }
  const std::string_view id_key = m->record_key.substr(kPrefix);
  builder_.Reset();
  for (const Element& e : m->doc) builder_.AppendElement(e);
  if (capped_order_id_ != 0) {
    bool found = false;
    Status r = view_.Get(CappedSeqKey(capped_order_id_, id_key), &seq_, &found);
    if (!r.ok()) return r.WithContext("showRecordId");
    if (!found) {
      return Status(ErrorCode::kDataCorruptionDetected,
                    "a capped collection's document has no sequence entry");
    }
    ROCKDOC_ASSIGN_OR_RETURN(uint64_t seq, ParseCappedSeq(seq_.view()));
    builder_.AppendInt64("$recordId", static_cast<int64_t>(seq));
  } else {
    builder_.AppendBinary("$recordId", BinarySubtype::kGeneric, id_key);
  }
  m->SetOwned(std::move(builder_).Build());
  return Status::OK();
}

}  // namespace rockdoc::internal

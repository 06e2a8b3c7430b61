// pipeline/sort_stage.cc: $sort (pipeline.h): a stable sort in memory, a
// top-k when a $limit follows, and with allowDiskUse sorted runs merged
// past the memory limit. A leading $sort is the pipeline's find's.
#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/planning.h"
#include "pipeline/stage.h"
#include "query/sort_pattern.h"

namespace rockdoc::internal {

namespace {

class SortStage : public Stage {
 public:
  // `keep`: when a $limit follows (after a $skip or not), the output needs
  // only the first `keep` documents: a top-k (0: all).
  SortStage(SortPattern pattern, SpillPolicy policy, int64_t keep = 0)
      : pattern_(std::move(pattern)), policy_(std::move(policy)), keep_(keep) {}
  void AppendExplain(BsonBuilder* out) const override {
    if (keep_ > 0) out->AppendInt64("limit", keep_);  // MongoDB's $sort + $limit coalescence
  }
  void AppendExecutionStats(BsonBuilder* out) const override { runs_.AppendExecutionStats(out); }
  StatusOr<std::optional<Document>> Next() override {
    if (!sorted_) {
      ROCKDOC_RETURN_IF_ERROR(ReadAll());
      sorted_ = true;
    }
    if (!runs_.empty()) return NextMerged();
    if (next_ == docs_.size()) return std::optional<Document>();
    return std::optional<Document>(std::move(docs_[next_++]));
  }

 private:
  StatusOr<int> Compare(DocumentView a, DocumentView b) const {
    return pattern_.CompareDocuments(a, b);
  }

  Status SortBuffer() {
    Status failed;
    std::stable_sort(docs_.begin(), docs_.end(), [&](const Document& a, const Document& b) {
      StatusOr<int> c = Compare(a.view(), b.view());
      if (!c.ok()) {
        if (failed.ok()) failed = c.status();
        return false;
      }
      return *c < 0;
    });
    return failed;
  }

  // A top-k: the `keep_` least documents seen so far in a heap whose top is
  // the greatest (ties: the later input is greater, so the first kept
  // wins, as the stable sort). True when the input is read and docs_ holds
  // the answer sorted; false when the kept documents outgrew the memory
  // limit (huge documents): docs_ then holds them, sorted, for the full
  // sort to go on from (*bytes: their size).
  StatusOr<bool> ReadTopK(int64_t* bytes) {
    struct Kept {
      Document doc;
      int64_t seq;
    };
    std::vector<Kept> heap;
    Status failed;
    auto before = [&](const Kept& a, const Kept& b) {
      StatusOr<int> c = Compare(a.doc.view(), b.doc.view());
      if (!c.ok()) {
        if (failed.ok()) failed = c.status();
        return false;
      }
      return *c < 0 || (*c == 0 && a.seq < b.seq);
    };
    auto sorted_out = [&]() -> Status {
      std::sort_heap(heap.begin(), heap.end(), before);
      ROCKDOC_RETURN_IF_ERROR(failed);
      docs_.reserve(heap.size());
      for (Kept& k : heap) docs_.push_back(std::move(k.doc));
      return Status::OK();
    };
    for (int64_t seq = 0;; ++seq) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      Kept k{std::move(*doc), seq};
      if (static_cast<int64_t>(heap.size()) < keep_) {
        *bytes += DocumentBytes(k.doc);
        heap.push_back(std::move(k));
        std::push_heap(heap.begin(), heap.end(), before);
      } else if (before(k, heap.front())) {
        *bytes += DocumentBytes(k.doc) - DocumentBytes(heap.front().doc);
        std::pop_heap(heap.begin(), heap.end(), before);
        heap.back() = std::move(k);
        std::push_heap(heap.begin(), heap.end(), before);
      }
      ROCKDOC_RETURN_IF_ERROR(failed);
      if (*bytes > policy_.memory_limit) {
        ROCKDOC_RETURN_IF_ERROR(sorted_out());
        return false;
      }
    }
    ROCKDOC_RETURN_IF_ERROR(sorted_out());
    return true;
  }

  // The whole input: in memory while it fits, else as sorted runs on disk
  // (allowDiskUse) and the last part in memory.
  Status ReadAll() {
    int64_t bytes = 0;
    if (keep_ > 0) {
      ROCKDOC_ASSIGN_OR_RETURN(bool done, ReadTopK(&bytes));
      if (done) return Status::OK();
    }
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      bytes += DocumentBytes(*doc);
      if (bytes > policy_.memory_limit) {
        if (!policy_.can_spill()) return MemoryExceeded("$sort", policy_.allow_disk_use);
        ROCKDOC_RETURN_IF_ERROR(SortBuffer());
        ROCKDOC_RETURN_IF_ERROR(runs_.Spill(policy_, [&](SpillWriter* w) -> Status {
          for (const Document& d : docs_) ROCKDOC_RETURN_IF_ERROR(w->Add(d.bytes()));
          return Status::OK();
        }));
        docs_.clear();
        docs_.shrink_to_fit();
        bytes = DocumentBytes(*doc);
      }
      docs_.push_back(std::move(*doc));
    }
    ROCKDOC_RETURN_IF_ERROR(SortBuffer());
    if (!runs_.empty()) ROCKDOC_RETURN_IF_ERROR(runs_.Start());
    return Status::OK();
  }

  // The least of the runs' heads and the buffer's; a tie goes to the runs,
  // which hold earlier input.
  StatusOr<std::optional<Document>> NextMerged() {
    ROCKDOC_ASSIGN_OR_RETURN(int run, runs_.Least([this](DocumentView a, DocumentView b) {
                               return Compare(a, b);
                             }));
    const bool buffered = next_ < docs_.size();
    if (run >= 0 && buffered) {
      ROCKDOC_ASSIGN_OR_RETURN(int c, Compare(docs_[next_].view(), runs_.head(run).view()));
      if (c < 0) run = -1;
    }
    if (run < 0) {
      if (!buffered) return std::optional<Document>();
      return std::optional<Document>(std::move(docs_[next_++]));
    }
    std::optional<Document> out(runs_.head(run));
    ROCKDOC_RETURN_IF_ERROR(runs_.Advance(run));
    return out;
  }

  SortPattern pattern_;
  SpillPolicy policy_;
  int64_t keep_ = 0;
  bool sorted_ = false;
  std::vector<Document> docs_;
  size_t next_ = 0;
  SpilledRuns runs_;
};

StatusOr<std::unique_ptr<Stage>> ParseSort(const Element& s, const StageContext& ctx) {
  if (s.type() != BsonType::kDocument) {
    return StageFailed(15973, "the $sort key specification must be an object");
  }
  if (s.Document().empty()) return StageFailed(15976, "$sort stage must have at least one sort key");
  ROCKDOC_ASSIGN_OR_RETURN(SortPattern pattern, SortPattern::Parse(s.Document()));
  return std::unique_ptr<Stage>(std::make_unique<SortStage>(
      std::move(pattern), SpillPolicy::Of(ctx.options), TopK(ctx.stages, ctx.index + 1)));
}

// A $match passes a $sort: it changes no field.
bool SortChangedRoots(const Element& stage, std::set<std::string>* changed) {
  (void)changed;
  return stage.type() == BsonType::kDocument && !stage.Document().empty();
}

}  // namespace

std::unique_ptr<Stage> MakeSortStage(SortPattern pattern, const PipelineOptions& options) {
  return std::make_unique<SortStage>(std::move(pattern), SpillPolicy::Of(options));
}

void AddSortStage(StageTable* table) {
  table->emplace("$sort", StageDef{.parse = &ParseSort, .changed_roots = &SortChangedRoots});
}

}  // namespace rockdoc::internal

// pipeline/sample_stage.cc: $sample (pipeline.h): reservoir sampling, in
// random order.
#include <algorithm>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {

// `size` documents chosen at random (reservoir sampling), in random order.
class SampleStage : public Stage {
 public:
  SampleStage(int64_t size, SpillPolicy policy) : size_(size), policy_(std::move(policy)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (!sampled_) {
      std::mt19937_64 rng(std::random_device{}());
      int64_t seen = 0, bytes = 0;
      for (;;) {
        ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
        if (!doc) break;
        ++seen;
        if (static_cast<int64_t>(kept_.size()) < size_) {
          bytes += static_cast<int64_t>(doc->size());
          kept_.push_back(std::move(*doc));
        } else {
          const uint64_t j = rng() % static_cast<uint64_t>(seen);
          if (j < static_cast<uint64_t>(size_)) {
            bytes += static_cast<int64_t>(doc->size()) - static_cast<int64_t>(kept_[j].size());
            kept_[j] = std::move(*doc);
          }
        }
        if (bytes > policy_.memory_limit) return MemoryExceeded("$sample", policy_.allow_disk_use);
      }
      std::shuffle(kept_.begin(), kept_.end(), rng);
      sampled_ = true;
    }
    if (next_ == kept_.size()) return std::optional<Document>();
    return std::optional<Document>(std::move(kept_[next_++]));
  }

 private:
  int64_t size_;
  SpillPolicy policy_;
  bool sampled_ = false;
  std::vector<Document> kept_;
  size_t next_ = 0;
};

StatusOr<int64_t> ParseSampleSize(const Element& spec) {
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(28745, "the $sample stage specification must be an object");
  }
  std::optional<int64_t> size;
  for (const Element& f : spec.Document()) {
    if (f.key() != "size") {
      return StageFailed(28748, "unrecognized option to $sample: " + std::string(f.key()));
    }
    int64_t n = 0;
    if (!f.IsNumber() || !f.ExactInt64(&n)) {
      return StageFailed(28746, "size argument to $sample must be a number");
    }
    if (n < 0) return StageFailed(28747, "size argument to $sample must not be negative");
    size = n;
  }
  if (!size) return StageFailed(28749, "$sample stage must specify a size");
  return *size;
}

StatusOr<std::unique_ptr<Stage>> ParseSample(const Element& s, const StageContext& ctx) {
  ROCKDOC_ASSIGN_OR_RETURN(int64_t size, ParseSampleSize(s));
  return std::unique_ptr<Stage>(std::make_unique<SampleStage>(size, SpillPolicy::Of(ctx.options)));
}

}  // namespace

void AddSampleStage(StageTable* table) { table->emplace("$sample", StageDef{.parse = &ParseSample}); }

}  // namespace rockdoc::internal

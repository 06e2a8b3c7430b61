// pipeline/facet_stage.cc: $facet (pipeline.h): the input read once (with
// allowDiskUse, past the memory limit, into a run per facet), each facet's
// pipeline over it, one document out.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/planning.h"
#include "pipeline/stage.h"

namespace rockdoc::internal {

namespace {

// A buffered input, read again by each facet.
class VectorSource : public DocumentSource {
 public:
  explicit VectorSource(const std::vector<Document>* docs) : docs_(docs) {}
  StatusOr<std::optional<Document>> Next() override {
    if (next_ == docs_->size()) return std::optional<Document>();
    return std::optional<Document>(Document::AdoptValidated(std::string((*docs_)[next_++].bytes())));
  }

 private:
  const std::vector<Document>* docs_;
  size_t next_ = 0;
};

// One document: {<facet>: [its pipeline's output over the input], ...}.
class FacetStage : public Stage {
 public:
  using Facets = std::vector<std::pair<std::string, std::vector<std::unique_ptr<Stage>>>>;
  FacetStage(Facets facets, SpillPolicy policy)
      : facets_(std::move(facets)), policy_(std::move(policy)) {}
  void AppendExecutionStats(BsonBuilder* out) const override { out->AppendBool("usedDisk", spilled_); }
  StatusOr<std::optional<Document>> Next() override {
    if (done_) return std::optional<Document>();
    done_ = true;
    // The input, in memory while it fits; past the limit (allowDiskUse) a
    // run per facet, each read once by its facet.
    std::vector<Document> docs;
    std::vector<std::unique_ptr<SpillWriter>> runs;
    int64_t bytes = 0;
    for (;;) {
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) break;
      if (spilled_) {
        for (auto& run : runs) ROCKDOC_RETURN_IF_ERROR(run->Add(doc->bytes()));
        continue;
      }
      bytes += DocumentBytes(*doc);
      if (bytes > policy_.memory_limit) {
        if (!policy_.can_spill()) return MemoryExceeded("$facet", policy_.allow_disk_use);
        docs.push_back(std::move(*doc));
        for (size_t i = 0; i < facets_.size(); ++i) {
          ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillWriter> run, policy_.new_run());
          for (const Document& d : docs) ROCKDOC_RETURN_IF_ERROR(run->Add(d.bytes()));
          runs.push_back(std::move(run));
        }
        docs.clear();
        docs.shrink_to_fit();
        spilled_ = true;
        continue;
      }
      docs.push_back(std::move(*doc));
    }
    BsonBuilder out;
    size_t i = 0;
    for (auto& [name, chain] : facets_) {
      std::unique_ptr<DocumentSource> input;
      if (spilled_) {
        ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<SpillReader> run, runs[i]->Finish());
        input = MakeSpillSource(std::move(run));
      } else {
        input = std::make_unique<VectorSource>(&docs);
      }
      ++i;
      std::unique_ptr<DocumentSource> source = Connect(std::move(input), std::move(chain));
      out.OpenArray(name);
      for (;;) {
        ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, source->Next());
        if (!doc) break;
        out.AppendDocument("", doc->view());
      }
      out.Close();
    }
    Document result = std::move(out).Build();
    if (result.size() > static_cast<size_t>(kMaxBsonObjectSize)) {
      return Status(ErrorCode::kBSONObjectTooLarge,
                    "$facet: the output document is " + std::to_string(result.size()) +
                        " bytes, over the 16 MiB limit");
    }
    return std::optional<Document>(std::move(result));
  }

 private:
  Facets facets_;
  SpillPolicy policy_;
  bool done_ = false;
  bool spilled_ = false;
};

StatusOr<std::unique_ptr<Stage>> ParseFacet(const Element& s, const StageContext& ctx) {
  if (s.type() != BsonType::kDocument || s.Document().empty()) {
    return StageFailed(
        40169, "the $facet specification must be a non-empty object, but found: " + Shown(s));
  }
  FacetStage::Facets facets;
  for (const Element& f : s.Document()) {
    ROCKDOC_RETURN_IF_ERROR(CheckFieldName("$facet", f.key()));
    if (f.type() != BsonType::kArray) {
      return StageFailed(40170, "arguments to $facet must be arrays, " + std::string(f.key()) +
                                    " is type " + std::string(BsonTypeAlias(f.type())));
    }
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<Element> sub, StageElements(f.Array()));
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Stage>> chain,
                             ParseStages(sub, 0, ctx.options, ctx.find, /*in_facet=*/true));
    facets.emplace_back(std::string(f.key()), std::move(chain));
  }
  return std::unique_ptr<Stage>(
      std::make_unique<FacetStage>(std::move(facets), SpillPolicy::Of(ctx.options)));
}

}  // namespace

void AddFacetStage(StageTable* table) {
  table->emplace("$facet", StageDef{.parse = &ParseFacet, .in_facet = false});
}

}  // namespace rockdoc::internal

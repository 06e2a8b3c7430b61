// pipeline/unwind_stage.cc: $unwind (pipeline.h).
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/planning.h"
#include "pipeline/stage.h"
#include "query/field_path.h"

namespace rockdoc::internal {

namespace {

class UnwindStage : public Stage {
 public:
  UnwindStage(std::vector<std::string> path, std::optional<std::vector<std::string>> index,
              bool preserve)
      : path_(std::move(path)), index_(std::move(index)), preserve_(preserve) {}

  StatusOr<std::optional<Document>> Next() override {
    for (;;) {
      if (current_ && position_ < elements_.size()) {
        const size_t i = position_++;
        Document out = WithField(current_->view(), path_, elements_[i]);
        if (index_) out = WithField(out.view(), *index_, Int64Value(static_cast<int64_t>(i)).element());
        return std::optional<Document>(std::move(out));
      }
      ROCKDOC_ASSIGN_OR_RETURN(std::optional<Document> doc, input_->Next());
      if (!doc) return doc;
      current_ = std::move(doc);
      elements_.clear();
      position_ = 0;
      const Element value = GetField(current_->view(), path_);
      if (value.type() == BsonType::kArray) {
        for (const Element& e : value.Array()) elements_.push_back(e);
        if (!elements_.empty()) continue;
        if (!preserve_) continue;
        // An empty array, preserved: the document without the field.
        Document out = WithField(current_->view(), path_, Element());
        if (index_) out = WithField(out.view(), *index_, NullValue().element());
        return std::optional<Document>(std::move(out));
      }
      const bool nullish = !value.ok() || value.IsNull() || value.type() == BsonType::kUndefined;
      if (nullish && !preserve_) continue;
      // A value that is not an array is one element; a null or missing one
      // (preserved) is the document as it is.
      Document out = Document::AdoptValidated(std::string(current_->bytes()));
      if (index_) out = WithField(out.view(), *index_, NullValue().element());
      return std::optional<Document>(std::move(out));
    }
  }

 private:
  std::vector<std::string> path_;
  std::optional<std::vector<std::string>> index_;
  bool preserve_;
  std::optional<Document> current_;
  std::vector<Element> elements_;  // views into *current_
  size_t position_ = 0;
};

StatusOr<std::vector<std::string>> UnwindPath(std::string_view what, const Element& e) {
  if (e.type() != BsonType::kString) {
    return StageFailed(28808, "Expected a string as the path for $unwind stage, got " +
                                  std::string(BsonTypeAlias(e.type())));
  }
  std::string_view path = e.String();
  if (path.empty()) return StageFailed(28810, "No path specified to $unwind stage");
  if (path[0] != '$') {
    return StageFailed(28818, std::string(what) +
                                  " option to $unwind stage should be prefixed with a "
                                  "'$': " +
                                  std::string(path));
  }
  return SplitFieldPath(path.substr(1));
}

StatusOr<std::unique_ptr<Stage>> ParseUnwind(const Element& spec, const StageContext& ctx) {
  (void)ctx;
  if (spec.type() == BsonType::kString) {
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> path, UnwindPath("path", spec));
    return std::unique_ptr<Stage>(std::make_unique<UnwindStage>(std::move(path), std::nullopt, false));
  }
  if (spec.type() != BsonType::kDocument) {
    return StageFailed(15981,
                       "expected either a string or an object as specification for $unwind "
                       "stage, got " +
                           std::string(BsonTypeAlias(spec.type())));
  }
  std::optional<std::vector<std::string>> path, index;
  bool preserve = false;
  for (const Element& f : spec.Document()) {
    if (f.key() == "path") {
      ROCKDOC_ASSIGN_OR_RETURN(path, UnwindPath("path", f));
    } else if (f.key() == "includeArrayIndex") {
      if (f.type() != BsonType::kString) {
        return StageFailed(28810,
                           "expected a non-empty string for the includeArrayIndex option to "
                           "$unwind stage");
      }
      if (f.String().empty() || f.String()[0] == '$') {
        return StageFailed(28822,
                           "includeArrayIndex option to $unwind stage should not be prefixed "
                           "with a '$': " +
                               std::string(f.String()));
      }
      index = SplitDotted(f.String());
    } else if (f.key() == "preserveNullAndEmptyArrays") {
      if (!f.IsBool()) {
        return StageFailed(28809,
                           "expected a boolean for the preserveNullAndEmptyArrays option to "
                           "$unwind stage");
      }
      preserve = f.Bool();
    } else {
      return StageFailed(28811, "unrecognized option to $unwind stage: " + std::string(f.key()));
    }
  }
  if (!path) return StageFailed(28812, "no path specified to $unwind stage");
  return std::unique_ptr<Stage>(
      std::make_unique<UnwindStage>(std::move(*path), std::move(index), preserve));
}

// A $match passes an $unwind of another path (and array index).
bool UnwindChangedRoots(const Element& stage, std::set<std::string>* changed) {
  Element path = stage;
  if (stage.type() == BsonType::kDocument) {
    path = stage.Document().Get("path");
    const Element index = stage.Document().Get("includeArrayIndex");
    if (index.ok()) {
      if (index.type() != BsonType::kString) return false;
      changed->insert(RootOf(index.String()));
    }
  }
  if (path.type() != BsonType::kString || path.String().size() < 2 || path.String()[0] != '$') return false;
  changed->insert(RootOf(path.String().substr(1)));
  return true;
}

}  // namespace

void AddUnwindStage(StageTable* table) {
  table->emplace("$unwind", StageDef{.parse = &ParseUnwind, .changed_roots = &UnwindChangedRoots});
}

}  // namespace rockdoc::internal

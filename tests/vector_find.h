// tests/vector_find.h: a pipeline's find (internal::FindFn) over a vector of
// documents, whatever it is asked: for tests of the pipeline's own stages
// (whatever would be pushed down to a real find is not applied).
#ifndef ROCKDOC_TESTS_VECTOR_FIND_H_
#define ROCKDOC_TESTS_VECTOR_FIND_H_

#include <memory>
#include <vector>

#include "pipeline/pipeline.h"

namespace rockdoc::test {

class VectorCursor : public internal::CursorImpl {
 public:
  explicit VectorCursor(const std::vector<Document>* docs) : docs_(docs) {}
  bool Next() override { return ++i_ <= docs_->size(); }
  DocumentView document() const override { return (*docs_)[i_ - 1].view(); }
  Status status() const override { return Status::OK(); }

 private:
  const std::vector<Document>* docs_;
  size_t i_ = 0;
};

// `docs` must outlive the pipelines opened with the result.
inline internal::FindFn VectorFind(const std::vector<Document>* docs) {
  return [docs](std::string_view, DocumentView, const FindOptions&)
             -> StatusOr<std::unique_ptr<internal::CursorImpl>> {
    return std::unique_ptr<internal::CursorImpl>(std::make_unique<VectorCursor>(docs));
  };
}

}  // namespace rockdoc::test

#endif  // ROCKDOC_TESTS_VECTOR_FIND_H_

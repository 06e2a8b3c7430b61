// Temporary: operations declared in client.h whose implementation lands in
// the next commits (query language, indexes). Each fails clearly meanwhile.
#include "rockdoc/client.h"

namespace rockdoc {

namespace {
Status Pending(const char* what) {
  return Status(ErrorCode::kNotImplemented, std::string(what) + " is not available yet");
}
}  // namespace

StatusOr<std::optional<Document>> Collection::FindOne(DocumentView, const FindOptions&) const {
  return Pending("findOne");
}
StatusOr<std::vector<Value>> Collection::Distinct(std::string_view, DocumentView) const {
  return Pending("distinct");
}
StatusOr<Document> Collection::ExplainFind(DocumentView, const FindOptions&,
                                           ExplainVerbosity) const {
  return Pending("explain");
}
StatusOr<UpdateResult> Collection::UpdateOne(DocumentView, DocumentView,
                                             const UpdateOptions&) const {
  return Pending("updateOne");
}
StatusOr<UpdateResult> Collection::UpdateMany(DocumentView, DocumentView,
                                              const UpdateOptions&) const {
  return Pending("updateMany");
}
StatusOr<std::optional<Document>> Collection::FindOneAndUpdate(
    DocumentView, DocumentView, const FindOneAndModifyOptions&) const {
  return Pending("findOneAndUpdate");
}
StatusOr<std::optional<Document>> Collection::FindOneAndReplace(
    DocumentView, DocumentView, const FindOneAndModifyOptions&) const {
  return Pending("findOneAndReplace");
}
StatusOr<std::optional<Document>> Collection::FindOneAndDelete(
    DocumentView, const FindOneAndModifyOptions&) const {
  return Pending("findOneAndDelete");
}
StatusOr<Document> Collection::ExplainUpdate(DocumentView, DocumentView, bool,
                                             const UpdateOptions&, ExplainVerbosity) const {
  return Pending("explain");
}
StatusOr<Document> Collection::ExplainDelete(DocumentView, bool, ExplainVerbosity) const {
  return Pending("explain");
}
StatusOr<std::string> Collection::CreateIndex(DocumentView, const IndexOptions&,
                                              const std::function<void(int64_t)>&) const {
  return Pending("createIndex");
}
StatusOr<std::vector<Document>> Collection::ListIndexes() const { return Pending("listIndexes"); }
Status Collection::DropIndex(std::string_view) const { return Pending("dropIndex"); }
Status Collection::DropIndexByKey(DocumentView) const { return Pending("dropIndex"); }
Status Collection::DropIndexes() const { return Pending("dropIndexes"); }
StatusOr<std::vector<Document>> Collection::IndexStats() const { return Pending("indexStats"); }

}  // namespace rockdoc

// pipeline/stage.cc: what the stage files share (stage.h): errors in
// MongoDB's words, connecting a chain, decoding a stage's named fields,
// paths inside documents, the vector source.
#include "pipeline/stage.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

// WithField's writer for a value at hand (removed when `value` is missing).
void SetField(DocumentView doc, const std::vector<std::string>& parts, size_t i,
              const Element& value, BsonBuilder* out) {
  FieldWriter write;
  if (value.ok()) {
    write = [&value](std::string_view key, BsonBuilder* o) { o->AppendElementAs(key, value); };
  }
  SetFieldWith(doc, parts, i, write, out);
}

// A vector's documents, owned.
class OwnedVectorSource : public DocumentSource {
 public:
  explicit OwnedVectorSource(std::vector<Document> docs) : docs_(std::move(docs)) {}
  StatusOr<std::optional<Document>> Next() override {
    if (next_ == docs_.size()) return std::optional<Document>();
    return std::optional<Document>(std::move(docs_[next_++]));
  }

 private:
  std::vector<Document> docs_;
  size_t next_ = 0;
};

}  // namespace

std::string Shown(const Element& e) { return ValueToJson(e, JsonFormat::kShell); }

Status CheckFieldName(std::string_view stage, std::string_view name) {
  if (name.empty()) return StageFailed(40352, "FieldPath cannot be constructed with empty string");
  if (name[0] == '$') {
    return StageFailed(16410, std::string(stage) +
                                  ": FieldPath field names may not start with '$'. Consider using "
                                  "$getField or $setField.");
  }
  return Status::OK();
}

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Element GetField(DocumentView doc, const std::vector<std::string>& parts) {
  Element e;
  for (size_t i = 0; i < parts.size(); ++i) {
    e = doc.Get(parts[i]);
    if (i + 1 == parts.size()) return e;
    if (e.type() != BsonType::kDocument) return Element();
    doc = e.Document();
  }
  return e;
}

void SetFieldWith(DocumentView doc, const std::vector<std::string>& parts, size_t i,
                  const FieldWriter& write, BsonBuilder* out) {
  bool done = false;
  for (const Element& e : doc) {
    if (e.key() != parts[i]) {
      out->AppendElement(e);
      continue;
    }
    done = true;
    if (i + 1 == parts.size()) {
      if (write) write(parts[i], out);
    } else {
      out->OpenDocument(parts[i]);
      SetFieldWith(e.type() == BsonType::kDocument ? e.Document() : DocumentView(), parts, i + 1,
                   write, out);
      out->Close();
    }
  }
  if (done || !write) return;
  if (i + 1 == parts.size()) {
    write(parts[i], out);
  } else {
    out->OpenDocument(parts[i]);
    SetFieldWith(DocumentView(), parts, i + 1, write, out);
    out->Close();
  }
}

Document WithField(DocumentView doc, const std::vector<std::string>& parts, const Element& value) {
  BsonBuilder b;
  SetField(doc, parts, 0, value, &b);
  return std::move(b).Build();
}

Status ResultTooLarge(const Document& doc) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "%zX", doc.size());
  std::string first;
  if (!doc.empty()) {
    const Element e = *doc.begin();
    first = std::string(e.key()) + ": " + Shown(e);
    if (first.size() > 100) first = first.substr(0, 100) + "...";
  }
  return Status(ErrorCode::kBSONObjectTooLarge,
                "BSONObj size: " + std::to_string(doc.size()) + " (0x" + hex +
                    ") is invalid. Size must be between 0 and " +
                    std::to_string(kMaxBsonObjectInternalSize) + "(16MB) First element: " + first);
}

std::unique_ptr<DocumentSource> Connect(std::unique_ptr<DocumentSource> source,
                                        std::vector<std::unique_ptr<Stage>> chain) {
  for (std::unique_ptr<Stage>& stage : chain) {
    stage->set_input(std::move(source));
    source = std::move(stage);
  }
  return source;
}

Status MemoryExceeded(std::string_view stage, bool allow_disk_use) {
  if (allow_disk_use) {
    return Status(ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed,
                  "Exceeded memory limit for " + std::string(stage) +
                      "; rockdoc does not spill this stage to disk (only $sort and $group do), "
                      "so allowDiskUse cannot help it.");
  }
  return Status(ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed,
                "Exceeded memory limit for " + std::string(stage) +
                    ", but didn't allow external spilling; pass allowDiskUse:true to opt in.");
}

Status DecodeStageFields(std::string_view stage, DocumentView spec,
                         std::initializer_list<StageField> fields) {
  for (const Element& f : spec) {
    auto it = std::find_if(fields.begin(), fields.end(),
                           [&](const StageField& s) { return s.name == f.key(); });
    if (it == fields.end()) {
      return StageFailed(40415, "BSON field '" + std::string(stage) + "." + std::string(f.key()) +
                                    "' is an unknown field.");
    }
    *it->slot = f;
  }
  return Status::OK();
}

Status StageFailed(int code, std::string message) {
  return Status(static_cast<ErrorCode>(code), std::move(message));
}

std::unique_ptr<DocumentSource> MakeVectorSource(std::vector<Document> docs) {
  return std::make_unique<OwnedVectorSource>(std::move(docs));
}

}  // namespace rockdoc::internal

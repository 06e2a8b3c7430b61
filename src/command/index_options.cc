// command/index_options.cc: createIndexes' index specifications decoded
// into IndexOptions (command/index_options.h).
#include "command/index_options.h"

#include <string>

#include "common/option_table.h"
#include "index/index_descriptor.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

// unique, sparse, background: MongoDB takes a bool or a number.
Status DecodeBoolish(const Element& e, bool* out) {
  if (!e.IsBool() && !e.IsNumber()) {
    return TypeMismatch("The field '" + std::string(e.key()) + "' has value " +
                        ValueToJson(e, JsonFormat::kShell) + ", which is not convertible to bool");
  }
  *out = e.IsBool() ? e.Bool() : e.NumberAsDouble() != 0;
  return Status::OK();
}

Status DecodeString(const Element& e, std::optional<std::string>* out) {
  if (!e.IsString()) {
    return TypeMismatch("The field '" + std::string(e.key()) + "' must be a string, but got " +
                        std::string(BsonTypeAlias(e.type())));
  }
  *out = std::string(e.String());
  return Status::OK();
}

// createIndex's options, as MongoDB's index specification knows them
// (index_key_validate's allowed field names, `key` aside). Rows with no
// decoder are options rockdoc does not implement (yet): each is refused
// with NotImplemented rather than accepted and dropped.
constexpr OptionField<IndexOptions> kIndexOptionTable[] = {
    {"name",
     [](const Element& e, IndexOptions* o) {
       if (!e.IsString()) {
         return TypeMismatch("The field 'name' must be a string, but got " +
                             std::string(BsonTypeAlias(e.type())));
       }
       o->name = std::string(e.String());
       return Status::OK();
     }},
    {"unique", [](const Element& e, IndexOptions* o) { return DecodeBoolish(e, &o->unique); }},
    {"sparse", [](const Element& e, IndexOptions* o) { return DecodeBoolish(e, &o->sparse); }},
    {"partialFilterExpression",
     [](const Element& e, IndexOptions* o) {
       if (!e.IsDocument()) {
         return TypeMismatch("The field 'partialFilterExpression' must be an object, but got " +
                             std::string(BsonTypeAlias(e.type())));
       }
       o->partial_filter_expression = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"v",
     [](const Element& e, IndexOptions*) {
       if (!e.IsNumber()) {
         return TypeMismatch("The field 'v' must be a number, but got " +
                             std::string(BsonTypeAlias(e.type())));
       }
       std::optional<int64_t> v = e.AsExactInt64();
       if (v == 2) return Status::OK();  // the only version rockdoc builds
       if (v == 1) {
         return Status(ErrorCode::kNotImplemented,
                       "Index version v:1 is not supported by rockdoc; omit 'v' or use v:2");
       }
       return Status(ErrorCode::kCannotCreateIndex,
                     "Invalid index specification; cannot create an index with v=" +
                         ValueToJson(e, JsonFormat::kShell));
     }},
    // Accepted and meaningless since MongoDB 4.2 (every build is hybrid),
    // as MongoDB accepts them; the values are still type-checked.
    {"background",
     [](const Element& e, IndexOptions* o) {
       bool background = false;
       ROCKDOC_RETURN_IF_ERROR(DecodeBoolish(e, &background));
       o->background = background;
       return Status::OK();
     }},
    {"dropDups",
     [](const Element& e, IndexOptions*) {
       bool ignored;
       return DecodeBoolish(e, &ignored);
     }},
    // The namespace, which MongoDB ignores since 4.4.
    {"ns", [](const Element&, IndexOptions*) { return Status::OK(); }},
    // Known to MongoDB, not implemented by rockdoc.
    {"expireAfterSeconds",
     [](const Element& e, IndexOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->expire_after_seconds, ParseExpireAfterSeconds(e));
       return Status::OK();
     }},
    // A document; its fields are checked where it is used (query/collator.h).
    {"collation",
     [](const Element& e, IndexOptions* o) { return DocumentOption(e, "collation", &o->collation); }},
    {"hidden", [](const Element& e, IndexOptions* o) { return DecodeBoolish(e, &o->hidden); }},
    // Text indexes (index/text_index.h checks the values).
    {"weights",
     [](const Element& e, IndexOptions* o) {
       if (!e.IsDocument()) {
         return TypeMismatch("The field 'weights' must be an object, but got " +
                             std::string(BsonTypeAlias(e.type())));
       }
       o->weights = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"default_language",
     [](const Element& e, IndexOptions* o) { return DecodeString(e, &o->default_language); }},
    {"language_override",
     [](const Element& e, IndexOptions* o) { return DecodeString(e, &o->language_override); }},
    {"textIndexVersion",
     [](const Element& e, IndexOptions* o) {
       std::optional<int64_t> v = e.IsNumber() ? e.AsExactInt64() : std::nullopt;
       if (!v || *v < INT32_MIN || *v > INT32_MAX) {
         return TypeMismatch("The field 'textIndexVersion' must be an integer, but got " +
                             ValueToJson(e, JsonFormat::kShell));
       }
       o->text_index_version = static_cast<int32_t>(*v);
       return Status::OK();
     }},
    {"2dsphereIndexVersion",
     [](const Element& e, IndexOptions* o) -> Status {
       if (!e.IsNumber() || e.NumberAsDouble() != static_cast<int32_t>(e.NumberAsDouble())) {
         return Status(ErrorCode::kCannotCreateIndex,
                       "2dsphereIndexVersion must be a number, not " +
                           ValueToJson(e, JsonFormat::kShell));
       }
       o->sphere_index_version = static_cast<int32_t>(e.NumberAsDouble());
       return Status::OK();
     }},
    {"bits", nullptr},
    {"min", nullptr},
    {"max", nullptr},
    {"bucketSize", nullptr},
    {"coarsestIndexedLevel", nullptr},
    {"finestIndexedLevel", nullptr},
    {"wildcardProjection", nullptr},
    {"columnstoreProjection", nullptr},
    {"columnstoreCompressor", nullptr},
    {"storageEngine", nullptr},
    {"prepareUnique", nullptr},
    {"clustered", nullptr},
    {"originalSpec", nullptr},
};

}  // namespace

StatusOr<IndexOptions> ParseIndexOptions(DocumentView options) {
  IndexOptions out;
  ROCKDOC_RETURN_IF_ERROR(DecodeOptions(
      options, kIndexOptionTable, &out,
      [&](std::string_view name) {
        return Status(ErrorCode::kInvalidIndexSpecificationOption,
                      "The field '" + std::string(name) +
                          "' is not valid for an index specification. Specification: " +
                          ToJson(options, JsonFormat::kShell));
      },
      [](std::string_view name) {
        return Status(ErrorCode::kNotImplemented,
                      "The index option '" + std::string(name) + "' is not supported by rockdoc");
      }));
  return out;
}

}  // namespace rockdoc::internal

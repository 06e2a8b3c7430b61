// command/collection_options.cc: the create command's options decoded into
// CreateCollectionOptions (command/collection_options.h).
#include "command/collection_options.h"

#include <string>

#include "catalog/catalog.h"
#include "common/option_table.h"

namespace rockdoc::internal {

namespace {

Status WrongType(const Element& e, std::string_view expected) {
  return TypeMismatch("BSON field 'create." + std::string(e.key()) + "' is the wrong type '" +
                      std::string(BsonTypeAlias(e.type())) + "', expected " +
                      std::string(expected));
}

// size and max: a number, truncated to a whole one as MongoDB's
// safeNumberLong reads it.
Status CappedNumber(const Element& e, std::optional<int64_t>* out) {
  if (!e.IsNumber()) return WrongType(e, "types '[long, int, decimal, double]'");
  int64_t n = 0;
  if (!e.ExactInt64(&n)) {
    const double d = e.NumberAsDouble();
    if (!(d >= -9.2e18 && d <= 9.2e18)) return BadValue(std::string(e.key()) + " is out of range");
    n = static_cast<int64_t>(d);
  }
  *out = n;
  return Status::OK();
}

// MongoDB's create IDL, the generic arguments aside. Rows with no decoder
// are options rockdoc does not implement. writeConcern is a generic
// argument, split off before the table sees the rest.
constexpr OptionField<CreateCollectionOptions> kCreateFields[] = {
    // A note for the server's logs: nothing to keep.
    {"comment", [](const Element&, CreateCollectionOptions*) { return Status::OK(); }},
    {"capped",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       if (!e.IsNumber() && e.type() != BsonType::kBool) return WrongType(e, "type 'bool'");
       o->capped = e.type() == BsonType::kBool ? e.Bool() : e.NumberAsDouble() != 0;
       return Status::OK();
     }},
    {"size",
     [](const Element& e, CreateCollectionOptions* o) { return CappedNumber(e, &o->size); }},
    {"max", [](const Element& e, CreateCollectionOptions* o) { return CappedNumber(e, &o->max); }},
    {"autoIndexId", nullptr},
    {"idIndex", nullptr},
    {"validator",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       if (e.type() != BsonType::kDocument) return WrongType(e, "type 'object'");
       o->validator = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"validationLevel",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->validation_level, ParseValidationLevel(e, "create"));
       return Status::OK();
     }},
    {"validationAction",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->validation_action, ParseValidationAction(e, "create"));
       return Status::OK();
     }},
    {"indexOptionDefaults", nullptr},
    {"viewOn",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       if (e.type() != BsonType::kString) return WrongType(e, "type 'string'");
       o->view_on = std::string(e.String());
       return Status::OK();
     }},
    {"pipeline",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       if (e.type() != BsonType::kArray) return WrongType(e, "type 'array'");
       for (const Element& stage : e.Array()) {
         if (stage.type() != BsonType::kDocument) {
           return TypeMismatch("'pipeline' must be an array of objects");
         }
       }
       o->pipeline = Document::AdoptValidated(std::string(e.Array().bytes()));
       return Status::OK();
     }},
    // A document; its fields are checked where it is used (query/collator.h).
    {"collation",
     [](const Element& e, CreateCollectionOptions* o) { return DocumentOption(e, "collation", &o->collation); }},
    {"changeStreamPreAndPostImages",
     [](const Element& e, CreateCollectionOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->change_stream_pre_and_post_images,
                                ParsePreAndPostImagesOption(e, "create"));
       return Status::OK();
     }},
    {"timeseries", nullptr},
    {"clusteredIndex", nullptr},
    {"expireAfterSeconds", nullptr},
    {"encryptedFields", nullptr},
    {"storageEngine", nullptr},
    {"temp", nullptr},
    {"flags", nullptr},
    {"recordIdsReplicated", nullptr},
    {"writeConcern", nullptr},
};

}  // namespace

StatusOr<CreateCollectionOptions> ParseCreateCollectionOptions(DocumentView options) {
  CreateCollectionOptions decoded;
  ROCKDOC_RETURN_IF_ERROR(DecodeOptions(
      options, kCreateFields, &decoded,
      [](std::string_view name) {
        return Status(ErrorCode::kUnknownBsonField,
                      "BSON field 'create." + std::string(name) + "' is an unknown field.");
      },
      [](std::string_view name) {
        return NotImplemented("The createCollection option '" + std::string(name) +
                              "' is not supported by rockdoc");
      }));
  return decoded;
}

}  // namespace rockdoc::internal

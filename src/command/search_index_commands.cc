// command/search_index_commands.cc: MongoDB's search index commands, as
// mongod 8 and Atlas take them (drivers' createSearchIndex(es),
// dropSearchIndex and updateSearchIndex send these; listSearchIndexes is the
// $listSearchIndexes stage of an aggregate):
//   {createSearchIndexes: coll, indexes: [{name?, type?, definition}]}
//       -> {indexesCreated: [{id, name}]}
//   {dropSearchIndex: coll, name | id}
//   {updateSearchIndex: coll, name | id, definition}
// A model without a type is Atlas Search's "search" (NotImplemented); the
// vector kind is type "vectorSearch" (index/vector_search.h).
#include <string>
#include <vector>

#include "command/command.h"
#include "command/handlers.h"

namespace rockdoc::internal {

namespace {

struct CreateSearchIndexesArgs {
  std::string collection;
  std::vector<SearchIndexModel> models;
  bool has_indexes = false;
};

Status DecodeSearchIndexModels(const Element& e, CreateSearchIndexesArgs* o) {
  if (e.type() != BsonType::kArray) return WrongType(e, "type 'array'");
  o->has_indexes = true;
  for (Element m : e.Array()) {
    if (!m.IsDocument()) return WrongType(m, "type 'object'");
    SearchIndexModel model;
    model.type = "search";  // Atlas's default
    bool has_definition = false;
    for (Element f : m.Document()) {
      if (f.key() == "name" || f.key() == "type") {
        if (!f.IsString()) return WrongType(f, "type 'string'");
        (f.key() == "name" ? model.name : model.type) = std::string(f.String());
      } else if (f.key() == "definition") {
        if (!f.IsDocument()) return WrongType(f, "type 'object'");
        model.definition = Document::AdoptValidated(std::string(f.Document().bytes()));
        has_definition = true;
      } else {
        return Status(static_cast<ErrorCode>(40415),
                      "BSON field 'createSearchIndexes.indexes." + std::string(f.key()) +
                          "' is an unknown field.");
      }
    }
    if (!has_definition) return MissingField("createSearchIndexes.indexes.definition");
    o->models.push_back(std::move(model));
  }
  return Status::OK();
}

constexpr OptionField<CreateSearchIndexesArgs> kCreateSearchIndexesFields[] = {
    {"createSearchIndexes",
     [](const Element& e, CreateSearchIndexesArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("createSearchIndexes", e));
       return Status::OK();
     }},
    {"indexes", &DecodeSearchIndexModels},
    ROCKDOC_GENERIC_COMMAND_ROWS(CreateSearchIndexesArgs)};

// dropSearchIndex and updateSearchIndex: the index by name or by id.
struct SearchIndexTargetArgs {
  std::string collection;
  std::string name;
  std::string id;
  Document definition;
  bool has_definition = false;
};

template <const char* kCommand>
Status TargetCollection(const Element& e, SearchIndexTargetArgs* o) {
  ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName(kCommand, e));
  return Status::OK();
}
Status DefinitionRow(const Element& e, SearchIndexTargetArgs* o) {
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  o->definition = Document::AdoptValidated(std::string(e.Document().bytes()));
  o->has_definition = true;
  return Status::OK();
}
constexpr char kDropSearchIndex[] = "dropSearchIndex";
constexpr char kUpdateSearchIndex[] = "updateSearchIndex";

constexpr OptionField<SearchIndexTargetArgs> kDropSearchIndexFields[] = {
    {"dropSearchIndex", &TargetCollection<kDropSearchIndex>},
    {"name", &StringRow<SearchIndexTargetArgs, &SearchIndexTargetArgs::name>},
    {"id", &StringRow<SearchIndexTargetArgs, &SearchIndexTargetArgs::id>},
    ROCKDOC_GENERIC_COMMAND_ROWS(SearchIndexTargetArgs)};
constexpr OptionField<SearchIndexTargetArgs> kUpdateSearchIndexFields[] = {
    {"updateSearchIndex", &TargetCollection<kUpdateSearchIndex>},
    {"name", &StringRow<SearchIndexTargetArgs, &SearchIndexTargetArgs::name>},
    {"id", &StringRow<SearchIndexTargetArgs, &SearchIndexTargetArgs::id>},
    {"definition", &DefinitionRow},
    ROCKDOC_GENERIC_COMMAND_ROWS(SearchIndexTargetArgs)};

// The name of the index the arguments point at (by name, or the one whose
// id listSearchIndexes gives).
StatusOr<std::string> TargetName(const Collection& c, std::string_view command,
                                 const SearchIndexTargetArgs& args) {
  if (args.name.empty() == args.id.empty()) {
    return Status(ErrorCode::kInvalidOptions,
                  std::string(command) + " requires exactly one of 'name' or 'id'");
  }
  if (!args.name.empty()) return args.name;
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> all, c.ListSearchIndexes());
  for (const Document& d : all) {
    if (d.Get("id").IsString() && d.Get("id").String() == args.id) {
      return std::string(d.Get("name").String());
    }
  }
  return Status(ErrorCode::kIndexNotFound, "search index not found with id [" + args.id + "]");
}

}  // namespace

Status RunCreateSearchIndexes(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  CreateSearchIndexesArgs args;
  ROCKDOC_RETURN_IF_ERROR(
      DecodeCommand("createSearchIndexes", cmd, kCreateSearchIndexesFields, &args));
  if (!args.has_indexes) return MissingField("createSearchIndexes.indexes");
  Collection c = ctx.database().GetCollection(args.collection);
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> names, c.CreateSearchIndexes(args.models));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> all, c.ListSearchIndexes());
  reply->OpenArray("indexesCreated");
  for (const std::string& name : names) {
    for (const Document& d : all) {
      if (d.Get("name").String() != name) continue;
      reply->OpenDocument("");
      reply->AppendElement(d.Get("id"));
      reply->AppendString("name", name);
      reply->Close();
    }
  }
  reply->Close();
  return Status::OK();
}

Status RunDropSearchIndex(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  (void)reply;
  SearchIndexTargetArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("dropSearchIndex", cmd, kDropSearchIndexFields, &args));
  Collection c = ctx.database().GetCollection(args.collection);
  ROCKDOC_ASSIGN_OR_RETURN(std::string name, TargetName(c, "dropSearchIndex", args));
  return c.DropSearchIndex(name);
}

Status RunUpdateSearchIndex(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  (void)reply;
  SearchIndexTargetArgs args;
  ROCKDOC_RETURN_IF_ERROR(
      DecodeCommand("updateSearchIndex", cmd, kUpdateSearchIndexFields, &args));
  if (!args.has_definition) return MissingField("updateSearchIndex.definition");
  Collection c = ctx.database().GetCollection(args.collection);
  ROCKDOC_ASSIGN_OR_RETURN(std::string name, TargetName(c, "updateSearchIndex", args));
  return c.UpdateSearchIndex(name, args.definition);
}

}  // namespace rockdoc::internal

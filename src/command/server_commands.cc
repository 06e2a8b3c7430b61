// command/server_commands.cc: the commands about the server and its
// catalog: ping, hello/isMaster, buildInfo, listCollections, listIndexes,
// create, drop, dropDatabase, createIndexes, dropIndexes.
#include "catalog/catalog.h"
#include "command/collection_options.h"
#include "command/command.h"
#include "command/cursor_manager.h"
#include "command/handlers.h"
#include "command/index_options.h"
#include "common/clock.h"
#include "common/deadline.h"
#include "common/option_table.h"
#include "index/index_descriptor.h"
#include "query/match_expression.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

// Commands whose only argument is the command field itself.
struct NoArgs {};
Status AnyValue(const Element&, NoArgs*) { return Status::OK(); }

}  // namespace

// ---- ping, hello, buildInfo ----

Status RunPing(CommandContext&, DocumentView cmd, BsonBuilder*) {
  static constexpr OptionField<NoArgs> kFields[] = {{"ping", &AnyValue},
                                                    ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
  NoArgs args;
  return DecodeCommand("ping", cmd, kFields, &args);
}

namespace {
struct HelloArgs {};
// What a client tells of itself, or asks for, in the handshake. rockdoc has
// no authentication, compression or topology changes to announce: the
// answer to each is its absence from the reply, as a standalone mongod
// without users, compressors or awaitable hello answers.
constexpr OptionField<HelloArgs> kHelloFields[] = {{"hello", &Accept<HelloArgs>},
                                                   {"isMaster", &Accept<HelloArgs>},
                                                   {"ismaster", &Accept<HelloArgs>},
                                                   {"helloOk", &ApiBoolRow<HelloArgs>},
                                                   {"client", &Accept<HelloArgs>},
                                                   {"compression", &Accept<HelloArgs>},
                                                   {"saslSupportedMechs", &Accept<HelloArgs>},
                                                   {"speculativeAuthenticate", &Accept<HelloArgs>},
                                                   // The Node.js driver (7.x) tells the
                                                   // version of overload handling it has
                                                   // ("2"); a server that never sheds load
                                                   // answers by absence.
                                                   {"backpressure", &Accept<HelloArgs>},
                                                   {"loadBalanced", nullptr},
                                                   {"topologyVersion", nullptr},
                                                   {"maxAwaitTimeMS", nullptr},
                                                   ROCKDOC_GENERIC_COMMAND_ROWS(HelloArgs)};

// `connection`: the one the hello came on (null in-process), which gives
// connectionId and adds its own fields (saslSupportedMechs).
Status Hello(std::string_view name, DocumentView cmd, const CommandConnection* connection,
             BsonBuilder* reply, bool legacy) {
  HelloArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand(name, cmd, kHelloFields, &args));
  if (legacy) {
    reply->AppendBool("ismaster", true);
    // A client that says helloOk may switch to hello.
    if (cmd.Get("helloOk").ok()) reply->AppendBool("helloOk", true);
  } else {
    reply->AppendBool("isWritablePrimary", true);
  }
  reply->OpenDocument("topologyVersion");
  static const ObjectId kProcessId = ObjectId::Generate();
  reply->AppendObjectId("processId", kProcessId);
  reply->AppendInt64("counter", 0);
  reply->Close();
  reply->AppendInt32("maxBsonObjectSize", 16 * 1024 * 1024);
  reply->AppendInt32("maxMessageSizeBytes", 48000000);
  reply->AppendInt32("maxWriteBatchSize", 100000);
  reply->AppendDateTime("localTime", WallMillis());
  reply->AppendInt32("logicalSessionTimeoutMinutes", 30);
  reply->AppendInt32("connectionId", connection != nullptr ? connection->id() : 1);
  reply->AppendInt32("minWireVersion", 0);
  reply->AppendInt32("maxWireVersion", kMaxWireVersion);
  reply->AppendBool("readOnly", false);
  if (connection != nullptr) connection->AppendHelloFields(cmd, reply);
  return Status::OK();
}
}  // namespace

Status RunHello(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  return Hello("hello", cmd, ctx.connection, reply, /*legacy=*/false);
}

Status RunIsMaster(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  return Hello((*cmd.begin()).key(), cmd, ctx.connection, reply, /*legacy=*/true);
}

Status RunBuildInfo(CommandContext&, DocumentView cmd, BsonBuilder* reply) {
  static constexpr OptionField<NoArgs> kFields[] = {
      {"buildInfo", &AnyValue}, {"buildinfo", &AnyValue}, ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
  NoArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("buildInfo", cmd, kFields, &args));
  // The MongoDB version whose commands and semantics rockdoc follows, so
  // that drivers and mongosh enable what that version has; rockdoc's own
  // version is beside it.
  reply->AppendString("version", kCompatibleMongoVersion);
  reply->AppendString("gitVersion", "rockdoc");
  reply->AppendString("rockdocVersion", ROCKDOC_VERSION_STRING);
  reply->OpenArray("modules");
  reply->Close();
  reply->AppendString("allocator", "system");
  reply->AppendString("javascriptEngine", "none");
  reply->AppendString("sysInfo", "deprecated");
  reply->OpenArray("versionArray");
  for (int part : kCompatibleMongoVersionArray) reply->AppendInt32("", part);
  reply->Close();
  reply->AppendInt32("bits", static_cast<int32_t>(sizeof(void*) * 8));
  reply->AppendBool("debug", false);
  reply->AppendInt32("maxBsonObjectSize", 16 * 1024 * 1024);
  reply->OpenArray("storageEngines");
  reply->AppendString("", "rocksdb");
  reply->Close();
  return Status::OK();
}

// ---- Catalog ----

Status CursorReply(CommandContext& ctx, CommandCursor c, int64_t batch_size, bool single_batch,
                   BsonBuilder* reply) {
  reply->OpenDocument("cursor");
  reply->OpenArray("firstBatch");
  ROCKDOC_ASSIGN_OR_RETURN(bool exhausted, FillBatch(&c, batch_size, reply));
  reply->Close();
  if (c.stream) reply->AppendDocument("postBatchResumeToken", c.stream->resume_token());
  const std::string ns = c.ns();
  // Kept on the heap only when it stays open.
  const int64_t id = (exhausted && !StaysOpen(c)) || single_batch
                         ? 0
                         : ctx.cursors->Register(std::make_unique<CommandCursor>(std::move(c)));
  reply->AppendInt64("id", id);
  reply->AppendString("ns", ns);
  reply->Close();
  return Status::OK();
}

namespace {

Status CursorBatchSize(const Element& e, CursorOption* o) {
  if (e.key() != "batchSize") {
    return Status(ErrorCode::kUnknownBsonField,
                  "BSON field 'cursor." + std::string(e.key()) + "' is an unknown field.");
  }
  ROCKDOC_ASSIGN_OR_RETURN(o->batch_size, IntegerField(e));
  if (o->batch_size < 0) {
    return Status(static_cast<ErrorCode>(51024),
                  "BSON field 'batchSize' value must be >= 0, actual value '" +
                      std::to_string(o->batch_size) + "'");
  }
  return Status::OK();
}
}  // namespace

Status DecodeCursorOption(const Element& e, CursorOption* out) {
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  for (Element f : e.Document()) ROCKDOC_RETURN_IF_ERROR(CursorBatchSize(f, out));
  return Status::OK();
}

namespace {

struct ListCollectionsArgs {
  Document filter;
  bool name_only = false;
  CursorOption cursor;
};
constexpr OptionField<ListCollectionsArgs> kListCollectionsFields[] = {
    {"listCollections", &Accept<ListCollectionsArgs>},
    {"filter", &DocumentRow<ListCollectionsArgs, &ListCollectionsArgs::filter>},
    {"nameOnly", &BoolRow<ListCollectionsArgs, &ListCollectionsArgs::name_only>},
    // Without users every collection is authorized.
    {"authorizedCollections", &ApiBoolRow<ListCollectionsArgs>},
    {"cursor",
     [](const Element& e, ListCollectionsArgs* o) { return DecodeCursorOption(e, &o->cursor); }},
    ROCKDOC_GENERIC_COMMAND_ROWS(ListCollectionsArgs)};

}  // namespace

Status RunListCollections(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ListCollectionsArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("listCollections", cmd, kListCollectionsFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<MatchExpression> filter, ListFilter(args.filter));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Database::CollectionInfo> collections,
                           ctx.database().ListCollections());
  std::vector<Document> infos;
  for (const Database::CollectionInfo& collection : collections) {
    BsonBuilder b;
    b.AppendString("name", collection.name);
    b.AppendString("type", collection.is_view ? "view" : "collection");
    if (!args.name_only && collection.is_view) {
      b.AppendDocument("options", collection.options.view());
      b.OpenDocument("info");
      b.AppendBool("readOnly", true);
      b.Close();
    } else if (!args.name_only) {
      b.AppendDocument("options", collection.options.view());
      b.OpenDocument("info");
      b.AppendBool("readOnly", false);
      b.AppendBinary("uuid", BinarySubtype::kUuid, collection.uuid);
      b.Close();
      b.OpenDocument("idIndex");
      b.AppendInt32("v", 2);
      b.OpenDocument("key");
      b.AppendInt32("_id", 1);
      b.Close();
      b.AppendString("name", "_id_");
      b.Close();
    }
    Document info = std::move(b).Build();
    if (filter) {
      ROCKDOC_ASSIGN_OR_RETURN(bool matched, MatchesOrError(*filter, info));
      if (!matched) continue;
    }
    infos.push_back(std::move(info));
  }
  return CursorReply(ctx, CommandCursor(ctx.db, "$cmd.listCollections", std::move(infos)),
                     args.cursor.batch_size, false, reply);
}

namespace {
struct ListIndexesArgs {
  std::string collection;
  CursorOption cursor;
};
constexpr OptionField<ListIndexesArgs> kListIndexesFields[] = {
    {"listIndexes",
     [](const Element& e, ListIndexesArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("listIndexes", e));
       return Status::OK();
     }},
    {"cursor",
     [](const Element& e, ListIndexesArgs* o) { return DecodeCursorOption(e, &o->cursor); }},
    ROCKDOC_GENERIC_COMMAND_ROWS(ListIndexesArgs)};
}  // namespace

Status RunListIndexes(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ListIndexesArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("listIndexes", cmd, kListIndexesFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> specs,
                           ctx.database().GetCollection(args.collection).ListIndexes());
  CommandCursor c(ctx.db, args.collection, std::move(specs));
  return CursorReply(ctx, std::move(c), args.cursor.batch_size, false, reply);
}

namespace {

// Splits a command whose options an API call decodes itself (create's
// collection options, collMod's changes): the generic fields are checked
// here, the rest (without the command field) go to *rest.
Status SplitGenericFields(std::string_view command, DocumentView cmd, BsonBuilder* rest) {
  static constexpr OptionField<NoArgs> kGeneric[] = {ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
  BsonBuilder generic;
  bool first = true;
  for (Element e : cmd) {
    if (first) {
      first = false;
      continue;
    }
    bool is_generic = false;
    for (const auto& row : kGeneric) is_generic = is_generic || row.name == e.key();
    (is_generic ? generic : *rest).AppendElement(e);
  }
  NoArgs none;
  return DecodeCommand(command, std::move(generic).Build(), kGeneric, &none);
}

}  // namespace

Status RunCreate(CommandContext& ctx, DocumentView cmd, BsonBuilder*) {
  ROCKDOC_ASSIGN_OR_RETURN(std::string collection, CollectionName("create", *cmd.begin()));
  BsonBuilder fields;
  ROCKDOC_RETURN_IF_ERROR(SplitGenericFields("create", cmd, &fields));
  ROCKDOC_ASSIGN_OR_RETURN(CreateCollectionOptions options,
                           ParseCreateCollectionOptions(std::move(fields).Build()));
  return QualifyFieldError("create", ctx.database().CreateCollection(collection, options));
}

namespace {

// collMod's fields, from one table (the API takes them typed,
// rockdoc/options.h CollModOptions).

constexpr internal::OptionField<CollModIndex> kCollModIndexFields[] = {
    {"keyPattern",
     [](const Element& e, CollModIndex* o) -> Status {
       if (!e.IsDocument()) return TypeMismatch("collMod index keyPattern must be an object");
       o->key_pattern = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"name",
     [](const Element& e, CollModIndex* o) -> Status {
       if (!e.IsString()) return TypeMismatch("collMod index name must be a string");
       o->name = std::string(e.String());
       return Status::OK();
     }},
    {"expireAfterSeconds",
     [](const Element& e, CollModIndex* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->expire_after_seconds, internal::ParseExpireAfterSeconds(e));
       return Status::OK();
     }},
    {"hidden",
     [](const Element& e, CollModIndex* o) -> Status {
       if (!e.IsBool()) {
         return TypeMismatch("BSON field 'collMod.index.hidden' is the wrong type '" +
                             std::string(BsonTypeAlias(e.type())) + "', expected type 'bool'");
       }
       o->hidden = e.Bool();
       return Status::OK();
     }},
    {"prepareUnique", nullptr},
    {"unique", nullptr},
    {"forceNonUnique", nullptr},
};

// collMod's cappedSize / cappedMax: whole numbers.
StatusOr<int64_t> CappedLimit(const Element& e) {
  int64_t n = 0;
  if (!e.IsNumber() || !e.ExactInt64(&n)) {
    return TypeMismatch("BSON field 'collMod." + std::string(e.key()) + "' is the wrong type '" +
                        std::string(BsonTypeAlias(e.type())) + "', expected type 'long'");
  }
  return n;
}
constexpr internal::OptionField<CollModOptions> kCollModFields[] = {
    {"index",
     [](const Element& e, CollModOptions* o) -> Status {
       if (!e.IsDocument()) return TypeMismatch("collMod index must be an object");
       CollModIndex index;
       ROCKDOC_RETURN_IF_ERROR(internal::DecodeOptions(
           e.Document(), kCollModIndexFields, &index,
           [](std::string_view name) {
             return Status(ErrorCode::kUnknownBsonField,
                           "BSON field 'collMod.index." + std::string(name) +
                               "' is an unknown field.");
           },
           [](std::string_view name) {
             return NotImplemented("The collMod index option '" + std::string(name) +
                                   "' is not supported by rockdoc");
           }));
       o->index = std::move(index);
       return Status::OK();
     }},
    {"comment", [](const Element&, CollModOptions*) { return Status::OK(); }},
    {"validator",
     [](const Element& e, CollModOptions* o) -> Status {
       if (!e.IsDocument()) {
         return TypeMismatch("BSON field 'collMod.validator' is the wrong type '" +
                             std::string(BsonTypeAlias(e.type())) + "', expected type 'object'");
       }
       o->validator = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"validationLevel",
     [](const Element& e, CollModOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->validation_level,
                                internal::ParseValidationLevel(e, "collMod"));
       return Status::OK();
     }},
    {"validationAction",
     [](const Element& e, CollModOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->validation_action,
                                internal::ParseValidationAction(e, "collMod"));
       return Status::OK();
     }},
    {"viewOn",
     [](const Element& e, CollModOptions* o) -> Status {
       if (e.type() != BsonType::kString) {
         return TypeMismatch("BSON field 'collMod.viewOn' is the wrong type '" +
                             std::string(BsonTypeAlias(e.type())) + "', expected type 'string'");
       }
       o->view_on = std::string(e.String());
       return Status::OK();
     }},
    {"pipeline",
     [](const Element& e, CollModOptions* o) -> Status {
       if (e.type() != BsonType::kArray) {
         return TypeMismatch("BSON field 'collMod.pipeline' is the wrong type '" +
                             std::string(BsonTypeAlias(e.type())) + "', expected type 'array'");
       }
       o->pipeline = Document::AdoptValidated(std::string(e.Array().bytes()));
       return Status::OK();
     }},
    {"expireAfterSeconds", nullptr},  // clustered and time-series collections
    {"changeStreamPreAndPostImages",
     [](const Element& e, CollModOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->change_stream_pre_and_post_images,
                                internal::ParsePreAndPostImagesOption(e, "collMod"));
       return Status::OK();
     }},
    {"recordPreImages", nullptr},
    {"timeseries", nullptr},
    {"cappedSize",
     [](const Element& e, CollModOptions* o) -> Status {
       // Its range is Database::CollMod's check, as for every caller.
       ROCKDOC_ASSIGN_OR_RETURN(o->capped_size, CappedLimit(e));
       return Status::OK();
     }},
    {"cappedMax",
     [](const Element& e, CollModOptions* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->capped_max, CappedLimit(e));
       return Status::OK();
     }},
    {"dryRun", nullptr},
    {"writeConcern", nullptr},
};

// collMod's document (the generic fields split off) into CollModOptions:
// 40415 for a name MongoDB does not know, 238 for one rockdoc lacks.
Status DecodeCollMod(DocumentView changes, CollModOptions* decoded) {
  return DecodeOptions(
      changes, kCollModFields, decoded,
      [](std::string_view name) {
        return Status(ErrorCode::kUnknownBsonField,
                      "BSON field 'collMod." + std::string(name) + "' is an unknown field.");
      },
      [](std::string_view name) {
        return NotImplemented("The collMod option '" + std::string(name) +
                              "' is not supported by rockdoc");
      });
}

}  // namespace

Status RunCollMod(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ROCKDOC_ASSIGN_OR_RETURN(std::string collection, CollectionName("collMod", *cmd.begin()));
  BsonBuilder changes;
  ROCKDOC_RETURN_IF_ERROR(SplitGenericFields("collMod", cmd, &changes));
  CollModOptions decoded;
  ROCKDOC_RETURN_IF_ERROR(DecodeCollMod(std::move(changes).Build(), &decoded));
  ROCKDOC_ASSIGN_OR_RETURN(CollModResult done, ctx.database().CollMod(collection, decoded));
  // The dispatcher adds ok.
  if (done.expire_after_seconds_old) {
    reply->AppendInt64("expireAfterSeconds_old", *done.expire_after_seconds_old);
  }
  if (done.expire_after_seconds_new) {
    reply->AppendInt64("expireAfterSeconds_new", *done.expire_after_seconds_new);
  }
  if (done.hidden_old) reply->AppendBool("hidden_old", *done.hidden_old);
  if (done.hidden_new) reply->AppendBool("hidden_new", *done.hidden_new);
  return Status::OK();
}

namespace {
struct RenameArgs {
  std::string from, to;
  bool drop_target = false;
};
// "db.collection" into its parts; InvalidNamespace when it has no dot.
Status SplitNamespace(const Element& e, std::string* db, std::string* coll) {
  if (!e.IsString()) return WrongType(e, "type 'string'");
  std::string_view ns = e.String();
  const size_t dot = ns.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == ns.size()) {
    return Status(ErrorCode::kInvalidNamespace,
                  "Invalid namespace specified '" + std::string(ns) + "'");
  }
  *db = std::string(ns.substr(0, dot));
  *coll = std::string(ns.substr(dot + 1));
  return Status::OK();
}
constexpr OptionField<RenameArgs> kRenameFields[] = {
    {"renameCollection", &StringRow<RenameArgs, &RenameArgs::from>},
    {"to", &StringRow<RenameArgs, &RenameArgs::to>},
    {"dropTarget", &BoolRow<RenameArgs, &RenameArgs::drop_target>},
    {"stayTemp", nullptr},
    ROCKDOC_GENERIC_COMMAND_ROWS(RenameArgs)};
}  // namespace

Status RunRenameCollection(CommandContext& ctx, DocumentView cmd, BsonBuilder*) {
  RenameArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("renameCollection", cmd, kRenameFields, &args));
  if (!cmd.Get("to").ok()) {
    return MissingField("renameCollection.to");
  }
  std::string from_db, from, to_db, to;
  ROCKDOC_RETURN_IF_ERROR(SplitNamespace(cmd.Get("renameCollection"), &from_db, &from));
  ROCKDOC_RETURN_IF_ERROR(SplitNamespace(cmd.Get("to"), &to_db, &to));
  if (from_db != to_db) {
    return Status(ErrorCode::kNotImplemented,
                  "renameCollection across databases is not supported by rockdoc");
  }
  return ctx.client->GetDatabase(from_db).RenameCollection(from, to, args.drop_target);
}

namespace {
struct ValidateArgs {
  std::string collection;
};
constexpr OptionField<ValidateArgs> kValidateFields[] = {
    {"validate",
     [](const Element& e, ValidateArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("validate", e));
       return Status::OK();
     }},
    // rockdoc's validate always reads every document and index entry:
    // what full: true asks for.
    {"full", &ApiBoolRow<ValidateArgs>},
    {"scandata", &ApiBoolRow<ValidateArgs>},
    {"repair", nullptr},
    {"background", nullptr},
    {"metadata", nullptr},
    {"checkBSONConformance", nullptr},
    {"fixMultikey", nullptr},
    {"enforceFastCount", nullptr},
    ROCKDOC_GENERIC_COMMAND_ROWS(ValidateArgs)};

void AppendStrings(BsonBuilder* reply, std::string_view name, const std::vector<std::string>& v) {
  reply->OpenArray(name);
  for (const std::string& s : v) reply->AppendString("", s);
  reply->Close();
}
}  // namespace

Status RunValidate(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ValidateArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("validate", cmd, kValidateFields, &args));
  Collection c = ctx.database().GetCollection(args.collection);
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> indexes, c.ListIndexes());
  ROCKDOC_ASSIGN_OR_RETURN(ValidateResult result, c.Validate());
  reply->AppendString("ns", ctx.db + "." + args.collection);
  AppendNumber(reply, "nrecords", static_cast<int64_t>(result.records));
  reply->AppendInt32("nIndexes", static_cast<int32_t>(indexes.size()));
  reply->AppendBool("valid", result.valid);
  reply->AppendBool("repaired", false);
  AppendStrings(reply, "warnings", result.warnings);
  AppendStrings(reply, "errors", result.errors);
  return Status::OK();
}

namespace {
struct DropArgs {
  std::string collection;
};
constexpr OptionField<DropArgs> kDropFields[] = {{"drop",
                                                  [](const Element& e, DropArgs* o) -> Status {
                                                    ROCKDOC_ASSIGN_OR_RETURN(
                                                        o->collection, CollectionName("drop", e));
                                                    return Status::OK();
                                                  }},
                                                 ROCKDOC_GENERIC_COMMAND_ROWS(DropArgs)};
}  // namespace

Status RunDrop(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  DropArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("drop", cmd, kDropFields, &args));
  auto indexes = ctx.database().GetCollection(args.collection).ListIndexes();
  bool existed = false;
  ROCKDOC_RETURN_IF_ERROR(ctx.database().DropCollection(args.collection, &existed));
  // MongoDB 7.0 answers a missing collection with ok: 1 and no fields.
  if (existed) {
    reply->AppendInt32("nIndexesWas", indexes.ok() ? static_cast<int32_t>(indexes->size()) : 1);
    reply->AppendString("ns", ctx.db + "." + args.collection);
  }
  return Status::OK();
}

Status RunDropDatabase(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  static constexpr OptionField<NoArgs> kFields[] = {
      {"dropDatabase",
       [](const Element& e, NoArgs*) -> Status {
         int64_t one = 0;
         if (!e.IsNumber() || !e.ExactInt64(&one) || one != 1) {
           return Status(ErrorCode::kBadValue, "have to pass 1 as db parameter");
         }
         return Status::OK();
       }},
      ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
  NoArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("dropDatabase", cmd, kFields, &args));
  ROCKDOC_RETURN_IF_ERROR(ctx.database().Drop());
  reply->AppendString("dropped", ctx.db);
  return Status::OK();
}

namespace {
struct CreateIndexesArgs {
  std::string collection;
  std::vector<IndexModel> indexes;
  int64_t max_time_ms = 0;
};
Status DecodeIndexSpecs(const Element& e, CreateIndexesArgs* o) {
  if (e.type() != BsonType::kArray) return WrongType(e, "type 'array'");
  // Every specification's shape first (key and name, as MongoDB checks
  // them while parsing the command), then each one's options.
  std::vector<Document> options_of;
  for (Element spec : e.Array()) {
    if (!spec.IsDocument()) {
      return Status(ErrorCode::kTypeMismatch,
                    "The elements of the 'indexes' array must be objects");
    }
    IndexModel model;
    BsonBuilder options;
    bool has_key = false;
    for (Element f : spec.Document()) {
      if (f.key() == "key") {
        if (!f.IsDocument()) {
          return Status(ErrorCode::kTypeMismatch, "The field 'key' must be an object");
        }
        model.keys = Document::AdoptValidated(std::string(f.Document().bytes()));
        has_key = true;
      } else {
        options.AppendElement(f);
      }
    }
    if (!has_key) {
      return Status(ErrorCode::kFailedToParse,
                    "The 'key' field is a required property of an index specification");
    }
    Document options_doc = std::move(options).Build();
    if (!options_doc.Get("name").ok()) {
      return Status(ErrorCode::kFailedToParse,
                    "The 'name' field is a required property of an index specification");
    }
    o->indexes.push_back(std::move(model));
    options_of.push_back(std::move(options_doc));
  }
  for (size_t i = 0; i < o->indexes.size(); ++i) {
    ROCKDOC_ASSIGN_OR_RETURN(o->indexes[i].options, ParseIndexOptions(options_of[i]));
  }
  if (o->indexes.empty()) {
    return Status(ErrorCode::kBadValue, "Must specify at least one index to create");
  }
  return Status::OK();
}
constexpr OptionField<CreateIndexesArgs> kCreateIndexesFields[] = {
    {"createIndexes",
     [](const Element& e, CreateIndexesArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("createIndexes", e));
       return Status::OK();
     }},
    {"indexes", &DecodeIndexSpecs},
    // Every build is one build that commits when done.
    {"commitQuorum", nullptr},
    // Applied: the index build's scan checks it (store/index_build.h).
    {"maxTimeMS",
     [](const Element& e, CreateIndexesArgs* o) -> Status {
       ROCKDOC_RETURN_IF_ERROR(CheckMaxTimeMSField(e));
       ROCKDOC_ASSIGN_OR_RETURN(o->max_time_ms, IntegerField(e));
       return Status::OK();
     }},
    ROCKDOC_GENERIC_COMMAND_ROWS(CreateIndexesArgs)};
}  // namespace

Status RunCreateIndexes(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  CreateIndexesArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("createIndexes", cmd, kCreateIndexesFields, &args));
  if (args.indexes.empty()) {
    return MissingField("createIndexes.indexes");
  }
  Collection c = ctx.database().GetCollection(args.collection);
  Collection::CreateIndexesReport counted;
  // The build runs on this thread: its scan stops at the thread's deadline.
  const internal::Deadline deadline = internal::Deadline::AfterMillis(args.max_time_ms);
  internal::DeadlineScope scope(&deadline);
  ROCKDOC_RETURN_IF_ERROR(c.CreateIndexes(args.indexes, {}, &counted).status());
  reply->AppendInt32("numIndexesBefore", counted.num_indexes_before);
  reply->AppendInt32("numIndexesAfter", counted.num_indexes_after);
  if (counted.num_indexes_after == counted.num_indexes_before) {
    reply->AppendString("note", "all indexes already exist");
  }
  reply->AppendBool("createdCollectionAutomatically", counted.created_collection_automatically);
  return Status::OK();
}

namespace {
struct DropIndexesArgs {
  std::string collection;
  std::vector<std::string> names;
  Document key;
  bool all = false;
};
Status DecodeDropIndexTarget(const Element& e, DropIndexesArgs* o) {
  if (e.IsString()) {
    if (e.String() == "*") {
      o->all = true;
    } else {
      o->names.emplace_back(e.String());
    }
    return Status::OK();
  }
  if (e.IsDocument()) {
    o->key = Document::AdoptValidated(std::string(e.Document().bytes()));
    return Status::OK();
  }
  if (e.type() == BsonType::kArray) {
    for (Element n : e.Array()) {
      if (!n.IsString()) return WrongType(n, "type 'string'");
      o->names.emplace_back(n.String());
    }
    return Status::OK();
  }
  return WrongType(e, "types '[string, object, array]'");
}
constexpr OptionField<DropIndexesArgs> kDropIndexesFields[] = {
    {"dropIndexes",
     [](const Element& e, DropIndexesArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("dropIndexes", e));
       return Status::OK();
     }},
    {"deleteIndexes",
     [](const Element& e, DropIndexesArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("deleteIndexes", e));
       return Status::OK();
     }},
    {"index", &DecodeDropIndexTarget},
    ROCKDOC_GENERIC_COMMAND_ROWS(DropIndexesArgs)};
}  // namespace

Status RunDropIndexes(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  DropIndexesArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("dropIndexes", cmd, kDropIndexesFields, &args));
  if (!cmd.Get("index").ok()) {
    return MissingField("dropIndexes.index");
  }
  Collection c = ctx.database().GetCollection(args.collection);
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Document> before, c.ListIndexes());
  if (args.all) {
    ROCKDOC_RETURN_IF_ERROR(c.DropIndexes());
  } else if (!args.key.empty()) {
    ROCKDOC_RETURN_IF_ERROR(c.DropIndexByKey(args.key));
  } else {
    for (const std::string& name : args.names) ROCKDOC_RETURN_IF_ERROR(c.DropIndex(name));
  }
  reply->AppendInt32("nIndexesWas", static_cast<int32_t>(before.size()));
  if (args.all) reply->AppendString("msg", "non-_id indexes dropped for collection");
  return Status::OK();
}

}  // namespace rockdoc::internal

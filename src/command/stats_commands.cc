// command/stats_commands.cc: what the server knows of itself and its data:
// listDatabases, dbStats, collStats, serverStatus, hostInfo, getParameter.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "api/client_internal.h"
#include "bson/append_number.h"
#include "command/command.h"
#include "command/cursor_manager.h"
#include "command/server_sessions.h"
#include "command/handlers.h"
#include "command/server_sessions.h"
#include "common/clock.h"
#include "pipeline/pipeline.h"
#include "query/match_expression.h"

namespace rockdoc::internal {

namespace {

// When the library was loaded: serverStatus' uptime.
const int64_t kStartSteadyMillis = SteadyMillis();

// scale: a positive integer dividing every size (not averages).
template <typename O>
Status ScaleRow(const Element& e, O* o) {
  ROCKDOC_ASSIGN_OR_RETURN(int64_t scale, IntegerField(e));
  if (scale < 1) {
    return Status(ErrorCode::kBadValue, "BSON field 'scale' value must be >= 1, actual value '" +
                                            std::to_string(scale) + "'");
  }
  o->scale = scale;
  return Status::OK();
}

// The sizes of one database, summed over its collections.
struct DatabaseSizes {
  int64_t collections = 0, views = 0, objects = 0, data = 0, storage = 0, indexes = 0, index_size = 0;
};

StatusOr<DatabaseSizes> SizesOf(const Database& db) {
  DatabaseSizes sizes;
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Database::CollectionInfo> infos, db.ListCollections());
  for (const Database::CollectionInfo& info : infos) {
    if (info.is_view) {
      ++sizes.views;  // a definition: nothing stored
      continue;
    }
    auto stats = db.GetCollection(info.name).Stats();
    if (!stats.ok() && stats.status().code() == ErrorCode::kNamespaceNotFound) continue;  // dropped
    ROCKDOC_RETURN_IF_ERROR(stats.status());
    ++sizes.collections;
    sizes.objects += stats->count;
    sizes.data += stats->size;
    sizes.storage += stats->storage_size;
    sizes.indexes += static_cast<int64_t>(stats->index_sizes.size());
    sizes.index_size += stats->total_index_size;
  }
  return sizes;
}

}  // namespace

// ---- collStats ----

namespace {
struct CollStatsArgs {
  std::string collection;
  int64_t scale = 1;
};
constexpr OptionField<CollStatsArgs> kCollStatsFields[] = {
    {"collStats",
     [](const Element& e, CollStatsArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("collStats", e));
       return Status::OK();
     }},
    {"scale", &ScaleRow<CollStatsArgs>},
    {"verbose", nullptr},
    ROCKDOC_GENERIC_COMMAND_ROWS(CollStatsArgs)};
}  // namespace

Status RunCollStats(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  CollStatsArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("collStats", cmd, kCollStatsFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(CollectionStats stats,
                           ctx.database().GetCollection(args.collection).Stats());
  reply->AppendString("ns", ctx.db + "." + args.collection);
  AppendStorageStats(stats, args.scale, reply);  // as $collStats's storageStats
  return Status::OK();
}

// ---- profile, clearQueryStats ----

namespace {
struct ProfileArgs {
  int64_t level = -1;
  std::optional<int64_t> slowms;
};
constexpr OptionField<ProfileArgs> kProfileFields[] = {
    {"profile", &IntegerRow<ProfileArgs, &ProfileArgs::level>},
    {"slowms",
     [](const Element& e, ProfileArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(int64_t ms, IntegerField(e));
       o->slowms = ms;
       return Status::OK();
     }},
    {"sampleRate",
     [](const Element& e, ProfileArgs*) -> Status {
       if (!e.IsNumber()) return Status(ErrorCode::kTypeMismatch, "BSON field 'sampleRate' must be a number");
       if (e.NumberAsDouble() != 1.0) {
         return Status(ErrorCode::kNotImplemented,
                       "BSON field 'sampleRate' other than 1.0 is not supported by rockdoc");
       }
       return Status::OK();
     }},
    {"filter", nullptr},
    ROCKDOC_GENERIC_COMMAND_ROWS(ProfileArgs)};
struct ClearQueryStatsArgs {};
constexpr OptionField<ClearQueryStatsArgs> kClearQueryStatsFields[] = {
    {"clearQueryStats", &Accept<ClearQueryStatsArgs>},
    ROCKDOC_GENERIC_COMMAND_ROWS(ClearQueryStatsArgs)};
}  // namespace

Status RunProfile(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ProfileArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("profile", cmd, kProfileFields, &args));
  if (args.level < -1 || args.level > 2) {
    return Status(ErrorCode::kBadValue, "Invalid profiling level: " + std::to_string(args.level));
  }
  ROCKDOC_ASSIGN_OR_RETURN(
      Database::ProfilingStatus status,
      ctx.client->GetDatabase(ctx.db).SetProfilingLevel(static_cast<int>(args.level), args.slowms));
  reply->AppendInt32("was", status.was);
  reply->AppendInt32("slowms", static_cast<int32_t>(std::min<int64_t>(status.slowms, INT32_MAX)));
  reply->AppendDouble("sampleRate", 1.0);
  return Status::OK();
}

Status RunClearQueryStats(CommandContext& ctx, DocumentView cmd, BsonBuilder*) {
  ClearQueryStatsArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("clearQueryStats", cmd, kClearQueryStatsFields, &args));
  return ctx.client->ClearQueryStats();
}

// ---- dbStats ----

namespace {
struct DbStatsArgs {
  int64_t scale = 1;
  bool free_storage = false;
};
constexpr OptionField<DbStatsArgs> kDbStatsFields[] = {
    {"dbStats", &Accept<DbStatsArgs>},
    {"dbstats", &Accept<DbStatsArgs>},
    {"scale", &ScaleRow<DbStatsArgs>},
    {"freeStorage", &BoolRow<DbStatsArgs, &DbStatsArgs::free_storage>},
    ROCKDOC_GENERIC_COMMAND_ROWS(DbStatsArgs)};
}  // namespace

Status RunDbStats(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  DbStatsArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("dbStats", cmd, kDbStatsFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(DatabaseSizes sizes, SizesOf(ctx.database()));
  const int64_t k = args.scale;
  reply->AppendString("db", ctx.db);
  AppendNumber(reply, "collections", sizes.collections);
  AppendNumber(reply, "views", sizes.views);
  AppendNumber(reply, "objects", sizes.objects);
  reply->AppendDouble("avgObjSize", sizes.objects > 0 ? static_cast<double>(sizes.data) /
                                                            static_cast<double>(sizes.objects)
                                                      : 0.0);
  reply->AppendDouble("dataSize", static_cast<double>(sizes.data / k));
  reply->AppendDouble("storageSize", static_cast<double>(sizes.storage / k));
  AppendNumber(reply, "indexes", sizes.indexes);
  reply->AppendDouble("indexSize", static_cast<double>(sizes.index_size / k));
  reply->AppendDouble("totalSize", static_cast<double>((sizes.storage + sizes.index_size) / k));
  if (args.free_storage) {
    // Space a storage engine holds for reuse: RocksDB's table files hold
    // none (compaction rewrites them), so it is 0 here.
    reply->AppendDouble("freeStorageSize", 0);
    reply->AppendDouble("indexFreeStorageSize", 0);
    reply->AppendDouble("totalFreeStorageSize", 0);
  }
  AppendNumber(reply, "scaleFactor", k);
  std::error_code error;
  std::filesystem::space_info fs = std::filesystem::space(ctx.client->path(), error);
  if (!error) {
    reply->AppendDouble("fsUsedSize", static_cast<double>((fs.capacity - fs.free) / k));
    reply->AppendDouble("fsTotalSize", static_cast<double>(fs.capacity / k));
  }
  return Status::OK();
}

// ---- listDatabases ----

namespace {
struct ListDatabasesArgs {
  Document filter;
  bool name_only = false;
};
constexpr OptionField<ListDatabasesArgs> kListDatabasesFields[] = {
    {"listDatabases", &Accept<ListDatabasesArgs>},
    {"filter", &DocumentRow<ListDatabasesArgs, &ListDatabasesArgs::filter>},
    {"nameOnly", &BoolRow<ListDatabasesArgs, &ListDatabasesArgs::name_only>},
    // Without users every database is authorized.
    {"authorizedDatabases", &ApiBoolRow<ListDatabasesArgs>},
    ROCKDOC_GENERIC_COMMAND_ROWS(ListDatabasesArgs)};
}  // namespace

Status RunListDatabases(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ListDatabasesArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("listDatabases", cmd, kListDatabasesFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<MatchExpression> filter, ListFilter(args.filter));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> names, ctx.client->ListDatabaseNames());
  // mongod always lists admin, config and local (its own collections live
  // there); rockdoc keeps none of its own, so each is listed as it is here:
  // empty, of size 0, until a client writes to it.
  for (std::string_view system : {"admin", "config", "local"}) {
    if (std::find(names.begin(), names.end(), system) == names.end()) {
      names.emplace_back(system);
    }
  }
  std::sort(names.begin(), names.end());
  int64_t total = 0;
  reply->OpenArray("databases");
  for (const std::string& name : names) {
    BsonBuilder entry;
    entry.AppendString("name", name);
    if (!args.name_only) {
      ROCKDOC_ASSIGN_OR_RETURN(DatabaseSizes sizes, SizesOf(ctx.client->GetDatabase(name)));
      AppendNumber(&entry, "sizeOnDisk", sizes.storage + sizes.index_size);
      entry.AppendBool("empty", sizes.collections == 0);
      total += sizes.storage + sizes.index_size;
    }
    Document d = std::move(entry).Build();
    if (filter) {
      ROCKDOC_ASSIGN_OR_RETURN(bool matched, MatchesOrError(*filter, d));
      if (!matched) continue;
    }
    reply->AppendDocument("", d);
  }
  reply->Close();
  if (!args.name_only) {
    AppendNumber(reply, "totalSize", total);
    AppendNumber(reply, "totalSizeMb", total / (1024 * 1024));
  }
  return Status::OK();
}

// ---- serverStatus, hostInfo ----

namespace {
struct ServerStatusArgs {};
// serverStatus takes section switches ({repl: 0, metrics: 1}), as MongoDB:
// a number or a bool per section name. rockdoc's sections are always those
// below; a switch for another section changes nothing because there is no
// such section here.
Status SectionSwitch(const Element& e) {
  if (e.IsNumber() || e.IsBool() || e.IsDocument()) return Status::OK();
  return WrongType(e, "types '[bool, long, int, decimal, double, object]'");
}
}  // namespace

Status RunServerStatus(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  static constexpr OptionField<ServerStatusArgs> kGeneric[] = {
      ROCKDOC_GENERIC_COMMAND_ROWS(ServerStatusArgs)};
  for (Element e : cmd) {
    bool generic = false;
    for (const auto& row : kGeneric) generic = generic || row.name == e.key();
    if (!generic && e.key() != "serverStatus") {
      ROCKDOC_RETURN_IF_ERROR(QualifyFieldError("serverStatus", SectionSwitch(e)));
    }
  }
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const int64_t up_ms = SteadyMillis() - kStartSteadyMillis;
  reply->AppendString("host", host);
  reply->AppendString("version", kCompatibleMongoVersion);
  reply->AppendString("process", "rockdoc");
  reply->AppendInt64("pid", static_cast<int64_t>(getpid()));
  reply->AppendDouble("uptime", static_cast<double>(up_ms / 1000));
  reply->AppendInt64("uptimeMillis", up_ms);
  reply->AppendInt64("uptimeEstimate", up_ms / 1000);
  reply->AppendDateTime("localTime", WallMillis());
  reply->OpenDocument("storageEngine");
  reply->AppendString("name", "rocksdb");
  reply->AppendBool("supportsCommittedReads", true);
  reply->AppendBool("persistent", true);
  reply->Close();
  // The logical sessions the server holds (MongoDB's section of that name).
  reply->OpenDocument("logicalSessionRecordCache");
  reply->AppendInt64("activeSessionsCount",
                     ctx.sessions != nullptr ? static_cast<int64_t>(ctx.sessions->size()) : 0);
  reply->Close();
  return Status::OK();
}

Status RunHostInfo(CommandContext&, DocumentView cmd, BsonBuilder* reply) {
  struct NoArgs {};
  static constexpr OptionField<NoArgs> kFields[] = {{"hostInfo", &Accept<NoArgs>},
                                                    ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
  NoArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("hostInfo", cmd, kFields, &args));
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  struct utsname names;
  const bool have_uname = uname(&names) == 0;
  const int64_t pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  const int64_t mem_mb = pages > 0 && page_size > 0 ? pages / 1024 * page_size / 1024 : 0;
  reply->OpenDocument("system");
  reply->AppendDateTime("currentTime", WallMillis());
  reply->AppendString("hostname", host);
  reply->AppendInt32("cpuAddrSize", static_cast<int32_t>(sizeof(void*) * 8));
  reply->AppendInt64("memSizeMB", mem_mb);
  reply->AppendInt64("memLimitMB", mem_mb);
  reply->AppendInt32("numCores", static_cast<int32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  reply->AppendString("cpuArch", have_uname ? names.machine : "");
  reply->AppendBool("numaEnabled", false);
  reply->Close();
  reply->OpenDocument("os");
  reply->AppendString("type", have_uname ? names.sysname : "");
  reply->AppendString("name", have_uname ? names.sysname : "");
  reply->AppendString("version", have_uname ? names.release : "");
  reply->Close();
  reply->OpenDocument("extra");
  reply->Close();
  return Status::OK();
}

// ---- getParameter ----

namespace {

// The parameters rockdoc has, by MongoDB's names, with the values this
// client runs with. None can be set at runtime (no setParameter); the
// ClientOptions ones are set when the database is opened.
struct Parameter {
  std::string_view name;
  bool settable_at_startup;
  void (*append)(const ClientOptions& options, std::string_view key, BsonBuilder* out);
};

constexpr Parameter kParameters[] = {
    {"cursorTimeoutMillis", false,
     [](const ClientOptions&, std::string_view key, BsonBuilder* out) {
       out->AppendInt64(key, kDefaultCursorTimeoutMs);
     }},
    {"enableTestCommands", false,  // rockdoc has no test commands
     [](const ClientOptions&, std::string_view key, BsonBuilder* out) {
       out->AppendBool(key, false);
     }},
    {"featureCompatibilityVersion", false,
     [](const ClientOptions&, std::string_view key, BsonBuilder* out) {
       out->OpenDocument(key);
       out->AppendString("version", "7.0");
       out->Close();
     }},
    {"internalQueryMaxBlockingSortMemoryUsageBytes", false,
     [](const ClientOptions&, std::string_view key, BsonBuilder* out) {
       AppendNumber(out, key, FindOptions{}.max_blocking_sort_bytes);
     }},
    {"localLogicalSessionTimeoutMinutes", false,
     [](const ClientOptions&, std::string_view key, BsonBuilder* out) {
       out->AppendInt32(key, static_cast<int32_t>(kSessionIdleTimeoutMs / 60000));
     }},
    {"maxIndexBuildMemoryUsageMegabytes", true,
     [](const ClientOptions& o, std::string_view key, BsonBuilder* out) {
       AppendNumber(out, key, o.max_index_build_memory_bytes >> 20);
     }},
    {"requireApiVersion", false,
     [](const ClientOptions&, std::string_view key, BsonBuilder* out) {
       out->AppendBool(key, false);
     }},
    {"transactionLifetimeLimitSeconds", true,
     [](const ClientOptions& o, std::string_view key, BsonBuilder* out) {
       AppendNumber(out, key, o.transaction_lifetime_limit_ms / 1000);
     }},
    {"ttlMonitorSleepSecs", true,
     [](const ClientOptions& o, std::string_view key, BsonBuilder* out) {
       AppendNumber(out, key, o.ttl_monitor_period_ms / 1000);
     }},
};

}  // namespace

Status RunGetParameter(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  // {getParameter: 1, <name>: 1, ...}, {getParameter: "*"}, or
  // {getParameter: {showDetails, allParameters}, <name>: 1, ...}.
  const Element how = *cmd.begin();
  bool all = false, details = false;
  if (how.IsString()) {
    all = how.String() == "*";
  } else if (how.IsDocument()) {
    for (Element f : how.Document()) {
      StatusOr<bool> on = BoolField(f);
      if (f.key() != "showDetails" && f.key() != "allParameters") {
        return Status(ErrorCode::kUnknownBsonField, "BSON field 'getParameter." +
                                                        std::string(f.key()) +
                                                        "' is an unknown field.");
      }
      ROCKDOC_RETURN_IF_ERROR(QualifyFieldError("getParameter", on.status()));
      (f.key() == "showDetails" ? details : all) = *on;
    }
  } else if (!how.IsNumber() && !how.IsBool()) {
    return QualifyFieldError("getParameter",
                             WrongType(how, "types '[string, object, long, int, decimal, double, bool]'"));
  }
  // As mongod: the fields that name no parameter (the generic ones, and
  // names it does not have) select nothing, and nothing selected is the error.
  const ClientOptions& options = ClientAccess::EngineOf(ctx.client->GetDatabase("admin"))->options();
  bool found = false;
  for (const Parameter& p : kParameters) {
    if (!all && !cmd.Has(p.name)) continue;
    found = true;
    if (!details) {
      p.append(options, p.name, reply);
      continue;
    }
    reply->OpenDocument(p.name);
    p.append(options, "value", reply);
    reply->AppendBool("settableAtRuntime", false);
    reply->AppendBool("settableAtStartup", p.settable_at_startup);
    reply->Close();
  }
  if (!found) return Status(ErrorCode::kInvalidOptions, "no option found to get");
  return Status::OK();
}

}  // namespace rockdoc::internal

// command/stats_commands.cc: what the server knows of itself and its data:
// listDatabases, dbStats, collStats, serverStatus, hostInfo, getParameter.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
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
#include "storage/record_cache.h"
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
// serverStatus takes section switches ({repl: 0, metrics: 1}), as MongoDB:
// a number or a bool per section name. A section switched off (false, 0)
// is left out of the reply, as mongod's; switching on one rockdoc does not
// have (repl, metrics, ...) adds nothing, as there is no such section here.
StatusOr<bool> SectionSwitch(const Element& e) {
  if (e.IsNumber() || e.IsBool()) return BoolField(e);
  if (e.IsDocument()) return true;
  return WrongType(e, "types '[bool, long, int, decimal, double, object]'");
}
}  // namespace

namespace {

// The process' virtual and resident sizes in MiB, from /proc/self/statm
// (pages): serverStatus' mem. False where there is no /proc.
bool ProcessMemoryMiB(int64_t* virtual_mib, int64_t* resident_mib) {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return false;
  long long size = 0, resident = 0;
  const bool read = std::fscanf(f, "%lld %lld", &size, &resident) == 2;
  std::fclose(f);
  if (!read) return false;
  const int64_t page = sysconf(_SC_PAGESIZE);
  *virtual_mib = size * page >> 20;
  *resident_mib = resident * page >> 20;
  return true;
}

// What serverStatus shows of the server's work (stats/server_activity.h):
// connections and network (a server above the engine feeds them; zeros in
// process), opcounters, globalLock, mem, and the engine's own section
// (rocksdb: its record cache's counters, storage/record_cache.h).
void AppendActivitySections(CommandContext& ctx, int64_t up_ms, BsonBuilder* reply) {
  const ServerActivity& activity = ActivityOf(*ctx.client);
  const NetworkCounters& net = activity.network();
  reply->OpenDocument("connections");
  const int64_t current = net.current.load();
  AppendNumber(reply, "current", current);
  AppendNumber(reply, "available", std::max<int64_t>(0, net.max.load() - current));
  AppendNumber(reply, "totalCreated", net.total_created.load());
  AppendNumber(reply, "active", net.active.load());
  reply->AppendBool("threaded", true);
  reply->Close();
  reply->OpenDocument("network");
  reply->AppendInt64("bytesIn", net.bytes_in.load());
  reply->AppendInt64("bytesOut", net.bytes_out.load());
  reply->AppendInt64("physicalBytesIn", net.bytes_in.load());
  reply->AppendInt64("physicalBytesOut", net.bytes_out.load());
  reply->AppendInt64("numRequests", net.num_requests.load());
  reply->Close();
  const OpCounters& ops = activity.opcounters();
  reply->OpenDocument("opcounters");
  reply->AppendInt64("insert", ops.insert.load());
  reply->AppendInt64("query", ops.query.load());
  reply->AppendInt64("update", ops.update.load());
  reply->AppendInt64("delete", ops.remove.load());
  reply->AppendInt64("getmore", ops.getmore.load());
  reply->AppendInt64("command", ops.command.load());
  reply->Close();
  // rockdoc has no global lock: the queue is always empty, and the active
  // clients are the operations in flight (this serverStatus among them).
  int64_t readers = 0, writers = 0;
  activity.CountInFlight(&readers, &writers);
  reply->OpenDocument("globalLock");
  reply->AppendInt64("totalTime", up_ms * 1000);
  reply->OpenDocument("currentQueue");
  reply->AppendInt32("total", 0).AppendInt32("readers", 0).AppendInt32("writers", 0);
  reply->Close();
  reply->OpenDocument("activeClients");
  AppendNumber(reply, "total", readers + writers);
  AppendNumber(reply, "readers", readers);
  AppendNumber(reply, "writers", writers);
  reply->Close();
  reply->Close();
  reply->OpenDocument("mem");
  reply->AppendInt32("bits", static_cast<int32_t>(sizeof(void*) * 8));
  int64_t virtual_mib = 0, resident_mib = 0;
  const bool supported = ProcessMemoryMiB(&virtual_mib, &resident_mib);
  if (supported) {
    AppendNumber(reply, "resident", resident_mib);
    AppendNumber(reply, "virtual", virtual_mib);
  }
  reply->AppendBool("supported", supported);
  reply->Close();
  // The engine's own section, as mongod's wiredTiger: RocksDB's figures
  // and the record cache's counters (none when the cache is off).
  const Engine& engine = *ClientAccess::EngineOf(*ctx.client);
  const StorageStats storage = ctx.client->GetStorageStats();
  reply->OpenDocument("rocksdb");
  reply->AppendInt64("bytesWritten", static_cast<int64_t>(storage.bytes_written));
  reply->AppendInt64("bytesRead", static_cast<int64_t>(storage.bytes_read));
  reply->AppendInt64("walBytes", static_cast<int64_t>(storage.wal_bytes));
  reply->AppendInt64("liveSstBytes", static_cast<int64_t>(storage.live_sst_bytes));
  reply->OpenDocument("recordCache");
  const RecordCache* cache = engine.record_cache();
  reply->AppendBool("enabled", cache != nullptr);
  if (cache != nullptr) {
    const RecordCache::Counters c = cache->counters();
    reply->AppendInt64("budgetBytes", static_cast<int64_t>(cache->budget_bytes()));
    reply->AppendInt64("bytes", c.bytes);
    reply->AppendInt64("entries", c.entries);
    reply->AppendInt64("hits", c.hits);
    reply->AppendInt64("misses", c.misses);
    reply->AppendInt64("installs", c.installs);
    reply->AppendInt64("evictions", c.evictions);
  }
  reply->Close();
  reply->Close();
}

}  // namespace

namespace {
// Every section serverStatus has.
void AppendServerStatus(CommandContext& ctx, BsonBuilder* reply);
}  // namespace

Status RunServerStatus(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  std::vector<std::string_view> off;
  for (Element e : cmd) {
    if (!IsGenericCommandField(e.key()) && e.key() != "serverStatus") {
      StatusOr<bool> on = SectionSwitch(e);
      ROCKDOC_RETURN_IF_ERROR(QualifyFieldError("serverStatus", on.status()));
      if (!*on) off.push_back(e.key());
    }
  }
  BsonBuilder all;
  AppendServerStatus(ctx, &all);
  const Document sections = std::move(all).Build();
  for (Element e : sections) {
    if (std::find(off.begin(), off.end(), e.key()) == off.end()) reply->AppendElement(e);
  }
  return Status::OK();
}

namespace {

void AppendServerStatus(CommandContext& ctx, BsonBuilder* reply) {
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
  AppendActivitySections(ctx, up_ms, reply);
}

}  // namespace

Status RunHostInfo(CommandContext&, DocumentView cmd, BsonBuilder* reply) {
  ROCKDOC_RETURN_IF_ERROR(DecodeNoFields("hostInfo", cmd));
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
// client runs with. The ClientOptions ones are set when the database is
// opened; those with a `set` may be changed at runtime (setParameter).
struct ParameterContext {
  const ClientOptions& options;
  CursorManager* cursors;
};
struct Parameter {
  std::string_view name;
  bool settable_at_startup;
  void (*append)(const ParameterContext& p, std::string_view key, BsonBuilder* out);
  // Sets it at runtime from `value`; null: not settable at runtime.
  Status (*set)(const ParameterContext& p, const Element& value);
};

constexpr Parameter kParameters[] = {
    {"cursorTimeoutMillis", true,
     [](const ParameterContext& p, std::string_view key, BsonBuilder* out) {
       out->AppendInt64(key, p.cursors->idle_timeout_ms());
     },
     [](const ParameterContext& p, const Element& value) -> Status {
       StatusOr<int64_t> ms = IntegerField(value);
       if (!ms.ok() || *ms < 0) {
         return Status(ErrorCode::kBadValue,
                       "Invalid value for cursorTimeoutMillis: must be a non-negative integer");
       }
       p.cursors->set_idle_timeout_ms(*ms);
       return Status::OK();
     }},
    {"enableTestCommands", false,  // rockdoc has no test commands
     [](const ParameterContext&, std::string_view key, BsonBuilder* out) {
       out->AppendBool(key, false);
     },
     nullptr},
    {"featureCompatibilityVersion", false,
     [](const ParameterContext&, std::string_view key, BsonBuilder* out) {
       out->OpenDocument(key);
       out->AppendString("version", "7.0");
       out->Close();
     },
     nullptr},
    {"internalQueryMaxBlockingSortMemoryUsageBytes", false,
     [](const ParameterContext&, std::string_view key, BsonBuilder* out) {
       AppendNumber(out, key, FindOptions{}.max_blocking_sort_bytes);
     },
     nullptr},
    {"localLogicalSessionTimeoutMinutes", false,
     [](const ParameterContext&, std::string_view key, BsonBuilder* out) {
       out->AppendInt32(key, static_cast<int32_t>(kSessionIdleTimeoutMs / 60000));
     },
     nullptr},
    {"maxIndexBuildMemoryUsageMegabytes", true,
     [](const ParameterContext& p, std::string_view key, BsonBuilder* out) {
       AppendNumber(out, key, p.options.max_index_build_memory_bytes >> 20);
     },
     nullptr},
    {"requireApiVersion", false,
     [](const ParameterContext&, std::string_view key, BsonBuilder* out) {
       out->AppendBool(key, false);
     },
     nullptr},
    {"transactionLifetimeLimitSeconds", true,
     [](const ParameterContext& p, std::string_view key, BsonBuilder* out) {
       AppendNumber(out, key, p.options.transaction_lifetime_limit_ms / 1000);
     },
     nullptr},
    {"ttlMonitorSleepSecs", true,
     [](const ParameterContext& p, std::string_view key, BsonBuilder* out) {
       AppendNumber(out, key, p.options.ttl_monitor_period_ms / 1000);
     },
     nullptr},
};

const Parameter* FindParameter(std::string_view name) {
  for (const Parameter& p : kParameters) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

ParameterContext ParametersOf(CommandContext& ctx) {
  return {ClientAccess::EngineOf(ctx.client->GetDatabase("admin"))->options(), ctx.cursors};
}

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
  const ParameterContext parameters = ParametersOf(ctx);
  bool found = false;
  for (const Parameter& p : kParameters) {
    if (!all && !cmd.Has(p.name)) continue;
    found = true;
    if (!details) {
      p.append(parameters, p.name, reply);
      continue;
    }
    reply->OpenDocument(p.name);
    p.append(parameters, "value", reply);
    reply->AppendBool("settableAtRuntime", p.set != nullptr);
    reply->AppendBool("settableAtStartup", p.settable_at_startup);
    reply->Close();
  }
  if (!found) return Status(ErrorCode::kInvalidOptions, "no option found to get");
  return Status::OK();
}

// setParameter {setParameter: 1, <name>: <value>}: one parameter per
// command, as mongod's; the reply's `was` is its value before.
Status RunSetParameter(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  std::optional<Element> named;
  for (Element e : cmd) {
    if (e.key() == "setParameter" || IsGenericCommandField(e.key())) continue;
    if (named) {
      return Status(ErrorCode::kIllegalOperation,
                    "Only one parameter can be set per setParameter command");
    }
    named = e;
  }
  if (!named) {
    return Status(ErrorCode::kInvalidOptions, "no option found to set, use help:true to see options ");
  }
  const Element* chosen = &*named;
  const Parameter* p = FindParameter(chosen->key());
  if (p == nullptr) {
    return Status(ErrorCode::kInvalidOptions, "attempted to set unrecognized parameter [" +
                                                  std::string(chosen->key()) +
                                                  "], use help:true to see options ");
  }
  if (p->set == nullptr) {
    return Status(ErrorCode::kIllegalOperation,
                  "not allowed to change [" + std::string(p->name) + "] at runtime");
  }
  const ParameterContext parameters = ParametersOf(ctx);
  BsonBuilder was;
  p->append(parameters, "was", &was);
  ROCKDOC_RETURN_IF_ERROR(p->set(parameters, *chosen));
  const Document before = std::move(was).Build();
  reply->AppendElement(*before.begin());
  return Status::OK();
}

}  // namespace rockdoc::internal

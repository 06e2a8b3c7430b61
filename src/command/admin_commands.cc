// command/admin_commands.cc: what admin tools (mongosh, Compass,
// mongo-express) ask of a server about its work: currentOp, killOp, top,
// getLog, connectionStatus; and the recording of every command the
// dispatcher runs (RecordedCommand: the operation in flight, opcounters,
// top, the slow-operation log line), over stats/server_activity.h.
#include <string>
#include <vector>

#include "api/client_internal.h"
#include "command/command.h"
#include "command/handlers.h"
#include "common/clock.h"
#include "common/deadline.h"
#include "query/match_expression.h"
#include "stats/telemetry.h"

namespace rockdoc::internal {

ServerActivity& ActivityOf(const Client& client) {
  return StatsOf(*ClientAccess::EngineOf(client)).activity();
}

namespace {

// mongod's slowms default: a command that runs this long is logged.
constexpr int64_t kSlowOperationMs = 100;

// What a command is to currentOp, opcounters and top.
struct CommandKind {
  std::string_view op;  // currentOp's `op`
  TopColumn column;
  bool write;            // top's writeLock (else readLock)
  std::string_view collection;  // "" when the command names none
};

CommandKind KindOf(std::string_view name, DocumentView cmd) {
  const Element first = *cmd.begin();
  std::string_view collection = first.IsString() ? first.String() : std::string_view();
  // {aggregate: 1}'s namespace, as mongod names it.
  if (name == "aggregate" && !first.IsString()) collection = "$cmd.aggregate";
  if (name == "find") return {"query", TopColumn::kQueries, false, collection};
  if (name == "getMore") {
    const Element c = cmd.Get("collection");
    return {"getmore", TopColumn::kGetMore, false, c.IsString() ? c.String() : std::string_view()};
  }
  if (name == "insert") return {"insert", TopColumn::kInsert, true, collection};
  if (name == "update") return {"update", TopColumn::kUpdate, true, collection};
  if (name == "findAndModify" || name == "findandmodify") {
    return {"command", TopColumn::kUpdate, true, collection};
  }
  if (name == "delete") return {"remove", TopColumn::kRemove, true, collection};
  static constexpr std::string_view kWrites[] = {"create",      "drop",          "createIndexes",
                                                 "dropIndexes", "deleteIndexes", "collMod"};
  bool write = false;
  for (std::string_view w : kWrites) write = write || w == name;
  return {"command", TopColumn::kCommands, write, collection};
}

// The number of statements of a write command (an OP_MSG document sequence
// arrives folded into the command as the array).
int64_t ArrayLength(DocumentView cmd, std::string_view field) {
  const Element e = cmd.Get(field);
  if (e.type() != BsonType::kArray) return 0;
  int64_t n = 0;
  for (Element x : e.Array()) {
    (void)x;
    ++n;
  }
  return n;
}

}  // namespace

RecordedCommand::RecordedCommand(const Client& client, CommandConnection* connection,
                                 std::string_view db, std::string_view name, DocumentView cmd)
    : activity_(ActivityOf(client)), name_(name) {
  const CommandKind kind = KindOf(name, cmd);
  OpCounters& counters = activity_.opcounters();
  if (name == "find") {
    ++counters.query;
  } else if (name == "getMore") {
    ++counters.getmore;
  } else if (name == "insert") {
    counters.insert += ArrayLength(cmd, "documents");
  } else if (name == "update") {
    counters.update += ArrayLength(cmd, "updates");
  } else if (name == "delete") {
    counters.remove += ArrayLength(cmd, "deletes");
  } else {
    ++counters.command;
  }
  OperationInfo fields;
  if (connection != nullptr) {
    fields.connection_id = connection->id();
    fields.client = connection->remote();
    fields.app_name = connection->app_name();
    if (!connection->user().empty()) fields.user = connection->user_db() + "." + connection->user();
  }
  fields.op = std::string(kind.op);
  fields.ns = std::string(db) + "." +
              (kind.collection.empty() ? std::string("$cmd") : std::string(kind.collection));
  fields.command = KeptCommand(cmd);
  fields.write = kind.write;
  column_ = kind.column;
  write_ = kind.write;
  top_ns_ = kind.collection.empty() ? std::string() : fields.ns;
  operation_ = activity_.BeginOperation(std::move(fields));
  interrupt_.emplace(&operation_->killed);
  scope_.emplace(operation_.get());
}

RecordedCommand::~RecordedCommand() {
  scope_.reset();
  interrupt_.reset();
  const int64_t micros = (MonotonicNanos() - operation_->start_nanos) / 1000;
  if (!top_ns_.empty()) activity_.RecordTop(top_ns_, column_, write_, micros);
  if (micros >= kSlowOperationMs * 1000) {
    // mongod's "Slow query" line (id 51803), which getLog shows.
    BsonBuilder attr;
    attr.AppendString("type", "command");
    attr.AppendString("ns", operation_->info.ns);
    attr.AppendDocument("command", operation_->info.command);
    attr.AppendInt64("durationMillis", micros / 1000);
    const std::string context = operation_->info.connection_id != 0
                                    ? "conn" + std::to_string(operation_->info.connection_id)
                                    : std::string("rockdoc");
    activity_.LogEvent("COMMAND", 51803, context, "Slow query", std::move(attr).Build());
  }
  activity_.EndOperation(operation_);
}

// ---- currentOp, killOp ----

namespace {

// currentOp's own fields and the generic ones; every other field is a
// filter over the operations' documents, as MongoDB's.
bool IsCurrentOpField(std::string_view key) {
  return key == "currentOp" || key == "$all" || key == "$ownOps" || IsGenericCommandField(key);
}

}  // namespace

Status RunCurrentOp(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  CurrentOpOptions options;
  options.all_users = true;     // unless $ownOps
  options.truncate_ops = true;  // the command's form, as mongod's
  BsonBuilder filter;
  for (Element e : cmd) {
    if (e.key() == "$ownOps") {
      // This user's operations only (every one without access control).
      StatusOr<bool> on = BoolField(e);
      ROCKDOC_RETURN_IF_ERROR(QualifyFieldError("currentOp", on.status()));
      options.all_users = !*on;
      continue;
    }
    if (e.key() == "$all") {
      // Idle connections too: rockdoc lists operations only.
      StatusOr<bool> on = BoolField(e);
      ROCKDOC_RETURN_IF_ERROR(QualifyFieldError("currentOp", on.status()));
      if (*on) {
        return Status(ErrorCode::kNotImplemented,
                      "BSON field 'currentOp." + std::string(e.key()) +
                          "' is not supported by rockdoc");
      }
      continue;
    }
    if (IsCurrentOpField(e.key())) continue;
    filter.AppendElement(e);
  }
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<MatchExpression> match,
                           ListFilter(std::move(filter).Build()));
  reply->OpenArray("inprog");
  for (const Document& op : ActivityOf(*ctx.client).CurrentOps(options)) {
    if (match) {
      ROCKDOC_ASSIGN_OR_RETURN(bool matched, MatchesOrError(*match, op));
      if (!matched) continue;
    }
    reply->AppendDocument("", op);
  }
  reply->Close();
  return Status::OK();
}

namespace {
struct KillOpArgs {
  std::optional<int64_t> op;
};
constexpr OptionField<KillOpArgs> kKillOpFields[] = {
    {"killOp", &Accept<KillOpArgs>},
    {"op",
     [](const Element& e, KillOpArgs* o) -> Status {
       if (!e.IsNumber()) return WrongType(e, "types '[long, int, decimal, double]'");
       ROCKDOC_ASSIGN_OR_RETURN(int64_t id, IntegerField(e));
       o->op = id;
       return Status::OK();
     }},
    ROCKDOC_GENERIC_COMMAND_ROWS(KillOpArgs)};
}  // namespace

// killOp {op: <opid>}: sets the operation's interrupt flag (and wakes it if
// it waits); it fails at its next interrupt point with Interrupted (11601).
// As mongod's, an opid that is not in flight is no error: {info, ok: 1}.
Status RunKillOp(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  KillOpArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("killOp", cmd, kKillOpFields, &args));
  if (!args.op) return MissingField("killOp.op");
  if (*args.op < INT32_MIN || *args.op > INT32_MAX) {
    return Status(ErrorCode::kBadValue, "invalid op : " + std::to_string(*args.op) +
                                            ". Op ID cannot be represented with 32 bits");
  }
  reply->AppendString("info", "attempting to kill op");
  ActivityOf(*ctx.client).Kill(*args.op);
  return Status::OK();
}

// ---- top ----

Status RunTop(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ROCKDOC_RETURN_IF_ERROR(DecodeNoFields("top", cmd));
  reply->OpenDocument("totals");
  ActivityOf(*ctx.client).AppendTop(reply);
  reply->Close();
  return Status::OK();
}

// ---- getLog ----

Status RunGetLog(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  static constexpr OptionField<std::string> kFields[] = {
      {"getLog",
       [](const Element& e, std::string* o) -> Status {
         if (!e.IsString()) {
           return Status(ErrorCode::kTypeMismatch,
                         "Argument to getLog must be of type String; found " +
                             std::string(BsonTypeAlias(e.type())));
         }
         *o = std::string(e.String());
         return Status::OK();
       }},
      ROCKDOC_GENERIC_COMMAND_ROWS(std::string)};
  std::string name;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("getLog", cmd, kFields, &name));
  if (name == "*") {
    reply->OpenArray("names").AppendString("", "global").AppendString("", "startupWarnings").Close();
    return Status::OK();
  }
  if (name == "startupWarnings") {
    AppendNumber(reply, "totalLinesWritten", 0);
    reply->OpenArray("log").Close();
    return Status::OK();
  }
  if (name != "global") {
    return Status(ErrorCode::kOperationFailed, "No log named '" + name + "'");
  }
  int64_t written = 0;
  const std::vector<std::string> lines = ActivityOf(*ctx.client).RecentLog(&written);
  AppendNumber(reply, "totalLinesWritten", written);
  reply->OpenArray("log");
  for (const std::string& line : lines) reply->AppendString("", line);
  reply->Close();
  return Status::OK();
}

// ---- connectionStatus ----

namespace {
struct ConnectionStatusArgs {
  bool show_privileges = false;
};
constexpr OptionField<ConnectionStatusArgs> kConnectionStatusFields[] = {
    {"connectionStatus", &Accept<ConnectionStatusArgs>},
    {"showPrivileges",
     &BoolRow<ConnectionStatusArgs, &ConnectionStatusArgs::show_privileges>},
    ROCKDOC_GENERIC_COMMAND_ROWS(ConnectionStatusArgs)};
}  // namespace

// connectionStatus: who this connection is. rockdoc's users have no roles
// (each may do everything; src/wire/README.md), so authenticatedUserRoles
// is empty and, with showPrivileges, the privileges are every action on
// every resource, as root's would be.
Status RunConnectionStatus(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ConnectionStatusArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("connectionStatus", cmd, kConnectionStatusFields, &args));
  const std::string user = ctx.connection != nullptr ? ctx.connection->user() : std::string();
  reply->OpenDocument("authInfo");
  reply->OpenArray("authenticatedUsers");
  if (!user.empty()) {
    reply->OpenDocument("")
        .AppendString("user", user)
        .AppendString("db", ctx.connection->user_db())
        .Close();
  }
  reply->Close();
  reply->OpenArray("authenticatedUserRoles").Close();
  if (args.show_privileges) {
    reply->OpenArray("authenticatedUserPrivileges");
    if (!user.empty()) {
      reply->OpenDocument("");
      reply->OpenDocument("resource").AppendBool("anyResource", true).Close();
      reply->OpenArray("actions").AppendString("", "anyAction").Close();
      reply->Close();
    }
    reply->Close();
  }
  reply->Close();
  return Status::OK();
}

}  // namespace rockdoc::internal

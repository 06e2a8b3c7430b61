// command/run_command.cc: Client::RunCommand, the one entry point of
// MongoDB's database commands, and the table of the commands rockdoc
// answers.
#include <algorithm>
#include <mutex>

#include "catalog/catalog.h"
#include "command/command.h"
#include "command/cursor_manager.h"
#include "command/handlers.h"

namespace rockdoc {

namespace internal {

namespace {

// Every command, by name (sorted: FindCommand searches it). Aliases are
// rows of their own, as MongoDB registers them.
constexpr CommandDefinition kCommands[] = {
    {"buildInfo", &RunBuildInfo},
    {"buildinfo", &RunBuildInfo},
    {"collMod", &RunCollMod},
    {"collStats", &RunCollStats},
    {"count", &RunCount},
    {"create", &RunCreate},
    {"createIndexes", &RunCreateIndexes},
    {"dbStats", &RunDbStats},
    {"dbstats", &RunDbStats},
    {"delete", &RunDelete},
    {"deleteIndexes", &RunDropIndexes},
    {"distinct", &RunDistinct},
    {"drop", &RunDrop},
    {"dropDatabase", &RunDropDatabase},
    {"dropIndexes", &RunDropIndexes},
    {"explain", &RunExplain},
    {"find", &RunFind},
    {"findAndModify", &RunFindAndModify},
    {"findandmodify", &RunFindAndModify},
    {"getMore", &RunGetMore},
    {"hello", &RunHello},
    {"hostInfo", &RunHostInfo},
    {"insert", &RunInsert},
    {"isMaster", &RunIsMaster},
    {"ismaster", &RunIsMaster},
    {"killCursors", &RunKillCursors},
    {"listCollections", &RunListCollections},
    {"listDatabases", &RunListDatabases, /*admin_only=*/true},
    {"listIndexes", &RunListIndexes},
    {"ping", &RunPing},
    {"renameCollection", &RunRenameCollection, /*admin_only=*/true},
    {"serverStatus", &RunServerStatus},
    {"update", &RunUpdate},
    {"validate", &RunValidate},
};

constexpr bool Sorted() {
  for (size_t i = 1; i < std::size(kCommands); ++i) {
    if (!(kCommands[i - 1].name < kCommands[i].name)) return false;
  }
  return true;
}
static_assert(Sorted(), "kCommands must be sorted by name");

// MongoDB's error reply: {ok: 0, errmsg, code, codeName, errorLabels?}.
Document ErrorReply(const Status& s) {
  BsonBuilder b;
  b.AppendDouble("ok", 0);
  b.AppendString("errmsg", s.message());
  b.AppendInt32("code", static_cast<int32_t>(s.code()));
  b.AppendString("codeName", s.code_name());
  if (!s.error_labels().empty()) {
    b.OpenArray("errorLabels");
    for (const std::string& label : s.error_labels()) b.AppendString("", label);
    b.Close();
  }
  return std::move(b).Build();
}

Status RunOne(const Client& client, CursorManager* cursors, std::string_view db, DocumentView cmd,
              BsonBuilder* reply) {
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(cmd.bytes()));
  if (cmd.empty()) {
    return Status(ErrorCode::kFailedToParse, "no such command: ''");  // MongoDB's wording
  }
  const std::string_view name = (*cmd.begin()).key();
  const CommandDefinition* command = FindCommand(name);
  if (command == nullptr) {
    return Status(ErrorCode::kCommandNotFound, "no such command: '" + std::string(name) + "'");
  }
  ROCKDOC_RETURN_IF_ERROR(ValidateDatabaseName(db));
  // $db, when given (the wire protocol's form), must name the same database.
  Element named = cmd.Get("$db");
  if (named.ok() && (!named.IsString() || named.String() != db)) {
    return Status(ErrorCode::kInvalidNamespace,
                  "$db does not name the database the command runs against");
  }
  if (command->admin_only && db != "admin") {
    return Status(ErrorCode::kUnauthorized,
                  std::string(name) + " may only be run against the admin database.");
  }
  CommandContext ctx;
  ctx.client = &client;
  ctx.db = std::string(db);
  ctx.cursors = cursors;
  return command->run(ctx, cmd, reply);
}

}  // namespace

const CommandDefinition* FindCommand(std::string_view name) {
  auto it =
      std::lower_bound(std::begin(kCommands), std::end(kCommands), name,
                       [](const CommandDefinition& c, std::string_view n) { return c.name < n; });
  return it != std::end(kCommands) && it->name == name ? it : nullptr;
}

}  // namespace internal

Document Client::RunCommand(std::string_view db, DocumentView command) const {
  std::call_once(commands_once_,
                 [this] { cursors_ = std::make_shared<internal::CursorManager>(); });
  BsonBuilder reply;
  Status s = internal::RunOne(*this, cursors_.get(), db, command, &reply);
  if (!s.ok()) return internal::ErrorReply(s);
  reply.AppendDouble("ok", 1);
  return std::move(reply).Build();
}

}  // namespace rockdoc

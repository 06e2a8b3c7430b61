// command/run_command.cc: Client::RunCommand, the one entry point of
// MongoDB's database commands, and the table of the commands rockdoc
// answers.
#include <algorithm>
#include <mutex>
#include <vector>

#include "api/client_internal.h"
#include "catalog/catalog.h"
#include "command/command.h"
#include "command/cursor_manager.h"
#include "command/handlers.h"
#include "command/server_sessions.h"
#include "common/mutex.h"

namespace rockdoc {

namespace internal {

namespace {

Status RunListCommands(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);

// Every command of the command layer, by name (sorted: FindCommand searches
// it). Aliases are rows of their own, as MongoDB registers them. Layers
// above add theirs (RegisterCommands).
constexpr bool kNotAdminOnly = false;  // CommandDefinition::admin_only
constexpr bool kInTransaction = true;  // CommandDefinition::in_transaction
constexpr bool kWithoutAuth = true;    // CommandDefinition::without_auth
constexpr CommandDefinition kCommands[] = {
    {"abortTransaction", &RunAbortTransaction, /*admin_only=*/true, kInTransaction},
    {"aggregate", &RunAggregate, /*admin_only=*/false, kInTransaction},
    {"buildInfo", &RunBuildInfo, kNotAdminOnly, !kInTransaction, kWithoutAuth},
    {"buildinfo", &RunBuildInfo, kNotAdminOnly, !kInTransaction, kWithoutAuth},
    {"clearQueryStats", &RunClearQueryStats, /*admin_only=*/true},
    {"collMod", &RunCollMod},
    {"collStats", &RunCollStats},
    {"commitTransaction", &RunCommitTransaction, /*admin_only=*/true, kInTransaction},
    {"connectionStatus", &RunConnectionStatus, kNotAdminOnly, !kInTransaction, kWithoutAuth},
    {"count", &RunCount},
    {"create", &RunCreate, /*admin_only=*/false, kInTransaction},
    {"createIndexes", &RunCreateIndexes, /*admin_only=*/false, kInTransaction},
    {"createSearchIndexes", &RunCreateSearchIndexes},
    {"currentOp", &RunCurrentOp, /*admin_only=*/true},
    {"dbStats", &RunDbStats},
    {"dbstats", &RunDbStats},
    {"delete", &RunDelete, /*admin_only=*/false, kInTransaction},
    {"deleteIndexes", &RunDropIndexes},
    {"distinct", &RunDistinct, /*admin_only=*/false, kInTransaction},
    {"drop", &RunDrop},
    {"dropDatabase", &RunDropDatabase},
    {"dropIndexes", &RunDropIndexes},
    {"dropSearchIndex", &RunDropSearchIndex},
    {"endSessions", &RunEndSessions},
    {"explain", &RunExplain},
    {"find", &RunFind, /*admin_only=*/false, kInTransaction},
    {"findAndModify", &RunFindAndModify, /*admin_only=*/false, kInTransaction},
    {"findandmodify", &RunFindAndModify, /*admin_only=*/false, kInTransaction},
    {"getLog", &RunGetLog, /*admin_only=*/true},
    {"getMore", &RunGetMore, /*admin_only=*/false, kInTransaction},
    {"getParameter", &RunGetParameter, /*admin_only=*/true},
    {"hello", &RunHello, kNotAdminOnly, !kInTransaction, kWithoutAuth},
    {"hostInfo", &RunHostInfo},
    {"insert", &RunInsert, /*admin_only=*/false, kInTransaction},
    {"isMaster", &RunIsMaster, kNotAdminOnly, !kInTransaction, kWithoutAuth},
    {"ismaster", &RunIsMaster, kNotAdminOnly, !kInTransaction, kWithoutAuth},
    {"killCursors", &RunKillCursors, /*admin_only=*/false, kInTransaction},
    {"killOp", &RunKillOp, /*admin_only=*/true},
    {"listCollections", &RunListCollections},
    {"listCommands", &RunListCommands, kNotAdminOnly, !kInTransaction, kWithoutAuth},
    {"listDatabases", &RunListDatabases, /*admin_only=*/true},
    {"listIndexes", &RunListIndexes},
    {"ping", &RunPing, kNotAdminOnly, !kInTransaction, kWithoutAuth},
    {"profile", &RunProfile},
    {"renameCollection", &RunRenameCollection, /*admin_only=*/true},
    {"serverStatus", &RunServerStatus},
    {"setParameter", &RunSetParameter, /*admin_only=*/true},
    {"top", &RunTop, /*admin_only=*/true},
    {"update", &RunUpdate, /*admin_only=*/false, kInTransaction},
    {"updateSearchIndex", &RunUpdateSearchIndex},
    {"validate", &RunValidate},
};

constexpr bool Sorted() {
  for (size_t i = 1; i < std::size(kCommands); ++i) {
    if (!(kCommands[i - 1].name < kCommands[i].name)) return false;
  }
  return true;
}
static_assert(Sorted(), "kCommands must be sorted by name");

const CommandDefinition* FindBuiltin(std::string_view name) {
  auto it =
      std::lower_bound(std::begin(kCommands), std::end(kCommands), name,
                       [](const CommandDefinition& c, std::string_view n) { return c.name < n; });
  return it != std::end(kCommands) && it->name == name ? it : nullptr;
}

// MongoDB's error reply: {ok: 0, errmsg, code, codeName, <extra fields>?, errInfo?,
// errorLabels?}.
Document ErrorReply(const Status& s) {
  BsonBuilder b;
  b.AppendDouble("ok", 0);
  b.AppendString("errmsg", s.message());
  b.AppendInt32("code", static_cast<int32_t>(s.code()));
  b.AppendString("codeName", s.code_name());
  AppendErrorDetails(s, &b);
  // MongoDB's NonResumableChangeStreamError category: a driver must not
  // resume a change stream after these (the change streams spec).
  const bool non_resumable = s.code() == ErrorCode::kChangeStreamFatalError ||
                             s.code() == ErrorCode::kChangeStreamHistoryLost;
  if (!s.error_labels().empty() || non_resumable) {
    b.OpenArray("errorLabels");
    for (const std::string& label : s.error_labels()) b.AppendString("", label);
    if (non_resumable) b.AppendString("", "NonResumableChangeStreamError");
    b.Close();
  }
  return std::move(b).Build();
}

// The session fields of a command, checked for type.
Status ReadSessionFields(DocumentView cmd, std::optional<std::string>* lsid, TransactionFields* t) {
  for (Element e : cmd) {
    if (e.key() == "lsid") {
      std::string key;
      ROCKDOC_RETURN_IF_ERROR(SessionKey(e, &key));
      *lsid = std::move(key);
    } else if (e.key() == "txnNumber") {
      ROCKDOC_ASSIGN_OR_RETURN(t->txn_number, IntegerField(e));
    } else if (e.key() == "autocommit") {
      if (!e.IsBool()) return WrongType(e, "type 'bool'");
      t->autocommit = e.Bool();
    } else if (e.key() == "startTransaction") {
      if (!e.IsBool()) return WrongType(e, "type 'bool'");
      t->start_transaction = e.Bool();
    }
  }
  if (t->start_transaction && t->autocommit != std::optional<bool>(false)) {
    return Status(ErrorCode::kInvalidOptions, "startTransaction needs autocommit: false");
  }
  return Status::OK();
}

// The readConcern level a command gives ("" when none; a malformed
// readConcern is the command's field error, reported by its table).
std::string_view ReadConcernLevel(DocumentView cmd) {
  Element rc = cmd.Get("readConcern");
  if (!rc.IsDocument()) return {};
  Element level = rc.Document().Get("level");
  if (!level.ok()) return "local";
  return level.IsString() ? level.String() : std::string_view();
}

// The commands that read with readConcern "snapshot" outside a transaction
// (MongoDB 5.0+: find, aggregate, distinct; count too here, which the
// shell's countDocuments runs until aggregation exists).
bool ReadsSnapshots(std::string_view command) {
  return command == "find" || command == "count" || command == "distinct" ||
         command == "aggregate";
}

// MongoDB's rules for concerns in a transaction: the first command may give
// a readConcern (local, majority or snapshot: every transaction reads one
// snapshot), the others none; only commitTransaction and abortTransaction
// take a writeConcern. Outside a transaction, "snapshot" is for reads.
Status CheckConcerns(std::string_view command, DocumentView cmd, const TransactionFields& txn,
                     std::string_view level) {
  const bool in_txn = txn.autocommit.has_value();
  const bool ends = command == "commitTransaction" || command == "abortTransaction";
  if (!in_txn) {
    if (level == "snapshot" && !ReadsSnapshots(command)) {
      return Status(ErrorCode::kInvalidOptions,
                    "Command " + std::string(command) +
                        " does not support readConcern level 'snapshot' outside a transaction");
    }
    return Status::OK();
  }
  if (!level.empty()) {
    if (!txn.start_transaction) {
      return Status(ErrorCode::kInvalidOptions,
                    "Only the first command in a transaction may specify a readConcern");
    }
    if (level != "local" && level != "majority" && level != "snapshot") {
      return Status(ErrorCode::kInvalidOptions,
                    "The readConcern level must be either 'local' (default), 'majority' or "
                    "'snapshot' in a transaction, not '" +
                        std::string(level) + "'");
    }
  }
  if (!ends && cmd.Get("writeConcern").ok()) {
    return Status(ErrorCode::kInvalidOptions,
                  "Cannot set write concern after starting a transaction: " +
                      std::string(command) + " may not specify a writeConcern in a transaction");
  }
  return Status::OK();
}

// The commands of MongoDB's Stable API Version 1 (7.0), sorted.
constexpr std::string_view kApiVersion1Commands[] = {
    "abortTransaction", "aggregate",       "authenticate",    "collMod",       "commitTransaction",
    "count",            "create",          "createIndexes",   "delete",        "drop",
    "dropDatabase",     "dropIndexes",     "endSessions",     "explain",       "find",
    "findAndModify",    "getMore",         "hello",           "insert",        "killCursors",
    "listCollections",  "listDatabases",   "listIndexes",     "ping",          "refreshSessions",
    "saslContinue",     "saslStart",       "update"};

// Aggregation stages outside API Version 1 (MongoDB's kNeverInVersion1),
// sorted: refused in an aggregate with apiStrict: true.
constexpr std::string_view kStagesOutsideApiVersion1[] = {
    "$currentOp",    "$indexStats",     "$listLocalSessions", "$listSessions",
    "$planCacheStats", "$queryStats"};

constexpr bool SortedNames() {
  for (size_t i = 1; i < std::size(kStagesOutsideApiVersion1); ++i) {
    if (!(kStagesOutsideApiVersion1[i - 1] < kStagesOutsideApiVersion1[i])) return false;
  }
  for (size_t i = 1; i < std::size(kApiVersion1Commands); ++i) {
    if (!(kApiVersion1Commands[i - 1] < kApiVersion1Commands[i])) return false;
  }
  return true;
}
static_assert(SortedNames(), "the Stable API name tables must be sorted");

}  // namespace

Status CheckApiParameters(std::string_view name, DocumentView cmd) {
  const Element version = cmd.Get("apiVersion");
  const Element strict = cmd.Get("apiStrict");
  if (!version.ok()) {
    if (strict.ok()) {
      return Status(static_cast<ErrorCode>(4886600),
                    "Provided apiStrict without passing apiVersion");
    }
    if (cmd.Get("apiDeprecationErrors").ok()) {
      return Status(static_cast<ErrorCode>(4886601),
                    "Provided apiDeprecationErrors without passing apiVersion");
    }
    return Status::OK();
  }
  ROCKDOC_RETURN_IF_ERROR(QualifyFieldError(name, CheckApiVersion(version)));
  if (!strict.ok()) return Status::OK();
  StatusOr<bool> is_strict = BoolField(strict);
  ROCKDOC_RETURN_IF_ERROR(QualifyFieldError(name, is_strict.status()));
  if (*is_strict && !std::binary_search(std::begin(kApiVersion1Commands),
                                        std::end(kApiVersion1Commands), name)) {
    return Status(ErrorCode::kAPIStrictError,
                  "Provided apiStrict:true, but the command " + std::string(name) +
                      " is not in API Version 1. Information on supported commands and "
                      "migrations in API Version 1 can be found at "
                      "https://dochub.mongodb.org/core/manual-versioned-api");
  }
  Element pipeline = cmd.Get("pipeline");
  if (*is_strict && name == "aggregate" && pipeline.type() == BsonType::kArray) {
    for (Element stage : pipeline.Array()) {
      if (!stage.IsDocument() || stage.Document().empty()) continue;  // the parser's error
      const std::string_view stage_name = (*stage.Document().begin()).key();
      if (std::binary_search(std::begin(kStagesOutsideApiVersion1),
                             std::end(kStagesOutsideApiVersion1), stage_name)) {
        return Status(ErrorCode::kAPIStrictError,
                      std::string(stage_name) +
                          " is not allowed with 'apiStrict: true' in API Version 1");
      }
    }
  }
  return Status::OK();
}

// What the command layer keeps for a client. Idle cursors and sessions are
// reaped on the engine's background runner, which Close stops before the
// state goes.
class CommandState : public ClientExtension {
 public:
  explicit CommandState(BackgroundRunner* runner) {
    cursors.ReapOn(runner);
    sessions.ReapOn(runner);
  }
  CursorManager cursors;
  ServerSessions sessions;

  // The command named `name`: the command layer's, or one a layer above
  // registered.
  const CommandDefinition* Find(std::string_view name) {
    if (const CommandDefinition* c = FindBuiltin(name)) return c;
    MutexLock lock(&registered_mu);
    return FindRegistered(name);
  }
  const CommandDefinition* FindRegistered(std::string_view name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(registered_mu) {
    for (std::span<const CommandDefinition> table : registered) {
      for (const CommandDefinition& c : table) {
        if (c.name == name) return &c;
      }
    }
    return nullptr;
  }
  // Every command the client knows, sorted by name.
  std::vector<const CommandDefinition*> All() {
    std::vector<const CommandDefinition*> all;
    for (const CommandDefinition& c : kCommands) all.push_back(&c);
    {
      MutexLock lock(&registered_mu);
      for (std::span<const CommandDefinition> table : registered) {
        for (const CommandDefinition& c : table) all.push_back(&c);
      }
    }
    std::sort(all.begin(), all.end(),
              [](const CommandDefinition* a, const CommandDefinition* b) { return a->name < b->name; });
    return all;
  }

  Mutex registered_mu;
  // The tables RegisterCommands added (static tables of the layers above).
  std::vector<std::span<const CommandDefinition>> registered ABSL_GUARDED_BY(registered_mu);
};

namespace {

// The command layer's state of `client`, made on first use.
CommandState* StateOf(const Client& client) {
  ClientRep& rep = ClientAccess::RepOf(client);
  std::call_once(rep.commands_once, [&rep, &client] {
    rep.commands = std::make_unique<CommandState>(&ClientAccess::EngineOf(client)->runner());
  });
  return static_cast<CommandState*>(rep.commands.get());
}

Status Dispatch(const Client& client, CommandState* state, std::string_view db, DocumentView cmd,
                const CommandDefinition& definition, CommandConnection* connection,
                Operation* operation, BsonBuilder* reply);

Status RunOne(const Client& client, CommandState* state, std::string_view db, DocumentView cmd,
              size_t max_size, CommandConnection* connection, BsonBuilder* reply) {
  BsonValidationOptions limits;
  limits.max_size = max_size;
  ROCKDOC_RETURN_IF_ERROR(ValidateBson(cmd.bytes(), limits));
  const std::string_view name = cmd.empty() ? std::string_view() : (*cmd.begin()).key();
  const CommandDefinition* command = cmd.empty() ? nullptr : state->Find(name);
  // With access control, a connection nobody has authenticated on runs only
  // the commands marked for it; any other name, known or not, is refused
  // before anything else is checked.
  if (connection != nullptr && !connection->authenticated() &&
      (command == nullptr || !command->without_auth)) {
    return RequiresAuthentication(name);
  }
  if (cmd.empty()) {
    return Status(ErrorCode::kFailedToParse, "no such command: ''");  // MongoDB's wording
  }
  if (command == nullptr) {
    return Status(ErrorCode::kCommandNotFound, "no such command: '" + std::string(name) + "'");
  }
  ROCKDOC_RETURN_IF_ERROR(CheckApiParameters(name, cmd));
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
  RecordedCommand recorded(client, connection, db, name, cmd);
  Status s = Dispatch(client, state, db, cmd, *command, connection, recorded.operation(), reply);
  // writeConcern j: true: the reply waits for the write-ahead log to reach
  // the disk, whatever the command did (a failed ordered insert keeps the
  // documents before the failure). A sync that fails is the reply's
  // writeConcernError, as mongod reports a concern it could not meet.
  if (WantsJournal(cmd)) {
    Status synced = SyncWriteAheadLog(client);
    if (!synced.ok() && s.ok()) {
      reply->OpenDocument("writeConcernError");
      reply->AppendInt32("code", static_cast<int32_t>(synced.code()));
      reply->AppendString("codeName", synced.code_name());
      reply->AppendString("errmsg", synced.message());
      reply->Close();
    }
  }
  return s;
}

// Runs a command RunOne checked, with its session when it names one.
Status Dispatch(const Client& client, CommandState* state, std::string_view db, DocumentView cmd,
                const CommandDefinition& definition, CommandConnection* connection,
                Operation* operation, BsonBuilder* reply) {
  const CommandDefinition* command = &definition;
  const std::string_view name = command->name;
  CommandContext ctx;
  ctx.client = &client;
  ctx.connection = connection;
  ctx.db = std::string(db);
  ctx.cursors = &state->cursors;
  ctx.sessions = &state->sessions;
  ctx.operation = operation;
  std::optional<std::string> lsid;
  TransactionFields txn;
  // A connection nobody has authenticated on runs its commands without
  // their session fields, as mongod ignores them when nobody is logged in:
  // no server state before login.
  if (connection == nullptr || connection->authenticated()) {
    ROCKDOC_RETURN_IF_ERROR(QualifyFieldError(name, ReadSessionFields(cmd, &lsid, &txn)));
  }
  const std::string_view level = ReadConcernLevel(cmd);
  if (!lsid) {
    if (txn.txn_number || txn.autocommit || txn.start_transaction) {
      return Status(ErrorCode::kInvalidOptions,
                    "Transaction fields (txnNumber, autocommit, startTransaction) need an lsid");
    }
    // Without a session a snapshot read is one command's (and its
    // cursor's), which reads one snapshot anyway.
    ROCKDOC_RETURN_IF_ERROR(CheckConcerns(name, cmd, txn, level));
    return command->run(ctx, cmd, reply);
  }
  ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<ServerSession> session,
                           state->sessions.Get(client, *lsid));
  std::lock_guard<std::mutex> running(session->running);
  if (!session->session) {
    return Status(ErrorCode::kNoSuchTransaction, "the session has ended");
  }
  ROCKDOC_RETURN_IF_ERROR(CheckConcerns(name, cmd, txn, level));
  ROCKDOC_RETURN_IF_ERROR(EnterTransaction(session.get(), name, txn));
  // After the transaction is entered (a refused first command still starts
  // it, so the driver's next command continues it), before the command runs.
  if (txn.autocommit && !command->in_transaction) {
    return Status(ErrorCode::kOperationNotSupportedInTransaction,
                  "Cannot run '" + std::string(name) + "' in a multi-document transaction.");
  }
  ctx.session = &*session->session;
  ctx.server_session = session.get();
  if (txn.txn_number && !txn.autocommit) {
    return RunRetryableWrite(ctx, *command, cmd, session.get(), reply);
  }
  if (level == "snapshot" && !txn.autocommit) {
    // The session's snapshot reads all see the point of its first one.
    if (!session->snapshot) {
      SessionOptions options;
      options.snapshot = true;
      ROCKDOC_ASSIGN_OR_RETURN(Session snapshot, client.StartSession(options));
      session->snapshot.emplace(std::move(snapshot));
    }
    ctx.session = &*session->snapshot;
  }
  return command->run(ctx, cmd, reply);
}

}  // namespace

Status SyncWriteAheadLog(const Client& client) { return ClientAccess::EngineOf(client)->SyncWal(); }

const CommandDefinition* FindCommand(const Client& client, std::string_view name) {
  return StateOf(client)->Find(name);
}

Status RegisterCommands(const Client& client, std::span<const CommandDefinition> commands) {
  CommandState* state = StateOf(client);
  MutexLock lock(&state->registered_mu);
  for (std::span<const CommandDefinition> table : state->registered) {
    if (table.data() == commands.data() && table.size() == commands.size()) return Status::OK();
  }
  for (size_t i = 0; i < commands.size(); ++i) {
    const std::string_view name = commands[i].name;
    bool known = FindBuiltin(name) != nullptr || state->FindRegistered(name) != nullptr;
    for (size_t j = 0; j < i; ++j) known = known || commands[j].name == name;
    if (known) {
      return Status(ErrorCode::kBadValue,
                    "cannot register the command '" + std::string(name) + "': it exists");
    }
  }
  state->registered.push_back(commands);
  return Status::OK();
}

Status RequiresAuthentication(std::string_view name) {
  return Status(ErrorCode::kUnauthorized,
                "Command " + std::string(name) + " requires authentication");
}

namespace {

// listCommands: every command the client knows (its own and those layers
// above registered), by name: {commands: {<name>: {adminOnly, requiresAuth,
// secondaryOk, apiVersions, deprecatedApiVersions}}}, as mongod's without
// its help texts.
Status RunListCommands(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ROCKDOC_RETURN_IF_ERROR(DecodeNoFields("listCommands", cmd));
  reply->OpenDocument("commands");
  for (const CommandDefinition* c : StateOf(*ctx.client)->All()) {
    reply->OpenDocument(c->name);
    reply->AppendBool("adminOnly", c->admin_only);
    reply->AppendBool("requiresAuth", !c->without_auth);
    reply->AppendBool("secondaryOk", true);  // one node: every command runs on it
    reply->OpenArray("apiVersions");
    if (std::binary_search(std::begin(kApiVersion1Commands), std::end(kApiVersion1Commands),
                           c->name)) {
      reply->AppendString("", "1");
    }
    reply->Close();
    reply->OpenArray("deprecatedApiVersions");
    reply->Close();
    reply->Close();
  }
  reply->Close();
  return Status::OK();
}

}  // namespace

}  // namespace internal

Document Client::RunCommand(std::string_view db, DocumentView command) const {
  return internal::RunCommandWithMaxSize(*this, db, command, internal::kMaxCommandSize);
}

namespace internal {

Document RunCommandWithMaxSize(const Client& client, std::string_view db, DocumentView command,
                               size_t max_size, CommandConnection* connection) {
  BsonBuilder reply;
  Status s = RunOne(client, StateOf(client), db, command, max_size, connection, &reply);
  if (!s.ok()) return ErrorReply(s);
  reply.AppendDouble("ok", 1);
  return std::move(reply).Build();
}

void StopCursorWaits(const Client& client) { StateOf(client)->cursors.StopWaits(); }

}  // namespace internal

}  // namespace rockdoc

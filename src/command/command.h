// command/command.h: MongoDB's database commands over the library's API
// (Client::RunCommand): BSON in, BSON out, as under every MongoDB driver,
// shell and tool.
//
// A command is a handler that decodes its document through a table of the
// fields it knows (common/option_table.h: an unknown field is an error, a
// known one rockdoc does not implement fails with NotImplemented; nothing
// is accepted and ignored) and appends its reply's fields; the dispatcher
// (run_command.cc) adds `ok`, and turns a failed Status into MongoDB's
// error reply {ok: 0, errmsg, code, codeName, errorLabels?}.
//
// Field errors read as MongoDB's: "BSON field 'find.limit' is the wrong
// type 'string', expected types '[long, int, decimal, double]'" (14),
// "BSON field 'find.bogus' is an unknown field." (40415). Decoders write
// "BSON field '<name>' ..." and DecodeCommand qualifies the name with the
// command's.
//
// Thread safety: handlers are stateless; the cursor manager is
// thread-safe; a CommandContext belongs to one call.
#ifndef ROCKDOC_COMMAND_COMMAND_H_
#define ROCKDOC_COMMAND_COMMAND_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/option_table.h"
#include "query/match_expression.h"
#include "bson/append_number.h"
#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::internal {

class CursorManager;
class ServerSessions;
struct ServerSession;

// The connection a command came on, when a server above the engine runs it
// (wire/: rockdoc-serve): what the dispatcher and the commands that server
// registered (RegisterCommands) need to know of it. The server implements
// it; the command layer never learns its type. Null when a command runs
// in-process (Client::RunCommand).
class CommandConnection {
 public:
  virtual ~CommandConnection() = default;
  // Whether the connection may run commands that need a user: false only
  // with access control and nobody authenticated. The dispatcher then
  // refuses every command but those marked `without_auth` with
  // Unauthorized (13) "Command <name> requires authentication", and runs
  // those without their session fields (no server state before login).
  virtual bool authenticated() const = 0;
  // hello's connectionId (drivers report it in their command events).
  virtual int32_t id() const = 0;
  // Appends what the connection adds to a hello's reply (after the
  // command layer's fields): saslSupportedMechs for a user it knows.
  virtual void AppendHelloFields(DocumentView hello, BsonBuilder* reply) const = 0;
  // The peer's address, "host:port" (currentOp's `client`); "" unknown.
  virtual std::string remote() const { return {}; }
  // The appName the driver's handshake gave (currentOp's `appName`), or "".
  virtual std::string app_name() const { return {}; }
  // The authenticated user as {user, db} ("" when nobody is):
  // connectionStatus' authInfo.
  virtual std::string user() const { return {}; }
  virtual std::string user_db() const { return {}; }
};

struct Operation;
class ServerActivity;

// The client's operations in flight, counters and recent log lines
// (stats/server_activity.h), which the command layer records and a server
// above it feeds with its connections' and network figures.
ServerActivity& ActivityOf(const Client& client);

// What one command call runs against.
struct CommandContext {
  const Client* client = nullptr;
  CommandConnection* connection = nullptr;  // the command's, or null in-process
  std::string db;                      // the database the command names
  CursorManager* cursors = nullptr;    // the client's command cursors
  ServerSessions* sessions = nullptr;  // the client's logical sessions
  Session* session = nullptr;          // the command's (lsid), if any
  ServerSession* server_session = nullptr;  // and its server side
  // The command as an operation in flight (currentOp, killOp): a command
  // that waits gives it a waker (Operation::SetWaker).
  Operation* operation = nullptr;
  // The database, through the command's session when it has one (so that
  // a transaction's commands run in it).
  Database database() const {
    return session != nullptr ? session->GetDatabase(db) : client->GetDatabase(db);
  }
};

// Appends the reply's fields (not `ok`) to the open document `reply`.
using CommandHandler = Status (*)(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);

struct CommandDefinition {
  std::string_view name;
  CommandHandler run;
  // Runs only against the admin database (listDatabases, ...): elsewhere
  // Unauthorized (13) "<name> may only be run against the admin database."
  bool admin_only = false;
  // Allowed in a multi-document transaction (MongoDB's list: the CRUD
  // commands, getMore, killCursors, create, createIndexes and the two that
  // end one). Any other is refused inside one, before it runs, with
  // OperationNotSupportedInTransaction (263) "Cannot run '<name>' in a
  // multi-document transaction.": the one check, whether or not the
  // command's own path would see the session.
  bool in_transaction = false;
  // Runs on a connection nobody has authenticated on (CommandConnection::
  // authenticated): the handshake (hello, isMaster), ping, buildInfo,
  // listCommands and the authentication conversation, as mongod's.
  bool without_auth = false;
};

// Adds a layer's commands to the client's table, beside the command layer's
// own: rockdoc-serve's (wire/: saslStart, createUser, getCmdLineOpts, ...)
// go through the one dispatcher, its checks and errors, and listCommands
// lists them. `commands` must outlive the client (a static table); its
// handlers find their connection's state through CommandContext::connection.
// Registering the same table again changes nothing; a name the client
// already knows from another table is AlreadyInitialized (23), and the
// table is not added. Thread-safe.
Status RegisterCommands(const Client& client, std::span<const CommandDefinition> commands);

// The command named `name` (case-sensitive, as MongoDB's) the client knows
// (the command layer's or a registered one), or null.
const CommandDefinition* FindCommand(const Client& client, std::string_view name);

// A command may exceed the 16 MiB of a document by MongoDB's 16 KiB
// (BSONObjMaxInternalSize), so that one insert can carry a document of the
// largest size.
inline constexpr size_t kMaxCommandSize = kMaxBsonObjectInternalSize;

// Client::RunCommand with another limit on the command's size: the wire
// layer's, whose OP_MSG document sequences (each document at most 16 MiB,
// validated there) are folded into the command as arrays and may take it
// to the 48,000,000 bytes of a message, as a MongoDB server accepts them.
// `connection`: the one it came on (null: in-process), for the dispatcher's
// access check and the handlers that need its state.
Document RunCommandWithMaxSize(const Client& client, std::string_view db, DocumentView command,
                               size_t max_size, CommandConnection* connection = nullptr);

// Ends every awaitData getMore waiting for writes on `client`'s cursors,
// and the waits of later ones (rockdoc-serve's shutdown: each connection
// finishes the request it runs, which must not wait for data meanwhile).
void StopCursorWaits(const Client& client);

// The Stable API parameters of a command named `name` (MongoDB's
// initializeAPIParameters): apiStrict or apiDeprecationErrors without
// apiVersion fail with 4886600 / 4886601; apiVersion must be "1" (322);
// with apiStrict: true, a command outside API Version 1 fails with
// APIStrictError (323) "Provided apiStrict:true, but the command <name> is
// not in API Version 1. ...", and an aggregate with a stage outside it
// ($indexStats, $queryStats, ...) too. The dispatcher checks every command
// with it, registered ones included.
Status CheckApiParameters(std::string_view name, DocumentView cmd);

// ---- Decoding a command's fields ----

// TypeMismatch (14): "BSON field '<key>' is the wrong type '<type>',
// expected type[s] '<expected>'" (DecodeCommand adds the command's name).
Status WrongType(const Element& e, std::string_view expected);

// The value of an integer field: a number with an exact int64 value.
// TypeMismatch otherwise; BadValue for a fraction.
StatusOr<int64_t> IntegerField(const Element& e);
// A bool field: bool or number (MongoDB's IDL "safeBool").
StatusOr<bool> BoolField(const Element& e);

// Decodes `cmd` (whose first field is the command's name) through `table`.
// `cmd` is valid BSON (RunCommand validated the whole command).
template <typename O, size_t N>
Status DecodeCommand(std::string_view command, DocumentView cmd, const OptionField<O> (&table)[N],
                     O* out);

// Rows every command's table holds (the generic arguments of MongoDB's
// commands): $db (the dispatcher checks it), comment, $readPreference (one
// node serves every mode), apiVersion/apiStrict/apiDeprecationErrors
// (version "1", the only one), readConcern and writeConcern (the levels a
// single node meets; others NotImplemented); and the session fields (lsid,
// txnNumber, autocommit, startTransaction), which the dispatcher applies
// (command/server_sessions.h). maxTimeMS is a row of the commands that
// have a time limit, and an unknown field of the others.
Status CheckReadConcern(const Element& e);
Status CheckWriteConcern(const Element& e);
// Whether the command's writeConcern asks for j: true (or fsync: true): its
// writes are synced to the write-ahead log before it is answered.
bool WantsJournal(DocumentView cmd);
// Whether a writeConcern document asks for j: true (or fsync: true).
bool JournalRequested(const Element& write_concern);
// Fsyncs the client's write-ahead log: every write committed so far
// survives a power loss (rockdoc-serve's journal commit interval).
Status SyncWriteAheadLog(const Client& client);
Status CheckApiVersion(const Element& e);
// find's allowDiskUse: false is what rockdoc does (a blocking sort past
// 100 MB fails with 292); true, spilling a find's sort, is NotImplemented
// (an aggregate's $sort and $group do spill).
Status CheckAllowDiskUse(const Element& e);
template <typename O>
Status Accept(const Element&, O*) {
  return Status::OK();
}
template <typename O>
Status ReadConcernRow(const Element& e, O*) {
  return CheckReadConcern(e);
}
template <typename O>
Status WriteConcernRow(const Element& e, O*) {
  return CheckWriteConcern(e);
}
template <typename O>
Status ApiVersionRow(const Element& e, O*) {
  return CheckApiVersion(e);
}
template <typename O>
Status ApiBoolRow(const Element& e, O*) {
  return BoolField(e).status();
}
// maxTimeMS as a generic argument (MongoDB takes it on every command, and
// drivers with timeoutMS send it everywhere): checked for type and range.
// The commands that can run long have a row of their own that applies it
// (find, count, distinct, insert, update, delete, findAndModify, aggregate,
// createIndexes); the others are one short step each (catalog and server
// commands), which finish before any limit a client would set.
Status CheckMaxTimeMSField(const Element& e);
template <typename O>
Status MaxTimeRow(const Element& e, O*) {
  return CheckMaxTimeMSField(e);
}
#define ROCKDOC_GENERIC_COMMAND_ROWS(O)                                            \
  {"$db", &Accept<O>}, {"comment", &Accept<O>}, {"$readPreference", &Accept<O>},   \
      {"apiVersion", &ApiVersionRow<O>}, {"apiStrict", &ApiBoolRow<O>},            \
      {"apiDeprecationErrors", &ApiBoolRow<O>}, {"$clusterTime", &Accept<O>},      \
      {"readConcern", &ReadConcernRow<O>}, {"writeConcern", &WriteConcernRow<O>},  \
      {"lsid", &Accept<O>}, {"txnNumber", &Accept<O>}, {"autocommit", &Accept<O>}, \
      {"startTransaction", &Accept<O>}, {"maxTimeMS", &MaxTimeRow<O>},

// Decodes a command that has no fields of its own (top, listCommands,
// hostInfo, getCmdLineOpts, ...): its first field (the command's name, any
// value) and the generic rows; any other field is 40415, as DecodeCommand.
Status DecodeNoFields(std::string_view command, DocumentView cmd);
// Whether `key` is one of the generic fields every command takes (the rows
// of ROCKDOC_GENERIC_COMMAND_ROWS): the commands whose other fields are
// names of their own (serverStatus' sections, setParameter's parameter,
// currentOp's filter) tell them apart with it.
bool IsGenericCommandField(std::string_view key);

// Appends an error's details beside its code and message, as mongod's
// error replies and write errors carry them: its extra fields
// (Status::extra_info: a DuplicateKey's keyPattern and keyValue) at the top
// level, then `errInfo` (a DocumentValidationFailure's) when it has one.
void AppendErrorDetails(const Status& s, BsonBuilder* b);

// Unauthorized (13) "Command <name> requires authentication": a command a
// connection nobody has authenticated on may not run.
Status RequiresAuthentication(std::string_view name);

// FailedToParse (9) "BSON field '<path>' is missing but a required field",
// MongoDB's IDL error for a required field that is absent.
inline Status MissingField(std::string_view path) {
  return Status(ErrorCode::kFailedToParse,
                "BSON field '" + std::string(path) + "' is missing but a required field");
}


// Typed rows storing into a member.
template <typename O, std::string O::*M>
Status StringRow(const Element& e, O* o) {
  if (!e.IsString()) return WrongType(e, "type 'string'");
  o->*M = std::string(e.String());
  return Status::OK();
}
template <typename O, Document O::*M>
Status DocumentRow(const Element& e, O* o) {
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  o->*M = Document::AdoptValidated(std::string(e.Document().bytes()));
  return Status::OK();
}
// A `collation` field: a document, kept for the operation to decode
// (query/collator.h checks its fields when the operation starts).
// The collation row of a command whose options struct is `Args::options`.
template <typename Args>
Status CollationRow(const Element& e, Args* o) {
  if (!e.IsDocument()) return WrongType(e, "type 'object'");
  o->options.collation = Document::AdoptValidated(std::string(e.Document().bytes()));
  return Status::OK();
}
template <typename O, int64_t O::*M>
Status IntegerRow(const Element& e, O* o) {
  ROCKDOC_ASSIGN_OR_RETURN(o->*M, IntegerField(e));
  return Status::OK();
}
template <typename O, bool O::*M>
Status BoolRow(const Element& e, O* o) {
  ROCKDOC_ASSIGN_OR_RETURN(o->*M, BoolField(e));
  return Status::OK();
}

// A list command's `filter` (listCollections, listDatabases), matched
// against the documents it lists: null when empty.
StatusOr<std::unique_ptr<MatchExpression>> ListFilter(const Document& filter);

// The collection a command's first field names: a non-empty string.
// InvalidNamespace (73) for an empty or invalid one.
StatusOr<std::string> CollectionName(std::string_view command, const Element& e);

// ---- Implementation ----

Status QualifyFieldError(std::string_view command, Status s);

template <typename O, size_t N>
Status DecodeCommand(std::string_view command, DocumentView cmd, const OptionField<O> (&table)[N],
                     O* out) {
  Status s = DecodeValidatedOptions(
      cmd, table, out,
      [&](std::string_view name) {
        return Status(ErrorCode::kUnknownBsonField, "BSON field '" + std::string(command) + "." +
                                                        std::string(name) +
                                                        "' is an unknown field.");
      },
      [&](std::string_view name) {
        return Status(ErrorCode::kNotImplemented, "BSON field '" + std::string(command) + "." +
                                                      std::string(name) +
                                                      "' is not supported by rockdoc");
      });
  return QualifyFieldError(command, std::move(s));
}

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMAND_COMMAND_H_

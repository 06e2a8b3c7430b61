#include "wire/service.h"

#include <cstdio>
#include <algorithm>

#include "command/command.h"
#include "common/logging.h"

namespace rockdoc::wire {

namespace {

Response Close(std::string_view reason) {
  Response r;
  r.close = true;
  r.reason = std::string(reason);
  return r;
}

bool IsOk(const Document& reply) {
  Element ok = reply.Get("ok");
  return ok.IsNumber() && ok.NumberAsDouble() == 1;
}

bool IsHello(std::string_view name) {
  return name == "hello" || name == "isMaster" || name == "ismaster";
}

// The command without the awaitable hello's fields.
Document WithoutFields(DocumentView cmd, std::string_view a, std::string_view b) {
  BsonBuilder out;
  for (Element e : cmd) {
    if (e.key() != a && e.key() != b) out.AppendElement(e);
  }
  return std::move(out).Build();
}

}  // namespace

Document ErrorDocument(const Status& s) {
  BsonBuilder b;
  b.AppendDouble("ok", 0);
  b.AppendString("errmsg", s.message());
  b.AppendInt32("code", static_cast<int32_t>(s.code()));
  b.AppendString("codeName", s.code_name());
  return std::move(b).Build();
}

Response Service::Handle(std::string_view message, ConnectionState* conn) {
  StatusOr<MessageHeader> header = ParseHeader(message);
  if (!header.ok()) return Close(header.status().message());
  switch (static_cast<OpCode>(header->op_code)) {
    case OpCode::kMsg:
      return HandleOpMsg(message, *header, conn);
    case OpCode::kQuery:
      return HandleOpQuery(message, *header, conn);
    case OpCode::kCompressed:
      return Close("OP_COMPRESSED is not supported (rockdoc offers no compressor in hello)");
    case OpCode::kInsert:
    case OpCode::kUpdate:
    case OpCode::kDelete:
    case OpCode::kGetMore:
    case OpCode::kKillCursors:
      return Close("legacy opcode " + std::to_string(header->op_code) +
                   " is not supported (removed in MongoDB 6.0; use OP_MSG)");
    default:
      return Close("unknown opcode " + std::to_string(header->op_code));
  }
}

Response Service::HandleOpMsg(std::string_view message, const MessageHeader& header,
                              ConnectionState* conn) {
  ExhaustState* exhaust = &conn->exhaust;
  StatusOr<OpMsg> msg = ParseOpMsg(message);
  // Whether the client wants a reply, read from the flags even when the
  // rest fails to parse.
  uint32_t raw_flags = 0;
  if (message.size() >= kHeaderSize + 4) {
    raw_flags = static_cast<uint32_t>(static_cast<uint8_t>(message[16])) |
                static_cast<uint32_t>(static_cast<uint8_t>(message[17])) << 8;
  }
  const bool more_to_come = raw_flags & kMoreToCome;
  Response r;
  if (!msg.ok()) {
    if (more_to_come) return Close(msg.status().message());
    r.reply = BuildOpMsg(NextRequestId(), header.request_id, 0, ErrorDocument(msg.status()));
    return r;
  }
  const uint32_t reply_flags = msg->flags & kChecksumPresent;
  Element db = msg->body.Get("$db");
  if (!db.IsString()) {
    Status s(static_cast<ErrorCode>(40571), "OP_MSG requests require a $db argument");
    if (more_to_come) return Close(s.message());
    r.reply = BuildOpMsg(NextRequestId(), header.request_id, reply_flags, ErrorDocument(s));
    return r;
  }
  // The command: the body itself (a view of the message: no copy), or a
  // document that folds the sequences into it or drops a field.
  Document rewritten;
  DocumentView command = msg->body;
  if (!msg->sequences.empty()) {
    rewritten = FoldSequences(*msg);
    command = rewritten;
  }
  const std::string_view name = msg->body.empty() ? "" : (*msg->body.begin()).key();
  // An awaitable hello: answered as a plain one (the command layer's), after
  // a wait when the client already knows the current topology.
  Element client_version = msg->body.Get("topologyVersion");
  Element max_await = msg->body.Get("maxAwaitTimeMS");
  std::optional<int64_t> await_ms;
  if (IsHello(name) && client_version.IsDocument() && max_await.ok()) {
    int64_t ms = 0;
    if (!max_await.ExactInt64(&ms) || ms < 0) {
      Status s(ErrorCode::kBadValue, "maxAwaitTimeMS must be a non-negative integer");
      r.reply = BuildOpMsg(NextRequestId(), header.request_id, reply_flags, ErrorDocument(s));
      return r;
    }
    await_ms = ms;
    rewritten = WithoutFields(command, "topologyVersion", "maxAwaitTimeMS");
    command = rewritten;
  }
  if (more_to_come) {
    // An unacknowledged request (writeConcern w: 0, which drivers send with
    // moreToCome): the wire layer is what leaves it unacknowledged, so the
    // command runs with the default concern. It still runs to its end before
    // the connection's next message, which w: 0 allows.
    Element wc = command.Get("writeConcern");
    if (wc.IsDocument() && wc.Document().Get("w").IsNumber() &&
        wc.Document().Get("w").NumberAsDouble() == 0) {
      rewritten = WithoutFields(command, "writeConcern", "");
      command = rewritten;
    }
  }
  Document reply = Run(db.String(), command, conn);
  if (more_to_come) {
    if (!IsOk(reply)) {
      Element errmsg = reply.Get("errmsg");
      return Close("a request without reply (moreToCome) failed: " +
                   std::string(errmsg.IsString() ? errmsg.String() : ""));
    }
    return r;  // nothing to send
  }
  if (await_ms && IsOk(reply)) {
    // The topology is the server's for its whole life: when the client
    // knows this process's version, the answer can only be the same.
    Element ours = reply.Get("topologyVersion");
    const bool current = ours.IsDocument() &&
                         CompareValues(ours, client_version) == 0;
    r.delay_ms = current ? *await_ms : 0;
    if (msg->exhaust_allowed()) {
      r.exhaust = true;
      exhaust->db = std::string(db.String());
      exhaust->command = Document::AdoptValidated(std::string(command.bytes()));
      exhaust->flags = reply_flags | kMoreToCome;
      exhaust->await_ms = *await_ms;
      exhaust->last_reply_id = NextRequestId();
      r.reply = BuildOpMsg(exhaust->last_reply_id, header.request_id, exhaust->flags, reply);
      return r;
    }
  }
  r.reply = BuildOpMsg(NextRequestId(), header.request_id, reply_flags, reply);
  return r;
}

Response Service::Continue(ConnectionState* conn) {
  ExhaustState* exhaust = &conn->exhaust;
  Document reply = Run(exhaust->db, exhaust->command, conn);
  Response r;
  r.exhaust = IsOk(reply);
  r.delay_ms = exhaust->await_ms;
  const int32_t id = NextRequestId();
  // A failed one ends the stream: sent without moreToCome.
  r.reply = BuildOpMsg(id, exhaust->last_reply_id,
                       r.exhaust ? exhaust->flags : exhaust->flags & ~kMoreToCome, reply);
  exhaust->last_reply_id = id;
  return r;
}

Response Service::HandleOpQuery(std::string_view message, const MessageHeader& header,
                                ConnectionState* conn) {
  StatusOr<OpQuery> q = ParseOpQuery(message);
  Response r;
  auto failure = [&](const Status& s) {
    BsonBuilder b;
    b.AppendString("$err", s.message());
    b.AppendInt32("code", static_cast<int32_t>(s.code()));
    b.AppendString("codeName", s.code_name());
    b.AppendDouble("ok", 0);
    r.reply = BuildOpReply(NextRequestId(), header.request_id, kReplyQueryFailure,
                           std::move(b).Build());
    return r;
  };
  if (!q.ok()) return failure(q.status());
  // Legacy drivers wrap the command: {$query: {isMaster: 1}, $readPreference: ...}.
  DocumentView command = q->query;
  Element wrapped = command.Get("$query");
  if (!wrapped.ok()) wrapped = command.Get("query");
  if (wrapped.IsDocument()) command = wrapped.Document();
  const std::string_view ns = q->full_collection_name;
  constexpr std::string_view kCmd = ".$cmd";
  const std::string_view name = command.empty() ? "" : (*command.begin()).key();
  if (ns.size() <= kCmd.size() || ns.substr(ns.size() - kCmd.size()) != kCmd || !IsHello(name)) {
    return failure(Status(ErrorCode::kUnsupportedOpQueryCommand,
                          "Unsupported OP_QUERY command: " +
                              std::string(name.empty() ? ns : name) +
                              ". rockdoc answers OP_QUERY only for the hello/isMaster handshake; "
                              "the client driver may require an upgrade."));
  }
  const std::string_view db = ns.substr(0, ns.size() - kCmd.size());
  Document reply = Run(db, command, conn);
  r.reply = BuildOpReply(NextRequestId(), header.request_id, 0, reply);
  return r;
}

// A connection as the command layer sees it (CommandConnection) while one
// of its commands runs, and as the wire's handlers find it there.
class ServiceConnection final : public internal::CommandConnection {
 public:
  ServiceConnection(Service* service, ConnectionState* conn) : service_(service), conn_(conn) {}

  bool authenticated() const override {
    return !service_->options_.auth || !conn_->auth.user.empty();
  }
  int32_t id() const override { return conn_->id; }
  // saslSupportedMechs: "<db>.<user>" (drivers pick their mechanism from
  // the answer; a user that does not exist gets none, as mongod).
  void AppendHelloFields(DocumentView hello, BsonBuilder* reply) const override {
    Element asked = hello.Get("saslSupportedMechs");
    if (!asked.IsString()) return;
    const std::string_view id = asked.String();
    const size_t dot = id.find('.');
    if (dot == std::string_view::npos ||
        !service_->users_.Lookup(id.substr(0, dot), id.substr(dot + 1)).has_value()) {
      return;
    }
    reply->OpenArray("saslSupportedMechs");
    reply->AppendString("", "SCRAM-SHA-256");
    reply->Close();
  }

  const UserStore& users() const { return service_->users_; }
  const ServiceOptions& options() const { return service_->options_; }
  AuthState* auth() const { return &conn_->auth; }
  bool local() const { return conn_->local; }
  internal::Mutex* first_user_mu() const { return &service_->first_user_mu_; }

 private:
  Service* const service_;
  ConnectionState* const conn_;
};

namespace {

using internal::CommandContext;

// The connection a wire command came on: IllegalOperation when it runs
// in-process (Client::RunCommand on the client a Service serves), where
// there is no connection to authenticate or describe.
StatusOr<ServiceConnection*> ConnectionOf(const CommandContext& ctx, std::string_view command) {
  auto* connection = dynamic_cast<ServiceConnection*>(ctx.connection);
  if (connection == nullptr) {
    return Status(ErrorCode::kIllegalOperation,
                  std::string(command) + " runs only on a connection to rockdoc-serve");
  }
  return connection;
}

Status RunSaslStart(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ROCKDOC_ASSIGN_OR_RETURN(ServiceConnection * c, ConnectionOf(ctx, "saslStart"));
  return c->users().SaslStart(ctx.db, cmd, c->auth(), reply);
}

Status RunSaslContinue(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ROCKDOC_ASSIGN_OR_RETURN(ServiceConnection * c, ConnectionOf(ctx, "saslContinue"));
  return c->users().SaslContinue(ctx.db, cmd, c->auth(), reply);
}

Status RunCreateUser(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ROCKDOC_ASSIGN_OR_RETURN(ServiceConnection * c, ConnectionOf(ctx, "createUser"));
  if (c->authenticated()) return c->users().CreateUser(ctx.db, cmd, reply);
  // The localhost exception: the first user, from this machine; the check
  // and the creation under one lock, so two connections cannot both create
  // a first user.
  internal::MutexLock first(c->first_user_mu());
  if (!(c->local() && c->users().Empty())) return internal::RequiresAuthentication("createUser");
  return c->users().CreateUser(ctx.db, cmd, reply);
}

Status RunDropUser(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ROCKDOC_ASSIGN_OR_RETURN(ServiceConnection * c, ConnectionOf(ctx, "dropUser"));
  return c->users().DropUser(ctx.db, cmd, reply);
}

Status RunUsersInfo(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ROCKDOC_ASSIGN_OR_RETURN(ServiceConnection * c, ConnectionOf(ctx, "usersInfo"));
  return c->users().UsersInfo(ctx.db, cmd, reply);
}

// getCmdLineOpts: {argv, parsed}, admin only, no fields of its own.
Status RunGetCmdLineOpts(CommandContext& ctx, DocumentView command, BsonBuilder* b) {
  using namespace rockdoc::internal;  // the generic rows' names
  ROCKDOC_ASSIGN_OR_RETURN(ServiceConnection * c, ConnectionOf(ctx, "getCmdLineOpts"));
  struct NoArgs {};
  static constexpr OptionField<NoArgs> kFields[] = {{"getCmdLineOpts", &Accept<NoArgs>},
                                                    ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
  NoArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("getCmdLineOpts", command, kFields, &args));
  b->OpenArray("argv");
  for (const std::string& a : c->options().argv) b->AppendString("", a);
  b->Close();
  b->AppendDocument("parsed", c->options().parsed);
  return Status::OK();
}

// The wire's commands, registered with the command layer by every Service.
// None runs in a multi-document transaction (CommandDefinition::in_transaction).
constexpr bool kAdminOnly = true;          // CommandDefinition::admin_only
constexpr bool kNotInTransaction = false;  // CommandDefinition::in_transaction
constexpr bool kWithoutAuth = true;        // CommandDefinition::without_auth
constexpr internal::CommandDefinition kWireCommands[] = {
    {"createUser", &RunCreateUser, !kAdminOnly, kNotInTransaction, kWithoutAuth},
    {"dropUser", &RunDropUser},
    {"getCmdLineOpts", &RunGetCmdLineOpts, kAdminOnly},
    {"saslContinue", &RunSaslContinue, !kAdminOnly, kNotInTransaction, kWithoutAuth},
    {"saslStart", &RunSaslStart, !kAdminOnly, kNotInTransaction, kWithoutAuth},
    {"usersInfo", &RunUsersInfo},
};

}  // namespace

Service::Service(const Client* client, ServiceOptions options)
    : client_(client), options_(std::move(options)), users_(client) {
  // Fails only for a name the client already knows from another table: a
  // programming error, caught by every test that makes a Service.
  const Status registered = internal::RegisterCommands(*client_, kWireCommands);
  ROCKDOC_CHECK(registered.ok());
}

Document Service::Run(std::string_view db, DocumentView command, ConnectionState* conn) {
  const std::string_view name = command.empty() ? "" : (*command.begin()).key();
  // The user is read again for every command, as mongod does: one dropped
  // (or dropped and created again) since the login is logged out.
  if (options_.auth && !conn->auth.user.empty() && !users_.StillAuthenticated(conn->auth)) {
    std::fprintf(stderr, "rockdoc-serve: connection %d: user %s no longer exists: logged out\n",
                 static_cast<int>(conn->id), conn->auth.user.c_str());
    conn->auth.user.clear();
    conn->auth.user_id.clear();
  }
  // The command came in a message of at most kMaxMessageSize bytes (the
  // framing's check), every document of it validated there; folding its
  // sequences into arrays adds a type byte and an index key per document
  // and may take the command past that size, which MongoDB accepts too.
  const size_t max_size = std::max<size_t>(kMaxMessageSize, command.size());
  ServiceConnection connection(this, conn);
  Document reply = internal::RunCommandWithMaxSize(*client_, db, command, max_size, &connection);
  // A reply must fit the message that carries it (the 48,000,000 bytes
  // hello advertises, header, flags, section kind and checksum included):
  // larger is an error, never a message a driver would drop the connection on.
  constexpr size_t kReplyFraming = kHeaderSize + 4 + 1 + 4;
  if (reply.size() > static_cast<size_t>(kMaxMessageSize) - kReplyFraming) {
    return ErrorDocument(Status(ErrorCode::kBSONObjectTooLarge,
                                "the reply to " + std::string(name) + " is " +
                                    std::to_string(reply.size()) +
                                    " bytes, over the maximum message size of " +
                                    std::to_string(kMaxMessageSize)));
  }
  return reply;
}

}  // namespace rockdoc::wire

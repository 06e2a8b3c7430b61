#include "wire/service.h"

#include <cstdio>
#include <algorithm>

#include "command/command.h"

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

namespace {

// What an unauthenticated connection may run: the handshake and the
// authentication conversation (and ping and buildInfo, as mongod).
bool AllowedUnauthenticated(std::string_view name) {
  return IsHello(name) || name == "saslStart" || name == "saslContinue" || name == "ping" ||
         name == "buildInfo" || name == "buildinfo";
}

Status Unauthorized(std::string_view name) {
  return Status(ErrorCode::kUnauthorized,
                "Command " + std::string(name) + " requires authentication");
}

Document WithOk(BsonBuilder* b, const Status& s) {
  if (!s.ok()) return ErrorDocument(s);
  b->AppendDouble("ok", 1);
  return std::move(*b).Build();
}

// The command without its logical session fields: an unauthenticated
// connection's (with auth) runs without a session, as mongod ignores them
// when nobody is logged in, so it creates no server state.
Document WithoutSessionFields(DocumentView cmd) {
  BsonBuilder out;
  for (Element e : cmd) {
    const std::string_view k = e.key();
    if (k != "lsid" && k != "txnNumber" && k != "autocommit" && k != "startTransaction") {
      out.AppendElement(e);
    }
  }
  return std::move(out).Build();
}

bool IsWireCommand(std::string_view name) {
  return name == "saslStart" || name == "saslContinue" || name == "createUser" ||
         name == "dropUser" || name == "usersInfo" || name == "getCmdLineOpts";
}

// getCmdLineOpts: {argv, parsed}, admin only, no fields of its own.
Status GetCmdLineOpts(std::string_view db, DocumentView command, const ServiceOptions& options,
                      BsonBuilder* b) {
  using namespace rockdoc::internal;  // the generic rows' names
  if (db != "admin") {
    return Status(ErrorCode::kUnauthorized,
                  "getCmdLineOpts may only be run against the admin database.");
  }
  struct NoArgs {};
  static constexpr OptionField<NoArgs> kFields[] = {{"getCmdLineOpts", &Accept<NoArgs>},
                                                    ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
  NoArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("getCmdLineOpts", command, kFields, &args));
  b->OpenArray("argv");
  for (const std::string& a : options.argv) b->AppendString("", a);
  b->Close();
  b->AppendDocument("parsed", options.parsed);
  return Status::OK();
}

}  // namespace

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
  const bool authenticated = !options_.auth || !conn->auth.user.empty();
  BsonBuilder b;
  // The command layer checks its own commands' Stable API fields.
  if (IsWireCommand(name)) {
    Status api = internal::CheckApiParameters(name, command);
    if (!api.ok()) return ErrorDocument(api);
  }
  if (name == "saslStart") return WithOk(&b, users_.SaslStart(db, command, &conn->auth, &b));
  if (name == "saslContinue") {
    return WithOk(&b, users_.SaslContinue(db, command, &conn->auth, &b));
  }
  if (name == "createUser") {
    if (authenticated) return WithOk(&b, users_.CreateUser(db, command, &b));
    // The localhost exception: the first user, from this machine; the check
    // and the creation under one lock.
    internal::MutexLock first(&first_user_mu_);
    if (!(conn->local && users_.Empty())) return ErrorDocument(Unauthorized(name));
    return WithOk(&b, users_.CreateUser(db, command, &b));
  }
  if (!authenticated && !AllowedUnauthenticated(name)) return ErrorDocument(Unauthorized(name));
  if (name == "getCmdLineOpts") return WithOk(&b, GetCmdLineOpts(db, command, options_, &b));
  if (name == "dropUser") return WithOk(&b, users_.DropUser(db, command, &b));
  if (name == "usersInfo") return WithOk(&b, users_.UsersInfo(db, command, &b));
  Document without_session;
  if (!authenticated) {
    without_session = WithoutSessionFields(command);
    command = without_session;
  }
  // The command came in a message of at most kMaxMessageSize bytes (the
  // framing's check), every document of it validated there; folding its
  // sequences into arrays adds a type byte and an index key per document
  // and may take the command past that size, which MongoDB accepts too.
  const size_t max_size = std::max<size_t>(kMaxMessageSize, command.size());
  Document reply = internal::RunCommandWithMaxSize(*client_, db, command, max_size);
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
  if (IsHello(name)) return HelloReply(std::move(reply), command, *conn);
  return reply;
}

Document Service::HelloReply(Document reply, DocumentView command,
                             const ConnectionState& conn) const {
  if (!IsOk(reply)) return reply;
  // saslSupportedMechs: "<db>.<user>" (drivers pick their mechanism from
  // the answer; a user that does not exist gets none, as mongod).
  Element asked = command.Get("saslSupportedMechs");
  bool mechanisms = false;
  if (asked.IsString()) {
    const std::string_view id = asked.String();
    const size_t dot = id.find('.');
    mechanisms = dot != std::string_view::npos &&
                 users_.Lookup(id.substr(0, dot), id.substr(dot + 1)).has_value();
  }
  BsonBuilder b;
  for (Element e : reply) {
    if (e.key() == "connectionId") {
      b.AppendInt32("connectionId", conn.id);
    } else if (e.key() != "ok") {
      b.AppendElement(e);
    }
  }
  if (mechanisms) {
    b.OpenArray("saslSupportedMechs");
    b.AppendString("", "SCRAM-SHA-256");
    b.Close();
  }
  b.AppendDouble("ok", 1);
  return std::move(b).Build();
}

}  // namespace rockdoc::wire

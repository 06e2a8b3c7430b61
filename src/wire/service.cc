#include "wire/service.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "api/client_internal.h"
#include "command/command.h"
#include "common/clock.h"
#include "common/endian.h"
#include "common/logging.h"
#include "storage/change_log.h"
#include "storage/engine.h"
#include "wire/crypto.h"

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

// The term of the one member's one election, for ever.
constexpr int64_t kTerm = 1;

// MongoDB's Timestamp::toString(): "Timestamp(1700000000, 3)".
std::string ShowTimestamp(uint64_t t) {
  const BsonTimestamp ts = BsonTimestamp::FromUint64(t);
  return "Timestamp(" + std::to_string(ts.t) + ", " + std::to_string(ts.i) + ")";
}

// An optime as replication writes it: {ts, t}.
void AppendOpTime(BsonBuilder* b, std::string_view key, uint64_t cluster_time) {
  b->OpenDocument(key);
  b->AppendTimestamp("ts", BsonTimestamp::FromUint64(cluster_time));
  b->AppendInt64("t", kTerm);
  b->Close();
}

// The wall-clock date of a cluster time (its seconds).
int64_t DateOf(uint64_t cluster_time) { return static_cast<int64_t>(cluster_time >> 32) * 1000; }

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
  std::string remote() const override { return conn_->remote; }
  std::string app_name() const override { return conn_->app_name; }
  // AuthState::user is "<db>.<user>".
  std::string user() const override {
    const size_t dot = conn_->auth.user.find('.');
    return dot == std::string::npos ? std::string() : conn_->auth.user.substr(dot + 1);
  }
  std::string user_db() const override {
    const size_t dot = conn_->auth.user.find('.');
    return dot == std::string::npos ? std::string() : conn_->auth.user.substr(0, dot);
  }
  // saslSupportedMechs: "<db>.<user>" (drivers pick their mechanism from
  // the answer; a user that does not exist gets none, as mongod).
  void AppendHelloFields(DocumentView hello, BsonBuilder* reply) const override {
    AppendReplicaSetHelloFields(reply);
    Element asked = hello.Get("saslSupportedMechs");
    if (!asked.IsString()) return;
    const std::string_view id = asked.String();
    const size_t dot = id.find('.');
    if (dot == std::string_view::npos) return;
    bool any = false;
    for (ScramMechanism m : {ScramMechanism::kSha1, ScramMechanism::kSha256}) {
      if (!service_->users_.Lookup(id.substr(0, dot), id.substr(dot + 1), nullptr, m)) continue;
      if (!any) reply->OpenArray("saslSupportedMechs");
      any = true;
      reply->AppendString("", ScramMechanismName(m));
    }
    if (any) reply->Close();
  }

  // A replica set member's hello (mongod's, for the primary of a set of
  // one): what drivers classify an RSPrimary by (setName, hosts, me,
  // setVersion, electionId) and lastWrite, which they use for staleness.
  void AppendReplicaSetHelloFields(BsonBuilder* reply) const {
    const ReplicaSetIdentity& rs = options().replica_set;
    if (rs.name.empty()) return;
    reply->AppendBool("secondary", false);
    reply->AppendString("setName", rs.name);
    reply->AppendInt32("setVersion", 1);
    reply->OpenArray("hosts");
    reply->AppendString("", rs.host);
    reply->Close();
    reply->AppendString("primary", rs.host);
    reply->AppendString("me", rs.host);
    // MongoDB's electionId: 0x7fffffff, then the term.
    uint8_t election[ObjectId::kSize] = {0x7f, 0xff, 0xff, 0xff};
    election[ObjectId::kSize - 1] = static_cast<uint8_t>(kTerm);
    reply->AppendObjectId("electionId", ObjectId(election));
    const uint64_t now = cluster_time();
    reply->OpenDocument("lastWrite");
    AppendOpTime(reply, "opTime", now);
    reply->AppendDateTime("lastWriteDate", DateOf(now));
    AppendOpTime(reply, "majorityOpTime", now);
    reply->AppendDateTime("majorityWriteDate", DateOf(now));
    reply->Close();
  }

  uint64_t cluster_time() const { return service_->ClusterTime(); }
  uint64_t start_cluster_time() const { return service_->start_cluster_time_; }
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
  ROCKDOC_RETURN_IF_ERROR(DecodeNoFields("getCmdLineOpts", command));
  b->OpenArray("argv");
  for (const std::string& a : c->options().argv) b->AppendString("", a);
  b->Close();
  b->AppendDocument("parsed", c->options().parsed);
  return Status::OK();
}

// ---- dbHash ----

// dbHash {dbHash: 1, collections?: [names]}: per collection, the MD5 of
// its documents' BSON bytes in natural order (the _id order of a clustered
// collection, insertion order of a capped one), as mongod's (which reads
// its _id index); the database's md5 is the MD5 of those hex digests in
// name order. Views are not hashed, nor system.profile. All read in one
// snapshot. Here, not in the engine: the MD5 is OpenSSL's, which only the
// wire library links.
Status RunDbHash(CommandContext& ctx, DocumentView command, BsonBuilder* b) {
  using namespace rockdoc::internal;  // the generic rows' names
  struct DbHashArgs {
    std::optional<std::vector<std::string>> collections;
  };
  static constexpr OptionField<DbHashArgs> kFields[] = {
      {"dbHash", &Accept<DbHashArgs>},
      {"collections",
       [](const Element& e, DbHashArgs* o) -> Status {
         if (e.type() != BsonType::kArray) return WrongType(e, "type 'array'");
         o->collections.emplace();
         for (Element name : e.Array()) {
           if (!name.IsString()) return WrongType(name, "type 'string'");
           o->collections->emplace_back(name.String());
         }
         return Status::OK();
       }},
      ROCKDOC_GENERIC_COMMAND_ROWS(DbHashArgs)};
  DbHashArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("dbHash", command, kFields, &args));
  const int64_t start = WallMillis();
  SessionOptions snapshot;
  snapshot.snapshot = true;
  ROCKDOC_ASSIGN_OR_RETURN(Session session, ctx.client->StartSession(snapshot));
  const Database db = session.GetDatabase(ctx.db);
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<Database::CollectionInfo> infos, db.ListCollections());
  std::sort(infos.begin(), infos.end(),
            [](const auto& x, const auto& y) { return x.name < y.name; });
  BsonBuilder hashes, capped, uuids;
  Md5 all;
  for (const Database::CollectionInfo& info : infos) {
    if (info.is_view || info.name == "system.profile") continue;
    if (args.collections && std::find(args.collections->begin(), args.collections->end(),
                                      info.name) == args.collections->end()) {
      continue;
    }
    FindOptions natural;
    BsonBuilder hint;
    hint.AppendInt32("$natural", 1);
    natural.hint = std::move(hint).Build();
    ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, db.GetCollection(info.name).Find({}, natural));
    Md5 md5;
    while (cursor.Next()) md5.Update(cursor.document().bytes());
    ROCKDOC_RETURN_IF_ERROR(cursor.status());
    const std::string hex = md5.HexDigest();
    all.Update(hex);
    hashes.AppendString(info.name, hex);
    const Element is_capped = info.options.Get("capped");
    if (is_capped.IsBool() && is_capped.Bool()) capped.AppendString("", info.name);
    if (!info.uuid.empty()) uuids.AppendBinary(info.name, BinarySubtype::kUuid, info.uuid);
  }
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  b->AppendString("host", host);
  b->AppendDocument("collections", std::move(hashes).Build());
  b->AppendArray("capped", std::move(capped).Build());
  b->AppendDocument("uuids", std::move(uuids).Build());
  b->AppendString("md5", all.HexDigest());
  b->AppendInt64("timeMillis", WallMillis() - start);
  b->OpenArray("fromCache").Close();
  return Status::OK();
}

// ---- The replica set of one ----

// NoReplicationEnabled (76), what mongod without --replSet answers.
Status NotAReplicaSet() {
  return Status(ErrorCode::kNoReplicationEnabled, "not running with --replSet");
}

// The replica set's identity, or NoReplicationEnabled for a standalone.
StatusOr<const ReplicaSetIdentity*> ReplicaSetOf(const CommandContext& ctx,
                                                 std::string_view command) {
  ROCKDOC_ASSIGN_OR_RETURN(ServiceConnection * c, ConnectionOf(ctx, command));
  if (c->options().replica_set.name.empty()) return NotAReplicaSet();
  return &c->options().replica_set;
}

// replSetGetStatus: the one member, PRIMARY, and its optimes (mongosh's
// rs.status()). Its only option, initialSync, is not supported (no member
// syncs from another).
Status RunReplSetGetStatus(CommandContext& ctx, DocumentView command, BsonBuilder* b) {
  using namespace rockdoc::internal;  // the generic rows' names
  struct NoArgs {};
  static constexpr OptionField<NoArgs> kFields[] = {{"replSetGetStatus", &Accept<NoArgs>},
                                                    {"initialSync", nullptr},
                                                    ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
  NoArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("replSetGetStatus", command, kFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(const ReplicaSetIdentity* rs, ReplicaSetOf(ctx, "replSetGetStatus"));
  auto* c = static_cast<ServiceConnection*>(ctx.connection);
  const uint64_t now = c->cluster_time();
  const uint64_t start = c->start_cluster_time();
  const int64_t wall = WallMillis();
  b->AppendString("set", rs->name);
  b->AppendDateTime("date", wall);
  b->AppendInt32("myState", 1);
  b->AppendInt64("term", kTerm);
  b->AppendInt32("syncSourceId", -1);
  b->AppendString("syncSourceHost", "");
  b->AppendInt32("heartbeatIntervalMillis", 2000);
  b->AppendInt32("majorityVoteCount", 1);
  b->AppendInt32("writeMajorityCount", 1);
  b->AppendInt32("votingMembersCount", 1);
  b->AppendInt32("writableVotingMembersCount", 1);
  b->OpenDocument("optimes");
  for (const char* key :
       {"lastCommittedOpTime", "readConcernMajorityOpTime", "appliedOpTime", "durableOpTime"}) {
    AppendOpTime(b, key, now);
  }
  for (const char* key : {"lastCommittedWallTime", "lastAppliedWallTime", "lastDurableWallTime"}) {
    b->AppendDateTime(key, DateOf(now));
  }
  b->Close();
  b->OpenArray("members");
  b->OpenDocument("");
  b->AppendInt32("_id", 0);
  b->AppendString("name", rs->host);
  b->AppendDouble("health", 1);
  b->AppendInt32("state", 1);
  b->AppendString("stateStr", "PRIMARY");
  b->AppendInt64("uptime", std::max<int64_t>(0, wall / 1000 - static_cast<int64_t>(start >> 32)));
  AppendOpTime(b, "optime", now);
  b->AppendDateTime("optimeDate", DateOf(now));
  b->AppendDateTime("lastAppliedWallTime", DateOf(now));
  b->AppendDateTime("lastDurableWallTime", DateOf(now));
  b->AppendString("syncSourceHost", "");
  b->AppendInt32("syncSourceId", -1);
  b->AppendString("infoMessage", "");
  b->AppendTimestamp("electionTime", BsonTimestamp::FromUint64(start));
  b->AppendDateTime("electionDate", DateOf(start));
  b->AppendInt32("configVersion", 1);
  b->AppendInt32("configTerm", static_cast<int32_t>(kTerm));
  b->AppendBool("self", true);
  b->AppendString("lastHeartbeatMessage", "");
  b->Close();
  b->Close();
  return Status::OK();
}

// replSetGetConfig: the set's fixed configuration (mongosh's rs.conf()).
// commitmentStatus and includeNewlyAdded are not supported.
Status RunReplSetGetConfig(CommandContext& ctx, DocumentView command, BsonBuilder* b) {
  using namespace rockdoc::internal;  // the generic rows' names
  struct NoArgs {};
  static constexpr OptionField<NoArgs> kFields[] = {{"replSetGetConfig", &Accept<NoArgs>},
                                                    {"commitmentStatus", nullptr},
                                                    {"includeNewlyAdded", nullptr},
                                                    ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
  NoArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("replSetGetConfig", command, kFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(const ReplicaSetIdentity* rs, ReplicaSetOf(ctx, "replSetGetConfig"));
  b->OpenDocument("config");
  b->AppendString("_id", rs->name);
  b->AppendInt32("version", 1);
  b->AppendInt32("term", static_cast<int32_t>(kTerm));
  b->OpenArray("members");
  b->OpenDocument("");
  b->AppendInt32("_id", 0);
  b->AppendString("host", rs->host);
  b->AppendBool("arbiterOnly", false);
  b->AppendBool("buildIndexes", true);
  b->AppendBool("hidden", false);
  b->AppendDouble("priority", 1);
  b->OpenDocument("tags");
  b->Close();
  b->AppendInt64("secondaryDelaySecs", 0);
  b->AppendInt32("votes", 1);
  b->Close();
  b->Close();
  b->AppendInt64("protocolVersion", 1);
  b->AppendBool("writeConcernMajorityJournalDefault", true);
  b->OpenDocument("settings");
  b->AppendBool("chainingAllowed", true);
  b->AppendInt32("heartbeatIntervalMillis", 2000);
  b->AppendInt32("heartbeatTimeoutSecs", 10);
  b->AppendInt32("electionTimeoutMillis", 10000);
  b->AppendInt32("catchUpTimeoutMillis", -1);
  b->AppendInt32("catchUpTakeoverDelayMillis", 30000);
  b->OpenDocument("getLastErrorModes");
  b->Close();
  b->OpenDocument("getLastErrorDefaults");
  b->AppendInt32("w", 1);
  b->AppendInt32("wtimeout", 0);
  b->Close();
  b->Close();
  b->Close();
  return Status::OK();
}

// replSetResizeOplog: the change log's retention, as the oplog's
// (Client::SetChangeLogRetention): size in MB, 990 to 1 PB as mongod 7.1+
// bounds it (BadValue otherwise), and minRetentionHours (>= 0); at least one
// of the two (InvalidOptions). Until the server stops: at the next start
// --oplogSize and --oplogMinRetentionHours (or their defaults) apply again,
// where mongod keeps the resized oplog.
Status RunReplSetResizeOplog(CommandContext& ctx, DocumentView command, BsonBuilder*) {
  using namespace rockdoc::internal;  // the generic rows' names
  struct ResizeArgs {
    std::optional<double> size_mb;
    std::optional<double> hours;
  };
  auto text = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  static const OptionField<ResizeArgs> kFields[] = {
      {"replSetResizeOplog", &Accept<ResizeArgs>},
      {"size",
       [](const Element& e, ResizeArgs* a) -> Status {
         if (!e.IsNumber()) {
           return Status(ErrorCode::kTypeMismatch,
                         "BSON field 'replSetResizeOplog.size' is the wrong type, expected a number");
         }
         a->size_mb = e.NumberAsDouble();
         return Status::OK();
       }},
      {"minRetentionHours",
       [](const Element& e, ResizeArgs* a) -> Status {
         if (!e.IsNumber()) {
           return Status(ErrorCode::kTypeMismatch,
                         "BSON field 'replSetResizeOplog.minRetentionHours' is the wrong type, "
                         "expected a number");
         }
         a->hours = e.NumberAsDouble();
         return Status::OK();
       }},
      ROCKDOC_GENERIC_COMMAND_ROWS(ResizeArgs)};
  ResizeArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("replSetResizeOplog", command, kFields, &args));
  ROCKDOC_RETURN_IF_ERROR(ReplicaSetOf(ctx, "replSetResizeOplog").status());
  if (!args.size_mb && !args.hours) {
    return Status(ErrorCode::kInvalidOptions,
                  "replSetResizeOplog command must specify at least one of size or "
                  "minRetentionHours");
  }
  constexpr double kMinMb = 990, kMaxMb = 1024.0 * 1024 * 1024;  // 990 MB .. 1 PB
  if (args.size_mb && !(*args.size_mb >= kMinMb && *args.size_mb <= kMaxMb)) {
    return BadValue("BSON field 'size' value must be >= 990 and <= 1073741824 (MB), actual value '" +
                    text(*args.size_mb) + "'");
  }
  if (args.hours && !(*args.hours >= 0)) {
    return BadValue("BSON field 'minRetentionHours' value must be >= 0, actual value '" +
                    text(*args.hours) + "'");
  }
  const Client& client = *ctx.client;
  const ChangeLog* log = ClientAccess::EngineOf(client)->change_log();
  if (log == nullptr) return NotAReplicaSet();
  const int64_t bytes =
      args.size_mb ? static_cast<int64_t>(*args.size_mb * (1 << 20)) : log->max_bytes();
  return client.SetChangeLogRetention(bytes, args.hours ? *args.hours : log->min_retention_hours());
}

// The commands that would change the set or a member's state: refused,
// never accepted. replSetInitiate is what mongod answers for a set that is
// initiated (23); the others are not supported, as a set of one whose
// configuration is rockdoc-serve's --replSet has nothing to reconfigure,
// step down to, freeze or sync from. A standalone answers 76 to each.
// (replSetResizeOplog, above, is served.)
Status RunReplSetRefused(CommandContext& ctx, DocumentView command, BsonBuilder*) {
  const std::string name((*command.begin()).key());
  ROCKDOC_RETURN_IF_ERROR(ReplicaSetOf(ctx, name).status());
  if (name == "replSetInitiate") {
    return Status(ErrorCode::kAlreadyInitialized, "already initialized");
  }
  return Status(ErrorCode::kNotImplemented,
                name +
                    " is not supported by rockdoc-serve: it answers as a replica set of one "
                    "member whose configuration is fixed (--replSet)");
}

// The wire's commands, registered with the command layer by every Service.
// None runs in a multi-document transaction (CommandDefinition::in_transaction).
constexpr bool kAdminOnly = true;          // CommandDefinition::admin_only
constexpr bool kNotInTransaction = false;  // CommandDefinition::in_transaction
constexpr bool kWithoutAuth = true;        // CommandDefinition::without_auth
constexpr internal::CommandDefinition kWireCommands[] = {
    {"createUser", &RunCreateUser, !kAdminOnly, kNotInTransaction, kWithoutAuth},
    {"dbHash", &RunDbHash},
    {"dropUser", &RunDropUser},
    {"getCmdLineOpts", &RunGetCmdLineOpts, kAdminOnly},
    {"replSetAbortPrimaryCatchUp", &RunReplSetRefused, kAdminOnly},
    {"replSetFreeze", &RunReplSetRefused, kAdminOnly},
    {"replSetGetConfig", &RunReplSetGetConfig, kAdminOnly},
    {"replSetGetStatus", &RunReplSetGetStatus, kAdminOnly},
    {"replSetInitiate", &RunReplSetRefused, kAdminOnly},
    {"replSetMaintenance", &RunReplSetRefused, kAdminOnly},
    {"replSetReconfig", &RunReplSetRefused, kAdminOnly},
    {"replSetResizeOplog", &RunReplSetResizeOplog, kAdminOnly},
    {"replSetStepDown", &RunReplSetRefused, kAdminOnly},
    {"replSetStepUp", &RunReplSetRefused, kAdminOnly},
    {"replSetSyncFrom", &RunReplSetRefused, kAdminOnly},
    {"saslContinue", &RunSaslContinue, !kAdminOnly, kNotInTransaction, kWithoutAuth},
    {"saslStart", &RunSaslStart, !kAdminOnly, kNotInTransaction, kWithoutAuth},
    {"usersInfo", &RunUsersInfo},
};

}  // namespace

Service::Service(const Client* client, ServiceOptions options)
    : client_(client),
      options_(std::move(options)),
      users_(client),
      start_cluster_time_(static_cast<uint64_t>(std::max<int64_t>(internal::WallMillis() / 1000, 0))
                          << 32) {
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
  if (name == "hello" || name == "isMaster" || name == "ismaster") {
    // The driver's handshake names its application (currentOp's appName).
    const Element client = command.Get("client");
    const Element app = client.IsDocument() ? client.Document().Get("application") : Element();
    const Element app_name = app.IsDocument() ? app.Document().Get("name") : Element();
    if (app_name.IsString()) conn->app_name = std::string(app_name.String());
  }
  ServiceConnection connection(this, conn);
  const bool replica_set = !options_.replica_set.name.empty();
  Document rewritten;
  const Status read_concern =
      replica_set ? ApplyClusterTimeReadConcern(&command, &rewritten) : Status::OK();
  Document reply = read_concern.ok() ? internal::RunCommandWithMaxSize(*client_, db, command,
                                                                       max_size, &connection)
                                     : ErrorDocument(read_concern);
  // After the command: a write's time is its own commit's or later.
  if (replica_set) reply = WithClusterTime(std::move(reply));
  // A reply must fit the message that carries it (the 48,000,000 bytes
  // hello advertises, header, flags, section kind and checksum included):
  // larger is an error, never a message a driver would drop the connection on.
  constexpr size_t kReplyFraming = kHeaderSize + 4 + 1 + 4;
  if (reply.size() > static_cast<size_t>(kMaxMessageSize) - kReplyFraming) {
    Document error = ErrorDocument(
        Status(ErrorCode::kBSONObjectTooLarge,
               "the reply to " + std::string(name) + " is " + std::to_string(reply.size()) +
                   " bytes, over the maximum message size of " + std::to_string(kMaxMessageSize)));
    return replica_set ? WithClusterTime(std::move(error)) : error;
  }
  return reply;
}

uint64_t Service::ClusterTime() const {
  const internal::ChangeLog* log = internal::ClientAccess::EngineOf(*client_)->change_log();
  return std::max(start_cluster_time_, log != nullptr ? log->last_cluster_time() : 0);
}

// A replica set's read concern by cluster time, as mongod's
// (read_concern_mongod.cpp): a time later than the set's is InvalidOptions;
// afterClusterTime at or before it is met at once, since every commit up to
// the cluster time is visible before that time is reported (the change
// log publishes a commit's time after the commit), so there is nothing to
// wait for. atClusterTime asks for the data as of a past time, which
// rockdoc does not keep (reads see the present): SnapshotTooOld, never the
// present in its place.
Status Service::ApplyClusterTimeReadConcern(DocumentView* command, Document* rewritten) const {
  Element rc = command->Get("readConcern");
  if (!rc.IsDocument()) return Status::OK();  // the command's table reports it
  Element after = rc.Document().Get("afterClusterTime");
  Element at = rc.Document().Get("atClusterTime");
  if (!after.ok() && !at.ok()) return Status::OK();
  if (after.ok() && at.ok()) {
    return Status(ErrorCode::kInvalidOptions,
                  "Can not specify both afterClusterTime and atClusterTime");
  }
  const Element& given = after.ok() ? after : at;
  const std::string key(given.key());
  if (!given.IsTimestamp()) {
    return Status(ErrorCode::kTypeMismatch,
                  "BSON field 'readConcern." + key + "' is the wrong type '" +
                      std::string(BsonTypeAlias(given.type())) + "', expected type 'timestamp'");
  }
  const uint64_t asked = given.Timestamp().AsUint64();
  if (asked == 0) {
    return Status(ErrorCode::kInvalidOptions, key + " cannot be a null timestamp");
  }
  const uint64_t now = ClusterTime();
  if (asked > now) {
    return Status(ErrorCode::kInvalidOptions,
                  "readConcern " + key +
                      " value must not be greater than the current clusterTime. Requested "
                      "clusterTime: " +
                      ShowTimestamp(asked) + "; current clusterTime: " + ShowTimestamp(now));
  }
  if (at.ok()) {
    Element level = rc.Document().Get("level");
    if (!level.IsString() || level.String() != "snapshot") {
      return Status(ErrorCode::kInvalidOptions,
                    "atClusterTime field can be set only if level is equal to snapshot");
    }
    return Status(ErrorCode::kSnapshotTooOld,
                  "Read timestamp " + ShowTimestamp(asked) +
                      " is older than the oldest available timestamp. (rockdoc keeps no history: "
                      "a read sees the present only)");
  }
  // Met: the command layer gets the read concern without it.
  BsonBuilder out;
  for (Element e : *command) {
    if (e.key() != "readConcern") {
      out.AppendElement(e);
      continue;
    }
    out.OpenDocument("readConcern");
    for (Element f : rc.Document()) {
      if (f.key() != "afterClusterTime") out.AppendElement(f);
    }
    out.Close();
  }
  *rewritten = std::move(out).Build();
  *command = *rewritten;
  return Status::OK();
}

// $clusterTime (the signature of a cluster without keys: a zero hash, key
// 0, as mongod's without authentication) and operationTime, appended to the
// reply's bytes in place.
Document Service::WithClusterTime(Document reply) const {
  const BsonTimestamp now = BsonTimestamp::FromUint64(ClusterTime());
  BsonBuilder b;
  b.OpenDocument("$clusterTime");
  b.AppendTimestamp("clusterTime", now);
  b.OpenDocument("signature");
  b.AppendBinary("hash", BinarySubtype::kGeneric, std::string(20, '\0'));
  b.AppendInt64("keyId", 0);
  b.Close();
  b.Close();
  b.AppendTimestamp("operationTime", now);
  const Document fields = std::move(b).Build();
  std::string bytes = std::move(reply).ReleaseBytes();
  bytes.pop_back();                        // the terminating zero
  bytes.append(fields.bytes().substr(4));  // the elements and their terminating zero
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(bytes.data()), static_cast<int32_t>(bytes.size()));
  return Document::AdoptValidated(std::move(bytes));
}

}  // namespace rockdoc::wire

// wire/service.h: what the server does with one wire message: parse it
// (wire/message.h), run its command through the command layer
// (Client::RunCommand's dispatcher, command/command.h) and build the reply.
// MongoDB calls this the service entry point; the sockets are
// wire/server.h's.
//
// What each message gets:
// - a message whose header cannot be framed (length below 16 or above
//   48,000,000), OP_COMPRESSED (never offered in hello), a legacy opcode
//   (OP_INSERT, OP_UPDATE, OP_DELETE, OP_GET_MORE, OP_KILL_CURSORS, removed
//   in MongoDB 6.0) or an unknown one: the connection is closed;
// - an OP_MSG that fails to parse (invalid BSON, unknown section kind,
//   lengths inside it that lie, a checksum that does not match, no $db):
//   an error reply {ok: 0, errmsg, code, codeName}, and the connection goes
//   on (its framing is intact);
// - a request with moreToCome (no reply wanted) whose command fails: the
//   connection is closed, the only way to tell the client;
// - OP_QUERY: `hello`/`isMaster` on `<db>.$cmd` (a driver's first message)
//   is answered with OP_REPLY; any other query gets OP_REPLY's QueryFailure
//   with UnsupportedOpQueryCommand (352), as MongoDB 6.0+.
// - createUser, dropUser, usersInfo, saslStart and saslContinue are the
//   wire layer's (wire/users.h), and getCmdLineOpts (admin: the server's
//   command line, ServiceOptions::argv and ::parsed): the Service registers
//   them with the command layer (internal::RegisterCommands), so they run
//   through its one dispatcher (its Stable API, $db and admin checks, its
//   errors, listCommands) like every other command, their handlers reaching
//   the connection's state through the command's context
//   (CommandContext::connection, the Service's CommandConnection). With
//   ServiceOptions::auth, the dispatcher refuses every command but the
//   handshake, ping, buildInfo, listCommands, saslStart/saslContinue and
//   createUser (the localhost exception) of an unauthenticated connection
//   with Unauthorized (13), and runs those without their session fields
//   (lsid, txnNumber, ...: no server state before login, as mongod); an
//   authenticated connection's user is read again before each command (a
//   dropped user is logged out). hello's connectionId and
//   saslSupportedMechs come from the connection.
// - An awaitable hello (`topologyVersion` and `maxAwaitTimeMS`, the
//   drivers' streaming monitor): when the client's topologyVersion is the
//   server's, the reply waits maxAwaitTimeMS (a standalone rockdoc's
//   topology never changes); with exhaustAllowed it carries moreToCome and
//   the server sends the next one after another wait, until the client
//   goes away (Response::exhaust).
// - With ServiceOptions::replica_set named, the server is the primary of a
//   replica set of one (ReplicaSetIdentity below): hello's set fields,
//   $clusterTime and operationTime on every reply, readConcern's
//   afterClusterTime and atClusterTime answered before the command layer,
//   replSetGetStatus and replSetGetConfig, and the reconfiguring replSet
//   commands refused.
//
// Thread safety: a Service is shared by every connection; Handle may run
// on many threads at once (the Client is thread-safe).
#ifndef ROCKDOC_WIRE_SERVICE_H_
#define ROCKDOC_WIRE_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "wire/message.h"
#include "wire/users.h"

namespace rockdoc::wire {

// What the server does after a message.
struct Response {
  std::string reply;      // bytes to send; empty: nothing (moreToCome)
  bool close = false;     // close the connection (after sending `reply`)
  std::string reason;     // why it closes, for the log
  int64_t delay_ms = 0;   // wait this long (or until shutdown) before sending
  // An exhaust reply (moreToCome): the server sends Service::Continue's
  // reply after `delay_ms` again, until the client closes.
  bool exhaust = false;
};

// The state of an exhaust stream of one connection.
struct ExhaustState {
  std::string db;
  Document command;         // the hello, without its awaitable fields
  uint32_t flags = 0;       // the reply's (moreToCome, checksumPresent)
  int32_t last_reply_id = 0;
  int64_t await_ms = 0;
};

// What the service keeps for one connection.
struct ConnectionState {
  ExhaustState exhaust;  // the exhaust stream, when a Response is one
  AuthState auth;        // its SCRAM conversation and authenticated user
  // Whether the peer is on this machine (loopback or a Unix socket): the
  // localhost exception (the first user may be created unauthenticated).
  bool local = true;
  // hello's connectionId (drivers report it in their command events).
  int32_t id = 1;
  // The peer's "host:port" ("" for a Unix socket), and the appName its
  // driver's handshake gave (hello's client.application.name): currentOp's
  // client and appName.
  std::string remote;
  std::string app_name;
};

// The one-member replica set a server answers as (README.md, "rockdoc
// serve"): drivers allow watch() and transactions on a replica set only.
// With a name, hello carries setName, hosts, primary, me, setVersion,
// electionId and lastWrite; every reply carries $clusterTime and
// operationTime; readConcern's afterClusterTime and atClusterTime are
// answered here (Service::Run); replSetGetStatus and replSetGetConfig
// describe the one member, and the commands that would change the set are
// refused. Without a name the server is a standalone, as mongod without
// --replSet. The cluster time is the change log's (ClientOptions::
// change_log, which rockdoc-serve turns on): over a client without it, it
// stays at the service's start.
struct ReplicaSetIdentity {
  std::string name;  // setName; empty: a standalone server
  // The member's address as clients reach it (hosts, primary, me): a
  // driver that discovers the set connects to it.
  std::string host;
};

struct ServiceOptions {
  // Commands need an authenticated user, except the handshake, ping,
  // buildInfo, saslStart/saslContinue, and createUser from a local peer
  // while no user exists: Unauthorized (13) otherwise.
  bool auth = false;
  // What `getCmdLineOpts` (admin) answers: the program's arguments and
  // its options in mongod's configuration shape ({net: {bindIp, port},
  // storage: {dbPath}, ...}); Serve fills parsed; argv is the command line.
  std::vector<std::string> argv;
  Document parsed;
  ReplicaSetIdentity replica_set;
};

class Service {
 public:
  // Registers the wire's commands with `client`'s command layer.
  explicit Service(const Client* client, ServiceOptions options = {});

  // Handles one whole message (header included) of the connection `conn`.
  Response Handle(std::string_view message, ConnectionState* conn);
  // The next reply of the connection's exhaust stream.
  Response Continue(ConnectionState* conn);

  // The replica set's cluster time now: the last commit's (the change
  // log's), or the service's start when nothing has been committed since
  // the log began. Every commit at or before it is visible to a read.
  uint64_t ClusterTime() const;

  // A new request id for a reply.
  int32_t NextRequestId() { return next_request_id_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Response HandleOpMsg(std::string_view message, const MessageHeader& header,
                       ConnectionState* conn);
  Response HandleOpQuery(std::string_view message, const MessageHeader& header,
                         ConnectionState* conn);
  // Runs a command through the command layer, as the connection.
  Document Run(std::string_view db, DocumentView command, ConnectionState* conn);
  // The connection as the command layer and the wire's handlers see it.
  friend class ServiceConnection;
  // readConcern's afterClusterTime and atClusterTime of a replica set's
  // command: OK with `command` as the command layer takes it (without
  // afterClusterTime, met here), or the error to answer.
  Status ApplyClusterTimeReadConcern(DocumentView* command, Document* rewritten) const;
  // `reply` with $clusterTime and operationTime appended.
  Document WithClusterTime(Document reply) const;

  const Client* client_;
  const ServiceOptions options_;
  const UserStore users_;
  // Serializes the localhost exception's check (no user yet) and the
  // creation it allows, so two connections cannot both create a first user.
  internal::Mutex first_user_mu_;
  std::atomic<int32_t> next_request_id_{1};
  const uint64_t start_cluster_time_;  // the wall clock's second at the start
};

// MongoDB's error reply {ok: 0, errmsg, code, codeName} for `s`.
Document ErrorDocument(const Status& s);

}  // namespace rockdoc::wire

#endif  // ROCKDOC_WIRE_SERVICE_H_

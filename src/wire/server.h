// wire/server.h: `rockdoc serve`: MongoDB's wire protocol over TCP and Unix
// sockets, so that drivers, mongosh and the tools built on them use a
// rockdoc database directory (README.md, "rockdoc serve").
//
// One thread per connection, over one shared Client (its cursors and
// sessions are the command layer's, shared by all connections as a
// mongod's are). Bounded: at most `max_connections` at once (a connection
// past that is closed on accept, as mongod's maxIncomingConnections); a
// connection idle longer than `idle_timeout_ms` between messages is
// closed, and one that takes longer than `message_timeout_ms` to send the
// rest of a message it started (or to take a reply) too.
//
// Descriptors: every connection takes one, and so do the engine's files.
// Serve raises the soft open-file limit to the hard one and splits it
// (PlanDescriptors): connections at most 80% of it (mongod's rule), the
// engine's table files (ClientOptions::max_open_files) what remains beside
// a fixed reserve, so that idle connections can never take the descriptors
// a write needs. Should the process run out anyway, a connection that
// cannot be accepted is refused at once (a spare descriptor is given up
// to accept and close it) rather than left waiting.
//
// Durability: every `journal_commit_interval_ms` the write-ahead log is
// synced (mongod's journal commit interval), and a write with writeConcern
// j: true is answered only once the log is synced (command/command.h,
// WantsJournal).
//
// Shutdown: Shutdown() stops accepting, lets every connection finish the
// request it is running or receiving (a message whose first bytes came is
// read to its end, within the message timeout, run, and answered), closes
// the connections and joins their threads; the caller then closes the Client, so every
// acknowledged write is in the database's write-ahead log.
//
// Security: with `auth`, every command but the handshake and the SCRAM
// conversation needs an authenticated user (wire/users.h). Serve refuses an
// address other than loopback (127.0.0.0/8, ::1) without --auth, and warns
// with it unless TLS is required. A Unix socket gets mode 0600: only its
// owner may connect.
//
// TLS (`tls`, mongod's --tlsMode and friends; wire/transport.h): under
// requireTLS a connection must begin with a TLS ClientHello, or it is
// logged and closed; under allowTLS and preferTLS its first bytes say
// which it is (LooksLikeTlsClientHello), on the TCP port and the Unix
// socket alike. The handshake is bounded by the message timeout; with a CA
// file, the client's certificate must chain to it (unless connections
// without certificates are allowed: then only one presented is checked).
//
// Thread safety: Start, port() and Shutdown may be called from any thread;
// Shutdown is idempotent.
#ifndef ROCKDOC_WIRE_SERVER_H_
#define ROCKDOC_WIRE_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "rockdoc/client.h"
#include "rockdoc/status.h"
#include "wire/service.h"
#include "wire/transport.h"

namespace rockdoc::wire {

struct ServerOptions {
  std::string bind_ip = "127.0.0.1";  // a numeric address or "localhost"; "" for no TCP
  int port = 27017;                   // 0: an ephemeral port (see Server::port())
  std::string unix_socket;            // a path, or "" for none
  int max_connections = 1000;
  int64_t idle_timeout_ms = 30LL * 60 * 1000;  // the session timeout's 30 minutes
  int64_t message_timeout_ms = 60 * 1000;
  // SCRAM users required (ServiceOptions::auth, wire/users.h).
  bool auth = false;
  // How often the write-ahead log is synced (mongod's
  // --journalCommitInterval, 1..500 ms, 100 by default); 0: never (each
  // write then reaches the disk when the OS writes it back, or at j: true).
  int64_t journal_commit_interval_ms = 100;
  // The bytes of the messages being received and run at once, over all
  // connections (0: no bound but the connection count). A message whose
  // length would take them past it waits, after its header, until others
  // are answered; one message alone always proceeds.
  int64_t max_message_bytes_in_flight = 0;
  // getCmdLineOpts' answer (ServiceOptions::argv, ::parsed).
  std::vector<std::string> argv;
  Document parsed;
  // The replica set of one member the server answers as (its setName,
  // ServiceOptions::replica_set); empty: a standalone. Its host is the
  // address listened on (ReplicaSetHost).
  std::string repl_set;
  // TLS (mongod's --tlsMode, --tlsCertificateKeyFile, --tlsCAFile, ...);
  // Start fails with BadValue when the mode is not disabled and the files
  // do not load (TlsContext::Create).
  TlsOptions tls;
};

// The member address a server listening as `options` (on TCP `port`)
// reports in hello's hosts, primary and me: "bind_ip:port" ("[::1]:port"
// for IPv6), the machine's host name for a wildcard address (0.0.0.0, ::),
// or the Unix socket's path without TCP.
std::string ReplicaSetHost(const ServerOptions& options, int port);

// How rockdoc-serve shares the process's open-file limit.
struct DescriptorBudget {
  int connections = 0;   // the connections served at once
  int engine_files = 0;  // ClientOptions::max_open_files
};
// Descriptors kept for everything else: the listening sockets, the
// write-ahead log, MANIFEST and LOG, flush and compaction outputs, spill
// files, the spare descriptor, standard streams.
inline constexpr int kReservedDescriptors = 64;
// The budget under an open-file limit of `limit` for `requested`
// connections: connections at most 80% of the limit and what leaves the
// engine at least 20 table files (RocksDB's minimum) beside the reserve;
// the engine takes the rest. OperationFailed when the limit cannot hold one
// connection so.
StatusOr<DescriptorBudget> PlanDescriptors(int64_t limit, int requested);

// Whether `address` (numeric, or "localhost") is a loopback address.
bool IsLoopback(const std::string& address);

class Server {
 public:
  // Listens as `options` says and starts accepting. `client` must outlive
  // the server. Errors: BadValue for an address that does not parse,
  // OperationFailed naming the address for a bind or listen that fails
  // (the port in use, a socket path too long).
  static StatusOr<std::unique_ptr<Server>> Start(const Client* client, ServerOptions options);
  ~Server();  // Shutdown()

  int port() const { return port_; }  // the TCP port bound (0 without TCP)
  int open_connections() const { return open_.load(); }
  // How many times the journal thread has synced the write-ahead log.
  int64_t journal_syncs() const { return journal_syncs_.load(); }
  // Messages whose first bytes the server has read and whose reply it has
  // not yet sent (or that ended the connection): the requests a Shutdown
  // finishes. Tests wait on it for "the server has the message".
  int requests_in_flight() const { return in_flight_.load(); }
  void Shutdown();

 private:
  struct Connection {
    int fd = -1;
    bool local = true;  // a loopback or Unix-socket peer
    int32_t id = 0;     // hello's connectionId
    std::string remote;  // "host:port" of a TCP peer, "" for a Unix socket
    std::thread thread;
    std::atomic<bool> done{false};
  };
  Server(const Client* client, ServerOptions options);
  Status Listen();
  void AcceptLoop();
  void Serve(Connection* c);
  // The connection's transport, after the TLS handshake if it is one
  // (ServerOptions::tls); null, with `*reason` set, when the connection is
  // to be closed (plain text under requireTLS, a failed handshake, a
  // client gone).
  std::unique_ptr<Transport> OpenTransport(int fd, std::string* reason);
  void Reap(bool all);
  // Accepts one connection on `listener` only to close it: the process is
  // out of descriptors, and a client left in the backlog would hang.
  void RefuseOne(int listener);
  void JournalLoop();
  // The message-bytes bound (ServerOptions::max_message_bytes_in_flight):
  // Acquire waits until `n` more bytes fit (or none are held), Release
  // gives them back.
  void AcquireMessageBytes(int64_t n);
  void ReleaseMessageBytes(int64_t n);

  const Client* client_;
  ServerOptions options_;
  std::optional<Service> service_;  // made once the address is known (Start)
  std::shared_ptr<TlsContext> tls_;  // null when TLS is disabled
  int tcp_fd_ = -1;
  int unix_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> open_{0};
  std::atomic<int> in_flight_{0};
  internal::Mutex budget_mu_;
  std::condition_variable budget_freed_;
  int64_t message_bytes_ = 0;  // under budget_mu_ (waited on through its native mutex)
  std::atomic<int32_t> next_connection_id_{1};
  std::thread acceptor_;
  int spare_fd_ = -1;  // given up to refuse a connection when out of descriptors
  std::thread journal_;
  std::atomic<int64_t> journal_syncs_{0};
  internal::Mutex journal_mu_;
  std::condition_variable journal_wake_;  // Shutdown wakes the journal thread
  internal::Mutex mu_;
  std::list<Connection> connections_ ABSL_GUARDED_BY(mu_);
  std::once_flag shutdown_once_;
};

// What rockdoc-serve's command line decides (tools/rockdoc_serve_main.cc
// decodes it with the tools' flag parser, as every rockdoc program).
struct ServeConfig {
  ServerOptions server;         // its argv: the command line, for getCmdLineOpts
  std::string db_path;          // required
  bool tcp = true;              // false: the Unix socket only (server.unix_socket needed)
  double cache_gb = 0;          // the block cache in GB; 0: from the memory
  // --replSet: the name of the one-member replica set rockdoc-serve answers
  // as, so that drivers allow watch() and transactions.
  std::string repl_set = "rs0";
  int64_t memory_limit_mb = 0;  // 0: the machine's (or its cgroup's)
  // --oplogSize / --oplogMinRetentionHours: the change log's retention
  // (ClientOptions::change_log_max_bytes in MB, min_retention_hours); 0:
  // the defaults (256 MB, none).
  int64_t oplog_size_mb = 0;
  double oplog_min_retention_hours = 0;
  // --enableEncryption --encryptionKeyFile FILE, as mongod's: the
  // database's key (ClientOptions::encryption_key), the base64 of 32 bytes.
  bool enable_encryption = false;
  std::string encryption_key_file;
};

// The `rockdoc-serve` program after its flags: refuses a TCP address that is
// not loopback without auth (and warns, with it, unless TLS is required),
// refuses TLS files that do not load (2, before the database is opened),
// sizes the block cache and the bound of messages in flight from
// cache_gb / memory_limit_mb, bounds glibc's allocator (arenas, and large
// blocks mapped on their own), shares the open-file limit between
// connections and the engine, opens the database and prints
// "rockdoc-serve: listening on <address>" for each socket, serves until
// SIGINT or SIGTERM, shuts down cleanly and returns 0; 2 for a bad
// configuration, 1 when the database or a socket cannot be opened.
int Serve(ServeConfig config);

}  // namespace rockdoc::wire

#endif  // ROCKDOC_WIRE_SERVER_H_

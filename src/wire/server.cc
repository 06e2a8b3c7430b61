#include "wire/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <system_error>
#include <thread>

#include "command/command.h"
#include "common/endian.h"
#include "stats/server_activity.h"
#include "storage/engine.h"

namespace rockdoc::wire {

namespace {

// How often a waiting thread looks at the stop flag.
constexpr int kSliceMs = 100;

void Log(const std::string& line) { std::fprintf(stderr, "rockdoc-serve: %s\n", line.c_str()); }

Status Failed(const std::string& what) {
  return Status(ErrorCode::kOperationFailed, what + ": " + std::strerror(errno));
}

// Waits `ms` before an awaitable hello's reply. kClosed when the client
// went away meanwhile; kStopped when the server stops.
Io Delay(const Transport& t, int64_t ms, const std::atomic<bool>& stopping) {
  const Clock::time_point until = Clock::now() + std::chrono::milliseconds(ms);
  Io w = t.WaitReadable(until, &stopping);
  if (w == Io::kTimeout) return Io::kOk;
  if (w != Io::kOk) return w;
  return t.PeerClosed() ? Io::kClosed : Io::kOk;  // it sent something: answer now
}

// Peeks at the first bytes of a connection (kTlsSniffBytes, or fewer when
// the first is not a TLS record's) by `deadline`, without reading them.
Io PeekHead(int fd, Clock::time_point deadline, std::string* head) {
  for (;;) {
    Io w = WaitFor(fd, POLLIN, deadline, nullptr);
    if (w != Io::kOk) return w;
    char buf[kTlsSniffBytes];
    const ssize_t got = recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
    if (got == 0) return Io::kClosed;
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Io::kClosed;
    }
    head->assign(buf, static_cast<size_t>(got));
    if (head->size() == kTlsSniffBytes ||
        static_cast<unsigned char>(buf[0]) != kTlsHandshakeByte) {
      return Io::kOk;
    }
    // A record's first bytes came alone: poll would report them at once,
    // over and over, so wait a little for the rest (bounded by the deadline).
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

bool IsLoopback(const std::string& address) {
  if (address == "localhost") return true;
  in_addr v4;
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

std::string ReplicaSetHost(const ServerOptions& options, int port) {
  if (options.bind_ip.empty()) return options.unix_socket;
  std::string host = options.bind_ip;
  if (host == "0.0.0.0" || host == "::") {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') {
      host = name;
    } else {
      host = "localhost";
    }
  } else if (host.find(':') != std::string::npos) {
    host = "[" + host + "]";
  }
  return host + ":" + std::to_string(port);
}

Server::Server(const Client* client, ServerOptions options)
    : client_(client), options_(std::move(options)) {}

Server::~Server() { Shutdown(); }

StatusOr<std::unique_ptr<Server>> Server::Start(const Client* client, ServerOptions options) {
  std::unique_ptr<Server> server(new Server(client, std::move(options)));
  if (server->options_.tls.mode != TlsMode::kDisabled) {
    StatusOr<std::shared_ptr<TlsContext>> tls = TlsContext::Create(server->options_.tls);
    if (!tls.ok()) {
      server->stopping_ = true;
      return tls.status();
    }
    server->tls_ = std::move(*tls);
  }
  Status s = server->Listen();
  if (!s.ok()) {
    if (server->tcp_fd_ >= 0) close(server->tcp_fd_);
    if (server->unix_fd_ >= 0) close(server->unix_fd_);
    server->tcp_fd_ = server->unix_fd_ = -1;
    server->stopping_ = true;
    return s;
  }
  internal::ActivityOf(*client).network().max = server->options_.max_connections;
  // The replica set's member is the address just bound (a port 0 is now
  // the ephemeral one), before any connection can ask.
  ServiceOptions service;
  service.auth = server->options_.auth;
  service.argv = server->options_.argv;
  service.parsed = server->options_.parsed;
  if (!server->options_.repl_set.empty()) {
    service.replica_set = {server->options_.repl_set,
                           ReplicaSetHost(server->options_, server->port_)};
  }
  server->service_.emplace(client, std::move(service));
  server->spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  server->acceptor_ = std::thread([raw = server.get()] { raw->AcceptLoop(); });
  if (server->options_.journal_commit_interval_ms > 0) {
    server->journal_ = std::thread([raw = server.get()] { raw->JournalLoop(); });
  }
  return server;
}

Status Server::Listen() {
  if (!options_.bind_ip.empty()) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if (options_.bind_ip != "localhost") hints.ai_flags |= AI_NUMERICHOST;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(options_.port);
    const int rc = getaddrinfo(options_.bind_ip.c_str(), port.c_str(), &hints, &found);
    if (rc != 0) {
      return Status(ErrorCode::kBadValue, "cannot bind '" + options_.bind_ip + "': " +
                                              gai_strerror(rc));
    }
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(found, &freeaddrinfo);
    tcp_fd_ = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (tcp_fd_ < 0) return Failed("socket");
    const int one = 1;
    setsockopt(tcp_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(tcp_fd_, found->ai_addr, found->ai_addrlen) != 0) {
      return Failed("bind " + options_.bind_ip + ":" + port);
    }
    if (listen(tcp_fd_, 128) != 0) return Failed("listen " + options_.bind_ip + ":" + port);
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    getsockname(tcp_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = bound.ss_family == AF_INET6
                ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }
  if (!options_.unix_socket.empty()) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (options_.unix_socket.size() >= sizeof addr.sun_path) {
      return Status(ErrorCode::kBadValue, "Unix socket path '" + options_.unix_socket +
                                              "' is longer than " +
                                              std::to_string(sizeof addr.sun_path - 1) +
                                              " bytes");
    }
    std::memcpy(addr.sun_path, options_.unix_socket.c_str(), options_.unix_socket.size());
    struct stat st;
    if (lstat(options_.unix_socket.c_str(), &st) == 0) {
      // A socket a previous server left behind is replaced; anything else
      // at that path is not ours to remove.
      if (!S_ISSOCK(st.st_mode)) {
        return Status(ErrorCode::kBadValue,
                      "'" + options_.unix_socket + "' exists and is not a socket");
      }
      unlink(options_.unix_socket.c_str());
    }
    unix_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (unix_fd_ < 0) return Failed("socket");
    if (bind(unix_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      return Failed("bind " + options_.unix_socket);
    }
    chmod(options_.unix_socket.c_str(), 0600);
    if (listen(unix_fd_, 128) != 0) return Failed("listen " + options_.unix_socket);
  }
  if (tcp_fd_ < 0 && unix_fd_ < 0) {
    return Status(ErrorCode::kBadValue, "nothing to listen on: no TCP address and no Unix socket");
  }
  return Status::OK();
}

void Server::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd fds[2];
    int n = 0;
    if (tcp_fd_ >= 0) fds[n++] = {tcp_fd_, POLLIN, 0};
    if (unix_fd_ >= 0) fds[n++] = {unix_fd_, POLLIN, 0};
    const int ready = poll(fds, n, kSliceMs);
    Reap(/*all=*/false);
    if (ready <= 0) continue;
    for (int i = 0; i < n; ++i) {
      if (!(fds[i].revents & POLLIN)) continue;
      const int fd = accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE) RefuseOne(fds[i].fd);
        continue;
      }
      if (open_.load() >= options_.max_connections) {
        Log("connection refused: " + std::to_string(options_.max_connections) +
            " connections are open (--maxConns)");
        close(fd);
        continue;
      }
      bool local = true;
      std::string remote;
      if (fds[i].fd == tcp_fd_) {
        const int one = 1;  // replies go out as soon as they are written
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        sockaddr_storage peer{};
        socklen_t len = sizeof peer;
        char text[INET6_ADDRSTRLEN] = "";
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len);
        if (peer.ss_family == AF_INET6) {
          inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr, text, sizeof text);
        } else {
          inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
        }
        local = IsLoopback(text);
        const uint16_t peer_port = ntohs(peer.ss_family == AF_INET6
                                             ? reinterpret_cast<sockaddr_in6*>(&peer)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&peer)->sin_port);
        remote = std::string(text) + ":" + std::to_string(peer_port);
      }
      ++open_;
      internal::MutexLock lock(&mu_);
      Connection& c = connections_.emplace_back();
      c.fd = fd;
      c.local = local;
      c.id = next_connection_id_.fetch_add(1);
      c.remote = remote;
      {
        // serverStatus' connections, and mongod's log line for it.
        internal::NetworkCounters& net = internal::ActivityOf(*client_).network();
        const int64_t count = ++net.current;
        ++net.total_created;
        BsonBuilder attr;
        attr.AppendString("remote", remote.empty() ? std::string("anonymous unix socket") : remote);
        attr.AppendInt64("connectionId", c.id);
        attr.AppendInt64("connectionCount", count);
        internal::ActivityOf(*client_).LogEvent("NETWORK", 22943, "listener", "Connection accepted",
                                                std::move(attr).Build());
      }
      try {
        c.thread = std::thread([this, &c] { Serve(&c); });
      } catch (const std::system_error& e) {  // out of threads: refuse this one
        Log(std::string("connection refused: cannot start its thread: ") + e.what());
        close(fd);
        connections_.pop_back();
        --open_;
        --internal::ActivityOf(*client_).network().current;
      }
    }
  }
}

void Server::RefuseOne(int listener) {
  if (spare_fd_ >= 0) {
    close(spare_fd_);
    const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) close(fd);
    spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      Log("connection refused: the process is out of file descriptors (" +
          std::to_string(open_.load()) + " connections open)");
      return;
    }
  }
  // No spare (or another thread took it back): poll would report the
  // listener ready at once, over and over; wait a slice for descriptors.
  std::this_thread::sleep_for(std::chrono::milliseconds(kSliceMs));
}

void Server::JournalLoop() {
  bool failing = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(journal_mu_.native());
      journal_wake_.wait_for(lock, std::chrono::milliseconds(options_.journal_commit_interval_ms),
                             [this] { return stopping_.load(); });
    }
    if (stopping_.load()) return;  // the Client's Close syncs the rest
    Status s = internal::SyncWriteAheadLog(*client_);
    if (s.ok()) ++journal_syncs_;
    if (!s.ok() && !failing) Log("syncing the write-ahead log: " + s.ToString());
    if (s.ok() && failing) Log("syncing the write-ahead log works again");
    failing = !s.ok();
  }
}

void Server::Reap(bool all) {
  std::list<Connection> finished;
  {
    internal::MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if (all || it->done.load()) finished.splice(finished.end(), connections_, it);
      it = next;
    }
  }
  for (Connection& c : finished) c.thread.join();
}

std::unique_ptr<Transport> Server::OpenTransport(int fd, std::string* reason) {
  if (tls_ == nullptr) return PlainTransport(fd);
  // The first bytes come within the idle timeout, the rest of the
  // handshake within the message timeout, as a message's.
  Io w = WaitFor(fd, POLLIN, Clock::now() + std::chrono::milliseconds(options_.idle_timeout_ms),
                 &stopping_);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(options_.message_timeout_ms);
  std::string head;
  if (w == Io::kOk) w = PeekHead(fd, deadline, &head);
  if (w != Io::kOk) {
    *reason = w == Io::kTimeout ? "nothing sent before the timeout" : IoName(w);
    return nullptr;
  }
  if (!LooksLikeTlsClientHello(head)) {
    if (options_.tls.mode != TlsMode::kRequireTLS) return PlainTransport(fd);
    *reason = "refused: not TLS, and --tlsMode is requireTLS";
    return nullptr;
  }
  StatusOr<std::unique_ptr<Transport>> t = tls_->Accept(fd, deadline);
  if (!t.ok()) {
    *reason = std::string(t.status().message());
    return nullptr;
  }
  return std::move(*t);
}

void Server::Serve(Connection* c) {
  const int fd = c->fd;
  std::string reason;
  std::string message;
  ConnectionState state;
  state.local = c->local;
  state.id = c->id;
  state.remote = c->remote;
  std::unique_ptr<Transport> t = OpenTransport(fd, &reason);
  for (; t != nullptr;) {
    // Between messages: wait for the next one up to the idle timeout.
    const Clock::time_point idle_deadline =
        Clock::now() + std::chrono::milliseconds(options_.idle_timeout_ms);
    Io w = t->WaitReadable(idle_deadline, &stopping_);
    if (w != Io::kOk) {
      reason = w == Io::kTimeout ? "idle timeout" : IoName(w);
      break;
    }
    // Once a message starts, all of it must come within the message timeout.
    const Clock::time_point deadline =
        Clock::now() + std::chrono::milliseconds(options_.message_timeout_ms);
    char header[kHeaderSize];
    // From its first byte to its reply the message is in flight (counted
    // for requests_in_flight()); the guard ends it on every path.
    ++in_flight_;
    struct InFlight {
      std::atomic<int>* n;
      ~InFlight() { --*n; }
    } in_flight{&in_flight_};
    w = t->ReadFull(header, kHeaderSize, deadline);
    if (w != Io::kOk) {
      reason = IoName(w);
      break;
    }
    StatusOr<MessageHeader> h = ParseHeader(std::string_view(header, kHeaderSize));
    if (!h.ok()) {
      reason = std::string(h.status().message());
      break;
    }
    // The message's bytes count against the server's bound from here to
    // its reply.
    const int64_t held = h->message_length;
    AcquireMessageBytes(held);
    struct Held {
      Server* server;
      int64_t n;
      ~Held() { server->ReleaseMessageBytes(n); }
    } hold{this, held};
    // The body is read in steps and the buffer grown as bytes arrive, so a
    // header that claims 48 MB and sends nothing costs nothing.
    message.assign(header, kHeaderSize);
    constexpr size_t kReadStep = size_t{1} << 20;
    while (w == Io::kOk && message.size() < static_cast<size_t>(h->message_length)) {
      const size_t at = message.size();
      const size_t step = std::min(kReadStep, static_cast<size_t>(h->message_length) - at);
      message.resize(at + step);
      w = t->ReadFull(message.data() + at, step, deadline);
    }
    if (w != Io::kOk) {
      reason = IoName(w);
      break;
    }
    internal::NetworkCounters& net = internal::ActivityOf(*client_).network();
    net.bytes_in += static_cast<int64_t>(message.size());
    ++net.num_requests;
    ++net.active;
    Response r = service_->Handle(message, &state);
    --net.active;
    bool end = false;
    for (;;) {
      if (r.delay_ms > 0) {
        w = Delay(*t, r.delay_ms, stopping_);
        if (w != Io::kOk) {
          reason = IoName(w);
          end = true;
          break;
        }
      }
      if (!r.reply.empty()) {
        net.bytes_out += static_cast<int64_t>(r.reply.size());
        w = t->WriteFull(r.reply,
                         Clock::now() + std::chrono::milliseconds(options_.message_timeout_ms));
        if (w != Io::kOk) {
          reason = std::string("sending a reply: ") + IoName(w);
          end = true;
          break;
        }
      }
      if (r.close) {
        reason = r.reason;
        end = true;
        break;
      }
      if (!r.exhaust) break;
      if (t->InputWaiting()) break;  // the client sent a message: read it
      if (stopping_.load()) {  // an exhaust stream ends with the server
        reason = IoName(Io::kStopped);
        end = true;
        break;
      }
      r = service_->Continue(&state);
      // Back to back only when the client asked for no wait: at least a
      // slice between replies, so a stream cannot spin.
      r.delay_ms = std::max<int64_t>(r.delay_ms, kSliceMs);
    }
    if (end) break;
    // A buffer a large message grew is not kept for the connection's life.
    if (message.capacity() > (size_t{1} << 20)) std::string().swap(message);
  }
  if (reason != IoName(Io::kClosed) && reason != IoName(Io::kStopped)) {
    Log("connection closed: " + reason);
  }
  t.reset();  // TLS's close_notify, before the socket closes
  close(fd);
  --open_;
  {
    internal::ServerActivity& activity = internal::ActivityOf(*client_);
    const int64_t count = --activity.network().current;
    BsonBuilder attr;
    attr.AppendString("remote", c->remote.empty() ? std::string("anonymous unix socket") : c->remote);
    attr.AppendInt64("connectionId", c->id);
    attr.AppendInt64("connectionCount", count);
    activity.LogEvent("NETWORK", 22944, "conn" + std::to_string(c->id), "Connection ended",
                      std::move(attr).Build());
  }
  c->done = true;
}

void Server::AcquireMessageBytes(int64_t n) {
  const int64_t bound = options_.max_message_bytes_in_flight;
  if (bound <= 0) return;
  std::unique_lock<std::mutex> lock(budget_mu_.native());
  budget_freed_.wait(lock, [&] { return message_bytes_ == 0 || message_bytes_ + n <= bound; });
  message_bytes_ += n;
}

void Server::ReleaseMessageBytes(int64_t n) {
  if (options_.max_message_bytes_in_flight <= 0) return;
  {
    std::lock_guard<std::mutex> lock(budget_mu_.native());
    message_bytes_ -= n;
  }
  budget_freed_.notify_all();
}

void Server::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    {
      internal::MutexLock lock(&journal_mu_);
      stopping_ = true;
    }
    journal_wake_.notify_all();
    if (journal_.joinable()) journal_.join();
    if (acceptor_.joinable()) acceptor_.join();
    if (spare_fd_ >= 0) close(spare_fd_);
    spare_fd_ = -1;
    if (tcp_fd_ >= 0) close(tcp_fd_);
    if (unix_fd_ >= 0) {
      close(unix_fd_);
      unlink(options_.unix_socket.c_str());
    }
    // Each connection ends after the request it is running, if any; one
    // waiting for a capped collection's writes (awaitData) returns now.
    internal::StopCursorWaits(*client_);
    Reap(/*all=*/true);
  });
}

StatusOr<DescriptorBudget> PlanDescriptors(int64_t limit, int requested) {
  constexpr int64_t kMinEngineFiles = 20;
  const int64_t most =
      std::min<int64_t>(limit * 8 / 10, limit - kReservedDescriptors - kMinEngineFiles);
  if (most < 1) {
    return Status(ErrorCode::kOperationFailed,
                  "the open-file limit (" + std::to_string(limit) +
                      ") is too low: rockdoc-serve needs at least " +
                      std::to_string(kReservedDescriptors + kMinEngineFiles + 1) +
                      " descriptors (raise it with ulimit -n)");
  }
  DescriptorBudget b;
  b.connections = static_cast<int>(std::min<int64_t>(requested, most));
  b.engine_files =
      static_cast<int>(std::min<int64_t>(limit - b.connections - kReservedDescriptors, 1 << 30));
  return b;
}

// ---- The program ----

namespace {

// glibc's allocator, bounded for a server of many connection threads and
// large messages: at most two arenas per core (glibc's default is eight,
// each keeping what its threads freed), and blocks of 1 MiB or more (message
// buffers, documents) always mapped on their own, so that freeing one gives
// its memory back to the system. glibc otherwise raises that threshold
// after each large free, up to 32 MiB, and serves later large blocks from
// the arenas, which keep them: 40 connections carrying 15 MB documents grew
// a server from 485 MB to 1.25 GB (issue #33.18).
void BoundAllocator() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  mallopt(M_ARENA_MAX, static_cast<int>(std::max<long>(2, 2 * cores)));
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

}  // namespace

int Serve(ServeConfig config) {
  ServerOptions& options = config.server;
  const std::string& db = config.db_path;
  const double cache_gb = config.cache_gb;
  const int64_t memory_limit_mb = config.memory_limit_mb;
  options.repl_set = config.repl_set;
  if (db.empty()) {
    std::fprintf(stderr, "rockdoc-serve: --dbpath DIR is required (--help lists the flags)\n");
    return 2;
  }
  if (!config.tcp) {
    if (options.unix_socket.empty()) {
      std::fprintf(stderr, "rockdoc-serve: --no-tcp needs --unix PATH\n");
      return 2;
    }
    options.bind_ip.clear();
  }
  // TLS's files are loaded (and every error in them reported) before the
  // database is opened; the server loads them again to serve.
  const TlsOptions& tls = options.tls;
  if (tls.mode == TlsMode::kDisabled) {
    if (!tls.certificate_key_file.empty() || !tls.ca_file.empty() ||
        !tls.certificate_key_file_password.empty() || tls.allow_connections_without_certificates) {
      std::fprintf(stderr,
                   "rockdoc-serve: TLS flags are given but --tlsMode is disabled: give "
                   "--tlsMode requireTLS (or allowTLS, preferTLS), or drop them\n");
      return 2;
    }
  } else {
    if (tls.allow_connections_without_certificates && tls.ca_file.empty()) {
      std::fprintf(stderr,
                   "rockdoc-serve: --tlsAllowConnectionsWithoutCertificates needs --tlsCAFile "
                   "(without it no client certificate is asked for)\n");
      return 2;
    }
    StatusOr<std::shared_ptr<TlsContext>> loaded = TlsContext::Create(tls);
    if (!loaded.ok()) {
      std::fprintf(stderr, "rockdoc-serve: %s\n", std::string(loaded.status().message()).c_str());
      return 2;
    }
  }
  if (config.tcp && !IsLoopback(options.bind_ip)) {
    if (!options.auth) {
      std::fprintf(stderr,
                   "rockdoc-serve: refusing to bind '%s': it is not a loopback address, and "
                   "without --auth anyone who can reach it could read and change every "
                   "database. Give --auth (SCRAM users), or bind 127.0.0.1 or ::1, or "
                   "use --unix PATH (with --no-tcp), and reach it through an SSH tunnel.\n",
                   options.bind_ip.c_str());
      return 2;
    }
    if (tls.mode == TlsMode::kDisabled) {
      std::fprintf(stderr,
                   "rockdoc-serve: WARNING: listening on '%s' without TLS: passwords are never "
                   "sent (SCRAM), but documents and commands cross the network in clear. Give "
                   "--tlsMode requireTLS, or use an SSH tunnel or a private network.\n",
                   options.bind_ip.c_str());
    } else if (tls.mode != TlsMode::kRequireTLS) {
      std::fprintf(stderr,
                   "rockdoc-serve: WARNING: listening on '%s' with --tlsMode %s: clients "
                   "that do not use TLS are served too, in clear. Give --tlsMode requireTLS "
                   "to refuse them.\n",
                   options.bind_ip.c_str(), TlsModeName(tls.mode));
    }
  }
  ClientOptions client_options;
  if (config.enable_encryption != !config.encryption_key_file.empty()) {
    std::fprintf(stderr, "%s",
                 config.enable_encryption
                     ? "rockdoc-serve: --enableEncryption needs --encryptionKeyFile (rockdoc "
                       "reads the key from a local key file; KMIP and Vault are not "
                       "supported)\n"
                     : "rockdoc-serve: --encryptionKeyFile requires --enableEncryption, as "
                       "mongod's\n");
    return 2;
  }
  if (config.enable_encryption) {
    StatusOr<std::string> key = EncryptionKeyFromFile(config.encryption_key_file);
    if (!key.ok()) {
      std::fprintf(stderr, "rockdoc-serve: %s\n", std::string(key.status().message()).c_str());
      return 2;
    }
    client_options.encryption_key = std::move(key).value();
  }
  // Drivers' watch() needs the oplog a replica set has: the change log.
  client_options.change_log = true;
  if (config.oplog_size_mb > 0) client_options.change_log_max_bytes = config.oplog_size_mb << 20;
  client_options.change_log_min_retention_hours = config.oplog_min_retention_hours;
  if (cache_gb > 0) {
    client_options.block_cache_bytes = static_cast<size_t>(cache_gb * (uint64_t{1} << 30));
  } else if (memory_limit_mb > 0) {
    client_options.block_cache_bytes =
        internal::BlockCacheBytesForMemory(static_cast<uint64_t>(memory_limit_mb) << 20);
  }
  if (memory_limit_mb > 0) {
    options.max_message_bytes_in_flight = (memory_limit_mb << 20) / 4;
    // The record cache within the bound too: an eighth at most.
    client_options.record_cache_bytes = std::min<size_t>(
        client_options.record_cache_bytes, static_cast<size_t>(memory_limit_mb << 20) / 8);
  }
  // getCmdLineOpts' answer: the arguments (the caller's), and the options
  // in mongod's configuration shape.
  {
    BsonBuilder parsed;
    parsed.OpenDocument("net");
    if (!options.bind_ip.empty()) {
      parsed.AppendString("bindIp", options.bind_ip);
      parsed.AppendInt32("port", options.port);
    }
    parsed.AppendInt32("maxIncomingConnections", options.max_connections);
    if (!options.unix_socket.empty()) {
      parsed.OpenDocument("unixDomainSocket");
      parsed.AppendString("pathPrefix", options.unix_socket);
      parsed.Close();
    }
    if (tls.mode != TlsMode::kDisabled) {  // mongod's net.tls, its password redacted as mongod's
      parsed.OpenDocument("tls");
      parsed.AppendString("mode", TlsModeName(tls.mode));
      parsed.AppendString("certificateKeyFile", tls.certificate_key_file);
      if (!tls.certificate_key_file_password.empty()) {
        parsed.AppendString("certificateKeyFilePassword", "<password>");
      }
      if (!tls.ca_file.empty()) parsed.AppendString("CAFile", tls.ca_file);
      if (tls.allow_connections_without_certificates) {
        parsed.AppendBool("allowConnectionsWithoutCertificates", true);
      }
      parsed.Close();
    }
    parsed.Close();
    if (options.auth || config.enable_encryption) {
      parsed.OpenDocument("security");
      if (options.auth) parsed.AppendString("authorization", "enabled");
      if (config.enable_encryption) {
        parsed.AppendBool("enableEncryption", true);
        parsed.AppendString("encryptionKeyFile", config.encryption_key_file);
      }
      parsed.Close();
    }
    if (!options.repl_set.empty() || config.oplog_size_mb > 0) {
      parsed.OpenDocument("replication");
      if (config.oplog_size_mb > 0) parsed.AppendInt64("oplogSizeMB", config.oplog_size_mb);
      if (!options.repl_set.empty()) parsed.AppendString("replSet", options.repl_set);
      parsed.Close();
    }
    parsed.OpenDocument("storage");
    parsed.AppendString("dbPath", db);
    if (config.oplog_min_retention_hours > 0) {
      parsed.AppendDouble("oplogMinRetentionHours", config.oplog_min_retention_hours);
    }
    if (cache_gb > 0) {
      parsed.OpenDocument("wiredTiger");
      parsed.OpenDocument("engineConfig");
      parsed.AppendDouble("cacheSizeGB", cache_gb);
      parsed.Close();
      parsed.Close();
    }
    parsed.Close();
    options.parsed = std::move(parsed).Build();
  }
  BoundAllocator();
  // SIGINT and SIGTERM are taken by sigwait below, in this thread only:
  // blocked before any thread starts, so that every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // Descriptors: the soft limit raised to the hard one, then shared
  // between connections and the engine's files (PlanDescriptors).
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) {
    std::fprintf(stderr, "rockdoc-serve: getrlimit: %s\n", std::strerror(errno));
    return 1;
  }
  if (files.rlim_cur < files.rlim_max) {
    rlimit raised = files;
    raised.rlim_cur = files.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) files = raised;
  }
  const int64_t limit =
      files.rlim_cur == RLIM_INFINITY
          ? int64_t{1} << 30
          : static_cast<int64_t>(std::min<rlim_t>(files.rlim_cur, rlim_t{1} << 30));
  StatusOr<DescriptorBudget> budget = PlanDescriptors(limit, options.max_connections);
  if (!budget.ok()) {
    std::fprintf(stderr, "rockdoc-serve: %s\n", std::string(budget.status().message()).c_str());
    return 1;
  }
  if (budget->connections < options.max_connections) {
    std::fprintf(stderr,
                 "rockdoc-serve: serving at most %d connections, not %d: 80%% of the "
                 "open-file limit (%lld) at most, and the database keeps the rest\n",
                 budget->connections, options.max_connections, static_cast<long long>(limit));
    options.max_connections = budget->connections;
  }
  client_options.max_open_files = budget->engine_files;
  StatusOr<std::unique_ptr<Client>> client = Client::Open(db, client_options);
  if (!client.ok()) {
    std::fprintf(stderr, "rockdoc-serve: cannot open '%s': %s\n", db.c_str(),
                 client.status().ToString().c_str());
    return 1;
  }
  StatusOr<std::unique_ptr<Server>> server = Server::Start(client->get(), options);
  if (!server.ok()) {
    std::fprintf(stderr, "rockdoc-serve: %s\n", server.status().ToString().c_str());
    return 1;
  }
  if (!options.bind_ip.empty()) {
    const bool v6 = options.bind_ip.find(':') != std::string::npos;
    std::printf("rockdoc-serve: listening on %s%s%s:%d\n", v6 ? "[" : "",
                options.bind_ip.c_str(), v6 ? "]" : "", (*server)->port());
  }
  if (!options.unix_socket.empty()) {
    std::printf("rockdoc-serve: listening on unix:%s\n", options.unix_socket.c_str());
  }
  if (!options.repl_set.empty()) {
    std::printf("rockdoc-serve: replica set %s of one member, %s (PRIMARY)\n",
                options.repl_set.c_str(), ReplicaSetHost(options, (*server)->port()).c_str());
  }
  const std::string tls_text = tls.mode == TlsMode::kDisabled
                                   ? std::string("no TLS")
                                   : std::string("TLS ") + TlsModeName(tls.mode) +
                                         (tls.ca_file.empty() ? ""
                                          : tls.allow_connections_without_certificates
                                              ? ", client certificates checked when given"
                                              : ", client certificates required");
  std::printf("rockdoc-serve: serving %s (%s, %s)\n", db.c_str(),
              options.auth ? "SCRAM users required" : "no authentication: loopback only",
              tls_text.c_str());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::printf("rockdoc-serve: %s: shutting down\n", strsignal(signal_number));
  std::fflush(stdout);
  (*server)->Shutdown();
  server->reset();
  Status closed = (*client)->Close();
  if (!closed.ok()) {
    std::fprintf(stderr, "rockdoc-serve: closing the database: %s\n",
                 closed.ToString().c_str());
    return 1;
  }
  std::printf("rockdoc-serve: shut down cleanly\n");
  return 0;
}

}  // namespace rockdoc::wire

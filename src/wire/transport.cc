#include "wire/transport.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace rockdoc::wire {

namespace {

// How often a waiting thread looks at the stop flag.
constexpr int kSliceMs = 100;

int64_t MsUntil(Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
}

void MakeNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && !(flags & O_NONBLOCK)) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// OpenSSL's queued errors for this thread, as one line (and the queue
// emptied, so that the next call on this thread starts clean).
std::string OpenSslErrors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out.empty() ? "no reason given" : out;
}

class Plain final : public Transport {
 public:
  explicit Plain(int fd) : Transport(fd) { MakeNonBlocking(fd); }

  Io ReadFull(char* out, size_t n, Clock::time_point deadline) override {
    while (n > 0) {
      Io w = WaitFor(fd(), POLLIN, deadline, nullptr);
      if (w != Io::kOk) return w;
      const ssize_t got = recv(fd(), out, n, 0);
      if (got == 0) return Io::kClosed;
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return errno == ECONNRESET ? Io::kClosed : Io::kError;
      }
      out += got;
      n -= static_cast<size_t>(got);
    }
    return Io::kOk;
  }

  Io WriteFull(std::string_view bytes, Clock::time_point deadline) override {
    while (!bytes.empty()) {
      Io w = WaitFor(fd(), POLLOUT, deadline, nullptr);
      if (w != Io::kOk) return w;
      const ssize_t sent = send(fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return Io::kClosed;
      }
      bytes.remove_prefix(static_cast<size_t>(sent));
    }
    return Io::kOk;
  }
};

// OpenSSL's own socket BIO writes with write(2), which raises SIGPIPE on a
// connection the client closed: that would end a process embedding the
// server (rockdoc-serve ignores SIGPIPE; a test or an application may
// not). This one sends with MSG_NOSIGNAL, and reads with recv.
int BioWrite(BIO* b, const char* data, int len) {
  BIO_clear_retry_flags(b);
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b)));
  const ssize_t n = send(fd, data, static_cast<size_t>(len), MSG_NOSIGNAL);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) BIO_set_retry_write(b);
  return static_cast<int>(n);
}

int BioRead(BIO* b, char* data, int len) {
  BIO_clear_retry_flags(b);
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(b)));
  const ssize_t n = recv(fd, data, static_cast<size_t>(len), 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) BIO_set_retry_read(b);
  return static_cast<int>(n);
}

long BioCtrl(BIO* /*b*/, int cmd, long /*num*/, void* /*ptr*/) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;  // nothing is buffered here
}

// A BIO over `fd` (not owned) that never raises SIGPIPE.
BIO* SocketBio(int fd) {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rockdoc socket");
    BIO_meth_set_write(m, BioWrite);
    BIO_meth_set_read(m, BioRead);
    BIO_meth_set_ctrl(m, BioCtrl);
    return m;
  }();
  BIO* b = BIO_new(method);
  if (b == nullptr) return nullptr;
  BIO_set_data(b, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  BIO_set_init(b, 1);
  return b;
}

// What to do after an SSL call on `fd` that did not complete: wait for the
// socket as OpenSSL asks (kOk: call again), or the connection's end.
Io AfterSsl(SSL* ssl, int fd, int rc, Clock::time_point deadline) {
  switch (SSL_get_error(ssl, rc)) {
    case SSL_ERROR_WANT_READ:
      return WaitFor(fd, POLLIN, deadline, nullptr);
    case SSL_ERROR_WANT_WRITE:
      return WaitFor(fd, POLLOUT, deadline, nullptr);
    case SSL_ERROR_ZERO_RETURN:  // the client's close_notify
      return Io::kClosed;
    case SSL_ERROR_SYSCALL:  // EOF or a reset without close_notify
      ERR_clear_error();
      return Io::kClosed;
    default:
      ERR_clear_error();
      return Io::kError;
  }
}

class Tls final : public Transport {
 public:
  Tls(int fd, SSL* ssl) : Transport(fd), ssl_(ssl) {}
  ~Tls() override {
    // One close_notify, not waited for: the socket closes next either way.
    if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
    ERR_clear_error();
    SSL_free(ssl_);
  }

  Io ReadFull(char* out, size_t n, Clock::time_point deadline) override {
    while (n > 0) {
      size_t got = 0;
      const int rc = SSL_read_ex(ssl_, out, n, &got);
      if (rc == 1) {
        out += got;
        n -= got;
        continue;
      }
      Io w = AfterSsl(ssl_, fd(), rc, deadline);
      if (w != Io::kOk) return w;
    }
    return Io::kOk;
  }

  Io WriteFull(std::string_view bytes, Clock::time_point deadline) override {
    while (!bytes.empty()) {
      size_t sent = 0;
      // Retried with the same buffer after WANT_WRITE, as OpenSSL requires.
      const int rc = SSL_write_ex(ssl_, bytes.data(), bytes.size(), &sent);
      if (rc == 1) {
        bytes.remove_prefix(sent);
        continue;
      }
      Io w = AfterSsl(ssl_, fd(), rc, deadline);
      if (w != Io::kOk) return w;
    }
    return Io::kOk;
  }

  bool Buffered() const override { return SSL_pending(ssl_) > 0; }

 private:
  SSL* ssl_;
};

// The password of an encrypted key, handed to OpenSSL while the key loads.
int PasswordCallback(char* buf, int size, int /*rwflag*/, void* userdata) {
  const std::string* password = static_cast<const std::string*>(userdata);
  if (password == nullptr || password->size() > static_cast<size_t>(size)) return 0;
  std::memcpy(buf, password->data(), password->size());
  return static_cast<int>(password->size());
}

Status Readable(const std::string& flag, const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    return Status(ErrorCode::kBadValue,
                  "cannot read " + flag + " '" + path + "': " + std::strerror(errno));
  }
  std::fclose(f);
  return Status::OK();
}

}  // namespace

const char* IoName(Io io) {
  switch (io) {
    case Io::kOk:
      return "ok";
    case Io::kClosed:
      return "closed by the client";
    case Io::kTimeout:
      return "timed out";
    case Io::kStopped:
      return "server shutting down";
    case Io::kError:
      return "socket error";
  }
  return "?";
}

const char* TlsModeName(TlsMode mode) {
  switch (mode) {
    case TlsMode::kDisabled:
      return "disabled";
    case TlsMode::kAllowTLS:
      return "allowTLS";
    case TlsMode::kPreferTLS:
      return "preferTLS";
    case TlsMode::kRequireTLS:
      return "requireTLS";
  }
  return "?";
}

StatusOr<TlsMode> ParseTlsMode(std::string_view name) {
  for (TlsMode m : {TlsMode::kDisabled, TlsMode::kAllowTLS, TlsMode::kPreferTLS,
                    TlsMode::kRequireTLS}) {
    if (name == TlsModeName(m)) return m;
  }
  return Status(ErrorCode::kBadValue, "--tlsMode must be disabled, allowTLS, preferTLS or "
                                      "requireTLS, not '" + std::string(name) + "'");
}

Io WaitFor(int fd, short events, Clock::time_point deadline, const std::atomic<bool>* stopping) {
  for (;;) {
    if (stopping != nullptr && stopping->load()) return Io::kStopped;
    const int64_t left = MsUntil(deadline);
    if (left <= 0) return Io::kTimeout;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, kSliceMs)));
    if (n < 0 && errno != EINTR) return Io::kError;
    if (n > 0) return Io::kOk;  // readable, writable, or hung up: the call says which
  }
}

Io Transport::WaitReadable(Clock::time_point deadline, const std::atomic<bool>* stopping) const {
  if (Buffered()) return Io::kOk;
  return WaitFor(fd_, POLLIN, deadline, stopping);
}

bool Transport::InputWaiting() const {
  if (Buffered()) return true;
  pollfd p{fd_, POLLIN, 0};
  return poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

bool Transport::PeerClosed() const {
  if (Buffered()) return false;
  char b;
  const ssize_t got = recv(fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT);
  return got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN);
}

std::unique_ptr<Transport> PlainTransport(int fd) { return std::make_unique<Plain>(fd); }

bool LooksLikeTlsClientHello(std::string_view head) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
  return head.size() >= kTlsSniffBytes && byte(0) == kTlsHandshakeByte && byte(1) == 3 &&
         byte(2) <= 4 && byte(5) == 1;
}

StatusOr<std::shared_ptr<TlsContext>> TlsContext::Create(const TlsOptions& options) {
  const std::string& pem = options.certificate_key_file;
  if (pem.empty()) {
    return Status(ErrorCode::kBadValue, std::string("--tlsMode ") + TlsModeName(options.mode) +
                                            " needs --tlsCertificateKeyFile PEM (the "
                                            "server's certificate and its key)");
  }
  Status s = Readable("--tlsCertificateKeyFile", pem);
  if (!s.ok()) return s;
  if (!options.ca_file.empty()) {
    s = Readable("--tlsCAFile", options.ca_file);
    if (!s.ok()) return s;
  }
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status(ErrorCode::kInternalError, "SSL_CTX_new: " + OpenSslErrors());
  std::shared_ptr<TlsContext> context(new TlsContext(ctx));
  const auto fail = [&](const std::string& what) {
    return Status(ErrorCode::kBadValue, what + ": " + OpenSslErrors());
  };
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // No renegotiation (a client could make the server repeat its costliest
  // work at will); the server's order of ciphers.
  // A client that closes without close_notify (most drivers) has just
  // closed: the wire protocol's messages carry their own length, so no
  // truncation can go unseen.
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                               SSL_OP_IGNORE_UNEXPECTED_EOF);
  static const unsigned char kSessionContext[] = "rockdoc-serve";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);

  if (SSL_CTX_use_certificate_chain_file(ctx, pem.c_str()) != 1) {
    return fail("--tlsCertificateKeyFile '" + pem + "' holds no PEM certificate");
  }
  SSL_CTX_set_default_passwd_cb(ctx, PasswordCallback);
  SSL_CTX_set_default_passwd_cb_userdata(
      ctx, const_cast<std::string*>(&options.certificate_key_file_password));
  const int key_rc = SSL_CTX_use_PrivateKey_file(ctx, pem.c_str(), SSL_FILETYPE_PEM);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);  // the password is not kept
  if (key_rc != 1 && ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
    return fail("--tlsCertificateKeyFile '" + pem + "': the key does not match the certificate");
  }
  if (key_rc != 1) {
    return fail("--tlsCertificateKeyFile '" + pem +
                "' holds no private key that can be read (for an encrypted key, "
                "--tlsCertificateKeyFilePassword)");
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return fail("--tlsCertificateKeyFile '" + pem + "': the key does not match the certificate");
  }
  if (options.ca_file.empty()) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    return context;
  }
  if (SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr) != 1) {
    return fail("--tlsCAFile '" + options.ca_file + "' holds no PEM certificate");
  }
  // The CAs named to clients in the CertificateRequest.
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.ca_file.c_str());
  if (names == nullptr) {
    return fail("--tlsCAFile '" + options.ca_file + "' holds no PEM certificate");
  }
  SSL_CTX_set_client_CA_list(ctx, names);
  SSL_CTX_set_verify(ctx,
                     options.allow_connections_without_certificates
                         ? SSL_VERIFY_PEER
                         : SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                     nullptr);
  return context;
}

TlsContext::~TlsContext() { SSL_CTX_free(static_cast<SSL_CTX*>(ctx_)); }

StatusOr<std::unique_ptr<Transport>> TlsContext::Accept(int fd, Clock::time_point deadline) const {
  MakeNonBlocking(fd);
  ERR_clear_error();
  SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ctx_));
  BIO* bio = ssl == nullptr ? nullptr : SocketBio(fd);
  if (bio == nullptr) {
    SSL_free(ssl);
    return Status(ErrorCode::kOperationFailed, "TLS: " + OpenSslErrors());
  }
  SSL_set_bio(ssl, bio, bio);  // the SSL owns the BIO from here
  for (;;) {
    const int rc = SSL_accept(ssl);
    if (rc == 1) break;
    const int error = SSL_get_error(ssl, rc);
    Io w = Io::kError;
    std::string reason;
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
      w = WaitFor(fd, error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, nullptr);
      if (w == Io::kOk) continue;
      reason = IoName(w);
    } else if (error == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
      reason = IoName(Io::kClosed);
    } else {
      reason = OpenSslErrors();
      const long verify = SSL_get_verify_result(ssl);
      if (verify != X509_V_OK) {
        reason += std::string(" (client certificate: ") +
                  X509_verify_cert_error_string(verify) + ")";
      }
    }
    ERR_clear_error();
    SSL_free(ssl);
    return Status(ErrorCode::kOperationFailed, "TLS handshake: " + reason);
  }
  return std::unique_ptr<Transport>(new Tls(fd, ssl));
}

}  // namespace rockdoc::wire

// libFuzzer: arbitrary bytes at rockdoc serve's TLS front door, through the
// real server (wire/server.h) on a loopback port under --tlsMode allowTLS,
// with a certificate made at startup (OpenSSL's API, in memory and a
// scratch file). An input goes one of two ways (its last byte's bit 1):
// - over TLS: sent as one wire message through a TLS connection kept open
//   across inputs (reopened when the server closes it), then a ping; the
//   ping's reply must come back over TLS, or the server must close the
//   connection (a message it refuses). This is the TLS-terminated path:
//   records decrypted, framed by the server's reads, run, answered.
// - in clear: the bytes as they are on a fresh connection, then end of
//   input: what the server peeks at to tell TLS from plain text, and
//   OpenSSL's ClientHello parser when they look like one. The server must
//   close the connection (or answer and then close at the end of input).
// Either way the server must still serve a ping over TLS afterwards.
// As wire_message_fuzz.cc, a header's length is patched to the input's size
// when its last byte is odd. Nothing may crash, hang (the message timeout
// is 200 ms, the bound of every wait here) or be misread.
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>

#include "common/endian.h"
#include "fuzz_util.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "wire/message.h"
#include "wire/server.h"

namespace {

using rockdoc::fuzz::Fail;
using rockdoc::fuzz::Hex;
namespace wire = rockdoc::wire;

constexpr int32_t kPingId = 0x7fff0001;
// How long a reply is waited for before the connection is given up: far
// past any reply's time, short beside libFuzzer's -timeout.
constexpr int kReplyWaitMs = 5000;

// A self-signed P-256 certificate and its key, as one PEM file in `dir`.
std::string MakeCertificate(const std::string& dir) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), 0);
  X509_gmtime_adj(X509_getm_notAfter(x), 7 * 86400);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  if (key == nullptr || X509_sign(x, key, EVP_sha256()) == 0) std::abort();
  const std::string path = dir + "/server.pem";
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr || PEM_write_X509(f, x) != 1 ||
      PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    std::abort();
  }
  std::fclose(f);
  X509_free(x);
  EVP_PKEY_free(key);
  return path;
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) std::abort();
  return fd;
}

// Whether an SSL call that returned `rc` is to be made again: libFuzzer's
// timer (SIGALRM, each second) interrupts a blocking recv or send, which
// OpenSSL then reports as WANT_READ / WANT_WRITE even on a blocking socket.
bool Retry(SSL* ssl, int rc) {
  const int e = SSL_get_error(ssl, rc);
  return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ||
         (e == SSL_ERROR_SYSCALL && errno == EINTR);
}

struct Harness {
  std::unique_ptr<rockdoc::Client> client;
  std::unique_ptr<wire::Server> server;
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;  // the open TLS connection, or null
  int fd = -1;

  Harness() {
    std::string dir = (std::filesystem::temp_directory_path() / "rockdoc-tls-fuzz-XXXXXX");
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    auto c = rockdoc::Client::Open(dir + "/db");
    if (!c.ok()) std::abort();
    client = std::move(*c);
    wire::ServerOptions options;
    options.port = 0;
    options.message_timeout_ms = 200;
    options.idle_timeout_ms = 60 * 1000;
    options.tls.mode = wire::TlsMode::kAllowTLS;
    options.tls.certificate_key_file = MakeCertificate(dir);
    auto s = wire::Server::Start(client.get(), options);
    if (!s.ok()) std::abort();
    server = std::move(*s);
    ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);  // the server's certificate is ours
  }

  void Disconnect() {
    if (ssl != nullptr) SSL_free(ssl);
    if (fd >= 0) close(fd);
    ssl = nullptr;
    fd = -1;
    ERR_clear_error();
  }

  void EnsureConnected() {
    if (ssl != nullptr) return;
    fd = Connect(server->port());
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    int rc = SSL_connect(ssl);
    while (rc != 1 && Retry(ssl, rc)) rc = SSL_connect(ssl);
    if (rc != 1) {
      const int error = SSL_get_error(ssl, rc);
      const int saved_errno = errno;
      ERR_print_errors_fp(stderr);
      Fail("the TLS handshake with the server failed", "SSL_get_error " + std::to_string(error),
           std::strerror(saved_errno));
    }
  }

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    if (bytes.empty()) return true;
    for (;;) {
      const int rc = SSL_write_ex(ssl, bytes.data(), bytes.size(), &sent);
      if (rc == 1) return true;
      if (!Retry(ssl, rc)) return false;
    }
  }

  // The next message over TLS, or "" when the server closed.
  std::string Receive() {
    std::string m;
    if (!ReadN(16, &m)) return "";
    const int32_t length = rockdoc::LoadLE<int32_t>(reinterpret_cast<const uint8_t*>(m.data()));
    if (length < 16 || length > 48 * 1000 * 1000) Fail("a reply's length is out of range", Hex(m), "");
    if (!ReadN(static_cast<size_t>(length) - 16, &m)) return "";
    return m;
  }

  bool ReadN(size_t n, std::string* out) {
    while (n > 0) {
      char buf[65536];
      size_t got = 0;
      // A message whose length claims more than it has swallows the ping
      // that follows it, and then nothing more comes: after a while the
      // connection is given up (as refused), never waited on forever.
      pollfd p{fd, POLLIN, 0};
      if (SSL_pending(ssl) == 0 && poll(&p, 1, kReplyWaitMs) == 0) return false;
      const int rc = SSL_read_ex(ssl, buf, std::min(n, sizeof buf), &got);
      if (rc != 1) {
        if (Retry(ssl, rc)) continue;
        return false;
      }
      out->append(buf, got);
      n -= got;
    }
    return true;
  }

  // Sends `message` and a ping over TLS; reads up to the ping's reply.
  // False when the server closed the connection first.
  bool SendAndPing(const std::string& message) {
    EnsureConnected();
    const std::string ping = wire::BuildOpMsg(kPingId, 0, 0,
                                              rockdoc::FromJson(R"({"ping": 1, "$db": "admin"})")
                                                  .value());
    if (!Send(message) || !Send(ping)) return false;
    for (;;) {
      const std::string reply = Receive();
      if (reply.empty()) return false;
      auto header = wire::ParseHeader(reply);
      if (!header.ok()) Fail("a reply over TLS has no valid header", Hex(message), Hex(reply));
      if (header->response_to == kPingId) return true;
    }
  }
};

Harness& TheHarness() {
  static Harness* harness = new Harness();  // lives as long as the process
  return *harness;
}

// The bytes in clear on a fresh connection, then the end of input: the
// server must close it.
void SendInClear(const std::string& bytes, int port) {
  const int fd = Connect(port);
  size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server closed already
    at += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 60 * 1000) <= 0) Fail("the server kept a connection open", Hex(bytes), "");
    char buf[4096];
    if (recv(fd, buf, sizeof buf, 0) <= 0) break;
  }
  close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  Harness& h = TheHarness();
  std::string message(reinterpret_cast<const char*>(data), size);
  if (size >= 16 && (data[size - 1] & 1) &&
      rockdoc::LoadLE<int32_t>(data) != static_cast<int32_t>(size)) {
    rockdoc::StoreLE<int32_t>(reinterpret_cast<uint8_t*>(message.data()),
                              static_cast<int32_t>(size));
  }
  if (size > 0 && (data[size - 1] & 2)) {
    SendInClear(message, h.server->port());
  } else if (!h.SendAndPing(message)) {
    h.Disconnect();  // the server refused the message: a fresh connection next
  }
  // The server still serves over TLS.
  if (!h.SendAndPing("")) {
    Fail("the server no longer answers a ping over TLS", Hex(message), "");
  }
  return 0;
}

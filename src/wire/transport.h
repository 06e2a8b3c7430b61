// wire/transport.h: the bytes of one connection, in clear or over TLS
// (OpenSSL's libssl), behind one interface, so that the server's reads,
// writes, idle and message timeouts are the same code for both.
//
// A connection's socket is non-blocking once it has a Transport: every read
// and write waits with poll(2) on the descriptor up to a deadline, so a
// client that stops mid-message, or mid-handshake, costs at most the
// message timeout. TLS reads may want to write (and writes to read): the
// TLS transport waits for what OpenSSL asks (SSL_ERROR_WANT_READ / _WRITE),
// and counts the bytes it has decrypted and not yet returned (SSL_pending)
// as readable, which poll cannot see.
//
// TlsContext: the server's certificate and key (one PEM file, as mongod's
// --tlsCertificateKeyFile), the CA that client certificates must chain to
// (--tlsCAFile), TLS 1.2 and newer only. Made once at startup, where every
// error in the files is reported; shared read-only by all connections
// (OpenSSL's SSL_CTX is safe to use from many threads once set up).
//
// Thread safety: a Transport belongs to its connection's thread.
#ifndef ROCKDOC_WIRE_TRANSPORT_H_
#define ROCKDOC_WIRE_TRANSPORT_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "rockdoc/status.h"

namespace rockdoc::wire {

using Clock = std::chrono::steady_clock;

enum class Io { kOk, kClosed, kTimeout, kStopped, kError };

// What an Io means in a log line ("timed out", "closed by the client").
const char* IoName(Io io);

// mongod's --tlsMode. The server accepts both kinds of connection under
// kAllowTLS and kPreferTLS (they differ, in mongod, only for the
// connections it makes, and rockdoc-serve makes none).
enum class TlsMode { kDisabled, kAllowTLS, kPreferTLS, kRequireTLS };

// "disabled", "allowTLS", "preferTLS", "requireTLS" (mongod's spellings).
const char* TlsModeName(TlsMode mode);
// The mode named `name`; BadValue for anything else.
StatusOr<TlsMode> ParseTlsMode(std::string_view name);

struct TlsOptions {
  TlsMode mode = TlsMode::kDisabled;
  std::string certificate_key_file;           // PEM: the certificate (chain) and its key
  std::string certificate_key_file_password;  // for an encrypted key; "" for none
  // PEM: the CA(s) a client's certificate must be signed by; "" for no
  // client certificates.
  std::string ca_file;
  // With ca_file: a client without a certificate is served too (one that
  // presents a certificate must still present a valid one).
  bool allow_connections_without_certificates = false;
};

// Waits until `fd` is readable (or writable: `events`), the deadline
// passes, or `*stopping` becomes true (when `stopping` is not null).
Io WaitFor(int fd, short events, Clock::time_point deadline, const std::atomic<bool>* stopping);

class Transport {
 public:
  virtual ~Transport() = default;
  int fd() const { return fd_; }
  // Reads exactly `n` bytes by `deadline`.
  virtual Io ReadFull(char* out, size_t n, Clock::time_point deadline) = 0;
  // Writes all of `bytes` by `deadline`.
  virtual Io WriteFull(std::string_view bytes, Clock::time_point deadline) = 0;
  // Bytes already read from the socket and not yet returned (TLS's
  // decrypted records), which poll on the descriptor does not report.
  virtual bool Buffered() const { return false; }
  // Waits until there is something to read (Buffered() or the socket), as
  // WaitFor.
  Io WaitReadable(Clock::time_point deadline, const std::atomic<bool>* stopping) const;
  // Whether the client has sent something not read yet (without waiting).
  bool InputWaiting() const;
  // Whether the client closed its end, looking without waiting or reading
  // (what an awaitable hello's wait checks). False while it has sent
  // something, or nothing.
  bool PeerClosed() const;

 protected:
  explicit Transport(int fd) : fd_(fd) {}

 private:
  int fd_;
};

// The socket in clear. Makes `fd` non-blocking; does not own it.
std::unique_ptr<Transport> PlainTransport(int fd);

class TlsContext {
 public:
  // Loads the files `options` names and checks them: the certificate and
  // key readable, parseable and matching, the CA file readable and holding
  // at least one certificate. BadValue naming the flag and the file
  // (--tlsCertificateKeyFile, --tlsCAFile) and OpenSSL's reason otherwise.
  static StatusOr<std::shared_ptr<TlsContext>> Create(const TlsOptions& options);
  ~TlsContext();

  // The server side of a TLS handshake over `fd` (non-blocking from here;
  // not owned), bounded by `deadline`. OperationFailed with OpenSSL's
  // reason (a client certificate missing or from another CA, a protocol
  // older than TLS 1.2, bytes that are no ClientHello) or the Io's name.
  StatusOr<std::unique_ptr<Transport>> Accept(int fd, Clock::time_point deadline) const;

 private:
  explicit TlsContext(void* ctx) : ctx_(ctx) {}
  void* ctx_;  // SSL_CTX, kept out of this header (only wire/ links libssl)
};

// Whether the first bytes a client sent (`head`, up to kTlsSniffBytes)
// begin a TLS ClientHello: a handshake record (0x16) of TLS 1.0-1.3's record
// version (3, 1..4) whose message is a ClientHello (1). What allowTLS and
// preferTLS look at to tell TLS from the wire protocol in clear, as mongod.
// A message in clear matches only when its length is 0x000X0316 (X in 1..4:
// 66,326 bytes and up, 65,536 apart) and its requestID's second byte is 1;
// such a client gets a TLS alert and is closed, never misread.
inline constexpr size_t kTlsSniffBytes = 6;
inline constexpr unsigned char kTlsHandshakeByte = 0x16;  // a handshake record's type
bool LooksLikeTlsClientHello(std::string_view head);

}  // namespace rockdoc::wire

#endif  // ROCKDOC_WIRE_TRANSPORT_H_

// rockdoc serve's TLS (src/wire/transport.h, ServerOptions::tls) against an
// in-process server, with an OpenSSL client: commands over TLS (a large
// one too, many records each way), plain text refused under requireTLS
// and served under allowTLS, client certificates with a CA file, and the
// bad input a TLS port meets: bytes that begin like a ClientHello and are
// not one, a client that stops mid-handshake, mid-message or stays idle
// (each closed by the server's timeouts, after which the server still
// serves). The certificates are made by the openssl command into a scratch
// directory (the test skips without it). No time is asserted: each check
// is "the server closed the connection", and the timeouts only bound how
// long that takes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "common/endian.h"
#include "rockdoc/json.h"
#include "test_util.h"
#include "wire/message.h"
#include "wire/server.h"
#include "wire/transport.h"
#include "wire_reply.h"

namespace rockdoc::wire {
namespace {

using rockdoc::test::Json;
using ::testing::HasSubstr;

// The CA, the server's PEM (SAN 127.0.0.1), a client's from the CA and one
// from another CA, made once for the whole test program.
class Pki {
 public:
  static const Pki* Get() {
    static const Pki pki;  // its directory removed at exit
    return pki.ok_ ? &pki : nullptr;
  }
  std::string Path(const std::string& name) const { return dir_.Sub(name); }

 private:
  Pki() {
    const std::string d = dir_.path();
    const std::string script =
        "set -e; cd '" + d + "'; exec >/dev/null 2>&1\n"
        "ca() { openssl req -x509 -newkey rsa:2048 -nodes -keyout $1.key -out $1.pem -days 2 "
        "-subj \"/CN=rockdoc test $1\"; }\n"
        "cert() { openssl req -newkey rsa:2048 -nodes -keyout $1.key -out $1.csr -subj "
        "\"/CN=$2\"; echo \"$4\" > $1.ext; openssl x509 -req -in $1.csr -CA $3.pem -CAkey "
        "$3.key -CAcreateserial -out $1.crt -days 2 -extfile $1.ext; cat $1.crt $1.key > "
        "$1.pem; }\n"
        "ca ca; ca other-ca\n"
        "cert server 127.0.0.1 ca subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "cert client client ca extendedKeyUsage=clientAuth\n"
        "cert other-client intruder other-ca extendedKeyUsage=clientAuth\n"
        "cat server.crt client.key > mismatch.pem\n";
    std::ofstream(dir_.Sub("make.sh")) << script;
    ok_ = std::system(("sh '" + dir_.Sub("make.sh") + "'").c_str()) == 0;
  }
  rockdoc::test::ScratchDir dir_;
  bool ok_ = false;
};

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Whether the server closes `fd` (reading and dropping what it sends).
// The bound is for a hung server only.
bool ServerCloses(int fd) {
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 120000) <= 0) return false;
    char buf[4096];
    const ssize_t got = recv(fd, buf, sizeof buf, 0);
    if (got <= 0) return true;
  }
}

// A blocking OpenSSL client over one connection.
class TlsClient {
 public:
  // `cert`: a PEM of certificate and key to present, or "" for none.
  TlsClient(int port, const Pki& pki, const std::string& cert = "") {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    SSL_CTX_load_verify_locations(ctx_, pki.Path("ca.pem").c_str(), nullptr);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    if (!cert.empty()) {
      SSL_CTX_use_certificate_chain_file(ctx_, pki.Path(cert).c_str());
      SSL_CTX_use_PrivateKey_file(ctx_, pki.Path(cert).c_str(), SSL_FILETYPE_PEM);
    }
    fd_ = Connect(port);
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    SSL_set1_host(ssl_, "127.0.0.1");
    handshake_ok_ = fd_ >= 0 && SSL_connect(ssl_) == 1;
    ERR_clear_error();
  }
  ~TlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    if (fd_ >= 0) close(fd_);
  }
  bool handshake_ok() const { return handshake_ok_; }
  SSL* ssl() { return ssl_; }
  bool Send(std::string_view bytes) {
    size_t sent = 0;
    return SSL_write_ex(ssl_, bytes.data(), bytes.size(), &sent) == 1;
  }
  std::optional<std::string> Receive() {
    std::string m;
    if (!ReadN(16, &m)) return std::nullopt;
    const int32_t length = LoadLE<int32_t>(reinterpret_cast<const uint8_t*>(m.data()));
    if (length < 16 || !ReadN(length - 16, &m)) return std::nullopt;
    return m;
  }
  // A command's reply, or {"closed": true} when the connection failed.
  Document Command(std::string_view json) { return CommandOf(Json(json)); }
  Document CommandOf(const Document& command) {
    if (!Send(BuildOpMsg(1, 0, 0, command))) return ReplyBody(std::nullopt);
    return ReplyBody(Receive());
  }

 private:
  bool ReadN(size_t n, std::string* out) {
    while (n > 0) {
      char buf[65536];
      size_t got = 0;
      if (SSL_read_ex(ssl_, buf, std::min(n, sizeof buf), &got) != 1) {
        ERR_clear_error();
        return false;
      }
      out->append(buf, got);
      n -= got;
    }
    return true;
  }
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool handshake_ok_ = false;
};

class TlsServerTest : public rockdoc::test::ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    pki_ = Pki::Get();
    if (pki_ == nullptr) GTEST_SKIP() << "the openssl command did not make the certificates";
  }
  void StartServer(TlsMode mode, const std::string& ca = "", bool allow_without = false) {
    ServerOptions options;
    options.port = 0;
    options.message_timeout_ms = 500;
    options.tls.mode = mode;
    options.tls.certificate_key_file = pki_->Path("server.pem");
    if (!ca.empty()) options.tls.ca_file = pki_->Path(ca);
    options.tls.allow_connections_without_certificates = allow_without;
    auto s = Server::Start(client_.get(), options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }
  void TearDown() override { server_.reset(); }
  // A fresh TLS connection still inserts and reads.
  void ExpectServesTls(const std::string& cert = "") {
    TlsClient c(server_->port(), *pki_, cert);
    ASSERT_TRUE(c.handshake_ok());
    Document r = c.Command(R"({"insert": "c", "$db": "d", "documents": [{}]})");
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
    r = c.Command(R"({"count": "c", "$db": "d"})");
    EXPECT_EQ(r.Get("n").Int32(), ++inserted_) << ToJson(r);
  }
  // Whether a hello in clear is answered.
  bool ServesPlain() {
    const int fd = Connect(server_->port());
    const std::string hello = BuildOpMsg(1, 0, 0, Json(R"({"hello": 1, "$db": "admin"})"));
    send(fd, hello.data(), hello.size(), MSG_NOSIGNAL);
    char header[16];
    const bool answered = recv(fd, header, sizeof header, MSG_WAITALL) == sizeof header;
    close(fd);
    return answered;
  }
  const Pki* pki_ = nullptr;
  std::unique_ptr<Server> server_;
  int inserted_ = 0;
};

TEST(TlsSniffTest, OnlyAClientHelloLooksLikeOne) {
  EXPECT_TRUE(LooksLikeTlsClientHello(std::string("\x16\x03\x01\x02\x00\x01", 6)));
  EXPECT_TRUE(LooksLikeTlsClientHello(std::string("\x16\x03\x03\x00\x40\x01", 6)));
  EXPECT_FALSE(LooksLikeTlsClientHello(std::string("\x16\x03\x01", 3)));        // too short
  EXPECT_FALSE(LooksLikeTlsClientHello(std::string("\x16\x03\x01\x02\x00\x02", 6)));  // ServerHello
  EXPECT_FALSE(LooksLikeTlsClientHello(std::string("\x15\x03\x01\x00\x02\x01", 6)));  // an alert
  // A message in clear: its length's low byte, then the next three.
  std::string plain;
  AppendLE<int32_t>(&plain, 0x16);
  AppendLE<int32_t>(&plain, 1);
  EXPECT_FALSE(LooksLikeTlsClientHello(plain.substr(0, 6)));
}

TEST(TlsContextTest, ModesRoundTripAndUnknownOnesAreRefused) {
  for (TlsMode m : {TlsMode::kDisabled, TlsMode::kAllowTLS, TlsMode::kPreferTLS,
                    TlsMode::kRequireTLS}) {
    EXPECT_EQ(ParseTlsMode(TlsModeName(m)).value(), m);
  }
  EXPECT_EQ(ParseTlsMode("sslOnly").status().code(), ErrorCode::kBadValue);
}

TEST(TlsContextTest, BadFilesAreNamedWithTheirFlag) {
  const Pki* pki = Pki::Get();
  if (pki == nullptr) GTEST_SKIP() << "the openssl command did not make the certificates";
  TlsOptions o;
  o.mode = TlsMode::kRequireTLS;
  auto r = TlsContext::Create(o);
  EXPECT_EQ(r.status().code(), ErrorCode::kBadValue);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("needs --tlsCertificateKeyFile"));
  o.certificate_key_file = pki->Path("missing.pem");
  r = TlsContext::Create(o);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("cannot read --tlsCertificateKeyFile"));
  o.certificate_key_file = pki->Path("server.ext");
  r = TlsContext::Create(o);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("holds no PEM certificate"));
  o.certificate_key_file = pki->Path("server.crt");
  r = TlsContext::Create(o);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("holds no private key"));
  o.certificate_key_file = pki->Path("mismatch.pem");
  r = TlsContext::Create(o);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("does not match the certificate"));
  o.certificate_key_file = pki->Path("server.pem");
  o.ca_file = pki->Path("server.ext");
  r = TlsContext::Create(o);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--tlsCAFile"));
  o.ca_file = pki->Path("ca.pem");
  EXPECT_TRUE(TlsContext::Create(o).ok());
}

TEST_F(TlsServerTest, StartRefusesBadFiles) {
  ServerOptions options;
  options.port = 0;
  options.tls.mode = TlsMode::kRequireTLS;
  options.tls.certificate_key_file = pki_->Path("mismatch.pem");
  auto s = Server::Start(client_.get(), options);
  EXPECT_EQ(s.status().code(), ErrorCode::kBadValue);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("does not match"));
}

TEST_F(TlsServerTest, RequireTlsServesTlsAndClosesPlainText) {
  StartServer(TlsMode::kRequireTLS);
  ExpectServesTls();
  EXPECT_FALSE(ServesPlain());
  ExpectServesTls();
  TlsClient c(server_->port(), *pki_);
  ASSERT_TRUE(c.handshake_ok());
  EXPECT_GE(SSL_version(c.ssl()), TLS1_2_VERSION);
}

TEST_F(TlsServerTest, AllowTlsServesBoth) {
  StartServer(TlsMode::kAllowTLS);
  ExpectServesTls();
  EXPECT_TRUE(ServesPlain());
  ExpectServesTls();
}

TEST_F(TlsServerTest, TlsOlderThanOneTwoIsRefused) {
  StartServer(TlsMode::kRequireTLS);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_security_level(ctx, 0);  // so that the client may offer TLS 1.1 at all
  SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_1_VERSION);
  const int fd = Connect(server_->port());
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  EXPECT_NE(SSL_connect(ssl), 1);
  ERR_clear_error();
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  close(fd);
  ExpectServesTls();
}

TEST_F(TlsServerTest, ALargeCommandCrossesManyRecords) {
  StartServer(TlsMode::kRequireTLS);
  TlsClient c(server_->port(), *pki_);
  ASSERT_TRUE(c.handshake_ok());
  const std::string big(4 << 20, 'x');  // 4 MiB: 256 records of 16 KiB
  BsonBuilder doc;
  doc.AppendString("_id", "big").AppendString("s", big);
  BsonBuilder insert;
  insert.AppendString("insert", "c").AppendString("$db", "d");
  insert.OpenArray("documents");
  insert.AppendDocument("0", std::move(doc).Build());
  insert.Close();
  Document r = c.CommandOf(std::move(insert).Build());
  ASSERT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
  r = c.Command(R"({"find": "c", "$db": "d", "filter": {"_id": "big"}})");
  ASSERT_EQ(r.Get("ok").NumberAsDouble(), 1);
  EXPECT_EQ(r.Get("cursor").Document().Get("firstBatch").Document().Get("0").Document()
                .Get("s").String().size(),
            big.size());
}

TEST_F(TlsServerTest, AClientCertificateFromTheCaIsRequired) {
  StartServer(TlsMode::kRequireTLS, "ca.pem");
  ExpectServesTls("client.pem");
  // Without one, or with one from another CA, the server ends the
  // handshake (under TLS 1.3 the client may finish first: its first
  // command then fails).
  for (const std::string cert : {"", "other-client.pem"}) {
    TlsClient c(server_->port(), *pki_, cert);
    if (c.handshake_ok()) {
      EXPECT_TRUE(c.Command(R"({"ping": 1, "$db": "admin"})").view().Has("closed")) << cert;
    }
  }
  ExpectServesTls("client.pem");
}

TEST_F(TlsServerTest, ConnectionsWithoutCertificatesMayBeAllowed) {
  StartServer(TlsMode::kRequireTLS, "ca.pem", /*allow_without=*/true);
  ExpectServesTls();
  ExpectServesTls("client.pem");
  TlsClient c(server_->port(), *pki_, "other-client.pem");
  if (c.handshake_ok()) {
    EXPECT_TRUE(c.Command(R"({"ping": 1, "$db": "admin"})").view().Has("closed"));
  }
}

TEST_F(TlsServerTest, MalformedClientHellosAreClosedAndTheServerServes) {
  StartServer(TlsMode::kAllowTLS);
  const std::string cases[] = {
      std::string("\x16\x03\x01\x00\x20\x01", 6) + std::string(32, '\xff'),  // garbage body
      std::string("\x16\x03\x01\xff\xff\x01", 6) + std::string(100, '\0'),   // a lying length
      std::string("\x16\x03\x01\x00\x04\x01\x00\x00\x00", 9),               // a cut hello
      std::string("\x16\x03", 2),                                            // a cut header
  };
  for (const std::string& bytes : cases) {
    const int fd = Connect(server_->port());
    send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    // The server closes: on the bad bytes at once, or when the handshake
    // (or the first bytes) takes longer than the message timeout.
    EXPECT_TRUE(ServerCloses(fd));
    close(fd);
    ExpectServesTls();
  }
}

TEST_F(TlsServerTest, TimeoutsCloseStalledTlsConnections) {
  StartServer(TlsMode::kRequireTLS);
  {  // After the handshake, half a header: the message timeout.
    TlsClient c(server_->port(), *pki_);
    ASSERT_TRUE(c.handshake_ok());
    ASSERT_TRUE(c.Send(std::string(8, '\x10')));
    EXPECT_FALSE(c.Receive().has_value());
  }
  ExpectServesTls();
  // Idle after the handshake: the idle timeout.
  server_.reset();
  ServerOptions options;
  options.port = 0;
  options.idle_timeout_ms = 300;
  options.tls.mode = TlsMode::kRequireTLS;
  options.tls.certificate_key_file = pki_->Path("server.pem");
  auto s = Server::Start(client_.get(), options);
  ASSERT_TRUE(s.ok()) << s.status();
  server_ = std::move(*s);
  TlsClient c(server_->port(), *pki_);
  ASSERT_TRUE(c.handshake_ok());
  EXPECT_FALSE(c.Receive().has_value());
}

}  // namespace
}  // namespace rockdoc::wire

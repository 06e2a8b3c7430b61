// rockdoc serve's sockets (src/wire/server.h): each class of malformed
// message sent over a real connection, after which another connection must
// still work; the connection bound, the idle and slow-message timeouts, a
// Unix socket, and a shutdown that finishes the request in flight.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include "api/client_internal.h"
#include "command/command.h"
#include "common/endian.h"
#include "rockdoc/json.h"
#include "storage/change_log.h"
#include "storage/engine.h"
#include "test_util.h"
#include "wire/message.h"
#include "wire_reply.h"
#include "wire/server.h"

namespace rockdoc::wire {
namespace {

using rockdoc::test::Json;

class Socket {
 public:
  explicit Socket(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  explicit Socket(const std::string& unix_path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    unix_path.copy(a.sun_path, sizeof a.sun_path - 1);
    ok_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Socket() { close(fd_); }
  bool ok() const { return ok_; }
  void Send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return;  // the server may close first: what the test checks next
      bytes.remove_prefix(n);
    }
  }
  // The next message, or nullopt when the server closed (or nothing came
  // within `timeout_ms`: `*timed_out` says which). The default is a bound
  // for a hung server only, never reached by a slow one.
  std::optional<std::string> Receive(int timeout_ms = 120000, bool* timed_out = nullptr) {
    std::string m;
    if (!ReadN(16, &m, timeout_ms, timed_out)) return std::nullopt;
    const int32_t length = LoadLE<int32_t>(reinterpret_cast<const uint8_t*>(m.data()));
    if (length < 16 || !ReadN(length - 16, &m, timeout_ms, timed_out)) return std::nullopt;
    return m;
  }
  // Whether the server closed the connection (within `timeout_ms`).
  bool Closed(int timeout_ms = 120000) {
    bool timed_out = false;
    std::string m;
    while (ReadN(1, &m, timeout_ms, &timed_out)) {
    }
    return !timed_out;
  }
  // Runs a command over OP_MSG and returns its reply document.
  Document Command(std::string_view json) {
    Send(BuildOpMsg(1, 0, 0, Json(json)));
    return ReplyBody(Receive());
  }

 private:
  bool ReadN(size_t n, std::string* out, int timeout_ms, bool* timed_out) {
    while (n > 0) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, timeout_ms) <= 0) {
        if (timed_out) *timed_out = true;
        return false;
      }
      char buf[65536];
      ssize_t got = recv(fd_, buf, std::min(n, sizeof buf), 0);
      if (got <= 0) return false;
      out->append(buf, got);
      n -= got;
    }
    return true;
  }
  int fd_ = -1;
  bool ok_ = false;
};

std::string Header(int32_t length, int32_t op) {
  std::string m;
  AppendLE<int32_t>(&m, length);
  AppendLE<int32_t>(&m, 1);
  AppendLE<int32_t>(&m, 0);
  AppendLE<int32_t>(&m, op);
  return m;
}

// An OP_MSG whose body is `body` bytes as they are (valid or not).
std::string RawOpMsg(std::string_view body, uint32_t flags = 0) {
  std::string payload;
  AppendLE<uint32_t>(&payload, flags);
  payload += '\0';
  payload += body;
  return Header(static_cast<int32_t>(16 + payload.size()), 2013) + payload;
}

// A message timeout no test can reach on a loaded machine, for tests that
// send many megabytes or pause inside a message.
constexpr int64_t kLargeMessageTimeoutMs = 10 * 60 * 1000;

class ServerTest : public rockdoc::test::ClientTest {
 protected:
  void StartServer(ServerOptions options = {}) {
    options.port = 0;
    if (options.message_timeout_ms == ServerOptions{}.message_timeout_ms) {
      options.message_timeout_ms = 500;
    }
    auto s = Server::Start(client_.get(), options);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    ASSERT_GT(server_->port(), 0);
  }
  // For tests that send many megabytes or pause inside a message.
  void StartPatientServer(ServerOptions options = {}) {
    options.message_timeout_ms = kLargeMessageTimeoutMs;
    StartServer(options);
  }
  void TearDown() override { server_.reset(); }
  // A fresh connection can still insert and read.
  void ExpectServerWorks() {
    Socket s(server_->port());
    ASSERT_TRUE(s.ok());
    Document r = s.Command(R"({"insert": "c", "$db": "d", "documents": [{}]})");
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
    r = s.Command(R"({"count": "c", "$db": "d"})");
    EXPECT_EQ(r.Get("n").Int32(), ++inserted_) << ToJson(r);
  }
  std::unique_ptr<Server> server_;
  int inserted_ = 0;
};

TEST_F(ServerTest, EachMalformedClassLeavesTheServerWorking) {
  StartServer();
  ExpectServerWorks();
  struct Case {
    const char* name;
    std::string bytes;
    bool closes;  // else an error reply with `code`
    int code = 0;
  };
  std::string bad_bson("\x0D\x00\x00\x00\x02s\x00\x30\x00\x00\x00\x00\x00", 13);
  std::string ping = Json(R"({"ping": 1, "$db": "admin"})").bytes();
  std::string bad_checksum = BuildOpMsg(1, 0, kChecksumPresent, Json(R"({"ping": 1, "$db": "a"})"));
  bad_checksum[bad_checksum.size() - 2] ^= 0x40;
  std::string unknown_section = RawOpMsg(ping) + "\x07";
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(unknown_section.data()),
                   static_cast<int32_t>(unknown_section.size()));
  std::string body_lies = RawOpMsg(ping);
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(body_lies.data()) + 21, 4000);
  const Case cases[] = {
      {"length below the header", Header(8, 2013), true},
      {"length negative", Header(-20, 2013), true},
      {"length over 48 MB", Header(48000001, 2013), true},
      {"bad opcode", Header(20, 4242) + "abcd", true},
      {"OP_COMPRESSED", Header(25, 2012) + std::string(9, 'x'), true},
      {"legacy OP_INSERT", Header(20, 2002) + "abcd", true},
      {"invalid BSON", RawOpMsg(bad_bson), false, 22},
      {"unknown section kind", unknown_section, false, 17},
      {"checksum mismatch", bad_checksum, false, 17},
      {"a body length that lies", body_lies, false, 17},
      {"unknown required flag", RawOpMsg(ping, 1u << 5), false, 17},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Socket s(server_->port());
    ASSERT_TRUE(s.ok());
    s.Send(c.bytes);
    if (c.closes) {
      EXPECT_TRUE(s.Closed());
    } else {
      auto reply = s.Receive();
      ASSERT_TRUE(reply.has_value());
      auto msg = ParseOpMsg(*reply);
      ASSERT_TRUE(msg.ok()) << msg.status();
      EXPECT_EQ(msg->body.Get("ok").NumberAsDouble(), 0);
      EXPECT_EQ(msg->body.Get("code").Int32(), c.code) << ToJson(msg->body);
      // The same connection goes on.
      EXPECT_EQ(s.Command(R"({"ping": 1, "$db": "admin"})").Get("ok").NumberAsDouble(), 1);
    }
    ExpectServerWorks();
  }
}

TEST_F(ServerTest, LengthThatLiesTimesOutAndDisconnectsMidMessage) {
  StartServer();
  {
    // Promises 1000 bytes, sends 30: closed after the message timeout.
    Socket s(server_->port());
    s.Send(Header(1000, 2013) + std::string(14, 'x'));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(s.Closed());
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
  }
  {
    Socket s(server_->port());
    s.Send(Header(1000, 2013) + "abc");
  }  // the client goes away mid-message
  ExpectServerWorks();
}

TEST_F(ServerTest, RandomBytesNeverStopTheServer) {
  StartServer();
  std::mt19937 rng(19);
  for (int i = 0; i < 40; ++i) {
    std::string bytes(rng() % 200, '\0');
    for (char& b : bytes) b = static_cast<char>(rng());
    if (i % 2 == 0 && bytes.size() >= 16) {  // a plausible header half the time
      StoreLE<int32_t>(reinterpret_cast<uint8_t*>(bytes.data()),
                       static_cast<int32_t>(bytes.size()));
      StoreLE<int32_t>(reinterpret_cast<uint8_t*>(bytes.data()) + 12, 2013);
    }
    Socket s(server_->port());
    s.Send(bytes);
    s.Receive(200);
  }
  ExpectServerWorks();
}

TEST_F(ServerTest, ManyConnectionsAtOnce) {
  // Eight clients at once, each inserting and reading back through its own
  // connection and its own session (the server's threads share one Client,
  // its cursors and sessions).
  StartServer();
  constexpr int kClients = 8, kEach = 40;
  std::vector<std::thread> clients;
  std::atomic<int> failures{0};
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back([&, t] {
      Socket s(server_->port());
      for (int i = 0; i < kEach; ++i) {
        const std::string id = std::to_string(t * 1000 + i);
        BsonBuilder b;
        for (Element e : Json(R"({"insert": "many", "$db": "d", "documents": [{"_id": )" + id + "}]}")) {
          b.AppendElement(e);
        }
        b.OpenDocument("lsid");
        b.AppendBinary("id", BinarySubtype::kUuid, std::string(16, static_cast<char>(t)));
        b.Close();
        s.Send(BuildOpMsg(1, 0, 0, std::move(b).Build()));
        auto reply = s.Receive();
        auto msg = reply ? ParseOpMsg(*reply) : StatusOr<OpMsg>(Status(ErrorCode::kBadValue, ""));
        Document r = msg.ok() ? Document::AdoptValidated(std::string(msg->body.bytes()))
                              : Json(R"({"closed": true})");
        if (r.Get("n").NumberAsDouble() != 1) ++failures;
        r = s.Command(R"({"find": "many", "$db": "d", "filter": {"_id": )" + id + "}}");
        if (r.GetPath("cursor.firstBatch").Array().CountFields() != 1) ++failures;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
  Socket s(server_->port());
  EXPECT_EQ(s.Command(R"({"count": "many", "$db": "d"})").Get("n").Int32(), kClients * kEach);
}

TEST_F(ServerTest, HelloNamesEachConnection) {
  StartServer();
  Socket a(server_->port()), b(server_->port());
  const int32_t first = a.Command(R"({"hello": 1, "$db": "admin"})").Get("connectionId").Int32();
  const int32_t second = b.Command(R"({"hello": 1, "$db": "admin"})").Get("connectionId").Int32();
  EXPECT_GE(first, 1);
  EXPECT_NE(first, second);
  EXPECT_EQ(a.Command(R"({"isMaster": 1, "$db": "admin"})").Get("connectionId").Int32(), first);
}

// ---- The one-member replica set (ServerOptions::repl_set) ----

class ReplicaSetTest : public ServerTest {
 protected:
  void StartReplicaSet() {
    ServerOptions options;
    options.repl_set = "rs7";
    StartServer(options);
    host_ = "127.0.0.1:" + std::to_string(server_->port());
  }
  // The operationTime of a reply, as a uint64 (t << 32 | i).
  static uint64_t OperationTime(const Document& reply) {
    EXPECT_TRUE(reply.Get("operationTime").IsTimestamp()) << ToJson(reply);
    return reply.Get("operationTime").Timestamp().AsUint64();
  }
  std::string host_;
};

TEST_F(ReplicaSetTest, HelloDescribesThePrimaryOfASetOfOne) {
  StartReplicaSet();
  Socket s(server_->port());
  for (const char* hello :
       {R"({"hello": 1, "$db": "admin"})", R"({"isMaster": 1, "$db": "admin"})"}) {
    Document r = s.Command(hello);
    SCOPED_TRACE(ToJson(r));
    EXPECT_EQ(r.Get("setName").String(), "rs7");
    EXPECT_EQ(r.Get("setVersion").Int32(), 1);
    EXPECT_EQ(r.Get("secondary").Bool(), false);
    EXPECT_EQ(r.Get("primary").String(), host_);
    EXPECT_EQ(r.Get("me").String(), host_);
    ASSERT_TRUE(r.Get("hosts").IsArray());
    std::vector<std::string> hosts;
    for (Element h : r.Get("hosts").Array()) hosts.emplace_back(h.String());
    EXPECT_EQ(hosts, std::vector<std::string>{host_});
    EXPECT_EQ(r.Get("electionId").Oid().ToHex(), "7fffffff0000000000000001");
    EXPECT_TRUE(r.Get("lastWrite").Document().Get("opTime").Document().Get("ts").IsTimestamp());
    EXPECT_TRUE(r.Get("lastWrite").Document().Get("lastWriteDate").IsDateTime());
    EXPECT_TRUE(r.Get("topologyVersion").IsDocument());
  }
  EXPECT_TRUE(s.Command(R"({"hello": 1, "$db": "admin"})").Get("isWritablePrimary").Bool());
  EXPECT_TRUE(s.Command(R"({"isMaster": 1, "$db": "admin"})").Get("ismaster").Bool());
}

TEST_F(ReplicaSetTest, AStandaloneHasNoSetAndNoClusterTime) {
  StartServer();
  Socket s(server_->port());
  Document r = s.Command(R"({"hello": 1, "$db": "admin"})");
  EXPECT_FALSE(r.Get("setName").ok());
  EXPECT_FALSE(r.Get("$clusterTime").ok());
  EXPECT_FALSE(r.Get("operationTime").ok());
  r = s.Command(R"({"replSetGetStatus": 1, "$db": "admin"})");
  EXPECT_EQ(r.Get("code").Int32(), 76) << ToJson(r);
  EXPECT_EQ(r.Get("errmsg").String(), "not running with --replSet");
  r = s.Command(
      R"({"find": "c", "$db": "d", "readConcern": {"afterClusterTime": {"$timestamp": {"t": 1, "i": 1}}}})");
  EXPECT_EQ(r.Get("code").Int32(), 238) << ToJson(r);  // the command layer's, as in-process
}

TEST_F(ReplicaSetTest, RepliesCarryClusterTimeAndAWriteSeesItsOwnCommit) {
  StartReplicaSet();
  Socket s(server_->port());
  Document r = s.Command(R"({"ping": 1, "$db": "admin"})");
  SCOPED_TRACE(ToJson(r));
  ASSERT_TRUE(r.Get("$clusterTime").IsDocument());
  DocumentView ct = r.Get("$clusterTime").Document();
  EXPECT_EQ(ct.Get("clusterTime").Timestamp().AsUint64(), OperationTime(r));
  DocumentView sig = ct.Get("signature").Document();
  EXPECT_EQ(sig.Get("hash").Binary().data, std::string(20, '\0'));
  EXPECT_EQ(sig.Get("keyId").Int64(), 0);
  const uint64_t before = OperationTime(r);
  // A write's operationTime is at or after its own event's cluster time.
  Document w = s.Command(R"({"insert": "c", "$db": "d", "documents": [{"_id": 1}]})");
  const uint64_t wrote = OperationTime(w);
  EXPECT_GT(wrote, before);
  const uint64_t event =
      internal::ClientAccess::EngineOf(*client_)->change_log()->last_cluster_time();
  EXPECT_GE(wrote, event);
  // Error replies carry them too.
  Document e = s.Command(R"({"insert": "c", "$db": "d", "documents": [{"_id": 1}]})");
  EXPECT_GE(OperationTime(e), wrote);
  EXPECT_TRUE(e.Get("$clusterTime").IsDocument());
}

TEST_F(ReplicaSetTest, AfterClusterTimeIsMetOrInTheFuture) {
  StartReplicaSet();
  Socket s(server_->port());
  Document w = s.Command(R"({"insert": "c", "$db": "d", "documents": [{"_id": 1}]})");
  const BsonTimestamp wrote = BsonTimestamp::FromUint64(OperationTime(w));
  auto find = [&](BsonTimestamp t, std::string_view field, std::string_view level) {
    return s.Command(R"({"find": "c", "$db": "d", "readConcern": {"level": ")" +
                     std::string(level) + R"(", ")" + std::string(field) +
                     R"(": {"$timestamp": {"t": )" + std::to_string(t.t) + R"(, "i": )" +
                     std::to_string(t.i) + "}}}}");
  };
  // Its own write's time: already visible, answered at once.
  Document r = find(wrote, "afterClusterTime", "local");
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r);
  EXPECT_EQ(
      r.Get("cursor").Document().Get("firstBatch").Array().Get("0").Document().Get("_id").Int32(),
      1);
  EXPECT_EQ(find(wrote, "afterClusterTime", "majority").Get("ok").NumberAsDouble(), 1);
  // A time the set has not reached: InvalidOptions, as mongod's.
  const BsonTimestamp future{wrote.t + 1000, 0};
  r = find(future, "afterClusterTime", "local");
  EXPECT_EQ(r.Get("code").Int32(), 72) << ToJson(r);
  EXPECT_NE(std::string(r.Get("errmsg").String())
                .find("readConcern afterClusterTime value must not be greater than the current "
                      "clusterTime. Requested clusterTime: Timestamp(" +
                      std::to_string(future.t) + ", 0)"),
            std::string::npos)
      << ToJson(r);
  r = find(BsonTimestamp{0, 0}, "afterClusterTime", "local");
  EXPECT_EQ(r.Get("code").Int32(), 72) << ToJson(r);
  r = s.Command(R"({"find": "c", "$db": "d", "readConcern": {"afterClusterTime": 5}})");
  EXPECT_EQ(r.Get("code").Int32(), 14) << ToJson(r);
  // atClusterTime: no history to read the past from, never the present instead.
  r = find(wrote, "atClusterTime", "snapshot");
  EXPECT_EQ(r.Get("code").Int32(), 239) << ToJson(r);
  EXPECT_EQ(r.Get("codeName").String(), "SnapshotTooOld");
  EXPECT_EQ(find(future, "atClusterTime", "snapshot").Get("code").Int32(), 72);
  EXPECT_EQ(find(wrote, "atClusterTime", "local").Get("code").Int32(), 72);
}

TEST_F(ReplicaSetTest, ReplSetGetStatusAndConfigDescribeOneMember) {
  StartReplicaSet();
  Socket s(server_->port());
  Document r = s.Command(R"({"replSetGetStatus": 1, "$db": "admin"})");
  SCOPED_TRACE(ToJson(r));
  ASSERT_EQ(r.Get("ok").NumberAsDouble(), 1);
  EXPECT_EQ(r.Get("set").String(), "rs7");
  EXPECT_EQ(r.Get("myState").Int32(), 1);
  std::vector<Element> members(r.Get("members").Array().begin(), r.Get("members").Array().end());
  ASSERT_EQ(members.size(), 1u);
  DocumentView m = members[0].Document();
  EXPECT_EQ(m.Get("name").String(), host_);
  EXPECT_EQ(m.Get("stateStr").String(), "PRIMARY");
  EXPECT_EQ(m.Get("state").Int32(), 1);
  EXPECT_EQ(m.Get("health").NumberAsDouble(), 1);
  EXPECT_TRUE(m.Get("self").Bool());
  EXPECT_EQ(m.Get("optime").Document().Get("ts").Timestamp().AsUint64(), OperationTime(r));
  EXPECT_TRUE(r.Get("optimes").Document().Get("appliedOpTime").IsDocument());
  r = s.Command(R"({"replSetGetStatus": 1, "$db": "d"})");
  EXPECT_EQ(r.Get("code").Int32(), 13) << ToJson(r);  // admin only
  r = s.Command(R"({"replSetGetStatus": 1, "initialSync": 1, "$db": "admin"})");
  EXPECT_EQ(r.Get("code").Int32(), 238) << ToJson(r);
  r = s.Command(R"({"replSetGetConfig": 1, "$db": "admin"})");
  EXPECT_EQ(r.Get("config").Document().Get("_id").String(), "rs7") << ToJson(r);
  EXPECT_EQ(
      r.Get("config").Document().Get("members").Array().Get("0").Document().Get("host").String(),
      host_);
}

TEST_F(ReplicaSetTest, CommandsThatWouldChangeTheSetAreRefused) {
  StartReplicaSet();
  Socket s(server_->port());
  Document r = s.Command(R"({"replSetInitiate": {}, "$db": "admin"})");
  EXPECT_EQ(r.Get("code").Int32(), 23) << ToJson(r);
  EXPECT_EQ(r.Get("codeName").String(), "AlreadyInitialized");
  for (const char* name : {"replSetReconfig", "replSetStepDown", "replSetFreeze", "replSetSyncFrom",
                           "replSetMaintenance", "replSetStepUp"}) {
    r = s.Command(R"({")" + std::string(name) + R"(": 1, "$db": "admin"})");
    EXPECT_EQ(r.Get("code").Int32(), 238) << name << ": " << ToJson(r);
  }
}

// replSetResizeOplog changes the change log's retention, with mongod 7.1's
// bounds: a smaller size trims at once, so that a stream resumed from
// before the trim gets ChangeStreamHistoryLost.
TEST_F(ReplicaSetTest, ReplSetResizeOplogSetsTheChangeLogsRetention) {
  StartReplicaSet();
  Socket s(server_->port());
  auto code = [&](const std::string& fields) {
    Document r = s.Command(R"({"replSetResizeOplog": 1, "$db": "admin")" + fields + "}");
    return r.Get("ok").NumberAsDouble() == 1 ? 0 : r.Get("code").Int32();
  };
  EXPECT_EQ(code(""), 72);  // neither size nor minRetentionHours
  EXPECT_EQ(code(R"(, "size": 900)"), 2);
  EXPECT_EQ(code(R"(, "size": -1024)"), 2);
  EXPECT_EQ(code(R"(, "size": 8796093022208)"), 2);  // 8 EB in MB
  EXPECT_EQ(code(R"(, "size": 990, "minRetentionHours": -1)"), 2);
  EXPECT_EQ(code(R"(, "size": "big")"), 14);
  EXPECT_EQ(code(R"(, "size": 990, "bogus": 1)"), 40415);
  EXPECT_EQ(code(R"(, "size": 1073741824)"), 0);  // the maximum, 1 PB
  EXPECT_EQ(code(R"(, "minRetentionHours": 1.5)"), 0);
  EXPECT_EQ(s.Command(R"({"replSetResizeOplog": 1, "size": 990, "$db": "d"})").Get("code").Int32(),
            13);  // admin only
  const internal::ChangeLog* log = internal::ClientAccess::EngineOf(*client_)->change_log();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->max_bytes(), int64_t{1} << 50);
  EXPECT_EQ(log->min_retention_hours(), 1.5);
  // The library's own call (what the command runs) trims at once to a
  // smaller bound: a token from before the trim no longer resumes.
  Collection c = client_->GetDatabase("d").GetCollection("c");
  auto stream = c.Watch();
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_TRUE(c.InsertOne(test::Json(R"({"_id": 1})")).ok());
  const Document before = stream->resume_token();
  for (int i = 2; i < 200; ++i) {
    ASSERT_TRUE(c.InsertOne(test::Json("{\"_id\": " + std::to_string(i) + "}")).ok());
  }
  ASSERT_TRUE(client_->SetChangeLogRetention(1000, 0).ok());
  ChangeStreamOptions o;
  o.resume_after = before;
  EXPECT_EQ(c.Watch({}, o).status().code(), ErrorCode::kChangeStreamHistoryLost);
  EXPECT_EQ(client_->SetChangeLogRetention(0, 0).code(), ErrorCode::kBadValue);
  EXPECT_EQ(client_->SetChangeLogRetention(1000, -1).code(), ErrorCode::kBadValue);
}

TEST(ReplicaSetHostTest, TheAddressClientsReach) {
  ServerOptions o;
  o.bind_ip = "127.0.0.1";
  EXPECT_EQ(ReplicaSetHost(o, 27018), "127.0.0.1:27018");
  o.bind_ip = "::1";
  EXPECT_EQ(ReplicaSetHost(o, 5), "[::1]:5");
  o.bind_ip = "0.0.0.0";
  EXPECT_NE(ReplicaSetHost(o, 5).rfind(":5"), std::string::npos);
  EXPECT_NE(ReplicaSetHost(o, 5), "0.0.0.0:5");
  o.bind_ip = "";
  o.unix_socket = "/tmp/r.sock";
  EXPECT_EQ(ReplicaSetHost(o, 0), "/tmp/r.sock");
}

TEST_F(ServerTest, ConnectionsAreBounded) {
  ServerOptions options;
  options.max_connections = 2;
  StartServer(options);
  Socket a(server_->port()), b(server_->port());
  EXPECT_EQ(a.Command(R"({"ping": 1, "$db": "admin"})").Get("ok").NumberAsDouble(), 1);
  EXPECT_EQ(b.Command(R"({"ping": 1, "$db": "admin"})").Get("ok").NumberAsDouble(), 1);
  {
    Socket c(server_->port());
    EXPECT_TRUE(c.Closed());
  }
  EXPECT_EQ(a.Command(R"({"ping": 1, "$db": "admin"})").Get("ok").NumberAsDouble(), 1);
}

TEST_F(ServerTest, IdleConnectionsAreClosed) {
  ServerOptions options;
  options.idle_timeout_ms = 300;
  StartServer(options);
  Socket s(server_->port());
  EXPECT_EQ(s.Command(R"({"ping": 1, "$db": "admin"})").Get("ok").NumberAsDouble(), 1);
  EXPECT_TRUE(s.Closed());
  // The count falls when the connection's thread ends, just after the close.
  while (server_->open_connections() > 0) std::this_thread::yield();
}

TEST_F(ServerTest, UnixSocket) {
  ServerOptions options;
  options.bind_ip.clear();
  options.unix_socket = dir_.Sub("rockdoc.sock");
  auto s = Server::Start(client_.get(), options);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->port(), 0);
  {
    Socket c(options.unix_socket);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.Command(R"({"ping": 1, "$db": "admin"})").Get("ok").NumberAsDouble(), 1);
  }
  (*s)->Shutdown();
  EXPECT_FALSE(std::filesystem::exists(options.unix_socket));
  // A path that is not a socket is not replaced.
  { std::ofstream(dir_.Sub("file")) << "x"; }
  options.unix_socket = dir_.Sub("file");
  EXPECT_EQ(Server::Start(client_.get(), options).status().code(), ErrorCode::kBadValue);
}

TEST_F(ServerTest, LoopbackOnly) {
  EXPECT_TRUE(IsLoopback("127.0.0.1"));
  EXPECT_TRUE(IsLoopback("127.1.2.3"));
  EXPECT_TRUE(IsLoopback("::1"));
  EXPECT_TRUE(IsLoopback("localhost"));
  EXPECT_FALSE(IsLoopback("0.0.0.0"));
  EXPECT_FALSE(IsLoopback("::"));
  EXPECT_FALSE(IsLoopback("10.1.2.3"));
  EXPECT_FALSE(IsLoopback("example.com"));
}

TEST_F(ServerTest, ShutdownFinishesTheRequestInFlight) {
  StartPatientServer();
  Socket s(server_->port());
  BsonBuilder b;
  b.AppendString("insert", "big");
  b.AppendString("$db", "d");
  b.OpenArray("documents");
  for (int i = 0; i < 20000; ++i) {
    b.OpenDocument("");
    b.AppendInt32("_id", i);
    b.AppendString("pad", std::string(20, 'p'));
    b.Close();
  }
  b.Close();
  const std::string message = BuildOpMsg(1, 0, 0, std::move(b).Build());
  // Its first half, then wait until the server has begun reading it: the
  // request is in flight (no sleep guessing when that is).
  s.Send(std::string_view(message).substr(0, message.size() / 2));
  while (server_->requests_in_flight() == 0) std::this_thread::yield();
  std::thread stopper([&] { server_->Shutdown(); });
  // The shutdown has begun when the listener is closed: connections are
  // refused from then on. Only then comes the rest of the message.
  for (;;) {
    Socket probe(server_->port());
    if (!probe.ok()) break;
    std::this_thread::yield();
  }
  s.Send(std::string_view(message).substr(message.size() / 2));
  auto reply = s.Receive(30000);
  stopper.join();
  ASSERT_TRUE(reply.has_value());
  auto msg = ParseOpMsg(*reply);
  ASSERT_TRUE(msg.ok());
  EXPECT_EQ(msg->body.Get("n").Int32(), 20000) << ToJson(msg->body);
  EXPECT_TRUE(s.Closed());
  // Acknowledged: there after the database is closed and opened again.
  server_.reset();
  Open();
  EXPECT_EQ(client_->GetDatabase("d").GetCollection("big").CountDocuments(Document()).value(),
            20000);
}

// ---- Limits (issue #33.6) ----

// A document {_id: id, pad: "ppp..."} of exactly `size` bytes.
Document DocumentOfSize(int32_t id, size_t size) {
  BsonBuilder b;
  b.AppendInt32("_id", id);
  b.AppendString("pad", std::string(size - 24, 'p'));
  Document d = std::move(b).Build();
  EXPECT_EQ(d.size(), size);
  return d;
}

// An OP_MSG of `body` and one document sequence `identifier` of `docs`.
std::string MessageWithSequence(const Document& body, std::string_view identifier,
                                const std::vector<Document>& docs) {
  std::string payload;
  AppendLE<uint32_t>(&payload, 0);
  payload += '\0';
  payload += body.bytes();
  std::string content(identifier);
  content += '\0';
  for (const Document& d : docs) content += d.bytes();
  payload += '\x01';
  AppendLE<int32_t>(&payload, static_cast<int32_t>(4 + content.size()));
  payload += content;
  return Header(static_cast<int32_t>(16 + payload.size()), 2013) + payload;
}

Document ReplyBody(Socket* s) {
  auto reply = s->Receive(60000);
  if (!reply) return Json(R"({"closed": true})");
  auto msg = ParseOpMsg(*reply);
  if (!msg.ok()) return Json(R"({"unparsable": true})");
  return Document::AdoptValidated(std::string(msg->body.bytes()));
}

// A sequence document may be 16 MiB + 16 KiB, as mongod's internal limit:
// an upsert replacing with a document of the largest size is a statement
// larger than 16 MiB; an insert's document over 16 MiB is that statement's
// write error, and the others are inserted.
TEST_F(ServerTest, SequenceDocumentsMayBeACommandsSize) {
  StartPatientServer();
  Socket s(server_->port());
  BsonBuilder q;
  q.AppendInt32("_id", 1);
  Document max_doc = DocumentOfSize(1, kMaxBsonObjectSize);
  BsonBuilder statement;
  statement.AppendDocument("q", std::move(q).Build());
  statement.AppendDocument("u", max_doc);
  statement.AppendBool("upsert", true);
  Document update = std::move(statement).Build();
  ASSERT_GT(update.size(), static_cast<size_t>(kMaxBsonObjectSize));
  s.Send(MessageWithSequence(Json(R"({"update": "big", "$db": "d"})"), "updates", {update}));
  Document r = ReplyBody(&s);
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r).substr(0, 300);
  EXPECT_EQ(r.Get("n").Int32(), 1);
  EXPECT_NE(ToJson(r).find(R"("upserted": [{"index": 0, "_id": 1}])"), std::string::npos);

  s.Send(MessageWithSequence(Json(R"({"insert": "big", "$db": "d", "ordered": false})"),
                             "documents",
                             {Json(R"({"_id": 2})"), DocumentOfSize(3, kMaxBsonObjectSize + 1),
                              Json(R"({"_id": 4})")}));
  r = ReplyBody(&s);
  EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1) << ToJson(r).substr(0, 300);
  EXPECT_EQ(r.Get("n").Int32(), 2);
  ASSERT_TRUE(r.Get("writeErrors").IsArray()) << ToJson(r).substr(0, 300);
  Document error = Document::AdoptValidated(
      std::string((*r.Get("writeErrors").Array().begin()).Document().bytes()));
  EXPECT_EQ(error.Get("index").Int32(), 1);
  EXPECT_EQ(error.Get("code").Int32(), 2);
  EXPECT_NE(ToJson(error).find("object to insert too large"), std::string::npos);
  Collection c = client_->GetDatabase("d").GetCollection("big");
  EXPECT_EQ(c.CountDocuments(Document()).value(), 3);

  // Past 16 MiB + 16 KiB the message itself is refused (the connection goes on).
  s.Send(MessageWithSequence(Json(R"({"insert": "big", "$db": "d"})"), "documents",
                             {DocumentOfSize(5, internal::kMaxCommandSize + 1)}));
  r = ReplyBody(&s);
  EXPECT_EQ(r.Get("code").Int32(), 10334) << ToJson(r).substr(0, 300);
  EXPECT_EQ(s.Command(R"({"ping": 1, "$db": "d"})").Get("ok").NumberAsDouble(), 1);
}

// A message of 48,000,000 bytes whose sequence, folded into an array (a type
// byte and an index key more per document), makes a command larger than that.
TEST_F(ServerTest, MessageOfTheMaximumSizeFoldsPastIt) {
  StartPatientServer();
  Socket s(server_->port());
  const Document body = Json(R"({"insert": "wide", "$db": "d"})");
  constexpr int kDocs = 100;
  std::vector<Document> docs;
  for (int i = 0; i < kDocs; ++i) docs.push_back(DocumentOfSize(i, 1000));
  const size_t fixed = MessageWithSequence(body, "documents", docs).size() - kDocs * 1000;
  const size_t each = (kMaxMessageSize - fixed) / kDocs;
  docs.clear();
  for (int i = 0; i < kDocs; ++i) {
    docs.push_back(DocumentOfSize(i, i == 0 ? kMaxMessageSize - fixed - each * (kDocs - 1) : each));
  }
  const std::string message = MessageWithSequence(body, "documents", docs);
  ASSERT_EQ(message.size(), static_cast<size_t>(kMaxMessageSize));
  auto msg = ParseOpMsg(message);
  ASSERT_TRUE(msg.ok());
  ASSERT_GT(FoldSequences(*msg).size(), static_cast<size_t>(kMaxMessageSize));
  s.Send(message);
  Document r = ReplyBody(&s);
  EXPECT_EQ(ToJson(r), R"({"n": 100, "ok": 1.0})");
}

// ServerOptions::max_message_bytes_in_flight (rockdoc-serve --memoryLimitMB):
// a message that would take the bytes in flight past the bound waits, after
// its header, until the one holding them is answered; then it is run.
TEST_F(ServerTest, MessageBytesInFlightAreBounded) {
  ServerOptions options;
  options.max_message_bytes_in_flight = 1000;
  StartPatientServer(options);
  auto insert = [](int id) {
    BsonBuilder b;
    b.AppendString("insert", "c");
    b.AppendString("$db", "d");
    b.OpenArray("documents");
    b.OpenDocument("");
    b.AppendInt32("_id", id);
    b.AppendString("pad", std::string(600, 'p'));
    b.Close();
    b.Close();
    return BuildOpMsg(id, 0, 0, std::move(b).Build());
  };
  const std::string first = insert(1), second = insert(2);
  ASSERT_GT(first.size() + second.size(), 1000u);
  Socket a(server_->port()), b(server_->port());
  // a's message is in flight (its header read, its bytes held) ...
  a.Send(std::string_view(first).substr(0, 100));
  while (server_->requests_in_flight() < 1) std::this_thread::yield();
  // ... so b's whole message waits after its header.
  b.Send(second);
  while (server_->requests_in_flight() < 2) std::this_thread::yield();
  bool timed_out = false;
  EXPECT_FALSE(b.Receive(0, &timed_out).has_value());
  EXPECT_TRUE(timed_out);
  EXPECT_EQ(client_->GetDatabase("d").GetCollection("c").CountDocuments(Document()).value(), 0);
  a.Send(std::string_view(first).substr(100));
  auto reply_a = a.Receive();
  auto reply_b = b.Receive();
  ASSERT_TRUE(reply_a.has_value());
  ASSERT_TRUE(reply_b.has_value());
  EXPECT_EQ(ParseOpMsg(*reply_b)->body.Get("n").Int32(), 1);
  EXPECT_EQ(client_->GetDatabase("d").GetCollection("c").CountDocuments(Document()).value(), 2);
}

}  // namespace
}  // namespace rockdoc::wire

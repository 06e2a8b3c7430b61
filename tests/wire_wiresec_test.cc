// Issue #34 ("Under attack"), the server's side: writes acknowledged with
// writeConcern j: true survive a power loss (simulated by the
// fault-injection file system, tests/fault_fs.h) when sent over a real
// socket to rockdoc serve; the logical session table's cap
// (TooManyLogicalSessions) and reaping; the open-file budget between
// connections and the engine (wire/server.h, PlanDescriptors).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "api/client_internal.h"
#include "command/cursor_manager.h"
#include "command/server_sessions.h"
#include "common/background_runner.h"
#include "common/endian.h"
#include "fault_fs.h"
#include "rockdoc/json.h"
#include "storage/rocks.h"
#include "test_util.h"
#include "wire/message.h"
#include "wire/server.h"

namespace rockdoc::wire {
namespace {

using rockdoc::test::FaultFileSystem;
using rockdoc::test::Json;

// One command over a fresh loopback connection: its reply's body, or
// {closed: true} when the server closed the connection instead.
Document CommandOver(int port, std::string_view json) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string in;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string out = BuildOpMsg(1, 0, 0, Json(json));
    if (send(fd, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size())) {
      char buf[4096];
      for (;;) {
        if (in.size() >= 4 && in.size() >= static_cast<size_t>(LoadLE<int32_t>(
                                               reinterpret_cast<const uint8_t*>(in.data())))) {
          break;
        }
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  auto msg = ParseOpMsg(in);
  if (!msg.ok()) return Json(R"({"closed": true})");
  return Document::AdoptValidated(std::string(msg->body.bytes()));
}

bool Ok(const Document& reply) {
  return reply.Get("ok").IsNumber() && reply.Get("ok").NumberAsDouble() == 1 &&
         !reply.Get("writeErrors").ok() && !reply.Get("writeConcernError").ok();
}

// A database opened through the fault-injection file system and served
// over loopback; PowerLoss() cuts the power (everything not synced is
// dropped) and opens the database again.
class PowerLossTest : public ::testing::Test {
 protected:
  void Serve(int64_t journal_commit_interval_ms) {
    auto client = internal::ClientAccess::Open(path_, ClientOptions(), fs_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    ServerOptions options;
    options.port = 0;
    options.journal_commit_interval_ms = journal_commit_interval_ms;
    auto server = Server::Start(client_.get(), options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  Document Command(std::string_view json) { return CommandOver(server_->port(), json); }
  void PowerLoss() {
    fs_->PowerOff();  // the machine is gone: nothing more reaches the disk
    server_->Shutdown();
    client_->Close().IgnoreError();
    std::string error;
    ASSERT_TRUE(fs_->RestorePower(nullptr, &error)) << error;
    auto client = internal::ClientAccess::Open(path_, ClientOptions(), fs_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
  }
  // Whether the reopened database has a document matching `filter`.
  bool Has(std::string_view filter) {
    auto found = client_->GetDatabase("test").GetCollection("items").FindOne(Json(filter));
    EXPECT_TRUE(found.ok()) << found.status();
    return found.ok() && found->has_value();
  }

  test::ScratchDir dir_;
  const std::string path_ = dir_.Sub("db");
  std::shared_ptr<FaultFileSystem> fs_ = std::make_shared<FaultFileSystem>();
  std::unique_ptr<Client> client_;
  std::unique_ptr<Server> server_;
};

// Writes acknowledged with j: true are on the disk when acknowledged: a
// power loss right after (everything not synced dropped) keeps every one
// of them. A write acknowledged without j (and no journal interval) is in
// the page cache only: the same power loss takes it, which shows that the
// simulation drops what was not synced.
TEST_F(PowerLossTest, JournaledWritesSurvivePowerLoss) {
  ASSERT_NO_FATAL_FAILURE(Serve(/*journal_commit_interval_ms=*/0));  // only j: true syncs
  // Four spellings: j: true with w: 1, w: 'majority', alone, and fsync.
  static const char* kConcerns[] = {R"({"w": 1, "j": true})", R"({"w": "majority", "j": true})",
                                    R"({"j": true})", R"({"fsync": true})"};
  for (int i = 0; i < 20; ++i) {
    Document reply =
        Command(R"({"insert": "items", "$db": "test", "documents": [{"_id": )" + std::to_string(i) +
                R"(}], "writeConcern": )" + kConcerns[i % 4] + "}");
    ASSERT_TRUE(Ok(reply)) << ToJson(reply);
    // Not synced by itself: a write between the journaled ones.
    reply = Command(R"({"update": "items", "$db": "test", "updates": [{"q": {"_id": )" +
                    std::to_string(i) + R"(}, "u": {"$set": {"seen": true}}}]})");
    ASSERT_TRUE(Ok(reply)) << ToJson(reply);
  }
  // An update with j: true syncs what came before it too.
  Document reply = Command(R"({"update": "items", "$db": "test", "updates": [{"q": {"_id": 0},
                               "u": {"$set": {"last": true}}}], "writeConcern": {"j": true}})");
  ASSERT_TRUE(Ok(reply)) << ToJson(reply);
  reply = Command(R"({"insert": "items", "$db": "test", "documents": [{"_id": "not journaled"}]})");
  ASSERT_TRUE(Ok(reply)) << ToJson(reply);
  ASSERT_NO_FATAL_FAILURE(PowerLoss());
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(Has(R"({"_id": )" + std::to_string(i) + "}")) << "j: true insert " << i << " lost";
  }
  EXPECT_TRUE(Has(R"({"_id": 0, "last": true, "seen": true})")) << "the j: true update was lost";
  EXPECT_FALSE(Has(R"({"_id": "not journaled"})")) << "the power loss dropped nothing unsynced";
}

// Without j: true, the journal commit interval makes a write durable by
// itself: once a sync that began after the write has run, a power loss
// keeps it.
TEST_F(PowerLossTest, JournalIntervalSyncsWithoutBeingAsked) {
  ASSERT_NO_FATAL_FAILURE(Serve(/*journal_commit_interval_ms=*/5));
  ASSERT_TRUE(Ok(Command(R"({"insert": "items", "$db": "test", "documents": [{"_id": 1}]})")));
  // The event: two more syncs, so one began after the write's reply.
  const int64_t seen = server_->journal_syncs();
  for (int i = 0; i < 10000 && server_->journal_syncs() < seen + 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GE(server_->journal_syncs(), seen + 2) << "the journal thread never synced";
  ASSERT_NO_FATAL_FAILURE(PowerLoss());
  EXPECT_TRUE(Has(R"({"_id": 1})")) << "the interval's sync did not keep the write";
}

TEST(ServerSessionsTest, CappedAtMaxSessions) {
  test::ScratchDir dir;
  auto client = Client::Open(dir.Sub("db"));
  ASSERT_TRUE(client.ok()) << client.status();
  internal::ServerSessions sessions(internal::kSessionIdleTimeoutMs, /*max_sessions=*/3);
  for (const char* key : {"a", "b", "c"}) ASSERT_TRUE(sessions.Get(**client, key).ok());
  auto refused = sessions.Get(**client, "d");
  EXPECT_EQ(refused.status().code(), ErrorCode::kTooManyLogicalSessions) << refused.status();
  EXPECT_EQ(refused.status().code_name(), "TooManyLogicalSessions");
  EXPECT_TRUE(sessions.Get(**client, "a").ok());  // an existing one is served
  EXPECT_TRUE(sessions.End("b"));
  EXPECT_TRUE(sessions.Get(**client, "d").ok());
  EXPECT_EQ(sessions.size(), 3u);
}

TEST(ServerSessionsTest, ReapingEndsIdleSessions) {
  test::ScratchDir dir;
  auto client = Client::Open(dir.Sub("db"));
  ASSERT_TRUE(client.ok()) << client.status();
  // A negative timeout: every session is past it at once (no waiting).
  internal::ServerSessions expiring(/*idle_timeout_ms=*/-1);  // no reaper: ReapOn not called
  auto held = expiring.Get(**client, "a");
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(expiring.Get(**client, "b").ok());
  EXPECT_EQ(expiring.ReapExpired(), 2u);
  EXPECT_EQ(expiring.size(), 0u);
  EXPECT_FALSE((*held)->session.has_value());  // ended, not just forgotten
  // A session in use is not reaped by the lookups of others: Get looks at
  // its own id only.
  internal::ServerSessions kept;
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(kept.Get(**client, std::to_string(i)).ok());
  EXPECT_EQ(kept.ReapExpired(), 0u);
  EXPECT_EQ(kept.size(), 1000u);
}

// Waits (bounded) until `runner` has run task `name` `n` more times.
void WaitForRuns(const internal::BackgroundRunner& runner, const std::string& name, int64_t n) {
  const int64_t target = runner.runs(name) + n;
  for (int i = 0; i < 10000 && runner.runs(name) < target; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GE(runner.runs(name), target) << name << " never ran";
}

// Idle sessions and cursors are ended in the background (ReapOn), not by
// the commands of others scanning them all.
TEST(ServerSessionsTest, ReapedInTheBackground) {
  test::ScratchDir dir;
  auto client = Client::Open(dir.Sub("db"));
  ASSERT_TRUE(client.ok()) << client.status();
  internal::ServerSessions sessions(/*idle_timeout_ms=*/-1);  // past it at once
  internal::CursorManager cursors(/*idle_timeout_ms=*/0);
  internal::BackgroundRunner runner;  // last: stopped before the tables go
  sessions.ReapOn(&runner);
  cursors.ReapOn(&runner);
  ASSERT_TRUE(sessions.Get(**client, "a").ok());
  ASSERT_NO_FATAL_FAILURE(WaitForRuns(runner, "sessions", 2));
  EXPECT_EQ(sessions.size(), 0u);

  cursors.Register(
      std::make_unique<internal::CommandCursor>("db", "c", std::vector<Document>{Document()}));
  // Idle past 0 ms as soon as a millisecond passes: the reaper's runs see it
  // (no CheckOut, which would also end it, is called).
  for (int i = 0; i < 10000 && cursors.open_cursors() > 0; ++i) {
    ASSERT_NO_FATAL_FAILURE(WaitForRuns(runner, "cursors", 1));
  }
  EXPECT_EQ(cursors.open_cursors(), 0u);
}

// A write that meets EMFILE anyway says what happened and what to do,
// rather than a bare I/O error.
TEST(DescriptorBudgetTest, OutOfDescriptorsIsSaidLoudly) {
  Status s =
      internal::FromRocks(rocksdb::Status::IOError("While open a file for appending: db/000012.log",
                                                   "Too many open files"),
                          "commit");
  EXPECT_EQ(s.code(), ErrorCode::kOperationFailed);
  EXPECT_NE(std::string(s.message()).find("out of file descriptors"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("until it is reopened"), std::string::npos) << s;
}

TEST(DescriptorBudgetTest, ConnectionsAtMostEightyPercent) {
  auto b = PlanDescriptors(1024, 1000);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->connections, 819);  // 80% of 1024
  EXPECT_EQ(b->engine_files, 1024 - 819 - kReservedDescriptors);
  b = PlanDescriptors(1 << 20, 1000);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->connections, 1000);
  EXPECT_EQ(b->engine_files, (1 << 20) - 1000 - kReservedDescriptors);
  // A small limit: the engine's 20 files and the reserve first.
  b = PlanDescriptors(128, 1000);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->connections, 128 - kReservedDescriptors - 20);
  EXPECT_EQ(b->engine_files, 20);
  EXPECT_EQ(PlanDescriptors(80, 1000).status().code(), ErrorCode::kOperationFailed);
}

}  // namespace
}  // namespace rockdoc::wire

// Opening a database directory: one open per directory per process however
// the path is spelled; a write-ahead log damaged in the middle or missing
// fails the open and changes nothing, a torn tail does not, and
// Client::Salvage keeps the intact prefix; hostile entries (a symlink to
// /dev/zero, a FIFO) are refused instead of hanging; permission problems
// are reported as such.
//
// Opens that could hang, and opens as another user, run in a child process:
// this binary run again (/proc/self/exe --child-open DIR [UID]), which
// prints the status code and message of Client::Open. A child that does not
// answer within its deadline is killed and the test fails.
//
// Crash images are copies of a directory taken while a client with
// sync = true has it open: what a kill at that moment leaves behind.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pwd.h>
#include <rocksdb/status.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/rocks.h"
#include "test_util.h"

namespace rockdoc {
namespace {

namespace fs = std::filesystem;
using test::Json;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;

MATCHER_P2(StatusIs, code, message_matcher,
           "has code " + ErrorCodeName(code) + " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher)) {
  Status s = [&] {
    if constexpr (std::is_same_v<std::decay_t<arg_type>, Status>) {
      return arg;
    } else {
      return arg.status();
    }
  }();
  *result_listener << "status is " << s;
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()), result_listener);
}

// ---- Files ----

// Every entry under `dir`: name -> contents, or the kind of a non-file.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(entry.path(), dir).string();
    if (entry.is_symlink()) {
      files[rel] = "<link to " + fs::read_symlink(entry.path()).string() + ">";
    } else if (entry.is_regular_file()) {
      std::ifstream in(entry.path(), std::ios::binary);
      files[rel] = std::string(std::istreambuf_iterator<char>(in), {});
    } else {
      files[rel] = "<not a file>";
    }
  }
  return files;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteFile(const fs::path& p, std::string_view contents) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

// The newest (live) write-ahead log in `dir`.
fs::path LiveLog(const std::string& dir) {
  fs::path best;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".log" && entry.path().filename() > best.filename()) {
      best = entry.path();
    }
  }
  return best;
}

fs::path CurrentManifest(const std::string& dir) {
  std::string current = ReadFile(dir + "/CURRENT");
  return fs::path(dir) / current.substr(0, current.find('\n'));
}

// ---- Documents ----

// {_id: i, pad: ~1 KB}: 300 of them fill a log of ten 32 KB blocks.
Document Doc(int i, size_t pad = 1000) {
  BsonBuilder b;
  b.AppendInt32("_id", i).AppendString("pad", std::string(pad, static_cast<char>('a' + i % 26)));
  return std::move(b).Build();
}

// The _ids in collection db.c, in order.
std::vector<int> Ids(Client& client) {
  std::vector<int> ids;
  auto cursor = client.GetDatabase("db").GetCollection("c").Find(Document());
  EXPECT_TRUE(cursor.ok()) << cursor.status();
  if (!cursor.ok()) return ids;
  while (cursor->Next()) ids.push_back(cursor->document().Get("_id").Int32());
  EXPECT_TRUE(cursor->status().ok()) << cursor->status();
  return ids;
}

std::vector<int> Range(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

void ExpectValid(Client& client) {
  auto v = client.GetDatabase("db").GetCollection("c").Validate();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->valid) << ::testing::PrintToString(v->errors);
}

// ---- A child process that opens a directory ----

struct ChildOpen {
  bool finished = false;  // false: killed at the deadline
  int code = -1;
  std::string message;
};

// Opens `dir` in a fresh process (as `uid` when >= 0) and reports the
// status; kills it after `deadline`.
ChildOpen OpenInChild(const std::string& dir, int uid = -1,
                      std::chrono::seconds deadline = std::chrono::seconds(20)) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  std::string uid_arg = std::to_string(uid);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    execl("/proc/self/exe", "open_test", "--child-open", dir.c_str(), uid_arg.c_str(), nullptr);
    _exit(127);
  }
  close(fds[1]);
  ChildOpen result;
  std::string out;
  auto end = std::chrono::steady_clock::now() + deadline;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) {
      result.finished = true;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (!result.finished) kill(pid, SIGKILL);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  size_t space = out.find(' ');
  if (result.finished && space != std::string::npos) {
    result.code = std::stoi(out.substr(0, space));
    result.message = out.substr(space + 1);
  }
  return result;
}

// ======================= One open per directory =======================

// Runs each test in a scratch directory as the working directory, so that
// relative spellings of a path can be tried.
class SpellingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    old_cwd_ = fs::current_path();
    fs::current_path(dir_.path());
    fs::create_directory("sub");
  }
  void TearDown() override { fs::current_path(old_cwd_); }

  test::ScratchDir dir_;
  fs::path old_cwd_;
};

TEST_F(SpellingTest, SecondOpenUnderAnySpellingIsDBPathInUse) {
  auto first = Client::Open("tdb");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*first)->GetDatabase("db").GetCollection("c").InsertOne(Doc(1)).ok());
  fs::create_directory_symlink("tdb", "link");
  const std::vector<std::string> spellings = {"tdb",
                                              "./tdb",
                                              "tdb/",
                                              "tdb//",
                                              "./tdb/.",
                                              dir_.Sub("tdb"),
                                              "link",
                                              "link/",
                                              dir_.Sub("link"),
                                              "sub/../tdb",
                                              dir_.path() + "/sub/../tdb"};
  for (const std::string& spelling : spellings) {
    EXPECT_THAT(Client::Open(spelling),
                StatusIs(ErrorCode::kDBPathInUse, AllOf(HasSubstr("locked"), HasSubstr("tdb"))))
        << spelling;
  }
  // The first client is unaffected; once it closes, every spelling opens.
  ASSERT_TRUE((*first)->GetDatabase("db").GetCollection("c").InsertOne(Doc(2)).ok());
  ASSERT_TRUE((*first)->Close().ok());
  for (const std::string& spelling : spellings) {
    auto again = Client::Open(spelling);
    ASSERT_TRUE(again.ok()) << spelling << ": " << again.status();
    EXPECT_EQ(Ids(**again), (std::vector<int>{1, 2})) << spelling;
  }
}

TEST_F(SpellingTest, ClaimIsReleasedByDestructionAndByAFailedOpen) {
  { ASSERT_TRUE(Client::Open("tdb").ok()); }  // destroyed without Close
  auto c = Client::Open("./tdb");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Close().ok());
  // An open that fails after claiming the directory lets go of it.
  WriteFile("tdb/ROCKDOC", "garbage");
  EXPECT_THAT(Client::Open("tdb/"), StatusIs(ErrorCode::kUnsupportedFormat, HasSubstr("damaged")));
  WriteFile("tdb/ROCKDOC", "rockdoc 1\n");
  EXPECT_TRUE(Client::Open("tdb").ok());
}

TEST_F(SpellingTest, ConcurrentOpensOfOneDirectoryYieldExactlyOneClient) {
  for (int round = 0; round < 20; ++round) {
    // Even rounds race on a directory that does not exist yet.
    std::string name = "race" + std::to_string(round / 2);
    std::atomic<bool> go{false};
    StatusOr<std::unique_ptr<Client>> results[2] = {Status(ErrorCode::kInternalError, ""),
                                                    Status(ErrorCode::kInternalError, "")};
    std::thread threads[2];
    const std::string spellings[2] = {name, "./" + name + "/"};
    for (int t = 0; t < 2; ++t) {
      threads[t] = std::thread([&, t] {
        while (!go.load()) {
        }
        results[t] = Client::Open(spellings[t]);
      });
    }
    go.store(true);
    for (auto& t : threads) t.join();
    int opened = results[0].ok() + results[1].ok();
    EXPECT_EQ(opened, 1) << "round " << round;
    for (const auto& r : results) {
      if (!r.ok()) {
        EXPECT_THAT(r, StatusIs(ErrorCode::kDBPathInUse, HasSubstr(name)));
      }
    }
  }
}

// ======================= The write-ahead log =======================

class WalDamageTest : public ::testing::Test {
 protected:
  // Inserts kDocs documents with sync = true into a live directory and
  // copies it while the client is still open: a crash image in image_.
  // `pad`: the length of each document's string (the log's layout).
  void MakeCrashImage(size_t pad = 1000) {
    for (const fs::path& dir : {live_.path(), image_.path()}) {
      fs::remove_all(dir);
      fs::create_directories(dir);
    }
    ClientOptions o;
    o.sync = true;
    auto client = Client::Open(live_.path(), o);
    ASSERT_TRUE(client.ok()) << client.status();
    Collection c = (*client)->GetDatabase("db").GetCollection("c");
    ASSERT_TRUE(c.CreateIndex(Json(R"({"pad": 1})")).ok());
    for (int i = 0; i < kDocs; ++i) ASSERT_TRUE(c.InsertOne(Doc(i, pad)).ok());
    fs::copy(live_.path(), image_.path(),
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    log_ = LiveLog(image_.path());
    ASSERT_GT(fs::file_size(log_), 8u * 32768) << log_;
  }

  std::string LogName() const { return log_.filename().string(); }

  // The open fails with DataCorruptionDetected saying `what`, and no file
  // in the directory changed.
  void ExpectRefusedAndUntouched(const std::string& what) {
    auto before = Snapshot(image_.path());
    EXPECT_THAT(Client::Open(image_.path()),
                StatusIs(ErrorCode::kDataCorruptionDetected,
                         AllOf(HasSubstr(image_.path()), HasSubstr(what), HasSubstr("Salvage"))));
    EXPECT_TRUE(Snapshot(image_.path()) == before) << "the failed open changed the directory";
  }

  static constexpr int kDocs = 300;
  test::ScratchDir live_, image_;
  fs::path log_;
};

TEST_F(WalDamageTest, CrashImageOpensWithEveryAcknowledgedWrite) {
  MakeCrashImage();
  auto c = Client::Open(image_.path());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Ids(**c), Range(kDocs));
  ExpectValid(**c);
}

TEST_F(WalDamageTest, FlippedByteInTheMiddleOfTheLogFailsAndChangesNothing) {
  MakeCrashImage();
  std::string bytes = ReadFile(log_);
  bytes[bytes.size() / 2] ^= 0x55;
  WriteFile(log_, bytes);
  ExpectRefusedAndUntouched(LogName() + ": dropping");
  EXPECT_THAT(Client::Open(image_.path()),
              StatusIs(ErrorCode::kDataCorruptionDetected,
                       AllOf(HasSubstr("checksum mismatch"), HasSubstr("intact log records"))));
}

TEST_F(WalDamageTest, TornTailIsDroppedAndEveryEarlierWriteKept) {
  MakeCrashImage();
  std::string bytes = ReadFile(log_);
  // Cut inside the last record's body, and inside its header.
  for (size_t cut : {5, 1010}) {
    SCOPED_TRACE(cut);
    fs::remove_all(live_.path());
    fs::copy(image_.path(), live_.path());
    WriteFile(fs::path(live_.path()) / LogName(), bytes.substr(0, bytes.size() - cut));
    auto c = Client::Open(live_.path());
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(Ids(**c), Range(kDocs - 1));
    ExpectValid(**c);
  }
}

TEST_F(WalDamageTest, ZeroedBlockInTheMiddleFails) {
  MakeCrashImage();
  std::string bytes = ReadFile(log_);
  std::string zeroed = bytes;
  std::fill_n(zeroed.begin() + 20 * 4096, 4096, '\0');  // a page
  WriteFile(log_, zeroed);
  ExpectRefusedAndUntouched(LogName());
  zeroed = bytes;
  std::fill_n(zeroed.begin() + 4 * 32768, 32768, '\0');  // a whole log block
  WriteFile(log_, zeroed);
  ExpectRefusedAndUntouched("sequence numbers");
}

// Zeros from a record boundary to the end of a log block, where the next
// block starts a new record: the reader takes the zeros for preallocated
// space and reports nothing, in every RocksDB recovery mode. Only the gap
// in sequence numbers shows the loss.
TEST_F(WalDamageTest, SilentlySkippedZeroedRecordsFail) {
  // The log format: 32 KB blocks of records, each a 7-byte header
  // (checksum 4, length 2, type 1: 1 full, 2 first, 3 middle, 4 last) and
  // its payload; a block's last < 7 bytes are padding.
  constexpr size_t kBlock = 32768, kHeader = 7;
  // The start of a record in the middle of the log that is the last of its
  // block, the next block starting a new record; 0 when there is none.
  auto find_zero_from = [&](const std::string& bytes) -> size_t {
    std::vector<size_t> starts;  // offsets of record headers
    for (size_t pos = 0; pos + kHeader <= bytes.size();) {
      size_t left = kBlock - pos % kBlock;
      if (left < kHeader) {
        pos += left;
        continue;
      }
      starts.push_back(pos);
      size_t length =
          static_cast<uint8_t>(bytes[pos + 4]) | (static_cast<uint8_t>(bytes[pos + 5]) << 8);
      pos += kHeader + length;
    }
    for (size_t i = 1; i + 1 < starts.size(); ++i) {
      size_t block_end = (starts[i] / kBlock + 1) * kBlock;
      bool middle_of_log = starts[i] > 2 * kBlock && block_end + 4 * kBlock < bytes.size();
      bool next_block_starts_a_record =
          starts[i + 1] == block_end && (bytes[block_end + 6] == 1 || bytes[block_end + 6] == 2);
      if (middle_of_log && starts[i] % kBlock != 0 && next_block_starts_a_record) return starts[i];
    }
    return 0;
  };
  // Such a boundary depends on the records' sizes: documents of a few
  // lengths are tried until one layout has it.
  std::string bytes;
  size_t zero_from = 0;
  for (size_t pad = 1000; pad < 1400 && zero_from == 0; ++pad) {
    MakeCrashImage(pad);
    bytes = ReadFile(log_);
    zero_from = find_zero_from(bytes);
  }
  ASSERT_NE(zero_from, 0u) << "no block of the log ends with a whole record";
  std::fill(bytes.begin() + zero_from, bytes.begin() + (zero_from / kBlock + 1) * kBlock, '\0');
  WriteFile(log_, bytes);
  ExpectRefusedAndUntouched("are missing");
}

TEST_F(WalDamageTest, DeletedLiveLogFails) {
  MakeCrashImage();
  fs::remove(log_);
  ExpectRefusedAndUntouched("the live write-ahead log is missing");
}

TEST_F(WalDamageTest, DeletedClosedLogThatTheManifestTracksFails) {
  ClientOptions o;
  o.sync = true;
  auto client = Client::Open(live_.path(), o);
  ASSERT_TRUE(client.ok()) << client.status();
  Database db = (*client)->GetDatabase("db");
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(db.GetCollection("c").InsertOne(Doc(i)).ok());
  // Dropping a collection compacts its range, which flushes the data
  // column family alone: a new log begins, and the old one, still needed
  // for the catalog's unflushed writes, is closed and tracked.
  ASSERT_TRUE(db.GetCollection("d").InsertOne(Doc(0)).ok());
  ASSERT_TRUE(db.DropCollection("d").ok());
  for (int i = 100; i < 150; ++i) ASSERT_TRUE(db.GetCollection("c").InsertOne(Doc(i)).ok());
  fs::copy(live_.path(), image_.path(),
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  std::vector<fs::path> logs;
  for (const auto& e : fs::directory_iterator(image_.path())) {
    if (e.path().extension() == ".log") logs.push_back(e.path());
  }
  std::sort(logs.begin(), logs.end());
  ASSERT_GE(logs.size(), 2u);
  {
    // Undamaged, the two logs replay as one contiguous history.
    test::ScratchDir copy;
    fs::copy(image_.path(), copy.path(), fs::copy_options::recursive);
    auto c = Client::Open(copy.path());
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(Ids(**c), Range(150));
    ExpectValid(**c);
  }
  fs::remove(logs.front());
  ExpectRefusedAndUntouched("Missing WAL");
  // Salvage gets past it: what the log held for the catalog is gone, the
  // rest opens.
  auto report = Client::Salvage(image_.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->findings, Contains(HasSubstr("Missing WAL")));
  auto c = Client::Open(image_.path());
  ASSERT_TRUE(c.ok()) << c.status();
}

TEST_F(WalDamageTest, SalvageKeepsTheIntactPrefixAndTheDatabaseOpens) {
  MakeCrashImage();
  std::string bytes = ReadFile(log_);
  bytes[bytes.size() / 2] ^= 0x55;
  WriteFile(log_, bytes);
  auto report = Client::Salvage(image_.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->findings, Contains(HasSubstr(LogName() + ": dropping")));
  EXPECT_GT(report->discarded_log_records, 0);
  EXPECT_THAT(report->saved_files, Contains(LogName() + ".damaged"));
  EXPECT_EQ(ReadFile(fs::path(image_.path()) / (LogName() + ".damaged")), bytes);

  auto c = Client::Open(image_.path());
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<int> ids = Ids(**c);
  // A prefix of the inserts: the state the database was in at the damage.
  EXPECT_GT(ids.size(), 0u);
  EXPECT_LT(ids.size(), static_cast<size_t>(kDocs));
  EXPECT_EQ(ids, Range(static_cast<int>(ids.size())));
  EXPECT_EQ(*(*c)->GetDatabase("db").GetCollection("c").EstimatedDocumentCount(),
            static_cast<int64_t>(ids.size()));
  ExpectValid(**c);
  // The database takes writes and reopens cleanly.
  ASSERT_TRUE((*c)->GetDatabase("db").GetCollection("c").InsertOne(Doc(kDocs)).ok());
  ASSERT_TRUE((*c)->Close().ok());
  c = Client::Open(image_.path());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Ids(**c).size(), ids.size() + 1);
}

TEST_F(WalDamageTest, SalvageOfAMissingLiveLogAndOfAHealthyDatabase) {
  MakeCrashImage();
  // Healthy: nothing found, nothing lost.
  auto report = Client::Salvage(image_.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->findings.empty()) << ::testing::PrintToString(report->findings);
  EXPECT_EQ(report->discarded_log_records, 0);
  {
    auto c = Client::Open(image_.path());
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(Ids(**c), Range(kDocs));
  }
  // Missing live log: what it held is gone, the rest opens.
  fs::remove_all(image_.path());
  fs::remove_all(live_.path());
  MakeCrashImage();
  fs::remove(log_);
  report = Client::Salvage(image_.path());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->findings, Contains(HasSubstr("missing")));
  auto c = Client::Open(image_.path());
  ASSERT_TRUE(c.ok()) << c.status();
  // Everything was in that log (nothing had been flushed): the database is
  // empty, and usable.
  auto names = (*c)->ListDatabaseNames();
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_TRUE(names->empty()) << ::testing::PrintToString(*names);
  ASSERT_TRUE((*c)->GetDatabase("db").GetCollection("c").InsertOne(Doc(7)).ok());
  EXPECT_EQ(Ids(**c), std::vector<int>{7});
  ExpectValid(**c);
}

TEST(SalvageTest, MissingOrOpenDirectory) {
  test::ScratchDir dir;
  EXPECT_THAT(Client::Salvage(dir.Sub("none")),
              StatusIs(ErrorCode::kNonExistentPath, HasSubstr("none")));
  EXPECT_FALSE(fs::exists(dir.Sub("none")));
  auto c = Client::Open(dir.path());
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(Client::Salvage(dir.path() + "/"),
              StatusIs(ErrorCode::kDBPathInUse, HasSubstr("locked")));
}

// ======================= Hostile directories =======================

class HostileDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.path());
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->GetDatabase("db").GetCollection("c").InsertOne(Doc(1)).ok());
    ASSERT_TRUE((*c)->Close().ok());
  }

  // The open, in a child with a deadline, is refused naming `name`, and
  // leaves the directory as it was.
  void ExpectRefused(const std::string& name, const std::string& kind) {
    auto before = Snapshot(dir_.path());
    ChildOpen r = OpenInChild(dir_.path());
    ASSERT_TRUE(r.finished) << "the open hung";
    EXPECT_EQ(r.code, static_cast<int>(ErrorCode::kUnsupportedFormat)) << r.message;
    EXPECT_THAT(r.message, AllOf(HasSubstr(dir_.path()), HasSubstr(name), HasSubstr(kind)));
    EXPECT_TRUE(Snapshot(dir_.path()) == before);
  }

  test::ScratchDir dir_;
};

TEST_F(HostileDirectoryTest, ManifestLinkedToDevZero) {
  fs::path manifest = CurrentManifest(dir_.path());
  fs::remove(manifest);
  fs::create_symlink("/dev/zero", manifest);
  ExpectRefused(manifest.filename().string(), "symbolic link");
}

TEST_F(HostileDirectoryTest, OtherManifestNameLinkedToDevZero) {
  fs::create_symlink("/dev/zero", dir_.Sub("MANIFEST-000001"));
  ExpectRefused("MANIFEST-000001", "symbolic link");
}

TEST_F(HostileDirectoryTest, CurrentLinkedToDevZero) {
  fs::remove(dir_.Sub("CURRENT"));
  fs::create_symlink("/dev/zero", dir_.Sub("CURRENT"));
  ExpectRefused("CURRENT", "symbolic link");
}

TEST_F(HostileDirectoryTest, LiveLogReplacedByAFifo) {
  fs::path log = LiveLog(dir_.path());
  ASSERT_FALSE(log.empty());
  fs::remove(log);
  ASSERT_EQ(mkfifo(log.c_str(), 0644), 0);
  ExpectRefused(log.filename().string(), "FIFO");
}

TEST_F(HostileDirectoryTest, MarkerReplacedByAFifo) {
  fs::remove(dir_.Sub("ROCKDOC"));
  ASSERT_EQ(mkfifo(dir_.Sub("ROCKDOC").c_str(), 0644), 0);
  ExpectRefused("ROCKDOC", "FIFO");
}

TEST_F(HostileDirectoryTest, DirectoryNamedLikeATableFile) {
  fs::create_directory(dir_.Sub("000099.sst"));
  ExpectRefused("000099.sst", "directory");
}

TEST_F(HostileDirectoryTest, OtherSubdirectoriesAndFilesAreAllowed) {
  fs::create_directory(dir_.Sub("lost+found"));
  WriteFile(dir_.Sub("README.txt"), "notes");
  auto c = Client::Open(dir_.path());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Ids(**c), std::vector<int>{1});
}

// ======================= Permissions =======================

// The user the permission tests run as: root ignores permission bits, so
// as root a child drops to `nobody`; otherwise the child runs as us.
int TestUid() {
  if (geteuid() != 0) return -1;
  const passwd* pw = getpwnam("nobody");
  return pw == nullptr ? -2 : static_cast<int>(pw->pw_uid);
}

class PermissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uid_ = TestUid();
    if (uid_ == -2) GTEST_SKIP() << "running as root and there is no user nobody";
    db_ = dir_.Sub("db");
    auto c = Client::Open(db_);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->GetDatabase("db").GetCollection("c").InsertOne(Doc(1)).ok());
    ASSERT_TRUE((*c)->Close().ok());
    // The child must reach the directory, and own it so that its mode
    // bits are the ones that apply.
    fs::permissions(dir_.path(),
                    fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
    if (uid_ >= 0) {
      ASSERT_EQ(chown(db_.c_str(), uid_, uid_), 0);
      for (const auto& e : fs::directory_iterator(db_)) {
        ASSERT_EQ(chown(e.path().c_str(), uid_, uid_), 0);
      }
    }
  }
  void TearDown() override {
    if (!db_.empty()) fs::permissions(db_, fs::perms::owner_all);
  }

  void ExpectPermissionDenied(const std::string& path) {
    ChildOpen r = OpenInChild(db_, uid_);
    ASSERT_TRUE(r.finished);
    EXPECT_EQ(r.code, static_cast<int>(ErrorCode::kFileNotOpen)) << r.message;
    EXPECT_THAT(r.message, AllOf(HasSubstr(path), HasSubstr("permission denied")));
  }

  test::ScratchDir dir_;
  std::string db_;
  int uid_ = -1;
};

TEST_F(PermissionTest, SetupOpensAsTheTestUser) {
  ChildOpen r = OpenInChild(db_, uid_);
  ASSERT_TRUE(r.finished);
  EXPECT_EQ(r.code, 0) << r.message;
}

TEST_F(PermissionTest, UnreadableDirectory) {
  fs::permissions(db_, fs::perms::none);
  ExpectPermissionDenied(db_);
}

TEST_F(PermissionTest, ReadOnlyDirectory) {
  fs::permissions(db_, fs::perms::owner_read | fs::perms::owner_exec);
  ExpectPermissionDenied(db_);
}

TEST_F(PermissionTest, UnreadableMarker) {
  fs::permissions(db_ + "/ROCKDOC", fs::perms::none);
  ExpectPermissionDenied(db_ + "/ROCKDOC");
}

TEST_F(PermissionTest, ReadOnlyFiles) {
  for (const auto& e : fs::directory_iterator(db_)) {
    fs::permissions(e.path(),
                    fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  }
  ExpectPermissionDenied(db_ + "/LOCK");
}

TEST(LockErrorTest, OnlyAHeldLockIsDBPathInUse) {
  using internal::FromRocks;
  EXPECT_EQ(FromRocks(rocksdb::Status::IOError(
                          "While lock file: /d/LOCK: Resource temporarily unavailable"),
                      "open")
                .code(),
            ErrorCode::kDBPathInUse);
  EXPECT_EQ(FromRocks(rocksdb::Status::IOError("lock hold by current process, acquire time 1",
                                               "/d/LOCK: No locks available"),
                      "open")
                .code(),
            ErrorCode::kDBPathInUse);
  EXPECT_EQ(
      FromRocks(rocksdb::Status::IOError("While open a file for lock: /d/LOCK: Permission denied"),
                "open")
          .code(),
      ErrorCode::kFileNotOpen);
  EXPECT_EQ(FromRocks(rocksdb::Status::IOError("While renaming LOG: Read-only file system"), "open")
                .code(),
            ErrorCode::kFileNotOpen);
}

}  // namespace

// The child of OpenInChild: opens `dir` (as `uid` when >= 0) and prints
// "<code> <message>".
int ChildOpenMain(const char* dir, int uid) {
  if (uid >= 0 && (setgid(uid) != 0 || setuid(uid) != 0)) {
    std::printf("-1 cannot become uid %d\n", uid);
    return 1;
  }
  auto client = Client::Open(dir);
  Status s = client.ok() ? (*client)->Close() : client.status();
  std::printf("%d %s\n", s.code_number(), std::string(s.message()).c_str());
  return 0;
}

}  // namespace rockdoc

int main(int argc, char** argv) {
  if (argc == 4 && std::string_view(argv[1]) == "--child-open") {
    return rockdoc::ChildOpenMain(argv[2], std::atoi(argv[3]));
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

namespace rockdoc {
namespace {

// A creation killed after RocksDB wrote its first MANIFEST (the default
// column family only) and before the catalog family existed: nothing can
// have been written, so the next open finishes the creation. Found by the
// transaction rounds of crash_test (a kill 0-60 ms after the first start).
TEST(InterruptedCreationTest, ADatabaseWithOnlyTheDefaultFamilyOpens) {
  test::ScratchDir dir;
  const std::string path = dir.Sub("db");
  {
    rocksdb::Options o = internal::MakeRocksOptions(ClientOptions());
    o.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, path, &raw).ok());
    ASSERT_TRUE(raw->Close().ok());
    delete raw;
  }
  {
    std::ofstream marker(std::filesystem::path(path) / "ROCKDOC");
    marker << "rockdoc 1\n";
  }
  auto client = Client::Open(path);
  ASSERT_TRUE(client.ok()) << client.status();
  Collection c = (*client)->GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(c.InsertOne(test::Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE((*client)->Close().ok());
  client = Client::Open(path);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(*(*client)->GetDatabase("db").GetCollection("c").CountDocuments(Document()), 1);
}

}  // namespace
}  // namespace rockdoc

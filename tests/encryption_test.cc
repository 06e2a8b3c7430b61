// Encryption at rest (ClientOptions::encryption_key, storage/encryption.h):
// no byte of what the documents say reaches a file in plain text, whatever
// the file (table files, logs, MANIFEST, spill runs, checkpoints); a missing
// or wrong key is a clear error that leaves the directory byte for byte as it
// was; key rotation, and a rotation that stops part-way.
//
// The truth of "encrypted" is a scan of every byte of every file for marker
// strings the documents hold; the same scan of the same writes without a key
// must find them, so that the scan itself is shown to see what it looks for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/encryption.h"
#include "storage/engine.h"
#include "storage/spill.h"
#include "test_util.h"

namespace rockdoc {
namespace {

namespace fs = std::filesystem;
using test::Json;
using ::testing::HasSubstr;

const std::string kKeyA(32, 'A');
const std::string kKeyB = [] {
  std::string k;
  for (int i = 0; i < 32; ++i) k.push_back(static_cast<char>(i * 7 + 1));
  return k;
}();

// Strings no RocksDB or rockdoc metadata holds.
constexpr char kDocMarker[] = "zebra-quokka-7741";
constexpr char kIndexMarker[] = "narwhal-okapi-5519";
constexpr char kNameMarker[] = "axolotl_pangolin";

std::string ReadAll(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every regular file under `dir`, recursively, by relative path.
std::map<std::string, std::string> Files(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = ReadAll(e.path());
  }
  return files;
}

// The files under `dir` holding one of the markers.
std::vector<std::string> FilesWithMarkers(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& [name, bytes] : Files(dir)) {
    for (const char* m : {kDocMarker, kIndexMarker, kNameMarker}) {
      if (bytes.find(m) != std::string::npos) {
        found.push_back(name + " holds " + m);
      }
    }
  }
  return found;
}

ClientOptions WithKey(const std::string& key) {
  ClientOptions o;
  o.encryption_key = key;
  return o;
}

// Documents, an index, a collection named with a marker; some flushed into
// table files (Compact), some left in the write-ahead log only.
void WriteMarkers(Client& client) {
  Collection c = client.GetDatabase("db").GetCollection(kNameMarker);
  for (int i = 0; i < 200; ++i) {
    Document d = Json(R"({"_id": )" + std::to_string(i) + R"(, "secret": ")" + kDocMarker +
                      R"(", "tag": ")" + kIndexMarker + std::to_string(i % 5) + R"("})");
    ASSERT_TRUE(c.InsertOne(d).ok());
  }
  ASSERT_TRUE(c.CreateIndex(Json(R"({"tag": 1})")).ok());
  ASSERT_TRUE(client.Compact().ok());
  for (int i = 200; i < 220; ++i) {
    ASSERT_TRUE(c.InsertOne(Json(R"({"_id": )" + std::to_string(i) + R"(, "secret": ")" +
                                 kDocMarker + R"("})"))
                    .ok());
  }
}

int64_t CountDocs(const std::string& dir, const ClientOptions& options) {
  auto client = Client::Open(dir, options);
  if (!client.ok()) {
    ADD_FAILURE() << client.status();
    return -1;
  }
  auto n = (*client)->GetDatabase("db").GetCollection(kNameMarker).CountDocuments(Document());
  return n.ok() ? *n : -1;
}

TEST(EncryptionTest, NoMarkerInAnyFileWithAKeyAndEveryMarkerWithout) {
  test::ScratchDir dir;
  for (bool encrypted : {false, true}) {
    const std::string db = dir.Sub(encrypted ? "secret" : "plain");
    const std::string copy = db + "-checkpoint";
    ClientOptions options = WithKey(encrypted ? kKeyA : "");
    {
      auto client = Client::Open(db, options);
      ASSERT_TRUE(client.ok()) << client.status();
      WriteMarkers(**client);
      ASSERT_TRUE((*client)->Checkpoint(copy).ok());
      // Before the close: the write-ahead log holds the last writes.
      std::vector<std::string> live = FilesWithMarkers(db);
      if (encrypted) {
        EXPECT_THAT(live, ::testing::IsEmpty());
      } else {
        EXPECT_FALSE(live.empty());
      }
    }
    std::vector<std::string> found = FilesWithMarkers(db);
    std::vector<std::string> in_copy = FilesWithMarkers(copy);
    if (encrypted) {
      EXPECT_THAT(found, ::testing::IsEmpty());
      EXPECT_THAT(in_copy, ::testing::IsEmpty());
    } else {
      // The scan sees markers where they are in plain text.
      EXPECT_FALSE(found.empty());
      EXPECT_FALSE(in_copy.empty());
    }
    // What was written reads back, from the directory and its checkpoint.
    EXPECT_EQ(CountDocs(db, options), 220);
    EXPECT_EQ(CountDocs(copy, options), 220);
  }
}

TEST(EncryptionTest, SpillRunsAreEncrypted) {
  test::ScratchDir dir;
  for (bool encrypted : {false, true}) {
    const std::string db = dir.Sub(encrypted ? "secret" : "plain");
    auto engine = internal::Engine::Open(db, WithKey(encrypted ? kKeyA : ""));
    ASSERT_TRUE(engine.ok()) << engine.status();
    auto writer = internal::NewSpillRun(**engine);
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE((*writer)->Add(std::string(kDocMarker) + std::to_string(100000 + i)).ok());
    }
    auto reader = (*writer)->Finish();
    ASSERT_TRUE(reader.ok()) << reader.status();
    // The run exists (its reader is open) and is read back whole.
    ASSERT_TRUE(fs::exists(db + "/_tmp") && !fs::is_empty(db + "/_tmp"));
    const std::vector<std::string> found = FilesWithMarkers(db + "/_tmp");
    EXPECT_EQ(found.empty(), encrypted) << ::testing::PrintToString(found);
    int records = 0;
    while (true) {
      auto r = (*reader)->Next();
      ASSERT_TRUE(r.ok()) << r.status();
      if (!r->has_value()) break;
      EXPECT_EQ(**r, std::string(kDocMarker) + std::to_string(100000 + records));
      ++records;
    }
    EXPECT_EQ(records, 1000);
    reader->reset();
    ASSERT_TRUE((*engine)->Close().ok());
  }
}

// Opens that must fail leave every file as it was, byte for byte.
class EncryptionRefusalTest : public ::testing::Test {
 protected:
  void Make(const std::string& key) {
    auto client = Client::Open(Db(), WithKey(key));
    ASSERT_TRUE(client.ok()) << client.status();
    WriteMarkers(**client);
  }
  std::string Db() const { return dir_.Sub("db"); }
  void ExpectRefused(const ClientOptions& options, ErrorCode code, const std::string& says) {
    const auto before = Files(Db());
    auto client = Client::Open(Db(), options);
    ASSERT_FALSE(client.ok());
    EXPECT_EQ(client.status().code(), code) << client.status();
    EXPECT_THAT(std::string(client.status().message()), HasSubstr(says));
    EXPECT_TRUE(Files(Db()) == before) << "a refused open changed the directory";
  }
  test::ScratchDir dir_;
};

TEST_F(EncryptionRefusalTest, EncryptedWithoutAKeyOrWithAWrongOne) {
  Make(kKeyA);
  ExpectRefused(ClientOptions(), ErrorCode::kInvalidOptions, "it is encrypted");
  ExpectRefused(WithKey(kKeyB), ErrorCode::kInvalidOptions,
                "is encrypted under a key this open was not given");
  ClientOptions read_only = WithKey(kKeyB);
  read_only.read_only = true;
  ExpectRefused(read_only, ErrorCode::kInvalidOptions, "not given");
  // The right key, read-only as well.
  EXPECT_EQ(CountDocs(Db(), WithKey(kKeyA)), 220);
  read_only.encryption_key = kKeyA;
  EXPECT_EQ(CountDocs(Db(), read_only), 220);
}

TEST_F(EncryptionRefusalTest, PlainWithAKey) {
  Make("");
  ExpectRefused(WithKey(kKeyA), ErrorCode::kInvalidOptions, "it is not encrypted");
  EXPECT_EQ(CountDocs(Db(), ClientOptions()), 220);
}

TEST_F(EncryptionRefusalTest, BadKeysAndCombinations) {
  Make(kKeyA);
  ExpectRefused(WithKey("short"), ErrorCode::kBadValue, "must be 32 bytes");
  ClientOptions previous_alone;
  previous_alone.previous_encryption_keys = {kKeyA};
  ExpectRefused(previous_alone, ErrorCode::kInvalidOptions, "without an encryption_key");
  ClientOptions memory = WithKey(kKeyA);
  memory.in_memory = true;
  auto c = Client::Open("anything", memory);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), ErrorCode::kInvalidOptions);
}

TEST(EncryptionRotationTest, RotatesEncryptsAndDecrypts) {
  test::ScratchDir dir;
  const std::string db = dir.Sub("db");
  {
    auto client = Client::Open(db);
    ASSERT_TRUE(client.ok());
    WriteMarkers(**client);
  }
  // Plain -> A -> B -> plain, reading everything back at each step.
  auto r = Client::RotateEncryptionKey(db, "", kKeyA);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->files_rewritten, 3);
  EXPECT_THAT(FilesWithMarkers(db), ::testing::IsEmpty());
  EXPECT_EQ(CountDocs(db, WithKey(kKeyA)), 220);

  r = Client::RotateEncryptionKey(db, kKeyA, kKeyB);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(FilesWithMarkers(db), ::testing::IsEmpty());
  EXPECT_EQ(Client::Open(db, WithKey(kKeyA)).status().code(), ErrorCode::kInvalidOptions);
  EXPECT_EQ(CountDocs(db, WithKey(kKeyB)), 220);

  r = Client::RotateEncryptionKey(db, kKeyB, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(FilesWithMarkers(db).empty());
  EXPECT_EQ(CountDocs(db, ClientOptions()), 220);
}

TEST(EncryptionRotationTest, RefusesAnOpenDirectoryAndAWrongOldKey) {
  test::ScratchDir dir;
  const std::string db = dir.Sub("db");
  auto client = Client::Open(db, WithKey(kKeyA));
  ASSERT_TRUE(client.ok());
  WriteMarkers(**client);
  auto r = Client::RotateEncryptionKey(db, kKeyA, kKeyB);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kDBPathInUse);
  ASSERT_TRUE((*client)->Close().ok());
  const auto before = Files(db);
  // The files are under A: from B (wrong) to C is refused before any
  // rewrite. (From B to A would rightly keep every file: they are under A.)
  r = Client::RotateEncryptionKey(db, kKeyB, std::string(32, 'C'));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidOptions);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("nothing was rewritten"));
  EXPECT_TRUE(Files(db) == before);
}

// A rotation that stops after each number of files (as a crash would): the
// directory then opens with both keys and not with the new one alone, and the
// rotation run again finishes it.
TEST(EncryptionRotationTest, StoppedPartWayOpensWithBothKeysAndFinishes) {
  test::ScratchDir dir;
  const std::string db = dir.Sub("db");
  {
    auto client = Client::Open(db, WithKey(kKeyA));
    ASSERT_TRUE(client.ok());
    WriteMarkers(**client);
  }
  KeyRotationReport full;
  {
    // How many files a rotation rewrites, on a copy.
    const std::string probe = dir.Sub("probe");
    fs::copy(db, probe, fs::copy_options::recursive);
    ASSERT_TRUE(internal::RotateDirectoryKey(probe, kKeyA, kKeyB, &full).ok());
    ASSERT_GT(full.files_rewritten, 3);
  }
  for (int stop_after = 1; stop_after < full.files_rewritten; stop_after += 2) {
    SCOPED_TRACE("stopped after " + std::to_string(stop_after) + " files");
    const std::string copy = dir.Sub("run" + std::to_string(stop_after));
    fs::copy(db, copy, fs::copy_options::recursive);
    int done = 0;
    KeyRotationReport report;
    Status st = internal::RotateDirectoryKey(copy, kKeyA, kKeyB, &report, [&] {
      return ++done == stop_after ? Status(ErrorCode::kInternalError, "crash") : Status::OK();
    });
    ASSERT_EQ(st.code(), ErrorCode::kInternalError);
    auto alone = Client::Open(copy, WithKey(kKeyB));
    ASSERT_FALSE(alone.ok());
    EXPECT_EQ(alone.status().code(), ErrorCode::kInvalidOptions);
    EXPECT_THAT(std::string(alone.status().message()), HasSubstr("rotation stopped part-way"));
    ClientOptions both = WithKey(kKeyB);
    both.previous_encryption_keys = {kKeyA};
    EXPECT_EQ(CountDocs(copy, both), 220);
    ASSERT_TRUE(internal::RotateDirectoryKey(copy, kKeyA, kKeyB, &report).ok());
    EXPECT_GT(report.files_kept, 0);
    EXPECT_EQ(CountDocs(copy, WithKey(kKeyB)), 220);
    fs::remove_all(copy);
  }
}

TEST(EncryptionKeyFileTest, ReadsMongodsFormatAndRefusesOthers) {
  test::ScratchDir dir;
  auto write = [&](const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir.Sub(name);
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  };
  // base64 of 32 bytes 'A' (0x41).
  const std::string b64 = "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=";
  auto key = EncryptionKeyFromFile(write("good", b64 + "\n", 0600));
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(*key, kKeyA);
  auto open = EncryptionKeyFromFile(write("open", b64, 0644));
  EXPECT_EQ(open.status().code(), ErrorCode::kBadValue);
  EXPECT_THAT(std::string(open.status().message()), HasSubstr("are too open"));
  EXPECT_EQ(EncryptionKeyFromFile(write("short", "QUFB", 0600)).status().code(),
            ErrorCode::kBadValue);
  EXPECT_EQ(EncryptionKeyFromFile(write("junk", "not base64!", 0600)).status().code(),
            ErrorCode::kBadValue);
  EXPECT_EQ(EncryptionKeyFromFile(dir.Sub("missing")).status().code(), ErrorCode::kFileNotOpen);
}

}  // namespace
}  // namespace rockdoc

// Storage-layer tests through the public API (rockdoc/client.h), each against a
// real RocksDB directory in a scratch folder: opening, locking and refusing
// directories, damaged files, the catalog (databases, collections, names),
// every document operation with its MongoDB error, durability across reopen,
// validate(), and what happens to handles and cursors after Close.
//
// Internal headers appear only where a test must reach under the API: to
// damage a closed database on purpose through raw RocksDB.
//
// This binary has its own main: a test re-executes it (/proc/self/exe) as a
// second *process* that tries to open a directory, because a fork without
// exec would inherit RocksDB's in-process lock table and so test the
// in-process path again.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "api/client_internal.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/kv.h"
#include "storage/rocks.h"
#include "test_util.h"

namespace rockdoc {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using test::Json;

// ---- A StatusIs matcher of abseil's shape ----

Status StatusOf(const Status& s) { return s; }
template <typename T>
Status StatusOf(const StatusOr<T>& s) {
  return s.status();
}

MATCHER_P2(StatusIs, code, message_matcher,
           "has code " + ErrorCodeName(code) + " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher)) {
  Status s = StatusOf(arg);
  *result_listener << "status is " << s;
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()),
                                       result_listener);
}

Document IdFilter(int32_t id) {
  BsonBuilder b;
  b.AppendInt32("_id", id);
  return std::move(b).Build();
}

// The document with _id `id`, or an empty optional (failing on error).
std::optional<Document> Get(const Collection& c, int32_t id) {
  BsonBuilder b;
  b.AppendInt32("", id);
  Document holder = std::move(b).Build();
  auto found = c.FindById(*holder.begin());
  EXPECT_TRUE(found.ok()) << found.status();
  return found.ok() ? *found : std::nullopt;
}

std::vector<Document> All(const Collection& c) {
  auto cursor = c.Find(Document());
  EXPECT_TRUE(cursor.ok()) << cursor.status();
  if (!cursor.ok()) return {};
  auto docs = cursor->ToVector();
  EXPECT_TRUE(docs.ok()) << docs.status();
  return docs.ok() ? *docs : std::vector<Document>();
}

// A document {_id: id, s: "xxx..."} of exactly `size` bytes.
Document DocOfSize(int32_t id, size_t size) {
  // 4 (length) + 9 (_id int32) + 1 + 2 ("s\0") + 4 (string length) + n + 1 (NUL) + 1 (EOO).
  constexpr size_t kOverhead = 22;
  BsonBuilder b;
  b.AppendInt32("_id", id);
  b.AppendString("s", std::string(size - kOverhead, 'x'));
  Document d = std::move(b).Build();
  EXPECT_EQ(d.size(), size);
  return d;
}

// A document `levels` deep, MongoDB's way of counting: the top-level
// document is level 1, each non-empty embedded document or array one more.
// With `innermost_empty` the deepest container is empty (and so, for
// MongoDB, not a level).
Document Nested(int levels, bool innermost_empty = false) {
  BsonBuilder b;
  for (int i = 1; i < levels; ++i) {
    if (i % 2 == 0) {
      b.OpenArray("a");
    } else {
      b.OpenDocument("a");
    }
  }
  if (!innermost_empty) b.AppendInt32("x", 1);
  for (int i = 1; i < levels; ++i) b.Close();
  return std::move(b).Build();
}

// Every file under `dir` (relative path -> contents).
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    std::string rel = fs::relative(entry.path(), dir).string();
    if (entry.is_regular_file()) {
      std::ifstream in(entry.path(), std::ios::binary);
      files[rel] = std::string(std::istreambuf_iterator<char>(in), {});
    } else {
      files[rel] = "<dir>";
    }
  }
  return files;
}

void WriteFile(const fs::path& p, std::string_view contents) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The largest file in `dir` whose name ends with `suffix`.
fs::path LargestFile(const std::string& dir, std::string_view suffix) {
  fs::path best;
  uintmax_t best_size = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
        entry.file_size() >= best_size) {
      best = entry.path();
      best_size = entry.file_size();
    }
  }
  return best;
}

// Runs this test binary again as a separate process that opens `dir` and
// exits with the status code number (0 when it opened).
int OpenInAnotherProcess(const std::string& dir) {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", "storage_test", "--child-open", dir.c_str(), nullptr);
    _exit(127);
  }
  int wstatus = 0;
  if (waitpid(pid, &wstatus, 0) != pid || !WIFEXITED(wstatus)) return -1;
  return WEXITSTATUS(wstatus);
}

class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  void Reopen(const ClientOptions& options = {}) {
    if (client_) {
      ASSERT_TRUE(client_->Close().ok());
    }
    client_.reset();
    auto c = Client::Open(dir_.path(), options);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  // The directory under the API: raw RocksDB with rockdoc's own options
  // and its three column families (handles: data, catalog, changes).
  struct RawDb {
    rocksdb::Options options = internal::MakeRocksOptions(ClientOptions());
    rocksdb::DB* db = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
  };
  void OpenRaw(RawDb* raw) {
    const rocksdb::Options& o = raw->options;
    std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(o)},
        {"catalog", rocksdb::ColumnFamilyOptions(o)},
        {"changes", rocksdb::ColumnFamilyOptions(o)}};
    rocksdb::Status s = rocksdb::DB::Open(o, dir_.path(), families, &raw->handles, &raw->db);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void CloseRaw(RawDb* raw) {
    for (auto* h : raw->handles) ASSERT_TRUE(raw->db->DestroyColumnFamilyHandle(h).ok());
    ASSERT_TRUE(raw->db->Close().ok());
    delete raw->db;
    raw->db = nullptr;
  }
  void CloseClient() {
    if (client_) {
      ASSERT_TRUE(client_->Close().ok());
    }
    client_.reset();
  }

  Collection Coll(std::string_view name = "c", std::string_view db = "db") const {
    return client_->GetDatabase(db).GetCollection(name);
  }
  int64_t Count(const Collection& c) const {
    auto n = c.EstimatedDocumentCount();
    EXPECT_TRUE(n.ok()) << n.status();
    return n.value_or(-1);
  }
  int64_t ScanCount(const Collection& c) const {
    auto n = c.CountDocuments(Document());
    EXPECT_TRUE(n.ok()) << n.status();
    return n.value_or(-1);
  }
  void Insert(const Collection& c, std::string_view json) {
    auto r = c.InsertOne(Json(json));
    ASSERT_TRUE(r.ok()) << r.status() << " inserting " << json;
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

// ======================= Opening and closing =======================

// The default block cache follows MongoDB's WiredTiger rule: half of
// (memory - 1 GiB), at least 256 MiB; a client opens with the cache its
// options ask for.
TEST(BlockCacheTest, SizedFromMemoryAsWiredTigersCacheAndOpenedAsAsked) {
  constexpr uint64_t kMiB = uint64_t{1} << 20, kGiB = uint64_t{1} << 30;
  EXPECT_EQ(internal::BlockCacheBytesForMemory(24 * kGiB), 23 * kGiB / 2);
  EXPECT_EQ(internal::BlockCacheBytesForMemory(3 * kGiB), 1 * kGiB);
  EXPECT_EQ(internal::BlockCacheBytesForMemory(1536 * kMiB), 256 * kMiB);
  EXPECT_EQ(internal::BlockCacheBytesForMemory(1 * kGiB), 256 * kMiB);
  EXPECT_EQ(internal::BlockCacheBytesForMemory(0), 256 * kMiB);
  EXPECT_EQ(ClientOptions().block_cache_bytes, DefaultBlockCacheBytes());
  EXPECT_GE(DefaultBlockCacheBytes(), 256 * kMiB);

  test::ScratchDir dir;
  ClientOptions options;
  options.block_cache_bytes = 8 * kMiB;
  auto client = Client::Open(dir.path(), options);
  ASSERT_TRUE(client.ok()) << client.status();
  const std::shared_ptr<internal::Engine> engine =
      internal::ClientAccess::EngineOf((*client)->GetDatabase("db"));
  EXPECT_EQ(engine->rocks().block_cache->GetCapacity(), 8 * kMiB);
}

// A catalog entry written before collections had UUIDs (no "uuid" field)
// gets one derived from its prefix id: the same at every open, different
// per collection, RFC 9562 version 8; the next write of the entry keeps it.
TEST(CatalogUuidTest, EntriesWithoutAUuidGetAStableDerivedOne) {
  test::ScratchDir dir;
  auto uuid_of = [&](const Client& client, const std::string& name) {
    auto infos = client.GetDatabase("db").ListCollections();
    for (const auto& info : *infos) {
      if (info.name == name) return info.uuid;
    }
    return std::string();
  };
  {
    auto client = Client::Open(dir.path());
    ASSERT_TRUE(client.ok()) << client.status();
    for (const char* name : {"a", "b"}) {
      ASSERT_TRUE((*client)->GetDatabase("db").CreateCollection(name).ok());
      // Rewrite the entry as an older rockdoc wrote it: without "uuid".
      const std::shared_ptr<internal::Engine> engine =
          internal::ClientAccess::EngineOf((*client)->GetDatabase("db"));
      std::string value;
      bool found = false;
      ASSERT_TRUE(engine->ReadMetadata(internal::CatalogMetaKey("db", name), &value, &found).ok());
      ASSERT_TRUE(found);
      Document entry = Document::AdoptValidated(value);
      ASSERT_TRUE(entry.Get("uuid").IsBinary());
      BsonBuilder old;
      for (Element e : entry) {
        if (e.key() != "uuid") old.AppendElement(e);
      }
      Document old_entry = std::move(old).Build();
      ASSERT_TRUE(engine->WriteMetadata({{internal::Engine::MetadataWrite::Op::kPut,
                                          internal::CatalogMetaKey("db", name),
                                          std::string(old_entry.bytes())}})
                      .ok());
    }
  }
  std::string a, b;
  for (int open = 0; open < 2; ++open) {
    auto client = Client::Open(dir.path());
    ASSERT_TRUE(client.ok()) << client.status();
    if (open == 0) {
      a = uuid_of(**client, "a");
      b = uuid_of(**client, "b");
      ASSERT_EQ(a.size(), 16u);
      EXPECT_NE(a, b);
      EXPECT_EQ(static_cast<unsigned char>(a[6]) >> 4, 8u);
      EXPECT_EQ(static_cast<unsigned char>(a[8]) & 0xc0, 0x80u);
      // A write of the entry (an index) persists the derived UUID as it is.
      ASSERT_TRUE((*client)->GetDatabase("db").GetCollection("a").CreateIndex(Json(R"({"k": 1})")).ok());
    } else {
      EXPECT_EQ(uuid_of(**client, "a"), a);
      EXPECT_EQ(uuid_of(**client, "b"), b);
    }
  }
}

TEST_F(StorageTest, DataPersistsAcrossCloseAndReopen) {
  Insert(Coll(), R"({"_id": 1, "name": "Ada", "tags": ["math", "code"]})");
  Insert(Coll("d", "other"), R"({"_id": "x", "n": {"$numberLong": "5"}})");
  Reopen();
  auto one = Get(Coll(), 1);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(*one, Json(R"({"_id": 1, "name": "Ada", "tags": ["math", "code"]})"));
  EXPECT_EQ(All(Coll("d", "other")), std::vector<Document>{Json(R"({"_id": "x", "n": {"$numberLong": "5"}})")});
  EXPECT_TRUE(fs::exists(dir_.Sub("ROCKDOC")));
  EXPECT_EQ(client_->path(), dir_.path());
}

TEST(OpenTest, CreatesMissingDirectoriesAndReopensWithoutCreate) {
  test::ScratchDir dir;
  std::string path = dir.Sub("a/b/db");
  {
    auto c = Client::Open(path);
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->GetDatabase("db").GetCollection("c").InsertOne(Json(R"({"_id": 1})")).ok());
  }
  ClientOptions no_create;
  no_create.create_if_missing = false;
  auto c = Client::Open(path, no_create);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*(*c)->GetDatabase("db").GetCollection("c").EstimatedDocumentCount(), 1);
}

TEST(OpenTest, CreateIfMissingFalseOnMissingDirectory) {
  test::ScratchDir dir;
  ClientOptions o;
  o.create_if_missing = false;
  EXPECT_THAT(Client::Open(dir.Sub("missing"), o),
              StatusIs(ErrorCode::kNonExistentPath, HasSubstr("does not exist")));
  EXPECT_FALSE(fs::exists(dir.Sub("missing")));
  // An existing but empty directory holds no database either.
  EXPECT_THAT(Client::Open(dir.path(), o), StatusIs(ErrorCode::kNonExistentPath, HasSubstr("no rockdoc database")));
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST_F(StorageTest, SecondOpenInTheSameProcessIsDBPathInUse) {
  Insert(Coll(), R"({"_id": 1})");
  EXPECT_THAT(Client::Open(dir_.path()), StatusIs(ErrorCode::kDBPathInUse, HasSubstr("locked")));
  // The first client is unaffected, and after it closes the directory opens.
  Insert(Coll(), R"({"_id": 2})");
  CloseClient();
  auto again = Client::Open(dir_.path());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*(*again)->GetDatabase("db").GetCollection("c").EstimatedDocumentCount(), 2);
}

TEST_F(StorageTest, SecondOpenFromAnotherProcessIsDBPathInUse) {
  Insert(Coll(), R"({"_id": 1})");
  EXPECT_EQ(OpenInAnotherProcess(dir_.path()), static_cast<int>(ErrorCode::kDBPathInUse));
  CloseClient();
  // Once this process lets go, the other process opens it.
  EXPECT_EQ(OpenInAnotherProcess(dir_.path()), 0);
  Reopen();
  EXPECT_EQ(Count(Coll()), 1);
}

TEST(OpenTest, ForeignDirectoryIsRefusedAndLeftUntouched) {
  test::ScratchDir dir;
  fs::create_directories(dir.Sub("sub"));
  WriteFile(dir.Sub("notes.txt"), "my precious notes\n");
  WriteFile(dir.Sub("sub/data.bin"), std::string("\x00\x01\x02\xff", 4));
  // A file named like RocksDB's must not fool the check either.
  WriteFile(dir.Sub("CURRENT"), "MANIFEST-000001\n");
  auto before = Snapshot(dir.path());
  for (bool create : {true, false}) {
    ClientOptions o;
    o.create_if_missing = create;
    EXPECT_THAT(Client::Open(dir.path(), o),
                StatusIs(ErrorCode::kUnsupportedFormat, HasSubstr("not a rockdoc database")));
  }
  EXPECT_EQ(Snapshot(dir.path()), before);
}

TEST(OpenTest, PlainRocksDbDirectoryIsRefusedAndLeftUntouched) {
  test::ScratchDir dir;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir.path(), &raw).ok());
    ASSERT_TRUE(raw->Put(rocksdb::WriteOptions(), "k", "v").ok());
    ASSERT_TRUE(raw->Close().ok());
    delete raw;
  }
  auto before = Snapshot(dir.path());
  EXPECT_THAT(Client::Open(dir.path()), StatusIs(ErrorCode::kUnsupportedFormat, HasSubstr("ROCKDOC")));
  EXPECT_EQ(Snapshot(dir.path()), before);
}

TEST(OpenTest, RegularFileIsRefusedAndLeftUntouched) {
  test::ScratchDir dir;
  WriteFile(dir.Sub("file"), "hello");
  EXPECT_THAT(Client::Open(dir.Sub("file")), StatusIs(ErrorCode::kUnsupportedFormat, HasSubstr("not a directory")));
  EXPECT_EQ(ReadFile(dir.Sub("file")), "hello");
}

TEST_F(StorageTest, DamagedOrNewerMarkerIsUnsupportedFormat) {
  Insert(Coll(), R"({"_id": 1})");
  CloseClient();
  WriteFile(dir_.Sub("ROCKDOC"), "rockdoc 5\n");
  EXPECT_THAT(Client::Open(dir_.path()), StatusIs(ErrorCode::kUnsupportedFormat, HasSubstr("newer")));
  WriteFile(dir_.Sub("ROCKDOC"), "garbage");
  EXPECT_THAT(Client::Open(dir_.path()), StatusIs(ErrorCode::kUnsupportedFormat, HasSubstr("damaged")));
  EXPECT_EQ(ReadFile(dir_.Sub("ROCKDOC")), "garbage");
  // A format-1, -2 or -3 database opens, and is marked format 4 (capped
  // collections' order entries, views, the change log's column family),
  // which an older rockdoc would refuse.
  for (const char* old : {"rockdoc 1\n", "rockdoc 2\n", "rockdoc 3\n"}) {
    WriteFile(dir_.Sub("ROCKDOC"), old);
    Reopen();
    EXPECT_EQ(Count(Coll()), 1);
    EXPECT_EQ(ReadFile(dir_.Sub("ROCKDOC")), "rockdoc 4\n");
  }
}

// ---- Damaged databases: a clear error, never a crash ----

class DamageTest : public StorageTest {
 protected:
  // 2,000 documents of ~1 KB, flushed to table files by Close.
  void WriteAndClose() {
    std::vector<Document> docs;
    for (int i = 0; i < 2000; ++i) {
      BsonBuilder b;
      b.AppendInt32("_id", i).AppendString("pad", std::string(1000, 'a' + i % 26));
      docs.push_back(std::move(b).Build());
    }
    auto r = Coll().InsertMany(docs);
    ASSERT_TRUE(r.ok() && r->ok());
    CloseClient();
  }
};

TEST_F(DamageTest, GarbledCurrentFile) {
  WriteAndClose();
  WriteFile(dir_.Sub("CURRENT"), "MANIFEST-999999\n");
  EXPECT_THAT(Client::Open(dir_.path()), StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr(dir_.path())));
  WriteFile(dir_.Sub("CURRENT"), "\x01\x02garbage");
  EXPECT_THAT(Client::Open(dir_.path()), StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr(dir_.path())));
}

TEST_F(DamageTest, MissingCurrentFileIsNotMistakenForANewDatabase) {
  WriteAndClose();
  fs::remove(dir_.Sub("CURRENT"));
  auto tables_before = Snapshot(dir_.path());
  EXPECT_THAT(Client::Open(dir_.path()), StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr("CURRENT")));
  // Nothing of the remaining data was deleted or rewritten.
  auto after = Snapshot(dir_.path());
  for (const auto& [name, contents] : tables_before) {
    if (name.ends_with(".sst") || name.ends_with(".log") || name.starts_with("MANIFEST")) {
      EXPECT_EQ(after[name], contents) << name;
    }
  }
}

// The MANIFEST lists the live table files; CURRENT names it.
fs::path CurrentManifest(const std::string& dir) {
  std::string current = ReadFile(dir + "/CURRENT");
  return fs::path(dir) / current.substr(0, current.find('\n'));
}

TEST_F(DamageTest, GarbledManifest) {
  WriteAndClose();
  fs::path manifest = CurrentManifest(dir_.path());
  ASSERT_TRUE(fs::exists(manifest));
  std::string bytes = ReadFile(manifest);
  auto before = Snapshot(dir_.path());
  std::string garbled = bytes;
  for (size_t i = 0; i < 16 && i < garbled.size(); ++i) garbled[i] = static_cast<char>(garbled[i] ^ 0x33);
  WriteFile(manifest, garbled);
  EXPECT_THAT(Client::Open(dir_.path()), StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr(dir_.path())));
  // Empty.
  WriteFile(manifest, "");
  EXPECT_THAT(Client::Open(dir_.path()), StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr(dir_.path())));
  // A failed open deleted none of the table files.
  for (const auto& [name, contents] : before) {
    if (name.ends_with(".sst")) EXPECT_TRUE(fs::exists(dir_.Sub(name))) << name;
  }
  // Put back, it opens with everything.
  WriteFile(manifest, bytes);
  Reopen();
  EXPECT_EQ(ScanCount(Coll()), 2000);
}

TEST_F(DamageTest, GarbledTableFileFooter) {
  WriteAndClose();
  fs::path sst = LargestFile(dir_.path(), ".sst");
  ASSERT_FALSE(sst.empty());
  std::string bytes = ReadFile(sst);
  for (size_t i = bytes.size() - 48; i < bytes.size(); ++i) bytes[i] = static_cast<char>(~bytes[i]);
  WriteFile(sst, bytes);
  auto opened = Client::Open(dir_.path());
  if (opened.ok()) {
    // RocksDB may open table files lazily; then the first read must fail.
    auto cursor = (*opened)->GetDatabase("db").GetCollection("c").Find(Document());
    if (cursor.ok()) {
      while (cursor->Next()) {
      }
      EXPECT_THAT(cursor->status(), StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr("")));
    } else {
      EXPECT_THAT(cursor, StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr("")));
    }
  } else {
    EXPECT_THAT(opened, StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr("")));
  }
}

TEST_F(DamageTest, GarbledDataBlockIsReportedByReadsScansAndValidate) {
  WriteAndClose();
  fs::path sst = LargestFile(dir_.path(), ".sst");
  ASSERT_FALSE(sst.empty());
  std::string bytes = ReadFile(sst);
  // The first data block starts at offset 0; flip bytes inside it.
  for (size_t i = 200; i < 260; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  WriteFile(sst, bytes);
  Reopen();
  // The first documents live in the damaged block.
  BsonBuilder id;
  id.AppendInt32("", 0);
  Document holder = std::move(id).Build();
  EXPECT_THAT(Coll().FindById(*holder.begin()),
              StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr("checksum")));
  auto cursor = Coll().Find(Document());
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  while (cursor->Next()) {
  }
  EXPECT_THAT(cursor->status(), StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr("checksum")));
  EXPECT_THAT(Coll().Validate(), StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr("checksum")));
  // A count of every document reads the exact count kept in the metadata; a
  // count with a filter scans the damaged block.
  EXPECT_THAT(Coll().CountDocuments(Json(R"({"_id": {"$gte": 0}})")),
              StatusIs(ErrorCode::kDataCorruptionDetected, HasSubstr("checksum")));
}

// ======================= Databases and collections =======================

TEST_F(StorageTest, CreateCollectionExplicitly) {
  Database db = client_->GetDatabase("db");
  ASSERT_TRUE(db.CreateCollection("empty").ok());
  EXPECT_THAT(db.CreateCollection("empty"),
              StatusIs(ErrorCode::kNamespaceExists, HasSubstr("db.empty already exists")));
  EXPECT_THAT(*db.ListCollectionNames(), ElementsAre("empty"));
  EXPECT_EQ(Count(Coll("empty")), 0);
  Reopen();
  // An empty collection survives a reopen.
  EXPECT_THAT(*client_->GetDatabase("db").ListCollectionNames(), ElementsAre("empty"));
  EXPECT_THAT(client_->GetDatabase("db").CreateCollection("empty"), StatusIs(ErrorCode::kNamespaceExists, HasSubstr("")));
}

TEST_F(StorageTest, FirstInsertCreatesDatabaseAndCollection) {
  EXPECT_THAT(*client_->ListDatabaseNames(), IsEmpty());
  EXPECT_THAT(*client_->GetDatabase("db").ListCollectionNames(), IsEmpty());
  Insert(Coll("c"), R"({"a": 1})");
  EXPECT_THAT(*client_->ListDatabaseNames(), ElementsAre("db"));
  EXPECT_THAT(*client_->GetDatabase("db").ListCollectionNames(), ElementsAre("c"));
  // Reads do not create anything.
  EXPECT_EQ(All(Coll("ghost")).size(), 0u);
  EXPECT_EQ(Count(Coll("ghost")), 0);
  EXPECT_THAT(*client_->GetDatabase("db").ListCollectionNames(), ElementsAre("c"));
}

TEST_F(StorageTest, ListsAreSorted) {
  for (const char* db : {"zeta", "alpha", "Mid", "beta"}) {
    for (const char* c : {"x", "b", "a", "B"}) Insert(Coll(c, db), R"({"a": 1})");
  }
  ASSERT_TRUE(client_->GetDatabase("beta").CreateCollection("0").ok());
  EXPECT_THAT(*client_->ListDatabaseNames(), ElementsAre("Mid", "alpha", "beta", "zeta"));
  EXPECT_THAT(*client_->GetDatabase("beta").ListCollectionNames(), ElementsAre("0", "B", "a", "b", "x"));
  Reopen();
  EXPECT_THAT(*client_->ListDatabaseNames(), ElementsAre("Mid", "alpha", "beta", "zeta"));
  EXPECT_THAT(*client_->GetDatabase("alpha").ListCollectionNames(), ElementsAre("B", "a", "b", "x"));
}

// bytes_read counts what every read path returns: a point read, a batched
// point read ($in on _id) and a scan each add at least the bytes of the
// documents they read from RocksDB (a record cache hit reads none).
TEST_F(StorageTest, BytesReadCountsPointBatchedAndScanReads) {
  std::vector<Document> docs;
  for (int i = 0; i < 200; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i).AppendString("pad", std::string(500, 'p'));
    docs.push_back(std::move(b).Build());
  }
  const uint64_t doc_bytes = docs.front().size();
  ASSERT_TRUE(Coll().InsertMany(docs)->ok());
  Reopen();
  auto read = [&](const char* filter) {
    const uint64_t before = client_->GetStorageStats().bytes_read;
    int64_t n = 0;
    {
      auto cursor = Coll().Find(Json(filter));
      EXPECT_TRUE(cursor.ok()) << cursor.status();
      while (cursor->Next()) ++n;
    }  // RocksDB adds an iterator's bytes to the statistics when it closes
    return std::make_pair(n, client_->GetStorageStats().bytes_read - before);
  };
  auto [one, one_bytes] = read(R"({"_id": 7})");
  EXPECT_EQ(one, 1);
  EXPECT_GE(one_bytes, doc_bytes);
  // Not 7 again: the record cache would serve it without reading RocksDB.
  auto [batch, batch_bytes] = read(R"({"_id": {"$in": [1, 3, 5, 9, 11, 13, 15, 17, 19, 21]}})");
  EXPECT_EQ(batch, 10);
  EXPECT_GE(batch_bytes, 10 * doc_bytes);
  auto [all, all_bytes] = read("{}");
  EXPECT_EQ(all, 200);
  EXPECT_GE(all_bytes, 200 * doc_bytes);
}

// Compact drops the versions that updates overwrote: the live table files
// then hold the documents alone, and the documents are intact.
TEST_F(StorageTest, CompactLeavesOnlyTheLiveVersions) {
  // Three rounds, three table files: below RocksDB's trigger of an automatic
  // compaction (4 level-0 files), so the overwritten versions stay.
  for (int round = 0; round < 3; ++round) {
    const std::string pad(20000, static_cast<char>('p' + round));
    for (int i = 0; i < 50; ++i) {
      BsonBuilder b;
      b.AppendInt32("_id", i).AppendInt32("round", round).AppendString("pad", pad);
      ASSERT_TRUE(Coll("c").ReplaceOne(Json("{\"_id\": " + std::to_string(i) + "}"),
                                       std::move(b).Build(), /*upsert=*/true)
                      .ok());
    }
    Reopen();  // each round's versions in their own table file
  }
  const uint64_t before = client_->GetStorageStats().live_sst_bytes;
  ASSERT_TRUE(client_->Compact().ok());
  const uint64_t after = client_->GetStorageStats().live_sst_bytes;
  EXPECT_GT(before, 2 * after) << before << " then " << after;
  EXPECT_GT(after, 0u);
  EXPECT_EQ(Count(Coll("c")), 50);
  EXPECT_EQ(Get(Coll("c"), 7)->Get("round").Int32(), 2);
  ASSERT_TRUE(client_->Compact().ok());  // nothing left to drop: still fine
  ASSERT_TRUE(client_->Close().ok());
  EXPECT_EQ(client_->Compact().code(), ErrorCode::kIllegalOperation);
}

TEST_F(StorageTest, DropCollectionRemovesDocumentsAndReclaimsSpace) {
  // Two neighbours: dropping one (a range deletion of its prefix) must not
  // touch the other, whose prefix id comes right after it.
  std::vector<Document> docs;
  for (int i = 0; i < 20000; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i).AppendString("pad", std::string(1000, 'a' + i % 26));
    docs.push_back(std::move(b).Build());
  }
  ASSERT_TRUE(Coll("big").InsertMany(docs)->ok());
  for (int i = 0; i < 100; ++i) Insert(Coll("neighbour"), R"({"k": "v"})");
  Reopen();  // Close flushes: the documents are now in table files.
  uint64_t before = client_->GetStorageStats().live_sst_bytes;
  EXPECT_GT(before, 10u << 20);

  bool existed = false;
  ASSERT_TRUE(client_->GetDatabase("db").DropCollection("big", &existed).ok());
  EXPECT_TRUE(existed);
  uint64_t after = client_->GetStorageStats().live_sst_bytes;
  EXPECT_LT(after, 1u << 20) << "before " << before;
  EXPECT_FALSE(Get(Coll("big"), 5).has_value());
  EXPECT_EQ(Count(Coll("big")), 0);
  EXPECT_EQ(ScanCount(Coll("big")), 0);
  EXPECT_THAT(*client_->GetDatabase("db").ListCollectionNames(), ElementsAre("neighbour"));
  EXPECT_EQ(ScanCount(Coll("neighbour")), 100);

  Reopen();
  EXPECT_EQ(ScanCount(Coll("big")), 0);
  EXPECT_EQ(ScanCount(Coll("neighbour")), 100);
  EXPECT_EQ(Count(Coll("neighbour")), 100);
  ASSERT_TRUE(client_->GetDatabase("db").DropCollection("big", &existed).ok());
  EXPECT_FALSE(existed);
  // The name is free again, with none of the old documents.
  Insert(Coll("big"), R"({"_id": 5, "new": true})");
  EXPECT_EQ(All(Coll("big")), std::vector<Document>{Json(R"({"_id": 5, "new": true})")});
  EXPECT_EQ(Count(Coll("big")), 1);
  EXPECT_TRUE(Coll("big").Validate()->valid);
  EXPECT_TRUE(Coll("neighbour").Validate()->valid);
}

TEST_F(StorageTest, CollectionDropIsTheSameAsDatabaseDropCollection) {
  Insert(Coll("a"), R"({"_id": 1})");
  ASSERT_TRUE(Coll("a").Drop().ok());
  ASSERT_TRUE(Coll("a").Drop().ok());  // no error when missing
  EXPECT_THAT(*client_->ListDatabaseNames(), IsEmpty());
}

TEST_F(StorageTest, DropDatabaseDropsOnlyItsCollections) {
  for (const char* c : {"a", "b", "c"}) Insert(Coll(c, "gone"), R"({"_id": 1})");
  Insert(Coll("a", "kept"), R"({"_id": 1})");
  Insert(Coll("gone", "kept"), R"({"_id": 1})");
  ASSERT_TRUE(client_->DropDatabase("gone").ok());
  ASSERT_TRUE(client_->DropDatabase("gone").ok());
  ASSERT_TRUE(client_->DropDatabase("never").ok());
  EXPECT_THAT(*client_->ListDatabaseNames(), ElementsAre("kept"));
  EXPECT_THAT(*client_->GetDatabase("gone").ListCollectionNames(), IsEmpty());
  EXPECT_EQ(ScanCount(Coll("a", "gone")), 0);
  EXPECT_EQ(ScanCount(Coll("a", "kept")), 1);
  EXPECT_EQ(ScanCount(Coll("gone", "kept")), 1);
  Reopen();
  EXPECT_THAT(*client_->ListDatabaseNames(), ElementsAre("kept"));
  ASSERT_TRUE(client_->GetDatabase("kept").Drop().ok());
  EXPECT_THAT(*client_->ListDatabaseNames(), IsEmpty());
}

TEST_F(StorageTest, RenameCollection) {
  Database db = client_->GetDatabase("db");
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Coll("from").InsertOne(IdFilter(i)).ok());
  Insert(Coll("target"), R"({"_id": 100})");

  EXPECT_THAT(db.RenameCollection("missing", "x"),
              StatusIs(ErrorCode::kNamespaceNotFound, HasSubstr("db.missing")));
  EXPECT_THAT(db.RenameCollection("from", "target"),
              StatusIs(ErrorCode::kNamespaceExists, HasSubstr("db.target")));
  EXPECT_THAT(db.RenameCollection("from", "bad$name"), StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("$")));
  EXPECT_EQ(ScanCount(Coll("from")), 10);
  EXPECT_EQ(ScanCount(Coll("target")), 1);

  ASSERT_TRUE(db.RenameCollection("from", "to").ok());
  EXPECT_THAT(*db.ListCollectionNames(), ElementsAre("target", "to"));
  EXPECT_EQ(ScanCount(Coll("to")), 10);
  EXPECT_EQ(Count(Coll("to")), 10);
  EXPECT_EQ(ScanCount(Coll("from")), 0);
  EXPECT_THAT(db.RenameCollection("from", "x"), StatusIs(ErrorCode::kNamespaceNotFound, HasSubstr("")));

  // drop_target replaces the target and its documents.
  ASSERT_TRUE(db.RenameCollection("to", "target", /*drop_target=*/true).ok());
  EXPECT_THAT(*db.ListCollectionNames(), ElementsAre("target"));
  EXPECT_EQ(ScanCount(Coll("target")), 10);
  EXPECT_FALSE(Get(Coll("target"), 100).has_value());
  EXPECT_TRUE(Get(Coll("target"), 3).has_value());

  Reopen();
  EXPECT_THAT(*client_->GetDatabase("db").ListCollectionNames(), ElementsAre("target"));
  EXPECT_EQ(ScanCount(Coll("target")), 10);
  EXPECT_EQ(Count(Coll("target")), 10);
  EXPECT_TRUE(Coll("target").Validate()->valid);
  // The old name is free: inserting there makes a new, separate collection.
  Insert(Coll("from"), R"({"_id": 3, "fresh": 1})");
  EXPECT_EQ(ScanCount(Coll("from")), 1);
  EXPECT_EQ(ScanCount(Coll("target")), 10);
}

TEST_F(StorageTest, HandleOfARenamedCollectionFollowsTheName) {
  Collection old_handle = Coll("a");
  Insert(old_handle, R"({"_id": 1})");
  ASSERT_TRUE(client_->GetDatabase("db").RenameCollection("a", "b").ok());
  EXPECT_EQ(ScanCount(old_handle), 0);
  EXPECT_FALSE(Get(old_handle, 1).has_value());
  Insert(old_handle, R"({"_id": 1, "again": true})");
  EXPECT_EQ(*Get(Coll("a"), 1), Json(R"({"_id": 1, "again": true})"));
  EXPECT_EQ(*Get(Coll("b"), 1), Json(R"({"_id": 1})"));
}

TEST_F(StorageTest, CollectionNameRules) {
  Database db = client_->GetDatabase("db");
  struct Case {
    std::string name;
    std::string message;
  };
  const std::vector<Case> bad = {
      {"", "empty"},
      {"a$b", "$"},
      {"$cmd", "$"},
      {std::string("a\0b", 3), "null"},
      {"system.users", "system."},
      {"system.x", "system."},
      {".a", "begin with '.'"},
      // "db." + 253 bytes = 256 bytes, one more than MongoDB allows.
      {std::string(253, 'n'), "too long"},
  };
  for (const Case& c : bad) {
    SCOPED_TRACE("name: " + c.name);
    EXPECT_THAT(db.CreateCollection(c.name), StatusIs(ErrorCode::kInvalidNamespace, HasSubstr(c.message)));
    EXPECT_THAT(db.GetCollection(c.name).InsertOne(Json(R"({"a": 1})")),
                StatusIs(ErrorCode::kInvalidNamespace, HasSubstr(c.message)));
    std::vector<Document> docs = {Json(R"({"a": 1})")};
    EXPECT_THAT(db.GetCollection(c.name).InsertMany(docs), StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("")));
    EXPECT_THAT(db.GetCollection(c.name).ReplaceOne(Json(R"({"_id": 1})"), Json(R"({"a": 1})"), true),
                StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("")));
    // Reads refuse the name too, rather than answering "nothing there".
    EXPECT_THAT(db.GetCollection(c.name).Find(Json("{}")).status(),
                StatusIs(ErrorCode::kInvalidNamespace, HasSubstr(c.message)));
  }
  EXPECT_THAT(*client_->ListDatabaseNames(), IsEmpty());
  // The longest allowed: "db." + 252 bytes = 255; names MongoDB allows.
  for (std::string ok : {std::string(252, 'n'), std::string("a.b"), std::string("system"),
                         std::string("sys.tem.x"), std::string("é日本"), std::string("a b-c_d")}) {
    SCOPED_TRACE("name: " + ok);
    EXPECT_TRUE(db.CreateCollection(ok).ok());
    Insert(db.GetCollection(ok), R"({"_id": 1})");
  }
  EXPECT_EQ(db.ListCollectionNames()->size(), 6u);
}

TEST_F(StorageTest, DatabaseNameRules) {
  const std::vector<std::string> bad = {"",    "a.b", "a b", "a/b", "a\\b", "a$b",
                                        "a\"b", "a*b", "a<b", "a>b", "a:b", "a|b",
                                        "a?b", std::string("a\0b", 3), std::string(64, 'd')};
  for (const std::string& name : bad) {
    SCOPED_TRACE("db: " + name);
    Database db = client_->GetDatabase(name);
    EXPECT_THAT(db.CreateCollection("c"), StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("")));
    EXPECT_THAT(db.GetCollection("c").InsertOne(Json(R"({"a": 1})")),
                StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("")));
    EXPECT_THAT(db.ListCollectionNames(), StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("")));
    EXPECT_THAT(db.GetCollection("c").Find(Document()), StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("")));
    EXPECT_THAT(db.GetCollection("c").EstimatedDocumentCount(), StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("")));
    EXPECT_THAT(db.Drop(), StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("")));
  }
  EXPECT_THAT(client_->GetDatabase(std::string(64, 'd')).CreateCollection("c"),
              StatusIs(ErrorCode::kInvalidNamespace, HasSubstr("too long")));
  EXPECT_THAT(*client_->ListDatabaseNames(), IsEmpty());
  ASSERT_TRUE(client_->GetDatabase(std::string(63, 'd')).CreateCollection("c").ok());
  ASSERT_TRUE(client_->GetDatabase("Ab-c_1é").CreateCollection("c").ok());
  EXPECT_EQ(client_->ListDatabaseNames()->size(), 2u);
}

// ======================= Inserts =======================

TEST_F(StorageTest, InsertWithoutIdGeneratesAnObjectIdFirst) {
  auto r = Coll().InsertOne(Json(R"({"a": 1, "b": {"c": 2}})"));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->inserted_id.type(), BsonType::kObjectId);
  auto r2 = Coll().InsertOne(Json(R"({"a": 1, "b": {"c": 2}})"));
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_NE(r->inserted_id.element().Oid(), r2->inserted_id.element().Oid());

  auto found = Coll().FindById(r->inserted_id.element());
  ASSERT_TRUE(found.ok() && found->has_value());
  BsonBuilder expected;
  expected.AppendObjectId("_id", r->inserted_id.element().Oid());
  expected.AppendInt32("a", 1).OpenDocument("b").AppendInt32("c", 2).Close();
  EXPECT_EQ(**found, std::move(expected).Build());
  EXPECT_EQ(Count(Coll()), 2);
}

TEST_F(StorageTest, IdNotFirstIsMovedFirst) {
  auto r = Coll().InsertOne(Json(R"({"a": 1, "_id": 5, "b": [1, 2]})"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inserted_id.element().Int32(), 5);
  EXPECT_EQ(*Get(Coll(), 5), Json(R"({"_id": 5, "a": 1, "b": [1, 2]})"));
  // A nested _id is just a field.
  Insert(Coll(), R"({"x": {"_id": 1}, "_id": 6})");
  EXPECT_EQ(*Get(Coll(), 6), Json(R"({"_id": 6, "x": {"_id": 1}})"));
}

// Every BSON type but array, regex and undefined may be an _id; a document
// _id is a common schema pattern (compound natural keys).
TEST_F(StorageTest, CustomIdOfEveryAllowedType) {
  std::vector<Document> ids;
  auto add = [&](auto&& append) {
    BsonBuilder b;
    append(b);
    ids.push_back(std::move(b).Build());
  };
  add([](BsonBuilder& b) { b.AppendDouble("_id", 2.5); });
  add([](BsonBuilder& b) { b.AppendDouble("_id", std::numeric_limits<double>::infinity()); });
  add([](BsonBuilder& b) { b.AppendDouble("_id", std::numeric_limits<double>::quiet_NaN()); });
  add([](BsonBuilder& b) { b.AppendString("_id", "key"); });
  add([](BsonBuilder& b) { b.AppendString("_id", ""); });
  add([](BsonBuilder& b) { b.AppendString("_id", std::string("a\0b", 3)); });
  add([](BsonBuilder& b) { b.OpenDocument("_id").AppendString("country", "NL").AppendInt32("year", 2024).Close(); });
  // Same fields, other order: a different key, as in MongoDB.
  add([](BsonBuilder& b) { b.OpenDocument("_id").AppendInt32("year", 2024).AppendString("country", "NL").Close(); });
  add([](BsonBuilder& b) { b.OpenDocument("_id").Close(); });
  add([](BsonBuilder& b) { b.OpenDocument("_id").OpenArray("a").AppendInt32("", 1).Close().Close(); });
  add([](BsonBuilder& b) { b.AppendBinary("_id", BinarySubtype::kGeneric, std::string("\x00\xff", 2)); });
  add([](BsonBuilder& b) { b.AppendBinary("_id", BinarySubtype::kUuid, std::string(16, '\x42')); });
  add([](BsonBuilder& b) { b.AppendObjectId("_id", ObjectId::GenerateAt(1700000000)); });
  add([](BsonBuilder& b) { b.AppendBool("_id", false); });
  add([](BsonBuilder& b) { b.AppendBool("_id", true); });
  add([](BsonBuilder& b) { b.AppendDateTime("_id", -1); });
  add([](BsonBuilder& b) { b.AppendDateTime("_id", 1700000000000); });
  add([](BsonBuilder& b) { b.AppendNull("_id"); });
  add([](BsonBuilder& b) { b.AppendDbPointer("_id", "db.c", ObjectId::GenerateAt(7)); });
  add([](BsonBuilder& b) { b.AppendCode("_id", "function() {}"); });
  add([](BsonBuilder& b) { b.AppendSymbol("_id", "sym"); });
  add([](BsonBuilder& b) {
    BsonBuilder scope;
    scope.AppendInt32("x", 1);
    b.AppendCodeWithScope("_id", "x", std::move(scope).Build());
  });
  add([](BsonBuilder& b) { b.AppendInt32("_id", -7); });
  add([](BsonBuilder& b) { b.AppendTimestamp("_id", BsonTimestamp{5, 6}); });
  add([](BsonBuilder& b) { b.AppendInt64("_id", int64_t{1} << 40); });
  add([](BsonBuilder& b) { b.AppendDecimal128("_id", Decimal128::FromString("3.25").value()); });
  add([](BsonBuilder& b) { b.AppendMinKey("_id"); });
  add([](BsonBuilder& b) { b.AppendMaxKey("_id"); });

  for (size_t i = 0; i < ids.size(); ++i) {
    BsonBuilder b;
    b.AppendElement(*ids[i].begin()).AppendInt64("n", static_cast<int64_t>(i));
    auto r = Coll().InsertOne(std::move(b).Build());
    ASSERT_TRUE(r.ok()) << r.status() << " for " << ToJson(ids[i]);
    EXPECT_EQ(CompareValues(r->inserted_id.element(), *ids[i].begin()), 0) << ToJson(ids[i]);
  }
  Reopen();
  EXPECT_EQ(Count(Coll()), static_cast<int64_t>(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) {
    SCOPED_TRACE(ToJson(ids[i]));
    Element id = *ids[i].begin();
    auto found = Coll().FindById(id);
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_TRUE(found->has_value());
    EXPECT_EQ((*found)->Get("n").Int64(), static_cast<int64_t>(i));
    // The stored _id keeps its exact bytes (type included).
    EXPECT_EQ(std::string_view(reinterpret_cast<const char*>((*(*found)->begin()).raw()),
                               (*(*found)->begin()).size()),
              std::string_view(reinterpret_cast<const char*>(id.raw()), id.size()));
    auto cursor = Coll().Find(ids[i]);
    ASSERT_TRUE(cursor.ok()) << cursor.status();
    auto docs = cursor->ToVector();
    ASSERT_TRUE(docs.ok());
    ASSERT_EQ(docs->size(), 1u);
    EXPECT_EQ((*docs)[0], **found);
    // And a second insert of the same _id is a duplicate.
    EXPECT_THAT(Coll().InsertOne(ids[i]), StatusIs(ErrorCode::kDuplicateKey, HasSubstr("E11000")));
  }
  // A full scan returns them in MongoDB's order of _id values.
  std::vector<Document> all = All(Coll());
  ASSERT_EQ(all.size(), ids.size());
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_LT(CompareValues(*all[i - 1].begin(), *all[i].begin()), 0)
        << ToJson(all[i - 1]) << " before " << ToJson(all[i]);
  }
  EXPECT_TRUE(Coll().Validate()->valid);
}

TEST_F(StorageTest, ArrayRegexAndUndefinedIdsAreBadValue) {
  EXPECT_THAT(Coll().InsertOne(Json(R"({"_id": [1, 2]})")), StatusIs(ErrorCode::kBadValue, HasSubstr("array")));
  EXPECT_THAT(Coll().InsertOne(Json(R"({"_id": []})")), StatusIs(ErrorCode::kBadValue, HasSubstr("array")));
  EXPECT_THAT(Coll().InsertOne(Json(R"({"a": 1, "_id": {"$regularExpression": {"pattern": "a", "options": ""}}})")),
              StatusIs(ErrorCode::kBadValue, HasSubstr("regex")));
  EXPECT_THAT(Coll().InsertOne(Json(R"({"_id": {"$undefined": true}})")),
              StatusIs(ErrorCode::kBadValue, HasSubstr("undefined")));
  EXPECT_EQ(Count(Coll()), 0);
  EXPECT_EQ(ScanCount(Coll()), 0);
  // Nothing was created either.
  EXPECT_THAT(*client_->ListDatabaseNames(), IsEmpty());
}

TEST_F(StorageTest, DuplicateIdHasMongoDbsExactError) {
  Insert(Coll(), R"({"_id": 1, "v": "first"})");
  EXPECT_THAT(Coll().InsertOne(Json(R"({"_id": 1, "v": "second"})")),
              StatusIs(ErrorCode::kDuplicateKey,
                       "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 1 }"));
  EXPECT_THAT(Coll("other", "db2").InsertOne(Json(R"({"_id": -20})")), StatusIs(ErrorCode::kOk, ""));
  EXPECT_THAT(Coll("other", "db2").InsertOne(Json(R"({"_id": -20})")),
              StatusIs(ErrorCode::kDuplicateKey,
                       "E11000 duplicate key error collection: db2.other index: _id_ dup key: { _id: -20 }"));
  EXPECT_EQ(*Get(Coll(), 1), Json(R"({"_id": 1, "v": "first"})"));
  EXPECT_EQ(Count(Coll()), 1);
  EXPECT_TRUE(Coll().Validate()->valid);
}

TEST_F(StorageTest, NumericallyEqualIdsAreTheSameKey) {
  Insert(Coll(), R"({"_id": 1, "type": "int"})");
  for (const char* same : {R"({"_id": 1.0})", R"({"_id": {"$numberLong": "1"}})",
                           R"({"_id": {"$numberDecimal": "1.000"}})"}) {
    EXPECT_THAT(Coll().InsertOne(Json(same)), StatusIs(ErrorCode::kDuplicateKey, HasSubstr("E11000"))) << same;
  }
  // Any numeric type finds it.
  for (const char* probe : {R"({"_id": 1.0})", R"({"_id": {"$numberLong": "1"}})", R"({"_id": {"$numberDecimal": "1"}})"}) {
    Document p = Json(probe);
    auto found = Coll().FindById(*p.begin());
    ASSERT_TRUE(found.ok() && found->has_value()) << probe;
    EXPECT_EQ(**found, Json(R"({"_id": 1, "type": "int"})"));
    auto cursor = Coll().Find(p);
    ASSERT_TRUE(cursor.ok());
    EXPECT_EQ(cursor->ToVector()->size(), 1u);
  }
  // 0 and -0.0 are equal too; "1" is a string, another key.
  Insert(Coll(), R"({"_id": 0})");
  EXPECT_THAT(Coll().InsertOne(Json(R"({"_id": -0.0})")), StatusIs(ErrorCode::kDuplicateKey, HasSubstr("")));
  Insert(Coll(), R"({"_id": "1"})");
  // 2^53 + 1 as int64 differs from the double 2^53: keys must be exact.
  Insert(Coll(), R"({"_id": {"$numberLong": "9007199254740993"}})");
  Insert(Coll(), R"({"_id": 9007199254740992.0})");
  EXPECT_THAT(Coll().InsertOne(Json(R"({"_id": {"$numberDecimal": "9007199254740993"}})")),
              StatusIs(ErrorCode::kDuplicateKey, HasSubstr("")));
  EXPECT_EQ(Count(Coll()), 5);
  EXPECT_EQ(ScanCount(Coll()), 5);
  EXPECT_TRUE(Coll().Validate()->valid);
}

TEST_F(StorageTest, SixteenMebibyteLimit) {
  Document max = DocOfSize(1, 16777216);
  auto r = Coll().InsertOne(max);
  ASSERT_TRUE(r.ok()) << r.status();
  auto back = Get(Coll(), 1);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->size(), 16777216u);
  EXPECT_TRUE(*back == max);

  Document over = DocOfSize(2, 16777217);
  EXPECT_THAT(Coll().InsertOne(over),
              StatusIs(ErrorCode::kBadValue,
                       "object to insert too large. size in bytes: 16777217, max size: 16777216"));
  EXPECT_FALSE(Get(Coll(), 2).has_value());
  EXPECT_EQ(Count(Coll()), 1);
  // An _id placed last must not let a too-large document through either.
  BsonBuilder b;
  b.AppendString("s", std::string(16777217 - 22, 'y')).AppendInt32("_id", 3);
  Document over_id_last = std::move(b).Build();
  ASSERT_EQ(over_id_last.size(), 16777217u);
  EXPECT_THAT(Coll().InsertOne(over_id_last), StatusIs(ErrorCode::kBadValue, HasSubstr("16777217")));

  std::vector<Document> many = {DocOfSize(10, 100), over, DocOfSize(11, 100)};
  auto m = Coll().InsertMany(many, {.ordered = false});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->write_errors.size(), 1u);
  EXPECT_EQ(m->write_errors[0].index, 1u);
  EXPECT_THAT(m->write_errors[0].status, StatusIs(ErrorCode::kBadValue, HasSubstr("too large")));
  EXPECT_EQ(m->inserted_count(), 2u);
  EXPECT_FALSE(Get(Coll(), 2).has_value());

  Reopen();
  EXPECT_EQ(Get(Coll(), 1)->size(), 16777216u);
  EXPECT_EQ(Count(Coll()), 3);
  EXPECT_TRUE(Coll().Validate()->valid);
}

TEST_F(StorageTest, NestingDepthLimit) {
  // MongoDB: at most 100 levels, the top-level document counting as one.
  ASSERT_TRUE(Coll().InsertOne(Nested(100)).ok());
  EXPECT_THAT(Coll().InsertOne(Nested(101)), StatusIs(ErrorCode::kOverflow, HasSubstr("100 levels")));
  EXPECT_THAT(Coll().InsertOne(Nested(150)), StatusIs(ErrorCode::kOverflow, HasSubstr("")));
  // An empty innermost document or array does not count as a level.
  ASSERT_TRUE(Coll().InsertOne(Nested(101, /*innermost_empty=*/true)).ok());
  EXPECT_EQ(Count(Coll()), 2);
  std::vector<Document> docs = {Nested(10), Nested(101), Nested(100)};
  auto m = Coll().InsertMany(docs);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->write_errors.size(), 1u);
  EXPECT_EQ(m->write_errors[0].index, 1u);
  EXPECT_THAT(m->write_errors[0].status, StatusIs(ErrorCode::kOverflow, HasSubstr("")));
  EXPECT_EQ(m->inserted_count(), 1u);
  EXPECT_EQ(Count(Coll()), 3);
  // What was stored reads back whole.
  Reopen();
  for (const Document& d : All(Coll())) EXPECT_TRUE(Document::FromBytes(d.bytes()).ok());
  EXPECT_TRUE(Coll().Validate()->valid);
}

// The depth check skips containers too small to reach the limit (7 bytes a
// level at least): chains of the smallest containers possible (empty keys,
// a null innermost), alone, among large siblings, inside an array and under
// an updated path, are still refused at 101 levels and accepted at 100.
TEST_F(StorageTest, NestingLimitHoldsForTheSmallestContainers) {
  // {_id, pad..., "": {"": ... {"": null}}}: `levels` levels in all.
  auto doc = [](int id, int levels, bool in_array, int pads) {
    BsonBuilder b;
    b.AppendInt32("_id", id);
    for (int i = 0; i < pads; ++i) {
      b.OpenDocument("p" + std::to_string(i)).AppendString("s", std::string(200, 'x')).Close();
    }
    int opened = 0;
    if (in_array) {
      b.OpenArray("arr");
      for (int i = 0; i < pads; ++i) b.OpenDocument("").AppendInt32("n", i).Close();
      ++opened;
    }
    const int chain = levels - 1 - opened;  // below the top-level document
    for (int i = 0; i < chain; ++i) {
      b.OpenDocument("");
      ++opened;
    }
    b.AppendNull("");
    for (int i = 0; i < opened; ++i) b.Close();
    return std::move(b).Build();
  };
  int id = 0;
  for (bool in_array : {false, true}) {
    for (int pads : {0, 3, 40}) {
      SCOPED_TRACE(std::to_string(in_array) + " " + std::to_string(pads));
      EXPECT_TRUE(Coll().InsertOne(doc(++id, 100, in_array, pads)).ok());
      EXPECT_THAT(Coll().InsertOne(doc(++id, 101, in_array, pads)),
                  StatusIs(ErrorCode::kOverflow, HasSubstr("levels of nesting")));
    }
  }
  // An update whose changed path (50 parts: the value at level 51) holds
  // the chain: 50 + chain levels.
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": "u"})")).ok());
  std::string path = "a";
  for (int i = 1; i < 50; ++i) path += ".a";
  for (int chain : {50, 51}) {
    BsonBuilder value;
    for (int i = 1; i < chain; ++i) value.OpenDocument("");
    value.AppendNull("");
    for (int i = 1; i < chain; ++i) value.Close();
    BsonBuilder update;
    update.OpenDocument("$set").AppendDocument(path, std::move(value).Build()).Close();
    auto r = Coll().UpdateOne(Json(R"({"_id": "u"})"), std::move(update).Build());
    if (chain == 50) {
      EXPECT_TRUE(r.ok()) << r.status();
    } else {
      EXPECT_THAT(r, StatusIs(ErrorCode::kOverflow, HasSubstr("levels of nesting")));
    }
  }
}

// A replacement (and any update result) obeys the insert rule, as in
// MongoDB. Disabled until the update path (api/collection_update.cc, which
// ReplaceOne now goes through) calls internal::CheckStorageDepth on the
// document it is about to store.
TEST_F(StorageTest, ReplacementObeysTheNestingLimit) {
  Insert(Coll(), R"({"_id": "r"})");
  EXPECT_THAT(Coll().ReplaceOne(Json(R"({"_id": "r"})"), Nested(101)),
              StatusIs(ErrorCode::kOverflow, HasSubstr("levels of nesting")));
  EXPECT_EQ(*Coll().FindById(*Json(R"({"_id": "r"})").begin()), Json(R"({"_id": "r"})"));
  ASSERT_TRUE(Coll().ReplaceOne(Json(R"({"_id": "r"})"), Nested(100)).ok());
}

// Since MongoDB 5.0 field names may start with '$', top level included (the
// CRUD spec's dots_and_dollars tests); only an _id document may not hold them.
// Updates are held to the same limit, checked below the paths they change
// (a value set deep, or a path that is itself too long).
TEST_F(StorageTest, UpdatesObeyTheNestingLimit) {
  Insert(Coll(), R"({"_id": 7, "keep": 1})");
  Document before = *Get(Coll(), 7);
  // A value 60 levels deep set 50 levels down: the update itself is within
  // the limit, the result (110 levels) is not.
  std::string path50 = "p";
  for (int i = 1; i < 50; ++i) path50 += ".p";
  BsonBuilder deep_value;
  deep_value.OpenDocument("$set").AppendDocument(path50, Nested(60)).Close();
  EXPECT_THAT(Coll().UpdateOne(Json(R"({"_id": 7})"), std::move(deep_value).Build()),
              StatusIs(ErrorCode::kOverflow, HasSubstr("levels of nesting")));
  std::string long_path = "a";
  for (int i = 1; i < 101; ++i) long_path += ".a";
  BsonBuilder deep_path;
  deep_path.OpenDocument("$set").AppendInt32(long_path, 1).Close();
  EXPECT_THAT(Coll().UpdateOne(Json(R"({"_id": 7})"), std::move(deep_path).Build()),
              StatusIs(ErrorCode::kOverflow, HasSubstr("levels of nesting")));
  EXPECT_EQ(*Get(Coll(), 7), before);
  // Just within the limit: a value of 99 levels under a top-level field.
  BsonBuilder ok;
  ok.OpenDocument("$set").AppendDocument("x", Nested(99)).Close();
  EXPECT_TRUE(Coll().UpdateOne(Json(R"({"_id": 7})"), std::move(ok).Build()).ok());
}

TEST_F(StorageTest, DollarFieldsAreStoredButNotInsideId) {
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 1, "$x": 1, "a": {"$y": 2}})")).ok());
  EXPECT_EQ(*Get(Coll(), 1), Json(R"({"_id": 1, "$x": 1, "a": {"$y": 2}})"));
  EXPECT_THAT(Coll().InsertOne(Json(R"({"_id": {"$a": 1}})")),
              StatusIs(ErrorCode::kDollarPrefixedFieldName, HasSubstr("$a")));
  EXPECT_THAT(Coll().InsertOne(Json(R"({"_id": {"k": {"$b": 1}}})")),
              StatusIs(ErrorCode::kDollarPrefixedFieldName, HasSubstr("$b")));
  EXPECT_EQ(Count(Coll()), 1);
}

TEST_F(StorageTest, InsertManyOrderedStopsAtTheFirstFailure) {
  std::vector<Document> docs = {Json(R"({"_id": 1})"), Json(R"({"_id": 2})"), Json(R"({"_id": 1, "dup": true})"),
                                Json(R"({"_id": 3})")};
  auto r = Coll().InsertMany(docs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->ok());
  ASSERT_EQ(r->inserted_count(), 2u);
  EXPECT_EQ(r->inserted_ids[0].element().Int32(), 1);
  EXPECT_EQ(r->inserted_ids[1].element().Int32(), 2);
  ASSERT_EQ(r->write_errors.size(), 1u);
  EXPECT_EQ(r->write_errors[0].index, 2u);
  EXPECT_THAT(r->write_errors[0].status,
              StatusIs(ErrorCode::kDuplicateKey,
                       "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 1 }"));
  EXPECT_EQ(All(Coll()), (std::vector<Document>{Json(R"({"_id": 1})"), Json(R"({"_id": 2})")}));
  EXPECT_EQ(Count(Coll()), 2);

  // An invalid document also stops an ordered insert.
  std::vector<Document> bad = {Json(R"({"_id": 10})"), Json(R"({"_id": [1]})"), Json(R"({"_id": 11})")};
  r = Coll().InsertMany(bad);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->inserted_count(), 1u);
  ASSERT_EQ(r->write_errors.size(), 1u);
  EXPECT_EQ(r->write_errors[0].index, 1u);
  EXPECT_THAT(r->write_errors[0].status, StatusIs(ErrorCode::kBadValue, HasSubstr("array")));
  EXPECT_FALSE(Get(Coll(), 11).has_value());
  EXPECT_EQ(Count(Coll()), 3);
}

TEST_F(StorageTest, InsertManyOrderedKeepsExactlyThePrefixAcrossBatches) {
  // Bigger than one internal write batch, failing in the second one.
  std::vector<Document> docs;
  for (int i = 0; i < 2500; ++i) docs.push_back(IdFilter(i));
  docs[1700] = IdFilter(5);
  auto r = Coll().InsertMany(docs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inserted_count(), 1700u);
  ASSERT_EQ(r->write_errors.size(), 1u);
  EXPECT_EQ(r->write_errors[0].index, 1700u);
  EXPECT_EQ(Count(Coll()), 1700);
  EXPECT_EQ(ScanCount(Coll()), 1700);
  EXPECT_TRUE(Get(Coll(), 1699).has_value());
  EXPECT_FALSE(Get(Coll(), 1701).has_value());
}

TEST_F(StorageTest, InsertManyUnorderedKeepsEveryValidDocument) {
  std::vector<Document> docs = {
      Json(R"({"_id": 1})"),           Json(R"({"_id": 1, "again": 1})"), Json(R"({"_id": [1]})"),
      Json(R"({"_id": 2})"),           Json(R"({"_id": {"$bad": 1}})"),   Json(R"({"n": "generated"})"),
      Json(R"({"_id": 2, "again": 2})"), Json(R"({"_id": 3})")};
  auto r = Coll().InsertMany(docs, {.ordered = false});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->inserted_count(), 4u);
  ASSERT_EQ(r->write_errors.size(), 4u);
  std::vector<size_t> indexes;
  for (const WriteError& e : r->write_errors) indexes.push_back(e.index);
  EXPECT_THAT(indexes, ElementsAre(1, 2, 4, 6));
  EXPECT_THAT(r->write_errors[0].status, StatusIs(ErrorCode::kDuplicateKey, HasSubstr("{ _id: 1 }")));
  EXPECT_THAT(r->write_errors[1].status, StatusIs(ErrorCode::kBadValue, HasSubstr("array")));
  EXPECT_THAT(r->write_errors[2].status, StatusIs(ErrorCode::kDollarPrefixedFieldName, HasSubstr("$bad")));
  EXPECT_THAT(r->write_errors[3].status, StatusIs(ErrorCode::kDuplicateKey, HasSubstr("{ _id: 2 }")));
  EXPECT_EQ(r->inserted_ids[2].type(), BsonType::kObjectId);
  EXPECT_EQ(Count(Coll()), 4);
  EXPECT_EQ(ScanCount(Coll()), 4);
  EXPECT_EQ(*Get(Coll(), 1), Json(R"({"_id": 1})"));
  EXPECT_EQ(*Get(Coll(), 2), Json(R"({"_id": 2})"));

  auto empty = Coll().InsertMany({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->ok());
  EXPECT_EQ(empty->inserted_count(), 0u);
}

// ======================= Reads =======================

TEST_F(StorageTest, FindByIdOfMissingDocumentOrCollection) {
  BsonBuilder b;
  b.AppendInt32("", 1);
  Document id = std::move(b).Build();
  auto none = Coll("nothing").FindById(*id.begin());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Insert(Coll(), R"({"_id": 2})");
  none = Coll().FindById(*id.begin());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_F(StorageTest, FindStreamsFiftyThousandDocumentsInIdOrder) {
  constexpr int kDocs = 50000;
  std::vector<int> order(kDocs);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(42));
  std::vector<Document> docs;
  for (int id : order) {
    BsonBuilder b;
    // Negative ids too: keys must sort numbers by value, not by bytes.
    b.AppendInt64("_id", id - kDocs / 2).AppendInt32("twice", 2 * (id - kDocs / 2));
    docs.push_back(std::move(b).Build());
  }
  auto r = Coll().InsertMany(docs);
  ASSERT_TRUE(r.ok() && r->ok());
  auto cursor = Coll().Find(Document());
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  int64_t expected = -kDocs / 2;
  int64_t seen = 0;
  while (cursor->Next()) {
    DocumentView d = cursor->document();
    ASSERT_EQ(d.Get("_id").Int64(), expected);
    ASSERT_EQ(d.Get("twice").Int32(), 2 * expected);
    ++expected;
    ++seen;
  }
  EXPECT_TRUE(cursor->status().ok()) << cursor->status();
  EXPECT_EQ(seen, kDocs);
  EXPECT_FALSE(cursor->Next());
  EXPECT_EQ(ScanCount(Coll()), kDocs);
  EXPECT_EQ(Count(Coll()), kDocs);
}

TEST_F(StorageTest, FindByIdFilter) {
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Coll().InsertOne(IdFilter(i)).ok());
  auto one = Coll().Find(Json(R"({"_id": 3})"));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one->ToVector(), std::vector<Document>{IdFilter(3)});
  auto none = Coll().Find(Json(R"({"_id": 30})"));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->ToVector()->empty());
  EXPECT_EQ(*Coll().CountDocuments(Json(R"({"_id": 3})")), 1);
  EXPECT_EQ(*Coll().CountDocuments(Json(R"({"_id": "3"})")), 0);
}

TEST_F(StorageTest, CursorReadsOneSnapshot) {
  for (int i = 0; i < 100; i += 2) ASSERT_TRUE(Coll().InsertOne(IdFilter(i)).ok());
  std::vector<Document> before = All(Coll());
  auto cursor = Coll().Find(Document());
  ASSERT_TRUE(cursor.ok());
  ASSERT_TRUE(cursor->Next());
  std::vector<Document> seen = {Document::FromBytes(cursor->document().bytes()).value()};
  // Change everything ahead of the cursor: it must not see any of it.
  for (int i = 1; i < 100; i += 2) ASSERT_TRUE(Coll().InsertOne(IdFilter(i)).ok());
  ASSERT_TRUE(Coll().DeleteOne(IdFilter(50)).ok());
  ASSERT_TRUE(Coll().ReplaceOne(IdFilter(60), Json(R"({"changed": true})")).ok());
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 1000})")).ok());
  while (cursor->Next()) seen.push_back(Document::FromBytes(cursor->document().bytes()).value());
  EXPECT_TRUE(cursor->status().ok());
  EXPECT_EQ(seen, before);
  EXPECT_EQ(ScanCount(Coll()), 100);
}

// ======================= Replace and delete =======================

TEST_F(StorageTest, ReplaceOne) {
  Insert(Coll(), R"({"_id": 1, "a": 1})");
  Insert(Coll(), R"({"_id": 2, "a": 2})");
  auto r = Coll().ReplaceOne(Json(R"({"_id": 1})"), Json(R"({"b": "new"})"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->matched_count, 1);
  EXPECT_EQ(r->modified_count, 1);
  EXPECT_FALSE(r->upserted_id.has_value());
  EXPECT_EQ(*Get(Coll(), 1), Json(R"({"_id": 1, "b": "new"})"));

  // The same content again: matched, not modified.
  r = Coll().ReplaceOne(Json(R"({"_id": 1})"), Json(R"({"b": "new"})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matched_count, 1);
  EXPECT_EQ(r->modified_count, 0);
  // Naming the same _id in the replacement is fine, wherever it stands.
  r = Coll().ReplaceOne(Json(R"({"_id": 1})"), Json(R"({"c": 3, "_id": 1})"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->modified_count, 1);
  EXPECT_EQ(*Get(Coll(), 1), Json(R"({"_id": 1, "c": 3})"));

  // No match.
  r = Coll().ReplaceOne(Json(R"({"_id": 9})"), Json(R"({"b": 1})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matched_count, 0);
  EXPECT_EQ(r->modified_count, 0);
  EXPECT_FALSE(Get(Coll(), 9).has_value());
  r = Coll("missing").ReplaceOne(Json(R"({"_id": 9})"), Json(R"({"b": 1})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matched_count, 0);

  // _id is immutable (also its type: 1.0 is not the stored int 1).
  EXPECT_THAT(Coll().ReplaceOne(Json(R"({"_id": 2})"), Json(R"({"_id": 3, "a": 9})")),
              StatusIs(ErrorCode::kImmutableField, HasSubstr("_id")));
  EXPECT_THAT(Coll().ReplaceOne(Json(R"({"_id": 2})"), Json(R"({"_id": 2.0, "a": 9})")),
              StatusIs(ErrorCode::kImmutableField, HasSubstr("_id")));
  EXPECT_EQ(*Get(Coll(), 2), Json(R"({"_id": 2, "a": 2})"));
  EXPECT_FALSE(Get(Coll(), 3).has_value());

  // {} replaces the first document in _id order.
  r = Coll().ReplaceOne(Document(), Json(R"({"first": true})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->modified_count, 1);
  EXPECT_EQ(*Get(Coll(), 1), Json(R"({"_id": 1, "first": true})"));
  EXPECT_EQ(Count(Coll()), 2);
  EXPECT_TRUE(Coll().Validate()->valid);
}

TEST_F(StorageTest, ReplaceOneUpsert) {
  auto r = Coll().ReplaceOne(Json(R"({"_id": 7})"), Json(R"({"x": 1})"), /*upsert=*/true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->matched_count, 0);
  EXPECT_EQ(r->modified_count, 0);
  ASSERT_TRUE(r->upserted_id.has_value());
  EXPECT_EQ(r->upserted_id->element().Int32(), 7);
  EXPECT_EQ(*Get(Coll(), 7), Json(R"({"_id": 7, "x": 1})"));
  EXPECT_EQ(Count(Coll()), 1);

  // Now it matches: a plain replace, no upsert.
  r = Coll().ReplaceOne(Json(R"({"_id": 7})"), Json(R"({"x": 2})"), true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->matched_count, 1);
  EXPECT_EQ(r->modified_count, 1);
  EXPECT_FALSE(r->upserted_id.has_value());
  EXPECT_EQ(*Get(Coll(), 7), Json(R"({"_id": 7, "x": 2})"));

  // Without an _id in the filter, the new document gets an ObjectId.
  r = Coll("fresh").ReplaceOne(Document(), Json(R"({"y": 1})"), true);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->upserted_id.has_value());
  EXPECT_EQ(r->upserted_id->type(), BsonType::kObjectId);
  EXPECT_EQ(Count(Coll("fresh")), 1);
  EXPECT_EQ(Count(Coll()), 1);
}

TEST_F(StorageTest, ReplaceOneResultOverSixteenMebibytesIs17419) {
  Insert(Coll(), R"({"_id": 1, "small": true})");
  // The replacement alone is exactly 16 MiB; with the _id (9 bytes) it is over.
  BsonBuilder b;
  b.AppendString("s", std::string(16777216 - 13, 'z'));
  Document replacement = std::move(b).Build();
  ASSERT_EQ(replacement.size(), 16777216u);
  EXPECT_THAT(Coll().ReplaceOne(Json(R"({"_id": 1})"), replacement),
              StatusIs(ErrorCode::kUpdateResultTooLarge,
                       HasSubstr("Resulting document after update is larger than 16777216")));
  EXPECT_EQ(*Get(Coll(), 1), Json(R"({"_id": 1, "small": true})"));
  // Exactly 16 MiB with the _id is fine.
  Document exact = DocOfSize(1, 16777216);
  auto r = Coll().ReplaceOne(Json(R"({"_id": 1})"), exact);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->modified_count, 1);
  EXPECT_EQ(Get(Coll(), 1)->size(), 16777216u);
  EXPECT_EQ(Count(Coll()), 1);
}

TEST_F(StorageTest, DeleteOneAndDeleteMany) {
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Coll().InsertOne(IdFilter(i)).ok());
  auto d = Coll().DeleteOne(Json(R"({"_id": 3})"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->deleted_count, 1);
  d = Coll().DeleteOne(Json(R"({"_id": 3})"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->deleted_count, 0);
  EXPECT_FALSE(Get(Coll(), 3).has_value());
  // {} deletes the first in _id order.
  d = Coll().DeleteOne(Document());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->deleted_count, 1);
  EXPECT_FALSE(Get(Coll(), 0).has_value());
  EXPECT_EQ(Count(Coll()), 8);

  d = Coll().DeleteMany(Json(R"({"_id": 5.0})"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->deleted_count, 1);
  d = Coll().DeleteMany(Document());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->deleted_count, 7);
  EXPECT_EQ(Count(Coll()), 0);
  EXPECT_EQ(ScanCount(Coll()), 0);
  d = Coll("missing").DeleteMany(Document());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->deleted_count, 0);
  // The collection itself stays.
  EXPECT_THAT(*client_->GetDatabase("db").ListCollectionNames(), ElementsAre("c"));
}

TEST_F(StorageTest, DeleteManyAcrossInternalBatches) {
  std::vector<Document> docs;
  for (int i = 0; i < 3500; ++i) docs.push_back(IdFilter(i));
  ASSERT_TRUE(Coll().InsertMany(docs)->ok());
  auto d = Coll().DeleteMany(Document());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->deleted_count, 3500);
  EXPECT_EQ(Count(Coll()), 0);
  EXPECT_EQ(ScanCount(Coll()), 0);
}

TEST_F(StorageTest, CountsStayExactAcrossWritesAndReopen) {
  Collection c = Coll();
  std::vector<Document> docs;
  for (int i = 0; i < 1000; ++i) docs.push_back(IdFilter(i));
  ASSERT_TRUE(c.InsertMany(docs)->ok());
  EXPECT_EQ(Count(c), 1000);
  // Failed writes change nothing.
  EXPECT_FALSE(c.InsertOne(IdFilter(5)).ok());
  EXPECT_FALSE(c.InsertMany(docs, {.ordered = false})->ok());
  EXPECT_EQ(Count(c), 1000);
  ASSERT_TRUE(c.DeleteOne(IdFilter(5)).ok());
  ASSERT_TRUE(c.DeleteOne(IdFilter(5)).ok());  // deletes nothing
  ASSERT_TRUE(c.ReplaceOne(IdFilter(6), Json(R"({"r": 1})")).ok());
  ASSERT_TRUE(c.ReplaceOne(IdFilter(5000), Json(R"({"r": 1})"), true).ok());
  EXPECT_EQ(Count(c), 1000);
  EXPECT_EQ(ScanCount(c), 1000);
  Reopen();
  c = Coll();
  EXPECT_EQ(Count(c), 1000);
  ASSERT_TRUE(c.DeleteMany(Document()).ok());
  Reopen();
  EXPECT_EQ(Count(Coll()), 0);
  ASSERT_TRUE(Coll().InsertOne(IdFilter(1)).ok());
  Reopen();
  EXPECT_EQ(Count(Coll()), 1);
  EXPECT_EQ(ScanCount(Coll()), 1);
}

// ======================= validate() =======================

TEST_F(StorageTest, ValidatePassesOnHealthyData) {
  std::vector<Document> docs;
  test::RandomDocuments random(7);
  for (int i = 0; i < 500; ++i) {
    Document d = random.Next();
    // Random documents may carry an _id that is not allowed; drop those.
    Element id = d.Get("_id");
    if (id.ok() && (id.type() == BsonType::kArray || id.type() == BsonType::kRegex ||
                    id.type() == BsonType::kUndefined)) {
      continue;
    }
    docs.push_back(std::move(d));
  }
  auto r = Coll().InsertMany(docs, {.ordered = false});
  ASSERT_TRUE(r.ok());
  auto v = Coll().Validate();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->valid);
  EXPECT_THAT(v->errors, IsEmpty());
  EXPECT_EQ(v->records, static_cast<int64_t>(r->inserted_count()));
  EXPECT_THAT(Coll("missing").Validate(), StatusIs(ErrorCode::kNamespaceNotFound, HasSubstr("db.missing")));
}

// A format-3 database has no "changes" column family: this version opens
// it, adds the family, marks it 4, and its change log then works.
TEST_F(StorageTest, AFormat3DatabaseGainsTheChangeLog) {
  Insert(Coll(), R"({"_id": 1})");
  CloseClient();
  {
    RawDb raw;
    ASSERT_NO_FATAL_FAILURE(OpenRaw(&raw));
    ASSERT_TRUE(raw.db->DropColumnFamily(raw.handles[2]).ok());
    ASSERT_NO_FATAL_FAILURE(CloseRaw(&raw));
    std::vector<std::string> left;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(raw.options, dir_.path(), &left).ok());
    ASSERT_EQ(left, (std::vector<std::string>{"default", "catalog"}));
  }
  WriteFile(dir_.Sub("ROCKDOC"), "rockdoc 3\n");
  ClientOptions with_log;
  with_log.change_log = true;
  Reopen(with_log);
  EXPECT_EQ(ReadFile(dir_.Sub("ROCKDOC")), "rockdoc 4\n");
  EXPECT_EQ(Count(Coll()), 1);
  auto stream = Coll().Watch();
  ASSERT_TRUE(stream.ok()) << stream.status();
  Insert(Coll(), R"({"_id": 2})");
  auto event = stream->TryNext();
  ASSERT_TRUE(event.ok() && *event) << event.status();
  EXPECT_EQ((**event).Get("operationType").String(), "insert");
}

TEST_F(StorageTest, ValidateDetectsAPlantedInconsistency) {
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Coll().InsertOne(IdFilter(i)).ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Coll("other").InsertOne(IdFilter(i)).ok());
  ASSERT_TRUE(Coll().Validate()->valid);
  CloseClient();

  // Under the API: raw RocksDB writes to the data column family, with
  // rockdoc's own options.
  {
    RawDb raw;
    ASSERT_NO_FATAL_FAILURE(OpenRaw(&raw));
    const std::vector<rocksdb::ColumnFamilyHandle*>& handles = raw.handles;
    // The first record in key order belongs to "c" (created first).
    std::unique_ptr<rocksdb::Iterator> it(raw.db->NewIterator(rocksdb::ReadOptions(), handles[0]));
    it->SeekToFirst();
    ASSERT_TRUE(it->Valid());
    std::string key = it->key().ToString(), value = it->value().ToString();
    it.reset();
    // A document stored under a key that is not its _id's...
    ASSERT_TRUE(raw.db->Put(rocksdb::WriteOptions(), handles[0], key + "x", value).ok());
    // ...and bytes that are not BSON.
    ASSERT_TRUE(raw.db->Put(rocksdb::WriteOptions(), handles[0], key + "y", "not bson").ok());
    ASSERT_NO_FATAL_FAILURE(CloseRaw(&raw));
  }

  Reopen();
  auto v = Coll().Validate();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_FALSE(v->valid);
  EXPECT_EQ(v->records, 12);
  EXPECT_THAT(v->errors, testing::Contains(HasSubstr("does not match")));
  EXPECT_THAT(v->errors, testing::Contains(HasSubstr("not valid BSON")));
  EXPECT_THAT(v->errors, testing::Contains(HasSubstr("stored count 10")));
  // The neighbouring collection is untouched and still valid.
  auto other = Coll("other").Validate();
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->valid);
  EXPECT_EQ(other->records, 5);
}

// ======================= After Close =======================

TEST_F(StorageTest, OperationsAfterCloseAreIllegalOperation) {
  Insert(Coll(), R"({"_id": 1})");
  Collection c = Coll();
  Database db = client_->GetDatabase("db");
  ASSERT_TRUE(client_->Close().ok());
  ASSERT_TRUE(client_->Close().ok());  // idempotent

  auto closed = [](const auto& result) { return StatusOf(result).code() == ErrorCode::kIllegalOperation; };
  EXPECT_THAT(c.InsertOne(Json(R"({"_id": 2})")), StatusIs(ErrorCode::kIllegalOperation, HasSubstr("closed")));
  std::vector<Document> docs = {Json(R"({"_id": 3})")};
  EXPECT_TRUE(closed(c.InsertMany(docs)));
  BsonBuilder b;
  b.AppendInt32("", 1);
  Document id = std::move(b).Build();
  EXPECT_TRUE(closed(c.FindById(*id.begin())));
  EXPECT_TRUE(closed(c.Find(Document())));
  EXPECT_TRUE(closed(c.ReplaceOne(Document(), Json(R"({"a": 1})"))));
  EXPECT_TRUE(closed(c.DeleteOne(Document())));
  EXPECT_TRUE(closed(c.DeleteMany(Document())));
  EXPECT_TRUE(closed(c.CountDocuments(Document())));
  EXPECT_TRUE(closed(c.EstimatedDocumentCount()));
  EXPECT_TRUE(closed(c.Validate()));
  EXPECT_TRUE(closed(c.Drop()));
  EXPECT_TRUE(closed(db.CreateCollection("x")));
  EXPECT_TRUE(closed(db.ListCollectionNames()));
  EXPECT_TRUE(closed(db.DropCollection("c")));
  EXPECT_TRUE(closed(db.RenameCollection("c", "d")));
  EXPECT_TRUE(closed(db.Drop()));
  EXPECT_TRUE(closed(client_->ListDatabaseNames()));
  EXPECT_TRUE(closed(client_->DropDatabase("db")));
  EXPECT_EQ(client_->GetStorageStats().live_sst_bytes, 0u);

  // Handles outliving the Client object behave the same.
  client_.reset();
  EXPECT_TRUE(closed(c.InsertOne(Json(R"({"_id": 2})"))));
  EXPECT_TRUE(closed(db.ListCollectionNames()));
  // Nothing written after Close reached the directory.
  Reopen();
  EXPECT_EQ(ScanCount(Coll()), 1);
}

TEST_F(StorageTest, CursorsAliveAcrossCloseFailCleanly) {
  std::vector<Document> docs;
  for (int i = 0; i < 5000; ++i) docs.push_back(IdFilter(i));
  ASSERT_TRUE(Coll().InsertMany(docs)->ok());
  Reopen();  // documents in table files, so reads pin cached blocks
  auto scan = Coll().Find(Document());
  ASSERT_TRUE(scan.ok());
  ASSERT_TRUE(scan->Next());
  EXPECT_EQ(scan->document().Get("_id").Int32(), 0);
  auto point = Coll().Find(IdFilter(4000));
  ASSERT_TRUE(point.ok());
  ASSERT_TRUE(point->Next());
  EXPECT_EQ(point->document().Get("_id").Int32(), 4000);
  auto unstarted = Coll().Find(Document());
  ASSERT_TRUE(unstarted.ok());

  // Close does not wait for (or fail because of) open cursors.
  EXPECT_TRUE(client_->Close().ok());
  for (Cursor* c : {&*scan, &*point, &*unstarted}) {
    EXPECT_FALSE(c->Next());
    EXPECT_THAT(c->status(), StatusIs(ErrorCode::kIllegalOperation, HasSubstr("closed")));
    EXPECT_FALSE(c->Next());
  }
  // The cursors outlive the Client object itself, then go.
  client_.reset();
  EXPECT_THAT(scan->ToVector(), StatusIs(ErrorCode::kIllegalOperation, HasSubstr("")));
  scan = Status(ErrorCode::kInternalError, "gone");
  point = Status(ErrorCode::kInternalError, "gone");
  unstarted = Status(ErrorCode::kInternalError, "gone");
  // And the directory opens again, whole.
  Reopen();
  EXPECT_EQ(ScanCount(Coll()), 5000);
}

// A transaction whose writes skip the index of its own writes
// (KvTransaction::Options::unindexed_writes, PutUnindexed) reads exactly
// what one that indexes everything reads: random writes, deletes,
// savepoints and every kind of read through the transaction, run on both,
// every read compared, and the committed databases compared at the end.
TEST(UnindexedWritesTest, ReadsThroughTheTransactionEqualAnIndexedOnes) {
  test::ScratchDir dir;
  std::shared_ptr<internal::Engine> engines[2];
  for (int e = 0; e < 2; ++e) {
    auto opened = internal::Engine::Open(dir.Sub(e == 0 ? "unindexed" : "indexed"), ClientOptions{});
    ASSERT_TRUE(opened.ok()) << opened.status();
    engines[e] = *opened;
  }
  std::mt19937_64 rng(11);
  auto key = [&] { return "k" + std::to_string(rng() % 40); };
  int64_t unindexed_reads = 0;
  for (int round = 0; round < 30; ++round) {
    std::unique_ptr<internal::KvTransaction> txn[2];
    for (int e = 0; e < 2; ++e) {
      internal::KvTransaction::Options o;
      o.unindexed_writes = e == 0;
      txn[e] = engines[e]->Begin(o);
    }
    int savepoints = 0;
    for (int step = 0; step < 200; ++step) {
      const int op = static_cast<int>(rng() % 10);
      const std::string k = key();
      const std::string v = "v" + std::to_string(rng());
      const bool track = rng() & 1;
      const bool coin = rng() & 1;
      std::string results[2];
      for (int e = 0; e < 2; ++e) {
        internal::KvTransaction& t = *txn[e];
        std::string& out = results[e];
        Status st;
        if (op <= 2) {
          st = t.PutUnindexed(k, v, track);
        } else if (op == 3) {
          st = t.Delete(internal::KeySpace::kData, k);
        } else if (op == 4) {
          std::string value;
          bool found = false;
          st = coin ? t.GetForUpdate(k, &value, &found) : t.Get(k, &value, &found);
          out = found ? value : "-";
        } else if (op == 5) {
          internal::PinnedValue value;
          bool found = false;
          st = internal::ReadView(&t).Get(k, &value, &found);
          out = found ? std::string(value.view()) : "-";
        } else if (op == 6) {
          std::unique_ptr<internal::KvIterator> it = internal::ReadView(&t).NewIterator("k", "l");
          for (it->SeekToFirst(); it->Valid(); it->Next()) {
            out += std::string(it->key()) + "=" + std::string(it->value()) + ";";
          }
          st = it->status();
        } else if (op == 7) {
          std::vector<std::string> keys = {"k1", "k2", k};
          std::sort(keys.begin(), keys.end());
          keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
          std::vector<std::string_view> views(keys.begin(), keys.end());
          std::vector<internal::PinnedValue> values;
          std::vector<bool> found;
          st = internal::ReadView(&t).MultiGet(views, &values, &found);
          for (size_t i = 0; i < keys.size(); ++i) {
            out += found[i] ? std::string(values[i].view()) + ";" : "-;";
          }
        } else if (op == 8) {
          t.SetSavePoint();
        } else if (savepoints > 0) {
          st = coin ? t.RollbackToSavePoint() : t.PopSavePoint();
        }
        ASSERT_TRUE(st.ok()) << st;
      }
      if (op == 8) ++savepoints;
      if (op == 9 && savepoints > 0) --savepoints;
      if (op >= 4 && op <= 7) ++unindexed_reads;
      ASSERT_EQ(results[0], results[1]) << "round " << round << " step " << step << " op " << op;
    }
    for (int e = 0; e < 2; ++e) ASSERT_TRUE(txn[e]->Commit().ok());
  }
  EXPECT_GT(unindexed_reads, 1000);
  std::string contents[2];
  for (int e = 0; e < 2; ++e) {
    std::unique_ptr<internal::KvIterator> it =
        internal::ReadView(engines[e].get(), nullptr).NewIterator("k", "l");
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      contents[e] += std::string(it->key()) + "=" + std::string(it->value()) + ";";
    }
  }
  EXPECT_FALSE(contents[0].empty());
  EXPECT_EQ(contents[0], contents[1]);
}

}  // namespace

// The second process of SecondOpenFromAnotherProcessIsDBPathInUse: exits
// with the status code of opening `dir` (0 when it opened).
int ChildOpen(const char* dir) {
  auto client = Client::Open(dir);
  if (!client.ok()) return client.status().code_number() & 0xff;
  return (*client)->Close().ok() ? 0 : 1;
}

}  // namespace rockdoc

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--child-open") return rockdoc::ChildOpen(argv[2]);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// The tools layer (src/tools/): dump and restore in mongo-tools' formats.
//  - Fixtures written by MongoDB's own tools (../shared/test-data/mongo-tools)
//    restore with their documents and indexes; bad ones are refused.
//  - Round trips: BSON corpus documents and random documents of every type
//    survive dump/restore (directory and archive, with and without gzip)
//    byte for byte, with their indexes, and validate passes.
//  - libbson (an independent implementation) reads every .bson file and
//    archive document rockdoc writes, and its canonical Extended JSON of
//    each equals rockdoc's; the metadata files parse with it.
//  - Bad input: each class gets an error naming the file and position, and
//    the target is unchanged (--drop included).
#include "rockdoc/tools.h"

#include <bson/bson.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "rockdoc/c.h"
#include "test_util.h"
#include "tools/archive.h"
#include "tools/flags.h"
#include "tools/formats.h"
#include "tools/legacy_json.h"
#include "tools/mains.h"
#include "tools/progress.h"
#include "tools/streams.h"

namespace rockdoc::tools {
namespace {

namespace fs = std::filesystem;
using test::Json;
using test::ScratchDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Fixtures() { return test::TestDataDir() + "/mongo-tools"; }
std::string RestoreFixture(const std::string& rel) {
  return Fixtures() + "/mongorestore/testdata/" + rel;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void Spit(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::unique_ptr<Client> OpenAt(const std::string& path) {
  auto c = Client::Open(path);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? std::move(c).value() : nullptr;
}

std::vector<Document> AllDocs(const Collection& c) {
  std::vector<Document> out;
  auto cursor = c.Find(Document());
  EXPECT_TRUE(cursor.ok()) << cursor.status();
  if (!cursor.ok()) return out;
  while (cursor->Next()) out.push_back(Document::AdoptValidated(
      std::string(reinterpret_cast<const char*>(cursor->document().data()),
                  cursor->document().size())));
  EXPECT_TRUE(cursor->status().ok()) << cursor->status();
  return out;
}

std::vector<std::string> IndexNames(const Collection& c) {
  std::vector<std::string> names;
  auto idx = c.ListIndexes();
  if (!idx.ok()) return names;
  for (const Document& d : *idx) names.emplace_back(d.Get("name").String());
  return names;
}

// The documents of a .bson file, read by rockdoc.
std::vector<Document> BsonFileDocs(const std::string& path) {
  std::vector<Document> out;
  auto in = OpenInput(path, false);
  EXPECT_TRUE(in.ok());
  BsonReader reader(in->get());
  Document d;
  while (true) {
    auto have = reader.Next(&d);
    EXPECT_TRUE(have.ok()) << have.status();
    if (!have.ok() || !*have) break;
    out.push_back(d);
  }
  return out;
}

// ---- formats ----

TEST(ToolsFormats, QueryEscapeAsGo) {
  EXPECT_EQ(QueryEscape("cafés"), "caf%C3%A9s");
  EXPECT_EQ(QueryEscape("a b/c$d"), "a+b%2Fc%24d");
  EXPECT_EQ(QueryEscape("Az09-_.~"), "Az09-_.~");
  EXPECT_EQ(QueryUnescape("caf%C3%A9s").value(), "cafés");
  EXPECT_EQ(QueryUnescape("a+b").value(), "a b");
  EXPECT_FALSE(QueryUnescape("bad%2").has_value());
  EXPECT_FALSE(QueryUnescape("bad%zz").has_value());
}

TEST(ToolsFormats, Sha1KnownVectors) {
  auto hex = [](const std::string& s) {
    std::string out;
    char b[3];
    for (unsigned char c : s) {
      std::snprintf(b, sizeof(b), "%02x", c);
      out += b;
    }
    return out;
  };
  EXPECT_EQ(hex(Sha1("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(hex(Sha1("")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(hex(Sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

// The long-name fixture's file name is mongodump's: the first 208 escaped
// bytes, "%24", base64url(SHA-1(name)).
TEST(ToolsFormats, LongCollectionNameAsMongodump) {
  std::string dir = RestoreFixture("longcollectionname/db1");
  std::string file;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.size() > 5 && n.substr(n.size() - 5) == ".bson") file = n.substr(0, n.size() - 5);
  }
  ASSERT_FALSE(file.empty());
  auto meta = ParseMetadata(Slurp(dir + "/" + file + ".metadata.json"), "m");
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->collection_name.size(), 247u);
  EXPECT_EQ(CollectionFileName(meta->collection_name), file);
  EXPECT_EQ(CollectionFileName("foo"), "foo");
}

// The CRC of the fixture archive's namespaces, as mongodump stored them.
TEST(ToolsFormats, ArchiveFixtureCrcsAgree) {
  auto in = OpenInput(RestoreFixture("test.bar.archive"), false);
  ASSERT_TRUE(in.ok());
  auto archive = ReadArchive(in->get());
  ASSERT_TRUE(archive.ok()) << archive.status();
  ASSERT_EQ(archive->namespaces.size(), 2u);
  for (const ArchiveNamespace& ns : archive->namespaces) {
    EXPECT_TRUE(ns.eof_seen);
    EXPECT_EQ(Crc64Update(0, ns.documents), ns.crc) << ns.db << "." << ns.collection;
    EXPECT_NE(ns.crc, 0u);
  }
  // CRC-64/XZ's check value (the same parameters): "123456789".
  EXPECT_EQ(Crc64Update(0, "123456789"), 0x995DC9BBDF1939FAULL);
  EXPECT_EQ(Crc64Update(Crc64Update(0, "1234"), "56789"), 0x995DC9BBDF1939FAULL);
}

TEST(ToolsFormats, GzipRoundTripAndTornGzip) {
  std::string packed;
  {
    ScratchDir dir;
    auto f = OpenOutput(dir.Sub("x.gz"), true);
    ASSERT_TRUE(f.ok());
    std::string big(300000, 'x');
    for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 26);
    ASSERT_TRUE((*f)->Write(big).ok());
    ASSERT_TRUE((*f)->Close().ok());
    auto in = OpenInput(dir.Sub("x.gz"), true);
    ASSERT_TRUE(in.ok());
    auto all = ReadAll(in->get());
    ASSERT_TRUE(all.ok()) << all.status();
    EXPECT_EQ(*all, big);
    std::string gz = Slurp(dir.Sub("x.gz"));
    Spit(dir.Sub("torn.gz"), gz.substr(0, gz.size() / 2));
    auto torn = OpenInput(dir.Sub("torn.gz"), true);
    ASSERT_TRUE(torn.ok());
    auto bad = ReadAll(torn->get());
    ASSERT_FALSE(bad.ok());
    EXPECT_THAT(std::string(bad.status().message()), HasSubstr("torn.gz"));
    Spit(dir.Sub("plain"), "not gzip at all");
    auto notgz = OpenInput(dir.Sub("plain"), true);
    ASSERT_TRUE(notgz.ok());
    auto bad2 = ReadAll(notgz->get());
    ASSERT_FALSE(bad2.ok());
    EXPECT_THAT(std::string(bad2.status().message()), HasSubstr("not valid gzip"));
  }
}

// ---- fixtures made by MongoDB's tools ----

class ToolsFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override { client_ = OpenAt(dir_.Sub("db")); }
  StatusOr<RestoreReport> RunRestore(RestoreOptions options) { return Restore(*client_, options); }
  Collection Coll(const std::string& db, const std::string& c) {
    return client_->GetDatabase(db).GetCollection(c);
  }
  ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(ToolsFixtureTest, CollectionWithIndex) {
  RestoreOptions o;
  o.dir = RestoreFixture("coll_with_index");
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AllDocs(Coll("test", "foo")),
            BsonFileDocs(RestoreFixture("coll_with_index/test/foo.bson")));
  EXPECT_EQ(r->documents_restored, 1);
  EXPECT_THAT(IndexNames(Coll("test", "foo")), ::testing::ElementsAre("_id_", "f_1"));
  auto v = Coll("test", "foo").Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
}

TEST_F(ToolsFixtureTest, TtlIndexKeepsItsExpiry) {
  RestoreOptions o;
  o.dir = RestoreFixture("coll_with_ttl_index");
  ASSERT_TRUE(RunRestore(o).ok());
  auto idx = Coll("test", "foo").ListIndexes();
  ASSERT_TRUE(idx.ok());
  ASSERT_EQ(idx->size(), 2u);
  EXPECT_EQ((*idx)[1].Get("expireAfterSeconds").NumberAsDouble(), 1000);
}

TEST_F(ToolsFixtureTest, EscapedAndLongNames) {
  RestoreOptions o;
  o.dir = RestoreFixture("specialcharacter");
  ASSERT_TRUE(RunRestore(o).ok());
  EXPECT_EQ(AllDocs(Coll("db1", "cafés")).size(), 1u);
  o.dir = RestoreFixture("longcollectionname");
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto names = client_->GetDatabase("db1").ListCollectionNames();
  ASSERT_TRUE(names.ok());
  bool found = false;
  for (const auto& n : *names) found = found || n.size() == 247;
  EXPECT_TRUE(found);
}

TEST_F(ToolsFixtureTest, PreludeAndGzipDumps) {
  for (const char* d : {"prelude_test/prelude_top_level", "prelude_test/server_version_unknown"}) {
    RestoreOptions o;
    o.dir = RestoreFixture(d);
    o.drop = true;
    auto r = RunRestore(o);
    ASSERT_TRUE(r.ok()) << d << ": " << r.status();
    EXPECT_EQ(AllDocs(Coll("test", "foo")), BsonFileDocs(RestoreFixture(std::string(d) + "/test/foo.bson")));
  }
  RestoreOptions o;
  o.dir = RestoreFixture("prelude_test/prelude_gzip");
  o.gzip = true;
  o.drop = true;
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AllDocs(Coll("test", "foo")).size(), 1u);
  // The database directory itself, with --db.
  o = RestoreOptions();
  o.dir = RestoreFixture("prelude_test/prelude_db_target/test");
  o.ns.db = "other";
  r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AllDocs(Coll("other", "foo")).size(), 1u);
}

TEST_F(ToolsFixtureTest, TestdirsAndIndexTestDump) {
  RestoreOptions o;
  o.dir = RestoreFixture("testdirs");
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AllDocs(Coll("db1", "c1")), BsonFileDocs(RestoreFixture("testdirs/db1/c1.bson")));
  EXPECT_EQ(AllDocs(Coll("db1", "c4")), BsonFileDocs(RestoreFixture("testdirs/db1/c4.bson")));

  // A v:1 index with legacy key values and the old "safe" option: refused
  // as it stands, and nothing is created ...
  o.dir = RestoreFixture("indextestdump");
  r = RunRestore(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("test_collection.metadata.json"));
  auto names = client_->GetDatabase("indextest").ListCollectionNames();
  ASSERT_TRUE(names.ok());
  EXPECT_TRUE(names->empty()) << names->front();
  // ... and restored with --convertLegacyIndexes, as mongorestore does.
  o.convert_legacy_indexes = true;
  r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  Collection c = Coll("indextest", "test_collection");
  EXPECT_EQ(AllDocs(c), BsonFileDocs(RestoreFixture("indextestdump/indextest/test_collection.bson")));
  auto idx = c.ListIndexes();
  ASSERT_TRUE(idx.ok());
  ASSERT_EQ(idx->size(), 2u);
  EXPECT_EQ(ToJson((*idx)[1].Get("key").Document()), R"({"a": 1.0, "b": 1, "c": 1, "d": 1})");
  EXPECT_FALSE((*idx)[1].Get("safe").ok());
  EXPECT_TRUE(c.Validate()->valid);
}

// mongorestore's fixture of hashed indexes (one on a dotted path) restores
// whole: the documents, and indexes that answer queries as a scan does.
TEST_F(ToolsFixtureTest, HashedIndexesRestore) {
  RestoreOptions o;
  o.dir = RestoreFixture("hashedIndexes.bson");
  o.ns.db = "test";
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  Collection c = Coll("test", "hashedIndexes");
  const std::vector<Document> all = AllDocs(c);
  EXPECT_EQ(all, BsonFileDocs(RestoreFixture("hashedIndexes.bson")));
  auto idx = c.ListIndexes();
  ASSERT_TRUE(idx.ok());
  ASSERT_EQ(idx->size(), 4u);
  EXPECT_EQ(ToJson((*idx)[2].Get("key").Document()), R"({"a.b": "hashed"})");
  EXPECT_EQ(ToJson((*idx)[3].Get("key").Document()), R"({"b": "hashed"})");
  EXPECT_TRUE(c.Validate()->valid);
  // Every document is found again through each hashed index by its value.
  ASSERT_FALSE(all.empty());
  for (const Document& d : all) {
    BsonBuilder f;
    if (d.Get("b").ok()) f.AppendElementAs("b", d.Get("b"));
    Document filter = std::move(f).Build();
    auto n = c.CountDocuments(filter);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_GE(*n, 1) << ToJson(d);
  }
}

// A dump holding a text index, in the form mongodump writes MongoDB's
// (key {_fts: "text", _ftsx: 1} with its weights and languages; no fixture
// of mongo-tools has one): restored, listed as MongoDB lists it, and
// answering $text with MongoDB's scores; dumped again, it comes back equal.
TEST_F(ToolsFixtureTest, TextIndexesRestore) {
  const std::string dump = dir_.Sub("dump");
  std::filesystem::create_directories(dump + "/test");
  {
    std::ofstream bson(dump + "/test/articles.bson", std::ios::binary);
    for (const char* d : {R"({"_id": 1, "subject": "coffee"})", R"({"_id": 2, "subject": "Coffee Shopping"})",
                          R"({"_id": 3, "subject": "Baking a cake"})"}) {
      Document doc = Json(d);
      bson.write(reinterpret_cast<const char*>(doc.view().bytes().data()),
                 static_cast<std::streamsize>(doc.view().bytes().size()));
    }
    std::ofstream meta(dump + "/test/articles.metadata.json");
    meta << R"({"indexes": [{"v": {"$numberInt": "2"}, "key": {"_id": {"$numberInt": "1"}}, "name": "_id_"},
        {"v": {"$numberInt": "2"}, "key": {"_fts": "text", "_ftsx": {"$numberInt": "1"}},
         "name": "subject_text", "weights": {"subject": {"$numberInt": "3"}},
         "default_language": "english", "language_override": "language",
         "textIndexVersion": {"$numberInt": "3"}}],
        "collectionName": "articles", "type": "collection"})";
  }
  RestoreOptions o;
  o.dir = dump;
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  Collection c = Coll("test", "articles");
  auto idx = c.ListIndexes();
  ASSERT_TRUE(idx.ok());
  ASSERT_EQ(idx->size(), 2u);
  EXPECT_EQ(ToJson((*idx)[1]),
            R"({"v": 2, "key": {"_fts": "text", "_ftsx": 1}, "name": "subject_text", )"
            R"("weights": {"subject": 3}, "default_language": "english", )"
            R"("language_override": "language", "textIndexVersion": 3})");
  EXPECT_TRUE(c.Validate()->valid);
  FindOptions f;
  f.projection = Json(R"({"score": {"$meta": "textScore"}})");
  auto cursor = c.Find(Json(R"({"$text": {"$search": "cake"}})"), f);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  auto found = cursor->ToVector();
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  EXPECT_DOUBLE_EQ((*found)[0].Get("score").Double(), 3 * 0.75);  // weight 3, two tokens
}

// A collection a killed restore left aside (another process's pid in its
// name) is removed by the next restore into that database; one named with
// this process's pid (a restore running beside it) and other collections
// are left alone; dump never writes any of them.
TEST_F(ToolsFixtureTest, RestoreRemovesWhatAnInterruptedRestoreLeft) {
  Database test = client_->GetDatabase("test");
  const std::string ours = "tmp.rockdoc_restore." + std::to_string(::getpid()) + ".live";
  for (const std::string& name : {std::string("tmp.rockdoc_restore.0.dead"), ours,
                                  std::string("tmp.rockdoc_restorex"), std::string("kept")}) {
    ASSERT_TRUE(test.CreateCollection(name).ok()) << name;
  }
  RestoreOptions o;
  o.dir = RestoreFixture("coll_with_index");
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto names = test.ListCollectionNames();
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ::testing::UnorderedElementsAre("foo", ours, "tmp.rockdoc_restorex", "kept"));
}

TEST_F(ToolsFixtureTest, DuplicateKeysAreCountedOrStop) {
  RestoreOptions o;
  o.dir = RestoreFixture("duplicate_index_key_with_oplog");
  auto docs = BsonFileDocs(RestoreFixture("duplicate_index_key_with_oplog/test/foo.bson"));
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->documents_restored + r->documents_failed, static_cast<int64_t>(docs.size()));
  // Restoring again without --drop: every _id is a duplicate.
  r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->documents_restored, 0);
  EXPECT_EQ(r->documents_failed, static_cast<int64_t>(docs.size()));
  EXPECT_THAT(r->failures.front(), HasSubstr("E11000"));
  o.stop_on_error = true;
  r = RunRestore(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kDuplicateKey);
}

TEST_F(ToolsFixtureTest, ArchiveFixture) {
  RestoreOptions o;
  o.archive = RestoreFixture("test.bar.archive");
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto docs = AllDocs(Coll("test", "bar"));
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].Get("foo").String(), "bar");

  o.archive = RestoreFixture("bad-format.archive");
  r = RunRestore(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("bad-format.archive"));
}

// bsondump's fixtures: good files restore as single .bson files and equal
// bsondump's own canonical Extended JSON; broken ones are refused with the
// file and offset, and nothing is created.
TEST_F(ToolsFixtureTest, BsondumpFiles) {
  const std::string dir = Fixtures() + "/bsondump/testdata/";
  RestoreOptions o;
  o.ns.db = "b";
  o.dir = dir + "sample.bson";
  auto r = RunRestore(o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<Document> expected;
  std::istringstream lines(Slurp(dir + "sample.json"));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) expected.push_back(Json(line));
  }
  EXPECT_EQ(AllDocs(Coll("b", "sample")).size(), expected.size());
  EXPECT_EQ(BsonFileDocs(dir + "sample.bson"), expected);
  // broken_array.bson's array has its keys out of order ("0", "1", "9",
  // "3"): well-formed BSON that libbson reads and MongoDB stores, so it is
  // restored, as mongorestore does without --objcheck.
  for (const char* good : {"all_types.bson", "broken_array.bson"}) {
    o.dir = dir + good;
    r = RunRestore(o);
    EXPECT_TRUE(r.ok()) << good << ": " << r.status();
  }
  // deep_nested.bson nests past MongoDB's (and rockdoc's) limit of 100.
  for (const char* bad : {"bad_cstring.bson", "bad_type.bson", "deep_nested.bson",
                          "partial_file.bson", "random_bytes.bson"}) {
    o.dir = dir + bad;
    r = RunRestore(o);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(bad));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("at offset"));
    std::string coll(bad);
    coll.resize(coll.size() - 5);
    auto names = client_->GetDatabase("b").ListCollectionNames();
    ASSERT_TRUE(names.ok());
    EXPECT_EQ(std::count(names->begin(), names->end(), coll), 0) << bad;
  }
}

// ---- round trips ----

std::string HexToBytes(std::string_view hex) {
  std::string out;
  auto nib = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(nib(hex[i]) * 16 + nib(hex[i + 1])));
  }
  return out;
}

// Every valid document of the BSON corpus; without the `lossy` ones (bit
// patterns, such as Decimal128 NaN payloads, that Extended JSON cannot
// spell, as the corpus marks them) when `json_lossless`.
std::vector<Document> CorpusDocuments(bool json_lossless = false) {
  std::vector<Document> out;
  for (const auto& e : fs::directory_iterator(test::TestDataDir() + "/bson-corpus")) {
    if (e.path().extension() != ".json") continue;
    auto file = FromJson(Slurp(e.path().string()));
    if (!file.ok()) continue;
    Element valid = file->Get("valid");
    if (!valid.IsArray()) continue;
    for (Element c : valid.Array()) {
      Element hex = c.Document().Get("canonical_bson");
      if (!hex.IsString()) continue;
      Element lossy = c.Document().Get("lossy");
      if (json_lossless && lossy.IsBool() && lossy.Bool()) continue;
      auto doc = Document::FromBytes(HexToBytes(hex.String()));
      if (doc.ok()) out.push_back(*std::move(doc));
    }
  }
  return out;
}

// libbson's canonical Extended JSON of each document in concatenated BSON,
// whitespace removed; fails the test on anything libbson refuses.
std::vector<std::string> LibbsonCanonical(std::string_view bytes, const std::string& what) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    EXPECT_GE(bytes.size() - pos, 5u) << what;
    if (bytes.size() - pos < 5) break;
    int32_t len;
    std::memcpy(&len, bytes.data() + pos, 4);
    bson_t b;
    bool ok = len >= 5 && static_cast<size_t>(len) <= bytes.size() - pos &&
              bson_init_static(&b, reinterpret_cast<const uint8_t*>(bytes.data() + pos),
                               static_cast<size_t>(len));
    EXPECT_TRUE(ok) << what << " at " << pos;
    if (!ok) break;
    size_t err_offset = 0;
    EXPECT_TRUE(bson_validate(&b, BSON_VALIDATE_NONE, &err_offset)) << what << " at " << pos;
    char* json = bson_as_canonical_extended_json(&b, nullptr);
    EXPECT_NE(json, nullptr) << what;
    if (json != nullptr) {
      out.push_back(CompactJson(json));
      bson_free(json);
    }
    pos += static_cast<size_t>(len);
  }
  return out;
}

std::vector<std::string> RockdocCanonical(std::string_view bytes) {
  std::vector<std::string> out;
  auto in = StringInput(bytes);
  BsonReader reader(in.get());
  Document d;
  while (true) {
    auto have = reader.Next(&d);
    if (!have.ok() || !*have) break;
    out.push_back(CompactCanonicalJson(d));
  }
  return out;
}

class ToolsRoundTripTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(ToolsRoundTripTest, CorpusAndRandomDocumentsByteForByte) {
  const bool archive = std::get<0>(GetParam());
  const bool gzip = std::get<1>(GetParam());
  ScratchDir dir;
  std::vector<Document> inserted_corpus, inserted_random;
  {
    auto client = OpenAt(dir.Sub("src"));
    Collection corpus = client->GetDatabase("rt").GetCollection("corpus");
    for (const Document& d : CorpusDocuments()) {
      if (corpus.InsertOne(d).ok()) inserted_corpus.push_back(d);
    }
    EXPECT_GT(inserted_corpus.size(), 300u);
    Collection random = client->GetDatabase("rt").GetCollection("random docs/é");
    test::RandomDocuments gen(42);
    std::vector<Document> batch;
    for (int i = 0; i < 500; ++i) batch.push_back(gen.Next());
    ASSERT_TRUE(random.InsertMany(batch).ok());
    ASSERT_TRUE(random.CreateIndex(Json(R"({"a": 1, "b": -1})")).ok());
    IndexOptions unique;
    unique.unique = true;
    unique.sparse = true;
    unique.hidden = true;  // kept by dump and restore, as mongodump's metadata keeps it
    unique.name = "u";
    ASSERT_TRUE(random.CreateIndex(Json(R"({"x.y": 1})"), unique).ok());
    ASSERT_TRUE(client->GetDatabase("rt").CreateView("v", "corpus", Json(R"({"p": [{"$match": {"a": 1}}]})").Get("p").Array()).ok());
    ASSERT_TRUE(
        client->GetDatabase("rt2").CreateCollection("capped", test::CappedOptions(100000)).ok());
    ASSERT_TRUE(client->GetDatabase("rt2").GetCollection("capped").InsertOne(Json(R"({"_id": 1})")).ok());

    DumpOptions d;
    d.out = dir.Sub("dump");
    d.gzip = gzip;
    if (archive) d.archive = dir.Sub("dump.archive");
    auto report = Dump(*client, d);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->collections, 4);
  }

  // libbson reads what was written, and agrees on every document's JSON.
  auto check_libbson = [&](const std::string& bytes, const std::string& what) {
    std::vector<std::string> theirs = LibbsonCanonical(bytes, what);
    std::vector<std::string> ours = RockdocCanonical(bytes);
    ASSERT_EQ(theirs.size(), ours.size()) << what;
    for (size_t i = 0; i < ours.size(); ++i) {
      if (theirs[i] == ours[i]) continue;
      // Equivalent spellings (libbson writes "\b" where rockdoc writes
      // "\u0008", "1e+308" for "1.0E+308"): both must denote the same BSON.
      auto a = FromJson(theirs[i]);
      auto b = FromJson(ours[i]);
      ASSERT_TRUE(a.ok()) << what << " #" << i << ": " << a.status() << " in " << theirs[i];
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_EQ(a->bytes(), b->bytes()) << what << " #" << i << "\n" << theirs[i] << "\n" << ours[i];
    }
  };
  if (archive) {
    auto in = OpenInput(dir.Sub("dump.archive"), gzip);
    ASSERT_TRUE(in.ok());
    auto contents = ReadArchive(in->get());
    ASSERT_TRUE(contents.ok()) << contents.status();
    for (const ArchiveNamespace& ns : contents->namespaces) {
      check_libbson(ns.documents, ns.collection);
      bson_error_t error;
      bson_t* meta = bson_new_from_json(reinterpret_cast<const uint8_t*>(ns.metadata_json.data()),
                                        static_cast<ssize_t>(ns.metadata_json.size()), &error);
      EXPECT_NE(meta, nullptr) << error.message;
      if (meta) bson_destroy(meta);
    }
  } else {
    for (const auto& e : fs::recursive_directory_iterator(dir.Sub("dump"))) {
      if (!e.is_regular_file()) continue;
      std::string path = e.path().string();
      auto in = OpenInput(path, gzip);
      ASSERT_TRUE(in.ok());
      auto bytes = ReadAll(in->get());
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      if (path.find(".bson") != std::string::npos) {
        check_libbson(*bytes, path);
      } else {
        bson_error_t error;
        bson_t* meta = bson_new_from_json(reinterpret_cast<const uint8_t*>(bytes->data()),
                                          static_cast<ssize_t>(bytes->size()), &error);
        EXPECT_NE(meta, nullptr) << path << ": " << error.message;
        if (meta) bson_destroy(meta);
        EXPECT_EQ(bytes->find('\n'), std::string::npos) << path;
      }
    }
    EXPECT_TRUE(fs::exists(dir.Sub("dump/rt/") + "random+docs%2F%C3%A9.bson" + (gzip ? ".gz" : "")));
  }

  auto src = OpenAt(dir.Sub("src"));
  auto dst = OpenAt(dir.Sub("dst"));
  RestoreOptions r;
  r.dir = dir.Sub("dump");
  r.gzip = gzip;
  if (archive) r.archive = dir.Sub("dump.archive");
  auto restored = Restore(*dst, r);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->documents_failed, 0);
  for (const char* name : {"corpus", "random docs/é"}) {
    Collection a = src->GetDatabase("rt").GetCollection(name);
    Collection b = dst->GetDatabase("rt").GetCollection(name);
    EXPECT_EQ(AllDocs(a), AllDocs(b)) << name;
    EXPECT_EQ(a.ListIndexes().value(), b.ListIndexes().value()) << name;
    auto v = b.Validate();
    ASSERT_TRUE(v.ok());
    EXPECT_TRUE(v->valid) << name;
  }
  auto views = dst->GetDatabase("rt").ListCollections();
  ASSERT_TRUE(views.ok());
  bool view_found = false;
  for (const auto& info : *views) {
    if (info.name == "v") {
      view_found = info.is_view;
      EXPECT_EQ(info.options.Get("viewOn").String(), "corpus");
    }
  }
  EXPECT_TRUE(view_found);
  auto capped = dst->GetDatabase("rt2").ListCollections();
  ASSERT_TRUE(capped.ok());
  ASSERT_EQ(capped->size(), 1u);
  EXPECT_TRUE(capped->front().options.Get("capped").Bool());
  // Run twice with --drop: the same state again, nothing duplicated.
  r.drop = true;
  restored = Restore(*dst, r);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(AllDocs(src->GetDatabase("rt").GetCollection("corpus")),
            AllDocs(dst->GetDatabase("rt").GetCollection("corpus")));
}

INSTANTIATE_TEST_SUITE_P(DirectoryAndArchive, ToolsRoundTripTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "Archive" : "Directory") +
                                  (std::get<1>(info.param) ? "Gzip" : "Plain");
                         });

TEST(ToolsDump, QueryCollectionAndNamespaceFilters) {
  ScratchDir dir;
  auto client = OpenAt(dir.Sub("db"));
  ASSERT_TRUE(client->GetDatabase("a").GetCollection("x").InsertMany(
      test::JsonArray(R"([{"_id": 1, "n": 1}, {"_id": 2, "n": 2}])")).ok());
  ASSERT_TRUE(client->GetDatabase("a").GetCollection("y").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(client->GetDatabase("b").GetCollection("x").InsertOne(Json(R"({"_id": 1})")).ok());
  DumpOptions d;
  d.out = dir.Sub("q");
  d.ns.db = "a";
  d.ns.collection = "x";
  d.query = Json(R"({"n": {"$gt": 1}})");
  ASSERT_TRUE(Dump(*client, d).ok());
  EXPECT_EQ(BsonFileDocs(dir.Sub("q/a/x.bson")), test::JsonArray(R"([{"_id": 2, "n": 2}])"));
  EXPECT_FALSE(fs::exists(dir.Sub("q/a/y.bson")));
  std::string meta = Slurp(dir.Sub("q/a/x.metadata.json"));
  EXPECT_THAT(meta, ::testing::MatchesRegex(
                        R"(\{"indexes":\[\{"v":\{"\$numberInt":"2"\},"key":\{"_id":\{"\$numberInt":"1"\}\},"name":"_id_"\}\],"uuid":"[0-9a-f]{32}","collectionName":"x"\})"));
  EXPECT_EQ(Slurp(dir.Sub("q/prelude.json")).substr(0, 29), R"({"ServerVersion":"unknown","T)");

  DumpOptions all;
  all.out = dir.Sub("ns");
  all.ns.exclude = {"a.y"};
  all.ns.include = {"*.x", "a.*"};
  ASSERT_TRUE(Dump(*client, all).ok());
  EXPECT_TRUE(fs::exists(dir.Sub("ns/a/x.bson")));
  EXPECT_TRUE(fs::exists(dir.Sub("ns/b/x.bson")));
  EXPECT_FALSE(fs::exists(dir.Sub("ns/a/y.bson")));

  DumpOptions bad;
  bad.query = Json(R"({"n": 1})");
  auto r = Dump(*client, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("without a specified collection"));
}

// ---- bad input leaves the target unchanged ----

class ToolsBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto client = OpenAt(dir_.Sub("src"));
    Collection c = client->GetDatabase("t").GetCollection("c");
    std::vector<Document> docs;
    for (int i = 0; i < 50; ++i) docs.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"s\": \"abcdefgh\"}"));
    ASSERT_TRUE(c.InsertMany(docs).ok());
    ASSERT_TRUE(c.CreateIndex(Json(R"({"s": 1})")).ok());
    DumpOptions d;
    d.out = dir_.Sub("dump");
    ASSERT_TRUE(Dump(*client, d).ok());
    d.archive = dir_.Sub("a.archive");
    ASSERT_TRUE(Dump(*client, d).ok());
    client.reset();
    target_ = OpenAt(dir_.Sub("target"));
    Collection t = target_->GetDatabase("t").GetCollection("c");
    ASSERT_TRUE(t.InsertOne(Json(R"({"_id": "old", "keep": true})")).ok());
    before_ = AllDocs(t);
  }
  void ExpectUnchanged() {
    Collection t = target_->GetDatabase("t").GetCollection("c");
    EXPECT_EQ(AllDocs(t), before_);
    EXPECT_THAT(IndexNames(t), ::testing::ElementsAre("_id_"));
    auto names = target_->GetDatabase("t").ListCollectionNames();
    ASSERT_TRUE(names.ok());
    EXPECT_THAT(*names, ::testing::ElementsAre("c"));  // no temporary left behind
  }
  void ExpectRefused(RestoreOptions o, const std::string& file_part, const std::string& what) {
    for (bool drop : {false, true}) {
      o.drop = drop;
      auto r = Restore(*target_, o);
      ASSERT_FALSE(r.ok()) << what;
      EXPECT_THAT(std::string(r.status().message()), HasSubstr(file_part));
      EXPECT_THAT(std::string(r.status().message()), HasSubstr(what));
      ExpectUnchanged();
    }
  }
  ScratchDir dir_;
  std::unique_ptr<Client> target_;
  std::vector<Document> before_;
};

TEST_F(ToolsBadInputTest, TornLastDocument) {
  std::string bson = Slurp(dir_.Sub("dump/t/c.bson"));
  const size_t doc_size = static_cast<uint8_t>(bson[0]);  // every document is the same size
  Spit(dir_.Sub("dump/t/c.bson"), bson.substr(0, bson.size() - 3));
  RestoreOptions o;
  o.dir = dir_.Sub("dump");
  ExpectRefused(o, "c.bson: at offset " + std::to_string(bson.size() - doc_size), "cut short");
}

TEST_F(ToolsBadInputTest, InvalidBsonInTheMiddle) {
  std::string bson = Slurp(dir_.Sub("dump/t/c.bson"));
  const size_t doc_size = static_cast<uint8_t>(bson[0]);
  bson[doc_size * 10 + 4] = 0x7f;  // an unknown type byte in the 11th document
  Spit(dir_.Sub("dump/t/c.bson"), bson);
  RestoreOptions o;
  o.dir = dir_.Sub("dump");
  ExpectRefused(o, "c.bson: at offset " + std::to_string(doc_size * 10), "");
}

TEST_F(ToolsBadInputTest, UnknownIndexOption) {
  std::string meta = Slurp(dir_.Sub("dump/t/c.metadata.json"));
  size_t at = meta.find(R"("name":"s_1")");
  ASSERT_NE(at, std::string::npos);
  meta.insert(at, R"("bogusOption":true,)");
  Spit(dir_.Sub("dump/t/c.metadata.json"), meta);
  RestoreOptions o;
  o.dir = dir_.Sub("dump");
  ExpectRefused(o, "c.metadata.json", "bogusOption");
}

TEST_F(ToolsBadInputTest, MalformedMetadata) {
  Spit(dir_.Sub("dump/t/c.metadata.json"), R"({"indexes": [{"name": "x"}]})");
  RestoreOptions o;
  o.dir = dir_.Sub("dump");
  ExpectRefused(o, "c.metadata.json", "has no 'key' document");
  Spit(dir_.Sub("dump/t/c.metadata.json"), R"({"indexes": [], "surprise": 1})");
  ExpectRefused(o, "c.metadata.json", "unknown metadata field 'surprise'");
  Spit(dir_.Sub("dump/t/c.metadata.json"), R"({"indexes": [)");
  ExpectRefused(o, "c.metadata.json", "error parsing metadata");
}

TEST_F(ToolsBadInputTest, ArchiveWrongMagicTruncatedAndCrc) {
  std::string archive = Slurp(dir_.Sub("a.archive"));
  RestoreOptions o;
  o.archive = dir_.Sub("bad.archive");

  std::string wrong = archive;
  wrong[0] = 0x6e;
  Spit(dir_.Sub("bad.archive"), wrong);
  ExpectRefused(o, "bad.archive: at offset 0", "wrong magic number");

  for (size_t cut : {archive.size() - 4, archive.size() - 60, archive.size() / 2, size_t{10}}) {
    Spit(dir_.Sub("bad.archive"), archive.substr(0, cut));
    ExpectRefused(o, "bad.archive: at offset", "");
  }

  std::string flipped = archive;
  size_t at = flipped.find("abcdefgh");
  ASSERT_NE(at, std::string::npos);
  flipped[at] = 'X';  // still valid BSON: only the CRC can tell
  Spit(dir_.Sub("bad.archive"), flipped);
  ExpectRefused(o, "bad.archive: at offset", "CRC mismatch for t.c");
}

TEST_F(ToolsBadInputTest, DropReplacesOnlyWithACompleteCopy) {
  RestoreOptions o;
  o.dir = dir_.Sub("dump");
  o.drop = true;
  auto r = Restore(*target_, o);
  ASSERT_TRUE(r.ok()) << r.status();
  Collection t = target_->GetDatabase("t").GetCollection("c");
  EXPECT_EQ(AllDocs(t).size(), 50u);
  EXPECT_THAT(IndexNames(t), ::testing::ElementsAre("_id_", "s_1"));
  auto names = target_->GetDatabase("t").ListCollectionNames();
  EXPECT_THAT(*names, ::testing::ElementsAre("c"));
}

// Issue 34.9: a directory restore checks every collection's files before it
// changes anything, so a damaged file after others leaves the target whole,
// --drop or not (it replaced the earlier collections, then failed).
TEST_F(ToolsBadInputTest, ADamagedLaterFileLeavesEveryCollectionAsItWas) {
  {
    auto client = OpenAt(dir_.Sub("src2"));
    Database t = client->GetDatabase("t");
    ASSERT_TRUE(t.GetCollection("a").InsertOne(Json(R"({"_id": 1, "new": true})")).ok());
    ASSERT_TRUE(t.GetCollection("c").InsertOne(Json(R"({"_id": 2, "new": true})")).ok());
    DumpOptions d;
    d.out = dir_.Sub("dump2");
    ASSERT_TRUE(Dump(*client, d).ok());
  }
  std::string c_bson = Slurp(dir_.Sub("dump2/t/c.bson"));
  Spit(dir_.Sub("dump2/t/c.bson"), c_bson.substr(0, c_bson.size() - 3));  // cut short
  Collection a = target_->GetDatabase("t").GetCollection("a");
  ASSERT_TRUE(a.InsertOne(Json(R"({"_id": "old a"})")).ok());
  const std::vector<Document> a_before = AllDocs(a);
  RestoreOptions o;
  o.dir = dir_.Sub("dump2");
  for (bool drop : {true, false}) {
    o.drop = drop;
    auto r = Restore(*target_, o);
    ASSERT_FALSE(r.ok()) << drop;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("c.bson"));
    EXPECT_EQ(AllDocs(a), a_before) << drop;  // a.bson was sound, but not restored
    EXPECT_EQ(AllDocs(target_->GetDatabase("t").GetCollection("c")), before_);
  }
}

// Issue 33.12: mongodump --oplog's archive holds the oplog as the namespace
// "" / "oplog", without metadata; mongorestore skips it unless
// --oplogReplay (which rockdoc refuses), and so does rockdoc-restore.
// Issue 33.17: its log says where each collection comes from once, and what
// went in and what failed.
TEST_F(ToolsBadInputTest, AnArchiveWithTheOplogRestoresItsCollections) {
  const std::string path = dir_.Sub("oplog.archive");
  {
    auto out = OpenOutput(path, false);
    ASSERT_TRUE(out.ok()) << out.status();
    ArchiveWriter w(out->get());
    ASSERT_TRUE(w.WriteHeader("100.9.4").ok());
    ASSERT_TRUE(w.WriteMetadata("shop", "items",
                                R"({"indexes":[{"v":2,"key":{"_id":1},"name":"_id_"}]})", 0)
                    .ok());
    ASSERT_TRUE(w.WriteMetadata("", "oplog", "", 0).ok());
    ASSERT_TRUE(w.EndMetadata().ok());
    ASSERT_TRUE(w.BeginSegment("shop", "items").ok());
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(
          w.WriteDocument("shop", "items", Json("{\"_id\": " + std::to_string(i % 2) + "}")).ok());
    }
    ASSERT_TRUE(w.EndSegment().ok());
    ASSERT_TRUE(w.BeginSegment("", "oplog").ok());
    ASSERT_TRUE(
        w.WriteDocument("", "oplog", Json(R"({"op": "n", "ns": "", "o": {"msg": "x"}})")).ok());
    ASSERT_TRUE(w.EndSegment().ok());
    ASSERT_TRUE(w.WriteEof("shop", "items").ok());
    ASSERT_TRUE(w.WriteEof("", "oplog").ok());
    ASSERT_TRUE((*out)->Close().ok());
  }
  std::ostringstream log;
  RestoreOptions o;
  o.archive = path;
  o.log = &log;
  auto r = Restore(*target_, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->documents_restored, 2);
  EXPECT_EQ(r->documents_failed, 1);  // the second _id 0
  EXPECT_EQ(AllDocs(target_->GetDatabase("shop").GetCollection("items")).size(), 2u);
  auto dbs = target_->ListDatabaseNames();
  ASSERT_TRUE(dbs.ok());
  EXPECT_THAT(*dbs, ::testing::UnorderedElementsAre("shop", "t"));
  const std::string text = log.str();
  EXPECT_THAT(text, HasSubstr("skipping the oplog entries of archive '" + path + "'"));
  EXPECT_THAT(text, HasSubstr("\trestoring shop.items from archive '" + path + "'\n"));
  EXPECT_THAT(text, HasSubstr("\tfinished restoring shop.items (2 documents, 1 failure)\n"));
}

// ---- the programs' command lines ----

int RunTool(int (*main_fn)(int, const char* const*, std::ostream&), std::vector<std::string> args,
        std::string* err_text) {
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream err;
  int rc = main_fn(static_cast<int>(argv.size()), argv.data(), err);
  *err_text = err.str();
  return rc;
}

TEST(ToolsMain, FlagsFromATable) {
  std::string err;
  EXPECT_EQ(RunTool(DumpMain, {"rockdoc-dump", "--bogus"}, &err), 3);
  EXPECT_THAT(err, HasSubstr("unknown option \"--bogus\""));
  EXPECT_EQ(RunTool(DumpMain, {"rockdoc-dump", "--oplog"}, &err), 3);
  EXPECT_THAT(err, HasSubstr("--oplog is not supported by rockdoc"));
  EXPECT_EQ(RunTool(RestoreMain, {"rockdoc-restore", "--oplogReplay"}, &err), 3);
  EXPECT_THAT(err, HasSubstr("--oplogReplay is not supported by rockdoc"));
  EXPECT_EQ(RunTool(RestoreMain, {"rockdoc-restore", "--nsFrom=a.*", "--nsFrom=b.*", "--nsTo=c.*"},
                    &err),
            3);
  EXPECT_THAT(err, HasSubstr("--nsFrom and --nsTo arguments must be specified an equal number"));
  EXPECT_EQ(RunTool(RestoreMain, {"rockdoc-restore", "--gzip=yes"}, &err), 3);
  EXPECT_THAT(err, HasSubstr("does not take an argument"));
  EXPECT_EQ(RunTool(DumpMain, {"rockdoc-dump", "--db"}, &err), 3);
  EXPECT_THAT(err, HasSubstr("expected argument for flag --db"));
  EXPECT_EQ(RunTool(DumpMain, {"rockdoc-dump", "--out", "x"}, &err), 1);
  EXPECT_THAT(err, HasSubstr("--dbpath is required"));
  // A restore-only flag is unknown to dump.
  EXPECT_EQ(RunTool(DumpMain, {"rockdoc-dump", "--drop"}, &err), 3);
  EXPECT_THAT(err, HasSubstr("unknown option \"--drop\""));
}

TEST(ToolsNamespaces, RenamedNamespace) {
  auto renamed = [](std::vector<NamespaceRename> r, std::string_view ns) {
    auto out = RenamedNamespace(r, ns);
    return out.ok() ? *out : "error: " + std::string(out.status().message());
  };
  EXPECT_EQ(renamed({{"shop.$c$", "archive.2026_$c$"}}, "shop.orders"), "archive.2026_orders");
  EXPECT_EQ(renamed({{"shop.$c$", "archive.$c$"}}, "shops.orders"), "shops.orders");  // no match
  // Shortest runs first; several variables, reordered; '*' captures nothing.
  EXPECT_EQ(renamed({{"$db$.$a$_$b$", "$db$_new.$b$_$a$"}}, "d.x_y_z"), "d_new.y_z_x");
  EXPECT_EQ(renamed({{"*.logs_$year$", "logs.$year$"}}, "app.logs_2026"), "logs.2026");
  // The first rename that matches wins; escapes are literal in both.
  EXPECT_EQ(renamed({{"a.b", "x.y"}, {"a.*", "z.z"}}, "a.b"), "x.y");
  EXPECT_EQ(renamed({{"a.\\$p\\$", "b.\\*\\$"}}, "a.$p$"), "b.*$");
  EXPECT_EQ(renamed({{"a.$c", "b.c"}}, "a.x"), "error: namespace pattern 'a.$c': '$' opens a "
                                                "variable that needs a name and a closing '$'");
  EXPECT_THAT(renamed({{"a.$c$", "b.$d$"}}, "a.x"), HasSubstr("uses $d$, which --nsFrom"));
  // A malformed pair is an error even when an earlier one matches nothing.
  EXPECT_THAT(renamed({{"q.r", "s.t"}, {"a.$$", "b.c"}}, "a.x"), HasSubstr("needs a name"));
}

TEST_F(ToolsFixtureTest, RestoreRenamesWithNsFromNsTo) {
  ASSERT_TRUE(Coll("shop", "orders").InsertMany(test::JsonArray(R"([{"_id": 1}, {"_id": 2}])")).ok());
  ASSERT_TRUE(Coll("shop", "orders").CreateIndex(Json(R"({"k": 1})")).ok());
  ASSERT_TRUE(Coll("shop", "items").InsertOne(Json(R"({"_id": 3})")).ok());
  ASSERT_TRUE(Coll("sales", "q1").InsertOne(Json(R"({"_id": 4})")).ok());
  DumpOptions d;
  d.out = dir_.Sub("dump");
  ASSERT_TRUE(Dump(*client_, d).ok());
  auto target = OpenAt(dir_.Sub("target"));
  RestoreOptions o;
  o.dir = d.out;
  o.ns.include = {"shop.*"};  // selects by the dump's names
  o.renames = {{"shop.$c$", "archive.2026_$c$"}};
  auto r = Restore(*target, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->documents_restored, 3);
  auto names = target->GetDatabase("archive").ListCollectionNames();
  ASSERT_TRUE(names.ok());
  EXPECT_THAT(*names, ::testing::UnorderedElementsAre("2026_orders", "2026_items"));
  Collection orders = target->GetDatabase("archive").GetCollection("2026_orders");
  EXPECT_EQ(AllDocs(orders), test::JsonArray(R"([{"_id": 1}, {"_id": 2}])"));
  EXPECT_THAT(IndexNames(orders), ::testing::ElementsAre("_id_", "k_1"));
  auto dbs = target->ListDatabaseNames();
  ASSERT_TRUE(dbs.ok());
  EXPECT_THAT(*dbs, ::testing::ElementsAre("archive"));
  // A rename to something that is not db.collection, and a malformed
  // pattern, are refused before anything is written.
  for (NamespaceRename bad : {NamespaceRename{"sales.$c$", "$c$"}, NamespaceRename{"sales.$c", "x.y"},
                              NamespaceRename{"*.$c$", "one.target"}}) {
    o.ns.include = {"sales.*", "shop.items"};
    o.renames = {bad};
    r = Restore(*target, o);
    ASSERT_FALSE(r.ok()) << bad.to;
    EXPECT_EQ(r.status().code(), ErrorCode::kBadValue);
    dbs = target->ListDatabaseNames();
    EXPECT_THAT(*dbs, ::testing::ElementsAre("archive"));
  }
}

// A dump names each collection's UUID; restore gives it back with
// --preserveUUID (which needs --drop), a new one without.
TEST_F(ToolsFixtureTest, DumpNamesUuidsRestorePreservesThem) {
  ASSERT_TRUE(Coll("shop", "orders").InsertOne(Json(R"({"_id": 1})")).ok());
  auto uuid_of = [](const Client& client, const std::string& db, const std::string& name) {
    auto infos = client.GetDatabase(db).ListCollections();
    for (const auto& info : *infos) {
      if (info.name == name) return info.uuid;
    }
    return std::string("missing");
  };
  const std::string uuid = uuid_of(*client_, "shop", "orders");
  ASSERT_EQ(uuid.size(), 16u);
  DumpOptions d;
  d.out = dir_.Sub("dump");
  ASSERT_TRUE(Dump(*client_, d).ok());
  EXPECT_THAT(Slurp(d.out + "/shop/orders.metadata.json"),
              HasSubstr("\"uuid\":\"" + UuidToHex(uuid) + "\""));
  auto target = OpenAt(dir_.Sub("target"));
  RestoreOptions o;
  o.dir = d.out;
  o.preserve_uuid = true;
  auto r = Restore(*target, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kBadValue);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--preserveUUID without --drop"));
  o.drop = true;
  for (int round = 0; round < 2; ++round) {  // the second over the first
    r = Restore(*target, o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(uuid_of(*target, "shop", "orders"), uuid);
  }
  o.preserve_uuid = false;
  ASSERT_TRUE(Restore(*target, o).ok());
  const std::string fresh = uuid_of(*target, "shop", "orders");
  EXPECT_EQ(fresh.size(), 16u);
  EXPECT_NE(fresh, uuid);
  // A dump without UUIDs (older mongodump) cannot be restored preserving them.
  Spit(d.out + "/shop/orders.metadata.json", R"({"indexes":[{"v":2,"key":{"_id":1},"name":"_id_"}]})");
  o.preserve_uuid = true;
  r = Restore(*target, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kBadValue);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("names no UUID"));
  EXPECT_EQ(uuid_of(*target, "shop", "orders"), fresh);
}

TEST(ToolsMain, DumpAndRestorePrograms) {
  ScratchDir dir;
  {
    auto client = OpenAt(dir.Sub("db"));
    ASSERT_TRUE(client->GetDatabase("shop").GetCollection("orders").InsertMany(
        test::JsonArray(R"([{"_id": 1, "total": 5}, {"_id": 2, "total": 50}])")).ok());
  }
  std::string err;
  ASSERT_EQ(RunTool(DumpMain, {"rockdoc-dump", "--dbpath", dir.Sub("db"), "-d", "shop", "--collection=orders",
                           "--query", R"({"total": {"$gt": 10}})", "--archive=" + dir.Sub("a"), "--gzip"},
                &err),
            0)
      << err;
  EXPECT_THAT(err, HasSubstr("done dumping shop.orders (1 documents)"));
  ASSERT_EQ(RunTool(RestoreMain, {"rockdoc-restore", "--dbpath", dir.Sub("copy"), "--gzip",
                              "--archive=" + dir.Sub("a"), "--nsInclude", "shop.*", "--drop"},
                &err),
            0)
      << err;
  EXPECT_THAT(err, HasSubstr("1 document(s) restored successfully. 0 document(s) failed"));
  auto copy = OpenAt(dir.Sub("copy"));
  EXPECT_EQ(AllDocs(copy->GetDatabase("shop").GetCollection("orders")),
            test::JsonArray(R"([{"_id": 2, "total": 50}])"));
  copy.reset();
  // A missing database directory is an error, not a new empty database.
  EXPECT_EQ(RunTool(DumpMain, {"rockdoc-dump", "--dbpath", dir.Sub("missing")}, &err), 1);
  EXPECT_FALSE(fs::exists(dir.Sub("missing")));
}

// ---- export and import ----

std::string ImportFixture(const std::string& name) {
  return Fixtures() + "/mongoimport/testdata/" + name;
}

Document DropId(DocumentView d) {
  BsonBuilder b;
  for (Element e : d) {
    if (e.key() != "_id") b.AppendElement(e);
  }
  return std::move(b).Build();
}

std::vector<std::string> DocsWithoutIds(const Collection& c) {
  std::vector<std::string> out;
  for (const Document& d : AllDocs(c)) out.push_back(ToJson(DropId(d), JsonFormat::kCanonical));
  return out;
}

class ToolsImportTest : public ToolsFixtureTest {
 protected:
  StatusOr<ImportReport> RunImport(ImportOptions o) {
    if (o.db.empty()) o.db = "i";
    if (o.collection.empty()) o.collection = "c";
    return Import(*client_, o);
  }
  Collection C() { return Coll("i", "c"); }
};

TEST_F(ToolsImportTest, CsvAndTsvFixtures) {
  ImportOptions o;
  o.type = ExportType::kCsv;
  o.file = ImportFixture("test.csv");
  o.fields = {"a", "b", "c"};
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->imported, 3);
  EXPECT_THAT(DocsWithoutIds(C()),
              ::testing::ElementsAre(
                  ToJson(Json(R"({"a": 1, "b": 2, "c": 3})"), JsonFormat::kCanonical),
                  ToJson(Json(R"({"a": 3, "b": 5.4, "c": "string"})"), JsonFormat::kCanonical),
                  ToJson(Json(R"({"a": 5, "b": 6, "c": 6})"), JsonFormat::kCanonical)));
  o.drop = true;
  o.type = ExportType::kTsv;
  o.file = ImportFixture("test.tsv");
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AllDocs(C())[2].Get("b").String(), "string");
  // A byte-order mark is not part of the first field.
  for (auto [file, type] : {std::pair{"test_bom.csv", ExportType::kCsv},
                            std::pair{"test_bom.tsv", ExportType::kTsv}}) {
    o.file = ImportFixture(file);
    o.type = type;
    r = RunImport(o);
    ASSERT_TRUE(r.ok()) << file << r.status();
    EXPECT_EQ(AllDocs(C())[0].Get("a").Int32(), 1) << file;
  }
  // --fieldFile's names; a blank cell with --ignoreBlanks is no field.
  o = ImportOptions();
  o.type = ExportType::kCsv;
  o.drop = true;
  o.file = ImportFixture("test_blanks.csv");
  o.fields = {"_id", "b", "c"};
  o.ignore_blanks = true;
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto docs = AllDocs(C());
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(ToJson(docs[0]), R"({"_id": 1, "b": 2})");
  EXPECT_EQ(ToJson(docs[1]), R"({"_id": 5, "c": "6e"})");
  o.ignore_blanks = false;
  r = RunImport(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ToJson(AllDocs(C())[0]), R"({"_id": 1, "b": 2, "c": ""})");
}

TEST_F(ToolsImportTest, TypedColumnsAndParseGrace) {
  ImportOptions o;
  o.type = ExportType::kCsv;
  o.file = ImportFixture("test_type.csv");
  o.header_line = true;
  o.columns_have_types = true;
  auto r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("test_type.csv:4"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'BLAH'"));
  EXPECT_TRUE(AllDocs(C()).empty());  // parsed first: nothing written
  o.parse_grace = ParseGrace::kSkipRow;
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->imported, 2);
  EXPECT_EQ(ToJson(DropId(AllDocs(C())[1]), JsonFormat::kCanonical),
            R"({"zip": "12345-1234", "number": {"$numberDouble": "40.4"}})");
  o.drop = true;
  o.parse_grace = ParseGrace::kSkipField;
  r = RunImport(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ToJson(DropId(AllDocs(C())[2])), R"({"zip": "23455"})");
  o.parse_grace = ParseGrace::kAutoCast;
  r = RunImport(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ToJson(DropId(AllDocs(C())[2])), R"({"zip": "23455", "number": "BLAH"})");
  // Nested names.
  o = ImportOptions();
  o.type = ExportType::kCsv;
  o.header_line = true;
  o.columns_have_types = true;
  o.file = ImportFixture("test_nested_upsert.csv");
  o.collection = "nested";
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToJson(DropId(AllDocs(Coll("i", "nested"))[0])),
            R"({"level1": {"level2": {"key1": "34532", "key2": "aabb"}}})");
}

TEST_F(ToolsImportTest, BinaryColumns) {
  ScratchDir d;
  Spit(d.Sub("b.csv"), "k.string(),b64.binary(base64),hex.binary(hex)\nx,aGVsbG8=,68656c6c6f\ny,aGk=,\n");
  ImportOptions o;
  o.type = ExportType::kCsv;
  o.header_line = true;
  o.columns_have_types = true;
  o.ignore_blanks = true;
  o.file = d.Sub("b.csv");
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto docs = AllDocs(C());
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(ToJson(DropId(docs[0]), JsonFormat::kCanonical),
            R"({"k": "x", "b64": {"$binary": {"base64": "aGVsbG8=", "subType": "00"}}, )"
            R"("hex": {"$binary": {"base64": "aGVsbG8=", "subType": "00"}}})");
  EXPECT_EQ(ToJson(DropId(docs[1]), JsonFormat::kCanonical),
            R"({"k": "y", "b64": {"$binary": {"base64": "aGk=", "subType": "00"}}})");
  Spit(d.Sub("bad.csv"), "k.binary(hex)\nzz\n");
  o.file = d.Sub("bad.csv");
  r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("bad.csv:2"));
  // base32 (RFC 4648's alphabet and padding, its test vectors): "", "f",
  // "fo", ..., "foobar".
  Spit(d.Sub("b32.csv"),
       "_id.int32(),k.binary(base32)\n0,\n1,MY======\n2,MZXQ====\n3,MZXW6===\n4,MZXW6YQ=\n"
       "5,MZXW6YTB\n6,MZXW6YTBOI======\n");
  o.file = d.Sub("b32.csv");
  o.drop = true;
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  docs = AllDocs(C());
  const std::string foobar = "foobar";
  ASSERT_EQ(docs.size(), 7u);
  EXPECT_FALSE(docs[0].Get("k").ok());  // a blank, ignored
  for (size_t i = 1; i < 7; ++i) {
    EXPECT_EQ(docs[i].Get("k").Binary().data, foobar.substr(0, i)) << i;
  }
  for (const char* bad : {"MY=====", "MY=======", "my======", "M1======", "MY==MY==", "MZXW6YQ"}) {
    Spit(d.Sub("b32.csv"), std::string("k.binary(base32)\n") + bad + "\n");
    r = RunImport(o);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kFailedToParse) << bad;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("b32.csv:2")) << bad;
  }
}

TEST_F(ToolsImportTest, DateColumnsWithGoLayouts) {
  ScratchDir d;
  Spit(d.Sub("d.csv"),
       "a.date(2006-01-02T15:04:05Z07:00),b.date(Jan _2 2006 3:04PM),c.date_go(2006-01-02 15:04:05.000)\n"
       "2020-02-29T23:59:58+01:30,Mar  5 1999 1:07AM,2021-12-31 23:59:59.123\n"
       "1969-12-31T23:59:59Z,Dec 25 2000 12:00PM,1970-01-01 00:00:00.000\n");
  ImportOptions o;
  o.type = ExportType::kCsv;
  o.header_line = true;
  o.columns_have_types = true;
  o.file = d.Sub("d.csv");
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto docs = AllDocs(C());
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(ToJson(DropId(docs[0])), R"({"a": {"$date": "2020-02-29T22:29:58Z"}, )"
                                     R"("b": {"$date": "1999-03-05T01:07:00Z"}, )"
                                     R"("c": {"$date": "2021-12-31T23:59:59.123Z"}})");
  EXPECT_EQ(docs[1].Get("a").DateTime(), -1000);
  EXPECT_EQ(docs[1].Get("b").DateTime(), 977745600000);  // 2000-12-25T12:00:00Z: 12PM is noon
  EXPECT_EQ(docs[1].Get("c").DateTime(), 0);
  // A value that does not fit its layout, and a layout rockdoc cannot read.
  Spit(d.Sub("bad.csv"), "a.date(2006-01-02)\n2021-02-30\n");
  o.file = d.Sub("bad.csv");
  r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("bad.csv:2"));
  Spit(d.Sub("mst.csv"), "a.date(2006-01-02 MST)\n2021-02-03 UTC\n");
  o.file = d.Sub("mst.csv");
  r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotImplemented);
}

// date_ms(): Microsoft's custom format specifiers; date_oracle(): Oracle's
// format elements, case-insensitive, month names in any case (as TO_DATE).
TEST_F(ToolsImportTest, DateMsAndOracleColumns) {
  ScratchDir d;
  Spit(d.Sub("d.csv"),
       "a.date_ms(yyyy-MM-dd HH:mm:ss.fff),b.date_ms(M/d/yyyy h:mm tt),"
       "c.date_oracle(DD-MON-YYYY HH24:MI:SS),d.date_oracle(yyyy-mm-ddThh24:mi:ss.ff3tzh:tzm),"
       "e.date_ms(dd MMMM yy)\n"
       "2021-12-31 23:59:59.123,3/5/1999 1:07 PM,05-MAR-1999 13:07:00,"
       "2020-02-29T23:59:58.500+01:30,07 July 69\n");
  ImportOptions o;
  o.type = ExportType::kCsv;
  o.header_line = true;
  o.columns_have_types = true;
  o.file = d.Sub("d.csv");
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto docs = AllDocs(C());
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(ToJson(DropId(docs[0])), R"({"a": {"$date": "2021-12-31T23:59:59.123Z"}, )"
                                     R"("b": {"$date": "1999-03-05T13:07:00Z"}, )"
                                     R"("c": {"$date": "1999-03-05T13:07:00Z"}, )"
                                     R"("d": {"$date": "2020-02-29T22:29:58.500Z"}, )"
                                     // 1969-07-07: yy 69 is 1969, as Go reads it
                                     R"("e": {"$date": {"$numberLong": "-15379200000"}}})");
  struct Bad {
    const char* column;
    ErrorCode code;
    const char* message;
  };
  for (const Bad& bad : {Bad{"e.date_ms(dddd yyyy)", ErrorCode::kNotImplemented, "'dddd'"},
                         Bad{"e.date_oracle(YYYY-Q)", ErrorCode::kNotImplemented, "'Q'"},
                         Bad{"e.date_ms(yyyy 'at' HH)", ErrorCode::kNotImplemented, "quoted"},
                         Bad{"e.date_ms(yyyy-MM-ddXHH)", ErrorCode::kBadValue, "'X'"},
                         Bad{"e.date_ms(ss fff)", ErrorCode::kBadValue, "must follow a '.'"},
                         Bad{"e.date_oracle()", ErrorCode::kBadValue, "needs a format"}}) {
    SCOPED_TRACE(bad.column);
    Spit(d.Sub("bad.csv"), std::string(bad.column) + "\n1\n");
    o.file = d.Sub("bad.csv");
    r = RunImport(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), bad.code);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(bad.message));
  }
}

TEST_F(ToolsImportTest, BadCsvAndWrongFieldCounts) {
  ImportOptions o;
  o.type = ExportType::kCsv;
  o.file = ImportFixture("test_bad.csv");
  o.fields = {"a", "b", "c"};
  auto r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("test_bad.csv: line 2: bare \""));
  EXPECT_TRUE(AllDocs(C()).empty());
  o.file = ImportFixture("test.csv");
  o.fields = {"a", "b"};
  r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("test.csv:1: 3 fields, but 2 field names"));
  EXPECT_TRUE(AllDocs(C()).empty());
  o.fields = {};
  r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("must specify --fields"));
}

// Issue 34.2: names that would drop a column's values ("a,a" keeps the
// last, "a,a.b" the first) are refused as mongoimport refuses them, from a
// header line as from --fields, and nothing is imported.
TEST_F(ToolsImportTest, CsvFieldNamesThatWouldLoseDataAreRefused) {
  ScratchDir d;
  Spit(d.Sub("sub.csv"), "a,a.b\n1,2\n");
  Spit(d.Sub("twice.csv"), "a,a\n1,2\n");
  Spit(d.Sub("deep.csv"), "x,a.b.c,y,a.b\n1,2,3,4\n");
  Spit(d.Sub("data.csv"), "1,2\n");
  const std::pair<std::string, std::string> kCases[] = {
      {"sub.csv", "fields 'a' and 'a.b' are incompatible"},
      {"twice.csv", "fields cannot be identical: 'a' and 'a'"},
      {"deep.csv", "fields 'a.b' and 'a.b.c' are incompatible"},
  };
  for (const auto& [file, message] : kCases) {
    ImportOptions o;
    o.type = ExportType::kCsv;
    o.file = d.Sub(file);
    o.header_line = true;
    auto r = RunImport(o);
    ASSERT_FALSE(r.ok()) << file;
    EXPECT_EQ(r.status().code(), ErrorCode::kBadValue);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(message));
  }
  for (const std::vector<std::string>& fields :
       {std::vector<std::string>{"b", "b"}, std::vector<std::string>{"b.c", "b"}}) {
    ImportOptions o;
    o.type = ExportType::kCsv;
    o.file = d.Sub("data.csv");
    o.fields = fields;
    auto r = RunImport(o);
    ASSERT_FALSE(r.ok()) << fields[0];
    EXPECT_EQ(r.status().code(), ErrorCode::kBadValue);
  }
  EXPECT_TRUE(AllDocs(C()).empty());
  // Siblings and a shared prefix that is not a field are fine.
  Spit(d.Sub("fine.csv"), "a.b,a.c,ab,a-b\n1,2,3,4\n");
  ImportOptions o;
  o.type = ExportType::kCsv;
  o.file = d.Sub("fine.csv");
  o.header_line = true;
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(DocsWithoutIds(C()),
              ::testing::ElementsAre(ToJson(Json(R"({"a": {"b": 1, "c": 2}, "ab": 3, "a-b": 4})"),
                                            JsonFormat::kCanonical)));
}

// Issue 34.10: a CSV or TSV cell that is not UTF-8 is bad input, named by
// its line, and nothing is imported (it was "1 failed" and success).
TEST_F(ToolsImportTest, InvalidUtf8IsBadInputNamedByItsLine) {
  ScratchDir d;
  Spit(d.Sub("latin1.csv"), "name,n\nok,1\ncaf\xe9,2\n");
  for (ExportType type : {ExportType::kCsv, ExportType::kTsv}) {
    ImportOptions o;
    o.type = type;
    o.file = d.Sub("latin1.csv");
    o.header_line = true;
    auto r = RunImport(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kFailedToParse);
    EXPECT_THAT(std::string(r.status().message()),
                HasSubstr("latin1.csv:3: a value is not valid UTF-8"));
    EXPECT_TRUE(AllDocs(C()).empty());
  }
}

TEST_F(ToolsImportTest, DuplicateIdsCountedOrStop) {
  ImportOptions o;
  o.type = ExportType::kCsv;
  o.file = ImportFixture("test_duplicate.csv");
  o.fields = {"_id", "b", "c"};
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->imported, 4);
  EXPECT_EQ(r->failed, 1);
  EXPECT_THAT(r->failures[0], HasSubstr("test_duplicate.csv:4: DuplicateKey"));
  o.drop = true;
  o.stop_on_error = true;
  r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kDuplicateKey);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("test_duplicate.csv:4"));
  // In order: the documents before the duplicate are in, none after.
  EXPECT_EQ(AllDocs(C()).size(), 3u);
}

// --maintainInsertionOrder makes the inserts ordered: a batch stops at its
// first failure, and the import goes on from there one document at a time.
// Either way every good document is in, and the failures are reported in
// input order, across batch boundaries.
TEST_F(ToolsImportTest, MaintainInsertionOrderGoesOnAfterEachFailure) {
  ScratchDir d;
  std::string text;
  const std::vector<int> duplicates = {2, 5, 999, 1000, 1001, 2400};  // input positions
  for (int i = 0; i < 2500; ++i) {
    bool dup = std::find(duplicates.begin(), duplicates.end(), i) != duplicates.end();
    text += "{\"_id\": " + std::to_string(dup ? 0 : i) + ", \"n\": " + std::to_string(i) + "}\n";
  }
  Spit(d.Sub("o.json"), text);
  for (bool ordered : {true, false}) {
    SCOPED_TRACE(ordered);
    ImportOptions o;
    o.file = d.Sub("o.json");
    o.drop = true;
    o.maintain_insertion_order = ordered;
    auto r = RunImport(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->imported, 2500 - static_cast<int64_t>(duplicates.size()));
    ASSERT_EQ(r->failed, static_cast<int64_t>(duplicates.size()));
    for (size_t k = 0; k < duplicates.size(); ++k) {
      EXPECT_THAT(r->failures[k], HasSubstr("o.json:" + std::to_string(duplicates[k] + 1) + ": DuplicateKey"));
    }
    auto docs = AllDocs(C());
    ASSERT_EQ(docs.size(), 2500 - duplicates.size());
    EXPECT_EQ(docs[0].Get("n").Int32(), 0);  // the first _id 0 won
  }
}

TEST_F(ToolsImportTest, JsonFixtures) {
  ImportOptions o;
  o.file = ImportFixture("test_plain.json");
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->imported, 3);
  o.drop = true;
  o.file = ImportFixture("test_array.json");
  o.json_array = true;
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->imported, 10);
  EXPECT_EQ(AllDocs(C())[0].Get("a").Double(), 1.2);
  o.json_array = false;
  o.file = ImportFixture("test_bom.json");
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AllDocs(C())[1].Get("a").Int32(), 4);
  // Extended JSON v1: {"$date": <milliseconds>}.
  o.file = ImportFixture("test_plain2.json");
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(AllDocs(C())[0].Get("timestamp").DateTime(), 1409836258000);
  // mongodump's fixture: the same document as JSON and as BSON.
  o.file = Fixtures() + "/mongodump/testdata/importCollection.json";
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto bson = BsonFileDocs(Fixtures() + "/mongodump/testdata/importCollection.bson");
  ASSERT_EQ(bson.size(), 1u);
  EXPECT_EQ(DropId(AllDocs(C())[0]), bson[0]);
}

TEST_F(ToolsImportTest, BadJsonNamesTheLine) {
  ScratchDir d;
  Spit(d.Sub("bad.json"), "{\"a\": 1}\n\n{\"a\": 2}\n{\"a\": }\n");
  ImportOptions o;
  o.file = d.Sub("bad.json");
  auto r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("bad.json:4"));
  EXPECT_TRUE(AllDocs(C()).empty());
}

// JSON input is a stream of documents, as mongoimport's decoder reads it:
// several on a line, one over several lines, braces and quotes inside
// strings, and inputs many times the reader's 64 KiB buffer, so that
// documents and CSV records straddle its refills.
TEST_F(ToolsImportTest, JsonAndCsvAreReadAsStreams) {
  ScratchDir d;
  Spit(d.Sub("s.json"),
       "\xEF\xBB\xBF{\"a\": 1} {\"a\": 2}\n{\n  \"s\": \"}{][\\\"\",\n  \"d\": {\"$date\": "
       "1409836258000}\n}\n\n");
  ImportOptions o;
  o.file = d.Sub("s.json");
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto docs = AllDocs(C());
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[1].Get("a").Int32(), 2);
  EXPECT_EQ(docs[2].Get("s").String(), "}{][\"");
  EXPECT_EQ(docs[2].Get("d").DateTime(), 1409836258000);

  // 3,000 documents (~300 KiB) of strings full of JSON's structure.
  std::string lines, array = "[\n", csv = "_id,s\n";
  std::vector<std::string> strings;
  for (int i = 0; i < 3000; ++i) {
    std::string str = "x{\"" + std::string(static_cast<size_t>(i % 97), 'a') + "]}," +
                      std::to_string(i) + (i % 5 == 0 ? "\nsecond line" : "");
    strings.push_back(str);
    BsonBuilder b;
    b.AppendInt32("_id", i);
    b.AppendString("s", str);
    std::string json = ToJson(std::move(b).Build());
    lines += json + (i % 3 == 0 ? " " : "\n");
    array += (i == 0 ? "" : ",\n") + json;
    std::string quoted;
    for (char c : str) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    csv += std::to_string(i) + ",\"" + quoted + "\"\r\n";
  }
  array += "\n]\n";
  struct Input {
    std::string file;
    ExportType type;
    bool array;
  };
  Spit(d.Sub("big.json"), lines);
  Spit(d.Sub("big_array.json"), array);
  Spit(d.Sub("big.csv"), csv);
  for (const Input& in : {Input{"big.json", ExportType::kJson, false},
                          Input{"big_array.json", ExportType::kJson, true},
                          Input{"big.csv", ExportType::kCsv, false}}) {
    SCOPED_TRACE(in.file);
    ImportOptions big;
    big.file = d.Sub(in.file);
    big.type = in.type;
    big.json_array = in.array;
    big.header_line = in.type == ExportType::kCsv;
    big.drop = true;
    r = RunImport(big);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->imported, 3000);
    docs = AllDocs(C());
    ASSERT_EQ(docs.size(), 3000u);
    for (int i = 0; i < 3000; ++i) {
      ASSERT_EQ(docs[static_cast<size_t>(i)].Get("_id").Int32(), i);
      ASSERT_EQ(docs[static_cast<size_t>(i)].Get("s").String(), strings[static_cast<size_t>(i)]);
    }
  }
}

TEST_F(ToolsImportTest, MalformedJsonStreamsNameTheLineAndWriteNothing) {
  struct Case {
    const char* text;
    bool array;
    const char* error;
  };
  const Case cases[] = {
      {"{\"a\": 1}\n x", false, "bad.json:2: expected a document ('{'), found 'x'"},
      {"{\"a\": 1}\n[{\"a\": 2}]", false, "bad.json:2: expected a document ('{'), found '['"},
      {"{\"a\": 1}\n{\"a\": [1, 2}\n", false, "bad.json:2: "},
      {"{\"a\": 1}\n{\"a\": \"}", false, "bad.json:2: "},
      {"{\"a\": 1}", true, "bad.json:1: expected a JSON array ('['), found '{'"},
      {"[{\"a\": 1},\n]", true, "bad.json:2: element 2 of the array is not a document (found ']')"},
      {"[{\"a\": 1}, 7]", true, "element 2 of the array is not a document (found '7')"},
      {"[{\"a\": 1}\n{\"a\": 2}]", true, "bad.json:2: expected ',' or ']' after element 1, found '{'"},
      {"[{\"a\": 1}", true, "expected ',' or ']' after element 1, found the end of the input"},
      {"[{\"a\": 1}]\n\n]", true, "bad.json:3: text after the JSON array: ']'"},
      {"", true, "expected a JSON array ('['), found the end of the input"},
  };
  ScratchDir d;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Spit(d.Sub("bad.json"), c.text);
    ImportOptions o;
    o.file = d.Sub("bad.json");
    o.json_array = c.array;
    auto r = RunImport(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kFailedToParse);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.error));
    EXPECT_TRUE(AllDocs(C()).empty());
  }
  // Empty inputs are no documents, not errors.
  for (auto [text, array] : {std::pair{"", false}, std::pair{" \n\n", false},
                             std::pair{" [ \n ] \n", true}}) {
    Spit(d.Sub("empty.json"), text);
    ImportOptions o;
    o.file = d.Sub("empty.json");
    o.json_array = array;
    auto r = RunImport(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->imported, 0);
  }
}

// --legacy: the shell's Extended JSON v1, each form against the v2 value it
// stands for.
TEST(ToolsLegacyJson, ShellFormsBecomeTheirV2Values) {
  struct Case {
    const char* legacy;
    const char* v2;
  };
  const Case cases[] = {
      {R"({a: ObjectId("5f0f0f0f0f0f0f0f0f0f0f0f")})", R"({"a": {"$oid": "5f0f0f0f0f0f0f0f0f0f0f0f"}})"},
      {R"({a: new Date(1409836258000), b: Date(-1)})",
       R"({"a": {"$date": {"$numberLong": "1409836258000"}}, "b": {"$date": {"$numberLong": "-1"}}})"},
      {R"({a: ISODate("2020-01-02T03:04:05.006Z")})", R"({"a": {"$date": "2020-01-02T03:04:05.006Z"}})"},
      {R"({a: NumberLong(5), b: NumberLong("-9223372036854775808"), c: NumberInt('7')})",
       R"({"a": {"$numberLong": "5"}, "b": {"$numberLong": "-9223372036854775808"}, "c": 7})"},
      {R"({a: NumberDecimal("1.10")})", R"({"a": {"$numberDecimal": "1.10"}})"},
      {R"({a: Timestamp(1, 2)})", R"({"a": {"$timestamp": {"t": 1, "i": 2}}})"},
      {R"({a: BinData(0, "aGk="), b: HexData(5, "6869")})",
       R"({"a": {"$binary": {"base64": "aGk=", "subType": "00"}}, "b": {"$binary": {"base64": "aGk=", "subType": "05"}}})"},
      {R"({a: UUID("0123456789abcdef-0123456789abcdef")})",
       R"({"a": {"$binary": {"base64": "ASNFZ4mrze8BI0VniavN7w==", "subType": "04"}}})"},
      {R"({a: /x{2}[/]y/mi, b: /\//})",
       R"({"a": {"$regularExpression": {"pattern": "x{2}[/]y", "options": "im"}}, "b": {"$regularExpression": {"pattern": "\\/", "options": ""}}})"},
      {R"({a: MinKey, b: MaxKey(), c: undefined, d: NaN, e: -Infinity, f: Infinity})",
       R"({"a": {"$minKey": 1}, "b": {"$maxKey": 1}, "c": {"$undefined": true}, "d": {"$numberDouble": "NaN"}, "e": {"$numberDouble": "-Infinity"}, "f": {"$numberDouble": "Infinity"}})"},
      {R"({'single': 'it\'s "q" {', $k_2: [1, .5, -.5, +3, true, null], u: '\u00e9\ud83d\ude00'})",
       "{\"single\": \"it's \\\"q\\\" {\", \"$k_2\": [1, 0.5, -0.5, 3, true, null], \"u\": \"\u00e9\U0001F600\"}"},
      {R"({r: DBRef("c", ObjectId("5f0f0f0f0f0f0f0f0f0f0f0f"))})",
       R"({"r": {"$ref": "c", "$id": {"$oid": "5f0f0f0f0f0f0f0f0f0f0f0f"}}})"},
      {R"({e: '\x41\v\0\q'})", "{\"e\": \"A\\u000b\\u0000q\"}"},
      {R"({"$date-like": {"$date": 5}, s: Symbol("x")})", R"({"$date-like": {"$date": {"$numberLong": "5"}}, "s": {"$symbol": "x"}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.legacy);
    auto v2 = LegacyJsonToV2(c.legacy);
    ASSERT_TRUE(v2.ok()) << v2.status();
    auto got = FromJson(UpgradeLegacyJson(*v2));
    ASSERT_TRUE(got.ok()) << got.status() << "\n" << *v2;
    auto want = FromJson(c.v2);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(ToJson(*got, JsonFormat::kCanonical), ToJson(*want, JsonFormat::kCanonical));
  }
  for (const char* bad : {"{a: Code(\"x\")}", "{a: ObjectId()}", "{a: NumberLong(1.5)}", "{a: 'open}",
                          "{a: foo}", "{a: /x}", "{a: 1,}", "{a: 1} x", "{a: HexData(0, \"zz\")}",
                          "{a: '\\ud800'}", "{a: BinData(256, \"\")}", "{a: NumberLong(5,)}",
                          "{a: '\\x4'}"}) {
    auto v2 = LegacyJsonToV2(bad);
    EXPECT_FALSE(v2.ok()) << bad << " -> " << *v2;
    if (!v2.ok()) {
      EXPECT_THAT(std::string(v2.status().message()), HasSubstr("legacy JSON at offset")) << bad;
    }
  }
}

TEST_F(ToolsImportTest, LegacyImport) {
  ScratchDir d;
  Spit(d.Sub("l.json"),
       "{_id: 1, when: ISODate('2020-01-02T03:04:05Z'), s: '}{'}\n"
       "{_id: NumberLong(2), oid: ObjectId(\"5f0f0f0f0f0f0f0f0f0f0f0f\"),\n re: /a}b/i}\n");
  ImportOptions o;
  o.file = d.Sub("l.json");
  auto r = RunImport(o);
  ASSERT_FALSE(r.ok());  // not without --legacy
  EXPECT_EQ(r.status().code(), ErrorCode::kFailedToParse);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("l.json:1"));
  o.legacy = true;
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto docs = AllDocs(C());
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(ToJson(docs[0]), R"({"_id": 1, "when": {"$date": "2020-01-02T03:04:05Z"}, "s": "}{"})");
  EXPECT_EQ(docs[1].Get("_id").Int64(), 2);
  EXPECT_EQ(docs[1].Get("re").Regex().pattern, "a}b");
  Spit(d.Sub("bad.json"), "{_id: 1}\n\n{_id: Code('x')}\n");
  o.file = d.Sub("bad.json");
  o.drop = true;
  r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("bad.json:3: legacy JSON at offset"));
  EXPECT_EQ(AllDocs(C()).size(), 2u);  // nothing written, the drop included
  o.type = ExportType::kCsv;
  o.fields = {"a"};
  EXPECT_THAT(std::string(RunImport(o).status().message()), HasSubstr("--legacy applies to JSON"));
}

TEST_F(ToolsImportTest, UpsertMergeDelete) {
  ScratchDir d;
  ASSERT_TRUE(C().InsertMany(test::JsonArray(
      R"([{"_id": 1, "k": "a", "x": 1, "y": 1}, {"_id": 2, "k": "b", "x": 2, "y": 2}])")).ok());
  Spit(d.Sub("u.json"), "{\"k\": \"a\", \"x\": 10}\n{\"k\": \"c\", \"x\": 30}\n");
  ImportOptions o;
  o.file = d.Sub("u.json");
  o.mode = ImportMode::kMerge;
  o.upsert_fields = {"k"};
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto docs = AllDocs(C());
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(ToJson(docs[0]), R"({"_id": 1, "k": "a", "x": 10, "y": 1})");
  o.mode = ImportMode::kUpsert;
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToJson(AllDocs(C())[0]), R"({"_id": 1, "k": "a", "x": 10})");
  EXPECT_EQ(AllDocs(C()).size(), 3u);
  o.mode = ImportMode::kDelete;
  r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  docs = AllDocs(C());
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].Get("_id").Int32(), 2);
  o.mode = ImportMode::kInsert;
  r = RunImport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--upsertFields"));
}

TEST_F(ToolsImportTest, ExportImportCanonicalValueForValue) {
  Collection src = Coll("e", "src");
  std::vector<Document> docs;
  for (const Document& d : CorpusDocuments(/*json_lossless=*/true)) {
    if (src.InsertOne(d).ok()) docs.push_back(d);
  }
  test::RandomDocuments gen(7);
  std::vector<Document> batch;
  for (int i = 0; i < 300; ++i) batch.push_back(gen.Next());
  ASSERT_TRUE(src.InsertMany(batch).ok());
  for (bool array : {false, true}) {
    for (bool pretty : {false, true}) {
      ExportOptions e;
      e.db = "e";
      e.collection = "src";
      e.json_format = JsonFormat::kCanonical;
      e.json_array = array;
      e.pretty = pretty;
      e.out = dir_.Sub("out.json");
      auto n = Export(*client_, e);
      ASSERT_TRUE(n.ok()) << n.status();
      // Pretty JSON lines span lines: mongoimport reads a stream of
      // documents, not lines, and so does Import.
      ImportOptions o;
      o.db = "e";
      o.collection = "dst";
      o.drop = true;
      o.file = e.out;
      o.json_array = array;
      auto r = RunImport(o);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->imported, *n);
      auto want = AllDocs(src);
      auto got = AllDocs(Coll("e", "dst"));
      ASSERT_EQ(want.size(), got.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(want[i], got[i]) << array << pretty << "\n" << ToJson(want[i], JsonFormat::kCanonical)
                                   << "\n" << ToJson(got[i], JsonFormat::kCanonical);
      }
    }
  }
}

TEST_F(ToolsImportTest, ExportFormats) {
  ASSERT_TRUE(C().InsertMany(test::JsonArray(
      R"([{"_id": 1, "s": "a,b", "n": 1.5, "d": {"$date": "2020-01-02T03:04:05Z"}, "o": {"x": [1]}},
          {"_id": 2, "s": "q\"t", "n": {"$numberLong": "7"}}])")).ok());
  ExportOptions e;
  e.db = "i";
  e.collection = "c";
  e.out = dir_.Sub("x.csv");
  e.type = ExportType::kCsv;
  e.fields = {"_id", "s", "n", "d", "o.x", "missing"};
  ASSERT_TRUE(Export(*client_, e).ok());
  EXPECT_EQ(Slurp(e.out),
            "_id,s,n,d,o.x,missing\n"
            "1,\"a,b\",1.5,2020-01-02T03:04:05.000Z,[1],\n"
            "2,\"q\"\"t\",7,,,\n");
  e.type = ExportType::kJson;
  e.fields = {"s"};
  e.query = Json(R"({"_id": 2})");
  ASSERT_TRUE(Export(*client_, e).ok());
  EXPECT_EQ(Slurp(e.out), "{\"_id\":2,\"s\":\"q\\\"t\"}\n");
  e.fields = {};
  e.query = Document();
  e.sort = Json(R"({"_id": -1})");
  e.limit = 1;
  e.pretty = true;
  ASSERT_TRUE(Export(*client_, e).ok());
  EXPECT_EQ(Slurp(e.out), "{\n\t\"_id\": 2,\n\t\"s\": \"q\\\"t\",\n\t\"n\": 7\n}\n");
  e.type = ExportType::kTsv;
  auto bad = Export(*client_, e);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("invalid output type 'tsv'"));
}

// Issue 33.17: a Decimal128 goes to CSV as its plain string, as mongoexport
// writes it ({"$numberDecimal": ...} came back as that text), and a
// `name.decimal()` column (--columnsHaveTypes) brings back the exact value.
TEST_F(ToolsImportTest, Decimal128RoundTripsThroughCsvAsATypedColumn) {
  ASSERT_TRUE(C().InsertOne(Json(R"({"_id": 1, "price": {"$numberDecimal": "1.10"}})")).ok());
  ExportOptions e;
  e.db = "i";
  e.collection = "c";
  e.out = dir_.Sub("d.csv");
  e.type = ExportType::kCsv;
  e.fields = {"_id", "price"};
  e.no_header_line = true;
  ASSERT_TRUE(Export(*client_, e).ok());
  EXPECT_EQ(Slurp(e.out), "1,1.10\n");
  ImportOptions o;
  o.type = ExportType::kCsv;
  o.file = e.out;
  o.collection = "back";
  o.columns_have_types = true;
  o.fields = {"_id.int32()", "price.decimal()"};
  auto r = RunImport(o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto docs = AllDocs(Coll("i", "back"));
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0], Json(R"({"_id": 1, "price": {"$numberDecimal": "1.10"}})"));
}

TEST(ToolsMain, ExportAndImportPrograms) {
  ScratchDir dir;
  std::string err;
  ASSERT_EQ(RunTool(ImportMain, {"rockdoc-import", "--dbpath", dir.Sub("db"), "--type=csv", "--headerline",
                             "--db", "x", ImportFixture("test.csv")},
                &err),
            0)
      << err;
  EXPECT_THAT(err, HasSubstr("2 document(s) imported successfully. 0 document(s) failed"));
  ASSERT_EQ(RunTool(ExportMain, {"rockdoc-export", "--dbpath", dir.Sub("db"), "-d", "x", "-c", "test",
                             "--type", "csv", "--fields", "1,2", "--out", dir.Sub("o.csv"),
                             "--sort", R"({"1": 1})"},
                &err),
            0)
      << err;
  EXPECT_EQ(Slurp(dir.Sub("o.csv")), "1,2\n3,5.4\n5,6\n");
  // --fieldFile: one name per line; "$" is not a field name.
  ASSERT_EQ(RunTool(ImportMain, {"rockdoc-import", "--dbpath", dir.Sub("db"), "--type=csv", "-d", "x",
                                 "-c", "ff", "--fieldFile", ImportFixture("test_fields_valid.txt"),
                                 "--file", ImportFixture("test.csv")},
                    &err),
            0)
      << err;
  EXPECT_EQ(RunTool(ImportMain, {"rockdoc-import", "--dbpath", dir.Sub("db"), "--type=csv", "-d", "x",
                                 "-c", "bad", "--fieldFile", ImportFixture("test_fields_invalid.txt"),
                                 "--file", ImportFixture("test.csv")},
                    &err),
            1);
  EXPECT_THAT(err, HasSubstr("invalid field name '$'"));
  ASSERT_EQ(RunTool(ExportMain, {"rockdoc-export", "--dbpath", dir.Sub("db"), "-d", "x", "-c", "ff",
                                 "--type=csv", "--fields=a,c", "--noHeaderLine", "--sort={\"a\": -1}",
                                 "--limit=1", "--out", dir.Sub("ff.csv")},
                    &err),
            0)
      << err;
  EXPECT_EQ(Slurp(dir.Sub("ff.csv")), "5,6\n");
  EXPECT_EQ(RunTool(ImportMain, {"rockdoc-import", "--dbpath", dir.Sub("db"), "--useArrayIndexFields"},
                    &err),
            3);
  EXPECT_THAT(err, HasSubstr("--useArrayIndexFields is not supported by rockdoc"));
  Spit(dir.Sub("legacy.json"), "{_id: NumberLong(7), when: new Date(0)}\n");
  ASSERT_EQ(RunTool(ImportMain, {"rockdoc-import", "--dbpath", dir.Sub("db"), "-d", "x", "-c", "legacy",
                                 "--legacy", "--file", dir.Sub("legacy.json")},
                    &err),
            0)
      << err;
  {
    auto client = OpenAt(dir.Sub("db"));
    EXPECT_EQ(AllDocs(client->GetDatabase("x").GetCollection("legacy")),
              test::JsonArray(R"([{"_id": {"$numberLong": "7"}, "when": {"$date": "1970-01-01T00:00:00Z"}}])"));
  }
  EXPECT_EQ(RunTool(ExportMain, {"rockdoc-export", "--jsonFormat=loose"}, &err), 3);
  EXPECT_THAT(err, HasSubstr("choose relaxed or canonical"));
}

}  // namespace
}  // namespace rockdoc::tools

namespace rockdoc::tools {
namespace {

// Client::Checkpoint: a hot, openable copy while a writer goes on.
TEST(ClientCheckpoint, HotCopyOpensWithItsDataAndIndexes) {
  ScratchDir dir;
  auto client = OpenAt(dir.Sub("db"));
  Collection c = client->GetDatabase("b").GetCollection("c");
  ASSERT_TRUE(c.CreateIndex(Json(R"({"n": 1})")).ok());
  std::vector<Document> docs;
  for (int i = 0; i < 1000; ++i) docs.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"n\": " + std::to_string(i % 7) + "}"));
  ASSERT_TRUE(c.InsertMany(docs).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 1000; !stop.load(); ++i) {
      if (c.InsertOne(Json("{\"_id\": " + std::to_string(i) + ", \"n\": 1}")).ok()) ++written;
    }
  });
  while (written.load() < 50) std::this_thread::yield();
  Status st = client->Checkpoint(dir.Sub("copy"));
  int at_checkpoint_end = written.load();
  stop = true;
  writer.join();
  ASSERT_TRUE(st.ok()) << st;
  // The directory exists now: a second checkpoint there is refused.
  Status again = client->Checkpoint(dir.Sub("copy"));
  EXPECT_EQ(again.code(), ErrorCode::kIllegalOperation);
  EXPECT_THAT(std::string(again.message()), HasSubstr("already exists"));

  auto copy = OpenAt(dir.Sub("copy"));
  ASSERT_NE(copy, nullptr);
  Collection cc = copy->GetDatabase("b").GetCollection("c");
  auto n = cc.CountDocuments(Document());
  ASSERT_TRUE(n.ok());
  EXPECT_GE(*n, 1050);
  EXPECT_LE(*n, 1000 + at_checkpoint_end + 1);
  // A prefix of the writer's inserts: ids 0..n-1, no gaps.
  auto last = cc.FindById(Value::FromElement(Json("{\"x\": " + std::to_string(*n - 1) + "}").Get("x")).element());
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(last->has_value());
  EXPECT_THAT(IndexNames(cc), ::testing::ElementsAre("_id_", "n_1"));
  auto v = cc.Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
  // The copy is independent of the original.
  ASSERT_TRUE(cc.InsertOne(Json(R"({"_id": "only-in-copy"})")).ok());
  EXPECT_FALSE(c.FindById(Json(R"({"x": "only-in-copy"})").Get("x")).value().has_value());
}

}  // namespace
}  // namespace rockdoc::tools

namespace rockdoc::tools {
namespace {

TEST(ToolsProgress, LinesOnlyWhenAsked) {
  ProgressOptions quiet;
  Progress none(quiet, "t.c", 100);
  none.Add(1, 50);
  EXPECT_THAT(none.Line(), ::testing::StartsWith("[############............]  t.c  50B/100B (50.0%)  1 docs"));

  ScratchDir dir;
  auto client = OpenAt(dir.Sub("db"));
  ASSERT_TRUE(client->GetDatabase("p").GetCollection("c").InsertMany(
      test::JsonArray(R"([{"_id": 1}, {"_id": 2}, {"_id": 3}])")).ok());
  std::ostringstream log;
  DumpOptions d;
  d.out = dir.Sub("dump");
  d.log = &log;
  ASSERT_TRUE(Dump(*client, d).ok());
  EXPECT_THAT(log.str(), ::testing::Not(HasSubstr(" docs ")));  // off by default
  std::ostringstream shown;
  d.progress.out = &shown;
  d.progress.interval = std::chrono::milliseconds(0);
  ASSERT_TRUE(Dump(*client, d).ok());
  EXPECT_THAT(shown.str(), HasSubstr("p.c"));
  EXPECT_THAT(shown.str(), HasSubstr("3 docs"));
  std::ostringstream restored;
  RestoreOptions r;
  r.dir = dir.Sub("dump");
  r.drop = true;
  r.progress.out = &restored;
  r.progress.interval = std::chrono::milliseconds(0);
  ASSERT_TRUE(Restore(*client, r).ok());
  EXPECT_THAT(restored.str(), HasSubstr("(100.0%)  3 docs"));
}

}  // namespace
}  // namespace rockdoc::tools

namespace rockdoc::tools {
namespace {

// mongodump --out - and mongorestore --dir -: one collection's BSON through
// stdout and stdin (redirected here to files).
TEST(ToolsStdio, DumpToStdoutRestoreFromStdin) {
  ScratchDir dir;
  auto client = OpenAt(dir.Sub("db"));
  auto docs = test::JsonArray(R"([{"_id": 1, "a": "x"}, {"_id": 2, "a": "y"}])");
  ASSERT_TRUE(client->GetDatabase("s").GetCollection("c").InsertMany(docs).ok());
  DumpOptions d;
  d.out = "-";
  auto whole = Dump(*client, d);
  ASSERT_FALSE(whole.ok());
  EXPECT_THAT(std::string(whole.status().message()), HasSubstr("single collection to stdout"));
  d.ns.db = "s";
  d.ns.collection = "c";
  std::fflush(stdout);
  int saved_out = dup(STDOUT_FILENO);
  ASSERT_TRUE(std::freopen(dir.Sub("out.bson").c_str(), "wb", stdout) != nullptr);
  auto r = Dump(*client, d);
  std::fflush(stdout);
  dup2(saved_out, STDOUT_FILENO);
  close(saved_out);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(BsonFileDocs(dir.Sub("out.bson")), docs);

  RestoreOptions o;
  o.dir = "-";
  o.ns.db = "s2";
  o.ns.collection = "c2";
  int saved_in = dup(STDIN_FILENO);
  ASSERT_TRUE(std::freopen(dir.Sub("out.bson").c_str(), "rb", stdin) != nullptr);
  auto restored = Restore(*client, o);
  dup2(saved_in, STDIN_FILENO);
  close(saved_in);
  clearerr(stdin);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(AllDocs(client->GetDatabase("s2").GetCollection("c2")), docs);
}

}  // namespace
}  // namespace rockdoc::tools

namespace rockdoc::tools {
namespace {

// With nothing in flight, RocksDB leaves the (empty) live log out of a
// checkpoint; the copy must open all the same.
TEST(ClientCheckpoint, QuietDatabaseCopyOpens) {
  ScratchDir dir;
  {
    auto client = OpenAt(dir.Sub("db"));
    ASSERT_TRUE(client->Checkpoint(dir.Sub("empty-copy")).ok());
    ASSERT_TRUE(client->GetDatabase("q").GetCollection("c").InsertOne(Json(R"({"_id": 1})")).ok());
  }
  auto client = OpenAt(dir.Sub("db"));  // reopened: everything flushed, an empty live log
  ASSERT_TRUE(client->Checkpoint(dir.Sub("copy")).ok());
  ASSERT_TRUE(client->Checkpoint(dir.Sub("copy2")).ok());
  auto empty = OpenAt(dir.Sub("empty-copy"));
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(empty->ListDatabaseNames()->empty());
  for (const char* name : {"copy", "copy2"}) {
    auto copy = OpenAt(dir.Sub(name));
    ASSERT_NE(copy, nullptr) << name;
    EXPECT_EQ(AllDocs(copy->GetDatabase("q").GetCollection("c")).size(), 1u) << name;
  }
}

}  // namespace
}  // namespace rockdoc::tools

namespace rockdoc::tools {
namespace {

// Issue 33.13: --help describes, one line each, every flag a program takes,
// and lists none that it would then refuse (mongo-tools' flags that rockdoc
// does not implement); --help and --version print on stdout and exit 0.
TEST(ToolsMain, HelpListsEveryFlagItTakesAndNoneItRefuses) {
  using MainFn = int (*)(int, const char* const*, std::ostream&);
  auto advise = [](int argc, const char* const* argv, std::ostream& err) {
    std::ostringstream out;
    return AdviseMain(argc, argv, out, err);
  };
  for (auto [program, fn] : {std::pair<std::string, MainFn>{"rockdoc-dump", DumpMain},
                             {"rockdoc-restore", RestoreMain},
                             {"rockdoc-export", ExportMain},
                             {"rockdoc-import", ImportMain},
                             {"rockdoc-advise", +advise}}) {
    std::string err;
    testing::internal::CaptureStdout();
    ASSERT_EQ(RunTool(fn, {program, "--version"}, &err), 0);
    EXPECT_EQ(testing::internal::GetCapturedStdout(),
              program + " version: " + rockdoc_version() + "\n");
    testing::internal::CaptureStdout();
    ASSERT_EQ(RunTool(fn, {program, "--help"}, &err), 0);
    const std::string help = testing::internal::GetCapturedStdout();
    EXPECT_EQ(err, "");
    EXPECT_THAT(help, StartsWith("Usage: " + program + " "));
    std::istringstream lines(help);
    int flags = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("  ", 0) != 0 || line[line.find_first_not_of(' ')] != '-') continue;
      const size_t at = line.find("--");
      const std::string word = line.substr(at, line.find_first_of(" [", at) - at);
      // Each line says what the flag does, after two spaces.
      EXPECT_NE(line.find("  ", at), std::string::npos) << line;
      if (word == "--help" || word == "--version" || word == "--dbpath") continue;
      ++flags;
      // The empty --dbpath keeps every run from opening anything.
      int rc = RunTool(fn, {program, "--dbpath=", word}, &err);
      if (err.find("expected argument") != std::string::npos) {
        rc = RunTool(fn, {program, "--dbpath=", word + "=1"}, &err);
      }
      EXPECT_THAT(err, ::testing::Not(HasSubstr("unknown option"))) << program << " " << word;
      EXPECT_THAT(err, ::testing::Not(HasSubstr("not supported"))) << program << " " << word;
      EXPECT_NE(rc, 0) << program << " " << word << ": " << err;  // decoded, then stopped
    }
    EXPECT_GT(flags, 5) << program;
    for (const char* refused : {"--host", "--uri", "--verbose", "--oplog", "--writeConcern",
                                "--numInsertionWorkers", "--forceTableScan"}) {
      EXPECT_THAT(help, ::testing::Not(HasSubstr(std::string(refused) + " "))) << program;
      EXPECT_THAT(help, ::testing::Not(HasSubstr(std::string(refused) + "\n"))) << program;
    }
  }
}

}  // namespace
}  // namespace rockdoc::tools

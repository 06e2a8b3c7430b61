// store/ on its own: the write path (store/write_ops.h), the write loop
// (store/write_batcher.h), index builds (store/index_build.h) and index
// validation, driven on a bare engine with its catalog attached. What is
// written is read back raw from the data key space and compared with a
// brute-force reference: the entries each document's keys call for
// (index/key_generator.h), computed document by document.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "catalog/catalog.h"
#include "common/deadline.h"
#include "engine_test_util.h"
#include "index/index_descriptor.h"
#include "index/key_generator.h"
#include "keystring/keystring.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/kv.h"
#include "store/collection_lock.h"
#include "store/index_build.h"
#include "store/write_batcher.h"
#include "store/write_ops.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using internal::CollectionLock;
using internal::CollectionMeta;
using internal::Engine;
using internal::IndexDescriptor;
using internal::KvTransaction;
using internal::MultikeyPaths;
using internal::ReadView;
using internal::WriteDelta;
using test::Json;
using ::testing::HasSubstr;

using Raw = std::vector<std::pair<std::string, std::string>>;

class StoreUnitTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(ClientOptions{}); }
  void TearDown() override { Close(); }

  void Open(const ClientOptions& options) {
    auto e = test::OpenEngineWithCatalog(dir_.Sub("db"), options);
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = *e;
  }
  void Close() {
    if (engine_ == nullptr) return;
    EXPECT_TRUE(engine_->Close().ok());
    engine_.reset();
  }
  internal::Catalog& catalog() { return internal::CatalogOf(*engine_); }

  std::shared_ptr<CollectionMeta> Collection(const std::string& name) {
    auto meta = catalog().GetOrCreate("db", name);
    EXPECT_TRUE(meta.ok()) << meta.status();
    return *meta;
  }

  // Builds and publishes an index as createIndexes does, under the
  // collection's exclusive lock.
  Status AddIndex(CollectionMeta* meta, std::string_view pattern, bool unique = false) {
    CollectionLock guard(catalog().Find("db", meta->name), CollectionLock::Mode::kExclusive);
    ROCKDOC_ASSIGN_OR_RETURN(uint32_t id, catalog().AllocateId());
    IndexOptions options;
    options.unique = unique;
    ROCKDOC_ASSIGN_OR_RETURN(auto index, IndexDescriptor::Create(id, Json(pattern), options));
    ROCKDOC_RETURN_IF_ERROR(internal::BuildIndexEntries(*engine_, *meta, index.get(), {}));
    return internal::PublishIndexSet(*engine_, meta, meta->indexes()->With(index));
  }

  // Inserts `docs` in one transaction of our own, with the count.
  Status InsertAll(const CollectionMeta& meta, const std::vector<Document>& docs) {
    auto txn = engine_->Begin();
    WriteDelta delta;
    for (const Document& d : docs) {
      ROCKDOC_RETURN_IF_ERROR(internal::InsertDocument(*engine_, txn.get(), meta, d, &delta));
    }
    return internal::CommitWithCount(txn.get(), meta, &delta.count);
  }

  // Every data key in [lower, upper), with its value.
  Raw Scan(const std::string& lower, const std::string& upper) {
    Raw out;
    auto it = ReadView(engine_.get(), nullptr).NewIterator(lower, upper);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out.emplace_back(std::string(it->key()), std::string(it->value()));
    }
    EXPECT_TRUE(it->status().ok());
    return out;
  }
  Raw ScanAll() { return Scan(internal::PrefixKey(0), std::string(5, '\xff')); }
  Raw ScanId(uint32_t id) { return Scan(internal::PrefixKey(id), internal::PrefixKey(id + 1)); }
  // An index's entries without their prefix (comparable across indexes).
  Raw EntriesOf(const IndexDescriptor& index) {
    Raw out = ScanId(index.id());
    for (auto& [k, v] : out) k.erase(0, 4);
    return out;
  }
  int64_t Count(const CollectionMeta& meta) {
    auto n = catalog().ReadCount(meta.id);
    EXPECT_TRUE(n.ok());
    return n.ok() ? *n : -1;
  }

  // The reference: the entries `docs` call for in `index`, each document's
  // keys generated on its own, sorted as the key space sorts them.
  static Raw ExpectedEntries(const IndexDescriptor& index, const std::vector<Document>& docs,
                             MultikeyPaths* paths = nullptr) {
    Raw out;
    if (paths != nullptr) *paths = MultikeyPaths(index.num_fields());
    for (const Document& d : docs) {
      std::vector<internal::IndexKey> keys;
      MultikeyPaths doc_paths;
      EXPECT_TRUE(internal::GenerateIndexKeys(index, d, &keys, &doc_paths).ok());
      if (paths != nullptr) {
        for (size_t f = 0; f < doc_paths.size(); ++f) {
          (*paths)[f].insert(doc_paths[f].begin(), doc_paths[f].end());
        }
      }
      std::string id_key = keystring::EncodeValue(d.Get("_id"));
      for (const internal::IndexKey& k : keys) {
        out.emplace_back(internal::IndexEntryKey(index, k.bytes, id_key).substr(4),
                         internal::IndexEntryValue(index, id_key, k.type_bits));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Random documents {_id: i, a: <any value, arrays included>, b: <a scalar>,
  // x: {y: ...}}: a and x.y may be arrays, b never (so {a, b} indexes them).
  static std::vector<Document> RandomDocs(uint64_t seed, int n, int first_id = 0) {
    test::RandomDocuments gen(seed, 2, 3);
    std::vector<Document> docs;
    for (int i = 0; i < n; ++i) {
      BsonBuilder b;
      b.AppendInt32("_id", first_id + i);
      if (gen.Uniform(0, 5) != 0) gen.AppendValue(&b, "a", 0);
      b.AppendInt32("b", gen.Uniform(-3, 3));
      b.OpenDocument("x");
      if (gen.Uniform(0, 3) != 0) gen.AppendValue(&b, "y", 1);
      b.Close();
      docs.push_back(std::move(b).Build());
    }
    return docs;
  }

  test::ScratchDir dir_;
  std::shared_ptr<Engine> engine_;
};

TEST_F(StoreUnitTest, InsertWritesRecordCountAndEntriesInOneTransaction) {
  auto meta = Collection("c");
  ASSERT_TRUE(AddIndex(meta.get(), R"({"a": 1})").ok());
  ASSERT_TRUE(AddIndex(meta.get(), R"({"b": 1, "_id": -1})", /*unique=*/true).ok());
  ASSERT_TRUE(AddIndex(meta.get(), R"({"x.y": -1})").ok());
  std::vector<Document> docs = RandomDocs(1, 150);
  const Raw before = ScanAll();

  auto txn = engine_->Begin();
  WriteDelta delta;
  for (const Document& d : docs) {
    Status s = internal::InsertDocument(*engine_, txn.get(), *meta, d, &delta);
    ASSERT_TRUE(s.ok()) << s << " " << ToJson(d);
  }
  EXPECT_EQ(delta.count, 150);
  ASSERT_TRUE(internal::AddToCount(txn.get(), *meta, &delta.count).ok());
  EXPECT_EQ(delta.count, 0);
  // Nothing is visible outside the transaction before it commits: not the
  // records, not the entries, not the count.
  EXPECT_EQ(ScanAll(), before);
  EXPECT_EQ(Count(*meta), 0);
  // Inside it, every record reads back as inserted.
  for (const Document& d : docs) {
    std::string value;
    bool found = false;
    ASSERT_TRUE(txn->Get(internal::DocumentKey(*meta, d.Get("_id")), &value, &found).ok());
    ASSERT_TRUE(found);
    EXPECT_EQ(value, d.bytes());
  }
  ASSERT_TRUE(txn->Commit().ok());

  EXPECT_EQ(Count(*meta), 150);
  Raw records = ScanId(meta->id);
  ASSERT_EQ(records.size(), docs.size());
  std::map<std::string, std::string> want;
  for (const Document& d : docs) want[internal::DocumentKey(*meta, d.Get("_id"))] = d.bytes();
  EXPECT_EQ(records, Raw(want.begin(), want.end()));
  int64_t entries = 0;
  for (const auto& index : *meta->indexes()) {
    MultikeyPaths paths;
    Raw expected = ExpectedEntries(*index, docs, &paths);
    EXPECT_EQ(EntriesOf(*index), expected) << index->name();
    EXPECT_EQ(index->multikey_paths(), paths) << index->name();
    entries += static_cast<int64_t>(expected.size());
  }
  // Nothing else was written anywhere.
  EXPECT_EQ(static_cast<int64_t>(ScanAll().size()),
            static_cast<int64_t>(before.size() + docs.size()) + entries);

  // A transaction rolled back leaves nothing, count included.
  const Raw committed = ScanAll();
  txn = engine_->Begin();
  WriteDelta more;
  for (const Document& d : RandomDocs(2, 20, 1000)) {
    ASSERT_TRUE(internal::InsertDocument(*engine_, txn.get(), *meta, d, &more).ok());
  }
  ASSERT_TRUE(internal::AddToCount(txn.get(), *meta, &more.count).ok());
  ASSERT_TRUE(txn->Rollback().ok());
  EXPECT_EQ(ScanAll(), committed);
  EXPECT_EQ(Count(*meta), 150);
}

TEST_F(StoreUnitTest, AUniqueViolationWritesNothing) {
  auto meta = Collection("c");
  // The standard index first: an insert that wrote as it went would have
  // written its entry before meeting the duplicate.
  ASSERT_TRUE(AddIndex(meta.get(), R"({"a": 1})").ok());
  ASSERT_TRUE(AddIndex(meta.get(), R"({"u": 1})", /*unique=*/true).ok());
  ASSERT_TRUE(InsertAll(*meta, {Json(R"({"_id": 1, "a": 1, "u": 5})")}).ok());
  const Raw before = ScanAll();

  const char* const dups[] = {
      R"({"_id": 2, "a": 2, "u": 5})",
      R"({"_id": 3, "a": [3, 4], "u": [7, 5]})",  // 7 is new, 5 is not
      R"({"_id": 4, "a": 4, "u": 5.0})",         // the same value as a double
      R"({"_id": 1, "a": 9, "u": 9})",           // a duplicate _id
  };
  for (const char* json : dups) {
    auto txn = engine_->Begin();
    WriteDelta delta;
    const size_t empty = txn->write_bytes();  // a write batch's header
    Status s = internal::InsertDocument(*engine_, txn.get(), *meta, Json(json), &delta);
    EXPECT_EQ(s.code(), ErrorCode::kDuplicateKey) << json;
    EXPECT_EQ(txn->write_bytes(), empty) << json;
    EXPECT_EQ(delta.count, 0) << json;
    // Committing what the failed insert left changes nothing.
    ASSERT_TRUE(internal::CommitWithCount(txn.get(), *meta, &delta.count).ok());
    EXPECT_EQ(ScanAll(), before) << json;
  }
  EXPECT_EQ(ScanAll(), before);
  EXPECT_FALSE(meta->indexes()->FindByName("a_1")->is_multikey());
  {
    auto txn = engine_->Begin();
    WriteDelta delta;
    EXPECT_THAT(internal::InsertDocument(*engine_, txn.get(), *meta, Json(R"({"_id": 2, "u": 5})"),
                                         &delta)
                    .message(),
                HasSubstr("E11000 duplicate key error collection: db.c index: u_1 dup key: "
                          "{ u: 5 }"));
  }

  // Through the write loop: the failed document is rolled back to its
  // savepoint, the others of the batch commit.
  internal::Deadline none;
  internal::WriteBatcher batch(*engine_, *meta, none);
  auto insert = [&](std::string_view json) {
    Document d = Json(json);
    return batch.Apply([this, d, m = meta.get()](KvTransaction* txn,
                                                 WriteDelta* delta) -> StatusOr<size_t> {
      ROCKDOC_RETURN_IF_ERROR(internal::InsertDocument(*engine_, txn, *m, d, delta));
      return d.size();
    });
  };
  EXPECT_TRUE(insert(R"({"_id": 10, "a": 10, "u": 10})").ok());
  EXPECT_EQ(insert(R"({"_id": 11, "a": 11, "u": [11, 10]})").code(), ErrorCode::kDuplicateKey);
  EXPECT_TRUE(insert(R"({"_id": 12, "a": 12, "u": 12})").ok());
  ASSERT_TRUE(batch.Commit().ok());
  std::vector<Document> docs = {Json(R"({"_id": 1, "a": 1, "u": 5})"),
                                Json(R"({"_id": 10, "a": 10, "u": 10})"),
                                Json(R"({"_id": 12, "a": 12, "u": 12})")};
  EXPECT_EQ(ScanId(meta->id).size(), 3u);
  EXPECT_EQ(Count(*meta), 3);
  for (const auto& index : *meta->indexes()) {
    EXPECT_EQ(EntriesOf(*index), ExpectedEntries(*index, docs)) << index->name();
  }
}

TEST_F(StoreUnitTest, IndexBuildGivesTheEntriesOfInserts) {
  // Twice: entries sorted in memory, and in spilled runs (a budget of a few
  // entries), each against indexes that existed before the inserts.
  for (int64_t budget : {int64_t{200} << 20, int64_t{2048}}) {
    SCOPED_TRACE("build memory " + std::to_string(budget));
    Close();
    ClientOptions options;
    options.max_index_build_memory_bytes = budget;
    Open(options);
    const std::string suffix = std::to_string(budget);
    auto built = Collection("built" + suffix);
    auto inserted = Collection("inserted" + suffix);
    const char* const patterns[] = {R"({"a": 1})", R"({"a": -1, "b": 1})", R"({"x.y": 1})",
                                    R"({"b": 1, "_id": 1})"};
    for (const char* p : patterns) ASSERT_TRUE(AddIndex(inserted.get(), p).ok()) << p;
    std::vector<Document> docs = RandomDocs(budget, 400);
    ASSERT_TRUE(InsertAll(*built, docs).ok());
    ASSERT_TRUE(InsertAll(*inserted, docs).ok());
    for (const char* p : patterns) ASSERT_TRUE(AddIndex(built.get(), p).ok()) << p;

    ASSERT_EQ(built->indexes()->size(), std::size(patterns));
    for (size_t i = 0; i < std::size(patterns); ++i) {
      const IndexDescriptor& b = *built->indexes()->all()[i];
      const IndexDescriptor& n = *inserted->indexes()->all()[i];
      ASSERT_EQ(b.name(), n.name());
      MultikeyPaths paths;
      Raw expected = ExpectedEntries(b, docs, &paths);
      Raw from_build = EntriesOf(b);
      EXPECT_FALSE(from_build.empty());
      EXPECT_EQ(from_build, EntriesOf(n)) << b.name();
      EXPECT_EQ(from_build, expected) << b.name();
      EXPECT_EQ(b.multikey_paths(), n.multikey_paths()) << b.name();
      EXPECT_EQ(b.multikey_paths(), paths) << b.name();
    }
  }
}

TEST_F(StoreUnitTest, AUniqueBuildOverDuplicatesWritesNothing) {
  auto meta = Collection("c");
  std::vector<Document> docs = RandomDocs(7, 100);  // b in -3..3: duplicates
  ASSERT_TRUE(InsertAll(*meta, docs).ok());
  const Raw before = ScanAll();
  auto id = catalog().AllocateId();
  ASSERT_TRUE(id.ok());
  IndexOptions unique;
  unique.unique = true;
  auto index = IndexDescriptor::Create(*id, Json(R"({"b": 1})"), unique);
  ASSERT_TRUE(index.ok());
  Status s = internal::BuildIndexEntries(*engine_, *meta, index->get(), {});
  EXPECT_EQ(s.code(), ErrorCode::kDuplicateKey);
  EXPECT_EQ(ScanAll(), before);
  // Over distinct values it succeeds, one entry per document.
  ASSERT_TRUE(AddIndex(meta.get(), R"({"_id": 1, "b": 1})", /*unique=*/true).ok());
  EXPECT_EQ(EntriesOf(*meta->indexes()->FindByName("_id_1_b_1")).size(), docs.size());
}

TEST_F(StoreUnitTest, RandomWritesKeepEntriesExact) {
  auto meta = Collection("c");
  ASSERT_TRUE(AddIndex(meta.get(), R"({"a": 1})").ok());
  ASSERT_TRUE(AddIndex(meta.get(), R"({"x.y": 1, "b": -1})").ok());
  std::map<int, Document> model;
  std::mt19937 rng(42);
  std::vector<Document> pool = RandomDocs(3, 600);
  for (int step = 0; step < 600; ++step) {
    const int id = static_cast<int>(rng() % 40);
    BsonBuilder b;
    b.AppendInt32("_id", id);
    for (Element e : pool[step]) {
      if (e.key() != "_id") b.AppendElement(e);
    }
    Document next = std::move(b).Build();
    auto txn = engine_->Begin();
    WriteDelta delta;
    const std::string key = internal::DocumentKey(*meta, next.Get("_id"));
    auto current = internal::LockAndRead(txn.get(), key);
    ASSERT_TRUE(current.ok());
    ASSERT_EQ(current->has_value(), model.count(id) == 1);
    Status s;
    if (!current->has_value()) {
      s = internal::InsertDocument(*engine_, txn.get(), *meta, next, &delta);
      model[id] = next;
    } else if (rng() % 3 == 0) {
      s = internal::DeleteDocument(*engine_, txn.get(), *meta, key, **current, &delta);
      model.erase(id);
    } else {
      s = internal::ReplaceDocument(*engine_, txn.get(), *meta, key, **current, next, &delta);
      model[id] = next;
    }
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE(internal::CommitWithCount(txn.get(), *meta, &delta.count).ok());
  }
  std::vector<Document> docs;
  for (auto& [id, d] : model) docs.push_back(d);
  EXPECT_EQ(Count(*meta), static_cast<int64_t>(docs.size()));
  EXPECT_EQ(ScanId(meta->id).size(), docs.size());
  for (const auto& index : *meta->indexes()) {
    EXPECT_EQ(EntriesOf(*index), ExpectedEntries(*index, docs)) << index->name();
  }
}

TEST_F(StoreUnitTest, ValidateFindsARemovedAndAPlantedEntry) {
  auto meta = Collection("c");
  ASSERT_TRUE(AddIndex(meta.get(), R"({"a": 1})").ok());
  std::vector<Document> docs;
  for (int i = 0; i < 20; ++i) {
    docs.push_back(Json("{\"_id\": " + std::to_string(i) + ", \"a\": " + std::to_string(i % 7) +
                        "}"));
  }
  ASSERT_TRUE(InsertAll(*meta, docs).ok());
  const IndexDescriptor& index = *meta->indexes()->FindByName("a_1");
  auto validate = [&] {
    CollectionLock guard(meta, CollectionLock::Mode::kShared);
    ValidateResult result;
    EXPECT_TRUE(internal::ValidateIndexes(*meta, ReadView(engine_.get(), nullptr), &result).ok());
    return result;
  };
  ValidateResult clean = validate();
  EXPECT_TRUE(clean.valid);
  EXPECT_TRUE(clean.errors.empty());
  EXPECT_EQ(clean.index_entries, 20);

  // Remove the entry of {_id: 3, a: 3}.
  keystring::Builder three;
  three.Append(docs[3].Get("a"));
  const std::string id3 = keystring::EncodeValue(docs[3].Get("_id"));
  auto txn = engine_->Begin();
  ASSERT_TRUE(txn->Delete(internal::KeySpace::kData,
                          internal::IndexEntryKey(index, three.bytes(), id3))
                  .ok());
  ASSERT_TRUE(txn->Commit().ok());
  ASSERT_EQ(EntriesOf(index).size(), 19u);
  ValidateResult missing = validate();
  EXPECT_FALSE(missing.valid);
  EXPECT_EQ(missing.index_entries, 19);
  ASSERT_EQ(missing.errors.size(), 1u);
  EXPECT_THAT(missing.errors[0], HasSubstr("index a_1 lacks the key { a: 3 } of a document"));

  // Put it back, and plant one whose document does not exist.
  keystring::Builder nine;
  nine.Append(Json(R"({"v": 9})").Get("v"));
  const std::string id99 = keystring::EncodeValue(Json(R"({"v": 99})").Get("v"));
  txn = engine_->Begin();
  ASSERT_TRUE(txn->Put(internal::KeySpace::kData, internal::IndexEntryKey(index, three.bytes(), id3),
                       internal::IndexEntryValue(index, id3, three.type_bits()))
                  .ok());
  ASSERT_TRUE(txn->Put(internal::KeySpace::kData, internal::IndexEntryKey(index, nine.bytes(), id99),
                       internal::IndexEntryValue(index, id99, ""))
                  .ok());
  ASSERT_TRUE(txn->Commit().ok());
  ValidateResult extra = validate();
  EXPECT_FALSE(extra.valid);
  EXPECT_EQ(extra.index_entries, 21);
  ASSERT_EQ(extra.errors.size(), 1u);
  EXPECT_THAT(extra.errors[0],
              HasSubstr("index a_1: the entry { a: 9 } points to a document that does not exist"));
}

}  // namespace
}  // namespace rockdoc

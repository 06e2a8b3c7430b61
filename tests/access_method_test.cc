// Index kinds behind one interface (index/access_method.h): the built-in
// btree answers every question, and a kind registered by a test (a btree
// that counts the calls the layers make, optionally without order or
// values) is used by createIndex, the write path, the planner, scans,
// explain, listIndexes and the catalog, with no other code knowing of it.
#include "index/access_method.h"

#include <gtest/gtest.h>

#include <atomic>

#include "index/index_descriptor.h"
#include "index/key_generator.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/format.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using internal::AccessMethodFor;
using internal::BtreeAccessMethod;
using internal::IndexAccessMethod;
using internal::IndexDescriptor;
using internal::IndexEntryFormat;
using internal::IndexKey;
using internal::IndexOptionsForm;
using test::Json;
using test::ScratchDir;

std::shared_ptr<IndexDescriptor> Make(std::string_view keys, IndexOptions options = {}) {
  auto d = IndexDescriptor::Create(7, Json(keys), options);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *d : nullptr;
}

// ---- The btree kind ----

TEST(BtreeAccessMethodTest, IsTheKindOfNumericKeyPatterns) {
  auto d = Make(R"({"a": 1, "b": -1})");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(&d->access_method(), &BtreeAccessMethod());
  EXPECT_EQ(d->access_method().kind(), "btree");
  EXPECT_TRUE(d->access_method().KeysAreOrdered());
  EXPECT_TRUE(d->access_method().KeysHoldValues());
}

TEST(BtreeAccessMethodTest, EntryFormatFollowsUniqueness) {
  IndexOptions unique;
  unique.unique = true;
  EXPECT_EQ(Make(R"({"a": 1})")->entry_format(), IndexEntryFormat::kStandard);
  EXPECT_EQ(Make(R"({"a": 1})", unique)->entry_format(), IndexEntryFormat::kUnique);
}

// Every entry format round-trips through storage/format.h: the parts of a
// stored entry are the parts it was written from.
TEST(BtreeAccessMethodTest, EntriesOfBothFormatsRoundTrip) {
  IndexOptions unique;
  unique.unique = true;
  for (const auto& d : {Make(R"({"a": 1, "b": -1})"), Make(R"({"a": 1, "b": -1})", unique)}) {
    std::vector<IndexKey> keys;
    ASSERT_TRUE(d->access_method()
                    .GetKeys(*d, Json(R"({"_id": 3, "a": [1, "x"], "b": 2.5})"), &keys, nullptr)
                    .ok());
    ASSERT_EQ(keys.size(), 2u);
    const std::string id_key = "\x2b\x06";  // any non-empty keystring-like bytes
    for (const IndexKey& k : keys) {
      std::string key = internal::IndexEntryKey(*d, k.bytes, id_key);
      std::string value = internal::IndexEntryValue(*d, id_key, k.type_bits);
      internal::IndexEntryView entry;
      ASSERT_TRUE(internal::ParseIndexEntry(*d, key, value, &entry).ok());
      EXPECT_EQ(entry.values_key, k.bytes);
      EXPECT_EQ(entry.id_key, id_key);
      EXPECT_EQ(entry.type_bits, k.type_bits);
      BsonBuilder b;
      ASSERT_TRUE(d->access_method().DecodeKey(*d, entry, &b).ok());
      Document decoded = std::move(b).Build();
      EXPECT_EQ(decoded.Get("b").NumberAsDouble(), 2.5);
    }
    // The standard format keeps one entry per document: the _id is in the key.
    const bool id_in_key = d->entry_format() == IndexEntryFormat::kStandard;
    EXPECT_EQ(internal::IndexEntryKey(*d, keys[0].bytes, id_key).ends_with(id_key), id_in_key);
  }
}

// GetKeys is the key generator of index/key_generator.h (which has its own
// vector tests): the access method adds nothing and drops nothing.
TEST(BtreeAccessMethodTest, KeysAreTheKeyGenerators) {
  auto d = Make(R"({"a.b": 1, "c": 1})");
  Document doc = Json(R"({"_id": 1, "a": [{"b": 1}, {"b": 2}, {"b": 1.0}], "c": "z"})");
  std::vector<IndexKey> via_method, direct;
  internal::MultikeyPaths p1, p2;
  ASSERT_TRUE(d->access_method().GetKeys(*d, doc, &via_method, &p1).ok());
  ASSERT_TRUE(internal::GenerateIndexKeys(*d, doc, &direct, &p2).ok());
  EXPECT_EQ(via_method, direct);
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(via_method.size(), 2u);
}

TEST(BtreeAccessMethodTest, OptionsPersistThroughTheCatalogEntry) {
  IndexOptions options;
  options.name = "ttl";
  options.sparse = true;
  options.partial_filter_expression = Json(R"({"t": {"$exists": true}})");
  options.expire_after_seconds = 3600;
  auto d = Make(R"({"t": 1})", options);
  ASSERT_NE(d, nullptr);
  BsonBuilder b;
  d->AppendCatalogEntry(&b, d->multikey_paths());
  Document entry = std::move(b).Build();
  auto back = IndexDescriptor::FromCatalogEntry(entry);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ToJson((*back)->ToSpec()), ToJson(d->ToSpec()));
  EXPECT_TRUE((*back)->SameOptions(*d));
  EXPECT_EQ((*back)->expire_after_seconds(), 3600);
  // listIndexes' form omits defaults and shows small numbers as int32.
  EXPECT_EQ(ToJson(d->ToSpec()),
            R"({"v": 2, "key": {"t": 1}, "name": "ttl", "sparse": true, )"
            R"("partialFilterExpression": {"t": {"$exists": true}}, "expireAfterSeconds": 3600})");
  // A damaged option is corruption, not a default.
  BsonBuilder bad;
  bad.AppendInt64("id", 7);
  bad.AppendString("name", "x");
  bad.AppendDocument("key", Json(R"({"t": 1})"));
  bad.AppendString("unique", "yes");
  bad.AppendBool("sparse", false);
  bad.OpenArray("multikeyPaths");
  bad.OpenArray("");
  bad.Close();
  bad.Close();
  auto damaged = IndexDescriptor::FromCatalogEntry(std::move(bad).Build());
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.status().code(), ErrorCode::kDataCorruptionDetected);
}

TEST(BtreeAccessMethodTest, TtlIsASingleFieldBtreeOption) {
  IndexOptions ttl;
  ttl.expire_after_seconds = 10;
  auto compound = IndexDescriptor::Create(1, Json(R"({"a": 1, "b": 1})"), ttl);
  ASSERT_FALSE(compound.ok());
  EXPECT_EQ(compound.status().code(), ErrorCode::kCannotCreateIndex);
  EXPECT_NE(compound.status().message().find("compound indexes do not support TTL"),
            std::string::npos);
  auto id = IndexDescriptor::Create(1, Json(R"({"_id": 1})"), ttl);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), ErrorCode::kCannotCreateIndex);
}

TEST(BtreeAccessMethodTest, ExplainDescribesTheIndex) {
  auto d = Make(R"({"a": 1})");
  BsonBuilder b;
  d->access_method().AppendExplain(*d, &b);
  EXPECT_EQ(ToJson(std::move(b).Build()),
            R"({"keyPattern": {"a": 1}, "indexName": "a_1", "isMultiKey": false, )"
            R"("multiKeyPaths": {"a": []}, "isUnique": false, "isSparse": false, )"
            R"("isPartial": false, "indexVersion": 2})");
}

// ---- Choosing a kind from the key pattern ----

TEST(AccessMethodForTest, MongoKindsRockdocDoesNotBuildAreNotImplemented) {
  for (const char* kind : {"2d", "columnstore"}) {
    auto m = AccessMethodFor(Json(std::string(R"({"a": ")") + kind + "\"}"));
    ASSERT_FALSE(m.ok()) << kind;
    EXPECT_EQ(m.status().code(), ErrorCode::kNotImplemented) << kind;
    // (2d adds what to use instead.)
    EXPECT_TRUE(m.status().message().starts_with(std::string(kind) +
                                                 " indexes are not supported by rockdoc"))
        << m.status();
  }
  auto text = AccessMethodFor(Json(R"({"a": "text"})"));  // built in (index/text_index.h)
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ((*text)->kind(), "text");
  auto hashed = AccessMethodFor(Json(R"({"a": "hashed"})"));  // built in
  ASSERT_TRUE(hashed.ok()) << hashed.status();
  EXPECT_EQ((*hashed)->kind(), "hashed");
  EXPECT_FALSE(internal::RegisterIndexKind("hashed", &BtreeAccessMethod()));  // the name is taken
  auto wildcard = AccessMethodFor(Json(R"({"a.$**": 1})"));
  ASSERT_FALSE(wildcard.ok());
  EXPECT_EQ(wildcard.status().code(), ErrorCode::kNotImplemented);
}

TEST(AccessMethodForTest, UnknownAndMixedPluginsAreRefusedAsMongoDBRefusesThem) {
  auto unknown = AccessMethodFor(Json(R"({"a": "nosuch"})"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kCannotCreateIndex);
  EXPECT_EQ(unknown.status().message(), "Unknown index plugin 'nosuch'");
  auto haystack = AccessMethodFor(Json(R"({"a": "geoHaystack"})"));
  ASSERT_FALSE(haystack.ok());
  EXPECT_EQ(haystack.status().code(), ErrorCode::kCannotCreateIndex);
}

// ---- A kind registered from outside ----

// A btree that counts what the layers above ask of it. `ordered` and
// `values` say whether its keys may provide a sort or cover a projection.
class CountingKind final : public IndexAccessMethod {
 public:
  CountingKind(std::string name, bool ordered, bool values)
      : name_(std::move(name)), ordered_(ordered), values_(values) {}

  std::string_view kind() const override { return name_; }
  Status ValidateKeyField(const Element& e) const override {
    if (e.IsString()) return e.String() == name_ ? Status::OK() : BadValue("not mine");
    return btree().ValidateKeyField(e);
  }
  Status ValidateOptions(const IndexDescriptor& index, const IndexOptions& options) const override {
    if (options.sparse) {
      return Status(ErrorCode::kCannotCreateIndex, name_ + " indexes cannot be sparse");
    }
    return btree().ValidateOptions(index, options);
  }
  void AppendOptions(const IndexDescriptor& index, IndexOptionsForm form,
                     BsonBuilder* out) const override {
    btree().AppendOptions(index, form, out);
    if (form == IndexOptionsForm::kListIndexes) out->AppendString("kind", name_);
  }
  StatusOr<IndexOptions> OptionsFromCatalog(DocumentView entry) const override {
    ++catalog_loads;
    return btree().OptionsFromCatalog(entry);
  }
  Status GetKeys(const IndexDescriptor& index, DocumentView doc, std::vector<IndexKey>* keys,
                 internal::MultikeyPaths* paths) const override {
    ++get_keys;
    return btree().GetKeys(index, doc, keys, paths);
  }
  IndexEntryFormat EntryFormat(const IndexDescriptor& index) const override {
    return btree().EntryFormat(index);
  }
  Status DecodeKey(const IndexDescriptor& index, const internal::IndexEntryView& entry,
                   BsonBuilder* out) const override {
    ++decodes;
    return btree().DecodeKey(index, entry, out);
  }
  bool IntervalsFor(const IndexDescriptor& index, size_t field, const MatchExpression& leaf,
                    std::vector<internal::Interval>* out,
                    internal::BoundsTightness* tightness) const override {
    ++bounds;
    return btree().IntervalsFor(index, field, leaf, out, tightness);
  }
  bool KeysAreOrdered() const override { return ordered_; }
  bool KeysHoldValues() const override { return values_; }
  void AppendExplain(const IndexDescriptor& index, BsonBuilder* out) const override {
    btree().AppendExplain(index, out);
    out->AppendString("indexKind", name_);
  }

  mutable std::atomic<int> get_keys{0}, decodes{0}, bounds{0}, catalog_loads{0};

 private:
  static const IndexAccessMethod& btree() { return BtreeAccessMethod(); }
  std::string name_;
  bool ordered_, values_;
};

// Registers a kind once per process (registrations are never undone).
CountingKind* RegisterOnce(const std::string& name, bool ordered, bool values) {
  auto* kind = new CountingKind(name, ordered, values);
  EXPECT_TRUE(internal::RegisterIndexKind(name, kind));
  return kind;
}

CountingKind& Counting() {
  static CountingKind* kind = RegisterOnce("counting", /*ordered=*/true, /*values=*/true);
  return *kind;
}

CountingKind& Opaque() {
  static CountingKind* kind = RegisterOnce("opaque", /*ordered=*/false, /*values=*/false);
  return *kind;
}

class RegisteredKindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Counting();
    Opaque();
    Open();
  }
  void Open() {
    auto c = Client::Open(dir_.Sub("db"));
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Collection Coll() { return client_->GetDatabase("db").GetCollection("c"); }
  std::vector<Document> Find(std::string_view filter, FindOptions options = {}) {
    auto cursor = Coll().Find(Json(filter), options);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    if (!cursor.ok()) return {};
    auto all = cursor->ToVector();
    EXPECT_TRUE(all.ok()) << all.status();
    return all.ok() ? *all : std::vector<Document>();
  }
  std::string Explain(std::string_view filter, FindOptions options = {}) {
    auto e = Coll().ExplainFind(Json(filter), options, ExplainVerbosity::kQueryPlanner);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? ToJson(*e) : "";
  }

  ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(RegisteredKindTest, EveryLayerGoesThroughTheKind) {
  CountingKind& kind = Counting();
  auto name = Coll().CreateIndex(Json(R"({"a": "counting"})"), {});
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(*name, "a_counting");
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Coll()
                    .InsertOne(Json("{\"_id\": " + std::to_string(i) +
                                    ", \"a\": " + std::to_string(i % 5) + "}"))
                    .ok());
  }
  EXPECT_GE(kind.get_keys.load(), 20);  // the write path generated the keys

  const int bounds_before = kind.bounds.load();
  EXPECT_EQ(Find(R"({"a": 3})").size(), 4u);
  EXPECT_GT(kind.bounds.load(), bounds_before);  // the planner asked for bounds
  std::string explain = Explain(R"({"a": 3})");
  EXPECT_NE(explain.find("\"IXSCAN\""), std::string::npos) << explain;
  EXPECT_NE(explain.find(R"("indexKind": "counting")"), std::string::npos) << explain;

  // A covered query decodes the keys through the kind.
  FindOptions covered;
  covered.projection = Json(R"({"_id": 0, "a": 1})");
  const int decodes_before = kind.decodes.load();
  std::vector<Document> docs = Find(R"({"a": {"$gte": 3}})", covered);
  EXPECT_EQ(docs.size(), 8u);
  EXPECT_GT(kind.decodes.load(), decodes_before);
  EXPECT_NE(Explain(R"({"a": {"$gte": 3}})", covered).find("PROJECTION_COVERED"),
            std::string::npos);

  // listIndexes shows the kind's options; the catalog reloads through it.
  auto specs = Coll().ListIndexes();
  ASSERT_TRUE(specs.ok());
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[1].Get("kind").String(), "counting");
  const int loads_before = kind.catalog_loads.load();
  ASSERT_TRUE(client_->Close().ok());
  Open();
  EXPECT_GT(kind.catalog_loads.load(), loads_before);
  EXPECT_EQ(Find(R"({"a": 3})").size(), 4u);
  auto v = Coll().Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
  EXPECT_EQ(v->index_entries, 20);
}

TEST_F(RegisteredKindTest, TheKindValidatesItsOwnOptions) {
  IndexOptions sparse;
  sparse.sparse = true;
  auto r = Coll().CreateIndex(Json(R"({"a": "counting"})"), sparse);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kCannotCreateIndex);
  EXPECT_EQ(r.status().message(), "counting indexes cannot be sparse");
  auto mixed = Coll().CreateIndex(Json(R"({"a": "counting", "b": "opaque"})"), {});
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().code(), ErrorCode::kCannotCreateIndex);
  EXPECT_EQ(mixed.status().message(), "Can't use more than one index plugin for a single index.");
}

// Uniqueness is the entry format's: a unique index of a registered kind
// refuses a duplicate like a unique btree.
TEST_F(RegisteredKindTest, UniqueEntriesOfAnyKindRefuseDuplicates) {
  IndexOptions unique;
  unique.unique = true;
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"a": "counting"})"), unique).ok());
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 1, "a": 5})")).ok());
  auto dup = Coll().InsertOne(Json(R"({"_id": 2, "a": 5})"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), ErrorCode::kDuplicateKey);
}

// Keys without order cannot provide a sort, and keys without values
// cannot cover a projection: the planner asks, and sorts or fetches.
TEST_F(RegisteredKindTest, ThePlannerAsksForOrderAndValues) {
  ASSERT_TRUE(Coll().CreateIndex(Json(R"({"a": "opaque"})"), {}).ok());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(Coll()
                    .InsertOne(Json("{\"_id\": " + std::to_string(i) +
                                    ", \"a\": " + std::to_string(9 - i) + "}"))
                    .ok());
  }
  FindOptions sorted;
  sorted.sort = Json(R"({"a": 1})");
  sorted.hint = Json(R"({"a": "opaque"})");
  std::string explain = Explain(R"({"a": {"$gte": 0}})", sorted);
  EXPECT_NE(explain.find("\"SORT\""), std::string::npos) << explain;
  std::vector<Document> docs = Find(R"({"a": {"$gte": 0}})", sorted);
  ASSERT_EQ(docs.size(), 10u);
  for (size_t i = 0; i < docs.size(); ++i) EXPECT_EQ(docs[i].Get("a").Int32(), int(i));

  FindOptions projected;
  projected.projection = Json(R"({"_id": 0, "a": 1})");
  explain = Explain(R"({"a": 3})", projected);
  EXPECT_EQ(explain.find("PROJECTION_COVERED"), std::string::npos) << explain;
  EXPECT_NE(explain.find("\"FETCH\""), std::string::npos) << explain;
  docs = Find(R"({"a": 3})", projected);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(ToJson(docs[0]), R"({"a": 3})");
}

}  // namespace
}  // namespace rockdoc

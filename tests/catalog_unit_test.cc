// catalog/ on its own: a Catalog attached to a bare storage engine (no
// Client), driven through catalog/catalog.h. Create, find, drop and rename;
// prefix ids that are never reused (across drops and across reopening);
// MongoDB's naming rules; views (cycles and the depth limit); what survives
// a close and an open; data under an id no entry owns removed at open; the
// checks of createCollection's options (MakeCollectionOptions; the create
// command's decoding is command/'s, tests/command_test.cc) and persisted
// options that are not the catalog's refused at open.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "engine_test_util.h"
#include "index/index_descriptor.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/kv.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using internal::Catalog;
using internal::CollectionMeta;
using internal::CollectionOptions;
using internal::Engine;
using internal::ViewDefinition;
using test::Json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class CatalogUnitTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void TearDown() override { Close(); }

  void Open() {
    auto e = test::OpenEngineWithCatalog(dir_.Sub("db"));
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = *e;
  }
  void Close() {
    if (engine_ == nullptr) return;
    EXPECT_TRUE(engine_->Close().ok());
    engine_.reset();
  }
  void Reopen() {
    Close();
    Open();
  }
  Catalog& catalog() { return internal::CatalogOf(*engine_); }

  // Options checked as createCollection checks them.
  CollectionOptions Options(const CreateCollectionOptions& given) {
    auto o = internal::MakeCollectionOptions("db", given);
    EXPECT_TRUE(o.ok()) << o.status();
    return o.ok() ? std::move(o).value() : CollectionOptions();
  }

  ViewDefinition View(std::string name, std::string on, std::vector<std::string> extra = {}) {
    ViewDefinition v;
    v.db = "db";
    v.name = std::move(name);
    v.view_on = on;
    v.pipeline = Json(R"({"0": {"$match": {"x": 1}}})");
    v.depends_on = {on};
    for (std::string& e : extra) v.depends_on.push_back(std::move(e));
    return v;
  }

  // Writes one data key (committed) and reads whether it is there.
  void PutData(const std::string& key) {
    auto txn = engine_->Begin();
    ASSERT_TRUE(txn->Put(internal::KeySpace::kData, key, "v").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  bool HasData(const std::string& key) {
    internal::PinnedValue value;
    bool found = false;
    EXPECT_TRUE(internal::ReadView(engine_.get(), nullptr).Get(key, &value, &found).ok());
    return found;
  }
  int64_t CountDataUnder(uint32_t id) {
    auto it = internal::ReadView(engine_.get(), nullptr)
                  .NewIterator(internal::PrefixKey(id), internal::PrefixKey(id + 1));
    int64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    EXPECT_TRUE(it->status().ok());
    return n;
  }

  test::ScratchDir dir_;
  std::shared_ptr<Engine> engine_;
};

TEST_F(CatalogUnitTest, CreateFindRenameDrop) {
  EXPECT_EQ(catalog().Find("db", "a"), nullptr);
  ASSERT_TRUE(catalog().Create("db", "a").ok());
  ASSERT_TRUE(catalog().Create("db", "b").ok());
  ASSERT_TRUE(catalog().Create("other", "a").ok());
  std::shared_ptr<CollectionMeta> a = catalog().Find("db", "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->full_name(), "db.a");
  EXPECT_EQ(a->uuid.size(), 16u);
  EXPECT_NE(a->id, catalog().Find("other", "a")->id);
  EXPECT_THAT(catalog().CollectionNames("db"), ElementsAre("a", "b"));
  EXPECT_THAT(catalog().DatabaseNames(), ElementsAre("db", "other"));

  // GetOrCreate finds what exists, and creates what does not.
  auto again = catalog().GetOrCreate("db", "a");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), a.get());
  auto made = catalog().GetOrCreate("db", "c");
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(catalog().Find("db", "c").get(), made->get());

  // Rename keeps the id and the UUID; the old meta is marked dropped.
  const uint32_t id = a->id;
  const std::string uuid = a->uuid;
  ASSERT_TRUE(catalog().Rename("db", "a", "z", /*drop_target=*/false).ok());
  EXPECT_EQ(catalog().Find("db", "a"), nullptr);
  EXPECT_TRUE(a->dropped.load());
  std::shared_ptr<CollectionMeta> z = catalog().Find("db", "z");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->id, id);
  EXPECT_EQ(z->uuid, uuid);
  EXPECT_EQ(catalog().Rename("db", "z", "b", false).code(), ErrorCode::kNamespaceExists);
  EXPECT_EQ(catalog().Rename("db", "nope", "y", false).code(), ErrorCode::kNamespaceNotFound);
  EXPECT_EQ(catalog().Rename("db", "z", "z", false).code(), ErrorCode::kIllegalOperation);
  EXPECT_EQ(catalog().Rename("db", "z", "$bad", false).code(), ErrorCode::kInvalidNamespace);
  // With drop_target, the target goes (and its data with it).
  const uint32_t b_id = catalog().Find("db", "b")->id;
  PutData(internal::RecordKey(b_id, "k"));
  ASSERT_TRUE(catalog().Rename("db", "z", "b", /*drop_target=*/true).ok());
  EXPECT_EQ(catalog().Find("db", "b")->id, id);
  EXPECT_EQ(CountDataUnder(b_id), 0);

  // Drop says whether it existed and removes the collection's data.
  PutData(internal::RecordKey(id, "k1"));
  PutData(internal::RecordKey(id, "k2"));
  EXPECT_EQ(CountDataUnder(id), 2);
  bool existed = false;
  ASSERT_TRUE(catalog().Drop("db", "b", &existed).ok());
  EXPECT_TRUE(existed);
  EXPECT_EQ(catalog().Find("db", "b"), nullptr);
  EXPECT_EQ(CountDataUnder(id), 0);
  ASSERT_TRUE(catalog().Drop("db", "b", &existed).ok());
  EXPECT_FALSE(existed);
  EXPECT_THAT(catalog().CollectionNames("db"), ElementsAre("c"));

  // And all of it as the next open finds it.
  Reopen();
  EXPECT_THAT(catalog().CollectionNames("db"), ElementsAre("c"));
  EXPECT_THAT(catalog().CollectionNames("other"), ElementsAre("a"));
  EXPECT_EQ(catalog().Find("db", "z"), nullptr);
}

TEST_F(CatalogUnitTest, CreateOfAnExistingNameIsNamespaceExists) {
  ASSERT_TRUE(catalog().Create("db", "c").ok());
  const uint32_t id = catalog().Find("db", "c")->id;
  Status s = catalog().Create("db", "c");
  EXPECT_EQ(s.code(), ErrorCode::kNamespaceExists);
  EXPECT_EQ(static_cast<int>(s.code()), 48);
  EXPECT_EQ(s.message(), "Collection db.c already exists.");
  EXPECT_EQ(catalog().Find("db", "c")->id, id) << "the failed Create replaced the entry";
  // A view's name is taken too, both ways.
  ASSERT_TRUE(catalog().CreateView(View("v", "c")).ok());
  EXPECT_EQ(catalog().Create("db", "v").code(), ErrorCode::kNamespaceExists);
  EXPECT_EQ(catalog().CreateView(View("c", "v")).code(), ErrorCode::kNamespaceExists);
  EXPECT_EQ(catalog().CreateView(View("v", "c")).code(), ErrorCode::kNamespaceExists);
  // A view is not a collection for GetOrCreate (a first insert).
  EXPECT_EQ(catalog().GetOrCreate("db", "v").status().code(),
            ErrorCode::kCommandNotSupportedOnView);
}

TEST_F(CatalogUnitTest, PrefixIdsAreNeverReused) {
  std::set<uint32_t> seen;
  auto fresh = [&](uint32_t id) {
    EXPECT_NE(id, 0u);
    EXPECT_TRUE(seen.insert(id).second) << "id " << id << " used twice";
  };
  for (int round = 0; round < 5; ++round) {
    ASSERT_TRUE(catalog().Create("db", "c").ok());
    fresh(catalog().Find("db", "c")->id);
    ASSERT_TRUE(catalog().Create("db", "capped", Options(test::CappedOptions(4096))).ok());
    std::shared_ptr<CollectionMeta> capped = catalog().Find("db", "capped");
    fresh(capped->id);
    fresh(capped->capped_order_id);
    auto index_id = catalog().AllocateId();
    ASSERT_TRUE(index_id.ok());
    fresh(*index_id);
    bool existed = false;
    ASSERT_TRUE(catalog().Drop("db", "c", &existed).ok());
    ASSERT_TRUE(catalog().Drop("db", "capped", &existed).ok());
    // The highest ids were those of dropped collections and of an index no
    // entry names: the counter, not the entries, must remember them.
    if (round % 2 == 1) Reopen();
  }
  EXPECT_EQ(seen.size(), 20u);
  Reopen();
  ASSERT_TRUE(catalog().Create("db", "last").ok());
  fresh(catalog().Find("db", "last")->id);
}

TEST_F(CatalogUnitTest, DatabaseNamingRules) {
  const std::string longest(63, 'd');
  for (const std::string& good : {std::string("test"), std::string("a"), std::string("my-db_1"),
                                  std::string("é"), std::string("A"), longest}) {
    EXPECT_TRUE(internal::ValidateDatabaseName(good).ok()) << "'" << good << "'";
  }
  for (const std::string& bad :
       {std::string(""), longest + "d", std::string("a/b"), std::string("a\\b"),
        std::string("a.b"), std::string("a b"), std::string("a\"b"), std::string("a$b"),
        std::string("a*b"), std::string("a<b"), std::string("a>b"), std::string("a:b"),
        std::string("a|b"), std::string("a?b"), std::string("a\0b", 3)}) {
    Status s = internal::ValidateDatabaseName(bad);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidNamespace) << "'" << bad << "'";
    EXPECT_EQ(static_cast<int>(s.code()), 73);
  }
  EXPECT_EQ(internal::ValidateDatabaseName("a.b").message(), "Invalid database name: 'a.b'");
  EXPECT_EQ(internal::ValidateDatabaseName(longest + "d").message(),
            "db name is too long: '" + longest + "d' (max 63 bytes)");
  // Create, GetOrCreate and CreateView apply the rules.
  EXPECT_EQ(catalog().Create("a.b", "c").code(), ErrorCode::kInvalidNamespace);
  EXPECT_EQ(catalog().GetOrCreate("a b", "c").status().code(), ErrorCode::kInvalidNamespace);
  ViewDefinition v = View("v", "c");
  v.db = "a$b";
  EXPECT_EQ(catalog().CreateView(v).code(), ErrorCode::kInvalidNamespace);
  EXPECT_TRUE(catalog().DatabaseNames().empty());
}

TEST_F(CatalogUnitTest, CollectionNamingRules) {
  // "test" + "." + 250 bytes is 255, the longest namespace.
  const std::string longest(250, 'c');
  for (const std::string& good :
       {std::string("c"), std::string("a.b"), std::string("system.profile"), std::string("system"),
        std::string("a b"), std::string("-"), std::string("é"), std::string("a.system.x"),
        longest}) {
    EXPECT_TRUE(internal::ValidateCollectionName("test", good).ok()) << "'" << good << "'";
  }
  struct Bad {
    std::string name;
    std::string message;
  };
  const Bad bads[] = {
      {"", "Invalid collection name: collection names cannot be empty"},
      {"a$b", "Invalid collection name: 'a$b': collection names cannot contain '$'"},
      {"$x", "Invalid collection name: '$x': collection names cannot contain '$'"},
      {std::string("a\0b", 3),
       "Invalid collection name: collection names cannot contain a null byte: 'a?b'"},
      {".a", "Invalid collection name: '.a': collection names cannot begin with '.'"},
      {"system.x", "Invalid collection name: 'system.x': names beginning with 'system.' are "
                   "reserved"},
      {"system.", ""},
      {"system.indexes", ""},
      {longest + "c", "Fully qualified namespace is too long. Namespace: test." + longest +
                          "c Max: 255"},
  };
  for (const Bad& bad : bads) {
    Status s = internal::ValidateCollectionName("test", bad.name);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidNamespace) << "'" << bad.name << "'";
    if (!bad.message.empty()) {
      EXPECT_EQ(s.message(), bad.message);
    }
    EXPECT_EQ(catalog().Create("test", bad.name).code(), ErrorCode::kInvalidNamespace);
  }
  // The namespace's length counts the database name.
  EXPECT_TRUE(internal::ValidateCollectionName("t", longest + "ccc").ok());
  EXPECT_FALSE(internal::ValidateCollectionName("te", longest + "ccc").ok());
  EXPECT_TRUE(catalog().CollectionNames("test").empty());
}

TEST_F(CatalogUnitTest, ViewCyclesAreRefused) {
  ASSERT_TRUE(catalog().Create("db", "c").ok());
  // On itself.
  Status self = catalog().CreateView(View("v", "v"));
  EXPECT_EQ(self.code(), ErrorCode::kGraphContainsCycle);
  EXPECT_EQ(static_cast<int>(self.code()), 93);
  // Through another view: a on b (not there yet), then b on a.
  ASSERT_TRUE(catalog().CreateView(View("a", "b")).ok());
  Status two = catalog().CreateView(View("b", "a"));
  EXPECT_EQ(two.code(), ErrorCode::kGraphContainsCycle);
  EXPECT_THAT(two.message(), HasSubstr("View cycle detected"));
  // Through a $lookup's collection (depends_on beyond viewOn).
  ASSERT_TRUE(catalog().CreateView(View("x", "c")).ok());
  EXPECT_EQ(catalog().CreateView(View("y", "c", {"y"})).code(), ErrorCode::kGraphContainsCycle);
  ASSERT_TRUE(catalog().CreateView(View("y", "c", {"x"})).ok());
  EXPECT_EQ(catalog().ModifyView(View("x", "c", {"y"})).code(), ErrorCode::kGraphContainsCycle);
  // ModifyView refuses a cycle and leaves the definition as it was.
  ASSERT_TRUE(catalog().CreateView(View("v1", "c")).ok());
  ASSERT_TRUE(catalog().CreateView(View("v2", "v1")).ok());
  EXPECT_EQ(catalog().ModifyView(View("v1", "v2")).code(), ErrorCode::kGraphContainsCycle);
  EXPECT_EQ(catalog().FindView("db", "v1")->view_on, "c");
  EXPECT_EQ(catalog().ModifyView(View("nope", "c")).code(), ErrorCode::kNamespaceNotFound);
  EXPECT_EQ(catalog().FindView("db", "b"), nullptr);
  EXPECT_THAT(catalog().ViewNames("db"), ElementsAre("a", "v1", "v2", "x", "y"));
}

TEST_F(CatalogUnitTest, ViewDepthLimit) {
  ASSERT_TRUE(catalog().Create("db", "c").ok());
  // v1 on c, v2 on v1, ...: kMaxViewDepth views in a chain, and no more.
  std::string on = "c";
  for (int i = 1; i <= internal::kMaxViewDepth; ++i) {
    std::string name = "v" + std::to_string(i);
    ASSERT_TRUE(catalog().CreateView(View(name, on)).ok()) << name;
    on = name;
  }
  Status deeper = catalog().CreateView(View("too_deep", on));
  EXPECT_EQ(deeper.code(), ErrorCode::kViewDepthLimitExceeded);
  EXPECT_EQ(static_cast<int>(deeper.code()), 165);
  EXPECT_EQ(catalog().FindView("db", "too_deep"), nullptr);
  // A view beside the chain is fine; putting the chain on it is one too many.
  ASSERT_TRUE(catalog().CreateView(View("w", "c")).ok());
  EXPECT_EQ(catalog().ModifyView(View("v1", "w")).code(), ErrorCode::kViewDepthLimitExceeded);
  EXPECT_EQ(catalog().FindView("db", "v1")->view_on, "c");
  // Shortening the chain makes room again.
  bool existed = false;
  ASSERT_TRUE(catalog().Drop("db", "v" + std::to_string(internal::kMaxViewDepth), &existed).ok());
  EXPECT_TRUE(existed);
  EXPECT_TRUE(catalog().CreateView(View("fits", "v" + std::to_string(internal::kMaxViewDepth - 1)))
                  .ok());
}

TEST_F(CatalogUnitTest, EntriesAndOptionsSurviveReopen) {
  CreateCollectionOptions given;
  given.capped = true;
  given.size = 5000;
  given.max = 10;
  given.validator = Json(R"({"a": {"$gt": 1}})");
  given.validation_level = ValidationLevel::kModerate;
  given.validation_action = ValidationAction::kWarn;
  CollectionOptions options = Options(given);
  EXPECT_EQ(options.capped_size, 5120);
  ASSERT_TRUE(catalog().Create("db", "capped", options).ok());
  ASSERT_TRUE(catalog().Create("db", "plain").ok());
  ASSERT_TRUE(catalog().CreateView(View("v", "plain", {"capped"})).ok());
  std::shared_ptr<CollectionMeta> before = catalog().Find("db", "capped");
  // An index definition, persisted with the entry.
  auto index_id = catalog().AllocateId();
  ASSERT_TRUE(index_id.ok());
  IndexOptions io;
  io.unique = true;
  auto index = internal::IndexDescriptor::Create(*index_id, Json(R"({"a": 1, "b": -1})"), io);
  ASSERT_TRUE(index.ok()) << index.status();
  std::shared_ptr<CollectionMeta> plain = catalog().Find("db", "plain");
  plain->set_indexes(plain->indexes()->With(*index));
  ASSERT_TRUE(catalog().PersistCollection(*plain).ok());
  const uint32_t capped_id = before->id, order_id = before->capped_order_id,
                 plain_id = plain->id;
  const std::string uuid = before->uuid;
  before.reset();
  plain.reset();

  Reopen();
  std::shared_ptr<CollectionMeta> after = catalog().Find("db", "capped");
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->id, capped_id);
  EXPECT_EQ(after->uuid, uuid);
  EXPECT_TRUE(after->is_capped());
  EXPECT_EQ(after->capped_order_id, order_id);
  std::shared_ptr<const CollectionOptions> o = after->options();
  EXPECT_TRUE(o->capped);
  EXPECT_EQ(o->capped_size, 5120);
  EXPECT_EQ(o->capped_max, 10);
  EXPECT_EQ(ToJson(o->validator), R"({"a": {"$gt": 1}})");
  ASSERT_NE(o->validator_expr, nullptr);
  EXPECT_TRUE(o->validator_expr->Matches(Json(R"({"a": 2})")));
  EXPECT_FALSE(o->validator_expr->Matches(Json(R"({"a": 0})")));
  EXPECT_EQ(o->validation_level, ValidationLevel::kModerate);
  EXPECT_EQ(o->validation_action, ValidationAction::kWarn);
  EXPECT_EQ(ToJson(o->ToDocument()),
            R"({"capped": true, "size": 5120, "max": 10, "validator": {"a": {"$gt": 1}}, )"
            R"("validationLevel": "moderate", "validationAction": "warn"})");

  std::shared_ptr<CollectionMeta> p = catalog().Find("db", "plain");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->id, plain_id);
  EXPECT_FALSE(p->is_capped());
  EXPECT_EQ(p->options()->validator_expr, nullptr);
  ASSERT_EQ(p->indexes()->size(), 1u);
  const internal::IndexDescriptor* a_b = p->indexes()->FindByName("a_1_b_-1");
  ASSERT_NE(a_b, nullptr);
  EXPECT_EQ(a_b->id(), *index_id);
  EXPECT_EQ(ToJson(a_b->ToSpec()), R"({"v": 2, "key": {"a": 1, "b": -1}, "name": "a_1_b_-1", )"
                                   R"("unique": true})");

  std::shared_ptr<const ViewDefinition> v = catalog().FindView("db", "v");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->view_on, "plain");
  EXPECT_THAT(v->depends_on, ElementsAre("plain", "capped"));
  EXPECT_EQ(ToJson(v->pipeline), R"({"0": {"$match": {"x": 1}}})");
}

TEST_F(CatalogUnitTest, DataUnderAnUnownedIdIsReclaimedAtOpen) {
  ASSERT_TRUE(catalog().Create("db", "c").ok());
  std::shared_ptr<CollectionMeta> c = catalog().Find("db", "c");
  auto index_id = catalog().AllocateId();
  ASSERT_TRUE(index_id.ok());
  auto index = internal::IndexDescriptor::Create(*index_id, Json(R"({"a": 1})"), {});
  ASSERT_TRUE(index.ok());
  c->set_indexes(c->indexes()->With(*index));
  ASSERT_TRUE(catalog().PersistCollection(*c).ok());
  // An id handed out and never owned: what a drop that crashed between its
  // catalog write and its range delete leaves.
  auto orphan = catalog().AllocateId();
  ASSERT_TRUE(orphan.ok());
  const std::string record = internal::RecordKey(c->id, "r");
  const std::string entry = internal::PrefixKey(*index_id) + "e";
  const std::string lost1 = internal::PrefixKey(*orphan) + "x";
  const std::string lost2 = internal::PrefixKey(*orphan) + "y";
  for (const std::string& k : {record, entry, lost1, lost2}) PutData(k);
  c.reset();

  Reopen();
  EXPECT_TRUE(HasData(record));
  EXPECT_TRUE(HasData(entry));
  EXPECT_FALSE(HasData(lost1));
  EXPECT_FALSE(HasData(lost2));
  EXPECT_EQ(CountDataUnder(*orphan), 0);
}

TEST_F(CatalogUnitTest, MakeCollectionOptionsChecksAsMongoDB) {
  auto code = [](const CreateCollectionOptions& given) {
    return internal::MakeCollectionOptions("db", given).status().code();
  };
  CreateCollectionOptions o;
  EXPECT_EQ(code(o), ErrorCode::kOk);
  o.capped = true;  // without size
  EXPECT_EQ(code(o), ErrorCode::kInvalidOptions);
  o.size = 0;
  EXPECT_EQ(code(o), ErrorCode::kInvalidOptions);
  o.size = (int64_t{1} << 50) + 1;
  EXPECT_EQ(code(o), ErrorCode::kInvalidOptions);
  o.size = 1000;
  o.max = int64_t{1} << 31;
  EXPECT_EQ(code(o), ErrorCode::kInvalidOptions);
  o.max = (int64_t{1} << 31) - 1;
  EXPECT_EQ(code(o), ErrorCode::kOk);
  o.capped = false;  // size and max without capped
  EXPECT_EQ(code(o), ErrorCode::kInvalidOptions);

  CreateCollectionOptions view;
  view.pipeline = Json("{}");                         // an empty array's bytes
  EXPECT_EQ(code(view), ErrorCode::kInvalidOptions);  // pipeline without viewOn
  view.view_on = "";
  EXPECT_EQ(code(view), ErrorCode::kBadValue);
  view.view_on = "c";
  EXPECT_EQ(code(view), ErrorCode::kOk);
  EXPECT_TRUE(Options(view).is_view());
  view.validation_action = ValidationAction::kWarn;  // a view takes nothing else
  EXPECT_EQ(code(view), ErrorCode::kInvalidOptions);

  CreateCollectionOptions validated;
  validated.validator = Json(R"({"a": {"$bogus": 1}})");
  EXPECT_EQ(code(validated), ErrorCode::kBadValue);
  validated.validator = Json(R"({"a": 1})");
  EXPECT_EQ(internal::MakeCollectionOptions("admin", validated).status().code(),
            ErrorCode::kInvalidOptions);
  EXPECT_NE(Options(validated).validator_expr, nullptr);
  validated.validator = Json("{}");  // none
  EXPECT_EQ(Options(validated).validator_expr, nullptr);

  // Capped sizes: at least 4096, then a multiple of 256.
  const std::pair<int64_t, int64_t> sizes[] = {
      {1, 4096}, {4096, 4096}, {4097, 4352}, {5000, 5120}, {8192, 8192}, {8193, 8448}};
  for (const auto& [given, kept] : sizes) {
    EXPECT_EQ(internal::RoundCappedSize(given), kept) << given;
  }
  CreateCollectionOptions capped;
  capped.capped = true;
  capped.size = 4097;
  capped.max = -1;
  EXPECT_EQ(Options(capped).capped_size, 4352);
  EXPECT_EQ(Options(capped).capped_max, 0);
}

// The catalog decodes its own entries strictly: an option it does not
// write, or one of the wrong type, is corruption, not a default.
TEST_F(CatalogUnitTest, PersistedOptionsThatAreNotTheCatalogsAreRefusedAtOpen) {
  CreateCollectionOptions given;
  given.capped = true;
  given.size = 5000;
  ASSERT_TRUE(catalog().Create("db", "c", Options(given)).ok());
  const std::string key = internal::CatalogMetaKey("db", "c");
  std::string entry;
  bool found = false;
  ASSERT_TRUE(engine_->ReadMetadata(key, &entry, &found).ok());
  ASSERT_TRUE(found);
  const Document good = Document::AdoptValidated(entry);
  ASSERT_EQ(ToJson(good.Get("options").Document()), R"({"capped": true, "size": 5120})");
  for (const char* options :
       {R"({"capped": 1, "size": 5120})", R"({"capped": true, "size": "x"})",
        R"({"capped": true, "size": 5120, "timeseries": {}})", R"({"capped": true})"}) {
    BsonBuilder b;
    for (const Element& e : good) {
      if (e.key() == "options") {
        b.AppendDocument("options", Json(options).view());
      } else {
        b.AppendElement(e);
      }
    }
    Document bad = std::move(b).Build();
    ASSERT_TRUE(engine_
                    ->WriteMetadata(
                        {{Engine::MetadataWrite::Op::kPut, key, std::string(bad.view().bytes())}})
                    .ok());
    Close();
    auto e = Engine::Open(dir_.Sub("db"), ClientOptions{});
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = *e;
    Status attached = Catalog::AttachTo(engine_.get());
    EXPECT_EQ(attached.code(), ErrorCode::kDataCorruptionDetected) << options;
    EXPECT_THAT(std::string(attached.message()), HasSubstr("db.c")) << options;
  }
  // The good entry back: the catalog opens.
  ASSERT_TRUE(engine_
                  ->WriteMetadata(
                      {{Engine::MetadataWrite::Op::kPut, key, std::string(good.view().bytes())}})
                  .ok());
  Close();
  Open();
  ASSERT_NE(catalog().Find("db", "c"), nullptr);
  EXPECT_EQ(catalog().Find("db", "c")->options()->capped_size, 5120);
}

TEST_F(CatalogUnitTest, CreationInsideATransactionIsItsOwnUntilItEnds) {
  auto txn = engine_->Begin();
  {
    internal::CatalogTransactionScope scope(txn.get());
    auto meta = catalog().GetOrCreate("db", "t");
    ASSERT_TRUE(meta.ok()) << meta.status();
    EXPECT_EQ(catalog().Find("db", "t").get(), meta->get());
  }
  // Outside the transaction the collection does not exist yet, and another
  // creator of the name conflicts.
  EXPECT_EQ(catalog().Find("db", "t"), nullptr);
  EXPECT_EQ(catalog().GetOrCreate("db", "t").status().code(), ErrorCode::kWriteConflict);
  EXPECT_EQ(catalog().Create("db", "t").code(), ErrorCode::kWriteConflict);
  ASSERT_TRUE(txn->Rollback().ok());
  catalog().AbortCreations(txn.get());
  EXPECT_EQ(catalog().Find("db", "t"), nullptr);
  txn.reset();
  Reopen();
  EXPECT_EQ(catalog().Find("db", "t"), nullptr) << "an aborted creation reached the disk";

  // Committed: everyone's, and on disk.
  txn = engine_->Begin();
  {
    internal::CatalogTransactionScope scope(txn.get());
    ASSERT_TRUE(catalog().GetOrCreate("db", "t").ok());
  }
  ASSERT_TRUE(txn->Commit().ok());
  catalog().CommitCreations(txn.get());
  EXPECT_NE(catalog().Find("db", "t"), nullptr);
  txn.reset();
  Reopen();
  EXPECT_NE(catalog().Find("db", "t"), nullptr);
}

}  // namespace
}  // namespace rockdoc

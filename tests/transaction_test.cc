// Sessions and multi-document transactions (client.h, class Session): the
// semantics one thread can observe. The concurrent properties (isolation
// under load, conflicts between threads, a bank-transfer invariant) are in
// transaction_concurrency_test.cc; atomicity under SIGKILL in crash_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

IndexOptions UniqueIndex() {
  IndexOptions o;
  o.unique = true;
  return o;
}

UpdateOptions Upsert() {
  UpdateOptions o;
  o.upsert = true;
  return o;
}

using test::Json;

class TransactionTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(ClientOptions()); }
  void Open(const ClientOptions& options) {
    client_.reset();
    auto c = Client::Open(dir_.path(), options);
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Collection Plain(std::string_view name = "c", std::string_view db = "db") const {
    return client_->GetDatabase(db).GetCollection(name);
  }
  Session NewSession(const SessionOptions& options = {}) const {
    auto s = client_->StartSession(options);
    EXPECT_TRUE(s.ok()) << s.status();
    return std::move(s).value();
  }
  static int64_t Count(const Collection& c, std::string_view filter = "{}") {
    auto n = c.CountDocuments(Json(filter));
    EXPECT_TRUE(n.ok()) << n.status();
    return n.value_or(-1);
  }
  static std::optional<Document> One(const Collection& c, std::string_view filter) {
    auto d = c.FindOne(Json(filter));
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *d : std::nullopt;
  }
  static int64_t IntField(const std::optional<Document>& d, std::string_view field) {
    if (!d) return -1;
    Element e = d->view().Get(field);
    return e.ok() ? e.AsExactInt64().value_or(-1) : -1;
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(TransactionTest, CommittedWritesAppearTogetherAndNotBefore) {
  ASSERT_TRUE(Plain("a").InsertOne(Json(R"({"_id": 1, "v": 0})")).ok());
  Session s = NewSession();
  Collection a = s.GetDatabase("db").GetCollection("a");
  Collection b = s.GetDatabase("other").GetCollection("b");
  ASSERT_TRUE(s.StartTransaction().ok());
  EXPECT_TRUE(s.InTransaction());
  ASSERT_TRUE(a.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"v": 1}})")).ok());
  ASSERT_TRUE(a.InsertOne(Json(R"({"_id": 2, "v": 2})")).ok());
  ASSERT_TRUE(b.InsertOne(Json(R"({"_id": 1, "w": 1})")).ok());
  // The transaction sees its own writes...
  EXPECT_EQ(IntField(One(a, R"({"_id": 1})"), "v"), 1);
  EXPECT_EQ(Count(a), 2);
  EXPECT_EQ(Count(b), 1);
  // ...nobody else does yet.
  EXPECT_EQ(IntField(One(Plain("a"), R"({"_id": 1})"), "v"), 0);
  EXPECT_EQ(Count(Plain("a")), 1);
  EXPECT_EQ(Count(Plain("b", "other")), 0);
  ASSERT_TRUE(s.CommitTransaction().ok());
  EXPECT_FALSE(s.InTransaction());
  EXPECT_EQ(IntField(One(Plain("a"), R"({"_id": 1})"), "v"), 1);
  EXPECT_EQ(Count(Plain("a")), 2);
  EXPECT_EQ(Plain("a").EstimatedDocumentCount().value_or(-1), 2);
  EXPECT_EQ(Count(Plain("b", "other")), 1);
  auto v = Plain("a").Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid) << (v->errors.empty() ? "" : v->errors[0]);
}

TEST_F(TransactionTest, AbortDiscardsEverything) {
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1, "v": 0})")).ok());
  ASSERT_TRUE(Plain().CreateIndex(Json(R"({"v": 1})")).ok());
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 2, "v": 5})")).ok());
  ASSERT_TRUE(c.DeleteOne(Json(R"({"_id": 1})")).ok());
  EXPECT_EQ(Count(c), 1);
  ASSERT_TRUE(s.AbortTransaction().ok());
  EXPECT_EQ(Count(Plain()), 1);
  EXPECT_EQ(Count(Plain(), R"({"v": 5})"), 0);
  EXPECT_EQ(Plain().EstimatedDocumentCount().value_or(-1), 1);
  auto v = Plain().Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
  // The session goes on outside a transaction.
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 3})")).ok());
  EXPECT_EQ(Count(Plain()), 2);
}

TEST_F(TransactionTest, ReadsSeeTheSnapshotOfTheFirstOperation) {
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1, "v": 0})")).ok());
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  // Before the first operation: changes by others are still in the snapshot.
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 2})")).ok());
  EXPECT_EQ(Count(c), 2);  // first operation: the snapshot is taken here
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 3})")).ok());
  ASSERT_TRUE(Plain().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"v": 9}})")).ok());
  EXPECT_EQ(Count(c), 2);
  EXPECT_EQ(IntField(One(c, R"({"_id": 1})"), "v"), 0);
  auto by_id = c.FindById(Json(R"({"_id": 3})").view().Get("_id"));
  ASSERT_TRUE(by_id.ok());
  EXPECT_FALSE(by_id->has_value());
  auto distinct = c.Distinct("_id", Json("{}"));
  ASSERT_TRUE(distinct.ok());
  EXPECT_EQ(distinct->size(), 2u);
  ASSERT_TRUE(s.CommitTransaction().ok());
  EXPECT_EQ(Count(c), 3);  // outside the transaction again: the latest state
}

TEST_F(TransactionTest, WritingADocumentChangedSinceTheSnapshotIsAWriteConflict) {
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1, "v": 0})")).ok());
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  EXPECT_EQ(Count(c), 1);
  ASSERT_TRUE(Plain().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"v": 7}})")).ok());
  auto r = c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"v": 1}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kWriteConflict) << r.status();
  EXPECT_TRUE(r.status().HasErrorLabel("TransientTransactionError"));
  // The transaction is aborted: everything after fails, the commit too.
  auto again = c.InsertOne(Json(R"({"_id": 5})"));
  EXPECT_EQ(again.status().code(), ErrorCode::kNoSuchTransaction);
  EXPECT_TRUE(again.status().HasErrorLabel("TransientTransactionError"));
  Status commit = s.CommitTransaction();
  EXPECT_EQ(commit.code(), ErrorCode::kNoSuchTransaction);
  EXPECT_EQ(IntField(One(Plain(), R"({"_id": 1})"), "v"), 7);
  EXPECT_EQ(Count(Plain()), 1);
}

TEST_F(TransactionTest, TwoTransactionsWritingOneDocumentOneWins) {
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1, "v": 0})")).ok());
  Session s1 = NewSession(), s2 = NewSession();
  Collection c1 = s1.GetDatabase("db").GetCollection("c");
  Collection c2 = s2.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s1.StartTransaction().ok());
  ASSERT_TRUE(s2.StartTransaction().ok());
  ASSERT_TRUE(c1.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"v": 1}})")).ok());
  auto r2 = c2.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"v": 2}})"));
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.status().code(), ErrorCode::kWriteConflict);
  EXPECT_TRUE(r2.status().HasErrorLabel("TransientTransactionError"));
  ASSERT_TRUE(s1.CommitTransaction().ok());
  EXPECT_EQ(s2.CommitTransaction().code(), ErrorCode::kNoSuchTransaction);
  EXPECT_EQ(IntField(One(Plain(), R"({"_id": 1})"), "v"), 1);
}

TEST_F(TransactionTest, AWriteOutsideWaitsForTheTransaction) {
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1, "v": 0})")).ok());
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"v": 10}})")).ok());
  std::thread outside([&] {
    auto r = Plain().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"v": 1}})"));
    EXPECT_TRUE(r.ok()) << r.status();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(s.CommitTransaction().ok());
  outside.join();
  // Neither increment is lost, whichever order they landed in.
  EXPECT_EQ(IntField(One(Plain(), R"({"_id": 1})"), "v"), 11);
}

TEST_F(TransactionTest, UniqueIndexViolationAbortsTheTransaction) {
  ASSERT_TRUE(Plain().CreateIndex(Json(R"({"k": 1})"), UniqueIndex()).ok());
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1, "k": 1})")).ok());
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 2, "k": 2})")).ok());
  auto dup = c.InsertOne(Json(R"({"_id": 3, "k": 1})"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), ErrorCode::kDuplicateKey);
  EXPECT_FALSE(dup.status().HasErrorLabel("TransientTransactionError"));
  EXPECT_EQ(s.CommitTransaction().code(), ErrorCode::kNoSuchTransaction);
  EXPECT_EQ(Count(Plain()), 1);  // _id 2 went with the transaction
  // Within one transaction, its own earlier insert counts for uniqueness.
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 4, "k": 4})")).ok());
  auto own = c.InsertOne(Json(R"({"_id": 5, "k": 4})"));
  EXPECT_EQ(own.status().code(), ErrorCode::kDuplicateKey);
  ASSERT_TRUE(s.AbortTransaction().ok());
  auto v = Plain().Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
}

TEST_F(TransactionTest, InsertManyInATransactionFailsWhole) {
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  std::vector<Document> docs{Json(R"({"_id": 1})"), Json(R"({"_id": 1})"), Json(R"({"_id": 2})")};
  auto r = c.InsertMany(docs, InsertManyOptions{.ordered = false});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kDuplicateKey);
  EXPECT_EQ(s.CommitTransaction().code(), ErrorCode::kNoSuchTransaction);
  EXPECT_EQ(Count(Plain()), 0);
}

TEST_F(TransactionTest, UpsertsDeletesAndFindAndModifyInATransaction) {
  ASSERT_TRUE(Plain()
                  .InsertMany({Json(R"({"_id": 1, "v": 1})"), Json(R"({"_id": 2, "v": 2})"),
                               Json(R"({"_id": 3, "v": 3})")})
                  .ok());
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  auto up = c.UpdateOne(Json(R"({"_id": 9})"), Json(R"({"$set": {"v": 9}})"), Upsert());
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_TRUE(up->upserted_id.has_value());
  auto many = c.UpdateMany(Json(R"({"v": {"$lt": 3}})"), Json(R"({"$inc": {"v": 100}})"));
  ASSERT_TRUE(many.ok());
  EXPECT_EQ(many->modified_count, 2);
  auto del = c.DeleteMany(Json(R"({"v": 3})"));
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->deleted_count, 1);
  FindOneAndModifyOptions fam;
  fam.return_document = ReturnDocument::kAfter;
  auto fu = c.FindOneAndUpdate(Json(R"({"_id": 9})"), Json(R"({"$inc": {"v": 1}})"), fam);
  ASSERT_TRUE(fu.ok());
  EXPECT_EQ(IntField(*fu, "v"), 10);
  auto fd = c.FindOneAndDelete(Json(R"({"_id": 2})"));
  ASSERT_TRUE(fd.ok());
  EXPECT_EQ(IntField(*fd, "v"), 102);
  EXPECT_EQ(Count(c), 2);        // 1 and 9
  EXPECT_EQ(Count(Plain()), 3);  // untouched outside
  ASSERT_TRUE(s.CommitTransaction().ok());
  EXPECT_EQ(Count(Plain()), 2);
  EXPECT_EQ(IntField(One(Plain(), R"({"_id": 1})"), "v"), 101);
  EXPECT_EQ(IntField(One(Plain(), R"({"_id": 9})"), "v"), 10);
  EXPECT_EQ(Plain().EstimatedDocumentCount().value_or(-1), 2);
}

TEST_F(TransactionTest, CommandsThatCannotRunInATransaction) {
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1})")).ok());
  Session s = NewSession();
  Database db = s.GetDatabase("db");
  Collection c = db.GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  auto expect_263 = [](const Status& st, std::string_view what) {
    EXPECT_EQ(st.code(), ErrorCode::kOperationNotSupportedInTransaction) << what << ": " << st;
  };
  expect_263(c.DropIndexes(), "dropIndexes");
  expect_263(c.ListIndexes().status(), "listIndexes");
  expect_263(c.Drop(), "drop");
  expect_263(c.EstimatedDocumentCount().status(), "estimatedDocumentCount");
  expect_263(c.Validate().status(), "validate");
  expect_263(c.ExplainFind(Json("{}"), {}, ExplainVerbosity::kQueryPlanner).status(), "explain");
  expect_263(db.DropCollection("c"), "drop");
  expect_263(db.RenameCollection("c", "d"), "rename");
  expect_263(db.ListCollectionNames().status(), "listCollections");
  // Refused before anything ran: the transaction itself is still usable.
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 2})")).ok());
  ASSERT_TRUE(s.CommitTransaction().ok());
  EXPECT_EQ(Count(Plain()), 2);
  // Outside a transaction the same session runs them.
  EXPECT_TRUE(c.CreateIndex(Json(R"({"a": 1})")).ok());
  EXPECT_EQ(c.EstimatedDocumentCount().value_or(-1), 2);
}

TEST_F(TransactionTest, InsertingIntoAMissingCollectionCreatesIt) {
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("fresh");
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1})")).ok());
  EXPECT_EQ(Count(c), 1);
  ASSERT_TRUE(s.CommitTransaction().ok());
  EXPECT_EQ(Count(Plain("fresh")), 1);
}

bool Listed(const Client& client, std::string_view name) {
  auto names = client.GetDatabase("db").ListCollectionNames();
  EXPECT_TRUE(names.ok()) << names.status();
  return names.ok() && std::find(names->begin(), names->end(), name) != names->end();
}

// Issue #33.3: a collection a transaction creates (a first insert, or
// create) is the transaction's: no other reader sees it before the commit,
// and an abort leaves nothing of it, in memory or on disk.
TEST_F(TransactionTest, ACollectionCreatedInATransactionIsItsUntilCommit) {
  {
  Session s = NewSession();
  Database db = s.GetDatabase("db");
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(db.GetCollection("fresh").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(db.CreateCollection("made").ok());
  ASSERT_TRUE(db.GetCollection("made").InsertOne(Json(R"({"_id": 2})")).ok());
  EXPECT_EQ(Count(db.GetCollection("fresh")), 1);  // the transaction sees its own
  EXPECT_FALSE(Listed(*client_, "fresh"));
  EXPECT_FALSE(Listed(*client_, "made"));
  EXPECT_EQ(Count(Plain("fresh")), 0);
  // It exists for the transaction (an error, which aborts it).
  EXPECT_EQ(db.CreateCollection("made").code(), ErrorCode::kNamespaceExists);
  ASSERT_TRUE(s.AbortTransaction().ok());
  EXPECT_FALSE(Listed(*client_, "fresh"));
  EXPECT_FALSE(Listed(*client_, "made"));
  }
  Open(ClientOptions());  // nor on disk
  EXPECT_FALSE(Listed(*client_, "fresh"));
  EXPECT_FALSE(Listed(*client_, "made"));

  // Committed, they are everyone's, and stay.
  {
  Session t = NewSession();
  Database db = t.GetDatabase("db");
  ASSERT_TRUE(t.StartTransaction().ok());
  ASSERT_TRUE(db.GetCollection("fresh").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(db.CreateCollection("made").ok());
  // Nor a view or a capped collection (refused before anything runs).
  EXPECT_EQ(db.CreateView("v", "fresh", Json("{}")).code(),
            ErrorCode::kOperationNotSupportedInTransaction);
  EXPECT_EQ(db.CreateCollection("capped", test::CappedOptions(4096)).code(),
            ErrorCode::kOperationNotSupportedInTransaction);
  ASSERT_TRUE(t.CommitTransaction().ok());
  EXPECT_TRUE(Listed(*client_, "fresh"));
  EXPECT_TRUE(Listed(*client_, "made"));
  EXPECT_EQ(Count(Plain("fresh")), 1);
  }
  Open(ClientOptions());
  EXPECT_TRUE(Listed(*client_, "made"));
  EXPECT_EQ(Count(Plain("fresh")), 1);
}

// createIndexes in a transaction: on a collection the transaction creates
// (or created and left empty), as MongoDB 4.4+; the index is the
// transaction's with the collection. On any other, 263.
TEST_F(TransactionTest, IndexesOnACollectionCreatedInTheTransaction) {
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1})")).ok());
  {
    Session s = NewSession();
    Collection ix = s.GetDatabase("db").GetCollection("ix");
    ASSERT_TRUE(s.StartTransaction().ok());
    auto name = ix.CreateIndex(Json(R"({"a": 1})"));
    ASSERT_TRUE(name.ok()) << name.status();
    ASSERT_TRUE(ix.InsertOne(Json(R"({"_id": 1, "a": 5})")).ok());
    EXPECT_FALSE(Listed(*client_, "ix"));
    ASSERT_TRUE(s.AbortTransaction().ok());
    EXPECT_FALSE(Listed(*client_, "ix"));

    ASSERT_TRUE(s.StartTransaction().ok());
    ASSERT_TRUE(s.GetDatabase("db").CreateCollection("ix").ok());
    ASSERT_TRUE(ix.CreateIndex(Json(R"({"a": 1})")).ok());
    ASSERT_TRUE(ix.InsertOne(Json(R"({"_id": 1, "a": 5})")).ok());
    ASSERT_TRUE(s.CommitTransaction().ok());
  }
  // The index was kept up by the transaction's insert, and survives a reopen.
  Open(ClientOptions());
  auto indexes = Plain("ix").ListIndexes();
  ASSERT_TRUE(indexes.ok()) << indexes.status();
  ASSERT_EQ(indexes->size(), 2u);
  EXPECT_EQ((*indexes)[1].view().Get("name").String(), "a_1");
  FindOptions by_a;
  by_a.hint = Json(R"({"a": 1})");
  auto cursor = Plain("ix").Find(Json(R"({"a": 5})"), by_a);
  ASSERT_TRUE(cursor.ok()) << cursor.status();
  ASSERT_TRUE(cursor->Next()) << cursor->status();
  EXPECT_EQ(cursor->document().Get("_id").Int32(), 1);
  auto valid = Plain("ix").Validate();
  ASSERT_TRUE(valid.ok());
  EXPECT_TRUE(valid->valid);

  // An existing collection, or one the transaction created and wrote to.
  Session t = NewSession();
  ASSERT_TRUE(t.StartTransaction().ok());
  Status existing = t.GetDatabase("db").GetCollection("c").CreateIndex(Json(R"({"b": 1})")).status();
  EXPECT_EQ(existing.code(), ErrorCode::kOperationNotSupportedInTransaction) << existing;
  EXPECT_EQ(existing.message(),
            "Cannot create new indexes on existing collection db.c in a multi-document transaction.");
  t.AbortTransaction().IgnoreError();
  ASSERT_TRUE(t.StartTransaction().ok());
  Collection written = t.GetDatabase("db").GetCollection("written");
  ASSERT_TRUE(written.InsertOne(Json(R"({"_id": 1})")).ok());
  EXPECT_EQ(written.CreateIndex(Json(R"({"b": 1})")).status().code(),
            ErrorCode::kOperationNotSupportedInTransaction);
  t.AbortTransaction().IgnoreError();
  EXPECT_EQ(Plain().ListIndexes()->size(), 1u);
}

// Two creators of one name while the first transaction is open: the second
// gets WriteConflict (112), TransientTransactionError in a transaction, and
// succeeds once the first has committed.
TEST_F(TransactionTest, TwoTransactionsCreatingOneCollectionOneWins) {
  Session first = NewSession();
  Session second = NewSession();
  ASSERT_TRUE(first.StartTransaction().ok());
  ASSERT_TRUE(first.GetDatabase("db").GetCollection("n").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(second.StartTransaction().ok());
  Status lost = second.GetDatabase("db").GetCollection("n").InsertOne(Json(R"({"_id": 2})")).status();
  EXPECT_EQ(lost.code(), ErrorCode::kWriteConflict) << lost;
  EXPECT_TRUE(lost.HasErrorLabel("TransientTransactionError")) << lost;
  // The loser's transaction is aborted; a third creator, by create, loses too.
  Session third = NewSession();
  ASSERT_TRUE(third.StartTransaction().ok());
  EXPECT_EQ(third.GetDatabase("db").CreateCollection("n").code(), ErrorCode::kWriteConflict);
  third.AbortTransaction().IgnoreError();
  // Outside a transaction too, until the first ends.
  EXPECT_EQ(Plain("n").InsertOne(Json(R"({"_id": 3})")).status().code(), ErrorCode::kWriteConflict);
  second.AbortTransaction().IgnoreError();
  ASSERT_TRUE(first.CommitTransaction().ok());
  // The loser's retry finds the collection.
  ASSERT_TRUE(second.StartTransaction().ok());
  ASSERT_TRUE(second.GetDatabase("db").GetCollection("n").InsertOne(Json(R"({"_id": 2})")).ok());
  ASSERT_TRUE(second.CommitTransaction().ok());
  EXPECT_EQ(Count(Plain("n")), 2);
}

TEST_F(TransactionTest, TheDriversStateMachine) {
  Session s = NewSession();
  auto is_illegal = [](const Status& st, std::string_view text) {
    EXPECT_EQ(st.code(), ErrorCode::kIllegalOperation) << st;
    EXPECT_NE(st.message().find(text), std::string_view::npos) << st;
  };
  is_illegal(s.CommitTransaction(), "No transaction started");
  is_illegal(s.AbortTransaction(), "No transaction started");
  ASSERT_TRUE(s.StartTransaction().ok());
  is_illegal(s.StartTransaction(), "Transaction already in progress");
  // A transaction with no operation commits as nothing.
  ASSERT_TRUE(s.CommitTransaction().ok());
  ASSERT_TRUE(s.CommitTransaction().ok());  // a retried commit
  is_illegal(s.AbortTransaction(), "Cannot call abortTransaction after calling commitTransaction");
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(s.AbortTransaction().ok());
  is_illegal(s.AbortTransaction(), "Cannot call abortTransaction twice");
  is_illegal(s.CommitTransaction(), "Cannot call commitTransaction after calling abortTransaction");
  // A new transaction may follow either.
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(s.GetDatabase("db").GetCollection("c").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(s.CommitTransaction().ok());
  ASSERT_TRUE(s.EndSession().ok());
  is_illegal(s.StartTransaction(), "ended");
  is_illegal(s.GetDatabase("db").GetCollection("c").InsertOne(Json("{}")).status(), "ended");
  EXPECT_EQ(Count(Plain()), 1);
}

TEST_F(TransactionTest, EndingASessionAbortsItsTransaction) {
  {
    Session s = NewSession();
    ASSERT_TRUE(s.StartTransaction().ok());
    ASSERT_TRUE(s.GetDatabase("db").GetCollection("c").InsertOne(Json(R"({"_id": 1})")).ok());
  }  // destroyed
  EXPECT_EQ(Count(Plain()), 0);
  Session s = NewSession();
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(s.GetDatabase("db").GetCollection("c").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(s.EndSession().ok());
  EXPECT_EQ(Count(Plain()), 0);
  // Its locks went with it.
  EXPECT_TRUE(Plain().InsertOne(Json(R"({"_id": 1})")).ok());
}

TEST_F(TransactionTest, ALifetimePastTheLimitAbortsTheTransaction) {
  ClientOptions options;
  options.transaction_lifetime_limit_ms = 100;
  Open(options);
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1, "v": 0})")).ok());
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"v": 1}})")).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Past its lifetime another writer may take the document.
  auto other = Plain().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"v": 2}})"));
  EXPECT_TRUE(other.ok()) << other.status();
  auto late = c.InsertOne(Json(R"({"_id": 2})"));
  EXPECT_EQ(late.status().code(), ErrorCode::kNoSuchTransaction) << late.status();
  Status commit = s.CommitTransaction();
  EXPECT_EQ(commit.code(), ErrorCode::kNoSuchTransaction) << commit;
  EXPECT_TRUE(commit.HasErrorLabel("TransientTransactionError"));
  EXPECT_EQ(IntField(One(Plain(), R"({"_id": 1})"), "v"), 2);
  EXPECT_EQ(Count(Plain()), 1);
}

TEST_F(TransactionTest, CursorsOfATransactionEndWithIt) {
  ASSERT_TRUE(Plain()
                  .InsertMany({Json(R"({"_id": 1})"), Json(R"({"_id": 2})"), Json(R"({"_id": 3})")})
                  .ok());
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(s.StartTransaction().ok());
  auto cursor = c.Find(Json("{}"));
  ASSERT_TRUE(cursor.ok());
  ASSERT_TRUE(cursor->Next());
  ASSERT_TRUE(s.CommitTransaction().ok());
  EXPECT_FALSE(cursor->Next());
  EXPECT_EQ(cursor->status().code(), ErrorCode::kCursorNotFound) << cursor->status();
}

TEST_F(TransactionTest, WithTransactionCommitsRetriesAndAborts) {
  ASSERT_TRUE(Plain().InsertOne(Json(R"({"_id": 1, "v": 0})")).ok());
  Session s = NewSession();
  Collection c = s.GetDatabase("db").GetCollection("c");
  int calls = 0;
  Status st = s.WithTransaction([&](Session&) -> Status {
    ++calls;
    ROCKDOC_RETURN_IF_ERROR(
        c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"v": 1}})")).status());
    if (calls == 1) {
      // Someone else changes the document under the first attempt: its
      // commit cannot stand, and the helper runs the function again.
      auto r = Plain().UpdateOne(Json(R"({"_id": 2})"), Json(R"({"$set": {"x": 1}})"), Upsert());
      if (!r.ok()) return r.status();
      return Status(ErrorCode::kWriteConflict, "simulated")
          .WithErrorLabel("TransientTransactionError");
    }
    return Status::OK();
  });
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(IntField(One(Plain(), R"({"_id": 1})"), "v"), 1);  // once, not twice
  // A non-transient error aborts and is returned as it is.
  st = s.WithTransaction([&](Session&) -> Status {
    ROCKDOC_RETURN_IF_ERROR(c.InsertOne(Json(R"({"_id": 3})")).status());
    return BadValue("insufficient funds");
  });
  EXPECT_EQ(st.code(), ErrorCode::kBadValue);
  EXPECT_FALSE(s.InTransaction());
  EXPECT_EQ(Count(Plain(), R"({"_id": 3})"), 0);
}

TEST_F(TransactionTest, SnapshotSessionsReadOnePointInTime) {
  ASSERT_TRUE(Plain("a").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(Plain("b").InsertOne(Json(R"({"_id": 1})")).ok());
  Session s = NewSession(SessionOptions{.snapshot = true});
  Collection a = s.GetDatabase("db").GetCollection("a");
  Collection b = s.GetDatabase("db").GetCollection("b");
  EXPECT_EQ(Count(a), 1);  // the snapshot is taken at the first read
  ASSERT_TRUE(Plain("a").InsertOne(Json(R"({"_id": 2})")).ok());
  ASSERT_TRUE(Plain("b").DeleteOne(Json(R"({"_id": 1})")).ok());
  EXPECT_EQ(Count(a), 1);
  EXPECT_EQ(a.EstimatedDocumentCount().value_or(-1), 1);
  EXPECT_EQ(Count(b), 1);
  EXPECT_TRUE(One(b, R"({"_id": 1})").has_value());
  auto write = a.InsertOne(Json(R"({"_id": 3})"));
  EXPECT_EQ(write.status().code(), ErrorCode::kInvalidOptions) << write.status();
  EXPECT_EQ(s.StartTransaction().code(), ErrorCode::kIllegalOperation);
  EXPECT_EQ(Count(Plain("a")), 2);
}

TEST_F(TransactionTest, CloseWithAnOpenTransactionLosesItCleanly) {
  Session s = NewSession();
  ASSERT_TRUE(s.StartTransaction().ok());
  ASSERT_TRUE(s.GetDatabase("db").GetCollection("c").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(client_->Close().ok());
  auto insert = s.GetDatabase("db").GetCollection("c").InsertOne(Json("{}"));
  ASSERT_FALSE(insert.ok());
  EXPECT_EQ(insert.status().code(), ErrorCode::kIllegalOperation) << insert.status();
  Status commit = s.CommitTransaction();
  EXPECT_EQ(commit.code(), ErrorCode::kIllegalOperation) << commit;
  Open(ClientOptions());
  EXPECT_EQ(Count(Plain()), 0);
}

TEST(StatusLabelsTest, LabelsAreKeptOnceAndThroughContext) {
  Status s = Status(ErrorCode::kWriteConflict, "x").WithErrorLabel("TransientTransactionError");
  s = s.WithErrorLabel("TransientTransactionError");
  ASSERT_EQ(s.error_labels().size(), 1u);
  EXPECT_TRUE(s.WithContext("ctx").HasErrorLabel("TransientTransactionError"));
  EXPECT_FALSE(Status::OK().HasErrorLabel("TransientTransactionError"));
  EXPECT_EQ(ErrorCodeName(ErrorCode::kNoSuchTransaction), "NoSuchTransaction");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kOperationNotSupportedInTransaction),
            "OperationNotSupportedInTransaction");
}

}  // namespace
}  // namespace rockdoc

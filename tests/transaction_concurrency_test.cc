// Multi-document transactions under concurrency (client.h, class Session):
// isolation (no reader ever sees part of a transaction), conflicts (of two
// transactions writing one document, exactly one commits), and a
// bank-transfer invariant (money moved between accounts by many threads in
// transactions is never created or lost).
//
// No timing is asserted: threads are lined up at barriers so that they
// really contend, and every check is on an invariant that holds for any
// correct interleaving.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

Document Account(int64_t id, int64_t balance) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  b.AppendInt64("balance", balance);
  return std::move(b).Build();
}

Document IdFilter(int64_t id) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  return std::move(b).Build();
}

Document IncBalance(int64_t delta) {
  BsonBuilder b;
  b.OpenDocument("$inc");
  b.AppendInt64("balance", delta);
  b.Close();
  return std::move(b).Build();
}

class TransactionConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.path());
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Session NewSession(const SessionOptions& options = {}) const {
    auto s = client_->StartSession(options);
    EXPECT_TRUE(s.ok()) << s.status();
    return std::move(s).value();
  }
  // Sum and count of field `field` over every document of `c`.
  static std::pair<int64_t, int64_t> SumOf(const Collection& c, std::string_view field) {
    auto cursor = c.Find(Json("{}"));
    EXPECT_TRUE(cursor.ok());
    int64_t sum = 0, n = 0;
    while (cursor->Next()) {
      int64_t v = 0;
      EXPECT_TRUE(cursor->document().Get(field).ExactInt64(&v));
      sum += v;
      ++n;
    }
    EXPECT_TRUE(cursor->status().ok()) << cursor->status();
    return {sum, n};
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

// Money moves between accounts in two collections of two databases, one
// transfer per transaction; readers outside transactions, in snapshot
// sessions and inside read-only transactions check the total all along.
TEST_F(TransactionConcurrencyTest, BankTransfersKeepTheTotalExact) {
  constexpr int kAccounts = 20;  // half in bank.a, half in other.b
  constexpr int64_t kInitial = 1000;
  constexpr int kWriters = 4, kTransfersEach = 300, kReaders = 2;
  Collection a = client_->GetDatabase("bank").GetCollection("a");
  Collection b = client_->GetDatabase("other").GetCollection("b");
  for (int i = 0; i < kAccounts; ++i) {
    ASSERT_TRUE((i % 2 == 0 ? a : b).InsertOne(Account(i, kInitial)).ok());
  }
  const int64_t total = kAccounts * kInitial;

  std::atomic<int64_t> committed{0}, refused{0}, failures{0}, bad_reads{0}, reads{0};
  std::atomic<bool> writing{true};
  std::barrier start(kWriters + kReaders);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      Session s = NewSession();
      Collection sa = s.GetDatabase("bank").GetCollection("a");
      Collection sb = s.GetDatabase("other").GetCollection("b");
      auto account = [&](int i) -> Collection& { return i % 2 == 0 ? sa : sb; };
      std::mt19937 rng(1234 + w);
      start.arrive_and_wait();
      for (int t = 0; t < kTransfersEach; ++t) {
        int from = static_cast<int>(rng() % kAccounts);
        int to = static_cast<int>(rng() % kAccounts);
        if (to == from) to = (to + 1) % kAccounts;
        int64_t amount = 1 + static_cast<int64_t>(rng() % 200);
        bool insufficient = false;
        Status st = s.WithTransaction([&](Session&) -> Status {
          insufficient = false;
          auto doc = account(from).FindOne(IdFilter(from));
          if (!doc.ok()) return doc.status();
          int64_t balance = 0;
          if (!*doc || !(**doc).Get("balance").ExactInt64(&balance)) {
            return InternalError("account missing");
          }
          if (balance < amount) {
            insufficient = true;  // aborted on purpose: leaves nothing behind
            return Status(ErrorCode::kBadValue, "insufficient funds");
          }
          ROCKDOC_RETURN_IF_ERROR(
              account(from).UpdateOne(IdFilter(from), IncBalance(-amount)).status());
          ROCKDOC_RETURN_IF_ERROR(
              account(to).UpdateOne(IdFilter(to), IncBalance(amount)).status());
          return Status::OK();
        });
        if (st.ok()) {
          ++committed;
        } else if (insufficient && st.code() == ErrorCode::kBadValue) {
          ++refused;
        } else {
          ++failures;
          ADD_FAILURE() << st;
        }
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      start.arrive_and_wait();
      while (writing.load()) {
        int64_t sum = 0;
        if (r == 0) {
          // A snapshot session: both collections at one point in time.
          Session s = NewSession(SessionOptions{.snapshot = true});
          sum = SumOf(s.GetDatabase("bank").GetCollection("a"), "balance").first +
                SumOf(s.GetDatabase("other").GetCollection("b"), "balance").first;
        } else {
          // A read-only transaction: its snapshot too.
          Session s = NewSession();
          if (!s.StartTransaction().ok()) ++bad_reads;
          sum = SumOf(s.GetDatabase("bank").GetCollection("a"), "balance").first +
                SumOf(s.GetDatabase("other").GetCollection("b"), "balance").first;
          if (!s.CommitTransaction().ok()) ++bad_reads;
        }
        ++reads;
        if (sum != total) ++bad_reads;
      }
    });
  }
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  writing = false;
  for (size_t i = kWriters; i < threads.size(); ++i) threads[i].join();

  std::cout << committed.load() << " transfers committed, " << refused.load() << " refused, "
            << reads.load() << " total checks\n";
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(bad_reads.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_EQ(committed.load() + refused.load(), int64_t{kWriters} * kTransfersEach);
  EXPECT_GT(committed.load(), 0);
  auto [sa, na] = SumOf(a, "balance");
  auto [sb, nb] = SumOf(b, "balance");
  EXPECT_EQ(sa + sb, total);
  EXPECT_EQ(na + nb, kAccounts);
  for (const Collection& c : {a, b}) {
    auto v = c.Validate();
    ASSERT_TRUE(v.ok());
    EXPECT_TRUE(v->valid);
  }
}

// Two transactions update the same document: exactly one commits, the
// other gets WriteConflict labelled TransientTransactionError, and the
// document holds the winner's value. Many rounds, both orders.
TEST_F(TransactionConcurrencyTest, OfTwoConflictingTransactionsExactlyOneCommits) {
  constexpr int kRounds = 200;
  Collection c = client_->GetDatabase("db").GetCollection("c");
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1, "v": 0})")).ok());
  int64_t conflicted_rounds = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::barrier start(2);
    std::atomic<int> commits{0}, conflicts{0}, other{0};
    std::atomic<int> winner{-1};
    auto run = [&](int who) {
      Session s = NewSession();
      Collection sc = s.GetDatabase("db").GetCollection("c");
      start.arrive_and_wait();
      if (!s.StartTransaction().ok()) ++other;
      BsonBuilder set;
      set.OpenDocument("$set");
      set.AppendInt32("v", round * 10 + who);
      set.Close();
      auto r = sc.UpdateOne(Json(R"({"_id": 1})"), std::move(set).Build());
      Status st = r.ok() ? s.CommitTransaction() : r.status();
      if (st.ok()) {
        ++commits;
        winner = who;
      } else if (st.code() == ErrorCode::kWriteConflict &&
                 st.HasErrorLabel("TransientTransactionError")) {
        ++conflicts;
        if (s.InTransaction()) s.AbortTransaction().IgnoreError();
      } else if (st.code() == ErrorCode::kNoSuchTransaction) {
        ++conflicts;  // the conflict reported at commit
      } else {
        ++other;
        ADD_FAILURE() << st;
      }
    };
    std::thread t1(run, 1), t2(run, 2);
    t1.join();
    t2.join();
    EXPECT_EQ(other.load(), 0);
    // Both may commit only if they did not overlap (one finished before
    // the other's snapshot): then the later one wins.
    ASSERT_GE(commits.load(), 1) << "round " << round;
    EXPECT_EQ(commits.load() + conflicts.load(), 2);
    auto doc = c.FindOne(Json(R"({"_id": 1})"));
    ASSERT_TRUE(doc.ok() && doc->has_value());
    int64_t v = 0;
    ASSERT_TRUE((**doc).Get("v").ExactInt64(&v));
    if (commits.load() == 1) EXPECT_EQ(v, round * 10 + winner.load()) << "round " << round;
    if (conflicts.load() > 0) ++conflicted_rounds;
  }
  std::cout << conflicted_rounds << " of " << kRounds << " rounds conflicted\n";
}

// Readers outside transactions see each transaction's K documents all old
// or all new, never a mix (reads take one snapshot per find).
TEST_F(TransactionConcurrencyTest, ReadersNeverSeePartOfATransaction) {
  constexpr int kDocs = 8, kTransactions = 300, kReaders = 2;
  Collection c = client_->GetDatabase("db").GetCollection("c");
  for (int i = 0; i < kDocs; ++i) {
    BsonBuilder d;
    d.AppendInt32("_id", i);
    d.AppendInt32("gen", 0);
    ASSERT_TRUE(c.InsertOne(std::move(d).Build()).ok());
  }
  std::atomic<bool> done{false};
  std::atomic<int64_t> mixed{0}, reads{0};
  std::barrier start(1 + kReaders);
  std::thread writer([&] {
    Session s = NewSession();
    Collection sc = s.GetDatabase("db").GetCollection("c");
    start.arrive_and_wait();
    for (int gen = 1; gen <= kTransactions; ++gen) {
      BsonBuilder set;
      set.OpenDocument("$set");
      set.AppendInt32("gen", gen);
      set.Close();
      Document update = std::move(set).Build();
      Status st = s.WithTransaction([&](Session&) -> Status {
        // One document at a time, so that a partial state exists inside.
        for (int i = 0; i < kDocs; ++i) {
          BsonBuilder f;
          f.AppendInt32("_id", i);
          ROCKDOC_RETURN_IF_ERROR(sc.UpdateOne(std::move(f).Build(), update).status());
        }
        return Status::OK();
      });
      EXPECT_TRUE(st.ok()) << st;
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&] {
      start.arrive_and_wait();
      while (!done.load()) {
        auto cursor = c.Find(Json("{}"));
        ASSERT_TRUE(cursor.ok());
        int64_t first = -1;
        bool mix = false;
        while (cursor->Next()) {
          int64_t g = 0;
          cursor->document().Get("gen").ExactInt64(&g);
          if (first < 0) first = g;
          if (g != first) mix = true;
        }
        ++reads;
        if (mix) ++mixed;
      }
    });
  }
  writer.join();
  for (auto& t : readers) t.join();
  std::cout << reads.load() << " reads during " << kTransactions << " transactions\n";
  EXPECT_EQ(mixed.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 0);
}

// Two transactions insert the same unique key: at most one commits.
TEST_F(TransactionConcurrencyTest, AUniqueKeyIsTakenByAtMostOneTransaction) {
  constexpr int kRounds = 100;
  Collection c = client_->GetDatabase("db").GetCollection("c");
  IndexOptions unique;
  unique.unique = true;
  ASSERT_TRUE(c.CreateIndex(Json(R"({"k": 1})"), unique).ok());
  for (int round = 0; round < kRounds; ++round) {
    std::barrier start(2);
    std::atomic<int> commits{0};
    auto run = [&](int who) {
      Session s = NewSession();
      Collection sc = s.GetDatabase("db").GetCollection("c");
      start.arrive_and_wait();
      ASSERT_TRUE(s.StartTransaction().ok());
      BsonBuilder d;
      d.AppendInt32("_id", round * 10 + who);
      d.AppendInt32("k", round);
      auto r = sc.InsertOne(std::move(d).Build());
      if (r.ok() && s.CommitTransaction().ok()) ++commits;
      if (s.InTransaction()) s.AbortTransaction().IgnoreError();
    };
    std::thread t1(run, 1), t2(run, 2);
    t1.join();
    t2.join();
    EXPECT_EQ(commits.load(), 1) << "round " << round;
  }
  auto n = c.CountDocuments(Json("{}"));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, kRounds);
  auto v = c.Validate();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->valid);
}

}  // namespace
}  // namespace rockdoc

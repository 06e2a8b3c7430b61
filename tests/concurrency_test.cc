// Concurrency of the storage layer, through the public API: many threads on
// one Client. What must hold (client.h): a read-modify-write of a document
// holds its lock, so no increment is lost; concurrent inserts lose nothing
// and a contested _id has exactly one winner; a cursor reads one snapshot;
// the stored count stays exact whatever the interleaving.
//
// No timings are asserted: threads are lined up at a barrier so that they
// really contend, and every check is on the final state or on bounds that
// hold for any correct interleaving.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

constexpr int kThreads = 8;

Document IdDoc(int64_t id, std::string_view field = "", int64_t value = 0) {
  BsonBuilder b;
  b.AppendInt64("_id", id);
  if (!field.empty()) b.AppendInt64(field, value);
  return std::move(b).Build();
}

// Collection::UpdateOne(filter, update, options) is being added to client.h;
// this compiles with or without it, and the test skips until it is there.
template <typename C>
StatusOr<UpdateResult> UpdateOneIfAvailable(const C& coll, DocumentView filter,
                                            DocumentView update) {
  if constexpr (requires { coll.UpdateOne(filter, update); }) {
    return coll.UpdateOne(filter, update);
  } else {
    return Status(ErrorCode::kNotImplemented, "Collection::UpdateOne is not in this build yet");
  }
}

class ConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Client::Open(dir_.path());
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Collection Coll(std::string_view name = "c") const {
    return client_->GetDatabase("db").GetCollection(name);
  }
  int64_t Count(const Collection& c) const { return c.EstimatedDocumentCount().value_or(-1); }
  int64_t ScanCount(const Collection& c) const { return c.CountDocuments(Document()).value_or(-1); }
  void ExpectValid(const Collection& c) const {
    auto v = c.Validate();
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(v->valid) << (v->errors.empty() ? "" : v->errors[0]);
  }

  test::ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

TEST_F(ConcurrencyTest, ConcurrentIncrementsOfOneDocumentAreNeverLost) {
  constexpr int kIncrements = 10000;
  Collection c = Coll();
  ASSERT_TRUE(c.InsertOne(IdDoc(1, "n", 0)).ok());
  Document filter = Json(R"({"_id": 1})");
  Document inc = Json(R"({"$inc": {"n": 1}})");
  auto probe = UpdateOneIfAvailable(c, filter, Json(R"({"$inc": {"n": 0}})"));
  if (probe.status().code() == ErrorCode::kNotImplemented) {
    GTEST_SKIP() << probe.status();
  }
  ASSERT_TRUE(probe.ok()) << probe.status();

  std::atomic<int64_t> failures{0}, not_modified{0};
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < kIncrements; ++i) {
        auto r = UpdateOneIfAvailable(c, filter, inc);
        if (!r.ok()) {
          ++failures;
        } else if (r->matched_count != 1 || r->modified_count != 1) {
          ++not_modified;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(not_modified.load(), 0);
  BsonBuilder id;
  id.AppendInt64("", 1);
  Document id_doc = std::move(id).Build();
  auto doc = c.FindById(*id_doc.begin());
  ASSERT_TRUE(doc.ok() && doc->has_value());
  int64_t n = 0;
  ASSERT_TRUE((*doc)->Get("n").ExactInt64(&n));
  EXPECT_EQ(n, int64_t{kThreads} * kIncrements);
  EXPECT_EQ(Count(c), 1);
}

TEST_F(ConcurrencyTest, ConcurrentInsertsOfDistinctDocumentsLoseNone) {
  constexpr int kPerThread = 5000;
  Collection c = Coll();
  std::atomic<int64_t> failures{0};
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      // Interleaved ids, so that threads write next to each other; half the
      // threads insert one by one, half in small batches.
      std::vector<Document> batch;
      for (int i = 0; i < kPerThread; ++i) {
        Document d = IdDoc(int64_t{i} * kThreads + t, "t", t);
        if (t % 2 == 0) {
          if (!c.InsertOne(d).ok()) ++failures;
          continue;
        }
        batch.push_back(std::move(d));
        if (batch.size() == 100 || i == kPerThread - 1) {
          auto r = c.InsertMany(batch);
          if (!r.ok() || !r->ok() || r->inserted_count() != batch.size()) ++failures;
          batch.clear();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const int64_t total = int64_t{kThreads} * kPerThread;
  EXPECT_EQ(Count(c), total);
  auto cursor = c.Find(Document());
  ASSERT_TRUE(cursor.ok());
  int64_t expected = 0;
  while (cursor->Next()) {
    DocumentView d = cursor->document();
    ASSERT_EQ(d.Get("_id").Int64(), expected);
    ASSERT_EQ(d.Get("t").Int64(), expected % kThreads);
    ++expected;
  }
  EXPECT_TRUE(cursor->status().ok());
  EXPECT_EQ(expected, total);
  ExpectValid(c);
}

TEST_F(ConcurrencyTest, ConcurrentInsertsOfTheSameIdHaveExactlyOneWinner) {
  constexpr int kRounds = 200;
  Collection c = Coll();
  std::barrier start(kThreads);
  std::vector<int> winners(kRounds, 0);
  std::vector<int> duplicates(kRounds, 0);
  std::vector<int> others(kRounds, 0);
  std::vector<int> winner_thread(kRounds, -1);
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        start.arrive_and_wait();
        auto r = c.InsertOne(IdDoc(round, "thread", t));
        std::lock_guard<std::mutex> g(mu);
        if (r.ok()) {
          ++winners[round];
          winner_thread[round] = t;
        } else if (r.status().code() == ErrorCode::kDuplicateKey) {
          ++duplicates[round];
        } else {
          ++others[round];
          ADD_FAILURE() << r.status();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    EXPECT_EQ(winners[round], 1);
    EXPECT_EQ(duplicates[round], kThreads - 1);
    EXPECT_EQ(others[round], 0);
    BsonBuilder id;
    id.AppendInt64("", round);
    Document id_doc = std::move(id).Build();
    auto doc = c.FindById(*id_doc.begin());
    ASSERT_TRUE(doc.ok() && doc->has_value());
    // The stored document is the winner's.
    EXPECT_EQ((*doc)->Get("thread").Int64(), winner_thread[round]);
  }
  EXPECT_EQ(Count(c), kRounds);
  EXPECT_EQ(ScanCount(c), kRounds);
}

TEST_F(ConcurrencyTest, ConcurrentDeletesOfTheSameDocumentsCountOnce) {
  constexpr int kDocs = 2000;
  Collection c = Coll();
  std::vector<Document> docs;
  for (int i = 0; i < kDocs; ++i) docs.push_back(IdDoc(i));
  ASSERT_TRUE(c.InsertMany(docs)->ok());
  std::atomic<int64_t> deleted{0}, failures{0};
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < kDocs; ++i) {
        BsonBuilder f;
        f.AppendInt64("_id", i);
        auto r = c.DeleteOne(std::move(f).Build());
        if (!r.ok()) {
          ++failures;
        } else {
          deleted += r->deleted_count;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(deleted.load(), kDocs);
  EXPECT_EQ(Count(c), 0);
  EXPECT_EQ(ScanCount(c), 0);
  ExpectValid(c);
}

// Upserts of one _id from many threads: MongoDB retries an upsert that lost
// the race to insert, so every caller succeeds and exactly one inserts.
TEST_F(ConcurrencyTest, ConcurrentUpsertsOfOneIdInsertOnce) {
  constexpr int kRounds = 100;
  Collection c = Coll();
  std::barrier start(kThreads);
  std::atomic<int64_t> upserted{0}, matched{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        start.arrive_and_wait();
        BsonBuilder f;
        f.AppendInt64("_id", round);
        auto r = c.ReplaceOne(std::move(f).Build(), IdDoc(round, "t", t).view(), /*upsert=*/true);
        if (!r.ok()) {
          ++failures;
          continue;
        }
        if (r->upserted_id.has_value()) ++upserted;
        matched += r->matched_count;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(upserted.load(), kRounds);
  EXPECT_EQ(matched.load(), int64_t{kRounds} * (kThreads - 1));
  EXPECT_EQ(Count(c), kRounds);
  EXPECT_EQ(ScanCount(c), kRounds);
}

// A cursor reads the snapshot taken when it was opened. Writers insert and
// delete documents all through the key range while a reader scans slowly;
// the number of documents the cursor returns must lie between what had
// certainly committed before Find and what could have committed by then.
// A cursor that saw later writes would drift past those bounds, since it
// waits mid-scan for hundreds more writes to land ahead of it.
TEST_F(ConcurrencyTest, CursorSeesOneSnapshotWhileWritersWrite) {
  constexpr int64_t kBase = 20000;  // even _ids 0, 2, ..., 2 * (kBase - 1)
  constexpr int kWriters = 4;
  Collection c = Coll();
  std::vector<Document> docs;
  for (int64_t i = 0; i < kBase; ++i) docs.push_back(IdDoc(2 * i, "w", 6 * i));
  ASSERT_TRUE(c.InsertMany(docs)->ok());

  std::atomic<int64_t> ins_started{0}, ins_done{0}, del_started{0}, del_done{0};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> writer_failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      std::vector<int64_t> mine;  // odd ids this writer inserted and not yet deleted
      std::set<int64_t> used;
      while (!stop.load()) {
        if (!mine.empty() && rng() % 3 == 0) {
          size_t pick = rng() % mine.size();
          int64_t id = mine[pick];
          mine[pick] = mine.back();
          mine.pop_back();
          ++del_started;
          BsonBuilder f;
          f.AppendInt64("_id", id);
          auto r = c.DeleteOne(std::move(f).Build());
          if (r.ok() && r->deleted_count == 1) {
            ++del_done;
          } else {
            ++writer_failures;
          }
        } else {
          // Odd ids, disjoint between writers, anywhere in the range.
          int64_t id = 2 * static_cast<int64_t>(rng() % kBase) + 1;
          id = id - id % (2 * kWriters) + 2 * t + 1;
          if (!used.insert(id).second) continue;
          ++ins_started;
          if (c.InsertOne(IdDoc(id, "w", 3 * id)).ok()) {
            ++ins_done;
            mine.push_back(id);
          } else {
            ++writer_failures;
          }
        }
      }
    });
  }

  for (int scan = 0; scan < 10; ++scan) {
    SCOPED_TRACE("scan " + std::to_string(scan));
    int64_t ins_done_before = ins_done.load(), del_done_before = del_done.load();
    auto cursor = c.Find(Document());
    ASSERT_TRUE(cursor.ok());
    int64_t ins_started_after = ins_started.load(), del_started_after = del_started.load();
    int64_t seen = 0, last_id = -1;
    while (cursor->Next()) {
      DocumentView d = cursor->document();
      int64_t id = d.Get("_id").Int64();
      ASSERT_GT(id, last_id);
      ASSERT_EQ(d.Get("w").Int64(), 3 * id);  // whole documents only
      last_id = id;
      if (++seen == kBase / 2) {
        // Halfway: let the writers land a few hundred more changes.
        int64_t target = ins_done.load() + del_done.load() + 300;
        while (ins_done.load() + del_done.load() < target && writer_failures.load() == 0) {
          std::this_thread::yield();
        }
      }
    }
    ASSERT_TRUE(cursor->status().ok()) << cursor->status();
    EXPECT_GE(seen, kBase + ins_done_before - del_started_after);
    EXPECT_LE(seen, kBase + ins_started_after - del_done_before);
  }
  stop = true;
  for (auto& t : writers) t.join();
  EXPECT_EQ(writer_failures.load(), 0);
  EXPECT_EQ(Count(c), kBase + ins_done.load() - del_done.load());
  EXPECT_EQ(ScanCount(c), Count(c));
  ExpectValid(c);
}

TEST_F(ConcurrencyTest, ConcurrentCreateCollectionHasOneWinner) {
  for (int round = 0; round < 50; ++round) {
    std::string name = "c" + std::to_string(round);
    std::barrier start(kThreads);
    std::atomic<int> ok{0}, exists{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        start.arrive_and_wait();
        Status s = client_->GetDatabase("db").CreateCollection(name);
        if (s.ok()) {
          ++ok;
        } else if (s.code() == ErrorCode::kNamespaceExists) {
          ++exists;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), 1) << name;
    EXPECT_EQ(exists.load(), kThreads - 1) << name;
  }
}

// Drops while writers insert: whatever lands where, the stored count matches
// the documents and validate passes.
TEST_F(ConcurrencyTest, DropsDuringInsertsKeepCountsExact) {
  Collection c = Coll();
  std::atomic<bool> stop{false};
  std::atomic<int64_t> failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int64_t i = 0; !stop.load(); ++i) {
        if (!c.InsertOne(IdDoc(i * 4 + t)).ok()) ++failures;
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(c.Drop().ok());
  }
  stop = true;
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Count(c), ScanCount(c));
  ExpectValid(c);
  // Nothing of the dropped incarnations survives a reopen either.
  int64_t live = ScanCount(c);
  ASSERT_TRUE(client_->Close().ok());
  auto reopened = Client::Open(dir_.path());
  ASSERT_TRUE(reopened.ok());
  client_ = std::move(reopened).value();
  EXPECT_EQ(ScanCount(Coll()), live);
  EXPECT_EQ(Count(Coll()), live);
  EXPECT_THAT(*client_->GetDatabase("db").ListCollectionNames(), ::testing::ElementsAre("c"));
}

}  // namespace
}  // namespace rockdoc

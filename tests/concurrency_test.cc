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

// ---- Multi-document writes over overlapping documents (issue 11 #6) ----
//
// MongoDB never surfaces an internal write conflict from updateMany or
// deleteMany: every call succeeds, and each matching document is changed
// exactly once per call. Writers whose plans walk the documents in
// different orders (_id order, and an index on k = -_id) used to wait for
// each other in a cycle and fail part-way with "LockTimeout: Deadlock",
// after committing some batches.

class MultiWriteRaceTest : public ConcurrencyTest {
 protected:
  static constexpr int kDocs = 3000;  // three write batches

  // {_id: i, k: kDocs - i, n: 0}, indexed on k (whose order is the reverse
  // of _id's).
  void SetUp() override {
    ConcurrencyTest::SetUp();
    std::vector<Document> docs;
    for (int i = 0; i < kDocs; ++i) docs.push_back(Doc(i));
    ASSERT_TRUE(Coll().InsertMany(docs)->ok());
    ASSERT_TRUE(Coll().CreateIndex(Json(R"({"k": 1})")).ok());
  }
  static Document Doc(int64_t id) {
    BsonBuilder b;
    b.AppendInt64("_id", id);
    b.AppendInt64("k", kDocs - id);
    b.AppendInt64("n", 0);
    return std::move(b).Build();
  }
  // Filters over overlapping ranges of _id, half answered by a collection
  // scan (_id order), half by the k index (reverse order).
  struct Range {
    Document filter;
    int64_t lo, hi;  // _id in [lo, hi)
  };
  static Range RangeFor(int t) {
    const int64_t lo = (t % 4) * kDocs / 8, hi = kDocs - (t % 3) * kDocs / 8;
    if (t % 2 == 0) {
      return {Json("{\"_id\": {\"$gte\": " + std::to_string(lo) +
                   ", \"$lt\": " + std::to_string(hi) + "}}"),
              lo, hi};
    }
    // k = kDocs - _id: _id in [lo, hi) is k in (kDocs - hi, kDocs - lo].
    return {Json("{\"k\": {\"$gt\": " + std::to_string(kDocs - hi) +
                 ", \"$lte\": " + std::to_string(kDocs - lo) + "}}"),
            lo, hi};
  }
  // The n of every document, by _id (-1: missing).
  std::vector<int64_t> Ns() const {
    std::vector<int64_t> ns(kDocs, -1);
    auto cursor = Coll().Find(Document());
    EXPECT_TRUE(cursor.ok());
    while (cursor->Next()) {
      int64_t id = -1, n = -1;
      EXPECT_TRUE(cursor->document().Get("_id").ExactInt64(&id));
      EXPECT_TRUE(cursor->document().Get("n").ExactInt64(&n));
      if (id >= 0 && id < kDocs) ns[id] = n;
    }
    EXPECT_TRUE(cursor->status().ok()) << cursor->status();
    return ns;
  }
};

TEST_F(MultiWriteRaceTest, ConcurrentUpdateManyCallsAllSucceedAndCountExactly) {
  constexpr int kWriters = 4, kCalls = 12;
  Collection c = Coll();
  Document inc = Json(R"({"$inc": {"n": 1}})");
  std::barrier start(kWriters);
  std::atomic<int64_t> failures{0}, wrong_counts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      Range range = RangeFor(t);
      start.arrive_and_wait();
      for (int i = 0; i < kCalls; ++i) {
        auto r = c.UpdateMany(range.filter, inc);
        if (!r.ok()) {
          if (failures++ < 3) ADD_FAILURE() << r.status();
          continue;
        }
        if (r->matched_count != range.hi - range.lo || r->modified_count != r->matched_count) {
          ++wrong_counts;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(wrong_counts.load(), 0);
  std::vector<int64_t> ns = Ns();
  for (int64_t id = 0; id < kDocs; ++id) {
    int64_t expected = 0;
    for (int t = 0; t < kWriters; ++t) {
      Range range = RangeFor(t);
      if (id >= range.lo && id < range.hi) expected += kCalls;
    }
    ASSERT_EQ(ns[id], expected) << "_id " << id;
  }
  ExpectValid(c);
}

// updateMany and deleteMany together: every call succeeds; a document that
// survives was matched by every updateMany call (each finds it in its
// snapshot and still finds it under lock), and the deletes count each
// document once.
TEST_F(MultiWriteRaceTest, UpdateManyAndDeleteManyMixedAllSucceed) {
  constexpr int kUpdaters = 3, kCalls = 10, kDeleteRounds = 30;
  Collection c = Coll();
  Document inc = Json(R"({"$inc": {"n": 1}})");
  std::barrier start(kUpdaters + 1);
  std::atomic<int64_t> failures{0}, deleted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kUpdaters; ++t) {
    threads.emplace_back([&, t] {
      // Every document, in _id order or in k order.
      Document all = t % 2 == 0 ? Json("{}") : Json(R"({"k": {"$gte": 0}})");
      start.arrive_and_wait();
      for (int i = 0; i < kCalls; ++i) {
        auto r = c.UpdateMany(all, inc);
        if (!r.ok() && failures++ < 3) ADD_FAILURE() << r.status();
      }
    });
  }
  threads.emplace_back([&] {
    start.arrive_and_wait();
    // Every 7th document of a slice, through the k index (reverse order).
    for (int round = 0; round < kDeleteRounds; ++round) {
      int64_t lo = round * kDocs / kDeleteRounds, hi = (round + 1) * kDocs / kDeleteRounds;
      Document filter = Json("{\"k\": {\"$gt\": " + std::to_string(kDocs - hi) + ", \"$lte\": " +
                             std::to_string(kDocs - lo) + "}, \"_id\": {\"$mod\": [7, 0]}}");
      auto r = c.DeleteMany(filter);
      if (!r.ok()) {
        if (failures++ < 3) ADD_FAILURE() << r.status();
      } else {
        deleted += r->deleted_count;
      }
    }
  });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<int64_t> ns = Ns();
  int64_t survivors = 0;
  for (int64_t id = 0; id < kDocs; ++id) {
    if (id % 7 == 0) {
      EXPECT_EQ(ns[id], -1) << "_id " << id << " should be deleted";
      continue;
    }
    ++survivors;
    ASSERT_EQ(ns[id], int64_t{kUpdaters} * kCalls) << "_id " << id;
  }
  EXPECT_EQ(deleted.load(), kDocs - survivors);
  EXPECT_EQ(Count(c), survivors);
  ExpectValid(c);
}

// Single-document writes (updateOne, replaceOne, findOneAndUpdate) racing
// with updateMany calls over the same documents.
TEST_F(MultiWriteRaceTest, SingleDocumentWritesRacingUpdateManyAllSucceed) {
  constexpr int kManyCalls = 8, kSingleCalls = 400;
  Collection c = Coll();
  std::barrier start(4);
  std::atomic<int64_t> failures{0};
  std::vector<std::thread> threads;
  auto fail = [&](const Status& s) {
    if (failures++ < 3) ADD_FAILURE() << s;
  };
  // Two updateMany callers, in opposite orders, over documents < kDocs / 2.
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      Document half = t == 0 ? Json("{\"_id\": {\"$lt\": " + std::to_string(kDocs / 2) + "}}")
                             : Json("{\"k\": {\"$gt\": " + std::to_string(kDocs / 2) + "}}");
      start.arrive_and_wait();
      for (int i = 0; i < kManyCalls; ++i) {
        auto r = c.UpdateMany(half, Json(R"({"$inc": {"n": 1}})"));
        if (!r.ok()) fail(r.status());
      }
    });
  }
  // updateOne and findOneAndUpdate on m (counted), in the same range.
  threads.emplace_back([&] {
    start.arrive_and_wait();
    for (int i = 0; i < kSingleCalls; ++i) {
      BsonBuilder f;
      f.AppendInt64("_id", (i * 37) % (kDocs / 2));
      Document filter = std::move(f).Build();
      auto r = i % 2 == 0 ? c.UpdateOne(filter, Json(R"({"$inc": {"m": 1}})")).status()
                          : c.FindOneAndUpdate(filter, Json(R"({"$inc": {"m": 1}})")).status();
      if (!r.ok()) fail(r);
    }
  });
  // replaceOne on documents >= kDocs / 2 (which updateMany does not touch),
  // whose k keeps them inside the index range of the other writers' scans.
  threads.emplace_back([&] {
    start.arrive_and_wait();
    for (int i = 0; i < kSingleCalls; ++i) {
      int64_t id = kDocs / 2 + (i * 13) % (kDocs / 2);
      BsonBuilder f;
      f.AppendInt64("_id", id);
      BsonBuilder rep;
      rep.AppendInt64("_id", id);
      rep.AppendInt64("k", kDocs - id);
      rep.AppendInt64("n", i);
      auto r = c.ReplaceOne(std::move(f).Build(), std::move(rep).Build());
      if (!r.ok()) {
        fail(r.status());
      } else if (r->matched_count != 1) {
        fail(Status(ErrorCode::kInternalError, "replaceOne matched nothing"));
      }
    }
  });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::vector<int64_t> ns = Ns();
  for (int64_t id = 0; id < kDocs / 2; ++id) ASSERT_EQ(ns[id], 2 * kManyCalls) << "_id " << id;
  int64_t m_total = 0;
  auto cursor = c.Find(Json(R"({"m": {"$exists": true}})"));
  ASSERT_TRUE(cursor.ok());
  while (cursor->Next()) {
    int64_t m = 0;
    ASSERT_TRUE(cursor->document().Get("m").ExactInt64(&m));
    m_total += m;
  }
  EXPECT_EQ(m_total, kSingleCalls);
  ExpectValid(c);
}

// insertMany calls over overlapping _ids in opposite orders each locked ids
// the other wanted next: one of them failed with "Deadlock" instead of the
// duplicate key error that serial execution gives. Now each _id is inserted
// exactly once and every error is a duplicate key.
TEST_F(ConcurrencyTest, InsertManyInOppositeOrdersOnlyFailsWithDuplicateKeys) {
  constexpr int kIds = 3000, kThreadsHere = 4;
  Collection c = Coll();
  std::barrier start(kThreadsHere);
  std::atomic<int64_t> inserted{0}, duplicates{0}, others{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreadsHere; ++t) {
    threads.emplace_back([&, t] {
      std::vector<Document> docs;
      for (int i = 0; i < kIds; ++i) docs.push_back(IdDoc(t % 2 == 0 ? i : kIds - 1 - i, "t", t));
      start.arrive_and_wait();
      InsertManyOptions unordered;
      unordered.ordered = false;
      auto r = c.InsertMany(docs, unordered);
      if (!r.ok()) {
        ++others;
        ADD_FAILURE() << r.status();
        return;
      }
      inserted += static_cast<int64_t>(r->inserted_count());
      for (const WriteError& e : r->write_errors) {
        if (e.status.code() == ErrorCode::kDuplicateKey) {
          ++duplicates;
        } else if (others++ < 3) {
          ADD_FAILURE() << e.status;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(others.load(), 0);
  EXPECT_EQ(inserted.load(), kIds);
  EXPECT_EQ(duplicates.load(), int64_t{kIds} * (kThreadsHere - 1));
  EXPECT_EQ(Count(c), kIds);
  ExpectValid(c);
}

}  // namespace
}  // namespace rockdoc

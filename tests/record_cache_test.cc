// The record cache above RocksDB (storage/record_cache.h, issue 36): every
// read through the cache equals the same read without it.
//
//  - Twin clients, one with the cache (a roomy budget, and a tiny one that
//    evicts all the time) and one with it off, run the same random
//    interleavings of inserts, updates, replaces, deletes, multi-document
//    transactions (committed and aborted, reading their own writes), reads
//    in snapshot sessions taken earlier, reads from outside an open
//    transaction, forced eviction and DDL (drop, rename); every read is
//    compared, by _id (FindById, IDHACK), through an index (IXSCAN + FETCH),
//    through a unique index and by $in of _ids (the clustered point reads).
//  - Concurrent writers and readers (also under ThreadSanitizer,
//    scripts/test.sh): pairs of documents changed together by transactions
//    are always read equal in a snapshot session (by _id, by $in, through
//    an index), a snapshot reads the same twice, a reader's reads of a document never go back in time, and a
//    transaction reads its own writes. No test depends on timing: threads
//    run fixed numbers of operations.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "api/client_internal.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/record_cache.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using test::ScratchDir;

ClientOptions CacheOptions(size_t bytes) {
  ClientOptions options = test::TestClientOptions();
  options.record_cache_bytes = bytes;
  return options;
}

internal::RecordCache* CacheOf(const Client& client) {
  return internal::ClientAccess::EngineOf(client)->record_cache();
}

std::string Show(const StatusOr<std::optional<Document>>& r) {
  if (!r.ok()) return "error " + std::to_string(static_cast<int>(r.status().code()));
  return *r ? ToJson(**r) : "none";
}

std::string Show(StatusOr<Cursor> r) {
  if (!r.ok()) return "error " + std::to_string(static_cast<int>(r.status().code()));
  std::string out;
  while (r->Next()) out += ToJson(r->document()) + "\n";
  if (!r->status().ok()) out += "error " + std::to_string(static_cast<int>(r->status().code()));
  return out;
}

template <typename T>
std::string ShowStatus(const StatusOr<T>& r) {
  return r.ok() ? "ok" : "error " + std::to_string(static_cast<int>(r.status().code()));
}

Document IdFilter(int k) { return Json("{\"_id\": " + std::to_string(k) + "}"); }

// The same operations on two databases; reads compared.
class Twins {
 public:
  Twins(size_t cache_bytes, uint32_t seed) : rng_(seed) {
    auto cached = Client::Open(dir_.Sub("cached"), CacheOptions(cache_bytes));
    auto plain = Client::Open(dir_.Sub("plain"), CacheOptions(0));
    EXPECT_TRUE(cached.ok() && plain.ok());
    clients_[0] = std::move(cached).value();
    clients_[1] = std::move(plain).value();
    EXPECT_NE(CacheOf(*clients_[0]), nullptr);
    EXPECT_EQ(CacheOf(*clients_[1]), nullptr);
    for (auto& c : clients_) Setup(c->GetDatabase("test"));
  }

  void Run(int steps) {
    for (int i = 0; i < steps; ++i) {
      Step(i);
      if (HasFailure()) return;
    }
    // The cache served reads (else this test proved nothing).
    EXPECT_GT(CacheOf(*clients_[0])->counters().hits, 0);
  }

 private:
  static bool HasFailure() { return ::testing::Test::HasFailure(); }

  static void Setup(const Database& db) {
    Collection c = db.GetCollection("c");
    ASSERT_TRUE(c.CreateIndex(Json(R"({"g": 1})")).ok());
    IndexOptions unique;
    unique.unique = true;
    ASSERT_TRUE(c.CreateIndex(Json(R"({"u": 1})"), unique).ok());
  }

  int Rand(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  int Key() { return Rand(kKeys); }

  Document NewDoc(int k) {
    // u is unique per version (a counter), g one of a few groups.
    return Json("{\"_id\": " + std::to_string(k) + ", \"g\": " + std::to_string(Rand(5)) +
                ", \"u\": " + std::to_string(++version_) + ", \"v\": " + std::to_string(Rand(100)) +
                ", \"pad\": \"" + std::string(Rand(64), 'x') + "\"}");
  }

  // A write, applied to both (through `dbs`, which may be sessions').
  void Write(const Database dbs[2]) {
    const int k = Key();
    const int what = Rand(4);
    Document doc = NewDoc(k);
    const Document update = Json("{\"$inc\": {\"v\": 1}, \"$set\": {\"g\": " +
                                 std::to_string(Rand(5)) + "}}");
    std::string results[2];
    for (int side = 0; side < 2; ++side) {
      Collection c = dbs[side].GetCollection("c");
      switch (what) {
        case 0: results[side] = ShowStatus(c.InsertOne(doc)); break;
        case 1: results[side] = ShowStatus(c.UpdateOne(IdFilter(k), update)); break;
        case 2: results[side] = ShowStatus(c.ReplaceOne(IdFilter(k), doc)); break;
        default: results[side] = ShowStatus(c.DeleteOne(IdFilter(k))); break;
      }
    }
    EXPECT_EQ(results[0], results[1]) << "write " << what << " of " << k;
  }

  // A read of each kind, compared.
  void Read(const Database dbs[2], const char* where) {
    const int k = Key();
    std::string in = "{\"_id\": {\"$in\": [";
    for (int i = 0; i < 6; ++i) in += (i ? ", " : "") + std::to_string(Key());
    in += "]}}";
    const Document filters[] = {IdFilter(k), Json("{\"g\": " + std::to_string(Rand(5)) + "}"),
                                Json("{\"u\": " + std::to_string(1 + Rand(version_ + 1)) + "}"),
                                Json(in)};
    std::string results[2][5];
    for (int side = 0; side < 2; ++side) {
      Collection c = dbs[side].GetCollection("c");
      BsonBuilder id;
      id.AppendInt32("_id", k);
      const Document id_doc = std::move(id).Build();
      results[side][0] = Show(c.FindById(*id_doc.begin()));
      for (int f = 0; f < 4; ++f) results[side][1 + f] = Show(c.Find(filters[f]));
    }
    for (int r = 0; r < 5; ++r) EXPECT_EQ(results[0][r], results[1][r]) << where << " read " << r;
  }

  void Step(int i) {
    const Database plain[2] = {clients_[0]->GetDatabase("test"), clients_[1]->GetDatabase("test")};
    switch (Rand(12)) {
      case 0: case 1: case 2: case 3:
        Write(plain);
        break;
      case 4: case 5: case 6:
        Read(plain, "plain");
        break;
      case 7: {  // a transaction: its writes, its reads, reads from outside
        Session sessions[2] = {std::move(clients_[0]->StartSession()).value(),
                               std::move(clients_[1]->StartSession()).value()};
        for (Session& s : sessions) ASSERT_TRUE(s.StartTransaction().ok());
        const Database in_txn[2] = {sessions[0].GetDatabase("test"),
                                    sessions[1].GetDatabase("test")};
        for (int n = 1 + Rand(4); n > 0; --n) {
          Write(in_txn);
          Read(in_txn, "in a transaction");
          Read(plain, "outside a transaction");
        }
        const bool commit = Rand(2) == 0;
        std::string ended[2];
        for (Session& s : sessions) {
          Status st = commit ? s.CommitTransaction() : s.AbortTransaction();
          ended[&s - sessions] = st.ok() ? "ok" : st.ToString();
        }
        EXPECT_EQ(ended[0], ended[1]);
        Read(plain, "after a transaction");
        break;
      }
      case 8: {  // a snapshot session, read now and later
        SessionOptions so;
        so.snapshot = true;
        auto pair = std::make_unique<std::array<Session, 2>>(
            std::array<Session, 2>{std::move(clients_[0]->StartSession(so)).value(),
                                   std::move(clients_[1]->StartSession(so)).value()});
        const Database at[2] = {(*pair)[0].GetDatabase("test"), (*pair)[1].GetDatabase("test")};
        Read(at, "snapshot, at once");
        snapshots_.push_back(std::move(pair));
        if (snapshots_.size() > 4) snapshots_.erase(snapshots_.begin());
        break;
      }
      case 9:
        if (!snapshots_.empty()) {
          auto& pair = *snapshots_[Rand(static_cast<int>(snapshots_.size()))];
          const Database at[2] = {pair[0].GetDatabase("test"), pair[1].GetDatabase("test")};
          Read(at, "snapshot, later");
        }
        break;
      case 10:
        CacheOf(*clients_[0])->EvictAll();
        break;
      default:
        if (i % 5 != 0) break;
        // DDL, now and then: a rename away and back, or a drop.
        DoDdl(plain, Rand(2) == 0);
        Read(plain, "after DDL");
        break;
    }
  }

  void DoDdl(const Database dbs[2], bool drop) {
    for (int side = 0; side < 2; ++side) {
      if (drop) {
        ASSERT_TRUE(dbs[side].GetCollection("c").Drop().ok());
        Setup(dbs[side]);
      } else {
        ASSERT_TRUE(dbs[side].RenameCollection("c", "d").ok());
        ASSERT_TRUE(dbs[side].RenameCollection("d", "c").ok());
      }
    }
  }

  static constexpr int kKeys = 40;
  ScratchDir dir_;
  std::unique_ptr<Client> clients_[2];
  std::mt19937 rng_;
  int version_ = 0;
  std::vector<std::unique_ptr<std::array<Session, 2>>> snapshots_;
};

TEST(RecordCacheTest, ReadsEqualReadsWithoutCache) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Twins(size_t{64} << 20, seed).Run(600);
  }
}

TEST(RecordCacheTest, ReadsEqualReadsWithoutCacheUnderConstantEviction) {
  // 32 shards of 2 KiB: a few documents each, evicted all the time.
  for (uint32_t seed = 11; seed <= 13; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Twins(size_t{64} << 10, seed).Run(600);
  }
}

// ---- concurrency ----

int64_t VOf(const StatusOr<std::optional<Document>>& r) {
  if (!r.ok() || !*r) return -1;
  return static_cast<int64_t>((*r)->Get("v").NumberAsDouble());
}

TEST(RecordCacheTest, ConcurrentReadersSeeOnlyVersionsTheyShould) {
  ScratchDir dir;
  auto opened = Client::Open(dir.Sub("db"), CacheOptions(size_t{1} << 20));
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<Client> client = std::move(opened).value();
  Collection c = client->GetDatabase("test").GetCollection("c");
  constexpr int kPairs = 8, kSolo = 8, kWriters = 2, kReaders = 2, kRounds = 150;
  // Pairs (2p, 2p+1) are changed together; solo documents 100+s alone.
  ASSERT_TRUE(c.CreateIndex(Json(R"({"p": 1})")).ok());
  for (int k = 0; k < 2 * kPairs; ++k) {
    ASSERT_TRUE(c.InsertOne(Json("{\"_id\": " + std::to_string(k) + ", \"p\": " +
                                 std::to_string(k / 2) + ", \"v\": 0}"))
                    .ok());
  }
  for (int s = 0; s < kSolo; ++s) ASSERT_TRUE(c.InsertOne(Json("{\"_id\": " + std::to_string(100 + s) + ", \"v\": 0}")).ok());

  std::atomic<int> failures{0};
  auto check = [&](bool ok) {
    if (!ok) failures.fetch_add(1);
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      Session session = std::move(client->StartSession()).value();
      Collection sc = session.GetDatabase("test").GetCollection("c");
      for (int n = 1; n <= kRounds; ++n) {
        const int p = (w + n * kWriters) % kPairs;
        const Document set = Json("{\"$set\": {\"v\": " + std::to_string(n) + "}}");
        Status st = session.WithTransaction([&](Session&) -> Status {
          for (int k : {2 * p, 2 * p + 1}) {
            auto r = sc.UpdateOne(IdFilter(k), set);
            if (!r.ok()) return r.status();
          }
          // Its own write, read back inside the transaction.
          auto own = sc.FindById(*IdFilter(2 * p).begin());
          check(VOf(own) == n);
          return Status::OK();
        });
        check(st.ok());
        // Solo documents (only this writer's) go up by one each time.
        const int s = w + kWriters * (n % (kSolo / kWriters));
        check(c.UpdateOne(IdFilter(100 + s), Json(R"({"$inc": {"v": 1}})")).ok());
      }
    });
  }
  for (int r = 0; r < kReaders; ++r) {
    threads.emplace_back([&, r] {
      std::vector<int64_t> last(kSolo, 0);
      SessionOptions so;
      so.snapshot = true;
      for (int n = 0; n < kRounds * 2; ++n) {
        const int p = (r + n) % kPairs;
        {
          Session snap = std::move(client->StartSession(so)).value();
          Collection at = snap.GetDatabase("test").GetCollection("c");
          const int64_t a = VOf(at.FindById(*IdFilter(2 * p).begin()));
          const int64_t b = VOf(at.FindOne(IdFilter(2 * p + 1)));
          check(a >= 0 && a == b);
          // The same snapshot, read again after more commits: the same.
          auto both = at.Find(Json("{\"_id\": {\"$in\": [" + std::to_string(2 * p) + ", " +
                                   std::to_string(2 * p + 1) + "]}}"));
          int seen = 0;
          while (both.ok() && both->Next()) {
            check(static_cast<int64_t>(both->document().Get("v").NumberAsDouble()) == a);
            ++seen;
          }
          check(seen == 2);
          // And through the index on p (IXSCAN + FETCH).
          auto fetched = at.Find(Json("{\"p\": " + std::to_string(p) + "}"));
          seen = 0;
          while (fetched.ok() && fetched->Next()) {
            check(static_cast<int64_t>(fetched->document().Get("v").NumberAsDouble()) == a);
            ++seen;
          }
          check(seen == 2);
        }
        const int s = n % kSolo;
        const int64_t v = VOf(c.FindById(*IdFilter(100 + s).begin()));
        check(v >= last[s]);
        last[s] = v;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  // Every document as the writers left it, through the cache and without.
  for (int k = 0; k < 2 * kPairs; ++k) {
    auto cached = c.FindById(*IdFilter(k).begin());
    Session session = std::move(client->StartSession()).value();
    ASSERT_TRUE(session.StartTransaction().ok());
    auto direct = session.GetDatabase("test").GetCollection("c").FindById(*IdFilter(k).begin());
    EXPECT_EQ(Show(cached), Show(direct)) << k;
    ASSERT_TRUE(session.AbortTransaction().ok());
  }
  EXPECT_GT(CacheOf(*client)->counters().hits, 0);
}

// The cache starts empty at every open, and stays coherent across reopen.
TEST(RecordCacheTest, StartsEmptyAtOpen) {
  ScratchDir dir;
  for (int round = 0; round < 2; ++round) {
    auto opened = Client::Open(dir.Sub("db"), CacheOptions(size_t{1} << 20));
    ASSERT_TRUE(opened.ok()) << opened.status();
    std::unique_ptr<Client> client = std::move(opened).value();
    EXPECT_EQ(CacheOf(*client)->counters().entries, 0);
    Collection c = client->GetDatabase("test").GetCollection("c");
    if (round == 0) ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1, "v": 1})")).ok());
    ASSERT_TRUE(c.UpdateOne(IdFilter(1), Json(R"({"$inc": {"v": 1}})")).ok());
    EXPECT_EQ(VOf(c.FindById(*IdFilter(1).begin())), round + 2);
    EXPECT_EQ(VOf(c.FindById(*IdFilter(1).begin())), round + 2);  // a hit
    EXPECT_EQ(CacheOf(*client)->counters().hits, 1);
  }
}

// A disabled cache is absent; a bad input never reaches it.
TEST(RecordCacheTest, ZeroBudgetDisables) {
  ScratchDir dir;
  auto opened = Client::Open(dir.Sub("db"), CacheOptions(0));
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(CacheOf(**opened), nullptr);
}

}  // namespace
}  // namespace rockdoc

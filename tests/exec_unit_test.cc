// exec/ on its own: stages driven directly through exec/plan_stage.h's
// Work(), each against a brute-force reference. A leaf of the test's own
// (ListStage) yields prepared documents, with a kNeedTime between results
// when asked, for the stages that shape a stream (SORT, SKIP, LIMIT, OR);
// RangeIterator and COLLSCAN read keys written raw into a bare engine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "exec/basic_stages.h"
#include "exec/plan_stage.h"
#include "exec/range_iterator.h"
#include "exec/scan_stages.h"
#include "exec/sort_stage.h"
#include "keystring/keystring.h"
#include "rockdoc/json.h"
#include "storage/engine.h"
#include "storage/format.h"
#include "storage/kv.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using internal::KeyRange;
using internal::PlanStage;
using internal::RangeIterator;
using internal::StageState;
using internal::WorkingMember;
using test::Json;

// A leaf that yields `docs` in order, each with record key "r<_id>"; with
// `need_time`, a kNeedTime before every result (as a scan between matches).
class ListStage : public PlanStage {
 public:
  explicit ListStage(std::vector<Document> docs, bool need_time = false)
      : docs_(std::move(docs)), need_time_(need_time) {
    for (const Document& d : docs_) keys_.push_back("r" + ValueToJson(d.Get("_id")));
  }
  std::string_view name() const override { return "LIST"; }

 protected:
  StageState DoWork(WorkingMember** out) override {
    if (next_ >= docs_.size()) return StageState::kEof;
    if (need_time_ && !paused_) {
      paused_ = true;
      return StageState::kNeedTime;
    }
    paused_ = false;
    member_.Clear();
    member_.record_key = keys_[next_];
    member_.doc = docs_[next_].view();
    member_.has_doc = true;
    ++next_;
    *out = &member_;
    return StageState::kAdvanced;
  }

 private:
  std::vector<Document> docs_;
  std::vector<std::string> keys_;
  bool need_time_;
  bool paused_ = false;
  size_t next_ = 0;
  WorkingMember member_;
};

// Works `stage` to its end; the _id of each result (as JSON), in order.
std::vector<std::string> Drain(PlanStage* stage, Status* failure = nullptr) {
  std::vector<std::string> out;
  for (int works = 0; works < 1000000; ++works) {
    WorkingMember* m = nullptr;
    StageState s = stage->Work(&m);
    if (s == StageState::kEof) return out;
    if (s == StageState::kFailure) {
      if (failure != nullptr) *failure = stage->status();
      EXPECT_NE(failure, nullptr) << stage->status();
      return out;
    }
    if (s == StageState::kAdvanced) {
      EXPECT_TRUE(m->has_doc);
      out.push_back(ValueToJson(m->doc.Get("_id")));
      // The record key travels with the document.
      EXPECT_EQ(m->record_key, "r" + out.back()) << stage->name();
    }
  }
  ADD_FAILURE() << "no EOF";
  return out;
}

std::vector<std::string> Ids(const std::vector<Document>& docs) {
  std::vector<std::string> out;
  for (const Document& d : docs) out.push_back(ValueToJson(d.Get("_id")));
  return out;
}

// {_id: i, k: <int32 or double in -4..4, halves>}: many ties.
std::vector<Document> RandomKeyed(std::mt19937& rng, int n) {
  std::vector<Document> docs;
  for (int i = 0; i < n; ++i) {
    BsonBuilder b;
    b.AppendInt32("_id", i);
    const int v = static_cast<int>(rng() % 17) - 8;
    if (v % 2 == 0) {
      b.AppendInt32("k", v / 2);
    } else {
      b.AppendDouble("k", v / 2.0);
    }
    docs.push_back(std::move(b).Build());
  }
  return docs;
}

// A sort key as the planner builds them: the keystring of k.
internal::SortStage::KeyFunction KeyOfK(bool descending) {
  return [descending](const internal::WorkingMember& m, std::string* key) {
    keystring::Builder b(descending ? 1 : 0);
    b.Append(m.doc.Get("k"));
    key->append(b.bytes());
    return Status::OK();
  };
}

TEST(ExecSortStage, TopKMatchesStableSort) {
  std::mt19937 rng(7);
  for (int round = 0; round < 60; ++round) {
    const int n = static_cast<int>(rng() % 80);
    const bool descending = rng() % 2 == 0;
    const int64_t limits[] = {0, 1, 2, 5, n - 1, n, n + 3};
    const int64_t limit = std::max<int64_t>(0, limits[rng() % std::size(limits)]);
    std::vector<Document> docs = RandomKeyed(rng, n);
    SCOPED_TRACE("n " + std::to_string(n) + " limit " + std::to_string(limit) +
                 (descending ? " descending" : " ascending"));

    std::vector<Document> expected;
    for (const Document& d : docs) expected.push_back(Document(d));
    std::stable_sort(expected.begin(), expected.end(), [&](const Document& a, const Document& b) {
      const double x = a.Get("k").NumberAsDouble(), y = b.Get("k").NumberAsDouble();
      return descending ? x > y : x < y;
    });
    if (limit > 0 && static_cast<int64_t>(expected.size()) > limit) expected.resize(limit);

    internal::SortStage sort(std::make_unique<ListStage>(std::move(docs), round % 2 == 0),
                             Json(descending ? R"({"k": -1})" : R"({"k": 1})"),
                             KeyOfK(descending), limit, int64_t{1} << 30);
    EXPECT_EQ(Drain(&sort), Ids(expected));
    EXPECT_EQ(sort.stats().advanced, static_cast<int64_t>(expected.size()));
  }
}

TEST(ExecSortStage, MemoryLimitFailsTheSort) {
  std::mt19937 rng(1);
  internal::SortStage sort(std::make_unique<ListStage>(RandomKeyed(rng, 100)), Json(R"({"k": 1})"),
                           KeyOfK(false), 0, 1000);
  Status failure;
  Drain(&sort, &failure);
  EXPECT_EQ(failure.code(), ErrorCode::kQueryExceededMemoryLimitNoDiskUseAllowed);
  // With a limit the heap stays small: the same input fits.
  internal::SortStage top(std::make_unique<ListStage>(RandomKeyed(rng, 100)), Json(R"({"k": 1})"),
                          KeyOfK(false), 3, 1000);
  EXPECT_EQ(Drain(&top).size(), 3u);
}

TEST(ExecBasicStages, SkipAndLimit) {
  std::mt19937 rng(3);
  for (int n : {0, 1, 7, 30}) {
    std::vector<Document> docs = RandomKeyed(rng, n);
    const std::vector<std::string> all = Ids(docs);
    for (int64_t skip : {0, 1, 3, n, n + 2}) {
      for (int64_t limit : {1, 2, 5, n + 1}) {
        SCOPED_TRACE("n " + std::to_string(n) + " skip " + std::to_string(skip) + " limit " +
                     std::to_string(limit));
        auto slice = [&](int64_t from, int64_t to) {
          from = std::min<int64_t>(from, n);
          to = std::max(from, std::min<int64_t>(to, n));
          return std::vector<std::string>(all.begin() + from, all.begin() + to);
        };
        // LIMIT over SKIP, as a find with both: results skip..skip+limit.
        auto list = std::make_unique<ListStage>(docs, skip % 2 == 1);
        PlanStage* leaf = list.get();
        internal::LimitStage limited(
            std::make_unique<internal::SkipStage>(std::move(list), skip), limit);
        EXPECT_EQ(Drain(&limited), slice(skip, skip + limit));
        // LIMIT pulls no more than it returns.
        EXPECT_EQ(leaf->stats().advanced, std::min<int64_t>(n, skip + limit));
        // SKIP over LIMIT: results skip..limit.
        internal::SkipStage skipped(
            std::make_unique<internal::LimitStage>(std::make_unique<ListStage>(docs), limit),
            skip);
        EXPECT_EQ(Drain(&skipped), slice(skip, limit));
      }
    }
  }
}

TEST(ExecBasicStages, OrReturnsEachRecordOnceInChildOrder) {
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    const int children = 1 + static_cast<int>(rng() % 4);
    std::vector<std::unique_ptr<PlanStage>> stages;
    std::vector<std::string> expected;
    std::set<std::string> seen;
    for (int c = 0; c < children; ++c) {
      std::vector<Document> docs;
      const int n = static_cast<int>(rng() % 12);
      for (int i = 0; i < n; ++i) {
        const int id = static_cast<int>(rng() % 15);  // overlaps, within a child too
        docs.push_back(Json("{\"_id\": " + std::to_string(id) + "}"));
        if (seen.insert(std::to_string(id)).second) expected.push_back(std::to_string(id));
      }
      stages.push_back(std::make_unique<ListStage>(std::move(docs), c % 2 == 1));
    }
    internal::OrStage orstage(std::move(stages));
    EXPECT_EQ(Drain(&orstage), expected) << "round " << round;
  }
}

// A bare engine for the stages that read storage.
class ExecStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = internal::Engine::Open(dir_.Sub("db"), ClientOptions{});
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = *e;
  }
  void TearDown() override { EXPECT_TRUE(engine_->Close().ok()); }
  void Put(const std::map<std::string, std::string>& kvs) {
    auto txn = engine_->Begin();
    for (const auto& [k, v] : kvs) ASSERT_TRUE(txn->Put(internal::KeySpace::kData, k, v).ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  internal::ReadView Latest() const { return internal::ReadView(engine_.get(), nullptr); }

  test::ScratchDir dir_;
  std::shared_ptr<internal::Engine> engine_;
};

TEST_F(ExecStorageTest, RangeIteratorReturnsExactlyTheKeysInRanges) {
  const std::string prefix = internal::PrefixKey(5), end = internal::PrefixKey(6);
  std::mt19937 rng(5);
  const char alphabet[] = {'\x00', '\x01', '\x7f', '\x80', '\xfe', '\xff'};
  auto suffix = [&](size_t min_len) {
    std::string s;
    const size_t len = min_len + rng() % 3;
    for (size_t i = 0; i < len; ++i) s += alphabet[rng() % std::size(alphabet)];
    return s;
  };
  std::map<std::string, std::string> data;
  std::vector<std::string> keys;  // under the prefix, ascending
  for (int i = 0; i < 150; ++i) data[prefix + suffix(1)] = "v";
  for (const auto& [k, v] : data) keys.push_back(k);
  // Neighbours the walk must never return.
  for (const char* k : {"a", "b"}) data[internal::PrefixKey(4) + k] = data[end + k] = "n";
  data[end] = "n";
  Put(data);

  int partial_rounds = 0;  // neither no key nor every key: the test bites
  for (int round = 0; round < 200; ++round) {
    // Boundaries b0 < b1 < ... inside [prefix, end]; ranges are a random
    // choice of the intervals [b_i, b_i+1): gaps between some, others
    // touching.
    std::set<std::string> bounds;
    const int count = 2 + static_cast<int>(rng() % 10);
    for (int i = 0; i < count; ++i) bounds.insert(prefix + suffix(0));
    if (rng() % 3 == 0) bounds.insert(end);
    std::vector<std::string> b(bounds.begin(), bounds.end());
    std::vector<KeyRange> ranges;
    for (size_t i = 0; i + 1 < b.size(); ++i) {
      if (rng() % 3 != 0) ranges.push_back(KeyRange{b[i], b[i + 1]});
    }
    std::vector<std::string> expected;
    for (const std::string& k : keys) {
      for (const KeyRange& r : ranges) {
        if (r.start <= k && k < r.end) expected.push_back(k);
      }
    }
    if (!expected.empty() && expected.size() < keys.size()) ++partial_rounds;
    for (bool forward : {true, false}) {
      SCOPED_TRACE("round " + std::to_string(round) + (forward ? " forward" : " backward") +
                   ", " + std::to_string(ranges.size()) + " ranges");
      RangeIterator walk(prefix, end, ranges, forward);
      std::vector<std::string> got;
      for (int steps = 0; steps < 10000; ++steps) {
        RangeIterator::Step s = walk.Next(Latest());
        if (s == RangeIterator::Step::kKey) {
          got.emplace_back(walk.key());
        } else if (s == RangeIterator::Step::kEof) {
          break;
        } else {
          ASSERT_NE(s, RangeIterator::Step::kError) << walk.status();
        }
      }
      std::vector<std::string> want = expected;
      if (!forward) std::reverse(want.begin(), want.end());
      EXPECT_EQ(got, want);
      // A seek only to skip a gap: at most one per range.
      EXPECT_LE(walk.seeks(), static_cast<int64_t>(ranges.size()));
    }
  }
  EXPECT_GT(partial_rounds, 100);
}

TEST_F(ExecStorageTest, CollectionScanOrderFilterAndSnapshot) {
  const uint32_t id = 9;
  std::mt19937 rng(9);
  std::map<int, Document> docs;  // by _id: the scan's forward order
  while (docs.size() < 120) {
    const int v = static_cast<int>(rng() % 100000) - 50000;
    docs[v] = Json("{\"_id\": " + std::to_string(v) + ", \"x\": " + std::to_string(rng() % 7) +
                   "}");
  }
  std::map<std::string, std::string> data;
  for (const auto& [v, d] : docs) {
    data[internal::RecordKey(id, keystring::EncodeValue(d.Get("_id")))] = std::string(d.bytes());
  }
  // Records of the neighbouring collections.
  Document other = Json(R"({"_id": 0})");
  data[internal::RecordKey(id - 1, keystring::EncodeValue(other.Get("_id")))] = other.bytes();
  data[internal::RecordKey(id + 1, keystring::EncodeValue(other.Get("_id")))] = other.bytes();
  Put(data);
  internal::KvSnapshot snapshot(engine_);
  // Written after the snapshot: a scan at the snapshot does not see it.
  Document late = Json(R"({"_id": 999999})");
  Put({{internal::RecordKey(id, keystring::EncodeValue(late.Get("_id"))), std::string(late.bytes())}});

  auto scan = [&](bool forward, internal::StageFilter filter, int64_t* examined = nullptr) {
    internal::CollectionScanStage stage(internal::ReadView(engine_.get(), &snapshot), id, forward,
                                        std::move(filter));
    std::vector<int> out;
    for (;;) {
      WorkingMember* m = nullptr;
      StageState s = stage.Work(&m);
      if (s == StageState::kEof) break;
      EXPECT_NE(s, StageState::kFailure) << stage.status();
      if (s == StageState::kFailure) break;
      if (s != StageState::kAdvanced) continue;
      out.push_back(m->doc.Get("_id").Int32());
      EXPECT_EQ(m->record_key,
                internal::RecordKey(id, keystring::EncodeValue(m->doc.Get("_id"))));
    }
    if (examined != nullptr) *examined = stage.docs_examined();
    return out;
  };
  std::vector<int> ascending;
  for (const auto& [v, d] : docs) ascending.push_back(v);
  EXPECT_EQ(scan(true, {}), ascending);
  std::vector<int> descending(ascending.rbegin(), ascending.rend());
  EXPECT_EQ(scan(false, {}), descending);

  internal::StageFilter x_is_3;
  x_is_3.matches = [](DocumentView doc, WorkingMember*) { return doc.Get("x").Int32() == 3; };
  x_is_3.describe = [](BsonBuilder*) {};
  std::vector<int> matching;
  for (const auto& [v, d] : docs) {
    if (d.Get("x").Int32() == 3) matching.push_back(v);
  }
  ASSERT_FALSE(matching.empty());
  int64_t examined = 0;
  EXPECT_EQ(scan(true, x_is_3, &examined), matching);
  EXPECT_EQ(examined, static_cast<int64_t>(docs.size()));
  std::reverse(matching.begin(), matching.end());
  EXPECT_EQ(scan(false, x_is_3), matching);

  // At the latest state the late document is there, last.
  internal::CollectionScanStage latest(Latest(), id, true, {});
  WorkingMember* m = nullptr;
  int64_t n = 0;
  int last = 0;
  for (StageState s; (s = latest.Work(&m)) != StageState::kEof;) {
    ASSERT_NE(s, StageState::kFailure);
    if (s == StageState::kAdvanced) {
      ++n;
      last = m->doc.Get("_id").Int32();
    }
  }
  EXPECT_EQ(n, static_cast<int64_t>(docs.size()) + 1);
  EXPECT_EQ(last, 999999);
}

}  // namespace
}  // namespace rockdoc

// Live queries (Collection::Observe, issue 37). The property: under random
// sequences of writes (inserts, updates, replaces, deletes, many-document
// writes, transactions that commit or abort, drops and renames onto the
// collection), the list a client builds by applying the callbacks in order
// equals, after every change, the result of re-running the query (Find
// with the same filter, sort with _id as the tie-break, skip, limit and
// projection), and so does LiveQuery::result(). A query without a limit is
// maintained without ever re-running it (requeries() stays 0, drops and
// renames aside). Also: the callbacks' order rules, a query on its own
// thread with writers on other threads (run under ThreadSanitizer by
// scripts/test.sh), Stop from a callback, the client's close, and the
// errors.
//
// No test waits for a time: a query polled on the test's thread is up to
// date once Poll returns after the write; one on its own thread is waited
// for until its result equals the query's, with a generous bound only so
// that a defect fails rather than hangs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

std::string IdText(const Value& id) {
  BsonBuilder b;
  b.AppendElementAs("_id", id.element());
  return ToJson(std::move(b).Build());
}

// A document's top-level fields sorted by name: a client that applies
// `changed` may order fields otherwise than the server.
std::string Canonical(DocumentView doc) {
  std::vector<std::pair<std::string, std::string>> fields;
  for (const Element& e : doc) {
    BsonBuilder b;
    b.AppendElement(e);
    fields.emplace_back(std::string(e.key()), ToJson(std::move(b).Build()));
  }
  std::sort(fields.begin(), fields.end());
  std::string out;
  for (const auto& [k, v] : fields) out += v + ";";
  return out;
}

// The client of the callbacks: a list kept by applying them as documented.
// A callback that names a document the list does not hold (or adds one it
// holds) is recorded as a violation.
class ObservedList {
 public:
  ObserveCallbacks Callbacks() {
    ObserveCallbacks cb;
    cb.added = [this](const Value& id, const Document& doc, const std::optional<Value>& before) {
      std::lock_guard<std::mutex> g(mu_);
      if (Find(IdText(id)) != items_.end()) Violation("added twice: " + IdText(id));
      items_.insert(Position(before), {IdText(id), Canonical(doc), doc});
      ++events_;
      changed_.notify_all();
    };
    cb.changed = [this](const Value& id, const Document& fields,
                        const std::vector<std::string>& removed) {
      std::lock_guard<std::mutex> g(mu_);
      auto it = Find(IdText(id));
      if (it == items_.end()) return Violation("changed, not held: " + IdText(id));
      if (fields.empty() && removed.empty()) Violation("changed nothing: " + IdText(id));
      BsonBuilder b;
      for (const Element& e : it->doc) {
        if (std::find(removed.begin(), removed.end(), e.key()) != removed.end()) continue;
        Element now = fields.Get(e.key());
        b.AppendElement(now.ok() ? now : e);
      }
      for (const Element& e : fields) {
        if (!it->doc.Get(e.key()).ok()) b.AppendElement(e);
      }
      it->doc = std::move(b).Build();
      it->canonical = Canonical(it->doc);
      ++events_;
      changed_.notify_all();
    };
    cb.moved = [this](const Value& id, const std::optional<Value>& before) {
      std::lock_guard<std::mutex> g(mu_);
      auto it = Find(IdText(id));
      if (it == items_.end()) return Violation("moved, not held: " + IdText(id));
      Item item = std::move(*it);
      items_.erase(it);
      items_.insert(Position(before), std::move(item));
      ++events_;
      changed_.notify_all();
    };
    cb.removed = [this](const Value& id) {
      std::lock_guard<std::mutex> g(mu_);
      auto it = Find(IdText(id));
      if (it == items_.end()) return Violation("removed, not held: " + IdText(id));
      items_.erase(it);
      ++events_;
      changed_.notify_all();
    };
    cb.ended = [this](const Status& s) {
      std::lock_guard<std::mutex> g(mu_);
      ++ends_;
      end_ = s;
      changed_.notify_all();
    };
    return cb;
  }

  std::vector<std::string> Canonicals() const {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<std::string> out;
    for (const Item& i : items_) out.push_back(i.canonical);
    return out;
  }
  std::vector<std::string> violations() const {
    std::lock_guard<std::mutex> g(mu_);
    return violations_;
  }
  int events() const {
    std::lock_guard<std::mutex> g(mu_);
    return events_;
  }
  int ends() const {
    std::lock_guard<std::mutex> g(mu_);
    return ends_;
  }
  Status end() const {
    std::lock_guard<std::mutex> g(mu_);
    return end_;
  }
  // Waits until the list equals `want` (false after a minute).
  bool WaitFor(const std::vector<std::string>& want) {
    std::unique_lock<std::mutex> g(mu_);
    return changed_.wait_for(g, std::chrono::minutes(1), [&] {
      if (items_.size() != want.size()) return false;
      for (size_t i = 0; i < want.size(); ++i) {
        if (items_[i].canonical != want[i]) return false;
      }
      return true;
    });
  }
  bool WaitForEnd() {
    std::unique_lock<std::mutex> g(mu_);
    return changed_.wait_for(g, std::chrono::minutes(1), [&] { return ends_ > 0; });
  }

 private:
  struct Item {
    std::string id, canonical;
    Document doc;
  };
  std::vector<Item>::iterator Find(const std::string& id) {
    return std::find_if(items_.begin(), items_.end(), [&](const Item& i) { return i.id == id; });
  }
  std::vector<Item>::iterator Position(const std::optional<Value>& before) {
    if (!before) return items_.end();
    auto it = Find(IdText(*before));
    if (it == items_.end()) Violation("before a document not held: " + IdText(*before));
    return it;
  }
  void Violation(std::string what) { violations_.push_back(std::move(what)); }

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Item> items_;
  std::vector<std::string> violations_;
  int events_ = 0;
  int ends_ = 0;
  Status end_;
};

// A query's shape, for re-running it.
struct Shape {
  std::string filter, sort, projection;
  int64_t skip = 0, limit = 0;
};

ObserveOptions OptionsOf(const Shape& q, bool own_thread) {
  ObserveOptions o;
  if (!q.sort.empty()) o.sort = Json(q.sort);
  if (!q.projection.empty()) o.projection = Json(q.projection);
  o.skip = q.skip;
  o.limit = q.limit;
  o.own_thread = own_thread;
  return o;
}

class LiveQueryTest : public test::ClientTest {
 protected:
  Collection Coll() { return db().GetCollection("c"); }

  // The query re-run: its documents, canonical.
  std::vector<std::string> Rerun(const Shape& q) {
    FindOptions f;
    BsonBuilder sort;
    bool has_id = false;
    if (!q.sort.empty()) {
      for (const Element& e : Json(q.sort)) {
        sort.AppendElement(e);
        has_id = has_id || e.key() == "_id";
      }
    }
    if (!has_id) sort.AppendInt32("_id", 1);
    f.sort = std::move(sort).Build();
    if (!q.projection.empty()) f.projection = Json(q.projection);
    f.skip = q.skip;
    f.limit = q.limit;
    auto cursor = Coll().Find(Json(q.filter), f);
    EXPECT_TRUE(cursor.ok()) << cursor.status();
    std::vector<std::string> out;
    if (!cursor.ok()) return out;
    while (cursor->Next()) out.push_back(Canonical(cursor->document()));
    EXPECT_TRUE(cursor->status().ok()) << cursor->status();
    return out;
  }
  static std::vector<std::string> CanonicalsOf(const std::vector<Document>& docs) {
    std::vector<std::string> out;
    for (const Document& d : docs) out.push_back(Canonical(d));
    return out;
  }
};

// A random document of few distinct values, so that filters and sorts meet
// ties, arrays and missing fields.
std::string RandomBody(std::mt19937& rng) {
  std::string body;
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  if (pick(5) != 0) body += ", \"a\": " + std::to_string(pick(8));
  if (pick(4) == 0) {
    body += ", \"b\": \"s" + std::to_string(pick(3)) + "\"";
  } else if (pick(3) != 0) {
    body += ", \"b\": " + std::to_string(pick(4) - 1);
  }
  if (pick(3) == 0) {
    body += ", \"t\": [" + std::to_string(pick(6)) + ", " + std::to_string(pick(6)) + "]";
  }
  if (pick(4) == 0) body += ", \"n\": {\"x\": " + std::to_string(pick(5)) + "}";
  return body;
}

std::string RandomUpdate(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  switch (pick(6)) {
    case 0:
      return R"({"$set": {"a": )" + std::to_string(pick(8)) + "}}";
    case 1:
      return R"({"$inc": {"a": )" + std::to_string(pick(3) - 1) + "}}";
    case 2:
      return R"({"$unset": {"b": ""}})";
    case 3:
      return R"({"$set": {"b": )" + std::to_string(pick(4) - 1) + ", \"z\": " +
             std::to_string(pick(2)) + "}}";
    case 4:
      return R"({"$push": {"t": )" + std::to_string(pick(6)) + "}}";
    default:
      return R"({"$set": {"n.x": )" + std::to_string(pick(5)) + "}}";
  }
}

std::string RandomFilter(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  switch (pick(4)) {
    case 0:
      return R"({"a": {"$gte": )" + std::to_string(pick(8)) + "}}";
    case 1:
      return R"({"_id": )" + std::to_string(pick(40)) + "}";
    case 2:
      return R"({"b": {"$exists": true}})";
    default:
      return "{}";
  }
}

// One random write (or a transaction of several); *renamed: whether it
// renamed a collection onto `c`.
void RandomWrite(Client& client, const Collection& c, std::mt19937& rng, int* next_id,
                 bool* renamed) {
  *renamed = false;
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  auto id = [&] { return std::to_string(pick(*next_id + 1)); };
  const int what = pick(100);
  Status s;
  if (what < 30) {
    s = c.InsertOne(Json("{\"_id\": " + std::to_string((*next_id)++) + RandomBody(rng) + "}"))
            .status();
  } else if (what < 50) {
    s = c.UpdateOne(Json("{\"_id\": " + id() + "}"), Json(RandomUpdate(rng))).status();
  } else if (what < 58) {
    s = c.UpdateMany(Json(RandomFilter(rng)), Json(RandomUpdate(rng))).status();
  } else if (what < 68) {
    s = c.ReplaceOne(Json("{\"_id\": " + id() + "}"), Json("{\"r\": 1" + RandomBody(rng) + "}"))
            .status();
  } else if (what < 80) {
    s = c.DeleteOne(Json("{\"_id\": " + id() + "}")).status();
  } else if (what < 83) {
    s = c.DeleteMany(Json(RandomFilter(rng))).status();
  } else if (what < 95) {
    auto session = client.StartSession();
    ASSERT_TRUE(session.ok()) << session.status();
    Collection in = session->GetDatabase("test").GetCollection("c");
    ASSERT_TRUE(session->StartTransaction().ok());
    for (int i = pick(4); i >= 0; --i) {
      if (pick(2) == 0) {
        (void)in.InsertOne(
            Json("{\"_id\": " + std::to_string((*next_id)++) + RandomBody(rng) + "}"));
      } else if (pick(2) == 0) {
        (void)in.UpdateOne(Json("{\"_id\": " + id() + "}"), Json(RandomUpdate(rng)));
      } else {
        (void)in.DeleteOne(Json("{\"_id\": " + id() + "}"));
      }
    }
    s = pick(3) == 0 ? session->AbortTransaction() : session->CommitTransaction();
  } else if (what < 97) {
    s = client.GetDatabase("test").DropCollection("c");
  } else {
    // Documents arrive by a rename onto the collection.
    Collection other = client.GetDatabase("test").GetCollection("other");
    for (int i = pick(4); i >= 0; --i) {
      ASSERT_TRUE(other
                      .InsertOne(Json("{\"_id\": " + std::to_string((*next_id)++) +
                                      RandomBody(rng) + "}"))
                      .ok());
    }
    s = client.GetDatabase("test").RenameCollection("other", "c", /*drop_target=*/true);
    *renamed = true;
  }
  // A duplicate _id from a replace or a transaction conflict is an
  // ordinary outcome; anything else is a failure of the test.
  EXPECT_TRUE(s.ok() || s.code() == ErrorCode::kDuplicateKey) << s;
}

const Shape kShapes[] = {
    {"{}", "", "", 0, 0},
    {R"({"a": {"$gte": 3}})", "", "", 0, 0},
    {"{}", R"({"a": 1})", "", 0, 3},
    {R"({"b": {"$exists": true}})", R"({"b": -1, "a": 1})", R"({"a": 1, "b": 1})", 2, 4},
    {R"({"t": {"$in": [1, 2, 3]}})", R"({"t": 1})", R"({"t": 1, "n": 1})", 0, 0},
    {R"({"$or": [{"a": {"$lt": 2}}, {"n.x": {"$gt": 2}}]})", R"({"n.x": -1})", R"({"a": 0})", 1,
     2},
    {"{}", R"({"a": -1})", R"({"z": 0, "t": 0})", 5, 0},
};

TEST_F(LiveQueryTest, TheObservedListEqualsTheQueryAfterEveryChange) {
  for (size_t shape = 0; shape < std::size(kShapes); ++shape) {
    SCOPED_TRACE("shape " + std::to_string(shape));
    const Shape& q = kShapes[shape];
    ASSERT_TRUE(db().DropCollection("c").ok());
    std::mt19937 rng(static_cast<uint32_t>(1234 + shape));
    int next_id = 0;
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(
          Coll().InsertOne(Json("{\"_id\": " + std::to_string(next_id++) + RandomBody(rng) + "}"))
              .ok());
    }
    ObservedList list;
    auto live = Coll().Observe(Json(q.filter), OptionsOf(q, /*own_thread=*/false), list.Callbacks());
    ASSERT_TRUE(live.ok()) << live.status();
    ASSERT_EQ(list.Canonicals(), Rerun(q));
    int renames = 0;
    for (int step = 0; step < 300; ++step) {
      bool renamed = false;
      RandomWrite(*client_, Coll(), rng, &next_id, &renamed);
      renames += renamed ? 1 : 0;
      ASSERT_TRUE(live->Poll().ok());
      const std::vector<std::string> want = Rerun(q);
      ASSERT_EQ(list.Canonicals(), want) << "after step " << step;
      ASSERT_EQ(CanonicalsOf(live->result()), want) << "after step " << step;
      ASSERT_TRUE(list.violations().empty()) << list.violations().front();
    }
    if (q.limit == 0) {
      // Drops leave nothing to read; each rename onto the collection is
      // one requery, and nothing else re-runs the query.
      EXPECT_EQ(live->requeries(), renames) << "an unlimited query is maintained, not re-run";
    }
    std::printf("shape %zu: %d callbacks, %lld requeries\n", shape, list.events(),
                static_cast<long long>(live->requeries()));
    live->Stop();
    EXPECT_EQ(list.ends(), 1);
    EXPECT_TRUE(list.end().ok()) << list.end();
  }
}

TEST_F(LiveQueryTest, AddedMovedAndRemovedNameTheirNeighbours) {
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(Coll().InsertOne(Json("{\"_id\": " + std::to_string(i) + ", \"a\": " +
                                      std::to_string(i * 10) + "}"))
                    .ok());
  }
  std::vector<std::string> log;
  ObserveCallbacks cb;
  auto before_text = [](const std::optional<Value>& b) { return b ? IdText(*b) : "end"; };
  cb.added = [&](const Value& id, const Document& doc, const std::optional<Value>& before) {
    log.push_back("added " + IdText(id) + " " + ToJson(doc) + " before " + before_text(before));
  };
  cb.changed = [&](const Value& id, const Document& fields, const std::vector<std::string>& gone) {
    std::string g;
    for (const auto& f : gone) g += f + ",";
    log.push_back("changed " + IdText(id) + " " + ToJson(fields) + " gone " + g);
  };
  cb.moved = [&](const Value& id, const std::optional<Value>& before) {
    log.push_back("moved " + IdText(id) + " before " + before_text(before));
  };
  cb.removed = [&](const Value& id) { log.push_back("removed " + IdText(id)); };
  ObserveOptions o;
  o.sort = Json(R"({"a": 1})");
  o.limit = 3;
  o.own_thread = false;
  auto live = Coll().Observe(Json("{}"), o, cb);
  ASSERT_TRUE(live.ok()) << live.status();
  // The initial result, added from the end backwards.
  EXPECT_EQ(log, (std::vector<std::string>{
                     R"(added {"_id": 3} {"_id": 3, "a": 30} before end)",
                     R"(added {"_id": 2} {"_id": 2, "a": 20} before {"_id": 3})",
                     R"(added {"_id": 1} {"_id": 1, "a": 10} before {"_id": 2})"}));
  log.clear();
  // 1 moves past 3 (and stays in the first three).
  ASSERT_TRUE(Coll().UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"a": 35}})")).ok());
  ASSERT_TRUE(live->Poll().ok());
  EXPECT_EQ(log, (std::vector<std::string>{R"(moved {"_id": 1} before end)",
                                           R"(changed {"_id": 1} {"a": 35} gone )"}));
  log.clear();
  // A new first document pushes the last (1) out.
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 6, "a": 0})")).ok());
  ASSERT_TRUE(live->Poll().ok());
  EXPECT_EQ(log, (std::vector<std::string>{R"(removed {"_id": 1})",
                                           R"(added {"_id": 6} {"_id": 6, "a": 0} before {"_id": 2})"}));
  log.clear();
  // A field removed is reported as gone.
  ASSERT_TRUE(Coll().UpdateOne(Json(R"({"_id": 6})"), Json(R"({"$set": {"x": 1}})")).ok());
  ASSERT_TRUE(Coll().UpdateOne(Json(R"({"_id": 6})"), Json(R"({"$unset": {"x": ""}})")).ok());
  ASSERT_TRUE(live->Poll().ok());
  EXPECT_TRUE(log.empty()) << log.front() << " (two changes that cancel out report nothing)";
  ASSERT_TRUE(Coll().UpdateOne(Json(R"({"_id": 6})"), Json(R"({"$set": {"x": 1}})")).ok());
  ASSERT_TRUE(live->Poll().ok());
  ASSERT_TRUE(Coll().UpdateOne(Json(R"({"_id": 6})"), Json(R"({"$unset": {"x": ""}})")).ok());
  ASSERT_TRUE(live->Poll().ok());
  EXPECT_EQ(log, (std::vector<std::string>{R"(changed {"_id": 6} {"x": 1} gone )",
                                           R"(changed {"_id": 6} {} gone x,)"}));
}

TEST_F(LiveQueryTest, OnItsOwnThreadWithWritersOnOthers) {
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": -1, "a": 1})")).ok());
  const Shape q{R"({"a": {"$gte": 2}})", R"({"a": -1})", "", 0, 10};
  ObservedList list;
  std::mutex thread_mu;
  std::thread::id callback_thread;
  ObserveCallbacks cb = list.Callbacks();
  auto added = cb.added;
  cb.added = [&](const Value& id, const Document& doc, const std::optional<Value>& before) {
    {
      std::lock_guard<std::mutex> g(thread_mu);
      callback_thread = std::this_thread::get_id();
    }
    added(id, doc, before);
  };
  auto live = Coll().Observe(Json(q.filter), OptionsOf(q, /*own_thread=*/true), cb);
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_EQ(live->Poll().code(), ErrorCode::kIllegalOperation);
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      std::mt19937 rng(77 + w);
      for (int i = 0; i < 150; ++i) {
        const int id = w * 1000 + i;
        (void)Coll().InsertOne(Json("{\"_id\": " + std::to_string(id) + ", \"a\": " +
                                    std::to_string(rng() % 50) + "}"));
        if (i % 3 == 0) {
          (void)Coll().UpdateOne(Json("{\"_id\": " + std::to_string(w * 1000 + rng() % (i + 1)) + "}"),
                                 Json(R"({"$inc": {"a": 7}})"));
        }
        if (i % 5 == 0) {
          (void)Coll().DeleteOne(Json("{\"_id\": " + std::to_string(w * 1000 + rng() % (i + 1)) + "}"));
        }
      }
    });
  }
  for (auto& t : writers) t.join();
  const std::vector<std::string> want = Rerun(q);
  ASSERT_EQ(want.size(), 10u);
  EXPECT_TRUE(list.WaitFor(want)) << "the live query never caught up with the writers";
  EXPECT_TRUE(list.violations().empty()) << list.violations().front();
  {
    std::lock_guard<std::mutex> g(thread_mu);
    EXPECT_NE(callback_thread, std::this_thread::get_id());
  }
  live->Stop();
  EXPECT_FALSE(live->running());
  EXPECT_EQ(list.ends(), 1);
  // Nothing is reported after Stop.
  const int events = list.events();
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 99999, "a": 100})")).ok());
  EXPECT_EQ(list.events(), events);
}

TEST_F(LiveQueryTest, StopFromACallbackAndTheClientsClose) {
  ObservedList list;
  ObserveCallbacks cb = list.Callbacks();
  LiveQuery* handle = nullptr;
  auto added = cb.added;
  cb.added = [&](const Value& id, const Document& doc, const std::optional<Value>& before) {
    added(id, doc, before);
    if (id.element().Int32() == 2 && handle != nullptr) handle->Stop();
  };
  auto live = Coll().Observe(Json("{}"), OptionsOf(Shape{"{}"}, false), cb);
  ASSERT_TRUE(live.ok()) << live.status();
  handle = &*live;
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 2})")).ok());
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 3})")).ok());
  ASSERT_TRUE(live->Poll().ok());
  EXPECT_FALSE(live->running());
  EXPECT_EQ(list.ends(), 1);
  // Reported from the end backwards: 3, then 2, and it stopped there.
  EXPECT_EQ(list.events(), 2);
  EXPECT_EQ(live->Poll().code(), ErrorCode::kIllegalOperation);

  // On its own thread: the client's close ends it with IllegalOperation.
  ObservedList second;
  auto threaded = Coll().Observe(Json("{}"), OptionsOf(Shape{"{}"}, true), second.Callbacks());
  ASSERT_TRUE(threaded.ok()) << threaded.status();
  ASSERT_TRUE(client_->Close().ok());
  ASSERT_TRUE(second.WaitForEnd());
  EXPECT_EQ(second.end().code(), ErrorCode::kIllegalOperation) << second.end();
}

// A log trimmed past the query's position (ChangeStreamHistoryLost for a
// stream) is read again instead: the query re-runs and reports the
// differences, never missing a change.
TEST_F(LiveQueryTest, ALogTrimmedPastTheQueryReRunsIt) {
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(Coll().InsertOne(Json("{\"_id\": " + std::to_string(i) + ", \"a\": " +
                                      std::to_string(i) + "}"))
                    .ok());
  }
  const Shape q{R"({"a": {"$gte": 5}})", R"({"a": -1})", "", 0, 3};
  ObservedList list;
  auto live = Coll().Observe(Json(q.filter), OptionsOf(q, /*own_thread=*/false), list.Callbacks());
  ASSERT_TRUE(live.ok()) << live.status();
  ASSERT_EQ(live->requeries(), 0);
  // Many changes, then a bound so small that they are trimmed before the
  // query reads them.
  for (int i = 10; i < 300; ++i) {
    ASSERT_TRUE(Coll().InsertOne(Json("{\"_id\": " + std::to_string(i) + ", \"a\": " +
                                      std::to_string(i % 50) + "}"))
                    .ok());
  }
  ASSERT_TRUE(Coll().DeleteOne(Json(R"({"a": 49})")).ok());
  ASSERT_TRUE(client_->SetChangeLogRetention(1000, 0).ok());
  ASSERT_TRUE(live->Poll().ok());
  EXPECT_EQ(live->requeries(), 1);
  EXPECT_EQ(list.Canonicals(), Rerun(q));
  EXPECT_TRUE(list.violations().empty()) << list.violations().front();
  // And it goes on from there.
  ASSERT_TRUE(Coll().InsertOne(Json(R"({"_id": 1000, "a": 100})")).ok());
  ASSERT_TRUE(live->Poll().ok());
  EXPECT_EQ(list.Canonicals(), Rerun(q));
}

TEST_F(LiveQueryTest, Errors) {
  ObserveCallbacks none;
  auto code = [&](std::string_view filter, ObserveOptions o) {
    o.own_thread = false;
    auto live = Coll().Observe(Json(filter), o, none);
    return live.ok() ? ErrorCode::kOk : live.status().code();
  };
  ObserveOptions o;
  EXPECT_EQ(code("{}", o), ErrorCode::kOk);
  EXPECT_EQ(code(R"({"a": {"$bogus": 1}})", o), ErrorCode::kBadValue);
  o.skip = -1;
  EXPECT_EQ(code("{}", o), ErrorCode::kBadValue);
  o = {};
  o.limit = -2;
  EXPECT_EQ(code("{}", o), ErrorCode::kBadValue);
  o = {};
  o.sort = Json(R"({"$natural": 1})");
  EXPECT_EQ(code("{}", o), ErrorCode::kBadValue);
  o.sort = Json(R"({"s": {"$meta": "textScore"}})");
  EXPECT_EQ(code("{}", o), ErrorCode::kBadValue);
  o = {};
  o.projection = Json(R"({"a": 1, "b": 0})");
  EXPECT_EQ(static_cast<int>(code("{}", o)), 31254);
  // A view.
  ASSERT_TRUE(test::CreateCommand(*client_, "test", "v",
                                  R"({"viewOn": "c", "pipeline": []})")
                  .ok());
  auto on_view = db().GetCollection("v").Observe(Json("{}"), {}, none);
  EXPECT_EQ(on_view.status().code(), ErrorCode::kCommandNotSupportedOnView);
  // Inside a transaction.
  auto session = client_->StartSession();
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(session->StartTransaction().ok());
  auto in_txn = session->GetDatabase("test").GetCollection("c").Observe(Json("{}"), {}, none);
  EXPECT_EQ(in_txn.status().code(), ErrorCode::kOperationNotSupportedInTransaction);
  ASSERT_TRUE(session->AbortTransaction().ok());
  // Without the change log.
  client_.reset();
  ClientOptions off = test::TestClientOptions();
  off.change_log = false;
  auto c = Client::Open(dir_.Sub("db"), off);
  ASSERT_TRUE(c.ok()) << c.status();
  auto no_log = (*c)->GetDatabase("test").GetCollection("c").Observe(Json("{}"), {}, none);
  EXPECT_EQ(static_cast<int>(no_log.status().code()), 40573);
}

}  // namespace
}  // namespace rockdoc

// ChangeSubscription (issue 37): a change stream read on a thread of
// rockdoc's own. Every event reaches the callback in commit order, on that
// thread, the same events as a stream read by hand (token for token), with
// writers on other threads; a slow callback delays and loses nothing;
// on_end runs once, last: OK after an invalidate or Cancel, the error when
// the client closes; Cancel from a callback, and the handle destroyed from
// its own callback, stop it; the resume token resumes after the last event
// delivered. Also run under ThreadSanitizer (scripts/test.sh).
//
// No test waits for a time: each waits for the event it needs (a callback
// count, on_end), with a generous bound only so that a defect fails rather
// than hangs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

// What a subscription's callbacks saw, for the test thread to wait on.
class Recorder {
 public:
  ChangeSubscription::EventCallback OnEvent() {
    return [this](const Document& e) {
      std::lock_guard<std::mutex> g(mu_);
      tokens_.push_back(std::string(e.Get("_id").Document().Get("_data").String()));
      ops_.push_back(std::string(e.Get("operationType").String()));
      threads_.push_back(std::this_thread::get_id());
      changed_.notify_all();
    };
  }
  ChangeSubscription::EndCallback OnEnd() {
    return [this](const Status& s) {
      std::lock_guard<std::mutex> g(mu_);
      ++ends_;
      end_ = s;
      events_at_end_ = tokens_.size();
      changed_.notify_all();
    };
  }
  // Waits until `n` events came (false if a minute passes first).
  bool WaitForEvents(size_t n) {
    std::unique_lock<std::mutex> g(mu_);
    return changed_.wait_for(g, std::chrono::minutes(1), [&] { return tokens_.size() >= n; });
  }
  bool WaitForEnd() {
    std::unique_lock<std::mutex> g(mu_);
    return changed_.wait_for(g, std::chrono::minutes(1), [&] { return ends_ > 0; });
  }
  std::vector<std::string> tokens() const {
    std::lock_guard<std::mutex> g(mu_);
    return tokens_;
  }
  std::vector<std::string> ops() const {
    std::lock_guard<std::mutex> g(mu_);
    return ops_;
  }
  std::vector<std::thread::id> threads() const {
    std::lock_guard<std::mutex> g(mu_);
    return threads_;
  }
  int ends() const {
    std::lock_guard<std::mutex> g(mu_);
    return ends_;
  }
  Status end() const {
    std::lock_guard<std::mutex> g(mu_);
    return end_;
  }
  size_t events_at_end() const {
    std::lock_guard<std::mutex> g(mu_);
    return events_at_end_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::string> tokens_, ops_;
  std::vector<std::thread::id> threads_;
  int ends_ = 0;
  Status end_;
  size_t events_at_end_ = 0;
};

class ChangeSubscriptionTest : public test::ClientTest {
 protected:
  Collection Coll() { return db().GetCollection("c"); }
  void Insert(int id) {
    ASSERT_TRUE(Coll().InsertOne(Json("{\"_id\": " + std::to_string(id) + "}")).ok());
  }
  // The tokens of every event a stream resumed from `from` reads now.
  std::vector<std::string> TokensAfter(const Document& from) {
    ChangeStreamOptions o;
    o.resume_after = from;
    auto stream = Coll().Watch({}, o);
    EXPECT_TRUE(stream.ok()) << stream.status();
    std::vector<std::string> out;
    if (!stream.ok()) return out;
    for (;;) {
      auto e = stream->TryNext();
      EXPECT_TRUE(e.ok()) << e.status();
      if (!e.ok() || !*e) return out;
      out.push_back(std::string((**e).Get("_id").Document().Get("_data").String()));
    }
  }
};

TEST_F(ChangeSubscriptionTest, EveryEventInCommitOrderOnItsOwnThreadAsAStreamReadsThem) {
  Insert(0);  // the collection exists
  auto start = Coll().Watch();
  ASSERT_TRUE(start.ok()) << start.status();
  const Document from = start->resume_token();
  Recorder r;
  auto sub = ChangeSubscription::Start(std::move(*start), r.OnEvent(), r.OnEnd());
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_TRUE(sub->running());
  // Two writers at once, 100 inserts each, and updates of the first's.
  std::thread a([&] {
    for (int i = 1; i <= 100; ++i) Insert(i);
  });
  std::thread b([&] {
    for (int i = 1001; i <= 1100; ++i) Insert(i);
  });
  a.join();
  b.join();
  ASSERT_TRUE(Coll().UpdateMany(Json("{}"), Json(R"({"$set": {"seen": true}})")).ok());
  ASSERT_TRUE(r.WaitForEvents(401));  // 200 inserts, 201 updates
  // The same events, in the same order, as a stream read by hand.
  EXPECT_EQ(r.tokens(), TokensAfter(from));
  for (const std::thread::id& t : r.threads()) {
    EXPECT_EQ(t, r.threads()[0]);
    EXPECT_NE(t, std::this_thread::get_id());
  }
  sub->Cancel();
  EXPECT_FALSE(sub->running());
  EXPECT_EQ(r.ends(), 1);
  EXPECT_TRUE(r.end().ok()) << r.end();
  // Cancel returned: nothing runs again.
  Insert(5000);
  EXPECT_EQ(TokensAfter(from).size(), 402u);
  EXPECT_EQ(r.tokens().size(), 401u);
  sub->Cancel();  // again: nothing to do
  EXPECT_EQ(r.ends(), 1);
}

TEST_F(ChangeSubscriptionTest, ASlowCallbackDelaysAndLosesNothing) {
  Insert(0);
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool open = false;
  Recorder r;
  auto inner = r.OnEvent();
  auto sub = ChangeSubscription::Start(
      *Coll().Watch(),
      [&](const Document& e) {
        inner(e);
        std::unique_lock<std::mutex> g(gate_mu);
        gate_cv.wait(g, [&] { return open; });  // held until the writes are done
      },
      r.OnEnd());
  ASSERT_TRUE(sub.ok()) << sub.status();
  Insert(1);
  ASSERT_TRUE(r.WaitForEvents(1));
  for (int i = 2; i <= 60; ++i) Insert(i);  // while the callback is held
  EXPECT_EQ(r.tokens().size(), 1u);
  {
    std::lock_guard<std::mutex> g(gate_mu);
    open = true;
  }
  gate_cv.notify_all();
  ASSERT_TRUE(r.WaitForEvents(60));
  EXPECT_EQ(r.ops(), std::vector<std::string>(60, "insert"));
  sub->Cancel();
}

TEST_F(ChangeSubscriptionTest, AnInvalidateEndsItWithOk) {
  Insert(0);
  Recorder r;
  auto sub = ChangeSubscription::Start(*Coll().Watch(), r.OnEvent(), r.OnEnd());
  ASSERT_TRUE(sub.ok()) << sub.status();
  Insert(1);
  ASSERT_TRUE(Coll().Drop().ok());
  ASSERT_TRUE(r.WaitForEnd());
  EXPECT_TRUE(r.end().ok()) << r.end();
  EXPECT_EQ(r.ops(), (std::vector<std::string>{"insert", "drop", "invalidate"}));
  EXPECT_EQ(r.events_at_end(), 3u);  // on_end came last
  EXPECT_FALSE(sub->running());
  sub->Cancel();
  EXPECT_EQ(r.ends(), 1);
}

TEST_F(ChangeSubscriptionTest, TheClientsCloseEndsItWithAnError) {
  Insert(0);
  Recorder r;
  auto sub = ChangeSubscription::Start(*Coll().Watch(), r.OnEvent(), r.OnEnd());
  ASSERT_TRUE(sub.ok()) << sub.status();
  ASSERT_TRUE(client_->Close().ok());
  ASSERT_TRUE(r.WaitForEnd());
  EXPECT_EQ(r.end().code(), ErrorCode::kIllegalOperation) << r.end();
  sub->Cancel();
  EXPECT_EQ(r.ends(), 1);
}

TEST_F(ChangeSubscriptionTest, CancelFromACallbackStopsAfterIt) {
  Insert(0);
  Recorder r;
  auto inner = r.OnEvent();
  std::atomic<ChangeSubscription*> self{nullptr};
  auto sub = ChangeSubscription::Start(
      *Coll().Watch(),
      [&](const Document& e) {
        inner(e);
        if (e.GetPath("documentKey._id").Int32() == 3) self.load()->Cancel();
      },
      r.OnEnd());
  ASSERT_TRUE(sub.ok()) << sub.status();
  self.store(&*sub);
  for (int i = 1; i <= 10; ++i) Insert(i);
  ASSERT_TRUE(r.WaitForEnd());
  EXPECT_TRUE(r.end().ok()) << r.end();
  EXPECT_EQ(r.events_at_end(), 3u);
  sub->Cancel();  // joins the thread that stopped itself
  EXPECT_EQ(r.tokens().size(), 3u);
}

TEST_F(ChangeSubscriptionTest, ItsHandleDestroyedInItsCallbackLetsItEnd) {
  Insert(0);
  Recorder r;
  auto inner = r.OnEvent();
  std::optional<ChangeSubscription> holder;
  auto sub = ChangeSubscription::Start(
      *Coll().Watch(),
      [&](const Document& e) {
        inner(e);
        holder.reset();  // the handle goes on the subscription's own thread
      },
      r.OnEnd());
  ASSERT_TRUE(sub.ok()) << sub.status();
  holder.emplace(std::move(*sub));
  Insert(1);
  Insert(2);
  ASSERT_TRUE(r.WaitForEnd());
  EXPECT_TRUE(r.end().ok()) << r.end();
  EXPECT_EQ(r.events_at_end(), 1u);
  EXPECT_FALSE(holder.has_value());
}

TEST_F(ChangeSubscriptionTest, ItsResumeTokenResumesAfterTheLastEventDelivered) {
  Insert(0);
  Recorder r;
  auto sub = ChangeSubscription::Start(*Coll().Watch(), r.OnEvent(), r.OnEnd());
  ASSERT_TRUE(sub.ok()) << sub.status();
  for (int i = 1; i <= 3; ++i) Insert(i);
  ASSERT_TRUE(r.WaitForEvents(3));
  sub->Cancel();
  const Document token = sub->resume_token();
  for (int i = 4; i <= 5; ++i) Insert(i);
  const std::vector<std::string> after = TokensAfter(token);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_GT(after[0], r.tokens().back());  // tokens order as their events
}

TEST_F(ChangeSubscriptionTest, StartNeedsACallbackAndAnOpenStream) {
  EXPECT_EQ(ChangeSubscription::Start(*Coll().Watch(), nullptr).status().code(),
            ErrorCode::kBadValue);
  auto closed = Coll().Watch();
  ASSERT_TRUE(closed.ok());
  closed->Close();
  EXPECT_EQ(ChangeSubscription::Start(std::move(*closed), [](const Document&) {}).status().code(),
            ErrorCode::kBadValue);
}

}  // namespace
}  // namespace rockdoc

// Tests of the rockdoc shell (src/shell/), driven in-process: live queries,
// db.c.find(q).sort(s).limit(n).observe(callbacks). The changes printed
// without callbacks; the callbacks with their arguments; result() against
// the find re-run after random writes made through the library (so that a
// write the shell did not make is seen too); the cursor options a live
// query refuses; a stopped query's poll; poll(ms) woken by a write from
// another thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>

#include "shell_test_fixture.h"

namespace rockdoc::shell {
namespace {

using ::testing::HasSubstr;

TEST_F(ShellTest, ObserveWithoutCallbacksPrintsEachChange) {
  Ok("db.c.insertMany([{_id: 1, a: 30}, {_id: 2, a: 10}, {_id: 3, a: 20}, {_id: 4, a: 40}])");
  EXPECT_EQ(Ok("live = db.c.find({a: {$gte: 15}}).sort({a: 1}).limit(2).observe(); print(live)"),
            "added { _id: 1, a: 30 }\n"
            "added { _id: 3, a: 20 } before { _id: 1 }\n"
            "LiveQuery on test.c: 2 documents\n");
  EXPECT_EQ(Ok("db.c.insertOne({_id: 5, a: 16}); print(live.poll())"),
            "removed { _id: 1 }\n"
            "added { _id: 5, a: 16 } before { _id: 3 }\n"
            "2\n");
  EXPECT_EQ(Ok("db.c.updateOne({_id: 5}, {$set: {a: 25, b: 1}}); print(live.poll())"),
            "moved { _id: 5 } before the end\n"
            "changed { _id: 5 } { a: 25, b: 1 }\n"
            "2\n");
  EXPECT_EQ(Ok("db.c.updateOne({_id: 5}, {$unset: {b: ''}}); live.poll()"),
            "changed { _id: 5 } {} removed [ 'b' ]\n");
  EXPECT_EQ(Ok("printjson(live.result())"), "[ { _id: 3, a: 20 }, { _id: 5, a: 25 } ]\n");
  // Nothing committed: nothing printed, 0.
  EXPECT_EQ(Ok("print(live.poll())"), "0\n");
  Ok("live.stop()");
  Run("live.poll()");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("the live query is stopped"));
}

TEST_F(ShellTest, ObserveCallsItsCallbacks) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}])");
  Ok("log = []; q = db.c.find({}, {a: 1}).sort({a: -1}).observe({"
     "added(doc, before) { log.push(['added', doc._id, before]); },"
     "changed(id, fields, removed) { log.push(['changed', id, fields, removed]); },"
     "moved(id, before) { log.push(['moved', id, before]); },"
     "removed(id) { log.push(['removed', id]); } })");
  Ok("db.c.updateOne({_id: 1}, {$set: {a: 3, hidden: 1}}); db.c.deleteOne({_id: 2}); q.poll()");
  EXPECT_EQ(Ok("print(EJSON.stringify(log))"),
            R"([["added",1,null],["added",2,1],["removed",2],["changed",1,{"a":3},[]]])"
            "\n");
  // Unknown callbacks and options a live query does not take are refused.
  Run("db.c.find().observe({add() {}})");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("unknown callback 'add'"));
  Run("db.c.find().maxTimeMS(5).observe()");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("does not support maxTimeMS()"));
  Run("db.c.aggregate([]).observe()");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("observe() is for a find"));
  Run("db.c.find({a: {$bogus: 1}}).observe()");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("$bogus"));
}

TEST_F(ShellTest, ObserveResultFollowsWritesTheShellDidNotMake) {
  Ok("q = db.c.find({a: {$lt: 5}}).sort({a: 1, _id: -1}).skip(1).limit(4).observe({})");
  std::mt19937 rng(5);
  for (int step = 0; step < 150; ++step) {
    const int id = static_cast<int>(rng() % 30);
    const int a = static_cast<int>(rng() % 8);
    switch (rng() % 3) {
      case 0:
        (void)Coll("c").ReplaceOne(test::Json("{\"_id\": " + std::to_string(id) + "}"),
                                   test::Json("{\"a\": " + std::to_string(a) + "}"),
                                   /*upsert=*/true);
        break;
      case 1:
        (void)Coll("c").UpdateOne(test::Json("{\"_id\": " + std::to_string(id) + "}"),
                                  test::Json("{\"$inc\": {\"a\": -1}}"));
        break;
      default:
        (void)Coll("c").DeleteOne(test::Json("{\"_id\": " + std::to_string(id) + "}"));
    }
    Ok("q.poll()");
    ASSERT_EQ(Ok("print(EJSON.stringify(q.result()))"),
              Ok("print(EJSON.stringify(db.c.find({a: {$lt: 5}}).sort({a: 1, _id: -1}).skip(1)"
                 ".limit(4).toArray()))"))
        << "after step " << step;
  }
}

TEST_F(ShellTest, ObservePollWaitsForAWriteFromAnotherThread) {
  Ok("q = db.c.find().observe({})");
  std::thread writer([&] {
    // The shell's poll may start before or after this insert; either way it
    // returns with it (a poll started later finds it at once).
    ASSERT_TRUE(Coll("c").InsertOne(test::Json(R"({"_id": 1})")).ok());
  });
  EXPECT_EQ(Ok("print(q.poll(600000))"), "1\n");
  writer.join();
}

}  // namespace
}  // namespace rockdoc::shell

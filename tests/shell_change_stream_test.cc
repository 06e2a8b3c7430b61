// Tests of the rockdoc shell (src/shell/), driven in-process: change
// streams, mongosh's ChangeStreamCursor. db.c.watch(), db.watch() and
// db.getMongo().watch() against the library's own streams (the same events,
// token for token), resume tokens by the drivers' rule, the options (the
// cursor's, the stage's, an unknown one refused), invalidation and a closed
// cursor's errors, a next() woken by a write from another thread, the REPL's
// printing and `it`, and --noChangeLog.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "shell_test_fixture.h"

namespace rockdoc::shell {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;

// The events of a library stream that are there now, each as
// "<operationType> <_id's _data>".
std::vector<std::string> Drain(ChangeStream& stream) {
  std::vector<std::string> out;
  for (;;) {
    auto event = stream.TryNext();
    EXPECT_TRUE(event.ok()) << event.status();
    if (!event.ok() || !event->has_value()) return out;
    const Document& e = **event;
    out.push_back(std::string(e.Get("operationType").String()) + " " +
                  std::string(e.Get("_id").Document().Get("_data").String()));
  }
}

// The same, of a shell stream named `cs` (tryNext until null).
std::string ShellDrainCode(std::string_view cs) {
  return "{ const out = []; let e; while ((e = " + std::string(cs) +
         ".tryNext()) !== null) out.push(e.operationType + ' ' + e._id._data); "
         "print(out.join('\\n')); }";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

TEST_F(ShellTest, EachScopeSeesTheLibrarysEventsTokenForToken) {
  Ok("db.c.insertOne({_id: 0})");  // the collection exists before the streams
  auto coll_stream = Coll("c").Watch();
  ASSERT_TRUE(coll_stream.ok()) << coll_stream.status();
  auto db_stream = shell_->client().GetDatabase("test").Watch();
  ASSERT_TRUE(db_stream.ok()) << db_stream.status();
  auto all_stream = shell_->client().Watch();
  ASSERT_TRUE(all_stream.ok()) << all_stream.status();
  Ok("globalThis.cs = db.c.watch([], {maxAwaitTimeMS: 1}); "
     "globalThis.ds = db.watch([], {maxAwaitTimeMS: 1}); "
     "globalThis.ms = db.getMongo().watch([], {maxAwaitTimeMS: 1});");
  Ok("db.c.insertOne({_id: 1, a: 1}); db.c.updateOne({_id: 1}, {$set: {a: 2}}); "
     "db.c.replaceOne({_id: 1}, {b: 1}); db.other.insertOne({_id: 2}); "
     "db.getSiblingDB('elsewhere').x.insertOne({_id: 3}); "
     "db.getSiblingDB('admin').y.insertOne({_id: 4}); db.c.deleteOne({_id: 1});");

  const std::vector<std::string> coll_events = Drain(*coll_stream);
  const std::vector<std::string> db_events = Drain(*db_stream);
  const std::vector<std::string> all_events = Drain(*all_stream);
  ASSERT_EQ(coll_events.size(), 4u);  // insert, update, replace, delete of test.c
  ASSERT_EQ(db_events.size(), 5u);    // and test.other's insert
  ASSERT_EQ(all_events.size(), 6u);   // and elsewhere's (admin's is not a stream's)
  EXPECT_EQ(Lines(Ok(ShellDrainCode("cs"))), coll_events);
  EXPECT_EQ(Lines(Ok(ShellDrainCode("ds"))), db_events);
  EXPECT_EQ(Lines(Ok(ShellDrainCode("ms"))), all_events);
  EXPECT_EQ(Show("[String(cs), String(ds), cs.isClosed()]"),
            "[ 'ChangeStreamCursor on c', 'ChangeStreamCursor on test', false ]\n");
}

TEST_F(ShellTest, ResumeTokensFollowTheDriversRule) {
  Ok("db.c.insertOne({_id: 0})");
  Ok("globalThis.cs = db.c.watch([], {maxAwaitTimeMS: 1}); "
     "db.c.insertMany([{_id: 1}, {_id: 2}, {_id: 3}]);");
  // Within a batch, the token is the last event's _id; past its last, the
  // batch's postBatchResumeToken (a position, not an event's).
  EXPECT_EQ(Show("const e1 = cs.tryNext(); "
                 "[e1.documentKey._id, typeof cs.getResumeToken()._data, "
                 "JSON.stringify(cs.getResumeToken()) === JSON.stringify(e1._id)]"),
            "[ 1, 'string', true ]\n");
  EXPECT_EQ(Show("cs.tryNext(); const e3 = cs.tryNext(); "
                 "[e3.documentKey._id, JSON.stringify(cs.getResumeToken()) === "
                 "JSON.stringify(e3._id)]"),
            "[ 3, false ]\n");
  // resumeAfter the first event: the second and third, nothing else.
  EXPECT_EQ(Show("const r = db.c.watch([], {resumeAfter: e1._id, maxAwaitTimeMS: 1}); "
                 "[r.tryNext().documentKey._id, r.tryNext().documentKey._id, r.tryNext()]"),
            "[ 2, 3, null ]\n");
  // From the post-batch token: only what comes after.
  Ok("globalThis.pbrt = cs.getResumeToken(); db.c.insertOne({_id: 4});");
  EXPECT_EQ(Show("const p = db.c.watch({resumeAfter: pbrt, maxAwaitTimeMS: 1}); "
                 "[p.tryNext().documentKey._id, p.tryNext()]"),
            "[ 4, null ]\n");
  // A new stream's first token is its start (the aggregate's postBatchResumeToken).
  EXPECT_EQ(Show("db.c.watch().getResumeToken() !== null"), "true\n");
}

TEST_F(ShellTest, WatchOptionsAreTheCursorsOrTheStagesAndNoneIsIgnored) {
  Ok("db.c.insertOne({_id: 1, n: 1})");
  Ok("globalThis.cs = db.c.watch([{$match: {operationType: 'update'}}, {$project: {upd: "
     "'$updateDescription.updatedFields', doc: '$fullDocument'}}], "
     "{fullDocument: 'updateLookup', batchSize: 1, maxAwaitTimeMS: 1});");
  Ok("db.c.insertOne({_id: 2}); db.c.updateOne({_id: 1}, {$inc: {n: 5}});");
  EXPECT_EQ(Show("const u = cs.tryNext(); [u.upd, u.doc, cs.tryNext()]"),
            "[ { n: 6 }, { _id: 1, n: 6 }, null ]\n");
  // An option neither the cursor's nor a $changeStream field: the command
  // layer's table refuses it.
  EXPECT_EQ(Show("try { db.c.watch([], {bogus: 1}) } catch (e) { [e.code, e.message] }"),
            "[ 40415, \"BSON field '$changeStream.bogus' is an unknown field.\" ]\n");
  EXPECT_EQ(Show("try { db.c.watch([], {fullDocument: 'sometimes'}) } catch (e) { e.code }"),
            CodeLine(ErrorCode::kBadValue));
  EXPECT_EQ(Show("try { db.c.watch([{$group: {_id: 1}}]) } catch (e) { e.code }"),
            CodeLine(ErrorCode::kIllegalOperation));
  EXPECT_EQ(Show("try { db.c.watch('x') } catch (e) { e.message }"),
            "watch needs an array of stages\n");
  // A stage that changes the resume token fails the stream at its event.
  Ok("globalThis.bad = db.c.watch([{$project: {_id: 0}}], {maxAwaitTimeMS: 1}); "
     "db.c.insertOne({_id: 3});");
  EXPECT_EQ(Show("try { bad.tryNext() } catch (e) { e.code }"), "280\n");
}

TEST_F(ShellTest, AnInvalidatedStreamClosesAndSaysSo) {
  Ok("db.c.insertOne({_id: 1})");
  Ok("globalThis.cs = db.c.watch([], {maxAwaitTimeMS: 1}); db.c.drop();");
  EXPECT_EQ(Show("cs.disableBlockWarnings(); [cs.next().operationType, cs.isClosed(), "
                 "cs.next().operationType, cs.isClosed()]"),
            "[ 'drop', false, 'invalidate', true ]\n");
  EXPECT_EQ(Show("try { cs.tryNext() } catch (e) { [e.name, e.message] }"),
            "[ 'MongoshRuntimeError', 'Cannot call tryNext on closed cursor' ]\n");
  EXPECT_EQ(Show("try { cs.next() } catch (e) { e.message }"), "ChangeStream is closed\n");
  EXPECT_EQ(Show("cs.hasNext()"), "false\n");
  // close() kills the server's cursor: a stream closed by hand is closed.
  EXPECT_EQ(Show("const k = db.d.watch(); k.close(); k.isClosed()"), "true\n");
}

TEST_F(ShellTest, WhatAChangeStreamCursorCannotDoIsRefusedAsMongoshRefusesIt) {
  Ok("globalThis.cs = db.c.watch()");
  for (const char* method : {"toArray", "batchSize", "objsLeftInBatch", "maxTimeMS"}) {
    EXPECT_EQ(Show(std::string("try { cs.") + method + "(1) } catch (e) { [e.code, e.message] }"),
              std::string("[ 238, 'Cannot call ") + method + " on a change stream cursor' ]\n");
  }
  EXPECT_EQ(Show("try { cs.isExhausted() } catch (e) { [e.code, e.message.startsWith("
                 "'[COMMON-10001] isExhausted is not implemented for ChangeStreams because')] }"),
            "[ 2, true ]\n");
  // In a transaction, as MongoDB: 263.
  EXPECT_EQ(Show("const s = db.getMongo().startSession(); s.startTransaction(); "
                 "try { s.getDatabase('test').c.watch() } catch (e) { e.code } "
                 "finally { s.abortTransaction() }"),
            CodeLine(ErrorCode::kOperationNotSupportedInTransaction));
}

TEST_F(ShellTest, NextBlocksUntilAWriteFromElsewhere) {
  Ok("db.c.insertOne({_id: 0}); globalThis.cs = db.c.watch();");
  // The write comes from another thread through the C++ API, whenever it
  // runs: next() returns it either way (before: from the log; after: woken).
  Collection c = Coll("c");
  std::thread writer([&c] { ASSERT_TRUE(c.InsertOne(test::Json(R"({"_id": 7})")).ok()); });
  EXPECT_EQ(Show("cs.next().documentKey._id"), "7\n");
  writer.join();
  // The blocking calls warn once per call unless told not to.
  EXPECT_THAT(err(),
              HasSubstr("Warning: If there are no documents in the batch, next will block."));
  Ok("db.c.insertOne({_id: 8})");
  EXPECT_EQ(Show("cs.disableBlockWarnings(); [cs.hasNext(), cs.next().documentKey._id]"),
            "[ true, 8 ]\n");
  EXPECT_EQ(err(), "");
}

TEST_F(ShellTest, TheReplPrintsTheStreamAndItReadsWhatIsThere) {
  Ok("db.c.insertOne({_id: 0})");
  EXPECT_EQ(Show("db.c.watch({maxAwaitTimeMS: 1})"), "ChangeStreamCursor on c\n");
  EXPECT_EQ(Show("it"), "");  // nothing yet
  Ok("db.c.insertOne({_id: 1}); db.c.insertOne({_id: 2});");
  const std::string page = Show("it");
  EXPECT_THAT(page, HasSubstr("operationType: 'insert'"));
  EXPECT_THAT(page, HasSubstr("documentKey: { _id: 2 }"));
  EXPECT_EQ(Show("it"), "");
  EXPECT_THAT(shell_->Complete("db.c.watch().tryN"), ElementsAre("db.c.watch().tryNext"));
  EXPECT_THAT(shell_->Complete("db.watch().getRes"), ElementsAre("db.watch().getResumeToken"));
  OpenShell(/*json=*/true);
  EXPECT_EQ(Show("db.c.watch()"), "\"ChangeStreamCursor on c\"\n");
}

TEST_F(ShellTest, WithoutTheChangeLogWatchIsRefused) {
  shell_.reset();
  ShellOptions options;
  EXPECT_EQ(options.client.change_log, true);  // the shell's default, unlike the library's
  options.db_path = dir_.Sub("db");
  options.out = &out_;
  options.err = &err_;
  options.client.change_log = false;
  auto shell = Shell::Open(options);
  ASSERT_TRUE(shell.ok()) << shell.status();
  shell_ = std::move(shell).value();
  EXPECT_EQ(Show("try { db.c.watch() } catch (e) { e.code }"), "40573\n");
}

}  // namespace
}  // namespace rockdoc::shell

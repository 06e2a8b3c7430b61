// Tests of the rockdoc shell (src/shell/), driven in-process: sessions and
// transactions. mongosh's session API over the library's Session (issue
// 12): commit and abort, write conflicts and their labels, withTransaction,
// the options' tables, and snapshot sessions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "shell_test_fixture.h"

namespace rockdoc::shell {
namespace {

// ------------------------------------------------ sessions and transactions

// mongosh's session API over the library's Session (issue 12).
TEST_F(ShellTest, ATransactionsWritesAppearAtCommit) {
  Ok("db.acct.insertMany([{_id: 1, b: 100}, {_id: 2, b: 0}])");
  Ok(R"(
    const s = db.getMongo().startSession();
    const a = s.getDatabase('test').acct;
    s.startTransaction({readConcern: {level: 'snapshot'}, writeConcern: {w: 'majority'}});
    a.updateOne({_id: 1}, {$inc: {b: -30}});
    a.updateOne({_id: 2}, {$inc: {b: 30}});
    print(a.findOne({_id: 2}).b, db.acct.findOne({_id: 2}).b);
    s.commitTransaction();
    print(db.acct.findOne({_id: 2}).b);
    s.endSession();
  )");
  EXPECT_EQ(out_.str(), "30 0\n30\n");
  EXPECT_EQ(Show("db.acct.find({}, {_id: 0}).toArray()"), "[ { b: 70 }, { b: 30 } ]\n");
}

TEST_F(ShellTest, AbortAndEndSessionDiscardTheTransaction) {
  Ok(R"(
    const s = db.getMongo().startSession();
    const c = s.getDatabase('test').getCollection('c');
    s.startTransaction();
    c.insertOne({_id: 1});
    s.abortTransaction();
    s.startTransaction();
    c.insertOne({_id: 2});
    s.endSession();
  )");
  EXPECT_EQ(Show("db.c.countDocuments({})"), "0\n");
  EXPECT_EQ(Show("try { const s = db.getMongo().startSession(); s.endSession(); "
                 "s.getDatabase('test').c.insertOne({}) } catch (e) { e.message }"),
            "Cannot use a session that has ended\n");
}

TEST_F(ShellTest, AWriteConflictCarriesTheTransientLabel) {
  Ok("db.c.insertOne({_id: 1, v: 0})");
  std::string out = Show(R"(
    const s1 = db.getMongo().startSession(), s2 = db.getMongo().startSession();
    s1.startTransaction(); s2.startTransaction();
    s1.getDatabase('test').c.updateOne({_id: 1}, {$set: {v: 1}});
    let caught;
    try { s2.getDatabase('test').c.updateOne({_id: 1}, {$set: {v: 2}}); }
    catch (e) { caught = [e.name, e.codeName, e.errorLabels, e.hasErrorLabel('TransientTransactionError')]; }
    s1.commitTransaction();
    let commit;
    try { s2.commitTransaction(); } catch (e) { commit = e.codeName; }
    [caught, commit, db.c.findOne().v]
  )");
  EXPECT_EQ(out,
            "[\n  [\n    'MongoServerError',\n    'WriteConflict',\n"
            "    [ 'TransientTransactionError' ],\n    true\n  ],\n"
            "  'NoSuchTransaction',\n  1\n]\n")
      << err();
}

TEST_F(ShellTest, WithTransactionRetriesTransientErrorsAndReturnsTheResult) {
  Ok("db.c.insertOne({_id: 1, n: 0})");
  EXPECT_EQ(Show(R"(
    const s = db.getMongo().startSession();
    let calls = 0;
    const r = s.withTransaction((session) => {
      calls++;
      session.getDatabase('test').c.updateOne({_id: 1}, {$inc: {n: 1}});
      if (calls === 1) {
        const e = new MongoServerError(112, 'WriteConflict', 'simulated', ['TransientTransactionError']);
        throw e;
      }
      return 'done';
    });
    [r, calls, db.c.findOne().n]
  )"),
            "[ 'done', 2, 1 ]\n")
      << err();
  // Any other error aborts and is thrown.
  EXPECT_EQ(Show(R"(
    const t = db.getMongo().startSession();
    try { t.withTransaction((s) => { s.getDatabase('test').c.insertOne({_id: 2}); throw new Error('no'); }); }
    catch (e) { [e.message, db.c.countDocuments({})] }
  )"),
            "[ 'no', 1 ]\n");
}

TEST_F(ShellTest, CommandsInATransactionAndMisuseFailAsMongoshSays) {
  EXPECT_EQ(Show(R"(
    const s = db.getMongo().startSession();
    s.startTransaction();
    const out = [];
    try { s.getDatabase('test').c.renameCollection('d'); } catch (e) { out.push(e.code); }
    // Refused before it ran: the transaction goes on.
    s.getDatabase('test').c.insertOne({_id: 1});
    s.commitTransaction();
    try { s.commitTransaction(); s.getDatabase('test').c.insertOne({_id: 1}); }
    catch (e) { out.push(e.codeName); }
    try { s.commitTransaction(); } catch (e) { out.push(e.message); }
    try { s.startTransaction(); s.startTransaction(); } catch (e) { out.push(e.message); }
    s.abortTransaction();
    try { s.abortTransaction(); } catch (e) { out.push(e.message); }
    out
  )"),
            "[\n  263,\n  'DuplicateKey',\n  'No transaction started',\n"
            "  'Transaction already in progress on this session.',\n"
            "  'Cannot call abortTransaction twice'\n]\n")
      << err();
  EXPECT_EQ(Show("db.c.countDocuments({})"), "1\n");
}

TEST_F(ShellTest, SessionAndTransactionOptionsAreDecodedFromTables) {
  auto code_of = [&](const std::string& call) {
    return Show("try { " + call + "; 'ok' } catch (e) { e.codeName + ': ' + e.message }");
  };
  EXPECT_EQ(code_of("db.getMongo().startSession({causalConsistency: true, retryWrites: true})"),
            "ok\n");
  EXPECT_EQ(code_of("db.getMongo().startSession({bogus: 1})"),
            "Location40415: BSON field 'startSession.bogus' is an unknown field.\n");
  EXPECT_EQ(code_of("db.getMongo().startSession().startTransaction({maxCommitTimeMS: 5})"),
            "NotImplemented: startTransaction option 'maxCommitTimeMS' is not supported by "
            "rockdoc\n");
  EXPECT_EQ(code_of("db.getMongo().startSession().startTransaction({writeConcern: {w: 0}})"),
            "InvalidOptions: transactions do not support unacknowledged write concern\n");
  EXPECT_EQ(code_of("db.getMongo().startSession().startTransaction({readPreference: 'secondary'})"),
            "InvalidOptions: read preference in a transaction must be primary, not 'secondary'\n");
  EXPECT_EQ(code_of("db.getMongo().startSession().startTransaction({readConcern: {level: "
                    "'linearizable'}})"),
            "InvalidOptions: The readConcern level must be either 'local' (default), 'majority' or "
            "'snapshot' in a transaction, not 'linearizable'\n");
  // defaultTransactionOptions are checked when the session starts.
  EXPECT_EQ(code_of("db.getMongo().startSession({defaultTransactionOptions: {w: 1}})"),
            "Location40415: BSON field 'defaultTransactionOptions.w' is an unknown field.\n");
}

// The transactions spec: operations in a transaction take its concerns and
// may not give their own; outside a transaction the same calls work.
TEST_F(ShellTest, OperationsInATransactionRefuseTheirOwnConcerns) {
  EXPECT_EQ(
      Show(R"(
    const s = db.getMongo().startSession();
    const c = s.getDatabase('test').c;
    const out = [];
    s.startTransaction();
    try { c.insertOne({_id: 1}, {writeConcern: {w: 1}}); } catch (e) { out.push(e.codeName); }
    try { c.find({}, {}, {readConcern: {level: 'local'}}).toArray(); } catch (e) { out.push(e.codeName); }
    try { c.findOne({}, {}, {readConcern: {level: 'local'}}); } catch (e) { out.push(e.codeName); }
    try { c.updateOne({}, {$set: {a: 1}}, {writeConcern: {w: 'majority'}}); } catch (e) { out.push(e.codeName); }
    c.insertOne({_id: 2});
    s.commitTransaction();
    c.insertOne({_id: 3}, {writeConcern: {w: 1}});
    out.push(c.countDocuments({}, {readConcern: {level: 'majority'}}));
    out
  )"),
      "[\n  'InvalidOptions',\n  'InvalidOptions',\n  'InvalidOptions',\n  'InvalidOptions',\n  "
      "2\n]\n")
      << err();
}

TEST_F(ShellTest, SnapshotSessionsReadOnePointInTime) {
  Ok("db.a.insertOne({_id: 1}); db.b.insertOne({_id: 1})");
  EXPECT_EQ(Show(R"(
    const s = db.getMongo().startSession({snapshot: true});
    const sdb = s.getDatabase('test');
    const before = sdb.a.countDocuments({});
    db.a.insertOne({_id: 2}); db.b.deleteOne({_id: 1});
    let write;
    try { sdb.a.insertOne({_id: 3}); } catch (e) { write = e.codeName; }
    [before, sdb.a.countDocuments({}), sdb.b.countDocuments({}), db.a.countDocuments({}), write]
  )"),
            "[ 1, 1, 1, 2, 'InvalidOptions' ]\n")
      << err();
}

}  // namespace
}  // namespace rockdoc::shell

// Tests of the rockdoc shell (src/shell/), driven in-process: cursors and
// queries. A find's cursor (options until the first result, iteration, the
// REPL's pages and `it`), aggregation cursors (db.c.aggregate,
// db.aggregate), the integer options of both, and explain.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "shell_test_fixture.h"

namespace rockdoc::shell {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------------------------------------------------------------- cursors

TEST_F(ShellTest, CursorOptionsAccumulateUntilTheFirstResult) {
  Ok("for (let i = 0; i < 10; i++) db.c.insertOne({_id: i, g: i % 3})");
  EXPECT_EQ(Show("const c = db.c.find({g: {$ne: 1}}); c.sort({_id: -1}); c.skip(1); c.limit(3); "
                 "c.project({g: 0}); c.toArray()"),
            "[ { _id: 8 }, { _id: 6 }, { _id: 5 } ]\n");
  EXPECT_EQ(
      Show("const d = db.c.find(); d.next(); try { d.sort({_id: 1}) } catch (e) { e.message }"),
      "cannot call sort() on a cursor that has already returned results\n");
  EXPECT_EQ(Show("db.c.find().hint({_id: 1}).batchSize(2).limit(5).itcount()"), "5\n");
  EXPECT_EQ(Show("db.c.find().projection({_id: 1}).sort({_id: 1}).limit(1).pretty().toArray()"),
            "[ { _id: 0 } ]\n");
}

TEST_F(ShellTest, QueryErrorsSurfaceAtTheFirstResult) {
  Ok("db.c.insertOne({a: 1})");
  // The cursor is lazy: building it succeeds, iterating reports the error.
  EXPECT_EQ(Run("const bad = db.c.find({a: {$bogus: 1}}); print('built')"), "built\n");
  EXPECT_EQ(Show("try { bad.toArray() } catch (e) { [e.code, e.codeName, e.message] }"),
            "[ 2, 'BadValue', 'unknown operator: $bogus' ]\n");
  Show("db.c.find({a: {$bogus: 1}})");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "MongoServerError[BadValue]: unknown operator: $bogus\n");
  EXPECT_EQ(Show("try { db.c.find().sort({a: 'sideways'}).next() } catch (e) { e.code }"),
            "15974\n");
}

TEST_F(ShellTest, CursorIteration) {
  Ok("db.c.insertMany([{_id: 1}, {_id: 2}, {_id: 3}])");
  EXPECT_EQ(Run("const c = db.c.find(); while (c.hasNext()) print(c.next()._id); print(c.next())"),
            "1\n2\n3\nnull\n");
  EXPECT_EQ(Run("db.c.find().forEach(d => print(d._id))"), "1\n2\n3\n");
  EXPECT_EQ(Run("db.c.find().forEach(d => { print(d._id); return false })"), "1\n");
  EXPECT_EQ(Show("db.c.find().map(d => d._id * 10).toArray()"), "[ 10, 20, 30 ]\n");
  EXPECT_EQ(Show("[...db.c.find()].length"), "3\n");
  EXPECT_EQ(Show("let s = 0; for (const d of db.c.find()) s += d._id; s"), "6\n");
  EXPECT_EQ(Show("db.c.find().skip(1).itcount()"), "2\n");
  // count() ignores skip/limit unless asked; size() applies them.
  EXPECT_EQ(Show("[db.c.find().limit(1).count(), db.c.find().limit(1).count(true), "
                 "db.c.find().skip(2).size()]"),
            "[ 3, 1, 1 ]\n");
  EXPECT_EQ(Show("const k = db.c.find(); k.next(); k.close(); [k.hasNext(), k.isClosed()]"),
            "[ false, true ]\n");
}

TEST_F(ShellTest, ReplShowsTwentyResultsThenIt) {
  Ok("for (let i = 0; i < 45; i++) db.c.insertOne({_id: i})");
  std::string page1 = Show("db.c.find()");
  EXPECT_THAT(page1, StartsWith("[\n  { _id: 0 },\n  { _id: 1 },\n"));
  EXPECT_THAT(page1, HasSubstr("  { _id: 19 }\n]\nType \"it\" for more\n"));
  EXPECT_EQ(page1.find("_id: 20 "), std::string::npos);
  std::string page2 = Show("it");
  EXPECT_THAT(page2, StartsWith("[\n  { _id: 20 },\n"));
  EXPECT_THAT(page2, HasSubstr("  { _id: 39 }\n]\nType \"it\" for more\n"));
  std::string page3 = Show("it");
  EXPECT_EQ(page3, "[ { _id: 40 }, { _id: 41 }, { _id: 42 }, { _id: 43 }, { _id: 44 } ]\n");
  EXPECT_EQ(Show("it"), "no cursor\n");
  // A small batch size does not change what a page shows.
  std::string small = Show("db.c.find().batchSize(3)");
  EXPECT_THAT(small, HasSubstr("{ _id: 19 }\n]\nType \"it\" for more\n"));
}

TEST_F(ShellTest, IntegerOptionsTakeLongsAndRefuseWhatIsNotAnInt64) {
  Ok("db.c.insertMany([{_id: 1}, {_id: 2}, {_id: 3}])");
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).limit(NumberLong(1)).toArray()"), "[ { _id: 1 } ]\n");
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).skip(NumberLong(2)).toArray()"), "[ { _id: 3 } ]\n");
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).skip(NumberInt(1)).limit(Double(1)).toArray()"),
            "[ { _id: 2 } ]\n");
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).batchSize(NumberLong(2)).toArray().length"), "3\n");
  EXPECT_EQ(Show("db.c.countDocuments({}, {skip: NumberLong(1), limit: NumberInt(1)})"), "1\n");
  // MongoDB's integer parsing: FailedToParse, never a double cast out of range.
  EXPECT_EQ(Show("try { db.c.find().skip(1e300).toArray() } catch (e) { [e.code, e.message] }"),
            "[ 9, 'Cannot represent as a 64-bit integer: skip: 1e+300' ]\n");
  EXPECT_EQ(Show("try { db.c.find().skip(1e300).toArray() } catch (e) { e.code }"),
            CodeLine(ErrorCode::kFailedToParse));
  EXPECT_EQ(Show("try { db.c.find().limit(1.5).toArray() } catch (e) { e.message }"),
            "Expected an integer: limit: 1.5\n");
  EXPECT_EQ(Show("try { db.c.find().skip(NaN).toArray() } catch (e) { e.message }"),
            "Expected an integer, but found NaN in: skip: NaN\n");
  EXPECT_EQ(Show("try { db.c.find().limit(-Infinity).toArray() } catch (e) { e.code }"),
            CodeLine(ErrorCode::kFailedToParse));
  // countDocuments is an aggregate (as the drivers run it): its skip and
  // limit are $skip and $limit stages, refused with those stages' codes.
  EXPECT_EQ(Show("try { db.c.countDocuments({}, {limit: 2 ** 63}) } catch (e) { e.code }"), "15957\n");
  EXPECT_EQ(Show("try { db.c.countDocuments({}, {skip: 'x'}) } catch (e) { e.code }"), "15972\n");
  EXPECT_EQ(Show("[db.c.countDocuments({}), db.c.countDocuments({}, {skip: 1, limit: 1})]"), "[ 3, 1 ]\n");
  EXPECT_EQ(Show("try { db.c.find().batchSize(NaN) } catch (e) { e.code }"),
            CodeLine(ErrorCode::kBadValue));
  EXPECT_EQ(Show("try { exit(1e300) } catch (e) { e.message }"), "exit code must be an integer\n");
  EXPECT_FALSE(shell_->exit_requested());
}

// ---------------------------------------------------------------- aggregation

// mongosh's aggregate: an AggregationCursor over the aggregate command.
TEST_F(ShellTest, AggregateRunsThePipeline) {
  Ok("db.s.insertMany([{item: 'a', q: 2}, {item: 'b', q: 1}, {item: 'a', q: 5}])");
  EXPECT_EQ(Show("db.s.aggregate([{$group: {_id: '$item', total: {$sum: '$q'}}}, {$sort: {_id: 1}}])"),
            "[ { _id: 'a', total: 7 }, { _id: 'b', total: 1 } ]\n");
  EXPECT_EQ(Show("db.s.aggregate([{$match: {q: {$gt: 1}}}, {$project: {_id: 0, q: 1}}], "
                 "{batchSize: 1}).toArray()"),
            "[ { q: 2 }, { q: 5 } ]\n");
  EXPECT_EQ(Show("db.s.aggregate([{$count: 'n'}]).next().n"), "3\n");
  EXPECT_EQ(Show("try { db.s.aggregate([{$bogus: 1}]).toArray() } catch (e) { [e.code, e.message] }"),
            "[ 40324, \"Unrecognized pipeline stage name: '$bogus'\" ]\n");
  EXPECT_EQ(Show("try { db.s.aggregate([], {bogus: 1}).toArray() } catch (e) { e.message }"),
            "BSON field 'aggregate.bogus' is an unknown field.\n");
  // explain: the find under $cursor, then the stages (with counts when run).
  Ok("db.s.createIndex({q: 1})");
  EXPECT_EQ(Show("db.s.explain().aggregate([{$match: {q: 5}}, {$group: {_id: '$item'}}])"
                 ".stages[0].$cursor.queryPlanner.winningPlan.inputStage.indexName"),
            "q_1\n");
  EXPECT_EQ(Show("db.s.explain('executionStats').aggregate([{$match: {q: {$gte: 2}}}, "
                 "{$group: {_id: '$item'}}]).stages.map((s) => Object.keys(s)[0] + ' ' + s.nReturned)"),
            "[ '$cursor 2', '$group 1' ]\n");
  // No query modifiers on an aggregation cursor (as mongosh).
  EXPECT_EQ(Show("typeof db.s.aggregate([]).sort"), "undefined\n");
}

// mongosh's db.aggregate: a pipeline without a collection.
TEST_F(ShellTest, DatabaseAggregate) {
  EXPECT_EQ(Show("db.aggregate([{$documents: [{a: 1}, {a: 2}]}, {$match: {a: {$gt: 1}}}]).toArray()"),
            "[ { a: 2 } ]\n");
  EXPECT_EQ(Show("db.aggregate([{$documents: [{a: 1}, {a: 2}, {a: 3}]}], {batchSize: 1}).toArray().length"),
            "3\n");
  EXPECT_EQ(Show("db.c.aggregate([{$project: {_id: 0, v: '$$x'}}], {let: {x: 5}}).toArray()"), "[]\n");
  Ok("db.c.insertOne({_id: 1})");
  EXPECT_EQ(Show("db.c.aggregate([{$project: {_id: 0, v: '$$x'}}], {let: {x: 5}}).toArray()"), "[ { v: 5 } ]\n");
}

// ---------------------------------------------------------------- explain

TEST_F(ShellTest, ExplainShowsTheChosenPlan) {
  Ok("for (let i = 0; i < 50; i++) db.c.insertOne({_id: i, a: i % 10, b: i}); db.c.createIndex({a: "
     "1})");
  EXPECT_EQ(Show("db.c.find({a: 3}).explain().queryPlanner.winningPlan.inputStage.indexName"),
            "a_1\n");
  EXPECT_EQ(Show("db.c.find({a: 3}).hint({$natural: 1}).explain().queryPlanner.winningPlan.stage"),
            "COLLSCAN\n");
  EXPECT_EQ(
      Show("db.c.find({b: 3}).hint('a_1').explain().queryPlanner.winningPlan.inputStage.indexName"),
      "a_1\n");
  EXPECT_EQ(Show("db.c.find({b: 3}).explain().queryPlanner.winningPlan.stage"), "COLLSCAN\n");
  EXPECT_EQ(Show("const e = db.c.find({a: 3}).explain('executionStats').executionStats; "
                 "[e.nReturned, e.totalKeysExamined, e.totalDocsExamined].map(Number)"),
            "[ 5, 5, 5 ]\n");
  // The explain() helper form, as mongosh prints it.
  std::string shown = Show("db.c.explain('executionStats').find({a: 3})");
  EXPECT_THAT(shown, HasSubstr("executionStats: {\n"));
  EXPECT_THAT(shown, HasSubstr("indexName: 'a_1',"));
  EXPECT_EQ(Show("db.c.explain().find({a: 3}).sort({b: -1}).next().queryPlanner.namespace"),
            "test.c\n");
  EXPECT_EQ(Show("db.c.explain().updateOne({a: 4}, {$set: {x: 1}}).queryPlanner.winningPlan.stage"),
            "UPDATE\n");
  EXPECT_EQ(Show("db.c.explain().deleteMany({a: 4}).queryPlanner.winningPlan.stage"), "DELETE\n");
  // A distinct's plan is the plan of its query.
  EXPECT_EQ(Show("db.c.explain().distinct('b', {a: 4}).queryPlanner.winningPlan.inputStage"
                 ".indexName"),
            "a_1\n");
  // A count the index answers alone: COUNT over COUNT_SCAN, no document read.
  EXPECT_EQ(Show("const c = db.c.explain('executionStats').count({a: 4}); "
                 "[c.queryPlanner.winningPlan.stage, c.queryPlanner.winningPlan.inputStage.stage, "
                 "c.executionStats.totalKeysExamined, c.executionStats.totalDocsExamined]"),
            "[ 'COUNT', 'COUNT_SCAN', 5, 0 ]\n");
  EXPECT_EQ(Show("db.c.countDocuments({a: 4})"), "5\n");  // explain changed nothing
  EXPECT_EQ(Show("try { db.c.find().explain('loud') } catch (e) { e.codeName }"), "BadValue\n");
}

}  // namespace
}  // namespace rockdoc::shell

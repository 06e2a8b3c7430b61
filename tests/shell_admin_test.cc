// Tests of the rockdoc shell (src/shell/), driven in-process: databases,
// collections and indexes. `use` and `show`, creating, renaming and dropping
// collections (views, validators, capped), indexes, statistics, the
// profiler, query statistics, the schema advisor and growth warnings, and
// db.runCommand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "shell_test_fixture.h"

namespace rockdoc::shell {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------------------------------------------------------------- databases

TEST_F(ShellTest, UseSwitchesTheDatabase) {
  EXPECT_EQ(Show("use library"), "switched to db library\n");
  EXPECT_EQ(Show("db"), "library\n");
  EXPECT_EQ(shell_->Prompt(), "library> ");
  Ok("db.books.insertOne({_id: 1})");
  EXPECT_EQ(Coll("books", "library").EstimatedDocumentCount().value(), 1);
  // `use` is a command only alone on its line; `use` as a name is JavaScript.
  EXPECT_EQ(Show("var use = 5; use + 1"), "6\n");
}

TEST_F(ShellTest, SiblingAndSisterDatabases) {
  EXPECT_EQ(Show("db.getSiblingDB('a').getName()"), "a\n");
  EXPECT_EQ(Show("db.getSisterDB('b')"), "b\n");
  Ok("db.getSiblingDB('other').x.insertOne({_id: 1})");
  EXPECT_EQ(Coll("x", "other").EstimatedDocumentCount().value(), 1);
  EXPECT_EQ(Show("db"), "test\n");  // unchanged
  Ok("db = db.getSiblingDB('other')");
  EXPECT_EQ(Show("db.x.countDocuments()"), "1\n");
}

TEST_F(ShellTest, ShowDatabasesAndCollections) {
  Ok("db.b.insertOne({}); db.a.insertMany([{}, {}]); db.getSiblingDB('zoo').z.insertOne({})");
  EXPECT_EQ(Show("show collections"), "a\nb\n");
  EXPECT_EQ(Show("show tables"), "a\nb\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'a', 'b' ]\n");
  // listDatabases lists admin, config and local as mongod does (empty here).
  const std::string dbs =
      "admin   0 collections, 0 documents\nconfig  0 collections, 0 documents\n"
      "local   0 collections, 0 documents\ntest    2 collections, 3 documents\n"
      "zoo     1 collection, 1 document\n";
  EXPECT_EQ(Show("show dbs"), dbs);
  EXPECT_EQ(Show("show databases"), dbs);
  Show("show nonsense");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("don't know how to show 'nonsense'"));
}

TEST_F(ShellTest, DropDatabase) {
  Ok("use gone\ndb.a.insertOne({}); db.b.insertOne({})");
  EXPECT_EQ(Show("db.dropDatabase()"), "{ ok: 1, dropped: 'gone' }\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[]\n");
  EXPECT_EQ(shell_->client().ListDatabaseNames().value(), std::vector<std::string>{});
}

TEST_F(ShellTest, DatabaseStats) {
  Ok("db.a.insertMany([{_id: 1, s: 'xx'}, {_id: 2}]); db.b.insertOne({_id: 1}); "
     "db.b.createIndex({x: 1})");
  EXPECT_EQ(Show("const s = db.stats(); [s.db, s.collections, s.objects, s.indexes, s.ok]"),
            "[ 'test', 2, 3, 3, 1 ]\n");
  EXPECT_EQ(Show("db.stats().dataSize === Object.bsonsize({_id: 1, s: 'xx'}) + 2 * "
                 "Object.bsonsize({_id: 1})"),
            "true\n");
}

// db.runCommand and db.adminCommand run the command layer, returning its
// reply and throwing MongoServerError on ok: 0, as mongosh.
TEST_F(ShellTest, RunCommandRunsTheCommandLayer) {
  EXPECT_EQ(Show("db.runCommand({ping: 1})"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.runCommand('ping')"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.runCommand({insert: 'c', documents: [{_id: 1}, {_id: 2}]}).n"), "2\n");
  EXPECT_EQ(Show("db.runCommand({find: 'c', filter: {_id: 2}}).cursor.firstBatch"),
            "[ { _id: 2 } ]\n");
  EXPECT_EQ(Show("db.hello().isWritablePrimary"), "true\n");
  EXPECT_EQ(Show("db.serverBuildInfo().version"), "7.0.0\n");
  EXPECT_EQ(Show("try { db.runCommand({bogus: 1}) } catch (e) { [e.name, e.code, e.codeName, "
                 "e.message] }"),
            "[\n  'MongoServerError',\n  59,\n  'CommandNotFound',\n  \"no such command: "
            "'bogus'\"\n]\n");
  EXPECT_EQ(Show("try { db.adminCommand({renameCollection: 'test.c', to: 'test.d'}); "
                 "db.d.countDocuments({}) } catch (e) { e.message }"),
            "2\n");
  EXPECT_EQ(Show("try { db.runCommand({collMod: 'd', index: {name: 'x', expireAfterSeconds: 5}}) "
                 "} catch (e) { e.codeName }"),
            "IndexNotFound\n");
}

// ---------------------------------------------------------------- collections

TEST_F(ShellTest, CollectionsAreProperties) {
  EXPECT_EQ(Show("db.books"), "test.books\n");
  EXPECT_EQ(Show("db.books.getName()"), "books\n");
  EXPECT_EQ(Show("db.books.archive.getFullName()"), "test.books.archive\n");
  EXPECT_EQ(Show("db.getCollection('my-books')"), "test.my-books\n");
  EXPECT_EQ(Show("db['with space'].getName()"), "with space\n");
  EXPECT_EQ(Show("typeof db.getName"), "function\n");  // methods win over collections
  Ok("db.books.insertOne({_id: 1}); db.books.archive.insertOne({_id: 2})");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'books', 'books.archive' ]\n");
  Show("db.getCollection('')");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("collection name must be a non-empty string"));
}

TEST_F(ShellTest, CreateCollection) {
  EXPECT_EQ(Show("db.createCollection('fresh')"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'fresh' ]\n");
  EXPECT_EQ(Show("try { db.createCollection('fresh') } catch (e) { [e.code, e.codeName] }"),
            "[ 48, 'NamespaceExists' ]\n");
  EXPECT_EQ(Show("try { db.createCollection('bad$name') } catch (e) { e.code }"), "73\n");
}

TEST_F(ShellTest, CreateCollectionOptionsRockdocLacksAreRefused) {
  for (const char* options :
       {"{timeseries: {timeField: 't'}}", "{clusteredIndex: {key: {_id: 1}, unique: true}}",
        "{expireAfterSeconds: 60}"}) {
    EXPECT_EQ(
        Show(std::string("try { db.createCollection('x', ") + options + ") } catch (e) { e.code }"),
        "238\n")
        << options;
  }
  EXPECT_EQ(Show("try { db.createCollection('x', {foo: 1}) } catch (e) { [e.code, e.message] }"),
            "[ 40415, \"BSON field 'create.foo' is an unknown field.\" ]\n");
  EXPECT_EQ(Show("db.getCollectionNames().includes('x')"), "false\n");
  EXPECT_EQ(Show("db.createCollection('x', {})"), "{ ok: 1 }\n");
}

// mongosh's db.createView, and a view read as a collection is.
TEST_F(ShellTest, CreateViewMakesAReadOnlyView) {
  Ok("db.people.insertMany([{_id: 1, name: 'Ann', age: 31}, {_id: 2, name: 'Bo', age: 17}])");
  EXPECT_EQ(Show("db.createView('adults', 'people', [{$match: {age: {$gte: 18}}}, {$project: {age: 0}}])"),
            "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.adults.find().toArray()"), "[ { _id: 1, name: 'Ann' } ]\n");
  EXPECT_EQ(Show("db.adults.countDocuments()"), "1\n");
  EXPECT_EQ(Show("db.adults.aggregate([{$count: 'n'}]).toArray()"), "[ { n: 1 } ]\n");
  EXPECT_EQ(Show("show collections"), "adults\npeople\n");
  EXPECT_EQ(Show("db.getCollectionInfos({type: 'view'})[0].options.viewOn"), "people\n");
  EXPECT_EQ(Show("try { db.adults.insertOne({_id: 3}) } catch (e) { [e.code, e.message] }"),
            "[ 166, 'Namespace test.adults is a view, not a collection' ]\n");
  EXPECT_EQ(Show("try { db.createView('bad', 'people', [{$out: 'x'}]) } catch (e) { e.code }"),
            "167\n");
  EXPECT_EQ(Show("db.adults.drop()"), "true\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'people' ]\n");
}

TEST_F(ShellTest, ValidatorsRefuseWithErrInfoAndShowInCollectionInfos) {
  Ok("db.createCollection('s', {validator: {$jsonSchema: {required: ['name']}}})");
  EXPECT_EQ(Show("try { db.s.insertOne({_id: 1}) } catch (e) {"
                 " [e.code, e.codeName, e.message, e.errInfo.failingDocumentId,"
                 "  e.errInfo.details.schemaRulesNotSatisfied[0].missingProperties] }"),
            "[\n  121,\n  'DocumentValidationFailure',\n  'Document failed validation',\n  1,\n"
            "  [ 'name' ]\n]\n");
  EXPECT_EQ(Show("db.s.insertOne({_id: 2}, {bypassDocumentValidation: true}).insertedId"), "2\n");
  EXPECT_EQ(Show("try { db.s.insertMany([{_id: 3}]) } catch (e) {"
                 " e.writeErrors[0].errInfo.failingDocumentId }"),
            "3\n");
  EXPECT_EQ(Show("db.getCollectionInfos({name: 's'})[0].options"),
            "{\n  validator: { $jsonSchema: { required: [ 'name' ] } }\n}\n");
  EXPECT_EQ(Show("db.s.isCapped()"), "false\n");
  EXPECT_EQ(Show("db.getCollectionInfos({}, {nameOnly: true})"),
            "[ { name: 's', type: 'collection' } ]\n");
}

TEST_F(ShellTest, CappedCollectionsKeepTheNewestInInsertionOrder) {
  Ok("db.createCollection('log', {capped: true, size: 4096, max: 2});"
     "for (const id of [5, 1, 9]) db.log.insertOne({_id: id})");
  EXPECT_EQ(Show("db.log.find().toArray()"), "[ { _id: 1 }, { _id: 9 } ]\n");
  EXPECT_EQ(Show("db.log.isCapped()"), "true\n");
  EXPECT_EQ(Show("db.log.stats().maxSize"), "4096\n");
}

TEST_F(ShellTest, DropAndRename) {
  Ok("db.c.insertOne({_id: 1}); db.d.insertOne({_id: 2})");
  EXPECT_EQ(Show("db.c.renameCollection('e')"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[ 'd', 'e' ]\n");
  EXPECT_EQ(Show("try { db.e.renameCollection('d') } catch (e) { e.codeName }"),
            "NamespaceExists\n");
  EXPECT_EQ(Show("db.e.renameCollection('d', true).ok"), "1\n");
  EXPECT_EQ(Show("db.d.findOne()"), "{ _id: 1 }\n");
  EXPECT_EQ(Show("try { db.missing.renameCollection('x') } catch (e) { e.code }"), "26\n");
  EXPECT_EQ(Show("db.d.drop()"), "true\n");
  // MongoDB 7.0's drop succeeds on a missing collection, so mongosh's
  // drop() answers true there too.
  EXPECT_EQ(Show("db.d.drop()"), "true\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[]\n");
}

TEST_F(ShellTest, CollectionStatsAndValidate) {
  Ok("db.c.insertMany([{_id: 1, a: 'x'}, {_id: 2, a: 'yy'}]); db.c.createIndex({a: 1})");
  EXPECT_EQ(Show("const s = db.c.stats(); [s.ns, s.count, s.nindexes, Object.keys(s.indexSizes), "
                 "s.ok]"),
            "[ 'test.c', 2, 2, [ '_id_', 'a_1' ], 1 ]\n");
  EXPECT_EQ(Show("const t = db.c.stats(); t.totalSize === t.storageSize + t.totalIndexSize"),
            "true\n");
  EXPECT_EQ(Show("[db.c.totalSize(), db.c.storageSize(), db.c.totalIndexSize()]"
                 ".every((n) => typeof n === 'number' && n >= 0)"),
            "true\n");
  EXPECT_EQ(Show("db.c.dataSize() === db.c.runCommand('collStats', {scale: 1}).size"), "true\n");
  EXPECT_EQ(Show("db.serverStatus().process"), "rockdoc\n");
  EXPECT_EQ(Show("db.hostInfo().system.numCores > 0"), "true\n");
  EXPECT_EQ(Show("db.c.stats().size === Object.bsonsize({_id: 1, a: 'x'}) + Object.bsonsize({_id: "
                 "2, a: 'yy'})"),
            "true\n");
  EXPECT_EQ(
      Show("db.c.validate()"),
      "{\n  ns: 'test.c',\n  nrecords: 2,\n  nIndexes: 2,\n  valid: true,\n  repaired: false,\n"
      "  warnings: [],\n  errors: [],\n  ok: 1\n}\n");
}

// mongosh's admin helpers over issue 39's commands, printed as mongosh
// prints them.
TEST_F(ShellTest, AdminHelpersServerStatusCurrentOpKillOpListCommands) {
  Ok("globalThis.before = db.serverStatus().opcounters");
  Ok("db.ops.insertMany([{_id: 1}, {_id: 2}]); db.ops.findOne({_id: 1})");
  EXPECT_EQ(Show("const o = db.serverStatus().opcounters; "
                 "[o.insert - before.insert, o.query - before.query]"),
            "[ 2, 1 ]\n");
  EXPECT_EQ(Show("[db.serverStatus({mem: 0}).mem, Object.keys(db.serverStatus({repl: 0}).connections)]"),
            "[\n  undefined,\n  [ 'current', 'available', 'totalCreated', 'active', 'threaded' ]\n]\n");
  // db.currentOp() runs $currentOp, then its filter as a $match: its own
  // aggregate is what is in flight.
  EXPECT_EQ(Show("const ops = db.currentOp({ns: 'admin.$cmd.aggregate'}).inprog; "
                 "[ops.length, ops[0].op, ops[0].desc, ops[0].active]"),
            "[ 1, 'command', 'rockdoc', true ]\n");
  EXPECT_EQ(Show("db.currentOp({op: 'query'})"), "{ inprog: [], ok: 1 }\n");
  EXPECT_EQ(Show("db.killOp(4242)"), "{ info: 'attempting to kill op', ok: 1 }\n");
  EXPECT_EQ(Show("try { db.currentOp(true) } catch (e) { e.codeName }"), "NotImplemented\n");
  const std::string commands = Show("db.listCommands()");
  EXPECT_THAT(commands, HasSubstr("killOp:  adminOnly requiresAuth secondaryOk\n\n"));
  EXPECT_THAT(commands, HasSubstr("find:  requiresAuth secondaryOk\nAPI Versions 1\n\n"));
  EXPECT_EQ(Show("db.adminCommand({getLog: '*'}).names"), "[ 'global', 'startupWarnings' ]\n");
}

// ---------------------------------------------------------------- indexes

// Text indexes from the shell: createIndex, $text with the score in the
// projection and the sort (printed as mongosh prints doubles), and MongoDB's
// codes for $text without a text index and a second text index.
TEST_F(ShellTest, TextIndexes) {
  Ok("db.t.insertMany([{_id: 1, body: 'coffee'}, {_id: 2, body: 'Baking a cake'}, "
     "{_id: 3, body: 'tea'}])");
  EXPECT_EQ(Show("db.t.createIndex({body: 'text'})"), "body_text\n");
  EXPECT_EQ(Show("db.t.find({$text: {$search: 'coffee cake'}}, {score: {$meta: 'textScore'}})"
                 ".sort({score: {$meta: 'textScore'}}).toArray()"),
            "[\n  { _id: 1, body: 'coffee', score: 1 },\n"
            "  { _id: 2, body: 'Baking a cake', score: 0.75 }\n]\n");
  EXPECT_EQ(Show("db.t.getIndexes()[1].key"), "{ _fts: 'text', _ftsx: 1 }\n");
  EXPECT_EQ(Show("try { db.u.insertOne({a: 1}); db.u.find({$text: {$search: 'x'}}).toArray() } "
                 "catch (e) { [e.code, e.errmsg] }"),
            "[ 27, 'text index required for $text query' ]\n");
  EXPECT_EQ(Show("try { db.t.createIndex({other: 'text'}) } catch (e) { e.code }"), "85\n");
}

// Hashed indexes from the shell: mongosh's spelling, the hash it shows
// (convertShardKeyToHashed, MongoDB's published value for 1), and
// MongoDB's refusal of an array as the server's error.
TEST_F(ShellTest, HashedIndexes) {
  EXPECT_EQ(Show("db.h.createIndex({a: 'hashed'})"), "a_hashed\n");
  Ok("db.h.insertMany([{_id: 1, a: 1}, {_id: 2, a: 1.5}, {_id: 3, a: 'x'}])");
  EXPECT_EQ(Show("db.h.find({a: 1}).toArray()"), "[ { _id: 1, a: 1 } ]\n");
  EXPECT_EQ(Show("db.h.find({a: 1}).explain().queryPlanner.winningPlan.inputStage.stage"),
            "IXSCAN\n");
  EXPECT_EQ(Show("convertShardKeyToHashed(1)"), "Long('5902408780260971510')\n");
  EXPECT_EQ(Show("String(convertShardKeyToHashed(1)) === String(convertShardKeyToHashed(1.9))"), "true\n");
  EXPECT_EQ(Show("try { db.h.insertOne({a: [1]}) } catch (e) { [e.code, e.errmsg] }"),
            "[\n  16766,\n  'Error: hashed indexes do not currently support array values. Found "
            "array at path: a'\n]\n");
  EXPECT_EQ(Show("try { db.h.createIndex({b: 'hashed'}, {unique: true}) } catch (e) { e.code }"),
            "16764\n");
}

TEST_F(ShellTest, CreateListAndDropIndexes) {
  Ok("db.c.insertMany([{_id: 1, a: 1, b: 1}, {_id: 2, a: 2, b: 1}])");
  EXPECT_EQ(Show("db.c.createIndex({a: 1})"), "a_1\n");
  EXPECT_EQ(Show("db.c.createIndex({b: -1}, {name: 'by_b', sparse: true})"), "by_b\n");
  EXPECT_EQ(Show("db.c.createIndexes([{a: 1, b: 1}, {b: 1}])"), "[ 'a_1_b_1', 'b_1' ]\n");
  EXPECT_EQ(Show("db.c.getIndexes().map(i => i.name)"),
            "[ '_id_', 'a_1', 'by_b', 'a_1_b_1', 'b_1' ]\n");
  EXPECT_EQ(Show("db.c.getIndexes()[2]"), "{ v: 2, key: { b: -1 }, name: 'by_b', sparse: true }\n");
  EXPECT_EQ(Show("db.c.getIndexKeys()[1]"), "{ a: 1 }\n");
  EXPECT_EQ(Show("db.c.dropIndex('by_b')"), "{ nIndexesWas: 5, ok: 1 }\n");
  EXPECT_EQ(Show("db.c.dropIndex({a: 1, b: 1})"), "{ nIndexesWas: 4, ok: 1 }\n");
  EXPECT_EQ(Show("try { db.c.dropIndex('nope') } catch (e) { [e.code, e.codeName] }"),
            "[ 27, 'IndexNotFound' ]\n");
  EXPECT_EQ(Show("try { db.c.dropIndex('_id_') } catch (e) { e.code }"), "72\n");
  EXPECT_EQ(Show("db.c.dropIndexes()"),
            "{\n  nIndexesWas: 3,\n  msg: 'non-_id indexes dropped for collection',\n  ok: 1\n}\n");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
}

// mongosh's hideIndex / unhideIndex: collMod's index.hidden, by name or key
// pattern; the planner stops and starts using the index.
TEST_F(ShellTest, HideAndUnhideIndexes) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}]); db.c.createIndex({a: 1})");
  EXPECT_EQ(Show("db.c.hideIndex('a_1')"), "{ hidden_old: false, hidden_new: true, ok: 1 }\n");
  EXPECT_EQ(Show("db.c.getIndexes()[1]"), "{ v: 2, key: { a: 1 }, name: 'a_1', hidden: true }\n");
  EXPECT_EQ(Show("db.c.find({a: 1}).explain().queryPlanner.winningPlan.stage"), "COLLSCAN\n");
  EXPECT_EQ(Show("db.c.hideIndex('a_1')"), "{ ok: 1 }\n");  // already hidden: no change
  EXPECT_EQ(Show("db.c.unhideIndex({a: 1})"), "{ hidden_old: true, hidden_new: false, ok: 1 }\n");
  EXPECT_EQ(Show("db.c.find({a: 1}).explain().queryPlanner.winningPlan.inputStage.stage"),
            "IXSCAN\n");
  EXPECT_EQ(Show("try { db.c.hideIndex('_id_') } catch (e) { [e.code, e.message] }"),
            "[ 2, \"can't hide _id index\" ]\n");
  EXPECT_EQ(Show("db.c.createIndex({b: 1}, {hidden: true})"), "b_1\n");
  EXPECT_EQ(Show("db.c.getIndexes()[2].hidden"), "true\n");
}

TEST_F(ShellTest, IndexOptionsRockdocLacksAreRefusedNotDropped) {
  Ok("db.c.insertOne({a: 1})");
  for (const char* options : {"{wildcardProjection: {a: 1}}"}) {
    EXPECT_EQ(Show(std::string("try { db.c.createIndex({a: 1}, ") + options +
                   ") } catch (e) { [e.code, e.codeName] }"),
              "[ 238, 'NotImplemented' ]\n")
        << options;
  }
  EXPECT_EQ(Show("try { db.c.createIndex({a: 1}, {bits: 26}) } catch (e) { e.message }"),
            "The index option 'bits' is not supported by rockdoc\n");
  // Text options belong to text indexes (tests/text_index_test.cc).
  EXPECT_EQ(Show("try { db.c.createIndex({a: 1}, {weights: {a: 1}}) } catch (e) { e.code }"),
            "197\n");
  // TTL indexes are built (issue 12), and listIndexes shows the option.
  EXPECT_EQ(Show("db.c.createIndex({t: 1}, {expireAfterSeconds: 3600})"), "t_1\n");
  EXPECT_EQ(Show("db.c.getIndexes()[1].expireAfterSeconds"), "3600\n");
  EXPECT_EQ(Show("db.c.dropIndex('t_1')"), "{ nIndexesWas: 2, ok: 1 }\n");
  EXPECT_EQ(Show("try { db.c.createIndex({a: 1}, {foo: 1}) } catch (e) { [e.code, e.codeName] }"),
            "[ 197, 'InvalidIndexSpecificationOption' ]\n");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
  // MongoDB accepts background (meaningless since 4.2), and so does rockdoc.
  EXPECT_EQ(Show("db.c.createIndex({a: 1}, {background: true, unique: true})"), "a_1\n");
}

TEST_F(ShellTest, SpecialIndexTypesAreNotImplemented) {
  EXPECT_EQ(Show("try { db.c.createIndex({'$**': 1}) } catch (e) { [e.code, e.message] }"),
            "[ 238, 'wildcard indexes are not supported by rockdoc' ]\n");
  EXPECT_EQ(Show("try { db.c.createIndex({a: '2d'}) } catch (e) { [e.code, e.message] }"),
            "[\n  238,\n  '2d indexes are not supported by rockdoc; use a 2dsphere index (legacy "
            "points are indexed there too)'\n]\n");
}

TEST_F(ShellTest, CreateIndexesBuildsAllOrNone) {
  Ok("db.c.insertMany([{_id: 1, a: 1, b: 5}, {_id: 2, a: 2, b: 5}])");
  // One bad spec: nothing is built.
  EXPECT_EQ(Show("try { db.c.createIndexes([{a: 1}, {b: 0}]) } catch (e) { e.code }"), "67\n");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
  // A unique violation in the second build: the first is removed.
  EXPECT_EQ(
      Show("try { db.c.createIndexes([{a: 1}, {b: 1}], {unique: true}) } catch (e) { e.code }"),
      "11000\n");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
  EXPECT_EQ(Show("db.c.createIndexes([{a: 1}, {a: -1}], {unique: true})"), "[ 'a_1', 'a_-1' ]\n");
}

TEST_F(ShellTest, UniqueIndexRejectsDuplicates) {
  Ok("db.u.createIndex({email: 1}, {unique: true}); db.u.insertOne({email: 'a@x'})");
  EXPECT_EQ(Show("try { db.u.insertOne({email: 'a@x'}) } catch (e) { [e.code, e.codeName] }"),
            "[ 11000, 'DuplicateKey' ]\n");
  Ok("db.v.insertMany([{k: 1}, {k: 1}])");
  EXPECT_EQ(Show("try { db.v.createIndex({k: 1}, {unique: true}) } catch (e) { e.code }"),
            "11000\n");
}

TEST_F(ShellTest, EnsureIndexLegacyResult) {
  EXPECT_EQ(
      Show("db.fresh.ensureIndex({a: 1})"),
      "{\n  createdCollectionAutomatically: true,\n  numIndexesBefore: 0,\n  numIndexesAfter: 2,\n"
      "  ok: 1\n}\n");
  EXPECT_EQ(Show("db.fresh.ensureIndex({b: 1}).numIndexesBefore"), "2\n");
}

// ------------------------------------------------ statistics, profiler and advisor

// db.advise() / db.c.advise(): the schema advisor's report, shown as its
// text, with the JSON form's fields; options decoded from a table.
TEST_F(ShellTest, AdvisePrintsTheAdvisorsReport) {
  Ok("db.posts.insertOne({_id: 1, comments: Array.from({length: 300}, (_, i) => ({i}))});"
     "db.other.insertOne({_id: 1, tags: ['a']})");
  std::string shown = Show("db.advise()");
  EXPECT_NE(shown.find("[warning] large-array in test.posts"), std::string::npos) << shown;
  EXPECT_NE(shown.find("Examined 1 database(s), 2 collection(s), 2 document(s)."), std::string::npos) << shown;
  EXPECT_EQ(Show("db.advise().findings[0].evidence.max"), "Long('300')\n");
  EXPECT_EQ(Show("db.other.advise({full: true}).findings.length"), "0\n");
  EXPECT_EQ(Show("db.posts.advise({sample: 1}).documentsExamined"), "Long('1')\n");
  Run("db.advise({bogus: 1})");
  EXPECT_FALSE(ok_);
  EXPECT_NE(err().find("BSON field 'advise.bogus' is an unknown field."), std::string::npos) << err();
  Run("db.advise({unusedIndexDays: -1})");
  EXPECT_FALSE(ok_);
}

// mongosh's profiler helpers over the profile command, and rockdoc's query
// statistics helpers over $queryStats and clearQueryStats.
TEST_F(ShellTest, ProfilerAndQueryStatsHelpers) {
  EXPECT_EQ(Show("db.setProfilingLevel(2)"), "{ was: 0, slowms: 100, sampleRate: 1, ok: 1 }\n");
  EXPECT_EQ(Show("db.getProfilingStatus()"), "{ was: 2, slowms: 100, sampleRate: 1 }\n");
  EXPECT_EQ(Show("db.getProfilingLevel()"), "2\n");
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}, {_id: 3, a: 2}]);"
     "db.c.find({a: 2}).toArray(); db.c.find({a: 1}).toArray(); db.c.countDocuments({a: 2});"
     "db.d.insertOne({_id: 1}); db.d.findOne({_id: 1})");
  // test.c: the finds' shape (run twice) and the count's; test.d: its read.
  EXPECT_EQ(Show("db.c.queryStats().length"), "2\n");
  EXPECT_EQ(Show("db.queryStats().filter(s => s.key.queryShape.cmdNs.coll === 'c' && "
                 "s.key.queryShape.command === 'find').map(s => s.metrics.execCount).join()"),
            "2\n");
  EXPECT_EQ(Show("db.queryStats().filter(s => s.key.queryShape.cmdNs.coll === 'd').length"), "1\n");
  // The profiler took each read of test.c, in order, as it was sent.
  EXPECT_EQ(Show("db.system.profile.find({ns: 'test.c'}).toArray().slice(0, 3)"
                 ".map(e => e.op + ' ' + e.nreturned).join()"),
            "query 2,query 1,command 1\n");
  EXPECT_EQ(Show("db.system.profile.findOne({ns: 'test.c'}).command.filter"), "{ a: 2 }\n");
  // The settings before the call, as mongosh shows them.
  EXPECT_EQ(Show("db.setProfilingLevel(1, {slowms: 20})"), "{ was: 2, slowms: 100, sampleRate: 1, ok: 1 }\n");
  EXPECT_EQ(Show("db.getProfilingStatus()"), "{ was: 1, slowms: 20, sampleRate: 1 }\n");
  EXPECT_EQ(Show("db.setProfilingLevel(0, 50)"), "{ was: 1, slowms: 20, sampleRate: 1, ok: 1 }\n");
  EXPECT_EQ(Show("db.getProfilingStatus()"), "{ was: 0, slowms: 50, sampleRate: 1 }\n");
  Run("db.setProfilingLevel(1, {sampleRate: 0.5})");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("sampleRate' other than 1.0 is not supported by rockdoc"));
  EXPECT_EQ(Show("db.getProfilingLevel()"), "0\n");
  EXPECT_EQ(Show("db.clearQueryStats()"), "{ ok: 1 }\n");
  EXPECT_EQ(Show("db.queryStats().length"), "0\n");
  // The N+1 loop as a shell script writes it: an _id read per post, while
  // the posts' cursor is open (120 posts: more than a first batch).
  Ok("db.authors.insertMany([{_id: 'ada'}, {_id: 'bob'}]);"
     "db.posts.insertMany(Array.from({length: 120}, (_, i) => ({by: i % 2 ? 'ada' : 'bob'})));"
     "db.posts.find().forEach(p => db.authors.findOne({_id: p.by}))");
  EXPECT_EQ(Show("db.queryStats().filter(s => s.key.queryShape.cmdNs.coll === 'authors')"
                 ".map(s => s.rockdoc.appJoins.count + ' after ' + Object.keys(s.rockdoc.appJoins.after)).join()"),
            "120 after posts\n");
}

// A write that raises growth warnings (GrowthStatistics) prints each on the
// error stream, one line, as mongosh prints a warning; what the write
// returns is unchanged. Every write method that can grow a document.
TEST_F(ShellTest, WritesPrintTheirGrowthWarnings) {
  const std::string kTail =
      " elements (250 or more); the schema advisor (rockdoc-advise, or db.advise() in the "
      "shell) says what to do\n";
  auto array_of = [](int n) {
    return "Array.from({length: " + std::to_string(n) + "}, (_, i) => i)";
  };
  Ok("db.c.insertOne({_id: 1, a: " + array_of(249) + "})");
  EXPECT_EQ(err(), "");
  EXPECT_EQ(Show("db.c.updateOne({_id: 1}, {$push: {a: 249}})"),
            "{\n  acknowledged: true,\n  insertedId: null,\n  matchedCount: 1,\n  "
            "modifiedCount: 1,\n  upsertedCount: 0\n}\n");
  EXPECT_EQ(err(), "Warning: document growth in test.c: the document {\"_id\": 1} has an array "
                   "'a' of 250" + kTail);
  Ok("db.c.insertMany([{_id: 2, t: {r: " + array_of(250) + "}}, {_id: 3, a: " + array_of(251) +
     "}])");
  EXPECT_EQ(err(),
            "Warning: document growth in test.c: the document {\"_id\": 2} has an array 't.r' "
            "of 250" + kTail +
            "Warning: document growth in test.c: the document {\"_id\": 3} has an array 'a' of "
            "251" + kTail);
  Ok("db.c.replaceOne({_id: 4}, {a: " + array_of(260) + "}, {upsert: true})");
  EXPECT_THAT(err(), StartsWith("Warning: document growth in test.c: the document {\"_id\": 4} "
                                "has an array 'a' of 260"));
  Ok("db.c.updateMany({}, {$set: {a: []}});"
     "db.c.updateMany({_id: {$in: [1, 3]}}, {$set: {a: " + array_of(300) + "}})");
  const std::string two = err();
  EXPECT_EQ(std::count(two.begin(), two.end(), '\n'), 2) << two;
  Ok("db.c.findOneAndUpdate({_id: 1}, {$push: {b: {$each: " + array_of(1000) + "}}})");
  EXPECT_THAT(err(), HasSubstr("has an array 'b' of 1000 elements (1000 or more)"));
  Ok("db.c.bulkWrite([{insertOne: {document: {_id: 9, a: " + array_of(250) + "}}}, "
     "{updateOne: {filter: {_id: 4}, update: {$push: {a: {$each: " + array_of(250) + "}}}}}])");
  EXPECT_THAT(err(), HasSubstr("the document {\"_id\": 9} has an array 'a' of 250"));
  EXPECT_THAT(err(), HasSubstr("the document {\"_id\": 4} has an array 'a' of 250"));
  // A write that crosses nothing prints nothing.
  Ok("db.c.updateOne({_id: 9}, {$push: {a: 1}}); db.c.insertOne({_id: 10})");
  EXPECT_EQ(err(), "");
}

// With statistics off (ClientOptions::collect_statistics) there are no
// growth warnings to print.
TEST_F(ShellTest, NoGrowthWarningsWithStatisticsOff) {
  shell_.reset();
  ShellOptions options;
  options.db_path = dir_.Sub("db");
  options.out = &out_;
  options.err = &err_;
  options.client.collect_statistics = false;
  auto shell = Shell::Open(options);
  ASSERT_TRUE(shell.ok()) << shell.status();
  shell_ = std::move(shell).value();
  Ok("db.c.insertOne({_id: 1, a: Array.from({length: 300}, (_, i) => i)})");
  EXPECT_EQ(err(), "");
  EXPECT_EQ(Show("db.c.stats().growthWarnings.array250"), "0\n");
}

}  // namespace
}  // namespace rockdoc::shell

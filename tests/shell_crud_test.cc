// Tests of the rockdoc shell (src/shell/), driven in-process: inserts,
// finds, updates and deletes through db.c.* (mongosh's CRUD API, the legacy
// API, bulkWrite and update pipelines), their results and errors, and every
// method's options, decoded from a table of known names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shell_test_fixture.h"

namespace rockdoc::shell {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------------------------------------------------------------- CRUD

TEST_F(ShellTest, InsertOneResult) {
  EXPECT_EQ(Show("db.c.insertOne({_id: 'a', x: 1})"), "{ acknowledged: true, insertedId: 'a' }\n");
  EXPECT_EQ(Show("db.c.insertOne({_id: ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f')})"),
            "{\n  acknowledged: true,\n  insertedId: ObjectId('5f1d7f0b9d3c2a1b2c3d4e5f')\n}\n");
  // Without _id the engine assigns an ObjectId, which the result returns.
  EXPECT_EQ(Show("const r = db.c.insertOne({y: 2}); "
                 "r.insertedId instanceof ObjectId && db.c.findOne({_id: r.insertedId}).y"),
            "2\n");
}

TEST_F(ShellTest, InsertsGiveTheDocumentItsId) {
  EXPECT_EQ(Show("const d = {a: 1}; const r = db.c.insertOne(d); d._id.equals(r.insertedId)"),
            "true\n");
  EXPECT_EQ(Show("const ds = [{b: 1}, {_id: 7}]; db.c.insertMany(ds); [ds[0]._id instanceof "
                 "ObjectId, ds[1]._id]"),
            "[ true, 7 ]\n");
  EXPECT_EQ(Show("const l = {c: 1}; db.c.insert(l); l._id instanceof ObjectId"), "true\n");
  // A frozen document is inserted all the same.
  EXPECT_EQ(Show("db.c.insertOne(Object.freeze({f: 1})).insertedId instanceof ObjectId"), "true\n");
}

TEST_F(ShellTest, InsertManyResult) {
  EXPECT_EQ(Show("db.c.insertMany([{_id: 1}, {_id: 2}])"),
            "{ acknowledged: true, insertedIds: { '0': 1, '1': 2 } }\n");
  EXPECT_EQ(Show("Object.keys(db.c.insertMany([{}, {}, {}]).insertedIds)"), "[ '0', '1', '2' ]\n");
  Show("db.c.insertMany({_id: 5})");
  EXPECT_FALSE(ok_);
  EXPECT_THAT(err(), HasSubstr("insertMany needs an array of documents"));
}

TEST_F(ShellTest, InsertManyErrorsAreBulkWriteErrors) {
  Ok("db.c.insertOne({_id: 2})");
  EXPECT_EQ(Show(R"js(
      try { db.c.insertMany([{_id: 1}, {_id: 2}, {_id: 3}]) }
      catch (e) { [e.name, e.code, e.codeName, e.writeErrors[0].index, e.insertedCount,
                   e instanceof MongoServerError] })js"),
            "[ 'MongoBulkWriteError', 11000, 'DuplicateKey', 1, 1, true ]\n");
  EXPECT_EQ(Show("db.c.countDocuments()"), "2\n");  // ordered: stopped at the error
  EXPECT_EQ(Show(R"js(
      try { db.c.insertMany([{_id: 4}, {_id: 2}, {_id: 5}], {ordered: false}) }
      catch (e) { [e.insertedCount, e.insertedIds] })js"),
            "[ 2, { '0': 4, '2': 5 } ]\n");
  EXPECT_EQ(Show("db.c.countDocuments()"), "4\n");
}

TEST_F(ShellTest, InsertManyOfNothingFailsAsTheDriverDoes) {
  EXPECT_EQ(Show("try { db.c.insertMany([]) } catch (e) { [e.name, e.code, e.message] }"),
            "[\n  'MongoInvalidArgumentError',\n  2,\n  'Invalid BulkOperation, Batch cannot be "
            "empty'\n]\n");
  EXPECT_EQ(Show("try { db.c.insert([]) } catch (e) { e.message }"),
            "Invalid BulkOperation, Batch cannot be empty\n");
  EXPECT_EQ(Show("db.getCollectionNames()"), "[]\n");
}

TEST_F(ShellTest, FindAndFindOne) {
  Ok("db.c.insertMany([{_id: 1, a: 1, b: 'x'}, {_id: 2, a: 2, b: 'y'}, {_id: 3, a: 3, b: 'z'}])");
  EXPECT_EQ(Show("db.c.find({a: {$gte: 2}})"),
            "[ { _id: 2, a: 2, b: 'y' }, { _id: 3, a: 3, b: 'z' } ]\n");
  EXPECT_EQ(Show("db.c.find({}, {b: 1, _id: 0}).toArray()"),
            "[ { b: 'x' }, { b: 'y' }, { b: 'z' } ]\n");
  EXPECT_EQ(Show("db.c.find({}, null, {sort: {a: -1}, limit: 1}).toArray()"),
            "[ { _id: 3, a: 3, b: 'z' } ]\n");
  EXPECT_EQ(Show("db.c.findOne({b: 'y'})"), "{ _id: 2, a: 2, b: 'y' }\n");
  EXPECT_EQ(Show("db.c.findOne({b: 'y'}, {a: 1})"), "{ _id: 2, a: 2 }\n");
  EXPECT_EQ(Show("db.c.findOne({b: 'nope'})"), "null\n");
  EXPECT_EQ(Show("db.c.find({b: /^[xz]$/}).map(d => d._id).toArray()"), "[ 1, 3 ]\n");
  EXPECT_EQ(Show("db.empty.find()"), "");  // an empty result prints nothing
}

// Geospatial (issue 40): a 2dsphere index, $near printed nearest first as
// mongosh prints a cursor, $geoWithin, $geoNear, and the errors' codes.
TEST_F(ShellTest, GeoIndexNearAndGeoNear) {
  Ok("db.places.insertMany(["
     "{_id: 1, name: 'Central Park', loc: {type: 'Point', coordinates: [-73.97, 40.77]}},"
     "{_id: 2, name: 'Sara D. Roosevelt Park', loc: {type: 'Point', coordinates: [-73.9928, 40.7193]}},"
     "{_id: 3, name: 'Polo Grounds', loc: {type: 'Point', coordinates: [-73.9375, 40.8303]}}])");
  EXPECT_EQ(Show("try { db.places.find({loc: {$near: [-73.9667, 40.78]}}).toArray() } "
                 "catch (e) { [e.code, e.codeName] }"),
            "[ 291, 'NoQueryExecutionPlans' ]\n");
  EXPECT_EQ(Show("db.places.createIndex({loc: '2dsphere'})"), "loc_2dsphere\n");
  EXPECT_EQ(Show("db.places.find({loc: {$near: {$geometry: {type: 'Point', coordinates: "
                 "[-73.9667, 40.78]}, $maxDistance: 6500}}}, {name: 1, _id: 0})"),
            "[ { name: 'Central Park' }, { name: 'Polo Grounds' } ]\n");
  EXPECT_EQ(Show("db.places.find({loc: {$geoWithin: {$centerSphere: [[-73.97, 40.77], 2 / 3963.2]}}}, "
                 "{_id: 1})"),
            "[ { _id: 1 } ]\n");
  EXPECT_EQ(Show("db.places.aggregate([{$geoNear: {near: [-73.9667, 40.78], key: 'loc', "
                 "distanceField: 'd', distanceMultiplier: 6378.1}}, "
                 "{$project: {_id: 1, km: {$round: ['$d', 1]}}}])"),
            "[ { _id: 1, km: 1.1 }, { _id: 3, km: 6.1 }, { _id: 2, km: 7.1 } ]\n");
  EXPECT_EQ(Show("try { db.places.insertOne({loc: {type: 'Point', coordinates: [0, 91]}}) } "
                 "catch (e) { e.code }"),
            "16755\n");
}

TEST_F(ShellTest, UpdateOneUpdateManyReplaceOne) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 1}, {_id: 3, a: 2}])");
  EXPECT_EQ(
      Show("db.c.updateOne({a: 1}, {$set: {b: true}})"),
      "{\n  acknowledged: true,\n  insertedId: null,\n  matchedCount: 1,\n  modifiedCount: 1,\n"
      "  upsertedCount: 0\n}\n");
  EXPECT_EQ(
      Show("const r = db.c.updateMany({a: 1}, {$inc: {n: 5}}); [r.matchedCount, r.modifiedCount]"),
      "[ 2, 2 ]\n");
  EXPECT_EQ(Stored("c", 2),
            R"({"_id": {"$numberInt": "2"}, "a": {"$numberInt": "1"}, "n": {"$numberInt": "5"}})");
  EXPECT_EQ(Show("const u = db.c.updateOne({_id: 9}, {$set: {a: 9}}, {upsert: true}); "
                 "[u.insertedId, u.upsertedCount, u.matchedCount]"),
            "[ 9, 1, 0 ]\n");
  EXPECT_EQ(
      Show("db.c.replaceOne({_id: 3}, {z: 1})"),
      "{\n  acknowledged: true,\n  insertedId: null,\n  matchedCount: 1,\n  modifiedCount: 1,\n"
      "  upsertedCount: 0\n}\n");
  EXPECT_EQ(Stored("c", 3), R"({"_id": {"$numberInt": "3"}, "z": {"$numberInt": "1"}})");
  EXPECT_EQ(Show("db.c.replaceOne({_id: 10}, {z: 2}, {upsert: true}).insertedId"), "10\n");
  EXPECT_EQ(Show("db.c.updateMany({a: 100}, {$set: {x: 1}}).matchedCount"), "0\n");
  // arrayFilters reach the engine.
  Ok("db.arr.insertOne({_id: 1, v: [1, 5, 9]})");
  Ok("db.arr.updateOne({_id: 1}, {$set: {'v.$[big]': 0}}, {arrayFilters: [{big: {$gt: 4}}]})");
  EXPECT_EQ(Show("db.arr.findOne().v"), "[ 1, 0, 0 ]\n");
}

TEST_F(ShellTest, UpdateArgumentErrors) {
  Ok("db.c.insertOne({_id: 1, s: 'text'})");
  EXPECT_EQ(Show("try { db.c.updateOne({}, {a: 1}) } catch (e) { [e.name, e.code, e.message] }"),
            "[\n  'MongoInvalidArgumentError',\n  2,\n  'Update document requires atomic "
            "operators'\n]\n");
  EXPECT_EQ(Show("try { db.c.replaceOne({}, {$set: {a: 1}}) } catch (e) { e.message }"),
            "Replacement document must not contain atomic operators\n");
  // An error the engine finds: $inc on a string.
  EXPECT_EQ(
      Show("try { db.c.updateOne({_id: 1}, {$inc: {s: 1}}) } catch (e) { [e.name, e.codeName] }"),
      "[ 'MongoServerError', 'TypeMismatch' ]\n");
  EXPECT_EQ(Show("try { db.c.updateOne({_id: 1}, {$bogus: {s: 1}}) } catch (e) { e.code }"), "9\n");
  EXPECT_EQ(Show("try { db.c.replaceOne({_id: 1}, {_id: 2}) } catch (e) { e.codeName }"),
            "ImmutableField\n");
}

// mongosh's update pipelines: an array of stages instead of operators.
TEST_F(ShellTest, UpdatePipelines) {
  Ok("db.c.insertMany([{_id: 1, a: 2, b: 3}, {_id: 2, a: 10, b: 1, old: true}])");
  EXPECT_EQ(Show("db.c.updateOne({_id: 1}, [{$set: {total: {$add: ['$a', '$b']}}}, {$unset: 'b'}]).modifiedCount"),
            "1\n");
  EXPECT_EQ(Show("db.c.findOne({_id: 1})"), "{ _id: 1, a: 2, total: 5 }\n");
  EXPECT_EQ(Show("db.c.updateMany({}, [{$replaceWith: {$mergeObjects: [{n: 0}, '$$ROOT']}}]).modifiedCount"),
            "2\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 2}, [{$project: {a: 1}}], {returnDocument: 'after'})"),
            "{ _id: 2, a: 10 }\n");
  // A stage an update does not run, checked by the server side.
  EXPECT_EQ(Show("try { db.c.updateOne({}, [{$match: {}}]) } catch (e) { [e.code, e.message] }"),
            "[ 72, '$match is not allowed to be used within an update' ]\n");
}

TEST_F(ShellTest, DeleteOneDeleteMany) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 1}, {_id: 3, a: 1}, {_id: 4, a: 2}])");
  EXPECT_EQ(Show("db.c.deleteOne({a: 1})"), "{ acknowledged: true, deletedCount: 1 }\n");
  EXPECT_EQ(Show("db.c.deleteMany({a: 1})"), "{ acknowledged: true, deletedCount: 2 }\n");
  EXPECT_EQ(Show("db.c.deleteMany({})"), "{ acknowledged: true, deletedCount: 1 }\n");
  EXPECT_EQ(Coll("c").EstimatedDocumentCount().value(), 0);
}

TEST_F(ShellTest, FindOneAndModify) {
  Ok("db.c.insertMany([{_id: 1, n: 1}, {_id: 2, n: 2}])");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 1}, {$inc: {n: 10}})"), "{ _id: 1, n: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 1}, {$inc: {n: 10}}, {returnDocument: 'after'})"),
            "{ _id: 1, n: 21 }\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({}, {$set: {t: 1}}, {sort: {n: -1}, projection: {n: 1}, "
                 "returnNewDocument: true})"),
            "{ _id: 1, n: 21 }\n");
  EXPECT_EQ(Show("db.c.findOneAndReplace({_id: 2}, {r: 1}, {returnDocument: 'after'})"),
            "{ _id: 2, r: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 7}, {$set: {u: 1}}, {upsert: true, returnDocument: "
                 "'after'})"),
            "{ _id: 7, u: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndDelete({_id: 2})"), "{ _id: 2, r: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndDelete({_id: 2})"), "null\n");
  EXPECT_EQ(Show("db.c.countDocuments()"), "2\n");
}

TEST_F(ShellTest, CountsAndDistinct) {
  Ok("db.c.insertMany([{_id: 1, t: ['a', 'b']}, {_id: 2, t: 'b'}, {_id: 3, t: 'c'}, {_id: 4}])");
  EXPECT_EQ(Show("db.c.countDocuments()"), "4\n");
  EXPECT_EQ(Show("db.c.countDocuments({t: 'b'})"), "2\n");
  EXPECT_EQ(Show("db.c.countDocuments({}, {skip: 1, limit: 2})"), "2\n");
  EXPECT_EQ(Show("db.c.estimatedDocumentCount()"), "4\n");
  EXPECT_EQ(Show("db.c.distinct('t')"), "[ 'a', 'b', 'c' ]\n");
  EXPECT_EQ(Show("db.c.distinct('t', {_id: {$gt: 1}})"), "[ 'b', 'c' ]\n");
  EXPECT_EQ(Show("db.c.count({t: 'c'})"), "1\n");  // legacy
}

// bulkWrite: the six models as insert/update/delete commands, with
// mongosh's result and MongoBulkWriteError.
TEST_F(ShellTest, BulkWriteRunsTheSixModels) {
  Ok("db.c.insertOne({_id: 1, a: 1})");
  EXPECT_EQ(Show(R"(
    const r = db.c.bulkWrite([
      {insertOne: {document: {_id: 2, a: 2}}},
      {insertOne: {document: {_id: 3}}},
      {updateOne: {filter: {_id: 1}, update: {$set: {a: 10}}}},
      {updateMany: {filter: {}, update: {$inc: {n: 1}}}},
      {replaceOne: {filter: {_id: 3}, replacement: {b: 1}}},
      {updateOne: {filter: {_id: 9}, update: {$set: {a: 9}}, upsert: true}},
      {deleteOne: {filter: {_id: 2}}},
      {deleteMany: {filter: {a: {$gt: 100}}}},
    ]);
    [r.acknowledged, r.insertedCount, r.matchedCount, r.modifiedCount, r.deletedCount,
     r.upsertedCount, r.upsertedIds[5], r.insertedIds[0], r.insertedIds[1]].join(' ')
  )"),
            "true 2 5 5 1 1 9 2 3\n")
      << err();
  EXPECT_EQ(Show("db.c.find().sort({_id: 1}).toArray()"),
            "[ { _id: 1, a: 10, n: 1 }, { _id: 3, b: 1 }, { _id: 9, a: 9 } ]\n");
  // Ordered: the first error stops the rest.
  EXPECT_EQ(Show(R"(
    try { db.c.bulkWrite([{insertOne: {document: {_id: 1}}}, {insertOne: {document: {_id: 20}}}]) }
    catch (e) { [e.name, e.code, e.writeErrors.length, e.writeErrors[0].index, e.result.insertedCount] }
  )"),
            "[ 'MongoBulkWriteError', 11000, 1, 0, 0 ]\n");
  EXPECT_EQ(Show("db.c.countDocuments({_id: 20})"), "0\n");
  // Unordered: every operation runs, every error is reported (an unknown
  // update operator is found running the statement: a write error; an
  // unknown field of a statement fails its whole command, as mongod's
  // parse of the request).
  EXPECT_EQ(Show(R"(
    try { db.c.bulkWrite([{insertOne: {document: {_id: 1}}}, {insertOne: {document: {_id: 21}}},
                          {updateOne: {filter: {_id: 21}, update: {$bogus: {a: 1}}}}], {ordered: false}) }
    catch (e) { [e.writeErrors.map((w) => w.index + ':' + w.codeName), e.result.insertedCount] }
  )"),
            "[ [ '0:DuplicateKey', '2:FailedToParse' ], 1 ]\n");
  EXPECT_EQ(Show(R"(
    try { db.c.bulkWrite([{deleteOne: {filter: {_id: 21}, bogus: 1}}], {ordered: false}) }
    catch (e) { [e.name, e.code] }
  )"),
            "[ 'MongoServerError', 40415 ]\n");
  EXPECT_EQ(Show("db.c.countDocuments({_id: 21})"), "1\n");
  // Options are the commands' fields: an unknown one is refused by them.
  EXPECT_EQ(Show("try { db.c.bulkWrite([{insertOne: {document: {}}}], {bogus: 1}) } "
                 "catch (e) { e.code + ' ' + e.message }"),
            "40415 BSON field 'insert.bogus' is an unknown field.\n");
  EXPECT_EQ(Show("try { db.c.bulkWrite([{frob: {}}]) } catch (e) { e.name }"),
            "MongoInvalidArgumentError\n");
}

TEST_F(ShellTest, RequiredArgumentsAreRequired) {
  Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}])");
  // deleteMany(), deleteOne() and remove() deleted documents; mongosh refuses.
  EXPECT_EQ(Show("try { db.c.deleteMany() } catch (e) { [e.name, e.code, e.message] }"),
            "[\n  'MongoshInvalidInputError',\n  2,\n  '[COMMON-10001] Missing required argument "
            "at position 0 (Collection.deleteMany)'\n]\n");
  EXPECT_EQ(Show("try { db.c.deleteMany() } catch (e) { e.code }"), CodeLine(ErrorCode::kBadValue));
  Show("db.c.deleteOne()");
  EXPECT_EQ(err(),
            "MongoshInvalidInputError: [COMMON-10001] Missing required argument "
            "at position 0 (Collection.deleteOne)\n");
  Show("db.c.remove()");
  EXPECT_THAT(err(), HasSubstr("Missing required argument at position 0 (Collection.remove)"));
  Show("db.c.explain().deleteMany()");
  EXPECT_THAT(err(), HasSubstr("Missing required argument at position 0 (Collection.deleteMany)"));
  EXPECT_EQ(Coll("c").EstimatedDocumentCount().value(), 2);
  // The same table covers every method whose arguments mongosh requires.
  const std::pair<const char*, const char*> kCalls[] = {
      {"db.c.updateOne()", "0 (Collection.updateOne)"},
      {"db.c.updateOne({})", "1 (Collection.updateOne)"},
      {"db.c.updateMany({_id: 1})", "1 (Collection.updateMany)"},
      {"db.c.update({})", "1 (Collection.update)"},
      {"db.c.replaceOne({})", "1 (Collection.replaceOne)"},
      {"db.c.findOneAndUpdate({})", "1 (Collection.findOneAndUpdate)"},
      {"db.c.findOneAndReplace({})", "1 (Collection.findOneAndReplace)"},
      {"db.c.findOneAndDelete()", "0 (Collection.findOneAndDelete)"},
      {"db.c.findAndModify()", "0 (Collection.findAndModify)"},
      {"db.c.insertOne()", "0 (Collection.insertOne)"},
      {"db.c.insertMany()", "0 (Collection.insertMany)"},
      {"db.c.insert()", "0 (Collection.insert)"},
      {"db.c.save()", "0 (Collection.save)"},
      {"db.c.createIndex()", "0 (Collection.createIndex)"},
      {"db.c.createIndexes()", "0 (Collection.createIndexes)"},
      {"db.c.dropIndex()", "0 (Collection.dropIndex)"},
      {"db.c.distinct()", "0 (Collection.distinct)"},
      {"db.c.renameCollection()", "0 (Collection.renameCollection)"},
      {"db.c.explain().updateOne({})", "1 (Collection.updateOne)"},
      {"db.getSiblingDB()", "0 (Database.getSiblingDB)"},
      {"db.createCollection()", "0 (Database.createCollection)"},
      {"db.getMongo().getDB()", "0 (Mongo.getDB)"},
  };
  for (const auto& [call, what] : kCalls) {
    EXPECT_EQ(Show(std::string("try { ") + call + " } catch (e) { [e.name, e.code, e.message] }"),
              std::string("[\n  'MongoshInvalidInputError',\n  2,\n  '[COMMON-10001] Missing "
                          "required argument at position ") +
                  what + "'\n]\n")
        << call;
  }
  EXPECT_EQ(Show("try { db.c.findAndModify({remove: true}) } catch (e) { e.message }"),
            "[COMMON-10001] Missing required property: \"query\"\n");
  EXPECT_EQ(Coll("c").EstimatedDocumentCount().value(), 2);
  EXPECT_EQ(Stored("c", 1), R"({"_id": {"$numberInt": "1"}, "a": {"$numberInt": "1"}})");
  EXPECT_EQ(Show("db.c.getIndexes().length"), "1\n");
}

// ---------------------------------------------------------------- legacy API

TEST_F(ShellTest, LegacyInsert) {
  EXPECT_EQ(Show("db.c.insert({_id: 1})"), "WriteResult({ nInserted: 1 })\n");
  EXPECT_EQ(Show("db.c.insert({_id: 1})"),
            "WriteResult({\n  nInserted: 0,\n  writeError: {\n    code: 11000,\n"
            "    errmsg: 'E11000 duplicate key error collection: test.c index: _id_ dup key: { "
            "_id: 1 }'\n"
            "  }\n})\n");
  EXPECT_EQ(Show("db.c.insert({_id: 1}).hasWriteError()"), "true\n");
  EXPECT_EQ(Show("const r = db.c.insert([{_id: 2}, {_id: 3}]); [r.nInserted, r.hasWriteErrors()]"),
            "[ 2, false ]\n");
  EXPECT_THAT(Show("db.c.insert([{_id: 4}])"),
              StartsWith("BulkWriteResult({\n  writeErrors: [],\n"));
}

TEST_F(ShellTest, LegacyUpdateWithUpsertAndMulti) {
  Ok("db.c.insert([{_id: 1, a: 1}, {_id: 2, a: 1}])");
  EXPECT_EQ(Show("db.c.update({a: 1}, {$set: {b: 1}})"),
            "WriteResult({ nMatched: 1, nUpserted: 0, nModified: 1 })\n");
  EXPECT_EQ(Show("db.c.update({a: 1}, {$set: {c: 1}}, {multi: true})"),
            "WriteResult({ nMatched: 2, nUpserted: 0, nModified: 2 })\n");
  EXPECT_EQ(Show("db.c.update({_id: 5}, {$set: {a: 5}}, true)"),
            "WriteResult({ nMatched: 0, nUpserted: 1, nModified: 0, _id: 5 })\n");
  EXPECT_EQ(Show("db.c.update({_id: 2}, {replaced: true})"),
            "WriteResult({ nMatched: 1, nUpserted: 0, nModified: 1 })\n");
  EXPECT_EQ(Stored("c", 2), R"({"_id": {"$numberInt": "2"}, "replaced": true})");
  EXPECT_EQ(Show("try { db.c.update({}, {x: 1}, false, true) } catch (e) { e.code }"), "2\n");
  EXPECT_THAT(Show("db.c.update({_id: 1}, {$inc: {a: 'x'}})"),
              HasSubstr("writeError: {\n    code: 14,"));
}

TEST_F(ShellTest, LegacySaveRemoveCount) {
  EXPECT_EQ(Show("db.c.save({_id: 1, v: 1})"),
            "WriteResult({ nMatched: 0, nUpserted: 1, nModified: 0, _id: 1 })\n");
  EXPECT_EQ(Show("db.c.save({_id: 1, v: 2})"),
            "WriteResult({ nMatched: 1, nUpserted: 0, nModified: 1 })\n");
  EXPECT_EQ(Show("db.c.save({v: 3})"), "WriteResult({ nInserted: 1 })\n");
  EXPECT_EQ(Show("db.c.count()"), "2\n");
  Ok("db.c.insert([{k: 1}, {k: 1}, {k: 1}])");
  EXPECT_EQ(Show("db.c.remove({k: 1}, true)"), "WriteResult({ nRemoved: 1 })\n");
  EXPECT_EQ(Show("db.c.remove({k: 1}, {justOne: false})"), "WriteResult({ nRemoved: 2 })\n");
  EXPECT_EQ(Show("db.c.remove({})"), "WriteResult({ nRemoved: 2 })\n");
  EXPECT_EQ(Show("db.c.count()"), "0\n");
}

TEST_F(ShellTest, LegacyFindAndModify) {
  Ok("db.c.insert([{_id: 1, n: 1}, {_id: 2, n: 2}])");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 1}, update: {$inc: {n: 1}}})"),
            "{ _id: 1, n: 1 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 1}, update: {$inc: {n: 1}}, new: true})"),
            "{ _id: 1, n: 3 }\n");
  EXPECT_EQ(
      Show("db.c.findAndModify({query: {}, sort: {n: -1}, update: {$set: {top: true}}, new: true, "
           "fields: {top: 1}})"),
      "{ _id: 1, top: true }\n");
  EXPECT_EQ(
      Show(
          "db.c.findAndModify({query: {_id: 3}, update: {$set: {n: 3}}, upsert: true, new: true})"),
      "{ _id: 3, n: 3 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 2}, update: {whole: 1}, new: true})"),
            "{ _id: 2, whole: 1 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 2}, remove: true})"), "{ _id: 2, whole: 1 }\n");
  EXPECT_EQ(Show("db.c.count()"), "2\n");
}

// ------------------------------------------------ CRUD options (issue 11)

// Every method's options are decoded from a table of known names: an option
// rockdoc lacks is NotImplemented (238) and changes nothing; a name MongoDB
// does not know is its unknown-field error (40415). They used to be dropped.
class CrudOptionsTest : public ShellTest {
 protected:
  void SetUp() override {
    ShellTest::SetUp();
    Ok("db.c.insertMany([{_id: 1, a: 1}, {_id: 2, a: 2}, {_id: 3, a: 3}])");
  }
  // The error code `call` throws, or "none".
  std::string Code(const std::string& call) {
    return Show("try { " + call + "; 'none' } catch (e) { e.code }");
  }
  // Nothing changed: the three documents as inserted.
  void ExpectUnchanged() {
    EXPECT_EQ(Show("db.c.find().sort({_id: 1}).toArray().map((d) => [d._id, d.a, d.b])"),
              "[ [ 1, 1, undefined ], [ 2, 2, undefined ], [ 3, 3, undefined ] ]\n");
  }
};

TEST_F(CrudOptionsTest, UnsupportedWriteOptionsAreRefusedAndChangeNothing) {
  for (const std::string& call : std::vector<std::string>{
           "db.c.insertOne({_id: 4}, {writeConcern: {w: 0}})",
           "db.c.deleteMany({}, {writeConcern: {w: 2}})",
       }) {
    EXPECT_EQ(Code(call), CodeLine(ErrorCode::kNotImplemented)) << call;
    ExpectUnchanged();
  }
  // updateMany changes every match: a sort is MongoDB's FailedToParse.
  EXPECT_EQ(Code("db.c.updateMany({}, {$set: {b: 1}}, {sort: {_id: 1}})"),
            CodeLine(ErrorCode::kFailedToParse));
  ExpectUnchanged();
  // findAndModify's remove form takes new and upsert only as false.
  EXPECT_EQ(Code("db.c.findAndModify({query: {_id: 1}, remove: true, new: true})"),
            CodeLine(ErrorCode::kFailedToParse));
  EXPECT_EQ(Code("db.c.findOneAndDelete({_id: 1}, {upsert: true})"),
            CodeLine(ErrorCode::kFailedToParse));
  ExpectUnchanged();
  // hint on deletes and findAndModify, let on every write and find (issue
  // 33 #9): taken (here matching nothing).
  for (const std::string& call : std::vector<std::string>{
           "db.c.deleteMany({_id: 9}, {hint: {_id: 1}})",
           "db.c.deleteMany({$expr: {$eq: ['$_id', '$$x']}}, {let: {x: 9}})",
           "db.c.updateOne({$expr: {$eq: ['$_id', '$$x']}}, {$set: {b: 1}}, {let: {x: 9}})",
           "db.c.update({_id: 9}, {$set: {b: 1}}, {multi: true, let: {x: 1}})",
           "db.c.findOneAndReplace({_id: 9}, {a: 1, b: 1}, {hint: {_id: 1}})",
           "db.c.findOneAndDelete({$expr: {$eq: ['$_id', '$$x']}}, {let: {x: 9}})",
           "db.c.findOne({$expr: {$eq: ['$_id', '$$x']}}, {}, {let: {x: 9}})",
           "db.c.explain().deleteOne({}, {hint: {_id: 1}})",
       }) {
    EXPECT_EQ(Code(call), "none\n") << call;
  }
  ExpectUnchanged();
}

// Collation (issue 39) through every shell door: a cursor's .collation(),
// the options of countDocuments, distinct, updates, deletes,
// findOneAndUpdate, the legacy remove, createIndex and createCollection.
TEST_F(CrudOptionsTest, CollationReachesEveryCommand) {
  Ok("db.n.insertMany([{_id: 1, s: 'Alice'}, {_id: 2, s: 'alice'}, {_id: 3, s: 'bob'}])");
  const std::string ci = "{collation: {locale: 'en', strength: 2}}";
  EXPECT_EQ(Show("db.n.find({s: 'ALICE'}).collation({locale: 'en', strength: 2}).sort({_id: 1})"
                 ".toArray().map((d) => d._id)"),
            "[ 1, 2 ]\n");
  EXPECT_EQ(Show("db.n.find({s: 'ALICE'}).collation({locale: 'en', strength: 2}).count()"), "2\n");
  EXPECT_EQ(Show("db.n.find({}, {}, " + ci + ").sort({s: -1}).toArray()[0].s"), "bob\n");
  EXPECT_EQ(Show("db.n.countDocuments({s: 'ALICE'}, " + ci + ")"), "2\n");
  EXPECT_EQ(Show("db.n.distinct('s', {}, " + ci + ").length"), "2\n");
  EXPECT_EQ(Show("db.n.updateMany({s: 'ALICE'}, {$set: {k: 1}}, " + ci + ").modifiedCount"),
            "2\n");
  EXPECT_EQ(Show("db.n.findOneAndUpdate({s: 'BOB'}, {$set: {k: 2}}, {collation: {locale: 'en', "
                 "strength: 1}, returnDocument: 'after'}).k"),
            "2\n");
  EXPECT_EQ(Show("db.n.remove({s: 'BOB'}, {justOne: false, collation: {locale: 'en', strength: 1}})"
                 ".nRemoved"),
            "1\n");
  EXPECT_EQ(Show("db.n.deleteMany({s: 'ALICE'}, " + ci + ").deletedCount"), "2\n");
  EXPECT_EQ(Show("db.n.createIndex({s: 1}, {unique: true, collation: {locale: 'en', strength: 2}})"),
            "s_1\n");
  Ok("db.n.insertOne({s: 'Carol'})");
  EXPECT_EQ(Code("db.n.insertOne({s: 'CAROL'})"), CodeLine(ErrorCode::kDuplicateKey));
  EXPECT_EQ(Show("db.n.getIndexes()[1].collation.strength"), "2\n");
  Ok("db.createCollection('m', {collation: {locale: 'fr', strength: 1}})");
  Ok("db.m.insertOne({s: 'élan'})");
  EXPECT_EQ(Show("db.m.countDocuments({s: 'ELAN'})"), "1\n");
  EXPECT_EQ(Show("try { db.n.find().collation('en') } catch (e) { e.message }"),
            "collation must be an object\n");
}

// writeConcern j: true is honoured (the command layer syncs the log before
// the reply); a session's own writeConcern would have to be sent with each
// of its operations, which the shell does not do: refused, not ignored.
TEST_F(CrudOptionsTest, JournaledWriteConcern) {
  EXPECT_EQ(Show("db.c.insertMany([{_id: 4}], {writeConcern: {w: 1, j: true}}).acknowledged"),
            "true\n");
  EXPECT_EQ(Show("db.c.deleteOne({_id: 4}, {writeConcern: {j: true}}).deletedCount"), "1\n");
  ExpectUnchanged();
  EXPECT_EQ(Code("db.getMongo().startSession({writeConcern: {j: true}})"),
            CodeLine(ErrorCode::kNotImplemented));
  EXPECT_EQ(Code("db.getMongo().startSession({writeConcern: {w: 1}}).endSession()"), "none\n");
}

TEST_F(CrudOptionsTest, UnknownOptionsAreMongoDbsUnknownFieldError) {
  for (const std::string& call : std::vector<std::string>{
           std::string("db.c.updateOne({_id: 1}, {$set: {b: 1}}, {upsrt: true})"),
           std::string("db.c.deleteOne({_id: 1}, {upsert: true})"),
           std::string("db.c.deleteMany({}, {justOne: true})"),
           std::string("db.c.insertMany([{_id: 4}], {orderd: false})"),
           std::string("db.c.deleteMany({}, {writeConcern: {w: 1, x: 1}})"),
       }) {
    EXPECT_EQ(Code(call), CodeLine(ErrorCode::kUnknownBsonField)) << call;
    ExpectUnchanged();
  }
  // Options a method's command has but that contradict it: MongoDB's
  // FailedToParse (an array filter a replacement cannot use; new with
  // remove).
  EXPECT_EQ(Code("db.c.replaceOne({_id: 1}, {b: 1}, {arrayFilters: [{x: 1}]})"),
            CodeLine(ErrorCode::kFailedToParse));
  EXPECT_EQ(Code("db.c.findOneAndDelete({_id: 1}, {returnDocument: 'after'})"),
            CodeLine(ErrorCode::kFailedToParse));
  ExpectUnchanged();
  EXPECT_EQ(Code("db.c.find({}, {}, {foo: 1}).toArray()"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.findOne({}, {}, {foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.countDocuments({}, {foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.count({}, {foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.distinct('a', {}, {foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.estimatedDocumentCount({foo: 1})"), CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.explain().find({}, {}, {foo: 1}).finish()"),
            CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.explain().findOne({}, {}, {foo: 1})"),
            CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.explain().deleteMany({}, {foo: 1})"),
            CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Code("db.c.explain().updateMany({}, {$set: {b: 1}}, {foo: 1})"),
            CodeLine(ErrorCode::kUnknownBsonField));
  EXPECT_EQ(Show("try { db.c.find({}, {}, {foo: 1}).toArray() } catch (e) { e.message }"),
            "BSON field 'find.foo' is an unknown field.\n");
  EXPECT_EQ(Show("try { db.c.updateOne({}, {$set: {b: 1}}, {upsrt: true}) } "
                 "catch (e) { e.message }"),
            "BSON field 'update.upsrt' is an unknown field.\n");
}

TEST_F(CrudOptionsTest, UnsupportedReadOptionsAreRefused) {
  for (const char* call : {
           "db.c.find({}, {}, {allowDiskUse: true}).toArray()",
           "db.c.find().allowDiskUse().toArray()",
       }) {
    EXPECT_EQ(Code(call), CodeLine(ErrorCode::kNotImplemented)) << call;
  }
}

// find's min, max, returnKey and showRecordId reach the find command
// (tests/findext_test.cc shows what it does with them), as options and as
// cursor methods; tailable too, refused on a collection that is not capped.
TEST_F(CrudOptionsTest, KeyRangeAndRecordOptionsReachTheFindCommand) {
  EXPECT_EQ(Code("db.c.find({}, {}, {min: {_id: 2}}).toArray()"),
            CodeLine(static_cast<ErrorCode>(51173)));
  EXPECT_EQ(Show("db.c.find().hint({_id: 1}).min({_id: 2}).max({_id: 3}).toArray().length"), "1\n");
  EXPECT_EQ(Show("JSON.stringify(db.c.find({}, {}, {returnKey: true}).toArray()[0])"), "{}\n");
  EXPECT_EQ(Show("JSON.stringify(db.c.find({_id: 2}).returnKey().toArray())"), "[{\"_id\":2}]\n");
  EXPECT_EQ(Show("'$recordId' in db.c.find().showRecordId().next()"), "true\n");
  EXPECT_EQ(Code("db.c.find({}, {}, {tailable: true}).toArray()"), CodeLine(ErrorCode::kBadValue));
}

TEST_F(CrudOptionsTest, MeaninglessOptionsAndSupportedOnesWork) {
  // No effect on one embedded node: accepted.
  EXPECT_EQ(Show("db.c.find({}, {}, {comment: 'x', readPreference: 'secondary', "
                 "readConcern: {level: 'majority'}, noCursorTimeout: true, "
                 "allowPartialResults: true, allowDiskUse: false, batchSize: 2}).itcount()"),
            "3\n");
  EXPECT_EQ(Show("db.c.find().comment('x').readPref('primary').noCursorTimeout().itcount()"),
            "3\n");
  // A snapshot read outside a session: one command's cursor reads one
  // snapshot anyway (MongoDB 5.0+ takes it on find, distinct, aggregate).
  EXPECT_EQ(Show("db.c.find().readConcern('snapshot').itcount()"), "3\n");
  Ok("db.c.insertOne({_id: 4}, {writeConcern: {w: 'majority', wtimeout: 100}, comment: 'x'})");
  Ok("db.c.insertMany([{_id: 5}], {ordered: false, writeConcern: {w: 1, j: false}, "
     "bypassDocumentValidation: true})");
  EXPECT_EQ(Show("db.c.deleteMany({_id: {$gte: 4}}, {writeConcern: {w: 1}, maxTimeMS: 1000})"
                 ".deletedCount"),
            "2\n");
  // Supported ones still work.
  EXPECT_EQ(Show("db.c.find({}, {_id: 1}, {sort: {_id: -1}, skip: 1, limit: 1}).toArray()"),
            "[ { _id: 2 } ]\n");
  EXPECT_EQ(Show("db.c.countDocuments({}, {skip: 1, limit: 5, maxTimeMS: 1000})"), "2\n");
  EXPECT_EQ(Show("db.c.estimatedDocumentCount({maxTimeMS: 1000})"), "3\n");
  EXPECT_EQ(Show("db.c.replaceOne({_id: 9}, {a: 9}, {upsert: true}).upsertedCount"), "1\n");
  // replaceOne's hint and maxTimeMS are the update statement's and
  // command's: applied (a hint naming no index fails).
  EXPECT_EQ(Show("db.c.replaceOne({_id: 9}, {a: 9, c: 1}, {hint: {_id: 1}, maxTimeMS: 1000})"
                 ".modifiedCount"),
            "1\n");
  EXPECT_EQ(Code("db.c.replaceOne({_id: 9}, {a: 9}, {hint: {zz: 1}})"),
            CodeLine(ErrorCode::kBadValue));
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 1}, {$set: {b: 1}}, "
                 "{returnDocument: 'after', projection: {b: 1}})"),
            "{ _id: 1, b: 1 }\n");
  EXPECT_EQ(Show("db.c.findOneAndUpdate({_id: 1}, {$set: {b: 2}}, "
                 "{returnNewDocument: true, projection: {b: 1}})"),
            "{ _id: 1, b: 2 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 1}, update: {$set: {b: 3}}, new: true, "
                 "fields: {b: 1}})"),
            "{ _id: 1, b: 3 }\n");
  EXPECT_EQ(Show("db.c.findAndModify({query: {_id: 9}, remove: true, new: false, upsert: false})"),
            "{ _id: 9, a: 9, c: 1 }\n");
  Ok("db.c.insertOne({_id: 9, a: 9})");
  EXPECT_EQ(Show("db.c.findOneAndDelete({}, {sort: {_id: -1}, projection: {_id: 1}})"),
            "{ _id: 9 }\n");
  EXPECT_EQ(Show("db.c.update({}, {$set: {b: 4}}, {multi: true}).nModified"), "3\n");
  EXPECT_EQ(Show("db.c.remove({}, {justOne: true}).nRemoved"), "1\n");
  EXPECT_EQ(Show("db.c.explain().updateMany({}, {$set: {b: 1}}, {upsert: false}).ok"), "1\n");
}

}  // namespace
}  // namespace rockdoc::shell

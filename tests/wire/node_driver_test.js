// The official Node.js driver (npm `mongodb`, pinned in package.json)
// against rockdoc-serve: CRUD, indexes, explain, bulk writes, a cursor
// across several batches, sessions, transactions, aggregation, and the
// replica set of one (?replicaSet= and directConnection=true).
//
//   node node_driver_test.js URI     (run by run_with_server.py)
//
// Exits 77 (a CTest skip) when the driver is not installed.
'use strict';
const assert = require('node:assert/strict');
const { requireDriver, rejects, runTests } = require('./driver_harness');

const { MongoClient, MongoServerError, MongoBulkWriteError } = requireDriver();

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('handshake', async (client) => {
  const hello = await client.db('admin').command({ hello: 1 });
  assert.equal(hello.isWritablePrimary, true);
  assert.equal(hello.maxWireVersion, 21);
  assert.equal(hello.maxMessageSizeBytes, 48000000);
  assert.equal(hello.maxBsonObjectSize, 16777216);
  assert.equal(hello.maxWriteBatchSize, 100000);
  assert.equal(hello.logicalSessionTimeoutMinutes, 30);
});

test('crud', async (client) => {
  const c = client.db('node_test').collection('crud');
  await c.drop().catch(() => {});
  assert.equal((await c.insertOne({ _id: 1, name: 'a', n: 1 })).insertedId, 1);
  const many = await c.insertMany([2, 3, 4, 5].map((i) => ({ _id: i, n: i })));
  assert.equal(many.insertedCount, 4);
  assert.equal(await c.countDocuments({}), 5);
  assert.equal(await c.estimatedDocumentCount(), 5);
  assert.deepEqual(await c.findOne({ _id: 1 }), { _id: 1, name: 'a', n: 1 });
  assert.deepEqual((await c.find({ n: { $gte: 3 } }).sort({ n: -1 }).project({ _id: 1 }).toArray()),
    [{ _id: 5 }, { _id: 4 }, { _id: 3 }]);
  assert.equal((await c.updateOne({ _id: 1 }, { $inc: { n: 10 } })).modifiedCount, 1);
  assert.equal((await c.updateMany({ n: { $lt: 4 } }, { $set: { small: true } })).modifiedCount, 2);
  const up = await c.updateOne({ _id: 9 }, { $set: { n: 9 } }, { upsert: true });
  assert.equal(up.upsertedId, 9);
  assert.equal((await c.replaceOne({ _id: 9 }, { x: 1 })).modifiedCount, 1);
  const after = await c.findOneAndUpdate({ _id: 2 }, { $set: { n: 20 } }, { returnDocument: 'after' });
  assert.equal(after.n, 20);
  assert.equal((await c.deleteMany({ small: true })).deletedCount, 2);
  assert.equal((await c.deleteOne({ _id: 9 })).deletedCount, 1);
  assert.deepEqual((await c.distinct('n')).sort((a, b) => a - b), [4, 5, 11]);
  await rejects(c.insertOne({ _id: 1 }), 11000);
});

test('indexes and explain', async (client) => {
  const c = client.db('node_test').collection('idx');
  await c.drop().catch(() => {});
  await c.insertMany(Array.from({ length: 500 }, (_, i) => ({ _id: i, k: i % 50, s: String(i) })));
  assert.equal(await c.createIndex({ k: 1 }), 'k_1');
  assert.deepEqual(await c.createIndexes([{ key: { s: 1 }, name: 's_u', unique: true }]), ['s_u']);
  assert.deepEqual((await c.indexes()).map((i) => i.name).sort(), ['_id_', 'k_1', 's_u']);
  const plan = await c.find({ k: 7 }).explain('executionStats');
  assert.equal(plan.queryPlanner.winningPlan.stage, 'FETCH');
  assert.equal(plan.queryPlanner.winningPlan.inputStage.indexName, 'k_1');
  assert.equal(plan.executionStats.nReturned, 10);
  assert.equal(plan.executionStats.totalDocsExamined, 10);
  await rejects(c.insertOne({ _id: 1000, s: '3' }), 11000);
  await c.dropIndex('k_1');
  assert.deepEqual((await c.indexes()).map((i) => i.name).sort(), ['_id_', 's_u']);
});

test('bulk writes', async (client) => {
  const c = client.db('node_test').collection('bulk');
  await c.drop().catch(() => {});
  const r = await c.bulkWrite([
    { insertOne: { document: { _id: 1 } } },
    { insertOne: { document: { _id: 2 } } },
    { updateOne: { filter: { _id: 1 }, update: { $set: { a: 1 } } } },
    { replaceOne: { filter: { _id: 2 }, replacement: { b: 2 } } },
    { deleteOne: { filter: { _id: 2 } } },
    { updateOne: { filter: { _id: 3 }, update: { $set: { c: 3 } }, upsert: true } },
  ]);
  assert.deepEqual([r.insertedCount, r.matchedCount, r.modifiedCount, r.deletedCount, r.upsertedCount],
    [2, 2, 2, 1, 1]);
  const e = await rejects(c.insertMany([{ _id: 20 }, { _id: 1 }, { _id: 21 }], { ordered: false }), 11000);
  assert.ok(e instanceof MongoBulkWriteError);
  assert.equal(e.result.insertedCount, 2);
  assert.equal(await c.countDocuments(), 4);
  // Large enough for several OP_MSG document sequences.
  const big = Array.from({ length: 20000 }, (_, i) => ({ _id: 1000 + i, pad: 'x'.repeat(1000) }));
  assert.equal((await c.insertMany(big)).insertedCount, 20000);
  assert.equal(await c.countDocuments({ _id: { $gte: 1000 } }), 20000);
});

test('cursor across batches', async (client) => {
  const c = client.db('node_test').collection('cursor');
  await c.drop().catch(() => {});
  await c.insertMany(Array.from({ length: 1000 }, (_, i) => ({ _id: i })));
  const ids = [];
  for await (const d of c.find({}, { batchSize: 64 }).sort({ _id: 1 })) ids.push(d._id);
  assert.deepEqual(ids, Array.from({ length: 1000 }, (_, i) => i));
  const early = c.find({}, { batchSize: 10 });
  await early.next();
  await early.close();  // killCursors
  assert.equal((await c.find({ _id: { $gte: 100 } }).toArray()).length, 900);
});

test('sessions and transactions', async (client) => {
  const c = client.db('node_test').collection('txn');
  await c.drop().catch(() => {});
  await c.insertOne({ _id: 0 });
  const session = client.startSession();
  try {
    await session.withTransaction(async () => {
      await c.insertOne({ _id: 1 }, { session });
      await c.updateOne({ _id: 0 }, { $set: { in: 'txn' } }, { session });
      assert.equal(await c.countDocuments({}, { session }), 2);
      assert.equal(await c.countDocuments({}), 1);  // not visible before commit
    });
    assert.equal(await c.countDocuments({}), 2);
    assert.deepEqual(await c.findOne({ _id: 0 }), { _id: 0, in: 'txn' });
    session.startTransaction();
    await c.insertOne({ _id: 2 }, { session });
    await session.abortTransaction();
    assert.equal(await c.findOne({ _id: 2 }), null);
    // A write conflict between a transaction and another writer: the
    // transaction's statement fails with TransientTransactionError.
    session.startTransaction();
    await c.updateOne({ _id: 0 }, { $set: { v: 1 } }, { session });
    const other = client.startSession();
    other.startTransaction();
    const e = await rejects(c.updateOne({ _id: 0 }, { $set: { v: 2 } }, { session: other }), 112);
    assert.ok(e.hasErrorLabel('TransientTransactionError'));
    await other.abortTransaction().catch(() => {});
    await other.endSession();
    await session.commitTransaction();
    assert.equal((await c.findOne({ _id: 0 })).v, 1);
  } finally {
    await session.endSession();
  }
});

test('aggregation', async (client) => {
  const c = client.db('node_test').collection('agg');
  await c.drop().catch(() => {});
  await c.insertMany(Array.from({ length: 30 }, (_, i) => ({ _id: i, g: i % 3, v: i })));
  const out = await c.aggregate([
    { $match: { v: { $gte: 3 } } },
    { $group: { _id: '$g', total: { $sum: '$v' } } },
    { $sort: { _id: 1 } },
  ]).toArray();
  assert.deepEqual(out, [{ _id: 0, total: 135 }, { _id: 1, total: 144 }, { _id: 2, total: 153 }]);
  assert.equal((await c.aggregate([{ $sort: { v: -1 } }], { batchSize: 4 }).toArray()).length, 30);
});

test('errors come back as MongoDB errors', async (client) => {
  const db = client.db('node_test');
  const e = await rejects(db.command({ noSuchCommand: 1 }), 59);
  assert.ok(e instanceof MongoServerError);
  await rejects(db.command({ find: 'c', bogus: 1 }), 40415);
});

// rockdoc-serve answers as a one-member replica set: a client that names
// the set and one that connects directly both see its primary, and watch()
// sees an insert.
test('replica set of one, by name and directly', async (client, uri) => {
  for (const [option, topology] of [['replicaSet=rs0', 'ReplicaSetWithPrimary'],
                                    ['directConnection=true', 'Single']]) {
    const other = new MongoClient(`${uri}${uri.includes('?') ? '&' : '?'}${option}`,
                                  { serverSelectionTimeoutMS: 5000 });
    try {
      await other.connect();
      const c = other.db('node_test').collection('rs');
      await c.drop().catch(() => {});
      const stream = c.watch();
      assert.equal(await stream.tryNext(), null);  // opened before the insert
      await c.insertOne({ _id: option });
      const event = await stream.next();
      assert.equal(event.operationType, 'insert');
      assert.deepEqual(event.documentKey, { _id: option });
      await stream.close();
      const description = other.topology.description;
      assert.equal(description.type, topology, option);
      assert.deepEqual([...description.servers.values()].map((s) => s.type), ['RSPrimary'], option);
    } finally {
      await other.close();
    }
  }
});

runTests(tests, process.argv[2]);

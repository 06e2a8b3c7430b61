// The Node.js driver against rockdoc-serve, for the engine branch's items:
// commands MongoDB does not run in a transaction are refused in one (issue
// #33.2); a collection a transaction creates is its own until it commits
// (#33.3).
//
//   node engine_node_test.js URI     (run by run_with_server.py)
//
// Exits 77 (a CTest skip) when the driver is not installed.
'use strict';
const assert = require('node:assert/strict');
const { requireDriver, rejects, runTests } = require('./driver_harness');

requireDriver();  // exits 77 without the driver

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('renameCollection is refused in a transaction', async (client) => {
  const db = client.db('engine_node_test');
  await db.dropCollection('c').catch(() => {});
  await db.dropCollection('d').catch(() => {});
  await db.collection('c').insertOne({ _id: 1 });
  const session = client.startSession();
  try {
    session.startTransaction();
    await db.collection('c').insertOne({ _id: 2 }, { session });
    const e = await rejects(db.collection('c').rename('d', { session }), 263);
    assert.match(e.message, /Cannot run 'renameCollection' in a multi-document transaction\./);
    await rejects(db.command({ count: 'c' }, { session }), 263);
    await session.abortTransaction();
  } finally {
    await session.endSession();
  }
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
  assert.deepEqual(names.filter((n) => n === 'c' || n === 'd'), ['c']);
  assert.deepEqual(await db.collection('c').find().toArray(), [{ _id: 1 }]);
});

async function names(db, ...wanted) {
  const all = await db.listCollections({ name: { $in: wanted } }, { nameOnly: true }).toArray();
  return all.map((c) => c.name).sort();
}

test('a collection created in a transaction is its until commit', async (client) => {
  const db = client.db('engine_node_test');
  for (const n of ['fresh', 'made']) await db.dropCollection(n).catch(() => {});
  const session = client.startSession();
  try {
    session.startTransaction();
    await db.collection('fresh').insertOne({ _id: 1 }, { session });
    await db.command({ create: 'made' }, { session });
    assert.equal(await db.collection('fresh').countDocuments({}, { session }), 1);
    assert.deepEqual(await names(db, 'fresh', 'made'), []);
    await session.abortTransaction();
    assert.deepEqual(await names(db, 'fresh', 'made'), []);
    session.startTransaction();
    await db.collection('fresh').insertOne({ _id: 1 }, { session });
    await db.command({ create: 'made' }, { session });
    await session.commitTransaction();
  } finally {
    await session.endSession();
  }
  assert.deepEqual(await names(db, 'fresh', 'made'), ['fresh', 'made']);
});

test('two transactions creating one collection: one wins', async (client) => {
  const db = client.db('engine_node_test');
  await db.dropCollection('raced').catch(() => {});
  const first = client.startSession();
  const second = client.startSession();
  try {
    first.startTransaction();
    await db.collection('raced').insertOne({ _id: 1 }, { session: first });
    second.startTransaction();
    const e = await rejects(db.collection('raced').insertOne({ _id: 2 }, { session: second }), 112);
    assert.ok(e.hasErrorLabel('TransientTransactionError'), String(e));
    await second.abortTransaction();
    await first.commitTransaction();
    second.startTransaction();
    await db.collection('raced').insertOne({ _id: 2 }, { session: second });
    await second.commitTransaction();
  } finally {
    await first.endSession();
    await second.endSession();
  }
  const ids = (await db.collection('raced').find().toArray()).map((d) => d._id).sort();
  assert.deepEqual(ids, [1, 2]);
});

runTests(tests, process.argv[2]);

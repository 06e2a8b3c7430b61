// The Node.js driver against rockdoc-serve, for find's tailable cursors of
// issue 33 (item 9): a `tailable: true, awaitData: true` find cursor on a
// capped collection gets a document inserted after it opened; min/max with
// a hint, returnKey and showRecordId as the driver sends them.
//
//   node node_findext_test.js URI     (run by run_with_server.py)
//
// Exits 77 (a CTest skip) when the driver is not installed.
'use strict';
const assert = require('node:assert/strict');
const { rejects, runTests } = require('./driver_harness');

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('a tailable awaitData cursor gets a later insert', async (client) => {
  const db = client.db('node_findext');
  await db.collection('tail').drop().catch(() => {});
  const tail = await db.createCollection('tail', { capped: true, size: 100000 });
  await tail.insertOne({ _id: 1 });
  const cursor = tail.find({}, { tailable: true, awaitData: true });
  try {
    assert.deepEqual(await cursor.next(), { _id: 1 });
    // next() sends awaitData getMores until a document comes: the insert
    // below is what ends it.
    const later = cursor.next();
    await tail.insertOne({ _id: 2, x: 'later' });
    assert.deepEqual(await later, { _id: 2, x: 'later' });
    assert.equal(cursor.closed, false);
  } finally {
    await cursor.close();
  }
  // Not capped: MongoDB's BadValue.
  await db.collection('plain').insertOne({ _id: 1 });
  await rejects(db.collection('plain').find({}, { tailable: true }).toArray(), 2);
});

test('min, max, returnKey and showRecordId', async (client) => {
  const c = client.db('node_findext').collection('numbers');
  await c.drop().catch(() => {});
  await c.insertMany([...Array(10).keys()].map((i) => ({ _id: i, a: i })));
  await c.createIndex({ a: 1 });
  assert.deepEqual(await c.find({}, { projection: { _id: 0 } }).hint({ a: 1 })
    .min({ a: 3 }).max({ a: 6 }).toArray(), [{ a: 3 }, { a: 4 }, { a: 5 }]);
  await rejects(c.find({}).min({ a: 3 }).toArray(), 51173);
  assert.deepEqual(await c.find({ a: { $gte: 8 } }, { returnKey: true }).hint({ a: 1 }).toArray(),
                   [{ a: 8 }, { a: 9 }]);
  const [doc] = await c.find({ _id: 1 }, { showRecordId: true }).toArray();
  assert.ok('$recordId' in doc, JSON.stringify(doc));
});

runTests(tests, process.argv[2]);

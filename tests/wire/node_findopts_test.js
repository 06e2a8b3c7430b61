// The Node.js driver against rockdoc-serve, for the options and error
// shapes of issue 33 that drivers rely on: with maxTimeMS on every command
// (as drivers with a client-side timeout send it) an application can
// insert, update, delete, count, list and index (#5); duplicate key errors
// carry keyPattern and keyValue (#7).
//
//   node node_findopts_test.js URI     (run by run_with_server.py)
//
// Exits 77 (a CTest skip) when the driver is not installed.
'use strict';
const assert = require('node:assert/strict');
const { requireDriver, rejects, runTests } = require('./driver_harness');

const { MongoClient, MongoServerError, MongoBulkWriteError } = requireDriver();

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('maxTimeMS on every command', async (_client, uri) => {
  // The driver's maxTimeMS option goes with every command (insert
  // included), as drivers with a client-side timeout send it (this
  // driver's own timeoutMS is deprecated and has no effect).
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000, monitorCommands: true });
  const sent = new Map();  // command name -> its maxTimeMS
  client.on('commandStarted', (ev) => sent.set(ev.commandName, ev.command.maxTimeMS));
  await client.connect();
  try {
    const db = client.db('node_findopts');
    const c = db.collection('timeout');
    await c.drop().catch(() => {});
    const t = { maxTimeMS: 60000 };
    await c.insertOne({ _id: 1, a: 1 }, t);
    await c.insertMany([{ _id: 2, a: 2 }, { _id: 3, a: 3 }], t);
    await c.updateOne({ _id: 1 }, { $set: { b: 1 } }, t);
    const v = await c.findOneAndUpdate({ _id: 2 }, { $set: { b: 2 } },
                                       { ...t, returnDocument: 'after' });
    assert.deepEqual(v, { _id: 2, a: 2, b: 2 });
    await c.deleteOne({ _id: 3 }, t);
    assert.equal(await c.countDocuments({}, t), 2);
    assert.deepEqual((await c.distinct('a', {}, t)).sort(), [1, 2]);
    await c.createIndex({ a: 1 }, t);
    assert.deepEqual((await c.listIndexes(t).toArray()).map((i) => i.name), ['_id_', 'a_1']);
    const names = (await db.listCollections({}, t).toArray()).map((x) => x.name);
    assert.ok(names.includes('timeout'), names);
    assert.deepEqual(await c.find({}, { ...t, projection: { _id: 1 } }).sort({ _id: 1 }).toArray(),
                     [{ _id: 1 }, { _id: 2 }]);
    // The driver did send a limit with each of them.
    for (const name of ['insert', 'update', 'findAndModify', 'delete', 'aggregate', 'distinct',
                        'createIndexes', 'listIndexes', 'listCollections', 'find']) {
      assert.ok(sent.has(name), `${name} not sent`);
      assert.equal(sent.get(name), 60000, `${name} sent without maxTimeMS`);
    }
  } finally {
    await client.close();
  }
});

test('duplicate keys carry keyPattern and keyValue', async (_client, uri) => {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  try {
    const c = client.db('node_findopts').collection('dups');
    await c.drop().catch(() => {});
    await c.createIndex({ email: 1 }, { unique: true });
    await c.insertOne({ _id: 1, email: 'a@x' });
    let e = await rejects(c.insertOne({ _id: 2, email: 'a@x' }), 11000);
    assert.ok(e instanceof MongoServerError);
    assert.deepEqual(e.keyPattern, { email: 1 });
    assert.deepEqual(e.keyValue, { email: 'a@x' });
    assert.equal(e.message, 'E11000 duplicate key error collection: node_findopts.dups ' +
                            'index: email_1 dup key: { email: "a@x" }');
    e = await rejects(c.insertMany([{ _id: 3, email: 'b@x' }, { _id: 1 }]), 11000);
    assert.ok(e instanceof MongoBulkWriteError);
    // (This driver's bulk write errors keep index, code, errmsg and errInfo
    // only: the reply's fields are checked through pymongo.)
    assert.equal(e.writeErrors[0].index, 1);
    e = await rejects(c.findOneAndUpdate({ _id: 3 }, { $set: { email: 'a@x' } }), 11000);
    assert.deepEqual(e.keyPattern, { email: 1 });
    assert.deepEqual(e.keyValue, { email: 'a@x' });
  } finally {
    await client.close();
  }
});

runTests(tests, process.argv[2]);

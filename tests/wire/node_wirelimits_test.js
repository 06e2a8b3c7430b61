// The Node.js driver against rockdoc-serve at the wire's limits and with the
// admin commands drivers' harnesses send (issue #33.6, #33.8): a
// replace/upsert of a document of the largest size, getParameter,
// getCmdLineOpts, listDatabases' admin/config/local, watch() on a
// standalone, and a client with serverApi {version: '1', strict: true}.
//
//   node node_wirelimits_test.js URI     (run by run_with_server.py)
//
// Exits 77 (a CTest skip) when the driver is not installed.
'use strict';
const assert = require('node:assert/strict');
const { requireDriver, rejects, runTests } = require('./driver_harness');

const { MongoClient, BSON } = requireDriver();

const MAX_BSON = 16 * 1024 * 1024;
const tests = [];
const test = (name, fn) => tests.push({ name, fn });

// {_id, pad} of exactly `size` BSON bytes.
function docOfSize(id, size) {
  const d = { _id: id, pad: '' };
  d.pad = 'p'.repeat(size - BSON.calculateObjectSize(d));
  assert.equal(BSON.calculateObjectSize(d), size);
  return d;
}

test('replace and upsert of a maximum-size document', async (client) => {
  // The statement {q, u, upsert} around a document of 16 MiB is larger
  // than 16 MiB: the server takes sequence documents of 16 MiB + 16 KiB.
  const c = client.db('node_wirelimits').collection('big');
  await c.drop().catch(() => {});
  const big = docOfSize(1, MAX_BSON);
  const r = await c.replaceOne({ _id: 1 }, big, { upsert: true });
  assert.equal(r.upsertedId, 1);
  const got = await c.findOne({ _id: 1 });
  assert.equal(BSON.calculateObjectSize(got), MAX_BSON);
});

test('getParameter', async (client) => {
  const admin = client.db('admin');
  const one = await admin.command({ getParameter: 1, localLogicalSessionTimeoutMinutes: 1 });
  assert.equal(one.localLogicalSessionTimeoutMinutes, 30);
  const all = await admin.command({ getParameter: '*' });
  assert.deepEqual(all.featureCompatibilityVersion, { version: '7.0' });
  assert.equal(all.requireApiVersion, false);
  const e = await rejects(admin.command({ getParameter: 1, noSuchParameter: 1 }), 72);
  assert.match(e.message, /no option found to get/);
});

test('getCmdLineOpts', async (client) => {
  const opts = await client.db('admin').command({ getCmdLineOpts: 1 });
  const at = opts.argv.indexOf('--db');
  assert.ok(at > 0, JSON.stringify(opts));
  assert.equal(opts.parsed.storage.dbPath, opts.argv[at + 1]);
  await rejects(client.db('node_wirelimits').command({ getCmdLineOpts: 1 }), 13);
});

test('listDatabases shows admin, config and local', async (client) => {
  const { databases } = await client.db('admin').admin().listDatabases();
  const names = databases.map((d) => d.name);
  for (const name of ['admin', 'config', 'local']) assert.ok(names.includes(name), names);
});

test('watch() sees an insert', async (client) => {
  const coll = client.db('node_wirelimits').collection('watched');
  const stream = coll.watch([], {maxAwaitTimeMS: 1000});
  assert.equal(await stream.tryNext(), null);  // opens the stream: nothing yet
  await coll.insertOne({_id: 'seen'});
  const event = await stream.next();
  assert.equal(event.operationType, 'insert');
  assert.deepEqual(event.documentKey, {_id: 'seen'});
  assert.ok(stream.resumeToken);
  await stream.close();
});

test('serverApi strict', async (_client, uri) => {
  const strict = new MongoClient(uri, {
    serverSelectionTimeoutMS: 5000,
    serverApi: { version: '1', strict: true },
  });
  await strict.connect();
  try {
    const c = strict.db('node_wirelimits').collection('api');
    await c.insertOne({ _id: 1 });
    assert.deepEqual(await c.find({}).toArray(), [{ _id: 1 }]);
    const e = await rejects(c.distinct('_id'), 323);
    assert.match(e.message, /not in API Version 1/);
    await rejects(strict.db('admin').command({ getCmdLineOpts: 1 }), 323);
  } finally {
    await strict.close();
  }
});

runTests(tests, process.argv[2]);

#!/usr/bin/env node
// One test file, two transports (issue 42): every case runs against the
// binding in process (rockdoc's MongoClient over a fresh directory) and
// against the Node.js driver talking to rockdoc-serve (the URI argument),
// asserts what it knows to be true on each, and then asserts that both gave
// the same outcome: the same result values (compared as canonical Extended
// JSON, so a Long is not a number and an Int32 not a Double), or the same
// error class, code, codeName and error labels.
//
//   node transports_test.js mongodb://127.0.0.1:PORT/ APP
//
// APP: the folder the install check installed the package into (CTest
// fixture node_app); the driver is the `mongodb` the package itself
// depends on, so both transports throw the very same classes.
'use strict';
const assert = require('node:assert/strict');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [uri, app] = process.argv.slice(2);
if (!uri || !app) {
  console.error('usage: transports_test.js URI APP');
  process.exit(2);
}
const rockdoc = require(path.join(path.resolve(app), 'node_modules', 'rockdoc'));
const mongodb = require(require.resolve('mongodb', { paths: [path.dirname(require.resolve(
    path.join(path.resolve(app), 'node_modules', 'rockdoc')))] }));
const { EJSON, ObjectId, Decimal128, Long, Binary, Int32, Double, UUID } = mongodb.BSON;
const { MongoServerError, MongoBulkWriteError, MongoInvalidArgumentError } = mongodb;

const cases = [];
const test = (name, fn) => cases.push({ name, fn });

// What a case gave, in a form both transports can be compared in.
function outcome(value) {
  return EJSON.stringify(value === undefined ? null : value, { relaxed: false });
}
function failure(e) {
  return { error: e.constructor.name, code: e.code, codeName: e.codeName,
           labels: e.errorLabels ? [...e.errorLabels].sort() : [] };
}
async function expectError(promise, cls, code) {
  let thrown = null;
  try {
    await promise;
  } catch (e) {
    thrown = e;
  }
  assert.ok(thrown, `expected ${cls.name} ${code}, nothing was thrown`);
  assert.ok(thrown instanceof cls, `expected ${cls.name}, got ${thrown.constructor.name}: ${thrown.message}`);
  if (code !== undefined) assert.equal(thrown.code, code, thrown.message);
  return failure(thrown);
}

test('insertOne and findOne keep the driver\'s BSON types', async (db) => {
  const c = db.collection('types');
  const id = new ObjectId('64b7f0c2a1b2c3d4e5f60718');
  const doc = { _id: id, dec: Decimal128.fromString('12.50'), big: Long.fromString('9007199254740993'),
                small: Long.fromNumber(5), i: 7, d: 1.5, dd: new Double(2), bin: new Binary(Buffer.from([1, 2, 3])),
                uuid: new UUID('0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'),
                when: new Date(Date.UTC(2024, 0, 2)), nested: { a: [1, 'x', null] } };
  const inserted = await c.insertOne(doc);
  assert.deepEqual(inserted, { acknowledged: true, insertedId: id });
  const back = await c.findOne({ _id: id });
  assert.ok(back.dec instanceof Decimal128);
  assert.ok(back.big instanceof Long, 'a Long past 2^53 stays a Long');
  assert.equal(back.small, 5, 'a Long that fits is promoted to a number');
  assert.ok(back.bin instanceof Binary);
  assert.ok(back.when instanceof Date);
  const generated = await c.insertOne({ x: 1 });
  assert.ok(generated.insertedId instanceof ObjectId);
  return back;
});

test('insertMany: ids, then an ordered duplicate', async (db) => {
  const c = db.collection('many');
  const ok = await c.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
  assert.deepEqual(ok, { acknowledged: true, insertedCount: 3, insertedIds: { 0: 1, 1: 2, 2: 3 } });
  let err;
  try {
    await c.insertMany([{ _id: 4 }, { _id: 1 }, { _id: 5 }]);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof MongoBulkWriteError);
  assert.equal(err.code, 11000);
  assert.equal(err.result.insertedCount, 1);
  assert.deepEqual(err.writeErrors.map((w) => [w.index, w.code]), [[1, 11000]]);
  return [failure(err), err.result.insertedCount, err.insertedIds, await c.countDocuments()];
});

test('insertMany unordered goes on past duplicates', async (db) => {
  const c = db.collection('unordered');
  await c.insertOne({ _id: 2 });
  let err;
  try {
    await c.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }, { _id: 2 }], { ordered: false });
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof MongoBulkWriteError);
  assert.deepEqual(err.writeErrors.map((w) => w.index), [1, 3]);
  assert.equal(err.result.insertedCount, 2);
  return [failure(err), err.result.insertedIds, await c.find().sort({ _id: 1 }).toArray()];
});

test('updates, upserts and replaces', async (db) => {
  const c = db.collection('updates');
  await c.insertMany([{ _id: 1, n: 1 }, { _id: 2, n: 2 }, { _id: 3, n: 3 }]);
  const one = await c.updateOne({ _id: 1 }, { $inc: { n: 10 } });
  assert.deepEqual(one, { acknowledged: true, modifiedCount: 1, upsertedId: null, upsertedCount: 0, matchedCount: 1 });
  const many = await c.updateMany({ n: { $lt: 5 } }, { $set: { small: true } });
  assert.equal(many.matchedCount, 2);
  const none = await c.updateOne({ _id: 9 }, { $set: { a: 1 } });
  assert.equal(none.matchedCount, 0);
  const up = await c.updateOne({ _id: 9 }, { $set: { a: 1 } }, { upsert: true });
  assert.equal(up.upsertedId, 9);
  assert.equal(up.upsertedCount, 1);
  const rep = await c.replaceOne({ _id: 2 }, { replaced: true });
  assert.equal(rep.modifiedCount, 1);
  const pipe = await c.updateOne({ _id: 3 }, [{ $set: { m: { $add: ['$n', 1] } } }]);
  assert.equal(pipe.modifiedCount, 1);
  return [one, many, none, up, rep, pipe, await c.find().sort({ _id: 1 }).toArray()];
});

test('update and replace documents are checked as the driver checks them', async (db) => {
  const c = db.collection('checks');
  return [await expectError(c.updateOne({}, { a: 1 }), MongoInvalidArgumentError),
          await expectError(c.replaceOne({}, { $set: { a: 1 } }), MongoInvalidArgumentError)];
});

test('deletes', async (db) => {
  const c = db.collection('deletes');
  await c.insertMany([1, 2, 3, 4].map((i) => ({ _id: i, even: i % 2 === 0 })));
  const one = await c.deleteOne({ even: true });
  assert.deepEqual(one, { acknowledged: true, deletedCount: 1 });
  const many = await c.deleteMany({});
  assert.equal(many.deletedCount, 3);
  return [one, many];
});

test('findOneAnd*: returnDocument, upsert, projection, sort', async (db) => {
  const c = db.collection('fam');
  await c.insertMany([{ _id: 1, n: 1 }, { _id: 2, n: 2 }]);
  const before = await c.findOneAndUpdate({ _id: 1 }, { $inc: { n: 1 } });
  assert.deepEqual(before, { _id: 1, n: 1 });
  const after = await c.findOneAndUpdate({ _id: 1 }, { $inc: { n: 1 } }, { returnDocument: 'after', projection: { n: 1, _id: 0 } });
  assert.deepEqual(after, { n: 3 });
  const upserted = await c.findOneAndUpdate({ _id: 5 }, { $set: { n: 5 } }, { upsert: true, returnDocument: 'after' });
  assert.deepEqual(upserted, { _id: 5, n: 5 });
  const replaced = await c.findOneAndReplace({ _id: 2 }, { r: 1 }, { returnDocument: 'after' });
  assert.deepEqual(replaced, { _id: 2, r: 1 });
  const deleted = await c.findOneAndDelete({}, { sort: { _id: -1 } });
  assert.deepEqual(deleted, { _id: 5, n: 5 });
  const missing = await c.findOneAndDelete({ _id: 42 });
  assert.equal(missing, null);
  const meta = await c.findOneAndUpdate({ _id: 1 }, { $set: { m: 1 } }, { includeResultMetadata: true });
  assert.equal(meta.ok, 1);
  return [before, after, upserted, replaced, deleted, missing, meta.value, meta.lastErrorObject];
});

test('bulkWrite: mixed operations and their counts', async (db) => {
  const c = db.collection('bulk');
  const result = await c.bulkWrite([
    { insertOne: { document: { _id: 1, n: 1 } } },
    { insertOne: { document: { _id: 2, n: 2 } } },
    { updateOne: { filter: { _id: 1 }, update: { $set: { n: 10 } } } },
    { updateMany: { filter: {}, update: { $inc: { n: 1 } } } },
    { updateOne: { filter: { _id: 3 }, update: { $set: { n: 3 } }, upsert: true } },
    { replaceOne: { filter: { _id: 2 }, replacement: { n: 20 } } },
    { deleteOne: { filter: { _id: 1 } } },
    { deleteMany: { filter: { n: { $gt: 100 } } } },
  ]);
  assert.equal(result.insertedCount, 2);
  assert.equal(result.matchedCount, 4);
  assert.equal(result.upsertedCount, 1);
  assert.deepEqual(result.upsertedIds, { 4: 3 });
  assert.equal(result.deletedCount, 1);
  let err;
  try {
    await c.bulkWrite([{ insertOne: { document: { _id: 7 } } }, { insertOne: { document: { _id: 2 } } },
                       { deleteOne: { filter: { _id: 7 } } }], { ordered: true });
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof MongoBulkWriteError);
  return [result.insertedCount, result.matchedCount, result.modifiedCount, result.deletedCount,
          result.upsertedIds, result.insertedIds, failure(err), err.result.insertedCount,
          await c.find().sort({ _id: 1 }).toArray()];
});

test('find: sort, skip, limit, projection, batches, hint, explain', async (db) => {
  const c = db.collection('find');
  await c.insertMany(Array.from({ length: 250 }, (_, i) => ({ _id: i, g: i % 7, v: `v${i}` })));
  await c.createIndex({ g: 1 });
  const page = await c.find({ g: 3 }).sort({ _id: -1 }).skip(2).limit(5).project({ v: 1 }).toArray();
  assert.deepEqual(page.map((d) => d._id), [234, 227, 220, 213, 206]);
  const cursor = c.find({}, { batchSize: 7 });
  let n = 0;
  for await (const doc of cursor) {
    assert.equal(doc._id, n);
    n++;
  }
  assert.equal(n, 250);
  assert.ok(cursor.closed);
  const limited = await c.find({}).batchSize(10).limit(25).toArray();
  assert.equal(limited.length, 25);
  const hinted = c.find({ g: 1 }).hint('g_1');
  assert.equal(await hinted.hasNext(), true);
  const first = await hinted.next();
  await hinted.close();
  const plan = (await c.find({ g: 2 }).explain()).queryPlanner.winningPlan;
  assert.equal(plan.inputStage.indexName, 'g_1');
  const badHint = await expectError(c.find({}).hint('nope').toArray(), MongoServerError, 2);
  const badOp = await expectError(c.find({ a: { $foo: 1 } }).toArray(), MongoServerError, 2);
  const mapped = await c.find({ g: 0 }).limit(3).map((d) => d._id).toArray();
  assert.deepEqual(mapped, [0, 7, 14]);
  return [page, n, limited.length, first, plan.stage, plan.inputStage.stage, badHint, badOp, mapped,
          await c.findOne({ _id: 1000 })];
});

test('countDocuments, estimatedDocumentCount, distinct, aggregate', async (db) => {
  const c = db.collection('agg');
  await c.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, k: `k${i % 4}`, n: i })));
  assert.equal(await c.countDocuments({ n: { $gte: 10 } }), 10);
  assert.equal(await c.countDocuments({}, { skip: 5, limit: 3 }), 3);
  assert.equal(await c.estimatedDocumentCount(), 20);
  assert.deepEqual((await c.distinct('k')).sort(), ['k0', 'k1', 'k2', 'k3']);
  const totals = await c.aggregate([{ $group: { _id: '$k', n: { $sum: '$n' } } }, { $sort: { _id: 1 } }]).toArray();
  assert.deepEqual(totals[0], { _id: 'k0', n: 40 });
  const batches = await c.aggregate([{ $match: {} }], { batchSize: 3 }).toArray();
  assert.equal(batches.length, 20);
  await c.aggregate([{ $match: { n: { $lt: 3 } } }, { $out: 'agg_out' }]).toArray();
  const out = await db.collection('agg_out').countDocuments();
  const bad = await expectError(c.aggregate([{ $nope: 1 }]).toArray(), MongoServerError, 40324);
  return [totals, batches.length, out, bad, await c.countDocuments({ none: 1 })];
});

test('indexes: create, list, unique, drop', async (db) => {
  const c = db.collection('idx');
  assert.equal(await c.createIndex({ a: 1, b: -1 }), 'a_1_b_-1');
  assert.equal(await c.createIndex('s', { unique: true }), 's_1');
  assert.deepEqual(await c.createIndexes([{ key: { t: 1 }, name: 'by_t' }, { key: { u: 1 }, sparse: true }]), ['by_t', 'u_1']);
  const names = (await c.listIndexes().toArray()).map((i) => i.name);
  assert.deepEqual(names, ['_id_', 'a_1_b_-1', 's_1', 'by_t', 'u_1']);
  await c.insertOne({ _id: 1, s: 'x' });
  const dup = await expectError(c.insertOne({ _id: 2, s: 'x' }), MongoServerError, 11000);
  await c.dropIndex('by_t');
  const missing = await expectError(c.dropIndex('by_t'), MongoServerError, 27);
  const conflict = await expectError(c.createIndex({ a: 1 }, { name: 's_1' }), MongoServerError);
  assert.equal(await c.indexExists('s_1'), true);
  return [names, dup, missing, conflict, (await c.indexes()).map((i) => [i.name, i.key, i.unique])];
});

test('sessions: withTransaction commits, abort discards', async (db, client) => {
  const c = db.collection('txn');
  await c.insertOne({ _id: 0 });
  const session = client.startSession();
  try {
    const value = await session.withTransaction(async () => {
      await c.insertOne({ _id: 1 }, { session });
      await c.updateOne({ _id: 0 }, { $set: { touched: true } }, { session });
      return 'done';
    });
    assert.equal(value, 'done');
    session.startTransaction();
    await c.insertOne({ _id: 2 }, { session });
    assert.equal(await c.countDocuments({}, { session }), 3);
    await session.abortTransaction();
    const dup = await expectError(session.withTransaction(async () => {
      await c.insertOne({ _id: 1 }, { session });
    }), MongoServerError, 11000);
    return [value, await c.find().sort({ _id: 1 }).toArray(), dup];
  } finally {
    await session.endSession();
  }
});

test('change streams: an async iterator and an event emitter', async (db) => {
  const c = db.collection('watched');
  await c.insertOne({ _id: 0 });
  const stream = c.watch([{ $match: { operationType: { $in: ['insert', 'update'] } } }],
                         { maxAwaitTimeMS: 100 });
  assert.equal(await stream.tryNext(), null);
  await c.insertOne({ _id: 1, a: 1 });
  await c.updateOne({ _id: 1 }, { $set: { a: 2 } });
  const first = await stream.next();
  const second = await stream.next();
  assert.equal(first.operationType, 'insert');
  assert.ok(stream.resumeToken);
  await stream.close();
  assert.equal(stream.closed, true);
  // Resumed after the last event read, the emitter sees the next write
  // whenever its cursor opens (no race with the insert, no waiting).
  const emitter = c.watch([], { fullDocument: 'updateLookup', maxAwaitTimeMS: 100,
                                resumeAfter: stream.resumeToken });
  const seen = new Promise((resolve, reject) => {
    emitter.on('change', resolve);
    emitter.on('error', reject);
  });
  await c.insertOne({ _id: 2, e: true });
  const change = await seen;
  await emitter.close();
  return [first.operationType, first.documentKey, first.fullDocument, second.operationType,
          second.updateDescription, change.operationType, change.fullDocument];
});

test('database commands and collections', async (db) => {
  await db.createCollection('made');
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((i) => i.name).sort();
  const dupCreate = await expectError(db.createCollection('made'), MongoServerError, 48);
  const ping = await db.command({ ping: 1 });
  const unknown = await expectError(db.command({ noSuchCommand: 1 }), MongoServerError, 59);
  assert.equal(await db.collection('made').drop(), true);
  // (Over the wire a reply also carries $clusterTime and operationTime.)
  return [names, dupCreate, ping.ok, unknown];
});

async function runAll(client, dbPrefix) {
  const results = [];
  for (const { name, fn } of cases) {
    const db = client.db(`${dbPrefix}_${results.length}`);
    await db.dropDatabase();
    let got;
    try {
      got = { ok: outcome(await fn(db, client)) };
    } catch (e) {
      got = { failed: e };
    }
    results.push({ name, got });
  }
  return results;
}

// What only the binding has: its option checks and its lifecycle.
async function bindingOnly(dir) {
  assert.throws(() => new rockdoc.MongoClient('mongodb://localhost/'), mongodb.MongoParseError);
  assert.throws(() => new rockdoc.MongoClient(dir, { poolSize: 3 }), /poolSize is not supported/);
  const client = await new rockdoc.MongoClient(`rockdoc://${dir}`).connect();
  const c = client.db('only').collection('c');
  await assert.rejects(c.insertOne({ a: 1 }, { raw: true }), /raw is not supported/);
  assert.throws(() => c.find({}, { tailable: true }), /tailable is not supported/);
  await assert.rejects(c.updateOne({}, { $set: { a: 1 } }, { retryWrites: true }), /retryWrites is not supported/);
  const session = client.startSession();
  assert.throws(() => session.startTransaction({ readPreference: 'secondary' }),
                /secondary is not supported/);
  await session.endSession();
  // Calls run on the worker pool, never on the loop: while a change
  // stream's getMore waits in the engine, the loop issues an insert and
  // sees it done, and the waiting getMore returns that insert (were the
  // loop blocked, the insert would never be sent and the test would time out).
  const opener = c.watch([], { maxAwaitTimeMS: 10 });
  assert.equal(await opener.tryNext(), null);
  const stream = c.watch([], { maxAwaitTimeMS: 60000, resumeAfter: opener.resumeToken });
  await opener.close();
  const waiting = stream.next();
  await c.insertOne({ _id: 'while-waiting' });
  assert.equal((await waiting).documentKey._id, 'while-waiting');
  await stream.close();
  await c.deleteMany({});
  await Promise.all(Array.from({ length: 200 }, (_, i) => c.insertOne({ _id: i })));
  assert.equal(await c.countDocuments(), 200);
  const open = c.find({}, { batchSize: 2 });
  await open.next();
  await client.close();
  assert.ok(open.closed, 'close() closes the cursors left open');
  // A second client on the same directory while the first is closed: fine;
  // two at once: DBPathInUse, as a second mongod on one dbpath.
  const again = await new rockdoc.MongoClient(dir).connect();
  await assert.rejects(new rockdoc.MongoClient(dir).connect(), (e) => e instanceof MongoServerError && e.code === 98);
  assert.equal(await again.db('only').collection('c').countDocuments(), 200);
  await again.close();
}

async function main() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rockdoc-node-transports-'));
  let failed = 0;
  try {
    const binding = await new rockdoc.MongoClient(path.join(scratch, 'db')).connect();
    const driver = await new mongodb.MongoClient(uri, { serverSelectionTimeoutMS: 10000 }).connect();
    let inProcess;
    let overWire;
    try {
      inProcess = await runAll(binding, 'node_transports');
      overWire = await runAll(driver, 'node_transports');
    } finally {
      await binding.close();
      await driver.close();
    }
    for (let i = 0; i < cases.length; i++) {
      const a = inProcess[i].got;
      const b = overWire[i].got;
      const label = cases[i].name;
      if (a.failed || b.failed) {
        failed++;
        if (a.failed) console.log(`FAIL ${label} (binding): ${a.failed.stack}`);
        if (b.failed) console.log(`FAIL ${label} (driver): ${b.failed.stack}`);
        continue;
      }
      if (a.ok !== b.ok) {
        failed++;
        console.log(`FAIL ${label}: the transports differ\n  binding: ${a.ok}\n  driver:  ${b.ok}`);
        continue;
      }
      console.log(`ok   ${label}`);
    }
    await bindingOnly(path.join(scratch, 'only'));
    console.log('ok   binding only: options refused, calls off the loop, close and reopen');
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  if (failed) {
    console.log(`${failed} of ${cases.length} cases failed`);
    process.exit(1);
  }
  console.log(`all ${cases.length} cases gave the same results both ways`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

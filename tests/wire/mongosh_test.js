// mongosh (npm, pinned in package.json) against rockdoc-serve: the shell's
// own helpers for CRUD, indexes, explain, bulk writes, a cursor across
// several batches, a session with a transaction, aggregation, and the
// replica set of one: rs.status(), rs.conf() and watch().
//
//   mongosh URI --quiet --file mongosh_test.js   (run_with_server.py runs it)
const assert = require('assert');
load(require('path').join(__dirname, 'mongosh_harness.js'));
const t = db.getSiblingDB('mongosh_test');

test('handshake', () => {
  const hello = db.hello();
  assert.strictEqual(hello.isWritablePrimary, true);
  assert.strictEqual(hello.maxWireVersion, 21);
  assert.strictEqual(db.adminCommand({ ping: 1 }).ok, 1);
});

test('crud', () => {
  t.crud.drop();
  assert.strictEqual(t.crud.insertOne({ _id: 1, n: 1 }).insertedId, 1);
  t.crud.insertMany([{ _id: 2, n: 2 }, { _id: 3, n: 3 }]);
  assert.strictEqual(t.crud.countDocuments(), 3);
  same(t.crud.findOne({ _id: 2 }), { _id: 2, n: 2 });
  assert.strictEqual(t.crud.updateOne({ _id: 1 }, { $set: { n: 10 } }).modifiedCount, 1);
  assert.strictEqual(t.crud.countDocuments({ n: { $gt: 2 } }), 2);
  assert.strictEqual(t.crud.deleteOne({ _id: 3 }).deletedCount, 1);
  same(t.crud.find().sort({ _id: 1 }).toArray(), [{ _id: 1, n: 10 }, { _id: 2, n: 2 }]);
  let duplicate = null;
  try {
    t.crud.insertOne({ _id: 1 });
  } catch (e) {
    duplicate = e.code;
  }
  assert.strictEqual(duplicate, 11000);
});

test('indexes and explain', () => {
  t.idx.drop();
  t.idx.insertMany(Array.from({ length: 200 }, (_, i) => ({ _id: i, k: i % 20 })));
  assert.strictEqual(t.idx.createIndex({ k: 1 }), 'k_1');
  same(t.idx.getIndexes().map((i) => i.name).sort(), ['_id_', 'k_1']);
  const plan = t.idx.find({ k: 3 }).explain('executionStats');
  assert.strictEqual(plan.queryPlanner.winningPlan.inputStage.stage, 'IXSCAN');
  assert.strictEqual(plan.executionStats.nReturned, 10);
  // mongosh's own hideIndex / unhideIndex (collMod index.hidden).
  const hidden = t.idx.hideIndex('k_1');
  assert.strictEqual(hidden.hidden_old, false);
  assert.strictEqual(hidden.hidden_new, true);
  assert.strictEqual(t.idx.getIndexes().find((i) => i.name === 'k_1').hidden, true);
  assert.strictEqual(t.idx.find({ k: 3 }).explain().queryPlanner.winningPlan.stage, 'COLLSCAN');
  assert.strictEqual(t.idx.unhideIndex({ k: 1 }).hidden_new, false);
  assert.strictEqual(t.idx.getIndexes().find((i) => i.name === 'k_1').hidden, undefined);
  assert.strictEqual(t.idx.find({ k: 3 }).explain().queryPlanner.winningPlan.inputStage.stage, 'IXSCAN');
  // A hashed index, and mongosh's own convertShardKeyToHashed (an
  // aggregate with $toHashedIndexKey): MongoDB's hash of 1.
  assert.strictEqual(t.idx.createIndex({ k: 'hashed' }), 'k_hashed');
  assert.strictEqual(t.idx.find({ k: 3 }).hint('k_hashed').toArray().length, 10);
  assert.strictEqual(String(convertShardKeyToHashed(1)), '5902408780260971510');
  t.idx.dropIndex('k_hashed');
});

test('bulk writes', () => {
  t.bulk.drop();
  const r = t.bulk.bulkWrite([
    { insertOne: { document: { _id: 1 } } },
    { updateOne: { filter: { _id: 1 }, update: { $set: { a: 1 } } } },
    { deleteOne: { filter: { _id: 1 } } },
    { insertOne: { document: { _id: 2 } } },
  ]);
  assert.strictEqual(r.insertedCount, 2);
  assert.strictEqual(r.modifiedCount, 1);
  assert.strictEqual(r.deletedCount, 1);
  const legacy = t.bulk.initializeUnorderedBulkOp();
  for (let i = 10; i < 20; i++) legacy.insert({ _id: i });
  assert.strictEqual(legacy.execute().insertedCount, 10);
});

test('cursor across batches', () => {
  t.cursor.drop();
  t.cursor.insertMany(Array.from({ length: 500 }, (_, i) => ({ _id: i })));
  const ids = t.cursor.find().sort({ _id: 1 }).batchSize(32).toArray().map((d) => d._id);
  assert.strictEqual(ids.length, 500);
  assert.strictEqual(ids[499], 499);
});

test('session and transaction', () => {
  t.txn.drop();
  t.txn.insertOne({ _id: 0 });
  const session = db.getMongo().startSession();
  const c = session.getDatabase('mongosh_test').txn;
  session.startTransaction();
  c.insertOne({ _id: 1 });
  assert.strictEqual(t.txn.countDocuments(), 1);
  session.commitTransaction();
  assert.strictEqual(t.txn.countDocuments(), 2);
  session.startTransaction();
  c.insertOne({ _id: 2 });
  session.abortTransaction();
  assert.strictEqual(t.txn.countDocuments(), 2);
  session.endSession();
});

test('aggregation', () => {
  t.agg.drop();
  t.agg.insertMany(Array.from({ length: 30 }, (_, i) => ({ g: i % 3, v: i })));
  const out = t.agg.aggregate([{ $group: { _id: '$g', total: { $sum: '$v' } } }, { $sort: { _id: 1 } }]).toArray();
  same(out, [{ _id: 0, total: 135 }, { _id: 1, total: 145 }, { _id: 2, total: 155 }]);
});

// rockdoc-serve answers as a one-member replica set (README.md, "rockdoc
// serve"): the shell's rs helpers, and a change stream through its watch().
test('replica set of one', () => {
  const hello = db.hello();
  assert.strictEqual(hello.setName, 'rs0');
  assert.strictEqual(hello.primary, hello.me);
  const status = rs.status();
  assert.strictEqual(status.ok, 1);
  assert.strictEqual(status.set, 'rs0');
  assert.strictEqual(status.members.length, 1);
  assert.strictEqual(status.members[0].stateStr, 'PRIMARY');
  assert.strictEqual(status.members[0].name, hello.me);
  assert.strictEqual(rs.conf().members[0].host, hello.me);
  t.watched.drop();
  const stream = t.watched.watch();
  assert.strictEqual(stream.tryNext(), null);  // opened before the insert
  t.watched.insertOne({ _id: 7, seen: true });
  stream.disableBlockWarnings();  // next() is meant to wait here
  const event = stream.next();  // waits for the event (awaitData)
  assert.strictEqual(event.operationType, 'insert');
  same(event.fullDocument, { _id: 7, seen: true });
  same(event.ns, { db: 'mongosh_test', coll: 'watched' });
  stream.close();
});

finish();

// The Node.js driver against rockdoc-serve with collations (issue 39):
// FindCursor.collation() (what mongoose's Query.collation() sends), the
// collation option of countDocuments, distinct, updates, deletes and
// findOneAndUpdate, createIndex with a collation (a unique index at strength
// 2 refuses case variants), createCollection's default collation, and an
// invalid collation's error code. When mongoose is installed beside the
// driver, its Query.collation() runs too.
//
//   node node_collation_test.js URI     (run by run_with_server.py)
//
// Exits 77 (a CTest skip) when the driver is not installed.
'use strict';
const assert = require('node:assert/strict');
const { requireDriver, rejects, runTests } = require('./driver_harness');

requireDriver();

const tests = [];
const test = (name, fn) => tests.push({ name, fn });
const ci = { locale: 'en', strength: 2 };

test('find, count, distinct, update, delete with a collation', async (client) => {
  const c = client.db('node_collation').collection('names');
  await c.drop().catch(() => {});
  await c.insertMany([{ _id: 1, s: 'Alice' }, { _id: 2, s: 'alice' }, { _id: 3, s: 'Émile' },
                      { _id: 4, s: 'bob' }]);
  assert.deepEqual((await c.find({ s: 'ALICE' }).collation(ci).sort({ _id: 1 }).toArray())
                       .map((d) => d._id), [1, 2]);
  assert.deepEqual((await c.find({}).collation({ locale: 'en' }).sort({ s: 1, _id: 1 }).toArray())
                       .map((d) => d.s), ['alice', 'Alice', 'bob', 'Émile']);
  assert.equal(await c.countDocuments({ s: 'emile' }, { collation: { locale: 'fr', strength: 1 } }), 1);
  assert.equal((await c.distinct('s', {}, { collation: ci })).length, 3);
  assert.equal((await c.updateMany({ s: 'ALICE' }, { $set: { k: 1 } }, { collation: ci })).modifiedCount, 2);
  const v = await c.findOneAndUpdate({ s: 'BOB' }, { $set: { k: 2 } },
                                     { collation: ci, returnDocument: 'after' });
  assert.equal(v.k, 2);
  assert.equal((await c.deleteMany({ s: 'ALICE' }, { collation: ci })).deletedCount, 2);
  await rejects(c.find({}).collation({ locale: 'en', strength: 7 }).toArray(), 9);
  await rejects(c.find({}).collation({ locale: 'nowhere' }).toArray(), 2);
});

test('a unique index at strength 2 and a collection default', async (client) => {
  const db = client.db('node_collation');
  const users = db.collection('users');
  await users.drop().catch(() => {});
  await users.createIndex({ user: 1 }, { unique: true, collation: ci });
  await users.insertOne({ user: 'Alice' });
  const e = await rejects(users.insertOne({ user: 'alice' }), 11000);
  assert.match(e.message, /collation: \{ locale: "en"/);
  const spec = (await users.indexes()).find((i) => i.name === 'user_1');
  assert.equal(spec.collation.strength, 2);
  assert.equal(spec.collation.caseFirst, 'off');
  await db.collection('fr').drop().catch(() => {});
  await db.createCollection('fr', { collation: { locale: 'fr', strength: 1 } });
  await db.collection('fr').insertOne({ s: 'élan' });
  assert.equal(await db.collection('fr').countDocuments({ s: 'ELAN' }), 1);
  const info = (await db.listCollections({ name: 'fr' }).toArray())[0];
  assert.equal(info.options.collation.locale, 'fr');
});

test("mongoose's Query.collation()", async (_client, uri) => {
  let mongoose;
  try {
    mongoose = require('mongoose');
  } catch (e) {
    console.log('(mongoose is not installed in tests/wire/node_modules: this case checks nothing)');
    return;
  }
  const conn = await mongoose.createConnection(uri.replace(/\/?(\?|$)/, '/node_collation_mg$1'))
                   .asPromise();
  try {
    const User = conn.model('User', new mongoose.Schema({ name: String }));
    await User.deleteMany({});
    await User.create([{ name: 'Zoë' }, { name: 'alice' }, { name: 'Alice' }]);
    const found = await User.find({ name: 'ALICE' }).collation(ci).lean();
    assert.equal(found.length, 2);
  } finally {
    await conn.close();
  }
});

runTests(tests, process.argv[2]);

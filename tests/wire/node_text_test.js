// The Node.js driver and mongoose against rockdoc-serve with text indexes
// (issue 39): createIndex({subject: 'text'}), $text with {$meta: 'textScore'}
// in the projection and the sort, and a mongoose schema declaring a
// `text: true` field (its index built by syncIndexes) searched with $text.
//
//   node node_text_test.js URI     (run by run_with_server.py)
//
// Exits 77 (a CTest skip) when the driver is not installed.
'use strict';
const assert = require('node:assert/strict');
const { requireDriver, rejects, runTests } = require('./driver_harness');

requireDriver();

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

test('$text with textScore through the driver', async (client) => {
  const c = client.db('node_text').collection('articles');
  await c.drop().catch(() => {});
  await c.insertMany([{ _id: 1, subject: 'coffee' }, { _id: 2, subject: 'Coffee Shopping' },
                      { _id: 3, subject: 'Baking a cake' }, { _id: 7, subject: 'coffee and cream' }]);
  assert.equal(await c.createIndex({ subject: 'text' }), 'subject_text');
  const got = await c.find({ $text: { $search: 'coffee cake' } },
                           { projection: { score: { $meta: 'textScore' } } })
                  .sort({ score: { $meta: 'textScore' } }).toArray();
  assert.deepEqual(got.map((d) => d.score), [1, 0.75, 0.75, 0.75]);
  assert.equal(got[0]._id, 1);
  await rejects(c.createIndex({ other: 'text' }), 85);
});

test('a mongoose schema with a text: true field', async (_client, uri) => {
  const mongoose = require('mongoose');
  const conn = await mongoose.createConnection(uri.replace(/\/?(\?|$)/, '/node_text_mg$1'))
                   .asPromise();
  try {
    const Post = conn.model('Post', new mongoose.Schema({ title: { type: String, text: true },
                                                          views: Number }));
    await Post.deleteMany({});
    await Post.syncIndexes();
    const indexes = await Post.collection.indexes();
    const text = indexes.find((i) => i.key._fts === 'text');
    assert.ok(text, JSON.stringify(indexes));
    assert.deepEqual(text.weights, { title: 1 });
    await Post.create([{ title: 'Coffee beans', views: 1 }, { title: 'Tea leaves', views: 2 },
                       { title: 'coffee coffee tea', views: 3 }]);
    const found = await Post.find({ $text: { $search: 'coffee' } },
                                  { score: { $meta: 'textScore' } })
                      .sort({ score: { $meta: 'textScore' } }).lean();
    assert.deepEqual(found.map((d) => d.views), [3, 1]);
    assert.ok(found[0].score > found[1].score);
  } finally {
    await conn.close();
  }
});

runTests(tests, process.argv[2]);

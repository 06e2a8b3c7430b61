// The Node.js driver against rockdoc-serve with vector search (issue 40):
// Collection.createSearchIndex (createSearchIndexes), listSearchIndexes
// ($listSearchIndexes), updateSearchIndex, dropSearchIndex, and
// $vectorSearch with a filter and {$meta: "vectorSearchScore"}, checked
// against a brute force computed here.
//
//   node node_vector_search_test.js URI     (run by run_with_server.py)
//
// Exits 77 (a CTest skip) when the driver is not installed.
'use strict';
const assert = require('node:assert/strict');
const { requireDriver, rejects, runTests } = require('./driver_harness');

requireDriver();

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

// A small deterministic generator (no Math.random: reproducible).
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 * 2 - 1;
  };
}

test('search indexes and $vectorSearch through the driver', async (client) => {
  const c = client.db('node_vector').collection('items');
  await c.drop().catch(() => {});
  const next = rng(7);
  const docs = [];
  for (let i = 0; i < 500; i++) {
    docs.push({ _id: i, v: [next(), next(), next(), next()].map((x) => Math.fround(x)), k: i % 5 });
  }
  await c.insertMany(docs);
  const name = await c.createSearchIndex({
    name: 'vec',
    type: 'vectorSearch',
    definition: { fields: [{ type: 'vector', path: 'v', numDimensions: 4, similarity: 'euclidean' },
                           { type: 'filter', path: 'k' }] },
  });
  assert.equal(name, 'vec');
  const listed = await c.listSearchIndexes().toArray();
  assert.deepEqual(listed.map((i) => [i.name, i.type, i.queryable]), [['vec', 'vectorSearch', true]]);
  assert.equal((await c.listIndexes().toArray()).length, 1);  // search indexes apart

  const q = [0.1, -0.2, 0.3, -0.4];
  const dist = (v) => Math.sqrt(v.reduce((s, x, j) => s + (x - q[j]) ** 2, 0));
  const truth = docs.filter((d) => d.k === 2).sort((a, b) => dist(a.v) - dist(b.v)).slice(0, 5);
  for (const exact of [false, true]) {
    const stage = { index: 'vec', path: 'v', queryVector: q, limit: 5, filter: { k: 2 } };
    if (exact) stage.exact = true; else stage.numCandidates = 100;
    const got = await c.aggregate([{ $vectorSearch: stage },
                                   { $project: { k: 1, score: { $meta: 'vectorSearchScore' } } }]).toArray();
    assert.ok(got.every((d) => d.k === 2), 'outside the filter');
    assert.deepEqual(got.map((d) => d._id), truth.map((d) => d._id));
    got.forEach((d, i) => assert.ok(Math.abs(d.score - 1 / (1 + dist(truth[i].v))) < 1e-5));
  }
  // Misuse: numCandidates below limit is BadValue; not first is 40602.
  await rejects(c.aggregate([{ $vectorSearch: { index: 'vec', path: 'v', queryVector: q,
                                                numCandidates: 1, limit: 5 } }]).toArray(), 2);
  await rejects(c.aggregate([{ $match: {} }, { $vectorSearch: { index: 'vec', path: 'v',
    queryVector: q, numCandidates: 10, limit: 5 } }]).toArray(), 40602);

  await c.updateSearchIndex('vec', { fields: [{ type: 'vector', path: 'v', numDimensions: 4,
                                                similarity: 'cosine' }] });
  const updated = await c.listSearchIndexes('vec').toArray();
  assert.equal(updated[0].latestDefinition.fields[0].similarity, 'cosine');
  await c.dropSearchIndex('vec');
  assert.equal((await c.listSearchIndexes().toArray()).length, 0);
});

runTests(tests, process.argv[2]);

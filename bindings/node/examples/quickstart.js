#!/usr/bin/env node
// rockdoc from Node.js: inserts, indexes, queries and aggregates in process,
// with the MongoDB Node.js driver's API, then exits 0 (the install check,
// node_binding_install, runs it in a fresh folder after
// `npm install ./bindings/node`).
//
//     node quickstart.js [DIR]      # default: an in-memory database
//
// A DIR must not exist yet (or be empty): the example makes its database
// there and leaves it; it never deletes a directory it is given.
'use strict';
const assert = require('assert');
const fs = require('fs');
const { MongoClient, MongoServerError } = require('rockdoc');

async function main(dir) {
  const client = await new MongoClient(dir).connect();
  try {
    const orders = client.db('shop').collection('orders');
    await orders.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i, sku: `sku${i % 3}`, qty: i })));
    assert.strictEqual(await orders.createIndex('sku'), 'sku_1');
    await orders.createIndex({ sku: 1, qty: -1 }, { name: 'sku_qty' });
    const big = await orders.find({ sku: 'sku1' }, { projection: { _id: 0, qty: 1 } })
        .sort({ qty: -1 }).limit(2).toArray();
    assert.deepStrictEqual(big, [{ qty: 7 }, { qty: 4 }]);
    const plan = (await orders.find({ sku: 'sku1' }).explain()).queryPlanner.winningPlan;
    const totals = await orders.aggregate([{ $group: { _id: '$sku', qty: { $sum: '$qty' } } },
                                           { $sort: { _id: 1 } }]).toArray();
    assert.deepStrictEqual(totals, [{ _id: 'sku0', qty: 18 }, { _id: 'sku1', qty: 12 },
                                    { _id: 'sku2', qty: 15 }]);
    await assert.rejects(orders.insertOne({ _id: 1 }),
                         (e) => e instanceof MongoServerError && e.code === 11000);
    console.log('indexed plan:', plan.stage, plan.inputStage && plan.inputStage.indexName);
    console.log('totals:', JSON.stringify(totals));
  } finally {
    await client.close();
  }
  console.log('quickstart: all steps passed');
}

const dir = process.argv[2] || ':memory:';
if (dir !== ':memory:' && fs.existsSync(dir) && fs.readdirSync(dir).length) {
  console.error(`quickstart: ${dir} is not empty; give a new directory (this example never ` +
                'deletes a directory it is given)');
  process.exit(1);
}
main(dir).catch((e) => {
  console.error(e);
  process.exit(1);
});

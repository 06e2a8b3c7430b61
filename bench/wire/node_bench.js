// rockdoc-serve through the official Node.js driver: findOne by _id over
// 10,000 documents and insertMany in batches of 1,000, each for a fixed
// time with 1, 4 and 16 connections (a pool of that size, as many
// concurrent operations). Prints operations (documents) per second; the
// embedded API's figures for the same work are bench/wire_bench.cc's.
//
//   python3 tests/wire/run_with_server.py --server build/tools/rockdoc-serve -- \
//     node bench/wire/node_bench.js {uri} [seconds]
'use strict';
const path = require('node:path');
const { MongoClient } = require(path.join(__dirname, '../../tests/wire/node_modules/mongodb'));

const seconds = Number(process.argv[3] || 3);
const kDocs = 10000;
const pad = 'x'.repeat(100);

async function timed(concurrency, op) {
  const until = Date.now() + seconds * 1000;
  let count = 0;
  const worker = async (w) => {
    for (let i = w; Date.now() < until; i += concurrency) {
      const n = await op(i);  // not `count += await ...`: that reads count before the await
      count += n;
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  return count / elapsed;
}

(async () => {
  const uri = process.argv[2];
  const setup = new MongoClient(uri);
  const seed = setup.db('bench').collection('find');
  await seed.drop().catch(() => {});
  for (let i = 0; i < kDocs; i += 1000) {
    await seed.insertMany(Array.from({ length: 1000 }, (_, j) => ({ _id: i + j, v: pad })));
  }
  await setup.close();
  // All the reads first: the inserts leave RocksDB flushing and compacting
  // behind them, which would slow the reads that followed.
  for (const phase of ['findOne_by_id', 'insertMany_docs']) {
    for (const c of [1, 4, 16]) {
      const client = new MongoClient(uri, { maxPoolSize: c });
      await client.connect();
      let rate;
      if (phase === 'findOne_by_id') {
        const find = client.db('bench').collection('find');
        rate = await timed(c, async (i) => ((await find.findOne({ _id: (i * 7919) % kDocs })) ? 1 : 0));
      } else {
        const ins = client.db('bench').collection(`insert${c}`);
        let next = 0;
        rate = await timed(c, async () => {
          const base = (next += 1000);
          await ins.insertMany(Array.from({ length: 1000 }, (_, j) => ({ _id: base + j, v: pad })));
          return 1000;
        });
      }
      console.log(`${phase} connections=${c}: ${rate.toFixed(0)}/s`);
      await client.close();
    }
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});

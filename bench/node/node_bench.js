#!/usr/bin/env node
// rockdoc from Node.js beside what a Node.js program would use instead, all
// in one run, reported as ratios to the binding (issue 42):
//   - the binding (`rockdoc`, in process);
//   - the Node.js driver (`mongodb`) to rockdoc-serve on loopback;
//   - NeDB (`@seald-io/nedb`, file-backed, its whole data set in memory);
//   - better-sqlite3 12 (a JSON text column with an expression index on
//     the queried field, WAL, synchronous=NORMAL).
// Each does the same: insertMany of DOCS documents in batches of 1000,
// findOne by _id LOOKUPS times, and an indexed find (about 10 documents
// each) LOOKUPS / 10 times. Nothing here is a test: no figure is asserted.
//
//   node bench/node/node_bench.js --serve build/tools/rockdoc-serve \
//        --app build/tests/node_app [--docs 20000] [--lookups 5000]
//
// APP: a folder where `rockdoc` is installed (node_binding_install's); the
// other packages come from tests/wire/node_modules (scripts/install-deps.sh).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}
const serve = arg('serve');
const app = arg('app');
const DOCS = Number(arg('docs', 20000));
const LOOKUPS = Number(arg('lookups', 5000));
if (!serve || !app) {
  console.error('usage: node_bench.js --serve rockdoc-serve --app APP [--docs N] [--lookups N]');
  process.exit(2);
}
const wire = path.join(__dirname, '..', '..', 'tests', 'wire', 'node_modules');
const rockdoc = require(path.join(path.resolve(app), 'node_modules', 'rockdoc'));
const mongodb = require(path.join(wire, 'mongodb'));
const optional = (name) => {
  try {
    return require(path.join(wire, name));
  } catch (e) {
    console.log(`(${name} is not installed or not built: ${e.message.split('\n')[0]}; skipped)`);
    return null;
  }
};
const Nedb = optional('@seald-io/nedb');
const Sqlite = optional('better-sqlite3');

// A deterministic stream of numbers (no Math.random: the same run twice).
function lcg(seed) {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
}
const random = lcg(7);
const documents = () => Array.from({ length: DOCS }, (_, i) => ({
  _id: i, key: i % Math.max(1, Math.floor(DOCS / 10)), name: `item-${i}`, qty: i % 97,
  tags: ['a', 'b', String(i % 13)], nested: { x: i * 2, y: `y${i % 31}` } }));
const ids = Array.from({ length: LOOKUPS }, () => Math.floor(random() * DOCS));
const keys = Array.from({ length: Math.max(1, Math.floor(LOOKUPS / 10)) },
                        () => Math.floor(random() * Math.max(1, Math.floor(DOCS / 10))));

async function timed(fn, count) {
  const start = process.hrtime.bigint();
  await fn();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return count / seconds;
}

// A collection with the driver's API (the binding's or the driver's).
async function driverLike(collection) {
  await collection.createIndex({ key: 1 });
  const rates = {};
  const docs = documents();
  rates.insertMany = await timed(async () => {
    for (let i = 0; i < docs.length; i += 1000) await collection.insertMany(docs.slice(i, i + 1000));
  }, DOCS);
  rates['findOne by _id'] = await timed(async () => {
    for (const id of ids) if (!(await collection.findOne({ _id: id }))) throw new Error('missing');
  }, ids.length);
  rates['indexed find'] = await timed(async () => {
    for (const key of keys) if ((await collection.find({ key }).toArray()).length === 0) throw new Error('none');
  }, keys.length);
  return rates;
}

async function nedb(dir) {
  const db = new Nedb({ filename: path.join(dir, 'nedb.db') });
  await db.loadDatabaseAsync();
  await db.ensureIndexAsync({ fieldName: 'key' });
  const rates = {};
  const docs = documents();
  rates.insertMany = await timed(async () => {
    for (let i = 0; i < docs.length; i += 1000) await db.insertAsync(docs.slice(i, i + 1000));
  }, DOCS);
  rates['findOne by _id'] = await timed(async () => {
    for (const id of ids) if (!(await db.findOneAsync({ _id: id }))) throw new Error('missing');
  }, ids.length);
  rates['indexed find'] = await timed(async () => {
    for (const key of keys) if ((await db.findAsync({ key })).length === 0) throw new Error('none');
  }, keys.length);
  return rates;
}

function sqlite(dir) {
  const db = new Sqlite(path.join(dir, 'bench.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  db.exec("CREATE INDEX docs_key ON docs (json_extract(body, '$.key'))");
  const insert = db.prepare('INSERT INTO docs (id, body) VALUES (?, ?)');
  const insertBatch = db.transaction((batch) => {
    for (const d of batch) insert.run(d._id, JSON.stringify(d));
  });
  const byId = db.prepare('SELECT body FROM docs WHERE id = ?');
  const byKey = db.prepare("SELECT body FROM docs WHERE json_extract(body, '$.key') = ?");
  const rates = {};
  const docs = documents();
  const sync = (fn, count) => timed(async () => fn(), count);
  return (async () => {
    rates.insertMany = await sync(() => {
      for (let i = 0; i < docs.length; i += 1000) insertBatch(docs.slice(i, i + 1000));
    }, DOCS);
    rates['findOne by _id'] = await sync(() => {
      for (const id of ids) if (!JSON.parse(byId.get(id).body)) throw new Error('missing');
    }, ids.length);
    rates['indexed find'] = await sync(() => {
      for (const key of keys) if (byKey.all(key).map((r) => JSON.parse(r.body)).length === 0) throw new Error('none');
    }, keys.length);
    db.close();
    return rates;
  })();
}

function startServer(dbpath) {
  return new Promise((resolve, reject) => {
    const proc = spawn(serve, ['--db', dbpath, '--port', '0', '--cacheSizeGB', '0.25'],
                       { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    proc.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ proc, port: Number(m[1]) });
    });
    proc.on('exit', () => reject(new Error('rockdoc-serve did not start')));
  });
}

async function main() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rockdoc-nodebench-'));
  const results = {};
  try {
    const client = await new rockdoc.MongoClient(path.join(scratch, 'binding'),
                                                 { blockCacheBytes: 256 << 20 }).connect();
    results['rockdoc (in process)'] = await driverLike(client.db('bench').collection('c'));
    await client.close();
    const { proc, port } = await startServer(path.join(scratch, 'serve'));
    try {
      const driver = await new mongodb.MongoClient(`mongodb://127.0.0.1:${port}/`).connect();
      results['driver -> rockdoc-serve'] = await driverLike(driver.db('bench').collection('c'));
      await driver.close();
    } finally {
      proc.kill('SIGTERM');
    }
    if (Nedb) results['@seald-io/nedb'] = await nedb(scratch);
    if (Sqlite) results['better-sqlite3 (JSON + expression index)'] = await sqlite(scratch);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const base = results['rockdoc (in process)'];
  console.log(`node ${process.version}, ${DOCS} documents, ${LOOKUPS} lookups`);
  for (const op of Object.keys(base)) {
    console.log(`\n${op} (per second; ratio to the binding)`);
    for (const [name, rates] of Object.entries(results)) {
      console.log(`  ${name.padEnd(42)} ${rates[op].toFixed(0).padStart(9)}  ${(rates[op] / base[op]).toFixed(2)}x`);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

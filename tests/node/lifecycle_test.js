#!/usr/bin/env node
// Cursors, change streams, sessions and clients left open (at close, to the
// garbage collector, at exit, with a call in flight at process.exit) crash
// nothing, leak no file descriptor, and leave the directory closed: a later
// open of it (DBPathInUse, 98, while a client holds it) succeeds.
//
//   node --expose-gc lifecycle_test.js APP
//
// APP: the folder the install check installed the package into. The exit
// cases run as child processes of this one (`lifecycle_test.js APP child
// MODE DIR`).
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const [app, role, mode, childDir] = process.argv.slice(2);
const rockdoc = require(path.join(path.resolve(app), 'node_modules', 'rockdoc'));
const { MongoClient } = rockdoc;

const fdCount = () => fs.readdirSync('/proc/self/fd').length;

// Opens `dir` and leaves one of everything open: a cursor with a
// server-side id, a session inside a transaction, an iterated change
// stream. Returns the client.
async function leaveOpen(dir) {
  const client = await new MongoClient(dir).connect();
  const c = client.db('life').collection('c');
  if ((await c.estimatedDocumentCount()) === 0) {
    await c.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i })));
  }
  const cursor = c.find({}, { batchSize: 2 });
  await cursor.next();
  assert.ok(!cursor.id.isZero(), 'the cursor is open on the server side');
  const session = client.startSession();
  session.startTransaction();
  await c.insertOne({ txn: true }, { session });
  const stream = c.watch([], { maxAwaitTimeMS: 50 });
  await stream.tryNext();
  return { client, c, cursor, session, stream };
}

async function child() {
  const { client, c } = await leaveOpen(childDir);
  if (mode === 'exit-in-flight') {
    // A getMore waiting in the engine (up to 2 s) when the process exits:
    // the addon's cleanup hook waits for it, then closes the directory.
    const waiting = c.watch([], { maxAwaitTimeMS: 2000 });
    waiting.on('change', () => {});
    setImmediate(() => process.exit(0));
  } else if (mode === 'natural-exit') {
    // Nothing closed; the loop runs dry and the process ends.
  } else if (mode === 'uncaught') {
    setImmediate(() => { throw new Error('uncaught on purpose'); });
  }
  void client;
}

async function reopenable(dir) {
  const client = await new MongoClient(dir).connect();
  const n = await client.db('life').collection('c').countDocuments();
  await client.close();
  return n;
}

async function main() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rockdoc-node-life-'));
  try {
    // Closing a client closes what it left open, and releases every fd.
    const dir = path.join(scratch, 'close');
    await (await leaveOpen(dir)).client.close();
    const before = fdCount();
    for (let i = 0; i < 10; i++) {
      const { client, cursor, stream } = await leaveOpen(dir);
      await client.close();
      // As the driver's: a cursor its client's close closed gives the
      // batch it holds, then reads as exhausted; a change stream says it is
      // closed.
      assert.ok(cursor.closed);
      assert.deepEqual(await cursor.next(), { _id: 1 });
      assert.equal(await cursor.next(), null);
      assert.ok(stream.closed);
      await assert.rejects(stream.next(), /ChangeStream is closed/);
    }
    assert.equal(fdCount(), before, 'file descriptors leaked by open and close');
    console.log('ok   close() with cursors, a transaction and a change stream open: no fd leaked');

    // A client dropped without close is closed when collected.
    if (global.gc) {
      const gcDir = path.join(scratch, 'gc');
      await (async () => { await leaveOpen(gcDir); })();
      let reopened = null;
      for (let i = 0; i < 50 && reopened === null; i++) {
        global.gc();
        await new Promise((resolve) => setImmediate(resolve));
        try {
          reopened = await reopenable(gcDir);
        } catch (e) {
          assert.equal(e.code, 98, e.message);  // still held: collect again
        }
      }
      assert.equal(reopened, 50, 'the collected client released its directory');
      console.log('ok   a client left to the collector is closed');
    }

    for (const m of ['natural-exit', 'exit-in-flight', 'uncaught']) {
      const exitDir = path.join(scratch, m);
      const run = spawnSync(process.execPath, [__filename, app, 'child', m, exitDir],
                            { encoding: 'utf8', timeout: 60000 });
      const expectedStatus = m === 'uncaught' ? 1 : 0;
      assert.equal(run.signal, null, `${m}: killed by ${run.signal}\n${run.stderr}`);
      assert.equal(run.status, expectedStatus, `${m}: status ${run.status}\n${run.stderr}`);
      assert.equal(await reopenable(exitDir), 50, `${m}: the directory reopens`);
      // The transaction left open was never committed.
      const client = await new MongoClient(exitDir).connect();
      assert.equal(await client.db('life').collection('c').countDocuments({ txn: true }), 0);
      await client.close();
      console.log(`ok   ${m}: no crash, the directory closed, the open transaction rolled back`);
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  console.log('every client, cursor, session and change stream outlived its client safely');
}

(role === 'child' ? child() : main()).catch((e) => {
  console.error(e);
  process.exit(1);
});

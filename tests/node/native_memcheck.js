#!/usr/bin/env node
// Every path of the addon (src/addon.cc), small enough to run under
// valgrind's memcheck (CTest's node_binding_memcheck): open (ok, refused,
// bad arguments), command (a reply, a failed command with its reply, bytes
// that are not BSON: an error with no reply, a batch), close (twice, with
// calls in flight, then a call after it), a client left to the collector,
// and one left open at exit (the cleanup hook closes it).
//
//   node --expose-gc native_memcheck.js APP
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const app = path.resolve(process.argv[2]);
const native = require(path.join(app, 'node_modules', 'rockdoc', 'build', 'Release', 'rockdoc.node'));
const { BSON } = require(path.join(app, 'node_modules', 'bson'));

async function main() {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rockdoc-node-memcheck-'));
  const dir = path.join(scratch, 'db');
  const n = new native.Native();
  assert.throws(() => n.open(42), TypeError);
  await n.open(dir, { createIfMissing: true, changeLog: true, sync: false, blockCacheBytes: 8 << 20 });
  assert.equal(n.isOpen, true);
  assert.throws(() => n.open(dir), (e) => e.code === 20);
  const second = new native.Native();
  await assert.rejects(second.open(dir), (e) => e.code === 98);
  const missing = new native.Native();
  await assert.rejects(missing.open(path.join(scratch, 'none'), { createIfMissing: false }),
                       (e) => typeof e.code === 'number' && e.code !== 0);

  const reply = BSON.deserialize(await n.command('t', BSON.serialize({ insert: 'c', documents: [{ _id: 1 }] }), true));
  assert.equal(reply.n, 1);
  const failed = BSON.deserialize(await n.command('t', BSON.serialize({ noSuchCommand: 1 }), false));
  assert.equal(failed.ok, 0);
  assert.equal(failed.code, 59);
  await assert.rejects(n.command('t', Buffer.from([5, 0, 0, 0, 1])), (e) => e.code === 22);
  assert.throws(() => n.command('t', 'not a buffer'), TypeError);
  const found = BSON.deserialize(await n.command('t', BSON.serialize({ find: 'c', filter: {} })));
  assert.equal(found.cursor.firstBatch.length, 1);

  const inFlight = Array.from({ length: 20 }, (_, i) =>
    n.command('t', BSON.serialize({ insert: 'c', documents: [{ _id: 100 + i }] }), true));
  const closing = n.close();
  await Promise.allSettled(inFlight);
  await closing;
  await n.close();
  assert.equal(n.isOpen, false);
  await assert.rejects(n.command('t', BSON.serialize({ ping: 1 })), (e) => e.code === 20);

  // Left to the collector, then one left open at exit.
  await (async () => {
    const dropped = new native.Native();
    await dropped.open(path.join(scratch, 'gc'));
  })();
  if (global.gc) global.gc();
  const atExit = new native.Native();
  await atExit.open(path.join(scratch, 'exit'));
  await atExit.command('t', BSON.serialize({ insert: 'c', documents: [{ _id: 1 }] }), true);
  process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
  console.log('every path ran');
  // Pending on purpose at exit: the cleanup hook waits for it, then closes.
  atExit.command('t', BSON.serialize({ find: 'c', filter: {} }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

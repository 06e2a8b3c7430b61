// mongosh (npm, pinned in package.json) against rockdoc-serve: its admin
// helpers over the commands of issue 39: db.serverStatus() with
// connections, opcounters, mem and globalLock; db.currentOp() ($currentOp
// in admin, as mongosh runs it) listing a filtered operation; db.killOp();
// db.listCommands(); getLog, getParameter/setParameter, top and dbHash
// through db.adminCommand / db.runCommand.
//
//   mongosh URI --quiet --file mongosh_admin_test.js   (run_with_server.py runs it)
const assert = require('assert');
load(require('path').join(__dirname, 'mongosh_harness.js'));
const t = db.getSiblingDB('mongosh_admin');

test('serverStatus', () => {
  const before = db.serverStatus().opcounters;
  t.c.drop();
  t.c.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
  t.c.findOne({ _id: 1 });
  const s = db.serverStatus();
  assert.strictEqual(Number(s.opcounters.insert) - Number(before.insert), 3);
  assert.strictEqual(Number(s.opcounters.query) - Number(before.query), 1);
  assert.ok(s.connections.current >= 1 && s.connections.available > 0);
  assert.ok(s.mem.resident > 0 && s.mem.bits === 64);
  assert.ok(s.globalLock.activeClients.total >= 1);
  assert.strictEqual(s.process, 'rockdoc');
});

test('currentOp and killOp', () => {
  // db.currentOp() runs [$currentOp, $match]: its own aggregate is in flight.
  const ops = db.currentOp({ 'command.aggregate': 1 }).inprog;
  assert.ok(ops.length >= 1, JSON.stringify(ops));
  assert.strictEqual(ops[0].ns, 'admin.$cmd.aggregate');
  assert.strictEqual(ops[0].op, 'command');
  assert.ok(ops[0].appName.length > 0);  // mongosh's handshake names it
  assert.strictEqual(db.currentOp({ opid: -1 }).inprog.length, 0);
  assert.strictEqual(db.killOp(123456789).info, 'attempting to kill op');
  // db.currentOp(true) asks for idle connections, which rockdoc does not list.
  let code = null;
  try {
    db.currentOp(true);
  } catch (e) {
    code = e.code;
  }
  assert.strictEqual(code, 238);
});

test('listCommands', () => {
  const text = db.listCommands();
  assert.ok(JSON.stringify(text).length > 0);
  const raw = db.adminCommand({ listCommands: 1 }).commands;
  for (const name of ['currentOp', 'killOp', 'top', 'dbHash', 'serverStatus']) {
    assert.ok(raw[name] !== undefined, name);
  }
});

test('getLog, parameters, top, dbHash', () => {
  const log = db.adminCommand({ getLog: 'global' });
  assert.ok(log.totalLinesWritten >= 1);
  assert.strictEqual(JSON.parse(log.log[0]).s, 'I');
  assert.strictEqual(Number(db.adminCommand({ getParameter: 1, cursorTimeoutMillis: 1 }).cursorTimeoutMillis), 600000);
  assert.strictEqual(Number(db.adminCommand({ setParameter: 1, cursorTimeoutMillis: 600000 }).was), 600000);
  const top = db.adminCommand({ top: 1 }).totals['mongosh_admin.c'];
  assert.ok(top.insert.count >= 1 && top.queries.count >= 1);
  const hash = t.runCommand({ dbHash: 1 });
  assert.match(hash.collections.c, /^[0-9a-f]{32}$/);
  assert.match(hash.md5, /^[0-9a-f]{32}$/);
});

finish();

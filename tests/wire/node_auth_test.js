// The Node.js driver against `rockdoc-serve --auth`: the localhost
// exception creates the first user, SCRAM-SHA-256 (and SCRAM-SHA-1)
// authenticates it (the
// driver's speculative authentication in hello is answered by absence, so
// it runs saslStart/saslContinue), a wrong password fails with
// AuthenticationFailed (18), unauthenticated commands with Unauthorized (13).
//
//   node node_auth_test.js URI     (run_with_server.py --server-arg=--auth)
'use strict';
const assert = require('node:assert/strict');
let mongodb;
try {
  mongodb = require('mongodb');
} catch (e) {
  console.log('SKIP: the mongodb npm package is not installed in tests/wire/node_modules');
  process.exit(77);
}
const { MongoClient } = mongodb;

async function code(promise) {
  try {
    await promise;
  } catch (e) {
    return e.code;
  }
  return 0;
}

(async () => {
  const uri = process.argv[2];
  const withUser = (user, pwd) => uri.replace('mongodb://', `mongodb://${user}:${pwd}@`) +
    '?authSource=admin&serverSelectionTimeoutMS=5000';
  const anonymous = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  await anonymous.connect();
  assert.equal((await anonymous.db('admin').command({ ping: 1 })).ok, 1);
  assert.equal(await code(anonymous.db('t').collection('c').insertOne({ _id: 1 })), 13);
  await anonymous.db('admin').command({ createUser: 'boss', pwd: 'pencil', roles: ['root'] });
  assert.equal(await code(anonymous.db('admin').command(
    { createUser: 'x', pwd: 'y', roles: ['root'] })), 13);
  await anonymous.close();

  const boss = new MongoClient(withUser('boss', 'pencil'));
  await boss.connect();
  await boss.db('t').collection('c').insertOne({ _id: 1 });
  assert.deepEqual(await boss.db('t').collection('c').findOne(), { _id: 1 });
  const users = (await boss.db('admin').command({ usersInfo: 1 })).users;
  assert.deepEqual(users.map((u) => u.user), ['boss']);
  await boss.close();

  // SCRAM-SHA-1, with MongoDB's password digest (the driver's).
  const sha1 = new MongoClient(withUser('boss', 'pencil') + '&authMechanism=SCRAM-SHA-1');
  await sha1.connect();
  assert.deepEqual(await sha1.db('t').collection('c').findOne(), { _id: 1 });
  await sha1.close();

  const wrong = new MongoClient(withUser('boss', 'pencil2'));
  assert.equal(await code(wrong.connect()), 18);
  await wrong.close().catch(() => {});
  console.log(`node driver ${require('mongodb/package.json').version} with --auth: all passed`);
})().catch((e) => {
  console.error(e);
  process.exit(1);
});

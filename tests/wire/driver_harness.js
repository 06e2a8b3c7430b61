// What the Node.js driver tests share (tests/wire/): the driver itself (a
// CTest skip, 77, when it is not installed), `rejects` (a promise must fail
// with a given server code) and `runTests` (each test in turn, "pass"/"FAIL"
// lines, a summary, the exit status).
'use strict';
const assert = require('node:assert/strict');

function requireDriver() {
  try {
    return require('mongodb');
  } catch (e) {
    console.log('SKIP: the mongodb npm package is not installed in tests/wire/node_modules ' +
                '(scripts/install-deps.sh installs it)');
    process.exit(77);
  }
}

async function rejects(promise, code) {
  try {
    await promise;
  } catch (e) {
    assert.equal(e.code, code, String(e));
    return e;
  }
  assert.fail(`expected an error with code ${code}`);
}

// Runs each {name, fn} as fn(client, uri) over one client of `uri`; exits.
function runTests(tests, uri, clientOptions = {}) {
  const { MongoClient } = requireDriver();
  (async () => {
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000, ...clientOptions });
    await client.connect();
    let failed = 0;
    for (const t of tests) {
      try {
        await t.fn(client, uri);
        console.log('pass', t.name);
      } catch (e) {
        failed++;
        console.log('FAIL', t.name);
        console.log(e);
      }
    }
    await client.close();
    const version = require('mongodb/package.json').version;
    console.log(`node driver ${version}: ${tests.length - failed} of ${tests.length} passed`);
    process.exit(failed ? 1 : 0);
  })().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

module.exports = { requireDriver, rejects, runTests };

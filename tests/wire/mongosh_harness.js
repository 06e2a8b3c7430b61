// What the mongosh tests of tests/wire/ share, loaded by each with
// load(__dirname-relative path): test(name, fn) runs one test and prints its
// outcome, same(a, b) compares values from the shell's realm as JSON, and
// finish() prints the summary and exits 1 when a test failed.
const assert = require('assert');
const results = [];
// Values from the shell live in another realm than `assert`'s: compared as JSON.
globalThis.same = (a, b) => assert.strictEqual(JSON.stringify(a), JSON.stringify(b));
globalThis.test = function test(name, fn) {
  try {
    fn();
    results.push(true);
    print('pass', name);
  } catch (e) {
    results.push(false);
    print('FAIL', name, e.stack || e);
  }
};
globalThis.finish = function finish() {
  const passed = results.filter((x) => x).length;
  print(`mongosh ${version()}: ${passed} of ${results.length} passed`);
  if (passed !== results.length) quit(1);
};

#!/usr/bin/env node
// The CRUD unified spec tests (../shared/test-data/crud-unified/) through
// the Node.js binding, with the embedded runner's classification
// (tests/wire/crud_unified_classes.js) and the Node.js driver's runner
// (tests/wire/unified_runner.js): every applicable test must pass in
// process and their number must be the embedded runner's (EXPECTED). So
// the pass set is the applicable set, which is the driver's pass set
// against rockdoc-serve too: wire_node_crud_unified asserts that every one
// passes there, by the same classification. With --driver URI this run
// also checks that itself (the names of the tests passed, both ways).
//
//   node crud_unified.js DATA_DIR EXPECTED APP [--driver URI]
//
// APP: the folder the install check installed the package into.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runSpecTests } = require('../wire/unified_runner.js');
const { crudNotApplicable } = require('../wire/crud_unified_classes.js');

const [dataDir, expectedText, app] = process.argv.slice(2);
const driverAt = process.argv.indexOf('--driver');
const uri = driverAt > 0 ? process.argv[driverAt + 1] : null;
if (!dataDir || !expectedText || !app) {
  console.error('usage: crud_unified.js DATA_DIR EXPECTED APP [--driver URI]');
  process.exit(2);
}
const rockdoc = require(path.join(path.resolve(app), 'node_modules', 'rockdoc'));

async function main() {
  const notApplicable = crudNotApplicable(dataDir);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rockdoc-node-crud-'));
  let binding;
  try {
    // forceServerObjectId, as crud_unified_node.js gives the driver: an
    // explicit _id: null is sent as it is (create-null-ids.json).
    const client = new rockdoc.MongoClient(path.join(scratch, 'db'), { forceServerObjectId: true });
    binding = await runSpecTests(null, dataDir, { client, notApplicable });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const driver = uri ? await runSpecTests(uri, dataDir, { clientOptions: { forceServerObjectId: true },
                                                          notApplicable })
                     : { passed: binding.applicable, passedTests: binding.passedTests };
  const expected = Number(expectedText);
  console.log(`crud-unified through the Node.js binding: ${binding.passed} passed, ` +
              `${binding.failed.length} failed, of ${binding.applicable} applicable; ` +
              (uri ? `through the driver ${driver.passed} passed; ` : '') +
              `the embedded runner passes ${expected}`);
  const inProcess = new Set(binding.passedTests);
  const onlyDriver = driver.passedTests.filter((t) => !inProcess.has(t));
  const onlyBinding = binding.passedTests.filter((t) => !driver.passedTests.includes(t));
  for (const t of onlyDriver) console.log(`only through the driver: ${t}`);
  for (const t of onlyBinding) console.log(`only through the binding: ${t}`);
  const ok = binding.failed.length === 0 && binding.passed === expected &&
             binding.applicable === expected && onlyDriver.length === 0 && onlyBinding.length === 0;
  if (ok) {
    console.log(uri ? 'the same tests pass both ways'
                    : 'every applicable test passes (the set wire_node_crud_unified passes through the driver)');
  }
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

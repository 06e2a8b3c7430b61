#!/usr/bin/env node
// The CRUD unified spec tests (../shared/test-data/crud-unified/) through
// the Node.js binding, with the embedded runner's classification
// (tests/wire/crud_unified_classes.js) and the Node.js driver's runner
// (tests/wire/unified_runner.js): every applicable test must pass in
// process, their number must be the embedded runner's (EXPECTED), and the
// same tests must pass through the driver against rockdoc-serve (URI).
//
//   node crud_unified.js URI DATA_DIR EXPECTED APP
//
// APP: the folder the install check installed the package into.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { runSpecTests } = require('../wire/unified_runner.js');
const { crudNotApplicable } = require('../wire/crud_unified_classes.js');

const [uri, dataDir, expectedText, app] = process.argv.slice(2);
if (!uri || !dataDir || !expectedText || !app) {
  console.error('usage: crud_unified.js URI DATA_DIR EXPECTED APP');
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
  const driver = await runSpecTests(uri, dataDir, { clientOptions: { forceServerObjectId: true },
                                                    notApplicable });
  const expected = Number(expectedText);
  console.log(`crud-unified through the Node.js binding: ${binding.passed} passed, ` +
              `${binding.failed.length} failed; through the driver ${driver.passed} passed; ` +
              `the embedded runner passes ${expected}`);
  const inProcess = new Set(binding.passedTests);
  const onlyDriver = driver.passedTests.filter((t) => !inProcess.has(t));
  const onlyBinding = binding.passedTests.filter((t) => !driver.passedTests.includes(t));
  for (const t of onlyDriver) console.log(`only through the driver: ${t}`);
  for (const t of onlyBinding) console.log(`only through the binding: ${t}`);
  const ok = binding.failed.length === 0 && binding.passed === expected &&
             onlyDriver.length === 0 && onlyBinding.length === 0;
  if (ok) console.log('the same tests pass both ways');
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

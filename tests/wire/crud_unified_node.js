// The CRUD unified spec tests (../shared/test-data/crud-unified/) run
// through the official Node.js driver against rockdoc-serve: the same
// tests, classified by the same INDEX.json, as the embedded runner
// (tests/crud_unified_test.cc), so that the two pass counts compare.
//
//   node crud_unified_node.js URI DATA_DIR EXPECTED_PASSES
//
// Runs every test INDEX.json classes `core` or `optional` (the others are
// server-only matters: events, fail points, old servers), with the
// embedded runner's own skip and run-anyway lists (crud_unified_classes.js), prints one line
// per failure and a summary, and exits 0 only when every one passed and
// their number is EXPECTED_PASSES (the embedded runner's). Exits 77 (a
// CTest skip) when the driver is not installed. The format's rules are
// unified_runner.js's; events are not checked (the embedded runner cannot
// either).

'use strict';
const { runSpecTests, driverVersion } = require('./unified_runner.js');
const { crudNotApplicable } = require('./crud_unified_classes.js');

const [uri, dataDir, expectedText] = process.argv.slice(2);
if (!uri || !dataDir || !expectedText) {
  console.error('usage: crud_unified_node.js URI DATA_DIR EXPECTED_PASSES');
  process.exit(2);
}

async function main() {
  const notApplicable = crudNotApplicable(dataDir);
  // forceServerObjectId: the driver leaves _id to the server, so that an
  // explicit _id: null is sent as it is (the driver would replace it with an
  // ObjectId; create-null-ids.json checks the server keeps it).
  const { passed, failed } = await runSpecTests(uri, dataDir, {
    clientOptions: { forceServerObjectId: true }, notApplicable });
  const expected = Number(expectedText);
  console.log(`crud-unified through the Node.js driver ${driverVersion}: ` +
              `${passed} passed, ${failed.length} failed; the embedded runner passes ${expected}`);
  process.exit(failed.length === 0 && passed === expected ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

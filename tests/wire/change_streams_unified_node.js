// The change streams spec's unified tests (../shared/test-data/
// change-streams-unified/) run through the official Node.js driver against
// rockdoc-serve, which answers as a one-member replica set (README.md,
// "rockdoc serve").
//
//   node change_streams_unified_node.js URI DATA_DIR EXPECTED_PASSES
//
// Each test is applicable or not, with a reason: its runOnRequirements
// (topologies and server versions) against what the server reports
// (hello's setName: "replicaset"; buildInfo's version), or the table
// kNotApplicable below (what the spec needs that rockdoc does not have, or
// refuses by design). Every applicable test runs, with its command events
// checked (unified_runner.js); the script prints one line per failure, the
// counts (applicable, passed, skipped by reason), and exits 0 only when
// every applicable test passed and their number is EXPECTED_PASSES. Exits 77
// (a CTest skip) when the driver is not installed.
'use strict';
const { runSpecTests, unmetRequirement, driverVersion } = require('./unified_runner.js');

const [uri, dataDir, expectedText] = process.argv.slice(2);
if (!uri || !dataDir || !expectedText) {
  console.error('usage: change_streams_unified_node.js URI DATA_DIR EXPECTED_PASSES');
  process.exit(2);
}

// What makes a test not applicable beyond its runOnRequirements: one row
// per reason, with the tests it covers.
const kNotApplicable = [
  {
    reason: 'uses failPoint: MongoDB\'s test-only configureFailPoint command, which rockdoc does not have',
    covers: (t) => t.operations.some((o) => o.name === 'failPoint'),
  },
];

function notApplicable(name, file, t, { version, topology }) {
  const unmet = unmetRequirement(file.runOnRequirements, version, topology) ||
                unmetRequirement(t.runOnRequirements, version, topology);
  if (unmet) return unmet;
  const row = kNotApplicable.find((r) => r.covers(t));
  return row ? row.reason : null;
}

async function main() {
  const { server, applicable, passed, failed, skipped } =
      await runSpecTests(uri, dataDir, { notApplicable, ownClients: true });
  const expected = Number(expectedText);
  console.log(`change-streams-unified through the Node.js driver ${driverVersion} ` +
              `(server ${server.version.join('.')}, ${server.topology}): ${applicable} applicable, ` +
              `${passed} passed, ${failed.length} failed (${expected} expected to pass)`);
  for (const [reason, n] of [...skipped].sort((a, b) => b[1] - a[1])) console.log(`  skipped ${n}: ${reason}`);
  process.exit(failed.length === 0 && passed === expected ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

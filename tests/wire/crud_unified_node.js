// The CRUD unified spec tests (../shared/test-data/crud-unified/) run
// through the official Node.js driver against rockdoc-serve: the same
// tests, classified by the same INDEX.json, as the embedded runner
// (tests/crud_unified_test.cc), so that the two pass counts compare.
//
//   node crud_unified_node.js URI DATA_DIR EXPECTED_PASSES
//
// Runs every test INDEX.json classes `core` or `optional` (the others are
// server-only matters: events, fail points, old servers), with the
// embedded runner's own skip and run-anyway lists (below), prints one line
// per failure and a summary, and exits 0 only when every one passed and
// their number is EXPECTED_PASSES (the embedded runner's). Exits 77 (a
// CTest skip) when the driver is not installed. The format's rules are
// unified_runner.js's; events are not checked (the embedded runner cannot
// either).

'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { EJSON, MongoClient, runTest } = require('./unified_runner.js');

const [uri, dataDir, expectedText] = process.argv.slice(2);
if (!uri || !dataDir || !expectedText) {
  console.error('usage: crud_unified_node.js URI DATA_DIR EXPECTED_PASSES');
  process.exit(2);
}

// The embedded runner's own departures from INDEX.json's classes
// (kSkips and kRunAnyway in tests/crud_unified_test.cc), so that both run
// the same tests.
const kSkips = new Set(['db-aggregate.json\u0000Aggregate with $listLocalSessions']);
const kRunAnyway = new Set(['estimatedDocumentCount.json\u0000estimatedDocumentCount works correctly on views']);

async function main() {
  const index = JSON.parse(fs.readFileSync(path.join(dataDir, 'INDEX.json'), 'utf8'));
  const cls = new Map(index.map((x) => [`${x.file}\u0000${x.test}`, x.cls]));
  // forceServerObjectId: the driver leaves _id to the server, so that an
  // explicit _id: null is sent as it is (the driver would replace it with an
  // ObjectId; create-null-ids.json checks the server keeps it).
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000, forceServerObjectId: true });
  await client.connect();
  let passed = 0;
  const failed = [];
  const files = fs.readdirSync(dataDir).filter((f) => f.endsWith('.json') && f !== 'INDEX.json').sort();
  try {
    for (const name of files) {
      const file = EJSON.parse(fs.readFileSync(path.join(dataDir, name), 'utf8'), { relaxed: true });
      for (const t of file.tests) {
        const key = `${name}\u0000${t.description}`;
        const c = cls.get(key);
        if (kSkips.has(key) || ((c !== 'core' && c !== 'optional') && !kRunAnyway.has(key))) continue;
        try {
          await runTest(client, file, t);
          ++passed;
        } catch (e) {
          failed.push(`${name}: ${t.description}: ${e.message}`);
        }
      }
    }
  } finally {
    await client.close();
  }
  for (const f of failed) console.log('FAIL ' + f);
  const expected = Number(expectedText);
  console.log(`crud-unified through the Node.js driver ${require('mongodb/package.json').version}: ` +
              `${passed} passed, ${failed.length} failed; the embedded runner passes ${expected}`);
  process.exit(failed.length === 0 && passed === expected ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

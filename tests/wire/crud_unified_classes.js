// Which CRUD unified spec tests (../shared/test-data/crud-unified/) the
// embedded runner (tests/crud_unified_test.cc) runs: INDEX.json's `core`
// and `optional` ones, with its own skip and run-anyway lists (kSkips and
// kRunAnyway there). Shared by crud_unified_node.js (the Node.js driver
// against rockdoc-serve) and tests/node/crud_unified.js (the Node.js
// binding), so that their pass sets compare.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const kSkips = new Set(['db-aggregate.json\u0000Aggregate with $listLocalSessions']);
const kRunAnyway = new Set(['estimatedDocumentCount.json\u0000estimatedDocumentCount works correctly on views']);

// notApplicable(fileName, file, test) for runSpecTests: a reason, or null.
function crudNotApplicable(dataDir) {
  const index = JSON.parse(fs.readFileSync(path.join(dataDir, 'INDEX.json'), 'utf8'));
  const cls = new Map(index.map((x) => [`${x.file}\u0000${x.test}`, x.cls]));
  return (name, file, t) => {
    const key = `${name}\u0000${t.description}`;
    if (kSkips.has(key)) return 'the embedded runner skips it';
    const c = cls.get(key);
    if (c !== 'core' && c !== 'optional' && !kRunAnyway.has(key)) return 'a server-only matter (INDEX.json)';
    return null;
  };
}

module.exports = { crudNotApplicable };

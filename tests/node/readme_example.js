#!/usr/bin/env node
// Runs README.md's "rockdoc from Node.js" example (its ```js block) with the
// installed package, in a scratch directory, and checks what it prints; and
// that the section's install commands are the ones the install check uses
// (npm install --install-links).
//
//   node readme_example.js README.md APP     (CTest's node_readme_example)
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const [readme, app] = process.argv.slice(2);
const text = fs.readFileSync(readme, 'utf8');
const start = text.indexOf('## rockdoc from Node.js\n');
assert.ok(start >= 0, 'README.md has no "rockdoc from Node.js" section');
const end = text.indexOf('\n## ', start + 1);
const section = text.slice(start, end < 0 ? undefined : end);
const blocks = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
assert.equal(blocks.length, 1, `expected one js block, found ${blocks.length}`);
const shell = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join('');
for (const flag of ['npm install --install-links', 'ROCKDOC_PREFIX']) {
  assert.ok(shell.includes(flag), `the install commands lack ${flag}`);
}
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rockdoc-node-readme-'));
try {
  fs.writeFileSync(path.join(scratch, 'example.js'), blocks[0]);
  fs.symlinkSync(path.join(path.resolve(app), 'node_modules'), path.join(scratch, 'node_modules'));
  const run = spawnSync(process.execPath, ['example.js'], { cwd: scratch, encoding: 'utf8',
                                                           timeout: 120000 });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  const lines = run.stdout.trim().split('\n');
  assert.deepEqual(lines, ["{ sku: 'ink' }", "{ sku: 'pen' }", '4', '[ { _id: null, units: 14 } ]',
                           'duplicate 11000']);
  assert.ok(fs.statSync(path.join(scratch, 'shop-data')).isDirectory(), 'no database directory');
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
console.log("README's Node.js example ran and printed what it says");

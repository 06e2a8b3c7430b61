#!/usr/bin/env node
// npm's install step: compiles src/addon.cc with node-gyp against the headers
// of the Node.js that runs this (<prefix>/include/node, passed as --nodedir,
// so node-gyp downloads nothing) and the librockdoc scripts/locate.js finds.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');

const here = path.join(__dirname, '..');
execFileSync(process.execPath, [path.join(__dirname, 'locate.js'), 'check'], { stdio: 'inherit' });
const nodedir = process.env.npm_config_nodedir || path.dirname(path.dirname(process.execPath));
if (!fs.existsSync(path.join(nodedir, 'include', 'node', 'node_api.h'))) {
  console.error(`Node.js headers not found in ${nodedir}/include/node: install them (Debian: ` +
                'nodejs with its headers, or libnode-dev) or set npm_config_nodedir');
  process.exit(1);
}
// npm puts its own node-gyp in npm_config_node_gyp for install scripts.
let gyp = process.env.npm_config_node_gyp;
if (!gyp) {
  try {
    gyp = require.resolve('node-gyp/bin/node-gyp.js');
  } catch {
    gyp = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm',
                    'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  }
}
const result = spawnSync(process.execPath, [gyp, 'rebuild', `--nodedir=${nodedir}`],
                         { cwd: here, stdio: 'inherit' });
process.exit(result.status === null ? 1 : result.status);

#!/usr/bin/env node
// The clean-room install check of the Node.js package (issue 42):
//
//   node install_check.js --source bindings/node --include include \
//        --libdir BUILD/src --app BUILD/tests/node_app
//   node install_check.js --source bindings/node --prefix PREFIX --app DIR
//
// (the second: against a `cmake --install build --prefix PREFIX` tree, as
// README.md says to install it, ROCKDOC_PREFIX; tests/installation/
// run_install_test.cmake)
//
// Makes a fresh folder with an empty package.json, runs `npm install
// --install-links <source>` there (the package is packed and copied, as
// from a registry, so no build output lands in the source tree; its install
// script compiles the addon with node-gyp against the installed Node.js's
// headers and this build's librockdoc.so; its dependencies, node-addon-api,
// bson and mongodb, come from npm's cache, --prefer-offline: scripts/
// install-deps.sh's `npm ci` in tests/wire fills it, and only npm's
// registry is asked for what the cache lacks), checks that `rockdoc`
// resolves to the installed copy, and runs the package's quickstart there
// (it inserts, indexes, queries and aggregates, and must exit 0). The folder
// is left for the other Node.js binding tests (CTest fixture node_app).
// Exits 77 (CTest's skip) when npm or Node.js's headers are missing.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');

function arg(name) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? path.resolve(process.argv[i + 1]) : null;
}

const source = arg('source');
const app = arg('app');
const include = arg('include');
const libdir = arg('libdir');
const prefix = arg('prefix');
if (!source || !app || !(prefix || (include && libdir))) {
  console.error('usage: install_check.js --source DIR (--include DIR --libdir DIR | --prefix DIR) ' +
                '--app DIR');
  process.exit(2);
}
const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
const nodedir = path.dirname(path.dirname(process.execPath));
if (npm.status !== 0 || !fs.existsSync(path.join(nodedir, 'include', 'node', 'node_api.h'))) {
  console.log('SKIP: npm or the Node.js headers are missing (scripts/install-deps.sh)');
  process.exit(77);
}

fs.rmSync(app, { recursive: true, force: true });
fs.mkdirSync(app, { recursive: true });
fs.writeFileSync(path.join(app, 'package.json'),
                 JSON.stringify({ name: 'rockdoc-install-check', private: true }));
const env = { ...process.env, npm_config_update_notifier: 'false' };
for (const name of ['ROCKDOC_PREFIX', 'ROCKDOC_INCLUDE_DIR', 'ROCKDOC_LIBRARY_DIR']) delete env[name];
if (prefix) {
  env.ROCKDOC_PREFIX = prefix;
} else {
  env.ROCKDOC_INCLUDE_DIR = include;
  env.ROCKDOC_LIBRARY_DIR = libdir;
}
console.log(`+ npm install --install-links ${source} (in ${app})`);
execFileSync('npm', ['install', '--install-links', '--prefer-offline', '--no-audit', '--no-fund',
                     '--loglevel=error', source],
             { cwd: app, env, stdio: 'inherit', timeout: 300000 });
const where = execFileSync(process.execPath, ['-p', "require.resolve('rockdoc')"],
                           { cwd: app, encoding: 'utf8' }).trim();
if (!where.startsWith(path.join(fs.realpathSync(app), 'node_modules', 'rockdoc') + path.sep)) {
  console.error(`rockdoc resolves to ${where}, not to the installed copy in ${app}`);
  process.exit(1);
}
if (fs.existsSync(path.join(source, 'build', 'Release', 'rockdoc.node')) &&
    fs.lstatSync(path.join(app, 'node_modules', 'rockdoc')).isSymbolicLink()) {
  console.error('the package was linked, not installed');
  process.exit(1);
}
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rockdoc-node-example-'));
try {
  const example = path.join(app, 'quickstart.js');
  fs.copyFileSync(path.join(source, 'examples', 'quickstart.js'), example);
  const run = spawnSync(process.execPath, [example, path.join(scratch, 'shop')],
                        { cwd: app, encoding: 'utf8', timeout: 120000 });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  if (run.status !== 0 || !run.stdout.includes('quickstart: all steps passed')) {
    console.error(`the example failed (status ${run.status})`);
    process.exit(1);
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
console.log(`installed in ${app} and its example passed`);

#!/usr/bin/env node
// The addon under AddressSanitizer and UndefinedBehaviorSanitizer: a copy
// of the installed package (APP's) rebuilt with -fsanitize=address,undefined
// (librockdoc itself as built), then native_memcheck.js, every path of
// src/addon.cc, with the sanitizers' runtimes preloaded (Node.js is not
// built with them). Any report fails the run.
//
//   node asan_check.js APP INCLUDE_DIR LIBRARY_DIR CXX
//
// Exits 77 (CTest's skip) when the compiler has no ASan runtime.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');

const [app, include, libdir, cxx] = process.argv.slice(2).map((a, i) => (i < 3 ? path.resolve(a) : a));
const runtime = (name) => execFileSync(cxx, [`-print-file-name=${name}`], { encoding: 'utf8' }).trim();
const asan = runtime('libasan.so');
const ubsan = runtime('libubsan.so');
if (!path.isAbsolute(asan) || !fs.existsSync(asan) || !fs.existsSync(ubsan)) {
  console.log(`SKIP: ${cxx} has no ASan/UBSan runtime`);
  process.exit(77);
}
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rockdoc-node-asan-'));
try {
  const modules = path.join(scratch, 'node_modules');
  fs.mkdirSync(modules);
  for (const name of fs.readdirSync(path.join(app, 'node_modules'))) {
    if (name === 'rockdoc' || name.startsWith('.')) continue;
    fs.symlinkSync(path.join(app, 'node_modules', name), path.join(modules, name));
  }
  const pkg = path.join(modules, 'rockdoc');
  fs.cpSync(path.join(app, 'node_modules', 'rockdoc'), pkg, {
    recursive: true, filter: (p) => !p.startsWith(path.join(app, 'node_modules', 'rockdoc', 'build')) });
  const flags = '-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined';
  execFileSync(process.execPath, [path.join(pkg, 'scripts', 'install.js')], {
    cwd: pkg, stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, CXX: cxx, CXXFLAGS: flags, LDFLAGS: '-fsanitize=address,undefined',
           ROCKDOC_INCLUDE_DIR: include, ROCKDOC_LIBRARY_DIR: libdir } });
  const run = spawnSync(process.execPath, ['--expose-gc', path.join(__dirname, 'native_memcheck.js'), scratch], {
    encoding: 'utf8', timeout: 120000,
    env: { ...process.env, LD_PRELOAD: `${asan}:${ubsan}`,
           // Node.js's own allocations are not ours to check for leaks.
           ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=0:exitcode=99',
           UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1' } });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  if (run.status !== 0 || /Sanitizer|runtime error/.test(run.stderr)) {
    console.log(`the addon failed under the sanitizers (status ${run.status})`);
    process.exit(1);
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
console.log('every path of the addon ran clean under ASan and UBSan');

#!/usr/bin/env node
// Where librockdoc is, for binding.gyp (`node scripts/locate.js include|libdir`),
// in the order bindings/python/setup.py looks:
//   - ROCKDOC_INCLUDE_DIR and ROCKDOC_LIBRARY_DIR (a build tree: the source's
//     include/ and the directory of librockdoc.so);
//   - ROCKDOC_PREFIX (a `cmake --install build --prefix DIR` tree);
//   - pkg-config's rockdoc.pc (an install in a standard prefix);
//   - /usr/local.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

function hasLibrary(dir) {
  try {
    return fs.readdirSync(dir).some((name) => name.startsWith('librockdoc.so'));
  } catch {
    return false;
  }
}

function locate() {
  const env = process.env;
  if (env.ROCKDOC_INCLUDE_DIR && env.ROCKDOC_LIBRARY_DIR) {
    return { include: env.ROCKDOC_INCLUDE_DIR, libdir: env.ROCKDOC_LIBRARY_DIR };
  }
  if (env.ROCKDOC_PREFIX) {
    const lib = path.join(env.ROCKDOC_PREFIX, 'lib');
    const candidates = [lib, path.join(env.ROCKDOC_PREFIX, 'lib64')];
    try {
      for (const name of fs.readdirSync(lib)) {
        if (name.endsWith('-linux-gnu')) candidates.push(path.join(lib, name));
      }
    } catch {}
    return { include: path.join(env.ROCKDOC_PREFIX, 'include'),
             libdir: candidates.find(hasLibrary) || lib };
  }
  try {
    const flags = execFileSync('pkg-config', ['--cflags-only-I', '--libs-only-L', 'rockdoc'],
                               { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .trim().split(/\s+/);
    const include = flags.find((f) => f.startsWith('-I'));
    const libdir = flags.find((f) => f.startsWith('-L'));
    if (include) return { include: include.slice(2), libdir: libdir ? libdir.slice(2) : '/usr/lib' };
  } catch {}
  return { include: '/usr/local/include', libdir: '/usr/local/lib' };
}

const found = locate();
if (require.main === module) {
  const what = process.argv[2];
  if (what === 'check') {
    if (!fs.existsSync(path.join(found.include, 'rockdoc', 'c.h'))) {
      console.error(`rockdoc/c.h not found in ${found.include}: install rockdoc (cmake --install ` +
                    'build --prefix DIR) and set ROCKDOC_PREFIX=DIR, or set ROCKDOC_INCLUDE_DIR ' +
                    'and ROCKDOC_LIBRARY_DIR');
      process.exit(1);
    }
  } else {
    process.stdout.write(path.resolve(found[what]));
  }
}
module.exports = found;

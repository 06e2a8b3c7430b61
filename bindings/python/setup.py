"""Builds rockdoc._native against an installed librockdoc.

Where the library is, in this order:
  - ROCKDOC_INCLUDE_DIR and ROCKDOC_LIBRARY_DIR (a build tree: the source's
    include/ and the directory of librockdoc.so);
  - ROCKDOC_PREFIX (a `cmake --install build --prefix DIR` tree);
  - pkg-config's rockdoc.pc (an install in a standard prefix);
  - /usr/local.
The extension is linked with an rpath to the library's directory, so the
package imports without LD_LIBRARY_PATH (in a virtualenv too).
"""
import glob
import os
import shlex
import subprocess

from setuptools import Extension, setup


def _pkg_config():
    try:
        out = subprocess.run(["pkg-config", "--cflags-only-I", "--libs-only-L", "rockdoc"],
                             check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    flags = shlex.split(out)
    includes = [f[2:] for f in flags if f.startswith("-I")]
    libdirs = [f[2:] for f in flags if f.startswith("-L")]
    return includes, libdirs


def _locate():
    inc, lib = os.environ.get("ROCKDOC_INCLUDE_DIR"), os.environ.get("ROCKDOC_LIBRARY_DIR")
    if inc and lib:
        return [inc], [lib]
    prefix = os.environ.get("ROCKDOC_PREFIX")
    if prefix:
        libdirs = [d for d in [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64")] +
                   glob.glob(os.path.join(prefix, "lib", "*-linux-gnu"))
                   if glob.glob(os.path.join(d, "librockdoc.so*"))]
        return [os.path.join(prefix, "include")], libdirs
    found = _pkg_config()
    if found and found[0]:
        return found
    return ["/usr/local/include"], ["/usr/local/lib"]


include_dirs, library_dirs = _locate()
if not any(os.path.exists(os.path.join(d, "rockdoc", "c.h")) for d in include_dirs):
    raise SystemExit("rockdoc/c.h not found in %s: install rockdoc (cmake --install build "
                     "--prefix DIR) and set ROCKDOC_PREFIX=DIR, or set ROCKDOC_INCLUDE_DIR and "
                     "ROCKDOC_LIBRARY_DIR" % include_dirs)

setup(ext_modules=[
    Extension("rockdoc._native", ["rockdoc/_native.c"],
              include_dirs=include_dirs, library_dirs=library_dirs,
              runtime_library_dirs=library_dirs, libraries=["rockdoc"],
              extra_compile_args=["-std=c99", "-Wall", "-Wextra"])
])

#!/usr/bin/env python3
"""The clean-room install check of the Python package (issue 42).

    install_check.py --source bindings/python --include include \\
        --libdir BUILD/src --venv BUILD/tests/python_venv
    install_check.py --source bindings/python --prefix PREFIX --venv DIR

(the second: against a `cmake --install build --prefix PREFIX` tree, as
README.md says to install it; tests/installation/run_install_test.cmake)

Makes a fresh virtualenv with the system's site packages (Debian's pymongo,
bson, setuptools and wheel: nothing is fetched), runs
`pip install --no-build-isolation --no-index` on a copy of the package
source (so no build output lands in the source tree), checks that `rockdoc`
now imports from the venv's site-packages, and runs the package's
quickstart example there (it inserts, indexes, queries and aggregates, and
must exit 0). The venv is left for the other Python tests (CTest fixture
python_venv). Exits 77 (CTest's skip) when venv or pip is missing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def run(command, **kwargs):
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True, timeout=300, **kwargs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--include")
    parser.add_argument("--libdir")
    parser.add_argument("--prefix")
    parser.add_argument("--venv", required=True)
    args = parser.parse_args()
    args.venv, args.source = os.path.abspath(args.venv), os.path.abspath(args.source)
    if not args.prefix and not (args.include and args.libdir):
        parser.error("give --prefix, or --include and --libdir")

    # Found, not imported: pip imported before setuptools trips setuptools'
    # distutils check.
    probe = "import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in %r))" % (
        ["venv", "pip", "setuptools", "wheel"],)
    if subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode != 0:
        print("SKIP: python3-venv, python3-pip, python3-setuptools or python3-wheel is not installed "
              "(scripts/install-deps.sh)")
        return 77
    shutil.rmtree(args.venv, ignore_errors=True)
    # --without-pip: the system's pip (python3-pip, a system site package)
    # installs into the venv all the same, and ensurepip would take seconds.
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", args.venv])
    python = os.path.join(args.venv, "bin", "python")
    scratch = tempfile.mkdtemp(prefix="rockdoc-pip-")
    try:
        source = os.path.join(scratch, "python")
        shutil.copytree(args.source, source,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so"))
        # -Werror here, not in setup.py: a warning of ours fails the check,
        # while a user's newer compiler or Python headers never break pip.
        env = dict(os.environ, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
                   CFLAGS=(os.environ.get("CFLAGS", "") + " -Werror").strip())
        for name in ("ROCKDOC_PREFIX", "ROCKDOC_INCLUDE_DIR", "ROCKDOC_LIBRARY_DIR"):
            env.pop(name, None)
        if args.prefix:
            env["ROCKDOC_PREFIX"] = os.path.abspath(args.prefix)
        else:
            env["ROCKDOC_INCLUDE_DIR"] = os.path.abspath(args.include)
            env["ROCKDOC_LIBRARY_DIR"] = os.path.abspath(args.libdir)
        run([python, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--quiet",
             source], env=env, cwd=scratch)
        # Imported from anywhere but the source: the installed package.
        where = subprocess.run([python, "-c", "import rockdoc; print(rockdoc.__file__)"],
                               check=True, capture_output=True, text=True, cwd=scratch,
                               timeout=60).stdout.strip()
        site = os.path.realpath(args.venv)
        assert os.path.realpath(where).startswith(site), (where, site)
        run([python, os.path.join(args.source, "examples", "quickstart.py"),
             os.path.join(scratch, "db")], cwd=scratch)
        # The example made its directory and left it.
        assert os.path.isdir(os.path.join(scratch, "db")), "the example's directory is gone"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("install check: rockdoc installed in a fresh venv and its example passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

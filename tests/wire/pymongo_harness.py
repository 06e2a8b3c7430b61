"""What the pymongo tests of tests/wire/ share: pymongo imported (or CTest's
skip, 77, with a message, when it is not installed), the registry of a
file's tests and the runner that reports them, and the check for a server
error's code.

    from pymongo_harness import pymongo, test, expect_code, run

    @test
    def something():
        expect_code(13, lambda: ...)

    run("pymongo %s" % pymongo.version)   # exits 1 when a test failed
"""
import re
import subprocess
import sys
import traceback

try:
    import pymongo
    from pymongo.errors import OperationFailure
except ImportError:
    print("SKIP: pymongo is not installed (Debian: python3-pymongo; scripts/install-deps.sh)")
    sys.exit(77)

TESTS = []


def start_server(command, log_path, **popen_args):
    """Starts rockdoc-serve (`command`: the program and its arguments, with
    --port 0), its stderr appended to `log_path` (a full pipe would block
    it); returns (process, port) once it prints the loopback address it
    listens on. AssertionError with the log when it does not start."""
    with open(log_path, "a") as log:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True,
                                **popen_args)
    for line in proc.stdout:
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    with open(log_path) as f:
        raise AssertionError("rockdoc-serve did not start: " + "".join(f.readlines()[-20:]))


def test(f):
    TESTS.append(f)
    return f


def expect_code(code, f, *args, **kwargs):
    """Runs f(*args, **kwargs), which must fail with the server error `code`;
    returns the error."""
    try:
        f(*args, **kwargs)
    except OperationFailure as e:
        assert e.code == code, (e.code, e.details)
        return e
    raise AssertionError("expected error code %d" % code)


def run_tests(label=""):
    """run() with pymongo's version and `label` as the summary's label."""
    run("pymongo %s%s" % (pymongo.version, label))


def run(label):
    """Runs the registered tests in order, prints each outcome, exits."""
    failed = 0
    for t in TESTS:
        try:
            t()
            print("pass", t.__name__)
        except Exception:
            failed += 1
            print("FAIL", t.__name__)
            traceback.print_exc()
    print("%s: %d of %d passed" % (label, len(TESTS) - failed, len(TESTS)))
    sys.exit(1 if failed else 0)

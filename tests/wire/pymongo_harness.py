"""What the pymongo tests share (tests/wire/): pymongo itself (a CTest
skip, 77, when it is not installed), `test` (registers a test),
`expect_code` (a call must fail with a given server code) and `run_tests`
(each test in turn, "pass"/"FAIL" lines, a summary, the exit status)."""
import sys
import traceback

try:
    import pymongo
    from pymongo.errors import OperationFailure
except ImportError:
    print("SKIP: pymongo is not installed (Debian: python3-pymongo; scripts/install-deps.sh)")
    sys.exit(77)

TESTS = []


def test(f):
    TESTS.append(f)
    return f


def expect_code(code, f, *args, **kwargs):
    try:
        f(*args, **kwargs)
    except OperationFailure as e:
        assert e.code == code, e.details
        return e
    raise AssertionError("expected an error with code %d" % code)


def run_tests(label=""):
    failed = 0
    for t in TESTS:
        try:
            t()
            print("pass", t.__name__)
        except Exception:
            failed += 1
            print("FAIL", t.__name__)
            traceback.print_exc()
    print("pymongo %s%s: %d of %d passed" % (pymongo.version, label, len(TESTS) - failed,
                                             len(TESTS)))
    sys.exit(1 if failed else 0)

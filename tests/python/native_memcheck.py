#!/usr/bin/env python3
"""The native module alone (rockdoc._native, loaded from the installed
package without the package's Python layer, so without importing pymongo),
through every path of its C code: open and a failed open, commands that
succeed and fail, bytes that are not BSON and a length that lies, a
cursor's getMore and one left open, close while threads run commands,
double close, use after close, and a handle left to the collector. Run
under valgrind's memcheck by CTest (python_binding_memcheck), whose
--error-exitcode fails the test on any invalid read, write or free.

    native_memcheck.py      (the venv's python)
"""
import gc
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import sysconfig
import tempfile
import threading

import bson


def load_native():
    spec = importlib.util.find_spec("rockdoc")
    package_dir = os.path.dirname(spec.origin)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    path = os.path.join(package_dir, "_native" + suffix)
    loader = importlib.machinery.ExtensionFileLoader("rockdoc._native", path)
    module_spec = importlib.util.spec_from_file_location("rockdoc._native", path, loader=loader)
    module = importlib.util.module_from_spec(module_spec)
    loader.exec_module(module)
    return module


def main():
    native = load_native()
    assert native.version()
    scratch = tempfile.mkdtemp(prefix="rockdoc-memcheck-")
    try:
        try:
            native.Handle(os.path.join(scratch, "missing", "x"), create_if_missing=False)
            raise AssertionError("opened a missing directory")
        except native.Error as e:
            assert e.args[0] == 29, e.args  # NonExistentPath
        h = native.Handle(os.path.join(scratch, "db"), change_log=True,
                          block_cache_bytes=8 << 20)

        def run(command, db="app"):
            return bson.decode(h.command(db, bson.encode(command)))

        assert run({"insert": "c", "documents": [{"_id": i} for i in range(20)]})["n"] == 20
        batch = bson.decode(h.command("app", bson.encode(
            {"insert": "c", "documents": [{"_id": "a"}, {"_id": 0}]}), True))
        assert batch["n"] == 1 and batch["writeErrors"][0]["code"] == 11000, batch
        reply = run({"find": "c", "batchSize": 3})
        cursor = reply["cursor"]["id"]
        more = run({"getMore": cursor, "collection": "c", "batchSize": 5})
        assert len(more["cursor"]["nextBatch"]) == 5
        failed = run({"find": "c", "filter": {"$bad": 1}})
        assert failed["ok"] == 0 and failed["code"] == 2, failed
        for bad in (b"", b"\x05\x00\x00", b"\x10\x00\x00\x00\x00", b"\xff" * 64,
                    bson.encode({"a": 1})[:-1]):
            try:
                h.command("app", bad)
                raise AssertionError("accepted %r" % bad)
            except native.Error as e:
                assert e.args[0] == 22, e.args  # InvalidBSON
        try:
            h.command("app", "not bytes")
            raise AssertionError("accepted a str")
        except TypeError:
            pass
        run({"find": "c", "batchSize": 2})  # a cursor left open at close

        def worker():
            try:
                for _ in range(20):
                    h.command("app", bson.encode({"count": "c"}))
            except native.Error as e:
                assert e.args[0] == 20, e.args  # closed under it
        threads = [threading.Thread(target=worker) for _ in range(2)]
        for t in threads:
            t.start()
        h.close()
        for t in threads:
            t.join()
        h.close()  # twice is fine
        assert h.closed
        try:
            h.command("app", bson.encode({"ping": 1}))
            raise AssertionError("a closed handle ran a command")
        except native.Error as e:
            assert e.args[0] == 20, e.args
        # Left to the collector with a cursor open (lifecycle_test.py checks
        # that its files are let go).
        dropped = native.Handle(os.path.join(scratch, "db"))
        dropped.command("app", bson.encode({"find": "c", "batchSize": 1}))
        del dropped
        gc.collect()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("native module: every path ran")


if __name__ == "__main__":
    main()

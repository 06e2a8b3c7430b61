#!/usr/bin/env python3
"""What is left open does no harm (issue 42): cursors, change streams and
sessions left open when a client closes, clients left to the garbage
collector, and all of them left open at exit.

    lifecycle_test.py [--quick]  (the venv's python; CTest's
                                  python_binding_lifecycle, and --quick
                                  under valgrind's memcheck as
                                  python_binding_memcheck: one round, no
                                  threads, no child)

Checks: no file descriptor outlives its client (the process's open fds, by
/proc/self/fd, are back to where they started after every round of open,
use and close, and after a client is only dropped); a cursor read after
its client closed fails with pymongo's InvalidOperation, not a crash; and a
child process that exits with everything open exits 0, after which the
directory opens again with its data.
"""
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import threading

from pymongo.errors import InvalidOperation, OperationFailure

import rockdoc

CHILD = r'''
import sys, rockdoc
client = rockdoc.MongoClient(sys.argv[1])
c = client.app.items
c.insert_many([{"_id": i} for i in range(50)])
cursor = c.find().batch_size(5); next(cursor)              # open on the server side
aggregate = c.aggregate([{"$match": {}}], batchSize=5); next(aggregate)
stream = c.watch(max_await_time_ms=10)
session = client.start_session(); session.start_transaction()
c.insert_one({"_id": 100}, session=session)                # a transaction left open
print("child: leaving everything open", flush=True)
'''


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def use(client, rounds):
    c = client.app.items
    c.drop()
    c.insert_many([{"_id": i, "k": i % 5} for i in range(100)])
    c.create_index("k")
    left = []
    for _ in range(rounds):
        cursor = c.find({"k": 1}).batch_size(3)
        next(cursor)
        left.append(cursor)
        aggregate = c.aggregate([{"$sort": {"_id": 1}}], batchSize=2)
        next(aggregate)
        left.append(aggregate)
    left.append(c.watch(max_await_time_ms=10))
    session = client.start_session()
    session.start_transaction()
    c.update_one({"_id": 1}, {"$set": {"t": 1}}, session=session)
    left.append(session)
    return left


def main():
    quick = "--quick" in sys.argv[1:]
    scratch = tempfile.mkdtemp(prefix="rockdoc-lifecycle-")
    try:
        path = os.path.join(scratch, "db")
        rockdoc.MongoClient(path).close()  # the first open creates the files
        baseline = open_fds()
        for _ in range(1 if quick else 3):
            client = rockdoc.MongoClient(path)
            left = use(client, 1 if quick else 4)
            client.close()
            # The batch in hand, then InvalidOperation: never a silent end.
            try:
                for _ in left[0]:
                    pass
                raise AssertionError("a cursor of a closed client ended as if complete")
            except InvalidOperation:
                pass
            del left
            gc.collect()
            assert open_fds() == baseline, ("file descriptors left open", open_fds(), baseline)
        # Dropped, never closed: the collector closes it.
        client = rockdoc.MongoClient(path)
        use(client, 2)
        del client
        gc.collect()
        assert open_fds() == baseline, ("a dropped client kept its files", open_fds(), baseline)
        if quick:
            print("lifecycle (quick): nothing left open outlived its client")
            return
        # Closed while another thread runs commands: the close waits for the
        # last of them; then every call is InvalidOperation.
        client = rockdoc.MongoClient(path)
        c = client.app.items
        errors = []

        def reader():
            try:
                for _ in range(200):
                    c.find_one({"_id": 1})
            except InvalidOperation:
                pass
            except Exception as e:  # anything else is a failure, reported below
                errors.append(e)
        threads = [threading.Thread(target=reader) for _ in range(3)]
        for t in threads:
            t.start()
        client.close()
        for t in threads:
            t.join()
        assert not errors, errors
        try:
            c.find_one()
            raise AssertionError("a closed client ran a command")
        except InvalidOperation:
            pass
        gc.collect()
        assert open_fds() == baseline, ("files left open after a busy close", open_fds(), baseline)
        # At exit with everything open.
        child_path = os.path.join(scratch, "child")
        done = subprocess.run([sys.executable, "-c", CHILD, child_path], capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
        assert "leaving everything open" in done.stdout, done.stdout
        with rockdoc.MongoClient(child_path) as again:
            items = again.app.items
            assert items.count_documents({}) == 50, items.count_documents({})
            assert items.find_one({"_id": 100}) is None  # the open transaction did not commit
        try:
            rockdoc.MongoClient(os.path.join(scratch, "missing", "x"), create_if_missing=False)
            raise AssertionError("opened a missing directory")
        except OperationFailure as e:
            assert e.code == 29, e.code  # NonExistentPath
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("lifecycle: nothing left open outlived its client")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""rockdoc from Python through its C API (include/rockdoc/c.h).

Only the standard library's ctypes and pymongo's BSON codec (Debian's
python3-bson) are used: rockdoc takes and returns BSON bytes, so any BSON
library serves. Opens a directory, inserts, queries, updates, deletes and
reads MongoDB's error codes.

    python3 examples/python/rockdoc_example.py --library build/src/librockdoc.so \\
        [--dbpath /tmp/rockdoc-python]

Without --dbpath it works in a temporary directory of its own, removed at the
end. A --dbpath must not exist yet (or be an empty directory): the example
makes a database there and leaves it; it never deletes a directory it was given.

Run by CTest (c_api_python_example); prints "example: all steps passed".
"""
import argparse
import ctypes
import os
import sys
import tempfile

import bson


class RockdocError(Exception):
    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class _Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("message", ctypes.c_char_p)]


class Rockdoc:
    """A thin binding: one method per C function it needs."""

    def __init__(self, library, path):
        lib = ctypes.CDLL(library)
        p = ctypes.c_void_p
        buf = ctypes.POINTER(ctypes.c_uint8)
        err = ctypes.POINTER(_Error)
        lib.rockdoc_open.restype = p
        lib.rockdoc_open.argtypes = [ctypes.c_char_p, p, err]
        lib.rockdoc_close.argtypes = [p, err]
        lib.rockdoc_error_clear.argtypes = [err]
        lib.rockdoc_free.argtypes = [p]
        lib.rockdoc_version.restype = ctypes.c_char_p
        lib.rockdoc_run_command.argtypes = [p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                            ctypes.POINTER(buf), ctypes.POINTER(ctypes.c_size_t),
                                            err]
        lib.rockdoc_insert_one.argtypes = [p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.c_size_t, err]
        lib.rockdoc_find.restype = p
        lib.rockdoc_find.argtypes = [p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                     ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, err]
        lib.rockdoc_cursor_next.argtypes = [p, ctypes.POINTER(buf),
                                            ctypes.POINTER(ctypes.c_size_t), err]
        lib.rockdoc_cursor_close.argtypes = [p]
        self._lib = lib
        error = _Error()
        self._client = lib.rockdoc_open(path.encode(), None, ctypes.byref(error))
        self._check(error, self._client is not None)

    def _check(self, error, ok):
        if ok:
            return
        code, message = error.code, (error.message or b"").decode()
        self._lib.rockdoc_error_clear(ctypes.byref(error))
        raise RockdocError(code, message)

    def version(self):
        return self._lib.rockdoc_version().decode()

    def command(self, db, cmd):
        data = bson.encode(cmd)
        reply, size, error = ctypes.POINTER(ctypes.c_uint8)(), ctypes.c_size_t(), _Error()
        ok = self._lib.rockdoc_run_command(self._client, db.encode(), data, len(data),
                                           ctypes.byref(reply), ctypes.byref(size),
                                           ctypes.byref(error))
        answer = None
        if reply:
            answer = bson.decode(ctypes.string_at(reply, size.value))
            self._lib.rockdoc_free(reply)
        self._check(error, ok == 1)
        return answer

    def insert_one(self, db, collection, doc):
        data, error = bson.encode(doc), _Error()
        ok = self._lib.rockdoc_insert_one(self._client, db.encode(), collection.encode(), data,
                                          len(data), ctypes.byref(error))
        self._check(error, ok == 1)

    def find(self, db, collection, filter=None, **options):
        f = bson.encode(filter) if filter is not None else None
        o = bson.encode(options) if options else None
        error = _Error()
        cursor = self._lib.rockdoc_find(self._client, db.encode(), collection.encode(), f,
                                        len(f) if f else 0, o, len(o) if o else 0,
                                        ctypes.byref(error))
        self._check(error, cursor is not None)
        try:
            doc, size = ctypes.POINTER(ctypes.c_uint8)(), ctypes.c_size_t()
            while self._lib.rockdoc_cursor_next(cursor, ctypes.byref(doc), ctypes.byref(size),
                                                ctypes.byref(error)):
                # The document is lent until the next call: decode it now.
                yield bson.decode(ctypes.string_at(doc, size.value))
            self._check(error, error.code == 0)
        finally:
            self._lib.rockdoc_cursor_close(cursor)

    def close(self):
        error = _Error()
        ok = self._lib.rockdoc_close(self._client, ctypes.byref(error))
        self._client = None
        self._check(error, ok == 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", required=True, help="path of librockdoc.so")
    parser.add_argument("--dbpath", help="a new (or empty) directory for the database; "
                        "default: a temporary one, removed at the end")
    args = parser.parse_args()
    if args.dbpath is None:
        with tempfile.TemporaryDirectory(prefix="rockdoc-example-") as scratch:
            return run(args.library, os.path.join(scratch, "db"))
    if os.path.exists(args.dbpath) and (not os.path.isdir(args.dbpath) or os.listdir(args.dbpath)):
        print(f"example: {args.dbpath} already holds something; give a new or empty directory "
              "(the example never deletes one)", file=sys.stderr)
        return 2
    return run(args.library, args.dbpath)


def run(library, dbpath):

    db = Rockdoc(library, dbpath)
    print("rockdoc", db.version())

    # Insert, then query with a filter, a sort and small batches (getMore).
    for i in range(10):
        db.insert_one("shop", "orders", {"_id": i, "total": i * 10, "tags": ["a"] if i % 2 else []})
    big = [d["_id"] for d in db.find("shop", "orders", {"total": {"$gte": 50}},
                                     sort={"total": -1}, batchSize=2)]
    assert big == [9, 8, 7, 6, 5], big

    # MongoDB's error codes come through: a duplicate _id is 11000.
    try:
        db.insert_one("shop", "orders", {"_id": 3})
        raise AssertionError("a duplicate _id was accepted")
    except RockdocError as e:
        assert e.code == 11000, e
        print("duplicate key refused:", e.code, e.message.split(" dup key")[0])

    # Any command: an index, an update, a count, an unknown command.
    db.command("shop", {"createIndexes": "orders",
                        "indexes": [{"key": {"total": 1}, "name": "total_1"}]})
    reply = db.command("shop", {"update": "orders",
                                "updates": [{"q": {"total": {"$lt": 30}},
                                             "u": {"$set": {"cheap": True}}, "multi": True}]})
    assert reply["n"] == 3 and reply["nModified"] == 3, reply
    assert db.command("shop", {"count": "orders", "query": {"cheap": True}})["n"] == 3
    plan = db.command("shop", {"explain": {"find": "orders", "filter": {"total": 40}},
                               "verbosity": "queryPlanner"})
    assert "IXSCAN" in str(plan["queryPlanner"]["winningPlan"]), plan
    try:
        db.command("shop", {"frobnicate": 1})
        raise AssertionError("an unknown command was accepted")
    except RockdocError as e:
        assert e.code == 59, e
    db.close()

    # Reopen: the data is there.
    db = Rockdoc(library, dbpath)
    assert db.command("shop", {"count": "orders"})["n"] == 10
    db.close()
    print("example: all steps passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

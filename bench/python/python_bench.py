#!/usr/bin/env python3
"""The Python binding against what a Python user would pick instead, in one
run (issue 42): insert_many, find_one by _id and an indexed find, through

  - rockdoc, the package in process (rockdoc.MongoClient over a directory);
  - pymongo to rockdoc-serve (the same engine over MongoDB's wire protocol,
    a server this script starts on a free loopback port);
  - Python's sqlite3 with the documents as JSON text, an INTEGER PRIMARY KEY
    for _id and an expression index on json_extract(doc, '$.k').

    python_bench.py --serve build/tools/rockdoc-serve [--docs 20000] [--lookups 5000]

(with a python where `rockdoc` is installed: the install check's venv,
build/tests/python_venv/bin/python). Prints operations per second for each
and the ratios rockdoc / pymongo->serve and rockdoc / sqlite3, measured in
the same run on the same documents, so machines compare by ratio.
"""
import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import pymongo

import rockdoc

BATCH = 1000


def documents(n):
    rng = random.Random(42)
    return [{"_id": i, "k": rng.randrange(n // 10 or 1), "name": "user%06d" % i,
             "tags": ["t%d" % (i % 7), "t%d" % (i % 11)],
             "address": {"city": "city%d" % (i % 100), "zip": "%05d" % (i % 99999)},
             "score": rng.random()} for i in range(n)]


def timed(f):
    start = time.perf_counter()
    count = f()
    return count / (time.perf_counter() - start)


def mongo_style(collection, docs, ids, keys):
    """The three measurements through pymongo's API (rockdoc or pymongo)."""
    def insert():
        for i in range(0, len(docs), BATCH):
            collection.insert_many([dict(d) for d in docs[i:i + BATCH]], ordered=True)
        return len(docs)

    def find_by_id():
        for i in ids:
            assert collection.find_one({"_id": i}) is not None
        return len(ids)

    def indexed_find():
        n = 0
        for k in keys:
            n += len(list(collection.find({"k": k})))
        assert n > 0
        return len(keys)

    rates = {"insert_many": timed(insert)}
    collection.create_index("k")
    rates["find_one by _id"] = timed(find_by_id)
    rates["indexed find"] = timed(indexed_find)
    return rates


def sqlite_style(path, docs, ids, keys):
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE c (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)")

    def insert():
        for i in range(0, len(docs), BATCH):
            with db:
                db.executemany("INSERT INTO c VALUES (?, ?)",
                               [(d["_id"], json.dumps(d)) for d in docs[i:i + BATCH]])
        return len(docs)

    def find_by_id():
        for i in ids:
            row = db.execute("SELECT doc FROM c WHERE id = ?", (i,)).fetchone()
            assert json.loads(row[0]) is not None
        return len(ids)

    def indexed_find():
        n = 0
        for k in keys:
            n += len([json.loads(r[0]) for r in db.execute(
                "SELECT doc FROM c WHERE json_extract(doc, '$.k') = ?", (k,))])
        assert n > 0
        return len(keys)

    rates = {"insert_many": timed(insert)}
    db.execute("CREATE INDEX c_k ON c (json_extract(doc, '$.k'))")
    rates["find_one by _id"] = timed(find_by_id)
    rates["indexed find"] = timed(indexed_find)
    db.close()
    return rates


def start_server(serve, dbpath):
    proc = subprocess.Popen([serve, "--db", dbpath, "--port", "0", "--cacheSizeGB", "0.25"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in proc.stdout:
        if "listening on 127.0.0.1:" in line:
            return proc, int(line.rsplit(":", 1)[1].split()[0])
    raise SystemExit("rockdoc-serve did not start")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", required=True, help="the rockdoc-serve program")
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--lookups", type=int, default=5000)
    args = parser.parse_args()
    docs = documents(args.docs)
    rng = random.Random(7)
    ids = [rng.randrange(args.docs) for _ in range(args.lookups)]
    keys = [rng.randrange(args.docs // 10 or 1) for _ in range(args.lookups // 10 or 1)]
    scratch = tempfile.mkdtemp(prefix="rockdoc-pybench-")
    results = {}
    try:
        # The same durability for all three: no sync per commit (rockdoc's
        # and rockdoc-serve's default; SQLite's WAL with synchronous=NORMAL).
        with rockdoc.MongoClient(os.path.join(scratch, "binding"),
                                 block_cache_bytes=256 << 20) as client:
            results["rockdoc (in process)"] = mongo_style(client.bench.c, docs, ids, keys)
        proc, port = start_server(args.serve, os.path.join(scratch, "serve"))
        try:
            with pymongo.MongoClient("127.0.0.1", port) as client:
                results["pymongo -> rockdoc-serve"] = mongo_style(client.bench.c, docs, ids, keys)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        results["sqlite3 + JSON"] = sqlite_style(os.path.join(scratch, "s.db"), docs, ids, keys)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    names = list(results)
    print("%d documents, %d lookups by _id, %d indexed finds (~10 documents each); "
          "operations per second (insert_many: documents per second)" % (
              args.docs, args.lookups, len(keys)))
    print("%-18s" % "" + "".join("%26s" % n for n in names) +
          "%18s%18s" % ("rockdoc/pymongo", "rockdoc/sqlite3"))
    for op in results[names[0]]:
        row = [results[n][op] for n in names]
        print("%-18s" % op + "".join("%26.0f" % r for r in row) +
              "%18.2f%18.2f" % (row[0] / row[1], row[0] / row[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

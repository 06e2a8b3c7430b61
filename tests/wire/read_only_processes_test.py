#!/usr/bin/env python3
"""Several processes on one directory (issue 41): while rockdoc-serve owns
the directory for writing, other processes read it.

    read_only_processes_test.py URI DBPATH ROCKDOC ROCKDOC_DUMP ROCKDOC_SERVE

Through the server (pymongo) the test writes; beside it, in processes of
their own, the shell with --readonly reads what was written (and what is
written after it started), refuses writes naming the owner, rockdoc-dump
backs the live directory up (read-only by default), and a second
read-write open (another rockdoc-serve) is DBPathInUse naming the owner.
"""
import json
import os
import subprocess
import sys
import tempfile

from pymongo_harness import pymongo, run, test  # exits 77 without pymongo

uri, dbpath, shell, dump, serve = sys.argv[1:6]
client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=10000)
db = client.app


def rockdoc(*code, readonly=True):
    args = [shell, "--db", dbpath, "--quiet", "--json"] + (["--readonly"] if readonly else [])
    for c in code:
        args += ["--eval", c]
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


@test
def the_shell_reads_beside_the_owner():
    db.c.drop()
    db.c.insert_many([{"_id": i, "k": i % 4} for i in range(40)])
    db.c.create_index("k")
    r = rockdoc("db = db.getSiblingDB('app')", "db.c.countDocuments({k: 1})",
                "db.c.find({k: 1}).explain().queryPlanner.winningPlan.inputStage.indexName")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split()
    assert lines[-2:] == ["10", '"k_1"'], r.stdout
    # Written after the reader started: seen by its next statement (a
    # script that waits for the owner's write to be acknowledged first).
    script = tempfile.NamedTemporaryFile("w", suffix=".js", delete=False)
    script.write("db = db.getSiblingDB('app');\nprint(db.c.countDocuments({}));\n")
    script.close()
    db.c.insert_one({"_id": 100, "k": 9})
    r = subprocess.run([shell, "--db", dbpath, "--readonly", "--quiet", script.name],
                       capture_output=True, text=True, timeout=60)
    os.unlink(script.name)
    assert r.returncode == 0 and r.stdout.split()[-1] == "41", (r.stdout, r.stderr)


@test
def writes_from_a_reader_name_the_owner():
    r = rockdoc("db = db.getSiblingDB('app')", "db.c.insertOne({_id: 'x'})")
    assert r.returncode != 0
    assert "read-only" in r.stderr + r.stdout, (r.stdout, r.stderr)
    assert "rockdoc-serve" in r.stderr + r.stdout, (r.stdout, r.stderr)  # the owner's program
    assert db.c.count_documents({"_id": "x"}) == 0


@test
def a_second_writer_is_refused_naming_the_owner():
    r = rockdoc("db.getName()", readonly=False)
    assert r.returncode != 0
    assert "DBPathInUse" in r.stderr or "locked" in r.stderr, r.stderr
    assert "rockdoc-serve" in r.stderr, r.stderr
    p = subprocess.run([serve, "--db", dbpath, "--port", "0"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode != 0 and "rockdoc-serve" in p.stderr + p.stdout, (p.stdout, p.stderr)


@test
def rockdoc_dump_backs_up_the_live_directory():
    out = tempfile.mkdtemp(prefix="rockdoc-dump-")
    r = subprocess.run([dump, "--dbpath", dbpath, "--out", out, "--db", "app"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    import bson
    with open(os.path.join(out, "app", "c.bson"), "rb") as f:
        docs = bson.decode_all(f.read())
    assert sorted(d["_id"] for d in docs if isinstance(d["_id"], int)) == list(range(40)) + [100]
    with open(os.path.join(out, "app", "c.metadata.json")) as f:
        assert "k_1" in f.read()
    # The server went on serving meanwhile.
    assert db.c.count_documents({}) == 41


run("read-only processes")

#!/usr/bin/env python3
"""Encryption at rest through the programs (issue 41): rockdoc-serve with
mongod's --enableEncryption --encryptionKeyFile, and beside it the shell and
rockdoc-dump with the same key file.

    encryption_programs_test.py URI DBPATH KEYFILE ROCKDOC ROCKDOC_DUMP

run by run_with_server.py --encrypted. Through the server (pymongo) the test
writes documents holding a marker string; no file of the live directory holds
it. The shell and rockdoc-dump read the live directory with the key, and are
refused without it or with another key, naming what is wrong.
"""
import base64
import os
import shutil
import subprocess
import tempfile

from pymongo_harness import pymongo, run, test  # exits 77 without pymongo

import sys

uri, dbpath, keyfile, shell, dump = sys.argv[1:6]
client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=10000)
db = client.vault
MARKER = "okapi-marmoset-3141"


def shell_eval(code, key=keyfile):
    args = [shell, "--db", dbpath, "--readonly", "--quiet", "--json", "--eval", code]
    if key is not None:
        args += ["--encryptionKeyFile", key]
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


@test
def nothing_written_is_in_plain_text():
    db.c.drop()
    db.c.insert_many([{"_id": i, "secret": MARKER, "tag": MARKER + str(i % 3)}
                      for i in range(300)])
    db.c.create_index("tag")
    db.c.insert_one({"_id": "late", "secret": MARKER})
    # Here the documents are in the write-ahead log and the memtable; table
    # files, checkpoints and spills are encryption_test's (in the library).
    found = []
    for root, _, files in os.walk(dbpath):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                if MARKER.encode() in f.read():
                    found.append(name)
    assert found == [], found
    opts = client.admin.command("getCmdLineOpts")["parsed"]["security"]
    assert opts["enableEncryption"] is True and opts["encryptionKeyFile"] == keyfile, opts


@test
def the_shell_reads_with_the_key_and_not_without():
    r = shell_eval("db.getSiblingDB('vault').c.countDocuments({secret: '%s'})" % MARKER)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "301", r.stdout
    r = shell_eval("1", key=None)
    assert r.returncode != 0 and "it is encrypted" in r.stderr, r.stderr
    other = os.path.join(os.path.dirname(keyfile), "other.key")
    fd = os.open(other, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, base64.b64encode(os.urandom(32)))
    os.close(fd)
    r = shell_eval("1", key=other)
    assert r.returncode != 0 and "not given" in r.stderr, r.stderr
    os.chmod(other, 0o644)
    r = shell_eval("1", key=other)
    assert r.returncode != 0 and "too open" in r.stderr, r.stderr


@test
def rockdoc_dump_backs_up_with_the_key():
    out = tempfile.mkdtemp(prefix="rockdoc-dump-")
    try:
        r = subprocess.run([dump, "--dbpath", dbpath, "--encryptionKeyFile", keyfile,
                            "--out", out, "--db", "vault"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        with open(os.path.join(out, "vault", "c.bson"), "rb") as f:
            assert f.read().count(MARKER.encode()) >= 301 * 1  # a dump is plain (README)
        r = subprocess.run([dump, "--dbpath", dbpath, "--out", out],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "it is encrypted" in r.stderr, r.stderr
    finally:
        shutil.rmtree(out, ignore_errors=True)


run("encryption through the programs")

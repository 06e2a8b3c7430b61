#!/usr/bin/env python3
"""pymongo against rockdoc-serve at the wire's limits and with the admin
commands drivers' harnesses send (issue #33.6, #33.8): a replace/upsert of a
document of the largest size, an insert_many that fills a 48,000,000-byte
message, getParameter, getCmdLineOpts, listDatabases' admin/config/local,
watch() on a standalone and apiStrict.

    pymongo_wirelimits_test.py URI      (run by run_with_server.py)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import sys

from pymongo_harness import expect_code, run_tests, test  # first: skips without pymongo

import bson
import pymongo

client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
db = client.wirelimits_test
MAX_BSON = 16 * 1024 * 1024


def doc_of_size(_id, size):
    """{_id, pad} of exactly `size` BSON bytes."""
    d = {"_id": _id, "pad": ""}
    d["pad"] = "p" * (size - len(bson.BSON.encode(d)))
    assert len(bson.BSON.encode(d)) == size
    return d


@test
def replace_and_upsert_a_maximum_size_document():
    # The update statement {q, u, upsert} around a 16 MiB document is larger
    # than 16 MiB: the server takes sequence documents of 16 MiB + 16 KiB.
    c = db.big
    c.drop()
    big = doc_of_size(1, MAX_BSON)
    r = c.replace_one({"_id": 1}, big, upsert=True)
    assert r.upserted_id == 1, r.raw_result
    big["pad"] = "q" * len(big["pad"])
    assert c.replace_one({"_id": 1}, big).modified_count == 1
    got = c.find_one({"_id": 1})
    assert len(bson.BSON.encode(got)) == MAX_BSON
    assert got["pad"][0] == "q"


@test
def insert_many_filling_a_whole_message():
    # 100,000 documents of 479 bytes: pymongo sends them in one message of
    # nearly 48,000,000 bytes, which folded into the command's `documents`
    # array (a type byte and an index key more each) is larger than that.
    c = db.wide
    c.drop()
    docs = [doc_of_size(i, 479) for i in range(100000)]
    r = c.insert_many(docs)
    assert len(r.inserted_ids) == 100000
    assert c.estimated_document_count() == 100000


@test
def get_parameter():
    admin = client.admin
    one = admin.command({"getParameter": 1, "cursorTimeoutMillis": 1})
    assert one["cursorTimeoutMillis"] == 600000, one
    assert "featureCompatibilityVersion" not in one, one
    everything = admin.command({"getParameter": "*"})
    assert everything["featureCompatibilityVersion"] == {"version": "7.0"}, everything
    assert everything["transactionLifetimeLimitSeconds"] == 60, everything
    details = admin.command({"getParameter": {"showDetails": True}, "ttlMonitorSleepSecs": 1})
    assert details["ttlMonitorSleepSecs"] == {
        "value": 60, "settableAtRuntime": False, "settableAtStartup": True}, details
    e = expect_code(72, admin.command, {"getParameter": 1, "noSuchParameter": 1})
    assert "no option found to get" in str(e), e.details
    expect_code(13, db.command, {"getParameter": 1, "cursorTimeoutMillis": 1})


@test
def get_cmd_line_opts():
    opts = client.admin.command("getCmdLineOpts")
    assert "--db" in opts["argv"], opts
    assert opts["parsed"]["storage"]["dbPath"] == opts["argv"][opts["argv"].index("--db") + 1]
    assert "net" in opts["parsed"], opts
    expect_code(13, db.command, "getCmdLineOpts")


@test
def list_databases_shows_admin_config_local():
    db.listed.insert_one({})
    names = client.list_database_names()
    for name in ("admin", "config", "local", "wirelimits_test"):
        assert name in names, names
    assert names == sorted(names), names


@test
def change_streams_see_an_insert():
    with db.watched.watch(max_await_time_ms=1000) as stream:
        db.watched.insert_one({"_id": "seen"})
        event = None
        while event is None:  # each try waits up to max_await_time_ms
            event = stream.try_next()
        assert event["operationType"] == "insert", event
        assert event["documentKey"] == {"_id": "seen"}, event
        assert stream.resume_token is not None


@test
def api_strict_is_enforced():
    db.api.insert_one({"_id": 1})
    strict = {"apiVersion": "1", "apiStrict": True}
    r = db.command(dict({"find": "api", "filter": {}}, **strict))
    assert r["cursor"]["firstBatch"] == [{"_id": 1}], r
    e = expect_code(323, db.command, dict({"distinct": "api", "key": "_id"}, **strict))
    assert "is not in API Version 1" in str(e), e.details
    expect_code(323, client.admin.command, dict({"getCmdLineOpts": 1}, **strict))
    assert db.command(dict({"distinct": "api", "key": "_id"}, apiVersion="1",
                           apiStrict=False))["values"] == [1]
    expect_code(4886600, db.command, {"ping": 1, "apiStrict": True})


@test
def a_result_too_large_is_an_error_not_a_dropped_connection():
    # Issue #34.6: an 86.7 MB aggregation result was sent as one reply, over
    # the 48,000,000 bytes hello advertises, and pymongo dropped the connection.
    c = db.results
    c.drop()
    c.insert_many([{"_id": i, "pad": str(i) + "p" * (512 * 1024)} for i in range(40)])
    e = expect_code(10334, lambda: list(c.aggregate(
        [{"$group": {"_id": None, "all": {"$push": "$pad"}}}])))
    assert "16793600" in str(e), e.details
    assert client.admin.command("ping")["ok"] == 1


run_tests()

#!/usr/bin/env python3
"""pymongo against rockdoc-serve, for the commands admin tools call (issue
39, admin part): serverStatus' sections counted as MongoDB counts them,
currentOp and $currentOp listing a real operation in flight, killOp ending
it with Interrupted (11601), connectionStatus, getLog, getParameter and
setParameter, top, dbHash (checked against Python's own MD5 of the raw
documents) and listCommands.

    pymongo_admin_test.py URI      (run by run_with_server.py)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import hashlib
import json
import sys
import threading
import time

from pymongo_harness import pymongo, expect_code, run_tests, test  # exits 77 without pymongo
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo.errors import OperationFailure

client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000, appname="admin-test")
admin = client.admin
db = client.pymongo_admin


def status():
    return admin.command("serverStatus")


@test
def server_status_has_the_sections_tools_read():
    s = status()
    for section in ("host", "version", "process", "pid", "uptime", "uptimeMillis",
                    "uptimeEstimate", "localTime", "connections", "opcounters", "mem",
                    "globalLock", "network", "rocksdb", "storageEngine"):
        assert section in s, (section, sorted(s))
    assert s["connections"]["current"] >= 1, s["connections"]
    assert s["connections"]["totalCreated"] >= s["connections"]["current"], s["connections"]
    assert s["connections"]["available"] > 0, s["connections"]
    # This serverStatus is itself in flight.
    assert s["globalLock"]["activeClients"]["total"] >= 1, s["globalLock"]
    assert s["mem"]["bits"] == 64 and s["mem"]["resident"] > 0, s["mem"]
    assert s["mem"]["virtual"] >= s["mem"]["resident"], s["mem"]
    assert s["network"]["numRequests"] > 0 and s["network"]["bytesIn"] > 0, s["network"]
    assert "recordCache" in s["rocksdb"], s["rocksdb"]


@test
def opcounters_count_as_mongodb_counts():
    c = db.counted
    c.drop()
    before = status()["opcounters"]
    c.insert_many([{"_id": i} for i in range(5)])          # insert: 5 (per document)
    list(c.find({}).batch_size(2))                         # query: 1, getmore: 2
    c.update_one({"_id": 1}, {"$set": {"x": 1}})           # update: 1
    c.delete_many({"_id": {"$gt": 2}})                     # delete: 1 (per statement)
    after = status()["opcounters"]
    delta = {k: after[k] - before[k] for k in ("insert", "query", "update", "delete", "getmore")}
    assert delta == {"insert": 5, "query": 1, "update": 1, "delete": 1, "getmore": 2}, delta
    # The drop, serverStatus and the driver's own commands are commands.
    assert after["command"] > before["command"], (before, after)


def wait_for(predicate, what):
    """Polls `predicate` until it returns something true (the event), with a
    bound far above any real delay: a hang fails, a slow machine does not."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.01)
    raise AssertionError("never saw " + what)


@test
def kill_op_interrupts_a_waiting_get_more():
    db.drop_collection("tail")
    db.create_collection("tail", capped=True, size=100000)
    db.tail.insert_one({"_id": 1})
    reply = db.command("find", "tail", tailable=True, awaitData=True, batchSize=1)
    cursor_id = reply["cursor"]["id"]
    assert cursor_id != 0
    errors = []

    def get_more():
        try:
            # Waits for an insert for up to 10 minutes: only killOp ends it.
            db.command("getMore", cursor_id, collection="tail", maxTimeMS=600000)
            errors.append(None)
        except OperationFailure as e:
            errors.append(e)

    waiter = threading.Thread(target=get_more, daemon=True)  # a failed test must not hang
    waiter.start()

    def the_get_more():
        for op in admin.command("currentOp")["inprog"]:
            if op.get("command", {}).get("getMore") == cursor_id:
                return op
        return None

    op = wait_for(the_get_more, "the getMore in currentOp")
    assert op["op"] == "getmore" and op["ns"] == "pymongo_admin.tail", op
    assert op["active"] is True and op["type"] == "op", op
    assert op["appName"] == "admin-test", op
    assert op["desc"] == "conn%d" % op["connectionId"], op
    assert op["client"].startswith("127.0.0.1:"), op
    assert isinstance(op["opid"], int) and op["microsecs_running"] >= 0, op
    # The same operation through the aggregation stage, with a $match.
    staged = list(admin.aggregate([{"$currentOp": {"allUsers": True, "idleSessions": True}},
                                   {"$match": {"opid": op["opid"]}}]))
    assert len(staged) == 1 and staged[0]["ns"] == "pymongo_admin.tail", staged
    # The currentOp command's filter.
    assert [o["opid"] for o in admin.command("currentOp", opid=op["opid"])["inprog"]] == [op["opid"]]
    killed = admin.command("killOp", op=op["opid"])
    assert killed["info"] == "attempting to kill op", killed
    waiter.join(60)
    assert not waiter.is_alive(), "killOp did not end the getMore"
    assert errors and errors[0] is not None and errors[0].code == 11601, errors
    assert errors[0].details["codeName"] == "Interrupted", errors[0].details
    # The cursor went with its operation; the op is no longer in flight.
    expect_code(43, lambda: db.command("getMore", cursor_id, collection="tail"))
    assert not admin.command("currentOp", opid=op["opid"])["inprog"]
    # An opid not in flight is no error, as mongod's.
    admin.command("killOp", op=987654321)
    expect_code(9, lambda: list(admin.aggregate([{"$currentOp": {"bogus": True}}])))
    expect_code(9, lambda: list(admin.aggregate([{"$currentOp": {"allUsers": 1}}])))
    expect_code(238, lambda: list(admin.aggregate([{"$currentOp": {"idleConnections": True}}])))
    expect_code(73, lambda: list(db.aggregate([{"$currentOp": {}}])))


@test
def connection_status_and_get_log():
    s = admin.command("connectionStatus", showPrivileges=True)
    assert s["authInfo"]["authenticatedUsers"] == [], s
    assert s["authInfo"]["authenticatedUserRoles"] == [], s
    assert "authenticatedUserPrivileges" in s["authInfo"], s
    assert admin.command("getLog", "*")["names"] == ["global", "startupWarnings"]
    log = admin.command("getLog", "global")
    assert log["totalLinesWritten"] >= len(log["log"]) > 0, log
    lines = [json.loads(line) for line in log["log"]]
    accepted = [l for l in lines if l["id"] == 22943]
    assert accepted and accepted[0]["msg"] == "Connection accepted", lines[:3]
    assert set(accepted[0]) >= {"t", "s", "c", "id", "ctx", "msg", "attr"}, accepted[0]
    assert "$date" in accepted[0]["t"], accepted[0]
    expect_code(96, lambda: admin.command("getLog", "nosuchlog"))
    expect_code(14, lambda: admin.command("getLog", 1))


@test
def get_and_set_parameter():
    got = admin.command("getParameter", 1, cursorTimeoutMillis=1)
    assert got["cursorTimeoutMillis"] == 600000, got
    details = admin.command({"getParameter": {"showDetails": True}, "cursorTimeoutMillis": 1})
    assert details["cursorTimeoutMillis"]["settableAtRuntime"] is True, details
    was = admin.command("setParameter", 1, cursorTimeoutMillis=300000)
    assert was["was"] == 600000, was
    assert admin.command("getParameter", 1, cursorTimeoutMillis=1)["cursorTimeoutMillis"] == 300000
    admin.command("setParameter", 1, cursorTimeoutMillis=600000)
    every = admin.command({"getParameter": {"allParameters": True, "showDetails": True}})
    assert every["ttlMonitorSleepSecs"]["settableAtRuntime"] is False, every
    e = expect_code(72, lambda: admin.command("setParameter", 1, noSuchParameter=1))
    assert "attempted to set unrecognized parameter [noSuchParameter]" in str(e), e
    expect_code(20, lambda: admin.command("setParameter", 1, ttlMonitorSleepSecs=5))
    expect_code(20, lambda: admin.command("setParameter", 1, cursorTimeoutMillis=1,
                                          ttlMonitorSleepSecs=5))
    expect_code(72, lambda: admin.command("setParameter", 1))


@test
def top_counts_per_namespace():
    c = db.topped
    c.drop()
    c.insert_many([{"_id": i} for i in range(3)])
    c.find_one({"_id": 1})
    c.find_one({"_id": 2})
    totals = admin.command("top")["totals"]
    t = totals["pymongo_admin.topped"]
    assert t["queries"]["count"] == 2 and t["insert"]["count"] == 1, t
    assert t["total"]["count"] == t["readLock"]["count"] + t["writeLock"]["count"], t
    assert t["writeLock"]["count"] >= 1, t   # the insert (and the drop)
    assert totals["note"] == "all times in microseconds", totals


@test
def db_hash_is_the_md5_of_the_documents():
    hashed = client.pymongo_admin_hash
    client.drop_database("pymongo_admin_hash")
    hashed.b.insert_many([{"_id": i, "s": "x" * i} for i in (3, 1, 2)])
    hashed.a.insert_one({"_id": "only"})
    hashed.create_collection("empty")
    raw = hashed.get_collection("b", codec_options=CodecOptions(document_class=RawBSONDocument))
    expected_b = hashlib.md5(b"".join(d.raw for d in raw.find().sort("_id", 1))).hexdigest()
    got = hashed.command("dbHash")
    assert got["collections"]["b"] == expected_b, got
    assert got["collections"]["empty"] == hashlib.md5(b"").hexdigest(), got
    names = sorted(got["collections"])
    assert names == ["a", "b", "empty"], names
    assert got["md5"] == hashlib.md5("".join(got["collections"][n] for n in names).encode()).hexdigest()
    assert set(got["uuids"]) == {"a", "b", "empty"} and got["capped"] == [], got
    only = hashed.command("dbHash", collections=["b"])
    assert list(only["collections"]) == ["b"], only
    hashed.b.update_one({"_id": 2}, {"$set": {"s": "changed"}})
    assert hashed.command("dbHash")["collections"]["b"] != expected_b


@test
def list_commands_lists_the_admin_commands():
    commands = admin.command("listCommands")["commands"]
    for name in ("currentOp", "killOp", "top", "getLog", "setParameter", "connectionStatus",
                 "dbHash", "serverStatus"):
        assert name in commands, name
    assert commands["killOp"]["adminOnly"] is True, commands["killOp"]


run_tests()

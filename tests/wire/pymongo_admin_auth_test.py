#!/usr/bin/env python3
"""pymongo against rockdoc-serve --auth, for the admin commands that depend
on who asks (issue 39): connectionStatus names the authenticated user, and
currentOp with $ownOps (mongosh's db.currentOp({$ownOps: true}), $currentOp
{allUsers: false}) lists that user's operations only, while allUsers shows
every user's.

    pymongo_admin_auth_test.py URI      (run by run_with_server.py --server-arg=--auth)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import sys
import threading
import time

from pymongo_harness import pymongo, run_tests, test  # exits 77 without pymongo
from pymongo.errors import OperationFailure

URI = sys.argv[1]


def connect(**kw):
    return pymongo.MongoClient(URI, serverSelectionTimeoutMS=5000, **kw)


@test
def connection_status_names_the_user():
    c = connect()
    c.admin.command("createUser", "boss", pwd="pencil", roles=["root"])
    boss = connect(username="boss", password="pencil", authSource="admin")
    boss.admin.command("createUser", "clerk", pwd="paper", roles=["root"])
    s = boss.admin.command("connectionStatus", showPrivileges=True)
    assert s["authInfo"]["authenticatedUsers"] == [{"user": "boss", "db": "admin"}], s
    assert s["authInfo"]["authenticatedUserPrivileges"], s
    # Without a login, connectionStatus still answers (as mongod's), with nobody.
    assert connect().admin.command("connectionStatus")["authInfo"]["authenticatedUsers"] == []


@test
def own_ops_lists_the_askers_operations_only():
    boss = connect(username="boss", password="pencil", authSource="admin")
    clerk = connect(username="clerk", password="paper", authSource="admin")
    db = boss.own_ops
    db.drop_collection("tail")
    db.create_collection("tail", capped=True, size=100000)
    db.tail.insert_one({"_id": 1})
    cursor_id = db.command("find", "tail", tailable=True, awaitData=True, batchSize=1)["cursor"]["id"]
    errors = []

    def get_more():
        try:
            db.command("getMore", cursor_id, collection="tail", maxTimeMS=600000)
        except OperationFailure as e:
            errors.append(e.code)

    waiter = threading.Thread(target=get_more, daemon=True)  # a failed test must not hang
    waiter.start()
    deadline = time.monotonic() + 60
    ops = []
    while not ops and time.monotonic() < deadline:
        ops = clerk.admin.command({"currentOp": 1, "command.getMore": cursor_id})["inprog"]
        time.sleep(0.01)
    assert len(ops) == 1, "boss's getMore never showed in currentOp"
    assert ops[0]["effectiveUsers"] == [{"user": "boss", "db": "admin"}], ops[0]
    # The clerk's own operations: its currentOp, never boss's getMore.
    own = clerk.admin.command({"currentOp": 1, "$ownOps": True})["inprog"]
    assert own and all(o["effectiveUsers"][0]["user"] == "clerk" for o in own), own
    staged = list(clerk.admin.aggregate([{"$currentOp": {"allUsers": False}}]))
    assert staged and all(o["effectiveUsers"][0]["user"] == "clerk" for o in staged), staged
    every = list(clerk.admin.aggregate([{"$currentOp": {"allUsers": True}}]))
    assert any(o["op"] == "getmore" for o in every), every
    clerk.admin.command("killOp", op=ops[0]["opid"])
    waiter.join(60)
    assert not waiter.is_alive() and errors == [11601], errors


run_tests()

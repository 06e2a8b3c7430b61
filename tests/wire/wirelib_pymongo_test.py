#!/usr/bin/env python3
"""pymongo against rockdoc-serve, for issue 35's item 4: the wire's commands
are registered with the command layer, so one table answers listCommands and
the unknown-command error, and the wire's commands get the dispatcher's
checks (admin only) like the others.

    wirelib_pymongo_test.py URI      (run by run_with_server.py)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import sys

from pymongo_harness import pymongo, run, test  # exits 77 without pymongo
from pymongo.errors import OperationFailure

client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)


def code_of(fn):
    try:
        fn()
    except OperationFailure as e:
        return e.code, str(e.details.get("errmsg"))
    raise AssertionError("expected an error")


@test
def list_commands_lists_the_wires_commands_and_the_engines():
    commands = client.admin.command("listCommands")["commands"]
    for name in ("saslStart", "saslContinue", "createUser", "dropUser", "usersInfo",
                 "getCmdLineOpts", "find", "insert", "hello", "listCommands"):
        assert name in commands, name
    assert commands["getCmdLineOpts"]["adminOnly"] is True
    assert commands["saslStart"]["requiresAuth"] is False
    assert commands["dropUser"]["requiresAuth"] is True
    assert commands["find"]["apiVersions"] == ["1"]


@test
def every_name_not_listed_is_unknown():
    commands = client.admin.command("listCommands")["commands"]
    assert "authenticate" not in commands
    code, msg = code_of(lambda: client.admin.command("authenticate"))
    assert code == 59 and msg == "no such command: 'authenticate'", (code, msg)


@test
def the_wires_commands_get_the_dispatchers_checks():
    # admin only: the dispatcher's error, as for listDatabases.
    code, msg = code_of(lambda: client.wirelib.command("getCmdLineOpts"))
    assert code == 13 and msg == "getCmdLineOpts may only be run against the admin database.", msg
    assert client.admin.command("getCmdLineOpts")["argv"][0].endswith("rockdoc-serve")
    # A user made and listed through the driver, then dropped.
    client.wirelib.command("createUser", "wl", pwd="pw", roles=[])
    users = client.wirelib.command("usersInfo", "wl")["users"]
    assert [u["user"] for u in users] == ["wl"], users
    client.wirelib.command("dropUser", "wl")
    code, _ = code_of(lambda: client.wirelib.command("dropUser", "wl"))
    assert code == 11, code  # UserNotFound
    # hello's connectionId is the connection's, not the command layer's 1.
    other = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
    ours = client.admin.command("hello")["connectionId"]
    theirs = other.admin.command("hello")["connectionId"]
    other.close()
    assert ours != theirs, (ours, theirs)


run("pymongo %s" % pymongo.version)

#!/usr/bin/env python3
"""pymongo against `rockdoc-serve --auth`: what an attacker must not get.

    wiresec_auth_test.py URI      (run by run_with_server.py --server-arg=--auth)

- Logical sessions before login (issue #34.4): commands an unauthenticated
  connection may run (ping, hello) carry an lsid, yet the server keeps no
  session for them (serverStatus' logicalSessionRecordCache), as mongod
  ignores session fields when nobody is logged in; a logged-in client is
  served meanwhile.
- A dropped user loses its access (issue #34.5): the connection it logged
  in on is refused (Unauthorized, 13) from the next command, createUser
  included; a user dropped and created again under the same name (rockdoc's
  way to change a password) is another user: the old connection must log in
  again, a new one with the new password works.
Exits 77 when pymongo is not installed.
"""
import sys

from pymongo_harness import expect_code, pymongo, run, test  # exits 77 without pymongo

URI = sys.argv[1]


def connect(**kw):
    return pymongo.MongoClient(URI, serverSelectionTimeoutMS=5000, **kw)


def sessions(admin):
    return admin.command("serverStatus")["logicalSessionRecordCache"]["activeSessionsCount"]


@test
def first_user():
    assert connect().admin.command("createUser", "boss", pwd="pencil", roles=["root"])["ok"] == 1


@test
def no_session_state_before_login():
    boss = connect(username="boss", password="pencil", authSource="admin", maxPoolSize=1)
    boss.test.c.insert_one({"_id": "boss"})
    before = sessions(boss.admin)
    anonymous = connect(maxPoolSize=1)
    for i in range(2000):
        # A new session each time: a new lsid the server would keep.
        with anonymous.start_session() as s:
            assert anonymous.admin.command("ping", session=s)["ok"] == 1
            anonymous.admin.command("hello", session=s)
        if i % 500 == 0:
            assert boss.test.c.find_one({"_id": "boss"}) == {"_id": "boss"}
    after = sessions(boss.admin)
    # The logged-in client's own session(s) only, none of the 2,000.
    assert after <= before + 1, (before, after)


@test
def dropped_user_loses_access():
    boss = connect(username="boss", password="pencil", authSource="admin")
    assert boss.admin.command("createUser", "mallory", pwd="secret", roles=["root"])["ok"] == 1
    mallory = connect(username="mallory", password="secret", authSource="admin", maxPoolSize=1)
    mallory.test.c.insert_one({"_id": "m1"})
    assert boss.admin.command("dropUser", "mallory")["ok"] == 1
    # The same connection, already logged in: refused from the next command.
    expect_code(13, lambda: mallory.test.c.insert_one({"_id": "m2"}))
    expect_code(13, lambda: mallory.admin.command("createUser", "m", pwd="x", roles=["root"]))
    expect_code(13, lambda: mallory.test.c.find_one())
    assert boss.test.c.find_one({"_id": "m2"}) is None
    assert [u["user"] for u in boss.admin.command("usersInfo", 1)["users"]] == ["boss"]


@test
def recreated_user_is_another_user():
    boss = connect(username="boss", password="pencil", authSource="admin")
    assert boss.admin.command("createUser", "carol", pwd="old-pw", roles=["root"])["ok"] == 1
    old = connect(username="carol", password="old-pw", authSource="admin", maxPoolSize=1)
    assert old.test.c.count_documents({"_id": "boss"}) == 1
    # A new password: rockdoc has no updateUser, so it is dropUser + createUser.
    assert boss.admin.command("dropUser", "carol")["ok"] == 1
    assert boss.admin.command("createUser", "carol", pwd="new-pw", roles=["root"])["ok"] == 1
    expect_code(13, lambda: old.test.c.count_documents({}))
    new = connect(username="carol", password="new-pw", authSource="admin")
    assert new.test.c.count_documents({"_id": "boss"}) == 1
    stale = connect(username="carol", password="old-pw", authSource="admin",
                    authMechanism="SCRAM-SHA-256")
    expect_code(18, lambda: stale.test.c.count_documents({}))


run("pymongo %s, wiresec --auth" % pymongo.version)

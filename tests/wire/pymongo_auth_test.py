#!/usr/bin/env python3
"""pymongo against `rockdoc-serve --auth`: SCRAM-SHA-256 and SCRAM-SHA-1 users.

    pymongo_auth_test.py URI      (run by run_with_server.py --server-arg=--auth)

Unauthenticated commands other than the handshake fail with Unauthorized
(13); the first user is created from this machine (the localhost
exception), after which creating users needs authentication; the right
password authenticates (SCRAM-SHA-256, chosen by the driver from hello's
saslSupportedMechs), a wrong one fails with AuthenticationFailed (18);
SCRAM-SHA-1 over MongoDB's password digest; usersInfo and dropUser. Exits 77 when
pymongo is not installed.
"""
import sys

from pymongo_harness import expect_code, pymongo, run, test  # exits 77 without pymongo

URI = sys.argv[1]


def connect(**kw):
    return pymongo.MongoClient(URI, serverSelectionTimeoutMS=5000, **kw)


@test
def unauthenticated_is_refused():
    c = connect()
    assert c.admin.command("ping")["ok"] == 1
    assert c.admin.command("hello")["isWritablePrimary"] is True
    expect_code(13, lambda: c.test.c.insert_one({"_id": 1}))
    expect_code(13, lambda: c.test.c.find_one())
    expect_code(13, lambda: c.admin.command("listDatabases"))
    expect_code(13, lambda: c.admin.command("usersInfo", 1))


@test
def first_user_by_the_localhost_exception():
    c = connect()
    assert c.admin.command("createUser", "boss", pwd="pencil", roles=["root"])["ok"] == 1
    # Only while there is no user.
    expect_code(13, lambda: c.admin.command("createUser", "other", pwd="x", roles=["root"]))


@test
def right_password_authenticates():
    c = connect(username="boss", password="pencil", authSource="admin",
                authMechanism="SCRAM-SHA-256")
    c.test.c.insert_one({"_id": 1})
    assert c.test.c.find_one() == {"_id": 1}
    # The driver's default mechanism comes from hello's saslSupportedMechs.
    d = connect(username="boss", password="pencil", authSource="admin")
    assert d.test.c.count_documents({}) == 1
    hello = c.admin.command("hello", saslSupportedMechs="admin.boss")
    assert hello["saslSupportedMechs"] == ["SCRAM-SHA-1", "SCRAM-SHA-256"], hello
    assert "saslSupportedMechs" not in c.admin.command("hello", saslSupportedMechs="admin.nobody")


@test
def wrong_password_fails():
    c = connect(username="boss", password="pencil!", authSource="admin")
    expect_code(18, lambda: c.test.c.find_one())
    # A user that does not exist gets no saslSupportedMechs, so the driver
    # falls back to SCRAM-SHA-1: no such user either.
    c = connect(username="nobody", password="pencil", authSource="admin")
    expect_code(18, lambda: c.test.c.find_one())
    c = connect(username="nobody", password="pencil", authSource="admin",
                authMechanism="SCRAM-SHA-256")
    expect_code(18, lambda: c.test.c.find_one())


@test
def scram_sha_1_with_mongodbs_password_digest():
    # The driver sends md5("boss:mongo:pencil") through SCRAM-SHA-1.
    c = connect(username="boss", password="pencil", authSource="admin",
                authMechanism="SCRAM-SHA-1")
    assert c.test.c.count_documents({}) == 1
    wrong = connect(username="boss", password="pencil!", authSource="admin",
                    authMechanism="SCRAM-SHA-1")
    expect_code(18, lambda: wrong.test.c.find_one())
    # A user made with SCRAM-SHA-256 only has no SCRAM-SHA-1 credentials.
    assert c.admin.command("createUser", "modern", pwd="pw", roles=["root"],
                           mechanisms=["SCRAM-SHA-256"])["ok"] == 1
    users = c.admin.command("usersInfo", "modern")["users"]
    assert users[0]["mechanisms"] == ["SCRAM-SHA-256"], users
    hello = c.admin.command("hello", saslSupportedMechs="admin.modern")
    assert hello["saslSupportedMechs"] == ["SCRAM-SHA-256"], hello
    old = connect(username="modern", password="pw", authSource="admin",
                  authMechanism="SCRAM-SHA-1")
    expect_code(18, lambda: old.test.c.find_one())
    assert connect(username="modern", password="pw", authSource="admin").test.c.count_documents(
        {}) == 1
    expect_code(238, lambda: c.admin.command("createUser", "x", pwd="s", roles=["root"],
                                             mechanisms=["PLAIN"]))
    assert c.admin.command("dropUser", "modern")["ok"] == 1


@test
def saslprep_passwords():
    # SASLprep (RFC 4013) maps ROMAN NUMERAL NINE to "IX" (NFKC) and drops
    # a SOFT HYPHEN, on the server (createUser) as in the driver.
    c = connect(username="boss", password="pencil", authSource="admin")
    assert c.admin.command("createUser", "nine", pwd="\u2168", roles=["root"])["ok"] == 1
    for pwd in ("\u2168", "IX", "I\u00adX"):
        n = connect(username="nine", password=pwd, authSource="admin",
                    authMechanism="SCRAM-SHA-256")
        assert n.test.c.count_documents({}) == 1, pwd
    # SCRAM-SHA-1 digests the password as given.
    n = connect(username="nine", password="\u2168", authSource="admin",
                authMechanism="SCRAM-SHA-1")
    assert n.test.c.count_documents({}) == 1
    n = connect(username="nine", password="IX", authSource="admin", authMechanism="SCRAM-SHA-1")
    expect_code(18, lambda: n.test.c.find_one())
    # A password SASLprep refuses (a control character) is refused by createUser.
    expect_code(2, lambda: c.admin.command("createUser", "bell", pwd="a\u0007", roles=["root"]))
    assert c.admin.command("dropUser", "nine")["ok"] == 1


@test
def user_management():
    c = connect(username="boss", password="pencil", authSource="admin")
    assert c.admin.command("createUser", "reader", pwd="secret", roles=["root"])["ok"] == 1
    expect_code(51003, lambda: c.admin.command("createUser", "reader", pwd="s", roles=["root"]))
    expect_code(238, lambda: c.admin.command("createUser", "x", pwd="s", roles=["read"]))
    users = c.admin.command("usersInfo", "reader")["users"]
    assert [(u["user"], u["db"], u["mechanisms"]) for u in users] == \
        [("reader", "admin", ["SCRAM-SHA-1", "SCRAM-SHA-256"])], users
    assert "credentials" not in users[0]
    assert sorted(u["user"] for u in c.admin.command("usersInfo", 1)["users"]) == ["boss", "reader"]
    r = connect(username="reader", password="secret", authSource="admin")
    assert r.test.c.count_documents({}) == 1
    assert c.admin.command("dropUser", "reader")["ok"] == 1
    expect_code(11, lambda: c.admin.command("dropUser", "reader"))
    r = connect(username="reader", password="secret", authSource="admin",
                authMechanism="SCRAM-SHA-256")
    expect_code(18, lambda: r.test.c.count_documents({}))


run("pymongo %s with --auth" % pymongo.version)

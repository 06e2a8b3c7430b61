#!/usr/bin/env python3
"""pymongo against rockdoc-serve, for the options and error shapes of issue
33 that drivers rely on: maxTimeMS accepted (and applied) by every command
a driver with a client-side timeout sends it with (#5), and duplicate key
errors carrying keyPattern and keyValue (#7).

    pymongo_findopts_test.py URI      (run by run_with_server.py)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import sys

from pymongo_harness import pymongo, run, test  # exits 77 without pymongo
from pymongo.errors import DuplicateKeyError, BulkWriteError, OperationFailure

client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
db = client.pymongo_findopts


@test
def max_time_ms_on_every_command():
    # pymongo 4.2+ sends maxTimeMS with every command under timeoutMS;
    # Debian's pymongo (3.x) has no timeoutMS, so the commands are sent as
    # such a driver sends them.
    c = db.max_time
    c.drop()
    t = {"maxTimeMS": 60000}
    assert db.command("insert", "max_time", documents=[{"_id": 1, "a": 1}, {"_id": 2, "a": 2}],
                      **t)["n"] == 2
    assert db.command("update", "max_time", updates=[{"q": {"_id": 1}, "u": {"$set": {"b": 1}}}],
                      **t)["nModified"] == 1
    r = db.command("findAndModify", "max_time", query={"_id": 2}, update={"$set": {"b": 2}},
                   new=True, **t)
    assert r["value"] == {"_id": 2, "a": 2, "b": 2}, r
    assert db.command("count", "max_time", **t)["n"] == 2
    assert sorted(db.command("distinct", "max_time", key="a", **t)["values"]) == [1, 2]
    db.command("createIndexes", "max_time", indexes=[{"key": {"a": 1}, "name": "a_1"}], **t)
    names = [i["name"] for i in db.command("listIndexes", "max_time", **t)["cursor"]["firstBatch"]]
    assert names == ["_id_", "a_1"], names
    colls = db.command("listCollections", **t)["cursor"]["firstBatch"]
    assert "max_time" in [x["name"] for x in colls]
    assert db.command("delete", "max_time", deletes=[{"q": {"_id": 1}, "limit": 1}], **t)["n"] == 1
    # The driver's own maxTimeMS options (find, count, aggregate) still apply.
    assert list(c.find({}, {"_id": 1}).max_time_ms(60000)) == [{"_id": 2}]
    assert c.count_documents({}, maxTimeMS=60000) == 1
    # And a limit out of range is MongoDB's error.
    try:
        db.command("insert", "max_time", documents=[{"_id": 3}], maxTimeMS=-1)
        assert False, "expected an error"
    except OperationFailure as e:
        assert e.code in (2, 51024), e.details


@test
def duplicate_keys_carry_key_pattern_and_key_value():
    c = db.dups
    c.drop()
    c.create_index([("email", 1)], unique=True)
    c.insert_one({"_id": 1, "email": "a@x"})
    try:
        c.insert_one({"_id": 2, "email": "a@x"})
        assert False, "expected a DuplicateKeyError"
    except DuplicateKeyError as e:
        assert e.code == 11000
        assert e.details["keyPattern"] == {"email": 1}, e.details
        assert e.details["keyValue"] == {"email": "a@x"}, e.details
        assert e.details["errmsg"] == ("E11000 duplicate key error collection: "
                                       "pymongo_findopts.dups index: email_1 dup key: "
                                       "{ email: \"a@x\" }"), e.details
    try:
        c.insert_many([{"_id": 3, "email": "b@x"}, {"_id": 1}])
        assert False, "expected a BulkWriteError"
    except BulkWriteError as e:
        err = e.details["writeErrors"][0]
        assert err["index"] == 1 and err["code"] == 11000, err
        assert err["keyPattern"] == {"_id": 1} and err["keyValue"] == {"_id": 1}, err
    try:
        c.find_one_and_update({"_id": 3}, {"$set": {"email": "a@x"}})
        assert False, "expected a DuplicateKeyError"
    except DuplicateKeyError as e:
        assert e.details["keyPattern"] == {"email": 1}, e.details
        assert e.details["keyValue"] == {"email": "a@x"}, e.details


run("pymongo %s" % pymongo.version)

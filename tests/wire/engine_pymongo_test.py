#!/usr/bin/env python3
"""pymongo against rockdoc-serve, for the engine branch's items: commands
MongoDB does not run in a transaction are refused in one (issue #33.2); a
collection a transaction creates is its own until it commits (#33.3).

    engine_pymongo_test.py URI      (run by run_with_server.py)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import sys

from pymongo_harness import expect_code, pymongo, run, test  # exits 77 without pymongo
from pymongo.errors import OperationFailure

client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
db = client.engine_pymongo_test
@test
def rename_collection_is_refused_in_a_transaction():
    db.drop_collection("c")
    db.drop_collection("d")
    db.c.insert_one({"_id": 1})
    with client.start_session() as s:
        s.start_transaction()
        db.c.insert_one({"_id": 2}, session=s)
        e = expect_code(263, lambda: db.c.rename("d", session=s))
        assert "Cannot run 'renameCollection' in a multi-document transaction." in str(e), e.details
        expect_code(263, lambda: db.command("count", "c", session=s))
        expect_code(263, lambda: db.c.drop_indexes(session=s))
        s.abort_transaction()
    # Nothing of the rename happened, and the abort took the insert away.
    assert db.list_collection_names(filter={"name": {"$in": ["c", "d"]}}) == ["c"]
    assert list(db.c.find()) == [{"_id": 1}]
    # Outside a transaction the same session renames.
    with client.start_session() as s:
        db.c.rename("d", session=s)
    assert list(db.d.find()) == [{"_id": 1}]


def names(*wanted):
    return sorted(db.list_collection_names(filter={"name": {"$in": list(wanted)}}))


@test
def a_collection_created_in_a_transaction_is_its_until_commit():
    for n in ("fresh", "made"):
        db.drop_collection(n)
    with client.start_session() as s:
        s.start_transaction()
        db.fresh.insert_one({"_id": 1}, session=s)
        db.command("create", "made", session=s)
        assert db.fresh.count_documents({}, session=s) == 1
        # Another reader (no session) sees neither.
        assert names("fresh", "made") == [], names("fresh", "made")
        assert list(db.fresh.find()) == []
        s.abort_transaction()
    assert names("fresh", "made") == []
    with client.start_session() as s:
        s.start_transaction()
        db.fresh.insert_one({"_id": 1}, session=s)
        db.command("create", "made", session=s)
        s.commit_transaction()
    assert names("fresh", "made") == ["fresh", "made"]
    assert list(db.fresh.find()) == [{"_id": 1}]
    # An index on a collection the transaction creates is the transaction's too.
    db.drop_collection("indexed")
    with client.start_session() as s:
        s.start_transaction()
        db.indexed.create_index("a", session=s)
        db.indexed.insert_one({"_id": 1, "a": 5}, session=s)
        assert names("indexed") == []
        s.commit_transaction()
    assert [i["name"] for i in db.indexed.list_indexes()] == ["_id_", "a_1"]
    assert list(db.indexed.find({"a": 5}).hint("a_1")) == [{"_id": 1, "a": 5}]


@test
def two_transactions_creating_one_collection_one_wins():
    db.drop_collection("raced")
    with client.start_session() as first, client.start_session() as second:
        first.start_transaction()
        db.raced.insert_one({"_id": 1}, session=first)
        second.start_transaction()
        try:
            db.raced.insert_one({"_id": 2}, session=second)
            raise AssertionError("the second creator was not refused")
        except OperationFailure as e:
            assert e.code == 112, e.details
            assert e.has_error_label("TransientTransactionError"), e.details
        second.abort_transaction()
        first.commit_transaction()
        # The loser's retry, as with_transaction would do it.
        second.start_transaction()
        db.raced.insert_one({"_id": 2}, session=second)
        second.commit_transaction()
    assert sorted(d["_id"] for d in db.raced.find()) == [1, 2]


run("pymongo %s" % pymongo.version)

#!/usr/bin/env python3
"""pymongo against rockdoc-serve with collations (issue 39): `collation=` on
find, count_documents, distinct, update_many, delete_many,
find_one_and_update and create_index (pymongo's Collation and plain
documents), a unique index at strength 2 refusing case variants, a
collection's default collation, and invalid collations' error codes.

    pymongo_collation_test.py URI      (run by run_with_server.py)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import sys

from pymongo_harness import pymongo, expect_code, run_tests, test  # exits 77 without pymongo
from pymongo.collation import Collation, CollationStrength
from pymongo.errors import DuplicateKeyError

client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
db = client.pymongo_collation
CI = Collation(locale="en", strength=CollationStrength.SECONDARY)


@test
def crud_with_collation():
    c = db.names
    c.drop()
    c.insert_many([{"_id": 1, "s": "Alice"}, {"_id": 2, "s": "alice"}, {"_id": 3, "s": "Émile"},
                   {"_id": 4, "s": "bob"}])
    assert [d["_id"] for d in c.find({"s": "ALICE"}, collation=CI).sort("_id")] == [1, 2]
    assert [d["s"] for d in c.find({}, collation={"locale": "en"}).sort([("s", 1), ("_id", 1)])] \
        == ["alice", "Alice", "bob", "Émile"]
    assert c.count_documents({"s": "emile"}, collation=Collation("fr", strength=1)) == 1
    assert len(c.distinct("s", collation=CI)) == 3
    assert c.update_many({"s": "ALICE"}, {"$set": {"k": 1}}, collation=CI).modified_count == 2
    v = c.find_one_and_update({"s": "BOB"}, {"$set": {"k": 2}}, collation=CI,
                              return_document=pymongo.ReturnDocument.AFTER)
    assert v["k"] == 2, v
    assert c.delete_many({"s": "ALICE"}, collation=CI).deleted_count == 2
    expect_code(9, lambda: list(c.find({}, collation={"locale": "en", "strength": 7})))
    expect_code(2, lambda: list(c.find({}, collation={"locale": "nowhere"})))


@test
def unique_index_and_collection_default():
    users = db.users
    users.drop()
    users.create_index("user", unique=True, collation=CI)
    users.insert_one({"user": "Alice"})
    try:
        users.insert_one({"user": "alice"})
        assert False, "expected a duplicate key"
    except DuplicateKeyError as e:
        assert "collation: { locale: \"en\"" in str(e), str(e)
    info = users.index_information()["user_1"]
    assert info["collation"]["strength"] == 2, info
    db.drop_collection("fr")
    db.create_collection("fr", collation=Collation("fr", strength=1))
    db.fr.insert_one({"s": "élan"})
    assert db.fr.count_documents({"s": "ELAN"}) == 1
    assert db.fr.options()["collation"]["locale"] == "fr"


run_tests()

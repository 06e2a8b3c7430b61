#!/usr/bin/env python3
"""pymongo against rockdoc-serve, for find's cursor options of issue 33
(item 9): min/max with a hint, return_key, show_record_id, and a
TAILABLE_AWAIT cursor on a capped collection that returns a document
inserted after it opened.

    pymongo_findext_test.py URI      (run by run_with_server.py)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import sys
import threading

from pymongo_harness import pymongo, expect_code, run_tests, test  # exits 77 without pymongo
from pymongo import CursorType

client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
db = client.pymongo_findext


def numbers():
    c = db.numbers
    c.drop()
    c.insert_many([{"_id": i, "a": i} for i in range(10)])
    c.create_index([("a", 1)], name="a_1")
    return c


@test
def min_max_with_a_hint():
    c = numbers()
    got = list(c.find({}, {"_id": 0}).hint([("a", 1)]).min([("a", 3)]).max([("a", 6)]))
    assert got == [{"a": 3}, {"a": 4}, {"a": 5}], got
    got = list(c.find({"a": {"$ne": 4}}, {"_id": 0}).hint("a_1").min([("a", 3)]).max([("a", 6)]))
    assert got == [{"a": 3}, {"a": 5}], got
    expect_code(51173, lambda: db.command("find", "numbers", min={"a": 3}))
    expect_code(51174, lambda: list(c.find().hint("a_1").min([("b", 3)])))


@test
def return_key_and_show_record_id():
    c = numbers()
    got = list(c.find({"a": {"$gte": 8}}, return_key=True).hint("a_1"))
    assert got == [{"a": 8}, {"a": 9}], got
    first = list(c.find({"_id": 1}, show_record_id=True))
    again = list(c.find({"a": 1}, show_record_id=True).hint("a_1"))
    assert "$recordId" in first[0], first
    assert first[0]["$recordId"] == again[0]["$recordId"], (first, again)
    db.drop_collection("log")
    log = db.create_collection("log", capped=True, size=100000)
    log.insert_many([{"_id": "x"}, {"_id": "y"}])
    ids = [d["$recordId"] for d in log.find(show_record_id=True)]
    assert ids == [1, 2], ids


@test
def tailable_await_cursor_gets_a_later_insert():
    db.drop_collection("tail")
    tail = db.create_collection("tail", capped=True, size=100000)
    tail.insert_one({"_id": 1})
    cursor = tail.find(cursor_type=CursorType.TAILABLE_AWAIT)
    assert next(cursor) == {"_id": 1}
    got = []
    # next() on a TAILABLE_AWAIT cursor sends awaitData getMores until a
    # document comes: the insert below is what ends it.
    waiter = threading.Thread(target=lambda: got.append(next(cursor)))
    waiter.start()
    tail.insert_one({"_id": 2, "x": "later"})
    waiter.join(120)
    assert not waiter.is_alive(), "the tailing cursor never returned the insert"
    assert got == [{"_id": 2, "x": "later"}], got
    assert cursor.alive
    cursor.close()
    # A cursor over a collection that is not capped is MongoDB's error (sent
    # as a command: pymongo 3.11's tailable Cursor keeps a failed find to
    # itself and just ends).
    numbers()
    expect_code(2, lambda: db.command("find", "numbers", tailable=True))


run_tests()

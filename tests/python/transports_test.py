#!/usr/bin/env python3
"""One test file, two transports (issue 42): every case runs against the
binding in process (rockdoc.MongoClient over a fresh directory) and against
pymongo talking to rockdoc-serve (the URI argument), asserts what it knows
to be true on each, and then asserts that both gave the same outcome: the
same result values, or the same exception class and code.

    transports_test.py mongodb://127.0.0.1:PORT/     (run_with_server.py's {uri})

Run by CTest (python_binding_transports) with the venv of the install check
(fixture python_venv), where `rockdoc` is the installed package.
"""
import datetime
import os
import shutil
import sys
import tempfile
import threading
import traceback
import uuid

import bson
import pymongo
from bson.binary import Binary
from bson.codec_options import CodecOptions
from bson.decimal128 import Decimal128
from bson.errors import InvalidDocument
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.son import SON
from pymongo import ReturnDocument
from pymongo.client_session import TransactionOptions
from pymongo.collation import Collation
from pymongo.read_concern import ReadConcern
from pymongo.read_preferences import Secondary
from pymongo.write_concern import WriteConcern
from pymongo.errors import (BulkWriteError, CollectionInvalid, DuplicateKeyError,
                            OperationFailure, WriteError)
from pymongo.operations import (DeleteMany, DeleteOne, IndexModel, InsertOne, ReplaceOne,
                                UpdateMany, UpdateOne)

import rockdoc

CASES = []


def case(f):
    CASES.append(f)
    return f


def outcome(f, *args, **kwargs):
    """What a call gave, in a form both transports can be compared by: its
    value, or ("raised", class name, code)."""
    try:
        value = f(*args, **kwargs)
        # pymongo's result objects compare by identity: compare what they say.
        # (less a server's gossip: $clusterTime, operationTime).
        if hasattr(value, "raw_result"):
            value = (type(value).__name__,
                     {k: v for k, v in value.raw_result.items()
                      if not k.startswith("$") and k != "operationTime"})
        return ("ok", value)
    except OperationFailure as e:
        return ("raised", type(e).__name__, e.code)
    except (TypeError, ValueError) as e:
        return ("raised", type(e).__name__, str(e))
    except InvalidDocument as e:  # DocumentTooLarge, raised before sending
        return ("raised", type(e).__name__)


def raises(cls, code, f, *args, **kwargs):
    try:
        f(*args, **kwargs)
    except cls as e:
        assert type(e) is cls, (type(e), cls)
        assert e.code == code, (e.code, code, e.details)
        return e
    raise AssertionError("expected %s %s" % (cls.__name__, code))


@case
def crud(db):
    c = db.crud
    r = c.insert_one({"_id": 1, "a": 1})
    assert isinstance(r, pymongo.results.InsertOneResult) and r.inserted_id == 1
    doc = {"a": 2}
    r = c.insert_one(doc)
    assert isinstance(r.inserted_id, ObjectId) and doc["_id"] == r.inserted_id
    c.delete_one({"_id": r.inserted_id})
    r = c.insert_many([{"_id": i, "a": i % 3, "b": i} for i in range(2, 10)])
    assert isinstance(r, pymongo.results.InsertManyResult) and r.inserted_ids == list(range(2, 10))
    found = list(c.find({"a": {"$gte": 1}}, {"_id": 1, "b": 1}).sort([("b", -1)]).skip(1).limit(3))
    # b descending: 8, 7, 5, 4, 2, then _id 1 (no b sorts first ascending, last here).
    assert found == [{"_id": 7, "b": 7}, {"_id": 5, "b": 5}, {"_id": 4, "b": 4}], found
    assert c.find_one({"b": 4}) == {"_id": 4, "a": 1, "b": 4}
    assert c.find_one(4) == {"_id": 4, "a": 1, "b": 4}
    assert c.find_one({"b": 99}) is None
    u = c.update_one({"_id": 2}, {"$set": {"x": 1}})
    assert isinstance(u, pymongo.results.UpdateResult)
    assert (u.matched_count, u.modified_count, u.upserted_id) == (1, 1, None)
    u = c.update_many({"a": 0}, {"$inc": {"b": 100}})
    assert (u.matched_count, u.modified_count) == (3, 3)
    u = c.update_one({"_id": 50}, {"$set": {"b": 50}}, upsert=True)
    assert (u.matched_count, u.modified_count, u.upserted_id) == (0, 0, 50)
    u = c.replace_one({"_id": 3}, {"r": True})
    assert (u.matched_count, u.modified_count) == (1, 1)
    assert c.find_one({"_id": 3}) == {"_id": 3, "r": True}
    d = c.delete_many({"a": 0})  # 6 and 9 (3 was replaced)
    assert isinstance(d, pymongo.results.DeleteResult) and d.deleted_count == 2
    assert c.delete_one({"_id": 99}).deleted_count == 0
    assert c.count_documents({}) == 8 and c.count_documents({"a": 1}, skip=1, limit=1) == 1
    assert c.estimated_document_count() == 8
    assert sorted(c.distinct("a")) == [1, 2]
    return [r.inserted_ids, found, u.raw_result.get("n"), sorted(c.find(), key=lambda d: d["_id"])]


@case
def bson_types(db):
    c = db.types
    when = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000)
    value = {"_id": ObjectId("5f0000000000000000000001"), "dec": Decimal128("1.10"),
             "bin": Binary(b"\x00\x01", 0), "uuid": Binary(uuid.UUID(int=7).bytes, 4),
             "when": when, "long": Int64(1 << 40), "int": 5, "double": 2.5,
             "re": Regex("^a", "i"), "nested": {"list": [1, "two", None]}}
    c.insert_one(dict(value))
    got = c.find_one({"dec": Decimal128("1.1")})
    assert got["dec"] == Decimal128("1.10") and got["when"] == when, got
    assert type(got["long"]) is Int64 and got["re"] == Regex("^a", "i"), got
    ordered = c.with_options(codec_options=CodecOptions(document_class=SON)).find_one()
    assert type(ordered) is SON and list(ordered)[:3] == ["_id", "dec", "bin"], ordered
    aware = c.with_options(codec_options=CodecOptions(tz_aware=True)).find_one()
    assert aware["when"].tzinfo is not None
    assert aware["when"] == when.replace(tzinfo=datetime.timezone.utc)
    return [got, aware["when"]]


@case
def cursors(db):
    c = db.cur
    c.insert_many([{"_id": i, "k": i % 4} for i in range(25)])
    cursor = c.find({}, batch_size=3).sort("_id")
    first = next(cursor)
    assert first == {"_id": 0, "k": 0} and cursor.cursor_id
    rest = list(cursor)
    assert [d["_id"] for d in rest] == list(range(1, 25)) and not cursor.alive
    c.create_index("k")
    hinted = list(c.find({"k": 2}).hint([("k", 1)]).sort("_id", -1).limit(-2))
    assert hinted == [{"_id": 22, "k": 2}, {"_id": 18, "k": 2}], hinted
    plan = c.find({"k": 2}).explain()["queryPlanner"]["winningPlan"]
    stages = []
    while plan:
        stages.append((plan["stage"], plan.get("indexName")))
        plan = plan.get("inputStage")
    assert stages == [("FETCH", None), ("IXSCAN", "k_1")], stages
    assert c.find().sort("_id")[3] == {"_id": 3, "k": 3}
    sliced = list(c.find({}, {"k": 0}).sort("_id")[5:8])
    assert sliced == [{"_id": 5}, {"_id": 6}, {"_id": 7}], sliced
    try:
        c.find()[99]
        raise AssertionError("cursor[99] of 25 documents")
    except IndexError:
        pass
    partial = c.find().batch_size(2)
    next(partial)
    partial.close()  # the server-side cursor killed: nothing left open
    aggregated = list(c.aggregate([{"$match": {"k": {"$lt": 2}}},
                                   {"$group": {"_id": "$k", "n": {"$sum": 1}}},
                                   {"$sort": {"_id": 1}}], batchSize=1))
    assert aggregated == [{"_id": 0, "n": 7}, {"_id": 1, "n": 6}], aggregated
    return [rest, hinted, stages, aggregated, sliced]


@case
def indexes(db):
    c = db.idx
    c.insert_one({"_id": 1, "a": 1, "b": "x"})
    assert c.create_index([("a", 1), ("b", -1)]) == "a_1_b_-1"
    assert c.create_indexes([IndexModel("b", name="b_u", unique=True),
                             IndexModel([("a", -1)], sparse=True)]) == ["b_u", "a_-1"]
    names = sorted(ix["name"] for ix in c.list_indexes())
    assert names == ["_id_", "a_-1", "a_1_b_-1", "b_u"], names
    info = c.index_information()
    assert info["a_1_b_-1"]["key"] == [("a", 1), ("b", -1)] and info["b_u"]["unique"]
    c.drop_index("a_-1")
    c.drop_index([("a", 1), ("b", -1)])
    e = raises(OperationFailure, 27, c.drop_index, "nope")
    assert e.details["codeName"] == "IndexNotFound"
    return [names, sorted(c.index_information())]


@case
def find_and_modify(db):
    c = db.fam
    c.insert_many([{"_id": i, "n": i} for i in range(5)])
    before = c.find_one_and_update({"n": {"$gte": 2}}, {"$inc": {"n": 10}}, sort=[("n", -1)])
    assert before == {"_id": 4, "n": 4}, before
    after = c.find_one_and_update({"_id": 1}, {"$set": {"t": 1}}, projection={"_id": 0},
                                  return_document=ReturnDocument.AFTER)
    assert after == {"n": 1, "t": 1}, after
    upserted = c.find_one_and_replace({"_id": 9}, {"n": 9}, upsert=True,
                                      return_document=ReturnDocument.AFTER)
    assert upserted == {"_id": 9, "n": 9}
    deleted = c.find_one_and_delete({"n": 0})
    assert deleted == {"_id": 0, "n": 0} and c.find_one({"_id": 0}) is None
    assert c.find_one_and_delete({"n": 99}) is None
    return [before, after, upserted, deleted]


@case
def bulk(db):
    c = db.bulk
    result = c.bulk_write([InsertOne({"_id": 1, "v": 1}), InsertOne({"_id": 2, "v": 2}),
                           UpdateOne({"_id": 1}, {"$inc": {"v": 1}}),
                           UpdateMany({}, {"$set": {"w": True}}),
                           UpdateOne({"_id": 3}, {"$set": {"v": 3}}, upsert=True),
                           ReplaceOne({"_id": 2}, {"v": 20}), DeleteOne({"_id": 1}),
                           DeleteMany({"v": {"$gt": 100}})])
    assert isinstance(result, pymongo.results.BulkWriteResult)
    counts = (result.inserted_count, result.matched_count, result.modified_count,
              result.upserted_count, result.deleted_count, result.upserted_ids)
    assert counts == (2, 4, 4, 1, 1, {4: 3}), counts
    e = raises(BulkWriteError, 65, c.insert_many,
               [{"_id": 10}, {"_id": 2}, {"_id": 11}, {"_id": 3}, {"_id": 12}], ordered=False)
    details = e.details
    assert details["nInserted"] == 3, details
    assert [(w["index"], w["code"]) for w in details["writeErrors"]] == [(1, 11000), (3, 11000)]
    e = raises(BulkWriteError, 65, c.insert_many, [{"_id": 20}, {"_id": 2}, {"_id": 21}])
    assert e.details["nInserted"] == 1 and c.find_one({"_id": 21}) is None
    return [counts, details["nInserted"], [w["index"] for w in details["writeErrors"]],
            [w["op"] for w in details["writeErrors"]], sorted(c.find(), key=lambda d: d["_id"])]


@case
def errors(db):
    c = db.err
    c.insert_one({"_id": 1, "u": 1})
    c.create_index("u", unique=True)
    e = raises(DuplicateKeyError, 11000, c.insert_one, {"_id": 1})
    assert e.details["keyValue"] == {"_id": 1}, e.details
    raises(DuplicateKeyError, 11000, c.update_one, {"_id": 5}, {"$set": {"u": 1}}, upsert=True)
    raises(DuplicateKeyError, 11000, c.find_one_and_update, {"_id": 6}, {"$set": {"u": 1}},
           upsert=True)
    bad_filter = raises(OperationFailure, 2, lambda: list(c.find({"$nope": 1})))
    assert bad_filter.details["codeName"] == "BadValue"
    raises(WriteError, 9, c.update_one, {"_id": 1}, {"$nope": {"a": 1}})
    raises(OperationFailure, 40324, lambda: list(c.aggregate([{"$nope": {}}])))
    outcomes = [outcome(c.update_one, {}, {"a": 1}), outcome(c.replace_one, {}, {"$set": {}}),
                outcome(c.insert_one, {"_id": 1}),
                outcome(lambda: list(c.find({"a": {"$in": 5}}))),
                outcome(db.command, "nosuchcommand"),
                outcome(c.insert_one, {"big": "x" * (16 * 1024 * 1024)}),
                outcome(c.insert_many, [{"_id": 7}, {"big": "x" * (16 * 1024 * 1024)}]),
                outcome(lambda: list(c.find({}, {"_id": 1}, collation=Collation("en")))),
                outcome(lambda: list(c.find({}, {"_id": 1}).collation(Collation("simple")))),
                outcome(c.update_one, {"_id": 1}, {"$set": {"v": 1}},
                        collation=Collation("fr", strength=2))]
    assert outcomes[0] == ("raised", "ValueError", "update only works with $ operators")
    assert outcomes[3] == ("raised", "OperationFailure", 2), outcomes
    assert outcomes[4] == ("raised", "OperationFailure", 59), outcomes
    # Past 16 MiB: the statement's write error, BadValue, as mongod answers.
    assert outcomes[5] == ("raised", "WriteError", 2), outcomes
    assert outcomes[6] == ("raised", "BulkWriteError", 65), outcomes
    exactly = {"_id": "16MiB", "s": ""}
    exactly["s"] = "x" * (16 * 1024 * 1024 - len(bson.encode(exactly)))
    assert len(bson.encode(exactly)) == 16 * 1024 * 1024
    db.big.insert_one(exactly)  # the largest document there is
    assert db.big.count_documents({"_id": "16MiB"}) == 1
    db.create_collection("made")
    try:
        db.create_collection("made")
        raise AssertionError("a second create_collection was accepted")
    except CollectionInvalid:
        pass
    return outcomes


@case
def sessions(db, client):
    c = db.txn
    c.insert_one({"_id": 0})
    with client.start_session() as s:
        def callback(session):
            c.insert_one({"_id": 1}, session=session)
            c.update_one({"_id": 0}, {"$set": {"t": 1}}, session=session)
            return c.count_documents({}, session=session)
        assert s.with_transaction(callback) == 2
        s.start_transaction()
        c.insert_one({"_id": 2}, session=s)
        assert c.find_one({"_id": 2}) is None  # not committed: outside, unseen
        s.abort_transaction()
        assert not s.in_transaction
        with s.start_transaction():
            c.insert_one({"_id": 3}, session=s)
        s.start_transaction()
        c.insert_one({"_id": 4}, session=s)
        conflict = raises(DuplicateKeyError, 11000, c.insert_one, {"_id": 4}, session=s)
        labels = [conflict.has_error_label("TransientTransactionError")]
        s.abort_transaction()
    return [sorted(d["_id"] for d in c.find()), c.find_one({"_id": 0}), labels]


@case
def change_streams(db):
    c = db.cs
    with c.watch(max_await_time_ms=50) as stream:
        assert stream.try_next() is None
        c.insert_one({"_id": 1, "x": 1})
        c.update_one({"_id": 1}, {"$set": {"x": 2}})
        event = stream.next()
        assert event["operationType"] == "insert" and event["fullDocument"] == {"_id": 1, "x": 1}
        token = stream.resume_token
        update = stream.next()
        assert update["updateDescription"]["updatedFields"] == {"x": 2}, update
    with c.watch(resume_after=token, max_await_time_ms=50) as resumed:
        again = resumed.next()
        assert again["operationType"] == "update" and again["documentKey"] == {"_id": 1}
    return [event["operationType"], event["documentKey"], update["updateDescription"],
            again["operationType"]]


@case
def database_and_client_streams(db, client):
    with db.watch(max_await_time_ms=50) as database_stream, \
            client.watch(max_await_time_ms=50) as client_stream:
        db.one.insert_one({"_id": 1})
        db.two.insert_one({"_id": 2})
        seen = [(e["ns"]["coll"], e["documentKey"]["_id"]) for e in (database_stream.next(),
                                                                   database_stream.next())]
        assert seen == [("one", 1), ("two", 2)], seen
        first = client_stream.next()
        assert first["ns"] == {"db": db.name, "coll": "one"}, first["ns"]
    return seen


@case
def concerns(db, client):
    durable = db.wc.with_options(write_concern=WriteConcern(w="majority", j=True))
    assert durable.write_concern.document == {"w": "majority", "j": True}
    durable.insert_one({"_id": 1})
    durable.update_one({"_id": 1}, {"$set": {"a": 1}})
    durable.bulk_write([InsertOne({"_id": 2}), DeleteOne({"_id": 2})])
    majority = db.get_collection("wc", read_concern=ReadConcern("majority"))
    assert majority.find_one() == {"_id": 1, "a": 1}
    assert majority.count_documents({}) == 1 and majority.distinct("a") == [1]
    outcomes = [outcome(lambda: list(db.get_collection(
                    "wc", read_concern=ReadConcern("linearizable")).find())),
                outcome(db.wc.with_options(write_concern=WriteConcern(w=2)).insert_one,
                        {"_id": 3})]
    assert outcomes[0][0] == "raised" and outcomes[1][0] == "raised", outcomes
    with client.start_session(default_transaction_options=TransactionOptions(
            read_concern=ReadConcern("snapshot"),
            write_concern=WriteConcern(w="majority"))) as s:
        s.with_transaction(lambda s: db.wc.insert_one({"_id": 4}, session=s),
                           max_commit_time_ms=5000)
        with s.start_transaction(read_concern=ReadConcern("local")):
            db.wc.insert_one({"_id": 5}, session=s)
    return [sorted(d["_id"] for d in db.wc.find()), outcomes]


@case
def threads(db):
    c = db.threads
    failures = []

    def writer(t):
        try:
            c.insert_many([{"_id": t * 1000 + i, "t": t} for i in range(200)])
        except Exception as e:  # reported below
            failures.append(e)
    workers = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not failures, failures
    counts = [c.count_documents({"t": t}) for t in range(4)]
    assert counts == [200] * 4, counts
    return counts


def binding_only(scratch):
    """What only the binding has: its targets, its refusals of options it
    does not implement, and the GIL released during an engine call."""
    # One version for the package and the library it was built against
    # (pyproject.toml and CMakeLists.txt's project version).
    assert rockdoc.__version__ == rockdoc.engine_version(), (rockdoc.__version__,
                                                             rockdoc.engine_version())
    path = os.path.join(scratch, "own")
    with rockdoc.MongoClient(path) as client:
        client.app.c.insert_one({"_id": 1})
    with rockdoc.MongoClient("rockdoc://" + os.path.abspath(path)) as client:
        assert client.app.c.find_one() == {"_id": 1}
    with rockdoc.MongoClient(":memory:") as client:
        assert client.app.c.count_documents({}) == 0
    for bad in ({"readPreference": "secondary"}, {"maxPoolSize": 5},
                {"read_preference": Secondary()}):
        try:
            rockdoc.MongoClient(":memory:", **bad)
            raise AssertionError("accepted %r" % bad)
        except pymongo.errors.ConfigurationError as e:
            assert "not supported by rockdoc" in str(e), e
    # Unacknowledged writes are the engine's to refuse (238), never an
    # unacknowledged result for a write that did not happen.
    with rockdoc.MongoClient(":memory:", w=0) as client:
        raises(OperationFailure, 238, client.app.c.insert_one, {"_id": 1})
        assert client.app.c.find_one() is None
    try:
        rockdoc.MongoClient("mongodb://localhost/")
        raise AssertionError("accepted a mongodb:// URI")
    except pymongo.errors.ConfigurationError:
        pass
    # A getMore that waits for a change-stream event blocks in the engine;
    # another thread's insert, which needs the GIL, must run meanwhile and
    # wake it. Were the GIL held, the wait would end empty (after 60 s).
    with rockdoc.MongoClient(path) as client:
        c = client.app.gil
        with c.watch(max_await_time_ms=60000) as stream:
            waiting = threading.Event()

            def insert():
                waiting.wait()
                c.insert_one({"_id": "woke"})
            writer = threading.Thread(target=insert)
            writer.start()
            waiting.set()
            event = stream.try_next()
            writer.join()
            assert event is not None and event["documentKey"] == {"_id": "woke"}, event
    print("pass binding_only")


def run_case(f, client):
    db = client["transports_%s" % f.__name__]
    client.drop_database(db.name)
    if f.__code__.co_argcount == 2:
        return f(db, client)
    return f(db)


def main():
    uri = sys.argv[1]
    rs_uri = uri + ("&" if "?" in uri else "?") + "replicaSet=rs0"
    scratch = tempfile.mkdtemp(prefix="rockdoc-transports-")
    failed = 0
    try:
        embedded = rockdoc.MongoClient(os.path.join(scratch, "db"))
        remote = pymongo.MongoClient(rs_uri, serverSelectionTimeoutMS=5000)
        for f in CASES:
            results = {}
            try:
                for name, client in (("binding", embedded), ("pymongo", remote)):
                    try:
                        results[name] = run_case(f, client)
                    except Exception:
                        raise AssertionError("%s over %s:\n%s" % (f.__name__, name,
                                                                  traceback.format_exc()))
                assert results["binding"] == results["pymongo"], (
                    "the transports differ:\n binding: %r\n pymongo: %r" % (
                        results["binding"], results["pymongo"]))
                print("pass", f.__name__)
            except AssertionError as e:
                failed += 1
                print("FAIL", f.__name__, e)
        embedded.close()
        remote.close()
        try:
            binding_only(scratch)
        except AssertionError as e:
            failed += 1
            print("FAIL binding_only", e, traceback.format_exc())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("rockdoc %s, pymongo %s: %d of %d cases gave the same outcome both ways" % (
        rockdoc.engine_version(), pymongo.version, len(CASES) - failed, len(CASES)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

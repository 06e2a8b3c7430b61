#!/usr/bin/env python3
"""pymongo (Debian's python3-pymongo) against rockdoc-serve: CRUD, indexes,
explain, bulk writes, a cursor across several batches, sessions, a
transaction (committed and aborted), aggregation, and the replica set of one
(replicaSet= in the URI, watch(), a causally consistent session), and
Decimal128 arithmetic checked against Python's decimal module.

    pymongo_test.py URI      (run by run_with_server.py, which gives the URI)

Exits 77 (a CTest skip) when pymongo is not installed.
"""
import decimal
import random
import sys

from bson.decimal128 import Decimal128
from pymongo_harness import expect_code, pymongo, run, test  # exits 77 without pymongo
from pymongo import HASHED, InsertOne, UpdateOne, DeleteOne, ReplaceOne
from pymongo.errors import DuplicateKeyError, OperationFailure, BulkWriteError

client = pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000)
db = client.pymongo_test


@test
def handshake():
    hello = client.admin.command("hello")
    assert hello["isWritablePrimary"] is True, hello
    assert hello["maxWireVersion"] == 21, hello
    assert hello["maxMessageSizeBytes"] == 48000000, hello
    assert hello["maxBsonObjectSize"] == 16777216, hello
    assert hello["maxWriteBatchSize"] == 100000, hello
    assert hello["logicalSessionTimeoutMinutes"] == 30, hello
    assert client.admin.command("ping")["ok"] == 1


@test
def crud():
    c = db.crud
    c.drop()
    r = c.insert_one({"_id": 1, "name": "a", "n": 1})
    assert r.inserted_id == 1
    assert c.insert_many([{"_id": i, "n": i} for i in range(2, 11)]).inserted_ids == list(range(2, 11))
    assert c.count_documents({}) == 10
    assert c.count_documents({"n": {"$gt": 5}}) == 5
    assert c.find_one({"_id": 1}) == {"_id": 1, "name": "a", "n": 1}
    assert [d["_id"] for d in c.find({"n": {"$lte": 3}}).sort("n", -1)] == [3, 2, 1]
    assert c.find_one({"_id": 2}, {"_id": 0, "n": 1}) == {"n": 2}
    assert c.update_one({"_id": 1}, {"$inc": {"n": 100}}).modified_count == 1
    assert c.find_one({"_id": 1})["n"] == 101
    assert c.update_many({"n": {"$lt": 5}}, {"$set": {"small": True}}).modified_count == 3
    r = c.update_one({"_id": 99}, {"$set": {"n": 99}}, upsert=True)
    assert r.upserted_id == 99
    assert c.replace_one({"_id": 99}, {"x": "replaced"}).modified_count == 1
    assert c.find_one({"_id": 99}) == {"_id": 99, "x": "replaced"}
    doc = c.find_one_and_update({"_id": 2}, {"$set": {"n": 20}},
                                return_document=pymongo.ReturnDocument.AFTER)
    assert doc["n"] == 20
    assert c.delete_one({"_id": 99}).deleted_count == 1
    assert c.delete_many({"small": True}).deleted_count == 3  # _id 2, 3 and 4
    assert sorted(c.distinct("n", {"n": {"$gt": 8}})) == [9, 10, 101]
    try:
        c.insert_one({"_id": 1})
        raise AssertionError("duplicate _id accepted")
    except DuplicateKeyError as e:
        assert e.code == 11000


@test
def indexes_and_explain():
    c = db.idx
    c.drop()
    c.insert_many([{"_id": i, "k": i % 50, "s": str(i)} for i in range(500)])
    assert c.create_index([("k", 1)]) == "k_1"
    assert c.create_index([("s", 1)], unique=True, name="s_unique") == "s_unique"
    names = sorted(i["name"] for i in c.list_indexes())
    assert names == ["_id_", "k_1", "s_unique"], names
    plan = c.find({"k": 7}).explain()
    winning = plan["queryPlanner"]["winningPlan"]
    assert winning["stage"] == "FETCH" and winning["inputStage"]["stage"] == "IXSCAN", winning
    assert winning["inputStage"]["indexName"] == "k_1"
    assert plan["executionStats"]["nReturned"] == 10
    assert plan["executionStats"]["totalDocsExamined"] == 10
    try:
        c.insert_one({"_id": 1000, "s": "3"})
        raise AssertionError("unique index not enforced")
    except DuplicateKeyError:
        pass
    # A hidden index (create_index(hidden=True), collMod index.hidden): not
    # planned with, still enforced.
    assert c.create_index([("h", 1)], hidden=True) == "h_1"
    assert next(i for i in c.list_indexes() if i["name"] == "h_1")["hidden"] is True
    assert c.find({"h": 1}).explain()["queryPlanner"]["winningPlan"]["stage"] == "COLLSCAN"
    r = db.command("collMod", "idx", index={"name": "s_unique", "hidden": True})
    assert (r["hidden_old"], r["hidden_new"]) == (False, True), r
    try:
        c.insert_one({"_id": 1001, "s": "3"})
        raise AssertionError("a hidden unique index not enforced")
    except DuplicateKeyError:
        pass
    c.drop_index("h_1")
    db.command("collMod", "idx", index={"name": "s_unique", "hidden": False})
    c.drop_index("k_1")
    assert sorted(i["name"] for i in c.list_indexes()) == ["_id_", "s_unique"]
    # A hashed index (pymongo's HASHED): equality through the hashes, and
    # MongoDB's refusal of an array as OperationFailure 16766.
    assert c.create_index([("k", HASHED)]) == "k_hashed"
    plan = c.find({"k": 7}).explain()["queryPlanner"]["winningPlan"]
    assert plan["inputStage"]["indexName"] == "k_hashed", plan
    assert plan["inputStage"]["indexBounds"] == {"k": ["[9174449368162552349, 9174449368162552349]"]}, plan
    assert sorted(d["_id"] for d in c.find({"k": 7})) == list(range(7, 500, 50))
    try:
        c.insert_one({"_id": 1002, "k": [1, 2]})
        raise AssertionError("an array accepted under a hashed index")
    except OperationFailure as e:
        assert e.code == 16766, e.details
    c.drop_index("k_hashed")


@test
def bulk_writes():
    c = db.bulk
    c.drop()
    r = c.bulk_write([InsertOne({"_id": 1}), InsertOne({"_id": 2}), UpdateOne({"_id": 1}, {"$set": {"a": 1}}),
                      ReplaceOne({"_id": 2}, {"b": 2}), DeleteOne({"_id": 2}),
                      UpdateOne({"_id": 3}, {"$set": {"c": 3}}, upsert=True)])
    assert (r.inserted_count, r.matched_count, r.modified_count, r.deleted_count, r.upserted_count) == \
        (2, 2, 2, 1, 1), r.bulk_api_result
    # Ordered: stops at the first error; unordered: goes on.
    try:
        c.bulk_write([InsertOne({"_id": 10}), InsertOne({"_id": 1}), InsertOne({"_id": 11})])
        raise AssertionError("duplicate accepted")
    except BulkWriteError as e:
        assert e.details["nInserted"] == 1 and e.details["writeErrors"][0]["index"] == 1
    try:
        c.bulk_write([InsertOne({"_id": 20}), InsertOne({"_id": 1}), InsertOne({"_id": 21})], ordered=False)
        raise AssertionError("duplicate accepted")
    except BulkWriteError as e:
        assert e.details["nInserted"] == 2
    assert c.count_documents({}) == 5  # 1, 3, 10, 20, 21
    # A batch larger than one OP_MSG section's worth goes as document sequences.
    big = [{"_id": 1000 + i, "pad": "x" * 1000} for i in range(20000)]
    assert len(c.insert_many(big).inserted_ids) == 20000
    assert c.count_documents({"_id": {"$gte": 1000}}) == 20000


@test
def cursor_across_batches():
    c = db.cursor
    c.drop()
    c.insert_many([{"_id": i} for i in range(1000)])
    cur = c.find({}, batch_size=64).sort("_id", 1)
    seen = [d["_id"] for d in cur]
    assert seen == list(range(1000))
    # A cursor closed early is killed on the server.
    cur = c.find({}, batch_size=10)
    next(cur)
    cur.close()
    # getMore on a large result with the default batch size (101, then 16 MiB batches).
    assert len(list(c.find({"_id": {"$gte": 100}}))) == 900


@test
def sessions_and_transactions():
    c = db.txn
    c.drop()
    c.insert_one({"_id": 0})
    with client.start_session() as s:
        with s.start_transaction():
            c.insert_one({"_id": 1}, session=s)
            c.update_one({"_id": 0}, {"$set": {"in": "txn"}}, session=s)
            assert c.count_documents({}, session=s) == 2
            # Not visible outside the transaction before it commits.
            assert c.count_documents({}) == 1
        assert c.count_documents({}) == 2
        assert c.find_one({"_id": 0}) == {"_id": 0, "in": "txn"}
        s.start_transaction()
        c.insert_one({"_id": 2}, session=s)
        s.abort_transaction()
        assert c.find_one({"_id": 2}) is None
        # Causally consistent reads in a session.
        c.insert_one({"_id": 3}, session=s)
        assert c.find_one({"_id": 3}, session=s) == {"_id": 3}


@test
def retryable_write_applied_once():
    # The test sends one txnNumber twice itself, in a driver's session: the
    # retry is applied once. A client of its own, whose pooled session goes
    # with it: the driver numbers its own retryable writes in that session
    # (rockdoc-serve is a replica set), below the test's number.
    from bson.int64 import Int64
    from bson.son import SON
    c = db.retry
    c.drop()
    c.insert_one({"_id": 1, "n": 0})
    with pymongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=5000) as own, \
            own.start_session() as s:
        cmd = SON([("update", "retry"), ("updates", [{"q": {"_id": 1}, "u": {"$inc": {"n": 1}}}]),
                   ("txnNumber", Int64(1 << 40))])  # above any the pooled session used
        first = own.pymongo_test.command(cmd, session=s)
        again = own.pymongo_test.command(cmd, session=s)
    assert first["n"] == 1 and "retriedStmtIds" not in first, first
    assert again["n"] == 1 and again["retriedStmtIds"] == [0], again
    assert c.find_one({"_id": 1})["n"] == 1


@test
def aggregation():
    c = db.agg
    c.drop()
    c.insert_many([{"_id": i, "g": i % 3, "v": i} for i in range(30)])
    out = list(c.aggregate([{"$match": {"v": {"$gte": 3}}}, {"$group": {"_id": "$g", "total": {"$sum": "$v"}}},
                            {"$sort": {"_id": 1}}]))
    assert out == [{"_id": 0, "total": 135}, {"_id": 1, "total": 144}, {"_id": 2, "total": 153}], out
    # An aggregate cursor across batches.
    assert len(list(c.aggregate([{"$sort": {"v": -1}}], batchSize=4))) == 30


@test
def errors_come_back_as_mongodb_errors():
    try:
        db.command("noSuchCommand")
        raise AssertionError("unknown command accepted")
    except OperationFailure as e:
        assert e.code == 59, e.details
    try:
        db.command("find", "c", bogus=1)
        raise AssertionError("unknown field accepted")
    except OperationFailure as e:
        assert e.code == 40415, e.details


@test
def replica_set_of_one():
    # rockdoc-serve answers as a one-member replica set (README.md, "rockdoc
    # serve"): a client that names the set discovers its primary, reads
    # causally after its writes, and watches a collection.
    uri = sys.argv[1]
    rs_uri = uri + ("&" if "?" in uri else "?") + "replicaSet=rs0"
    with pymongo.MongoClient(rs_uri, serverSelectionTimeoutMS=5000) as rs_client:
        c = rs_client.pymongo_test.rs
        c.drop()
        with c.watch() as stream:
            assert stream.try_next() is None  # opened before the insert
            c.insert_one({"_id": 1, "x": 1})
            event = stream.next()  # waits for the event (awaitData)
            assert event["operationType"] == "insert", event
            assert event["fullDocument"] == {"_id": 1, "x": 1}, event
        # The primary of a replica set (None for a standalone or a direct
        # connection).
        assert rs_client.primary is not None, rs_client.nodes
        with rs_client.start_session(causal_consistency=True) as s:
            c.update_one({"_id": 1}, {"$set": {"x": 2}}, session=s)
            assert s.operation_time is not None
            # Sent with readConcern afterClusterTime: the session's write.
            assert c.find_one({"_id": 1}, session=s)["x"] == 2
        status = rs_client.admin.command("replSetGetStatus")
        assert status["set"] == "rs0" and status["members"][0]["stateStr"] == "PRIMARY", status


# IEEE 754-2008 decimal128 as Python's decimal module has it: an independent
# implementation of the same standard (the General Decimal Arithmetic
# specification), correctly rounded.
DECIMAL128 = decimal.Context(prec=34, Emax=6144, Emin=-6143, rounding=decimal.ROUND_HALF_EVEN,
                             clamp=1, traps=[])


def random_decimal(rng, digits=None, exponent=None):
    """A non-zero decimal of up to 34 digits (`digits` of them when given)."""
    n = digits or rng.randint(1, 34)
    coefficient = rng.choice("123456789") + "".join(rng.choice("0123456789") for _ in range(n - 1))
    e = rng.randint(-40, 40) if exponent is None else exponent
    return DECIMAL128.create_decimal("%s%sE%d" % (rng.choice(["", "-"]), coefficient, e))


@test
def decimal_arithmetic_matches_python_decimal():
    # rockdoc's decimals are Intel's library, MongoDB's: the basic operations
    # are correctly rounded, so their values agree with Python's decimal
    # exactly; the transcendental ones within one unit in the 34th digit (the
    # library does not promise the last digit). The representation may
    # differ: Intel's sum of operands whose exponents are far apart can
    # carry 34 digits where the preferred exponent needs fewer
    # (8.6495E+36 + -4.99E+23 is 8.649499999999501000000000000000000E+36).
    rng = random.Random(39)
    c = db.decimals
    c.drop()
    pairs = [(random_decimal(rng), random_decimal(rng)) for _ in range(300)]
    # |x| < 100 with 34 digits, for $exp.
    xs = [random_decimal(rng, 34, -33) for _ in pairs]
    c.insert_many([{"_id": i, "a": Decimal128(a), "b": Decimal128(b), "x": Decimal128(x)}
                   for i, ((a, b), x) in enumerate(zip(pairs, xs))])
    project = {
        "sum": {"$add": ["$a", "$b"]}, "diff": {"$subtract": ["$a", "$b"]},
        "prod": {"$multiply": ["$a", "$b"]}, "quot": {"$divide": ["$a", "$b"]},
        "mod": {"$mod": ["$a", "$b"]}, "sqrt": {"$sqrt": {"$abs": "$a"}},
        "round": {"$round": ["$a", 3]}, "trunc": {"$trunc": ["$a", -2]},
        "cmp": {"$cmp": ["$a", "$b"]},
        "exp": {"$exp": "$x"},
        "ln": {"$ln": {"$abs": "$a"}}, "log10": {"$log10": {"$abs": "$b"}},
    }
    got = {d["_id"]: d for d in c.aggregate([{"$project": project}, {"$sort": {"_id": 1}}])}
    assert len(got) == len(pairs)
    C = DECIMAL128

    def check_exact(i, name, expected, same_form=False):
        value = got[i][name]
        assert isinstance(value, Decimal128), (name, value)
        assert value.to_decimal() == expected, (i, name, pairs[i], str(value), str(expected))
        # quantize's exponent is the quantum's: the same digits, zeros included.
        assert not same_form or str(value) == str(expected), (i, name, str(value), str(expected))

    def check_close(i, name, expected, ulps=1):
        value = got[i][name].to_decimal()
        ulp = DECIMAL128.power(10, expected.adjusted() - 33)
        error = C.divide(C.abs(C.subtract(value, expected)), ulp)
        assert error <= ulps, (i, name, pairs[i], str(value), str(expected), error)

    for i, (a, b) in enumerate(pairs):
        check_exact(i, "sum", C.add(a, b))
        check_exact(i, "diff", C.subtract(a, b))
        check_exact(i, "prod", C.multiply(a, b))
        check_exact(i, "quot", C.divide(a, b))
        # fmod's value (its exponent may differ from Python's remainder's),
        # where Python's quotient fits 34 digits.
        if not C.remainder(a, b).is_nan():
            assert got[i]["mod"].to_decimal() == C.remainder(a, b), (i, a, b, got[i]["mod"])
        check_exact(i, "sqrt", C.sqrt(C.abs(a)))
        if a.adjusted() < 30:  # quantize would need more than 34 digits otherwise
            check_exact(i, "round", C.quantize(a, decimal.Decimal("1E-3")), same_form=True)
            check_exact(i, "trunc", a.quantize(decimal.Decimal("1E+2"), rounding=decimal.ROUND_DOWN, context=C),
                        same_form=True)
        assert got[i]["cmp"] == (a > b) - (a < b), (i, a, b, got[i]["cmp"])
        check_close(i, "exp", C.exp(xs[i]))
        check_close(i, "ln", C.ln(C.abs(a)))
        check_close(i, "log10", C.log10(C.abs(b)))

    # $inc and $mul on decimals, and $avg and $sum over them.
    c.update_one({"_id": 0}, {"$inc": {"a": Decimal128("0.5")}, "$mul": {"b": Decimal128("3")}})
    doc = c.find_one({"_id": 0})
    assert doc["a"].to_decimal() == C.add(pairs[0][0], decimal.Decimal("0.5")), doc
    assert doc["b"].to_decimal() == C.multiply(pairs[0][1], decimal.Decimal("3")), doc
    c.drop()
    c.insert_many([{"x": Decimal128("0.1")}, {"x": Decimal128("0.2")}, {"x": Decimal128("0.4")}])
    [agg] = c.aggregate([{"$group": {"_id": None, "s": {"$sum": "$x"}, "m": {"$avg": "$x"}}}])
    assert agg["s"] == Decimal128("0.7") and agg["m"] == Decimal128("0.2333333333333333333333333333333333"), agg
    # MongoDB's errors: division by zero, and a square root of a negative.
    expect_code(16608, lambda: list(c.aggregate([{"$project": {"q": {"$divide": ["$x", Decimal128("0")]}}}])))
    expect_code(28714, lambda: list(c.aggregate([{"$project": {"q": {"$sqrt": Decimal128("-1")}}}])))


run("pymongo %s" % pymongo.version)

#!/usr/bin/env python3
"""The CRUD unified spec tests (../shared/test-data/crud-unified/) through
the Python package in process and through pymongo to rockdoc-serve: the
same tests, classified by the same INDEX.json and the embedded runner's own
skip and run-anyway lists (kSkips, kRunAnyway in tests/crud_unified_test.cc),
as the embedded runner and the Node.js driver's (tests/wire/
crud_unified_node.js), so that the pass counts compare.

    crud_unified.py URI DATA_DIR EXPECTED_PASSES

Runs every test INDEX.json classes `core` or `optional` through
rockdoc.MongoClient(":memory:") and through pymongo.MongoClient(URI)
(rockdoc-serve, run_with_server.py's {uri}); prints one line per failure
and a summary; exits 0 only when every one passed both ways, and their
number is EXPECTED_PASSES (the embedded runner's). The format's rules are
unified_runner.js's, here in Python: a root-level document may have fields
the expected one lacks, an embedded one may not; numbers compare by value
whatever their type; $$unsetOrMatches, $$exists and $$type; expectError's
isClientError, errorContains, errorCode, errorCodeName,
errorLabelsContain/Omit and expectResult; outcome compared exactly, in _id
order. Events are not checked (neither runner can).
"""
import datetime
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping

import pymongo
from bson import json_util
from bson.binary import Binary
from bson.decimal128 import Decimal128
from bson.errors import InvalidDocument
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.son import SON
from bson.timestamp import Timestamp
from pymongo import ReturnDocument
from pymongo.errors import BulkWriteError, OperationFailure
from pymongo.operations import DeleteMany, DeleteOne, InsertOne, UpdateMany

import rockdoc

K_SKIPS = {("db-aggregate.json", "Aggregate with $listLocalSessions")}
K_RUN_ANYWAY = {("estimatedDocumentCount.json",
                 "estimatedDocumentCount works correctly on views")}


class DriverLimit(Exception):
    """The installed pymongo refused an operation before sending it (the
    Python binding runs it all the same): pymongo < 4.0 refuses dotted and
    $-prefixed keys on the client (bson.errors.InvalidDocument), pymongo <
    4.11 has no sort for update_one / replace_one (TypeError)."""


def driver_limit(error):
    if isinstance(error, InvalidDocument):
        return "pymongo %s refuses dotted and $-prefixed keys on the client" % pymongo.version
    if isinstance(error, TypeError) and "'sort'" in str(error):
        return "pymongo %s has no sort for update_one / replace_one" % pymongo.version
    return None


class Mismatch(Exception):
    pass


# ---- matching ----

def is_number(v):
    return isinstance(v, (int, float, Decimal128)) and not isinstance(v, bool)


def number_of(v):
    return float(v.to_decimal()) if isinstance(v, Decimal128) else v


def normalized(v):
    """Values that mean the same BSON compare equal: a subtype-0 Binary and
    bytes, an aware and a naive UTC datetime."""
    if isinstance(v, Binary) and v.subtype == 0:
        return bytes(v)
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return v


TYPE_NAMES = {
    "double": lambda v: isinstance(v, float),
    "int": lambda v: type(v) is int and -2 ** 31 <= v < 2 ** 31,
    "long": lambda v: isinstance(v, Int64) or (type(v) is int),
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, list),
    "objectId": lambda v: isinstance(v, ObjectId),
    "bool": lambda v: isinstance(v, bool),
    "date": lambda v: isinstance(v, datetime.datetime),
    "null": lambda v: v is None,
    "binData": lambda v: isinstance(v, (bytes, Binary)),
    "timestamp": lambda v: isinstance(v, Timestamp),
    "decimal": lambda v: isinstance(v, Decimal128),
}

_MISSING = object()


def match(expected, actual, where, root):
    if isinstance(expected, Mapping):
        keys = list(expected)
        if len(keys) == 1 and keys[0].startswith("$$"):
            return special(keys[0], expected[keys[0]], actual, where)
        if not isinstance(actual, Mapping):
            raise Mismatch("%s: expected a document, got %r" % (where, actual))
        for k in keys:
            e = expected[k]
            if isinstance(e, Mapping) and len(e) == 1:
                op = next(iter(e))
                if op == "$$unsetOrMatches" and k not in actual:
                    continue
                if op == "$$exists":
                    if (k in actual) != e[op]:
                        raise Mismatch("%s.%s: $$exists %s" % (where, k, e[op]))
                    continue
            if k not in actual:
                raise Mismatch("%s.%s: missing" % (where, k))
            match(e, actual[k], "%s.%s" % (where, k), False)
        if not root:
            for k in actual:
                if k not in expected:
                    raise Mismatch("%s.%s: not expected" % (where, k))
        return
    if isinstance(expected, list):
        if not isinstance(actual, list):
            raise Mismatch("%s: expected an array, got %r" % (where, actual))
        if len(actual) != len(expected):
            raise Mismatch("%s: %d elements, expected %d: %r" % (where, len(actual),
                                                                len(expected), actual))
        for i, (e, a) in enumerate(zip(expected, actual)):
            match(e, a, "%s[%d]" % (where, i), False)
        return
    if is_number(expected):
        if not is_number(actual) or number_of(actual) != number_of(expected):
            raise Mismatch("%s: %r, expected %r" % (where, actual, expected))
        return
    if type(normalized(expected)) is not type(normalized(actual)) or (
            normalized(expected) != normalized(actual)):
        raise Mismatch("%s: %r, expected %r" % (where, actual, expected))


def special(op, operand, actual, where):
    if op == "$$unsetOrMatches":
        if actual is _MISSING:
            return
        return match(operand, actual, where, True)
    if op == "$$exists":
        if (actual is not _MISSING) != operand:
            raise Mismatch("%s: $$exists %s" % (where, operand))
        return
    if op == "$$type":
        names = operand if isinstance(operand, list) else [operand]
        if not any(n in TYPE_NAMES and TYPE_NAMES[n](actual) for n in names):
            raise Mismatch("%s: %r is not of type %s" % (where, actual, "|".join(names)))
        return
    raise Mismatch("%s: the runner does not know %s" % (where, op))


# ---- operations ----

def bulk_result(r):
    upserted = {str(k): v for k, v in (r.upserted_ids or {}).items()}
    return {"deletedCount": r.deleted_count, "insertedCount": r.inserted_count,
            "matchedCount": r.matched_count, "modifiedCount": r.modified_count,
            "upsertedCount": r.upserted_count, "upsertedIds": upserted}


def bulk_error_result(details):
    return {"deletedCount": details.get("nRemoved", 0),
            "insertedCount": details.get("nInserted", 0),
            "matchedCount": details.get("nMatched", 0),
            "modifiedCount": details.get("nModified", 0),
            "upsertedCount": details.get("nUpserted", 0),
            "upsertedIds": {str(u["index"]): u["_id"] for u in details.get("upserted", [])}}


def result_of(name, r):
    if name == "insertOne":
        return {"insertedId": r.inserted_id}
    if name == "insertMany":
        return {"insertedIds": {str(i): v for i, v in enumerate(r.inserted_ids)}}
    if name in ("updateOne", "updateMany", "replaceOne"):
        out = {"matchedCount": r.matched_count, "modifiedCount": r.modified_count,
               "upsertedCount": 0 if r.upserted_id is None else 1}
        if r.upserted_id is not None:
            out["upsertedId"] = r.upserted_id
        return out
    if name in ("deleteOne", "deleteMany"):
        return {"deletedCount": r.deleted_count}
    if name == "bulkWrite":
        return bulk_result(r)
    return r


KNOWN_ARGUMENTS = {
    "filter", "document", "documents", "update", "replacement", "pipeline", "requests",
    "fieldName", "sort", "skip", "limit", "batchSize", "projection", "upsert", "arrayFilters",
    "returnDocument", "ordered", "allowDiskUse", "maxTimeMS", "collection", "viewOn",
    "comment", "command", "commandName", "keys", "name", "to", "dropTarget"}


def sort_list(sort):
    return list(sort.items()) if sort is not None else None


def request_of(r, operations):
    """A bulkWrite request as `operations`' classes (pymongo.operations, or
    the rockdoc package's, whose UpdateOne and ReplaceOne take sort with any
    pymongo)."""
    UpdateOne, ReplaceOne = operations.UpdateOne, operations.ReplaceOne
    (kind, a), = r.items()
    if kind == "insertOne":
        return InsertOne(a["document"])
    if kind in ("updateOne", "updateMany"):
        cls = UpdateOne if kind == "updateOne" else UpdateMany
        kwargs = {"upsert": a.get("upsert", False)}
        if "arrayFilters" in a:
            kwargs["array_filters"] = a["arrayFilters"]
        if "sort" in a:
            kwargs["sort"] = a["sort"]
        return cls(a["filter"], a["update"], **kwargs)
    if kind == "replaceOne":
        kwargs = {"sort": a["sort"]} if "sort" in a else {}
        return ReplaceOne(a["filter"], a["replacement"], upsert=a.get("upsert", False), **kwargs)
    if kind == "deleteOne":
        return DeleteOne(a["filter"])
    if kind == "deleteMany":
        return DeleteMany(a["filter"])
    raise Mismatch("bulkWrite request %s not supported by this runner" % kind)


def run(entities, op):
    target = entities.get(op["object"])
    if target is None:
        raise Mismatch("unknown entity %s" % op["object"])
    a = op.get("arguments", {})
    unknown = set(a) - KNOWN_ARGUMENTS
    if unknown:
        raise Mismatch("argument(s) %s not supported by this runner" % sorted(unknown))
    name = op["name"]

    def opts(**names):
        return {py: a[js] for js, py in names.items() if js in a}

    if name == "find":
        kw = opts(sort="sort", skip="skip", limit="limit", batchSize="batch_size",
                  projection="projection")
        if "sort" in kw:
            kw["sort"] = sort_list(kw["sort"])
        return list(target.find(a.get("filter", {}), **kw))
    if name == "findOne":
        kw = opts(sort="sort", skip="skip", projection="projection")
        if "sort" in kw:
            kw["sort"] = sort_list(kw["sort"])
        return target.find_one(a.get("filter", {}), **kw)
    if name == "insertOne":
        return target.insert_one(a["document"])
    if name == "insertMany":
        return target.insert_many(a["documents"], **opts(ordered="ordered"))
    if name in ("updateOne", "updateMany"):
        kw = opts(upsert="upsert", arrayFilters="array_filters")
        if "sort" in a:
            kw["sort"] = a["sort"]
        f = target.update_one if name == "updateOne" else target.update_many
        return f(a["filter"], a["update"], **kw)
    if name == "replaceOne":
        kw = opts(upsert="upsert")
        if "sort" in a:
            kw["sort"] = a["sort"]
        return target.replace_one(a["filter"], a["replacement"], **kw)
    if name == "deleteOne":
        return target.delete_one(a["filter"])
    if name == "deleteMany":
        return target.delete_many(a["filter"])
    if name in ("findOneAndUpdate", "findOneAndReplace", "findOneAndDelete"):
        kw = opts(projection="projection", upsert="upsert", arrayFilters="array_filters")
        if "sort" in a:
            kw["sort"] = sort_list(a["sort"])
        if "returnDocument" in a:
            kw["return_document"] = (ReturnDocument.AFTER if a["returnDocument"] == "After"
                                     else ReturnDocument.BEFORE)
        if name == "findOneAndUpdate":
            return target.find_one_and_update(a["filter"], a["update"], **kw)
        if name == "findOneAndReplace":
            return target.find_one_and_replace(a["filter"], a["replacement"], **kw)
        return target.find_one_and_delete(a["filter"], **kw)
    if name == "countDocuments":
        return target.count_documents(a["filter"], **opts(skip="skip", limit="limit"))
    if name == "estimatedDocumentCount":
        return target.estimated_document_count(**opts(maxTimeMS="maxTimeMS"))
    if name == "count":
        # The count command (the drivers' count() helper is deprecated).
        command = SON([("count", target.name), ("query", a.get("filter", {}))])
        command.update(opts(skip="skip", limit="limit"))
        return target.database.command(command)["n"]
    if name == "distinct":
        return target.distinct(a["fieldName"], a.get("filter"))
    if name == "aggregate":
        return list(target.aggregate(a["pipeline"], **opts(batchSize="batchSize",
                                                            allowDiskUse="allowDiskUse")))
    if name == "bulkWrite":
        operations = rockdoc if isinstance(target, rockdoc.Collection) else pymongo.operations
        return target.bulk_write([request_of(r, operations) for r in a["requests"]],
                                 **opts(ordered="ordered"))
    if name == "createCollection":
        return target.create_collection(a["collection"], **opts(viewOn="viewOn",
                                                                pipeline="pipeline"))
    if name == "dropCollection":
        try:
            return target.drop_collection(a["collection"])
        except OperationFailure:
            return False
    if name == "runCommand":
        return target.command(a["command"])
    if name == "createIndex":
        return target.create_index(list(a["keys"].items()), **opts(name="name"))
    if name == "dropIndex":
        return target.drop_index(a["name"])
    if name == "rename":
        return target.rename(a["to"], **opts(dropTarget="dropTarget"))
    raise Mismatch("operation %s not supported by this runner" % name)


def check_error(expected, e, where):
    server = isinstance(e, OperationFailure)
    if "isClientError" in expected and expected["isClientError"] == server:
        raise Mismatch("%s: isClientError %s: %r" % (where, expected["isClientError"], e))
    if "errorContains" in expected and expected["errorContains"].lower() not in str(e).lower():
        raise Mismatch("%s: %r does not contain %r" % (where, str(e), expected["errorContains"]))
    details = getattr(e, "details", None) or {}
    code = getattr(e, "code", None)
    if isinstance(e, BulkWriteError):
        errors = details.get("writeErrors") or details.get("writeConcernErrors") or [{}]
        code = errors[0].get("code")
    if "errorCode" in expected and code != expected["errorCode"]:
        raise Mismatch("%s: code %s, expected %s: %r" % (where, code, expected["errorCode"], e))
    if "errorCodeName" in expected and details.get("codeName") != expected["errorCodeName"]:
        raise Mismatch("%s: codeName %s, expected %s" % (where, details.get("codeName"),
                                                         expected["errorCodeName"]))
    for label in expected.get("errorLabelsContain", []):
        if not (hasattr(e, "has_error_label") and e.has_error_label(label)):
            raise Mismatch("%s: no error label %s" % (where, label))
    for label in expected.get("errorLabelsOmit", []):
        if hasattr(e, "has_error_label") and e.has_error_label(label):
            raise Mismatch("%s: error label %s" % (where, label))
    if "expectResult" in expected:
        match(expected["expectResult"], bulk_error_result(details), where + ".result", True)


# ---- the tests ----

def load_data(client, initial_data):
    for c in initial_data or []:
        db = client[c["databaseName"]]
        db.drop_collection(c["collectionName"])
        db.create_collection(c["collectionName"])
        if c["documents"]:
            db[c["collectionName"]].insert_many(c["documents"])


def create_entities(file, client):
    entities = {}
    for e in file.get("createEntities", []):
        (kind, spec), = e.items()
        if kind == "client":
            entities[spec["id"]] = client
        elif kind == "database":
            entities[spec["id"]] = entities[spec["client"]][spec["databaseName"]]
        elif kind == "collection":
            entities[spec["id"]] = entities[spec["database"]][spec["collectionName"]]
        else:
            raise Mismatch("entity %s not supported by this runner" % kind)
    return entities


def run_test(client, file, t, limits=False):
    entities = create_entities(file, client)
    load_data(client, file.get("initialData"))
    for i, op in enumerate(t["operations"]):
        where = "operation %d (%s)" % (i, op["name"])
        result, error = None, None
        try:
            result = run(entities, op)
        except Mismatch:
            raise
        except Exception as e:  # the operation's error, checked below
            error = e
            if limits and driver_limit(e):
                raise DriverLimit(driver_limit(e))
        if "expectError" in op:
            if error is None:
                raise Mismatch("%s: expected an error, got %r" % (where, result))
            check_error(op["expectError"], error, where)
            continue
        if error is not None:
            raise Mismatch("%s: %s: %s" % (where, type(error).__name__, error))
        if "saveResultAsEntity" in op:
            entities[op["saveResultAsEntity"]] = result
        if "expectResult" in op:
            match(op["expectResult"], result_of(op["name"], result), where, True)
    for o in t.get("outcome", []):
        docs = list(client[o["databaseName"]][o["collectionName"]].find({}).sort("_id", 1))
        match(o["documents"], docs, "outcome " + o["collectionName"], False)


def run_spec_tests(client, data_dir, limits=False):
    """(passed names, failure lines, tests left out by `limits`) of the
    applicable tests through `client`."""
    with open(os.path.join(data_dir, "INDEX.json")) as f:
        classes = {(x["file"], x["test"]): x["cls"] for x in json.load(f)}
    passed, failed, limited = [], [], {}
    for name in sorted(os.listdir(data_dir)):
        if not name.endswith(".json") or name == "INDEX.json":
            continue
        with open(os.path.join(data_dir, name)) as f:
            file = json_util.loads(f.read())
        for t in file["tests"]:
            key = (name, t["description"])
            if key in K_SKIPS:
                continue
            if classes.get(key) not in ("core", "optional") and key not in K_RUN_ANYWAY:
                continue
            try:
                run_test(client, file, t, limits)
                passed.append(key)
            except DriverLimit as e:
                limited[key] = str(e)
            except Exception as e:  # a failure of this test, reported
                failed.append("%s: %s: %s: %s" % (name, t["description"], type(e).__name__, e))
    return passed, failed, limited


def main():
    uri, data_dir, expected = sys.argv[1], sys.argv[2], int(sys.argv[3])
    scratch = tempfile.mkdtemp(prefix="rockdoc-crud-unified-")
    try:
        # In memory, as the embedded runner runs them (ROCKDOC_TEST_IN_MEMORY).
        binding = rockdoc.MongoClient(":memory:")
        passed, failed, _ = run_spec_tests(binding, data_dir)
        binding.close()
        for line in failed:
            print("FAIL [binding] " + line)
        print("crud-unified through the Python binding: %d passed, %d failed; the embedded "
              "runner passes %d" % (len(passed), len(failed), expected))
        ok = not failed and len(passed) == expected
        # The same tests through pymongo to rockdoc-serve: all that the
        # installed pymongo can send pass, and they are the binding's.
        remote = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
        remote_passed, remote_failed, limited = run_spec_tests(remote, data_dir, True)
        remote.close()
        for line in remote_failed:
            print("FAIL [pymongo] " + line)
        for reason in sorted(set(limited.values())):
            print("not through pymongo %s (%d tests): %s" % (
                pymongo.version, sum(1 for r in limited.values() if r == reason), reason))
        print("crud-unified through pymongo %s to rockdoc-serve: %d passed, %d failed" % (
            pymongo.version, len(remote_passed), len(remote_failed)))
        differ = set(passed) - set(limited) ^ set(remote_passed)
        if differ:
            print("the transports passed different tests: %s" % sorted(differ))
        ok = ok and not remote_failed and not differ
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

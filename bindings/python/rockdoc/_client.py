"""pymongo's API over rockdoc's command entry point.

Every call builds the MongoDB command pymongo would send (insert, update,
delete, find + getMore + killCursors, aggregate, findAndModify,
createIndexes, ...), encodes it with pymongo's bson and the caller's
codec_options, runs it in process through the C API (rockdoc._native, the
GIL released meanwhile), decodes the reply with the same codec_options and
maps a failure onto pymongo's exception classes (_errors.py). So the
binding accepts and refuses exactly what rockdoc-serve does for pymongo.

Threads: a MongoClient, its databases and collections may be shared by
threads (the engine's client is thread-safe); a cursor, a change stream or
a session is used by one thread at a time, as in pymongo.
"""
import atexit
import time
import uuid
import weakref
from collections import deque
from collections.abc import Mapping

import bson
from bson.binary import Binary
from bson.codec_options import DEFAULT_CODEC_OPTIONS, CodecOptions
from bson.int64 import Int64
from bson.objectid import ObjectId
from bson.raw_bson import RawBSONDocument
from bson.son import SON
from pymongo.errors import (ConfigurationError, DocumentTooLarge, InvalidOperation,
                            OperationFailure, PyMongoError)
from pymongo.read_concern import ReadConcern
from pymongo.results import (BulkWriteResult, DeleteResult, InsertManyResult, InsertOneResult,
                             UpdateResult)

from pymongo.write_concern import WriteConcern

from . import _errors, _native

ASCENDING = 1
DESCENDING = -1

# pymongo.collection.ReturnDocument's values.
BEFORE = False
AFTER = True

# A write's batch is cut as pymongo cuts one message: at maxMessageSizeBytes
# (the command runs through rockdoc_run_batch_command, which takes as much;
# 16 KiB left for the command's own fields) and at maxWriteBatchSize. Each
# document past 16 MiB is the engine's to refuse, as over the wire.
_MAX_MESSAGE_SIZE = 48000000  # ROCKDOC_MAX_MESSAGE_SIZE
_MAX_BATCH_BYTES = _MAX_MESSAGE_SIZE - 16 * 1024
_MAX_BATCH_COUNT = 100000

_open_clients = weakref.WeakSet()


@atexit.register
def _close_all():
    # Clients (and the cursors and sessions they hold) left open at exit are
    # closed before the interpreter tears down, so RocksDB's lock and files
    # are released in order.
    for client in list(_open_clients):
        try:
            client.close()
        except Exception:  # at exit, nothing can be reported
            pass


def _not_supported(what, names):
    if names:
        raise ConfigurationError("%s %s not supported by rockdoc" % (
            what, ", ".join(sorted(names))))


def _check_keyword_options(what, kwargs, known):
    _not_supported("%s option(s)" % what, set(kwargs) - set(known))


def _index_list(key_or_list, direction=None):
    """pymongo's sort / hint / index key argument as a list of pairs."""
    if direction is not None:
        return [(key_or_list, direction)]
    if isinstance(key_or_list, str):
        return [(key_or_list, ASCENDING)]
    if isinstance(key_or_list, Mapping):
        return list(key_or_list.items())
    if not isinstance(key_or_list, (list, tuple)):
        raise TypeError("if no direction is specified, key_or_list must be an instance of list")
    return [(k, ASCENDING) if isinstance(k, str) else tuple(k) for k in key_or_list]


def _index_document(index_list):
    return SON(index_list)


def _gen_index_name(keys):
    return "_".join("%s_%s" % item for item in keys)


def _fields_document(projection):
    """A projection given as a list of names, as pymongo accepts it."""
    if projection is None or isinstance(projection, Mapping):
        return projection
    if isinstance(projection, (list, tuple, set)):
        return SON((name, 1) for name in projection)
    raise TypeError("projection must be a mapping or a list of key names")


class _Options:
    """What a client, database or collection passes down, as pymongo's
    BaseObject: codec options, write concern and read concern (each a
    pymongo object; None: the server's default). A read preference is
    accepted when the one node serves it (every mode but secondary, as a
    replica set of one serves them)."""

    def __init__(self, codec_options, write_concern=None, read_concern=None):
        self.codec_options = codec_options
        self.write_concern = write_concern
        self.read_concern = read_concern

    def derive(self, codec_options=None, read_preference=None, write_concern=None,
               read_concern=None):
        _check_read_preference(read_preference)
        return _Options(codec_options or self.codec_options,
                        write_concern if write_concern is not None else self.write_concern,
                        read_concern if read_concern is not None else self.read_concern)

    def add_write_concern(self, command, session):
        # In a transaction only the commit and the abort carry one.
        if (self.write_concern is not None and self.write_concern.document and
                not (session is not None and session.in_transaction)):
            command["writeConcern"] = self.write_concern.document

    def add_read_concern(self, command, session):
        if (self.read_concern is not None and self.read_concern.document and
                not (session is not None and (session.in_transaction or session._snapshot))):
            command["readConcern"] = self.read_concern.document


def _check_read_preference(read_preference):
    if read_preference is not None and getattr(read_preference, "mongos_mode",
                                               None) == "secondary":
        raise ConfigurationError("read preference secondary not supported by rockdoc (one node, "
                                 "the primary, serves every read)")


class MongoClient:
    """rockdoc's database directory with pymongo.MongoClient's API.

    MongoClient("path/to/dir"), MongoClient("rockdoc:///path/to/dir") or
    MongoClient(":memory:") (a database that lives in this process only).
    Options: document_class, tz_aware, uuidRepresentation, w, journal,
    wtimeoutMS, readConcernLevel, read_preference (as pymongo's; the
    concerns are sent with each command as pymongo sends them, and the
    engine refuses what it lacks: w: 0 and w > 1 are 238), and rockdoc's own
    create_if_missing (default True), sync (the WAL synced on every commit,
    default False), change_log (the log change streams read, default True:
    as rockdoc-serve, a replica set of one), block_cache_bytes. Any other
    option is ConfigurationError.
    """

    def __init__(self, path, document_class=dict, tz_aware=False, **kwargs):
        options = {k: kwargs.pop(k) for k in list(kwargs)
                   if k in ("create_if_missing", "sync", "change_log", "block_cache_bytes")}
        uuid_representation = kwargs.pop("uuidRepresentation", None)
        if uuid_representation is None:
            uuid_representation = kwargs.pop("uuid_representation", None)
        write_concern = {name: kwargs.pop(key) for key, name in (
            ("w", "w"), ("wtimeoutMS", "wtimeout"), ("journal", "j"), ("j", "j"))
            if key in kwargs}
        read_concern_level = kwargs.pop("readConcernLevel", None)
        _check_read_preference(kwargs.pop("read_preference", None))
        _check_keyword_options("MongoClient", kwargs, ())
        if not isinstance(path, str):
            raise TypeError("path must be a str, not %s" % type(path).__name__)
        if path.startswith("rockdoc://"):
            path = path[len("rockdoc://"):]
        elif path.startswith("mongodb://") or path.startswith("mongodb+srv://"):
            raise ConfigurationError("rockdoc.MongoClient opens a directory (or ':memory:'); "
                                     "use pymongo.MongoClient for %r" % path)
        if not path:
            raise ConfigurationError("MongoClient needs a directory or ':memory:'")
        codec_kwargs = {"document_class": document_class, "tz_aware": tz_aware}
        if uuid_representation is not None:
            codec_kwargs["uuid_representation"] = _uuid_representation(uuid_representation)
        self._codec_options = CodecOptions(**codec_kwargs)
        self._options = _Options(
            self._codec_options, WriteConcern(**write_concern) if write_concern else None,
            ReadConcern(read_concern_level) if read_concern_level is not None else None)
        self._path = path
        try:
            self._handle = _native.Handle(
                path, create_if_missing=options.get("create_if_missing", True),
                sync=options.get("sync", False), change_log=options.get("change_log", True),
                block_cache_bytes=options.get("block_cache_bytes", 0))
        except _native.Error as e:
            code, message = e.args
            raise OperationFailure(message, code, {"ok": 0, "errmsg": message, "code": code},
                                   _errors.MAX_WIRE_VERSION) from None
        self._cursors = weakref.WeakSet()
        _open_clients.add(self)

    # ---- the command path every call takes ----
    def _command(self, db, command, codec_options=None, session=None, check=True, batch=False):
        codec_options = codec_options or self._codec_options
        if session is not None:
            session._apply(command, self)
        try:
            reply = self._handle.command(db, bson.encode(command, codec_options=codec_options),
                                         batch)
        except _native.Error as e:
            code, message = e.args
            if code == 20 and self._handle.closed:
                raise InvalidOperation("Cannot use MongoClient after close") from None
            reply = {"ok": 0, "errmsg": message, "code": code}
            return _errors.check_command(reply) if check else reply
        reply = bson.decode(reply, codec_options=codec_options)
        if session is not None:
            session._observe(reply)
        return _errors.check_command(reply) if check else reply

    @property
    def codec_options(self):
        return self._codec_options

    @property
    def address(self):
        return None

    def __getitem__(self, name):
        return Database(self, name, self._options)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Database(self, name, self._options)

    def get_database(self, name, codec_options=None, read_preference=None, write_concern=None,
                     read_concern=None):
        return Database(self, name, self._options.derive(codec_options, read_preference,
                                                         write_concern, read_concern))

    @property
    def write_concern(self):
        return self._options.write_concern or WriteConcern()

    @property
    def read_concern(self):
        return self._options.read_concern or ReadConcern()

    def list_database_names(self, session=None):
        reply = self._command("admin", dict([("listDatabases", 1), ("nameOnly", True)]),
                              session=session)
        return [d["name"] for d in reply["databases"]]

    def list_databases(self, session=None, **kwargs):
        command = dict([("listDatabases", 1)])
        command.update(kwargs)
        reply = self._command("admin", command, session=session)
        return iter(reply["databases"])

    def drop_database(self, name_or_database, session=None):
        name = getattr(name_or_database, "name", name_or_database)
        self._command(name, dict([("dropDatabase", 1)]), session=session)

    def server_info(self, session=None):
        return self._command("admin", dict([("buildinfo", 1)]), session=session)

    def start_session(self, causal_consistency=None, default_transaction_options=None,
                      snapshot=False):
        return ClientSession(self, causal_consistency, default_transaction_options, snapshot)

    def watch(self, pipeline=None, **kwargs):
        return ChangeStream(self, "admin", 1, pipeline, kwargs, all_databases=True)

    def close(self):
        """Closes the directory: open cursors are killed first (idempotent)."""
        if self._handle.closed:
            return
        for cursor in list(self._cursors):
            cursor._discard(client_closing=True)
        self._handle.close()
        _open_clients.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "rockdoc.MongoClient(%r)" % self._path


def _uuid_representation(value):
    from bson.binary import UuidRepresentation
    if isinstance(value, int):
        return value
    names = {"unspecified": UuidRepresentation.UNSPECIFIED,
             "standard": UuidRepresentation.STANDARD,
             "pythonLegacy": UuidRepresentation.PYTHON_LEGACY,
             "javaLegacy": UuidRepresentation.JAVA_LEGACY,
             "csharpLegacy": UuidRepresentation.CSHARP_LEGACY}
    if value not in names:
        raise ConfigurationError("unknown uuidRepresentation %r" % value)
    return names[value]


class Database:
    def __init__(self, client, name, options=None):
        if not isinstance(name, str):
            raise TypeError("name must be an instance of str")
        self._client = client
        self._name = name
        self._options = options or client._options
        self._codec_options = self._options.codec_options

    @property
    def client(self):
        return self._client

    @property
    def name(self):
        return self._name

    @property
    def codec_options(self):
        return self._codec_options

    def __getitem__(self, name):
        return Collection(self, name, self._options)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Collection(self, name, self._options)

    @property
    def write_concern(self):
        return self._options.write_concern or WriteConcern()

    @property
    def read_concern(self):
        return self._options.read_concern or ReadConcern()

    def __eq__(self, other):
        return (isinstance(other, Database) and other._client is self._client and
                other._name == self._name)

    def __hash__(self):
        return hash((id(self._client), self._name))

    def get_collection(self, name, codec_options=None, read_preference=None,
                       write_concern=None, read_concern=None):
        return Collection(self, name, self._options.derive(codec_options, read_preference,
                                                           write_concern, read_concern))

    def _command(self, command, session=None, codec_options=None, check=True, batch=False):
        return self._client._command(self._name, command, codec_options or self._codec_options,
                                     session, check, batch)

    def command(self, command, value=1, check=True, allowable_errors=None, codec_options=None,
                session=None, **kwargs):
        """As pymongo's: a str names the command (its value `value`), the
        keyword arguments are more fields."""
        if isinstance(command, str):
            command = dict([(command, value)])
        else:
            command = dict(command)
        command.update(kwargs)
        reply = self._command(command, session, codec_options, check=False)
        if check and not reply.get("ok"):
            if allowable_errors and (reply.get("errmsg") in allowable_errors or
                                     reply.get("code") in allowable_errors):
                return reply
            _errors.check_command(reply)
        return reply

    def list_collections(self, session=None, filter=None, **kwargs):
        command = dict([("listCollections", 1), ("cursor", {})])
        if filter is not None:
            command["filter"] = filter
        command.update(kwargs)
        return CommandCursor._run(self, None, command, session)

    def list_collection_names(self, session=None, filter=None, **kwargs):
        kwargs["nameOnly"] = True
        return [c["name"] for c in self.list_collections(session, filter, **kwargs)]

    def create_collection(self, name, codec_options=None, session=None, **kwargs):
        from pymongo.errors import CollectionInvalid
        command = dict([("create", name)])
        command.update(kwargs)
        reply = self._command(command, session, check=False)
        if not reply.get("ok") and reply.get("code") == 48:
            raise CollectionInvalid("collection %s already exists" % name)
        _errors.check_command(reply)
        return Collection(self, name, self._options.derive(codec_options))

    def drop_collection(self, name_or_collection, session=None):
        name = getattr(name_or_collection, "name", name_or_collection)
        reply = self._command(dict([("drop", name)]), session, check=False)
        if not reply.get("ok") and reply.get("code") != 26:  # NamespaceNotFound is fine
            _errors.check_command(reply)
        return reply

    def aggregate(self, pipeline, session=None, **kwargs):
        return Collection(self, 1, self._options)._aggregate(pipeline, session, kwargs)

    def watch(self, pipeline=None, **kwargs):
        return ChangeStream(self._client, self._name, 1, pipeline, kwargs)

    def __repr__(self):
        return "Database(%r, %r)" % (self._client, self._name)


class Collection:
    def __init__(self, database, name, options=None):
        self._database = database
        self._name = name
        self._options = options or database._options
        self._codec_options = self._options.codec_options

    @property
    def name(self):
        return self._name

    @property
    def full_name(self):
        return "%s.%s" % (self._database.name, self._name)

    @property
    def database(self):
        return self._database

    @property
    def codec_options(self):
        return self._codec_options

    def __getitem__(self, name):
        return Collection(self._database, "%s.%s" % (self._name, name), self._options)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __eq__(self, other):
        return (isinstance(other, Collection) and other._database == self._database and
                other._name == self._name)

    def __hash__(self):
        return hash((self._database, self._name))

    @property
    def write_concern(self):
        return self._options.write_concern or WriteConcern()

    @property
    def read_concern(self):
        return self._options.read_concern or ReadConcern()

    def with_options(self, codec_options=None, read_preference=None, write_concern=None,
                     read_concern=None):
        return Collection(self._database, self._name, self._options.derive(
            codec_options, read_preference, write_concern, read_concern))

    def _command(self, command, session=None, check=True, batch=False, write=False, read=False):
        """`write`: the command takes the collection's write concern;
        `read`: its read concern."""
        if write:
            self._options.add_write_concern(command, session)
        if read:
            self._options.add_read_concern(command, session)
        return self._database._command(command, session, self._codec_options, check, batch)

    # ---- writes ----
    def insert_one(self, document, bypass_document_validation=False, session=None, comment=None):
        if not isinstance(document, Mapping):
            raise TypeError("document must be an instance of dict, bson.son.SON, "
                            "bson.raw_bson.RawBSONDocument, or a type that inherits from "
                            "collections.MutableMapping")
        if "_id" not in document and not hasattr(document, "raw"):
            document["_id"] = ObjectId()
        command = dict([("insert", self._name),
                        ("documents", [_encoded(document, self._codec_options, "insert")]),
                        ("ordered", True)])
        _optional(command, bypassDocumentValidation=bypass_document_validation or None,
                  comment=comment)
        _errors.check_single_write(self._command(command, session, batch=True, write=True))
        return InsertOneResult(document.get("_id"), True)

    def insert_many(self, documents, ordered=True, bypass_document_validation=False,
                    session=None, comment=None):
        if isinstance(documents, Mapping) or not documents:
            raise TypeError("documents must be a non-empty list")
        bulk = _Bulk(self, ordered, bypass_document_validation, comment)
        ids = []
        for document in documents:
            if not isinstance(document, Mapping):
                raise TypeError("document must be an instance of dict")
            if "_id" not in document and not hasattr(document, "raw"):
                document["_id"] = ObjectId()
            ids.append(document.get("_id"))
            bulk.add_insert(document)
        bulk.execute(session)
        return InsertManyResult(ids, True)

    def _update(self, filter, update, multi, upsert, session, array_filters=None,
                bypass_document_validation=False, collation=None, hint=None, comment=None,
                let=None, sort=None):
        spec = _update_spec(filter, update, multi, upsert, collation, array_filters, hint, sort)
        command = dict([("update", self._name), ("updates", [spec]), ("ordered", True)])
        _optional(command, bypassDocumentValidation=bypass_document_validation or None,
                  comment=comment, let=let)
        reply = _errors.check_single_write(self._command(command, session, batch=True, write=True))
        # As pymongo's raw_result: the reply, updatedExisting added, the
        # upserted _id broken out of its array.
        raw = dict(reply)
        raw["updatedExisting"] = bool(reply.get("n")) and "upserted" not in reply
        if "upserted" in reply:
            raw["upserted"] = reply["upserted"][0]["_id"]
        return UpdateResult(raw, True)

    def update_one(self, filter, update, upsert=False, bypass_document_validation=False,
                   collation=None, array_filters=None, hint=None, session=None, **kwargs):
        _validate_update(update)
        return self._update(filter, update, False, upsert, session, array_filters,
                            bypass_document_validation, collation, hint, **kwargs)

    def update_many(self, filter, update, upsert=False, array_filters=None,
                    bypass_document_validation=False, collation=None, hint=None, session=None,
                    **kwargs):
        _validate_update(update)
        return self._update(filter, update, True, upsert, session, array_filters,
                            bypass_document_validation, collation, hint, **kwargs)

    def replace_one(self, filter, replacement, upsert=False, bypass_document_validation=False,
                    collation=None, hint=None, session=None, **kwargs):
        _validate_replacement(replacement)
        return self._update(filter, replacement, False, upsert, session, None,
                            bypass_document_validation, collation, hint, **kwargs)

    def _delete(self, filter, limit, collation, hint, session, comment=None, let=None):
        spec = _delete_spec(filter, limit, collation, hint)
        command = dict([("delete", self._name), ("deletes", [spec]), ("ordered", True)])
        _optional(command, comment=comment, let=let)
        reply = _errors.check_single_write(self._command(command, session, batch=True, write=True))
        return DeleteResult(reply, True)

    def delete_one(self, filter, collation=None, hint=None, session=None, **kwargs):
        return self._delete(filter, 1, collation, hint, session, **kwargs)

    def delete_many(self, filter, collation=None, hint=None, session=None, **kwargs):
        return self._delete(filter, 0, collation, hint, session, **kwargs)

    def bulk_write(self, requests, ordered=True, bypass_document_validation=False,
                   session=None, comment=None, let=None):
        if not isinstance(requests, list):
            raise TypeError("requests must be a list")
        if not requests:
            raise InvalidOperation("No operations to execute")
        bulk = _Bulk(self, ordered, bypass_document_validation, comment, let)
        for request in requests:
            try:
                request._add_to_bulk(bulk)
            except AttributeError:
                raise TypeError("%r is not a valid request" % (request,)) from None
        return BulkWriteResult(bulk.execute(session), True)

    def _find_and_modify(self, filter, projection, sort, upsert, return_document, session,
                         remove=False, update=None, array_filters=None, hint=None,
                         collation=None, bypass_document_validation=False, let=None,
                         comment=None, max_time_ms=None):
        command = dict([("findAndModify", self._name), ("query", filter)])
        if remove:
            command["remove"] = True
        else:
            command["update"] = update
            command["new"] = bool(return_document)
            command["upsert"] = bool(upsert)
        _optional(command, fields=_fields_document(projection),
                  sort=_index_document(_index_list(sort)) if sort is not None else None,
                  arrayFilters=array_filters, hint=_hint_value(hint), collation=collation,
                  bypassDocumentValidation=bypass_document_validation or None, let=let,
                  comment=comment, maxTimeMS=max_time_ms)
        reply = self._command(command, session, write=True)
        if reply.get("writeConcernError"):
            _errors.raise_write_concern_error(reply["writeConcernError"])
        return reply.get("value")

    def find_one_and_delete(self, filter, projection=None, sort=None, hint=None, session=None,
                            **kwargs):
        return self._find_and_modify(filter, projection, sort, False, BEFORE, session,
                                     remove=True, hint=hint, **kwargs)

    def find_one_and_replace(self, filter, replacement, projection=None, sort=None,
                             upsert=False, return_document=BEFORE, hint=None, session=None,
                             **kwargs):
        _validate_replacement(replacement)
        return self._find_and_modify(filter, projection, sort, upsert, return_document, session,
                                     update=replacement, hint=hint, **kwargs)

    def find_one_and_update(self, filter, update, projection=None, sort=None, upsert=False,
                            return_document=BEFORE, array_filters=None, hint=None,
                            session=None, **kwargs):
        _validate_update(update)
        return self._find_and_modify(filter, projection, sort, upsert, return_document, session,
                                     update=update, array_filters=array_filters, hint=hint,
                                     **kwargs)

    # ---- reads ----
    def find(self, *args, **kwargs):
        return Cursor(self, *args, **kwargs)

    def find_one(self, filter=None, *args, **kwargs):
        if filter is not None and not isinstance(filter, Mapping):
            filter = {"_id": filter}
        for document in self.find(filter, *args, **kwargs).limit(-1):
            return document
        return None

    def count_documents(self, filter, session=None, **kwargs):
        pipeline = [{"$match": filter}]
        if "skip" in kwargs:
            pipeline.append({"$skip": kwargs.pop("skip")})
        if "limit" in kwargs:
            pipeline.append({"$limit": kwargs.pop("limit")})
        pipeline.append({"$group": {"_id": 1, "n": {"$sum": 1}}})
        for document in self._aggregate(pipeline, session, kwargs):
            return document["n"]
        return 0

    def estimated_document_count(self, **kwargs):
        command = dict([("count", self._name)])
        command.update(kwargs)
        return int(self._command(command, read=True)["n"])

    def distinct(self, key, filter=None, session=None, **kwargs):
        if not isinstance(key, str):
            raise TypeError("key must be an instance of str")
        command = dict([("distinct", self._name), ("key", key)])
        if filter is not None:
            command["query"] = filter
        if "collation" in kwargs:
            kwargs["collation"] = _collation(kwargs["collation"])
        command.update(kwargs)
        return self._command(command, session, read=True)["values"]

    def _aggregate(self, pipeline, session, kwargs):
        if not isinstance(pipeline, list):
            raise TypeError("pipeline must be a list")
        command = dict([("aggregate", self._name), ("pipeline", pipeline)])
        cursor = {}
        if "batchSize" in kwargs:
            cursor["batchSize"] = kwargs.pop("batchSize")
        if "batch_size" in kwargs:
            cursor["batchSize"] = kwargs.pop("batch_size")
        command["cursor"] = cursor
        if "hint" in kwargs:
            kwargs["hint"] = _hint_value(kwargs["hint"])
        if "collation" in kwargs:
            kwargs["collation"] = _collation(kwargs["collation"])
        command.update(kwargs)
        self._options.add_read_concern(command, session)
        return CommandCursor._run(self._database, self._name, command, session,
                                  self._codec_options)

    def aggregate(self, pipeline, session=None, **kwargs):
        return self._aggregate(pipeline, session, kwargs)

    def watch(self, pipeline=None, **kwargs):
        return ChangeStream(self._database.client, self._database.name, self._name, pipeline,
                            kwargs, codec_options=self._codec_options)

    # ---- indexes and the collection ----
    def create_indexes(self, indexes, session=None, **kwargs):
        documents = []
        for model in indexes:
            document = getattr(model, "document", None)
            if document is None:
                raise TypeError("%r is not an instance of pymongo.operations.IndexModel" %
                                (model,))
            documents.append(document)
        command = dict([("createIndexes", self._name), ("indexes", documents)])
        command.update(kwargs)
        self._command(command, session, write=True)
        return [d["name"] for d in documents]

    def create_index(self, keys, session=None, **kwargs):
        keys = _index_list(keys)
        document = dict([("key", _index_document(keys))])
        document["name"] = kwargs.pop("name", None) or _gen_index_name(keys)
        command_fields = {k: kwargs.pop(k) for k in ("maxTimeMS", "comment", "commitQuorum")
                          if k in kwargs}
        if "collation" in kwargs:
            kwargs["collation"] = _collation(kwargs["collation"])
        document.update(kwargs)
        command = dict([("createIndexes", self._name), ("indexes", [document])])
        command.update(command_fields)
        self._command(command, session, write=True)
        return document["name"]

    def list_indexes(self, session=None, **kwargs):
        command = dict([("listIndexes", self._name), ("cursor", {})])
        command.update(kwargs)
        return CommandCursor._run(self._database, self._name, command, session)

    def index_information(self, session=None):
        info = {}
        for index in self.list_indexes(session):
            index = dict(index)
            index["key"] = list(index["key"].items())
            info[index.pop("name")] = index
        return info

    def drop_index(self, index_or_name, session=None, **kwargs):
        name = index_or_name
        if isinstance(index_or_name, list):
            name = _gen_index_name(index_or_name)
        if not isinstance(name, str):
            raise TypeError("index_or_name must be an instance of str or list")
        command = dict([("dropIndexes", self._name), ("index", name)])
        command.update(kwargs)
        self._command(command, session, write=True)

    def drop_indexes(self, session=None, **kwargs):
        self.drop_index("*", session, **kwargs)

    def drop(self, session=None):
        self._database.drop_collection(self._name, session)

    def rename(self, new_name, session=None, **kwargs):
        command = dict([("renameCollection", self.full_name),
                        ("to", "%s.%s" % (self._database.name, new_name))])
        command.update(kwargs)
        return self._database.client._command("admin", command, session=session)

    def options(self, session=None):
        for info in self._database.list_collections(session, filter={"name": self._name}):
            return info.get("options", {})
        return {}

    def __repr__(self):
        return "Collection(%r, %r)" % (self._database, self._name)


def _encoded(document, codec_options, operation):
    """`document` encoded once, as RawBSONDocument; DocumentTooLarge when it
    cannot fit a message, as pymongo raises it before sending."""
    raw = RawBSONDocument(bson.encode(document, codec_options=codec_options))
    if len(raw.raw) > _MAX_BATCH_BYTES:
        if operation == "insert":
            raise DocumentTooLarge("BSON document too large (%d bytes) - the connected server "
                                   "supports BSON document sizes up to %d bytes." %
                                   (len(raw.raw), 16 * 1024 * 1024))
        raise DocumentTooLarge("%r command document too large" % operation)
    return raw


def _collation(collation):
    """A pymongo Collation object as its document (a dict passes as it is)."""
    return getattr(collation, "document", collation)


def _optional(command, **fields):
    for name, value in fields.items():
        if value is not None:
            command[name] = _collation(value) if name == "collation" else value


def _hint_value(hint):
    if hint is None or isinstance(hint, str):
        return hint
    return _index_document(_index_list(hint))


def _update_spec(filter, update, multi, upsert, collation=None, array_filters=None, hint=None,
                 sort=None):
    spec = dict([("q", filter), ("u", update), ("multi", multi), ("upsert", upsert)])
    _optional(spec, collation=collation, arrayFilters=array_filters, hint=_hint_value(hint),
              sort=sort)
    return spec


def _delete_spec(filter, limit, collation=None, hint=None):
    spec = dict([("q", filter), ("limit", limit)])
    _optional(spec, collation=collation, hint=_hint_value(hint))
    return spec


def _validate_update(update):
    if isinstance(update, list):
        if not update:
            raise ValueError("update must not be empty")
        return
    if not isinstance(update, Mapping):
        raise TypeError("update must be an instance of dict, bson.son.SON, or any other type "
                        "that inherits from collections.Mapping")
    if not update:
        raise ValueError("update must not be empty")
    first = next(iter(update))
    if not first.startswith("$"):
        raise ValueError("update only works with $ operators")


def _validate_replacement(replacement):
    if not isinstance(replacement, Mapping):
        raise TypeError("replacement must be an instance of dict, bson.son.SON, or any other "
                        "type that inherits from collections.Mapping")
    if replacement and next(iter(replacement)).startswith("$"):
        raise ValueError("replacement can not include $ operators")


class _Bulk:
    """The operations of insert_many / bulk_write, run as pymongo runs them:
    consecutive operations of one kind in one command (ordered), or all of
    one kind per command (unordered), and the replies merged into the
    bulk API's result (pymongo's _merge_command). pymongo's operation
    classes (InsertOne, UpdateOne, ...) add themselves through add_*."""

    _INSERT, _UPDATE, _DELETE = 0, 1, 2

    def __init__(self, collection, ordered, bypass_document_validation, comment=None, let=None):
        self._collection = collection
        self._ordered = ordered
        self._bypass = bypass_document_validation
        self._comment = comment
        self._let = let
        self._ops = []  # (kind, index, document)

    def add_insert(self, document):
        if "_id" not in document and not hasattr(document, "raw"):
            document["_id"] = ObjectId()
        self._ops.append((self._INSERT, len(self._ops), document))

    def add_update(self, selector, update, multi=False, upsert=False, collation=None,
                   array_filters=None, hint=None, sort=None, **unknown):
        _not_supported("bulk update field(s)", unknown)
        _validate_update(update)
        self._ops.append((self._UPDATE, len(self._ops), _update_spec(
            selector, update, multi, upsert, collation, array_filters, hint, sort)))

    def add_replace(self, selector, replacement, upsert=False, collation=None, hint=None,
                    sort=None, **unknown):
        _not_supported("bulk replace field(s)", unknown)
        _validate_replacement(replacement)
        self._ops.append((self._UPDATE, len(self._ops), _update_spec(
            selector, replacement, False, upsert, collation, None, hint, sort)))

    def add_delete(self, selector, limit, collation=None, hint=None, **unknown):
        _not_supported("bulk delete field(s)", unknown)
        self._ops.append((self._DELETE, len(self._ops), _delete_spec(
            selector, limit, collation, hint)))

    def _runs(self):
        if self._ordered:
            run = []
            for op in self._ops:
                if run and run[-1][0] != op[0]:
                    yield run
                    run = []
                run.append(op)
            if run:
                yield run
        else:
            for kind in (self._INSERT, self._UPDATE, self._DELETE):
                run = [op for op in self._ops if op[0] == kind]
                if run:
                    yield run

    def _batches(self, run):
        """The run cut into commands' worth, each operation encoded once
        (with the collection's codec options) and sent as those bytes."""
        codec_options = self._collection.codec_options
        batch, size = [], 0
        operations = {self._INSERT: "insert", self._UPDATE: "update", self._DELETE: "delete"}
        for op in run:
            raw = _encoded(op[2], codec_options, operations[op[0]])
            if batch and (size + len(raw.raw) > _MAX_BATCH_BYTES or
                          len(batch) == _MAX_BATCH_COUNT):
                yield batch
                batch, size = [], 0
            batch.append((op, raw))
            size += len(raw.raw)
        if batch:
            yield batch

    def execute(self, session=None):
        full = {"writeErrors": [], "writeConcernErrors": [], "nInserted": 0, "nUpserted": 0,
                "nMatched": 0, "nModified": 0, "nRemoved": 0, "upserted": []}
        names = {self._INSERT: ("insert", "documents"), self._UPDATE: ("update", "updates"),
                 self._DELETE: ("delete", "deletes")}
        for run in self._runs():
            for encoded in self._batches(run):
                batch = [op for op, _ in encoded]
                kind = batch[0][0]
                name, field = names[kind]
                command = dict([(name, self._collection.name),
                                (field, [raw for _, raw in encoded]), ("ordered", self._ordered)])
                _optional(command, bypassDocumentValidation=(self._bypass or None)
                          if kind == self._INSERT or kind == self._UPDATE else None,
                          comment=self._comment, let=self._let if kind != self._INSERT else None)
                reply = self._collection._command(command, session, batch=True, write=True)
                self._merge(full, kind, batch, reply)
                if self._ordered and full["writeErrors"]:
                    _errors.check_bulk(full)
        _errors.check_bulk(full)
        return full

    def _merge(self, full, kind, batch, reply):
        n = reply.get("n", 0)
        if kind == self._INSERT:
            full["nInserted"] += n
        elif kind == self._DELETE:
            full["nRemoved"] += n
        else:
            upserted = reply.get("upserted") or []
            for doc in upserted:
                full["upserted"].append({"index": batch[doc["index"]][1], "_id": doc["_id"]})
            full["nUpserted"] += len(upserted)
            full["nMatched"] += n - len(upserted)
            full["nModified"] += reply.get("nModified", 0)
        for error in reply.get("writeErrors") or []:
            error = dict(error)
            position = error["index"]
            error["index"] = batch[position][1]
            error["op"] = batch[position][2]
            full["writeErrors"].append(error)
        if reply.get("writeConcernError"):
            full["writeConcernErrors"].append(reply["writeConcernError"])


class _ServerCursor:
    """What Cursor, CommandCursor and ChangeStream share: a batch in hand,
    getMore for the next one, killCursors at close (or when collected)."""

    def _start(self, database, reply, session, codec_options):
        self._database = database
        self._session = session
        self._codec_options = codec_options
        cursor = reply["cursor"]
        self._id = cursor.get("id", 0)
        self._ns = cursor.get("ns", "")
        self._batch = deque(cursor.get("firstBatch", []))
        self._post_batch_resume_token = cursor.get("postBatchResumeToken")
        self._retrieved = len(self._batch)
        if self._id:
            database.client._cursors.add(self)

    def _collection_name(self):
        return self._ns.split(".", 1)[1] if "." in self._ns else self._ns

    _cut_off = False

    def _get_more(self, max_time_ms=None):
        command = dict([("getMore", Int64(self._id)), ("collection", self._collection_name())])
        _optional(command, batchSize=getattr(self, "_batch_size", None) or None,
                  maxTimeMS=max_time_ms)
        try:
            reply = self._database.client._command(
                self._ns.split(".", 1)[0], command, self._codec_options, self._session)
        except PyMongoError:
            self._id = 0
            raise
        cursor = reply["cursor"]
        self._id = cursor.get("id", 0)
        self._batch = deque(cursor.get("nextBatch", []))
        self._post_batch_resume_token = cursor.get("postBatchResumeToken")
        self._retrieved += len(self._batch)

    def _discard(self, client_closing=False):
        """Kills the server-side cursor, if any; never raises (used at
        close, at collection and at exit). When its client closes, reading
        past the batch in hand is InvalidOperation, never a silent end."""
        cursor_id, self._id = getattr(self, "_id", 0), 0
        if not cursor_id:
            return
        if client_closing:
            self._cut_off = True
        client = self._database.client
        try:
            if not client._handle.closed:
                client._command(self._ns.split(".", 1)[0], dict([
                    ("killCursors", self._collection_name()),
                    ("cursors", [Int64(cursor_id)])]), session=self._session)
        except Exception:
            pass
        client._cursors.discard(self)

    def _next_document(self):
        """The next document: from the batch in hand, else getMore's."""
        while not self._batch:
            self._check_cut_off()
            if not self._id or self._limit_reached():
                self._discard()
                raise StopIteration
            self._get_more()
        return self._batch.popleft()

    def _limit_reached(self):
        return False

    def _check_cut_off(self):
        if self._cut_off:
            raise InvalidOperation("Cannot use MongoClient after close")

    def __del__(self):
        self._discard()

    @property
    def cursor_id(self):
        return getattr(self, "_id", None)

    @property
    def retrieved(self):
        return getattr(self, "_retrieved", 0)

    @property
    def session(self):
        return getattr(self, "_session", None)

    def to_list(self, length=None):
        """The documents left (at most `length`), as pymongo 4.9's."""
        out = []
        for document in self:
            out.append(document)
            if length is not None and len(out) >= length:
                break
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class CommandCursor(_ServerCursor):
    """The cursor of aggregate, listIndexes and listCollections."""

    @classmethod
    def _run(cls, database, collection_name, command, session=None, codec_options=None):
        self = cls()
        codec_options = codec_options or database.codec_options
        reply = database._command(command, session, codec_options)
        self._start(database, reply, session, codec_options)
        self._killed = False
        return self

    @property
    def alive(self):
        return bool(self._batch) or bool(self._id)

    def __iter__(self):
        return self

    def next(self):
        return self._next_document()

    __next__ = next

    def try_next(self):
        if not self._batch:
            self._check_cut_off()
        if not self._batch and self._id:
            self._get_more()
        return self._batch.popleft() if self._batch else None

    def close(self):
        self._batch = deque()
        self._discard()


class Cursor(_ServerCursor):
    """pymongo.cursor.Cursor over the find command: the query is sent at the
    first read; sort, skip, limit, batch_size, hint, ... before it."""

    _FIND_KEYWORDS = {
        "filter", "projection", "skip", "limit", "sort", "allow_partial_results",
        "batch_size", "collation", "hint", "max_time_ms", "max_await_time_ms", "min", "max",
        "comment", "return_key", "show_record_id", "allow_disk_use", "session", "let",
        "no_cursor_timeout", "cursor_type"}

    def __init__(self, collection, filter=None, projection=None, skip=0, limit=0, **kwargs):
        _check_keyword_options("find", kwargs, self._FIND_KEYWORDS)
        if filter is not None and not isinstance(filter, Mapping):
            raise TypeError("filter must be an instance of dict, bson.son.SON, or any other "
                            "type that inherits from collections.Mapping")
        self._collection = collection
        self._spec = {}
        self._filter = filter or {}
        self._projection = _fields_document(projection)
        self._skip = 0
        self._limit = 0
        self._batch_size = 0
        self._session = kwargs.pop("session", None)
        self._started = False
        self._explain = False
        self._id = 0
        self._batch = deque()
        self.skip(skip)
        self.limit(limit)
        if kwargs.get("sort") is not None:
            self.sort(kwargs.pop("sort"))
        if kwargs.get("batch_size"):
            self.batch_size(kwargs.pop("batch_size"))
        if kwargs.get("hint") is not None:
            self.hint(kwargs.pop("hint"))
        if kwargs.get("max_time_ms") is not None:
            self.max_time_ms(kwargs.pop("max_time_ms"))
        cursor_type = kwargs.pop("cursor_type", 0)
        if cursor_type:
            _not_supported("find option", {"cursor_type (tailable cursors)"})
        if kwargs.pop("max_await_time_ms", None) is not None:
            # Only a tailable await cursor waits, and those are refused above.
            _not_supported("find option", {"max_await_time_ms (tailable cursors)"})
        for bound in ("min", "max"):
            if kwargs.get(bound) is not None:
                kwargs[bound] = _index_document(_index_list(kwargs[bound]))
        if kwargs.get("collation") is not None:
            self.collation(kwargs.pop("collation"))
        renames = {"allow_partial_results": "allowPartialResults", "min": "min", "max": "max",
                   "comment": "comment", "return_key": "returnKey", "show_record_id": "showRecordId",
                   "allow_disk_use": "allowDiskUse", "let": "let",
                   "no_cursor_timeout": "noCursorTimeout", "sort": None, "batch_size": None,
                   "hint": None, "max_time_ms": None}
        for name, value in kwargs.items():
            field = renames.get(name)
            if field and value is not None and value is not False:
                self._spec[field] = value

    def _check_unstarted(self):
        if self._started:
            raise InvalidOperation("cannot set options after executing query")

    def sort(self, key_or_list, direction=None):
        self._check_unstarted()
        self._spec["sort"] = _index_document(_index_list(key_or_list, direction))
        return self

    def skip(self, skip):
        if not isinstance(skip, int):
            raise TypeError("skip must be an integer")
        if skip < 0:
            raise ValueError("skip must be >= 0")
        self._check_unstarted()
        self._skip = skip
        return self

    def limit(self, limit):
        if not isinstance(limit, int):
            raise TypeError("limit must be an integer")
        self._check_unstarted()
        self._limit = limit
        return self

    def batch_size(self, batch_size):
        if not isinstance(batch_size, int):
            raise TypeError("batch_size must be an integer")
        if batch_size < 0:
            raise ValueError("batch_size must be >= 0")
        self._check_unstarted()
        self._batch_size = batch_size
        return self

    def hint(self, index):
        self._check_unstarted()
        if index is None:
            self._spec.pop("hint", None)
        else:
            self._spec["hint"] = _hint_value(index)
        return self

    def max_time_ms(self, max_time_ms):
        if max_time_ms is not None and not isinstance(max_time_ms, int):
            raise TypeError("max_time_ms must be an integer or None")
        self._check_unstarted()
        if max_time_ms is None:
            self._spec.pop("maxTimeMS", None)
        else:
            self._spec["maxTimeMS"] = max_time_ms
        return self

    def comment(self, comment):
        self._check_unstarted()
        self._spec["comment"] = comment
        return self

    def collation(self, collation):
        self._check_unstarted()
        self._spec["collation"] = _collation(collation)
        return self

    def allow_disk_use(self, allow_disk_use):
        self._check_unstarted()
        self._spec["allowDiskUse"] = bool(allow_disk_use)
        return self

    def min(self, spec):
        self._check_unstarted()
        self._spec["min"] = _index_document(_index_list(spec))
        return self

    def max(self, spec):
        self._check_unstarted()
        self._spec["max"] = _index_document(_index_list(spec))
        return self

    def clone(self):
        other = Cursor(self._collection, self._filter, self._projection, self._skip,
                       self._limit, session=self._session)
        other._spec = dict(self._spec)
        other._batch_size = self._batch_size
        return other

    def __getitem__(self, index):
        """As pymongo's: cursor[5] is the sixth document (IndexError when
        there is none), cursor[2:7] a cursor with skip 2 and limit 5."""
        self._check_unstarted()
        if isinstance(index, slice):
            if index.step is not None:
                raise IndexError("Cursor instances do not support slice steps")
            start = index.start or 0
            if start < 0 or (index.stop is not None and index.stop < 0):
                raise IndexError("Cursor instances do not support negative indices")
            self._skip = start
            self._limit = 0 if index.stop is None else index.stop - start
            if index.stop is not None and self._limit <= 0:
                raise IndexError("stop index must be greater than start index for slice %r" %
                                 index)
            return self
        if isinstance(index, int):
            if index < 0:
                raise IndexError("Cursor instances do not support negative indices")
            clone = self.clone()
            clone.skip(index + self._skip)
            clone.limit(-1)
            for document in clone:
                return document
            raise IndexError("no such item for Cursor instance")
        raise TypeError("index %r cannot be applied to Cursor instances" % index)

    def rewind(self):
        self.close()
        self._started = False
        self._retrieved = 0
        return self

    @property
    def collection(self):
        return self._collection

    @property
    def alive(self):
        return not self._started or bool(self._batch) or bool(self._id)

    def _find_command(self):
        command = dict([("find", self._collection.name), ("filter", self._filter)])
        if self._projection is not None:
            command["projection"] = self._projection
        command.update(self._spec)
        if self._skip:
            command["skip"] = self._skip
        if self._limit:
            command["limit"] = abs(self._limit)
            if self._limit < 0:
                command["singleBatch"] = True
        if self._batch_size:
            command["batchSize"] = (min(self._batch_size, abs(self._limit)) if self._limit
                                    else self._batch_size)
        return command

    def _begin(self):
        self._started = True
        reply = self._collection._command(self._find_command(), self._session, read=True)
        self._start(self._collection.database, reply, self._session,
                    self._collection.codec_options)
        self._killed = False

    def __iter__(self):
        return self

    def next(self):
        if not self._started:
            self._begin()
        return self._next_document()

    def _limit_reached(self):
        return bool(self._limit) and self._retrieved >= abs(self._limit)

    __next__ = next

    def explain(self):
        """The find's explain, as pymongo's: {explain: <find>} at the
        server's default verbosity (allPlansExecution)."""
        command = self._find_command()
        command.pop("singleBatch", None)
        return self._collection._command(dict([("explain", command)]), self._session)

    def distinct(self, key):
        options = {}
        if "collation" in self._spec:
            options["collation"] = self._spec["collation"]
        return self._collection.distinct(key, self._filter, self._session, **options)

    def close(self):
        self._batch = deque()
        self._discard()


class ChangeStream(_ServerCursor):
    """pymongo's ChangeStream: an aggregate opening with $changeStream, read
    with getMore (maxTimeMS: max_await_time_ms). next() waits for an event;
    try_next() returns None when none came; resume_token is where to resume
    (resume_after / start_after)."""

    _SPEC_OPTIONS = {"full_document": "fullDocument", "resume_after": "resumeAfter",
                     "start_after": "startAfter",
                     "start_at_operation_time": "startAtOperationTime",
                     "full_document_before_change": "fullDocumentBeforeChange",
                     "show_expanded_events": "showExpandedEvents"}

    def __init__(self, client, db, collection, pipeline, kwargs, all_databases=False,
                 codec_options=None):
        kwargs = dict(kwargs)
        session = kwargs.pop("session", None)
        self._max_await_time_ms = kwargs.pop("max_await_time_ms", None)
        batch_size = kwargs.pop("batch_size", None)
        collation = kwargs.pop("collation", None)
        comment = kwargs.pop("comment", None)
        spec = {}
        for name in list(kwargs):
            if name in self._SPEC_OPTIONS:
                value = kwargs.pop(name)
                if value is not None:
                    spec[self._SPEC_OPTIONS[name]] = value
        _check_keyword_options("watch", kwargs, ())
        if all_databases:
            spec["allChangesForCluster"] = True
        self._resume_token = spec.get("startAfter") or spec.get("resumeAfter")
        command = dict([("aggregate", collection),
                        ("pipeline", [{"$changeStream": spec}] + list(pipeline or [])),
                        ("cursor", {"batchSize": batch_size} if batch_size is not None else {})])
        _optional(command, collation=collation, comment=comment)
        database = client[db]
        codec_options = codec_options or database.codec_options
        reply = database._command(command, session, codec_options)
        self._start(database, reply, session, codec_options)
        self._batch_size = batch_size
        self._closed = False

    @property
    def alive(self):
        return not self._closed

    @property
    def resume_token(self):
        return self._resume_token

    def try_next(self):
        if self._closed:
            raise StopIteration
        if not self._batch:
            self._check_cut_off()
            if not self._id:
                self.close()
                raise StopIteration
            self._get_more(self._max_await_time_ms)
        if not self._batch:
            if self._post_batch_resume_token is not None:
                self._resume_token = self._post_batch_resume_token
            return None
        event = self._batch.popleft()
        if not self._batch and self._post_batch_resume_token is not None:
            self._resume_token = self._post_batch_resume_token
        else:
            self._resume_token = event["_id"]
        return event

    def next(self):
        while True:
            event = self.try_next()
            if event is not None:
                return event

    __next__ = next

    def __iter__(self):
        return self

    def close(self):
        self._closed = True
        self._batch = deque()
        self._discard()


# ---- sessions and transactions ----

_TRANSIENT = "TransientTransactionError"
_UNKNOWN_COMMIT = "UnknownTransactionCommitResult"
_WITH_TRANSACTION_LIMIT_S = 120  # pymongo's with_transaction retries for two minutes


class ClientSession:
    """pymongo's ClientSession: an lsid on every command given
    session=...; start_transaction / commit_transaction /
    abort_transaction / with_transaction as the drivers' transaction
    specification runs them (txnNumber, autocommit: false, startTransaction
    on the first statement)."""

    def __init__(self, client, causal_consistency, default_transaction_options, snapshot):
        if snapshot and causal_consistency:
            raise ConfigurationError("snapshot reads do not support causal_consistency=True")
        self._client = client
        self._lsid = {"id": Binary(uuid.uuid4().bytes, 4)}
        self._txn_number = 0
        self._in_transaction = False
        self._starting = False
        self._snapshot = snapshot
        self._snapshot_time = None
        self._ended = False
        self._options = default_transaction_options
        self._txn_read_concern = self._txn_write_concern = self._txn_max_commit_time_ms = None
        # One node: every read sees every write acknowledged before it, so a
        # session is causally consistent whichever is asked.
        self._causal_consistency = (not snapshot) if causal_consistency is None else (
            causal_consistency)

    @property
    def client(self):
        return self._client

    @property
    def session_id(self):
        return self._lsid

    @property
    def in_transaction(self):
        return self._in_transaction

    @property
    def has_ended(self):
        return self._ended

    def _apply(self, command, client):
        if self._ended:
            raise InvalidOperation("Cannot use ended session")
        if client is not self._client:
            raise InvalidOperation("Can only use session with the MongoClient that started it")
        command["lsid"] = self._lsid
        if self._in_transaction and next(iter(command)) not in ("getMore", "killCursors"):
            command["txnNumber"] = Int64(self._txn_number)
            command["autocommit"] = False
            if self._starting:
                command["startTransaction"] = True
                if self._txn_read_concern is not None and self._txn_read_concern.document:
                    command["readConcern"] = self._txn_read_concern.document
                self._starting = False
        elif self._in_transaction:
            command["txnNumber"] = Int64(self._txn_number)
            command["autocommit"] = False
        elif self._snapshot and next(iter(command)) in ("find", "aggregate", "distinct"):
            read_concern = {"level": "snapshot"}
            if self._snapshot_time is not None:
                read_concern["atClusterTime"] = self._snapshot_time
            command["readConcern"] = read_concern

    def _observe(self, reply):
        if self._snapshot and self._snapshot_time is None:
            cursor = reply.get("cursor") or {}
            self._snapshot_time = reply.get("atClusterTime") or cursor.get("atClusterTime")

    def start_transaction(self, read_concern=None, write_concern=None, read_preference=None,
                          max_commit_time_ms=None):
        """As pymongo's: each option, or else the session's
        default_transaction_options', goes where the drivers send it (the
        read concern on the first statement, the write concern and
        maxTimeMS on commitTransaction)."""
        if self._snapshot:
            raise InvalidOperation("Transactions are not supported in snapshot sessions")
        if self._in_transaction:
            raise InvalidOperation("Transaction already in progress")
        defaults = self._options

        def pick(value, name):
            return value if value is not None else getattr(defaults, name, None)
        _check_read_preference(pick(read_preference, "read_preference"))
        self._txn_read_concern = pick(read_concern, "read_concern")
        self._txn_write_concern = pick(write_concern, "write_concern")
        self._txn_max_commit_time_ms = pick(max_commit_time_ms, "max_commit_time_ms")
        self._txn_number += 1
        self._in_transaction = True
        self._starting = True
        return _TransactionContext(self)

    def _end_transaction(self, name):
        if not self._in_transaction:
            raise InvalidOperation("No transaction started")
        if self._starting:  # no statement ran: nothing to commit or abort
            self._in_transaction = self._starting = False
            return
        command = dict([(name, 1), ("txnNumber", Int64(self._txn_number)),
                        ("autocommit", False), ("lsid", self._lsid)])
        if self._txn_write_concern is not None and self._txn_write_concern.document:
            command["writeConcern"] = self._txn_write_concern.document
        if name == "commitTransaction" and self._txn_max_commit_time_ms is not None:
            command["maxTimeMS"] = self._txn_max_commit_time_ms
        try:
            self._client._command("admin", command)
        finally:
            self._in_transaction = False

    def commit_transaction(self):
        self._end_transaction("commitTransaction")

    def abort_transaction(self):
        try:
            self._end_transaction("abortTransaction")
        except OperationFailure:
            pass  # pymongo ignores abort's server errors

    def with_transaction(self, callback, read_concern=None, write_concern=None,
                         read_preference=None, max_commit_time_ms=None):
        start = time.monotonic()
        while True:
            self.start_transaction(read_concern, write_concern, read_preference,
                                   max_commit_time_ms)
            try:
                result = callback(self)
            except Exception as exc:
                if self._in_transaction:
                    self.abort_transaction()
                if (isinstance(exc, PyMongoError) and exc.has_error_label(_TRANSIENT) and
                        time.monotonic() - start < _WITH_TRANSACTION_LIMIT_S):
                    continue
                raise
            if not self._in_transaction:
                return result  # the callback ended the transaction itself
            while True:
                try:
                    self.commit_transaction()
                except PyMongoError as exc:
                    retry = time.monotonic() - start < _WITH_TRANSACTION_LIMIT_S
                    if retry and exc.has_error_label(_UNKNOWN_COMMIT):
                        self._in_transaction = True
                        continue
                    if retry and exc.has_error_label(_TRANSIENT):
                        break
                    raise
                return result

    def end_session(self):
        if self._ended:
            return
        if self._in_transaction:
            self.abort_transaction()
        self._ended = True
        try:
            if not self._client._handle.closed:
                self._client._command("admin", dict([("endSessions", [self._lsid])]))
        except PyMongoError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.end_session()

    def __del__(self):
        # A session left open: its transaction is aborted and the session
        # ended, as the server would at its timeout.
        try:
            self.end_session()
        except Exception:
            pass


class _TransactionContext:
    def __init__(self, session):
        self._session = session

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._session.in_transaction:
            if exc_type is None:
                self._session.commit_transaction()
            else:
                self._session.abort_transaction()

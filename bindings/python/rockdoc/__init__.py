"""rockdoc in process, with pymongo's API.

    import rockdoc
    client = rockdoc.MongoClient("path/to/dir")   # or "rockdoc:///path", ":memory:"
    orders = client["shop"]["orders"]
    orders.insert_one({"sku": "a1", "qty": 3})

Documents are pymongo's bson types; results are pymongo.results' classes and
failures pymongo.errors' (DuplicateKeyError, OperationFailure with code,
details and has_error_label), so code written for pymongo runs against
rockdoc by changing the line that makes the client. The engine is
librockdoc through its C API (include/rockdoc/c.h); the GIL is released
during every engine call.
"""
from pymongo import errors  # noqa: F401  (rockdoc.errors is pymongo.errors)
from pymongo.operations import (DeleteMany, DeleteOne, IndexModel, InsertOne,  # noqa: F401
                                UpdateMany)
from pymongo.results import (BulkWriteResult, DeleteResult, InsertManyResult,  # noqa: F401
                             InsertOneResult, UpdateResult)

from ._client import (ASCENDING, DESCENDING, ChangeStream, ClientSession,  # noqa: F401
                      Collection, CommandCursor, Cursor, Database, MongoClient)
from ._native import version as _engine_version
from ._operations import ReplaceOne, UpdateOne  # noqa: F401

try:
    from pymongo import ReturnDocument  # noqa: F401
except ImportError:  # pymongo 3.x keeps it in pymongo.collection
    from pymongo.collection import ReturnDocument  # noqa: F401

try:  # pyproject.toml's version, as installed
    from importlib.metadata import version as _distribution_version
    __version__ = _distribution_version("rockdoc")
except Exception:  # not installed (run from a source tree)
    __version__ = _engine_version()


def engine_version():
    """librockdoc's version (rockdoc_version())."""
    return _engine_version()

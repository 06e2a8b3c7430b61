"""Replies mapped onto pymongo's own exception classes, as pymongo maps a
server's replies (pymongo.helpers._check_command_response and
_check_write_command_response, whose module and signature differ between
pymongo 3.11 and 4.x, hence this small copy of their rules): an
application's `except DuplicateKeyError` or `except OperationFailure as e:
e.code` works unchanged against rockdoc."""
from pymongo.errors import (BulkWriteError, CursorNotFound, DuplicateKeyError, ExecutionTimeout,
                            OperationFailure, WriteConcernError, WriteError, WTimeoutError)

# What rockdoc's hello reports (src/command/server_commands.cc); pymongo
# keeps the server's value on every OperationFailure.
MAX_WIRE_VERSION = 21  # kMaxWireVersion, MongoDB 7.0

_DUPLICATE_KEY_CODES = (11000, 11001, 12582)


def check_command(reply):
    """Raises the pymongo exception for a failed command reply (ok: 0)."""
    if reply.get("ok"):
        return reply
    errmsg = reply.get("errmsg", "")
    code = reply.get("code")
    if code in _DUPLICATE_KEY_CODES:
        raise DuplicateKeyError(errmsg, code, reply, MAX_WIRE_VERSION)
    if code == 50:
        raise ExecutionTimeout(errmsg, code, reply, MAX_WIRE_VERSION)
    if code == 43:
        raise CursorNotFound(errmsg, code, reply, MAX_WIRE_VERSION)
    raise OperationFailure(errmsg, code, reply, MAX_WIRE_VERSION)


def raise_write_concern_error(error):
    if "errInfo" in error and error["errInfo"].get("wtimeout"):
        raise WTimeoutError(error.get("errmsg"), error.get("code"), error)
    raise WriteConcernError(error.get("errmsg"), error.get("code"), error)


def check_single_write(reply):
    """The single-document write calls (insert_one, update_one, ...): the
    last write error as WriteError or DuplicateKeyError, else a write
    concern error."""
    check_command(reply)
    errors = reply.get("writeErrors")
    if errors:
        error = errors[-1]
        if error.get("code") == 11000:
            raise DuplicateKeyError(error.get("errmsg"), 11000, error, MAX_WIRE_VERSION)
        raise WriteError(error.get("errmsg"), error.get("code"), error, MAX_WIRE_VERSION)
    if reply.get("writeConcernError"):
        raise_write_concern_error(reply["writeConcernError"])
    return reply


def check_bulk(full_result):
    """insert_many and bulk_write: BulkWriteError (code 65) with the whole
    merged result as its details, as pymongo raises it."""
    if full_result["writeErrors"] or full_result["writeConcernErrors"]:
        if full_result["writeErrors"]:
            full_result["writeErrors"].sort(key=lambda error: error["index"])
        raise BulkWriteError(full_result)

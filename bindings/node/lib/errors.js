'use strict';
// Replies mapped onto the Node.js driver's own error classes, as the driver
// maps a server's replies (mongodb/lib/operations/*.js, bulk/common.js): an
// application's `err instanceof MongoServerError`, `err.code`,
// `err.hasErrorLabel(...)` work unchanged against rockdoc.
const mongodb = require('mongodb');
const bulk = require('mongodb/lib/bulk/common.js');

const { MongoServerError, MongoBulkWriteError, MongoInvalidArgumentError } = mongodb;

// A failed command (ok: 0) as MongoServerError, with the reply's fields
// (code, codeName, errorLabels, errInfo, ...) on it.
function checkCommand(reply) {
  if (reply.ok) return reply;
  throw new MongoServerError(reply);
}

// The single-document writes (insertOne, updateOne, deleteOne, ...): the
// first write error as MongoServerError, as the driver throws it.
function checkSingleWrite(reply) {
  checkCommand(reply);
  if (reply.writeErrors && reply.writeErrors.length) throw new MongoServerError(reply.writeErrors[0]);
  if (reply.writeConcernError) {
    throw new mongodb.MongoWriteConcernError({ ...reply.writeConcernError, ok: 1 });
  }
  return reply;
}

// An option this binding does not implement: refused, never ignored.
function notSupported(what, names) {
  if (names.length) {
    throw new MongoInvalidArgumentError(
        `${what} option${names.length > 1 ? 's' : ''} ${names.sort().join(', ')} ` +
        `${names.length > 1 ? 'are' : 'is'} not supported by rockdoc`);
  }
}

// Checks `options` against the names an operation knows.
function checkOptions(what, options, known) {
  if (options == null) return {};
  if (typeof options !== 'object') throw new MongoInvalidArgumentError(`${what} options must be an object`);
  notSupported(what, Object.keys(options).filter((k) => options[k] !== undefined && !known.has(k)));
  return options;
}

module.exports = {
  checkCommand, checkSingleWrite, checkOptions, notSupported,
  BulkWriteResult: bulk.BulkWriteResult, WriteError: bulk.WriteError, MongoBulkWriteError,
};

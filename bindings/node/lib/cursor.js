'use strict';
// The driver's cursors over rockdoc's server-side cursors: the first command
// (find, aggregate, listIndexes, listCollections) runs at the first read, then
// getMore as the batch in hand runs out, and killCursors at close. As the
// driver's: for await, next/hasNext/tryNext/toArray/forEach/map/close.
const { Long } = require('bson');
const { EventEmitter } = require('events');
const mongodb = require('mongodb');
const { checkOptions } = require('./errors');

const { MongoCursorInUseError, MongoAPIError } = mongodb;

class AbstractCursor extends EventEmitter {
  constructor(client, dbName, session) {
    super();
    this._client = client;
    this._dbName = dbName;
    this._session = session;
    this._buffer = [];
    this._id = null;        // a Long once started; Long.ZERO when exhausted
    this._ns = null;
    this._closed = false;
    this._transforms = [];
    this._returned = 0;
  }

  get id() { return this._id === null ? undefined : this._id; }
  get closed() { return this._closed; }
  get killed() { return this._closed && this._id !== null && !this._id.isZero(); }
  get namespace() {
    const [db, ...rest] = (this._ns || `${this._dbName}.`).split('.');
    return { db, collection: rest.join('.') };
  }
  bufferedCount() { return this._buffer.length; }
  readBufferedDocuments(number) {
    return this._buffer.splice(0, number === undefined ? this._buffer.length : number)
        .map((d) => this._transform(d));
  }

  _checkUnstarted() {
    if (this._id !== null) throw new MongoCursorInUseError('Cursor is already initialized');
  }

  _transform(doc) {
    for (const fn of this._transforms) doc = fn(doc);
    return doc;
  }

  // Adds a transformation of each document, as the driver's map().
  map(transform) {
    this._checkUnstarted();
    this._transforms.push(transform);
    return this;
  }

  _start(buf, reply) {
    const cursor = reply.cursor;
    this._id = this._client._cursorId(buf);
    this._ns = cursor.ns;
    this._buffer = cursor.firstBatch || [];
    this._postBatchResumeToken = cursor.postBatchResumeToken;
    if (!this._id.isZero()) this._client._cursors.add(this);
  }

  // Fills the buffer: the first command, or one getMore. false at the end.
  async _fetch(maxTimeMS) {
    if (this._closed) return false;
    if (this._id === null) {
      const { db, command } = this._firstCommand();
      const { buf, reply } = await this._client._command(db, command, { session: this._session });
      this._start(buf, reply);
      return true;
    }
    if (this._id.isZero() || this._limitReached()) {
      await this.close();
      return false;
    }
    const { db, collection } = this.namespace;
    const command = { getMore: this._id, collection };
    const batchSize = this._getMoreBatchSize();
    if (batchSize) command.batchSize = batchSize;
    if (maxTimeMS !== undefined) command.maxTimeMS = maxTimeMS;
    let result;
    try {
      result = await this._client._command(db, command, { session: this._session });
    } catch (e) {
      this._id = Long.ZERO;
      this._finish();
      throw e;
    }
    this._id = this._client._cursorId(result.buf);
    this._buffer = result.reply.cursor.nextBatch || [];
    this._postBatchResumeToken = result.reply.cursor.postBatchResumeToken;
    if (this._id.isZero()) this._client._cursors.delete(this);
    return true;
  }

  _limitReached() { return false; }
  _getMoreBatchSize() { return this._batchSize; }

  _finish() {
    this._closed = true;
    this._client._cursors.delete(this);
  }

  async hasNext() {
    while (this._buffer.length === 0) {
      if (!(await this._fetch())) return false;
      if (this._buffer.length === 0 && this._id.isZero()) {
        await this.close();
        return false;
      }
    }
    return true;
  }

  async next() {
    if (!(await this.hasNext())) return null;
    this._returned++;
    return this._transform(this._buffer.shift());
  }

  // One getMore at most: a document, or null when none is ready.
  async tryNext() {
    if (this._buffer.length === 0 && !(await this._fetch())) return null;
    if (this._buffer.length === 0) return null;
    this._returned++;
    return this._transform(this._buffer.shift());
  }

  async toArray() {
    const out = [];
    while (await this.hasNext()) {
      const batch = this._buffer;
      this._buffer = [];
      this._returned += batch.length;
      for (const doc of batch) out.push(this._transform(doc));
      if (this._limitReached()) break;
    }
    await this.close();
    return out;
  }

  async forEach(iterator) {
    while (await this.hasNext()) {
      if ((await iterator(await this.next())) === false) break;
    }
  }

  async* [Symbol.asyncIterator]() {
    try {
      while (await this.hasNext()) yield await this.next();
    } finally {
      await this.close();
    }
  }

  // Kills the server-side cursor (if any) and ends the cursor; never throws.
  async close() {
    if (this._closed) return;
    this._finish();
    const id = this._id;
    if (id && !id.isZero() && this._client._native) {
      const { db, collection } = this.namespace;
      try {
        await this._client._command(db, { killCursors: collection, cursors: [id] },
                                    { session: this._session });
      } catch {}
    }
    this.emit('close');
  }

  async rewind() {
    throw new MongoAPIError('rewind() is not supported by rockdoc');
  }
}

// The driver's explain argument: true or omitted is allPlansExecution,
// false queryPlanner, else a verbosity's name.
function explainVerbosity(verbosity) {
  if (verbosity === undefined || verbosity === true) return 'allPlansExecution';
  if (verbosity === false) return 'queryPlanner';
  return verbosity;
}

// A cursor command's `cursor` field: {batchSize} when one is given.
function cursorField(batchSize) {
  return batchSize !== undefined ? { batchSize } : {};
}

const FIND_OPTIONS = new Set(['sort', 'projection', 'skip', 'limit', 'batchSize', 'hint',
  'maxTimeMS', 'collation', 'comment', 'let', 'min', 'max', 'returnKey', 'showRecordId',
  'allowDiskUse', 'singleBatch', 'session', 'noCursorTimeout', 'allowPartialResults']);
const FIND_COMMAND_FIELDS = ['sort', 'projection', 'skip', 'hint', 'maxTimeMS', 'collation',
  'comment', 'let', 'min', 'max', 'returnKey', 'showRecordId', 'allowDiskUse', 'noCursorTimeout',
  'allowPartialResults'];

// The driver's sort argument ('a', ['a', 1], [['a', 1], ['b', -1]], {a: 1},
// a Map) as a document.
function formatSort(sort, direction) {
  if (sort == null) return undefined;
  const dir = (d) => {
    if (d === 'asc' || d === 'ascending') return 1;
    if (d === 'desc' || d === 'descending') return -1;
    return d;
  };
  if (typeof sort === 'string') return { [sort]: dir(direction === undefined ? 1 : direction) };
  if (sort instanceof Map) return Object.fromEntries([...sort].map(([k, v]) => [k, dir(v)]));
  if (Array.isArray(sort)) {
    if (sort.length === 2 && typeof sort[0] === 'string' && !Array.isArray(sort[1]) &&
        typeof sort[1] !== 'string') {
      return { [sort[0]]: dir(sort[1]) };
    }
    return Object.fromEntries(sort.map((s) => (Array.isArray(s) ? [s[0], dir(s[1])] : [s, 1])));
  }
  return Object.fromEntries(Object.entries(sort).map(([k, v]) => [k, dir(v)]));
}

class FindCursor extends AbstractCursor {
  constructor(collection, filter, options) {
    options = checkOptions('find', options, FIND_OPTIONS);
    super(collection._client, collection.dbName, options.session);
    this._collection = collection;
    this._filter = filter || {};
    this._options = { ...options };
    delete this._options.session;
    if (options.sort !== undefined) this._options.sort = formatSort(options.sort);
    this._batchSize = options.batchSize;
  }

  _command() {
    const o = this._options;
    const command = { find: this._collection.collectionName, filter: this._filter };
    for (const name of FIND_COMMAND_FIELDS) if (o[name] !== undefined) command[name] = o[name];
    if (o.limit !== undefined && o.limit !== 0) {
      if (o.limit < 0) {
        command.limit = -o.limit;
        command.singleBatch = true;
      } else {
        command.limit = o.limit;
      }
    }
    if (o.singleBatch !== undefined) command.singleBatch = o.singleBatch;
    if (o.batchSize !== undefined) command.batchSize = o.batchSize;
    // As the driver: no batch larger than what the limit leaves.
    if (command.limit && command.batchSize !== undefined && command.batchSize > command.limit) {
      command.batchSize = command.limit;
    }
    return command;
  }

  _firstCommand() { return { db: this._collection.dbName, command: this._command() }; }

  _limitReached() {
    const limit = Math.abs(this._options.limit || 0);
    return limit > 0 && this._returned + this._buffer.length >= limit;
  }

  _getMoreBatchSize() {
    const limit = Math.abs(this._options.limit || 0);
    if (!limit) return this._batchSize;
    const left = limit - this._returned - this._buffer.length;
    return this._batchSize ? Math.min(this._batchSize, left) : left;
  }

  _set(name, value) {
    this._checkUnstarted();
    this._options[name] = value;
    return this;
  }

  filter(filter) { this._checkUnstarted(); this._filter = filter; return this; }
  sort(sort, direction) { return this._set('sort', formatSort(sort, direction)); }
  skip(value) { return this._set('skip', value); }
  limit(value) { return this._set('limit', value); }
  project(value) { return this._set('projection', value); }
  hint(value) { return this._set('hint', value); }
  min(value) { return this._set('min', value); }
  max(value) { return this._set('max', value); }
  comment(value) { return this._set('comment', value); }
  maxTimeMS(value) { return this._set('maxTimeMS', value); }
  collation(value) { return this._set('collation', value); }
  returnKey(value) { return this._set('returnKey', value); }
  showRecordId(value) { return this._set('showRecordId', value); }
  allowDiskUse(value = true) { return this._set('allowDiskUse', value); }
  batchSize(value) {
    this._set('batchSize', value);
    this._batchSize = value;
    return this;
  }

  clone() {
    const copy = new FindCursor(this._collection, this._filter,
                                { ...this._options, session: this._session });
    copy._transforms = [...this._transforms];
    return copy;
  }

  // The driver's FindCursor.explain: the find command under explain
  // (verbosity true or omitted: allPlansExecution, false: queryPlanner).
  async explain(verbosity) {
    verbosity = explainVerbosity(verbosity);
    const { reply } = await this._client._command(this._collection.dbName,
        { explain: this._command(), verbosity }, { session: this._session });
    return reply;
  }

  async count() {
    throw new MongoAPIError('cursor.count() is not supported by rockdoc (the driver deprecates ' +
                            'it): use collection.countDocuments()');
  }
}

// A cursor whose first command is given (aggregate, listIndexes,
// listCollections).
class CommandCursor extends AbstractCursor {
  constructor(client, dbName, command, options = {}) {
    super(client, dbName, options.session);
    this._commandDoc = command;
    this._batchSize = options.batchSize;
  }
  _firstCommand() { return { db: this._dbName, command: this._commandDoc }; }
  batchSize(value) {
    this._checkUnstarted();
    this._batchSize = value;
    this._commandDoc.cursor = { ...(this._commandDoc.cursor || {}), batchSize: value };
    return this;
  }

  async explain(verbosity) {
    verbosity = explainVerbosity(verbosity);
    const command = { ...this._commandDoc };
    delete command.cursor;
    const { reply } = await this._client._command(this._dbName, { explain: command, verbosity },
                                                  { session: this._session });
    return reply;
  }
}

class AggregationCursor extends CommandCursor {}
class ListIndexesCursor extends CommandCursor {}
class ListCollectionsCursor extends CommandCursor {}

module.exports = { AbstractCursor, FindCursor, AggregationCursor, ListIndexesCursor,
                   ListCollectionsCursor, CommandCursor, formatSort, cursorField };

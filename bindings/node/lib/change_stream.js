'use strict';
// The driver's ChangeStream: an aggregate opening with $changeStream, read
// by getMore with maxTimeMS (maxAwaitTimeMS, 1000 ms by default here so that
// close() and the client's close never wait longer). Either an event
// emitter (on('change') starts reading) or an async iterator (next,
// hasNext, tryNext, for await), never both, as the driver's.
const { EventEmitter } = require('events');
const mongodb = require('mongodb');
const { AbstractCursor, cursorField } = require('./cursor');
const { checkOptions } = require('./errors');

const { MongoAPIError, MongoChangeStreamError } = mongodb;

const CHANGE_STREAM_OPTIONS = new Set(['fullDocument', 'fullDocumentBeforeChange', 'resumeAfter',
  'startAfter', 'startAtOperationTime', 'showExpandedEvents', 'maxAwaitTimeMS', 'batchSize',
  'collation', 'comment', 'session']);
const SPEC_FIELDS = ['fullDocument', 'fullDocumentBeforeChange', 'resumeAfter', 'startAfter',
  'startAtOperationTime', 'showExpandedEvents'];
const DEFAULT_AWAIT_MS = 1000;

class ChangeStreamCursor extends AbstractCursor {
  constructor(client, dbName, command, session, awaitMs) {
    super(client, dbName, session);
    this._commandDoc = command;
    this._awaitMs = awaitMs;
  }
  _firstCommand() { return { db: this._dbName, command: this._commandDoc }; }
}

class ChangeStream extends EventEmitter {
  // target: { client, db (a name or null: the whole deployment), collection
  // (a name or null) }.
  constructor(target, pipeline, options) {
    super();
    options = checkOptions('watch', options, CHANGE_STREAM_OPTIONS);
    if (pipeline != null && !Array.isArray(pipeline)) {
      throw new MongoChangeStreamError('pipeline must be an array of stages');
    }
    const spec = {};
    for (const name of SPEC_FIELDS) if (options[name] !== undefined) spec[name] = options[name];
    if (target.db === null) spec.allChangesForCluster = true;
    const command = {
      aggregate: target.collection === null ? 1 : target.collection,
      pipeline: [{ $changeStream: spec }, ...(pipeline || [])],
      cursor: cursorField(options.batchSize),
    };
    if (options.collation !== undefined) command.collation = options.collation;
    if (options.comment !== undefined) command.comment = options.comment;
    this._awaitMs = options.maxAwaitTimeMS === undefined ? DEFAULT_AWAIT_MS : options.maxAwaitTimeMS;
    this._cursor = new ChangeStreamCursor(target.client, target.db === null ? 'admin' : target.db,
                                          command, options.session, this._awaitMs);
    this._client = target.client;
    this._client._streams.add(this);
    this._resumeToken = options.startAfter || options.resumeAfter || null;
    this._mode = null;  // 'emitter' or 'iterator'
    this._closed = false;
    this.pipeline = pipeline || [];
    this.options = options;
    this.on('newListener', (event) => {
      if (event === 'change' && this._mode !== 'emitter') this._stream();
    });
  }

  get resumeToken() { return this._resumeToken; }
  get closed() { return this._closed; }

  _setMode(mode) {
    if (this._mode && this._mode !== mode) {
      throw new MongoAPIError(mode === 'emitter'
          ? 'ChangeStream cannot be used as an EventEmitter after being used as an iterator'
          : 'ChangeStream cannot be used as an iterator after being used as an EventEmitter');
    }
    this._mode = mode;
  }

  // One read: the next event in hand or from one getMore (null: none came).
  async _read() {
    const cursor = this._cursor;
    if (cursor._closed) {  // closed under the stream (its client's close)
      await this.close();
      return null;
    }
    if (cursor._id === null) {
      await cursor._fetch();
    }
    if (cursor._buffer.length === 0 && !cursor._closed) {
      if (cursor._id.isZero()) {
        await this.close();
        return null;
      }
      await cursor._fetch(this._awaitMs);
    }
    if (cursor._buffer.length === 0) {
      if (cursor._postBatchResumeToken) this._resumeToken = cursor._postBatchResumeToken;
      if (cursor._id !== null && cursor._id.isZero()) await this.close();
      return null;
    }
    const event = cursor._buffer.shift();
    if (event._id === undefined) {
      await this.close();
      throw new MongoChangeStreamError('A change stream document has been received that lacks ' +
                                       'a resume token (_id).');
    }
    this._resumeToken = cursor._buffer.length === 0 && cursor._postBatchResumeToken
        ? cursor._postBatchResumeToken : event._id;
    this.emit('resumeTokenChanged', this._resumeToken);
    return event;
  }

  _checkOpen() {
    if (this._closed) throw new MongoAPIError('ChangeStream is closed');
  }

  async tryNext() {
    this._setMode('iterator');
    this._checkOpen();
    return this._read();
  }

  async next() {
    this._setMode('iterator');
    for (;;) {
      this._checkOpen();
      const event = await this._read();
      if (event) return event;
    }
  }

  async hasNext() {
    this._setMode('iterator');
    for (;;) {
      if (this._closed) return false;
      if (this._cursor._buffer.length) return true;
      const event = await this._read();
      if (event) {
        this._cursor._buffer.unshift(event);
        return true;
      }
    }
  }

  async* [Symbol.asyncIterator]() {
    try {
      while (!this._closed) {
        const event = await this.next().catch((e) => {
          if (this._closed) return null;
          throw e;
        });
        if (event === null) return;
        yield event;
      }
    } finally {
      await this.close();
    }
  }

  async _stream() {
    this._setMode('emitter');
    try {
      while (!this._closed) {
        const event = await this._read();
        if (event && !this._closed) this.emit('change', event);
      }
    } catch (e) {
      if (!this._closed) {
        this.emit('error', e);
        await this.close();
      }
    }
  }

  async close() {
    if (this._closed) return;
    this._closed = true;
    this._client._streams.delete(this);
    await this._cursor.close();
    this.emit('close');
  }
}

ChangeStream.CHANGE = 'change';
ChangeStream.CLOSE = 'close';
ChangeStream.ERROR = 'error';

module.exports = { ChangeStream };

'use strict';
// rockdoc in process with the MongoDB Node.js driver's API:
//   const { MongoClient } = require('rockdoc');
//   const client = new MongoClient('/path/to/dir');   // or 'rockdoc:///path/to/dir'
//   await client.connect();
//   const orders = client.db('shop').collection('orders');
//   await orders.insertOne({ sku: 'a1', qty: 2 });
//   for await (const doc of orders.find({ qty: { $gt: 1 } })) console.log(doc);
//   await client.close();
//
// Every call builds the command the Node.js driver would send to a server,
// encodes it with js-bson (the driver's `bson`), runs it in process through
// rockdoc's C API on libuv's worker pool (the addon, src/addon.cc: every
// method returns a promise and the event loop never blocks), decodes the
// reply with the driver's defaults and maps a failure onto the driver's own
// error classes (MongoServerError, MongoBulkWriteError, ...). So the binding
// accepts and refuses exactly what rockdoc-serve does for the driver.
const path = require('path');
const { EventEmitter } = require('events');
const bson = require('bson');
const mongodb = require('mongodb');
const { encode, decode, cursorId } = require('./bson_reply');
const { checkCommand, checkOptions } = require('./errors');
const { Collection } = require('./collection');
const { AggregationCursor, ListCollectionsCursor, FindCursor, AbstractCursor,
        cursorField } = require('./cursor');
const { ChangeStream } = require('./change_stream');
const { ClientSession } = require('./session');

const native = require(path.join(__dirname, '..', 'build', 'Release', 'rockdoc.node'));

const { MongoParseError, MongoInvalidArgumentError, MongoServerError } = mongodb;

const CLIENT_OPTIONS = new Set(['createIfMissing', 'sync', 'changeLog', 'blockCacheBytes',
                                'readOnly', 'forceServerObjectId']);
// What the addon's open() takes (the rest are the JavaScript side's).
const OPEN_OPTIONS = ['createIfMissing', 'sync', 'changeLog', 'blockCacheBytes', 'readOnly'];
const DB_OPTIONS = new Set([]);

// The clients open in this process: their directories are closed at exit by
// the addon's environment cleanup hook, whatever JavaScript left open.
class MongoClient extends EventEmitter {
  // url: a directory, or rockdoc:///absolute/path. options: createIfMissing
  // (default true), sync (the WAL synced on every commit, default false),
  // changeLog (the log change streams read, default true: as rockdoc-serve,
  // a replica set of one), blockCacheBytes, readOnly, and the driver's
  // forceServerObjectId (the engine adds the _id). Any other option is
  // MongoInvalidArgumentError, never ignored.
  constructor(url, options) {
    super();
    if (typeof url !== 'string' || url === '') {
      throw new MongoParseError('rockdoc MongoClient needs a directory or a rockdoc:/// URL');
    }
    if (url.startsWith('mongodb://') || url.startsWith('mongodb+srv://')) {
      throw new MongoParseError('rockdoc MongoClient opens a directory; use the mongodb ' +
                                `package's MongoClient for ${url}`);
    }
    if (url.startsWith('rockdoc://')) url = url.slice('rockdoc://'.length);
    if (url === '') throw new MongoParseError('rockdoc:/// URL names no directory');
    this.options = { changeLog: true, ...checkOptions('MongoClient', options, CLIENT_OPTIONS) };
    this._path = url;
    this._native = null;
    this._connecting = null;
    this._inflight = new Set();
    this._cursors = new Set();
    this._sessions = new Set();
    this._streams = new Set();
  }

  static async connect(url, options) {
    return new MongoClient(url, options).connect();
  }

  async connect() {
    if (this._native) return this;
    if (!this._connecting) {
      const handle = new native.Native();
      const open = {};
      for (const name of OPEN_OPTIONS) if (this.options[name] !== undefined) open[name] = this.options[name];
      this._connecting = handle.open(this._path, open).then(() => {
        this._native = handle;
        this._connecting = null;
      }, (e) => {
        this._connecting = null;
        throw new MongoServerError({ ok: 0, errmsg: e.message, code: e.code });
      });
    }
    await this._connecting;
    return this;
  }

  // Runs `command` on database `db`: { buf, reply }. check (default true):
  // an ok: 0 reply throws MongoServerError. batch: the command carries a
  // write batch (rockdoc_run_batch_command). session: a ClientSession.
  async _command(db, command, { session, check = true, batch = false } = {}) {
    if (!this._native) await this.connect();
    if (session) {
      if (session.client !== this) {
        throw new MongoInvalidArgumentError('ClientSession must be from the same MongoClient');
      }
      session._apply(command);
    }
    const pending = this._native.command(db, encode(command), batch);
    this._inflight.add(pending);
    let buf;
    try {
      buf = await pending;
    } catch (e) {
      // No reply: the command could not run (bad arguments, a closed client).
      const reply = { ok: 0, errmsg: e.message, code: e.code };
      if (check) throw new MongoServerError(reply);
      return { buf: null, reply };
    } finally {
      this._inflight.delete(pending);
    }
    const reply = decode(buf);
    return { buf, reply: check ? checkCommand(reply) : reply };
  }

  _cursorId(buf) { return cursorId(buf); }

  db(name = 'test', options) {
    checkOptions('db', options, DB_OPTIONS);
    return new Db(this, name);
  }

  startSession(options) {
    const session = new ClientSession(this, options);
    this._sessions.add(session);
    return session;
  }

  async withSession(options, fn) {
    if (typeof options === 'function') [options, fn] = [undefined, options];
    const session = this.startSession(options);
    try {
      return await fn(session);
    } finally {
      await session.endSession();
    }
  }

  watch(pipeline = [], options) {
    return new ChangeStream({ client: this, db: null, collection: null }, pipeline, options);
  }

  // Ends the sessions, closes the cursors and change streams, waits for the
  // calls in flight (an awaiting change stream's getMore: at most its
  // maxAwaitTimeMS) and closes the directory. A later call connects again,
  // as the driver's.
  async close() {
    if (this._connecting) await this._connecting.catch(() => {});
    if (!this._native) return;
    for (const session of [...this._sessions]) await session.endSession().catch(() => {});
    for (const stream of [...this._streams]) await stream.close();
    for (const cursor of [...this._cursors]) await cursor.close();
    await Promise.allSettled([...this._inflight]);
    const handle = this._native;
    this._native = null;
    await handle.close();
    this.emit('close');
  }

  [Symbol.asyncDispose]() { return this.close(); }
}

class Db {
  constructor(client, name) {
    this.client = client;
    this.databaseName = name;
  }

  get namespace() { return this.databaseName; }

  collection(name, options) {
    checkOptions('collection', options, DB_OPTIONS);
    return new Collection(this, name);
  }

  async command(command, options) {
    options = checkOptions('command', options, new Set(['session']));
    const { reply } = await this.client._command(this.databaseName, { ...command },
                                                 { session: options.session });
    return reply;
  }

  _aggregateCursor(collection, pipeline, options) {
    const command = { aggregate: collection, pipeline,
                      cursor: cursorField(options.batchSize) };
    for (const name of ['allowDiskUse', 'bypassDocumentValidation', 'collation', 'comment', 'hint',
                        'let', 'maxTimeMS', 'writeConcern']) {
      if (options[name] !== undefined) command[name] = options[name];
    }
    return new AggregationCursor(this.client, this.databaseName, command, options);
  }

  aggregate(pipeline = [], options) {
    return this._aggregateCursor(1, pipeline, checkOptions('aggregate', options,
        new Set(['session', 'allowDiskUse', 'batchSize', 'comment', 'let', 'maxTimeMS'])));
  }

  watch(pipeline = [], options) {
    return new ChangeStream({ client: this.client, db: this.databaseName, collection: null },
                            pipeline, options);
  }

  async createCollection(name, options) {
    options = checkOptions('createCollection', options, new Set(['session', 'capped', 'size',
      'max', 'validator', 'validationLevel', 'validationAction', 'collation', 'viewOn',
      'pipeline', 'timeseries', 'expireAfterSeconds', 'clusteredIndex', 'changeStreamPreAndPostImages',
      'indexOptionDefaults', 'storageEngine', 'comment', 'writeConcern']));
    const command = { create: name, ...options };
    delete command.session;
    await this.client._command(this.databaseName, command, { session: options.session });
    return this.collection(name);
  }

  async dropCollection(name, options) {
    return this.collection(name).drop(options);
  }

  listCollections(filter = {}, options) {
    options = checkOptions('listCollections', options, new Set(['session', 'nameOnly',
      'authorizedCollections', 'batchSize', 'comment']));
    const command = { listCollections: 1, filter,
                      cursor: cursorField(options.batchSize) };
    for (const name of ['nameOnly', 'authorizedCollections', 'comment']) {
      if (options[name] !== undefined) command[name] = options[name];
    }
    return new ListCollectionsCursor(this.client, this.databaseName, command, options);
  }

  async collections(options) {
    const infos = await this.listCollections({}, { ...options, nameOnly: true }).toArray();
    return infos.filter((i) => !i.name.startsWith('system.')).map((i) => this.collection(i.name));
  }

  async dropDatabase(options) {
    options = checkOptions('dropDatabase', options, new Set(['session', 'writeConcern', 'comment']));
    const command = { dropDatabase: 1 };
    if (options.writeConcern) command.writeConcern = options.writeConcern;
    await this.client._command(this.databaseName, command, { session: options.session });
    return true;
  }

  admin() { return new Admin(this.client); }
}

class Admin {
  constructor(client) { this.client = client; }
  async command(command, options) { return this.client.db('admin').command(command, options); }
  async listDatabases(options) { return this.command({ listDatabases: 1, ...options }); }
  async ping() { return this.command({ ping: 1 }); }
  async serverStatus() { return this.command({ serverStatus: 1 }); }
}

module.exports = {
  MongoClient, Db, Collection, Admin, FindCursor, AggregationCursor, AbstractCursor,
  ListCollectionsCursor, ChangeStream, ClientSession,
  // The driver's BSON types and errors, as the mongodb package exports them.
  BSON: bson, ObjectId: bson.ObjectId, Long: bson.Long, Decimal128: bson.Decimal128,
  Binary: bson.Binary, Timestamp: bson.Timestamp, UUID: bson.UUID, Double: bson.Double,
  Int32: bson.Int32, MinKey: bson.MinKey, MaxKey: bson.MaxKey, BSONRegExp: bson.BSONRegExp,
  Code: bson.Code, DBRef: bson.DBRef,
  MongoError: mongodb.MongoError, MongoServerError, MongoBulkWriteError: mongodb.MongoBulkWriteError,
  MongoInvalidArgumentError, MongoParseError, MongoAPIError: mongodb.MongoAPIError,
  MongoTransactionError: mongodb.MongoTransactionError,
  version: native.version,
};

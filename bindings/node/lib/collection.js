'use strict';
// The driver's Collection over rockdoc's commands: each method builds the
// command the Node.js driver sends (mongodb/lib/operations/*.js) and maps
// the reply onto the driver's result shapes and errors.
const { ObjectId } = require('bson');
const mongodb = require('mongodb');
const { FindCursor, AggregationCursor, ListIndexesCursor, formatSort,
        cursorField } = require('./cursor');
const { ChangeStream } = require('./change_stream');
const { checkOptions, checkSingleWrite, checkCommand, BulkWriteResult, WriteError,
        MongoBulkWriteError } = require('./errors');
const { encode } = require('./bson_reply');

const { MongoInvalidArgumentError } = mongodb;

// A write's batch is cut where the driver cuts one message: at
// maxWriteBatchSize and maxMessageSizeBytes (the command runs through
// rockdoc_run_batch_command, which takes as much; 16 KiB for the command's
// own fields). Each document past 16 MiB is the engine's to refuse.
const MAX_BATCH_COUNT = 100000;
const MAX_BATCH_BYTES = 48000000 - 16 * 1024;

const WRITE = ['session', 'writeConcern', 'bypassDocumentValidation', 'comment', 'let'];
const known = (...names) => new Set(names);
const INSERT_OPTIONS = known('session', 'writeConcern', 'bypassDocumentValidation', 'comment',
                             'ordered', 'forceServerObjectId');
const UPDATE_OPTIONS = known(...WRITE, 'upsert', 'arrayFilters', 'collation', 'hint', 'sort');
const DELETE_OPTIONS = known(...WRITE, 'collation', 'hint');
const BULK_OPTIONS = known(...WRITE, 'ordered', 'forceServerObjectId');
const FAM_OPTIONS = known(...WRITE, 'projection', 'sort', 'upsert', 'returnDocument',
                          'arrayFilters', 'collation', 'hint', 'maxTimeMS',
                          'includeResultMetadata');
const COUNT_OPTIONS = known('session', 'skip', 'limit', 'hint', 'collation', 'maxTimeMS',
                            'comment');
const ESTIMATED_OPTIONS = known('session', 'maxTimeMS', 'comment');
const DISTINCT_OPTIONS = known('session', 'collation', 'maxTimeMS', 'comment', 'hint');
const AGGREGATE_OPTIONS = known('session', 'allowDiskUse', 'batchSize', 'bypassDocumentValidation',
                                'collation', 'comment', 'hint', 'let', 'maxTimeMS',
                                'writeConcern');
const INDEX_OPTIONS = known('session', 'name', 'unique', 'sparse', 'partialFilterExpression',
                            'expireAfterSeconds', 'collation', 'hidden', 'weights',
                            'default_language', 'language_override', 'textIndexVersion',
                            '2dsphereIndexVersion', 'min', 'max', 'bits', 'wildcardProjection',
                            'background', 'commitQuorum', 'comment', 'maxTimeMS', 'writeConcern');
const INDEX_COMMAND_OPTIONS = known('session', 'commitQuorum', 'comment', 'maxTimeMS',
                                    'writeConcern');
const SESSION_ONLY = known('session', 'comment', 'maxTimeMS', 'writeConcern');

function copyFields(target, source, names) {
  for (const name of names) if (source[name] !== undefined) target[name] = source[name];
  return target;
}

function hasAtomicOperators(update) {
  if (Array.isArray(update)) return update.length > 0 && update.every((s) => s && typeof s === 'object' && Object.keys(s)[0]?.startsWith('$'));
  const keys = Object.keys(update || {});
  return keys.length > 0 && keys[0].startsWith('$');
}

function checkUpdate(update) {
  if (update == null || typeof update !== 'object') {
    throw new MongoInvalidArgumentError('Update document requires atomic operators');
  }
  if (!Array.isArray(update) && !hasAtomicOperators(update)) {
    throw new MongoInvalidArgumentError('Update document requires atomic operators');
  }
}

function checkReplacement(replacement) {
  if (replacement == null || typeof replacement !== 'object' || Array.isArray(replacement)) {
    throw new MongoInvalidArgumentError('Replacement document must be an object');
  }
  if (hasAtomicOperators(replacement)) {
    throw new MongoInvalidArgumentError('Replacement document must not contain atomic operators');
  }
}

function checkFilter(filter) {
  if (filter == null || typeof filter !== 'object' || Array.isArray(filter)) {
    throw new MongoInvalidArgumentError('Filter must be a document');
  }
}

// As the driver: an _id (an ObjectId) for a document that has none or a
// null one, unless forceServerObjectId leaves it to the engine.
function withId(document, forceServerObjectId) {
  if (document == null || typeof document !== 'object' || Array.isArray(document)) {
    throw new MongoInvalidArgumentError('Document must be an object');
  }
  if (document._id == null && !forceServerObjectId) document._id = new ObjectId();
  return document;
}

function updateStatement(filter, update, multi, options) {
  const statement = { q: filter, u: update, upsert: !!options.upsert, multi };
  copyFields(statement, options, ['arrayFilters', 'collation', 'hint', 'sort']);
  return statement;
}

function deleteStatement(filter, limit, options) {
  return copyFields({ q: filter, limit }, options, ['collation', 'hint']);
}

// The driver's index name: "a_1_b_-1".
function indexName(key) {
  return Object.entries(key).map(([k, v]) => `${k}_${v}`).join('_');
}

// The driver's index spec forms ('a', {a: 1}, [['a', 1]], ['a', 'b'],
// a Map) as a key document.
function indexKey(spec) {
  if (typeof spec === 'string') return { [spec]: 1 };
  if (spec instanceof Map) return Object.fromEntries(spec);
  if (Array.isArray(spec)) {
    const key = {};
    for (const item of spec) {
      if (typeof item === 'string') key[item] = 1;
      else if (Array.isArray(item)) key[item[0]] = item[1];
      else Object.assign(key, item);
    }
    return key;
  }
  return spec;
}

// A bulk write run as the driver runs it: consecutive operations of one
// kind in one command (ordered), or every operation of a kind together
// (unordered), each cut at the batch limits; the results merged into the
// driver's BulkWriteResult, write errors as MongoBulkWriteError.
class Bulk {
  constructor(collection, ordered, options) {
    this.collection = collection;
    this.ordered = ordered;
    this.options = options;
    this.operations = [];  // { kind: 'insert'|'update'|'delete', statement, index }
  }

  add(kind, statement) {
    this.operations.push({ kind, statement, index: this.operations.length });
  }

  _batches() {
    const runs = [];
    if (this.ordered) {
      for (const op of this.operations) {
        const last = runs[runs.length - 1];
        if (last && last.kind === op.kind) last.ops.push(op);
        else runs.push({ kind: op.kind, ops: [op] });
      }
    } else {
      for (const kind of ['insert', 'update', 'delete']) {
        const ops = this.operations.filter((op) => op.kind === kind);
        if (ops.length) runs.push({ kind, ops });
      }
    }
    const batches = [];
    for (const run of runs) {
      let batch = null;
      let bytes = 0;
      for (const op of run.ops) {
        const size = encode(op.statement).length;
        if (!batch || batch.ops.length >= MAX_BATCH_COUNT || (bytes + size > MAX_BATCH_BYTES && batch.ops.length)) {
          batch = { kind: run.kind, ops: [] };
          batches.push(batch);
          bytes = 0;
        }
        batch.ops.push(op);
        bytes += size;
      }
    }
    return batches;
  }

  async execute() {
    const result = { ok: 1, writeErrors: [], writeConcernErrors: [], insertedIds: [],
                     nInserted: 0, nUpserted: 0, nMatched: 0, nModified: 0, nRemoved: 0,
                     upserted: [] };
    for (const op of this.operations) {
      if (op.kind === 'insert') result.insertedIds.push({ index: op.index, _id: op.statement._id });
    }
    const c = this.collection;
    const field = { insert: 'documents', update: 'updates', delete: 'deletes' };
    for (const batch of this._batches()) {
      const command = { [batch.kind]: c.collectionName,
                        [field[batch.kind]]: batch.ops.map((op) => op.statement),
                        ordered: this.ordered };
      copyFields(command, this.options, ['writeConcern', 'bypassDocumentValidation', 'comment',
                                         'let']);
      let reply;
      try {
        ({ reply } = await c._client._command(c.dbName, command,
                                              { session: this.options.session, batch: true }));
      } catch (e) {
        throw new MongoBulkWriteError(e, new BulkWriteResult(result, this.ordered));
      }
      this._merge(result, batch, reply);
      if (this.ordered && result.writeErrors.length) break;
    }
    const writeResult = new BulkWriteResult(result, this.ordered);
    if (result.writeErrors.length) {
      result.writeErrors.sort((a, b) => a.index - b.index);
      const first = result.writeErrors[0];
      throw new MongoBulkWriteError({ message: first.errmsg || 'write operation failed',
                                      code: first.code, writeErrors: result.writeErrors },
                                    writeResult);
    }
    if (result.writeConcernErrors.length) {
      const wce = result.writeConcernErrors[0];
      throw new MongoBulkWriteError({ message: wce.errmsg, code: wce.code }, writeResult);
    }
    return writeResult;
  }

  _merge(result, batch, reply) {
    const n = reply.n || 0;
    if (batch.kind === 'insert') {
      result.nInserted += n;
    } else if (batch.kind === 'delete') {
      result.nRemoved += n;
    } else {
      const upserted = reply.upserted || [];
      result.nUpserted += upserted.length;
      result.nMatched += n - upserted.length;
      result.nModified += reply.nModified || 0;
      for (const u of upserted) result.upserted.push({ index: batch.ops[u.index].index, _id: u._id });
    }
    for (const error of reply.writeErrors || []) {
      const op = batch.ops[error.index];
      result.writeErrors.push(new WriteError({ ...error, index: op.index, op: op.statement }));
    }
    if (reply.writeConcernError) result.writeConcernErrors.push(reply.writeConcernError);
  }
}

class Collection {
  constructor(db, name) {
    this._db = db;
    this._client = db.client;
    this.collectionName = name;
    this.dbName = db.databaseName;
    this.namespace = `${db.databaseName}.${name}`;
  }

  get db() { return this._db; }

  _forceServerObjectId(options) {
    return options.forceServerObjectId !== undefined ? options.forceServerObjectId
                                                     : !!this._client.options.forceServerObjectId;
  }

  async _write(command, options) {
    copyFields(command, options, ['writeConcern', 'bypassDocumentValidation', 'comment', 'let']);
    const { reply } = await this._client._command(this.dbName, command,
                                                  { session: options.session, check: false,
                                                    batch: true });
    return checkSingleWrite(reply);
  }

  async _run(command, options = {}) {
    const { reply } = await this._client._command(this.dbName, command,
                                                  { session: options.session });
    return reply;
  }

  async insertOne(document, options) {
    options = checkOptions('insertOne', options, INSERT_OPTIONS);
    withId(document, this._forceServerObjectId(options));
    await this._write({ insert: this.collectionName, documents: [document], ordered: true },
                      options);
    return { acknowledged: true, insertedId: document._id };
  }

  async insertMany(documents, options) {
    options = checkOptions('insertMany', options, INSERT_OPTIONS);
    if (!Array.isArray(documents)) {
      throw new MongoInvalidArgumentError('Argument "docs" must be an array of documents');
    }
    const result = await this.bulkWrite(documents.map((document) => ({ insertOne: { document } })),
                                        { ...options, ordered: options.ordered !== false });
    return { acknowledged: true, insertedCount: result.insertedCount,
             insertedIds: result.insertedIds };
  }

  async _update(filter, update, multi, options, name) {
    checkFilter(filter);
    const reply = await this._write({ update: this.collectionName,
                                      updates: [updateStatement(filter, update, multi, options)],
                                      ordered: true }, options);
    const upserted = reply.upserted && reply.upserted.length ? reply.upserted[0]._id : null;
    return { acknowledged: true, modifiedCount: reply.nModified || 0,
             upsertedId: upserted, upsertedCount: upserted === null ? 0 : 1,
             matchedCount: (reply.n || 0) - (upserted === null ? 0 : 1) };
  }

  async updateOne(filter, update, options) {
    options = checkOptions('updateOne', options, UPDATE_OPTIONS);
    checkUpdate(update);
    return this._update(filter, update, false, options);
  }

  async updateMany(filter, update, options) {
    options = checkOptions('updateMany', options, UPDATE_OPTIONS);
    checkUpdate(update);
    return this._update(filter, update, true, options);
  }

  async replaceOne(filter, replacement, options) {
    options = checkOptions('replaceOne', options, UPDATE_OPTIONS);
    checkReplacement(replacement);
    return this._update(filter, replacement, false, options);
  }

  async _delete(filter, limit, options) {
    checkFilter(filter);
    const reply = await this._write({ delete: this.collectionName,
                                      deletes: [deleteStatement(filter, limit, options)],
                                      ordered: true }, options);
    return { acknowledged: true, deletedCount: reply.n || 0 };
  }

  async deleteOne(filter = {}, options) {
    return this._delete(filter, 1, checkOptions('deleteOne', options, DELETE_OPTIONS));
  }

  async deleteMany(filter = {}, options) {
    return this._delete(filter, 0, checkOptions('deleteMany', options, DELETE_OPTIONS));
  }

  async bulkWrite(operations, options) {
    options = checkOptions('bulkWrite', options, BULK_OPTIONS);
    if (!Array.isArray(operations)) {
      throw new MongoInvalidArgumentError('Argument "operations" must be an array of documents');
    }
    const serverIds = this._forceServerObjectId(options);
    if (operations.length === 0) {
      throw new MongoInvalidArgumentError('Invalid BulkOperation, Batch cannot be empty');
    }
    const bulk = new Bulk(this, options.ordered !== false, options);
    for (const operation of operations) {
      const [type, ...extra] = Object.keys(operation || {});
      const args = operation && operation[type];
      if (extra.length || !args) {
        throw new MongoInvalidArgumentError(`Invalid bulk write operation ${JSON.stringify(Object.keys(operation || {}))}`);
      }
      switch (type) {
        case 'insertOne':
          bulk.add('insert', withId(args.document, serverIds));
          break;
        case 'updateOne': case 'updateMany':
          checkUpdate(args.update);
          bulk.add('update', updateStatement(args.filter, args.update, type === 'updateMany', args));
          break;
        case 'replaceOne':
          checkReplacement(args.replacement);
          bulk.add('update', updateStatement(args.filter, args.replacement, false, args));
          break;
        case 'deleteOne': case 'deleteMany':
          bulk.add('delete', deleteStatement(args.filter, type === 'deleteOne' ? 1 : 0, args));
          break;
        default:
          throw new MongoInvalidArgumentError(`Invalid bulk write operation ${type}`);
      }
    }
    return bulk.execute();
  }

  find(filter = {}, options) {
    return new FindCursor(this, filter, options);
  }

  async findOne(filter = {}, options) {
    const cursor = this.find(filter, { ...options, limit: -1, batchSize: 1 });
    try {
      return await cursor.next();
    } finally {
      await cursor.close();
    }
  }

  async _findAndModify(filter, fields, options) {
    checkFilter(filter);
    const command = { findAndModify: this.collectionName, query: filter, ...fields };
    if (options.projection !== undefined) command.fields = options.projection;
    if (options.sort !== undefined) command.sort = formatSort(options.sort);
    copyFields(command, options, ['arrayFilters', 'collation', 'hint', 'maxTimeMS',
                                  'writeConcern', 'bypassDocumentValidation', 'comment', 'let']);
    const reply = await this._run(command, options);
    return options.includeResultMetadata ? reply : (reply.value === undefined ? null : reply.value);
  }

  async findOneAndDelete(filter, options) {
    options = checkOptions('findOneAndDelete', options, FAM_OPTIONS);
    return this._findAndModify(filter, { remove: true }, options);
  }

  async findOneAndReplace(filter, replacement, options) {
    options = checkOptions('findOneAndReplace', options, FAM_OPTIONS);
    checkReplacement(replacement);
    return this._findAndModify(filter, { update: replacement,
                                         new: options.returnDocument === 'after',
                                         upsert: !!options.upsert }, options);
  }

  async findOneAndUpdate(filter, update, options) {
    options = checkOptions('findOneAndUpdate', options, FAM_OPTIONS);
    checkUpdate(update);
    return this._findAndModify(filter, { update, new: options.returnDocument === 'after',
                                         upsert: !!options.upsert }, options);
  }

  // As the driver: an aggregate of $match, $skip, $limit and a $group.
  async countDocuments(filter = {}, options) {
    options = checkOptions('countDocuments', options, COUNT_OPTIONS);
    const pipeline = [{ $match: filter }];
    if (typeof options.skip === 'number') pipeline.push({ $skip: options.skip });
    if (typeof options.limit === 'number') pipeline.push({ $limit: options.limit });
    pipeline.push({ $group: { _id: 1, n: { $sum: 1 } } });
    const aggregateOptions = { ...options };
    delete aggregateOptions.skip;
    delete aggregateOptions.limit;
    const [result] = await this.aggregate(pipeline, aggregateOptions).toArray();
    return result ? result.n : 0;
  }

  async estimatedDocumentCount(options) {
    options = checkOptions('estimatedDocumentCount', options, ESTIMATED_OPTIONS);
    const reply = await this._run(copyFields({ count: this.collectionName }, options,
                                             ['maxTimeMS', 'comment']), options);
    return reply.n || 0;
  }

  async distinct(key, filter = {}, options) {
    options = checkOptions('distinct', options, DISTINCT_OPTIONS);
    const command = copyFields({ distinct: this.collectionName, key, query: filter }, options,
                               ['collation', 'maxTimeMS', 'comment', 'hint']);
    return (await this._run(command, options)).values;
  }

  aggregate(pipeline = [], options) {
    options = checkOptions('aggregate', options, AGGREGATE_OPTIONS);
    return this._db._aggregateCursor(this.collectionName, pipeline, options);
  }

  watch(pipeline = [], options) {
    return new ChangeStream({ client: this._client, db: this.dbName,
                              collection: this.collectionName }, pipeline, options);
  }

  async createIndex(spec, options) {
    options = checkOptions('createIndex', options, INDEX_OPTIONS);
    const index = { key: indexKey(spec) };
    for (const [k, v] of Object.entries(options)) {
      if (!INDEX_COMMAND_OPTIONS.has(k) && v !== undefined) index[k] = v;
    }
    const [name] = await this.createIndexes([index], options);
    return name;
  }

  async createIndexes(indexes, options) {
    options = checkOptions('createIndexes', options, INDEX_OPTIONS);
    const specs = indexes.map((index) => {
      const key = index.key instanceof Map ? Object.fromEntries(index.key) : index.key;
      return { ...index, key, name: index.name === undefined ? indexName(key) : index.name };
    });
    const command = copyFields({ createIndexes: this.collectionName, indexes: specs }, options,
                               ['commitQuorum', 'comment', 'maxTimeMS', 'writeConcern']);
    await this._run(command, options);
    return specs.map((s) => s.name);
  }

  listIndexes(options) {
    options = checkOptions('listIndexes', options, known('session', 'batchSize', 'comment'));
    const command = { listIndexes: this.collectionName,
                      cursor: cursorField(options.batchSize) };
    copyFields(command, options, ['comment']);
    return new ListIndexesCursor(this._client, this.dbName, command, options);
  }

  async indexes(options) {
    return this.listIndexes(options).toArray();
  }

  async indexExists(names, options) {
    const have = new Set((await this.indexes(options)).map((i) => i.name));
    return (Array.isArray(names) ? names : [names]).every((n) => have.has(n));
  }

  async dropIndex(name, options) {
    options = checkOptions('dropIndex', options, SESSION_ONLY);
    return this._run(copyFields({ dropIndexes: this.collectionName, index: name }, options,
                                ['comment', 'maxTimeMS', 'writeConcern']), options);
  }

  async dropIndexes(options) {
    await this.dropIndex('*', options);
    return true;
  }

  async drop(options) {
    options = checkOptions('drop', options, SESSION_ONLY);
    try {
      await this._run(copyFields({ drop: this.collectionName }, options, ['comment',
                      'writeConcern']), options);
    } catch (e) {
      if (e.code === 26) return false;  // as the driver: NamespaceNotFound is false
      throw e;
    }
    return true;
  }

  async rename(newName, options) {
    options = checkOptions('rename', options, known('session', 'dropTarget', 'comment'));
    const command = { renameCollection: this.namespace, to: `${this.dbName}.${newName}` };
    copyFields(command, options, ['dropTarget', 'comment']);
    await this._client._command('admin', command, { session: options.session });
    return new Collection(this._db, newName);
  }
}

module.exports = { Collection, checkCommand };

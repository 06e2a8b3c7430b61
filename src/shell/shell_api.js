// shell_api.js: db, collections, cursors, result shapes, helpers and the
// REPL's display, over the `__native` functions of natives.cc.
//
// Result shapes are mongosh's ({acknowledged: true, insertedId}, ...) for the
// CRUD API, and the legacy mongo shell's (WriteResult({nInserted: 1}), ...)
// for insert/update/save/remove/findAndModify/ensureIndex. Errors from the
// engine arrive as MongoServerError {code, codeName, message}; argument
// errors the shell finds itself are MongoInvalidArgumentError with code 2
// (BadValue), so scripts can test `e.code` either way.
(function (global) {
  'use strict';
  const native = global.__native;
  const inspectSymbol = Symbol.for('rockdoc.inspect');
  const inspect = global.__inspect;
  const config = native.config();
  const kVersion = '0.1.0';

  // ---- errors ----
  class MongoServerError extends Error {
    constructor(code, codeName, message, errorLabels) {
      super(message);
      this.name = 'MongoServerError';
      this.code = code;
      this.codeName = codeName;
      this.errmsg = message;
      // The driver's: which retries make sense (TransientTransactionError...).
      if (errorLabels && errorLabels.length > 0) this.errorLabels = errorLabels;
    }
    hasErrorLabel(label) { return (this.errorLabels || []).includes(label); }
  }
  class MongoBulkWriteError extends MongoServerError {
    constructor(writeErrors, result) {
      const first = writeErrors[0];
      super(first.code, first.codeName, first.errmsg);
      this.name = 'MongoBulkWriteError';
      this.writeErrors = writeErrors;
      this.result = result;
      this.insertedIds = result.insertedIds;
      this.insertedCount = result.insertedCount;
    }
  }
  class MongoInvalidArgumentError extends Error {
    constructor(message) {
      super(message);
      this.name = 'MongoInvalidArgumentError';
      this.code = 2;
      this.codeName = 'BadValue';
    }
  }
  global.MongoServerError = MongoServerError;
  global.MongoBulkWriteError = MongoBulkWriteError;
  global.MongoInvalidArgumentError = MongoInvalidArgumentError;
  Object.defineProperty(global, '__makeServerError', {
    value: (code, codeName, message, labels) => new MongoServerError(code, codeName, message, labels),
  });

  const { MongoshInvalidInputError, MongoshUnimplementedError } = global;
  function argError(message) {
    return new MongoInvalidArgumentError(message);
  }
  function isPlainObject(v) {
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  }
  function checkDocument(v, what) {
    if (!isPlainObject(v)) throw argError(`${what} must be an object`);
  }
  // A number as mongosh's numeric arguments take it: a JS number or one of
  // the numeric wrappers.
  function isNumeric(v) {
    return typeof v === 'number' || v instanceof global.Long || v instanceof global.Int32 ||
      v instanceof global.Double;
  }
  function hasOperators(doc) {
    const keys = Object.keys(doc);
    return keys.length > 0 && keys[0].startsWith('$');
  }
  function checkUpdate(update) {
    if (Array.isArray(update)) throw new MongoshUnimplementedError('an update pipeline');
    checkDocument(update, 'update');
    if (!hasOperators(update)) throw argError('Update document requires atomic operators');
  }
  function checkReplacement(doc) {
    checkDocument(doc, 'replacement');
    if (Object.keys(doc).some((k) => k.startsWith('$'))) {
      throw argError('Replacement document must not contain atomic operators');
    }
  }
  function hidden(obj, name, value) {
    Object.defineProperty(obj, name, { value, enumerable: false, writable: true, configurable: true });
  }
  function verbosityOf(v) {
    if (v === undefined || v === false) return 'queryPlanner';
    if (v === true) return 'allPlansExecution';
    return String(v);
  }

  // ---- results that print themselves ----
  // Legacy WriteResult / BulkWriteResult: shown as `WriteResult({ ... })`.
  class WriteResult {
    constructor(fields) { Object.assign(this, fields); }
    hasWriteError() { return this.writeError !== undefined; }
    getWriteError() { return this.writeError; }
    hasWriteConcernError() { return false; }
    [inspectSymbol](format) { return `WriteResult(${format(Object.assign({}, this))})`; }
  }
  class BulkWriteResult {
    constructor(fields) { Object.assign(this, fields); }
    hasWriteErrors() { return this.writeErrors.length > 0; }
    getWriteErrors() { return this.writeErrors; }
    getWriteErrorCount() { return this.writeErrors.length; }
    [inspectSymbol](format) { return `BulkWriteResult(${format(Object.assign({}, this))})`; }
  }
  global.WriteResult = WriteResult;
  global.BulkWriteResult = BulkWriteResult;

  // Text shown bare (help output and `show` listings).
  class ShellText {
    constructor(text) { this.text = text; }
    toString() { return this.text; }
    [inspectSymbol]() { return this.text; }
  }

  // ---- cursors ----
  class Cursor {
    constructor(collection, filter, options) {
      hidden(this, '_coll', collection);
      hidden(this, '_filter', filter === undefined ? {} : filter);
      hidden(this, '_opts', Object.assign({}, options));
      hidden(this, '_batchSize', 100);
      hidden(this, '_native', null);
      hidden(this, '_buffer', []);
      hidden(this, '_exhausted', false);
      hidden(this, '_transforms', []);
      hidden(this, '_explain', undefined);
      hidden(this, '_explained', false);
      hidden(this, '_closed', false);
    }
    _checkModifiable(what) {
      if (this._native !== null || this._exhausted) {
        throw argError(`cannot call ${what}() on a cursor that has already returned results`);
      }
      return this;
    }
    _setOption(name, value) {
      this._checkModifiable(name);
      this._opts[name] = value;
      return this;
    }
    sort(spec) { checkDocument(spec, 'sort'); return this._setOption('sort', spec); }
    // skip and limit go to the engine as given (a number or NumberLong,
    // NumberInt, Double); it takes any exact 64-bit integer, as MongoDB does.
    skip(n) {
      if (!isNumeric(n) || n < 0) throw argError('skip must be a non-negative number');
      return this._setOption('skip', n);
    }
    limit(n) {
      if (!isNumeric(n)) throw argError('limit must be a number');
      return this._setOption('limit', n);
    }
    project(spec) { checkDocument(spec, 'projection'); return this._setOption('projection', spec); }
    projection(spec) { return this.project(spec); }
    hint(h) {
      if (typeof h !== 'string') checkDocument(h, 'hint');
      return this._setOption('hint', h);
    }
    batchSize(n) {
      const size = isNumeric(n) ? Number(n) : NaN;
      if (!Number.isSafeInteger(size) || size < 0) throw argError('batchSize must be a non-negative integer');
      this._batchSize = size === 0 ? 100 : size;
      return this;
    }
    maxTimeMS(ms) {
      if (typeof ms !== 'number') throw argError('maxTimeMS must be a number');
      return this._setOption('maxTimeMS', ms);
    }
    // Options the engine's find table decides on (natives.cc kFindOptions):
    // accepted there only where they have no effect on one embedded node.
    comment(c) { return this._setOption('comment', c); }
    readPref(mode) { return this._setOption('readPreference', mode); }
    readConcern(level) { return this._setOption('readConcern', { level }); }
    noCursorTimeout() { return this._setOption('noCursorTimeout', true); }
    allowDiskUse(allow) { return this._setOption('allowDiskUse', allow === undefined ? true : allow); }
    allowPartialResults() { return this._setOption('allowPartialResults', true); }
    pretty() { return this; }
    collation() { throw new MongoshUnimplementedError('Cursor.collation'); }

    _fill() {
      if (this._buffer.length > 0 || this._exhausted) return;
      if (this._native === null) {
        this._native = native.find(this._coll._dbName, this._coll._name, this._filter, this._opts);
      }
      const batch = native.cursorNext(this._native, this._batchSize);
      if (batch.length === 0) {
        this._exhausted = true;
        native.cursorClose(this._native);
      } else {
        this._buffer = batch;
      }
    }
    _apply(doc) {
      for (const fn of this._transforms) doc = fn(doc);
      return doc;
    }
    hasNext() {
      // An explain cursor (db.c.explain().find()) yields its explain once.
      if (this._explain !== undefined) return !this._explained && !this._closed;
      if (this._closed) return false;
      this._fill();
      return this._buffer.length > 0;
    }
    next() {
      if (!this.hasNext()) return null;
      if (this._explain !== undefined) {
        this._explained = true;
        return this.explain(this._explain);
      }
      return this._apply(this._buffer.shift());
    }
    tryNext() { return this.next(); }
    toArray() {
      const out = [];
      while (this.hasNext()) out.push(this.next());
      return out;
    }
    forEach(fn) {
      while (this.hasNext()) {
        if (fn(this.next()) === false) break;
      }
    }
    map(fn) {
      if (typeof fn !== 'function') throw argError('map needs a function');
      this._transforms.push(fn);
      return this;
    }
    itcount() {
      let n = 0;
      while (this.hasNext()) {
        this.next();
        n++;
      }
      return n;
    }
    // count() ignores skip and limit unless asked (the legacy shell's rule).
    count(applySkipLimit) {
      const options = { hint: this._opts.hint };
      if (applySkipLimit) {
        options.skip = this._opts.skip;
        options.limit = this._opts.limit;
      }
      return native.count(this._coll._dbName, this._coll._name, this._filter, options);
    }
    size() { return this.count(true); }
    explain(verbosity) {
      return native.explainFind(this._coll._dbName, this._coll._name, this._filter, this._opts,
        verbosityOf(verbosity));
    }
    // An explain cursor's result (mongosh's ExplainableCursor.finish()).
    finish() {
      if (this._explain === undefined) throw argError('finish() is for explain cursors: db.c.explain().find()');
      return this.explain(this._explain);
    }
    close() {
      if (this._native !== null) native.cursorClose(this._native);
      this._closed = true;
      this._buffer = [];
    }
    isClosed() { return this._closed || this._exhausted; }
    isExhausted() { return this._exhausted && this._buffer.length === 0; }
    objsLeftInBatch() { return this._buffer.length; }
    *[Symbol.iterator]() {
      while (this.hasNext()) yield this.next();
    }
    help() { return new ShellText(CURSOR_HELP); }
    toString() { return `Cursor(${this._coll._fullName})`; }
    [inspectSymbol]() { return `Cursor(${this._coll._fullName})`; }
  }
  global.DBQuery = Cursor;  // the legacy shell's name

  // ---- collections ----
  // Like the drivers (and the legacy shell), an insert gives the inserted
  // object the _id the engine assigned, so `doc._id` works afterwards.
  // remove(filter, justOne) or remove(filter, {justOne, ...options}) ->
  // [justOne, the options for the engine].
  function removeArgs(justOne) {
    if (!isPlainObject(justOne)) return [!!justOne, undefined];
    const options = Object.assign({}, justOne);
    delete options.justOne;
    return [!!justOne.justOne, options];
  }
  function giveId(doc, id) {
    if (doc._id === undefined && Object.isExtensible(doc)) doc._id = id;
  }

  // The driver refuses an empty bulk write (mongosh's insertMany([])).
  function checkBatch(docs) {
    if (docs.length === 0) throw argError('Invalid BulkOperation, Batch cannot be empty');
  }

  function checkName(name, what) {
    if (typeof name !== 'string' || name.length === 0) throw argError(`${what} name must be a non-empty string`);
  }

  class Collection {
    constructor(db, name) {
      hidden(this, '_db', db);
      hidden(this, '_dbName', db._target());
      hidden(this, '_name', name);
      hidden(this, '_fullName', `${db.getName()}.${name}`);
    }
    getName() { return this._name; }
    getFullName() { return this._fullName; }
    getDB() { return this._db; }
    toString() { return this._fullName; }
    toJSON() { return this._fullName; }
    [inspectSymbol]() { return this._fullName; }
    getCollection(sub) { checkName(sub, 'collection'); return makeCollection(this._db, `${this._name}.${sub}`); }

    // -- CRUD, mongosh's API --
    insertOne(doc, options) {
      checkDocument(doc, 'document');
      const id = native.insertOne(this._dbName, this._name, doc, options);
      giveId(doc, id);
      return { acknowledged: true, insertedId: id };
    }
    insertMany(docs, options) {
      if (!Array.isArray(docs)) throw argError('insertMany needs an array of documents');
      checkBatch(docs);
      docs.forEach((d) => checkDocument(d, 'document'));
      const r = native.insertMany(this._dbName, this._name, docs, options);
      for (const [index, id] of Object.entries(r.insertedIds)) giveId(docs[index], id);
      if (r.writeErrors.length > 0) {
        throw new MongoBulkWriteError(r.writeErrors, { insertedCount: r.insertedCount, insertedIds: r.insertedIds });
      }
      return { acknowledged: true, insertedIds: r.insertedIds };
    }
    // mongosh's bulkWrite: the six models, run as insert, update and delete
    // commands (consecutive operations of one kind in one command, as the
    // drivers batch them). Ordered (the default) stops at the first error;
    // unordered runs every operation and reports every error. The options
    // and the models' fields are decoded by the commands, which refuse what
    // they do not know.
    bulkWrite(operations, options) {
      if (!Array.isArray(operations)) throw argError('bulkWrite needs an array of operations');
      checkBatch(operations);
      const opts = Object.assign({}, options === undefined || options === null ? {} : options);
      checkDocument(opts, 'options');
      const ordered = opts.ordered === undefined ? true : Boolean(opts.ordered);
      delete opts.ordered;
      const result = {
        acknowledged: true, insertedCount: 0, insertedIds: {}, matchedCount: 0,
        modifiedCount: 0, deletedCount: 0, upsertedCount: 0, upsertedIds: {},
      };
      const writeErrors = [];
      // One command per run of operations of the same command kind.
      const batches = [];
      operations.forEach((op, index) => {
        checkDocument(op, 'operation');
        const names = Object.keys(op);
        if (names.length !== 1) throw argError('a bulkWrite operation has one field, its model name');
        const model = names[0];
        const args = op[model];
        checkDocument(args, model);
        let kind, statement;
        const rest = Object.assign({}, args);
        const take = (name) => { const v = rest[name]; delete rest[name]; return v; };
        if (model === 'insertOne') {
          kind = 'insert';
          const doc = take('document');
          checkDocument(doc, 'document');
          if (doc._id === undefined) giveId(doc, new global.ObjectId());
          if (Object.keys(rest).length > 0) throw argError(`insertOne takes only a document, not '${Object.keys(rest)[0]}'`);
          statement = doc;
        } else if (model === 'updateOne' || model === 'updateMany' || model === 'replaceOne') {
          kind = 'update';
          statement = Object.assign({ q: take('filter'), u: take(model === 'replaceOne' ? 'replacement' : 'update'),
            multi: model === 'updateMany' }, rest);
        } else if (model === 'deleteOne' || model === 'deleteMany') {
          kind = 'delete';
          statement = Object.assign({ q: take('filter'), limit: model === 'deleteOne' ? 1 : 0 }, rest);
        } else {
          throw argError(`unknown bulkWrite operation '${model}'`);
        }
        const last = batches[batches.length - 1];
        if (last && last.kind === kind) {
          last.statements.push(statement);
          last.indexes.push(index);
        } else {
          batches.push({ kind, statements: [statement], indexes: [index] });
        }
      });
      const field = { insert: 'documents', update: 'updates', delete: 'deletes' };
      for (const batch of batches) {
        const cmd = Object.assign({ [batch.kind]: this._name, [field[batch.kind]]: batch.statements, ordered }, opts);
        const reply = this._db.runCommand(cmd);
        const failed = new Set();
        for (const e of reply.writeErrors || []) {
          const index = batch.indexes[e.index];
          failed.add(e.index);
          writeErrors.push({ index, code: e.code, codeName: native.codeName(e.code), errmsg: e.errmsg,
            op: operations[index] });
        }
        if (batch.kind === 'insert') {
          result.insertedCount += reply.n;
          batch.statements.forEach((doc, i) => {
            if (!failed.has(i) && (!ordered || failed.size === 0 || i < Math.min(...failed))) {
              result.insertedIds[batch.indexes[i]] = doc._id;
            }
          });
        } else if (batch.kind === 'update') {
          const upserted = reply.upserted || [];
          result.matchedCount += reply.n - upserted.length;
          result.modifiedCount += reply.nModified;
          result.upsertedCount += upserted.length;
          for (const u of upserted) result.upsertedIds[batch.indexes[u.index]] = u._id;
        } else {
          result.deletedCount += reply.n;
        }
        if (ordered && writeErrors.length > 0) break;
      }
      if (writeErrors.length > 0) throw new MongoBulkWriteError(writeErrors, result);
      return result;
    }
    find(filter, projection, options) {
      const opts = Object.assign({}, options);
      if (projection !== undefined && projection !== null) opts.projection = projection;
      // Every option goes to the engine, which refuses what it lacks.
      const cursor = new Cursor(this, filter, opts);
      if (opts.batchSize !== undefined) cursor.batchSize(opts.batchSize);
      return cursor;
    }
    findOne(filter, projection, options) {
      const opts = Object.assign({}, options);
      if (projection !== undefined && projection !== null) opts.projection = projection;
      return native.findOne(this._dbName, this._name, filter, opts);
    }
    _updateResult(r) {
      return {
        acknowledged: true,
        insertedId: r.upsertedId === undefined ? null : r.upsertedId,
        matchedCount: r.matchedCount,
        modifiedCount: r.modifiedCount,
        upsertedCount: r.upsertedId === undefined ? 0 : 1,
      };
    }
    updateOne(filter, update, options) {
      checkUpdate(update);
      return this._updateResult(native.update(this._dbName, this._name, filter, update, options, false));
    }
    updateMany(filter, update, options) {
      checkUpdate(update);
      return this._updateResult(native.update(this._dbName, this._name, filter, update, options, true));
    }
    replaceOne(filter, replacement, options) {
      checkReplacement(replacement);
      return this._updateResult(native.replaceOne(this._dbName, this._name, filter, replacement, options));
    }
    deleteOne(filter, options) {
      return { acknowledged: true, deletedCount: native.remove(this._dbName, this._name, filter, false, options) };
    }
    deleteMany(filter, options) {
      return { acknowledged: true, deletedCount: native.remove(this._dbName, this._name, filter, true, options) };
    }
    findOneAndUpdate(filter, update, options) {
      checkUpdate(update);
      return native.findOneAndUpdate(this._dbName, this._name, filter, update, options);
    }
    findOneAndReplace(filter, replacement, options) {
      checkReplacement(replacement);
      return native.findOneAndReplace(this._dbName, this._name, filter, replacement, options);
    }
    findOneAndDelete(filter, options) {
      return native.findOneAndDelete(this._dbName, this._name, filter, options);
    }
    countDocuments(filter, options) {
      return native.count(this._dbName, this._name, filter, options);
    }
    estimatedDocumentCount(options) {
      return native.estimatedCount(this._dbName, this._name, options);
    }
    distinct(field, filter, options) {
      checkName(field, 'field');
      return native.distinct(this._dbName, this._name, field, filter, options);
    }

    // -- indexes --
    createIndex(keys, options) {
      checkDocument(keys, 'index key pattern');
      return native.createIndexes(this._dbName, this._name, { keys: [keys] }, options)[0];
    }
    // All or none, as MongoDB's createIndexes: every spec is checked first.
    createIndexes(keyPatterns, options) {
      if (!Array.isArray(keyPatterns)) throw argError('createIndexes needs an array of key patterns');
      keyPatterns.forEach((k) => checkDocument(k, 'index key pattern'));
      return native.createIndexes(this._dbName, this._name, { keys: keyPatterns }, options);
    }
    getIndexes() { return native.listIndexes(this._dbName, this._name); }
    getIndexSpecs() { return this.getIndexes(); }
    getIndexKeys() { return this.getIndexes().map((i) => i.key); }
    dropIndex(index) {
      if (index === '*') return this.dropIndexes();
      if (typeof index !== 'string') checkDocument(index, 'index');
      const before = this.getIndexes().length;
      native.dropIndex(this._dbName, this._name, index);
      return { nIndexesWas: before, ok: 1 };
    }
    dropIndexes(indexes) {
      const before = this.getIndexes().length;
      if (indexes === undefined || indexes === '*') {
        native.dropIndexes(this._dbName, this._name);
        return { nIndexesWas: before, msg: 'non-_id indexes dropped for collection', ok: 1 };
      }
      for (const index of Array.isArray(indexes) ? indexes : [indexes]) {
        native.dropIndex(this._dbName, this._name, index);
      }
      return { nIndexesWas: before, ok: 1 };
    }

    // -- the collection itself --
    drop() { return native.dropCollection(this._dbName, this._name); }
    renameCollection(newName, dropTarget) {
      checkName(newName, 'collection');
      native.renameCollection(this._dbName, this._name, newName, !!dropTarget);
      return { ok: 1 };
    }
    // collStats through the command layer: counts, the documents' bytes,
    // RocksDB's estimates of storage and of each index.
    stats(scale) {
      const cmd = { collStats: this._name };
      if (scale !== undefined) cmd.scale = scale;
      return this._db.runCommand(cmd);
    }
    dataSize() { return this.stats().size; }
    storageSize() { return this.stats().storageSize; }
    totalIndexSize() { return this.stats().totalIndexSize; }
    totalSize() { return this.stats().totalSize; }
    // mongosh: db.c.runCommand('collStats', {scale: 1024}).
    runCommand(name, options) {
      if (typeof name !== 'string') return this._db.runCommand(name);
      return this._db.runCommand({ [name]: this._name, ...(options || {}) });
    }
    validate() {
      const r = native.validate(this._dbName, this._name);
      return {
        ns: this._fullName,
        nrecords: r.records,
        nIndexes: this.getIndexes().length,
        nIndexEntries: r.indexEntries,
        valid: r.valid,
        errors: r.errors,
        warnings: r.warnings,
        ok: 1,
      };
    }
    explain(verbosity) { return new Explainable(this, verbosityOf(verbosity)); }
    exists() {
      const infos = this._db.getCollectionInfos({ name: this._name });
      return infos.length ? infos[0] : null;
    }
    isCapped() {
      const info = this.exists();
      return !!(info && info.options && info.options.capped);
    }
    getIndices() { return this.getIndexes(); }
    getMongo() { return this._db.getMongo(); }

    // -- the legacy mongo shell's API --
    insert(docs, options) {
      if (Array.isArray(docs)) {
        checkBatch(docs);
        const r = native.insertMany(this._dbName, this._name, docs, options);
        for (const [index, id] of Object.entries(r.insertedIds)) giveId(docs[index], id);
        return new BulkWriteResult({
          writeErrors: r.writeErrors.map((e) => ({ index: e.index, code: e.code, errmsg: e.errmsg })),
          writeConcernErrors: [],
          nInserted: r.insertedCount,
          nUpserted: 0,
          nMatched: 0,
          nModified: 0,
          nRemoved: 0,
          upserted: [],
        });
      }
      checkDocument(docs, 'document');
      try {
        giveId(docs, native.insertOne(this._dbName, this._name, docs, options));
        return new WriteResult({ nInserted: 1 });
      } catch (e) {
        if (!(e instanceof MongoServerError)) throw e;
        return new WriteResult({ nInserted: 0, writeError: { code: e.code, errmsg: e.message } });
      }
    }
    update(filter, update, upsertOrOptions, multiArg) {
      // The options object goes to the engine without `multi`, which picks
      // the method here.
      let options;
      let multi = false;
      if (isPlainObject(upsertOrOptions)) {
        options = Object.assign({}, upsertOrOptions);
        multi = !!options.multi;
        delete options.multi;
      } else {
        options = { upsert: !!upsertOrOptions };
        multi = !!multiArg;
      }
      checkDocument(update, 'update');
      const replacement = !hasOperators(update);
      if (replacement && multi) throw argError('multi update is not supported for replacement-style update');
      let r;
      try {
        r = replacement
          ? native.replaceOne(this._dbName, this._name, filter, update, options)
          : native.update(this._dbName, this._name, filter, update, options, multi);
      } catch (e) {
        if (!(e instanceof MongoServerError)) throw e;
        return new WriteResult({ nMatched: 0, nUpserted: 0, nModified: 0, writeError: { code: e.code, errmsg: e.message } });
      }
      const fields = {
        nMatched: r.matchedCount,
        nUpserted: r.upsertedId === undefined ? 0 : 1,
        nModified: r.modifiedCount,
      };
      if (r.upsertedId !== undefined) fields._id = r.upsertedId;
      return new WriteResult(fields);
    }
    save(doc) {
      checkDocument(doc, 'document');
      if (doc._id === undefined) return this.insert(doc);
      return this.update({ _id: doc._id }, doc, { upsert: true });
    }
    remove(filter, justOne) {
      const [one, options] = removeArgs(justOne);
      try {
        return new WriteResult({ nRemoved: native.remove(this._dbName, this._name, filter, !one, options) });
      } catch (e) {
        if (!(e instanceof MongoServerError)) throw e;
        return new WriteResult({ nRemoved: 0, writeError: { code: e.code, errmsg: e.message } });
      }
    }
    count(filter, options) { return native.count(this._dbName, this._name, filter, options); }
    findAndModify(spec) {
      checkDocument(spec, 'findAndModify argument');
      if (spec.query === undefined) throw new MongoshInvalidInputError('Missing required property: "query"');
      // The rest of the spec are the options (fields, new, sort, upsert, ...).
      const options = Object.assign({}, spec);
      delete options.query;
      delete options.update;
      delete options.remove;
      if (spec.remove) return this.findOneAndDelete(spec.query, options);
      if (spec.update === undefined) throw argError('findAndModify needs update or remove');
      checkDocument(spec.update, 'update');
      return hasOperators(spec.update)
        ? this.findOneAndUpdate(spec.query, spec.update, options)
        : this.findOneAndReplace(spec.query, spec.update, options);
    }
    ensureIndex(keys, options) {
      const existed = native.listCollections(this._dbName).includes(this._name);
      const before = existed ? this.getIndexes().length : 0;
      this.createIndex(keys, options);
      const after = this.getIndexes().length;
      return { createdCollectionAutomatically: !existed, numIndexesBefore: before, numIndexesAfter: after, ok: 1 };
    }
    help() { return new ShellText(COLLECTION_HELP); }
  }

  // db.books.archive is the collection "books.archive", as in mongosh.
  const collectionHandler = {
    get(target, prop, receiver) {
      if (typeof prop === 'symbol' || prop in target) return Reflect.get(target, prop, receiver);
      if (prop.startsWith('_') || prop === 'then') return undefined;
      return target.getCollection(prop);
    },
  };
  function makeCollection(db, name) {
    return new Proxy(new Collection(db, name), collectionHandler);
  }

  // explain(): db.c.explain('executionStats').find({...}) and friends.
  class Explainable {
    constructor(collection, verbosity) {
      hidden(this, '_coll', collection);
      hidden(this, '_verbosity', verbosity);
    }
    _c() { return this._coll; }
    find(filter, projection, options) {
      const cursor = this._coll.find(filter, projection, options);
      cursor._explain = this._verbosity;
      return cursor;
    }
    findOne(filter, projection, options) {
      return this.find(filter, projection, options).limit(1).explain(this._verbosity);
    }
    count(filter, options) {
      return native.explainCount(this._coll._dbName, this._coll._name, filter, options, this._verbosity);
    }
    countDocuments(filter, options) { return this.count(filter, options); }
    update(filter, update, options) {
      const o = Object.assign({}, options);
      const multi = !!o.multi;
      delete o.multi;
      return native.explainUpdate(this._coll._dbName, this._coll._name, filter, update, multi, o, this._verbosity);
    }
    updateOne(filter, update, options) {
      return native.explainUpdate(this._coll._dbName, this._coll._name, filter, update, false, options, this._verbosity);
    }
    updateMany(filter, update, options) {
      return native.explainUpdate(this._coll._dbName, this._coll._name, filter, update, true, options, this._verbosity);
    }
    remove(filter, justOne) {
      const [one, options] = removeArgs(justOne);
      return native.explainDelete(this._coll._dbName, this._coll._name, filter, !one, this._verbosity, options);
    }
    deleteOne(filter, options) {
      return native.explainDelete(this._coll._dbName, this._coll._name, filter, false, this._verbosity, options);
    }
    deleteMany(filter, options) {
      return native.explainDelete(this._coll._dbName, this._coll._name, filter, true, this._verbosity, options);
    }
    getVerbosity() { return this._verbosity; }
    setVerbosity(verbosity) { this._verbosity = verbosityOf(verbosity); }
    getCollection() { return this._coll; }
    [inspectSymbol]() { return `Explainable(${this._coll._fullName})`; }
  }

  // ---- databases ----
  class DB {
    // `session`: the ClientSession whose operations these are
    // (session.getDatabase), or undefined.
    constructor(name, session) {
      hidden(this, '_name', name);
      hidden(this, '_session', session);
    }
    // What the natives take for this database: its name, or the name and
    // the session it is reached through.
    _target() {
      return this._session ? { name: this._name, session: this._session._id } : this._name;
    }
    getSession() { return this._session; }
    getName() { return this._name; }
    toString() { return this._name; }
    toJSON() { return this._name; }
    [inspectSymbol]() { return this._name; }
    getSiblingDB(name) {
      checkName(name, 'database');
      return makeDb(name, this._session);
    }
    getSisterDB(name) { return this.getSiblingDB(name); }
    getCollection(name) {
      checkName(name, 'collection');
      return makeCollection(this, name);
    }
    getCollectionNames() { return native.listCollections(this._target()); }
    // mongosh: a string names a command run with the value 1.
    runCommand(command) {
      const cmd = typeof command === 'string' ? { [command]: 1 } : command;
      return native.runCommand(this._target(), cmd);
    }
    adminCommand(command) { return this.getSiblingDB('admin').runCommand(command); }
    hello() { return this.runCommand({ hello: 1 }); }
    isMaster() { return this.runCommand({ isMaster: 1 }); }
    serverBuildInfo() { return this.adminCommand({ buildInfo: 1 }); }
    // mongosh's db.getCollectionInfos(filter, {nameOnly, authorizedCollections}).
    getCollectionInfos(filter, options) {
      const cmd = { listCollections: 1, filter: filter === undefined ? {} : filter,
        ...(options || {}) };
      const reply = this.runCommand(cmd);
      if (!reply.ok) throw __makeServerError(reply.code, reply.codeName, reply.errmsg, []);
      const out = reply.cursor.firstBatch.slice();
      let id = reply.cursor.id;
      while (id && Number(id) !== 0) {
        const more = this.runCommand({ getMore: id, collection: '$cmd.listCollections' });
        if (!more.ok) throw __makeServerError(more.code, more.codeName, more.errmsg, []);
        out.push(...more.cursor.nextBatch);
        id = more.cursor.id;
      }
      return out;
    }
    createCollection(name, options) {
      checkName(name, 'collection');
      native.createCollection(this._target(), name, options);
      return { ok: 1 };
    }
    dropDatabase() {
      native.dropDatabase(this._target());
      return { ok: 1, dropped: this._name };
    }
    stats(scale) {
      const cmd = { dbStats: 1 };
      if (scale !== undefined) cmd.scale = scale;
      return this.runCommand(cmd);
    }
    serverStatus() { return this.adminCommand({ serverStatus: 1 }); }
    hostInfo() { return this.adminCommand({ hostInfo: 1 }); }
    version() { return kVersion; }
    getMongo() { return theMongo; }
    help() { return new ShellText(DB_HELP); }
  }
  const dbHandler = {
    get(target, prop, receiver) {
      if (typeof prop === 'symbol' || prop in target) return Reflect.get(target, prop, receiver);
      if (prop.startsWith('_') || prop === 'then') return undefined;
      return target.getCollection(prop);
    },
  };
  function makeDb(name, session) {
    return new Proxy(new DB(name, session), dbHandler);
  }
  // db.getMongo(): the "connection", here the one database directory.
  class Mongo {
    getDB(name) { checkName(name, 'database'); return makeDb(name); }
    getDBNames() { return native.listDatabases(); }
    getCollection(ns) {
      const dot = typeof ns === 'string' ? ns.indexOf('.') : -1;
      if (dot <= 0 || dot === ns.length - 1) throw argError('getCollection needs a namespace "db.collection"');
      return makeDb(ns.slice(0, dot)).getCollection(ns.slice(dot + 1));
    }
    // mongosh's startSession: a session for transactions or snapshot reads.
    startSession(options) {
      if (options !== undefined && !isPlainObject(options)) throw argError('startSession options must be an object');
      return new ClientSession(this, native.startSession(options), options);
    }
    toString() { return `rockdoc:${config.path}`; }
    [inspectSymbol]() { return `Mongo('rockdoc:${config.path}')`; }
  }

  // ---- sessions and transactions (mongosh's ClientSession) ----
  class ClientSession {
    constructor(mongo, id, options) {
      hidden(this, '_mongo', mongo);
      hidden(this, '_id', id);
      hidden(this, '_defaults', (options && options.defaultTransactionOptions) || undefined);
      hidden(this, '_ended', false);
    }
    getDatabase(name) {
      checkName(name, 'database');
      return makeDb(name, this);
    }
    getClient() { return this._mongo; }
    get hasEnded() { return this._ended; }
    startTransaction(options) {
      native.sessionStartTransaction(this._id, options === undefined ? this._defaults : options);
    }
    commitTransaction() { native.sessionCommit(this._id); return { ok: 1 }; }
    abortTransaction() { native.sessionAbort(this._id); return { ok: 1 }; }
    inTransaction() { return native.sessionInTransaction(this._id); }
    endSession() {
      native.sessionEnd(this._id);
      this._ended = true;
    }
    // The drivers' withTransaction: runs fn(session) in a transaction and
    // commits, running it again while an error is labelled
    // TransientTransactionError (and retrying a commit labelled
    // UnknownTransactionCommitResult), for up to 120 s; any other error
    // aborts and is thrown. Returns fn's result.
    withTransaction(fn, options) {
      if (typeof fn !== 'function') throw argError('withTransaction needs a function');
      const start = Date.now();
      const inTime = () => Date.now() - start < 120000;
      for (;;) {
        this.startTransaction(options);
        let result;
        try {
          result = fn(this);
        } catch (e) {
          if (this.inTransaction()) this.abortTransaction();
          if (e && typeof e.hasErrorLabel === 'function' && e.hasErrorLabel('TransientTransactionError') && inTime()) continue;
          throw e;
        }
        if (!this.inTransaction()) return result;  // fn committed or aborted itself
        for (;;) {
          try {
            this.commitTransaction();
            return result;
          } catch (e) {
            const labelled = (l) => e && typeof e.hasErrorLabel === 'function' && e.hasErrorLabel(l);
            if (labelled('UnknownTransactionCommitResult') && inTime()) continue;
            if (labelled('TransientTransactionError') && inTime()) break;
            throw e;
          }
        }
      }
    }
    toString() { return `ClientSession(${this._id})`; }
    [inspectSymbol]() { return `ClientSession { id: ${this._id}${this._ended ? ', ended' : ''} }`; }
  }
  const theMongo = new Mongo();

  // ---- arguments mongosh requires ----
  // mongosh refuses these calls when a required argument is undefined
  // (its assertArgsDefinedType): `deleteMany()` must not mean "delete every
  // document". One table, one wrapper; the message is mongosh's, naming the
  // method as mongosh does (an explain delegates to the collection method).
  const REQUIRED_ARGUMENTS = [
    [Collection, 'Collection', {
      insertOne: [0], insertMany: [0], insert: [0], save: [0],
      updateOne: [0, 1], updateMany: [0, 1], update: [0, 1], replaceOne: [0, 1],
      deleteOne: [0], deleteMany: [0], remove: [0],
      findOneAndUpdate: [0, 1], findOneAndReplace: [0, 1], findOneAndDelete: [0], findAndModify: [0],
      distinct: [0], createIndex: [0], createIndexes: [0], ensureIndex: [0], dropIndex: [0],
      renameCollection: [0], getCollection: [0],
    }],
    [Explainable, 'Collection', {
      updateOne: [0, 1], updateMany: [0, 1], update: [0, 1], deleteOne: [0], deleteMany: [0], remove: [0],
    }],
    [DB, 'Database', { getSiblingDB: [0], getSisterDB: [0], getCollection: [0], createCollection: [0] }],
    [Mongo, 'Mongo', { getDB: [0], getCollection: [0] }],
    [ClientSession, 'ClientSession', { getDatabase: [0], withTransaction: [0] }],
  ];
  for (const [cls, className, methods] of REQUIRED_ARGUMENTS) {
    for (const [method, positions] of Object.entries(methods)) {
      const impl = cls.prototype[method];
      const name = `${className}.${method}`;
      Object.defineProperty(cls.prototype, method, {
        value: function (...args) {
          for (const i of positions) {
            if (args[i] === undefined) {
              throw new MongoshInvalidInputError(`Missing required argument at position ${i} (${name})`);
            }
          }
          return impl.apply(this, args);
        },
        writable: true,
        configurable: true,
      });
    }
  }

  // ---- mongosh names rockdoc does not have ----
  // The method names of mongosh's documentation (Collection, Database,
  // Cursor, Mongo, explain) that rockdoc does not implement: each exists and
  // throws MongoshUnimplementedError (NotImplemented, 238) when called, so
  // `db.c.bulkWrite(...)` says so instead of "is not a function", and
  // `db.c.totalSize` is not taken for the sub-collection "c.totalSize"
  // (other names still are: db.a.b is the collection "a.b").
  const NOT_SUPPORTED = [
    [Collection, 'Collection', [
      'aggregate', 'analyzeShardKey', 'checkMetadataConsistency',
      'compactStructuredEncryptionData', 'configureQueryAnalyzer', 'convertToCapped',
      'createSearchIndex', 'createSearchIndexes', 'dropSearchIndex', 'getPlanCache',
      'getSearchIndexes', 'getShardDistribution', 'getShardLocation', 'getShardVersion',
      'hideIndex', 'initializeOrderedBulkOp', 'initializeUnorderedBulkOp', 'latencyStats',
      'mapReduce', 'reIndex', 'unhideIndex', 'updateSearchIndex', 'watch',
    ]],
    [DB, 'Database', [
      'aggregate', 'auth', 'changeUserPassword', 'checkMetadataConsistency',
      'cloneCollection', 'cloneDatabase', 'commandHelp', 'copyDatabase', 'createEncryptedCollection',
      'createRole', 'createUser', 'createView', 'currentOp', 'dropAllRoles', 'dropAllUsers',
      'dropRole', 'dropUser', 'fsyncLock', 'fsyncUnlock', 'getLastError', 'getLastErrorObj',
      'getLogComponents', 'getProfilingStatus', 'getReplicationInfo', 'getRole', 'getRoles',
      'getUser', 'getUsers', 'grantPrivilegesToRole', 'grantRolesToRole', 'grantRolesToUser',
      'killOp', 'listCommands', 'logout', 'printCollectionStats',
      'printReplicationInfo', 'printSecondaryReplicationInfo', 'printShardingStatus',
      'printSlaveReplicationInfo', 'revokePrivilegesFromRole', 'revokeRolesFromRole',
      'revokeRolesFromUser', 'rotateCertificates', 'serverBits',
      'serverCmdLineOpts', 'setLogLevel', 'setProfilingLevel', 'setSecondaryOk',
      'shutdownServer', 'sql', 'updateRole', 'updateUser', 'watch',
    ]],
    [Cursor, 'Cursor', [
      'addOption', 'max', 'maxAwaitTimeMS', 'maxScan', 'min', 'oplogReplay', 'returnKey',
      'showRecordId', 'tailable',
    ]],
    [Explainable, 'Explainable', [
      'aggregate', 'distinct', 'estimatedDocumentCount', 'findAndModify', 'findOneAndDelete',
      'findOneAndReplace', 'findOneAndUpdate', 'mapReduce',
    ]],
    [Mongo, 'Mongo', [
      'bulkWrite', 'close', 'convertShardKeyToHashed', 'getClientEncryption', 'getDBs',
      'getKeyVault', 'getReadConcern', 'getReadPref', 'getReadPrefMode', 'getReadPrefTagSet',
      'getURI', 'getWriteConcern', 'isCausalConsistency', 'setCausalConsistency',
      'setReadConcern', 'setReadPref', 'setSecondaryOk', 'setSlaveOk', 'setWriteConcern',
      'watch',
    ]],
  ];
  function notSupported(what) {
    return function () { throw new MongoshUnimplementedError(what); };
  }
  for (const [cls, className, names] of NOT_SUPPORTED) {
    for (const name of names) {
      if (Object.prototype.hasOwnProperty.call(cls.prototype, name)) continue;
      Object.defineProperty(cls.prototype, name, {
        value: notSupported(`${className}.${name}`), writable: true, configurable: true,
      });
    }
  }
  // The shell's globals for other servers: there is one database directory.
  global.Mongo = notSupported('Mongo');
  global.connect = notSupported('connect');
  global.rs = Object.freeze(Object.fromEntries([
    'add', 'addArb', 'conf', 'config', 'freeze', 'help', 'initiate', 'isMaster', 'hello',
    'printReplicationInfo', 'printSecondaryReplicationInfo', 'reconfig', 'remove', 'status',
    'stepDown', 'syncFrom',
  ].map((name) => [name, notSupported(`rs.${name}`)])));
  global.sh = Object.freeze(Object.fromEntries([
    'addShard', 'addShardToZone', 'balancerCollectionStatus', 'disableBalancing',
    'enableBalancing', 'enableSharding', 'getBalancerState', 'help', 'isBalancerRunning',
    'moveChunk', 'removeShardFromZone', 'shardCollection', 'splitAt', 'splitFind',
    'startBalancer', 'status', 'stopBalancer', 'updateZoneKeyRange',
  ].map((name) => [name, notSupported(`sh.${name}`)])));

  global.db = makeDb(config.initialDb);

  // ---- printing ----
  function toJsonLine(v) { return native.toJson(v, 'relaxed'); }

  // What print() and printjson() write for one value.
  function printable(v) {
    if (config.json && v !== null && typeof v === 'object' && !(v instanceof ShellText)) {
      return toJsonLine(v);
    }
    return inspect(v, { top: true });
  }
  global.print = function print(...args) {
    native.write(args.map(printable).join(' ') + '\n');
  };
  // console.log and friends print as print() does (errors and warnings to
  // stderr), as in mongosh.
  function printErr(...args) {
    native.writeErr(args.map(printable).join(' ') + '\n');
  }
  global.console = Object.freeze({
    log: global.print, info: global.print, debug: global.print, warn: printErr, error: printErr,
  });
  global.printjson = function printjson(v) {
    native.write((config.json ? toJsonLine(v) : inspect(v)) + '\n');
  };
  global.printjsononeline = function printjsononeline(v) {
    native.write(native.toJson(v, 'shell') + '\n');
  };
  global.tojson = function tojson(v) { return inspect(v); };
  global.tojsononeline = function tojsononeline(v) { return native.toJson(v, 'shell'); };
  global.load = function load(path) { return native.load(String(path)); };
  global.quit = function quit(code) { native.quit(code === undefined ? 0 : code); };
  global.exit = global.quit;
  global.sleep = function sleep(ms) { native.sleep(ms); };
  global.version = function version() { return kVersion; };
  Object.bsonsize = function bsonsize(doc) {
    if (!isPlainObject(doc)) throw argError('Object.bsonsize needs a document');
    return native.bsonsize(doc);
  };

  // ---- help ----
  const SHELL_HELP = [
    'Shell commands:',
    '  use <db>                         switch the current database',
    '  show dbs | show databases        list the databases',
    '  show collections | show tables   list the collections of the current database',
    '  it                               show more results of the last cursor',
    '  help | db.help() | db.c.help()   help',
    '  exit | quit | Ctrl-D             leave the shell (exit(n) with a status)',
    '',
    'Databases and collections:',
    '  db                               the current database; db.getSiblingDB(name)',
    '  db.<name> | db.getCollection(n)  a collection',
    '',
    'Values:',
    "  ObjectId('hex'), ISODate('2024-01-01T00:00:00Z'), new Date(), NumberInt(1), NumberLong('1'),",
    "  NumberDecimal('1.5'), UUID('...'), BinData(0, 'base64'), Timestamp({t, i}), MinKey(), MaxKey()",
    '',
    'Helpers:',
    '  print(...), console.log(...), printjson(x), load(file), Object.bsonsize(doc), EJSON.stringify(x), sleep(ms)',
    '',
    'Ctrl-C stops a running statement.',
  ].join('\n');
  const DB_HELP = [
    'Database methods:',
    '  db.getName()  db.getSiblingDB(name)  db.getCollection(name)  db.getCollectionNames()',
    '  db.createCollection(name, options)  db.dropDatabase()  db.stats()',
  ].join('\n');
  const COLLECTION_HELP = [
    'Collection methods:',
    '  insertOne(doc)  insertMany(docs, {ordered})  bulkWrite([{insertOne: {document}}, ...], {ordered})',
    '  find(filter, projection, options)  findOne(filter, projection)',
    '  updateOne(filter, update, {upsert, arrayFilters})  updateMany(...)  replaceOne(filter, doc, {upsert})',
    '  deleteOne(filter)  deleteMany(filter)',
    '  findOneAndUpdate(filter, update, {sort, projection, upsert, returnDocument})',
    '  findOneAndReplace(filter, doc, options)  findOneAndDelete(filter, options)',
    '  countDocuments(filter)  estimatedDocumentCount()  distinct(field, filter)',
    '  createIndex(keys, {name, unique, sparse, partialFilterExpression})  createIndexes([keys])',
    '  getIndexes()  dropIndex(nameOrKeys)  dropIndexes()',
    '  drop()  renameCollection(name)  stats()  validate()  explain(verbosity).find(...)',
    'Legacy: insert  update(q, u, {upsert, multi})  save  remove(q, justOne)  count',
    '  findAndModify({query, update|remove, sort, new, fields, upsert})  ensureIndex',
  ].join('\n');
  const CURSOR_HELP = [
    'Cursor methods:',
    '  sort(spec)  skip(n)  limit(n)  project(spec)  hint(index)  batchSize(n)',
    '  hasNext()  next()  toArray()  forEach(fn)  map(fn)  itcount()  count()  size()',
    '  explain(verbosity)  pretty()  close()',
  ].join('\n');
  global.help = function help() { return new ShellText(SHELL_HELP); };

  // ---- the REPL side ----
  let lastCursor = null;

  // Shows the next page of `cursor` (mongosh: 20 documents, then a hint).
  function displayCursorPage(cursor) {
    lastCursor = cursor;
    const page = [];
    while (page.length < config.batchSize && cursor.hasNext()) page.push(cursor.next());
    if (page.length > 0) native.write(inspect(page) + '\n');
    if (cursor.hasNext()) native.write('Type "it" for more\n');
  }

  function displayJson(value) {
    if (value instanceof Cursor) {
      if (value._explain !== undefined) {
        native.write(toJsonLine(value.explain(value._explain)) + '\n');
        return;
      }
      while (value.hasNext()) native.write(toJsonLine(value.next()) + '\n');
      return;
    }
    if (Array.isArray(value)) {
      for (const v of value) native.write(toJsonLine(v) + '\n');
      return;
    }
    if (value instanceof ShellText) {
      native.write(toJsonLine(value.text) + '\n');
      return;
    }
    if (value instanceof WriteResult || value instanceof BulkWriteResult) {
      native.write(toJsonLine(Object.assign({}, value)) + '\n');
      return;
    }
    if (value instanceof DB || value instanceof Collection) {
      native.write(toJsonLine(String(value)) + '\n');
      return;
    }
    if (typeof value === 'function') return;
    native.write(toJsonLine(value) + '\n');
  }

  function display(value) {
    if (value === undefined) return;
    if (value instanceof ShellText && value.text === '') return;
    if (config.json) {
      displayJson(value);
      return;
    }
    if (value instanceof Cursor) {
      if (value._explain !== undefined) {
        native.write(inspect(value.explain(value._explain)) + '\n');
        return;
      }
      displayCursorPage(value);
      return;
    }
    native.write(inspect(value, { top: true }) + '\n');
  }

  function showDatabases() {
    const names = native.listDatabases();
    const rows = names.map((name) => {
      const collections = native.listCollections(name);
      let documents = 0;
      for (const c of collections) documents += native.estimatedCount(name, c);
      return { name, collections: collections.length, documents };
    });
    if (config.json) return rows;
    const width = Math.max(0, ...names.map((n) => n.length));
    return new ShellText(rows.map((r) =>
      `${r.name.padEnd(width)}  ${r.collections} collection${r.collections === 1 ? '' : 's'}, ` +
      `${r.documents} document${r.documents === 1 ? '' : 's'}`).join('\n'));
  }

  const SERVER_ERROR_CLASSES = new Set(['MongoServerError', 'MongoBulkWriteError']);
  const EMBEDDED = new Set(['bson_types.js', 'inspect.js', 'shell_api.js']);
  function formatError(e) {
    if (!(e instanceof Error)) return `Uncaught ${inspect(e)}`;
    let line = global.__formatErrorValue(e);
    const file = e.fileName;
    const located = e instanceof SyntaxError ||
      (file && !EMBEDDED.has(file) && !file.startsWith('<') && !SERVER_ERROR_CLASSES.has(e.name));
    if (located && file && e.lineNumber) {
      // SpiderMonkey counts a SyntaxError's column from 0, other errors' from 1.
      const column = e instanceof SyntaxError ? e.columnNumber + 1 : e.columnNumber;
      line += ` @ ${file}:${e.lineNumber}:${column}`;
    }
    return line;
  }

  Object.defineProperty(global, '__shell', {
    value: Object.freeze({
      display,
      formatError,
      prompt() { return `${global.db}> `; },
      use(name) {
        global.db = global.db.getSiblingDB(name);
        return config.json ? undefined : new ShellText(`switched to db ${name}`);
      },
      show(what, arg) {
        switch (what) {
          case 'dbs':
          case 'databases':
            return showDatabases();
          case 'collections':
          case 'tables': {
            const names = global.db.getCollectionNames();
            return config.json ? names : new ShellText(names.join('\n'));
          }
          default:
            throw argError(`don't know how to show '${what}' (try: show dbs, show collections)`);
        }
      },
      it() {
        if (lastCursor === null || !lastCursor.hasNext()) return new ShellText('no cursor');
        return lastCursor;
      },
      help(topic) {
        return new ShellText(SHELL_HELP);
      },
    }),
  });
})(globalThis);

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
    if (Array.isArray(update)) return;  // an update pipeline: its stages are the server's to check
    checkDocument(update, 'update');
    if (!hasOperators(update)) throw argError('Update document requires atomic operators');
  }
  function checkReplacement(doc) {
    checkDocument(doc, 'replacement');
    if (Object.keys(doc).some((k) => k.startsWith('$'))) {
      throw argError('Replacement document must not contain atomic operators');
    }
  }
  // A command cursor's id is 0 once the server has no more.
  function isZeroId(id) { return Number(id) === 0; }
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

  // db.advise() / db.c.advise(): the schema advisor's report, printed as
  // its text; its fields (findings, ...) are the report's JSON form.
  class AdviceReport {
    constructor(result) {
      Object.assign(this, result.report);
      Object.defineProperty(this, '_text', { value: result.text });
    }
    toString() { return this._text; }
    [inspectSymbol]() { return this._text.replace(/\n$/, ''); }
  }

  // ---- cursors ----
  class Cursor {
    constructor(collection, filter, options) {
      hidden(this, '_coll', collection);
      hidden(this, '_filter', filter === undefined ? {} : filter);
      hidden(this, '_opts', Object.assign({}, options));
      hidden(this, '_batchSize', undefined);  // the server's default unless set
      hidden(this, '_id', null);  // the command cursor's id once find has run
      hidden(this, '_buffer', []);
      hidden(this, '_exhausted', false);
      hidden(this, '_transforms', []);
      hidden(this, '_explain', undefined);
      hidden(this, '_explained', false);
      hidden(this, '_closed', false);
    }
    _checkModifiable(what) {
      if (this._id !== null || this._exhausted) {
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
      this._batchSize = size === 0 ? undefined : size;
      return this;
    }
    maxTimeMS(ms) {
      if (typeof ms !== 'number') throw argError('maxTimeMS must be a number');
      return this._setOption('maxTimeMS', ms);
    }
    // A key range of the hinted index, and what each result shows of its
    // index entry or record (the find command's min, max, returnKey,
    // showRecordId).
    min(spec) { checkDocument(spec, 'min'); return this._setOption('min', spec); }
    max(spec) { checkDocument(spec, 'max'); return this._setOption('max', spec); }
    returnKey(on) { return this._setOption('returnKey', on === undefined ? true : on); }
    showRecordId(on) { return this._setOption('showRecordId', on === undefined ? true : on); }
    // Options the find command decides on (command/crud_commands.cc):
    // accepted there only where they have no effect on one embedded node.
    comment(c) { return this._setOption('comment', c); }
    readPref(mode) { return this._setOption('readPreference', mode); }
    readConcern(level) { return this._setOption('readConcern', { level }); }
    noCursorTimeout() { return this._setOption('noCursorTimeout', true); }
    allowDiskUse(allow) { return this._setOption('allowDiskUse', allow === undefined ? true : allow); }
    allowPartialResults() { return this._setOption('allowPartialResults', true); }
    pretty() { return this; }
    // The find's collation ({locale: 'en', strength: 2}): its filter and sort.
    collation(spec) { checkDocument(spec, 'collation'); return this._setOption('collation', spec); }

    // The find command of this cursor (also what its explain explains):
    // the options as the command's fields, as the drivers send them.
    _findCommand() {
      const cmd = { find: this._coll._name, filter: this._filter };
      for (const [name, value] of Object.entries(this._opts)) {
        if (value === undefined) continue;
        if (name === 'readPreference') {
          cmd.$readPreference = typeof value === 'string' ? { mode: value } : value;
        } else if (name === 'limit' && isNumeric(value) && Number(value) < 0) {
          // A negative limit: one batch of at most |n| (the drivers' rule).
          cmd.limit = -Number(value);
          cmd.singleBatch = true;
        } else {
          cmd[name] = value;
        }
      }
      if (this._batchSize !== undefined) cmd.batchSize = this._batchSize;
      return cmd;
    }
    // The next batch: find's first, then getMore's.
    _fill() {
      if (this._buffer.length > 0 || this._exhausted) return;
      let cursor;
      if (this._id === null) {
        cursor = this._coll._db._run(this._findCommand()).cursor;
        this._buffer = cursor.firstBatch;
      } else if (!isZeroId(this._id)) {
        const more = { getMore: this._id, collection: this._coll._name };
        if (this._batchSize !== undefined) more.batchSize = this._batchSize;
        cursor = this._coll._db._run(more).cursor;
        this._buffer = cursor.nextBatch;
      } else {
        this._exhausted = true;
        return;
      }
      this._id = cursor.id;
      if (this._buffer.length === 0 && isZeroId(this._id)) this._exhausted = true;
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
      const options = { hint: this._opts.hint, collation: this._opts.collation };
      if (applySkipLimit) {
        options.skip = this._opts.skip;
        options.limit = this._opts.limit;
      }
      return this._coll._count(this._filter, options);
    }
    size() { return this.count(true); }
    explain(verbosity) {
      return this._coll._explain(this._findCommand(), verbosity);
    }
    // An explain cursor's result (mongosh's ExplainableCursor.finish()).
    finish() {
      if (this._explain === undefined) throw argError('finish() is for explain cursors: db.c.explain().find()');
      return this.explain(this._explain);
    }
    close() {
      if (this._id !== null && !isZeroId(this._id)) {
        this._coll._db._run({ killCursors: this._coll._name, cursors: [this._id] });
        this._id = 0;
      }
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

  // mongosh's AggregationCursor: the aggregate command's cursor, read as a
  // find's is (first batch, then getMore). It has no query modifiers.
  class AggregationCursor extends Cursor {
    constructor(collection, pipeline, options) {
      super(collection, {}, {});
      hidden(this, '_pipeline', pipeline);
      hidden(this, '_aggregateOptions', options);
    }
    // mongosh runs a pipeline that writes ($out, $merge) at once, so that
    // `var r = db.a.aggregate([{$out: 'b'}])` writes whether or not the
    // cursor is ever read; other pipelines run at their first result.
    _runIfWrites() {
      const writes = this._pipeline.some((stage) => stage !== null && typeof stage === 'object' &&
        Object.keys(stage).some((key) => key === '$out' || key === '$merge'));
      if (writes) this.hasNext();
      return this;
    }
    _findCommand() {
      const cmd = { aggregate: this._collectionless ? 1 : this._coll._name, pipeline: this._pipeline, cursor: {} };
      if (this._batchSize !== undefined) cmd.cursor.batchSize = this._batchSize;
      return assignDefined(cmd, this._aggregateOptions);
    }
    toString() { return `AggregationCursor(${this._coll._fullName})`; }
    [inspectSymbol]() { return `AggregationCursor(${this._coll._fullName})`; }
  }
  for (const name of ['sort', 'skip', 'limit', 'project', 'projection', 'hint', 'comment',
    'readPref', 'readConcern', 'noCursorTimeout', 'allowDiskUse', 'allowPartialResults', 'count',
    'size', 'collation', 'min', 'max', 'returnKey', 'showRecordId', 'tailable', 'addOption',
    'maxAwaitTimeMS', 'maxScan', 'oplogReplay', 'maxTimeMS']) {
    Object.defineProperty(AggregationCursor.prototype, name, { value: undefined, writable: true, configurable: true });
  }

  // ---- change streams: mongosh's ChangeStreamCursor ----
  // watch() runs the aggregate command with $changeStream first at once
  // (the stream starts there), then reads with awaitData getMores, as the
  // drivers do. The resume token follows the drivers' rule: the last
  // event's _id while events of the batch remain, the batch's
  // postBatchResumeToken past them.
  class MongoshRuntimeError extends Error {
    constructor(message) {
      super(message);  // mongosh gives these no code
      this.name = 'MongoshRuntimeError';
    }
  }
  function notOnChangeStream(method) {
    return new MongoshUnimplementedError(`ChangeStreamCursor.${method}`,
      `Cannot call ${method} on a change stream cursor`);
  }
  // The options of watch() that belong to its cursor; every other one is a
  // field of the $changeStream stage, which the command layer decodes from
  // its table of known fields (an unknown one is 40415 there).
  const CHANGE_STREAM_CURSOR_OPTIONS = ['batchSize', 'maxAwaitTimeMS'];
  class ChangeStreamCursor {
    // `db`: the database the aggregate runs on; `aggregate`: the command's
    // first field's value (a collection's name, or 1); `on`: what it
    // watches, as printed; `stage`: fields of the $changeStream stage that
    // the caller sets (allChangesForCluster).
    constructor(db, aggregate, on, pipeline = [], options, stage) {
      if (!isPlainObject(pipeline) && !Array.isArray(pipeline)) throw argError('watch needs an array of stages');
      // mongosh: watch(options) is watch([], options).
      if (!Array.isArray(pipeline)) [pipeline, options] = [[], pipeline];
      const fields = assignDefined({}, options);
      const cursorOptions = takeFields(fields, CHANGE_STREAM_CURSOR_OPTIONS, {});
      hidden(this, '_db', db);
      hidden(this, '_on', on);
      hidden(this, '_buffer', []);
      hidden(this, '_closed', false);
      hidden(this, '_warnings', true);
      hidden(this, '_transforms', []);
      hidden(this, '_batchSize', cursorOptions.batchSize);
      hidden(this, '_maxAwaitTimeMS', cursorOptions.maxAwaitTimeMS);
      hidden(this, '_postBatchResumeToken', undefined);
      hidden(this, '_resumeToken', fields.startAfter !== undefined ? fields.startAfter
        : fields.resumeAfter !== undefined ? fields.resumeAfter : null);
      const cmd = {
        aggregate,
        pipeline: [{ $changeStream: Object.assign(fields, stage) }, ...pipeline],
        cursor: this._batchSize === undefined ? {} : { batchSize: this._batchSize },
      };
      const reply = db._run(cmd).cursor;
      hidden(this, '_id', reply.id);
      hidden(this, '_collection', collectionOfNs(reply.ns));
      this._took(reply.firstBatch, reply.postBatchResumeToken);
    }
    // A batch arrived (the drivers' _processBatch).
    _took(batch, postBatchResumeToken) {
      this._buffer.push(...batch);
      if (postBatchResumeToken !== undefined) {
        this._postBatchResumeToken = postBatchResumeToken;
        if (batch.length === 0) this._resumeToken = postBatchResumeToken;
      }
      if (isZeroId(this._id)) this._closed = true;  // the server ended it (an invalidate)
    }
    // One getMore: waits up to maxAwaitTimeMS (the server's second when
    // not given) for events.
    _getMore() {
      const more = { getMore: this._id, collection: this._collection };
      if (this._batchSize !== undefined) more.batchSize = this._batchSize;
      if (this._maxAwaitTimeMS !== undefined) more.maxTimeMS = this._maxAwaitTimeMS;
      const reply = this._db._run(more).cursor;
      this._id = reply.id;
      this._took(reply.nextBatch, reply.postBatchResumeToken);
    }
    // The next event of the buffer, its resume token kept (the drivers'
    // cacheResumeToken).
    _take() {
      const event = this._buffer.shift();
      this._resumeToken = this._buffer.length === 0 && this._postBatchResumeToken !== undefined
        ? this._postBatchResumeToken : event._id;
      return this._apply(event);
    }
    _warnBlocking(method) {
      if (!this._warnings) return;
      native.writeErr(`Warning: If there are no documents in the batch, ${method} will block. Use tryNext if ` +
        'you want to check if there are any documents without waiting, or cursor.disableBlockWarnings() if ' +
        'you want to disable this warning.\n');
    }
    // Blocks until an event arrives or the stream ends (`method` warns).
    _awaitEvent(method) {
      this._warnBlocking(method);
      while (this._buffer.length === 0 && !this._closed) this._getMore();
      return this._buffer.length > 0;
    }
    hasNext() { return this._awaitEvent('hasNext'); }
    next() {
      if (!this._awaitEvent('next')) throw new MongoshRuntimeError('ChangeStream is closed');
      return this._take();
    }
    // The next event if one is there after one getMore, or null.
    tryNext() {
      if (this.isClosed()) throw new MongoshRuntimeError('Cannot call tryNext on closed cursor');
      if (this._buffer.length === 0 && !this._closed) this._getMore();
      return this._buffer.length > 0 ? this._take() : null;
    }
    getResumeToken() { return this._resumeToken; }
    isClosed() { return this._closed && this._buffer.length === 0; }
    isExhausted() {
      throw new MongoshInvalidInputError('isExhausted is not implemented for ChangeStreams because after ' +
        'closing a cursor, the remaining documents in the batch are no longer accessible. If you want to see ' +
        'if the cursor is closed use isClosed. If you want to see if there are documents left in the batch, ' +
        'use tryNext.');
    }
    close() {
      if (!this._closed && !isZeroId(this._id)) {
        this._db._run({ killCursors: this._collection, cursors: [this._id] });
        this._id = 0;
      }
      this._closed = true;
      this._buffer = [];
    }
    // Every event, as they come, until fn returns false or the stream ends.
    forEach(fn) {
      while (this.hasNext()) {
        if (fn(this.next()) === false) break;
      }
    }
    // The events there now (tryNext until null).
    itcount() {
      let n = 0;
      while (!this.isClosed() && this.tryNext() !== null) n++;
      return n;
    }
    pretty() { return this; }
    disableBlockWarnings() {
      this._warnings = false;
      return this;
    }
    // The REPL's page ("it"): up to a batch of the events there now.
    _page(size) {
      const page = [];
      while (page.length < size && !this.isClosed()) {
        const event = this.tryNext();
        if (event === null) break;
        page.push(event);
      }
      return page;
    }
    toArray() { throw notOnChangeStream('toArray'); }
    batchSize() { throw notOnChangeStream('batchSize'); }
    objsLeftInBatch() { throw notOnChangeStream('objsLeftInBatch'); }
    maxTimeMS() { throw notOnChangeStream('maxTimeMS'); }
    help() { return new ShellText(CHANGE_STREAM_HELP); }
    toString() { return `ChangeStreamCursor on ${this._on}`; }
    [inspectSymbol]() { return `ChangeStreamCursor on ${this._on}`; }
  }
  // map(fn) as a find's cursor has it (this._transforms, applied by _apply).
  for (const name of ['map', '_apply']) {
    Object.defineProperty(ChangeStreamCursor.prototype, name,
      { value: Cursor.prototype[name], writable: true, configurable: true });
  }

  // ---- live queries: rockdoc's Cursor.observe ----
  // db.c.find(q).sort(s).limit(n).observe(callbacks) keeps the find's result
  // up to date (Collection::Observe, polled on the shell's thread): poll(ms)
  // delivers what committed since, as added(doc, before), changed(id,
  // fields, removedFields), moved(id, before) and removed(id) calls (before:
  // the _id of the document it now precedes, undefined at the end). Without
  // callbacks each change is printed. The cursor options a live query takes:
  // sort, projection, skip and limit; any other is refused.
  const OBSERVE_OPTIONS = ['sort', 'projection', 'skip', 'limit'];
  const OBSERVE_CALLBACKS = ['added', 'changed', 'moved', 'removed'];
  const LIVE_QUERY_HELP = [
    'LiveQuery methods (db.c.find(q).sort(s).limit(n).observe(callbacks)):',
    '  poll(ms)  deliver the changes committed since (waiting up to ms for one); their count',
    '  result()  the documents as the changes left them',
    '  stop()  isStopped()',
  ].join('\n');
  function idKey(id) { return native.toJson({ _id: id }, 'canonical'); }
  class LiveQuery {
    constructor(cursor, callbacks) {
      if (callbacks !== undefined && !isPlainObject(callbacks)) {
        throw argError('observe takes an object of callbacks: {added, changed, moved, removed}');
      }
      for (const [name, fn] of Object.entries(callbacks || {})) {
        if (!OBSERVE_CALLBACKS.includes(name)) throw argError(`observe: unknown callback '${name}'`);
        if (typeof fn !== 'function') throw argError(`observe: ${name} must be a function`);
      }
      if (cursor instanceof AggregationCursor) {
        throw new MongoshUnimplementedError('AggregationCursor.observe', 'observe() is for a find: db.c.find(q).observe()');
      }
      const options = {};
      for (const [name, value] of Object.entries(cursor._opts)) {
        if (value === undefined) continue;
        if (!OBSERVE_OPTIONS.includes(name)) {
          throw new MongoshUnimplementedError(`Cursor.${name}().observe`,
            `observe() does not support ${name}(): a live query takes sort, projection, skip and limit`);
        }
        options[name] = name === 'limit' ? Math.abs(Number(value)) : value;
      }
      if (cursor._transforms.length > 0) {
        throw new MongoshUnimplementedError('Cursor.map().observe', 'observe() does not support map()');
      }
      hidden(this, '_on', cursor._coll._fullName);
      hidden(this, '_callbacks', callbacks);
      hidden(this, '_docs', []);  // [{key, id, doc}], in the result's order
      hidden(this, '_stopped', false);
      const opened = native.observe(cursor._coll._db._name, cursor._coll._name, cursor._filter, options);
      hidden(this, '_handle', opened.handle);
      this._deliver(opened.result.changes);
    }
    _at(id) {
      const key = idKey(id);
      return this._docs.findIndex((e) => e.key === key);
    }
    _place(entry, before) {
      const at = before === undefined ? this._docs.length : this._at(before);
      this._docs.splice(at < 0 ? this._docs.length : at, 0, entry);
    }
    _deliver(changes) {
      const cb = this._callbacks;
      for (const c of changes) {
        if (c.op === 'added') {
          this._place({ key: idKey(c.id), id: c.id, doc: c.doc }, c.before);
          if (cb === undefined) print('added', c.doc, ...(c.before === undefined ? [] : ['before', { _id: c.before }]));
          else if (cb.added) cb.added(c.doc, c.before);
        } else if (c.op === 'changed') {
          const at = this._at(c.id);
          if (at >= 0) {
            const doc = Object.assign({}, this._docs[at].doc, c.fields);
            for (const name of c.removed) delete doc[name];
            this._docs[at].doc = doc;
          }
          if (cb === undefined) {
            print('changed', { _id: c.id }, c.fields, ...(c.removed.length ? ['removed', c.removed] : []));
          } else if (cb.changed) {
            cb.changed(c.id, c.fields, c.removed);
          }
        } else if (c.op === 'moved') {
          const at = this._at(c.id);
          if (at >= 0) this._place(this._docs.splice(at, 1)[0], c.before);
          if (cb === undefined) print('moved', { _id: c.id }, 'before', c.before === undefined ? 'the end' : { _id: c.before });
          else if (cb.moved) cb.moved(c.id, c.before);
        } else {
          const at = this._at(c.id);
          if (at >= 0) this._docs.splice(at, 1);
          if (cb === undefined) print('removed', { _id: c.id });
          else if (cb.removed) cb.removed(c.id);
        }
      }
    }
    poll(ms) {
      if (this._stopped) throw new MongoshRuntimeError('the live query is stopped');
      const wait = ms === undefined ? 0 : Number(ms);
      if (!Number.isFinite(wait) || wait < 0) throw argError('poll(ms) needs a non-negative number');
      const changes = native.observePoll(this._handle, wait).changes;
      this._deliver(changes);
      return changes.length;
    }
    result() { return this._docs.map((e) => e.doc); }
    stop() {
      native.observeStop(this._handle);
      this._stopped = true;
    }
    isStopped() { return this._stopped; }
    help() { return new ShellText(LIVE_QUERY_HELP); }
    toString() { return `LiveQuery on ${this._on}: ${this._docs.length} documents`; }
    [inspectSymbol]() { return this.toString(); }
  }
  Object.defineProperty(Cursor.prototype, 'observe', {
    value: function observe(callbacks) { return new LiveQuery(this, callbacks); },
    writable: true, configurable: true,
  });

  // ---- collections ----
  // Every method runs database commands (command/), as mongosh's run
  // through its driver: the options go to the command as its fields, and
  // the command layer, which decodes every option once, refuses what it
  // does not know. What is here is the drivers' part: ids given to new
  // documents, batching, the names mongosh's options have (projection for
  // fields, returnDocument for new), and the result shapes.

  // remove(filter, justOne) or remove(filter, {justOne, ...options}) ->
  // [justOne, the options].
  function removeArgs(justOne) {
    if (!isPlainObject(justOne)) return [!!justOne, undefined];
    const options = Object.assign({}, justOne);
    delete options.justOne;
    return [!!justOne.justOne, options];
  }
  function giveId(doc, id) {
    if (doc._id === undefined && Object.isExtensible(doc)) doc._id = id;
  }
  // [the document to send, its _id]: as the drivers do, a document without
  // an _id gets a new ObjectId (the caller's object too, where it can).
  function withId(doc) {
    checkDocument(doc, 'document');
    if (doc._id !== undefined) return [doc, doc._id];
    const id = new global.ObjectId();
    giveId(doc, id);
    return [doc._id === id ? doc : Object.assign({ _id: id }, doc), id];
  }
  // Copies the defined fields of `from` (options may hold undefined).
  function assignDefined(to, from) {
    if (from === undefined || from === null) return to;
    checkDocument(from, 'options');
    for (const [k, v] of Object.entries(from)) if (v !== undefined) to[k] = v;
    return to;
  }
  // Moves the fields `names` of `options` into `statement`.
  function takeFields(options, names, statement) {
    for (const name of names) {
      if (options[name] !== undefined) statement[name] = options[name];
      delete options[name];
    }
    return statement;
  }
  // The statement-level options of update and delete (the rest are the
  // command's).
  const UPDATE_STATEMENT_FIELDS = ['upsert', 'arrayFilters', 'hint', 'collation', 'sort'];
  const DELETE_STATEMENT_FIELDS = ['hint', 'collation'];

  // The driver refuses an empty bulk write (mongosh's insertMany([])).
  function checkBatch(docs) {
    if (docs.length === 0) throw argError('Invalid BulkOperation, Batch cannot be empty');
  }

  function checkName(name, what) {
    if (typeof name !== 'string' || name.length === 0) throw argError(`${what} name must be a non-empty string`);
  }

  // A write error as the driver throws it for a one-statement write.
  // Its details come with it: errInfo, a duplicate key's keyPattern and
  // keyValue.
  function writeErrorOf(e) {
    const error = new MongoServerError(e.code, e.codeName, e.errmsg);
    for (const k of ['errInfo', 'keyPattern', 'keyValue']) {
      if (e[k] !== undefined) error[k] = e[k];
    }
    return error;
  }

  // ---- write commands, batched as the drivers batch them ----
  const kMaxWriteBatchSize = 100000;        // hello's maxWriteBatchSize
  const kMaxBatchBytes = 16 * 1024 * 1024;  // hello's maxBsonObjectSize
  const WRITE_FIELD = { insert: 'documents', update: 'updates', delete: 'deletes' };

  // Runs `ops` ([{kind, statement}], kind insert, update or delete) on
  // `coll` as insert, update and delete commands: a run of one kind in one
  // command, split at 100,000 statements or 16 MiB. Ordered stops at the
  // first write error. `options` are fields of every command. Returns the
  // counts, the write errors (index: the op's), the upserted ids and the
  // positions inserted.
  function runWrites(coll, ops, ordered, options) {
    const out = {
      nInserted: 0, nMatched: 0, nModified: 0, nRemoved: 0, upserted: [], writeErrors: [], inserted: [],
    };
    const batches = [];
    let last = null;
    ops.forEach((op, index) => {
      const size = ops.length > 1 ? native.bsonsize(op.statement) : 0;
      if (!last || last.kind !== op.kind || last.indexes.length === kMaxWriteBatchSize ||
          last.bytes + size > kMaxBatchBytes) {
        last = { kind: op.kind, statements: [], indexes: [], bytes: 0 };
        batches.push(last);
      }
      last.statements.push(op.statement);
      last.indexes.push(index);
      last.bytes += size;
    });
    for (const batch of batches) {
      const cmd = { [batch.kind]: coll._name, [WRITE_FIELD[batch.kind]]: batch.statements, ordered };
      const reply = coll._db._run(assignDefined(cmd, options));
      const failed = new Set();
      for (const e of reply.writeErrors || []) {
        failed.add(e.index);
        out.writeErrors.push(Object.assign({}, e, { index: batch.indexes[e.index], codeName: native.codeName(e.code) }));
      }
      if (batch.kind === 'insert') {
        out.nInserted += reply.n;
        const stop = ordered && failed.size > 0 ? Math.min(...failed) : Infinity;
        batch.indexes.forEach((index, i) => { if (i < stop && !failed.has(i)) out.inserted.push(index); });
      } else if (batch.kind === 'update') {
        const upserted = reply.upserted || [];
        out.nMatched += reply.n - upserted.length;
        out.nModified += reply.nModified;
        for (const u of upserted) out.upserted.push({ index: batch.indexes[u.index], _id: u._id });
      } else {
        out.nRemoved += reply.n;
      }
      if (ordered && out.writeErrors.length > 0) break;
    }
    return out;
  }

  // The collection part of a cursor's namespace ("db.a.b" -> "a.b"), what
  // getMore names.
  function collectionOfNs(ns) { return ns.slice(ns.indexOf('.') + 1); }
  // Reads a command cursor's reply to the end (getMore on its namespace).
  function drainCursor(db, reply) {
    const out = reply.cursor.firstBatch.slice();
    const collection = collectionOfNs(reply.cursor.ns);
    let id = reply.cursor.id;
    while (!isZeroId(id)) {
      const more = db._run({ getMore: id, collection });
      out.push(...more.cursor.nextBatch);
      id = more.cursor.id;
    }
    return out;
  }

  // The drivers' name for an index: its fields and values, joined by _.
  function indexName(keys) {
    return Object.entries(keys).map(([field, value]) =>
      `${field}_${isNumeric(value) ? Number(value) : value}`).join('_');
  }

  class Collection {
    constructor(db, name) {
      hidden(this, '_db', db);
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

    // -- the commands' statements --
    _updateStatement(filter, update, options, multi) {
      const opts = assignDefined({}, options);
      return [takeFields(opts, UPDATE_STATEMENT_FIELDS, { q: filter, u: update, multi }), opts];
    }
    _deleteStatement(filter, options, many) {
      const opts = assignDefined({}, options);
      return [takeFields(opts, DELETE_STATEMENT_FIELDS, { q: filter, limit: many ? 0 : 1 }), opts];
    }
    // One update or delete statement; its write error thrown.
    _writeOne(kind, [statement, options]) {
      const r = runWrites(this, [{ kind, statement }], true, options);
      if (r.writeErrors.length > 0) throw writeErrorOf(r.writeErrors[0]);
      return r;
    }
    _update(filter, update, options, multi) {
      const r = this._writeOne('update', this._updateStatement(filter, update, options, multi));
      return {
        acknowledged: true,
        insertedId: r.upserted.length > 0 ? r.upserted[0]._id : null,
        matchedCount: r.nMatched,
        modifiedCount: r.nModified,
        upsertedCount: r.upserted.length,
      };
    }
    _delete(filter, options, many) {
      return { acknowledged: true, deletedCount: this._writeOne('delete', this._deleteStatement(filter, options, many)).nRemoved };
    }
    // findAndModify with mongosh's option names: projection (fields),
    // returnDocument 'before'/'after' and returnNewDocument (new).
    _findAndModify(fields, options) {
      const opts = assignDefined({}, options);
      const cmd = Object.assign({ findAndModify: this._name }, fields);
      if (opts.projection !== undefined) cmd.fields = opts.projection;
      if (opts.returnDocument !== undefined) {
        if (opts.returnDocument !== 'before' && opts.returnDocument !== 'after') {
          throw argError("returnDocument must be either 'before' or 'after'");
        }
        cmd.new = opts.returnDocument === 'after';
      }
      if (opts.returnNewDocument !== undefined) cmd.new = opts.returnNewDocument;
      delete opts.projection;
      delete opts.returnDocument;
      delete opts.returnNewDocument;
      const value = this._db._run(Object.assign(cmd, opts)).value;
      return value === undefined ? null : value;
    }
    _count(filter, options) {
      const cmd = { count: this._name };
      if (filter !== undefined) cmd.query = filter;
      return this._db._run(assignDefined(cmd, options)).n;
    }
    _explain(command, verbosity) {
      return this._db._run({ explain: command, verbosity: verbosityOf(verbosity) });
    }
    _createIndexes(keyPatterns, options, commitQuorum) {
      const indexes = keyPatterns.map((key) => assignDefined({ key, name: indexName(key) }, options));
      const cmd = { createIndexes: this._name, indexes };
      if (commitQuorum !== undefined) cmd.commitQuorum = commitQuorum;
      this._db._run(cmd);
      return indexes.map((i) => i.name);
    }

    // -- CRUD, mongosh's API --
    insertOne(doc, options) {
      const [statement, id] = withId(doc);
      const r = runWrites(this, [{ kind: 'insert', statement }], true, options);
      if (r.writeErrors.length > 0) throw writeErrorOf(r.writeErrors[0]);
      return { acknowledged: true, insertedId: id };
    }
    insertMany(docs, options) {
      if (!Array.isArray(docs)) throw argError('insertMany needs an array of documents');
      checkBatch(docs);
      const opts = assignDefined({}, options);
      const ordered = opts.ordered === undefined ? true : opts.ordered;
      delete opts.ordered;
      const ids = [];
      const ops = docs.map((d) => {
        const [statement, id] = withId(d);
        ids.push(id);
        return { kind: 'insert', statement };
      });
      const r = runWrites(this, ops, ordered, opts);
      const insertedIds = {};
      for (const i of r.inserted) insertedIds[i] = ids[i];
      if (r.writeErrors.length > 0) {
        throw new MongoBulkWriteError(r.writeErrors, { insertedCount: r.nInserted, insertedIds });
      }
      return { acknowledged: true, insertedIds };
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
      const opts = assignDefined({}, options);
      const ordered = opts.ordered === undefined ? true : opts.ordered;
      delete opts.ordered;
      const ids = {};
      const ops = operations.map((op, index) => {
        checkDocument(op, 'operation');
        const names = Object.keys(op);
        if (names.length !== 1) throw argError('a bulkWrite operation has one field, its model name');
        const model = names[0];
        const args = op[model];
        checkDocument(args, model);
        const rest = Object.assign({}, args);
        const take = (name) => { const v = rest[name]; delete rest[name]; return v; };
        if (model === 'insertOne') {
          const [statement, id] = withId(take('document'));
          if (Object.keys(rest).length > 0) throw argError(`insertOne takes only a document, not '${Object.keys(rest)[0]}'`);
          ids[index] = id;
          return { kind: 'insert', statement };
        }
        if (model === 'updateOne' || model === 'updateMany' || model === 'replaceOne') {
          const statement = Object.assign({ q: take('filter'), u: take(model === 'replaceOne' ? 'replacement' : 'update'),
            multi: model === 'updateMany' }, rest);
          return { kind: 'update', statement };
        }
        if (model === 'deleteOne' || model === 'deleteMany') {
          return { kind: 'delete', statement: Object.assign({ q: take('filter'), limit: model === 'deleteOne' ? 1 : 0 }, rest) };
        }
        throw argError(`unknown bulkWrite operation '${model}'`);
      });
      const r = runWrites(this, ops, ordered, opts);
      const result = {
        acknowledged: true, insertedCount: r.nInserted, insertedIds: {}, matchedCount: r.nMatched,
        modifiedCount: r.nModified, deletedCount: r.nRemoved, upsertedCount: r.upserted.length, upsertedIds: {},
      };
      for (const i of r.inserted) result.insertedIds[i] = ids[i];
      for (const u of r.upserted) result.upsertedIds[u.index] = u._id;
      if (r.writeErrors.length > 0) {
        throw new MongoBulkWriteError(r.writeErrors.map((e) => Object.assign(e, { op: operations[e.index] })), result);
      }
      return result;
    }
    find(filter, projection, options) {
      const opts = Object.assign({}, options);
      if (projection !== undefined && projection !== null) opts.projection = projection;
      const cursor = new Cursor(this, filter, opts);
      if (opts.batchSize !== undefined) {
        delete cursor._opts.batchSize;
        cursor.batchSize(opts.batchSize);
      }
      return cursor;
    }
    // mongosh's aggregate(pipeline, options): the aggregate command; its
    // options are the command's fields (batchSize the cursor's).
    aggregate(pipeline, options) {
      if (!Array.isArray(pipeline)) throw argError('aggregate needs an array of stages');
      const opts = assignDefined({}, options);
      const cursor = new AggregationCursor(this, pipeline, opts);
      if (opts.batchSize !== undefined) {
        delete opts.batchSize;
        cursor.batchSize(options.batchSize);
      }
      return cursor._runIfWrites();
    }
    // mongosh's watch(pipeline, options): a change stream of this collection.
    watch(pipeline, options) {
      return new ChangeStreamCursor(this._db, this._name, this._name, pipeline, options);
    }
    // The drivers' findOne: a find of one document in a single batch.
    findOne(filter, projection, options) {
      const cursor = this.find(filter, projection, options).limit(-1);
      return cursor.hasNext() ? cursor.next() : null;
    }
    updateOne(filter, update, options) {
      checkUpdate(update);
      return this._update(filter, update, options, false);
    }
    updateMany(filter, update, options) {
      checkUpdate(update);
      return this._update(filter, update, options, true);
    }
    replaceOne(filter, replacement, options) {
      checkReplacement(replacement);
      return this._update(filter, replacement, options, false);
    }
    deleteOne(filter, options) { return this._delete(filter, options, false); }
    deleteMany(filter, options) { return this._delete(filter, options, true); }
    findOneAndUpdate(filter, update, options) {
      checkUpdate(update);
      return this._findAndModify({ query: filter, update }, options);
    }
    findOneAndReplace(filter, replacement, options) {
      checkReplacement(replacement);
      return this._findAndModify({ query: filter, update: replacement }, options);
    }
    findOneAndDelete(filter, options) {
      return this._findAndModify({ query: filter, remove: true }, options);
    }
    // The drivers' countDocuments: an aggregate, [$match, $skip, $limit,
    // $group {_id: 1, n: {$sum: 1}}]; skip and limit become stages, the
    // other options (hint, maxTimeMS, ...) the command's.
    countDocuments(filter, options) {
      const opts = assignDefined({}, options);
      const pipeline = [{ $match: filter === undefined ? {} : filter }];
      if (opts.skip !== undefined) pipeline.push({ $skip: opts.skip });
      if (opts.limit !== undefined) pipeline.push({ $limit: opts.limit });
      delete opts.skip;
      delete opts.limit;
      pipeline.push({ $group: { _id: 1, n: { $sum: 1 } } });
      const reply = this._db._run(assignDefined({ aggregate: this._name, pipeline, cursor: {} }, opts));
      const batch = reply.cursor.firstBatch;
      return batch.length === 0 ? 0 : batch[0].n;
    }
    estimatedDocumentCount(options) { return this._count(undefined, options); }
    distinct(field, filter, options) {
      checkName(field, 'field');
      const cmd = { distinct: this._name, key: field };
      if (filter !== undefined) cmd.query = filter;
      return this._db._run(assignDefined(cmd, options)).values;
    }

    // -- indexes --
    createIndex(keys, options, commitQuorum) {
      checkDocument(keys, 'index key pattern');
      return this._createIndexes([keys], options, commitQuorum)[0];
    }
    // All or none, as MongoDB's createIndexes: every spec is checked first.
    createIndexes(keyPatterns, options, commitQuorum) {
      if (!Array.isArray(keyPatterns)) throw argError('createIndexes needs an array of key patterns');
      keyPatterns.forEach((k) => checkDocument(k, 'index key pattern'));
      return this._createIndexes(keyPatterns, options, commitQuorum);
    }
    getIndexes() { return drainCursor(this._db, this._db._run({ listIndexes: this._name })); }
    getIndexSpecs() { return this.getIndexes(); }
    getIndexKeys() { return this.getIndexes().map((i) => i.key); }
    dropIndex(index) {
      if (index === '*') return this.dropIndexes();
      if (typeof index !== 'string') checkDocument(index, 'index');
      return this._db._run({ dropIndexes: this._name, index });
    }
    dropIndexes(indexes) {
      return this._db._run({ dropIndexes: this._name, index: indexes === undefined ? '*' : indexes });
    }
    // -- search indexes (mongosh's names): createSearchIndex(name?, type?,
    // definition) or ({name, type, definition}); returns the name. A model
    // without a type is Atlas Search's "search" (not supported by rockdoc).
    createSearchIndex(a, b, c) {
      let model;
      if (typeof a === 'string' && typeof b === 'string') model = { name: a, type: b, definition: c };
      else if (typeof a === 'string') model = { name: a, definition: b };
      else if (a !== null && typeof a === 'object' && a.definition !== undefined) model = a;
      else model = { definition: a };
      return this.createSearchIndexes([model])[0];
    }
    createSearchIndexes(models) {
      if (!Array.isArray(models)) throw argError('createSearchIndexes needs an array of index models');
      models.forEach((m) => checkDocument(m.definition, 'search index definition'));
      const reply = this._db._run({ createSearchIndexes: this._name, indexes: models });
      return reply.indexesCreated.map((i) => i.name);
    }
    getSearchIndexes(name) {
      const stage = name === undefined ? {} : { name };
      return this.aggregate([{ $listSearchIndexes: stage }]).toArray();
    }
    dropSearchIndex(name) {
      this._db._run({ dropSearchIndex: this._name, name });
    }
    updateSearchIndex(name, definition) {
      checkDocument(definition, 'search index definition');
      this._db._run({ updateSearchIndex: this._name, name, definition });
    }
    // mongosh's: collMod with index {name | keyPattern, hidden}; the reply
    // has hidden_old and hidden_new when the index changed.
    hideIndex(index) {
      return this._setHidden(index, true);
    }
    unhideIndex(index) {
      return this._setHidden(index, false);
    }
    _setHidden(index, hidden) {
      if (typeof index !== 'string') checkDocument(index, 'index');
      const which = typeof index === 'string' ? {name: index} : {keyPattern: index};
      return this._db._run({collMod: this._name, index: {...which, hidden}});
    }

    // -- the collection itself --
    drop() {
      this._db._run({ drop: this._name });
      return true;
    }
    renameCollection(newName, dropTarget) {
      checkName(newName, 'collection');
      return this._db.getSiblingDB('admin')._run({
        renameCollection: this._fullName, to: `${this._db.getName()}.${newName}`, dropTarget: !!dropTarget,
      });
    }
    // collStats through the command layer: counts, the documents' bytes,
    // RocksDB's estimates of storage and of each index.
    stats(scale) {
      const cmd = { collStats: this._name };
      if (scale !== undefined) cmd.scale = scale;
      return this._db._run(cmd);
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
    // validate(options), or the legacy validate(full).
    validate(options) {
      const cmd = { validate: this._name };
      if (typeof options === 'boolean') cmd.full = options;
      else assignDefined(cmd, options);
      return this._db._run(cmd);
    }
    explain(verbosity) { return new Explainable(this, verbosityOf(verbosity)); }
    // rockdoc's: this collection's query statistics ($queryStats).
    queryStats() { return this.aggregate([{ $queryStats: {} }]).toArray(); }
    // The schema advisor over this collection ({full, sample, unusedIndexDays}).
    advise(options) {
      return new AdviceReport(native.advise(this._db.getName(), { ...(options || {}), collection: this._name }));
    }
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
        const opts = assignDefined({}, options);
        const ordered = opts.ordered === undefined ? true : opts.ordered;
        delete opts.ordered;
        const r = runWrites(this, docs.map((d) => ({ kind: 'insert', statement: withId(d)[0] })), ordered, opts);
        return new BulkWriteResult({
          writeErrors: r.writeErrors.map((e) => ({ index: e.index, code: e.code, errmsg: e.errmsg })),
          writeConcernErrors: [],
          nInserted: r.nInserted,
          nUpserted: 0,
          nMatched: 0,
          nModified: 0,
          nRemoved: 0,
          upserted: [],
        });
      }
      const r = runWrites(this, [{ kind: 'insert', statement: withId(docs)[0] }], true, options);
      if (r.writeErrors.length > 0) {
        const e = r.writeErrors[0];
        return new WriteResult({ nInserted: 0, writeError: { code: e.code, errmsg: e.errmsg } });
      }
      return new WriteResult({ nInserted: 1 });
    }
    update(filter, update, upsertOrOptions, multiArg) {
      // The options object goes to the command without `multi`, which is
      // the statement's.
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
      if (!hasOperators(update) && multi) throw argError('multi update is not supported for replacement-style update');
      const [statement, opts] = this._updateStatement(filter, update, options, multi);
      const r = runWrites(this, [{ kind: 'update', statement }], true, opts);
      if (r.writeErrors.length > 0) {
        const e = r.writeErrors[0];
        return new WriteResult({ nMatched: 0, nUpserted: 0, nModified: 0, writeError: { code: e.code, errmsg: e.errmsg } });
      }
      const fields = { nMatched: r.nMatched, nUpserted: r.upserted.length, nModified: r.nModified };
      if (r.upserted.length > 0) fields._id = r.upserted[0]._id;
      return new WriteResult(fields);
    }
    save(doc) {
      checkDocument(doc, 'document');
      if (doc._id === undefined) return this.insert(doc);
      return this.update({ _id: doc._id }, doc, { upsert: true });
    }
    remove(filter, justOne) {
      const [one, options] = removeArgs(justOne);
      const [statement, opts] = this._deleteStatement(filter, options, !one);
      const r = runWrites(this, [{ kind: 'delete', statement }], true, opts);
      if (r.writeErrors.length > 0) {
        const e = r.writeErrors[0];
        return new WriteResult({ nRemoved: 0, writeError: { code: e.code, errmsg: e.errmsg } });
      }
      return new WriteResult({ nRemoved: r.nRemoved });
    }
    count(filter, options) { return this._count(filter, options); }
    // The legacy findAndModify: its argument is the command's fields.
    findAndModify(spec) {
      checkDocument(spec, 'findAndModify argument');
      if (spec.query === undefined) throw new MongoshInvalidInputError('Missing required property: "query"');
      const value = this._db._run(Object.assign({ findAndModify: this._name }, spec)).value;
      return value === undefined ? null : value;
    }
    ensureIndex(keys, options) {
      const existed = this._db.getCollectionNames().includes(this._name);
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

  // explain(): db.c.explain('executionStats').find({...}) and friends, as
  // the explain command of the command each method runs.
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
      const cmd = { count: this._coll._name };
      if (filter !== undefined) cmd.query = filter;
      return this._coll._explain(assignDefined(cmd, options), this._verbosity);
    }
    countDocuments(filter, options) { return this.count(filter === undefined ? {} : filter, options); }
    aggregate(pipeline, options) {
      if (!Array.isArray(pipeline)) throw argError('aggregate needs an array of stages');
      const opts = assignDefined({}, options);
      delete opts.batchSize;
      return this._coll._explain(assignDefined({ aggregate: this._coll._name, pipeline, cursor: {} }, opts),
        this._verbosity);
    }
    distinct(field, filter, options) {
      const cmd = { distinct: this._coll._name, key: field };
      if (filter !== undefined) cmd.query = filter;
      return this._coll._explain(assignDefined(cmd, options), this._verbosity);
    }
    _write(kind, [statement, options]) {
      const cmd = { [kind]: this._coll._name, [WRITE_FIELD[kind]]: [statement] };
      return this._coll._explain(Object.assign(cmd, options), this._verbosity);
    }
    update(filter, update, options) {
      const o = assignDefined({}, options);
      const multi = !!o.multi;
      delete o.multi;
      return this._write('update', this._coll._updateStatement(filter, update, o, multi));
    }
    updateOne(filter, update, options) {
      return this._write('update', this._coll._updateStatement(filter, update, options, false));
    }
    updateMany(filter, update, options) {
      return this._write('update', this._coll._updateStatement(filter, update, options, true));
    }
    remove(filter, justOne) {
      const [one, options] = removeArgs(justOne);
      return this._write('delete', this._coll._deleteStatement(filter, options, !one));
    }
    deleteOne(filter, options) {
      return this._write('delete', this._coll._deleteStatement(filter, options, false));
    }
    deleteMany(filter, options) {
      return this._write('delete', this._coll._deleteStatement(filter, options, true));
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
    // Runs a command on this database, through its session when it has
    // one. A failed command throws MongoServerError. The growth warnings a
    // write raised (rockdoc's `warnings` field of insert, update and
    // findAndModify replies) go to the error stream, one line each, as
    // mongosh prints a warning.
    _run(cmd) {
      const reply = this._session ? this._session._run(this._name, cmd) : native.runCommand(this._name, cmd);
      if (reply !== null && typeof reply === 'object' && Array.isArray(reply.warnings)) {
        for (const w of reply.warnings) native.writeErr(`Warning: ${w}\n`);
      }
      return reply;
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
    // mongosh's db.aggregate(pipeline, options): {aggregate: 1}, a pipeline
    // whose first stage ($documents) gives its documents.
    aggregate(pipeline, options) {
      if (!Array.isArray(pipeline)) throw argError('aggregate needs an array of stages');
      const opts = assignDefined({}, options);
      const cursor = new AggregationCursor(this.getCollection('$cmd.aggregate'), pipeline, opts);
      hidden(cursor, '_collectionless', true);
      if (opts.batchSize !== undefined) {
        delete opts.batchSize;
        cursor.batchSize(options.batchSize);
      }
      return cursor._runIfWrites();
    }
    // mongosh's db.watch(pipeline, options): the changes of this database.
    watch(pipeline, options) {
      return new ChangeStreamCursor(this, 1, this._name, pipeline, options);
    }
    getCollectionNames() {
      return this.getCollectionInfos({}, { nameOnly: true }).map((i) => i.name).sort();
    }
    // mongosh: a string names a command run with the value 1.
    runCommand(command) {
      return this._run(typeof command === 'string' ? { [command]: 1 } : command);
    }
    adminCommand(command) { return this.getSiblingDB('admin').runCommand(command); }
    hello() { return this.runCommand({ hello: 1 }); }
    isMaster() { return this.runCommand({ isMaster: 1 }); }
    serverBuildInfo() { return this.adminCommand({ buildInfo: 1 }); }
    // mongosh's db.getCollectionInfos(filter, {nameOnly, authorizedCollections}).
    getCollectionInfos(filter, options) {
      const cmd = { listCollections: 1, filter: filter === undefined ? {} : filter };
      return drainCursor(this, this._run(assignDefined(cmd, options)));
    }
    createCollection(name, options) {
      checkName(name, 'collection');
      this._run(assignDefined({ create: name }, options));
      return { ok: 1 };
    }
    // mongosh's db.createView(name, source, pipeline, options).
    createView(name, source, pipeline, options) {
      checkName(name, 'view');
      this._run(assignDefined({ create: name, viewOn: source, pipeline: pipeline === undefined ? [] : pipeline }, options));
      return { ok: 1 };
    }
    dropDatabase() {
      this._run({ dropDatabase: 1 });
      return { ok: 1, dropped: this._name };
    }
    stats(scale) {
      const cmd = { dbStats: 1 };
      if (scale !== undefined) cmd.scale = scale;
      return this.runCommand(cmd);
    }
    // The schema advisor over this database ({full, sample, unusedIndexDays}).
    advise(options) { return new AdviceReport(native.advise(this._name, options || {})); }
    // mongosh's profiler helpers: level 0, 1 or 2; options a slowms number
    // or {slowms, sampleRate, filter} (sampleRate 1 only, no filter).
    setProfilingLevel(level, options) {
      const cmd = { profile: level };
      if (typeof options === 'number') cmd.slowms = options;
      else if (options !== undefined) assignDefined(cmd, options);
      return this._run(cmd);
    }
    getProfilingStatus() {
      const { ok, ...status } = this._run({ profile: -1 });
      return status;
    }
    getProfilingLevel() { return this._run({ profile: -1 }).was; }
    // rockdoc's: this database's query statistics ($queryStats, of every
    // collection here), and forgetting all of them.
    queryStats() {
      const name = this._name;
      return this.getSiblingDB('admin').aggregate([{ $queryStats: {} }, { $match: { 'key.queryShape.cmdNs.db': name } }]).toArray();
    }
    clearQueryStats() { return this.adminCommand({ clearQueryStats: 1 }); }
    serverStatus(opts) { return this.adminCommand({ serverStatus: 1, ...(opts || {}) }); }
    // mongosh's db.currentOp(opts): $currentOp in admin (every user's
    // operations; opts true or {$all: true} asks for idle connections too,
    // which rockdoc refuses), the other fields of opts a $match.
    currentOp(opts) {
      const o = opts === undefined ? {} : opts;
      const all = typeof o === 'boolean' ? o : !!o.$all;
      const own = typeof o === 'boolean' ? false : !!o.$ownOps;
      const pipeline = [{ $currentOp: { allUsers: !own, idleConnections: all, truncateOps: false } }];
      if (typeof o === 'object') {
        const match = {};
        for (const k of Object.keys(o)) {
          if (k !== '$ownOps' && k !== '$all' && k !== '$truncateOps') match[k] = o[k];
        }
        pipeline.push({ $match: match });
      }
      return { inprog: this.getSiblingDB('admin').aggregate(pipeline).toArray(), ok: 1 };
    }
    killOp(opId) { return this.adminCommand({ killOp: 1, op: opId }); }
    // mongosh's db.listCommands(), printed as mongosh prints it: per
    // command its name, the flags that are true, and its API versions.
    listCommands() {
      const commands = this.runCommand({ listCommands: 1 }).commands;
      return new ShellText(Object.keys(commands).map((name) => {
        const c = commands[name];
        let line = `${name}: `;
        for (const k of Object.keys(c)) if (c[k] === true) line += ` ${k}`;
        if (Array.isArray(c.apiVersions) && c.apiVersions.length > 0) {
          line += `\nAPI Versions ${c.apiVersions.join(', ')}`;
        }
        return line;
      }).join('\n\n'));
    }
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
    getDBNames() {
      return native.runCommand('admin', { listDatabases: 1, nameOnly: true }).databases.map((d) => d.name);
    }
    getCollection(ns) {
      const dot = typeof ns === 'string' ? ns.indexOf('.') : -1;
      if (dot <= 0 || dot === ns.length - 1) throw argError('getCollection needs a namespace "db.collection"');
      return makeDb(ns.slice(0, dot)).getCollection(ns.slice(dot + 1));
    }
    // mongosh's db.getMongo().watch(pipeline, options): the changes of
    // every database but admin, config and local.
    watch(pipeline, options) {
      return new ChangeStreamCursor(makeDb('admin'), 1, `rockdoc:${config.path}`, pipeline, options,
        { allChangesForCluster: true });
    }
    // mongosh's startSession: a session for transactions or snapshot reads.
    startSession(options) {
      if (options !== undefined && !isPlainObject(options)) throw argError('startSession options must be an object');
      return new ClientSession(this, options);
    }
    toString() { return `rockdoc:${config.path}`; }
    [inspectSymbol]() { return `Mongo('rockdoc:${config.path}')`; }
  }

  // ---- sessions and transactions (mongosh's ClientSession) ----
  // The drivers' errors for a session's misuse, found before any command.
  class MongoTransactionError extends Error {
    constructor(message, code, codeName) {
      super(message);
      this.name = 'MongoTransactionError';
      if (code !== undefined) {
        this.code = code;
        this.codeName = codeName;
      }
    }
  }
  class MongoExpiredSessionError extends Error {
    constructor() {
      super('Cannot use a session that has ended');
      this.name = 'MongoExpiredSessionError';
    }
  }
  global.MongoTransactionError = MongoTransactionError;
  global.MongoExpiredSessionError = MongoExpiredSessionError;

  // A logical session as the drivers keep one: an lsid sent with each of its
  // commands, and the transaction state machine of the transactions spec
  // (none, starting, inProgress, committed, committedEmpty, aborted): the
  // first command of a transaction carries startTransaction (and the
  // transaction's readConcern), every one carries txnNumber and
  // autocommit: false; commitTransaction and abortTransaction are admin
  // commands. A snapshot session ({snapshot: true}) sends readConcern
  // snapshot with its commands: the command layer reads them all at the
  // point of the first, and refuses its writes.
  class ClientSession {
    constructor(mongo, options) {
      // The options are the driver's (client side): decoded from a table
      // of the names they have (natives.cc), unknown ones refused.
      const checked = native.checkSessionOptions(options);
      hidden(this, '_mongo', mongo);
      hidden(this, '_lsid', { id: global.UUID() });
      hidden(this, '_snapshot', checked.snapshot);
      hidden(this, '_defaults', (options && options.defaultTransactionOptions) || undefined);
      hidden(this, '_txnNumber', 0);
      hidden(this, '_txnOptions', undefined);
      hidden(this, '_state', 'none');
      hidden(this, '_ended', false);
    }
    _checkNotEnded() {
      if (this._ended) throw new MongoExpiredSessionError();
    }
    _transactionFields(cmd) {
      cmd.lsid = this._lsid;
      cmd.txnNumber = this._txnNumber;
      cmd.autocommit = false;
      return cmd;
    }
    // Runs a command of an operation in this session.
    _run(dbName, command) {
      this._checkNotEnded();
      const cmd = Object.assign({}, command, { lsid: this._lsid });
      if (this._state === 'starting' || this._state === 'inProgress') {
        // The transactions spec: an operation takes the transaction's
        // concerns and may not give its own (refused before it is sent, so
        // the transaction goes on).
        for (const concern of ['readConcern', 'writeConcern']) {
          if (command[concern] !== undefined) {
            throw new MongoTransactionError(`Cannot set ${concern} on an operation in a transaction; ` +
              'give it to startTransaction', 72, 'InvalidOptions');
          }
        }
        this._transactionFields(cmd);
        if (this._state === 'starting') {
          cmd.startTransaction = true;
          const rc = this._txnOptions && this._txnOptions.readConcern;
          if (rc !== undefined && rc !== null) cmd.readConcern = rc;
          this._state = 'inProgress';
        }
      } else if (this._state !== 'none') {
        this._state = 'none';  // a transaction ended; this operation is outside it
      }
      const name = Object.keys(command)[0];
      if (this._snapshot && name !== 'getMore' && name !== 'killCursors') cmd.readConcern = { level: 'snapshot' };
      return native.runCommand(dbName, cmd);
    }
    _endCommand(name) {
      const cmd = this._transactionFields({ [name]: 1 });
      const wc = this._txnOptions && this._txnOptions.writeConcern;
      if (wc !== undefined && wc !== null) cmd.writeConcern = wc;
      return native.runCommand('admin', cmd);
    }
    getDatabase(name) {
      checkName(name, 'database');
      return makeDb(name, this);
    }
    getClient() { return this._mongo; }
    get hasEnded() { return this._ended; }
    startTransaction(options) {
      this._checkNotEnded();
      if (this._snapshot) throw new MongoTransactionError('Transactions are not supported in snapshot sessions');
      if (this.inTransaction()) throw new MongoTransactionError('Transaction already in progress on this session.');
      const opts = options === undefined ? this._defaults : options;
      native.checkTransactionOptions(opts);
      this._txnOptions = opts;
      this._txnNumber++;
      this._state = 'starting';
    }
    commitTransaction() {
      this._checkNotEnded();
      switch (this._state) {
        case 'none': throw new MongoTransactionError('No transaction started');
        case 'aborted': throw new MongoTransactionError('Cannot call commitTransaction after calling abortTransaction');
        case 'starting':
        case 'committedEmpty':
          this._state = 'committedEmpty';  // nothing ran: nothing to commit
          return { ok: 1 };
        default:
          // inProgress, or committed (a commit may be sent again).
          this._state = 'committed';
          this._endCommand('commitTransaction');
          return { ok: 1 };
      }
    }
    abortTransaction() {
      this._checkNotEnded();
      switch (this._state) {
        case 'none': throw new MongoTransactionError('No transaction started');
        case 'committed':
        case 'committedEmpty':
          throw new MongoTransactionError('Cannot call abortTransaction after calling commitTransaction');
        case 'aborted': throw new MongoTransactionError('Cannot call abortTransaction twice');
        case 'starting':
          this._state = 'aborted';
          return { ok: 1 };
        default:
          this._state = 'aborted';
          // As the drivers: the abort's own errors are not the caller's (the
          // transaction is over either way).
          try { this._endCommand('abortTransaction'); } catch (e) { /* ignored, as the drivers do */ }
          return { ok: 1 };
      }
    }
    inTransaction() { return this._state === 'starting' || this._state === 'inProgress'; }
    endSession() {
      if (this._ended) return;
      if (this.inTransaction()) this.abortTransaction();
      native.runCommand('admin', { endSessions: [this._lsid] });
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
    get id() { return this._lsid; }
    toString() { return `ClientSession(${this._lsid.id.toString()})`; }
    [inspectSymbol]() { return `ClientSession { id: ${inspect(this._lsid.id)}${this._ended ? ', ended' : ''} }`; }
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
    [
      Collection, 'Collection',
      [
        'analyzeShardKey',
        'checkMetadataConsistency',
        'compactStructuredEncryptionData',
        'configureQueryAnalyzer',
        'convertToCapped',
        'createSearchIndex',
        'createSearchIndexes',
        'dropSearchIndex',
        'getPlanCache',
        'getSearchIndexes',
        'getShardDistribution',
        'getShardLocation',
        'getShardVersion',
        'initializeOrderedBulkOp',
        'initializeUnorderedBulkOp',
        'latencyStats',
        'mapReduce',
        'reIndex',
        'updateSearchIndex',
      ]
    ],
    [
      DB, 'Database',
      [
        'aggregate',
        'auth',
        'changeUserPassword',
        'checkMetadataConsistency',
        'cloneCollection',
        'cloneDatabase',
        'commandHelp',
        'copyDatabase',
        'createEncryptedCollection',
        'createRole',
        'createUser',
        'dropAllRoles',
        'dropAllUsers',
        'dropRole',
        'dropUser',
        'fsyncLock',
        'fsyncUnlock',
        'getLastError',
        'getLastErrorObj',
        'getLogComponents',
        'getReplicationInfo',
        'getRole',
        'getRoles',
        'getUser',
        'getUsers',
        'grantPrivilegesToRole',
        'grantRolesToRole',
        'grantRolesToUser',
        'logout',
        'printCollectionStats',
        'printReplicationInfo',
        'printSecondaryReplicationInfo',
        'printShardingStatus',
        'printSlaveReplicationInfo',
        'revokePrivilegesFromRole',
        'revokeRolesFromRole',
        'revokeRolesFromUser',
        'rotateCertificates',
        'serverBits',
        'serverCmdLineOpts',
        'setLogLevel',
        'setSecondaryOk',
        'shutdownServer',
        'sql',
        'updateRole',
        'updateUser',
      ]
    ],
    [
      Cursor, 'Cursor',
      [
        'addOption',
        'maxAwaitTimeMS',
        'maxScan',
        'oplogReplay',
        'tailable',
      ]
    ],
    [
      Explainable, 'Explainable',
      [
        'estimatedDocumentCount',
        'findAndModify',
        'findOneAndDelete',
        'findOneAndReplace',
        'findOneAndUpdate',
        'mapReduce',
      ]
    ],
    [
      Mongo, 'Mongo',
      [
        'bulkWrite',
        'close',
        'convertShardKeyToHashed',
        'getClientEncryption',
        'getDBs',
        'getKeyVault',
        'getReadConcern',
        'getReadPref',
        'getReadPrefMode',
        'getReadPrefTagSet',
        'getURI',
        'getWriteConcern',
        'isCausalConsistency',
        'setCausalConsistency',
        'setReadConcern',
        'setReadPref',
        'setSecondaryOk',
        'setSlaveOk',
        'setWriteConcern',
      ]
    ],
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
  // mongosh's convertShardKeyToHashed(value): the key a hashed index stores
  // for the value, from the server's own hash ($toHashedIndexKey).
  global.convertShardKeyToHashed = function convertShardKeyToHashed(value) {
    if (arguments.length !== 1) throw argError('convertShardKeyToHashed needs one value');
    const [{ out }] = global.db.aggregate([
      { $documents: [{}] },
      { $project: { _id: 0, out: { $toHashedIndexKey: { $literal: value } } } },
    ]).toArray();
    return out;
  };
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
    '  convertShardKeyToHashed(value)   the key a hashed index stores for a value',
    '',
    'Ctrl-C stops a running statement.',
  ].join('\n');
  const DB_HELP = [
    'Database methods:',
    '  db.getName()  db.getSiblingDB(name)  db.getCollection(name)  db.getCollectionNames()',
    '  db.createCollection(name, options)  db.dropDatabase()  db.stats()',
    '  db.advise({full, sample, unusedIndexDays})   the schema advisor (also db.c.advise())',
    '  db.serverStatus()  db.currentOp(filter)  db.killOp(opid)  db.listCommands()  db.adminCommand(cmd)',
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
    '  createIndex(keys, {name, unique, sparse, partialFilterExpression, expireAfterSeconds, hidden})  createIndexes([keys])',
    '  getIndexes()  dropIndex(nameOrKeys)  dropIndexes()  hideIndex(nameOrKeys)  unhideIndex(nameOrKeys)',
    '  drop()  renameCollection(name)  stats()  validate()  explain(verbosity).find(...)',
    'Legacy: insert  update(q, u, {upsert, multi})  save  remove(q, justOne)  count',
    '  findAndModify({query, update|remove, sort, new, fields, upsert})  ensureIndex',
  ].join('\n');
  const CURSOR_HELP = [
    'Cursor methods:',
    '  sort(spec)  skip(n)  limit(n)  project(spec)  hint(index)  batchSize(n)',
    '  hasNext()  next()  toArray()  forEach(fn)  map(fn)  itcount()  count()  size()',
    '  explain(verbosity)  pretty()  close()',
    '  observe(callbacks)  a live query of the find (rockdoc): LiveQuery.help()',
  ].join('\n');
  const CHANGE_STREAM_HELP = [
    'ChangeStreamCursor methods (db.c.watch(), db.watch(), db.getMongo().watch()):',
    '  tryNext()  the next event, or null after one wait of maxAwaitTimeMS',
    '  hasNext()  next()  forEach(fn)  block until an event comes',
    '  getResumeToken()  isClosed()  close()  map(fn)  itcount()  disableBlockWarnings()',
  ].join('\n');
  // `.help`: the REPL's own commands too (Node's, as mongosh lists them).
  const REPL_HELP = [
    'REPL commands:',
    '  .help                            this help',
    '  .exit                            leave the shell',
    '  Tab                              complete a collection, method, command or $operator',
    '  Up/Down                          recall history (~/.rockdoc_history)',
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
    if (value instanceof ChangeStreamCursor) {
      lastCursor = value;
      native.write(toJsonLine(String(value)) + '\n');
      return;
    }
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
    if (value instanceof ChangeStreamCursor) {  // mongosh prints its name; "it" reads it
      lastCursor = value;
      native.write(`${value}\n`);
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
    const names = theMongo.getDBNames();
    const rows = names.map((name) => {
      const database = makeDb(name);
      const collections = database.getCollectionNames();
      let documents = 0;
      for (const c of collections) documents += database.getCollection(c).estimatedDocumentCount();
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

  // ---- completion: the REPL's Tab, as mongosh completes ----
  // After `db.` the collection names and the database's methods, after
  // `db.<collection>.` the collection's methods, after a call that returns
  // a cursor (`db.c.find(...).`) the cursor's methods, a word starting
  // with `$` the operators that fit where it stands (stages at a pipeline's
  // top level, update operators in an update's second argument, query
  // operators in a filter, expression operators and accumulators inside a
  // stage), `show ` and `use ` their arguments, and other words the shell's
  // commands and globals. Each completion is the whole line with its last
  // word completed.
  const QUERY_OPERATORS = ['$all', '$and', '$bitsAllClear', '$bitsAllSet', '$bitsAnyClear',
    '$bitsAnySet', '$comment', '$elemMatch', '$eq', '$exists', '$expr', '$gt', '$gte', '$in',
    '$jsonSchema', '$lt', '$lte', '$mod', '$ne', '$nin', '$nor', '$not', '$options', '$or',
    '$regex', '$size', '$type'];
  const UPDATE_OPERATORS = ['$addToSet', '$bit', '$currentDate', '$each', '$inc', '$max', '$min',
    '$mul', '$pop', '$position', '$pull', '$pullAll', '$push', '$rename', '$set', '$setOnInsert',
    '$slice', '$sort', '$unset'];
  const STAGES = ['$addFields', '$bucket', '$bucketAuto', '$collStats', '$count', '$densify',
    '$documents', '$facet', '$fill', '$graphLookup', '$group', '$indexStats', '$limit', '$lookup',
    '$match', '$merge', '$out', '$project', '$queryStats', '$redact', '$replaceRoot',
    '$replaceWith', '$sample', '$set', '$setWindowFields', '$skip', '$sort', '$sortByCount',
    '$unionWith', '$unset', '$unwind'];
  const EXPRESSION_OPERATORS = ['$abs', '$add', '$addToSet', '$allElementsTrue', '$and',
    '$anyElementTrue', '$arrayElemAt', '$arrayToObject', '$avg', '$bottom', '$bottomN', '$ceil',
    '$cmp', '$concat', '$concatArrays', '$cond', '$convert', '$dateAdd', '$dateDiff',
    '$dateFromParts', '$dateFromString', '$dateSubtract', '$dateToParts', '$dateToString',
    '$dateTrunc', '$dayOfMonth', '$dayOfWeek', '$dayOfYear', '$divide', '$eq', '$exp', '$filter',
    '$first', '$firstN', '$floor', '$getField', '$gt', '$gte', '$hour', '$ifNull', '$in',
    '$indexOfArray', '$indexOfBytes', '$indexOfCP', '$isArray', '$isNumber', '$last', '$lastN',
    '$let', '$literal', '$ln', '$log', '$log10', '$lt', '$lte', '$ltrim', '$map', '$max', '$maxN',
    '$mergeObjects', '$millisecond', '$min', '$minN', '$minute', '$mod', '$month', '$multiply',
    '$ne', '$not', '$objectToArray', '$or', '$pow', '$push', '$range', '$reduce', '$regexFind',
    '$regexFindAll', '$regexMatch', '$replaceAll', '$replaceOne', '$reverseArray', '$round',
    '$rtrim', '$second', '$setDifference', '$setEquals', '$setField', '$setIntersection',
    '$setIsSubset', '$setUnion', '$size', '$slice', '$sortArray', '$split', '$sqrt',
    '$stdDevPop', '$stdDevSamp', '$strLenBytes', '$strLenCP', '$strcasecmp', '$substr',
    '$substrBytes', '$substrCP', '$subtract', '$sum', '$switch', '$toBool', '$toDate',
    '$toDecimal', '$toDouble', '$toInt', '$toLong', '$toLower', '$toObjectId', '$toString',
    '$toUpper', '$top', '$topN', '$trim', '$trunc', '$type', '$week', '$year', '$zip'];
  const UPDATE_METHODS = new Set(['updateOne', 'updateMany', 'update', 'findOneAndUpdate']);
  const CURSOR_CALLS = new Set(['find', 'aggregate', 'sort', 'skip', 'limit', 'project',
    'projection', 'hint', 'batchSize', 'maxTimeMS', 'comment', 'map', 'pretty', 'allowDiskUse']);
  function methodNames(proto) {
    const names = new Set();
    for (let p = proto; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      for (const n of Object.getOwnPropertyNames(p)) {
        if (n !== 'constructor' && n !== 'toString' && !n.startsWith('_') && typeof p[n] === 'function') names.add(n);
      }
    }
    return [...names];
  }
  // The open brackets before the end of `text` (strings skipped), each with
  // the name called when it is a '(' and its top-level commas so far.
  function openBrackets(text) {
    const stack = [];
    let quote = null;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = null;
        continue;
      }
      if (c === '"' || c === "'" || c === '`') {
        quote = c;
      } else if (c === '(' || c === '[' || c === '{') {
        const name = c === '(' ? (/([\w$]+)\s*$/.exec(text.slice(0, i)) || [])[1] : undefined;
        stack.push({ c, name, commas: 0 });
      } else if (c === ')' || c === ']' || c === '}') {
        stack.pop();
      } else if (c === ',' && stack.length > 0) {
        stack[stack.length - 1].commas++;
      }
    }
    return stack;
  }
  function operatorsAt(before) {
    const stack = openBrackets(before);
    for (let i = stack.length - 1; i >= 0; i--) {
      if (stack[i].c !== '(' || !stack[i].name) continue;
      const inner = stack.slice(i + 1).map((b) => b.c).join('');
      if (stack[i].name === 'aggregate') return inner === '[{' ? STAGES : EXPRESSION_OPERATORS.concat(QUERY_OPERATORS);
      if (UPDATE_METHODS.has(stack[i].name) && stack[i].commas === 1) {
        return inner === '{' ? UPDATE_OPERATORS : inner === '[{' ? STAGES : EXPRESSION_OPERATORS;
      }
      return QUERY_OPERATORS;
    }
    return QUERY_OPERATORS.concat(UPDATE_OPERATORS, STAGES);
  }
  // The member chain before the last word: `db.c.find({}).so` gives
  // ['db', 'c', 'find()'] and 'so'; null when the line ends otherwise.
  function trailingChain(line) {
    let k = line.length;
    while (k > 0 && /[\w$]/.test(line[k - 1])) k--;
    const start = k;
    const chain = [];
    while (k > 0 && line[k - 1] === '.') {
      k--;
      let call = false;
      if (line[k - 1] === ')') {
        let depth = 0;
        let m = k - 1;
        for (; m >= 0; m--) {
          if (line[m] === ')') depth++;
          else if (line[m] === '(' && --depth === 0) break;
        }
        if (m < 0) return null;
        k = m;
        call = true;
      }
      const end = k;
      while (k > 0 && /[\w$]/.test(line[k - 1])) k--;
      if (k === end) return null;
      chain.unshift(line.slice(k, end) + (call ? '()' : ''));
    }
    return { chain, start, head: k };
  }
  // What a chain is: a database, a collection or a cursor (else undefined),
  // and the database object when it is one.
  function chainType(chain) {
    if (chain[0].endsWith('()')) return {};
    let value = Object.prototype.hasOwnProperty.call(global, chain[0]) ? global[chain[0]] : undefined;
    let type = value instanceof DB ? 'db' : value instanceof Collection ? 'coll' : value instanceof Cursor ? 'cursor'
      : value instanceof ChangeStreamCursor ? 'changeStream' : undefined;
    for (const link of chain.slice(1)) {
      const call = link.endsWith('()');
      const name = call ? link.slice(0, -2) : link;
      value = undefined;
      if (type === 'db') {
        type = call ? (name === 'getSiblingDB' || name === 'getSisterDB' ? 'db' : name === 'getCollection' ? 'coll'
          : name === 'watch' ? 'changeStream' : undefined)
          : (name in DB.prototype ? undefined : 'coll');
      } else if (type === 'coll') {
        type = call ? (name === 'find' || name === 'aggregate' ? 'cursor' : name === 'watch' ? 'changeStream' : undefined)
          : (name in Collection.prototype ? undefined : 'coll');
      } else if (type === 'cursor') {
        type = call && CURSOR_CALLS.has(name) ? 'cursor' : undefined;
      } else {
        return {};
      }
    }
    return { type, value };
  }
  function complete(line) {
    let candidates = [];
    let start;
    const command = /^(\s*)(show|use)\s+(\w*)$/.exec(line);
    const found = trailingChain(line);
    if (command) {
      start = line.length - command[3].length;
      candidates = command[2] === 'show' ? ['collections', 'databases', 'dbs', 'tables'] : theMongo.getDBNames();
    } else if (found === null) {
      return [];
    } else if (line[found.start] === '$') {
      start = found.start;
      candidates = operatorsAt(line.slice(0, start));
    } else if (found.chain.length > 0) {
      start = found.start;
      const { type, value } = chainType(found.chain);
      if (type === 'db') {
        candidates = methodNames(DB.prototype);
        if (value !== undefined) candidates = candidates.concat(value.getCollectionNames());
      } else if (type === 'coll') {
        candidates = methodNames(Collection.prototype);
      } else if (type === 'changeStream') {
        candidates = methodNames(ChangeStreamCursor.prototype);
      } else if (type === 'cursor') {
        candidates = methodNames(found.chain[found.chain.length - 1] === 'aggregate()' ? AggregationCursor.prototype : Cursor.prototype)
          .filter((n) => found.chain[found.chain.length - 1] !== 'aggregate()' || typeof AggregationCursor.prototype[n] === 'function');
      }
    } else if (found.start === line.length) {
      return [];  // no word begun: nothing to complete
    } else {
      start = found.start;
      candidates = Object.getOwnPropertyNames(global).filter((n) => !n.startsWith('_') && /^[\w$]+$/.test(n));
      if (line.slice(0, start).trim() === '') candidates = candidates.concat(['use', 'show', 'it', 'exit', 'quit', 'help']);
    }
    const word = line.slice(start);
    const out = [...new Set(candidates)].filter((c) => c.startsWith(word)).sort();
    return out.map((c) => line.slice(0, start) + c);
  }

  Object.defineProperty(global, '__shell', {
    value: Object.freeze({
      display,
      formatError,
      complete(line) { return complete(String(line)).join('\n'); },
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
        // A change stream's page: the events there now (mongosh's tryNext loop).
        if (lastCursor instanceof ChangeStreamCursor) {
          if (lastCursor.isClosed()) return new ShellText('no cursor');
          const page = lastCursor._page(config.batchSize);
          return page.length > 0 ? page : new ShellText('');
        }
        if (lastCursor === null || !lastCursor.hasNext()) return new ShellText('no cursor');
        return lastCursor;
      },
      help(topic) {
        if (topic === '.') return new ShellText(`${SHELL_HELP}\n\n${REPL_HELP}`);
        return new ShellText(SHELL_HELP);
      },
    }),
  });
})(globalThis);

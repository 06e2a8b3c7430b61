'use strict';
// The driver's ClientSession: an lsid on every command it is given to, and
// transactions as the driver runs them (txnNumber, autocommit: false,
// startTransaction on the first command; commitTransaction and
// abortTransaction on admin; withTransaction's retries on the
// TransientTransactionError and UnknownTransactionCommitResult labels, for
// up to 120 s as the driver). causalConsistency is accepted as it holds by
// construction: one node, and every read sees the writes acknowledged
// before it.
const { EventEmitter } = require('events');
const { Long, UUID } = require('bson');
const mongodb = require('mongodb');
const { checkOptions } = require('./errors');

const { MongoTransactionError, MongoAPIError } = mongodb;

const TRANSACTION_OPTIONS = new Set(['readConcern', 'writeConcern', 'readPreference',
                                     'maxCommitTimeMS']);
const SESSION_OPTIONS = new Set(['causalConsistency', 'defaultTransactionOptions', 'snapshot']);
const WITH_TRANSACTION_LIMIT_MS = 120000;

// The one node, the primary, serves every read preference but secondary
// (as a replica set of one would); secondary is refused, never ignored.
function checkReadPreference(readPreference) {
  const mode = typeof readPreference === 'string' ? readPreference
      : readPreference && readPreference.mode;
  if (mode === 'secondary') {
    throw new MongoAPIError('read preference secondary is not supported by rockdoc (one node, ' +
                            'the primary, serves every read)');
  }
}

class ClientSession extends EventEmitter {
  constructor(client, options) {
    super();
    options = checkOptions('startSession', options, SESSION_OPTIONS);
    if (options.snapshot) throw new MongoAPIError('snapshot sessions are not supported by rockdoc');
    this.client = client;
    this.id = { id: new UUID() };
    this.defaultTransactionOptions = checkOptions('defaultTransactionOptions',
                                                  options.defaultTransactionOptions,
                                                  TRANSACTION_OPTIONS);
    this.hasEnded = false;
    this._txnNumber = 0;
    this._state = 'none';  // starting, in_progress, committed, aborted
    this._txnOptions = {};
  }

  inTransaction() { return this._state === 'starting' || this._state === 'in_progress'; }
  get transaction() { return { state: this._state, options: this._txnOptions }; }

  _checkNotEnded() {
    if (this.hasEnded) throw new MongoAPIError('Cannot use a session that has ended');
  }

  // What the session adds to a command it runs.
  _apply(command) {
    this._checkNotEnded();
    command.lsid = this.id;
    if (!this.inTransaction()) return;
    command.txnNumber = Long.fromNumber(this._txnNumber);
    command.autocommit = false;
    if (this._state === 'starting') {
      command.startTransaction = true;
      if (this._txnOptions.readConcern) command.readConcern = this._txnOptions.readConcern;
      this._state = 'in_progress';
    }
  }

  startTransaction(options) {
    this._checkNotEnded();
    if (this.inTransaction()) throw new MongoTransactionError('Transaction already in progress');
    options = checkOptions('startTransaction', options, TRANSACTION_OPTIONS);
    checkReadPreference({ ...this.defaultTransactionOptions, ...options }.readPreference);
    this._txnOptions = { ...this.defaultTransactionOptions, ...options };
    this._txnNumber++;
    this._state = 'starting';
  }

  async _end(name) {
    const command = { [name]: 1, lsid: this.id, txnNumber: Long.fromNumber(this._txnNumber),
                      autocommit: false };
    const wc = this._txnOptions.writeConcern;
    if (wc) command.writeConcern = wc;
    if (this._txnOptions.maxCommitTimeMS && name === 'commitTransaction') {
      command.maxTimeMS = this._txnOptions.maxCommitTimeMS;
    }
    await this.client._command('admin', command, {});
  }

  async commitTransaction() {
    if (this._state === 'none') throw new MongoTransactionError('No transaction started');
    if (this._state === 'aborted') {
      throw new MongoTransactionError('Cannot call commitTransaction after calling abortTransaction');
    }
    if (this._state === 'starting') {  // nothing ran: nothing to commit
      this._state = 'committed';
      return;
    }
    try {
      await this._end('commitTransaction');
    } finally {
      this._state = 'committed';
    }
  }

  async abortTransaction() {
    if (this._state === 'none') throw new MongoTransactionError('No transaction started');
    if (this._state === 'committed') {
      throw new MongoTransactionError('Cannot call abortTransaction after calling commitTransaction');
    }
    if (this._state === 'aborted') {
      throw new MongoTransactionError('Cannot call abortTransaction twice');
    }
    const ran = this._state === 'in_progress';
    this._state = 'aborted';
    if (ran) {
      try {
        await this._end('abortTransaction');
      } catch {}  // as the driver: an abort's failure is not the caller's
    }
  }

  async withTransaction(fn, options) {
    const started = Date.now();
    const timeLeft = () => Date.now() - started < WITH_TRANSACTION_LIMIT_MS;
    for (;;) {
      this.startTransaction(options);
      let result;
      try {
        result = await fn(this);
      } catch (e) {
        if (this.inTransaction()) await this.abortTransaction();
        if (e instanceof mongodb.MongoError && e.hasErrorLabel('TransientTransactionError') &&
            timeLeft()) {
          continue;
        }
        throw e;
      }
      if (!this.inTransaction()) return result;  // the callback committed or aborted
      for (;;) {
        try {
          await this._end('commitTransaction');
          this._state = 'committed';
          return result;
        } catch (e) {
          const labelled = (label) => e instanceof mongodb.MongoError && e.hasErrorLabel(label);
          if (labelled('UnknownTransactionCommitResult') && timeLeft()) continue;
          this._state = 'aborted';
          if (labelled('TransientTransactionError') && timeLeft()) break;
          throw e;
        }
      }
    }
  }

  async endSession() {
    if (this.hasEnded) return;
    if (this.inTransaction()) await this.abortTransaction();
    this.hasEnded = true;
    this.client._sessions.delete(this);
    this.emit('ended', this);
  }

  [Symbol.asyncDispose]() { return this.endSession(); }
}

module.exports = { ClientSession };

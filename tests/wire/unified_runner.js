// The unified test format's runner through the official Node.js driver
// (tests/wire/): what the spec runners share (crud_unified_node.js,
// change_streams_unified_node.js). The format's rules followed here: a
// root-level document may have fields the expected one lacks, an embedded
// one may not; numbers compare by value whatever their type;
// $$unsetOrMatches, $$exists and $$type; expectError's isError,
// isClientError, errorContains, errorCode, errorCodeName,
// errorLabelsContain/Omit and expectResult; expectEvents' commandStartedEvent
// (command, commandName, databaseName; ignoreExtraEvents) of the clients that
// observe them; outcome compared exactly, in _id order; runOnRequirements'
// topologies and server versions.
'use strict';
const { requireDriver } = require('./driver_harness.js');

const mongodb = requireDriver();
const { MongoClient, MongoServerError, ObjectId, Binary, Long, Decimal128, Timestamp } = mongodb;
const { EJSON } = mongodb.BSON;

// ---- matching ----

function isNumber(v) {
  return typeof v === 'number' || typeof v === 'bigint' || v instanceof Long ||
         v instanceof Decimal128 || (v && v._bsontype === 'Double') || (v && v._bsontype === 'Int32');
}
function numberOf(v) {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Long) return v.toNumber();
  if (v instanceof Decimal128) return Number(v.toString());
  return Number(v.valueOf());
}
function isPlainDocument(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date) &&
         !v._bsontype && !(v instanceof RegExp);
}
const kTypeNames = {
  double: (v) => typeof v === 'number' && !Number.isInteger(v),
  int: (v) => typeof v === 'number' && Number.isInteger(v) && Math.abs(v) < 2 ** 31,
  long: (v) => v instanceof Long || (typeof v === 'number' && Number.isInteger(v)),
  string: (v) => typeof v === 'string',
  object: (v) => isPlainDocument(v),
  array: (v) => Array.isArray(v),
  objectId: (v) => v instanceof ObjectId,
  bool: (v) => typeof v === 'boolean',
  date: (v) => v instanceof Date,
  null: (v) => v === null,
  binData: (v) => v instanceof Binary,
  timestamp: (v) => v instanceof Timestamp,
  decimal: (v) => v instanceof Decimal128,
};

// Throws when `actual` does not match `expected`; `root`: extra fields allowed.
function match(expected, actual, where, root) {
  if (isPlainDocument(expected)) {
    const keys = Object.keys(expected);
    if (keys.length === 1 && keys[0].startsWith('$$')) return special(keys[0], expected[keys[0]], actual, where);
    if (!isPlainDocument(actual)) throw new Error(`${where}: expected a document, got ${show(actual)}`);
    for (const k of keys) {
      const e = expected[k];
      if (isPlainDocument(e) && Object.keys(e).length === 1) {
        const op = Object.keys(e)[0];
        if (op === '$$unsetOrMatches' && (!(k in actual) || actual[k] === undefined)) continue;
        if (op === '$$exists') {
          if ((k in actual && actual[k] !== undefined) !== e[op]) throw new Error(`${where}.${k}: $$exists ${e[op]}`);
          continue;
        }
      }
      if (!(k in actual)) throw new Error(`${where}.${k}: missing`);
      match(e, actual[k], `${where}.${k}`, false);
    }
    if (!root) {
      for (const k of Object.keys(actual)) {
        if (!(k in expected) && actual[k] !== undefined) throw new Error(`${where}.${k}: not expected`);
      }
    }
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) throw new Error(`${where}: expected an array, got ${show(actual)}`);
    if (actual.length !== expected.length) {
      throw new Error(`${where}: ${actual.length} elements, expected ${expected.length}: ${show(actual)}`);
    }
    expected.forEach((e, i) => match(e, actual[i], `${where}[${i}]`, false));
    return;
  }
  if (isNumber(expected)) {
    if (!isNumber(actual) || numberOf(actual) !== numberOf(expected)) {
      throw new Error(`${where}: ${show(actual)}, expected ${show(expected)}`);
    }
    return;
  }
  if (EJSON.stringify(expected) !== EJSON.stringify(actual)) {
    throw new Error(`${where}: ${show(actual)}, expected ${show(expected)}`);
  }
}

function special(op, operand, actual, where) {
  switch (op) {
    case '$$unsetOrMatches':
      if (actual === undefined) return;
      return match(operand, actual, where, true);
    case '$$exists':
      if ((actual !== undefined) !== operand) throw new Error(`${where}: $$exists ${operand}`);
      return;
    case '$$type': {
      const names = Array.isArray(operand) ? operand : [operand];
      if (!names.some((n) => kTypeNames[n] && kTypeNames[n](actual))) {
        throw new Error(`${where}: ${show(actual)} is not of type ${names.join('|')}`);
      }
      return;
    }
    default:
      throw new Error(`${where}: the runner does not know ${op}`);
  }
}

function show(v) {
  try {
    return EJSON.stringify(v, { relaxed: true });
  } catch (e) {
    return String(v);
  }
}

// ---- operations ----

// The driver's result as the unified format names its fields.
function resultOf(name, r) {
  switch (name) {
    case 'insertOne': return { insertedId: r.insertedId };
    case 'insertMany': return { insertedIds: r.insertedIds };
    case 'updateOne': case 'updateMany': case 'replaceOne': {
      const out = { matchedCount: r.matchedCount, modifiedCount: r.modifiedCount, upsertedCount: r.upsertedCount };
      if (r.upsertedId !== null && r.upsertedId !== undefined) out.upsertedId = r.upsertedId;
      return out;
    }
    case 'deleteOne': case 'deleteMany': return { deletedCount: r.deletedCount };
    case 'bulkWrite': return bulkResult(r);
    default: return r;
  }
}
function bulkResult(r) {
  return {
    deletedCount: r.deletedCount, insertedCount: r.insertedCount, matchedCount: r.matchedCount,
    modifiedCount: r.modifiedCount, upsertedCount: r.upsertedCount,
    insertedIds: r.insertedIds, upsertedIds: r.upsertedIds,
  };
}

const kReturnDocument = { Before: 'before', After: 'after' };

async function run(client, entities, op) {
  const target = entities[op.object];
  if (target === undefined) throw new Error(`unknown entity ${op.object}`);
  const a = op.arguments || {};
  const opts = (...names) => {
    const o = {};
    for (const n of names) if (a[n] !== undefined) o[n] = a[n];
    return o;
  };
  const known = new Set(['filter', 'document', 'documents', 'update', 'replacement', 'pipeline',
    'requests', 'fieldName', 'sort', 'skip', 'limit', 'batchSize', 'projection', 'upsert',
    'arrayFilters', 'returnDocument', 'ordered', 'allowDiskUse', 'maxTimeMS', 'collection',
    'viewOn', 'batchSize', 'comment', 'fullDocument', 'fullDocumentBeforeChange', 'showExpandedEvents',
    'command', 'commandName', 'keys', 'name', 'to', 'dropTarget']);
  for (const k of Object.keys(a)) if (!known.has(k)) throw new Error(`argument ${k} not supported by this runner`);
  switch (op.name) {
    case 'find': return target.find(a.filter, opts('sort', 'skip', 'limit', 'batchSize', 'projection')).toArray();
    case 'findOne': return target.findOne(a.filter, opts('sort', 'skip', 'projection'));
    case 'insertOne': return target.insertOne(a.document);
    case 'insertMany': return target.insertMany(a.documents, opts('ordered'));
    case 'updateOne': return target.updateOne(a.filter, a.update, opts('upsert', 'arrayFilters', 'sort'));
    case 'updateMany': return target.updateMany(a.filter, a.update, opts('upsert', 'arrayFilters'));
    case 'replaceOne': return target.replaceOne(a.filter, a.replacement, opts('upsert', 'sort'));
    case 'deleteOne': return target.deleteOne(a.filter);
    case 'deleteMany': return target.deleteMany(a.filter);
    case 'findOneAndUpdate': case 'findOneAndReplace': case 'findOneAndDelete': {
      const o = opts('projection', 'sort', 'upsert', 'arrayFilters');
      if (a.returnDocument) o.returnDocument = kReturnDocument[a.returnDocument];
      if (op.name === 'findOneAndUpdate') return target.findOneAndUpdate(a.filter, a.update, o);
      if (op.name === 'findOneAndReplace') return target.findOneAndReplace(a.filter, a.replacement, o);
      return target.findOneAndDelete(a.filter, o);
    }
    case 'countDocuments': return target.countDocuments(a.filter, opts('skip', 'limit'));
    case 'estimatedDocumentCount': return target.estimatedDocumentCount(opts('maxTimeMS'));
    case 'count': {
      // The count command (the driver's count() helper is deprecated).
      const cmd = { count: target.collectionName, query: a.filter };
      if (a.skip !== undefined) cmd.skip = a.skip;
      if (a.limit !== undefined) cmd.limit = a.limit;
      return (await client.db(target.dbName).command(cmd)).n;
    }
    case 'distinct': return target.distinct(a.fieldName, a.filter);
    case 'aggregate': return target.aggregate(a.pipeline, opts('batchSize', 'allowDiskUse')).toArray();
    case 'bulkWrite': return target.bulkWrite(a.requests, opts('ordered'));
    case 'createCollection': return target.createCollection(a.collection, opts('viewOn', 'pipeline'));
    case 'dropCollection': return target.dropCollection(a.collection).catch(() => false);
    case 'createChangeStream': {
      const cs = target.watch(a.pipeline || [], opts('batchSize', 'comment', 'fullDocument',
        'fullDocumentBeforeChange', 'showExpandedEvents'));
      // watch() is lazy: the aggregate is sent here, as the format expects
      // (an error of createChangeStream is the aggregate's).
      try {
        await cs.cursor.cursorInit();
      } catch (e) {
        await cs.close().catch(() => {});
        throw e;
      }
      return cs;
    }
    case 'iterateUntilDocumentOrError': return target.next();
    case 'runCommand': return target.command(a.command);
    case 'createIndex': return target.createIndex(a.keys, opts('name'));
    case 'dropIndex': return target.dropIndex(a.name);
    case 'rename': return target.rename(a.to, opts('dropTarget'));
    default: throw new Error(`operation ${op.name} not supported by this runner`);
  }
}

// A MongoServerError of this driver or of another copy of the same package
// (the Node.js binding's own dependency, tests/node/crud_unified.js).
function isServerError(e) {
  for (let p = e; p; p = Object.getPrototypeOf(p)) {
    if (p.constructor && p.constructor.name === 'MongoServerError') return true;
  }
  return false;
}

function checkError(expected, e, where) {
  if (expected.isClientError !== undefined) {
    const server = e instanceof MongoServerError || isServerError(e) ||
                   e.code !== undefined && e.codeName !== undefined;
    if (expected.isClientError === server) throw new Error(`${where}: isClientError ${expected.isClientError}: ${e}`);
  }
  if (expected.errorContains !== undefined &&
      !String(e.message).toLowerCase().includes(expected.errorContains.toLowerCase())) {
    throw new Error(`${where}: "${e.message}" does not contain "${expected.errorContains}"`);
  }
  const code = e.code !== undefined ? e.code : e.writeErrors && e.writeErrors[0] && e.writeErrors[0].code;
  if (expected.errorCode !== undefined && code !== expected.errorCode) {
    throw new Error(`${where}: code ${code}, expected ${expected.errorCode}: ${e}`);
  }
  if (expected.errorCodeName !== undefined && e.codeName !== expected.errorCodeName) {
    throw new Error(`${where}: codeName ${e.codeName}, expected ${expected.errorCodeName}`);
  }
  for (const l of expected.errorLabelsContain || []) {
    if (!e.hasErrorLabel || !e.hasErrorLabel(l)) throw new Error(`${where}: no error label ${l}`);
  }
  for (const l of expected.errorLabelsOmit || []) {
    if (e.hasErrorLabel && e.hasErrorLabel(l)) throw new Error(`${where}: error label ${l}`);
  }
  if (expected.expectResult !== undefined) {
    match(expected.expectResult, bulkResult(e.result || {}), `${where}.result`, true);
  }
}

// ---- the tests ----

async function loadData(client, initialData) {
  for (const c of initialData || []) {
    const db = client.db(c.databaseName);
    await db.collection(c.collectionName).drop().catch(() => {});
    await db.createCollection(c.collectionName);
    if (c.documents.length) await db.collection(c.collectionName).insertMany(c.documents);
  }
}

// Whether one of `requirements` (runOnRequirements) holds for a server of
// `version` ([major, minor, patch]) in `topology`; the reason it does not
// otherwise, or null.
function unmetRequirement(requirements, version, topology) {
  if (!requirements || requirements.length === 0) return null;
  const parse = (v) => v.split('.').map(Number).concat([0, 0, 0]).slice(0, 3);
  const cmp = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
  const reasons = [];
  for (const r of requirements) {
    if (r.minServerVersion && cmp(version, parse(r.minServerVersion)) < 0) {
      reasons.push(`needs server ${r.minServerVersion}+`);
    } else if (r.maxServerVersion && cmp(version, parse(r.maxServerVersion)) > 0) {
      reasons.push(`needs server <= ${r.maxServerVersion}`);
    } else if (r.topologies && !r.topologies.includes(topology)) {
      reasons.push(`needs topology ${r.topologies.join('|')}`);
    } else if (r.serverless === 'require') {
      reasons.push('needs serverless');
    } else {
      const known = new Set(['minServerVersion', 'maxServerVersion', 'topologies', 'serverless']);
      const other = Object.keys(r).filter((k) => !known.has(k));
      if (other.length === 0) return null;
      reasons.push(`needs ${other.join(', ')}`);
    }
  }
  return reasons.join('; or ');
}

// The format's default ignored commands (security-sensitive ones and the
// fail point's).
const kNeverObserved = new Set(['configureFailPoint', 'authenticate', 'saslStart', 'saslContinue',
  'getnonce', 'createUser', 'updateUser', 'hello', 'isMaster', 'ismaster']);

// The test's entities. Each client entity is `defaultClient`, or with
// `ownClients` a client of its own (closed by runTest), which records the
// command events it observes.
async function createEntities(file, uri, defaultClient, ownClients) {
  const entities = {};
  const events = {};
  const owned = [];
  for (const e of file.createEntities || []) {
    const [kind, spec] = Object.entries(e)[0];
    if (kind === 'client') {
      if (!ownClients) {
        entities[spec.id] = defaultClient;
        continue;
      }
      const known = new Set(['id', 'observeEvents', 'ignoreCommandMonitoringEvents', 'useMultipleMongoses']);
      for (const k of Object.keys(spec)) if (!known.has(k)) throw new Error(`client ${k} not supported by this runner`);
      const c = new MongoClient(uri, { serverSelectionTimeoutMS: 5000, monitorCommands: !!spec.observeEvents });
      owned.push(c);
      events[spec.id] = [];
      const ignored = new Set(spec.ignoreCommandMonitoringEvents || []);
      if ((spec.observeEvents || []).some((k) => k !== 'commandStartedEvent')) {
        throw new Error(`observeEvents ${spec.observeEvents} not supported by this runner`);
      }
      if (spec.observeEvents) {
        c.on('commandStarted', (ev) => {
          if (ignored.has(ev.commandName) || kNeverObserved.has(ev.commandName)) return;
          events[spec.id].push({ commandStartedEvent: { command: ev.command, commandName: ev.commandName,
                                                        databaseName: ev.databaseName } });
        });
      }
      await c.connect();
      entities[spec.id] = c;
    } else if (kind === 'database') {
      entities[spec.id] = entities[spec.client].db(spec.databaseName);
    } else if (kind === 'collection') {
      entities[spec.id] = entities[spec.database].collection(spec.collectionName);
    } else {
      throw new Error(`entity ${kind} not supported by this runner`);
    }
  }
  return { entities, events, owned };
}

function checkEvents(expectEvents, events) {
  for (const x of expectEvents || []) {
    if (x.eventType && x.eventType !== 'command') throw new Error(`eventType ${x.eventType} not supported by this runner`);
    const actual = events[x.client];
    if (actual === undefined) throw new Error(`client ${x.client} observes no events`);
    const where = `events of ${x.client}`;
    if (x.ignoreExtraEvents ? actual.length < x.events.length : actual.length !== x.events.length) {
      throw new Error(`${where}: ${actual.length} events, expected ${x.events.length}: ${show(actual)}`);
    }
    x.events.forEach((e, i) => {
      const [kind, want] = Object.entries(e)[0];
      const got = actual[i][kind];
      if (got === undefined) throw new Error(`${where}[${i}]: expected ${kind}, got ${show(actual[i])}`);
      if (want.command !== undefined) match(want.command, got.command, `${where}[${i}].command`, true);
      for (const k of ['commandName', 'databaseName']) {
        if (want[k] !== undefined && want[k] !== got[k]) throw new Error(`${where}[${i}].${k}: ${got[k]}, expected ${want[k]}`);
      }
    });
  }
}

// Runs test `t` of `file`: `client` loads the initial data and checks the
// outcome. Without `ownClients` it is every client entity too, and
// expectEvents is not checked; with it, each client entity is a client of
// `uri` of its own, and the events are checked.
async function runTest(client, file, t, { uri, ownClients = false } = {}) {
  const { entities, events, owned } = await createEntities(file, uri, client, ownClients);
  try {
    await loadData(client, file.initialData);
    t.operations.forEach((op, i) => { op._where = `operation ${i} (${op.name})`; });
    for (const op of t.operations) {
      let result, error;
      try {
        result = await run(client, entities, op);
      } catch (e) {
        error = e;
      }
      if (op.expectError) {
        if (!error) throw new Error(`${op._where}: expected an error, got ${show(result)}`);
        checkError(op.expectError, error, op._where);
        continue;
      }
      if (error) throw new Error(`${op._where}: ${error}`);
      if (op.saveResultAsEntity) entities[op.saveResultAsEntity] = result;
      if (op.expectResult !== undefined) match(op.expectResult, resultOf(op.name, result), op._where, true);
    }
    if (ownClients) checkEvents(t.expectEvents, events);
    for (const o of t.outcome || []) {
      const docs = await client.db(o.databaseName).collection(o.collectionName).find({}).sort({ _id: 1 }).toArray();
      match(o.documents, docs, `outcome ${o.collectionName}`, false);
    }
  } finally {
    for (const e of Object.values(entities)) {
      if (e instanceof mongodb.ChangeStream) await e.close().catch(() => {});
    }
    for (const c of owned) await c.close();
  }
}

// Runs the tests of the spec files in `dataDir` (every .json but
// INDEX.json) over one client of `uri` (made with `clientOptions`; or the
// `client` given), but
// those `notApplicable(fileName, file, test, server)` gives a reason for
// (server: {version: [major, minor, patch], topology: "replicaset" or
// "single"}, from buildInfo and hello); prints a FAIL line per failure.
// Returns {server, applicable, passed, passedTests (their names), failed,
// skipped: Map reason -> count}.
async function runSpecTests(uri, dataDir, { clientOptions = {}, notApplicable, ownClients = false,
                                             client = null }) {
  const fs = require('node:fs');
  const path = require('node:path');
  // `client`: another client with the driver's API to run them through
  // (rockdoc's Node.js binding, tests/node/crud_unified.js), else the
  // driver's, of `uri`.
  client = client || new MongoClient(uri, { serverSelectionTimeoutMS: 5000, ...clientOptions });
  await client.connect();
  const admin = client.db('admin');
  const server = {
    version: (await admin.command({ buildInfo: 1 })).versionArray.slice(0, 3),
    topology: (await admin.command({ hello: 1 })).setName ? 'replicaset' : 'single',
  };
  const out = { server, applicable: 0, passed: 0, passedTests: [], failed: [], skipped: new Map() };
  const files = fs.readdirSync(dataDir).filter((f) => f.endsWith('.json') && f !== 'INDEX.json').sort();
  try {
    for (const name of files) {
      const file = EJSON.parse(fs.readFileSync(path.join(dataDir, name), 'utf8'), { relaxed: true });
      for (const t of file.tests) {
        const reason = notApplicable(name, file, t, server);
        if (reason) {
          out.skipped.set(reason, (out.skipped.get(reason) || 0) + 1);
          continue;
        }
        ++out.applicable;
        try {
          await runTest(client, file, t, { uri, ownClients });
          ++out.passed;
          out.passedTests.push(`${name}: ${t.description}`);
        } catch (e) {
          out.failed.push(`${name}: ${t.description}: ${e.message}`);
        }
      }
    }
  } finally {
    await client.close();
  }
  for (const f of out.failed) console.log('FAIL ' + f);
  return out;
}

module.exports = { runSpecTests, unmetRequirement, driverVersion: require('mongodb/package.json').version };

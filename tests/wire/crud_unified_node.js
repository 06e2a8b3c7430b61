// The CRUD unified spec tests (../shared/test-data/crud-unified/) run
// through the official Node.js driver against rockdoc-serve: the same
// tests, classified by the same INDEX.json, as the embedded runner
// (tests/crud_unified_test.cc), so that the two pass counts compare.
//
//   node crud_unified_node.js URI DATA_DIR EXPECTED_PASSES
//
// Runs every test INDEX.json classes `core` or `optional` (the others are
// server-only matters: events, fail points, old servers), with the
// embedded runner's own skip and run-anyway lists (below), prints one line
// per failure and a summary, and exits 0 only when every one passed and
// their number is EXPECTED_PASSES (the embedded runner's). Exits 77 (a
// CTest skip) when the driver is not installed. The unified format's rules
// followed here: a root-level document may have fields the expected one
// lacks, an embedded one may not; numbers compare by value whatever their
// type; $$unsetOrMatches, $$exists and $$type; expectError's isError,
// isClientError, errorContains, errorCode, errorCodeName,
// errorLabelsContain/Omit and expectResult; outcome compared exactly, in
// _id order. Events are not checked (the embedded runner cannot either).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
let mongodb;
try {
  mongodb = require('mongodb');
} catch (e) {
  console.log('SKIP: the mongodb npm package is not installed in tests/wire/node_modules ' +
              '(scripts/install-deps.sh installs it)');
  process.exit(77);
}
const { MongoClient, MongoServerError, ObjectId, Binary, Long, Decimal128, Timestamp } = mongodb;
const { EJSON } = mongodb.BSON;

const [uri, dataDir, expectedText] = process.argv.slice(2);
if (!uri || !dataDir || !expectedText) {
  console.error('usage: crud_unified_node.js URI DATA_DIR EXPECTED_PASSES');
  process.exit(2);
}

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
    'viewOn']);
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
    default: throw new Error(`operation ${op.name} not supported by this runner`);
  }
}

function checkError(expected, e, where) {
  if (expected.isClientError !== undefined) {
    const server = e instanceof MongoServerError || e.code !== undefined && e.codeName !== undefined;
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

async function runTest(client, file, t) {
  const entities = {};
  for (const e of file.createEntities || []) {
    const [kind, spec] = Object.entries(e)[0];
    if (kind === 'client') entities[spec.id] = client;
    else if (kind === 'database') entities[spec.id] = entities[spec.client].db(spec.databaseName);
    else if (kind === 'collection') entities[spec.id] = entities[spec.database].collection(spec.collectionName);
    else throw new Error(`entity ${kind} not supported by this runner`);
  }
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
    if (op.expectResult !== undefined) match(op.expectResult, resultOf(op.name, result), op._where, true);
  }
  for (const o of t.outcome || []) {
    const docs = await client.db(o.databaseName).collection(o.collectionName).find({}).sort({ _id: 1 }).toArray();
    match(o.documents, docs, `outcome ${o.collectionName}`, false);
  }
}

// The embedded runner's own departures from INDEX.json's classes
// (kSkips and kRunAnyway in tests/crud_unified_test.cc), so that both run
// the same tests.
const kSkips = new Set(['db-aggregate.json\u0000Aggregate with $listLocalSessions']);
const kRunAnyway = new Set(['estimatedDocumentCount.json\u0000estimatedDocumentCount works correctly on views']);

async function main() {
  const index = JSON.parse(fs.readFileSync(path.join(dataDir, 'INDEX.json'), 'utf8'));
  const cls = new Map(index.map((x) => [`${x.file}\u0000${x.test}`, x.cls]));
  // forceServerObjectId: the driver leaves _id to the server, so that an
  // explicit _id: null is sent as it is (the driver would replace it with an
  // ObjectId; create-null-ids.json checks the server keeps it).
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000, forceServerObjectId: true });
  await client.connect();
  let passed = 0;
  const failed = [];
  const files = fs.readdirSync(dataDir).filter((f) => f.endsWith('.json') && f !== 'INDEX.json').sort();
  try {
    for (const name of files) {
      const file = EJSON.parse(fs.readFileSync(path.join(dataDir, name), 'utf8'), { relaxed: true });
      for (const t of file.tests) {
        const key = `${name}\u0000${t.description}`;
        const c = cls.get(key);
        if (kSkips.has(key) || ((c !== 'core' && c !== 'optional') && !kRunAnyway.has(key))) continue;
        try {
          await runTest(client, file, t);
          ++passed;
        } catch (e) {
          failed.push(`${name}: ${t.description}: ${e.message}`);
        }
      }
    }
  } finally {
    await client.close();
  }
  for (const f of failed) console.log('FAIL ' + f);
  const expected = Number(expectedText);
  console.log(`crud-unified through the Node.js driver ${require('mongodb/package.json').version}: ` +
              `${passed} passed, ${failed.length} failed; the embedded runner passes ${expected}`);
  process.exit(failed.length === 0 && passed === expected ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

// The Node.js driver and mongoose against rockdoc-serve with geospatial
// queries (issue 40): a 2dsphere index created through the driver,
// $geoWithin / $geoIntersects / $near / $nearSphere finds, the $geoNear
// stage with distanceField and includeLocs, MongoDB's error codes (16755
// for a geometry that cannot be indexed, 291 for $near without a geo
// index), explain's GEO_NEAR_2DSPHERE; then mongoose's GeoJSON Point schema
// type with a 2dsphere index (Schema.index, Model.init builds it) and $near.
//
//   node node_geo_test.js URI     (run by run_with_server.py)
//
// Exits 77 (a CTest skip) when the driver is not installed.
'use strict';
const assert = require('node:assert/strict');
const { requireDriver, rejects, runTests } = require('./driver_harness');

requireDriver();

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

const places = [
  { _id: 1, name: 'Central Park', location: { type: 'Point', coordinates: [-73.97, 40.77] }, category: 'Parks' },
  { _id: 2, name: 'Sara D. Roosevelt Park', location: { type: 'Point', coordinates: [-73.9928, 40.7193] }, category: 'Parks' },
  { _id: 3, name: 'Polo Grounds', location: { type: 'Point', coordinates: [-73.9375, 40.8303] }, category: 'Stadiums' },
];

test('2dsphere index, $geoWithin, $geoIntersects, $near and $geoNear', async (client) => {
  const c = client.db('node_geo').collection('places');
  await c.drop().catch(() => {});
  await c.insertMany(places);
  // $near needs a geo index: NoQueryExecutionPlans.
  await rejects(c.find({ location: { $near: { $geometry: { type: 'Point', coordinates: [-73.9667, 40.78] } } } }).toArray(), 291);
  assert.equal(await c.createIndex({ location: '2dsphere' }), 'location_2dsphere');
  const spec = (await c.indexes()).find((i) => i.name === 'location_2dsphere');
  assert.equal(spec['2dsphereIndexVersion'], 3);
  await rejects(c.insertOne({ _id: 9, location: { type: 'Point', coordinates: [200, 0] } }), 16755);

  const manhattan = { type: 'Polygon', coordinates: [[[-74.02, 40.70], [-73.93, 40.70], [-73.93, 40.80], [-74.02, 40.80], [-74.02, 40.70]]] };
  assert.deepEqual((await c.find({ location: { $geoWithin: { $geometry: manhattan } } }).sort({ _id: 1 }).toArray())
                       .map((d) => d._id), [1, 2]);
  assert.deepEqual((await c.find({ location: { $geoIntersects: { $geometry: manhattan } } }).sort({ _id: 1 }).toArray())
                       .map((d) => d._id), [1, 2]);
  assert.deepEqual((await c.find({ location: { $geoWithin: { $centerSphere: [[-73.97, 40.77], 2 / 3963.2] } } }).toArray())
                       .map((d) => d._id), [1]);
  const near = { $geometry: { type: 'Point', coordinates: [-73.9667, 40.78] } };
  assert.deepEqual((await c.find({ location: { $near: near } }).toArray()).map((d) => d._id), [1, 3, 2]);
  assert.deepEqual((await c.find({ location: { $nearSphere: { ...near, $minDistance: 1000, $maxDistance: 5000 } } }).toArray())
                       .map((d) => d._id), [1]);
  const explain = await c.find({ location: { $near: near } }).explain('executionStats');
  assert.equal(explain.queryPlanner.winningPlan.stage, 'GEO_NEAR_2DSPHERE');
  assert.equal(explain.executionStats.nReturned, 3);

  const out = await c.aggregate([
    { $geoNear: { near: { type: 'Point', coordinates: [-73.99279, 40.719296] }, key: 'location',
                  distanceField: 'dist.calculated', maxDistance: 2, query: { category: 'Parks' },
                  includeLocs: 'dist.location', spherical: true } },
  ]).toArray();
  assert.equal(out.length, 1);
  assert.equal(out[0].name, 'Sara D. Roosevelt Park');
  assert.ok(Math.abs(out[0].dist.calculated - 0.9539931676365992) < 1e-6, String(out[0].dist.calculated));
  assert.deepEqual(out[0].dist.location, places[1].location);
});

test("mongoose's GeoJSON Point schema, a 2dsphere index and $near", async (_client, uri) => {
  let mongoose;
  try {
    mongoose = require('mongoose');
  } catch (e) {
    console.log('(mongoose is not installed in tests/wire/node_modules: this case checks nothing)');
    return;
  }
  const conn = await mongoose.createConnection(uri.replace(/\/?(\?|$)/, '/node_geo_mg$1')).asPromise();
  try {
    const pointSchema = new mongoose.Schema({
      type: { type: String, enum: ['Point'], required: true },
      coordinates: { type: [Number], required: true },
    }, { _id: false });
    const schema = new mongoose.Schema({ name: String, location: { type: pointSchema, required: true } });
    schema.index({ location: '2dsphere' });
    const Place = conn.model('Place', schema);
    await Place.deleteMany({});
    await Place.init();  // builds the schema's indexes
    const indexes = await Place.collection.indexes();
    assert.ok(indexes.some((i) => i.key.location === '2dsphere'), JSON.stringify(indexes));
    await Place.create(places.map(({ name, location }) => ({ name, location })));
    const found = await Place.find({
      location: { $near: { $geometry: { type: 'Point', coordinates: [-73.9667, 40.78] }, $maxDistance: 6500 } },
    }).lean();
    assert.deepEqual(found.map((p) => p.name), ['Central Park', 'Polo Grounds']);
    await assert.rejects(Place.create({ name: 'nowhere', location: { type: 'Point', coordinates: [0, 100] } }),
                         (e) => e.code === 16755);
  } finally {
    await conn.close();
  }
});

runTests(tests, process.argv[2]);

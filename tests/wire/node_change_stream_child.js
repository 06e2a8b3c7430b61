// The Node.js driver's side of wire_reliability's change_streams scenario
// (tests/wire/wiresec_reliability.py), one process per step:
//
//   node node_change_stream_child.js watch URI
//       opens a change stream of test.cs, prints "watching" once the
//       server has it, then the resume token of its first event (canonical
//       Extended JSON), and waits to be killed with its cursor open;
//   node node_change_stream_child.js resume URI TOKEN N
//       resumes after TOKEN with updateLookup, prints the next N events as
//       JSON [operationType, _id, fullDocument.x or null], one a line, then
//       "none after" once a wait brought nothing more.
//
// Each wait is for an event; a bound of 2,000 tries fails the step rather
// than hanging it. Exits 77 when the driver is not installed.
'use strict';
const { requireDriver } = require('./driver_harness');

const { MongoClient, BSON } = requireDriver();
const { EJSON } = BSON;
const [mode, uri, token, count] = process.argv.slice(2);

async function nextEvent(stream) {
  for (let i = 0; i < 2000; i++) {
    const e = await stream.tryNext();
    if (e !== null) return e;
  }
  throw new Error('no event came');
}

function shape(e) {
  return [e.operationType, e.documentKey._id, e.fullDocument ? (e.fullDocument.x ?? null) : null];
}

(async () => {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10000 });
  await client.connect();
  const cs = client.db('test').collection('cs');
  if (mode === 'watch') {
    const stream = cs.watch([], { maxAwaitTimeMS: 100 });
    // The driver opens the stream at its first read: after it, the
    // server's stream stands where the next write will be.
    if ((await stream.tryNext()) !== null) throw new Error('an event before any write');
    console.log('watching');
    await nextEvent(stream);
    console.log(EJSON.stringify(stream.resumeToken, { relaxed: false }));
    for (;;) await stream.tryNext();
  } else if (mode === 'resume') {
    const stream = cs.watch([], {
      resumeAfter: EJSON.parse(token),
      fullDocument: 'updateLookup',
      maxAwaitTimeMS: 100,
    });
    for (let i = 0; i < Number(count); i++) console.log(JSON.stringify(shape(await nextEvent(stream))));
    if ((await stream.tryNext()) !== null) throw new Error('an event too many');
    console.log('none after');
    await stream.close();
    await client.close();
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
})().catch((e) => {
  console.error(e);
  process.exit(1);
});

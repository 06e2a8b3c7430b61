// mongosh's side of wire_reliability's change_streams scenario
// (tests/wire/wiresec_reliability.py), one mongosh process per step, run as
// `mongosh URI --quiet --file mongosh_change_stream_child.js` with the step
// in the environment:
//
//   CS_MODE=watch
//       opens a change stream of test.cs with mongosh's watch(), prints
//       "watching" once the server has it, then the resume token of its
//       first event (canonical Extended JSON, getResumeToken()), and waits
//       to be killed with its cursor open;
//   CS_MODE=resume CS_TOKEN=<token> CS_COUNT=N
//       resumes after the token with updateLookup, prints the next N events
//       as JSON [operationType, _id, fullDocument.x or null], one a line,
//       then "none after" once a wait brought nothing more.
//
// Each wait is for an event; a bound of 2,000 tries fails the step rather
// than hanging it.
'use strict';

function nextEvent(stream) {
  for (let i = 0; i < 2000; i++) {
    const e = stream.tryNext();
    if (e !== null) return e;
  }
  throw new Error('no event came');
}

function shape(e) {
  const x = e.fullDocument ? e.fullDocument.x : undefined;
  return [e.operationType, Number(e.documentKey._id), x === undefined ? null : Number(x)];
}

const cs = db.getSiblingDB('test').cs;
const mode = process.env.CS_MODE;
if (mode === 'watch') {
  const stream = cs.watch([], { maxAwaitTimeMS: 100 });
  // The driver under mongosh opens the stream at its first read: after it,
  // the server's stream stands where the next write will be.
  if (stream.tryNext() !== null) throw new Error('an event before any write');
  print('watching');
  nextEvent(stream);
  print(EJSON.stringify(stream.getResumeToken(), { relaxed: false }));
  for (;;) stream.tryNext();
} else if (mode === 'resume') {
  const stream = cs.watch([], {
    resumeAfter: EJSON.parse(process.env.CS_TOKEN),
    fullDocument: 'updateLookup',
    maxAwaitTimeMS: 100,
  });
  for (let i = 0; i < Number(process.env.CS_COUNT); i++) print(JSON.stringify(shape(nextEvent(stream))));
  if (stream.tryNext() !== null) throw new Error('an event too many');
  print('none after');
  stream.close();
} else {
  throw new Error(`unknown CS_MODE ${mode}`);
}

'use strict';
// Reply decoding as the driver decodes a server's replies: js-bson with the
// driver's defaults (promoteValues, promoteLongs: a Long that fits is a
// number). A cursor's id is a 64-bit random number, which promoteLongs would
// round: cursorId() reads it exactly (a Long) by walking the reply's bytes.
const { BSON, Long } = require('bson');

const DESERIALIZE = { promoteValues: true, promoteLongs: true, promoteBuffers: false,
                      bsonRegExp: false, useBigInt64: false };
const SERIALIZE = { checkKeys: false, ignoreUndefined: false, serializeFunctions: false };

// Bytes taken by the value of BSON type `type` at `at` (null: unknown).
function valueSize(buf, type, at) {
  switch (type) {
    case 0x01: case 0x09: case 0x11: case 0x12: return 8;
    case 0x02: case 0x0d: case 0x0e: return 4 + buf.readInt32LE(at);
    case 0x03: case 0x04: case 0x0f: return buf.readInt32LE(at);
    case 0x05: return 5 + buf.readInt32LE(at);
    case 0x06: case 0x0a: case 0x7f: case 0xff: return 0;
    case 0x07: return 12;
    case 0x08: return 1;
    case 0x0b: {
      let end = buf.indexOf(0, at);
      end = buf.indexOf(0, end + 1);
      return end + 1 - at;
    }
    case 0x0c: return 4 + buf.readInt32LE(at) + 12;
    case 0x10: return 4;
    case 0x13: return 16;
    default: return null;
  }
}

// Calls visit(name, type, valueOffset) for each element of the document at
// `start`; stops when visit returns a value other than undefined.
function walk(buf, start, visit) {
  const end = start + buf.readInt32LE(start) - 1;
  let at = start + 4;
  while (at < end) {
    const type = buf[at];
    const nameEnd = buf.indexOf(0, at + 1);
    const name = buf.toString('utf8', at + 1, nameEnd);
    const value = nameEnd + 1;
    const found = visit(name, type, value);
    if (found !== undefined) return found;
    const size = valueSize(buf, type, value);
    if (size === null) return undefined;
    at = value + size;
  }
  return undefined;
}

// reply.cursor.id as a Long (Long.ZERO when there is none).
function cursorId(buf) {
  const id = walk(buf, 0, (name, type, at) => {
    if (name !== 'cursor' || type !== 0x03) return undefined;
    return walk(buf, at, (inner, innerType, value) => {
      if (inner !== 'id') return undefined;
      if (innerType === 0x12) return Long.fromBits(buf.readInt32LE(value), buf.readInt32LE(value + 4));
      if (innerType === 0x10) return Long.fromInt(buf.readInt32LE(value));
      return null;
    });
  });
  return id || Long.ZERO;
}

function encode(document) {
  return BSON.serialize(document, SERIALIZE);
}

function decode(buf) {
  return BSON.deserialize(buf, DESERIALIZE);
}

module.exports = { encode, decode, cursorId, SERIALIZE };

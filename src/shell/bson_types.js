// bson_types.js: the BSON value types JavaScript lacks, as the shell's
// globals (ObjectId, Long/NumberLong, Int32/NumberInt, Double,
// Decimal128/NumberDecimal, Binary/BinData/UUID/HexData/MD5, Timestamp,
// MinKey, MaxKey, BSONRegExp, Code, DBPointer, BSONSymbol, DBRef, ISODate).
//
// Contract with bson_convert.cc: each type's prototype has `_bsontype`, and
// the value lives in hidden (non-enumerable) own properties that the C++
// converter reads and writes directly: ObjectId._hex, Long._str,
// Int32._num, Double._num, Decimal128._str, Binary._sub/_bytes (Uint8Array),
// Timestamp._t/_i, BSONRegExp._pattern/_options, Code._code/_scope,
// DBPointer._ns/_oid, BSONSymbol._str. Every constructor also works without
// `new`, as in mongosh.
//
// Printing: each type has a [Symbol.for('rockdoc.inspect')] method giving
// mongosh's form (ObjectId('...'), Long('...'), ...), used by inspect.js.
(function (global) {
  'use strict';
  const native = global.__native;
  const inspect = Symbol.for('rockdoc.inspect');

  function hidden(obj, name, value) {
    Object.defineProperty(obj, name, { value, enumerable: false, writable: false, configurable: false });
  }
  function defineType(ctor, bsontype, methods) {
    Object.defineProperty(ctor.prototype, '_bsontype', { value: bsontype, enumerable: false });
    for (const name of Reflect.ownKeys(methods)) {  // symbols too: the inspect method
      Object.defineProperty(ctor.prototype, name, { value: methods[name], enumerable: false, writable: true, configurable: true });
    }
    global[ctor.name] = ctor;
  }
  function quote(s) {
    return "'" + String(s).replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n') + "'";
  }
  function bsonError(message) {
    const e = new TypeError(message);
    e.name = 'BSONError';
    return e;
  }

  // mongosh's own errors. Their codes follow the shell's rule (README):
  // argument errors are 2 (BadValue), what rockdoc lacks is 238
  // (NotImplemented), so `e.code` is a number as for engine errors.
  class MongoshInvalidInputError extends Error {
    constructor(message) {
      super(`[COMMON-10001] ${message}`);  // mongosh's CommonErrors.InvalidArgument
      this.name = 'MongoshInvalidInputError';
      this.code = 2;
      this.codeName = 'BadValue';
    }
  }
  // `what` is not supported: "Collection.bulkWrite is not supported by
  // rockdoc", or `message` where mongosh has its own words for it.
  class MongoshUnimplementedError extends Error {
    constructor(what, message) {
      super(message === undefined ? `${what} is not supported by rockdoc` : message);
      this.name = 'MongoshUnimplementedError';
      this.code = 238;
      this.codeName = 'NotImplemented';
    }
  }
  global.MongoshInvalidInputError = MongoshInvalidInputError;
  global.MongoshUnimplementedError = MongoshUnimplementedError;

  // ---- hex and base64 ----
  const HEX = '0123456789abcdef';
  function bytesToHex(bytes) {
    let s = '';
    for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i] >> 4] + HEX[bytes[i] & 15];
    return s;
  }
  function hexToBytes(hex) {
    if (typeof hex !== 'string' || hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
      throw bsonError('invalid hex string: ' + hex);
    }
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
    return out;
  }
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  function bytesToBase64(bytes) {
    let s = '';
    let i = 0;
    for (; i + 2 < bytes.length; i += 3) {
      const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
      s += B64[n >> 18] + B64[(n >> 12) & 63] + B64[(n >> 6) & 63] + B64[n & 63];
    }
    if (i < bytes.length) {
      const n = (bytes[i] << 16) | ((i + 1 < bytes.length ? bytes[i + 1] : 0) << 8);
      s += B64[n >> 18] + B64[(n >> 12) & 63];
      s += i + 1 < bytes.length ? B64[(n >> 6) & 63] + '=' : '==';
    }
    return s;
  }
  function base64ToBytes(text) {
    const s = String(text).replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) throw bsonError('invalid base64 string');
    const clean = s.replace(/=+$/, '');
    if (clean.length % 4 === 1) throw bsonError('invalid base64 string');
    const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
    let bits = 0, value = 0, k = 0;
    for (const ch of clean) {
      value = (value << 6) | B64.indexOf(ch);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[k++] = (value >> bits) & 255;
      }
    }
    return out;
  }

  // ---- ObjectId ----
  function ObjectId(id) {
    if (!(this instanceof ObjectId)) return new ObjectId(id);
    let hex;
    if (id === undefined || id === null) {
      hex = native.newObjectId();
    } else if (typeof id === 'number') {
      hex = native.newObjectId(id);  // seconds since the epoch, as js-bson
    } else if (id instanceof ObjectId) {
      hex = id._hex;
    } else if (typeof id === 'string' && /^[0-9a-fA-F]{24}$/.test(id)) {
      hex = id.toLowerCase();
    } else if (id instanceof Uint8Array && id.length === 12) {
      hex = bytesToHex(id);
    } else {
      throw bsonError('ObjectId must be a 24-character hex string, got ' + String(id));
    }
    hidden(this, '_hex', hex);
  }
  ObjectId.isValid = (id) => {
    try { ObjectId(id); return id !== undefined && id !== null; } catch (e) { return false; }
  };
  ObjectId.createFromTime = (seconds) => new ObjectId(native.newObjectId(Math.floor(seconds)).slice(0, 8) + '0000000000000000');
  ObjectId.createFromHexString = (hex) => new ObjectId(String(hex));
  ObjectId.generate = () => native.newObjectId();
  defineType(ObjectId, 'ObjectId', {
    toHexString() { return this._hex; },
    toString() { return this._hex; },
    toJSON() { return this._hex; },
    valueOf() { return this._hex; },
    getTimestamp() { return new Date(parseInt(this._hex.slice(0, 8), 16) * 1000); },
    equals(other) {
      if (other instanceof ObjectId) return other._hex === this._hex;
      return typeof other === 'string' && other.toLowerCase() === this._hex;
    },
    [inspect]() { return `ObjectId('${this._hex}')`; },
  });
  Object.defineProperty(ObjectId.prototype, 'str', { get() { return this._hex; } });
  global.ObjectID = ObjectId;

  // ---- Long (int64) ----
  const INT64_MIN = -(2n ** 63n), INT64_MAX = 2n ** 63n - 1n;
  function toInt64String(value, low_high_second) {
    let big;
    if (low_high_second !== undefined && typeof value === 'number') {
      // js-bson's Long(low, high).
      big = BigInt.asIntN(64, (BigInt(low_high_second | 0) << 32n) | BigInt(value >>> 0));
    } else if (typeof value === 'bigint') {
      big = value;
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw bsonError('NumberLong needs a finite number, got ' + value);
      big = BigInt(Math.trunc(value));
    } else if (typeof value === 'string') {
      if (!/^\s*[-+]?\d+\s*$/.test(value)) throw bsonError('NumberLong needs an integer string, got ' + quote(value));
      big = BigInt(value.trim());
    } else if (value instanceof Long) {
      return value._str;
    } else if (value === undefined) {
      big = 0n;
    } else {
      throw bsonError('NumberLong needs a number, a string or a BigInt');
    }
    if (big < INT64_MIN || big > INT64_MAX) throw bsonError('value out of the int64 range: ' + big);
    return big.toString();
  }
  function Long(value, high) {
    if (!(this instanceof Long)) return new Long(value, high);
    hidden(this, '_str', toInt64String(value, high));
  }
  Long.fromNumber = (n) => new Long(n);
  Long.fromString = (s) => new Long(String(s));
  Long.fromBigInt = (b) => new Long(b);
  Long.fromInt = (n) => new Long(n | 0);
  defineType(Long, 'Long', {
    toString(radix) { return radix ? BigInt(this._str).toString(radix) : this._str; },
    toNumber() { return Number(this._str); },
    valueOf() { return Number(this._str); },
    toBigInt() { return BigInt(this._str); },
    toJSON() { return { $numberLong: this._str }; },
    equals(other) { return other instanceof Long ? other._str === this._str : BigInt(this._str) === BigInt(other); },
    [inspect]() { return `Long('${this._str}')`; },
  });
  Object.defineProperty(Long.prototype, 'floatApprox', { get() { return Number(this._str); } });
  // mongosh's NumberLong and NumberDecimal (not Long and Decimal128, which
  // are js-bson's) warn when given a number, which may already have lost
  // precision (NumberLong(9007199254740993) is ...992 before the call).
  function warnOfNumber(name, ctor) {
    // A plain function, so that `new NumberLong('5')` works as well.
    const wrapper = function (value) {
      if (typeof value === 'number') {
        native.writeErr(`Warning: ${name}: specifying a number as argument is deprecated and ` +
                        'may lead to loss of precision, pass a string instead\n');
      }
      return ctor(value);
    };
    Object.defineProperty(wrapper, 'name', { value: name });
    wrapper.prototype = ctor.prototype;  // instanceof NumberLong holds
    return wrapper;
  }
  global.NumberLong = warnOfNumber('NumberLong', Long);

  // ---- Int32 and Double: explicit numeric types ----
  function Int32(value) {
    if (!(this instanceof Int32)) return new Int32(value);
    const n = Number(value === undefined ? 0 : value);
    if (!Number.isFinite(n)) throw bsonError('NumberInt needs a finite number, got ' + value);
    hidden(this, '_num', n | 0);
  }
  defineType(Int32, 'Int32', {
    valueOf() { return this._num; },
    toString() { return String(this._num); },
    toJSON() { return this._num; },
    [inspect]() { return `Int32(${this._num})`; },
  });
  global.NumberInt = Int32;

  function Double(value) {
    if (!(this instanceof Double)) return new Double(value);
    hidden(this, '_num', Number(value === undefined ? 0 : value));
  }
  defineType(Double, 'Double', {
    valueOf() { return this._num; },
    toString() { return String(this._num); },
    toJSON() { return this._num; },
    [inspect]() {
      const s = Object.is(this._num, -0) ? '-0' : String(this._num);
      return `Double(${s})`;
    },
  });

  // ---- Decimal128 ----
  function Decimal128(value) {
    if (!(this instanceof Decimal128)) return new Decimal128(value);
    if (value instanceof Decimal128) {
      hidden(this, '_str', value._str);
      return;
    }
    if (value === undefined) value = '0';
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'bigint') {
      throw bsonError('NumberDecimal needs a string or a number');
    }
    // The engine's parser decides what is a valid decimal128 and gives its
    // canonical text (a number goes through its shortest decimal form).
    hidden(this, '_str', native.decimalString(String(value)));
  }
  Decimal128.fromString = (s) => new Decimal128(String(s));
  defineType(Decimal128, 'Decimal128', {
    toString() { return this._str; },
    toJSON() { return { $numberDecimal: this._str }; },
    valueOf() { return Number(this._str); },
    [inspect]() { return `Decimal128('${this._str}')`; },
  });
  global.NumberDecimal = warnOfNumber('NumberDecimal', Decimal128);

  // ---- Binary, UUID ----
  function Binary(buffer, subtype) {
    if (!(this instanceof Binary)) return new Binary(buffer, subtype);
    let bytes;
    if (buffer === undefined) bytes = new Uint8Array(0);
    else if (buffer instanceof Uint8Array) bytes = new Uint8Array(buffer);
    else if (Array.isArray(buffer)) bytes = Uint8Array.from(buffer);
    else if (typeof buffer === 'string') bytes = Uint8Array.from(buffer, (c) => c.charCodeAt(0) & 255);
    else throw bsonError('Binary needs a Uint8Array, an array of bytes or a string');
    const sub = subtype === undefined ? 0 : Number(subtype);
    if (!Number.isInteger(sub) || sub < 0 || sub > 255) throw bsonError('invalid binary subtype: ' + subtype);
    hidden(this, '_sub', sub);
    hidden(this, '_bytes', bytes);
  }
  Binary.SUBTYPE_DEFAULT = 0;
  Binary.SUBTYPE_UUID = 4;
  Binary.SUBTYPE_MD5 = 5;
  Binary.createFromBase64 = (b64, sub) => new Binary(base64ToBytes(b64), sub);
  Binary.createFromHexString = (hex, sub) => new Binary(hexToBytes(hex), sub);
  function uuidText(bytes) {
    const h = bytesToHex(bytes);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  defineType(Binary, 'Binary', {
    base64() { return bytesToBase64(this._bytes); },
    hex() { return bytesToHex(this._bytes); },
    toString(format) {
      if (format === 'hex') return this.hex();
      if (format === 'base64') return this.base64();
      return this.isUUID() ? uuidText(this._bytes) : this.base64();
    },
    length() { return this._bytes.length; },
    isUUID() { return this._sub === 4 && this._bytes.length === 16; },
    toUUID() {
      if (!this.isUUID()) throw bsonError('not a UUID: subtype 4 and 16 bytes are needed');
      return this;
    },
    toJSON() { return { $binary: { base64: this.base64(), subType: this._sub.toString(16).padStart(2, '0') } }; },
    equals(other) { return other instanceof Binary && other._sub === this._sub && other.hex() === this.hex(); },
    [inspect]() {
      if (this.isUUID()) return `UUID('${uuidText(this._bytes)}')`;
      return `Binary.createFromBase64('${this.base64()}', ${this._sub})`;
    },
  });
  Object.defineProperty(Binary.prototype, 'sub_type', { get() { return this._sub; } });
  Object.defineProperty(Binary.prototype, 'subtype', { value: function () { return this._sub; } });
  Object.defineProperty(Binary.prototype, 'buffer', { get() { return this._bytes; } });
  Object.defineProperty(Binary.prototype, 'position', { get() { return this._bytes.length; } });

  global.BinData = function BinData(subtype, base64) { return Binary.createFromBase64(base64, subtype); };
  global.HexData = function HexData(subtype, hex) { return Binary.createFromHexString(hex, subtype); };
  global.MD5 = function MD5(hex) { return Binary.createFromHexString(hex, 5); };
  global.UUID = function UUID(text) {
    if (text === undefined) {
      const bytes = new Uint8Array(16);
      for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
      bytes[6] = (bytes[6] & 0x0f) | 0x40;  // version 4
      bytes[8] = (bytes[8] & 0x3f) | 0x80;  // RFC 4122 variant
      return new Binary(bytes, 4);
    }
    const hex = String(text).replace(/-/g, '');
    if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw bsonError('UUID needs 32 hex digits, got ' + quote(text));
    return new Binary(hexToBytes(hex), 4);
  };

  // ---- Timestamp ----
  function Timestamp(t, i) {
    if (!(this instanceof Timestamp)) return new Timestamp(t, i);
    if (t !== null && typeof t === 'object' && !(t instanceof Long)) {
      i = t.i;
      t = t.t;
    }
    const tt = t === undefined ? 0 : Number(t), ii = i === undefined ? 0 : Number(i);
    if (!Number.isInteger(tt) || !Number.isInteger(ii) || tt < 0 || ii < 0 || tt > 0xffffffff || ii > 0xffffffff) {
      throw bsonError('Timestamp needs t and i in [0, 2^32)');
    }
    hidden(this, '_t', tt);
    hidden(this, '_i', ii);
  }
  defineType(Timestamp, 'Timestamp', {
    getTime() { return this._t; },
    getInc() { return this._i; },
    toJSON() { return { $timestamp: { t: this._t, i: this._i } }; },
    toString() { return `Timestamp(${this._t}, ${this._i})`; },
    equals(other) { return other instanceof Timestamp && other._t === this._t && other._i === this._i; },
    [inspect]() { return `Timestamp({ t: ${this._t}, i: ${this._i} })`; },
  });
  Object.defineProperty(Timestamp.prototype, 't', { get() { return this._t; } });
  Object.defineProperty(Timestamp.prototype, 'i', { get() { return this._i; } });

  // ---- MinKey, MaxKey ----
  // Both the function and its instances stand for the value: `{a: MinKey}`
  // (legacy shell) and `{a: MinKey()}` (mongosh) store the same thing.
  function MinKey() {
    if (!(this instanceof MinKey)) return new MinKey();
  }
  defineType(MinKey, 'MinKey', {
    toJSON() { return { $minKey: 1 }; },
    [inspect]() { return 'MinKey()'; },
  });
  Object.defineProperty(MinKey, '_bsontype', { value: 'MinKey' });
  function MaxKey() {
    if (!(this instanceof MaxKey)) return new MaxKey();
  }
  defineType(MaxKey, 'MaxKey', {
    toJSON() { return { $maxKey: 1 }; },
    [inspect]() { return 'MaxKey()'; },
  });
  Object.defineProperty(MaxKey, '_bsontype', { value: 'MaxKey' });

  // ---- BSONRegExp: patterns JavaScript's RegExp cannot hold ----
  function BSONRegExp(pattern, options) {
    if (!(this instanceof BSONRegExp)) return new BSONRegExp(pattern, options);
    hidden(this, '_pattern', String(pattern));
    hidden(this, '_options', (options === undefined ? '' : String(options)).split('').sort().join(''));
  }
  defineType(BSONRegExp, 'BSONRegExp', {
    toJSON() { return { $regularExpression: { pattern: this._pattern, options: this._options } }; },
    [inspect]() { return `BSONRegExp(${quote(this._pattern)}, ${quote(this._options)})`; },
  });
  Object.defineProperty(BSONRegExp.prototype, 'pattern', { get() { return this._pattern; } });
  Object.defineProperty(BSONRegExp.prototype, 'options', { get() { return this._options; } });

  // ---- Code, DBPointer, BSONSymbol (rare, kept for round trips) ----
  function Code(code, scope) {
    if (!(this instanceof Code)) return new Code(code, scope);
    hidden(this, '_code', typeof code === 'function' ? code.toString() : String(code));
    hidden(this, '_scope', scope === undefined ? null : scope);
  }
  defineType(Code, 'Code', {
    toString() { return this._code; },
    toJSON() { return this._scope ? { $code: this._code, $scope: this._scope } : { $code: this._code }; },
    [inspect](format) {
      return this._scope ? `Code(${quote(this._code)}, ${format(this._scope)})` : `Code(${quote(this._code)})`;
    },
  });
  Object.defineProperty(Code.prototype, 'code', { get() { return this._code; } });
  Object.defineProperty(Code.prototype, 'scope', { get() { return this._scope; } });

  function DBPointer(ns, id) {
    if (!(this instanceof DBPointer)) return new DBPointer(ns, id);
    hidden(this, '_ns', String(ns));
    hidden(this, '_oid', id instanceof ObjectId ? id : new ObjectId(id));
  }
  defineType(DBPointer, 'DBPointer', {
    toJSON() { return { $dbPointer: { $ref: this._ns, $id: this._oid } }; },
    [inspect]() { return `DBPointer(${quote(this._ns)}, ${this._oid[inspect]()})`; },
  });

  function BSONSymbol(value) {
    if (!(this instanceof BSONSymbol)) return new BSONSymbol(value);
    hidden(this, '_str', String(value));
  }
  defineType(BSONSymbol, 'BSONSymbol', {
    toString() { return this._str; },
    valueOf() { return this._str; },
    toJSON() { return this._str; },
    [inspect]() { return `BSONSymbol(${quote(this._str)})`; },
  });

  // DBRef is a document convention ({$ref, $id, $db}), not a BSON type.
  global.DBRef = function DBRef(collection, id, dbName) {
    const ref = { $ref: String(collection), $id: id };
    if (dbName !== undefined) ref.$db = String(dbName);
    return ref;
  };

  // ---- dates ----
  // ISODate(text) is a Date, parsed as mongosh parses it: the ISO 8601 forms
  // YYYY-MM-DD, with 'T' or a space before hh[:mm[:ss[.fraction]]] and then
  // 'Z' or an offset (none means UTC), the separators optional. Every field
  // is checked (month 1-12, the day within its month, hour 0-23, ...): an
  // impossible date throws instead of rolling over, and years 0000-0099 stay
  // as written (Date.UTC would read them as 1900-1999). The result must lie
  // in 0000-01-01 .. 9999-12-31, mongosh's range.
  const ISO_RE = /^(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2})(?::?(\d{2})(?::?(\d{2})(?:\.(\d+))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;
  const MIN_ISO_MS = -62167219200000;  // 0000-01-01T00:00:00.000Z
  const MAX_ISO_MS = 253402300799999;  // 9999-12-31T23:59:59.999Z
  function daysInMonth(year, month) {
    if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
    return [4, 6, 9, 11].includes(month) ? 30 : 31;
  }
  function parseIsoDate(text) {
    const m = ISO_RE.exec(text);
    if (!m) return NaN;
    const [year, month, day, hour, minute, second] = m.slice(1, 7).map((f) => +(f || 0));
    if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 ||
        minute > 59 || second > 59) {
      return NaN;
    }
    const ms = m[7] ? +m[7].slice(0, 3).padEnd(3, '0') : 0;
    let offset = 0;
    if (m[8] && m[8] !== 'Z') {
      const digits = m[8].slice(1).replace(':', '');
      const oh = +digits.slice(0, 2), om = +(digits.slice(2) || 0);
      if (oh > 23 || om > 59) return NaN;
      offset = (m[8][0] === '-' ? -1 : 1) * (oh * 60 + om) * 60000;
    }
    // setUTCFullYear takes the year as written, 0-99 included.
    const d = new Date(0);
    d.setUTCFullYear(year, month - 1, day);
    d.setUTCHours(hour, minute, second, ms);
    const t = d.getTime() - offset;
    return t >= MIN_ISO_MS && t <= MAX_ISO_MS ? t : NaN;
  }
  global.ISODate = function ISODate(input) {
    if (input === undefined) return new Date();
    // Anything else than a string is what `new Date` makes of it (mongosh).
    const t = typeof input === 'string' ? parseIsoDate(input) : new Date(input).getTime();
    if (Number.isNaN(t)) {
      const shown = typeof input === 'string' ? JSON.stringify(input) : String(input);
      throw new MongoshInvalidInputError(`${shown} is not a valid ISODate`);
    }
    return new Date(t);
  };

  // Used by bson_convert.cc for BSON regular expressions: a RegExp when
  // JavaScript can express the pattern and options, else a BSONRegExp.
  const mapEntries = Function.prototype.call.bind(Map.prototype.entries);
  Object.defineProperty(global, '__bsonFactory', {
    value: Object.freeze({
      // A Map's [key, value] pairs (js-bson stores a Map as a document).
      mapEntries(map) { return Array.from(mapEntries(map)); },
      regex(pattern, options) {
        if (/^[imsu]*$/.test(options)) {
          try { return new RegExp(pattern, options); } catch (e) { /* not a JS pattern */ }
        }
        return new BSONRegExp(pattern, options);
      },
    }),
  });

  // ---- EJSON: js-bson's, so the text is the one mongosh writes ----
  // stringify(value, replacer, space, options) turns BSON values into their
  // Extended JSON objects (relaxed by default: plain numbers, Long as a
  // number, dates in 1970-9999 as ISO strings without zero milliseconds) and
  // hands the result to JSON.stringify with the replacer and indentation.
  const BSON_INT32_MIN = -0x80000000, BSON_INT32_MAX = 0x7fffffff;
  const BSON_INT64_MIN = -Math.pow(2, 63), BSON_INT64_MAX = Math.pow(2, 63) - 1;  // js-bson's doubles
  function ejsonIsoString(d) {
    const s = d.toISOString();
    return d.getUTCMilliseconds() !== 0 ? s : s.slice(0, -5) + 'Z';
  }
  function ejsonRegex(pattern, flags, o) {
    const options = String(flags).split('').sort().join('');
    for (const c of options) {
      if (!'imxlsu'.includes(c)) throw bsonError(`The regular expression option [${c}] is not supported`);
    }
    return o.legacy ? { $regex: pattern, $options: options }
      : { $regularExpression: { pattern, options } };
  }
  function ejsonWrapper(v, o, path) {
    switch (v._bsontype) {
      case 'ObjectId': return { $oid: v._hex };
      case 'Long': return o.relaxed ? Number(v._str) : { $numberLong: v._str };
      case 'Int32': return o.relaxed || o.legacy ? v._num : { $numberInt: String(v._num) };
      case 'Double': {
        const n = v._num;
        if (o.legacy || (o.relaxed && isFinite(n))) return n;
        if (Object.is(Math.sign(n), -0)) return { $numberDouble: '-0.0' };
        return { $numberDouble: Number.isInteger(n) ? n.toFixed(1) : n.toString() };
      }
      case 'Decimal128': return { $numberDecimal: v._str };
      case 'Binary': {
        const base64 = bytesToBase64(v._bytes), subType = v._sub.toString(16).padStart(2, '0');
        return o.legacy ? { $binary: base64, $type: subType } : { $binary: { base64, subType } };
      }
      case 'Timestamp': return { $timestamp: { t: v._t, i: v._i } };
      case 'MinKey': return { $minKey: 1 };
      case 'MaxKey': return { $maxKey: 1 };
      case 'BSONRegExp': return ejsonRegex(v._pattern, v._options, o);
      case 'Code':
        return v._scope ? { $code: v._code, $scope: ejsonValue(v._scope, o, path) } : { $code: v._code };
      case 'DBPointer': return { $dbPointer: { $ref: v._ns, $id: { $oid: v._oid._hex } } };
      case 'BSONSymbol': return { $symbol: v._str };
      default: throw bsonError('Unrecognized or invalid _bsontype: ' + v._bsontype);
    }
  }
  function ejsonValue(value, o, path) {
    if ((typeof value === 'object' || typeof value === 'function') && value !== null &&
        path.includes(value)) {
      throw bsonError('Converting circular structure to EJSON');
    }
    if (Array.isArray(value)) {
      path.push(value);
      try { return value.map((v) => ejsonValue(v, o, path)); } finally { path.pop(); }
    }
    if (value === undefined) return null;
    if (value instanceof Date) {
      const t = value.getTime(), inRange = t > -1 && t < 253402318800000;
      if (o.legacy) return o.relaxed && inRange ? { $date: t } : { $date: ejsonIsoString(value) };
      return o.relaxed && inRange ? { $date: ejsonIsoString(value) } : { $date: { $numberLong: String(t) } };
    }
    if (typeof value === 'number' && (!o.relaxed || !isFinite(value))) {
      if (Number.isInteger(value) && !Object.is(value, -0)) {
        if (value >= BSON_INT32_MIN && value <= BSON_INT32_MAX) return { $numberInt: value.toString() };
        if (value >= BSON_INT64_MIN && value <= BSON_INT64_MAX) return { $numberLong: value.toString() };
      }
      return { $numberDouble: Object.is(value, -0) ? '-0.0' : value.toString() };
    }
    if (typeof value === 'bigint') {
      return o.relaxed ? Number(BigInt.asIntN(64, value)) : { $numberLong: BigInt.asIntN(64, value).toString() };
    }
    if (value instanceof RegExp) return ejsonRegex(value.source, value.flags, o);
    if (value !== null && typeof value === 'object') {
      path.push(value);
      try {
        // The converter's rule: a wrapper's _bsontype is on its prototype.
        if (typeof value._bsontype === 'string' && !Object.prototype.hasOwnProperty.call(value, '_bsontype')) {
          return ejsonWrapper(value, o, path);
        }
        const out = {};
        for (const name of Object.keys(value)) {
          const v = ejsonValue(value[name], o, path);
          if (name === '__proto__') {
            Object.defineProperty(out, name, { value: v, writable: true, enumerable: true, configurable: true });
          } else {
            out[name] = v;
          }
        }
        return out;
      } finally {
        path.pop();
      }
    }
    return value;  // strings, booleans, null; JSON.stringify drops functions and symbols
  }
  function ejsonStringify(value, replacer, space, options) {
    if (space != null && typeof space === 'object') {
      options = space;
      space = 0;
    }
    if (replacer != null && typeof replacer === 'object' && !Array.isArray(replacer)) {
      options = replacer;
      replacer = undefined;
      space = 0;
    }
    const o = Object.assign({ relaxed: true, legacy: false }, options);
    return JSON.stringify(ejsonValue(value, o, []), replacer, space);
  }
  function ejsonParse(text) { return native.fromJson(String(text)); }
  global.EJSON = Object.freeze({
    stringify: ejsonStringify,
    parse: ejsonParse,
    serialize(value, options) { return JSON.parse(ejsonStringify(value, options || {})); },
    deserialize(ejson) { return ejsonParse(JSON.stringify(ejson)); },
  });

  // Exposed for inspect.js and shell_api.js.
  Object.defineProperty(global, '__bsonUtil', {
    value: Object.freeze({ bytesToBase64, base64ToBytes, bytesToHex, hexToBytes, quote }),
  });
})(globalThis);

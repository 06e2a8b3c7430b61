// inspect.js: how values print, in mongosh's style.
//
// mongosh prints with Node's util.inspect (breakLength 80, compact 3, depth
// 6) plus custom forms for the BSON types. This is our own printer aiming at
// the same look:
//   - BSON types print as their constructor call: ObjectId('...'),
//     ISODate('...'), Long('...'), Decimal128('...'), UUID('...').
//   - Strings are single-quoted inside structures (bare at top level);
//     object keys are bare when they are identifiers.
//   - An object or array goes on one line when its entries fit in 80
//     columns and it nests at most 3 levels below; otherwise one entry per
//     line, indented by 2.
//   - Arrays of more than 6 short entries are laid out in aligned columns;
//     arrays show at most 100 elements ("... N more items"), strings at most
//     10000 characters ("... N more characters"); beyond depth 6 nested
//     values show as [Object] / [Array].
// __inspect(value, {top}) is the entry point; values with a
// [Symbol.for('rockdoc.inspect')](format) method print themselves.
(function (global) {
  'use strict';
  const inspectSymbol = Symbol.for('rockdoc.inspect');
  const BREAK_LENGTH = 80;
  const COMPACT = 3;
  const MAX_ARRAY = 100;
  const MAX_STRING = 10000;
  const MAX_DEPTH = 6;

  const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

  function escapeChar(ch, quote) {
    switch (ch) {
      case '\n': return '\\n';
      case '\t': return '\\t';
      case '\r': return '\\r';
      case '\b': return '\\b';
      case '\f': return '\\f';
      case '\v': return '\\v';
      case '\\': return '\\\\';
      default:
        if (ch === quote) return '\\' + ch;
        if (ch < ' ' || ch === '\x7f') return '\\x' + ch.charCodeAt(0).toString(16).padStart(2, '0');
        return ch;
    }
  }

  // Single quotes unless the text has some and no double quotes.
  function quoteString(s) {
    let quote = "'";
    if (s.includes("'")) {
      if (!s.includes('"')) quote = '"';
      else if (!s.includes('`') && !s.includes('${')) quote = '`';
    }
    let out = quote;
    for (const ch of s) out += escapeChar(ch, quote);
    return out + quote;
  }

  function formatString(s) {
    if (s.length > MAX_STRING) {
      const rest = s.length - MAX_STRING;
      return `${quoteString(s.slice(0, MAX_STRING))}... ${rest} more character${rest > 1 ? 's' : ''}`;
    }
    return quoteString(s);
  }

  function formatKey(key) {
    return IDENTIFIER.test(key) ? key : quoteString(key);
  }

  function formatNumber(n) {
    return Object.is(n, -0) ? '-0' : String(n);
  }

  function formatDate(d) {
    const t = d.getTime();
    return Number.isNaN(t) ? 'Invalid Date' : `ISODate('${d.toISOString()}')`;
  }

  function formatFunction(fn) {
    const src = Function.prototype.toString.call(fn);
    if (/^class\b/.test(src)) return `[class ${fn.name || '(anonymous)'}]`;
    return fn.name ? `[Function: ${fn.name}]` : '[Function (anonymous)]';
  }

  function constructorName(obj) {
    const proto = Object.getPrototypeOf(obj);
    if (proto === null) return '[Object: null prototype]';
    const ctor = proto.constructor;
    return ctor && typeof ctor.name === 'string' ? ctor.name : '';
  }

  function formatValue(ctx, value, level) {
    switch (typeof value) {
      case 'string': return formatString(value);
      case 'number': return formatNumber(value);
      case 'bigint': return `${value}n`;
      case 'boolean': return String(value);
      case 'undefined': return 'undefined';
      case 'symbol': return value.toString();
      case 'function':
        if (value._bsontype === 'MinKey' || value._bsontype === 'MaxKey') return `${value._bsontype}()`;
        return formatFunction(value);
      default: break;
    }
    if (value === null) return 'null';
    if (typeof value[inspectSymbol] === 'function') {
      return value[inspectSymbol]((inner) => formatValue(ctx, inner, level + 1));
    }
    if (value instanceof Date) return formatDate(value);
    if (value instanceof RegExp) return String(value);
    if (value instanceof Error) return formatErrorValue(value);
    if (ctx.seen.includes(value)) return '[Circular]';
    if (level > MAX_DEPTH) return Array.isArray(value) ? '[Array]' : '[Object]';
    if (value instanceof Map) {
      return formatEntries(ctx, value, level, `Map(${value.size}) `, ['{', '}'], false,
        Array.from(value, ([k, v]) => () => `${formatValue(ctx, k, level + 1)} => ${formatValue(ctx, v, level + 1)}`));
    }
    if (value instanceof Set) {
      return formatEntries(ctx, value, level, `Set(${value.size}) `, ['{', '}'], false,
        Array.from(value, (v) => () => formatValue(ctx, v, level + 1)));
    }
    if (value instanceof Promise) return 'Promise { <pending> }';
    if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
      return formatArrayLike(ctx, value, level, `${constructorName(value)}(${value.length}) `);
    }
    if (Array.isArray(value)) {
      const name = constructorName(value);
      return formatArrayLike(ctx, value, level, name === 'Array' ? '' : `${name}(${value.length}) `);
    }
    const name = constructorName(value);
    const prefix = name === 'Object' || name === '' ? '' : `${name} `;
    const keys = Object.keys(value);
    return formatEntries(ctx, value, level, prefix, ['{', '}'], false,
      keys.map((k) => () => `${formatKey(k)}: ${formatValue(ctx, value[k], level + 1)}`));
  }

  function formatArrayLike(ctx, arr, level, prefix) {
    const thunks = [];
    const shown = Math.min(arr.length, MAX_ARRAY);
    let holes = 0;
    const flushHoles = () => {
      if (holes > 0) {
        const n = holes;
        thunks.push(() => `<${n} empty item${n > 1 ? 's' : ''}>`);
        holes = 0;
      }
    };
    for (let i = 0; i < shown; i++) {
      if (!(i in arr)) {
        holes++;
        continue;
      }
      flushHoles();
      thunks.push(() => formatValue(ctx, arr[i], level + 1));
    }
    flushHoles();
    let more = '';
    if (arr.length > MAX_ARRAY) {
      const rest = arr.length - MAX_ARRAY;
      more = `... ${rest} more item${rest > 1 ? 's' : ''}`;
    }
    return formatEntries(ctx, arr, level, prefix, ['[', ']'], true, thunks, more,
      typeof arr[0] === 'number' || typeof arr[0] === 'bigint');
  }

  // Formats the entries (thunks, so that nesting state is tracked while
  // they run), then joins them on one line or several.
  function formatEntries(ctx, value, level, prefix, braces, isArray, thunks, more, numeric) {
    if (thunks.length === 0 && !more) return `${prefix}${braces[0]}${braces[1]}`;
    ctx.seen.push(value);
    ctx.currentDepth = level;
    ctx.indent += 2;
    const entries = thunks.map((t) => t());
    ctx.indent -= 2;
    ctx.seen.pop();
    let output = entries;
    // Only arrays of primitives go in columns: documents read best one per line.
    if (isArray && entries.length > 6 && allPrimitive(value)) {
      output = groupInColumns(ctx, entries, numeric && allNumeric(value));
    }
    if (more) output = output.concat([more]);
    // One line when nothing nests COMPACT levels below and it all fits.
    if (ctx.currentDepth - level < COMPACT && output.length === entries.length + (more ? 1 : 0)) {
      const start = output.length + ctx.indent + braces[0].length + prefix.length + 10;
      const total = output.reduce((sum, e) => sum + e.length, output.length + start);
      if (total <= BREAK_LENGTH && !output.some((e) => e.includes('\n'))) {
        return `${prefix}${braces[0]} ${output.join(', ')} ${braces[1]}`;
      }
    }
    const indentation = '\n' + ' '.repeat(ctx.indent);
    return `${prefix}${braces[0]}${indentation}  ${output.join(`,${indentation}  `)}${indentation}${braces[1]}`;
  }

  function allPrimitive(arr) {
    const n = Math.min(arr.length, MAX_ARRAY);
    for (let i = 0; i < n; i++) {
      if (arr[i] !== null && (typeof arr[i] === 'object' || typeof arr[i] === 'function')) return false;
    }
    return true;
  }

  function allNumeric(arr) {
    const n = Math.min(arr.length, MAX_ARRAY);
    for (let i = 0; i < n; i++) {
      if (typeof arr[i] !== 'number' && typeof arr[i] !== 'bigint') return false;
    }
    return true;
  }

  // Lays many short entries out in aligned columns, a few rows instead of
  // one entry per line. The shape aims at a block about 2.5 times as wide
  // as it is tall, judged on an "effective" cell width that discounts the
  // separator and the spread between the widest and the average entry; at
  // most 12 columns, and only as many as fit in the line. Numbers are
  // right-aligned, the rest left-aligned.
  function groupInColumns(ctx, entries, rightAlign) {
    if (entries.some((e) => e.includes('\n'))) return entries;
    const widths = entries.map((e) => e.length);
    const maxWidth = Math.max(...widths);
    const cell = maxWidth + 2;  // ", "
    if (cell * 3 + ctx.indent >= BREAK_LENGTH) return entries;
    const meanCell = widths.reduce((a, b) => a + b + 2, 0) / entries.length;
    // Entries of very unequal widths would waste space in columns.
    if (meanCell * 5 < cell * 1 && maxWidth > 6) return entries;
    const effective = Math.max(cell - 3 - Math.sqrt(cell - meanCell), 1);
    const fit = Math.floor((BREAK_LENGTH - ctx.indent) / cell);
    const shaped = Math.round(Math.sqrt(2.5 * effective * entries.length) / effective);
    const columns = Math.min(fit, 12, Math.max(shaped, 1));
    if (columns <= 1) return entries;
    const columnWidth = [];
    for (let c = 0; c < columns; c++) {
      let w = 0;
      for (let i = c; i < entries.length; i += columns) w = Math.max(w, widths[i]);
      columnWidth.push(w);
    }
    const rows = [];
    for (let i = 0; i < entries.length; i += columns) {
      const cells = [];
      const end = Math.min(i + columns, entries.length);
      for (let j = i; j < end; j++) {
        const last = j === end - 1;
        const text = last ? entries[j] : entries[j] + ',';
        const width = columnWidth[j - i] + (last ? 0 : 1);
        cells.push(rightAlign ? text.padStart(width) : (last ? text : text.padEnd(width)));
      }
      rows.push(cells.join(' '));
    }
    return rows;
  }

  function formatErrorValue(e) {
    let head = e.name || 'Error';
    // mongosh's own errors carry their code in the message ("[COMMON-10001]
    // ..."), and print without a second one.
    if (e.codeName && !/^\[[A-Z]+-\d+\] /.test(e.message || '')) head += `[${e.codeName}]`;
    return e.message ? `${head}: ${e.message}` : head;
  }

  // inspect(value, {top: true}) prints a top-level string bare, as mongosh
  // shows a string result.
  function inspect(value, options) {
    if (options && options.top && typeof value === 'string') return value;
    const ctx = { seen: [], indent: 0, currentDepth: 0 };
    return formatValue(ctx, value, 0);
  }

  Object.defineProperty(global, '__inspect', { value: inspect });
  Object.defineProperty(global, '__formatErrorValue', { value: formatErrorValue });
})(globalThis);

'use strict';
/*
 * benchwright's JavaScript/TypeScript test driver. Runs inside the sandbox, never in the harness:
 * `node jsrunner.js < job.json`. Node's standard library only (plus Debian's `typescript`
 * package for TypeScript). See src/benchwright/lang/javascript.py for the whole picture.
 *
 * One process runs one sample:
 *   1. read the job (solution, prelude, tests, limits, a nonce) from stdin; open the results
 *      file; every record goes there as `BWR <nonce> {json}` -- never to stdout;
 *   2. TypeScript: load the compiler (with a V8 code cache when the harness has one) and
 *      `transpileModule` every part, with source maps, so lines map back to the TypeScript;
 *      JavaScript: turn `export`/`import` lines into plain code, line for line;
 *   3. make one `vm` context whose global object is a null-prototype object: only ECMAScript's
 *      built-ins, plus what the in-context bootstrap (`bwBootstrap` below, compiled inside the
 *      context) defines: console, timers, assert, require('assert'), module/exports;
 *   4. run the solution, then the prelude, as top-level scripts; then each test case as a
 *      script `(async function (assert, require) { { <test> } })` handed to the bootstrap's
 *      `run`, which reports through a closure the context cannot reach. Every entry into model
 *      code goes through `Script.runInContext({timeout})`, with the context's own microtask
 *      queue (`microtaskMode: 'afterEvaluate'`), so a busy loop, synchronous or in promise
 *      callbacks, is stopped after the test's time limit; a test that returns a pending
 *      promise is awaited (its timers are fired, each run under the remaining time) until the
 *      limit;
 *   5. write a `done` record with the process's CPU time and peak RSS.
 */

const fs = require('fs');
const path = require('path');
const vm = require('vm');
const util = require('util');
const nodeAssert = require('assert');
const Module = require('module');
const crypto = require('crypto');

const isProxy = util.types.isProxy;
const HOST_OBJECT_PROTO = Object.prototype;
const MESSAGE_CAP = 8000;
/** Waits (ms) for a pending test promise once no timer is left, before it counts as stuck. */
const IDLE_TURNS_MS = [0, 1, 2, 5, 10, 25, 50, 100, 250];

// ------------------------------------------------------------------------------------------
// The bootstrap: compiled INSIDE the context (from this function's source), before any model
// code. It captures the built-ins it needs, so a solution that patches them later changes
// nothing here. It never lets an object of the driver's realm into the context: `bridge`
// functions take and return primitives (or the context's own values) and are only reachable
// through this closure; their exceptions are replaced by the context's own errors.
// ------------------------------------------------------------------------------------------
function bwBootstrap(bridge) {
  'use strict';
  const G = globalThis;
  const RApply = Reflect.apply;
  const ODefine = Object.defineProperty;
  const OFreeze = Object.freeze;
  const OCreate = Object.create;
  const OKeys = Object.keys;
  const OIsProto = Object.prototype.isPrototypeOf;
  const OHasOwn = Object.prototype.hasOwnProperty;
  const PThen = Promise.prototype.then;
  const PResolve = Promise.resolve;
  const PCtor = Promise;
  const Err = Error;
  const TypeErr = TypeError;
  const Str = String;
  const CaptureStack = Err.captureStackTrace;
  const MGet = Map.prototype.get;
  const MSet = Map.prototype.set;
  const MDel = Map.prototype.delete;
  const MClear = Map.prototype.clear;
  const RegExec = RegExp.prototype.exec;
  const timers = new Map();
  const bOut = bridge.out;
  const bCompare = bridge.compare;
  const bLast = bridge.last;
  const bInspect = bridge.inspect;
  const bIsRegExp = bridge.isRegExp;
  const bReport = bridge.report;
  const bTimer = bridge.timer;
  const bDue = bridge.due;
  const bNow = bridge.now;
  const bNeeds = bridge.needs;

  function host(fn, a, b, c, d) {
    try {
      return fn(a, b, c, d);
    } catch (e) {
      // the driver's error object never enters the context
      throw new Err('benchwright: the harness could not complete this call');
    }
  }
  function inspect(v) {
    const s = host(bInspect, v);
    return typeof s === 'string' ? s : '?';
  }
  function toStr(x) {
    if (typeof x === 'string') return x;
    try {
      return Str(x);
    } catch (e) {
      return '<unprintable>';
    }
  }
  function isError(x) {
    return x !== null && typeof x === 'object' && RApply(OIsProto, Err.prototype, [x]);
  }

  // ---- assert (node's API; comparisons and messages by node's own assert in the driver)
  class AssertionError extends Err {
    constructor(options) {
      const o = options !== null && typeof options === 'object' ? options : {};
      super(o.message === undefined ? 'Failed' : toStr(o.message));
      // own data properties (a solution's setters on Error.prototype are not called)
      ODefine(this, 'name', { value: 'AssertionError', writable: true, configurable: true });
      ODefine(this, 'code', { value: 'ERR_ASSERTION', writable: true, configurable: true, enumerable: true });
      ODefine(this, 'actual', { value: o.actual, writable: true, configurable: true, enumerable: true });
      ODefine(this, 'expected', { value: o.expected, writable: true, configurable: true, enumerable: true });
      ODefine(this, 'operator', { value: o.operator, writable: true, configurable: true, enumerable: true });
      ODefine(this, 'generatedMessage', { value: !o.userMessage, writable: true, configurable: true, enumerable: true });
    }
  }
  function fail(generated, actual, expected, operator, message, start) {
    if (isError(message)) throw message;
    let text = generated;
    if (message !== undefined) {
      text = toStr(message);
      if (generated) text += '\n' + generated;
    }
    const err = new AssertionError({
      message: text, actual, expected, operator, userMessage: message !== undefined,
    });
    CaptureStack(err, start);
    throw err;
  }
  function compare(op, actual, expected, message, start) {
    const r = host(bCompare, op, actual, expected);
    if (r === 0) return;
    const text = host(bLast);
    if (r === 1) fail(typeof text === 'string' ? text : 'assertion failed', actual, expected, op, message, start);
    throw new Err(typeof text === 'string' ? text : 'the comparison failed');
  }
  function ok(value, message) {
    if (!value) fail('The expression evaluated to a falsy value: ' + inspect(value), value, true, '==', message, ok);
  }
  const assert = function assert(value, message) {
    if (!value) fail('The expression evaluated to a falsy value: ' + inspect(value), value, true, '==', message, assert);
  };
  function define(target, name, fn) {
    ODefine(target, name, { value: fn, enumerable: true });
  }
  function comparer(op) {
    const f = function (actual, expected, message) {
      compare(op, actual, expected, message, f);
    };
    ODefine(f, 'name', { value: op });
    return f;
  }
  function checkThrown(err, expected, message, start) {
    if (expected === undefined) return;
    if (typeof expected === 'function') {
      if (expected.prototype !== undefined && err instanceof expected) return;
      if (expected === Err || RApply(OIsProto, Err, [expected])) throw err;
      const res = RApply(expected, undefined, [err]);
      if (res !== true) {
        fail('The validation function is expected to return "true". Received ' + inspect(res) +
             '\n\nCaught error:\n\n' + inspect(err), err, expected, 'throws', message, start);
      }
      return;
    }
    if (host(bIsRegExp, expected) === true) {
      const s = toStr(err);
      if (RApply(RegExec, expected, [s]) === null) {
        fail('The input did not match the regular expression ' + inspect(expected) +
             '. Input:\n\n' + inspect(s), err, expected, 'throws', message, start);
      }
      return;
    }
    if (expected !== null && typeof expected === 'object') {
      const keys = OKeys(expected);
      if (isError(expected)) {
        keys[keys.length] = 'name';
        keys[keys.length] = 'message';
      }
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k];
        const want = expected[key];
        const got = err !== null && (typeof err === 'object' || typeof err === 'function') ? err[key] : undefined;
        if (typeof got === 'string' && host(bIsRegExp, want) === true && RApply(RegExec, want, [got]) !== null) continue;
        if (host(bCompare, 'deepStrictEqual', got, want) !== 0) {
          fail('Expected values to be strictly deep-equal in property ' + inspect(key) + ': ' +
               inspect(got) + ' !== ' + inspect(want), err, expected, 'throws', message, start);
        }
      }
      return;
    }
    throw new TypeErr('The "expected" argument must be a function, a RegExp or an object');
  }
  function throws(fn, expected, message) {
    if (typeof fn !== 'function') throw new TypeErr('The "fn" argument must be of type function');
    if (typeof expected === 'string' && message === undefined) {
      message = expected;
      expected = undefined;
    }
    let threw = false;
    let err;
    try {
      fn();
    } catch (e) {
      threw = true;
      err = e;
    }
    if (!threw) fail('Missing expected exception.', undefined, expected, 'throws', message, throws);
    checkThrown(err, expected, message, throws);
  }
  function doesNotThrow(fn, expected, message) {
    if (typeof fn !== 'function') throw new TypeErr('The "fn" argument must be of type function');
    if (typeof expected === 'string') message = expected;
    try {
      fn();
    } catch (e) {
      fail('Got unwanted exception.\nActual message: ' + inspect(isError(e) ? e.message : e), e, undefined, 'doesNotThrow', message, doesNotThrow);
    }
  }
  async function rejects(promiseOrFn, expected, message) {
    if (typeof expected === 'string' && message === undefined) {
      message = expected;
      expected = undefined;
    }
    const p = typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn;
    let threw = false;
    let err;
    try {
      await p;
    } catch (e) {
      threw = true;
      err = e;
    }
    if (!threw) fail('Missing expected rejection.', undefined, expected, 'rejects', message, rejects);
    checkThrown(err, expected, message, rejects);
  }
  async function doesNotReject(promiseOrFn, expected, message) {
    if (typeof expected === 'string') message = expected;
    const p = typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn;
    try {
      await p;
    } catch (e) {
      fail('Got unwanted rejection.\nActual message: ' + inspect(isError(e) ? e.message : e), e, undefined, 'doesNotReject', message, doesNotReject);
    }
  }
  function match(string, regexp, message) {
    if (host(bIsRegExp, regexp) !== true) throw new TypeErr('The "regexp" argument must be an instance of RegExp');
    if (typeof string !== 'string' || RApply(RegExec, regexp, [string]) === null) {
      fail('The input did not match the regular expression ' + inspect(regexp) + '. Input:\n\n' + inspect(string),
           string, regexp, 'match', message, match);
    }
  }
  function doesNotMatch(string, regexp, message) {
    if (host(bIsRegExp, regexp) !== true) throw new TypeErr('The "regexp" argument must be an instance of RegExp');
    if (typeof string !== 'string' || RApply(RegExec, regexp, [string]) !== null) {
      fail('The input was expected to not match the regular expression ' + inspect(regexp) + '. Input:\n\n' + inspect(string),
           string, regexp, 'doesNotMatch', message, doesNotMatch);
    }
  }
  function failFn(message) {
    if (isError(message)) throw message;
    fail(message === undefined ? 'Failed' : '', undefined, undefined, 'fail', message, failFn);
  }
  function ifError(value) {
    if (value !== null && value !== undefined) {
      fail('ifError got unwanted exception: ' + inspect(isError(value) ? value.message : value), value, null, 'ifError', undefined, ifError);
    }
  }
  function fill(target, strict) {
    define(target, 'ok', ok);
    define(target, 'fail', failFn);
    define(target, 'throws', throws);
    define(target, 'doesNotThrow', doesNotThrow);
    define(target, 'rejects', rejects);
    define(target, 'doesNotReject', doesNotReject);
    define(target, 'match', match);
    define(target, 'doesNotMatch', doesNotMatch);
    define(target, 'ifError', ifError);
    define(target, 'AssertionError', AssertionError);
    const names = ['strictEqual', 'notStrictEqual', 'deepStrictEqual', 'notDeepStrictEqual'];
    for (let k = 0; k < names.length; k++) define(target, names[k], comparer(names[k]));
    define(target, 'equal', comparer(strict ? 'strictEqual' : 'equal'));
    define(target, 'notEqual', comparer(strict ? 'notStrictEqual' : 'notEqual'));
    define(target, 'deepEqual', comparer(strict ? 'deepStrictEqual' : 'deepEqual'));
    define(target, 'notDeepEqual', comparer(strict ? 'notDeepStrictEqual' : 'notDeepEqual'));
  }
  const strict = function strict(value, message) {
    if (!value) fail('The expression evaluated to a falsy value: ' + inspect(value), value, true, '==', message, strict);
  };
  fill(assert, false);
  fill(strict, true);
  define(assert, 'strict', strict);
  define(strict, 'strict', strict);
  OFreeze(strict);
  OFreeze(assert);
  OFreeze(AssertionError);
  OFreeze(AssertionError.prototype);

  const modules = OCreate(null);
  modules.assert = assert;
  modules['node:assert'] = assert;
  modules['assert/strict'] = strict;
  modules['node:assert/strict'] = strict;
  const require = function require(name) {
    if (typeof name === 'string' && RApply(OHasOwn, modules, [name])) return modules[name];
    const text = toStr(name);
    // an npm package (not one of node's modules, not a file): the driver notes it, and the
    // sample is reported as needing what the sandbox cannot offer, not as the model's failure
    const npm = host(bNeeds, text) === true;
    const err = new Err("Cannot find module '" + text + "': " + (npm
      ? "an npm package, and benchwright's sandbox has none (only node's 'assert' module)"
      : "only 'assert' (node:assert, assert/strict) is available in benchwright's sandbox"));
    err.code = 'MODULE_NOT_FOUND';
    throw err;
  };
  OFreeze(require);

  // ---- console: formatted by the driver (util.format, custom inspectors off), kept per test
  function out(stream) {
    return function (...args) {
      host(bOut, stream, args);
    };
  }
  // console.assert prints like node's ("Assertion failed[: message]" on stderr) and, inside a
  // test, makes it fail (node's own only prints); the test goes on, as after node's
  let soft = null; // { t: token, text: messages, stack: of the first }
  function consoleAssert(value, ...args) {
    if (value) return;
    let text = 'Assertion failed';
    if (args.length > 0) {
      let parts = '';
      for (let k = 0; k < args.length && k < 100; k++) {
        const a = args[k];
        parts += (k > 0 ? ' ' : '') + (typeof a === 'string' ? a : inspect(a));
      }
      text += ': ' + parts;
    }
    host(bOut, 2, [text]);
    let stack = '';
    try {
      const e = new Err(text);
      CaptureStack(e, consoleAssert);
      stack = typeof e.stack === 'string' ? e.stack : '';
    } catch (x) { /* no stack */ }
    const where = 'console.assert: ' + text;
    if (soft === null || soft.t !== token) soft = { t: token, text: where, stack, count: 1 };
    else if (soft.count < 20) soft = { t: token, text: soft.text + '\n' + where, stack: soft.stack, count: soft.count + 1 };
  }
  const console = {
    log: out(1), info: out(1), debug: out(1), dir: out(1), table: out(1),
    error: out(2), warn: out(2), trace: out(2), assert: consoleAssert,
  };
  // the tests get a frozen copy as a parameter: a solution that patches the global console's
  // `assert` (or replaces the console) changes nothing for them
  const testConsole = OFreeze({
    log: console.log, info: console.info, debug: console.debug, dir: console.dir, table: console.table,
    error: console.error, warn: console.warn, trace: console.trace, assert: consoleAssert,
  });

  // ---- timers: virtual ids; the driver fires due ones (only while a test is awaited)
  let nextTimer = 1;
  function addTimer(cb, ms, args, repeat) {
    if (typeof cb !== 'function') throw new TypeErr('The "callback" argument must be of type function');
    let delay = +ms;
    if (!(delay >= 1 && delay <= 2147483647)) delay = 1;
    const id = nextTimer++;
    RApply(MSet, timers, [id, { cb, args, repeat: repeat ? delay : 0 }]);
    host(bTimer, 1, id, delay);
    return id;
  }
  function clearTimer(id) {
    if (typeof id === 'number') {
      RApply(MDel, timers, [id]);
      host(bTimer, 0, id, 0);
    }
  }
  const globals = {
    console,
    setTimeout(cb, ms, ...args) { return addTimer(cb, ms, args, false); },
    setInterval(cb, ms, ...args) { return addTimer(cb, ms, args, true); },
    setImmediate(cb, ...args) { return addTimer(cb, 0, args, false); },
    clearTimeout: clearTimer,
    clearInterval: clearTimer,
    clearImmediate: clearTimer,
    queueMicrotask(cb) {
      if (typeof cb !== 'function') throw new TypeErr('The "callback" argument must be of type function');
      RApply(PThen, RApply(PResolve, PCtor, []), [function () { try { cb(); } catch (e) { uncaught(e); } }]);
    },
    performance: { now() { const t = host(bNow); return typeof t === 'number' ? t : 0; } },
    assert,
    require,
    global: G,
  };
  const gnames = OKeys(globals);
  for (let k = 0; k < gnames.length; k++) {
    ODefine(G, gnames[k], { value: globals[gnames[k]], writable: true, configurable: true, enumerable: false });
  }
  const module = { exports: {} };
  ODefine(G, 'module', { value: module, writable: true, configurable: true });
  ODefine(G, 'exports', { value: module.exports, writable: true, configurable: true });

  // ---- running tests
  let token = 0;
  function describe(e) {
    let status = 'error';
    let message = '';
    let stack = '';
    try {
      if ((typeof e === 'object' && e !== null) || typeof e === 'function') {
        let code, st, msg, name;
        try { code = e.code; } catch (x) { /* a throwing getter */ }
        if (code === 'ERR_ASSERTION') status = 'fail';
        try { st = e.stack; } catch (x) { /* idem */ }
        if (typeof st === 'string') stack = st;
        try { msg = e.message; name = e.name; } catch (x) { /* idem */ }
        if (status === 'fail') {
          message = msg === undefined ? 'AssertionError' : toStr(msg);
        } else if (msg === undefined && name === undefined) {
          message = 'Uncaught ' + inspect(e);
        } else {
          message = (name === undefined ? 'Error' : toStr(name)) + (msg === undefined || msg === '' ? '' : ': ' + toStr(msg));
        }
      } else {
        message = 'Uncaught ' + inspect(e);
      }
    } catch (x) {
      message = 'an exception whose details could not be read';
    }
    return [status, message, stack];
  }
  function report(t, status, message, stack) {
    host(bReport, t, status, message, stack);
  }
  function reportError(t, e) {
    const d = describe(e);
    report(t, d[0], d[1], d[2]);
  }
  function uncaught(e) {
    const d = describe(e);
    report(token, d[0] === 'fail' ? 'fail' : 'error', 'uncaught exception in a callback: ' + d[1], d[2]);
  }
  const api = OCreate(null);
  api.arm = function (t) { token = t; };
  // the test scripts call this (it reaches them through a global that is gone before the
  // test's own code runs)
  api.run = function (fn) {
    const t = token;
    let p;
    try {
      p = fn(assert, require, testConsole);
    } catch (e) {
      reportError(t, e);
      return;
    }
    RApply(PThen, p, [function () {
      if (soft !== null && soft.t === t) report(t, 'fail', soft.text, soft.stack);
      else report(t, 'pass', '', '');
    }, function (e) { reportError(t, e); }]);
  };
  let pending;
  api.hold = function (e) { pending = e; };
  api.describeHeld = function () {
    const e = pending;
    pending = undefined;
    reportError(token, e);
  };
  api.fire = function () {
    for (;;) {
      const id = host(bDue);
      if (typeof id !== 'number' || id < 0) return;
      const t = RApply(MGet, timers, [id]);
      if (t === undefined) continue;
      if (t.repeat) host(bTimer, 1, id, t.repeat);
      else RApply(MDel, timers, [id]);
      try {
        RApply(t.cb, undefined, t.args);
      } catch (e) {
        uncaught(e);
      }
    }
  };
  api.clearTimers = function () { RApply(MClear, timers, []); };
  // `import()` anywhere in the context (eval and new Function included) ends here: an error
  // of the context's own, never node's (whose error objects belong to the driver's realm)
  api.importError = function (specifier) {
    const err = new Err("Cannot import '" + specifier + "': only 'assert' (through require) is available in benchwright's sandbox");
    ODefine(err, 'code', { value: 'ERR_MODULE_NOT_FOUND', writable: true, configurable: true, enumerable: true });
    return err;
  };
  // exports of a CommonJS/ES-module-style solution become globals the tests can call
  api.publish = function () {
    const ex = G.module !== null && typeof G.module === 'object' ? G.module.exports : module.exports;
    const sources = [ex, G.exports];
    for (let s = 0; s < 2; s++) {
      const src = sources[s];
      if (typeof src === 'function') {
        const n = src.name;
        if (typeof n === 'string' && n !== '' && !(n in G)) G[n] = src;
      }
      if (src === null || (typeof src !== 'object' && typeof src !== 'function')) continue;
      const keys = OKeys(src);
      for (let k = 0; k < keys.length; k++) {
        const key = keys[k];
        const v = src[key];
        if (key === 'default') {
          if (typeof v === 'function' && typeof v.name === 'string' && v.name !== '' && !(v.name in G)) G[v.name] = v;
          continue;
        }
        if (!(key in G)) G[key] = v;
      }
    }
  };
  OFreeze(api);
  return api;
}

// ------------------------------------------------------------------------------------------
// The driver (this realm). Never passes one of its own objects into the context.
// ------------------------------------------------------------------------------------------

function main() {
  if (process.argv[2] === '--transpile') {
    transpileServer(process.argv[3], process.argv[4]);
    return;
  }
  const job = JSON.parse(fs.readFileSync(0, 'utf8'));
  const fd = fs.openSync(job.results, 'w');
  const prefix = 'BWR ' + job.nonce + ' ';
  const emit = (rec) => {
    fs.writeSync(fd, prefix + JSON.stringify(rec) + '\n');
  };
  const started = process.hrtime.bigint();
  emit({ ev: 'begin' });

  let ts = null;
  if (job.language === 'typescript' && !job.transpiled) {
    ts = loadTypeScript(job.typescript);
    if (job.typescript.cache_out) {
      warmTypeScript(ts.ts);
      fs.writeFileSync(job.typescript.cache_out, ts.script.createCachedData());
      emit({ ev: 'cache', rejected: ts.script.cachedDataRejected === true });
      emit({ done: true, ...usage() });
      return;
    }
  }
  // a promise of the sample rejected with no handler: node would end the process; here it
  // changes nothing (the reason is a value of the context: not even read)
  process.on('unhandledRejection', () => {});
  // an exception of the context thrown where node calls the sample outside a script run
  // (a FinalizationRegistry callback): ignored likewise; one of the driver's own is a bug
  process.on('uncaughtException', (e) => {
    if (!isHostObject(e)) return;
    process.stderr.write('benchwright jsrunner internal error: ' + (e && e.stack) + '\n');
    process.exit(70);
  });
  const runner = new Runner(job, ts, emit);
  runner.start().then(() => {
    emit({ done: true, ...usage(), wall_ms: Number(process.hrtime.bigint() - started) / 1e6,
      typescript_cache: ts ? { true: 'rejected', false: 'used' }[ts.script.cachedDataRejected] || 'none'
        : job.transpiled ? 'transpiler' : undefined });
    fs.closeSync(fd);
    process.exit(0);
  }, (e) => {
    process.stderr.write('benchwright jsrunner internal error: ' + (e && e.stack) + '\n');
    process.exit(70);
  });
}

function usage() {
  const cpu = process.cpuUsage();
  return { cpu_ms: (cpu.user + cpu.system) / 1000, max_rss_bytes: process.resourceUsage().maxRSS * 1024 };
}

/** A test case's script: its code wrapped in the function the bridge runs. */
function testSource(key, code) {
  // `this` at a script's top level is the global object: a solution cannot replace it
  // names no test would use: the wrapper's own variables shadow the solution's globals
  const header = '(function (__bwG, __bwK) { const __bwB = __bwG[__bwK]; delete __bwG[__bwK]; ' +
    'return __bwB.run(async function (assert, require, console) { {\n';
  return header + withNewline(code) + '} }); })(this, ' + JSON.stringify(key) + ');\n';
}

// ---- TypeScript -------------------------------------------------------------------------

/** Every part of a sample's job transpiled as the runner would ({js, map, errors} each). */
function transpileJob(ts, job) {
  const prelude = job.prelude ? withNewline(job.prelude) : '';
  return {
    solution: transpile(ts, withNewline(job.solution), 'solution.ts'),
    prelude: prelude ? transpile(ts, prelude, 'prelude.ts') : null,
    tests: job.tests.map((t, i) => transpile(ts, testSource(job.key, t.code), `test-${i}.ts`)),
  };
}

/** `node jsrunner.js --transpile <typescript folder> [<code cache>]`: a warm transpiler. Says
 * `BWT ready`, then answers each job line (`{"nonce", "key", "solution", "prelude", "tests"}`)
 * with `BWT <nonce> {"transpiled": ...}` (or `{"error": ...}`). It runs none of the code. */
function transpileServer(folder, cache) {
  const ts = loadTypeScript({ path: folder, cache }).ts;
  warmTypeScript(ts);
  process.stdout.write('BWT ready\n');
  const lines = require('readline').createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => {
    let job;
    try {
      job = JSON.parse(line);
    } catch (e) {
      process.exit(65);
    }
    let answer;
    try {
      answer = { transpiled: transpileJob(ts, job) };
    } catch (e) {
      answer = { error: String(e && e.message).slice(0, 2000) };
    }
    process.stdout.write('BWT ' + job.nonce + ' ' + JSON.stringify(answer) + '\n');
  });
  lines.on('close', () => process.exit(0));
}

function loadTypeScript(opts) {
  const pkgDir = opts.path;
  let main = 'lib/typescript.js';
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
    if (typeof pkg.main === 'string') main = pkg.main;
  } catch (e) { /* the default */ }
  const file = path.resolve(pkgDir, main);
  const source = fs.readFileSync(file, 'utf8');
  let cachedData;
  if (opts.cache) {
    try {
      cachedData = fs.readFileSync(opts.cache);
    } catch (e) { /* none */ }
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  const fn = script.runInThisContext();
  const mod = { exports: {} };
  fn.call(mod.exports, mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  return { ts: mod.exports, script };
}

const WARM_TS = `
import { strict as assert } from "assert";
export interface Point<T = number> { x: T; y?: T; readonly tags: string[] }
type Pair = [number, string] | null;
enum Color { Red = 1, Green, Blue }
export abstract class Shape implements Iterable<number> {
  private static count = 0;
  protected constructor(public readonly name: string, private sides: number = 0) { Shape.count++; }
  abstract area(): number;
  *[Symbol.iterator](): Iterator<number> { for (let i = 0; i < this.sides; i++) yield i; }
  get label(): string { return \`\${this.name}:\${this.sides}\`; }
}
export function collapse<T extends string>(text: T, opts?: { sep?: string }): string {
  const parts: string[] = [];
  let i = 0;
  while (i < text.length) {
    let j = i;
    while (j < text.length && text[j] === text[i]) j++;
    parts.push(j - i > 1 ? text[i] + String(j - i) : text[i]!);
    i = j;
  }
  const m = new Map<string, number>(); const s = new Set<number>([1, 2]);
  for (const [k, v] of m) { if (k as unknown as number > v) break; }
  const f = async (x: number): Promise<number> => { await null; return x ?? 0; };
  void f; void s; void Color.Red; let p: Pair = null; p = [1, "a"]; void p;
  return parts.join(opts?.sep ?? "");
}
namespace NS { export const k = 1; }
declare const ambient: number;
export default collapse;
assert.equal(collapse("aab"), "a2b");
label: for (const x of [1, 2, 3]) { switch (x) { case 1: continue label; default: break label; } }
try { throw new Error("x"); } catch { } finally { }
const o = { a: 1, ...{ b: 2 }, c() { return this.a; } }; const { a, ...rest } = o; void a; void rest;
const big = 10n ** 20n; const re = /a+b/giu; void big; void re; void NS.k;
`;

function warmTypeScript(ts) {
  for (let k = 0; k < 3; k++) {
    transpile(ts, WARM_TS, 'warm.ts');
    transpile(ts, 'function f(x: number {\n  return x\n}\n', 'bad.ts');
  }
}

function transpile(ts, source, fileName) {
  const out = ts.transpileModule(source, {
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.CommonJS,
      sourceMap: true,
      esModuleInterop: true,
      newLine: ts.NewLineKind.LineFeed,
      removeComments: false,
    },
    fileName,
    reportDiagnostics: true,
  });
  const errors = [];
  for (const d of out.diagnostics || []) {
    if (d.category !== ts.DiagnosticCategory.Error) continue;
    let line = null;
    let col = null;
    if (d.file && typeof d.start === 'number') {
      const pos = d.file.getLineAndCharacterOfPosition(d.start);
      line = pos.line + 1;
      col = pos.character + 1;
    }
    errors.push({ line, col, code: d.code, text: ts.flattenDiagnosticMessageText(d.messageText, '\n') });
  }
  const js = out.outputText.replace(/\n\/\/# sourceMappingURL=\S*\s*$/, '\n');
  const map = out.sourceMapText ? lineMap(JSON.parse(out.sourceMapText).mappings) : [];
  return { js, map, errors };
}

const VLQ = {};
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').forEach((c, i) => { VLQ[c] = i; });

/** generated line (0-based) -> source line (0-based) or -1, from a source map's mappings. */
function lineMap(mappings) {
  const result = [];
  let srcLine = 0;
  const lines = mappings.split(';');
  for (let g = 0; g < lines.length; g++) {
    let first = -1;
    for (const seg of lines[g].split(',')) {
      if (!seg) continue;
      const fields = [];
      let value = 0;
      let shift = 0;
      for (const ch of seg) {
        const digit = VLQ[ch];
        value += (digit & 31) << shift;
        if (digit & 32) {
          shift += 5;
        } else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      if (fields.length >= 4) {
        srcLine += fields[2];
        if (first < 0) first = srcLine;
      }
    }
    result.push(first);
  }
  // a line without a mapping of its own takes the previous line's
  for (let g = 1; g < result.length; g++) if (result[g] < 0) result[g] = result[g - 1];
  return result;
}

// ---- JavaScript module syntax -----------------------------------------------------------

/** `export`/`import` lines as plain CommonJS-ish code, line for line (no line moves). */
function plainModuleSyntax(code) {
  if (!/^\s*(export|import)\b/m.test(code)) return code;
  return code.split('\n').map((line) => {
    let m;
    if ((m = /^(\s*)export\s+default\s+(?=(async\s+)?function\b|class\b)(.*)$/.exec(line))) {
      const named = /^(?:async\s+)?(?:function\s*\*?|class)\s*([A-Za-z_$][\w$]*)/.exec(m[3]);
      if (named) return m[1] + m[3];
      return m[1] + 'module.exports.default = ' + m[3];
    }
    if ((m = /^(\s*)export\s+(?=(async\s+)?function\b|class\b|const\b|let\b|var\b)(.*)$/.exec(line))) {
      return m[1] + m[3];
    }
    if ((m = /^(\s*)export\s+default\s+(.*)$/.exec(line))) return m[1] + 'module.exports.default = ' + m[2];
    if ((m = /^(\s*)export\s*\{([^}]*)\}\s*(?:from\s*(['"][^'"]*['"]))?\s*;?\s*$/.exec(line))) {
      const parts = m[2].split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
        const [local, exported] = s.split(/\s+as\s+/);
        return 'module.exports[' + JSON.stringify(exported || local) + '] = ' +
          (m[3] ? 'require(' + m[3] + ')[' + JSON.stringify(local) + ']' : local) + ';';
      });
      return m[1] + parts.join(' ');
    }
    if ((m = /^(\s*)import\s+([A-Za-z_$][\w$]*)\s+from\s*(['"][^'"]*['"])\s*;?\s*$/.exec(line))) {
      return m[1] + 'const ' + m[2] + ' = require(' + m[3] + ');';
    }
    if ((m = /^(\s*)import\s+\*\s+as\s+([A-Za-z_$][\w$]*)\s+from\s*(['"][^'"]*['"])\s*;?\s*$/.exec(line))) {
      return m[1] + 'const ' + m[2] + ' = require(' + m[3] + ');';
    }
    if ((m = /^(\s*)import\s*\{([^}]*)\}\s*from\s*(['"][^'"]*['"])\s*;?\s*$/.exec(line))) {
      const names = m[2].split(',').map((s) => s.trim()).filter(Boolean).map((s) => s.replace(/\s+as\s+/, ': '));
      return m[1] + 'const { ' + names.join(', ') + ' } = require(' + m[3] + ');';
    }
    if ((m = /^(\s*)import\s*(['"][^'"]*['"])\s*;?\s*$/.exec(line))) return m[1] + 'require(' + m[2] + ');';
    return line;
  }).join('\n');
}

// ---- running one sample -----------------------------------------------------------------

function countLines(text) {
  let n = 0;
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) === 10) n++;
  return n;
}

function withNewline(text) {
  return text.endsWith('\n') ? text : text + '\n';
}

function clip(text, cap) {
  return text.length <= cap ? text : text.slice(0, cap) + '\n... [truncated]';
}

/** Is this a value of the driver's realm (safe to read), not the context's? Touches no trap. */
function isHostObject(value) {
  let o = value;
  for (let depth = 0; depth < 100 && o !== null && (typeof o === 'object' || typeof o === 'function'); depth++) {
    if (isProxy(o)) return false;
    if (o === HOST_OBJECT_PROTO) return true;
    o = Object.getPrototypeOf(o);
  }
  return false;
}

class Runner {
  constructor(job, ts, emit) {
    this.job = job;
    this.ts = ts;
    this.emit = emit;
    this.tsMode = job.language === 'typescript';
    this.ext = this.tsMode ? '.ts' : '.js';
    this.solution = withNewline(job.solution);
    this.prelude = job.prelude ? withNewline(job.prelude) : '';
    this.solLines = countLines(this.solution);
    this.preLines = countLines(this.prelude);
    this.cap = job.output_cap;
    this.key = typeof job.key === 'string' && /^__bw_[0-9a-f]{24}$/.test(job.key)
      ? job.key : '__bw_' + crypto.randomBytes(12).toString('hex');
    /** TypeScript only: the parts transpiled by a warm transpiler (`--transpile`), or null. */
    this.pre = this.tsMode && job.transpiled && typeof job.transpiled === 'object' ? job.transpiled : null;
    this.timers = new Map(); // id -> due (ms, performance.now)
    this.output = '';
    this.outputFull = false;
    this.token = 0;
    this.result = null;
    this.lastMessage = '';
    this.needed = new Set();
    /** file name -> function(line in script) -> line in the code shown for a test */
    this.files = new Map();
  }

  // ---- the bridge: the only driver functions the context can call (via the bootstrap)
  bridge() {
    const self = this;
    const safe = (fn, fallback) => function (a, b, c, d) {
      try {
        return fn(a, b, c, d);
      } catch (e) {
        return fallback;
      }
    };
    return Object.freeze({
      out: safe((stream, args) => {
        if (self.outputFull) return undefined;
        const list = [];
        const n = args.length;
        for (let k = 0; k < n && k < 1000; k++) list.push(args[k]);
        let text = util.formatWithOptions({ customInspect: false, depth: 4, maxStringLength: self.cap },
          ...list) + '\n';
        if (self.output.length + text.length > self.cap) {
          text = text.slice(0, Math.max(0, self.cap - self.output.length)) + '\n... [output truncated]\n';
          self.outputFull = true;
        }
        self.output += text;
        return undefined;
      }, undefined),
      compare: safe((op, actual, expected) => {
        try {
          nodeAssert[op](actual, expected);
          return 0;
        } catch (e) {
          if (isHostObject(e) && e instanceof nodeAssert.AssertionError) {
            self.lastMessage = clip(String(e.message).replace(/\n+$/, ''), MESSAGE_CAP);
            return 1;
          }
          self.lastMessage = 'the comparison itself threw: ' + self.describeForeign(e);
          return 2;
        }
      }, 2),
      last: safe(() => self.lastMessage, ''),
      inspect: safe((v) => clip(util.inspect(v, { customInspect: false, depth: 4, breakLength: Infinity }), MESSAGE_CAP), '?'),
      isRegExp: safe((v) => util.types.isRegExp(v), false),
      report: safe((token, status, message, stack) => {
        if (token !== self.token || self.result !== null) return undefined;
        if (!['pass', 'fail', 'error'].includes(status)) return undefined;
        self.result = {
          status,
          message: typeof message === 'string' ? clip(message, MESSAGE_CAP) : null,
          stack: typeof stack === 'string' ? stack.slice(0, 20000) : '',
        };
        return undefined;
      }, undefined),
      timer: safe((op, id, delay) => {
        if (typeof id !== 'number') return undefined;
        if (op === 1 && typeof delay === 'number') self.timers.set(id, performance.now() + delay);
        else self.timers.delete(id);
        return undefined;
      }, undefined),
      due: safe(() => {
        const now = performance.now();
        let best = -1;
        let bestDue = Infinity;
        for (const [id, due] of self.timers) {
          if (due <= now && due < bestDue) {
            best = id;
            bestDue = due;
          }
        }
        if (best >= 0) self.timers.delete(best);
        return best;
      }, -1),
      now: safe(() => performance.now(), 0),
      needs: safe((name) => self.needs(name), false),
    });
  }

  /** Whether `name` is an npm package (not one of node's modules, not a path); each one is
   * recorded once (`{ev: 'needs'}`), for the harness to report the sample as needing it. */
  needs(name) {
    if (typeof name !== 'string' || name === '' || name.length > 214) return false;
    if (/^(node:|\.|\/)/.test(name) || Module.builtinModules.includes(name)) return false;
    const m = /^(@[^/]+\/[^/]+|[^/]+)/.exec(name);
    const pkg = m ? m[1] : name;
    if (!this.needed.has(pkg) && this.needed.size < 20) {
      this.needed.add(pkg);
      this.emit({ ev: 'needs', module: pkg });
    }
    return true;
  }

  /** Text for a value of unknown realm, without running its code outside a time limit. */
  describeForeign(e) {
    if (isHostObject(e)) return String(e && e.message !== undefined ? e.message : e);
    return 'an exception';
  }

  takeOutput() {
    const text = this.output;
    this.output = '';
    this.outputFull = false;
    return text;
  }

  /** Lines of a script (1-based) -> lines in a test's code (solution + prelude + test). */
  lineIn(stack) {
    if (typeof stack !== 'string') return null;
    for (const raw of stack.split('\n')) {
      const m = /(?:\(|\s|^)([^\s()]+):(\d+):(\d+)\)?\s*$/.exec(raw);
      if (!m) continue;
      const map = this.files.get(m[1]);
      if (!map) continue;
      const line = map(Number(m[2]));
      if (line !== null) return line;
    }
    return null;
  }

  /** A script's line mapper: generated line -> source line (TypeScript) -> shown line. */
  mapper(base, srcMap, srcShift, srcLines) {
    return (scriptLine) => {
      let src = scriptLine - 1; // 0-based line of the source given to the compiler
      if (srcMap) {
        const g = scriptLine - 1;
        if (g < 0 || g >= srcMap.length || srcMap[g] < 0) return null;
        src = srcMap[g];
      }
      const local = src - srcShift; // 0-based line in the part as written
      if (local < 0 || local >= srcLines) return null;
      return base + local + 1;
    };
  }

  // ---- preparing the code

  /** {js, map, errors} for a top-level part (solution or prelude). */
  prepareTop(source, fileName) {
    if (this.pre) return fileName.startsWith('solution') ? this.pre.solution : this.pre.prelude;
    if (this.tsMode) return transpile(this.ts.ts, source, fileName);
    return { js: plainModuleSyntax(source), map: null, errors: [] };
  }

  testScript(i, code) {
    if (this.pre) return this.pre.tests[i];
    const source = testSource(this.key, code);
    if (this.tsMode) return transpile(this.ts.ts, source, `test-${i}.ts`);
    return { js: source, map: null, errors: [] };
  }

  /** Options of every script compiled for the context. */
  scriptOptions(filename) {
    return { filename, importModuleDynamically: this.refuseImport };
  }

  compile(js, filename) {
    try {
      return { script: new vm.Script(js, this.scriptOptions(filename)) };
    } catch (e) {
      // a SyntaxError of this realm: `filename:line` on the first line of its stack
      const stack = String(e && e.stack);
      const head = stack.split('\n    at ')[0];
      const m = new RegExp('^' + filename.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + ':(\\d+)').exec(stack);
      return { error: head.trim(), line: m ? Number(m[1]) : null };
    }
  }

  /** Run a script under the time limit; what happened, without touching a context value. */
  execute(script, timeoutMs) {
    const limit = Math.max(1, Math.round(timeoutMs));
    const begin = performance.now();
    try {
      script.runInContext(this.ctx, { timeout: limit });
      return { ok: true };
    } catch (e) {
      if (isHostObject(e)) return { hostError: String(e.stack || e) };
      // node creates its timeout error in the context's realm (where a solution's accessor on
      // Error.prototype can keep `code` off it): recognise it by the time spent, or by an own
      // data property (reading it runs no getter)
      const spent = performance.now() - begin;
      if (spent >= limit - 2) return { timeout: true };
      if (e !== null && typeof e === 'object' && !isProxy(e) && spent >= limit * 0.9) {
        const d = Object.getOwnPropertyDescriptor(e, 'code');
        if (d && d.value === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return { timeout: true };
      }
      return { threw: true, thrown: e };
    }
  }

  /** Make the bootstrap's api reachable for the next script only (it deletes the global). */
  arm() {
    try {
      Object.defineProperty(this.sandbox, this.key, { value: this.api, configurable: true, writable: true });
      return true;
    } catch (e) {
      return false;
    }
  }

  invoke(method, timeoutMs) {
    if (!this.arm()) return { hostError: 'the harness could not reach the context' };
    return this.execute(this.invokers[method], timeoutMs);
  }

  /** TypeScript's syntax errors: message (positions in the part as written) and shown line. */
  diagnostic(errors, fileName, mapLine, shift = 0) {
    const line = errors[0].line === null ? null : mapLine(errors[0].line);
    const text = errors.slice(0, 20).map((d) => {
      const where = d.line === null ? fileName : `${fileName}:${d.line - shift}:${d.col}`;
      return `${where} - error TS${d.code}: ${d.text}`;
    }).join('\n');
    return { message: text, line };
  }

  async start() {
    const job = this.job;
    const solName = 'solution' + this.ext;
    const preName = 'prelude' + this.ext;
    const sol = this.prepareTop(this.solution, solName);
    if (sol.errors.length) {
      const d = this.diagnostic(sol.errors, solName, (l) => l);
      this.emit({ build: 'error', message: d.message, line: d.line });
      return;
    }
    let pre = null;
    if (this.prelude) {
      pre = this.prepareTop(this.prelude, preName);
      if (pre.errors.length) {
        const d = this.diagnostic(pre.errors, preName, (l) => this.solLines + l);
        this.emit({ build: 'error', message: 'in the test prelude: ' + d.message, line: d.line });
        return;
      }
    }
    this.files.set(solName, this.mapper(0, sol.map, 0, this.solLines));
    if (pre) this.files.set(preName, this.mapper(this.solLines, pre.map, 0, this.preLines));
    const tests = job.tests.map((t, i) => this.testScript(i, t.code));

    this.sandbox = Object.create(null);
    // node must run with --experimental-vm-modules for this hook to be called: without it,
    // node rejects `import()` with an error of its own realm (a way out of the context)
    this.refuseImport = (specifier) => {
      if (typeof specifier === 'string') this.needs(specifier);
      let err = this.importFallback;
      try {
        err = this.api.importError(typeof specifier === 'string' ? specifier.slice(0, 200) : '?');
      } catch (e) {
        if (!isHostObject(e)) err = e;
      }
      throw err;
    };
    this.ctx = vm.createContext(this.sandbox, {
      name: 'benchwright sample',
      codeGeneration: { strings: true, wasm: true },
      microtaskMode: 'afterEvaluate',
      importModuleDynamically: this.refuseImport,
    });
    const install = new vm.Script('(' + bwBootstrap.toString() + ')', this.scriptOptions('bw-harness.js'))
      .runInContext(this.ctx);
    this.api = install(this.bridge());
    this.importFallback = this.api.importError('?');
    const k = JSON.stringify(this.key);
    const invoker = (body) => new vm.Script(
      `(function (g, k) { const b = g[k]; delete g[k]; b.${body}(); })(this, ${k});`,
      this.scriptOptions('bw-harness.js'));
    this.invokers = { fire: invoker('fire'), publish: invoker('publish'), describeHeld: invoker('describeHeld'),
      clearTimers: invoker('clearTimers') };

    // ---- load: solution, prelude
    this.emit({ ev: 'loading' });
    const loadMs = job.load_timeout_ms;
    for (const [part, name] of [[sol, solName], [pre, preName]]) {
      if (!part) continue;
      const c = this.compile(part.js, name);
      if (c.error) {
        const line = c.line === null ? null : this.files.get(name)(c.line);
        this.emit({ build: 'error', message: (part === pre ? 'in the test prelude: ' : '') + c.error, line,
          output: this.takeOutput() });
        return;
      }
      const r = await this.runPart(c.script, loadMs);
      if (r.status !== 'pass') {
        const prefix = part === pre ? 'the test prelude failed: ' : '';
        this.emit({ build: r.status === 'timeout' ? 'timeout' : 'error',
          message: prefix + (r.message || 'loading failed'), line: r.line, output: this.takeOutput() });
        return;
      }
    }
    this.token++;
    this.result = null;
    this.invoke('publish', loadMs);
    this.invoke('clearTimers', loadMs);
    this.timers.clear();
    this.emit({ build: 'ok', output: this.takeOutput() });

    // ---- the tests, one by one
    const testBase = this.solLines + this.preLines;
    for (let i = 0; i < tests.length; i++) {
      const t = tests[i];
      const name = `test-${i}${this.ext}`;
      const codeLines = countLines(withNewline(job.tests[i].code));
      this.files.set(name, this.mapper(testBase, t.map, 1, codeLines));
      const limitMs = job.tests[i].timeout_ms;
      this.emit({ ev: 'start', n: i });
      if (t.errors.length) {
        const d = this.diagnostic(t.errors, 'test', (l) => {
          const local = l - 1;
          return local >= 1 && local <= codeLines ? testBase + local : null;
        }, 1);
        this.emit({ i, status: 'error', message: d.message, line: d.line, time_ms: 0, output: '' });
        continue;
      }
      const c = this.compile(t.js, name);
      if (c.error) {
        const line = c.line === null ? null : this.files.get(name)(c.line);
        const message = c.error.replace(/^\S+:\d+\n/, line === null ? '' : `test:${line - testBase}\n`);
        this.emit({ i, status: 'error', message, line, time_ms: 0, output: '' });
        continue;
      }
      const begin = performance.now();
      const r = await this.runTest(c.script, limitMs);
      const timeMs = performance.now() - begin;
      this.invoke('clearTimers', 1000);
      this.timers.clear();
      this.emit({ i, status: r.status, message: r.status === 'pass' ? null : r.message, line: r.status === 'pass' ? null : r.line,
        time_ms: timeMs, output: this.takeOutput(), judged: 'sample' });
    }
  }

  /** Top-level code (solution, prelude): its exception, if any, described inside the context. */
  async runPart(script, limitMs) {
    this.token++;
    this.result = null;
    this.api.arm(this.token);
    const begin = performance.now();
    const r = this.execute(script, limitMs);
    if (r.ok) return { status: 'pass' };
    if (r.timeout) return { status: 'timeout', message: `did not finish in ${limitMs / 1000} s`, line: null };
    if (r.hostError) return { status: 'error', message: r.hostError, line: null };
    this.api.hold(r.thrown);
    const left = limitMs - (performance.now() - begin);
    const d = this.invoke('describeHeld', Math.max(left, 100));
    if (!d.ok || this.result === null) {
      return { status: 'error', message: 'an exception was thrown (its description did not finish)', line: null };
    }
    return { status: 'error', message: this.result.message, line: this.lineIn(this.result.stack) };
  }

  async runTest(script, limitMs) {
    this.token++;
    this.result = null;
    this.api.arm(this.token);
    if (!this.arm()) return { status: 'error', message: 'the harness could not reach the context', line: null };
    const begin = performance.now();
    const deadline = begin + limitMs;
    const timedOut = () => ({ status: 'timeout', message: `timed out after ${limitMs / 1000} s`, line: null });
    let r = this.execute(script, limitMs);
    let idleTurns = 0;
    for (;;) {
      if (r.timeout) return timedOut();
      if (r.hostError) return { status: 'error', message: 'the harness failed: ' + r.hostError, line: null };
      if (r.threw) return { status: 'error', message: 'the test could not start', line: null };
      if (this.result !== null) break;
      // a pending promise: fire its timers as they fall due, until it settles or time is up.
      // Without timers, give the event loop a few turns (a rejected `import()`, WebAssembly's
      // promises settle through it; the context's queue is drained by the next script run)
      let next = Infinity;
      if (this.timers.size === 0) {
        if (idleTurns >= IDLE_TURNS_MS.length) {
          return { status: 'error', line: null,
            message: 'the test returned a promise that never settles (nothing is left to wait for)' };
        }
        next = performance.now() + IDLE_TURNS_MS[idleTurns++];
      }
      for (const due of this.timers.values()) next = Math.min(next, due);
      const now = performance.now();
      if (now >= deadline) return timedOut();
      const wait = Math.min(next, deadline) - now;
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
      const left = deadline - performance.now();
      if (left <= 0) return timedOut();
      r = this.invoke('fire', left);
    }
    const res = this.result;
    return { status: res.status, message: res.message, line: this.lineIn(res.stack) };
  }
}

main();

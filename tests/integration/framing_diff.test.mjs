// The differential framing test: random and mutated lines (a byte-order
// mark, white space, NUL bytes, integral floats, big numbers, bad UTF-8,
// lone surrogates, deep nesting, repeated keys, wrong types...) are fed to
// the pinned SDK's own parser (deserializeMessage: JSON.parse, then
// JSONRPCMessageSchema) and, through fsguard, to a server that reads them
// with the SDK's own transport (lib/sdk-echo-upstream.mjs). Each line is
// answered once, by the server or by fsguard, never by neither and never by
// both: a request the SDK takes gets one answer, with its id; a line the SDK
// rejects gets one answer, from fsguard; a notification or an answer the SDK
// takes gets none. A line nested deeper than fsguard reads is refused by
// fsguard, whatever the server would make of it: it gets one answer.
//
//   node --test framing_diff.test.mjs      (FSGUARD_BIN=/path/to/fsguard;
//   FSGUARD_DIFF_SEED=<n> and FSGUARD_DIFF_LINES=<n> to vary the run)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { deserializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';

import { TESTS_DIR, spawnRawFor } from './lib/harness.mjs';

const ECHO_SCRIPT = path.join(TESTS_DIR, 'lib', 'sdk-echo-upstream.mjs');
const SEED = Number(process.env.FSGUARD_DIFF_SEED ?? 35);
const LINES = Number(process.env.FSGUARD_DIFF_LINES ?? 5000);

// A small seeded generator (mulberry32), so that a failing run can be repeated.
function generator(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  return { next, int, pick: (items) => items[int(items.length)] };
}

// Messages the SDK takes, each with its id (a number or a string).
function baseMessages(id) {
  const call = (params) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });
  return [
    { jsonrpc: '2.0', id, method: 'ping' },
    { jsonrpc: '2.0', id, method: 'tools/list', params: {} },
    { jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: { progressToken: 12 } } },
    call({ name: 'no_such_tool', arguments: { text: 'caf\u00e9 \u2028 \ud83d\ude00', n: 1.5, list: [1, [2, { a: null }]] } }),
    call({ name: 'no_such_tool', arguments: {}, _meta: { progressToken: 'p', 'io.modelcontextprotocol/related-task': { taskId: 't' } } }),
    { jsonrpc: '2.0', id, method: 'x/custom', params: { cursor: 'c', deep: [[[{ b: true }]]] } },
    { jsonrpc: '2.0', method: 'notifications/custom' },
    { jsonrpc: '2.0', method: 'notifications/custom', params: { _meta: { progressToken: 3 }, x: 1 } },
    { jsonrpc: '2.0', id: `answer-${id}`, result: {} },
    { jsonrpc: '2.0', id: `answer-${id}`, result: { _meta: {}, content: [] } },
    { jsonrpc: '2.0', id: `answer-${id}`, error: { code: -32000, message: 'm', data: [1] } },
    { jsonrpc: '2.0', error: { code: -1, message: 'no id' } },
  ];
}

const BAD_UTF8 = ['\xff', '\xc3', '\xed\xa0\x80', '\xf4\x90\x80\x80', '\xc0\xaf', '\xe2\x82'];

// Mutations of a line's text (a "binary" string: one char per byte, so
// that bytes that are not UTF-8 can be put in). Each returns the new text.
function mutations(r) {
  const utf8 = (s) => Buffer.from(s, 'utf8').toString('latin1');
  const at = (text, position, insert) => text.slice(0, position) + insert + text.slice(position);
  const randomPlace = (text) => r.int(text.length + 1);
  // A place just after a structural character, where white space is allowed.
  const structural = (text) => {
    const places = [...text].flatMap((c, i) => ('{[,:'.includes(c) ? [i + 1] : []));
    return places.length ? r.pick(places) : 0;
  };
  // Inside a string value: just after the opening quote of one.
  const inString = (text) => {
    const places = [...text.matchAll(/:"/g)].map((m) => m.index + 2);
    return places.length ? r.pick(places) : randomPlace(text);
  };
  const replaceValue = (text, key, values) => text.replace(
    new RegExp(`"${key}":(-?[0-9][0-9.eE+-]*|"[^"]*"|\\{[^{}]*\\}|\\[[^\\[\\]]*\\]|null|true|false)`),
    () => `"${key}":${r.pick(values)}`);
  return {
    bom: (t) => '\xef\xbb\xbf' + t,
    bom_inside: (t) => at(t, structural(t), '\xef\xbb\xbf'),
    white_space: (t) => at(t, r.pick([0, t.length, structural(t)]), r.pick([' ', '\t', '\r', ' \t\r '])),
    cr_end: (t) => t + '\r',
    nul: (t) => at(t, r.pick([0, t.length, randomPlace(t), inString(t)]), '\0'),
    control: (t) => at(t, inString(t), r.pick(['\x01', '\x1f', '\x7f', '\t'])),
    id_number: (t) => replaceValue(t, 'id', ['7.0', '9e0', '70e-1', '7.5', '1e400', '-0', '-0.0', '9007199254740991',
      '9007199254740991.0', '9007199254740992', '9007199254740993', '-9007199254740991', '1E2', '0.7e1', '1e-400',
      '123456789012345678901234567890', '7.0000000000000001', 'null', 'true', '{}', '[]', '[7]']),
    id_string: (t) => replaceValue(t, 'id', ['"a"', '""', '"\\u0000"', '"\\ud800"', '"fsguard/x"', `"${utf8('\u00e9')}"`, '"\\n"']),
    progress_token: (t) => replaceValue(t, 'progressToken', ['3.0', '3.5', '"t"', 'null', 'true', '{}', '1e400', '9007199254740993']),
    related_task: (t) => replaceValue(t, 'io.modelcontextprotocol/related-task', ['5', '{}', '{"taskId":1}', '{"taskId":"x","more":2}', 'null']),
    version: (t) => replaceValue(t, 'jsonrpc', ['"2.00"', '"2"', '2.0', '"1.0"', 'null', '"2.0\\u0000"', '"\\u0032.0"']),
    method: (t) => replaceValue(t, 'method', ['5', 'null', '""', '"notifications/x"', '"\\u0070ing"', '["ping"]']),
    params: (t) => replaceValue(t, 'params', ['[]', 'null', '"s"', '5', '{}', '{"_meta":[]}', '{"_meta":null}', '{"_meta":{"progressToken":1.5}}']),
    result: (t) => replaceValue(t, 'result', ['[]', '5', 'null', '{"_meta":[]}', '{"_meta":{"progressToken":2.0}}']),
    error: (t) => replaceValue(t, 'error', ['{"code":1.0,"message":"m"}', '{"code":1.5,"message":"m"}', '{"code":1}', '[]', 'null', '{"code":-1,"message":5}']),
    extra_member: (t) => t.replace(/^(\s*)\{/, (m, s) => `${s}{${r.pick(['"extra":1,', '"params":{},', '"result":{},', '"error":{"code":1,"message":"m"},', '"id":8,', '"method":"x",'])}`),
    drop_member: (t) => t.replace(new RegExp(`"${r.pick(['jsonrpc', 'id', 'method', 'params', 'result', 'error'])}":("[^"]*"|[0-9.eE+-]+|\\{[^{}]*\\}|null),?`), ''),
    duplicate_key: (t) => t.replace(/\}\s*$/, `,${r.pick(['"jsonrpc":"1.0"', '"jsonrpc":"2.0"', '"id":"second"', '"id":7.5', '"method":"ping"', '"method":7'])}}`),
    duplicate_key_first: (t) => t.replace(/\{/, `{${r.pick(['"jsonrpc":"1.0",', '"id":null,', '"method":7,', '"params":5,'])}`),
    escaped_key: (t) => t.replace(r.pick(['"id"', '"method"', '"jsonrpc"', '"params"']), (k) => k.replace(/[a-z]/, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)),
    bad_utf8: (t) => at(t, r.pick([inString(t), inString(t), structural(t), randomPlace(t)]), r.pick(BAD_UTF8)),
    lone_surrogate: (t) => at(t, inString(t), r.pick(['\\ud800', '\\udfff', '\\ud83d', '\\ud83d\\ude00', '\\uDC00x'])),
    nest: (t) => t.replace(/\{/, () => {
      const depth = r.pick([5, 120, 126, 127, 128, 129, 300]);
      return `{"deep":${'['.repeat(depth)}${']'.repeat(depth)},`;
    }),
    nest_params: (t) => t.replace(/"params":\{/, () => {
      const depth = r.pick([10, 124, 125, 126, 127, 200]);
      return `"params":{"d":${'['.repeat(depth)}${']'.repeat(depth)},`;
    }),
    big_number: (t) => t.replace(/:(-?[0-9][0-9.eE+-]*)/, () => `:${r.pick(['1e400', '-1e400', '1e-400', '123456789012345678901234567890', '0.1e1', '-0', '1E+2'])}`),
    truncate: (t) => t.slice(0, 1 + r.int(Math.max(1, t.length - 1))),
    garbage_after: (t) => t + r.pick(['x', '}', ']', ',', '{}', ' 1', '\xc2\xa0', '\u000b']),
    garbage_before: (t) => r.pick(['x', ',', '\u000b', '\xc2\xa0', '\xe2\x80\xa8']) + t,
    byte_flip: (t) => {
      let out = t;
      for (let n = 1 + r.int(3); n > 0; --n) {
        const i = r.int(out.length);
        out = out.slice(0, i) + String.fromCharCode(r.pick([0x20, 0x22, 0x2c, 0x3a, 0x5b, 0x5d, 0x7b, 0x7d, 0x5c, 0x30, 0x61, 0xff, 0x80])) + out.slice(i + 1);
      }
      return out;
    },
    batch: (t) => r.pick([`[${t}]`, '[]', `[${t},${t}]`]),
    scalar: () => r.pick(['5', '"x"', 'null', 'true', '{}', '[]', '-0', '""']),
    trailing_comma: (t) => t.replace(/\}\s*$/, ',}'),
  };
}

// What the server makes of `bytes` (one line, without its newline), as its
// transport reads it: "request" (it answers), "message" (a notification or
// an answer: nothing is owed; or an answer to fsguard's own request, which
// fsguard takes), or "rejected" (dropped), with the request's id.
function sdkVerdict(bytes) {
  const text = bytes.toString('utf8').replace(/\r$/, ''); // as ReadBuffer.readMessage
  try {
    const parsed = JSON.parse(text);
    if (!('method' in parsed) && typeof parsed.id === 'string' && parsed.id.startsWith('fsguard/')) {
      return { kind: 'message' }; // an answer to a request of fsguard's own: fsguard takes it
    }
  } catch { /* judged below */ }
  try {
    const message = deserializeMessage(text);
    return 'method' in message && 'id' in message ? { kind: 'request', id: message.id } : { kind: 'message' };
  } catch {
    return { kind: 'rejected' };
  }
}

// fsguard refuses, unparsed, a line whose arrays and objects nest deeper than
// this (k_max_nesting), whatever the server would make of it.
const FSGUARD_MAX_NESTING = 128;

// How deep the arrays and objects of `bytes` nest, strings skipped.
function nesting(bytes) {
  let depth = 0;
  let deepest = 0;
  for (let i = 0, inString = false; i < bytes.length; ++i) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) ++i;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      deepest = Math.max(deepest, ++depth);
    } else if (c === 0x5d || c === 0x7d) {
      --depth;
    }
  }
  return deepest;
}

function* lines(r) {
  const mutate = mutations(r);
  const names = Object.keys(mutate);
  for (let index = 0; index < LINES; ++index) {
    const id = r.next() < 0.7 ? 1000 + index : `s${index}`;
    let text = Buffer.from(JSON.stringify(r.pick(baseMessages(id))), 'utf8').toString('latin1');
    const applied = [];
    for (let n = index % 10 === 0 ? 0 : 1 + r.int(3); n > 0; --n) {
      const name = r.pick(names);
      applied.push(name);
      text = mutate[name](text);
    }
    const bytes = Buffer.from(text, 'latin1');
    if (bytes.includes(0x0a) || /^[ \t\r]*$/.test(text)) {
      continue; // two lines, or none, to both readers
    }
    yield { bytes, applied };
  }
}

test('each line is answered once, by the server or by fsguard, never by neither and never by both', async (t) => {
  const h = spawnRawFor(t, ['--', process.execPath, ECHO_SCRIPT]);
  await h.initialize(1);
  let wake = () => {};
  h.child.stdout.on('data', () => wake());
  const answered = (id, from) => h.messages.slice(from).find((m) => m?.id === id);
  const waitAnswer = async (id, from) => {
    const deadline = Date.now() + 5000;
    while (!answered(id, from) && Date.now() < deadline) {
      await new Promise((resolve) => {
        wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    return answered(id, from);
  };

  const r = generator(SEED);
  const failures = [];
  let count = 0;
  const kinds = { request: 0, message: 0, rejected: 0, too_deep: 0 };
  for (const { bytes, applied } of lines(r)) {
    const sentinel = `sentinel-${count++}`;
    const from = h.messages.length;
    h.child.stdin.write(Buffer.concat([bytes, Buffer.from('\n')]));
    h.send({ jsonrpc: '2.0', id: sentinel, method: 'ping' });
    const done = await waitAnswer(sentinel, from);
    assert.ok(done, `no answer to the sentinel after ${JSON.stringify(bytes.toString('latin1'))}\n${h.stderrText().slice(-2000)}`);
    const answers = h.messages.slice(from, h.messages.indexOf(done, from)).filter((m) => m?.id !== sentinel);
    const verdict = nesting(bytes) > FSGUARD_MAX_NESTING ? { kind: 'too_deep' } : sdkVerdict(bytes);
    kinds[verdict.kind] += 1;
    const fromServer = answers.filter((m) => m?.result?.echoed !== undefined);
    let problem = null;
    if (verdict.kind === 'request') {
      if (answers.length !== 1) problem = `${answers.length} answers to a request the server takes`;
      else if (JSON.stringify(answers[0].id) !== JSON.stringify(verdict.id)) problem = `answered with id ${JSON.stringify(answers[0].id)}, not ${JSON.stringify(verdict.id)}`;
    } else if (verdict.kind === 'rejected' || verdict.kind === 'too_deep') {
      if (answers.length !== 1) problem = `${answers.length} answers to a line the server drops, or fsguard refuses`;
      else if (fromServer.length > 0) problem = 'the server answered a line its SDK rejects';
    } else if (answers.length !== 0) {
      problem = `${answers.length} answers to a notification or an answer`;
    }
    if (problem) {
      failures.push(`${problem}: ${JSON.stringify(bytes.toString('latin1'))} (${applied.join(', ') || 'as it is'}) -> ${JSON.stringify(answers)}`);
    }
  }
  t.diagnostic(`seed ${SEED}: ${count} lines, ${JSON.stringify(kinds)}`);
  assert.ok(kinds.rejected > count / 10 && kinds.request > count / 10, JSON.stringify(kinds));
  assert.deepEqual(failures.slice(0, 25), [], `${failures.length} of ${count} lines (seed ${SEED})`);
});

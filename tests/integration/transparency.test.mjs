// Transparency of fsguard, measured against the MCP reference server
// @modelcontextprotocol/server-everything (stdio mode). None of its tools is a
// guarded filesystem tool, so fsguard must not change anything:
//
//  1. Two SDK sessions, one directly on server-everything and one through
//     fsguard, driven identically by the official SDK Client (declaring the
//     sampling, elicitation (form) and roots capabilities, with deterministic
//     handlers). Every result, error, progress sequence, server-to-client request
//     and notification must deep-equal between the two.
//  2. A raw-pipe session (no SDK) through fsguard with a tee between fsguard and
//     the server: the client must receive exactly the lines the server wrote, and
//     the server exactly the lines the client wrote, byte for byte, in order.
//
//   node --test --test-concurrency=1 transparency.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, ResultSchema,
} from '@modelcontextprotocol/sdk/types.js';

import {
  FSGUARD_BIN, REQUEST_TIMEOUT_MS, TESTS_DIR, cleanEnv, descendantPids, killTree, makeWorkspace, sleep, waitFor,
} from './lib/harness.mjs';

const EVERYTHING_SCRIPT = path.join(
  TESTS_DIR, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
/** server-everything's CLI: `index.js [stdio|sse|streamableHttp]` (dist/index.js, version 2026.8.31). */
const EVERYTHING_CMD = [process.execPath, EVERYTHING_SCRIPT, 'stdio'];

// ---------------------------------------------------------------------------
// deterministic client-side answers to the server's requests

const SAMPLING_REPLY = {
  model: 'fsguard-test-model',
  role: 'assistant',
  content: { type: 'text', text: 'fixed sampling reply from the fsguard transparency test' },
  stopReason: 'endTurn',
};
const ELICIT_REPLY = {
  action: 'accept',
  content: {
    name: 'Ada Lovelace',
    check: true,
    email: 'ada@example.com',
    integer: 7,
    number: 2.5,
    untitledSingleSelectEnum: 'Joey',
  },
};
const ROOTS_REPLY = {
  roots: [
    { uri: 'file:///fsguard-transparency/root-a', name: 'Root A' },
    { uri: 'file:///fsguard-transparency/root-b' },
  ],
};
const CLIENT_CAPABILITIES = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };

// ---------------------------------------------------------------------------
// SDK sessions

/**
 * An SDK client on server-everything, directly or through fsguard. Records the
 * server-to-client requests it answered and every notification other than progress.
 */
async function openSession({ viaGuard }) {
  const [command, ...args] = viaGuard ? [FSGUARD_BIN, '--', ...EVERYTHING_CMD] : EVERYTHING_CMD;
  const transport = new StdioClientTransport({ command, args, env: cleanEnv(), stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (c) => { stderr += c.toString('utf8'); });

  const client = new Client({ name: 'fsguard-transparency', version: '1.0.0' }, { capabilities: CLIENT_CAPABILITIES });
  const s = {
    label: viaGuard ? 'through fsguard' : 'direct',
    client,
    transport,
    stderrText: () => stderr,
    sampling: [], // params of every sampling/createMessage the server sent
    elicit: [], // params of every elicitation/create
    roots: 0, // number of roots/list requests answered
    notifications: [], // every notification except notifications/progress, in arrival order
    pids: new Set(),
  };
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => { s.sampling.push(req.params); return SAMPLING_REPLY; });
  client.setRequestHandler(ElicitRequestSchema, async (req) => { s.elicit.push(req.params); return ELICIT_REPLY; });
  client.setRequestHandler(ListRootsRequestSchema, async () => { s.roots += 1; return ROOTS_REPLY; });
  client.fallbackNotificationHandler = async (n) => { s.notifications.push(n); };

  const remember = () => {
    if (transport.pid) for (const p of [transport.pid, ...descendantPids(transport.pid)]) s.pids.add(p);
  };
  s.close = async () => {
    remember();
    try { await client.close(); } catch { /* already closed */ }
    for (const p of s.pids) killTree(p);
  };
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (err) {
    await s.close();
    err.message += `\n--- stderr (${s.label}) ---\n${stderr}`;
    throw err;
  }
  remember();

  // Record every message the client receives, and hand them to the SDK one per
  // macrotask, in arrival order. Why: the SDK Protocol runs notification handlers
  // (progress included) in a microtask but settles responses synchronously, so a
  // progress notification that arrives in the same stdout chunk as its response
  // is dropped by the SDK (its progress handler is already gone). Whether two
  // lines share a chunk is timing, direct or not; one message per tick removes
  // that SDK race without reordering anything.
  s.received = [];
  const deliver = transport.onmessage;
  const queue = [];
  const drain = () => {
    const [msg, extra] = queue.shift();
    deliver(msg, extra);
    if (queue.length > 0) setImmediate(drain);
  };
  transport.onmessage = (msg, extra) => {
    s.received.push(msg);
    queue.push([msg, extra]);
    if (queue.length === 1) setImmediate(drain);
  };
  return s;
}

/** Settle a promise into a comparable value: {result} or {error: {name, code, message, data}}. */
async function settle(p) {
  try {
    return { result: await p };
  } catch (err) {
    return { error: { name: err?.constructor?.name, code: err?.code, message: err?.message, data: err?.data } };
  }
}

const call = (s, name, args, opts = {}) => s.client.callTool(
  { name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS, ...opts });

/** The names a tools/list result must contain; fails loudly with the real list if one is missing. */
function requireTools(tools, names) {
  const have = new Set(tools.map((t) => t.name));
  const missing = names.filter((n) => !have.has(n));
  assert.deepEqual(missing, [], `server-everything lacks these tools (it has: ${[...have].join(', ')})`);
}

// Tools used below, picked by name from tools/list (the set varies between
// server-everything versions; the test fails if one is missing).
const TOOL = {
  echo: 'echo',
  structured: 'get-structured-content',
  image: 'get-tiny-image',
  progress: 'trigger-long-running-operation',
  sampling: 'trigger-sampling-request',
  elicitation: 'trigger-elicitation-request',
  roots: 'get-roots-list',
  sum: 'get-sum',
};

// ---------------------------------------------------------------------------
// 1. SDK sessions: direct vs through fsguard

describe('server-everything through fsguard answers exactly like server-everything directly', () => {
  let direct;
  let guarded;
  const both = (fn) => Promise.all([fn(direct), fn(guarded)]);

  before(async () => {
    assert.ok(fs.existsSync(EVERYTHING_SCRIPT), `${EVERYTHING_SCRIPT} is missing: run \`npm ci\` in tests/integration`);
    assert.ok(fs.existsSync(FSGUARD_BIN), `fsguard binary not found at ${FSGUARD_BIN}`);
    [direct, guarded] = await Promise.all([openSession({ viaGuard: false }), openSession({ viaGuard: true })]);
  });
  after(async () => {
    await Promise.allSettled([direct?.close(), guarded?.close()]);
  });

  test('initialize: server info, capabilities and instructions', () => {
    assert.deepEqual(guarded.client.getServerVersion(), direct.client.getServerVersion());
    assert.deepEqual(guarded.client.getServerCapabilities(), direct.client.getServerCapabilities());
    assert.equal(guarded.client.getInstructions(), direct.client.getInstructions());
    assert.equal(direct.client.getServerVersion()?.name, 'mcp-servers/everything', 'the upstream is server-everything');
  });

  test('tools/list, prompts/list, resources/list, resources/templates/list', async () => {
    // server-everything registers its capability-dependent tools when the client
    // sends notifications/initialized; wait until they are listed in both sessions.
    for (const s of [direct, guarded]) {
      const ok = await waitFor(async () => {
        const { tools } = await s.client.listTools();
        return tools.some((t) => t.name === TOOL.sampling);
      }, 5000);
      assert.ok(ok, `${s.label}: the conditional tools show up in tools/list`);
    }
    const [td, tg] = await both((s) => s.client.listTools());
    requireTools(td.tools, Object.values(TOOL));
    assert.deepEqual(tg, td);
    const [pd, pg] = await both((s) => s.client.listPrompts());
    assert.ok(pd.prompts.length > 0, 'server-everything has prompts');
    assert.deepEqual(pg, pd);
    const [rd, rg] = await both((s) => s.client.listResources());
    assert.ok(rd.resources.length > 0, 'server-everything has resources');
    assert.deepEqual(rg, rd);
    const [ttd, ttg] = await both((s) => s.client.listResourceTemplates());
    assert.ok(ttd.resourceTemplates.length > 0, 'server-everything has resource templates');
    assert.deepEqual(ttg, ttd);
  });

  test('roots/list round trip (server asks the client) and the roots tool', async () => {
    // server-everything asks for the roots 350 ms after notifications/initialized.
    for (const s of [direct, guarded]) {
      assert.ok(await waitFor(() => s.roots >= 1, 5000), `${s.label}: the roots/list handler was called`);
    }
    assert.equal(guarded.roots, direct.roots, 'same number of roots/list requests');
    const [d, g] = await both((s) => settle(call(s, TOOL.roots, {})));
    assert.ok(d.result, `roots tool answered: ${JSON.stringify(d)}`);
    assert.match(JSON.stringify(d.result), /root-a/, 'the roots tool shows the roots this client sent');
    assert.deepEqual(g, d);
  });

  test('echo tool', async () => {
    const msg = 'héllo 😀 "quoted" \\ back\tslash\nnewline \u0000 nul';
    const [d, g] = await both((s) => settle(call(s, TOOL.echo, { message: msg })));
    assert.deepEqual(d, { result: { content: [{ type: 'text', text: `Echo: ${msg}` }] } });
    assert.deepEqual(g, d);
  });

  test('structured-content tool', async () => {
    const [d, g] = await both((s) => settle(call(s, TOOL.structured, { location: 'Chicago' })));
    assert.ok(d.result?.structuredContent, `structured content present: ${JSON.stringify(d)}`);
    assert.deepEqual(g, d);
  });

  test('image tool', async () => {
    const [d, g] = await both((s) => settle(call(s, TOOL.image, {})));
    const img = d.result?.content?.find((c) => c.type === 'image');
    assert.ok(img && img.mimeType === 'image/png' && img.data.length > 100, 'an image block came back');
    assert.deepEqual(g, d);
  });

  test('progress notifications of a long-running tool arrive in the same sequence', async () => {
    const progress = { direct: [], guarded: [] };
    const [d, g] = await Promise.all([
      settle(call(direct, TOOL.progress, { duration: 0.5, steps: 5 }, { onprogress: (p) => progress.direct.push(p) })),
      settle(call(guarded, TOOL.progress, { duration: 0.5, steps: 5 }, { onprogress: (p) => progress.guarded.push(p) })),
    ]);
    assert.ok(d.result, `the tool answered: ${JSON.stringify(d)}`);
    // What arrived on the wire. The progressToken is the SDK's JSON-RPC id of the
    // call, which depends on how many requests the session made before (the
    // tools/list polling above may differ): it is checked for consistency, then left out.
    const wire = (s) => {
      const ps = s.received.filter((m) => m.method === 'notifications/progress').map((m) => m.params);
      assert.equal(new Set(ps.map((p) => p.progressToken)).size, 1, `${s.label}: one progressToken for the call`);
      return ps.map(({ progressToken, ...rest }) => rest);
    };
    assert.deepEqual(wire(direct), [1, 2, 3, 4, 5].map((i) => ({ progress: i, total: 5 })),
      'five progress notifications on the wire (direct)');
    assert.deepEqual(wire(guarded), wire(direct), 'the same progress notifications on the wire');
    // what the SDK handed to onprogress
    assert.deepEqual(progress.direct, [1, 2, 3, 4, 5].map((i) => ({ progress: i, total: 5 })));
    assert.deepEqual(progress.guarded, progress.direct);
    assert.deepEqual(g, d);
  });

  test('sampling round trip (tool -> sampling/createMessage -> client -> tool result)', async () => {
    const before = [direct.sampling.length, guarded.sampling.length];
    const [d, g] = await both((s) => settle(call(s, TOOL.sampling, { prompt: 'say something', maxTokens: 42 })));
    assert.equal(direct.sampling.length, before[0] + 1, 'the sampling handler was called once (direct)');
    assert.equal(guarded.sampling.length, before[1] + 1, 'the sampling handler was called once (through fsguard)');
    assert.deepEqual(guarded.sampling.at(-1), direct.sampling.at(-1), 'same sampling request params');
    assert.match(JSON.stringify(d.result), /fixed sampling reply/, 'the tool result carries the client\'s reply');
    assert.deepEqual(g, d);
  });

  test('elicitation round trip (tool -> elicitation/create -> client -> tool result)', async () => {
    const before = [direct.elicit.length, guarded.elicit.length];
    const [d, g] = await both((s) => settle(call(s, TOOL.elicitation, {})));
    assert.equal(direct.elicit.length, before[0] + 1, 'the elicitation handler was called once (direct)');
    assert.equal(guarded.elicit.length, before[1] + 1, 'the elicitation handler was called once (through fsguard)');
    assert.deepEqual(guarded.elicit.at(-1), direct.elicit.at(-1), 'same elicitation request params');
    assert.match(JSON.stringify(d.result), /Ada Lovelace/, 'the tool result carries the client\'s answer');
    assert.deepEqual(g, d);
  });

  test('40 concurrent tool calls come back with the same results, in order', async () => {
    const cities = ['New York', 'Chicago', 'Los Angeles'];
    const batch = (s) => Promise.all(Array.from({ length: 40 }, (_, i) => {
      if (i % 3 === 0) return settle(call(s, TOOL.echo, { message: `concurrent #${i}` }));
      if (i % 3 === 1) return settle(call(s, TOOL.sum, { a: i, b: i * 1000 }));
      return settle(call(s, TOOL.structured, { location: cities[i % cities.length] }));
    }));
    const [d, g] = await both(batch);
    assert.equal(d.length, 40);
    assert.ok(d.every((r) => r.result && !r.result.isError), 'all 40 direct calls succeeded');
    assert.deepEqual(d[0], { result: { content: [{ type: 'text', text: 'Echo: concurrent #0' }] } });
    assert.deepEqual(g, d);
  });

  test('unknown tool: the same error or error result, exactly', async () => {
    const [d, g] = await both((s) => settle(call(s, 'no-such-tool-fsguard', { x: 1 })));
    assert.ok(d.error || d.result?.isError, `the unknown tool failed: ${JSON.stringify(d)}`);
    assert.deepEqual(g, d);
  });

  test('unknown method: the same JSON-RPC error', async () => {
    const [d, g] = await both((s) => settle(s.client.request({ method: 'fsguard/no-such-method', params: {} },
      ResultSchema, { timeout: REQUEST_TIMEOUT_MS })));
    assert.equal(d.error?.code, -32601, `method not found: ${JSON.stringify(d)}`);
    assert.deepEqual(g, d);
  });

  test('prompts/get and resources/read', async () => {
    const [pd, pg] = await both((s) => settle(s.client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } })));
    assert.ok(pd.result, JSON.stringify(pd));
    assert.deepEqual(pg, pd);

    const { resources } = await direct.client.listResources();
    const [rd, rg] = await both((s) => settle(s.client.readResource({ uri: resources[0].uri })));
    assert.ok(rd.result?.contents?.length, JSON.stringify(rd));
    assert.deepEqual(rg, rd);

    // The dynamic text resource embeds its creation time (toLocaleTimeString):
    // the only field normalized in this file, because two runs legitimately differ there.
    const uri = 'demo://resource/dynamic/text/3';
    const norm = (r) => JSON.parse(JSON.stringify(r).replace(/created at [^"]*"/g, 'created at <TIME>"'));
    const [dd, dg] = await both((s) => settle(s.client.readResource({ uri })));
    assert.match(dd.result?.contents?.[0]?.text ?? '', /^Resource 3: .* created at /, JSON.stringify(dd));
    assert.deepEqual(norm(dg), norm(dd));
  });

  test('the server\'s notifications (other than progress) are the same sequence', async () => {
    await sleep(300); // let any notification still in flight arrive
    assert.ok(direct.notifications.length > 0,
      'server-everything sent notifications (tools/list_changed, the roots log message)');
    assert.deepEqual(guarded.notifications, direct.notifications);
  });
});

// ---------------------------------------------------------------------------
// 2. raw bytes through a tee

/**
 * Upstream wrapper for this file (a two-way variant of lib/tee-upstream.mjs):
 *   TEE_IN=<file> TEE_OUT=<file> node tee.mjs <command> [args...]
 * Appends every line it receives on stdin to $TEE_IN and every line the child
 * writes on stdout to $TEE_OUT (raw bytes, synchronously, before forwarding).
 * It is written into the test's temp directory at run time, so that this suite
 * stays one file and lib/tee-upstream.mjs (stdin only) keeps its behaviour.
 */
const TWO_WAY_TEE = `
import { spawn } from 'node:child_process';
import fs from 'node:fs';
const [cmd, ...args] = process.argv.slice(2);
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
child.stdin.on('error', () => {});
function logger(file) {
  let pending = Buffer.alloc(0);
  return (chunk, final) => {
    pending = Buffer.concat([pending, chunk]);
    let nl;
    while ((nl = pending.indexOf(0x0a)) >= 0) {
      fs.appendFileSync(file, pending.subarray(0, nl + 1));
      pending = pending.subarray(nl + 1);
    }
    if (final && pending.length) { fs.appendFileSync(file, pending); pending = Buffer.alloc(0); }
  };
}
const logIn = logger(process.env.TEE_IN);
const logOut = logger(process.env.TEE_OUT);
process.stdin.on('data', (c) => { logIn(c, false); child.stdin.write(c); });
process.stdin.on('end', () => { logIn(Buffer.alloc(0), true); child.stdin.end(); });
child.stdout.on('data', (c) => { logOut(c, false); process.stdout.write(c); });
child.stdout.on('end', () => logOut(Buffer.alloc(0), true));
child.on('close', (code, signal) => { process.exitCode = code ?? 1; process.stdin.destroy(); });
`;

/** Split a byte stream into lines, each keeping its "\\n" (a last unterminated piece is kept as is). */
function splitLines(buf) {
  const out = [];
  let start = 0;
  let nl;
  while ((nl = buf.indexOf(0x0a, start)) >= 0) {
    out.push(buf.subarray(start, nl + 1));
    start = nl + 1;
  }
  if (start < buf.length) out.push(buf.subarray(start));
  return out;
}

/** Assert two line lists are byte-identical, reporting the first difference readably. */
function assertSameLines(actual, expected, what) {
  const show = (b) => (b === undefined ? '<none>' : JSON.stringify(b.toString('utf8')).slice(0, 600));
  const n = Math.max(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    const a = actual[i];
    const e = expected[i];
    if (a && e && a.equals(e)) continue;
    let detail = `${what}: line ${i} differs (${actual.length} vs ${expected.length} lines)\n`
      + `  expected: ${show(e)}\n  actual:   ${show(a)}`;
    if (a && e) {
      let j = 0;
      while (j < Math.min(a.length, e.length) && a[j] === e[j]) j++;
      detail += `\n  first differing byte at offset ${j}: expected ${e.subarray(j, j + 16).toString('hex')}`
        + ` actual ${a.subarray(j, j + 16).toString('hex')}`;
    }
    assert.fail(detail);
  }
}

test('raw session: the client gets the server\'s bytes and the server gets the client\'s bytes, exactly', async (t) => {
  assert.ok(fs.existsSync(FSGUARD_BIN), `fsguard binary not found at ${FSGUARD_BIN}`);
  const ws = makeWorkspace({}, 'fsguard-transparency-');
  t.after(ws.cleanup);
  const teeScript = ws.file('tee-two-way.mjs');
  fs.writeFileSync(teeScript, TWO_WAY_TEE);
  const teeIn = ws.file('server-stdin.log');
  const teeOut = ws.file('server-stdout.log');

  const child = spawn(FSGUARD_BIN, ['--', process.execPath, teeScript, ...EVERYTHING_CMD], {
    stdio: ['pipe', 'pipe', 'pipe'], env: cleanEnv({ TEE_IN: teeIn, TEE_OUT: teeOut }),
  });
  const pids = new Set([child.pid]);
  t.after(() => {
    for (const p of [...pids, ...descendantPids(child.pid)]) killTree(p);
  });
  let stdout = Buffer.alloc(0);
  let stderr = '';
  child.stdout.on('data', (c) => { stdout = Buffer.concat([stdout, c]); });
  child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
  child.stdin.on('error', () => {});
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await waitFor(() => { for (const p of descendantPids(child.pid)) pids.add(p); return pids.size >= 3; }, 3000);

  const sent = [];
  const send = (line) => {
    const b = Buffer.from(`${line}\n`, 'utf8');
    sent.push(b);
    child.stdin.write(b);
  };
  const messages = () => splitLines(stdout).filter((l) => l.at(-1) === 0x0a).map((l) => JSON.parse(l.toString('utf8')));
  const waitMsg = async (pred, what) => {
    const m = await waitFor(() => messages().find(pred), REQUEST_TIMEOUT_MS);
    assert.ok(m, `${what} arrived\n--- client received ---\n${stdout.toString('utf8').slice(-3000)}\n--- stderr ---\n${stderr}`);
    return m;
  };
  const response = (id) => waitMsg((m) => m.id === id && ('result' in m || 'error' in m), `the response to ${JSON.stringify(id)}`);
  /** The `n`th (1-based) request the server sent with `method`. */
  const serverRequest = async (method, n) => {
    const m = await waitFor(() => messages().filter((x) => x.method === method && 'id' in x)[n - 1], REQUEST_TIMEOUT_MS);
    assert.ok(m, `server request ${method} #${n} arrived\n${stdout.toString('utf8').slice(-3000)}\n${stderr}`);
    return m;
  };

  // Client lines are written by hand, with unusual but valid spacing, key
  // order and escapes, so that any re-serialization would show.
  send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    + '"capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}},'
    + '"clientInfo":{"name":"raw-transparency","version":"0"}}}');
  await response(1);
  send('{ "method" : "notifications/initialized" , "jsonrpc" : "2.0" }');

  // server -> client request (roots/list), answered by the client
  const roots1 = await serverRequest('roots/list', 1);
  send(`{"jsonrpc":"2.0","id":${JSON.stringify(roots1.id)},"result":{"roots":[{"uri":"file:///raw/r\\u00f6\\u00f6t","name":"r\u00f6\u00f6t \\"q\\""}]}}`);

  send('{"jsonrpc":"2.0","id":2,"method":"tools/list"}');
  await response(2);
  send('{"params":{"arguments":{"message":"h\\u00e9llo \u00e9 \ud83d\ude00 \\"q\\" \\\\ \\/ \\t"},"name":"echo"},"method":"tools/call","id":"echo-\\u00e9","jsonrpc":"2.0"}');
  await response('echo-é');
  send('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get-tiny-image","arguments":{}}}');
  send('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get-structured-content","arguments":{"location":"Los Angeles"}}}');
  send('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"trigger-long-running-operation",'
    + '"arguments":{"duration":0.3,"steps":3},"_meta":{"progressToken":"tok-6"}}}');
  send('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"trigger-sampling-request","arguments":{"prompt":"p","maxTokens":5}}}');
  const sampling = await serverRequest('sampling/createMessage', 1);
  send(`{"jsonrpc":"2.0","id":${JSON.stringify(sampling.id)},"result":{"model":"raw-model","role":"assistant",`
    + '"content":{"type":"text","text":"raw sampling reply \\u2603"},"stopReason":"endTurn"}}');
  send('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"no-such-tool","arguments":{}}}');
  send('{"jsonrpc":"2.0","id":9,"method":"ping"}');
  send('{"jsonrpc":"2.0","id":10,"method":"fsguard/no-such-method","params":{}}');
  send('{"jsonrpc":"2.0","id":11,"method":"resources/list"}');
  send('{"jsonrpc":"2.0","id":12,"method":"prompts/list"}');
  send('{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}');
  const roots2 = await serverRequest('roots/list', 2);
  send(`{"jsonrpc":"2.0","id":${JSON.stringify(roots2.id)},"result":{"roots":[]}}`);
  for (const id of [4, 5, 6, 7, 8, 9, 10, 11, 12]) await response(id);

  // Not vacuous: the session really carried progress, server requests and errors.
  const ms = messages();
  assert.equal(ms.filter((m) => m.method === 'notifications/progress').length, 3, 'three progress notifications');
  assert.match(JSON.stringify(ms.find((m) => m.id === 7)), /raw sampling reply/, 'the sampling reply reached the tool');
  assert.equal(ms.find((m) => m.id === 10)?.error?.code, -32601, 'unknown method error');
  assert.match(JSON.stringify(ms.find((m) => m.id === 8)), /no-such-tool/, 'unknown tool answer');

  await sleep(300); // let trailing notifications (roots log message) through
  child.stdin.end();
  let timer;
  const ex = await Promise.race([exited, new Promise((r) => { timer = setTimeout(r, 10_000, null); })]);
  clearTimeout(timer);
  assert.ok(ex, `fsguard exited after stdin EOF\n${stderr}`);
  assert.equal(ex.code, 0, `fsguard exit status (stderr: ${stderr})`);

  const serverWrote = splitLines(fs.readFileSync(teeOut));
  const serverGot = splitLines(fs.readFileSync(teeIn));
  const clientGot = splitLines(stdout);
  assert.ok(serverWrote.length >= 15, `the server wrote ${serverWrote.length} lines`);
  assertSameLines(clientGot, serverWrote, 'server stdout -> client (through fsguard)');
  assertSameLines(serverGot, sent, 'client -> server stdin (through fsguard)');
  t.diagnostic(`${serverWrote.length} server lines and ${sent.length} client lines compared byte for byte`);
});

// fsguard between a client and a server of either era of MCP (issue 37):
// the 2025 era (initialize, then requests without an envelope) and the
// stateless 2026-07-28 revision (every request carries its _meta envelope;
// servers answer server/discover; every result carries resultType).
//
// The client is the v2 TypeScript SDK client (@modelcontextprotocol/client,
// pinned), in its `auto` mode (server/discover first, falling back to
// initialize) and pinned to 2026-07-28 (no fallback). The servers are
// lib/dual-era-fs-server.mjs, built on the v2 server SDK
// (@modelcontextprotocol/server, pinned) with server-filesystem's tools and
// texts, which serves each connection in the era of its first message, and
// server-filesystem itself (2025 era only). Where the SDK has no support yet
// (a write answered with a task), the test speaks raw 2026-era lines.
//
// The matrix of client era × server era is in CONTRIBUTING.md.
//
//   node --test --test-concurrency=1 eras.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import {
  FSGUARD_BIN, REQUEST_TIMEOUT_MS, SERVER_FS_SCRIPT, descendantPids, killTree, makeWorkspace,
  spawnRawFor, textOf, vetoCode, waitFor,
} from './lib/harness.mjs';
import { ORIGINAL, assertAllowed, assertWriteVeto, coreScenario } from './lib/clients.mjs';

/** The dual-era test server (see its header). */
const DUAL_ERA_SERVER = path.join(import.meta.dirname, 'lib', 'dual-era-fs-server.mjs');

/** The two ways the v2 client negotiates the 2026 era. */
const MODES = [
  { name: 'auto', versionNegotiation: { mode: 'auto' } },
  { name: 'pinned to 2026-07-28', versionNegotiation: { mode: { pin: '2026-07-28' } } },
];

/** The _meta envelope of a 2026-era request of a client with `capabilities`. */
const envelope = (capabilities = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

/**
 * The v2 SDK client, negotiating as `versionNegotiation` says, connected to
 * `server` (the dual-era server by default) on the workspace `ws` through
 * fsguard (with `fsguardArgs`). Torn down after the test `t`. Returns
 * {client, stderrText(), call(tool, args)}.
 */
async function connectV2(t, ws, { versionNegotiation, clientName = 'fsguard-eras', server = DUAL_ERA_SERVER,
  fsguardArgs = [], env = {}, onElicit } = {}) {
  const transport = new StdioClientTransport({
    command: FSGUARD_BIN, args: [...fsguardArgs, '--', process.execPath, server, ws.dir],
    env: { ...process.env, ...env }, stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk.toString('utf8'); });
  // With `onElicit`, the client declares form elicitation and answers each
  // question (the server's, or fsguard's own) with it.
  const client = new Client({ name: clientName, version: '0.0.0' }, {
    versionNegotiation, ...(onElicit && { capabilities: { elicitation: { form: {} } } }),
  });
  if (onElicit) client.setRequestHandler('elicitation/create', (request) => onElicit(request.params));
  t.after(async () => {
    const pid = transport.pid;
    const pids = pid ? [pid, ...descendantPids(pid)] : [];
    try { await client.close(); } catch { /* already closed */ }
    for (const p of pids) killTree(p);
  });
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (err) {
    err.message += `\n--- stderr of fsguard ---\n${stderr}`;
    throw err;
  }
  const call = (name, args) => client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS });
  return { client, stderrText: () => stderr, call };
}

/** A workspace with a.txt (ORIGINAL), removed after the test `t`. */
function workspace(t, files = {}) {
  const ws = makeWorkspace({ 'a.txt': ORIGINAL, ...files });
  t.after(() => ws.cleanup());
  return { ...ws, a: ws.file('a.txt') };
}

// ---------------------------------------------------------------------------
// a 2026-era client through fsguard to a dual-era server

for (const mode of MODES) {
  test(`v2 client (${mode.name}) to a dual-era server: the core scenario, vetoes shown as 2026-era results`, async (t) => {
    const ws = workspace(t);
    const s = await connectV2(t, ws, { versionNegotiation: mode.versionNegotiation });
    assert.equal(s.client.getServerVersion()?.name, 'secure-filesystem-server');
    // Without resultType on fsguard's vetoes the client throws "missing
    // required resultType" at the first of them.
    await coreScenario(s.call, ws.a);
  });

  test(`v2 client (${mode.name}) to a dual-era server: a relative path resolves once the server's directories are learned`, async (t) => {
    const ws = workspace(t, { 'b.txt': 'other\n' });
    const s = await connectV2(t, ws, { versionNegotiation: mode.versionNegotiation, fsguardArgs: ['--log-level', 'debug'] });
    // The session's first request is the client's; fsguard then asks the
    // server itself, in the client's era, which server it is and where it serves.
    assertAllowed(await s.call('read_text_file', { path: ws.file('b.txt') }), 'first read');
    const learned = await waitFor(() => s.stderrText().includes("the upstream's allowed directories"), 5000);
    assert.ok(learned, `fsguard learned the directories: ${s.stderrText()}`);

    assertWriteVeto(await s.call('write_file', { path: 'a.txt', content: 'blind\n' }), 'not_read', ws.a, 'blind relative write');
    assertAllowed(await s.call('read_text_file', { path: 'a.txt' }), 'relative read');
    assertAllowed(await s.call('write_file', { path: 'a.txt', content: 'relative, after reading\n' }), 'relative write');
    assert.equal(fs.readFileSync(ws.a, 'utf8'), 'relative, after reading\n');
  });

  test(`v2 client (${mode.name}) named claude-code in its envelope: Claude Code's result limit applies`, async (t) => {
    const big = `${'x'.repeat(99)}\n`.repeat(600); // 60,000 characters: Claude Code shows 50,000
    const ws = workspace(t, { 'big.txt': big });
    const s = await connectV2(t, ws, { versionNegotiation: mode.versionNegotiation, clientName: 'claude-code' });
    const file = ws.file('big.txt');
    const read = await s.call('read_text_file', { path: file });
    assert.equal(textOf(read), big, 'the server sent the whole file');
    const write = await s.call('write_file', { path: file, content: 'short\n' });
    assert.equal(vetoCode(write), 'partial_read', `the model saw only part of it: ${JSON.stringify(write).slice(0, 400)}`);
    assert.equal(fs.readFileSync(file, 'utf8'), big);
  });
}

test('v2 client (pinned to 2026-07-28) with verify upstream: fsguard\'s own reads are 2026-era requests', async (t) => {
  // The session's first call is a write, so fsguard's read of the file
  // through the server is the first request the server sees: without the
  // envelope it would put the server in the 2025 era, whose answers the
  // client rejects.
  const ws = workspace(t);
  const config = ws.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ verify: 'upstream' }));
  const s = await connectV2(t, ws, {
    versionNegotiation: { mode: { pin: '2026-07-28' } }, fsguardArgs: ['--config', config],
  });
  await coreScenario(s.call, ws.a);
});

// ---------------------------------------------------------------------------
// a v2 client in auto mode to a server of the 2025 era only

test('v2 client (auto) to server-filesystem (2025 era only): the fallback to initialize keeps the core scenario', async (t) => {
  const ws = workspace(t);
  const s = await connectV2(t, ws, { versionNegotiation: { mode: 'auto' }, server: SERVER_FS_SCRIPT });
  assert.equal(s.client.getServerVersion()?.name, 'secure-filesystem-server', 'the server answered initialize');
  await coreScenario(s.call, ws.a);
});

// ---------------------------------------------------------------------------
// a change that has not finished (raw 2026-era lines where the SDK has no
// tasks yet)

/** fsguard in raw lines before the dual-era server, answering writes as `answer` says (see its header). */
function rawDualEra(t, ws, answer) {
  const h = spawnRawFor(t, ['--', process.execPath, DUAL_ERA_SERVER, ws.dir], { env: { DUAL_ERA_WRITE_ANSWER: answer } });
  const call = (id, name, args, capabilities = {}) => h.send({
    jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: envelope(capabilities) },
  });
  return { h, call };
}

test('a guarded write whose request declares the Tasks extension is answered at once, and its record is right', async (t) => {
  const ws = workspace(t);
  const { h, call } = rawDualEra(t, ws, 'task');
  // The client takes tasks; the server gives one to any request that says so.
  const tasks = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
  call(1, 'read_text_file', { path: ws.a }, tasks);
  assert.equal((await h.response(1)).result?.content?.[0]?.text, ORIGINAL);

  call(2, 'write_file', { path: ws.a, content: 'mine\n' }, tasks);
  const write = await h.response(2);
  // fsguard took the extension out of the write's capabilities: the server
  // wrote at once and answered with its result, not a task.
  assert.equal(write.result?.resultType, 'complete', JSON.stringify(write));
  assert.match(write.result.content[0].text, /Successfully wrote/);
  assert.equal(fs.readFileSync(ws.a, 'utf8'), 'mine\n');

  // A person's save after it is caught by the next write, with its diff.
  fs.writeFileSync(ws.a, 'the person\'s save\n');
  call(3, 'write_file', { path: ws.a, content: 'again\n' }, tasks);
  const next = await h.response(3);
  assert.equal(next.result?._meta?.['fsguard/veto']?.code, 'changed', JSON.stringify(next));
  assert.match(next.result.content[0].text, /\+the person's save/);
  assert.equal(fs.readFileSync(ws.a, 'utf8'), 'the person\'s save\n');
});

test('a write the server answers with a task all the same is not taken for a finished write', async (t) => {
  const ws = workspace(t);
  const { h, call } = rawDualEra(t, ws, 'task-always');
  call(1, 'read_text_file', { path: ws.a });
  const read = await h.response(1);
  assert.equal(read.result?.resultType, 'complete', JSON.stringify(read));
  assert.equal(read.result.content[0].text, ORIGINAL);

  call(2, 'write_file', { path: ws.a, content: 'mine\n' });
  const unfinished = await h.response(2);
  assert.equal(unfinished.result?.resultType, 'task', 'the client gets the server answer');
  // The task's write lands a moment later, as the agent's write would.
  assert.ok(await waitFor(() => fs.readFileSync(ws.a, 'utf8') === 'mine\n', 3000), 'the task wrote');

  call(3, 'write_file', { path: ws.a, content: 'again\n' });
  const next = await h.response(3);
  assert.equal(next.result?.resultType, 'complete', JSON.stringify(next));
  assert.equal(next.result?._meta?.['fsguard/veto']?.code, 'unknown_outcome', JSON.stringify(next));
  assert.match(next.result.content[0].text, /resultType "task".*may still be under way.*Read it again, then retry\./s);
  assert.equal(fs.readFileSync(ws.a, 'utf8'), 'mine\n');
});

// ---------------------------------------------------------------------------
// multi-round-trip requests, through the v2 client's own driver (it answers
// input_required with its elicitation handler and retries)

const PINNED = { mode: { pin: '2026-07-28' } };

test('v2 client: a write the server confirms first is done by the retry, decided again then', async (t) => {
  const ws = workspace(t);
  const asked = [];
  const s = await connectV2(t, ws, {
    versionNegotiation: PINNED, env: { DUAL_ERA_WRITE_ANSWER: 'confirm' },
    onElicit: (params) => { asked.push(params.message); return { action: 'accept', content: { ok: true } }; },
  });
  assertAllowed(await s.call('read_text_file', { path: ws.a }), 'read');
  assertAllowed(await s.call('write_file', { path: ws.a, content: 'mine\n' }), 'confirmed write');
  assert.deepEqual(asked, [`Overwrite ${ws.a}?`]);
  assert.equal(fs.readFileSync(ws.a, 'utf8'), 'mine\n');
  // The record is the write's: the agent knows what it wrote.
  assertAllowed(await s.call('write_file', { path: ws.a, content: 'mine, again\n' }), 'next write');
  assert.equal(fs.readFileSync(ws.a, 'utf8'), 'mine, again\n');
});

test('v2 client: a person\'s save while the server asks for its confirmation is caught when the retry comes', async (t) => {
  const ws = workspace(t);
  const s = await connectV2(t, ws, {
    versionNegotiation: PINNED, env: { DUAL_ERA_WRITE_ANSWER: 'confirm' },
    onElicit: () => {
      fs.writeFileSync(ws.a, 'the person\'s save\n'); // while the question is open
      return { action: 'accept', content: { ok: true } };
    },
  });
  assertAllowed(await s.call('read_text_file', { path: ws.a }), 'read');
  const write = await s.call('write_file', { path: ws.a, content: 'mine\n' });
  assertWriteVeto(write, 'changed', ws.a, 'the retry');
  assert.equal(fs.readFileSync(ws.a, 'utf8'), 'the person\'s save\n');
});

// ---------------------------------------------------------------------------
// override: ask in the 2026 era: fsguard's own question, in its answer

/** A config file in `ws` setting override: ask; returns fsguard's arguments. */
function askingConfig(ws) {
  const config = ws.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ override: 'ask' }));
  return ['--config', config];
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

test('v2 client with an elicitation handler: override ask asks the person through input_required, and their accept lets the write go once', async (t) => {
  const ws = workspace(t);
  const asked = [];
  const s = await connectV2(t, ws, {
    versionNegotiation: PINNED, fsguardArgs: askingConfig(ws),
    onElicit: async (params) => {
      asked.push(params);
      await sleep(1200); // a person reads the question
      return { action: 'accept', content: { allow: true } };
    },
  });
  assertAllowed(await s.call('write_file', { path: ws.a, content: 'blind\n' }), 'the write the person allowed');
  assert.equal(fs.readFileSync(ws.a, 'utf8'), 'blind\n');
  assert.equal(asked.length, 1);
  assert.match(asked[0].message, /was stopped by fsguard: the file exists and the agent has not read it/);
  assert.deepEqual(asked[0].requestedSchema.required, ['allow']);
  // Only that call: the next blind write is asked about again.
  fs.writeFileSync(ws.a, 'the person\'s save\n');
  await s.call('write_file', { path: ws.a, content: 'blind again\n' });
  assert.equal(asked.length, 2);
});

test('v2 client with an elicitation handler: the person\'s decline refuses the write, saying so', async (t) => {
  const ws = workspace(t);
  const s = await connectV2(t, ws, {
    versionNegotiation: PINNED, fsguardArgs: askingConfig(ws),
    onElicit: async () => { await sleep(1200); return { action: 'decline' }; },
  });
  const write = await s.call('write_file', { path: ws.a, content: 'blind\n' });
  assertWriteVeto(write, 'not_read', ws.a, 'declined');
  assert.match(textOf(write), /the client answered decline: the user refused it/);
  assert.equal(fs.readFileSync(ws.a, 'utf8'), ORIGINAL);
});

test('v2 client: the person allows the write, then the server asks its own confirmation: the server\'s retry is the same write', async (t) => {
  const ws = workspace(t);
  const asked = [];
  const s = await connectV2(t, ws, {
    versionNegotiation: PINNED, fsguardArgs: askingConfig(ws), env: { DUAL_ERA_WRITE_ANSWER: 'confirm' },
    onElicit: async (params) => {
      asked.push(params.message);
      if (params.requestedSchema.properties.allow) {
        await sleep(1200);
        return { action: 'accept', content: { allow: true } };
      }
      return { action: 'accept', content: { ok: true } };
    },
  });
  assertAllowed(await s.call('write_file', { path: ws.a, content: 'blind\n' }), 'allowed and confirmed');
  assert.equal(asked.length, 2, asked.join('\n---\n'));
  assert.match(asked[0], /was stopped by fsguard/);
  assert.equal(asked[1], `Overwrite ${ws.a}?`);
  assert.equal(fs.readFileSync(ws.a, 'utf8'), 'blind\n');
});

test('a 2026-era request that does not declare elicitation gets the veto, saying so', async (t) => {
  const ws = workspace(t);
  const s = await connectV2(t, ws, { versionNegotiation: PINNED, fsguardArgs: askingConfig(ws) });
  const write = await s.call('write_file', { path: ws.a, content: 'blind\n' });
  assertWriteVeto(write, 'not_read', ws.a, 'no elicitation');
  assert.match(textOf(write), /this request's client capabilities do not declare MCP elicitation \(form\)/);
});

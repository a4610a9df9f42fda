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
  fsguardArgs = [], env = {} } = {}) {
  const transport = new StdioClientTransport({
    command: FSGUARD_BIN, args: [...fsguardArgs, '--', process.execPath, server, ws.dir],
    env: { ...process.env, ...env }, stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk.toString('utf8'); });
  const client = new Client({ name: clientName, version: '0.0.0' }, { versionNegotiation });
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
// a change that has not finished (raw 2026-era lines: the SDK has no tasks yet)

for (const answer of ['task', 'input_required']) {
  test(`a write the server answers with resultType ${answer} is not taken for a finished write`, async (t) => {
    const ws = workspace(t);
    const h = spawnRawFor(t, ['--', process.execPath, DUAL_ERA_SERVER, ws.dir],
      { env: { DUAL_ERA_WRITE_ANSWER: answer } });
    // The server asks its question only of a client that declares it can ask the user.
    const capabilities = answer === 'input_required' ? { elicitation: { form: {} } } : {};
    const call = (id, name, args) => h.send({
      jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: envelope(capabilities) },
    });
    call(1, 'read_text_file', { path: ws.a });
    const read = await h.response(1);
    assert.equal(read.result?.resultType, 'complete', JSON.stringify(read));
    assert.equal(read.result.content[0].text, ORIGINAL);

    call(2, 'write_file', { path: ws.a, content: 'mine\n' });
    const unfinished = await h.response(2);
    assert.equal(unfinished.result?.resultType, answer, 'the client gets the server answer');
    if (answer === 'task') {
      // The task's write lands a moment later, as the agent's write would.
      assert.ok(await waitFor(() => fs.readFileSync(ws.a, 'utf8') === 'mine\n', 3000), 'the task wrote');
    }

    call(3, 'write_file', { path: ws.a, content: 'again\n' });
    const next = await h.response(3);
    assert.equal(next.result?.resultType, 'complete', JSON.stringify(next));
    assert.equal(next.result?._meta?.['fsguard/veto']?.code, 'unknown_outcome', JSON.stringify(next));
    assert.match(next.result.content[0].text, new RegExp(`resultType "${answer}"`));
    assert.equal(fs.readFileSync(ws.a, 'utf8'), answer === 'task' ? 'mine\n' : ORIGINAL);
  });
}

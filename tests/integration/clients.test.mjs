// The core scenario through fsguard with the MCP clients people use, beyond
// the v1 SDK that the rest of the suite drives (issue 18, item 7):
//
//   - the v2 TypeScript SDK client, @modelcontextprotocol/client;
//   - the MCP Inspector: its CLI (`mcp-inspector --cli`) and its connection
//     CLI `mcpdo`, both from @modelcontextprotocol/inspector;
//   - Apify's mcpc, @apify/mcpc.
//
// Core scenario (lib/clients.mjs): a blind write_file is vetoed, with fsguard's
// text reaching the client; read_text_file; write_file passes; an outside
// writer changes the file; write_file is vetoed as changed, and the veto's
// diff of the change reaches the client too. The bytes on disk are checked
// after each step. Versions are pinned in package.json.
//
// fsguard keeps its records for one session, that is, one upstream process.
// The Inspector CLI starts a new server for every call, so it cannot carry a
// read over to a later write: its test checks what one call can show, and
// that the next call is a new session. The full scenario with the Inspector
// runs through mcpdo, which keeps one connection open in a daemon; mcpc keeps
// one in a bridge process per @session.
//
// The CLIs run on the pinned node 22 (see NODE22 in lib/clients.mjs). Each
// one gets a private HOME (and state directory), so nothing is written to the
// real ~/.mcp-inspector or ~/.mcpc, and its daemon or bridge is stopped after
// the test.
//
//   node --test --test-concurrency=1 clients.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import {
  FSGUARD_BIN, REQUEST_TIMEOUT_MS, SERVER_FS_SCRIPT, killTree, makeWorkspace,
} from './lib/harness.mjs';
import {
  INSPECTOR, MCPC, MCPDO, ORIGINAL, assertAllowed, assertWriteVeto, coreScenario, jsonOut, runCli,
} from './lib/clients.mjs';

/** The upstream as every client here stores it: server-filesystem on `dir`, behind fsguard. */
const guardedServer = (dir) => ({ command: FSGUARD_BIN, args: [process.execPath, SERVER_FS_SCRIPT, dir] });

/**
 * A workspace with a.txt (ORIGINAL) and a private home for the client's state.
 * `onCleanup(fn)` adds a step to run after the test; the steps run last first,
 * and the workspace is removed after all of them (a daemon must be stopped
 * while its state directory still exists).
 */
function clientWorkspace(t) {
  const ws = makeWorkspace({ 'a.txt': ORIGINAL, 'home/.keep': '' });
  const steps = [];
  t.after(async () => {
    while (steps.length > 0) await steps.pop()();
    ws.cleanup();
  });
  return { ...ws, home: ws.file('home'), a: ws.file('a.txt'), onCleanup: (fn) => steps.push(fn) };
}

/** Kill `pid` and its descendants if it still runs a command line containing `word` (not a reused pid). */
function killTreeOf(pid, word) {
  if (!(pid > 0)) return;
  let cmdline = '';
  try { cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'); } catch { return; }
  if (cmdline.includes(word)) killTree(pid);
}

/** Write `{mcpServers: {[name]: server}}`, the config file format both CLIs read; returns its path. */
function writeServerConfig(ws, name, server) {
  const file = ws.file('mcp.json');
  fs.writeFileSync(file, JSON.stringify({ mcpServers: { [name]: server } }, null, 2));
  return file;
}

// ---------------------------------------------------------------------------
// the v2 TypeScript SDK

test('the v2 TypeScript SDK client runs the core scenario through fsguard', async (t) => {
  const ws = clientWorkspace(t);
  const transport = new StdioClientTransport({ ...guardedServer(ws.dir), stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk.toString('utf8'); });
  const client = new Client({ name: 'fsguard-v2-sdk', version: '0.0.0' });
  ws.onCleanup(async () => {
    const pid = transport.pid;
    try { await client.close(); } catch { /* already closed */ }
    killTree(pid);
  });

  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (err) {
    err.message += `\n--- stderr of fsguard ---\n${stderr}`;
    throw err;
  }
  assert.equal(client.getServerVersion()?.name, 'secure-filesystem-server', 'the server answered initialize');
  await coreScenario(
    (name, args) => client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT_MS }), ws.a);
});

// ---------------------------------------------------------------------------
// the MCP Inspector

/** Arguments of `mcp-inspector --cli <server> --method tools/call` for one tool call, JSON out. */
function inspectorCall(server, tool, args) {
  return ['--cli', server.command, ...server.args,
    '--method', 'tools/call', '--tool-name', tool, '--tool-args-json', JSON.stringify(args),
    '--format', 'json', '-q'];
}

test('the Inspector CLI gets the not_read veto in one call, and its next call is a new fsguard session', async (t) => {
  const ws = clientWorkspace(t);
  const server = guardedServer(ws.dir);
  const env = { HOME: ws.home };

  const blind = await runCli(INSPECTOR, inspectorCall(server, 'write_file', { path: ws.a, content: 'blind\n' }), { env });
  assert.notEqual(blind.code, 0, 'the Inspector reports the refused call as a failure');
  assertWriteVeto(jsonOut(blind, 'blind write').result, 'not_read', ws.a, 'blind write');
  assert.equal(fs.readFileSync(ws.a, 'utf8'), ORIGINAL, 'the blind write did not reach the disk');

  const read = await runCli(INSPECTOR, inspectorCall(server, 'read_text_file', { path: ws.a }), { env });
  assert.equal(read.code, 0, `read: ${read.stderr}`);
  assertAllowed(jsonOut(read, 'read').result, 'read');

  // The read above licensed a write in its own session only, which ended
  // with that call: a write in the next call is blind again.
  const write = await runCli(INSPECTOR, inspectorCall(server, 'write_file', { path: ws.a, content: 'agent\n' }), { env });
  assertWriteVeto(jsonOut(write, 'write in a new call').result, 'not_read', ws.a, 'write in a new call');
  assert.equal(fs.readFileSync(ws.a, 'utf8'), ORIGINAL, 'the file is unchanged');
});

test("the Inspector's mcpdo runs the core scenario through fsguard in one connection", async (t) => {
  const ws = clientWorkspace(t);
  const config = writeServerConfig(ws, 'fs', guardedServer(ws.dir));
  const daemonDir = ws.file('daemon');
  const env = { HOME: ws.home, MCP_INSPECTOR_DAEMON_DIR: daemonDir, MCP_INSPECTOR_SECRET_STORE: 'file' };
  const mcpdo = (...args) => runCli(MCPDO, ['--format', 'json', ...args], { env });
  ws.onCleanup(async () => {
    await mcpdo('daemon', 'stop').catch(() => {});
    // Last resort: the daemon (and fsguard under it) by the pid in its lock file.
    const lock = path.join(daemonDir, 'mcpdod.lock');
    if (fs.existsSync(lock)) killTreeOf(Number.parseInt(fs.readFileSync(lock, 'utf8'), 10), 'mcpdod');
  });

  const connect = await mcpdo('connect', 'fs', '--config', config);
  assert.equal(connect.code, 0, `connect: ${connect.stdout}\n${connect.stderr}`);
  assert.equal(jsonOut(connect, 'connect').name, 'fs');

  await coreScenario(async (tool, args) => {
    const run = await mcpdo('@fs', 'tools/call', tool, '--tool-args-json', JSON.stringify(args));
    return jsonOut(run, `mcpdo tools/call ${tool}`);
  }, ws.a);
});

// ---------------------------------------------------------------------------
// mcpc

test('mcpc runs the core scenario through fsguard in one @session', async (t) => {
  const ws = clientWorkspace(t);
  const config = writeServerConfig(ws, 'fs', guardedServer(ws.dir));
  const env = { HOME: ws.home, MCPC_HOME_DIR: ws.file('home/.mcpc') };
  const mcpc = (...args) => runCli(MCPC, args, { env });
  ws.onCleanup(async () => {
    await mcpc('@fsguard', 'close').catch(() => {});
    // Last resort: the bridge (and fsguard under it) by the pid in its socket's name.
    const bridges = ws.file('home/.mcpc/bridges');
    for (const name of fs.existsSync(bridges) ? fs.readdirSync(bridges) : []) {
      killTreeOf(Number(/^@fsguard\.(\d+)\.sock$/.exec(name)?.[1]), 'bridge');
    }
  });

  const connect = await mcpc('connect', `${config}:fs`, '@fsguard');
  assert.equal(connect.code, 0, `connect: ${connect.stdout}\n${connect.stderr}`);
  assert.match(connect.stdout, /secure-filesystem-server/, 'the session reached the server');

  await coreScenario(async (tool, args) => {
    const run = await mcpc('--json', '@fsguard', 'tools-call', tool, JSON.stringify(args));
    return jsonOut(run, `mcpc tools-call ${tool}`);
  }, ws.a);
});

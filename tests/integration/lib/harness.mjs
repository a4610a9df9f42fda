// Shared helpers for fsguard's integration tests.
//
// Two ways to drive the binary:
//  - connect(): the official MCP SDK client over stdio (what a real agent host does);
//  - spawnRaw(): a raw child process fed line by line (for protocol edge cases).
// Both speak the era under test (FSGUARD_TEST_ERA, lib/era-client.mjs): the
// 2025 era by default, the stateless 2026-07-28 era with FSGUARD_TEST_ERA=2026.
// Every process started here is tracked and killed (with its descendants) on
// close, and again as a last resort when the test process exits.

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { ERA, eraClient, eraTransport, inEra } from './era-client.mjs';

export { ERA, MODERN_REVISION, eraClient, eraTransport, inEra, only2025, only2026 } from './era-client.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Directory of the integration test package (tests/integration). */
export const TESTS_DIR = path.resolve(here, '..');

/** The fsguard binary under test: $FSGUARD_BIN, else ../../build/fsguard from tests/integration. */
export const FSGUARD_BIN = process.env.FSGUARD_BIN
  ? path.resolve(process.env.FSGUARD_BIN)
  : path.resolve(TESTS_DIR, '..', '..', 'build', 'fsguard');

/** The pinned upstream server script. */
export const SERVER_FS_SCRIPT = path.join(
  TESTS_DIR, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

/** The dual-era filesystem server on the v2 server SDK (see its header). */
export const DUAL_ERA_SERVER = path.join(here, 'dual-era-fs-server.mjs');

/**
 * The filesystem server of the era under test: server-filesystem in the 2025
 * era, the dual-era server (server-filesystem's tools and texts) in the 2026 era.
 */
export const FS_SERVER_SCRIPT = ERA === '2026' ? DUAL_ERA_SERVER : SERVER_FS_SCRIPT;

/** Upstream wrapper that logs every stdin line it receives (see tee-upstream.mjs). */
export const TEE_SCRIPT = path.join(here, 'tee-upstream.mjs');

/** A scripted fake upstream (see fake-upstream.mjs). */
export const FAKE_UPSTREAM_SCRIPT = path.join(here, 'fake-upstream.mjs');

/** Default per-request timeout: a hung proxy must fail the test, not stall the suite. */
export const REQUEST_TIMEOUT_MS = 10_000;

// ---------------------------------------------------------------------------
// process bookkeeping

const tracked = new Set();

function isAlive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // field 3 (after "pid (comm)") is the state; a zombie is not running
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
export { isAlive };

/** Direct children of `pid` (via `ps -o pid= --ppid`). */
export function childPids(pid) {
  try {
    const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
    return out.split('\n').map((s) => s.trim()).filter(Boolean).map(Number);
  } catch {
    return []; // ps exits 1 when there is no match
  }
}

/** All descendants of `pid`, depth first. */
export function descendantPids(pid) {
  const out = [];
  for (const c of childPids(pid)) {
    out.push(c, ...descendantPids(c));
  }
  return out;
}

function killPids(pids) {
  for (const p of pids) {
    if (!isAlive(p)) continue;
    try { process.kill(p, 'SIGKILL'); } catch { /* already gone */ }
  }
}

process.on('exit', () => killPids([...tracked]));

function track(pids) {
  for (const p of pids) if (p) tracked.add(p);
}

/** Kill `pid` and every descendant still running; forget them. */
export function killTree(pid) {
  if (!pid) return;
  const pids = [pid, ...descendantPids(pid)];
  killPids(pids);
  for (const p of pids) tracked.delete(p);
}

// ---------------------------------------------------------------------------
// small utilities

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Poll `cond` every 20 ms until it returns truthy or `timeoutMs` passes; returns the last value. */
export async function waitFor(cond, timeoutMs = 3000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v || Date.now() >= end) return v;
    await sleep(20);
  }
}

/** Environment of the test process without any FSGUARD_* variable, plus `extra`. */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('FSGUARD_')) env[k] = v;
  }
  return { ...env, ...extra };
}

function assertBinary() {
  if (!fs.existsSync(FSGUARD_BIN)) {
    throw new Error(`fsguard binary not found at ${FSGUARD_BIN}; build it or set FSGUARD_BIN`);
  }
}

// ---------------------------------------------------------------------------
// workspaces

/**
 * Create a fresh, realpath'ed temp directory. Returns {dir, file(rel), cleanup()}.
 * `files` maps relative names to initial contents.
 */
export function makeWorkspace(files = {}, prefix = 'fsguard-it-') {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
  }
  return {
    dir,
    file: (rel) => path.join(dir, rel),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------
// SDK sessions

/**
 * Start an MCP SDK client of the era under test against its filesystem server
 * (FS_SERVER_SCRIPT) on `dir`, via fsguard or directly.
 * `upstream` replaces the upstream command (default: [node, FS_SERVER_SCRIPT, dir]);
 * `clientName` is the clientInfo.name the client sends.
 * Returns {client, transport, close(), stderrText(), sent(), pid}.
 */
export async function connect({
  viaGuard = true, dir, extraArgs = [], env = {}, upstream, cwd, clientName = 'fsguard-integration',
} = {}) {
  const upstreamCmd = upstream ?? [process.execPath, FS_SERVER_SCRIPT, dir];
  let command;
  let args;
  if (viaGuard) {
    assertBinary();
    command = FSGUARD_BIN;
    args = [...extraArgs, '--', ...upstreamCmd];
  } else {
    [command, ...args] = upstreamCmd;
  }
  const transport = eraTransport({ command, args, env, stderr: 'pipe', cwd });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk.toString('utf8'); });

  // Record every message the client sends, so tests can learn request ids.
  const sent = [];
  const origSend = transport.send.bind(transport);
  transport.send = (msg, opts) => { sent.push(msg); return origSend(msg, opts); };

  const client = eraClient({ name: clientName, version: '0.0.0' }, { capabilities: {} });
  const known = new Set();
  const remember = () => {
    const pid = transport.pid;
    if (!pid) return;
    for (const p of [pid, ...descendantPids(pid)]) known.add(p);
    track(known);
  };

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    remember();
    try { await client.close(); } catch { /* ignore */ }
    killPids([...known]);
    for (const p of known) tracked.delete(p);
  };

  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (err) {
    remember();
    await close();
    err.message += `\n--- stderr of ${command} ---\n${stderr}`;
    throw err;
  }
  remember();
  return {
    client,
    transport,
    close,
    stderrText: () => stderr,
    sent: () => sent,
    pid: transport.pid,
  };
}

/** Call a tool and return the raw result (never throws on isError). */
export function callTool(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
}

/** The fsguard veto code of a tools/call result, or undefined. */
export function vetoCode(result) {
  return result?._meta?.['fsguard/veto']?.code;
}

/** The full `_meta["fsguard/veto"]` object, or undefined. */
export function vetoMeta(result) {
  return result?._meta?.['fsguard/veto'];
}

/** Concatenated text of a result's text blocks. */
export function textOf(result) {
  return (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

/**
 * Workspace + fsguard session bound to a node:test context; both are torn down
 * after the test, even when it fails. Returns {dir, file, s, call}.
 */
export async function openSession(t, { files = {}, ...opts } = {}) {
  const ws = makeWorkspace(files);
  let s = null;
  t.after(async () => {
    if (s) await s.close();
    ws.cleanup();
  });
  s = await connect({ dir: ws.dir, ...opts });
  return { dir: ws.dir, file: ws.file, s, call: (name, args) => callTool(s.client, name, args) };
}

// ---------------------------------------------------------------------------
// raw sessions (no SDK)

/**
 * Spawn fsguard with `args` and raw pipes. Returns a handle with:
 *   send(objOrString), messages (parsed stdout lines), nonJson (stdout lines that
 *   are not JSON), stderrText(), waitMessage(pred, ms), waitExit(ms), endInput(), kill().
 * The environment is the test's own minus FSGUARD_*, plus `env`.
 */
export function spawnRaw(args, { env = {}, cwd, command = FSGUARD_BIN } = {}) {
  if (command === FSGUARD_BIN) assertBinary();
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: cleanEnv(env), cwd });
  track([child.pid]);
  const h = {
    child,
    pid: child.pid,
    messages: [],
    nonJson: [],
    stdoutText: '',
    exit: null, // {code, signal} once exited
    spawnError: null,
  };
  let stderr = '';
  let buf = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    h.stdoutText += chunk;
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line === '') continue;
      try { h.messages.push(JSON.parse(line)); } catch { h.nonJson.push(line); }
    }
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  child.stdin.on('error', () => { /* EPIPE after the child died is expected in some tests */ });
  child.on('error', (err) => { h.spawnError = err; });
  // 'exit' can come before the last stdout bytes are read: resolve once the
  // pipes are closed too, or shortly after 'exit' if another process still
  // holds them.
  const closed = new Promise((resolve) => child.on('close', resolve));
  const exited = new Promise((resolve) => {
    child.on('exit', async (code, signal) => {
      await Promise.race([closed, sleep(500)]);
      h.exit = { code, signal };
      resolve(h.exit);
    });
  });

  h.stderrText = () => stderr;
  h.send = (msg) => {
    const line = typeof msg === 'string' ? msg : JSON.stringify(msg);
    if (!child.stdin.destroyed && child.stdin.writable) child.stdin.write(line + '\n');
  };
  h.endInput = () => child.stdin.end();
  /** Wait for a stdout message matching `pred`; throws with context on timeout. */
  h.waitMessage = async (pred, ms = REQUEST_TIMEOUT_MS) => {
    const m = await waitFor(() => h.messages.find(pred), ms);
    if (!m) {
      throw new Error(`no matching message within ${ms} ms; got ${JSON.stringify(h.messages).slice(0, 2000)}`
        + `\n--- stderr ---\n${stderr}`);
    }
    return m;
  };
  h.response = (id, ms) => h.waitMessage((m) => m && m.id === id && ('result' in m || 'error' in m), ms);
  /** Resolves to {code, signal}, or null if the process is still running after `ms`. */
  h.waitExit = (ms = 5000) => Promise.race([exited, sleep(ms).then(() => null)]);
  h.kill = () => { killTree(child.pid); };
  /**
   * Send, without waiting for its answer, what opens a session of the era
   * under test as `clientInfo` with `capabilities`: initialize in the 2025
   * era; in the 2026 era, which has no initialize, what opens a v2 client's
   * session: server/discover, with the envelope.
   */
  h.open = (id = 1, { clientInfo = { name: 'raw', version: '0' }, capabilities = {} } = {}) => h.send(ERA === '2026'
    ? { jsonrpc: '2.0', id, method: 'server/discover', params: inEra({}, { clientInfo, capabilities }) }
    : { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo } });
  /** In the 2025 era, send notifications/initialized (the 2026 era has none). */
  h.initialized = () => {
    if (ERA !== '2026') h.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  };
  /** h.open(`id`, `options`), wait for its answer, then h.initialized(); returns the answer. */
  h.initialize = async (id = 1, options = {}) => {
    h.open(id, options);
    const r = await h.response(id);
    h.initialized();
    return r;
  };
  return h;
}

/** spawnRaw bound to a node:test context: killed (with descendants) after the test. */
export function spawnRawFor(t, args, opts) {
  const h = spawnRaw(args, opts);
  t.after(() => h.kill());
  return h;
}

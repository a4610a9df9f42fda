// Remote clients through a standard gateway (issue 17, item 4): fsguard behind
// supergateway (pinned in package.json) in its stateful stdio→Streamable HTTP
// mode, driven by the SDK's Streamable HTTP client transport.
//
// supergateway starts its `--stdio` command once per HTTP session, through
// `/bin/sh -c` in a process group of its own, so every session gets its own
// fsguard, its own server-filesystem and its own read records. When the
// session ends (a DELETE from the client, or --sessionTimeout ms without a
// request open), it sends SIGTERM to that process group, and SIGKILL 5 s
// later if anything is left; fsguard, on SIGTERM, stops the server it started
// (in a process group of its own, so the gateway's signal does not reach it
// directly). The tests check with /proc that no process of a closed session
// remains, including any that would have been orphaned.
//
// Without --stateful, supergateway starts the command anew for every HTTP
// request; the last test shows what that means for fsguard (no read ever
// licenses a write), which is why the docs ask for --stateful.
//
// The command line is the one docs/clients.md ("Remote clients through a
// gateway") shows, apart from the paths.
//
//   node --test --test-concurrency=1 gateway.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import {
  FSGUARD_BIN, REQUEST_TIMEOUT_MS, SERVER_FS_SCRIPT, TESTS_DIR,
  callTool, descendantPids, isAlive, killTree, makeWorkspace, spawnRaw, textOf, vetoCode, vetoMeta, waitFor,
} from './lib/harness.mjs';

const SUPERGATEWAY_SCRIPT = path.join(TESTS_DIR, 'node_modules', 'supergateway', 'dist', 'index.js');

const ORIGINAL = 'written before any session\n';

const readDisk = (p) => fs.readFileSync(p, 'utf8');

/** Quote `s` for /bin/sh: supergateway runs its --stdio command through a shell. */
const shQuote = (s) => `'${s.replaceAll("'", "'\\''")}'`;

/** A TCP port that was free a moment ago (the gateway is retried if it is taken meanwhile). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The argv of process `pid` (empty once it is gone). */
function argvOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** Pids of every running process whose argv mentions `word`, but `except`. */
function processesMentioning(word, except) {
  return fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number)
    .filter((pid) => pid !== except && pid !== process.pid && isAlive(pid)
      && argvOf(pid).some((arg) => arg.includes(word)));
}

/**
 * supergateway's arguments, in the order docs/clients.md shows them: the
 * `stdio` command, Streamable HTTP output, `--stateful` when `stateful`, `port`.
 */
function gatewayArgs({ stdio, port, stateful = true }) {
  return ['--stdio', stdio, '--outputTransport', 'streamableHttp', ...(stateful ? ['--stateful'] : []),
    '--port', String(port)];
}

/**
 * Start supergateway with fsguard in front of server-filesystem on `dir` as
 * its stdio command (gatewayArgs, then `extra`), and wait until it listens.
 * Stopped after the test `t`. Returns {url, pid, log()}.
 */
async function startGateway(t, dir, { stateful = true, extra = [] } = {}) {
  const stdio = [FSGUARD_BIN, process.execPath, SERVER_FS_SCRIPT, dir].map(shQuote).join(' ');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    // stdin stays an open pipe: supergateway exits when it is closed.
    const h = spawnRaw([SUPERGATEWAY_SCRIPT, ...gatewayArgs({ stdio, port, stateful }), ...extra],
      { command: process.execPath });
    const log = () => `--- supergateway stdout ---\n${h.stdoutText}\n--- stderr ---\n${h.stderrText()}`;
    const listening = await waitFor(() => h.exit || h.stdoutText.includes(`Listening on port ${port}`), 10_000);
    if (listening === true) {
      t.after(async () => {
        // SIGTERM lets the gateway stop its sessions' process groups itself;
        // whatever is still running a moment later is killed.
        try { process.kill(h.pid, 'SIGTERM'); } catch { /* already gone */ }
        await h.waitExit(3000);
        killTree(h.pid);
      });
      return { url: new URL(`http://127.0.0.1:${port}/mcp`), pid: h.pid, log };
    }
    h.kill();
    if (attempt === 3) assert.fail(`supergateway did not start on port ${port}\n${log()}`);
  }
}

/**
 * One Streamable HTTP session with the gateway at `gw` (with a session id
 * when `stateful`). `pids` are the processes the gateway started for it
 * (those that were not running before the session began).
 * Returns {client, transport, pids, call(name, args)}.
 */
async function openHttpSession(gw, name, { stateful = true } = {}) {
  const before = new Set(descendantPids(gw.pid));
  const transport = new StreamableHTTPClientTransport(gw.url);
  const client = new Client({ name, version: '0.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (err) {
    err.message += `\n${gw.log()}`;
    throw err;
  }
  assert.equal(Boolean(transport.sessionId), stateful,
    `${name}: the gateway ${stateful ? 'gave' : 'did not give'} the session an id`);
  const pids = descendantPids(gw.pid).filter((pid) => !before.has(pid));
  return { client, transport, pids, call: (tool, args) => callTool(client, tool, args) };
}

/** The session's processes: exactly one fsguard and one server-filesystem (and a shell or not). */
function assertOwnGuard(session, what) {
  const argvs = session.pids.map((pid) => argvOf(pid));
  const guards = argvs.filter((argv) => argv[0] === FSGUARD_BIN);
  const servers = argvs.filter((argv) => argv.includes(SERVER_FS_SCRIPT) && argv[0] !== FSGUARD_BIN
    && !argv.some((arg) => arg.includes(FSGUARD_BIN)));
  assert.equal(guards.length, 1, `${what}: one fsguard of its own; processes: ${JSON.stringify(argvs)}`);
  assert.equal(servers.length, 1, `${what}: one server-filesystem of its own; processes: ${JSON.stringify(argvs)}`);
}

/** Wait until none of `pids` runs; fail with the survivors' command lines. */
async function assertAllGone(pids, what, gw) {
  // The gateway's own limit is SIGTERM, then SIGKILL after 5 s.
  const gone = await waitFor(() => pids.every((pid) => !isAlive(pid)), 8000);
  const left = pids.filter(isAlive).map((pid) => `${pid}: ${argvOf(pid).join(' ')}`);
  assert.ok(gone, `${what}: still running:\n${left.join('\n')}\n${gw.log()}`);
}

/** Split a shell command line into words: blanks separate, double quotes group (enough for the docs). */
function shellWords(line) {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
}

function assertAllowed(res, what) {
  assert.equal(vetoCode(res), undefined, `${what}: unexpected veto: ${textOf(res)}`);
  assert.notEqual(res.isError, true, `${what}: unexpected error: ${textOf(res)}`);
}

// ---------------------------------------------------------------------------

test('two Streamable HTTP sessions behind supergateway keep separate records, and nothing runs after both close', async (t) => {
  const ws = makeWorkspace({ 'a.txt': ORIGINAL });
  t.after(ws.cleanup);
  const a = ws.file('a.txt');
  const gw = await startGateway(t, ws.dir);

  const sessionA = await openHttpSession(gw, 'client-a');
  const sessionB = await openHttpSession(gw, 'client-b');
  t.after(async () => {
    for (const s of [sessionA, sessionB]) {
      try { await s.client.close(); } catch { /* closed already */ }
    }
  });
  assert.notEqual(sessionA.transport.sessionId, sessionB.transport.sessionId, 'two HTTP sessions');
  assertOwnGuard(sessionA, 'session A');
  assertOwnGuard(sessionB, 'session B');
  assert.ok(sessionB.pids.every((pid) => !sessionA.pids.includes(pid)), 'B shares no process with A');

  // A reads a.txt; that read licenses nothing for B.
  const readA = await sessionA.call('read_text_file', { path: a });
  assertAllowed(readA, 'A reads a.txt');
  assert.equal(textOf(readA), ORIGINAL);

  const blindB = await sessionB.call('write_file', { path: a, content: 'B, blind\n' });
  assert.equal(blindB.isError, true, `B's blind write is refused: ${JSON.stringify(blindB)}`);
  assert.equal(vetoCode(blindB), 'not_read', `B's blind write: veto code (text: ${textOf(blindB)})`);
  assert.equal(vetoMeta(blindB).tool, 'write_file');
  assert.equal(vetoMeta(blindB).path, a);
  assert.equal(readDisk(a), ORIGINAL, "B's vetoed write left the file as it was");

  // A's record is its own: A may write what it read.
  const writeA = await sessionA.call('write_file', { path: a, content: 'A, after reading\n' });
  assertAllowed(writeA, 'A writes a.txt after reading it');
  assert.equal(readDisk(a), 'A, after reading\n');

  // Closing A's session (DELETE) stops A's fsguard and server, and only those.
  await sessionA.transport.terminateSession();
  await sessionA.client.close();
  await assertAllGone(sessionA.pids, "after A's session closed, A's processes", gw);
  assert.ok(sessionB.pids.every(isAlive), "B's processes run on after A's session closed");

  // B goes on: it reads, then writes.
  const readB = await sessionB.call('read_text_file', { path: a });
  assertAllowed(readB, 'B reads a.txt');
  assert.equal(textOf(readB), 'A, after reading\n');
  const writeB = await sessionB.call('write_file', { path: a, content: 'B, after reading\n' });
  assertAllowed(writeB, 'B writes a.txt after reading it');
  assert.equal(readDisk(a), 'B, after reading\n');

  await sessionB.transport.terminateSession();
  await sessionB.client.close();
  await assertAllGone(sessionB.pids, "after B's session closed, B's processes", gw);

  // Nothing of either session is left: no child of the gateway, and no
  // orphan anywhere whose command line names the workspace.
  assert.deepEqual(descendantPids(gw.pid), [], `the gateway has no child left\n${gw.log()}`);
  assert.deepEqual(processesMentioning(ws.dir, gw.pid).map((pid) => argvOf(pid).join(' ')), [],
    'no process of the sessions is left');
});

test('a session its client leaves without closing ends after --sessionTimeout, and its fsguard with it', async (t) => {
  const ws = makeWorkspace({ 'a.txt': ORIGINAL });
  t.after(ws.cleanup);
  const a = ws.file('a.txt');
  const gw = await startGateway(t, ws.dir, { extra: ['--sessionTimeout', '1500'] });

  const session = await openHttpSession(gw, 'client-gone');
  t.after(async () => { try { await session.client.close(); } catch { /* closed already */ } });
  assertOwnGuard(session, 'the session');
  assertAllowed(await session.call('read_text_file', { path: a }), 'reads a.txt');

  // The client goes away without a DELETE: its connections close, and the
  // gateway ends the session once it has been idle for 1.5 s.
  await session.client.close();
  assert.ok(session.pids.every(isAlive), 'the processes outlive the connection until the timeout');
  await assertAllGone(session.pids, "after the session's timeout, its processes", gw);
  assert.deepEqual(processesMentioning(ws.dir, gw.pid).map((pid) => argvOf(pid).join(' ')), [],
    'no process of the session is left');

  // A new session starts with an empty record: its blind write is vetoed.
  const next = await openHttpSession(gw, 'client-next');
  t.after(async () => { try { await next.client.close(); } catch { /* closed already */ } });
  const blind = await next.call('write_file', { path: a, content: 'blind\n' });
  assert.equal(vetoCode(blind), 'not_read', `the next session's blind write (text: ${textOf(blind)})`);
  assert.equal(readDisk(a), ORIGINAL);
  await next.transport.terminateSession();
  await next.client.close();
  await assertAllGone(next.pids, "after the next session closed, its processes", gw);
});

test('without --stateful, every request gets a fresh fsguard, so no read ever licenses a write', async (t) => {
  // Why docs/clients.md asks for --stateful: supergateway's stateless mode
  // starts the command anew for each HTTP request (and initializes it
  // itself), so a read and the write after it reach two different fsguards.
  const ws = makeWorkspace({ 'a.txt': ORIGINAL });
  t.after(ws.cleanup);
  const a = ws.file('a.txt');
  const gw = await startGateway(t, ws.dir, { stateful: false });

  const session = await openHttpSession(gw, 'client-stateless', { stateful: false });
  t.after(async () => { try { await session.client.close(); } catch { /* closed already */ } });
  const read = await session.call('read_text_file', { path: a });
  assertAllowed(read, 'reads a.txt');
  assert.equal(textOf(read), ORIGINAL);
  const write = await session.call('write_file', { path: a, content: 'after reading, statelessly\n' });
  assert.equal(vetoCode(write), 'not_read', `the write after the read (text: ${textOf(write)})`);
  assert.equal(readDisk(a), ORIGINAL);

  // Each request's fsguard and server end with the request.
  const left = await waitFor(() => processesMentioning(ws.dir, gw.pid).length === 0, 8000);
  assert.ok(left, `still running: ${processesMentioning(ws.dir, gw.pid).map((pid) => argvOf(pid).join(' '))}`);
});

test('docs/clients.md shows the supergateway command these tests run, at the pinned version', () => {
  const docs = fs.readFileSync(path.join(TESTS_DIR, '..', '..', 'docs', 'clients.md'), 'utf8');
  const shown = docs.match(/^npx -y supergateway@(?:.*\\\n)*.*/m);
  assert.ok(shown, 'docs/clients.md shows an `npx -y supergateway@...` command');
  const words = shellWords(shown[0].replace(/\\\n/g, ' '));

  const pinned = JSON.parse(fs.readFileSync(path.join(TESTS_DIR, 'package.json'), 'utf8')).devDependencies.supergateway;
  const installed = JSON.parse(fs.readFileSync(path.join(path.dirname(SUPERGATEWAY_SCRIPT), '..', 'package.json'), 'utf8')).version;
  assert.equal(installed, pinned, 'the installed supergateway is the pinned one (npm ci)');
  assert.deepEqual(words.slice(0, 3), ['npx', '-y', `supergateway@${pinned}`]);

  // The same arguments as startGateway's, apart from the paths and the port.
  const args = words.slice(3);
  const stdio = args[1];
  assert.deepEqual(args, gatewayArgs({ stdio, port: args.at(-1) }), `the docs' arguments: ${args.join(' ')}`);
  assert.match(args.at(-1), /^\d+$/, 'a port number');
  const command = stdio.split(' ');
  assert.equal(command.length, 4, `--stdio "fsguard node <server script> <directory>": ${stdio}`);
  assert.deepEqual(command.slice(0, 2), ['fsguard', 'node']);
  assert.match(command[2], /server-filesystem\/dist\/index\.js$/);
  assert.ok(SERVER_FS_SCRIPT.endsWith(path.join('server-filesystem', 'dist', 'index.js')));
});

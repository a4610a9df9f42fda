// Protocol and process robustness of fsguard, driven with raw pipes (no SDK):
// framing errors, exit codes, command-line handling, upstream start failure and death.
//
//   node --test --test-concurrency=1 robustness.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';

import {
  FAKE_UPSTREAM_SCRIPT, SERVER_FS_SCRIPT,
  childPids, isAlive, makeWorkspace, sleep, spawnRawFor, waitFor,
} from './lib/harness.mjs';

/** A workspace removed after the test. */
function workspace(t, files = {}) {
  const ws = makeWorkspace(files);
  t.after(ws.cleanup);
  return ws;
}

/** fsguard in front of server-filesystem on `dir`. */
function guard(t, dir, { extraArgs = [], env } = {}) {
  return spawnRawFor(t, [...extraArgs, '--', process.execPath, SERVER_FS_SCRIPT, dir], { env });
}

function assertStdoutIsJsonOnly(h) {
  assert.deepEqual(h.nonJson, [], 'every stdout line is JSON');
}

/** The single upstream child of fsguard (waits until it shows up). */
async function upstreamPid(h) {
  const kids = await waitFor(() => { const k = childPids(h.pid); return k.length ? k : null; }, 3000);
  assert.ok(kids, 'fsguard has an upstream child process');
  assert.equal(kids.length, 1, `exactly one upstream child: ${kids}`);
  return kids[0];
}

// ---------------------------------------------------------------------------
// framing errors

test('an invalid JSON line gets a -32700 error with id null and the session continues', async (t) => {
  const ws = workspace(t);
  const h = guard(t, ws.dir);
  await h.initialize(1);
  h.send('{"jsonrpc":"2.0","id":7,"method":"tools/list"'); // truncated
  const err = await h.waitMessage((m) => m && m.error && m.error.code === -32700);
  assert.equal(err.jsonrpc, '2.0');
  assert.ok('id' in err && err.id === null, `id is null: ${JSON.stringify(err)}`);
  assert.equal(typeof err.error.message, 'string');

  h.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const list = await h.response(2);
  assert.ok(Array.isArray(list.result?.tools) && list.result.tools.length > 0, 'tools/list still answered');
  assert.equal(h.messages.some((m) => m.id === 7), false, 'the broken line was not forwarded');
  assertStdoutIsJsonOnly(h);
});

test('a JSON array (batch) line gets a -32600 error with id null and is not forwarded', async (t) => {
  const ws = workspace(t, { 'a.txt': 'keep\n' });
  const h = guard(t, ws.dir);
  await h.initialize(1);
  const a = ws.file('a.txt');
  // A batch hiding a blind write: it must neither be forwarded nor executed.
  h.send(JSON.stringify([
    { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'write_file', arguments: { path: a, content: 'x' } } },
  ]));
  const err = await h.waitMessage((m) => m && m.error && m.error.code === -32600);
  assert.ok('id' in err && err.id === null, `id is null: ${JSON.stringify(err)}`);

  h.send({ jsonrpc: '2.0', id: 6, method: 'tools/list' });
  const list = await h.response(6);
  assert.ok(Array.isArray(list.result?.tools), 'the session continues');
  assert.equal(h.messages.some((m) => m.id === 5), false, 'no answer for an id inside the batch');
  assert.equal(fs.readFileSync(a, 'utf8'), 'keep\n', 'the batched write never ran');
  assertStdoutIsJsonOnly(h);
});

test('a line over max_line_bytes gets a -32600 error with id null and is discarded', async (t) => {
  const ws = workspace(t, { 'fsguard.json': JSON.stringify({ max_line_bytes: 4096 }) });
  const h = guard(t, ws.dir, { extraArgs: ['--config', ws.file('fsguard.json')] });
  await h.initialize(1);
  const big = ws.file('big.txt');
  h.send({
    jsonrpc: '2.0', id: 3, method: 'tools/call',
    params: { name: 'write_file', arguments: { path: big, content: 'x'.repeat(10_000) } },
  });
  const err = await h.waitMessage((m) => m && m.error && m.error.code === -32600);
  assert.ok('id' in err && err.id === null, `id is null: ${JSON.stringify(err)}`);

  h.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
  const pong = await h.response(4);
  assert.deepEqual(pong.result, {}, 'the session continues');
  assert.equal(h.messages.some((m) => m.id === 3), false, 'the oversized request got no other answer');
  assert.equal(fs.existsSync(big), false, 'the oversized request never reached the upstream');
});

test('a veto over raw JSON-RPC keeps the request id (string ids too) and has the contract shape', async (t) => {
  const ws = workspace(t, { 'a.txt': 'keep\n' });
  const h = guard(t, ws.dir);
  await h.initialize(1);
  const a = ws.file('a.txt');
  const id = 'req-\u00e9-1';
  h.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'write_file', arguments: { path: a, content: 'x' } } });
  const r = await h.response(id);
  assert.equal(r.jsonrpc, '2.0');
  assert.equal(r.result?.isError, true);
  assert.equal(r.result.content?.[0]?.type, 'text');
  assert.ok(r.result.content[0].text.startsWith('fsguard refused write_file'), r.result.content[0].text);
  const meta = r.result._meta?.['fsguard/veto'];
  assert.equal(meta?.code, 'not_read', JSON.stringify(r));
  assert.equal(meta.tool, 'write_file');
  assert.equal(meta.path, a);
  assert.equal('error' in r, false, 'a veto is a result, not a JSON-RPC error');
  assert.equal(fs.readFileSync(a, 'utf8'), 'keep\n');
});

test('a non-JSON line from the upstream goes to stderr, never to the client', async (t) => {
  const h = spawnRawFor(t, ['--', process.execPath, FAKE_UPSTREAM_SCRIPT]);
  await h.initialize(1);
  h.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
  await h.response(2);
  assertStdoutIsJsonOnly(h);
  const logged = await waitFor(() => h.stderrText().includes('fake-upstream: this line is not JSON'), 3000);
  assert.ok(logged, `the noise shows up on stderr:\n${h.stderrText()}`);
});

// ---------------------------------------------------------------------------
// lifecycle

test('client EOF: fsguard exits 0 within a few seconds and the upstream is gone', async (t) => {
  const ws = workspace(t);
  const h = guard(t, ws.dir);
  await h.initialize(1);
  const up = await upstreamPid(h);
  assert.ok(isAlive(up), 'the upstream runs while the session is open');
  h.endInput();
  const exit = await h.waitExit(5000);
  assert.ok(exit, 'fsguard exited within 5 s of EOF');
  assert.deepEqual(exit, { code: 0, signal: null });
  const gone = await waitFor(() => !isAlive(up), 2000);
  assert.ok(gone, `upstream pid ${up} is gone`);
});

test('the upstream dying mid-session fails the pending request with -32000 and fsguard exits 128+9', async (t) => {
  const ws = workspace(t);
  const h = guard(t, ws.dir);
  await h.initialize(1);
  const up = await upstreamPid(h);

  // Freeze the upstream so the next request is certainly pending, then kill it.
  process.kill(up, 'SIGSTOP');
  h.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  await sleep(200);
  process.kill(up, 'SIGKILL');

  const pending = await h.response(2, 5000);
  assert.equal(pending.error?.code, -32000, JSON.stringify(pending));
  assert.match(pending.error.message, /exit/i, 'the message mentions the exit');

  // A later request, if fsguard is still there to take it, gets the same kind of error.
  h.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
  await waitFor(() => h.exit || h.messages.find((m) => m.id === 3), 1000);
  const later = h.messages.find((m) => m.id === 3);
  if (later) {
    assert.equal(later.error?.code, -32000, JSON.stringify(later));
    assert.match(later.error.message, /exit/i);
  }

  h.endInput();
  const exit = await h.waitExit(5000);
  assert.ok(exit, 'fsguard exited');
  assert.equal(exit.code, 137, `exit status is 128+SIGKILL; got ${JSON.stringify(exit)}`);
  assertStdoutIsJsonOnly(h);
});

test('an upstream command that cannot be started: exit 1 quickly, stderr names it', async (t) => {
  const h = spawnRawFor(t, ['--', '/nonexistent/cmd', 'arg']);
  const exit = await h.waitExit(5000); // stdin stays open: fsguard must not wait for EOF
  assert.ok(exit, 'fsguard exited within 5 s');
  assert.deepEqual(exit, { code: 1, signal: null });
  assert.match(h.stderrText(), /\/nonexistent\/cmd/, `stderr names the command:\n${h.stderrText()}`);
  assert.match(h.stderrText(), /^fsguard: /m, 'log lines carry the fsguard: prefix');
  assertStdoutIsJsonOnly(h);
});

test('with no upstream command, fsguard serves the pinned server-filesystem on the cwd', async (t) => {
  const ws = workspace(t, { 'a.txt': 'a\n' });
  const h = spawnRawFor(t, [], { cwd: ws.dir });
  const init = await h.initialize(1);
  assert.equal(init.result?.serverInfo?.name, 'secure-filesystem-server', JSON.stringify(init));
  h.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_allowed_directories', arguments: {} } });
  const r = await h.response(2);
  assert.ok(r.result?.content?.[0]?.text.includes(ws.dir), `the cwd is the allowed directory: ${JSON.stringify(r)}`);
  h.endInput();
  assert.deepEqual(await h.waitExit(5000), { code: 0, signal: null });
});

// ---------------------------------------------------------------------------
// command line

test('--help and -h exit 0 and print the usage', async (t) => {
  for (const flag of ['--help', '-h']) {
    const h = spawnRawFor(t, [flag]);
    const exit = await h.waitExit(5000);
    assert.deepEqual(exit, { code: 0, signal: null }, flag);
    const out = h.stdoutText + h.stderrText();
    assert.match(out, /usage/i, `${flag} prints a usage text:\n${out}`);
    assert.match(out, /--mode/, `${flag} documents --mode`);
  }
});

test('--version and -V exit 0 and print a version', async (t) => {
  for (const flag of ['--version', '-V']) {
    const h = spawnRawFor(t, [flag]);
    const exit = await h.waitExit(5000);
    assert.deepEqual(exit, { code: 0, signal: null }, flag);
    assert.match(h.stdoutText + h.stderrText(), /\d+\.\d+/, `${flag} prints a version number`);
  }
});

test('usage errors exit 2 with a message on stderr and nothing on stdout', async (t) => {
  const ws = workspace(t);
  const upstream = ['--', process.execPath, SERVER_FS_SCRIPT, ws.dir];
  const cases = [
    ['an unknown option without --', ['--no-such-option'], /no-such-option/],
    ['an unknown option before --', ['--no-such-option', ...upstream], /no-such-option/],
    ['an invalid --mode value', ['--mode', 'bogus', ...upstream], /bogus|mode/],
    ['--mode without a value', ['--mode'], /mode/],
  ];
  for (const [what, args, mentions] of cases) {
    const h = spawnRawFor(t, args);
    const exit = await h.waitExit(5000);
    assert.ok(exit, `${what}: exited within 5 s`);
    assert.deepEqual(exit, { code: 2, signal: null }, `${what}: exit status; stderr:\n${h.stderrText()}`);
    assert.match(h.stderrText(), mentions, `${what}: stderr explains:\n${h.stderrText()}`);
    assert.equal(h.stdoutText, '', `${what}: nothing on stdout`);
  }
});

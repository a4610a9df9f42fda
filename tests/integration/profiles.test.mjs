// Built-in profiles against the real third-party servers (pinned in
// tests/profiles): each is detected from its initialize result and its reads
// and writes are guarded; an unknown server passes through untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { TESTS_DIR, FAKE_UPSTREAM_SCRIPT, connect, callTool, makeWorkspace, textOf, vetoCode } from './lib/harness.mjs';

const PROFILES_DIR = path.resolve(TESTS_DIR, '..', 'profiles', 'node_modules');
const AGENT_INFRA = path.join(PROFILES_DIR, '@agent-infra/mcp-server-filesystem/dist/index.js');
const DESKTOP_COMMANDER = path.join(PROFILES_DIR, '@wonderwhy-er/desktop-commander/dist/index.js');
const readDisk = (p) => fs.readFileSync(p, 'utf8');

function assertAllowed(res, what) {
  assert.notEqual(res.isError, true, `${what}: expected success, got: ${textOf(res)}`);
}

function assertVeto(res, code, what) {
  assert.equal(vetoCode(res), code, `${what}: expected ${code}, got: ${textOf(res)}`);
}

test('@agent-infra/mcp-server-filesystem: detected, guarded, its stdout noise kept off the protocol', async (t) => {
  assert.ok(fs.existsSync(AGENT_INFRA), 'run scripts/setup.sh to install tests/profiles');
  const ws = makeWorkspace({ 'a.txt': 'a1\n', 'b.txt': 'b1\n' });
  const s = await connect({
    dir: ws.dir, extraArgs: ['--log-level', 'info'], cwd: ws.dir,
    upstream: [process.execPath, AGENT_INFRA, '--allowed-directories', ws.dir],
  });
  t.after(async () => { await s.close(); ws.cleanup(); });
  const call = (n, a) => callTool(s.client, n, a);

  assertVeto(await call('write_file', { path: ws.file('a.txt'), content: 'blind\n' }), 'not_read', 'blind write');
  assertVeto(await call('edit_file', { path: ws.file('a.txt'), edits: [{ oldText: 'a1', newText: 'x' }] }),
    'not_read', 'blind edit');
  assert.equal(readDisk(ws.file('a.txt')), 'a1\n');
  assertAllowed(await call('read_file', { path: ws.file('a.txt') }), 'read_file');
  assertAllowed(await call('write_file', { path: ws.file('a.txt'), content: 'a2\n' }), 'write after read');
  assert.equal(readDisk(ws.file('a.txt')), 'a2\n');
  fs.writeFileSync(ws.file('a.txt'), 'outside\n');
  assertVeto(await call('write_file', { path: ws.file('a.txt'), content: 'stale\n' }), 'changed', 'stale write');
  assert.equal(readDisk(ws.file('a.txt')), 'outside\n');

  // It resolves relative paths against its working directory.
  assertVeto(await call('write_file', { path: 'b.txt', content: 'blind\n' }), 'not_read', 'relative blind write');
  assertAllowed(await call('read_multiple_files', { paths: [ws.file('b.txt')] }), 'read_multiple_files');
  assertAllowed(await call('write_file', { path: 'b.txt', content: 'b2\n' }), 'relative write after read');
  assert.equal(readDisk(ws.file('b.txt')), 'b2\n');

  // It prints "requestedPath ..." to stdout: fsguard moves that to stderr.
  assert.match(s.stderrText(), /not JSON-RPC.*requestedPath|requestedPath.*not JSON-RPC|agent-infra-filesystem/s);
  assert.match(s.stderrText(), /using the agent-infra-filesystem profile/);
});

test('@wonderwhy-er/desktop-commander: detected; truncated reads are partial; append and edit_block are edits', async (t) => {
  assert.ok(fs.existsSync(DESKTOP_COMMANDER), 'run scripts/setup.sh to install tests/profiles');
  // desktop-commander keeps its config under $HOME: give it a private one.
  const home = makeWorkspace({}, 'fsguard-dc-home-');
  const ws = makeWorkspace({
    'small.txt': 'l1\nl2\n',
    'big.txt': Array.from({ length: 1500 }, (_, i) => `${i + 1}`).join('\n') + '\n',
  });
  const s = await connect({
    dir: ws.dir, extraArgs: ['--log-level', 'info'], cwd: ws.dir, env: { HOME: home.dir },
    upstream: [process.execPath, DESKTOP_COMMANDER],
  });
  t.after(async () => { await s.close(); ws.cleanup(); home.cleanup(); });
  const call = (n, a) => callTool(s.client, n, a);

  const small = ws.file('small.txt');
  assertVeto(await call('write_file', { path: small, content: 'blind\n' }), 'not_read', 'blind write');
  assertVeto(await call('edit_block', { file_path: small, old_string: 'l1', new_string: 'L1' }), 'not_read', 'blind edit_block');
  assertVeto(await call('write_file', { path: small, content: 'more\n', mode: 'append' }), 'not_read', 'blind append');
  assert.equal(readDisk(small), 'l1\nl2\n');

  assertAllowed(await call('read_file', { path: small }), 'read small');
  assertAllowed(await call('edit_block', { file_path: small, old_string: 'l1', new_string: 'L1' }), 'edit_block after read');
  assert.equal(readDisk(small), 'L1\nl2\n');
  assertAllowed(await call('write_file', { path: small, content: 'L3\n', mode: 'append' }), 'append after own edit');
  assertAllowed(await call('write_file', { path: small, content: 'whole\n', mode: 'rewrite' }), 'rewrite after own writes');
  assert.equal(readDisk(small), 'whole\n');

  // A read of the first 1000 of 1500 lines is partial: it licenses an edit, not a rewrite.
  const big = ws.file('big.txt');
  const before = readDisk(big);
  const read = await call('read_file', { path: big });
  assert.match(textOf(read), /500 remaining/);
  assertVeto(await call('write_file', { path: big, content: 'short\n', mode: 'rewrite' }), 'partial_read', 'rewrite after a truncated read');
  assert.equal(readDisk(big), before);
  assertAllowed(await call('edit_block', { file_path: big, old_string: '\n7\n', new_string: '\nseven\n' }), 'edit after a truncated read');
  assert.match(readDisk(big), /\nseven\n/);
  assert.match(s.stderrText(), /using the desktop-commander profile/);
});

test('an unknown server passes through untouched, and fsguard says nothing is guarded', async (t) => {
  const ws = makeWorkspace({ 'a.txt': 'a\n' });
  const s = await connect({
    dir: ws.dir,
    upstream: [process.execPath, path.join(TESTS_DIR, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
  });
  t.after(async () => { await s.close(); ws.cleanup(); });
  const res = await callTool(s.client, 'echo', { message: 'hello' });
  assert.match(textOf(res), /hello/);
  assert.match(s.stderrText(), /no profile for the server "[^"]+", so nothing is guarded/);
});

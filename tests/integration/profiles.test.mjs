// Built-in profiles against the real third-party servers (pinned in
// tests/profiles): each is detected from its initialize result and its reads
// and writes are guarded; an unknown server passes through untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import {
  TESTS_DIR, FAKE_UPSTREAM_SCRIPT, FSGUARD_BIN, SERVER_FS_SCRIPT, connect, callTool, makeWorkspace, spawnRawFor,
  textOf, vetoCode,
} from './lib/harness.mjs';

const PROFILES_DIR = path.resolve(TESTS_DIR, '..', 'profiles', 'node_modules');
const AGENT_INFRA = path.join(PROFILES_DIR, '@agent-infra/mcp-server-filesystem/dist/index.js');
const DESKTOP_COMMANDER = path.join(PROFILES_DIR, '@wonderwhy-er/desktop-commander/dist/index.js');
const readDisk = (p) => fs.readFileSync(p, 'utf8');
// pdf-lib, which desktop-commander depends on, to make a real PDF for write_pdf to change.
const { PDFDocument } = createRequire(DESKTOP_COMMANDER)('pdf-lib');

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

test('desktop-commander: a read pipelined before the initialize result is described with its profile', async (t) => {
  const home = makeWorkspace({}, 'fsguard-dc-home-');
  const ws = makeWorkspace({ 'big.txt': Array.from({ length: 1500 }, (_, i) => `${i + 1}`).join('\n') + '\n' });
  t.after(() => { ws.cleanup(); home.cleanup(); });
  const h = spawnRawFor(t, ['--', process.execPath, DESKTOP_COMMANDER], { env: { HOME: home.dir }, cwd: ws.dir });
  const big = ws.file('big.txt');
  const before = readDisk(big);
  // One write to the pipe: the read goes with initialize, before fsguard
  // knows which server it guards (and so how much its read_file shows).
  h.send([
    { jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipelining', version: '0' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_file', arguments: { path: big } } },
  ].map((message) => JSON.stringify(message)).join('\n'));
  const read = await h.response(2, 30_000);
  assert.match(read.result.content[0].text, /500 remaining/);
  h.send({ jsonrpc: '2.0', id: 3, method: 'tools/call',
    params: { name: 'write_file', arguments: { path: big, content: 'short\n', mode: 'rewrite' } } });
  const write = await h.response(3);
  assert.equal(write.result?._meta?.['fsguard/veto']?.code, 'partial_read', JSON.stringify(write));
  assert.equal(readDisk(big), before);
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

test('desktop-commander write_pdf is a write: to outputPath, or over path without one', async (t) => {
  const home = makeWorkspace({}, 'fsguard-dc-home-');
  const ws = makeWorkspace({ 'notes.txt': 'my notes\n' });
  const pdf = await PDFDocument.create();
  pdf.addPage();
  pdf.addPage();
  const twoPages = Buffer.from(await pdf.save());
  fs.writeFileSync(ws.file('doc.pdf'), twoPages);
  const s = await connect({
    dir: ws.dir, cwd: ws.dir, env: { HOME: home.dir },
    upstream: [process.execPath, DESKTOP_COMMANDER],
  });
  t.after(async () => { await s.close(); ws.cleanup(); home.cleanup(); });
  const call = (n, a) => callTool(s.client, n, a);
  const dropFirstPage = [{ type: 'delete', pageIndexes: [0] }];

  // Over an existing file the agent never read: as outputPath, and as path without outputPath.
  assertVeto(await call('write_pdf', { path: ws.file('doc.pdf'), content: dropFirstPage, outputPath: ws.file('notes.txt') }),
    'not_read', 'write_pdf onto an unread outputPath');
  assert.equal(readDisk(ws.file('notes.txt')), 'my notes\n');
  assertVeto(await call('write_pdf', { path: ws.file('doc.pdf'), content: dropFirstPage }),
    'not_read', 'write_pdf over an unread path');
  assertVeto(await call('write_pdf', { path: ws.file('doc.pdf'), content: dropFirstPage, outputPath: '' }),
    'not_read', 'write_pdf over an unread path, outputPath ""');
  assert.deepEqual(fs.readFileSync(ws.file('doc.pdf')), twoPages);

  // A new outputPath may be created. Its content argument (operations, sent
  // as a JSON string) is not the PDF's bytes, so the agent's next write to
  // its own new file is not taken for someone else's change.
  const ops = JSON.stringify(dropFirstPage);
  assertAllowed(await call('write_pdf', { path: ws.file('doc.pdf'), content: ops, outputPath: ws.file('one.pdf') }),
    'write_pdf to a new outputPath');
  assert.equal((await PDFDocument.load(fs.readFileSync(ws.file('one.pdf')))).getPageCount(), 1);
  assertAllowed(await call('write_pdf', { path: ws.file('doc.pdf'), content: ops, outputPath: ws.file('one.pdf') }),
    'write_pdf again over its own output');
  assert.deepEqual(fs.readFileSync(ws.file('doc.pdf')), twoPages);
});

test('profile drift: every tool of the pinned servers is guarded by its profile, or listed as unguarded with a reason', async (t) => {
  const home = makeWorkspace({}, 'fsguard-dc-home-');
  const ws = makeWorkspace({});
  t.after(() => { ws.cleanup(); home.cleanup(); });
  const servers = [
    ['server-filesystem', [process.execPath, SERVER_FS_SCRIPT, ws.dir]],
    ['agent-infra-filesystem', [process.execPath, AGENT_INFRA, '--allowed-directories', ws.dir]],
    ['desktop-commander', [process.execPath, DESKTOP_COMMANDER]],
  ];
  for (const [name, upstream] of servers) {
    const profile = JSON.parse(execFileSync(FSGUARD_BIN, ['--print-profile', name], { encoding: 'utf8' }));
    assert.equal(profile.profile, name);
    const s = await connect({ viaGuard: false, dir: ws.dir, cwd: ws.dir, env: { HOME: home.dir }, upstream });
    let listed;
    try {
      listed = (await s.client.listTools()).tools;
    } finally {
      await s.close();
    }
    const names = listed.map((tool) => tool.name);
    const known = new Set([...Object.keys(profile.tools), ...Object.keys(profile.unguarded)]);
    for (const [tool, reason] of Object.entries(profile.unguarded)) {
      assert.ok(!(tool in profile.tools), `${name}: ${tool} is both guarded and unguarded`);
      assert.ok(reason.length > 10, `${name}: ${tool} is unguarded with a reason`);
    }
    assert.deepEqual(names.filter((tool) => !known.has(tool)), [],
      `${name}: the pinned server has tools its profile does not name; decide for each whether it can `
      + 'create, replace, truncate, move or delete a file: guard it in tracker/profiles.cpp, or list it as '
      + 'unguarded with the reason (and in docs/configuration.md)');
    assert.deepEqual([...known].filter((tool) => !names.includes(tool)), [],
      `${name}: the profile names tools the pinned server does not have`);
    t.diagnostic(`${name}: ${names.length} tools, ${Object.keys(profile.tools).length} guarded, `
      + `${Object.keys(profile.unguarded).length} unguarded`);
  }
});

test('desktop-commander: a read whose status numbers disagree is partial (bare carriage returns of progress bars)', async (t) => {
  const home = makeWorkspace({}, 'fsguard-dc-home-');
  // A 600-line build log whose first 300 lines redraw a progress bar with
  // bare "\r": readline sees 1500 lines and shows the first 1000 of them,
  // about half the file, as "1000 lines (total: 600 lines, 0 remaining)".
  const lines = Array.from({ length: 600 }, (_, i) => (i < 300
    ? `step ${i} [#    ]\r[##   ]\r[###  ]\r[#####] done`
    : `line ${i}`));
  const ws = makeWorkspace({ 'build.log': lines.join('\n') + '\n', 'plain.log': 'a\nb\nc\n' });
  const s = await connect({
    dir: ws.dir, cwd: ws.dir, env: { HOME: home.dir },
    upstream: [process.execPath, DESKTOP_COMMANDER],
  });
  t.after(async () => { await s.close(); ws.cleanup(); home.cleanup(); });
  const call = (n, a) => callTool(s.client, n, a);

  const log = ws.file('build.log');
  const before = readDisk(log);
  const read = await call('read_file', { path: log });
  assert.match(textOf(read), /^\[Reading 1000 lines from start \(total: 600 lines, 0 remaining\)\]/);
  assert.doesNotMatch(textOf(read), /line 599/, 'the read stopped early');
  assertVeto(await call('write_file', { path: log, content: 'rewritten\n', mode: 'rewrite' }),
    'partial_read', 'rewrite after a read that stopped early');
  assert.equal(readDisk(log), before);

  // Asked for exactly as many lines as the file has, it shows 600 readline
  // lines, still about a quarter of the file, and the numbers agree. The
  // bare "\r" in the file (found when fsguard hashes it) makes it partial.
  const asked = await call('read_file', { path: log, length: 600 });
  assert.match(textOf(asked), /^\[Reading 600 lines from start \(total: 600 lines, 0 remaining\)\]/);
  assert.doesNotMatch(textOf(asked), /line 599/, 'the read stopped early');
  assertVeto(await call('write_file', { path: log, content: 'rewritten\n', mode: 'rewrite' }),
    'partial_read', 'rewrite after a read whose numbers agree but whose lines are not the file\'s');
  assert.equal(readDisk(log), before);

  // When the numbers agree, the read is whole.
  const plain = ws.file('plain.log');
  assert.match(textOf(await call('read_file', { path: plain })),
    /^\[Reading 3 lines from start \(total: 3 lines, 0 remaining\)\]/);
  assertAllowed(await call('write_file', { path: plain, content: 'x\n', mode: 'rewrite' }), 'rewrite after a whole read');
  assert.equal(readDisk(plain), 'x\n');
});

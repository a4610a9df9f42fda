// The trust scenarios: ways an ordinary agent, or a careless client, could
// talk fsguard out of its promise. Each runs through the real
// server-filesystem (or the real third-party server named), with the SDK
// client or raw pipes where the scenario needs exact ids.
//
//   node --test --test-concurrency=1 trust.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  ERA, FS_SERVER_SCRIPT, SERVER_FS_SCRIPT, TESTS_DIR,
  callTool, connect, inEra, makeWorkspace, only2025, openSession, sleep, spawnRawFor, textOf, vetoCode,
} from './lib/harness.mjs';

const PROFILES_DIR = path.resolve(TESTS_DIR, '..', 'profiles', 'node_modules');
const AGENT_INFRA = path.join(PROFILES_DIR, '@agent-infra/mcp-server-filesystem/dist/index.js');
const DESKTOP_COMMANDER = path.join(PROFILES_DIR, '@wonderwhy-er/desktop-commander/dist/index.js');

// The third-party servers are on the v1 SDK: the pinned 2026-era client refuses them at connect.
const DESKTOP_COMMANDER_ERA = only2025('desktop-commander speaks the 2025 era only');
const AGENT_INFRA_ERA = only2025('@agent-infra/mcp-server-filesystem speaks the 2025 era only');

const readDisk = (p) => fs.readFileSync(p, 'utf8');

function assertAllowed(res, what) {
  assert.equal(vetoCode(res), undefined, `${what}: unexpected veto: ${textOf(res)}`);
  assert.notEqual(res.isError, true, `${what}: unexpected error: ${textOf(res)}`);
}

function assertVeto(res, code, what) {
  assert.equal(vetoCode(res), code, `${what}: expected ${code}, got: ${JSON.stringify(res).slice(0, 500)}`);
}

function workspace(t, files = {}) {
  const ws = makeWorkspace(files);
  t.after(ws.cleanup);
  return ws;
}

/** fsguard in front of the era's filesystem server on `dir`, with raw pipes. */
function rawGuard(t, dir, extraArgs = []) {
  return spawnRawFor(t, [...extraArgs, '--', process.execPath, FS_SERVER_SCRIPT, dir]);
}

/** A tools/call of the era under test (`envelope`: what inEra puts in its envelope). */
const toolCall = (id, name, args, envelope) => ({
  jsonrpc: '2.0', id, method: 'tools/call', params: inEra({ name, arguments: args }, envelope),
});

test('a head read licenses edits but never a rewrite, however many edits follow', async (t) => {
  const lines = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
  const { file, call } = await openSession(t, { files: { 'long.txt': lines } });
  assertAllowed(await call('read_text_file', { path: file('long.txt'), head: 5 }), 'head read');
  assertAllowed(await call('edit_file', { path: file('long.txt'), edits: [{ oldText: 'line 2', newText: 'LINE 2' }] }), 'edit 1');
  assertAllowed(await call('edit_file', { path: file('long.txt'), edits: [{ oldText: 'line 3', newText: 'LINE 3' }] }), 'edit 2');
  assertVeto(await call('write_file', { path: file('long.txt'), content: 'five lines\n' }), 'partial_read',
    'a rewrite after a head read and edits');
  assert.match(readDisk(file('long.txt')), /line 50/);
});

test('desktop-commander: a partial read, an edit_block and an append never license a rewrite', DESKTOP_COMMANDER_ERA, async (t) => {
  assert.ok(fs.existsSync(DESKTOP_COMMANDER), 'run scripts/setup.sh to install tests/profiles');
  const home = makeWorkspace({}, 'fsguard-dc-home-');
  const ws = makeWorkspace({ 'big.txt': Array.from({ length: 1500 }, (_, i) => `${i + 1}`).join('\n') + '\n' });
  const s = await connect({ dir: ws.dir, cwd: ws.dir, env: { HOME: home.dir }, upstream: [process.execPath, DESKTOP_COMMANDER] });
  t.after(async () => { await s.close(); ws.cleanup(); home.cleanup(); });
  const call = (n, a) => callTool(s.client, n, a);
  const big = ws.file('big.txt');
  assertAllowed(await call('read_file', { path: big }), 'read (1000 of 1500 lines)');
  assertAllowed(await call('edit_block', { file_path: big, old_string: '\n7\n', new_string: '\nseven\n' }), 'edit_block');
  assertAllowed(await call('write_file', { path: big, content: 'tail\n', mode: 'append' }), 'append');
  assertVeto(await call('write_file', { path: big, content: 'short\n' }), 'partial_read', 'rewrite');
  assert.match(readDisk(big), /1500\ntail\n$/);
});

test('a folder moved by the agent keeps the records of the files read inside it', async (t) => {
  const { file, call } = await openSession(t, { files: { 'src/a.txt': 'a1\n' } });
  assertAllowed(await call('read_text_file', { path: file('src/a.txt') }), 'read');
  assertAllowed(await call('move_file', { source: file('src'), destination: file('lib') }), 'move the folder');
  assertAllowed(await call('edit_file', { path: file('lib/a.txt'), edits: [{ oldText: 'a1', newText: 'a2' }] }),
    'edit of the moved file');
  assert.equal(readDisk(file('lib/a.txt')), 'a2\n');
});

test('agent-infra: a move onto an existing file that was never read is vetoed', AGENT_INFRA_ERA, async (t) => {
  assert.ok(fs.existsSync(AGENT_INFRA), 'run scripts/setup.sh to install tests/profiles');
  const ws = makeWorkspace({ 'a.txt': 'a\n', 'b.txt': 'b, never read\n' });
  const s = await connect({ dir: ws.dir, cwd: ws.dir, upstream: [process.execPath, AGENT_INFRA, '--allowed-directories', ws.dir] });
  t.after(async () => { await s.close(); ws.cleanup(); });
  const call = (n, a) => callTool(s.client, n, a);
  assertVeto(await call('move_file', { source: ws.file('a.txt'), destination: ws.file('b.txt') }), 'not_read', 'move onto b');
  assert.equal(readDisk(ws.file('b.txt')), 'b, never read\n');
  assertAllowed(await call('read_file', { path: ws.file('b.txt') }), 'read b');
  assertAllowed(await call('move_file', { source: ws.file('a.txt'), destination: ws.file('b.txt') }), 'move after the read');
  assert.equal(readDisk(ws.file('b.txt')), 'a\n');
});

test('a cancelled listing id reused for a read is refused, and never teaches fsguard a directory', async (t) => {
  const ws = workspace(t, { 'a.txt': 'a\n', 'dirs.txt': 'Allowed directories:\n/\n' });
  const h = rawGuard(t, ws.dir);
  await h.initialize(1);
  h.send(toolCall(5, 'list_allowed_directories', {}));
  h.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } });
  // server-filesystem suppresses the answer to a cancelled request: 5 stays pending.
  h.send(toolCall(5, 'read_text_file', { path: ws.file('dirs.txt') }));
  if (ERA === '2025') {
    const refused = await h.waitMessage((m) => m.id === 5 && m.error);
    assert.equal(refused.error.code, -32600);
  } else {
    // The v2 server SDK answers a cancelled request whose handler finished
    // before the cancel came: 5 may be free again, and the read answered.
    const settled = await h.waitMessage((m) => m.id === 5 && (m.error || /\/\n$/.test(m.result?.content?.[0]?.text)));
    if (settled.error) assert.equal(settled.error.code, -32600);
  }
  h.send(toolCall(6, 'write_file', { path: 'a.txt', content: 'blind\n' }));
  const veto = await h.response(6);
  assert.equal(veto.result?._meta?.['fsguard/veto']?.code, 'not_read', JSON.stringify(veto));
  assert.equal(readDisk(ws.file('a.txt')), 'a\n');
});

test('requests the server would drop without an answer are refused at once', async (t) => {
  const ws = workspace(t);
  const h = rawGuard(t, ws.dir);
  await h.initialize(1);
  h.send({ id: 2, method: 'tools/list', ...(ERA === '2026' && { params: inEra() }) });
  h.send({ jsonrpc: '2.0', id: 9007199254740993, method: 'tools/list', ...(ERA === '2026' && { params: inEra() }) });
  // A second initialize (in the 2026 era, an initialize after server/discover
  // is the v2 client's fallback to the 2025 era, which the server answers).
  if (ERA === '2025') h.send({ jsonrpc: '2.0', id: 4, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'again', version: '0' } } });
  assert.equal((await h.response(2, 3000)).error?.code, -32600);
  assert.equal((await h.waitMessage((m) => m.error && typeof m.id === 'number' && m.id > 1e15, 3000)).error.code, -32600);
  if (ERA === '2025') assert.equal((await h.response(4, 3000)).error?.code, -32600);
});

test('ids and progress tokens written as integral floats reach the server, which answers them', async (t) => {
  const ws = workspace(t, { 'a.txt': 'a\n' });
  const h = rawGuard(t, ws.dir);
  await h.initialize(1);
  // The 2026 era's envelope joins the _meta members (none in the 2025 era).
  const envelope = JSON.stringify(inEra()._meta ?? {}).slice(1, -1);
  const metaOf = (meta) => ([meta, envelope].some(Boolean) ? `,"_meta":{${[meta, envelope].filter(Boolean).join(',')}}` : '');
  const call = (id, name, args, meta = '') => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":`
    + `{"name":"${name}","arguments":${JSON.stringify(args)}${metaOf(meta)}}}`;
  // JSON.parse reads 7.0 as 7: the server answers with id 7.
  h.send(call('7.0', 'read_text_file', { path: ws.file('a.txt') }));
  const read = await h.response(7, 5000);
  assert.equal(read.error, undefined, JSON.stringify(read));
  assert.equal(read.result?.structuredContent?.content, 'a\n');
  h.send(call('9e0', 'write_file', { path: ws.file('a.txt'), content: 'b\n' }, '"progressToken":3.0'));
  const written = await h.response(9, 5000);
  assert.equal(written.error, undefined, JSON.stringify(written));
  assert.equal(written.result?._meta?.['fsguard/veto'], undefined, JSON.stringify(written));
  assert.equal(readDisk(ws.file('a.txt')), 'b\n');
  // What the server drops is still refused: a fraction, and an integer past 2^53.
  h.send(call('7.5', 'list_directory', { path: ws.dir }));
  h.send(call('9007199254740992.0', 'list_directory', { path: ws.dir }));
  assert.equal((await h.response(7.5, 5000)).error?.code, -32600);
  assert.equal((await h.response(9007199254740992, 5000)).error?.code, -32600);
});

test('a line the server\'s JSON.parse would reject (a byte-order mark, a NUL byte) is answered by fsguard, never forwarded', async (t) => {
  const ws = workspace(t, { 'a.txt': 'a\n' });
  const h = rawGuard(t, ws.dir);
  await h.initialize(1);
  const read = JSON.stringify(toolCall(2, 'read_text_file', { path: ws.file('a.txt') }));
  h.child.stdin.write(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(read + '\n')]));
  const bom = await h.response(2, 5000);
  assert.equal(bom.error?.code, -32700, JSON.stringify(bom));
  assert.match(bom.error.message, /byte-order mark/);
  h.send(JSON.stringify(toolCall(3, 'list_directory', { path: ws.dir })) + '\u0000');
  assert.equal((await h.response(3, 5000)).error?.code, -32700);
  // Neither went upstream: the read left no record to hold the write back,
  // and the write that follows is refused as blind.
  h.send(toolCall(4, 'write_file', { path: ws.file('a.txt'), content: 'blind\n' }));
  const veto = await h.response(4, 5000);
  assert.equal(veto.result?._meta?.['fsguard/veto']?.code, 'not_read', JSON.stringify(veto));
  assert.equal(h.messages.filter((m) => m.id === 2 || m.id === 3).length, 2, 'one answer each');
});

test('at client EOF, a write held behind a read is still forwarded and answered', async (t) => {
  const ws = workspace(t, { 'a.txt': 'a\n' });
  const h = rawGuard(t, ws.dir);
  await h.initialize(1);
  h.send(toolCall(2, 'read_text_file', { path: ws.file('a.txt') }));
  await h.response(2);
  h.send(toolCall(3, 'read_text_file', { path: ws.file('a.txt') }));
  h.send(toolCall(4, 'write_file', { path: ws.file('a.txt'), content: 'b\n' })); // held behind 3
  h.endInput();
  const written = await h.response(4);
  assert.equal(written.error, undefined, JSON.stringify(written));
  assert.equal(written.result?.isError, undefined, JSON.stringify(written));
  assert.equal(readDisk(ws.file('a.txt')), 'b\n');
  assert.ok(await h.waitExit(8000), 'fsguard exits after the last answer');
});

test('at client EOF, a write released by a long answer the client is slow to take still goes upstream', async (t) => {
  // The read's answer (over 64 KiB) waits on a client that stopped reading
  // while the write it released waits behind it: the EOF's shutdown must
  // not close the server's stdin before the write reaches it.
  const text = 'x'.repeat(99) + '\n';
  const ws = workspace(t, { 'a.txt': text.repeat(3000) });
  const h = rawGuard(t, ws.dir);
  await h.initialize(1);
  h.send(toolCall(2, 'read_text_file', { path: ws.file('a.txt') }));
  await h.response(2);
  h.child.stdout.pause();
  h.send(toolCall(3, 'read_text_file', { path: ws.file('a.txt') }));
  h.send(toolCall(4, 'write_file', { path: ws.file('a.txt'), content: 'b\n' })); // held behind 3
  h.endInput();
  await sleep(1500);
  h.child.stdout.resume();
  const written = await h.response(4);
  assert.equal(written.error, undefined, JSON.stringify(written));
  assert.equal(written.result?.isError, undefined, JSON.stringify(written));
  assert.equal(readDisk(ws.file('a.txt')), 'b\n');
  assert.ok(await h.waitExit(8000), 'fsguard exits after the last answer');
});

test('a read of /proc/self/pagemap, which the server refuses, does not stall the session', async (t) => {
  const ws = workspace(t, { 'a.txt': 'a\n' });
  const h = rawGuard(t, ws.dir);
  await h.initialize(1);
  h.send(toolCall(2, 'read_text_file', { path: '/proc/self/pagemap' }));
  h.send(toolCall(3, 'list_directory', { path: ws.dir }));
  // Hashing the endless file took about 50 s; the answer comes in milliseconds.
  const listed = await h.response(3, 5000);
  assert.match(JSON.stringify(listed.result), /a\.txt/);
  assert.equal((await h.response(2, 5000)).result?.isError, true);
});

test('a read longer than Claude Code shows the model does not license write_file', async (t) => {
  const ws = workspace(t, { 'big.txt': 'x'.repeat(30_000) + '\n' });
  const h = rawGuard(t, ws.dir);
  // In the 2026 era each request names the client in its envelope.
  const claude = { clientInfo: { name: 'claude-code', version: '2.1.240' } };
  await h.initialize(1, claude);
  h.send(toolCall(2, 'read_text_file', { path: ws.file('big.txt') }, claude));
  await h.response(2);
  h.send(toolCall(3, 'write_file', { path: ws.file('big.txt'), content: 'short\n' }, claude));
  const veto = await h.response(3);
  assert.equal(veto.result?._meta?.['fsguard/veto']?.code, 'partial_read', JSON.stringify(veto).slice(0, 400));
  assert.match(veto.result.content[0].text, /claude-code shows the model only/);
  h.send(toolCall(4, 'edit_file', { path: ws.file('big.txt'), edits: [{ oldText: 'xxx', newText: 'yyy' }] }, claude));
  assert.equal((await h.response(4)).result?.isError, undefined, 'an edit is still licensed');
});

test('a config file that is a symlink reloads when the file it points to changes', async (t) => {
  const ws = workspace(t, { 'a.txt': 'a\n', 'dotfiles/.keep': '' });
  const target = ws.file('dotfiles/fsguard.json');
  fs.writeFileSync(target, JSON.stringify({ mode: 'enforce' }));
  const link = ws.file('fsguard.json');
  fs.symlinkSync(target, link);
  const s = await connect({ dir: ws.dir, extraArgs: ['--config', link] });
  t.after(() => s.close());
  const blind = () => callTool(s.client, 'write_file', { path: ws.file('a.txt'), content: 'blind\n' });
  assertVeto(await blind(), 'not_read', 'enforce');
  fs.writeFileSync(`${target}.tmp`, JSON.stringify({ mode: 'warn' }));
  fs.renameSync(`${target}.tmp`, target); // the dotfiles manager saves the target
  let res;
  for (let waited = 0; waited < 3000; waited += 100) {
    res = await blind();
    if (res.isError !== true) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assertAllowed(res, 'warn mode applied through the link');
});

test('an audit log on a full disk is reported once, and the session goes on', async (t) => {
  assert.ok(fs.existsSync('/dev/full'), 'this test needs /dev/full');
  const ws = workspace(t, { 'a.txt': 'a\n' });
  const config = ws.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ audit_log: '/dev/full' }));
  const s = await connect({ dir: ws.dir, extraArgs: ['--config', config] });
  t.after(() => s.close());
  for (let i = 0; i < 5; i += 1) {
    assertVeto(await callTool(s.client, 'write_file', { path: ws.file('a.txt'), content: 'x\n' }), 'not_read', `write ${i}`);
  }
  const reports = s.stderrText().match(/cannot append to the audit log/g) ?? [];
  assert.equal(reports.length, 1, s.stderrText());
  assert.match(s.stderrText(), /No space left on device/);
});

test('an audit log that cannot be opened stops fsguard with exit status 2, as documented', async (t) => {
  const ws = workspace(t);
  const config = ws.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ audit_log: ws.file('missing-dir/audit.jsonl') }));
  const h = spawnRawFor(t, ['--config', config, '--', process.execPath, FS_SERVER_SCRIPT, ws.dir]);
  const exit = await h.waitExit(5000);
  assert.equal(exit?.code, 2, h.stderrText());
  assert.match(h.stderrText(), /cannot open the audit log/);
});

test("a client's cancels of fsguard's own listing do not stall relative paths", async (t) => {
  const ws = workspace(t, { 'a.txt': 'a\n' });
  const h = rawGuard(t, ws.dir);
  h.open(1);
  // Cancel fsguard's first listing before and while the server answers it.
  for (let i = 0; i < 200; i += 1) {
    h.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'fsguard/allowed-directories/1' } });
  }
  await h.response(1);
  h.initialized();
  h.send(toolCall(2, 'read_text_file', { path: 'a.txt' }));
  const read = await h.response(2, 8000);
  assert.equal(read.result?.isError, undefined, JSON.stringify(read));
  assert.match(h.stderrText(), /dropped the client's cancel of fsguard's own request/);
});

test('a client whose initialize failed may send it again', only2025('initialize is a 2025-era request'), async (t) => {
  const ws = workspace(t);
  const h = rawGuard(t, ws.dir);
  h.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } });
  const failed = await h.response(1);
  assert.ok(failed.error, `the server refuses an initialize without clientInfo: ${JSON.stringify(failed)}`);
  await h.initialize(2);
  h.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
  assert.ok((await h.response(3)).result?.tools?.length > 0);
});

test('roots whose URIs fsguard cannot read as Node does never license a relative write elsewhere',
  only2025('roots/list is a request from the server to the client, which the 2026 era does not have'), async (t) => {
  const ws = workspace(t, { 'one/x.txt': 'ONE\n', 'two/x.txt': 'TWO-UNSEEN\n' });
  const h = spawnRawFor(t, ['--', process.execPath, SERVER_FS_SCRIPT, ws.file('one')]);
  let rootsUri = `file://${ws.file('one')}`;
  // Answer the server's roots/list requests as a client with roots does.
  const answered = new Set();
  const timer = setInterval(() => {
    for (const m of h.messages) {
      if (m.method === 'roots/list' && !answered.has(m.id)) {
        answered.add(m.id);
        h.send({ jsonrpc: '2.0', id: m.id, result: { roots: [{ uri: rootsUri }] } });
      }
    }
  }, 5);
  t.after(() => clearInterval(timer));
  h.send({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: { roots: { listChanged: true } }, clientInfo: { name: 'raw', version: '0' } },
  });
  await h.response(1);
  h.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await h.waitMessage((m) => m.method === 'roots/list');
  h.send(toolCall(2, 'read_text_file', { path: 'x.txt' }));
  assert.equal((await h.response(2)).result?.isError, undefined);
  rootsUri = `file://LOCALHOST${ws.file('two')}`;
  h.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
  await h.waitMessage((m) => m.method === 'roots/list' && m.id !== 0);
  h.send(toolCall(3, 'write_file', { path: 'x.txt', content: 'AGENT\n' }));
  await h.response(3, 15000);
  assert.equal(readDisk(ws.file('two/x.txt')), 'TWO-UNSEEN\n');
});

test('a read whose answer is over max_line_bytes is answered with an error at once, not left hanging', async (t) => {
  const ws = workspace(t, { 'big.txt': 'x'.repeat(40_000) + '\n', 'small.txt': 's\n' });
  const config = ws.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ max_line_bytes: 16384 }));
  const h = rawGuard(t, ws.dir, ['--config', config]);
  await h.initialize(1);
  h.send(toolCall(2, 'read_text_file', { path: ws.file('big.txt') }));
  h.send(toolCall('two"quoted', 'read_text_file', { path: ws.file('big.txt') }));
  const answer = await h.response(2, 5000);
  assert.equal(answer.error?.code, -32603, JSON.stringify(answer));
  assert.match(answer.error.message, /over max_line_bytes \(16384\).*head\/tail.*raise max_line_bytes/);
  assert.equal((await h.response('two"quoted', 5000)).error?.code, -32603);
  // The agent saw none of it, and a file over max_line_bytes is never hashed.
  h.send(toolCall(3, 'write_file', { path: ws.file('big.txt'), content: 'short\n' }));
  const veto = await h.response(3);
  assert.equal(veto.result?._meta?.['fsguard/veto']?.code, 'cannot_inspect');
  assert.match(veto.result.content[0].text, /larger than the most fsguard hashes/);
  h.send(toolCall(4, 'read_text_file', { path: ws.file('small.txt') }));
  assert.equal((await h.response(4)).result?.isError, undefined);
});

// The answer line's length for a read of a text of `n` bytes answered as
// `id` (its JSON text), from `base`: the length of the answer to a text of
// `n0` bytes as id `id0`.
function answerSizer(base, n0, id0) {
  return (n, id) => base - 2 * n0 - id0.length + 2 * n + id.length;
}

// A text length whose answer as `id` ends `last` bytes (the newline among
// them) past a multiple of 256 KiB, where the pipe from the server splits
// it: the last read brings only those bytes. Null if no length does.
function lengthEndingAt(size, id, last) {
  const base = size(0, id) + 1; // with the newline
  const n = (2 * 262144 + last - base) / 2;
  return Number.isInteger(n) ? n : null;
}

test('a too-long answer whose last read is only a few bytes is still answered, as is fsguard\'s own verify read', async (t) => {
  const ws = workspace(t, { 'small.txt': 'x'.repeat(10) });
  const config = ws.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ max_line_bytes: 65536 }));
  const h = rawGuard(t, ws.dir, ['--config', config]);
  await h.initialize(1);
  h.send(toolCall(10, 'read_text_file', { path: ws.file('small.txt') }));
  await h.response(10);
  const line = h.stdoutText.split('\n').find((l) => l.endsWith('"id":10}'));
  assert.ok(line, h.stdoutText.slice(0, 2000));
  const size = answerSizer(line.length, 10, '10');
  // The id lies in the line's last bytes: a last read of 2 to 11 of them
  // leaves part of it, or all, in the reads before.
  for (let last = 2; last <= 11; ++last) {
    // An id of 3 or 4 digits, whichever gives a whole text length.
    const [id, n] = [100 + last, 1000 + last].map((i) => [i, lengthEndingAt(size, String(i), last)])
      .find(([, length]) => length !== null);
    fs.writeFileSync(ws.file(`big${last}.txt`), 'x'.repeat(n));
    h.send(toolCall(id, 'read_text_file', { path: ws.file(`big${last}.txt`) }));
    const answer = await h.response(id, 5000);
    assert.equal(answer.error?.code, -32603, JSON.stringify(answer).slice(0, 500));
    assert.match(answer.error.message, /over max_line_bytes \(65536\)/);
  }

  // verify: upstream reads the file itself before the write: that read's
  // answer, as long, is its own ("id":"fsguard/verify/1"), and the write
  // waits for it.
  const verifyConfig = path.join(ws.dir, 'verify.json');
  fs.writeFileSync(verifyConfig, JSON.stringify({ max_line_bytes: 65536, verify: 'upstream' }));
  const v = rawGuard(t, ws.dir, ['--config', verifyConfig]);
  await v.initialize(1);
  const own = '"fsguard/verify/1"';
  const n = lengthEndingAt(size, own, 4) ?? lengthEndingAt(size, own, 5);
  fs.writeFileSync(ws.file('verified.txt'), 'x'.repeat(n));
  v.send(toolCall(2, 'write_file', { path: ws.file('verified.txt'), content: 'blind\n' }));
  const veto = await v.response(2, 5000);
  assert.ok(veto.result?._meta?.['fsguard/veto'], JSON.stringify(veto).slice(0, 500));
  assert.equal(readDisk(ws.file('verified.txt')).length, n);
});

test('the upstream command may follow fsguard\'s options without "--", as client launchers store it', async (t) => {
  const ws = workspace(t, { 'a.txt': 'a\n' });
  const h = spawnRawFor(t, ['--mode', 'enforce', process.execPath, FS_SERVER_SCRIPT, ws.dir]);
  await h.initialize(1);
  h.send(toolCall(2, 'write_file', { path: ws.file('a.txt'), content: 'blind\n' }));
  assert.equal((await h.response(2)).result?._meta?.['fsguard/veto']?.code, 'not_read');
  assert.equal(readDisk(ws.file('a.txt')), 'a\n');
});

// End-to-end behaviour of fsguard in front of the real @modelcontextprotocol/server-filesystem,
// driven by the official SDK client. Every scenario checks the tool result AND the disk.
//
//   node --test --test-concurrency=1 core.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  ERA, FS_SERVER_SCRIPT, TEE_SCRIPT,
  callTool, connect, descendantPids, makeWorkspace, openSession, sleep, textOf, vetoCode, vetoMeta, waitFor,
} from './lib/harness.mjs';

const readDisk = (p) => fs.readFileSync(p, 'utf8');

/** The call went through: no veto, no error. */
function assertAllowed(res, what) {
  assert.equal(vetoCode(res), undefined, `${what}: unexpected veto: ${textOf(res)}`);
  assert.notEqual(res.isError, true, `${what}: unexpected error: ${textOf(res)}`);
}

/** The call was vetoed by fsguard with `code`, in the contract's shape. */
function assertVeto(res, code, tool, what) {
  const text = textOf(res);
  assert.equal(res.isError, true, `${what}: expected a ${code} veto, got: ${JSON.stringify(res)}`);
  assert.equal(vetoCode(res), code, `${what}: veto code (text: ${text})`);
  assert.equal(vetoMeta(res).tool, tool, `${what}: _meta tool`);
  assert.equal(typeof vetoMeta(res).path, 'string', `${what}: _meta path`);
  assert.ok(text.startsWith(`fsguard refused ${tool}`), `${what}: text starts with "fsguard refused ${tool}": ${text}`);
}

// ---------------------------------------------------------------------------
// transparency

test('tools/list and the initialize result through fsguard equal those of the server alone', async (t) => {
  const ws = makeWorkspace({ 'a.txt': 'a\n' });
  const sessions = [];
  t.after(async () => {
    for (const s of sessions) await s.close();
    ws.cleanup();
  });
  const direct = await connect({ viaGuard: false, dir: ws.dir });
  sessions.push(direct);
  const guarded = await connect({ dir: ws.dir });
  sessions.push(guarded);

  const viaDirect = await direct.client.listTools();
  const viaGuard = await guarded.client.listTools();
  assert.ok(viaDirect.tools.some((x) => x.name === 'write_file'), 'the direct list is not empty');
  assert.deepEqual(viaGuard, viaDirect);
  assert.deepEqual(guarded.client.getServerVersion(), direct.client.getServerVersion());
  assert.deepEqual(guarded.client.getServerCapabilities(), direct.client.getServerCapabilities());
});

// ---------------------------------------------------------------------------
// blind writes

test('write_file on an existing file that was never read is vetoed as not_read', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'original\n' } });
  const a = file('a.txt');
  const res = await call('write_file', { path: a, content: 'clobbered\n' });
  assertVeto(res, 'not_read', 'write_file', 'blind write');
  assert.equal(vetoMeta(res).path, a, 'the veto names the canonical path');
  const text = textOf(res);
  assert.ok(text.includes(a), `the text names the file: ${text}`);
  assert.match(text, /\bread\b/i, 'the text tells the agent to read the file');
  assert.equal(readDisk(a), 'original\n', 'the file is unchanged on disk');
});

test('edit_file on a file that was never read is vetoed as not_read', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'one two\n' } });
  const a = file('a.txt');
  const res = await call('edit_file', { path: a, edits: [{ oldText: 'one', newText: 'ONE' }] });
  assertVeto(res, 'not_read', 'edit_file', 'blind edit');
  assert.ok(textOf(res).includes(a), 'the text names the file');
  assert.equal(readDisk(a), 'one two\n');
});

test('edit_file with dryRun:true on an unread file is not vetoed and writes nothing; dryRun:false is', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'one two\n' } });
  const a = file('a.txt');
  const dry = await call('edit_file', { path: a, edits: [{ oldText: 'one', newText: 'ONE' }], dryRun: true });
  assertAllowed(dry, 'dry run');
  assert.match(textOf(dry), /```diff/, 'the upstream diff comes back');
  assert.match(textOf(dry), /\+ONE two/);
  assert.equal(readDisk(a), 'one two\n', 'a dry run writes nothing');

  const wet = await call('edit_file', { path: a, edits: [{ oldText: 'one', newText: 'ONE' }], dryRun: false });
  assertVeto(wet, 'not_read', 'edit_file', 'dryRun:false is a real edit');
  assert.equal(readDisk(a), 'one two\n');
});

test('write_file of a file that does not exist is allowed', async (t) => {
  const { file, call } = await openSession(t);
  const n = file('new.txt');
  const res = await call('write_file', { path: n, content: 'fresh\n' });
  assertAllowed(res, 'create');
  assert.equal(readDisk(n), 'fresh\n');
});

// ---------------------------------------------------------------------------
// reads license writes

test('read_text_file then write_file is allowed', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'old\n' } });
  const a = file('a.txt');
  const r = await call('read_text_file', { path: a });
  assertAllowed(r, 'read');
  assert.equal(textOf(r), 'old\n');
  const w = await call('write_file', { path: a, content: 'new\n' });
  assertAllowed(w, 'write after read');
  assert.equal(readDisk(a), 'new\n');
});

test('read_file (deprecated alias) and read_media_file also license a write', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'aaa\n', 'b.bin': 'bbb\n' } });
  assertAllowed(await call('read_file', { path: file('a.txt') }), 'read_file');
  assertAllowed(await call('write_file', { path: file('a.txt'), content: 'A\n' }), 'write after read_file');
  assert.equal(readDisk(file('a.txt')), 'A\n');

  assertAllowed(await call('read_media_file', { path: file('b.bin') }), 'read_media_file');
  assertAllowed(await call('write_file', { path: file('b.bin'), content: 'B\n' }), 'write after read_media_file');
  assert.equal(readDisk(file('b.bin')), 'B\n');
});

test('one read licenses several sequential edit_file calls', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'alpha\nbeta\ngamma\n' } });
  const a = file('a.txt');
  assertAllowed(await call('read_text_file', { path: a }), 'read');
  assertAllowed(await call('edit_file', { path: a, edits: [{ oldText: 'alpha', newText: 'ALPHA' }] }), 'edit 1');
  assertAllowed(await call('edit_file', { path: a, edits: [{ oldText: 'gamma', newText: 'GAMMA' }] }), 'edit 2');
  assert.equal(readDisk(a), 'ALPHA\nbeta\nGAMMA\n');
});

// ---------------------------------------------------------------------------
// stale writes

test('an external change after the read vetoes write_file and edit_file as changed', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'mine\n', 'b.txt': 'one two\n' } });
  const a = file('a.txt');
  assertAllowed(await call('read_text_file', { path: a }), 'read a');
  fs.writeFileSync(a, 'the user typed this meanwhile\n');
  const w = await call('write_file', { path: a, content: 'agent\n' });
  assertVeto(w, 'changed', 'write_file', 'stale write');
  assert.ok(textOf(w).includes(a), 'the text names the file');
  assert.match(textOf(w), /\bread\b/i, 'the text says to read again');
  assert.equal(readDisk(a), 'the user typed this meanwhile\n', 'the external content survives');

  const b = file('b.txt');
  assertAllowed(await call('read_text_file', { path: b }), 'read b');
  fs.writeFileSync(b, 'one two three\n');
  const e = await call('edit_file', { path: b, edits: [{ oldText: 'one', newText: 'ONE' }] });
  assertVeto(e, 'changed', 'edit_file', 'stale edit');
  assert.equal(readDisk(b), 'one two three\n');
});

test('a same-size external change is detected as changed', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'aaaa\n' } });
  const a = file('a.txt');
  assertAllowed(await call('read_text_file', { path: a }), 'read');
  fs.writeFileSync(a, 'bbbb\n');
  const w = await call('write_file', { path: a, content: 'agent\n' });
  assertVeto(w, 'changed', 'write_file', 'same-size change');
  assert.equal(readDisk(a), 'bbbb\n');
});

test('a same-size external change that restores the mtime is still detected as changed', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'aaaa\n' } });
  const a = file('a.txt');
  const stamp = 1_700_000_000; // whole seconds, so the restored mtime is bit-exact
  fs.utimesSync(a, stamp, stamp);
  assertAllowed(await call('read_text_file', { path: a }), 'read');
  const ino = fs.statSync(a).ino;
  fs.writeFileSync(a, 'bbbb\n'); // in place: same inode, same size
  fs.utimesSync(a, stamp, stamp);
  const after = fs.statSync(a, { bigint: true });
  assert.equal(after.mtimeNs, BigInt(stamp) * 1_000_000_000n, 'the mtime really is the old one');
  assert.equal(Number(after.ino), ino, 'same inode');
  const w = await call('write_file', { path: a, content: 'agent\n' });
  assertVeto(w, 'changed', 'write_file', 'same-size change with the old mtime');
  assert.equal(readDisk(a), 'bbbb\n');
});

test('a timestamp-only touch or an identical rewrite is not a change', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'same\n', 'b.txt': 'same too\n' } });
  const a = file('a.txt');
  assertAllowed(await call('read_text_file', { path: a }), 'read a');
  const future = new Date(Date.now() + 60_000);
  fs.utimesSync(a, future, future);
  assertAllowed(await call('write_file', { path: a, content: 'agent a\n' }), 'write after touch');
  assert.equal(readDisk(a), 'agent a\n');

  const b = file('b.txt');
  assertAllowed(await call('read_text_file', { path: b }), 'read b');
  fs.writeFileSync(b, 'same too\n');
  assertAllowed(await call('write_file', { path: b, content: 'agent b\n' }), 'write after identical rewrite');
  assert.equal(readDisk(b), 'agent b\n');
});

test('reading again after an external change licenses the write', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'v1\n' } });
  const a = file('a.txt');
  assertAllowed(await call('read_text_file', { path: a }), 'first read');
  fs.writeFileSync(a, 'v2 external\n');
  const r = await call('read_text_file', { path: a });
  assertAllowed(r, 'second read');
  assert.equal(textOf(r), 'v2 external\n');
  assertAllowed(await call('write_file', { path: a, content: 'v3 agent\n' }), 'write after re-read');
  assert.equal(readDisk(a), 'v3 agent\n');
});

test('a file deleted after the read may be re-created; one re-created externally is changed', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'a\n', 'b.txt': 'b\n' } });
  const a = file('a.txt');
  assertAllowed(await call('read_text_file', { path: a }), 'read a');
  fs.unlinkSync(a);
  assertAllowed(await call('write_file', { path: a, content: 'recreated\n' }), 're-create a deleted file');
  assert.equal(readDisk(a), 'recreated\n');

  const b = file('b.txt');
  assertAllowed(await call('read_text_file', { path: b }), 'read b');
  fs.unlinkSync(b);
  fs.writeFileSync(b, 'someone else made a new b\n');
  assertVeto(await call('write_file', { path: b, content: 'agent\n' }), 'changed', 'write_file',
    'deleted and re-created externally');
  assert.equal(readDisk(b), 'someone else made a new b\n');
});

// ---------------------------------------------------------------------------
// failed and partial reads

test('a read that fails licenses nothing', async (t) => {
  const { file, call } = await openSession(t);
  const m = file('missing.txt');
  const r = await call('read_text_file', { path: m });
  assert.equal(r.isError, true, 'reading a missing file fails upstream');
  assert.equal(vetoCode(r), undefined, 'a read is never vetoed');
  fs.writeFileSync(m, 'created externally\n');
  assertVeto(await call('write_file', { path: m, content: 'agent\n' }), 'not_read', 'write_file',
    'the file appeared after a failed read');
  assert.equal(readDisk(m), 'created externally\n');
});

test('read_multiple_files licenses each file it read; a missing one stays creatable', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'A\n', 'b.txt': 'B\n' } });
  const [a, b, m] = [file('a.txt'), file('b.txt'), file('missing.txt')];
  const r = await call('read_multiple_files', { paths: [a, b, m] });
  assertAllowed(r, 'read_multiple_files');
  assert.match(textOf(r), /missing\.txt: Error/);
  assertAllowed(await call('write_file', { path: a, content: 'A2\n' }), 'write a');
  assertAllowed(await call('write_file', { path: b, content: 'B2\n' }), 'write b');
  assertAllowed(await call('write_file', { path: m, content: 'M\n' }), 'create missing');
  assert.equal(readDisk(a), 'A2\n');
  assert.equal(readDisk(b), 'B2\n');
  assert.equal(readDisk(m), 'M\n');
});

test('a failed part of read_multiple_files licenses nothing', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'A\n' } });
  const outside = makeWorkspace({ 'o.txt': 'outside\n' }, 'fsguard-it-outside-');
  t.after(outside.cleanup);
  const d = file('d');
  fs.mkdirSync(d);
  const o = outside.file('o.txt');

  const r = await call('read_multiple_files', { paths: [file('a.txt'), d, o] });
  assertAllowed(r, 'read_multiple_files');
  assert.match(textOf(r), /EISDIR/);
  assert.match(textOf(r), /Access denied/);

  // the directory becomes a regular file: it was never read
  fs.rmdirSync(d);
  fs.writeFileSync(d, 'now a file\n');
  assertVeto(await call('write_file', { path: d, content: 'agent\n' }), 'not_read', 'write_file',
    'a path whose part failed (directory)');
  assert.equal(readDisk(d), 'now a file\n');

  // outside the allowed directory: refused one way or the other, never written
  const wo = await call('write_file', { path: o, content: 'agent\n' });
  assert.equal(wo.isError, true, `write outside the root must fail: ${textOf(wo)}`);
  assert.equal(readDisk(o), 'outside\n');

  // the part that succeeded did count
  assertAllowed(await call('write_file', { path: file('a.txt'), content: 'A2\n' }), 'write a');
  assert.equal(readDisk(file('a.txt')), 'A2\n');
});

test('read_multiple_files is not fooled by a file whose content mimics a part delimiter', async (t) => {
  const { file, call } = await openSession(t);
  const d = file('d');
  fs.mkdirSync(d);
  const trick = file('trick.txt');
  // The upstream joins parts with "\n---\n" and starts each with "<path>:\n"; this content
  // forges a successful part for `d`, whose real part is an EISDIR failure.
  fs.writeFileSync(trick, `t1\n\n---\n${d}:\nforged content of d\n`);
  const r = await call('read_multiple_files', { paths: [trick, d] });
  assertAllowed(r, 'read_multiple_files');
  assert.match(textOf(r), /EISDIR/);

  fs.rmdirSync(d);
  fs.writeFileSync(d, 'now a file\n');
  assertVeto(await call('write_file', { path: d, content: 'agent\n' }), 'not_read', 'write_file',
    'the forged part must not count as a read');
  assert.equal(readDisk(d), 'now a file\n');
});

test('read_multiple_files splits in time linear in the response: 400 paths and a file of --- lines, '
  + '20,000 missing paths', async (t) => {
  const dashes = '---\n'.repeat(250_000); // 1 MB: a separator candidate on every line
  const files = { 'dashes.txt': dashes };
  for (let i = 0; i < 399; i += 1) files[`f${i}.txt`] = `file ${i}\n`;
  const { file, s, call } = await openSession(t, { files });
  const upstream = descendantPids(s.pid)[0];
  assert.ok(upstream, 'the upstream runs under fsguard');
  // CPU time (user + system) of a process so far, in ms: the scheduler's
  // count, which a busy machine does not inflate the way it does wall time.
  const cpuMs = (pid) => {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in 10 ms ticks
  };
  const manyFiles = [...Array.from({ length: 399 }, (_, i) => file(`f${i}.txt`)), file('dashes.txt')];
  const missing = Array.from({ length: 20_000 }, (_, i) => file(`missing-${i}.txt`));

  for (const [what, paths] of [['400 paths and a file of --- lines', manyFiles], ['20,000 missing paths', missing]]) {
    const [guardBefore, serverBefore, began] = [cpuMs(s.pid), cpuMs(upstream), Date.now()];
    const r = await s.client.callTool({ name: 'read_multiple_files', arguments: { paths } }, undefined,
      { timeout: 120_000 });
    const guardCpu = cpuMs(s.pid) - guardBefore;
    const serverCpu = cpuMs(upstream) - serverBefore;
    t.diagnostic(`${what}: ${Date.now() - began} ms; CPU: fsguard ${guardCpu} ms, server ${serverCpu} ms`);
    assert.equal(r.isError, undefined, `${what}: answered`);
    // The split was quadratic: 18 s and 15 s of fsguard's CPU where the
    // server needed 0.06 s and 2 s. fsguard's linear work (parsing, paths,
    // the split) stays under the server's own for the same call.
    assert.ok(guardCpu <= serverCpu + 1000, `${what}: fsguard used ${guardCpu} ms of CPU, the server ${serverCpu} ms`);
  }
  // The split still counts what was read: every file, the --- one included.
  for (const p of [file('f0.txt'), file('f398.txt'), file('dashes.txt')]) {
    assertAllowed(await call('write_file', { path: p, content: 'rewritten\n' }), `write ${p}`);
  }
  assert.equal(readDisk(file('dashes.txt')), 'rewritten\n');
});

test('a head read vetoes write_file as partial_read but allows edit_file', async (t) => {
  const lines = 'l1\nl2\nl3\nl4\n';
  const { file, call } = await openSession(t, { files: { 'h.txt': lines, 't.txt': lines, 'f.txt': lines } });
  const h = file('h.txt');
  const r = await call('read_text_file', { path: h, head: 2 });
  assertAllowed(r, 'head read');
  assert.equal(textOf(r), 'l1\nl2');
  const w = await call('write_file', { path: h, content: 'whole new file\n' });
  assertVeto(w, 'partial_read', 'write_file', 'write after a head read');
  assert.ok(textOf(w).includes(h), 'the text names the file');
  assert.equal(readDisk(h), lines, 'unchanged after the partial_read veto');
  assertAllowed(await call('edit_file', { path: h, edits: [{ oldText: 'l1', newText: 'L1' }] }), 'edit after head');
  assert.equal(readDisk(h), 'L1\nl2\nl3\nl4\n');

  const tl = file('t.txt');
  assertAllowed(await call('read_file', { path: tl, tail: 1 }), 'tail read');
  assertVeto(await call('write_file', { path: tl, content: 'x\n' }), 'partial_read', 'write_file',
    'write after a tail read');
  assert.equal(readDisk(tl), lines);

  const f = file('f.txt');
  assertAllowed(await call('read_text_file', { path: f, head: 1 }), 'head read of f');
  assertAllowed(await call('read_text_file', { path: f }), 'full read of f');
  assertAllowed(await call('write_file', { path: f, content: 'full\n' }), 'write after a later full read');
  assert.equal(readDisk(f), 'full\n');
});

test('a file that is not valid UTF-8, read as text, is vetoed as lossy_read for write_file and edit_file', async (t) => {
  const latin1 = Buffer.from('caf\xe9 cr\xe8me\n', 'latin1');
  const { file, call } = await openSession(t, {
    files: { 'latin1.txt': latin1, 'many.txt': latin1, 'media.txt': latin1, 'utf8.txt': 'café crème\n' },
  });
  const readBytes = (p) => fs.readFileSync(p);

  // read_text_file shows U+FFFD where the bytes are: the agent never saw them.
  const l = file('latin1.txt');
  const r = await call('read_text_file', { path: l });
  assert.equal(textOf(r), 'caf\uFFFD cr\uFFFDme\n');
  const w = await call('write_file', { path: l, content: textOf(r).replace('caf', 'CAF') });
  assertVeto(w, 'lossy_read', 'write_file', 'write_file after a lossy read');
  assert.match(textOf(w), /not valid UTF-8/);
  // edit_file would rewrite the whole file as UTF-8, the other bytes included.
  assertVeto(await call('edit_file', { path: l, edits: [{ oldText: 'caf', newText: 'CAF' }] }),
    'lossy_read', 'edit_file', 'edit_file after a lossy read');
  assert.deepEqual(readBytes(l), latin1);

  const m = file('many.txt');
  assertAllowed(await call('read_multiple_files', { paths: [m] }), 'read_multiple_files');
  assertVeto(await call('write_file', { path: m, content: 'x\n' }), 'lossy_read', 'write_file',
    'write_file after a lossy read_multiple_files');
  assert.deepEqual(readBytes(m), latin1);

  // read_media_file shows the exact bytes (base64): replacing the whole file
  // is an informed choice, but an edit still rewrites the rest as text.
  const md = file('media.txt');
  assertAllowed(await call('read_media_file', { path: md }), 'read_media_file');
  assertVeto(await call('edit_file', { path: md, edits: [{ oldText: 'caf', newText: 'CAF' }] }),
    'lossy_read', 'edit_file', 'edit_file after an exact read');
  assert.deepEqual(readBytes(md), latin1);
  assertAllowed(await call('write_file', { path: md, content: 'café crème\n' }), 'write_file after an exact read');
  assert.equal(readDisk(md), 'café crème\n');

  // Valid UTF-8 is unaffected.
  const u = file('utf8.txt');
  assertAllowed(await call('read_text_file', { path: u }), 'read of a UTF-8 file');
  assertAllowed(await call('edit_file', { path: u, edits: [{ oldText: 'café', newText: 'CAFÉ' }] }), 'edit of a UTF-8 file');
  assertAllowed(await call('write_file', { path: u, content: 'ok\n' }), 'write of a UTF-8 file');
  assert.equal(readDisk(u), 'ok\n');
});

// ---------------------------------------------------------------------------
// paths

test('paths fsguard cannot resolve are vetoed as unresolved_path and never reach the disk', async (t) => {
  // HOME points into the workspace, so a forwarded "~/..." write would land where we can see it.
  const ws = makeWorkspace({ 'a.txt': 'keep\n' });
  let s;
  const dirSpace = `${ws.dir} `;
  t.after(async () => {
    if (s) await s.close();
    ws.cleanup();
    fs.rmSync(dirSpace, { recursive: true, force: true });
  });
  s = await connect({ dir: ws.dir, env: { HOME: ws.dir } });
  const call = (n, a) => callTool(s.client, n, a);
  const a = ws.file('a.txt');
  assertAllowed(await call('read_text_file', { path: a }), 'read a');

  const cases = [
    ['trailing space', `${a} `],
    ['leading space', ` ${a}`],
    ['trailing tab', `${a}\t`],
    ['trailing double quote', `${a}"`],
    ['quoted path', `'${a}'`],
    ['the root itself plus a space (upstream writes a sibling outside the root)', dirSpace],
  ];
  for (const [what, p] of cases) {
    const res = await call('write_file', { path: p, content: 'agent\n' });
    assertVeto(res, 'unresolved_path', 'write_file', what);
    assert.equal(vetoMeta(res).path, p, `${what}: _meta path is the raw argument`);
    assert.match(textOf(res), /absolute/i, `${what}: the text says to use an absolute path`);
  }
  const e = await call('edit_file', { path: `${a} `, edits: [{ oldText: 'keep', newText: 'lost' }] });
  assertVeto(e, 'unresolved_path', 'edit_file', 'padded edit');

  for (const [what, args] of [['non-string path', { path: 42, content: 'x' }], ['missing path', { content: 'x' }]]) {
    assertVeto(await call('write_file', args), 'unresolved_path', 'write_file', what);
  }

  assert.equal(readDisk(a), 'keep\n', 'a.txt unchanged');
  assert.deepEqual(fs.readdirSync(ws.dir).sort(), ['a.txt'], 'nothing was created in the root');
  assert.equal(fs.existsSync(dirSpace), false, 'nothing was created next to the root');
});

test('relative and ~ paths resolve as the server resolves them, against its allowed directories', async (t) => {
  const ws = makeWorkspace({ 'a.txt': 'a1\n', 'b.txt': 'b1\n', 'sub/c.txt': 'c1\n' });
  let s;
  t.after(async () => {
    if (s) await s.close();
    ws.cleanup();
  });
  // HOME is the workspace, so "~/x" names a file the server may touch.
  s = await connect({ dir: ws.dir, env: { HOME: ws.dir } });
  const call = (n, a) => callTool(s.client, n, a);

  // Unread files are refused under every spelling, and stay as they were.
  for (const p of ['a.txt', './a.txt', '~/a.txt', 'sub/../a.txt', 'sub/c.txt']) {
    assertVeto(await call('write_file', { path: p, content: 'blind\n' }), 'not_read', 'write_file', p);
  }
  assert.equal(readDisk(ws.file('a.txt')), 'a1\n');
  assert.equal(readDisk(ws.file('sub/c.txt')), 'c1\n');

  // A read under one spelling licenses a write under another.
  assertAllowed(await call('read_text_file', { path: 'a.txt' }), 'relative read');
  assertAllowed(await call('write_file', { path: ws.file('a.txt'), content: 'a2\n' }), 'absolute write');
  assert.equal(readDisk(ws.file('a.txt')), 'a2\n');
  assertAllowed(await call('read_text_file', { path: ws.file('b.txt') }), 'absolute read');
  assertAllowed(await call('write_file', { path: '~/b.txt', content: 'b2\n' }), '~ write');
  assert.equal(readDisk(ws.file('b.txt')), 'b2\n');

  // A stale file is caught under any spelling.
  fs.writeFileSync(ws.file('b.txt'), 'b external\n');
  assertVeto(await call('edit_file', { path: './b.txt', edits: [{ oldText: 'b', newText: 'x' }] }), 'changed',
    'edit_file', 'relative edit after an external change');
  assert.equal(readDisk(ws.file('b.txt')), 'b external\n');

  // A new relative file is created where the server puts it.
  assertAllowed(await call('write_file', { path: 'rel-new.txt', content: 'new\n' }), 'relative new file');
  assert.equal(readDisk(ws.file('rel-new.txt')), 'new\n');
});

test('different spellings of one path share one record', async (t) => {
  const { dir, file, call } = await openSession(t, { files: { 'a.txt': 'v1\n', 'b.txt': 'b1\n', 'sub/.keep': '' } });
  const a = file('a.txt');
  assertAllowed(await call('read_text_file', { path: `${dir}/a.txt` }), 'read');
  assertAllowed(await call('write_file', { path: `${dir}/./sub/../a.txt`, content: 'v2\n' }), 'write via ./sub/..');
  assert.equal(readDisk(a), 'v2\n');
  assertAllowed(await call('write_file', { path: `${dir}//a.txt`, content: 'v3\n' }), 'write via //');
  assert.equal(readDisk(a), 'v3\n');

  const b = file('b.txt');
  assertAllowed(await call('read_text_file', { path: `${dir}//b.txt` }), 'read b via //');
  fs.writeFileSync(b, 'b external\n');
  assertVeto(await call('write_file', { path: `${dir}/./sub/../b.txt`, content: 'agent\n' }), 'changed',
    'write_file', 'change seen through another spelling');
  assert.equal(readDisk(b), 'b external\n');
});

test('a symlink and its target share one record', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'a1\n', 'b.txt': 'b1\n' } });
  const [a, link] = [file('a.txt'), file('link.txt')];
  fs.symlinkSync('a.txt', link);
  assertAllowed(await call('read_text_file', { path: link }), 'read via the link');
  assertAllowed(await call('write_file', { path: a, content: 'a2\n' }), 'write via the real name');
  assert.equal(readDisk(a), 'a2\n');
  assert.equal(fs.lstatSync(link).isSymbolicLink(), true, 'the link is still a link');

  const [b, blink] = [file('b.txt'), file('blink.txt')];
  fs.symlinkSync('b.txt', blink);
  assertAllowed(await call('read_text_file', { path: b }), 'read b via the real name');
  fs.writeFileSync(b, 'b external\n');
  assertVeto(await call('write_file', { path: blink, content: 'agent\n' }), 'changed', 'write_file',
    'write via the link after an external change');
  assert.equal(readDisk(b), 'b external\n');
});

test('move_file carries the read record to the new name', async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'a\n', 'c.txt': 'c\n' } });
  const [a, b] = [file('a.txt'), file('b.txt')];
  assertAllowed(await call('read_text_file', { path: a }), 'read a');
  assertAllowed(await call('move_file', { source: a, destination: b }), 'move a -> b');
  assert.equal(fs.existsSync(a), false);
  assertAllowed(await call('write_file', { path: b, content: 'b via moved record\n' }), 'write the new name');
  assert.equal(readDisk(b), 'b via moved record\n');

  const [c, d] = [file('c.txt'), file('d.txt')];
  assertAllowed(await call('move_file', { source: c, destination: d }), 'move unread c -> d');
  assertVeto(await call('write_file', { path: d, content: 'agent\n' }), 'not_read', 'write_file',
    'an unread file keeps being unread under its new name');
  assert.equal(readDisk(d), 'c\n');
});

// ---------------------------------------------------------------------------
// own writes

test("the agent's own writes never look external", async (t) => {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'v0\n' } });
  const a = file('a.txt');
  assertAllowed(await call('read_text_file', { path: a }), 'read');
  assertAllowed(await call('write_file', { path: a, content: 'v1\n' }), 'write 1');
  assertAllowed(await call('write_file', { path: a, content: 'v2\n' }), 'write 2');
  assertAllowed(await call('edit_file', { path: a, edits: [{ oldText: 'v2', newText: 'v3' }] }), 'edit');
  assertAllowed(await call('write_file', { path: a, content: 'v4\n' }), 'write after edit');
  assert.equal(readDisk(a), 'v4\n');

  const n = file('n.txt');
  assertAllowed(await call('write_file', { path: n, content: 'n1\n' }), 'create');
  assertAllowed(await call('edit_file', { path: n, edits: [{ oldText: 'n1', newText: 'n2' }] }), 'edit own file');
  assertAllowed(await call('write_file', { path: n, content: 'n3\n' }), 'overwrite own file');
  assert.equal(readDisk(n), 'n3\n');

  // ...but a change after the agent's own write is still a change
  fs.writeFileSync(a, 'external after own write\n');
  assertVeto(await call('write_file', { path: a, content: 'v5\n' }), 'changed', 'write_file',
    'external change after an own write');
  assert.equal(readDisk(a), 'external after own write\n');

  // ...of the same size, at once after the write: recorded from the bytes
  // written (no read-back), the file is compared by content
  assertAllowed(await call('read_text_file', { path: a }), 'read again');
  assertAllowed(await call('write_file', { path: a, content: 'v6\n' }), 'write 6');
  fs.writeFileSync(a, 'XY\n');
  assertVeto(await call('edit_file', { path: a, edits: [{ oldText: 'XY', newText: 'v7' }] }), 'changed',
    'edit_file', 'same-size external change right after an own write');
  assert.equal(readDisk(a), 'XY\n');
});

// ---------------------------------------------------------------------------
// the veto happens before the upstream

test('a vetoed write provably never reaches the upstream', async (t) => {
  const ws = makeWorkspace({ 'a.txt': 'original\n' });
  const logDir = makeWorkspace({}, 'fsguard-it-log-');
  const log = path.join(logDir.dir, 'upstream-stdin.log');
  let s;
  t.after(async () => {
    if (s) await s.close();
    ws.cleanup();
    logDir.cleanup();
  });
  s = await connect({
    dir: ws.dir,
    upstream: [process.execPath, TEE_SCRIPT, process.execPath, FS_SERVER_SCRIPT, ws.dir],
    env: { FSGUARD_TEE_LOG: log },
  });
  const call = (n, a) => callTool(s.client, n, a);
  const a = ws.file('a.txt');
  const VETOED = 'VETOED-PAYLOAD-4f1c';
  const ALLOWED = 'ALLOWED-PAYLOAD-9d2e';

  assertVeto(await call('write_file', { path: a, content: VETOED }), 'not_read', 'write_file', 'blind write');
  assertAllowed(await call('read_text_file', { path: a }), 'read');
  assertAllowed(await call('write_file', { path: a, content: ALLOWED }), 'write after read');
  assert.equal(readDisk(a), ALLOWED);

  const idOf = (marker) => s.sent().find((m) => m.method === 'tools/call' && m.params?.arguments?.content === marker)?.id;
  const vetoedId = idOf(VETOED);
  const allowedId = idOf(ALLOWED);
  assert.notEqual(vetoedId, undefined);
  assert.notEqual(allowedId, undefined);

  const lines = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const logged = lines.map((l) => { try { return JSON.parse(l); } catch { return null; } }).filter(Boolean);
  const handshake = ERA === '2026' ? 'server/discover' : 'initialize';
  assert.ok(logged.some((m) => m.method === handshake), 'the tee saw the handshake (it works)');
  assert.equal(lines.some((l) => l.includes(VETOED)), false, 'the vetoed payload never reached the upstream');
  assert.equal(logged.some((m) => m.id === vetoedId && m.method === 'tools/call'), false,
    `no tools/call with the vetoed id ${vetoedId} reached the upstream`);
  const allowedLine = logged.find((m) => m.method === 'tools/call' && m.params?.arguments?.content === ALLOWED);
  assert.ok(allowedLine, 'the allowed write reached the upstream');
  assert.equal(allowedLine.id, allowedId, 'with the id the client gave it');
  if (ERA === '2026') {
    assert.equal(allowedLine.params._meta?.['io.modelcontextprotocol/protocolVersion'], '2026-07-28',
      'a stateless request, with its envelope');
  }
});

// ---------------------------------------------------------------------------
// modes and configuration

async function assertBlindWriteGoesThrough(t, opts, what) {
  const { file, s, call } = await openSession(t, { files: { 'a.txt': 'original\n' }, ...opts });
  const a = file('a.txt');
  const res = await call('write_file', { path: a, content: 'blind\n' });
  assertAllowed(res, what);
  assert.equal(readDisk(a), 'blind\n', `${what}: the blind write reached the disk`);
  return { a, s };
}

async function assertBlindWriteVetoed(t, opts, what) {
  const { file, call } = await openSession(t, { files: { 'a.txt': 'original\n' }, ...opts });
  const a = file('a.txt');
  assertVeto(await call('write_file', { path: a, content: 'blind\n' }), 'not_read', 'write_file', what);
  assert.equal(readDisk(a), 'original\n');
}

/** A stderr line from fsguard that reports the would-be veto of `file`. */
function vetoLogLine(stderr, file) {
  return stderr.split('\n').find((l) => l.startsWith('fsguard: ') && (l.includes(file) || l.includes('not_read')));
}

function tempConfig(t, obj) {
  const ws = makeWorkspace({ 'fsguard.json': JSON.stringify(obj) }, 'fsguard-it-cfg-');
  t.after(ws.cleanup);
  return ws.file('fsguard.json');
}

test('warn mode (--mode warn) forwards a blind write and logs the would-be veto', async (t) => {
  const { a, s } = await assertBlindWriteGoesThrough(t, { extraArgs: ['--mode', 'warn'] }, 'warn mode');
  const line = await waitFor(() => vetoLogLine(s.stderrText(), a), 3000);
  assert.ok(line, `stderr reports the would-be veto; stderr was:\n${s.stderrText()}`);
});

test('off mode via FSGUARD_MODE=off forwards a blind write without logging a veto', async (t) => {
  const { a, s } = await assertBlindWriteGoesThrough(t, { env: { FSGUARD_MODE: 'off' } }, 'off mode');
  await sleep(300);
  assert.equal(vetoLogLine(s.stderrText(), a), undefined, `nothing logged; stderr was:\n${s.stderrText()}`);
});

test('a --config file with {"mode":"warn"} behaves like warn mode', async (t) => {
  const cfg = tempConfig(t, { mode: 'warn' });
  const { a, s } = await assertBlindWriteGoesThrough(t, { extraArgs: ['--config', cfg] }, 'config warn');
  const line = await waitFor(() => vetoLogLine(s.stderrText(), a), 3000);
  assert.ok(line, `stderr reports the would-be veto; stderr was:\n${s.stderrText()}`);
});

test('FSGUARD_CONFIG names the config file when --config is absent', async (t) => {
  const cfg = tempConfig(t, { mode: 'off' });
  await assertBlindWriteGoesThrough(t, { env: { FSGUARD_CONFIG: cfg } }, 'config via FSGUARD_CONFIG');
});

test('mode precedence: --mode over FSGUARD_MODE over the config file', async (t) => {
  const warnCfg = tempConfig(t, { mode: 'warn' });
  await t.test('--mode enforce beats FSGUARD_MODE=off', (tt) =>
    assertBlindWriteVetoed(tt, { extraArgs: ['--mode', 'enforce'], env: { FSGUARD_MODE: 'off' } }, 'flag over env'));
  await t.test('-m enforce beats a config file with warn', (tt) =>
    assertBlindWriteVetoed(tt, { extraArgs: ['-m', 'enforce', '-c', warnCfg] }, 'short flag over config'));
  await t.test('FSGUARD_MODE=enforce beats a config file with warn', (tt) =>
    assertBlindWriteVetoed(tt, { extraArgs: ['--config', warnCfg], env: { FSGUARD_MODE: 'enforce' } }, 'env over config'));
});

test('partial_read_allows_write:true lets a head read license write_file', async (t) => {
  const cfg = tempConfig(t, { partial_read_allows_write: true });
  const { file, call } = await openSession(t, { files: { 'h.txt': 'l1\nl2\nl3\n' }, extraArgs: ['--config', cfg] });
  const h = file('h.txt');
  assertAllowed(await call('read_text_file', { path: h, head: 1 }), 'head read');
  assertAllowed(await call('write_file', { path: h, content: 'whole\n' }), 'write after head read');
  assert.equal(readDisk(h), 'whole\n');
});

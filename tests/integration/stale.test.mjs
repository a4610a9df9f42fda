// Stale changes the agent can act on (issue 14), through the real
// server-filesystem (and @agent-infra's fork) and the SDK client: the diff
// a changed veto carries, a veto that counts as a read, an edit rebased
// onto an outside change, a write merged with one, and the fallbacks to the
// plain veto.
//
//   node --test --test-concurrency=1 stale.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  TESTS_DIR, callTool, connect, makeWorkspace, only2025, openSession, sleep, textOf, vetoCode, vetoMeta,
} from './lib/harness.mjs';

const AGENT_INFRA = path.resolve(TESTS_DIR, '..', 'profiles', 'node_modules',
  '@agent-infra/mcp-server-filesystem/dist/index.js');

/** agent-infra's server is on the v1 SDK: the pinned 2026-era client refuses it at connect. */
const AGENT_INFRA_ERA = only2025('@agent-infra/mcp-server-filesystem speaks the 2025 era only');

const readDisk = (p) => fs.readFileSync(p, 'utf8');
const lines = (n) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
const replaced = (text, what, by) => {
  assert.ok(text.includes(what), `${JSON.stringify(what)} in the text`);
  return text.replace(what, () => by);
};
const oneEdit = (file, oldText, newText) => ({ path: file, edits: [{ oldText, newText }] });

// An agent needs a model turn to act on a veto or a note; fsguard does not
// let either license a call that comes sooner (k_take_in_time, 250 ms).
const MODEL_TURN_MS = 400;

function assertAllowed(res, what) {
  assert.equal(vetoCode(res), undefined, `${what}: unexpected veto: ${textOf(res)}`);
  assert.notEqual(res.isError, true, `${what}: unexpected error: ${textOf(res)}`);
}

function assertVeto(res, code, what) {
  assert.equal(vetoCode(res), code, `${what}: expected ${code}, got: ${JSON.stringify(res).slice(0, 800)}`);
}

/** A session whose fsguard reads `config` (written next to the workspace). */
async function sessionWithConfig(t, files, config) {
  const home = makeWorkspace({ 'fsguard.json': JSON.stringify(config) }, 'fsguard-stale-config-');
  t.after(home.cleanup);
  return openSession(t, { files, extraArgs: ['--config', home.file('fsguard.json')] });
}

test('a formatter changes line 1 after the read; an edit of line 40 passes, both changes are on disk, and the result says so', async (t) => {
  const { file, call } = await openSession(t, { files: { 'code.txt': lines(50) } });
  const target = file('code.txt');
  assertAllowed(await call('read_text_file', { path: target }), 'read');
  const formatted = replaced(readDisk(target), 'line 1\n', '// formatted by a hook\n');
  fs.writeFileSync(target, formatted);

  const res = await call('edit_file', oneEdit(target, 'line 40', 'LINE 40'));
  assertAllowed(res, 'the edit far from the outside change');
  assert.equal(readDisk(target), replaced(formatted, 'line 40\n', 'LINE 40\n'), 'both changes on disk');
  const note = res.content.at(-1).text;
  assert.match(note, /had been modified outside fsguard since you last read or wrote it/);
  assert.match(note, /-line 1\n\+\/\/ formatted by a hook\n/);
  assert.match(res.content[0].text, /^```diff\n/, 'the server\'s own diff comes first, unchanged');
  assert.match(res.structuredContent.content, /had been modified outside fsguard/);
  assert.equal(res._meta?.['fsguard/stale']?.how, 'rebase');
  assert.equal(res._meta?.['fsguard/stale']?.diff_complete, true);

  // The note and the edit's diff showed the whole file: a rewrite needs no read.
  await sleep(MODEL_TURN_MS);
  const final = readDisk(target) + 'line 51\n';
  assertAllowed(await call('write_file', { path: target, content: final }), 'a rewrite after the rebase');
  assert.equal(readDisk(target), final);
});

test('an edit that touches the changed line is vetoed with a diff that shows the outside line; the edit of the current line then passes with no re-read, and a whole write that rewrites it is refused', async (t) => {
  const { file, call } = await openSession(t, { files: { 'code.txt': lines(50) } });
  const target = file('code.txt');
  assertAllowed(await call('read_text_file', { path: target }), 'read');
  const outside = replaced(readDisk(target), 'line 10\n', 'line 10 // reviewed by Sam\n');
  fs.writeFileSync(target, outside);

  const res = await call('edit_file', oneEdit(target, 'line 10\n', 'LINE 10\n'));
  assertVeto(res, 'changed', 'an edit of the changed line');
  const text = textOf(res);
  assert.match(text, /\+line 10 \/\/ reviewed by Sam\n/, 'the diff shows the outside line');
  assert.match(text, /@@ -7,7 \+7,7 @@/, 'with line numbers');
  assert.match(text, /This diff counts as your read/);
  const meta = vetoMeta(res);
  assert.equal(meta.diff_complete, true);
  assert.equal(meta.counts_as_read, true);
  assert.equal(meta.cause, 'outside fsguard');
  assert.match(meta.seen_xxh3_128, /^[0-9a-f]{32}$/);
  assert.match(meta.current_xxh3_128, /^[0-9a-f]{32}$/);
  assert.notEqual(meta.seen_xxh3_128, meta.current_xxh3_128);
  assert.equal(readDisk(target), outside, 'nothing written');

  // A whole write that rewrites the line the outside change wrote: made
  // from which version? fsguard does not guess (the keep-the-change rule).
  const corrected = replaced(outside, 'line 10 // reviewed by Sam\n', 'LINE 10 // reviewed by Sam\n');
  await sleep(MODEL_TURN_MS);
  const rewrite = await call('write_file', { path: target, content: corrected });
  assertVeto(rewrite, 'changed', 'a whole write that rewrites the changed line');
  assert.match(textOf(rewrite), /does not keep that change byte for byte/);
  assert.equal(readDisk(target), outside, 'nothing written');
  assertAllowed(await call('edit_file', oneEdit(target, 'line 10 // reviewed by Sam\n', 'LINE 10 // reviewed by Sam\n')),
    'the edit of the current line, without a read');
  assert.equal(readDisk(target), corrected);
});

test('with stale_write merge, a write that does not overlap the outside change is merged, and an overlapping one is vetoed with the conflict', async (t) => {
  const { file, call } = await sessionWithConfig(t, { 'a.txt': lines(50), 'b.txt': lines(50) },
    { stale_write: 'merge' });
  const a = file('a.txt');
  assertAllowed(await call('read_text_file', { path: a }), 'read a');
  const seen = readDisk(a);
  const theirs = replaced(seen, 'line 1\n', 'line 1 (edited by Sam)\n');
  fs.writeFileSync(a, theirs);
  const res = await call('write_file', { path: a, content: replaced(seen, 'line 40\n', 'line 40 (the agent)\n') });
  assertAllowed(res, 'a merged write');
  assert.equal(readDisk(a), replaced(theirs, 'line 40\n', 'line 40 (the agent)\n'), 'the merged bytes');
  assert.match(textOf(res), /Your write was merged three ways/);
  assert.match(textOf(res), /-line 1\n\+line 1 \(edited by Sam\)\n/);
  assert.equal(res._meta?.['fsguard/stale']?.how, 'merge');

  const b = file('b.txt');
  assertAllowed(await call('read_text_file', { path: b }), 'read b');
  const sams = replaced(readDisk(b), 'line 40\n', 'line 40 (Sam)\n');
  fs.writeFileSync(b, sams);
  const conflict = await call('write_file', { path: b, content: replaced(lines(50), 'line 40\n', 'line 40 (the agent)\n') });
  assertVeto(conflict, 'changed', 'an overlapping write');
  assert.equal(vetoMeta(conflict).merge, 'conflict');
  const text = textOf(conflict);
  assert.match(text, /<<<<<<< your write\nline 40 \(the agent\)\n/);
  assert.match(text, /=======\nline 40 \(Sam\)\n>>>>>>> on disk now/);
  assert.equal(readDisk(b), sams, 'Sam\'s line survives');
});

test('the writes of one model turn that reach fsguard right after the veto get it too; the next turn\'s retry passes', async (t) => {
  const { file, call } = await openSession(t, { files: { 'code.txt': lines(20) } });
  const target = file('code.txt');
  assertAllowed(await call('read_text_file', { path: target }), 'read');
  const outside = replaced(readDisk(target), 'line 3\n', 'line three\n');
  fs.writeFileSync(target, outside);
  const burst = await Promise.all([1, 2, 3].map((k) => call('write_file', { path: target, content: `blind ${k}\n` })));
  assert.deepEqual(burst.map(vetoCode), ['changed', 'changed', 'changed']);
  for (const k of [1, 2]) {
    assertVeto(await call('write_file', { path: target, content: `one after the other ${k}\n` }), 'changed',
      `a write of the same turn, sent after the veto came back (${k})`);
  }
  assert.equal(readDisk(target), outside, 'the outside change survives');
  await sleep(MODEL_TURN_MS);
  assertAllowed(await call('write_file', { path: target, content: `${outside}line 21\n` }), 'the next turn');
  assert.equal(readDisk(target), `${outside}line 21\n`);
});

test('with stale_edit veto, an edit far from the outside change is vetoed with the diff', async (t) => {
  const { file, call } = await sessionWithConfig(t, { 'code.txt': lines(50) }, { stale_edit: 'veto' });
  const target = file('code.txt');
  assertAllowed(await call('read_text_file', { path: target }), 'read');
  const formatted = replaced(readDisk(target), 'line 1\n', '// formatted\n');
  fs.writeFileSync(target, formatted);
  const res = await call('edit_file', oneEdit(target, 'line 40', 'LINE 40'));
  assertVeto(res, 'changed', 'a stale edit');
  assert.match(textOf(res), /\+\/\/ formatted\n/);
  assert.equal(readDisk(target), formatted);
});

test('a cut diff falls back to the plain changed veto', async (t) => {
  const { file, call } = await sessionWithConfig(t, { 'big.txt': lines(200) }, { diff_max_lines: 8 });
  // The whole file changes: the diff is longer than 8 lines.
  const big = file('big.txt');
  assertAllowed(await call('read_text_file', { path: big }), 'read big');
  fs.writeFileSync(big, readDisk(big).replaceAll('line', 'row'));
  const cut = await call('write_file', { path: big, content: 'x\n' });
  assertVeto(cut, 'changed', 'a write after a long change');
  assert.equal(vetoMeta(cut).diff_complete, false);
  assert.equal(vetoMeta(cut).counts_as_read, false);
  assert.match(textOf(cut), /fsguard cut the diff here/);
  assert.match(textOf(cut), /Read it with read_text_file \(without head or tail\), then retry\./);
  await sleep(MODEL_TURN_MS);
  assertVeto(await call('write_file', { path: big, content: 'x\n' }), 'changed', 'the retry: a cut diff is no read');
});

test('an evicted text falls back to the plain changed veto', async (t) => {
  const { file, call } = await sessionWithConfig(t, { 'small.txt': lines(20), 'other.txt': lines(21) },
    { kept_text_total_bytes: 400 });
  // Room for one small text only: reading other.txt evicts small.txt's.
  const small = file('small.txt');
  assertAllowed(await call('read_text_file', { path: small }), 'read small');
  assertAllowed(await call('read_text_file', { path: file('other.txt') }), 'read other');
  fs.writeFileSync(small, replaced(readDisk(small), 'line 1\n', 'one\n'));
  const evicted = await call('edit_file', oneEdit(small, 'line 15', 'LINE 15'));
  assertVeto(evicted, 'changed', 'an edit whose seen text was evicted');
  assert.doesNotMatch(textOf(evicted), /```diff/);
  assert.match(textOf(evicted), /Read it again to get its current content, then retry\./);
});

test('agent-infra: the veto names its read_file, and a stale edit_file is rebased too', AGENT_INFRA_ERA, async (t) => {
  assert.ok(fs.existsSync(AGENT_INFRA), 'run scripts/setup.sh to install tests/profiles');
  const ws = makeWorkspace({ 'code.txt': lines(50), 'unread.txt': 'never read\n' });
  const s = await connect({ dir: ws.dir, cwd: ws.dir, upstream: [process.execPath, AGENT_INFRA, '--allowed-directories', ws.dir] });
  t.after(async () => { await s.close(); ws.cleanup(); });
  const call = (n, a) => callTool(s.client, n, a);
  const blind = await call('write_file', { path: ws.file('unread.txt'), content: 'x\n' });
  assertVeto(blind, 'not_read', 'a blind write');
  assert.match(textOf(blind), /Read it with read_file, then retry\./);
  assert.doesNotMatch(textOf(blind), /read_text_file/);

  const target = ws.file('code.txt');
  assertAllowed(await call('read_file', { path: target }), 'read');
  const formatted = replaced(readDisk(target), 'line 1\n', '// formatted\n');
  fs.writeFileSync(target, formatted);
  const res = await call('edit_file', oneEdit(target, 'line 40', 'LINE 40'));
  assertAllowed(res, 'a stale edit far from the change');
  assert.equal(readDisk(target), replaced(formatted, 'line 40', 'LINE 40'));
  assert.match(textOf(res), /had been modified outside fsguard/);
});

test('rebases and merges are audited with both hashes', async (t) => {
  const home = makeWorkspace({}, 'fsguard-stale-audit-');
  t.after(home.cleanup);
  const audit = home.file('audit.jsonl');
  fs.writeFileSync(home.file('fsguard.json'), JSON.stringify({ stale_write: 'merge', audit_log: audit }));
  const { file, call } = await openSession(t, { files: { 'a.txt': lines(30), 'b.txt': lines(30) },
    extraArgs: ['--config', home.file('fsguard.json')] });
  for (const name of ['a.txt', 'b.txt']) {
    assertAllowed(await call('read_text_file', { path: file(name) }), `read ${name}`);
    fs.writeFileSync(file(name), replaced(readDisk(file(name)), 'line 1\n', 'one\n'));
  }
  assertAllowed(await call('edit_file', oneEdit(file('a.txt'), 'line 20', 'LINE 20')), 'rebased edit');
  assertAllowed(await call('write_file', { path: file('b.txt'), content: replaced(lines(30), 'line 20\n', 'LINE 20\n') }), 'merged write');
  const records = readDisk(audit).trim().split('\n').map((line) => JSON.parse(line))
    .filter((record) => record.event === 'decision');
  const rebase = records.find((record) => record.decision === 'rebase');
  const merge = records.find((record) => record.decision === 'merge');
  for (const record of [rebase, merge]) {
    assert.ok(record, JSON.stringify(records));
    assert.equal(record.code, 'changed');
    assert.match(record.fingerprint.seen_xxh3_128, /^[0-9a-f]{32}$/);
    assert.match(record.fingerprint.current_xxh3_128, /^[0-9a-f]{32}$/);
    assert.match(record.fingerprint.result_xxh3_128, /^[0-9a-f]{32}$/);
  }
  assert.equal(rebase.path, file('a.txt'));
  assert.equal(merge.path, file('b.txt'));
});

// The keep-the-change rule (issue 34): the calls of one model turn, spaced
// by the client's permission prompts, come long after the diff that counts
// as a read, and may still have been written from the version read.
async function showChange(call, target) {
  assertAllowed(await call('read_text_file', { path: target }), 'read');
  const seen = readDisk(target);
  const shown = replaced(seen, 'line 3\n', 'line three\n');
  fs.writeFileSync(target, shown);
  const veto = await call('write_file', { path: target, content: `${seen}blind\n` });
  assertVeto(veto, 'changed', 'a write of the turn');
  assert.equal(vetoMeta(veto).counts_as_read, true);
  await sleep(MODEL_TURN_MS); // a permission prompt
  return { seen, shown };
}

test('the agent\'s own edit in between does not let a write made from the version read undo the outside change', async (t) => {
  const { file, call } = await openSession(t, { files: { 'code.txt': lines(30) } });
  const target = file('code.txt');
  const { seen, shown } = await showChange(call, target);
  assertAllowed(await call('edit_file', oneEdit(target, 'line 10', 'LINE 10')), 'the turn\'s edit');
  const edited = replaced(shown, 'line 10\n', 'LINE 10\n');
  assert.equal(readDisk(target), edited);
  await sleep(MODEL_TURN_MS);
  const res = await call('write_file', { path: target, content: `${seen}line 31\n` });
  assertVeto(res, 'changed', 'the turn\'s write, made from the version read');
  assert.match(textOf(res), /does not keep that change byte for byte/);
  assert.equal(readDisk(target), edited, 'the outside change survives');
  assertAllowed(await call('write_file', { path: target, content: `${edited}line 31\n` }),
    'a write that keeps it');
});

test('agent-infra: a move onto the file keeps the change a diff showed, as a write must', AGENT_INFRA_ERA, async (t) => {
  assert.ok(fs.existsSync(AGENT_INFRA), 'run scripts/setup.sh to install tests/profiles');
  const ws = makeWorkspace({ 'code.txt': lines(30), 'draft.txt': 'draft\n' });
  const s = await connect({ dir: ws.dir, cwd: ws.dir, upstream: [process.execPath, AGENT_INFRA, '--allowed-directories', ws.dir] });
  t.after(async () => { await s.close(); ws.cleanup(); });
  const call = (n, a) => callTool(s.client, n, a);
  const target = ws.file('code.txt');
  assertAllowed(await call('read_file', { path: target }), 'read');
  const seen = readDisk(target);
  const shown = replaced(seen, 'line 3\n', 'line three\n');
  fs.writeFileSync(target, shown);
  assertVeto(await call('write_file', { path: target, content: `${seen}blind\n` }), 'changed', 'a write of the turn');
  await sleep(MODEL_TURN_MS);
  fs.writeFileSync(ws.file('draft.txt'), `${seen}line 31\n`);
  const moved = await call('move_file', { source: ws.file('draft.txt'), destination: target });
  assertVeto(moved, 'changed', 'a draft made from the version read, moved onto the file');
  assert.equal(readDisk(target), shown, 'the outside change survives');
  fs.writeFileSync(ws.file('draft.txt'), `${shown}line 31\n`);
  assertAllowed(await call('move_file', { source: ws.file('draft.txt'), destination: target }),
    'a draft that keeps it');
  assert.equal(readDisk(target), `${shown}line 31\n`);
});

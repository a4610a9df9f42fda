// What outlives one fsguard session (issue 15, parts 3 and 4), through the
// real server-filesystem and the SDK client:
//
//   - "state_file": what the agent read before a restart still licenses a
//     write of the unchanged file after it; a file changed in between is
//     not licensed; a garbage state file gives one warning and a normal
//     session; two fsguard processes sharing the file keep each other's
//     records.
//   - "shared_ledger": two sessions on one directory; a changed veto names
//     the other session's client and pid when that session wrote the
//     content on disk; with a ledger that cannot be created, both sessions
//     still work and each logs it once.
//
//   node --test --test-concurrency=1 persistence.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { callTool, connect, makeWorkspace, textOf, vetoCode, vetoMeta, waitFor } from './lib/harness.mjs';

function assertAllowed(res, what) {
  assert.equal(vetoCode(res), undefined, `${what}: unexpected veto: ${textOf(res)}`);
  assert.notEqual(res.isError, true, `${what}: unexpected error: ${textOf(res)}`);
}

function assertVeto(res, code, what) {
  assert.equal(vetoCode(res), code, `${what}: expected ${code}, got: ${JSON.stringify(res).slice(0, 500)}`);
}

/** The number of times `part` occurs in `text`. */
const occurrences = (text, part) => text.split(part).length - 1;

/**
 * A workspace holding `files`, and a directory beside it for fsguard's own
 * files, with a config file holding `config` (a function of that directory).
 * Returns {ws, own, configFile, start(clientName)}: start() connects an SDK
 * client through fsguard with that config, closed after the test.
 */
function setup(t, files, config) {
  const ws = makeWorkspace(files);
  const own = makeWorkspace({}, 'fsguard-own-');
  const configFile = path.join(own.dir, 'fsguard.json');
  fs.writeFileSync(configFile, JSON.stringify(config(own.dir)));
  const sessions = [];
  t.after(async () => {
    for (const s of sessions) await s.close();
    ws.cleanup();
    own.cleanup();
  });
  const start = async (clientName = 'fsguard-integration') => {
    const s = await connect({ dir: ws.dir, extraArgs: ['--config', configFile], clientName });
    sessions.push(s);
    return { s, call: (name, args) => callTool(s.client, name, args) };
  };
  return { ws, own, configFile, start };
}

// ---------------------------------------------------------------------------
// state_file

test('state_file: a read before a restart licenses a write of the unchanged file after it', async (t) => {
  const { ws, own, start } = setup(t, { 'a.txt': 'hello\n', 'b.txt': 'never read\n' },
    (dir) => ({ state_file: path.join(dir, 'state', 'fsguard-state.json') }));
  const first = await start();
  assertAllowed(await first.call('read_text_file', { path: ws.file('a.txt') }), 'read before the restart');
  await first.s.close(); // EOF: fsguard saves the records as it exits
  const stateFile = path.join(own.dir, 'state', 'fsguard-state.json');
  assert.ok(fs.readFileSync(stateFile, 'utf8').includes(ws.file('a.txt')), 'the state file names the file read');

  const second = await start();
  assertAllowed(await second.call('write_file', { path: ws.file('a.txt'), content: 'bye\n' }),
    'write after the restart');
  assert.equal(fs.readFileSync(ws.file('a.txt'), 'utf8'), 'bye\n');
  assertVeto(await second.call('write_file', { path: ws.file('b.txt'), content: 'x\n' }), 'not_read',
    'a file no session read is still refused');
  assert.doesNotMatch(second.s.stderrText(), /^fsguard: /m, 'a normal session logs nothing');
});

test('state_file: a file changed outside between the sessions licenses nothing: the write is vetoed', async (t) => {
  const { ws, start } = setup(t, { 'a.txt': 'hello\n' },
    (dir) => ({ state_file: path.join(dir, 'state.json') }));
  const first = await start();
  assertAllowed(await first.call('read_text_file', { path: ws.file('a.txt') }), 'read before the restart');
  await first.s.close();
  fs.writeFileSync(ws.file('a.txt'), 'hallo\n'); // the same size: only the content tells

  const second = await start();
  assertVeto(await second.call('write_file', { path: ws.file('a.txt'), content: 'bye\n' }), 'not_read',
    'write after the restart and an outside change');
  assert.equal(fs.readFileSync(ws.file('a.txt'), 'utf8'), 'hallo\n', 'the outside change survives');
});

test('state_file: a garbage state file gives one warning and a normal session, and is left as it was', async (t) => {
  const garbage = 'this is not a state file\n';
  const { ws, own, start } = setup(t, { 'a.txt': 'hello\n', 'b.txt': 'b\n' },
    (dir) => ({ state_file: path.join(dir, 'state.json') }));
  fs.writeFileSync(path.join(own.dir, 'state.json'), garbage);
  const { s, call } = await start();
  assertVeto(await call('write_file', { path: ws.file('b.txt'), content: 'x\n' }), 'not_read', 'blind write');
  assertAllowed(await call('read_text_file', { path: ws.file('a.txt') }), 'read');
  assertAllowed(await call('write_file', { path: ws.file('a.txt'), content: 'bye\n' }), 'write after the read');
  await s.close();
  const stderr = s.stderrText();
  assert.equal(occurrences(stderr, 'fsguard: warn: '), 1, `one warning:\n${stderr}`);
  assert.match(stderr, /ignored the state file .*state\.json: it is not an fsguard state file/);
  assert.equal(fs.readFileSync(path.join(own.dir, 'state.json'), 'utf8'), garbage, 'never overwritten');
});

test('state_file: two fsguard processes sharing the file keep each other\'s records', async (t) => {
  const { ws, start } = setup(t, { 'a.txt': 'a\n', 'b.txt': 'b\n' },
    (dir) => ({ state_file: path.join(dir, 'state.json') }));
  const one = await start('one');
  const two = await start('two');
  assertAllowed(await one.call('read_text_file', { path: ws.file('a.txt') }), 'session one reads a');
  assertAllowed(await two.call('read_text_file', { path: ws.file('b.txt') }), 'session two reads b');
  await Promise.all([one.s.close(), two.s.close()]);

  const next = await start();
  assertAllowed(await next.call('write_file', { path: ws.file('a.txt'), content: 'A\n' }), 'write of a');
  assertAllowed(await next.call('write_file', { path: ws.file('b.txt'), content: 'B\n' }), 'write of b');
});

test('state_file set by a config reload: the records go to it from then on', async (t) => {
  const { ws, own, configFile, start } = setup(t, { 'a.txt': 'hello\n' }, () => ({}));
  const stateFile = path.join(own.dir, 'state.json');
  const first = await start();
  fs.writeFileSync(configFile, JSON.stringify({ state_file: stateFile }));
  await new Promise((resolve) => setTimeout(resolve, 500)); // the reload waits about 100 ms
  assertAllowed(await first.call('read_text_file', { path: ws.file('a.txt') }), 'read after the reload');
  const saved = await waitFor(() => fs.existsSync(stateFile)
    && fs.readFileSync(stateFile, 'utf8').includes(ws.file('a.txt')), 3000);
  assert.ok(saved, 'saved within a second or so, before the session ends');
  await first.s.close();

  const second = await start();
  assertAllowed(await second.call('write_file', { path: ws.file('a.txt'), content: 'bye\n' }),
    'write after the restart');
});

// ---------------------------------------------------------------------------
// shared_ledger

test('shared_ledger: a changed veto names the other session whose write is on disk', async (t) => {
  const { ws, start } = setup(t, { 'f.txt': 'first\n' },
    (dir) => ({ shared_ledger: path.join(dir, 'ledger.sqlite') }));
  const a = await start('agent-a');
  const b = await start('agent-b');
  assertAllowed(await a.call('read_text_file', { path: ws.file('f.txt') }), 'A reads');
  assertAllowed(await b.call('read_text_file', { path: ws.file('f.txt') }), 'B reads');
  assertAllowed(await b.call('write_file', { path: ws.file('f.txt'), content: 'from b\n' }), 'B writes');
  const res = await a.call('write_file', { path: ws.file('f.txt'), content: 'from a\n' });
  assertVeto(res, 'changed', "A's write after B's");
  const cause = new RegExp(`^by another agent session \\(agent-b, pid ${b.s.pid}\\) (just now|\\d+ s ago)$`);
  assert.match(vetoMeta(res).cause, cause);
  assert.match(textOf(res), /has been modified by another agent session \(agent-b, pid \d+\)/);
  assert.equal(fs.readFileSync(ws.file('f.txt'), 'utf8'), 'from b\n', "B's write survives");
  // A change made outside fsguard is still called that.
  fs.writeFileSync(ws.file('f.txt'), 'by hand\n');
  const outside = await b.call('write_file', { path: ws.file('f.txt'), content: 'b again\n' });
  assertVeto(outside, 'changed', "B's write after an outside change");
  assert.equal(vetoMeta(outside).cause, 'outside fsguard');
  assert.doesNotMatch(a.s.stderrText() + b.s.stderrText(), /^fsguard: /m, 'nothing logged');
});

test('shared_ledger: with a ledger that cannot be created, both sessions work and each logs it once', async (t) => {
  // Under a regular file: no directory can be made there, even by root.
  const { ws, own, start } = setup(t, { 'f.txt': 'first\n', 'g.txt': 'g\n' },
    (dir) => ({ shared_ledger: path.join(dir, 'a-file', 'ledger.sqlite') }));
  fs.writeFileSync(path.join(own.dir, 'a-file'), 'a regular file\n');
  const a = await start('agent-a');
  const b = await start('agent-b');
  assertAllowed(await a.call('read_text_file', { path: ws.file('f.txt') }), 'A reads f');
  assertAllowed(await a.call('read_text_file', { path: ws.file('g.txt') }), 'A reads g');
  assertAllowed(await b.call('read_text_file', { path: ws.file('f.txt') }), 'B reads f');
  assertAllowed(await b.call('write_file', { path: ws.file('f.txt'), content: 'from b\n' }), 'B writes f');
  const stale = await a.call('write_file', { path: ws.file('f.txt'), content: 'from a\n' });
  assertVeto(stale, 'changed', "A's write after B's");
  assert.equal(vetoMeta(stale).cause, 'outside fsguard', 'no ledger to name B');
  assertAllowed(await a.call('write_file', { path: ws.file('g.txt'), content: 'G\n' }), "A's write of g");
  for (const [name, s] of [['A', a.s], ['B', b.s]]) {
    const stderr = await waitFor(() => s.stderrText().includes('shared ledger') && s.stderrText());
    assert.equal(occurrences(stderr, 'the shared ledger'), 1, `${name} logs it once:\n${stderr}`);
    assert.match(stderr, /fsguard: warn: the shared ledger .*ledger\.sqlite does not work/);
  }
});

// Path identity through the real server: every spelling server-filesystem
// accepts names the file fsguard guards; client roots that replace the
// server's directories mid-session; confine_to escapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  FSGUARD_BIN, SERVER_FS_SCRIPT, REQUEST_TIMEOUT_MS, cleanEnv, connect, callTool, descendantPids,
  killTree, makeWorkspace, textOf, vetoCode, waitFor,
} from './lib/harness.mjs';

const readDisk = (p) => fs.readFileSync(p, 'utf8');
const NFC = 'caf\u00e9.txt';
const NFD = 'cafe\u0301.txt';

function assertAllowed(res, what) {
  assert.notEqual(res.isError, true, `${what}: expected success, got: ${textOf(res)}`);
}

function assertVeto(res, code, what) {
  assert.equal(res.isError, true, `${what}: expected a veto, got success: ${textOf(res)}`);
  assert.equal(vetoCode(res), code, `${what}: expected ${code}, got: ${textOf(res)}`);
}

// The workspace every spelling refers into; HOME is the workspace itself.
function spellingWorkspace() {
  const ws = makeWorkspace({ 'a.txt': 'v1\n', 'sub/.keep': '', [NFC]: 'nfc v1\n' }, 'fsguard-paths-');
  fs.symlinkSync('a.txt', ws.file('link.txt'));
  fs.symlinkSync(ws.dir, ws.file('dlink'));
  fs.symlinkSync('..', ws.file('sub/up'));
  return ws;
}

// [spelling (built from the workspace dir), target relative to the workspace]
const SPELLINGS = [
  [(d) => `${d}/a.txt`, 'a.txt'],
  [(d) => `${d}/./a.txt`, 'a.txt'],
  [(d) => `${d}//a.txt`, 'a.txt'],
  [(d) => `/${d}///a.txt`, 'a.txt'],
  [(d) => `${d}/sub/../a.txt`, 'a.txt'],
  [(d) => `${d}/sub/./../a.txt`, 'a.txt'],
  [(d) => `${d}/a.txt/`, 'a.txt'],
  [(d) => `${d}/a.txt/.`, 'a.txt'],
  [(d) => `${d}/link.txt`, 'a.txt'],
  [(d) => `${d}/dlink/a.txt`, 'a.txt'],
  [(d) => `${d}/dlink/link.txt`, 'a.txt'],
  [(d) => `${d}/sub/up/a.txt`, 'a.txt'],
  [(d) => `${d}/${NFD}`, NFC],
  [(d) => `${d}/dlink/${NFD}`, NFC],
  [() => 'a.txt', 'a.txt'],
  [() => './a.txt', 'a.txt'],
  [() => '././a.txt', 'a.txt'],
  [() => 'sub/../a.txt', 'a.txt'],
  [() => 'sub//../a.txt', 'a.txt'],
  [() => 'sub/up/a.txt', 'a.txt'],
  [() => 'link.txt', 'a.txt'],
  [() => 'dlink/link.txt', 'a.txt'],
  [(d) => `../${path.basename(d)}/a.txt`, 'a.txt'],
  [() => NFD, NFC],
  [() => '~/a.txt', 'a.txt'],
  [() => '~/./sub/../a.txt', 'a.txt'],
  [() => '~/dlink/a.txt', 'a.txt'],
  [() => `~/${NFD}`, NFC],
];

test(`each of ${SPELLINGS.length} spellings is refused while the file is unread, accepted once read, and catches a change`, async (t) => {
  assert.ok(SPELLINGS.length >= 25);
  for (const [spell, target] of SPELLINGS) {
    const ws = spellingWorkspace();
    const s = await connect({ dir: ws.dir, env: { HOME: ws.dir } });
    try {
      const p = spell(ws.dir);
      const what = JSON.stringify(p);
      const file = ws.file(target);
      const before = readDisk(file);
      const call = (n, a) => callTool(s.client, n, a);

      assertVeto(await call('write_file', { path: p, content: 'blind\n' }), 'not_read', `${what} unread`);
      assertVeto(await call('edit_file', { path: p, edits: [{ oldText: 'v1', newText: 'x' }] }), 'not_read',
        `${what} unread edit`);
      assert.equal(readDisk(file), before, `${what}: unread file unchanged`);

      // Read under the spelling, write under the canonical name.
      assertAllowed(await call('read_text_file', { path: p }), `${what} read`);
      assertAllowed(await call('write_file', { path: file, content: 'agent 1\n' }), `${what} then canonical write`);
      assert.equal(readDisk(file), 'agent 1\n');

      // A change made outside is caught under the spelling.
      fs.writeFileSync(file, 'outside\n');
      assertVeto(await call('write_file', { path: p, content: 'stale\n' }), 'changed', `${what} stale`);
      assert.equal(readDisk(file), 'outside\n', `${what}: the outside change survived`);

      // Read under the canonical name, write under the spelling.
      assertAllowed(await call('read_text_file', { path: file }), `${what} canonical read`);
      assertAllowed(await call('write_file', { path: p, content: 'agent 2\n' }), `${what} write`);
      assert.equal(readDisk(file), 'agent 2\n', `${what}: the write landed on the target`);
      if (target === 'a.txt') {
        assert.equal(fs.lstatSync(ws.file('link.txt')).isSymbolicLink(), true);
      }
    } finally {
      await s.close();
      ws.cleanup();
    }
  }
});

// An SDK client that declares roots and answers roots/list from `roots`.
async function connectWithRoots(dir, roots) {
  const transport = new StdioClientTransport({
    command: FSGUARD_BIN,
    args: ['--', process.execPath, SERVER_FS_SCRIPT, dir],
    env: cleanEnv(),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk; });
  const client = new Client({ name: 'fsguard-roots', version: '0.0.0' }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((r) => ({ uri: `file://${r}` })) }));
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  const pid = transport.pid;
  const pids = [pid, ...descendantPids(pid)];
  return {
    client,
    stderrText: () => stderr,
    close: async () => {
      try { await client.close(); } catch { /* ignore */ }
      for (const p of pids) killTree(p);
    },
  };
}

async function allowedDirectories(client) {
  const res = await callTool(client, 'list_allowed_directories', {});
  return textOf(res).split('\n').slice(1);
}

test('~ expands as Node expands it: HOME set but empty gives "/", HOME=. stays relative to the allowed directory', async (t) => {
  // [HOME, how the agent spells notes.txt]
  const cases = [
    ['', (dir) => `~${dir}/notes.txt`], // path.join("", "/<dir>/notes.txt")
    ['', (dir) => `~/..${dir}/notes.txt`], // path.join("", "/../<dir>/notes.txt")
    ['.', () => '~/notes.txt'], // path.join(".", "/notes.txt") is "notes.txt"
    ['.', () => '~/sub/../notes.txt'],
  ];
  for (const [home, spell] of cases) {
    const ws = makeWorkspace({ 'notes.txt': 'mine\n', 'sub/.keep': '' }, 'fsguard-paths-');
    const s = await connect({ dir: ws.dir, env: { HOME: home } });
    try {
      const call = (n, a) => callTool(s.client, n, a);
      const p = spell(ws.dir);
      const what = `HOME=${JSON.stringify(home)} ${p}`;
      const blind = await call('write_file', { path: p, content: 'blind\n' });
      assertVeto(blind, 'not_read', `${what}: blind write`);
      assert.equal(blind._meta['fsguard/veto'].path, ws.file('notes.txt'), `${what}: the file the server would write`);
      assert.equal(readDisk(ws.file('notes.txt')), 'mine\n', `${what}: untouched`);
      const read = await call('read_text_file', { path: p });
      assert.equal(textOf(read), 'mine\n', `${what}: the server reads that file`);
      assertAllowed(await call('write_file', { path: p, content: 'written\n' }), `${what}: write after read`);
      assert.equal(readDisk(ws.file('notes.txt')), 'written\n', `${what}: written where fsguard looked`);
    } finally {
      await s.close();
      ws.cleanup();
    }
  }
});

test('client roots that replace the command-line directories mid-session move relative paths with them', async (t) => {
  const cli = makeWorkspace({ 'a.txt': 'cli\n' }, 'fsguard-cli-');
  const one = makeWorkspace({ 'a.txt': 'one\n' }, 'fsguard-root1-');
  const two = makeWorkspace({ 'a.txt': 'two\n' }, 'fsguard-root2-');
  const roots = [one.dir];
  const s = await connectWithRoots(cli.dir, roots);
  t.after(async () => {
    await s.close();
    for (const w of [cli, one, two]) w.cleanup();
  });
  const call = (n, a) => callTool(s.client, n, a);

  // The client's first roots replace the command-line directory.
  assert.ok(await waitFor(async () => (await allowedDirectories(s.client)).join() === one.dir, 5000),
    'the server adopted the first roots');
  assertVeto(await call('write_file', { path: 'a.txt', content: 'blind\n' }), 'not_read', 'root one unread');
  assertAllowed(await call('read_text_file', { path: 'a.txt' }), 'read root one');
  assertAllowed(await call('write_file', { path: 'a.txt', content: 'one agent\n' }), 'write root one');
  assert.equal(readDisk(one.file('a.txt')), 'one agent\n');
  assert.equal(readDisk(cli.file('a.txt')), 'cli\n');

  // Mid-session the roots change: "a.txt" now names another file, unread.
  roots.splice(0, 1, two.dir);
  await s.client.sendRootsListChanged();
  assert.ok(await waitFor(async () => (await allowedDirectories(s.client)).join() === two.dir, 5000),
    'the server adopted the new roots');
  const blind = await call('write_file', { path: 'a.txt', content: 'blind\n' });
  assertVeto(blind, 'not_read', 'root two unread');
  assert.equal(vetoCode(blind), 'not_read');
  assert.equal(readDisk(two.file('a.txt')), 'two\n', 'the new root file is untouched');
  assert.equal(readDisk(one.file('a.txt')), 'one agent\n', 'the old root file is untouched');
  assertAllowed(await call('read_text_file', { path: 'a.txt' }), 'read root two');
  assertAllowed(await call('write_file', { path: 'a.txt', content: 'two agent\n' }), 'write root two');
  assert.equal(readDisk(two.file('a.txt')), 'two agent\n');
});

test('confine_to denies every file tool whose path resolves outside, however it escapes', async (t) => {
  const outer = makeWorkspace({ 'other.txt': 'other\n', 'inner/a.txt': 'a\n' }, 'fsguard-confine-');
  const inner = outer.file('inner');
  fs.symlinkSync(outer.file('other.txt'), path.join(inner, 'escape.txt'));
  fs.symlinkSync(outer.dir, path.join(inner, 'up'));
  const config = outer.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ confine_to: [inner] }));
  // The server may use the whole outer directory; fsguard confines to inner.
  const s = await connect({ dir: outer.dir, extraArgs: ['--config', config] });
  t.after(async () => {
    await s.close();
    outer.cleanup();
    fs.rmSync(`${inner} `, { recursive: true, force: true });
  });
  const call = (n, a) => callTool(s.client, n, a);

  const escapes = [
    ['read_text_file', { path: outer.file('other.txt') }],
    ['read_text_file', { path: `${inner}/../other.txt` }],
    ['read_text_file', { path: path.join(inner, 'escape.txt') }],
    ['read_text_file', { path: path.join(inner, 'up/other.txt') }],
    ['list_directory', { path: outer.dir }],
    ['get_file_info', { path: outer.file('other.txt') }],
    ['search_files', { path: outer.dir, pattern: '*' }],
    ['create_directory', { path: `${inner} ` }],
    ['create_directory', { path: `${inner}\t` }],
    ['write_file', { path: outer.file('new.txt'), content: 'x' }],
    ['move_file', { source: path.join(inner, 'a.txt'), destination: outer.file('moved.txt') }],
    ['read_multiple_files', { paths: [path.join(inner, 'a.txt'), outer.file('other.txt')] }],
  ];
  for (const [tool, args] of escapes) {
    const res = await call(tool, args);
    assertVeto(res, 'outside_confinement', `${tool} ${JSON.stringify(args)}`);
    assert.match(textOf(res), /confine_to/);
  }
  assert.equal(fs.existsSync(`${inner} `), false, 'no sibling directory was created');
  assert.equal(fs.existsSync(outer.file('new.txt')), false);
  assert.equal(readDisk(path.join(inner, 'a.txt')), 'a\n');

  // Inside, everything works as usual.
  assertAllowed(await call('list_directory', { path: inner }), 'list inside');
  assertAllowed(await call('read_text_file', { path: path.join(inner, 'a.txt') }), 'read inside');
  assertAllowed(await call('write_file', { path: path.join(inner, 'a.txt'), content: 'a2\n' }), 'write inside');
  assert.equal(readDisk(path.join(inner, 'a.txt')), 'a2\n');
});

// "verify": "upstream": fsguard reads a file through the server itself before
// a change of it is decided, and records reads by the text they showed, so
// it guards servers whose files it cannot see at all. The core scenarios,
// through the real server-filesystem and the SDK client, in front of a
// server in fsguard's own mount namespace and in a private one (unshare -m,
// as root; skipped with a message where that is not permitted).
//
//   node --test --test-concurrency=1 verify_upstream.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  FSGUARD_BIN, SERVER_FS_SCRIPT, callTool, connect, makeWorkspace, textOf, vetoCode,
} from './lib/harness.mjs';

const canUnshare = spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0;
const noNamespace = canUnshare ? false : 'unshare -m is not permitted here (needs root or user namespaces)';

const ORIGINAL = 'written before the session\n';

function configFile(dir, values) {
  const file = path.join(fs.mkdtempSync(path.join(path.dirname(dir), 'cfg-')), 'fsguard.json');
  fs.writeFileSync(file, JSON.stringify(values));
  return file;
}

async function session(t, { dir, upstream, values = { verify: 'upstream' } }) {
  const config = configFile(dir, values);
  const s = await connect({ dir, upstream, extraArgs: ['--config', config, '--log-level', 'info'] });
  t.after(async () => {
    await s.close();
    fs.rmSync(path.dirname(config), { recursive: true, force: true });
  });
  return { s, call: (name, args) => callTool(s.client, name, args) };
}

/**
 * The core scenarios against a server whose files are `serverDir` as it
 * names them, and `hostDir` where a person changes them.
 */
async function coreScenarios(call, { serverDir, hostDir }) {
  const server = (name) => path.join(serverDir, name);
  const host = (name) => path.join(hostDir, name);

  // A blind write of an existing file.
  const blind = await call('write_file', { path: server('a.txt'), content: 'blind\n' });
  assert.equal(vetoCode(blind), 'not_read', textOf(blind));
  assert.equal(fs.readFileSync(host('a.txt'), 'utf8'), ORIGINAL);

  // Read, then write.
  assert.equal(textOf(await call('read_text_file', { path: server('a.txt') })), ORIGINAL);
  const write = await call('write_file', { path: server('a.txt'), content: 'agent\n' });
  assert.equal(vetoCode(write), undefined, textOf(write));
  assert.equal(fs.readFileSync(host('a.txt'), 'utf8'), 'agent\n');

  // A stale write: a person changed the file after the agent's write.
  fs.writeFileSync(host('a.txt'), 'changed by a person\n');
  const stale = await call('write_file', { path: server('a.txt'), content: 'stale\n' });
  assert.equal(vetoCode(stale), 'changed', textOf(stale));
  assert.match(textOf(stale), /\+changed by a person/, 'the diff shows the outside change');
  assert.equal(fs.readFileSync(host('a.txt'), 'utf8'), 'changed by a person\n');

  // A new file.
  const created = await call('write_file', { path: server('new.txt'), content: 'new\n' });
  assert.equal(vetoCode(created), undefined, textOf(created));
  assert.equal(fs.readFileSync(host('new.txt'), 'utf8'), 'new\n');

  // read_multiple_files: each part shown licenses its file; a failed part nothing.
  const many = await call('read_multiple_files', { paths: [server('b.txt'), server('gone.txt'), server('c.txt')] });
  assert.match(textOf(many), /gone\.txt: Error/);
  fs.writeFileSync(host('gone.txt'), 'appeared after the read\n');
  assert.equal(vetoCode(await call('write_file', { path: server('b.txt'), content: 'B\n' })), undefined);
  assert.equal(vetoCode(await call('write_file', { path: server('c.txt'), content: 'C\n' })), undefined);
  const gone = await call('write_file', { path: server('gone.txt'), content: 'G\n' });
  assert.equal(vetoCode(gone), 'not_read', textOf(gone));
  assert.equal(fs.readFileSync(host('gone.txt'), 'utf8'), 'appeared after the read\n');

  // A partial read: an edit may follow, a whole write may not.
  assert.equal(textOf(await call('read_text_file', { path: server('lines.txt'), head: 1 })), 'l1');
  const whole = await call('write_file', { path: server('lines.txt'), content: 'all new\n' });
  assert.equal(vetoCode(whole), 'partial_read', textOf(whole));
  const edit = await call('edit_file', { path: server('lines.txt'), edits: [{ oldText: 'l1', newText: 'L1' }] });
  assert.equal(vetoCode(edit), undefined, textOf(edit));
  assert.equal(fs.readFileSync(host('lines.txt'), 'utf8'), 'L1\nl2\nl3\n');

  // A failed read counts for nothing.
  const failed = await call('read_text_file', { path: server('d.txt/inside') });
  assert.equal(failed.isError, true);
  const afterFailed = await call('write_file', { path: server('d.txt'), content: 'x\n' });
  assert.equal(vetoCode(afterFailed), 'not_read', textOf(afterFailed));
  assert.equal(fs.readFileSync(host('d.txt'), 'utf8'), 'd\n');
}

const FILES = {
  'a.txt': ORIGINAL, 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n', 'lines.txt': 'l1\nl2\nl3\n',
};

test('verify upstream passes the core scenarios in front of a server in the same namespace', async (t) => {
  const ws = makeWorkspace(FILES);
  t.after(ws.cleanup);
  const { s, call } = await session(t, { dir: ws.dir });
  await coreScenarios(call, { serverDir: ws.dir, hostDir: ws.dir });
  assert.doesNotMatch(s.stderrText(), /cannot see/);
});

test('verify upstream guards a server whose files fsguard cannot see (a private mount namespace, no path_map)', { skip: noNamespace }, async (t) => {
  const ws = makeWorkspace({ ...Object.fromEntries(Object.entries(FILES).map(([k, v]) => [`project/${k}`, v])), 'projects/.keep': '' });
  t.after(ws.cleanup);
  const project = ws.file('project');
  const serverRoot = ws.file('projects');
  const serverProject = ws.file('projects/project'); // exists only in the server's namespace
  const upstream = ['unshare', '-m', '--propagation', 'private', 'sh', '-c', [
    `mount -t tmpfs none '${serverRoot}'`,
    `mkdir -p '${serverProject}' && mount --bind '${project}' '${serverProject}'`,
    `exec '${process.execPath}' '${SERVER_FS_SCRIPT}' '${serverProject}'`,
  ].join(' && ')];
  assert.equal(fs.existsSync(serverProject), false, 'fsguard must not see the server\'s directory');
  const { s, call } = await session(t, { dir: ws.dir, upstream });
  await coreScenarios(call, { serverDir: serverProject, hostDir: project });
  assert.doesNotMatch(s.stderrText(), /cannot see/, 'nothing to warn of: fsguard reads through the server');

  // --check-setup says so too, where without verify upstream it reports the directory unseen.
  const config = configFile(ws.dir, { verify: 'upstream' });
  t.after(() => fs.rmSync(path.dirname(config), { recursive: true, force: true }));
  const report = spawnSync(FSGUARD_BIN, ['--config', config, '--check-setup', ...upstream], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(report.status, 0, report.stdout + report.stderr);
  assert.match(report.stdout, new RegExp(`${serverProject.replaceAll('/', '\\/')}: read through the server`));
  const unseen = spawnSync(FSGUARD_BIN, ['--check-setup', ...upstream], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(unseen.status, 1, unseen.stdout + unseen.stderr);
  assert.match(unseen.stdout, /"verify": "upstream"/, 'the remedy is named');
});

test('verify upstream and path_map together are refused at start, with the reason', async (t) => {
  const ws = makeWorkspace({ 'a.txt': ORIGINAL });
  t.after(ws.cleanup);
  const config = configFile(ws.dir, { verify: 'upstream', path_map: { '/projects/app': ws.dir } });
  t.after(() => fs.rmSync(path.dirname(config), { recursive: true, force: true }));
  await assert.rejects(
    connect({ dir: ws.dir, extraArgs: ['--config', config] }),
    /"path_map" and "verify": "upstream" exclude each other/,
  );
});

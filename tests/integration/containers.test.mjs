// Servers that see the files under other paths, as in a container with a
// bind mount: the upstream runs in a private mount namespace (unshare -m)
// where the workspace is mounted at another path, or where another
// directory sits under the workspace's own name. Needs root (or the right
// to unshare); skipped with a message where that is not permitted.
//
//   node --test --test-concurrency=1 containers.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  FSGUARD_BIN, SERVER_FS_SCRIPT, TESTS_DIR, callTool, connect, makeWorkspace, spawnRawFor, textOf,
  vetoCode, vetoMeta,
} from './lib/harness.mjs';

const canUnshare = spawnSync('unshare', ['-m', '--propagation', 'private', 'true']).status === 0;
const skip = canUnshare ? false : 'unshare -m is not permitted here (needs root or user namespaces)';

const ORIGINAL = 'written before the session\n';

/**
 * The upstream command: server-filesystem on `serverDir`, in a mount
 * namespace of its own where `mounts` ([from, to] pairs, from fsguard's
 * side) are bound after `tmpfsAt` (a directory) is covered with a tmpfs.
 * `serverDir` is one directory or a list of them; `command` (the server's
 * command line) replaces server-filesystem.
 */
function namespacedServer({ tmpfsAt, mounts, serverDir, command }) {
  const steps = [];
  if (tmpfsAt) steps.push(`mount -t tmpfs none '${tmpfsAt}'`);
  for (const [from, to] of mounts) steps.push(`mkdir -p '${to}' && mount --bind '${from}' '${to}'`);
  const server = command ?? [process.execPath, SERVER_FS_SCRIPT, ...[].concat(serverDir)];
  steps.push(`exec ${server.map((word) => `'${word}'`).join(' ')}`);
  return ['unshare', '-m', '--propagation', 'private', 'sh', '-c', steps.join(' && ')];
}

// The other servers fsguard has profiles for (pinned in tests/profiles):
// the name of its profile, its command line serving `dir`, and what its
// write_file needs besides path and content (desktop-commander refuses to
// replace a file without an explicit mode).
const PROFILES_DIR = path.resolve(TESTS_DIR, '..', 'profiles', 'node_modules');
const PROFILE_SERVERS = [
  {
    profile: 'desktop-commander',
    command: () => [process.execPath, path.join(PROFILES_DIR, '@wonderwhy-er/desktop-commander/dist/index.js')],
    writing: { mode: 'rewrite' },
  },
  {
    profile: 'agent-infra-filesystem',
    command: (dir) => [process.execPath, path.join(PROFILES_DIR, '@agent-infra/mcp-server-filesystem/dist/index.js'),
      '--allowed-directories', dir],
    writing: {},
  },
];

/** A workspace with a.txt, and an empty directory the server's paths live under. */
function layout(t) {
  const ws = makeWorkspace({ 'project/a.txt': ORIGINAL, 'projects/.keep': '' });
  t.after(ws.cleanup);
  return {
    ws,
    project: ws.file('project'),
    serverRoot: ws.file('projects'),           // covered by a tmpfs in the server's namespace
    serverProject: ws.file('projects/project'), // where the server sees the project
  };
}

async function session(t, { upstream, config, env }) {
  const extraArgs = [];
  if (config) {
    const file = path.join(fs.mkdtempSync(path.join(path.dirname(config.dir), 'cfg-')), 'fsguard.json');
    fs.writeFileSync(file, JSON.stringify(config.values));
    extraArgs.push('--config', file);
  }
  const s = await connect({ upstream, extraArgs, env });
  t.after(() => s.close());
  return { s, call: (name, args) => callTool(s.client, name, args) };
}

function checkSetup(args) {
  return spawnSync(FSGUARD_BIN, ['--check-setup', ...args], { encoding: 'utf8', timeout: 30_000 });
}

test('without a map, a server directory fsguard cannot see is said at start, and every write to it is refused with the remedy', { skip }, async (t) => {
  const { project, serverRoot, serverProject } = layout(t);
  const upstream = namespacedServer({ tmpfsAt: serverRoot, mounts: [[project, serverProject]], serverDir: serverProject });
  const { s, call } = await session(t, { upstream });
  const target = path.join(serverProject, 'a.txt');

  const blind = await call('write_file', { path: target, content: 'blind\n' });
  assert.equal(vetoCode(blind), 'not_visible', textOf(blind));
  assert.match(textOf(blind), /path_map/);
  assert.equal(vetoMeta(blind).path, target, 'the veto names the server\'s path');
  // Read first: still refused, never taken for a new file.
  await call('read_text_file', { path: target });
  const afterRead = await call('write_file', { path: target, content: 'after read\n' });
  assert.equal(vetoCode(afterRead), 'not_visible');
  const created = await call('write_file', { path: path.join(serverProject, 'new.txt'), content: 'new\n' });
  assert.equal(vetoCode(created), 'not_visible', 'a new file there cannot be told from an old one');
  assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), ORIGINAL);
  assert.equal(fs.existsSync(path.join(project, 'new.txt')), false);
  assert.match(s.stderrText(), /fsguard cannot see the upstream's allowed directories .*projects\/project.*path_map/);

  const report = checkSetup(upstream);
  assert.equal(report.status, 1, report.stdout + report.stderr);
  assert.match(report.stdout, /NOT VISIBLE/);
});

test('with path_map, blind and stale writes are vetoed and a read-then-write passes, on the real files', { skip }, async (t) => {
  const { ws, project, serverRoot, serverProject } = layout(t);
  const upstream = namespacedServer({ tmpfsAt: serverRoot, mounts: [[project, serverProject]], serverDir: serverProject });
  const config = { dir: ws.dir, values: { path_map: { [serverProject]: project } } };
  const { s, call } = await session(t, { upstream, config });
  const target = path.join(serverProject, 'a.txt');
  const local = path.join(project, 'a.txt');

  const blind = await call('write_file', { path: target, content: 'blind\n' });
  assert.equal(vetoCode(blind), 'not_read', textOf(blind));
  assert.equal(vetoMeta(blind).path, target);
  assert.match(textOf(blind), new RegExp(`${target.replaceAll('/', '\\/')} already exists`));

  const read = await call('read_text_file', { path: 'a.txt' }); // relative: the server's side first
  assert.equal(textOf(read), ORIGINAL);
  const write = await call('write_file', { path: target, content: 'agent\n' });
  assert.equal(vetoCode(write), undefined, textOf(write));
  assert.equal(fs.readFileSync(local, 'utf8'), 'agent\n');

  fs.writeFileSync(local, 'changed on the host, by a person\n');
  const stale = await call('write_file', { path: target, content: 'stale\n' });
  assert.equal(vetoCode(stale), 'changed', textOf(stale));
  assert.match(textOf(stale), /\+changed on the host, by a person/, 'the diff shows the outside change');
  assert.equal(fs.readFileSync(local, 'utf8'), 'changed on the host, by a person\n');
  assert.doesNotMatch(s.stderrText(), /cannot see/);

  const configFile = path.join(ws.dir, 'check.json');
  fs.writeFileSync(configFile, JSON.stringify(config.values));
  const report = checkSetup(['--config', configFile, ...upstream]);
  assert.equal(report.status, 0, report.stdout + report.stderr);
  assert.match(report.stdout, /\(path_map\): visible, the same directory/);
});

test('a directory of the same name that is another one on the server\'s side is not visible either', { skip }, async (t) => {
  const { ws, project } = layout(t);
  const other = ws.file('other');
  fs.mkdirSync(other);
  fs.writeFileSync(path.join(other, 'a.txt'), 'the server\'s own file\n');
  // Creation times are kept in whole seconds: make the two differ.
  await new Promise((r) => setTimeout(r, 1100));
  fs.mkdirSync(ws.file('project2'));
  fs.writeFileSync(path.join(ws.file('project2'), 'a.txt'), ORIGINAL);
  const upstream = namespacedServer({ mounts: [[other, ws.file('project2')]], serverDir: ws.file('project2') });
  const { s, call } = await session(t, { upstream });
  const target = path.join(ws.file('project2'), 'a.txt');
  await call('read_text_file', { path: target });
  const write = await call('write_file', { path: target, content: 'x\n' });
  assert.equal(vetoCode(write), 'not_visible', textOf(write));
  assert.match(textOf(write), /another one/);
  assert.equal(fs.readFileSync(path.join(ws.file('project2'), 'a.txt'), 'utf8'), ORIGINAL);
  assert.equal(fs.readFileSync(path.join(other, 'a.txt'), 'utf8'), 'the server\'s own file\n');
  assert.match(s.stderrText(), /cannot see/);
  void project;

  const report = checkSetup(upstream);
  assert.equal(report.status, 1, report.stdout + report.stderr);
  assert.match(report.stdout, /NOT THE SAME DIRECTORY/);
});

test('a client that pipelines its first calls has them decided once fsguard knows what the server serves', { skip }, async (t) => {
  const { project, serverRoot, serverProject } = layout(t);
  const upstream = namespacedServer({ tmpfsAt: serverRoot, mounts: [[project, serverProject]], serverDir: serverProject });
  const h = spawnRawFor(t, ['--', ...upstream]);
  const target = path.join(serverProject, 'a.txt');
  // One write to the pipe, as a JSONL file piped in: initialize, initialized,
  // and a blind overwrite of a file fsguard never saw, all before the
  // server has answered anything.
  h.send([
    { jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipelining', version: '0' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call',
      params: { name: 'write_file', arguments: { path: target, content: 'blind\n' } } },
  ].map((message) => JSON.stringify(message)).join('\n'));
  const write = await h.response(2);
  assert.equal(write.result?._meta?.['fsguard/veto']?.code, 'not_visible', JSON.stringify(write));
  assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), ORIGINAL);
  assert.equal((await h.response(1)).result?.serverInfo?.name, 'secure-filesystem-server');
});

/** Makes the directories `dirs` (fresh) within one second of creation time, as a script does. */
function mkdirsInOneSecond(dirs) {
  for (let attempt = 0; attempt < 20; ++attempt) {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    for (const dir of dirs) fs.mkdirSync(dir, { recursive: true });
    const seconds = new Set(dirs.map((dir) => Math.floor(fs.statSync(dir).birthtimeMs / 1000)));
    if (seconds.size === 1) return;
  }
  throw new Error('could not create the directories within one second');
}

test('a path_map to the wrong directory, created in the same second, is not taken for the server\'s: check-setup does not say it guards writes, and a blind write is refused', { skip }, async (t) => {
  const ws = makeWorkspace({ 'projects/.keep': '' });
  t.after(ws.cleanup);
  const [project, wrong] = [ws.file('checkout/app'), ws.file('checkout/app-copy')];
  mkdirsInOneSecond([project, wrong]);
  fs.writeFileSync(path.join(project, 'a.txt'), ORIGINAL);
  const serverProject = ws.file('projects/project');
  const upstream = namespacedServer({ tmpfsAt: ws.file('projects'), mounts: [[project, serverProject]], serverDir: serverProject });
  const config = { dir: ws.dir, values: { path_map: { [serverProject]: wrong } } };

  const configFile = path.join(ws.dir, 'check.json');
  fs.writeFileSync(configFile, JSON.stringify(config.values));
  const report = checkSetup(['--config', configFile, ...upstream]);
  assert.doesNotMatch(report.stdout, /guards writes/, report.stdout);
  assert.match(report.stdout, /NOT THE SAME DIRECTORY/, report.stdout);
  assert.equal(report.status, 1, report.stdout + report.stderr);

  const { call } = await session(t, { upstream, config });
  const target = path.join(serverProject, 'a.txt');
  const blind = await call('write_file', { path: target, content: 'blind\n' });
  assert.equal(vetoCode(blind), 'not_visible', textOf(blind));
  assert.match(textOf(blind), /path_map/);
  assert.match(textOf(blind), /the server has a file of 27 bytes/);
  assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), ORIGINAL);
  // A file new on both sides is still written.
  const created = await call('write_file', { path: path.join(serverProject, 'new.txt'), content: 'new\n' });
  assert.equal(vetoCode(created), undefined, textOf(created));
});

test('a mount inside the served directory: a write to a file in it is refused, the mounted file not overwritten', { skip }, async (t) => {
  const ws = makeWorkspace({ 'project/a.txt': ORIGINAL, 'notes/n.txt': 'the person\'s notes\n', 'projects/.keep': '' });
  t.after(ws.cleanup);
  const [project, notes] = [ws.file('project'), ws.file('notes')];
  const serverProject = ws.file('projects/project');
  // As `-v ~/notes:/projects/project/notes`: fsguard sees only the empty mount point.
  const upstream = namespacedServer({
    tmpfsAt: ws.file('projects'),
    mounts: [[project, serverProject], [notes, path.join(serverProject, 'notes')]],
    serverDir: serverProject,
  });
  const config = { dir: ws.dir, values: { path_map: { [serverProject]: project } } };
  const { call } = await session(t, { upstream, config });
  const target = path.join(serverProject, 'notes/n.txt');
  const blind = await call('write_file', { path: target, content: 'blind\n' });
  assert.equal(vetoCode(blind), 'not_visible', textOf(blind));
  assert.match(textOf(blind), /a mount inside the served directory/);
  const edit = await call('edit_file', { path: target, edits: [{ oldText: 'notes', newText: 'gone' }] });
  assert.equal(vetoCode(edit), 'not_visible', textOf(edit));
  assert.equal(fs.readFileSync(path.join(notes, 'n.txt'), 'utf8'), 'the person\'s notes\n');
  // The project's own files are guarded as before.
  await call('read_text_file', { path: path.join(serverProject, 'a.txt') });
  const write = await call('write_file', { path: path.join(serverProject, 'a.txt'), content: 'agent\n' });
  assert.equal(vetoCode(write), undefined, textOf(write));
  assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), 'agent\n');

  const configFile = path.join(ws.dir, 'check.json');
  fs.writeFileSync(configFile, JSON.stringify(config.values));
  const report = checkSetup(['--config', configFile, ...upstream]);
  assert.doesNotMatch(report.stdout, /guards writes/, report.stdout);
  assert.match(report.stdout, /NOT THE SAME BELOW IT: in .*notes: the server has n\.txt/, report.stdout);
  assert.equal(report.status, 1, report.stdout + report.stderr);
});

test('a relative symlink from one mapped mount into another: fsguard does not take the write for a new file', { skip }, async (t) => {
  const ws = makeWorkspace({ 'home/app/a.txt': ORIGINAL, 'elsewhere/other/x.txt': 'the other mount\'s file\n', 'projects/.keep': '' });
  t.after(ws.cleanup);
  const [app, other] = [ws.file('home/app'), ws.file('elsewhere/other')];
  fs.symlinkSync('../other/x.txt', path.join(app, 'link.txt')); // dangling on fsguard's side
  const [serverProject, serverOther] = [ws.file('projects/project'), ws.file('projects/other')];
  const upstream = namespacedServer({
    tmpfsAt: ws.file('projects'),
    mounts: [[app, serverProject], [other, serverOther]],
    serverDir: [serverProject, serverOther],
  });
  const config = { dir: ws.dir, values: { path_map: { [serverProject]: app, [serverOther]: other } } };
  const { call } = await session(t, { upstream, config });
  const target = path.join(serverProject, 'link.txt');
  const blind = await call('write_file', { path: target, content: 'blind\n' });
  assert.equal(vetoCode(blind), 'not_visible', textOf(blind));
  await call('read_text_file', { path: target });
  const afterRead = await call('write_file', { path: target, content: 'after read\n' });
  assert.equal(vetoCode(afterRead), 'not_visible', textOf(afterRead));
  assert.equal(fs.readFileSync(path.join(other, 'x.txt'), 'utf8'), 'the other mount\'s file\n');
});

test('a mount inside the served directory of a server at the same path, with no path_map: the upstream runs in another mount namespace, so each change is checked with the server and the mounted file is not overwritten', { skip }, async (t) => {
  const ws = makeWorkspace({ 'project/a.txt': ORIGINAL, 'project/notes/.keep': '', 'notes/n.txt': 'the person\'s notes\n' });
  t.after(ws.cleanup);
  const [project, notes] = [ws.file('project'), ws.file('notes')];
  // As `docker run -v ~/project:~/project -v ~/notes:~/project/notes`: the
  // server sees the project where fsguard does, and the notes where fsguard
  // sees an empty directory.
  const upstream = namespacedServer({ mounts: [[notes, path.join(project, 'notes')]], serverDir: project });
  const { call } = await session(t, { upstream });
  const target = path.join(project, 'notes/n.txt');
  const blind = await call('write_file', { path: target, content: 'blind\n' });
  assert.equal(vetoCode(blind), 'not_visible', textOf(blind));
  assert.match(textOf(blind), /the server has a file of 19 bytes/);
  assert.equal(fs.readFileSync(path.join(notes, 'n.txt'), 'utf8'), 'the person\'s notes\n');
  // The project's own files are guarded as before, and a read licenses a write.
  const unread = await call('write_file', { path: path.join(project, 'a.txt'), content: 'blind\n' });
  assert.equal(vetoCode(unread), 'not_read', textOf(unread));
  await call('read_text_file', { path: path.join(project, 'a.txt') });
  const write = await call('write_file', { path: path.join(project, 'a.txt'), content: 'agent\n' });
  assert.equal(vetoCode(write), undefined, textOf(write));
  assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), 'agent\n');

  const report = checkSetup(upstream);
  assert.match(report.stdout, /NOT THE SAME BELOW IT/, report.stdout);
  assert.match(report.stdout, /asks the server about each file before a change \(as the upstream command runs unshare/, report.stdout);
  assert.equal(report.status, 1, report.stdout + report.stderr);
});

test('a wrapper that starts the namespaced server in a session of its own (setsid) is found all the same: the mounted file is not overwritten', { skip }, async (t) => {
  const ws = makeWorkspace({ 'project/a.txt': ORIGINAL, 'project/notes/.keep': '', 'notes/n.txt': 'the person\'s notes\n' });
  t.after(ws.cleanup);
  const [project, notes] = [ws.file('project'), ws.file('notes')];
  // A wrapper script's shell stays in fsguard's view; the server it starts
  // leaves the upstream's process group.
  const inner = namespacedServer({ mounts: [[notes, path.join(project, 'notes')]], serverDir: project });
  const quoted = inner.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const { call } = await session(t, { upstream: ['sh', '-c', `setsid -w ${quoted}`] });
  const blind = await call('write_file', { path: path.join(project, 'notes/n.txt'), content: 'blind\n' });
  assert.equal(vetoCode(blind), 'not_visible', textOf(blind));
  assert.equal(fs.readFileSync(path.join(notes, 'n.txt'), 'utf8'), 'the person\'s notes\n');
});

test('check-setup says what proves a plain local server\'s files are fsguard\'s, and names identity_check for wrappers', async (t) => {
  const ws = makeWorkspace({ 'project/a.txt': ORIGINAL });
  t.after(ws.cleanup);
  const report = checkSetup([process.execPath, SERVER_FS_SCRIPT, ws.file('project')]);
  assert.match(report.stdout, /runs in fsguard's own view of the files .*: it guards writes to them/s, report.stdout);
  assert.match(report.stdout, /"identity_check": "every_change"/, report.stdout);
  assert.equal(report.status, 0, report.stdout + report.stderr);
});

test('check-setup does not say it guards writes where it must ask about each file but the tools map has no get_file_info: every change is refused', async (t) => {
  const ws = makeWorkspace({ 'project/a.txt': ORIGINAL });
  t.after(ws.cleanup);
  const values = {
    identity_check: 'every_change',
    tools: { read_text_file: { role: 'read', path: 'path' }, write_file: { role: 'write', path: 'path' } },
  };
  const file = path.join(fs.mkdtempSync(path.join(path.dirname(ws.dir), 'cfg-')), 'fsguard.json');
  fs.writeFileSync(file, JSON.stringify(values));
  const upstream = [process.execPath, SERVER_FS_SCRIPT, ws.file('project')];
  const report = checkSetup(['--config', file, ...upstream]);
  assert.doesNotMatch(report.stdout, /guards writes/, report.stdout);
  assert.match(report.stdout, /no get_file_info whose answer fsguard reads.*refuses every change/s, report.stdout);
  assert.equal(report.status, 1, report.stdout + report.stderr);
  // As the session does.
  const { call } = await session(t, { upstream, config: { dir: ws.dir, values } });
  await call('read_text_file', { path: ws.file('project/a.txt') });
  const write = await call('write_file', { path: ws.file('project/a.txt'), content: 'agent\n' });
  assert.equal(vetoCode(write), 'cannot_inspect', textOf(write));
  assert.equal(fs.readFileSync(ws.file('project/a.txt'), 'utf8'), ORIGINAL);
});

for (const { profile, command, writing } of PROFILE_SERVERS) {
  test(`${profile} with path_map: its own get_file_info decides each change: a write after a read passes, a write to a file mounted on its side only is refused`, { skip }, async (t) => {
    assert.ok(fs.existsSync(command('/')[1]), 'run scripts/setup.sh to install tests/profiles');
    const ws = makeWorkspace({ 'project/a.txt': ORIGINAL, 'notes/n.txt': 'the person\'s notes\n', 'projects/.keep': '' });
    const home = makeWorkspace({}, 'fsguard-home-'); // desktop-commander keeps its config under $HOME
    t.after(() => { ws.cleanup(); home.cleanup(); });
    const [project, notes] = [ws.file('project'), ws.file('notes')];
    const serverProject = ws.file('projects/project');
    // As `-v ~/notes:/projects/project/notes`: fsguard sees only the empty mount point.
    const upstream = namespacedServer({
      tmpfsAt: ws.file('projects'),
      mounts: [[project, serverProject], [notes, path.join(serverProject, 'notes')]],
      command: command(serverProject),
    });
    const config = { dir: ws.dir, values: { path_map: { [serverProject]: project } } };
    const { call } = await session(t, { upstream, config, env: { HOME: home.dir } });
    const target = path.join(serverProject, 'a.txt');

    // Each write below passes only where fsguard read the server's report
    // of the file: one it cannot read is refused (not_visible).
    const blind = await call('write_file', { path: target, content: 'blind\n', ...writing });
    assert.equal(vetoCode(blind), 'not_read', textOf(blind));
    const read = await call('read_file', { path: target });
    assert.match(textOf(read), /written before the session/);
    const write = await call('write_file', { path: target, content: 'agent\n', ...writing });
    assert.equal(vetoCode(write), undefined, textOf(write));
    assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), 'agent\n');
    // Its own write, then another: its report of the file (to the
    // millisecond, for desktop-commander) is still fsguard's.
    const again = await call('write_file', { path: target, content: 'agent again\n', ...writing });
    assert.equal(vetoCode(again), undefined, textOf(again));
    assert.equal(fs.readFileSync(path.join(project, 'a.txt'), 'utf8'), 'agent again\n');

    // A file only the server sees: never taken for a new one.
    const mounted = await call('write_file', { path: path.join(serverProject, 'notes/n.txt'), content: 'blind\n', ...writing });
    assert.equal(vetoCode(mounted), 'not_visible', textOf(mounted));
    assert.match(textOf(mounted), /the server has a file of 19 bytes/);
    assert.equal(fs.readFileSync(path.join(notes, 'n.txt'), 'utf8'), 'the person\'s notes\n');
    // A file new on both sides is written.
    const created = await call('write_file', { path: path.join(serverProject, 'new.txt'), content: 'new\n', ...writing });
    assert.equal(vetoCode(created), undefined, textOf(created));
    assert.equal(fs.readFileSync(path.join(project, 'new.txt'), 'utf8'), 'new\n');

    // --check-setup agrees with the session: fsguard reads this server's
    // get_file_info (where the server lists its directories at all).
    const configFile = path.join(ws.dir, 'check.json');
    fs.writeFileSync(configFile, JSON.stringify(config.values));
    const report = spawnSync(FSGUARD_BIN, ['--check-setup', '--config', configFile, ...upstream],
      { encoding: 'utf8', timeout: 30_000, env: { ...process.env, HOME: home.dir } });
    assert.doesNotMatch(report.stdout, /no get_file_info whose answer fsguard reads/, report.stdout);
    assert.match(report.stdout, /asks the server about each file before a change|does not list allowed directories/, report.stdout);
  });
}

// fsguard adopt on the configs that the real clients' own `mcp add` commands
// write (Claude Code, Codex, Gemini CLI, pinned in tests/clients), in a home
// directory and project of the test's own, with no network:
//  - each client adds `fs...` = `npx -y @modelcontextprotocol/server-filesystem@<pinned> <project>`
//    in each of its scopes;
//  - a dry run shows a diff of each file it wrote and changes no byte;
//  - --apply puts fsguard in front of each entry; each entry, started as its
//    client starts it (SDK stdio client, npx offline on the primed cache),
//    vetoes a blind write of an existing file the agent never read;
//  - --undo restores each file byte for byte;
//  - after --apply again, the client reads its config back and lists the
//    server with fsguard's command (Claude Code and Gemini CLI also connect
//    to it: through fsguard and npx); --undo then gives the client its old
//    entries back, also in a file the client rewrote since.
// adopt.test.mjs covers the shapes of every client, refusals and comments.
//
//   node --test --test-concurrency=1 adopt_real_clients.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { FSGUARD_BIN, callTool, makeWorkspace, vetoCode } from './lib/harness.mjs';
import {
  SERVER_SPEC, clientsMissing, geminiListUntil, offlineEnv, runClient, startEntry,
} from './lib/real_clients.mjs';

const FSGUARD = path.resolve(FSGUARD_BIN);
const NOTES = 'the original notes\n';

/** A home, a project with notes.txt in it, and the offline environment of both. */
function clientHome(t) {
  const missing = clientsMissing();
  assert.equal(missing, undefined, missing);
  const ws = makeWorkspace({ 'home/.keep': '', 'project/notes.txt': NOTES }, 'fsguard-adopt-real-');
  t.after(ws.cleanup);
  const home = ws.file('home');
  const project = ws.file('project');
  const env = offlineEnv(home);
  const server = ['npx', '-y', SERVER_SPEC, project];
  const at = (relative) => path.join(ws.dir, relative);
  /** Runs `client` in the project; fails the test unless it exits 0. Its stdout. */
  const client = async (name, args) => {
    const run = await runClient(name, args, { cwd: project, env });
    assert.equal(run.code, 0, `${name} ${args.join(' ')}:\n${run.stdout}\n${run.stderr}`);
    return run.stdout;
  };
  return { ...ws, home, project, env, server, at, client };
}

/** Runs `fsguard adopt ...args` as the user of the home, in the project. */
function adopt(h, args = []) {
  const run = spawnSync(FSGUARD, ['adopt', ...args], { cwd: h.project, env: h.env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 0, `fsguard adopt ${args.join(' ')}:\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

const read = (file) => fs.readFileSync(file, 'utf8');
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Adopts the `files` (relative to the workspace) the client wrote: the dry
 * run, --apply, each entry of `entries()` guarding a blind write, --undo
 * byte for byte; then --apply again for the client to read back.
 */
async function adoptAndGuard(h, files, entries) {
  const original = Object.fromEntries(files.map((relative) => [relative, read(h.at(relative))]));

  const dry = adopt(h);
  for (const relative of files) {
    assert.match(dry, new RegExp(`^--- ${escape(h.at(relative))}$`, 'm'), `a diff of ${relative}:\n${dry}`);
    assert.equal(read(h.at(relative)), original[relative], `the dry run leaves ${relative}`);
  }
  assert.match(dry, /^\+.*fsguard/m, 'the diff puts fsguard in');

  adopt(h, ['--apply']);
  const adopted = entries();
  assert.ok(adopted.length > 0);
  for (const entry of adopted) {
    assert.equal(entry.command, FSGUARD, JSON.stringify(entry));
    assert.deepEqual(entry.args, ['--', ...h.server], JSON.stringify(entry));
    const session = await startEntry(entry, { cwd: h.project, env: h.env });
    try {
      const notes = path.join(h.project, 'notes.txt');
      const result = await callTool(session.client, 'write_file', { path: notes, content: 'blind\n' });
      assert.equal(vetoCode(result), 'not_read', JSON.stringify(result));
      assert.equal(read(notes), NOTES);
    } finally {
      await session.close();
    }
  }

  adopt(h, ['--undo']);
  for (const relative of files) {
    assert.equal(read(h.at(relative)), original[relative], `${relative} is restored byte for byte`);
    assert.equal(fs.existsSync(`${h.at(relative)}.fsguard-backup`), false);
  }
  adopt(h, ['--apply']);
}

/** `fsguard -- npx -y <server> <project>` as a client prints a command line. */
const guardedLine = (h) => [FSGUARD, '--', ...h.server].join(' ');

test('Claude Code: the configs claude mcp add writes (local, user, project) are adopted, claude lists and connects fsguard', async (t) => {
  const h = clientHome(t);
  await h.client('claude', ['mcp', 'add', 'fs-local', '--', ...h.server]);
  await h.client('claude', ['mcp', 'add', '--scope', 'user', 'fs-user', '--', ...h.server]);
  await h.client('claude', ['mcp', 'add', '--scope', 'project', 'fs-project', '--', ...h.server]);
  const files = ['home/.claude.json', 'project/.mcp.json'];
  const entries = () => {
    const user = JSON.parse(read(h.at(files[0])));
    const project = JSON.parse(read(h.at(files[1])));
    return [user.projects[h.project].mcpServers['fs-local'], user.mcpServers['fs-user'],
      project.mcpServers['fs-project']];
  };
  await adoptAndGuard(h, files, entries);

  for (const name of ['fs-local', 'fs-user', 'fs-project']) {
    const shown = await h.client('claude', ['mcp', 'get', name]);
    assert.match(shown, new RegExp(`^\\s*Command: ${escape(FSGUARD)}$`, 'm'), shown);
    assert.match(shown, new RegExp(`^\\s*Args: ${escape(['--', ...h.server].join(' '))}$`, 'm'), shown);
  }
  const list = await h.client('claude', ['mcp', 'list']);
  for (const name of ['fs-local', 'fs-user']) {
    assert.match(list, new RegExp(`^${name}: ${escape(guardedLine(h))} - ✔ Connected$`, 'm'), list);
  }
  // A project's .mcp.json servers wait for the user's approval in `claude`.
  assert.match(list, new RegExp(`^fs-project: ${escape(guardedLine(h))} - `, 'm'), list);

  // Claude Code rewrites ~/.claude.json as it runs; --undo puts the entries back in it.
  adopt(h, ['--undo']);
  const shown = await h.client('claude', ['mcp', 'get', 'fs-local']);
  assert.match(shown, /^\s*Command: npx$/m, shown);
  for (const entry of entries()) assert.deepEqual([entry.command, ...entry.args], h.server);
});

test('Codex: the config.toml codex mcp add writes is adopted, codex reads fsguard back', async (t) => {
  const h = clientHome(t);
  await h.client('codex', ['mcp', 'add', 'fs', '--', ...h.server]);
  await h.client('codex', ['mcp', 'add', '--env', 'FSGUARD_MODE=enforce', 'fs-env', '--', ...h.server]);
  const get = async (name) => JSON.parse(await h.client('codex', ['mcp', 'get', name, '--json'])).transport;
  const entries = () => {
    // codex mcp get reads the file in another process: use what it stored, parsed by the test.
    const text = read(h.at('home/.codex/config.toml'));
    return ['fs', 'fs-env'].map((name) => {
      const table = text.slice(text.indexOf(`[mcp_servers.${name}]`));
      return {
        command: JSON.parse(/^command = (.*)$/m.exec(table)[1]),
        args: JSON.parse(/^args = (\[.*\])$/m.exec(table)[1]),
        env: name === 'fs-env' ? { FSGUARD_MODE: 'enforce' } : {},
      };
    });
  };
  await adoptAndGuard(h, ['home/.codex/config.toml'], entries);

  for (const name of ['fs', 'fs-env']) {
    const transport = await get(name);
    assert.equal(transport.command, FSGUARD, JSON.stringify(transport));
    assert.deepEqual(transport.args, ['--', ...h.server]);
  }
  assert.deepEqual((await get('fs-env')).env, { FSGUARD_MODE: 'enforce' });
  const list = await h.client('codex', ['mcp', 'list']);
  assert.match(list, new RegExp(`^fs\\s+${escape(FSGUARD)}\\s+${escape(['--', ...h.server].join(' '))}\\s`, 'm'), list);

  adopt(h, ['--undo']);
  assert.equal((await get('fs')).command, 'npx');
});

test('Gemini CLI: the settings.json gemini mcp add writes (project, user) are adopted, gemini connects fsguard', async (t) => {
  const h = clientHome(t);
  // Gemini starts no server in an untrusted folder (docs/clients.md, folder trust).
  fs.mkdirSync(h.at('home/.gemini'), { recursive: true });
  fs.writeFileSync(h.at('home/.gemini/trustedFolders.json'), JSON.stringify({ [h.project]: 'TRUST_FOLDER' }));
  await h.client('gemini', ['mcp', 'add', 'fs', ...h.server]);
  await h.client('gemini', ['mcp', 'add', '--scope', 'user', 'fs-user', ...h.server]);
  const files = ['project/.gemini/settings.json', 'home/.gemini/settings.json'];
  const entries = () => [JSON.parse(read(h.at(files[0]))).mcpServers.fs,
    JSON.parse(read(h.at(files[1]))).mcpServers['fs-user']];
  await adoptAndGuard(h, files, entries);

  const connected = (name) => new RegExp(`${name}: ${escape(guardedLine(h))} \\(stdio\\) - Connected$`, 'm');
  const list = await geminiListUntil((text) => ['fs', 'fs-user'].every((name) => connected(name).test(text)),
    { cwd: h.project, env: h.env });
  for (const name of ['fs', 'fs-user']) assert.match(list, connected(name), list);
  adopt(h, ['--undo']);
  for (const entry of entries()) assert.deepEqual([entry.command, ...entry.args], h.server);
});

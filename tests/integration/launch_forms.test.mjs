// fsguard starts in each command form that a client stores (issue 18, item 1;
// the forms docs/clients.md shows). The `mcp add` commands of the clients and
// the Inspector's command line each pass fsguard a command line of their own
// making, and some of them eat a `--`. Each form is launched as the client
// launches it, fsguard found on PATH by name, and must reach the server and
// guard it: tools/list answers, and a blind write_file is vetoed. A form with
// a config must also apply it.
//
// Stdio clients (Claude Code, Gemini CLI, Codex, Cursor, VS Code, the SDKs)
// store a command and an argument list and spawn it; the v1 SDK's
// StdioClientTransport does the same here. The Inspector CLI parses its own
// options out of the line first, so its forms run through the pinned
// Inspector itself.
//
// The `claude`, `codex` and `gemini mcp add` lines docs/clients.md gives are
// read from the doc and run by the real clients (tests/clients); the entry
// each stored is started as the client starts it, from the project.
//
// No network: `npx -y @modelcontextprotocol/server-filesystem@<pinned>` runs
// with npm_config_offline=true, from this folder (where npx finds the pinned
// copy in node_modules) or, for the doc's lines, from the project with the
// npm cache scripts/setup.sh primed (tests/clients/npm-cache).
//
//   node --test --test-concurrency=1 launch_forms.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import {
  FSGUARD_BIN, REQUEST_TIMEOUT_MS, SERVER_FS_SCRIPT, TESTS_DIR, cleanEnv, killTree, makeWorkspace,
} from './lib/harness.mjs';
import {
  INSPECTOR, ORIGINAL, assertWriteVeto, jsonOut, runCli,
} from './lib/clients.mjs';
import {
  SERVER_SPEC, clientsMissing, geminiListUntil, offlineEnv, runClient, startEntry,
} from './lib/real_clients.mjs';

/**
 * A workspace with a.txt (ORIGINAL), a sub/ folder, a config file that
 * confines fsguard to sub/ (so a read of a.txt shows whether the config was
 * applied), and bin/fsguard, a link to the binary under test, for PATH.
 */
function formWorkspace(t) {
  const ws = makeWorkspace({ 'a.txt': ORIGINAL, 'sub/b.txt': 'b\n', 'home/.keep': '' });
  t.after(() => ws.cleanup());
  fs.mkdirSync(ws.file('bin'));
  fs.symlinkSync(FSGUARD_BIN, ws.file('bin/fsguard'));
  const config = ws.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ confine_to: [ws.file('sub')] }));
  const env = {
    PATH: `${ws.file('bin')}${path.delimiter}${process.env.PATH}`,
    HOME: ws.file('home'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  return { ...ws, a: ws.file('a.txt'), config, env };
}

/** The fsguard veto code of a tool result, or undefined. */
const vetoCode = (result) => result?._meta?.['fsguard/veto']?.code;

// ---------------------------------------------------------------------------
// stdio clients: a stored command and argument list

/**
 * Spawn `command args` with the SDK's stdio transport from tests/integration,
 * as a client spawns a stored server, and connect. Returns {client, stderr()}.
 */
async function launch(t, ws, command, args) {
  const transport = new StdioClientTransport({
    command, args, cwd: TESTS_DIR, env: cleanEnv(ws.env), stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk.toString('utf8'); });
  const client = new Client({ name: 'fsguard-launch-forms', version: '0.0.0' }, { capabilities: {} });
  t.after(async () => {
    const pid = transport.pid;
    try { await client.close(); } catch { /* already closed */ }
    killTree(pid);
  });
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  } catch (err) {
    err.message += `\n--- stderr of ${command} ${args.join(' ')} ---\n${stderr}`;
    throw err;
  }
  return { client, stderr: () => stderr };
}

/** tools/list answers through the form, and fsguard vetoes a blind write_file of a.txt. */
async function assertGuarded(client, ws, form) {
  const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
  assert.ok(tools.some((x) => x.name === 'write_file'), `${form}: tools/list reaches the server`);
  const res = await client.callTool({ name: 'write_file', arguments: { path: ws.a, content: 'blind\n' } },
    undefined, { timeout: REQUEST_TIMEOUT_MS });
  assertWriteVeto(res, 'not_read', ws.a, `${form}: blind write`);
  assert.equal(fs.readFileSync(ws.a, 'utf8'), ORIGINAL, `${form}: the file is unchanged`);
}

test('fsguard npx -y <server> DIR (no --, as claude, codex and gemini mcp add store it) starts and guards', async (t) => {
  const ws = formWorkspace(t);
  const { client } = await launch(t, ws, 'fsguard', ['npx', '-y', SERVER_SPEC, ws.dir]);
  await assertGuarded(client, ws, 'fsguard npx');
});

test('fsguard -- npx -y <server> DIR starts and guards', async (t) => {
  const ws = formWorkspace(t);
  const { client } = await launch(t, ws, 'fsguard', ['--', 'npx', '-y', SERVER_SPEC, ws.dir]);
  await assertGuarded(client, ws, 'fsguard -- npx');
});

test('fsguard node server.js DIR starts and guards', async (t) => {
  const ws = formWorkspace(t);
  const { client } = await launch(t, ws, 'fsguard', ['node', SERVER_FS_SCRIPT, ws.dir]);
  await assertGuarded(client, ws, 'fsguard node');
});

test('fsguard --config F node server.js DIR applies the config and starts the command after it', async (t) => {
  const ws = formWorkspace(t);
  const { client } = await launch(t, ws, 'fsguard', ['--config', ws.config, 'node', SERVER_FS_SCRIPT, ws.dir]);
  const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
  assert.ok(tools.some((x) => x.name === 'write_file'), 'tools/list reaches the server');
  const outside = await client.callTool({ name: 'read_text_file', arguments: { path: ws.a } },
    undefined, { timeout: REQUEST_TIMEOUT_MS });
  assert.equal(vetoCode(outside), 'outside_confinement', `confine_to from the config applies: ${JSON.stringify(outside)}`);
  const inside = ws.file('sub/b.txt');
  const blind = await client.callTool({ name: 'write_file', arguments: { path: inside, content: 'blind\n' } },
    undefined, { timeout: REQUEST_TIMEOUT_MS });
  assertWriteVeto(blind, 'not_read', inside, 'blind write inside confine_to');
  assert.equal(fs.readFileSync(inside, 'utf8'), 'b\n');
});

// ---------------------------------------------------------------------------
// the `mcp add` lines of docs/clients.md, run by the real clients

const DOCS_CLIENTS = path.resolve(TESTS_DIR, '..', '..', 'docs', 'clients.md');

/** The line of docs/clients.md that registers fsguard with `client mcp add` in the npx form. */
function docLine(client) {
  const line = new RegExp(`^${client} mcp add .*\\bfsguard npx .*$`, 'm').exec(fs.readFileSync(DOCS_CLIENTS, 'utf8'));
  assert.ok(line, `docs/clients.md gives a ${client} mcp add line with fsguard npx`);
  return line[0];
}

/**
 * Runs the doc's `client mcp add` line, with the project put in, through the
 * real client in `ws` (its home, fsguard on PATH, npx offline on the primed
 * cache), and returns the environment the client runs servers with.
 */
async function addAsDocumented(ws, client) {
  const missing = clientsMissing();
  assert.equal(missing, undefined, missing);
  assert.ok(fs.readFileSync(DOCS_CLIENTS, 'utf8').includes(`fsguard is tested with \`${SERVER_SPEC}\``),
    `docs/clients.md says which server version fsguard is tested with: ${SERVER_SPEC}`);
  const line = docLine(client);
  assert.ok(line.split(/\s+/).includes(SERVER_SPEC),
    `docs/clients.md names the server at the version the tests pin (${SERVER_SPEC}): ${line}`);
  const [, ...args] = line.replace('/path/to/your/project', ws.dir).split(/\s+/);
  const env = offlineEnv(ws.file('home'), ws.file('bin'));
  const run = await runClient(client, args, { cwd: ws.dir, env });
  assert.equal(run.code, 0, `${line}:\n${run.stdout}\n${run.stderr}`);
  return env;
}

/** Starts the entry a client stored, as it does, and checks that fsguard guards it. */
async function assertEntryGuards(t, ws, env, entry, form) {
  assert.equal(entry.command, 'fsguard', `${form}: ${JSON.stringify(entry)}`);
  assert.deepEqual(entry.args, ['npx', '-y', SERVER_SPEC, ws.dir], `${form}: stored as given, without --`);
  const session = await startEntry(entry, { cwd: ws.dir, env });
  t.after(session.close);
  await assertGuarded(session.client, ws, form);
}

test("docs/clients.md's claude mcp add line: Claude Code stores it, and the stored entry starts fsguard offline and guards", async (t) => {
  const ws = formWorkspace(t);
  const env = await addAsDocumented(ws, 'claude');
  const entry = JSON.parse(fs.readFileSync(ws.file('.mcp.json'), 'utf8')).mcpServers.fs;
  const shown = await runClient('claude', ['mcp', 'get', 'fs'], { cwd: ws.dir, env });
  assert.match(shown.stdout, /^\s*Command: fsguard$/m, shown.stdout + shown.stderr);
  await assertEntryGuards(t, ws, env, entry, 'claude mcp add');
});

test("docs/clients.md's codex mcp add line: Codex stores it, and the stored entry starts fsguard offline and guards", async (t) => {
  const ws = formWorkspace(t);
  const env = await addAsDocumented(ws, 'codex');
  const got = await runClient('codex', ['mcp', 'get', 'fs', '--json'], { cwd: ws.dir, env });
  assert.equal(got.code, 0, got.stderr);
  const { transport } = JSON.parse(got.stdout);
  assert.deepEqual(transport.env, { FSGUARD_MODE: 'enforce' });
  await assertEntryGuards(t, ws, env, transport, 'codex mcp add');
});

test("docs/clients.md's gemini mcp add line: Gemini CLI stores it and connects through fsguard; the entry guards", async (t) => {
  const ws = formWorkspace(t);
  const env = await addAsDocumented(ws, 'gemini');
  // The folder trust docs/clients.md describes: without it, gemini starts no server here.
  fs.mkdirSync(ws.file('home/.gemini'), { recursive: true });
  fs.writeFileSync(ws.file('home/.gemini/trustedFolders.json'), JSON.stringify({ [ws.dir]: 'TRUST_FOLDER' }));
  const connected = /fs: fsguard npx .* \(stdio\) - Connected$/m;
  const list = await geminiListUntil((text) => connected.test(text), { cwd: ws.dir, env });
  assert.match(list, connected, list);
  const entry = JSON.parse(fs.readFileSync(ws.file('.gemini/settings.json'), 'utf8')).mcpServers.fs;
  await assertEntryGuards(t, ws, env, entry, 'gemini mcp add');
});

// ---------------------------------------------------------------------------
// the Inspector CLI: `npx @modelcontextprotocol/inspector --cli <command line> --method …`

/** Run the Inspector CLI with `target` (the server's command line) and one call; returns its JSON result. */
async function inspect(ws, target, method) {
  const run = await runCli(INSPECTOR, ['--cli', ...target, ...method, '--format', 'json', '-q'], { env: ws.env });
  return { run, out: run.stdout.trim() ? jsonOut(run, `--cli ${target.join(' ')}`) : undefined };
}

const TOOLS_LIST = ['--method', 'tools/list'];
const blindWrite = (ws) => ['--method', 'tools/call', '--tool-name', 'write_file',
  '--tool-args-json', JSON.stringify({ path: ws.a, content: 'blind\n' })];
const readA = (ws) => ['--method', 'tools/call', '--tool-name', 'read_text_file',
  '--tool-args-json', JSON.stringify({ path: ws.a })];

test('the Inspector CLI starts fsguard node server.js DIR, with or without --, and the veto reaches it', async (t) => {
  const ws = formWorkspace(t);
  for (const target of [
    ['fsguard', 'node', SERVER_FS_SCRIPT, ws.dir],
    ['fsguard', '--', 'node', SERVER_FS_SCRIPT, ws.dir],
  ]) {
    const form = `--cli ${target.join(' ')}`;
    const list = await inspect(ws, target, TOOLS_LIST);
    assert.equal(list.run.code, 0, `${form}: tools/list: ${list.run.stderr}`);
    assert.ok(list.out.result.tools.some((x) => x.name === 'write_file'), `${form}: tools/list reaches the server`);
    const blind = await inspect(ws, target, blindWrite(ws));
    assertWriteVeto(blind.out?.result, 'not_read', ws.a, `${form}: blind write`);
    assert.equal(fs.readFileSync(ws.a, 'utf8'), ORIGINAL, `${form}: the file is unchanged`);
  }
});

test('the Inspector CLI passes a config to fsguard as -c F, as FSGUARD_CONFIG, or in its own --config file', async (t) => {
  const ws = formWorkspace(t);
  const inspectorConfig = ws.file('inspector.json');
  fs.writeFileSync(inspectorConfig, JSON.stringify({
    mcpServers: { fs: { command: 'fsguard', args: ['--config', ws.config, 'node', SERVER_FS_SCRIPT, ws.dir] } },
  }));
  for (const target of [
    ['fsguard', '-c', ws.config, 'node', SERVER_FS_SCRIPT, ws.dir],
    ['-e', `FSGUARD_CONFIG=${ws.config}`, 'fsguard', 'node', SERVER_FS_SCRIPT, ws.dir],
    ['--config', inspectorConfig, '--server', 'fs'],
  ]) {
    const form = `--cli ${target.join(' ')}`;
    const read = await inspect(ws, target, readA(ws));
    assert.equal(vetoCode(read.out?.result), 'outside_confinement',
      `${form}: confine_to from the config applies: ${read.run.stdout}\n${read.run.stderr}`);
  }
});

test("the Inspector CLI takes fsguard's --config for its own: --cli fsguard --config F … does not start", async (t) => {
  // This is why the forms above use -c or FSGUARD_CONFIG with the Inspector.
  const ws = formWorkspace(t);
  const target = ['fsguard', '--config', ws.config, 'node', SERVER_FS_SCRIPT, ws.dir];
  const { run } = await inspect(ws, target, TOOLS_LIST);
  assert.doesNotMatch(run.stdout, /write_file/, 'no server was reached');
  assert.match(run.stdout + run.stderr, /--config/, 'the Inspector names the option it took');
});

/**
 * `argv` run with a terminal as its stdin, stdout and stderr (util-linux
 * `script`), until `done(output)` or `ms`; then killed. The output as the
 * terminal showed it.
 */
async function inTerminal(argv, env, done, ms = 10_000) {
  const quoted = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qfec', quoted, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  const deadline = Date.now() + ms;
  while (!done(output) && Date.now() < deadline && child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGTERM');
  await new Promise((resolve) => { if (child.exitCode !== null) resolve(); else child.on('exit', resolve); });
  return output.replaceAll('\r', '');
}

test('fsguard started in a terminal says on stderr what it serves, to whom, and how it is meant to be used', async (t) => {
  const ws = formWorkspace(t);
  const command = [process.execPath, SERVER_FS_SCRIPT, ws.dir];
  const shown = await inTerminal([FSGUARD_BIN, ...command], cleanEnv(ws.env),
    (out) => out.includes('--help') && out.includes('running on stdio'));
  t.diagnostic(shown);
  assert.match(shown, new RegExp(`^fsguard: serving "${command.join(' ').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" to an MCP client on stdin`, 'm'),
    'it names the server it serves and its client');
  assert.match(shown, /stdin is a terminal, so no client is connected/);
  assert.match(shown, /put it in the client's config in front of the server command/);
  assert.match(shown, /fsguard --help/);
  assert.match(shown, /fsguard adopt finds the filesystem servers in your clients' configs/);

  // Started by a client (pipes), it says none of this.
  const client = new Client({ name: 'launch-forms', version: '0' });
  const transport = new StdioClientTransport({ command: FSGUARD_BIN, args: command, env: cleanEnv(ws.env), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => { stderr += chunk; });
  await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
  await client.close();
  assert.doesNotMatch(stderr, /terminal/, `no hint for a client:\n${stderr}`);
});

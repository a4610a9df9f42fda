// fsguard adopt on the configs of every client it knows, in a home directory
// of the test's own:
//  - a dry run shows a diff for each config and changes no byte;
//  - --apply rewrites each filesystem server's entry to start fsguard in front
//    of the same server, keeps the original beside each file, and leaves the
//    rest of each file as its client wrote it;
//  - each rewritten entry, started as its client starts it (the SDK's
//    StdioClientTransport, with the entry's command, args and env), is fsguard
//    in front of the real server-filesystem: a write of an existing file the
//    agent never read is vetoed and the file keeps its bytes;
//  - a second run finds nothing to do; --undo restores each file byte for byte;
//  - configs fsguard cannot rewrite whole are refused, saying why, unchanged.
//
// The configs of Claude Code, Codex and Gemini CLI here are fixtures in the
// exact shape each client's `mcp add` writes, with a server that runs without
// npx; adopt_real_clients.test.mjs runs the real clients' `mcp add` (pinned
// in tests/clients) and adopts what they wrote:
//  - Claude Code: `claude mcp add fs -- CMD ARGS` (the default, local scope)
//    adds projects[<cwd>].mcpServers.fs = {type: "stdio", command, args, env: {}}
//    to ~/.claude.json; `--scope user` adds the same under the top-level
//    mcpServers; `--scope project` writes .mcp.json in the project. Both are
//    written as JSON.stringify(value, null, 2).
//  - Codex: `codex mcp add --env K=V fs -- CMD ARGS` writes, through toml_edit and
//    keeping the rest of ~/.codex/config.toml, a [mcp_servers.fs] table with
//    command and args (one line) and a [mcp_servers.fs.env] table.
//  - Gemini CLI: `gemini mcp add -s user fs CMD ARGS` sets mcpServers.fs =
//    {command, args} in ~/.gemini/settings.json, indented by two spaces.
// Claude Desktop, Cursor and VS Code have no such command: their files have the
// shapes of configs/, with the server where fsguard is.
//
//   node --test --test-concurrency=1 adopt.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  FSGUARD_BIN, SERVER_FS_SCRIPT, TESTS_DIR, callTool, connect, makeWorkspace, vetoCode,
} from './lib/harness.mjs';

const FSGUARD = path.resolve(FSGUARD_BIN);
const SERVER = [process.execPath, SERVER_FS_SCRIPT];
const GITHUB = { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] };

const claudeStyle = (value) => JSON.stringify(value, null, 2);

/** A home directory with the configs of every client, and a project in it. */
function makeHome() {
  const ws = makeWorkspace({}, 'fsguard-adopt-');
  const home = ws.dir;
  const project = path.join(home, 'project');
  const serverArgs = [...SERVER.slice(1), project];
  const files = {
    '.claude.json': claudeStyle({
      numStartups: 4,
      installMethod: 'global',
      autoUpdates: true,
      tipsHistory: { 'new-user-warmup': 1 },
      mcpServers: { github: { type: 'stdio', ...GITHUB, env: {} } },
      projects: {
        [project]: {
          allowedTools: [],
          history: [],
          mcpContextUris: [],
          mcpServers: { fs: { type: 'stdio', command: SERVER[0], args: serverArgs, env: {} } },
          enabledMcpjsonServers: [],
          disabledMcpjsonServers: [],
          hasTrustDialogAccepted: false,
          lastTotalWebSearchRequests: 0,
        },
      },
      userID: 'a1b2c3',
    }),
    'project/.mcp.json': claudeStyle({
      mcpServers: { files: { type: 'stdio', command: SERVER[0], args: serverArgs, env: {} } },
    }),
    '.codex/config.toml': [
      'model = "gpt-5-codex"',
      'model_reasoning_effort = "high"',
      '',
      '[projects."/home/someone/else"]',
      'trust_level = "trusted"',
      '',
      '[mcp_servers.fs]',
      `command = ${JSON.stringify(SERVER[0])}`,
      `args = [${serverArgs.map((a) => JSON.stringify(a)).join(', ')}]`,
      '',
      '[mcp_servers.fs.env]',
      'FSGUARD_MODE = "enforce"',
      '',
    ].join('\n'),
    '.gemini/settings.json': claudeStyle({
      security: { auth: { selectedType: 'oauth-personal' } },
      mcpServers: { fs: { command: SERVER[0], args: serverArgs } },
    }),
    '.config/Claude/claude_desktop_config.json': `${claudeStyle({
      mcpServers: { filesystem: { command: SERVER[0], args: serverArgs, env: { FSGUARD_MODE: 'enforce' } } },
    })}\n`,
    '.cursor/mcp.json': `${claudeStyle({
      mcpServers: { github: GITHUB, fs: { command: SERVER[0], args: serverArgs } },
    })}\n`,
    '.config/Code/User/mcp.json': `${JSON.stringify({
      servers: { fs: { type: 'stdio', command: SERVER[0], args: serverArgs } },
      inputs: [],
    }, null, '\t')}\n`,
  };
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'notes.txt'), 'the original notes\n');
  for (const [relative, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(home, relative)), { recursive: true });
    fs.writeFileSync(path.join(home, relative), text);
  }
  fs.chmodSync(path.join(home, '.claude.json'), 0o600);
  const original = Object.fromEntries(Object.keys(files).map((relative) => [relative, files[relative]]));
  return { ...ws, home, project, serverArgs, original, at: (relative) => path.join(home, relative) };
}

/** Runs `fsguard adopt ...args` as the user of `home`, in `cwd`. */
function adopt(home, cwd, args = []) {
  const env = { PATH: process.env.PATH, HOME: home };
  const run = spawnSync(FSGUARD, ['adopt', ...args], { cwd, env, encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const read = (file) => fs.readFileSync(file, 'utf8');

/** The entry each JSON config should hold once adopted: fsguard -- the same command. */
function guardedEntry(entry) {
  const guarded = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'command') {
      guarded.command = FSGUARD;
      guarded.args = ['--', entry.command, ...(entry.args ?? [])];
    } else if (key !== 'args') {
      guarded[key] = value;
    }
  }
  return guarded;
}

/** Where the filesystem server of each JSON config is: [relative file, path of keys]. */
function jsonEntries(h) {
  return [
    ['.claude.json', ['projects', h.project, 'mcpServers', 'fs']],
    ['project/.mcp.json', ['mcpServers', 'files']],
    ['.gemini/settings.json', ['mcpServers', 'fs']],
    ['.config/Claude/claude_desktop_config.json', ['mcpServers', 'filesystem']],
    ['.cursor/mcp.json', ['mcpServers', 'fs']],
    ['.config/Code/User/mcp.json', ['servers', 'fs']],
  ];
}

const dig = (value, keys) => keys.reduce((at, key) => at[key], value);

/** The layout of `text` as JSON.stringify would write `value` (indent, final newline). */
function asWritten(value, text) {
  const indent = /\n(\s+)"/.exec(text)[1];
  return JSON.stringify(value, null, indent) + (text.endsWith('\n') ? '\n' : '');
}

/** The Codex table as it should be once adopted. */
function guardedCodex(h) {
  return h.original['.codex/config.toml']
    .replace(`command = ${JSON.stringify(SERVER[0])}`, `command = ${JSON.stringify(FSGUARD)}`)
    .replace('args = [', `args = ["--", ${JSON.stringify(SERVER[0])}, `);
}

/** The command, args and env of the Codex table `name` (the one-line form fsguard writes). */
function codexEntry(text, name) {
  const table = text.slice(text.indexOf(`[mcp_servers.${name}]`));
  const command = JSON.parse(/^command = (.*)$/m.exec(table)[1]);
  const args = JSON.parse(/^args = (\[.*\])$/m.exec(table)[1]);
  const env = { FSGUARD_MODE: /^FSGUARD_MODE = "(.*)"$/m.exec(table)[1] };
  return { command, args, env };
}

/** Starts `entry` as a client would and checks that a blind write is vetoed. */
async function assertGuards(entry, h) {
  const session = await connect({
    viaGuard: false, upstream: [entry.command, ...entry.args], env: entry.env ?? {}, cwd: h.project,
  });
  try {
    const notes = path.join(h.project, 'notes.txt');
    const result = await callTool(session.client, 'write_file', { path: notes, content: 'blind\n' });
    assert.equal(vetoCode(result), 'not_read', JSON.stringify(result));
    assert.equal(read(notes), 'the original notes\n');
  } finally {
    await session.close();
  }
}

test('a dry run shows each change as a diff and changes nothing', (t) => {
  const h = makeHome();
  t.after(h.cleanup);
  const run = adopt(h.home, h.project);
  assert.equal(run.status, 0, run.stderr + run.stdout);
  for (const relative of Object.keys(h.original)) {
    const file = h.at(relative);
    assert.match(run.stdout, new RegExp(`^--- ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
      `a diff of ${relative}`);
    assert.equal(read(file), h.original[relative], `${relative} is unchanged`);
    assert.equal(fs.existsSync(`${file}.fsguard-backup`), false);
  }
  assert.match(run.stdout, /\.claude\.json: 1 filesystem server to start through fsguard: projects\[".*"\]\.mcpServers\.fs$/m);
  assert.match(run.stdout, /^\+command = ".*fsguard"$/m, "the Codex table's new command");
  assert.match(run.stdout, /Nothing was changed\. To make these changes, run: fsguard adopt --apply/);
  // Only the entries' lines change: the github servers are not in any hunk.
  assert.doesNotMatch(run.stdout, /^[-+].*server-github/m);
});

test('--apply puts fsguard in front of every filesystem server, the client runs it, --undo restores', async (t) => {
  const h = makeHome();
  t.after(h.cleanup);
  const applied = adopt(h.home, h.project, ['--apply']);
  assert.equal(applied.status, 0, applied.stderr + applied.stdout);
  assert.match(applied.stdout, /Restart each client/);

  for (const [relative, keys] of jsonEntries(h)) {
    const before = JSON.parse(h.original[relative]);
    const expected = structuredClone(before);
    const parent = dig(expected, keys.slice(0, -1));
    parent[keys.at(-1)] = guardedEntry(dig(before, keys));
    // The file as its client would have written it with the entry changed.
    assert.equal(read(h.at(relative)), asWritten(expected, h.original[relative]), relative);
    assert.equal(read(`${h.at(relative)}.fsguard-backup`), h.original[relative], `${relative}'s backup`);
  }
  assert.equal(read(h.at('.codex/config.toml')), guardedCodex(h));
  assert.equal(fs.statSync(h.at('.claude.json')).mode & 0o777, 0o600, 'the permissions are kept');

  // Each client's entry, started as that client starts it.
  const claude = JSON.parse(read(h.at('.claude.json'))).projects[h.project].mcpServers.fs;
  const gemini = JSON.parse(read(h.at('.gemini/settings.json'))).mcpServers.fs;
  const codex = codexEntry(read(h.at('.codex/config.toml')), 'fs');
  for (const entry of [claude, gemini, codex]) {
    assert.equal(entry.command, FSGUARD);
    await assertGuards(entry, h);
  }

  const again = adopt(h.home, h.project, ['--apply']);
  assert.equal(again.status, 0, again.stderr + again.stdout);
  assert.match(again.stdout, /\.claude\.json: every filesystem server starts fsguard already/);
  assert.match(again.stdout, /^Nothing to change\.$/m);

  const undone = adopt(h.home, h.project, ['--undo']);
  assert.equal(undone.status, 0, undone.stderr + undone.stdout);
  for (const relative of Object.keys(h.original)) {
    assert.equal(read(h.at(relative)), h.original[relative], `${relative} is restored byte for byte`);
    assert.equal(fs.existsSync(`${h.at(relative)}.fsguard-backup`), false, `${relative}'s backup is gone`);
  }
  assert.equal(fs.statSync(h.at('.claude.json')).mode & 0o777, 0o600);
});

test('a config with a filesystem server fsguard cannot rewrite is refused unchanged, saying why', (t) => {
  const h = makeHome();
  t.after(h.cleanup);
  const file = h.at('two.json');
  const text = claudeStyle({
    mcpServers: {
      fs: { command: SERVER[0], args: h.serverArgs },
      again: { command: `npx -y @modelcontextprotocol/server-filesystem ${h.project}` },
    },
  });
  fs.writeFileSync(file, text);
  const run = adopt(h.home, h.project, ['--apply', file]);
  assert.equal(run.status, 1, run.stdout);
  assert.match(run.stdout, /two\.json: REFUSED: mcpServers\.again starts a filesystem server, but its command .* is a whole command line in one string/);
  assert.match(run.stderr, /^fsguard: error: adopt: 1 config was refused/m);
  assert.equal(read(file), text);
  assert.equal(fs.existsSync(`${file}.fsguard-backup`), false);

  const unknown = h.at('other.json');
  fs.writeFileSync(unknown, '{"servers": 3, "name": "mine"}');
  const shape = adopt(h.home, h.project, [unknown]);
  assert.equal(shape.status, 1);
  assert.match(shape.stdout, /other\.json: REFUSED: it holds no list of MCP servers in a shape fsguard knows/);

  const commented = h.at('.cursor/mcp.json');
  const cursor = h.original['.cursor/mcp.json'];
  const fsArgs = cursor.lastIndexOf('"args": [') + '"args": ['.length; // the fs entry's, after github's
  const withComment = `${cursor.slice(0, fsArgs)} // the server${cursor.slice(fsArgs)}`;
  fs.writeFileSync(commented, withComment);
  const comments = adopt(h.home, h.project, ['--apply', commented]);
  assert.equal(comments.status, 1);
  assert.match(comments.stdout, /mcp\.json: REFUSED: mcpServers\.fs: its args hold comments, which rewriting them would lose/);
  assert.equal(read(commented), withComment);
});

test('while one config is refused, --apply changes none, so no client keeps an unguarded server', (t) => {
  const h = makeHome();
  t.after(h.cleanup);
  // Claude Code reads this beside ~/.claude.json: adopting only the other
  // would leave it one guarded and one unguarded filesystem server.
  const project = h.at('project/.mcp.json');
  const refused = claudeStyle({
    mcpServers: { files: { command: `npx -y @modelcontextprotocol/server-filesystem ${h.project}` } },
  });
  fs.writeFileSync(project, refused);
  const run = adopt(h.home, h.project, ['--apply']);
  assert.equal(run.status, 1, run.stdout);
  assert.match(run.stdout, /\.mcp\.json: REFUSED: mcpServers\.files starts a filesystem server/);
  assert.match(run.stdout, /^Nothing was changed: fsguard adopt changes no config while another is refused/m);
  for (const relative of Object.keys(h.original)) {
    const expected = relative === 'project/.mcp.json' ? refused : h.original[relative];
    assert.equal(read(h.at(relative)), expected, `${relative} is unchanged`);
    assert.equal(fs.existsSync(`${h.at(relative)}.fsguard-backup`), false);
  }
  // Named on its own, a config is adopted.
  const named = adopt(h.home, h.project, ['--apply', h.at('.claude.json')]);
  assert.equal(named.status, 0, named.stdout);
  assert.match(named.stdout, /\.claude\.json: adopted/);
});

test("comments and trailing commas elsewhere in a config are kept (VS Code's settings.json)", (t) => {
  const h = makeHome();
  t.after(h.cleanup);
  const settings = h.at('.config/Code/User/settings.json');
  const text = [
    '{',
    '    // the editor',
    '    "editor.fontSize": 13,',
    '    "mcp": {',
    '        "servers": {',
    '            /* the project\'s files */',
    `            "fs": { "command": ${JSON.stringify(SERVER[0])}, "args": ${JSON.stringify(h.serverArgs)} },`,
    '        },',
    '    },',
    '}',
    '',
  ].join('\n');
  fs.writeFileSync(settings, text);
  const run = adopt(h.home, h.project, ['--apply', settings]);
  assert.equal(run.status, 0, run.stdout + run.stderr);
  const expected = text
    .replace(`"command": ${JSON.stringify(SERVER[0])}`, `"command": ${JSON.stringify(FSGUARD)}`)
    .replace(`"args": ${JSON.stringify(h.serverArgs)}`, `"args": ${JSON.stringify(['--', SERVER[0], ...h.serverArgs])}`);
  assert.equal(read(settings), expected);
  assert.equal(adopt(h.home, h.project, ['--undo', settings]).status, 0);
  assert.equal(read(settings), text);
});

test('--undo of a config the client rewrote since puts the entries back in it', (t) => {
  const h = makeHome();
  t.after(h.cleanup);
  const gemini = h.at('.gemini/settings.json');
  assert.equal(adopt(h.home, h.project, ['--apply', gemini]).status, 0);
  // Gemini CLI writes its settings again, another key changed.
  fs.writeFileSync(gemini, read(gemini).replace('"oauth-personal"', '"gemini-api-key"'));
  const undone = adopt(h.home, h.project, ['--undo', gemini]);
  assert.equal(undone.status, 0, undone.stdout);
  assert.match(undone.stdout, /settings\.json: it changed since fsguard adopt wrote it, so rather than .* its entries were put back as they were: mcpServers\.fs/);
  assert.equal(read(gemini), h.original['.gemini/settings.json'].replace('"oauth-personal"', '"gemini-api-key"'));
  assert.equal(fs.existsSync(`${gemini}.fsguard-backup`), false);

  // An entry removed by hand since: nothing to put back, so nothing is touched.
  assert.equal(adopt(h.home, h.project, ['--apply', gemini]).status, 0);
  const removed = claudeStyle({ security: { auth: { selectedType: 'oauth-personal' } }, mcpServers: {} });
  fs.writeFileSync(gemini, removed);
  const refused = adopt(h.home, h.project, ['--undo', gemini]);
  assert.equal(refused.status, 1, refused.stdout);
  assert.match(refused.stdout, /settings\.json: REFUSED: it changed since fsguard adopt wrote it, and no entry in it starts/);
  assert.equal(read(gemini), removed);
  assert.equal(fs.existsSync(`${gemini}.fsguard-backup`), true);

  // Its backup blocks another --apply until it is dealt with.
  fs.writeFileSync(gemini, h.original['.gemini/settings.json']);
  const blocked = adopt(h.home, h.project, ['--apply', gemini]);
  assert.equal(blocked.status, 1, blocked.stdout);
  assert.match(blocked.stdout, /fsguard-backup is there from an earlier fsguard adopt/);
  assert.equal(read(gemini), h.original['.gemini/settings.json']);
});

test("the configs fsguard ships (configs/) start fsguard already, so adopt leaves them", (t) => {
  const h = makeHome();
  t.after(h.cleanup);
  const shipped = path.resolve(TESTS_DIR, '..', '..', 'configs');
  const names = ['claude-code.mcp.json', 'claude_desktop_config.json', 'cursor.mcp.json',
    'vscode.mcp.json', 'codex.config.toml'];
  const copies = names.map((name) => {
    const copy = path.join(h.home, name);
    fs.copyFileSync(path.join(shipped, name), copy);
    return copy;
  });
  const run = adopt(h.home, h.project, ['--apply', ...copies]);
  assert.equal(run.status, 0, run.stdout + run.stderr);
  for (const [index, copy] of copies.entries()) {
    assert.match(run.stdout, new RegExp(`${names[index].replace(/\./g, '\\.')}: every filesystem server starts fsguard already`));
    assert.equal(read(copy), read(path.join(shipped, names[index])));
  }
});

test('fsguard adopt takes only --apply, --undo and files, and not both', () => {
  const both = spawnSync(FSGUARD, ['adopt', '--apply', '--undo'], { encoding: 'utf8' });
  assert.equal(both.status, 2);
  assert.match(both.stderr, /--apply and --undo exclude each other/);
  const unknown = spawnSync(FSGUARD, ['adopt', '--force'], { encoding: 'utf8' });
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /fsguard adopt: unknown option "--force"/);
});

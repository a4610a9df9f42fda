// The real clients whose `mcp add` commands write the configs fsguard is
// wired into (adopt_real_clients.test.mjs, launch_forms.test.mjs): Claude
// Code, Codex and Gemini CLI, pinned in tests/clients/package.json; how to run
// one in a home directory of the test's own, offline; and the npm cache in
// which scripts/setup.sh installed the pinned server for npx.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { REQUEST_TIMEOUT_MS, TESTS_DIR, killTree } from './harness.mjs';

const CLIENTS_DIR = path.resolve(TESTS_DIR, '..', 'clients');
const MODULES = path.join(CLIENTS_DIR, 'node_modules');

/**
 * The npm cache whose _npx folder holds the pinned server-filesystem
 * (scripts/setup.sh --for test primes it), for npm_config_cache.
 */
export const NPX_CACHE = path.join(CLIENTS_DIR, 'npm-cache');

const SERVER_PACKAGE = '@modelcontextprotocol/server-filesystem';
/** The pinned server as npx takes it: `@modelcontextprotocol/server-filesystem@<version>`. */
export const SERVER_SPEC = `${SERVER_PACKAGE}@${
  JSON.parse(fs.readFileSync(path.join(TESTS_DIR, 'package.json'), 'utf8')).dependencies[SERVER_PACKAGE]}`;

/**
 * Each client's command line, run with the system node. Claude Code's own
 * `claude` is a placeholder until its install script copies the native binary
 * in; tests/clients installs without scripts, so it runs through the
 * package's cli-wrapper.cjs, which starts the same native binary.
 */
export const CLIENTS = {
  claude: [process.execPath, path.join(MODULES, '@anthropic-ai/claude-code/cli-wrapper.cjs')],
  codex: [process.execPath, path.join(MODULES, '@openai/codex/bin/codex.js')],
  gemini: [process.execPath, path.join(MODULES, '@google/gemini-cli/bundle/gemini.js')],
};

/** Why the real clients cannot run here, or undefined when they can. */
export function clientsMissing() {
  const absent = Object.entries(CLIENTS).filter(([, argv]) => !fs.existsSync(argv[1])).map(([name]) => name);
  if (absent.length > 0) {
    return `${absent.join(', ')} not installed in tests/clients/node_modules (scripts/setup.sh --for test)`;
  }
  if (!fs.existsSync(path.join(NPX_CACHE, '_npx'))) {
    return 'the npx cache tests/clients/npm-cache is not primed (scripts/setup.sh --for test)';
  }
  return undefined;
}

/**
 * The environment of a client and the servers it starts: `home` as HOME, PATH
 * (with `binDir` first, where a test links `fsguard`), and npm offline on the
 * primed cache, so that `npx -y SERVER_SPEC` reaches no network.
 */
export function offlineEnv(home, binDir) {
  const env = {
    PATH: [binDir, process.env.PATH].filter(Boolean).join(path.delimiter),
    HOME: home,
    npm_config_cache: NPX_CACHE,
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    NO_COLOR: '1',
  };
  for (const key of ['LANG', 'TMPDIR']) if (process.env[key]) env[key] = process.env[key];
  return env;
}

/** A client run must end within this; gemini's start takes about 7 s on a busy machine. */
const CLIENT_TIMEOUT_MS = 45_000;

/**
 * Runs client `name` (a key of CLIENTS) with `args` in `cwd` and `env`, stdin
 * closed, to its exit. Returns {code, stdout, stderr}; a run that does not end
 * in time is killed and fails with both streams.
 */
export function runClient(name, args, { cwd, env }) {
  const [command, ...pre] = CLIENTS[name];
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...pre, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const timer = setTimeout(() => {
      killTree(child.pid);
      reject(new Error(`${name} ${args.join(' ')} did not exit within ${CLIENT_TIMEOUT_MS} ms`
        + `\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
    }, CLIENT_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs `gemini mcp list` until `done(output)` holds for its output (both
 * streams), up to three times; returns the last output. Gemini gives each
 * server 5 s to connect there, and `npx` with fsguard in front takes up to 3 s
 * of it on a loaded 2-core machine: a miss is retried, not taken for a failure.
 */
export async function geminiListUntil(done, { cwd, env }) {
  let shown = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const run = await runClient('gemini', ['mcp', 'list'], { cwd, env });
    shown = run.stdout + run.stderr;
    if (run.code === 0 && done(shown)) break;
  }
  return shown;
}

/**
 * Starts a stored stdio entry ({command, args, env}) as its client does, in
 * `cwd` with `env` (plus the entry's own), and connects the SDK client to it.
 * Returns {client, close()}; the process tree is killed on close.
 */
export async function startEntry(entry, { cwd, env }) {
  const transport = new StdioClientTransport({
    command: entry.command, args: entry.args ?? [], cwd, env: { ...env, ...(entry.env ?? {}) }, stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr.on('data', (chunk) => { stderr += chunk.toString('utf8'); });
  const client = new Client({ name: 'fsguard-real-clients', version: '0.0.0' }, { capabilities: {} });
  const close = async () => {
    const pid = transport.pid;
    try { await client.close(); } catch { /* already closed */ }
    killTree(pid);
  };
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS * 3 });
  } catch (err) {
    await close();
    err.message += `\n--- stderr of ${entry.command} ${(entry.args ?? []).join(' ')} ---\n${stderr}`;
    throw err;
  }
  return { client, close };
}

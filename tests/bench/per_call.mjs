// What one call costs fsguard, counted rather than timed: instructions
// (callgrind) and syscalls (strace) per call, for each kind of call the
// performance goals name.
//
//   node tests/bench/per_call.mjs [--kinds K,K] [--no-strace] [--footprint] [--relay]
//                                 [--check K=MAX,...]
//
// Kinds:
//   read4k  a guarded read_text_file of a 4 KiB file
//   list    an unguarded list_directory of a directory of 20 files
//   rw4k    a 4 KiB read_text_file and a write_file of the same file
//   read1m  a read_text_file of a 1 MiB file
//
// For each kind it replays a fixed transcript (initialize, tools/list, then
// the calls, one at a time, each awaited) through fsguard in front of the
// pinned server-filesystem, once with N calls and once with 2N, and reports
// (count(2N) - count(N)) / N: start-up and shutdown cancel out. Every call
// is on a file of its own, with a text of its own (as an agent's files are;
// a text fsguard keeps already would not be decoded again), written more
// than 2 s before the first call, so
// no check falls in the racy window. Only fsguard is counted: callgrind runs
// with --trace-children=no; strace follows fsguard's fork only until the
// upstream's execve.
//
// --footprint also counts, per call, the 64-byte lines of code and of data
// that a 16 KiB cache misses (callgrind's cache simulation; 4-way I1 and
// D1). Between two of fsguard's wake-ups the client and the server run on
// the same 2 cores and evict much of its cache, so what a call costs in time
// follows how much code and data it touches more than how many instructions
// it runs; a small simulated cache counts that the same way on every run.
// --relay adds the same counts for the bare byte relay (fsguard_byte_relay),
// for scale.
//
// --check fails (exit 1) when a kind's instructions per call exceed MAX.
// Prints a table to stdout; progress to stderr.
//
// Environment: FSGUARD_BIN (default build/fsguard), FSGUARD_RELAY_BIN
// (default build/tests/bench/fsguard_byte_relay), FSGUARD_VALGRIND
// (default valgrind), FSGUARD_STRACE (default strace),
// FSGUARD_PER_CALL_N=K=N,... to change how many calls a kind makes,
// FSGUARD_PER_CALL_KEEP=DIR to keep the callgrind outputs (callgrind_annotate).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { oneAtATime, replay, requestMaker, text } from './calls.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SERVER = path.join(ROOT, 'tests/integration/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const FSGUARD = process.env.FSGUARD_BIN || path.join(ROOT, 'build/fsguard');
const RELAY = process.env.FSGUARD_RELAY_BIN || path.join(ROOT, 'build/tests/bench/fsguard_byte_relay');
const VALGRIND = process.env.FSGUARD_VALGRIND || 'valgrind';
const STRACE = process.env.FSGUARD_STRACE || 'strace';
const KiB = 1024;
const MiB = 1024 * 1024;

// The goals of issue #16 (instructions and syscalls per call).
const KINDS = {
  read4k: { label: 'guarded 4 KiB read_text_file', n: 40, instructions: 20_000, syscalls: 12 },
  list: { label: 'unguarded list_directory', n: 40, instructions: 8_000, syscalls: 8 },
  rw4k: { label: '4 KiB read + write pair', n: 20, instructions: 45_000, syscalls: null },
  read1m: { label: '1 MiB read_text_file', n: 5, instructions: 2_500_000, syscalls: null },
};

const log = (text) => process.stderr.write(`per_call: ${text}\n`);
function fail(text) {
  process.stderr.write(`per_call: error: ${text}\n`);
  process.exit(1);
}

// ---------------------------------------------------------------- options

const options = { kinds: Object.keys(KINDS), strace: true, footprint: false, relay: false, check: {} };
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i];
  const value = () => (i + 1 < process.argv.length ? process.argv[++i] : fail(`${arg} needs a value`));
  if (arg === '--kinds') options.kinds = value().split(',');
  else if (arg === '--no-strace') options.strace = false;
  else if (arg === '--footprint') options.footprint = true;
  else if (arg === '--relay') options.relay = true;
  else if (arg === '--check') {
    for (const pair of value().split(',')) {
      const [kind, max] = pair.split('=');
      if (!KINDS[kind] || !/^\d+$/.test(max ?? '')) fail(`--check wants KIND=MAX, not '${pair}'`);
      options.check[kind] = Number(max);
    }
  } else fail(`unknown argument: ${arg}`);
}
for (const kind of options.kinds) if (!KINDS[kind]) fail(`unknown kind '${kind}' (${Object.keys(KINDS).join(', ')})`);
for (const pair of (process.env.FSGUARD_PER_CALL_N || '').split(',').filter(Boolean)) {
  const [kind, n] = pair.split('=');
  if (KINDS[kind] && /^\d+$/.test(n)) KINDS[kind].n = Number(n);
}
if (!fs.existsSync(FSGUARD)) fail(`fsguard not found at ${FSGUARD} (build it, or set FSGUARD_BIN)`);
if (options.relay && !fs.existsSync(RELAY)) fail(`the byte relay is not at ${RELAY} (build it, or set FSGUARD_RELAY_BIN)`);
if (!fs.existsSync(SERVER)) fail(`server-filesystem not found at ${SERVER} (run scripts/setup.sh)`);

// ---------------------------------------------------------------- files

const perCallText = (size, seed) => text(size, `per-call ${seed}`);

const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fsguard-per-call-')));
process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }));

// One directory per run (kind, tool, count), so no run sees another's writes.
function populate(dir, kind, count) {
  fs.mkdirSync(dir, { recursive: true });
  if (kind === 'list') {
    for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(dir, `e${i}.txt`), 'x');
    return;
  }
  // Each file its own text, as an agent's files are: a text fsguard has
  // seen before would be found among the texts it keeps.
  const size = kind === 'read1m' ? MiB : 4 * KiB;
  for (let i = 0; i < count; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), perCallText(size, `${kind} ${i}`));
}

// The requests of a run of `count` calls of `kind` in `dir`.
function transcript(kind, dir, count) {
  const { request, call, initialize } = requestMaker();
  const lines = [
    initialize('fsguard-per-call'),
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    request('tools/list', {}),
  ];
  for (let i = 0; i < count; i++) {
    const file = path.join(dir, `f${i}.txt`);
    if (kind === 'list') lines.push(call('list_directory', { path: dir }));
    else lines.push(call('read_text_file', { path: file }));
    // Each write its own text too, as an agent's are.
    if (kind === 'rw4k') lines.push(call('write_file', { path: file, content: perCallText(4 * KiB, `written ${i}`) }));
  }
  return lines;
}

// ---------------------------------------------------------------- one run

// Replays `requests` through `command` (fsguard, wrapped), one at a time.
// Fails on a call that errs or is vetoed.
async function replayOneAtATime(command, args, requests, label) {
  const refused = await replay(command, args, oneAtATime(requests), label);
  if (refused > 0) throw new Error(`${label}: ${refused} calls were vetoed`);
}

const fsguardArgs = (dir) => [FSGUARD, '--mode', 'enforce', '--', process.execPath, SERVER, dir];
const relayArgs = (dir) => [RELAY, '--', process.execPath, SERVER, dir];

// The cache --footprint simulates (see the top of this file); LL is this
// machine's L2 and is not reported.
const SMALL_CACHE = ['--cache-sim=yes', '--I1=16384,4,64', '--D1=16384,4,64', '--LL=2097152,16,64'];

// Callgrind's totals for one run of `commandArgs`, by event: Ir
// (instructions) and, with --footprint, I1mr (code lines missed), D1mr and
// D1mw (data lines missed on reads and on writes).
async function callgrindTotals(commandArgs, dir, requests, label) {
  const out = path.join(dir, '..', `${path.basename(dir)}.callgrind`);
  await replayOneAtATime(VALGRIND, ['--tool=callgrind', '--trace-children=no', `--callgrind-out-file=${out}`,
    ...(options.footprint ? SMALL_CACHE : []), ...commandArgs], requests, label);
  const text = fs.readFileSync(out, 'utf8');
  const events = text.match(/^events:\s*(.+)$/m);
  const summary = text.match(/^summary:\s*(.+)$/m);
  if (!events || !summary) fail(`${label}: no events or summary line in ${out}`);
  if (process.env.FSGUARD_PER_CALL_KEEP) fs.copyFileSync(out, path.join(process.env.FSGUARD_PER_CALL_KEEP, path.basename(out)));
  const values = summary[1].trim().split(/\s+/).map(Number);
  return Object.fromEntries(events[1].trim().split(/\s+/).map((name, i) => [name, values[i] ?? 0]));
}

// Syscalls made by fsguard's process (all its threads), not by the upstream
// it starts: strace follows the fork and detaches at the upstream's execve.
async function syscalls(dir, requests, label) {
  const prefix = path.join(dir, '..', `${path.basename(dir)}.strace`);
  await replayOneAtATime(STRACE, ['-f', '-ff', '-qq', '-b', 'execve', '-o', prefix, ...fsguardArgs(dir)], requests, label);
  const counts = new Map();
  for (const name of fs.readdirSync(path.dirname(prefix))) {
    if (!name.startsWith(path.basename(prefix) + '.')) continue;
    const lines = fs.readFileSync(path.join(path.dirname(prefix), name), 'utf8').split('\n');
    for (const line of lines) {
      const match = line.match(/^([a-z_0-9]+)\(/); // "<... resumed>" lines are the same call
      if (match) counts.set(match[1], (counts.get(match[1]) ?? 0) + 1);
    }
  }
  return counts;
}

// ---------------------------------------------------------------- the runs

const tools = ['cg', ...(options.relay ? ['relay'] : []), ...(options.strace ? ['st'] : [])];
const results = {};
const relayResults = {};
for (const kind of options.kinds) {
  const { n } = KINDS[kind];
  for (const tool of tools) for (const count of [n, 2 * n]) populate(path.join(work, `${kind}-${count}-${tool}`), kind, count);
}
// Every file is older than fsguard's 2 s racy window before the first call.
await new Promise((resolve) => setTimeout(resolve, 2200));

for (const kind of options.kinds) {
  const { n } = KINDS[kind];
  const run = async (count, tool) => {
    const dir = path.join(work, `${kind}-${count}-${tool}`);
    const requests = transcript(kind, dir, count);
    const label = `${kind} x${count} (${{ cg: 'callgrind', relay: 'callgrind, byte relay', st: 'strace' }[tool]})`;
    log(label);
    if (tool === 'st') return syscalls(dir, requests, label);
    return callgrindTotals(tool === 'relay' ? relayArgs(dir) : fsguardArgs(dir), dir, requests, label);
  };
  // Callgrind's counts per call: the difference of the 2N and N runs, over N.
  const perCall = async (tool) => {
    const [twice, once] = [await run(2 * n, tool), await run(n, tool)];
    const per = (event) => (event in twice ? Math.round((twice[event] - once[event]) / n) : null);
    return { n, instructions: per('Ir'), codeMisses: per('I1mr'), dataMisses: options.footprint ? per('D1mr') + per('D1mw') : null };
  };
  const result = await perCall('cg');
  if (options.relay) relayResults[kind] = await perCall('relay');
  if (options.strace) {
    const [once, twice] = [await run(n, 'st'), await run(2 * n, 'st')];
    const per = {};
    for (const [name, count] of twice) {
      const diff = (count - (once.get(name) ?? 0)) / n;
      if (Math.abs(diff) >= 0.05) per[name] = Math.round(diff * 10) / 10;
    }
    result.syscalls = Math.round(Object.values(per).reduce((a, b) => a + b, 0) * 10) / 10;
    result.syscallsByName = per;
  }
  results[kind] = result;
}

// ---------------------------------------------------------------- report

const number = (value) => (value == null ? '–' : value.toLocaleString('en-US'));
const footprintHead = options.footprint ? ' code lines missed | data lines missed |' : '';
const rows = [
  `| call | calls (N, 2N) | instructions | target | syscalls | target |${footprintHead}`,
  `|---|---|---|---|---|---|${options.footprint ? '---|---|' : ''}`,
];
const footprintCells = (result) => (options.footprint ? ` ${number(result.codeMisses)} | ${number(result.dataMisses)} |` : '');
for (const kind of options.kinds) {
  const goal = KINDS[kind];
  const result = results[kind];
  const mark = (value, target) => (target == null || value == null ? '' : value <= target ? ' (met)' : ' (not met)');
  rows.push(`| ${goal.label} | ${result.n}, ${2 * result.n} | ${number(result.instructions)}${mark(result.instructions, goal.instructions)} `
    + `| ≤ ${number(goal.instructions)} | ${number(result.syscalls)}${mark(result.syscalls, goal.syscalls)} `
    + `| ${goal.syscalls == null ? '–' : `≤ ${goal.syscalls}`} |${footprintCells(result)}`);
}
for (const kind of options.relay ? options.kinds : []) {
  const result = relayResults[kind];
  rows.push(`| ${KINDS[kind].label}, byte relay | ${result.n}, ${2 * result.n} | ${number(result.instructions)} | – | – | – |${footprintCells(result)}`);
}
process.stdout.write(`${rows.join('\n')}\n`);
if (options.strace) {
  for (const kind of options.kinds) {
    const parts = Object.entries(results[kind].syscallsByName).sort((a, b) => b[1] - a[1]).map(([name, count]) => `${name} ${count}`);
    process.stdout.write(`${kind} syscalls per call: ${parts.join(', ')}\n`);
  }
}
let failed = false;
for (const [kind, max] of Object.entries(options.check)) {
  const measured = results[kind]?.instructions;
  if (measured == null) fail(`--check ${kind}: that kind was not measured`);
  if (measured > max) {
    process.stderr.write(`per_call: FAIL: ${kind}: ${measured} instructions per call is over ${max}\n`);
    failed = true;
  }
}
process.exitCode = failed ? 1 : 0;

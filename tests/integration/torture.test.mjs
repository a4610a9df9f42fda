// Change-detection torture: the real fsguard in front of the real server-filesystem,
// driven by the official SDK client, while a separate writer PROCESS
// (lib/external-writer.mjs) changes the files at random moments.
//
//   node --test --test-concurrency=1 torture.test.mjs   (FSGUARD_BIN=/path/to/fsguard)
//
// Environment:
//   FSGUARD_TORTURE_CYCLES  read/write cycles of the main test (default 10000)
//   FSGUARD_TORTURE_RACES   rounds of the write-vs-external-change race (default 400)
//   FSGUARD_TORTURE_SEED    seed of the random choices (default: random, printed)
//
// Ground truth never comes from timing guesses. In every cycle the test knows the
// exact bytes the agent last saw (what its read returned, or what its own last
// successful write put there) and the exact bytes on disk when its write_file is
// sent (the writer reads them back after mutating and acknowledges before the
// write goes out). The write must be vetoed if and only if they differ. The only
// allowance is for cycles whose mutation overlapped the read itself: fsguard may
// then refuse conservatively (changed_during_read), and that is counted apart;
// the overlap is measured on CLOCK_MONOTONIC, which both processes share.
//
// Cycle modes (one worker per file, all workers on one session, so calls interleave):
//   sequential  read, then mutate (writer acknowledges), then write
//   concurrent  read and mutate sent together, the writer firing after a random
//               delay, so the mutation lands before, during or after the read
//   chained     no read: the agent's own previous (allowed) write is the baseline
//   cold        sequential, on a file left alone past fsguard's 2 s racy window,
//               so the record is one its stat fast path may vouch for

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { killTree, openSession, textOf, vetoCode, sleep } from './lib/harness.mjs';

const WRITER_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib', 'external-writer.mjs');

function envInt(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

const CYCLES = envInt('FSGUARD_TORTURE_CYCLES', 10_000);
const RACES = envInt('FSGUARD_TORTURE_RACES', 400);
const SEED = envInt('FSGUARD_TORTURE_SEED', crypto.randomInt(2 ** 31));

const HOT_FILES = 8;   // one worker each, cycling as fast as it can
const COLD_FILES = 16; // one worker each, reading only files left alone past the racy window (~2.4 s a cycle)
const COLD_AGE_MS = 2300; // fsguard trusts stat alone only for file times over 2 s old

const CONTENT_KINDS = ['same_size', 'same_tick', 'diff_size', 'rename_over'];
const METADATA_KINDS = ['identical', 'identical_rename', 'chmod', 'touch'];
const KINDS = [...CONTENT_KINDS, ...METADATA_KINDS, 'none'];

// ---------------------------------------------------------------------------
// randomness (seeded: the choices, not the timing, are reproducible)

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:-_=+()[]{}<>/';
const pick = (rng, list) => list[Math.floor(rng() * list.length)];

/** Printable ASCII with some newlines: read_text_file returns it byte for byte. */
function randomText(rng, length) {
  const chars = new Array(length);
  for (let i = 0; i < length; i++) {
    chars[i] = rng() < 0.03 ? '\n' : ALPHABET[Math.floor(rng() * ALPHABET.length)];
  }
  return chars.join('');
}

function randomSize(rng) {
  const r = rng();
  if (r < 0.2) return 1 + Math.floor(rng() * 16);
  if (r < 0.85) return 17 + Math.floor(rng() * 1000);
  return 1017 + Math.floor(rng() * 3000);
}

/** Random text of `length` bytes that differs from `not`. */
function textOtherThan(rng, not, length = randomSize(rng)) {
  for (;;) {
    const text = randomText(rng, length);
    if (text !== not) return text;
  }
}

/** The writer order for mutation `kind` of `file`, which holds `disk`. */
function orderFor(rng, file, kind, disk) {
  const order = { file, kind, expect: disk };
  switch (kind) {
    case 'same_size':
    case 'same_tick':
      order.content = textOtherThan(rng, disk, disk.length);
      break;
    case 'diff_size': {
      let size = randomSize(rng);
      while (size === disk.length) size = randomSize(rng);
      order.content = textOtherThan(rng, disk, size);
      break;
    }
    case 'rename_over':
      order.content = textOtherThan(rng, disk, rng() < 0.5 ? disk.length : randomSize(rng));
      break;
    case 'identical':
    case 'identical_rename':
      order.content = disk;
      break;
    default:
      break;
  }
  return order;
}

/** Scatters a mutation over a read or write in flight (which takes about 1-3 ms here). */
function randomDelay(rng) {
  const r = rng();
  if (r < 0.25) return {};
  if (r < 0.55) return { spinUs: Math.floor(rng() * 600) };
  if (r < 0.85) return { spinUs: 600 + Math.floor(rng() * 1800) };
  return { ms: 1 + Math.floor(rng() * 3) };
}

const now = () => process.hrtime.bigint();

// ---------------------------------------------------------------------------
// the external writer process

async function startWriter(t) {
  const child = fork(WRITER_SCRIPT, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map();
  let nextId = 1;
  let exited = null;
  const ready = new Promise((resolve, reject) => {
    child.on('message', (m) => {
      if (m.ready) {
        resolve();
        return;
      }
      const waiter = pending.get(m.id);
      pending.delete(m.id);
      if (!waiter) return;
      if (!m.ok) {
        waiter.reject(new Error(`external writer failed ${JSON.stringify(waiter.order).slice(0, 300)}: ${m.error}`));
      } else {
        waiter.resolve(m);
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      exited = `the external writer exited (${code ?? signal})`;
      reject(new Error(exited));
      for (const waiter of pending.values()) waiter.reject(new Error(exited));
      pending.clear();
    });
  });
  t.after(() => {
    if (child.connected) child.disconnect();
    killTree(child.pid);
  });
  await ready;
  return {
    pid: child.pid,
    /** Sends `order`; resolves to the writer's acknowledgement once the mutation is done. */
    mutate(order) {
      if (exited) return Promise.reject(new Error(exited));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, order });
        child.send({ ...order, id });
      });
    },
  };
}

// ---------------------------------------------------------------------------
// tool calls

async function readText(call, file) {
  const res = await call('read_text_file', { path: file });
  if (res.isError || vetoCode(res) !== undefined) {
    throw new Error(`read_text_file ${file} failed: ${textOf(res)}`);
  }
  return res.content[0].text;
}

/** write_file; returns {allowed, code, res}. An upstream error is a test failure, not a veto. */
async function writeText(call, file, content) {
  const res = await call('write_file', { path: file, content });
  const code = vetoCode(res);
  if (res.isError && code === undefined) {
    throw new Error(`write_file ${file} failed upstream: ${textOf(res)}`);
  }
  return { allowed: code === undefined, code, res };
}

const readDisk = (file) => fs.readFileSync(file).toString('latin1');

function fileAgeMs(file) {
  const s = fs.statSync(file, { bigint: true });
  const newest = s.mtimeNs > s.ctimeNs ? s.mtimeNs : s.ctimeNs;
  return Number(BigInt(Date.now()) * 1_000_000n - newest) / 1e6;
}

function overlaps(ack, span) {
  return ack.t0 !== undefined && BigInt(ack.t0) <= span.t1 && BigInt(ack.t1) >= span.t0;
}

const digest = (text) => `${text.length} bytes sha1:${crypto.createHash('sha1').update(text, 'latin1').digest('hex').slice(0, 12)}`;

// ---------------------------------------------------------------------------
// 1. the torture run

function newStats() {
  return {
    cycles: 0,
    byMode: {},
    byKind: Object.fromEntries(KINDS.map((k) => [k, { n: 0, contentChanged: 0, vetoed: 0 }])),
    contentChanges: 0,
    missed: 0,
    falseVetoes: 0,
    conservativeVetoes: 0,
    wrongCode: 0,        // a change vetoed with a code that does not fit the cycle
    notLanded: 0,        // the disk after the call is not what it must be
    vetoesByCode: {},
    overlappingReads: 0, // concurrent cycles whose mutation overlapped the read
    tornOrNewReads: 0,   // concurrent cycles whose read returned other bytes than the file held before
    sameTickMtimeRestored: 0,
    sameTickCtimeKept: 0, // all stat fields equal after a content change
    failures: [],
  };
}

function fail(stats, what, detail) {
  if (stats.failures.length < 25) stats.failures.push({ what, ...detail });
}

/**
 * One cycle on worker `w`: learn what the agent holds (read, or its own last write),
 * let the writer mutate (or not), write, and judge the result against the truth.
 */
async function runCycle(ctx, w, mode) {
  const { call, writer, stats } = ctx;
  const { rng, file } = w;
  const kind = pick(rng, KINDS);
  const diskBefore = w.disk;
  const order = orderFor(rng, file, kind, diskBefore);
  let seen;
  let ack;
  let span = null;
  if (mode === 'chained') {
    seen = w.held;
    ack = await writer.mutate(order);
  } else if (mode === 'concurrent') {
    order.delay = randomDelay(rng);
    const writerFirst = rng() < 0.5;
    const ackPromise = writerFirst ? writer.mutate(order) : null;
    span = { t0: now(), t1: null };
    const readPromise = readText(call, file).then((text) => {
      span.t1 = now();
      return text;
    });
    [seen, ack] = await Promise.all([readPromise, ackPromise ?? writer.mutate(order)]);
  } else { // sequential, cold
    seen = await readText(call, file);
    ack = await writer.mutate(order);
  }
  if (ack.beforeMatches !== true) {
    throw new Error(`test bookkeeping out of step: ${file} did not hold the expected bytes before the mutation`);
  }
  if (kind === 'same_tick') {
    if (ack.mtimeRestored) stats.sameTickMtimeRestored++;
    if (ack.ctimeKept) stats.sameTickCtimeKept++;
  }
  const onDisk = ack.disk;
  const overlapped = span !== null && overlaps(ack, span);
  if (overlapped) stats.overlappingReads++;
  if (span !== null && seen !== diskBefore) stats.tornOrNewReads++;

  const mine = textOtherThan(rng, onDisk);
  const { allowed, code, res } = await writeText(call, file, mine);
  const after = readDisk(file);

  const contentChanged = seen !== onDisk;
  stats.cycles++;
  stats.byMode[mode] = (stats.byMode[mode] ?? 0) + 1;
  stats.byKind[kind].n++;
  if (contentChanged) {
    stats.contentChanges++;
    stats.byKind[kind].contentChanged++;
  }
  if (!allowed) {
    stats.byKind[kind].vetoed++;
    stats.vetoesByCode[code] = (stats.vetoesByCode[code] ?? 0) + 1;
  }
  const detail = () => ({
    mode, kind, file: path.basename(file), code: code ?? null, veto: allowed ? null : textOf(res),
    seen: digest(seen), before: digest(diskBefore), onDisk: digest(onDisk),
    statBefore: ack.before, statAfter: ack.after,
    read: span && { t0: String(span.t0), t1: String(span.t1) },
    mutation: ack.t0 && { t0: ack.t0, tv: ack.tv, t1: ack.t1 }, delay: order.delay,
  });

  if (contentChanged) {
    if (allowed) {
      stats.missed++;
      fail(stats, 'missed change', detail());
    } else if (mode !== 'concurrent' ? code !== 'changed'
      : !['changed', 'changed_during_read', 'not_read'].includes(code)) {
      // After a quiet read the record is sound, so only "changed" fits; a read
      // the writer raced may also end as changed_during_read, or as no record
      // at all (not_read) if fsguard could not fingerprint the file after it.
      stats.wrongCode++;
      fail(stats, 'unexpected veto code', detail());
    }
  } else if (!allowed) {
    if (mode === 'concurrent' && overlapped && (code === 'changed_during_read' || code === 'not_read')) {
      stats.conservativeVetoes++;
    } else {
      stats.falseVetoes++;
      fail(stats, 'false veto', detail());
    }
  }
  if (after !== (allowed ? mine : onDisk)) {
    stats.notLanded++;
    fail(stats, allowed ? 'allowed write not on disk' : 'disk changed by a vetoed write',
      { ...detail(), after: digest(after) });
  }
  w.disk = after;
  w.held = allowed ? mine : null;
}

async function hotWorker(ctx, w) {
  while (ctx.take()) {
    const r = w.rng();
    const mode = w.held !== null && r < 0.2 ? 'chained' : r < 0.55 ? 'concurrent' : 'sequential';
    await runCycle(ctx, w, mode);
  }
}

async function coldWorker(ctx, w) {
  while (ctx.take()) {
    // Leave the file alone until its times are out of the racy window, so the
    // read's record is one the stat fast path may vouch for.
    for (let age = fileAgeMs(w.file); age < COLD_AGE_MS; age = fileAgeMs(w.file)) {
      await sleep(Math.ceil(COLD_AGE_MS - age) + 5);
    }
    await runCycle(ctx, w, 'cold');
  }
}

test(`torture: ${CYCLES} read/write cycles against an external writer process never miss a change `
  + 'and never veto an unchanged file', async (t) => {
  const names = [
    ...Array.from({ length: HOT_FILES }, (_, i) => `hot-${i}.txt`),
    ...Array.from({ length: COLD_FILES }, (_, i) => `cold-${i}.txt`),
  ];
  const seedRng = mulberry32(SEED);
  const initial = Object.fromEntries(names.map((n) => [n, randomText(seedRng, randomSize(seedRng))]));
  const { file, call } = await openSession(t, { files: initial });
  const writer = await startWriter(t);

  const stats = newStats();
  let issued = 0;
  const ctx = { call, writer, stats, take: () => (issued < CYCLES ? (++issued, true) : false) };
  const workers = names.map((n, i) => ({
    name: n, file: file(n), disk: initial[n], held: null, rng: mulberry32(SEED + 1 + i),
  }));

  console.log(`torture: seed ${SEED}, ${CYCLES} cycles, ${HOT_FILES} hot + ${COLD_FILES} cold files, writer pid ${writer.pid}`);
  const started = performance.now();
  await Promise.all(workers.map((w) => (w.name.startsWith('cold') ? coldWorker(ctx, w) : hotWorker(ctx, w))));
  const seconds = (performance.now() - started) / 1000;

  const { failures, ...counts } = stats;
  console.log(`torture: ${stats.cycles} cycles in ${seconds.toFixed(1)} s (${(stats.cycles / seconds).toFixed(0)} cycles/s)`);
  console.log(`torture: cycles by mode ${JSON.stringify(stats.byMode)}`);
  console.log('torture: by mutation kind (n / content changed between read and write / vetoed):');
  for (const [k, v] of Object.entries(stats.byKind)) {
    console.log(`torture:   ${k.padEnd(17)} ${String(v.n).padStart(6)} ${String(v.contentChanged).padStart(6)} ${String(v.vetoed).padStart(6)}`);
  }
  console.log(`torture: content changes between read and write: ${stats.contentChanges}`);
  console.log(`torture: missed changes (content changed, write allowed): ${stats.missed}`);
  console.log(`torture: false vetoes (content unchanged, write vetoed): ${stats.falseVetoes}`);
  console.log(`torture: conservative vetoes (mutation overlapped the read, bytes seen still current): ${stats.conservativeVetoes}`);
  console.log(`torture: vetoes by code ${JSON.stringify(stats.vetoesByCode)}`);
  console.log(`torture: concurrent cycles whose mutation overlapped the read: ${stats.overlappingReads}; `
    + `whose read returned other bytes than the file held before: ${stats.tornOrNewReads}`);
  console.log(`torture: same_tick rewrites with the mtime restored to the ns: ${stats.sameTickMtimeRestored}; `
    + `with the ctime unchanged as well: ${stats.sameTickCtimeKept}`);
  console.log(`torture: wrong veto codes: ${stats.wrongCode}; disk not as expected after a call: ${stats.notLanded}`);
  for (const f of failures) console.log(`torture: FAILURE ${JSON.stringify(f)}`);

  assert.equal(stats.cycles, CYCLES, 'every cycle ran');
  assert.equal(stats.missed, 0, 'missed changes');
  assert.equal(stats.falseVetoes, 0, 'false vetoes');
  assert.equal(stats.wrongCode, 0, 'veto codes fit the cycle ("changed" after a quiet read)');
  assert.equal(stats.notLanded, 0, 'the disk after each call');
  assert.equal(stats.sameTickMtimeRestored, stats.byKind.same_tick.n, 'every same_tick rewrite restored the mtime');
  if (CYCLES >= 1000) {
    for (const [k, v] of Object.entries(stats.byKind)) assert.ok(v.n > 0, `mutation kind ${k} was exercised`);
    assert.ok(stats.byMode.cold > 0, 'cold cycles ran (the stat fast path was exercised)');
    assert.ok(stats.contentChanges > 0, 'content changes happened');
  }
});

// ---------------------------------------------------------------------------
// 2. in-flight ordering on one file

test('concurrent write_file calls on one file are judged in order: each against the state the previous one left', async (t) => {
  const files = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`f${i}.txt`, `start ${i}\n`]));
  const { file, call, s } = await openSession(t, { files });
  const writer = await startWriter(t);
  const rng = mulberry32(SEED ^ 0x5eed);

  // Never read: every one of the concurrent writes is a blind write.
  {
    const f = file('f0.txt');
    const results = await Promise.all([1, 2, 3].map((k) => writeText(call, f, `blind ${k}\n`)));
    assert.deepEqual(results.map((r) => r.code), ['not_read', 'not_read', 'not_read']);
    assert.equal(readDisk(f), 'start 0\n');
  }

  const sentWrites = (f) => s.sent()
    .filter((m) => m.method === 'tools/call' && m.params?.name === 'write_file' && m.params.arguments?.path === f)
    .map((m) => m.params.arguments.content);

  let allowedRounds = 0;
  let vetoedRounds = 0;
  await Promise.all(Object.keys(files).map(async (name, index) => {
    const f = file(name);
    for (let round = 0; round < 25; round++) {
      const external = round % 5 === 4;
      await readText(call, f);
      let changedTo = null;
      if (external) {
        // A content change between the read and the burst: the first write is
        // vetoed, and so is every later one (nothing refreshed the record).
        const ack = await writer.mutate(orderFor(rng, f, pick(rng, CONTENT_KINDS), readDisk(f)));
        changedTo = ack.disk;
      }
      const count = 2 + (round % 3);
      const contents = Array.from({ length: count }, (_, k) => `file ${index} round ${round} write ${k}\n`);
      const results = await Promise.all(contents.map((c) => writeText(call, f, c)));
      const disk = readDisk(f);
      if (external) {
        vetoedRounds++;
        assert.deepEqual(results.map((r) => r.code), contents.map(() => 'changed'),
          `${name} round ${round}: all vetoed after an external change`);
        assert.equal(disk, changedTo, `${name} round ${round}: the external change survives`);
      } else {
        allowedRounds++;
        for (const [k, r] of results.entries()) {
          assert.ok(r.allowed, `${name} round ${round} write ${k}: allowed (the previous write is the baseline), got ${r.code}: ${textOf(r.res)}`);
        }
        const order = sentWrites(f).filter((c) => contents.includes(c));
        assert.deepEqual(order, contents, `${name} round ${round}: sent in call order`);
        assert.equal(disk, contents.at(-1), `${name} round ${round}: the last write sent is on disk`);
      }
    }
  }));
  console.log(`ordering: ${allowedRounds} bursts allowed in order, ${vetoedRounds} bursts vetoed after an external change`);
});

// ---------------------------------------------------------------------------
// 3. an external change racing a write

test('an external change racing write_file never lets the write through against stale state', async (t) => {
  const files = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`r${i}.txt`, `race ${i}\n`]));
  const { file, call } = await openSession(t, { files });
  const writer = await startWriter(t);
  const outcome = {
    rounds: 0, vetoed: 0, vetoedJustified: 0, allowedThenExternalVisible: 0,
    allowedExternalOverwritten: 0, followUpAllowed: 0, followUpVetoed: 0,
  };
  const problems = [];
  const problem = (what, detail) => { if (problems.length < 25) problems.push({ what, ...detail }); };
  let issued = 0;

  await Promise.all(Object.keys(files).map(async (name, index) => {
    const f = file(name);
    const rng = mulberry32(SEED + 1000 + index);
    while (issued < RACES) {
      issued++;
      const seen = await readText(call, f);
      const kind = pick(rng, rng() < 0.7 ? CONTENT_KINDS : [...METADATA_KINDS, 'none']);
      const order = { ...orderFor(rng, f, kind, seen), delay: randomDelay(rng) };
      const mine = textOtherThan(rng, seen);
      const writerFirst = rng() < 0.5;
      const ackPromise = writerFirst ? writer.mutate(order) : null;
      const span = { t0: now(), t1: null };
      const writePromise = writeText(call, f, mine).then((r) => {
        span.t1 = now();
        return r;
      });
      const [w, ack] = await Promise.all([writePromise, ackPromise ?? writer.mutate(order)]);
      const final = readDisk(f);
      const detail = {
        file: name, kind, code: w.code ?? null, seen: digest(seen), external: digest(ack.disk),
        mine: digest(mine), final: digest(final), write: { t0: String(span.t0), t1: String(span.t1) },
        mutation: ack.t0 && { t0: ack.t0, tv: ack.tv, t1: ack.t1 }, statBefore: ack.before, statAfter: ack.after,
      };
      outcome.rounds++;
      if (!w.allowed) {
        outcome.vetoed++;
        // Justified only if the file really held other bytes at some moment of the check.
        const contentKind = CONTENT_KINDS.includes(kind);
        const justified = (contentKind && BigInt(ack.t0) <= span.t1)
          || (kind === 'identical' && overlaps(ack, span)); // seen mid-rewrite (truncated)
        if (justified) outcome.vetoedJustified++;
        else problem('veto without a content change at check time', detail);
        if (!['changed', 'cannot_inspect'].includes(w.code)) problem('unexpected veto code', detail);
        if (final !== ack.disk) problem('a vetoed write changed the disk', detail);
      } else {
        // Once the new bytes were visible before the write was even sent, fsguard's check saw them.
        if (CONTENT_KINDS.includes(kind) && BigInt(ack.tv) < span.t0) {
          problem('write allowed although the external change was on disk before it was sent', detail);
        }
        if (final === mine) outcome.allowedExternalOverwritten += CONTENT_KINDS.includes(kind) ? 1 : 0;
        else outcome.allowedThenExternalVisible++;
      }
      // The baseline now is the agent's own write (if allowed) or its read: a
      // follow-up write without a read must be allowed exactly when the disk still
      // holds that baseline.
      const baseline = w.allowed ? mine : seen;
      const next = textOtherThan(rng, final);
      const follow = await writeText(call, f, next);
      const afterFollow = readDisk(f);
      if (final === baseline) {
        outcome.followUpAllowed++;
        if (!follow.allowed) problem('follow-up write vetoed though the disk holds the baseline', { ...detail, followCode: follow.code });
        if (afterFollow !== next) problem('follow-up write not on disk', detail);
      } else {
        outcome.followUpVetoed++;
        if (follow.allowed) {
          problem('follow-up write allowed against stale state', detail);
        } else {
          if (!['changed', 'not_read'].includes(follow.code)) problem('unexpected follow-up veto code', { ...detail, followCode: follow.code });
          if (afterFollow !== final) problem('a vetoed follow-up changed the disk', detail);
        }
      }
    }
  }));
  console.log(`race: ${JSON.stringify(outcome)}`);
  console.log('race: "allowedExternalOverwritten": external content changes that landed while an allowed write was '
    + 'in flight and were then replaced by the server\'s rename (fsguard\'s check to the server\'s rename is a '
    + 'window no proxy can close); "allowedThenExternalVisible": the change landed after the write, and the '
    + 'follow-up write was vetoed');
  for (const p of problems) console.log(`race: PROBLEM ${JSON.stringify(p)}`);
  assert.deepEqual(problems, []);
});

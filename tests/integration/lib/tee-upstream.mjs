#!/usr/bin/env node
// Transparent upstream wrapper for tests:
//   FSGUARD_TEE_LOG=/path/log node tee-upstream.mjs <command> [args...]
// Spawns <command>, appends every line it receives on stdin to $FSGUARD_TEE_LOG
// (synchronously, before forwarding it), relays stdin/stdout/stderr both ways,
// and exits with the child's status (128+signal if the child was killed).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

const log = process.env.FSGUARD_TEE_LOG;
const [cmd, ...args] = process.argv.slice(2);
if (!log || !cmd) {
  process.stderr.write('usage: FSGUARD_TEE_LOG=FILE tee-upstream.mjs <command> [args...]\n');
  process.exit(2);
}

const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
child.on('error', (err) => {
  process.stderr.write(`tee-upstream: cannot start ${cmd}: ${err.message}\n`);
  process.exit(1);
});
child.stdin.on('error', () => { /* the child may be gone */ });

let pending = Buffer.alloc(0);
function logLines(final) {
  let nl;
  while ((nl = pending.indexOf(0x0a)) >= 0) {
    fs.appendFileSync(log, pending.subarray(0, nl + 1));
    pending = pending.subarray(nl + 1);
  }
  if (final && pending.length > 0) {
    fs.appendFileSync(log, Buffer.concat([pending, Buffer.from('\n')]));
    pending = Buffer.alloc(0);
  }
}

process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  logLines(false);
  child.stdin.write(chunk);
});
process.stdin.on('end', () => {
  logLines(true);
  child.stdin.end();
});

child.stdout.pipe(process.stdout);
child.stderr.pipe(process.stderr);

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => { try { child.kill(sig); } catch { /* gone */ } });
}

child.on('close', (code, signal) => {
  process.exitCode = code ?? 128 + (os.constants.signals[signal] ?? 0);
  process.stdin.destroy();
});

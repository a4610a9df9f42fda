#!/usr/bin/env node
// An upstream wrapper for tests that deletes a file just after a read of it:
//   FSGUARD_UNLINK_AFTER_READ=/path/file [FSGUARD_UNLINK_AFTER_READ_NUMBER=n] \
//     node unlink-after-read.mjs <command> [args...]
// Spawns <command> and relays its stdin, stdout and stderr. When the server
// answers the n-th (default: 1st) read_text_file of the file, the file is
// deleted before the answer is passed on, so fsguard takes the answer of a
// read whose file is already gone.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

const target = process.env.FSGUARD_UNLINK_AFTER_READ;
const number = Number(process.env.FSGUARD_UNLINK_AFTER_READ_NUMBER ?? 1);
const [cmd, ...args] = process.argv.slice(2);
if (!target || !cmd) {
  process.stderr.write('usage: FSGUARD_UNLINK_AFTER_READ=FILE unlink-after-read.mjs <command> [args...]\n');
  process.exit(2);
}

const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
child.on('error', (err) => {
  process.stderr.write(`unlink-after-read: cannot start ${cmd}: ${err.message}\n`);
  process.exit(1);
});
child.stdin.on('error', () => { /* the child may be gone */ });

let reads = 0;
let watchedId; // JSON of the id of the read to delete the file after
function lines(stream, onLine) {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      onLine(pending.slice(0, nl + 1));
      pending = pending.slice(nl + 1);
    }
  });
  stream.on('end', () => { if (pending) onLine(pending); });
}

lines(process.stdin, (line) => {
  try {
    const message = JSON.parse(line);
    if (message.method === 'tools/call' && message.params?.name === 'read_text_file'
        && message.params?.arguments?.path === target && ++reads === number) {
      watchedId = JSON.stringify(message.id);
    }
  } catch { /* not ours to judge */ }
  child.stdin.write(line);
});
process.stdin.on('end', () => child.stdin.end());

lines(child.stdout, (line) => {
  try {
    if (watchedId !== undefined && JSON.stringify(JSON.parse(line).id) === watchedId) {
      watchedId = undefined;
      fs.rmSync(target, { force: true });
    }
  } catch { /* relayed as it is */ }
  process.stdout.write(line);
});

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => { try { child.kill(sig); } catch { /* gone */ } });
}
child.on('close', (code, signal) => {
  process.exitCode = code ?? 128 + (os.constants.signals[signal] ?? 0);
  process.stdin.destroy();
});

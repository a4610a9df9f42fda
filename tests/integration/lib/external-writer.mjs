// An external writer for the torture test: a separate node process (forked with
// an IPC channel) that changes files when told to, so its changes truly race the
// fsguard session instead of taking turns with it on one event loop.
//
// Each order is a message {id, file, kind, content?, mode?, delay?}; the writer
// waits `delay` (see below), carries out the mutation with synchronous calls,
// and answers {id, ok, kind, t0, t1, before, after, disk, ...}:
//   t0, t1   process.hrtime.bigint() (CLOCK_MONOTONIC, shared by all processes)
//            just before the first and just after the last system call that
//            changed the file, as decimal strings; both absent for "none";
//   tv       for the kinds that write bytes: just after the call that made the
//            new bytes visible at the path returned (the file holds them from
//            then on; it may already from an earlier moment);
//   beforeMatches  whether the file held order.expect just before (if given);
//   before, after   lstat of the file (bigint, ns) around the mutation;
//   disk     the file's bytes (latin1) read back after the mutation.
//
// Kinds. Content changes:
//   same_size         rewrite in place with other bytes of the same length
//   same_tick         same_size, then the mtime put back to the exact ns it had
//                     (`touch -m -d @S.NNNNNNNNN` on /proc/PID/fd/N; node's utimes
//                     takes a double and cannot hit an arbitrary ns), so only the
//                     ctime differs
//   diff_size         rewrite in place with a different length
//   rename_over       write a temp file next to it, rename it over the file
// Metadata only (the bytes stay the same):
//   identical         rewrite in place with the same bytes
//   identical_rename  rename a temp file with the same bytes over the file
//   chmod             set the permission bits to `mode` (default: flip 0644/0664)
//   touch             utimes to now
//   none              nothing at all
//
// delay: {spinUs} busy-waits that many microseconds, {ms} uses a timer; absent
// or 0: at once. The test sends an order and a read together and lets the delay
// scatter the mutation across the read's lifetime.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

let tempCounter = 0;

function statOf(file) {
  try {
    const s = fs.lstatSync(file, { bigint: true });
    return {
      dev: String(s.dev), ino: String(s.ino), size: String(s.size), mode: s.mode.toString(8),
      atimeNs: String(s.atimeNs), mtimeNs: String(s.mtimeNs), ctimeNs: String(s.ctimeNs),
    };
  } catch (err) {
    return { error: err.code ?? String(err) };
  }
}

function spin(us) {
  const end = process.hrtime.bigint() + BigInt(Math.round(us * 1000));
  while (process.hrtime.bigint() < end) { /* busy wait: timers are too coarse */ }
}

/** `ns` (bigint epoch ns) as touch's "@seconds.nanoseconds". */
function touchStamp(ns) {
  const sec = ns / 1_000_000_000n;
  const frac = ns % 1_000_000_000n;
  return `@${sec}.${String(frac).padStart(9, '0')}`;
}

function renameOver(file, bytes) {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.xw${process.pid}-${tempCounter++}.tmp`);
  fs.writeFileSync(temp, bytes);
  const t0 = process.hrtime.bigint();
  fs.renameSync(temp, file); // the only call that changes what `file` names
  const t1 = process.hrtime.bigint();
  return [t0, t1];
}

function mutate(order) {
  const { file, kind } = order;
  const content = order.content === undefined ? undefined : Buffer.from(order.content, 'latin1');
  const before = statOf(file);
  const reply = { id: order.id, ok: true, kind, before };
  if (order.expect !== undefined) {
    reply.beforeMatches = fs.readFileSync(file).toString('latin1') === order.expect;
  }
  let t0;
  let t1;
  let tv;
  switch (kind) {
    case 'none':
      break;
    case 'same_size':
    case 'diff_size':
    case 'identical':
      t0 = process.hrtime.bigint();
      fs.writeFileSync(file, content);
      t1 = process.hrtime.bigint();
      tv = t1;
      break;
    case 'same_tick': {
      // Rewrite the inode in place and put its mtime back, both through one
      // descriptor: if someone renames another file over the path meanwhile,
      // the restore still hits the inode that was rewritten.
      const fd = fs.openSync(file, 'r+');
      try {
        const old = fs.fstatSync(fd, { bigint: true });
        t0 = process.hrtime.bigint();
        fs.ftruncateSync(fd, 0);
        fs.writeSync(fd, content, 0, content.length, 0);
        tv = process.hrtime.bigint();
        execFileSync('touch', ['-m', '-c', '-d', touchStamp(old.mtimeNs), `/proc/${process.pid}/fd/${fd}`]);
        t1 = process.hrtime.bigint();
        const now = fs.fstatSync(fd, { bigint: true });
        reply.mtimeRestored = now.ino === old.ino && now.mtimeNs === old.mtimeNs;
        reply.ctimeKept = now.ctimeNs === old.ctimeNs; // all stat fields equal: only a re-hash can tell
        if (!reply.mtimeRestored) {
          reply.ok = false;
          reply.error = `mtime not restored: was ${old.mtimeNs} (inode ${old.ino}), now ${now.mtimeNs} (inode ${now.ino})`;
        }
      } finally {
        fs.closeSync(fd);
      }
      break;
    }
    case 'rename_over':
    case 'identical_rename':
      [t0, t1] = renameOver(file, content);
      tv = t1;
      break;
    case 'chmod': {
      // order.mode, else flip between 0644 and 0664 (the owner can always write)
      const mode = order.mode ?? ((fs.statSync(file).mode & 0o777) === 0o644 ? 0o664 : 0o644);
      t0 = process.hrtime.bigint();
      fs.chmodSync(file, mode);
      t1 = process.hrtime.bigint();
      break;
    }
    case 'touch': {
      const now = new Date();
      t0 = process.hrtime.bigint();
      fs.utimesSync(file, now, now);
      t1 = process.hrtime.bigint();
      break;
    }
    default:
      throw new Error(`unknown mutation kind ${kind}`);
  }
  if (t0 !== undefined) {
    reply.t0 = String(t0);
    reply.t1 = String(t1);
  }
  if (tv !== undefined) reply.tv = String(tv);
  reply.after = statOf(file);
  reply.disk = fs.readFileSync(file).toString('latin1');
  return reply;
}

function handle(order) {
  let reply;
  try {
    reply = mutate(order);
  } catch (err) {
    reply = { id: order.id, ok: false, kind: order.kind, error: String(err?.stack ?? err) };
  }
  process.send(reply);
}

process.on('message', (order) => {
  if (order === 'exit') {
    process.disconnect();
    return;
  }
  const delay = order.delay ?? {};
  if (delay.ms > 0) {
    setTimeout(() => handle(order), delay.ms);
    return;
  }
  if (delay.spinUs > 0) spin(delay.spinUs);
  handle(order);
});

process.on('disconnect', () => process.exit(0));
process.send({ ready: true, pid: process.pid });

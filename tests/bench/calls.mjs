// What the bench scripts send (per_call.mjs, pgo_train.mjs), and how: requests
// with their members in the order the MCP SDK's client writes them, file
// texts of a given size, each its own, and the replay of requests through
// fsguard.

import { spawn } from 'node:child_process';

// Printable, multi-line text of exactly `size` bytes, told apart from any
// other by `label`.
export function text(size, label) {
  const line = `fsguard ${label} ` + 'abcdefghijklmnopqrstuvwxyz0123456789'.repeat(2) + '\n';
  return line.repeat(Math.ceil(size / line.length)).slice(0, size);
}

// A numbering of requests from id 1: `request(method, params)` and
// `call(tool, args)` (a tools/call), and `initialize(clientName)`.
export function requestMaker() {
  let id = 0;
  const request = (method, params) => ({ method, params, jsonrpc: '2.0', id: ++id });
  return {
    request,
    call: (name, args) => request('tools/call', { name, arguments: args }),
    initialize: (clientName) =>
      request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: clientName, version: '0.0.0' } }),
    count: () => id,
  };
}

// `messages` as batches of one request each: a notification goes with the
// request after it.
export function oneAtATime(messages) {
  const batches = [];
  let batch = [];
  for (const message of messages) {
    batch.push(message);
    if (message.id !== undefined) {
      batches.push(batch);
      batch = [];
    }
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

// Replays `batches` (arrays of messages) through `command` with `args`
// (fsguard, perhaps under valgrind or strace): a batch is sent at once, the
// next once every request in it is answered, and stdin is closed after the
// last. Resolves with how many answers were refusals (result.isError) once
// the command exits 0. Rejects, naming `label`, on an error answer, an exit
// before every batch was answered or with another status, or no end within
// `timeoutMs` (if given; the command is then killed).
export function replay(command, args, batches, label, { timeoutMs } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-16384);
    });
    const timer = timeoutMs
      ? setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`${label}: no end within ${timeoutMs} ms\n${stderr}`));
        }, timeoutMs)
      : null;
    let next = 0;
    let refused = 0;
    const awaited = new Set();
    const send = () => {
      while (next < batches.length && awaited.size === 0) {
        for (const message of batches[next++]) {
          if (message.id !== undefined) awaited.add(message.id);
          child.stdin.write(JSON.stringify(message) + '\n');
        }
      }
      if (next === batches.length && awaited.size === 0) child.stdin.end();
    };
    let pending = Buffer.alloc(0);
    let chunks = [];
    child.stdout.on('data', (chunk) => {
      chunks.push(chunk);
      if (chunk.indexOf(10) < 0) return;
      pending = Buffer.concat([pending, ...chunks]);
      chunks = [];
      let end;
      while ((end = pending.indexOf(10)) >= 0) {
        const line = pending.subarray(0, end).toString('utf8');
        pending = pending.subarray(end + 1);
        const message = JSON.parse(line);
        if (message.error) {
          child.kill('SIGKILL');
          reject(new Error(`${label}: a request failed: ${line.slice(0, 300)}\n${stderr}`));
          return;
        }
        if (message.result?.isError) refused++;
        awaited.delete(message.id);
      }
      send();
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (next < batches.length || awaited.size > 0 || code !== 0) {
        reject(new Error(`${label}: exited with ${signal ?? code} after ${next} of ${batches.length} batches\n${stderr}`));
      } else {
        resolve(refused);
      }
    });
    send();
  });
}

#!/usr/bin/env node
// A badly behaved MCP upstream for shutdown tests (faults.test.mjs):
//   node stubborn-upstream.mjs [--exit-on-eof] [--grandchild-holds-stdout]
//                              [--deaf-after-initialize] [--chatty-after-eof]
//
// - ignores SIGTERM, SIGINT and SIGHUP;
// - by default ignores the end of its stdin and keeps running;
// - spawns two grandchildren in its own process group: a plain `sleep 1000`
//   (dies on SIGTERM) and a `sleep 1001` that ignores SIGTERM, SIGINT and SIGHUP
//   (only SIGKILL stops it); with --grandchild-holds-stdout that one also
//   inherits this process's stdout, so the reader of our stdout sees no EOF
//   until it dies;
// - prints `stubborn-upstream: grandchildren <pid> <pid>` on stderr;
// - answers `initialize` and `ping`, and never answers anything else, so every
//   tools/call stays in flight.
// With --exit-on-eof it exits 0 when its stdin ends, leaving the grandchildren.
// With --deaf-after-initialize it stops reading its stdin once it has
// answered initialize, so a large message sent to it stays stuck in the pipe.
// With --chatty-after-eof it writes a log notification every 200 ms once its
// stdin has ended, forever.

import { spawn } from 'node:child_process';
import readline from 'node:readline';

const exitOnEof = process.argv.includes('--exit-on-eof');
const holdStdout = process.argv.includes('--grandchild-holds-stdout');
const deafAfterInitialize = process.argv.includes('--deaf-after-initialize');
const chattyAfterEof = process.argv.includes('--chatty-after-eof');

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => {});

const plain = spawn('sleep', ['1000'], { stdio: 'ignore' });
const deaf = spawn('/bin/sh', ['-c', 'trap "" TERM INT HUP; exec sleep 1001'], {
  stdio: ['ignore', holdStdout ? 'inherit' : 'ignore', 'ignore'],
});
process.stderr.write(`stubborn-upstream: grandchildren ${plain.pid} ${deaf.pid}\n`);

setInterval(() => {}, 1 << 30); // stay alive whatever happens to stdin

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (!msg || typeof msg !== 'object' || msg.id === undefined || !msg.method) return;
  let result;
  if (msg.method === 'initialize') {
    result = {
      protocolVersion: msg.params?.protocolVersion ?? '2025-11-25',
      capabilities: { tools: {} },
      serverInfo: { name: 'stubborn-upstream', version: '0.0.0' },
    };
  } else if (msg.method === 'ping') {
    result = {};
  } else {
    return; // left in flight forever
  }
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }) + '\n');
  if (deafAfterInitialize && msg.method === 'initialize') {
    rl.pause(); // stop reading stdin: its pipe fills and the writer blocks
    process.stderr.write('stubborn-upstream: no longer reading stdin\n');
  }
});
rl.on('close', () => {
  process.stderr.write('stubborn-upstream: stdin ended\n');
  if (exitOnEof) process.exit(0);
  if (chattyAfterEof) {
    setInterval(() => process.stdout.write(JSON.stringify({
      jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'still here' },
    }) + '\n'), 200);
  }
});

#!/usr/bin/env node
// A scripted stand-in for an MCP server, for protocol edge cases:
// it prints a line that is NOT JSON on stdout at start-up and before every
// response, answers `initialize` properly and every other request with `{}`,
// ignores notifications, and exits 0 on stdin EOF.

import readline from 'node:readline';

const NOISE = 'fake-upstream: this line is not JSON';
process.stdout.write(NOISE + '\n');

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg) || msg.id === undefined || !msg.method) return;
  const result = msg.method === 'initialize'
    ? {
      protocolVersion: msg.params?.protocolVersion ?? '2025-11-25',
      capabilities: { tools: {} },
      serverInfo: { name: 'fake-upstream', version: '0.0.0' },
    }
    : {};
  process.stdout.write(NOISE + '\n');
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }) + '\n');
});
rl.on('close', () => process.exit(0));

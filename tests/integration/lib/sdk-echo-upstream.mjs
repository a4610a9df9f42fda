#!/usr/bin/env node
// An MCP server reduced to its framing: it reads its stdin with the SDK's own
// StdioServerTransport (the ReadBuffer, JSON.parse and JSONRPCMessageSchema
// that server-filesystem reads with), answers every request the transport
// lets through with a result that says it came from here, and ignores
// everything else, as the SDK's server drops what its transport rejects.
// For the differential framing test (framing_diff.test.mjs).

import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const transport = new StdioServerTransport();
transport.onmessage = (message) => {
  if (!('method' in message) || !('id' in message)) {
    return; // a notification or an answer: nothing is owed
  }
  const result = message.method === 'initialize'
    ? {
      protocolVersion: message.params?.protocolVersion ?? '2025-11-25',
      capabilities: { tools: {} },
      serverInfo: { name: 'sdk-echo-upstream', version: '0.0.0' },
    }
    : { echoed: message.method };
  transport.send({ jsonrpc: '2.0', id: message.id, result });
};
transport.onerror = () => { /* dropped, as the SDK's server drops it */ };
process.stdin.on('end', () => process.exit(0));
await transport.start();

// What the bench scripts send (per_call.mjs, pgo_train.mjs): requests with
// their members in the order the MCP SDK's client writes them, and file
// texts of a given size, each its own.

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

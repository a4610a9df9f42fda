// The era a suite runs in, and the SDK client that speaks it.
//
// FSGUARD_TEST_ERA=2026 runs a suite in MCP's stateless 2026-07-28 era: the
// v2 client SDK (@modelcontextprotocol/client, pinned) pinned to 2026-07-28
// (server/discover at connect, then every request carries its _meta
// envelope; no initialize), through fsguard to the dual-era server
// (lib/dual-era-fs-server.mjs). Unset (or 2025), the suite runs as it always
// has: the v1 SDK client (@modelcontextprotocol/sdk) and server-filesystem.
//
// eraClient() and eraTransport() give the era's client and stdio transport
// with the v1 client's interface, so a suite's calls read the same in both
// eras: in the 2025 era they are the v1 SDK's own objects.

import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Transport } from '@modelcontextprotocol/client/stdio';

/** The era under test: '2026' when FSGUARD_TEST_ERA says so, else '2025'. */
export const ERA = process.env.FSGUARD_TEST_ERA === '2026' ? '2026' : '2025';

/** The revision the 2026-era client is pinned to. */
export const MODERN_REVISION = '2026-07-28';

/**
 * node:test options that skip a test in the 2026 era, saying why (`reason`:
 * what the test needs that the era does not have).
 */
export const only2025 = (reason) => (ERA === '2026' ? { skip: `2025 era only: ${reason}` } : {});

/** node:test options that skip a test in the 2025 era, saying why (`reason`). */
export const only2026 = (reason) => (ERA === '2026' ? {} : { skip: `2026 era only: ${reason}` });

/**
 * The v2 client pinned to the 2026 era, behind the v1 client's interface:
 * callTool(params, resultSchema, options), and setRequestHandler with the v1
 * ElicitRequestSchema (the v2 client answers fsguard's or the server's
 * input_required with that handler, and retries the call).
 */
class ModernClient {
  constructor(info, { capabilities = {} } = {}) {
    this.inner = new V2Client(info, { versionNegotiation: { mode: { pin: MODERN_REVISION } }, capabilities });
  }

  connect(transport, options) { return this.inner.connect(transport, options); }

  close() { return this.inner.close(); }

  callTool(params, _resultSchema, options) { return this.inner.callTool(params, options); }

  listTools(params, options) { return this.inner.listTools(params, options); }

  getServerVersion() { return this.inner.getServerVersion(); }

  getServerCapabilities() { return this.inner.getServerCapabilities(); }

  setRequestHandler(schema, handler) {
    if (schema !== ElicitRequestSchema) throw new Error('ModernClient: only elicitation handlers are mapped');
    this.inner.setRequestHandler('elicitation/create', handler);
  }
}

/** A new client of the era under test, as `new Client(info, options)` of the v1 SDK. */
export function eraClient(info, options) {
  return ERA === '2026' ? new ModernClient(info, options) : new V1Client(info, options);
}

/** A new stdio transport of the era's SDK, as `new StdioClientTransport(params)` of the v1 SDK. */
export function eraTransport(params) {
  return ERA === '2026' ? new V2Transport(params) : new V1Transport(params);
}

/**
 * `params` of a raw request as a client of the era under test sends them:
 * in the 2026 era with the _meta envelope (protocol version, `clientInfo`,
 * `capabilities`), merged into any _meta they carry; as they are in 2025.
 */
export function inEra(params = {}, { clientInfo = { name: 'raw', version: '0' }, capabilities = {} } = {}) {
  if (ERA !== '2026') return params;
  return {
    ...params,
    _meta: {
      ...params._meta,
      'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
      'io.modelcontextprotocol/clientInfo': clientInfo,
      'io.modelcontextprotocol/clientCapabilities': capabilities,
    },
  };
}

#!/usr/bin/env node
// A small Streamable HTTP front end for a stdio MCP server, so that HTTP-only
// tools (the MCP conformance suite) can test a stdio server or a stdio proxy:
//
//   node stdio-http-bridge.mjs [--json-response] [--idle-timeout SEC] <port> -- <command> [args...]
//
// It listens on 127.0.0.1:<port> (0 = an ephemeral port) and prints one line,
// `stdio-http-bridge: listening on http://127.0.0.1:<port>/mcp`, on stdout
// once it accepts connections. Every HTTP session (an `initialize` POST without
// an mcp-session-id) gets its own child `<command> [args...]`; the SDK's
// StreamableHTTPServerTransport (SSE responses by default, JSON with
// --json-response) faces the HTTP client and the SDK's StdioClientTransport
// faces the child. JSON-RPC messages are relayed both ways as the SDK parses
// them (same content and key order, not the same bytes); the bridge neither
// answers nor invents any MCP message itself.
//
// The bridge validates Host and Origin (only localhost names are accepted), as
// any local MCP HTTP server must against DNS rebinding. DELETE /mcp, the end of
// the HTTP session, --idle-timeout seconds (default 30, 0 = never) without
// any request in flight, SIGTERM/SIGINT, or EOF on the bridge's stdin when that is a
// pipe, stop the children.

import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  isInitializeRequest, isJSONRPCErrorResponse, isJSONRPCNotification, isJSONRPCRequest,
  isJSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';

const LOCAL_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True if `value` (a Host header, or an Origin's host part) names this machine on `port`. */
function isLocalHost(value, port) {
  if (!value) return false;
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value);
  return Boolean(m && LOCAL_HOSTNAMES.has(m[1].toLowerCase()) && (m[2] === undefined || Number(m[2]) === port));
}

function isLocalOrigin(origin, port) {
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && isLocalHost(u.host, port);
  } catch {
    return false;
  }
}

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * One HTTP session = one StreamableHTTPServerTransport + one stdio child.
 * Server-to-client messages are attached to the HTTP request they belong to:
 * a response by its id, a progress notification by its progressToken, anything
 * else (server requests, logging) to the only client request still open, if
 * there is exactly one; otherwise they go to the standalone GET stream.
 */
class Session {
  constructor({ command, args, jsonResponse, idleMs, log, onsessioninitialized }) {
    this.log = log;
    this.open = new Map(); // client request id -> progressToken (or undefined)
    this.closed = false;
    this.idleMs = idleMs;
    this.activeHttp = 0; // HTTP requests of this session still being answered (incl. GET streams)
    this.idleTimer = null;
    this.onclosed = () => {};
    this.http = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: jsonResponse,
      onsessioninitialized: (id) => onsessioninitialized(id, this),
    });
    this.stdio = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
  }

  /** Serve one HTTP request of this session; the session's idle clock stops meanwhile. */
  async handle(req, res, body) {
    this.activeHttp += 1;
    this.armIdle();
    try {
      await this.http.handleRequest(req, res, body);
    } finally {
      this.activeHttp -= 1;
      this.armIdle();
    }
  }

  /** (Re)start the idle timer if nothing is in flight: no HTTP request and no open client request. */
  armIdle() {
    clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.closed || !this.idleMs || this.activeHttp > 0 || this.open.size > 0) return;
    this.idleTimer = setTimeout(() => {
      this.log(`closing session ${this.http.sessionId} after ${this.idleMs} ms idle`);
      this.close();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  async start() {
    this.http.onmessage = (msg) => {
      if (isJSONRPCRequest(msg)) this.open.set(msg.id, msg.params?._meta?.progressToken);
      this.stdio.send(msg).catch((err) => this.log(`cannot write to the child: ${err.message}`));
    };
    this.http.onerror = (err) => this.log(`http transport: ${err.message}`);
    this.http.onclose = () => { this.close(); };

    this.stdio.onmessage = (msg) => {
      let relatedRequestId;
      if (isJSONRPCResultResponse(msg) || isJSONRPCErrorResponse(msg)) {
        this.open.delete(msg.id);
        this.armIdle();
      } else if (isJSONRPCNotification(msg) && msg.method === 'notifications/progress') {
        for (const [id, token] of this.open) {
          if (token !== undefined && token === msg.params?.progressToken) relatedRequestId = id;
        }
      }
      if (relatedRequestId === undefined && !('result' in msg || 'error' in msg) && this.open.size === 1) {
        [relatedRequestId] = this.open.keys();
      }
      this.http.send(msg, relatedRequestId === undefined ? undefined : { relatedRequestId })
        .catch((err) => this.log(`cannot deliver ${JSON.stringify(msg).slice(0, 200)}: ${err.message}`));
    };
    this.stdio.onerror = (err) => this.log(`child: ${err.message}`);
    this.stdio.onclose = () => { this.close(); };

    await this.stdio.start();
    await this.http.start();
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    this.onclosed();
    await Promise.allSettled([this.stdio.close(), this.http.close()]);
  }
}

/**
 * Start a bridge. Returns {server, port, url, close()}.
 * `command`/`args`: the stdio server to run per session; `port`: 0 for an ephemeral one;
 * `idleMs`: close a session (and stop its child) after that long without any HTTP
 * request or open client request (0 = never; clients rarely DELETE their session).
 */
export async function startBridge({
  port = 0, command, args = [], jsonResponse = false, idleMs = 30_000, log = (s) => process.stderr.write(`stdio-http-bridge: ${s}\n`),
}) {
  const sessions = new Map(); // mcp-session-id -> Session
  let boundPort = port;

  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      if (url.pathname !== '/mcp') { jsonError(res, 404, -32000, 'Not found'); return; }
      if (!isLocalHost(req.headers.host, boundPort)) {
        jsonError(res, 403, -32000, `Invalid Host header: ${req.headers.host}`);
        return;
      }
      if (req.headers.origin !== undefined && !isLocalOrigin(req.headers.origin, boundPort)) {
        jsonError(res, 403, -32000, `Invalid Origin header: ${req.headers.origin}`);
        return;
      }

      let body;
      if (req.method === 'POST') {
        const text = await readBody(req);
        try { body = JSON.parse(text); } catch {
          jsonError(res, 400, -32700, 'Parse error: Invalid JSON');
          return;
        }
      }

      const sid = req.headers['mcp-session-id'];
      if (sid !== undefined) {
        const s = sessions.get(sid);
        if (!s) { jsonError(res, 404, -32001, 'Session not found'); return; }
        await s.handle(req, res, body);
        return;
      }
      const isInit = req.method === 'POST'
        && (Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body));
      if (!isInit) {
        jsonError(res, 400, -32000, 'Bad Request: No valid session ID provided');
        return;
      }

      // The session is registered as soon as the transport assigns its id, before
      // the initialize response reaches the client (which may then POST at once).
      const s = new Session({
        command, args, jsonResponse, idleMs, log,
        onsessioninitialized: (id, session) => {
          sessions.set(id, session);
          session.onclosed = () => sessions.delete(id);
        },
      });
      await s.start();
      await s.handle(req, res, body);
      if (!s.http.sessionId) await s.close(); // the initialize was rejected: no session was created
    } catch (err) {
      log(`request failed: ${err.stack ?? err}`);
      if (!res.headersSent) jsonError(res, 500, -32603, 'Internal error');
      else res.end();
    }
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  boundPort = server.address().port;

  const close = async () => {
    await Promise.allSettled([...sessions.values()].map((s) => s.close()));
    sessions.clear();
    server.closeAllConnections?.();
    await new Promise((resolve) => server.close(() => resolve()));
  };
  return { server, port: boundPort, url: `http://127.0.0.1:${boundPort}/mcp`, close };
}

// ---------------------------------------------------------------------------
// command line

const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const argv = process.argv.slice(2);
  const usage = 'usage: stdio-http-bridge.mjs [--json-response] [--idle-timeout SEC] <port> -- <command> [args...]\n';
  let jsonResponse = false;
  let idleSec = 30;
  for (;;) {
    if (argv[0] === '--json-response') { jsonResponse = true; argv.shift(); continue; }
    if (argv[0] === '--idle-timeout') { idleSec = Number(argv[1]); argv.splice(0, 2); continue; }
    break;
  }
  const sep = argv.indexOf('--');
  const port = Number(argv[0]);
  if (sep !== 1 || !Number.isInteger(port) || port < 0 || port > 65535 || argv.length < 3
      || !(idleSec >= 0)) {
    process.stderr.write(usage);
    process.exit(2);
  }
  const [command, ...args] = argv.slice(sep + 1);
  let bridge;
  try {
    bridge = await startBridge({ port, command, args, jsonResponse, idleMs: idleSec * 1000 });
  } catch (err) {
    process.stderr.write(`stdio-http-bridge: cannot listen on 127.0.0.1:${port}: ${err.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`stdio-http-bridge: listening on ${bridge.url}\n`);
  const stop = async () => { await bridge.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // When started with a pipe as stdin (as the tests do), the end of that pipe
  // (the parent exited, even by SIGKILL) stops the bridge and its children.
  if (fs.fstatSync(0).isFIFO()) {
    process.stdin.on('end', stop);
    process.stdin.resume();
  }
}

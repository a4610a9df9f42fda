#!/usr/bin/env node
// The real, pinned server-filesystem, with one change to the MCP SDK's stdio
// transport: its input buffer limit (STDIO_DEFAULT_MAX_BUFFER_SIZE, 10 MiB) is
// raised to $BIG_LINE_LIMIT bytes (default 256 MiB), and a long line is
// gathered in pieces instead of with one Buffer.concat per chunk (quadratic).
//   node big-line-server.mjs <allowed directory>...
// Used by faults.test.mjs to push client lines close to fsguard's own 64 MiB
// default max_line_bytes through to a real server: the stock server drops any
// line over 10 MiB.

import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';

const SERVER_FS_SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..',
  'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

const limit = Number(process.env.BIG_LINE_LIMIT || 256 * 1024 * 1024);

ReadBuffer.prototype.append = function append(chunk) {
  this._maxBufferSize = limit;
  (this._pieces ??= []).push(chunk);
  this._piecesBytes = (this._piecesBytes ?? 0) + chunk.length;
  if ((this._buffer?.length ?? 0) + this._piecesBytes > limit) {
    this._pieces = [];
    this._piecesBytes = 0;
    this.clear();
    throw new Error(`ReadBuffer exceeded maximum size of ${limit} bytes`);
  }
  if (chunk.indexOf(0x0a) === -1) return; // no complete line yet
  const parts = this._buffer ? [this._buffer, ...this._pieces] : this._pieces;
  this._buffer = Buffer.concat(parts);
  this._pieces = [];
  this._piecesBytes = 0;
};

// server-filesystem reads its directories from process.argv.slice(2), which is
// already right: `node big-line-server.mjs <dir>...`.
await import(pathToFileURL(SERVER_FS_SCRIPT).href);

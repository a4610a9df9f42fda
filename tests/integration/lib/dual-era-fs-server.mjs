#!/usr/bin/env node
// A filesystem server that speaks both eras of MCP, for eras.test.mjs and
// the suites run in the 2026 era (FSGUARD_TEST_ERA=2026): built on the v2
// server SDK (@modelcontextprotocol/server, pinned), served with its
// serveStdio, which fixes each connection's era by its first message
// (initialize, or a request without the _meta envelope: 2025; a request with
// it: 2026-07-28). It offers every tool of server-filesystem (the pinned
// @modelcontextprotocol/server-filesystem's dist/index.js) under the same
// names, with the same argument shapes (its zod shapes, defaults included)
// and texts: the handlers are server-filesystem's, calling its own library
// (validatePath, applyFileEdits, ...), it takes its directories as
// server-filesystem does, and introduces itself by the same name, so fsguard
// takes it for that server. Like server-filesystem, it answers the requests
// it has read when its stdin ends, before it exits (the v2 SDK's transport
// drops them). What it does not do: MCP roots (server-to-client requests are
// gone in the 2026 era).
//
//   node dual-era-fs-server.mjs DIR...
//
// DUAL_ERA_WRITE_ANSWER makes write_file answer the 2026 era's way for work
// that has not finished:
//   task           when the request's client capabilities declare the Tasks
//                  extension (SEP-2663), as a server that offers tasks does:
//                  it writes the file a moment later and answers at once with
//                  a working task; without the extension it writes at once
//   task-always    the same whatever the capabilities (a server that ignores
//                  them)
//   confirm        asks the client to confirm first (a multi-round-trip
//                  request, SEP-2322: input_required with an elicitation and
//                  a requestState), and writes on the retry that confirms

import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { pathToFileURL } from 'node:url';

import { minimatch } from 'minimatch';
import { z } from 'zod';
import { McpServer, acceptedContent, inputRequired } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import {
  applyFileEdits, formatSize, getFileStats, headFile, moveFile, readFileContent, searchFilesWithValidation,
  setAllowedDirectories, tailFile, validatePath, writeFileContent,
} from '@modelcontextprotocol/server-filesystem/dist/lib.js';
import { expandHome, normalizePath } from '@modelcontextprotocol/server-filesystem/dist/path-utils.js';

if (process.argv.length <= 2) {
  console.error('usage: dual-era-fs-server.mjs DIR...');
  process.exit(2);
}

/** The allowed directories, as server-filesystem takes them: the name given and its real path. */
async function allowedDirectoriesOf(dirs) {
  const both = await Promise.all(dirs.map(async (dir) => {
    const absolute = path.resolve(expandHome(dir));
    const original = normalizePath(absolute);
    try {
      const resolved = normalizePath(await fs.realpath(absolute));
      return original !== resolved ? [original, resolved] : [resolved];
    } catch {
      return [original];
    }
  }));
  const accessible = [];
  for (const dir of both.flat()) {
    try {
      if ((await fs.stat(dir)).isDirectory()) accessible.push(dir);
    } catch { /* skipped, as server-filesystem skips it */ }
  }
  return accessible;
}

const allowedDirectories = await allowedDirectoriesOf(process.argv.slice(2));
if (allowedDirectories.length === 0) {
  console.error('Error: None of the specified directories are accessible');
  process.exit(1);
}
setAllowedDirectories(allowedDirectories);
const writeAnswer = process.env.DUAL_ERA_WRITE_ANSWER ?? '';

/** A tool result of `text`, as server-filesystem gives it. */
const textResult = (text) => ({ content: [{ type: 'text', text }], structuredContent: { content: text } });
const contentOutput = { content: z.string() };
const readOnly = { readOnlyHint: true, openWorldHint: false };

/** Whether the 2026-era request of `ctx` declares the Tasks extension. */
const declaresTasks = (ctx) =>
  ctx?.mcpReq?.envelope?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.['io.modelcontextprotocol/tasks'] !== undefined;

/**
 * The unfinished answer DUAL_ERA_WRITE_ANSWER asks for to a write of `args`
 * (request context `ctx`); nothing when the write is to be done now.
 */
function unfinishedWrite(validPath, args, ctx) {
  if (writeAnswer === 'task-always' || (writeAnswer === 'task' && declaresTasks(ctx))) {
    const now = new Date().toISOString();
    setTimeout(() => { writeFileContent(validPath, args.content).catch(() => {}); }, 200);
    process.stderr.write(`dual-era-fs-server: ${args.path} answered with a task\n`);
    return {
      resultType: 'task', taskId: `write-${Date.now()}`, status: 'working',
      createdAt: now, lastUpdatedAt: now, ttlMs: 60_000, pollIntervalMs: 100,
    };
  }
  if (writeAnswer !== 'confirm' || acceptedContent(ctx?.mcpReq?.inputResponses, 'confirm')?.ok === true) {
    return undefined;
  }
  return inputRequired({
    inputRequests: {
      confirm: {
        method: 'elicitation/create',
        params: {
          mode: 'form', message: `Overwrite ${args.path}?`,
          requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
        },
      },
    },
    requestState: 'dual-era-test-server',
  });
}

// ---------------------------------------------------------------------------
// server-filesystem's handlers

async function readTextFile(args) {
  const validPath = await validatePath(args.path);
  if (args.head && args.tail) throw new Error('Cannot specify both head and tail parameters simultaneously');
  const content = args.tail ? await tailFile(validPath, args.tail)
    : args.head ? await headFile(validPath, args.head) : await readFileContent(validPath);
  return textResult(content);
}

const MEDIA_TYPES = {
  '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp',
  '.bmp': 'image/bmp', '.svg': 'image/svg+xml', '.mp3': 'audio/mpeg', '.wav': 'audio/wav', '.ogg': 'audio/ogg',
  '.flac': 'audio/flac',
};

async function readMediaFile(args) {
  const validPath = await validatePath(args.path);
  const mimeType = MEDIA_TYPES[path.extname(validPath).toLowerCase()] || 'application/octet-stream';
  const data = await new Promise((resolve, reject) => {
    const chunks = [];
    createReadStream(validPath).on('data', (chunk) => chunks.push(chunk))
      .on('end', () => resolve(Buffer.concat(chunks).toString('base64'))).on('error', reject);
  });
  const item = mimeType.startsWith('image/') ? { type: 'image', data, mimeType }
    : mimeType.startsWith('audio/') ? { type: 'audio', data, mimeType }
      : { type: 'resource', resource: { uri: pathToFileURL(validPath).href, mimeType, blob: data } };
  return { content: [item], structuredContent: { content: [item] } };
}

async function readMultipleFiles(args) {
  const results = await Promise.all(args.paths.map(async (filePath) => {
    try {
      return `${filePath}:\n${await readFileContent(await validatePath(filePath))}\n`;
    } catch (error) {
      return `${filePath}: Error - ${error instanceof Error ? error.message : String(error)}`;
    }
  }));
  return textResult(results.join('\n---\n'));
}

async function listDirectoryWithSizes(args) {
  const validPath = await validatePath(args.path);
  const entries = await fs.readdir(validPath, { withFileTypes: true });
  const detailed = await Promise.all(entries.map(async (entry) => {
    try {
      const stats = await fs.stat(path.join(validPath, entry.name));
      return { name: entry.name, isDirectory: entry.isDirectory(), size: stats.size };
    } catch {
      return { name: entry.name, isDirectory: entry.isDirectory(), size: 0 };
    }
  }));
  const sorted = [...detailed].sort((a, b) => (args.sortBy === 'size' ? b.size - a.size : a.name.localeCompare(b.name)));
  const lines = sorted.map((e) => `${e.isDirectory ? '[DIR]' : '[FILE]'} ${e.name.padEnd(30)} ${e.isDirectory ? '' : formatSize(e.size).padStart(10)}`);
  const files = detailed.filter((e) => !e.isDirectory);
  const total = files.reduce((sum, e) => sum + e.size, 0);
  return textResult([...lines, '', `Total: ${files.length} files, ${detailed.length - files.length} directories`,
    `Combined size: ${formatSize(total)}`].join('\n'));
}

async function directoryTree(args) {
  const rootPath = args.path;
  const excluded = (relativePath) => args.excludePatterns.some((pattern) => (pattern.includes('*')
    ? minimatch(relativePath, pattern, { dot: true })
    : minimatch(relativePath, pattern, { dot: true }) || minimatch(relativePath, `**/${pattern}`, { dot: true })
      || minimatch(relativePath, `**/${pattern}/**`, { dot: true })));
  async function tree(currentPath) {
    const entries = await fs.readdir(await validatePath(currentPath), { withFileTypes: true });
    const result = [];
    for (const entry of entries) {
      if (excluded(path.relative(rootPath, path.join(currentPath, entry.name)))) continue;
      const data = { name: entry.name, type: entry.isDirectory() ? 'directory' : 'file' };
      if (entry.isDirectory()) data.children = await tree(path.join(currentPath, entry.name));
      result.push(data);
    }
    return result;
  }
  return textResult(JSON.stringify(await tree(rootPath), null, 2));
}

// ---------------------------------------------------------------------------
// the tools, with server-filesystem's names, titles, shapes and annotations

function makeServer() {
  const server = new McpServer({ name: 'secure-filesystem-server', version: '0.2.0' });
  const tool = (name, title, inputSchema, annotations, handler, outputSchema = contentOutput) =>
    server.registerTool(name, {
      title, inputSchema: z.object(inputSchema), ...(outputSchema && { outputSchema: z.object(outputSchema) }), annotations,
    }, handler);
  const pathOnly = { path: z.string() };
  const readShape = {
    path: z.string(),
    tail: z.number().optional().describe('If provided, returns only the last N lines of the file'),
    head: z.number().optional().describe('If provided, returns only the first N lines of the file'),
  };
  const excludePatterns = z.array(z.string()).optional().default([]);

  tool('read_file', 'Read File (Deprecated)', readShape, readOnly, readTextFile);
  tool('read_text_file', 'Read Text File', readShape, readOnly, readTextFile);
  tool('read_media_file', 'Read Media File', pathOnly, readOnly, readMediaFile, {
    content: z.array(z.union([
      z.object({ type: z.enum(['image', 'audio']), data: z.string(), mimeType: z.string() }),
      z.object({
        type: z.literal('resource'),
        resource: z.object({ uri: z.string(), mimeType: z.string().optional(), blob: z.string() }),
      }),
    ])),
  });
  tool('read_multiple_files', 'Read Multiple Files', {
    paths: z.array(z.string()).min(1).describe('Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories.'),
  }, readOnly, readMultipleFiles);
  tool('write_file', 'Write File', { path: z.string(), content: z.string() },
    { readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false }, async (args, ctx) => {
      const validPath = await validatePath(args.path);
      const unfinished = unfinishedWrite(validPath, args, ctx);
      if (unfinished !== undefined) return unfinished;
      await writeFileContent(validPath, args.content);
      return textResult(`Successfully wrote to ${args.path}`);
    }, writeAnswer.startsWith('task') ? null : contentOutput); // the SDK would check a task against it
  tool('edit_file', 'Edit File', {
    path: z.string(),
    edits: z.array(z.object({
      oldText: z.string().describe('Text to search for - must match exactly'),
      newText: z.string().describe('Text to replace with'),
    })),
    dryRun: z.boolean().default(false).describe('Preview changes using git-style diff format'),
  }, { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
  async (args) => textResult(await applyFileEdits(await validatePath(args.path), args.edits, args.dryRun)));
  tool('create_directory', 'Create Directory', pathOnly,
    { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false }, async (args) => {
      await fs.mkdir(await validatePath(args.path), { recursive: true });
      return textResult(`Successfully created directory ${args.path}`);
    });
  tool('list_directory', 'List Directory', pathOnly, readOnly, async (args) => {
    const entries = await fs.readdir(await validatePath(args.path), { withFileTypes: true });
    return textResult(entries.map((e) => `${e.isDirectory() ? '[DIR]' : '[FILE]'} ${e.name}`).join('\n'));
  });
  tool('list_directory_with_sizes', 'List Directory with Sizes', {
    path: z.string(),
    sortBy: z.enum(['name', 'size']).optional().default('name').describe('Sort entries by name or size'),
  }, readOnly, listDirectoryWithSizes);
  tool('directory_tree', 'Directory Tree', { path: z.string(), excludePatterns }, readOnly, directoryTree);
  tool('move_file', 'Move File', { source: z.string(), destination: z.string() },
    { readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false }, async (args) => {
      await moveFile(await validatePath(args.source), await validatePath(args.destination));
      return textResult(`Successfully moved ${args.source} to ${args.destination}`);
    });
  tool('search_files', 'Search Files', { path: z.string(), pattern: z.string(), excludePatterns }, readOnly, async (args) => {
    const results = await searchFilesWithValidation(await validatePath(args.path), args.pattern, allowedDirectories,
      { excludePatterns: args.excludePatterns });
    return textResult(results.length > 0 ? results.join('\n') : 'No matches found');
  });
  tool('get_file_info', 'Get File Info', pathOnly, readOnly, async (args) => {
    const info = await getFileStats(await validatePath(args.path));
    return textResult(Object.entries(info).map(([key, value]) => `${key}: ${value}`).join('\n'));
  });
  tool('list_allowed_directories', 'List Allowed Directories', {}, readOnly,
    async () => textResult(`Allowed directories:\n${allowedDirectories.join('\n')}`));
  return server;
}

// ---------------------------------------------------------------------------
// stdio that answers what it has read before it ends

/** Calls `onLine` with each whole line of what `chunks` adds, as the SDK's reader splits them. */
function lineSplitter(onLine) {
  let pending = '';
  return (chunk) => {
    pending += chunk;
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      onLine(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  };
}

/** The JSON-RPC message of `line`, or nothing. */
function messageOf(line) {
  try { return JSON.parse(line); } catch { return undefined; }
}

/**
 * The stdin to give the SDK's transport: process.stdin's bytes, ended only
 * once every request read from it has been answered or cancelled, as
 * server-filesystem (on the v1 SDK) answers the requests in flight at its
 * stdin's end; the v2 SDK's transport aborts them unanswered.
 */
function stdinEndedOnceAnswered() {
  const unanswered = new Set();
  const input = new PassThrough();
  let stdinEnded = false;
  const endIfAnswered = () => { if (stdinEnded && unanswered.size === 0) input.end(); };

  const noteRead = lineSplitter((line) => {
    const message = messageOf(line);
    if (message?.method === 'notifications/cancelled') unanswered.delete(JSON.stringify(message.params?.requestId));
    else if (typeof message?.method === 'string' && message.id !== undefined) unanswered.add(JSON.stringify(message.id));
  });
  const decoder = new StringDecoder('utf8');
  process.stdin.on('data', (chunk) => { noteRead(decoder.write(chunk)); input.write(chunk); });
  process.stdin.on('end', () => { stdinEnded = true; endIfAnswered(); });

  const noteAnswer = lineSplitter((line) => {
    const message = messageOf(line);
    if (message && ('result' in message || 'error' in message)) unanswered.delete(JSON.stringify(message.id));
  });
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (data, ...rest) => {
    noteAnswer(String(data));
    const written = write(data, ...rest);
    setImmediate(endIfAnswered);
    return written;
  };
  return input;
}

serveStdio(makeServer, { transport: new StdioServerTransport(stdinEndedOnceAnswered(), process.stdout) });

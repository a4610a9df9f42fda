#!/usr/bin/env node
// A filesystem server that speaks both eras of MCP, for eras.test.mjs: built
// on the v2 server SDK (@modelcontextprotocol/server, pinned), served with
// its serveStdio, which fixes each connection's era by its first message
// (initialize, or a request without the _meta envelope: 2025; a request with
// it: 2026-07-28). It offers server-filesystem's tools under the same names,
// with the same argument shapes and texts: it calls server-filesystem's own
// library (validatePath, applyFileEdits, ...) and introduces itself as
// server-filesystem does, so fsguard takes it for that server.
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

import fs from 'node:fs/promises';
import path from 'node:path';

import { McpServer, acceptedContent, fromJsonSchema, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import {
  applyFileEdits, getFileStats, headFile, readFileContent, setAllowedDirectories, tailFile,
  validatePath, writeFileContent,
} from '@modelcontextprotocol/server-filesystem/dist/lib.js';

const directories = await Promise.all(process.argv.slice(2).map((dir) => fs.realpath(path.resolve(dir))));
if (directories.length === 0) {
  console.error('usage: dual-era-fs-server.mjs DIR...');
  process.exit(2);
}
setAllowedDirectories(directories);
const writeAnswer = process.env.DUAL_ERA_WRITE_ANSWER ?? '';

const pathOnly = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const textResult = (text) => ({ content: [{ type: 'text', text }], structuredContent: { content: text } });
const contentOutput = fromJsonSchema({ type: 'object', properties: { content: { type: 'string' } }, required: ['content'] });

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

function makeServer() {
  const server = new McpServer({ name: 'secure-filesystem-server', version: '0.2.0' });
  const readText = async (args) => {
    const validPath = await validatePath(args.path);
    if (args.head && args.tail) throw new Error('Cannot specify both head and tail parameters simultaneously');
    const content = args.tail ? await tailFile(validPath, args.tail)
      : args.head ? await headFile(validPath, args.head) : await readFileContent(validPath);
    return textResult(content);
  };
  const readShape = fromJsonSchema({
    type: 'object',
    properties: { path: { type: 'string' }, tail: { type: 'number' }, head: { type: 'number' } },
    required: ['path'],
  });
  server.registerTool('read_file', { inputSchema: readShape, outputSchema: contentOutput }, readText);
  server.registerTool('read_text_file', { inputSchema: readShape, outputSchema: contentOutput }, readText);
  server.registerTool('write_file', {
    inputSchema: fromJsonSchema({
      type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'],
    }),
  }, async (args, ctx) => {
    const validPath = await validatePath(args.path);
    const unfinished = unfinishedWrite(validPath, args, ctx);
    if (unfinished !== undefined) return unfinished;
    await writeFileContent(validPath, args.content);
    return textResult(`Successfully wrote to ${args.path}`);
  });
  server.registerTool('edit_file', {
    inputSchema: fromJsonSchema({
      type: 'object',
      properties: {
        path: { type: 'string' },
        edits: {
          type: 'array',
          items: {
            type: 'object', properties: { oldText: { type: 'string' }, newText: { type: 'string' } },
            required: ['oldText', 'newText'],
          },
        },
        dryRun: { type: 'boolean' },
      },
      required: ['path', 'edits'],
    }),
    outputSchema: contentOutput,
  }, async (args) => {
    const validPath = await validatePath(args.path);
    return textResult(await applyFileEdits(validPath, args.edits, args.dryRun ?? false));
  });
  server.registerTool('get_file_info', { inputSchema: fromJsonSchema(pathOnly), outputSchema: contentOutput }, async (args) => {
    const info = await getFileStats(await validatePath(args.path));
    return textResult(Object.entries(info).map(([key, value]) => `${key}: ${value}`).join('\n'));
  });
  server.registerTool('list_allowed_directories', {
    inputSchema: fromJsonSchema({ type: 'object', properties: {} }),
    outputSchema: contentOutput,
  }, async () => textResult(`Allowed directories:\n${directories.join('\n')}`));
  return server;
}

serveStdio(makeServer);

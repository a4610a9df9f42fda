// What the texts fsguard keeps of whole reads cost on a real repository.
//
// Reads every file git tracks in DIR (default: this repository) whole,
// through fsguard in front of the pinned server-filesystem, twice: once with
// the default text budget and once with kept_text_total_bytes 0. Reports
// fsguard's resident memory (VmRSS, after the heap trim that follows large
// messages) at the end of each run, and what the kept texts take by
// fsguard's own rule (valid UTF-8, at most kept_text_file_bytes, identical
// contents once, 128 bytes of bookkeeping each).
//
// Usage: node scripts/kept-texts.mjs [DIR]        (FSGUARD_BIN overrides build/fsguard)

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '../tests/integration/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { StdioClientTransport } from '../tests/integration/node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = path.join(ROOT, 'tests/integration/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const FSGUARD = process.env.FSGUARD_BIN || path.join(ROOT, 'build/fsguard');
const FILE_BYTES = 1024 * 1024; // the default kept_text_file_bytes
const ENTRY_BYTES = 128;

const dir = fs.realpathSync(process.argv[2] ?? ROOT);
const files = execFileSync('git', ['-C', dir, 'ls-files', '-z'], { encoding: 'utf8' })
  .split('\0').filter(Boolean).map((name) => path.join(dir, name))
  .filter((file) => fs.statSync(file, { throwIfNoEntry: false })?.isFile());

const rssKiB = (pid) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function run(budget) {
  const config = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fsguard-kept-')), 'fsguard.json');
  fs.writeFileSync(config, JSON.stringify({ kept_text_total_bytes: budget }));
  const transport = new StdioClientTransport({
    command: FSGUARD, args: ['--config', config, '--', process.execPath, SERVER, dir], stderr: 'pipe',
  });
  const client = new Client({ name: 'fsguard-kept-texts', version: '1' });
  await client.connect(transport);
  let read = 0;
  for (const file of files) {
    const result = await client.callTool({ name: 'read_text_file', arguments: { path: file } });
    read += result.isError ? 0 : 1;
  }
  await sleep(3000); // fsguard hands large-message memory back 2 s after the last one
  const rss = rssKiB(transport.pid);
  await client.close();
  fs.rmSync(path.dirname(config), { recursive: true, force: true });
  return { read, rss };
}

const decoder = new TextDecoder('utf-8', { fatal: true });
const seen = new Set();
let keptBytes = 0;
let kept = 0;
let total = 0;
for (const file of files) {
  const bytes = fs.readFileSync(file);
  total += bytes.length;
  if (bytes.length > FILE_BYTES) continue;
  try {
    decoder.decode(bytes);
  } catch {
    continue; // shown lossily: not kept
  }
  const key = bytes.toString('base64');
  if (seen.has(key)) continue;
  seen.add(key);
  kept += 1;
  keptBytes += bytes.length + ENTRY_BYTES;
}

const withTexts = await run(32 * 1024 * 1024);
const without = await run(0);
const mib = (bytes) => (bytes / (1024 * 1024)).toFixed(2);
console.log(`${dir}: ${files.length} files, ${mib(total)} MiB, read whole through fsguard (${withTexts.read} answered)`);
console.log(`kept texts by fsguard's rule: ${kept} texts, ${mib(keptBytes)} MiB`);
console.log(`fsguard VmRSS at the end: ${(withTexts.rss / 1024).toFixed(1)} MiB with the default budget, `
  + `${(without.rss / 1024).toFixed(1)} MiB with kept_text_total_bytes 0 `
  + `(difference ${((withTexts.rss - without.rss) / 1024).toFixed(1)} MiB)`);

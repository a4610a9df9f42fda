// The docs against the program they describe (issue 18, item 5): options and
// config keys are written in several places (fsguard --help, the man page,
// docs/configuration.md, configs/fsguard.schema.json, --print-config), and
// this test keeps them in step:
//
//   - every option and environment variable of `fsguard --help` is in the
//     man page and in docs/configuration.md, and every option the man page
//     describes is one of --help's;
//   - the config keys of the schema, of --print-config and of the key table
//     in docs/configuration.md are the same, both ways; the schema's defaults
//     are the table's; the man page names every key;
//   - the tool spec keys of the schema are the spec-key table's, both ways;
//   - docs/clients.md shows each agent config of configs/ verbatim;
//   - every relative link in README.md, ARCHITECTURE.md, CONTRIBUTING.md and
//     docs/*.md names a file that exists, and an #anchor names a heading
//     there.
//
// Needs only node and the built binary (no npm packages).
//
//   node --test docs.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// Resolved here: fsguard runs in a directory of its own.
const FSGUARD_BIN = path.resolve(process.env.FSGUARD_BIN || path.join(ROOT, 'build', 'fsguard'));

const read = (relative) => fs.readFileSync(path.join(ROOT, relative), 'utf8');

/** The man page with roff's escaped hyphens and font changes taken out. */
function manText() {
  return read('proxy/app/fsguard.1').replace(/\\-/g, '-').replace(/\\f[BIRP]/g, '');
}

/** Runs fsguard with `args` in an empty directory, without FSGUARD_* variables; returns stdout. */
function fsguard(args) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FSGUARD_')));
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'fsguard-docs-'));
  try {
    return execFileSync(FSGUARD_BIN, args, { cwd, env, encoding: 'utf8', timeout: 10_000 });
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}

/** Whether `text` holds `word` as a whole token (not part of a longer option or name). */
function hasToken(text, word) {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w-])${escaped}(?![\\w-])`).test(text);
}

/** The options of `fsguard --help`: each line of its Options section that starts with one. */
function helpOptions(help) {
  const section = help.slice(help.indexOf('Options:'));
  const options = [];
  for (const line of section.split('\n')) {
    const match = /^\s+(?:(-\w), )?(--[\w-]+)/.exec(line);
    if (match) {
      if (match[1]) options.push(match[1]);
      options.push(match[2]);
    }
  }
  return options;
}

/** The lines of the Markdown table that follows the header row starting with `| <first> |`. */
function tableRows(markdown, first) {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`| ${first} |`));
  assert.ok(start >= 0, `a table whose header starts with "| ${first} |"`);
  const rows = [];
  for (let index = start + 2; index < lines.length && lines[index].startsWith('|'); ++index) {
    rows.push(lines[index].split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim()));
  }
  return rows;
}

/** The backticked name at the start of a table cell, e.g. "`role` (required)" -> "role". */
const cellName = (cell) => /^`([^`]+)`/.exec(cell)?.[1];

const sorted = (values) => [...values].sort();

test('every option of fsguard --help is in the man page and in docs/configuration.md', () => {
  const help = fsguard(['--help']);
  const options = helpOptions(help);
  assert.ok(options.includes('--config') && options.includes('-h'), `options found in --help: ${options}`);
  const man = manText();
  const configuration = read('docs/configuration.md');
  const missing = [];
  for (const option of options) {
    if (!hasToken(man, option)) missing.push(`${option} is not in proxy/app/fsguard.1`);
    if (!hasToken(configuration, option)) missing.push(`${option} is not in docs/configuration.md`);
  }
  assert.deepEqual(missing, []);
});

test('the man page describes no option that fsguard --help lacks', () => {
  const options = new Set(helpOptions(fsguard(['--help'])));
  const man = manText();
  const section = man.slice(man.indexOf('.SH OPTIONS'), man.indexOf('.SH', man.indexOf('.SH OPTIONS') + 1));
  const described = [];
  const lines = section.split('\n');
  lines.forEach((line, index) => {
    if (line === '.TP') described.push(...(lines[index + 1].match(/(?<![\w-])--?[A-Za-z][\w-]*/g) ?? []));
  });
  assert.ok(described.length > 0, 'the OPTIONS section has .TP entries');
  assert.deepEqual(described.filter((option) => !options.has(option)), []);
});

test('every environment variable of fsguard --help is in the man page and in docs/configuration.md', () => {
  const variables = new Set(fsguard(['--help']).match(/\bFSGUARD_\w+/g));
  assert.ok(variables.size > 0, 'fsguard --help names its environment variables');
  const man = manText();
  const environment = man.slice(man.indexOf('.SH ENVIRONMENT'), man.indexOf('.SH', man.indexOf('.SH ENVIRONMENT') + 1));
  const documented = new Set(tableRows(read('docs/configuration.md'), 'Variable').map((row) => cellName(row[0])));
  const missing = [];
  for (const variable of variables) {
    if (!hasToken(environment, variable)) missing.push(`${variable} is not in the man page's ENVIRONMENT`);
    if (!documented.has(variable)) missing.push(`${variable} is not in docs/configuration.md's variable table`);
  }
  assert.deepEqual(missing, []);
});

test('the config keys of the schema, of --print-config and of docs/configuration.md are the same', () => {
  const schema = JSON.parse(read('configs/fsguard.schema.json'));
  const schemaKeys = sorted(Object.keys(schema.properties).filter((key) => key !== '$schema'));
  const printed = sorted(Object.keys(JSON.parse(fsguard(['--print-config']))));
  const documented = sorted(tableRows(read('docs/configuration.md'), 'Key').map((row) => cellName(row[0])));
  assert.deepEqual(printed, schemaKeys, '--print-config against the schema');
  assert.deepEqual(documented, schemaKeys, "docs/configuration.md's key table against the schema");
});

test("the schema's defaults are the defaults docs/configuration.md gives", () => {
  const schema = JSON.parse(read('configs/fsguard.schema.json'));
  const rows = new Map(tableRows(read('docs/configuration.md'), 'Key').map((row) => [cellName(row[0]), row]));
  const wrong = [];
  for (const [key, spec] of Object.entries(schema.properties)) {
    if (!('default' in spec) || !rows.has(key)) continue;
    const expected = '`' + JSON.stringify(spec.default) + '`';
    const cell = rows.get(key)[2];
    if (!cell.startsWith(expected)) wrong.push(`${key}: the table says ${cell}, the schema ${expected}`);
  }
  assert.deepEqual(wrong, []);
});

test('the man page names every config key', () => {
  const schema = JSON.parse(read('configs/fsguard.schema.json'));
  const man = manText();
  const section = man.slice(man.indexOf('.SH CONFIG FILE'), man.indexOf('.SH', man.indexOf('.SH CONFIG FILE') + 1));
  const missing = Object.keys(schema.properties)
    .filter((key) => key !== '$schema' && !hasToken(section, key));
  assert.deepEqual(missing, []);
});

test("the tools map's spec keys in the schema and in docs/configuration.md are the same", () => {
  const schema = JSON.parse(read('configs/fsguard.schema.json'));
  const schemaKeys = sorted(Object.keys(schema.$defs.tool.properties));
  const documented = sorted(tableRows(read('docs/configuration.md'), 'Spec key').map((row) => cellName(row[0])));
  assert.deepEqual(documented, schemaKeys);
});

test('docs/clients.md shows each agent config exactly as configs/ has it', () => {
  const clients = read('docs/clients.md');
  const files = fs.readdirSync(path.join(ROOT, 'configs'))
    .filter((name) => !name.startsWith('fsguard.') && /\.(json|toml)$/.test(name));
  assert.ok(files.length >= 5, `agent configs found: ${files}`);
  const missing = files.filter((name) => {
    const text = read(`configs/${name}`);
    // A TOML file starts with comments that clients.md says in prose: compare from the table on.
    const shown = name.endsWith('.toml') ? text.slice(text.indexOf('[')) : text;
    return !clients.includes(`\n${shown}\`\`\``);
  });
  assert.deepEqual(missing, [], 'configs/ files not shown verbatim in a code block of docs/clients.md');
});

// ---------------------------------------------------------------------------
// links

/** The anchor GitHub makes of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown file: its headings (outside code blocks) and its <a id> tags. */
function anchorsOf(file) {
  const anchors = new Set();
  const counts = new Map();
  let fence = null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence === null ? marker : null;
      continue;
    }
    if (fence !== null) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const seen = counts.get(base) ?? 0;
      counts.set(base, seen + 1);
      anchors.add(seen === 0 ? base : `${base}-${seen}`);
    }
    for (const match of line.matchAll(/<a (?:id|name)="([^"]+)"/g)) anchors.add(match[1]);
  }
  return anchors;
}

/** The Markdown files the links of which must resolve. */
function markdownFiles() {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', 'ARCHITECTURE.md', 'CONTRIBUTING.md', ...docs.map((name) => `docs/${name}`)];
}

/** The link targets of `text` outside code: [text](target) and [text]: target. */
function linkTargets(text) {
  const prose = text.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '``');
  const targets = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1]);
  targets.push(...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((match) => match[1]));
  return targets;
}

test('every relative link in the Markdown docs names a file that exists, and a heading there', () => {
  const broken = [];
  for (const file of markdownFiles()) {
    for (const target of linkTargets(read(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [where, anchor] = target.split('#');
      const resolved = where === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(where));
      if (!resolved.startsWith(ROOT + path.sep) && resolved !== ROOT) {
        broken.push(`${file}: ${target} leaves the repository`);
      } else if (!fs.existsSync(resolved)) {
        broken.push(`${file}: ${target}: no such file`);
      } else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
        broken.push(`${file}: ${target}: no such heading`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

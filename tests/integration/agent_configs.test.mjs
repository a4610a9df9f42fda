// The shipped configs/ work as written:
//  - each agent config (Claude Desktop, Claude Code, Cursor, VS Code, Codex) is
//    parsed the way its agent reads it, launched with the official SDK client's
//    StdioClientTransport, and shown to guard writes;
//  - each configs/fsguard*.json example is valid under configs/fsguard.schema.json
//    AND accepted by the fsguard binary, and broken configs are refused by both.
//
//   node --test --test-concurrency=1 agent_configs.test.mjs      (FSGUARD_BIN=/path/to/fsguard)
//
// No network: the `npx -y @modelcontextprotocol/server-filesystem@<version>` part
// of each agent config is replaced by the pinned copy in node_modules, after
// checking that <version> is the one pinned in package.json.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  FSGUARD_BIN, SERVER_FS_SCRIPT, TESTS_DIR,
  callTool, cleanEnv, connect, makeWorkspace, textOf, vetoCode,
} from './lib/harness.mjs';

const REPO = path.resolve(TESTS_DIR, '..', '..');
const CONFIGS = path.join(REPO, 'configs');
const SCHEMA_FILE = path.join(CONFIGS, 'fsguard.schema.json');

/** The project directory placeholder the agent configs use. */
const PLACEHOLDER = '/path/to/your/project';
const SERVER_PACKAGE = '@modelcontextprotocol/server-filesystem';
const PINNED_VERSION = JSON.parse(fs.readFileSync(path.join(TESTS_DIR, 'package.json'), 'utf8'))
  .dependencies[SERVER_PACKAGE];

// ---------------------------------------------------------------------------
// JSON with comments (what fsguard's parser accepts: nlohmann ignore_comments)

/** `text` with // and /* *\/ comments outside strings replaced by spaces. */
function stripJsonComments(text) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') {
      const start = i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      out += text.slice(start, ++i);
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new SyntaxError('unterminated /* comment');
      out += ' ';
      i = end + 2;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const readJsonc = (file) => JSON.parse(stripJsonComments(fs.readFileSync(file, 'utf8')));

// ---------------------------------------------------------------------------
// a TOML parser for the subset the Codex config uses

/**
 * Parses `text` as TOML, for the subset used in configs/: comments, [dotted.table]
 * headers, bare or quoted keys, basic and literal strings, integers, booleans,
 * arrays (over several lines too) and inline tables. Throws on anything else,
 * so a config that grows beyond the subset fails loudly instead of parsing wrong.
 */
function parseToml(text) {
  const root = {};
  let table = root;
  let i = 0;
  const fail = (msg) => {
    const line = text.slice(0, i).split('\n').length;
    throw new SyntaxError(`TOML line ${line}: ${msg}`);
  };
  const skipSpace = () => { while (text[i] === ' ' || text[i] === '\t') i++; };
  const skipComment = () => { if (text[i] === '#') while (i < text.length && text[i] !== '\n') i++; };
  // inside arrays: spaces, newlines and comments
  const skipBlank = () => {
    for (;;) {
      const before = i;
      skipSpace();
      skipComment();
      if (text[i] === '\n' || text[i] === '\r') i++;
      if (i === before) return;
    }
  };
  const endOfLine = () => {
    skipSpace();
    skipComment();
    if (text[i] === '\r') i++;
    if (i < text.length && text[i] !== '\n') fail(`unexpected ${JSON.stringify(text[i])}`);
    i++;
  };
  const basicString = () => {
    i++; // opening "
    let s = '';
    for (;;) {
      const c = text[i++];
      if (c === undefined || c === '\n') fail('unterminated string');
      if (c === '"') return s;
      if (c !== '\\') { s += c; continue; }
      const e = text[i++];
      const simple = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', '"': '"', '\\': '\\' };
      if (e in simple) s += simple[e];
      else if (e === 'u' || e === 'U') {
        const n = e === 'u' ? 4 : 8;
        const hex = text.slice(i, i + n);
        if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== n) fail('bad \\u escape');
        s += String.fromCodePoint(parseInt(hex, 16));
        i += n;
      } else fail(`unknown escape \\${e}`);
    }
  };
  const literalString = () => {
    const end = text.indexOf("'", i + 1);
    const nl = text.indexOf('\n', i + 1);
    if (end < 0 || (nl >= 0 && nl < end)) fail('unterminated literal string');
    const s = text.slice(i + 1, end);
    i = end + 1;
    return s;
  };
  const key = () => {
    skipSpace();
    if (text[i] === '"') return basicString();
    if (text[i] === "'") return literalString();
    const m = /^[A-Za-z0-9_-]+/.exec(text.slice(i));
    if (!m) fail('expected a key');
    i += m[0].length;
    return m[0];
  };
  const dottedKey = () => {
    const parts = [key()];
    for (;;) {
      skipSpace();
      if (text[i] !== '.') return parts;
      i++;
      parts.push(key());
    }
  };
  const descend = (from, parts) => {
    let t = from;
    for (const p of parts) {
      if (!(p in t)) t[p] = {};
      else if (typeof t[p] !== 'object' || t[p] === null || Array.isArray(t[p])) fail(`${p} is not a table`);
      t = t[p];
    }
    return t;
  };
  const assign = (target, parts, value) => {
    const t = descend(target, parts.slice(0, -1));
    const last = parts[parts.length - 1];
    if (Object.hasOwn(t, last)) fail(`duplicate key ${parts.join('.')}`);
    t[last] = value;
  };
  const value = () => {
    skipSpace();
    const c = text[i];
    if (c === '"') {
      if (text.startsWith('"""', i)) fail('multi-line strings are not supported');
      return basicString();
    }
    if (c === "'") {
      if (text.startsWith("'''", i)) fail('multi-line strings are not supported');
      return literalString();
    }
    if (c === '[') {
      i++;
      const arr = [];
      for (;;) {
        skipBlank();
        if (text[i] === ']') { i++; return arr; }
        arr.push(value());
        skipBlank();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return arr; }
        fail('expected , or ] in an array');
      }
    }
    if (c === '{') {
      i++;
      const obj = {};
      skipSpace();
      if (text[i] === '}') { i++; return obj; }
      for (;;) {
        const parts = dottedKey();
        skipSpace();
        if (text[i] !== '=') fail('expected = in an inline table');
        i++;
        assign(obj, parts, value());
        skipSpace();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return obj; }
        fail('expected , or } in an inline table');
      }
    }
    const m = /^(true|false|[+-]?(0|[1-9](_?[0-9])*))(?=[\s,\]}#]|$)/.exec(text.slice(i));
    if (!m) fail(`unsupported value starting ${JSON.stringify(text.slice(i, i + 12))}`);
    i += m[0].length;
    if (m[1] === 'true') return true;
    if (m[1] === 'false') return false;
    return Number(m[1].replaceAll('_', ''));
  };

  while (i < text.length) {
    skipSpace();
    if (text[i] === '#' || text[i] === '\n' || text[i] === '\r') { endOfLine(); continue; }
    if (i >= text.length) break;
    if (text[i] === '[') {
      if (text[i + 1] === '[') fail('arrays of tables are not supported');
      i++;
      const parts = dottedKey();
      skipSpace();
      if (text[i] !== ']') fail('expected ] after a table name');
      i++;
      table = descend(root, parts);
      endOfLine();
      continue;
    }
    const parts = dottedKey();
    skipSpace();
    if (text[i] !== '=') fail('expected =');
    i++;
    assign(table, parts, value());
    endOfLine();
  }
  return root;
}

// ---------------------------------------------------------------------------
// a JSON Schema (draft 2020-12) validator for the keywords fsguard.schema.json uses

const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'default', 'examples', '$defs']);
const typeOf = (v) => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
};
const typeMatches = (v, t) => typeOf(v) === t || (t === 'number' && typeOf(v) === 'integer');
const deepEqual = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Errors of `instance` under `schema` (empty: valid). Supports type, enum,
 * const, minimum, maximum, minLength, pattern, properties, patternProperties,
 * additionalProperties, required, items, if/then/else and local $ref; throws on
 * any other keyword, so the schema cannot use one this validator would ignore.
 */
function validate(instance, schema, root = schema, where = '$') {
  if (schema === true) return [];
  if (schema === false) return [`${where}: no value is allowed here`];
  const errors = [];
  for (const [kw, arg] of Object.entries(schema)) {
    if (ANNOTATIONS.has(kw)) continue;
    switch (kw) {
      case '$ref': {
        if (!arg.startsWith('#/')) throw new Error(`unsupported $ref ${arg}`);
        const target = arg.slice(2).split('/').reduce((node, part) => node?.[part], root);
        if (target === undefined) throw new Error(`dangling $ref ${arg}`);
        errors.push(...validate(instance, target, root, where));
        break;
      }
      case 'type': {
        const types = Array.isArray(arg) ? arg : [arg];
        if (!types.some((t) => typeMatches(instance, t))) {
          errors.push(`${where}: must be of type ${types.join(' or ')}, not ${typeOf(instance)}`);
        }
        break;
      }
      case 'enum':
        if (!arg.some((v) => deepEqual(v, instance))) errors.push(`${where}: must be one of ${JSON.stringify(arg)}`);
        break;
      case 'const':
        if (!deepEqual(arg, instance)) errors.push(`${where}: must be ${JSON.stringify(arg)}`);
        break;
      case 'minimum':
        if (typeof instance === 'number' && instance < arg) errors.push(`${where}: must be at least ${arg}`);
        break;
      case 'maximum':
        if (typeof instance === 'number' && instance > arg) errors.push(`${where}: must be at most ${arg}`);
        break;
      case 'pattern':
        if (typeof instance === 'string' && !new RegExp(arg, 'u').test(instance)) {
          errors.push(`${where}: must match /${arg}/`);
        }
        break;
      case 'minLength':
        if (typeof instance === 'string' && [...instance].length < arg) {
          errors.push(`${where}: must have at least ${arg} characters`);
        }
        break;
      case 'required':
        if (typeOf(instance) === 'object') {
          for (const k of arg) if (!Object.hasOwn(instance, k)) errors.push(`${where}: missing required key "${k}"`);
        }
        break;
      case 'properties':
        if (typeOf(instance) === 'object') {
          for (const [k, sub] of Object.entries(arg)) {
            if (Object.hasOwn(instance, k)) errors.push(...validate(instance[k], sub, root, `${where}.${k}`));
          }
        }
        break;
      case 'patternProperties':
        if (typeOf(instance) === 'object') {
          for (const [pattern, sub] of Object.entries(arg)) {
            const re = new RegExp(pattern, 'u');
            for (const k of Object.keys(instance)) {
              if (re.test(k)) errors.push(...validate(instance[k], sub, root, `${where}.${k}`));
            }
          }
        }
        break;
      case 'additionalProperties':
        if (typeOf(instance) === 'object') {
          const named = Object.keys(schema.properties ?? {});
          const patterns = Object.keys(schema.patternProperties ?? {}).map((p) => new RegExp(p, 'u'));
          for (const k of Object.keys(instance)) {
            if (named.includes(k) || patterns.some((re) => re.test(k))) continue;
            if (arg === false) errors.push(`${where}: unknown key "${k}"`);
            else errors.push(...validate(instance[k], arg, root, `${where}.${k}`));
          }
        }
        break;
      case 'items':
        if (Array.isArray(instance)) {
          instance.forEach((item, n) => errors.push(...validate(item, arg, root, `${where}[${n}]`)));
        }
        break;
      case 'if': {
        const branch = validate(instance, arg, root, where).length === 0 ? schema.then : schema.else;
        if (branch !== undefined) errors.push(...validate(instance, branch, root, where));
        break;
      }
      case 'then':
      case 'else':
        break; // applied by "if"
      default:
        throw new Error(`the test's validator does not support the keyword "${kw}" (at ${where})`);
    }
  }
  return errors;
}

// ---------------------------------------------------------------------------
// the fsguard binary as the authority on configs

/**
 * Starts fsguard with `--config file` in front of the pinned server, with its
 * stdin already closed, and returns {accepted, status, stderr}. A config fsguard
 * refuses ends the run with status 2 before the upstream starts; an accepted one
 * runs the session, which ends at once because the client (stdin) is gone.
 * HOME is `dir`, so an example's "~/..." files land there, not in the tester's home.
 */
function fsguardAcceptsConfig(file, dir) {
  const r = spawnSync(FSGUARD_BIN, ['--config', file, '--', process.execPath, SERVER_FS_SCRIPT, dir], {
    input: '', encoding: 'utf8', timeout: 15_000, env: cleanEnv({ HOME: dir }),
  });
  if (r.error) throw r.error;
  return { accepted: r.status !== 2, status: r.status, stderr: r.stderr };
}

/** True if fsguard --help documents --check-config. */
function hasCheckConfig() {
  const r = spawnSync(FSGUARD_BIN, ['--help'], { encoding: 'utf8', timeout: 5_000 });
  return /--check-config\b/.test(`${r.stdout}${r.stderr}`);
}

// ---------------------------------------------------------------------------
// agent configs

const AGENT_CONFIGS = [
  { agent: 'Claude Desktop', file: 'claude_desktop_config.json', servers: (c) => c.mcpServers },
  { agent: 'Claude Code', file: 'claude-code.mcp.json', servers: (c) => c.mcpServers, type: 'stdio' },
  { agent: 'Cursor', file: 'cursor.mcp.json', servers: (c) => c.mcpServers },
  { agent: 'VS Code', file: 'vscode.mcp.json', servers: (c) => c.servers, type: 'stdio' },
  { agent: 'Codex', file: 'codex.config.toml', servers: (c) => c.mcp_servers, toml: true },
];

/** `@scope/name@version` -> {name, version}. */
function splitPackageSpec(spec) {
  const at = spec.lastIndexOf('@');
  return at > 0 ? { name: spec.slice(0, at), version: spec.slice(at + 1) } : { name: spec, version: undefined };
}

/**
 * The launch of one server entry, made runnable here: fsguard -> FSGUARD_BIN,
 * the npx run of server-filesystem -> node + the pinned copy, the placeholder ->
 * `dir`. Returns {command, args, env, optionArgs, upstream, packageSpec}.
 */
function localLaunch(entry, dir) {
  assert.equal(entry.command, 'fsguard', 'the agent starts fsguard');
  assert.ok(Array.isArray(entry.args) && entry.args.every((a) => typeof a === 'string'), 'args is an array of strings');
  const dashes = entry.args.indexOf('--');
  assert.ok(dashes >= 0, 'the upstream command follows "--"');
  const optionArgs = entry.args.slice(0, dashes);
  const upstream = entry.args.slice(dashes + 1);

  assert.equal(upstream[0], 'npx', 'the upstream is started with npx');
  let at = 1;
  while (upstream[at] === '-y' || upstream[at] === '--yes') at++;
  assert.ok(at > 1, 'npx runs with -y, so it never stops to ask');
  const packageSpec = upstream[at];
  const { name, version } = splitPackageSpec(packageSpec);
  assert.equal(name, SERVER_PACKAGE, 'npx runs server-filesystem');
  assert.equal(version, PINNED_VERSION,
    `the config pins ${SERVER_PACKAGE} at the version the tests use (tests/integration/package.json)`);
  const serverArgs = upstream.slice(at + 1);
  assert.ok(serverArgs.includes(PLACEHOLDER), `the project directory is the placeholder ${PLACEHOLDER}`);

  const localUpstream = [process.execPath, SERVER_FS_SCRIPT, ...serverArgs.map((a) => (a === PLACEHOLDER ? dir : a))];
  const env = entry.env ?? {};
  assert.equal(typeOf(env), 'object', 'env is an object');
  for (const [k, v] of Object.entries(env)) assert.equal(typeof v, 'string', `env.${k} is a string`);
  return {
    command: FSGUARD_BIN,
    args: [...optionArgs, '--', ...localUpstream],
    env,
    optionArgs,
    upstream: localUpstream,
    packageSpec,
  };
}

test('the pinned server-filesystem version is known', () => {
  assert.match(PINNED_VERSION ?? '', /^\d+\.\d+\.\d+$/, `package.json pins ${SERVER_PACKAGE} to an exact version`);
  const installed = JSON.parse(fs.readFileSync(
    path.join(path.dirname(SERVER_FS_SCRIPT), '..', 'package.json'), 'utf8')).version;
  assert.equal(installed, PINNED_VERSION, 'node_modules holds the pinned version (run scripts/setup.sh)');
});

test('the TOML subset parser reads what the Codex config needs and refuses the rest', () => {
  const parsed = parseToml([
    '# comment',
    '[mcp_servers.fs]  # trailing comment',
    'command = "fsguard"',
    'args = [',
    '  "--", # a comment inside an array',
    '  \'literal\\path\', "tab\\tquote\\"",',
    ']',
    'env = { FSGUARD_MODE = "warn", "quoted key" = "x" }',
    'startup_timeout_sec = 60',
    'enabled = true',
    '[mcp_servers."other.name"]',
    'command = "x"',
  ].join('\n'));
  assert.deepEqual(parsed, {
    mcp_servers: {
      fs: {
        command: 'fsguard',
        args: ['--', 'literal\\path', 'tab\tquote"'],
        env: { FSGUARD_MODE: 'warn', 'quoted key': 'x' },
        startup_timeout_sec: 60,
        enabled: true,
      },
      'other.name': { command: 'x' },
    },
  });
  for (const bad of ['a = 1\na = 2', 'a = "unterminated', 'a = 1.5', '[[t]]', 'a = """x"""', 'a = 1 b']) {
    assert.throws(() => parseToml(bad), SyntaxError, JSON.stringify(bad));
  }
});

// docs.test.mjs checks that docs/clients.md shows each of these configs word for word.

for (const spec of AGENT_CONFIGS) {
  test(`${spec.agent}: configs/${spec.file} starts fsguard in front of server-filesystem, and it guards writes`, async (t) => {
    const text = fs.readFileSync(path.join(CONFIGS, spec.file), 'utf8');
    const parsed = spec.toml ? parseToml(text) : JSON.parse(text); // agent JSON configs are strict JSON
    const servers = spec.servers(parsed);
    assert.equal(typeOf(servers), 'object', 'the config has a servers table');
    const names = Object.keys(servers);
    assert.deepEqual(names, ['fs'], 'one server, named fs');
    const entry = servers.fs;
    if (spec.type) assert.equal(entry.type, spec.type, `${spec.agent} needs "type": "${spec.type}"`);

    const ws = makeWorkspace({ 'notes.txt': 'keep me\n' });
    let s;
    t.after(async () => {
      if (s) await s.close();
      ws.cleanup();
    });
    const launch = localLaunch(entry, ws.dir);
    assert.equal(launch.packageSpec, `${SERVER_PACKAGE}@${PINNED_VERSION}`);

    // connect() runs StdioClientTransport({command: FSGUARD_BIN, args: [...optionArgs, '--', ...upstream], env}).
    s = await connect({ dir: ws.dir, extraArgs: launch.optionArgs, upstream: launch.upstream, env: launch.env });
    assert.equal(s.client.getServerVersion()?.name, 'secure-filesystem-server', 'initialize went through fsguard');

    const { tools } = await s.client.listTools();
    const toolNames = tools.map((x) => x.name);
    for (const name of ['write_file', 'read_text_file', 'edit_file']) {
      assert.ok(toolNames.includes(name), `tools/list offers ${name}: ${toolNames.join(', ')}`);
    }

    const allowed = await callTool(s.client, 'list_allowed_directories', {});
    assert.ok(textOf(allowed).includes(ws.dir), `the placeholder became the project directory: ${textOf(allowed)}`);

    const notes = ws.file('notes.txt');
    const blind = await callTool(s.client, 'write_file', { path: notes, content: 'clobbered\n' });
    assert.equal(blind.isError, true, `the blind write is refused: ${JSON.stringify(blind)}`);
    assert.equal(vetoCode(blind), 'not_read', textOf(blind));
    assert.equal(fs.readFileSync(notes, 'utf8'), 'keep me\n', 'the file is unchanged on disk');

    const read = await callTool(s.client, 'read_text_file', { path: notes });
    assert.equal(textOf(read), 'keep me\n');
    const informed = await callTool(s.client, 'write_file', { path: notes, content: 'updated\n' });
    assert.equal(vetoCode(informed), undefined, `a write after the read goes through: ${textOf(informed)}`);
    assert.equal(fs.readFileSync(notes, 'utf8'), 'updated\n');
  });
}

// ---------------------------------------------------------------------------
// fsguard config examples and the schema

const SCHEMA = JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8'));
const EXAMPLES = fs.readdirSync(CONFIGS)
  .filter((f) => /^fsguard.*\.json$/.test(f) && f !== path.basename(SCHEMA_FILE))
  .sort();

test('the schema is a draft 2020-12 schema the validator fully understands', () => {
  assert.equal(SCHEMA.$schema, 'https://json-schema.org/draft/2020-12/schema');
  assert.deepEqual(validate({}, SCHEMA), [], 'an empty config is valid (every key is optional)');
  assert.ok(EXAMPLES.length >= 2, `configs/ has fsguard*.json examples: ${EXAMPLES.join(', ')}`);
});

for (const example of EXAMPLES) {
  test(`configs/${example} is valid under the schema and accepted by fsguard`, (t) => {
    const file = path.join(CONFIGS, example);
    const config = readJsonc(file);
    assert.deepEqual(validate(config, SCHEMA), [], `${example} validates`);
    assert.equal(config.$schema, './fsguard.schema.json', 'the example points editors at the schema');

    const ws = makeWorkspace();
    t.after(ws.cleanup);
    const run = fsguardAcceptsConfig(file, ws.dir);
    assert.ok(run.accepted, `fsguard accepts ${example} (status ${run.status}):\n${run.stderr}`);
    assert.equal(run.status, 0, `the session ends cleanly:\n${run.stderr}`);
    assert.doesNotMatch(run.stderr, /^fsguard: error/m, run.stderr);
  });
}

test('fsguard.example.json shows every top-level setting at its default', () => {
  const config = readJsonc(path.join(CONFIGS, 'fsguard.example.json'));
  for (const [key, prop] of Object.entries(SCHEMA.properties)) {
    if (key === '$schema' || key === 'tools') continue;
    assert.deepEqual(config[key], prop.default, `${key} is shown with its default`);
  }
});

// Each case is judged by the schema and by fsguard itself; both must agree.
const CONFIG_CASES = [
  // [what, config text, valid?]
  ['an empty object', '{}', true],
  ['comments of both kinds', '// line\n{ /* block */ "mode": "off" // after\n}', true],
  ['$schema with any value', '{"$schema": 42}', true],
  ['max_line_bytes at its minimum', '{"max_line_bytes": 1024}', true],
  ['call_timeout_s at its bounds', '{"call_timeout_s": 86400}', true],
  ['call_timeout_s of 0', '{"call_timeout_s": 0}', false],
  ['call_timeout_s over a day', '{"call_timeout_s": 86401}', false],
  ['a client result limit', '{"client_result_limits": {"claude-code": 100000}}', true],
  ['a client result limit of 0', '{"client_result_limits": {"x": 0}}', false],
  ['a tools map that guards nothing', '{"tools": {}}', true],
  ['a move with source and destination', '{"tools": {"mv": {"role": "move", "source": "a", "destination": "b"}}}', true],
  ['a move without source (the argument defaults to "path")', '{"tools": {"mv": {"role": "move", "destination": "b"}}}', true],
  ['a read with partial_if_set', '{"tools": {"r": {"role": "read", "partial_if_set": ["head"]}}}', true],
  ['a tool with role other', '{"tools": {"ls": {"role": "other", "path": "dir"}}}', true],
  ['confine_to the root directory', '{"confine_to": ["/"]}', true],
  ['an empty confine_to (no confinement)', '{"confine_to": []}', true],
  ['a state_file in the home directory', '{"state_file": "~/state.json"}', true],
  ['a shared_ledger in the home directory', '{"shared_ledger": "~/ledger.sqlite"}', true],
  ['an empty state_file', '{"state_file": ""}', false],
  ['shared_ledger not a string', '{"shared_ledger": 1}', false],
  ['not an object', '[]', false],
  ['an annotation key starting with //', '{"// note": "use real comments instead"}', false],
  ['confine_to as a string', '{"confine_to": "/"}', false],
  ['a relative confine_to directory', '{"confine_to": ["tmp"]}', false],
  ['a confine_to entry that is not a string', '{"confine_to": [1]}', false],
  ['not JSON', '{"mode": "warn",}', false],
  ['a misspelt key', '{"mdoe": "warn"}', false],
  ['an unknown mode', '{"mode": "strict"}', false],
  ['mode is not a string', '{"mode": true}', false],
  ['an unknown log level', '{"log_level": "trace"}', false],
  ['partial_read_allows_write as a string', '{"partial_read_allows_write": "yes"}', false],
  ['max_line_bytes below 1024', '{"max_line_bytes": 1023}', false],
  ['max_line_bytes negative', '{"max_line_bytes": -1}', false],
  ['max_line_bytes with a fraction', '{"max_line_bytes": 2048.5}', false],
  ['max_line_bytes as a string', '{"max_line_bytes": "2048"}', false],
  ['tools as an array', '{"tools": []}', false],
  ['a tool that is not an object', '{"tools": {"x": "write"}}', false],
  ['a tool without a role', '{"tools": {"x": {"path": "p"}}}', false],
  ['an unknown role', '{"tools": {"x": {"role": "delete"}}}', false],
  ['an unknown key in a tool', '{"tools": {"x": {"role": "read", "pth": "p"}}}', false],
  ['an annotation key inside a tool', '{"tools": {"x": {"role": "read", "// note": "n"}}}', false],
  ['a path argument name that is not a string', '{"tools": {"x": {"role": "write", "path": 1}}}', false],
  ['partial_if_set with a non-string', '{"tools": {"x": {"role": "read", "partial_if_set": [1]}}}', false],
  ['partial_if_set not an array', '{"tools": {"x": {"role": "read", "partial_if_set": "head"}}}', false],
  ['a move without destination', '{"tools": {"x": {"role": "move", "source": "s"}}}', false],
  ['a move with an empty destination', '{"tools": {"x": {"role": "move", "source": "s", "destination": ""}}}', false],
];

test('broken configs fail the schema and are refused by fsguard; the schema and fsguard agree', async (t) => {
  const ws = makeWorkspace();
  t.after(ws.cleanup);
  const file = path.join(ws.dir, 'fsguard.json');
  for (const [what, text, valid] of CONFIG_CASES) {
    let schemaErrors;
    try {
      schemaErrors = validate(JSON.parse(stripJsonComments(text)), SCHEMA);
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      schemaErrors = [`not JSON: ${err.message}`];
    }
    assert.equal(schemaErrors.length === 0, valid,
      `${what}: the schema should ${valid ? 'accept' : 'refuse'} ${text}; errors: ${schemaErrors.join('; ')}`);

    fs.writeFileSync(file, text);
    const run = fsguardAcceptsConfig(file, ws.dir);
    assert.equal(run.accepted, valid,
      `${what}: fsguard should ${valid ? 'accept' : 'refuse'} ${text} (status ${run.status}):\n${run.stderr}`);
    if (!valid) {
      assert.match(run.stderr, /^fsguard: error: /m, `${what}: the refusal is logged`);
      assert.ok(run.stderr.includes(file), `${what}: the message names the config file:\n${run.stderr}`);
    }
  }
});

test('a confine_to directory that does not exist passes the schema but fsguard refuses it', (t) => {
  const ws = makeWorkspace();
  t.after(ws.cleanup);
  const missing = path.join(ws.dir, 'no-such-directory');
  const config = { confine_to: [missing] };
  assert.deepEqual(validate(config, SCHEMA), [], 'a JSON Schema cannot check the filesystem');
  const file = path.join(ws.dir, 'fsguard.json');
  fs.writeFileSync(file, JSON.stringify(config));
  const run = fsguardAcceptsConfig(file, ws.dir);
  assert.equal(run.status, 2, `fsguard refuses to start:\n${run.stderr}`);
  assert.match(run.stderr, /does not exist or is not a directory/);
});

test('fsguard --check-config agrees with the schema', async (t) => {
  assert.ok(hasCheckConfig(), 'fsguard --help documents --check-config');
  const ws = makeWorkspace();
  t.after(ws.cleanup);
  const file = path.join(ws.dir, 'fsguard.json');
  const check = (f) => spawnSync(FSGUARD_BIN, ['--check-config', f], { encoding: 'utf8', timeout: 5_000, env: cleanEnv() });
  for (const example of EXAMPLES) {
    const r = check(path.join(CONFIGS, example));
    assert.equal(r.status, 0, `--check-config accepts ${example}:\n${r.stderr}`);
  }
  for (const [what, text, valid] of CONFIG_CASES) {
    fs.writeFileSync(file, text);
    const r = check(file);
    assert.equal(r.status === 0, valid, `${what}: --check-config on ${text} (status ${r.status}):\n${r.stderr}`);
  }
});

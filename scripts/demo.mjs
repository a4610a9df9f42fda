#!/usr/bin/env node
// A guided tour of fsguard for newcomers. An MCP client (the official SDK)
// plays the agent: it talks to build/fsguard, which sits in front of
// @modelcontextprotocol/server-filesystem serving a fresh temporary folder.
// Each step says what the agent does, what fsguard answered and what is on
// disk, and checks it: the tour exits with status 1 at the first step whose
// outcome is not the expected one, so it cannot silently claim success.
//
// Run it through scripts/demo.sh, which builds fsguard and installs the npm
// packages of scripts/demo/ first (scripts/setup.sh --for demo).
// FSGUARD_BIN=path runs another fsguard binary instead of build/fsguard.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The demo's npm packages, or the test suite's (the same pinned versions),
// where only those are installed (its test, tests/integration/demo.test.mjs).
const modules = [path.join(repo, 'scripts', 'demo', 'node_modules'),
  path.join(repo, 'tests', 'integration', 'node_modules')]
  .find((dir) => fs.existsSync(path.join(dir, '@modelcontextprotocol', 'server-filesystem')))
  ?? path.join(repo, 'scripts', 'demo', 'node_modules');
const sdkDir = path.join(modules, '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const serverJs = path.join(modules, '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const fsguard = process.env.FSGUARD_BIN
  ? path.resolve(process.env.FSGUARD_BIN)
  : path.join(repo, 'build', 'fsguard');

const REQUEST_TIMEOUT_MS = 15_000;
const WHOLE_DEMO_TIMEOUT_MS = 90_000;

// ------------------------------------------------------------------ output
const tty = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const paint = (code) => (s) => (tty ? `\x1b[${code}m${s}\x1b[0m` : String(s));
const bold = paint('1');
const dim = paint('2');
const red = paint('31');
const green = paint('32');
const yellow = paint('33');
const cyan = paint('36');

// If stdout goes away (`| head`), keep going quietly so the cleanup still runs.
let stdoutClosed = false;
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
  stdoutClosed = true;
});
const out = (s = '') => {
  if (!stdoutClosed) process.stdout.write(`${s}\n`);
};
const LABEL = 9; // width of the "agent", "fsguard", "disk" column

/** Print `text` after a label, indented and wrapped to about 92 columns. */
function labelled(label, text, colour = (s) => s) {
  const indent = ' '.repeat(3 + LABEL);
  const lines = wrap(String(text), 92 - indent.length);
  lines.forEach((line, i) => {
    const head = i === 0 && label ? `   ${bold(label)}${' '.repeat(LABEL - label.length)}` : indent;
    out(`${head}${line ? colour(line) : ''}`);
  });
}

/**
 * `text` cut into lines of at most `width` columns at spaces. The lines of a
 * fenced block (a diff) are kept whole, and a line's leading spaces are
 * kept, so a diff's context lines (" - milk") keep their column.
 */
function wrap(text, width) {
  const result = [];
  let fenced = false;
  for (const para of text.split('\n')) {
    if (para.startsWith('```')) fenced = !fenced;
    if (fenced || para.startsWith('```')) {
      result.push(para);
      continue;
    }
    const indent = para.match(/^ */)[0];
    let line = indent;
    for (const word of para.slice(indent.length).split(' ')) {
      if (line.trim() && line.length + 1 + word.length > width) {
        result.push(line);
        line = indent + word;
      } else {
        line = line.trim() ? `${line} ${word}` : line + word;
      }
    }
    result.push(line);
  }
  return result;
}

/** Show file content as a small quoted block under the label column. */
function showContent(content) {
  const lines = content.endsWith('\n') ? content.slice(0, -1).split('\n') : content.split('\n');
  for (const l of lines) out(`${' '.repeat(3 + LABEL)}${dim('|')} ${l}`);
}

const quote = (s) => JSON.stringify(s);

// ------------------------------------------------------------------ checks
class StepFailure extends Error {}

function describe(result) {
  const text = textOf(result);
  const veto = result._meta?.['fsguard/veto'];
  if (veto) return `vetoed with code ${quote(veto.code)}: ${text}`;
  if (result.isError) return `an error that is not an fsguard veto: ${text}`;
  return `accepted: ${text}`;
}

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

function expect(ok, expected, observed) {
  if (!ok) throw new StepFailure(`expected: ${expected}\n   observed: ${observed}`);
}

function expectVeto(result, code) {
  const veto = result._meta?.['fsguard/veto'];
  expect(result.isError === true && veto?.code === code,
    `a veto (isError: true, _meta["fsguard/veto"].code = ${quote(code)})`, describe(result));
  labelled('fsguard', `VETOED  code: ${code}`, (s) => red(bold(s)));
  labelled('', textOf(result), yellow);
}

function expectAccepted(result, answer = 'passed the call on; the server answered:') {
  expect(!result.isError && !result._meta?.['fsguard/veto'], 'the call to go through', describe(result));
  labelled('fsguard', answer, green);
}

function expectDisk(file, content, what) {
  const now = fs.readFileSync(file, 'utf8');
  expect(now === content, `notes.txt on disk to be ${what} ${quote(content)}`, `it holds ${quote(now)}`);
}

// ------------------------------------------------------------------ demo
async function loadSdk() {
  try {
    const { Client } = await import(pathToFileURL(path.join(sdkDir, 'client', 'index.js')).href);
    const { StdioClientTransport } = await import(pathToFileURL(path.join(sdkDir, 'client', 'stdio.js')).href);
    return { Client, StdioClientTransport };
  } catch (err) {
    throw new Error(`cannot load the MCP SDK from scripts/demo/node_modules (${err.message}); run scripts/setup.sh --for demo first`);
  }
}

async function main() {
  for (const [file, hint] of [[fsguard, 'build it with scripts/setup.sh --for demo'], [serverJs, 'run scripts/setup.sh --for demo']]) {
    if (!fs.existsSync(file)) throw new Error(`${file} is missing; ${hint}`);
  }
  const { Client, StdioClientTransport } = await loadSdk();

  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fsguard-demo-')));
  const notes = path.join(workspace, 'notes.txt');
  let client;
  let transport;
  let stderrText = '';

  const cleanup = async () => {
    try {
      await client?.close();
    } catch { /* the session may already be gone */ }
    fs.rmSync(workspace, { recursive: true, force: true });
  };
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      cleanup().finally(() => process.exit(130));
    });
  }
  const watchdog = setTimeout(() => {
    out(red(`\nThe demo did not finish within ${WHOLE_DEMO_TIMEOUT_MS / 1000} s; giving up.`));
    cleanup().finally(() => process.exit(1));
  }, WHOLE_DEMO_TIMEOUT_MS);
  watchdog.unref();

  let step = 0;
  let current = '';
  try {
    const original = 'Shopping list\n- milk\n- eggs\n';
    fs.writeFileSync(notes, original);

    // The demo pins the mode so $FSGUARD_MODE or a config file cannot change the story.
    const env = { ...process.env };
    delete env.FSGUARD_MODE;
    delete env.FSGUARD_CONFIG;
    const args = ['--mode', 'enforce', '--', process.execPath, serverJs, workspace];
    transport = new StdioClientTransport({ command: fsguard, args, env, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk) => {
      stderrText = (stderrText + chunk.toString()).slice(-16_384);
    });
    client = new Client({ name: 'fsguard-demo', version: '1.0.0' });

    const rel = (p) => (p.startsWith(repo + path.sep) ? path.relative(repo, p) : p);
    out(bold('fsguard demo: an agent, a file, and a person who edits it too'));
    out();
    out(`${bold('Workspace')}  ${workspace}  ${dim('(a fresh temporary folder, deleted at the end)')}`);
    out(`${bold('Session')}    ${rel(fsguard)} --mode enforce -- node ${rel(serverJs)} ${workspace}`);
    current = 'connect to fsguard and initialize the MCP session';
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    const info = client.getServerVersion();
    out(`           ${dim(`an MCP client is connected, through fsguard, to ${info?.name ?? '?'} ${info?.version ?? ''}`)}`);
    out();
    out(`${bold('notes.txt')} starts as:`);
    showContent(original);
    out();

    const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
    const begin = (title) => {
      step += 1;
      current = title;
      out(cyan(bold(`${step}. ${title}`)));
    };
    const ok = (msg) => {
      labelled('check', msg, green);
      out();
    };
    const agentWrites = async (content) => {
      labelled('agent', 'write_file notes.txt with this content:');
      showContent(content);
      return call('write_file', { path: notes, content });
    };
    const agentReads = async () => {
      labelled('agent', 'read_text_file notes.txt');
      return call('read_text_file', { path: notes });
    };

    // 1. blind write
    begin('The agent overwrites notes.txt without reading it first (a blind write).');
    const blind = 'Shopping list\n- coffee\n';
    expectVeto(await agentWrites(blind), 'not_read');
    expectDisk(notes, original, 'unchanged:');
    ok('notes.txt on disk is unchanged: milk and eggs were not lost.');

    // 2. read
    begin('The agent reads notes.txt, as fsguard asked.');
    let r = await agentReads();
    expectAccepted(r, 'passed the call on; the server returned:');
    showContent(textOf(r));
    expect(textOf(r) === original, `the read to return ${quote(original)}`, `it returned ${quote(textOf(r))}`);
    ok('fsguard now remembers exactly which content the agent has seen.');

    // 3. informed write
    begin('The agent writes notes.txt, now that it knows what is in it.');
    const agentV1 = `${original}- coffee\n`;
    r = await agentWrites(agentV1);
    expectAccepted(r);
    labelled('', textOf(r), dim);
    expectDisk(notes, agentV1, 'the agent\'s version');
    ok('the write went through; notes.txt now has coffee too.');

    // 4. a person edits the file
    begin('A person edits notes.txt in their editor (outside the agent\'s session).');
    const person = `${agentV1}- bread (added by Sam)\n`;
    // A person takes a moment: the file's modification time, which the
    // kernel takes from a clock a few milliseconds coarse, then lies after
    // the agent's write, so the veto can say when the file changed.
    await new Promise((resolve) => setTimeout(resolve, 100));
    fs.writeFileSync(notes, person);
    labelled('person', `saves notes.txt with a new line: ${quote('- bread (added by Sam)')}`);
    labelled('disk', 'notes.txt now holds:');
    showContent(fs.readFileSync(notes, 'utf8'));
    ok('fsguard is not involved: the agent has not noticed anything yet.');

    // 5. stale write
    begin('The agent writes notes.txt again, from its now outdated copy (a stale write).');
    const stale = `${agentV1}- tea\n`;
    r = await agentWrites(stale);
    expectVeto(r, 'changed');
    const veto = r._meta['fsguard/veto'];
    expect(textOf(r).includes('+- bread (added by Sam)') && veto.counts_as_read === true,
      'the veto to show the person\'s line in its diff, and to count as a read', describe(r));
    expectDisk(notes, person, 'still the person\'s version');
    ok('the person\'s edit survived, and the veto showed the agent exactly what changed.');

    // 6. retry without a read
    begin('The agent writes again, adding its line to the version the diff showed, without reading the file.');
    // A real agent needs a model turn to read the veto; fsguard lets the diff
    // count only for calls that come at least 250 ms after it.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const final = `${person}- tea\n`;
    r = await agentWrites(final);
    expectAccepted(r);
    labelled('', textOf(r), dim);
    expectDisk(notes, final, 'the merged version');
    ok('accepted: the diff counted as a read, so no round trip to re-read the file was needed.');

    // 7. a formatter changes line 1
    begin('A formatter run by a hook rewrites the first line of notes.txt.');
    const formatted = final.replace('Shopping list\n', '# Shopping list\n');
    fs.writeFileSync(notes, formatted);
    labelled('hook', `rewrites line 1 as ${quote('# Shopping list')}`);
    labelled('disk', 'notes.txt now holds:');
    showContent(fs.readFileSync(notes, 'utf8'));
    ok('the agent has not seen this change.');

    // 8. an edit far from the change is rebased
    begin('The agent edits the last line, as it last saw the file (a stale edit).');
    labelled('agent', `edit_file notes.txt: ${quote('- tea')} -> ${quote('- green tea')}`);
    r = await call('edit_file', { path: notes, edits: [{ oldText: '- tea', newText: '- green tea' }] });
    expectAccepted(r, 'applied the edit to the current content (it cannot touch the formatter\'s line) and told the agent:');
    expect(r._meta?.['fsguard/stale']?.how === 'rebase', 'a rebase (_meta["fsguard/stale"].how = "rebase")', describe(r));
    labelled('', r.content.at(-1).text, yellow);
    expectDisk(notes, formatted.replace('- tea\n', '- green tea\n'), 'both changes:');
    ok('both the formatter\'s line and the agent\'s edit are in the file, and the agent knows it.');

    out(green(bold(`All ${step} steps behaved as expected.`)));
    out('fsguard vetoed the blind write and the stale write; the stale veto showed the');
    out('change as a diff that counted as a read, and a stale edit that could not hurt');
    out('the outside change was applied to the current content. The vetoes reach the');
    out('agent as tool errors it can act on, with a machine-readable code in');
    out('_meta["fsguard/veto"].');
    out();
    out(bold('Next: put fsguard in front of your own agent\'s filesystem server.'));
    out('Install it (README.md, "Installing"), then let it find the filesystem servers in');
    out('your clients\' configs and show how it would start each one behind fsguard:');
    out('   fsguard adopt            (then fsguard adopt --apply; --undo puts them back)');
    out('Or start it from your MCP client in place of the server, with the server\'s command');
    out('after it; for Claude Code:');
    out(`   claude mcp add --scope project fs -- fsguard npx -y @modelcontextprotocol/server-filesystem ${dim('/path/to/your/project')}`);
    out('Claude Desktop, Cursor, VS Code, Codex and Gemini CLI are in docs/clients.md.');
    return 0;
  } catch (err) {
    out();
    const where = step ? `step ${step} (${current})` : current || 'setup';
    out(red(bold(`UNEXPECTED at ${where}`)));
    out(`   ${err instanceof StepFailure ? err.message : err?.message ?? String(err)}`);
    if (stderrText.trim()) {
      out(dim('   fsguard stderr (last lines):'));
      for (const l of stderrText.trimEnd().split('\n').slice(-20)) out(dim(`     ${l}`));
    }
    return 1;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

main().then(
  (status) => process.exit(status),
  (err) => {
    process.stderr.write(`demo: error: ${err.message}\n`);
    process.exit(1);
  },
);

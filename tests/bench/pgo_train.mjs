// The training workload of fsguard's profile-guided build: an instrumented
// fsguard (built with FSGUARD_PROFILE_GENERATE) runs in front of the pinned
// server-filesystem over the calls an agent makes most, so that GCC learns
// which code is hot. scripts/setup.sh runs it between its two builds.
//
//   node tests/bench/pgo_train.mjs FSGUARD_BIN
//
// The calls, as the MCP SDK's client writes them: 4 KiB and 1 MiB reads,
// listings, read + write cycles, edits after a read, 16 reads sent at once,
// writes of 1 MiB, and a few writes refused (files never read).
// What is rare in use (a veto) is rare here: the profile weighs the code as
// the calls do. Exit 0 once every call was answered; 1 with the reason.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { replay, requestMaker, text } from './calls.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The pinned server-filesystem of the tests, or of the demo (the same version).
const SERVER = ['tests/integration', 'scripts/demo']
  .map((dir) => path.join(ROOT, dir, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'))
  .find((candidate) => fs.existsSync(candidate));
const KiB = 1024;
const MiB = 1024 * 1024;

function fail(text) {
  process.stderr.write(`pgo_train: error: ${text}\n`);
  process.exit(1);
}

const fsguard = process.argv[2];
if (!fsguard || !fs.existsSync(fsguard)) fail(`usage: pgo_train.mjs FSGUARD_BIN (not found: ${fsguard})`);
if (!SERVER) fail('server-filesystem is not installed (in tests/integration or scripts/demo)');

const trainingText = (size, seed) => text(size, `training ${seed}`);

const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fsguard-pgo-train-')));
process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }));
const file = (name) => path.join(work, name);
for (let i = 0; i < 200; i++) fs.writeFileSync(file(`f${i}.txt`), trainingText(4 * KiB, i));
for (let i = 0; i < 4; i++) fs.writeFileSync(file(`big${i}.txt`), trainingText(MiB, `big ${i}`));
const blindWrites = 5;
for (let i = 0; i < blindWrites; i++) fs.writeFileSync(file(`unread${i}.txt`), trainingText(KiB, `unread ${i}`));
// Older than the 2 s racy window, as most files an agent reads are.
const old = new Date(Date.now() - 60_000);
for (const name of fs.readdirSync(work)) fs.utimesSync(file(name), old, old);

// Batches of requests: each batch is sent at once, and the next waits for
// every answer to it.
const { request, call, initialize, count } = requestMaker();
const batches = [
  [initialize('fsguard-pgo-train')],
  [{ jsonrpc: '2.0', method: 'notifications/initialized' }, request('tools/list', {})],
];
const one = (...calls) => batches.push(calls);
for (let i = 0; i < 200; i++) one(call('read_text_file', { path: file(`f${i}.txt`) }));
for (let i = 0; i < 150; i++) one(call('list_directory', { path: work }));
for (let i = 0; i < 100; i++) {
  one(call('read_text_file', { path: file(`f${i}.txt`) }));
  one(call('write_file', { path: file(`f${i}.txt`), content: trainingText(4 * KiB, `written ${i}`) }));
}
for (let i = 100; i < 150; i++) {
  one(call('read_text_file', { path: file(`f${i}.txt`) }));
  one(call('edit_file', { path: file(`f${i}.txt`), edits: [{ oldText: `fsguard training ${i} `, newText: `fsguard trained ${i} ` }] }));
}
for (let round = 0; round < 10; round++) {
  batches.push(Array.from({ length: 16 }, (_, k) => call('read_text_file', { path: file(`f${150 + ((round * 16 + k) % 50)}.txt`) })));
}
for (let i = 0; i < 4; i++) {
  one(call('read_text_file', { path: file(`big${i}.txt`) }));
  if (i % 2 === 0) one(call('write_file', { path: file(`big${i}.txt`), content: trainingText(MiB, `big written ${i}`) }));
}
one(call('get_file_info', { path: file('f0.txt') }));
one(call('read_multiple_files', { paths: [file('f1.txt'), file('f2.txt')] }));
one(call('write_file', { path: file('never-read.txt'), content: 'new\n' })); // a new file: allowed
for (let i = 0; i < blindWrites; i++) one(call('write_file', { path: file(`unread${i}.txt`), content: 'blind\n' })); // never read: refused

const fsguardArgs = ['--mode', 'enforce', '--', process.execPath, SERVER, work];
replay(fsguard, fsguardArgs, batches, 'pgo_train', { timeoutMs: 120_000 })
  .then((refused) => {
    if (refused !== blindWrites) fail(`${refused} calls were refused, where the workload expects ${blindWrites} (the blind writes)`);
    process.stderr.write(`pgo_train: ${count()} requests in ${batches.length} batches answered, ${refused} refused\n`);
  })
  .catch((error) => fail(error.message));

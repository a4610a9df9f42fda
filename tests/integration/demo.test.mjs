// The guided tour (scripts/demo.mjs), run against the binary under test: it
// passes, it shows fsguard's diffs with their columns, and it ends by
// pointing to the next step. scripts/demo.sh, which sets up first, is not
// run here.
//
//   node --test demo.test.mjs      (FSGUARD_BIN=/path/to/fsguard)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

import { FSGUARD_BIN, TESTS_DIR, cleanEnv } from './lib/harness.mjs';

const DEMO = path.join(TESTS_DIR, '..', '..', 'scripts', 'demo.mjs');

function runTour() {
  const run = spawnSync(process.execPath, [DEMO], {
    env: cleanEnv({ FSGUARD_BIN, NO_COLOR: '1' }), encoding: 'utf8', timeout: 120_000,
  });
  assert.equal(run.status, 0, `the tour passes:\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

test('the tour passes, and the diffs in its vetoes keep their columns', () => {
  const tour = runTour();
  const lines = tour.split('\n');
  // The stale write's diff: the person's line added under three context lines.
  const added = lines.findIndex((l) => l.endsWith('+- bread (added by Sam)'));
  assert.ok(added > 3, `the diff of the stale write is shown:\n${tour}`);
  const column = lines[added].indexOf('+');
  for (const context of lines.slice(added - 3, added)) {
    assert.equal(context.indexOf(' - '), column, `a context line keeps its leading space: "${context}"`);
  }
  assert.doesNotMatch(tour, /does not show when it changed/,
    'the stale write\'s veto says when the file was modified');
  assert.match(tour, /last modified \d{4}-/);
});

test('the tour ends by pointing to the next step: wiring fsguard into a client', () => {
  const tour = runTour().trimEnd().split('\n');
  const next = tour.findIndex((l) => l.startsWith('Next:'));
  assert.ok(next > 0, `the tour names a next step:\n${tour.join('\n')}`);
  const after = tour.slice(next).join('\n');
  assert.match(after, /fsguard adopt /, 'it names fsguard adopt, which rewrites the configs there are');
  assert.match(after, /claude mcp add .* -- fsguard npx -y @modelcontextprotocol\/server-filesystem/);
  assert.match(after, /docs\/clients\.md/);
});

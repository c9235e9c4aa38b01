/**
 * Every Jazzer.js fuzz target of fuzz/ (what `npm run fuzz` runs), in two steps:
 *  1. every committed input (fuzz/corpus/<target>/, the regressions of every finding so far) is
 *     replayed: any finding fails the test;
 *  2. coverage-guided fuzzing from those seeds until FUZZ_SECONDS (default 15) have passed, two
 *     targets at a time (the machine's two cores): about 3 minutes for the 18 targets, so the whole
 *     CI run stays well inside its 30 minutes; long runs are `npm run fuzz`'s. Every target
 *     must run and reach code its seeds did not. What this exploration finds depends on chance,
 *     not on the change under test, so a new finding is reported (the runner's table, and the
 *     input in base64 to add to fuzz/corpus/<target>/ with its fix) without failing the build;
 *     FUZZ_STRICT=1 makes it fail. `npm run fuzz` fails on any finding.
 * The input of a finding is left in .tmp/fuzz/<target>/artifacts/ and reproduced with
 * `node fuzz/repro.mjs <target> <file>`. FUZZ_SECONDS=0 skips both; FUZZ_JOBS sets how many
 * targets run at once (default 2).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TARGETS } from '../../fuzz/targets.mjs';

const ROOT = join(import.meta.dirname, '..', '..');
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 15);
const JOBS = Number(process.env.FUZZ_JOBS ?? 2);
const STRICT = process.env.FUZZ_STRICT === '1';
const work = mkdtempSync(join(tmpdir(), 'tollgate-fuzz-test-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface TargetResult {
  target: string;
  executions: number;
  edges: number;
  features: number;
  initialEdges: number;
  initialFeatures: number;
  finding: string | null;
  artifact: string | null;
}

const tableOf = (output: string) => output.split('\n').filter((line) => !line.startsWith('fuzz: ')).join('\n');

function runner(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'fuzz', 'run.mjs'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('fuzz targets', { skip: SECONDS > 0 ? false : 'FUZZ_SECONDS=0' }, () => {
  it('replays every committed input (the regressions) without a finding', { timeout: 10 * 60_000 }, async () => {
    const json = join(work, 'replay.json');
    const { code, output } = await runner(['--replay', '--fresh', '--jobs', String(JOBS), '--json', json]);
    const { results } = JSON.parse(readFileSync(json, 'utf8')) as { results: TargetResult[] };
    assert.deepEqual(results.map((r) => r.target).sort(), Object.keys(TARGETS).sort());
    assert.deepEqual(results.filter((r) => r.finding).map((r) => `${r.target}: ${r.finding}`), [], tableOf(output));
    assert.equal(code, 0, tableOf(output));
  });

  it(`fuzzes each target for ${SECONDS} s from its seeds: every one runs and gains coverage; findings are reported`, { timeout: 20 * 60_000 }, async (t) => {
    const json = join(work, 'results.json');
    // --fresh: only the committed seeds, not what earlier local runs found.
    const { output } = await runner(['--seconds', String(SECONDS), '--jobs', String(JOBS), '--fresh', '--json', json]);
    const table = tableOf(output);
    const { results } = JSON.parse(readFileSync(json, 'utf8')) as { results: TargetResult[] };
    assert.deepEqual(results.map((r) => r.target).sort(), Object.keys(TARGETS).sort());
    for (const r of results) {
      // The instrumentation reaches the parser: edges are counted, and inputs were executed.
      assert.ok(r.edges > 0 && r.executions > 0, `${r.target}: ${r.executions} executions, ${r.edges} edges\n${table}`);
    }
    // Coverage feedback at work: fuzzing reaches code the seeds did not.
    const gained = results.filter((r) => r.features > r.initialFeatures).length;
    assert.ok(gained >= results.length / 2, `only ${gained} targets gained coverage beyond their seeds\n${table}`);
    const found = results.filter((r) => r.finding);
    for (const r of found) {
      const input = r.artifact ? readFileSync(join(ROOT, r.artifact)).toString('base64') : '(no input written)';
      const report = `NEW FUZZ FINDING ${r.target}: ${r.finding}\n  input (base64, for fuzz/corpus/${r.target}/): ${input}`;
      t.diagnostic(report);
      console.log(report);
    }
    if (found.length > 0) console.log(table);
    if (STRICT) assert.deepEqual(found.map((r) => `${r.target}: ${r.finding}`), [], table);
  });
});

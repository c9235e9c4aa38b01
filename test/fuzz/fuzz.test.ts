/**
 * Every Jazzer.js fuzz target of fuzz/ (what `npm run fuzz` runs): its committed corpus, then
 * coverage-guided fuzzing until FUZZ_SECONDS (default 30) have passed, two targets at a time
 * (the machine's two cores): about 5 minutes for the 18 targets. A finding (an exception other
 * than the parser's typed error, an input over 1 s, memory over the limits) fails the test with
 * the runner's table; the input is left in .tmp/fuzz/<target>/artifacts/ and reproduced with
 * `node fuzz/repro.mjs <target> <file>`. FUZZ_SECONDS=0 skips the test; FUZZ_JOBS sets how
 * many targets run at once (default 2).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { TARGETS } from '../../fuzz/targets.mjs';

const ROOT = join(import.meta.dirname, '..', '..');
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 30);
const JOBS = Number(process.env.FUZZ_JOBS ?? 2);
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
}

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
  it(`each target: its corpus, then fuzzing up to ${SECONDS} s, without a finding`, { timeout: 20 * 60_000 }, async () => {
    const json = join(work, 'results.json');
    // --fresh: only the committed seeds, not what earlier local runs found.
    const { code, output } = await runner(['--seconds', String(SECONDS), '--jobs', String(JOBS), '--fresh', '--json', json]);
    const table = output.split('\n').filter((line) => !line.startsWith('fuzz: ')).join('\n');
    const { results } = JSON.parse(readFileSync(json, 'utf8')) as { results: TargetResult[] };
    assert.deepEqual(results.map((r) => r.target).sort(), Object.keys(TARGETS).sort());
    assert.deepEqual(results.filter((r) => r.finding).map((r) => `${r.target}: ${r.finding}`), [], table);
    assert.equal(code, 0, table);
    for (const r of results) {
      // The instrumentation reaches the parser: edges are counted, and inputs were executed.
      assert.ok(r.edges > 0 && r.executions > 0, `${r.target}: ${r.executions} executions, ${r.edges} edges\n${table}`);
    }
    // Coverage feedback at work: fuzzing reaches code the seeds did not.
    const gained = results.filter((r) => r.features > r.initialFeatures).length;
    assert.ok(gained >= results.length / 2, `only ${gained} targets gained coverage beyond their seeds\n${table}`);
  });
});

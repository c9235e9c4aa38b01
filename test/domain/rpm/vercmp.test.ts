import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { compareEvr, formatEvr, parseEvr, rpmvercmp } from '../../../src/domain/rpm/vercmp.js';
import { makeTempDir } from '../../helpers/tmp.js';

const run = promisify(execFile);

// The cases of rpm's own test suite (tests/rpmvercmp.at, rpm 4.18): [a, b, expected].
const RPM_VECTORS: [string, string, number][] = [
  ['1.0', '1.0', 0], ['1.0', '2.0', -1], ['2.0', '1.0', 1],
  ['2.0.1', '2.0.1', 0], ['2.0', '2.0.1', -1], ['2.0.1', '2.0', 1],
  ['2.0.1a', '2.0.1a', 0], ['2.0.1a', '2.0.1', 1], ['2.0.1', '2.0.1a', -1],
  ['5.5p1', '5.5p1', 0], ['5.5p1', '5.5p2', -1], ['5.5p2', '5.5p1', 1],
  ['5.5p10', '5.5p10', 0], ['5.5p1', '5.5p10', -1], ['5.5p10', '5.5p1', 1],
  ['10xyz', '10.1xyz', -1], ['10.1xyz', '10xyz', 1],
  ['xyz10', 'xyz10', 0], ['xyz10', 'xyz10.1', -1], ['xyz10.1', 'xyz10', 1],
  ['xyz.4', 'xyz.4', 0], ['xyz.4', '8', -1], ['8', 'xyz.4', 1], ['xyz.4', '2', -1], ['2', 'xyz.4', 1],
  ['5.5p2', '5.6p1', -1], ['5.6p1', '5.5p2', 1],
  ['5.6p1', '6.5p1', -1], ['6.5p1', '5.6p1', 1],
  ['6.0.rc1', '6.0', 1], ['6.0', '6.0.rc1', -1],
  ['10b2', '10a1', 1], ['10a2', '10b2', -1],
  ['1.0aa', '1.0aa', 0], ['1.0a', '1.0aa', -1], ['1.0aa', '1.0a', 1],
  ['10.0001', '10.0001', 0], ['10.0001', '10.1', 0], ['10.1', '10.0001', 0],
  ['10.0001', '10.0039', -1], ['10.0039', '10.0001', 1],
  ['4.999.9', '5.0', -1], ['5.0', '4.999.9', 1],
  ['20101121', '20101121', 0], ['20101121', '20101122', -1], ['20101122', '20101121', 1],
  ['2_0', '2_0', 0], ['2.0', '2_0', 0], ['2_0', '2.0', 0],
  ['a', 'a', 0], ['a+', 'a+', 0], ['a+', 'a_', 0], ['a_', 'a+', 0], ['+a', '+a', 0], ['+a', '_a', 0], ['_a', '+a', 0],
  ['+_', '+_', 0], ['_+', '+_', 0], ['_+', '_+', 0], ['+', '_', 0], ['_', '+', 0],
  ['1.0~rc1', '1.0~rc1', 0], ['1.0~rc1', '1.0', -1], ['1.0', '1.0~rc1', 1],
  ['1.0~rc1', '1.0~rc2', -1], ['1.0~rc2', '1.0~rc1', 1],
  ['1.0~rc1~git123', '1.0~rc1~git123', 0], ['1.0~rc1~git123', '1.0~rc1', -1], ['1.0~rc1', '1.0~rc1~git123', 1],
  ['1.0^', '1.0^', 0], ['1.0^', '1.0', 1], ['1.0', '1.0^', -1],
  ['1.0^git1', '1.0^git1', 0], ['1.0^git1', '1.0', 1], ['1.0', '1.0^git1', -1],
  ['1.0^git1', '1.0^git2', -1], ['1.0^git2', '1.0^git1', 1],
  ['1.0^git1', '1.01', -1], ['1.01', '1.0^git1', 1],
  ['1.0^20160101', '1.0^20160101', 0], ['1.0^20160101', '1.0.1', -1], ['1.0.1', '1.0^20160101', 1],
  ['1.0^20160101^git1', '1.0^20160101^git1', 0], ['1.0^20160102', '1.0^20160101^git1', 1],
  ['1.0^20160101^git1', '1.0^20160102', -1],
  ['1.0~rc1^git1', '1.0~rc1^git1', 0], ['1.0~rc1^git1', '1.0~rc1', 1], ['1.0~rc1', '1.0~rc1^git1', -1],
  ['1.0^git1~pre', '1.0^git1~pre', 0], ['1.0^git1', '1.0^git1~pre', 1], ['1.0^git1~pre', '1.0^git1', -1],
  ['1.900', '1.8000', -1],
];

/** A deterministic pseudo-random generator, so failures reproduce. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const SEGMENTS = ['0', '00', '1', '01', '2', '9', '10', '010', '99', '100', '4294967296', '18446744073709551617', 'a', 'b', 'z', 'A', 'Z', 'rc', 'rc1', 'git', 'p', 'beta', 'é'];
const SEPARATORS = ['.', '.', '.', '_', '+', '~', '^', '', '..', '%', ' '];

function randomVersion(rand: () => number): string {
  const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
  const parts = 1 + Math.floor(rand() * 5);
  let v = rand() < 0.1 ? pick(['~', '^', '.']) : '';
  for (let i = 0; i < parts; i++) {
    if (i > 0) v += pick(SEPARATORS);
    v += pick(SEGMENTS);
  }
  if (rand() < 0.1) v += pick(['~', '^', '.', '~rc', '^1']);
  return v;
}

/** Pairs that often share a prefix, so the interesting tail comparisons get exercised. */
function randomPairs(count: number, seed: number): [string, string][] {
  const rand = prng(seed);
  const pairs: [string, string][] = [];
  while (pairs.length < count) {
    const a = randomVersion(rand);
    const mode = rand();
    const b =
      mode < 0.4
        ? a.slice(0, Math.floor(rand() * (a.length + 1))) + randomVersion(rand).slice(0, 4)
        : mode < 0.6
          ? // Often equal: other separators, extra leading zeros.
            a.replace(/[._+]/g, () => ['.', '_', '+', '..'][Math.floor(rand() * 4)]!).replace(/\b(\d)/g, (d) => (rand() < 0.3 ? `0${d}` : d))
          : randomVersion(rand);
    // rpm.vercmp() parses an EVR: keep ':' and '-' out so it compares the plain strings.
    if (!a || !b || /[:\-\t\n]/.test(a + b)) continue;
    pairs.push([a, b]);
  }
  return pairs;
}

/** Asks the real rpm, in one process, to compare every pair with rpm.vercmp (EVR semantics). */
async function rpmCompare(dir: string, pairs: [string, string][]): Promise<number[]> {
  const file = join(dir, 'pairs.txt');
  await writeFile(file, pairs.map(([a, b]) => `${a}\t${b}`).join('\n') + '\n');
  const lua = `%{lua: local out = {} for line in io.lines("${file}") do local a, b = line:match("^(.-)\\t(.*)$") out[#out+1] = tostring(rpm.vercmp(a, b)) end print(table.concat(out, "\\n"))}`;
  const { stdout } = await run('rpm', ['--eval', lua], { maxBuffer: 64 * 1024 * 1024 });
  const results = stdout.trim().split('\n').map(Number);
  assert.equal(results.length, pairs.length, 'rpm answered every pair');
  return results;
}

describe('rpmvercmp', () => {
  it('passes the rpm test-suite vectors', () => {
    for (const [a, b, expected] of RPM_VECTORS) {
      assert.equal(rpmvercmp(a, b), expected, `rpmvercmp(${a}, ${b})`);
    }
  });

  it('agrees with the real rpm on 12,000 generated pairs', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      const pairs = randomPairs(12_000, 20240601);
      const expected = await rpmCompare(dir, pairs);
      const mismatches = pairs
        .map(([a, b], i) => ({ a, b, rpm: expected[i], ours: rpmvercmp(a, b) }))
        .filter((r) => r.rpm !== r.ours);
      assert.deepEqual(mismatches.slice(0, 10), []);
      // Sanity: the data set is not trivially all-equal.
      for (const v of [-1, 0, 1]) assert.ok(expected.filter((e) => e === v).length > 1000, `enough ${v} results`);
    } finally {
      await cleanup();
    }
  });
});

describe('EVR', () => {
  it('parses like rpm: epoch digits before ":", release after the last "-"', () => {
    assert.deepEqual(parseEvr('1:2.0-3'), { epoch: '1', version: '2.0', release: '3' });
    assert.deepEqual(parseEvr('2.0'), { epoch: null, version: '2.0', release: null });
    assert.deepEqual(parseEvr('2.0-1-2'), { epoch: null, version: '2.0-1', release: '2' });
    assert.deepEqual(parseEvr(':1.0'), { epoch: '0', version: '1.0', release: null });
    assert.deepEqual(parseEvr('a:1.0'), { epoch: null, version: 'a:1.0', release: null });
    assert.deepEqual(parseEvr('1.0-'), { epoch: null, version: '1.0', release: '' });
  });

  it('formats without a missing epoch or release', () => {
    assert.equal(formatEvr({ epoch: null, version: '1.0', release: '2' }), '1.0-2');
    assert.equal(formatEvr({ epoch: 3, version: '1.0', release: null }), '3:1.0');
  });

  it('orders EVRs like rpm (missing epoch = 0, missing release is older) on 6,000 generated pairs', async () => {
    const rand = prng(77);
    const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
    const evr = (): string =>
      `${pick(['', '', '0:', '1:', '2:', '10:', ':'])}${pick(['1.0', '1.0.1', '2', '1.0~rc1', '1.0^g', '01.0', '1.a'])}${pick(['', '-1', '-2', '-1.el9', '-1.fc40', '-01', '-1~x'])}`;
    const pairs: [string, string][] = [];
    while (pairs.length < 6_000) pairs.push([evr(), evr()]);
    const { dir, cleanup } = await makeTempDir();
    try {
      const expected = await rpmCompare(dir, pairs);
      const mismatches = pairs
        .map(([a, b], i) => ({ a, b, rpm: expected[i], ours: compareEvr(parseEvr(a), parseEvr(b)) }))
        .filter((r) => r.rpm !== r.ours);
      assert.deepEqual(mismatches.slice(0, 10), []);
    } finally {
      await cleanup();
    }
  });

  it('compares structured EVRs with numeric epochs', () => {
    assert.equal(compareEvr({ epoch: 1, version: '1.0', release: '1' }, { epoch: null, version: '9.0', release: '1' }), 1);
    assert.equal(compareEvr({ epoch: 0, version: '1.0', release: '1' }, { version: '1.0', release: '1' }), 0);
    assert.equal(compareEvr({ version: '1.0' }, { version: '1.0', release: '0' }), -1);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { roundUp30, roundUp31, scoreCvss, severityFromScore } from '../../../src/domain/security/cvss.js';
import { CVSS4_MACROVECTOR_SCORES } from '../../../src/domain/security/cvss4-tables.js';

function score(vector: string): number {
  const r = scoreCvss(vector);
  assert.ok(r.ok, `${vector}: ${r.ok ? '' : r.error}`);
  return r.score;
}

describe('CVSS v3.x base score', () => {
  // FIRST CVSS v3.1 specification examples document and NVD scores.
  const cases: Array<[string, number]> = [
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8], // CVE-2014-6271 Shellshock
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', 10.0],
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N', 7.5], // CVE-2014-0160 Heartbleed
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', 6.1], // CVE-2013-1937 phpMyAdmin XSS
    ['CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:C/C:L/I:L/A:N', 6.4], // CVE-2013-0375 MySQL
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:H/I:H/A:H', 8.8], // CVE-2016-1645 Chrome
    ['CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:H/I:H/A:H', 7.8], // CVE-2023-4911 Looney Tunables
    ['CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:N/I:H/A:N', 5.9], // CVE-2023-48795 Terrapin
    ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N', 0.0],
    ['CVSS:3.1/AV:P/AC:H/PR:H/UI:R/S:U/C:L/I:N/A:N', 1.6],
    // S:C raw score 7.4598…: Roundup must give 7.5, not the truncated 7.4
    ['CVSS:3.1/AV:L/AC:H/PR:L/UI:N/S:C/C:H/I:H/A:N', 7.5],
    ['CVSS:3.0/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 9.8],
    ['CVSS:3.0/AV:N/AC:L/PR:L/UI:N/S:C/C:H/I:H/A:H', 9.9],
  ];
  for (const [vector, expected] of cases) {
    it(`${vector} = ${expected}`, () => assert.equal(score(vector), expected));
  }

  it('accepts temporal and environmental metrics but scores the base', () => {
    assert.equal(score('CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/E:U/RL:O/RC:C/CR:L/MAV:P'), 9.8);
  });

  it('Roundup of v3.1 ignores float noise, v3.0 does not', () => {
    assert.equal(roundUp31(4.02), 4.1);
    assert.equal(roundUp31(4.0), 4.0);
    assert.equal(roundUp31(4.000000000000001), 4.0);
    assert.equal(roundUp30(4.000000000000001), 4.1);
    assert.equal(roundUp30(4.02), 4.1);
  });
});

describe('CVSS v4.0 score', () => {
  // Values cross-checked against FIRST's calculator algorithm (and an independent implementation).
  const cases: Array<[string, number]> = [
    ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N', 9.3],
    ['CVSS:4.0/AV:L/AC:L/AT:N/PR:L/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N', 8.5],
    ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:N/VI:N/VA:H/SC:N/SI:N/SA:N', 8.7],
    ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:P/VC:N/VI:N/VA:N/SC:L/SI:L/SA:N', 5.3],
    ['CVSS:4.0/AV:P/AC:H/AT:P/PR:H/UI:A/VC:L/VI:N/VA:N/SC:N/SI:N/SA:N', 1.0],
    ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:N/VI:N/VA:N/SC:N/SI:N/SA:N', 0.0],
    // Threat and environmental metrics (FIRST calculator documentation example)
    ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:L/SC:N/SI:N/SA:N/E:A/MAV:A', 8.7],
    ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N/E:U', 8.1],
    ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N/MSI:S', 10],
    // Supplemental metrics do not change the score
    ['CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:H/SI:H/SA:H/S:P/AU:Y/U:Red', 10],
    // Exact value 4.95 (float 4.9499999…): rounds half up to 5.0 as FIRST's calculator does
    ['CVSS:4.0/AV:N/AC:H/AT:P/PR:H/UI:A/VC:L/VI:L/VA:L/SC:H/SI:H/SA:H', 5.0],
    // Exact value 5.65 → 5.7
    ['CVSS:4.0/AV:L/AC:H/AT:P/PR:N/UI:A/VC:H/VI:L/VA:N/SC:N/SI:N/SA:L', 5.7],
  ];
  for (const [vector, expected] of cases) {
    it(`${vector} = ${expected}`, () => assert.equal(score(vector), expected));
  }

  it('has the 270 MacroVector cells of the specification', () => {
    assert.equal(Object.keys(CVSS4_MACROVECTOR_SCORES).length, 270);
    assert.equal(CVSS4_MACROVECTOR_SCORES['000000'], 10);
    assert.equal(CVSS4_MACROVECTOR_SCORES['212221'], 0.1);
  });

  it('every base vector scores within 0..10 and never fails', () => {
    const values: Array<[string, string[]]> = [
      ['AV', ['N', 'A', 'L', 'P']], ['AC', ['L', 'H']], ['AT', ['N', 'P']], ['PR', ['N', 'L', 'H']], ['UI', ['N', 'P', 'A']],
      ['VC', ['H', 'L', 'N']], ['VI', ['H', 'L', 'N']], ['VA', ['H', 'L', 'N']], ['SC', ['H', 'L', 'N']], ['SI', ['H', 'L', 'N']], ['SA', ['H', 'L', 'N']],
    ];
    let vectors = ['CVSS:4.0'];
    for (const [metric, options] of values) vectors = vectors.flatMap((v) => options.map((o) => `${v}/${metric}:${o}`));
    assert.equal(vectors.length, 4 * 2 * 2 * 3 * 3 * 3 ** 6);
    for (const v of vectors) {
      const r = scoreCvss(v);
      assert.ok(r.ok && r.score >= 0 && r.score <= 10, v);
    }
  });
});

describe('invalid vectors', () => {
  const invalid = [
    '',
    'AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
    'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H',
    'CVSS:3.1/AV:X/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
    'CVSS:3.1/AV:N/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H',
    'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/ZZ:Q',
    'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H/',
    'CVSS:2.0/AV:N/AC:L/Au:N/C:P/I:P/A:P',
    'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N',
    'CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:S/SA:N',
    `CVSS:3.1/${'AV:N/'.repeat(200)}`,
  ];
  for (const v of invalid) {
    it(`rejects ${JSON.stringify(v.slice(0, 60))}`, () => {
      const r = scoreCvss(v);
      assert.equal(r.ok, false);
    });
  }
  it('rejects a non-string without throwing', () => {
    assert.equal(scoreCvss(42 as unknown as string).ok, false);
  });
});

describe('severityFromScore', () => {
  it('maps the qualitative rating scale (none → negligible)', () => {
    assert.equal(severityFromScore(0), 'negligible');
    assert.equal(severityFromScore(0.1), 'low');
    assert.equal(severityFromScore(3.9), 'low');
    assert.equal(severityFromScore(4.0), 'medium');
    assert.equal(severityFromScore(6.9), 'medium');
    assert.equal(severityFromScore(7.0), 'high');
    assert.equal(severityFromScore(8.9), 'high');
    assert.equal(severityFromScore(9.0), 'critical');
    assert.equal(severityFromScore(10), 'critical');
    assert.equal(severityFromScore(Number.NaN), 'negligible');
  });
});

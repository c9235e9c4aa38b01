/**
 * CVSS base scores from vector strings: v3.0 and v3.1 per the FIRST specification formulas
 * (section 7.1 and Appendix A "Roundup"), v4.0 via cvss4.ts. Invalid vectors give an error
 * value, never an exception: feed data is untrusted.
 */
import { parseVectorMetrics, severityFromScore, type CvssResult } from './cvss-common.js';
import { scoreCvss4 } from './cvss4.js';

export { severityFromScore, type CvssResult } from './cvss-common.js';

/** Upper bound on vector length: real vectors are < 200 characters. */
const MAX_VECTOR_LENGTH = 512;

const V3_BASE_WEIGHTS = {
  AV: { N: 0.85, A: 0.62, L: 0.55, P: 0.2 },
  AC: { L: 0.77, H: 0.44 },
  PR: { N: 0.85, L: 0.62, H: 0.27 },
  UI: { N: 0.85, R: 0.62 },
  S: { U: 0, C: 0 },
  C: { H: 0.56, L: 0.22, N: 0 },
  I: { H: 0.56, L: 0.22, N: 0 },
  A: { H: 0.56, L: 0.22, N: 0 },
} as const;

/** Temporal and environmental metrics: allowed in a v3 vector, ignored by the base score. */
const V3_OTHER_METRICS: Record<string, readonly string[]> = {
  E: ['X', 'U', 'P', 'F', 'H'],
  RL: ['X', 'O', 'T', 'W', 'U'],
  RC: ['X', 'U', 'R', 'C'],
  CR: ['X', 'L', 'M', 'H'],
  IR: ['X', 'L', 'M', 'H'],
  AR: ['X', 'L', 'M', 'H'],
  MAV: ['X', 'N', 'A', 'L', 'P'],
  MAC: ['X', 'L', 'H'],
  MPR: ['X', 'N', 'L', 'H'],
  MUI: ['X', 'N', 'R'],
  MS: ['X', 'U', 'C'],
  MC: ['X', 'N', 'L', 'H'],
  MI: ['X', 'N', 'L', 'H'],
  MA: ['X', 'N', 'L', 'H'],
};

type V3Metric = keyof typeof V3_BASE_WEIGHTS;
const V3_BASE_METRICS = Object.keys(V3_BASE_WEIGHTS) as V3Metric[];

/** Score any supported CVSS vector (`CVSS:3.0/…`, `CVSS:3.1/…`, `CVSS:4.0/…`). */
export function scoreCvss(vector: string): CvssResult {
  if (typeof vector !== 'string') return { ok: false, error: 'vector is not a string' };
  const v = vector.trim();
  if (v.length === 0 || v.length > MAX_VECTOR_LENGTH) return { ok: false, error: 'vector empty or too long' };
  if (v.startsWith('CVSS:3.0/') || v.startsWith('CVSS:3.1/')) return scoreCvss3(v);
  if (v.startsWith('CVSS:4.0/')) return scoreCvss4(v);
  return { ok: false, error: 'unsupported CVSS version prefix' };
}

/** The CVSS v3.1 Roundup: smallest number with one decimal ≥ input, immune to float noise. */
export function roundUp31(input: number): number {
  const intInput = Math.round(input * 100000);
  if (intInput % 10000 === 0) return intInput / 100000;
  return (Math.floor(intInput / 10000) + 1) / 10;
}

/** The CVSS v3.0 round_up(): plain ceiling to one decimal (as published in the 3.0 spec). */
export function roundUp30(input: number): number {
  return Math.ceil(input * 10) / 10;
}

/** v3.0 / v3.1 base score. */
export function scoreCvss3(vector: string): CvssResult {
  const version = vector.startsWith('CVSS:3.0/') ? '3.0' : '3.1';
  const metrics = parseVectorMetrics(vector);
  if (!metrics) return { ok: false, error: 'malformed CVSS v3 vector' };
  const values = {} as Record<V3Metric, string>;
  for (const name of V3_BASE_METRICS) {
    const value = metrics.get(name);
    if (value === undefined) return { ok: false, error: `missing base metric ${name}` };
    if (!Object.hasOwn(V3_BASE_WEIGHTS[name], value)) return { ok: false, error: `invalid value ${name}:${value}` };
    values[name] = value;
  }
  for (const [name, value] of metrics) {
    if ((V3_BASE_METRICS as string[]).includes(name)) continue;
    const allowed = V3_OTHER_METRICS[name];
    if (!allowed) return { ok: false, error: `unknown metric ${name}` };
    if (!allowed.includes(value)) return { ok: false, error: `invalid value ${name}:${value}` };
  }

  const changed = values.S === 'C';
  const w = <M extends V3Metric>(m: M): number => (V3_BASE_WEIGHTS[m] as Record<string, number>)[values[m]] ?? 0;
  // Privileges Required weighs more when the scope changes (spec table 16).
  let pr = w('PR');
  if (changed && values.PR === 'L') pr = 0.68;
  if (changed && values.PR === 'H') pr = 0.5;

  const iss = 1 - (1 - w('C')) * (1 - w('I')) * (1 - w('A'));
  const impact = changed ? 7.52 * (iss - 0.029) - 3.25 * Math.pow(iss - 0.02, 15) : 6.42 * iss;
  const exploitability = 8.22 * w('AV') * w('AC') * pr * w('UI');
  const roundUp = version === '3.0' ? roundUp30 : roundUp31;
  let score: number;
  if (impact <= 0) score = 0;
  else if (changed) score = roundUp(Math.min(1.08 * (impact + exploitability), 10));
  else score = roundUp(Math.min(impact + exploitability, 10));
  return { ok: true, version, score, severity: severityFromScore(score), vector };
}

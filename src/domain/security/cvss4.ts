/**
 * CVSS v4.0 scoring per the FIRST v4.0 specification, section 8: the vector is placed in a
 * MacroVector (six equivalence classes EQ1..EQ6), whose score comes from the lookup table; the
 * score is then lowered by interpolating, per EQ, between that MacroVector and the next lower one
 * in proportion to the vector's severity distance from the class's highest-severity vector.
 *
 * The score uses every metric present (base, threat `E`, environmental): for a vector with only
 * base metrics it is the CVSS-B base score; `E`/`CR`/`IR`/`AR` not given mean their worst case as
 * the spec says. Supplemental metrics do not change the score.
 */
import { parseVectorMetrics, severityFromScore, type CvssResult } from './cvss-common.js';
import { CVSS4_LEVELS, CVSS4_MACROVECTOR_SCORES, CVSS4_MAX_COMPOSED, CVSS4_MAX_SEVERITY } from './cvss4-tables.js';

/** Allowed values of every v4.0 metric; the first 11 are the mandatory base metrics. */
const V4_METRICS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['AV', ['N', 'A', 'L', 'P']],
  ['AC', ['L', 'H']],
  ['AT', ['N', 'P']],
  ['PR', ['N', 'L', 'H']],
  ['UI', ['N', 'P', 'A']],
  ['VC', ['H', 'L', 'N']],
  ['VI', ['H', 'L', 'N']],
  ['VA', ['H', 'L', 'N']],
  ['SC', ['H', 'L', 'N']],
  ['SI', ['H', 'L', 'N']],
  ['SA', ['H', 'L', 'N']],
  ['E', ['X', 'A', 'P', 'U']],
  ['CR', ['X', 'H', 'M', 'L']],
  ['IR', ['X', 'H', 'M', 'L']],
  ['AR', ['X', 'H', 'M', 'L']],
  ['MAV', ['X', 'N', 'A', 'L', 'P']],
  ['MAC', ['X', 'L', 'H']],
  ['MAT', ['X', 'N', 'P']],
  ['MPR', ['X', 'N', 'L', 'H']],
  ['MUI', ['X', 'N', 'P', 'A']],
  ['MVC', ['X', 'H', 'L', 'N']],
  ['MVI', ['X', 'H', 'L', 'N']],
  ['MVA', ['X', 'H', 'L', 'N']],
  ['MSC', ['X', 'H', 'L', 'N']],
  ['MSI', ['X', 'S', 'H', 'L', 'N']],
  ['MSA', ['X', 'S', 'H', 'L', 'N']],
  ['S', ['X', 'N', 'P']],
  ['AU', ['X', 'N', 'Y']],
  ['R', ['X', 'A', 'U', 'I']],
  ['V', ['X', 'D', 'C']],
  ['RE', ['X', 'L', 'M', 'H']],
  ['U', ['X', 'Clear', 'Green', 'Amber', 'Red']],
];
const BASE_METRIC_COUNT = 11;
const ROUNDING_EPSILON = 1e-6;

/** Worst-case value used when a threat/requirement metric is absent or `X` (spec 8.1). */
const WORST_CASE_DEFAULTS: Readonly<Record<string, string>> = { E: 'A', CR: 'H', IR: 'H', AR: 'H' };

/** Effective value of a metric: a modified (M*) environmental value overrides the base one. */
function effective(metrics: ReadonlyMap<string, string>, metric: string): string {
  const own = metrics.get(metric);
  const defaulted = WORST_CASE_DEFAULTS[metric];
  if (defaulted !== undefined && (own === undefined || own === 'X')) return defaulted;
  const modified = metrics.get(`M${metric}`);
  if (modified !== undefined && modified !== 'X') return modified;
  return own ?? 'X';
}

/** The MacroVector digits EQ1..EQ6 (spec table 24–29). */
function macroVector(m: (metric: string) => string): [number, number, number, number, number, number] {
  const av = m('AV');
  const pr = m('PR');
  const ui = m('UI');
  let eq1: number;
  if (av === 'N' && pr === 'N' && ui === 'N') eq1 = 0;
  else if ((av === 'N' || pr === 'N' || ui === 'N') && av !== 'P') eq1 = 1;
  else eq1 = 2;

  const eq2 = m('AC') === 'L' && m('AT') === 'N' ? 0 : 1;

  const vc = m('VC');
  const vi = m('VI');
  const va = m('VA');
  let eq3: number;
  if (vc === 'H' && vi === 'H') eq3 = 0;
  else if (vc === 'H' || vi === 'H' || va === 'H') eq3 = 1;
  else eq3 = 2;

  // Only the modified subsequent-system metrics can take the "Safety" value S.
  let eq4: number;
  if (m('MSI') === 'S' || m('MSA') === 'S') eq4 = 0;
  else if (m('SC') === 'H' || m('SI') === 'H' || m('SA') === 'H') eq4 = 1;
  else eq4 = 2;

  const e = m('E');
  const eq5 = e === 'A' ? 0 : e === 'P' ? 1 : 2;

  const eq6 = (m('CR') === 'H' && vc === 'H') || (m('IR') === 'H' && vi === 'H') || (m('AR') === 'H' && va === 'H') ? 0 : 1;
  return [eq1, eq2, eq3, eq4, eq5, eq6];
}

function lookup(eqs: readonly number[]): number | undefined {
  return CVSS4_MACROVECTOR_SCORES[eqs.join('')];
}

function parseMaxVector(text: string): Map<string, string> {
  return new Map(text.split('/').map((kv) => kv.split(':') as [string, string]));
}

/** Validate a v4.0 vector into a metric map, or return the reason it is invalid. */
function parseV4(vector: string): Map<string, string> | string {
  const metrics = parseVectorMetrics(vector);
  if (!metrics) return 'malformed CVSS v4 vector';
  const known = new Map(V4_METRICS);
  for (const [name, value] of metrics) {
    const allowed = known.get(name);
    if (!allowed) return `unknown metric ${name}`;
    if (!allowed.includes(value)) return `invalid value ${name}:${value}`;
  }
  for (const [name] of V4_METRICS.slice(0, BASE_METRIC_COUNT)) {
    if (!metrics.has(name)) return `missing base metric ${name}`;
  }
  return metrics;
}

/** CVSS v4.0 score of a vector string (`CVSS:4.0/AV:…`). */
export function scoreCvss4(vector: string): CvssResult {
  const parsed = parseV4(vector);
  if (typeof parsed === 'string') return { ok: false, error: parsed };
  const m = (metric: string): string => effective(parsed, metric);
  const done = (score: number): CvssResult => ({ ok: true, version: '4.0', score, severity: severityFromScore(score), vector });

  // No impact on either system: the score is 0 whatever the exploitability.
  if (['VC', 'VI', 'VA', 'SC', 'SI', 'SA'].every((k) => m(k) === 'N')) return done(0);

  const eqs = macroVector(m);
  const [eq1, eq2, eq3, eq4, eq5, eq6] = eqs;
  const value = lookup(eqs);
  if (value === undefined) return { ok: false, error: 'MacroVector not in the lookup table' };

  // Score of the next lower MacroVector for each EQ (undefined: none exists).
  const lower = (index: number, delta = 1): number | undefined => {
    const next = [...eqs];
    next[index] = (next[index] ?? 0) + delta;
    return lookup(next);
  };
  let lowerEq3eq6: number | undefined;
  if (eq3 === 0 && eq6 === 0) {
    // Two ways down (00 → 01 or 00 → 10): the higher of the two scores is taken.
    const left = lower(5);
    const right = lower(2);
    lowerEq3eq6 = left === undefined ? right : right === undefined ? left : Math.max(left, right);
  } else if (eq3 === 1 && eq6 === 0) {
    lowerEq3eq6 = lower(5);
  } else if (eq3 === 2) {
    lowerEq3eq6 = undefined; // 21 is the lowest class.
  } else {
    lowerEq3eq6 = lower(2);
  }
  const lowerScores = [lower(0), lower(1), lowerEq3eq6, lower(3), lower(4)];

  // Severity distance from the first highest-severity vector of this MacroVector that is not less
  // severe than the vector on any metric.
  const candidates: Map<string, string>[] = [];
  for (const a of CVSS4_MAX_COMPOSED.eq1[eq1] ?? [])
    for (const b of CVSS4_MAX_COMPOSED.eq2[eq2] ?? [])
      for (const c of CVSS4_MAX_COMPOSED.eq3eq6[eq3]?.[eq6] ?? [])
        for (const d of CVSS4_MAX_COMPOSED.eq4[eq4] ?? [])
          for (const e of CVSS4_MAX_COMPOSED.eq5[eq5] ?? []) candidates.push(parseMaxVector(`${a}/${b}/${c}/${d}/${e}`));
  const distanceTo = (max: Map<string, string>): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [metric, levels] of Object.entries(CVSS4_LEVELS)) {
      out[metric] = (levels[m(metric)] ?? Number.NaN) - (levels[max.get(metric) ?? ''] ?? Number.NaN);
    }
    return out;
  };
  let distances: Record<string, number> | undefined;
  for (const candidate of candidates) {
    distances = distanceTo(candidate);
    if (Object.values(distances).every((d) => d >= 0)) break;
  }
  if (!distances) return { ok: false, error: 'no highest-severity vector for MacroVector' };
  const d = (k: string): number => distances[k] ?? 0;
  const currentDistance = [
    d('AV') + d('PR') + d('UI'),
    d('AC') + d('AT'),
    d('VC') + d('VI') + d('VA') + d('CR') + d('IR') + d('AR'),
    d('SC') + d('SI') + d('SA'),
    0, // EQ5 has a single value per class: no distance inside it.
  ];
  const step = 0.1;
  const depth = [
    (CVSS4_MAX_SEVERITY.eq1[eq1] ?? Number.NaN) * step,
    (CVSS4_MAX_SEVERITY.eq2[eq2] ?? Number.NaN) * step,
    (CVSS4_MAX_SEVERITY.eq3eq6[eq3]?.[eq6] ?? Number.NaN) * step,
    (CVSS4_MAX_SEVERITY.eq4[eq4] ?? Number.NaN) * step,
    1,
  ];

  // Mean of the proportional distances over the EQs that have a lower MacroVector.
  let sum = 0;
  let existing = 0;
  for (let i = 0; i < lowerScores.length; i++) {
    const lowerScore = lowerScores[i];
    if (lowerScore === undefined) continue;
    existing++;
    const available = value - lowerScore;
    sum += available * ((currentDistance[i] ?? 0) / (depth[i] ?? 1));
  }
  const mean = existing === 0 ? 0 : sum / existing;
  const clamped = Math.max(0, Math.min(10, value - mean));
  // Round half up; the epsilon (as in FIRST's calculator) keeps float noise such as
  // 4.9499999999 (a true 4.95) from rounding down.
  return done(Math.round((clamped + ROUNDING_EPSILON) * 10) / 10);
}

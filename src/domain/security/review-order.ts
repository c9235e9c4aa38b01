/**
 * Review queue ordering: KEV-flagged first, then EPSS descending, then CVSS
 * descending; `sort=sla` orders by SLA deadline ascending, then EPSS descending. Unknown values
 * (null) sort after known ones; ties end on name/version so the order is stable.
 */
import type { Finding } from './types.js';

/** The ordering keys of one queue entry (a package awaiting review). */
export interface ReviewKey {
  name: string;
  version: string;
  /** true when any finding is in KEV; null when KEV data is unknown. */
  in_kev: boolean | null;
  /** Highest EPSS among the findings. */
  epss: number | null;
  /** Highest CVSS score among the findings. */
  cvss_score: number | null;
  /** SLA deadline (ISO string or Date); null when none. */
  sla_deadline: string | Date | null;
}

/** Queue sort modes. */
export type ReviewSort = 'risk' | 'sla';

/** Aggregate a package's findings into its queue keys. */
export function reviewKeyOf(
  pkg: { name: string; version: string; sla_deadline?: string | Date | null },
  findings: readonly Pick<Finding, 'in_kev' | 'epss' | 'cvss_score'>[],
): ReviewKey {
  let inKev: boolean | null = false;
  let epss: number | null = null;
  let cvss: number | null = null;
  let kevUnknown = false;
  for (const f of findings) {
    if (f.in_kev === true) inKev = true;
    if (f.in_kev === null) kevUnknown = true;
    if (f.epss !== null && (epss === null || f.epss > epss)) epss = f.epss;
    if (f.cvss_score !== null && (cvss === null || f.cvss_score > cvss)) cvss = f.cvss_score;
  }
  if (inKev !== true && kevUnknown) inKev = null;
  return { name: pkg.name, version: pkg.version, in_kev: inKev, epss, cvss_score: cvss, sla_deadline: pkg.sla_deadline ?? null };
}

/** Descending on numbers, nulls last. */
function desc(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return b - a;
}

function time(d: string | Date | null): number | null {
  if (d === null) return null;
  const t = d instanceof Date ? d.getTime() : Date.parse(d);
  return Number.isNaN(t) ? null : t;
}

function tieBreak(a: ReviewKey, b: ReviewKey): number {
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.version !== b.version) return a.version < b.version ? -1 : 1;
  return 0;
}

/** Default queue order: KEV first, EPSS desc, CVSS desc. */
export function compareByRisk(a: ReviewKey, b: ReviewKey): number {
  const kev = Number(b.in_kev === true) - Number(a.in_kev === true);
  return kev || desc(a.epss, b.epss) || desc(a.cvss_score, b.cvss_score) || tieBreak(a, b);
}

/** `sort=sla`: SLA deadline ascending (none last), then EPSS desc. */
export function compareBySla(a: ReviewKey, b: ReviewKey): number {
  const ta = time(a.sla_deadline);
  const tb = time(b.sla_deadline);
  let bySla = 0;
  if (ta !== tb) bySla = ta === null ? 1 : tb === null ? -1 : ta - tb;
  return bySla || desc(a.epss, b.epss) || tieBreak(a, b);
}

/** The comparator for a sort mode (unknown modes use the default order). */
export function reviewComparator(sort: string | undefined): (a: ReviewKey, b: ReviewKey) => number {
  return sort === 'sla' ? compareBySla : compareByRisk;
}

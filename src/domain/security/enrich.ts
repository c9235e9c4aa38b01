/**
 * EPSS / KEV enrichment of findings. Both data sets are cached for 24 hours. When the cached
 * data is older than that (or was never fetched) and no refresh was possible, KEV flags are left
 * out (`in_kev: null`) rather than reported stale: "not in KEV" from an old catalogue could hide a
 * newly exploited CVE. EPSS scores move slowly and are kept.
 */
import type { Finding } from './types.js';

/** How long EPSS/KEV data stays authoritative. */
export const ENRICHMENT_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/** One EPSS row. */
export interface EpssEntry {
  epss: number;
  percentile: number;
}

/** EPSS by CVE id. */
export interface EpssLookup {
  get(cveId: string): EpssEntry | undefined;
}

/** KEV membership by CVE id. */
export interface KevLookup {
  has(cveId: string): boolean;
}

/** Context of an enrichment run. */
export interface EnrichContext {
  now: Date;
  /** When EPSS/KEV were last fetched successfully; null = never. */
  epssKevFetchedAt: Date | null;
}

/** Whether data fetched at `fetchedAt` is still within the 24 h cache lifetime. */
export function isEnrichmentFresh(now: Date, fetchedAt: Date | null): boolean {
  if (!fetchedAt) return false;
  const age = now.getTime() - fetchedAt.getTime();
  return age >= 0 && age <= ENRICHMENT_MAX_AGE_MS;
}

/** Findings with `epss`, `epss_percentile` and `in_kev` filled in (new objects). */
export function enrich(findings: readonly Finding[], epss: EpssLookup, kev: KevLookup, context: EnrichContext): Finding[] {
  const fresh = isEnrichmentFresh(context.now, context.epssKevFetchedAt);
  const everFetched = context.epssKevFetchedAt !== null;
  return findings.map((f) => {
    const e = everFetched ? epss.get(f.cve_id) : undefined;
    return {
      ...f,
      epss: e ? e.epss : null,
      epss_percentile: e ? e.percentile : null,
      in_kev: fresh ? kev.has(f.cve_id) : null,
    };
  });
}

/** The distinct CVE ids of findings (to preload lookups from a database). */
export function cveIdsOf(findings: readonly Finding[]): string[] {
  return [...new Set(findings.map((f) => f.cve_id))].sort();
}

/**
 * Severity of an advisory: from its CVSS vector when it has one, else from the
 * distro's own urgency/priority/severity word.
 *
 * Distro word → severity (case-insensitive; Debian's trailing `*`/`**` "guessed" markers and
 * surrounding spaces are ignored):
 *   critical                              → critical
 *   high, important                       → high      (Red Hat/Alma/Rocky/SUSE "Important")
 *   medium, moderate                      → medium    (Red Hat-style "Moderate")
 *   low                                   → low
 *   negligible, unimportant, none         → negligible (Ubuntu "negligible", Debian "unimportant")
 *   anything else (e.g. Debian "not yet assigned", "unknown", "end-of-life") → unknown (null)
 * A finding whose advisory has neither a usable vector nor a known word is reported as `medium`
 * (severity_source `default`) so that it is never silently allowed by a permissive low policy.
 */
import { scoreCvss } from './cvss.js';
import type { Severity, SeveritySource } from './types.js';

const URGENCY_WORDS: Readonly<Record<string, Severity>> = {
  critical: 'critical',
  high: 'high',
  important: 'high',
  medium: 'medium',
  moderate: 'medium',
  low: 'low',
  negligible: 'negligible',
  unimportant: 'negligible',
  none: 'negligible',
};

/** Severity used when nothing is known about a vulnerability. */
export const DEFAULT_UNKNOWN_SEVERITY: Severity = 'medium';

/** Map a distro urgency/priority/severity word to a severity; null when not recognised. */
export function severityFromUrgency(word: string | null | undefined): Severity | null {
  if (typeof word !== 'string') return null;
  const key = word.trim().replace(/\*+$/, '').trim().toLowerCase();
  return URGENCY_WORDS[key] ?? null;
}

/** A CVSS vector offered by a record, with its OSV severity type (CVSS_V3, CVSS_V4, …). */
export interface CvssCandidate {
  type: string;
  score: string;
}

/** The chosen score of an advisory. */
export interface SeverityChoice {
  severity: Severity | null;
  source: SeveritySource | null;
  cvss_vector: string | null;
  cvss_score: number | null;
}

/**
 * Pick the advisory's severity. Among vectors, v3.x is preferred over v4.0 (the finding's
 * `cvss_vector` is documented with v3 metrics, and most distro data is v3); within a version the
 * highest score wins. CVSS v2 vectors are not scored.
 */
export function chooseSeverity(vectors: readonly CvssCandidate[], urgency: string | null): SeverityChoice {
  let best: { rank: number; score: number; vector: string; source: SeveritySource; severity: Severity } | null = null;
  for (const candidate of vectors) {
    const result = scoreCvss(candidate.score);
    if (!result.ok) continue;
    const rank = result.version === '4.0' ? 1 : 2;
    const source: SeveritySource = result.version === '4.0' ? 'cvss_v4' : 'cvss_v3';
    if (!best || rank > best.rank || (rank === best.rank && result.score > best.score)) {
      best = { rank, score: result.score, vector: result.vector, source, severity: result.severity };
    }
  }
  if (best) return { severity: best.severity, source: best.source, cvss_vector: best.vector, cvss_score: best.score };
  const fromWord = severityFromUrgency(urgency);
  return { severity: fromWord, source: fromWord ? 'distro' : null, cvss_vector: null, cvss_score: null };
}

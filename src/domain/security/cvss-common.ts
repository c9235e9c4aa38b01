/** Helpers shared by the CVSS v3 and v4 scorers. */
import type { Severity } from './types.js';

/** A computed score, or why the vector could not be scored. */
export type CvssResult =
  | { ok: true; version: '3.0' | '3.1' | '4.0'; score: number; severity: Severity; vector: string }
  | { ok: false; error: string };

/** Qualitative rating (CVSS v3.1/v4.0 table): 0.0 → negligible ("None"), 0.1–3.9 low, … */
export function severityFromScore(score: number): Severity {
  if (!(score > 0)) return 'negligible';
  if (score < 4) return 'low';
  if (score < 7) return 'medium';
  if (score < 9) return 'high';
  return 'critical';
}

/**
 * Split `CVSS:x.y/K:V/K:V…` into a metric map; null on syntax errors or duplicate metrics.
 */
export function parseVectorMetrics(vector: string): Map<string, string> | null {
  const parts = vector.split('/');
  parts.shift();
  const metrics = new Map<string, string>();
  for (const part of parts) {
    const m = /^([A-Z]{1,3}):([A-Za-z]{1,6})$/.exec(part);
    if (!m) return null;
    const [, key, value] = m as unknown as [string, string, string];
    if (metrics.has(key)) return null;
    metrics.set(key, value);
  }
  return metrics;
}


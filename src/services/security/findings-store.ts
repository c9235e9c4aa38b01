/**
 * Per-package findings as the package row keeps them: JSON `{counts, details}`, what the upload
 * stored. The indexed copy, one row per (package, CVE), is written by adapters/db/findings.table.ts.
 */
import type { FindingCounts } from '../../domain/pipeline/types.js';
import type { Severity, StoredFinding } from '../../domain/security/index.js';

/** The JSON kept in packages.findings. */
export interface StoredFindings {
  counts: FindingCounts;
  details: StoredFinding[];
}

const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'negligible'];

/** Parse packages.findings; anything unexpected reads as "no findings". */
export function parseStoredFindings(json: string): StoredFindings {
  const counts: FindingCounts = { critical: 0, high: 0, medium: 0, low: 0, negligible: 0 };
  try {
    const parsed = JSON.parse(json) as Partial<StoredFindings>;
    const details = Array.isArray(parsed.details) ? parsed.details.filter(isFinding) : [];
    for (const f of details) counts[f.severity]++;
    return { counts, details };
  } catch {
    return { counts, details: [] };
  }
}

function isFinding(v: unknown): v is StoredFinding {
  if (typeof v !== 'object' || v === null) return false;
  const f = v as Partial<StoredFinding>;
  return typeof f.cve_id === 'string' && typeof f.severity === 'string' && (SEVERITIES as readonly string[]).includes(f.severity);
}

/** The JSON to store in packages.findings for these findings. */
export function findingsJson(findings: readonly StoredFinding[]): string {
  const counts: FindingCounts = { critical: 0, high: 0, medium: 0, low: 0, negligible: 0 };
  for (const f of findings) counts[f.severity]++;
  return JSON.stringify({ counts, details: findings });
}

/**
 * Per-package findings. The package row keeps them as JSON (`findings: {counts, details}`, what
 * the upload stored); `package_findings` holds one row per (package, CVE) so listings can filter
 * by severity or CVE with an index instead of parsing every package's JSON.
 */
import type { Transaction } from 'kysely';
import type { Db } from '../../adapters/db/index.js';
import type { Database } from '../../adapters/db/schema.js';
import { severityRank, type Severity } from '../../domain/security/index.js';
import type { FindingCounts } from '../../domain/pipeline/types.js';
import type { StoredFinding } from '../../domain/security/index.js';

type Executor = Db | Transaction<Database>;

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

/** Replace the finding rows of one package. */
export async function writeFindingRows(db: Executor, packageId: string, findings: readonly StoredFinding[]): Promise<void> {
  await replaceFindingRows(db, [{ packageId, findings }]);
}

/** Replace the finding rows of several packages: one delete, then multi-row inserts. */
export async function replaceFindingRows(db: Executor, items: ReadonlyArray<{ packageId: string; findings: readonly StoredFinding[] }>): Promise<void> {
  if (items.length === 0) return;
  for (let i = 0; i < items.length; i += 500) {
    await db.deleteFrom('package_findings').where('package_id', 'in', items.slice(i, i + 500).map((x) => x.packageId)).execute();
  }
  const values = items.flatMap((x) => findingRowValues(x.packageId, x.findings));
  for (let i = 0; i < values.length; i += 300) await db.insertInto('package_findings').values(values.slice(i, i + 300)).execute();
}

function findingRowValues(packageId: string, findings: readonly StoredFinding[]) {
  const seen = new Set<string>();
  const values = [];
  for (const f of findings) {
    if (seen.has(f.cve_id)) continue;
    seen.add(f.cve_id);
    values.push({
      package_id: packageId,
      cve_id: f.cve_id,
      severity: f.severity,
      severity_rank: severityRank(f.severity),
      cvss_score: f.cvss_score ?? null,
      epss: f.epss ?? null,
      in_kev: f.in_kev === null || f.in_kev === undefined ? null : f.in_kev ? 1 : 0,
      fix_state: f.fix_state ?? 'not-fixed',
      data: JSON.stringify(f),
    });
  }
  return values;
}


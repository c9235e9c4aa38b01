/**
 * One row per (package, CVE) in `package_findings`, beside the JSON the package row keeps, so
 * listings can filter by severity or CVE with an index instead of parsing every package's JSON.
 */
import type { Insertable, Selectable } from 'kysely';
import type { StoredFinding } from '../../domain/security/index.js';
import { severityRank } from '../../domain/security/types.js';
import type { Db } from './index.js';
import type { PackageFindingsTable } from './schema.js';

export type FindingRow = Selectable<PackageFindingsTable>;
export type NewFindingRow = Insertable<PackageFindingsTable>;

/** SQL parameter lists are bounded: packages per delete, rows per multi-row insert. */
const DELETE_CHUNK = 500;
const INSERT_CHUNK = 300;

/** Replace the finding rows of one package. */
export async function writeFindingRows(db: Db, packageId: string, findings: readonly StoredFinding[]): Promise<void> {
  await replaceFindingRows(db, [{ packageId, findings }]);
}

/** Replace the finding rows of several packages: one delete, then multi-row inserts. */
export async function replaceFindingRows(db: Db, items: ReadonlyArray<{ packageId: string; findings: readonly StoredFinding[] }>): Promise<void> {
  if (items.length === 0) return;
  for (let i = 0; i < items.length; i += DELETE_CHUNK) {
    await db.deleteFrom('package_findings').where('package_id', 'in', items.slice(i, i + DELETE_CHUNK).map((x) => x.packageId)).execute();
  }
  const values = items.flatMap((x) => findingRowValues(x.packageId, x.findings));
  for (let i = 0; i < values.length; i += INSERT_CHUNK) await db.insertInto('package_findings').values(values.slice(i, i + INSERT_CHUNK)).execute();
}

/** A package's rows, one per CVE (the first finding of a CVE wins: the key is package and CVE). */
function findingRowValues(packageId: string, findings: readonly StoredFinding[]): NewFindingRow[] {
  const seen = new Set<string>();
  const values: NewFindingRow[] = [];
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

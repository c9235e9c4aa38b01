import type { Insertable, Selectable } from 'kysely';
import { INDEXED_STATUSES } from '../../domain/distributions.js';
import type { Db } from './index.js';
import type { PackagesTable, SbomInventoryTable } from './schema.js';

/** The columns an SBOM needs (not the index entry or file list). */
export const SBOM_COLUMNS = [
  'id', 'distribution', 'format', 'name', 'version', 'arch', 'status', 'sha256', 'size', 'filename', 'pool_path',
  'source_name', 'source_version', 'metadata', 'relations', 'findings',
] as const;
export type SbomRow = Pick<Selectable<PackagesTable>, (typeof SBOM_COLUMNS)[number]>;

export type SbomInventoryInsert = Insertable<SbomInventoryTable>;

/** The names (package or virtual, not file) among `names` that the distribution's indexed packages provide, with their provider. */
export async function findIndexedProvidersOf(db: Db, codename: string, names: readonly string[]): Promise<Array<Pick<SbomRow, 'format' | 'name' | 'version' | 'arch'> & { provided: string }>> {
  return db
    .selectFrom('package_provides as pp')
    .innerJoin('packages as p', 'p.id', 'pp.package_id')
    .select(['pp.name as provided', 'p.format', 'p.name', 'p.version', 'p.arch'])
    .where('pp.distribution', '=', codename)
    .where('pp.name', 'in', names)
    .where('p.status', 'in', INDEXED_STATUSES)
    .where('pp.kind', '!=', 'file')
    .execute();
}

/** One keyset page of the distribution's indexed packages: the first `limit` ids after `after`. */
export async function findIndexedSbomRowsAfter(db: Db, codename: string, after: string, limit: number): Promise<SbomRow[]> {
  return db
    .selectFrom('packages')
    .select([...SBOM_COLUMNS])
    .where('distribution', '=', codename)
    .where('status', 'in', INDEXED_STATUSES)
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** A package row with what its SBOM entry needs besides: the cached inventory (JSON) and the decision record. */
export type SbomPageRow = SbomRow & {
  /** The file's inventory cached by this scanner version, or null when not yet computed. */
  inventory: string | null;
  /** The decision record on this name, version and arch (null columns when there is none). */
  decision_action: string | null;
  decision_justification: string | null;
  decision_decided_at: string | null;
  decision_expires_at: string | null;
  decision_target_version: string | null;
  decision_covered_cve_ids: string | null;
};

/**
 * One keyset page of the distribution's indexed packages (the first `limit` ids after `after`),
 * each joined with its cached inventory and its decision record: one round trip per page instead
 * of three (a decision is keyed by name, version and arch, an inventory by file, so neither join
 * repeats a package).
 */
export async function findIndexedSbomPage(db: Db, codename: string, after: string, limit: number, scanner: number): Promise<SbomPageRow[]> {
  return db
    .selectFrom('packages as p')
    .leftJoin('sbom_inventory as i', (join) => join.onRef('i.sha256', '=', 'p.sha256').on('i.scanner', '=', scanner))
    .leftJoin('security_decisions as d', (join) => join.onRef('d.name', '=', 'p.name').onRef('d.version', '=', 'p.version').onRef('d.arch', '=', 'p.arch'))
    .select(SBOM_COLUMNS.map((c) => `p.${c}` as const))
    .select([
      'i.data as inventory', 'd.action as decision_action', 'd.justification as decision_justification', 'd.decided_at as decision_decided_at',
      'd.expires_at as decision_expires_at', 'd.target_version as decision_target_version', 'd.covered_cve_ids as decision_covered_cve_ids',
    ])
    .where('p.distribution', '=', codename)
    .where('p.status', 'in', INDEXED_STATUSES)
    .where('p.id', '>', after)
    .orderBy('p.id')
    .limit(limit)
    .execute();
}

/** Every row of one package version (any status, any distribution unless filtered), oldest first. */
export async function findSbomRowsOfVersion(db: Db, name: string, version: string, filter: { arch?: string; distribution?: string }): Promise<SbomRow[]> {
  let q = db.selectFrom('packages').select([...SBOM_COLUMNS]).where('name', '=', name).where('version', '=', version);
  if (filter.arch) q = q.where('arch', '=', filter.arch);
  if (filter.distribution) q = q.where('distribution', '=', filter.distribution);
  return q.orderBy('created_at').orderBy('seq').execute();
}

/** The distribution's indexed packages of these names. */
export async function findIndexedSbomRowsByName(db: Db, codename: string, names: readonly string[]): Promise<SbomRow[]> {
  return db.selectFrom('packages').select([...SBOM_COLUMNS]).where('distribution', '=', codename).where('name', 'in', names).where('status', 'in', INDEXED_STATUSES).execute();
}

/** Ids of the distribution's packages, rejected ones aside, with a finding of at least this severity rank. */
export async function findIdsOfPackagesWithFindings(db: Db, codename: string, minSeverityRank: number): Promise<string[]> {
  const rows = await db
    .selectFrom('package_findings as f')
    .innerJoin('packages as p', 'p.id', 'f.package_id')
    .select('p.id')
    .distinct()
    .where('p.distribution', '=', codename)
    .where('p.status', '!=', 'rejected')
    .where('f.severity_rank', '>=', minSeverityRank)
    .execute();
  return rows.map((r) => r.id);
}

/** These packages, by name then id. */
export async function findSbomRowsByIds(db: Db, ids: readonly string[]): Promise<SbomRow[]> {
  return db.selectFrom('packages').select([...SBOM_COLUMNS]).where('id', 'in', ids).orderBy('name').orderBy('id').execute();
}

/** Cached inventories (JSON) of these files, computed by this scanner version. */
export async function findCachedInventories(db: Db, shas: readonly string[], scanner: number): Promise<Array<{ sha256: string; data: string }>> {
  return db.selectFrom('sbom_inventory').select(['sha256', 'data']).where('sha256', 'in', shas).where('scanner', '=', scanner).execute();
}

/** Caches a file's inventory, replacing one computed by another scanner version (its creation time is kept). */
export async function saveInventory(db: Db, row: SbomInventoryInsert): Promise<void> {
  await db
    .insertInto('sbom_inventory')
    .values(row)
    .onConflict((oc) => oc.column('sha256').doUpdateSet({ scanner: row.scanner, data: row.data }))
    .execute();
}

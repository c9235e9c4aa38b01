import type { Transaction } from 'kysely';
import type { Db } from '../../adapters/db/index.js';
import type { Database, PackagesTable } from '../../adapters/db/schema.js';
import { INDEXED_STATUSES, isIndexed } from '../../domain/distributions.js';
import type { StoredFinding } from '../../domain/security/index.js';
import type { ProvideRow, ProvidesLookup } from '../formats/types.js';
import { writeFindingRows } from '../security/findings-store.js';

export type PackageRow = PackagesTable;
type Executor = Db | Transaction<Database>;

/** PostgreSQL returns bigint columns as strings; the rest of the code sees numbers. */
export function normaliseRow(row: PackageRow): PackageRow {
  return { ...row, size: Number(row.size), seq: Number(row.seq) };
}

export async function findPackage(db: Executor, dist: string, name: string, version: string, arch: string): Promise<PackageRow | undefined> {
  const row = await db
    .selectFrom('packages')
    .selectAll()
    .where('distribution', '=', dist)
    .where('name', '=', name)
    .where('version', '=', version)
    .where('arch', '=', arch)
    .executeTakeFirst();
  return row && normaliseRow(row);
}

/** The rows of a package name, narrowed by version, distribution or arch, in upload order. */
export async function packageRows(
  db: Executor,
  name: string,
  filter: { version?: string | null; distribution?: string | null; arch?: string | null } = {},
): Promise<PackageRow[]> {
  let q = db.selectFrom('packages').selectAll().where('name', '=', name);
  if (filter.version) q = q.where('version', '=', filter.version);
  if (filter.distribution) q = q.where('distribution', '=', filter.distribution);
  if (filter.arch) q = q.where('arch', '=', filter.arch);
  return (await q.orderBy('created_at').orderBy('seq').execute()).map(normaliseRow);
}

export async function packageById(db: Executor, id: string): Promise<PackageRow | undefined> {
  const row = await db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirst();
  return row && normaliseRow(row);
}

/**
 * Marks a distribution's index out of date and returns its new generation. Inside a transaction
 * this also locks the distribution row until commit, so generations are handed out in commit
 * order: a package listed with generation N is committed before any with N+1 becomes visible.
 */
export async function bumpGeneration(db: Executor, codename: string): Promise<number> {
  const row = await db
    .updateTable('distributions')
    .set((eb) => ({ generation: eb('generation', '+', 1) }))
    .where('codename', '=', codename)
    .returning('generation')
    .executeTakeFirstOrThrow();
  return Number(row.generation);
}

/**
 * Inserts a package row with what it provides and its findings (give it a transaction: the
 * listings then never see a package without its finding rows). A package entering the index
 * takes the new generation as its `seq`, so the index lists it after every package published
 * before it and the publisher can append it instead of rewriting the index.
 */
export async function insertPackage(db: Executor, row: PackageRow, provides: ProvideRow[], findings: readonly StoredFinding[] = []): Promise<void> {
  if (isIndexed(row.status)) row.seq = await bumpGeneration(db, row.distribution);
  await db.insertInto('packages').values(row).execute();
  if (provides.length) {
    await db
      .insertInto('package_provides')
      .values(provides.map((p) => ({ package_id: row.id, distribution: row.distribution, kind: p.kind, name: p.name, version: p.version, flags: p.flags })))
      .execute();
  }
  if (findings.length) await writeFindingRows(db, row.id, findings);
}

/**
 * Another indexed package at this pool path with other bytes: one pool path holds one file, and
 * only indexed packages occupy the pool (held and quarantined ones keep their file elsewhere).
 */
export async function findPoolConflict(db: Executor, poolPath: string, sha256: string): Promise<{ sha256: string; distribution: string } | undefined> {
  return db
    .selectFrom('packages')
    .select(['sha256', 'distribution'])
    .where('pool_path', '=', poolPath)
    .where('sha256', '!=', sha256)
    .where('status', 'in', INDEXED_STATUSES)
    .executeTakeFirst();
}

export async function deletePackageRow(db: Executor, row: PackageRow): Promise<void> {
  await db.deleteFrom('package_provides').where('package_id', '=', row.id).execute();
  await db.deleteFrom('packages').where('id', '=', row.id).execute();
  if (isIndexed(row.status)) await bumpGeneration(db, row.distribution);
}

/** How many rows (any distribution) still use a stored file or a published path. */
export async function countReferences(db: Executor, column: 'sha256' | 'pool_path', value: string, indexedOnly = false): Promise<number> {
  let q = db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).where(column, '=', value);
  if (indexedOnly) q = q.where('status', 'in', INDEXED_STATUSES);
  return Number((await q.executeTakeFirst())?.n ?? 0);
}

/** Dependency lookups against what a distribution publishes. */
export function providesLookup(db: Db, codename: string): ProvidesLookup {
  return async (names) => {
    const rows = await db
      .selectFrom('package_provides as pp')
      .innerJoin('packages as p', 'p.id', 'pp.package_id')
      .select(['pp.kind', 'pp.name', 'pp.version', 'pp.flags', 'p.name as package', 'p.version as packageVersion', 'p.arch', 'p.relations'])
      .where('pp.distribution', '=', codename)
      .where('pp.name', 'in', names)
      .where('p.status', 'in', INDEXED_STATUSES)
      .execute();
    return rows.map((r) => ({
      kind: r.kind as ProvideRow['kind'],
      name: r.name,
      version: r.version,
      flags: r.flags === null ? null : Number(r.flags),
      package: r.package,
      packageVersion: r.packageVersion,
      arch: r.arch,
      multiArch: (JSON.parse(r.relations) as { multiArch?: string | null }).multiArch ?? null,
    }));
  };
}

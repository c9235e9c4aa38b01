import { PostgresAdapter, sql, type Insertable, type Selectable } from 'kysely';
import { INDEXED_STATUSES, isIndexed, type PackageStatus } from '../../domain/distributions.js';
import type { StoredFinding } from '../../domain/security/index.js';
import { bumpGeneration } from './distributions.table.js';
import { writeFindingRows } from './findings.table.js';
import type { Db } from './index.js';
import type { PackageProvidesTable, PackagesTable } from './schema.js';

/** A package row; `listed_generation` may be left out of rows built in memory (absent is 0: listed at admission). */
export type PackageRow = Omit<Selectable<PackagesTable>, 'listed_generation'> & { listed_generation?: number | null };
/** A name a package answers to in dependency checks, as stored for it in its distribution. */
export type ProvidesValues = Omit<Insertable<PackageProvidesTable>, 'package_id' | 'distribution'>;

/** PostgreSQL returns bigint columns as strings; the rest of the code sees numbers. */
export function normaliseRow(row: PackageRow): PackageRow {
  return { ...row, size: Number(row.size), upload_size: Number(row.upload_size), seq: Number(row.seq) };
}

/** `like` pattern with the wildcard characters of the user's text escaped. */
const containing = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function findPackage(db: Db, dist: string, name: string, version: string, arch: string): Promise<PackageRow | undefined> {
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

/** Which file a name/version/arch holds in a distribution, if any: its row id, uploaded SHA-256 and status (not the whole row). */
export async function findStoredUpload(db: Db, dist: string, name: string, version: string, arch: string): Promise<Pick<PackageRow, 'id' | 'upload_sha256' | 'status'> | undefined> {
  return db
    .selectFrom('packages')
    .select(['id', 'upload_sha256', 'status'])
    .where('distribution', '=', dist)
    .where('name', '=', name)
    .where('version', '=', version)
    .where('arch', '=', arch)
    .executeTakeFirst();
}

/** The rows of a package name, narrowed by version, distribution or arch, in upload order. */
export async function packageRows(
  db: Db,
  name: string,
  filter: { version?: string | null; distribution?: string | null; arch?: string | null } = {},
): Promise<PackageRow[]> {
  let q = db.selectFrom('packages').selectAll().where('name', '=', name);
  if (filter.version) q = q.where('version', '=', filter.version);
  if (filter.distribution) q = q.where('distribution', '=', filter.distribution);
  if (filter.arch) q = q.where('arch', '=', filter.arch);
  return (await q.orderBy('created_at').orderBy('seq').execute()).map(normaliseRow);
}

export async function packageById(db: Db, id: string): Promise<PackageRow | undefined> {
  const row = await db.selectFrom('packages').selectAll().where('id', '=', id).executeTakeFirst();
  return row && normaliseRow(row);
}

/** The rows of a distribution (only the named packages when names are given), in upload order. */
export async function packagesInDistribution(db: Db, codename: string, names: readonly string[] | null): Promise<PackageRow[]> {
  let q = db.selectFrom('packages').selectAll().where('distribution', '=', codename);
  // `in ()` is not valid SQL: an empty list matches no name instead.
  if (names) q = q.where('name', 'in', names.length ? names : ['']);
  return (await q.orderBy('created_at').orderBy('seq').execute()).map(normaliseRow);
}

/** Every package some index lists, whatever its distribution. */
export async function indexedPackages(db: Db): Promise<PackageRow[]> {
  return (await db.selectFrom('packages').selectAll().where('status', 'in', INDEXED_STATUSES).execute()).map(normaliseRow);
}

export async function countPackages(db: Db): Promise<number> {
  return Number((await db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n ?? 0);
}

/**
 * Inserts a package row with what it provides and its findings (give it a transaction: the
 * listings then never see a package without its finding rows). A package entering the index
 * takes the new generation as its `seq`, so the index lists it after every package published
 * before it and the publisher can append it instead of rewriting the index.
 */
export async function insertPackage(db: Db, row: PackageRow, provides: readonly ProvidesValues[], findings: readonly StoredFinding[] = []): Promise<void> {
  if (isIndexed(row.status)) row.seq = await bumpGeneration(db, row.distribution);
  // A new row's file list is read at admission (0) or still to be read (null), whatever row it was copied from.
  await db.insertInto('packages').values({ ...row, listed_generation: row.listed_generation === null ? null : 0 }).execute();
  if (provides.length) {
    await db
      .insertInto('package_provides')
      .values(provides.map((p) => ({ package_id: row.id, distribution: row.distribution, kind: p.kind, name: p.name, version: p.version, flags: p.flags })))
      .execute();
  }
  if (findings.length) await writeFindingRows(db, row.id, findings);
}

/** Gives the copy of a package (in another distribution) what the original provides. */
export async function copyProvides(db: Db, fromId: string, toId: string, toDistribution: string): Promise<void> {
  await db
    .insertInto('package_provides')
    .columns(['package_id', 'distribution', 'kind', 'name', 'version', 'flags'])
    .expression((eb) =>
      eb
        .selectFrom('package_provides')
        .select([eb.val(toId).as('package_id'), eb.val(toDistribution).as('distribution'), 'kind', 'name', 'version', 'flags'])
        .where('package_id', '=', fromId),
    )
    .execute();
}

/** Gives the copy of a package the finding rows of the original. */
export async function copyFindings(db: Db, fromId: string, toId: string): Promise<void> {
  await db
    .insertInto('package_findings')
    .columns(['package_id', 'cve_id', 'severity', 'severity_rank', 'cvss_score', 'epss', 'in_kev', 'fix_state', 'data'])
    .expression((eb) =>
      eb
        .selectFrom('package_findings')
        .select([eb.val(toId).as('package_id'), 'cve_id', 'severity', 'severity_rank', 'cvss_score', 'epss', 'in_kev', 'fix_state', 'data'])
        .where('package_id', '=', fromId),
    )
    .execute();
}

/** Stores the step results and reasons of the upload that stored the package. */
export async function updatePackagePipeline(db: Db, id: string, pipeline: string, reasons: string): Promise<void> {
  await db.updateTable('packages').set({ pipeline, reasons }).where('id', '=', id).execute();
}

/**
 * Another indexed package at this pool path with other bytes: one pool path holds one file, and
 * only indexed packages occupy the pool (held and quarantined ones keep their file elsewhere).
 */
export async function findPoolConflict(db: Db, poolPath: string, sha256: string): Promise<{ sha256: string; distribution: string } | undefined> {
  return db
    .selectFrom('packages')
    .select(['sha256', 'distribution'])
    .where('pool_path', '=', poolPath)
    .where('sha256', '!=', sha256)
    .where('status', 'in', INDEXED_STATUSES)
    .executeTakeFirst();
}

/**
 * PostgreSQL only, inside a transaction: waits for, then holds until the transaction ends, the
 * lock every replica takes before it puts a file at `poolPath` and writes the row naming it.
 */
export async function lockPoolPath(trx: Db, poolPath: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`tollgate:pool:${poolPath}`}))`.execute(trx);
}

/** True when `db` talks to PostgreSQL (replicas may share it), false for SQLite (one process). */
export function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Removes the row and what it provides; an indexed one leaves its distribution's index out of date.
 * The distribution row is locked first, as every other writer of a package row does (an insert,
 * `recordFileLists`): the other order deadlocked on PostgreSQL against a payload's file list being
 * recorded for the package being deleted.
 */
export async function deletePackageRow(db: Db, row: PackageRow): Promise<void> {
  if (isIndexed(row.status)) await bumpGeneration(db, row.distribution);
  await db.deleteFrom('package_provides').where('package_id', '=', row.id).execute();
  await db.deleteFrom('packages').where('id', '=', row.id).execute();
}

/** How many rows (any distribution) still use a stored file or a published path. */
export async function countReferences(db: Db, column: 'sha256' | 'pool_path', value: string, indexedOnly = false): Promise<number> {
  let q = db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).where(column, '=', value);
  if (indexedOnly) q = q.where('status', 'in', INDEXED_STATUSES);
  return Number((await q.executeTakeFirst())?.n ?? 0);
}

/** The provides rows of a distribution's indexed packages answering to the names, with their package. */
export async function findProvidersOf(db: Db, codename: string, names: readonly string[]) {
  return db
    .selectFrom('package_provides as pp')
    .innerJoin('packages as p', 'p.id', 'pp.package_id')
    .select(['pp.kind', 'pp.name', 'pp.version', 'pp.flags', 'p.name as package', 'p.version as packageVersion', 'p.arch', 'p.relations'])
    .where('pp.distribution', '=', codename)
    .where('pp.name', 'in', names)
    .where('p.status', 'in', INDEXED_STATUSES)
    .execute();
}

type PackageFilter = { q?: string; distribution?: string; status?: PackageStatus };

function packagesMatching(db: Db, filter: PackageFilter) {
  let q = db.selectFrom('packages');
  if (filter.distribution) q = q.where('distribution', '=', filter.distribution);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.q) q = q.where(sql`lower(name)`, 'like', sql`${containing(filter.q)} escape '\\'`);
  return q;
}

/** How many package rows match (a scan of the matches: callers keep it per catalog generation). */
export async function countPackagesMatching(db: Db, filter: PackageFilter): Promise<number> {
  return Number((await packagesMatching(db, filter).select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n ?? 0);
}

/** A page of package rows, by name then upload order (the name index serves the order: the page reads about its own rows). */
export async function findPackagesPage(db: Db, filter: PackageFilter, page: { page: number; perPage: number }): Promise<PackageRow[]> {
  const rows = await packagesMatching(db, filter).selectAll().orderBy('name').orderBy('created_at').orderBy('seq').limit(page.perPage).offset((page.page - 1) * page.perPage).execute();
  return rows.map(normaliseRow);
}

function packageNames(db: Db, distribution?: string) {
  const names = db.selectFrom('packages').select('name').distinct();
  return distribution ? names.where('distribution', '=', distribution) : names;
}

/** How many distinct package names there are (a scan of the name index: callers keep it per catalog generation). */
export async function countPackageNames(db: Db, distribution?: string): Promise<number> {
  return Number((await db.selectFrom(packageNames(db, distribution).as('n')).select((eb) => eb.fn.countAll().as('c')).executeTakeFirst())?.c ?? 0);
}

/** A page of distinct package names in name order. */
export async function findPackageNamesPage(db: Db, page: { page: number; perPage: number }, distribution?: string): Promise<string[]> {
  return (await packageNames(db, distribution).orderBy('name').limit(page.perPage).offset((page.page - 1) * page.perPage).execute()).map((r) => r.name);
}

/** The columns a listing of package versions shows: not the wide ones (index entry, metadata, file list, relations). */
export const VERSION_LIST_COLUMNS = [
  'id', 'name', 'version', 'arch', 'distribution', 'format', 'status', 'cve_status', 'sha256', 'size', 'filename', 'pool_path',
  'source_name', 'source_version', 'uploaded_by', 'created_at', 'sla_deadline', 'findings', 'reasons', 'seq',
] as const;
export type VersionListRow = Pick<PackageRow, (typeof VERSION_LIST_COLUMNS)[number]>;

/** Every version of the named packages (in one distribution when given), in upload order, as listings show them. */
export async function packageVersionsNamed(db: Db, names: readonly string[], distribution?: string): Promise<VersionListRow[]> {
  let q = db.selectFrom('packages').select([...VERSION_LIST_COLUMNS]).where('name', 'in', names);
  if (distribution) q = q.where('distribution', '=', distribution);
  return (await q.orderBy('created_at').orderBy('seq').execute()).map((r) => ({ ...r, size: Number(r.size), seq: Number(r.seq) }));
}

/** Every version of a package with its validation record (not its index entry, metadata or file list), in upload order. */
export async function packageVersionsWithSteps(db: Db, name: string): Promise<Array<VersionListRow & Pick<PackageRow, 'pipeline'>>> {
  const rows = await db.selectFrom('packages').select([...VERSION_LIST_COLUMNS, 'pipeline']).where('name', '=', name).orderBy('created_at').orderBy('seq').execute();
  return rows.map((r) => ({ ...r, size: Number(r.size), seq: Number(r.seq) }));
}

/** How many indexed packages each distribution that has any holds. */
export async function countIndexedPackagesByDistribution(db: Db): Promise<Array<{ distribution: string; n: number }>> {
  const rows = await db
    .selectFrom('packages')
    .select(['distribution', (eb) => eb.fn.countAll().as('n')])
    .where('status', 'in', INDEXED_STATUSES)
    .groupBy('distribution')
    .execute();
  return rows.map((r) => ({ distribution: r.distribution, n: Number(r.n) }));
}

/** RPM rows whose served file a re-signing must replace: kept or quarantined files are left alone. */
const RESIGNABLE_STATUSES = ['published', 'accepted_risk', 'exception', 'pending_review', 'upgrade_required'] as const;

/**
 * The next RPM rows (by id, after `afterId`) whose file is not signed by `fingerprint`: signed by
 * an earlier repository key, or stored before packages were signed. Kept upstream signatures are
 * not the repository's to replace.
 */
export async function rpmRowsNotSignedBy(db: Db, fingerprint: string, upstream: string, afterId: string, limit: number): Promise<PackageRow[]> {
  const rows = await db
    .selectFrom('packages')
    .selectAll()
    .where('format', '=', 'rpm')
    .where('status', 'in', RESIGNABLE_STATUSES)
    .where((eb) => eb.or([eb('signed_by', 'is', null), eb.and([eb('signed_by', '!=', fingerprint), eb('signed_by', '!=', upstream)])]))
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(normaliseRow);
}

/** How many RPM rows each signer (fingerprint, `upstream`, or null) signed, among those re-signing covers. */
export async function countRpmRowsBySigner(db: Db): Promise<Array<{ signed_by: string | null; n: number }>> {
  const rows = await db
    .selectFrom('packages')
    .select(['signed_by', (eb) => eb.fn.countAll().as('n')])
    .where('format', '=', 'rpm')
    .where('status', 'in', RESIGNABLE_STATUSES)
    .groupBy('signed_by')
    .execute();
  return rows.map((r) => ({ signed_by: r.signed_by, n: Number(r.n) }));
}

/** What a re-signed file changes in its row. */
export type ServedFileUpdate = Pick<PackageRow, 'sha256' | 'sha512' | 'sha1' | 'md5' | 'size' | 'pool_path' | 'index_entry' | 'metadata' | 'signed_by' | 'updated_at'>;

/**
 * Points a row at its re-signed file, provided it still serves `fromSha256` with the same status
 * (a concurrent delete, decision, or another replica's re-signing wins); an indexed row leaves its index out of date.
 * False when the row was not changed.
 */
export async function replaceServedFile(db: Db, row: Pick<PackageRow, 'id' | 'distribution' | 'status'>, fromSha256: string, update: ServedFileUpdate): Promise<boolean> {
  const result = await db.updateTable('packages').set(update).where('id', '=', row.id).where('sha256', '=', fromSha256).where('status', '=', row.status).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  if (isIndexed(row.status)) await bumpGeneration(db, row.distribution);
  return true;
}

/** The source package rows (arch `source`) whose .dsc is in a pool folder (`apt/pool/…/<source>`), for the files they share there. */
export async function sourceRowsIn(db: Db, dir: string, indexedOnly = false): Promise<Array<Pick<PackageRow, 'id' | 'pool_path' | 'metadata' | 'status' | 'distribution'>>> {
  let q = db.selectFrom('packages').select(['id', 'pool_path', 'metadata', 'status', 'distribution']).where('format', '=', 'deb').where('arch', '=', 'source');
  if (indexedOnly) q = q.where('status', 'in', INDEXED_STATUSES);
  // Source names and components hold no LIKE wildcard (`_`, `%`); the prefix is checked again below all the same.
  const rows = await q.where('pool_path', 'like', `${dir}/%`).execute();
  return rows.filter((r) => r.pool_path.startsWith(`${dir}/`) && !r.pool_path.slice(dir.length + 1).includes('/'));
}

/** How many source package rows name a stored file (by SHA-256) among the files of their .dsc. */
export async function countSourceFileReferences(db: Db, sha256: string): Promise<number> {
  if (!/^[0-9a-f]{64}$/.test(sha256)) return 0;
  const n = await db
    .selectFrom('packages')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('format', '=', 'deb')
    .where('arch', '=', 'source')
    .where('metadata', 'like', `%"sha256":"${sha256}"%`)
    .executeTakeFirst();
  return Number(n?.n ?? 0);
}

/** A package whose file list is still to be read from its payload. */
export interface UnlistedPackage {
  id: string;
  distribution: string;
  name: string;
  version: string;
  arch: string;
  sha256: string;
  status: PackageRow['status'];
}

/**
 * Packages waiting for their file list (migration 0013). A quarantined file is not in the store;
 * its list is read if it is ever released.
 */
const unlisted = (db: Db) => db.selectFrom('packages').where('listed_generation', 'is', null).where('status', '!=', 'quarantined');

/** How many packages wait for their file list. */
export async function countUnlistedPackages(db: Db): Promise<number> {
  const row = await unlisted(db).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The oldest packages still waiting for their file list (migration 0013). */
export async function unlistedPackages(db: Db, limit: number): Promise<UnlistedPackage[]> {
  return unlisted(db)
    .select(['id', 'distribution', 'name', 'version', 'arch', 'sha256', 'status'])
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/**
 * Stores file lists read after admission, of packages of one distribution, under one new
 * generation of it (so its index is out of date until published again, and the publisher knows
 * which Contents lines arrived since it last published): one transaction for a batch. Returns how
 * many were stored; a list stored already (another replica) is left, and when all were, nothing
 * changes (0).
 */
export async function recordFileLists(db: Db, distribution: string, lists: ReadonlyArray<{ id: string; files: string }>): Promise<number> {
  if (lists.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    const generation = await bumpGeneration(trx, distribution);
    let stored = 0;
    for (const { id, files } of lists) {
      const result = await trx
        .updateTable('packages')
        .set({ files, listed_generation: generation })
        .where('id', '=', id)
        .where('listed_generation', 'is', null)
        .executeTakeFirst();
      stored += Number(result.numUpdatedRows);
    }
    // Rolled back: the generation is not bumped for nothing.
    if (stored === 0) throw new ListedAlready();
    return stored;
  }).catch((error: unknown) => {
    if (error instanceof ListedAlready) return 0;
    throw error;
  });
}

class ListedAlready extends Error {}

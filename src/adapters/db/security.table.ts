/**
 * The security gate's queries over packages and their finding rows: status changes, the rows a
 * rescan or a job walks through, and the read-only views (vulnerabilities, posture, packages with
 * findings, review queue). Package rows come back as stored: callers normalise their bigint
 * columns.
 */
import { sql, type Selectable, type Updateable } from 'kysely';
import type { PackageStatus } from '../../domain/distributions.js';
import type { Severity } from '../../domain/security/types.js';
import type { Db } from './index.js';
import type { PackagesTable } from './schema.js';

type StoredPackage = Selectable<PackagesTable>;

/** What a status change writes to a package row. */
export type PackageStatusValues = Pick<Updateable<PackagesTable>, 'status' | 'cve_status' | 'sla_deadline' | 'reasons' | 'findings' | 'updated_at' | 'seq'>;

interface Page {
  page: number;
  perPage: number;
}

// ---- status changes, rescans and jobs ----

export async function writePackageStatus(db: Db, id: string, values: PackageStatusValues): Promise<void> {
  await db.updateTable('packages').set(values).where('id', '=', id).execute();
}

/** How many other rows use the stored file `sha256` without being quarantined. */
export async function countOtherUnquarantinedCopies(db: Db, sha256: string, exceptId: string): Promise<number> {
  const row = await db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).where('sha256', '=', sha256).where('id', '!=', exceptId).where('status', '!=', 'quarantined').executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function countPackagesInStatus(db: Db, status: PackageStatus): Promise<number> {
  return Number((await db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).where('status', '=', status).executeTakeFirst())?.n ?? 0);
}

/** Every row of a distribution, in index order. */
export async function findDistributionPackagesInIndexOrder(db: Db, codename: string): Promise<StoredPackage[]> {
  return db.selectFrom('packages').selectAll().where('distribution', '=', codename).orderBy('seq').execute();
}

/** Every row of a name and version (all arches and distributions), in index order. */
export async function findVersionRowsInIndexOrder(db: Db, name: string, version: string): Promise<StoredPackage[]> {
  return db.selectFrom('packages').selectAll().where('name', '=', name).where('version', '=', version).orderBy('seq').execute();
}

/** Rows in one of `statuses` that have an SLA deadline. */
export async function findPackagesWithDeadline(db: Db, statuses: readonly PackageStatus[]): Promise<StoredPackage[]> {
  return db.selectFrom('packages').selectAll().where('status', 'in', [...statuses]).where('sla_deadline', 'is not', null).execute();
}

/**
 * What the review queue orders by, for the rows in one of `statuses` (of one distribution when
 * given): the findings and the deadline, not the wide columns (index entry, metadata, file list),
 * which only the page shown needs.
 */
export function findReviewKeysInStatuses(db: Db, statuses: readonly PackageStatus[], distribution?: string) {
  let q = db.selectFrom('packages').select(['id', 'name', 'version', 'distribution', 'sla_deadline', 'findings']).where('status', 'in', [...statuses]);
  if (distribution) q = q.where('distribution', '=', distribution);
  return q.execute();
}

/** The columns a security listing shows: not the wide ones (index entry, metadata, file list, relations, pipeline). */
export const SECURITY_LIST_COLUMNS = ['id', 'name', 'version', 'arch', 'distribution', 'status', 'cve_status', 'findings', 'sla_deadline', 'reasons', 'created_at', 'updated_at'] as const;
export type SecurityListRow = Pick<StoredPackage, (typeof SECURITY_LIST_COLUMNS)[number]>;

/** The rows with these ids (any order), as security listings show them. */
export async function findPackagesByIds(db: Db, ids: readonly string[]): Promise<SecurityListRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('packages').select([...SECURITY_LIST_COLUMNS]).where('id', 'in', [...ids]).execute();
}

// ---- vulnerabilities across packages ----

export interface VulnerabilityFilter {
  severity?: Severity;
  distribution?: string;
  /** Part of a CVE id. */
  q?: string;
  kev?: boolean;
}

/** One CVE of a page: its worst severity rank and highest KEV flag, EPSS and CVSS (-1 = none). */
export interface VulnerabilitySummary {
  cve_id: string;
  rank: number;
  kev: number;
  epss: number;
  cvss: number;
}

/** One finding row of a CVE on the page, with its package. */
export interface VulnerabilityOccurrence {
  cve_id: string;
  data: string;
  name: string;
  version: string;
  arch: string;
  distribution: string;
  status: PackageStatus;
}

/**
 * A page of CVEs across packages, worst first (severity, then KEV, EPSS, CVSS, then id), the
 * finding rows of those CVEs by package name and version, and how many CVEs match.
 */
export async function findVulnerabilitiesPage(db: Db, filter: VulnerabilityFilter, page: Page): Promise<{ total: number; summaries: VulnerabilitySummary[]; occurrences: VulnerabilityOccurrence[] }> {
  let base = db.selectFrom('package_findings as f').innerJoin('packages as p', 'p.id', 'f.package_id');
  if (filter.severity) base = base.where('f.severity', '=', filter.severity);
  if (filter.distribution) base = base.where('p.distribution', '=', filter.distribution);
  // CVE ids are stored upper-case; wildcard characters in the user's text are dropped.
  if (filter.q) base = base.where('f.cve_id', 'like', `%${filter.q.toUpperCase().replace(/[%_]/g, '')}%`);
  if (filter.kev !== undefined) base = base.where('f.in_kev', '=', filter.kev ? 1 : 0);
  const total = Number((await base.select((eb) => eb.fn.count('f.cve_id').distinct().as('n')).executeTakeFirst())?.n ?? 0);
  const rows = await base
    .select((eb) => [
      'f.cve_id',
      eb.fn.max('f.severity_rank').as('rank'),
      sql<number>`coalesce(max(f.in_kev), -1)`.as('kev'),
      sql<number>`coalesce(max(f.epss), -1)`.as('epss'),
      sql<number>`coalesce(max(f.cvss_score), -1)`.as('cvss'),
    ])
    .groupBy('f.cve_id')
    .orderBy('rank', 'desc')
    .orderBy('kev', 'desc')
    .orderBy('epss', 'desc')
    .orderBy('cvss', 'desc')
    .orderBy('f.cve_id')
    .limit(page.perPage)
    .offset((page.page - 1) * page.perPage)
    .execute();
  const summaries = rows.map((r) => ({ cve_id: r.cve_id, rank: Number(r.rank), kev: Number(r.kev), epss: Number(r.epss), cvss: Number(r.cvss) }));
  const ids = summaries.map((r) => r.cve_id);
  const occurrences = ids.length === 0 ? [] : await base.select(['f.cve_id', 'f.data', 'p.name', 'p.version', 'p.arch', 'p.distribution', 'p.status']).where('f.cve_id', 'in', ids).orderBy('p.name').orderBy('p.version').execute();
  return { total, summaries, occurrences };
}

// ---- posture ----

export async function countPackagesByStatus(db: Db): Promise<Array<{ status: PackageStatus; n: number }>> {
  const rows = await db.selectFrom('packages').select(['status', (eb) => eb.fn.countAll().as('n')]).groupBy('status').execute();
  return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
}

/** Finding rows and distinct CVEs per severity. */
export async function countFindingsBySeverity(db: Db): Promise<Array<{ severity: Severity; findings: number; cves: number }>> {
  const rows = await db.selectFrom('package_findings').select(['severity', (eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.count('cve_id').distinct().as('cves')]).groupBy('severity').execute();
  return rows.map((r) => ({ severity: r.severity, findings: Number(r.n), cves: Number(r.cves) }));
}

/** Packages with findings, per severity rank of their worst finding. */
export async function countPackagesByWorstRank(db: Db): Promise<Array<{ rank: number; n: number }>> {
  const rows = await db
    .selectFrom((eb) => eb.selectFrom('package_findings').select(['package_id', (e) => e.fn.max('severity_rank').as('rank')]).groupBy('package_id').as('w'))
    .select(['w.rank', (eb) => eb.fn.countAll().as('n')])
    .groupBy('w.rank')
    .execute();
  return rows.map((r) => ({ rank: Number(r.rank), n: Number(r.n) }));
}

/** Finding rows of CVEs in the KEV catalogue, and how many packages they concern. */
export async function countKevFindings(db: Db): Promise<{ findings: number; packages: number }> {
  const row = await db.selectFrom('package_findings').select([(eb) => eb.fn.countAll().as('n'), (eb) => eb.fn.count('package_id').distinct().as('packages')]).where('in_kev', '=', 1).executeTakeFirst();
  return { findings: Number(row?.n ?? 0), packages: Number(row?.packages ?? 0) };
}

/** The SLA deadline of every row in one of `statuses`. */
export async function findDeadlinesInStatuses(db: Db, statuses: readonly PackageStatus[]): Promise<Array<string | null>> {
  return (await db.selectFrom('packages').select(['sla_deadline']).where('status', 'in', [...statuses]).execute()).map((r) => r.sla_deadline);
}

// ---- packages with findings ----

export interface SecurityPackageFilter {
  status?: PackageStatus;
  severity?: Severity;
  distribution?: string;
  /** Part of a package name. */
  q?: string;
}

/**
 * A page of packages, worst finding first, then by name, version and distribution, and how many
 * match. With a severity: packages with a finding of that severity. Without a severity or a
 * status: packages with any finding or in one of `heldStatuses`.
 */
export async function findSecurityPackagesPage(
  db: Db,
  filter: SecurityPackageFilter,
  heldStatuses: readonly PackageStatus[],
  page: Page,
): Promise<{ total: number; rows: StoredPackage[] }> {
  let q = db.selectFrom('packages as p');
  if (filter.status) q = q.where('p.status', '=', filter.status);
  if (filter.distribution) q = q.where('p.distribution', '=', filter.distribution);
  // Wildcard characters in the user's text are dropped.
  if (filter.q) q = q.where('p.name', 'like', `%${filter.q.replace(/[%_]/g, '')}%`);
  if (filter.severity) {
    const severity = filter.severity;
    q = q.where(({ exists, selectFrom }) => exists(selectFrom('package_findings as f').select('f.package_id').whereRef('f.package_id', '=', 'p.id').where('f.severity', '=', severity)));
  } else if (!filter.status) {
    q = q.where(({ or, exists, selectFrom, eb }) => or([exists(selectFrom('package_findings as f').select('f.package_id').whereRef('f.package_id', '=', 'p.id')), eb('p.status', 'in', [...heldStatuses])]));
  }
  const total = Number((await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n ?? 0);
  const rows = await q
    .selectAll('p')
    .select((eb) => eb.fn.coalesce(eb.selectFrom('package_findings as w').select((e) => e.fn.max('w.severity_rank').as('r')).whereRef('w.package_id', '=', 'p.id'), eb.val(-1)).as('worst_rank'))
    .orderBy('worst_rank', 'desc')
    .orderBy('p.name')
    .orderBy('p.version')
    .orderBy('p.distribution')
    .limit(page.perPage)
    .offset((page.page - 1) * page.perPage)
    .execute();
  return { total, rows };
}

/** The dashboard's aggregates over packages, findings and the audit index. */
import { sql, type Expression, type ExpressionBuilder, type Selectable, type SqlBool } from 'kysely';
import { HISTORY_ACTIONS, HISTORY_SERIES, HISTORY_SERIES_NAMES, type AuditMatch, type HistorySeries } from '../../domain/dashboard.js';
import type { PackageStatus } from '../../domain/distributions.js';
import type { Severity } from '../../domain/security/types.js';
import { addDays } from '../../domain/utc-days.js';
import type { Db } from './index.js';
import type { AuditIndexTable, Database } from './schema.js';

/** An audit index entry as the dashboard lists it (without the source IP and chain hash). */
export type RecentAuditRow = Omit<Selectable<AuditIndexTable>, 'ip' | 'hash'>;

const DAY_OF = sql<string>`substr(timestamp, 1, 10)`;

function matches(eb: ExpressionBuilder<Database, 'audit_index'>, m: AuditMatch): Expression<SqlBool> {
  const parts: Array<Expression<SqlBool>> = [eb('action', 'in', [...m.actions])];
  if (m.result) parts.push(eb('result', '=', m.result));
  if (m.detailLike) parts.push(eb.or(m.detailLike.map((p) => eb('detail', 'like', p))));
  return eb.and(parts);
}

export async function countPackagesByDistributionAndStatus(db: Db): Promise<Array<{ distribution: string; status: PackageStatus; n: number }>> {
  return db
    .selectFrom('packages')
    .select(['distribution', 'status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['distribution', 'status'])
    .execute();
}

/** Per format: package rows, distinct stored files and their bytes (a file promoted to several distributions counts once). */
export async function sumStorageByFormat(db: Db): Promise<Array<{ format: string; packages: number; files: number; bytes: number | null }>> {
  return db
    .selectFrom((eb) => eb
      .selectFrom('packages')
      .select(['format', 'sha256', (s) => s.fn.countAll<number>().as('n'), (s) => s.fn.max('size').as('size')])
      .groupBy(['format', 'sha256'])
      .as('f'))
    .select(['f.format', (eb) => eb.fn.sum<number>('f.n').as('packages'), (eb) => eb.fn.countAll<number>().as('files'), (eb) => eb.fn.sum<number>('f.size').as('bytes')])
    .groupBy('f.format')
    .execute();
}

/** The lowest sequence number in the audit index; null when it is empty. Retention deleting entries moves it. */
export async function lowestAuditSeq(db: Db): Promise<number | null> {
  const anchor = await db.selectFrom('audit_index').select((eb) => eb.fn.min('seq').as('seq')).executeTakeFirst();
  return anchor?.seq === null || anchor?.seq === undefined ? null : Number(anchor.seq);
}

/**
 * Each history series' entries per UTC day from `from` through `to`, in one aggregate over the
 * index range of the actions any series reads; days without an entry are absent.
 */
export async function countHistoryByDay(db: Db, from: string, to: string): Promise<Array<{ day: string } & Record<HistorySeries, number>>> {
  const rows = await db
    .selectFrom('audit_index')
    .select((eb) => [
      DAY_OF.as('day'),
      ...HISTORY_SERIES_NAMES.map((name) =>
        eb.fn.sum<number>(eb.case().when(eb.or(HISTORY_SERIES[name].map((m: AuditMatch) => matches(eb, m)))).then(eb.lit(1)).else(eb.lit(0)).end()).as(name)),
    ])
    .where('action', 'in', HISTORY_ACTIONS)
    .where('timestamp', '>=', from)
    .where('timestamp', '<', addDays(to, 1))
    .groupBy(DAY_OF)
    .execute();
  return rows.map((r) => {
    const sums = Object.fromEntries(HISTORY_SERIES_NAMES.map((name) => [name, Number((r as Record<string, unknown>)[name] ?? 0)])) as Record<HistorySeries, number>;
    return { day: r.day, ...sums };
  });
}

/** Packages per status, among these statuses (statuses without a package are absent). */
export async function countPackagesInStatuses(db: Db, statuses: readonly PackageStatus[]): Promise<Array<{ status: PackageStatus; n: number }>> {
  return db
    .selectFrom('packages')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', 'in', [...statuses])
    .groupBy('status')
    .execute();
}

export async function countFindingsBySeverity(db: Db): Promise<Array<{ severity: Severity; n: number }>> {
  return db
    .selectFrom('package_findings')
    .select(['severity', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('severity')
    .execute();
}

/** The newest `limit` audit index entries, newest first. */
export async function findRecentAuditEntries(db: Db, limit: number): Promise<RecentAuditRow[]> {
  return db
    .selectFrom('audit_index')
    .select(['seq', 'timestamp', 'action', 'username', 'result', 'package', 'version', 'detail'])
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
}

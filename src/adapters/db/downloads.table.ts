/**
 * Download statistics: per-day counts, per-day-and-distribution sums, per-window totals and the
 * day each window was last moved to, plus how far each reverse-proxy log file has been read.
 * Batched writes stay under both dialects' bound-parameter limits.
 */
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, DbDialect } from './index.js';
import type {
  AccessLogFilesTable, DownloadCountsTable, DownloadDaysTable, DownloadTokenCountsTable, DownloadTokenDaysTable, DownloadTokenTotalsTable, DownloadTotalsTable,
  PackagesTable,
} from './schema.js';

export type DownloadCountRow = Selectable<DownloadCountsTable>;
export type DownloadDayRow = Selectable<DownloadDaysTable>;
export type DownloadTotalRow = Selectable<DownloadTotalsTable>;
export type DownloadTokenDayRow = Selectable<DownloadTokenDaysTable>;
export type DownloadTokenCountRow = Selectable<DownloadTokenCountsTable>;
export type DownloadTokenTotalRow = Selectable<DownloadTokenTotalsTable>;
/** The package fields a pool file's downloads are credited by. */
export type PoolFileOwnerRow = Pick<Selectable<PackagesTable>, 'pool_path' | 'distribution' | 'status' | 'name' | 'version' | 'arch'>;
export type AccessLogFileInsert = Insertable<AccessLogFilesTable>;
export type AccessLogFileUpdate = Updateable<AccessLogFilesTable>;

const BATCH = 500;
const chunks = <T>(items: readonly T[], size = BATCH): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

/** The day each window was last moved to, by window length. */
export async function findDownloadRollups(db: Db): Promise<Array<{ days: number; day: string }>> {
  return db.selectFrom('download_rollups').select(['days', 'day']).execute();
}

/**
 * Same, locking the rows on PostgreSQL until the transaction `db` ends: every writer of the
 * totals takes this lock first, so none sees a window half moved (SQLite runs one transaction at a time).
 */
export async function lockDownloadRollups(db: Db, dialect: DbDialect): Promise<Map<number, string>> {
  let q = db.selectFrom('download_rollups').select(['days', 'day']).orderBy('days');
  if (dialect === 'postgres') q = q.forUpdate();
  return new Map((await q.execute()).map((r) => [Number(r.days), r.day]));
}

export async function setDownloadRollupDay(db: Db, days: number, day: string): Promise<void> {
  await db.updateTable('download_rollups').set({ day }).where('days', '=', days).execute();
}

/** Replaces a window's totals with the sums of download_counts over the days `from` to `through`. */
export async function rebuildDownloadTotals(db: Db, days: number, from: string, through: string): Promise<void> {
  await db.deleteFrom('download_totals').where('days', '=', days).execute();
  await db
    .insertInto('download_totals')
    .columns(['days', 'distribution', 'name', 'version', 'arch', 'downloads'])
    .expression((eb) => eb
      .selectFrom('download_counts')
      .select((s) => [s.lit(days).as('days'), 'distribution', 'name', 'version', 'arch', s.fn.sum<number>('downloads').as('downloads')])
      .where('day', '>=', from)
      .where('day', '<=', through)
      .groupBy(['distribution', 'name', 'version', 'arch']))
    .execute();
}

/**
 * Adds to a window's totals the counts of the days after `entering.after` up to `entering.through`
 * and subtracts those of the days `leaving.from` to `leaving.through`, in one statement; packages
 * left with nothing are dropped.
 */
export async function shiftDownloadTotals(
  db: Db,
  days: number,
  entering: { after: string; through: string },
  leaving: { from: string; through: string },
): Promise<void> {
  await db
    .insertInto('download_totals')
    .columns(['days', 'distribution', 'name', 'version', 'arch', 'downloads'])
    .expression((eb) => eb
      .selectFrom('download_counts')
      .select((s) => [
        s.lit(days).as('days'), 'distribution', 'name', 'version', 'arch',
        s.fn.sum<number>(s.case().when('day', '>', entering.after).then(s.ref('downloads')).else(s.neg(s.ref('downloads'))).end()).as('downloads'),
      ])
      .where((w) => w.or([
        w.and([w('day', '>', entering.after), w('day', '<=', entering.through)]),
        w.and([w('day', '>=', leaving.from), w('day', '<=', leaving.through)]),
      ]))
      .groupBy(['distribution', 'name', 'version', 'arch']))
    .onConflict((oc) => oc.columns(['days', 'distribution', 'name', 'version', 'arch']).doUpdateSet((eb) => ({
      downloads: eb('download_totals.downloads', '+', eb.ref('excluded.downloads')),
    })))
    .execute();
  await db.deleteFrom('download_totals').where('days', '=', days).where('downloads', '<=', 0).execute();
}

/** Every package row stored at one of these pool paths. */
export async function findPoolFileOwners(db: Db, paths: readonly string[]): Promise<PoolFileOwnerRow[]> {
  const rows: PoolFileOwnerRow[] = [];
  for (const batch of chunks(paths)) {
    rows.push(...(await db.selectFrom('packages').select(['pool_path', 'distribution', 'status', 'name', 'version', 'arch']).where('pool_path', 'in', batch).execute()));
  }
  return rows;
}

/** The tables of download counters: a key, and `downloads` added to on every flush. */
type CounterTable = 'download_counts' | 'download_days' | 'download_totals' | 'download_token_days' | 'download_token_counts' | 'download_token_totals';

/**
 * Adds each row's downloads to the row of `table` with the same `key` (inserted when there is
 * none), in batches. The one upsert every counter table shares; the exported functions above it
 * type each table's rows and key.
 */
async function addToCounters<R extends { downloads: number }>(db: Db, table: CounterTable, key: ReadonlyArray<keyof R & string>, rows: readonly R[]): Promise<void> {
  // Kysely types a table name only when it is a literal; every counter table has this shape.
  const counters = table as 'download_days';
  for (const batch of chunks(rows)) {
    await db
      .insertInto(counters)
      .values(batch as unknown as DownloadDayRow[])
      .onConflict((oc) => oc.columns(key as unknown as Array<keyof DownloadDayRow>).doUpdateSet((eb) => ({
        downloads: eb(`${counters}.downloads`, '+', eb.ref('excluded.downloads')),
      })))
      .execute();
  }
}

/** Adds these downloads to the per-day, per-package counts. */
export async function addDownloadCounts(db: Db, rows: readonly DownloadCountRow[]): Promise<void> {
  await addToCounters(db, 'download_counts', ['day', 'distribution', 'name', 'version', 'arch'], rows);
}

/** Adds these sums (one per day and distribution) to the per-day sums. */
export async function addDownloadDays(db: Db, rows: readonly DownloadDayRow[]): Promise<void> {
  await addToCounters(db, 'download_days', ['day', 'distribution'], rows);
}

/** Adds these sums (one per window and package) to the window totals. */
export async function addDownloadTotals(db: Db, rows: readonly DownloadTotalRow[]): Promise<void> {
  await addToCounters(db, 'download_totals', ['days', 'distribution', 'name', 'version', 'arch'], rows);
}

/** Downloads of each day from `from` to `to` that had any (days without a row are absent). */
export async function sumDownloadsByDay(db: Db, from: string, to: string): Promise<Array<{ day: string; downloads: number }>> {
  return db
    .selectFrom('download_days')
    .select(['day', (eb) => eb.fn.sum<number>('downloads').as('downloads')])
    .where('day', '>=', from)
    .where('day', '<=', to)
    .groupBy('day')
    .execute();
}

/** Downloads per distribution over the days `from` to `to`, most downloaded first. */
export async function sumDownloadsByDistribution(db: Db, from: string, to: string): Promise<Array<{ distribution: string; downloads: number }>> {
  return db
    .selectFrom('download_days')
    .select(['distribution', (eb) => eb.fn.sum<number>('downloads').as('downloads')])
    .where('day', '>=', from)
    .where('day', '<=', to)
    .groupBy('distribution')
    .orderBy('downloads', 'desc')
    .orderBy('distribution')
    .execute();
}

/** The window's `limit` most downloaded packages (ties in a stable order). */
export async function findTopDownloads(db: Db, days: number, limit: number): Promise<Array<Omit<DownloadTotalRow, 'days'>>> {
  return db
    .selectFrom('download_totals')
    .select(['name', 'version', 'distribution', 'arch', 'downloads'])
    .where('days', '=', days)
    .where('downloads', '>', 0)
    .orderBy('downloads', 'desc')
    .orderBy('name')
    .orderBy('version')
    .orderBy('distribution')
    .orderBy('arch')
    .limit(limit)
    .execute();
}

/** How many packages the window has downloads of. */
export async function countDownloadedPackages(db: Db, days: number): Promise<number> {
  const row = await db
    .selectFrom('download_totals')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('days', '=', days)
    .where('downloads', '>', 0)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Adds downloads made with tokens to the per-day, per-token, per-distribution sums. */
export async function addDownloadTokenDays(db: Db, rows: readonly DownloadTokenDayRow[]): Promise<void> {
  await addToCounters(db, 'download_token_days', ['day', 'token_id', 'distribution'], rows);
}

/** Adds downloads made with tokens to the per-day, per-token, per-package counts. */
export async function addDownloadTokenCounts(db: Db, rows: readonly DownloadTokenCountRow[]): Promise<void> {
  await addToCounters(db, 'download_token_counts', ['token_id', 'day', 'distribution', 'name', 'version', 'arch'], rows);
}

/** Adds these sums (one per window and token) to the per-token window totals. */
export async function addDownloadTokenTotals(db: Db, rows: readonly DownloadTokenTotalRow[]): Promise<void> {
  await addToCounters(db, 'download_token_totals', ['days', 'token_id'], rows);
}

/** Replaces a window's per-token totals with the sums of download_token_days over the days `from` to `through`. */
export async function rebuildDownloadTokenTotals(db: Db, days: number, from: string, through: string): Promise<void> {
  await db.deleteFrom('download_token_totals').where('days', '=', days).execute();
  await db
    .insertInto('download_token_totals')
    .columns(['days', 'token_id', 'username', 'downloads'])
    .expression((eb) => eb
      .selectFrom('download_token_days')
      .select((s) => [s.lit(days).as('days'), 'token_id', s.fn.max('username').as('username'), s.fn.sum<number>('downloads').as('downloads')])
      .where('day', '>=', from)
      .where('day', '<=', through)
      .groupBy('token_id'))
    .execute();
}

/** As shiftDownloadTotals, for the per-token totals. */
export async function shiftDownloadTokenTotals(
  db: Db,
  days: number,
  entering: { after: string; through: string },
  leaving: { from: string; through: string },
): Promise<void> {
  await db
    .insertInto('download_token_totals')
    .columns(['days', 'token_id', 'username', 'downloads'])
    .expression((eb) => eb
      .selectFrom('download_token_days')
      .select((s) => [
        s.lit(days).as('days'), 'token_id', s.fn.max('username').as('username'),
        s.fn.sum<number>(s.case().when('day', '>', entering.after).then(s.ref('downloads')).else(s.neg(s.ref('downloads'))).end()).as('downloads'),
      ])
      .where((w) => w.or([
        w.and([w('day', '>', entering.after), w('day', '<=', entering.through)]),
        w.and([w('day', '>=', leaving.from), w('day', '<=', leaving.through)]),
      ]))
      .groupBy('token_id'))
    .onConflict((oc) => oc.columns(['days', 'token_id']).doUpdateSet((eb) => ({
      downloads: eb('download_token_totals.downloads', '+', eb.ref('excluded.downloads')),
    })))
    .execute();
  await db.deleteFrom('download_token_totals').where('days', '=', days).where('downloads', '<=', 0).execute();
}

/**
 * The window's `limit` tokens with the most downloads, most first: every token's, or only those of
 * `tokenIds` (an empty list: none). An index read of the kept per-window totals.
 */
export async function findTopTokens(
  db: Db, days: number, tokenIds: readonly string[] | null, limit: number,
): Promise<Array<{ token_id: string; username: string; downloads: number }>> {
  if (tokenIds !== null && tokenIds.length === 0) return [];
  let q = db
    .selectFrom('download_token_totals')
    .select(['token_id', 'username', 'downloads'])
    .where('days', '=', days)
    .where('downloads', '>', 0)
    .orderBy('downloads', 'desc')
    .orderBy('token_id')
    .limit(limit);
  if (tokenIds !== null) q = q.where('token_id', 'in', tokenIds);
  return q.execute();
}

/** Whether any download was ever counted for this token. */
export async function hasTokenDownloads(db: Db, tokenId: string): Promise<boolean> {
  return (await db.selectFrom('download_token_days').select('token_id').where('token_id', '=', tokenId).limit(1).executeTakeFirst()) !== undefined;
}

/** One token's downloads per day (days without any are absent) and per distribution, from `from` to `to`. */
export async function sumTokenDownloads(db: Db, tokenId: string, from: string, to: string) {
  const rows = await db
    .selectFrom('download_token_days')
    .select(['day', 'distribution', 'username', 'downloads'])
    .where('token_id', '=', tokenId)
    .where('day', '>=', from)
    .where('day', '<=', to)
    .execute();
  return rows.map((r) => ({ ...r, downloads: Number(r.downloads) }));
}

/** One token's `limit` most downloaded packages from `from` to `to`, and how many it downloaded. */
export async function findTopTokenDownloads(db: Db, tokenId: string, from: string, to: string, limit: number) {
  const perPackage = db
    .selectFrom('download_token_counts')
    .select(['name', 'version', 'distribution', 'arch', (eb) => eb.fn.sum<number>('downloads').as('downloads')])
    .where('token_id', '=', tokenId)
    .where('day', '>=', from)
    .where('day', '<=', to)
    .groupBy(['distribution', 'name', 'version', 'arch']);
  const top = await perPackage.orderBy('downloads', 'desc').orderBy('name').orderBy('version').orderBy('distribution').orderBy('arch').limit(limit).execute();
  const count = await db.selectFrom(perPackage.as('p')).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  return { top: top.map((r) => ({ ...r, downloads: Number(r.downloads) })), distinct: Number(count?.n ?? 0) };
}

/** How far the log file with this identity has been read, if it has been met. */
export async function findAccessLogFile(db: Db, identity: string): Promise<Pick<Selectable<AccessLogFilesTable>, 'position' | 'complete'> | undefined> {
  return db.selectFrom('access_log_files').select(['position', 'complete']).where('identity', '=', identity).executeTakeFirst();
}

/** Same with its running totals, the row locked on PostgreSQL until the transaction `db` ends. */
export async function lockAccessLogFile(db: Db, dialect: DbDialect, identity: string): Promise<Pick<Selectable<AccessLogFilesTable>, 'position' | 'lines' | 'counted'> | undefined> {
  let q = db.selectFrom('access_log_files').select(['position', 'lines', 'counted']).where('identity', '=', identity);
  if (dialect === 'postgres') q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function updateAccessLogFile(db: Db, identity: string, values: AccessLogFileUpdate): Promise<void> {
  await db.updateTable('access_log_files').set(values).where('identity', '=', identity).execute();
}

/** Records a log file met for the first time; false when another process recorded it first. */
export async function insertAccessLogFile(db: Db, row: AccessLogFileInsert): Promise<boolean> {
  const inserted = await db.insertInto('access_log_files').values(row).onConflict((oc) => oc.column('identity').doNothing()).executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0;
}

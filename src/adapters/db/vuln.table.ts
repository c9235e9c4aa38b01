/**
 * The built-in vulnerability database: OSV advisories (one row per record and affected package,
 * `data` = the AdvisoryRow JSON), EPSS scores, the KEV catalogue, and what each configured feed
 * last fetched and loaded.
 */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { AdvisoryRow } from '../../domain/security/index.js';
import type { Db } from './index.js';
import type { VulnEpssTable, VulnFeedStateTable, VulnKevTable } from './schema.js';

export type FeedStateRow = Selectable<VulnFeedStateTable>;
export type NewFeedState = Insertable<VulnFeedStateTable>;
export type EpssScoreRow = Selectable<VulnEpssTable>;
export type NewEpssRow = Insertable<VulnEpssTable>;
export type NewKevRow = Insertable<VulnKevTable>;

/** SQL parameter lists are bounded: larger CVE sets are queried, and rows inserted, in chunks. */
const IN_CHUNK = 500;
const PLAIN_BATCH = 500;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

// ---- advisories ----

/** Whether any advisory of these ecosystems is loaded. */
export async function hasAdvisoryIn(db: Db, ecosystems: readonly string[]): Promise<boolean> {
  const row = await db.selectFrom('vuln_advisories').select('advisory_id').where('ecosystem', 'in', [...ecosystems]).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * The advisory JSON of `ecosystem` naming any of `names`; `normalised`: the names are PEP 503
 * normalised and compared with the stored names normalised the same way (runs of separators aside).
 */
export async function findAdvisoryData(db: Db, ecosystem: string, names: readonly string[], normalised: boolean): Promise<string[]> {
  const column = normalised ? sql<string>`lower(replace(replace(package_name, '_', '-'), '.', '-'))` : sql<string>`package_name`;
  const rows = await db.selectFrom('vuln_advisories').select('data').where('ecosystem', '=', ecosystem).where(column, 'in', [...names]).execute();
  return rows.map((r) => r.data);
}

/** Every advisory of an ecosystem: its package name and JSON. */
export async function advisoryDataOfEcosystem(db: Db, ecosystem: string): Promise<Array<{ package_name: string; data: string }>> {
  return db.selectFrom('vuln_advisories').select(['package_name', 'data']).where('ecosystem', '=', ecosystem).execute();
}

/** Add advisories under `feed` (a staging name while a feed loads). */
export async function insertAdvisories(db: Db, feed: string, rows: readonly AdvisoryRow[]): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((row) => ({ feed, advisory_id: row.id, ecosystem: row.ecosystem, package_name: row.package_name, data: JSON.stringify(row) }));
  await db.insertInto('vuln_advisories').values(values).execute();
}

export async function deleteFeedAdvisories(db: Db, feed: string): Promise<void> {
  await db.deleteFrom('vuln_advisories').where('feed', '=', feed).execute();
}

/** The staged rows become the feed's rows, replacing the previous ones (give it a transaction). */
export async function swapInStagedAdvisories(db: Db, feed: string, staging: string): Promise<void> {
  await db.deleteFrom('vuln_advisories').where('feed', '=', feed).execute();
  await db.updateTable('vuln_advisories').set({ feed }).where('feed', '=', staging).execute();
}

// ---- EPSS and KEV ----

/** The EPSS scores of these CVEs, converted to numbers whatever the driver answers. */
export async function findEpssScores(db: Db, cveIds: readonly string[]): Promise<EpssScoreRow[]> {
  const out: EpssScoreRow[] = [];
  for (const part of chunks([...new Set(cveIds)], IN_CHUNK)) {
    const rows = await db.selectFrom('vuln_epss').selectAll().where('cve_id', 'in', part).execute();
    for (const row of rows) out.push({ cve_id: row.cve_id, epss: Number(row.epss), percentile: Number(row.percentile) });
  }
  return out;
}

/** Which of these CVEs are in the KEV catalogue. */
export async function findKevCves(db: Db, cveIds: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const part of chunks([...new Set(cveIds)], IN_CHUNK)) {
    const rows = await db.selectFrom('vuln_kev').select('cve_id').where('cve_id', 'in', part).execute();
    for (const row of rows) out.push(row.cve_id);
  }
  return out;
}

/** Replace every EPSS score (give it a transaction: readers never see a half-loaded table). */
export async function replaceEpssScores(db: Db, rows: readonly NewEpssRow[]): Promise<void> {
  await db.deleteFrom('vuln_epss').execute();
  for (const part of chunks(rows, PLAIN_BATCH)) await db.insertInto('vuln_epss').values(part).execute();
}

/** Replace the KEV catalogue (give it a transaction: readers never see a half-loaded table). */
export async function replaceKevCatalogue(db: Db, rows: readonly NewKevRow[]): Promise<void> {
  await db.deleteFrom('vuln_kev').execute();
  for (const part of chunks(rows, PLAIN_BATCH)) await db.insertInto('vuln_kev').values(part).execute();
}

// ---- sizes and feed state ----

export async function countAdvisories(db: Db): Promise<number> {
  return countRows(db, 'vuln_advisories');
}

/** Row counts of the three data tables. */
export async function vulnTableSizes(db: Db): Promise<{ advisories: number; epss: number; kev: number }> {
  return { advisories: await countRows(db, 'vuln_advisories'), epss: await countRows(db, 'vuln_epss'), kev: await countRows(db, 'vuln_kev') };
}

async function countRows(db: Db, table: 'vuln_advisories' | 'vuln_epss' | 'vuln_kev'): Promise<number> {
  return Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n ?? 0);
}

/** When each feed was last fetched and loaded. */
export async function feedLoadTimes(db: Db): Promise<Array<Pick<FeedStateRow, 'kind' | 'fetched_at' | 'loaded_at'>>> {
  return db.selectFrom('vuln_feed_state').select(['kind', 'fetched_at', 'loaded_at']).execute();
}

export async function listFeeds(db: Db): Promise<Array<Pick<FeedStateRow, 'name' | 'kind'>>> {
  return db.selectFrom('vuln_feed_state').select(['name', 'kind']).execute();
}

export async function findFeedState(db: Db, name: string): Promise<FeedStateRow | undefined> {
  return db.selectFrom('vuln_feed_state').selectAll().where('name', '=', name).executeTakeFirst();
}

/** A feed and the data it loaded (give it a transaction). EPSS and KEV are one feed each. */
export async function deleteFeed(db: Db, feed: Pick<FeedStateRow, 'name' | 'kind'>): Promise<void> {
  if (feed.kind === 'osv') await db.deleteFrom('vuln_advisories').where('feed', '=', feed.name).execute();
  if (feed.kind === 'epss') await db.deleteFrom('vuln_epss').execute();
  if (feed.kind === 'kev') await db.deleteFrom('vuln_kev').execute();
  await db.deleteFrom('vuln_feed_state').where('name', '=', feed.name).execute();
}

/** The source answered "not modified": its content is confirmed current as of `at`. */
export async function confirmFeedCurrent(db: Db, name: string, at: string): Promise<void> {
  await db.updateTable('vuln_feed_state').set({ fetched_at: at, last_attempt_at: at, last_error: null }).where('name', '=', name).execute();
}

/** Record a feed's state after a load. */
export async function saveFeedState(db: Db, name: string, values: Omit<NewFeedState, 'name'>): Promise<void> {
  await db
    .insertInto('vuln_feed_state')
    .values({ ...values, name })
    .onConflict((oc) => oc.column('name').doUpdateSet(values))
    .execute();
}

/** Record a failed attempt; a feed seen for the first time gets an empty state. */
export async function recordFeedFailure(db: Db, feed: { name: string; kind: string; url: string }, message: string, at: string): Promise<void> {
  await db
    .insertInto('vuln_feed_state')
    .values({ name: feed.name, kind: feed.kind, url: feed.url, etag: null, last_modified: null, sha256: null, fetched_at: null, loaded_at: null, records: 0, rows: 0, skipped: 0, last_error: message, last_attempt_at: at })
    .onConflict((oc) => oc.column('name').doUpdateSet({ last_error: message, last_attempt_at: at }))
    .execute();
}

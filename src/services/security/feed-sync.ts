/**
 * `POST /import/sync-security` and the daily job: download every configured feed (settings
 * `vuln_feeds`, `epss_url`, `kev_url`) with conditional requests and size caps, and load what
 * changed into the database, one feed at a time, each replacing its previous content atomically.
 * A feed that fails keeps its previous content; the others still load.
 *
 * OSV feeds are streamed into staging rows (feed = `~staging:<name>`) in small transactions and
 * swapped in with one short transaction, so a long parse never holds the database (SQLite has
 * one writer and one connection) and readers never see a half-loaded feed. EPSS and KEV are small
 * enough to be replaced inside one transaction.
 */
import type { Logger } from 'pino';
import type { Db } from '../../adapters/db/index.js';
import {
  confirmFeedCurrent,
  deleteFeed,
  deleteFeedAdvisories,
  findFeedState,
  insertAdvisories,
  listFeeds,
  recordFeedFailure,
  replaceEpssScores,
  replaceKevCatalogue,
  saveFeedState,
  swapInStagedAdvisories,
  vulnTableSizes,
  type NewEpssRow,
} from '../../adapters/db/vuln.table.js';
import { fetchFeed, type FetchFeedResult } from '../../adapters/feeds/fetch.js';
import type { FeedFolder } from '../../adapters/feeds/folder.js';
import { DomainError } from '../../domain/errors.js';
import { readEpssCsv, newEpssStats } from '../../domain/security/feeds/epss.js';
import { readKevCatalog } from '../../domain/security/feeds/kev.js';
import { newOsvFeedStats, readOsvFeed } from '../../domain/security/feeds/osv-feed.js';
import type { AdvisoryRow } from '../../domain/security/index.js';
import { isoUtc } from '../../domain/time.js';
import type { FeedKind, VulnDatabase } from './vuln-db.js';

/** One feed to synchronise. */
export interface FeedSource {
  name: string;
  kind: FeedKind;
  url: string;
}

/** What happened to one feed. */
export interface FeedReport {
  name: string;
  kind: FeedKind;
  url: string;
  status: 'updated' | 'not_modified' | 'failed';
  bytes: number | null;
  records: number;
  rows: number;
  skipped: number;
  error: string | null;
  error_code: string | null;
}

/** Answer of a sync: table sizes after it, and each feed's report. */
export interface SyncReport {
  advisories: number;
  epss: number;
  kev: number;
  feeds: FeedReport[];
  started_at: string;
  finished_at: string;
}

/** Size caps of downloads (bytes). */
export interface FeedSizeLimits {
  osv: number;
  epss: number;
  kev: number;
}

export const DEFAULT_FEED_LIMITS: FeedSizeLimits = { osv: 2 * 1024 ** 3, epss: 256 * 1024 ** 2, kev: 64 * 1024 ** 2 };

const STAGING_PREFIX = '~staging:';
const ADVISORY_BATCH = 400;

/** The feeds the settings name, OSV first. */
export function configuredFeeds(settings: { vuln_feeds: Array<{ name: string; url: string }>; epss_url: string | null; kev_url: string | null }): FeedSource[] {
  const feeds: FeedSource[] = settings.vuln_feeds.map((f) => ({ name: f.name, kind: 'osv', url: f.url }));
  if (settings.epss_url) feeds.push({ name: 'epss', kind: 'epss', url: settings.epss_url });
  if (settings.kev_url) feeds.push({ name: 'kev', kind: 'kev', url: settings.kev_url });
  return feeds;
}

function errorParts(error: unknown): { message: string; code: string } {
  if (error instanceof DomainError) return { message: error.message, code: error.code };
  return { message: error instanceof Error ? error.message : String(error), code: 'feed_sync_failed' };
}

export class FeedSync {
  private running: Promise<SyncReport> | null = null;

  private readonly limits: FeedSizeLimits;
  /** FEEDS_DIR: the only folder file:// feeds are read from (null refuses them). */
  private readonly fileRoot: string | null;

  constructor(
    private readonly db: Db,
    private readonly vulnDb: VulnDatabase,
    private readonly folder: FeedFolder,
    private readonly log: Logger,
    options: { limits?: FeedSizeLimits; fileRoot?: string | null } = {},
  ) {
    this.limits = options.limits ?? DEFAULT_FEED_LIMITS;
    this.fileRoot = options.fileRoot ?? null;
  }

  /** Synchronise `feeds`; a call made while a sync runs joins it. */
  sync(feeds: FeedSource[]): Promise<SyncReport> {
    if (!this.running) {
      this.running = this.run(feeds).finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  private async run(feeds: FeedSource[]): Promise<SyncReport> {
    const started = isoUtc();
    await this.folder.ensure();
    await this.forgetRemoved(feeds);
    const reports: FeedReport[] = [];
    for (const feed of feeds) reports.push(await this.syncOne(feed));
    this.vulnDb.invalidate();
    return { ...(await vulnTableSizes(this.db)), feeds: reports, started_at: started, finished_at: isoUtc() };
  }

  /** Feeds no longer configured lose their rows: stale data must not keep matching. */
  private async forgetRemoved(feeds: FeedSource[]): Promise<void> {
    const keep = new Set(feeds.map((f) => f.name));
    for (const s of await listFeeds(this.db)) {
      if (keep.has(s.name)) continue;
      await this.db.transaction().execute((trx) => deleteFeed(trx, s));
      this.log.info({ feed: s.name }, 'feed removed from settings: its data was dropped');
    }
  }

  private async syncOne(feed: FeedSource): Promise<FeedReport> {
    const report: FeedReport = { name: feed.name, kind: feed.kind, url: feed.url, status: 'failed', bytes: null, records: 0, rows: 0, skipped: 0, error: null, error_code: null };
    const state = await findFeedState(this.db, feed.name);
    const now = isoUtc();
    const path = this.folder.pathOf(feed);
    // Validators only for the same URL whose content was loaded, and whose file is still there.
    const reusable = state && state.url === feed.url && state.kind === feed.kind && state.loaded_at !== null && (await this.folder.has(path));
    try {
      const result: FetchFeedResult = await fetchFeed(feed.url, {
        destPath: path,
        maxBytes: this.limits[feed.kind],
        etag: reusable ? state.etag : null,
        lastModified: reusable ? state.last_modified : null,
        fileRoot: this.fileRoot,
      });
      if (result.status === 'not_modified') {
        await confirmFeedCurrent(this.db, feed.name, now);
        return { ...report, status: 'not_modified', records: Number(state?.records ?? 0), rows: Number(state?.rows ?? 0), skipped: Number(state?.skipped ?? 0) };
      }
      const counts = await this.load(feed, result.path);
      await saveFeedState(this.db, feed.name, {
        kind: feed.kind,
        url: feed.url,
        etag: result.etag,
        last_modified: result.last_modified,
        sha256: result.sha256,
        fetched_at: now,
        loaded_at: now,
        records: counts.records,
        rows: counts.rows,
        skipped: counts.skipped,
        last_error: null,
        last_attempt_at: now,
      });
      this.log.info({ feed: feed.name, kind: feed.kind, ...counts, bytes: result.bytes }, 'security feed loaded');
      return { ...report, status: 'updated', bytes: result.bytes, ...counts };
    } catch (error) {
      const { message, code } = errorParts(error);
      // The answer and the stored state get the generic message; the reason stays in this log.
      const reason = error instanceof Error && typeof error.cause === 'string' ? error.cause : undefined;
      this.log.warn({ feed: feed.name, code, error: message, reason }, 'security feed sync failed');
      await recordFeedFailure(this.db, feed, message, now);
      return { ...report, error: message, error_code: code };
    }
  }

  private async load(feed: FeedSource, path: string): Promise<{ records: number; rows: number; skipped: number }> {
    if (feed.kind === 'osv') return this.loadOsv(feed.name, path);
    if (feed.kind === 'epss') return this.loadEpss(path);
    return this.loadKev(path);
  }

  private async loadOsv(name: string, path: string): Promise<{ records: number; rows: number; skipped: number }> {
    const staging = `${STAGING_PREFIX}${name}`;
    await deleteFeedAdvisories(this.db, staging);
    const stats = newOsvFeedStats();
    try {
      let batch: AdvisoryRow[] = [];
      const flush = async () => {
        if (batch.length === 0) return;
        const rows = batch;
        batch = [];
        await insertAdvisories(this.db, staging, rows);
      };
      for await (const row of readOsvFeed(path, {}, stats)) {
        batch.push(row);
        if (batch.length >= ADVISORY_BATCH) await flush();
      }
      await flush();
      await this.db.transaction().execute((trx) => swapInStagedAdvisories(trx, name, staging));
    } catch (error) {
      await deleteFeedAdvisories(this.db, staging);
      throw error;
    }
    if (stats.skip_samples.length > 0) this.log.info({ feed: name, samples: stats.skip_samples }, 'some OSV records were skipped');
    return { records: stats.records, rows: stats.rows, skipped: stats.skipped };
  }

  private async loadEpss(path: string): Promise<{ records: number; rows: number; skipped: number }> {
    const stats = newEpssStats();
    const rows: NewEpssRow[] = [];
    const seen = new Set<string>();
    for await (const r of readEpssCsv(path, {}, stats)) {
      if (seen.has(r.cve)) continue;
      seen.add(r.cve);
      rows.push({ cve_id: r.cve, epss: r.epss, percentile: r.percentile });
    }
    await this.db.transaction().execute((trx) => replaceEpssScores(trx, rows));
    return { records: stats.rows + stats.skipped, rows: rows.length, skipped: stats.skipped };
  }

  private async loadKev(path: string): Promise<{ records: number; rows: number; skipped: number }> {
    const catalog = await readKevCatalog(path);
    await this.db.transaction().execute((trx) => replaceKevCatalogue(trx, catalog.rows));
    return { records: catalog.rows.length + catalog.skipped, rows: catalog.rows.length, skipped: catalog.skipped };
  }
}

/**
 * The security capability, wired: vulnerability database and feed sync, the built-in CVE scanner
 * (installed as the upload pipeline's scanner), decisions, rescans, the daily jobs, the read-only
 * views and the antivirus engine actions. Also registers the `grype` health component and the
 * metric sources it owns.
 */
import { join } from 'node:path';
import { countPackagesInStatus } from '../../adapters/db/security.table.js';
import { feedFolder } from '../../adapters/feeds/folder.js';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import type { Db } from '../../adapters/db/index.js';
import type { Metrics } from '../../adapters/metrics/metrics.js';
import type { HealthService } from '../health.js';
import type { Notifier } from '../notifications.js';
import type { Repository } from '../repository.js';
import type { SettingsService } from '../settings.js';
import type { JobScheduler } from '../jobs.js';
import { packageById } from '../../adapters/db/packages.table.js';
import { AvEngine } from './avengine.js';
import { SecurityDecisions } from './decisions.js';
import { configuredFeeds, FeedSync, type SyncReport } from './feed-sync.js';
import { notifyPendingReview } from './notices.js';
import { SecurityQueries } from './queries.js';
import { SecurityRescan } from './rescan.js';
import { InventoryStore } from '../sbom/inventory.js';
import { catalogue } from '../sbom/payload.js';
import { BuiltinCveScanner, type EmbeddedComponents } from './scanner.js';
import { runExpiry, runSlaWarnings, type ScheduledDeps } from './scheduled.js';
import { PackageTransitions } from './transitions.js';
import { VulnDatabase } from './vuln-db.js';

/** Everything the security routes and jobs use. */
export interface SecurityService {
  vulnDb: VulnDatabase;
  feeds: FeedSync;
  scanner: BuiltinCveScanner;
  transitions: PackageTransitions;
  decisions: SecurityDecisions;
  rescans: SecurityRescan;
  queries: SecurityQueries;
  avengine: AvEngine;
  scheduled: ScheduledDeps;
  /** Sync every feed the settings name; null when none is configured. */
  syncFromSettings(): Promise<SyncReport | null>;
}

/** Hours with one decimal. */
const hours = (seconds: number | null) => (seconds === null ? null : Math.round(seconds / 360) / 10);

/** What the security capability is built from (parts of the application context). */
export interface SecurityWiring {
  db: Db;
  settings: SettingsService;
  metrics: Metrics;
  log: Logger;
  repo: Repository;
  audit: AuditLog;
  notifier: Notifier;
  config: Config;
  health: HealthService;
}

/** Builds the security service and plugs it into the repository, health and metrics. */
export function createSecurity(ctx: SecurityWiring): SecurityService {
  const { db, settings, metrics, log, repo, audit, notifier, config } = ctx;
  const vulnDb = new VulnDatabase(db);
  const feeds = new FeedSync(db, vulnDb, feedFolder(join(config.dataDir, 'vulndb')), log, { fileRoot: config.feedsDir });
  // Software embedded in a package (npm modules, Python distributions, jars, …) is matched too,
  // as the SBOM catalogues it: the stored file's inventory is cached by SHA-256 and shared with
  // the SBOM endpoints; an upload's file is read where it lies.
  const inventories = new InventoryStore(db, repo.files);
  const embedded: EmbeddedComponents = {
    ofUpload: async (pkg, path) => (await catalogue(path, { format: pkg.format, name: pkg.name, metadata: pkg.metadata })).components,
    ofStored: async (row) => (await inventories.forRows([row])).get(row.sha256)?.components ?? [],
  };
  const scanner = new BuiltinCveScanner(vulnDb, settings, metrics, embedded);
  const transitions = new PackageTransitions({ db, files: repo.files, publisher: repo.publisher, log });
  const decisions = new SecurityDecisions(db, settings, transitions, audit, notifier);
  // Links in notifications follow the runtime `app_url` setting, else APP_URL.
  const appUrl = async () => (await settings.get('app_url')) ?? config.appUrl;
  const rescans = new SecurityRescan({ db, scanner, vulnDb, transitions, audit, notifier, appUrl, log });
  const queries = new SecurityQueries(db, vulnDb);
  const avengine = new AvEngine(db, repo.antivirus, config.clamavUpdateCommand);
  const scheduled: ScheduledDeps = { db, settings, transitions, audit, notifier, appUrl };

  repo.cve.scanner = scanner;

  // After an upload (its findings were stored with its row): a package held for review is announced.
  // Only a held upload's row is read (again: a reviewer may have decided meanwhile); the listener
  // runs before the upload is answered, and most are published.
  repo.uploads.onStored(async ({ packageId, body }) => {
    if (body.status !== 'pending_review') return;
    const row = await packageById(db, packageId);
    if (!row) return;
    if (row.status === 'pending_review') notifyPendingReview(notifier, row, 'upload', await appUrl());
  });

  ctx.health.register('grype', async () => {
    const s = await vulnDb.status();
    if (!s.configured) return { ok: false, configured: false, db_age_hours: null, advisories: s.advisories, detail: 'vulnerability database not synchronised yet (settings vuln_feeds, then POST /import/sync-security)' };
    return { ok: true, configured: true, db_age_hours: hours(s.age_seconds), advisories: s.advisories, synced_at: s.synced_at, stale: (s.age_seconds ?? 0) > 48 * 3600 };
  }, true);

  metrics.sources.vulnDbAgeSeconds = async () => (await vulnDb.status()).age_seconds;
  metrics.sources.pendingReviewTotal = () => countPackagesInStatus(db, 'pending_review');
  metrics.sources.quarantineTotal = () => countPackagesInStatus(db, 'quarantined');
  metrics.sources.clamavLastUpdate = () => avengine.lastUpdateUnix();

  return {
    vulnDb, feeds, scanner, transitions, decisions, rescans, queries, avengine, scheduled,
    async syncFromSettings() {
      const list = configuredFeeds(await settings.all());
      if (list.length === 0) return null;
      return feeds.sync(list);
    },
  };
}

/**
 * The security jobs: expiry at start-up and daily in every edition (an expired acceptance must not
 * keep a package in the index); SLA warnings and feed sync daily, Enterprise only.
 */
export function registerSecurityJobs(scheduler: JobScheduler, security: SecurityService, db: Db): void {
  scheduler.register({
    name: 'security_expiry',
    timeSetting: 'schedule_sla_check',
    enterpriseOnly: false,
    runAtStart: true,
    run: async () => `${(await runExpiry(security.scheduled)).length} decision(s) expired`,
  });
  scheduler.register({
    name: 'security_sla_warnings',
    timeSetting: 'schedule_sla_check',
    enterpriseOnly: true,
    run: async () => `${await runSlaWarnings(security.scheduled)} SLA warning(s) sent`,
  });
  scheduler.register({
    name: 'security_sync',
    timeSetting: 'schedule_security_sync',
    enterpriseOnly: true,
    run: async () => {
      const report = await security.syncFromSettings();
      if (!report) return 'no feeds configured';
      const failed = report.feeds.filter((f) => f.status === 'failed').map((f) => f.name);
      return `advisories=${report.advisories}; epss=${report.epss}; kev=${report.kev}${failed.length ? `; failed=${failed.join(',')}` : ''}`;
    },
  });
}

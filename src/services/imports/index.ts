/** Import from upstream repositories: sources, catalog sync and its daily job. */
import type { Logger } from 'pino';
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import type { Db } from '../../adapters/db/index.js';
import { lastScheduledSyncRun } from '../../adapters/db/import-sources.table.js';
import { isoUtc } from '../../domain/time.js';
import { nextSlot, type JobScheduler } from '../jobs.js';
import type { SettingsService } from '../settings.js';
import type { Repository } from '../repository.js';
import { CatalogQuery } from './catalog-query.js';
import { ImportGroups } from './groups.js';
import { ResidentCatalogs } from './resident-catalogs.js';
import { Importer } from './importer.js';
import { SourceStore, stateView } from './source-store.js';
import { SyncService } from './sync.js';

export const IMPORT_SYNC_JOB = 'import-sync';
/** Catalogs from this size on get the resolver warm-up (Debian's main: ~63,000 packages). */
export const RESOLVER_WARM_UP_FROM = 10_000;
/** The catalog sync runs at the security feeds' daily time: both refresh upstream data. */
const SCHEDULE_SETTING = 'schedule_security_sync' as const;

export interface ImportDeps {
  db: Db;
  audit: AuditLog;
  log: Logger;
  dataDir: string;
  settings: SettingsService;
  jobs: JobScheduler;
  edition: 'community' | 'enterprise';
  repo: Repository;
  maxPackageBytes: number;
  /** IMPORT_CATALOG_MEMORY_MB in bytes (default: none held). */
  catalogMemoryBytes?: number;
}

export class ImportService {
  readonly sources: SourceStore;
  readonly syncs: SyncService;
  readonly catalog: CatalogQuery;
  readonly importer: Importer;
  readonly groups: ImportGroups;
  private warming: Promise<void> | null = null;
  private readonly warmUpListeners: Array<() => void> = [];

  constructor(private readonly deps: ImportDeps) {
    this.sources = new SourceStore(deps.db, deps.audit);
    this.catalog = new CatalogQuery(deps.db, new ResidentCatalogs(deps.db, { budget: deps.catalogMemoryBytes ?? 0, log: deps.log }));
    // Uploads' dependency checks also name what the synced catalogs of their distribution offer.
    deps.repo.catalogs.lookup = (codename) => this.catalog.providesLookup(codename);
    this.importer = new Importer({
      db: deps.db, audit: deps.audit, catalog: this.catalog, sources: this.sources, uploads: deps.repo.uploads,
      tempDir: deps.repo.files.tempDir, maxPackageBytes: deps.maxPackageBytes,
    });
    this.groups = new ImportGroups({ db: deps.db, audit: deps.audit, lifecycle: deps.repo.lifecycle });
    this.syncs = new SyncService({
      db: deps.db, sources: this.sources, audit: deps.audit, log: deps.log, dataDir: deps.dataDir,
      afterCommit: (count, sourceId) => this.prepareResolver(count, sourceId),
      resident: this.catalog.resident,
    });
  }

  /**
   * Readies dependency resolution: holds the current catalog generations in memory
   * (CatalogQuery.holdInMemory), then has V8 compile the resolver (CatalogQuery.warmUp, about
   * 0.4 s of CPU) when a catalog of RESOLVER_WARM_UP_FROM packages or more exists. Runs after a
   * sync, and at start-up. Small catalogs resolve in milliseconds either way. `count`,
   * `sourceId`: the catalog just synced (its own packages are the ones resolved); without them,
   * every catalog, and the warm-up if the largest one stored qualifies.
   */
  async prepareResolver(count?: number, sourceId?: string): Promise<void> {
    await this.catalog.holdInMemory(sourceId);
    const largest = count ?? Math.max(0, ...(await Promise.all((await this.sources.list()).map(async (s) => Number((await this.sources.state(s.id)).count)))));
    if (largest < RESOLVER_WARM_UP_FROM) return;
    this.warming ??= this.catalog.warmUp(undefined, { from: RESOLVER_WARM_UP_FROM, sourceId })
      .then(({ ms, catalogRoots }) => {
        this.deps.log.info({ ms: Math.round(ms), catalogRoots }, 'dependency resolver warmed up');
        for (const listener of this.warmUpListeners) listener();
      })
      .finally(() => (this.warming = null));
    await this.warming;
  }

  /** Called after each warm-up of the resolver (the HTTP layer compiles the resolve route's schemas then). */
  afterResolverWarmUp(listener: () => void): void {
    this.warmUpListeners.push(listener);
  }

  /** Every source's sync state (GET /import/sync-status). */
  async syncStatus() {
    const sources = await this.sources.list();
    return Promise.all(sources.map(async (s) => ({ source_id: s.id, name: s.name, type: s.type, distribution: s.distribution, ...stateView(await this.sources.state(s.id)) })));
  }

  /** When the daily catalog sync runs next (GET /import/sync-schedule). */
  async schedule(now = new Date()) {
    const settings = await this.deps.settings.all();
    const time = settings[SCHEDULE_SETTING];
    const enabled = this.deps.jobs.active().some((j) => j.name === IMPORT_SYNC_JOB);
    const last = await lastScheduledSyncRun(this.deps.db, IMPORT_SYNC_JOB);
    return {
      enabled,
      time,
      timezone: 'UTC',
      setting: SCHEDULE_SETTING,
      next_run: enabled ? isoUtc(nextSlot(now, time)) : null,
      last_run: last?.last_run_at ?? null,
      last_result: last?.last_result ?? null,
      sources: (await this.sources.list()).length,
    };
  }
}

export function registerImportJobs(jobs: JobScheduler, imports: ImportService): void {
  jobs.register({
    name: IMPORT_SYNC_JOB,
    timeSetting: SCHEDULE_SETTING,
    enterpriseOnly: true,
    async run() {
      const results = await imports.syncs.syncAll('scheduler');
      const by = (status: string) => results.filter((r) => r.status === status).length;
      return `${results.length} sources: ${by('synced')} synced, ${by('unchanged')} unchanged, ${by('failed')} failed`;
    },
  });
}

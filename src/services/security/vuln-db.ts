/**
 * Read side of the built-in vulnerability database: advisories by ecosystem and
 * package name, EPSS scores and KEV membership for a set of CVEs, and the database's state (was
 * it ever synced, how old is it). The write side is feed-sync.ts.
 */
import type { Db } from '../../adapters/db/index.js';
import { advisoryDataOfEcosystem, countAdvisories, feedLoadTimes, findAdvisoryData, findEpssScores, findKevCves, hasAdvisoryIn } from '../../adapters/db/vuln.table.js';
import type { AdvisoryLookup, AdvisoryRow, EpssEntry, EpssLookup, KevLookup } from '../../domain/security/index.js';

/** Feed kinds stored in vuln_feed_state. */
export type FeedKind = 'osv' | 'epss' | 'kev';

/** Summary of the database for health, metrics and the posture endpoint. */
export interface VulnDbStatus {
  /** True once at least one OSV feed was loaded. */
  configured: boolean;
  advisories: number;
  /** Oldest confirmation time among the loaded OSV feeds (the database is as old as its oldest feed). */
  synced_at: string | null;
  age_seconds: number | null;
  epss_fetched_at: string | null;
  kev_fetched_at: string | null;
}

/** How long the "was it ever synced" answer is cached (other replicas sync too). */
const STATE_CACHE_MS = 5000;

interface FeedTimes {
  osvLoaded: boolean;
  oldestOsvFetch: string | null;
  epssFetchedAt: string | null;
  kevFetchedAt: string | null;
}

/** Parse a stored advisory; a row that does not parse (a bug or a manual edit) is skipped. */
function parseAdvisory(data: string): AdvisoryRow | null {
  try {
    return JSON.parse(data) as AdvisoryRow;
  } catch {
    return null;
  }
}

export class VulnDatabase {
  private times: { at: number; value: FeedTimes } | null = null;
  private holds: { at: number; key: string; value: boolean } | null = null;

  constructor(private readonly db: Db) {}

  /** Forget cached state (after a sync). */
  invalidate(): void {
    this.times = null;
    this.holds = null;
  }

  private async feedTimes(): Promise<FeedTimes> {
    if (this.times && Date.now() - this.times.at < STATE_CACHE_MS) return this.times.value;
    const rows = await feedLoadTimes(this.db);
    const osv = rows.filter((r) => r.kind === 'osv' && r.loaded_at !== null);
    const fetches = osv.map((r) => r.fetched_at ?? r.loaded_at!).sort();
    const value: FeedTimes = {
      osvLoaded: osv.length > 0,
      oldestOsvFetch: fetches[0] ?? null,
      epssFetchedAt: rows.find((r) => r.kind === 'epss' && r.loaded_at !== null)?.fetched_at ?? null,
      kevFetchedAt: rows.find((r) => r.kind === 'kev' && r.loaded_at !== null)?.fetched_at ?? null,
    };
    this.times = { at: Date.now(), value };
    return value;
  }

  /** True once an OSV feed has been loaded: before that the scanner cannot scan. */
  async everSynced(): Promise<boolean> {
    return (await this.feedTimes()).osvLoaded;
  }

  /** When EPSS and KEV were last confirmed current (null = never loaded). */
  async enrichmentTimes(): Promise<{ epss: Date | null; kev: Date | null }> {
    const t = await this.feedTimes();
    return { epss: t.epssFetchedAt ? new Date(t.epssFetchedAt) : null, kev: t.kevFetchedAt ? new Date(t.kevFetchedAt) : null };
  }

  /** Whether any advisory of these ecosystems is loaded (cached briefly: asked on every upload). */
  async hasAnyOf(ecosystems: readonly string[]): Promise<boolean> {
    const key = ecosystems.join('\u0000');
    if (this.holds && this.holds.key === key && Date.now() - this.holds.at < STATE_CACHE_MS) return this.holds.value;
    this.holds = { at: Date.now(), key, value: await hasAdvisoryIn(this.db, ecosystems) };
    return this.holds.value;
  }

  /**
   * Advisory rows of `ecosystem` naming any of `names`; `normalised`: names are PEP 503-normalised
   * and compared with the advisory names normalised the same way (PyPI; runs of separators aside).
   */
  async advisoriesFor(ecosystem: string, names: readonly string[], normalised = false): Promise<AdvisoryRow[]> {
    const unique = [...new Set(names)];
    if (unique.length === 0) return [];
    const data = await findAdvisoryData(this.db, ecosystem, unique, normalised);
    return data.map(parseAdvisory).filter((r): r is AdvisoryRow => r !== null);
  }

  /**
   * Every advisory of an ecosystem indexed in memory, with the EPSS/KEV data of all the CVEs
   * they name (for rescanning many packages at once: no query per package).
   */
  async ecosystemData(ecosystem: string): Promise<{ lookup: AdvisoryLookup; enrichment: { epss: EpssLookup; kev: KevLookup } }> {
    const lookup = await this.ecosystemLookup(ecosystem);
    const cves = new Set<string>();
    for (const rows of lookup.all()) for (const row of rows) for (const id of row.cve_ids.length ? row.cve_ids : [row.id]) cves.add(id);
    return { lookup, enrichment: await this.enrichmentFor([...cves]) };
  }

  /** Every advisory of an ecosystem, indexed in memory (for rescanning many packages at once). */
  async ecosystemLookup(ecosystem: string): Promise<AdvisoryLookup & { all(): Iterable<AdvisoryRow[]> }> {
    const index = new Map<string, AdvisoryRow[]>();
    for (const r of await advisoryDataOfEcosystem(this.db, ecosystem)) {
      const row = parseAdvisory(r.data);
      if (!row) continue;
      const list = index.get(r.package_name);
      if (list) list.push(row);
      else index.set(r.package_name, [row]);
    }
    return {
      byPackage: (eco, name) => (eco === ecosystem ? (index.get(name) ?? []) : []),
      all: () => index.values(),
    };
  }

  /** EPSS and KEV lookups preloaded for `cveIds`. */
  async enrichmentFor(cveIds: readonly string[]): Promise<{ epss: EpssLookup; kev: KevLookup }> {
    const epss = new Map<string, EpssEntry>();
    const kev = new Set<string>();
    for (const row of await findEpssScores(this.db, cveIds)) epss.set(row.cve_id, { epss: row.epss, percentile: row.percentile });
    for (const id of await findKevCves(this.db, cveIds)) kev.add(id);
    return { epss: { get: (id) => epss.get(id) }, kev: { has: (id) => kev.has(id) } };
  }

  /** Database summary (health `grype`, metric tollgate_grype_db_age_seconds, posture). */
  async status(now = new Date()): Promise<VulnDbStatus> {
    this.invalidate();
    const t = await this.feedTimes();
    const advisories = await countAdvisories(this.db);
    const syncedAt = t.oldestOsvFetch;
    return {
      configured: t.osvLoaded,
      advisories,
      synced_at: syncedAt,
      age_seconds: syncedAt ? Math.max(0, Math.round((now.getTime() - Date.parse(syncedAt)) / 1000)) : null,
      epss_fetched_at: t.epssFetchedAt,
      kev_fetched_at: t.kevFetchedAt,
    };
  }
}

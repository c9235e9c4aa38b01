import { listDistributions } from '../../adapters/db/distributions.table.js';
import type { Db } from '../../adapters/db/index.js';
import {
  countIndexedPackagesByDistribution, countPackageNames, countPackagesMatching, findPackageNamesPage, findPackagesPage, packageVersionsNamed, packageVersionsWithSteps, type PackageRow,
  type VersionListRow,
} from '../../adapters/db/packages.table.js';
import { compareDebianVersions } from '../../domain/deb/version.js';
import { acceptedArchitectures, allDistributions, type PackageStatus } from '../../domain/distributions.js';
import { compareEvr, parseEvr } from '../../domain/rpm/vercmp.js';
import type { StepResult } from '../../domain/pipeline/types.js';
import { toApiTime } from '../../domain/time.js';
import { parseStoredFindings } from '../security/findings-store.js';
import { GenerationCache } from './generation-cache.js';

/** One stored package version as the API shows it. */
export function versionView(row: VersionListRow) {
  const findings = JSON.parse(row.findings) as { counts?: Record<string, number>; details?: unknown[] };
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    arch: row.arch,
    distribution: row.distribution,
    format: row.format,
    status: row.status,
    cve_status: row.cve_status,
    sha256: row.sha256,
    size: row.size,
    filename: row.filename,
    pool_path: row.pool_path,
    source: row.source_name,
    source_version: row.source_version,
    uploaded_by: row.uploaded_by,
    uploaded_at: toApiTime(row.created_at),
    sla_deadline: toApiTime(row.sla_deadline),
    findings: findings.counts ?? {},
    reasons: JSON.parse(row.reasons) as string[],
  };
}

/** The stored validation steps of a row, as its upload recorded them. */
export const stepsOf = (row: Pick<PackageRow, 'pipeline'>) => JSON.parse(row.pipeline) as StepResult[];

/** Orders two versions of one package as its package manager does (dpkg, or rpm with epoch). */
export function compareRowVersions(a: Pick<PackageRow, 'format' | 'version'>, b: Pick<PackageRow, 'format' | 'version'>): number {
  if (a.format === 'rpm' && b.format === 'rpm') return compareEvr(parseEvr(a.version), parseEvr(b.version));
  try {
    return compareDebianVersions(a.version, b.version);
  } catch {
    return 0;
  }
}

/**
 * The latest version among rows of one package: the highest version (what apt or dnf would pick),
 * the most recent upload among equal versions. Not the last upload: a backport uploaded after a
 * newer release does not become "latest".
 */
export function latestRow<T extends Pick<PackageRow, 'format' | 'version' | 'seq'>>(rows: readonly T[]): T {
  return rows.reduce((best, row) => {
    const order = compareRowVersions(row, best);
    return order > 0 || (order === 0 && Number(row.seq) > Number(best.seq)) ? row : best;
  });
}

export interface PageRequest {
  page: number;
  perPage: number;
}

/** Pages kept per catalog generation and Catalog: the first pages of a few filters, not every page ever asked for. */
const KEPT_PAGES = 64;
/** Artifact pages kept per catalog generation and Catalog (the most recently asked for). */
const KEPT_ARTIFACTS = 256;

/**
 * Read-only views behind /packages, /artifacts and /distributions.
 *
 * The listings' totals and whole pages are kept per catalog generation (migrations 0015, 0016:
 * it grows with every committed change to a column they count, order or show, on any replica),
 * so a listing read that nothing has changed since costs one primary-key read. Kept pages are
 * shared between requests: callers must not change them.
 */
export class Catalog {
  /** The listings' totals count over the whole table: once per catalog generation, not per page. */
  private readonly totals: GenerationCache;
  private readonly pages: GenerationCache;
  private readonly artifactPages: GenerationCache;

  constructor(private readonly db: Db) {
    this.totals = new GenerationCache(db);
    this.pages = new GenerationCache(db, KEPT_PAGES);
    this.artifactPages = new GenerationCache(db, KEPT_ARTIFACTS);
  }

  /** Packages as their index lists them (raw pool format), newest first, with filters. */
  async packages(filter: { q?: string; distribution?: string; status?: PackageStatus }, page: PageRequest) {
    const key = JSON.stringify(['packages', filter.q ?? null, filter.distribution ?? null, filter.status ?? null]);
    return this.pages.page(key, page, async () => {
      const [total, rows] = await Promise.all([this.totals.get(key, () => countPackagesMatching(this.db, filter)), findPackagesPage(this.db, filter, page)]);
      return { total, items: rows.map((r) => ({ ...versionView(r), index_entry: r.format === 'deb' ? r.index_entry : undefined })) };
    });
  }

  /** Artifacts: one entry per package name with its version history and security status. */
  async artifacts(page: PageRequest, distribution?: string) {
    const key = JSON.stringify(['names', distribution ?? null]);
    return this.pages.page(key, page, () => this.readArtifacts(key, page, distribution));
  }

  private async readArtifacts(key: string, page: PageRequest, distribution?: string) {
    const [total, pageNames] = await Promise.all([this.totals.get(key, () => countPackageNames(this.db, distribution)), findPackageNamesPage(this.db, page, distribution)]);
    if (pageNames.length === 0) return { total, items: [] };
    // 50 names' versions: the listing columns only, not the index entries and file lists.
    const rows = await packageVersionsNamed(this.db, pageNames, distribution);
    const items = pageNames.map((name) => {
      const own = rows.filter((r) => r.name === name);
      const versions = own.map(versionView);
      const latest = versionView(latestRow(own));
      const worst = ['quarantined', 'pending_review', 'upgrade_required', 'exception', 'accepted_risk', 'published'].find((s) => versions.some((v) => v.status === s));
      return {
        name,
        format: latest.format,
        latest_version: latest.version,
        distributions: [...new Set(versions.map((v) => v.distribution))],
        security_status: worst ?? latest.status,
        versions: versions.map((v) => ({ version: v.version, arch: v.arch, distribution: v.distribution, status: v.status, cve_status: v.cve_status, uploaded_at: v.uploaded_at })),
      };
    });
    return { total, items };
  }

  /**
   * One package's artifact page: every version, the latest one's validation steps and every
   * version's findings; null when no version is stored. Kept per catalog generation like the pages.
   */
  async artifact(name: string) {
    return this.artifactPages.get(name, async () => {
      const rows = await packageVersionsWithSteps(this.db, name);
      if (rows.length === 0) return null;
      const latest = latestRow(rows);
      return {
        name: latest.name,
        format: latest.format,
        latest_version: latest.version,
        versions: rows.map(versionView),
        last_validation: { version: latest.version, distribution: latest.distribution, status: latest.status, steps: stepsOf(latest) },
        cve_findings: rows.flatMap((r) => parseStoredFindings(r.findings).details.map((f) => ({ version: r.version, distribution: r.distribution, ...f }))),
      };
    });
  }

  async distributions() {
    const counts = await countIndexedPackagesByDistribution(this.db);
    const rows = await listDistributions(this.db);
    return allDistributions().map((d) => {
      const row = rows.find((r) => r.codename === d.codename);
      return {
        codename: d.codename,
        description: d.description,
        format: d.format,
        architecture: d.architectures[0]!,
        architectures: acceptedArchitectures(d),
        index_architectures: [...d.architectures],
        component: d.format === 'deb' ? d.components[0]! : null,
        components: [...d.components],
        suite: d.suite,
        origin: d.origin,
        label: d.label,
        private: d.private,
        built_in: d.builtIn,
        package_count: counts.find((c) => c.distribution === d.codename)?.n ?? 0,
        osv_ecosystem: d.osvEcosystem,
        scanner_distro: d.scannerDistro,
        published_at: toApiTime(row?.published_at),
        up_to_date: row ? Number(row.published_generation) >= Number(row.generation) : false,
      };
    });
  }
}

/**
 * Distributions as data: the built-in table seeds the database, an optional file read at start
 * and the API add, change and retire distributions, and every replica's view
 * (domain/distributions.ts) follows the database.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../adapters/audit/audit-log.js';
import {
  countPackagesByPlace,
  insertDistributionIfMissing,
  listDistributions,
  markDistributionRetired,
  poolPathsOnlyIn,
  poolPathUsedOutside,
  saveDistributionDefinition,
  type DistributionRow,
} from '../adapters/db/distributions.table.js';
import type { Db } from '../adapters/db/index.js';
import type { PackageFiles } from '../adapters/storage/interfaces.js';
import { distributionFromSpec, specOf, type DistributionSpec } from '../domain/distribution-spec.js';
import { BUILT_IN_DISTRIBUTIONS, findDistribution, independentArchitecture, isIndexed, setDistributions, type Distribution } from '../domain/distributions.js';
import { packagesInDistribution } from '../adapters/db/packages.table.js';
import { releaseSourceFiles, sourceFilesOf } from './packages/source-files.js';
import { poolLockPath, withPoolPathLocks } from './packages/pool-path-lock.js';
import { rpmPathInTree, rpmTreeRoot } from '../domain/repo/rpm/tree.js';
import { DomainError } from '../domain/errors.js';
import { isoUtc } from '../domain/time.js';
import type { Actor } from './actor.js';
import type { Publisher } from './publishing/publisher.js';

const SYSTEM: Actor = { username: 'system', ip: null };

/** The distribution a row stands for, or null (retired, or a definition this version cannot read). */
function distributionOfRow(row: DistributionRow, log: Logger): Distribution | null {
  if (row.retired_at) return null;
  const builtIn = BUILT_IN_DISTRIBUTIONS.find((d) => d.codename === row.codename);
  if (!row.definition) return builtIn ? { ...builtIn, description: row.description } : null;
  try {
    const spec = JSON.parse(row.definition) as DistributionSpec;
    return { ...distributionFromSpec({ ...spec, codename: row.codename }, null), description: row.description, builtIn: builtIn !== undefined };
  } catch (error) {
    log.error({ err: error, codename: row.codename }, 'distribution definition unreadable: distribution not served');
    return builtIn ? { ...builtIn, description: row.description } : null;
  }
}

export class DistributionService {
  private refresher: NodeJS.Timeout | null = null;
  /** Definitions as last loaded, to tell which distributions another replica changed. */
  private loaded = new Map<string, string>();

  constructor(
    private readonly deps: { db: Db; files: PackageFiles; publisher: Publisher; audit: AuditLog; log: Logger },
  ) {}

  /** Start-up: every built-in distribution has its row, the file's definitions are applied, the view is loaded. */
  async load(definitionsFile: { path: string; content: unknown } | null): Promise<void> {
    const known = new Set((await listDistributions(this.deps.db)).map((r) => r.codename));
    for (const d of BUILT_IN_DISTRIBUTIONS) {
      if (known.has(d.codename)) continue;
      await insertDistributionIfMissing(this.deps.db, { codename: d.codename, format: d.format, description: d.description, generation: 0, published_generation: -1, published_at: null, initialized_at: isoUtc(), definition: null, retired_at: null });
    }
    await this.refresh();
    if (definitionsFile) await this.applyFile(definitionsFile.path, definitionsFile.content);
  }

  /** Reads the database's distributions into this process's view; drops what the publisher remembers of changed ones. */
  async refresh(): Promise<void> {
    const rows = await listDistributions(this.deps.db);
    const list: Distribution[] = [];
    const loaded = new Map<string, string>();
    for (const row of rows) {
      const dist = distributionOfRow(row, this.deps.log);
      if (!dist) continue;
      list.push(dist);
      loaded.set(dist.codename, JSON.stringify(dist));
    }
    for (const [codename, was] of this.loaded) {
      if (loaded.get(codename) !== was) this.deps.publisher.forget(codename);
    }
    // Built-ins first, in the table's order, then the operators' by codename: a stable listing.
    const order = (d: Distribution) => BUILT_IN_DISTRIBUTIONS.findIndex((b) => b.codename === d.codename);
    list.sort((a, b) => (order(a) === -1 ? 1e6 : order(a)) - (order(b) === -1 ? 1e6 : order(b)) || a.codename.localeCompare(b.codename));
    setDistributions(list);
    this.loaded = loaded;
  }

  /** Replicas share the database: each re-reads it this often (a change is also seen at once by the replica that made it). */
  startRefreshing(intervalMs: number): void {
    this.refresher = setInterval(() => void this.refresh().catch((err: unknown) => this.deps.log.warn({ err }, 'distribution refresh failed')), intervalMs);
    this.refresher.unref();
  }

  stop(): void {
    if (this.refresher) clearInterval(this.refresher);
    this.refresher = null;
  }

  /** Adds a distribution (or revives a retired one of the same format) and publishes its signed, empty index at once. */
  async create(spec: DistributionSpec, actor: Actor): Promise<Distribution> {
    const codename = typeof spec.codename === 'string' ? spec.codename : '';
    const dist = distributionFromSpec(spec, null);
    const row = (await listDistributions(this.deps.db)).find((r) => r.codename === codename);
    if (row && !row.retired_at) throw new DomainError('conflict', 'distribution_exists', `Distribution ${codename} already exists`);
    if (row && row.format !== dist.format) {
      throw new DomainError('conflict', 'distribution_exists', `Distribution ${codename} was retired as a .${row.format} distribution and its packages are kept: recreate it with that format`);
    }
    if (!row) {
      await insertDistributionIfMissing(this.deps.db, { codename, format: dist.format, description: dist.description, generation: 0, published_generation: -1, published_at: null, initialized_at: isoUtc(), definition: null, retired_at: null });
    }
    await this.save(dist);
    await this.deps.audit.record({ action: 'DISTRIBUTION_CREATE', user: actor.username, result: 'SUCCESS', detail: describe(dist), ip: actor.ip });
    return findDistribution(codename)!;
  }

  /** Changes a distribution; a component or architecture that still holds packages cannot be removed. */
  async update(codename: string, spec: DistributionSpec, actor: Actor): Promise<Distribution> {
    const existing = this.active(codename);
    const dist = distributionFromSpec(spec, existing);
    // Source packages (arch `source`) are listed in every APT distribution's Sources, whatever its architectures.
    const kept = new Set([...dist.architectures, independentArchitecture(dist.format), ...(dist.format === 'deb' ? ['source'] : [])]);
    const stranded = (await countPackagesByPlace(this.deps.db, codename)).filter((p) => !kept.has(p.arch) || (dist.format === 'deb' && !dist.components.includes(p.component)));
    if (stranded.length > 0) {
      const where = stranded.map((p) => `${p.n} in ${dist.format === 'deb' ? `${p.component}/` : ''}${p.arch}`).join(', ');
      throw new DomainError('conflict', 'distribution_in_use', `${codename} still holds packages where the change would remove them from the index (${where}): delete or move them first`);
    }
    // RPM: a noarch package's file is in every architecture's tree (rpmNoarchCopies). An added
    // tree gets them before its repodata lists them; a removed one loses its repodata and copies.
    const added = dist.architectures.filter((a) => !existing.architectures.includes(a));
    const removed = existing.architectures.filter((a) => !dist.architectures.includes(a));
    const noarch = dist.format === 'rpm' && (added.length || removed.length)
      ? (await packagesInDistribution(this.deps.db, codename, null)).filter((r) => isIndexed(r.status) && r.arch === 'noarch')
      : [];
    for (const row of noarch) for (const arch of added) await this.deps.files.publish(row.sha256, rpmPathInTree(row.pool_path, arch));
    await this.save(dist);
    if (dist.format === 'rpm') {
      for (const arch of removed) {
        await this.deps.files.removePublishedTree(`${rpmTreeRoot(dist, arch)}repodata`);
        // The stored file (its row's pool path) stays where it is; only the copies go.
        for (const row of noarch) if (rpmPathInTree(row.pool_path, arch) !== row.pool_path) await this.deps.files.removePublishedTree(rpmPathInTree(row.pool_path, arch));
      }
    }
    await this.deps.audit.record({ action: 'DISTRIBUTION_UPDATE', user: actor.username, result: 'SUCCESS', detail: describe(dist), ip: actor.ip });
    return findDistribution(codename)!;
  }

  /** Takes a distribution out of service: its published tree is removed, its packages are kept until deleted. */
  async retire(codename: string, actor: Actor): Promise<void> {
    const dist = this.active(codename);
    const onlyHere = dist.format === 'deb' ? await poolPathsOnlyIn(this.deps.db, codename) : [];
    // Source packages' other files: those no indexed source package of another distribution names.
    const sourceFiles = dist.format === 'deb' ? (await packagesInDistribution(this.deps.db, codename, null)).filter((r) => isIndexed(r.status)).flatMap((r) => sourceFilesOf(r)) : [];
    await markDistributionRetired(this.deps.db, codename, isoUtc());
    await this.refresh();
    await this.deps.publisher.idle();
    await this.deps.files.removePublishedTree(dist.format === 'deb' ? `apt/dists/${codename}` : `rpm/${codename}`);
    // Each under its pool path's lock (pool-path-lock.ts; a source package's is its folder), asked
    // again there: the same package uploaded to another distribution meanwhile keeps its file.
    for (const path of onlyHere) {
      await withPoolPathLocks(this.deps.db, [path, poolLockPath({ pool_path: path }, true)], async (db) => {
        if (!(await poolPathUsedOutside(db, path, codename))) await this.deps.files.unpublish(path);
      });
    }
    await releaseSourceFiles(this.deps.db, this.deps.files, sourceFiles, { unpublish: true, forget: false, exceptDistribution: codename });
    await this.deps.audit.record({ action: 'DISTRIBUTION_RETIRE', user: actor.username, result: 'SUCCESS', detail: `codename=${codename}; pool files removed=${onlyHere.length}`, ip: actor.ip });
  }

  private active(codename: string): Distribution {
    const dist = findDistribution(codename);
    if (!dist) throw new DomainError('not_found', 'unknown_distribution', `Unknown distribution ${codename}`);
    return dist;
  }

  private async save(dist: Distribution): Promise<void> {
    const { built_in: _builtIn, ...definition } = specOf(dist);
    await saveDistributionDefinition(this.deps.db, dist.codename, JSON.stringify(definition), dist.description);
    await this.refresh();
    this.deps.publisher.forget(dist.codename);
    await this.deps.publisher.request(dist.codename);
  }

  /**
   * The start-up file: `{"distributions": [definition, …]}`. Each is created, or updated when it
   * differs from the database; distributions it does not name are left as they are.
   */
  private async applyFile(path: string, parsed: unknown): Promise<void> {
    const list = (parsed as { distributions?: unknown })?.distributions;
    if (!Array.isArray(list)) throw new Error(`DISTRIBUTIONS_FILE ${path}: expected {"distributions": [ … ]}`);
    for (const spec of list as DistributionSpec[]) {
      const codename = typeof spec?.codename === 'string' ? spec.codename : '?';
      try {
        const existing = findDistribution(codename);
        if (!existing) {
          await this.create(spec, SYSTEM);
          continue;
        }
        const { codename: _c, format: _f, ...change } = spec;
        const next = distributionFromSpec(change, existing);
        if (JSON.stringify(specOf(next)) !== JSON.stringify(specOf(existing))) await this.update(codename, change, SYSTEM);
      } catch (error) {
        throw new Error(`DISTRIBUTIONS_FILE ${path}: ${codename}: ${(error as Error).message}`);
      }
    }
  }
}

function describe(d: Distribution): string {
  const where = d.format === 'deb' ? `components=${d.components.join(',')}; ` : '';
  return `codename=${d.codename}; format=${d.format}; ${where}architectures=${d.architectures.join(',')}; private=${d.private}`;
}

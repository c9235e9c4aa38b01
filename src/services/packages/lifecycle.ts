import { randomUUID } from 'node:crypto';
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import { bumpGeneration, reinitialiseDistribution } from '../../adapters/db/distributions.table.js';
import type { Db } from '../../adapters/db/index.js';
import { rpmNoarchCopies } from '../../domain/repo/rpm/tree.js';
import {
  copyFindings,
  copyProvides,
  countReferences,
  deletePackageRow,
  findPackage,
  indexedPackages,
  insertPackage,
  packageRows,
  packagesInDistribution,
  type PackageRow,
} from '../../adapters/db/packages.table.js';
import { allDistributions, componentFor, findDistribution, isIndexed, type Distribution } from '../../domain/distributions.js';
import { DomainError } from '../../domain/errors.js';
import { UPSTREAM_SIGNER } from '../../domain/rpm/signature-policy.js';
import type { InspectedPackage } from '../../domain/package.js';
import { handlerFor } from '../formats/index.js';
import type { Actor } from '../actor.js';
import type { Publisher } from '../publishing/publisher.js';
import { isoUtc } from '../../domain/time.js';
import type { PackageFiles } from '../../adapters/storage/interfaces.js';
import { sourceDirOf } from '../formats/deb-source.js';
import { publishSourceFiles, releaseSourceFiles, sourceFilesOf } from './source-files.js';
import { inTransaction, poolLockPath, refuseOccupiedPoolPath, withPoolPathLock } from './pool-path-lock.js';

export interface PromoteResult {
  package: string;
  version: string;
  arch: string;
  from: string;
  to: string;
  status: string;
  result: 'copied' | 'already_present';
}

export interface SyncReport {
  distributions: string[];
  packages_indexed: number;
  missing_files: Array<{ distribution: string; package: string; version: string; arch: string; sha256: string }>;
  unreferenced_files: string[];
  relinked: number;
}

/** The package as the format handler sees it, rebuilt from its stored row. */
export function inspectedFromRow(row: PackageRow): InspectedPackage {
  return {
    format: row.format as InspectedPackage['format'],
    name: row.name,
    version: row.version,
    arch: row.arch,
    sourceName: row.source_name,
    sourceVersion: row.source_version,
    summary: '',
    repositoryFilename: row.filename,
    files: JSON.parse(row.files) as InspectedPackage['files'],
    metadata: JSON.parse(row.metadata),
    relations: JSON.parse(row.relations),
  };
}

/** The SHA-256 of a row's file when the repository made it (a signed RPM): its pool path is its own. */
export function rewrittenFile(row: Pick<PackageRow, 'signed_by' | 'sha256'>): string | null {
  return row.signed_by && row.signed_by !== UPSTREAM_SIGNER ? row.sha256 : null;
}

function distributionOrThrow(codename: string): Distribution {
  const dist = findDistribution(codename);
  // A codename in a request body is a value from a fixed list: an invalid one is a 422, as in upload.
  if (!dist) throw new DomainError('invalid', 'unknown_distribution', `Unknown distribution ${codename}`);
  return dist;
}

/** Deleting, copying between distributions, and rebuilding indexes; each change re-signs what it touches. */
export class PackageLifecycle {
  constructor(
    private readonly db: Db,
    private readonly files: PackageFiles,
    private readonly publisher: Publisher,
    private readonly audit: AuditLog,
    /** Re-reads the distributions after a description changed (DistributionService.refresh). */
    private readonly refreshDistributions: () => Promise<void>,
  ) {}

  rows(name: string, filter: { version?: string; distribution?: string; arch?: string } = {}): Promise<PackageRow[]> {
    return packageRows(this.db, name, filter);
  }

  /** Removes the rows, unpublishes their files, re-signs the affected indexes; audits each row. */
  async delete(rows: PackageRow[], actor: Actor): Promise<void> {
    const touched = new Set<string>();
    await this.db.transaction().execute(async (trx) => {
      for (const row of rows) {
        await deletePackageRow(trx, row);
        if (isIndexed(row.status)) touched.add(row.distribution);
      }
    });
    for (const codename of touched) await this.publisher.request(codename);
    // Files go only after the index no longer names them, and only when nothing else uses them.
    // Under the pool path's lock: an upload of the same package linking it meanwhile keeps its file.
    for (const row of rows) {
      const sourceFiles = sourceFilesOf(row);
      await withPoolPathLock(this.db, poolLockPath(row, sourceFiles.length > 0), async (db) => {
        if (isIndexed(row.status) && (await countReferences(db, 'pool_path', row.pool_path, true)) === 0) await this.files.unpublish(row.pool_path);
        if ((await countReferences(db, 'sha256', row.sha256)) === 0) await this.files.forget(row.sha256);
        // A source package's other files, unless another row still names them.
        await releaseSourceFiles(db, this.files, sourceFiles, { unpublish: isIndexed(row.status), forget: true });
      });
    }
    for (const r of rows) {
      await this.audit.record({ action: 'DELETE', user: actor.username, result: 'SUCCESS', package: r.name, version: r.version, detail: `distribution=${r.distribution}; arch=${r.arch}; status=${r.status}`, ip: actor.ip });
    }
  }

  /** Copies one package into another distribution of the same format, without re-scanning it. */
  async promote(name: string, version: string, arch: string | undefined, from: string, to: string, actor: Actor): Promise<PromoteResult[]> {
    const source = distributionOrThrow(from);
    const target = distributionOrThrow(to);
    if (source.format !== target.format) {
      throw new DomainError('invalid', 'format_mismatch', `${from} (${source.format}) and ${to} (${target.format}) hold different package formats`);
    }
    if (from === to) throw new DomainError('invalid', 'same_distribution', 'Source and target distribution are the same');
    const rows = await this.rows(name, { version, distribution: from, arch });
    if (rows.length === 0) throw new DomainError('not_found', 'package_not_found', `${name} ${version} is not in ${from}`);
    const promoted = await this.copyAll(rows, target);
    for (const p of promoted) {
      await this.audit.record({ action: 'PROMOTE', user: actor.username, result: 'SUCCESS', package: p.package, version: p.version, detail: `${p.from} -> ${p.to}; arch=${p.arch}; ${p.result}`, ip: actor.ip });
    }
    return promoted;
  }

  /** Copies packages (all, or the named ones) from one distribution to another; the source keeps them. */
  async migrate(from: string, to: string, names: string[] | null, actor: Actor): Promise<PromoteResult[]> {
    const source = distributionOrThrow(from);
    const target = distributionOrThrow(to);
    if (source.format !== target.format) {
      throw new DomainError('invalid', 'format_mismatch', `${from} (${source.format}) and ${to} (${target.format}) hold different package formats`);
    }
    if (from === to) throw new DomainError('invalid', 'same_distribution', 'Source and target distribution are the same');
    const rows = await packagesInDistribution(this.db, from, names);
    const items = await this.copyAll(rows, target);
    await this.audit.record({
      action: 'MIGRATE', user: actor.username, result: 'SUCCESS',
      detail: `${from} -> ${to}; copied=${items.filter((i) => i.result === 'copied').length}; present=${items.filter((i) => i.result === 'already_present').length}`, ip: actor.ip,
    });
    return items;
  }

  /**
   * (Re-)initialises distributions: a new description if given, then a fresh signed index for each
   * (all of them when none is named).
   */
  async initialise(codenames: string[] | null, description: string | null, actor: Actor): Promise<string[]> {
    const chosen = codenames ?? allDistributions().map((d) => d.codename);
    for (const codename of chosen) distributionOrThrow(codename);
    for (const codename of chosen) await reinitialiseDistribution(this.db, codename, description);
    if (description) await this.refreshDistributions();
    for (const codename of chosen) await this.publisher.request(codename);
    await this.audit.record({ action: 'INIT_DISTS', user: actor.username, result: 'SUCCESS', detail: `initialized: ${chosen.join(', ')}`, ip: actor.ip });
    return chosen;
  }

  /**
   * Copies the rows, all or nothing as far as conflicts go: every conflict is looked for before the
   * first copy, so a refused promotion or migration leaves the target as it was. Whatever was
   * copied is published even if a later copy fails (a concurrent upload winning a race).
   */
  private async copyAll(rows: PackageRow[], target: Distribution): Promise<PromoteResult[]> {
    for (const row of rows) await this.conflictIn(row, target);
    const results: PromoteResult[] = [];
    try {
      for (const row of rows) results.push(await this.copy(row, target));
    } finally {
      if (results.some((r) => r.result === 'copied')) await this.publisher.request(target.codename);
    }
    return results;
  }

  /** The row already in the target with the same name/version/arch, if any; throws when its bytes differ. */
  private async conflictIn(row: PackageRow, target: Distribution, db: Db = this.db): Promise<PackageRow | undefined> {
    // The copy goes to the component the package is in: the target must have it.
    componentFor(target, row.component);
    const existing = await findPackage(db, target.codename, row.name, row.version, row.arch);
    if (existing && existing.upload_sha256 !== row.upload_sha256) {
      throw new DomainError('conflict', 'version_exists', `${row.name} ${row.version} (${row.arch}) already exists in ${target.codename} with different content`, {
        existing_sha256: existing.upload_sha256,
        incoming_sha256: row.upload_sha256,
      });
    }
    return existing;
  }

  /**
   * One copy, under its pool path's lock (pool-path-lock.ts) as an admission: an upload into the
   * target meanwhile cannot link other bytes at the path between this copy's check and its row.
   */
  private async copy(row: PackageRow, target: Distribution): Promise<PromoteResult> {
    const base = { package: row.name, version: row.version, arch: row.arch, from: row.distribution, to: target.codename, status: row.status };
    const handler = handlerFor(row.format as Distribution['format']);
    const poolPath = handler.poolPath(inspectedFromRow(row), target, componentFor(target, row.component), rewrittenFile(row));
    const sourceFiles = sourceFilesOf(row);
    return withPoolPathLock(this.db, poolLockPath({ pool_path: poolPath }, sourceFiles.length > 0), async (db): Promise<PromoteResult> => {
      const existing = await this.conflictIn(row, target, db);
      if (existing) return { ...base, status: existing.status, result: 'already_present' };
      if (isIndexed(row.status)) {
        await refuseOccupiedPoolPath(db, poolPath, row.sha256);
        await this.files.publish(row.sha256, poolPath);
        await publishSourceFiles(this.files, sourceFiles, sourceDirOf(poolPath));
      }
      const now = isoUtc();
      const copy: PackageRow = {
        ...row,
        id: randomUUID(),
        distribution: target.codename,
        pool_path: poolPath,
        index_entry: handler.relocateIndexEntry(row.index_entry, row.pool_path, poolPath),
        seq: 0,
        created_at: now,
        updated_at: now,
      };
      await inTransaction(db, async (trx) => {
        await insertPackage(trx, copy, []);
        await copyProvides(trx, row.id, copy.id, target.codename);
        // The copy keeps the findings it was admitted with (it is not re-scanned).
        await copyFindings(trx, row.id, copy.id);
      });
      return { ...base, result: 'copied' };
    });
  }

  /**
   * Rebuilds every index from the database: re-links each indexed package's file from the store,
   * reports packages whose file is missing and files that no package references, then re-signs.
   */
  async syncIndex(actor: Actor): Promise<SyncReport> {
    const active = new Set(allDistributions().map((d) => d.codename));
    const rows = (await indexedPackages(this.db)).filter((r) => active.has(r.distribution));
    const report: SyncReport = { distributions: [], packages_indexed: rows.length, missing_files: [], unreferenced_files: [], relinked: 0 };
    const referenced = new Set<string>();
    for (const row of rows) {
      referenced.add(row.pool_path);
      for (const copy of rpmNoarchCopies(row.pool_path)) referenced.add(copy);
      if (!(await this.files.has(row.sha256))) {
        report.missing_files.push({ distribution: row.distribution, package: row.name, version: row.version, arch: row.arch, sha256: row.sha256 });
        continue;
      }
      if (!(await this.files.isPublished(row.pool_path))) {
        await this.files.publish(row.sha256, row.pool_path);
        report.relinked++;
      }
      for (const f of sourceFilesOf(row)) {
        referenced.add(f.path);
        if (!(await this.files.has(f.sha256))) {
          report.missing_files.push({ distribution: row.distribution, package: row.name, version: row.version, arch: row.arch, sha256: f.sha256 });
        } else if (!(await this.files.isPublished(f.path))) {
          await this.files.publish(f.sha256, f.path);
          report.relinked++;
        }
      }
    }
    for (const poolPath of await this.files.listPublishedPackages()) {
      if (!referenced.has(poolPath)) report.unreferenced_files.push(poolPath);
    }
    for (const dist of allDistributions()) {
      await bumpGeneration(this.db, dist.codename);
      await this.publisher.request(dist.codename);
      report.distributions.push(dist.codename);
    }
    await this.audit.record({
      action: 'SYNC_INDEX', user: actor.username, result: report.missing_files.length ? 'WARNING' : 'SUCCESS',
      detail: `indexed=${report.packages_indexed}; missing=${report.missing_files.length}; unreferenced=${report.unreferenced_files.length}; relinked=${report.relinked}`, ip: actor.ip,
    });
    return report;
  }
}


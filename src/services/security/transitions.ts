/**
 * Applying a package status change with its effects on the published repository: a package that
 * enters the index has its file hard-linked into the pool first, then its row and the
 * distribution's generation change in one transaction, then the index is re-signed; a package
 * that leaves the index is re-signed out first and its pool file removed afterwards (when no
 * other indexed row uses it); a quarantined package's file moves to the quarantine area.
 */
import type { Logger } from 'pino';
import { replaceFindingRows, writeFindingRows } from '../../adapters/db/findings.table.js';
import type { Db } from '../../adapters/db/index.js';
import { countOtherUnquarantinedCopies, writePackageStatus, type PackageStatusValues } from '../../adapters/db/security.table.js';
import { isIndexed, type PackageStatus } from '../../domain/distributions.js';
import type { StoredCveStatus } from '../../domain/security/policy.js';
import { DomainError } from '../../domain/errors.js';
import type { PackageFiles } from '../../adapters/storage/interfaces.js';
import { bumpGeneration } from '../../adapters/db/distributions.table.js';
import { countReferences, countSourceFileReferences, type PackageRow } from '../../adapters/db/packages.table.js';
import type { Publisher } from '../publishing/publisher.js';
import { isoUtc } from '../../domain/time.js';
import { findingsJson } from './findings-store.js';
import { publishSourceFiles, releaseSourceFiles, sourceFileConflict, sourceFilesOf } from '../packages/source-files.js';
import { inTransaction, poolLockPath, refuseOccupiedPoolPath, withPoolPathLock, withPoolPathLocks } from '../packages/pool-path-lock.js';
import type { StoredFinding } from '../../domain/security/index.js';

/** What changes with the status (fields left undefined are kept). */
export interface StatusChange {
  status: PackageStatus;
  cve_status?: StoredCveStatus;
  sla_deadline?: string | null;
  reasons?: string[];
  findings?: StoredFinding[];
  /** Extra writes made in the same transaction (the decision record). */
  alsoInTransaction?: (trx: Db) => Promise<void>;
}

/**
 * Deferred repository effects of many transitions (a whole-distribution rescan): each index is
 * re-signed once at the end instead of after every package, then pool files are removed.
 */
export interface TransitionBatch {
  publish: Set<string>;
  unpublish: PackageRow[];
}

export interface TransitionDeps {
  db: Db;
  files: PackageFiles;
  publisher: Publisher;
  log: Logger;
}

/** The columns a status change writes, from the updated row. */
function statusValues(updated: PackageRow): PackageStatusValues {
  const { status, cve_status, sla_deadline, reasons, findings, updated_at } = updated;
  return { status, cve_status, sla_deadline, reasons, findings, updated_at };
}

/** Applies status changes to package rows with their repository effects. */
export class PackageTransitions {
  constructor(private readonly deps: TransitionDeps) {}

  /** A batch for `apply(…, batch)`; finish it with `flush`. */
  static batch(): TransitionBatch {
    return { publish: new Set(), unpublish: [] };
  }

  /** Re-sign every index the batch touched, then remove pool files no indexed row uses. */
  async flush(batch: TransitionBatch): Promise<void> {
    for (const codename of batch.publish) await this.deps.publisher.request(codename);
    // Each path under its lock (pool-path-lock.ts): an upload of the same package linking it
    // meanwhile keeps its file.
    const seen = new Set<string>();
    for (const row of batch.unpublish) {
      if (seen.has(row.pool_path)) continue;
      seen.add(row.pool_path);
      await this.underPoolPathLock(row, (db) => this.releasePoolFiles(db, row));
    }
    batch.publish.clear();
    batch.unpublish.length = 0;
  }

  /** Apply `change` to `row`; returns the updated row. With a batch, re-signing waits for `flush`. */
  async apply(row: PackageRow, change: StatusChange, batch?: TransitionBatch): Promise<PackageRow> {
    const updated = this.updatedRow(row, change);
    const commit = async (db: Db) => {
      await this.prepare(db, row, change);
      await inTransaction(db, (trx) => this.write(trx, row, change, updated));
    };
    // Entering the index, the package takes its pool path: checked, linked and written under the
    // path's lock, as an admission is (pool-path-lock.ts).
    await (entersIndex(row, change) ? this.underPoolPathLock(row, commit) : commit(this.deps.db));
    await this.finish(row, change, batch);
    return updated;
  }

  /**
   * Apply many changes in one transaction (a whole-distribution rescan: one commit instead of
   * one per package); re-signing waits for `flush(batch)`. A change whose file step fails (pool
   * conflict, missing file) is skipped and reported as its Error. The packages entering the index
   * hold their pool paths' locks until that transaction ends.
   */
  async applyMany(items: ReadonlyArray<{ row: PackageRow; change: StatusChange }>, batch: TransitionBatch): Promise<Array<PackageRow | Error>> {
    const results: Array<PackageRow | Error> = [];
    const ready: Array<{ row: PackageRow; change: StatusChange; updated: PackageRow }> = [];
    const commit = async (db: Db) => {
      for (const { row, change } of items) {
        try {
          await this.prepare(db, row, change);
          const updated = this.updatedRow(row, change);
          ready.push({ row, change, updated });
          results.push(updated);
        } catch (error) {
          results.push(error instanceof Error ? error : new Error(String(error)));
        }
      }
      if (ready.length > 0) await inTransaction(db, (trx) => this.writeMany(trx, ready));
    };
    const entering = items.filter(({ row, change }) => entersIndex(row, change)).map(({ row }) => poolLockPath(row, sourceFilesOf(row).length > 0));
    await (entering.length ? withPoolPathLocks(this.deps.db, entering, commit) : commit(this.deps.db));
    for (const r of ready) await this.finish(r.row, r.change, batch);
    return results;
  }

  /** Before the database changes: a package entering the index gets its pool file. */
  private async prepare(db: Db, row: PackageRow, change: StatusChange): Promise<void> {
    const { files } = this.deps;
    if (!entersIndex(row, change)) return;
    await refuseOccupiedPoolPath(db, row.pool_path, row.sha256);
    if (!(await files.has(row.sha256))) throw new DomainError('conflict', 'file_missing', `the stored file of ${row.name} ${row.version} is missing (sha256 ${row.sha256})`);
    const sourceFiles = sourceFilesOf(row);
    const otherSource = await sourceFileConflict(db, sourceFiles);
    if (otherSource) throw new DomainError('conflict', 'pool_conflict', `${otherSource.path} already holds different content (published by another source package)`);
    for (const f of sourceFiles) {
      if (!(await files.has(f.sha256))) throw new DomainError('conflict', 'file_missing', `${f.name} of ${row.name} ${row.version} is missing from the store (sha256 ${f.sha256})`);
    }
    await files.publish(row.sha256, row.pool_path);
    await publishSourceFiles(files, sourceFiles);
  }

  private updatedRow(row: PackageRow, change: StatusChange): PackageRow {
    return {
      ...row,
      status: change.status,
      cve_status: change.cve_status ?? row.cve_status,
      sla_deadline: change.sla_deadline === undefined ? row.sla_deadline : change.sla_deadline,
      reasons: change.reasons ? JSON.stringify(change.reasons) : row.reasons,
      findings: change.findings ? findingsJson(change.findings) : row.findings,
      updated_at: isoUtc(),
    };
  }

  /** The database part of a change (inside the caller's transaction). */
  private async write(trx: Db, row: PackageRow, change: StatusChange, updated: PackageRow): Promise<void> {
    const wasIndexed = isIndexed(row.status);
    const willBeIndexed = isIndexed(change.status);
    // A package entering the index takes the new generation as its place in it (appended last).
    const generation = wasIndexed !== willBeIndexed ? await bumpGeneration(trx, row.distribution) : null;
    await writePackageStatus(trx, row.id, {
      ...statusValues(updated),
      ...(willBeIndexed && generation !== null ? { seq: generation } : {}),
    });
    if (change.findings) await writeFindingRows(trx, row.id, change.findings);
    await change.alsoInTransaction?.(trx);
  }

  /**
   * The database part of many changes: one generation bump per distribution, one row update per
   * package, and the finding rows replaced with one delete and a few multi-row inserts.
   */
  private async writeMany(trx: Db, items: ReadonlyArray<{ row: PackageRow; change: StatusChange; updated: PackageRow }>): Promise<void> {
    const generations = new Map<string, number>();
    for (const { row, change } of items) {
      if (isIndexed(row.status) !== isIndexed(change.status) && !generations.has(row.distribution)) {
        generations.set(row.distribution, await bumpGeneration(trx, row.distribution));
      }
    }
    for (const { row, change, updated } of items) {
      const entering = isIndexed(change.status) && !isIndexed(row.status);
      await writePackageStatus(trx, row.id, {
        ...statusValues(updated),
        ...(entering ? { seq: generations.get(row.distribution)! } : {}),
      });
      await change.alsoInTransaction?.(trx);
    }
    const withFindings = items.filter((i) => i.change.findings);
    await replaceFindingRows(trx, withFindings.map((i) => ({ packageId: i.row.id, findings: i.change.findings! })));
  }

  /** After the commit: re-sign (now or in the batch), remove an unused pool file, quarantine the file. */
  private async finish(row: PackageRow, change: StatusChange, batch?: TransitionBatch): Promise<void> {
    const wasIndexed = isIndexed(row.status);
    const willBeIndexed = isIndexed(change.status);
    const leaving = wasIndexed && !willBeIndexed;
    if (batch) {
      if (wasIndexed !== willBeIndexed) batch.publish.add(row.distribution);
      if (leaving) batch.unpublish.push(row);
    } else if (wasIndexed !== willBeIndexed) {
      await this.deps.publisher.request(row.distribution);
    }
    const quarantining = change.status === 'quarantined' && row.status !== 'quarantined';
    if ((leaving && !batch) || quarantining) {
      await this.underPoolPathLock(row, async (db) => {
        if (leaving && !batch) await this.releasePoolFiles(db, row);
        if (quarantining) await this.quarantineFile(db, row);
      });
    }
  }

  /**
   * What decides where a package's files go after its status changed runs under its pool path's
   * lock (pool-path-lock.ts), as admission and deletion do: an upload of the same package linking
   * or storing the same files meanwhile keeps them.
   */
  private underPoolPathLock(row: PackageRow, work: (db: Db) => Promise<void>): Promise<void> {
    return withPoolPathLock(this.deps.db, poolLockPath(row, sourceFilesOf(row).length > 0), work);
  }

  /** Removes a package's pool file (and a source package's other files) once no indexed row names it. */
  private async releasePoolFiles(db: Db, row: PackageRow): Promise<void> {
    if ((await countReferences(db, 'pool_path', row.pool_path, true)) === 0) await this.deps.files.unpublish(row.pool_path);
    await releaseSourceFiles(db, this.deps.files, sourceFilesOf(row), { unpublish: true, forget: false });
  }

  /** Move (or copy, when another row still uses the bytes) the file into the quarantine area. */
  private async quarantineFile(db: Db, row: PackageRow): Promise<void> {
    try {
      if (!(await this.deps.files.has(row.sha256))) return; // already in quarantine (antivirus) or gone
      const otherUsers = (await countReferences(db, 'sha256', row.sha256)) - 1;
      const othersOutsideQuarantine = otherUsers > 0 ? await countOtherUnquarantinedCopies(db, row.sha256, row.id) : 0;
      await this.deps.files.quarantine(row.sha256, othersOutsideQuarantine > 0);
      // A source package's other files go too, copied when another row still names them.
      for (const f of sourceFilesOf(row)) {
        if (!(await this.deps.files.has(f.sha256))) continue;
        const shared = (await countSourceFileReferences(db, f.sha256)) > 1 || (await countReferences(db, 'sha256', f.sha256)) > 0;
        await this.deps.files.quarantine(f.sha256, shared);
      }
    } catch (error) {
      // The status change stands; the file's place is repaired by a later quarantine or sync.
      this.deps.log.error({ err: error, package: row.name, version: row.version }, 'could not move the file to quarantine');
    }
  }
}

const entersIndex = (row: PackageRow, change: StatusChange) => isIndexed(change.status) && !isIndexed(row.status);

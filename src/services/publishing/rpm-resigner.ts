/**
 * Re-signing what the RPM distributions hold after the repository key changes (and signing what
 * was stored before packages were signed). It runs in the background, a batch at a time: each
 * package gets a signed copy at a path of its own, its row is pointed at the copy, and only then
 * is the distribution's repodata republished. The repodata clients read therefore always lists
 * files that exist with the listed digests; the files it no longer lists are removed after a
 * grace period, for clients that fetched the previous repodata a moment before.
 */
import type { Logger } from 'pino';
import {
  countReferences,
  countRpmRowsBySigner,
  replaceServedFile,
  rpmRowsNotSignedBy,
  type PackageRow,
} from '../../adapters/db/packages.table.js';
import type { Db } from '../../adapters/db/index.js';
import type { KeyringStore } from '../../adapters/signing/keyring-store.js';
import { signRpmToTemp } from '../../adapters/signing/rpm-signatures.js';
import type { Signer } from '../../adapters/signing/signer.js';
import type { PackageFiles } from '../../adapters/storage/interfaces.js';
import { findDistribution, isIndexed } from '../../domain/distributions.js';
import type { RpmInspected } from '../../domain/package.js';
import { withResignedLayout, type RpmPackage } from '../../domain/rpm/package.js';
import { UPSTREAM_SIGNER } from '../../domain/rpm/signature-policy.js';
import { isoUtc } from '../../domain/time.js';
import { rpmHandler } from '../formats/rpm.js';
import { inspectedFromRow } from '../packages/lifecycle.js';
import type { Publisher } from './publisher.js';

const BATCH = 100;

export interface ResignProgress {
  running: boolean;
  /** RPM packages in the distributions (published or held), and how many carry the active key's signature. */
  packages: number;
  signed_with_active_key: number;
  /** Published with the signature they arrived with (rpm_signature_policy keep). */
  kept_upstream: number;
  started_at: string | null;
  finished_at: string | null;
  /** Packages the last run could not re-sign (their stored file is missing), with why. */
  failures: Array<{ id: string; name: string; version: string; distribution: string; reason: string }>;
}

export interface RpmResignerDeps {
  db: Db;
  files: PackageFiles;
  publisher: Publisher;
  keyring: KeyringStore;
  log: Logger;
  /** How long files the repodata no longer lists stay served. */
  graceMs: number;
}

export class RpmResigner {
  private current: Promise<void> | null = null;
  private again = false;
  private startedAt: string | null = null;
  private finishedAt: string | null = null;
  private failures: ResignProgress['failures'] = [];
  private readonly retiring = new Set<NodeJS.Timeout>();

  constructor(private readonly deps: RpmResignerDeps) {}

  /** Starts a run in the background; asked while one is going, another follows it (a newer key). */
  start(): Promise<void> {
    if (this.current) {
      this.again = true;
      return this.current;
    }
    const run = (async () => {
      do {
        this.again = false;
        this.startedAt = isoUtc();
        this.finishedAt = null;
        try {
          await this.run();
        } catch (err) {
          this.deps.log.error({ err }, 'RPM re-signing failed');
          this.failures.push({ id: '', name: '', version: '', distribution: '', reason: err instanceof Error ? err.message : String(err) });
        }
        this.finishedAt = isoUtc();
      } while (this.again);
    })().finally(() => {
      this.current = null;
    });
    this.current = run;
    return run;
  }

  /** Resolves when no run is going (tests, shutdown); pending removals are dropped. */
  async idle(): Promise<void> {
    while (this.current) await this.current;
  }

  /** Cancels the pending removals of retired files (shutdown): files left over are harmless, signed by an earlier key. */
  stop(): void {
    for (const timer of this.retiring) clearTimeout(timer);
    this.retiring.clear();
  }

  async progress(): Promise<ResignProgress> {
    const active = this.deps.keyring.current()?.fingerprint;
    const counts = await countRpmRowsBySigner(this.deps.db);
    const of = (signer: string | undefined) => counts.find((c) => c.signed_by === signer)?.n ?? 0;
    return {
      running: this.current !== null,
      packages: counts.reduce((sum, c) => sum + c.n, 0),
      signed_with_active_key: of(active),
      kept_upstream: of(UPSTREAM_SIGNER),
      started_at: this.startedAt,
      finished_at: this.finishedAt,
      failures: this.failures.slice(0, 100),
    };
  }

  private async run(): Promise<void> {
    const signer = await this.deps.keyring.ensureKey();
    this.failures = [];
    const earlier = (await countRpmRowsBySigner(this.deps.db)).flatMap((c) => (c.signed_by && c.signed_by !== UPSTREAM_SIGNER && c.signed_by !== signer.fingerprint ? [c.signed_by] : []));
    // Until every file carries the new signature, clients importing the key file get the earlier keys too.
    await this.deps.keyring.exportPublicKeys(earlier);
    let after = '';
    for (;;) {
      const rows = await rpmRowsNotSignedBy(this.deps.db, signer.fingerprint, UPSTREAM_SIGNER, after, BATCH);
      if (rows.length === 0) break;
      after = rows.at(-1)!.id;
      const touched = new Set<string>();
      const replaced: PackageRow[] = [];
      for (const row of rows) {
        try {
          if (await this.resign(row, signer)) {
            replaced.push(row);
            if (isIndexed(row.status)) touched.add(row.distribution);
          }
        } catch (err) {
          this.failures.push({ id: row.id, name: row.name, version: row.version, distribution: row.distribution, reason: err instanceof Error ? err.message : String(err) });
        }
      }
      for (const codename of touched) await this.deps.publisher.request(codename);
      this.retire(replaced);
    }
    if (this.failures.length === 0) await this.deps.keyring.exportPublicKeys([]);
    this.deps.log.info({ fingerprint: signer.fingerprint, failures: this.failures.length }, 'RPM packages re-signed');
  }

  /** Gives one row a copy of its file signed by `signer`; false when the row changed meanwhile. */
  private async resign(row: PackageRow, signer: Signer): Promise<boolean> {
    const { files, db } = this.deps;
    const dist = findDistribution(row.distribution);
    if (!dist) return false;
    if (!(await files.has(row.sha256))) throw new Error(`the stored file ${row.sha256} is missing`);
    const signed = await signRpmToTemp(files.storedPath(row.sha256), signer, files.tempDir);
    const { path, ...facts } = signed.file;
    try {
      const metadata = withResignedLayout(JSON.parse(row.metadata) as RpmPackage, { headerStart: signed.headerStart, headerEnd: signed.headerEnd, fileSize: facts.size });
      const pkg = { ...inspectedFromRow(row), metadata } as RpmInspected;
      const poolPath = rpmHandler.poolPath(pkg, dist, row.component, facts.sha256);
      await files.keep(path, facts.sha256);
      if (isIndexed(row.status)) await files.publish(facts.sha256, poolPath);
      const changed = await db.transaction().execute((trx) =>
        replaceServedFile(trx, row, row.sha256, {
          ...facts,
          pool_path: poolPath,
          index_entry: rpmHandler.indexEntry(pkg, facts, poolPath, Math.floor(Date.now() / 1000)),
          metadata: JSON.stringify(metadata),
          signed_by: signer.fingerprint,
          updated_at: isoUtc(),
        }),
      );
      if (!changed) {
        if (isIndexed(row.status)) await files.unpublish(poolPath);
        await files.forget(facts.sha256);
      }
      return changed;
    } finally {
      await files.discard(path);
    }
  }

  /** Removes, after the grace period, the files the replaced rows served, unless something still uses them. */
  private retire(rows: readonly PackageRow[]): void {
    if (rows.length === 0) return;
    const timer = setTimeout(() => {
      this.retiring.delete(timer);
      void (async () => {
        for (const row of rows) {
          if (isIndexed(row.status) && (await countReferences(this.deps.db, 'pool_path', row.pool_path, true)) === 0) await this.deps.files.unpublish(row.pool_path);
          if ((await countReferences(this.deps.db, 'sha256', row.sha256)) === 0) await this.deps.files.forget(row.sha256);
        }
      })().catch((err: unknown) => this.deps.log.warn({ err }, 'removing re-signed packages\' earlier files failed'));
    }, this.deps.graceMs);
    timer.unref();
    this.retiring.add(timer);
  }
}

/**
 * Catalog synchronisation of import sources: verify the signed index, skip when it is unchanged,
 * otherwise read every index it lists into a new catalog generation that replaces the previous
 * one only once all of it verified and parsed. Audit `SYNC`.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import type { Db } from '../../adapters/db/index.js';
import { claimSourceSync, recordSyncFailure, recordSyncUnchanged } from '../../adapters/db/import-sources.table.js';
import { DomainError } from '../../domain/errors.js';
import { isoUtc } from '../../domain/time.js';
import { CatalogWriter } from './catalog-store.js';
import type { ResidentCatalogs } from './resident-catalogs.js';
import type { SourceStore, StoredSource } from './source-store.js';
import { fetchSignedIndex, type IndexLimits } from './upstream-index.js';

export interface SyncEvent {
  status: 'started' | 'verified' | 'reading' | 'unchanged' | 'completed' | 'failed';
  count: number;
  source_id: string;
  source: string;
  detail?: string;
  code?: string;
}

export interface SyncResult {
  source_id: string;
  source: string;
  status: 'synced' | 'unchanged' | 'failed';
  count: number;
  detail: string | null;
  code: string | null;
}

export const DEFAULT_INDEX_LIMITS: IndexLimits = {
  signed: { maxBytes: 32 * 1024 * 1024, timeoutMs: 60_000 },
  index: { maxBytes: 1024 * 1024 * 1024, timeoutMs: 15 * 60_000 },
  maxIndexBytes: 8 * 1024 * 1024 * 1024,
};

/** A sync older than this still marked `syncing` belongs to a process that died. */
const STALE_SYNC_MS = 60 * 60_000;

export interface SyncDeps {
  db: Db;
  sources: SourceStore;
  audit: AuditLog;
  log: Logger;
  dataDir: string;
  limits?: IndexLimits;
  /** Runs once a new catalog generation of a source is committed (given its package count), before the sync reports completion. */
  afterCommit?: (count: number, sourceId: string) => Promise<void>;
  /** Where a synced generation is held in memory for resolution (packed as it is written). */
  resident?: ResidentCatalogs;
}

export class SyncService {
  private readonly running = new Map<string, Promise<SyncResult>>();

  constructor(private readonly deps: SyncDeps) {}

  /** Syncs one source; a sync of the same source already under way is joined, not repeated. */
  async sync(sourceId: string, user: string | null, onEvent: (event: SyncEvent) => void = () => undefined): Promise<SyncResult> {
    const source = await this.deps.sources.get(sourceId);
    const existing = this.running.get(sourceId);
    if (existing) return existing;
    const task = this.run(source, user, onEvent).finally(() => this.running.delete(sourceId));
    this.running.set(sourceId, task);
    return task;
  }

  /** Syncs every source in turn; one failing does not stop the others. */
  async syncAll(user: string | null): Promise<SyncResult[]> {
    const results: SyncResult[] = [];
    for (const source of await this.deps.sources.list()) {
      try {
        results.push(await this.sync(source.id, user));
      } catch (error) {
        const { detail, code } = describe(error);
        results.push({ source_id: source.id, source: source.name, status: 'failed', count: 0, detail, code });
      }
    }
    return results;
  }

  private async run(source: StoredSource, user: string | null, onEvent: (event: SyncEvent) => void): Promise<SyncResult> {
    const { db, audit } = this.deps;
    const emit = (status: SyncEvent['status'], count: number, extra: Partial<SyncEvent> = {}) =>
      onEvent({ status, count, source_id: source.id, source: source.name, ...extra });
    const state = await this.deps.sources.state(source.id);
    await this.claim(source.id);
    emit('started', Number(state.count));
    let writer: CatalogWriter | null = null;
    try {
      const hasCatalog = Number(state.generation) > 0 && state.index_digest !== null;
      const index = await fetchSignedIndex(
        source,
        hasCatalog ? { etag: state.etag, lastModified: state.last_modified } : { etag: null, lastModified: null },
        this.deps.limits ?? DEFAULT_INDEX_LIMITS,
        join(this.deps.dataDir, 'tmp'),
      );
      if (index.unchanged304 || (hasCatalog && index.digest === state.index_digest)) {
        const count = Number(state.count);
        await recordSyncUnchanged(db, source.id, isoUtc(), { etag: index.etag ?? state.etag, lastModified: index.lastModified ?? state.last_modified });
        await audit.record({ action: 'SYNC', user, result: 'SUCCESS', detail: `source ${source.name}: signed index unchanged, ${count} packages` });
        emit('unchanged', count);
        return { source_id: source.id, source: source.name, status: 'unchanged', count, detail: null, code: null };
      }
      emit('verified', 0);
      const w = await CatalogWriter.begin(db, source.id, Number(state.generation), (generation) => this.deps.resident?.packer(source.id, generation) ?? null);
      writer = w;
      let reported = 0;
      await index.read(async (entry) => {
        await w.add(entry);
        if (w.count - reported >= 1000) {
          reported = w.count;
          emit('reading', w.count);
        }
      });
      await w.commit({ indexDigest: index.digest, etag: index.etag, lastModified: index.lastModified });
      // The catalog is in: what follows only prepares for reading it and cannot fail the sync.
      await this.deps.afterCommit?.(w.count, source.id).catch((err: unknown) => this.deps.log.warn({ err, source: source.name }, 'after-sync step failed'));
      await audit.record({ action: 'SYNC', user, result: 'SUCCESS', detail: `source ${source.name}: ${w.count} packages from the signed index` });
      emit('completed', w.count);
      return { source_id: source.id, source: source.name, status: 'synced', count: w.count, detail: null, code: null };
    } catch (error) {
      const { detail, code } = describe(error);
      if (!(error instanceof DomainError)) this.deps.log.error({ err: error, source: source.name }, 'import sync failed');
      await writer?.abort().catch((err: unknown) => this.deps.log.warn({ err }, 'could not drop a failed sync generation'));
      await recordSyncFailure(db, source.id, isoUtc(), detail);
      await audit.record({ action: 'SYNC', user, result: 'FAILURE', detail: `source ${source.name}: ${detail}` });
      emit('failed', Number(state.count), { detail, code });
      return { source_id: source.id, source: source.name, status: 'failed', count: Number(state.count), detail, code };
    }
  }

  /** Marks the source as syncing; another replica's live sync of it makes this one wait its turn. */
  private async claim(sourceId: string): Promise<void> {
    const staleBefore = isoUtc(new Date(Date.now() - STALE_SYNC_MS));
    if (!(await claimSourceSync(this.deps.db, sourceId, isoUtc(), staleBefore))) throw new DomainError('conflict', 'sync_in_progress', 'This source is being synchronised by another process');
  }
}

function describe(error: unknown): { detail: string; code: string } {
  if (error instanceof DomainError) return { detail: error.message, code: error.code };
  return { detail: 'internal error while reading the upstream index', code: 'sync_failed' };
}

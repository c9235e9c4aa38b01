/**
 * Writes a source's catalog generation by generation (see migration 0007): rows of a sync in
 * progress are invisible until `commit` switches the source to them in one short transaction.
 */
import type { Db } from '../../adapters/db/index.js';
import {
  CATALOG_ROWS_PER_INSERT, dropCatalogGeneration, dropCatalogGenerationsExcept, insertCatalogProvides, insertCatalogRows, refreshCatalogStatistics,
  type NewCatalogProvidesRow, type NewCatalogRow,
} from '../../adapters/db/import-catalog.table.js';
import { recordSyncSuccess } from '../../adapters/db/import-sources.table.js';
import type { CatalogEntry, DebCatalogRelations, RpmCatalogRelations } from '../../domain/imports/catalog.js';
import { parseProvides } from '../../domain/deb/relations.js';
import { isoUtc } from '../../domain/time.js';

export interface CommitInfo {
  indexDigest: string;
  etag: string | null;
  lastModified: string | null;
}

export class CatalogWriter {
  private seq = 0;
  private rows: NewCatalogRow[] = [];
  private provides: NewCatalogProvidesRow[] = [];

  private constructor(
    private readonly db: Db,
    readonly sourceId: string,
    readonly generation: number,
  ) {}

  /** Starts the next generation, first dropping rows a crashed or failed sync left behind. */
  static async begin(db: Db, sourceId: string, current: number): Promise<CatalogWriter> {
    await dropCatalogGenerationsExcept(db, sourceId, current);
    return new CatalogWriter(db, sourceId, current + 1);
  }

  get count(): number {
    return this.seq;
  }

  async add(entry: CatalogEntry): Promise<void> {
    const seq = this.seq++;
    const { sourceId, generation } = this;
    // Rows are written out as plain literals: objects made by spreading `{ ...base }` outlived the
    // young generation's collections and filled the old one with garbage (the sync's peak RSS).
    this.rows.push({
      source_id: sourceId, generation, seq, format: entry.format, name: entry.name, version: entry.version, arch: entry.arch, location: entry.location,
      size: entry.size, sha256: entry.sha256, summary: entry.summary.slice(0, 500), relations: JSON.stringify(entry.relations),
    });
    for (const p of providesOf(entry)) this.provides.push({ source_id: sourceId, generation, seq, kind: p.kind, name: p.name, version: p.version, flags: p.flags });
    if (this.rows.length >= CATALOG_ROWS_PER_INSERT || this.provides.length >= CATALOG_ROWS_PER_INSERT * 2) await this.flush();
  }

  async flush(): Promise<void> {
    const rows = this.rows;
    const provides = this.provides;
    this.rows = [];
    this.provides = [];
    await insertCatalogRows(this.db, rows);
    await insertCatalogProvides(this.db, provides);
  }

  /** Makes this generation the catalog and drops the previous one, atomically. */
  async commit(info: CommitInfo): Promise<void> {
    await this.flush();
    const now = isoUtc();
    await this.db.transaction().execute(async (trx) => {
      await recordSyncSuccess(trx, this.sourceId, now, {
        generation: this.generation, count: this.seq, indexDigest: info.indexDigest, etag: info.etag, lastModified: info.lastModified,
      });
      await dropCatalogGenerationsExcept(trx, this.sourceId, this.generation);
    });
    // Statistics only steer the planner: without fresh ones the catalog is slow to read, not wrong.
    await refreshCatalogStatistics(this.db).catch(() => undefined);
  }

  /** Drops what this generation wrote; the previous catalog was never touched. */
  async abort(): Promise<void> {
    this.rows = [];
    this.provides = [];
    await dropCatalogGeneration(this.db, this.sourceId, this.generation);
  }
}

/** Names a catalog package answers to besides its own: Provides, and (RPM) the files primary lists. */
function providesOf(entry: CatalogEntry): Array<Pick<NewCatalogProvidesRow, 'kind' | 'name' | 'version' | 'flags'>> {
  if (entry.format === 'deb') {
    const rel = entry.relations as DebCatalogRelations;
    try {
      return parseProvides(rel.provides).map((p) => ({ kind: 'provides', name: p.name, version: p.version, flags: null }));
    } catch {
      // An upstream stanza with a Provides we cannot read provides nothing, as apt would skip it.
      return [];
    }
  }
  const rel = entry.relations as RpmCatalogRelations;
  return [
    ...rel.provides.filter((p) => p.name !== entry.name || p.evr === '').map((p) => ({ kind: 'provides', name: p.name, version: p.evr || null, flags: p.flags })),
    ...rel.files.map((f) => ({ kind: 'file', name: f, version: null, flags: null })),
  ];
}

/**
 * Writes a source's catalog generation by generation (see migration 0007): rows of a sync in
 * progress are invisible until `commit` switches the source to them in one short transaction.
 */
import type { Db } from '../../adapters/db/index.js';
import {
  appendCatalogProvidesRow, appendCatalogRow, CATALOG_ROWS_PER_INSERT, columnsOf, dropCatalogGeneration, dropCatalogGenerationsExcept,
  insertCatalogValues, refreshCatalogStatistics,
} from '../../adapters/db/import-catalog.table.js';
import { recordSyncSuccess } from '../../adapters/db/import-sources.table.js';
import { forEachProvidedName, type CatalogEntry } from '../../domain/imports/catalog.js';
import { isoUtc } from '../../domain/time.js';
import type { CatalogPacker } from './resident-catalogs.js';

export interface CommitInfo {
  indexDigest: string;
  etag: string | null;
  lastModified: string | null;
}

/** Bind values waiting when rows are written out: CATALOG_ROWS_PER_INSERT catalog rows, or twice as many provides rows. */
const CATALOG_VALUES = CATALOG_ROWS_PER_INSERT * columnsOf('import_catalog');
const PROVIDES_VALUES = 2 * CATALOG_ROWS_PER_INSERT * columnsOf('import_catalog_provides');

export class CatalogWriter {
  private seq = 0;
  /**
   * Rows waiting to be written, as flat bind values: no object per row (objects spread from a
   * shared base outlived young-generation GCs and filled the old one with garbage).
   */
  private rows: unknown[] = [];
  private provides: unknown[] = [];

  private constructor(
    private readonly db: Db,
    readonly sourceId: string,
    readonly generation: number,
    /** Packs the rows for the resolver as they are written (resident-catalogs.ts); finished on commit. */
    private readonly packer: CatalogPacker | null,
  ) {}

  /**
   * Starts the next generation, first dropping rows a crashed or failed sync left behind.
   * `packerFor`: what packs the generation in memory as it is written, if anything does.
   */
  static async begin(db: Db, sourceId: string, current: number, packerFor?: (generation: number) => CatalogPacker | null): Promise<CatalogWriter> {
    await dropCatalogGenerationsExcept(db, sourceId, current);
    return new CatalogWriter(db, sourceId, current + 1, packerFor?.(current + 1) ?? null);
  }

  get count(): number {
    return this.seq;
  }

  async add(entry: CatalogEntry): Promise<void> {
    const seq = this.seq++;
    const { sourceId, generation, packer } = this;
    const summary = entry.summary.slice(0, 500);
    const relations = JSON.stringify(entry.relations);
    appendCatalogRow(
      this.rows, sourceId, generation, seq, entry.format, entry.name, entry.version, entry.arch, entry.location, entry.size, entry.sha256, summary, relations,
    );
    packer?.add(seq, entry.format, entry.name, entry.version, entry.arch, entry.location, entry.size, entry.sha256, summary, relations);
    forEachProvidedName(entry, (kind, name, version, flags) => {
      appendCatalogProvidesRow(this.provides, sourceId, generation, seq, kind, name, version, flags);
      packer?.addProvided(seq, name, version, flags);
    });
    if (this.rows.length >= CATALOG_VALUES || this.provides.length >= PROVIDES_VALUES) await this.flush();
  }

  async flush(): Promise<void> {
    const rows = this.rows;
    const provides = this.provides;
    this.rows = [];
    this.provides = [];
    await insertCatalogValues(this.db, 'import_catalog', rows);
    await insertCatalogValues(this.db, 'import_catalog_provides', provides);
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
    this.packer?.finish();
    // Statistics only steer the planner: without fresh ones the catalog is slow to read, not wrong.
    await refreshCatalogStatistics(this.db).catch(() => undefined);
  }

  /** Drops what this generation wrote; the previous catalog was never touched. */
  async abort(): Promise<void> {
    this.packer?.abandon();
    this.rows = [];
    this.provides = [];
    await dropCatalogGeneration(this.db, this.sourceId, this.generation);
  }
}

/**
 * Writes a source's catalog generation by generation (see migration 0007): rows of a sync in
 * progress are invisible until `commit` switches the source to them in one short transaction.
 */
import type { Db } from '../../adapters/db/index.js';
import type { ImportCatalogProvidesTable, ImportCatalogTable } from '../../adapters/db/import-schema.js';
import type { CatalogEntry, DebCatalogRelations, RpmCatalogRelations } from '../../domain/imports/catalog.js';
import { parseProvides } from '../../domain/deb/relations.js';
import { isoUtc } from '../../domain/time.js';

const ROWS_PER_INSERT = 400;

export interface CommitInfo {
  indexDigest: string;
  etag: string | null;
  lastModified: string | null;
}

export class CatalogWriter {
  private seq = 0;
  private rows: ImportCatalogTable[] = [];
  private provides: ImportCatalogProvidesTable[] = [];

  private constructor(
    private readonly db: Db,
    readonly sourceId: string,
    readonly generation: number,
  ) {}

  /** Starts the next generation, first dropping rows a crashed or failed sync left behind. */
  static async begin(db: Db, sourceId: string, current: number): Promise<CatalogWriter> {
    await db.deleteFrom('import_catalog_provides').where('source_id', '=', sourceId).where('generation', '!=', current).execute();
    await db.deleteFrom('import_catalog').where('source_id', '=', sourceId).where('generation', '!=', current).execute();
    return new CatalogWriter(db, sourceId, current + 1);
  }

  get count(): number {
    return this.seq;
  }

  async add(entry: CatalogEntry): Promise<void> {
    const seq = this.seq++;
    const base = { source_id: this.sourceId, generation: this.generation, seq };
    this.rows.push({
      ...base, format: entry.format, name: entry.name, version: entry.version, arch: entry.arch, location: entry.location,
      size: entry.size, sha256: entry.sha256, summary: entry.summary.slice(0, 500), relations: JSON.stringify(entry.relations),
    });
    for (const p of providesOf(entry)) this.provides.push({ ...base, ...p });
    if (this.rows.length >= ROWS_PER_INSERT || this.provides.length >= ROWS_PER_INSERT * 2) await this.flush();
  }

  async flush(): Promise<void> {
    const rows = this.rows;
    const provides = this.provides;
    this.rows = [];
    this.provides = [];
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await this.db.insertInto('import_catalog').values(rows.slice(i, i + ROWS_PER_INSERT)).execute();
    for (let i = 0; i < provides.length; i += ROWS_PER_INSERT) await this.db.insertInto('import_catalog_provides').values(provides.slice(i, i + ROWS_PER_INSERT)).execute();
  }

  /** Makes this generation the catalog and drops the previous one, atomically. */
  async commit(info: CommitInfo): Promise<void> {
    await this.flush();
    const now = isoUtc();
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('import_sync_state').set({
        status: 'success', generation: this.generation, index_digest: info.indexDigest, etag: info.etag, last_modified: info.lastModified,
        last_sync_at: now, last_success_at: now, last_error: null, count: this.seq,
      }).where('source_id', '=', this.sourceId).execute();
      await trx.deleteFrom('import_catalog_provides').where('source_id', '=', this.sourceId).where('generation', '!=', this.generation).execute();
      await trx.deleteFrom('import_catalog').where('source_id', '=', this.sourceId).where('generation', '!=', this.generation).execute();
    });
  }

  /** Drops what this generation wrote; the previous catalog was never touched. */
  async abort(): Promise<void> {
    this.rows = [];
    this.provides = [];
    await this.db.deleteFrom('import_catalog_provides').where('source_id', '=', this.sourceId).where('generation', '=', this.generation).execute();
    await this.db.deleteFrom('import_catalog').where('source_id', '=', this.sourceId).where('generation', '=', this.generation).execute();
  }
}

/** Names a catalog package answers to besides its own: Provides, and (RPM) the files primary lists. */
function providesOf(entry: CatalogEntry): Array<Pick<ImportCatalogProvidesTable, 'kind' | 'name' | 'version' | 'flags'>> {
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

/** Per-source generation in use, for readers. */
export async function currentGenerations(db: Db, sourceIds?: string[]): Promise<Map<string, number>> {
  let query = db.selectFrom('import_sync_state').select(['source_id', 'generation']).where('generation', '>', 0);
  if (sourceIds) query = query.where('source_id', 'in', sourceIds.length ? sourceIds : ['']);
  const rows = await query.execute();
  return new Map(rows.map((r) => [r.source_id, Number(r.generation)]));
}


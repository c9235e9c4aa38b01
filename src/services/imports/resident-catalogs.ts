/**
 * The current catalog generations held in memory for dependency resolution (domain/imports/
 * packed-catalog.ts), within a memory budget. The database stays the source of truth: a sync
 * packs the rows it writes, held once they are committed; at start-up, and when another replica
 * synced (a generation this one does not hold), the rows are read back in the background. Until a
 * generation is held (or when it does not fit the budget, or packing it failed) resolutions read
 * the database. A generation never changes once committed, so a packed one answers exactly what
 * the database would.
 */
import { setImmediate } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db } from '../../adapters/db/index.js';
import { catalogPackagesFrom, catalogProvidedAfter } from '../../adapters/db/import-catalog.table.js';
import { PackedCatalogBuilder, type CatalogRecord, type PackedCatalog } from '../../domain/imports/packed-catalog.js';

/** Rows per read while packing: a few milliseconds of the event loop each (SQLite reads synchronously). */
const PAGE_ROWS = 2_000;

interface Held {
  generation: number;
  catalog: PackedCatalog;
}

export class ResidentCatalogs {
  private readonly held = new Map<string, Held>();
  private readonly packing = new Map<string, Promise<PackedCatalog | null>>();
  /** `source generation` pairs over the budget, empty, or whose packing failed: not tried again. */
  private readonly refused = new Set<string>();
  /**
   * Packers under way. What they have packed so far counts against the budget: two syncs at once
   * (or a sync while another replica's generation is read back) each saw the whole room, and both
   * were held, the budget exceeded by up to its size.
   */
  private readonly packers = new Set<CatalogPacker>();

  private readonly budget: number;
  private readonly log?: Logger;
  private readonly pageRows: number;

  /** `budget`: bytes all the held catalogs may take together (0 holds none); `pageRows`: rows per read when packing from the database. */
  constructor(
    private readonly db: Db,
    options: { budget: number; log?: Logger; pageRows?: number },
  ) {
    this.budget = options.budget;
    this.log = options.log;
    this.pageRows = options.pageRows ?? PAGE_ROWS;
  }

  /** The source's generation if held; else undefined, and it is packed in the background for the next resolutions. */
  get(sourceId: string, generation: number): PackedCatalog | undefined {
    const held = this.held.get(sourceId);
    if (held?.generation === generation) return held.catalog;
    void this.load(sourceId, generation);
    return undefined;
  }

  /** Packs the source's generation unless held, packing or refused; resolves to it, or null when it cannot be held. */
  load(sourceId: string, generation: number): Promise<PackedCatalog | null> {
    const held = this.held.get(sourceId);
    if (held?.generation === generation) return Promise.resolve(held.catalog);
    const key = `${sourceId} ${generation}`;
    if (this.budget <= 0 || this.refused.has(key)) return Promise.resolve(null);
    let packing = this.packing.get(key);
    if (!packing) {
      packing = this.pack(sourceId, generation)
        .catch((err: unknown) => {
          this.refused.add(key);
          this.log?.warn({ err, sourceId, generation }, 'import catalog not held in memory: packing it failed');
          return null;
        })
        .finally(() => this.packing.delete(key));
      this.packing.set(key, packing);
    }
    return packing;
  }

  /** Drops what is held of sources not in `live` (deleted ones). */
  keepOnly(live: Iterable<string>): void {
    const keep = new Set(live);
    for (const id of this.held.keys()) if (!keep.has(id)) this.held.delete(id);
  }

  /** Bytes held now. */
  get bytes(): number {
    let total = 0;
    for (const { catalog } of this.held.values()) total += catalog.bytes;
    return total;
  }

  /**
   * A packer for the source's generation being written (a sync packs the rows it writes, instead
   * of reading them back), or null when nothing is held. `finish` it once the generation is committed.
   */
  packer(sourceId: string, generation: number): CatalogPacker | null {
    if (this.budget <= 0) return null;
    const packer: CatalogPacker = new CatalogPacker({
      room: () => this.roomFor(sourceId, packer),
      hold: (catalog) => this.hold(sourceId, generation, catalog),
      refuse: (reason) => {
        this.refused.add(`${sourceId} ${generation}`);
        this.log?.info({ sourceId, generation, budget: this.budget }, `import catalog not held in memory: ${reason}`);
      },
      release: () => this.packers.delete(packer),
    });
    this.packers.add(packer);
    return packer;
  }

  /** The bytes `packer` may fill: the budget less what is held and what the other packers hold so far. */
  private roomFor(sourceId: string, packer: CatalogPacker): number {
    let others = 0;
    for (const p of this.packers) if (p !== packer) others += p.bytes;
    // The source's older generation, if held, is replaced by this one: it does not count against it.
    return this.budget - this.bytes + (this.held.get(sourceId)?.catalog.bytes ?? 0) - others;
  }

  private hold(sourceId: string, generation: number, catalog: PackedCatalog): void {
    // A newer generation packed meanwhile (two syncs in a row) stays.
    const current = this.held.get(sourceId);
    if (!current || current.generation < generation) this.held.set(sourceId, { generation, catalog });
  }

  /** Packs a committed generation from its rows. */
  private async pack(sourceId: string, generation: number): Promise<PackedCatalog | null> {
    const started = performance.now();
    const packer = this.packer(sourceId, generation)!;
    try {
      for (let from = 0; ;) {
        const rows = await catalogPackagesFrom(this.db, sourceId, generation, from, this.pageRows);
        for (const row of rows) packer.addPackage(row);
        if (packer.abandoned) return null;
        if (rows.length < this.pageRows) break;
        from += rows.length;
        await setImmediate(); // requests run between two reads
      }
      for (let after: { name: string; seq: number } | null = null; ;) {
        const rows = await catalogProvidedAfter(this.db, sourceId, generation, after, this.pageRows);
        if (rows.length === 0) break;
        for (const row of rows) packer.addProvided(row.seq, row.name, row.version, row.flags === null ? null : Number(row.flags));
        if (packer.abandoned) return null;
        const last = rows[rows.length - 1]!;
        after = { name: last.name, seq: last.seq };
        await setImmediate(); // requests run between two reads
      }
    } catch (error) {
      // What it packed stops counting against the budget.
      packer.abandon();
      throw error;
    }
    const catalog = packer.finish();
    if (catalog) this.log?.info({ sourceId, generation, packages: catalog.packages, mib: Math.round(catalog.bytes / 2 ** 20), ms: Math.round(performance.now() - started) }, 'import catalog held in memory');
    return catalog;
  }
}

interface PackerOwner {
  /** Bytes this packer may take now (the others under way take theirs as they grow). */
  room(): number;
  hold(catalog: PackedCatalog): void;
  refuse(reason: string): void;
  /** The packer holds nothing any more: finished, abandoned or over its room. */
  release(): void;
}

/** Packs one generation of a source's catalog, and gives up (for good) once it outgrows its room in the budget. */
export class CatalogPacker {
  private builder: PackedCatalogBuilder | null = new PackedCatalogBuilder();

  constructor(private readonly owner: PackerOwner) {}

  get abandoned(): boolean {
    return this.builder === null;
  }

  /** What it has packed so far. */
  get bytes(): number {
    return this.builder?.bytes ?? 0;
  }

  addPackage(record: CatalogRecord): void {
    this.builder?.addPackage(record);
    this.checkRoom();
  }

  /** addPackage with the record's fields as arguments. */
  add(seq: number, format: string, name: string, version: string, arch: string, location: string, size: number, sha256: string, summary: string, relations: string): void {
    this.builder?.add(seq, format, name, version, arch, location, size, sha256, summary, relations);
    this.checkRoom();
  }

  addProvided(seq: number, name: string, version: string | null, flags: number | null): void {
    this.builder?.addProvided(seq, name, version, flags);
    this.checkRoom();
  }

  /** Holds the packed generation; null when abandoned or empty. */
  finish(): PackedCatalog | null {
    const builder = this.builder;
    if (!builder) return null;
    this.drop();
    if (builder.packages === 0) {
      this.owner.refuse('empty');
      return null;
    }
    const catalog = builder.finish();
    if (catalog.bytes > this.owner.room()) {
      this.owner.refuse('over IMPORT_CATALOG_MEMORY_MB');
      return null;
    }
    this.owner.hold(catalog);
    return catalog;
  }

  /** Drops what was packed (the generation was not committed). */
  abandon(): void {
    if (this.builder) this.drop();
  }

  private drop(): void {
    this.builder = null;
    this.owner.release();
  }

  private checkRoom(): void {
    if (this.builder && this.builder.bytes > this.owner.room()) {
      this.drop();
      this.owner.refuse('over IMPORT_CATALOG_MEMORY_MB');
    }
  }
}

/**
 * Inventories are computed lazily — on the first SBOM that includes a file — and cached by
 * SHA-256 in `sbom_inventory`, rather than at upload: the upload pipeline stays as it is (and
 * as fast), files uploaded before this feature are covered, and a cataloguer improvement only
 * needs `SCANNER_VERSION` bumped to recompute. The cost lands on the first export instead.
 */
import type { Db } from '../../adapters/db/index.js';
import { findCachedInventories, saveInventory } from '../../adapters/db/sbom.table.js';
import type { PackageInventory } from '../../domain/sbom/model.js';
import type { PackageFiles } from '../../adapters/storage/interfaces.js';
import { isoUtc } from '../../domain/time.js';
import { catalogue } from './payload.js';

export const SCANNER_VERSION = 1;

interface InventoryRow {
  format: string;
  name: string;
  sha256: string;
  metadata: string;
}

export class InventoryStore {
  constructor(private readonly db: Db, private readonly files: PackageFiles) {}

  /** The inventories of these rows' files, computing (and caching) the missing ones. */
  async forRows(rows: readonly InventoryRow[]): Promise<Map<string, PackageInventory>> {
    const out = new Map<string, PackageInventory>();
    const shas = [...new Set(rows.map((r) => r.sha256))];
    if (shas.length === 0) return out;
    const cached = await findCachedInventories(this.db, shas, SCANNER_VERSION);
    for (const row of cached) out.set(row.sha256, JSON.parse(row.data) as PackageInventory);
    for (const row of rows) {
      if (out.has(row.sha256)) continue;
      out.set(row.sha256, await this.compute(row));
    }
    return out;
  }

  /**
   * The inventories of a page's rows, from the cached JSON the page query joined (`cached`, by
   * row); files not cached yet are computed (once per file) and cached.
   */
  async forPage<R extends InventoryRow>(rows: readonly R[], cached: (row: R) => string | null): Promise<Array<PackageInventory>> {
    const computed = new Map<string, PackageInventory>();
    const out: PackageInventory[] = [];
    for (const row of rows) {
      const data = cached(row);
      if (data !== null) {
        out.push(JSON.parse(data) as PackageInventory);
        continue;
      }
      let inventory = computed.get(row.sha256);
      if (!inventory) computed.set(row.sha256, (inventory = await this.compute(row)));
      out.push(inventory);
    }
    return out;
  }

  private async compute(row: InventoryRow): Promise<PackageInventory> {
    // A file missing from the store (rows restored without their files) is reported, not cached.
    if (!(await this.files.has(row.sha256))) return { components: [], copyrightLicense: null, error: 'package file not in the store' };
    const inventory = await catalogue(this.files.storedPath(row.sha256), { format: row.format, name: row.name, metadata: JSON.parse(row.metadata) as Record<string, unknown> });
    await saveInventory(this.db, { sha256: row.sha256, scanner: SCANNER_VERSION, data: JSON.stringify(inventory), created_at: isoUtc() });
    return inventory;
  }
}

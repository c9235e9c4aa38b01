import type { Db } from './index.js';

/** The catalog generation: grows with every committed change the listings count, order or show (migrations 0015, 0016). */
export async function readCatalogGeneration(db: Db): Promise<number> {
  const row = await db.selectFrom('catalog_generation').select('generation').where('id', '=', 1).executeTakeFirst();
  return Number(row?.generation ?? 0);
}

import type { Db } from './index.js';

/** The catalog generation (migration 0015): grows with every committed change the listings count or order. */
export async function readCatalogGeneration(db: Db): Promise<number> {
  const row = await db.selectFrom('catalog_generation').select('generation').where('id', '=', 1).executeTakeFirst();
  return Number(row?.generation ?? 0);
}

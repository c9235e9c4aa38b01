/** Claims on upstream files being imported, shared by every replica through the database. */
import type { Db } from './index.js';

/**
 * Takes the claim on `key` for `holder` until `expiresAt`: true when it was free, had lapsed, or
 * is already this holder's. One statement each way, so two replicas cannot both take it.
 */
export async function takeImportClaim(db: Db, key: string, holder: string, now: string, expiresAt: string): Promise<boolean> {
  const inserted = await db.insertInto('import_claims').values({ key, holder, expires_at: expiresAt }).onConflict((oc) => oc.column('key').doNothing()).executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return true;
  const taken = await db
    .updateTable('import_claims')
    .set({ holder, expires_at: expiresAt })
    .where('key', '=', key)
    .where((eb) => eb.or([eb('expires_at', '<', now), eb('holder', '=', holder)]))
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) > 0;
}

export async function releaseImportClaim(db: Db, key: string, holder: string): Promise<void> {
  await db.deleteFrom('import_claims').where('key', '=', key).where('holder', '=', holder).execute();
}

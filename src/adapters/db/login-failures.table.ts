import type { Db } from './index.js';

/** The times of the account's latest failures after `since`, newest first, at most `limit`. */
export async function latestLoginFailures(db: Db, canonicalName: string, since: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('login_failures')
    .select('at')
    .where('username', '=', canonicalName)
    .where('at', '>', since)
    .orderBy('at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.at);
}

export async function insertLoginFailure(db: Db, canonicalName: string, at: string): Promise<void> {
  await db.insertInto('login_failures').values({ username: canonicalName, at }).execute();
}

export async function clearLoginFailures(db: Db, canonicalName: string): Promise<void> {
  await db.deleteFrom('login_failures').where('username', '=', canonicalName).execute();
}

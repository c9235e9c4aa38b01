import type { Insertable, Selectable } from 'kysely';
import type { Db } from './index.js';
import type { ApiTokensTable } from './schema.js';

export type ApiTokenRow = Selectable<ApiTokensTable>;
export type NewApiTokenRow = Insertable<ApiTokensTable>;

export async function insertApiToken(db: Db, row: NewApiTokenRow): Promise<void> {
  await db.insertInto('api_tokens').values(row).execute();
}

/** Unrevoked tokens with their owner's name, oldest first; only `ownerId`'s when given. */
export function listUnrevokedApiTokens(db: Db, ownerId?: string): Promise<Array<ApiTokenRow & { username: string }>> {
  let q = db
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.id', 'api_tokens.user_id')
    .selectAll('api_tokens')
    .select('users.username as username')
    .where('api_tokens.revoked_at', 'is', null)
    .orderBy('api_tokens.created_at');
  if (ownerId !== undefined) q = q.where('api_tokens.user_id', '=', ownerId);
  return q.execute();
}

export function findApiTokenById(db: Db, id: string): Promise<ApiTokenRow | undefined> {
  return db.selectFrom('api_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findApiTokenByDigest(db: Db, digest: string): Promise<ApiTokenRow | undefined> {
  return db.selectFrom('api_tokens').selectAll().where('token_hash', '=', digest).executeTakeFirst();
}

export async function revokeApiToken(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('api_tokens').set({ revoked_at: at }).where('id', '=', id).execute();
}

export async function touchApiToken(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', id).execute();
}

/** The ids of every token `userId` has made, revoked ones included. */
export async function findApiTokenIdsOf(db: Db, userId: string): Promise<string[]> {
  return (await db.selectFrom('api_tokens').select('id').where('user_id', '=', userId).execute()).map((r) => r.id);
}

/** The given tokens' names and kinds with their owner's name (deleted tokens are simply absent). */
export function describeApiTokens(db: Db, ids: readonly string[]): Promise<Array<Pick<ApiTokenRow, 'id' | 'name' | 'kind'> & { username: string }>> {
  return db
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.id', 'api_tokens.user_id')
    .select(['api_tokens.id', 'api_tokens.name', 'api_tokens.kind', 'users.username'])
    .where('api_tokens.id', 'in', ids)
    .execute();
}

import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Role } from '../../domain/roles.js';
import type { Db } from './index.js';
import type { UsersTable } from './schema.js';

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserPatch = Updateable<UsersTable>;

/** The account whose lower-cased name is `canonicalName` (the index of migration 0005 serves `lower(username)`). */
export function findUserByCanonicalName(db: Db, canonicalName: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['username']), '=', canonicalName))
    .executeTakeFirst();
}

export function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findActiveUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).where('is_active', '=', 1).executeTakeFirst();
}

export function listUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('username').execute();
}

export async function countUsersWithRole(db: Db, role: Role): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('role', '=', role)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function insertUser(db: Db, row: NewUserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export async function updateUser(db: Db, id: string, patch: UserPatch): Promise<void> {
  await db.updateTable('users').set(patch).where('id', '=', id).execute();
}

/** Bumping token_version is what invalidates every JWT issued before, so it is done in the same statement. */
export async function setUserPasswordHash(db: Db, id: string, hash: string, at: string): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ password_hash: hash, token_version: eb('token_version', '+', 1), updated_at: at }))
    .where('id', '=', id)
    .execute();
}

/** Earlier JWTs carry the old token_version and are refused from now on. */
export async function bumpUserTokenVersion(db: Db, id: string, at: string): Promise<void> {
  await db
    .updateTable('users')
    .set((eb) => ({ token_version: eb('token_version', '+', 1), updated_at: at }))
    .where('id', '=', id)
    .execute();
}

export async function deleteUser(db: Db, id: string): Promise<void> {
  await db.deleteFrom('users').where('id', '=', id).execute();
}

import type { Insertable } from 'kysely';
import type { Db } from './index.js';
import type { PasswordResetTokensTable } from './schema.js';

export async function insertResetToken(db: Db, row: Insertable<PasswordResetTokensTable>): Promise<void> {
  await db.insertInto('password_reset_tokens').values(row).execute();
}

/**
 * Marks the token used if it is unused and unexpired at `now`, and answers its account's id;
 * null when it was not. One conditional UPDATE, so of two callers racing with one token exactly
 * one gets the id: run it in the transaction that changes the password.
 */
export async function consumeResetToken(db: Db, tokenHash: string, now: string): Promise<string | null> {
  const claimed = await db
    .updateTable('password_reset_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst();
  return claimed?.user_id ?? null;
}

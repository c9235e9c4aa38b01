import { sql, type Kysely } from 'kysely';

/**
 * User names unique without regard to case: `Admin` and `admin` were two accounts, and
 * a directory login reached one account under many spellings. Lookups compare `lower(username)`,
 * which this index also serves.
 *
 * Names are ASCII (the API's user-name pattern) or, for directory accounts, stored lower-cased,
 * so SQLite's ASCII-only lower() and PostgreSQL's agree on every stored name.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const clashes = await sql<{ id: string; username: string; source: string }>`
    select id, username, source from users
    where lower(username) in (select lower(username) from users group by lower(username) having count(*) > 1)
    order by lower(username), username`.execute(db);
  if (clashes.rows.length > 0) {
    // Merging accounts would mix two people's tokens and audit history: only an operator can
    // decide which one keeps the name, so the upgrade stops and says what to rename.
    const list = clashes.rows.map((r) => `'${r.username}' (id ${r.id}, ${r.source})`).join(', ');
    throw new Error(
      `user names must be unique without regard to case, and these accounts differ only by case: ${list}. ` +
        `Rename or delete all but one of each group in the users table (e.g. UPDATE users SET username = 'admin-old' WHERE id = '<id>'), then start Tollgate again`,
    );
  }
  await db.schema.createIndex('users_username_lower').on('users').unique().expression(sql`lower(username)`).execute();
  // Failures recorded under another spelling count toward the same lock from now on.
  await sql`update login_failures set username = lower(username)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('users_username_lower').execute();
}

import { sql, type Insertable } from 'kysely';
import type { Db } from './index.js';
import type { AuditIndexTable } from './schema.js';

export interface AuditFilter {
  package?: string;
  action?: string;
  result?: string;
  user?: string;
  /** Free text over package, user and detail. */
  q?: string;
}

/** A row of the audit index as the API names its fields (`user`, not the column `username`). */
export type AuditIndexEntry = Omit<AuditIndexTable, 'username'> & { user: string | null };

/** `like` pattern with the wildcard characters of the user's text escaped. */
const containing = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** A page of the audit index, newest first, and how many entries match. */
export async function findAuditEntries(db: Db, filter: AuditFilter, page: { page: number; perPage: number }): Promise<{ items: AuditIndexEntry[]; total: number }> {
  let q = db.selectFrom('audit_index');
  if (filter.package) q = q.where('package', '=', filter.package);
  if (filter.action) q = q.where('action', '=', filter.action.toUpperCase());
  if (filter.result) q = q.where('result', '=', filter.result);
  if (filter.user) q = q.where('username', '=', filter.user);
  if (filter.q) {
    const pattern = containing(filter.q);
    q = q.where((eb) => eb.or(['package', 'username', 'detail'].map((col) => eb(sql`lower(${sql.ref(col)})`, 'like', sql`${pattern} escape '\\'`))));
  }
  const total = Number((await q.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n ?? 0);
  const rows = await q.selectAll().orderBy('seq', 'desc').limit(page.perPage).offset((page.page - 1) * page.perPage).execute();
  return { total, items: rows.map(({ username, ...r }) => ({ ...r, seq: Number(r.seq), user: username })) };
}

/** Adds entries to the index in one statement (one commit); an entry already there (same seq) is left as it is. */
export async function insertAuditIndexEntries(db: Db, rows: ReadonlyArray<Insertable<AuditIndexTable>>): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('audit_index').values([...rows]).onConflict((oc) => oc.column('seq').doNothing()).execute();
}

/** The highest seq in the index, 0 when it is empty. */
export async function maxAuditIndexSeq(db: Db): Promise<number> {
  const row = await db.selectFrom('audit_index').select((eb) => eb.fn.max('seq').as('max')).executeTakeFirst();
  return Number(row?.max ?? 0);
}

/** Removes the entries up to and including `seq` (those of the audit files retention removed). */
export async function deleteAuditIndexUpTo(db: Db, seq: number): Promise<void> {
  await db.deleteFrom('audit_index').where('seq', '<=', seq).execute();
}

/**
 * Runs `append` holding a PostgreSQL advisory lock that every replica's audit appends share, so
 * they extend one chain in turn (released when the transaction ends, even if the process dies).
 */
export async function withAuditAppendLock<T>(db: Db, append: () => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('tollgate:audit-append'))`.execute(trx);
    return append();
  });
}

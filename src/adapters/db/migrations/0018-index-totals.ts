import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * A distribution's index totals: how many of its packages the index lists, and the sum and the
 * sum modulo 65521 of their `seq`. With the highest `seq` they are the fingerprint that tells
 * the publisher whether the index only grew since it last wrote it (then it appends). They were
 * an aggregate over the distribution's rows on every publish: 5.8 ms at 50,000 packages, ~58 ms
 * at 500,000, on the event loop; kept in the distribution's row they are one read.
 *
 * Triggers keep them, so no write path can forget to, and they commit with the row change. On
 * PostgreSQL they are deferred constraint triggers, as the catalog generation's (0015): the
 * distribution row is then locked only as the writing transaction commits, after every other lock
 * it takes, so they add no lock-order inversion (a path that changes a row's place in an index
 * also bumps the distribution's generation in the same transaction, which locks the same row).
 * SQLite has one writer at a time: plain row triggers.
 *
 * The statuses are those of `INDEXED_STATUSES` when this was written; a change to that list needs
 * a migration that recreates the triggers and recomputes the totals
 * (test/adapters/db/index-totals.test.ts compares the totals with the rows for every status).
 */
const INDEXED_LIST = `('published', 'accepted_risk', 'exception')`;
const INDEXED = sql.raw(INDEXED_LIST);
const COLUMNS = ['indexed_count', 'indexed_sum', 'indexed_mod'] as const;

const postgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

/** `update distributions` adding (+) or removing (-) the row `ref` (`new` or `old`) from its distribution's totals. */
const change = (sign: '+' | '-', ref: 'new' | 'old') => sql.raw(
  `update distributions set indexed_count = indexed_count ${sign} 1, indexed_sum = indexed_sum ${sign} ${ref}.seq, ` +
  `indexed_mod = indexed_mod ${sign} (${ref}.seq % 65521) where codename = ${ref}.distribution`,
);

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) {
    await db.schema.alterTable('distributions').addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  }
  const indexed = sql`from packages p where p.distribution = distributions.codename and p.status in ${INDEXED}`;
  await sql`update distributions set
    indexed_count = (select count(*) ${indexed}),
    indexed_sum = coalesce((select sum(p.seq) ${indexed}), 0),
    indexed_mod = coalesce((select sum(p.seq % 65521) ${indexed}), 0)`.execute(db);

  // Only an update that changes whether the row is listed, or where, fires them (from one listed
  // status to another changes nothing here, and takes no lock on the distribution row).
  const moved = sql.raw(
    `(old.status in ${INDEXED_LIST}) <> (new.status in ${INDEXED_LIST}) or ` +
    `(old.status in ${INDEXED_LIST} and (old.seq <> new.seq or old.distribution <> new.distribution))`,
  );
  if (postgres(db)) {
    await sql`
      create function tollgate_index_totals() returns trigger language plpgsql as $$
      begin
        if tg_op <> 'INSERT' then
          if old.status in ${INDEXED} then ${change('-', 'old')}; end if;
        end if;
        if tg_op <> 'DELETE' then
          if new.status in ${INDEXED} then ${change('+', 'new')}; end if;
        end if;
        return null;
      end $$`.execute(db);
    // One trigger per event: a WHEN clause may name OLD or NEW only when every event has it. Their
    // names sort before `packages_catalog_generation` (0015), so at commit a row's change locks the
    // distribution row before the catalog generation's, the order of an upload (which locks the
    // distribution row first); the other order deadlocked against concurrent uploads.
    const deferred = sql.raw('deferrable initially deferred for each row');
    await sql`create constraint trigger index_totals_insert after insert on packages ${deferred}
      when (new.status in ${INDEXED}) execute function tollgate_index_totals()`.execute(db);
    await sql`create constraint trigger index_totals_delete after delete on packages ${deferred}
      when (old.status in ${INDEXED}) execute function tollgate_index_totals()`.execute(db);
    await sql`create constraint trigger index_totals_update after update of status, seq, distribution on packages ${deferred}
      when (${moved}) execute function tollgate_index_totals()`.execute(db);
    return;
  }
  await sql`create trigger index_totals_insert after insert on packages
    when new.status in ${INDEXED} begin ${change('+', 'new')}; end`.execute(db);
  await sql`create trigger index_totals_delete after delete on packages
    when old.status in ${INDEXED} begin ${change('-', 'old')}; end`.execute(db);
  await sql`create trigger index_totals_update after update of status, seq, distribution on packages
    when ${moved} begin
      ${change('-', 'old')} and old.status in ${INDEXED};
      ${change('+', 'new')} and new.status in ${INDEXED};
    end`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const onPackages = sql.raw(postgres(db) ? ' on packages' : '');
  for (const op of ['insert', 'delete', 'update']) await sql`drop trigger if exists ${sql.raw(`index_totals_${op}`)}${onPackages}`.execute(db);
  if (postgres(db)) await sql`drop function if exists tollgate_index_totals()`.execute(db);
  for (const column of COLUMNS) await db.schema.alterTable('distributions').dropColumn(column).execute();
}

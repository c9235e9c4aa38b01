import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The catalog generation: one number that grows with every committed change to what the package
 * listings count and order (a packages row inserted or deleted, or its name, version,
 * distribution, status, findings or SLA deadline changed). The listings' totals (distinct names,
 * search matches) and the review queue's order are computed once per generation and kept by each
 * replica, instead of counting or sorting the whole table on every request (bench/load at 50,000
 * packages: 30-60 ms a request).
 *
 * Triggers bump it, so no write path can forget to, and the bump commits with the write: a reader
 * that reads the generation first and the data after sees at least every change up to that
 * generation, whichever replica made it.
 *
 * PostgreSQL: a deferred constraint trigger, so the counter row is locked only while the writing
 * transaction commits (not from its first packages statement on: concurrent uploads would queue
 * behind each other, and a transaction holding the row while waiting for another lock could
 * deadlock), and once per transaction (bulk writes queue one cheap event per row). SQLite has one
 * writer at a time: plain row triggers.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('catalog_generation')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('generation', 'bigint', (c) => c.notNull())
    // PostgreSQL: the transaction that bumped it last (one bump per transaction).
    .addColumn('bumped_by', 'bigint')
    .execute();
  await sql`insert into catalog_generation (id, generation) values (1, 1)`.execute(db);
  const watched = sql.raw('name, version, distribution, status, findings, sla_deadline');
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      create function tollgate_bump_catalog_generation() returns trigger language plpgsql as $$
      begin
        if current_setting('tollgate.catalog_bumped_by', true) is distinct from txid_current()::text then
          perform set_config('tollgate.catalog_bumped_by', txid_current()::text, true);
          update catalog_generation set generation = generation + 1, bumped_by = txid_current()
            where id = 1 and bumped_by is distinct from txid_current();
        end if;
        return null;
      end $$`.execute(db);
    await sql`
      create constraint trigger packages_catalog_generation
        after insert or delete or update of ${watched} on packages
        deferrable initially deferred for each row execute function tollgate_bump_catalog_generation()`.execute(db);
    return;
  }
  const bump = sql.raw('begin update catalog_generation set generation = generation + 1 where id = 1; end');
  await sql`create trigger packages_catalog_generation_insert after insert on packages ${bump}`.execute(db);
  await sql`create trigger packages_catalog_generation_delete after delete on packages ${bump}`.execute(db);
  await sql`create trigger packages_catalog_generation_update after update of ${watched} on packages ${bump}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop trigger if exists packages_catalog_generation on packages`.execute(db);
    await sql`drop function if exists tollgate_bump_catalog_generation()`.execute(db);
  } else {
    for (const op of ['insert', 'delete', 'update']) await sql`drop trigger if exists ${sql.raw(`packages_catalog_generation_${op}`)}`.execute(db);
  }
  await db.schema.dropTable('catalog_generation').execute();
}

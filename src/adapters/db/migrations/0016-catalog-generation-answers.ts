import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The catalog generation (migration 0015) now grows with every committed change to what the
 * listings show, not only to what they count or order by: the artifact list's, the package
 * search's and the review queue's pages and the artifact pages are kept whole per generation
 * (bench/load: building them again was most of a read's cost). So it also grows when a package's
 * CVE status, reasons, validation record, served file (re-signing) or index entry changes, and
 * when a decision record is written (the review queue shows the decision of each package held for
 * an upgrade). Left out are the columns nothing kept shows: the file list written after admission
 * (`files`, `listed_generation`, which change behind every upload on their own), `metadata` and
 * `relations`.
 */
const SHOWN = [
  'name', 'version', 'distribution', 'status', 'findings', 'sla_deadline', 'cve_status', 'reasons', 'arch', 'format', 'component',
  'sha256', 'size', 'filename', 'pool_path', 'source_name', 'source_version', 'index_entry', 'uploaded_by', 'signed_by', 'seq', 'created_at', 'updated_at', 'pipeline',
];
const WATCHED_0015 = ['name', 'version', 'distribution', 'status', 'findings', 'sla_deadline'];
const BUMP_SQLITE = sql.raw('begin update catalog_generation set generation = generation + 1 where id = 1; end');

const postgres = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof PostgresAdapter;

async function watchPackages(db: Kysely<unknown>, columns: readonly string[]): Promise<void> {
  const watched = sql.raw(columns.join(', '));
  if (postgres(db)) {
    await sql`drop trigger if exists packages_catalog_generation on packages`.execute(db);
    await sql`
      create constraint trigger packages_catalog_generation
        after insert or delete or update of ${watched} on packages
        deferrable initially deferred for each row execute function tollgate_bump_catalog_generation()`.execute(db);
    return;
  }
  await sql`drop trigger if exists packages_catalog_generation_update`.execute(db);
  await sql`create trigger packages_catalog_generation_update after update of ${watched} on packages ${BUMP_SQLITE}`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await watchPackages(db, SHOWN);
  if (postgres(db)) {
    // The same function as for packages: once per transaction, at commit.
    await sql`
      create constraint trigger security_decisions_catalog_generation
        after insert or delete or update on security_decisions
        deferrable initially deferred for each row execute function tollgate_bump_catalog_generation()`.execute(db);
    return;
  }
  for (const op of ['insert', 'delete', 'update']) {
    await sql`create trigger ${sql.raw(`security_decisions_catalog_generation_${op}`)} after ${sql.raw(op)} on security_decisions ${BUMP_SQLITE}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (postgres(db)) {
    await sql`drop trigger if exists security_decisions_catalog_generation on security_decisions`.execute(db);
  } else {
    for (const op of ['insert', 'delete', 'update']) await sql`drop trigger if exists ${sql.raw(`security_decisions_catalog_generation_${op}`)}`.execute(db);
  }
  await watchPackages(db, WATCHED_0015);
}

import { sql, type Kysely } from 'kysely';

/**
 * Download statistics and the indexes the dashboard aggregates need at 50,000 packages.
 *
 * `download_counts` is the source of truth (one row per UTC day and package). The statistics
 * endpoint never aggregates it over a whole window at request time: `download_days` (per day and
 * distribution) and `download_totals` (per package over each fixed window, moved once a day and
 * incremented by every flush) keep those answers to index reads.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // `distribution` is '' when a shared APT pool file is listed by several distributions: a primary
  // key column cannot be NULL, and NULLs would not collide in the upsert's unique key.
  await db.schema
    .createTable('download_counts')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('distribution', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('arch', 'text', (c) => c.notNull())
    .addColumn('downloads', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('download_counts_pk', ['day', 'distribution', 'name', 'version', 'arch'])
    .execute();

  await db.schema
    .createTable('download_days')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('distribution', 'text', (c) => c.notNull())
    .addColumn('downloads', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('download_days_pk', ['day', 'distribution'])
    .execute();

  await db.schema
    .createTable('download_totals')
    .addColumn('days', 'integer', (c) => c.notNull())
    .addColumn('distribution', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('arch', 'text', (c) => c.notNull())
    .addColumn('downloads', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('download_totals_pk', ['days', 'distribution', 'name', 'version', 'arch'])
    .execute();
  // The top-N query reads this index in order and stops after N entries.
  await db.schema
    .createIndex('download_totals_top')
    .on('download_totals')
    .columns(['days', 'downloads desc', 'name', 'version', 'distribution', 'arch'])
    .execute();

  // The UTC day each window in download_totals ends at; '' = never built.
  await db.schema
    .createTable('download_rollups')
    .addColumn('days', 'integer', (c) => c.primaryKey())
    .addColumn('day', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into download_rollups (days, day) values (7, ''), (30, ''), (90, '')`.execute(db);

  // Reverse-proxy logs: how far each file's content (identified by its first line, so a rename or
  // a gzip of the same content resumes instead of counting again) has been counted.
  await db.schema
    .createTable('access_log_files')
    .addColumn('identity', 'text', (c) => c.primaryKey())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('position', 'bigint', (c) => c.notNull())
    .addColumn('complete', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lines', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('counted', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // Download attribution looks packages up by the requested file.
  await db.schema.createIndex('packages_pool_path').on('packages').column('pool_path').execute();
  // Covering indexes for the dashboard: per-format counts and storage distinct by content, and
  // per-status counts without reading the wide package rows.
  await db.schema.createIndex('packages_format_sha256_size').on('packages').columns(['format', 'sha256', 'size']).execute();
  await db.schema.createIndex('packages_status').on('packages').column('status').execute();
  await db.schema.createIndex('audit_index_action_time').on('audit_index').columns(['action', 'timestamp']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of ['audit_index_action_time', 'packages_status', 'packages_format_sha256_size', 'packages_pool_path']) {
    await db.schema.dropIndex(index).ifExists().execute();
  }
  for (const table of ['access_log_files', 'download_rollups', 'download_totals', 'download_days', 'download_counts']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

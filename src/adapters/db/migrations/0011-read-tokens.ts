import type { Kysely } from 'kysely';

/**
 * Read tokens and downloads per token (issue #18).
 *
 * `api_tokens.kind` tells an API token (`api`, every token made before) from a read token
 * (`read`, `tg_r_…`) that only reads the `/repo/` files of the distributions listed in
 * `distributions` (JSON array of codenames).
 *
 * Downloads made with a token (HTTP Basic password or Bearer at /repo/) are counted a second time
 * per token, next to the anonymous totals of migration 0004 (which stay the totals of every
 * download): `download_token_days` per UTC day, token and distribution (a token's
 * `by_day`/`by_distribution`, and the per-window totals of 0012 that `by_token` reads),
 * `download_token_counts` per UTC day, token and package (a token's top packages). `username`
 * is the token owner's at the time of the download, kept so the figures outlive the token and its
 * account. `distribution` is '' for a shared pool file, as in 0004.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_tokens').addColumn('kind', 'text', (c) => c.notNull().defaultTo('api')).execute();
  await db.schema.alterTable('api_tokens').addColumn('distributions', 'text').execute();

  await db.schema
    .createTable('download_token_days')
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('token_id', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('distribution', 'text', (c) => c.notNull())
    .addColumn('downloads', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('download_token_days_pk', ['day', 'token_id', 'distribution'])
    .execute();
  // One token's figures over a window.
  await db.schema.createIndex('download_token_days_token').on('download_token_days').columns(['token_id', 'day']).execute();

  await db.schema
    .createTable('download_token_counts')
    .addColumn('token_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('distribution', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('arch', 'text', (c) => c.notNull())
    .addColumn('downloads', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('download_token_counts_pk', ['token_id', 'day', 'distribution', 'name', 'version', 'arch'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('download_token_counts').execute();
  await db.schema.dropTable('download_token_days').execute();
  await db.schema.alterTable('api_tokens').dropColumn('distributions').execute();
  await db.schema.alterTable('api_tokens').dropColumn('kind').execute();
}

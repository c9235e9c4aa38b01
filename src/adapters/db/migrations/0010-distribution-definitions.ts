import type { Kysely } from 'kysely';

/**
 * Distributions become data. `definition` holds what an operator set (components,
 * architectures, Release fields, scanner ecosystem, privacy) as JSON; null for a built-in
 * distribution never changed, which then follows the built-in table. `retired_at` marks one
 * taken out of service (its published tree removed, its packages kept until deleted). Packages
 * name the component they are published in.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('distributions').addColumn('definition', 'text').execute();
  await db.schema.alterTable('distributions').addColumn('retired_at', 'text').execute();
  await db.schema.alterTable('packages').addColumn('component', 'text', (c) => c.notNull().defaultTo('main')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('packages').dropColumn('component').execute();
  await db.schema.alterTable('distributions').dropColumn('retired_at').execute();
  await db.schema.alterTable('distributions').dropColumn('definition').execute();
}

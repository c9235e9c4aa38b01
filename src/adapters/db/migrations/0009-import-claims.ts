import type { Kysely } from 'kysely';

/**
 * Which replica is importing which upstream file: a claim per (distribution, SHA-256), taken
 * before the download and dropped once the pipeline has judged the file, so replicas sharing the
 * database neither download nor admit one file twice. A claim whose holder died lapses.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('import_claims')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('import_claims').execute();
}

import type { Kysely } from 'kysely';

/**
 * A full publish reads a distribution's index entries in index order, a page at a time (keyset
 * pagination on `seq`, `id`). Without an index in that order every page sorted the whole
 * distribution: at 50,000 packages, 25 sorts of every row took 1.6 s of a 3.3 s publish and kept
 * pages large (2,000 rows, whose surviving strings grew the JS heap by ~60 MB). With it a page is
 * a range read, so pages can be small; the add-one publish's `seq > last` read uses it too.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('packages_dist_seq').on('packages').columns(['distribution', 'seq', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('packages_dist_seq').execute();
}

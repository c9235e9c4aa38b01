import type { Kysely } from 'kysely';

/**
 * What each stored package file embeds (npm, Python, Java, Go, Rust components; the deb copyright
 * licence), catalogued from its payload once, on the first SBOM that needs it, and kept by the
 * file's SHA-256: the same bytes promoted to another distribution are not read again. `scanner`
 * is the cataloguer's version; a row written by an older one is recomputed.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sbom_inventory')
    .addColumn('sha256', 'text', (c) => c.primaryKey())
    .addColumn('scanner', 'integer', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // The export pages through a distribution by id (keyset): without this index each page re-reads
  // and sorts the whole distribution, which made a 50,000-package export quadratic.
  await db.schema.createIndex('packages_dist_id').on('packages').columns(['distribution', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('packages_dist_id').execute();
  await db.schema.dropTable('sbom_inventory').execute();
}

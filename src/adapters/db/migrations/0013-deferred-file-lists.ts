import { sql, type Kysely } from 'kysely';

/**
 * A .deb's file list (Contents) is read from its payload after the upload is answered, not
 * before: decompressing data.tar is most of an upload's cost (xz decodes ~20 MB/s a core).
 * `listed_generation` says when the list in `files` arrived: 0 at admission (every package
 * stored before this migration, every RPM), the distribution's generation when the background
 * reader filled it in, NULL while it is still to be read. The publisher adds a package's Contents
 * lines once its list has arrived.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('packages').addColumn('listed_generation', 'bigint', (c) => c.defaultTo(0)).execute();
  // Only the few packages still waiting for their list are indexed.
  await db.schema.createIndex('packages_unlisted').on('packages').column('created_at').where(sql.ref('listed_generation'), 'is', null).execute();
  // The publisher's look-up of the lists that arrived since it last published.
  await db.schema.createIndex('packages_listed').on('packages').columns(['distribution', 'listed_generation']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('packages_listed').execute();
  await db.schema.dropIndex('packages_unlisted').execute();
  await db.schema.alterTable('packages').dropColumn('listed_generation').execute();
}

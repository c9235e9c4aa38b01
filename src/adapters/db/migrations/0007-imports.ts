import type { Kysely } from 'kysely';

/**
 * Import from upstream repositories: sources, their sync state, the catalog of
 * upstream packages and import groups.
 *
 * Catalog rows carry the sync generation that wrote them: a sync inserts its rows under a new
 * generation and a short transaction then points the source at it and drops the old rows, so a
 * sync that fails half-way leaves the previous catalog as it was, and no transaction stays open
 * while an index downloads or parses.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('import_sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('suite', 'text')
    .addColumn('components', 'text', (c) => c.notNull())
    .addColumn('architectures', 'text', (c) => c.notNull())
    .addColumn('baseurl', 'text')
    .addColumn('key', 'text')
    .addColumn('allow_unsigned', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('distribution', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('import_sync_state')
    .addColumn('source_id', 'text', (c) => c.primaryKey().references('import_sources.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
    /** SHA-256 of the signed index (InRelease / Release, repomd.xml) the catalog came from. */
    .addColumn('index_digest', 'text')
    .addColumn('etag', 'text')
    .addColumn('last_modified', 'text')
    .addColumn('last_sync_at', 'text')
    .addColumn('last_success_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('import_catalog')
    .addColumn('source_id', 'text', (c) => c.notNull().references('import_sources.id').onDelete('cascade'))
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('arch', 'text', (c) => c.notNull())
    .addColumn('location', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull())
    .addColumn('relations', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('import_catalog_pk', ['source_id', 'generation', 'seq'])
    .execute();
  await db.schema.createIndex('import_catalog_name').on('import_catalog').columns(['source_id', 'generation', 'name']).execute();

  // Names each catalog package answers to besides its own: Provides and (RPM) file paths.
  await db.schema
    .createTable('import_catalog_provides')
    .addColumn('source_id', 'text', (c) => c.notNull().references('import_sources.id').onDelete('cascade'))
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text')
    .addColumn('flags', 'integer')
    .execute();
  await db.schema.createIndex('import_catalog_provides_name').on('import_catalog_provides').columns(['source_id', 'generation', 'name']).execute();

  await db.schema
    .createTable('import_groups')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('distribution', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('import_group_packages')
    .addColumn('group_name', 'text', (c) => c.notNull().references('import_groups.name').onDelete('cascade'))
    .addColumn('package_id', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('arch', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('import_group_packages_pk', ['group_name', 'package_id'])
    .execute();
  await db.schema.createIndex('import_group_packages_package').on('import_group_packages').column('package_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['import_group_packages', 'import_groups', 'import_catalog_provides', 'import_catalog', 'import_sync_state', 'import_sources']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

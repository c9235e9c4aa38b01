import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('distributions')
    .addColumn('codename', 'text', (c) => c.primaryKey())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    /** Bumped with every change to what the index lists; the publisher records what it signed. */
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('published_generation', 'integer', (c) => c.notNull().defaultTo(-1))
    .addColumn('published_at', 'text')
    .addColumn('initialized_at', 'text')
    .execute();

  await db.schema
    .createTable('packages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('distribution', 'text', (c) => c.notNull().references('distributions.codename'))
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('arch', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('cve_status', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('sha512', 'text', (c) => c.notNull())
    .addColumn('sha1', 'text', (c) => c.notNull())
    .addColumn('md5', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('pool_path', 'text', (c) => c.notNull())
    .addColumn('source_name', 'text', (c) => c.notNull())
    .addColumn('source_version', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('index_entry', 'text', (c) => c.notNull())
    .addColumn('relations', 'text', (c) => c.notNull())
    .addColumn('files', 'text', (c) => c.notNull())
    .addColumn('pipeline', 'text', (c) => c.notNull())
    .addColumn('findings', 'text', (c) => c.notNull())
    .addColumn('reasons', 'text', (c) => c.notNull())
    .addColumn('uploaded_by', 'text')
    .addColumn('sla_deadline', 'text')
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('packages_nvra_dist', ['distribution', 'name', 'version', 'arch'])
    .execute();
  await db.schema.createIndex('packages_dist_status').on('packages').columns(['distribution', 'status']).execute();
  await db.schema.createIndex('packages_name').on('packages').column('name').execute();
  await db.schema.createIndex('packages_sha256').on('packages').column('sha256').execute();

  // Names each package answers to in dependency checks: itself, its Provides, (RPM) its files.
  await db.schema
    .createTable('package_provides')
    .addColumn('package_id', 'text', (c) => c.notNull().references('packages.id').onDelete('cascade'))
    .addColumn('distribution', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text')
    .addColumn('flags', 'integer')
    .execute();
  await db.schema.createIndex('package_provides_lookup').on('package_provides').columns(['distribution', 'name']).execute();
  await db.schema.createIndex('package_provides_package').on('package_provides').column('package_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('package_provides').ifExists().execute();
  await db.schema.dropTable('packages').ifExists().execute();
  await db.schema.dropTable('distributions').ifExists().execute();
}

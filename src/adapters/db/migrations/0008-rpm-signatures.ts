import { sql, type Kysely } from 'kysely';

/**
 * RPM packages are published signed with the repository key, so the file a row serves is no
 * longer the file that was uploaded. `upload_sha256` and `upload_size` keep the uploaded bytes' digest and size (the
 * provenance, and what a repeated upload is compared with); `signed_by` names the key whose
 * signature the served file carries: a fingerprint, `upstream` for a foreign signature kept as
 * it came, or null (APT packages, and RPM packages stored before signing existed, which the
 * re-signing job then signs).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('packages').addColumn('upload_sha256', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('packages').addColumn('upload_size', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('packages').addColumn('signed_by', 'text').execute();
  await sql`update packages set upload_sha256 = sha256, upload_size = size`.execute(db);
  await db.schema.createIndex('packages_signed_by').on('packages').columns(['format', 'signed_by']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('packages_signed_by').execute();
  await db.schema.alterTable('packages').dropColumn('signed_by').execute();
  await db.schema.alterTable('packages').dropColumn('upload_size').execute();
  await db.schema.alterTable('packages').dropColumn('upload_sha256').execute();
}

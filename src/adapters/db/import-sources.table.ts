/** Import sources and their sync state (one `import_sync_state` row per source). */
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from './index.js';
import type { ImportSourcesTable, ImportSyncStateTable } from './import-schema.js';

export type ImportSourceRow = Selectable<ImportSourcesTable>;
export type NewImportSourceRow = Insertable<ImportSourcesTable>;
export type ImportSourcePatch = Updateable<ImportSourcesTable>;
export type SyncStateRow = Selectable<ImportSyncStateTable>;
export type NewSyncStateRow = Insertable<ImportSyncStateTable>;

export function listImportSources(db: Db): Promise<ImportSourceRow[]> {
  return db.selectFrom('import_sources').selectAll().orderBy('name').execute();
}

export function findImportSource(db: Db, id: string): Promise<ImportSourceRow | undefined> {
  return db.selectFrom('import_sources').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Id, name and distribution of the sources, all or only the one / those of one distribution. */
export function importSourceNames(db: Db, filter: { sourceId?: string; distribution?: string }): Promise<Array<Pick<ImportSourceRow, 'id' | 'name' | 'distribution'>>> {
  let query = db.selectFrom('import_sources').select(['id', 'name', 'distribution']);
  if (filter.sourceId) query = query.where('id', '=', filter.sourceId);
  if (filter.distribution) query = query.where('distribution', '=', filter.distribution);
  return query.execute();
}

/** Whether a source other than `except` has this name. */
export async function importSourceNameTaken(db: Db, name: string, except: string | null): Promise<boolean> {
  let query = db.selectFrom('import_sources').select('id').where('name', '=', name);
  if (except) query = query.where('id', '!=', except);
  return (await query.executeTakeFirst()) !== undefined;
}

/** A new source with its initial sync state. */
export async function insertImportSource(db: Db, source: NewImportSourceRow, state: NewSyncStateRow): Promise<void> {
  await db.insertInto('import_sources').values(source).execute();
  await db.insertInto('import_sync_state').values(state).execute();
}

export async function updateImportSource(db: Db, id: string, patch: ImportSourcePatch): Promise<void> {
  await db.updateTable('import_sources').set(patch).where('id', '=', id).execute();
}

/** Removes a source with its sync state and every catalog generation it has. */
export async function deleteImportSource(db: Db, id: string): Promise<void> {
  await db.deleteFrom('import_catalog_provides').where('source_id', '=', id).execute();
  await db.deleteFrom('import_catalog').where('source_id', '=', id).execute();
  await db.deleteFrom('import_sync_state').where('source_id', '=', id).execute();
  await db.deleteFrom('import_sources').where('id', '=', id).execute();
}

export function findSyncState(db: Db, sourceId: string): Promise<SyncStateRow | undefined> {
  return db.selectFrom('import_sync_state').selectAll().where('source_id', '=', sourceId).executeTakeFirst();
}

/** Forgets the signed index the catalog came from and its HTTP validators, so the next sync cannot skip it as unchanged. */
export async function forgetVerifiedIndex(db: Db, sourceId: string): Promise<void> {
  await db.updateTable('import_sync_state').set({ index_digest: null, etag: null, last_modified: null }).where('source_id', '=', sourceId).execute();
}

/**
 * Marks the source `syncing` at `now` unless a sync of it started after `staleBefore` is still
 * marked: one conditional UPDATE, so of several replicas exactly one gets true.
 */
export async function claimSourceSync(db: Db, sourceId: string, now: string, staleBefore: string): Promise<boolean> {
  const result = await db
    .updateTable('import_sync_state')
    .set({ status: 'syncing', last_sync_at: now })
    .where('source_id', '=', sourceId)
    .where((eb) => eb.or([eb('status', '!=', 'syncing'), eb('last_sync_at', 'is', null), eb('last_sync_at', '<', staleBefore)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A sync that found the signed index unchanged: the catalog stays, the validators may be renewed. */
export async function recordSyncUnchanged(db: Db, sourceId: string, at: string, validators: { etag: string | null; lastModified: string | null }): Promise<void> {
  await db.updateTable('import_sync_state')
    .set({ status: 'success', last_sync_at: at, last_error: null, etag: validators.etag, last_modified: validators.lastModified })
    .where('source_id', '=', sourceId)
    .execute();
}

/** A sync that wrote `generation` (`count` packages) from the signed index with this digest. */
export async function recordSyncSuccess(
  db: Db,
  sourceId: string,
  at: string,
  synced: { generation: number; count: number; indexDigest: string; etag: string | null; lastModified: string | null },
): Promise<void> {
  await db.updateTable('import_sync_state').set({
    status: 'success', generation: synced.generation, index_digest: synced.indexDigest, etag: synced.etag, last_modified: synced.lastModified,
    last_sync_at: at, last_success_at: at, last_error: null, count: synced.count,
  }).where('source_id', '=', sourceId).execute();
}

export async function recordSyncFailure(db: Db, sourceId: string, at: string, error: string): Promise<void> {
  await db.updateTable('import_sync_state').set({ status: 'failed', last_sync_at: at, last_error: error }).where('source_id', '=', sourceId).execute();
}

/** The last run of the scheduled catalog sync (`job`), as the job scheduler recorded it in job_runs. */
export function lastScheduledSyncRun(db: Db, job: string): Promise<{ last_run_at: string | null; last_result: string | null } | undefined> {
  return db.selectFrom('job_runs').select(['last_run_at', 'last_result']).where('job', '=', job).executeTakeFirst();
}

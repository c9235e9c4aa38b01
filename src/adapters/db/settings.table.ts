import type { Selectable } from 'kysely';
import type { Db } from './index.js';
import type { SettingsTable } from './schema.js';

export type SettingRow = Selectable<SettingsTable>;

export function listSettingRows(db: Db): Promise<SettingRow[]> {
  return db.selectFrom('settings').selectAll().execute();
}

/** Inserts the setting or replaces its stored value. */
export async function upsertSetting(db: Db, row: SettingRow): Promise<void> {
  await db
    .insertInto('settings')
    .values(row)
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: row.value, updated_at: row.updated_at, updated_by: row.updated_by }))
    .execute();
}

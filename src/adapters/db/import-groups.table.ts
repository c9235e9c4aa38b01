/** Import groups and the packages each one brought in. */
import type { Insertable, Selectable } from 'kysely';
import type { Db } from './index.js';
import type { ImportGroupPackagesTable, ImportGroupsTable } from './import-schema.js';

export type ImportGroupRow = Selectable<ImportGroupsTable>;
export type NewImportGroupRow = Insertable<ImportGroupsTable>;
export type ImportGroupMemberRow = Selectable<ImportGroupPackagesTable>;
export type NewImportGroupMemberRow = Insertable<ImportGroupPackagesTable>;

/** Every group, newest first. */
export function listImportGroups(db: Db): Promise<ImportGroupRow[]> {
  return db.selectFrom('import_groups').selectAll().orderBy('created_at', 'desc').orderBy('name').execute();
}

/** The packages of every group, by package name. */
export function listImportGroupMembers(db: Db): Promise<ImportGroupMemberRow[]> {
  return db.selectFrom('import_group_packages').selectAll().orderBy('name').execute();
}

export async function importGroupExists(db: Db, name: string): Promise<boolean> {
  return (await db.selectFrom('import_groups').select('name').where('name', '=', name).executeTakeFirst()) !== undefined;
}

export function importGroupMembers(db: Db, name: string): Promise<ImportGroupMemberRow[]> {
  return db.selectFrom('import_group_packages').selectAll().where('group_name', '=', name).execute();
}

/** Which of `packageIds` (not empty) a group other than `name` also holds. */
export async function packagesHeldByOtherGroups(db: Db, packageIds: readonly string[], name: string): Promise<string[]> {
  const rows = await db.selectFrom('import_group_packages').select('package_id').where('package_id', 'in', packageIds).where('group_name', '!=', name).execute();
  return rows.map((r) => r.package_id);
}

/** Creates the group; a group of that name already there is kept as it is (an import adds to it). */
export async function createImportGroup(db: Db, group: NewImportGroupRow): Promise<void> {
  await db.insertInto('import_groups').values(group).onConflict((oc) => oc.column('name').doNothing()).execute();
}

/** Records a package of the group; a package it already lists is kept as recorded first. */
export async function addImportGroupMember(db: Db, member: NewImportGroupMemberRow): Promise<void> {
  await db.insertInto('import_group_packages').values(member).onConflict((oc) => oc.columns(['group_name', 'package_id']).doNothing()).execute();
}

/** Removes the group and its package list (not the packages). */
export async function deleteImportGroup(db: Db, name: string): Promise<void> {
  await db.deleteFrom('import_group_packages').where('group_name', '=', name).execute();
  await db.deleteFrom('import_groups').where('name', '=', name).execute();
}

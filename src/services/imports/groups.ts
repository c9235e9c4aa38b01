/**
 * Import groups: every import call is one, listing the packages it brought in. Deleting a group
 * keeps its packages unless asked; then it removes only those the group itself imported and no
 * other group holds (a package that was already stored when the group imported it stays).
 */
import type { AuditLog } from '../../adapters/audit/audit-log.js';
import type { Db } from '../../adapters/db/index.js';
import {
  deleteImportGroup, importGroupExists, importGroupMembers, listImportGroupMembers, listImportGroups, packagesHeldByOtherGroups,
} from '../../adapters/db/import-groups.table.js';
import { DomainError } from '../../domain/errors.js';
import type { Actor } from '../actor.js';
import type { PackageLifecycle } from '../packages/lifecycle.js';
import { packageById, type PackageRow } from '../../adapters/db/packages.table.js';

export interface GroupView {
  name: string;
  distribution: string;
  created_by: string | null;
  created_at: string;
  count: number;
  packages: Array<{ name: string; version: string; arch: string; status: string; package_id: string }>;
}

export class ImportGroups {
  constructor(private readonly deps: { db: Db; audit: AuditLog; lifecycle: PackageLifecycle }) {}

  async list(): Promise<GroupView[]> {
    const groups = await listImportGroups(this.deps.db);
    const members = await listImportGroupMembers(this.deps.db);
    return groups.map((g) => {
      const packages = members.filter((m) => m.group_name === g.name).map((m) => ({ name: m.name, version: m.version, arch: m.arch, status: m.status, package_id: m.package_id }));
      return { name: g.name, distribution: g.distribution, created_by: g.created_by, created_at: g.created_at, count: packages.length, packages };
    });
  }

  async delete(name: string, deletePackages: boolean, actor: Actor): Promise<{ group: string; deleted_packages: number; kept_packages: number }> {
    if (!(await importGroupExists(this.deps.db, name))) throw new DomainError('not_found', 'group_not_found', `Import group ${name} not found`);
    const members = await importGroupMembers(this.deps.db, name);
    let doomed: PackageRow[] = [];
    if (deletePackages && members.length > 0) {
      const ids = members.filter((m) => m.status !== 'already_present').map((m) => m.package_id);
      const elsewhere = ids.length
        ? new Set(await packagesHeldByOtherGroups(this.deps.db, ids, name))
        : new Set<string>();
      const rows = await Promise.all(ids.filter((id) => !elsewhere.has(id)).map((id) => packageById(this.deps.db, id)));
      doomed = rows.filter((r): r is PackageRow => r !== undefined);
    }
    if (doomed.length) await this.deps.lifecycle.delete(doomed, actor);
    await this.deps.db.transaction().execute((trx) => deleteImportGroup(trx, name));
    const kept = members.length - doomed.length;
    await this.deps.audit.record({
      action: 'IMPORT_GROUP_DELETE', user: actor.username, ip: actor.ip, result: 'SUCCESS',
      detail: `group=${name}; delete_packages=${deletePackages}; deleted=${doomed.length}; kept=${kept}${doomed.length ? `; packages=${doomed.map((r) => `${r.name}=${r.version}`).join(',')}` : ''}`.slice(0, 2000),
    });
    return { group: name, deleted_packages: doomed.length, kept_packages: kept };
  }
}

/** Maps directory groups to a Tollgate role through the group_* settings. */
import type { Role } from '../../domain/roles.js';
import { dnEquals, firstRdnValue } from './names.js';

/** The group_* settings: each a group DN (`cn=admins,ou=groups,dc=example,dc=org`) or a bare CN (`admins`). */
export interface GroupRoleMapping {
  group_admin?: string | null;
  group_maintainer?: string | null;
  group_uploader?: string | null;
  group_auditor?: string | null;
  group_reader?: string | null;
}

// Strongest first: a member of several mapped groups gets the first that matches.
const ORDER: ReadonlyArray<[keyof GroupRoleMapping, Role]> = [
  ['group_admin', 'admin'],
  ['group_maintainer', 'maintainer'],
  ['group_uploader', 'uploader'],
  ['group_auditor', 'auditor'],
  ['group_reader', 'reader'],
];

/** The highest role whose mapped group is among `groups` (group DNs), or null when none matches. */
export function mapGroupsToRole(groups: readonly string[], mapping: GroupRoleMapping): Role | null {
  for (const [key, role] of ORDER) {
    const wanted = mapping[key]?.trim();
    if (!wanted) continue;
    if (groups.some((group) => groupMatches(group, wanted))) return role;
  }
  return null;
}

/** A mapping with `=` is a DN and must equal the group's DN; otherwise it names the group's CN. */
function groupMatches(groupDn: string, wanted: string): boolean {
  if (wanted.includes('=')) return dnEquals(groupDn, wanted);
  const name = firstRdnValue(groupDn);
  return name !== null && name.toLowerCase() === wanted.toLowerCase();
}

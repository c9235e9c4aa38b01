/**
 * The five roles. The permission matrix is not a strict hierarchy (an auditor cannot upload, an
 * uploader cannot read the audit log), so "at most a role" means "a subset of its permissions".
 */
export const ROLES = ['admin', 'maintainer', 'uploader', 'auditor', 'reader'] as const;
export type Role = (typeof ROLES)[number];

const ALIASES: Record<string, Role> = { viewer: 'reader' };

/** Accepts a role name or its alias (`viewer`); null when it names no role. */
export function parseRole(name: string): Role | null {
  const lower = name.trim().toLowerCase();
  if ((ROLES as readonly string[]).includes(lower)) return lower as Role;
  return ALIASES[lower] ?? null;
}

/** Roles whose permissions include every permission of the key role (itself included). */
const SUPERSETS: Record<Role, readonly Role[]> = {
  reader: ['reader', 'auditor', 'uploader', 'maintainer', 'admin'],
  auditor: ['auditor', 'maintainer', 'admin'],
  uploader: ['uploader', 'maintainer', 'admin'],
  maintainer: ['maintainer', 'admin'],
  admin: ['admin'],
};

/** True when every permission of `role` is also a permission of `holder`. */
export function roleWithin(role: Role, holder: Role): boolean {
  return SUPERSETS[role].includes(holder);
}

/** The rights a token gets: the largest role within both the token's and its creator's role. */
export function effectiveTokenRole(tokenRole: Role, creatorRole: Role): Role {
  if (roleWithin(tokenRole, creatorRole)) return tokenRole;
  if (roleWithin(creatorRole, tokenRole)) return creatorRole;
  return 'reader';
}

export function rolesWithin(holder: Role): Role[] {
  return ROLES.filter((r) => roleWithin(r, holder));
}

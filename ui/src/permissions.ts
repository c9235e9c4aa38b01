import type { Role, Session } from './types';

/**
 * What the interface offers each role: the service's permission table (src/http/permissions.ts)
 * read from the other side. The service still decides; a 403 is shown as such.
 */
const UPLOADERS: Role[] = ['uploader', 'maintainer', 'admin'];
const AUDITORS: Role[] = ['auditor', 'maintainer', 'admin'];
const MAINTAINERS: Role[] = ['maintainer', 'admin'];

export type Ability = 'upload' | 'review_queue' | 'decide' | 'promote' | 'delete' | 'manage_users' | 'api_tokens' | 'audit' | 'settings' | 'sbom' | 'import' | 'import_sources' | 'manage_distributions';

export function can(session: Session | null | undefined, ability: Ability): boolean {
  if (!session) return false;
  const role = session.role;
  switch (ability) {
    case 'upload':
    case 'api_tokens':
    case 'import':
      return UPLOADERS.includes(role);
    case 'review_queue':
    case 'audit':
    case 'sbom':
      return AUDITORS.includes(role);
    case 'decide':
      return session.can_decide;
    case 'promote':
    case 'delete':
    case 'import_sources':
      return MAINTAINERS.includes(role);
    case 'manage_users':
    case 'manage_distributions':
    case 'settings':
      return role === 'admin';
  }
}

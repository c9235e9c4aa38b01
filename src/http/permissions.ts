import type { Role } from '../domain/roles.js';

/**
 * Who may call what: the one table. It is not a strict hierarchy (an auditor cannot upload, an
 * uploader cannot see the review queue). Route registration reads it, so a route without an
 * entry cannot be registered (src/http/route-guard.ts throws at start-up).
 *  - 'public': no authentication.
 *  - 'any': any authenticated, active user.
 *  - 'decider': admin, or maintainer too when the setting `decide_min_role` is `maintainer`.
 *  - a role list: exactly those roles.
 */
export type Access = 'public' | 'any' | 'decider' | readonly Role[];

const UPLOADERS: readonly Role[] = ['uploader', 'maintainer', 'admin'];
const AUDITORS: readonly Role[] = ['auditor', 'maintainer', 'admin'];
const MAINTAINERS: readonly Role[] = ['maintainer', 'admin'];
const ADMIN: readonly Role[] = ['admin'];

export const ROUTE_ACCESS: Readonly<Record<string, Access>> = {
  // auth
  'POST /auth/token': 'public',
  'GET /auth/roles': 'public',
  'POST /auth/forgot-password': 'public',
  'POST /auth/reset-password': 'public',
  'POST /auth/mfa/verify': 'public',
  'POST /auth/session': 'public',
  'POST /auth/session/mfa': 'public',
  'DELETE /auth/session': 'public',
  'GET /auth/session': 'any',
  'GET /auth/me': 'any',
  'POST /auth/change-password': 'any',
  'POST /auth/mfa/setup': 'any',
  'POST /auth/mfa/enable': 'any',
  'POST /auth/mfa/disable': 'any',
  'GET /auth/users': ADMIN,
  'POST /auth/users': ADMIN,
  'GET /auth/users/:username': ADMIN,
  'PATCH /auth/users/:username': ADMIN,
  'DELETE /auth/users/:username': ADMIN,
  'POST /auth/users/:username/reset-password': ADMIN,
  // API tokens: uploader+ manage their own, admin manages all (the handler scopes the rows)
  'GET /auth/api-tokens': UPLOADERS,
  'POST /auth/api-tokens': UPLOADERS,
  'DELETE /auth/api-tokens/:token_id': UPLOADERS,
  // upload
  'POST /upload': UPLOADERS,
  'POST /upload/stream': UPLOADERS,
  // packages, artifacts, distributions
  'GET /packages': 'any',
  'GET /artifacts': 'any',
  'GET /artifacts/:name': 'any',
  'GET /artifacts/:name/dependencies': 'any',
  'GET /artifacts/:name/install': 'any',
  'GET /artifacts/:name/:version': 'any',
  'DELETE /artifacts/:name': MAINTAINERS,
  'DELETE /artifacts/:name/:version': MAINTAINERS,
  'POST /artifacts/admin/sync-index': MAINTAINERS,
  'GET /distributions': 'any',
  'GET /distributions/:codename/packages': 'any',
  'POST /distributions/promote': MAINTAINERS,
  'POST /distributions/migrate': MAINTAINERS,
  'POST /distributions/init': ADMIN,
  'POST /distributions': ADMIN,
  'PATCH /distributions/:codename': ADMIN,
  'DELETE /distributions/:codename': ADMIN,
  // the published repository (read-only files, public so apt and dnf clients need no credentials)
  'GET /repo/*': 'public',
  // the web interface's files (the data it shows comes from the API, with its own entries)
  'GET /': 'public',
  'GET /ui': 'public',
  'GET /ui/*': 'public',
  // security: views for every role, except the review queue (auditors, maintainers, admins) and
  // /security/packages (maintainers up); changes for maintainers up; the policy for admins;
  // decide per the setting decide_min_role
  'GET /security/vulnerabilities': 'any',
  'GET /security/packages-posture': 'any',
  'GET /security/packages/:name/:version/cve': 'any',
  'GET /security/avengine/status': 'any',
  'GET /security/review-queue': AUDITORS,
  'GET /security/packages': MAINTAINERS,
  'POST /security/packages/:name/:version/rescan': MAINTAINERS,
  'POST /security/packages/:name/:version/quarantine': MAINTAINERS,
  'POST /security/avengine/update': MAINTAINERS,
  'POST /import/sync-security': MAINTAINERS,
  // import from upstream repositories: sources and every sync for maintainers up; status, search
  // and groups for every role
  'GET /import/sources': MAINTAINERS,
  'POST /import/sources': MAINTAINERS,
  'PATCH /import/sources/:id': MAINTAINERS,
  'DELETE /import/sources/:id': MAINTAINERS,
  'POST /import/sources/:id/sync': MAINTAINERS,
  'POST /import/sync': MAINTAINERS,
  'POST /import/sync/:source_id': MAINTAINERS,
  'GET /import/sync-status': 'any',
  'GET /import/sync-schedule': 'any',
  'GET /import/search': 'any',
  'GET /import/resolve/:package_name': 'any',
  'POST /import/fetch': UPLOADERS,
  'POST /import/batch': UPLOADERS,
  'POST /import/packages': MAINTAINERS,
  'GET /import/groups': 'any',
  'DELETE /import/groups/:group_name': MAINTAINERS,
  'GET /security/policy': ADMIN,
  'PATCH /security/policy': ADMIN,
  'POST /security/packages/:name/:version/decide': 'decider',
  'POST /security/packages/:name/:version/decision': 'decider',
  // audit
  'GET /artifacts/audit/logs': AUDITORS,
  'GET /audit/logs': AUDITORS,
  'GET /audit/package/:name': AUDITORS,
  'GET /audit/verify': AUDITORS,
  // settings
  'GET /settings': ADMIN,
  'PATCH /settings': ADMIN,
  'GET /settings/next-sync': ADMIN,
  'POST /settings/run-retention': ADMIN,
  'GET /settings/gpg': ADMIN,
  'POST /settings/gpg/generate': ADMIN,
  'POST /settings/test-webhook': ADMIN,
  'POST /settings/test-ldap': ADMIN,
  'POST /settings/test-email': ADMIN,
  // dashboard and download statistics: every role
  'GET /dashboard/stats': 'any',
  'GET /dashboard/history': 'any',
  'GET /dashboard/summary': 'any',
  'GET /downloads/stats': 'any',
  // SBOM (Enterprise-only): export, SARIF and per-package SBOM for auditors and maintainers up,
  // the preview for every role
  'GET /sbom/export': AUDITORS,
  'GET /sbom/sarif': AUDITORS,
  'GET /sbom/:name/:version': AUDITORS,
  'GET /sbom/preview': 'any',
  // health and metrics
  'GET /health/live': 'public',
  'GET /health/ready': 'public',
  'GET /health': 'public',
  'GET /metrics': 'public',
  // CORS preflight (answered by @fastify/cors for the configured CORS_ORIGINS)
  'OPTIONS *': 'public',
  // API documentation (not registered when ENV=production)
  'GET /openapi.json': 'public',
  'GET /docs': 'public',
  'GET /docs/json': 'public',
  'GET /docs/yaml': 'public',
  'GET /docs/static/index.html': 'public',
  'GET /docs/static/swagger-initializer.js': 'public',
  'GET /docs/static/*': 'public',
};

import { RATE_LIMITS, type RateLimitName } from '../domain/rate-limits.js';

// The table itself is in the domain, where the `rate_limits` setting validates its keys against it.
export { RATE_LIMITS, type RateLimitName };

/** Limits that always count per client IP: they guard unauthenticated endpoints. */
export const PER_IP_LIMITS: ReadonlySet<RateLimitName> = new Set(['login', 'password_reset', 'mfa_verify']);

/** Which limit a route template falls under, if any. */
export function limitFor(method: string, template: string): RateLimitName | undefined {
  if (method !== 'POST') return undefined;
  if (template === '/auth/token' || template === '/auth/session') return 'login';
  if (template === '/auth/forgot-password' || template === '/auth/reset-password') return 'password_reset';
  if (template === '/auth/mfa/verify' || template === '/auth/session/mfa') return 'mfa_verify';
  if (template === '/auth/change-password') return 'change_password';
  if (template === '/upload' || template === '/upload/stream') return 'upload';
  if (template === '/import/fetch') return 'import_fetch';
  if (template === '/import/batch') return 'import_batch';
  if (template === '/import/sync') return 'import_sync';
  if (template.startsWith('/import/')) return 'import';
  if (template.startsWith('/distributions/')) return 'distributions';
  return undefined;
}

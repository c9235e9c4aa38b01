/**
 * Default rate limits: requests per minute per user (or per client IP when anonymous). The
 * names live in the domain so the `rate_limits` setting can accept exactly these keys; which
 * route falls under which limit is the HTTP layer's business (src/http/rate-limits.ts).
 */
export const RATE_LIMITS = {
  login: 10,
  password_reset: 5,
  mfa_verify: 10,
  /** Per user: guesses of the current password through a stolen session. */
  change_password: 10,
  upload: 20,
  import_fetch: 10,
  import_batch: 5,
  import_sync: 3,
  import: 10,
  distributions: 5,
} as const;
export type RateLimitName = keyof typeof RATE_LIMITS;
export const RATE_LIMIT_NAMES = Object.keys(RATE_LIMITS) as RateLimitName[];

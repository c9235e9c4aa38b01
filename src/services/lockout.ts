import type { Db } from '../adapters/db/index.js';
import { clearLoginFailures, insertLoginFailure, latestLoginFailures } from '../adapters/db/login-failures.table.js';
import { canonicalUsername } from '../domain/usernames.js';
import { isoUtc } from '../domain/time.js';

export const LOCKOUT_FAILURES = 5;
export const LOCKOUT_WINDOW_MS = 15 * 60_000;

/**
 * 5 failed proofs of one account in 15 minutes lock it for 15 minutes. Every place that checks
 * a password or a second factor (login, MFA login, change-password, MFA changes) counts here,
 * under the canonical name, so no spelling or endpoint gets its own allowance.
 */
export class Lockout {
  constructor(private readonly db: Db) {}

  /** Seconds until the account may try again; 0 when it is not locked. */
  async retryAfter(username: string): Promise<number> {
    const since = isoUtc(new Date(Date.now() - LOCKOUT_WINDOW_MS));
    const failures = await latestLoginFailures(this.db, canonicalUsername(username), since, LOCKOUT_FAILURES);
    if (failures.length < LOCKOUT_FAILURES) return 0;
    // Locked until 15 minutes after the fifth-latest failure inside the window.
    const fifth = new Date(failures[LOCKOUT_FAILURES - 1]!).getTime();
    return Math.max(1, Math.ceil((fifth + LOCKOUT_WINDOW_MS - Date.now()) / 1000));
  }

  async recordFailure(username: string): Promise<void> {
    await insertLoginFailure(this.db, canonicalUsername(username), isoUtc());
  }

  async clear(username: string): Promise<void> {
    await clearLoginFailures(this.db, canonicalUsername(username));
  }
}

/**
 * Self-service password reset: a one-time token mailed as a link, stored only as
 * its SHA-256, valid for 30 minutes.
 */
import { randomBytes } from 'node:crypto';
import type { AuditLog } from '../adapters/audit/audit-log.js';
import type { Db } from '../adapters/db/index.js';
import { consumeResetToken, insertResetToken } from '../adapters/db/password-resets.table.js';
import { findActiveUserByEmail } from '../adapters/db/users.table.js';
import { sha256Hex } from './api-tokens.js';
import type { Lockout } from './lockout.js';
import { isoUtc } from '../domain/time.js';
import { assertPasswordPolicy, type UserRow, type UserService } from './users.js';

export const RESET_TTL_MS = 30 * 60_000;

export interface PasswordResetDeps {
  db: Db;
  users: UserService;
  lockout: Lockout;
  audit: AuditLog;
}

export class PasswordResets {
  constructor(private readonly deps: PasswordResetDeps) {}

  /** A new token for the active local account with that address; null for any other address. */
  async issue(email: string): Promise<{ user: UserRow; token: string } | null> {
    const user = await findActiveUserByEmail(this.deps.db, email);
    if (!user || user.source !== 'local') return null;
    const token = randomBytes(32).toString('base64url');
    await insertResetToken(this.deps.db, {
      token_hash: sha256Hex(token),
      user_id: user.id,
      expires_at: isoUtc(new Date(Date.now() + RESET_TTL_MS)),
      used_at: null,
      created_at: isoUtc(),
    });
    return { user, token };
  }

  /**
   * Sets the new password with a valid, unused token and ends the account's sessions; null when
   * the token is unknown, used, expired or its account can no longer reset. The token is claimed
   * by a conditional UPDATE in the same transaction as the password change, so of two requests
   * racing with one token exactly one succeeds.
   */
  async redeem(token: string, newPassword: string, ip: string | null): Promise<UserRow | null> {
    // Before the claim: a password the policy refuses leaves the link usable for a better one.
    assertPasswordPolicy(newPassword);
    // Hashed outside the transaction, so no lock is held for the bcrypt time.
    const hash = await this.deps.users.hashPassword(newPassword);
    const now = isoUtc();
    const user = await this.deps.db.transaction().execute(async (trx) => {
      const userId = await consumeResetToken(trx, sha256Hex(token), now);
      if (userId === null) return null;
      const owner = await this.deps.users.byId(userId, trx);
      // Deactivated or moved to the directory since the link was sent: the token is spent, nothing changes.
      if (!owner || !owner.is_active || owner.source !== 'local') return null;
      await this.deps.users.storePasswordHash(owner, hash, trx);
      return owner;
    });
    if (!user) return null;
    // The mailbox owner proved themselves: a lock from someone else's guesses should not keep them out.
    await this.deps.lockout.clear(user.username);
    await this.deps.audit.record({ action: 'PASSWORD_RESET', user: user.username, result: 'SUCCESS', detail: 'self-service reset link', ip });
    return user;
  }
}

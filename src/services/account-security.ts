/**
 * What a signed-in user changes about their own credentials: the password and the second factor.
 * Each change is proven again (current password or a current code), and every wrong proof counts
 * toward the same lockout as a wrong login, so a stolen session cannot guess without limit.
 */
import { generateSecret, generateURI } from 'otplib';
import type { AuditLog } from '../adapters/audit/audit-log.js';
import type { SecretBox } from '../adapters/crypto/secret-box.js';
import type { AuthService } from './auth.js';
import type { Lockout } from './lockout.js';
import { assertPasswordPolicy, type UserRow, type UserService } from './users.js';

/** Why a change was refused; the HTTP layer chooses the status for each. */
export type Refusal =
  | { code: 'account_locked'; retryAfter: number }
  | { code: 'invalid_current_password' | 'invalid_code' | 'directory_account' | 'mfa_already_enabled' | 'mfa_not_set_up' | 'mfa_not_enabled' };

export type AccountResult<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

export interface AccountSecurityDeps {
  users: UserService;
  auth: AuthService;
  lockout: Lockout;
  audit: AuditLog;
  box: SecretBox;
}

const done = <T>(value: T): AccountResult<T> => ({ ok: true, value });
const refused = <T>(refusal: Refusal): AccountResult<T> => ({ ok: false, refusal });

export class AccountSecurity {
  constructor(private readonly deps: AccountSecurityDeps) {}

  /** Sets a new password; ends the user's earlier sessions (API tokens stay: see README). */
  async changePassword(user: UserRow, current: string, next: string, ip: string | null): Promise<AccountResult<void>> {
    if (user.source !== 'local') return refused({ code: 'directory_account' });
    const proof = await this.prove(user, 'PASSWORD_CHANGE', () => this.deps.auth.confirmPassword(user, current), 'invalid_current_password', ip);
    if (!proof.ok) return proof;
    // Checked after the proof, so a refused new password never counts as a failed guess.
    assertPasswordPolicy(next);
    await this.deps.users.setPassword(user, next);
    await this.deps.lockout.clear(user.username);
    await this.deps.audit.record({ action: 'PASSWORD_CHANGE', user: user.username, result: 'SUCCESS', ip });
    return done(undefined);
  }

  /** A new, not yet active TOTP secret; the password proves it is the account holder asking. */
  async startMfa(user: UserRow, password: string, ip: string | null): Promise<AccountResult<{ secret: string; otpauthUrl: string }>> {
    if (user.mfa_enabled) return refused({ code: 'mfa_already_enabled' });
    const proof = await this.prove(user, 'MFA_CHANGE', () => this.deps.auth.confirmPassword(user, password), 'invalid_current_password', ip);
    if (!proof.ok) return proof;
    const secret = generateSecret();
    await this.deps.users.setMfa(user, this.deps.box.seal(secret), false);
    await this.deps.audit.record({ action: 'MFA_CHANGE', user: user.username, result: 'SUCCESS', detail: 'setup started', ip });
    return done({ secret, otpauthUrl: generateURI({ secret, label: user.username, issuer: 'Tollgate' }) });
  }

  /**
   * Turns on the secret from startMfa once a code from it is shown. A wrong code here is not a
   * guess at anything the caller does not already hold, so it does not count toward the lockout.
   */
  async enableMfa(user: UserRow, code: string, ip: string | null): Promise<AccountResult<void>> {
    if (!user.mfa_secret) return refused({ code: 'mfa_not_set_up' });
    if (!(await this.deps.auth.checkTotp(user, code))) {
      await this.deps.audit.record({ action: 'MFA_CHANGE', user: user.username, result: 'FAILURE', detail: 'enable: invalid code', ip });
      return refused({ code: 'invalid_code' });
    }
    await this.deps.users.setMfa(user, user.mfa_secret, true);
    await this.deps.audit.record({ action: 'MFA_CHANGE', user: user.username, result: 'SUCCESS', detail: 'enabled', ip });
    return done(undefined);
  }

  async disableMfa(user: UserRow, code: string, ip: string | null): Promise<AccountResult<void>> {
    if (!user.mfa_enabled) return refused({ code: 'mfa_not_enabled' });
    const proof = await this.prove(user, 'MFA_CHANGE', () => this.deps.auth.checkTotp(user, code), 'invalid_code', ip);
    if (!proof.ok) return proof;
    await this.deps.users.setMfa(user, null, false);
    await this.deps.audit.record({ action: 'MFA_CHANGE', user: user.username, result: 'SUCCESS', detail: 'disabled', ip });
    return done(undefined);
  }

  /** Runs a proof under the lockout: refused while locked, and a wrong proof is a counted, audited failure. */
  private async prove(
    user: UserRow,
    action: 'PASSWORD_CHANGE' | 'MFA_CHANGE',
    check: () => Promise<boolean>,
    wrong: 'invalid_current_password' | 'invalid_code',
    ip: string | null,
  ): Promise<AccountResult<void>> {
    const retryAfter = await this.deps.lockout.retryAfter(user.username);
    if (retryAfter > 0) {
      await this.deps.audit.record({ action, user: user.username, result: 'FAILURE', detail: 'account locked after repeated failures', ip });
      return refused({ code: 'account_locked', retryAfter });
    }
    if (await check()) return done(undefined);
    await this.deps.lockout.recordFailure(user.username);
    await this.deps.audit.record({ action, user: user.username, result: 'FAILURE', detail: wrong === 'invalid_code' ? 'wrong code' : 'wrong current password', ip });
    return refused({ code: wrong });
  }
}

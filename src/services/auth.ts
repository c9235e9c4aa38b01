import { randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import { verify as verifyTotp } from 'otplib';
import type { Db } from '../adapters/db/index.js';
import type { SecretBox } from '../adapters/crypto/secret-box.js';
import { DomainError } from '../domain/errors.js';
import { effectiveTokenRole, type Role } from '../domain/roles.js';
import type { ApiTokenService } from './api-tokens.js';
import type { UserRow, UserService } from './users.js';
import { isoUtc } from './time.js';

export const LOCKOUT_FAILURES = 5;
export const LOCKOUT_WINDOW_MS = 15 * 60_000;

/** Who is calling: the account, the rights in force for this request, and how they proved it. */
export interface Principal {
  user: UserRow;
  role: Role;
  via: 'jwt' | 'api_token';
  tokenId: string | null;
}

/** Result of checking credentials against a directory (LDAP); null when no directory is in use. */
export type DirectoryLogin = (
  username: string,
  password: string,
) => Promise<{ ok: true; email: string | null; fullName: string | null; role: Role } | { ok: false; reason: string } | null>;

export type LoginOutcome =
  | { kind: 'token'; user: UserRow; accessToken: string; expiresIn: number }
  | { kind: 'mfa_required'; user: UserRow; mfaToken: string }
  | { kind: 'locked'; retryAfter: number }
  | { kind: 'failed'; reason: string; user: UserRow | null };

export class AuthService {
  private readonly key: Uint8Array;

  constructor(
    private readonly db: Db,
    private readonly users: UserService,
    private readonly tokens: ApiTokenService,
    private readonly box: SecretBox,
    jwtSecret: string,
    private readonly expireMinutes: number,
    private readonly directory: DirectoryLogin,
  ) {
    this.key = new TextEncoder().encode(jwtSecret);
  }

  async issueAccessToken(user: UserRow): Promise<{ token: string; expiresIn: number }> {
    const expiresIn = this.expireMinutes * 60;
    const token = await new SignJWT({ ver: user.token_version, typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.id)
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime(`${expiresIn}s`)
      .sign(this.key);
    return { token, expiresIn };
  }

  private async issueMfaToken(user: UserRow): Promise<string> {
    return new SignJWT({ ver: user.token_version, typ: 'mfa' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(user.id)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(this.key);
  }

  private async verifyJwt(token: string, typ: 'access' | 'mfa'): Promise<UserRow | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'] });
      if (payload.typ !== typ || typeof payload.sub !== 'string') return null;
      const user = await this.users.byId(payload.sub);
      if (!user || payload.ver !== user.token_version) return null;
      return user;
    } catch {
      return null;
    }
  }

  /**
   * Resolves a bearer credential to a principal, re-reading the account each time so a role
   * change, deactivation, revocation or password change applies to the very next request.
   */
  async authenticate(bearer: string): Promise<Principal | { error: 'invalid' | 'inactive' }> {
    if (bearer.startsWith('tg_')) {
      const token = await this.tokens.resolve(bearer);
      if (!token) return { error: 'invalid' };
      const owner = await this.users.byId(token.user_id);
      if (!owner) return { error: 'invalid' };
      if (!owner.is_active) return { error: 'inactive' };
      return { user: owner, role: effectiveTokenRole(token.role as Role, owner.role as Role), via: 'api_token', tokenId: token.id };
    }
    const user = await this.verifyJwt(bearer, 'access');
    if (!user) return { error: 'invalid' };
    if (!user.is_active) return { error: 'inactive' };
    return { user, role: user.role as Role, via: 'jwt', tokenId: null };
  }

  private async lockedFor(username: string): Promise<number> {
    const since = isoUtc(new Date(Date.now() - LOCKOUT_WINDOW_MS));
    const rows = await this.db
      .selectFrom('login_failures')
      .select('at')
      .where('username', '=', username)
      .where('at', '>', since)
      .orderBy('at', 'desc')
      .limit(LOCKOUT_FAILURES)
      .execute();
    if (rows.length < LOCKOUT_FAILURES) return 0;
    // Locked until 15 minutes after the fifth-latest failure inside the window.
    const fifth = new Date(rows[LOCKOUT_FAILURES - 1]!.at).getTime();
    return Math.max(1, Math.ceil((fifth + LOCKOUT_WINDOW_MS - Date.now()) / 1000));
  }

  private async recordFailure(username: string): Promise<void> {
    await this.db.insertInto('login_failures').values({ username, at: isoUtc() }).execute();
  }

  private async clearFailures(username: string): Promise<void> {
    await this.db.deleteFrom('login_failures').where('username', '=', username).execute();
  }

  checkTotp(user: UserRow, code: string): Promise<boolean> {
    if (!user.mfa_secret) return Promise.resolve(false);
    const secret = this.box.open(user.mfa_secret);
    // ±1 step of 30 s: the clock tolerance of API.md.
    return verifyTotp({ secret, token: code, epochTolerance: 30 })
      .then((r) => r.valid)
      .catch(() => false);
  }

  private async directoryUser(username: string): Promise<UserRow | undefined> {
    const user = await this.users.byUsername(username.toLowerCase());
    return user?.source === 'ldap' ? user : undefined;
  }

  async login(username: string, password: string, otp?: string): Promise<LoginOutcome> {
    const retryAfter = await this.lockedFor(username);
    if (retryAfter > 0) return { kind: 'locked', retryAfter };

    // Directory logins are case-insensitive (LDAP matches uid that way): one local record each, lower-cased.
    let user = (await this.users.byUsername(username)) ?? (await this.directoryUser(username));
    let ok = false;
    if (user?.password_hash) {
      ok = await this.users.checkPassword(user, password);
    } else if (!user || user.source === 'ldap') {
      const dir = password ? await this.directory(username, password) : null;
      if (dir?.ok) {
        user = user
          ? await this.users.update(user, { role: dir.role, email: dir.email, full_name: dir.fullName })
          : await this.users.create({ username: username.toLowerCase(), password: null, role: dir.role, email: dir.email, full_name: dir.fullName, source: 'ldap' });
        ok = true;
      } else if (dir && dir.reason === 'no_role_mapping' && user?.source === 'ldap' && user.is_active) {
        // The directory no longer grants this account any role: its sessions end now, and its API
        // tokens with it (they need an active creator). An admin reactivates it once it maps again.
        await this.users.update(user, { active: false });
        await this.users.endSessions(user);
        await this.recordFailure(username);
        return { kind: 'failed', reason: 'directory_role_removed', user };
      }
    }
    if (!ok || !user) {
      await this.recordFailure(username);
      return { kind: 'failed', reason: 'bad_credentials', user: user ?? null };
    }
    if (!user.is_active) return { kind: 'failed', reason: 'account_disabled', user };
    if (user.mfa_enabled) {
      if (!otp) return { kind: 'mfa_required', user, mfaToken: await this.issueMfaToken(user) };
      if (!(await this.checkTotp(user, otp))) {
        await this.recordFailure(username);
        return { kind: 'failed', reason: 'bad_otp', user };
      }
    }
    await this.clearFailures(username);
    await this.users.touchLogin(user);
    const { token, expiresIn } = await this.issueAccessToken(user);
    return { kind: 'token', user, accessToken: token, expiresIn };
  }

  /** Second step of an MFA login. */
  async completeMfa(mfaToken: string, code: string): Promise<LoginOutcome> {
    const user = await this.verifyJwt(mfaToken, 'mfa');
    if (!user || !user.is_active) return { kind: 'failed', reason: 'invalid_mfa_token', user: null };
    const retryAfter = await this.lockedFor(user.username);
    if (retryAfter > 0) return { kind: 'locked', retryAfter };
    if (!(await this.checkTotp(user, code))) {
      await this.recordFailure(user.username);
      return { kind: 'failed', reason: 'bad_otp', user };
    }
    await this.clearFailures(user.username);
    await this.users.touchLogin(user);
    const { token, expiresIn } = await this.issueAccessToken(user);
    return { kind: 'token', user, accessToken: token, expiresIn };
  }

  sealSecret(secret: string): string {
    return this.box.seal(secret);
  }
}

export function assertActive(user: UserRow | undefined): asserts user is UserRow {
  if (!user) throw new DomainError('not_found', 'user_not_found', 'User not found');
}

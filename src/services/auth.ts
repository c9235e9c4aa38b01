import { randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { verify as verifyTotp } from 'otplib';
import type { AuditLog } from '../adapters/audit/audit-log.js';
import type { SecretBox } from '../adapters/crypto/secret-box.js';
import { effectiveTokenRole, type Role } from '../domain/roles.js';
import { canonicalUsername } from '../domain/usernames.js';
import { READ_TOKEN_PREFIX, tokenDistributions, type ApiTokenService } from './api-tokens.js';
import type { Lockout } from './lockout.js';
import type { UserRow, UserService } from './users.js';

export { LOCKOUT_FAILURES, LOCKOUT_WINDOW_MS } from './lockout.js';

/** The audit `user` of account changes the directory makes at login (creation, role, deactivation). */
export const DIRECTORY_ACTOR = 'ldap';

/** Who is calling: the account, the rights in force for this request, and how they proved it. */
export interface Principal {
  user: UserRow;
  role: Role;
  via: 'jwt' | 'api_token' | 'read_token';
  tokenId: string | null;
  /** A read token's distributions (the only /repo/ trees it opens); null for every other credential. */
  distributions: string[] | null;
}

/** Why a credential was not accepted: `read_token` is a valid read token offered where only API credentials do. */
export type AuthFailure = { error: 'invalid' | 'inactive' | 'read_token' };

export type DirectoryResult = { ok: true; email: string | null; fullName: string | null; role: Role } | { ok: false; reason: string };

/** Result of checking credentials against a directory (LDAP); null when no directory is in use. */
export type DirectoryLogin = (username: string, password: string) => Promise<DirectoryResult | null>;

export interface LoginAttempt {
  username: string;
  password: string;
  otp?: string | undefined;
  /** Client address, for the audit entries a directory login writes. */
  ip?: string | null | undefined;
}

export type LoginOutcome =
  | { kind: 'token'; user: UserRow; accessToken: string; expiresIn: number }
  | { kind: 'mfa_required'; user: UserRow; mfaToken: string }
  | { kind: 'locked'; retryAfter: number }
  | { kind: 'failed'; reason: string; user: UserRow | null };

type PasswordProof = { kind: 'ok'; user: UserRow } | { kind: 'failed'; reason: string; user: UserRow | null };

export interface AuthDeps {
  users: UserService;
  tokens: ApiTokenService;
  lockout: Lockout;
  audit: AuditLog;
  box: SecretBox;
  jwtSecret: string;
  expireMinutes: number;
  directory: DirectoryLogin;
}

/** Verified access tokens kept (oldest dropped first): about one per active session. */
const VERIFIED_KEPT = 10_000;

export class AuthService {
  private readonly key: Uint8Array;
  /**
   * Access tokens whose signature and claims were verified, with their claims: the same token on
   * every request of a session is verified once (the signature check was ~6 % of a cheap read
   * under load). Expiry is still checked each time, and the account is still read each time (its
   * token version, role and state). A look-up needs the whole token, so it tells nothing about one.
   */
  private readonly verified = new Map<string, JWTPayload>();
  private readonly users: UserService;
  private readonly lockout: Lockout;

  constructor(private readonly deps: AuthDeps) {
    this.key = new TextEncoder().encode(deps.jwtSecret);
    this.users = deps.users;
    this.lockout = deps.lockout;
  }

  async issueAccessToken(user: UserRow): Promise<{ token: string; expiresIn: number }> {
    const expiresIn = this.deps.expireMinutes * 60;
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
    let payload = typ === 'access' ? this.verified.get(token) : undefined;
    if (payload && payload.exp! <= Date.now() / 1000) {
      this.verified.delete(token);
      return null;
    }
    if (!payload) {
      try {
        // jose checks exp only when present: a token without one would never expire.
        ({ payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'], requiredClaims: ['exp', 'iat'] }));
      } catch {
        return null;
      }
      if (typ === 'access' && payload.typ === 'access') this.keepVerified(token, payload);
    }
    if (payload.typ !== typ || typeof payload.sub !== 'string') return null;
    // Outside the try: a database that cannot answer is a 503, not an invalid token.
    const user = await this.users.byId(payload.sub);
    if (!user || payload.ver !== user.token_version) return null;
    return user;
  }

  private keepVerified(token: string, payload: JWTPayload): void {
    this.verified.set(token, payload);
    if (this.verified.size > VERIFIED_KEPT) this.verified.delete(this.verified.keys().next().value!);
  }

  /**
   * Resolves a bearer credential to a principal, re-reading the account each time so a role
   * change, deactivation, revocation or password change applies to the very next request.
   * Read tokens (`tg_r_…`) are accepted only when the caller says it serves repository files
   * (`readTokens`): everywhere else they fail as `read_token`, so no API route can take one.
   */
  async authenticate(bearer: string, options: { readTokens?: boolean } = {}): Promise<Principal | AuthFailure> {
    if (bearer.startsWith('tg_')) {
      const token = await this.deps.tokens.resolve(bearer);
      if (!token) return { error: 'invalid' };
      const read = token.kind === 'read';
      // The prefix is the kind's: a row of the other kind cannot have this digest, but say so.
      if (read !== bearer.startsWith(READ_TOKEN_PREFIX)) return { error: 'invalid' };
      const owner = await this.users.byId(token.user_id);
      if (!owner) return { error: 'invalid' };
      if (!owner.is_active) return { error: 'inactive' };
      if (read && !options.readTokens) return { error: 'read_token' };
      return {
        user: owner,
        role: effectiveTokenRole(token.role as Role, owner.role as Role),
        via: read ? 'read_token' : 'api_token',
        tokenId: token.id,
        distributions: read ? tokenDistributions(token) : null,
      };
    }
    const user = await this.verifyJwt(bearer, 'access');
    if (!user) return { error: 'invalid' };
    if (!user.is_active) return { error: 'inactive' };
    return { user, role: user.role as Role, via: 'jwt', tokenId: null, distributions: null };
  }

  checkTotp(user: UserRow, code: string): Promise<boolean> {
    if (!user.mfa_secret) return Promise.resolve(false);
    const secret = this.deps.box.open(user.mfa_secret);
    // ±1 step of 30 s: a code typed as it rolls over, or from a clock slightly off, still passes.
    return verifyTotp({ secret, token: code, epochTolerance: 30 })
      .then((r) => r.valid)
      .catch(() => false);
  }

  /** Whether `password` is the account's current one: its local hash, or the directory's for directory accounts. */
  async confirmPassword(user: UserRow, password: string): Promise<boolean> {
    if (user.password_hash) return this.users.checkPassword(user, password);
    const dir = user.source === 'ldap' && password ? await this.deps.directory(canonicalUsername(user.username), password) : null;
    if (!dir?.ok) await this.users.spendPasswordCheck(password);
    return Boolean(dir?.ok);
  }

  async login(attempt: LoginAttempt): Promise<LoginOutcome> {
    const name = canonicalUsername(attempt.username);
    const retryAfter = await this.lockout.retryAfter(name);
    if (retryAfter > 0) return { kind: 'locked', retryAfter };

    const proof = await this.provePassword(name, attempt.password, attempt.ip ?? null);
    if (proof.kind === 'failed') {
      await this.lockout.recordFailure(name);
      return proof;
    }
    const { user } = proof;
    if (!user.is_active) return { kind: 'failed', reason: 'account_disabled', user };
    if (user.mfa_enabled) {
      if (!attempt.otp) return { kind: 'mfa_required', user, mfaToken: await this.issueMfaToken(user) };
      if (!(await this.checkTotp(user, attempt.otp))) {
        await this.lockout.recordFailure(name);
        return { kind: 'failed', reason: 'bad_otp', user };
      }
    }
    return this.signIn(user);
  }

  /**
   * The account the name and password prove. Every failure costs one bcrypt comparison, so its
   * timing does not tell an unknown name from a wrong password.
   */
  private async provePassword(name: string, password: string, ip: string | null): Promise<PasswordProof> {
    const user = await this.users.byUsername(name);
    if (user?.password_hash) {
      return (await this.users.checkPassword(user, password)) ? { kind: 'ok', user } : { kind: 'failed', reason: 'bad_credentials', user };
    }
    // Only names unknown locally and accounts created from the directory are checked there.
    const dir = (!user || user.source === 'ldap') && password ? await this.deps.directory(name, password) : null;
    if (dir?.ok) return { kind: 'ok', user: await this.directoryAccount(user, name, dir, ip) };
    await this.users.spendPasswordCheck(password);
    if (dir && dir.reason === 'no_role_mapping' && user?.source === 'ldap' && user.is_active) {
      await this.withdrawDirectoryAccount(user, ip);
      return { kind: 'failed', reason: 'directory_role_removed', user };
    }
    return { kind: 'failed', reason: 'bad_credentials', user: user ?? null };
  }

  /** The local record of a directory login: created at the first one, role and details refreshed at each. */
  private async directoryAccount(existing: UserRow | undefined, name: string, dir: Extract<DirectoryResult, { ok: true }>, ip: string | null): Promise<UserRow> {
    const details = { role: dir.role, email: dir.email, full_name: dir.fullName };
    if (!existing) {
      const created = await this.users.create({ username: name, password: null, source: 'ldap', ...details }).catch(async (error: unknown) => {
        // Two first logins at once: the other one created the record.
        const raced = await this.users.byUsername(name);
        if (!raced) throw error;
        return this.users.update(raced, details);
      });
      await this.deps.audit.record({ action: 'USER_CREATE', user: DIRECTORY_ACTOR, result: 'SUCCESS', detail: `created ${created.username}; source=ldap; role=${dir.role}`, ip });
      return created;
    }
    const updated = await this.users.update(existing, details);
    if (existing.role !== dir.role) {
      await this.deps.audit.record({ action: 'USER_ROLE_CHANGE', user: DIRECTORY_ACTOR, result: 'SUCCESS', detail: `${existing.username}: ${existing.role} -> ${dir.role}; source=ldap`, ip });
    }
    return updated;
  }

  /**
   * The directory no longer grants this account any role: its sessions end now, and its API
   * tokens with it (they need an active creator). An admin reactivates it once it maps again.
   */
  private async withdrawDirectoryAccount(user: UserRow, ip: string | null): Promise<void> {
    await this.users.update(user, { active: false });
    await this.users.endSessions(user);
    await this.deps.audit.record({ action: 'USER_UPDATE', user: DIRECTORY_ACTOR, result: 'SUCCESS', detail: `${user.username}: active=false; source=ldap; no mapped group`, ip });
  }

  private async signIn(user: UserRow): Promise<LoginOutcome> {
    await this.lockout.clear(user.username);
    await this.users.touchLogin(user);
    const { token, expiresIn } = await this.issueAccessToken(user);
    return { kind: 'token', user, accessToken: token, expiresIn };
  }

  /** Second step of an MFA login. */
  async completeMfa(mfaToken: string, code: string): Promise<LoginOutcome> {
    const user = await this.verifyJwt(mfaToken, 'mfa');
    if (!user || !user.is_active) return { kind: 'failed', reason: 'invalid_mfa_token', user: null };
    const retryAfter = await this.lockout.retryAfter(user.username);
    if (retryAfter > 0) return { kind: 'locked', retryAfter };
    if (!(await this.checkTotp(user, code))) {
      await this.lockout.recordFailure(user.username);
      return { kind: 'failed', reason: 'bad_otp', user };
    }
    return this.signIn(user);
  }

  sealSecret(secret: string): string {
    return this.deps.box.seal(secret);
  }
}

import { randomBytes, randomUUID } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { Db } from '../adapters/db/index.js';
import {
  bumpUserTokenVersion, countUsersWithRole, deleteUser, findUserByCanonicalName, findUserById, insertUser, listUsers, setUserPasswordHash, updateUser,
  type UserRow,
} from '../adapters/db/users.table.js';
import { DomainError } from '../domain/errors.js';
import { passwordProblems } from '../domain/password-policy.js';
import type { Role } from '../domain/roles.js';
import { canonicalUsername } from '../domain/usernames.js';
import { isoUtc, toApiTime } from '../domain/time.js';

export type { UserRow };

export interface PublicUser {
  username: string;
  email: string | null;
  role: Role;
  roles: Role[];
  full_name: string | null;
  active: boolean;
  last_login: string | null;
  source: string;
  mfa_enabled: boolean;
  created_at: string | null;
}

export function publicUser(u: UserRow): PublicUser {
  const role = u.role as Role;
  return {
    username: u.username,
    email: u.email,
    role,
    roles: [role],
    full_name: u.full_name,
    active: Boolean(u.is_active),
    last_login: toApiTime(u.last_login),
    source: u.source,
    mfa_enabled: Boolean(u.mfa_enabled),
    created_at: toApiTime(u.created_at),
  };
}

export function assertPasswordPolicy(password: string): void {
  const problems = passwordProblems(password);
  if (problems.length) {
    throw new DomainError('invalid', 'weak_password', `Password ${problems.join('; ')}`, {
      errors: problems.map((msg) => ({ loc: ['body', 'password'], msg })),
    });
  }
}

export interface NewUser {
  username: string;
  password: string | null;
  role: Role;
  email?: string | null;
  full_name?: string | null;
  source?: 'local' | 'ldap';
}

export interface UserChanges {
  role?: Role;
  email?: string | null;
  full_name?: string | null;
  active?: boolean;
}

/** Accounts: their records, passwords, second factor and sessions. */
export class UserService {
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly db: Db,
    private readonly bcryptRounds: number,
  ) {}

  hashPassword(password: string): Promise<string> {
    return bcrypt.hash(password, this.bcryptRounds);
  }

  async checkPassword(user: UserRow, password: string): Promise<boolean> {
    if (!user.password_hash) return false;
    return bcrypt.compare(password, user.password_hash);
  }

  /**
   * Spends the time of one password comparison without an account to compare with, so that a
   * failed login for an unknown name takes as long as one for a real account (no enumeration by
   * timing). The hash has the configured cost, which is what the time depends on.
   */
  async spendPasswordCheck(password: string): Promise<void> {
    this.dummyHash ??= bcrypt.hash(randomBytes(16).toString('hex'), this.bcryptRounds);
    await bcrypt.compare(password, await this.dummyHash);
  }

  /** Case-insensitive: names are compared in their canonical (lower-case) form. */
  byUsername(username: string): Promise<UserRow | undefined> {
    return findUserByCanonicalName(this.db, canonicalUsername(username));
  }

  /** `db` may be a transaction the caller holds. */
  byId(id: string, db: Db = this.db): Promise<UserRow | undefined> {
    return findUserById(db, id);
  }

  list(): Promise<UserRow[]> {
    return listUsers(this.db);
  }

  countAdmins(): Promise<number> {
    return countUsersWithRole(this.db, 'admin');
  }

  async create(input: NewUser, passwordHash?: string): Promise<UserRow> {
    if (await this.byUsername(input.username)) {
      throw new DomainError('conflict', 'user_exists', `User ${input.username} already exists`);
    }
    if (input.password !== null && passwordHash === undefined) assertPasswordPolicy(input.password);
    const now = isoUtc();
    const row: UserRow = {
      id: randomUUID(),
      username: input.username,
      email: input.email ?? null,
      full_name: input.full_name ?? null,
      password_hash: passwordHash ?? (input.password === null ? null : await this.hashPassword(input.password)),
      role: input.role,
      is_active: 1,
      source: input.source ?? 'local',
      token_version: 0,
      mfa_secret: null,
      mfa_enabled: 0,
      last_login: null,
      created_at: now,
      updated_at: now,
    };
    try {
      await insertUser(this.db, row);
    } catch (error) {
      // A concurrent creation of the same name (e.g. two first logins of one directory user).
      if (isUniqueViolation(error)) throw new DomainError('conflict', 'user_exists', `User ${input.username} already exists`);
      throw error;
    }
    return row;
  }

  async update(user: UserRow, changes: UserChanges): Promise<UserRow> {
    const patch: Partial<UserRow> = { updated_at: isoUtc() };
    if (changes.role !== undefined) patch.role = changes.role;
    if (changes.email !== undefined) patch.email = changes.email;
    if (changes.full_name !== undefined) patch.full_name = changes.full_name;
    if (changes.active !== undefined) patch.is_active = changes.active ? 1 : 0;
    await updateUser(this.db, user.id, patch);
    return { ...user, ...patch };
  }

  /** Sets a new password and invalidates every JWT issued before (token_version bump). */
  async setPassword(user: UserRow, password: string): Promise<void> {
    assertPasswordPolicy(password);
    await this.storePasswordHash(user, await this.hashPassword(password));
  }

  /** The second half of setPassword, for callers that hash first and then write inside a transaction (`db`). */
  async storePasswordHash(user: UserRow, hash: string, db: Db = this.db): Promise<void> {
    await setUserPasswordHash(db, user.id, hash, isoUtc());
  }

  /** Ends every session of the user (earlier JWTs carry the old token_version). */
  async endSessions(user: UserRow): Promise<void> {
    await bumpUserTokenVersion(this.db, user.id, isoUtc());
  }

  async setMfa(user: UserRow, secret: string | null, enabled: boolean): Promise<void> {
    await updateUser(this.db, user.id, { mfa_secret: secret, mfa_enabled: enabled ? 1 : 0, updated_at: isoUtc() });
  }

  async touchLogin(user: UserRow): Promise<void> {
    await updateUser(this.db, user.id, { last_login: isoUtc() });
  }

  async remove(user: UserRow): Promise<void> {
    await deleteUser(this.db, user.id);
  }
}

/** SQLite (SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY) or PostgreSQL (23505) unique-key violation. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
